//! Where rollouts are: the dated `YYYY/MM/DD/` tree and the older flat layout, file names and
//! the ids they carry.

use std::borrow::Cow;
use std::collections::hash_map::Entry;
use std::collections::{HashMap, HashSet};
use std::fs;
use std::path::{Path, PathBuf};

use history_core::{DirStats, Fingerprint, Kind, SessionFile, SessionKey, Walk};
use rustc_hash::FxHashMap;

use crate::header;
use crate::reader;

/// The harness name in qualified ids (`codex:…`).
pub(crate) const NAME: &str = "codex";

/// The ids a rollout's file name carries.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct RolloutName<'n> {
    /// The thread (session) id.
    pub thread: &'n str,
    /// The rollout id of a file written after `thread/revert` (`<thread>_<rollout>`).
    pub rollout: Option<&'n str>,
}

impl RolloutName<'_> {
    /// The id a `history_base` names this file by.
    pub fn rollout_id(&self) -> &str {
        self.rollout.unwrap_or(self.thread)
    }
}

/// The stem of a rollout file name (`rollout-….jsonl` or `rollout-….jsonl.zst`), without the
/// `rollout-` prefix and the extension.
fn stem(name: &str) -> Option<&str> {
    let rest = name.strip_prefix("rollout-")?;
    rest.strip_suffix(".jsonl")
        .or_else(|| rest.strip_suffix(".jsonl.zst"))
}

fn is_uuid(s: &str) -> bool {
    s.len() == 36
        && s.bytes().enumerate().all(|(i, b)| match i {
            8 | 13 | 18 | 23 => b == b'-',
            _ => b.is_ascii_hexdigit(),
        })
}

/// Parses `rollout-<ts>-<thread>[_<rollout>].jsonl[.zst]`; `None` when the name carries no id.
pub(crate) fn parse_name(name: &str) -> Option<RolloutName<'_>> {
    let stem = stem(name)?;
    let uuid_at = |end: usize| -> Option<&str> {
        let start = end.checked_sub(36)?;
        let id = stem.get(start..end)?;
        (is_uuid(id) && stem.get(..start).is_some_and(|p| p.ends_with('-'))).then_some(id)
    };
    let len = stem.len();
    if len > 37 && stem.as_bytes().get(len - 37) == Some(&b'_') {
        if let (Some(thread), Some(rollout)) = (uuid_at(len - 37), stem.get(len - 36..)) {
            if is_uuid(rollout) {
                return Some(RolloutName {
                    thread,
                    rollout: Some(rollout),
                });
            }
        }
    }
    uuid_at(len).map(|thread| RolloutName {
        thread,
        rollout: None,
    })
}

/// Every rollout file under `root`, in a stable order. Descends only into real directories
/// with numeric names (the `YYYY/MM/DD` tree), never through a symbolic link; where both
/// `x.jsonl` and `x.jsonl.zst` exist, only the plain file is listed.
/// Directories are listed through `walk`: those unchanged since it last saw them are not.
pub(crate) fn rollout_files(root: &Path, walk: &Walk) -> Vec<PathBuf> {
    let mut out = Vec::new();
    collect(root, 0, walk, &mut out);
    out
}

fn collect(dir: &Path, depth: usize, walk: &Walk, out: &mut Vec<PathBuf>) {
    let Some(entries) = walk.entries(dir) else {
        return;
    };
    let mut files = Vec::new();
    let mut dirs = Vec::new();
    for (name, kind) in entries {
        let Some(name) = name.to_str() else {
            continue;
        };
        match kind {
            Kind::Dir if depth < 3 && is_date_part(name) => dirs.push(dir.join(name)),
            Kind::File | Kind::Link
                if stem(name).is_some()
                    && (kind == Kind::File || links_to_file(&dir.join(name))) =>
            {
                files.push(name.to_owned())
            }
            _ => {}
        }
    }
    files.sort();
    let plain: HashSet<&str> = files
        .iter()
        .filter(|n| n.ends_with(".jsonl"))
        .map(String::as_str)
        .collect();
    for name in &files {
        let shadowed = name.strip_suffix(".zst").is_some_and(|p| plain.contains(p));
        if !shadowed {
            out.push(dir.join(name));
        }
    }
    dirs.sort();
    for d in dirs {
        collect(&d, depth + 1, walk, out);
    }
}

fn is_date_part(name: &str) -> bool {
    (1..=4).contains(&name.len()) && name.bytes().all(|b| b.is_ascii_digit())
}

fn links_to_file(path: &Path) -> bool {
    fs::metadata(path).is_ok_and(|m| m.is_file())
}

/// The sessions under `root`, one [`SessionFile`] per thread. A thread that was reverted has
/// several files (`<thread>` and later `<thread>_<rollout>`); its newest, the one named with the
/// latest time, is the session (it inherits what it keeps of the others).
pub(crate) fn sessions(harness: &str, root: &Path, walk: &Walk) -> Vec<SessionFile> {
    let paths = rollout_files(root, walk);
    // Each thread's file so far, by thread: its place in `paths`, and its name's order.
    let mut by_thread: FxHashMap<Cow<'_, str>, (usize, &str)> = FxHashMap::default();
    for (i, path) in paths.iter().enumerate() {
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        let order = stem(name).unwrap_or(name);
        let thread = match parse_name(name) {
            Some(parsed) => Cow::Borrowed(parsed.thread),
            None => match id_from_header(path, walk) {
                Some(id) => Cow::Owned(id),
                None => continue,
            },
        };
        match by_thread.entry(thread) {
            Entry::Occupied(mut seen) if seen.get().1 < order => *seen.get_mut() = (i, order),
            Entry::Occupied(_) => {}
            Entry::Vacant(new) => {
                new.insert((i, order));
            }
        }
    }
    let mut named: Vec<(usize, Cow<'_, str>)> = (by_thread.into_iter())
        .map(|(thread, (i, _))| (i, thread))
        .collect();
    // In the order of their paths, which is the order of the files found.
    named.sort_unstable_by_key(|&(i, _)| i);
    // One stat per file, on every core when there are enough to be worth it.
    let stats = DirStats::new(&paths);
    let mut files = history_core::parallel::filter_map_quick(&named, |(i, thread)| {
        let key = SessionKey::new(harness, thread.to_string());
        Some(SessionFile::from_fingerprint(
            key,
            paths[*i].clone(),
            stats.file(*i)?,
        ))
    });
    files.sort_by_cached_key(|f| history_core::path_key(&f.path));
    files
}

/// The thread id of a file whose name carries none: read from its first line only (through
/// `walk`, which knows it when the file is as it was).
fn id_from_header(path: &Path, walk: &Walk) -> Option<String> {
    let now = Fingerprint::of(path).ok()?;
    walk.id(path, &now, || {
        let mut lines = reader::open_head(path).ok()?;
        let head = header::read(&mut lines, &mut Vec::new()).ok()??;
        head.id().map(str::to_owned)
    })
}

/// Rollout files by the id a `history_base` names them by, built on first use.
pub(crate) struct RolloutIndex {
    roots: Vec<PathBuf>,
    by_id: Option<HashMap<String, PathBuf>>,
}

impl RolloutIndex {
    /// An index over the sessions root and, when the root is a Codex home's `sessions`, the
    /// `archived_sessions` beside it.
    pub fn new(root: &Path) -> RolloutIndex {
        let mut roots = vec![root.to_path_buf()];
        if root.file_name().is_some_and(|n| n == "sessions") {
            if let Some(home) = root.parent() {
                roots.push(home.join("archived_sessions"));
            }
        }
        RolloutIndex { roots, by_id: None }
    }

    /// The file holding rollout `id`, if any.
    pub fn find(&mut self, id: &str) -> Option<&Path> {
        let roots = &self.roots;
        self.by_id
            .get_or_insert_with(|| {
                let mut map = HashMap::new();
                for path in roots.iter().flat_map(|r| rollout_files(r, &Walk::none())) {
                    let name = path
                        .file_name()
                        .and_then(|n| n.to_str())
                        .and_then(parse_name);
                    if let Some(id) = name.map(|n| n.rollout_id().to_owned()) {
                        map.entry(id).or_insert(path);
                    }
                }
                map
            })
            .get(id)
            .map(PathBuf::as_path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: &str = "019c8bfe-ec25-79e0-97d7-bda6a9c575ff";
    const R: &str = "5973b6c0-94b8-487b-a530-2aeb6098ae0e";

    #[test]
    fn names() {
        let name = format!("rollout-2026-02-23T20-34-25-{T}.jsonl");
        let plain = parse_name(&name).unwrap();
        assert_eq!(plain.thread, T);
        assert_eq!(plain.rollout, None);
        let name = format!("rollout-2025-05-20-{T}.jsonl.zst");
        let zst = parse_name(&name).unwrap();
        assert_eq!(zst.thread, T);
        let name = format!("rollout-2026-02-23T20-34-25-{T}_{R}.jsonl");
        let revert = parse_name(&name).unwrap();
        assert_eq!(revert.thread, T);
        assert_eq!(revert.rollout_id(), R);
        assert_eq!(parse_name("rollout-2026-02-23.jsonl"), None);
        assert_eq!(parse_name(&format!("rollout-{T}.jsonl")), None);
        assert_eq!(parse_name(&format!("other-{T}.jsonl")), None);
        assert_eq!(parse_name(&format!("rollout-x-{T}.json")), None);
    }
}
