//! A search the index answers reads the lines its page needs, located by the index and decoded
//! alone, and never decodes a session it covers, yet gives what a search without it gives,
//! down to where each item's line is.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::common::Roots;
use history_cli::render::{Json, Printer};
use history_cli::HARNESSES;
use history_core::End;
use history_core::{
    Corpus, DecodeError, Decoded, Event, History, ListRequest, Role, SessionFile, Transcript,
};
use history_core::{HitOrder, HitTexts};
use history_core::{LineTest, LineTime, Resumed, Snapshot, WantSnapshot};
use history_core::{Render, RenderSessions};
use history_index::build::update;
use history_index::projection::Index;
use history_index::store::Store;
use serde_json::Value;

/// What the sources were asked to do.
#[derive(Default)]
struct Calls {
    /// The own file of each session decoded whole.
    decoded: Vec<PathBuf>,
    /// Bytes read by location.
    located: usize,
}

/// A source that counts what it is asked, doing what the real one does.
struct Counting {
    inner: Box<dyn Transcript>,
    calls: Arc<Mutex<Calls>>,
}

impl Transcript for Counting {
    fn harness(&self) -> &str {
        self.inner.harness()
    }

    fn discover(&self) -> Vec<SessionFile> {
        self.inner.discover()
    }

    fn decode(
        &self,
        file: &SessionFile,
        sink: &mut dyn FnMut(Event),
        lines: Option<LineTest<'_>>,
    ) -> Result<Decoded, DecodeError> {
        self.calls.lock().unwrap().decoded.push(file.path.clone());
        self.inner.decode(file, sink, lines)
    }

    /// A decode from a snapshot on reads the appended lines alone: it is no decode of the
    /// whole session.
    fn decode_resumable(
        &self,
        file: &SessionFile,
        sink: &mut dyn FnMut(Event),
        lines: Option<LineTest<'_>>,
        from: Option<&Snapshot>,
        want: WantSnapshot,
    ) -> Result<Resumed, DecodeError> {
        if from.is_none() {
            self.calls.lock().unwrap().decoded.push(file.path.clone());
        }
        self.inner.decode_resumable(file, sink, lines, from, want)
    }

    fn lineage(&self, file: &SessionFile) -> Vec<PathBuf> {
        self.inner.lineage(file)
    }

    fn open_raw(&self, path: &Path) -> std::io::Result<Box<dyn Read + '_>> {
        self.inner.open_raw(path)
    }

    fn line_time(&self, line: &[u8]) -> LineTime {
        self.inner.line_time(line)
    }

    fn replay(&self, seq: u64, line: &[u8], sink: &mut dyn FnMut(Event)) -> bool {
        self.inner.replay(seq, line, sink)
    }

    fn read_at(&self, path: &Path, offset: u64, len: usize) -> Option<std::io::Result<Vec<u8>>> {
        let read = self.inner.read_at(path, offset, len);
        if let Some(Ok(bytes)) = &read {
            self.calls.lock().unwrap().located += bytes.len();
        }
        read
    }
}

fn corpus(roots: &Roots, calls: &Arc<Mutex<Calls>>) -> Corpus {
    Corpus::new(
        HARNESSES
            .iter()
            .map(|h| {
                Box::new(Counting {
                    inner: (h.open)(roots.root(h.name).to_path_buf()),
                    calls: calls.clone(),
                }) as Box<dyn Transcript>
            })
            .collect(),
    )
}

/// The page as JSON, without what legitimately differs between the index and a scan.
fn page(history: &History, req: &ListRequest) -> Value {
    let printer = Json;
    let text = match history.list(req, &printer) {
        Ok(page) => printer.list(&page),
        Err(e) => printer.error(&e),
    };
    let mut v: Value = serde_json::from_str(&text).unwrap();
    if let Some(o) = v.as_object_mut() {
        o.remove("coverage");
        o.remove("notice");
    }
    v
}

/// The fixtures, indexed through counting sources.
struct Indexed {
    roots: Roots,
    calls: Arc<Mutex<Calls>>,
    db: PathBuf,
    store: Store,
    indexing: Corpus,
}

impl Indexed {
    fn new() -> Indexed {
        Indexed::of(Roots::new())
    }

    fn of(roots: Roots) -> Indexed {
        let calls = Arc::new(Mutex::new(Calls::default()));
        let db = roots.dir.path().join("index.sqlite");
        let mut store = Store::open(&db).unwrap();
        let indexing = corpus(&roots, &calls);
        update(&mut store, &indexing, "test", &mut |_, _| true).unwrap();
        Indexed {
            roots,
            calls,
            db,
            store,
            indexing,
        }
    }
}

/// The fixtures searched with the index at `db` (through sources counting into `calls`), and
/// without it; both locate their items.
fn histories(roots: &Roots, calls: &Arc<Mutex<Calls>>, db: &Path) -> (History, History) {
    let index = Index::new(Store::open(db).unwrap(), "test").unwrap();
    let indexed = History::new(corpus(roots, calls))
        .with_locations(true)
        .with_projection(Some(Box::new(index)));
    let uncounted = Arc::new(Mutex::new(Calls::default()));
    let scanned = History::new(corpus(roots, &uncounted)).with_locations(true);
    (indexed, scanned)
}

#[test]
fn the_index_answers_from_located_lines_what_a_scan_answers() {
    let Indexed {
        roots,
        calls,
        db,
        store,
        ..
    } = Indexed::new();
    // What the index cannot cover: sessions it failed, those built from several files, and
    // compressed files, which cannot be read at a line.
    let rows = store.sessions().unwrap();
    let covered: Vec<PathBuf> = rows
        .iter()
        .filter(|r| {
            r.state == history_index::store::SessionState::Indexed
                && r.witnesses.len() == 1
                && r.root_path.extension().is_none_or(|e| e != "zst")
        })
        .map(|r| r.root_path.clone())
        .collect();
    assert!(
        covered.len() >= 10,
        "the fixtures cover few sessions: {covered:?}"
    );
    let (indexed, scanned) = histories(&roots, &calls, &db);

    let mut located = 0;
    // Items whose line's place the pages compared.
    let mut with_places = 0;
    let queries = [
        "the", "git", "test", "review", "ls -la", "agents", "Hello", "STRASSE", "ß",
    ];
    for query in queries {
        // A query shorter than a token is answered by scanning.
        let tokens = query.chars().count() >= 3;
        for from in [End::Newest, End::Oldest] {
            for (limit, roles, all_branches) in [
                (20, vec![], false),
                (1, vec![], false),
                (3, vec![Role::User, Role::Assistant], false),
                (5, vec![Role::Tool], true),
            ] {
                let req = ListRequest {
                    session: Some("*".into()),
                    queries: vec![query.into()],
                    roles,
                    from: Some(from),
                    limit,
                    all_branches,
                    ..ListRequest::default()
                };
                *calls.lock().unwrap() = Calls::default();
                let with = page(&indexed, &req);
                assert_eq!(with, page(&scanned, &req), "{query:?} {from:?} {limit}");
                let items = with["items"].as_array().unwrap();
                with_places += items.iter().filter(|i| i["byte_offset"].is_u64()).count();
                let calls = calls.lock().unwrap();
                let decoded_covered: Vec<_> = calls
                    .decoded
                    .iter()
                    .filter(|p| covered.contains(p))
                    .collect();
                assert!(
                    !tokens || decoded_covered.is_empty(),
                    "{query:?}: sessions the index covers were decoded: {decoded_covered:?}"
                );
                located += calls.located;
            }
        }
    }
    assert!(located > 0, "no line was ever read by location");
    assert!(
        with_places > 100,
        "only {with_places} items said where their line is"
    );
}

/// `(seq, row id)` of the stored lines of the session whose file is `path`.
fn stored_rows(db: &Path, path: &Path) -> Vec<(i64, i64)> {
    use std::os::unix::ffi::OsStrExt;
    let conn = rusqlite::Connection::open(db).unwrap();
    let mut stmt = conn
        .prepare(
            "SELECT l.seq, l.id FROM lines l JOIN sessions s ON s.id = l.session
             WHERE s.root_path = ?1 ORDER BY l.seq",
        )
        .unwrap();
    stmt.query_map([path.as_os_str().as_bytes()], |r| {
        Ok((r.get(0)?, r.get(1)?))
    })
    .unwrap()
    .collect::<Result<_, _>>()
    .unwrap()
}

#[test]
fn an_append_that_moves_the_branch_keeps_the_stored_lines_and_moves_their_marks() {
    let Indexed {
        roots,
        calls,
        db,
        mut store,
        indexing,
    } = Indexed::new();
    let path = roots.root("claude").join("-w-app/abandoned-branch.jsonl");
    let before = stored_rows(&db, &path);
    assert!(before.len() >= 6, "{before:?}");

    // A reply to the abandoned branch's last line, later than everything: its leaf now wins,
    // and the lines of the other branch leave the selected one.
    let line = r#"{"parentUuid":"a2","isSidechain":false,"userType":"external","cwd":"/w/app","sessionId":"abandoned-branch","version":"2.1.20","gitBranch":"main","type":"user","message":{"role":"user","content":"Keep the sleeps after all, the clock can wait"},"uuid":"u4","timestamp":"2026-03-01T10:00:00.000Z"}"#;
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    writeln!(f, "{line}").unwrap();
    drop(f);

    let summary = update(&mut store, &indexing, "test", &mut |_, _| true).unwrap();
    assert_eq!(summary.indexed, 1, "{summary:?}");
    let after = stored_rows(&db, &path);
    assert_eq!(
        &after[..before.len()],
        &before[..],
        "the stored lines were written again"
    );
    assert_eq!(after.len(), before.len() + 1);

    let (indexed, scanned) = histories(&roots, &calls, &db);
    for query in ["clock", "ABANDONED", "sleeps"] {
        for all_branches in [false, true] {
            let wildcard = ListRequest {
                session: Some("claude:*".into()),
                queries: vec![query.into()],
                all_branches,
                ..ListRequest::default()
            };
            *calls.lock().unwrap() = Calls::default();
            let with = page(&indexed, &wildcard);
            assert_eq!(with, page(&scanned, &wildcard), "{query:?} {all_branches}");
            assert!(
                !calls.lock().unwrap().decoded.contains(&path),
                "{query:?}: the session was decoded"
            );
            let texts: Vec<&str> = with["items"]
                .as_array()
                .unwrap()
                .iter()
                .map(|i| i["text"].as_str().unwrap())
                .collect();
            let abandoned_shown = texts.contains(&"Try the ABANDONED approach with sleeps");
            let other_shown = texts.contains(&"Reset the clock in beforeEach instead");
            match query {
                "ABANDONED" => assert!(abandoned_shown, "{texts:?}"),
                "clock" => assert_eq!(other_shown, all_branches, "{texts:?}"),
                _ => {}
            }
        }
    }
}

/// Appends a user line with `content` (a text, or blocks) to a Claude transcript, as a child of
/// its last line.
fn append_claude_line(path: &Path, said: impl Into<Value>) {
    use std::io::Write;
    let said: Value = said.into();
    let content = std::fs::read_to_string(path).unwrap();
    let last: Value = serde_json::from_str(content.lines().last().unwrap()).unwrap();
    let uuid = format!("00000000-0000-4000-8000-{:012}", content.lines().count());
    let line = serde_json::json!({
        "type": "user", "uuid": uuid, "parentUuid": last["uuid"], "sessionId": last["sessionId"],
        "timestamp": "2031-01-01T00:00:00.000Z", "isSidechain": false,
        "message": {"role": "user", "content": said},
    });
    let mut file = std::fs::OpenOptions::new().append(true).open(path).unwrap();
    writeln!(file, "{line}").unwrap();
}

/// A search reads one state of the index from start to end: an update between its `known` and
/// its `hits` (as a background one may run) is not seen, and the lines the session gained since
/// that state are not missed: the session is left to a decode, or its hits are all there.
#[test]
fn hits_read_after_an_update_find_the_lines_it_added() {
    use history_core::Projection;
    use history_core::{Known, Wanted};
    let Indexed {
        roots,
        calls,
        db,
        mut store,
        indexing,
    } = Indexed::new();
    let sessions = indexing.discover_in(Some("claude"));
    let file = sessions
        .iter()
        .find(|f| f.path.extension().is_some_and(|e| e == "jsonl"))
        .unwrap()
        .clone();
    append_claude_line(&file.path, "zebracorn one");
    // A line with a hit, and events that are none but may be: they hold what an escape looks
    // like; the long one is matched all the same, and not shown.
    let long = format!(r"zebra\u0063orn {}", "x ".repeat(40_000));
    let blocks = |texts: [&str; 3]| texts.map(|t| serde_json::json!({"type": "text", "text": t}));
    append_claude_line(
        &file.path,
        blocks(["zebracorn three", r"zebra\u0063orn", &long]).to_vec(),
    );
    update(&mut store, &indexing, "test", &mut |_, _| true).unwrap();
    let searching = corpus(&roots, &calls);
    let sessions = searching.discover_in(Some("claude"));
    let index = Index::new(Store::open(&db).unwrap(), "test").unwrap();
    let filter = history_core::Filter::new(&["zebracorn".into()], vec![], None, None);
    let known = index.known(&searching, &sessions, &filter);
    let at = sessions.iter().position(|f| f.key == file.key).unwrap();
    assert!(matches!(known[at], Known::Within { .. }), "{:?}", known[at]);
    // An update between `known` and `hits`.
    append_claude_line(&file.path, "zebracorn two");
    update(&mut store, &indexing, "test", &mut |_, _| true).unwrap();
    let file = searching
        .discover_in(Some("claude"))
        .into_iter()
        .find(|f| f.key == file.key)
        .unwrap();
    let wanted = Wanted {
        filter: &filter,
        admit: &|_| true,
        from: End::Newest,
        count: 10,
        all_branches: false,
        texts: HitTexts::Kept,
        order: HitOrder::Merge,
    };
    if let Some(found) = index.hits(&searching, &file, &wanted) {
        let (hits, _) = found.unwrap();
        let texts: Vec<&str> = hits.iter().map(|(e, _)| e.text.as_str()).collect();
        assert_eq!(texts, ["zebracorn two", "zebracorn three", "zebracorn one"]);
        // Shown as they are read (in no set order) and not given back, with the other event of
        // a line that may hold a hit, unmatched; and none after the one that says no more.
        let all = [
            r"zebra\u0063orn",
            "zebracorn one",
            "zebracorn three",
            "zebracorn two",
        ];
        for more in [true, false] {
            let shown = std::cell::RefCell::new(Vec::new());
            let show = |e: &history_core::Event| {
                shown.borrow_mut().push(e.text.clone());
                more
            };
            let wanted = Wanted {
                texts: HitTexts::Candidates(&show),
                ..wanted
            };
            let (hits, _) = index.hits(&searching, &file, &wanted).unwrap().unwrap();
            let mut shown = shown.into_inner();
            shown.sort();
            match more {
                true => assert_eq!(shown, all),
                false => assert!(shown.len() == 1 && all.contains(&shown[0].as_str())),
            }
            assert!(hits.is_empty());
        }
    }
    // A search through that index, as a user has it, answers as a scan does.
    let indexed = History::new(searching)
        .with_locations(true)
        .with_projection(Some(Box::new(index)));
    let uncounted = Arc::new(Mutex::new(Calls::default()));
    let scanned = History::new(corpus(&roots, &uncounted)).with_locations(true);
    let req = ListRequest {
        session: Some("*".into()),
        queries: vec!["zebracorn".into()],
        ..ListRequest::default()
    };
    let found = page(&indexed, &req);
    assert_eq!(found, page(&scanned, &req));
    assert_eq!(found["items"].as_array().map(Vec::len), Some(3), "{found}");
}

/// Lines near each other in a file are read together, those far apart each alone, and a line
/// whose bytes cannot hold the query is never decoded, its match written as an escape or not:
/// the hits are a scan's, in a session of 2,400 lines of 2 KB.
#[test]
fn lines_read_in_runs_give_a_scans_hits() {
    let roots = Roots::new();
    let dir = roots.root("claude").join("-w-runs");
    std::fs::create_dir_all(&dir).unwrap();
    let mut file = String::new();
    for i in 0..2_400u32 {
        // Every line holds `quagga`; every 97th `quaggafish`, about 190 KB apart; every 300th
        // spells it with an escaped `q`, which only the decode reads as a letter.
        let word = match i {
            _ if i % 300 == 7 => "\\u0071uaggafish",
            _ if i % 97 == 3 => "quaggafish",
            _ => "quagga",
        };
        let filler = "lorem ipsum dolor ".repeat(110);
        let line = serde_json::json!({
            "parentUuid": (i > 0).then(|| format!("u{}", i - 1)), "isSidechain": false,
            "type": "user", "uuid": format!("u{i}"), "sessionId": "runs", "cwd": "/w/runs",
            "timestamp": format!("2026-03-02T10:{:02}:{:02}.000Z", i / 60 % 60, i % 60),
            "message": {"role": "user", "content": format!("{filler} WORD {i}")},
        });
        file.push_str(&line.to_string().replace("WORD", word));
        file.push('\n');
    }
    std::fs::write(dir.join("runs.jsonl"), file).unwrap();
    let Indexed {
        roots, calls, db, ..
    } = Indexed::of(roots);
    let (indexed, scanned) = histories(&roots, &calls, &db);
    for (query, limit) in [("quaggafish", 100), ("quaggafish", 3), ("quagga", 1_500)] {
        for from in [End::Newest, End::Oldest] {
            let req = ListRequest {
                session: Some("*".into()),
                queries: vec![query.into()],
                from: Some(from),
                limit,
                ..ListRequest::default()
            };
            *calls.lock().unwrap() = Calls::default();
            let with = page(&indexed, &req);
            assert_eq!(with, page(&scanned, &req), "{query:?} {from:?} {limit}");
            let items = with["items"].as_array().unwrap();
            let calls = calls.lock().unwrap();
            assert!(
                !calls.decoded.iter().any(|p| p.ends_with("runs.jsonl")),
                "{query:?}: the session was decoded"
            );
            assert!(calls.located > 0, "{query:?}: nothing read by location");
            if query == "quaggafish" && limit == 100 {
                assert_eq!(items.len(), 25 + 8, "{query:?} {from:?}");
            }
        }
    }
}

/// A Claude session `name` of about 400 KB whose every line is `{filler} quokka {i}`, a tenth
/// of them timed before the lines around them, but for an abandoned branch (lines off the selected one), a tool call with its result (whose tool a
/// decode names from the call's line), and, when `damaged`, a damaged line (a notice).
fn large_claude_session(dir: &Path, name: &str, damaged: bool) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let filler = "lorem ipsum dolor ".repeat(110);
    let mut file = String::new();
    for i in 0..200u32 {
        if i == 50 && damaged {
            file.push_str("{\"type\": \"user\", damaged\n");
            continue;
        }
        // u120 answers u118: u119 is left on a branch of its own.
        let parent = match i {
            0 => None,
            51 if damaged => Some("u49".to_string()),
            120 => Some("u118".to_string()),
            _ => Some(format!("u{}", i - 1)),
        };
        let content = match i {
            30 => serde_json::json!([{"type": "tool_use", "id": "toolu_1", "name": "Bash",
                "input": {"command": "ls -la"}}]),
            31 => serde_json::json!([{"type": "tool_result", "tool_use_id": "toolu_1",
                "content": "file.txt"}]),
            _ => serde_json::json!(format!("{filler} quokka {i}")),
        };
        let role = if i % 2 == 0 { "assistant" } else { "user" };
        let line = serde_json::json!({
            "parentUuid": parent, "isSidechain": false, "type": role, "uuid": format!("u{i}"),
            "sessionId": name, "cwd": "/w/large",
            // Every tenth line's clock ran behind: time order is not the lines' order.
            "timestamp": match i % 10 {
                5 => format!("2026-03-02T09:00:{:02}.000Z", i % 60),
                _ => format!("2026-03-02T10:{:02}:{:02}.000Z", i / 60 % 60, i % 60),
            },
            "message": {"role": role, "content": content},
        });
        file.push_str(&line.to_string());
        file.push('\n');
    }
    let path = dir.join(format!("{name}.jsonl"));
    std::fs::write(&path, file).unwrap();
    path
}

/// The events of line `seq` as a decode of the whole session gives them, every branch marked.
fn decoded_line(corpus: &Corpus, file: &SessionFile, seq: u64) -> history_core::SessionEvents {
    use history_core::Keep;
    let keep = |e: &Event| match e.seq == seq {
        true => Keep::Full,
        false => Keep::Drop,
    };
    let loaded = corpus.load(file, &keep, true, None).unwrap();
    history_core::SessionEvents {
        events: loaded.events,
        meta: loaded.meta,
        notices: loaded.notices,
    }
}

/// One event's line, read alone through the index, is what a decode of its whole session gives
/// of it, with the session's metadata and notices, for every line of every session the index
/// covers, and so are all of a session's events but their texts; `read` of a large session so answers without decoding it, and once the session is
/// appended to, decodes it again.
#[test]
fn one_line_read_alone_is_what_a_decode_gives() {
    use history_core::Projection;
    let roots = Roots::new();
    let large = large_claude_session(&roots.root("claude").join("-w-large"), "large", true);
    let Indexed {
        roots,
        calls,
        db,
        indexing,
        ..
    } = Indexed::of(roots);
    let index = Index::new(Store::open(&db).unwrap(), "test").unwrap();
    let (mut read_alone, mut with_notices, mut off_branch, mut held_whole) = (0, 0, 0, 0);
    let (mut located, mut read_together) = (0, 0);
    for file in indexing.discover_in(None) {
        let every = {
            let keep = |_: &Event| history_core::Keep::Meta;
            indexing.load(&file, &keep, true, None).map(|l| l.events)
        };
        let Ok(every) = every else { continue };
        // The whole session's events as the index holds them: a decode's, without texts.
        for all_branches in [false, true] {
            let Some(held) = index.events(&indexing, &file, all_branches) else {
                continue;
            };
            let keep = |_: &Event| history_core::Keep::Meta;
            let loaded = indexing.load(&file, &keep, all_branches, None).unwrap();
            assert_eq!(held.events, loaded.events, "{:?}", file.path);
            assert_eq!((held.meta, held.notices), (loaded.meta, loaded.notices));
            held_whole += 1;
        }
        let seqs: Vec<u64> = every
            .iter()
            .map(|e| e.seq)
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        // Each line read alone, and all of them at once: the same events and places.
        let (mut alone, mut places) = (Vec::new(), Vec::new());
        for &seq in &seqs {
            let Some((line, locations)) = index.lines(&indexing, &file, &[seq]) else {
                continue;
            };
            alone.extend(line.events.clone());
            places.extend(locations.clone());
            assert_eq!(
                line,
                decoded_line(&indexing, &file, seq),
                "{:?} {seq}",
                file.path
            );
            // Where the index puts the line is where reading the file finds it.
            if let [Some(location)] = locations[..] {
                let found = history_core::locate(&indexing, &file, &[seq]);
                assert_eq!(found, [Some((file.path.clone(), location))], "{seq}");
                located += 1;
            }
            read_alone += 1;
            with_notices += usize::from(!line.notices.is_empty());
            off_branch += (line.events.iter())
                .filter(|e| e.on_active_branch == Some(false))
                .count();
        }
        if let Some((together, locations)) = index.lines(&indexing, &file, &seqs) {
            assert_eq!(
                (together.events, locations),
                (alone, places),
                "{:?}",
                file.path
            );
            read_together += 1;
        }
    }
    assert!(read_alone > 300, "only {read_alone} lines read alone");
    assert!(
        read_together > 20,
        "only {read_together} sessions read together"
    );
    assert!(located > 300, "only {located} lines located");
    assert!(
        with_notices > 0 && off_branch > 0,
        "{with_notices} {off_branch}"
    );
    assert!(held_whole > 20, "only {held_whole} sessions held whole");

    let (indexed, scanned) = histories(&roots, &calls, &db);
    let read = |history: &History, seq: u64| {
        let req = history_core::ReadRequest {
            session: Some("claude:large".into()),
            seq,
            part: 0,
            offset_chars: 0,
            budget: 32 * 1024,
        };
        let printer = Json;
        match history.read(&req, &printer) {
            Ok(page) => printer.read(&page),
            Err(e) => printer.error(&e),
        }
    };
    let decoded = |calls: &Arc<Mutex<Calls>>| {
        let calls = calls.lock().unwrap();
        calls.decoded.iter().filter(|p| **p == large).count()
    };
    // Lines are numbered from 1: the tool call is line 31, the damaged line 51, the abandoned
    // branch's line 120.
    for seq in [1, 31, 32, 50, 51, 52, 120, 121, 200, 201] {
        *calls.lock().unwrap() = Calls::default();
        assert_eq!(read(&indexed, seq), read(&scanned, seq), "line {seq}");
        // A line the index does not hold (the damaged one, or past the end) is left to a decode.
        let stored = ![51, 201].contains(&seq);
        assert_eq!(decoded(&calls), usize::from(!stored), "line {seq}");
    }
    append_claude_line(&large, "after the index");
    *calls.lock().unwrap() = Calls::default();
    assert_eq!(read(&indexed, 121), read(&scanned, 121));
    assert_eq!(decoded(&calls), 1, "an appended session is decoded");
}

/// A page of one large session comes from the index, without a decode, and is the page a
/// decode gives, notice included, for every way of paging it: a search's from the lines the
/// index locates, unless a decode of the session gives notices; any other from the events the
/// index holds and its items' lines. A session appended to since is decoded.
#[test]
fn a_large_sessions_page_is_read_from_the_index() {
    let roots = Roots::new();
    let dir = roots.root("claude").join("-w-large");
    let clean = large_claude_session(&dir, "clean", false);
    let damaged = large_claude_session(&dir, "damaged", true);
    let Indexed {
        roots, calls, db, ..
    } = Indexed::of(roots);
    let (indexed, scanned) = histories(&roots, &calls, &db);
    let whole = |history: &History, req: &ListRequest| {
        let printer = Json;
        match history.list(req, &printer) {
            Ok(page) => printer.list(&page),
            Err(e) => printer.error(&e),
        }
    };
    let decoded = |path: &Path| {
        let calls = calls.lock().unwrap();
        calls.decoded.iter().filter(|p| *p == path).count()
    };
    let mut pages = 0;
    for (session, path) in [("claude:clean", &clean), ("claude:damaged", &damaged)] {
        for query in ["", "quokka 7", "quokka", "ls -la", "zebracorn", "Bash"] {
            // Pages of 2 KB events: the budget cuts a page of 20 to about 15, so that the
            // abandoned branch's line (120) is on the page before 125.
            let bounds = [(None, None), (Some(125), None), (None, Some(100))];
            for (before_seq, after_seq) in bounds {
                for (from, limit, roles, all_branches) in [
                    (None, 20, vec![], false),
                    (Some(End::Oldest), 1, vec![], true),
                    (Some(End::Newest), 3, vec![Role::User], false),
                    (Some(End::Oldest), 200, vec![], true),
                ] {
                    let req = ListRequest {
                        session: Some(session.into()),
                        queries: (!query.is_empty())
                            .then(|| query.into())
                            .into_iter()
                            .collect(),
                        roles,
                        from,
                        limit,
                        all_branches,
                        before_seq,
                        after_seq,
                        ..ListRequest::default()
                    };
                    *calls.lock().unwrap() = Calls::default();
                    let with = whole(&indexed, &req);
                    assert_eq!(with, whole(&scanned, &req), "{session} {req:?}");
                    let read_whole = decoded(path);
                    let decodes = path == &damaged && !query.is_empty();
                    assert_eq!(read_whole, usize::from(decodes), "{session} {req:?}");
                    pages += usize::from(with.contains("\"items\":[{"));
                }
            }
        }
    }
    assert!(pages > 50, "only {pages} pages held items");

    // A line's row that damage took away (no trigger noted it gone): the page is the
    // decode's, not one without the line.
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute_batch("DROP TRIGGER lines_gone").unwrap();
    let taken = conn.execute(
        "DELETE FROM lines WHERE seq = 120 AND session =
             (SELECT id FROM sessions WHERE session_id = 'clean')",
        [],
    );
    assert_eq!(taken.unwrap(), 1);
    drop(conn);
    let (indexed, _) = histories(&roots, &calls, &db);
    for query in [vec![], vec!["quokka".to_string()]] {
        let req = ListRequest {
            session: Some("claude:clean".into()),
            queries: query,
            before_seq: Some(125),
            ..ListRequest::default()
        };
        *calls.lock().unwrap() = Calls::default();
        assert_eq!(whole(&indexed, &req), whole(&scanned, &req), "{req:?}");
        assert_eq!(decoded(&clean), 1, "a damaged index is not read: {req:?}");
    }

    append_claude_line(&clean, "quokka after the index");
    let req = ListRequest {
        session: Some("claude:clean".into()),
        queries: vec!["quokka".into()],
        ..ListRequest::default()
    };
    for req in [
        req.clone(),
        ListRequest {
            queries: vec![],
            ..req
        },
    ] {
        *calls.lock().unwrap() = Calls::default();
        assert_eq!(whole(&indexed, &req), whole(&scanned, &req));
        assert_eq!(decoded(&clean), 1, "an appended session is decoded");
    }
}

/// `--sessions` counts a session's hits from the lines the index locates, a growing chunk of
/// them at a time, as a scan counts them: every hit, its first and last times and its best hit,
/// for every role, branch and end, in a session of 1,500 candidate lines (many chunks), in
/// large ones with a branch and damage, and once they are appended to (the appended lines of
/// the first decoded for their hits).
#[test]
fn a_sessions_hits_are_tallied_as_a_scan_counts_them() {
    let roots = Roots::new();
    let dir = roots.root("claude").join("-w-large");
    let clean = large_claude_session(&dir, "clean", false);
    large_claude_session(&dir, "damaged", true);
    let mut file = String::new();
    for i in 0..1_500u32 {
        let role = if i % 3 == 0 { "assistant" } else { "user" };
        let line = serde_json::json!({
            "parentUuid": (i > 0).then(|| format!("m{}", i - 1)), "isSidechain": false,
            "type": role, "uuid": format!("m{i}"), "sessionId": "many", "cwd": "/w/many",
            "timestamp": format!("2026-03-03T{:02}:{:02}:{:02}.000Z", i / 3600, i / 60 % 60, i % 60),
            "message": {"role": role, "content": format!("quokka quagga {i}")},
        });
        file.push_str(&line.to_string());
        file.push('\n');
    }
    let many = dir.join("many.jsonl");
    std::fs::write(&many, file).unwrap();
    let Indexed {
        roots, calls, db, ..
    } = Indexed::of(roots);
    let sessions = |history: &History, req: &ListRequest| {
        let page = history.sessions(req, &Json).unwrap();
        let mut v: Value = serde_json::from_str(&Json.sessions(&page)).unwrap();
        let o = v.as_object_mut().unwrap();
        o.remove("coverage");
        o.remove("notice");
        v
    };
    let compare = |appended: bool| {
        let (indexed, scanned) = histories(&roots, &calls, &db);
        for query in ["quokka", "quagga", "quokka 7", "ls -la"] {
            for (roles, all_branches, from, limit) in [
                (vec![], false, End::Newest, 20),
                (vec![Role::User], false, End::Oldest, 1),
                (vec![Role::Assistant], true, End::Newest, 2),
                (vec![], true, End::Oldest, 20),
            ] {
                let req = ListRequest {
                    session: Some("claude:*".into()),
                    queries: vec![query.into()],
                    roles,
                    all_branches,
                    from: Some(from),
                    limit,
                    ..ListRequest::default()
                };
                *calls.lock().unwrap() = Calls::default();
                let with = sessions(&indexed, &req);
                assert_eq!(
                    with,
                    sessions(&scanned, &req),
                    "appended: {appended} {req:?}"
                );
                let calls = calls.lock().unwrap();
                let many = calls.decoded.iter().any(|p| p.ends_with("many.jsonl"));
                assert!(!many, "{req:?}: the session was decoded");
            }
        }
    };
    compare(false);
    append_claude_line(&clean, "quokka after the index");
    append_claude_line(&many, "quokka quagga after the index");
    compare(true);
}
