//! What a harness is, declared once by the crate that decodes it: its name, where its files are,
//! how its agent names the current session, and how to open it. Front ends iterate over a list of
//! these descriptors (the registry); none of them names a harness.
//!
//! ```
//! use history_core::{current_session, Harness};
//! use history_core::{DecodeError, Decoded, Event, SessionFile, Transcript};
//!
//! struct Notes(std::path::PathBuf);
//! impl Transcript for Notes {
//!     fn harness(&self) -> &str { "notes" }
//!     fn discover(&self) -> Vec<SessionFile> { Vec::new() }
//!     fn decode(
//!         &self,
//!         _: &SessionFile,
//!         _: &mut dyn FnMut(Event),
//!         _: Option<history_core::LineTest<'_>>,
//!     ) -> Result<Decoded, DecodeError> {
//!         Ok(Decoded::default())
//!     }
//! }
//! const NOTES: Harness = Harness {
//!     name: "notes",
//!     root_flag: "notes-root",
//!     root_env: "NOTES_ROOT",
//!     root_about: "the notes directory",
//!     default_root_about: "~/.notes",
//!     default_root: |env| env("HOME").map(|h| std::path::Path::new(&h).join(".notes")),
//!     session_env: Some("NOTES_SESSION"),
//!     open: |root| Box::new(Notes(root)),
//! };
//! let env = |k: &str| match k {
//!     "HOME" => Some("/home/me".into()),
//!     "NOTES_SESSION" => Some("n1".into()),
//!     _ => None,
//! };
//! assert_eq!(NOTES.root(None, &env), Some("/home/me/.notes".into()));
//! let current = current_session(None, &[&NOTES], &env).unwrap().unwrap();
//! assert_eq!(current.to_string(), "notes:n1");
//! ```

use std::ffi::OsString;
use std::path::PathBuf;

use crate::error::HistoryError;
use crate::model::SessionKey;
use crate::source::Transcript;

/// Looks an environment variable up (pass `|k| std::env::var_os(k)`). Values are `OsString`s
/// because roots are paths, which need not be UTF-8; variables that hold text (a session id, a
/// mode) are read with [`env_text`], which ignores a value that is not UTF-8.
pub type Env<'a> = &'a dyn Fn(&str) -> Option<OsString>;

/// One harness, as its decoder crate declares it.
#[derive(Clone, Copy)]
pub struct Harness {
    /// The name in qualified ids (`claude`).
    pub name: &'static str,
    /// The long option that names the root, without its dashes (`claude-root`).
    pub root_flag: &'static str,
    /// The environment variable that names the root (`NOTESOUP_HISTORY_CLAUDE_ROOT`).
    pub root_env: &'static str,
    /// What the root is, for help (`Claude Code's projects directory`).
    pub root_about: &'static str,
    /// Where [`Harness::default_root`] looks, for help (`$CLAUDE_CONFIG_DIR/projects, ~/.claude/projects`).
    pub default_root_about: &'static str,
    /// The root from the agent's own environment, when neither a flag nor `root_env` names one;
    /// `None` when it cannot be told (no `HOME`).
    pub default_root: fn(Env<'_>) -> Option<PathBuf>,
    /// The variable the agent sets, for the processes it starts, to the id of the session they
    /// run in (`CLAUDE_CODE_SESSION_ID`), where it sets one.
    pub session_env: Option<&'static str>,
    /// A source over a root.
    pub open: fn(PathBuf) -> Box<dyn Transcript>,
}

impl Harness {
    /// The root to read: the flag's value, else `root_env`, else the agent's default. Empty
    /// variables count as unset.
    pub fn root(&self, flag: Option<PathBuf>, env: Env<'_>) -> Option<PathBuf> {
        let root = flag
            .or_else(|| set(env, self.root_env).map(PathBuf::from))
            .or_else(|| (self.default_root)(env))?;
        // Absolute, so that the paths the search index and the overview cache key on are the
        // same from whatever directory a root is named relatively.
        Some(std::path::absolute(&root).unwrap_or(root))
    }
}

impl Harness {
    /// Checks the root the caller named, by `flag` or by [`Harness::root_env`]: a root named
    /// explicitly that is not a directory is a mistake worth stopping for (a typo reads as an
    /// empty history), while the agent's default root may well be missing (no Claude Code on
    /// this machine) and is simply empty.
    pub fn check_named_root(
        &self,
        flag: Option<&std::path::Path>,
        env: Env<'_>,
    ) -> Result<(), HistoryError> {
        let (named, how) = match (flag, set(env, self.root_env)) {
            (Some(path), _) => (path.to_path_buf(), format!("--{}", self.root_flag)),
            (None, Some(var)) => (PathBuf::from(var), self.root_env.to_string()),
            (None, None) => return Ok(()),
        };
        match std::fs::metadata(&named) {
            Ok(m) if m.is_dir() => Ok(()),
            Ok(_) => Err(HistoryError::usage(format!(
                "{how} {}: not a directory",
                named.display()
            ))),
            Err(e) => Err(HistoryError::usage(format!(
                "{how} {}: {}",
                named.display(),
                io_reason(&e)
            ))),
        }
    }
}

/// An I/O error as a short reason, without the `(os error 2)` a person has no use for.
fn io_reason(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such directory".into(),
        std::io::ErrorKind::PermissionDenied => "permission denied".into(),
        _ => e.to_string(),
    }
}

impl std::fmt::Debug for Harness {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Harness").field("name", &self.name).finish()
    }
}

/// A variable's value, unless it is unset or empty.
fn set(env: Env<'_>, name: &str) -> Option<OsString> {
    env(name).filter(|v| !v.is_empty())
}

/// A variable that holds text: its value, unless it is unset, empty or not UTF-8.
pub fn env_text(env: Env<'_>, name: &str) -> Option<String> {
    set(env, name).and_then(|v| v.into_string().ok())
}

/// The session the caller works in: `explicit` (`--current HARNESS:ID`), else
/// `NOTESOUP_CURRENT_SESSION`, else the first harness of `registry` whose agent set its
/// [`Harness::session_env`]; `None` when nothing says.
pub fn current_session(
    explicit: Option<&str>,
    registry: &[&Harness],
    env: Env<'_>,
) -> Result<Option<SessionKey>, HistoryError> {
    if let Some(text) = explicit
        .map(str::to_owned)
        .or_else(|| env_text(env, "NOTESOUP_CURRENT_SESSION"))
    {
        return match text.split_once(':') {
            Some((h, id)) if !h.is_empty() && !id.is_empty() => Ok(Some(SessionKey::new(h, id))),
            _ => Err(HistoryError::usage(format!(
                "the current session must be HARNESS:ID, not {text:?}"
            ))),
        };
    }
    Ok(registry.iter().find_map(|h| {
        let id = env_text(env, h.session_env?)?;
        Some(SessionKey::new(h.name, id))
    }))
}

/// The variable that named the session [`current_session`] finds, when the environment named it
/// rather than `explicit`: `NOTESOUP_CURRENT_SESSION`, or the agent's
/// [`Harness::session_env`]. A front end says so, since a person who did not type the id
/// cannot otherwise tell why only one session was searched.
pub fn current_source(
    explicit: Option<&str>,
    registry: &[&Harness],
    env: Env<'_>,
) -> Option<&'static str> {
    if explicit.is_some() {
        return None;
    }
    if set(env, "NOTESOUP_CURRENT_SESSION").is_some() {
        return Some("NOTESOUP_CURRENT_SESSION");
    }
    registry
        .iter()
        .find_map(|h| h.session_env.filter(|var| set(env, var).is_some()))
}
