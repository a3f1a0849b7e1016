//! Reading steps the dialect machines share.

use super::driver::{Core, Flow, Input};
use crate::parse::scan::{find_marker, run_end, Found};

/// Text (or reasoning, if `thinking`) from `data[i..]` up to the first of `markers`, which is
/// reported as it goes. `Ok((at, which))`: marker `which` starts at `at`. Else the flow: all
/// read, or wait for what may be the start of a marker.
pub(crate) fn read_until<M: AsRef<[u8]>>(
    core: &mut Core,
    input: &Input,
    i: usize,
    markers: &[M],
    thinking: bool,
) -> Result<(usize, usize), Flow> {
    let data = input.data;
    let found = input.settle(find_marker(data, i, markers));
    let until = match found {
        Found::Marker { at, .. } | Found::Partial { at } => at,
        Found::None => data.len(),
    };
    if thinking {
        core.out.thinking(&data[i..until], input.abs(i));
    } else {
        core.out.text(&data[i..until], input.abs(i));
    }
    match found {
        Found::Marker { at, which } => Ok((at, which)),
        Found::Partial { at } => Err(Flow::Wait(at)),
        Found::None => Err(Flow::Continue(data.len())),
    }
}

/// Reasoning from `data[i..]` up to the first of `closes`, which ends it. `Ok(next)`: reading
/// goes on at `next`, after the closer; else the flow, as [`read_until`] says.
pub(crate) fn read_thinking<M: AsRef<[u8]>>(core: &mut Core, input: &Input, i: usize, closes: &[M]) -> Result<usize, Flow> {
    let (at, which) = read_until(core, input, i, closes, true)?;
    core.out.end_thinking(true);
    Ok(at + closes[which].as_ref().len())
}

/// What a dialect with thinking tags remembers of them for `StartThinking::Detect`: whether the
/// first one read was a closing one.
#[derive(Clone, Debug, Default)]
pub(crate) struct ThinkingTags {
    saw_open: bool,
    pub saw_stray_close: bool,
}

impl ThinkingTags {
    /// An opening tag (or a reply that starts inside reasoning): reasoning starts.
    pub fn open(&mut self, core: &mut Core) {
        self.saw_open = true;
        core.out.begin_thinking();
    }

    /// A closing tag with no reasoning open is text; it is stray if no tag came before it.
    pub fn stray_close(&mut self, core: &mut Core, tag: &[u8], at: usize) {
        self.saw_stray_close |= !self.saw_open;
        self.saw_open = true;
        core.out.text(tag, at);
    }
}

/// Blanks (as `blank` says) at `data[i..]`, reported as text: they only separate, and a text
/// run drops them at its ends. Returns where the next other byte is, or None when the data ends
/// first.
pub(crate) fn text_blanks(core: &mut Core, input: &Input, i: usize, blank: fn(u8) -> bool) -> Option<usize> {
    let data = input.data;
    let end = run_end(data, i, blank);
    core.out.text(&data[i..end.unwrap_or(data.len())], input.abs(i));
    end
}
