//! The options of the one parser: which dialect (Forge's among them, see [`Dialect`]), where the
//! reply starts, the tool definitions, and the options only Forge's dialect has.

use std::sync::Arc;

use super::dialect::named::{CustomDialect, Dialect, DialectError};
use super::dialect::syntax::Syntax;
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
    /// Only calls written as the chat template writes them (docs/dialects.md, "Strict reading"):
    /// a call opener inside unclosed reasoning is reasoning, qwen3_coder's `<function=` without
    /// `<tool_call>` and mistral's repeated `[TOOL_CALLS]` are text. Default: read them as calls.
    pub strict: bool,
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
            strict: false,
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
