//! The search index under faults, through the binary: a database with bytes changed in random
//! pages, with a damaged or truncated write-ahead log, truncated itself, or rebuilt by
//! `reindex` while searches run. Every search answers as `--no-index` does, and the next
//! `index` leaves a database that answers from the index again.
#![cfg(target_os = "linux")]

use std::fs;
use std::path::{Path, PathBuf};

use crate::common::{Roots, Run};
use crate::index::{comparable, coverage, doctor, index, quarantines, roots, Guard};
use history_index::store::{checkpoint_blocks, Store, CHECKPOINT_WINDOW};
use serde_json::Value;

/// Searches of every kind the index answers: a frequent word from either end, a phrase, a role.
const SEARCHES: [&[&str]; 4] = [
    &["list", "--query", "the", "--json", "--limit", "8"],
    &[
        "list", "--query", "the", "--json", "--from", "oldest", "--limit", "3",
    ],
    &["list", "--query", "prefix twin", "--json"],
    &["list", "--query", "login", "--role", "user", "--json"],
];

/// The database page size ([`history_index::store`]'s schema).
const PAGE: u64 = 16 * 1024;

/// A WAL frame: its header and one page.
const FRAME: u64 = 24 + PAGE;

/// A number from the environment, or `default`: `cargo xtask faults` runs these tests with other
/// seeds (`NOTESOUP_FAULT_SEED`) and more random pages (`NOTESOUP_FAULT_FLIPS`).
fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// The answers without the index.
fn expected(roots: &Roots) -> Vec<Value> {
    (SEARCHES.iter())
        .map(|args| {
            let mut all = vec!["--no-index"];
            all.extend_from_slice(args);
            comparable(&roots.run(&all))
        })
        .collect()
}

/// A search with the index read but never updated in the background, so that what it met
/// stays for the next one.
fn search(roots: &Roots, args: &[&str]) -> Run {
    roots.run_with(args, &[("NOTESOUP_HISTORY_INDEX", "read")])
}

/// Checks every search against `expected`; how many sessions the index answered for.
fn searches_agree(roots: &Roots, expected: &[Value], what: &str) -> u64 {
    let mut from_index = 0;
    for (args, want) in SEARCHES.iter().zip(expected) {
        let run = search(roots, args);
        assert!(run.code == 0 || run.code == 1, "{what} {args:?}: {run:?}");
        assert!(!run.stderr.contains("panic"), "{what}: {}", run.stderr);
        assert_eq!(&comparable(&run), want, "{what} {args:?}: wrong answer");
        from_index += coverage(&run).0;
    }
    from_index
}

/// The database and its log as a copy to start each fault from.
struct Saved {
    db: Vec<u8>,
    wal: Option<Vec<u8>>,
}

fn companion(db: &Path, suffix: &str) -> PathBuf {
    let mut name = db.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

impl Saved {
    fn of(db: &Path) -> Saved {
        Saved {
            db: fs::read(db).unwrap(),
            wal: fs::read(companion(db, "-wal"))
                .ok()
                .filter(|w| !w.is_empty()),
        }
    }

    /// Puts the copy back in place, with no shared memory, note or quarantine beside it.
    fn restore(&self, db: &Path) {
        for entry in fs::read_dir(db.parent().unwrap()).unwrap().flatten() {
            fs::remove_file(entry.path()).unwrap();
        }
        fs::write(db, &self.db).unwrap();
        if let Some(wal) = &self.wal {
            fs::write(companion(db, "-wal"), wal).unwrap();
        }
    }
}

/// Changes 1 to 8 bytes of `bytes` within `len` bytes from `start`.
fn flip(rng: &mut fastrand::Rng, bytes: &mut [u8], start: u64, len: u64) {
    let end = (start + len).min(bytes.len() as u64);
    for _ in 0..rng.usize(1..=8) {
        let at = rng.u64(start..end) as usize;
        bytes[at] ^= rng.u8(1..=255);
    }
}

/// One fault: `damage` changes the saved files, put back in place; searches must answer as
/// without the index, `index` must succeed, and afterwards every session must be answered from
/// the index again.
fn fault(
    roots: &Roots,
    saved: &Saved,
    expected: &[Value],
    all: u64,
    what: &str,
    damage: impl FnOnce(&Path),
) {
    let db = roots.index_db();
    saved.restore(&db);
    damage(&db);
    searches_agree(roots, expected, what);
    let run = roots.run_indexed(&["index"]);
    assert_eq!(run.code, 0, "{what}: {run:?}");
    let from_index = searches_agree(roots, expected, what);
    assert_eq!(
        from_index, all,
        "{what}: not every session is answered from the index again"
    );
}

/// The fixtures indexed; the answers without the index; and how many sessions the searches
/// answer from the index, in total, when it is whole (every search must use it).
fn indexed() -> (Roots, Vec<Value>, u64) {
    let roots = roots();
    index(&roots);
    let expected = expected(&roots);
    let all = searches_agree(&roots, &expected, "whole");
    assert!(all > 0);
    (roots, expected, all)
}

#[test]
fn bytes_changed_in_any_page_of_the_database_never_change_an_answer() {
    let (roots, expected, all) = indexed();
    let _guard = Guard(&roots);
    let db = roots.index_db();
    let saved = Saved::of(&db);
    let pages = saved.db.len() as u64 / PAGE;
    assert!(pages > 4, "{pages} pages");
    let mut rng = fastrand::Rng::with_seed(env_number("NOTESOUP_FAULT_SEED", 24));
    // Every page once, then random ones.
    let flips = env_number("NOTESOUP_FAULT_FLIPS", 8);
    let picks: Vec<u64> = (0..pages)
        .chain((0..flips).map(|_| rng.u64(0..pages)))
        .collect();
    for page in picks {
        let mut bytes = saved.db.clone();
        flip(&mut rng, &mut bytes, page * PAGE, PAGE);
        fault(
            &roots,
            &saved,
            &expected,
            all,
            &format!("page {page}"),
            |db| fs::write(db, &bytes).unwrap(),
        );
    }
}

#[test]
fn a_truncated_database_never_changes_an_answer() {
    let (roots, expected, all) = indexed();
    let _guard = Guard(&roots);
    let db = roots.index_db();
    let saved = Saved::of(&db);
    let len = saved.db.len() as u64;
    let mut rng = fastrand::Rng::with_seed(env_number("NOTESOUP_FAULT_SEED", 7));
    for cut in [0, 100, PAGE, len / 2, len - PAGE, len - 1, rng.u64(1..len)] {
        fault(
            &roots,
            &saved,
            &expected,
            all,
            &format!("cut at {cut}"),
            |db| fs::write(db, &saved.db[..cut as usize]).unwrap(),
        );
    }
}

/// The fixtures indexed but for one session of each harness, then those indexed too by an
/// `index` whose writes stay in the write-ahead log, as a crash would leave them: the database
/// and its log, saved.
fn with_pending_log() -> (Roots, Vec<Value>, u64, Saved) {
    let (roots, _, all) = indexed();
    let db = roots.index_db();
    // Sessions the log holds: appended to, so that they are indexed again.
    for (_, root) in roots.roots() {
        // OpenCode's database is no file of lines to append to.
        let Some(newest) = newest_file(root) else {
            continue;
        };
        let mut bytes = fs::read(&newest).unwrap();
        let line = bytes[..bytes.len() - 1]
            .rsplit(|b| *b == b'\n')
            .next()
            .unwrap()
            .to_vec();
        bytes.extend_from_slice(&line);
        bytes.push(b'\n');
        fs::write(&newest, &bytes).unwrap();
    }
    let expected = expected(&roots);
    // A connection held open keeps `index` from folding its log into the database as it ends.
    let holder = Store::open(&db).unwrap();
    index(&roots);
    let saved = Saved::of(&db);
    drop(holder);
    assert!(saved.wal.is_some(), "no log was left");
    (roots, expected, all, saved)
}

/// The most recently modified transcript file of lines under `root`.
fn newest_file(root: &Path) -> Option<PathBuf> {
    let mut files = Vec::new();
    let mut dirs = vec![root.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in fs::read_dir(dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "jsonl") {
                let mtime = entry.metadata().unwrap().modified().unwrap();
                files.push((mtime, path));
            }
        }
    }
    files.sort();
    files.pop().map(|(_, path)| path)
}

#[test]
fn a_damaged_or_truncated_log_never_changes_an_answer() {
    let (roots, expected, all, saved) = with_pending_log();
    let _guard = Guard(&roots);
    let wal = saved.wal.clone().unwrap();
    let frames = (wal.len() as u64 - 32) / FRAME;
    assert!(frames > 0);
    // The log as it is: read through, it answers as the transcripts do.
    fault(&roots, &saved, &expected, all, "log as left", |_| {});
    let mut rng = fastrand::Rng::with_seed(env_number("NOTESOUP_FAULT_SEED", 11));
    let picks: Vec<u64> = (0..frames)
        .chain((0..4).map(|_| rng.u64(0..frames)))
        .collect();
    for frame in picks {
        let mut bytes = wal.clone();
        flip(&mut rng, &mut bytes, 32 + frame * FRAME, FRAME);
        fault(
            &roots,
            &saved,
            &expected,
            all,
            &format!("log frame {frame}"),
            |db| fs::write(companion(db, "-wal"), &bytes).unwrap(),
        );
    }
    let len = wal.len() as u64;
    for cut in [0, 20, 32 + FRAME / 2, len / 2, len - 1] {
        fault(
            &roots,
            &saved,
            &expected,
            all,
            &format!("log cut at {cut}"),
            |db| fs::write(companion(db, "-wal"), &wal[..cut as usize]).unwrap(),
        );
    }
    // Both damaged: a page of the database and a frame of the log.
    let mut db_bytes = saved.db.clone();
    let pages = db_bytes.len() as u64 / PAGE;
    let page = rng.u64(1..pages);
    flip(&mut rng, &mut db_bytes, page * PAGE, PAGE);
    let mut wal_bytes = wal.clone();
    let frame = rng.u64(0..frames);
    flip(&mut rng, &mut wal_bytes, 32 + frame * FRAME, FRAME);
    fault(&roots, &saved, &expected, all, "both", |db| {
        fs::write(db, &db_bytes).unwrap();
        fs::write(companion(db, "-wal"), &wal_bytes).unwrap();
    });
}

#[test]
fn damage_a_search_meets_is_healed_by_the_update_it_starts() {
    let (roots, expected, all) = indexed();
    let _guard = Guard(&roots);
    let db = roots.index_db();
    let saved = Saved::of(&db);
    // Damage inside a row, where no page structure notices: the last page holds rows.
    let mut bytes = saved.db.clone();
    let pages = bytes.len() as u64 / PAGE;
    let mut rng = fastrand::Rng::with_seed(env_number("NOTESOUP_FAULT_SEED", 3));
    let before = quarantines(&db).len();
    let mut healed = false;
    for page in (1..pages).rev() {
        bytes.clone_from(&saved.db);
        flip(&mut rng, &mut bytes, page * PAGE + PAGE / 2, PAGE / 2);
        saved.restore(&db);
        fs::write(&db, &bytes).unwrap();
        // A search with background updates on, as a user has it.
        for (args, want) in SEARCHES.iter().zip(&expected) {
            let run = roots.run_indexed(args);
            assert_eq!(&comparable(&run), want, "page {page} {args:?}");
        }
        roots.wait_background();
        if quarantines(&db).len() > before {
            healed = true;
            break;
        }
    }
    assert!(healed, "no damage was met and healed");
    let run = searches_agree(&roots, &expected, "healed");
    assert_eq!(run, all);
    let d = doctor(&roots);
    assert!(d["quarantined"].as_u64().unwrap() >= 1, "{d}");
}

#[test]
fn searches_while_reindex_and_index_run_answer_as_without_the_index() {
    let roots = Roots::with_samples();
    let _guard = Guard(&roots);
    index(&roots);
    let expected = expected(&roots);
    let done = std::sync::atomic::AtomicBool::new(false);
    let (searches, during) = std::thread::scope(|scope| {
        let rebuilding = scope.spawn(|| {
            for round in 0..30 {
                let args: &[&str] = if round % 3 == 2 {
                    &["index"]
                } else {
                    &["reindex"]
                };
                let run = roots.run_indexed(args);
                assert_eq!(run.code, 0, "{args:?}: {run:?}");
            }
            done.store(true, std::sync::atomic::Ordering::SeqCst);
        });
        let (mut searches, mut during) = (0, 0);
        while !done.load(std::sync::atomic::Ordering::SeqCst) {
            for (args, want) in SEARCHES.iter().zip(&expected) {
                let running = !done.load(std::sync::atomic::Ordering::SeqCst);
                let run = search(&roots, args);
                assert_eq!(&comparable(&run), want, "{args:?} during a rebuild");
                searches += 1;
                during += usize::from(running);
            }
        }
        rebuilding.join().unwrap();
        (searches, during)
    });
    // The searches met the rebuilds in progress, and the index in use.
    assert!(
        during >= 8,
        "{during} of {searches} searches ran during a rebuild"
    );
    let from_index = searches_agree(&roots, &expected, "after");
    assert!(from_index > 0);
    // Nothing read meanwhile was taken for damage: no database was moved aside.
    let d = doctor(&roots);
    assert_eq!(d["quarantined"].as_u64(), Some(0), "{d}");
}

/// The first event of a harness's sessions (by `every_role` over `<harness>:*`) whose text holds
/// a word of 7 or more letters, with its path, where the word lies in that file, and the word.
fn a_word_in_the_middle(roots: &Roots, harness: &str) -> (PathBuf, usize, String) {
    let pattern = format!("{harness}:*");
    let run = roots.run(&crate::common::every_role(&pattern, &["--no-index"]));
    let page = run.json();
    let items = page["items"].as_array().unwrap();
    // From the middle of the page on: a line neither first nor last of its file.
    for item in items.iter().skip(items.len() / 2) {
        let (Some(path), Some(offset), Some(len)) = (
            item["path"].as_str(),
            item["byte_offset"].as_u64(),
            item["byte_len"].as_u64(),
        ) else {
            continue;
        };
        let path = PathBuf::from(path.replace("[ROOT]", &roots.dir.path().display().to_string()));
        let Some(word) = (item["text"]
            .as_str()
            .unwrap()
            .split(|c: char| !c.is_ascii_lowercase()))
        .find(|w| w.len() >= 7) else {
            continue;
        };
        let bytes = fs::read(&path).unwrap();
        let line = &bytes[offset as usize..(offset + len) as usize];
        if let Some(at) = line.windows(word.len()).position(|w| w == word.as_bytes()) {
            return (path, offset as usize + at, word.to_string());
        }
    }
    panic!("no word to rewrite in {harness}'s sessions");
}

/// Rewrites `n` letters of the transcript at `path` from `at` with letters no fixture holds
/// (`seed` varies them), keeping its size and putting its modification time back; the letters.
fn rewrite_at_its_size(path: &Path, at: usize, n: usize, seed: usize) -> String {
    let new: String = (0..n).map(|i| ['q', 'x', 'z'][(i + seed) % 3]).collect();
    let mtime = fs::metadata(path).unwrap().modified().unwrap();
    let mut bytes = fs::read(path).unwrap();
    let size = bytes.len();
    bytes[at..at + n].copy_from_slice(new.as_bytes());
    fs::write(path, &bytes).unwrap();
    let file = fs::File::options().write(true).open(path).unwrap();
    file.set_modified(mtime).unwrap();
    assert_eq!(fs::metadata(path).unwrap().len() as usize, size);
    new
}

/// Checks that a search for `new` answers as without the index, before `index` and, from the
/// index, after it.
fn found_before_and_after_index(roots: &Roots, new: &str, what: &str) {
    let args = ["list", "--query", new, "--json"];
    let mut plain = vec!["--no-index"];
    plain.extend_from_slice(&args);
    let want = comparable(&roots.run(&plain));
    assert!(
        !want["items"].as_array().unwrap().is_empty(),
        "{what}: {want}"
    );
    assert_eq!(
        comparable(&search(roots, &args)),
        want,
        "{what}, before index"
    );
    index(roots);
    let after = search(roots, &args);
    assert_eq!(comparable(&after), want, "{what}, after index");
    assert_eq!(
        coverage(&after).1,
        0,
        "{what}: a session is still read in full"
    );
}

#[test]
fn a_transcript_rewritten_at_its_size_with_its_time_put_back_is_read_again() {
    let roots = roots();
    let _guard = Guard(&roots);
    for harness in ["claude", "codex", "pi"] {
        index(&roots);
        let (path, at, word) = a_word_in_the_middle(&roots, harness);
        let new = rewrite_at_its_size(&path, at, word.len(), 0);
        found_before_and_after_index(&roots, &new, harness);
    }
    // A long one, rewritten between the blocks the checkpoint hash samples: only its change
    // time tells that it was rewritten.
    let (id, _) = roots.big_session(300_000);
    index(&roots);
    let path = roots.root("claude").join(format!("-w-big/{id}.jsonl"));
    let bytes = fs::read(&path).unwrap();
    let len = bytes.len() as u64;
    let sampled =
        |at: u64| checkpoint_blocks(len).any(|b| at + 7 > b && at < b + CHECKPOINT_WINDOW);
    let unsampled_from = |from: usize| {
        (from..)
            .find(|&at| {
                !sampled(at as u64)
                    && bytes[at - 1] != b'\\'
                    && bytes[at..at + 7].iter().all(u8::is_ascii_lowercase)
            })
            .unwrap()
    };
    let new = rewrite_at_its_size(&path, unsampled_from(len as usize / 2), 7, 0);
    found_before_and_after_index(&roots, &new, "a long transcript");
    // Rewritten again while `index` reads it: whether it read the file before or after, what it
    // keeps is never the old text.
    let mut running = crate::index_faults::command(&roots, crate::index_faults::BIN)
        .arg("index")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let new = rewrite_at_its_size(&path, unsampled_from(len as usize * 3 / 4), 7, 1);
    assert!(running.wait().unwrap().success());
    found_before_and_after_index(&roots, &new, "a long transcript rewritten during index");
}
