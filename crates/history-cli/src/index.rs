//! The search index as the command uses it: where it is, whether it is on, and the `index`,
//! `doctor` and `reindex` commands. Nothing printed here ever holds a query, a token or any
//! text of a transcript: only counts, sizes, paths of the index and reason codes.

use std::fs::File;
use std::io::{IsTerminal, Read};
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

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

    /// Whether searches consult the index (it may not have been built yet).
    pub fn is_on(&self) -> bool {
        self.path.is_some()
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
        open_projection(self.path.as_ref()?, &self.version)
    }

    /// The index as a page of one session, or of one event, consults it: opened only when the
    /// page asks it (a small session is decoded sooner than the index is opened).
    pub fn projection_when_asked(&self) -> Option<Box<dyn Projection>> {
        Some(Box::new(WhenAsked {
            path: self.path.clone()?,
            version: self.version.clone(),
            opened: std::sync::OnceLock::new(),
        }))
    }

    fn open(&self, check: Check) -> Result<(Store, &Path), HistoryError> {
        let path = self.path.as_deref().ok_or_else(|| HistoryError::IndexUnavailable {
            message: "the search index is off: --no-index, NOTESOUP_HISTORY_INDEX=off, or no cache directory (off)".into(),
            reason: "off".into(),
        })?;
        let store =
            Store::open_with(path, check).map_err(|e| unavailable(path, "cannot be used", &e))?;
        Ok((store, path))
    }

    /// `index`: brings the index up to date and says what it did.
    pub fn update(
        &self,
        corpus: &Corpus,
        background: bool,
        json: bool,
    ) -> Result<Answer, HistoryError> {
        // What an update can check in milliseconds; the rest is found by the query that reads it.
        self.rebuild(corpus, &|_, _| false, Check::Update, background, json)
    }

    /// Brings the index up to date, indexing again from their start the sessions `again` names.
    /// One update at a time: a background one gives way silently to another, a foreground one
    /// fails ([`HistoryError::IndexBusy`]). Ctrl-C stops a foreground one at the next session,
    /// keeping what it stored, and it exits 130.
    fn rebuild(
        &self,
        corpus: &Corpus,
        again: &(dyn Fn(&history_core::SessionKey, &Path) -> bool + Sync),
        check: Check,
        background: bool,
        json: bool,
    ) -> Result<Answer, HistoryError> {
        let nothing = || (String::new(), String::new(), 0);
        let (mut store, path) = self.open(check)?;
        let _lock = match lock(path) {
            Ok(lock) => lock,
            Err(_) if background => return Ok(nothing()),
            Err(e) => return Err(e),
        };
        // A background update yields the machine to whatever the user runs; a foreground one
        // hears Ctrl-C.
        let interrupt = match background {
            true => {
                let _ = rustix::process::setpriority_process(None, 10);
                None
            }
            false => Interrupt::install(),
        };
        let bar = (!background && !json && std::io::stderr().is_terminal()).then(progress_bar);
        let mut total = 0;
        let mut progress = |done: u64, all: u64| {
            total = all;
            if let Some(bar) = &bar {
                bar.set_length(all);
                bar.set_position(done);
            }
            !interrupt.as_ref().is_some_and(Interrupt::fired)
        };
        let mut updated = rebuild(&mut store, corpus, &self.version, again, &mut progress);
        if let Err(StoreError::Corrupt) = updated {
            // Damage met while updating: the database is moved aside and built again.
            store =
                (store.start_over()).map_err(|e| unavailable(path, "could not be updated", &e))?;
            updated = rebuild(&mut store, corpus, &self.version, again, &mut progress);
        }
        if let Some(bar) = &bar {
            bar.finish_and_clear();
        }
        let summary = match updated {
            Ok(summary) => summary,
            Err(e) => return Err(failed(store, path, &e)),
        };
        if background {
            return Ok(nothing());
        }
        let size = store.size_on_disk();
        let stdout = match (json, summary.stopped) {
            (false, true) => String::new(),
            _ => report(path, size, &summary, json),
        };
        let (stderr, code) = match summary.stopped {
            true => (interrupted(&summary, total), 130),
            false => (String::new(), 0),
        };
        Ok((stdout, stderr, code))
    }

    /// `reindex`: indexes every session again from its start, or those under `dirs`, and
    /// brings the rest up to date. Each session's old lines serve queries until its new ones
    /// replace them.
    pub fn reindex(
        &self,
        corpus: &Corpus,
        dirs: &[PathBuf],
        json: bool,
    ) -> Result<Answer, HistoryError> {
        let again = |_: &history_core::SessionKey, root: &Path| {
            dirs.is_empty() || dirs.iter().any(|d| root.starts_with(d))
        };
        self.rebuild(corpus, &again, Check::Deep, false, json)
    }

    /// `doctor`: where the index is and what it holds.
    pub fn doctor(&self, json: bool) -> Result<Answer, HistoryError> {
        let (store, path) = self.open(Check::Deep)?;
        let s = store
            .stats()
            .map_err(|e| unavailable(path, "cannot be read", &e))?;
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
            // To the millisecond, as every other time is written.
            last_update: s
                .last_update
                .map(|t| history_core::Timestamp(t.0 - t.0.rem_euclid(1_000_000)).to_string()),
            quarantined: s.quarantined,
            moved_aside: store.moved_aside().map(|p| p.display().to_string()),
        };
        let stdout = match json {
            true => serde_json::to_string(&doc).unwrap_or_default() + "\n",
            false => doc.text(),
        };
        Ok((stdout, String::new(), 0))
    }
}

/// What a person at a terminal sees of an update.
fn progress_bar() -> indicatif::ProgressBar {
    let bar = indicatif::ProgressBar::new(0);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "indexing {bar:40} {binary_bytes}/{binary_total_bytes} ({eta})",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    bar
}

/// The error of an update of the index at `path` that failed with `e`. Its transaction was
/// rolled back, but the log keeps its size: this empties it; on a full disk, where what the
/// log holds of earlier transactions cannot be copied out of it, it gives the log's room back.
fn failed(mut store: Store, path: &Path, e: &StoreError) -> HistoryError {
    let _ = store.checkpoint();
    let place = store.place();
    drop(store);
    let discarded = matches!(e, StoreError::DiskFull) && place.discard_oversized_log();
    let failed = match discarded {
        true => "could not be updated, and was deleted to give back the room its log took",
        false => "could not be updated",
    };
    unavailable(path, failed, e)
}

/// What `index`, `reindex` and `doctor` print on standard output and on standard error, and
/// their exit code: 0, or 130 when Ctrl-C stopped an update.
pub type Answer = (String, String, u8);

/// `e`, met when the index at `path` `failed` ("could not be updated"), as the error the
/// command reports: the cause in words, ending with its reason code, which it also carries.
fn unavailable(path: &Path, failed: &str, e: &StoreError) -> HistoryError {
    let cause = match e {
        StoreError::NotOwned { path, uid } => format!(
            "{} belongs to {}, not to this user (uid {})",
            path.display(),
            user(*uid),
            rustix::process::geteuid().as_raw()
        ),
        e => e.to_string(),
    };
    HistoryError::IndexUnavailable {
        message: format!(
            "the search index at {} {failed}: {cause} ({})",
            path.display(),
            e.code()
        ),
        reason: e.code().to_string(),
    }
}

/// A user by name and id (`user alice (uid 1000)`), or by id alone when it has no name.
fn user(uid: u32) -> String {
    match nix::unistd::User::from_uid(nix::unistd::Uid::from_raw(uid)) {
        Ok(Some(user)) => format!("user {} (uid {uid})", user.name),
        _ => format!("uid {uid}"),
    }
}

/// What an update stopped by Ctrl-C says of how far it got.
fn interrupted(summary: &history_index::build::Summary, total: u64) -> String {
    let mib = |b: u64| b as f64 / 1048576.0;
    format!(
        "interrupted: {} of {} sessions indexed ({:.1} of {:.1} MiB); the rest is indexed next time\n",
        summary.indexed,
        summary.sessions.saturating_sub(summary.fresh),
        mib(summary.bytes),
        mib(total),
    )
}

/// Ctrl-C during a foreground update: the first stops it at the next session, keeping what it
/// stored; a second, or one after the update, ends the process at once, exiting 130 as a
/// shell reports Ctrl-C.
struct Interrupt(Arc<AtomicBool>);

impl Interrupt {
    /// `None` when the handler cannot be installed: Ctrl-C then ends the process as usual.
    fn install() -> Option<Interrupt> {
        use signal_hook::{consts::SIGINT, flag};
        let fired = Arc::new(AtomicBool::new(false));
        flag::register_conditional_shutdown(SIGINT, 130, Arc::clone(&fired)).ok()?;
        if flag::register(SIGINT, Arc::clone(&fired)).is_err() {
            fired.store(true, Ordering::SeqCst);
            return None;
        }
        Some(Interrupt(fired))
    }

    fn fired(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}

impl Drop for Interrupt {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// The index before its first update: it knows nothing of any session.
struct NotYet;

/// The index at `path`, or [`NotYet`] before it exists; `None` when it cannot be used.
fn open_projection(path: &Path, version: &str) -> Option<Box<dyn Projection>> {
    if !path.exists() {
        return Some(Box::new(NotYet));
    }
    let store = Store::open_to_read(path).ok()?;
    Some(Box::new(Index::new(store, version.to_string()).ok()?))
}

/// [`open_projection`] when first asked anything.
struct WhenAsked {
    path: PathBuf,
    version: String,
    opened: std::sync::OnceLock<Option<Box<dyn Projection>>>,
}

impl WhenAsked {
    fn get(&self) -> Option<&dyn Projection> {
        (self.opened)
            .get_or_init(|| open_projection(&self.path, &self.version))
            .as_deref()
    }
}

impl Projection for WhenAsked {
    fn known(&self, corpus: &Corpus, sessions: &[SessionFile], filter: &Filter) -> Vec<Known> {
        match self.get() {
            Some(p) => p.known(corpus, sessions, filter),
            None => vec![Known::Unknown; sessions.len()],
        }
    }

    fn hits(
        &self,
        corpus: &Corpus,
        file: &SessionFile,
        wanted: &history_core::Wanted<'_>,
    ) -> Option<Result<history_core::SessionHits, HistoryError>> {
        self.get()?.hits(corpus, file, wanted)
    }

    fn about(
        &self,
        corpus: &Corpus,
        file: &SessionFile,
    ) -> Option<(history_core::SessionMeta, Vec<String>)> {
        self.get()?.about(corpus, file)
    }

    fn events(
        &self,
        corpus: &Corpus,
        file: &SessionFile,
        all_branches: bool,
    ) -> Option<history_core::SessionEvents> {
        self.get()?.events(corpus, file, all_branches)
    }

    fn texts(
        &self,
        corpus: &Corpus,
        file: &SessionFile,
        events: &mut [history_core::Event],
    ) -> bool {
        self.get().is_some_and(|p| p.texts(corpus, file, events))
    }

    fn lines(
        &self,
        corpus: &Corpus,
        file: &SessionFile,
        seqs: &[u64],
    ) -> Option<(
        history_core::SessionEvents,
        Vec<Option<history_core::Location>>,
    )> {
        self.get()?.lines(corpus, file, seqs)
    }

    fn counted(
        &self,
        corpus: &Corpus,
        sessions: &[SessionFile],
        known: &[Known],
        terms: &[String],
    ) -> Vec<Option<history_core::Counted>> {
        match self.get() {
            Some(p) => p.counted(corpus, sessions, known, terms),
            None => vec![None; sessions.len()],
        }
    }
}

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

/// Takes the update lock beside the database, `index.lock` (0600), and writes this process's
/// id into it; [`HistoryError::IndexBusy`], with the holder's id, when another update has it.
fn lock(db: &Path) -> Result<File, HistoryError> {
    let unusable = |e: std::io::Error| unavailable(db, "could not be updated", &e.into());
    let nofollow = rustix::fs::OFlags::NOFOLLOW.bits() as i32;
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .mode(0o600)
        .custom_flags(nofollow)
        .open(db.with_file_name("index.lock"))
        .map_err(unusable)?;
    if file.metadata().map_err(unusable)?.mode() & 0o077 != 0 {
        file.set_permissions(std::fs::Permissions::from_mode(0o600))
            .map_err(unusable)?;
    }
    match rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => {}
        Err(rustix::io::Errno::WOULDBLOCK) => {
            let mut holder = String::new();
            let _ = (&file).read_to_string(&mut holder);
            return Err(HistoryError::IndexBusy {
                pid: holder.trim().parse().ok(),
            });
        }
        Err(e) => return Err(unusable(e.into())),
    }
    // Which process holds it, for whoever finds it taken; not worth failing the update for.
    let _ = file
        .set_len(0)
        .and_then(|()| file.write_all_at(format!("{}\n", std::process::id()).as_bytes(), 0));
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_names_its_cause_and_ends_with_its_reason() {
        let db = Path::new("/cache/history-search/v1.sqlite");
        let not_ours = StoreError::NotOwned {
            path: "/cache/history-search".into(),
            uid: 0,
        };
        for (e, reason, cause) in [
            (
                StoreError::DiskFull,
                "disk_full",
                ": the disk that holds it is full",
            ),
            (
                StoreError::Replaced,
                "replaced",
                ": it was deleted or replaced while the update ran",
            ),
            (
                not_ours,
                "permission_denied",
                ": /cache/history-search belongs to user root (uid 0), not to this user",
            ),
        ] {
            let error = unavailable(db, "could not be updated", &e);
            assert_eq!(error.code(), "index_unavailable");
            let HistoryError::IndexUnavailable { message, reason: r } = error else {
                unreachable!()
            };
            assert_eq!(r, reason);
            assert!(
                message.starts_with(
                    "the search index at /cache/history-search/v1.sqlite could not be updated: "
                ) && message.contains(cause)
                    && message.ends_with(&format!(" ({reason})")),
                "{message}"
            );
        }
    }
}
