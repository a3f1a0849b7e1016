//! step3 (StepFun's steptml calls) and command_r (Command R's `Action:` lists): exact reads, marker soups of its own pieces that stream
//! exactly as they parse whole, and adversarial inputs in linear time fed a token at a time.

use proptest::prelude::*;

use jiter::JsonValue;
use serde_json::{json, Value};

use super::tests::{streamed, whole};
use super::Dialect;
use crate::parse::call::tests::to_serde;
use crate::parse::tests::assert_linear;
use crate::parse::{Block, Document, IssueKind, Options, StartThinking, Tools};

pub(super) const NEW: [Dialect; 2] = [Dialect::Step3, Dialect::CommandR];

pub(super) const STEP3: &[&str] = &[
    "<｜tool_calls_begin｜>", "<｜tool_calls_end｜>", "<｜tool_call_begin｜>", "<｜tool_call_end｜>", "<｜tool_sep｜>",
    "function", "<steptml:invoke", " name=\"f\">", "</steptml:invoke>", "<steptml:parameter", " name=\"a\">",
    "</steptml:parameter>", "<｜", "<think>", "</think>", "\"", "<", ">", "1", " ", "\n", "é",
];

pub(super) const COMMAND_R: &[&str] = &[
    "Action:", "\nAction:", "```json", "```", "json", "[", "]", "{", "}", ",", "\"", "\\",
    "{\"tool_name\": \"f\", \"parameters\": ", "{}", "Plan:", " ", "\n", "é", "1", "`",
];

const CALLS_BEGIN: &str = "<｜tool_calls_begin｜>";
const CALLS_END: &str = "<｜tool_calls_end｜>";

/// One step3 call as Step3's template writes it.
fn step3_call(name: &str, params: &[(&str, &str)]) -> String {
    let params: String =
        params.iter().map(|(k, v)| format!("<steptml:parameter name=\"{k}\">{v}</steptml:parameter>")).collect();
    format!("<｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name=\"{name}\">{params}</steptml:invoke><｜tool_call_end｜>")
}

fn calls(doc: &Document<'_>) -> Vec<(String, Value)> {
    doc.blocks
        .iter()
        .filter_map(|b| match b {
            Block::ToolCall(c) => Some((c.name.clone(), to_serde(&JsonValue::Object(c.input.clone())))),
            _ => None,
        })
        .collect()
}

fn same_every_way(text: &str, dialect: Dialect) -> Document<'static> {
    let doc = whole(text, dialect);
    for size in 1..5 {
        assert_eq!(streamed(text, dialect, size), doc, "{text} in {size}-byte pieces");
    }
    doc
}

#[test]
fn step3_reads_its_calls_values_stripped() {
    let text = format!(
        "Let me look.\n{CALLS_BEGIN}\n{}\n{}\n{CALLS_END}\nDone.",
        step3_call("get_weather", &[("city", "\n Paris \n"), ("unit", "c")]),
        step3_call("get_time", &[])
    );
    let doc = same_every_way(&text, Dialect::Step3);
    assert_eq!(
        calls(&doc),
        [("get_weather".into(), json!({"city": "Paris", "unit": "c"})), ("get_time".into(), json!({}))]
    );
    assert!(doc.issues.is_empty(), "{:?}", doc.issues);
    assert_eq!(doc.text(), b"Let me look.\nDone.");
}

#[test]
fn step3_types_values_by_the_schema_and_keeps_markers_in_values() {
    let tools = Tools::from_json(
        br#"[{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {
            "n": {"type": "integer"}, "ok": {"type": "boolean"}, "l": {"type": "array"}, "s": {"type": "string"}}}}}]"#,
    )
    .unwrap();
    let text = format!(
        "{CALLS_BEGIN}{}{CALLS_END}",
        step3_call("f", &[("n", " 42 "), ("ok", "true"), ("l", "[1, \"a\"]"), ("s", "a <｜tool_call_end｜> </steptml:invoke> b")])
    );
    let options = Options { tools: Some(std::sync::Arc::new(tools)), start_in_thinking: StartThinking::No, ..Options::new(Dialect::Step3) };
    let doc = crate::parse::parse(text.as_bytes(), &options).into_owned();
    assert_eq!(calls(&doc), [("f".into(), json!({"n": 42, "ok": true, "l": [1, "a"], "s": "a <｜tool_call_end｜> </steptml:invoke> b"}))]);
    assert!(doc.issues.is_empty(), "{:?}", doc.issues);
}

#[test]
fn step3_reads_an_invoke_with_no_type_and_reports_other_types() {
    // The engines' tests write calls with no `function<｜tool_sep｜>` too.
    let bare = format!("{CALLS_BEGIN}<｜tool_call_begin｜><steptml:invoke name=\"f\"></steptml:invoke><｜tool_call_end｜>{CALLS_END}ok");
    let doc = same_every_way(&bare, Dialect::Step3);
    assert_eq!(calls(&doc), [("f".into(), json!({}))]);
    // Another type (or a call with no invoke) is malformed: reported with its raw text.
    let other = format!("{CALLS_BEGIN}<｜tool_call_begin｜>thought<｜tool_sep｜>hmm<｜tool_call_end｜>{}{CALLS_END}ok", step3_call("g", &[]));
    let doc = same_every_way(&other, Dialect::Step3);
    assert_eq!(calls(&doc), [("g".into(), json!({}))]);
    assert_eq!(doc.issues.len(), 1);
    assert_eq!(doc.issues[0].kind, IssueKind::InvalidXml);
    assert_eq!(doc.issues[0].raw, "<｜tool_call_begin｜>thought<｜tool_sep｜>hmm<｜tool_call_end｜>".as_bytes());
    assert_eq!(doc.text(), b"ok");
}

#[test]
fn step3_reasoning_ends_at_its_closer_or_at_the_calls() {
    let text = format!("<think>plan</think>Hi{CALLS_BEGIN}{}{CALLS_END}", step3_call("f", &[]));
    let doc = same_every_way(&text, Dialect::Step3);
    let thinking: Vec<&[u8]> =
        doc.blocks.iter().filter_map(|b| if let Block::Thinking(t) = b { Some(&t[..]) } else { None }).collect();
    assert_eq!(thinking, [b"plan".as_slice()]);
    assert_eq!(calls(&doc).len(), 1);
    // A call section written inside reasoning ends it (not strict).
    let inside = format!("<think>plan{CALLS_BEGIN}{}{CALLS_END}</think>ok", step3_call("f", &[]));
    let doc = same_every_way(&inside, Dialect::Step3);
    assert_eq!(calls(&doc).len(), 1);
    assert_eq!(doc.text(), b"ok");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn soups_stream_as_whole(picks in proptest::collection::vec((0..STEP3.len() + 1, any::<u8>()), 0..60), size in 1usize..8) {
        for dialect in NEW {
            let pieces = if dialect == Dialect::Step3 { STEP3 } else { COMMAND_R };
            let mut bytes = Vec::new();
            for &(k, b) in &picks {
                match pieces.get(k) {
                    Some(piece) => bytes.extend_from_slice(piece.as_bytes()),
                    None => bytes.push(b),
                }
            }
            let text = String::from_utf8_lossy(&bytes).into_owned();
            let doc = whole(&text, dialect);
            prop_assert_eq!(streamed(&text, dialect, size), doc.clone());
            for issue in &doc.issues {
                prop_assert_eq!(&text.as_bytes()[issue.span.0..issue.span.1], &issue.raw[..]);
            }
        }
    }
}

/// Inputs that would make a re-scanning parser quadratic.
pub(super) fn adversarial(dialect: Dialect, n: usize) -> String {
    match dialect {
        Dialect::CommandR => format!(
            "{}Action: ```json\n[{}{{\"tool_name\": \"f\", \"parameters\": {{\"s\": \"{}",
            "x\nAction: ``jso [\nActio ".repeat(n / 24),
            "{\"tool_name\": \"f\", \"parameters\": {}},".repeat(n / 40),
            "``` ] \\\"\nAction:".repeat(n / 20)
        ),
        _ => format!(
            "{}{CALLS_BEGIN}{}<｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name=\"f\"><steptml:parameter name=\"s\">{}",
            "<｜tool_calls_begi <".repeat(n / 24),
            "<｜tool_call_begin｜>functio<｜tool_call_end｜>".repeat(n / 64),
            "</steptml:paramete <".repeat(n / 20)
        ),
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

#[test]
fn command_r_reads_action_lists_at_a_line_start_only() {
    // As the Command R+ template writes calls back into the history.
    let text = "I will look it up.\nAction:\n```json\n[\n    {\n        \"tool_name\": \"get_weather\",\n        \"parameters\": {\"city\": \"Paris\"}\n    },\n    {\n        \"tool_name\": \"directly-answer\",\n        \"parameters\": {}\n    }\n]```\nDone.";
    let doc = same_every_way(text, Dialect::CommandR);
    assert_eq!(calls(&doc), [("get_weather".into(), json!({"city": "Paris"})), ("directly-answer".into(), json!({}))]);
    assert!(doc.issues.is_empty(), "{:?}", doc.issues);
    assert_eq!(doc.text(), b"I will look it up.\nDone.");
    // At the reply's start, unfenced.
    let doc = same_every_way("Action: [{\"tool_name\": \"f\", \"parameters\": {}}]", Dialect::CommandR);
    assert_eq!(calls(&doc), [("f".into(), json!({}))]);
    // Mid-line, or followed by prose: text, all of it.
    for prose in ["The Action: [{\"tool_name\": \"f\", \"parameters\": {}}]", "Action: none needed.\nAction:\n```python\nx```"] {
        let doc = same_every_way(prose, Dialect::CommandR);
        assert!(calls(&doc).is_empty() && doc.issues.is_empty(), "{prose}");
        assert_eq!(doc.text(), prose.as_bytes());
    }
}
