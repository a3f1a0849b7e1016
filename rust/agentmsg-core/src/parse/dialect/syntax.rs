//! The markers and payload form of a marker dialect (read by the tagged machine), built in for
//! the listed ones or from a custom dialect's parts.

use super::element_call::ElementForm;
use super::json_call::JsonShape;
use super::named::{CustomDialect, Dialect, DialectError, MAX_MARKER_BYTES};

const TOOL_CALL_OPEN: &[u8] = b"<tool_call>";
const TOOL_CALL_CLOSE: &[u8] = b"</tool_call>";
const THINK: (&[u8], &[u8]) = (b"<think>", b"</think>");
const KIMI_THINK: (&[u8], &[u8]) = ("◁think▷".as_bytes(), "◁/think▷".as_bytes());

/// How a call's name and arguments are written between its markers.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Form {
    /// A JSON object holding the name and the arguments (hermes).
    Json(JsonShape),
    /// `<function=NAME>`, `<invoke name="NAME">`, a DSML invoke or `NAME` followed by elements
    /// (qwen3_coder, seed_oss, step3p5, minimax_m2, deepseek_v32, deepseek_v4, glm45, hy3, step3).
    Element(ElementForm),
    /// A header up to `sep`, then the arguments as JSON (the special-token dialects).
    Header { sep: &'static [u8], kind: HeaderKind },
    /// `call:NAME{key:value,…}` with strings between two `delimiter`s (gemma4, functiongemma).
    Gemma { delimiter: &'static [u8] },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum HeaderKind {
    /// `NAME<sep>{…}` (deepseek_v31).
    Name,
    /// `TYPE<sep>NAME`, a line break, then the JSON, optionally in a ```json fence (deepseek_v3).
    TypedName,
    /// `functions.NAME:IDX<sep>{…}`: the header is also the call's id (kimi_k2).
    FunctionsId,
}

/// The markers and payload form of a marker dialect.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Syntax {
    /// Open and close of the section the calls are in (special-token dialects).
    pub(crate) section: Option<(&'static [u8], &'static [u8])>,
    pub(crate) call_open: Vec<u8>,
    pub(crate) call_close: Vec<u8>,
    pub(crate) form: Form,
    /// Looked for in text: the section or call opener, then each reasoning opener and closer.
    pub(crate) text_markers: Vec<Vec<u8>>,
    pub(crate) think_opens: usize,
    pub(crate) think_closes: Vec<Vec<u8>>,
    /// A stop token dropped where it stands in text (the last of `text_markers`).
    pub(crate) dropped: Option<&'static [u8]>,
}

impl Syntax {
    /// The syntax of a built-in marker dialect (None for Harmony).
    pub(crate) fn of(dialect: Dialect) -> Option<Self> {
        const DEEPSEEK_SECTION: (&[u8], &[u8]) =
            ("<｜tool▁calls▁begin｜>".as_bytes(), "<｜tool▁calls▁end｜>".as_bytes());
        const DEEPSEEK_CALL: (&[u8], &[u8]) = ("<｜tool▁call▁begin｜>".as_bytes(), "<｜tool▁call▁end｜>".as_bytes());
        const DEEPSEEK_SEP: &[u8] = "<｜tool▁sep｜>".as_bytes();
        const DSML_INVOKE: (&[u8], &[u8]) = ("<｜DSML｜invoke".as_bytes(), "</｜DSML｜invoke>".as_bytes());
        let tool_call = (TOOL_CALL_OPEN, TOOL_CALL_CLOSE);
        let mut dropped = None;
        let (section, call, form, think): (_, _, _, &[(&[u8], &[u8])]) = match dialect {
            Dialect::Hermes => (None, tool_call, Form::Json(fields("name", "arguments")), &[THINK]),
            Dialect::Qwen3Coder => (None, tool_call, Form::Element(ElementForm::Qwen3Coder), &[THINK]),
            Dialect::Glm45 => (None, tool_call, Form::Element(ElementForm::Glm45), &[THINK]),
            Dialect::DeepseekV3 => (
                Some(DEEPSEEK_SECTION),
                DEEPSEEK_CALL,
                Form::Header { sep: DEEPSEEK_SEP, kind: HeaderKind::TypedName },
                &[THINK],
            ),
            Dialect::DeepseekV31 => (
                Some(DEEPSEEK_SECTION),
                DEEPSEEK_CALL,
                Form::Header { sep: DEEPSEEK_SEP, kind: HeaderKind::Name },
                &[THINK],
            ),
            Dialect::KimiK2 => (
                Some((b"<|tool_calls_section_begin|>", b"<|tool_calls_section_end|>")),
                (b"<|tool_call_begin|>", b"<|tool_call_end|>"),
                Form::Header { sep: b"<|tool_call_argument_begin|>", kind: HeaderKind::FunctionsId },
                &[KIMI_THINK, THINK],
            ),
            Dialect::DeepseekV32 => (
                Some(("<｜DSML｜function_calls>".as_bytes(), "</｜DSML｜function_calls>".as_bytes())),
                DSML_INVOKE,
                Form::Element(ElementForm::Dsml),
                &[THINK],
            ),
            Dialect::DeepseekV4 => (
                Some(("<｜DSML｜tool_calls>".as_bytes(), "</｜DSML｜tool_calls>".as_bytes())),
                DSML_INVOKE,
                Form::Element(ElementForm::Dsml),
                &[THINK],
            ),
            Dialect::Gemma4 => {
                dropped = Some(b"<|tool_response>".as_slice());
                let delimiter = b"<|\"|>".as_slice();
                (None, (b"<|tool_call>".as_slice(), b"<tool_call|>".as_slice()), Form::Gemma { delimiter }, &[(b"<|channel>thought".as_slice(), b"<channel|>".as_slice())])
            }
            Dialect::FunctionGemma => {
                dropped = Some(b"<start_function_response>".as_slice());
                let delimiter = b"<escape>".as_slice();
                (None, (b"<start_function_call>".as_slice(), b"<end_function_call>".as_slice()), Form::Gemma { delimiter }, &[])
            }
            Dialect::Step3p5 => (None, tool_call, Form::Element(ElementForm::Qwen3Coder), &[THINK]),
            Dialect::SeedOss => (
                None,
                (b"<seed:tool_call>", b"</seed:tool_call>"),
                Form::Element(ElementForm::Qwen3Coder),
                &[(b"<seed:think>", b"</seed:think>")],
            ),
            Dialect::MinimaxM2 => (
                Some((b"<minimax:tool_call>", b"</minimax:tool_call>")),
                (b"<invoke name=", b"</invoke>"),
                Form::Element(ElementForm::Invoke),
                &[THINK],
            ),
            Dialect::Longcat => (
                None,
                (b"<longcat_tool_call>", b"</longcat_tool_call>"),
                Form::Json(fields("name", "arguments")),
                &[(b"<longcat_think>", b"</longcat_think>")],
            ),
            Dialect::Hy3 => (
                Some((b"<tool_calls:opensource>", b"</tool_calls:opensource>")),
                (b"<tool_call:opensource>", b"</tool_call:opensource>"),
                Form::Element(ElementForm::Hy3),
                &[(b"<think:opensource>", b"</think:opensource>")],
            ),
            Dialect::Step3 => (
                Some(("<｜tool_calls_begin｜>".as_bytes(), "<｜tool_calls_end｜>".as_bytes())),
                ("<｜tool_call_begin｜>".as_bytes(), "<｜tool_call_end｜>".as_bytes()),
                Form::Element(ElementForm::Steptml),
                &[THINK],
            ),
            Dialect::Forge
            | Dialect::GptOss
            | Dialect::Mistral
            | Dialect::Magistral
            | Dialect::Llama3Json
            | Dialect::Pythonic
            | Dialect::Cohere
            | Dialect::Lfm2
            | Dialect::Granite
            | Dialect::Phi4Mini
            | Dialect::Xlam
            | Dialect::Hunyuan
            | Dialect::Apertus
            | Dialect::Jamba
            | Dialect::Internlm2
            | Dialect::KimiK3
            | Dialect::CommandR
            | Dialect::Custom => {
                return None
            }
        };
        let mut syntax = Self::new(section, call.0.to_vec(), call.1.to_vec(), form, think);
        if let Some(token) = dropped {
            syntax.text_markers.push(token.to_vec());
            syntax.dropped = Some(token);
        }
        Some(syntax)
    }

    /// A dialect from parts (see [`CustomDialect`]); the error says which part is wrong.
    pub(crate) fn custom(parts: &CustomDialect) -> Result<Self, DialectError> {
        let CustomDialect { call_start, call_end, payload, name_key, arguments_key, think } = parts;
        let form = match payload.as_str() {
            "json" => {
                if name_key.is_empty() || arguments_key.is_empty() {
                    return Err(DialectError::EmptyKey);
                }
                if name_key == arguments_key {
                    return Err(DialectError::SameKeys { key: name_key.clone() });
                }
                Form::Json(fields(name_key, arguments_key))
            }
            "qwen3_coder" | "glm45" => {
                if name_key != "name" || arguments_key != "arguments" {
                    return Err(DialectError::KeysWithoutJson { payload: payload.clone() });
                }
                let form = if payload == "glm45" { ElementForm::Glm45 } else { ElementForm::Qwen3Coder };
                Form::Element(form)
            }
            other => return Err(DialectError::UnknownPayload { payload: other.to_owned() }),
        };
        let mut markers = vec![("call_start", call_start.as_str()), ("call_end", call_end.as_str())];
        if let Some((start, end)) = think {
            markers.extend([("think_start", start.as_str()), ("think_end", end.as_str())]);
        }
        for (i, (role, marker)) in markers.iter().enumerate() {
            if marker.is_empty() {
                return Err(DialectError::EmptyMarker { part: role });
            }
            if let Some((other, _)) = markers[..i].iter().find(|(_, m)| m == marker) {
                return Err(DialectError::SameMarkers { first: other, second: role, marker: (*marker).to_owned() });
            }
        }
        if let Some((role, _)) = markers.iter().find(|(_, marker)| marker.len() > MAX_MARKER_BYTES) {
            return Err(DialectError::LongMarker { part: role });
        }
        for (short, short_marker) in &markers {
            if let Some((long, long_marker)) = markers.iter().find(|(_, m)| m.len() > short_marker.len() && m.starts_with(short_marker)) {
                let (short_marker, long_marker) = ((*short_marker).to_owned(), (*long_marker).to_owned());
                return Err(DialectError::PrefixMarkers { short, long, short_marker, long_marker });
            }
        }
        let think: Vec<(&[u8], &[u8])> = think.iter().map(|(s, e)| (s.as_bytes(), e.as_bytes())).collect();
        Ok(Self::new(None, call_start.as_bytes().to_vec(), call_end.as_bytes().to_vec(), form, &think))
    }

    fn new(
        section: Option<(&'static [u8], &'static [u8])>,
        call_open: Vec<u8>,
        call_close: Vec<u8>,
        form: Form,
        think: &[(&[u8], &[u8])],
    ) -> Self {
        let opener = match section {
            Some((open, _)) => open.to_vec(),
            None => call_open.clone(),
        };
        let mut text_markers = vec![opener];
        text_markers.extend(think.iter().map(|(open, _)| open.to_vec()));
        let think_closes: Vec<Vec<u8>> = think.iter().map(|(_, close)| close.to_vec()).collect();
        text_markers.extend(think_closes.iter().cloned());
        Self { section, call_open, call_close, form, text_markers, think_opens: think.len(), think_closes, dropped: None }
    }
}

fn fields(name_key: &str, arguments_key: &str) -> JsonShape {
    JsonShape::Fields { name_key: name_key.into(), arguments_key: arguments_key.into() }
}

