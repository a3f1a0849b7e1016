//! kimi_k3 (XTML): the template's own renders read back, the value types, malformed calls kept
//! with their raw text, marker soups and arbitrary bytes streamed as whole, linear time.

use std::sync::Arc;

use proptest::prelude::*;

use super::tests::{streamed, whole};
use super::Dialect;
use crate::parse::schema::Tools;
use crate::parse::{parse, Block, Document, IssueKind, Options, StartThinking, StreamMachine};
use crate::parse::tests::assert_linear;

const K3: Dialect = Dialect::KimiK3;

pub(super) const XTML: &[&str] = &[
    "<|open|>", "<|close|>", "<|sep|>", "<|end_of_msg|>", "think", "response", "tools", "message", "call",
    " tool=\"f\"", " index=\"1\"", "argument", " key=\"a\"", " type=\"string\"", " type=\"number\"", "json",
    " type=\"object\"", "<|open|>think<|sep|>", "<|close|>think<|sep|>", "<|open|>tools<|sep|>",
    "<|open|>call tool=\"f\"<|sep|>", "<|close|>call<|sep|>", "<|open|>argument key=\"a\" type=\"number\"<|sep|>",
    "<|close|>argument<|sep|>", "<|open|>json type=\"object\"<|sep|>", "<|close|>json<|sep|>", "{\"a\": 1}", "&quot;",
    "<|", "<", "1", "\"", " ", "\n", "é",
];

/// What the template writes for an assistant message with reasoning, content and two calls,
/// after its generation prompt (`…<|open|>message role="assistant"<|sep|><|open|>think<|sep|>`).
const RENDERED: &str = concat!(
    "plan<|close|>think<|sep|><|open|>response<|sep|>Let me check.<|close|>response<|sep|>",
    "<|open|>tools<|sep|><|open|>call tool=\"get_weather\" index=\"1\"<|sep|>",
    "<|open|>argument key=\"city\" type=\"string\"<|sep|>Pa\"r&is<|close|>argument<|sep|>",
    "<|open|>argument key=\"n\" type=\"number\"<|sep|>5<|close|>argument<|sep|>",
    "<|open|>argument key=\"o\" type=\"object\"<|sep|>{\"a\": [1, null]}<|close|>argument<|sep|>",
    "<|open|>argument key=\"b\" type=\"boolean\"<|sep|>true<|close|>argument<|sep|>",
    "<|open|>argument key=\"z\" type=\"null\"<|sep|>null<|close|>argument<|sep|><|close|>call<|sep|>",
    "<|open|>call tool=\"a&amp;&quot;b\" index=\"2\"<|sep|><|close|>call<|sep|><|close|>tools<|sep|>",
    "<|close|>message<|sep|><|end_of_msg|>",
);

fn calls(doc: &Document) -> Vec<(String, String)> {
    doc.blocks
        .iter()
        .filter_map(|b| match b {
            Block::ToolCall(c) => Some((c.name.clone(), serde_json::to_string(&crate::parse::call::tests::to_serde(&jiter::JsonValue::Object(c.input.clone()))).unwrap())),
            _ => None,
        })
        .collect()
}

fn thinking(doc: &Document) -> Vec<String> {
    doc.blocks.iter().filter_map(|b| if let Block::Thinking(t) = b { Some(String::from_utf8_lossy(t).into_owned()) } else { None }).collect()
}

fn options(start_in_thinking: bool) -> Options {
    let start_in_thinking = if start_in_thinking { StartThinking::Yes } else { StartThinking::No };
    Options { start_in_thinking, ..Options::new(K3) }
}

/// `text` in `size`-byte pieces (any cut, even inside a character) and whole, with `options`.
fn both_ways(text: &[u8], options: &Options, size: usize) -> (Document<'static>, Document<'static>) {
    let mut machine = StreamMachine::new(options.clone());
    let mut events = Vec::new();
    for piece in text.chunks(size) {
        machine.feed_into(piece, &mut events);
    }
    events.extend(machine.finish());
    (Document::from_events(events), parse(text, options).into_owned())
}

fn read(text: &str, options: &Options) -> Document<'static> {
    let (_, doc) = both_ways(text.as_bytes(), options, text.len());
    for size in 1..5 {
        let (streamed, whole) = both_ways(text.as_bytes(), options, size);
        assert_eq!(streamed, whole, "{text} in {size}-byte pieces");
    }
    doc
}

#[test]
fn the_templates_render_reads_back() {
    let doc = read(RENDERED, &options(true));
    assert_eq!(thinking(&doc), ["plan"]);
    assert_eq!(doc.text(), b"Let me check.");
    assert_eq!(
        calls(&doc),
        [
            ("get_weather".to_string(), r#"{"city":"Pa\"r&is","n":5,"o":{"a":[1,null]},"b":true,"z":null}"#.to_string()),
            ("a&\"b".to_string(), "{}".to_string()),
        ]
    );
    assert!(doc.issues.is_empty());
    // Whole, with the reasoning's start found from its stray closer.
    let detect = Options { start_in_thinking: StartThinking::Detect, ..Options::new(K3) };
    assert_eq!(parse(RENDERED.as_bytes(), &detect).into_owned(), doc);
}

#[test]
fn a_json_element_holds_the_arguments() {
    let text = "<|open|>tools<|sep|><|open|>call tool=\"f\"<|sep|>\n<|open|>json type=\"object\"<|sep|> {\"a\": [1, {\"b\": \"<|close|>call<|sep|>\"}]} <|close|>json<|sep|>\n<|close|>call<|sep|><|close|>tools<|sep|> after";
    let doc = read(text, &options(false));
    assert_eq!(calls(&doc), [("f".to_string(), r#"{"a":[1,{"b":"<|close|>call<|sep|>"}]}"#.to_string())]);
    assert_eq!(doc.text(), b"after");
}

#[test]
fn string_values_are_typed_by_the_schema_and_bad_json_is_kept_as_text() {
    let tools = Tools::from_json(br#"[{"name": "f", "parameters": {"properties": {"n": {"type": "integer"}}}}]"#).unwrap();
    let options = Options { tools: Some(Arc::new(tools)), ..options(false) };
    let text = "<|open|>tools<|sep|><|open|>call tool=\"f\"<|sep|><|open|>argument key=\"n\" type=\"string\"<|sep|>5<|close|>argument<|sep|><|open|>argument key=\"o\" type=\"object\"<|sep|>{oops<|close|>argument<|sep|><|close|>call<|sep|>";
    let doc = read(text, &options);
    assert_eq!(calls(&doc), [("f".to_string(), r#"{"n":5,"o":"{oops"}"#.to_string())]);
    let Block::ToolCall(call) = &doc.blocks[0] else { panic!("{doc:?}") };
    assert!(call.metadata.iter().any(|(k, _)| k == "schema_errors"), "{:?}", call.metadata);
}

#[test]
fn malformed_and_cut_off_calls_keep_their_raw_text() {
    let cases = [
        ("<|open|>tools<|sep|><|open|>call tool=\"f\"<|sep|>junk<|close|>call<|sep|> after", IssueKind::InvalidXml),
        ("<|open|>tools<|sep|><|open|>call index=\"1\"<|sep|><|close|>call<|sep|> after", IssueKind::MissingField),
        ("<|open|>tools<|sep|><|open|>call tool=\"f\"<|sep|><|open|>json<|sep|>[1]<|close|>json<|sep|><|close|>call<|sep|> after", IssueKind::InvalidXml),
        ("after<|open|>tools<|sep|><|open|>call tool=\"f\"<|sep|><|open|>argument key=\"a\"<|sep|>1", IssueKind::UnclosedTool),
    ];
    for (text, kind) in cases {
        let doc = read(text, &options(false));
        assert!(calls(&doc).is_empty(), "{text}");
        assert_eq!(doc.text(), b"after", "{text}");
        assert_eq!(doc.issues.len(), 1, "{text}");
        let issue = &doc.issues[0];
        assert_eq!(issue.kind, kind, "{text}");
        assert_eq!(&text.as_bytes()[issue.span.0..issue.span.1], &issue.raw[..]);
        assert!(issue.raw.starts_with(b"<|open|>call"));
    }
}

#[test]
fn text_outside_response_and_unknown_tags_are_text() {
    let doc = read("Hi <|open|>foo<|sep|>x<|close|>think<|sep|> <|open|>response<|sep|>there", &options(false));
    assert_eq!(doc.text(), b"Hi <|open|>foo<|sep|>x<|close|>think<|sep|>\nthere");
    // A tag longer than MAX_TAG is text.
    let long = format!("<|open|>think {}<|sep|>ok", "x".repeat(super::xtml::MAX_TAG));
    assert_eq!(read(&long, &options(false)).text(), long.as_bytes());
}

#[test]
fn reasoning_ends_at_its_closer_or_unless_strict_at_the_tools() {
    let text = "<|open|>think<|sep|>plan<|open|>tools<|sep|><|open|>call tool=\"f\"<|sep|><|close|>call<|sep|>";
    let doc = read(text, &options(false));
    assert_eq!(thinking(&doc), ["plan"]);
    assert_eq!(calls(&doc).len(), 1);
    let strict = read(text, &Options { strict: true, ..options(false) });
    assert!(calls(&strict).is_empty());
    assert!(strict.incomplete_thinking);
}

#[test]
fn calls_past_max_calls_are_one_issue() {
    let one = "<|open|>call tool=\"f\"<|sep|><|close|>call<|sep|>";
    let text = format!("<|open|>tools<|sep|>{one}{one}{one}<|close|>tools<|sep|>");
    let mut options = options(false);
    options.forge.max_calls = Some(2);
    let doc = read(&text, &options);
    assert_eq!(calls(&doc).len(), 2);
    assert_eq!(doc.issues.len(), 1);
    assert_eq!(doc.issues[0].kind, IssueKind::TooManyCalls);
    assert_eq!(doc.issues[0].raw, format!("{one}<|close|>tools<|sep|>").as_bytes());
}

/// Text made of `pieces` and arbitrary bytes.
fn soup() -> impl Strategy<Value = String> {
    proptest::collection::vec((0..XTML.len() + 1, any::<u8>()), 0..60).prop_map(move |picks| {
        let mut bytes = Vec::new();
        for (k, b) in picks {
            match XTML.get(k) {
                Some(piece) => bytes.extend_from_slice(piece.as_bytes()),
                None => bytes.push(b),
            }
        }
        String::from_utf8_lossy(&bytes).into_owned()
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn xtml_soup_streams_as_whole(text in soup(), size in 1usize..8, start in any::<bool>(), strict in any::<bool>()) {
        let options = Options { strict, ..options(start) };
        let (streamed, whole) = both_ways(text.as_bytes(), &options, size);
        prop_assert_eq!(&streamed, &whole);
        for issue in &whole.issues {
            prop_assert_eq!(&text.as_bytes()[issue.span.0..issue.span.1], &issue.raw[..]);
        }
    }

    #[test]
    fn arbitrary_bytes_never_panic_and_stream_as_whole(
        bytes in proptest::collection::vec(prop_oneof![
            Just(b'<'), Just(b'>'), Just(b'|'), Just(b'{'), Just(b'}'), Just(b'"'), Just(b'&'),
            Just(b'\n'), any::<u8>()], 0..200),
        size in 1usize..8,
    ) {
        let text = String::from_utf8_lossy(&bytes).into_owned();
        prop_assert_eq!(streamed(&text, K3, size), whole(&text, K3));
    }
}

/// Inputs that would make a re-scanning parser quadratic.
pub(super) fn adversarial(n: usize) -> String {
    format!(
        "{}<|open|>tools<|sep|><|open|>call tool=\"f\"<|sep|><|open|>argument key=\"s\" type=\"string\"<|sep|>{}",
        "<|open|>thin <|clos <|open|>tool".repeat(n / 32),
        "<|close|>argumen <|".repeat(n / 20)
    )
}

#[test]
fn time_is_linear_fed_a_token_at_a_time() {
    let (small, large) = (adversarial(1 << 17), adversarial(1 << 20));
    // 8x the input: a linear parser takes about 8x the time, a quadratic one 64x.
    assert_linear("kimi_k3", small.as_bytes(), large.as_bytes(), 20.0, &|text| {
        let text = std::str::from_utf8(text).unwrap();
        streamed(text, K3, 4);
        whole(text, K3);
    });
}
