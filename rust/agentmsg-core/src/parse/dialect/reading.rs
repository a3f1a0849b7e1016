//! Reading steps the dialect machines share.

use super::scan::{find_marker, Found};
use super::{Core, Flow, Input};

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

/// Blanks (as `blank` says) at `data[i..]`, reported as text: they only separate, and a text
/// run drops them at its ends. Returns where the next other byte is.
pub(crate) fn text_blanks(core: &mut Core, input: &Input, i: usize, blank: fn(u8) -> bool) -> usize {
    let data = input.data;
    let n = data[i..].iter().take_while(|b| blank(**b)).count();
    core.out.text(&data[i..i + n], input.abs(i));
    i + n
}
