//! Tool definitions compiled once: `agentmsg.Tools`, and the cache that spares a plain list of
//! definitions given again its JSON round trip.
//!
//! Compiling is `agentmsg.options.tools_json` (the one writer of the JSON text and of the errors
//! about what cannot be written) then the core's `Tools::from_json`. A server gives the same
//! tools with every request: a `Tools` holds the compiled set, so a parser built from it only
//! clones an `Arc`. A plain list is compiled through a cache whose key is the list's exact
//! content, read in one walk (see [`content_key`]): a list or dict changed in place has another
//! key, so the cache never answers for what the definitions were before.

use std::collections::hash_map::DefaultHasher;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex, OnceLock};

use agentmsg_core::parse::{parse_json, JsonValue, Tools as CoreTools};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use pyo3::IntoPyObjectExt;

use crate::errors::{core_error_in, ErrorClass};

/// One compiled tool set: the core's tools, the definitions' JSON text (what equality, hashing
/// and pickling read) and the tools' names.
struct Compiled {
    tools: Arc<CoreTools>,
    json: String,
    names: Vec<String>,
}

/// A key of more bytes than this is not cached: with MAX_ENTRIES, the cache's keys stay under
/// 64 MiB even when every entry is this large (a real set of 200 tools is about 100 KiB).
const MAX_KEY_BYTES: usize = 1 << 18;
/// At most this many tool sets are cached; a full cache is emptied (a server has a few sets).
const MAX_ENTRIES: usize = 256;
/// Nesting deeper than this has no key (and `tools_json` names the problem).
const MAX_DEPTH: usize = 200;

type Cache = Mutex<HashMap<Vec<u8>, Arc<Compiled>>>;

fn cache() -> &'static Cache {
    static CACHE: OnceLock<Cache> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(HashMap::new()))
}

/// The exact content of `value` as bytes (a tag per value, lengths before contents), or `None`
/// when it holds anything but dicts, lists, tuples, strs, ints, floats, bools and None of
/// exactly those types (a subclass may change what it holds behind the walk's back, so it is
/// never cached). Two values with the same key write the same JSON text: the key is as
/// correct as comparing the definitions themselves, at the cost of one walk.
fn content_key(value: &Bound<'_, PyAny>, depth: usize, out: &mut Vec<u8>) -> Option<()> {
    if depth > MAX_DEPTH || out.len() > MAX_KEY_BYTES {
        return None;
    }
    let length = |out: &mut Vec<u8>, n: usize| out.extend_from_slice(&(n as u64).to_le_bytes());
    if value.is_none() {
        out.push(b'n');
    } else if value.is_exact_instance_of::<PyBool>() {
        out.push(if value.is_truthy().ok()? { b't' } else { b'f' });
    } else if value.is_exact_instance_of::<PyString>() {
        let text = value.cast::<PyString>().ok()?.to_str().ok()?;
        out.push(b's');
        length(out, text.len());
        out.extend_from_slice(text.as_bytes());
    } else if value.is_exact_instance_of::<PyInt>() {
        out.push(b'i');
        out.extend_from_slice(&value.extract::<i64>().ok()?.to_le_bytes());
    } else if value.is_exact_instance_of::<PyFloat>() {
        out.push(b'r');
        out.extend_from_slice(&value.cast::<PyFloat>().ok()?.value().to_bits().to_le_bytes());
    } else if value.is_exact_instance_of::<PyDict>() {
        let dict = value.cast::<PyDict>().ok()?;
        out.push(b'd');
        length(out, dict.len());
        for (key, item) in dict.iter() {
            content_key(&key, depth + 1, out)?;
            content_key(&item, depth + 1, out)?;
        }
    } else if value.is_exact_instance_of::<PyList>() {
        let list = value.cast::<PyList>().ok()?;
        out.push(b'l');
        length(out, list.len());
        for item in list.iter() {
            content_key(&item, depth + 1, out)?;
        }
    } else if value.is_exact_instance_of::<PyTuple>() {
        let tuple = value.cast::<PyTuple>().ok()?;
        out.push(b'l');
        length(out, tuple.len());
        for item in tuple.iter() {
            content_key(&item, depth + 1, out)?;
        }
    } else {
        return None;
    }
    Some(())
}

/// Compiles definitions without the cache: `tools_json`, then the core.
fn compile_uncached(value: &Bound<'_, PyAny>) -> PyResult<Compiled> {
    let py = value.py();
    static TOOLS_JSON: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let tools_json =
        TOOLS_JSON.get_or_try_init(py, || Ok::<_, PyErr>(py.import("agentmsg.options")?.getattr("tools_json")?.unbind()))?;
    let text = tools_json.bind(py).call1((value,))?;
    let text = text.cast::<PyString>().map_err(PyErr::from)?;
    let text = text.to_str().map_err(|_| ErrorClass::Message.new_err(py, "tools must be valid text, not hold a lone surrogate"))?;
    let tools = CoreTools::from_json(text.as_bytes()).map_err(|error| core_error_in(py, "invalid tools", error))?;
    Ok(Compiled { tools: Arc::new(tools), json: text.to_owned(), names: tool_names(text) })
}

/// The function names of definitions the core accepted, in order.
fn tool_names(json: &str) -> Vec<String> {
    let field = |value: &JsonValue<'static>, key: &str| -> Option<JsonValue<'static>> {
        let JsonValue::Object(pairs) = value else { return None };
        pairs.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v.clone())
    };
    let Ok(JsonValue::Array(items)) = parse_json(json.as_bytes()) else { return Vec::new() };
    items
        .iter()
        .filter_map(|item| {
            let function = field(item, "function").unwrap_or_else(|| item.clone());
            match field(&function, "name") {
                Some(JsonValue::Str(name)) => Some(name.to_string()),
                _ => None,
            }
        })
        .collect()
}

/// The compiled form of `value`: a `Tools`' own, else from the cache, else compiled and cached.
fn compiled(value: &Bound<'_, PyAny>) -> PyResult<Arc<Compiled>> {
    if let Ok(tools) = value.cast::<Tools>() {
        return Ok(tools.get().compiled.clone());
    }
    let mut key = Vec::new();
    let Some(()) = content_key(value, 0, &mut key) else {
        return compile_uncached(value).map(Arc::new);
    };
    // The lock is never held while Python runs: compiling calls back into Python.
    if let Some(hit) = cache().lock().ok().and_then(|cache| cache.get(&key).cloned()) {
        return Ok(hit);
    }
    let fresh = Arc::new(compile_uncached(value)?);
    if key.len() <= MAX_KEY_BYTES {
        if let Ok(mut cache) = cache().lock() {
            if cache.len() >= MAX_ENTRIES {
                cache.clear();
            }
            cache.insert(key, fresh.clone());
        }
    }
    Ok(fresh)
}

/// The core's tools for a `tools=` option: a `Tools`, or OpenAI tool definitions.
pub(crate) fn core_tools(value: &Bound<'_, PyAny>) -> PyResult<Arc<CoreTools>> {
    compiled(value).map(|compiled| compiled.tools.clone())
}

/// Tool definitions compiled once, for every ``tools=`` option (``parse``, ``parse_many``,
/// ``parse_tool_calls``, ``StreamParser``, ``StreamBatch``, ``agentmsg.arrow.parse_arrow``...).
///
/// ``Tools(definitions)`` reads OpenAI tool definitions (``{"type": "function", "function":
/// {"name", "parameters"}}`` or the inner ``{"name", "parameters"}``) once; a parser built
/// from it then costs the same whatever the number of tools. It is immutable, hashable, equal
/// to another ``Tools`` of the same definitions (compared as their JSON text), picklable, and
/// safe to share between threads. A plain list given as ``tools=`` is compiled through a cache
/// keyed by its exact content, so the same list again is not compiled again, and a list changed
/// in place is compiled anew (the key is read in one walk of it; only dicts, lists, tuples,
/// strs, ints, floats, bools and None are cached).
///
/// >>> import agentmsg
/// >>> tools = agentmsg.Tools([{"type": "function", "function": {"name": "get_weather",
/// ...     "parameters": {"type": "object", "properties": {"days": {"type": "integer"}}}}}])
/// >>> tools
/// Tools(['get_weather'])
/// >>> parser = agentmsg.StreamParser(dialect="qwen3_coder", tools=tools)
/// >>> text = "<tool_call><function=get_weather><parameter=days>3</parameter></function></tool_call>"
/// >>> agentmsg.parse(text, dialect="qwen3_coder", tools=tools).tool_calls[0].input
/// {'days': 3}
/// >>> tools == agentmsg.Tools(tools.definitions), len(tools)
/// (True, 1)
#[pyclass(frozen, module = "agentmsg.options")]
pub struct Tools {
    compiled: Arc<Compiled>,
    hash: u64,
}

#[pymethods]
impl Tools {
    #[new]
    #[pyo3(signature = (definitions, **unexpected))]
    fn new(definitions: &Bound<'_, PyAny>, unexpected: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        crate::stream::refuse_keywords_of("Tools", "definitions", unexpected)?;
        let compiled = compiled(definitions)?;
        let mut hasher = DefaultHasher::new();
        compiled.json.hash(&mut hasher);
        Ok(Self { compiled, hash: hasher.finish() })
    }

    /// The definitions, as a new list (changing it changes nothing here).
    #[getter]
    fn definitions<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        static LOADS: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
        let loads = LOADS.get_or_try_init(py, || Ok::<_, PyErr>(py.import("json")?.getattr("loads")?.unbind()))?;
        loads.bind(py).call1((&self.compiled.json,))
    }

    /// The tools' function names, in order.
    #[getter]
    fn names<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        PyTuple::new(py, &self.compiled.names)?.into_bound_py_any(py)
    }

    fn __len__(&self) -> usize {
        self.compiled.names.len()
    }

    fn __hash__(&self) -> u64 {
        self.hash
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let py = other.py();
        match other.cast::<Tools>() {
            Ok(other) => Ok(PyBool::new(py, other.get().compiled.json == self.compiled.json).to_owned().into_any().unbind()),
            Err(_) => Ok(py.NotImplemented()),
        }
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!("Tools({})", PyList::new(py, &self.compiled.names)?.repr()?))
    }

    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, PyAny>,))> {
        let py = slf.py();
        Ok((slf.get_type().into_any(), (slf.get().definitions(py)?,)))
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Tools>()?;
    Ok(())
}
