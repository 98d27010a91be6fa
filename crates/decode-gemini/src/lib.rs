//! Decodes the chat recordings of [Gemini CLI] for notesoup-history: where they are
//! (`<home>/tmp/<project>/chats/session-<minute>-<id8>.jsonl`, sub-agents in
//! `chats/<parent id>/<id>.jsonl`, the single-JSON `.json` before April 2026), how a file
//! becomes events, which project it belongs to and how to resume it.
//!
//! A recording is not a list of events but a log to *replay*, as Gemini CLI's loader does: a
//! message record upserts by `id` (an assistant message is written again once its tools ran,
//! keeping its place), `$set` with `messages` replaces the whole list (every resume writes the
//! full history again), `$rewindTo` drops a message and all after it. What is shown is the list
//! the replay ends with, each message once, read from the line that holds it as shown (a message
//! a `$set` repeats unchanged keeps its earlier line, so seqs stay put when a session is
//! resumed). Events come in the order of those lines; a message rewritten after later ones
//! appears at the line of its last write. It does not read `/chat save` checkpoints, `logs.json`,
//! or the credentials beside them, and it never writes.
//!
//! | message | role | kind |
//! |---|---|---|
//! | `user` text (`displayContent` when present: what was typed) | user | `message` |
//! | `user` `<session_context>` / `<hook_context>` (or the untagged context of older versions), the expanded `content` of a typed prompt | context | `meta` |
//! | `user` `functionResponse` parts not already shown as a tool call's result | tool | `tool_output` / `tool_error` |
//! | `gemini` `thoughts[]` (`subject: description`) | assistant | `reasoning` |
//! | `gemini` text | assistant | `message` |
//! | `gemini` `toolCalls[]`: `name: args`, then its `result` | tool | `tool_call`, `tool_output` / `tool_error` |
//! | `info`, `warning`, `error` | context | `info`, `warning`, `error` |
//!
//! ```
//! use decode_gemini::Gemini;
//! use history_core::Transcript;
//!
//! // In the CLI: `decode_gemini::HARNESS.root(None, &|k| std::env::var_os(k))`.
//! let home = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/gemini/home");
//! let gemini = Gemini::new(home);
//! let file = gemini
//!     .discover()
//!     .into_iter()
//!     .find(|f| f.key.id == "replayed-upserts")
//!     .unwrap();
//! let mut texts = Vec::new();
//! gemini.decode(&file, &mut |event| texts.push(event.text), None).unwrap();
//! // The reply written twice (its text, then with its tool call) is shown once.
//! assert_eq!(texts.iter().filter(|t| *t == "Listing the files now.").count(), 1);
//! ```
//!
//! [Gemini CLI]: https://github.com/google-gemini/gemini-cli
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod discover;
mod legacy;
mod project;
mod render;
mod replay;

use std::io::{BufReader, Cursor, Read};
use std::path::{Path, PathBuf};

use history_core::{DecodeError, Decoded, Event, SessionFile, SessionMeta, Transcript, Walk};
use history_core::{Harness, LineTest, LineTime, Lines, Resume, Timestamp};
use serde_json::Value;

use replay::{Layout, Replay};

/// The recordings under one Gemini CLI home (the directory holding `tmp/`, `~/.gemini`).
#[derive(Clone, Debug)]
pub struct Gemini {
    home: PathBuf,
}

/// Gemini CLI in the registry of harnesses.
pub const HARNESS: Harness = Harness {
    name: "gemini",
    root_flag: "gemini-root",
    root_env: "NOTESOUP_HISTORY_GEMINI_ROOT",
    root_about: "Gemini CLI's home, holding tmp/",
    default_root_about: "$GEMINI_CLI_HOME/.gemini, ~/.gemini",
    default_root: |env| default_root(env),
    // Gemini CLI sets it for the hook commands it runs (its shell tool gets only
    // `GEMINI_CLI=1`).
    session_env: Some("GEMINI_SESSION_ID"),
    open: |root| Box::new(Gemini::new(root)),
};

/// Gemini CLI's own home: `.gemini` in `$GEMINI_CLI_HOME`, else in `$HOME`. Empty variables
/// count as unset. [`HARNESS`]'s root is `NOTESOUP_HISTORY_GEMINI_ROOT` before either.
pub fn default_root(env: impl Fn(&str) -> Option<std::ffi::OsString>) -> Option<PathBuf> {
    let var = |key: &str| env(key).filter(|v| !v.is_empty()).map(PathBuf::from);
    var("GEMINI_CLI_HOME")
        .or_else(|| var("HOME"))
        .map(|home| home.join(".gemini"))
}

impl Gemini {
    /// The recordings under `home`; a home that does not exist is empty.
    pub fn new(home: impl Into<PathBuf>) -> Gemini {
        Gemini { home: home.into() }
    }

    /// Gemini CLI's home.
    pub fn home(&self) -> &Path {
        &self.home
    }

    /// The lines of a recording: the file's, or a legacy document's view.
    fn lines(&self, path: &Path) -> Result<Lines<Box<dyn std::io::BufRead>>, DecodeError> {
        let what = path.display().to_string();
        let reader: Box<dyn std::io::BufRead> = if legacy::is_legacy(path) {
            let bytes = legacy::bytes_of(path).map_err(|source| DecodeError::Io {
                path: what.clone(),
                source,
            })?;
            Box::new(Cursor::new(bytes))
        } else {
            let file = history_core::open_transcript(path)?;
            Box::new(BufReader::with_capacity(history_core::READ_BUFFER, file))
        };
        Ok(Lines::new(reader, what))
    }

    fn project_root(&self, path: &Path) -> Option<String> {
        project::root_of(&self.home, path)
    }
}

impl Transcript for Gemini {
    fn harness(&self) -> &str {
        HARNESS.name
    }

    /// Reads each file's header for its session id; where several files name one id, a
    /// `.jsonl` wins over a legacy `.json`, and a file with something to resume over a resume's
    /// stub.
    fn discover(&self) -> Vec<SessionFile> {
        discover::sessions(&self.home, &Walk::none())
    }

    fn discover_with(&self, walk: &Walk) -> Vec<SessionFile> {
        discover::sessions(&self.home, walk)
    }

    /// Every line is replayed (a line a search rules out may still rewind or replace the list);
    /// only the events of lines `lines` passes are emitted.
    fn decode(
        &self,
        file: &SessionFile,
        sink: &mut dyn FnMut(Event),
        lines: Option<LineTest<'_>>,
    ) -> Result<Decoded, DecodeError> {
        let layout = match legacy::is_legacy(&file.path) {
            true => Layout::Document,
            false => Layout::Records,
        };
        let mut reader = self.lines(&file.path)?;
        let mut replay = Replay::new(layout, lines.is_some());
        while let Some(line) = reader.next_line()? {
            replay.line(&line, lines);
        }
        if !replay.has_header() && replay.is_empty() {
            return Err(DecodeError::Invalid(format!(
                "{} holds no Gemini CLI chat recording",
                file.path.display()
            )));
        }
        replay.emit(sink);
        let summary = replay
            .metadata()
            .get("summary")
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string);
        let meta = SessionMeta {
            summary,
            cwd: self.project_root(&file.path),
            parent: project::place(&file.path)
                .and_then(|p| p.parent)
                .map(|id| format!("{}:{id}", HARNESS.name)),
            ..SessionMeta::default()
        };
        Ok(Decoded {
            branch: None,
            notices: replay.notices(),
            meta,
            lineage: vec![file.path.clone()],
            lineage_open: false,
        })
    }

    /// A legacy `.json` is read as its view (one message a line).
    fn open_raw(&self, path: &Path) -> std::io::Result<Box<dyn Read + '_>> {
        if legacy::is_legacy(path) {
            return Ok(Box::new(Cursor::new(legacy::bytes_of(path)?)));
        }
        Ok(Box::new(history_core::open_untouched(path)?))
    }

    /// A message record's own `timestamp`; a `$set` or a header that carries messages holds
    /// many times, and is not told.
    fn line_time(&self, line: &[u8]) -> LineTime {
        line_time(line)
    }

    /// A message record's events, or those of every message a `$set` or a header holds, in
    /// order (a full decode may show fewer: a result shown before, a message read from an earlier
    /// line).
    fn replay(&self, seq: u64, line: &[u8], sink: &mut dyn FnMut(Event)) -> bool {
        replay::replay_line(seq, line, sink);
        true
    }

    /// A legacy `.json`'s lines are its view's: the view is made again, and cut.
    fn read_at(&self, path: &Path, offset: u64, len: usize) -> Option<std::io::Result<Vec<u8>>> {
        if !legacy::is_legacy(path) {
            return Some(history_core::read_at(path, offset, len));
        }
        Some(legacy::bytes_of(path).and_then(|view| {
            let start = usize::try_from(offset).unwrap_or(usize::MAX);
            view.get(start..start.saturating_add(len))
                .map(<[u8]>::to_vec)
                .ok_or_else(|| std::io::Error::from(std::io::ErrorKind::UnexpectedEof))
        }))
    }

    fn cwd(&self, file: &SessionFile) -> Option<String> {
        self.project_root(&file.path)
    }

    /// `gemini --resume <id>`, run in the project's root: Gemini CLI looks sessions up in the
    /// project of the directory it starts in. Sub-agents' recordings cannot be resumed.
    fn resume(&self, file: &SessionFile) -> Option<Resume> {
        let place = project::place(&file.path)?;
        if place.parent.is_some() {
            return None;
        }
        Some(Resume {
            argv: vec!["gemini".into(), "--resume".into(), file.key.id.clone()],
            cwd: self.project_root(&file.path),
        })
    }
}

fn line_time(line: &[u8]) -> LineTime {
    let Some(record) = replay::parse(line.trim_ascii()) else {
        return LineTime::Unknown;
    };
    let string = |key: &str| record.get(key).and_then(Value::as_str);
    if string("$rewindTo").is_some() || string("id").is_none() {
        return LineTime::Unknown;
    }
    LineTime::of(string("timestamp").and_then(Timestamp::parse_rfc3339))
}
