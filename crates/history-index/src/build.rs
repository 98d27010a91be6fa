//! Bringing the projection up to date: every session whose files changed since it was indexed is
//! decoded once, every branch, and each of its lines stored with its location, its time and the
//! tokens of its events' folded text. One session per transaction.

use std::collections::HashSet;
use std::time::Instant;

use history_core::source::{LineTime, Lines};
use history_core::{fold, Corpus, Event, SessionFile, Transcript};

use history_core::SessionKey;

use crate::store::{
    checkpoint_hash, Fingerprint, LineRecord, SessionRecord, SessionState, SessionWriter, Store,
    StoreError, Witness,
};
use crate::tokens::{text_tokens, tokens_text, Token};

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
pub(crate) fn fingerprints(
    source: &dyn Transcript,
    file: &SessionFile,
) -> Option<Vec<(std::path::PathBuf, Fingerprint)>> {
    source
        .lineage(file)
        .into_iter()
        .map(|path| Fingerprint::of(&path).ok().map(|f| (path, f)))
        .collect()
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
/// version and build), and removes the sessions that are gone.
pub fn update(store: &mut Store, corpus: &Corpus, version: &str) -> Result<Summary, StoreError> {
    let start = Instant::now();
    let sessions = corpus.discover();
    let mut summary = Summary {
        sessions: sessions.len(),
        ..Summary::default()
    };
    let live: HashSet<&SessionKey> = sessions.iter().map(|s| &s.key).collect();
    store.retain_sessions(|key, _| live.contains(key))?;
    for file in &sessions {
        let Some(source) = corpus.source(&file.key.harness) else {
            continue;
        };
        let Some(before) = fingerprints(source, file) else {
            continue;
        };
        let stored = store.session(&file.key)?;
        if stored.as_ref().is_some_and(|row| {
            row.decoder_version == version && same_files(&row.witnesses, &before)
        }) {
            summary.fresh += 1;
            continue;
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
        let mut writer = store.begin_session(&record)?;
        let outcome = index_session(source, file, before.len(), &mut writer);
        // A file that changed while it was read is indexed again next time.
        if fingerprints(source, file).as_deref() != Some(before.as_slice()) {
            continue;
        }
        match outcome {
            Ok(()) => {
                writer.commit()?;
                summary.indexed += 1;
                summary.bytes += before.iter().map(|(_, f)| f.size).sum::<u64>();
            }
            Err(reason) => {
                drop(writer);
                record.witnesses.iter_mut().for_each(|w| w.checkpoint = 0);
                store.record_failure(&record, reason)?;
                summary.failed += 1;
            }
        }
    }
    summary.seconds = start.elapsed().as_secs_f64();
    Ok(summary)
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
}

impl Gathered {
    fn add(&mut self, event: &Event) {
        text_tokens(&fold(&event.text), &mut self.tokens);
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

    /// Writes the line, if there is one, and starts afresh.
    fn flush(
        &mut self,
        writer: &mut SessionWriter<'_>,
        places: &[(u64, u64)],
    ) -> Result<(), StoreError> {
        let done = std::mem::take(self);
        if done.seq == 0 {
            return Ok(());
        }
        let mut tokens = done.tokens;
        tokens.sort_unstable();
        tokens.dedup();
        let mut text = String::new();
        tokens_text(&tokens, &mut text);
        let (offset, len) = places.get(done.seq as usize - 1).copied().unwrap_or((0, 0));
        writer.line(&LineRecord {
            seq: done.seq,
            file: 0,
            offset,
            len,
            time: done.time.unwrap_or(LineTime::Unknown),
            tokens: &text,
        })
    }
}

fn latest(t: LineTime) -> Option<history_core::Timestamp> {
    match t {
        LineTime::At(t) | LineTime::AtMost(t) => Some(t),
        _ => None,
    }
}

/// Decodes one session, every branch, writing each line as soon as its events are in; the
/// reason code of a failure.
fn index_session(
    source: &dyn Transcript,
    file: &SessionFile,
    files: usize,
    writer: &mut SessionWriter<'_>,
) -> Result<(), &'static str> {
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
    let mut written = Ok(());
    let decoded = source.decode(
        file,
        &mut |event| {
            if event.seq != current.seq && written.is_ok() {
                written = current.flush(writer, &places);
                current.seq = event.seq;
            }
            current.add(&event);
        },
        None,
    );
    if written.is_ok() {
        written = current.flush(writer, &places);
    }
    match (decoded, written) {
        // Lines out of seq order, say: the session is scanned at query time.
        (_, Err(_)) => Err("unindexable"),
        (Ok(_), Ok(())) => Ok(()),
        (Err(history_core::DecodeError::TooLarge { .. }), _) => Err("too_large"),
        (Err(history_core::DecodeError::Io { .. }), _) => Err("unreadable"),
        (Err(history_core::DecodeError::Invalid(_)), _) => Err("undecodable"),
    }
}
