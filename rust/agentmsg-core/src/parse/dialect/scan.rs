//! Finding special markers in text with memchr, holding back only a possible marker prefix.

use memchr::memchr;

/// Where the next marker is in `data[from..]`.
pub(crate) enum Found {
    /// Marker number `which` starts at `at`.
    Marker { at: usize, which: usize },
    /// `data[at..]` is a proper prefix of a marker: wait for more input before deciding.
    Partial { at: usize },
    /// No marker and no possible marker start.
    None,
}

/// The first of `markers` (all starting with the same byte, `<` or `[`) at or after `from`.
/// Every such byte is looked at once; only the bytes after it that could still match are
/// compared, so the scan is linear.
pub(crate) fn find_marker(data: &[u8], from: usize, markers: &[&[u8]]) -> Found {
    let lead = markers[0][0];
    debug_assert!(markers.iter().all(|m| m[0] == lead));
    let mut at = from;
    while let Some(offset) = memchr(lead, &data[at..]) {
        at += offset;
        match match_at(data, at, markers) {
            Found::None => at += 1,
            found => return found,
        }
    }
    Found::None
}

/// Whether a marker starts exactly at `at` (or could, once more bytes arrive).
pub(crate) fn match_at(data: &[u8], at: usize, markers: &[&[u8]]) -> Found {
    let rest = &data[at..];
    let mut partial = false;
    for (which, marker) in markers.iter().enumerate() {
        if rest.starts_with(marker) {
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
    }
}
