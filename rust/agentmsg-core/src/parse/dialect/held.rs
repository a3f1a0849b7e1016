//! Bytes read while deciding whether a call starts: they become the call's raw text if one
//! does, and visible text if none does.

use super::driver::{Core, Flow};
use crate::parse::scan::{is_space, take_run};

#[derive(Clone, Debug)]
pub(crate) struct Held {
    /// Stream offsets (bytes, characters) of `bytes[0]`.
    pub start: usize,
    pub start_chars: usize,
    pub bytes: Vec<u8>,
}

impl Held {
    pub fn new((start, start_chars): (usize, usize), bytes: &[u8]) -> Self {
        Self { start, start_chars, bytes: bytes.to_vec() }
    }

    /// Holds the blanks at `data[i..]`; returns where the next other byte is, or None when the
    /// data ends first.
    pub fn hold_blanks(&mut self, data: &[u8], i: usize) -> Option<usize> {
        take_run(data, i, &mut self.bytes, is_space)
    }

    /// No call after all: the bytes are text.
    pub fn into_text(self, core: &mut Core) {
        core.out.text(&self.bytes, self.start);
    }

    /// [`Held::into_text`] where a step found no call: reading goes on at `i`, in the text state
    /// the step has set.
    pub fn not_a_call(self, core: &mut Core, i: usize) -> Flow {
        self.into_text(core);
        Flow::Continue(i)
    }
}
