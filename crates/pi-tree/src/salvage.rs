//! Reading what can be read from lines that do not parse as they are.
//!
//! Two kinds of line need help. pi writes lone UTF-16 surrogates (a tool output cut in the middle
//! of an emoji) as `\ud83d` escapes, which JSON allows and a strict parser refuses: they are
//! replaced by U+FFFD. And a damaged entry (invalid UTF-8, a line cut short) still names its `id`
//! and `parentId`: keeping it as a node without events stops one bad line from cutting the whole
//! history before it off the active branch.

pub(crate) use history_raw::json::repair_surrogates;

/// A damaged entry line as a node of the tree: its place, without its events.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct BareEntry {
    pub(crate) id: String,
    pub(crate) parent_id: Option<String>,
    pub(crate) entry_type: String,
}

/// The top-level `id`, `parentId` and `type` of a line that starts like a JSON object but does not
/// parse, found by a tolerant scan that needs neither valid UTF-8 nor a complete line.
pub(crate) fn bare_entry(bytes: &[u8]) -> Option<BareEntry> {
    let b = bytes.trim_ascii_start();
    if b.first() != Some(&b'{') {
        return None;
    }
    let mut fields = TopFields::default();
    let mut depth = 0usize;
    let mut expect_key = false;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'{' | b'[' => {
                depth += 1;
                expect_key = depth == 1;
                i += 1;
            }
            b'}' | b']' => {
                if depth <= 1 {
                    break;
                }
                depth -= 1;
                i += 1;
            }
            b',' => {
                expect_key = depth == 1;
                i += 1;
            }
            b'"' => {
                let (key, end) = string_at(b, i);
                i = end;
                if depth == 1 && expect_key {
                    expect_key = false;
                    i = fields.read_value(key, b, i);
                }
            }
            _ => i += 1,
        }
    }
    let id = fields.id.filter(|id| !id.is_empty())?;
    Some(BareEntry {
        id,
        parent_id: fields.parent_id,
        entry_type: fields.entry_type.unwrap_or_default(),
    })
}

#[derive(Default)]
struct TopFields {
    id: Option<String>,
    parent_id: Option<String>,
    entry_type: Option<String>,
}

impl TopFields {
    /// Reads the value after a top-level key when it is one of ours and a complete string;
    /// returns where scanning goes on.
    fn read_value(&mut self, key: Option<&[u8]>, b: &[u8], mut i: usize) -> usize {
        let slot = match key {
            Some(b"id") => &mut self.id,
            Some(b"parentId") => &mut self.parent_id,
            Some(b"type") => &mut self.entry_type,
            _ => return i,
        };
        while b.get(i).is_some_and(u8::is_ascii_whitespace) {
            i += 1;
        }
        if b.get(i) != Some(&b':') {
            return i;
        }
        i += 1;
        while b.get(i).is_some_and(u8::is_ascii_whitespace) {
            i += 1;
        }
        if b.get(i) != Some(&b'"') {
            return i;
        }
        let start = i;
        let (value, end) = string_at(b, i);
        if value.is_some() {
            *slot = b
                .get(start..end)
                .and_then(|quoted| serde_json::from_slice::<String>(quoted).ok());
        }
        end
    }
}

/// The raw content of the string whose opening quote is at `at` (`None` when the line ends
/// inside it), and the index after its closing quote.
fn string_at(b: &[u8], at: usize) -> (Option<&[u8]>, usize) {
    let mut i = at + 1;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'"' => return (b.get(at + 1..i), i + 1),
            _ => i += 1,
        }
    }
    (None, b.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bare_entries_of_damaged_lines() {
        let cut =
            br#"{"type":"message","id":"a1","parentId":"u1","message":{"content":[{"id":"x","#;
        assert_eq!(
            bare_entry(cut),
            Some(BareEntry {
                id: "a1".into(),
                parent_id: Some("u1".into()),
                entry_type: "message".into()
            })
        );
        // Nested ids do not count; keys after a nested value do.
        let late =
            b"{\"data\":{\"id\":\"inner\"},\"text\":\"\xff\",\"id\":\"top\",\"parentId\":null}";
        let s = bare_entry(late).unwrap();
        assert_eq!((s.id.as_str(), s.parent_id), ("top", None));
        assert_eq!(bare_entry(br#"[{"id":"a"}]"#), None);
        assert_eq!(bare_entry(b"not json"), None);
        assert_eq!(bare_entry(br#"{"type":"message","id":"unterminat"#), None);
    }
}
