//! Finding special markers in text with memchr, holding back only a possible marker prefix.

use std::cell::RefCell;

use memchr::{memchr, memchr2, memchr3};

thread_local! {
    /// While a machine reads data holding spellings that are no markers ([`crate::ids`]: an
    /// added token's text spelled by ordinary tokens), where each one starts (the address of its
    /// first byte in that data) and its length. Empty otherwise, which is all the text path
    /// ever sees.
    static NOT_MARKERS: RefCell<Vec<(usize, usize)>> = const { RefCell::new(Vec::new()) };
}

/// Clears [`NOT_MARKERS`] when the read ends, even by unwinding (its addresses mean nothing
/// after it).
struct ClearNotMarkers;

impl Drop for ClearNotMarkers {
    fn drop(&mut self) {
        NOT_MARKERS.with_borrow_mut(Vec::clear);
    }
}

/// Runs `read` over `data` (which starts at stream offset `offset`) with no marker of the
/// same length read at the stream ranges `spelled` (`(start, len)`): there a marker's
/// spelling is text.
pub(crate) fn reading_not_markers<R>(data: &[u8], offset: usize, spelled: &[(usize, usize)], read: impl FnOnce() -> R) -> R {
    let base = data.as_ptr() as usize;
    let end = offset + data.len();
    NOT_MARKERS.with_borrow_mut(|list| {
        list.clear();
        let inside = spelled.iter().filter(|&&(start, _)| start >= offset && start < end);
        list.extend(inside.map(|&(start, len)| (base + start - offset, len)));
    });
    let _clear = ClearNotMarkers;
    read()
}

/// The length of a spelling that is no marker starting at `rest`, if one does.
#[inline]
fn not_marker_at(rest: &[u8]) -> Option<usize> {
    NOT_MARKERS.with_borrow(|list| {
        if list.is_empty() {
            return None;
        }
        let at = rest.as_ptr() as usize;
        list.iter().find(|&&(start, _)| start == at).map(|&(_, len)| len)
    })
}

/// Where the next marker is in `data[from..]`.
pub(crate) enum Found {
    /// Marker number `which` starts at `at`.
    Marker { at: usize, which: usize },
    /// `data[at..]` is a proper prefix of a marker: wait for more input before deciding.
    Partial { at: usize },
    /// No marker and no possible marker start.
    None,
}

/// The first of `markers` (non-empty) at or after `from`. Every byte that starts a marker is
/// looked at once (found with memchr when the markers start with at most three distinct bytes);
/// only the bytes after it that could still match are compared, so the scan is linear.
pub(crate) fn find_marker<M: AsRef<[u8]>>(data: &[u8], from: usize, markers: &[M]) -> Found {
    let mut leads = [0u8; 3];
    let mut count = 0;
    for marker in markers {
        let lead = marker.as_ref()[0];
        if !leads[..count.min(3)].contains(&lead) {
            if count < 3 {
                leads[count] = lead;
            }
            count += 1;
        }
    }
    let next = |at: usize| -> Option<usize> {
        let rest = &data[at..];
        match count {
            1 => memchr(leads[0], rest),
            2 => memchr2(leads[0], leads[1], rest),
            3 => memchr3(leads[0], leads[1], leads[2], rest),
            _ => rest.iter().position(|b| markers.iter().any(|m| m.as_ref()[0] == *b)),
        }
    };
    let mut at = from;
    while let Some(offset) = next(at) {
        at += offset;
        match match_at(data, at, markers) {
            Found::None => at += 1,
            found => return found,
        }
    }
    Found::None
}

/// Whether a marker starts exactly at `at` (or could, once more bytes arrive).
pub(crate) fn match_at<M: AsRef<[u8]>>(data: &[u8], at: usize, markers: &[M]) -> Found {
    let rest = &data[at..];
    let mut partial = false;
    let not_marker = not_marker_at(rest);
    for (which, marker) in markers.iter().enumerate() {
        let marker = marker.as_ref();
        if rest.starts_with(marker) && not_marker != Some(marker.len()) {
            return Found::Marker { at, which };
        }
        if rest.len() < marker.len() && marker.starts_with(rest) {
            partial = true;
        }
    }
    if partial {
        Found::Partial { at }
    } else {
        Found::None
    }
}

/// Where the run of bytes from `data[i]` that `keep` accepts ends: at the next other byte, or
/// None when the run reaches the end of the data (the next chunk may go on with it).
pub(crate) fn run_end(data: &[u8], i: usize, keep: impl Fn(u8) -> bool) -> Option<usize> {
    let end = i + data[i..].iter().take_while(|b| keep(**b)).count();
    (end < data.len()).then_some(end)
}

/// [`run_end`], copying the run onto `into`.
pub(crate) fn take_run(data: &[u8], i: usize, into: &mut Vec<u8>, keep: impl Fn(u8) -> bool) -> Option<usize> {
    let end = run_end(data, i, keep);
    into.extend_from_slice(&data[i..end.unwrap_or(data.len())]);
    end
}

/// JSON's insignificant whitespace (also what the dialects allow between their elements).
pub(crate) fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_markers_and_partial_prefixes() {
        let markers: &[&[u8]] = &[b"<a>", b"<bc>"];
        assert!(matches!(find_marker(b"x <y <bc> <a>", 0, markers), Found::Marker { at: 5, which: 1 }));
        assert!(matches!(find_marker(b"x <b", 0, markers), Found::Partial { at: 2 }));
        assert!(matches!(find_marker(b"x <b>", 0, markers), Found::None));
        let mixed: &[&[u8]] = &["◁t▷".as_bytes(), b"<a>", b"[b]", b"{c}"];
        assert!(matches!(find_marker("x [c ◁t▷".as_bytes(), 0, mixed), Found::Marker { at: 5, which: 0 }));
        assert!(matches!(find_marker(b"x {c} [b]", 0, mixed), Found::Marker { at: 2, which: 3 }));
    }
}
