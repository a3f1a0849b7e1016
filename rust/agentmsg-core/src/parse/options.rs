//! The options of the one parser: which dialect (Forge's among them), where the reply starts,
//! the tool definitions, and the options only Forge's dialect has.

use std::fmt;
use std::sync::Arc;

use super::dialect::syntax::{quoted, Syntax};
use super::schema::Tools;

/// Which thinking notations are recognized (Forge).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThinkingMode {
    /// Tags and bracket lines.
    Auto,
    /// Only `<think>` and `<thinking>` tags.
    Tags,
    /// Only `[bracket]` lines.
    Brackets,
    /// No thinking: tags and brackets are text.
    None,
}

impl ThinkingMode {
    /// Every mode with its name.
    pub const ALL: [(&'static str, ThinkingMode); 4] =
        [("auto", Self::Auto), ("tags", Self::Tags), ("brackets", Self::Brackets), ("none", Self::None)];

    /// The mode named `name` (`"auto"`, `"tags"`, `"brackets"`, `"none"`).
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.iter().find(|(n, _)| *n == name).map(|(_, mode)| *mode)
    }

    pub(crate) fn tags(self) -> bool {
        matches!(self, Self::Auto | Self::Tags)
    }

    pub(crate) fn brackets(self) -> bool {
        matches!(self, Self::Auto | Self::Brackets)
    }
}

/// Which tool-call payloads are accepted (Forge).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ToolFormat {
    /// JSON when the payload starts with anything but `<`, else XML elements.
    Auto,
    /// Only JSON payloads; an XML payload is an error record.
    Json,
    /// Only XML-element payloads; a JSON payload is an error record.
    Xml,
}

impl ToolFormat {
    /// Every format with its name.
    pub const ALL: [(&'static str, ToolFormat); 3] = [("auto", Self::Auto), ("json", Self::Json), ("xml", Self::Xml)];

    /// The format named `name` (`"auto"`, `"json"`, `"xml"`).
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.iter().find(|(n, _)| *n == name).map(|(_, format)| *format)
    }
}

/// Whether the text starts inside a thinking block whose opening tag the prompt already wrote.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StartThinking {
    No,
    Yes,
    /// Whole-text only: yes when the first thinking tag in the text is a closing tag.
    /// A [`StreamMachine`](super::StreamMachine) cannot look ahead and treats this as `No`.
    Detect,
}

/// A model family's notation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    /// Forge's `<tool>` calls, `<think>` tags and `[bracket]` lines (the default).
    Forge,
    Hermes,
    Qwen3Coder,
    GptOss,
    Mistral,
    Llama3Json,
    Pythonic,
    DeepseekV3,
    DeepseekV31,
    KimiK2,
    Glm45,
    /// A dialect from parts: [`Options::custom`].
    Custom,
}

impl Dialect {
    /// Every named dialect with its name, in the order they are documented (Forge's first).
    pub const ALL: [(&'static str, Dialect); 11] = [
        ("forge", Self::Forge),
        ("hermes", Self::Hermes),
        ("qwen3_coder", Self::Qwen3Coder),
        ("gpt_oss", Self::GptOss),
        ("mistral", Self::Mistral),
        ("llama3_json", Self::Llama3Json),
        ("pythonic", Self::Pythonic),
        ("deepseek_v3", Self::DeepseekV3),
        ("deepseek_v31", Self::DeepseekV31),
        ("kimi_k2", Self::KimiK2),
        ("glm45", Self::Glm45),
    ];

    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.iter().find(|(n, _)| *n == name).map(|(_, d)| *d)
    }

    /// The dialect's name (`""` for a custom one: its name is its parts' owner's).
    pub fn name(self) -> &'static str {
        Self::ALL.iter().find(|(_, d)| *d == self).map(|(n, _)| *n).unwrap_or_default()
    }
}

/// The options only Forge's dialect has; another dialect with any of them changed from the
/// default is refused by the binding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ForgeOptions {
    pub thinking: ThinkingMode,
    pub tool_format: ToolFormat,
    /// Whether code fences are tracked (tags and bracket lines inside them are text).
    pub code_fences: bool,
    /// At most this many tool calls (good or bad) are parsed; from the next `<tool>` on, the
    /// rest of the text is one [`IssueKind::TooManyCalls`](super::IssueKind::TooManyCalls) issue
    /// holding it raw. `None`: no limit.
    pub max_calls: Option<usize>,
}

impl Default for ForgeOptions {
    fn default() -> Self {
        Self { thinking: ThinkingMode::Auto, tool_format: ToolFormat::Auto, code_fences: true, max_calls: None }
    }
}

/// Parser options; the default is what `agentmsg.parse` uses (Forge's dialect).
#[derive(Clone, Debug, PartialEq)]
pub struct Options {
    pub dialect: Dialect,
    /// Whether the reply starts inside reasoning whose opening tag the prompt wrote.
    pub start_in_thinking: StartThinking,
    /// Tool definitions: values written as text (Forge's XML payloads, element dialects) are
    /// typed by them, and a call to a tool not among them is flagged (`unknown_tool`). `None`:
    /// values stay text, nothing is flagged.
    pub tools: Option<Arc<Tools>>,
    /// Read by Forge's dialect only.
    pub forge: ForgeOptions,
    /// The markers and payload of a custom dialect.
    pub(crate) syntax: Option<Arc<Syntax>>,
}

impl Default for Options {
    fn default() -> Self {
        Self::new(Dialect::Forge)
    }
}

impl Options {
    /// The options of a listed dialect (`Dialect::Custom` without parts reads as hermes).
    pub fn new(dialect: Dialect) -> Self {
        Self {
            dialect,
            start_in_thinking: StartThinking::Detect,
            tools: None,
            forge: ForgeOptions::default(),
            syntax: None,
        }
    }

    /// The options of a dialect from parts; the error says which part is wrong.
    ///
    /// ```
    /// use agentmsg_core::parse::{parse, CustomDialect, DialectError, Options};
    /// let parts = CustomDialect { call_start: "<call>".into(), call_end: "</call>".into(), ..CustomDialect::default() };
    /// let doc = parse(br#"Hi<call>{"name": "f", "arguments": {}}</call>"#, &Options::custom(&parts).unwrap());
    /// assert_eq!(doc.text(), b"Hi");
    /// let bad = CustomDialect { call_end: "<call>".into(), ..parts };
    /// let error = Options::custom(&bad).unwrap_err();
    /// assert!(matches!(error, DialectError::SameMarkers { .. }));
    /// assert_eq!(error.to_string(), "call_start and call_end must differ (both are '<call>')");
    /// ```
    pub fn custom(parts: &CustomDialect) -> Result<Self, DialectError> {
        let syntax = Syntax::custom(parts)?;
        Ok(Self { syntax: Some(Arc::new(syntax)), ..Self::new(Dialect::Custom) })
    }
}

/// The parts of a dialect for models that are not listed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CustomDialect {
    pub call_start: String,
    pub call_end: String,
    /// `json` (an object with the name and the arguments under `name_key` and `arguments_key`),
    /// `qwen3_coder` or `glm45` (those dialects' element forms).
    pub payload: String,
    pub name_key: String,
    pub arguments_key: String,
    /// Reasoning markers, if the model writes reasoning.
    pub think: Option<(String, String)>,
}

impl Default for CustomDialect {
    /// Hermes' parts: `<tool_call>{"name", "arguments"}</tool_call>` with `<think>` reasoning.
    fn default() -> Self {
        Self {
            call_start: "<tool_call>".into(),
            call_end: "</tool_call>".into(),
            payload: "json".into(),
            name_key: "name".into(),
            arguments_key: "arguments".into(),
            think: Some(("<think>".into(), "</think>".into())),
        }
    }
}

/// Why the parts of a custom dialect were refused; its text names the part.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DialectError {
    /// `name_key` or `arguments_key` is empty (payload `json`).
    EmptyKey,
    /// `name_key` and `arguments_key` are the same `key`.
    SameKeys { key: String },
    /// Keys other than the defaults given for an element `payload`.
    KeysWithoutJson { payload: String },
    /// A `payload` that is not `json`, `qwen3_coder` or `glm45`.
    UnknownPayload { payload: String },
    /// The marker `part` (`call_start`, `call_end`, `think_start`, `think_end`) is empty.
    EmptyMarker { part: &'static str },
    /// Two markers are the same `marker`.
    SameMarkers { first: &'static str, second: &'static str, marker: String },
}

impl fmt::Display for DialectError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::EmptyKey => write!(f, "name_key and arguments_key must not be empty"),
            Self::SameKeys { key } => write!(f, "name_key and arguments_key must differ (both are {})", quoted(key)),
            Self::KeysWithoutJson { payload } => {
                write!(f, "name_key and arguments_key apply to payload 'json' only, not {}", quoted(payload))
            }
            Self::UnknownPayload { payload } => {
                write!(f, "unknown payload {}; valid: json, qwen3_coder, glm45", quoted(payload))
            }
            Self::EmptyMarker { part } => write!(f, "{part} must not be empty"),
            Self::SameMarkers { first, second, marker } => {
                write!(f, "{first} and {second} must differ (both are {})", quoted(marker))
            }
        }
    }
}

impl std::error::Error for DialectError {}
