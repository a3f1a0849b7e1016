//! JSON values of the core (jiter's tree) as Python values, as `json.loads` would give them.

use std::borrow::Cow;

use agentmsg_core::parse::{Json, JsonValue};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyList, PyString};

use crate::errors::ErrorClass;
use crate::ffi;

pub(crate) fn json_to_py<'py>(py: Python<'py>, value: &Json) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        JsonValue::Null => py.None().into_bound(py),
        JsonValue::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        JsonValue::Int(i) => i.into_pyobject(py)?.into_any(),
        JsonValue::BigInt(big) => {
            // Exact, as Python's json.loads reads it: int() of the decimal digits.
            let digits = std::ffi::CString::new(big.to_string()).map_err(|e| ErrorClass::Message.new_err(py, e.to_string()))?;
            ffi::int_from_decimal(py, &digits)?
        }
        JsonValue::Float(f) => PyFloat::new(py, *f).into_any(),
        JsonValue::Str(s) => PyString::new(py, s).into_any(),
        JsonValue::Array(items) => {
            let list = PyList::empty(py);
            for item in items.iter() {
                list.append(json_to_py(py, item)?)?;
            }
            list.into_any()
        }
        JsonValue::Object(pairs) => object_to_py(py, pairs)?.into_any(),
    })
}

/// A dict of an object's pairs; a repeated key ends with its last value, as in `json.loads`.
pub(crate) fn object_to_py<'py>(py: Python<'py>, pairs: &[(Cow<'static, str>, Json)]) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    for (key, value) in pairs {
        dict.set_item(PyString::new(py, key), json_to_py(py, value)?)?;
    }
    Ok(dict)
}
