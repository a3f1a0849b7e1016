//! llama3_json: JSON calls `{"name": …, "parameters": {…}}` as Llama 3.1-3.3 write them.
//!
//! A JSON object is read as a possible call only where a call can be: at the very start of the
//! reply (after blanks), right after `<|python_tag|>` (blanks allowed), or after `;` that follows
//! a call (`{…}; {…}`). It is a call once its top-level `name` is a non-empty string; an object
//! that closes (or is cut off) without one is text, so an answer that is JSON data or prose that
//! starts with a brace is never swallowed. The arguments key is `parameters` (`arguments` is
//! accepted too). The call ends where its object closes; what follows is text, and a `{` later
//! in the text is text unless `<|python_tag|>` comes before it.

use super::held::Held;
use super::json_call::{JsonCall, JsonShape};
use super::reading::{read_until, text_blanks};
use super::driver::{Core, Flow, Input, OpenCall, Payload, StateMachine};
use crate::parse::scan::is_space;

const PYTHON_TAG: &[u8] = b"<|python_tag|>";

#[derive(Clone, Debug)]
enum State {
    /// The start of the reply: blanks, then a `{` or `<|python_tag|>` may open a call.
    Start,
    Text,
    /// After `<|python_tag|>` (held) or a `;` after a call (held): blanks, then `{` or not.
    BeforeObject(Held),
    /// An object whose name is not known yet: `held` holds its bytes so far.
    Candidate { held: Held, json: JsonCall },
    Call(OpenCall),
    /// After a call: blanks, then `;` for another call, or text.
    AfterCall,
}

#[derive(Clone, Debug)]
pub(crate) struct LlamaJsonMachine {
    pub core: Core,
    state: State,
}

fn new_payload() -> JsonCall {
    JsonCall::new(JsonShape::Fields { name_key: "name".into(), arguments_key: "parameters".into() }).with_arguments_alias("arguments").ending_at_close()
}

impl LlamaJsonMachine {
    pub fn new(core: Core) -> Self {
        Self { core, state: State::Start }
    }

    /// Where a call may follow (the start of the reply, after a call): blanks are text, then
    /// the byte that decides. At the start a `{` may open a call; after a call, `;` leads to
    /// another. Anything else is text.
    fn gap(&mut self, input: &mut Input, i: usize) -> Flow {
        let data = input.data;
        let Some(i) = text_blanks(&mut self.core, input, i, is_space) else { return Flow::Continue(data.len()) };
        match (&self.state, data[i]) {
            (State::Start, b'{') => {
                self.state = State::Candidate { held: Held::new(input.at(i), b""), json: new_payload() };
                Flow::Continue(i)
            }
            (State::AfterCall, b';') => {
                self.state = State::BeforeObject(Held::new(input.at(i), b";"));
                Flow::Continue(i + 1)
            }
            _ => {
                self.state = State::Text;
                Flow::Continue(i)
            }
        }
    }

    fn text(&mut self, input: &mut Input, i: usize) -> Flow {
        match read_until(&mut self.core, input, i, &[PYTHON_TAG], false) {
            Ok((at, _)) => {
                self.state = State::BeforeObject(Held::new(input.at(at), PYTHON_TAG));
                Flow::Continue(at + PYTHON_TAG.len())
            }
            Err(flow) => flow,
        }
    }

    fn before_object(&mut self, input: &Input, i: usize) -> Flow {
        let data = input.data;
        let State::BeforeObject(held) = &mut self.state else { return Flow::Wait(i) };
        let Some(i) = held.hold_blanks(data, i) else { return Flow::Continue(data.len()) };
        let State::BeforeObject(held) = std::mem::replace(&mut self.state, State::Text) else {
            return Flow::Wait(i);
        };
        if data[i] == b'{' {
            self.state = State::Candidate { held, json: new_payload() };
        } else {
            held.into_text(&mut self.core);
        }
        Flow::Continue(i)
    }

    /// An object read until its name shows it is a call, or it closes without one.
    fn candidate(&mut self, input: &Input, mut i: usize) -> Flow {
        let data = input.data;
        let State::Candidate { held, json } = &mut self.state else { return Flow::Wait(i) };
        let name = loop {
            let stop = json.scan(data, i);
            held.bytes.extend_from_slice(&data[i..stop]);
            i = stop;
            if let Some(name) = json.take_name() {
                break name.to_owned();
            }
            if json.closed {
                let State::Candidate { held, .. } = std::mem::replace(&mut self.state, State::Text) else {
                    return Flow::Wait(i);
                };
                held.into_text(&mut self.core);
                return Flow::Continue(i);
            }
            if i == data.len() {
                return Flow::Continue(i);
            }
            json.push_byte(b'<');
            held.bytes.push(b'<');
            i += 1;
        };
        let State::Candidate { held, json } = std::mem::replace(&mut self.state, State::Text) else {
            return Flow::Wait(i);
        };
        let mut call = self.core.open_call(held.start, held.start_chars, held.bytes, Payload::Json(json));
        self.core.start_call(&mut call, &name);
        self.state = State::Call(call);
        // The object may have closed already (its name came last).
        self.call(input, i)
    }

    fn call(&mut self, input: &Input, mut i: usize) -> Flow {
        let data = input.data;
        let State::Call(call) = &mut self.state else { return Flow::Wait(i) };
        let Payload::Json(json) = &mut call.payload else { return Flow::Wait(i) };
        loop {
            if json.closed {
                break;
            }
            if i == data.len() {
                self.core.progress(call);
                return Flow::Continue(i);
            }
            let stop = json.scan(data, i);
            call.raw.extend_from_slice(&data[i..stop]);
            i = stop;
            if !json.closed && i < data.len() {
                // A `<` outside a string: no end marker to look for here.
                json.push_byte(b'<');
                call.raw.push(b'<');
                i += 1;
            }
        }
        if let State::Call(call) = std::mem::replace(&mut self.state, State::AfterCall) {
            self.core.end_call(call);
        }
        Flow::Continue(i)
    }
}

impl StateMachine for LlamaJsonMachine {
    #[inline(always)]
    fn step(&mut self, input: &mut Input, i: usize) -> Flow {
        match self.state {
            State::Start | State::AfterCall => self.gap(input, i),
            State::Text => self.text(input, i),
            State::BeforeObject(_) => self.before_object(input, i),
            State::Candidate { .. } => self.candidate(input, i),
            State::Call(_) => self.call(input, i),
        }
    }

    /// The end of the text: closes what is open.
    fn finish(&mut self) {
        match std::mem::replace(&mut self.state, State::Text) {
            State::Start | State::Text | State::AfterCall => {}
            State::BeforeObject(held) | State::Candidate { held, .. } => held.into_text(&mut self.core),
            State::Call(call) => self.core.cut_off(call, "a JSON call"),
        }
    }

    fn core(&mut self) -> &mut Core {
        &mut self.core
    }
}
