//! Bytes read while deciding whether a call starts: they become the call's raw text if one
//! does, and visible text if none does.

use super::scan::is_space;
use super::Core;

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

    /// Holds the blanks at `data[i..]`; returns where the next other byte is (or the end).
    pub fn hold_blanks(&mut self, data: &[u8], i: usize) -> usize {
        let n = data[i..].iter().take_while(|b| is_space(**b)).count();
        self.bytes.extend_from_slice(&data[i..i + n]);
        i + n
    }

    /// No call after all: the bytes are text.
    pub fn into_text(self, core: &mut Core) {
        core.out.text(&self.bytes, self.start);
    }
}
