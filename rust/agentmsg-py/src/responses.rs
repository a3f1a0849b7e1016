//! The Python dicts of core Responses events (`agentmsg_core::parse::responses`): OpenAI
//! Responses API stream events, equal to what
//! `agentmsg.convert.responses_events.responses_events` makes of the same events.

use agentmsg_core::parse::responses::{ResponsesEvent, TextItem};
use agentmsg_core::parse::Issue;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyDict, PyInt, PyList, PyString};

use crate::errors::{type_name, ErrorClass};
use crate::strings::py_str;

/// `sequence_number=`: an int of at least 0, the number of the next event (None: not given).
pub(crate) fn sequence_number_arg(py: Python<'_>, value: Option<&Bound<'_, PyAny>>) -> PyResult<Option<u64>> {
    let Some(number) = value.filter(|number| !number.is_none()) else {
        return Ok(None);
    };
    let int = number.cast::<PyInt>().ok().filter(|_| !number.is_instance_of::<PyBool>()).ok_or_else(|| {
        ErrorClass::MessageType.new_err(py, format!("sequence_number must be an int, not {}", type_name(number)))
    })?;
    let seq = int.extract::<u64>().map_err(|_| {
        let sign = if int.lt(0).unwrap_or(false) { "negative" } else { "too large" };
        ErrorClass::Message.new_err(py, format!("sequence_number must be from 0 to {} (this one is {sign})", u64::MAX))
    })?;
    Ok(Some(seq))
}

/// An item's id: `msg_<n>`, `rs_<n>` or `fc_<n>`.
fn item_id(prefix: &str, output: usize) -> String {
    format!("{prefix}_{output}")
}

/// The item ids below this output index are made once per process: a delta event names its
/// item, and most replies have a few items.
const CACHED_IDS: usize = 64;

/// The id of item `output` with `prefix` (0: `msg`, 1: `rs`, 2: `fc`) as a str.
fn item_id_str<'py>(py: Python<'py>, prefix: usize, output: usize) -> Bound<'py, PyString> {
    const PREFIXES: [&str; 3] = ["msg", "rs", "fc"];
    static IDS: PyOnceLock<Vec<Py<PyString>>> = PyOnceLock::new();
    if output >= CACHED_IDS {
        return PyString::new(py, &item_id(PREFIXES[prefix], output));
    }
    let ids = IDS.get_or_init(py, || {
        PREFIXES.iter().flat_map(|prefix| (0..CACHED_IDS).map(move |n| PyString::new(py, &item_id(prefix, n)).unbind())).collect()
    });
    ids[prefix * CACHED_IDS + output].bind(py).clone()
}

/// The three delta events, the hot path: each is a copy of its template dict (the keys in
/// their order, so the copy needs no resizing) with the values set.
#[derive(Clone, Copy)]
enum DeltaKind {
    Text,
    Reasoning,
    Arguments,
}

fn delta_event<'py>(
    py: Python<'py>,
    kind: DeltaKind,
    seq: u64,
    output: usize,
    delta: Bound<'py, PyString>,
) -> PyResult<Bound<'py, PyDict>> {
    static TEMPLATES: PyOnceLock<[Py<PyDict>; 3]> = PyOnceLock::new();
    let templates = TEMPLATES.get_or_try_init(py, || -> PyResult<[Py<PyDict>; 3]> {
        let template = |kind: &str, content: bool, logprobs: bool| -> PyResult<Py<PyDict>> {
            let event = PyDict::new(py);
            event.set_item(intern!(py, "type"), kind)?;
            event.set_item(intern!(py, "item_id"), py.None())?;
            event.set_item(intern!(py, "output_index"), 0)?;
            if content {
                event.set_item(intern!(py, "content_index"), 0)?;
            }
            event.set_item(intern!(py, "delta"), py.None())?;
            if logprobs {
                event.set_item(intern!(py, "logprobs"), py.None())?;
            }
            event.set_item(intern!(py, "sequence_number"), 0)?;
            Ok(event.unbind())
        };
        Ok([
            template("response.output_text.delta", true, true)?,
            template("response.reasoning_text.delta", true, false)?,
            template("response.function_call_arguments.delta", false, false)?,
        ])
    })?;
    let (template, prefix) = match kind {
        DeltaKind::Text => (&templates[0], 0),
        DeltaKind::Reasoning => (&templates[1], 1),
        DeltaKind::Arguments => (&templates[2], 2),
    };
    let event = template.bind(py).copy()?;
    event.set_item(intern!(py, "item_id"), item_id_str(py, prefix, output))?;
    event.set_item(intern!(py, "output_index"), output)?;
    event.set_item(intern!(py, "delta"), delta)?;
    if let DeltaKind::Text = kind {
        event.set_item(intern!(py, "logprobs"), PyList::empty(py))?;
    }
    event.set_item(intern!(py, "sequence_number"), seq)?;
    Ok(event)
}

/// A wire event: `{"type": kind, **fields, "sequence_number": seq}`.
fn wire<'py>(
    py: Python<'py>,
    kind: &Bound<'py, PyString>,
    seq: u64,
    fields: &[(&Bound<'py, PyString>, Bound<'py, PyAny>)],
) -> PyResult<Bound<'py, PyDict>> {
    let event = PyDict::new(py);
    event.set_item(intern!(py, "type"), kind)?;
    for (key, value) in fields {
        event.set_item(key, value)?;
    }
    event.set_item(intern!(py, "sequence_number"), seq)?;
    Ok(event)
}

/// A content part: `output_text` (with `annotations`) or `reasoning_text`.
fn part<'py>(py: Python<'py>, kind: TextItem, text: Bound<'py, PyString>) -> PyResult<Bound<'py, PyAny>> {
    let part = PyDict::new(py);
    match kind {
        TextItem::Message => {
            part.set_item(intern!(py, "type"), intern!(py, "output_text"))?;
            part.set_item(intern!(py, "text"), text)?;
            part.set_item(intern!(py, "annotations"), PyList::empty(py))?;
        }
        TextItem::Reasoning => {
            part.set_item(intern!(py, "type"), intern!(py, "reasoning_text"))?;
            part.set_item(intern!(py, "text"), text)?;
        }
    }
    Ok(part.into_any())
}

/// A message or reasoning item at `status`, with `content`.
fn text_item<'py>(
    py: Python<'py>,
    kind: TextItem,
    output: usize,
    status: &Bound<'py, PyString>,
    content: Bound<'py, PyList>,
) -> PyResult<Bound<'py, PyAny>> {
    let item = PyDict::new(py);
    match kind {
        TextItem::Message => {
            item.set_item(intern!(py, "id"), item_id("msg", output))?;
            item.set_item(intern!(py, "type"), intern!(py, "message"))?;
            item.set_item(intern!(py, "role"), intern!(py, "assistant"))?;
            item.set_item(intern!(py, "status"), status)?;
            item.set_item(intern!(py, "content"), content)?;
        }
        TextItem::Reasoning => {
            item.set_item(intern!(py, "id"), item_id("rs", output))?;
            item.set_item(intern!(py, "type"), intern!(py, "reasoning"))?;
            item.set_item(intern!(py, "summary"), PyList::empty(py))?;
            item.set_item(intern!(py, "content"), content)?;
            item.set_item(intern!(py, "status"), status)?;
        }
    }
    Ok(item.into_any())
}

/// A `function_call` item.
fn call_item<'py>(
    py: Python<'py>,
    output: usize,
    call_id: &str,
    name: &str,
    arguments: Bound<'py, PyString>,
    status: &Bound<'py, PyString>,
) -> PyResult<Bound<'py, PyAny>> {
    let item = PyDict::new(py);
    item.set_item(intern!(py, "id"), item_id("fc", output))?;
    item.set_item(intern!(py, "type"), intern!(py, "function_call"))?;
    item.set_item(intern!(py, "call_id"), call_id)?;
    item.set_item(intern!(py, "name"), name)?;
    item.set_item(intern!(py, "arguments"), arguments)?;
    item.set_item(intern!(py, "status"), status)?;
    Ok(item.into_any())
}

/// `{"kind", "message", "span", "raw"}` of a failed call.
fn issue_dict<'py>(py: Python<'py>, issue: &Issue) -> PyResult<Bound<'py, PyAny>> {
    let body = PyDict::new(py);
    body.set_item(intern!(py, "kind"), PyString::intern(py, issue.kind.name()))?;
    body.set_item(intern!(py, "message"), &issue.message)?;
    body.set_item(intern!(py, "span"), PyList::new(py, [issue.char_span.0, issue.char_span.1])?)?;
    body.set_item(intern!(py, "raw"), py_str(py, &issue.raw)?)?;
    Ok(body.into_any())
}

/// Appends the wire dicts of `event` to `list`; `text` makes the str of a piece (the fed chunk
/// itself when the piece is all of it).
pub(crate) fn append_wire_events<'py>(
    py: Python<'py>,
    event: &ResponsesEvent<'_>,
    text: &impl Fn(&[u8]) -> PyResult<Bound<'py, PyString>>,
    list: &Bound<'py, PyList>,
) -> PyResult<()> {
    let (item_id_key, output_key, content_key) = (intern!(py, "item_id"), intern!(py, "output_index"), intern!(py, "content_index"));
    let index = |output: usize| output.into_pyobject(py).map(Bound::into_any);
    let zero = || 0usize.into_pyobject(py).map(Bound::into_any);
    let prefix = |kind: TextItem| if kind == TextItem::Message { "msg" } else { "rs" };
    match event {
        ResponsesEvent::TextOpened { seq, output, kind } => {
            let id = item_id(prefix(*kind), *output);
            let item = text_item(py, *kind, *output, intern!(py, "in_progress"), PyList::empty(py))?;
            list.append(wire(py, intern!(py, "response.output_item.added"), *seq, &[(output_key, index(*output)?), (intern!(py, "item"), item)])?)?;
            let empty = part(py, *kind, intern!(py, "").clone())?;
            let fields = [(item_id_key, id.into_pyobject(py)?.into_any()), (output_key, index(*output)?), (content_key, zero()?), (intern!(py, "part"), empty)];
            list.append(wire(py, intern!(py, "response.content_part.added"), seq + 1, &fields)?)?;
        }
        ResponsesEvent::CallOpened { seq, output, call_id, name } => {
            let item = call_item(py, *output, call_id, name, intern!(py, "").clone(), intern!(py, "in_progress"))?;
            list.append(wire(py, intern!(py, "response.output_item.added"), *seq, &[(output_key, index(*output)?), (intern!(py, "item"), item)])?)?;
        }
        ResponsesEvent::Text { seq, output, newline, text: bytes } => {
            let delta = if *newline { py_str(py, &[b"\n", *bytes].concat())? } else { text(bytes)? };
            list.append(delta_event(py, DeltaKind::Text, *seq, *output, delta)?)?;
        }
        ResponsesEvent::Reasoning { seq, output, text: bytes } => {
            list.append(delta_event(py, DeltaKind::Reasoning, *seq, *output, text(bytes)?)?)?;
        }
        ResponsesEvent::Arguments { seq, output, fragment } => {
            list.append(delta_event(py, DeltaKind::Arguments, *seq, *output, text(fragment)?)?)?;
        }
        ResponsesEvent::TextClosed { seq, output, kind, complete, text: bytes } => {
            let id = item_id(prefix(*kind), *output).into_pyobject(py)?.into_any();
            let whole = py_str(py, bytes)?;
            let (done, status) = match kind {
                TextItem::Message => (intern!(py, "response.output_text.done"), intern!(py, "completed")),
                TextItem::Reasoning => (intern!(py, "response.reasoning_text.done"), intern!(py, "completed")),
            };
            let status = if *complete { status } else { intern!(py, "incomplete") };
            let mut fields = vec![(item_id_key, id.clone()), (output_key, index(*output)?), (content_key, zero()?), (intern!(py, "text"), whole.clone().into_any())];
            if *kind == TextItem::Message {
                fields.push((intern!(py, "logprobs"), PyList::empty(py).into_any()));
            }
            list.append(wire(py, done, *seq, &fields)?)?;
            let fields = [(item_id_key, id), (output_key, index(*output)?), (content_key, zero()?), (intern!(py, "part"), part(py, *kind, whole.clone())?)];
            list.append(wire(py, intern!(py, "response.content_part.done"), seq + 1, &fields)?)?;
            let content = PyList::new(py, [part(py, *kind, whole)?])?;
            let item = text_item(py, *kind, *output, status, content)?;
            list.append(wire(py, intern!(py, "response.output_item.done"), seq + 2, &[(output_key, index(*output)?), (intern!(py, "item"), item)])?)?;
        }
        ResponsesEvent::CallClosed { seq, output, call_id, name, arguments, issue } => {
            let arguments = py_str(py, arguments)?;
            let mut seq = *seq;
            if issue.is_none() {
                let fields = [
                    (item_id_key, item_id("fc", *output).into_pyobject(py)?.into_any()),
                    (output_key, index(*output)?),
                    (intern!(py, "arguments"), arguments.clone().into_any()),
                ];
                list.append(wire(py, intern!(py, "response.function_call_arguments.done"), seq, &fields)?)?;
                seq += 1;
            }
            let status = if issue.is_none() { intern!(py, "completed") } else { intern!(py, "incomplete") };
            let item = call_item(py, *output, call_id, name, arguments, status)?;
            let done = wire(py, intern!(py, "response.output_item.done"), seq, &[(output_key, index(*output)?), (intern!(py, "item"), item)])?;
            if let Some(issue) = issue {
                // After `sequence_number`, as the Python rules add it.
                done.set_item(intern!(py, "agentmsg_issue"), issue_dict(py, issue)?)?;
            }
            list.append(done)?;
        }
    }
    Ok(())
}
