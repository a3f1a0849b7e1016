//! Cutting a long text into chunks that can be counted apart, in parallel, with the same total.
//!
//! tiktoken's pre-tokenizer is a leftmost-first regex applied from the end of the last piece, so
//! a cut is safe where no piece can cross it and where the chunk's own end changes nothing
//! before it. Just after a `\n` that is followed by a character that is neither whitespace nor
//! `/` is such a place, in both o200k_base and cl100k_base:
//! - no alternative can carry a `\n` into a following non-space character: the letter pieces
//!   may start with one character that is not `\r`/`\n`, digit runs hold only digits, the
//!   punctuation piece ` ?[^\s\p{L}\p{N}]+[\r\n/]*` only ends with `\r`, `\n` or `/` (hence
//!   excluding `/`), and the whitespace pieces hold only whitespace;
//! - at the end of a chunk the whitespace run before the cut ends with `\n`, so the
//!   alternative `\s*[\r\n]+` (listed before `\s+$` and the look-ahead forms) takes exactly that
//!   run, as it does in the whole text where a non-space character follows.
//!
//! The tests check chunked counts against whole-text counts on adversarial text.

use memchr::memchr_iter;

/// The byte offsets that cut `text` into chunks of at least `target` bytes (the last one may
/// be shorter), always at safe places; starts with 0 and ends with `text.len()`. A text with no
/// safe place after `target` bytes is one chunk.
pub fn chunk_bounds(text: &str, target: usize) -> Vec<usize> {
    let bytes = text.as_bytes();
    let target = target.max(1);
    let mut bounds = vec![0];
    let mut start = 0;
    'chunks: while bytes.len() - start > target {
        let from = start + target - 1;
        for newline in memchr_iter(b'\n', &bytes[from..]) {
            let cut = from + newline + 1;
            // `\n` is ASCII, so `cut` is a char boundary.
            match text[cut..].chars().next() {
                Some(next) if !next.is_whitespace() && next != '/' => {
                    bounds.push(cut);
                    start = cut;
                    continue 'chunks;
                }
                Some(_) => {}
                None => break 'chunks,
            }
        }
        break;
    }
    bounds.push(bytes.len());
    bounds
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_after_newline_before_a_non_space() {
        let text = "ab\n cd\n/ef\ngh\n\nij";
        assert_eq!(chunk_bounds(text, 1), vec![0, 11, 15, text.len()]);
        assert_eq!(chunk_bounds(text, 100), vec![0, text.len()]);
        assert_eq!(chunk_bounds("", 4), vec![0, 0]);
        assert_eq!(chunk_bounds("no newline at all", 2), vec![0, 17]);
    }

    #[test]
    fn chunks_are_at_least_the_target() {
        let text = "line\n".repeat(1000);
        let bounds = chunk_bounds(&text, 64);
        for pair in bounds.windows(2).take(bounds.len() - 2) {
            assert!(pair[1] - pair[0] >= 64);
        }
        assert_eq!(*bounds.last().unwrap(), text.len());
    }
}
