//! Many streams per call: `StreamBatch`, for a server that advances all its streams by one
//! engine step at a time. One call reads a step's (stream, text) pairs, runs every stream's
//! machine with the GIL released, and returns each pair's OpenAI deltas.

use std::borrow::Cow;
use std::collections::HashMap;

use agentmsg_core::parse::deltas::DeltaState;
use agentmsg_core::parse::{Event, Options, StartThinking, StreamMachine};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};

use crate::deltas::delta_dict;
use crate::errors::{describe, type_name, ErrorClass};
use crate::options::ParseArgs;
use crate::strings::{py_str, text_bytes};

/// One stream of a batch: its machine and what its deltas remember.
struct Stream {
    machine: StreamMachine,
    deltas: DeltaState,
}

/// Many streams of model text, advanced together: one call per engine step for all of them.
///
/// ``StreamBatch(**options)`` takes ``StreamParser``'s options, shared by its streams. ``add()``
/// opens a stream and returns its id (an int); ``step(pairs)`` takes one step's ``(stream,
/// text)`` pairs (a stream may appear more than once; its texts are read in order), runs the
/// parsers with the GIL released, and returns, for each pair in order, the OpenAI Chat
/// Completions deltas its text completes; ``finish(stream)`` ends a stream, returns its last
/// deltas and closes it. Stream by stream, the deltas are what ``StreamParser.feed_openai`` and
/// ``finish_openai`` give. A bad pair (an unknown stream, a text that is not a str) raises
/// before any stream moves.
///
/// >>> batch = StreamBatch(dialect="hermes")
/// >>> a, b = batch.add(), batch.add()
/// >>> batch.step([(a, "Hi"), (b, '<tool_call>{"name": "f", ')])
/// [[{'content': 'Hi'}], [{'tool_calls': [{'index': 0, 'id': 'call_...', 'type': 'function', 'function': {'name': 'f', 'arguments': ''}}]}]]
/// >>> batch.step([(b, '"arguments": {}}</tool_call>')])
/// [[{'tool_calls': [{'index': 0, 'function': {'arguments': '{}'}}]}]]
/// >>> batch.finish(a), batch.finish(b), len(batch)
/// ([], [], 0)
#[pyclass(module = "agentmsg.parsing")]
pub struct StreamBatch {
    options: Options,
    streams: HashMap<u64, Stream>,
    next_id: u64,
}

impl StreamBatch {
    fn unknown(py: Python<'_>, id: &Bound<'_, PyAny>, where_: &str) -> PyErr {
        ErrorClass::Message.new_err(py, format!("{where_}: no open stream {} in this batch", describe(id)))
    }
}

#[pymethods]
impl StreamBatch {
    #[new]
    #[pyo3(signature = (*, dialect=None, thinking=None, tool_format=None, code_fences=None, start_in_thinking=None,
                        max_calls=None, tools=None, **unexpected))]
    #[allow(clippy::too_many_arguments)]
    fn new<'py>(
        py: Python<'py>,
        dialect: Option<&Bound<'py, PyAny>>,
        thinking: Option<&Bound<'py, PyAny>>,
        tool_format: Option<&Bound<'py, PyAny>>,
        code_fences: Option<&Bound<'py, PyAny>>,
        start_in_thinking: Option<&Bound<'py, PyAny>>,
        max_calls: Option<&Bound<'py, PyAny>>,
        tools: Option<&Bound<'py, PyAny>>,
        unexpected: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Self> {
        let args = ParseArgs { dialect, thinking, tool_format, code_fences, start_in_thinking, max_calls, tools, unexpected };
        let options = args.options(py, "StreamBatch", StartThinking::No)?;
        Ok(Self { options, streams: HashMap::new(), next_id: 0 })
    }

    /// Opens a stream; returns its id.
    fn add(&mut self) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        self.streams.insert(id, Stream { machine: StreamMachine::new(self.options.clone()), deltas: DeltaState::default() });
        id
    }

    /// Reads one step's ``(stream, text)`` pairs; returns each pair's deltas, in order.
    fn step<'py>(&mut self, py: Python<'py>, pairs: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyList>> {
        let Ok(pairs) = pairs.cast::<PyList>() else {
            return Err(ErrorClass::MessageType.new_err(py, format!("pairs must be a list of (stream, text) tuples, not {}", type_name(pairs))));
        };
        // Read and check every pair first: a bad one moves no stream.
        let mut ids = Vec::with_capacity(pairs.len());
        let mut texts: Vec<Bound<'py, PyString>> = Vec::with_capacity(pairs.len());
        for (i, pair) in pairs.iter().enumerate() {
            let Some((id, text)) = pair.cast::<PyTuple>().ok().filter(|t| t.len() == 2).map(|t| (t.get_item(0), t.get_item(1))) else {
                let message = format!("pairs[{i}] must be a (stream, text) tuple, not {}", type_name(&pair));
                return Err(ErrorClass::MessageType.new_err(py, message));
            };
            let (id, text) = (id?, text?);
            let key = id.extract::<u64>().ok().filter(|key| self.streams.contains_key(key));
            let Some(key) = key else { return Err(Self::unknown(py, &id, &format!("pairs[{i}]"))) };
            let Ok(text) = text.cast_into::<PyString>() else {
                return Err(ErrorClass::MessageType.new_err(py, format!("pairs[{i}]: the text must be a str")));
            };
            ids.push(key);
            texts.push(text);
        }
        let bytes: Vec<Cow<'_, [u8]>> = texts.iter().map(|text| text_bytes(text)).collect::<PyResult<_>>()?;
        let streams = &mut self.streams;
        let events: Vec<Vec<Event>> = py.detach(|| {
            ids.iter()
                .zip(&bytes)
                .map(|(id, bytes)| {
                    let mut events = Vec::new();
                    if let Some(stream) = streams.get_mut(id) {
                        stream.machine.feed_into(bytes, &mut events);
                    }
                    events
                })
                .collect()
        });
        let out = PyList::empty(py);
        for ((id, events), (text, bytes)) in ids.iter().zip(&events).zip(texts.iter().zip(&bytes)) {
            let Some(stream) = self.streams.get_mut(id) else { continue };
            let piece = |piece: &[u8]| -> PyResult<Bound<'py, PyString>> {
                if piece == &bytes[..] { Ok(text.clone()) } else { py_str(py, piece) }
            };
            let deltas = PyList::empty(py);
            for event in events {
                if let Some(delta) = stream.deltas.delta(event) {
                    deltas.append(delta_dict(py, &delta, &piece)?)?;
                }
            }
            out.append(deltas)?;
        }
        Ok(out)
    }

    /// Ends a stream: returns its last deltas and closes it.
    fn finish<'py>(&mut self, py: Python<'py>, stream: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyList>> {
        let key = stream.extract::<u64>().ok().filter(|key| self.streams.contains_key(key));
        let Some(mut open) = key.and_then(|key| self.streams.remove(&key)) else {
            return Err(Self::unknown(py, stream, "finish"));
        };
        let events = open.machine.finish();
        let deltas = PyList::empty(py);
        for event in &events {
            if let Some(delta) = open.deltas.delta(event) {
                deltas.append(delta_dict(py, &delta, &|piece: &[u8]| py_str(py, piece))?)?;
            }
        }
        Ok(deltas)
    }

    /// The number of open streams.
    fn __len__(&self) -> usize {
        self.streams.len()
    }

    /// Streams in progress are not pickled (see ``StreamParser``).
    fn __reduce__(&self, py: Python<'_>) -> PyResult<()> {
        Err(ErrorClass::MessageType.new_err(
            py,
            "a StreamBatch cannot be pickled or copied: it holds streams in progress; create one with the \
             same options in the process that reads the streams",
        ))
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<StreamBatch>()?;
    Ok(())
}
