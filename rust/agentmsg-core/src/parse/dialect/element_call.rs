//! The element payloads, read as they stream and written out as compact JSON arguments while
//! the values arrive:
//!
//! - qwen3_coder: `<function=NAME><parameter=KEY>value</parameter>…</function>`; a value is
//!   everything up to the first `</parameter>` less one leading and one trailing newline (the
//!   chat template writes the value on its own line).
//! - glm45: `NAME` then `<arg_key>KEY</arg_key><arg_value>value</arg_value>` pairs; a value is
//!   everything up to the first `</arg_value>`, stripped of blanks at both ends.
//! - minimax_m2: qwen3_coder's values in `<invoke name="NAME">` / `<parameter name="KEY">`;
//!   hy3: glm45's pairs with Tencent's `:opensource` markers, the name ending at its separator.
//! - DeepSeek's DSML (deepseek_v32, deepseek_v4): ` name="NAME">` (after `<｜DSML｜invoke`), then
//!   `<｜DSML｜parameter name="KEY" string="true|false">value</｜DSML｜parameter>` elements; a value
//!   is everything up to its closing tag, as written; `string="false"` says it is JSON.
//! - StepFun's steptml (step3): `function<｜tool_sep｜>` (or nothing) after the call token, then
//!   `<steptml:invoke name="NAME">`, `<steptml:parameter name="KEY">value</steptml:parameter>`
//!   elements and `</steptml:invoke>`; a value is stripped of blanks at both ends (as the
//!   engines read it), and the attributes are DSML's.
//!
//! Blanks between elements are ignored; nothing but its closing tag ends a value, so any other
//! marker inside is value text. Text values are streamed as JSON string text; a value whose
//! schema type is not text is held to its end and converted (see [`crate::parse::schema`]).

use memchr::memchr;

use crate::parse::json_text;
use crate::parse::scan::{find_marker, is_space, match_at, Found};
use crate::parse::schema::{typed_value_into, ParamType, Tools};

pub(crate) const PARAMETER_OPEN: &[u8] = b"<parameter=";
const PARAMETER_NAME_OPEN: &[u8] = b"<parameter name=";
const PARAMETER_CLOSE: &[u8] = b"</parameter>";
pub(crate) const FUNCTION_CLOSE: &[u8] = b"</function>";
pub(crate) const FUNCTION_OPEN: &[u8] = b"<function=";
pub(crate) const ARG_KEY_OPEN: &[u8] = b"<arg_key>";
const ARG_KEY_CLOSE: &[u8] = b"</arg_key>";
const ARG_VALUE_OPEN: &[u8] = b"<arg_value>";
const HY3_TOOL_SEP: &[u8] = b"<tool_sep:opensource>";
const ARG_VALUE_CLOSE: &[u8] = b"</arg_value>";
const DSML_PARAMETER_OPEN: &[u8] = "<｜DSML｜parameter".as_bytes();
const DSML_PARAMETER_CLOSE: &[u8] = "</｜DSML｜parameter>".as_bytes();
const STEPTML_INVOKE_OPEN: &[u8] = b"<steptml:invoke";
const STEPTML_INVOKE_CLOSE: &[u8] = b"</steptml:invoke>";
const STEPTML_PARAMETER_OPEN: &[u8] = b"<steptml:parameter";
const STEPTML_PARAMETER_CLOSE: &[u8] = b"</steptml:parameter>";
/// What a step3 call writes before its invoke: the call's type, `function`, and the separator.
const STEPTML_TYPE: &[u8] = b"function";
const STEPTML_SEP: &[u8] = "<｜tool_sep｜>".as_bytes();
/// The most a step3 call's type and separator may hold before its invoke (more: malformed).
const MAX_STEPTML_PREFIX: usize = 64;
/// Why a step3 call is malformed before its invoke: one text, however the stream was cut.
const STEPTML_NO_INVOKE: &str = "expected function<｜tool_sep｜><steptml:invoke name=\"…\"> at the call's start";

/// Which element notation a call is written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ElementForm {
    Qwen3Coder,
    Glm45,
    /// minimax_m2: `<invoke name="NAME"><parameter name="KEY">value</parameter>…</invoke>`; the
    /// name and keys are written in quotes, the values as qwen3_coder's.
    Invoke,
    /// hy3: `NAME<tool_sep:opensource>`, then glm45's pairs with Tencent's suffixed markers
    /// (`<arg_key:opensource>KEY</arg_key:opensource><arg_value:opensource>…`).
    Hy3,
    /// DeepSeek's DSML invoke: attributes name the call and each parameter.
    Dsml,
    /// step3: `function<｜tool_sep｜><steptml:invoke name="NAME">`, then DSML-like parameters
    /// whose values are stripped of blanks.
    Steptml,
}

impl ElementForm {
    fn key_open(self) -> &'static [u8] {
        match self {
            Self::Qwen3Coder => PARAMETER_OPEN,
            Self::Invoke => PARAMETER_NAME_OPEN,
            Self::Glm45 => ARG_KEY_OPEN,
            Self::Hy3 => b"<arg_key:opensource>",
            Self::Dsml => DSML_PARAMETER_OPEN,
            Self::Steptml => STEPTML_PARAMETER_OPEN,
        }
    }

    fn value_close(self) -> &'static [u8] {
        match self {
            Self::Qwen3Coder | Self::Invoke => PARAMETER_CLOSE,
            Self::Glm45 => ARG_VALUE_CLOSE,
            Self::Hy3 => b"</arg_value:opensource>",
            Self::Dsml => DSML_PARAMETER_CLOSE,
            Self::Steptml => STEPTML_PARAMETER_CLOSE,
        }
    }

    /// What closes the function before the call's end marker (read by qwen3_coder and step3).
    fn function_close(self) -> &'static [u8] {
        if self == Self::Steptml { STEPTML_INVOKE_CLOSE } else { FUNCTION_CLOSE }
    }

    /// Names and keys are `name="…"` attributes (DSML, steptml).
    fn attributed(self) -> bool {
        matches!(self, Self::Dsml | Self::Steptml)
    }

    /// Values lose every blank at both ends (glm45, hy3, steptml).
    fn strips_values(self) -> bool {
        matches!(self, Self::Glm45 | Self::Hy3 | Self::Steptml)
    }

    fn key_close(self) -> &'static [u8] {
        if self == Self::Hy3 { b"</arg_key:opensource>" } else { ARG_KEY_CLOSE }
    }

    fn value_open(self) -> &'static [u8] {
        if self == Self::Hy3 { b"<arg_value:opensource>" } else { ARG_VALUE_OPEN }
    }

    /// glm45's and hy3's pairs: a key element, then a value element stripped of blanks.
    fn pairs(self) -> bool {
        matches!(self, Self::Glm45 | Self::Hy3)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// step3: the call's type and separator, up to `<steptml:invoke`.
    Prefix,
    Name,
    Between,
    ParamName,
    /// glm45: after `</arg_key>`, expecting `<arg_value>`.
    ValueOpen,
    Value,
    AfterFunction,
    /// Malformed: skip to the end marker.
    Bad,
}

/// What a scan step ended with.
pub(crate) enum Step {
    /// All of the data up to this index is read; the rest (a possible marker) needs more input.
    Wait(usize),
    /// The end marker ends at this index.
    End(usize),
}

impl Step {
    /// A malformed call's step: its text up to its `end` marker, however far, is skipped (the
    /// call's raw text keeps it).
    pub(crate) fn skip_to(data: &[u8], i: usize, end: &[u8]) -> Step {
        match find_marker(data, i, &[end]) {
            Found::Marker { at, .. } => Step::End(at + end.len()),
            Found::Partial { at } => Step::Wait(at),
            Found::None => Step::Wait(data.len()),
        }
    }
}

/// Writes a parameter's `"key":` into a call's arguments JSON, and its opening quote when the
/// value is text; the value's type: the tool's schema for it, or text; any JSON value but a
/// string where the model says it wrote JSON (`json`).
pub(crate) fn open_parameter(arguments: &mut Vec<u8>, key: &[u8], call: Option<&str>, tools: Option<&Tools>, json: bool) -> ParamType {
    json_text::string_into(key, arguments);
    arguments.push(b':');
    let mut value_type = match (tools, call, std::str::from_utf8(key)) {
        (Some(tools), Some(name), Ok(key)) => tools.param_type(name, key),
        _ => ParamType::Text,
    };
    if json && value_type.is_text() {
        value_type = ParamType::json();
    }
    if value_type.is_text() {
        arguments.push(b'"');
    }
    value_type
}

/// A value's text from `data[i..]` up to its `close` marker, given to `text` as it comes (a value
/// streams): `Ok(next)` after the closer, else the step to wait with.
pub(crate) fn value_until(data: &[u8], i: usize, close: &[u8], mut text: impl FnMut(&[u8])) -> Result<usize, Step> {
    match find_marker(data, i, &[close]) {
        Found::Marker { at, .. } => {
            text(&data[i..at]);
            Ok(at + close.len())
        }
        Found::Partial { at } => {
            text(&data[i..at]);
            Err(Step::Wait(at))
        }
        Found::None => {
            text(&data[i..]);
            Err(Step::Wait(data.len()))
        }
    }
}

#[derive(Clone, Debug)]
pub(crate) struct ElementCall {
    form: ElementForm,
    state: State,
    name_bytes: Vec<u8>,
    pub name: Option<String>,
    name_ready: bool,
    /// The compact JSON arguments written so far.
    pub arguments: Vec<u8>,
    params: usize,
    key: Vec<u8>,
    value_type: ParamType,
    /// Held text of a value that is converted at its end.
    value: Vec<u8>,
    at_value_start: bool,
    /// Blanks at the end of the value so far: dropped if the value ends right after them.
    held_blanks: Vec<u8>,
    /// Why the call is malformed.
    pub error: Option<String>,
    /// Parameters whose text did not convert to their schema type.
    pub schema_errors: Vec<String>,
    /// Opened by `<function=` with no call marker: the call may end at `</function>`.
    bare: bool,
}

impl ElementCall {
    /// A qwen3_coder call whose `<function=` was just read.
    pub fn new(form: ElementForm) -> Self {
        Self {
            form,
            state: if form == ElementForm::Steptml { State::Prefix } else { State::Name },
            name_bytes: Vec::new(),
            name: None,
            name_ready: false,
            arguments: Vec::new(),
            params: 0,
            key: Vec::new(),
            value_type: ParamType::Text,
            value: Vec::new(),
            at_value_start: false,
            held_blanks: Vec::new(),
            error: None,
            schema_errors: Vec::new(),
            bare: false,
        }
    }

    /// A qwen3_coder call opened by `<function=` alone: it ends at `</function>` unless the
    /// call marker's end follows (blanks allowed).
    pub fn without_opener(mut self) -> Self {
        self.bare = true;
        self
    }

    /// Whether the call is complete without its end marker (a bare call after `</function>`).
    pub fn is_complete(&self) -> bool {
        self.bare && self.state == State::AfterFunction
    }

    /// A call whose name was read before its parameters (glm45).
    pub fn named(form: ElementForm, name: String) -> Self {
        let mut call = Self::new(form);
        call.name = Some(name);
        call.name_ready = true;
        call.arguments.push(b'{');
        call.state = State::Between;
        call
    }

    pub fn take_name(&mut self) -> Option<&str> {
        if !std::mem::take(&mut self.name_ready) {
            return None;
        }
        self.name.as_deref()
    }

    fn fail(&mut self, why: &str) {
        self.error.get_or_insert_with(|| why.to_string());
        self.state = State::Bad;
    }

    /// Reads `data[from..]` as far as it can; `end_marker` closes the call.
    pub fn scan(&mut self, data: &[u8], from: usize, end_marker: &[u8], tools: Option<&Tools>) -> Step {
        let mut i = from;
        while i < data.len() {
            match self.state {
                State::Prefix => match find_marker(data, i, &[STEPTML_INVOKE_OPEN, end_marker]) {
                    Found::Marker { at, which: 0 } => {
                        self.name_bytes.extend_from_slice(&data[i..at]);
                        let prefix = std::mem::take(&mut self.name_bytes);
                        let prefix = prefix.trim_ascii();
                        // The engines also read an invoke with nothing before it.
                        let typed = prefix.strip_suffix(STEPTML_SEP).map(<[u8]>::trim_ascii) == Some(STEPTML_TYPE);
                        if prefix.is_empty() || typed {
                            i = at + STEPTML_INVOKE_OPEN.len();
                            self.state = State::Name;
                        } else {
                            i = at;
                            self.fail(STEPTML_NO_INVOKE);
                        }
                    }
                    Found::Marker { at, .. } => {
                        self.fail(STEPTML_NO_INVOKE);
                        return Step::End(at + end_marker.len());
                    }
                    Found::Partial { at } => {
                        self.prefix_text(&data[i..at]);
                        if self.state == State::Bad {
                            continue;
                        }
                        return Step::Wait(at);
                    }
                    Found::None => {
                        self.prefix_text(&data[i..]);
                        if self.state == State::Bad {
                            continue;
                        }
                        return Step::Wait(data.len());
                    }
                },
                State::Name if self.form == ElementForm::Hy3 => match find_marker(data, i, &[HY3_TOOL_SEP, end_marker]) {
                    Found::Marker { at, which: 1 } => {
                        self.fail("expected <tool_sep:opensource> after the function name");
                        return Step::End(at + end_marker.len());
                    }
                    Found::Marker { at, .. } => {
                        self.name_bytes.extend_from_slice(&data[i..at]);
                        i = at + HY3_TOOL_SEP.len();
                        self.end_name();
                    }
                    Found::Partial { at } => {
                        self.name_bytes.extend_from_slice(&data[i..at]);
                        return Step::Wait(at);
                    }
                    Found::None => {
                        self.name_bytes.extend_from_slice(&data[i..]);
                        return Step::Wait(data.len());
                    }
                },
                State::Name => {
                    let Some(k) = memchr(b'>', &data[i..]) else {
                        self.name_bytes.extend_from_slice(&data[i..]);
                        return Step::Wait(data.len());
                    };
                    self.name_bytes.extend_from_slice(&data[i..i + k]);
                    i += k + 1;
                    self.end_name();
                }
                State::ParamName if !self.form.pairs() => {
                    let Some(k) = memchr(b'>', &data[i..]) else {
                        self.key.extend_from_slice(&data[i..]);
                        return Step::Wait(data.len());
                    };
                    self.key.extend_from_slice(&data[i..i + k]);
                    i += k + 1;
                    self.begin_value(tools);
                }
                State::ParamName => match find_marker(data, i, &[self.form.key_close()]) {
                    Found::Marker { at, .. } => {
                        self.key.extend_from_slice(&data[i..at]);
                        i = at + self.form.key_close().len();
                        self.state = State::ValueOpen;
                    }
                    Found::Partial { at } => {
                        self.key.extend_from_slice(&data[i..at]);
                        return Step::Wait(at);
                    }
                    Found::None => {
                        self.key.extend_from_slice(&data[i..]);
                        return Step::Wait(data.len());
                    }
                },
                State::ValueOpen => {
                    if is_space(data[i]) {
                        i += 1;
                        continue;
                    }
                    match match_at(data, i, &[self.form.value_open()]) {
                        Found::Partial { at } => return Step::Wait(at),
                        Found::Marker { .. } => {
                            i += self.form.value_open().len();
                            self.begin_value(tools);
                        }
                        Found::None => self.fail("expected a value element after the key"),
                    }
                }
                State::Between | State::AfterFunction => {
                    let b = data[i];
                    if is_space(b) {
                        i += 1;
                        continue;
                    }
                    let markers: &[&[u8]] = &[self.form.key_open(), self.form.function_close(), end_marker];
                    let between = self.state == State::Between;
                    match match_at(data, i, markers) {
                        Found::Partial { at } => return Step::Wait(at),
                        Found::Marker { which: 0, .. } if between => {
                            i += markers[0].len();
                            self.key.clear();
                            self.state = State::ParamName;
                        }
                        Found::Marker { which: 1, .. }
                            if between && matches!(self.form, ElementForm::Qwen3Coder | ElementForm::Steptml) =>
                        {
                            i += markers[1].len();
                            self.arguments.push(b'}');
                            self.state = State::AfterFunction;
                        }
                        Found::Marker { which: 2, .. } => {
                            if between {
                                // `</function>` left out (or glm45, which has none): the call ends here.
                                self.arguments.push(b'}');
                            }
                            return Step::End(i + end_marker.len());
                        }
                        // A call with no opener ended at `</function>`; what follows is not its own.
                        _ if self.is_complete() => return Step::End(i),
                        _ => self.fail(match (between, self.form) {
                            (true, ElementForm::Qwen3Coder) => "expected <parameter=…> or </function>",
                            (true, ElementForm::Glm45) => "expected <arg_key> or the end of the call",
                            (true, ElementForm::Hy3) => "expected <arg_key:opensource> or the end of the call",
                            (true, ElementForm::Invoke) => "expected <parameter name=…> or </invoke>",
                            (true, ElementForm::Dsml) => "expected <｜DSML｜parameter …> or the end of the invoke",
                            (true, ElementForm::Steptml) => "expected <steptml:parameter …> or </steptml:invoke>",
                            (false, ElementForm::Steptml) => "expected the end of the call after </steptml:invoke>",
                            (false, _) => "expected the end of the call after </function>",
                        }),
                    }
                }
                State::Value => match value_until(data, i, self.form.value_close(), |text| self.value_text(text)) {
                    Ok(next) => {
                        i = next;
                        self.end_value();
                    }
                    Err(step) => return step,
                },
                State::Bad => return Step::skip_to(data, i, end_marker),
            }
        }
        Step::Wait(i)
    }

    /// step3: text before the invoke, bounded: a call that never reaches one is malformed.
    fn prefix_text(&mut self, piece: &[u8]) {
        self.name_bytes.extend_from_slice(piece);
        if self.name_bytes.len() > MAX_STEPTML_PREFIX {
            self.name_bytes.clear();
            self.fail(STEPTML_NO_INVOKE);
        }
    }

    fn end_name(&mut self) {
        if self.form.attributed() {
            // ` name="NAME"`: the name is the attribute's value.
            match attributes(&self.name_bytes).and_then(|attrs| attrs.into_iter().find(|(k, _)| *k == b"name")) {
                Some((_, name)) => self.name_bytes = name.to_vec(),
                None => return self.fail("the invoke has no name=\"…\" attribute"),
            }
        }
        let name = self.unquoted(self.name_bytes.trim_ascii());
        match std::str::from_utf8(name) {
            Ok(name) if !name.is_empty() && !name.contains('<') => {
                self.name = Some(name.to_owned());
                self.name_ready = true;
                self.arguments.push(b'{');
                self.state = State::Between;
            }
            _ => self.fail("the function name is empty or not text"),
        }
    }

    /// A name or key as written: minimax_m2 quotes them (`name="KEY"`).
    fn unquoted<'a>(&self, written: &'a [u8]) -> &'a [u8] {
        match written {
            [b'"', inner @ .., b'"'] if self.form == ElementForm::Invoke => inner,
            _ => written,
        }
    }

    fn begin_value(&mut self, tools: Option<&Tools>) {
        // DSML: ` name="KEY" string="false"` names the key and says whether the value is JSON.
        let mut json = false;
        if self.form.attributed() {
            let Some(attrs) = attributes(&self.key) else { return self.fail("a parameter's attributes are malformed") };
            json = attrs.iter().any(|(k, v)| *k == b"string" && *v == b"false");
            let Some((_, name)) = attrs.into_iter().find(|(k, _)| *k == b"name") else {
                return self.fail("a parameter has no name=\"…\" attribute");
            };
            self.key = name.to_vec();
        }
        let key = self.unquoted(self.key.trim_ascii()).to_vec();
        if key.is_empty() || key.contains(&b'<') {
            self.fail("a parameter name is empty or holds '<'");
            return;
        }
        if self.params > 0 {
            self.arguments.push(b',');
        }
        self.params += 1;
        self.value_type = open_parameter(&mut self.arguments, &key, self.name.as_deref(), tools, json);
        self.key = key;
        self.value.clear();
        self.at_value_start = true;
        self.held_blanks.clear();
        self.state = State::Value;
    }

    /// A piece of value text, trimmed as the form says: what could still be trimmed at the end
    /// of the value is held back until more text follows it.
    fn value_text(&mut self, mut piece: &[u8]) {
        if piece.is_empty() {
            return;
        }
        if self.at_value_start {
            match self.form {
                ElementForm::Qwen3Coder | ElementForm::Invoke => {
                    self.at_value_start = false;
                    if piece[0] == b'\n' {
                        piece = &piece[1..];
                    }
                }
                ElementForm::Glm45 | ElementForm::Hy3 | ElementForm::Steptml => {
                    piece = &piece[piece.iter().take_while(|b| is_space(**b)).count()..];
                    self.at_value_start = piece.is_empty();
                }
                ElementForm::Dsml => self.at_value_start = false,
            }
        }
        if piece.is_empty() {
            return;
        }
        let tail = match self.form {
            ElementForm::Qwen3Coder | ElementForm::Invoke => usize::from(piece.last() == Some(&b'\n')),
            ElementForm::Glm45 | ElementForm::Hy3 | ElementForm::Steptml => {
                piece.iter().rev().take_while(|b| is_space(**b)).count()
            }
            ElementForm::Dsml => 0,
        };
        let (body, tail) = piece.split_at(piece.len() - tail);
        // qwen3_coder trims one newline only: a held one is text once another arrives.
        if !body.is_empty() || !self.form.strips_values() {
            let mut held = std::mem::take(&mut self.held_blanks);
            self.value_piece(&held);
            self.value_piece(body);
            held.clear();
            self.held_blanks = held;
        }
        self.held_blanks.extend_from_slice(tail);
    }

    fn value_piece(&mut self, piece: &[u8]) {
        if piece.is_empty() {
            return;
        }
        if self.value_type.is_text() {
            json_text::escape_into(piece, &mut self.arguments);
        } else {
            self.value.extend_from_slice(piece);
        }
    }

    fn end_value(&mut self) {
        self.held_blanks.clear();
        if self.value_type.is_text() {
            self.arguments.push(b'"');
        } else if let Err(why) = typed_value_into(&self.value_type, &self.value, &mut self.arguments) {
            let key = String::from_utf8_lossy(&self.key);
            self.schema_errors.push(format!("parameter '{key}' {why}; kept as text"));
        }
        self.state = State::Between;
    }
}

/// The `key="value"` attributes of a tag (blanks between them), or None if they are malformed.
/// Values are taken as written: DeepSeek's template writes them unescaped.
pub(crate) fn attributes(mut text: &[u8]) -> Option<Vec<(&[u8], &[u8])>> {
    let mut attrs = Vec::new();
    loop {
        text = text.trim_ascii_start();
        if text.is_empty() {
            return Some(attrs);
        }
        let eq = memchr(b'=', text)?;
        let key = text[..eq].trim_ascii();
        let rest = text[eq + 1..].trim_ascii_start();
        let body = rest.strip_prefix(b"\"")?;
        let close = memchr(b'"', body)?;
        if key.is_empty() || key.iter().any(|b| is_space(*b)) {
            return None;
        }
        attrs.push((key, &body[..close]));
        text = &body[close + 1..];
    }
}
