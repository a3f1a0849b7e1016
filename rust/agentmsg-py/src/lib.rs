//! The PyO3 binding of `agentmsg-core`: type conversion and error mapping, nothing else.
//!
//! Each feature has one module with a `register` function; `_core` is their union.

use pyo3::prelude::*;

/// mimalloc (v2, local-dynamic TLS; the features are in the workspace `Cargo.toml`): faster than
/// the system's allocator on parsing, whole and streamed (`scripts/measure-allocators`;
/// `docs/architecture.md` has the figures, and why not mimalloc v3).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod arrow;
mod batch;
mod classes;
mod columns;
mod deltas;
mod responses;
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
mod results;
mod stream;
mod strings;
mod template;
mod tokens;
mod tokenizer;
mod tools;

// The old name of `strings`, for the token and estimate modules until their next change.

/// What adds a feature module's names to `_core`.
type Register = fn(&Bound<'_, PyModule>) -> PyResult<()>;

/// Each feature module's `register`, in the order `_core` gains their names.
const FEATURES: [Register; 15] = [
    estimate::register,
    parse::register,
    stream::register,
    options::register,
    classes::register,
    tokens::register,
    encoding::register,
    prune::register,
    pairs::register,
    pool::register,
    arrow::register,
    tokenizer::register,
    tools::register,
    batch::register,
    template::register,
];

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    FEATURES.iter().try_for_each(|register| register(m))
}
