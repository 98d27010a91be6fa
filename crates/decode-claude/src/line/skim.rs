//! [`GraphLine`] read with a [`Scan`] rather than serde: many times faster over the long texts
//! that make up most of a transcript, and the same result for every line it accepts. A line it
//! does not accept (escapes in a structural field, a repeated field, a number where serde would
//! check its range, anything unusual) is left to serde.

use history_raw::scan::{Literal, Scan};
use serde::de::IgnoredAny;
use serde_json::Value;

use super::{BlockIds, Blocks, GraphLine, GraphMessage, ValueAsStr};

impl GraphLine {
    /// A line read for its place in the graph, if the scan can read it as serde would.
    pub(crate) fn skim(text: &str) -> Option<GraphLine> {
        let mut line = GraphLine::default();
        let mut seen = Fields::default();
        let mut scan = Scan::new(text);
        scan.object(|scan, key| {
            seen.first(key)?;
            match key {
                "type" => line.kind = string(scan)?,
                "uuid" => line.uuid = string(scan)?,
                "parentUuid" => line.parent_uuid = string(scan)?,
                "logicalParentUuid" => line.logical_parent_uuid = string(scan)?,
                "isSidechain" => line.is_sidechain = boolean(scan)?,
                "isMeta" => line._is_meta = boolean(scan)?,
                "isCompactSummary" => line._is_compact_summary = boolean(scan)?,
                "teamName" => line.team_name = present(scan)?,
                "timestamp" => line._timestamp = string(scan)?,
                "message" => line.message = message(scan)?,
                "subtype" => line._subtype = string(scan)?,
                "content" => line._content = present(scan)?,
                "attachment" => line._attachment = present(scan)?,
                "summary" => line.summary = string_value(scan)?,
                "customTitle" => line.custom_title = string_value(scan)?,
                "aiTitle" => line.ai_title = string_value(scan)?,
                "cwd" => line.cwd = string(scan)?,
                "gitBranch" => line.git_branch = string(scan)?,
                // Compaction boundaries are few, and their metadata is left to serde.
                "compactMetadata" => return None,
                _ => scan.skip()?,
            }
            Some(())
        })?;
        scan.finish()?;
        Some(line)
    }
}

/// The fields serde's derive reads (it refuses one given twice) that have been seen, a bit each.
#[derive(Default)]
struct Fields(u32);

impl Fields {
    /// `None` if `key` is a field already seen.
    fn first(&mut self, key: &str) -> Option<()> {
        let bit = match key {
            "type" => 0,
            "uuid" => 1,
            "parentUuid" => 2,
            "logicalParentUuid" => 3,
            "isSidechain" => 4,
            "isMeta" => 5,
            "isCompactSummary" => 6,
            "teamName" => 7,
            "timestamp" => 8,
            "message" => 9,
            "subtype" => 10,
            "content" => 11,
            "attachment" => 12,
            "summary" => 13,
            "customTitle" => 14,
            "aiTitle" => 15,
            "cwd" => 16,
            "gitBranch" => 17,
            _ => return Some(()),
        };
        let seen = self.0 & 1 << bit != 0;
        self.0 |= 1 << bit;
        (!seen).then_some(())
    }
}

/// An `Option<String>`: null or a string without escapes.
fn string(scan: &mut Scan<'_>) -> Option<Option<String>> {
    match scan.peek()? {
        b'"' => scan.plain_str().map(|s| Some(s.to_owned())),
        _ => match scan.literal()? {
            Literal::Null => Some(None),
            Literal::Bool(_) => None,
        },
    }
}

/// A `bool`.
fn boolean(scan: &mut Scan<'_>) -> Option<bool> {
    match scan.literal()? {
        Literal::Bool(b) => Some(b),
        Literal::Null => None,
    }
}

/// An `Option<IgnoredAny>`: null, or any value.
fn present(scan: &mut Scan<'_>) -> Option<Option<IgnoredAny>> {
    if scan.peek()? == b'n' {
        scan.literal()?;
        return Some(None);
    }
    scan.skip().map(|()| Some(IgnoredAny))
}

/// An `Option<Value>` that is null or a string without escapes.
fn string_value(scan: &mut Scan<'_>) -> Option<Option<Value>> {
    string(scan).map(|s| s.map(Value::String))
}

/// A value read as serde's `deserialize_any` reads a scalar it then drops: a number is left to
/// serde, which checks its range.
fn scalar(scan: &mut Scan<'_>) -> Option<()> {
    match scan.peek()? {
        b'"' => scan.skip(),
        _ => scan.literal().map(|_| ()),
    }
}

/// `message`: null or an object with an `id` and `content`.
fn message(scan: &mut Scan<'_>) -> Option<Option<GraphMessage>> {
    if scan.peek()? != b'{' {
        return scan.literal().filter(|l| *l == Literal::Null).map(|_| None);
    }
    let mut message = GraphMessage::default();
    let (mut id, mut content) = (false, false);
    scan.object(|scan, key| {
        let seen = match key {
            "id" => &mut id,
            "content" => &mut content,
            _ => return scan.skip(),
        };
        if std::mem::replace(seen, true) {
            return None;
        }
        match key {
            "id" => message.id = string(scan)?,
            _ => message.content = blocks(scan)?,
        }
        Some(())
    })?;
    Some(Some(message))
}

/// `message.content`: the ids of an array's blocks; nothing for anything else.
fn blocks(scan: &mut Scan<'_>) -> Option<Blocks> {
    match scan.peek()? {
        b'[' => {
            let mut out = Vec::new();
            scan.array(|scan| match scan.peek()? {
                b'{' => block(scan).map(|ids| out.push(ids)),
                b'[' => scan.skip(),
                _ => scalar(scan),
            })?;
            Some(Blocks(out))
        }
        b'{' => scan.skip().map(|()| Blocks::default()),
        _ => scalar(scan).map(|()| Blocks::default()),
    }
}

/// One content block's ids; a repeated key counts with its last value.
fn block(scan: &mut Scan<'_>) -> Option<BlockIds> {
    let mut ids = BlockIds::default();
    scan.object(|scan, key| {
        let slot = match key {
            "type" => &mut ids.kind,
            "id" => &mut ids.id,
            "name" => &mut ids.name,
            "tool_use_id" => &mut ids.tool_use_id,
            _ => return scan.skip(),
        };
        *slot = ValueAsStr(match scan.peek()? {
            b'"' => Some(scan.plain_str()?.to_owned()),
            _ => {
                scan.literal()?;
                None
            }
        });
        Some(())
    })?;
    Some(ids)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every line of the fixtures and the real sample, and damaged copies of them.
    fn lines() -> Vec<String> {
        let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures");
        let mut files = Vec::new();
        let mut dirs = vec![fixtures.join("claude"), fixtures.join("claude-2026")];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(dir).unwrap().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    dirs.push(path);
                } else if path.extension().is_some_and(|e| e == "jsonl") {
                    files.push(path);
                }
            }
        }
        if let Some(extra) = std::env::var_os("NOTESOUP_SKIM_FILE") {
            files.push(extra.into());
        }
        files
            .iter()
            .flat_map(|f| {
                let bytes = std::fs::read(f).unwrap();
                String::from_utf8_lossy(&bytes)
                    .lines()
                    .map(str::to_owned)
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    fn serde(text: &str) -> Option<GraphLine> {
        crate::parse::<GraphLine>(text)
    }

    #[test]
    fn reads_lines_as_serde_does() {
        let lines = lines();
        let skimmed = lines
            .iter()
            .filter(|l| GraphLine::skim(l).is_some())
            .count();
        for line in &lines {
            if let Some(skim) = GraphLine::skim(line) {
                assert_eq!(Some(skim), serde(line), "{line}");
            }
        }
        eprintln!("{skimmed} of {} lines skimmed", lines.len());
        assert!(
            skimmed * 10 > lines.len() * 8,
            "{skimmed} of {}",
            lines.len()
        );
    }

    #[test]
    fn damaged_lines_are_never_read_differently() {
        let mut rng = fastrand::Rng::with_seed(0x2545_f491_4f6c_dd1d);
        let bits = [
            "\"",
            "\\",
            "\u{1}",
            "{",
            "}",
            "[",
            "]",
            ",",
            ":",
            "1e400",
            "nul",
            "-",
            "\\ud800",
            "\\u00e9",
            " ",
            "\"type\":\"user\",",
        ];
        let mut tried = 0;
        for line in lines().iter().filter(|l| l.len() < 20_000) {
            for _ in 0..20 {
                let mut bytes = line.clone().into_bytes();
                let at = rng.usize(..bytes.len() + 1);
                match rng.usize(..3) {
                    0 => {
                        bytes.truncate(at);
                    }
                    1 if at < bytes.len() => {
                        bytes.remove(at);
                    }
                    _ => {
                        let bit = bits[rng.usize(..bits.len())].as_bytes();
                        bytes.splice(at..at, bit.iter().copied());
                    }
                }
                let Ok(text) = String::from_utf8(bytes) else {
                    continue;
                };
                tried += 1;
                if let Some(skim) = GraphLine::skim(&text) {
                    assert_eq!(Some(skim), serde(&text), "{text}");
                }
            }
        }
        assert!(tried > 1000, "{tried}");
    }

    #[test]
    fn repeated_fields_and_escapes_are_left_to_serde() {
        for text in [
            r#"{"uuid":"a","uuid":"b"}"#,
            r#"{"uuid":"a\u0062"}"#,
            r#"{"u\u0075id":"a"}"#,
            r#"{"message":{"id":"m","id":"n"}}"#,
            r#"{"message":{"content":[1e400]}}"#,
        ] {
            assert!(GraphLine::skim(text).is_none(), "{text}");
        }
        let both = r#"{"type":"assistant","uuid":"u","message":{"id":"m","content":[{"type":"tool_use","id":"t","name":"Bash","type":"tool_use"},"x",null,[1]]}}"#;
        assert_eq!(GraphLine::skim(both), serde(both));
        assert!(GraphLine::skim(both).is_some());
    }
}
