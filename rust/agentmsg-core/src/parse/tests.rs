//! Unit tests of the parsing rules; each rule of the module docs has one here.

use super::call::tests::to_serde;
use super::*;

/// Forge's options with `forge` for its own.
fn forge(forge: ForgeOptions) -> Options {
    Options { forge, ..Options::default() }
}

/// The value of `key` in a decoded object (its last pair), as a serde_json value.
fn get(object: &JsonObject<'static>, key: &str) -> serde_json::Value {
    object.iter().rev().find(|(k, _)| k == key).map_or(serde_json::Value::Null, |(_, v)| to_serde(v))
}

fn doc(text: &str) -> Document<'static> {
    parse(text.as_bytes(), &Options::default()).into_owned()
}

fn s(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).unwrap()
}

/// The blocks as short strings: `T:text`, `K:thinking`, `C:name`.
fn shape(doc: &Document) -> Vec<String> {
    doc.blocks
        .iter()
        .map(|b| match b {
            Block::Text(t) => format!("T:{}", s(t)),
            Block::Thinking(t) => format!("K:{}", s(t)),
            Block::ToolCall(c) => format!("C:{}", c.name),
        })
        .collect()
}

const CALL: &str = "<tool>\n{\n  \"server_name\": \"local\",\n  \"tool_name\": \"calculator\",\n  \"arguments\": {\"a\": 5, \"b\": 3}\n}\n</tool>";

#[test]
fn forge_tool_call_with_thinking() {
    let d = doc(&format!("[I'll use the calculator for this]\n\n{CALL}"));
    assert_eq!(shape(&d), ["K:I'll use the calculator for this", "C:calculator"]);
    let Block::ToolCall(call) = &d.blocks[1] else { panic!() };
    assert_eq!(call.server_name, "local");
    assert_eq!(to_serde(&JsonValue::Object(call.input.clone())), serde_json::json!({"a": 5, "b": 3}));
    assert!(call.id.starts_with("call_") && call.id.len() == 21);
    assert!(d.issues.is_empty());
}

#[test]
fn text_around_calls_is_kept_in_order_and_stripped() {
    let d = doc(&format!("  Before.\n{CALL}\n\nBetween.  \n{CALL}after\n"));
    assert_eq!(shape(&d), ["T:Before.", "C:calculator", "T:Between.", "C:calculator", "T:after"]);
    assert_eq!(s(&d.text()), "Before.\nBetween.\nafter");
}

#[test]
fn close_tag_inside_json_string_is_payload() {
    let d = doc(r#"<tool>{"tool_name": "echo", "arguments": {"s": "a </tool> \" <tool> b"}}</tool> done"#);
    assert_eq!(shape(&d), ["C:echo", "T:done"]);
    let Block::ToolCall(call) = &d.blocks[0] else { panic!() };
    assert_eq!(get(&call.input, "s"), "a </tool> \" <tool> b");
}

#[test]
fn arguments_as_json_string_and_extra_keys() {
    let d = doc(r#"<tool>{"tool_name": "t", "arguments": "{\"x\": 1}", "server_name": "srv", "reason": "why"}</tool>"#);
    let Block::ToolCall(call) = &d.blocks[0] else { panic!() };
    assert_eq!(get(&call.input, "x"), 1);
    assert_eq!(call.server_name, "srv");
    assert_eq!(get(&call.metadata, "reason"), "why");
}

#[test]
fn bad_calls_give_issues_with_raw_text_and_the_rest_parses() {
    let text = "a <tool>{\"tool_name\": \"t\",}</tool> b <tool>{\"arguments\": {}}</tool> c <tool>[1]</tool> d <tool>{\"tool_name\": 3, \"arguments\": {}}</tool> e <tool>{\"tool_name\": \"t\", \"arguments\": 3}</tool> f <tool>{\"tool_name\": \"t\"";
    let d = doc(text);
    assert_eq!(shape(&d), ["T:a", "T:b", "T:c", "T:d", "T:e", "T:f"]);
    let kinds: Vec<_> = d.issues.iter().map(|i| i.kind.name()).collect();
    assert_eq!(
        kinds,
        ["invalid_json", "missing_field", "not_an_object", "invalid_field", "invalid_field", "unclosed_tool"]
    );
    assert_eq!(d.issues[0].message, "invalid JSON: trailing comma at line 1 column 19");
    assert_eq!(d.issues[1].message, "missing tool_name");
    for issue in &d.issues {
        assert_eq!(&text.as_bytes()[issue.span.0..issue.span.1], &issue.raw[..]);
    }
    assert_eq!(s(&d.issues[5].raw), "<tool>{\"tool_name\": \"t\"");
}

#[test]
fn missing_arguments_message() {
    let d = doc("<tool>{\"tool_name\": \"t\"}</tool>");
    assert_eq!(d.issues[0].message, "missing arguments");
}

#[test]
fn xml_payload_and_format_option() {
    let text = "<tool><server_name>local</server_name><tool_name>read</tool_name><arguments><path>a.go</path></arguments></tool>";
    let d = doc(text);
    let Block::ToolCall(call) = &d.blocks[0] else { panic!() };
    assert_eq!((call.name.as_str(), &call.input[0]), ("read", &("path".into(), JsonValue::Str("a.go".into()))));
    let json_only = parse(text.as_bytes(), &forge(ForgeOptions { tool_format: ToolFormat::Json, ..ForgeOptions::default() }));
    assert_eq!(json_only.issues[0].kind, IssueKind::WrongFormat);
    let xml_only = parse(CALL.as_bytes(), &forge(ForgeOptions { tool_format: ToolFormat::Xml, ..ForgeOptions::default() }));
    assert_eq!(xml_only.issues[0].kind, IssueKind::WrongFormat);
    let cdata = doc("<tool><tool_name>w</tool_name><arguments><c><![CDATA[</tool>]]]></c></arguments></tool>x");
    let Block::ToolCall(call) = &cdata.blocks[0] else { panic!() };
    assert_eq!(get(&call.input, "c"), "</tool>]");
    assert_eq!(shape(&cdata), ["C:w", "T:x"]);
}

#[test]
fn ids_are_deterministic_and_positional() {
    let d1 = doc(&format!("{CALL}{CALL}"));
    let d2 = doc(&format!("{CALL}{CALL}"));
    assert_eq!(d1, d2);
    let ids: Vec<_> = d1.blocks.iter().map(|b| match b { Block::ToolCall(c) => c.id.clone(), _ => String::new() }).collect();
    assert_ne!(ids[0], ids[1]);
    assert_eq!(call_id(0, b""), "call_af63bd4c8601b7df");
}

#[test]
fn bracket_thoughts_and_exclusions() {
    let text = "[First thought]\n  [nested [ok] thought]  \r\n[x](y)\n[ref]: http://u\n[ ]\n[x]\n[1]\n[2, 3]\n[\"a\", 1]\n[a] and [b]\n- [ ] task\n[]\n[unclosed\nmid [not] line";
    let d = doc(text);
    assert_eq!(
        shape(&d),
        [
            "K:First thought",
            "K:nested [ok] thought",
            "T:[x](y)\n[ref]: http://u\n[ ]\n[x]\n[1]\n[2, 3]\n[\"a\", 1]\n[a] and [b]\n- [ ] task\n[]\n[unclosed\nmid [not] line"
        ]
    );
}

#[test]
fn forge_multi_step_reasoning_lines_are_separate_thoughts() {
    let d = doc("[First]\n[Second]\n[Third]\n\nAnswer.");
    assert_eq!(shape(&d), ["K:First", "K:Second", "K:Third", "T:Answer."]);
}

#[test]
fn tags_and_code_fences() {
    let d = doc("<think>\nplan\n</think>\n\nAnswer <thinking>more</thinking> end");
    assert_eq!(shape(&d), ["K:plan", "T:Answer", "K:more", "T:end"]);
    let fenced = "```xml\n<tool>{}</tool>\n[not a thought]\n```\n[thought]";
    assert_eq!(shape(&doc(fenced)), ["T:```xml\n<tool>{}</tool>\n[not a thought]\n```", "K:thought"]);
    let tildes = "~~~~\n```\n<think>x</think>\n~~~~\nok";
    assert_eq!(shape(&doc(tildes)), ["T:~~~~\n```\n<think>x</think>\n~~~~\nok"]);
    let off = forge(ForgeOptions { code_fences: false, ..ForgeOptions::default() });
    assert_eq!(shape(&parse(fenced.as_bytes(), &off)).len(), 4);
}

#[test]
fn thinking_modes() {
    let text = "[b]\n<think>t</think>x";
    let shape_of = |mode| shape(&parse(text.as_bytes(), &forge(ForgeOptions { thinking: mode, ..ForgeOptions::default() })));
    assert_eq!(shape_of(ThinkingMode::Auto), ["K:b", "K:t", "T:x"]);
    assert_eq!(shape_of(ThinkingMode::Tags), ["T:[b]", "K:t", "T:x"]);
    assert_eq!(shape_of(ThinkingMode::Brackets), ["K:b", "T:<think>t</think>x"]);
    assert_eq!(shape_of(ThinkingMode::None), ["T:[b]\n<think>t</think>x"]);
}

#[test]
fn unclosed_thinking_is_incomplete_and_start_in_thinking() {
    let d = doc("a <think>still going");
    assert_eq!(shape(&d), ["T:a", "K:still going"]);
    assert!(d.incomplete_thinking);
    let d = doc("reasoning here</think>The answer.");
    assert_eq!(shape(&d), ["K:reasoning here", "T:The answer."]);
    assert!(!d.incomplete_thinking);
    let no = Options { start_in_thinking: StartThinking::No, ..Options::default() };
    assert_eq!(shape(&parse(b"r</think>A", &no)), ["T:r</think>A"]);
    // An opener before the closer: no detection.
    assert_eq!(shape(&doc("<think>a</think></think>b")), ["K:a", "T:</think>b"]);
    assert_eq!(shape(&doc("<think></think>x")), ["K:", "T:x"]);
}

#[test]
fn bom_crlf_nul() {
    let d = doc("\u{feff}[thought]\r\nline\0two\r\n");
    assert_eq!(shape(&d), ["K:thought", "T:line\0two"]);
}

#[test]
fn streaming_equals_whole_for_every_split() {
    let text = format!("\u{feff}Intro <thi\nx [y]\n[thought]\n<think>a <b</think>```\n<tool>no</tool>\n```\n{CALL} tail <tool><tool_name>x</tool_name><arguments><c><![CDATA[</tool>]]></c></arguments></tool>\n<tool>{{\"a\": \"</tool>\"");
    let options = Options { start_in_thinking: StartThinking::No, ..Options::default() };
    let whole = parse(text.as_bytes(), &options);
    let bytes = text.as_bytes();
    for split in 0..=bytes.len() {
        let mut m = StreamMachine::new(options.clone());
        let mut events = m.feed(&bytes[..split]);
        events.extend(m.feed(&bytes[split..]));
        events.extend(m.finish());
        assert_eq!(Document::from_events(events), whole, "split at {split}");
    }
    let mut m = StreamMachine::new(options);
    let mut events = Vec::new();
    for b in bytes {
        events.extend(m.feed(std::slice::from_ref(b)));
    }
    events.extend(m.finish());
    assert_eq!(Document::from_events(events), whole);
}

#[test]
fn char_spans_count_code_points() {
    let text = "日本 <tool>{\"x\": \"é\"}</tool> z";
    let d = doc(text);
    let issue = &d.issues[0];
    assert_eq!(issue.char_span, (3, 3 + "<tool>{\"x\": \"é\"}</tool>".chars().count()));
    assert_eq!(&text.as_bytes()[issue.span.0..issue.span.1], &issue.raw[..]);
}

#[test]
fn deep_nesting_and_big_payloads_do_not_panic() {
    let deep_brackets = "[".repeat(100_000);
    assert_eq!(s(&doc(&deep_brackets).text()), deep_brackets);
    let balanced = "[".repeat(100_000) + &"]".repeat(100_000);
    assert_eq!(doc(&balanced).blocks.len(), 1);
    let deep_json = format!("<tool>{}</tool>", "{".repeat(100_000));
    assert_eq!(doc(&deep_json).issues[0].kind, IssueKind::InvalidJson);
    let nested = format!("<tool>{{\"tool_name\": \"t\", \"arguments\": {{\"a\": {}1{}}}}}</tool>", "[".repeat(100_000), "]".repeat(100_000));
    assert_eq!(doc(&nested).issues[0].kind, IssueKind::InvalidJson);
    let big = "x".repeat(3_000_000);
    let call = format!("<tool>{{\"tool_name\": \"t\", \"arguments\": {{\"data\": \"{big}\"}}}}</tool>");
    let d = doc(&call);
    let Block::ToolCall(c) = &d.blocks[0] else { panic!() };
    assert_eq!(get(&c.input, "data").as_str().map(str::len), Some(3_000_000));
}

#[test]
fn one_byte_chunks_of_long_lines_and_payloads() {
    // Long held lines and payloads fed a byte at a time: each byte is looked at a bounded number
    // of times, so this finishes at once (a rescanning parser would do ~10^10 steps here).
    let text = format!(
        "[{}]\n[{}\n<tool>{{\"tool_name\": \"t\", \"arguments\": {{\"d\": \"{}\"}}}}</tool>   ",
        "a".repeat(100_000),
        "b".repeat(100_000),
        "c".repeat(100_000)
    );
    let mut m = StreamMachine::new(Options::default());
    let mut events = Vec::new();
    for b in text.as_bytes() {
        events.extend(m.feed(std::slice::from_ref(b)));
    }
    events.extend(m.finish());
    let d = Document::from_events(events);
    assert_eq!(d, parse(text.as_bytes(), &Options::default()));
    assert_eq!(shape(&d).len(), 3);
}

mod props {
    use super::*;
    use proptest::prelude::*;

    fn pieces() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            Just("<tool>".to_string()),
            Just("</tool>".to_string()),
            Just("<think>".to_string()),
            Just("</think>".to_string()),
            Just("<thinking>".to_string()),
            Just("</thinking>".to_string()),
            Just("<![CDATA[".to_string()),
            Just("]]>".to_string()),
            Just("```".to_string()),
            Just("\n".to_string()),
            Just("[".to_string()),
            Just("]".to_string()),
            Just("\"".to_string()),
            Just("\\".to_string()),
            Just("{\"tool_name\": \"t\", \"arguments\": {}}".to_string()),
            Just("<tool_name>t</tool_name><arguments/>".to_string()),
            "[ a-z<>/{}\\[\\]\"\\\\\n\r\t]{0,6}",
            any::<String>().prop_map(|s| s.chars().take(4).collect()),
        ];
        prop::collection::vec(piece, 0..24).prop_map(|v| v.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(std::env::var("PROPTEST_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(400)))]

        #[test]
        fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..300), cut in 0usize..300) {
            let doc = parse(&bytes, &Options::default());
            for issue in &doc.issues {
                prop_assert_eq!(&bytes[issue.span.0..issue.span.1], &issue.raw[..]);
            }
            let mut m = StreamMachine::new(Options::default());
            let cut = cut.min(bytes.len());
            m.feed(&bytes[..cut]);
            m.feed(&bytes[cut..]);
            m.finish();
        }

        #[test]
        fn streaming_invariant(
            text in pieces(),
            cuts in prop::collection::vec(0usize..200, 0..8),
            mode in 0u8..4,
            fences: bool,
            start: bool,
            max_calls in prop::option::of(0usize..3),
            slice in 1usize..16,
        ) {
            let forge = ForgeOptions {
                thinking: [ThinkingMode::Auto, ThinkingMode::Tags, ThinkingMode::Brackets, ThinkingMode::None][mode as usize],
                tool_format: ToolFormat::Auto,
                code_fences: fences,
                max_calls,
            };
            let start_in_thinking = if start { StartThinking::Yes } else { StartThinking::No };
            let options = Options { start_in_thinking, forge, ..Options::default() };
            let bytes = text.as_bytes();
            let whole = parse(bytes, &options);
            // A whole-text parse fed in small slices folds to the same document.
            prop_assert_eq!(&super::super::parse_in_slices(bytes, &options, slice).0, &whole);
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(bytes.len())).collect();
            cuts.sort_unstable();
            let mut m = StreamMachine::new(options);
            let mut events = Vec::new();
            let mut last = 0;
            for c in cuts.into_iter().chain([bytes.len()]) {
                events.extend(m.feed(&bytes[last..c]));
                last = c;
            }
            events.extend(m.finish());
            prop_assert_eq!(Document::from_events(events), whole.clone());
            // Issues point at their raw text; text blocks are stripped and non-empty.
            for issue in &whole.issues {
                prop_assert_eq!(&bytes[issue.span.0..issue.span.1], &issue.raw[..]);
                prop_assert_eq!(issue.char_span.0, chars::count_chars(&bytes[..issue.span.0]));
            }
            for block in &whole.blocks {
                if let Block::Text(t) = block {
                    prop_assert!(!t.is_empty());
                    prop_assert_eq!(dialect::forge::bracket::trim(t), &t[..]);
                }
            }
        }
    }
}

#[test]
fn many_plain_special_line_starts_stay_linear() {
    // Every line starts with a backtick or (with brackets off) a bracket, and no `<` follows:
    // the scan must not search the rest of the text again at every such line.
    let text = "`x` word\n[y] z\n".repeat(100_000);
    let off = forge(ForgeOptions { thinking: ThinkingMode::Tags, ..ForgeOptions::default() });
    assert_eq!(s(&parse(text.as_bytes(), &off).text()), text.trim_end());
    assert_eq!(parse(text.as_bytes(), &Options::default()).blocks.len(), 1);
}

/// Throughput of the core on 10 MB of prose without tags; run with
/// `cargo test --release -p agentmsg-core core_throughput -- --ignored --nocapture`.
#[test]
#[ignore]
fn core_throughput() {
    let line = "alpha beta gamma delta omega alpha beta gamma delta omega alpha beta gamma delta\n";
    let text: String = line.repeat(10_000_000 / line.len() + 1).chars().take(10_000_000).collect();
    let mut times = Vec::new();
    for _ in 0..20 {
        let start = std::time::Instant::now();
        let doc = parse(std::hint::black_box(text.as_bytes()), &Options::default());
        times.push(start.elapsed().as_secs_f64());
        assert_eq!(doc.blocks.len(), 1);
    }
    times.sort_by(f64::total_cmp);
    let median = times[times.len() / 2];
    println!("10 MB without tags: {:.2} ms, {:.2} GB/s", median * 1e3, 1e7 / median / 1e9);
}

#[test]
fn unterminated_json_string_ends_the_call_at_its_first_close_tag() {
    let text = "a <tool>{\"tool_name\": \"t\", \"arguments\": {\"s\": \"oops}</tool> b [c] d\n[thought]\n<tool>{\"tool_name\": \"u\", \"arguments\": {}}</tool> e";
    let d = doc(text);
    assert_eq!(shape(&d), ["T:a", "T:b [c] d", "K:thought", "C:u", "T:e"]);
    assert_eq!(d.issues.len(), 1);
    assert_eq!(d.issues[0].kind, IssueKind::InvalidJson);
    assert_eq!(s(&d.issues[0].raw), "<tool>{\"tool_name\": \"t\", \"arguments\": {\"s\": \"oops}</tool>");
    assert_eq!(&text.as_bytes()[d.issues[0].span.0..d.issues[0].span.1], &d.issues[0].raw[..]);
    // A string that does close keeps its `</tool>` as payload.
    let closed = doc("<tool>{\"tool_name\": \"t\", \"arguments\": {\"s\": \"x</tool>y\"}}</tool> z");
    assert_eq!(shape(&closed), ["C:t", "T:z"]);
    // Streamed byte by byte, the same.
    let mut m = StreamMachine::new(Options { start_in_thinking: StartThinking::No, ..Options::default() });
    let mut events = Vec::new();
    for b in text.as_bytes() {
        events.extend(m.feed(std::slice::from_ref(b)));
    }
    events.extend(m.finish());
    assert_eq!(Document::from_events(events), d);
}

#[test]
fn many_calls_with_close_tags_in_strings_stay_linear() {
    let call = "<tool>{\"tool_name\": \"t\", \"arguments\": {\"s\": \"</tool>\"}}</tool>\n";
    let text = call.repeat(20_000) + "<tool>{\"s\": \"</tool>" + &"tail ".repeat(100_000);
    let d = doc(&text);
    assert_eq!(d.blocks.len(), 20_001);
    assert_eq!(d.issues.len(), 1);
}

/// Per-turn cost on a JSON list of texts named by `AGENTMSG_TURNS` (a profiling aid); run with
/// `AGENTMSG_TURNS=turns.json cargo test --release -p agentmsg-core turns_profile -- --ignored --nocapture`.
#[test]
#[ignore]
fn turns_profile() {
    let Some(path) = std::env::var_os("AGENTMSG_TURNS") else { return };
    let data = std::fs::read(path).unwrap_or_default();
    let Ok(serde_json::Value::Array(items)) = serde_json::from_slice::<serde_json::Value>(&data) else { return };
    let texts: Vec<String> = items.into_iter().filter_map(|v| v.as_str().map(String::from)).collect();
    let rounds = 2000;
    let start = std::time::Instant::now();
    let mut blocks = 0;
    for _ in 0..rounds {
        for text in &texts {
            blocks += parse(std::hint::black_box(text.as_bytes()), &Options::default()).blocks.len();
        }
    }
    let per_turn = start.elapsed().as_secs_f64() / (rounds * texts.len()) as f64;
    let start = std::time::Instant::now();
    for _ in 0..rounds {
        blocks += parse_many(std::hint::black_box(&texts), &Options::default()).len();
    }
    let batched = start.elapsed().as_secs_f64() / (rounds * texts.len()) as f64;
    println!(
        "{} turns, {blocks} blocks, {:.2} us per turn, {:.2} us per turn through parse_many",
        texts.len(),
        per_turn * 1e6,
        batched * 1e6
    );
}


/// Seconds of CPU time this thread has used: another process taking the core does not count
/// (wall time on a busy machine grows with every time slice lost). Elsewhere than Linux, wall time.
fn thread_time() -> f64 {
    #[cfg(all(target_os = "linux", target_pointer_width = "64"))]
    {
        #[repr(C)]
        struct Timespec {
            sec: i64,
            nsec: i64,
        }
        extern "C" {
            fn clock_gettime(clock: i32, time: *mut Timespec) -> i32;
        }
        const CLOCK_THREAD_CPUTIME_ID: i32 = 3;
        let mut time = Timespec { sec: 0, nsec: 0 };
        // SAFETY: a valid clock id and a pointer to a live timespec of the C layout.
        if unsafe { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &mut time) } == 0 {
            return time.sec as f64 + time.nsec as f64 * 1e-9;
        }
    }
    static ORIGIN: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    ORIGIN.get_or_init(std::time::Instant::now).elapsed().as_secs_f64()
}

/// Asserts that `run` on `large` (some `factor` times the size of `small`) takes under `bound`
/// times as long as on `small`, a bound between linear (`factor`) and quadratic (its square).
/// Each side's time is its minimum by this thread's CPU time: `small` (cheap) three times a
/// round, `large` once, for up to five rounds while over the bound; noise only ever adds time,
/// so the minimums approach the true costs and a busy moment does not fail the test.
pub(crate) fn assert_linear(what: &str, small: &[u8], large: &[u8], bound: f64, run: &dyn Fn(&[u8])) {
    let factor = large.len() as f64 / small.len() as f64;
    assert!(factor < bound && bound < factor * factor, "{what}: the bound must separate linear from quadratic");
    let time = |text: &[u8]| {
        let start = thread_time();
        run(std::hint::black_box(text));
        thread_time() - start
    };
    let (mut small_best, mut large_best) = (f64::INFINITY, f64::INFINITY);
    for _ in 0..5 {
        for _ in 0..3 {
            small_best = small_best.min(time(small));
        }
        large_best = large_best.min(time(large));
        if large_best < bound * small_best {
            return;
        }
    }
    let ratio = large_best / small_best;
    panic!("{what}: {small_best:.4}s for {} bytes, {large_best:.4}s for {} ({ratio:.1}x the time, {factor:.1}x the input)", small.len(), large.len());
}

#[test]
fn assert_linear_tells_quadratic_from_linear() {
    // Work proportional to the length, and to its square.
    let work = |steps: usize| (0..steps).fold(0usize, |sum, step| sum.wrapping_add(std::hint::black_box(step)));
    let (small, large) = (vec![b'x'; 1 << 11], vec![b'x'; 1 << 14]);
    assert_linear("linear", &small, &large, 20.0, &|text| {
        work(text.len() * 64);
    });
    let quadratic = std::panic::catch_unwind(|| {
        assert_linear("quadratic", &small, &large, 20.0, &|text| {
            work(text.len() * text.len() / 64);
        })
    });
    assert!(quadratic.is_err());
}

#[test]
fn shapes_that_were_quadratic_scale_linearly_whole_and_streamed() {
    let options = Options::default();
    let whole = |text: &[u8]| {
        parse(text, &options);
    };
    let streamed = |text: &[u8]| {
        let mut machine = StreamMachine::new(options.clone());
        for chunk in text.chunks(64) {
            machine.feed(chunk);
        }
        machine.finish();
    };
    let ampersands = |n: usize| format!("<tool><a>{}</a></tool>", "&".repeat(n));
    for unit in ["[ ] task\n", "[x] y\n", "[1] cite\n", "[a\n", "[INFO] server started\n", "<tool></tool>", "<think></think>"] {
        let n = 32_000 / unit.len();
        let (small, large) = (unit.repeat(n), unit.repeat(8 * n));
        assert_linear(&format!("{unit:?} whole"), small.as_bytes(), large.as_bytes(), 12.0, &whole);
        assert_linear(&format!("{unit:?} streamed"), small.as_bytes(), large.as_bytes(), 12.0, &streamed);
    }
    // One call holding n ampersands (the unit is repeated inside the payload).
    let payload = |text: &[u8]| {
        parse(ampersands(text.len()).as_bytes(), &options);
    };
    let (small, large) = ("&".repeat(32_000), "&".repeat(8 * 32_000));
    assert_linear("ampersands in an XML payload", small.as_bytes(), large.as_bytes(), 12.0, &payload);
}

#[test]
fn calls_past_max_calls_are_one_issue_with_the_raw_rest() {
    let text = b"a <tool></tool> b <tool>{} [x]\n<think>c</think>";
    let d = parse(text, &forge(ForgeOptions { max_calls: Some(1), ..ForgeOptions::default() }));
    assert_eq!(shape(&d), ["T:a", "T:b"]);
    assert_eq!(d.issues.len(), 2);
    assert_eq!(d.issues[1].kind, IssueKind::TooManyCalls);
    assert_eq!(s(&d.issues[1].raw), "<tool>{} [x]\n<think>c</think>");
    assert_eq!(d.issues[1].span, (18, text.len()));
}

