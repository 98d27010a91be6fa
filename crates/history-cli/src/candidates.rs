//! What completes a `--session` being typed: the ids of the user's newest sessions, found as
//! discovery finds them, without reading a cache, a memo or the index.

use std::ffi::OsStr;

use clap_complete::engine::CompletionCandidate;
use history_core::{Env, Harness, History};

use crate::registry::HARNESSES;

/// How many session ids a completion offers at most: the newest that match what was typed.
const SESSIONS: usize = 50;

/// The candidates for a `--session` being typed: the ids of the newest sessions that start
/// with `typed`, qualified (`claude:70fc…`) unless `typed` is an unqualified id's start.
pub(crate) fn sessions(typed: &OsStr) -> Vec<CompletionCandidate> {
    let env = |name: &str| std::env::var_os(name);
    let typed = typed.to_string_lossy();
    recent_sessions(&HARNESSES, &env, &typed)
        .into_iter()
        .map(CompletionCandidate::new)
        .collect()
}

/// The ids of the newest sessions (at most [`SESSIONS`]) that start with `typed`, as the roots
/// the environment names hold them. It only looks: no cache, memo or index is read or written,
/// and no transcript is decoded.
fn recent_sessions(registry: &[&Harness], env: Env<'_>, typed: &str) -> Vec<String> {
    let history = History::from_registry(registry, &|_| None, env);
    history
        .corpus()
        .discover()
        .into_iter()
        .filter_map(|file| {
            let qualified = file.key.to_string();
            if qualified.starts_with(typed) {
                Some(qualified)
            } else if !typed.is_empty() && file.key.id.starts_with(typed) {
                Some(file.key.id)
            } else {
                None
            }
        })
        .take(SESSIONS)
        .collect()
}
