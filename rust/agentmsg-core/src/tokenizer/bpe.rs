//! The byte-pair model of a `tokenizer.json` (`"type": "BPE"`): a piece's first symbols (its
//! bytes, or its characters with byte fallback), then the merges applied lowest rank first,
//! leftmost first among equal ranks, as the `tokenizers` library applies them.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::hash::{BuildHasherDefault, Hasher};

/// A multiply-rotate hasher for the model's own keys (token ids, token bytes): the keys are the
/// file's, lookups never insert, so flooding is no concern and speed is.
#[derive(Default, Clone, Copy)]
pub(crate) struct FastHasher(u64);

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl FastHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(SEED);
    }
}

impl Hasher for FastHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            self.add(u64::from_le_bytes(chunk.try_into().expect("8 bytes")));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut last = [0u8; 8];
            last[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(last));
        }
    }

    #[inline]
    fn write_u64(&mut self, word: u64) {
        self.add(word);
    }

    #[inline]
    fn write_usize(&mut self, word: usize) {
        self.add(word as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

pub(crate) type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<FastHasher>>;

/// Pieces of at most this many symbols are merged by scanning all pairs for each merge (no
/// allocation, fastest for the short pieces text is made of); longer ones use a heap.
const SCAN_MAX_SYMBOLS: usize = 48;

/// How a piece becomes its first symbols.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Symbols {
    /// One symbol per byte (byte-level vocabularies: Llama 3, Qwen, DeepSeek, GLM, gpt-oss).
    Bytes,
    /// One symbol per character; a character that is no token becomes its bytes' `<0xXX>`
    /// tokens if `byte_fallback`, else the unknown token (SentencePiece-style vocabularies).
    Chars,
}

/// The merge rules and vocabulary of a BPE model, keyed as the pieces it sees.
pub(crate) struct BpeModel {
    pub symbols: Symbols,
    /// Token bytes (as pieces spell them) to id.
    pub vocab: FastMap<Box<[u8]>, u32>,
    /// `(left << 32 | right)` to `(rank, merged id)`.
    merges: FastMap<u64, (u32, u32)>,
    /// The id of each byte's own token (byte-level vocabularies).
    byte_ids: [Option<u32>; 256],
    /// The id of each byte's `<0xXX>` token (byte fallback).
    fallback_ids: Option<[u32; 256]>,
    pub unk: Option<u32>,
    pub fuse_unk: bool,
    /// Whether a piece that is itself a token is that token without merging (`ignore_merges`).
    pub ignore_merges: bool,
}

impl BpeModel {
    pub fn new(
        symbols: Symbols,
        vocab: FastMap<Box<[u8]>, u32>,
        merges: FastMap<u64, (u32, u32)>,
        byte_fallback: bool,
        unk: Option<u32>,
        fuse_unk: bool,
        ignore_merges: bool,
    ) -> Self {
        let mut byte_ids = [None; 256];
        if symbols == Symbols::Bytes {
            for (byte, slot) in byte_ids.iter_mut().enumerate() {
                *slot = vocab.get(&[byte as u8][..]).copied();
            }
        }
        let fallback_ids = if byte_fallback {
            let mut ids = [0u32; 256];
            let mut complete = true;
            for (byte, slot) in ids.iter_mut().enumerate() {
                match vocab.get(format!("<0x{byte:02X}>").as_bytes()) {
                    Some(&id) => *slot = id,
                    None => complete = false,
                }
            }
            // The library falls back only if every byte of the character has its token; with
            // all 256 present that always holds, and a partial table is checked per byte below.
            complete.then_some(ids)
        } else {
            None
        };
        Self {
            symbols,
            vocab,
            merges,
            byte_ids,
            fallback_ids,
            unk,
            fuse_unk,
            ignore_merges,
        }
    }

    /// Appends the ids of one pre-tokenized piece to `out`.
    pub fn encode_piece(&self, piece: &[u8], out: &mut Vec<u32>) {
        if piece.is_empty() {
            return;
        }
        if self.ignore_merges {
            if let Some(&id) = self.vocab.get(piece) {
                out.push(id);
                return;
            }
        }
        let start = out.len();
        match self.symbols {
            Symbols::Bytes => self.byte_symbols(piece, out),
            Symbols::Chars => self.char_symbols(piece, out),
        }
        let symbols = out.len() - start;
        if symbols < 2 || self.merges.is_empty() {
            return;
        }
        if symbols <= SCAN_MAX_SYMBOLS {
            self.merge_by_scan(out, start);
        } else {
            let merged = self.merge_by_heap(&out[start..]);
            out.truncate(start);
            out.extend_from_slice(&merged);
        }
    }

    fn byte_symbols(&self, piece: &[u8], out: &mut Vec<u32>) {
        let mut unk_pending = false;
        for &byte in piece {
            match self.byte_ids[byte as usize] {
                Some(id) => {
                    unk_pending = false;
                    out.push(id);
                }
                // A byte with no token: the unknown token (fused with a previous one if the model
                // fuses), or nothing, as the library does.
                None => {
                    if let Some(unk) = self.unk {
                        if !(self.fuse_unk && unk_pending) {
                            out.push(unk);
                        }
                        unk_pending = true;
                    }
                }
            }
        }
    }

    fn char_symbols(&self, piece: &[u8], out: &mut Vec<u32>) {
        let mut unk_pending = false;
        let mut at = 0;
        while at < piece.len() {
            let width = utf8_width(piece[at]).min(piece.len() - at);
            let char_bytes = &piece[at..at + width];
            at += width;
            if let Some(&id) = self.vocab.get(char_bytes) {
                unk_pending = false;
                out.push(id);
                continue;
            }
            if let Some(fallback) = &self.fallback_ids {
                unk_pending = false;
                out.extend(char_bytes.iter().map(|&byte| fallback[byte as usize]));
                continue;
            }
            if let Some(unk) = self.unk {
                if !(self.fuse_unk && unk_pending) {
                    out.push(unk);
                }
                unk_pending = true;
            }
        }
    }

    #[inline]
    fn merge_of(&self, left: u32, right: u32) -> Option<(u32, u32)> {
        self.merges.get(&((u64::from(left) << 32) | u64::from(right))).copied()
    }

    /// Merges `out[start..]` in place: each round finds the lowest-ranked adjacent pair
    /// (leftmost among equals) and merges it.
    fn merge_by_scan(&self, out: &mut Vec<u32>, start: usize) {
        // Each pair's merge, kept current as the symbols change.
        let mut ranks: [(u32, u32); SCAN_MAX_SYMBOLS] = [(u32::MAX, 0); SCAN_MAX_SYMBOLS];
        let mut len = out.len() - start;
        for at in 0..len - 1 {
            ranks[at] = self.merge_of(out[start + at], out[start + at + 1]).unwrap_or((u32::MAX, 0));
        }
        while len > 1 {
            let mut best = u32::MAX;
            let mut best_at = 0;
            for (at, &(rank, _)) in ranks[..len - 1].iter().enumerate() {
                if rank < best {
                    best = rank;
                    best_at = at;
                }
            }
            if best == u32::MAX {
                break;
            }
            let merged = ranks[best_at].1;
            out[start + best_at] = merged;
            out.remove(start + best_at + 1);
            ranks.copy_within(best_at + 1..len - 1, best_at);
            len -= 1;
            if best_at + 1 < len {
                ranks[best_at] = self.merge_of(merged, out[start + best_at + 1]).unwrap_or((u32::MAX, 0));
            }
            if best_at > 0 {
                ranks[best_at - 1] = self.merge_of(out[start + best_at - 1], merged).unwrap_or((u32::MAX, 0));
            }
        }
    }

    /// The merges of a long piece: a heap of candidate merges (rank, position), symbols in a
    /// linked list; a candidate whose pair has changed since it was pushed is skipped.
    fn merge_by_heap(&self, first: &[u32]) -> Vec<u32> {
        let n = first.len();
        let mut ids = first.to_vec();
        let mut next: Vec<usize> = (1..=n).collect();
        let mut prev: Vec<usize> = (0..n).map(|at| at.wrapping_sub(1)).collect();
        let mut alive = vec![true; n];
        let mut heap = BinaryHeap::with_capacity(n);
        for at in 0..n - 1 {
            if let Some((rank, merged)) = self.merge_of(ids[at], ids[at + 1]) {
                heap.push(Reverse((rank, at, merged)));
            }
        }
        while let Some(Reverse((rank, at, merged))) = heap.pop() {
            if !alive[at] || next[at] >= n {
                continue;
            }
            let right = next[at];
            match self.merge_of(ids[at], ids[right]) {
                Some((current_rank, current)) if current_rank == rank && current == merged => {}
                _ => continue,
            }
            ids[at] = merged;
            alive[right] = false;
            next[at] = next[right];
            if next[at] < n {
                prev[next[at]] = at;
            }
            if prev[at] != usize::MAX {
                let left = prev[at];
                if let Some((rank, merged)) = self.merge_of(ids[left], ids[at]) {
                    heap.push(Reverse((rank, left, merged)));
                }
            }
            if next[at] < n {
                if let Some((rank, merged)) = self.merge_of(ids[at], ids[next[at]]) {
                    heap.push(Reverse((rank, at, merged)));
                }
            }
        }
        (0..n).filter(|&at| alive[at]).map(|at| ids[at]).collect()
    }
}

/// The byte length of the UTF-8 character that starts with `lead` (1 for a stray byte).
#[inline]
pub(crate) fn utf8_width(lead: u8) -> usize {
    match lead {
        0xF0..=0xF7 => 4,
        0xE0..=0xEF => 3,
        0xC0..=0xDF => 2,
        _ => 1,
    }
}

/// Packs a merge pair as the merge table keys it.
pub(crate) fn pair_key(left: u32, right: u32) -> u64 {
    (u64::from(left) << 32) | u64::from(right)
}
