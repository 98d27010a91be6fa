use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use history_core::LineTime;
use history_core::{SessionKey, Timestamp};

use rusqlite::types::Value;

use super::postings::MAX_SEGMENTS;

use super::*;

fn key(n: u32) -> SessionKey {
    SessionKey::new("claude", format!("s{n}"))
}

/// A session whose one witness is a real file of `size` bytes, indexed up to its end.
fn record(dir: &Path, key: &SessionKey, size: usize) -> SessionRecord {
    let file = dir.join(format!("{}.jsonl", key.id));
    std::fs::write(&file, vec![b'x'; size]).unwrap();
    SessionRecord {
        key: key.clone(),
        root_path: file.clone(),
        decoder_version: "d1".into(),
        witnesses: vec![witness(&file)],
    }
}

fn witness(file: &Path) -> Witness {
    let fingerprint = Fingerprint::of(file).unwrap();
    Witness {
        file: history_core::Witness {
            path: file.to_path_buf(),
            fingerprint,
        },
        checkpoint: fingerprint.size,
        checkpoint_hash: checkpoint_hash(file, fingerprint.size).unwrap(),
    }
}

/// A token for each word: tests name tokens by words.
fn tok(word: &str) -> crate::tokens::Token {
    word.bytes()
        .fold(7u32, |h, b| h.wrapping_mul(31).wrapping_add(u32::from(b)))
        & ((1 << crate::tokens::BITS) - 1)
}

fn line(seq: u64, words: &str) -> LineRecord<'static> {
    let mut tokens: Vec<_> = words.split_whitespace().map(tok).collect();
    tokens.sort_unstable();
    tokens.dedup();
    let tokens = Box::leak(tokens.into_boxed_slice());
    let mut cut = Vec::new();
    let time = Some(Timestamp(seq as i64));
    crate::store::encode_line([(0, history_core::Role::User, time, words)], &mut cut);
    let words = Box::leak(cut.into_boxed_slice());
    LineRecord {
        seq,
        file: 0,
        offset: seq * 10,
        len: 10,
        time: LineTime::At(Timestamp(seq as i64)),
        branch: true,
        events: &[],
        tokens,
        words,
    }
}

/// How many stored lines hold the token of `word`.
fn grams_matching(store: &Store, word: &str) -> i64 {
    let ids = postings::candidates(&store.conn, &[tok(word)], 1..=i64::MAX as u64).unwrap();
    let ids: Vec<_> = ids.into_iter().map(|i| Value::Integer(i as i64)).collect();
    store
        .conn
        .query_row(
            "SELECT count(*) FROM lines WHERE id IN rarray(?1)",
            [std::rc::Rc::new(ids)],
            |r| r.get(0),
        )
        .unwrap()
}

/// Every id the token lists hold for `word`, of lines stored or removed.
fn listed(store: &Store, word: &str) -> usize {
    postings::candidates(&store.conn, &[tok(word)], 1..=i64::MAX as u64)
        .unwrap()
        .len()
}

fn toks(words: &[&str]) -> Vec<crate::tokens::Token> {
    words.iter().map(|w| tok(w)).collect()
}

fn count(store: &Store, table: &str) -> i64 {
    store
        .conn
        .query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))
        .unwrap()
}

struct Fixture {
    dir: tempfile::TempDir,
    db: PathBuf,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let db = Store::path(&dir.path().join("cache"));
    Fixture { dir, db }
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn the_path_is_under_the_cache_root() {
    assert_eq!(
        Store::path(Path::new("/c/notesoup")),
        PathBuf::from("/c/notesoup/history-search/v1.sqlite")
    );
}

#[test]
fn a_store_is_created_private_and_reopened() {
    let f = fixture();
    let mut store = Store::open(&f.db).unwrap();
    assert!(store.writable());
    assert_eq!(store.schema_version(), SCHEMA_VERSION);
    let rec = record(f.dir.path(), &key(1), 30);
    store.replace_session(&rec, &[line(0, "aa bb")]).unwrap();
    assert_eq!(mode(f.db.parent().unwrap()), 0o700);
    assert_eq!(mode(&f.db), 0o600);
    assert_eq!(mode(&place::with_suffix(&f.db, "-wal")), 0o600);
    assert_eq!(mode(&place::with_suffix(&f.db, "-shm")), 0o600);
    let mode_of = |pragma: &str| -> String {
        store
            .conn
            .query_row(&format!("PRAGMA {pragma}"), [], |r| {
                r.get::<_, rusqlite::types::Value>(0)
            })
            .map(|v| format!("{v:?}"))
            .unwrap()
    };
    assert_eq!(mode_of("journal_mode"), "Text(\"wal\")");
    assert_eq!(mode_of("synchronous"), "Integer(1)");
    assert_eq!(mode_of("foreign_keys"), "Integer(1)");
    assert_eq!(mode_of("page_size"), "Integer(16384)");
    assert_eq!(mode_of("auto_vacuum"), "Integer(2)");
    drop(store);

    let store = Store::open_with(&f.db, Check::Deep).unwrap();
    let row = store.session(&key(1)).unwrap().unwrap();
    assert_eq!(row.state, SessionState::Indexed);
    assert_eq!(row.witnesses, rec.witnesses);
    assert_eq!(row.bytes, 30);
    assert_eq!(&*row.decoder_version, "d1");
    assert_eq!(store.session(&key(2)).unwrap(), None);
}

#[test]
fn loose_permissions_are_tightened() {
    let f = fixture();
    drop(Store::open(&f.db).unwrap());
    std::fs::set_permissions(&f.db, std::fs::Permissions::from_mode(0o644)).unwrap();
    let dir = f.db.parent().unwrap();
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    drop(Store::open(&f.db).unwrap());
    assert_eq!(mode(dir), 0o700);
    assert_eq!(mode(&f.db), 0o600);
}

#[test]
fn symbolic_links_are_refused() {
    let f = fixture();
    let elsewhere = f.dir.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    std::fs::create_dir_all(f.db.parent().unwrap().parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(&elsewhere, f.db.parent().unwrap()).unwrap();
    assert!(matches!(Store::open(&f.db), Err(StoreError::Symlink)));
    assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);

    std::fs::remove_file(f.db.parent().unwrap()).unwrap();
    std::fs::create_dir(f.db.parent().unwrap()).unwrap();
    let target = elsewhere.join("target.sqlite");
    std::os::unix::fs::symlink(&target, &f.db).unwrap();
    assert!(matches!(Store::open(&f.db), Err(StoreError::Symlink)));
    assert!(!target.exists());

    std::fs::remove_file(&f.db).unwrap();
    std::os::unix::fs::symlink(&target, place::with_suffix(&f.db, "-wal")).unwrap();
    assert!(matches!(Store::open(&f.db), Err(StoreError::Symlink)));
    assert!(!target.exists());
}

#[test]
fn an_unusable_directory_is_an_error_with_a_reason() {
    let f = fixture();
    let file = f.dir.path().join("file");
    std::fs::write(&file, b"").unwrap();
    let err = Store::open(&file.join("v1.sqlite")).unwrap_err();
    assert_eq!(err.code(), "not_creatable");
    let err = Store::open(&Store::path(&file)).unwrap_err();
    assert_eq!(err.code(), "not_creatable");
    std::fs::create_dir_all(f.db.parent().unwrap()).unwrap();
    std::fs::create_dir(&f.db).unwrap();
    assert_eq!(Store::open(&f.db).unwrap_err().code(), "not_a_file");
}

#[test]
fn a_damaged_database_is_quarantined_and_rebuilt() {
    let f = fixture();
    std::fs::create_dir_all(f.db.parent().unwrap()).unwrap();
    let garbage = b"this is not a database, not even close to one.".repeat(200);
    std::fs::write(&f.db, &garbage).unwrap();
    std::fs::write(place::with_suffix(&f.db, "-wal"), b"junk").unwrap();
    let mut store = Store::open(&f.db).unwrap();
    assert!(store.writable());
    let rec = record(f.dir.path(), &key(1), 10);
    store.replace_session(&rec, &[line(0, "aa")]).unwrap();
    let quarantined = place::quarantines(&f.db);
    assert_eq!(quarantined.len(), 1);
    assert_eq!(std::fs::read(&quarantined[0]).unwrap(), garbage);
    // SQLite itself discards a log that is not one; what matters is that the fresh database
    // never replays it.
    assert_eq!(
        store.session(&key(1)).unwrap().unwrap().witnesses,
        rec.witnesses
    );
    assert_eq!(store.stats().unwrap().quarantined, 1);
    drop(store);

    // Someone else's database at the path is moved aside too, never written into.
    std::fs::remove_file(&f.db).unwrap();
    for suffix in place::COMPANIONS {
        let _ = std::fs::remove_file(place::with_suffix(&f.db, suffix));
    }
    let other = rusqlite::Connection::open(&f.db).unwrap();
    other
        .execute_batch("CREATE TABLE mine (x); PRAGMA user_version = 7;")
        .unwrap();
    drop(other);
    let store = Store::open(&f.db).unwrap();
    assert_eq!(count(&store, "sessions"), 0);
    assert_eq!(place::quarantines(&f.db).len(), 2);

    // Only the newest quarantines are kept.
    drop(store);
    for _ in 0..3 {
        std::fs::write(&f.db, &garbage).unwrap();
        drop(Store::open(&f.db).unwrap());
    }
    assert_eq!(place::quarantines(&f.db).len(), 2);
}

#[test]
fn a_quick_check_failure_is_quarantined() {
    let f = fixture();
    let mut store = Store::open(&f.db).unwrap();
    let rec = record(f.dir.path(), &key(1), 10);
    let tokens: Vec<String> = (0..2000).map(|i| format!("t{i} u{i} v{i}")).collect();
    let lines: Vec<LineRecord<'_>> = tokens
        .iter()
        .enumerate()
        .map(|(i, t)| line(i as u64, t))
        .collect();
    store.replace_session(&rec, &lines).unwrap();
    drop(store);
    // Zero a page in the middle: the header survives, a b-tree does not.
    let mut bytes = std::fs::read(&f.db).unwrap();
    assert!(bytes.len() > 5 * 4096, "{}", bytes.len());
    bytes[3 * 4096..4 * 4096].fill(0xa5);
    std::fs::write(&f.db, &bytes).unwrap();
    let store = Store::open_with(&f.db, Check::Deep).unwrap();
    assert_eq!(count(&store, "sessions"), 0);
    assert_eq!(place::quarantines(&f.db).len(), 1);
}

/// A database too large to check whole on every update has the tables an update checks
/// checked before its first write, not when it opens: an update with nothing to write reads
/// none of them, and one that writes meets their damage as `Corrupt`, which moves the database
/// aside and builds it again.
#[test]
fn a_large_databases_tables_are_checked_before_the_first_write() {
    let (f, rec) = one_session();
    let raw = rusqlite::Connection::open(&f.db).unwrap();
    raw.execute_batch("CREATE TABLE pad (x)").unwrap();
    raw.execute(
        "INSERT INTO pad VALUES (zeroblob(?1))",
        [QUICK_CHECK_BYTES as i64 + 1],
    )
    .unwrap();
    let root: i64 = raw
        .query_row(
            "SELECT rootpage FROM sqlite_schema WHERE name = 'witnesses'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    drop(raw);
    let mut bytes = std::fs::read(&f.db).unwrap();
    let page = 16384;
    let at = (root as usize - 1) * page;
    bytes[at..at + page].fill(0xa5);
    std::fs::write(&f.db, &bytes).unwrap();

    let mut store = Store::open_with(&f.db, Check::Update).unwrap();
    assert!(place::quarantines(&f.db).is_empty());
    let written = store.replace_session(&rec, &[line(0, "bb")]);
    assert!(matches!(written, Err(StoreError::Corrupt)), "{written:?}");
}

/// The database file's hash and length, and the companions' lengths: what must not change.
fn all_bytes(db: &Path) -> (u64, usize, Vec<u64>) {
    let main = std::fs::read(db).unwrap();
    let companions = place::COMPANIONS
        .iter()
        .map(|s| std::fs::metadata(place::with_suffix(db, s)).map_or(0, |m| m.len()))
        .collect();
    let mut hash = fnv::FnvHasher::default();
    std::hash::Hasher::write(&mut hash, &main);
    (std::hash::Hasher::finish(&hash), main.len(), companions)
}

/// A database holding one session of one line, closed; and that session.
fn one_session() -> (Fixture, SessionRecord) {
    let f = fixture();
    let mut store = Store::open(&f.db).unwrap();
    let rec = record(f.dir.path(), &key(1), 10);
    store.replace_session(&rec, &[line(0, "aa")]).unwrap();
    (f, rec)
}

#[test]
fn a_newer_schema_with_a_pending_log_is_left_byte_for_byte() {
    let (f, _) = one_session();
    // A newer build writes, and is killed before its log is folded into the database: what it
    // leaves is copied while its connection is open.
    let newer = rusqlite::Connection::open(&f.db).unwrap();
    newer
        .execute_batch(&format!(
            "PRAGMA wal_autocheckpoint = 0; PRAGMA user_version = {};
             CREATE TABLE later (x); INSERT INTO later VALUES (1);",
            SCHEMA_VERSION + 1
        ))
        .unwrap();
    let wal = place::with_suffix(&f.db, "-wal");
    let saved = (std::fs::read(&f.db).unwrap(), std::fs::read(&wal).unwrap());
    assert!(!saved.1.is_empty());
    drop(newer);
    std::fs::write(&f.db, &saved.0).unwrap();
    std::fs::write(&wal, &saved.1).unwrap();
    let _ = std::fs::remove_file(place::with_suffix(&f.db, "-shm"));

    for check in [Check::Schema, Check::Update, Check::Deep] {
        let store = Store::open_with(&f.db, check).unwrap();
        assert!(!store.writable());
        assert_eq!(store.schema_version(), SCHEMA_VERSION + 1);
        assert!(store.session(&key(1)).unwrap().is_some());
        store.note_damage();
    }
    assert_eq!(std::fs::read(&f.db).unwrap(), saved.0);
    assert_eq!(std::fs::read(&wal).unwrap(), saved.1);
    assert!(place::quarantines(&f.db).is_empty());
    assert!(!place::with_suffix(&f.db, ".damaged").exists());
}

/// A query opens this build's database with one read-only connection: it reads what a pending
/// log holds, and leaves the database and the log byte for byte (a writable connection folds
/// the log into the database as it closes). Any other file is opened as [`Store::open`] opens
/// it: an empty one gets the schema.
#[test]
fn a_query_reads_a_pending_log_and_writes_nothing() {
    let (f, _) = one_session();
    let mut store = Store::open(&f.db).unwrap();
    let rec = record(f.dir.path(), &key(2), 10);
    store.replace_session(&rec, &[line(0, "bb")]).unwrap();
    let wal = place::with_suffix(&f.db, "-wal");
    let saved = (std::fs::read(&f.db).unwrap(), std::fs::read(&wal).unwrap());
    assert!(!saved.1.is_empty());
    drop(store);
    std::fs::write(&f.db, &saved.0).unwrap();
    std::fs::write(&wal, &saved.1).unwrap();
    let _ = std::fs::remove_file(place::with_suffix(&f.db, "-shm"));

    let store = Store::open_to_read(&f.db).unwrap();
    assert!(!store.writable());
    assert_eq!(store.schema_version(), SCHEMA_VERSION);
    assert!(store.session(&key(2)).unwrap().is_some());
    drop(store);
    assert_eq!(std::fs::read(&f.db).unwrap(), saved.0);
    assert_eq!(std::fs::read(&wal).unwrap(), saved.1);

    let empty = f.dir.path().join("empty.sqlite");
    std::fs::write(&empty, b"").unwrap();
    let store = Store::open_to_read(&empty).unwrap();
    assert!(store.writable());
    assert!(store.has_tables().unwrap());
}

#[test]
fn a_newer_schema_is_read_only_and_left_alone() {
    let (f, rec) = one_session();
    let newer = rusqlite::Connection::open(&f.db).unwrap();
    newer
        .execute_batch(&format!(
            "PRAGMA user_version = {}; CREATE TABLE later (x);",
            SCHEMA_VERSION + 1
        ))
        .unwrap();
    drop(newer);
    let before = all_bytes(&f.db);

    let mut store = Store::open_with(&f.db, Check::Deep).unwrap();
    assert!(!store.writable());
    assert_eq!(store.schema_version(), SCHEMA_VERSION + 1);
    assert_eq!(
        store.session(&key(1)).unwrap().map(|s| s.state),
        Some(SessionState::Indexed)
    );
    let stats = store.stats().unwrap();
    assert!(!stats.writable);
    assert_eq!(stats.schema_version, SCHEMA_VERSION + 1);
    assert!(matches!(
        store.replace_session(&rec, &[]),
        Err(StoreError::Degraded)
    ));
    assert!(matches!(
        store.remove_session(&key(1)),
        Err(StoreError::Degraded)
    ));
    drop(store);
    // A read-only connection may leave an empty log and shared-memory file; the database
    // itself is byte for byte what it was.
    let after = all_bytes(&f.db);
    assert_eq!(after.0, before.0);
    assert_eq!(after.1, before.1);
    assert_eq!(after.2[0], 0);
    assert!(place::quarantines(&f.db).is_empty());
}

#[test]
fn a_second_replace_leaves_no_orphan_tokens() {
    let f = fixture();
    let mut store = Store::open(&f.db).unwrap();
    let rec = record(f.dir.path(), &key(1), 10);
    let other = record(f.dir.path(), &key(2), 10);
    store
        .replace_session(&rec, &[line(0, "old aa"), line(1, "old bb"), line(2, "cc")])
        .unwrap();
    store.replace_session(&other, &[line(0, "old")]).unwrap();
    assert_eq!(grams_matching(&store, "old"), 3);
    store
        .replace_session(&rec, &[line(0, "new aa"), line(1, "cc")])
        .unwrap();
    assert_eq!(grams_matching(&store, "old"), 1);
    assert_eq!(grams_matching(&store, "new"), 1);
    assert_eq!(grams_matching(&store, "cc"), 1);
    assert_eq!(count(&store, "lines"), 3);
    let q = toks(&["old"]);
    assert!(store.matching_lines(&key(1), &q).unwrap().is_empty());
    assert_eq!(store.matching_lines(&key(2), &q).unwrap().len(), 1);
    store.replace_session(&rec, &[]).unwrap();
    assert_eq!(
        grams_matching(&store, "new") + grams_matching(&store, "cc"),
        0
    );
    // The removed lines' ids stay in the lists until they are merged, which drops them.
    assert_eq!(listed(&store, "old"), 3);
    let tx = store.conn.transaction().unwrap();
    postings::merge_all(&tx).unwrap();
    tx.commit().unwrap();
    assert_eq!(listed(&store, "old"), 1);
    assert_eq!(listed(&store, "cc"), 0);
    assert_eq!(grams_matching(&store, "old"), 1);
}

#[test]
fn an_append_extends_the_session_from_its_checkpoint() {
    let f = fixture();
    let mut store = Store::open(&f.db).unwrap();
    let mut rec = record(f.dir.path(), &key(1), 20);
    store
        .replace_session(&rec, &[line(0, "aa"), line(1, "bb")])
        .unwrap();
    std::fs::write(&rec.root_path, vec![b'x'; 40]).unwrap();
    let grown = vec![witness(&rec.root_path)];
    store
        .append_lines(&key(1), &grown, &[line(2, "aa cc"), line(3, "dd")])
        .unwrap();
    let row = store.session(&key(1)).unwrap().unwrap();
    assert_eq!(row.witnesses, grown);
    assert_eq!(row.bytes, 40);
    let seqs = |q: &str| -> Vec<u64> {
        store
            .matching_lines(&key(1), &toks(&[q]))
            .unwrap()
            .iter()
            .map(|l| l.line.seq)
            .collect()
    };
    assert_eq!(seqs("aa"), [0, 2]);
    assert_eq!(seqs("dd"), [3]);
    assert_eq!(
        store.lines(&key(1), 1..3).unwrap(),
        [
            LineRow {
                seq: 1,
                file: 0,
                offset: 10,
                len: 10,
                time: LineTime::At(Timestamp(1))
            },
            LineRow {
                seq: 2,
                file: 0,
                offset: 20,
                len: 10,
                time: LineTime::At(Timestamp(2))
            }
        ]
    );

    // A seq already stored, a witness it lacks, other files, an unknown session: refused,
    // and the store is as it was.
    let bad = store.append_lines(&key(1), &grown, &[line(3, "zz")]);
    assert!(matches!(bad, Err(StoreError::InvalidLine)));
    let mut far = line(4, "zz");
    far.file = 1;
    let bad = store.append_lines(&key(1), &grown, &[far]);
    assert!(matches!(bad, Err(StoreError::InvalidLine)));
    let elsewhere = vec![witness(&record(f.dir.path(), &key(9), 5).root_path)];
    let bad = store.append_lines(&key(1), &elsewhere, &[line(4, "zz")]);
    assert!(matches!(bad, Err(StoreError::WitnessMismatch)));
    let bad = store.append_lines(&key(2), &grown, &[line(4, "zz")]);
    assert!(matches!(bad, Err(StoreError::NotIndexed)));
    assert_eq!(grams_matching(&store, "zz"), 0);
    assert_eq!(store.session(&key(1)).unwrap().unwrap().witnesses, grown);

    rec.witnesses = grown;
    store.record_failure(&rec, "too_large").unwrap();
    let bad = store.append_lines(&key(1), &rec.witnesses, &[line(4, "zz")]);
    assert!(matches!(bad, Err(StoreError::NotIndexed)));
}

#[test]
fn a_failure_drops_the_lines_and_keeps_the_witnesses() {
    let f = fixture();
    let mut store = Store::open(&f.db).unwrap();
    let rec = record(f.dir.path(), &key(1), 20);
    store.replace_session(&rec, &[line(0, "aa")]).unwrap();
    store
        .replace_session(&record(f.dir.path(), &key(2), 7), &[line(0, "aa")])
        .unwrap();
    store.record_failure(&rec, "too_large").unwrap();
    let row = store.session(&key(1)).unwrap().unwrap();
    assert_eq!(row.state, SessionState::Failed);
    assert_eq!(row.reason.as_deref(), Some("too_large"));
    assert_eq!(row.witnesses, rec.witnesses);
    assert_eq!(row.bytes, 0);
    assert_eq!(grams_matching(&store, "aa"), 1);
    for reason in [
        "",
        "Too large",
        "contains a secret: hunter2",
        &"x".repeat(33),
    ] {
        assert!(matches!(
            store.record_failure(&rec, reason),
            Err(StoreError::InvalidReason)
        ));
    }
    let stats = store.stats().unwrap();
    assert_eq!(stats.sessions_indexed, 1);
    assert_eq!(stats.sessions_failed, 1);
    assert_eq!(stats.failures.get("too_large"), Some(&1));
    assert_eq!(stats.bytes_covered, 7);
    assert_eq!(stats.lines, 1);
    assert!(stats.last_update.is_some());
    assert!(stats.size_on_disk > 0);

    // A failed session indexed again is indexed.
    store.replace_session(&rec, &[line(0, "bb")]).unwrap();
    let row = store.session(&key(1)).unwrap().unwrap();
    assert_eq!((row.state, row.reason), (SessionState::Indexed, None));
}

#[test]
fn removal_cascades_to_witnesses_lines_and_tokens() {
    let f = fixture();
    let mut store = Store::open(&f.db).unwrap();
    for n in 1..=3 {
        let rec = record(f.dir.path(), &key(n), 10);
        store
            .replace_session(&rec, &[line(0, "aa"), line(1, &format!("k{n}"))])
            .unwrap();
    }
    assert!(store.remove_session(&key(1)).unwrap());
    assert!(!store.remove_session(&key(1)).unwrap());
    assert_eq!(grams_matching(&store, "aa"), 2);
    assert_eq!(grams_matching(&store, "k1"), 0);
    assert_eq!(count(&store, "witnesses"), 2);
    assert_eq!(count(&store, "lines"), 4);
    let removed = store
        .retain_sessions(|key, root| {
            assert!(root.ends_with(format!("{}.jsonl", key.id)));
            key.id != "s2"
        })
        .unwrap();
    assert_eq!(removed, 1);
    assert_eq!(grams_matching(&store, "aa"), 1);
    assert_eq!(grams_matching(&store, "k2"), 0);
    assert_eq!(count(&store, "witnesses"), 1);
    assert_eq!(count(&store, "lines"), 2);
    assert_eq!(
        store
            .sessions()
            .unwrap()
            .iter()
            .map(|s| s.key.clone())
            .collect::<Vec<_>>(),
        [key(3)]
    );
}

#[test]
fn an_interrupted_write_leaves_the_previous_state() {
    let f = fixture();
    let mut store = Store::open(&f.db).unwrap();
    let rec = record(f.dir.path(), &key(1), 10);
    store.replace_session(&rec, &[line(0, "before")]).unwrap();
    let before = store.session(&key(1)).unwrap();
    {
        let tx = store.conn.transaction().unwrap();
        let mut acc = postings::Accumulator::default();
        acc.reset(postings::id_floor(&tx).unwrap());
        write::replace(&tx, &mut acc, &rec, &[line(0, "after"), line(1, "after")]).unwrap();
        postings::flush(&tx, &mut acc).unwrap();
        write::failure(&tx, &rec, "unreadable").unwrap();
        // Dropped without commit, as when the process dies here.
    }
    assert_eq!(store.session(&key(1)).unwrap(), before);
    assert_eq!(grams_matching(&store, "before"), 1);
    assert_eq!(grams_matching(&store, "after"), 0);
    drop(store);
    let store = Store::open_with(&f.db, Check::Deep).unwrap();
    assert_eq!(store.session(&key(1)).unwrap(), before);
    assert_eq!(grams_matching(&store, "before"), 1);
}

#[test]
fn several_tokens_are_an_and() {
    let f = fixture();
    let mut store = Store::open(&f.db).unwrap();
    let a = record(f.dir.path(), &key(1), 10);
    let b = record(f.dir.path(), &key(2), 10);
    store
        .replace_session(
            &a,
            &[line(0, "aa bb"), line(1, "aa cc"), line(2, "bb cc aa")],
        )
        .unwrap();
    store
        .replace_session(&b, &[line(0, "bb"), line(1, "bb aa"), line(2, "AA")])
        .unwrap();
    let q = toks(&["aa", "bb"]);
    let seqs: Vec<u64> = store
        .matching_lines(&key(1), &q)
        .unwrap()
        .iter()
        .map(|l| l.line.seq)
        .collect();
    assert_eq!(seqs, [0, 2]);
    let keys = [key(2), key(7), key(1)];
    let census = store.census().unwrap();
    let located = store
        .located(&census, &census.positions(&keys), &q)
        .unwrap();
    let mut spans: Vec<_> = (located.spans.iter())
        .map(|s| (s.session, s.times))
        .collect();
    spans.sort_unstable_by_key(|(i, _)| *i);
    // Each session with candidates, with the times of the lines of the write that holds them
    // (key 2's candidate is at 1, its write's lines at 0 to 2); key 7 is not stored.
    let at = |n: i64| Some(Timestamp(n));
    assert_eq!(
        spans,
        [(0, Some((at(0), at(2)))), (2, Some((at(0), at(2))))]
    );
    assert!(store
        .matching_lines(&key(1), &toks(&["aa", "zz"]))
        .unwrap()
        .is_empty());
    // No token to require: every line is a candidate.
    assert_eq!(store.matching_lines(&key(1), &[]).unwrap().len(), 3);
}

#[test]
fn an_older_schema_is_replaced_by_an_empty_current_one() {
    let f = fixture();
    let mut store = Store::open(&f.db).unwrap();
    let rec = record(f.dir.path(), &key(1), 10);
    store.replace_session(&rec, &[line(1, "aa")]).unwrap();
    drop(store);
    let older = rusqlite::Connection::open(&f.db).unwrap();
    older
        .execute_batch(&format!("PRAGMA user_version = {};", SCHEMA_VERSION - 1))
        .unwrap();
    drop(older);

    let store = Store::open_with(&f.db, Check::Deep).unwrap();
    assert!(store.writable());
    assert_eq!(store.schema_version(), SCHEMA_VERSION);
    assert!(
        store.sessions().unwrap().is_empty(),
        "the old projection is dropped"
    );
    drop(store);
    let version: i64 = rusqlite::Connection::open(&f.db)
        .unwrap()
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version, SCHEMA_VERSION);
}

/// Four sessions of a thousand lines of fifty tokens each, drawn from a skewed vocabulary of
/// 4-character words, as hashed trigrams are: a few very common, most rare. The common tokens'
/// lists run to thousands of ids, past many skip entries, so a two-token AND seeks in both.
#[test]
fn a_bulk_write_finds_exactly_the_lines_holding_every_token() {
    const SESSIONS: u32 = 4;
    const PER_SESSION: u64 = 1000;
    const TOKENS: usize = 50;
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    let word = |n: u32| -> String {
        let mut n = n;
        (0..4)
            .map(|_| {
                let c = ALPHABET[(n % 36) as usize] as char;
                n /= 36;
                c
            })
            .collect()
    };
    let f = fixture();
    let mut store = Store::open(&f.db).unwrap();
    let mut rng = fastrand::Rng::with_seed(7);
    let texts: Vec<Vec<String>> = (0..SESSIONS)
        .map(|_| {
            (0..PER_SESSION)
                .map(|_| {
                    let mut t = String::with_capacity(TOKENS * 5);
                    for _ in 0..TOKENS {
                        // Cubing skews the draw towards small numbers: common tokens.
                        let r = rng.f64();
                        t.push_str(&word((r * r * r * 1_000_000.0) as u32));
                        t.push(' ');
                    }
                    t
                })
                .collect()
        })
        .collect();
    let lines: Vec<Vec<LineRecord<'static>>> = (texts.iter())
        .map(|text| {
            (text.iter().enumerate())
                .map(|(i, t)| line(i as u64, t))
                .collect()
        })
        .collect();
    for (n, lines) in lines.iter().enumerate() {
        let rec = record(f.dir.path(), &key(n as u32), 1);
        store.replace_session(&rec, lines).unwrap();
    }
    assert!(store.stats().unwrap().size_on_disk > 0);

    let keys: Vec<SessionKey> = (0..SESSIONS).map(key).collect();
    let mut found = 0;
    for pair in [[0, 1], [0, 2], [1, 3], [2, 7], [5, 900]] {
        let q = toks(&[&word(pair[0]), &word(pair[1])]);
        let mut sessions = Vec::new();
        for (n, lines) in lines.iter().enumerate() {
            let want: Vec<u64> = (lines.iter())
                .filter(|l| q.iter().all(|t| l.tokens.contains(t)))
                .map(|l| l.seq)
                .collect();
            let got: Vec<u64> = (store.matching_lines(&key(n as u32), &q).unwrap().iter())
                .map(|l| l.line.seq)
                .collect();
            assert_eq!(got, want, "{pair:?} in session {n}");
            if !want.is_empty() {
                sessions.push(n);
            }
            found += want.len();
        }
        let census = store.census().unwrap();
        let located = store
            .located(&census, &census.positions(&keys), &q)
            .unwrap();
        let mut spans: Vec<usize> = located.spans.iter().map(|s| s.session).collect();
        spans.sort_unstable();
        spans.dedup();
        assert_eq!(spans, sessions, "{pair:?}: the sessions located");
    }
    // The pairs are common enough that the check compares something.
    assert!(found > 200, "{found} lines hold a pair");
}

#[test]
fn clearing_drops_every_session_and_token_and_the_store_goes_on() {
    let f = fixture();
    let mut store = Store::open(&f.db).unwrap();
    let rec = record(f.dir.path(), &key(1), 10);
    store
        .replace_session(&rec, &[line(0, "old aa"), line(1, "cc")])
        .unwrap();
    store.clear().unwrap();
    assert_eq!(count(&store, "lines"), 0);
    assert_eq!(count(&store, "sessions"), 0);
    assert_eq!(
        grams_matching(&store, "old") + grams_matching(&store, "cc"),
        0
    );
    // The trigger that keeps lines and tokens together is back.
    store.replace_session(&rec, &[line(0, "new")]).unwrap();
    store.remove_session(&key(1)).unwrap();
    assert_eq!(grams_matching(&store, "new"), 0);
}

#[test]
fn many_small_writes_keep_few_segments_and_every_line() {
    let f = fixture();
    let mut store = Store::open(&f.db).unwrap();
    let mut merged = 0;
    for n in 0..40 {
        let rec = record(f.dir.path(), &key(n), 10);
        store
            .replace_session(&rec, &[line(0, "aa"), line(1, &format!("k{n} bb"))])
            .unwrap();
        store.compact().unwrap();
        // Every other session written again: its old lines' ids are garbage.
        if n % 2 == 1 {
            store
                .replace_session(&rec, &[line(0, &format!("k{n} aa"))])
                .unwrap();
            merged += usize::from(store.compact().unwrap());
        }
        let segments = count(&store, "segments");
        assert!(
            (1..=MAX_SEGMENTS as i64 + 1).contains(&segments),
            "{segments}"
        );
    }
    assert_eq!(grams_matching(&store, "aa"), 40);
    assert_eq!(grams_matching(&store, "bb"), 20);
    for n in 0..40 {
        let seqs: Vec<u64> = store
            .matching_lines(&key(n), &toks(&[&format!("k{n}")]))
            .unwrap()
            .iter()
            .map(|c| c.line.seq)
            .collect();
        assert_eq!(seqs, if n % 2 == 1 { vec![0] } else { vec![1] }, "{n}");
    }
    // What the merges kept of removed lines is bounded by the rule for them.
    assert!(merged > 0);
    assert!(listed(&store, "bb") < 40);
}

#[test]
fn a_merge_gives_the_pages_it_freed_back() {
    let f = fixture();
    let mut store = Store::open(&f.db).unwrap();
    let words: Vec<String> = (0..400).map(|i| format!("w{i}")).collect();
    let text = |n: usize| words[n % 7..].join(" ");
    let write = |store: &mut Store, n: u32| {
        let rec = record(f.dir.path(), &key(n), 10);
        let lines: Vec<_> = (0..300).map(|i| line(i, &text(i as usize))).collect();
        store.replace_session(&rec, &lines).unwrap();
    };
    for n in 0..3 {
        write(&mut store, n);
    }
    let pages = |store: &Store, pragma: &str| -> i64 {
        store.conn.query_row(pragma, [], |r| r.get(0)).unwrap()
    };
    let before = pages(&store, "PRAGMA page_count");
    // Every session again: the first lists hold only removed lines, and all are merged.
    for n in 0..3 {
        write(&mut store, n);
    }
    assert!(store.compact().unwrap());
    assert_eq!(pages(&store, "PRAGMA freelist_count"), 0);
    let after = pages(&store, "PRAGMA page_count");
    assert!(after * 4 <= before * 5, "{before} pages, then {after}");
    assert_eq!(grams_matching(&store, "w399"), 900);
    assert_eq!(listed(&store, "w399"), 900);
}

/// The catalog repeats the tables once an update seals it; any write of a session, its
/// witnesses or its ranges takes it away in the same transaction (a query then reads the
/// tables); a byte changed in it reads as damage, and one that disagrees with the tables fails
/// the deep check.
#[test]
fn the_catalog_repeats_the_tables_until_they_change() {
    let f = fixture();
    let mut store = Store::open(&f.db).unwrap();
    for n in 1..=3 {
        let rec = record(f.dir.path(), &key(n), 20);
        store
            .replace_session(&rec, &[line(0, "aa"), line(1, "bb")])
            .unwrap();
    }
    let sealed = |store: &mut Store| {
        store.seal_catalog().unwrap();
        assert_eq!(count(store, "catalog"), 1);
        let tables = store.census_of_tables().unwrap();
        assert_eq!(catalog::read(&store.conn).unwrap().as_ref(), Some(&tables));
        assert_eq!(store.census().unwrap(), tables);
        tables
    };
    let tables = sealed(&mut store);
    assert_eq!((tables.len(), tables.ranges.len()), (3, 3));
    let gone = |store: &Store| {
        assert_eq!(count(store, "catalog"), 0);
        assert_eq!(store.census().unwrap(), store.census_of_tables().unwrap());
    };
    let rec = record(f.dir.path(), &key(1), 40);
    store
        .append_lines(&key(1), &rec.witnesses, &[line(2, "cc")])
        .unwrap();
    gone(&store);
    assert_eq!(sealed(&mut store).ranges.len(), 4);
    store.remove_session(&key(2)).unwrap();
    gone(&store);
    sealed(&mut store);
    store
        .replace_session(&record(f.dir.path(), &key(4), 5), &[line(0, "dd")])
        .unwrap();
    gone(&store);
    let tables = sealed(&mut store);
    assert!(matches!(store.checked_deep(), Ok(true)));

    let body: Vec<u8> = (store.conn)
        .query_row("SELECT body FROM catalog", [], |r| r.get(0))
        .unwrap();
    let put = |body: &[u8]| {
        (store.conn)
            .execute("UPDATE catalog SET body = ?1", [body])
            .unwrap();
    };
    for i in (0..body.len()).step_by(7) {
        let mut changed = body.clone();
        changed[i] ^= 0x04;
        put(&changed);
        assert!(
            matches!(store.census(), Err(StoreError::Corrupt)),
            "byte {i} of {}",
            body.len()
        );
    }
    put(&body);
    assert_eq!(store.census().unwrap(), tables);

    // Sealed whole, but not what the tables hold: only the deep check can tell.
    let mut rows = tables.entries();
    rows[0].1.bytes += 1;
    let other = Census::new(&rows, tables.ranges.clone());
    catalog::write(&store.conn, &other).unwrap();
    assert!(matches!(store.checked_deep(), Ok(false)));
}

#[test]
fn a_token_list_hidden_by_damage_is_damage_not_an_absence() {
    let f = fixture();
    let mut store = Store::open(&f.db).unwrap();
    for (n, words) in [(1, "aa bb cc"), (2, "bb dd"), (3, "aa ee")] {
        let rec = record(f.dir.path(), &key(n), 10);
        store.replace_session(&rec, &[line(0, words)]).unwrap();
    }
    let lists = |store: &Store, words: &[&str]| {
        postings::candidates(&store.conn, &toks(words), 1..=i64::MAX as u64).map(|ids| ids.len())
    };
    assert_eq!(lists(&store, &["bb"]).unwrap(), 2);
    assert_eq!(lists(&store, &["aa", "bb"]).unwrap(), 1);
    // Absent everywhere, or from some segments only: proven so by each segment's chain.
    assert_eq!(lists(&store, &["zz"]).unwrap(), 0);
    assert_eq!(lists(&store, &["dd", "ee"]).unwrap(), 0);
    let row_of = |word: &str| -> i64 {
        store
            .conn
            .query_row(
                "SELECT key FROM postings WHERE key & 4294967295 = ?1 ORDER BY key LIMIT 1",
                [i64::from(tok(word))],
                |r| r.get(0),
            )
            .unwrap()
    };
    // A list whose key changed, or that is gone: the lookup misses it, the chain does not.
    let (bb, cc) = (row_of("bb"), row_of("cc"));
    store
        .conn
        .execute("UPDATE postings SET key = key + 1 WHERE key = ?1", [bb])
        .unwrap();
    assert!(lists(&store, &["bb"]).is_err());
    store
        .conn
        .execute("DELETE FROM postings WHERE key = ?1", [cc])
        .unwrap();
    assert!(lists(&store, &["cc"]).is_err());
    assert!(lists(&store, &["zz", "cc"]).is_err());
}

/// Each event's seq and counts of the terms asked for.
type Counts = Vec<(u64, Vec<u16>)>;

/// What the word lists count of `terms` in session `k`.
fn counted(store: &Store, k: u32, terms: &[&str]) -> Result<Option<Counts>, StoreError> {
    let census = store.census_of_tables()?;
    let hashes: Vec<u64> = terms.iter().map(|t| words::term_hash(t)).collect();
    let mut out = store.counted(&census, &[census.position(&key(k))], &hashes)?;
    Ok(out.pop().flatten().map(|c| {
        let counts = c.counts.chunks(terms.len().max(1)).map(<[u16]>::to_vec);
        c.events.iter().map(|e| e.seq).zip(counts).collect()
    }))
}

#[test]
fn word_lists_count_what_the_tokenizer_cuts_through_updates_and_merges() {
    let f = fixture();
    let mut store = Store::open(&f.db).unwrap();
    let (r1, r2) = (
        record(f.dir.path(), &key(1), 10),
        record(f.dir.path(), &key(2), 10),
    );
    store
        .replace_session(
            &r1,
            &[
                line(1, "deploying the deploy script"),
                line(2, "nothing here"),
                line(3, "flakyLoginTest deploy"),
            ],
        )
        .unwrap();
    store.replace_session(&r2, &[line(1, "deployed")]).unwrap();
    let terms = ["deploy", "login", "script"];
    let one = |store: &Store| counted(store, 1, &terms).unwrap().unwrap();
    let first = [(1, vec![2, 0, 1]), (3, vec![1, 1, 0])];
    assert_eq!(one(&store), first);
    assert_eq!(
        counted(&store, 2, &terms).unwrap().unwrap(),
        [(1, vec![1, 0, 0])]
    );
    // A line off the branch is none of the session's events; a session written anew has only
    // its new lines, before a merge drops the old ones' ids and after.
    let mut off = line(4, "deploy");
    off.branch = false;
    store
        .append_lines(&key(1), &[witness(&r1.root_path)], &[off])
        .unwrap();
    assert_eq!(one(&store), first);
    store
        .replace_session(&r2, &[line(1, "login"), line(2, "script")])
        .unwrap();
    let two = [(1, vec![0, 1, 0]), (2, vec![0, 0, 1])];
    assert_eq!(counted(&store, 2, &terms).unwrap().unwrap(), two);
    let tx = store.conn.transaction().unwrap();
    postings::merge_all(&tx).unwrap();
    tx.commit().unwrap();
    assert_eq!(one(&store), first);
    assert_eq!(counted(&store, 2, &terms).unwrap().unwrap(), two);
    postings::verify(&store.conn).unwrap();
}

#[test]
fn a_session_with_a_part_past_the_lists_is_read_instead() {
    let f = fixture();
    let mut store = Store::open(&f.db).unwrap();
    let rec = record(f.dir.path(), &key(1), 10);
    let mut far = Vec::new();
    let part = u32::try_from(words::PARTS).unwrap();
    encode_line([(part, history_core::Role::User, None, "deploy")], &mut far);
    let mut l = line(2, "deploy");
    l.words = Box::leak(far.into_boxed_slice());
    store
        .replace_session(&rec, &[line(1, "deploy"), l])
        .unwrap();
    assert_eq!(counted(&store, 1, &["deploy"]).unwrap(), None);
}

#[test]
fn a_word_row_missing_or_changed_is_damage() {
    for damage in [
        "DELETE FROM words WHERE key = (SELECT min(key) FROM words)",
        "UPDATE words SET list = zeroblob(length(list)) WHERE key = (SELECT min(key) FROM words)",
        "DELETE FROM words WHERE key = (SELECT max(key) FROM words)",
    ] {
        let f = fixture();
        let mut store = Store::open(&f.db).unwrap();
        let rec = record(f.dir.path(), &key(1), 10);
        store
            .replace_session(&rec, &[line(1, "deploy script")])
            .unwrap();
        assert!(counted(&store, 1, &["deploy"]).unwrap().is_some());
        store.conn.execute_batch(damage).unwrap();
        assert!(
            matches!(counted(&store, 1, &["deploy"]), Err(StoreError::Corrupt)),
            "{damage}"
        );
        assert!(postings::verify(&store.conn).is_err(), "{damage}");
    }
}

#[test]
fn a_session_read_until_a_stop_still_accounts_for_every_line() {
    let f = fixture();
    let mut store = Store::open(&f.db).unwrap();
    let rec = record(f.dir.path(), &key(1), 10);
    let lines: Vec<_> = (1..=6).map(|seq| line(seq, "aa bb")).collect();
    store.replace_session(&rec, &lines).unwrap();
    let ids = |store: &Store| {
        let census = store.census().unwrap();
        census.line_ids(census.position(&key(1)).unwrap())
    };
    let read = |store: &Store, stop: u64| {
        let mut seqs = Vec::new();
        let each = &mut |c: Candidate| {
            seqs.push(c.line.seq);
            c.line.seq < stop
        };
        store
            .each_line_of_session(&key(1), &ids(store), each)
            .map(|()| seqs)
    };
    assert_eq!(read(&store, 2).unwrap(), [1, 2]);
    assert_eq!(read(&store, 9).unwrap(), [1, 2, 3, 4, 5, 6]);
    // A later line's row that damage took away (no trigger noted it gone) is damage, though
    // its row is not read.
    store.conn.execute_batch("DROP TRIGGER lines_gone").unwrap();
    let taken = store.conn.execute("DELETE FROM lines WHERE seq = 5", []);
    assert_eq!(taken.unwrap(), 1);
    assert!(matches!(read(&store, 2), Err(StoreError::Corrupt)));
    assert!(matches!(read(&store, 9), Err(StoreError::Corrupt)));
}

#[test]
fn the_census_kept_is_read_again_once_the_index_changed() {
    let f = fixture();
    let mut writer = Store::open(&f.db).unwrap();
    let reader = Store::open(&f.db).unwrap();
    let rec = |n| record(f.dir.path(), &key(n), 10);
    writer.replace_session(&rec(1), &[line(1, "aa")]).unwrap();
    let first = reader.census_shared().unwrap();
    assert_eq!(first.len(), 1);
    // Unchanged: the same census, not read again.
    assert!(std::sync::Arc::ptr_eq(
        &first,
        &reader.census_shared().unwrap()
    ));
    // Changed by another connection, then by its own.
    writer.replace_session(&rec(2), &[line(1, "bb")]).unwrap();
    assert_eq!(reader.census_shared().unwrap().len(), 2);
    let mut reader = reader;
    reader.replace_session(&rec(3), &[line(1, "cc")]).unwrap();
    assert_eq!(reader.census_shared().unwrap().len(), 3);
    assert_eq!(*reader.census_shared().unwrap(), reader.census().unwrap());
}
