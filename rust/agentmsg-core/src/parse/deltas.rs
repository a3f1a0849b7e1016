//! Stream events as the deltas of OpenAI Chat Completions chunks, the rules of
//! `agentmsg.convert.deltas.openai_deltas` (its docstring states them for users):
//!
//! - text is `content` (a new text run starts with `"\n"`), thinking `reasoning_content`;
//! - a dialect's call: its start (id and name known) is the call's first `tool_calls` entry, with
//!   empty arguments, and each argument fragment the next entry;
//! - a Forge call (its start comes before its name): nothing until it ends, then one entry with
//!   id, name and the whole arguments (`json.dumps(input, ensure_ascii=False,
//!   separators=(",", ":"))`, which [`python_json_into`] writes);
//! - a call's `index` is the client's: calls are numbered densely in the order their first entry
//!   goes out (the parser's index counts failed calls too, and a gap breaks the `openai` SDK's
//!   stream accumulator);
//! - a call that fails: an `agentmsg_issues` delta, a list of one entry naming the issue's own
//!   `index` (issues are numbered densely apart from calls, so the SDK, which merges list entries
//!   by `index`, keeps every issue apart), the `tool_call_index` of the call's entries if its
//!   start went out (a client drops that call) else null, and kind, message, span and raw text.

use super::call::{CallHeader, Issue, Json, ToolCall};
use super::event::Event;
use super::json_text::escape_into;
use std::collections::HashMap;

use jiter::JsonValue;

/// One delta, borrowing from its event.
#[derive(Debug, PartialEq)]
pub enum Delta<'e> {
    /// Visible text; `newline`: a new text run, sent after a `"\n"`.
    Content { newline: bool, text: &'e [u8] },
    Reasoning(&'e [u8]),
    /// A dialect's call started: its first entry (arguments `""`). `index`: the client's.
    CallStart { index: usize, header: &'e CallHeader },
    /// The next fragment of a dialect call's arguments.
    Arguments { index: usize, fragment: &'e [u8] },
    /// A Forge call, whole, when it ended.
    WholeCall { index: usize, call: &'e ToolCall },
    /// A call failed: `index` numbers the issues, `tool_call` is the client index of the call's
    /// entries if any went out.
    Issue { index: usize, tool_call: Option<usize>, issue: &'e Issue },
}

/// What turning a stream's events into deltas remembers between events.
#[derive(Clone, Debug, Default)]
pub struct DeltaState {
    /// The text run the last text went to (a new run starts with `"\n"`).
    pub text_block: Option<usize>,
    /// The calls open without a name (Forge's): sent whole at their end.
    nameless: Vec<usize>,
    /// The open calls that sent an entry: (parser index, client index).
    sent: Vec<(usize, usize)>,
    /// The client index of the next call to send an entry.
    next_call: usize,
    /// The index of the next issue.
    next_issue: usize,
}

impl DeltaState {
    /// The delta of `event`, if it makes one; the state follows the event either way.
    pub fn delta<'e>(&mut self, event: &'e Event) -> Option<Delta<'e>> {
        match event {
            Event::Text { block, text } => {
                let newline = *block > 0 && self.text_block != Some(*block);
                self.text_block = Some(*block);
                Some(Delta::Content { newline, text })
            }
            Event::Thinking { text, .. } => Some(Delta::Reasoning(text)),
            Event::ToolStart { index, header: Some(header) } => Some(Delta::CallStart { index: self.client_index(*index), header }),
            Event::ToolStart { index, header: None } => {
                self.nameless.push(*index);
                None
            }
            Event::ToolDelta { index, fragment } => (!self.nameless.contains(index))
                .then(|| Delta::Arguments { index: self.client_index(*index), fragment }),
            Event::ToolEnd { index, result } => {
                let nameless = self.nameless.iter().position(|i| i == index).map(|at| self.nameless.swap_remove(at)).is_some();
                match result {
                    Ok(call) if nameless => {
                        self.next_call += 1; // its only entry
                        Some(Delta::WholeCall { index: self.next_call - 1, call })
                    }
                    Ok(_) => {
                        self.close(*index);
                        None
                    }
                    Err(issue) => {
                        let tool_call = self.close(*index);
                        self.next_issue += 1;
                        Some(Delta::Issue { index: self.next_issue - 1, tool_call, issue })
                    }
                }
            }
            Event::ThinkingEnd { .. } | Event::TextSpan { .. } | Event::ThinkingSpan { .. } => None,
        }
    }

    /// The client index of the parser's call `index`, the next one at the call's first entry.
    fn client_index(&mut self, index: usize) -> usize {
        if let Some(&(_, client)) = self.sent.iter().find(|(call, _)| *call == index) {
            return client;
        }
        self.sent.push((index, self.next_call));
        self.next_call += 1;
        self.next_call - 1
    }

    /// Forgets the ended call `index`; its client index if it sent an entry.
    fn close(&mut self, index: usize) -> Option<usize> {
        let at = self.sent.iter().position(|(call, _)| *call == index)?;
        Some(self.sent.swap_remove(at).1)
    }

    /// Ready for a new stream.
    pub fn reset(&mut self) {
        *self = Self::default();
    }
}

/// Appends `value` as `json.dumps(value, ensure_ascii=False, separators=(",", ":"))` writes the
/// Python value the core makes of it: floats as Python's `repr`, a repeated key once (the last
/// value at the first key's place, as a dict holds it).
pub fn python_json_into(value: &Json, out: &mut Vec<u8>) {
    match value {
        JsonValue::Null => out.extend_from_slice(b"null"),
        JsonValue::Bool(true) => out.extend_from_slice(b"true"),
        JsonValue::Bool(false) => out.extend_from_slice(b"false"),
        JsonValue::Int(i) => out.extend_from_slice(i.to_string().as_bytes()),
        JsonValue::BigInt(big) => out.extend_from_slice(big.to_string().as_bytes()),
        JsonValue::Float(f) => python_float_into(*f, out),
        JsonValue::Str(s) => {
            out.push(b'"');
            escape_into(s.as_bytes(), out);
            out.push(b'"');
        }
        JsonValue::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                python_json_into(item, out);
            }
            out.push(b']');
        }
        JsonValue::Object(pairs) => {
            out.push(b'{');
            // Each key's last value, and whether it was written (a map: objects can be large).
            let pairs: Vec<_> = pairs.iter().collect();
            let mut last: HashMap<&str, (usize, bool)> = HashMap::with_capacity(pairs.len());
            for (i, (key, _)) in pairs.iter().enumerate() {
                last.insert(key.as_ref(), (i, false));
            }
            let mut first = true;
            for (key, _) in pairs.iter() {
                let Some((at, written)) = last.get_mut(key.as_ref()) else { continue };
                if std::mem::replace(written, true) {
                    continue; // written at its first place
                }
                if !first {
                    out.push(b',');
                }
                first = false;
                out.push(b'"');
                escape_into(key.as_bytes(), out);
                out.extend_from_slice(b"\":");
                python_json_into(&pairs[*at].1, out);
            }
            out.push(b'}');
        }
    }
}

/// The arguments text a Forge call is sent with: its input as [`python_json_into`] writes it.
pub fn whole_arguments(call: &ToolCall) -> Vec<u8> {
    let mut out = Vec::new();
    python_json_into(&JsonValue::Object(call.input.clone()), &mut out);
    out
}

/// Appends Python's `repr` of a float as `json.dumps` writes it (`Infinity`, `NaN` included):
/// the shortest digits that read back (Rust's `{:e}` finds the same ones), fixed notation for
/// decimal exponents from -4 to 15, else `d.ddde+XX`.
pub fn python_float_into(f: f64, out: &mut Vec<u8>) {
    if f.is_nan() {
        return out.extend_from_slice(b"NaN");
    }
    if f.is_infinite() {
        return out.extend_from_slice(if f > 0.0 { b"Infinity" } else { b"-Infinity" });
    }
    let scientific = format!("{f:e}");
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", mantissa),
    };
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    out.extend_from_slice(sign.as_bytes());
    if (-4..16).contains(&exponent) {
        if exponent < 0 {
            out.extend_from_slice(b"0.");
            out.extend(std::iter::repeat_n(b'0', (-exponent - 1) as usize));
            out.extend_from_slice(digits.as_bytes());
        } else {
            let whole = exponent as usize + 1;
            if digits.len() <= whole {
                out.extend_from_slice(digits.as_bytes());
                out.extend(std::iter::repeat_n(b'0', whole - digits.len()));
                out.extend_from_slice(b".0");
            } else {
                out.extend_from_slice(&digits.as_bytes()[..whole]);
                out.push(b'.');
                out.extend_from_slice(&digits.as_bytes()[whole..]);
            }
        }
    } else {
        out.extend_from_slice(&digits.as_bytes()[..1]);
        if digits.len() > 1 {
            out.push(b'.');
            out.extend_from_slice(&digits.as_bytes()[1..]);
        }
        out.extend_from_slice(format!("e{}{:02}", if exponent < 0 { '-' } else { '+' }, exponent.abs()).as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::call::parse_json;

    fn float(f: f64) -> String {
        let mut out = Vec::new();
        python_float_into(f, &mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn floats_are_written_as_python_repr() {
        let cases = [
            (0.0, "0.0"),
            (-0.0, "-0.0"),
            (1.0, "1.0"),
            (0.1, "0.1"),
            (1.5, "1.5"),
            (1e16, "1e+16"),
            (1.5e16, "1.5e+16"),
            (1234567890123456.0, "1234567890123456.0"),
            (123456789012345680.0, "1.2345678901234568e+17"),
            (1e-5, "1e-05"),
            (0.0001, "0.0001"),
            (0.00012345, "0.00012345"),
            (-2.5e-7, "-2.5e-07"),
            (1e300, "1e+300"),
            (5e-324, "5e-324"),
            (100.0, "100.0"),
            (f64::INFINITY, "Infinity"),
            (f64::NAN, "NaN"),
        ];
        for (value, text) in cases {
            assert_eq!(float(value), text, "{value:e}");
        }
    }

    #[test]
    fn objects_are_written_as_python_dicts() {
        let value = parse_json(r#"{"a": 1, "b": [true, null, 2.5, "x\n\"é"], "a": {"c": 1e20}}"#.as_bytes()).unwrap();
        let mut out = Vec::new();
        python_json_into(&value, &mut out);
        assert_eq!(String::from_utf8(out).unwrap(), r#"{"a":{"c":1e+20},"b":[true,null,2.5,"x\n\"é"]}"#);
    }

    #[test]
    fn forge_calls_are_sent_whole_and_failures_named() {
        use crate::parse::{Options, StreamMachine};
        let mut machine = StreamMachine::new(Options::default());
        let mut events = machine.feed(br#"Hi <tool>{"tool_name": "f", "arg"#);
        events.extend(machine.feed(br#"uments": {"a": 1}}</tool> ok <tool>{bad</tool>"#));
        events.extend(machine.finish());
        let mut state = DeltaState::default();
        let deltas: Vec<Delta> = events.iter().filter_map(|event| state.delta(event)).collect();
        assert!(matches!(deltas[0], Delta::Content { newline: false, text: b"Hi" }));
        assert!(matches!(&deltas[1], Delta::WholeCall { index: 0, call } if call.name == "f"));
        assert!(matches!(deltas[2], Delta::Content { newline: true, text: b"ok" }));
        assert!(matches!(&deltas[3], Delta::Issue { index: 0, tool_call: None, issue } if issue.raw == b"<tool>{bad</tool>"));
        assert_eq!(deltas.len(), 4);
    }

    #[test]
    fn client_indices_are_dense_and_issues_numbered_apart() {
        use crate::parse::{Dialect, Options, StreamMachine};
        let deltas_of = |options: Options, text: &[u8]| {
            let mut machine = StreamMachine::new(options);
            let mut events = machine.feed(text);
            events.extend(machine.finish());
            let mut state = DeltaState::default();
            let deltas = events.iter().filter_map(|event| state.delta(event)).map(|delta| match delta {
                Delta::CallStart { index, .. } => format!("start {index}"),
                Delta::Arguments { index, .. } => format!("arguments {index}"),
                Delta::WholeCall { index, .. } => format!("whole {index}"),
                Delta::Issue { index, tool_call, .. } => format!("issue {index} {tool_call:?}"),
                other => format!("{other:?}"),
            });
            deltas.collect::<Vec<String>>()
        };
        let forge = br#"<tool>bad</tool><tool>{"tool_name": "f", "arguments": {}}</tool><tool>{</tool><tool>{"tool_name": "g", "arguments": {}}</tool>"#;
        assert_eq!(deltas_of(Options::default(), forge), ["issue 0 None", "whole 0", "issue 1 None", "whole 1"]);
        let hermes = br#"<tool_call>{"nome": 1}</tool_call><tool_call>{"name": "f", "arguments": {}} x</tool_call><tool_call>{"name": "g", "arguments": {}}</tool_call>"#;
        let options = Options::new(Dialect::Hermes);
        assert_eq!(
            deltas_of(options, hermes),
            ["issue 0 None", "start 0", "arguments 0", "issue 1 Some(0)", "start 1", "arguments 1"]
        );
    }
}
