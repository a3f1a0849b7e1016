//! The results of parsing (`Parsed`, its blocks and issues) as the package's own Python
//! classes, built without `__init__` from the table of [`crate::classes`].

use agentmsg_core::parse::{Block, Document, Issue, ToolCall};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyList, PyString, PyTuple};

use crate::classes::{PARSED, PARSE_ISSUE, TEXT_BLOCK, THINKING_BLOCK, TOOL_USE_BLOCK};
use crate::ffi::GcPause;
use crate::json::object_to_py;
use crate::strings::py_str;

/// The str made last for one field of a run of results, reused while the value repeats: a
/// reply of many calls repeats names, messages and often raw texts, and a str is immutable, so
/// sharing one is invisible except in memory (a str per call would be most of a bad call's cost).
struct Reused<'d, 'py> {
    last: Option<(&'d [u8], Bound<'py, PyString>)>,
}

impl<'d, 'py> Reused<'d, 'py> {
    fn new() -> Self {
        Self { last: None }
    }

    fn get(&mut self, py: Python<'py>, bytes: &'d [u8]) -> PyResult<Bound<'py, PyString>> {
        match &self.last {
            Some((last, s)) if *last == bytes => Ok(s.clone()),
            _ => {
                let s = py_str(py, bytes)?;
                self.last = Some((bytes, s.clone()));
                Ok(s)
            }
        }
    }
}

/// The reused strs of the fields of calls and issues (see [`Reused`]).
pub(crate) struct CallStrs<'d, 'py> {
    name: Reused<'d, 'py>,
    server_name: Reused<'d, 'py>,
    message: Reused<'d, 'py>,
    raw: Reused<'d, 'py>,
}

impl CallStrs<'_, '_> {
    pub(crate) fn new() -> Self {
        Self { name: Reused::new(), server_name: Reused::new(), message: Reused::new(), raw: Reused::new() }
    }
}

pub(crate) fn tool_use_block<'d, 'py>(py: Python<'py>, call: &'d ToolCall, strs: &mut CallStrs<'d, 'py>) -> PyResult<Bound<'py, PyAny>> {
    let id = PyString::new(py, &call.id).into_any();
    let name = strs.name.get(py, call.name.as_bytes())?.into_any();
    let input = object_to_py(py, &call.input)?.into_any();
    let server_name = strs.server_name.get(py, call.server_name.as_bytes())?.into_any();
    let metadata = object_to_py(py, &call.metadata)?.into_any();
    TOOL_USE_BLOCK.build(py, [id, name, input, server_name, metadata])
}

pub(crate) fn parse_issue<'d, 'py>(py: Python<'py>, issue: &'d Issue, strs: &mut CallStrs<'d, 'py>) -> PyResult<Bound<'py, PyAny>> {
    let kind = PyString::intern(py, issue.kind.name()).into_any();
    let message = strs.message.get(py, issue.message.as_bytes())?.into_any();
    let span = PyTuple::new(py, [issue.char_span.0, issue.char_span.1])?.into_any();
    let raw = strs.raw.get(py, &issue.raw)?.into_any();
    PARSE_ISSUE.build(py, [kind, message, span, raw])
}

fn text_block<'py>(py: Python<'py>, text: Bound<'py, PyString>) -> PyResult<Bound<'py, PyAny>> {
    TEXT_BLOCK.build(py, [text.into_any()])
}

fn thinking_block<'py>(py: Python<'py>, thinking: Bound<'py, PyString>) -> PyResult<Bound<'py, PyAny>> {
    let signature = py.None().into_bound(py);
    THINKING_BLOCK.build(py, [thinking.into_any(), signature])
}

/// A `Parsed` from a core document.
pub(crate) fn parsed<'py>(py: Python<'py>, doc: &Document) -> PyResult<Bound<'py, PyAny>> {
    let blocks = PyList::empty(py);
    let thinking = PyList::empty(py);
    let tool_calls = PyList::empty(py);
    let text_runs = doc.blocks.iter().filter(|b| matches!(b, Block::Text(_))).count();
    // With one text run (the usual case) the visible text is that run's str, made once.
    let mut text: Option<Bound<'py, PyString>> = None;
    let mut strs = CallStrs::new();
    for block in &doc.blocks {
        match block {
            Block::Text(bytes) => {
                let s = py_str(py, bytes)?;
                if text_runs == 1 {
                    text = Some(s.clone());
                }
                blocks.append(text_block(py, s)?)?;
            }
            Block::Thinking(bytes) => {
                let s = py_str(py, bytes)?;
                thinking.append(&s)?;
                blocks.append(thinking_block(py, s)?)?;
            }
            Block::ToolCall(call) => {
                let b = tool_use_block(py, call, &mut strs)?;
                tool_calls.append(&b)?;
                blocks.append(b)?;
            }
        }
    }
    let text = match text {
        Some(text) => text,
        None if text_runs == 0 => intern!(py, "").clone(),
        None => py_str(py, &doc.text())?,
    };
    let errors = PyList::empty(py);
    for issue in &doc.issues {
        errors.append(parse_issue(py, issue, &mut strs)?)?;
    }
    let incomplete_thinking = PyBool::new(py, doc.incomplete_thinking).to_owned().into_any();
    PARSED.build(
        py,
        [text.into_any(), thinking.into_any(), tool_calls.into_any(), errors.into_any(), blocks.into_any(), incomplete_thinking],
    )
}

/// What a block of a stream's result is, for the lists of `Parsed` that hold one kind.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Text,
    Thinking,
    ToolCall,
}

/// A stream's `result()` built incrementally: the Python objects of the blocks and issues built
/// before are kept, and only the blocks that changed since (the open text or thinking run) and
/// the new ones are built, so calling it after every delta costs what changed, not the stream
/// so far (plus new lists of the blocks' objects, a copy of pointers).
#[derive(Default)]
pub(crate) struct StreamResult {
    /// Each block built, its kind and (text and thinking) its str.
    blocks: Vec<(Kind, Py<PyAny>, Option<Py<PyString>>)>,
    errors: Vec<Py<PyAny>>,
    /// The last result and whether it was built with incomplete thinking: returned again while
    /// nothing changed (a `Parsed` is frozen).
    last: Option<(bool, Py<PyAny>)>,
}

impl StreamResult {
    /// Forgets everything built: a new stream starts.
    pub(crate) fn reset(&mut self) {
        *self = Self::default();
    }

    /// The `Parsed` of `doc`, whose blocks from `changed_from` on changed since the last call.
    pub(crate) fn parsed<'py>(&mut self, py: Python<'py>, doc: &Document, changed_from: usize) -> PyResult<Bound<'py, PyAny>> {
        let unchanged = changed_from >= doc.blocks.len()
            && self.blocks.len() == doc.blocks.len()
            && self.errors.len() == doc.issues.len();
        if let (true, Some((incomplete, parsed))) = (unchanged, &self.last) {
            if *incomplete == doc.incomplete_thinking {
                return Ok(parsed.bind(py).clone());
            }
        }
        self.blocks.truncate(changed_from.min(doc.blocks.len()));
        self.errors.truncate(doc.issues.len());
        let mut strs = CallStrs::new();
        for block in &doc.blocks[self.blocks.len()..] {
            self.blocks.push(match block {
                Block::Text(bytes) => {
                    let s = py_str(py, bytes)?;
                    (Kind::Text, text_block(py, s.clone())?.unbind(), Some(s.unbind()))
                }
                Block::Thinking(bytes) => {
                    let s = py_str(py, bytes)?;
                    (Kind::Thinking, thinking_block(py, s.clone())?.unbind(), Some(s.unbind()))
                }
                Block::ToolCall(call) => (Kind::ToolCall, tool_use_block(py, call, &mut strs)?.unbind(), None),
            });
        }
        for issue in &doc.issues[self.errors.len()..] {
            self.errors.push(parse_issue(py, issue, &mut strs)?.unbind());
        }
        let of_kind = |kind: Kind| self.blocks.iter().filter(move |(k, _, _)| *k == kind);
        let strs_of = |kind: Kind| of_kind(kind).filter_map(|(_, _, s)| s.as_ref().map(|s| s.bind(py).clone()));
        let texts: Vec<Bound<'py, PyString>> = strs_of(Kind::Text).collect();
        let text = match texts.len() {
            0 => intern!(py, "").clone(),
            1 => texts[0].clone(),
            _ => intern!(py, "\n").call_method1(intern!(py, "join"), (PyList::new(py, texts)?,))?.cast_into::<PyString>()?,
        };
        let thinking = PyList::new(py, strs_of(Kind::Thinking))?;
        let tool_calls = PyList::new(py, of_kind(Kind::ToolCall).map(|(_, object, _)| object.bind(py)))?;
        let errors = PyList::new(py, self.errors.iter().map(|error| error.bind(py)))?;
        let blocks = PyList::new(py, self.blocks.iter().map(|(_, object, _)| object.bind(py)))?;
        let incomplete_thinking = PyBool::new(py, doc.incomplete_thinking).to_owned().into_any();
        let parsed = PARSED.build(
            py,
            [text.into_any(), thinking.into_any(), tool_calls.into_any(), errors.into_any(), blocks.into_any(), incomplete_thinking],
        )?;
        self.last = Some((doc.incomplete_thinking, parsed.clone().unbind()));
        Ok(parsed)
    }
}

/// The `Parsed` of each document, built with the cyclic GC paused (a batch makes many objects).
pub(crate) fn parsed_list<'py>(py: Python<'py>, docs: &[Document]) -> PyResult<Bound<'py, PyList>> {
    let out = PyList::empty(py);
    let _paused = GcPause::new(py);
    for doc in docs {
        out.append(parsed(py, doc)?)?;
    }
    Ok(out)
}
