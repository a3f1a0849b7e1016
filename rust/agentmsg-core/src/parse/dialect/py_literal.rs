//! A safe reader of Python call arguments, `key=literal, …)`, that writes them out as a compact
//! JSON object while the bytes arrive. Nothing is ever evaluated: only literals are accepted.
//!
//! - Strings: `'…'`, `"…"`, triple-quoted, with the prefixes `u` and `r` (any case), and every
//!   escape of Python string literals (`\\ \' \" \a \b \f \n \r \t \v`, octal `\ooo`, `\xhh`,
//!   `\uHHHH`, `\UHHHHHHHH` (hex digits), `\N{NAME}`, a backslash-newline continuation; an unknown escape
//!   keeps its backslash, as Python does). Bytes, f-strings and lone surrogates are errors.
//! - Numbers: ints (with `_`, `0x`/`0o`/`0b`; at most 4300 characters, Python's own limit),
//!   floats (finite), an optional sign. Complex numbers are errors.
//! - `True`, `False`, `None`; lists and tuples (JSON arrays), dicts (JSON objects; keys that
//!   are numbers, `True`, `False` or `None` become strings as `json.dumps` writes them),
//!   nested up to 100 deep. `(x)` is `x`; `(x,)` and `()` are tuples.
//!
//! Text is streamed as it arrives, except that a `(` is held until its first `,` or `)` says
//! whether it is a tuple, and a number or name until it ends.

use std::collections::HashSet;

use memchr::{memchr2, memchr3};

use crate::parse::json_text;

const MAX_DEPTH: usize = 100;
/// Python refuses longer integer literals; the bound also keeps base conversion cheap.
const MAX_NUMBER_LEN: usize = 4300;

/// What a read step ended with.
pub(crate) enum Step {
    /// Everything was read; the arguments go on.
    More,
    /// The closing `)` of the call ends just before this index.
    Done(usize),
    /// The byte at this index cannot be read here: why.
    Error(usize, String),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Slot {
    /// A keyword (call) or key (dict) may start, or the container close.
    Key,
    InKeyword,
    /// After a key: `=` (call) or `:` (dict).
    AfterKey,
    /// A value may start (or, for a list or tuple, the container close).
    Value,
    AfterValue,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Call,
    List,
    Dict,
    /// A `(`: a tuple once a `,` is read at its level (`[` then goes at `at`), else a grouping.
    Paren { at: usize, tuple: bool },
}

#[derive(Clone, Debug)]
struct Frame {
    kind: Kind,
    slot: Slot,
    items: usize,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Escape {
    None,
    Backslash,
    Octal { value: u32, digits: u8 },
    Hex { value: u32, left: u8 },
    /// After a backslash-CR continuation: a LF right after belongs to it.
    SkipLf,
    /// After `\N`: `{` must follow.
    NameOpen,
    /// Inside `\N{…}`: the name is collected up to `}`.
    Name,
}

#[derive(Clone, Copy, Debug)]
struct Str {
    quote: u8,
    triple: bool,
    raw: bool,
    /// Quotes read in a triple-quoted string that may be its end.
    closing: u8,
    escape: Escape,
}

#[derive(Clone, Debug)]
enum Token {
    None,
    /// One or two quotes read: an empty string, or the opening of a triple-quoted one.
    Quotes { quote: u8, count: u8, raw: bool },
    Str(Str),
    Sign { negative: bool },
    Number { text: Vec<u8>, negative: bool },
    Name(Vec<u8>),
}

/// Reads one call's arguments (after its `(`) and writes their JSON object to `out`.
#[derive(Clone, Debug)]
pub(crate) struct ArgsReader {
    pub out: Vec<u8>,
    frames: Vec<Frame>,
    token: Token,
    keyword: Vec<u8>,
    keywords: HashSet<Vec<u8>>,
    /// The name of a `\N{…}` escape being read.
    character_name: Vec<u8>,
}

fn is_name_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_' || b >= 0x80
}

fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80
}

impl Default for ArgsReader {
    fn default() -> Self {
        Self::new()
    }
}

impl ArgsReader {
    pub fn new() -> Self {
        Self {
            out: vec![b'{'],
            frames: vec![Frame { kind: Kind::Call, slot: Slot::Key, items: 0 }],
            token: Token::None,
            keyword: Vec::new(),
            keywords: HashSet::new(),
            character_name: Vec::new(),
        }
    }

    /// How much of `out` is final: all of it but what follows a `(` not known to be a tuple yet.
    pub fn stable_len(&self) -> usize {
        self.frames
            .iter()
            .find_map(|f| match f.kind {
                Kind::Paren { at, tuple: false } => Some(at),
                _ => None,
            })
            .unwrap_or(self.out.len())
    }

    /// Reads `data[from..]`.
    pub fn feed(&mut self, data: &[u8], from: usize) -> Step {
        let mut i = from;
        while i < data.len() {
            let read = match self.token {
                Token::None => self.structural(data[i]),
                Token::Str(_) => match self.string(data, i) {
                    Ok(n) => Ok(Read::Bytes(n - i)),
                    Err((at, why)) => return Step::Error(at, why),
                },
                _ => self.token_byte(data[i]),
            };
            match read {
                Ok(Read::Bytes(n)) => i += n,
                Ok(Read::Again) => {}
                Ok(Read::Done) => return Step::Done(i + 1),
                Err(why) => return Step::Error(i, why),
            }
        }
        Step::More
    }

    fn top(&mut self) -> &mut Frame {
        let last = self.frames.len() - 1;
        &mut self.frames[last]
    }

    /// Writes the `,` before an item that is not the first.
    fn begin_item(&mut self) {
        let frame = self.top();
        frame.items += 1;
        if frame.items > 1 {
            self.out.push(b',');
        }
    }

    /// A value (or key) ended.
    fn value_done(&mut self) {
        let frame = self.top();
        frame.slot = if frame.slot == Slot::Key { Slot::AfterKey } else { Slot::AfterValue };
    }

    fn push_frame(&mut self, kind: Kind, slot: Slot) -> Result<Read, String> {
        if self.frames.len() >= MAX_DEPTH {
            return Err(format!("literals nested more than {MAX_DEPTH} deep"));
        }
        self.frames.push(Frame { kind, slot, items: 0 });
        Ok(Read::Bytes(1))
    }

    fn structural(&mut self, b: u8) -> Result<Read, String> {
        let frame = self.top().clone();
        if frame.slot == Slot::InKeyword {
            if is_name_byte(b) {
                self.keyword.push(b);
                return Ok(Read::Bytes(1));
            }
            let keyword = std::mem::take(&mut self.keyword);
            let name = String::from_utf8_lossy(&keyword).into_owned();
            json_text::string_into(&keyword, &mut self.out);
            self.out.push(b':');
            if !self.keywords.insert(keyword) {
                return Err(format!("keyword argument '{name}' repeated"));
            }
            self.top().slot = Slot::AfterKey;
            return Ok(Read::Again);
        }
        if crate::parse::scan::is_space(b) {
            return Ok(Read::Bytes(1));
        }
        let closes = match frame.kind {
            Kind::Call => b == b')',
            Kind::List => b == b']',
            Kind::Dict => b == b'}',
            Kind::Paren { .. } => b == b')',
        };
        match (frame.kind, frame.slot) {
            (Kind::Call, Slot::Key) if closes => {
                self.out.push(b'}');
                self.frames.pop();
                Ok(Read::Done)
            }
            (Kind::Call, Slot::Key) if is_name_start(b) => {
                self.begin_item();
                self.keyword.push(b);
                self.top().slot = Slot::InKeyword;
                Ok(Read::Bytes(1))
            }
            (Kind::Call, Slot::Key) => Err("expected a keyword argument (name=value) or ')'".into()),
            (Kind::Call, Slot::AfterKey) if b == b'=' => {
                self.top().slot = Slot::Value;
                Ok(Read::Bytes(1))
            }
            (Kind::Call, Slot::AfterKey) => Err("expected '=' after a keyword".into()),
            (Kind::Dict, Slot::AfterKey) if b == b':' => {
                self.out.push(b':');
                self.top().slot = Slot::Value;
                Ok(Read::Bytes(1))
            }
            (Kind::Dict, Slot::AfterKey) => Err("expected ':' after a dict key".into()),
            (Kind::Dict, Slot::Key) if closes => self.close(),
            (Kind::Dict, Slot::Key) => {
                if matches!(b, b'[' | b'(' | b'{') {
                    return Err("a dict key must be a string, a number, True, False or None".into());
                }
                self.begin_item();
                self.begin_value(b)
            }
            (Kind::List | Kind::Paren { .. }, Slot::Value) if closes => self.close(),
            (_, Slot::Value) => {
                if matches!(frame.kind, Kind::List | Kind::Paren { .. }) {
                    self.begin_item();
                }
                self.begin_value(b)
            }
            (_, Slot::AfterValue) if b == b',' => {
                let top = self.top();
                top.slot = if matches!(top.kind, Kind::Call | Kind::Dict) { Slot::Key } else { Slot::Value };
                if let Kind::Paren { at, tuple: false } = top.kind {
                    top.kind = Kind::Paren { at, tuple: true };
                    self.out.insert(at, b'[');
                }
                Ok(Read::Bytes(1))
            }
            (Kind::Call, Slot::AfterValue) if closes => {
                self.out.push(b'}');
                self.frames.pop();
                Ok(Read::Done)
            }
            (_, Slot::AfterValue) if closes => self.close(),
            (_, _) => Err("expected ',' or the closing bracket".into()),
        }
    }

    /// Closes a list, dict or parenthesis.
    fn close(&mut self) -> Result<Read, String> {
        let frame = self.frames.pop().expect("a frame is open");
        match frame.kind {
            Kind::List | Kind::Paren { tuple: true, .. } => self.out.push(b']'),
            Kind::Dict => self.out.push(b'}'),
            Kind::Paren { tuple: false, .. } if frame.items == 0 => self.out.extend_from_slice(b"[]"),
            Kind::Paren { .. } | Kind::Call => {}
        }
        self.value_done();
        Ok(Read::Bytes(1))
    }

    fn begin_value(&mut self, b: u8) -> Result<Read, String> {
        self.token = match b {
            b'\'' | b'"' => {
                self.out.push(b'"');
                Token::Quotes { quote: b, count: 1, raw: false }
            }
            b'0'..=b'9' | b'.' => Token::Number { text: vec![b], negative: false },
            b'-' | b'+' => Token::Sign { negative: b == b'-' },
            _ if is_name_start(b) => Token::Name(vec![b]),
            b'[' => {
                self.out.push(b'[');
                return self.push_frame(Kind::List, Slot::Value);
            }
            b'{' => {
                self.out.push(b'{');
                return self.push_frame(Kind::Dict, Slot::Key);
            }
            b'(' => return self.push_frame(Kind::Paren { at: self.out.len(), tuple: false }, Slot::Value),
            _ => return Err(format!("'{}' cannot start a literal", char::from(b).escape_default())),
        };
        Ok(Read::Bytes(1))
    }

    /// A byte of a quote run, sign, number or name.
    fn token_byte(&mut self, b: u8) -> Result<Read, String> {
        match &mut self.token {
            Token::Quotes { quote, count, raw } => {
                let (quote, raw) = (*quote, *raw);
                if b == quote && *count == 1 {
                    *count = 2;
                    return Ok(Read::Bytes(1));
                }
                let triple = b == quote;
                if *count == 2 && !triple {
                    // `''`: an empty string.
                    self.out.push(b'"');
                    self.token = Token::None;
                    self.value_done();
                    return Ok(Read::Again);
                }
                self.token = Token::Str(Str { quote, triple, raw, closing: 0, escape: Escape::None });
                Ok(if triple { Read::Bytes(1) } else { Read::Again })
            }
            Token::Sign { negative } => {
                if crate::parse::scan::is_space(b) {
                    return Ok(Read::Bytes(1));
                }
                if !(b.is_ascii_digit() || b == b'.') {
                    return Err("expected a number after a sign".into());
                }
                self.token = Token::Number { text: Vec::new(), negative: *negative };
                Ok(Read::Again)
            }
            Token::Number { text, negative } => {
                let exponent_sign = matches!(b, b'+' | b'-')
                    && matches!(text.last(), Some(b'e' | b'E'))
                    && !text.starts_with(b"0x")
                    && !text.starts_with(b"0X");
                if b.is_ascii_alphanumeric() || b == b'_' || b == b'.' || exponent_sign {
                    if text.len() >= MAX_NUMBER_LEN {
                        return Err(format!("a number longer than {MAX_NUMBER_LEN} characters"));
                    }
                    text.push(b);
                    return Ok(Read::Bytes(1));
                }
                let (text, negative) = (std::mem::take(text), *negative);
                self.token = Token::None;
                let key = self.top().slot == Slot::Key;
                let mut json = Vec::new();
                number_json(&text, negative, &mut json)?;
                self.write_scalar(&json, key);
                Ok(Read::Again)
            }
            Token::Name(text) => {
                if is_name_byte(b) {
                    text.push(b);
                    return Ok(Read::Bytes(1));
                }
                let text = std::mem::take(text);
                self.token = Token::None;
                if b == b'\'' || b == b'"' {
                    let raw = match text.to_ascii_lowercase().as_slice() {
                        b"u" => false,
                        b"r" => true,
                        b"b" | b"br" | b"rb" => return Err("bytes are not JSON data".into()),
                        b"f" | b"fr" | b"rf" => return Err("f-strings are not literals".into()),
                        _ => return Err(format!("'{}' is not a string prefix", String::from_utf8_lossy(&text))),
                    };
                    self.out.push(b'"');
                    self.token = Token::Quotes { quote: b, count: 1, raw };
                    return Ok(Read::Bytes(1));
                }
                let json: &[u8] = match text.as_slice() {
                    b"True" => b"true",
                    b"False" => b"false",
                    b"None" => b"null",
                    _ => return Err(format!("'{}' is not a literal", String::from_utf8_lossy(&text))),
                };
                let key = self.top().slot == Slot::Key;
                self.write_scalar(json, key);
                Ok(Read::Again)
            }
            Token::None | Token::Str(_) => Ok(Read::Again),
        }
    }

    /// Writes a number or constant; as a dict key, as the string `json.dumps` makes of it.
    fn write_scalar(&mut self, json: &[u8], key: bool) {
        if key {
            json_text::string_into(json, &mut self.out);
        } else {
            self.out.extend_from_slice(json);
        }
        self.value_done();
    }

    /// Reads string bytes from `data[i..]`; returns where it stopped (the string may go on), or
    /// where and why it is malformed.
    fn string(&mut self, data: &[u8], mut i: usize) -> Result<usize, (usize, String)> {
        let Self { token, out, character_name, .. } = self;
        let Token::Str(s) = token else { return Ok(i) };
        loop {
            if i == data.len() {
                return Ok(i);
            }
            if s.escape != Escape::None {
                if escape_byte(s, data[i], out, character_name).map_err(|why| (i, why))? {
                    i += 1;
                }
                continue;
            }
            if s.closing > 0 {
                if data[i] == s.quote {
                    s.closing += 1;
                    i += 1;
                    if s.closing == 3 {
                        break;
                    }
                    continue;
                }
                for _ in 0..s.closing {
                    json_text::escape_into(&[s.quote], out);
                }
                s.closing = 0;
            }
            let rest = &data[i..];
            let special =
                if s.triple { memchr2(s.quote, b'\\', rest) } else { memchr3(s.quote, b'\\', b'\n', rest) };
            let n = special.unwrap_or(rest.len());
            json_text::escape_into(&rest[..n], out);
            i += n;
            if i == data.len() {
                return Ok(i);
            }
            let b = data[i];
            i += 1;
            if b == b'\\' {
                s.escape = Escape::Backslash;
            } else if b == b'\n' {
                return Err((i - 1, "a single-quoted string does not end on its line".into()));
            } else if s.triple {
                s.closing = 1;
            } else {
                break;
            }
        }
        out.push(b'"');
        self.token = Token::None;
        self.value_done();
        Ok(i)
    }
}

/// What a byte step did.
enum Read {
    /// Read this many bytes.
    Bytes(usize),
    /// The state changed; read the same byte again.
    Again,
    /// The call's `)` was read.
    Done,
}

/// One byte of an escape sequence; returns whether it was used (else it is read again as
/// string text).
fn escape_byte(s: &mut Str, b: u8, out: &mut Vec<u8>, name: &mut Vec<u8>) -> Result<bool, String> {
    match s.escape {
        Escape::None => Ok(false),
        Escape::SkipLf => {
            s.escape = Escape::None;
            Ok(b == b'\n')
        }
        Escape::Backslash if s.raw => {
            // A raw string keeps the backslash and the byte after it (which cannot end it).
            s.escape = Escape::None;
            out.extend_from_slice(b"\\\\");
            json_text::escape_into(&[b], out);
            Ok(true)
        }
        Escape::Backslash => {
            s.escape = Escape::None;
            let simple: Option<u8> = match b {
                b'\\' | b'\'' | b'"' => Some(b),
                b'a' => Some(0x07),
                b'b' => Some(0x08),
                b'f' => Some(0x0c),
                b'n' => Some(b'\n'),
                b'r' => Some(b'\r'),
                b't' => Some(b'\t'),
                b'v' => Some(0x0b),
                _ => None,
            };
            match (simple, b) {
                (Some(c), _) => json_text::escape_into(&[c], out),
                (None, b'\n') => {}
                (None, b'\r') => s.escape = Escape::SkipLf,
                (None, b'0'..=b'7') => s.escape = Escape::Octal { value: u32::from(b - b'0'), digits: 1 },
                (None, b'x') => s.escape = Escape::Hex { value: 0, left: 2 },
                (None, b'u') => s.escape = Escape::Hex { value: 0, left: 4 },
                (None, b'U') => s.escape = Escape::Hex { value: 0, left: 8 },
                (None, b'N') => s.escape = Escape::NameOpen,
                // Python keeps an unknown escape as written.
                (None, _) => {
                    out.extend_from_slice(b"\\\\");
                    json_text::escape_into(&[b], out);
                }
            }
            Ok(true)
        }
        Escape::Octal { value, digits } => {
            if (b'0'..=b'7').contains(&b) && digits < 3 {
                let value = value * 8 + u32::from(b - b'0');
                if digits == 2 {
                    s.escape = Escape::None;
                    code_point_into(value, out)?;
                } else {
                    s.escape = Escape::Octal { value, digits: digits + 1 };
                }
                return Ok(true);
            }
            s.escape = Escape::None;
            code_point_into(value, out)?;
            Ok(false)
        }
        Escape::NameOpen if b == b'{' => {
            s.escape = Escape::Name;
            name.clear();
            Ok(true)
        }
        Escape::NameOpen => Err("\\N must be followed by {NAME}".into()),
        Escape::Name if b == b'}' => {
            s.escape = Escape::None;
            let found = std::str::from_utf8(name).ok().and_then(unicode_names2::character);
            let c = found.ok_or_else(|| format!("unknown Unicode character name '{}'", String::from_utf8_lossy(name)))?;
            json_text::escape_into(c.encode_utf8(&mut [0; 4]).as_bytes(), out);
            Ok(true)
        }
        // Names are letters, digits, spaces and hyphens; the longest has 88 characters.
        Escape::Name if !(b.is_ascii_alphanumeric() || b == b' ' || b == b'-') || name.len() >= 128 => {
            Err("a malformed \\N{NAME} escape".into())
        }
        Escape::Name => {
            name.push(b);
            Ok(true)
        }
        Escape::Hex { value, left } => {
            let Some(digit) = char::from(b).to_digit(16) else {
                return Err("a \\x, \\u or \\U escape with too few hex digits".into());
            };
            let value = value * 16 + digit;
            if left == 1 {
                s.escape = Escape::None;
                code_point_into(value, out)?;
            } else {
                s.escape = Escape::Hex { value, left: left - 1 };
            }
            Ok(true)
        }
    }
}

fn code_point_into(value: u32, out: &mut Vec<u8>) -> Result<(), String> {
    let c = char::from_u32(value).ok_or_else(|| format!("\\U{value:08x} is not a character JSON can hold"))?;
    json_text::escape_into(c.encode_utf8(&mut [0; 4]).as_bytes(), out);
    Ok(())
}

/// Writes the JSON of a Python number literal (`text` has no sign).
fn number_json(text: &[u8], negative: bool, out: &mut Vec<u8>) -> Result<(), String> {
    let shown = || String::from_utf8_lossy(text).into_owned();
    let bad = || format!("'{}' is not a number literal", shown());
    if matches!(text.last(), Some(b'j' | b'J')) {
        return Err(format!("'{}' is a complex number, which JSON cannot hold", shown()));
    }
    let radix = match text {
        [b'0', b'x' | b'X', ..] => 16,
        [b'0', b'o' | b'O', ..] => 8,
        [b'0', b'b' | b'B', ..] => 2,
        _ => 10,
    };
    let body = if radix == 10 { text } else { &text[2..] };
    // `_` only between two digits (or right after a base prefix).
    for (k, &c) in body.iter().enumerate() {
        if c != b'_' {
            continue;
        }
        let digit = |at: Option<&u8>| at.is_some_and(|d| char::from(*d).is_digit(radix));
        let after_prefix = k == 0 && radix != 10;
        if !(after_prefix || digit(body.get(k.wrapping_sub(1)))) || !digit(body.get(k + 1)) {
            return Err(bad());
        }
    }
    let digits: Vec<u8> = body.iter().copied().filter(|c| *c != b'_').collect();
    if radix == 10 && digits.iter().any(|c| matches!(c, b'.' | b'e' | b'E')) {
        let valid = float_syntax(&digits);
        let value: f64 = match std::str::from_utf8(&digits).ok().filter(|_| valid).and_then(|s| s.parse().ok()) {
            Some(value) => value,
            None => return Err(bad()),
        };
        if !value.is_finite() {
            return Err(format!("'{}' is too large for JSON", shown()));
        }
        let value = if negative { -value } else { value };
        out.extend_from_slice(python_float_repr(value).as_bytes());
        return Ok(());
    }
    if digits.is_empty() || !digits.iter().all(|c| char::from(*c).is_digit(radix)) {
        return Err(bad());
    }
    let decimal = if radix == 10 {
        let trimmed = match digits.iter().position(|c| *c != b'0') {
            None => b"0".to_vec(),
            Some(0) => digits,
            // `007` is not a Python literal; `000` is.
            Some(_) => return Err(bad()),
        };
        trimmed
    } else {
        to_decimal(&digits, radix)
    };
    // A long hex, octal or binary literal can pass Python's decimal limit, which JSON readers
    // (Python's own among them) keep to: the call is malformed, like any literal JSON cannot hold.
    if decimal.len() > MAX_NUMBER_LEN {
        return Err(format!("an int of more than {MAX_NUMBER_LEN} decimal digits, which JSON readers refuse"));
    }
    if negative && decimal != b"0" {
        out.push(b'-');
    }
    out.extend_from_slice(&decimal);
    Ok(())
}

/// Python's `repr` of a finite float, which `json.dumps` writes (also for a dict key): the
/// shortest digits that read back, positional for exponents -4 to 15, else `1.5e+16`.
fn python_float_repr(value: f64) -> String {
    let scientific = format!("{value:e}");
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let (sign, mantissa) = mantissa.strip_prefix('-').map_or(("", mantissa), |m| ("-", m));
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    if !(-4..16).contains(&exponent) {
        let (first, rest) = digits.split_at(1);
        let dot = if rest.is_empty() { "" } else { "." };
        let exponent_sign = if exponent < 0 { '-' } else { '+' };
        return format!("{sign}{first}{dot}{rest}e{exponent_sign}{:02}", exponent.abs());
    }
    // How many digits go before the point (zero or less: leading zeros after it).
    let point = exponent + 1;
    let before = point.unsigned_abs() as usize;
    if point <= 0 {
        format!("{sign}0.{}{digits}", "0".repeat(before))
    } else if before >= digits.len() {
        format!("{sign}{digits}{}.0", "0".repeat(before - digits.len()))
    } else {
        format!("{sign}{}.{}", &digits[..before], &digits[before..])
    }
}

/// `digits [. digits] [e [+-] digits]` or `. digits …`, with at least one mantissa digit.
fn float_syntax(text: &[u8]) -> bool {
    let (mantissa, exponent) = match text.iter().position(|c| matches!(c, b'e' | b'E')) {
        Some(at) => (&text[..at], Some(&text[at + 1..])),
        None => (text, None),
    };
    let mut parts = mantissa.splitn(2, |c| *c == b'.');
    let whole = parts.next().unwrap_or_default();
    let fraction = parts.next().unwrap_or_default();
    let all_digits = |s: &[u8]| s.iter().all(u8::is_ascii_digit);
    let mantissa_ok = all_digits(whole) && all_digits(fraction) && !(whole.is_empty() && fraction.is_empty());
    let exponent_ok = match exponent {
        None => true,
        Some(e) => {
            let e = e.strip_prefix(b"+").or_else(|| e.strip_prefix(b"-")).unwrap_or(e);
            !e.is_empty() && all_digits(e)
        }
    };
    mantissa_ok && exponent_ok
}

/// The decimal digits of a number written in base `radix` (at most a few thousand digits).
fn to_decimal(digits: &[u8], radix: u32) -> Vec<u8> {
    const BASE: u64 = 1_000_000_000;
    // Little-endian limbs of nine decimal digits.
    let mut limbs: Vec<u64> = vec![0];
    for c in digits {
        let mut carry = u64::from(char::from(*c).to_digit(radix).unwrap_or(0));
        for limb in limbs.iter_mut() {
            let value = *limb * u64::from(radix) + carry;
            *limb = value % BASE;
            carry = value / BASE;
        }
        if carry > 0 {
            limbs.push(carry);
        }
    }
    let mut text = limbs.last().copied().unwrap_or(0).to_string();
    for limb in limbs.iter().rev().skip(1) {
        text.push_str(&format!("{limb:09}"));
    }
    text.into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The JSON of `args` (what follows a call's `(`), read in pieces of `size` bytes.
    fn read(args: &str, size: usize) -> Result<String, String> {
        let mut reader = ArgsReader::new();
        let bytes = args.as_bytes();
        let mut start = 0;
        while start < bytes.len() {
            let end = (start + size).min(bytes.len());
            match reader.feed(&bytes[..end], start) {
                Step::More => start = end,
                Step::Done(at) => {
                    assert_eq!(at, bytes.len(), "read past the call");
                    return Ok(String::from_utf8(reader.out).unwrap());
                }
                Step::Error(_, why) => return Err(why),
            }
        }
        Err("unfinished".into())
    }

    fn json(args: &str) -> Result<String, String> {
        let whole = read(args, usize::MAX);
        for size in 1..4 {
            assert_eq!(read(args, size), whole, "{args:?} in {size}-byte pieces");
        }
        whole
    }

    #[test]
    fn literals_become_compact_json() {
        let cases = [
            ("a=1, b='x')", r#"{"a":1,"b":"x"}"#),
            ("a=1e16, b=1.5e-7, c=0.0001, d=123.456, e=-0.0, f=1e15, g=2.5e300, h=1e-05)",
             r#"{"a":1e+16,"b":1.5e-07,"c":0.0001,"d":123.456,"e":-0.0,"f":1000000000000000.0,"g":2.5e+300,"h":1e-05}"#),
            (")", "{}"),
            ("x=[1, (2, 3), (4), (), (5,), {'k': None, 1: True, 2.5: False}],)", r#"{"x":[1,[2,3],4,[],[5],{"k":null,"1":true,"2.5":false}]}"#),
            ("s='a\\'b\\n\\t\\x41\\u00e9\\U0001F389\\101\\0', r=r'\\d\\'', t='''x\n'y\\'''', u=\"\"\"\"\"\")",
             "{\"s\":\"a'b\\n\\tAé🎉A\\u0000\",\"r\":\"\\\\d\\\\'\",\"t\":\"x\\n'y'\",\"u\":\"\"}"),
            ("n=-0x_ff, m=0b101, o=0o17, f=1_000.5e-3, g=.5, h=5., z=-0, big=123456789012345678901234567890)",
             r#"{"n":-255,"m":5,"o":15,"f":1.0005,"g":0.5,"h":5.0,"z":0,"big":123456789012345678901234567890}"#),
            ("k = - 2 , e='', q=\"it's\", w='\\q', c='a\\\nb')", r#"{"k":-2,"e":"","q":"it's","w":"\\q","c":"ab"}"#),
            ("x=0xffffffffffffffffffffffffffffffff)", r#"{"x":340282366920938463463374607431768211455}"#),
            ("x='\\N{BULLET}\\N{latin small letter e with acute}')", r#"{"x":"•é"}"#),
        ];
        for (args, expected) in cases {
            assert_eq!(json(args).as_deref(), Ok(expected), "{args}");
        }
    }

    #[test]
    fn what_is_not_a_literal_is_an_error() {
        let cases = [
            ("1)", "expected a keyword argument (name=value) or ')'"),
            ("a=b)", "'b' is not a literal"),
            ("a=1, a=2)", "keyword argument 'a' repeated"),
            ("a=b'x')", "bytes are not JSON data"),
            ("a=1j)", "'1j' is a complex number, which JSON cannot hold"),
            ("a=007)", "'007' is not a number literal"),
            ("a=1e999)", "'1e999' is too large for JSON"),
            ("a='\\ud800')", "\\U0000d800 is not a character JSON can hold"),
            ("a='x\n')", "a single-quoted string does not end on its line"),
            ("a=[1 2])", "expected ',' or the closing bracket"),
            ("a={[1]: 2})", "a dict key must be a string, a number, True, False or None"),
            ("a=__import__('os'))", "'__import__' is not a literal"),
            ("a='\\N{NO SUCH NAME}')", "unknown Unicode character name 'NO SUCH NAME'"),
            ("a='\\N{BULLET')", "a malformed \\N{NAME} escape"),
        ];
        for (args, expected) in cases {
            assert_eq!(json(args), Err(expected.to_string()), "{args}");
        }
        let deep = format!("a={}1{})", "[".repeat(200), "]".repeat(200));
        assert_eq!(json(&deep), Err(format!("literals nested more than {MAX_DEPTH} deep")));
    }
}
