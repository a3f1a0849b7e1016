//! Many streams per call: `StreamBatch`, for a server that advances all its streams by one
//! engine step at a time. One call reads a step's (stream, text) pairs, runs every stream's
//! machine with the GIL released, and returns each pair's OpenAI deltas.

use std::borrow::Cow;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use std::sync::Arc;

use agentmsg_core::ids::{IdReader, IdVocabulary};
use agentmsg_core::parse::deltas::DeltaState;
use agentmsg_core::parse::responses::ResponsesState;
use agentmsg_core::parse::{Event, Options, StartThinking, StreamMachine};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};

use crate::deltas::delta_dict;
use crate::responses::{append_wire_events, sequence_number_arg};
use crate::errors::{borrow_parser, borrow_parser_mut, describe, type_name, ErrorClass};
use crate::ffi::GcPause;
use crate::options::ParseArgs;
use crate::stream::refuse_keywords_of;
use crate::strings::{py_str, text_bytes};
use crate::tokenizer::{extract_ids, id_vocabulary_of, raise};

/// One stream of a batch: its machine, what its deltas remember and, with a tokenizer, its ids
/// decoded as they come.
struct Stream {
    machine: StreamMachine,
    deltas: DeltaState,
    /// With `output="responses"`: what its Responses events remember.
    responses: ResponsesState,
    ids: Option<IdReader>,
}

impl Stream {
    /// The output of `events` (its OpenAI deltas, or its Responses events, the open item closed
    /// if `finished`) appended to `list`.
    fn output<'py>(
        &mut self,
        py: Python<'py>,
        responses: bool,
        events: &[Event],
        finished: bool,
        piece: &impl Fn(&[u8]) -> PyResult<Bound<'py, PyString>>,
        list: &Bound<'py, PyList>,
    ) -> PyResult<()> {
        if !responses {
            for event in events {
                if let Some(delta) = self.deltas.delta(event) {
                    list.append(delta_dict(py, &delta, piece)?)?;
                }
            }
            return Ok(());
        }
        let mut out = Vec::new();
        for event in events {
            self.responses.events(event, &mut out);
        }
        if finished {
            self.responses.finish(&mut out);
        }
        for event in &out {
            append_wire_events(py, event, piece, list)?;
        }
        Ok(())
    }
}

/// What one pair of a step brings: text, or token ids (with a tokenizer).
enum Input<'py> {
    Text(Bound<'py, PyString>),
    Ids(Vec<u32>),
}

/// Hashes a stream id as itself: ids are distinct counters, and a step looks one up per pair.
#[derive(Default)]
struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8) | u64::from(b);
        }
    }

    fn write_u64(&mut self, id: u64) {
        self.0 = id;
    }
}

/// Many streams of model text, advanced together: one call per engine step for all of them.
///
/// ``StreamBatch(**options)`` takes ``StreamParser``'s options, shared by its streams. ``add()``
/// opens a stream and returns its id (an int); ``step(pairs)`` takes one step's ``(stream,
/// text)`` pairs (a stream may appear more than once; its texts are read in order), runs the
/// parsers with the GIL released, and returns, for each pair in order, the OpenAI Chat
/// Completions deltas its text completes; ``finish(stream)`` ends a stream, returns its last
/// deltas and closes it. Stream by stream, the deltas are what ``StreamParser.feed_openai`` and
/// ``finish_openai`` give. With ``tokenizer=`` (as ``StreamParser`` takes it) the pairs are
/// ``(stream, ids)``, a list of the token ids a stream sampled in the step, and each stream's
/// deltas are those of ``StreamParser.feed_ids_openai``. With ``output="responses"`` each pair
/// gets the OpenAI Responses API events that ``StreamParser.feed_responses`` gives (and
/// ``finish`` those of ``finish_responses``); ``add(sequence_number=n)`` numbers a stream's
/// events from ``n``. A bad pair (an unknown stream, a text that is not a str) raises
/// before any stream moves. A batch is used by one thread at a time: a call while another
/// thread's call on the same batch runs (``step`` releases the GIL) raises ``MessageError``.
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
    /// With a tokenizer: what each stream reads its ids with.
    vocabulary: Option<Arc<IdVocabulary>>,
    /// The open streams, in no order; `slots` maps a stream's id to its place here.
    streams: Vec<Stream>,
    ids: Vec<u64>,
    slots: HashMap<u64, usize, BuildHasherDefault<IdHasher>>,
    next_id: u64,
    /// `output="responses"`: Responses API events, not Chat Completions deltas.
    responses: bool,
    /// The events of a step, all pairs' in one buffer (`ends[i]`: where pair `i`'s end),
    /// reused from step to step.
    events: Vec<Event>,
    ends: Vec<usize>,
}

impl StreamBatch {
    fn unknown(py: Python<'_>, id: &Bound<'_, PyAny>, where_: &str) -> PyErr {
        ErrorClass::Message.new_err(py, format!("{where_}: no open stream {} in this batch", describe(id)))
    }

    /// The place of the open stream `id` (a Python value).
    fn slot(&self, id: &Bound<'_, PyAny>) -> Option<usize> {
        id.extract::<u64>().ok().and_then(|id| self.slots.get(&id).copied())
    }
}

#[pymethods]
impl StreamBatch {
    #[new]
    #[pyo3(signature = (*, dialect=None, thinking=None, tool_format=None, code_fences=None, start_in_thinking=None,
                        max_calls=None, tools=None, tokenizer=None, output=None, strict=None, **unexpected))]
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
        tokenizer: Option<&Bound<'py, PyAny>>,
        output: Option<&Bound<'py, PyAny>>,
        strict: Option<&Bound<'py, PyAny>>,
        unexpected: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Self> {
        let args = ParseArgs { dialect, thinking, tool_format, code_fences, start_in_thinking, max_calls, tools, strict, unexpected };
        let options = args.options(py, "StreamBatch", StartThinking::No)?;
        let responses = match output.filter(|output| !output.is_none()) {
            None => false,
            Some(output) => match output.cast::<PyString>() {
                Ok(name) if name.to_str()? == "openai" => false,
                Ok(name) if name.to_str()? == "responses" => true,
                Ok(_) => {
                    let message = format!("output must be 'openai' or 'responses', not {}", describe(output));
                    return Err(ErrorClass::Message.new_err(py, message));
                }
                Err(_) => {
                    let message = format!("output must be 'openai' or 'responses', not {}", type_name(output));
                    return Err(ErrorClass::MessageType.new_err(py, message));
                }
            },
        };
        let vocabulary = match tokenizer.filter(|tokenizer| !tokenizer.is_none()) {
            Some(tokenizer) => Some(id_vocabulary_of(py, tokenizer, "StreamBatch")?),
            None => None,
        };
        Ok(Self {
            options,
            vocabulary,
            streams: Vec::new(),
            ids: Vec::new(),
            slots: HashMap::default(),
            next_id: 0,
            responses,
            events: Vec::new(),
            ends: Vec::new(),
        })
    }

    /// Opens a stream; returns its id. ``sequence_number`` (``output="responses"`` only): the
    /// number of the stream's first event, the next after the server's own (default 0).
    #[pyo3(signature = (*, sequence_number=None, **unexpected))]
    fn add(slf: &Bound<'_, Self>, sequence_number: Option<&Bound<'_, PyAny>>, unexpected: Option<&Bound<'_, PyDict>>) -> PyResult<u64> {
        let py = slf.py();
        let mut this = borrow_parser_mut(slf, "StreamBatch")?;
        let this = &mut *this;
        refuse_keywords_of("StreamBatch.add", "sequence_number", unexpected)?;
        let seq = sequence_number_arg(py, sequence_number)?;
        if seq.is_some() && !this.responses {
            let message = "StreamBatch.add(sequence_number=...) numbers Responses API events: create the batch with output=\"responses\"";
            return Err(ErrorClass::Message.new_err(py, message));
        }
        let id = this.next_id;
        this.next_id += 1;
        this.slots.insert(id, this.streams.len());
        this.ids.push(id);
        let ids = this.vocabulary.as_ref().map(|vocabulary| IdReader::new(Arc::clone(vocabulary)));
        let mut responses = ResponsesState::default();
        responses.set_sequence_number(seq.unwrap_or(0));
        this.streams.push(Stream { machine: StreamMachine::new(this.options.clone()), deltas: DeltaState::default(), responses, ids });
        Ok(id)
    }

    /// Reads one step's ``(stream, text)`` pairs; returns each pair's deltas, in order.
    #[pyo3(signature = (pairs, **unexpected))]
    fn step<'py>(
        slf: &Bound<'py, Self>,
        py: Python<'py>,
        pairs: &Bound<'py, PyAny>,
        unexpected: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyList>> {
        let mut this = borrow_parser_mut(slf, "StreamBatch")?;
        let this = &mut *this;
        refuse_keywords_of("StreamBatch.step", "pairs", unexpected)?;
        let Ok(pairs) = pairs.cast::<PyList>() else {
            return Err(ErrorClass::MessageType.new_err(py, format!("pairs must be a list of (stream, text) tuples, not {}", type_name(pairs))));
        };
        // Read and check every pair first: a bad one moves no stream.
        let wrong = if this.vocabulary.is_some() {
            "the ids must be a list of int token ids (the batch has a tokenizer)"
        } else {
            "the text must be a str"
        };
        let mut slots = Vec::with_capacity(pairs.len());
        let mut inputs: Vec<Input<'py>> = Vec::with_capacity(pairs.len());
        for (i, pair) in pairs.iter().enumerate() {
            let Some((id, item)) = pair.cast::<PyTuple>().ok().filter(|t| t.len() == 2).map(|t| (t.get_item(0), t.get_item(1))) else {
                let message = format!("pairs[{i}] must be a (stream, {}) tuple, not {}", if this.vocabulary.is_some() { "ids" } else { "text" }, type_name(&pair));
                return Err(ErrorClass::MessageType.new_err(py, message));
            };
            let (id, item) = (id?, item?);
            let Some(slot) = this.slot(&id) else { return Err(Self::unknown(py, &id, &format!("pairs[{i}]"))) };
            let is_ids = item.is_instance_of::<PyList>() || item.is_instance_of::<PyTuple>();
            let input = match (&this.vocabulary, item.cast_into::<PyString>()) {
                (None, Ok(text)) => Input::Text(text),
                (Some(vocabulary), Err(item)) if is_ids => {
                    let ids = extract_ids(py, &item.into_inner(), &format!("pairs[{i}]: ids"))?;
                    vocabulary.check(&ids).map_err(|error| raise(py, error))?;
                    Input::Ids(ids)
                }
                _ => return Err(ErrorClass::MessageType.new_err(py, format!("pairs[{i}]: {wrong}"))),
            };
            slots.push(slot);
            inputs.push(input);
        }
        let bytes: Vec<Cow<'_, [u8]>> = inputs
            .iter()
            .map(|input| match input {
                Input::Text(text) => text_bytes(text),
                Input::Ids(_) => Ok(Cow::Borrowed(&[][..])),
            })
            .collect::<PyResult<_>>()?;
        // The ids of each pair, apart from the Python values the GIL guards.
        let id_lists: Vec<Option<&[u32]>> =
            inputs.iter().map(|input| if let Input::Ids(ids) = input { Some(&ids[..]) } else { None }).collect();
        let (streams, events, ends) = (&mut this.streams, &mut this.events, &mut this.ends);
        events.clear();
        ends.clear();
        py.detach(|| {
            // Each machine appends to an empty buffer: it merges a piece into the last event
            // when that is its own text's.
            let mut scratch = Vec::new();
            let (mut decoded, mut spelled) = (Vec::new(), Vec::new());
            for ((&slot, bytes), ids) in slots.iter().zip(&bytes).zip(&id_lists) {
                let stream = &mut streams[slot];
                match (ids, &mut stream.ids) {
                    (Some(ids), Some(reader)) => {
                        decoded.clear();
                        spelled.clear();
                        // Checked above: every id is a token.
                        let _ = reader.read(ids, &mut decoded, &mut spelled);
                        stream.machine.feed_into_spelled(&decoded, &spelled, &mut scratch);
                    }
                    _ => stream.machine.feed_into(bytes, &mut scratch),
                }
                events.append(&mut scratch);
                ends.push(events.len());
            }
        });
        // Hundreds of new lists and dicts per step would set off collections that traverse
        // them (and everything older) again and again: a third of a step's time.
        let _paused = GcPause::new(py);
        let out = PyList::empty(py);
        let mut start = 0;
        for ((&slot, &end), (input, bytes)) in slots.iter().zip(ends.iter()).zip(inputs.iter().zip(&bytes)) {
            let piece = |piece: &[u8]| -> PyResult<Bound<'py, PyString>> {
                match input {
                    Input::Text(text) if piece == &bytes[..] => Ok(text.clone()),
                    _ => py_str(py, piece),
                }
            };
            let deltas = PyList::empty(py);
            streams[slot].output(py, this.responses, &events[start..end], false, &piece, &deltas)?;
            start = end;
            out.append(deltas)?;
        }
        events.clear();
        Ok(out)
    }

    /// Ends a stream: returns its last deltas and closes it.
    #[pyo3(signature = (stream, **unexpected))]
    fn finish<'py>(
        slf: &Bound<'py, Self>,
        py: Python<'py>,
        stream: &Bound<'py, PyAny>,
        unexpected: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyList>> {
        let mut this = borrow_parser_mut(slf, "StreamBatch")?;
        let this = &mut *this;
        refuse_keywords_of("StreamBatch.finish", "stream", unexpected)?;
        let Some(slot) = this.slot(stream) else { return Err(Self::unknown(py, stream, "finish")) };
        let mut open = this.streams.swap_remove(slot);
        this.slots.remove(&this.ids.swap_remove(slot));
        if let Some(&moved) = this.ids.get(slot) {
            this.slots.insert(moved, slot); // the last stream took the closed one's place
        }
        let mut events = Vec::new();
        if let Some(reader) = &mut open.ids {
            // A character still cut ends the text as U+FFFD, as `decode` gives it.
            let (mut text, mut spelled) = (Vec::new(), Vec::new());
            reader.finish(&mut text, &mut spelled);
            open.machine.feed_into_spelled(&text, &spelled, &mut events);
        }
        events.extend(open.machine.finish());
        let deltas = PyList::empty(py);
        open.output(py, this.responses, &events, true, &|piece: &[u8]| py_str(py, piece), &deltas)?;
        Ok(deltas)
    }

    /// The number of open streams.
    fn __len__(slf: &Bound<'_, Self>) -> PyResult<usize> {
        Ok(borrow_parser(slf, "StreamBatch")?.streams.len())
    }

    /// Streams in progress are not pickled (see ``StreamParser``).
    fn __reduce__(_slf: &Bound<'_, Self>, py: Python<'_>) -> PyResult<()> {
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
