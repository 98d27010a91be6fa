//! The search index as the command uses it: where it is, whether it is on, and the `index`,
//! `doctor` and `reindex` commands. Nothing printed here ever holds a query, a token or any
//! text of a transcript: only counts, sizes, paths of the index and reason codes.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use history_core::Known;
use history_core::Projection;
use history_core::{Corpus, Filter, HistoryError, SessionFile};
use history_index::build::rebuild;
use history_index::projection::Index;
use history_index::store::{Check, Store, StoreError};
use serde::Serialize;

use crate::request::cache_version;
use history_core::Env;

/// Whether the index is used, and where it is.
pub struct Settings {
    /// The database, when the index is on and a cache root is known.
    path: Option<PathBuf>,
    /// Whether searches may start a background update (not with `NOTESOUP_HISTORY_INDEX=read`).
    updates: bool,
    version: String,
}

impl Settings {
    /// Off with `--no-index` or `NOTESOUP_HISTORY_INDEX=off`; consulted but never updated by a
    /// search with `NOTESOUP_HISTORY_INDEX=read`; else at `<cache root>/history-search/v1.sqlite`.
    pub fn new(no_index: bool, env: Env<'_>) -> Settings {
        let mode = history_core::env_text(env, "NOTESOUP_HISTORY_INDEX");
        let off = no_index || mode.as_deref() == Some("off");
        Settings {
            path: (!off)
                .then(|| history_cache::cache_root(env))
                .flatten()
                .map(|root| Store::path(&root)),
            updates: mode.as_deref() != Some("read"),
            version: cache_version(),
        }
    }

    /// Whether a search that met unindexed sessions starts a background update.
    pub fn updates_in_background(&self) -> bool {
        self.path.is_some() && self.updates
    }

    /// The index as a search consults it; `None` when it is off or unusable (searches then
    /// read every file, as they would without it). Before the first update there is no
    /// database, and a search does not create one: it is answered by reading every file and,
    /// like any search that met sessions the index does not hold, says so in its notice.
    pub fn projection(&self) -> Option<Box<dyn Projection>> {
        let path = self.path.as_ref()?;
        if !path.exists() {
            return Some(Box::new(NotYet));
        }
        let store = Store::open(path).ok()?;
        Some(Box::new(Index::new(store, self.version.clone()).ok()?))
    }

    fn open(&self, check: Check) -> Result<(Store, &Path), HistoryError> {
        let path = self.path.as_deref().ok_or_else(|| {
            HistoryError::usage("the search index is off (--no-index, NOTESOUP_HISTORY_INDEX=off, or no cache directory)")
        })?;
        let store = Store::open_with(path, check).map_err(|e| {
            HistoryError::usage(format!(
                "the search index at {} cannot be used ({})",
                path.display(),
                e.code()
            ))
        })?;
        Ok((store, path))
    }

    /// `index`: brings the index up to date and says what it did.
    pub fn update(
        &self,
        corpus: &Corpus,
        background: bool,
        json: bool,
    ) -> Result<(String, bool), HistoryError> {
        // What an update can check in milliseconds; the rest is found by the query that reads it.
        self.rebuild(corpus, &|_, _| false, Check::Update, background, json)
    }

    /// Brings the index up to date, indexing again from their start the sessions `again` names.
    fn rebuild(
        &self,
        corpus: &Corpus,
        again: &dyn Fn(&history_core::SessionKey, &Path) -> bool,
        check: Check,
        background: bool,
        json: bool,
    ) -> Result<(String, bool), HistoryError> {
        let (mut store, path) = self.open(check)?;
        let _lock = if background {
            let Some(lock) = lock(path) else {
                return Ok((String::new(), true));
            };
            // A background update yields the machine to whatever the user runs.
            let _ = rustix::process::setpriority_process(None, 10);
            Some(lock)
        } else {
            None
        };
        let bar = (!background && !json && std::io::stderr().is_terminal()).then(|| {
            let bar = indicatif::ProgressBar::new(0);
            bar.set_style(
                indicatif::ProgressStyle::with_template(
                    "indexing {bar:40} {binary_bytes}/{binary_total_bytes} ({eta})",
                )
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
            );
            bar
        });
        let mut progress = |done: u64, total: u64| {
            if let Some(bar) = &bar {
                bar.set_length(total);
                bar.set_position(done);
            }
            true
        };
        let mut updated = rebuild(&mut store, corpus, &self.version, again, &mut progress);
        if let Err(StoreError::Corrupt) = updated {
            // Damage met while updating: the database is moved aside and built again.
            store = store.start_over().map_err(|e| {
                HistoryError::usage(format!(
                    "the search index at {} could not be updated ({})",
                    path.display(),
                    e.code()
                ))
            })?;
            updated = rebuild(&mut store, corpus, &self.version, again, &mut progress);
        }
        if let Some(bar) = &bar {
            bar.finish_and_clear();
        }
        let summary = updated.map_err(|e| {
            HistoryError::usage(format!(
                "the search index at {} could not be updated ({})",
                path.display(),
                e.code()
            ))
        })?;
        if background {
            return Ok((String::new(), true));
        }
        let size = store.stats().map_or(0, |s| s.size_on_disk);
        Ok((report(path, size, &summary, json), true))
    }

    /// `reindex`: indexes every session again from its start, or those under `dirs`, and
    /// brings the rest up to date. Each session's old lines serve queries until its new ones
    /// replace them.
    pub fn reindex(
        &self,
        corpus: &Corpus,
        dirs: &[PathBuf],
        json: bool,
    ) -> Result<(String, bool), HistoryError> {
        let again = |_: &history_core::SessionKey, root: &Path| {
            dirs.is_empty() || dirs.iter().any(|d| root.starts_with(d))
        };
        self.rebuild(corpus, &again, Check::Deep, false, json)
    }

    /// `doctor`: where the index is and what it holds.
    pub fn doctor(&self, json: bool) -> Result<(String, bool), HistoryError> {
        let (store, path) = self.open(Check::Deep)?;
        let s = store.stats().map_err(|e| {
            HistoryError::usage(format!(
                "the search index at {} cannot be read ({})",
                path.display(),
                e.code()
            ))
        })?;
        let doc = Doctor {
            schema_version: 1,
            path: path.display().to_string(),
            size_bytes: s.size_on_disk,
            index_schema: s.schema_version,
            writable: s.writable,
            indexed: s.sessions_indexed,
            failed: s.sessions_failed,
            failures: s.failures,
            lines: s.lines,
            bytes_covered: s.bytes_covered,
            last_update: s.last_update.map(|t| t.to_string()),
            quarantined: s.quarantined,
            moved_aside: store.moved_aside().map(|p| p.display().to_string()),
        };
        if json {
            return Ok((serde_json::to_string(&doc).unwrap_or_default() + "\n", true));
        }
        Ok((doc.text(), true))
    }
}

/// The index before its first update: it knows nothing of any session.
struct NotYet;

impl Projection for NotYet {
    fn known(&self, _: &Corpus, sessions: &[SessionFile], _: &Filter) -> Vec<Known> {
        vec![Known::Unknown; sessions.len()]
    }
}

/// What `doctor` prints: counts, sizes and reason codes only.
#[derive(Serialize)]
struct Doctor {
    schema_version: u32,
    path: String,
    size_bytes: u64,
    index_schema: i64,
    writable: bool,
    indexed: u64,
    failed: u64,
    failures: std::collections::BTreeMap<String, u64>,
    lines: u64,
    bytes_covered: u64,
    last_update: Option<String>,
    quarantined: usize,
    /// Where this check moved the database aside, having found it damaged.
    moved_aside: Option<String>,
}

impl Doctor {
    fn text(&self) -> String {
        let mut out = format!(
            "index: {}{}\nsize: {:.1} MiB, schema {}\nsessions: {} indexed, {} failed; {} lines covering {:.1} MiB of transcripts\nlast update: {}\n",
            self.path,
            if self.writable { "" } else { " (read only: written by a newer build)" },
            self.size_bytes as f64 / 1048576.0,
            self.index_schema,
            self.indexed,
            self.failed,
            self.lines,
            self.bytes_covered as f64 / 1048576.0,
            self.last_update.as_deref().unwrap_or("never"),
        );
        if let Some(moved) = &self.moved_aside {
            out.push_str(&format!(
                "damaged: moved aside as {moved}; `index` builds it again\n"
            ));
        }
        for (reason, n) in &self.failures {
            out.push_str(&format!("  failed: {n} {reason}\n"));
        }
        if self.quarantined > 0 {
            out.push_str(&format!(
                "quarantined databases beside it: {}\n",
                self.quarantined
            ));
        }
        out
    }
}

fn report(path: &Path, size: u64, summary: &history_index::build::Summary, json: bool) -> String {
    if json {
        #[derive(Serialize)]
        struct Doc<'a> {
            schema_version: u32,
            path: String,
            size_bytes: u64,
            #[serde(flatten)]
            summary: &'a history_index::build::Summary,
        }
        let doc = Doc {
            schema_version: 1,
            path: path.display().to_string(),
            size_bytes: size,
            summary,
        };
        return serde_json::to_string(&doc).unwrap_or_default() + "\n";
    }
    format!(
        "{} sessions: {} indexed, {} already fresh, {} failed; {:.1} MiB read in {:.2} s\nthe index at {} takes {:.1} MiB\n",
        summary.sessions,
        summary.indexed,
        summary.fresh,
        summary.failed,
        summary.bytes as f64 / 1048576.0,
        summary.seconds,
        path.display(),
        size as f64 / 1048576.0,
    )
}

/// Holds the update lock next to the database, or `None` when another update holds it.
fn lock(db: &Path) -> Option<std::fs::File> {
    let dir = db.parent()?;
    std::fs::create_dir_all(dir).ok()?;
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(dir.join("index.lock"))
        .ok()?;
    rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockExclusive).ok()?;
    Some(file)
}
