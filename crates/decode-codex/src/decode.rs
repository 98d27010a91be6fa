//! Decoding one session: its inherited history first (oldest ancestor first), then its own
//! lines, each line parsed once and streamed through the projection.
//!
//! For a search, a line that cannot hold a wanted event is parsed for its structure alone
//! ([`prune`]) and projected without delivering its events, so that the events of the other
//! lines come out exactly as a full decode gives them, and so does the branch a rollback leaves:
//! the file is read once either way.

use std::path::{Path, PathBuf};

use history_core::Origin;
use history_core::{parse_object, Damage, Line, LineTest};
use history_core::{snapshot, Snapshot};
use history_core::{DecodeError, Decoded, Event, SessionMeta};
use serde_json::{Map, Value};

use crate::header::{self, line_len, HistoryBase};
use crate::lineage::{self, Ancestor};
use crate::project::Projection;
use crate::{prune, reader};

/// Decodes the session whose file is `path`, looking for ancestors under `root`. With `wanted`,
/// only the events of lines that pass it are delivered (each one as a full decode delivers it),
/// and the other lines are read for their structure alone.
pub(crate) fn session(
    root: &Path,
    path: &Path,
    sink: &mut dyn FnMut(Event),
    wanted: Option<LineTest<'_>>,
) -> Result<Decoded, DecodeError> {
    let decoded = session_from(root, path, sink, wanted, None, false)?;
    Ok(decoded.map_or_else(Decoded::default, |d| d.0))
}

/// What a decode knows of a session's own lines read so far: all a resumed decode needs of
/// them besides its header, which it reads again.
#[derive(serde::Serialize, serde::Deserialize)]
pub(crate) struct State {
    projection: crate::project::State,
    damage: Damage,
}

/// [`session`], going on from a snapshot (and the state it holds); with `keep`, also where it
/// stopped. A snapshot covers the session's own lines after a complete header, in a plain file,
/// when it inherits nothing: for any other session there is none, and a decode from a
/// snapshot returns `None` at once, having emitted nothing.
///
/// One pass over the session's files, kept whole: the header, the inherited files and the own
/// file share the projection's state, which a split would have to thread through each step.
pub(crate) fn session_from(
    root: &Path,
    path: &Path,
    sink: &mut dyn FnMut(Event),
    wanted: Option<LineTest<'_>>,
    from: Option<(&Snapshot, State)>,
    keep: bool,
) -> Result<Option<(Decoded, Option<Snapshot>)>, DecodeError> {
    let mut own = reader::open(path)?;
    let mut damaged = Vec::new();
    let head = header::read_testing(&mut own, &mut damaged, wanted)?.ok_or_else(|| {
        DecodeError::Invalid(format!(
            "{} has no session_meta line: it is not a Codex rollout",
            path.display()
        ))
    })?;
    let mut notices = Vec::new();
    let ancestors = lineage::ancestors(root, path, &head, &mut notices);
    // Every ancestor that cannot be read ends the chain with a notice.
    let lineage_open = !notices.is_empty();
    let mut files: Vec<PathBuf> = vec![path.to_path_buf()];
    files.extend(ancestors.iter().map(|a| a.path.clone()));

    let resumable = ancestors.is_empty() && head.terminated && !reader::is_compressed(path);
    let keep = keep && resumable;
    let mut damage = Damage::default();
    let mut projection;
    let mut inherited = 0;
    match from {
        Some(_) if !resumable => return Ok(None),
        Some((snapshot, state)) => {
            own = reader::open_at(path, snapshot)?;
            damage = state.damage;
            projection = Projection::resume(sink, state.projection);
        }
        None => {
            projection = Projection::new(sink);
            for ancestor in ancestors.into_iter().rev() {
                inherited += inherit(&mut projection, ancestor, inherited, &mut notices, wanted)?;
            }
            for (n, terminated) in damaged {
                damage.skip(&blank_line(inherited + n, terminated));
            }
            projection.header(inherited + head.seq, &head, head.wanted);
        }
    }
    if keep {
        projection.echoing();
    }
    let mut stop = snapshot::Stop::new(keep);
    let mut complete = true;
    loop {
        let line = match own.next_line() {
            Ok(Some(line)) => line,
            Ok(None) => break,
            Err(DecodeError::Io { source, .. }) => {
                notices.push(format!("the rest of the file could not be read: {source}"));
                complete = false;
                break;
            }
            Err(e) => return Err(e),
        };
        stop.before(
            &line,
            &StateRef::of(&projection, &damage),
            projection.waiting_from(),
        );
        let seq = inherited + line.seq;
        if line.bytes.trim_ascii().is_empty() {
            continue;
        }
        let (value, emit) = parse(line.bytes, wanted);
        match value {
            Some((value, hidden)) => projection.line(seq, value, head.layout, emit, hidden),
            None => damage.skip(&Line { seq, ..line }),
        }
    }
    // What was read past an unreadable stretch is not a place to go on from.
    let snapshot = match complete {
        true => stop.end(
            own.end(),
            &StateRef::of(&projection, &damage),
            projection.waiting_from(),
        ),
        false => None,
    };
    damage.report(&mut notices);

    let outcome = projection.finish();
    let decoded = Decoded {
        branch: outcome.branch,
        notices,
        meta: SessionMeta {
            title: outcome.title,
            summary: None,
            cwd: head.cwd().map(str::to_owned).or(outcome.cwd),
            git_branch: head.git_branch().map(str::to_owned),
            parent: head
                .parent()
                .map(|id| format!("{}:{id}", crate::discover::NAME)),
            ..SessionMeta::default()
        },
        lineage: files,
        lineage_open,
    };
    Ok(Some((decoded, snapshot)))
}

/// [`State`] as it is borrowed from a decode under way: serialized alike.
#[derive(serde::Serialize)]
struct StateRef<'a> {
    projection: &'a crate::project::State,
    damage: &'a Damage,
}

impl<'a> StateRef<'a> {
    fn of(projection: &'a Projection<'_>, damage: &'a Damage) -> StateRef<'a> {
        StateRef {
            projection: projection.state(),
            damage,
        }
    }
}

/// One line decoded alone as line `seq` ([`history_core::Transcript::replay`]): a header's
/// instructions, or the line projected with no other line known, its waiting items settled at
/// once. A line in the shape of a header may be a later copy, which a full decode shows
/// nothing of: the extra events are ignored.
pub(crate) fn replay(seq: u64, bytes: &[u8], sink: &mut dyn FnMut(Event)) {
    let Some(value) = parse_object::<Map<String, Value>>(bytes) else {
        return;
    };
    let mut projection = Projection::new(sink);
    let layout = match value.contains_key("payload") {
        true => header::Layout::Envelope,
        false => header::Layout::Bare,
    };
    let kind = value.get("type").map(Value::as_str);
    let headed = matches!(kind, Some(Some("session_meta")))
        || (kind.is_none() && !value.contains_key("record_type"));
    match headed {
        true => {
            if let Some(head) = header::classify(seq, 0, value, true) {
                projection.header(seq, &head, true);
            }
        }
        false => projection.line(seq, value, layout, true, false),
    }
    projection.finish();
}

/// The files the session whose file is `path` is built from: its own, then its ancestors.
pub(crate) fn files(root: &Path, path: &Path) -> Vec<PathBuf> {
    let mut files = vec![path.to_path_buf()];
    // Most rollouts inherit nothing, which their first line tells without a parse.
    if reader::open_head(path).is_ok_and(|mut lines| header::names_no_base(&mut lines)) {
        return files;
    }
    let head = reader::open_head(path)
        .ok()
        .and_then(|mut lines| header::read(&mut lines, &mut Vec::new()).ok().flatten());
    if let Some(head) = head {
        let ancestors = lineage::ancestors(root, path, &head, &mut Vec::new());
        files.extend(ancestors.into_iter().map(|a| a.path));
    }
    files
}

/// A parsed line, and whether the values a structural read left out of it give it an event.
type Parsed = (Map<String, Value>, bool);

/// A line parsed in full, or for its structure alone when `wanted` rules it out; and whether its
/// events are delivered.
fn parse(bytes: &[u8], wanted: Option<LineTest<'_>>) -> (Option<Parsed>, bool) {
    if wanted.is_none_or(|w| w(bytes)) {
        return (parse_object(bytes).map(|map| (map, false)), true);
    }
    match prune::read(bytes) {
        // Only the whole summary of a compaction tells which earlier message item it stands
        // for (an automatic compaction's reply): compactions are few, and read whole.
        Some((map, _)) if map.get("type").and_then(Value::as_str) == Some("compacted") => {
            (parse_object(bytes).map(|map| (map, false)), false)
        }
        pruned => (pruned, false),
    }
}

fn blank_line(seq: u64, terminated: bool) -> Line<'static> {
    Line {
        seq,
        bytes: &[],
        terminated,
        offset: 0,
    }
}

/// Streams the inherited part of one ancestor, its line n taking seq `offset + n`, and returns
/// how many of its lines are inherited.
fn inherit(
    projection: &mut Projection<'_>,
    ancestor: Ancestor,
    offset: u64,
    notices: &mut Vec<String>,
    wanted: Option<LineTest<'_>>,
) -> Result<u64, DecodeError> {
    let Ancestor {
        path,
        mut lines,
        header,
        damaged,
        base,
    } = ancestor;
    if let (Some(ordinal), Some(limit)) = (header.ordinal, base.end_ordinal) {
        if ordinal >= limit {
            return Ok(0);
        }
    }
    let mut damage = Damage::default();
    for (n, terminated) in damaged {
        damage.skip(&blank_line(offset + n, terminated));
    }
    let mut kept = header.seq;
    let mut end = header.end;
    loop {
        let line = match lines.next_line() {
            Ok(Some(line)) => line,
            Ok(None) => break,
            Err(DecodeError::Io { source, .. }) => {
                notices.push(format!(
                    "inherited history in {} is cut short: {source}",
                    path.display()
                ));
                break;
            }
            Err(e) => return Err(e),
        };
        let start = end;
        end += line_len(line.bytes, line.terminated);
        let blank = line.bytes.trim_ascii().is_empty();
        let (value, emit) = match blank {
            true => (None, false),
            false => parse(line.bytes, wanted),
        };
        let ordinal = value
            .as_ref()
            .and_then(|(v, _)| v.get("ordinal"))
            .and_then(Value::as_u64);
        if past_base(ordinal, start, &base) {
            break;
        }
        kept = line.seq;
        let seq = offset + line.seq;
        match value {
            Some((value, hidden)) => projection.line(seq, value, header.layout, emit, hidden),
            None if blank => {}
            None => damage.skip(&Line { seq, ..line }),
        }
    }
    let mut found = Vec::new();
    damage.report(&mut found);
    let name = path
        .file_name()
        .unwrap_or(path.as_os_str())
        .to_string_lossy();
    notices.extend(
        found
            .into_iter()
            .map(|n| format!("inherited history in {name}: {n}")),
    );
    Ok(kept)
}

/// Whether an ancestor's line (its `ordinal`, and the byte it starts at) lies past the history
/// its child inherits.
fn past_base(ordinal: Option<u64>, start: u64, base: &HistoryBase) -> bool {
    match (ordinal, base.end_ordinal) {
        (Some(ordinal), Some(limit)) => ordinal >= limit,
        _ => base.end_byte.is_some_and(|limit| start >= limit),
    }
}

/// The file and line each of `seqs` of the session whose file is `path` comes from: the seqs of
/// inherited history from the ancestor lines [`inherit`] reads them from (counted the same way),
/// every other seq from the session's own line `seq - K`.
pub(crate) fn origins(root: &Path, path: &Path, seqs: &[u64]) -> Vec<Option<Origin>> {
    let head = reader::open_head(path)
        .ok()
        .and_then(|mut lines| header::read(&mut lines, &mut Vec::new()).ok().flatten());
    // Oldest first: each ancestor and how many of its lines are inherited.
    let mut inherited: Vec<(PathBuf, u64)> = Vec::new();
    if let Some(head) = head {
        let ancestors = lineage::ancestors(root, path, &head, &mut Vec::new());
        for ancestor in ancestors.into_iter().rev() {
            let file = ancestor.path.clone();
            inherited.push((file, inherited_lines(ancestor)));
        }
    }
    seqs.iter()
        .map(|&seq| {
            let mut before = 0;
            for (file, n) in &inherited {
                if seq <= before + n {
                    return (seq > before).then(|| Origin {
                        path: file.clone(),
                        line: seq - before,
                    });
                }
                before += n;
            }
            (seq > before).then(|| Origin {
                path: path.to_path_buf(),
                line: seq - before,
            })
        })
        .collect()
}

/// How many lines of an ancestor its child inherits: what [`inherit`] returns, without
/// decoding them.
fn inherited_lines(ancestor: Ancestor) -> u64 {
    let Ancestor {
        mut lines,
        header,
        base,
        ..
    } = ancestor;
    if let (Some(ordinal), Some(limit)) = (header.ordinal, base.end_ordinal) {
        if ordinal >= limit {
            return 0;
        }
    }
    let mut kept = header.seq;
    let mut end = header.end;
    while let Ok(Some(line)) = lines.next_line() {
        let start = end;
        end += line_len(line.bytes, line.terminated);
        // Only an ordinal limit needs the line parsed.
        let ordinal = match base.end_ordinal {
            Some(_) if !line.bytes.trim_ascii().is_empty() => {
                parse_object::<Map<String, Value>>(line.bytes)
                    .and_then(|v| v.get("ordinal").and_then(Value::as_u64))
            }
            _ => None,
        };
        if past_base(ordinal, start, &base) {
            break;
        }
        kept = line.seq;
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reader::OPENED;

    /// Decodes a fixture, counting the files opened on the way.
    fn decode_counting(
        name: &str,
        wanted: Option<LineTest<'_>>,
    ) -> (usize, Vec<Event>, Option<Vec<u64>>) {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/codex/sessions");
        let path = root.join(name);
        let before = OPENED.get();
        let mut events = Vec::new();
        let decoded = session(&root, &path, &mut |e| events.push(e), wanted).unwrap();
        (OPENED.get() - before, events, decoded.branch)
    }

    #[test]
    fn a_search_reads_a_rolled_back_session_once() {
        let name =
            "2026/03/05/rollout-2026-03-05T11-00-00-019c9d00-4444-7000-8000-000000000004.jsonl";
        let (opened, events, branch) = decode_counting(name, None);
        assert_eq!(opened, 1);
        assert!(branch.is_some(), "the fixture has a rollback");
        let some = |line: &[u8]| line.windows(9).any(|w| w == b"rephrased");
        for (test, what) in [
            (&some as LineTest<'_>, "some lines"),
            (&|_: &[u8]| false, "no line"),
            (&|_: &[u8]| true, "every line"),
        ] {
            let (searched, found, searched_branch) = decode_counting(name, Some(test));
            assert_eq!(searched, opened, "{what}: files opened");
            assert_eq!(searched_branch, branch, "{what}: branch");
            assert!(found.iter().all(|e| events.contains(e)), "{what}: events");
        }
    }
}
