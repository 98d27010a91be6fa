//! One pass over a session file: the header, every entry's events, and the tree.

use std::path::Path;

use history_core::{snapshot, Snapshot};
use history_core::{top_level, Damage, Line, LineTest, LineTime, TopLevel};
use history_core::{DecodeError, Event, SessionMeta};
use serde_json::{Map, Value};

use crate::entry::{render, Out};
use crate::fields::Fields;
use crate::salvage;
use crate::tree::{Break, Entry, Growing, Tree};
use crate::Dialect;

/// The newest session version this decoder knows.
const KNOWN_VERSION: u64 = 3;

/// The first line of a session file, `type:"session"` (after Oh My Pi's title slot).
#[derive(Debug, Default, Clone, serde::Serialize, serde::Deserialize)]
pub struct Header {
    /// The session id.
    pub id: Option<String>,
    /// The working directory.
    pub cwd: Option<String>,
    /// `parentSession`, or the older `branchedFrom`: a file path, or (an Oh My Pi fork) a
    /// session id.
    pub parent: Option<String>,
    /// The session version.
    pub version: Option<u64>,
    /// The title Oh My Pi keeps in the header, when it does.
    pub title: Option<String>,
}

impl Header {
    /// The header in a parsed object, if it is one.
    pub fn from_object(object: &Map<String, Value>) -> Option<Header> {
        Header::from_fields(&Fields::of(object))
    }

    /// The header in an object's fields, if it is one.
    fn from_fields(fields: &Fields) -> Option<Header> {
        if fields.kind.as_deref() != Some("session") {
            return None;
        }
        let string = |value: &Option<String>| value.clone().filter(|s| !s.is_empty());
        Some(Header {
            id: string(&fields.id),
            cwd: string(&fields.cwd),
            parent: string(&fields.parent_session).or_else(|| string(&fields.branched_from)),
            version: fields.version,
            title: string(&fields.title),
        })
    }

    /// The header on a line, if its first JSON value is one.
    pub fn from_line(bytes: &[u8]) -> Option<Header> {
        let repaired = salvage::repair_surrogates(bytes);
        let bytes = repaired.as_deref().unwrap_or(bytes);
        let mut values = serde_json::Deserializer::from_slice(bytes).into_iter::<Value>();
        match values.next() {
            Some(Ok(Value::Object(object))) => Header::from_object(&object),
            _ => None,
        }
    }
}

/// When a line's events happen ([`history_core::Transcript::line_time`]): at the time of its
/// objects, when they agree.
pub fn line_time(bytes: &[u8]) -> LineTime {
    // One object whose own `timestamp` is a time: that is its time, whatever its message says.
    if let Some(TopLevel::Str(s)) = top_level(bytes, "timestamp") {
        if let Some(t) = history_core::Timestamp::parse_rfc3339(s) {
            return LineTime::At(t);
        }
    }
    let repaired = salvage::repair_surrogates(bytes);
    let bytes = repaired.as_deref().unwrap_or(bytes);
    let mut time = None;
    for value in serde_json::Deserializer::from_slice(bytes).into_iter::<Value>() {
        let Ok(Value::Object(object)) = value else {
            break;
        };
        let t = crate::entry::timestamp(&object);
        if time.is_some_and(|seen| seen != t) {
            return LineTime::Unknown;
        }
        time = Some(t);
    }
    time.map_or(LineTime::Unknown, LineTime::of)
}

/// Everything one pass over a file yields besides the events it streamed.
pub struct Pass {
    /// The session header, when the file has one.
    pub header: Option<Header>,
    /// The entry tree and its active branch.
    pub tree: Tree,
    /// What the reader should know: damage, a missing header, a broken branch.
    pub notices: Vec<String>,
    /// Title and working directory (the decoder adds what it finds beside the file).
    pub meta: SessionMeta,
}

/// Reads a session file once, streaming every entry's events into `sink` in file order.
///
/// With `wanted`, only the lines it passes are decoded in full; the others are read for their
/// structure alone (header, tree, title, damage) and yield no events. The events of the lines
/// decoded, and the [`Pass`], are what reading every line in full gives.
pub fn read(
    dialect: Dialect,
    path: &Path,
    sink: &mut dyn FnMut(Event),
    wanted: Option<LineTest<'_>>,
) -> Result<Pass, DecodeError> {
    Ok(read_from(dialect, path, sink, wanted, None, false)?.0)
}

/// [`read`] from a snapshot on, with the state it holds; with `keep`, also where it stopped.
pub fn read_from(
    dialect: Dialect,
    path: &Path,
    sink: &mut dyn FnMut(Event),
    wanted: Option<LineTest<'_>>,
    from: Option<(&Snapshot, Reader)>,
    keep: bool,
) -> Result<(Pass, Option<Snapshot>), DecodeError> {
    let mut lines = snapshot::lines_from(path, from.as_ref().map(|f| f.0))?;
    let mut reader = from.map_or_else(|| Reader::new(dialect), |f| f.1);
    let mut stop = snapshot::Stop::new(keep);
    while let Some(line) = lines.next_line()? {
        stop.before(&line, &reader, None);
        if wanted.is_none_or(|w| w(line.bytes)) {
            reader.line(&line, sink);
        } else {
            reader.structure(&line);
        }
    }
    let snapshot = stop.end(lines.end(), &reader, None);
    Ok((reader.finish(path)?, snapshot))
}

/// One line decoded alone as line `seq` ([`history_core::Transcript::replay`]): what
/// [`read`] emits for it, with no line before it known.
pub fn replay(dialect: Dialect, seq: u64, bytes: &[u8], sink: &mut dyn FnMut(Event)) {
    let line = Line {
        seq,
        bytes,
        terminated: true,
        offset: 0,
    };
    Reader::new(dialect).line(&line, sink);
}

/// What a pass knows of the lines read so far: all a resumed pass needs of them (a decoder
/// keeps it in its [`Snapshot`]s).
#[derive(Default, serde::Serialize, serde::Deserialize)]
pub struct Reader {
    dialect: Dialect,
    header: Option<Header>,
    /// Whether any object has been parsed: the header must be the first.
    parsed_any: bool,
    /// Position in pi's parsed-object array (header = 0), which v1 compactions index into.
    index: u64,
    tree: Growing,
    title: Option<String>,
    /// Oh My Pi: the title slot's title, and the latest `title_change` entry's.
    slot_title: Option<String>,
    changed_title: Option<String>,
    damage: Damage,
    /// Lines from which some objects were read before the rest turned out unreadable.
    partial: Vec<u64>,
    extra_headers: Vec<u64>,
}

impl Reader {
    /// A reader of `dialect`'s files, before their first line.
    pub fn new(dialect: Dialect) -> Reader {
        Reader {
            dialect,
            ..Reader::default()
        }
    }

    /// Reads every JSON object on a line: pi writes one, but real files have two glued
    /// together; each is read, and they share the line's seq.
    fn line(&mut self, line: &Line<'_>, sink: &mut dyn FnMut(Event)) {
        if line.bytes.trim_ascii().is_empty() {
            return;
        }
        let mut out = Out {
            dialect: self.dialect,
            seq: line.seq,
            part: 0,
            sink,
        };
        let repaired = salvage::repair_surrogates(line.bytes);
        let bytes = repaired.as_deref().unwrap_or(line.bytes);
        let mut objects = 0;
        let mut clean = true;
        for value in serde_json::Deserializer::from_slice(bytes).into_iter::<Value>() {
            match value {
                Ok(Value::Object(object)) => {
                    objects += 1;
                    self.object(&object, &mut out);
                }
                _ => {
                    clean = false;
                    break;
                }
            }
        }
        self.damaged(line, objects, clean);
    }

    /// What [`Reader::line`] does but emit events: every object on the line is read for the
    /// fields of [`Fields`], every other value checked as a full parse checks it and dropped.
    fn structure(&mut self, line: &Line<'_>) {
        if line.bytes.trim_ascii().is_empty() {
            return;
        }
        let (objects, clean) = simdutf8::basic::from_utf8(line.bytes)
            .ok()
            .and_then(crate::fields::skim)
            .map_or_else(|| crate::fields::read(line.bytes), |all| (all, true));
        let count = objects.len();
        for fields in objects {
            self.fields(fields, line.seq);
        }
        self.damaged(line, count, clean);
    }

    /// Records a line that did not read to its end: skipped (kept as a bare node when it names
    /// an id) when nothing on it was read, partly read otherwise.
    fn damaged(&mut self, line: &Line<'_>, objects: usize, clean: bool) {
        if !clean {
            if objects == 0 {
                self.salvage(line);
                self.damage.skip(line);
            } else {
                self.partial.push(line.seq);
            }
        }
    }

    /// Keeps a damaged entry as a node without events, so that the entries after it still
    /// reach the ones before it.
    fn salvage(&mut self, line: &Line<'_>) {
        if let Some(bare) = salvage::bare_entry(line.bytes) {
            if bare.entry_type != "session" {
                self.tree.push(Entry {
                    seq: line.seq,
                    id: bare.id,
                    parent_id: bare.parent_id,
                    entry_type: bare.entry_type,
                    first_kept_id: None,
                });
            }
        }
    }

    fn object(&mut self, object: &Map<String, Value>, out: &mut Out<'_>) {
        if self.fields(Fields::of(object), out.seq) {
            render(object, out);
        }
    }

    /// Records one object of line `seq` in the structure; whether it is an entry (whose events
    /// are then due).
    fn fields(&mut self, fields: Fields, seq: u64) -> bool {
        if self.is_title_slot(&fields) {
            // Not an entry, and not the first object: the header comes after it.
            self.slot_title = fields.title.filter(|t| !t.trim().is_empty());
            return false;
        }
        let first = !self.parsed_any;
        self.parsed_any = true;
        if let Some(header) = Header::from_fields(&fields) {
            if first {
                self.header = Some(header);
            } else {
                self.extra_headers.push(seq);
            }
            return false;
        }
        self.index += 1;
        let entry = self.entry(fields, seq);
        self.tree.push(entry);
        true
    }

    /// Oh My Pi's title slot: a `type:"title"` object before anything else of the file.
    fn is_title_slot(&self, fields: &Fields) -> bool {
        self.dialect == Dialect::Omp && !self.parsed_any && fields.kind.as_deref() == Some("title")
    }

    /// The entry as a tree node. Entries without an id (all of version 1) get one from their
    /// position, `{index:08x}`, and unless they name a parent, hang off the entry before them:
    /// this is pi's v1 → v2 migration, made deterministic.
    fn entry(&mut self, fields: Fields, seq: u64) -> Entry {
        let entry_type = fields.kind.unwrap_or_default();
        if entry_type == "session_info" {
            // pi's rule: the latest non-empty name anywhere in the file.
            if let Some(name) = fields.name {
                if !name.trim().is_empty() {
                    self.title = Some(name.trim().to_string());
                }
            }
        }
        if entry_type == "title_change" && self.dialect == Dialect::Omp {
            if let Some(title) = fields.title.as_deref().filter(|t| !t.trim().is_empty()) {
                self.changed_title = Some(title.trim().to_string());
            }
        }
        let named_parent = fields.parent_id;
        let (id, parent_id) = match fields.id.filter(|id| !id.is_empty()) {
            Some(id) => (id, named_parent),
            None if fields.has_parent_key => (synthetic_id(self.index), named_parent),
            None => (
                synthetic_id(self.index),
                self.tree.last_id().map(str::to_string),
            ),
        };
        let first_kept_id = fields.first_kept_entry_id.or_else(|| {
            // Version 1: an index into the parsed objects; the header (0) keeps nothing.
            fields
                .first_kept_entry_index
                .filter(|&i| i > 0)
                .map(synthetic_id)
        });
        Entry {
            seq,
            id,
            parent_id,
            entry_type,
            first_kept_id,
        }
    }

    fn finish(self, path: &Path) -> Result<Pass, DecodeError> {
        let mut notices = Vec::new();
        match &self.header {
            None => notices.push("the file has no session header; its entries were read".into()),
            Some(header) => {
                if header.id.is_none() {
                    notices.push("the session header has no id".into());
                }
                if let Some(v) = header.version.filter(|&v| v > KNOWN_VERSION) {
                    notices.push(format!(
                        "session version {v} is newer than this decoder knows ({KNOWN_VERSION})"
                    ));
                }
            }
        }
        if self.header.is_none() && self.tree.is_empty() {
            let mut why = Vec::new();
            self.damage.report(&mut why);
            let why = if why.is_empty() {
                String::new()
            } else {
                format!(" ({})", why.join("; "))
            };
            return Err(DecodeError::Invalid(format!(
                "{} holds no {}{why}",
                path.display(),
                self.dialect.session_noun()
            )));
        }
        self.damage.report(&mut notices);
        if !self.partial.is_empty() {
            notices.push(format!(
                "read only the first object(s) of line(s) {}; the rest is unreadable",
                list(&self.partial)
            ));
        }
        if !self.extra_headers.is_empty() {
            notices.push(format!(
                "ignored repeated session header(s) on line(s) {}",
                list(&self.extra_headers)
            ));
        }
        let (tree, broke) = self.tree.finish();
        match broke {
            Some(Break::Cycle { seq }) => notices.push(format!(
                "the parent links of line {seq} loop back onto the branch; the active branch starts there"
            )),
            Some(Break::MissingParent { seq, parent }) => notices.push(format!(
                "line {seq} names parent {parent:?}, which is not in the file; the active branch starts there"
            )),
            None => {}
        }
        if tree.entries.is_empty() {
            notices.push("the session has no entries yet".into());
        }
        // Oh My Pi rewrites the slot whenever the title changes: it is the newest.
        let title = match self.dialect {
            Dialect::Pi => self.title,
            Dialect::Omp => (self.slot_title.map(|t| t.trim().to_string()))
                .or(self.changed_title)
                .or_else(|| self.header.as_ref().and_then(|h| h.title.clone()))
                .or(self.title),
        };
        let meta = SessionMeta {
            title,
            summary: None,
            cwd: self.header.as_ref().and_then(|h| h.cwd.clone()),
            ..SessionMeta::default()
        };
        Ok(Pass {
            header: self.header,
            tree,
            notices,
            meta,
        })
    }
}

fn synthetic_id(index: u64) -> String {
    format!("{index:08x}")
}

fn list(seqs: &[u64]) -> String {
    let shown: Vec<String> = seqs.iter().take(5).map(u64::to_string).collect();
    let more = if seqs.len() > 5 { ", …" } else { "" };
    format!("{}{more}", shown.join(", "))
}
