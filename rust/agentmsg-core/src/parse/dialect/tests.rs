use std::time::Instant;

use proptest::prelude::*;

use super::*;
use crate::parse::Block;

const ALL: [Dialect; 7] = [
    Dialect::Hermes,
    Dialect::Qwen3Coder,
    Dialect::GptOss,
    Dialect::DeepseekV3,
    Dialect::DeepseekV31,
    Dialect::KimiK2,
    Dialect::Glm45,
];

/// The document of `text` streamed in `size`-byte pieces (cut only at character boundaries).
fn streamed(text: &str, dialect: Dialect, size: usize) -> Document<'static> {
    let mut options = DialectOptions::new(dialect);
    options.start_in_thinking = StartThinking::No;
    let mut machine = DialectMachine::new(options);
    let mut events = Vec::new();
    let mut start = 0;
    while start < text.len() {
        let mut end = (start + size).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        machine.feed_into(&text.as_bytes()[start..end], &mut events);
        start = end;
    }
    events.extend(machine.finish());
    Document::from_events(core_events(events))
}

fn whole(text: &str, dialect: Dialect) -> Document<'static> {
    let options = DialectOptions { start_in_thinking: StartThinking::No, ..DialectOptions::new(dialect) };
    parse(text.as_bytes(), &options).into_owned()
}

#[test]
fn each_dialect_reads_its_calls_whole_and_streamed() {
    let cases = [
        (Dialect::Hermes, "Hi <tool_call>{\"name\": \"f\", \"arguments\": {\"s\": \"</tool_call>\"}}</tool_call> ok"),
        (Dialect::Qwen3Coder, "Hi <tool_call><function=f><parameter=s>\n</tool_call>\n</parameter></function></tool_call> ok"),
        (Dialect::GptOss, "<|channel|>commentary to=functions.f<|message|>{\"s\": \"<|call|>\"}<|call|><|channel|>final<|message|>ok"),
        (
            Dialect::DeepseekV3,
            "Hi <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n{\"s\": \"<｜tool▁call▁end｜>\"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜> ok",
        ),
        (
            Dialect::DeepseekV31,
            "Hi <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>f<｜tool▁sep｜>{\"s\": \"<｜tool▁call▁end｜>\"}<｜tool▁call▁end｜><｜tool▁calls▁end｜> ok",
        ),
        (
            Dialect::KimiK2,
            "Hi <|tool_calls_section_begin|><|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{\"s\": \"<|tool_call_end|>\"}<|tool_call_end|><|tool_calls_section_end|> ok",
        ),
        (Dialect::Glm45, "Hi <tool_call>f\n<arg_key>s</arg_key>\n<arg_value></tool_call></arg_value>\n</tool_call> ok"),
    ];
    for (dialect, text) in cases {
        let doc = whole(text, dialect);
        let calls: Vec<_> = doc.blocks.iter().filter_map(|b| if let Block::ToolCall(c) = b { Some(c) } else { None }).collect();
        assert_eq!(calls.len(), 1, "{dialect:?}");
        assert_eq!(calls[0].name, "f");
        assert!(doc.issues.is_empty());
        assert!(doc.text().ends_with(b"ok"));
        for size in 1..4 {
            assert_eq!(streamed(text, dialect, size), doc, "{dialect:?} in {size}-byte pieces");
        }
    }
}

/// Inputs that would make a re-scanning parser quadratic.
fn adversarial(dialect: Dialect, n: usize) -> String {
    match dialect {
        Dialect::Hermes => format!("<tool_call>{{\"name\": \"f\", \"arguments\": {{\"s\": \"{}", "<tool_call x ".repeat(n / 13)),
        Dialect::Qwen3Coder => format!("<tool_call><function=f><parameter=s>{}", "</paramete <".repeat(n / 12)),
        Dialect::GptOss => format!("{}<|channel|>analysis<|message|>{}", "<|x|> <".repeat(n / 14), "<|en <".repeat(n / 12)),
        Dialect::DeepseekV3 | Dialect::DeepseekV31 => format!(
            "{}<｜tool▁calls▁begin｜>{}<｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n{{\"s\": \"{}",
            "<｜tool▁ <".repeat(n / 24),
            "<｜tool▁call <\n".repeat(n / 48),
            "<｜tool▁call▁en".repeat(n / 48)
        ),
        Dialect::KimiK2 => format!(
            "{}◁think▷{}◁/think▷<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0{}",
            "<|tool_calls_sec ◁thin".repeat(n / 48),
            "◁/thin <".repeat(n / 48),
            "<|tool_call_argument_be".repeat(n / 46)
        ),
        Dialect::Glm45 => format!(
            "{}<tool_call>f<arg_key>k</arg_key><arg_value>{}",
            "<tool_call>name <tool_call>\n".repeat(n / 56),
            "</arg_valu <".repeat(n / 12)
        ),
    }
}

#[test]
fn time_is_linear_fed_a_token_at_a_time() {
    for dialect in ALL {
        let time = |n: usize| {
            let text = adversarial(dialect, n);
            let start = Instant::now();
            streamed(&text, dialect, 4);
            whole(&text, dialect);
            start.elapsed().as_secs_f64()
        };
        time(1 << 14);
        let small = time(1 << 17);
        let large = time(1 << 20);
        // 8x the input: a linear parser takes about 8x the time, a quadratic one 64x.
        assert!(large / small < 20.0, "{dialect:?}: {small:.4}s for 128 KB, {large:.4}s for 1 MB");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn arbitrary_bytes_never_panic_and_stream_as_whole(
        bytes in proptest::collection::vec(prop_oneof![
            Just(b'<'), Just(b'>'), Just(b'|'), Just(b'{'), Just(b'}'), Just(b'"'), Just(b'\\'),
            Just(b'\n'), any::<u8>()], 0..200),
        size in 1usize..8,
    ) {
        let text = String::from_utf8_lossy(&bytes).into_owned();
        for dialect in ALL {
            let doc = whole(&text, dialect);
            prop_assert_eq!(streamed(&text, dialect, size), doc);
        }
    }
}
