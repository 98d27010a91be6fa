//! The decoder over its fixtures: the log's newest turn is read without a byte of OpenCode's
//! files changing, the ways SQLite itself would open them fall short, and the conformance kit.

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use decode_opencode::OpenCode;
use history_core::Transcript;

/// `rules`: a session per rule; `wal`: a database whose last turn is only in its log.
fn fixtures(name: &str) -> PathBuf {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures");
    match name {
        "wal" => fixtures.join("opencode-wal/data"),
        _ => fixtures.join("opencode/data"),
    }
}

/// Every file in `dir` with its bytes and times (access included).
fn state(dir: &Path) -> BTreeMap<String, (Vec<u8>, i64, i64, i64, i64)> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let m = std::fs::metadata(e.path()).unwrap();
            let name = e.file_name().to_string_lossy().into_owned();
            // Read as the decoder reads, so that this read moves no access time either.
            let mut bytes = Vec::new();
            std::io::Read::read_to_end(
                &mut history_core::open_untouched(&e.path()).unwrap(),
                &mut bytes,
            )
            .unwrap();
            (
                name,
                (
                    bytes,
                    m.atime_nsec() + m.atime() * 1_000_000_000,
                    m.mtime(),
                    m.mtime_nsec(),
                    m.ino() as i64,
                ),
            )
        })
        .collect()
}

/// The `wal` fixture in a directory of its own, with or without its `-shm`, read-only or not.
fn copy_wal(shm: bool) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    for name in ["opencode.db", "opencode.db-wal", "opencode.db-shm"] {
        if name.ends_with("-shm") && !shm {
            continue;
        }
        std::fs::copy(fixtures("wal").join(name), tmp.path().join(name)).unwrap();
    }
    // Times in the past, so that an access the reader made would show.
    for e in std::fs::read_dir(tmp.path()).unwrap() {
        let path = e.unwrap().path();
        let old = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_700_000_000);
        let f = std::fs::File::options().write(true).open(&path).unwrap();
        f.set_times(
            std::fs::FileTimes::new()
                .set_accessed(old)
                .set_modified(old),
        )
        .unwrap();
    }
    tmp
}

fn texts(root: &Path) -> Vec<String> {
    let opencode = OpenCode::new(root);
    let files = opencode.discover();
    assert_eq!(files.len(), 1);
    let mut texts = Vec::new();
    opencode
        .decode(&files[0], &mut |e| texts.push(e.text), None)
        .unwrap();
    texts
}

#[test]
fn the_newest_turn_in_the_log_is_read_and_nothing_is_written() {
    for shm in [true, false] {
        let tmp = copy_wal(shm);
        let before = state(tmp.path());
        let texts = texts(tmp.path());
        assert_eq!(
            texts,
            [
                "wal-first-prompt",
                "wal-first-answer",
                "wal-newest-prompt",
                "The newest answer, only in the log."
            ],
            "with -shm: {shm}"
        );
        // No byte of the database, its log or its index changed, no time moved, and no file
        // (a -shm, a journal) was created.
        assert_eq!(state(tmp.path()), before, "with -shm: {shm}");
    }
}

#[test]
fn the_log_applied_in_memory_equals_sqlite_reading_a_copy() {
    let tmp = copy_wal(true);
    let conn = rusqlite::Connection::open(tmp.path().join("opencode.db")).unwrap();
    let parts: Vec<String> = conn
        .prepare("SELECT data FROM part ORDER BY id")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let texts_sqlite: Vec<String> = parts
        .iter()
        .map(|d| {
            serde_json::from_str::<serde_json::Value>(d).unwrap()["text"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(texts(&fixtures("wal")), texts_sqlite);
}

/// Why the database is not opened by SQLite: each mode that leaves the files alone on paper
/// fails the test above, so that test would catch a reader that used one.
#[test]
fn sqlite_s_own_read_only_modes_fall_short() {
    use rusqlite::{Connection, OpenFlags};
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_URI;
    let count = |conn: &Connection| -> rusqlite::Result<i64> {
        conn.query_row("SELECT count(*) FROM message", [], |r| r.get(0))
    };
    // immutable=1 writes nothing, but ignores the log: the newest turn is missing.
    let tmp = copy_wal(true);
    let uri = format!(
        "file:{}?immutable=1",
        tmp.path().join("opencode.db").display()
    );
    let conn = Connection::open_with_flags(&uri, flags).unwrap();
    assert_eq!(count(&conn).unwrap(), 2);
    drop(conn);
    // mode=ro reads the log, but through a -shm it creates when there is none.
    let tmp = copy_wal(false);
    let before = state(tmp.path());
    let uri = format!("file:{}?mode=ro", tmp.path().join("opencode.db").display());
    let conn = Connection::open_with_flags(&uri, flags).unwrap();
    assert_eq!(count(&conn).unwrap(), 4);
    drop(conn);
    assert_ne!(
        state(tmp.path()),
        before,
        "mode=ro left the directory as it was"
    );
    assert!(tmp.path().join("opencode.db-shm").exists());
}

#[test]
fn the_fixtures_keep_the_transcript_rules() {
    for root in ["rules", "wal"] {
        history_core::testing::check(&decode_opencode::HARNESS, &fixtures(root));
    }
}
