//! Pure-Rust core of agentmsg: the hot paths of LLM agent message work.
//!
//! No Python here: the `agentmsg-py` crate binds these functions. Every function is total: it
//! returns a value or an error for any input and never panics.

pub mod estimate;
pub mod ids;
pub mod pairs;
pub mod parse;
pub mod prune;
pub mod role;
pub mod tokenizer;
pub mod tokens;

pub use role::Role;
