//! The PyO3 binding of `agentmsg-core`: type conversion and error mapping, nothing else.
//!
//! Each feature has one module with a `register` function; `_core` is their union.

use pyo3::prelude::*;

/// Results are built on rayon's threads and freed on Python's; glibc's malloc serializes such
/// cross-thread frees on its arena locks (parse_many gained nothing from a second core), which
/// mimalloc does not.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod arrow;
mod dialect;
mod encoding;
mod errors;
mod estimate;
mod events;
mod ffi;
mod json;
mod options;
mod pairs;
mod parse;
mod pool;
mod prune;
mod pystr;
mod results;
mod stream;
mod tokens;

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    estimate::register(m)?;
    parse::register(m)?;
    stream::register(m)?;
    events::register(m)?;
    dialect::register(m)?;
    results::register(m)?;
    tokens::register(m)?;
    encoding::register(m)?;
    prune::register(m)?;
    pairs::register(m)?;
    pool::register(m)?;
    arrow::register(m)?;
    Ok(())
}
