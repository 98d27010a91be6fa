//! The model: sessions, their qualified ids, events and roles.

use std::fmt;
use std::path::PathBuf;

use serde::Serialize;

use crate::model::Timestamp;

/// A session's identity: `<harness>:<id>`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, serde::Deserialize)]
pub struct SessionKey {
    /// The harness that wrote the session (`claude`, `codex`, `pi`, or an embedder's own).
    pub harness: String,
    /// The harness's own session id.
    pub id: String,
}

impl SessionKey {
    /// Builds a key.
    pub fn new(harness: impl Into<String>, id: impl Into<String>) -> SessionKey {
        SessionKey {
            harness: harness.into(),
            id: id.into(),
        }
    }
}

impl fmt::Display for SessionKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.harness, self.id)
    }
}

/// Who an event speaks for.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// What a person typed.
    User,
    /// The model's visible reply and its reasoning.
    Assistant,
    /// A tool call's input, a tool's output or error.
    Tool,
    /// Everything injected: system prompts, instructions, summaries, hook output, meta lines.
    Context,
}

impl Role {
    /// All roles, in display order.
    pub const ALL: [Role; 4] = [Role::User, Role::Assistant, Role::Tool, Role::Context];

    /// The role's name as users type it.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
            Role::Context => "context",
        }
    }

    /// Parses a role name.
    pub fn parse(s: &str) -> Option<Role> {
        Role::ALL.into_iter().find(|r| r.as_str() == s)
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One event of a session: one content part of one line of its transcript.
#[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize)]
pub struct Event {
    /// The 1-based line number the event came from; never renumbered.
    pub seq: u64,
    /// The index of this part among the events of the same line.
    pub part: u32,
    /// Who the event speaks for.
    pub role: Role,
    /// Finer detail: `message`, `reasoning`, `tool_call`, `tool_output`, `tool_error`, `summary`, `meta`…
    pub kind: String,
    /// When the line was written, if it says so usably.
    pub timestamp: Option<Timestamp>,
    /// What is searched and shown, generated words included.
    pub text: String,
    /// Whether a person would see it as dialogue.
    pub visible: bool,
    /// For tool calls and results: the tool's name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// With `--all-branches`: whether the event lies on the session's selected branch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub on_active_branch: Option<bool>,
}

impl Event {
    /// The `(seq, part)` position of the event within its session.
    pub fn position(&self) -> (u64, u32) {
        (self.seq, self.part)
    }

    /// Whether it is a prompt the person wrote: a `user` event that is not a command they ran
    /// (a slash command, kind `command`; a shell command in bash mode, kind `shell`), which says
    /// less of what a session is about than the prompt after it.
    pub fn is_prompt(&self) -> bool {
        self.role == crate::Role::User && !matches!(self.kind.as_str(), "command" | "shell")
    }
}

/// A transcript file found by discovery.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionFile {
    /// The session it holds.
    pub key: SessionKey,
    /// The file.
    pub path: PathBuf,
    /// Modification time in nanoseconds since the epoch.
    pub modified: i64,
    /// Size in bytes.
    pub size: u64,
    /// The file's fingerprint as discovery stat'ed it (before reading it), which a freshness
    /// check may take instead of a stat of its own; `None` where it was not taken.
    pub fingerprint: Option<crate::model::Fingerprint>,
}

impl SessionFile {
    /// The file at `path` holding session `key`, as `meta` (its stat, links followed) tells.
    pub fn from_metadata(key: SessionKey, path: PathBuf, meta: &std::fs::Metadata) -> SessionFile {
        Self::from_fingerprint(key, path, crate::model::Fingerprint::of_metadata(meta))
    }

    /// The session file at `path` that `fingerprint` describes, taken by a stat of it.
    pub fn from_fingerprint(
        key: SessionKey,
        path: PathBuf,
        fingerprint: crate::model::Fingerprint,
    ) -> SessionFile {
        SessionFile {
            key,
            path,
            // Before the epoch reads as at it, as `SystemTime::duration_since` has it.
            modified: fingerprint.mtime_ns.max(0),
            size: fingerprint.size,
            fingerprint: Some(fingerprint),
        }
    }
}

/// What a session is about, beyond its events.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct SessionMeta {
    /// The title the harness or user gave it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// A summary the harness wrote.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// The working directory the session started in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// The git branch checked out there, when the harness records it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub git_branch: Option<String>,
    /// The file the session was forked from, when it names one that exists: the session copied
    /// what it kept of it, so it is not part of its [`crate::Transcript::lineage`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub forked_from: Option<PathBuf>,
    /// The session that started this one, qualified (`codex:<thread id>`): a sub-agent names
    /// the thread that spawned it. Its history is not inherited, so it is no part of the lineage.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
}
