//! Replaying a chat recording: the loader's state machine, which turns the file's records into
//! the final list of messages, each remembered with the line it is read from.
//!
//! Records are told apart in the loader's order: a string `$rewindTo` rewinds, a string `id` is
//! a message (upserted by id, keeping its place), an object `$set` updates the metadata (and with
//! a `messages` array replaces the whole list), a `sessionId` with a `projectHash` is a header.

use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use history_core::{Damage, Event, Line, LineTest};
use serde_json::{Map, Value};

use crate::render;

/// Where a message is read from: its line, and its place in an array on that line (0 for a
/// message record, which is the whole line).
type Home = (u64, u32);

/// A message as one record wrote it.
type Message = Rc<Map<String, Value>>;

/// How a file's lines are read.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Layout {
    /// A `.jsonl` recording: every line a record.
    Records,
    /// A legacy `.json` document, seen as its header on line 1 and one message a line after it
    /// ([`crate::legacy`]).
    Document,
}

struct Slot {
    message: Message,
    home: Home,
}

/// What replaying the lines read so far has come to.
pub(crate) struct Replay {
    layout: Layout,
    /// The ids of the message list, in its order.
    order: Vec<String>,
    slots: HashMap<String, Slot>,
    /// Every distinct write of every id ever seen: a message written again unchanged (a `$set`
    /// repeating the whole history after a resume) keeps the line it was first read from, so
    /// that seqs stay put while the file grows.
    written: HashMap<String, Vec<(Message, Home)>>,
    metadata: Map<String, Value>,
    header: bool,
    damage: Damage,
    lost_rewinds: Vec<u64>,
    /// The lines a search's line test passed (all, without one).
    wanted: Option<HashSet<u64>>,
}

impl Replay {
    pub(crate) fn new(layout: Layout, test: bool) -> Replay {
        Replay {
            layout,
            order: Vec::new(),
            slots: HashMap::new(),
            written: HashMap::new(),
            metadata: Map::new(),
            header: false,
            damage: Damage::default(),
            lost_rewinds: Vec::new(),
            wanted: test.then(HashSet::new),
        }
    }

    /// Reads one line; `test` says whether a search wants its events.
    pub(crate) fn line(&mut self, line: &Line<'_>, test: Option<LineTest<'_>>) {
        if let (Some(wanted), Some(test)) = (self.wanted.as_mut(), test) {
            if test(line.bytes) {
                wanted.insert(line.seq);
            }
        }
        let bytes = line.bytes.trim_ascii();
        if bytes.is_empty() {
            return;
        }
        match parse(bytes) {
            Some(record) => self.record(record, line.seq),
            None => self.damage.skip(line),
        }
    }

    fn record(&mut self, mut record: Map<String, Value>, seq: u64) {
        if self.layout == Layout::Document {
            if seq == 1 {
                self.header(record, seq);
            } else if let Some(id) = string(&record, "id") {
                self.upsert(id, record, (seq, 0));
            }
            return;
        }
        if let Some(target) = string(&record, "$rewindTo") {
            self.rewind(&target, seq);
        } else if let Some(id) = string(&record, "id") {
            self.upsert(id, record, (seq, 0));
        } else if let Some(Value::Object(mut set)) = record.shift_remove("$set") {
            if let Some(Value::Array(messages)) = set.shift_remove("messages") {
                self.order.clear();
                self.slots.clear();
                self.upsert_all(messages, seq);
            }
            self.metadata.extend(set);
        } else if string(&record, "sessionId").is_some() && string(&record, "projectHash").is_some()
        {
            self.header(record, seq);
        }
    }

    fn header(&mut self, mut record: Map<String, Value>, seq: u64) {
        self.header = true;
        if let Some(Value::Array(messages)) = record.shift_remove("messages") {
            self.upsert_all(messages, seq);
        }
        self.metadata.extend(record);
    }

    fn upsert_all(&mut self, messages: Vec<Value>, seq: u64) {
        for (index, message) in messages.into_iter().enumerate() {
            if let Value::Object(message) = message {
                if let Some(id) = string(&message, "id") {
                    let index = u32::try_from(index).unwrap_or(u32::MAX);
                    self.upsert(id, message, (seq, index));
                }
            }
        }
    }

    fn upsert(&mut self, id: String, message: Map<String, Value>, home: Home) {
        let writes = self.written.entry(id.clone()).or_default();
        let (message, home) = match writes.iter().find(|(before, _)| **before == message) {
            Some((before, at)) => (Rc::clone(before), *at),
            None => {
                let message = Rc::new(message);
                writes.push((Rc::clone(&message), home));
                (message, home)
            }
        };
        match self.slots.get_mut(&id) {
            Some(slot) => *slot = Slot { message, home },
            None => {
                self.order.push(id.clone());
                self.slots.insert(id, Slot { message, home });
            }
        }
    }

    /// Drops the message `target` and every one after it; an id not in the list drops all, as
    /// Gemini CLI's loader does.
    fn rewind(&mut self, target: &str, seq: u64) {
        let from = match self.order.iter().position(|id| id == target) {
            Some(at) => at,
            None => {
                self.lost_rewinds.push(seq);
                0
            }
        };
        for id in self.order.drain(from..) {
            self.slots.remove(&id);
        }
    }

    /// The final messages, in the list's order.
    fn messages(&self) -> impl Iterator<Item = &Slot> {
        self.order.iter().filter_map(|id| self.slots.get(id))
    }

    /// Whether the list holds a message Gemini CLI would resume (`isResumableMessageRecord`):
    /// a prompt that is not injected or a command, or a reply with text, tool calls or thoughts.
    pub(crate) fn resumable(&self) -> bool {
        self.messages().any(|slot| resumable(&slot.message))
    }

    /// The merged metadata (header and `$set` records).
    pub(crate) fn metadata(&self) -> &Map<String, Value> {
        &self.metadata
    }

    /// Whether the list is empty.
    pub(crate) fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    pub(crate) fn has_header(&self) -> bool {
        self.header
    }

    /// Streams the final list's events into `sink`, in the order of the lines they are read
    /// from (a message's events share its line, numbered by part), only those of wanted lines.
    pub(crate) fn emit(&self, sink: &mut dyn FnMut(Event)) {
        let mut shown = HashSet::new();
        for slot in self.messages() {
            render::tool_result_ids(&slot.message, &mut shown);
        }
        // Rendered in the list's order (a result is shown where it first appears), emitted in
        // the order of the lines.
        let mut homed: Vec<(
            Home,
            usize,
            Option<history_core::Timestamp>,
            Vec<render::Piece>,
        )> = self
            .messages()
            .enumerate()
            .map(|(at, slot)| {
                let time = render::timestamp(&slot.message);
                (
                    slot.home,
                    at,
                    time,
                    render::render(&slot.message, &mut shown),
                )
            })
            .collect();
        homed.sort_by_key(|(home, at, _, _)| (*home, *at));
        let mut part = 0u32;
        let mut line = 0u64;
        for ((seq, _), _, time, pieces) in homed {
            if seq != line {
                line = seq;
                part = 0;
            }
            for piece in pieces {
                if self.wanted.as_ref().is_none_or(|w| w.contains(&seq)) {
                    sink(piece.event(seq, part, time));
                }
                part += 1;
            }
        }
    }

    /// The notices of the lines read.
    pub(crate) fn notices(self) -> Vec<String> {
        let mut notices = Vec::new();
        if !self.header {
            notices.push("the recording has no header (sessionId, projectHash)".into());
        }
        self.damage.report(&mut notices);
        if let Some(seq) = self.lost_rewinds.first() {
            notices.push(format!(
                "line {seq} rewinds to a message that is not in the list: everything before it is \
                 dropped, as Gemini CLI drops it"
            ));
        }
        notices
    }
}

/// The events of one line decoded alone ([`history_core::Transcript::replay`]): its message, or
/// every message of its `$set` or header, each rendered on its own.
pub(crate) fn replay_line(seq: u64, bytes: &[u8], sink: &mut dyn FnMut(Event)) {
    let Some(mut record) = parse(bytes.trim_ascii()) else {
        return;
    };
    let messages: Vec<Map<String, Value>> = if string(&record, "$rewindTo").is_some() {
        Vec::new()
    } else if string(&record, "id").is_some() {
        vec![record]
    } else {
        let list = match record.shift_remove("$set") {
            Some(Value::Object(mut set)) => set.shift_remove("messages"),
            _ => record.shift_remove("messages"),
        };
        match list {
            Some(Value::Array(items)) => items
                .into_iter()
                .filter_map(|m| match m {
                    Value::Object(m) if string(&m, "id").is_some() => Some(m),
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        }
    };
    let mut part = 0u32;
    for message in messages {
        let time = render::timestamp(&message);
        for piece in render::render(&message, &mut HashSet::new()) {
            sink(piece.event(seq, part, time));
            part += 1;
        }
    }
}

/// A line's record: a JSON object (lone UTF-16 surrogates, which JavaScript writes and serde
/// refuses, read as U+FFFD).
pub(crate) fn parse(bytes: &[u8]) -> Option<Map<String, Value>> {
    let repaired = history_raw::json::repair_surrogates(bytes);
    let bytes = repaired.as_deref().unwrap_or(bytes);
    match serde_json::from_slice(bytes).ok()? {
        Value::Object(record) => Some(record),
        _ => None,
    }
}

fn string(record: &Map<String, Value>, key: &str) -> Option<String> {
    record.get(key).and_then(Value::as_str).map(str::to_string)
}

fn resumable(message: &Map<String, Value>) -> bool {
    let text = message
        .get("content")
        .map(render::plain_text)
        .unwrap_or_default();
    let text = text.trim();
    match message.get("type").and_then(Value::as_str) {
        Some("user") => {
            !(text.is_empty()
                || text.starts_with('/')
                || text.starts_with('?')
                || text.starts_with("<session_context>")
                || text.starts_with("<hook_context>"))
        }
        Some("gemini") => {
            let some =
                |key: &str| matches!(message.get(key), Some(Value::Array(a)) if !a.is_empty());
            !text.is_empty() || some("toolCalls") || some("thoughts")
        }
        _ => false,
    }
}
