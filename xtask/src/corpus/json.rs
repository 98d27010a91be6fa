//! Writing JSON lines by hand: exact control over escapes (the needles need `\/` and `\u00e9`,
//! which no serializer writes) and no per-line allocation.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;
use std::time::{Duration, SystemTime};

use super::rng::Rng;

/// For each byte: 0 if it is written as is, else the letter after the backslash
/// (`u` for `\u00XX`).
const ESCAPE: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 0x20 {
        t[i] = b'u';
        i += 1;
    }
    t[b'\n' as usize] = b'n';
    t[b'\r' as usize] = b'r';
    t[b'\t' as usize] = b't';
    t[0x08] = b'b';
    t[0x0c] = b'f';
    t[b'"' as usize] = b'"';
    t[b'\\' as usize] = b'\\';
    t
};

/// Appends `s` escaped as the inside of a JSON string.
pub fn esc(out: &mut Vec<u8>, s: &[u8]) {
    let mut start = 0;
    for (i, &b) in s.iter().enumerate() {
        let e = ESCAPE[b as usize];
        if e == 0 {
            continue;
        }
        out.extend_from_slice(&s[start..i]);
        out.push(b'\\');
        if e == b'u' {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.extend_from_slice(b"u00");
            out.push(HEX[(b >> 4) as usize]);
            out.push(HEX[(b & 15) as usize]);
        } else {
            out.push(e);
        }
        start = i + 1;
    }
    out.extend_from_slice(&s[start..]);
}

/// Appends `s` JSON-escaped with every non-ASCII character as `\uXXXX` (UTF-16).
pub fn esc_ascii(out: &mut Vec<u8>, s: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    for piece in s.split_inclusive(|c: char| !c.is_ascii()) {
        let (ascii, last) = match piece.chars().next_back() {
            Some(c) if !c.is_ascii() => (&piece[..piece.len() - c.len_utf8()], Some(c)),
            _ => (piece, None),
        };
        esc(out, ascii.as_bytes());
        for unit in last
            .iter()
            .flat_map(|c| c.encode_utf16(&mut [0; 2]).to_vec())
        {
            out.extend_from_slice(b"\\u");
            for shift in [12, 8, 4, 0] {
                out.push(HEX[usize::from((unit >> shift) & 15)]);
            }
        }
    }
}

/// Appends `s` as a quoted JSON string.
pub fn str(out: &mut Vec<u8>, s: &str) {
    out.push(b'"');
    esc(out, s.as_bytes());
    out.push(b'"');
}

/// Appends an unsigned integer.
pub fn num(out: &mut Vec<u8>, mut n: u64) {
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&buf[i..]);
}

/// Appends `value / 10^decimals` as JavaScript prints it (`12.345`, `0.5`, `3`): costs and
/// seconds.
pub fn fixed(out: &mut Vec<u8>, value: u64, decimals: u32) {
    let scale = 10u64.pow(decimals);
    num(out, value / scale);
    let mut frac = value % scale;
    if frac == 0 {
        return;
    }
    let mut width = decimals as usize;
    while frac % 10 == 0 {
        frac /= 10;
        width -= 1;
    }
    out.push(b'.');
    pad(out, frac, width);
}

fn pad(out: &mut Vec<u8>, n: u64, width: usize) {
    let mut buf = [b'0'; 20];
    let mut v = n;
    for slot in buf[..width].iter_mut().rev() {
        *slot = b'0' + (v % 10) as u8;
        v /= 10;
    }
    out.extend_from_slice(&buf[..width]);
}

/// A calendar time in UTC.
#[derive(Clone, Copy, Debug)]
pub struct Civil {
    pub year: i64,
    pub month: u32,
    pub day: u32,
    pub hour: u32,
    pub minute: u32,
    pub second: u32,
    pub milli: u32,
}

/// Milliseconds since the Unix epoch as a calendar time (H. Hinnant's `civil_from_days`).
pub fn civil(ms: i64) -> Civil {
    let days = ms.div_euclid(86_400_000);
    let rem = ms.rem_euclid(86_400_000);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    Civil {
        year,
        month,
        day,
        hour: (rem / 3_600_000) as u32,
        minute: (rem / 60_000 % 60) as u32,
        second: (rem / 1000 % 60) as u32,
        milli: (rem % 1000) as u32,
    }
}

/// Milliseconds since the epoch of midnight UTC on a date.
pub fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(month);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    (era * 146_097 + doe - 719_468) * 86_400_000
}

/// Appends `2026-01-22T17:51:04.982Z` with the given separators between the time fields
/// (`:`/`.` in JSON, `-`/`-` in file names).
pub fn iso(out: &mut Vec<u8>, ms: i64, time_sep: u8, milli_sep: u8) {
    let c = civil(ms);
    pad(out, c.year as u64, 4);
    out.push(b'-');
    pad(out, u64::from(c.month), 2);
    out.push(b'-');
    pad(out, u64::from(c.day), 2);
    out.push(b'T');
    pad(out, u64::from(c.hour), 2);
    out.push(time_sep);
    pad(out, u64::from(c.minute), 2);
    out.push(time_sep);
    pad(out, u64::from(c.second), 2);
    out.push(milli_sep);
    pad(out, u64::from(c.milli), 3);
    out.push(b'Z');
}

/// Appends a quoted RFC 3339 timestamp with milliseconds.
pub fn ts(out: &mut Vec<u8>, ms: i64) {
    out.push(b'"');
    iso(out, ms, b':', b'.');
    out.push(b'"');
}

/// A UUID in its 36-character text form, copyable without allocation.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Uuid([u8; 36]);

impl Uuid {
    /// A random (version 4) UUID.
    pub fn v4(rng: &mut Rng) -> Uuid {
        let mut b = [0u8; 16];
        b[..8].copy_from_slice(&rng.next().to_be_bytes());
        b[8..].copy_from_slice(&rng.next().to_be_bytes());
        b[6] = (b[6] & 0x0f) | 0x40;
        b[8] = (b[8] & 0x3f) | 0x80;
        Uuid::from_bytes(b)
    }

    /// A time-ordered (version 7) UUID, as Codex and pi write.
    pub fn v7(rng: &mut Rng, ms: i64) -> Uuid {
        let mut b = [0u8; 16];
        b[..8].copy_from_slice(&((ms as u64) << 16).to_be_bytes());
        b[6..8].copy_from_slice(&(rng.next() as u16).to_be_bytes());
        b[8..].copy_from_slice(&rng.next().to_be_bytes());
        b[6] = (b[6] & 0x0f) | 0x70;
        b[8] = (b[8] & 0x3f) | 0x80;
        Uuid::from_bytes(b)
    }

    fn from_bytes(b: [u8; 16]) -> Uuid {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let mut s = [0u8; 36];
        let mut j = 0;
        for (i, byte) in b.iter().enumerate() {
            if matches!(i, 4 | 6 | 8 | 10) {
                s[j] = b'-';
                j += 1;
            }
            s[j] = HEX[(byte >> 4) as usize];
            s[j + 1] = HEX[(byte & 15) as usize];
            j += 2;
        }
        Uuid(s)
    }

    pub fn as_str(&self) -> &str {
        std::str::from_utf8(&self.0).expect("hex digits and dashes")
    }

    /// Appends the quoted UUID.
    pub fn put(&self, out: &mut Vec<u8>) {
        out.push(b'"');
        out.extend_from_slice(&self.0);
        out.push(b'"');
    }
}

/// Appends `n` random characters from `alphabet` (ids such as `toolu_01…`, `call_…`).
pub fn random_chars(out: &mut Vec<u8>, rng: &mut Rng, alphabet: &[u8], n: usize) {
    for _ in 0..n {
        out.push(alphabet[rng.below(alphabet.len() as u64) as usize]);
    }
}

pub const BASE62: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
pub const HEX: &[u8] = b"0123456789abcdef";

/// One transcript file being written line by line.
pub struct Sink {
    file: BufWriter<File>,
    /// The line under construction, without its newline.
    pub line: Vec<u8>,
    lines: u64,
    bytes: u64,
}

impl Sink {
    pub fn create(path: &Path) -> io::Result<Sink> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        Ok(Sink {
            file: BufWriter::with_capacity(1 << 20, File::create(path)?),
            line: Vec::with_capacity(1 << 16),
            lines: 0,
            bytes: 0,
        })
    }

    /// The 1-based number of the line under construction: its `seq`.
    pub fn seq(&self) -> u64 {
        self.lines + 1
    }

    /// Bytes written so far.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Ends the line under construction.
    pub fn end(&mut self) -> io::Result<()> {
        self.line.push(b'\n');
        self.file.write_all(&self.line)?;
        self.bytes += self.line.len() as u64;
        self.lines += 1;
        self.line.clear();
        Ok(())
    }

    /// Flushes and sets the file's modification time to its last line's time, as if the agent
    /// had just written it. Returns the file size.
    pub fn finish(self, last_ms: i64) -> io::Result<u64> {
        let file = self.file.into_inner().map_err(|e| e.into_error())?;
        let mtime = SystemTime::UNIX_EPOCH + Duration::from_millis(last_ms.max(0) as u64);
        file.set_modified(mtime)?;
        Ok(self.bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_like_serde() {
        let s = "a\"b\\c\nd\te\u{1}f é K";
        let mut out = Vec::new();
        str(&mut out, s);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            serde_json::to_string(s).unwrap()
        );
    }

    #[test]
    fn ascii_escapes_like_serde() {
        let s = "Stra\u{DF}e \u{212A} \u{FB01} 😀 a\"b";
        let mut out = b"\"".to_vec();
        esc_ascii(&mut out, s);
        out.push(b'"');
        let back: String = serde_json::from_slice(&out).unwrap();
        assert_eq!(back, s);
        assert!(out.is_ascii());
    }

    #[test]
    fn dates_round_trip() {
        let ms = days_from_civil(2026, 2, 28) + 23 * 3_600_000 + 59 * 60_000 + 7_123;
        let mut out = Vec::new();
        iso(&mut out, ms, b':', b'.');
        assert_eq!(out, b"2026-02-28T23:59:07.123Z");
        let mut out = Vec::new();
        fixed(&mut out, 2_790, 6);
        fixed(&mut out, 3_000_000, 6);
        assert_eq!(out, b"0.002793");
        let c = civil(days_from_civil(2024, 2, 29));
        assert_eq!((c.year, c.month, c.day), (2024, 2, 29));
    }
}

/// A short random id with a fixed prefix (`toolu_01…`, `msg_01…`, `call_…`), copyable.
#[derive(Clone, Copy)]
pub struct Tag {
    buf: [u8; 72],
    len: usize,
}

impl Tag {
    pub fn new(rng: &mut Rng, prefix: &str, alphabet: &[u8], n: usize) -> Tag {
        Tag {
            buf: [0u8; 72],
            len: 0,
        }
        .then(rng, prefix, alphabet, n)
    }

    /// The id followed by `literal` and `n` more random characters (`call_…|fc_…`).
    pub fn then(mut self, rng: &mut Rng, literal: &str, alphabet: &[u8], n: usize) -> Tag {
        let p = literal.as_bytes();
        self.buf[self.len..self.len + p.len()].copy_from_slice(p);
        self.len += p.len();
        for slot in &mut self.buf[self.len..self.len + n] {
            *slot = alphabet[rng.below(alphabet.len() as u64) as usize];
        }
        self.len += n;
        self
    }

    pub fn bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }

    /// Appends the quoted id.
    pub fn put(&self, out: &mut Vec<u8>) {
        out.push(b'"');
        out.extend_from_slice(self.bytes());
        out.push(b'"');
    }
}
