//! The PyO3 binding of `agentmsg-core`: type conversion and error mapping, nothing else.
//!
//! Each feature has one module with a `register` function; `_core` is their union.

use pyo3::prelude::*;

mod errors;
mod estimate;
mod parse;
mod prune;
mod pystr;
mod tokens;

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    estimate::register(m)?;
    parse::register(m)?;
    tokens::register(m)?;
    prune::register(m)?;
    Ok(())
}
