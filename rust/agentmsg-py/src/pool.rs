//! The thread pool of this process: every parallel call of the core runs in it.
//!
//! rayon's global pool does not survive `fork`: the child inherits the pool's state but not its
//! threads, so the first parallel call in a child (gunicorn `--preload`, Celery, `multiprocessing`
//! with the fork start method, `datasets.map(num_proc=...)`) waits forever for workers that do
//! not exist. This pool is keyed by process id instead: a child that finds its parent's pool
//! builds its own and never touches the parent's.
//!
//! The pool is looked up only while the caller holds the GIL. `os.fork` also runs with the GIL
//! held, so no other thread can be inside the lookup's lock at the moment of the fork, and the
//! child never inherits that lock locked.

use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex};

use pyo3::prelude::*;
use agentmsg_core::parse::dialect::quoted;
use pyo3::types::{PyBool, PyInt};
use rayon::{ThreadPool, ThreadPoolBuilder};

use crate::errors::{describe, type_name, ErrorClass};

/// The environment variable that sizes the pool; unset, it has one thread per core.
const NUM_THREADS_VAR: &str = "AGENTMSG_NUM_THREADS";

/// The most threads a pool may have, on a machine of at most this many cores (one with more may
/// have one per core). The pool's work is CPU-bound, so a thread beyond one per core only takes
/// turns with another, while each costs a stack and a start-up: 5,000 threads took 13-26 s to
/// start on a 2-core machine, 256 start in well under a second. 256 leaves room for any
/// deliberate oversubscription and still bounds what a typo in a size can cost.
const MAX_THREADS: usize = 256;

struct ProcessPool {
    pid: u32,
    pool: Arc<ThreadPool>,
}

/// The pool and the process it was built in; `None` until the first parallel call.
static POOL: Mutex<Option<ProcessPool>> = Mutex::new(None);

/// The size requested with `set_num_threads`, which outlives a fork; `None` follows the
/// environment.
static REQUESTED_THREADS: Mutex<Option<NonZeroUsize>> = Mutex::new(None);

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // The lock guards plain data that no holder leaves half-written, so a poisoned one is usable.
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, NonZeroUsize::get)
}

/// The most threads a pool may have here: [`MAX_THREADS`], or one per core if there are more.
fn max_threads() -> usize {
    MAX_THREADS.max(cores())
}

/// The number of threads a new pool gets: `set_num_threads`, else `AGENTMSG_NUM_THREADS`, else
/// one per core.
fn configured_threads(py: Python<'_>) -> PyResult<usize> {
    if let Some(requested) = *lock(&REQUESTED_THREADS) {
        return Ok(requested.get());
    }
    let Some(value) = std::env::var_os(NUM_THREADS_VAR) else {
        return Ok(cores());
    };
    let value = value.to_string_lossy();
    if value.trim().is_empty() {
        return Ok(cores());
    }
    match value.trim().parse::<usize>() {
        Ok(threads) if (1..=max_threads()).contains(&threads) => Ok(threads),
        _ => {
            // Quoted by Rust, not `describe`: Python code run under the pool's lock could let
            // another thread in to wait on it while holding the GIL.
            let message =
                format!("{NUM_THREADS_VAR} must be a whole number from 1 to {}, not {}", max_threads(), quoted(&value));
            Err(ErrorClass::Message.new_err(py, message))
        }
    }
}

/// This process's pool, built on first use and again in a forked child.
pub fn current(py: Python<'_>) -> PyResult<Arc<ThreadPool>> {
    let pid = std::process::id();
    let mut slot = lock(&POOL);
    if let Some(existing) = slot.as_ref() {
        if existing.pid == pid {
            return Ok(Arc::clone(&existing.pool));
        }
    }
    let threads = configured_threads(py)?;
    let pool = ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|index| format!("agentmsg-{index}"))
        .build()
        .map_err(|error| {
            ErrorClass::AgentMsg.new_err(py, format!("cannot start {threads} threads: {error}"))
        })?;
    let previous = slot.replace(ProcessPool {
        pid,
        pool: Arc::new(pool),
    });
    retire(previous);
    Ok(Arc::clone(&slot.as_ref().expect("just stored").pool))
}

/// Runs `work` in this process's pool with the GIL released: whatever `work` runs in parallel
/// (rayon's `par_iter`) is spread over the pool's threads.
pub fn run_detached<T: Send>(py: Python<'_>, work: impl FnOnce() -> T + Send) -> PyResult<T> {
    let pool = current(py)?;
    Ok(py.detach(|| pool.install(work)))
}

/// The number of threads the parallel batch functions use in this process.
#[pyfunction]
fn num_threads(py: Python<'_>) -> PyResult<usize> {
    Ok(current(py)?.current_num_threads())
}

/// Sets the number of threads of the parallel batch functions (the pool is rebuilt; calls
/// already running finish on the old one): an int from 1 to [`max_threads`].
#[pyfunction]
fn set_num_threads(py: Python<'_>, threads: &Bound<'_, PyAny>) -> PyResult<()> {
    if threads.is_instance_of::<PyBool>() || !threads.is_instance_of::<PyInt>() {
        return Err(ErrorClass::MessageType.new_err(py, format!("threads must be an int, not {}", type_name(threads))));
    }
    let requested = match threads.extract::<usize>() {
        Ok(threads) => NonZeroUsize::new(threads).filter(|threads| threads.get() <= max_threads()),
        Err(_) => None,
    };
    let Some(requested) = requested else {
        let message = if threads.lt(1)? {
            format!("threads must be at least 1, not {}", describe(threads))
        } else {
            format!(
                "threads must be at most {} (the pool's limit on this machine: {MAX_THREADS}, or one per core if \
                 there are more), not {}",
                max_threads(),
                describe(threads)
            )
        };
        return Err(ErrorClass::Message.new_err(py, message));
    };
    *lock(&REQUESTED_THREADS) = Some(requested);
    // The next parallel call builds a pool of the new size.
    let previous = lock(&POOL).take();
    retire(previous);
    Ok(())
}

/// Lets go of a replaced pool. A parent's pool (found in a forked child) is leaked: its threads
/// do not exist here, and dropping it would wait for them (one small allocation per fork).
fn retire(previous: Option<ProcessPool>) {
    if let Some(previous) = previous {
        if previous.pid != std::process::id() {
            std::mem::forget(previous);
        }
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(num_threads, m)?)?;
    m.add_function(wrap_pyfunction!(set_num_threads, m)?)?;
    Ok(())
}
