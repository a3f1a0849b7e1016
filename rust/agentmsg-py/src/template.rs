//! Binding of chat templates (`agentmsg_core::template`): `agentmsg.ChatTemplate` wraps this
//! class. Python values (the dicts `agentmsg.template_messages` builds, the tools, the keyword
//! arguments) become template values here; the render runs with the GIL released.

use agentmsg_core::template::{chat_context, ChatTemplate as CoreTemplate, Limits, TemplateError, Value};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple, PyType};

use crate::errors::ErrorClass;

/// How deep a value passed to a template may nest (the parser's limit for JSON values).
const MAX_DEPTH: usize = 200;

/// `agentmsg.errors.TemplateError(message, kind, line)`, the class looked up once.
fn raise(py: Python<'_>, error: TemplateError) -> PyErr {
    static CLASS: PyOnceLock<Py<PyType>> = PyOnceLock::new();
    let class = CLASS.get_or_try_init(py, || {
        let class = py.import("agentmsg.errors")?.getattr("TemplateError")?;
        Ok::<_, PyErr>(class.cast_into::<PyType>().map_err(PyErr::from)?.unbind())
    });
    let (kind, line) = match &error {
        TemplateError::Syntax { line, .. } => ("syntax", Some(*line)),
        TemplateError::Raised { .. } => ("raised", None),
        TemplateError::Limit { .. } => ("limit", None),
        TemplateError::Render { line, .. } => ("render", *line),
    };
    let detail = match &error {
        TemplateError::Raised { message } => Some(message.clone()),
        _ => None,
    };
    match class {
        Ok(class) => match class.bind(py).call1((error.to_string(), kind, line, detail)) {
            Ok(instance) => PyErr::from_value(instance),
            Err(error) => error,
        },
        Err(lookup_error) => lookup_error,
    }
}

/// Why a value cannot be passed to a template: the error's class and its message after the
/// value's path, and the path from the value up (built only on failure, as the error unwinds).
struct BadValue {
    class: ErrorClass,
    detail: String,
    steps: Vec<String>,
}

impl BadValue {
    fn new(class: ErrorClass, detail: impl Into<String>) -> Self {
        Self { class, detail: detail.into(), steps: Vec::new() }
    }

    /// The error, its path starting at `what`.
    fn into_err(self, py: Python<'_>, what: &str) -> PyErr {
        let mut path = what.to_owned();
        for step in self.steps.iter().rev() {
            path.push_str(step);
        }
        self.class.new_err(py, format!("{path} {}", self.detail))
    }
}

/// The template value of a Python value: None, bool, int, float, str, list, tuple, dict.
fn to_value(value: &Bound<'_, PyAny>, depth: usize) -> Result<Value, BadValue> {
    if depth > MAX_DEPTH {
        return Err(BadValue::new(ErrorClass::Message, format!("nests deeper than {MAX_DEPTH} levels")));
    }
    if value.is_none() {
        return Ok(Value::from(()));
    }
    if let Ok(text) = value.cast::<PyString>() {
        let text = text
            .to_cow()
            .map_err(|_| BadValue::new(ErrorClass::Message, "holds a lone surrogate, which a template cannot render"))?;
        return Ok(Value::from(text.as_ref()));
    }
    if value.is_instance_of::<PyBool>() {
        return Ok(Value::from(value.is_truthy().map_err(|_| BadValue::new(ErrorClass::MessageType, "is a bool that cannot be read"))?));
    }
    if value.is_instance_of::<PyInt>() {
        if let Ok(small) = value.extract::<i64>() {
            return Ok(Value::from(small));
        }
        return value
            .extract::<i128>()
            .map(Value::from)
            .map_err(|_| BadValue::new(ErrorClass::Message, "is an int too large for a template (more than 128 bits)"));
    }
    if let Ok(float) = value.cast::<PyFloat>() {
        return Ok(Value::from(float.value()));
    }
    if let Ok(dict) = value.cast::<PyDict>() {
        let mut pairs = Vec::with_capacity(dict.len());
        for (key, item) in dict.iter() {
            let key_value = to_value(&key, depth + 1)?;
            let item_value = to_value(&item, depth + 1).map_err(|mut bad| {
                let key = key.repr().map(|r| r.to_string()).unwrap_or_default();
                bad.steps.push(format!("[{}]", key.chars().take(40).collect::<String>()));
                bad
            })?;
            pairs.push((key_value, item_value));
        }
        return Ok(Value::from_pairs(pairs));
    }
    let items: Option<Result<Vec<Value>, BadValue>> = if let Ok(list) = value.cast::<PyList>() {
        Some(list.iter().map(|item| to_value(&item, depth + 1)).enumerate().map(at_index).collect())
    } else if let Ok(tuple) = value.cast::<PyTuple>() {
        Some(tuple.iter().map(|item| to_value(&item, depth + 1)).enumerate().map(at_index).collect())
    } else {
        None
    };
    if let Some(items) = items {
        return items.map(Value::from);
    }
    let type_name = value.get_type().name().map(|n| n.to_string()).unwrap_or_else(|_| "object".into());
    Err(BadValue::new(
        ErrorClass::MessageType,
        format!("must be a JSON-like value (dict, list, tuple, str, int, float, bool or None), not {type_name}"),
    ))
}

/// An item's value, or its error with its index on the path.
fn at_index((index, item): (usize, Result<Value, BadValue>)) -> Result<Value, BadValue> {
    item.map_err(|mut bad| {
        bad.steps.push(format!("[{index}]"));
        bad
    })
}

fn value_of(value: &Bound<'_, PyAny>, what: &str) -> PyResult<Value> {
    to_value(value, 0).map_err(|bad| bad.into_err(value.py(), what))
}

/// A compiled chat template.
#[pyclass(frozen, module = "agentmsg._core")]
pub struct ChatTemplate {
    inner: CoreTemplate,
}

#[pymethods]
impl ChatTemplate {
    #[new]
    #[pyo3(signature = (source, fuel, max_output_bytes))]
    fn new(py: Python<'_>, source: &Bound<'_, PyString>, fuel: u64, max_output_bytes: usize) -> PyResult<Self> {
        let source = source
            .to_cow()
            .map_err(|_| ErrorClass::Message.new_err(py, "the template holds a lone surrogate"))?;
        let limits = Limits { fuel, max_output_bytes };
        let inner = py.detach(|| CoreTemplate::with_limits(&source, limits)).map_err(|error| raise(py, error))?;
        Ok(Self { inner })
    }

    #[getter]
    fn fuel(&self) -> u64 {
        self.inner.limits().fuel
    }

    #[getter]
    fn max_output_bytes(&self) -> usize {
        self.inner.limits().max_output_bytes
    }

    /// Renders `messages` (template dicts) with `tools`, the generation prompt flag and the
    /// keyword arguments `kwargs` (special tokens first), `strftime_now` at `utc_offset`.
    #[pyo3(signature = (messages, tools, add_generation_prompt, kwargs, utc_offset))]
    fn render(
        &self,
        py: Python<'_>,
        messages: &Bound<'_, PyAny>,
        tools: &Bound<'_, PyAny>,
        add_generation_prompt: bool,
        kwargs: &Bound<'_, PyDict>,
        utc_offset: i32,
    ) -> PyResult<String> {
        let messages = value_of(messages, "messages")?;
        let tools = if tools.is_none() { None } else { Some(value_of(tools, "tools")?) };
        let mut extra = Vec::with_capacity(kwargs.len());
        for (name, value) in kwargs.iter() {
            let name: String = name.extract()?;
            let value = value_of(&value, &name)?;
            extra.push((name, value));
        }
        let context = chat_context(messages, tools, add_generation_prompt, extra)
            .map_err(|message| ErrorClass::MessageType.new_err(py, message))?;
        py.detach(|| self.inner.render_at(&context, utc_offset)).map_err(|error| raise(py, error))
    }

    fn __repr__(&self) -> String {
        format!("<agentmsg._core.ChatTemplate fuel={}>", self.inner.limits().fuel)
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<ChatTemplate>()
}
