//! Forge's token estimate: a cheap, deterministic stand-in for exact counting.
//!
//! `tokens = utf8_bytes / 4 + role overhead (4, or 10 for tool) + 10 if the text contains "<tool>"`.

use crate::Role;
use memchr::memmem;

/// Tokens a message's role marker costs, on top of its content.
pub fn role_overhead(role: Role) -> usize {
    match role {
        Role::Tool => 10,
        Role::System | Role::User | Role::Assistant => 4,
    }
}

/// Extra tokens for the XML wrapping of a text-embedded tool call.
pub const TOOL_TAG_OVERHEAD: usize = 10;

/// Estimates the tokens of one message whose measured text is `text`.
///
/// ```
/// use agentmsg_core::{estimate::estimate_tokens, Role};
/// assert_eq!(estimate_tokens("Hello", Role::User), 5);
/// ```
pub fn estimate_tokens(text: &str, role: Role) -> usize {
    estimate_tokens_bytes(text.as_bytes(), role)
}

/// [`estimate_tokens`] over encoded bytes, for text that is not valid UTF-8 (Python strings
/// with lone surrogates arrive as their `surrogatepass` encoding).
pub fn estimate_tokens_bytes(bytes: &[u8], role: Role) -> usize {
    estimate_text_bytes(bytes) + role_overhead(role)
}

/// The estimate of a text on its own: the formula without the role overhead. Takes bytes so
/// that text which is not valid UTF-8 can be estimated too.
pub fn estimate_text_bytes(bytes: &[u8]) -> usize {
    estimate_text_size(bytes.len(), memmem::find(bytes, b"<tool>").is_some())
}

/// [`estimate_text_bytes`] from what it depends on: the UTF-8 length and whether the text
/// contains `<tool>` (for callers that hold the text in another form).
pub fn estimate_text_size(utf8_len: usize, has_tool_tag: bool) -> usize {
    utf8_len / 4 + if has_tool_tag { TOOL_TAG_OVERHEAD } else { 0 }
}

/// What the estimate depends on in a text: its UTF-8 length and whether it contains `<tool>`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Measure {
    pub utf8_len: usize,
    pub has_tool_tag: bool,
}

impl Measure {
    /// The measure of a text given as bytes.
    pub fn of_bytes(bytes: &[u8]) -> Self {
        Measure { utf8_len: bytes.len(), has_tool_tag: memmem::find(bytes, b"<tool>").is_some() }
    }

    /// The measure of a text given as code points (see [`estimate_text_code_points`]).
    pub fn of_code_points<T: Copy + Into<u32>>(units: &[T]) -> Self {
        let utf8_len = units.iter().map(|&unit| utf8_width(unit.into())).sum();
        Measure { utf8_len, has_tool_tag: contains_tool_tag(units) }
    }

    /// The measure of texts joined with newlines: a newline cannot be part of `<tool>`, so the
    /// joined text holds the tag exactly when one of the texts does.
    pub fn joined(parts: impl IntoIterator<Item = Measure>) -> Self {
        let mut joined = Measure::default();
        for (index, part) in parts.into_iter().enumerate() {
            joined.utf8_len += part.utf8_len + usize::from(index > 0);
            joined.has_tool_tag |= part.has_tool_tag;
        }
        joined
    }

    /// The estimate of a message with this measured text written by `role`.
    pub fn estimate(self, role: Role) -> usize {
        estimate_text_size(self.utf8_len, self.has_tool_tag) + role_overhead(role)
    }
}

/// [`estimate_text_bytes`] of a text given as code points (the Latin-1, UCS-2 or UCS-4 units a
/// Python str is stored in), without encoding it: its UTF-8 length summed per code point (a lone
/// surrogate counting the 3 bytes of its `surrogatepass` encoding, as the bytes form has it),
/// and `<tool>` searched unit by unit.
///
/// ```
/// use agentmsg_core::estimate::{estimate_text_bytes, estimate_text_code_points};
/// let text = "日本 <tool>";
/// let points: Vec<u32> = text.chars().map(u32::from).collect();
/// assert_eq!(estimate_text_code_points(&points), estimate_text_bytes(text.as_bytes()));
/// ```
pub fn estimate_text_code_points<T: Copy + Into<u32>>(units: &[T]) -> usize {
    let measure = Measure::of_code_points(units);
    estimate_text_size(measure.utf8_len, measure.has_tool_tag)
}

/// The UTF-8 length of a code point (a surrogate's is that of its `surrogatepass` encoding).
pub fn utf8_width(point: u32) -> usize {
    match point {
        0..=0x7F => 1,
        0x80..=0x7FF => 2,
        0x800..=0xFFFF => 3,
        _ => 4,
    }
}

fn contains_tool_tag<T: Copy + Into<u32>>(units: &[T]) -> bool {
    const TAG: [u32; 6] = [b'<' as u32, b't' as u32, b'o' as u32, b'o' as u32, b'l' as u32, b'>' as u32];
    units.windows(TAG.len()).any(|window| window.iter().zip(TAG).all(|(&unit, tag)| unit.into() == tag))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_points_estimate_as_their_utf8() {
        for text in ["", "Hello", "caf\u{e9} <tool>", "日本語日", "a\u{1F600}<tool", "<tool><tool>", "x\u{10FFFF}"] {
            let points: Vec<u32> = text.chars().map(u32::from).collect();
            assert_eq!(estimate_text_code_points(&points), estimate_text_bytes(text.as_bytes()), "{text:?}");
            if let Ok(latin1) = text.chars().map(|c| u8::try_from(u32::from(c))).collect::<Result<Vec<u8>, _>>() {
                assert_eq!(estimate_text_code_points(&latin1), estimate_text_bytes(text.as_bytes()), "{text:?}");
            }
        }
        // A lone surrogate counts the 3 bytes of its surrogatepass encoding.
        assert_eq!(estimate_text_code_points(&[0xD800u16, 0x61, 0x62, 0x63, 0x64]), 7 / 4);
    }

    #[test]
    fn forge_examples() {
        assert_eq!(estimate_tokens("Hello", Role::User), 5);
        let long = "Please explain the difference between lists and tuples in Python, including their performance characteristics and common use cases.";
        assert_eq!(estimate_tokens(long, Role::User), long.len() / 4 + 4);
        let call = "<tool>\n{\n  \"server_name\": \"local\",\n  \"tool_name\": \"calculator\",\n  \"arguments\": {\"a\": 5, \"b\": 3}\n}\n</tool>";
        assert_eq!(estimate_tokens(call, Role::Assistant), call.len() / 4 + 4 + 10);
    }

    #[test]
    fn tool_role_and_bytes_not_chars() {
        assert_eq!(estimate_tokens("", Role::Tool), 10);
        // Four 3-byte characters are 12 bytes, so 3 tokens.
        assert_eq!(estimate_tokens("日本語日", Role::System), 3 + 4);
    }

    #[test]
    fn joined_measures_are_the_measure_of_the_joined_text() {
        let parts = ["a <tool", "> b", "", "日本", "<tool>"];
        for k in 0..=parts.len() {
            let joined = parts[..k].join("\n");
            let measure = Measure::joined(parts[..k].iter().map(|p| Measure::of_bytes(p.as_bytes())));
            assert_eq!(measure, Measure::of_bytes(joined.as_bytes()), "{joined:?}");
            assert_eq!(measure.estimate(Role::Tool), estimate_tokens(&joined, Role::Tool));
        }
    }

    #[test]
    fn tag_split_is_not_a_tag() {
        assert_eq!(estimate_tokens("<too l>", Role::User), 1 + 4);
    }
}
