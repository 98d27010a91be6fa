//! Bringing the projection up to date: every session whose files changed since it was indexed is
//! decoded once, every branch, and each of its lines stored with its location, its time and the
//! tokens of its events' folded text. One session per transaction.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::mpsc::{Receiver, SyncSender};
use std::time::Instant;

use history_core::{Corpus, Event, Layout, SessionFile, SessionMeta, Transcript};
use history_core::{LineTime, Lines};
use history_core::{Snapshot, WantSnapshot};
use history_raw::fold;
use rustc_hash::FxHashSet;

use history_core::SessionKey;

use crate::events;
use crate::freshness::{Files, Freshness};
use crate::store::{
    checkpoint_hash, Batch, Candidate, Census, Fingerprint, LineRecord, SessionRecord,
    SessionWriter, Store, StoreError, Witness,
};
use crate::tokens::{text_tokens, Distinct, Token};

/// An update that read more than this copies the write-ahead log into the database at its end.
const CHECKPOINT_BYTES: u64 = 32 << 20;

/// What an update did.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct Summary {
    /// Sessions found, of sources whose sessions are lines ([`Layout::Lines`]).
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
    /// Whether it stopped before the end, when `progress` asked: the sessions it stored before
    /// are kept, the others are indexed next time.
    pub stopped: bool,
}

/// How far an update is, in bytes of transcripts: what [`update`] tells its caller before each
/// session, who answers whether it goes on.
pub type Progress<'a> = &'a mut dyn FnMut(u64, u64) -> bool;

/// Indexes every session of `corpus` that is not fresh in `store` for `version` (the decoders'
/// version and build), and removes the sessions that are gone. `progress(done, total)` hears
/// how far it is before each session, and stops it by answering `false`.
pub fn update(
    store: &mut Store,
    corpus: &Corpus,
    version: &str,
    progress: Progress<'_>,
) -> Result<Summary, StoreError> {
    rebuild(store, corpus, version, &|_, _| false, progress)
}

/// [`update`], which also indexes again from their start the sessions for which
/// `again(key, root path)` is `true`, fresh or not: each is replaced in the transaction that
/// writes it anew, so that a query meanwhile finds its old lines or its new ones, never neither.
pub fn rebuild(
    store: &mut Store,
    corpus: &Corpus,
    version: &str,
    again: &(dyn Fn(&SessionKey, &std::path::Path) -> bool + Sync),
    progress: Progress<'_>,
) -> Result<Summary, StoreError> {
    let start = Instant::now();
    // Sessions of records, not lines, are never indexed: a search reads them whole.
    let sessions: Vec<SessionFile> = (corpus.discover().into_iter())
        .filter(|s| {
            corpus
                .source(&s.key.harness)
                .is_some_and(|s| s.layout() == Layout::Lines)
        })
        .collect();
    let mut summary = Summary {
        sessions: sessions.len(),
        ..Summary::default()
    };
    let live: FxHashSet<&SessionKey> = sessions.iter().map(|s| &s.key).collect();
    // Another build's entries are all stale: start from nothing rather than replace each.
    let mut stored = store.census()?;
    // Whether this update writes lines or removes them: the token lists are merged only then.
    let mut changed = false;
    if stored.versions().any(|v| *v != *version) {
        store.clear()?;
        stored = Census::default();
        changed = true;
    }
    // The census is every stored session: the store is gone over only when one is gone.
    if stored.keys().any(|key| !live.contains(&key)) {
        changed |= store.retain_sessions(|key, _| live.contains(key))? > 0;
    }
    // Rows of sessions just removed stay in the census; only live sessions are looked up.
    // What to index, decided up front, so that one thread decodes while this one writes.
    let todo = plan(
        store,
        corpus,
        &sessions,
        &stored,
        version,
        again,
        &mut summary,
    )?;
    let (tx, rx) = std::sync::mpsc::sync_channel::<Decoded>(LINES_IN_FLIGHT);
    std::thread::scope(|scope| {
        let todo = &todo;
        scope.spawn(move || {
            let mut distinct = Distinct::default();
            for t in todo {
                let end = index_session(t, &tx, &mut distinct);
                if tx.send(Decoded::End(end)).is_err() {
                    return; // the writer gave up
                }
            }
        });
        write_all(store, todo, rx, version, &mut summary, progress)
    })?;
    // Queries read the sessions from one value again.
    store.seal_catalog()?;
    if changed || !todo.is_empty() {
        store.compact()?;
    }
    // A small update's pages are left to SQLite's own checkpoints.
    if summary.bytes > CHECKPOINT_BYTES {
        store.checkpoint()?;
    }
    summary.seconds = start.elapsed().as_secs_f64();
    Ok(summary)
}

/// What to index of `sessions`, by what `store` holds of each ([`Freshness`]): a stale session
/// from its start, an appended one from its snapshot or keeping its stored lines; a fresh or
/// failed one not at all (counted as fresh in `summary`), nor one whose files cannot be stat'ed.
fn plan<'a>(
    store: &Store,
    corpus: &'a Corpus,
    sessions: &'a [SessionFile],
    stored: &Census,
    version: &str,
    again: &(dyn Fn(&SessionKey, &std::path::Path) -> bool + Sync),
    summary: &mut Summary,
) -> Result<Vec<Todo<'a>>, StoreError> {
    let mut todo = Vec::new();
    // Stating every file (and reading again the headers of changed ones) on every core. A
    // session with nothing to do is judged from its row in place, and its files not taken.
    let judged = history_core::parallel::map(sessions, |file| {
        let source = corpus.source(&file.key.harness)?;
        let at = stored.position(&file.key);
        let again = again(&file.key, &file.path);
        match Freshness::settled_in(source, file, stored, at, version) {
            Some(f @ (Freshness::Fresh | Freshness::Failed)) if !again => {
                return Some((source, (Vec::new(), f)))
            }
            _ => {}
        }
        let row = at.map(|i| stored.row(i));
        let (now, freshness) = Freshness::of_session(source, file, row.as_ref(), version)?;
        Some((
            source,
            (now, if again { Freshness::Stale } else { freshness }),
        ))
    });
    for (file, judged) in sessions.iter().zip(judged) {
        let Some((source, (before, freshness))) = judged else {
            continue;
        };
        let (mut previous, mut resume) = (None, None);
        match freshness.with_snapshot(|| store.resume(&file.key))? {
            // A failed session is tried again once its files change.
            Freshness::Fresh | Freshness::Failed => {
                summary.fresh += 1;
                continue;
            }
            Freshness::Appended(Some(snapshot)) => {
                resume = Some(resumed(store, &file.key, snapshot)?);
            }
            Freshness::Appended(None) => previous = Some(previous_lines(store, &file.key)?),
            Freshness::Stale => {}
        }
        todo.push(Todo {
            file,
            source,
            before,
            previous,
            resume,
        });
    }
    Ok(todo)
}

/// What the decoding thread hands the writer: a session's lines, then how it ended.
enum Decoded {
    Line(Line),
    /// A line the projection already holds as it is now.
    Same(u64),
    /// The seqs on the selected branch (`None`: every line) and what the session is about, or
    /// why it failed.
    End(Result<Ended, &'static str>),
}

/// What a session's decode ended with: its branch, what it is about, whether its lineage is
/// open, and where a later decode can go on from.
type Ended = (
    Option<Vec<u64>>,
    SessionMeta,
    Vec<String>,
    bool,
    Option<Snapshot>,
);

/// One line, ready to store.
struct Line {
    seq: u64,
    offset: u64,
    len: u64,
    time: LineTime,
    events: Vec<u8>,
    tokens: Vec<Token>,
    words: Vec<u8>,
}

impl Line {
    /// The line as it is stored: in the session's own file, on the branch until the decode's
    /// end says otherwise.
    fn record(&self) -> LineRecord<'_> {
        LineRecord {
            seq: self.seq,
            file: 0,
            offset: self.offset,
            len: self.len,
            time: self.time,
            branch: true,
            events: &self.events,
            tokens: &self.tokens,
            words: &self.words,
        }
    }
}

/// A session to index.
struct Todo<'a> {
    file: &'a SessionFile,
    source: &'a dyn Transcript,
    /// Its files' fingerprints before reading.
    before: Files,
    /// When its files only grew since it was indexed: its stored lines, by seq, which are
    /// kept where the new decode gives them unchanged rather than written again.
    previous: Option<HashMap<u64, Candidate>>,
    /// When its own file grew since it was indexed and its decoder can go on from where it
    /// stopped: only the appended lines are read.
    resume: Option<Resumed>,
}

impl Todo<'_> {
    /// What is read of the session: from its snapshot on, when it goes on from one.
    fn bytes_to_read(&self) -> u64 {
        let all = self.before.iter().map(|(_, f)| f.size).sum::<u64>();
        all - self
            .resume
            .as_ref()
            .map_or(0, |r| r.snapshot.offset.min(all))
    }

    /// The session as it is stored, its files witnessed as they were before they were read.
    fn record(&self, version: &str) -> SessionRecord {
        let witness = |(path, fingerprint): &(PathBuf, Fingerprint)| Witness {
            file: history_core::Witness {
                path: path.clone(),
                fingerprint: *fingerprint,
            },
            checkpoint: fingerprint.size,
            checkpoint_hash: checkpoint_hash(path, fingerprint.size).unwrap_or(0),
        };
        SessionRecord {
            key: self.file.key.clone(),
            root_path: self.file.path.clone(),
            decoder_version: version.to_string(),
            witnesses: self.before.iter().map(witness).collect(),
        }
    }
}

/// A session to decode from its snapshot on.
struct Resumed {
    snapshot: Snapshot,
    /// Every stored line's seq and branch mark.
    marks: Vec<(u64, bool)>,
    /// Where the lines between the settled one and the snapshot's end are: a decode gives
    /// their events again.
    unsettled: Vec<(u64, u64, u64)>,
}

fn resumed(store: &Store, key: &SessionKey, snapshot: Snapshot) -> Result<Resumed, StoreError> {
    let rows = store.lines(key, snapshot.settled + 1..snapshot.lines + 1)?;
    Ok(Resumed {
        marks: store.branch_marks(key)?,
        unsettled: rows.iter().map(|r| (r.seq, r.offset, r.len)).collect(),
        snapshot,
    })
}

fn previous_lines(store: &Store, key: &SessionKey) -> Result<HashMap<u64, Candidate>, StoreError> {
    Ok(store
        .stored_lines(key)?
        .into_iter()
        .map(|c| (c.line.seq, c))
        .collect())
}

/// How many lines the decoding thread may run ahead of the writer: memory stays bounded.
const LINES_IN_FLIGHT: usize = 1024;

/// Writes the sessions of `todo` as their lines arrive, many sessions to a transaction.
fn write_all(
    store: &mut Store,
    todo: &[Todo<'_>],
    rx: Receiver<Decoded>,
    version: &str,
    summary: &mut Summary,
    progress: Progress<'_>,
) -> Result<(), StoreError> {
    let total = todo.iter().map(Todo::bytes_to_read).sum();
    let mut done = 0;
    // The database this update writes to: once it is deleted or replaced (a user cleared the
    // cache), writing on would only fill a file nobody reads while another update starts.
    let place = store.place();
    // Nothing to write: no transaction, so that the tables are not even checked for it.
    if todo.is_empty() {
        progress(0, 0);
        return Ok(());
    }
    let mut batch = store.batch()?;
    for t in todo {
        if !progress(done, total) {
            summary.stopped = true;
            break;
        }
        if !place.is_current() {
            return Err(StoreError::Replaced);
        }
        done += t.bytes_to_read();
        // Many sessions to a transaction, which writes their tokens as one segment: a query
        // reads a token's list once per segment.
        if batch.should_flush() {
            batch.commit()?;
            batch = store.batch()?;
        }
        match write_session(&mut batch, t, &rx, version)? {
            Written::Indexed => {
                summary.indexed += 1;
                summary.bytes += t.bytes_to_read();
            }
            Written::Failed => summary.failed += 1,
            Written::ChangedWhileRead => {}
        }
    }
    batch.commit()?;
    if !summary.stopped {
        progress(total, total);
    }
    Ok(())
}

/// What became of a session [`write_session`] wrote.
enum Written {
    /// It is indexed.
    Indexed,
    /// Its failure is recorded: it is scanned at query time until its files change.
    Failed,
    /// A file changed while it was read: nothing was kept, and it is indexed again next time.
    ChangedWhileRead,
}

/// Writes one session as the decoding thread hands over its lines, then settles its branch and
/// where a later decode goes on from; or records why it could not be indexed.
fn write_session(
    batch: &mut Batch<'_>,
    t: &Todo<'_>,
    rx: &Receiver<Decoded>,
    version: &str,
) -> Result<Written, StoreError> {
    let mut record = t.record(version);
    let mut writer = match (&t.previous, &t.resume) {
        (None, None) => batch.session(&record)?,
        _ => batch.extend(&record)?,
    };
    let written = match &t.resume {
        Some(r) => writer.remove_lines_after(r.snapshot.settled),
        None => Ok(()),
    };
    let received = receive(&mut writer, t, rx, written);
    // Lines are written as they come; the branch is known once all have.
    let written = received.written.and_then(|()| match &received.ended {
        Ok(ended) => finish(&mut writer, t, &received.seqs, ended),
        Err(_) => Ok(()),
    });
    // The database failed (a full disk, say): the update ends with that failure, whatever
    // undoing the session's writes says (SQLite may have rolled the whole transaction back).
    let written = match written {
        Err(e) if !e.refuses_the_session() => {
            let _ = writer.abandon();
            return Err(e);
        }
        written => written,
    };
    // Lines out of seq order, say: the session is scanned at query time.
    let outcome = received.ended.and(written.map_err(|_| "unindexable"));
    // A file that changed while it was read is indexed again next time.
    if !unchanged(&t.before) {
        writer.abandon()?;
        return Ok(Written::ChangedWhileRead);
    }
    match outcome {
        Ok(_) => {
            writer.commit()?;
            Ok(Written::Indexed)
        }
        Err(reason) => {
            writer.abandon()?;
            record.witnesses.iter_mut().for_each(|w| w.checkpoint = 0);
            batch.record_failure(&record, reason)?;
            Ok(Written::Failed)
        }
    }
}

/// What [`receive`] took of a session.
struct Received {
    /// How its decode ended.
    ended: Result<Ended, &'static str>,
    /// The seqs of the lines the decode gave, increasing: those written and those already held.
    seqs: Vec<u64>,
    /// Whether every line was written; after a failure, the rest are only taken.
    written: Result<(), StoreError>,
}

/// Takes a session's lines from the decoding thread until its end, writing each new one, unless
/// an earlier write failed (`written`).
fn receive(
    writer: &mut SessionWriter<'_>,
    t: &Todo<'_>,
    rx: &Receiver<Decoded>,
    mut written: Result<(), StoreError>,
) -> Received {
    let mut seqs = Vec::new();
    let ended = loop {
        match rx.recv() {
            Ok(Decoded::Same(seq)) => seqs.push(seq),
            Ok(Decoded::Line(l)) if written.is_ok() => {
                if t.previous.as_ref().is_some_and(|p| p.contains_key(&l.seq)) {
                    written = writer.remove_line(l.seq);
                }
                written = written.and_then(|()| writer.line(&l.record()));
                seqs.push(l.seq);
            }
            Ok(Decoded::Line(_)) => {}
            Ok(Decoded::End(end)) => break end,
            Err(_) => break Err("undecodable"),
        }
    };
    Received {
        ended,
        seqs,
        written,
    }
}

/// Once a session's decode ended: marks its branch ([`settle`], [`settle_resumed`]), and
/// records where a later decode goes on from and what the session is about.
fn finish(
    writer: &mut SessionWriter<'_>,
    t: &Todo<'_>,
    seqs: &[u64],
    (branch, meta, notices, lineage_open, snapshot): &Ended,
) -> Result<(), StoreError> {
    match &t.resume {
        Some(r) => settle_resumed(writer, r, seqs, branch.as_deref())?,
        None => settle(writer, t.previous.as_ref(), seqs, branch.as_deref())?,
    }
    if let Some(s) = snapshot {
        let hash = checkpoint_hash(&t.file.path, s.offset).map_err(StoreError::from)?;
        writer.set_checkpoint(s.offset, hash)?;
    }
    writer.set_resume(snapshot.as_ref())?;
    writer.set_meta(meta, notices, *lineage_open)
}

/// Whether every file still has the fingerprint it had, by a stat of each now.
fn unchanged(files: &[(PathBuf, Fingerprint)]) -> bool {
    files
        .iter()
        .all(|(path, f)| Fingerprint::of(path).ok().as_ref() == Some(f))
}

/// Once every line of a session is in: marks the lines off `branch` (sorted; `None`: every
/// line is on it), and of an extended session, removes the stored lines the decode no longer
/// gave (`seqs`: those it gave, increasing) and moves the branch of those it kept.
fn settle(
    writer: &mut SessionWriter<'_>,
    previous: Option<&HashMap<u64, Candidate>>,
    seqs: &[u64],
    branch: Option<&[u64]>,
) -> Result<(), StoreError> {
    let on = |seq: &u64| branch.is_none_or(|b| b.binary_search(seq).is_ok());
    let was = |seq: &u64| previous.and_then(|p| p.get(seq));
    // A line written now starts on the branch; one kept has its stored mark.
    let mut moved = Vec::new();
    for seq in seqs {
        let marked = was(seq).is_none_or(|c| c.branch);
        if marked != on(seq) {
            moved.push((*seq, on(seq)));
        }
    }
    writer.mark_branch(&moved)?;
    if let Some(previous) = previous {
        for seq in previous.keys() {
            if seqs.binary_search(seq).is_err() {
                writer.remove_line(*seq)?;
            }
        }
    }
    Ok(())
}

/// [`settle`] for a session decoded from its snapshot on: the stored lines up to the settled
/// one stay, with their marks moved to the new branch; `seqs` are those written now.
fn settle_resumed(
    writer: &mut SessionWriter<'_>,
    resumed: &Resumed,
    seqs: &[u64],
    branch: Option<&[u64]>,
) -> Result<(), StoreError> {
    let on = |seq: u64| branch.is_none_or(|b| b.binary_search(&seq).is_ok());
    let settled = resumed.snapshot.settled;
    let kept = resumed.marks.iter().filter(|(seq, _)| *seq <= settled);
    let mut moved: Vec<(u64, bool)> = kept
        .filter(|&&(seq, mark)| mark != on(seq))
        .map(|&(seq, _)| (seq, on(seq)))
        .collect();
    moved.extend(seqs.iter().filter(|&&s| !on(s)).map(|&s| (s, false)));
    writer.mark_branch(&moved)
}

/// A line's events, gathered as they stream past.
#[derive(Default)]
struct Gathered {
    seq: u64,
    texts: Vec<String>,
    /// Each event's part, role and time.
    heads: Vec<(u32, history_core::Role, Option<history_core::Timestamp>)>,
    time: Option<LineTime>,
    events: Vec<u8>,
}

impl Gathered {
    fn add(&mut self, event: Event) {
        events::encode(&event, &mut self.events);
        let this = LineTime::of(event.timestamp);
        self.time = Some(match self.time {
            None => this,
            Some(t) if t == this => t,
            Some(t) => match latest(t).max(latest(this)) {
                Some(latest) => LineTime::AtMost(latest),
                None => LineTime::Untimed,
            },
        });
        self.heads.push((event.part, event.role, event.timestamp));
        self.texts.push(event.text);
    }

    /// Hands the line, if there is one, to the writer, and starts afresh; false when the
    /// writer is gone. A line stored as it is now (`previous`) is only named.
    fn flush(
        &mut self,
        tx: &SyncSender<Decoded>,
        places: &Places,
        previous: Option<&HashMap<u64, Candidate>>,
        distinct: &mut Distinct,
    ) -> bool {
        let done = std::mem::take(self);
        if done.seq == 0 {
            return true;
        }
        let (offset, len) = places.of(done.seq);
        let time = done.time.unwrap_or(LineTime::Unknown);
        let same = previous.and_then(|p| p.get(&done.seq)).is_some_and(|c| {
            (c.line.offset, c.line.len, c.line.time) == (offset, len, time)
                && c.events == done.events
        });
        if same {
            return tx.send(Decoded::Same(done.seq)).is_ok();
        }
        let mut tokens: Vec<Token> = Vec::new();
        for text in &done.texts {
            text_tokens(&fold(text), &mut tokens);
        }
        distinct.retain(&mut tokens);
        let mut words = Vec::new();
        let heads = done.heads.iter().zip(&done.texts);
        crate::store::encode_line(
            heads.map(|(&(p, r, t), text)| (p, r, t, text.as_str())),
            &mut words,
        );
        tx.send(Decoded::Line(Line {
            seq: done.seq,
            offset,
            len,
            time,
            events: done.events,
            tokens,
            words,
        }))
        .is_ok()
    }
}

/// Where each line of a session's own file is, from its first line or from a snapshot's
/// settled one.
#[derive(Default)]
struct Places {
    /// The seq before the first one held.
    base: u64,
    at: Vec<(u64, u64)>,
}

impl Places {
    /// Reads the lines' places: every line's, or from a snapshot on, after the stored places of
    /// the lines it had not settled.
    fn read(
        &mut self,
        source: &dyn Transcript,
        path: &std::path::Path,
        resume: Option<&Resumed>,
    ) -> Result<(), &'static str> {
        let reason = |e: std::io::Error| match e.kind() {
            std::io::ErrorKind::FileTooLarge => "too_large",
            _ => "unreadable",
        };
        let reader: Box<dyn std::io::Read> = match resume {
            // A source that goes on from a snapshot reads its file as it lies on disk.
            Some(r) => Box::new(
                history_core::snapshot::open_at(path, r.snapshot.offset).map_err(|e| match e {
                    history_core::DecodeError::TooLarge { .. } => "too_large",
                    _ => "unreadable",
                })?,
            ),
            None => history_core::open_raw(source, path).map_err(reason)?,
        };
        if let Some(r) = resume {
            let s = &r.snapshot;
            self.base = s.settled;
            self.at = vec![(0, 0); (s.lines - s.settled) as usize];
            for &(seq, offset, len) in &r.unsettled {
                if let Some(at) = self.at.get_mut((seq - s.settled - 1) as usize) {
                    *at = (offset, len);
                }
            }
        }
        let mut lines = Lines::new(std::io::BufReader::new(reader), String::new());
        if let Some(r) = resume {
            lines.start_at(r.snapshot.offset, r.snapshot.lines);
        }
        while let Some(line) = lines.next_line().map_err(|_| "too_large")? {
            self.at.push((line.offset, line.bytes.len() as u64));
        }
        Ok(())
    }

    fn of(&self, seq: u64) -> (u64, u64) {
        let i = seq.checked_sub(self.base + 1);
        i.and_then(|i| self.at.get(i as usize))
            .copied()
            .unwrap_or((0, 0))
    }
}

fn latest(t: LineTime) -> Option<history_core::Timestamp> {
    match t {
        LineTime::At(t) | LineTime::AtMost(t) => Some(t),
        _ => None,
    }
}

/// Decodes one session, every branch, handing each line to the writer as soon as its events are
/// in; the reason code of a failure. `distinct` is the decoding thread's one token set, kept
/// across sessions rather than allocated for each.
fn index_session(
    todo: &Todo<'_>,
    tx: &SyncSender<Decoded>,
    distinct: &mut Distinct,
) -> Result<Ended, &'static str> {
    let (source, file, files) = (todo.source, todo.file, todo.before.len());
    let previous = todo.previous.as_ref();
    // Where each line of the session's own file is; where inherited history (another file's
    // lines, numbered before the session's own) lies is the decoder's to say, and not kept yet.
    let resume = todo.resume.as_ref();
    let mut places = Places::default();
    if files == 1 {
        places.read(source, &file.path, resume)?;
    }
    let mut current = Gathered::default();
    let mut open = true;
    let mut sink = |event: Event| {
        if event.seq != current.seq && open {
            open = current.flush(tx, &places, previous, distinct);
            current.seq = event.seq;
        }
        current.add(event);
    };
    let snapshot = resume.map(|r| &r.snapshot);
    // A snapshot the decoder cannot go on from (nothing was emitted): the session is indexed
    // again from the start next time.
    let decoded = match source.decode_resumable(file, &mut sink, None, snapshot, WantSnapshot::Yes)
    {
        Ok(history_core::Resumed::Done(decoded, snapshot)) => Ok((decoded, snapshot)),
        Ok(history_core::Resumed::Declined) => return Err("unindexable"),
        Err(e) => Err(e),
    };
    if open {
        current.flush(tx, &places, previous, distinct);
    }
    match decoded {
        Ok((decoded, snapshot)) => {
            let history_core::Decoded {
                branch,
                meta,
                notices,
                lineage_open,
                ..
            } = decoded;
            Ok((branch, meta, notices, lineage_open, snapshot))
        }
        Err(history_core::DecodeError::TooLarge { .. }) => Err("too_large"),
        Err(history_core::DecodeError::Io { .. }) => Err("unreadable"),
        Err(history_core::DecodeError::Invalid(_)) => Err("undecodable"),
    }
}
