//! Character offsets: Python indexes strings by code point, the machine by byte.

/// The number of characters in UTF-8 (or `surrogatepass`) bytes: every byte that is not a
/// continuation byte starts one character.
///
/// Counted with a byte-wide sum per 255 bytes (it cannot overflow), a reduction the compiler
/// vectorizes (tens of GB/s; a plain `filter().count()` widens to 64-bit lanes and is ~10x slower).
pub fn count_chars(bytes: &[u8]) -> usize {
    bytes
        .chunks(255)
        .map(|chunk| {
            let starts = chunk.iter().fold(0u8, |n, &b| n.wrapping_add(u8::from((b as i8) >= -0x40)));
            usize::from(starts)
        })
        .sum()
}

/// Maps byte positions of one slice to absolute (byte, char) offsets of the stream, for
/// positions asked in increasing order; each byte is counted once.
pub struct CharClock {
    abs_start: usize,
    index: usize,
    chars: usize,
}

impl CharClock {
    /// A clock for a slice that starts at stream byte `abs_start`, character `chars_start`.
    pub fn new(abs_start: usize, chars_start: usize) -> Self {
        Self { abs_start, index: 0, chars: chars_start }
    }

    /// The stream byte offset of `data[i]`.
    pub fn abs(&self, i: usize) -> usize {
        self.abs_start + i
    }

    /// The (byte, char) stream offset of `data[i]`.
    pub fn at(&mut self, data: &[u8], i: usize) -> (usize, usize) {
        if i > self.index {
            self.chars += count_chars(&data[self.index..i]);
            self.index = i;
        }
        (self.abs_start + i, self.chars)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_code_points_and_surrogatepass() {
        assert_eq!(count_chars("aé日🎉".as_bytes()), 4);
        // A lone surrogate encoded with surrogatepass is three bytes, one character.
        assert_eq!(count_chars(b"a\xed\xa0\x80b"), 3);
        let long = "aé日🎉".repeat(5000);
        assert_eq!(count_chars(long.as_bytes()), long.chars().count());
        let mut clock = CharClock::new(10, 5);
        let data = "é日x".as_bytes();
        assert_eq!(clock.at(data, 2), (12, 6));
        assert_eq!(clock.at(data, 5), (15, 7));
        assert_eq!(clock.at(data, 5), (15, 7));
    }
}
