//! The folded letters of raw JSON text around one place, read in both directions without
//! decoding the rest: what lets the raw prefilter ask whether a query's letters run *through* a
//! hatch (`Stra\u00dfe`, `ﬁle`) instead of taking any hatch as a possible hit.
//!
//! The text is read as JSON string content, token by token: a plain byte, a two-byte escape
//! (`\n`), a `\uXXXX` escape, or a UTF-8 character. A token's letters are its full case folding's
//! ASCII letters, with [`BREAK`] where the folding has anything else (`İ` folds to `i` and a
//! combining dot: `i-`); a token without letters is a break. Read backwards, an escape is told
//! from text that looks like one by the backslashes before it, and where that cannot be known
//! (the buffer starts inside the run) the answer is "unknown", which a caller takes as a match.

use std::sync::OnceLock;

use caseless::Caseless as _;

use crate::fold::ASCII_FOLDING;

/// Stands for a non-letter inside a token's folding; never equal to a letter.
pub const BREAK: u8 = b'-';

/// The letters of a non-ASCII character that folds to ASCII letters: its full case folding, each
/// ASCII letter kept and anything else a [`BREAK`].
fn folding(c: char) -> Option<&'static [u8]> {
    static TABLE: OnceLock<Vec<(char, Vec<u8>)>> = OnceLock::new();
    let table = TABLE.get_or_init(|| {
        ASCII_FOLDING
            .iter()
            .map(|&(c, _)| {
                let letters = std::iter::once(c)
                    .default_case_fold()
                    .map(|f| {
                        if f.is_ascii_alphabetic() {
                            f.to_ascii_lowercase() as u8
                        } else {
                            BREAK
                        }
                    })
                    .collect();
                (c, letters)
            })
            .collect()
    });
    table
        .iter()
        .find(|(t, _)| *t == c)
        .map(|(_, l)| l.as_slice())
}

/// What one token stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Letters {
    /// One ASCII letter, lowercase.
    One(u8),
    /// A character's folding (letters and breaks).
    Folded(&'static [u8]),
    /// No letter.
    Break,
}

impl Letters {
    fn of(c: char) -> Letters {
        if c.is_ascii_alphabetic() {
            Letters::One(c.to_ascii_lowercase() as u8)
        } else {
            folding(c).map_or(Letters::Break, Letters::Folded)
        }
    }

    fn of_escape(hex: &[u8]) -> Option<Letters> {
        let cp = crate::json::hex4(hex)?;
        Some(char::from_u32(cp).map_or(Letters::Break, Letters::of))
    }
}

/// The token that starts at `at` (a token boundary) and its length; `None` at the end of
/// `bytes` or where the token runs past it.
fn token_at(bytes: &[u8], at: usize) -> Option<(Letters, usize)> {
    let b = *bytes.get(at)?;
    match b {
        b'\\' => match bytes.get(at + 1)? {
            b'u' => {
                let hex = bytes.get(at + 2..at + 6)?;
                Some((Letters::of_escape(hex).unwrap_or(Letters::Break), 6))
            }
            _ => Some((Letters::Break, 2)),
        },
        0x80.. => {
            let len = utf8_len(b);
            let c = bytes.get(at..at + len)?;
            let c = std::str::from_utf8(c).ok().and_then(|s| s.chars().next());
            Some((c.map_or(Letters::Break, Letters::of), len))
        }
        _ => Some((Letters::of(char::from(b)), 1)),
    }
}

/// How long a UTF-8 character with this first byte is (1 for a byte that starts none).
fn utf8_len(b: u8) -> usize {
    match b {
        0xC0..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF7 => 4,
        _ => 1,
    }
}

/// Whether the backslash at `i` starts an escape: an even number of backslashes comes before it.
/// `None` when the run of backslashes reaches the start of a buffer that does not start at a
/// token boundary.
fn starts_escape(bytes: &[u8], i: usize, start_known: bool) -> Option<bool> {
    let before = bytes[..i].iter().rev().take_while(|&&b| b == b'\\').count();
    if before == i && !start_known {
        return None;
    }
    Some(before % 2 == 0)
}

/// The token that ends at `end` (a token boundary) and its length. `Ok(None)` at the start of
/// `bytes`; `Err(())` when it cannot be known.
#[allow(clippy::result_unit_err)]
fn token_before(
    bytes: &[u8],
    end: usize,
    start_known: bool,
) -> Result<Option<(Letters, usize)>, ()> {
    if end == 0 {
        return Ok(None);
    }
    let last = bytes[end - 1];
    if last >= 0x80 {
        let lead = (end.saturating_sub(4)..end)
            .rev()
            .find(|&i| bytes[i] & 0xC0 != 0x80)
            .ok_or(())?;
        if utf8_len(bytes[lead]) != end - lead {
            // A stray byte: no character, no letter.
            return Ok(Some((Letters::Break, 1)));
        }
        return token_at(bytes, lead).map(Some).ok_or(());
    }
    if end >= 6 && bytes[end - 6] == b'\\' && bytes[end - 5] == b'u' {
        if let Some(letters) = Letters::of_escape(&bytes[end - 4..end]) {
            if starts_escape(bytes, end - 6, start_known).ok_or(())? {
                return Ok(Some((letters, 6)));
            }
        }
    }
    if end >= 2 && bytes[end - 2] == b'\\' && starts_escape(bytes, end - 2, start_known).ok_or(())?
    {
        return Ok(Some((Letters::Break, 2)));
    }
    Ok(Some((Letters::of(char::from(last)), 1)))
}

/// The letters of the run through the token at `at` (a token boundary), with up to `reach`
/// letters on each side of it, into `out`; `false` when they cannot be known (the caller then
/// takes any needle to be there). `start_known`: `bytes` starts at a token boundary (a line's
/// start), not somewhere inside the text.
pub fn run_through(
    bytes: &[u8],
    at: usize,
    reach: usize,
    start_known: bool,
    out: &mut Vec<u8>,
) -> bool {
    out.clear();
    let Some((middle, len)) = token_at(bytes, at) else {
        return true;
    };
    // Backwards first, into `out` reversed.
    let mut end = at;
    while out.len() < reach {
        match token_before(bytes, end, start_known) {
            Err(()) => return false,
            Ok(None) | Ok(Some((Letters::Break, _))) => break,
            Ok(Some((Letters::One(l), n))) => {
                out.push(l);
                end -= n;
            }
            Ok(Some((Letters::Folded(f), n))) => {
                let kept = f.rsplit(|&b| b == BREAK).next().unwrap_or(f);
                out.extend(kept.iter().rev());
                if kept.len() < f.len() {
                    break;
                }
                end -= n;
            }
        }
    }
    out.reverse();
    match middle {
        Letters::One(l) => out.push(l),
        Letters::Folded(f) => out.extend_from_slice(f),
        Letters::Break => out.push(BREAK),
    }
    let mut next = at + len;
    let mut ahead = 0;
    while ahead < reach {
        match token_at(bytes, next) {
            None | Some((Letters::Break, _)) => break,
            Some((Letters::One(l), n)) => {
                out.push(l);
                ahead += 1;
                next += n;
            }
            Some((Letters::Folded(f), n)) => {
                let kept = f.split(|&b| b == BREAK).next().unwrap_or(f);
                out.extend_from_slice(kept);
                if kept.len() < f.len() {
                    break;
                }
                ahead += kept.len();
                next += n;
            }
        }
    }
    true
}

/// Whether `needle` (lowercase ASCII letters) can lie in [`run_through`]'s run over the token
/// at `at` itself, judged from the token's letters and the letter right beside it on each side:
/// `false` only when it cannot, `true` also when that cannot be told. A hatch that a needle
/// cannot run through is ruled out without reading its run: most `ß` and `\u00df` in German
/// text, for a needle such as `status` (without the index, `git status` on the 1 GiB bench
/// corpus took 277 ms, against 295 ms reading every run).
pub fn may_run_through(bytes: &[u8], at: usize, start_known: bool, needle: &[u8]) -> bool {
    let Some((token, len)) = token_at(bytes, at) else {
        return true;
    };
    let one;
    let middle: &[u8] = match token {
        Letters::One(l) => {
            one = [l];
            &one
        }
        Letters::Folded(f) => f,
        Letters::Break => return true,
    };
    // The letter right before the token (`Err` when that cannot be known), and right after.
    let before = || -> Result<Option<u8>, ()> {
        Ok(match token_before(bytes, at, start_known)? {
            Some((Letters::One(l), _)) => Some(l),
            Some((Letters::Folded(f), _)) => f.last().copied().filter(|&l| l != BREAK),
            None | Some((Letters::Break, _)) => None,
        })
    };
    let after = || match token_at(bytes, at + len) {
        Some((Letters::One(l), _)) => Some(l),
        Some((Letters::Folded(f), _)) => f.first().copied().filter(|&l| l != BREAK),
        None | Some((Letters::Break, _)) => None,
    };
    let (n, m) = (needle.len() as isize, middle.len() as isize);
    // `o`: where the token's first letter lies in the needle.
    (1 - m..n).any(|o| {
        let fits = (0..m).all(|p| {
            let q = o + p;
            q < 0 || q >= n || middle[p as usize] == needle[q as usize]
        });
        fits && (o <= 0 || before().map_or(true, |l| l == Some(needle[o as usize - 1])))
            && (o + m >= n || after() == Some(needle[(o + m) as usize]))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(text: &str, at: usize) -> String {
        let mut out = Vec::new();
        assert!(run_through(text.as_bytes(), at, 64, true, &mut out));
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn a_run_is_the_folded_word_around_a_token() {
        let s = "die Stra\u{00DF}e hier";
        assert_eq!(run(s, s.find('\u{00DF}').unwrap()), "strasse");
        let s = r#"die Stra\u00dfe hier"#;
        assert_eq!(run(s, s.find('\\').unwrap()), "strasse");
        let s = r#"x \u0041b\u00dfc\nd"#;
        assert_eq!(run(s, s.find("\\u00df").unwrap()), "abssc");
        let s = "\u{FB03}x \u{212A}elvin";
        assert_eq!(run(s, 0), "ffix");
        assert_eq!(run(s, s.find('\u{212A}').unwrap()), "kelvin");
        // İ folds to i and a combining dot: the letters after it are another run.
        let s = "a\u{0130}b";
        assert_eq!(run(s, 1), "ai-b");
    }

    #[test]
    fn a_needle_runs_through_a_token_only_beside_its_own_letters() {
        let may = |text: &str, token: &str, needle: &str| {
            let at = text.find(token).unwrap();
            may_run_through(text.as_bytes(), at, true, needle.as_bytes())
        };
        // `ß` folds to `ss`: `status` can only begin with its second `s` or end with its first.
        assert!(!may("die Stra\u{00DF}e", "\u{00DF}", "status"));
        assert!(!may(r"die Stra\u00dfe", r"\u00df", "status"));
        assert!(may("\u{00DF}tatus", "\u{00DF}", "status"));
        assert!(may(r"\u00dfTatus", r"\u00df", "status"));
        assert!(may("Statu\u{00DF}", "\u{00DF}", "status"));
        assert!(may(r"Stat\u0075\u00df", r"\u00df", "status"));
        assert!(!may("Stat\u{00DF}", "\u{00DF}", "status"));
        // A token inside the needle, and one that holds it whole.
        assert!(may(r"gr\u00f6\u00dfe", r"\u00df", "sse"));
        assert!(may("\u{FB03}", "\u{FB03}", "f"));
        assert!(may("\u{FB03}x", "\u{FB03}", "fix"));
        assert!(!may("\u{FB03}y", "\u{FB03}", "fix"));
        // The letter before cannot be known when the bytes start inside the text.
        let escaped = br"\u0075\u00dftatus";
        assert!(may_run_through(&escaped[..], 6, false, b"xsst"));
        assert!(!may_run_through(&escaped[..], 6, true, b"xsst"));
    }

    #[test]
    fn an_escaped_backslash_is_no_escape() {
        // `\\u00fe` is a backslash and the text `u00fe`: its letters run into the ß.
        let s = r#"\\u00fe\u00df"#;
        assert_eq!(run(s, s.rfind('\\').unwrap()), "fess");
        // One backslash more and it is þ, which has no ASCII folding.
        let s = r#"\\\u00fe\u00df"#;
        assert_eq!(run(s, s.rfind("\\u00df").unwrap()), "ss");
        let s = r#"a\\nb"#;
        assert_eq!(run(s, 4), "nb");
        let s = r#"a\nb"#;
        assert_eq!(run(s, 3), "b");
    }

    #[test]
    fn an_unknown_start_is_said() {
        let s = br#"\u00fe\u00df"#;
        let mut out = Vec::new();
        assert!(!run_through(s, 6, 8, false, &mut out));
        assert!(run_through(s, 6, 8, true, &mut out));
        assert_eq!(out, b"ss");
        // Inside a character whose start is cut off.
        let s = "\u{00DF}\u{00DF}".as_bytes();
        assert!(!run_through(&s[1..], 1, 8, false, &mut out));
    }
}
