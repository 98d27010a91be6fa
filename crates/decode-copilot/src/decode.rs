//! One pass over a session's lines: what the session is (its start, its places, its title), the
//! tool calls later lines refer to, and every line's events.

use std::collections::BTreeMap;
use std::path::Path;

use history_core::{snapshot, Snapshot};
use history_core::{top_level, Damage, Line, LineTest, LineTime, Lines, TopLevel};
use history_core::{DecodeError, Decoded, Event, SessionMeta, Timestamp};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::legacy;
use crate::render::{self, object_field, str_field, text_field, Out, Speaker};

/// The newest `session.start` version this decoder knows.
const KNOWN_VERSION: u64 = 1;

/// When a line's events happen ([`history_core::Transcript::line_time`]): at its `timestamp`.
pub(crate) fn line_time(bytes: &[u8]) -> LineTime {
    match top_level(bytes, "timestamp") {
        Some(TopLevel::Str(s)) => match Timestamp::parse_rfc3339(s) {
            Some(t) => LineTime::At(t),
            None => LineTime::Unknown,
        },
        _ => LineTime::Unknown,
    }
}

/// Reads an `events.jsonl` (or a flat log), from a snapshot on when given one; with `keep`,
/// also where it stopped.
pub(crate) fn read_log(
    path: &Path,
    sink: &mut dyn FnMut(Event),
    wanted: Option<LineTest<'_>>,
    from: Option<(&Snapshot, Reader)>,
    keep: bool,
) -> Result<(Decoded, Option<Snapshot>), DecodeError> {
    let mut lines = snapshot::lines_from(path, from.as_ref().map(|f| f.0))?;
    let mut reader = from.map(|f| f.1).unwrap_or_default();
    let mut stop = snapshot::Stop::new(keep);
    while let Some(line) = lines.next_line()? {
        stop.before(&line, &reader, None);
        reader.line(&line, sink, wanted.is_none_or(|w| w(line.bytes)));
    }
    let end = lines.end();
    let snapshot = stop.end(end, &reader, None);
    Ok((reader.finish(path, end.1)?, snapshot))
}

/// Reads a legacy file, as the stream of lines made from it.
pub(crate) fn read_legacy(
    path: &Path,
    sink: &mut dyn FnMut(Event),
    wanted: Option<LineTest<'_>>,
) -> Result<Decoded, DecodeError> {
    let bytes = legacy::stream(path)?;
    let mut lines = Lines::new(std::io::Cursor::new(bytes), path.display().to_string());
    let mut reader = Reader::default();
    while let Some(line) = lines.next_line()? {
        reader.line(&line, sink, wanted.is_none_or(|w| w(line.bytes)));
    }
    let end = lines.end();
    reader.finish(path, end.1)
}

/// One line decoded alone as line `seq` ([`history_core::Transcript::replay`]).
pub(crate) fn replay(seq: u64, bytes: &[u8], sink: &mut dyn FnMut(Event)) {
    let line = Line {
        seq,
        bytes,
        terminated: true,
        offset: 0,
    };
    Reader::default().line(&line, sink, true);
}

/// The envelope every line has, its fields left raw until a rule needs them.
#[derive(serde::Deserialize)]
struct Envelope<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<&'a RawValue>,
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    timestamp: Option<&'a RawValue>,
    #[serde(rename = "agentId", borrow, default)]
    agent_id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    ephemeral: Option<&'a RawValue>,
    #[serde(borrow, default)]
    data: Option<&'a RawValue>,
    #[serde(rename = "timelineItem", borrow, default)]
    item: Option<&'a RawValue>,
    #[serde(rename = "legacySession", borrow, default)]
    session: Option<&'a RawValue>,
}

fn raw_str(raw: Option<&RawValue>) -> Option<String> {
    serde_json::from_str::<String>(raw?.get()).ok()
}

fn raw_object(raw: Option<&RawValue>) -> Option<Map<String, Value>> {
    serde_json::from_str::<Map<String, Value>>(raw?.get()).ok()
}

/// A tool call a later line may refer to.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
struct Call {
    name: String,
}

/// A `session.snapshot_rewind`: the events it took back.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
struct Rewind {
    seq: u64,
    up_to: Option<String>,
    ids: Vec<String>,
}

/// What a pass knows of the lines read so far: all a resumed pass needs of them.
#[derive(Default, serde::Serialize, serde::Deserialize)]
pub(crate) struct Reader {
    /// Lines that held a JSON object.
    objects: u64,
    started: bool,
    legacy: bool,
    version: Option<u64>,
    cwd: Option<String>,
    git_branch: Option<String>,
    title: Option<String>,
    /// Every call named so far, by `toolCallId`: a later start of it is no event of its own,
    /// and its result takes its name.
    calls: BTreeMap<String, Call>,
    /// Each event id with its line, for rewinds, which name events by id.
    ids: Vec<(String, u64)>,
    rewinds: Vec<Rewind>,
    damage: Damage,
}

impl Reader {
    /// Reads one line: always what later lines need; its events only when `full`.
    pub(crate) fn line(&mut self, line: &Line<'_>, sink: &mut dyn FnMut(Event), full: bool) {
        let trimmed = line.bytes.trim_ascii();
        if trimmed.is_empty() {
            return;
        }
        // Only an object is an event: serde would also fill the envelope from an array.
        let envelope = match trimmed.first() {
            Some(b'{') => serde_json::from_slice::<Envelope<'_>>(trimmed).ok(),
            _ => None,
        };
        let Some(envelope) = envelope else {
            self.damage.skip(line);
            return;
        };
        self.objects += 1;
        let mut out = Out {
            seq: line.seq,
            part: 0,
            timestamp: None,
            sink,
        };
        if envelope.session.is_some() {
            self.legacy = true;
            self.started = true;
            return;
        }
        if let Some(item) = raw_object(envelope.item) {
            if full {
                out.timestamp = item
                    .get("timestamp")
                    .and_then(Value::as_str)
                    .and_then(Timestamp::parse_rfc3339);
                render::timeline_item(&item, &mut out);
            }
            return;
        }
        if let Some(id) = raw_str(envelope.id) {
            self.ids.push((id, line.seq));
        }
        let kind = raw_str(envelope.kind).unwrap_or_default();
        // Traces of model calls repeat whole conversations: they are never read.
        if kind.starts_with("model.") {
            return;
        }
        let data = raw_object(envelope.data).unwrap_or_default();
        let emit = self.structure(&kind, &data, line.seq);
        let ephemeral = envelope.ephemeral.is_some_and(|e| e.get() == "true");
        if !full || ephemeral {
            return;
        }
        out.timestamp = raw_str(envelope.timestamp)
            .as_deref()
            .and_then(Timestamp::parse_rfc3339);
        let speaker = match envelope.agent_id {
            Some(raw) if raw.get() != "null" => Speaker::Subagent,
            _ => Speaker::Main,
        };
        self.render(&kind, &data, speaker, emit, &mut out);
    }

    /// Takes in what later lines need of an event; for a tool start, whether it is an event
    /// of its own (no call before it named its `toolCallId`).
    fn structure(&mut self, kind: &str, data: &Map<String, Value>, seq: u64) -> bool {
        match kind {
            "session.start" => {
                self.started = true;
                self.version = data.get("version").and_then(Value::as_u64);
                self.place(data);
            }
            "session.resume" => self.place(data),
            "session.title_changed" => {
                if let Some(title) = text_field(data, "title") {
                    self.title = Some(title.trim().to_string());
                }
            }
            "session.snapshot_rewind" => {
                let ids = data
                    .get("eventIds")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect();
                self.rewinds.push(Rewind {
                    seq,
                    up_to: str_field(data, "upToEventId").map(str::to_string),
                    ids,
                });
            }
            "assistant.message" => {
                for request in render::tool_requests(data) {
                    if let Some(id) = str_field(request, "toolCallId") {
                        let name = str_field(request, "name").unwrap_or("").to_string();
                        self.calls.insert(id.to_string(), Call { name });
                    }
                }
            }
            "tool.execution_start" | "tool.user_requested" => {
                let Some(id) = str_field(data, "toolCallId") else {
                    return true;
                };
                if self.calls.contains_key(id) {
                    return false;
                }
                let name = str_field(data, "toolName").unwrap_or("").to_string();
                self.calls.insert(id.to_string(), Call { name });
            }
            _ => {}
        }
        true
    }

    /// The working directory and branch of a `session.start` or `session.resume`: the latest
    /// one that names them.
    fn place(&mut self, data: &Map<String, Value>) {
        let Some(context) = object_field(data, "context") else {
            return;
        };
        if let Some(cwd) = text_field(context, "cwd") {
            self.cwd = Some(cwd.to_string());
            self.git_branch = text_field(context, "branch").map(str::to_string);
        }
    }

    fn render(
        &self,
        kind: &str,
        data: &Map<String, Value>,
        speaker: Speaker,
        emit: bool,
        out: &mut Out<'_>,
    ) {
        match kind {
            "user.message" => render::user_message(data, speaker, out),
            "assistant.message" => render::assistant_message(data, speaker, out),
            "assistant.reasoning" => render::reasoning(data, speaker, out),
            "tool.execution_start" | "tool.user_requested" if emit => {
                render::started_call(data, out)
            }
            "tool.execution_complete" => {
                let tool = str_field(data, "toolCallId")
                    .and_then(|id| self.calls.get(id))
                    .map(|c| c.name.as_str())
                    .filter(|n| !n.is_empty());
                render::tool_result(data, tool, out);
            }
            "session.compaction_complete" => {
                if let Some(text) = text_field(data, "summaryContent") {
                    out.push(
                        history_core::Role::Context,
                        "summary",
                        text.to_string(),
                        None,
                    );
                }
            }
            "system.message" | "system.notification" => {
                if let Some(text) = text_field(data, "content") {
                    out.push(history_core::Role::Context, "meta", text.to_string(), None);
                }
            }
            "session.info" | "session.warning" => {
                if let Some(text) = text_field(data, "message") {
                    out.push(history_core::Role::Context, "meta", text.to_string(), None);
                }
            }
            "session.error" => {
                if let Some(text) = text_field(data, "message") {
                    out.push(history_core::Role::Context, "error", text.to_string(), None);
                }
            }
            "abort" => {
                if let Some(text) = text_field(data, "reason") {
                    out.push(history_core::Role::Context, "meta", text.to_string(), None);
                }
            }
            _ => {}
        }
    }

    /// What the whole file comes to, given how many lines it has.
    fn finish(self, path: &Path, lines: u64) -> Result<Decoded, DecodeError> {
        if self.objects == 0 {
            let mut why = Vec::new();
            self.damage.report(&mut why);
            let why = if why.is_empty() {
                String::new()
            } else {
                format!(" ({})", why.join("; "))
            };
            return Err(DecodeError::Invalid(format!(
                "{} holds no Copilot CLI session{why}",
                path.display()
            )));
        }
        let mut notices = Vec::new();
        if !self.started {
            notices.push("the file has no session.start event; its events were read".into());
        }
        if let Some(v) = self.version.filter(|&v| v > KNOWN_VERSION) {
            notices.push(format!(
                "session version {v} is newer than this decoder knows ({KNOWN_VERSION})"
            ));
        }
        let branch = self.branch(lines);
        self.damage.report(&mut notices);
        let meta = SessionMeta {
            title: self.title,
            cwd: self.cwd,
            git_branch: self.git_branch,
            ..SessionMeta::default()
        };
        Ok(Decoded {
            branch,
            notices,
            meta,
            lineage: vec![path.to_path_buf()],
            lineage_open: false,
        })
    }

    /// Every line but those a rewind took back; `None` when nothing was rewound.
    fn branch(&self, lines: u64) -> Option<Vec<u64>> {
        if self.rewinds.is_empty() {
            return None;
        }
        let seq_of: BTreeMap<&str, u64> = self
            .ids
            .iter()
            .map(|(id, seq)| (id.as_str(), *seq))
            .collect();
        let mut off = std::collections::BTreeSet::new();
        for rewind in &self.rewinds {
            if rewind.ids.is_empty() {
                // Without a list, the event named and every one after it, up to the rewind.
                if let Some(&first) = rewind.up_to.as_deref().and_then(|id| seq_of.get(id)) {
                    off.extend((first..rewind.seq).filter(|s| *s < rewind.seq));
                }
            } else {
                off.extend(rewind.ids.iter().filter_map(|id| seq_of.get(id.as_str())));
            }
        }
        Some((1..=lines).filter(|s| !off.contains(s)).collect())
    }
}
