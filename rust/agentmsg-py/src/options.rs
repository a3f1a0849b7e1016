//! The one reader of the parser options (`parse`, `parse_many`, `StreamParser`, `parse_arrow`).
//!
//! Each function declares the options in its keyword-only signature; [`ParseArgs::options`]
//! reads them into the core's one [`Options`]. Each value is read by its own `FromPyObject`
//! type, whose error text is written once here. The dialect is read first: Forge's options are
//! read only for Forge's dialect, and another dialect refuses them by name (unless given at
//! their defaults), whatever they hold.

use std::sync::Arc;

use agentmsg_core::parse::dialect::quoted;
use agentmsg_core::parse::{CustomDialect, Dialect, ForgeOptions, Options, StartThinking, ThinkingMode, ToolFormat, Tools};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyDict, PyInt, PyString, PyType};
use pyo3::IntoPyObjectExt;

use crate::errors::{core_error_in, describe, type_name, ErrorClass};

/// Every option's name, sorted: what an unknown option's error lists.
const OPTION_NAMES: [&str; 8] =
    ["code_fences", "dialect", "max_calls", "start_in_thinking", "strict", "thinking", "tool_format", "tools"];

/// The options of one call, as given; `None` given is the option not given.
pub(crate) struct ParseArgs<'a, 'py> {
    pub dialect: Option<&'a Bound<'py, PyAny>>,
    pub thinking: Option<&'a Bound<'py, PyAny>>,
    pub tool_format: Option<&'a Bound<'py, PyAny>>,
    pub code_fences: Option<&'a Bound<'py, PyAny>>,
    pub start_in_thinking: Option<&'a Bound<'py, PyAny>>,
    pub max_calls: Option<&'a Bound<'py, PyAny>>,
    pub tools: Option<&'a Bound<'py, PyAny>>,
    pub strict: Option<&'a Bound<'py, PyAny>>,
    /// Keywords no parser takes (collected by `**unexpected`).
    pub unexpected: Option<&'a Bound<'py, PyDict>>,
}

impl<'py> ParseArgs<'_, 'py> {
    /// The core's options; `caller` names the function in an unknown option's error, and
    /// `start_default` is `start_in_thinking` when not given ("detect" for a whole text, "no"
    /// for a stream, which cannot look ahead).
    pub(crate) fn options(&self, py: Python<'py>, caller: &str, start_default: StartThinking) -> PyResult<Options> {
        if let Some(name) = self.unexpected.and_then(|keywords| keywords.keys().iter().next()) {
            return Err(unexpected_keyword(py, caller, &name));
        }
        let mut options = match given(self.dialect) {
            Some(dialect) => dialect.extract::<DialectArg>()?.0,
            None => Options::default(),
        };
        if options.dialect == Dialect::Forge {
            options.forge = ForgeOptions {
                thinking: read(given(self.thinking), |ThinkingArg(mode)| mode, ThinkingMode::Auto)?,
                tool_format: read(given(self.tool_format), |ToolFormatArg(format)| format, ToolFormat::Auto)?,
                code_fences: read(given(self.code_fences), |CodeFencesArg(on)| on, true)?,
                max_calls: None,
            };
        } else {
            self.refuse_forge_options(self.dialect)?;
        }
        // Every dialect takes `max_calls` (kept with Forge's options in the core).
        options.forge.max_calls = read(given(self.max_calls), |MaxCallsArg(max)| Some(max), None)?;
        options.start_in_thinking = read(given(self.start_in_thinking), |StartArg(start)| start, start_default)?;
        options.tools = read(given(self.tools), |ToolsArg(tools)| Some(tools), None)?;
        options.strict = read(given(self.strict), |StrictArg(on)| on, false)?;
        Ok(options)
    }

    /// Refuses Forge's options given to another dialect, naming them (an option given at its
    /// default, compared only with a value of the default's own type, is not 'given').
    fn refuse_forge_options(&self, dialect: Option<&Bound<'py, PyAny>>) -> PyResult<()> {
        let is_str = |value: &Bound<'_, PyAny>, text: &str| {
            value.is_exact_instance_of::<PyString>() && value.cast::<PyString>().is_ok_and(|s| s.to_str().is_ok_and(|s| s == text))
        };
        let forge_only = [
            ("thinking", self.thinking.filter(|value| !is_str(value, "auto"))),
            ("tool_format", self.tool_format.filter(|value| !is_str(value, "auto"))),
            ("code_fences", self.code_fences.filter(|value| !value.is(PyBool::new(value.py(), true)))),
        ];
        let given: Vec<&str> =
            forge_only.iter().filter(|(_, value)| value.is_some_and(|value| !value.is_none())).map(|(name, _)| *name).collect();
        let Some(dialect) = dialect.filter(|_| !given.is_empty()) else { return Ok(()) };
        let py = dialect.py();
        let name = if dialect.is_instance_of::<PyString>() { Ok(dialect.clone()) } else { dialect.getattr("name") };
        let name = name.map_or_else(|_| format!("a {}", type_name(dialect)), |name| describe(&name));
        let message = format!("{}: an option of the forge dialect only, not of {name}", given.join(", "));
        Err(ErrorClass::Message.new_err(py, message))
    }
}

/// An option's value if given (`None` given is the option not given).
fn given<'a, 'py>(value: Option<&'a Bound<'py, PyAny>>) -> Option<&'a Bound<'py, PyAny>> {
    value.filter(|value| !value.is_none())
}

/// An option's value read as `T` and made the option by `make`; `default` when not given.
fn read<'py, T: for<'a> FromPyObject<'a, 'py, Error = PyErr>, V>(
    value: Option<&Bound<'py, PyAny>>,
    make: impl FnOnce(T) -> V,
    default: V,
) -> PyResult<V> {
    match value {
        Some(value) => value.extract::<T>().map(make),
        None => Ok(default),
    }
}

/// The error for an option no parser takes, from the package's one writer of that message
/// (`agentmsg._checks.unexpected_keyword`: the name, the one meant, the options).
fn unexpected_keyword(py: Python<'_>, caller: &str, name: &Bound<'_, PyAny>) -> PyErr {
    let fallback = || format!("{caller}() got an unexpected keyword argument {}", describe(name));
    let error = py
        .import("agentmsg._checks")
        .and_then(|checks| checks.getattr("unexpected_keyword")?.call1((caller, name, OPTION_NAMES)));
    match error {
        Ok(error) => PyErr::from_value(error),
        Err(_) => ErrorClass::MessageType.new_err(py, fallback()),
    }
}

/// A name option's value (`dialect`, `thinking`, `tool_format`): what `lookup` finds, else an
/// error that describes it briefly (a str that cannot be UTF-8 is no name either) and lists
/// the names `all` holds.
fn named<T: Copy>(value: Borrowed<'_, '_, PyAny>, option: &str, kind: &str, all: &[(&str, T)], expected: &str) -> PyResult<T> {
    let py = value.py();
    let Ok(name) = value.cast::<PyString>() else {
        return Err(ErrorClass::MessageType.new_err(py, format!("{option} must be {expected}, not {}", type_name(&value))));
    };
    let found = name.to_str().ok().and_then(|name| all.iter().find(|(n, _)| *n == name).map(|(_, value)| *value));
    found.ok_or_else(|| {
        let valid: Vec<&str> = all.iter().map(|(name, _)| *name).collect();
        ErrorClass::Message.new_err(py, format!("unknown {kind} {}; valid: {}", describe(&value), valid.join(", ")))
    })
}

/// `thinking=`: a thinking mode's name.
struct ThinkingArg(ThinkingMode);

impl<'a, 'py> FromPyObject<'a, 'py> for ThinkingArg {
    type Error = PyErr;

    fn extract(value: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        named(value, "thinking", "thinking mode", &ThinkingMode::ALL, "a str").map(Self)
    }
}

/// `tool_format=`: a tool format's name.
struct ToolFormatArg(ToolFormat);

impl<'a, 'py> FromPyObject<'a, 'py> for ToolFormatArg {
    type Error = PyErr;

    fn extract(value: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        named(value, "tool_format", "tool format", &ToolFormat::ALL, "a str").map(Self)
    }
}

/// `code_fences=`: a bool.
struct CodeFencesArg(bool);

impl<'a, 'py> FromPyObject<'a, 'py> for CodeFencesArg {
    type Error = PyErr;

    fn extract(value: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        value.extract::<bool>().map(Self).map_err(|_| {
            ErrorClass::MessageType.new_err(value.py(), format!("code_fences must be a bool, not {}", type_name(&value)))
        })
    }
}

/// `strict=`: a bool.
struct StrictArg(bool);

impl<'a, 'py> FromPyObject<'a, 'py> for StrictArg {
    type Error = PyErr;

    fn extract(value: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        value.extract::<bool>().map(Self).map_err(|_| {
            ErrorClass::MessageType.new_err(value.py(), format!("strict must be a bool, not {}", type_name(&value)))
        })
    }
}

/// `start_in_thinking=`: a bool (None, the default, is read before).
struct StartArg(StartThinking);

impl<'a, 'py> FromPyObject<'a, 'py> for StartArg {
    type Error = PyErr;

    fn extract(value: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        let start = value.extract::<bool>().map_err(|_| {
            let message = format!("start_in_thinking must be a bool or None, not {}", type_name(&value));
            ErrorClass::MessageType.new_err(value.py(), message)
        })?;
        Ok(Self(if start { StartThinking::Yes } else { StartThinking::No }))
    }
}

/// `max_calls=`: an int from 0 to `usize::MAX` (None, no limit, is read before).
struct MaxCallsArg(usize);

impl<'a, 'py> FromPyObject<'a, 'py> for MaxCallsArg {
    type Error = PyErr;

    fn extract(value: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        let py = value.py();
        let count = value.cast::<PyInt>().ok().filter(|_| !value.is_instance_of::<PyBool>()).ok_or_else(|| {
            ErrorClass::MessageType.new_err(py, format!("max_calls must be an int or None, not {}", type_name(&value)))
        })?;
        // The bad value is not shown: a huge int's digits are unbounded.
        count.extract::<usize>().map(Self).map_err(|_| {
            let sign = if count.lt(0).unwrap_or(false) { "negative" } else { "too large" };
            ErrorClass::Message.new_err(py, format!("max_calls must be from 0 to {} (this one is {sign})", usize::MAX))
        })
    }
}

/// `tools=`: an `agentmsg.Tools`, or OpenAI tool definitions compiled through the cache of
/// [`crate::tools`].
struct ToolsArg(Arc<Tools>);

impl<'a, 'py> FromPyObject<'a, 'py> for ToolsArg {
    type Error = PyErr;

    fn extract(value: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        crate::tools::core_tools(&value).map(Self)
    }
}

/// `dialect=`: a dialect's name, or an `agentmsg.Dialect` (a dialect from parts).
struct DialectArg(Options);

impl<'a, 'py> FromPyObject<'a, 'py> for DialectArg {
    type Error = PyErr;

    fn extract(value: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        let py = value.py();
        if value.is_instance_of::<PyString>() {
            let dialect = named(value, "dialect", "dialect", &Dialect::ALL, "a str")?;
            return Ok(Self(Options::new(dialect)));
        }
        if !value.is_instance(dialect_class(py)?)? {
            let message = format!("dialect must be a str or an agentmsg.Dialect, not {}", type_name(&value));
            return Err(ErrorClass::MessageType.new_err(py, message));
        }
        custom_options(&value).map(Self)
    }
}

/// The class `agentmsg.Dialect` (it lives in `agentmsg.options`).
fn dialect_class(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    static CLASS: PyOnceLock<Py<PyType>> = PyOnceLock::new();
    CLASS.import(py, "agentmsg.options", "Dialect")
}

/// The options of an `agentmsg.Dialect` (a dialect from parts): its attributes are read and
/// checked by the core; an error names the dialect and the part.
fn custom_options(dialect: &Bound<'_, PyAny>) -> PyResult<Options> {
    let py = dialect.py();
    let text = |field: &str| -> PyResult<Option<String>> {
        let value = dialect.getattr(field).map_err(|_| {
            let message = format!("dialect must be a str or an agentmsg.Dialect, not {}", type_name(dialect));
            ErrorClass::MessageType.new_err(py, message)
        })?;
        if value.is_none() {
            return Ok(None);
        }
        let Ok(text) = value.cast::<PyString>() else {
            return Err(ErrorClass::MessageType.new_err(py, format!("Dialect.{field} must be a str, not {}", type_name(&value))));
        };
        let text = text.to_str().map_err(|_| {
            ErrorClass::Message.new_err(py, format!("Dialect.{field} must be valid text, not hold a lone surrogate"))
        })?;
        Ok(Some(text.to_owned()))
    };
    let required = |field: &str| -> PyResult<String> {
        text(field)?
            .ok_or_else(|| ErrorClass::MessageType.new_err(py, format!("Dialect.{field} must be a str, not NoneType")))
    };
    let name = required("name")?;
    let think = match (text("think_start")?, text("think_end")?) {
        (Some(start), Some(end)) => Some((start, end)),
        (None, None) => None,
        _ => {
            let message = format!("dialect {}: think_start and think_end go together", quoted(&name));
            return Err(ErrorClass::Message.new_err(py, message));
        }
    };
    let parts = CustomDialect {
        call_start: required("call_start")?,
        call_end: required("call_end")?,
        payload: required("payload")?,
        name_key: required("name_key")?,
        arguments_key: required("arguments_key")?,
        think,
    };
    Options::custom(&parts).map_err(|error| core_error_in(py, &format!("dialect {}", quoted(&name)), error))
}

/// Checks the parts of an `agentmsg.Dialect` (its constructor calls this).
#[pyfunction]
fn check_dialect(dialect: &Bound<'_, PyAny>) -> PyResult<()> {
    custom_options(dialect).map(|_| ())
}

/// The names of the core's dialects (Forge's first), for `agentmsg.DIALECTS`.
#[pyfunction]
fn dialect_names(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    Dialect::ALL.iter().map(|(name, _)| *name).collect::<Vec<_>>().into_bound_py_any(py)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(dialect_names, m)?)?;
    m.add_function(wrap_pyfunction!(check_dialect, m)?)?;
    Ok(())
}
