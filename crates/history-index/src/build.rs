//! Bringing the projection up to date: every session whose files changed since it was indexed is
//! decoded once, every branch, and each of its lines stored with its location, its time and the
//! tokens of its events' folded text. One session per transaction.

use std::collections::HashSet;
use std::time::Instant;

use history_core::source::{LineTime, Lines};
use history_core::{fold, Corpus, Event, SessionFile, Transcript};

use history_core::SessionKey;

use std::sync::mpsc::SyncSender;

use crate::events;
use crate::store::{
    checkpoint_hash, Fingerprint, LineRecord, SessionRecord, SessionState, Store, StoreError,
    Witness,
};
use crate::tokens::{text_tokens, tokens_text, Token};

/// How many bytes of transcripts a transaction takes in before it commits.
const BATCH_BYTES: u64 = 32 << 20;

/// What an update did.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct Summary {
    /// Sessions found.
    pub sessions: usize,
    /// Sessions (re)indexed now.
    pub indexed: usize,
    /// Sessions already fresh.
    pub fresh: usize,
    /// Sessions that could not be indexed (they are scanned at query time).
    pub failed: usize,
    /// Bytes of transcripts read.
    pub bytes: u64,
    /// Seconds it took.
    pub seconds: f64,
}

/// The files of a session now, its lineage, with each one's fingerprint; `None` when a file
/// cannot be stat'ed.
pub(crate) fn fingerprints(source: &dyn Transcript, file: &SessionFile) -> Option<Files> {
    history_core::fingerprint::fingerprints(&source.lineage(file))
}

/// Whether stored witnesses are exactly these files with these fingerprints.
pub(crate) fn same_files(stored: &[Witness], now: &[(std::path::PathBuf, Fingerprint)]) -> bool {
    stored.len() == now.len()
        && stored
            .iter()
            .zip(now)
            .all(|(w, (path, f))| w.path == *path && w.fingerprint == *f)
}

/// Indexes every session of `corpus` that is not fresh in `store` for `version` (the decoders'
/// version and build), and removes the sessions that are gone. `progress(done, total)` hears,
/// in bytes of transcripts, how far it is after each session.
pub fn update(
    store: &mut Store,
    corpus: &Corpus,
    version: &str,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Summary, StoreError> {
    let start = Instant::now();
    let sessions = corpus.discover();
    let mut summary = Summary {
        sessions: sessions.len(),
        ..Summary::default()
    };
    let live: HashSet<&SessionKey> = sessions.iter().map(|s| &s.key).collect();
    // Another build's entries are all stale: start from nothing rather than replace each.
    let mut rows = store.sessions()?;
    if rows.iter().any(|r| r.decoder_version != version) {
        store.clear()?;
        rows.clear();
    }
    store.retain_sessions(|key, _| live.contains(key))?;
    // Rows of sessions just removed stay here; only live sessions are looked up.
    let rows: std::collections::HashMap<&SessionKey, &crate::store::SessionRow> =
        rows.iter().map(|r| (&r.key, r)).collect();
    // What to index, decided up front, so that one thread decodes while this one writes.
    let mut todo = Vec::new();
    for file in &sessions {
        let Some(source) = corpus.source(&file.key.harness) else {
            continue;
        };
        let Some(before) = fingerprints(source, file) else {
            continue;
        };
        if rows.get(&file.key).is_some_and(|row| {
            row.decoder_version == version && same_files(&row.witnesses, &before)
        }) {
            summary.fresh += 1;
        } else {
            todo.push((file, source, before));
        }
    }
    let (tx, rx) = std::sync::mpsc::sync_channel::<Decoded>(LINES_IN_FLIGHT);
    std::thread::scope(|scope| {
        let todo = &todo;
        scope.spawn(move || {
            for (file, source, before) in todo {
                let end = index_session(*source, file, before.len(), &tx);
                if tx.send(Decoded::End(end)).is_err() {
                    return; // the writer gave up
                }
            }
        });
        write_all(store, todo, rx, version, &mut summary, progress)
    })?;
    store.checkpoint()?;
    summary.seconds = start.elapsed().as_secs_f64();
    Ok(summary)
}

/// What the decoding thread hands the writer: a session's lines, then how it ended.
enum Decoded {
    Line(Line),
    /// The seqs on the selected branch (`None`: every line), or why the session failed.
    End(Result<Option<Vec<u64>>, &'static str>),
}

/// One line, ready to store.
struct Line {
    seq: u64,
    offset: u64,
    len: u64,
    time: LineTime,
    events: Vec<u8>,
    tokens: String,
}

/// A session to index: its file, its source, and its files' fingerprints before reading.
type Todo<'a> = (&'a SessionFile, &'a dyn Transcript, Files);

/// A session's files with their fingerprints.
type Files = Vec<(std::path::PathBuf, Fingerprint)>;

/// How many lines the decoding thread may run ahead of the writer: memory stays bounded.
const LINES_IN_FLIGHT: usize = 1024;

/// Writes the sessions of `todo` as their lines arrive, many sessions to a transaction.
fn write_all(
    store: &mut Store,
    todo: &[Todo<'_>],
    rx: std::sync::mpsc::Receiver<Decoded>,
    version: &str,
    summary: &mut Summary,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<(), StoreError> {
    let size = |files: &Files| files.iter().map(|(_, f)| f.size).sum::<u64>();
    let total = todo.iter().map(|(_, _, before)| size(before)).sum();
    let mut done = 0;
    let mut batch = store.batch()?;
    let mut pending = 0;
    for (file, source, before) in todo {
        progress(done, total);
        done += size(before);
        // Many small sessions to a transaction: FTS5 then merges fewer, smaller segments.
        if pending >= BATCH_BYTES {
            batch.commit()?;
            batch = store.batch()?;
            pending = 0;
        }
        let mut record = SessionRecord {
            key: file.key.clone(),
            root_path: file.path.clone(),
            decoder_version: version.to_string(),
            witnesses: before
                .iter()
                .map(|(path, fingerprint)| Witness {
                    path: path.clone(),
                    fingerprint: *fingerprint,
                    checkpoint: fingerprint.size,
                    checkpoint_hash: checkpoint_hash(path, fingerprint.size).unwrap_or(0),
                })
                .collect(),
        };
        let mut writer = batch.session(&record)?;
        let mut written = Ok(());
        let mut seqs = Vec::new();
        let outcome = loop {
            match rx.recv() {
                Ok(Decoded::Line(l)) if written.is_ok() => {
                    written = writer.line(&LineRecord {
                        seq: l.seq,
                        file: 0,
                        offset: l.offset,
                        len: l.len,
                        time: l.time,
                        branch: true,
                        events: &l.events,
                        tokens: &l.tokens,
                    });
                    seqs.push(l.seq);
                }
                Ok(Decoded::Line(_)) => {}
                Ok(Decoded::End(end)) => break end,
                Err(_) => break Err("undecodable"),
            }
        };
        // Lines are written as they come; the branch is known once all have.
        let written = written.and_then(|()| match &outcome {
            Ok(Some(branch)) => writer.off_branch(&off(&seqs, branch)),
            _ => Ok(()),
        });
        // Lines out of seq order, say: the session is scanned at query time.
        let outcome = outcome.and(written.map_err(|_| "unindexable"));
        // A file that changed while it was read is indexed again next time.
        if fingerprints(*source, file).as_deref() != Some(before.as_slice()) {
            continue;
        }
        match outcome {
            Ok(_) => {
                writer.commit()?;
                let bytes = before.iter().map(|(_, f)| f.size).sum::<u64>();
                summary.indexed += 1;
                summary.bytes += bytes;
                pending += bytes;
            }
            Err(reason) => {
                drop(writer);
                record.witnesses.iter_mut().for_each(|w| w.checkpoint = 0);
                batch.record_failure(&record, reason)?;
                summary.failed += 1;
            }
        }
    }
    batch.commit()?;
    progress(total, total);
    Ok(())
}

/// The seqs of `written` (increasing) that are not on `branch` (sorted).
fn off(written: &[u64], branch: &[u64]) -> Vec<u64> {
    written
        .iter()
        .copied()
        .filter(|seq| branch.binary_search(seq).is_err())
        .collect()
}

/// Whether the store holds the session indexed by this `version` from exactly these files.
pub(crate) fn indexed(
    row: Option<&crate::store::SessionRow>,
    version: &str,
    now: &[(std::path::PathBuf, Fingerprint)],
) -> bool {
    row.is_some_and(|row| {
        row.state == SessionState::Indexed
            && row.decoder_version == version
            && same_files(&row.witnesses, now)
    })
}

/// A line's events, gathered as they stream past.
#[derive(Default)]
struct Gathered {
    seq: u64,
    tokens: Vec<Token>,
    time: Option<LineTime>,
    events: Vec<u8>,
}

impl Gathered {
    fn add(&mut self, event: &Event) {
        text_tokens(&fold(&event.text), &mut self.tokens);
        events::encode(event, &mut self.events);
        let this = LineTime::of(event.timestamp);
        self.time = Some(match self.time {
            None => this,
            Some(t) if t == this => t,
            Some(t) => match latest(t).max(latest(this)) {
                Some(latest) => LineTime::AtMost(latest),
                None => LineTime::Untimed,
            },
        });
    }

    /// Hands the line, if there is one, to the writer, and starts afresh; false when the
    /// writer is gone.
    fn flush(&mut self, tx: &SyncSender<Decoded>, places: &[(u64, u64)]) -> bool {
        let done = std::mem::take(self);
        if done.seq == 0 {
            return true;
        }
        let mut tokens = done.tokens;
        tokens.sort_unstable();
        tokens.dedup();
        let mut text = String::new();
        tokens_text(&tokens, &mut text);
        let (offset, len) = places.get(done.seq as usize - 1).copied().unwrap_or((0, 0));
        tx.send(Decoded::Line(Line {
            seq: done.seq,
            offset,
            len,
            time: done.time.unwrap_or(LineTime::Unknown),
            events: done.events,
            tokens: text,
        }))
        .is_ok()
    }
}

fn latest(t: LineTime) -> Option<history_core::Timestamp> {
    match t {
        LineTime::At(t) | LineTime::AtMost(t) => Some(t),
        _ => None,
    }
}

/// Decodes one session, every branch, handing each line to the writer as soon as its events are
/// in; the reason code of a failure.
fn index_session(
    source: &dyn Transcript,
    file: &SessionFile,
    files: usize,
    tx: &SyncSender<Decoded>,
) -> Result<Option<Vec<u64>>, &'static str> {
    // Where each line of the session's own file is; where inherited history (another file's
    // lines, numbered before the session's own) lies is the decoder's to say, and not kept yet.
    let mut places = Vec::new();
    if files == 1 {
        let reader = source.open_raw(&file.path).map_err(|_| "unreadable")?;
        let mut lines = Lines::new(std::io::BufReader::new(reader), String::new());
        while let Some(line) = lines.next_line().map_err(|_| "too_large")? {
            places.push((line.offset, line.bytes.len() as u64));
        }
    }
    let mut current = Gathered::default();
    let mut open = true;
    let decoded = source.decode(
        file,
        &mut |event| {
            if event.seq != current.seq && open {
                open = current.flush(tx, &places);
                current.seq = event.seq;
            }
            current.add(&event);
        },
        None,
    );
    if open {
        current.flush(tx, &places);
    }
    match decoded {
        Ok(decoded) => Ok(decoded.branch),
        Err(history_core::DecodeError::TooLarge { .. }) => Err("too_large"),
        Err(history_core::DecodeError::Io { .. }) => Err("unreadable"),
        Err(history_core::DecodeError::Invalid(_)) => Err("undecodable"),
    }
}
