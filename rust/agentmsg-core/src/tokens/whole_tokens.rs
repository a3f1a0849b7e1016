//! A hash map from every token's bytes to its id, so a piece that is a whole token counts as 1
//! (and encodes to its id) without running the BPE encoder.
//!
//! tiktoken itself checks this first (`encoder.get(piece)` before `byte_pair_encode`), and most
//! pieces of real text (a word with its leading space) are single tokens. The `bpe` crate keeps
//! its own byte lookup private, and its `count` allocates two buffers per piece.

use std::collections::HashMap;
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

/// Pieces up to this many bytes may be merged on the stack as tiktoken merges them; longer ones
/// go to the bpe crate's backtracking encoder (linear at any length, with the same result). The
/// merge costs about two table lookups per merge, the encoder a near-constant amount per token,
/// so the merge wins where a piece is nearly one token per byte (runs of symbols or of rare
/// characters: random Unicode is mostly such runs, about 0.98 tokens per byte) and loses on long
/// pieces that merge at most bytes (`aaaa...`, CJK runs).
pub const MERGE_MAX: usize = 128;

/// A piece longer than [`SHORT`] is merged only if at most one in this many of its adjacent
/// byte pairs is a token: the pairs are looked up first anyway (in the dense pair table), and
/// they predict how much merging is to come.
const MERGEABLE_PAIRS_PER: usize = 8;

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
        let high = if n == 8 {
            0
        } else {
            word(n - 8) >> (8 * (16 - n))
        };
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

/// An open-addressing set of packed short tokens: one multiplicative hash, then compares of
/// adjacent slots (linear probing, at most half full), so a lookup follows no pointers. Slot
/// value 0 means empty: a packed token has its non-zero length in the top byte.
struct ShortTable {
    slots: Box<[u128]>,
    ranks: Box<[u32]>,
    shift: u32,
}

impl ShortTable {
    fn new(keys: &[(u128, u32)]) -> Self {
        let capacity = (2 * keys.len()).next_power_of_two().max(2);
        let mut table = Self {
            slots: vec![0u128; capacity].into_boxed_slice(),
            ranks: vec![0u32; capacity].into_boxed_slice(),
            shift: 64 - capacity.trailing_zeros(),
        };
        for &(key, rank) in keys {
            let mut index = table.index(key);
            while table.slots[index] != 0 && table.slots[index] != key {
                index = (index + 1) & (table.slots.len() - 1);
            }
            table.slots[index] = key;
            table.ranks[index] = rank;
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
    fn rank(&self, key: u128) -> Option<u32> {
        let mask = self.slots.len() - 1;
        let mut index = self.index(key);
        loop {
            let slot = self.slots[index];
            if slot == key {
                return Some(self.ranks[index]);
            }
            if slot == 0 {
                return None;
            }
            index = (index + 1) & mask;
        }
    }
}

/// All token byte strings of one encoding, with their ids.
pub struct WholeTokens {
    /// The id of each one-byte token (every byte is one).
    bytes: [u32; 256],
    /// The id of each two-byte string, `u32::MAX` for none: 256 KB, dense, so the pair lookups
    /// that start every merge (and are nearly all of them in text of rare characters, about one
    /// token per byte) hit the cache instead of probing the 8 MB short table.
    pairs: Box<[u32]>,
    short: ShortTable,
    long: HashMap<&'static [u8], u32, BuildHasherDefault<FxHasher>>,
    /// The length of the longest token: a longer piece is no token, without hashing it.
    longest: usize,
}

impl WholeTokens {
    pub fn new(bpe: &'static BytePairEncoding) -> Self {
        let count = bpe.num_tokens();
        let mut short = Vec::with_capacity(count);
        let mut long = HashMap::with_hasher(BuildHasherDefault::default());
        let mut single = [u32::MAX; 256];
        let mut pairs = vec![u32::MAX; 1 << 16].into_boxed_slice();
        for id in 0..count {
            // Token ids are dense (0..num_tokens), so the cast cannot truncate. bpe-openai reads
            // the tiktoken file in order, whose lines are in rank order: an id is the rank.
            let bytes = bpe.token_bytes(id as u32);
            match *bytes {
                [byte] => single[usize::from(byte)] = id as u32,
                [first, second] => pairs[pair_index(first, second)] = id as u32,
                _ => {}
            }
            if bytes.len() <= SHORT {
                short.push((pack(bytes), id as u32));
            } else {
                long.insert(bytes, id as u32);
            }
        }
        let longest = long.keys().map(|bytes| bytes.len()).max().unwrap_or(SHORT);
        Self {
            bytes: single,
            pairs,
            short: ShortTable::new(&short),
            long,
            longest,
        }
    }

    /// Whether `piece` is exactly one token.
    #[inline]
    pub fn contains(&self, piece: &[u8]) -> bool {
        self.id(piece).is_some()
    }

    /// The id of the token whose bytes are exactly `piece`.
    #[inline]
    pub fn id(&self, piece: &[u8]) -> Option<u32> {
        match *piece {
            [] => None,
            [byte] => Some(self.bytes[usize::from(byte)]),
            [first, second] => Some(self.pairs[pair_index(first, second)]).filter(|&id| id != u32::MAX),
            _ if piece.len() <= SHORT => self.short.rank(pack(piece)),
            _ if piece.len() > self.longest => None,
            _ => self.long.get(piece).copied(),
        }
    }

    /// The number of tokens tiktoken's byte-pair merge makes of a piece (`None` for a piece
    /// left to the backtracking encoder: see [`MERGE_MAX`]).
    pub fn count_short(&self, piece: &[u8]) -> Option<usize> {
        self.merge_short(piece).map(|merged| merged.parts)
    }

    /// The token ids tiktoken's byte-pair merge makes of a piece, appended to `out`; false (and
    /// nothing appended) for a piece left to the backtracking encoder.
    pub fn encode_short(&self, piece: &[u8], out: &mut Vec<u32>) -> bool {
        let Some(merged) = self.merge_short(piece) else {
            return false;
        };
        out.extend_from_slice(&merged.ids[..merged.parts]);
        true
    }

    /// tiktoken's byte-pair merge of a piece of at most [`MERGE_MAX`] bytes (`None` for a piece
    /// left to the backtracking encoder): merge the adjacent pair whose union has the lowest rank, leftmost first,
    /// until no union is a token. The parts live on the stack; unions of up to [`SHORT`] bytes
    /// are looked up in the flat table.
    #[inline]
    fn merge_short(&self, piece: &[u8]) -> Option<Merged> {
        let n = piece.len();
        if n > MERGE_MAX {
            return None;
        }
        // Part i is piece[bounds[i]..bounds[i + 1]]; ranks[i] is the rank of parts i and i + 1
        // merged (u32::MAX if that is no token).
        let mut bounds = [0u8; MERGE_MAX + 1];
        for (i, bound) in bounds.iter_mut().enumerate().take(n + 1) {
            *bound = i as u8;
        }
        // ids[i] is the id of part i: every single byte is a token, and a merge makes the
        // token whose rank it merged by.
        let mut ids = [0u32; MERGE_MAX];
        for (id, &byte) in ids.iter_mut().zip(piece) {
            *id = self.bytes[usize::from(byte)];
        }
        if n <= 1 {
            return Some(Merged { ids, parts: n });
        }
        let rank_of = |from: u8, to: u8| -> u32 {
            self.id(&piece[usize::from(from)..usize::from(to)])
                .unwrap_or(u32::MAX)
        };
        let mut ranks = [u32::MAX; MERGE_MAX];
        let mut parts = n;
        let mut mergeable_pairs = 0;
        for i in 0..parts - 1 {
            ranks[i] = rank_of(bounds[i], bounds[i + 2]);
            mergeable_pairs += usize::from(ranks[i] != u32::MAX);
        }
        if n > SHORT && mergeable_pairs * MERGEABLE_PAIRS_PER > n {
            return None;
        }
        loop {
            // The lowest rank, then its leftmost place: two passes that vectorize, where one
            // pass tracking the index does not (long pieces merge up to MERGE_MAX times).
            let live = &ranks[..parts - 1];
            let best = live.iter().copied().min().unwrap_or(u32::MAX);
            if best == u32::MAX {
                return Some(Merged { ids, parts });
            }
            let at = live.iter().position(|&rank| rank == best).unwrap_or(0);
            // Merge parts `at` and `at + 1`: drop the bound between them.
            bounds.copy_within(at + 2..=parts, at + 1);
            ranks.copy_within(at + 1..parts - 1, at);
            ids[at] = best;
            ids.copy_within(at + 2..parts, at + 1);
            parts -= 1;
            ranks[at] = if at + 1 < parts {
                rank_of(bounds[at], bounds[at + 2])
            } else {
                u32::MAX
            };
            if at > 0 {
                ranks[at - 1] = rank_of(bounds[at - 1], bounds[at + 1]);
            }
        }
    }
}

#[inline]
fn pair_index(first: u8, second: u8) -> usize {
    usize::from(first) << 8 | usize::from(second)
}

/// The result of [`WholeTokens::merge_short`]: the ids of its `parts` tokens, in order.
struct Merged {
    ids: [u32; MERGE_MAX],
    parts: usize,
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::sync::LazyLock;

    static CL100K: LazyLock<WholeTokens> =
        LazyLock::new(|| WholeTokens::new(&bpe_openai::cl100k_base().bpe));
    static O200K: LazyLock<WholeTokens> =
        LazyLock::new(|| WholeTokens::new(&bpe_openai::o200k_base().bpe));

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// The stack merge agrees with the bpe crate's encoder on any bytes, valid UTF-8 or not,
        /// skewed towards bytes that merge (ASCII letters, spaces, UTF-8 lead and tail bytes).
        #[test]
        fn short_merge_is_the_bpe_count(
            piece in proptest::collection::vec(
                prop_oneof![any::<u8>(), b'a'..=b'z', Just(b' '), 0xe0u8..=0xef, 0x80u8..=0xbf],
                0..=MERGE_MAX,
            )
        ) {
            for (tokens, bpe) in [(&*CL100K, &bpe_openai::cl100k_base().bpe), (&*O200K, &bpe_openai::o200k_base().bpe)] {
                let merged = tokens.merge_short(&piece).is_some();
                prop_assert!(merged || piece.len() > SHORT);
                if merged {
                    prop_assert_eq!(tokens.count_short(&piece), Some(bpe.count(&piece)));
                    let mut ids = Vec::new();
                    prop_assert!(tokens.encode_short(&piece, &mut ids));
                    prop_assert_eq!(ids, bpe.encode_via_backtracking(&piece));
                }
            }
        }
    }

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

    #[test]
    fn short_merge_counts_as_the_bpe_crate() {
        for bpe in [
            &bpe_openai::cl100k_base().bpe,
            &bpe_openai::o200k_base().bpe,
        ] {
            let tokens = WholeTokens::new(bpe);
            let samples: [&[u8]; 9] = [
                b"ab",
                b"hello!!",
                b" tokenizer",
                b"\xe6\x97\xa5\xe6\x9c\xac",
                b"zzzzzzzzzzzzzzz",
                b"\xef\xbf\xbd\xef\xbf\xbd?",
                b"a1b2c3",
                b"1234567890",
                b"\xff\xfe",
            ];
            for piece in samples {
                assert_eq!(
                    tokens.count_short(piece),
                    Some(bpe.count(piece)),
                    "{piece:?}"
                );
            }
            assert_eq!(tokens.count_short(&[b'x'; MERGE_MAX + 1]), None);
        }
    }
}
