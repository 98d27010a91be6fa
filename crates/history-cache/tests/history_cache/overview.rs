//! The cached representative: a hit decodes nothing, a change is seen, failures are not kept.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use history_cache::{cached_representative, Cache};
use history_core::{
    Corpus, DecodeError, Decoded, Event, Role, SessionFile, SessionKey, Transcript,
};

/// A source whose sessions are files of plain lines (one user event per line), counting decodes.
struct Counting {
    dir: PathBuf,
    decodes: Arc<AtomicUsize>,
}

impl Transcript for Counting {
    fn harness(&self) -> &str {
        "plain"
    }

    fn discover(&self) -> Vec<SessionFile> {
        let mut out = Vec::new();
        for e in std::fs::read_dir(&self.dir).unwrap().flatten() {
            let meta = e.metadata().unwrap();
            out.push(SessionFile {
                key: SessionKey::new("plain", e.file_name().to_string_lossy()),
                path: e.path(),
                modified: 0,
                size: meta.len(),
                fingerprint: None,
            });
        }
        out
    }

    fn decode(
        &self,
        file: &SessionFile,
        sink: &mut dyn FnMut(Event),
        _lines: Option<history_core::LineTest<'_>>,
    ) -> Result<Decoded, DecodeError> {
        self.decodes.fetch_add(1, Ordering::SeqCst);
        let text =
            std::fs::read_to_string(&file.path).map_err(|e| DecodeError::Invalid(e.to_string()))?;
        if text.starts_with("BROKEN") {
            return Err(DecodeError::Invalid("broken".into()));
        }
        for (i, line) in text.lines().enumerate() {
            sink(Event {
                seq: i as u64 + 1,
                part: 0,
                role: Role::User,
                kind: "message".into(),
                timestamp: None,
                text: line.into(),
                visible: true,
                tool: None,
                on_active_branch: None,
            });
        }
        Ok(Decoded {
            lineage: vec![file.path.clone()],
            ..Decoded::default()
        })
    }
}

fn setup() -> (tempfile::TempDir, Corpus, Arc<AtomicUsize>, Cache) {
    let dir = tempfile::tempdir().unwrap();
    let sessions = dir.path().join("sessions");
    std::fs::create_dir(&sessions).unwrap();
    std::fs::write(sessions.join("a"), "first prompt\nsecond\n").unwrap();
    std::fs::write(sessions.join("b"), "BROKEN\n").unwrap();
    let decodes = Arc::new(AtomicUsize::new(0));
    let corpus = Corpus::new(vec![Box::new(Counting {
        dir: sessions,
        decodes: decodes.clone(),
    })]);
    let cache = Cache::new(dir.path().join("cache"), "test");
    (dir, corpus, decodes, cache)
}

#[test]
fn a_hit_reads_no_transcript_and_a_change_is_seen() {
    let (dir, corpus, decodes, cache) = setup();
    let a = corpus
        .discover()
        .into_iter()
        .find(|s| s.key.id == "a")
        .unwrap();
    let cold = cached_representative(&cache, &corpus, &a).unwrap();
    assert_eq!(decodes.load(Ordering::SeqCst), 1);
    let warm = cached_representative(&cache, &corpus, &a).unwrap();
    assert_eq!(
        decodes.load(Ordering::SeqCst),
        1,
        "the warm call decoded nothing"
    );
    assert_eq!(cold.event, warm.event);
    assert_eq!(warm.event.unwrap().text, "first prompt");

    std::fs::write(dir.path().join("sessions/a"), "changed prompt\n").unwrap();
    let fresh = cached_representative(&cache, &corpus, &a).unwrap();
    assert_eq!(decodes.load(Ordering::SeqCst), 2);
    assert_eq!(fresh.event.unwrap().text, "changed prompt");
}

#[test]
fn failures_are_never_cached() {
    let (_dir, corpus, decodes, cache) = setup();
    let b = corpus
        .discover()
        .into_iter()
        .find(|s| s.key.id == "b")
        .unwrap();
    assert!(cached_representative(&cache, &corpus, &b).is_err());
    assert!(cached_representative(&cache, &corpus, &b).is_err());
    assert_eq!(decodes.load(Ordering::SeqCst), 2, "rechecked every time");
}

#[test]
fn a_corrupt_entry_is_a_miss_and_is_rewritten() {
    let (_dir, corpus, decodes, cache) = setup();
    let a = corpus
        .discover()
        .into_iter()
        .find(|s| s.key.id == "a")
        .unwrap();
    cached_representative(&cache, &corpus, &a).unwrap();
    let entries: Vec<PathBuf> = std::fs::read_dir(cache.dir())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(entries.len(), 1);
    std::fs::write(&entries[0], "{ not json").unwrap();
    let again = cached_representative(&cache, &corpus, &a).unwrap();
    assert_eq!(again.event.unwrap().text, "first prompt");
    assert_eq!(decodes.load(Ordering::SeqCst), 2);
    assert!(std::fs::read_to_string(&entries[0])
        .unwrap()
        .starts_with('{'));
    cached_representative(&cache, &corpus, &a).unwrap();
    assert_eq!(
        decodes.load(Ordering::SeqCst),
        2,
        "the rewritten entry hits"
    );
}

#[test]
fn a_transcript_that_ends_in_half_a_line_is_not_cached() {
    let (dir, corpus, decodes, cache) = setup();
    let path = dir.path().join("sessions/a");
    // The writer's first call: half of the next line.
    std::fs::write(&path, "first prompt\nsec").unwrap();
    let a = corpus
        .discover()
        .into_iter()
        .find(|s| s.key.id == "a")
        .unwrap();
    cached_representative(&cache, &corpus, &a).unwrap();
    cached_representative(&cache, &corpus, &a).unwrap();
    assert_eq!(decodes.load(Ordering::SeqCst), 2, "nothing was kept");
    // The rest of the line: now the entry is kept.
    std::fs::write(&path, "first prompt\nsecond\n").unwrap();
    cached_representative(&cache, &corpus, &a).unwrap();
    cached_representative(&cache, &corpus, &a).unwrap();
    assert_eq!(decodes.load(Ordering::SeqCst), 3);
}
