//! Just enough JSON for a heap snapshot, read in place: keys, values skipped by their extent,
//! arrays of unsigned integers parsed straight into whatever the caller keeps, and string
//! literals found (not decoded). The small `snapshot` object is handed to `serde_json`.

use crate::Error;

/// Progress is told every this many bytes of an array.
const STEP: usize = 16 << 20;

/// A position in the file, moving forward.
pub(crate) struct Scanner<'a> {
    data: &'a [u8],
    pub pos: usize,
    /// Told of each stretch of an integer array once parsed, which is not read again.
    done_with: &'a dyn Fn(usize, usize),
}

impl<'a> Scanner<'a> {
    pub(crate) fn new(data: &'a [u8]) -> Scanner<'a> {
        Scanner { data, pos: 0, done_with: &|_, _| {} }
    }

    /// A scanner that tells `done_with` of the stretches of the integer arrays it has parsed.
    pub(crate) fn releasing(data: &'a [u8], done_with: &'a dyn Fn(usize, usize)) -> Scanner<'a> {
        Scanner { data, pos: 0, done_with }
    }

    fn cut(&self, inside: &'static str) -> Error {
        Error::Cut { at: self.data.len(), inside }
    }

    fn format(&self, what: impl Into<String>) -> Error {
        Error::Format { what: what.into(), at: self.pos }
    }

    /// Skips whitespace; the next byte, not taken, or `None` at the end.
    pub(crate) fn peek(&mut self) -> Option<u8> {
        while let Some(&b) = self.data.get(self.pos) {
            if !matches!(b, b' ' | b'\n' | b'\r' | b'\t') {
                return Some(b);
            }
            self.pos += 1;
        }
        None
    }

    /// Takes `want` after any whitespace.
    pub(crate) fn expect(&mut self, want: u8, inside: &'static str) -> Result<(), Error> {
        match self.peek() {
            Some(b) if b == want => {
                self.pos += 1;
                Ok(())
            }
            Some(b) => {
                Err(self.format(format!("expected '{}' in {inside}, found '{}'", want as char, b.escape_ascii())))
            }
            None => Err(self.cut(inside)),
        }
    }

    /// A string literal's contents as written (escapes not decoded), and where they start.
    pub(crate) fn string(&mut self, inside: &'static str) -> Result<(usize, &'a [u8]), Error> {
        self.expect(b'"', inside)?;
        let start = self.pos;
        let mut i = start;
        loop {
            match self.data.get(i) {
                Some(b'"') => break,
                Some(b'\\') => i += 2,
                Some(_) => i += 1,
                None => return Err(self.cut(inside)),
            }
        }
        if i >= self.data.len() {
            return Err(self.cut(inside));
        }
        self.pos = i + 1;
        Ok((start, &self.data[start..i]))
    }

    /// Skips one value of any kind; returns where it started.
    pub(crate) fn skip_value(&mut self, inside: &'static str) -> Result<usize, Error> {
        let start = match self.peek() {
            Some(_) => self.pos,
            None => return Err(self.cut(inside)),
        };
        let mut depth = 0usize;
        loop {
            match self.peek() {
                None => return Err(self.cut(inside)),
                Some(b'"') => {
                    self.string(inside)?;
                }
                Some(b'{' | b'[') => {
                    depth += 1;
                    self.pos += 1;
                }
                Some(b'}' | b']') => {
                    depth = depth
                        .checked_sub(1)
                        .ok_or_else(|| self.format(format!("an unbalanced bracket in {inside}")))?;
                    self.pos += 1;
                }
                Some(b',' | b':') if depth > 0 => self.pos += 1,
                Some(_) => {
                    // A number or a literal.
                    let from = self.pos;
                    while let Some(&b) = self.data.get(self.pos) {
                        if matches!(b, b',' | b':' | b'{' | b'}' | b'[' | b']' | b'"' | b' ' | b'\n' | b'\r' | b'\t') {
                            break;
                        }
                        self.pos += 1;
                    }
                    if self.pos == from {
                        return Err(self.format(format!("a stray separator in {inside}")));
                    }
                }
            }
            if depth == 0 {
                return Ok(start);
            }
        }
    }

    /// The whole file.
    pub(crate) fn data(&self) -> &'a [u8] {
        self.data
    }

    /// Bytes of the whole file.
    pub(crate) fn len(&self) -> usize {
        self.data.len()
    }

    /// Parses `[n, n, ...]` of unsigned integers, giving each to `each` in order with its
    /// offset, and telling `progress` every [`STEP`] bytes; returns how many there were.
    pub(crate) fn uints(
        &mut self,
        inside: &'static str,
        progress: &dyn graph::Progress,
        mut each: impl FnMut(u64, usize) -> Result<(), Error>,
    ) -> Result<u64, Error> {
        self.expect(b'[', inside)?;
        let data = self.data;
        let mut i = self.pos;
        let mut count = 0u64;
        let mut value = 0u64;
        let mut in_number = false;
        let mut reported = i;
        loop {
            let Some(&b) = data.get(i) else {
                self.pos = i;
                return Err(self.cut(inside));
            };
            match b {
                b'0'..=b'9' => {
                    value = value
                        .checked_mul(10)
                        .and_then(|v| v.checked_add(u64::from(b - b'0')))
                        .ok_or_else(|| Error::Format { what: format!("a number too big in {inside}"), at: i })?;
                    in_number = true;
                }
                b',' | b']' | b' ' | b'\n' | b'\r' | b'\t' => {
                    if in_number {
                        each(value, i)?;
                        count += 1;
                        value = 0;
                        in_number = false;
                        if i - reported >= STEP {
                            progress.advance((i - reported) as u64);
                            (self.done_with)(reported, i - reported);
                            reported = i;
                        }
                    }
                    if b == b']' {
                        progress.advance((i - reported) as u64);
                        (self.done_with)(reported, i - reported);
                        self.pos = i + 1;
                        return Ok(count);
                    }
                }
                _ => {
                    return Err(Error::Format {
                        what: format!("'{}' in {inside}, where only unsigned integers belong", b.escape_ascii()),
                        at: i,
                    })
                }
            }
            i += 1;
        }
    }

    /// Finds every string of `[ "...", ... ]`: where each one's contents start and how long
    /// they are in the file.
    pub(crate) fn strings(&mut self, inside: &'static str) -> Result<Vec<(u64, u32)>, Error> {
        self.expect(b'[', inside)?;
        let mut out = Vec::new();
        loop {
            match self.peek() {
                Some(b']') => {
                    self.pos += 1;
                    return Ok(out);
                }
                Some(b',') => self.pos += 1,
                Some(b'"') => {
                    let (start, s) = self.string(inside)?;
                    let len = u32::try_from(s.len()).map_err(|_| Error::Format {
                        what: format!("a string of 4 GiB or more in {inside}"),
                        at: start,
                    })?;
                    out.push((start as u64, len));
                }
                Some(b) => {
                    return Err(self.format(format!("'{}' in {inside}, where only strings belong", b.escape_ascii())))
                }
                None => return Err(self.cut(inside)),
            }
        }
    }
}

/// The text of a string literal's contents as written in the file (escapes decoded; invalid
/// escapes and lone surrogates, which V8 writes for broken UTF-16, become U+FFFD).
/// The contents of a JSON string (no quotes) of the UTF-16 `units`: printable ASCII as it is
/// (quotes and backslashes escaped), every other unit as `\uXXXX`, unpaired surrogates
/// included, as V8 writes them.
pub(crate) fn encode_units(units: &[u16]) -> String {
    let mut out = String::with_capacity(units.len());
    for &u in units {
        match u {
            0x22 => out.push_str("\\\""),
            0x5c => out.push_str("\\\\"),
            0x20..=0x7e => out.push(char::from(u as u8)),
            _ => out.push_str(&format!("\\u{u:04x}")),
        }
    }
    out
}

pub(crate) fn decode(raw: &[u8]) -> String {
    if !raw.contains(&b'\\') {
        return String::from_utf8_lossy(raw).into_owned();
    }
    let mut out = String::with_capacity(raw.len());
    let mut units: Vec<u16> = Vec::new();
    let mut i = 0;
    let flush = |units: &mut Vec<u16>, out: &mut String| {
        out.extend(char::decode_utf16(units.drain(..)).map(|c| c.unwrap_or(char::REPLACEMENT_CHARACTER)));
    };
    while i < raw.len() {
        if raw[i] == b'\\' && i + 1 < raw.len() {
            let c = raw[i + 1];
            if c == b'u' {
                let hex = raw.get(i + 2..i + 6).and_then(|h| std::str::from_utf8(h).ok());
                match hex.and_then(|h| u16::from_str_radix(h, 16).ok()) {
                    Some(u) => {
                        units.push(u);
                        i += 6;
                        continue;
                    }
                    None => {
                        flush(&mut units, &mut out);
                        out.push(char::REPLACEMENT_CHARACTER);
                        i += 2;
                        continue;
                    }
                }
            }
            flush(&mut units, &mut out);
            out.push(match c {
                b'n' => '\n',
                b't' => '\t',
                b'r' => '\r',
                b'b' => '\u{8}',
                b'f' => '\u{c}',
                b'/' => '/',
                b'"' => '"',
                b'\\' => '\\',
                _ => char::REPLACEMENT_CHARACTER,
            });
            i += 2;
        } else {
            flush(&mut units, &mut out);
            let end = raw[i..].iter().position(|&b| b == b'\\').map_or(raw.len(), |p| i + p);
            out.push_str(&String::from_utf8_lossy(&raw[i..end]));
            i = end;
        }
    }
    flush(&mut units, &mut out);
    out
}
