//! pi's session format, as the decoders of pi (`decode-pi`) and of Oh My Pi, its fork
//! (`decode-omp`), both read it: the entry tree of a session file and the choice of its active
//! branch, how each entry becomes events, compactions, damaged lines, discovery under a
//! sessions root, and the files a fork names.
//!
//! A [`Dialect`] says whose files are read. pi's are read exactly as pi writes them; Oh My Pi's
//! add a title slot before the header, entry types of their own (`session_init`,
//! `title_change`…), agent-written user messages, an intent argument on every tool call, and
//! sub-agent sessions nested in a session's artifact directory. It is not for writing or
//! migrating sessions, and holds no harness descriptor: each decoder crate declares its own.
//!
//! ```
//! use pi_tree::{read, Dialect};
//!
//! let file = concat!(
//!     env!("CARGO_MANIFEST_DIR"),
//!     "/../../fixtures/pi/sessions/--work-demo--/2026-03-01T10-00-00-000Z_branched.jsonl"
//! );
//! let mut texts = Vec::new();
//! let pass = read(Dialect::Pi, file.as_ref(), &mut |e| texts.push(e.text), None).unwrap();
//! assert_eq!(pass.tree.branch, vec![2, 3, 4, 9, 10, 11, 12]);
//! assert_eq!(texts.last().unwrap(), "B: a write-through cache. Done.");
//! ```
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod decode;
mod discover;
mod entry;
mod fields;
mod salvage;
mod tree;

pub use decode::{line_time, read, read_from, replay, Header, Pass, Reader};
pub use discover::{parent_file, read_header, sessions};
pub use tree::{Entry, Tree};

/// Whose session files are read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Dialect {
    /// pi's (`badlogic/pi-mono`): the header on the first line.
    #[default]
    Pi,
    /// Oh My Pi's (`can1357/oh-my-pi`): a title slot may come before the header.
    Omp,
}

impl Dialect {
    /// The harness name its sessions are qualified with.
    pub fn harness(self) -> &'static str {
        match self {
            Dialect::Pi => "pi",
            Dialect::Omp => "omp",
        }
    }

    /// What one of its files holds, for errors.
    fn session_noun(self) -> &'static str {
        match self {
            Dialect::Pi => "pi session",
            Dialect::Omp => "Oh My Pi session",
        }
    }
}
