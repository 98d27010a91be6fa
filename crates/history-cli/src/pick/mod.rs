//! `pick`: a full-screen picker over the same calls as `list` and `find`. Type to search,
//! see the sessions narrow, Enter prints the chosen session's resume command on standard
//! output (the screen is drawn on the terminal itself, so that `$(notesoup-history pick)`
//! works), Esc leaves with nothing.
//!
//! Two threads: the one that owns the screen ([`state::Picker`] fed keys and answers, drawn by
//! [`view::draw`]) and the one that searches ([`search::Searcher`]); each keystroke's search
//! supersedes the one before it, which stops at its next session. `--script` replays keys
//! without a terminal and says how long each took to show results.

pub mod search;
pub mod shell;
pub mod state;
pub mod view;

mod script;
mod tty;
mod ui;

use std::path::Path;

use history_core::Harness;

use crate::args::PickArgs;

use search::Searcher;
use state::{Picker, Scope};
use view::Look;

pub use ui::Outcome;

/// How a run of the picker ended.
pub enum Ended {
    /// On the terminal: how, and whether a search met sessions the index does not hold.
    Picked(Outcome, bool),
    /// Replayed keys: what was measured, as JSON.
    Measured(String),
}

/// Runs `picker` on the terminal, or with the keys of `script` without one. `pager` shows a
/// session in the pager on the terminal.
pub fn run(
    searcher: &Searcher,
    picker: Picker,
    look: Look,
    script: Option<&Path>,
    pager: &dyn Fn(&str) -> std::io::Result<()>,
) -> Result<Ended, String> {
    if let Some(file) = script {
        return script::run(searcher, picker, look, file).map(Ended::Measured);
    }
    tty::run(searcher, picker, look, pager)
        .map(|(outcome, stale)| Ended::Picked(outcome, stale))
        .map_err(|e| format!("pick needs a terminal: {e}"))
}

/// The scopes Tab cycles through: the one the flags name first, then every session, this
/// directory, and each agent's.
pub fn scopes(registry: &[&Harness], args: &PickArgs) -> Vec<Scope> {
    let mut scopes = Vec::new();
    if args.session.is_some() || args.cwd.is_some() {
        let session = args.session.clone().unwrap_or_else(|| "*".into());
        let mut label = match session.as_str() {
            "*" => "every session".to_string(),
            s => s.to_string(),
        };
        if let Some(dir) = &args.cwd {
            label = format!("{label} in {}", dir.display());
        }
        scopes.push(Scope {
            label,
            session,
            cwd: args.cwd.clone(),
        });
    }
    scopes.push(Scope {
        label: "every session".into(),
        session: "*".into(),
        cwd: None,
    });
    scopes.push(Scope {
        label: "this directory".into(),
        session: "*".into(),
        cwd: Some(".".into()),
    });
    for h in registry {
        scopes.push(Scope {
            label: format!("{} only", h.name),
            session: format!("{}:*", h.name),
            cwd: None,
        });
    }
    let mut seen = Vec::new();
    scopes.retain(|s| {
        let key = (s.session.clone(), s.cwd.clone());
        let new = !seen.contains(&key);
        seen.push(key);
        new
    });
    scopes
}

#[cfg(test)]
mod screens;
