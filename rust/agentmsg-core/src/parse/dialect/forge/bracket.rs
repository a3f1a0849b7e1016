//! `[bracket]` thinking lines (Forge).
//!
//! A line is a thought when its first non-blank character (blanks: space, tab) is `[`, the
//! bracket that opens there closes (counting nested `[` `]`) at the last non-blank character of
//! the line (blanks after it: space, tab, CR), and the text between the brackets, stripped, is
//! not one of these:
//! - empty, `x` or `X` (task boxes `[ ]`, `[x]`);
//! - only digits, commas, hyphens and spaces (citations `[1]`, `[2, 3]`, `[4-6]`);
//! - such that the whole bracket is a JSON array (`["a", "b"]`, `[{"k": 1}]`).
//!
//! Markdown links `[x](y)`, reference definitions `[x]: url` and `[a] and [b]` are not thoughts
//! because the first bracket closes before the end of the line. A thought is one line: the
//! newline that ends it belongs to it. The thought's text is the inside, stripped.

pub(crate) use crate::parse::output::is_space;

/// The bytes held for a line that may be a thought, and what is known about them.
#[derive(Clone, Debug, Default)]
pub(crate) struct BracketLine {
    pub buf: Vec<u8>,
    depth: usize,
    /// Index in `buf` of the `]` that closed the first bracket.
    close_at: Option<usize>,
    /// Stream (byte, char) offset of `buf[0]`.
    pub start: (usize, usize),
}

/// How far [`BracketLine::scan`] got.
pub(crate) enum Scan {
    /// Everything was taken; the line goes on.
    More,
    /// `data[at]` is the newline that ends the line (not taken).
    Newline(usize),
    /// `data[at]` shows the line is not a thought (not taken).
    NotThought(usize),
}

impl BracketLine {
    pub fn begin(&mut self, start: (usize, usize)) {
        self.buf.clear();
        self.buf.push(b'[');
        self.depth = 1;
        self.close_at = None;
        self.start = start;
    }

    /// Takes bytes of the line from `data[from..]`.
    pub fn scan(&mut self, data: &[u8], from: usize) -> Scan {
        let mut i = from;
        while i < data.len() {
            if self.close_at.is_some() {
                // After the closing bracket only blanks may follow.
                match data[i] {
                    b' ' | b'\t' | b'\r' => {
                        self.buf.push(data[i]);
                        i += 1;
                    }
                    b'\n' => return Scan::Newline(i),
                    _ => return Scan::NotThought(i),
                }
                continue;
            }
            match memchr::memchr3(b'[', b']', b'\n', &data[i..]) {
                None => {
                    self.buf.extend_from_slice(&data[i..]);
                    return Scan::More;
                }
                Some(k) => {
                    let j = i + k;
                    self.buf.extend_from_slice(&data[i..j]);
                    match data[j] {
                        b'\n' => return Scan::Newline(j),
                        b'[' => self.depth += 1,
                        _ => {
                            self.depth -= 1;
                            if self.depth == 0 {
                                self.close_at = Some(self.buf.len());
                            }
                        }
                    }
                    self.buf.push(data[j]);
                    i = j + 1;
                }
            }
        }
        Scan::More
    }

    /// At the end of the line: the range of the thought in `buf`, if the line is one.
    pub fn thought(&self) -> Option<(usize, usize)> {
        let close = self.close_at?;
        let inside = &self.buf[1..close];
        let start = 1 + inside.iter().position(|b| !is_space(*b))?;
        let end = 1 + inside.iter().rposition(|b| !is_space(*b))? + 1;
        is_thought(&self.buf[start..end], &self.buf[..=close]).then_some((start, end))
    }
}

fn is_thought(inner: &[u8], bracket: &[u8]) -> bool {
    if inner.is_empty() || inner == b"x" || inner == b"X" {
        return false;
    }
    if inner.iter().all(|b| b.is_ascii_digit() || matches!(b, b',' | b'-' | b' ')) {
        return false;
    }
    // A borrowed parse: only the shape matters, so no strings are copied out.
    !matches!(jiter::JsonValue::parse(bracket, false), Ok(jiter::JsonValue::Array(_)))
}

/// `bytes` without ASCII whitespace at either end.
pub fn trim(bytes: &[u8]) -> &[u8] {
    let start = bytes.iter().position(|b| !is_space(*b)).unwrap_or(bytes.len());
    let end = bytes.iter().rposition(|b| !is_space(*b)).map_or(start, |e| e + 1);
    &bytes[start..end]
}

