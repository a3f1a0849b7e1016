//! The dialects by name, and the parts of a dialect for models that are not listed.

use std::fmt;

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
    DeepseekV32,
    DeepseekV4,
    Gemma4,
    FunctionGemma,
    Step3p5,
    Cohere,
    SeedOss,
    MinimaxM2,
    Magistral,
    Granite,
    Lfm2,
    Phi4Mini,
    Xlam,
    Hunyuan,
    Apertus,
    Jamba,
    Internlm2,
    Longcat,
    Hy3,
    KimiK3,
    Step3,
    CommandR,
    /// A dialect from parts (`Options::custom`).
    Custom,
}

impl Dialect {
    /// Every named dialect with its name, in the order they are documented (Forge's first).
    pub const ALL: [(&'static str, Dialect); 33] = [
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
        ("deepseek_v32", Self::DeepseekV32),
        ("deepseek_v4", Self::DeepseekV4),
        ("gemma4", Self::Gemma4),
        ("functiongemma", Self::FunctionGemma),
        ("step3p5", Self::Step3p5),
        ("cohere", Self::Cohere),
        ("seed_oss", Self::SeedOss),
        ("minimax_m2", Self::MinimaxM2),
        ("magistral", Self::Magistral),
        ("granite", Self::Granite),
        ("lfm2", Self::Lfm2),
        ("phi4_mini", Self::Phi4Mini),
        ("xlam", Self::Xlam),
        ("hunyuan", Self::Hunyuan),
        ("apertus", Self::Apertus),
        ("jamba", Self::Jamba),
        ("internlm2", Self::Internlm2),
        ("longcat", Self::Longcat),
        ("hy3", Self::Hy3),
        ("kimi_k3", Self::KimiK3),
        ("step3", Self::Step3),
        ("command_r", Self::CommandR),
    ];

    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.iter().find(|(n, _)| *n == name).map(|(_, d)| *d)
    }

    /// The dialect's name (`""` for a custom one: its name is its parts' owner's).
    pub fn name(self) -> &'static str {
        Self::ALL.iter().find(|(_, d)| *d == self).map(|(n, _)| *n).unwrap_or_default()
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
    /// Marker `short` is a prefix of marker `long`: where both are looked for, which one a
    /// text holds would depend on where a stream is cut.
    PrefixMarkers { short: &'static str, long: &'static str, short_marker: String, long_marker: String },
    /// The marker `part` is longer than [`MAX_MARKER_BYTES`] bytes.
    LongMarker { part: &'static str },
}

/// The longest marker of a custom dialect, in bytes: finding a marker compares up to its length
/// at each occurrence of its first byte, so this bounds the work per input byte.
pub const MAX_MARKER_BYTES: usize = 64;

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
            Self::PrefixMarkers { short, long, short_marker, long_marker } => write!(
                f,
                "{short} {} is a prefix of {long} {}: no marker may begin another",
                quoted(short_marker),
                quoted(long_marker)
            ),
            Self::LongMarker { part } => write!(f, "{part} must be at most {MAX_MARKER_BYTES} bytes long"),
        }
    }
}

impl std::error::Error for DialectError {}

/// A part quoted for an error message, cut to its first 40 characters: a message stays short
/// whatever the part holds.
pub fn quoted(part: &str) -> String {
    const EXCERPT: usize = 40;
    match part.char_indices().nth(EXCERPT) {
        Some((cut, _)) => format!("'{}'... ({} characters)", &part[..cut], part.chars().count()),
        None => format!("'{part}'"),
    }
}

