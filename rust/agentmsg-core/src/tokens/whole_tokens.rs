//! A hash set of every token's bytes, so a piece that is a whole token counts as 1 without
//! running the BPE encoder.
//!
//! tiktoken itself checks this first (`encoder.get(piece)` before `byte_pair_encode`), and most
//! pieces of real text (a word with its leading space) are single tokens. The `bpe` crate keeps
//! its own byte lookup private, and its `count` allocates two buffers per piece.

use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hasher};

use bpe_openai::byte_pair_encoding::BytePairEncoding;

/// FxHash (rustc's hasher) with a final mix: a multiply and a rotate per 8 bytes. Token bytes are short and not
/// attacker-chosen keys into this table (it is built once from the fixed vocabulary; a lookup
/// costs one probe sequence whatever the input), so a fast non-keyed hash is right here.
#[derive(Default, Clone, Copy)]
pub struct FxHasher {
    hash: u64,
}

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl FxHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(SEED);
    }
}

impl Hasher for FxHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut word = [0u8; 8];
            word[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(word));
        }
    }

    #[inline]
    fn write_usize(&mut self, value: usize) {
        self.add(value as u64);
    }

    #[inline]
    fn write_u128(&mut self, value: u128) {
        self.add(value as u64);
        self.add((value >> 64) as u64);
    }

    /// The multiply leaves the low bits depending only on the low bits of the input (the first
    /// bytes of a token), and the table indexes by the low bits: mix them all in (murmur3's
    /// finalizer) or tokens sharing a prefix pile up in one probe sequence.
    #[inline]
    fn finish(&self) -> u64 {
        let mut hash = self.hash;
        hash ^= hash >> 33;
        hash = hash.wrapping_mul(0xff51_afd7_ed55_8ccd);
        hash ^= hash >> 33;
        hash = hash.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        hash ^ (hash >> 33)
    }
}

/// Pieces up to this many bytes are looked up by value, packed into a `u128` with their length.
const SHORT: usize = 15;

/// A short byte string (at most [`SHORT`] bytes) and its length in one integer: no pointer to
/// follow and one compare. Built from overlapping word loads, never through a stack buffer (a
/// variable-length copy into one stalls the wide load that reads it back).
#[inline]
fn pack(bytes: &[u8]) -> u128 {
    let n = bytes.len();
    debug_assert!(n <= SHORT);
    let word = |at: usize| -> u64 {
        let mut buf = [0u8; 8];
        buf.copy_from_slice(&bytes[at..at + 8]);
        u64::from_le_bytes(buf)
    };
    let half = |at: usize| -> u64 {
        let mut buf = [0u8; 4];
        buf.copy_from_slice(&bytes[at..at + 4]);
        u64::from(u32::from_le_bytes(buf))
    };
    let (low, high) = if n >= 8 {
        // The last 8 bytes, shifted so that byte 8 lands at the bottom of `high`.
        let high = if n == 8 { 0 } else { word(n - 8) >> (8 * (16 - n)) };
        (word(0), high)
    } else if n >= 4 {
        // Two overlapping 4-byte loads; the overlap holds the same bytes at the same places.
        (half(0) | (half(n - 4) << (8 * (n - 4))), 0)
    } else if n > 0 {
        let byte = |at: usize| u64::from(bytes[at]) << (8 * at);
        (byte(0) | byte(n / 2) | byte(n - 1), 0)
    } else {
        (0, 0)
    };
    u128::from(low) | (u128::from(high) << 64) | ((n as u128) << 120)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pack_is_the_bytes_and_the_length() {
        let source: Vec<u8> = (1..=15).collect();
        for n in 0..=SHORT {
            let bytes = &source[..n];
            let mut expected = [0u8; 16];
            expected[..n].copy_from_slice(bytes);
            expected[15] = n as u8;
            assert_eq!(pack(bytes), u128::from_le_bytes(expected), "length {n}");
        }
    }

    #[test]
    fn every_token_is_found_and_near_misses_are_not() {
        let bpe = &bpe_openai::cl100k_base().bpe;
        let tokens = WholeTokens::new(bpe);
        for id in 0..bpe.num_tokens() as u32 {
            assert!(tokens.contains(bpe.token_bytes(id)));
        }
        assert!(!tokens.contains(b" hello world"));
        assert!(!tokens.contains(b""));
    }
}

/// An open-addressing set of packed short tokens: one multiplicative hash, then compares of
/// adjacent slots (linear probing, at most half full), so a lookup follows no pointers. Slot
/// value 0 means empty: a packed token has its non-zero length in the top byte.
struct ShortTable {
    slots: Box<[u128]>,
    shift: u32,
}

impl ShortTable {
    fn new(keys: &[u128]) -> Self {
        let capacity = (2 * keys.len()).next_power_of_two().max(2);
        let mut table = Self {
            slots: vec![0u128; capacity].into_boxed_slice(),
            shift: 64 - capacity.trailing_zeros(),
        };
        for &key in keys {
            let mut index = table.index(key);
            while table.slots[index] != 0 && table.slots[index] != key {
                index = (index + 1) & (table.slots.len() - 1);
            }
            table.slots[index] = key;
        }
        table
    }

    /// Fibonacci hashing: the top bits of a product are mixed from every input bit.
    #[inline]
    fn index(&self, key: u128) -> usize {
        let low = key as u64;
        let high = (key >> 64) as u64;
        let mixed = (low ^ high.rotate_left(29)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        (mixed >> self.shift) as usize
    }

    #[inline]
    fn contains(&self, key: u128) -> bool {
        let mask = self.slots.len() - 1;
        let mut index = self.index(key);
        loop {
            let slot = self.slots[index];
            if slot == key {
                return true;
            }
            if slot == 0 {
                return false;
            }
            index = (index + 1) & mask;
        }
    }
}

/// The set of all token byte strings of one encoding.
pub struct WholeTokens {
    short: ShortTable,
    long: HashSet<&'static [u8], BuildHasherDefault<FxHasher>>,
}

impl WholeTokens {
    pub fn new(bpe: &'static BytePairEncoding) -> Self {
        let count = bpe.num_tokens();
        let mut short = Vec::with_capacity(count);
        let mut long = HashSet::with_hasher(BuildHasherDefault::default());
        for id in 0..count {
            // Token ids are dense (0..num_tokens), so the cast cannot truncate.
            let bytes = bpe.token_bytes(id as u32);
            if bytes.len() <= SHORT {
                short.push(pack(bytes));
            } else {
                long.insert(bytes);
            }
        }
        Self { short: ShortTable::new(&short), long }
    }

    /// Whether `piece` is exactly one token.
    #[inline]
    pub fn contains(&self, piece: &[u8]) -> bool {
        match piece.len() {
            0 => false,
            1..=SHORT => self.short.contains(pack(piece)),
            _ => self.long.contains(piece),
        }
    }
}
