//! The stream parsers: one wrapper, [`Stream`], drives a core stream machine (Forge's or a
//! dialect's) chunk by chunk, turns its events into Python events and folds them into the
//! stream's `Parsed`; `StreamParser` is Forge's.

use agentmsg_core::parse::{Event, Folder, StartThinking, StreamMachine};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};

use crate::events::{event_object, is_shown};
use crate::ffi::list_of_len;
use crate::pystr::{as_text, py_str, text_bytes};
use crate::results::parsed;

/// The error for keyword arguments a stream method does not take: `MessageTypeError`, as every
/// public callable gives, where PyO3 would give a bare `TypeError`. Reading them as `**unexpected`
/// costs nothing when none are given.
pub(crate) fn refuse_keywords(method: &str, takes: &str, unexpected: Option<&Bound<'_, PyDict>>) -> PyResult<()> {
    let Some((name, _)) = unexpected.and_then(|keywords| keywords.iter().next()) else {
        return Ok(());
    };
    let message = format!(
        "StreamParser.{method}() got an unexpected keyword argument {}; it takes: {takes}",
        crate::errors::describe(&name)
    );
    Err(crate::errors::ErrorClass::MessageType.new_err(name.py(), message))
}

/// A core stream machine as [`Stream`] drives it.
pub(crate) trait Machine {
    /// What the machine reports.
    type Event;
    /// Whether a bare tool start is shown (a dialect announces a call with its header instead).
    const SHOWS_TOOL_START: bool;
    fn feed_into(&mut self, chunk: &[u8], events: &mut Vec<Self::Event>);
    fn finish(&mut self) -> Vec<Self::Event>;
    /// Whether the stream shows `event` as a Python event.
    fn is_shown(event: &Self::Event) -> bool;
    /// The parse event of a machine event, or the Python event of one only this machine has.
    fn split<'py>(py: Python<'py>, event: Self::Event) -> PyResult<Result<Event, Bound<'py, PyAny>>>;
}

/// A stream in progress: the machine, the fold of its events into a document (for `result()`),
/// and what turning events into Python events needs between chunks.
pub(crate) struct Stream<M: Machine> {
    machine: M,
    /// The result of the stream so far, for `result()`.
    folder: Folder<'static>,
    /// The last stream finished: the next `feed` starts a new one.
    finished: bool,
    /// The text run the last text delta belonged to.
    text_block: Option<usize>,
    /// Event buffer reused across `feed` calls.
    buffer: Vec<M::Event>,
}

impl<M: Machine> Stream<M> {
    pub(crate) fn new(machine: M) -> Self {
        Self { machine, folder: Folder::for_stream(), finished: false, text_block: None, buffer: Vec::new() }
    }

    /// The events `chunk` completes; `None` is an empty chunk (an SDK delta without content).
    pub(crate) fn feed<'py>(&mut self, py: Python<'py>, chunk: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyList>> {
        if chunk.is_none() {
            return Ok(PyList::empty(py));
        }
        let chunk = as_text(chunk, "chunk")?;
        let bytes = text_bytes(chunk)?;
        if std::mem::take(&mut self.finished) {
            self.folder = Folder::for_stream();
        }
        let mut events = std::mem::take(&mut self.buffer);
        self.machine.feed_into(&bytes, &mut events);
        let list = self.events(py, &mut events, Some((chunk, &bytes)));
        self.buffer = events;
        list
    }

    /// Ends the stream; the last events.
    pub(crate) fn finish<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let mut events = self.machine.finish();
        let list = self.events(py, &mut events, None);
        self.text_block = None;
        self.finished = true;
        list
    }

    /// The `Parsed` of the stream so far.
    pub(crate) fn result<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        parsed(py, self.folder.document())
    }

    /// The Python events for `events`, which is left empty (its allocation is reused). A piece
    /// of text equal to the whole `chunk` fed (the usual case for small chunks) is that same
    /// str, not a copy.
    fn events<'py>(
        &mut self,
        py: Python<'py>,
        events: &mut Vec<M::Event>,
        chunk: Option<(&Bound<'py, PyString>, &[u8])>,
    ) -> PyResult<Bound<'py, PyList>> {
        let text = |bytes: &[u8]| -> PyResult<Py<PyString>> {
            match chunk {
                Some((chunk, chunk_bytes)) if chunk_bytes == bytes => Ok(chunk.clone().unbind()),
                _ => Ok(py_str(py, bytes)?.unbind()),
            }
        };
        let shown = events.iter().filter(|event| M::is_shown(event)).count();
        let (folder, text_block) = (&mut self.folder, &mut self.text_block);
        let objects = events.drain(..).filter_map(|event| {
            let event = match M::split(py, event) {
                Ok(Ok(event)) => event,
                Ok(Err(own)) => return Some(Ok(own)),
                Err(error) => return Some(Err(error)),
            };
            // Argument fragments are not needed in the result: the call arrives whole with its end.
            if !matches!(event, Event::ToolDelta { .. } | Event::ToolStart { .. }) {
                folder.push(event.clone());
            }
            event_object(py, event, text_block, &text, M::SHOWS_TOOL_START).transpose()
        });
        list_of_len(py, shown, objects)
    }
}

/// Defines a stream parser class over a core stream machine: the machine's [`Machine`] impl
/// (its own `feed_into` and `finish`, and `$machine_item`s: what it reports and how that shows)
/// and the class, in Python module `$module`. Its constructor takes the parsers' keyword options
/// (`**options`, read into [`Keywords`](crate::options::Keywords)) and reads them with the method
/// `$read` (`start_in_thinking` is "no" when not given: a stream cannot look ahead); its `feed`,
/// `finish` and `result` drive a [`Stream`]; it refuses to be pickled; `$method`s are its own
/// further methods.
macro_rules! stream_parser_class {
    (
        $(#[$class_attr:meta])* class $class:ident in $module:literal,
        machine $machine:ident { $($machine_item:tt)* },
        options => $read:ident,
        methods { $($method:tt)* } $(,)?
    ) => {
        impl $crate::stream::Machine for $machine {
            fn feed_into(&mut self, chunk: &[u8], events: &mut Vec<Self::Event>) {
                $machine::feed_into(self, chunk, events);
            }

            fn finish(&mut self) -> Vec<Self::Event> {
                $machine::finish(self)
            }

            $($machine_item)*
        }

        $(#[$class_attr])*
        // `subclass`: the Python `StreamParser` classes (`agentmsg`, `agentmsg.dialects`) derive from it.
        #[pyclass(subclass, module = $module)]
        pub struct $class {
            stream: $crate::stream::Stream<$machine>,
        }

        #[pymethods]
        impl $class {
            #[new]
            #[pyo3(signature = (**options))]
            fn new(py: Python<'_>, options: Option<&Bound<'_, pyo3::types::PyDict>>) -> PyResult<Self> {
                let keywords = $crate::options::Keywords::read(stringify!($class), options)?;
                let options = keywords.$read(py, StartThinking::No)?;
                Ok(Self { stream: $crate::stream::Stream::new($machine::new(options)) })
            }

            /// Reads the next chunk; returns the events it completes.
            /// ``None`` is an empty chunk (an SDK delta without content).
            #[pyo3(signature = (chunk, **unexpected))]
            fn feed<'py>(
                &mut self,
                py: Python<'py>,
                chunk: &Bound<'py, PyAny>,
                unexpected: Option<&Bound<'py, pyo3::types::PyDict>>,
            ) -> PyResult<Bound<'py, PyList>> {
                $crate::stream::refuse_keywords("feed", "chunk", unexpected)?;
                self.stream.feed(py, chunk)
            }

            /// Ends the stream; returns the last events.
            #[pyo3(signature = (**unexpected))]
            fn finish<'py>(
                &mut self,
                py: Python<'py>,
                unexpected: Option<&Bound<'py, pyo3::types::PyDict>>,
            ) -> PyResult<Bound<'py, PyList>> {
                $crate::stream::refuse_keywords("finish", "no arguments", unexpected)?;
                self.stream.finish(py)
            }

            /// The ``Parsed`` of the stream so far (after ``finish()``: of the whole stream, equal
            /// to the whole-text parse of the text fed with the same options).
            fn result<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
                self.stream.result(py)
            }

            /// A stream in progress is not pickled (nor copied, which goes through pickling): it
            /// belongs to one connection, and a worker that receives text starts its own parser
            /// with the same options.
            fn __reduce__(&self, py: Python<'_>) -> PyResult<()> {
                Err($crate::errors::ErrorClass::MessageType.new_err(
                    py,
                    "a StreamParser cannot be pickled or copied: it holds a stream in progress; create a \
                     StreamParser with the same options in the process that reads the stream",
                ))
            }

            $($method)*
        }
    };
}
pub(crate) use stream_parser_class;

stream_parser_class! {
    /// Incremental parser of streamed model text; same rules and options as ``parse``, except
    /// ``start_in_thinking`` is explicit (default False: a stream cannot look ahead).
    ///
    /// ``feed(chunk)`` returns the events the chunk completes; ``finish()`` flushes what was held
    /// back (a possible partial tag, an undecided bracket line) and reports an unclosed call or
    /// thinking block. After ``finish()`` the parser is ready for a new stream.
    ///
    /// >>> p = StreamParser()
    /// >>> p.feed("Hi <thi") + p.feed("nk>hmm</think>")
    /// [TextDelta(text='Hi'), ThinkingDelta(index=0, text='hmm'), ThinkingEnd(index=0, complete=True)]
    /// >>> p.finish()
    /// []
    class StreamParser in "agentmsg._core",
    machine StreamMachine {
        type Event = Event;
        const SHOWS_TOOL_START: bool = true;

        fn is_shown(event: &Event) -> bool {
            is_shown(event, Self::SHOWS_TOOL_START)
        }

        fn split<'py>(_: Python<'py>, event: Event) -> PyResult<Result<Event, Bound<'py, PyAny>>> {
            Ok(Ok(event))
        }
    },
    options => forge,
    methods {},
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<StreamParser>()?;
    Ok(())
}
