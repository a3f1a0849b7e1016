use proptest::prelude::*;

use crate::parse::{parse, Block, CustomDialect, Dialect, DialectError, Document, Options, StartThinking, StreamMachine};
use crate::parse::tests::assert_linear;

const ALL: [Dialect; 27] = [
    Dialect::Forge,
    Dialect::Hermes,
    Dialect::Qwen3Coder,
    Dialect::GptOss,
    Dialect::Mistral,
    Dialect::Llama3Json,
    Dialect::Pythonic,
    Dialect::DeepseekV3,
    Dialect::DeepseekV31,
    Dialect::KimiK2,
    Dialect::Glm45,
    Dialect::SeedOss,
    Dialect::MinimaxM2,
    Dialect::Magistral,
    Dialect::Granite,
    Dialect::Lfm2,
    Dialect::Phi4Mini,
    Dialect::Xlam,
    Dialect::Hunyuan,
    Dialect::Apertus,
    Dialect::Jamba,
    Dialect::Internlm2,
    Dialect::Longcat,
    Dialect::Hy3,
    Dialect::KimiK3,
    Dialect::Step3,
    Dialect::CommandR,
];

/// The document of `text` streamed in `size`-byte pieces (cut only at character boundaries).
pub(super) fn streamed(text: &str, dialect: Dialect, size: usize) -> Document<'static> {
    let mut options = Options::new(dialect);
    options.start_in_thinking = StartThinking::No;
    let mut machine = StreamMachine::new(options);
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
    Document::from_events(events)
}

pub(super) fn whole(text: &str, dialect: Dialect) -> Document<'static> {
    let options = Options { start_in_thinking: StartThinking::No, ..Options::new(dialect) };
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
        (Dialect::SeedOss, "Hi <seed:tool_call><function=f><parameter=s></seed:tool_call></parameter></function></seed:tool_call> ok"),
        (Dialect::MinimaxM2, "Hi <minimax:tool_call><invoke name=\"f\"><parameter name=\"s\"></invoke></parameter></invoke></minimax:tool_call> ok"),
        (Dialect::Magistral, "Hi <think>[/THINK]</think>[TOOL_CALLS]f[ARGS]{\"s\": \"[TOOL_CALLS]\"} ok"),
        (Dialect::Granite, "Hi <|tool_call|>[{\"name\": \"f\", \"arguments\": {\"s\": \"]\"}}] ok"),
        (Dialect::Lfm2, "Hi <|tool_call_start|>[f(s='<|tool_call_end|>')]<|tool_call_end|> ok"),
        (Dialect::Phi4Mini, "Hi <|tool_call|>[{\"name\": \"f\", \"arguments\": {\"s\": \"<|/tool_call|>\"}}]<|/tool_call|> ok"),
        (Dialect::Xlam, "Hi\n```json\n[{\"name\": \"f\", \"arguments\": {\"s\": \"```\"}}]\n``` ok"),
        (Dialect::Hunyuan, "Hi <tool_calls>[{\"name\": \"f\", \"arguments\": {\"s\": \"</tool_calls>\"}}]</tool_calls> ok"),
        (Dialect::Apertus, "Hi <|tools_prefix|>[{\"f\": {\"s\": \"<|tools_suffix|>\"}}]<|tools_suffix|> ok"),
        (Dialect::Jamba, "Hi <tool_calls>[{\"name\": \"f\", \"arguments\": {\"s\": \"</tool_calls>\"}}]</tool_calls> ok"),
        (Dialect::Internlm2, "Hi <|action_start|><|plugin|>{\"name\": \"f\", \"parameters\": {\"s\": \"<|action_end|>\"}}<|action_end|> ok"),
        (Dialect::Longcat, "Hi <longcat_tool_call>{\"name\": \"f\", \"arguments\": {\"s\": \"</longcat_tool_call>\"}}</longcat_tool_call> ok"),
        (
            Dialect::Hy3,
            "Hi <tool_calls:opensource><tool_call:opensource>f<tool_sep:opensource><arg_key:opensource>s</arg_key:opensource><arg_value:opensource></tool_call:opensource></arg_value:opensource></tool_call:opensource></tool_calls:opensource> ok",
        ),
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
        Dialect::Forge => format!("<tool>{{\"s\": \"{}", "</too <thin [".repeat(n / 12)),
        Dialect::Hermes => format!("<tool_call>{{\"name\": \"f\", \"arguments\": {{\"s\": \"{}", "<tool_call x ".repeat(n / 13)),
        Dialect::Qwen3Coder => format!("<tool_call><function=f><parameter=s>{}", "</paramete <".repeat(n / 12)),
        Dialect::GptOss => format!("{}<|channel|>analysis<|message|>{}", "<|x|> <".repeat(n / 14), "<|en <".repeat(n / 12)),
        Dialect::Mistral => format!("{}[TOOL_CALLS]f[ARGS]{{\"s\": \"{}", "[TOOL_CALL [/THIN ".repeat(n / 36), "[TOOL_CALLS [ARG ".repeat(n / 34)),
        Dialect::Llama3Json => format!("{{\"s\": \"{}\"}}{}", "<|python_ta {".repeat(n / 26), "<|python_tag|> x ".repeat(n / 34)),
        Dialect::Pythonic => format!("{}[g(s='{}", "[f(a=(1, '<|python_start|>')),\n".repeat(n / 64), "\\u00e9\\'[x(".repeat(n / 24)),
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
        Dialect::DeepseekV32 | Dialect::DeepseekV4 | Dialect::Gemma4 | Dialect::FunctionGemma | Dialect::Step3p5 | Dialect::Cohere => {
            super::tests_families_b::adversarial(dialect, n)
        }
        Dialect::Step3 | Dialect::CommandR => super::tests_families_c::adversarial(dialect, n),
        Dialect::Glm45 | Dialect::Custom => format!(
            "{}<tool_call>f<arg_key>k</arg_key><arg_value>{}",
            "<tool_call>name <tool_call>\n".repeat(n / 56),
            "</arg_valu <".repeat(n / 12)
        ),
        Dialect::SeedOss => format!(
            "{}<seed:tool_call><function=f><parameter=s>{}",
            "<seed:tool_call x <seed:thin".repeat(n / 54),
            "</paramete <".repeat(n / 24)
        ),
        Dialect::MinimaxM2 => format!(
            "{}<minimax:tool_call><invoke name=\"f\"><parameter name=\"s\">{}",
            "<minimax:tool_cal <".repeat(n / 38),
            "</paramete <".repeat(n / 24)
        ),
        Dialect::Hy3 => format!(
            "{}<tool_calls:opensource><tool_call:opensource>f<tool_sep:opensource><arg_key:opensource>k</arg_key:opensource><arg_value:opensource>{}",
            "<tool_calls:opens <".repeat(n / 38),
            "</arg_value:opensourc <".repeat(n / 46)
        ),
        Dialect::KimiK3 => super::tests_xtml::adversarial(n),
        Dialect::Magistral => format!("{}[TOOL_CALLS]f[ARGS]{{\"s\": \"{}", "[TOOL_CALL <thin ".repeat(n / 34), "</think [ARG ".repeat(n / 26)),
        Dialect::Lfm2 => format!("{}<|tool_call_start|>[g(s='{}", "<|tool_call_sta <thin\n[".repeat(n / 48), "\\'<|tool_call_end|>".repeat(n / 40)),
        Dialect::Granite | Dialect::Phi4Mini | Dialect::Xlam | Dialect::Hunyuan | Dialect::Jamba | Dialect::Internlm2 | Dialect::Apertus | Dialect::Longcat => {
            let (opener, partial) = match dialect {
                Dialect::Granite | Dialect::Phi4Mini => ("<|tool_call|>[", "<|tool_cal [ "),
                Dialect::Xlam => ("```json\n[", "`` ``json x "),
                Dialect::Hunyuan | Dialect::Jamba => ("<tool_calls>[", "<tool_call </tool_calls "),
                Dialect::Apertus => ("<|tools_prefix|>[", "<|tools_prefi <|tools_suffi "),
                Dialect::Internlm2 => ("<|action_start|><|plugin|>", "<|action_start|><|plu "),
                _ => ("<longcat_tool_call>", "<longcat_tool_cal "),
            };
            format!("{}{opener}{{\"name\": \"f\", \"arguments\": {{\"s\": \"{}", partial.repeat(n / 24), "\\\" <|/tool_call|> ]".repeat(n / 40))
        }
    }
}

#[test]
fn time_is_linear_fed_a_token_at_a_time() {
    for dialect in ALL {
        let (small, large) = (adversarial(dialect, 1 << 17), adversarial(dialect, 1 << 20));
        // 8x the input: a linear parser takes about 8x the time, a quadratic one 64x.
        assert_linear(&format!("{dialect:?}"), small.as_bytes(), large.as_bytes(), 20.0, &|text| {
            let text = std::str::from_utf8(text).unwrap();
            streamed(text, dialect, 4);
            whole(text, dialect);
        });
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

/// The document of `text` in `size`-byte pieces (any cut, even inside a character) and whole.
fn both_ways(text: &[u8], options: &Options, size: usize) -> (Document<'static>, Document<'static>) {
    let options = Options { start_in_thinking: StartThinking::No, ..options.clone() };
    let mut machine = StreamMachine::new(options.clone());
    let mut events = Vec::new();
    for piece in text.chunks(size) {
        machine.feed_into(piece, &mut events);
    }
    events.extend(machine.finish());
    (Document::from_events(events), parse(text, &options).into_owned())
}

#[test]
fn custom_dialects_read_their_markers_whole_and_streamed() {
    let json = CustomDialect {
        call_start: "[[call]]".into(),
        call_end: "[[/call]]".into(),
        name_key: "tool".into(),
        arguments_key: "args".into(),
        think: Some(("◁t▷".into(), "◁/t▷".into())),
        ..CustomDialect::default()
    };
    let glm = CustomDialect { payload: "glm45".into(), think: None, ..CustomDialect::default() };
    let cases: [(&CustomDialect, &str, &str); 2] = [
        (&json, "◁t▷plan◁/t▷Hi [[call]]{\"tool\": \"f\", \"args\": {\"s\": \"[[/call]]\", \"t\": [1]}}[[/call]] ok [[call]] no", "f"),
        (&glm, "Hi <tool_call>g<arg_key>k</arg_key><arg_value>v</arg_value></tool_call> ok", "g"),
    ];
    for (parts, text, name) in cases {
        let options = Options::custom(parts).unwrap();
        let (_, doc) = both_ways(text.as_bytes(), &options, text.len());
        let calls: Vec<_> = doc.blocks.iter().filter_map(|b| if let Block::ToolCall(c) = b { Some(c) } else { None }).collect();
        assert_eq!(calls.len(), 1, "{text}");
        assert_eq!(calls[0].name, name);
        assert!(doc.issues.is_empty(), "{:?}", doc.issues);
        for size in 1..5 {
            let (streamed, whole) = both_ways(text.as_bytes(), &options, size);
            assert_eq!(streamed, whole, "{text} in {size}-byte pieces");
        }
    }
}

#[test]
fn custom_dialect_parts_are_checked() {
    let bad = |parts: CustomDialect| Options::custom(&parts).unwrap_err().to_string();
    let base = CustomDialect::default;
    assert_eq!(bad(CustomDialect { call_start: String::new(), ..base() }), "call_start must not be empty");
    assert_eq!(
        bad(CustomDialect { think: Some(("<think>".into(), "<tool_call>".into())), ..base() }),
        "call_start and think_end must differ (both are '<tool_call>')"
    );
    assert_eq!(bad(CustomDialect { payload: "xml".into(), ..base() }), "unknown payload 'xml'; valid: json, qwen3_coder, glm45");
    assert_eq!(
        bad(CustomDialect { payload: "glm45".into(), name_key: "n".into(), ..base() }),
        "name_key and arguments_key apply to payload 'json' only, not 'glm45'"
    );
    assert_eq!(bad(CustomDialect { name_key: "a".into(), arguments_key: "a".into(), ..base() }), "name_key and arguments_key must differ (both are 'a')");
    assert_eq!(
        Options::custom(&CustomDialect { call_end: "<tool_call>".into(), ..base() }).unwrap_err(),
        DialectError::SameMarkers { first: "call_start", second: "call_end", marker: "<tool_call>".into() }
    );
    assert_eq!(
        Options::custom(&CustomDialect { name_key: String::new(), ..base() }).unwrap_err(),
        DialectError::EmptyKey
    );
    // Issue 22: a marker that begins another would be read differently as the stream is cut.
    assert_eq!(
        bad(CustomDialect { call_start: "<tc>".into(), think: Some(("<t".into(), "</t>".into())), ..base() }),
        "think_start '<t' is a prefix of call_start '<tc>': no marker may begin another"
    );
    assert_eq!(
        bad(CustomDialect { call_start: "<c>x".into(), think: Some(("<t>".into(), "<c>".into())), ..base() }),
        "think_end '<c>' is a prefix of call_start '<c>x': no marker may begin another"
    );
    assert_eq!(bad(CustomDialect { call_end: "x".repeat(65), ..base() }), "call_end must be at most 64 bytes long");
    assert!(Options::custom(&CustomDialect { call_end: "é".repeat(32), ..base() }).is_ok());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn marker_soup_streams_as_whole_in_every_dialect(
        picks in proptest::collection::vec(0usize..64, 0..60),
        size in 1usize..8,
    ) {
        for dialect in ALL {
            let text = soup(dialect, &picks);
            let (streamed, whole) = both_ways(text.as_bytes(), &Options::new(dialect), size);
            prop_assert_eq!(streamed, whole);
        }
    }
}

/// A text of the dialect's markers and payload pieces, chosen by `picks`.
fn soup(dialect: Dialect, picks: &[usize]) -> String {
    // Whole objects too: a closed payload followed by junk and a cut end marker is how a stray
    // quote once streamed differently (issue 22); built from pieces alone it was too rare.
    let common = ["<think>", "</think>", "{\"a\": ", "}", "\"", "\\", "x", " ", "\n", "é", "<", "f", "1", "{}", "{\"a\": 1}"];
    let own: &[&str] = match dialect {
        Dialect::Forge => &["<tool>", "</tool>", "{\"tool_name\": \"f\", \"arguments\": ", "<thinking>", "[", "]", "```"],
        Dialect::Hermes => &["<tool_call>", "</tool_call>", "{\"name\": \"f\", \"arguments\": "],
        Dialect::Qwen3Coder => &["<tool_call>", "</tool_call>", "<function=f>", "</function>", "<parameter=a>", "</parameter>"],
        Dialect::GptOss => &["<|start|>", "<|channel|>", "analysis", "final", " to=functions.f", "<|message|>", "<|end|>", "<|call|>"],
        Dialect::DeepseekV3 | Dialect::DeepseekV31 => &[
            "<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>", "<｜tool▁call▁begin｜>", "<｜tool▁call▁end｜>",
            "<｜tool▁sep｜>", "function", "```json\n", "```", "<｜",
        ],
        Dialect::KimiK2 => &[
            "<|tool_calls_section_begin|>", "<|tool_calls_section_end|>", "<|tool_call_begin|>", "<|tool_call_end|>",
            "<|tool_call_argument_begin|>", "functions.f:0", "◁think▷", "◁/think▷", "◁",
        ],
        Dialect::Mistral => &["[TOOL_CALLS]", "[ARGS]", "[THINK]", "[/THINK]", "[{\"name\": \"f\", \"arguments\": ", "]"],
        Dialect::Llama3Json => &["<|python_tag|>", "{\"name\": \"f\", \"parameters\": ", ";"],
        Dialect::Pythonic => &["[f(", "a=", "'s'", ")", ")]", ", ", "<|python_start|>", "<|python_end|>", "\n["],
        Dialect::DeepseekV32 | Dialect::DeepseekV4 => super::tests_families_b::DSML,
        Dialect::Gemma4 | Dialect::FunctionGemma => super::tests_families_b::GEMMA,
        Dialect::Cohere => super::tests_families_b::COHERE,
        Dialect::Step3 => super::tests_families_c::STEP3,
        Dialect::CommandR => super::tests_families_c::COMMAND_R,
        Dialect::Step3p5 => &["<tool_call>", "</tool_call>", "<function=f>", "</function>", "<parameter=a>", "</parameter>"],
        Dialect::Glm45 | Dialect::Custom => &["<tool_call>", "</tool_call>", "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>"],
        Dialect::SeedOss => &["<seed:tool_call>", "</seed:tool_call>", "<function=f>", "</function>", "<parameter=a>", "</parameter>", "<seed:think>", "</seed:think>"],
        Dialect::MinimaxM2 => &["<minimax:tool_call>", "</minimax:tool_call>", "<invoke name=\"f\">", "</invoke>", "<parameter name=\"a\">", "</parameter>"],
        Dialect::Magistral => &["[TOOL_CALLS]", "[ARGS]", "[THINK]", "[/THINK]", "f", "]"],
        Dialect::Hy3 => &[
            "<tool_calls:opensource>", "</tool_calls:opensource>", "<tool_call:opensource>", "</tool_call:opensource>",
            "<tool_sep:opensource>", "<arg_key:opensource>", "</arg_key:opensource>", "<arg_value:opensource>",
            "</arg_value:opensource>", "<think:opensource>", "</think:opensource>",
        ],
        Dialect::KimiK3 => super::tests_xtml::XTML,
        Dialect::Lfm2 => &["<|tool_call_start|>", "<|tool_call_end|>", "[f(", "a=", "'s'", ")", ")]", ", "],
        Dialect::Granite => &["<|tool_call|>", "<tool_call>", "</tool_call>", "[", "]", "{\"name\": \"f\", \"arguments\": ", ",", "<response>"],
        Dialect::Phi4Mini => &["<|tool_call|>", "<|/tool_call|>", "functools", "[", "]", "{\"name\": \"f\", \"arguments\": ", ","],
        Dialect::Xlam => &["```", "json", "[TOOL_CALLS]", "[", "]", "{\"name\": \"f\", \"arguments\": ", ","],
        Dialect::Hunyuan | Dialect::Jamba => &["<tool_calls>", "</tool_calls>", "[", "]", "{\"name\": \"f\", \"arguments\": ", ",", "<answer>"],
        Dialect::Apertus => &["<|tools_prefix|>", "<|tools_suffix|>", "<|inner_prefix|>", "<|inner_suffix|>", "[", "]", "{\"f\": ", ","],
        Dialect::Internlm2 => &["<|action_start|><|plugin|>", "<|action_end|>", "{\"name\": \"f\", \"parameters\": ", "<|action_start|>"],
        Dialect::Longcat => &["<longcat_tool_call>", "</longcat_tool_call>", "{\"name\": \"f\", \"arguments\": ", "<longcat_think>", "</longcat_think>"],
    };
    picks.iter().map(|p| if p % 2 == 0 { own[p / 2 % own.len()] } else { common[p / 2 % common.len()] }).collect()
}

/// Issue 22: a stray quote after a closed payload, then the call's end token. Streamed with the
/// end token cut anywhere it once became `unclosed_tool` and swallowed the text after it.
#[test]
fn a_quote_after_the_payload_streams_as_whole() {
    let cases = [
        (Dialect::DeepseekV31, "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>f<｜tool▁sep｜>{}\"<｜tool▁call▁end｜>after"),
        (Dialect::DeepseekV3, "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n{}\"<｜tool▁call▁end｜>after"),
        (
            Dialect::KimiK2,
            "<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{}\"<|tool_call_end|>after",
        ),
        (Dialect::Hermes, "<tool_call>{\"name\": \"f\"}\"</tool_call>after"),
    ];
    for (dialect, text) in cases {
        let doc = whole(text, dialect);
        assert_eq!(doc.text(), b"after", "{dialect:?}");
        assert_eq!(doc.issues.len(), 1, "{dialect:?}");
        assert_eq!(doc.issues[0].kind, crate::parse::IssueKind::InvalidJson, "{dialect:?}");
        for cut in 0..=text.len() {
            let options = Options { start_in_thinking: StartThinking::No, ..Options::new(dialect) };
            let mut machine = StreamMachine::new(options);
            let mut events = Vec::new();
            machine.feed_into(&text.as_bytes()[..cut], &mut events);
            machine.feed_into(&text.as_bytes()[cut..], &mut events);
            events.extend(machine.finish());
            assert_eq!(Document::from_events(events), doc, "{dialect:?} cut at {cut}");
        }
        assert_eq!(streamed(text, dialect, 1), doc, "{dialect:?} in 1-byte pieces");
    }
}
