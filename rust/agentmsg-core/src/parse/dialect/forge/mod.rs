//! Forge's dialect: `<tool>` calls with a JSON or XML payload ([`payload`]), `<think>` /
//! `<thinking>` tags, `[bracket]` thinking lines ([`bracket`]) and code fences, read by its own
//! machine ([`ForgeMachine`]); the rules are stated in the docs of [`crate::parse`].

pub mod bracket;
mod machine;
pub mod payload;
mod xml;

pub(crate) use machine::ForgeMachine;
