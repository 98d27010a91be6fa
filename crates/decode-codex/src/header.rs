//! A rollout's header: the first `session_meta` (G3/G4) or the `{id, timestamp, instructions}`
//! line of the early generations (G1/G2).

use history_core::{parse_object, LineTest};
use history_core::{DecodeError, Timestamp};
use history_raw::scan::Scan;
use serde_json::{Map, Value};

use crate::reader::LineReader;

/// Which generation of the format a file is written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Layout {
    /// G1/G2: bare response items after the header.
    Bare,
    /// G3/G4: `{timestamp, type, payload}` lines.
    Envelope,
}

/// The line that describes the file.
#[derive(Debug)]
pub(crate) struct Header {
    /// The header's line number in its file.
    pub seq: u64,
    /// How many bytes the file holds up to and including the header line.
    pub end: u64,
    /// The generation.
    pub layout: Layout,
    /// When the line was written (for G1/G2: the thread's start).
    pub timestamp: Option<Timestamp>,
    /// The line's ordinal (paginated files).
    pub ordinal: Option<u64>,
    /// The `session_meta` payload, or the G1/G2 header line itself.
    pub meta: Map<String, Value>,
    /// Whether the header line passed the line test it was read with (none: it did).
    pub wanted: bool,
    /// Whether the header line ends with its newline (only a file's last line may not).
    pub terminated: bool,
}

/// Where a referenced ancestor's history ends (`session_meta.history_base`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct HistoryBase {
    /// The ancestor's rollout id.
    pub rollout: String,
    /// Records with a lower ordinal are inherited.
    pub end_ordinal: Option<u64>,
    /// Records that start before this byte are inherited.
    pub end_byte: Option<u64>,
}

impl Header {
    /// The thread id.
    pub fn id(&self) -> Option<&str> {
        self.meta.get("id")?.as_str()
    }

    /// The working directory.
    pub fn cwd(&self) -> Option<&str> {
        self.meta.get("cwd")?.as_str()
    }

    /// The git branch checked out in the working directory (`git.branch`).
    pub fn git_branch(&self) -> Option<&str> {
        self.meta.get("git")?.get("branch")?.as_str()
    }

    /// The thread that spawned this one, for a sub-agent: `parent_thread_id`, else the
    /// `source.subagent.thread_spawn` that names it.
    pub fn parent(&self) -> Option<&str> {
        self.meta
            .get("parent_thread_id")
            .and_then(Value::as_str)
            .or_else(|| self.thread_spawn()?.get("parent_thread_id")?.as_str())
            .filter(|id| !id.trim().is_empty())
    }

    /// Where a spawned sub-agent sits in its agent tree (`/root/reviewer`): the address the
    /// messages its parent sends it carry (multi-agent v2).
    pub fn agent_path(&self) -> Option<&str> {
        let spawn = self.thread_spawn()?;
        self.meta
            .get("agent_path")
            .and_then(Value::as_str)
            .or_else(|| spawn.get("agent_path")?.as_str())
            .filter(|path| !path.trim().is_empty())
    }

    /// `source.subagent.thread_spawn`: the thread was spawned by another one.
    fn thread_spawn(&self) -> Option<&Value> {
        self.meta
            .get("source")?
            .get("subagent")?
            .get("thread_spawn")
    }

    /// The instructions the thread started with (`base_instructions`, or the `instructions` of
    /// older files).
    pub fn instructions(&self) -> Option<&str> {
        let base = self.meta.get("base_instructions");
        base.and_then(|b| b.get("text").or(Some(b)))
            .and_then(Value::as_str)
            .or_else(|| self.meta.get("instructions")?.as_str())
            .filter(|s| !s.trim().is_empty())
    }

    /// The referenced history this thread continues, if any.
    pub fn history_base(&self) -> Option<HistoryBase> {
        let base = self.meta.get("history_base")?;
        let rollout = base.get("thread_id")?.as_str()?.to_owned();
        Some(HistoryBase {
            rollout,
            end_ordinal: base.get("end_ordinal_exclusive").and_then(Value::as_u64),
            end_byte: base.get("end_byte_offset").and_then(Value::as_u64),
        })
    }
}

/// The number of bytes a line took in its file, newline included.
pub(crate) fn line_len(bytes: &[u8], terminated: bool) -> u64 {
    bytes.len() as u64 + u64::from(terminated)
}

/// Reads lines up to the header. Damaged lines before it are recorded in `damaged` as
/// `(line number, terminated)`. `None` when the first readable line is not a header.
pub(crate) fn read(
    lines: &mut LineReader,
    damaged: &mut Vec<(u64, bool)>,
) -> Result<Option<Header>, DecodeError> {
    read_testing(lines, damaged, None)
}

/// [`read`], noting in [`Header::wanted`] whether the header line passes `test`.
pub(crate) fn read_testing(
    lines: &mut LineReader,
    damaged: &mut Vec<(u64, bool)>,
    test: Option<LineTest<'_>>,
) -> Result<Option<Header>, DecodeError> {
    let mut end = 0;
    while let Some(line) = lines.next_line()? {
        end += line_len(line.bytes, line.terminated);
        if line.bytes.trim_ascii().is_empty() {
            continue;
        }
        let Some(value) = parse_object::<Map<String, Value>>(line.bytes) else {
            damaged.push((line.seq, line.terminated));
            continue;
        };
        let wanted = test.is_none_or(|t| t(line.bytes));
        let terminated = line.terminated;
        return Ok(classify(line.seq, end, value, wanted).map(|h| Header { terminated, ..h }));
    }
    Ok(None)
}

/// Whether the first line of `lines` that is not blank names no history base, told without
/// building its values: a strict scan reads it as one object (so the full parse of [`read`]
/// takes it as the header line or as no header) and `history_base` occurs nowhere in it, neither
/// spelled out nor behind an escape. `false` leaves the question to [`read`].
pub(crate) fn names_no_base(lines: &mut LineReader) -> bool {
    let line = loop {
        match lines.next_line() {
            Ok(Some(line)) if line.bytes.trim_ascii().is_empty() => continue,
            Ok(Some(line)) => break line,
            _ => return false,
        }
    };
    let Ok(text) = std::str::from_utf8(line.bytes.trim_ascii()) else {
        return false;
    };
    let absent = |needle: &[u8]| memchr::memmem::find(text.as_bytes(), needle).is_none();
    text.starts_with('{') && absent(b"history_base") && absent(b"\\u") && {
        let mut scan = Scan::strict(text);
        scan.skip().and_then(|()| scan.finish()).is_some()
    }
}

pub(crate) fn classify(
    seq: u64,
    end: u64,
    mut line: Map<String, Value>,
    wanted: bool,
) -> Option<Header> {
    let timestamp = line
        .get("timestamp")
        .and_then(Value::as_str)
        .and_then(Timestamp::parse_rfc3339);
    let ordinal = line.get("ordinal").and_then(Value::as_u64);
    match line.get("type").map(|t| t.as_str()) {
        Some(Some("session_meta")) => match line.remove("payload") {
            Some(Value::Object(meta)) => Some(Header {
                seq,
                end,
                layout: Layout::Envelope,
                timestamp,
                ordinal,
                meta,
                wanted,
                terminated: true,
            }),
            _ => None,
        },
        None if !line.contains_key("record_type")
            && line.get("id").is_some_and(Value::is_string) =>
        {
            Some(Header {
                seq,
                end,
                layout: Layout::Bare,
                timestamp,
                ordinal,
                meta: line,
                wanted,
                terminated: true,
            })
        }
        _ => None,
    }
}
