//! The search index through the binary, as a user has it: searches answered with
//! it equal searches answered without it (`--no-index`), however the transcripts change under it
//! and whatever state its database is in; it never stores or prints what the transcripts say;
//! a search brings it up to date in the background; and no run ever changes a transcript
//! (every run goes through [`Roots`], which checks their bytes and times around it).
//!
//! Background updates are found through `/proc`, so these tests are Linux only.
#![cfg(target_os = "linux")]

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::common::{every_role, Roots, Run};
use history_raw::fold;
use serde_json::{json, Value};

/// The one fixture session no decoder can read (it has no leaf): it is recorded as failed and
/// scanned by every search, so each search with the index on would start a background update.
/// Tests that count what the index covers work without it.
const UNDECODABLE: &str = "claude/-w-app/no-leaf.jsonl";

/// The fixtures, without the undecodable session, and without OpenCode's database, whose
/// sessions of records the index never holds (every search scans them): the tests that count
/// what the index covers count lines. [`with_opencode`] keeps it.
pub(crate) fn roots() -> Roots {
    let roots = with_opencode();
    let opencode = roots.root("opencode").to_path_buf();
    fs::remove_dir_all(&opencode).unwrap();
    fs::create_dir_all(&opencode).unwrap();
    roots
}

/// The fixtures, without the undecodable session.
pub(crate) fn with_opencode() -> Roots {
    let roots = Roots::new();
    fs::remove_file(roots.dir.path().join(UNDECODABLE)).unwrap();
    roots
}

/// How many sessions the OpenCode fixtures hold: a search over all of them scans them.
const OPENCODE_SESSIONS: u64 = 15;

/// Waits for any background update before the temporary directory goes, even when a test fails.
pub(crate) struct Guard<'a>(pub(crate) &'a Roots);

impl Drop for Guard<'_> {
    fn drop(&mut self) {
        let start = Instant::now();
        while self.0.background_running() && start.elapsed() < Duration::from_secs(30) {
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

/// A page without what legitimately differs between the index and a scan.
pub(crate) fn comparable(run: &Run) -> Value {
    let mut v = run.json();
    if let Some(o) = v.as_object_mut() {
        o.remove("coverage");
        o.remove("notice");
    }
    v
}

/// `(from_index, scanned)` of a search page.
pub(crate) fn coverage(run: &Run) -> (u64, u64) {
    let v = run.json();
    let c = &v["coverage"];
    assert!(c.is_object(), "no coverage in {}", run.stdout);
    (
        c["from_index"].as_u64().unwrap(),
        c["scanned"].as_u64().unwrap(),
    )
}

/// Runs a search with the index on and with `--no-index`, checks that they agree (the index's
/// notice and coverage aside: what they take of the budget is the same either way), waits for
/// any background update the first started, and returns the first's coverage.
pub(crate) fn same_both_ways(roots: &Roots, args: &[&str]) -> (u64, u64) {
    let with = roots.run_indexed(args);
    roots.wait_background();
    let mut plain: Vec<String> = vec!["--no-index".into()];
    plain.extend(args.iter().map(|a| a.to_string()));
    let without = roots.run_indexed(&plain.iter().map(String::as_str).collect::<Vec<_>>());
    assert_ne!(with.code, 2, "{args:?}: {with:?}");
    assert_eq!(with.code, without.code, "{args:?}: {with:?} / {without:?}");
    assert!(!with.stderr.contains("panic"), "{args:?}: {}", with.stderr);
    assert_eq!(
        comparable(&with),
        comparable(&without),
        "{args:?} differs with the index:\n{}\nwithout:\n{}",
        with.stdout,
        without.stdout
    );
    assert!(
        without.json().get("coverage").is_some(),
        "{args:?}: --no-index has no coverage"
    );
    coverage(&with)
}

/// `doctor --json` with the index on.
pub(crate) fn doctor(roots: &Roots) -> Value {
    let run = roots.run_indexed(&["doctor", "--json"]);
    assert_eq!(run.code, 0, "{run:?}");
    run.json()
}

pub(crate) fn index(roots: &Roots) -> Run {
    let run = roots.run_indexed(&["index"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stderr.is_empty(), "{run:?}");
    run
}

/// How many sessions a search over everything considers.
fn session_count(roots: &Roots) -> u64 {
    let run = roots.run_indexed(&["--no-index", "list", "--query", "zz", "--json"]);
    let (a, b) = coverage(&run);
    a + b
}

/// One event as the fixtures hold it.
pub(crate) struct Text {
    pub(crate) text: String,
    timestamp: Option<String>,
}

/// Every event's text of every session, every branch, read without the index.
pub(crate) fn texts(roots: &Roots) -> Vec<Text> {
    let overview = roots.run(&["list", "--limit", "1000", "--budget", "100000000", "--json"]);
    let mut out = Vec::new();
    for item in overview.json()["items"].as_array().unwrap() {
        let session = item["session"].as_str().unwrap();
        let run = roots.run(&every_role(
            session,
            &["--all-branches", "--budget", "100000000"],
        ));
        for e in run.json()["items"].as_array().into_iter().flatten() {
            out.push(Text {
                text: e["text"].as_str().unwrap_or_default().to_string(),
                timestamp: e["timestamp"].as_str().map(str::to_string),
            });
        }
    }
    out.retain(|t| !t.text.is_empty());
    out
}

fn is_cjk(c: char) -> bool {
    matches!(c, '\u{3040}'..='\u{30ff}' | '\u{3400}'..='\u{4dbf}' | '\u{4e00}'..='\u{9fff}' | '\u{ac00}'..='\u{d7af}')
}

/// A random piece of `text` of `len` characters or fewer, from a random start (a space before
/// it, for phrases, when `at_word`).
fn piece(rng: &mut fastrand::Rng, text: &str, len: usize, at_word: bool) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut start = rng.usize(..chars.len());
    if at_word {
        if let Some(i) = (start..chars.len()).find(|&i| i > 0 && chars[i - 1] == ' ') {
            start = i;
        }
    }
    chars[start..(start + len).min(chars.len())]
        .iter()
        .collect()
}

/// Changes of case and spellings that fold alike: `ss` as ß or ẞ, `fi` as the ligature, `k`
/// as the Kelvin sign; and the other way round.
fn disguise(rng: &mut fastrand::Rng, q: &str) -> String {
    let mut q: String = q
        .chars()
        .map(|c| match rng.u8(..4) {
            0 => c
                .to_uppercase()
                .next()
                .filter(|u| u.len_utf8() == c.len_utf8())
                .unwrap_or(c),
            1 => c
                .to_lowercase()
                .next()
                .filter(|u| u.len_utf8() == c.len_utf8())
                .unwrap_or(c),
            _ => c,
        })
        .collect();
    if rng.bool() {
        q = q.replacen("ss", if rng.bool() { "ß" } else { "ẞ" }, 1);
        q = q.replacen("SS", "ẞ", 1);
        q = q.replacen(
            "ß",
            if rng.bool() { "ss" } else { "SS" },
            usize::from(rng.bool()),
        );
    }
    if rng.bool() {
        q = q
            .replacen("fi", "ﬁ", 1)
            .replacen("ﬁ", "FI", usize::from(rng.bool()));
    }
    if rng.bool() {
        q = q.replacen('k', "\u{212a}", 1).replacen('K', "\u{212a}", 1);
    }
    q
}

/// A random query over `texts`, and whether the index can answer it (3 folded characters or
/// more, or two CJK ones) or it must be scanned (`None`: either may do).
fn query(rng: &mut fastrand::Rng, texts: &[Text], cjk: &[usize]) -> (String, Option<bool>) {
    let t = &texts[rng.usize(..texts.len())].text;
    let cut = |rng: &mut fastrand::Rng, lens: std::ops::RangeInclusive<usize>, at_word: bool| {
        let len = rng.usize(lens);
        piece(rng, t, len, at_word)
    };
    let q = match rng.u8(..20) {
        0..=2 => cut(rng, 1..=2, false),
        3..=10 => {
            let p = cut(rng, 3..=10, false);
            disguise(rng, &p)
        }
        11..=15 => {
            let p = cut(rng, 8..=30, true);
            disguise(rng, &p)
        }
        16 if !cjk.is_empty() => {
            let t = &texts[cjk[rng.usize(..cjk.len())]].text;
            let chars: Vec<char> = t.chars().collect();
            let starts: Vec<usize> = (0..chars.len()).filter(|&i| is_cjk(chars[i])).collect();
            let s = starts[rng.usize(..starts.len())];
            let len = rng.usize(2..=4);
            chars[s..(s + len).min(chars.len())].iter().collect()
        }
        17 => format!("zq{}xv", rng.u32(..1_000_000)),
        _ => {
            let p = cut(rng, 3..=6, false);
            disguise(rng, &p)
        }
    };
    let folded: Vec<char> = fold(&q).chars().collect();
    let answerable = match folded.len() {
        0..=1 => Some(false),
        // Two CJK characters make a bigram token (which characters count is the index's to say).
        2 if folded.iter().all(|c| !c.is_ascii()) => None,
        2 => Some(false),
        _ => Some(true),
    };
    (q, answerable)
}

/// Texts the fixtures lack: CJK, spellings that fold alike (ß, ẞ, ﬁ, the Kelvin sign), and
/// the same as JSON escapes, which the index must see decoded as the matcher does.
const FOLDING: [&str; 6] = [
    r#"東京都の天気は晴れ、明日は大阪で会議があります"#,
    r#"日本語のテキストと中文文本混在 with Latin words"#,
    r#"Die Straße heißt GROẞE Allee; ﬁnal ﬁle of 5 \u212a at 300K"#,
    r#"\u6771\u4eac\u306e\u5929\u6c17 and Stra\u00dfe, \ufb01nally \u212aelvin"#,
    r#"tab\tseparated \\u0041 \"quoted\" line\nbreak"#,
    r#"Ωμέγα ΣΊΣΥΦΟΣ σίσυφος ς İstanbul ǅemal"#,
];

/// A Claude session of one user line per text of [`FOLDING`].
fn plant_folding(roots: &Roots) {
    let session = "4f2a0c1e-7777-4000-8000-000000000007";
    let mut body = String::new();
    let mut parent = "null".to_string();
    for (i, text) in FOLDING.iter().enumerate() {
        let line = claude_line(session, "P", &format!("f{i}"), text)
            .replace(r#""P""#, &parent)
            .replace("09:31:00", &format!("09:4{i}:00"));
        body.push_str(&line);
        body.push('\n');
        parent = format!("\"f{i}\"");
    }
    let rel = format!("claude/-w-other/{session}.jsonl");
    fs::write(roots.dir.path().join(&rel), body).unwrap();
    roots.set_mtime(Path::new(&rel), 3 * 86_400);
}

#[test]
fn searches_with_the_index_equal_searches_without_it() {
    let roots = with_opencode();
    plant_folding(&roots);
    let _guard = Guard(&roots);
    let texts = texts(&roots);
    assert!(texts.len() > 100, "only {} texts", texts.len());
    let cjk: Vec<usize> = (0..texts.len())
        .filter(|&i| texts[i].text.chars().any(is_cjk))
        .collect();
    assert!(!cjk.is_empty(), "no CJK text");
    assert!(
        texts.iter().any(|t| t.text.contains("Straße")),
        "escapes not decoded"
    );
    let mut times: Vec<&str> = texts
        .iter()
        .filter_map(|t| t.timestamp.as_deref())
        .collect();
    times.sort_unstable();
    let run = index(&roots);
    assert!(run.stdout.contains("sessions"), "{run:?}");
    let all = session_count(&roots);
    assert_eq!(
        doctor(&roots)["indexed"].as_u64(),
        Some(all - OPENCODE_SESSIONS)
    );

    let seed = std::env::var("INDEX_TEST_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| fastrand::u64(..));
    println!("seed {seed} (INDEX_TEST_SEED={seed} repeats this run)");
    let mut rng = fastrand::Rng::with_seed(seed);
    let selectors = [
        "*",
        "claude:*",
        "codex:*",
        "pi:*",
        "omp:*",
        "copilot:*",
        "*:0*",
        "pi:fork*",
    ];
    let mut from_index = 0;
    for round in 0..120 {
        let mut args: Vec<String> = vec!["list".into(), "--json".into()];
        let mut answerable = Some(true);
        let n = match rng.u8(..10) {
            0..=6 => 1,
            7..=8 => 2,
            _ => 3,
        };
        for _ in 0..n {
            let (q, a) = query(&mut rng, &texts, &cjk);
            answerable = match (answerable, a) {
                (Some(false), _) | (_, Some(false)) => Some(false),
                (Some(true), Some(true)) => Some(true),
                _ => None,
            };
            args.push(format!("--query={q}"));
        }
        if rng.u8(..5) == 0 {
            for role in ["user", "assistant", "tool", "context"] {
                if rng.bool() {
                    args.extend(["--role".into(), role.into()]);
                }
            }
        }
        if rng.u8(..5) == 0 {
            let a = times[rng.usize(..times.len())];
            let b = times[rng.usize(..times.len())];
            let (a, b) = if a <= b { (a, b) } else { (b, a) };
            match rng.u8(..3) {
                0 => args.extend(["--since".into(), a.into()]),
                1 => args.extend(["--until".into(), b.into()]),
                // An empty window is refused: both bounds only when something lies between.
                _ if a == b => args.extend(["--since".into(), a.into()]),
                _ => args.extend(["--since".into(), a.into(), "--until".into(), b.into()]),
            }
        }
        if rng.u8(..3) == 0 {
            args.extend(["--from".into(), "oldest".into()]);
        }
        if rng.u8(..6) == 0 {
            args.extend(["--budget".into(), rng.usize(1024..4000).to_string()]);
        }
        if rng.bool() {
            args.extend(["--limit".into(), rng.usize(1..=6).to_string()]);
        }
        if rng.u8(..6) == 0 {
            args.push("--all-branches".into());
        }
        if rng.u8(..4) == 0 {
            let s = selectors[rng.usize(..selectors.len())];
            args.extend(["--session".into(), s.into()]);
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (indexed, scanned) = same_both_ways(&roots, &args);
        // OpenCode's sessions are in every search of all sessions, and always scanned.
        let records = match args.iter().position(|a| *a == "--session") {
            Some(at) if args[at + 1] != "*" => 0,
            _ => OPENCODE_SESSIONS,
        };
        match answerable {
            Some(true) => {
                assert!(
                    indexed > 0,
                    "round {round}, seed {seed}: {args:?} did not use the index"
                );
                assert_eq!(scanned, records, "round {round}, seed {seed}: {args:?}");
            }
            Some(false) => {
                assert_eq!(indexed, 0, "round {round}, seed {seed}: {args:?} must scan");
            }
            None => {}
        }
        from_index += indexed;
    }
    assert!(from_index > 0);
}

/// Appends `bytes` to a transcript.
pub(crate) fn append(roots: &Roots, rel: &str, bytes: &str) {
    use std::io::Write;
    let mut f = fs::OpenOptions::new()
        .append(true)
        .open(roots.dir.path().join(rel))
        .unwrap();
    f.write_all(bytes.as_bytes()).unwrap();
}

const FIRST: &str = "claude/-w-other/4f2a0c1e-1111-4000-8000-000000000001.jsonl";
const SECOND: &str = "claude/-w-other/4f2a0c1e-2222-4000-8000-000000000002.jsonl";

fn claude_line(session: &str, parent: &str, uuid: &str, content: &str) -> String {
    format!(
        r#"{{"parentUuid":"{parent}","isSidechain":false,"userType":"external","cwd":"/w/app","sessionId":"{session}","version":"2.1.20","gitBranch":"main","type":"user","message":{{"role":"user","content":"{content}"}},"uuid":"{uuid}","timestamp":"2026-03-01T09:31:00.000Z"}}"#
    )
}

#[test]
fn appended_rewritten_and_deleted_transcripts_are_read_until_indexed() {
    let roots = roots();
    let _guard = Guard(&roots);
    index(&roots);
    let all = session_count(&roots);
    let searches: [&[&str]; 5] = [
        &["list", "--query", "prefix twin", "--json"],
        &["list", "--query", "appended marker", "--json"],
        &[
            "list",
            "--query",
            "halfwritten",
            "--json",
            "--from",
            "oldest",
        ],
        &[
            "list", "--query", "REPLY", "--query", "second", "--json", "--limit", "2",
        ],
        &[
            "list",
            "--query",
            "zebra marker",
            "--json",
            "--session",
            "claude:*",
        ],
    ];
    let check = |expect: (u64, u64)| {
        for (i, args) in searches.iter().enumerate() {
            let (indexed, scanned) = same_both_ways(&roots, args);
            // The first search started an update of what it scanned; the others see it.
            if args.contains(&"claude:*") {
                assert_eq!(scanned, 0, "{args:?}");
            } else if i == 0 || expect.1 == 0 {
                assert_eq!((indexed, scanned), expect, "{args:?}");
            } else {
                assert_eq!((indexed, scanned), (expect.0 + expect.1, 0), "{args:?}");
            }
        }
    };
    check((all, 0));

    // A complete line, then half of one (no newline yet).
    let session = "4f2a0c1e-1111-4000-8000-000000000001";
    append(
        &roots,
        FIRST,
        &format!(
            "{}\n",
            claude_line(session, "a1", "u2", "the appended marker")
        ),
    );
    let half = claude_line(session, "u2", "u3", "halfwritten zebra marker");
    let (head, tail) = half.split_at(half.len() - 40);
    append(&roots, FIRST, head);
    // Appended sessions are answered from the index and a decode of the appended lines.
    check((all, 0));
    // The line completed.
    append(&roots, FIRST, &format!("{tail}\n"));
    check((all, 0));
    // An update reads only what was appended since the last one.
    let line = format!("{}\n", claude_line(session, "u3", "u4", "one more"));
    append(&roots, FIRST, &line);
    let run = roots.run_indexed(&["index", "--json"]);
    let summary = run.json();
    assert_eq!(summary["indexed"].as_u64(), Some(1), "{run:?}");
    assert_eq!(
        summary["bytes"].as_u64(),
        Some(line.len() as u64),
        "{run:?}"
    );
    check((all, 0));

    // Rewritten in place: the same size, other bytes, another modification time.
    let path = roots.dir.path().join(SECOND);
    let before = fs::read_to_string(&path).unwrap();
    let after = before.replace("second prefix twin", "zebras marker twin");
    assert_eq!(before.len(), after.len());
    assert_ne!(before, after);
    fs::write(&path, after).unwrap();
    roots.set_mtime(Path::new(SECOND), 7 * 86_400);
    check((all - 1, 1));

    // Deleted: the index still holds it until the next update, and no search shows it.
    fs::remove_file(&path).unwrap();
    check((all - 1, 0));
    assert_eq!(doctor(&roots)["indexed"].as_u64(), Some(all));
    let run = index(&roots);
    assert!(
        run.stdout.contains(&format!("{} sessions", all - 1)),
        "{run:?}"
    );
    assert_eq!(doctor(&roots)["indexed"].as_u64(), Some(all - 1));
    check((all - 1, 0));
}

/// Whatever is in the way of the database, searches answer as without it.
fn searches_agree(roots: &Roots) {
    for args in [
        &["list", "--query", "prefix twin", "--json"][..],
        &[
            "list", "--query", "the", "--json", "--from", "oldest", "--limit", "3",
        ],
        &["list", "--query", "login", "--role", "user", "--json"],
    ] {
        same_both_ways(roots, args);
    }
}

pub(crate) fn quarantines(db: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = fs::read_dir(db.parent().unwrap())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                n.starts_with("v1.sqlite.quarantined-")
                    && !n.ends_with("-wal")
                    && !n.ends_with("-shm")
            })
        })
        .collect();
    found.sort();
    found
}

/// Sets the database's schema version above this build's, as a newer build would leave it.
fn make_newer(db: &Path) {
    let conn = rusqlite::Connection::open(db).unwrap();
    let newer = history_index::store::SCHEMA_VERSION + 1;
    conn.execute_batch(&format!("PRAGMA user_version = {newer};"))
        .unwrap();
    drop(conn);
}

fn garbage(db: &Path) {
    let junk: Vec<u8> = (0..8192u32).map(|i| (i * 7919 % 251) as u8).collect();
    fs::write(db, junk).unwrap();
}

#[test]
fn a_damaged_database_is_quarantined_and_rebuilt() {
    let roots = roots();
    let _guard = Guard(&roots);
    index(&roots);
    let db = PathBuf::from(
        doctor(&roots)["path"]
            .as_str()
            .unwrap()
            .replace("[ROOT]", &roots.dir.path().display().to_string()),
    );
    assert_eq!(db, roots.index_db());
    let all = doctor(&roots)["indexed"].as_u64().unwrap();

    // Met by searches first: they still answer, and the update they start rebuilds it.
    garbage(&db);
    searches_agree(&roots);
    assert_eq!(quarantines(&db).len(), 1);

    // Met by `index`.
    garbage(&db);
    let before = quarantines(&db).len();
    index(&roots);
    assert_eq!(
        quarantines(&db).len(),
        before + 1,
        "index did not quarantine"
    );
    let d = doctor(&roots);
    assert_eq!(d["indexed"].as_u64(), Some(all), "{d}");
    assert!(d["quarantined"].as_u64().unwrap() >= 1, "{d}");
    let (indexed, scanned) = same_both_ways(&roots, &["list", "--query", "prefix twin", "--json"]);
    assert_eq!((indexed, scanned), (all, 0));
}

#[test]
fn a_newer_schema_is_read_but_never_written() {
    let roots = roots();
    let _guard = Guard(&roots);
    index(&roots);
    let db = roots.index_db();
    let all = doctor(&roots)["indexed"].as_u64().unwrap();
    make_newer(&db);
    let bytes = fs::read(&db).unwrap();
    let modified = fs::metadata(&db).unwrap().modified().unwrap();
    // The transcripts change too, so that an update would have something to write.
    append(
        &roots,
        FIRST,
        &format!(
            "{}\n",
            claude_line(
                "4f2a0c1e-1111-4000-8000-000000000001",
                "a1",
                "u2",
                "the appended marker"
            )
        ),
    );
    for args in [
        &["index"][..],
        &["index", "--json"],
        &["reindex"],
        &["reindex", "--json"],
    ] {
        let run = roots.run_indexed(args);
        assert!(run.code == 0 || run.code == 2, "{args:?}: {run:?}");
        assert!(!run.stderr.contains("panic"), "{args:?}: {run:?}");
    }
    searches_agree(&roots);
    same_both_ways(&roots, &["list", "--query", "appended marker", "--json"]);
    let d = doctor(&roots);
    let newer = history_index::store::SCHEMA_VERSION + 1;
    assert_eq!(d["index_schema"].as_i64(), Some(newer), "{d}");
    assert_eq!(d["writable"].as_bool(), Some(false), "{d}");
    assert!(roots.run_indexed(&["doctor"]).stdout.contains("read only"));
    assert_eq!(fs::read(&db).unwrap(), bytes, "a newer schema was written");
    assert_eq!(fs::metadata(&db).unwrap().modified().unwrap(), modified);
    assert!(
        quarantines(&db).is_empty(),
        "a newer schema was quarantined"
    );
    // Sessions it holds are still answered from it, the one appended to since with a decode of
    // its appended lines.
    let (indexed, _) = same_both_ways(&roots, &["list", "--query", "prefix twin", "--json"]);
    assert_eq!(indexed, all);
}

/// Searches with an unusable index scan and agree; `doctor` and `index` fail (exit 2) naming
/// `code`, in text and in JSON.
fn unusable(roots: &Roots, code: &str) {
    searches_agree(roots);
    let (indexed, _) = same_both_ways(roots, &["list", "--query", "prefix twin", "--json"]);
    assert_eq!(indexed, 0);
    for args in [&["doctor"][..], &["index"], &["reindex"]] {
        let run = roots.run_indexed(args);
        assert_eq!(run.code, 2, "{args:?}: {run:?}");
        assert!(run.stdout.is_empty(), "{args:?}: {run:?}");
        assert!(run.stderr.contains(code), "{args:?}: {run:?}");
    }
    let run = roots.run_indexed(&["doctor", "--json"]);
    assert_eq!(run.code, 2, "{run:?}");
    let message = run.json()["error"]["message"].as_str().unwrap().to_string();
    assert!(message.contains(code), "{message}");
}

/// Whether this process can write into a directory it has no write permission on (root can).
fn writes_anyway(dir: &Path) -> bool {
    let probe = dir.join("probe");
    let wrote = fs::write(&probe, b"").is_ok();
    let _ = fs::remove_file(&probe);
    wrote
}

#[test]
fn a_file_where_the_index_directory_should_be_means_scanning_and_doctor_says_why() {
    let roots = roots();
    let _guard = Guard(&roots);
    let dir = roots.index_db().parent().unwrap().to_path_buf();
    fs::create_dir_all(dir.parent().unwrap()).unwrap();
    fs::write(&dir, b"not a directory").unwrap();
    unusable(&roots, "not_creatable");
    assert_eq!(fs::read(&dir).unwrap(), b"not a directory");
}

#[test]
fn an_unwritable_cache_directory_means_scanning_and_doctor_says_why() {
    let roots = roots();
    let _guard = Guard(&roots);
    let cache = roots.cache_home();
    fs::create_dir_all(&cache).unwrap();
    fs::set_permissions(&cache, fs::Permissions::from_mode(0o500)).unwrap();
    if writes_anyway(&cache) {
        fs::set_permissions(&cache, fs::Permissions::from_mode(0o700)).unwrap();
        eprintln!("skipped: this process writes into read-only directories (root)");
        return;
    }
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        unusable(&roots, "permission_denied");
    }));
    roots.wait_background();
    fs::set_permissions(&cache, fs::Permissions::from_mode(0o700)).unwrap();
    if let Err(e) = result {
        std::panic::resume_unwind(e);
    }
}

/// Every database file of the index, quarantined ones included, with its bytes.
fn database_files(roots: &Roots) -> Vec<(PathBuf, Vec<u8>)> {
    let dir = roots.index_db().parent().unwrap().to_path_buf();
    fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("v1.sqlite")
        })
        .map(|p| {
            let bytes = fs::read(&p).unwrap();
            (p, bytes)
        })
        .collect()
}

#[test]
fn no_diagnostic_and_no_database_byte_holds_a_transcripts_text() {
    let roots = roots();
    let _guard = Guard(&roots);
    let mut rng = fastrand::Rng::new();
    let secret: String = format!(
        "SECRET-{}",
        (0..20).map(|_| rng.alphanumeric()).collect::<String>()
    );
    let session = "4f2a0c1e-9999-4000-8000-000000000009";
    let lines = [
        claude_line(
            session,
            "x",
            "u1",
            &format!("please remember {secret} for later"),
        )
        .replace(r#""parentUuid":"x""#, r#""parentUuid":null"#),
        format!(
            r#"{{"parentUuid":"u1","isSidechain":false,"userType":"external","cwd":"/w/app","sessionId":"{session}","version":"2.1.20","gitBranch":"main","type":"assistant","message":{{"id":"msg_1","type":"message","role":"assistant","model":"claude-opus-4-6","content":[{{"type":"tool_use","id":"toolu_1","name":"Bash","input":{{"command":"echo {secret}"}}}}],"stop_reason":null,"usage":{{"input_tokens":1,"output_tokens":1}}}},"requestId":"req_1","uuid":"a1","timestamp":"2026-03-01T09:31:01.000Z"}}"#
        ),
    ];
    let rel = format!("claude/-w-other/{session}.jsonl");
    fs::write(roots.dir.path().join(&rel), lines.join("\n") + "\n").unwrap();
    roots.set_mtime(Path::new(&rel), 86_400);
    let found = roots.run(&["list", "--query", &secret, "--json"]);
    assert_eq!(
        found.json()["items"].as_array().unwrap().len(),
        2,
        "{found:?}"
    );

    let mut printed: Vec<(String, Run)> = Vec::new();
    let diagnose = |what: &str, printed: &mut Vec<(String, Run)>| {
        let claude = roots.root("claude").display().to_string();
        for args in [
            &["index"][..],
            &["index", "--json"],
            &["doctor"],
            &["doctor", "--json"],
            &["reindex"],
            &["reindex", "--json"],
            &["reindex", "--dir", &claude, "--json"],
            &["reindex", "--dir", &claude],
        ] {
            printed.push((format!("{what}: {args:?}"), roots.run_indexed(args)));
        }
        let mut search = roots.run_indexed(&["list", "--query", &secret, "--json"]);
        roots.wait_background();
        search.stdout.clear();
        printed.push((format!("{what}: search"), search));
        let mut search = roots.run_indexed(&["list", "--query", &secret[..9]]);
        roots.wait_background();
        search.stdout.clear();
        printed.push((format!("{what}: text search"), search));
    };
    diagnose("fresh", &mut printed);
    let (indexed, scanned) = same_both_ways(&roots, &["list", "--query", &secret, "--json"]);
    assert!(
        indexed > 0 && scanned == 0,
        "the secret's session is not indexed"
    );
    let db_files = database_files(&roots);
    garbage(&roots.index_db());
    diagnose("garbage", &mut printed);
    make_newer(&roots.index_db());
    diagnose("newer schema", &mut printed);

    let lower = secret.to_lowercase();
    let random = &secret["SECRET-".len()..];
    for (what, run) in &printed {
        for text in [&run.stdout, &run.stderr] {
            let folded = text.to_lowercase();
            assert!(
                !folded.contains(&lower) && !folded.contains(&random.to_lowercase()[..8]),
                "{what} printed the secret: {run:?}"
            );
        }
    }
    let windows: Vec<Vec<u8>> = secret
        .as_bytes()
        .windows(8)
        .chain(lower.as_bytes().windows(8))
        .map(<[u8]>::to_vec)
        .collect();
    for (path, bytes) in db_files.into_iter().chain(database_files(&roots)) {
        for w in &windows {
            assert!(
                !bytes.windows(8).any(|b| b == w.as_slice()),
                "{} holds {:?} of the secret",
                path.display(),
                String::from_utf8_lossy(w)
            );
        }
    }
}

#[test]
fn a_search_brings_the_index_up_to_date_in_the_background() {
    let roots = roots();
    let _guard = Guard(&roots);
    let run = roots.run_indexed(&["list", "--query", "prefix twin", "--json"]);
    assert_eq!(run.code, 0, "{run:?}");
    let (indexed, all) = coverage(&run);
    assert_eq!(indexed, 0);
    assert!(all > 10);
    assert!(
        run.json()["notice"]
            .as_str()
            .is_some_and(|n| n.contains("search index")),
        "{run:?}"
    );
    let start = Instant::now();
    loop {
        let running = roots.background_running();
        let d = doctor(&roots);
        if d["indexed"].as_u64() == Some(all) && !running {
            break;
        }
        // Generous: the update runs at a low priority, and the suite keeps every core busy.
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "the background update did not index every session in 30 s: {d}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let run = roots.run_indexed(&["list", "--query", "prefix twin", "--json"]);
    assert_eq!(coverage(&run), (all, 0));
    assert!(run.json().get("notice").is_none(), "{run:?}");
    assert!(
        !roots.background_running(),
        "a search of indexed sessions started an update"
    );
    assert_eq!(
        same_both_ways(&roots, &["list", "--query", "prefix twin", "--json"]),
        (all, 0)
    );
}

#[test]
fn roots_named_relatively_index_the_same_sessions_from_any_directory() {
    let roots = roots();
    let _guard = Guard(&roots);
    // `index` run from the temporary directory with the roots relative to it…
    let mut cmd = roots.cmd();
    cmd.current_dir(roots.dir.path())
        .env_remove("NOTESOUP_HISTORY_INDEX")
        .arg("index");
    for (harness, root) in roots.roots() {
        let relative = root.strip_prefix(roots.dir.path()).unwrap();
        cmd.env(harness.root_env, relative);
    }
    assert!(cmd.output().unwrap().status.success());
    // …serves a search run from elsewhere with the same roots named absolutely.
    let run = roots.run_with(
        &["list", "--query", "prefix twin", "--json"],
        &[("NOTESOUP_HISTORY_INDEX", "read")],
    );
    assert_eq!(coverage(&run), (session_count(&roots), 0), "{}", run.stdout);
}

/// Runs `index --json` and returns how many sessions it indexed and how many bytes it read.
pub(crate) fn update(roots: &Roots) -> (u64, u64) {
    let run = roots.run_indexed(&["index", "--json"]);
    let summary = run.json();
    let n = |k: &str| summary[k].as_u64().unwrap_or_else(|| panic!("{run:?}"));
    (n("indexed"), n("bytes"))
}

#[test]
fn every_harness_indexes_an_append_from_where_it_stopped() {
    let roots = roots();
    let _guard = Guard(&roots);
    index(&roots);
    let all = session_count(&roots);
    const CODEX: &str =
        "codex/2026/03/02/rollout-2026-03-02T11-00-00-019c9a00-1111-7000-8000-000000000001.jsonl";
    const PI: &str = "pi/--Users-ben-.claude-jobs-37c36311-tmp-tui-pi--/\
                      2026-07-21T22-33-37-367Z_019f86d0-2b56-72c1-b90f-60a707fde7d7.jsonl";
    // A message item waits for its event twin, which comes only after the next update: the
    // decode that goes on from there hides the item behind it.
    let item = concat!(
        r#"{"timestamp":"2026-03-02T12:00:00.000Z","type":"response_item","payload":{"type":"message","#,
        r#""role":"user","content":[{"type":"input_text","text":"codex appended marker"}]}}"#,
        "\n"
    );
    let twin = concat!(
        r#"{"timestamp":"2026-03-02T12:00:00.001Z","type":"event_msg","payload":{"type":"user_message","#,
        r#""message":"codex appended marker","images":[]}}"#,
        "\n"
    );
    let entry = concat!(
        r#"{"type":"message","id":"feedbeef","parentId":"cc9b14cb","timestamp":"2026-07-21T22:37:00.000Z","#,
        r#""message":{"role":"user","content":[{"type":"text","text":"pi appended marker"}]}}"#,
        "\n"
    );
    let searches: [&[&str]; 3] = [
        &["list", "--query", "appended marker", "--json"],
        &[
            "list",
            "--query",
            "appended marker",
            "--json",
            "--from",
            "oldest",
            "--all-branches",
        ],
        &[
            "list", "--query", "marker", "--role", "user", "--json", "--limit", "1",
        ],
    ];
    let agree = || {
        for args in searches {
            assert_eq!(same_both_ways(&roots, args).0, all, "{args:?}");
        }
    };
    append(&roots, CODEX, item);
    append(&roots, PI, entry);
    agree();
    assert_eq!(
        update(&roots),
        (0, 0),
        "the searches brought the index up to date"
    );
    append(&roots, CODEX, twin);
    let (indexed, bytes) = update(&roots);
    assert_eq!((indexed, bytes), (1, twin.len() as u64));
    agree();
    let hits = roots.run_indexed(&["list", "--query", "codex appended marker", "--json"]);
    assert_eq!(
        hits.json()["items"].as_array().map(Vec::len),
        Some(1),
        "{hits:?}"
    );
}

#[test]
fn an_ancestor_that_appears_after_indexing_is_read_into_its_descendant() {
    let roots = roots();
    let _guard = Guard(&roots);
    index(&roots);
    // The orphan names an ancestor that is missing: its stored witnesses, all unchanged, do
    // not make it fresh once the ancestor is there.
    let orphan = "codex:019f2a10-0000-7000-8000-000000000010";
    let ancestor = concat!(
        r#"{"timestamp":"2026-07-23T10:00:00.000Z","ordinal":0,"type":"session_meta","payload":{"#,
        r#""id":"019f2a10-dead-7000-8000-000000000000","timestamp":"2026-07-23T10:00:00.000Z","#,
        r#""cwd":"/home/u/orphan","originator":"codex-tui","cli_version":"0.160.0","source":"cli"}}"#,
        "\n",
        r#"{"timestamp":"2026-07-23T10:00:01.000Z","ordinal":1,"type":"response_item","payload":{"#,
        r#""type":"message","role":"user","content":[{"type":"input_text","text":"the ancestor turned up"}]}}"#,
        "\n"
    );
    let found = |run: &Run| {
        run.json()["items"]
            .as_array()
            .is_some_and(|items| items.iter().any(|i| i["session"] == orphan))
    };
    let args = [
        "list",
        "--query",
        "ancestor turned up",
        "--session",
        "codex:*",
        "--json",
    ];
    let day = roots.dir.path().join("codex/2026/07/23");
    fs::create_dir_all(&day).unwrap();
    fs::write(
        day.join("rollout-2026-07-23T10-00-00-019f2a10-dead-7000-8000-000000000000.jsonl"),
        ancestor,
    )
    .unwrap();
    same_both_ways(&roots, &args);
    assert!(
        found(&roots.run_indexed(&args)),
        "the descendant inherits the ancestor's line"
    );
}

/// A copy of the Claude session `rel` under another id: its every line at the same time as the
/// original's, so that their hits tie on time across sessions.
fn twin(roots: &Roots, rel: &str, id: &str) {
    let from = roots.dir.path().join(rel);
    let old = from.file_stem().unwrap().to_str().unwrap().to_string();
    let text = fs::read_to_string(&from).unwrap().replace(&old, id);
    fs::write(from.with_file_name(format!("{id}.jsonl")), text).unwrap();
}

/// Words on most lines, from either end, at small and default limits, with role and time
/// filters that leave few of their candidates, over sessions whose hits tie on time, whose
/// newest lines are off their selected branch, and one appended to after indexing: every page
/// the index answers equals the page without it, of hits and of sessions (`--sessions`), and a
/// page of sessions is the share of every session that its limit takes; and so do the pages
/// that follow one another by their cursors.
#[test]
fn frequent_words_with_every_filter_answer_as_without_the_index() {
    let roots = Roots::with_samples();
    let _guard = Guard(&roots);
    twin(&roots, FIRST, "4f2a0c1e-9999-4000-8000-000000000009");
    index(&roots);
    // Appended after indexing: answered from the index and a decode of the new lines.
    let parent = "4f2a0c1e-1111-4000-8000-0000000000aa";
    let line = claude_line(
        "4f2a0c1e-1111-4000-8000-000000000001",
        parent,
        "4f2a0c1e-1111-4000-8000-0000000000ff",
        "the appended words of the newest line",
    );
    append(&roots, FIRST, &format!("{line}\n"));
    let mut checked = 0;
    for word in ["the", "you", "file"] {
        for end in ["newest", "oldest"] {
            for limit in ["1", "3", "20"] {
                for filter in [
                    &[][..],
                    &["--role", "tool"],
                    &["--role", "user"],
                    &["--since", "2026-03-01T09:30:00Z", "--until", "2026-03-02"],
                    &["--all-branches"],
                ] {
                    let mut args = vec!["list", "--query", word, "--json", "--from", end];
                    args.extend(["--limit", limit]);
                    args.extend_from_slice(filter);
                    let (from_index, _) = same_both_ways(&roots, &args);
                    checked += usize::from(from_index > 0);
                    args.push("--sessions");
                    let (from_index, _) = same_both_ways(&roots, &args);
                    checked += usize::from(from_index > 0);
                    a_slice_of_every_session(&roots, &args, end, limit);
                }
            }
        }
    }
    assert_eq!(checked, 180, "searches the index took no part in");
    for end in ["newest", "oldest"] {
        for filter in [&[][..], &["--role", "user"]] {
            pages_alike(&roots, "the", end, filter);
        }
    }
}

/// Page after page of a search, each one from the cursor the one before gives (`older` from
/// the newest end, `newer` from the oldest), is the same with and without the index.
fn pages_alike(roots: &Roots, word: &str, end: &str, filter: &[&str]) {
    let (next, flag) = match end {
        "newest" => ("older", "--before"),
        _ => ("newer", "--after"),
    };
    let mut cursor: Option<String> = None;
    for page in 0..6 {
        let mut args = vec![
            "list", "--query", word, "--json", "--from", end, "--limit", "4",
        ];
        args.extend_from_slice(filter);
        if let Some(c) = &cursor {
            args.extend([flag, c.as_str()]);
        }
        same_both_ways(roots, &args);
        let json = roots.run_indexed(&args).json();
        let Some(at) = json[next][&flag[2..]].as_object() else {
            assert!(
                page > 0,
                "{args:?}: a word on most lines fills more than a page"
            );
            return;
        };
        cursor = Some(format!(
            "{},{},{},{}",
            at["time"].as_str().unwrap_or("untimed"),
            at["session"].as_str().unwrap(),
            at["seq"],
            at["part"]
        ));
    }
}

/// A page of `--sessions` (`args`, whose `--limit` is `limit`, from `end`) is that end's share
/// of the page that takes every session, with and without the index.
fn a_slice_of_every_session(roots: &Roots, args: &[&str], end: &str, limit: &str) {
    let at = args.iter().position(|a| *a == "--limit").unwrap();
    let args = [&args[..at], &args[at + 2..]].concat();
    let limit: usize = limit.parse().unwrap();
    for index in [&[][..], &["--no-index"]] {
        let run = |limit: &str| {
            let mut all: Vec<&str> = index.to_vec();
            all.extend(&args);
            all.extend(["--limit", limit, "--budget", "100000000"]);
            roots.run_indexed(&all).json()
        };
        let (page, every) = (run(&limit.to_string()), run("100000"));
        let every = every["sessions"].as_array().unwrap();
        let share = match end {
            "newest" => &every[every.len().saturating_sub(limit)..],
            _ => &every[..limit.min(every.len())],
        };
        let more = if end == "newest" {
            "has_older"
        } else {
            "has_newer"
        };
        assert_eq!(
            page["sessions"].as_array().unwrap(),
            share,
            "{index:?} {args:?}"
        );
        assert_eq!(page[more], every.len() > limit, "{index:?} {args:?}");
    }
}

/// A session that cannot be indexed (the undecodable fixture) is written and taken back within
/// the batch that indexes the others: what the batch's token lists hold of it must not read as
/// damage. Every search is then answered from the index, and nothing is noted or moved aside.
#[test]
fn a_session_that_fails_to_index_leaves_no_false_damage() {
    let roots = Roots::with_samples();
    let _guard = Guard(&roots);
    index(&roots);
    let db = roots.index_db();
    for word in ["and", "the", "you", "tests"] {
        let args = ["list", "--query", word, "--json", "--limit", "3"];
        let run = roots.run_with(&args, &[("NOTESOUP_HISTORY_INDEX", "read")]);
        let (from_index, scanned) = coverage(&run);
        // The undecodable session, and OpenCode's, which are always scanned.
        assert_eq!(scanned, 1 + OPENCODE_SESSIONS, "{word}: {run:?}");
        assert!(from_index > 60, "{word}: {run:?}");
    }
    let mut marker = db.as_os_str().to_owned();
    marker.push(".damaged");
    assert!(!PathBuf::from(marker).exists(), "damage was noted");
    assert!(quarantines(&db).is_empty());
}

/// A long Claude session whose lines' times never go back: `n` lines, a user prompt, an
/// assistant reply with a tool call and its result in turn, two lines at each time, every line
/// holding `word`; its last few lines are a second branch off an earlier reply, so that the
/// lines its newest end has are off the selected branch.
fn long_session(session: &str, word: &str, n: usize) -> String {
    let uuid = |i: usize| format!("{session}-{i:05}")[session.len() - 12..].to_string();
    let time = |i: usize| format!("2026-04-01T00:{:02}:{:02}.000Z", i / 2 / 60, i / 2 % 60);
    let mut lines = String::new();
    for i in 0..n {
        // The last lines branch off the reply a tenth of the session back.
        let parent = match i {
            0 => "null".to_string(),
            _ if i == n - 6 => format!("\"{}\"", uuid(n - 6 - n / 10)),
            _ => format!("\"{}\"", uuid(i - 1)),
        };
        let (kind, message) = match i % 3 {
            0 => (
                "user",
                format!(r#"{{"role":"user","content":"ask {word} {i}"}}"#),
            ),
            1 => (
                "assistant",
                format!(
                    r#"{{"role":"assistant","content":[{{"type":"text","text":"reply {word} {i}"}},{{"type":"tool_use","id":"toolu_{i}","name":"Bash","input":{{"command":"echo {word} {i}"}}}}]}}"#
                ),
            ),
            _ => (
                "user",
                format!(
                    r#"{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"toolu_{}","content":"out {word} {i}"}}]}}"#,
                    i - 1
                ),
            ),
        };
        lines += &format!(
            r#"{{"parentUuid":{parent},"isSidechain":false,"userType":"external","cwd":"/w/long","sessionId":"{session}","version":"2.1.20","gitBranch":"main","type":"{kind}","message":{message},"uuid":"{}","timestamp":"{}"}}"#,
            uuid(i),
            time(i)
        );
        lines.push('\n');
    }
    lines
}

/// A session long enough that its hits are read from its candidate lines a chunk at a time
/// from the page's end (its lines' times never go back) answers every page as a decode does:
/// from either end, at limits that end inside the first chunk and past it, with roles that
/// leave a third of the lines or fewer, a time window in its middle, every branch, cursors
/// page after page, and once it is appended to. Another session ties with it on time.
#[test]
fn a_long_session_in_time_order_is_read_from_the_page_end_as_a_decode_reads_it() {
    let roots = roots();
    let _guard = Guard(&roots);
    let rel = "claude/-w-long/4f2a0c1e-3333-4000-8000-000000000003.jsonl";
    let session = "4f2a0c1e-3333-4000-8000-000000000003";
    let dir = roots.dir.path().join("claude/-w-long");
    fs::create_dir_all(&dir).unwrap();
    fs::write(
        roots.dir.path().join(rel),
        long_session(session, "walkword", 900),
    )
    .unwrap();
    let twin_id = "4f2a0c1e-4444-4000-8000-000000000004";
    fs::write(
        dir.join(format!("{twin_id}.jsonl")),
        long_session(twin_id, "walkword", 150),
    )
    .unwrap();
    // A prompt with the word only in its first line, then hundreds of replies and tool
    // output with it: its best hit is its oldest.
    let asked_once = "4f2a0c1e-5555-4000-8000-000000000005";
    let text: String = (long_session(asked_once, "walkword", 400)
        .lines()
        .enumerate())
    .map(|(i, line)| match i {
        0 => format!("{line}\n"),
        _ => format!("{}\n", line.replace("ask walkword", "ask")),
    })
    .collect();
    fs::write(dir.join(format!("{asked_once}.jsonl")), text).unwrap();
    index(&roots);
    // Past a hundred hits a session's count says only that there are more; its first hit and
    // its best are found all the same.
    for index in [&[][..], &["--no-index"]] {
        let args = [
            "list",
            "--query",
            "walkword",
            "--sessions",
            "--json",
            "--cwd",
            "/w/long",
        ];
        let page = roots.run_indexed(&[index, &args[..]].concat()).json();
        let sessions = page["sessions"].as_array().unwrap();
        let once = sessions
            .iter()
            .find(|s| s["session"] == format!("claude:{asked_once}"));
        let once = once.unwrap_or_else(|| panic!("{index:?}: {page}"));
        assert_eq!(
            (&once["hits"], &once["more_hits"]),
            (&json!(100), &json!(true))
        );
        assert_eq!(once["first_hit"], "2026-04-01T00:00:00.000Z", "{index:?}");
        assert_eq!(once["best"]["text"], "ask walkword 0", "{index:?}");
        let twin = sessions
            .iter()
            .find(|s| s["session"] == format!("claude:{twin_id}"));
        assert_eq!(twin.unwrap()["more_hits"], json!(true), "{index:?}");
    }
    // Each page with the index (run by `indexed`) equals the page without it, across every
    // session and of the long one alone.
    let check = |indexed: &dyn Fn(&[&str]) -> Run| {
        for end in ["newest", "oldest"] {
            for limit in ["1", "20", "200"] {
                for filter in [
                    &[][..],
                    &["--role", "user"],
                    &["--role", "tool"],
                    &[
                        "--since",
                        "2026-04-01T00:02:00Z",
                        "--until",
                        "2026-04-01T00:03:00Z",
                    ],
                    // Ends a few seconds after the appended line's time.
                    &["--until", "2026-04-01T00:04:05Z"],
                    &["--all-branches"],
                ] {
                    for one in [&[][..], &["--session", session], &["--sessions"]] {
                        let mut args = vec!["list", "--query", "walkword", "--json", "--from", end];
                        args.extend(["--limit", limit, "--budget", "100000000"]);
                        args.extend_from_slice(filter);
                        args.extend_from_slice(one);
                        let with = indexed(&args);
                        roots.wait_background();
                        let without = roots.run_indexed(&[&["--no-index"], &args[..]].concat());
                        assert_eq!(comparable(&with), comparable(&without), "{args:?}");
                        // The page of one session says nothing of coverage.
                        if one.first() != Some(&"--session") {
                            assert!(coverage(&with).0 > 0, "{args:?}: the index took no part");
                        }
                    }
                }
            }
        }
    };
    check(&|args| roots.run_indexed(args));
    for end in ["newest", "oldest"] {
        for filter in [&[][..], &["--role", "user"]] {
            pages_alike(&roots, "walkword", end, filter);
        }
    }
    // At a time in the middle of the session: a page from either end that reaches it takes it
    // among the stored lines' hits. The index is not updated meanwhile, so that every page
    // reads the appended line apart.
    let line = claude_line(
        session,
        "000000000003-00899",
        "appended-walk",
        "walkword appended",
    )
    .replace("2026-03-01T09:31:00.000Z", "2026-04-01T00:04:00.000Z");
    append(&roots, rel, &format!("{line}\n"));
    check(&|args| roots.run_reading_index(args));
}

/// OpenCode's sessions are rows of a database, not lines: the index never holds them, every
/// search reads them whole, and what it answers equals `--no-index`, also once a turn is added
/// that lives only in the database's log (as OpenCode leaves it, the writer still open).
#[test]
fn opencode_sessions_are_read_whole_and_equal_no_index_after_a_new_turn() {
    let roots = with_opencode();
    let _guard = Guard(&roots);
    index(&roots);
    let opencode = |roots: &Roots| {
        let run = roots.run_only(
            "opencode",
            &["--no-index", "list", "--query", "zz", "--json"],
        );
        let (a, b) = coverage(&run);
        a + b
    };
    let sessions = opencode(&roots);
    assert_eq!(sessions, OPENCODE_SESSIONS);
    let searches: [&[&str]; 5] = [
        &["list", "--query", "text-roles", "--json"],
        &["list", "--query", "a turn added later", "--json"],
        &["list", "--query", "the", "--json", "--limit", "5"],
        &["list", "--query", "prompt", "--sessions", "--json"],
        &["find", "turn added", "--json"],
    ];
    let check = |roots: &Roots| {
        for args in searches {
            let (_, scanned) = same_both_ways(roots, args);
            assert!(scanned >= sessions, "{args:?}: {scanned} scanned");
        }
    };
    check(&roots);
    // The index holds none of them, and a search that read them starts no update, nor says
    // on every search that they were read in full.
    assert!(!roots.background_running());
    for args in searches {
        let notice = roots.run_indexed(args).json()["notice"].clone();
        assert!(
            !notice.to_string().contains("not in the search index"),
            "{args:?}: {notice}"
        );
    }

    let db = roots.root("opencode").join("opencode.db");
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.pragma_update(None, "journal_mode", "wal").unwrap();
    conn.pragma_update(None, "wal_autocheckpoint", 0).unwrap();
    conn.execute_batch(
        "INSERT INTO message VALUES ('msg_zz', 'ses_text_roles', 1790000000000, 1790000000000,
           '{\"role\":\"user\",\"time\":{\"created\":1790000000000}}');
         INSERT INTO part VALUES ('prt_zz', 'msg_zz', 'ses_text_roles', 1790000000000,
           1790000000000, '{\"type\":\"text\",\"text\":\"a turn added later\"}');",
    )
    .unwrap();
    assert!(roots.root("opencode").join("opencode.db-wal").exists());
    let run = roots.run_indexed(&["list", "--query", "a turn added later", "--json"]);
    assert_eq!(
        run.json()["items"][0]["session"],
        "opencode:ses_text_roles",
        "{run:?}"
    );
    check(&roots);
    drop(conn);
}
