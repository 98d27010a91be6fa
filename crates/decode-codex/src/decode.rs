//! Decoding one session: its inherited history first (oldest ancestor first), then its own
//! lines, each line parsed once and streamed through the projection.

use std::path::{Path, PathBuf};

use history_core::source::{parse_object, Damage, Line};
use history_core::{DecodeError, Decoded, Event, SessionMeta};
use serde_json::{Map, Value};

use crate::header::{self, line_len};
use crate::lineage::{self, Ancestor};
use crate::project::Projection;
use crate::reader;

/// Decodes the session whose file is `path`, looking for ancestors under `root`.
pub(crate) fn session(
    root: &Path,
    path: &Path,
    sink: &mut dyn FnMut(Event),
) -> Result<Decoded, DecodeError> {
    let mut own = reader::open(path)?;
    let mut damaged = Vec::new();
    let head = header::read(&mut own, &mut damaged)?.ok_or_else(|| {
        DecodeError::Invalid(format!(
            "{} has no session_meta line: it is not a Codex rollout",
            path.display()
        ))
    })?;
    let mut notices = Vec::new();
    let ancestors = lineage::ancestors(root, path, &head, &mut notices);
    let mut files: Vec<PathBuf> = vec![path.to_path_buf()];
    files.extend(ancestors.iter().map(|a| a.path.clone()));

    let mut projection = Projection::new(sink);
    let mut inherited = 0;
    for ancestor in ancestors.into_iter().rev() {
        inherited += inherit(&mut projection, ancestor, inherited, &mut notices)?;
    }

    let mut damage = Damage::default();
    for (n, terminated) in damaged {
        damage.skip(&blank_line(inherited + n, terminated));
    }
    projection.header(inherited + head.seq, &head);
    loop {
        let line = match own.next_line() {
            Ok(Some(line)) => line,
            Ok(None) => break,
            Err(DecodeError::Io { source, .. }) => {
                notices.push(format!("the rest of the file could not be read: {source}"));
                break;
            }
            Err(e) => return Err(e),
        };
        let seq = inherited + line.seq;
        if line.bytes.trim_ascii().is_empty() {
            continue;
        }
        match parse_object::<Map<String, Value>>(line.bytes) {
            Some(value) => projection.line(seq, value, head.layout),
            None => damage.skip(&Line { seq, ..line }),
        }
    }
    damage.report(&mut notices);

    let outcome = projection.finish();
    Ok(Decoded {
        branch: outcome.branch,
        notices,
        meta: SessionMeta {
            title: outcome.title,
            summary: None,
            cwd: head.cwd().map(str::to_owned).or(outcome.cwd),
        },
        lineage: files,
    })
}

/// The files the session whose file is `path` is built from: its own, then its ancestors.
pub(crate) fn files(root: &Path, path: &Path) -> Vec<PathBuf> {
    let mut files = vec![path.to_path_buf()];
    let head = reader::open(path)
        .ok()
        .and_then(|mut lines| header::read(&mut lines, &mut Vec::new()).ok().flatten());
    if let Some(head) = head {
        let ancestors = lineage::ancestors(root, path, &head, &mut Vec::new());
        files.extend(ancestors.into_iter().map(|a| a.path));
    }
    files
}

fn blank_line(seq: u64, terminated: bool) -> Line<'static> {
    Line {
        seq,
        bytes: &[],
        terminated,
    }
}

/// Streams the inherited part of one ancestor, its line n taking seq `offset + n`, and returns
/// how many of its lines are inherited.
fn inherit(
    projection: &mut Projection<'_>,
    ancestor: Ancestor,
    offset: u64,
    notices: &mut Vec<String>,
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
        let value = (!blank)
            .then(|| parse_object::<Map<String, Value>>(line.bytes))
            .flatten();
        let ordinal = value
            .as_ref()
            .and_then(|v| v.get("ordinal"))
            .and_then(Value::as_u64);
        let past = match (ordinal, base.end_ordinal) {
            (Some(ordinal), Some(limit)) => ordinal >= limit,
            _ => base.end_byte.is_some_and(|limit| start >= limit),
        };
        if past {
            break;
        }
        kept = line.seq;
        let seq = offset + line.seq;
        match value {
            Some(value) => projection.line(seq, value, header.layout),
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
