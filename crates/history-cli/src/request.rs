//! The requests the core answers, from the arguments of a command line or of a tool call, and
//! the version that the cache's and the index's entries are written under.

use history_cache::DECODER_VERSION;
use history_core::{
    parse_bound, Cursor, FindRequest, HistoryError, ListRequest, Place, ReadRequest, Role,
    Timestamp,
};

use crate::args::{FindArgs, ListArgs, ReadArgs};

/// The cache's and the index's entry version: the decoders' declared version and this very
/// build (the executable's size and modification time), so that entries written by any other
/// build of a decoder are misses even when nobody remembered to bump the declared version.
pub(crate) fn cache_version() -> String {
    let build = std::env::current_exe()
        .and_then(std::fs::metadata)
        .map(|m| {
            let modified = m
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos());
            format!("{}-{modified}", m.len())
        })
        .unwrap_or_default();
    format!("{DECODER_VERSION} build {build}")
}

/// A time bound a flag names.
fn bound(
    flag: &str,
    v: &Option<String>,
    now: Timestamp,
) -> Result<Option<Timestamp>, HistoryError> {
    v.as_deref()
        .map(|s| {
            parse_bound(s, now).ok_or_else(|| {
                HistoryError::usage(format!(
                    "--{flag} {s:?} is not a time (use RFC 3339, YYYY-MM-DD, today, yesterday, or an age like 7d, 3h, 30m, 6mo, 1y)"
                ))
            })
        })
        .transpose()
}

/// The roles `--role` names.
fn roles(names: &[String]) -> Result<Vec<Role>, HistoryError> {
    names
        .iter()
        .map(|r| {
            Role::parse(r).ok_or_else(|| {
                HistoryError::usage(format!(
                    "--role {r:?} is not a role (user, assistant, tool, context)"
                ))
            })
        })
        .collect()
}

/// The core's request for `find`, from its arguments.
pub(crate) fn find_request(args: &FindArgs, budget: usize) -> Result<FindRequest, HistoryError> {
    let now = Timestamp::now();
    Ok(FindRequest {
        text: args.text.join(" "),
        session: args.session.clone(),
        roles: roles(&args.roles)?,
        since: bound("since", &args.since, now)?,
        until: bound("until", &args.until, now)?,
        cwd: args.cwd.as_deref().map(directory).transpose()?,
        limit: args.limit,
        budget,
        events: args.events,
        explain: args.explain,
        after_rank: args.after_rank,
    })
}

/// The core's request for `list`, from its arguments: times, roles and places parsed, `--cwd`
/// taken relative to the directory the command runs in.
pub(crate) fn list_request(args: &ListArgs, budget: usize) -> Result<ListRequest, HistoryError> {
    let now = Timestamp::now();
    Ok(ListRequest {
        session: args.session.clone(),
        queries: args.queries.clone(),
        roles: roles(&args.roles)?,
        since: bound("since", &args.since, now)?,
        until: bound("until", &args.until, now)?,
        before_seq: args.before_seq,
        after_seq: args.after_seq,
        from: args.from.map(Into::into),
        limit: args.limit,
        budget,
        all_branches: args.all_branches,
        before: place("before", &args.before)?,
        after: place("after", &args.after)?,
        cwd: args.cwd.as_deref().map(directory).transpose()?,
    })
}

/// The directory `--cwd` names, relative to the one the command runs in.
fn directory(path: &std::path::Path) -> Result<Place, HistoryError> {
    let base = match std::env::current_dir() {
        Ok(here) => here,
        Err(_) if path.is_absolute() => std::path::PathBuf::from("/"),
        Err(e) => {
            return Err(HistoryError::usage(format!(
                "--cwd {}: the current directory cannot be told ({e})",
                path.display()
            )))
        }
    };
    Ok(Place::new(path, &base))
}

/// A place of a search across sessions, as a recipe gives it: on the command line, or the
/// object of a JSON recipe.
fn place(flag: &str, text: &Option<String>) -> Result<Option<Cursor>, HistoryError> {
    text.as_deref()
        .map(|t| {
            let json = || {
                serde_json::from_str(t)
                    .ok()
                    .and_then(|v| Cursor::from_json(&v))
            };
            Cursor::parse(t).or_else(json).ok_or_else(|| {
                HistoryError::usage(format!(
                    "--{flag} {t:?} is not a place: TIME,SESSION,SEQ,PART or the JSON object a \
                     recipe gives"
                ))
            })
        })
        .transpose()
}

/// The core's request for `read`, from its arguments.
pub(crate) fn read_request(args: &ReadArgs, budget: usize) -> ReadRequest {
    ReadRequest {
        session: args.session.clone(),
        seq: args.seq,
        part: args.part,
        offset_chars: args.offset_chars,
        budget,
    }
}
