//! The per-message columns the core reads, taken straight from `agentmsg.Message` and block
//! slots: role codes, the measure of Forge's measured text (for the estimate), and the pairing
//! columns (result ids and names, the tool calls).
//!
//! A message or block of exactly the library's class is read by slot offset; a subclass (or an
//! empty slot) through the attribute protocol, so the answer is the same either way. Ids and
//! names are read as their `surrogatepass` bytes: a lone surrogate pairs like any character.

use std::borrow::Cow;

use agentmsg_core::estimate::Measure;
use agentmsg_core::pairs::{self, Calls, NameScope, Pairing};
use agentmsg_core::Role;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple, PyType};

use crate::errors::{ErrorClass, core_error, type_name};
use crate::ffi::SlottedClass;
use crate::strings::{exact_len, storage, text_bytes, Storage};

/// A class of the model and the fields read from its instances.
struct Class<const N: usize> {
    cls: Py<PyType>,
    slotted: Option<SlottedClass<N>>,
    names: [&'static str; N],
}

impl<const N: usize> Class<N> {
    fn load(package: &Bound<'_, PyAny>, name: &str, names: [&'static str; N]) -> PyResult<Self> {
        let cls = package.getattr(name)?.cast_into::<PyType>()?;
        let slotted = SlottedClass::new(&cls, names)?.ok();
        Ok(Class { cls: cls.unbind(), slotted, names })
    }

    fn is_exact(&self, obj: &Bound<'_, PyAny>) -> bool {
        obj.get_type().is(self.cls.bind(obj.py()))
    }

    /// Whether `obj` is an instance (exact first: the common case costs one comparison).
    fn holds(&self, obj: &Bound<'_, PyAny>) -> PyResult<bool> {
        Ok(self.is_exact(obj) || obj.is_instance(self.cls.bind(obj.py()))?)
    }

    /// Field `field` of `obj`: its slot when `obj` is exactly this class, else its attribute.
    fn get<'py>(&self, obj: &Bound<'py, PyAny>, field: usize) -> PyResult<Bound<'py, PyAny>> {
        match self.slotted.as_ref().and_then(|class| class.slot(obj, field)) {
            Some(value) => Ok(value),
            None => obj.getattr(self.names[field]),
        }
    }
}

/// The model's classes, looked up in the `agentmsg` package once per interpreter.
struct Model {
    /// role, content, name, tool_id
    message: Class<4>,
    /// `Role.SYSTEM`, `USER`, `ASSISTANT`, `TOOL`: the members in the order of their codes.
    roles: [Py<PyAny>; 4],
    text: Class<1>,
    thinking: Class<1>,
    /// id, name, input, server_name
    tool_use: Class<4>,
    /// tool_use_id, output
    tool_result: Class<2>,
    /// A tool the provider ran: id, name, input, server_name (as `tool_use`).
    server_use: Class<4>,
    /// Its result: content (any JSON value).
    server_result: Class<1>,
    /// Image, audio, video and document blocks: source.
    media: [Class<1>; 4],
    url_source: Class<1>,
    json_dumps: Py<PyAny>,
    /// `agentmsg.model.blocks.document_text`: the one rule of what text a document holds.
    document_text: Py<PyAny>,
}

const MESSAGE_ROLE: usize = 0;

impl Model {
    /// The role of `item`, the message at `index`: its role slot compared with the four members
    /// (a subclass, or a role that is no member, asks Python).
    fn role_of(&self, item: &Bound<'_, PyAny>, index: usize) -> PyResult<Role> {
        let py = item.py();
        let slotted = self.message.slotted.as_ref().and_then(|class| class.slot_among(item, MESSAGE_ROLE, &self.roles));
        let code = match slotted {
            Some(code) => code,
            None => {
                if !self.message.holds(item)? {
                    let message = format!("messages[{index}] must be a Message, not {}", type_name(item));
                    return Err(ErrorClass::MessageType.new_err(py, message));
                }
                let role = self.message.get(item, MESSAGE_ROLE)?;
                self.roles.iter().position(|member| member.bind(py).is(&role)).ok_or_else(|| {
                    let message = format!("messages[{index}].role must be an agentmsg.Role, not {}", type_name(&role));
                    ErrorClass::MessageType.new_err(py, message)
                })?
            }
        };
        Ok(Role::from_code(code as u8).unwrap_or(Role::User))
    }
}
const MESSAGE_CONTENT: usize = 1;
const MESSAGE_NAME: usize = 2;
const MESSAGE_TOOL_ID: usize = 3;
const CALL_ID: usize = 0;
const CALL_NAME: usize = 1;
const CALL_INPUT: usize = 2;
const CALL_SERVER: usize = 3;
const RESULT_OUTPUT: usize = 1;
/// Where `DocumentBlock` stands in `Model::media`.
const DOCUMENT: usize = 3;

fn model(py: Python<'_>) -> PyResult<&Model> {
    static MODEL: PyOnceLock<Model> = PyOnceLock::new();
    MODEL.get_or_try_init(py, || {
        let package = py.import("agentmsg")?.into_any();
        let role = package.getattr("Role")?;
        let member = |name: &str| role.getattr(name).map(Bound::unbind);
        Ok(Model {
            message: Class::load(&package, "Message", ["role", "content", "name", "tool_id"])?,
            roles: [member("SYSTEM")?, member("USER")?, member("ASSISTANT")?, member("TOOL")?],
            text: Class::load(&package, "TextBlock", ["text"])?,
            thinking: Class::load(&package, "ThinkingBlock", ["thinking"])?,
            tool_use: Class::load(&package, "ToolUseBlock", ["id", "name", "input", "server_name"])?,
            tool_result: Class::load(&package, "ToolResultBlock", ["tool_use_id", "output"])?,
            server_use: Class::load(&package, "ServerToolUseBlock", ["id", "name", "input", "server_name"])?,
            server_result: Class::load(&package, "ServerToolResultBlock", ["content"])?,
            media: [
                Class::load(&package, "ImageBlock", ["source"])?,
                Class::load(&package, "AudioBlock", ["source"])?,
                Class::load(&package, "VideoBlock", ["source"])?,
                Class::load(&package, "DocumentBlock", ["source"])?,
            ],
            url_source: Class::load(&package, "URLSource", ["url"])?,
            json_dumps: py.import("json")?.getattr("dumps")?.unbind(),
            document_text: py.import("agentmsg.model.blocks")?.getattr("document_text")?.unbind(),
        })
    })
}

/// The tool-call blocks of a range of messages, each with its message's index in the range.
pub(crate) type CallBlocks<'py> = Vec<(usize, Bound<'py, PyAny>)>;

/// The messages as given: a list or tuple is read in place (no copy of a long history), any
/// other iterable collected.
enum Items<'py> {
    List(Bound<'py, PyList>),
    Tuple(Bound<'py, PyTuple>),
    Collected(Vec<Bound<'py, PyAny>>),
}

impl<'py> Items<'py> {
    fn get(&self, index: usize) -> PyResult<Bound<'py, PyAny>> {
        match self {
            // A counter called back may have changed the list: get_item checks the index.
            Items::List(list) => list.get_item(index),
            Items::Tuple(tuple) => tuple.get_item(index),
            Items::Collected(items) => Ok(items[index].clone()),
        }
    }
}

/// A list of messages read once: each checked to be a `Message`, with its role.
pub(crate) struct Messages<'py> {
    py: Python<'py>,
    items: Items<'py>,
    roles: Vec<Role>,
    model: &'py Model,
}

impl<'py> Messages<'py> {
    /// Reads `messages` (any iterable of `Message`), naming the first item that is not one.
    pub(crate) fn read(messages: &Bound<'py, PyAny>) -> PyResult<Self> {
        let py = messages.py();
        let model = model(py)?;
        let mut roles = Vec::with_capacity(exact_len(messages));
        let items = if let Ok(list) = messages.cast_exact::<PyList>() {
            for (index, item) in list.iter().enumerate() {
                roles.push(model.role_of(&item, index)?);
            }
            Items::List(list.clone())
        } else if let Ok(tuple) = messages.cast_exact::<PyTuple>() {
            for (index, item) in tuple.iter().enumerate() {
                roles.push(model.role_of(&item, index)?);
            }
            Items::Tuple(tuple.clone())
        } else {
            let mut collected = Vec::new();
            for (index, item) in messages.try_iter()?.enumerate() {
                let item = item?;
                roles.push(model.role_of(&item, index)?);
                collected.push(item);
            }
            Items::Collected(collected)
        };
        Ok(Messages { py, items, roles, model })
    }

    pub(crate) fn len(&self) -> usize {
        self.roles.len()
    }

    pub(crate) fn roles(&self) -> &[Role] {
        &self.roles
    }

    fn content(&self, index: usize) -> PyResult<Bound<'py, PyAny>> {
        self.model.message.get(&self.items.get(index)?, MESSAGE_CONTENT)
    }

    /// Forge's estimate of message `index`: the measure of its measured text (its blocks joined
    /// with newlines, as `agentmsg.counting.tokens.measured_text` says) plus its role's overhead.
    pub(crate) fn estimate(&self, index: usize) -> PyResult<u64> {
        let model = self.model;
        let mut parts = Vec::new();
        for block in self.content(index)?.try_iter()? {
            let block = block?;
            let where_ = || format!("messages[{index}].content");
            if model.text.holds(&block)? {
                parts.push(measure_str(&model.text.get(&block, 0)?, &where_)?);
            } else if model.thinking.holds(&block)? {
                parts.push(measure_str(&model.thinking.get(&block, 0)?, &where_)?);
            } else if model.tool_use.holds(&block)? {
                parts.push(model.tool_call_measure(&model.tool_use, &block, &where_)?);
            } else if model.tool_result.holds(&block)? {
                parts.push(model.result_text_measure(&block, &where_)?);
            } else if model.server_use.holds(&block)? {
                parts.push(model.tool_call_measure(&model.server_use, &block, &where_)?);
            } else if model.server_result.holds(&block)? {
                let content = model.server_result.get(&block, 0)?;
                parts.push(Measure { utf8_len: model.json_text_len(&content, &where_)?, has_tool_tag: false });
            } else {
                if model.media[DOCUMENT].holds(&block)? {
                    let text = model.document_text.bind(block.py()).call1((&block,))?;
                    if !text.is_none() {
                        parts.push(measure_str(&text, &where_)?);
                        continue;
                    }
                }
                for media in &model.media {
                    if media.holds(&block)? {
                        let source = media.get(&block, 0)?;
                        if model.url_source.holds(&source)? {
                            parts.push(measure_str(&model.url_source.get(&source, 0)?, &where_)?);
                        }
                        break;
                    }
                }
            }
        }
        Ok(Measure::joined(parts).estimate(self.roles[index]) as u64)
    }

    /// The pairing of messages `start..stop` (indices relative to `start`), and the tool-call
    /// blocks in order with their (relative) message indices.
    ///
    /// With `refuse_lone_surrogates`, an id or name holding one is a `MessageError` naming it
    /// (what the public pairing functions promise); else it pairs by its `surrogatepass` bytes.
    pub(crate) fn pair(&self, start: usize, stop: usize, scope: NameScope, refuse_lone_surrogates: bool) -> PyResult<(Pairing, CallBlocks<'py>)> {
        let (py, model) = (self.py, self.model);
        let roles = &self.roles[start..stop];
        let mut result_ids: Vec<Option<Bound<'py, PyString>>> = Vec::with_capacity(roles.len());
        let mut result_names: Vec<Option<Bound<'py, PyString>>> = Vec::with_capacity(roles.len());
        let mut calls: Vec<(usize, Bound<'py, PyAny>)> = Vec::new();
        let mut call_ids = Vec::new();
        let mut call_names = Vec::new();
        for (j, &role) in roles.iter().enumerate() {
            let item = &self.items.get(start + j)?;
            let index = start + j;
            let (mut id, mut name) = (None, None);
            match role {
                Role::Tool => {
                    let field = |name: &str| format!("messages[{index}].{name}");
                    id = optional_str(&model.message.get(item, MESSAGE_TOOL_ID)?, || field("tool_id"))?;
                    name = optional_str(&model.message.get(item, MESSAGE_NAME)?, || field("name"))?;
                    if refuse_lone_surrogates {
                        refuse_surrogates(id.as_ref(), || field("tool_id"))?;
                        refuse_surrogates(name.as_ref(), || field("name"))?;
                    }
                }
                Role::Assistant => {
                    for block in self.content(start + j)?.try_iter()? {
                        let block = block?;
                        if model.tool_use.holds(&block)? {
                            let where_ = |field: &str| format!("messages[{index}]: a tool call's {field}");
                            let id = required_str(model.tool_use.get(&block, CALL_ID)?, || where_("id"))?;
                            let name = required_str(model.tool_use.get(&block, CALL_NAME)?, || where_("name"))?;
                            if refuse_lone_surrogates {
                                refuse_surrogates(Some(&id), || where_("id"))?;
                                refuse_surrogates(Some(&name), || where_("name"))?;
                            }
                            call_ids.push(id);
                            call_names.push(name);
                            calls.push((j, block));
                        }
                    }
                }
                Role::System | Role::User => {}
            }
            result_ids.push(id);
            result_names.push(name);
        }
        fn bytes_of<'a>(texts: &'a [Option<Bound<'_, PyString>>]) -> PyResult<Vec<Option<Cow<'a, [u8]>>>> {
            texts.iter().map(|text| text.as_ref().map(text_bytes).transpose()).collect()
        }
        let (result_ids, result_names) = (bytes_of(&result_ids)?, bytes_of(&result_names)?);
        let call_ids: Vec<Cow<'_, [u8]>> = call_ids.iter().map(text_bytes).collect::<PyResult<_>>()?;
        let call_names: Vec<Cow<'_, [u8]>> = call_names.iter().map(text_bytes).collect::<PyResult<_>>()?;
        let call_messages: Vec<usize> = calls.iter().map(|(j, _)| *j).collect();
        let calls_arrays = Calls { messages: &call_messages, ids: &call_ids, names: &call_names };
        let pairing = pairs::pair(roles, &result_ids, &result_names, calls_arrays, scope).map_err(|error| core_error(py, error))?;
        Ok((pairing, calls))
    }
}

/// A `MessageError` for a text holding a lone surrogate (`what` names it).
fn refuse_surrogates(text: Option<&Bound<'_, PyString>>, what: impl Fn() -> String) -> PyResult<()> {
    match text {
        Some(text) if text.to_str().is_err() => {
            Err(ErrorClass::Message.new_err(text.py(), format!("{} is not valid Unicode (a lone surrogate)", what())))
        }
        _ => Ok(()),
    }
}

/// A str field that may be None (`what` names it for the error).
fn optional_str<'py>(value: &Bound<'py, PyAny>, what: impl Fn() -> String) -> PyResult<Option<Bound<'py, PyString>>> {
    if value.is_none() {
        return Ok(None);
    }
    required_str(value.clone(), what).map(Some)
}

fn required_str<'py>(value: Bound<'py, PyAny>, what: impl Fn() -> String) -> PyResult<Bound<'py, PyString>> {
    value.cast_into::<PyString>().map_err(|error| {
        let value = error.into_inner();
        ErrorClass::MessageType.new_err(value.py(), format!("{} must be a str, not {}", what(), type_name(&value)))
    })
}

/// The measure of a str, read from CPython's storage (no UTF-8 copy is cached on it).
fn measure_str(value: &Bound<'_, PyAny>, where_: &dyn Fn() -> String) -> PyResult<Measure> {
    let Ok(text) = value.cast::<PyString>() else {
        let message = format!("{}: a block holds a {} where a str belongs", where_(), type_name(value));
        return Err(ErrorClass::MessageType.new_err(value.py(), message));
    };
    Ok(match storage(text)? {
        Storage::Ascii(ascii) => Measure::of_bytes(ascii.as_bytes()),
        Storage::Latin1(bytes) => Measure::of_code_points(bytes),
        Storage::Ucs2(units) => Measure::of_code_points(units),
        Storage::Ucs4(points) => Measure::of_code_points(points),
    })
}

/// `<tool>` and `</tool>` around a call's JSON.
const TOOL_TAGS_LEN: usize = "<tool></tool>".len();
/// The JSON of a call without its three values: `{"server_name": , "tool_name": , "arguments": }`.
const CALL_JSON_FRAME_LEN: usize = r#"{"server_name": , "tool_name": , "arguments": }"#.len();
/// Deeper than this, the JSON is left to Python (`json.dumps` then refuses a value that
/// contains itself as it always did).
const MAX_JSON_DEPTH: usize = 512;

impl Model {
    /// The measure of a call's part: `<tool>` + `json.dumps({"server_name": …, "tool_name": …,
    /// "arguments": …}, ensure_ascii=False)` + `</tool>`. The JSON's length is computed here for
    /// the values `json.dumps` writes in a way known exactly (exact dict, list, tuple, str, int,
    /// finite float, bool, None); for any other value, Python writes it.
    fn tool_call_measure(&self, class: &Class<4>, block: &Bound<'_, PyAny>, where_: &dyn Fn() -> String) -> PyResult<Measure> {
        let server = class.get(block, CALL_SERVER)?;
        let name = class.get(block, CALL_NAME)?;
        let input = class.get(block, CALL_INPUT)?;
        let lengths = (json_len(&server, 0)?, json_len(&name, 0)?, json_len(&input, 0)?);
        let json_len = match lengths {
            (Some(server), Some(name), Some(input)) => CALL_JSON_FRAME_LEN + server + name + input,
            _ => {
                let payload = PyDict::new(block.py());
                payload.set_item("server_name", server)?;
                payload.set_item("tool_name", name)?;
                payload.set_item("arguments", input)?;
                self.json_text_len(payload.as_any(), where_)?
            }
        };
        Ok(Measure { utf8_len: TOOL_TAGS_LEN + json_len, has_tool_tag: true })
    }

    /// The UTF-8 length of `json.dumps(value, ensure_ascii=False)`: computed here for the values
    /// `json.dumps` writes in a way known exactly, else written by Python.
    fn json_text_len(&self, value: &Bound<'_, PyAny>, where_: &dyn Fn() -> String) -> PyResult<usize> {
        if let Some(len) = json_len(value, 0)? {
            return Ok(len);
        }
        let py = value.py();
        let options = PyDict::new(py);
        options.set_item("ensure_ascii", false)?;
        let text = self.json_dumps.bind(py).call((value,), Some(&options))?;
        Ok(measure_str(&text, where_)?.utf8_len)
    }

    /// The measure of a result's text: the text blocks of its output joined with newlines.
    fn result_text_measure(&self, block: &Bound<'_, PyAny>, where_: &dyn Fn() -> String) -> PyResult<Measure> {
        let mut parts = Vec::new();
        for item in self.tool_result.get(block, RESULT_OUTPUT)?.try_iter()? {
            let item = item?;
            if self.text.holds(&item)? {
                parts.push(measure_str(&self.text.get(&item, 0)?, where_)?);
            }
        }
        Ok(Measure::joined(parts))
    }
}

/// The UTF-8 length of `json.dumps(value, ensure_ascii=False)`, or None for a value whose JSON
/// is left to Python.
fn json_len(value: &Bound<'_, PyAny>, depth: usize) -> PyResult<Option<usize>> {
    if value.is_none() {
        return Ok(Some(4));
    }
    if let Ok(text) = value.cast_exact::<PyString>() {
        return Ok(Some(json_str_len(text)?));
    }
    if value.is_exact_instance_of::<PyBool>() {
        return Ok(Some(if value.is_truthy()? { 4 } else { 5 }));
    }
    if value.is_exact_instance_of::<PyInt>() {
        return Ok(Some(match value.extract::<i64>() {
            Ok(small) => decimal_len(small),
            Err(_) => value.str()?.to_str()?.len(), // ASCII digits and a sign
        }));
    }
    if let Ok(float) = value.cast_exact::<PyFloat>() {
        // json writes float.__repr__ for finite floats (and NaN/Infinity otherwise: Python's).
        return Ok(if float.value().is_finite() { Some(value.repr()?.to_str()?.len()) } else { None });
    }
    if depth >= MAX_JSON_DEPTH {
        return Ok(None);
    }
    if let Ok(dict) = value.cast_exact::<PyDict>() {
        let mut len = 2 + (dict.len().max(1) - 1) * 2; // braces and ", "
        for (key, item) in dict.iter() {
            let Ok(key) = key.cast_exact::<PyString>() else { return Ok(None) };
            let Some(item_len) = json_len(&item, depth + 1)? else { return Ok(None) };
            len += json_str_len(key)? + 2 + item_len; // key, ": ", value
        }
        return Ok(Some(len));
    }
    let items = if let Ok(list) = value.cast_exact::<PyList>() {
        list.iter().collect::<Vec<_>>()
    } else if let Ok(tuple) = value.cast_exact::<PyTuple>() {
        tuple.iter().collect()
    } else {
        return Ok(None);
    };
    let mut len = 2 + (items.len().max(1) - 1) * 2; // brackets and ", "
    for item in &items {
        let Some(item_len) = json_len(item, depth + 1)? else { return Ok(None) };
        len += item_len;
    }
    Ok(Some(len))
}

fn decimal_len(value: i64) -> usize {
    let digits = value.unsigned_abs().checked_ilog10().map_or(1, |log| log as usize + 1);
    digits + usize::from(value < 0)
}

/// The UTF-8 length of a str written by `json.dumps(…, ensure_ascii=False)`: quoted, with `"`
/// and `\` escaped, `\b \f \n \r \t` as two characters, other control characters as `\u00XX`,
/// everything else as is (a lone surrogate as its 3 `surrogatepass` bytes).
fn json_str_len(text: &Bound<'_, PyString>) -> PyResult<usize> {
    fn width(point: u32) -> usize {
        match point {
            0x22 | 0x5C | 0x08 | 0x0C | 0x0A | 0x0D | 0x09 => 2,
            0..=0x1F => 6,
            _ => agentmsg_core::estimate::utf8_width(point),
        }
    }
    let body: usize = match storage(text)? {
        Storage::Ascii(ascii) => ascii.bytes().map(|b| width(u32::from(b))).sum(),
        Storage::Latin1(bytes) => bytes.iter().map(|&b| width(u32::from(b))).sum(),
        Storage::Ucs2(units) => units.iter().map(|&u| width(u32::from(u))).sum(),
        Storage::Ucs4(points) => points.iter().map(|&p| width(p)).sum(),
    };
    Ok(body + 2)
}
