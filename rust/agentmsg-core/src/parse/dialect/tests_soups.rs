//! mistral, llama3_json and pythonic: marker soups of each dialect's own pieces never panic and
//! stream exactly as they parse whole (linear time is checked with the others in `tests.rs`).

use proptest::prelude::*;

use super::tests::{streamed, whole};
use super::Dialect;
use crate::parse::Block;

const MISTRAL: &[&str] = &[
    "[TOOL_CALLS]", "[ARGS]", "[CALL_ID]", "[THINK]", "[/THINK]", "[", "]", "{", "}", "\"", "\\", ",", "f", "a1",
    " ", "\n", "é", r#"{"name": "f", "arguments": "#, r#""a": 1"#,
];
const LLAMA: &[&str] = &[
    "<|python_tag|>", "<|python_ta", "{", "}", r#""name": "f""#, r#""parameters": "#, ";", "\"", "\\", "x", " ",
    "\n", "é", ",", ":", "<", "[1]",
];
const PYTHONIC: &[&str] = &[
    "[", "]", "f(", "g(", ")", "a=", "b=", "'", "\"", "'''", "\\", "\\N{", "\\x4", ",", " ", "\n", "é", "1", "0x",
    "1e", "-", "(", "{", "}", ":", "None", "r'", "<|python_start|>", "<|python_end|>",
];

/// Text made of `pieces` and arbitrary bytes.
fn soup(pieces: &'static [&'static str]) -> impl Strategy<Value = String> {
    proptest::collection::vec((0..pieces.len() + 1, any::<u8>()), 0..60).prop_map(move |picks| {
        let mut bytes = Vec::new();
        for (k, b) in picks {
            match pieces.get(k) {
                Some(piece) => bytes.extend_from_slice(piece.as_bytes()),
                None => bytes.push(b),
            }
        }
        String::from_utf8_lossy(&bytes).into_owned()
    })
}

fn streams_as_whole(text: &str, dialect: Dialect, size: usize) -> Result<(), TestCaseError> {
    let doc = whole(text, dialect);
    prop_assert_eq!(streamed(text, dialect, size), doc.clone());
    for issue in &doc.issues {
        prop_assert_eq!(&text.as_bytes()[issue.span.0..issue.span.1], &issue.raw[..]);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn mistral_soup_streams_as_whole(text in soup(MISTRAL), size in 1usize..8) {
        streams_as_whole(&text, Dialect::Mistral, size)?;
    }

    #[test]
    fn llama3_json_soup_streams_as_whole(text in soup(LLAMA), size in 1usize..8) {
        streams_as_whole(&text, Dialect::Llama3Json, size)?;
    }

    #[test]
    fn pythonic_soup_streams_as_whole(text in soup(PYTHONIC), size in 1usize..8) {
        streams_as_whole(&text, Dialect::Pythonic, size)?;
    }
}

#[test]
fn each_new_dialect_reads_parallel_calls() {
    let cases = [
        (Dialect::Mistral, "x[TOOL_CALLS]a[ARGS]{\"s\": \"[TOOL_CALLS]\"}[TOOL_CALLS]b{} y"),
        (Dialect::Mistral, "x[TOOL_CALLS] [{\"name\": \"a\", \"arguments\": {}}, {\"name\": \"b\"}] y"),
        (Dialect::Llama3Json, "<|python_tag|>{\"name\": \"a\", \"parameters\": {}}; {\"name\": \"b\", \"parameters\": {}} y"),
        (Dialect::Pythonic, "x\n[a(s='[b(]'), b(n=(1,))] y"),
    ];
    for (dialect, text) in cases {
        let doc = whole(text, dialect);
        let names: Vec<_> =
            doc.blocks.iter().filter_map(|b| if let Block::ToolCall(c) = b { Some(c.name.as_str()) } else { None }).collect();
        assert_eq!(names, ["a", "b"], "{text}");
        assert!(doc.issues.is_empty(), "{text}");
        for size in 1..4 {
            assert_eq!(streamed(text, dialect, size), doc, "{text} in {size}-byte pieces");
        }
    }
}
