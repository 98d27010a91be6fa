//! The end of a string a byte at a time: the twin the vectorised ones are held equal to, and the
//! one that reads the last bytes of a text, where a block would not fit.

/// The closing quote of a string whose contents start at `start`, and whether it holds escapes;
/// `None` at a control character, a bad escape, a surrogate escape or the end of the text.
pub fn string_end(bytes: &[u8], start: usize) -> Option<(usize, bool)> {
    let (mut i, mut escaped) = (start, false);
    loop {
        match *bytes.get(i)? {
            b'"' => return Some((i, escaped)),
            b'\\' => {
                escaped = true;
                i += escape_len(bytes, i)?;
            }
            b if b < 0x20 => return None,
            _ => i += 1,
        }
    }
}

/// The length of the escape at `at` (a backslash); `None` if it is not one serde reads to a
/// character (a surrogate escape is left to serde).
pub fn escape_len(bytes: &[u8], at: usize) -> Option<usize> {
    match *bytes.get(at + 1)? {
        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => Some(2),
        b'u' => {
            let hex = bytes.get(at + 2..at + 6)?;
            let mut unit = 0u32;
            for &h in hex {
                unit = unit * 16 + char::from(h).to_digit(16)?;
            }
            (!(0xD800..=0xDFFF).contains(&unit)).then_some(6)
        }
        _ => None,
    }
}
