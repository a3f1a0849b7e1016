//! Token ids in: the ids a server sampled, decoded as they come and read by a parser.
//!
//! **Decoding.** Each id's bytes are joined, as [`Tokenizer::decode`] joins them, and read as
//! UTF-8 as they complete: the bytes of a character that tokens split are held back until the
//! token that ends it arrives; bytes that can be no UTF-8 become U+FFFD (one per maximal invalid
//! sequence, as `decode` and Python's `errors="replace"` do), and a character still cut when
//! the stream ends becomes one U+FFFD. So the text read is always `decode(ids)` of the ids so
//! far, less at most the three bytes of a cut character.
//!
//! A SentencePiece-style decoder (`Replace`, `ByteFallback`, `Fuse`, `Strip`, `Metaspace`: Llama
//! 2, Phi-3, Gemma) runs token by token ([`StreamedChain`]), its leading steps that map each
//! token alone (`Replace` '▁' → ' ') run once per vocabulary ([`PieceTable`]): the text read
//! is `decode(ids)` of the ids so far less what a later id can still change, a run of byte
//! tokens (`<0xE2>`) not yet ended by another token (`decode` reads a run with an invalid
//! byte as one U+FFFD per byte) and the trailing characters a `Strip` after `Fuse` may remove.
//!
//! **Markers by id.** A dialect's marker that is an added token of the tokenizer (special or
//! not: gpt-oss's `<|channel|>`, DeepSeek's `<｜tool▁calls▁begin｜>`, Qwen's `<tool_call>`) is
//! read as a marker only where its id stands. Where ordinary tokens spell the text of an added
//! token (wholly, or partly with the text of other tokens), no marker of that length is read at
//! that place: the parser reads those characters as whatever its state reads characters as
//! (visible text, reasoning, argument text). Wherever the decoded text spells no added token
//! with ordinary tokens, this is exactly the text path: the same events and result as feeding
//! `decode(ids)`. Forge's dialect has no marker that is a model's token and reads as the text
//! path always does.

use std::borrow::Cow;
use std::sync::Arc;

use aho_corasick::{AhoCorasick, MatchKind};

use crate::parse::{Document, Options, StartThinking, StreamMachine};
use crate::tokenizer::decode::{DecodeStep, Piece, PieceTable, Sink, StreamedChain};
use crate::tokenizer::{Tokenizer, TokenizerError};
use crate::tokens::encode::TokenEncoder;

/// Where the ids' bytes come from.
enum Source {
    Tokenizer(Arc<Tokenizer>),
    Encoder(TokenEncoder),
}

/// What reading ids needs of a tokenizer, built once per tokenizer and shared by its streams:
/// each id's bytes, which ids are added tokens, and a finder of the added tokens' texts.
pub struct IdVocabulary {
    source: Source,
    /// By id: whether it is an added token (its text is a marker only as this id).
    added: Vec<bool>,
    /// The added tokens' texts, and whether a byte is the last byte of one.
    spellings: Option<AhoCorasick>,
    last_bytes: [bool; 256],
    /// The longest added token's text, in bytes.
    longest: usize,
    /// A SentencePiece-style decoder's per-token steps, run once for every id.
    pieces: Option<PieceTable>,
}

impl IdVocabulary {
    /// The vocabulary of a `tokenizer.json` / `tekken.json` / tiktoken tokenizer; an error for
    /// a decoder that cannot be run as ids come, named.
    pub fn of_tokenizer(tokenizer: Arc<Tokenizer>) -> Result<Self, TokenizerError> {
        let steps = tokenizer.streamed_steps()?;
        let added: Vec<(Vec<u8>, u32)> =
            tokenizer.added_tokens().map(|(spelling, id)| (spelling.as_bytes().to_vec(), id)).collect();
        let size = tokenizer.vocab_size();
        let pieces = steps.and_then(|steps| {
            let spellings = (0..size as u32).map(|id| tokenizer.id_bytes(id).unwrap_or_default());
            PieceTable::new(steps, spellings)
        });
        Ok(Self { pieces, ..Self::new(Source::Tokenizer(tokenizer), size, added) })
    }

    /// The vocabulary of a tiktoken encoding (its special tokens are the added tokens).
    pub fn of_encoder(encoder: TokenEncoder) -> Self {
        let added: Vec<(Vec<u8>, u32)> =
            encoder.special_tokens().iter().map(|&(spelling, id)| (spelling.as_bytes().to_vec(), id)).collect();
        let size = added.iter().map(|&(_, id)| id as usize + 1).max().unwrap_or(0).max(encoder.mergeable_tokens());
        Self::new(Source::Encoder(encoder), size, added)
    }

    fn new(source: Source, size: usize, mut tokens: Vec<(Vec<u8>, u32)>) -> Self {
        tokens.retain(|(spelling, _)| !spelling.is_empty());
        let mut added = vec![false; size];
        let mut last_bytes = [false; 256];
        for (spelling, id) in &tokens {
            if let Some(slot) = added.get_mut(*id as usize) {
                *slot = true;
            }
            last_bytes[spelling[spelling.len() - 1] as usize] = true;
        }
        tokens.sort();
        tokens.dedup_by(|a, b| a.0 == b.0);
        let longest = tokens.iter().map(|(spelling, _)| spelling.len()).max().unwrap_or(0);
        // Standard matching: every occurrence, overlapping ones too, is looked at.
        let spellings = (!tokens.is_empty()).then(|| {
            AhoCorasick::builder()
                .match_kind(MatchKind::Standard)
                .build(tokens.iter().map(|(spelling, _)| spelling))
                .expect("a finder of a few thousand short strings builds")
        });
        Self { source, added, spellings, last_bytes, longest, pieces: None }
    }

    /// The first id of `ids` that is no token, as the error [`IdReader::read`] gives for it.
    pub fn check(&self, ids: &[u32]) -> Result<(), TokenizerError> {
        match ids.iter().find(|&&id| self.bytes(id).is_none()) {
            Some(&bad) => Err(TokenizerError::UnknownId(bad)),
            None => Ok(()),
        }
    }

    /// The bytes of `id`; `None` for an id that is no token.
    #[inline]
    fn bytes(&self, id: u32) -> Option<&[u8]> {
        match &self.source {
            Source::Tokenizer(tokenizer) => tokenizer.id_bytes(id),
            Source::Encoder(encoder) => encoder.token_bytes(id),
        }
    }

    /// The SentencePiece-style decoder's steps, if decoding is not joining the ids' bytes.
    fn decode_steps(&self) -> Option<&[DecodeStep]> {
        match &self.source {
            Source::Tokenizer(tokenizer) => tokenizer.streamed_steps().ok().flatten(),
            Source::Encoder(_) => None,
        }
    }

    /// `id`'s piece for the streamed chain, and the step it starts at: from the table, or its
    /// spelling. `id` is a token (checked).
    fn piece(&self, id: u32) -> (Piece<'_>, usize) {
        let spelling = self.bytes(id).unwrap_or_default();
        let added = self.is_added(id);
        match &self.pieces {
            Some(table) => {
                let text = table.piece(id);
                // An added token's text that a step changed is a marker no more.
                (Piece { text: Cow::Borrowed(text), added: added && text.as_bytes() == spelling }, table.mapped_steps())
            }
            None => (Piece { text: String::from_utf8_lossy(spelling), added }, 0),
        }
    }

    #[inline]
    fn is_added(&self, id: u32) -> bool {
        self.added.get(id as usize).copied().unwrap_or(false)
    }
}

/// The text of a stream of ids, decoded as they come, with the places where ordinary tokens
/// spell an added token (see the module docs). One per stream; ready for a new stream after
/// [`finish`](Self::finish).
pub struct IdReader {
    vocabulary: Arc<IdVocabulary>,
    /// The bytes of a character cut by the last token, held back.
    held: Vec<u8>,
    /// The text read so far, in bytes.
    read: usize,
    /// The last text read (up to the longest added token's length less one), where an added
    /// token's text may have started.
    tail: Vec<u8>,
    /// Scratch: the stream ranges of this call's added tokens.
    added_spans: Vec<(usize, usize)>,
    /// A SentencePiece-style decoder's state.
    chain: Option<StreamedChain>,
}

impl IdReader {
    pub fn new(vocabulary: Arc<IdVocabulary>) -> Self {
        let chain = vocabulary.decode_steps().map(StreamedChain::new);
        Self { vocabulary, held: Vec::new(), read: 0, tail: Vec::new(), added_spans: Vec::new(), chain }
    }

    /// Whether text is held back (a cut character; for a SentencePiece-style decoder, a run of
    /// byte tokens or trailing characters a `Strip` may remove).
    pub fn holds_bytes(&self) -> bool {
        !self.held.is_empty() || self.chain.as_ref().is_some_and(StreamedChain::holds)
    }

    /// Reads `ids`: appends the text they complete to `text` and, to `spelled`, the stream
    /// ranges `(start, len)` where ordinary tokens spell an added token. An id that is no
    /// token is an error and nothing is read.
    pub fn read(&mut self, ids: &[u32], text: &mut Vec<u8>, spelled: &mut Vec<(usize, usize)>) -> Result<(), TokenizerError> {
        let Self { vocabulary, held, read, added_spans, chain, .. } = self;
        let vocabulary: &IdVocabulary = vocabulary;
        vocabulary.check(ids)?;
        let from = text.len();
        added_spans.clear();
        if let (Some(chain), Some(steps)) = (chain.as_mut(), vocabulary.decode_steps()) {
            let mut sink = Sink { text: &mut *text, added: added_spans, from, read: *read };
            for &id in ids {
                let (piece, step) = vocabulary.piece(id);
                chain.push(steps, step, piece, &mut sink);
            }
        } else {
            for &id in ids {
                let Some(bytes) = vocabulary.bytes(id) else { return Err(TokenizerError::UnknownId(id)) };
                if vocabulary.is_added(id) {
                    // An added token's text is whole UTF-8: a character cut before it stays cut.
                    flush_held(held, text);
                    added_spans.push((*read + (text.len() - from), bytes.len()));
                    text.extend_from_slice(bytes);
                } else {
                    take(held, bytes, text);
                }
            }
        }
        self.find_spelled(text, from, spelled);
        Ok(())
    }

    /// Ends the stream: a character still cut becomes U+FFFD (appended to `text`, with any
    /// spelling it completes in `spelled`). The reader is then ready for a new stream.
    pub fn finish(&mut self, text: &mut Vec<u8>, spelled: &mut Vec<(usize, usize)>) {
        let from = text.len();
        self.added_spans.clear();
        flush_held(&mut self.held, text);
        let vocabulary = Arc::clone(&self.vocabulary);
        if let (Some(chain), Some(steps)) = (self.chain.as_mut(), vocabulary.decode_steps()) {
            chain.finish(steps, &mut Sink { text: &mut *text, added: &mut self.added_spans, from, read: self.read });
        }
        self.find_spelled(text, from, spelled);
        self.read = 0;
        self.tail.clear();
    }

    /// Finds the added tokens' texts that end in `text[from..]` (the text of this call) and
    /// are not one of its added tokens; keeps the tail for the next call.
    fn find_spelled(&mut self, text: &[u8], from: usize, spelled: &mut Vec<(usize, usize)>) {
        let new = &text[from..];
        let vocabulary = &self.vocabulary;
        if let Some(finder) = &vocabulary.spellings {
            if new.iter().any(|&b| vocabulary.last_bytes[b as usize]) {
                let tail_len = self.tail.len();
                let base = self.read - tail_len;
                let mut window = std::mem::take(&mut self.tail);
                window.extend_from_slice(new);
                for found in finder.find_overlapping_iter(&window) {
                    if found.end() <= tail_len {
                        continue; // found before: it ended in an earlier call
                    }
                    let span = (base + found.start(), found.end() - found.start());
                    if !self.added_spans.contains(&span) {
                        spelled.push(span);
                    }
                }
                self.tail = window;
            } else {
                self.tail.extend_from_slice(new);
            }
        }
        self.read += new.len();
        let keep = vocabulary.longest.saturating_sub(1);
        if self.tail.len() > keep {
            self.tail.drain(..self.tail.len() - keep);
        }
    }
}

/// Parses a whole reply given as ids, with [`parse`](crate::parse::parse)'s options
/// ([`StartThinking::Detect`] included): the result of feeding them to a stream and finishing.
pub fn parse_ids(ids: &[u32], vocabulary: &Arc<IdVocabulary>, options: &Options) -> Result<Document<'static>, TokenizerError> {
    let mut reader = IdReader::new(Arc::clone(vocabulary));
    let (mut text, mut spelled) = (Vec::new(), Vec::new());
    reader.read(ids, &mut text, &mut spelled)?;
    reader.finish(&mut text, &mut spelled);
    let (doc, stray_close) = read_whole(&text, &spelled, options);
    if options.start_in_thinking == StartThinking::Detect && stray_close {
        let again = Options { start_in_thinking: StartThinking::Yes, ..options.clone() };
        return Ok(read_whole(&text, &spelled, &again).0);
    }
    Ok(doc)
}

/// The document of a decoded reply; also whether its first thinking tag was a stray closer.
fn read_whole(text: &[u8], spelled: &[(usize, usize)], options: &Options) -> (Document<'static>, bool) {
    let mut machine = StreamMachine::new(options.clone());
    let mut events = Vec::new();
    machine.feed_into_spelled(text, spelled, &mut events);
    // Asked before and after `finish`, as `parse` asks (see there).
    let stray_close = machine.saw_stray_thinking_close();
    events.extend(machine.finish());
    (Document::from_events(events), stray_close || machine.saw_stray_thinking_close())
}

/// Appends the held bytes of a character that will not complete, as `decode` gives them.
fn flush_held(held: &mut Vec<u8>, text: &mut Vec<u8>) {
    if !held.is_empty() {
        text.extend_from_slice(String::from_utf8_lossy(held).as_bytes());
        held.clear();
    }
}

/// Appends an ordinary token's bytes: the complete characters go to `text` (invalid bytes as
/// U+FFFD), a character they leave cut is held.
fn take(held: &mut Vec<u8>, bytes: &[u8], text: &mut Vec<u8>) {
    if held.is_empty() {
        let keep = complete_chars(bytes, text);
        held.extend_from_slice(&bytes[bytes.len() - keep..]);
    } else {
        held.extend_from_slice(bytes);
        let keep = complete_chars(held, text);
        let start = held.len() - keep;
        held.drain(..start);
    }
}

/// Appends the complete characters of `bytes` to `text` (each maximal invalid sequence as
/// U+FFFD); returns how many bytes at the end are a character not yet complete.
fn complete_chars(bytes: &[u8], text: &mut Vec<u8>) -> usize {
    let mut rest = bytes;
    loop {
        match std::str::from_utf8(rest) {
            Ok(valid) => {
                text.extend_from_slice(valid.as_bytes());
                return 0;
            }
            Err(error) => {
                let (valid, after) = rest.split_at(error.valid_up_to());
                text.extend_from_slice(valid);
                match error.error_len() {
                    Some(len) => {
                        text.extend_from_slice("\u{FFFD}".as_bytes());
                        rest = &after[len..];
                    }
                    None => return after.len(),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn byte_tokenizer() -> Arc<Tokenizer> {
        // Ids 0-255 are the bytes; 256 and 257 are special tokens.
        let ranks: String = (0u8..=255).map(|b| format!("{} {b}\n", base64(&[b]))).collect();
        let specials = vec![("<tc>".to_owned(), 256), ("</tc>".to_owned(), 257)];
        Arc::new(Tokenizer::from_tiktoken(ranks.as_bytes(), r"\S+|\s+", specials).unwrap())
    }

    fn base64(bytes: &[u8]) -> String {
        const TABLE: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        let b = bytes[0] as usize;
        format!("{}{}==", TABLE[b >> 2] as char, TABLE[(b & 3) << 4] as char)
    }

    fn read_all(reader: &mut IdReader, chunks: &[&[u32]]) -> (Vec<u8>, Vec<(usize, usize)>) {
        let (mut text, mut spelled) = (Vec::new(), Vec::new());
        for chunk in chunks {
            reader.read(chunk, &mut text, &mut spelled).unwrap();
        }
        reader.finish(&mut text, &mut spelled);
        (text, spelled)
    }

    #[test]
    fn holds_cut_characters_and_replaces_what_is_no_utf8() {
        let vocabulary = Arc::new(IdVocabulary::of_tokenizer(byte_tokenizer()).unwrap());
        let crab: Vec<u32> = "a🦀".bytes().map(u32::from).collect();
        let mut reader = IdReader::new(Arc::clone(&vocabulary));
        let mut text = Vec::new();
        reader.read(&crab[..3], &mut text, &mut Vec::new()).unwrap();
        assert_eq!(text, b"a");
        assert!(reader.holds_bytes());
        reader.read(&crab[3..], &mut text, &mut Vec::new()).unwrap();
        assert_eq!(text, "a🦀".as_bytes());
        // Invalid bytes, a cut character before a special token, one cut at the end.
        let ids = [0xff, b'x' as u32, 0xf0, 0x9f, 256, 0xe2, 0x82];
        for split in 0..=ids.len() {
            let (text, _) = read_all(&mut reader, &[&ids[..split], &ids[split..]]);
            let whole = String::from_utf8_lossy(&ids.iter().map(|&id| if id == 256 { b'?' } else { id as u8 }).collect::<Vec<_>>()).replace('?', "<tc>");
            assert_eq!(String::from_utf8(text).unwrap(), whole, "split at {split}");
        }
        assert_eq!(reader.read(&[1, 258], &mut Vec::new(), &mut Vec::new()), Err(TokenizerError::UnknownId(258)));
    }

    #[test]
    fn a_marker_spelled_by_ordinary_tokens_is_text_and_its_id_is_the_marker() {
        use crate::parse::{Block, Dialect};
        let ranks: String = (0u8..=255).map(|b| format!("{} {b}\n", base64(&[b]))).collect();
        let specials = vec![("<tool_call>".to_owned(), 256), ("</tool_call>".to_owned(), 257)];
        let tokenizer = Arc::new(Tokenizer::from_tiktoken(ranks.as_bytes(), r"\S+|\s+", specials).unwrap());
        let vocabulary = Arc::new(IdVocabulary::of_tokenizer(tokenizer).unwrap());
        let bytes = |text: &str| text.bytes().map(u32::from).collect::<Vec<u32>>();
        let mut ids = bytes("a <tool_call>");
        ids.push(256);
        ids.extend(bytes(r#"{"name": "f", "arguments": {}}"#));
        ids.push(257);
        let doc = parse_ids(&ids, &vocabulary, &Options::new(Dialect::Hermes)).unwrap();
        assert_eq!(doc.blocks[0], Block::Text(b"a <tool_call>"[..].into()));
        assert!(matches!(&doc.blocks[1], Block::ToolCall(call) if call.name == "f"));
        // Every chunking of the ids reads the same.
        for split in 0..=ids.len() {
            let mut machine = StreamMachine::new(Options::new(Dialect::Hermes));
            let mut reader = IdReader::new(Arc::clone(&vocabulary));
            let mut events = Vec::new();
            for part in [&ids[..split], &ids[split..]] {
                let (mut text, mut spelled) = (Vec::new(), Vec::new());
                reader.read(part, &mut text, &mut spelled).unwrap();
                machine.feed_into_spelled(&text, &spelled, &mut events);
            }
            events.extend(machine.finish());
            assert_eq!(Document::from_events(events), doc, "split at {split}");
        }
    }

    #[test]
    fn finds_added_tokens_spelled_by_ordinary_tokens() {
        let vocabulary = Arc::new(IdVocabulary::of_tokenizer(byte_tokenizer()).unwrap());
        let mut reader = IdReader::new(vocabulary);
        let mut ids: Vec<u32> = "x<tc>".bytes().map(u32::from).collect();
        ids.push(256);
        ids.extend("</tc>".bytes().map(u32::from));
        ids.push(257);
        for split in 0..=ids.len() {
            let (text, spelled) = read_all(&mut reader, &[&ids[..split], &ids[split..]]);
            assert_eq!(text, b"x<tc><tc></tc></tc>");
            assert_eq!(spelled, [(1, 4), (9, 5)], "split at {split}");
        }
    }

    /// A SentencePiece-style vocabulary: `<unk>`, `<s>`, `</s>`, the 256 byte tokens, a few
    /// pieces, the special token `<tc>`; with `decoder`.
    fn piece_tokenizer(decoder: &str) -> Arc<Tokenizer> {
        let mut vocab = vec!["<unk>".to_owned(), "<s>".to_owned(), "</s>".to_owned()];
        vocab.extend((0..=255).map(|b| format!("<0x{b:02X}>")));
        vocab.extend(["\u{2581}", "a", "\u{2581}a", "\u{2581}\u{2581}", "b\u{2581}", "é", "x", "<tc>"].map(str::to_owned));
        let vocab: Vec<String> = vocab.iter().enumerate().map(|(id, piece)| format!("{piece:?}: {id}")).collect();
        let json = format!(
            r#"{{"model": {{"type": "BPE", "vocab": {{{}}}, "merges": [], "byte_fallback": true}},
                "added_tokens": [{{"id": 0, "content": "<unk>", "special": true}}, {{"id": 1, "content": "<s>", "special": true}},
                                 {{"id": 2, "content": "</s>", "special": true}}, {{"id": 266, "content": "<tc>", "special": true}}],
                "decoder": {decoder}}}"#,
            vocab.join(", ")
        );
        Arc::new(Tokenizer::from_json(json.as_bytes()).unwrap())
    }

    const REPLACE: &str = r#"{"type": "Replace", "pattern": {"String": "▁"}, "content": " "}"#;

    fn piece_decoders() -> Vec<String> {
        let sequence = |steps: &[&str]| format!(r#"{{"type": "Sequence", "decoders": [{}]}}"#, steps.join(", "));
        let fuse = r#"{"type": "Fuse"}"#;
        let bytes = r#"{"type": "ByteFallback"}"#;
        let strip = |start: usize, stop: usize| format!(r#"{{"type": "Strip", "content": " ", "start": {start}, "stop": {stop}}}"#);
        let metaspace = |scheme: &str| format!(r#"{{"type": "Metaspace", "replacement": "▁", "prepend_scheme": "{scheme}", "split": true}}"#);
        vec![
            sequence(&[REPLACE, bytes, fuse, &strip(1, 0)]), // Llama 2, Phi-3
            sequence(&[REPLACE, bytes, fuse]),               // Gemma
            metaspace("first"),
            metaspace("always"),
            metaspace("never"),
            sequence(&[bytes, &metaspace("first")]),
            sequence(&[REPLACE, bytes, fuse, &strip(2, 2)]),
            sequence(&[REPLACE, &strip(1, 1), bytes]),
            sequence(&[bytes, fuse, &metaspace("always")]),
        ]
    }

    #[test]
    fn a_piece_decoder_reads_what_decode_gives_after_every_id() {
        let mut seed = 7u64;
        for decoder in piece_decoders() {
            let tokenizer = piece_tokenizer(&decoder);
            let vocabulary = Arc::new(IdVocabulary::of_tokenizer(Arc::clone(&tokenizer)).unwrap());
            for _ in 0..300 {
                let mut ids = Vec::new();
                seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                for _ in 0..(seed >> 40) % 10 {
                    seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    let pick = (seed >> 33) as u32 % 24;
                    // Mostly pieces and whole characters' bytes (é, 🦀), some stray bytes.
                    ids.push(match pick {
                        0..=7 => 259 + pick,
                        8 => 1,
                        9 => 2,
                        10 => 3 + 0xC3,
                        11 => 3 + 0xA9,
                        12 => 3 + 0xF0,
                        13 => 3 + 0x9F,
                        14 => 3 + 0xA6,
                        15 => 3 + 0x80,
                        16 => 3 + b' ' as u32,
                        17 => 3 + 0xFF,
                        _ => 259 + pick % 3,
                    });
                }
                let mut reader = IdReader::new(Arc::clone(&vocabulary));
                let (mut text, mut spelled) = (Vec::new(), Vec::new());
                for end in 1..=ids.len() {
                    reader.read(&ids[end - 1..end], &mut text, &mut spelled).unwrap();
                    let whole = tokenizer.decode(&ids[..end], false).unwrap();
                    let read = std::str::from_utf8(&text).unwrap();
                    assert!(whole.starts_with(read), "{decoder}: {ids:?}[..{end}] read {read:?}, decode {whole:?}");
                    if !(3..259).contains(&ids[end - 1]) {
                        assert_eq!(read, whole, "{decoder}: {ids:?}[..{end}]");
                    }
                }
                reader.finish(&mut text, &mut spelled);
                let whole = tokenizer.decode(&ids, false).unwrap();
                assert_eq!(std::str::from_utf8(&text).unwrap(), whole, "{decoder}: {ids:?}");
                for split in 0..=ids.len() {
                    let (again, spelled_again) = read_all(&mut reader, &[&ids[..split], &ids[split..]]);
                    assert_eq!((&again, &spelled_again), (&text, &spelled), "{decoder}: {ids:?} split at {split}");
                }
            }
        }
    }

    #[test]
    fn a_piece_decoder_holds_a_run_of_byte_tokens_until_it_ends() {
        let llama = &piece_decoders()[0];
        let vocabulary = Arc::new(IdVocabulary::of_tokenizer(piece_tokenizer(llama)).unwrap());
        let mut reader = IdReader::new(vocabulary);
        let (mut text, mut spelled) = (Vec::new(), Vec::new());
        // "▁a" then é as two byte tokens, then "x": é is read when "x" ends the run.
        reader.read(&[261, 3 + 0xC3, 3 + 0xA9], &mut text, &mut spelled).unwrap();
        assert_eq!(text, b"a");
        assert!(reader.holds_bytes());
        reader.read(&[265], &mut text, &mut spelled).unwrap();
        assert_eq!(String::from_utf8(text.clone()).unwrap(), "aéx");
        assert!(!reader.holds_bytes());
        // A run with a byte that is no UTF-8: one U+FFFD per byte, as decode gives it.
        reader.read(&[3 + 0xC3, 3 + 0xA9, 3 + 0xFF], &mut text, &mut spelled).unwrap();
        reader.finish(&mut text, &mut spelled);
        assert_eq!(String::from_utf8(text).unwrap(), "aéx\u{FFFD}\u{FFFD}\u{FFFD}");
    }

    #[test]
    fn a_piece_decoders_added_token_is_a_marker_only_as_its_id() {
        let llama = &piece_decoders()[0];
        let vocabulary = Arc::new(IdVocabulary::of_tokenizer(piece_tokenizer(llama)).unwrap());
        let mut reader = IdReader::new(vocabulary);
        // "<tc>" spelled by byte tokens, then its id, after "▁a".
        let mut ids = vec![261];
        ids.extend("<tc>".bytes().map(|b| 3 + u32::from(b)));
        ids.extend([266, 259, 266]);
        for split in 0..=ids.len() {
            let (text, spelled) = read_all(&mut reader, &[&ids[..split], &ids[split..]]);
            assert_eq!(String::from_utf8(text).unwrap(), "a<tc><tc> <tc>");
            assert_eq!(spelled, [(1, 4)], "split at {split}");
        }
    }

    #[test]
    fn the_piece_table_holds_each_ids_text_after_the_steps_that_map_tokens_alone() {
        for decoder in piece_decoders() {
            let tokenizer = piece_tokenizer(&decoder);
            let vocabulary = Arc::new(IdVocabulary::of_tokenizer(Arc::clone(&tokenizer)).unwrap());
            let size = tokenizer.vocab_size() as u32;
            match &vocabulary.pieces {
                // Replace or Metaspace first (Llama 2, Phi-3, Gemma; T5's layout): '▁' is a
                // space in every piece (the first piece's too: the chain strips it), byte tokens
                // and added tokens are as spelled; a Strip before ByteFallback strips each
                // piece, a Strip after Fuse nothing yet.
                Some(table) => {
                    let replace = decoder.starts_with(r#"{"type": "Sequence", "decoders": [{"type": "Replace""#);
                    assert!(replace || decoder.starts_with(r#"{"type": "Metaspace""#), "{decoder}");
                    let pieces = [table.piece(259), table.piece(261), table.piece(262), table.piece(263)];
                    if decoder.contains(r#"" "}, {"type": "Strip""#) {
                        assert_eq!(table.mapped_steps(), 2, "{decoder}");
                        assert_eq!(pieces, ["", "a", "", "b"]);
                    } else {
                        assert_eq!(table.mapped_steps(), 1, "{decoder}");
                        assert_eq!(pieces, [" ", " a", "  ", "b "]);
                    }
                    assert_eq!([table.piece(3 + 0xC3), table.piece(1), table.piece(266)], ["<0xC3>", "<s>", "<tc>"]);
                    assert_eq!(table.piece(size), "", "out of range");
                    let texts: usize = (0..size).map(|id| table.piece(id).len()).sum();
                    assert_eq!(table.heap_bytes(), texts + 4 * size as usize, "{decoder}");
                }
                // ByteFallback first: no step maps tokens alone; pieces are spellings.
                None => assert!(decoder.contains(r#"[{"type": "ByteFallback""#), "{decoder}"),
            }
            // Each id read alone is `decode` of it alone.
            let mut reader = IdReader::new(Arc::clone(&vocabulary));
            for id in 0..size {
                let (text, _) = read_all(&mut reader, &[&[id]]);
                assert_eq!(String::from_utf8(text).unwrap(), tokenizer.decode(&[id], false).unwrap(), "{decoder}: id {id}");
            }
        }
    }

    #[test]
    fn the_first_tokens_leading_space_is_stripped_once_after_the_table() {
        let llama = &piece_decoders()[0];
        let tokenizer = piece_tokenizer(llama);
        let vocabulary = Arc::new(IdVocabulary::of_tokenizer(Arc::clone(&tokenizer)).unwrap());
        let mut reader = IdReader::new(vocabulary);
        let (mut text, mut spelled) = (Vec::new(), Vec::new());
        // "▁" alone is all strip: nothing read; then "▁a" keeps its space.
        reader.read(&[259], &mut text, &mut spelled).unwrap();
        assert_eq!(text, b"");
        reader.read(&[261, 261], &mut text, &mut spelled).unwrap();
        assert_eq!(text, b" a a");
        reader.finish(&mut text, &mut spelled);
        // A new stream strips again, also a space that a run of byte tokens spells.
        let space = 3 + u32::from(b' ');
        for ids in [&[261, 261][..], &[space, space, 264], &[1, 261], &[space, 3 + 0xC3, 3 + 0xA9, 261]] {
            for split in 0..=ids.len() {
                let (text, _) = read_all(&mut reader, &[&ids[..split], &ids[split..]]);
                assert_eq!(String::from_utf8(text).unwrap(), tokenizer.decode(ids, false).unwrap(), "{ids:?} split at {split}");
            }
        }
        assert_eq!(tokenizer.decode(&[space, space, 264], false).unwrap(), " é");
        assert_eq!(tokenizer.decode(&[1, 261], false).unwrap(), "<s> a");
        // Metaspace: the table maps '▁' in every piece, the chain strips the first piece's
        // leading space once a stream ("first", "always"), or never ("never").
        for (decoder, expected) in [(&piece_decoders()[2], "a a"), (&piece_decoders()[3], "a a"), (&piece_decoders()[4], " a a")] {
            let tokenizer = piece_tokenizer(decoder);
            let mut reader = IdReader::new(Arc::new(IdVocabulary::of_tokenizer(Arc::clone(&tokenizer)).unwrap()));
            for _ in 0..2 {
                let (text, _) = read_all(&mut reader, &[&[261], &[261]]);
                assert_eq!((String::from_utf8(text).unwrap(), tokenizer.decode(&[261, 261], false).unwrap()), (expected.into(), expected.into()));
            }
        }
    }

    #[test]
    fn a_replace_after_fuse_is_refused_by_name() {
        let decoder = format!(r#"{{"type": "Sequence", "decoders": [{{"type": "Fuse"}}, {REPLACE}]}}"#);
        let error = IdVocabulary::of_tokenizer(piece_tokenizer(&decoder)).err().unwrap();
        assert!(matches!(error, TokenizerError::Unsupported(ref what) if what.contains("after Fuse")), "{error:?}");
    }
}
