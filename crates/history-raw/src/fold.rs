//! Full Unicode case folding, the one folding every comparison of a query with a text uses, and
//! the table of the non-ASCII characters whose folding holds ASCII letters, which the raw
//! prefilter must treat as possible letters of a query.

use caseless::Caseless;

/// Folds text with full Unicode case folding (`ß` → `ss`, `K` (Kelvin) → `k`, `ς` → `σ`).
pub fn fold(text: &str) -> String {
    if text.is_ascii() {
        return text.to_ascii_lowercase();
    }
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_ascii() {
            out.push(c.to_ascii_lowercase());
        } else {
            out.extend(std::iter::once(c).default_case_fold());
        }
    }
    out
}

/// [`fold`], and for each byte of the folded text the byte offset in `text` of the character
/// it came from.
pub fn fold_with_origins(text: &str) -> (String, Vec<usize>) {
    let mut folded = String::with_capacity(text.len());
    let mut origins = Vec::with_capacity(text.len());
    for (at, c) in text.char_indices() {
        if c.is_ascii() {
            folded.push(c.to_ascii_lowercase());
            origins.push(at);
            continue;
        }
        for f in std::iter::once(c).default_case_fold() {
            folded.push(f);
            origins.resize(folded.len(), at);
        }
    }
    (folded, origins)
}

/// Non-ASCII characters whose full case folding contains ASCII letters, with those letters
/// (Unicode `CaseFolding.txt`, statuses C and F; checked against the folding in use by a test).
pub const ASCII_FOLDING: &[(char, &str)] = &[
    ('\u{00DF}', "s"),
    ('\u{0130}', "i"),
    ('\u{0149}', "n"),
    ('\u{017F}', "s"),
    ('\u{01F0}', "j"),
    ('\u{1E96}', "h"),
    ('\u{1E97}', "t"),
    ('\u{1E98}', "w"),
    ('\u{1E99}', "y"),
    ('\u{1E9A}', "a"),
    ('\u{1E9E}', "s"),
    ('\u{212A}', "k"),
    ('\u{FB00}', "f"),
    ('\u{FB01}', "fi"),
    ('\u{FB02}', "fl"),
    ('\u{FB03}', "fi"),
    ('\u{FB04}', "fl"),
    ('\u{FB05}', "st"),
    ('\u{FB06}', "st"),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_folding_table_is_complete() {
        let mut computed = Vec::new();
        for cp in 0x80..=0x10FFFFu32 {
            let Some(c) = char::from_u32(cp) else {
                continue;
            };
            let f: String = std::iter::once(c).default_case_fold().collect();
            let mut ascii: Vec<char> = f.chars().filter(|x| x.is_ascii_alphabetic()).collect();
            ascii.sort_unstable();
            ascii.dedup();
            if !ascii.is_empty() {
                computed.push((c, ascii.into_iter().collect::<String>()));
            }
        }
        let table: Vec<(char, String)> = ASCII_FOLDING
            .iter()
            .map(|(c, s)| (*c, s.to_string()))
            .collect();
        assert_eq!(table, computed);
    }

    #[test]
    fn origins_name_the_character_each_folded_byte_came_from() {
        let text = "Aß\u{0130}x—Ǆ é";
        let (folded, origins) = fold_with_origins(text);
        assert_eq!(folded, fold(text));
        assert_eq!(origins.len(), folded.len());
        let mut expected = Vec::new();
        for (at, c) in text.char_indices() {
            let f: String = std::iter::once(c).default_case_fold().collect();
            expected.extend(std::iter::repeat_n(at, f.len()));
        }
        assert_eq!(origins, expected);
    }
}
