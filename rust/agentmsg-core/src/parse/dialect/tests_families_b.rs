//! deepseek_v32, deepseek_v4 (DSML), gemma4, functiongemma and step3p5: arbitrary bytes and
//! marker soups of each dialect's own pieces never panic and stream exactly as they parse whole;
//! adversarial inputs take linear time fed a token at a time.

use proptest::prelude::*;

use super::tests::{streamed, whole};
use super::Dialect;
use crate::parse::Block;
use crate::parse::tests::assert_linear;

const NEW: [Dialect; 6] =
    [Dialect::DeepseekV32, Dialect::DeepseekV4, Dialect::Gemma4, Dialect::FunctionGemma, Dialect::Step3p5, Dialect::Cohere];

pub(super) const DSML: &[&str] = &[
    "<｜DSML｜function_calls>", "</｜DSML｜function_calls>", "<｜DSML｜tool_calls>", "</｜DSML｜tool_calls>",
    "<｜DSML｜invoke", " name=\"f\">", "</｜DSML｜invoke>", "<｜DSML｜parameter", " name=\"a\" string=\"false\">",
    " name=\"b\">", "</｜DSML｜parameter>", "<｜DSML｜", "<think>", "</think>", "\"", "<", ">", "1", "[", " ", "\n", "é",
];
pub(super) const GEMMA: &[&str] = &[
    "<|tool_call>", "<tool_call|>", "<start_function_call>", "<end_function_call>", "call:", "f", "{", "}", "[", "]",
    ":", ",", "<|\"|>", "<escape>", "<|channel>thought", "<channel|>", "<|tool_response>", "<|", "<", "1", "true",
    " ", "\n", "é",
];

pub(super) const COHERE: &[&str] = &[
    "<|START_ACTION|>", "<|END_ACTION|>", "<|START_THINKING|>", "<|END_THINKING|>", "<|START_RESPONSE|>",
    "<|END_RESPONSE|>", "<|START_TEXT|>", "<|END_TEXT|>", "[", "]", "{", "}", ",", "\"", "\\", "{\"tool_name\": \"f\", \"parameters\": ",
    "\"tool_call_id\": \"0\", ", "{}", "<|", " ", "\n", "é", "1",
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
    fn dsml_soup_streams_as_whole(text in soup(DSML), size in 1usize..8, v4 in any::<bool>()) {
        streams_as_whole(&text, if v4 { Dialect::DeepseekV4 } else { Dialect::DeepseekV32 }, size)?;
    }

    #[test]
    fn gemma_soup_streams_as_whole(text in soup(GEMMA), size in 1usize..8, function in any::<bool>()) {
        streams_as_whole(&text, if function { Dialect::FunctionGemma } else { Dialect::Gemma4 }, size)?;
    }

    #[test]
    fn cohere_soup_streams_as_whole(text in soup(COHERE), size in 1usize..8) {
        streams_as_whole(&text, Dialect::Cohere, size)?;
    }

    #[test]
    fn arbitrary_bytes_never_panic_and_stream_as_whole(
        bytes in proptest::collection::vec(prop_oneof![
            Just(b'<'), Just(b'>'), Just(b'|'), Just(b'{'), Just(b'}'), Just(b'"'), Just(b':'),
            Just(b'\n'), any::<u8>()], 0..200),
        size in 1usize..8,
    ) {
        let text = String::from_utf8_lossy(&bytes).into_owned();
        for dialect in NEW {
            prop_assert_eq!(streamed(&text, dialect, size), whole(&text, dialect));
        }
    }
}

#[test]
fn each_reads_parallel_calls_with_markers_in_values() {
    let cases = [
        (Dialect::DeepseekV32, "x<｜DSML｜function_calls>\n<｜DSML｜invoke name=\"a\">\n<｜DSML｜parameter name=\"s\" string=\"true\"></｜DSML｜invoke></｜DSML｜parameter>\n</｜DSML｜invoke>\n<｜DSML｜invoke name=\"b\">\n</｜DSML｜invoke>\n</｜DSML｜function_calls> y"),
        (Dialect::DeepseekV4, "x<｜DSML｜tool_calls><｜DSML｜invoke name=\"a\"><｜DSML｜parameter name=\"n\" string=\"false\">[1, {\"b\": 2}]</｜DSML｜parameter></｜DSML｜invoke><｜DSML｜invoke name=\"b\"></｜DSML｜invoke></｜DSML｜tool_calls> y"),
        (Dialect::Gemma4, "x<|tool_call>call:a{s:<|\"|><tool_call|>{,}<|\"|>,n:[1,{m:true}]}<tool_call|><|tool_call>call:b{}<tool_call|><|tool_response> y"),
        (Dialect::FunctionGemma, "x<start_function_call>call:a{s:<escape><end_function_call><escape>}<end_function_call><start_function_call>call:b{}<end_function_call> y"),
        (Dialect::Cohere, "x<|START_ACTION|>[\n    {\"tool_call_id\": \"0\", \"tool_name\": \"a\", \"parameters\": {\"s\": \"<|END_ACTION|>]\"}},\n    {\"tool_call_id\": \"1\", \"tool_name\": \"b\", \"parameters\": {}}\n]<|END_ACTION|> y"),
        (Dialect::Step3p5, "x<tool_call>\n<function=a>\n<parameter=s>\n</tool_call>\n</parameter>\n</function>\n</tool_call><tool_call>\n<function=b>\n</function>\n</tool_call> y"),
    ];
    for (dialect, text) in cases {
        let doc = whole(text, dialect);
        let names: Vec<_> =
            doc.blocks.iter().filter_map(|b| if let Block::ToolCall(c) = b { Some(c.name.as_str()) } else { None }).collect();
        assert_eq!(names, ["a", "b"], "{text}");
        assert!(doc.issues.is_empty(), "{text}: {:?}", doc.issues);
        assert_eq!(doc.text(), b"x\ny", "{text}");
        for size in 1..4 {
            assert_eq!(streamed(text, dialect, size), doc, "{text} in {size}-byte pieces");
        }
    }
}

/// Inputs that would make a re-scanning parser quadratic.
pub(super) fn adversarial(dialect: Dialect, n: usize) -> String {
    match dialect {
        Dialect::DeepseekV32 | Dialect::DeepseekV4 => format!(
            "{}<｜DSML｜function_calls><｜DSML｜tool_calls>{}<｜DSML｜invoke name=\"f\"><｜DSML｜parameter name=\"s\">{}",
            "<｜DSML｜functio <".repeat(n / 24),
            "<｜DSML｜invok <\n".repeat(n / 24),
            "</｜DSML｜paramete".repeat(n / 28)
        ),
        Dialect::Gemma4 | Dialect::FunctionGemma => format!(
            "{}<|tool_call>call:f{{a:[{}<|tool_call>call:g{{s:<|\"|>{}",
            "<|tool_cal <start_function_cal <|channel>though ".repeat(n / 48),
            "1,{b:[],c:<|\"|>x<|\"|>},".repeat(n / 48),
            "<tool_call <|\" <escap".repeat(n / 24)
        ),
        Dialect::Cohere => format!(
            "{}<|START_ACTION|>[{}{{\"tool_name\": \"f\", \"parameters\": {{\"s\": \"{}",
            "<|START_ACTIO <|END_THINKIN [".repeat(n / 30),
            "{\"tool_name\": \"f\", \"parameters\": {}},".repeat(n / 40),
            "<|END_ACTION|> ]".repeat(n / 16)
        ),
        _ => format!("<tool_call><function=f><parameter=s>{}", "</paramete <".repeat(n / 12)),
    }
}

#[test]
fn time_is_linear_fed_a_token_at_a_time() {
    for dialect in NEW {
        let (small, large) = (adversarial(dialect, 1 << 17), adversarial(dialect, 1 << 20));
        // 8x the input: a linear parser takes about 8x the time, a quadratic one 64x.
        assert_linear(&format!("{dialect:?}"), small.as_bytes(), large.as_bytes(), 20.0, &|text| {
            let text = std::str::from_utf8(text).unwrap();
            streamed(text, dialect, 4);
            whole(text, dialect);
        });
    }
}
