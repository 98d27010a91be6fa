//! An embedder adds a source of its own through the `Transcript` trait, and the core lists,
//! searches and pages it like any harness, mixed with the others; the conformance kit holds it
//! to the trait's rules like any decoder.

use std::path::{Path, PathBuf};
use std::time::{Duration, UNIX_EPOCH};

use history_core::resolve;
use history_core::search;
use history_core::testing::{check, check_sessions, Options};
use history_core::Harness;
use history_core::{browse, BrowseRequest, End};
use history_core::{overview, representative};
use history_core::{
    Corpus, DecodeError, Decoded, Event, Filter, Keep, Role, SessionFile, SessionKey, Timestamp,
    Transcript,
};
use history_core::{Damage, LineTest, LineTime, Lines};

/// A host's live sessions, one file each (`<root>/<id>.live`), in a line format of its own:
/// `<when> <role> <text>`, where `<when>` is nanoseconds since the epoch or `-` (no time), a
/// role written `~assistant` marks a line the host abandoned (off the branch), and ` | ` splits
/// the text into parts.
struct Live {
    name: &'static str,
    root: PathBuf,
    /// A deliberately broken variant, to show that the kit notices.
    flaw: Flaw,
}

#[derive(Clone, Copy, PartialEq)]
enum Flaw {
    None,
    /// `line_time` puts every line at the epoch.
    LineTime,
    /// Under a line test, every other line that passes yields nothing.
    LineTest,
}

/// One line of a live session.
struct LiveLine<'a> {
    when: Option<Timestamp>,
    role: Role,
    abandoned: bool,
    text: &'a str,
}

/// The `<when>` field, read off the raw bytes: `None` when it is neither a number nor `-`.
fn when(line: &[u8]) -> Option<Option<Timestamp>> {
    let field = line.split(|&b| b == b' ').next()?;
    if field == b"-" {
        return Some(None);
    }
    let nanos = std::str::from_utf8(field).ok()?.parse().ok()?;
    Some(Some(Timestamp(nanos)))
}

fn parse(line: &[u8]) -> Option<LiveLine<'_>> {
    let when = when(line)?;
    let text = std::str::from_utf8(line).ok()?;
    let mut fields = text.splitn(3, ' ').skip(1);
    let role = fields.next()?;
    let (abandoned, role) = match role.strip_prefix('~') {
        Some(role) => (true, role),
        None => (false, role),
    };
    Some(LiveLine {
        when,
        role: Role::parse(role)?,
        abandoned,
        text: fields.next().unwrap_or(""),
    })
}

impl Transcript for Live {
    fn harness(&self) -> &str {
        self.name
    }

    fn discover(&self) -> Vec<SessionFile> {
        let Ok(entries) = std::fs::read_dir(&self.root) else {
            return Vec::new();
        };
        let mut found = Vec::new();
        for entry in entries.flatten() {
            let path = entry.path();
            let (Some(id), Ok(meta)) = (live_id(&path), entry.metadata()) else {
                continue;
            };
            let modified = meta
                .modified()
                .ok()
                .and_then(|m| m.duration_since(UNIX_EPOCH).ok());
            found.push(SessionFile {
                key: SessionKey::new(self.name, id),
                path,
                modified: modified.map_or(0, |d| d.as_nanos() as i64),
                size: meta.len(),
                fingerprint: None,
            });
        }
        found
    }

    fn decode(
        &self,
        file: &SessionFile,
        sink: &mut dyn FnMut(Event),
        wanted: Option<LineTest<'_>>,
    ) -> Result<Decoded, DecodeError> {
        let mut lines = Lines::open(&file.path)?;
        let mut damage = Damage::default();
        let mut branch = Vec::new();
        let mut passed = 0;
        while let Some(line) = lines.next_line()? {
            let Some(parsed) = parse(line.bytes) else {
                damage.skip(&line);
                continue;
            };
            // The host's own branch rule: it marks the lines it abandoned.
            if !parsed.abandoned {
                branch.push(line.seq);
            }
            if !wanted.is_none_or(|w| w(line.bytes)) {
                continue;
            }
            passed += 1;
            if self.flaw == Flaw::LineTest && wanted.is_some() && passed % 2 == 0 {
                continue;
            }
            for (part, text) in parsed.text.split(" | ").enumerate() {
                sink(Event {
                    seq: line.seq,
                    part: part as u32,
                    role: parsed.role,
                    kind: "message".into(),
                    timestamp: parsed.when,
                    text: text.to_string(),
                    visible: matches!(parsed.role, Role::User | Role::Assistant),
                    tool: None,
                    on_active_branch: None,
                });
            }
        }
        let mut notices = Vec::new();
        damage.report(&mut notices);
        Ok(Decoded {
            branch: Some(branch),
            notices,
            lineage: vec![file.path.clone()],
            ..Decoded::default()
        })
    }

    /// Read off the `<when>` field alone: the text need not be parsed (nor be UTF-8).
    fn line_time(&self, line: &[u8]) -> LineTime {
        if self.flaw == Flaw::LineTime {
            return LineTime::At(Timestamp(0));
        }
        when(line).map_or(LineTime::Unknown, LineTime::of)
    }
}

fn live_id(path: &Path) -> Option<String> {
    let name = path.file_name()?.to_str()?;
    Some(name.strip_suffix(".live")?.to_string())
}

const fn harness(name: &'static str, open: fn(PathBuf) -> Box<dyn Transcript>) -> Harness {
    Harness {
        name,
        root_flag: "live-root",
        root_env: "LIVE_ROOT",
        root_about: "the host's live sessions",
        default_root_about: "none",
        default_root: |_| None,
        session_env: None,
        open,
    }
}

const LIVE: Harness = harness("live", |root| {
    Box::new(Live {
        name: "live",
        root,
        flaw: Flaw::None,
    })
});

const OTHER: Harness = harness("other", |root| {
    Box::new(Live {
        name: "other",
        root,
        flaw: Flaw::None,
    })
});

/// Writes sessions under `root`: id, modification time in seconds, lines.
fn write_sessions(root: &Path, sessions: &[(&str, u64, &[&str])]) {
    std::fs::create_dir_all(root).unwrap();
    for (id, modified, lines) in sessions {
        let path = root.join(format!("{id}.live"));
        let mut text = lines.join("\n");
        text.push('\n');
        std::fs::write(&path, text).unwrap();
        let file = std::fs::File::options().write(true).open(&path).unwrap();
        file.set_modified(UNIX_EPOCH + Duration::from_secs(*modified))
            .unwrap();
    }
}

fn corpus() -> (Corpus, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let (live, other) = (dir.path().join("live"), dir.path().join("other"));
    write_sessions(
        &live,
        &[
            (
                "s1",
                100,
                &[
                    "100000000000 user deploy the api",
                    "100000000001 ~assistant abandoned deploy",
                    "100000000002 assistant deployed",
                ],
            ),
            (
                "s2",
                200,
                &[
                    "200000000000 user rollback please",
                    "200000000001 tool kubectl rollout undo",
                ],
            ),
        ],
    );
    write_sessions(&other, &[("s1", 150, &["150000000000 user Deploy docs"])]);
    let corpus = Corpus::new(vec![(LIVE.open)(live), (OTHER.open)(other)]);
    (corpus, dir)
}

#[test]
fn a_fake_source_is_listed_searched_and_paged() {
    let (corpus, _dir) = corpus();
    let sessions = corpus.discover();
    assert_eq!(sessions.len(), 3);
    assert_eq!(sessions[0].key.to_string(), "live:s2", "newest first");

    let filter = Filter::new(&["DEPLOY".to_string()], vec![], None, None);
    let req = history_core::SearchRequest {
        filter: &filter,
        limit: 10,
        from: End::Newest,
        all_branches: false,
        raw_prefilter: true,
        projection: None,
        bound: None,
        activity: None,
    };
    let hits = search(&corpus, &sessions, &req);
    let found: Vec<String> = hits
        .items
        .iter()
        .map(|h| format!("{}#{}", h.session, h.event.seq))
        .collect();
    assert_eq!(
        found,
        vec!["live:s1#1", "live:s1#3", "other:s1#1"],
        "off-branch seq 2 is not a hit"
    );

    let empty = Filter::default();
    let choose = |f: &SessionFile| representative(&corpus, f, &empty);
    let listing = overview(&sessions, 2, End::Newest, &choose);
    assert_eq!(listing.items.len(), 2);
    assert!(listing.has_older);

    // Resolution: the current harness first; the other harness's exact id otherwise.
    let picked = resolve(None, "s1", &sessions, Some("other"), "s1").unwrap();
    assert_eq!(picked.key.to_string(), "other:s1");
    let ambiguous = resolve(None, "s1", &sessions, None, "s1").unwrap_err();
    assert_eq!(ambiguous.code(), "ambiguous_session");

    let file = &sessions
        .iter()
        .find(|s| s.key.to_string() == "live:s1")
        .unwrap()
        .clone();
    let all = corpus.load(file, &|_| Keep::Full, true, None).unwrap();
    let marks: Vec<Option<bool>> = all.events.iter().map(|e| e.on_active_branch).collect();
    assert_eq!(marks, vec![Some(true), Some(false), Some(true)]);
    let page = browse(
        corpus
            .load(file, &|_| Keep::Full, false, None)
            .unwrap()
            .events,
        &BrowseRequest {
            before_seq: None,
            after_seq: None,
            from: None,
            limit: 1,
            fold: true,
        },
    );
    assert_eq!(page.items[0].event.seq, 3);
    assert!(page.has_older);
}

/// Sessions that give the kit something to bite on: untimed lines, abandoned ones, parts,
/// non-ASCII text, and a damaged line.
fn kit_root() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write_sessions(
        dir.path(),
        &[
            (
                "s1",
                100,
                &[
                    "100000000000 user deploy the api",
                    "100000000001 ~assistant abandoned deploy",
                    "100000000002 assistant deployed | and checked the Straße route",
                ],
            ),
            (
                "s2",
                200,
                &[
                    "- context you are a careful operator",
                    "200000000000 user rollback please, \u{212A}elvin",
                    "200000000001 tool kubectl rollout undo | deployment \"api\" rolled back",
                    "not a line of this format",
                    "200000000003 ~user never mind",
                    "- assistant ﬁle the report: ΟΔΟΣ café 😀",
                ],
            ),
        ],
    );
    dir
}

#[test]
fn the_fake_source_keeps_the_transcript_rules() {
    let root = kit_root();
    check(&LIVE, root.path());
}

#[test]
#[should_panic(expected = "line_time says At(Timestamp(0))")]
fn the_kit_notices_a_line_time_that_disagrees_with_decoding() {
    const LYING: Harness = harness("live", |root| {
        Box::new(Live {
            name: "live",
            root,
            flaw: Flaw::LineTime,
        })
    });
    let root = kit_root();
    check_sessions(&LYING, root.path(), &Options::default());
}

#[test]
#[should_panic(expected = "passes but its part 0 is not emitted")]
fn the_kit_notices_a_line_test_that_loses_hits() {
    const LOSING: Harness = harness("live", |root| {
        Box::new(Live {
            name: "live",
            root,
            flaw: Flaw::LineTest,
        })
    });
    let root = kit_root();
    check_sessions(&LOSING, root.path(), &Options::default());
}

/// Renders a ranked search as JSON, which the tests read back.
struct FindJson;

impl history_core::RenderFind for FindJson {
    fn found_session(&self, s: &history_core::FoundSession) -> String {
        serde_json::to_string(s).unwrap()
    }
    fn found_event(&self, h: &history_core::FoundHit) -> String {
        serde_json::to_string(h).unwrap()
    }
    fn find(&self, page: &history_core::FindPage) -> String {
        serde_json::to_string(page).unwrap()
    }
}

/// A ranked search for `text` in every session, ten to a page, with no budget to speak of.
fn request(text: &str) -> history_core::FindRequest {
    history_core::FindRequest {
        text: text.into(),
        session: None,
        roles: vec![],
        since: None,
        until: None,
        cwd: None,
        limit: 10,
        budget: 1 << 20,
        events: false,
        explain: false,
        after_rank: 0,
    }
}

/// `find` over live sessions written as `(id, lines)`: the ranked sessions' ids.
fn ranked(
    sessions: &[(&str, Vec<String>)],
    text: &str,
    tweak: impl Fn(&mut history_core::FindRequest),
) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("live");
    let owned: Vec<(&str, u64, Vec<&str>)> = sessions
        .iter()
        .map(|(id, lines)| (*id, 100, lines.iter().map(String::as_str).collect()))
        .collect();
    let borrowed: Vec<(&str, u64, &[&str])> =
        owned.iter().map(|(i, m, l)| (*i, *m, &l[..])).collect();
    write_sessions(&root, &borrowed);
    let history = history_core::History::new(Corpus::new(vec![(LIVE.open)(root)]));
    let mut req = request(text);
    tweak(&mut req);
    let page = history.find(&req, &FindJson).unwrap();
    let folded_terms: Vec<String> = page.terms.clone();
    for s in page.sessions.iter().flatten() {
        for hit in &s.best {
            let text = history_raw::fold(&hit.item.event.text);
            assert!(
                folded_terms
                    .iter()
                    .any(|t| text.contains(history_core::literal(t))),
                "a hit shown holds none of the words literally: {}",
                hit.item.event.text
            );
        }
    }
    page.sessions
        .unwrap_or_default()
        .into_iter()
        .map(|s| s.session.trim_start_matches("live:").to_string())
        .collect()
}

/// Lines of a live session, timed a second apart from `start` seconds.
fn lines(start: u64, lines: &[&str]) -> Vec<String> {
    lines
        .iter()
        .enumerate()
        .map(|(i, l)| format!("{}000000000 {l}", start + i as u64))
        .collect()
}

#[test]
fn find_ranks_a_session_about_the_whole_question_above_a_marathon_of_one_word() {
    let mut marathon = vec!["user run the test suite".to_string()];
    marathon
        .extend((0..300).map(|_| "assistant test passed, test failed, test test test".to_string()));
    let sessions = [
        (
            "marathon",
            lines(
                1000,
                &marathon.iter().map(String::as_str).collect::<Vec<_>>(),
            ),
        ),
        (
            "short",
            lines(
                2000,
                &[
                    "user the login test kept flaking on CI",
                    "assistant fixed the race",
                ],
            ),
        ),
        (
            "other",
            lines(3000, &["user update the readme", "assistant done"]),
        ),
    ];
    assert_eq!(
        ranked(&sessions, "login test flaking", |_| {}),
        ["short", "marathon"]
    );
}

#[test]
fn find_matches_words_by_their_stems_and_identifiers_by_their_parts() {
    let sessions = [
        ("stem", lines(1000, &["user the e2e suite is flaky again"])),
        (
            "ident",
            lines(2000, &["tool FAIL tests/auth.rs flakyLoginTest"]),
        ),
        ("words", lines(3000, &["user login page test copy"])),
    ];
    assert_eq!(ranked(&sessions, "flaking", |_| {}), ["stem", "ident"]);
    // The identifier, named whole, comes first; its words find the others after it.
    assert_eq!(ranked(&sessions, "flakyLoginTest", |_| {})[0], "ident");
    assert_eq!(ranked(&sessions, "login_test", |_| {}).len(), 2);
}

#[test]
fn find_weighs_what_a_person_typed_above_tool_output() {
    let sessions = [
        (
            "tool",
            lines(
                3000,
                &["user go", "tool paginate the orders api with cursors"],
            ),
        ),
        (
            "prompt",
            lines(
                1000,
                &["user paginate the orders api with cursors", "tool ok"],
            ),
        ),
    ];
    assert_eq!(
        ranked(&sessions, "paginate orders api", |_| {}),
        ["prompt", "tool"]
    );
    let roles = ranked(&sessions, "paginate orders api", |r| {
        r.roles = vec![Role::Tool]
    });
    assert_eq!(roles, ["tool"], "with --role tool only tool events count");
}

#[test]
fn find_breaks_ties_by_recency_and_pages_by_rank() {
    // The same text at three times, in files of the same size (a session's size counts).
    let same = |start| lines(start, &["user rotate the signing keys"]);
    let sessions = [
        ("old", same(1_000_000)),
        ("new", same(9_000_000)),
        ("mid", same(5_000_000)),
    ];
    let all = ranked(&sessions, "rotate signing keys", |_| {});
    assert_eq!(all, ["new", "mid", "old"]);
    let first = ranked(&sessions, "rotate signing keys", |r| r.limit = 1);
    let rest = ranked(&sessions, "rotate signing keys", |r| r.after_rank = 1);
    assert_eq!([first, rest].concat(), all);
    // Recency never outweighs a better match.
    let better = [
        (
            "old",
            lines(
                1000,
                &["user rotate the signing keys now, the signing keys"],
            ),
        ),
        ("new", same(9_000_000)),
    ];
    assert_eq!(ranked(&better, "rotate signing keys", |_| {})[0], "old");
}

#[test]
fn find_without_words_to_rank_by_is_a_usage_error() {
    let history = history_core::History::new(Corpus::new(vec![]));
    let req = request("where did we");
    let err = history.find(&req, &FindJson).unwrap_err();
    assert_eq!(err.code(), "usage");
}

/// A projection that answers every session from a decode, as the index answers from the
/// lines it locates: the hits that pass the filter and `admit`, in the merge order, `count` of
/// them from `from`'s end.
struct Decoding;

impl history_core::Projection for Decoding {
    fn known(&self, _: &Corpus, sessions: &[SessionFile], _: &Filter) -> Vec<history_core::Known> {
        let within = history_core::Known::Within {
            first: None,
            last: None,
            appended: false,
        };
        vec![within; sessions.len()]
    }

    fn hits(
        &self,
        corpus: &Corpus,
        file: &SessionFile,
        wanted: &history_core::Wanted<'_>,
    ) -> Option<Result<history_core::SessionHits, history_core::HistoryError>> {
        let keep = |e: &Event| match wanted.filter.matches(e) && (wanted.admit)(e) {
            true => Keep::Full,
            false => Keep::Drop,
        };
        Some(corpus.load(file, &keep, false, None).map(|loaded| {
            let mut events = loaded.events;
            events.sort_by_key(|e| (e.timestamp, e.seq, e.part));
            if wanted.from == End::Newest {
                events.reverse();
            }
            events.truncate(wanted.count);
            let mut hits = events.into_iter().map(|e| (e, None)).collect();
            wanted.texts.apply(&mut hits);
            (hits, loaded.meta)
        }))
    }
}

#[test]
fn find_through_a_projection_that_shows_its_hits_ranks_as_a_decode() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("live");
    // Thousands of hits in one session, shown to the ranking as they are read, some sharing a
    // time; over a MiB, so that its likely best events keep their snippets as they pass.
    let filler = "while the canary watches the error budget and the queue drains ".repeat(2);
    let long: Vec<String> = (0..9_000)
        .map(|i| {
            format!(
                "{}000000000 assistant deploy step {i} of the rollout {filler}",
                1000 + i / 3
            )
        })
        .collect();
    let short = lines(50_000, &["user deploy the rollout", "assistant rolled out"]);
    let long: Vec<&str> = long.iter().map(String::as_str).collect();
    let short: Vec<&str> = short.iter().map(String::as_str).collect();
    write_sessions(&root, &[("long", 100, &long), ("short", 100, &short)]);
    let page = |projection: Option<Box<dyn history_core::Projection>>| {
        let history = history_core::History::new(Corpus::new(vec![(LIVE.open)(root.clone())]))
            .with_projection(projection);
        let mut page = history
            .find(&request("deploy rollout step 8999"), &FindJson)
            .unwrap();
        page.coverage = Default::default();
        serde_json::to_value(&page).unwrap()
    };
    let decoded = page(None);
    assert_eq!(page(Some(Box::new(Decoding))), decoded);
    assert_eq!(decoded["sessions"][0]["hits"], 9_000, "{decoded}");
    assert!(std::fs::metadata(root.join("long.live")).unwrap().len() > 1 << 20);
    let best = decoded["sessions"][0]["best"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(best.contains("deploy step 8999"), "{decoded}");
}

/// [`Decoding`], counting the times hits are asked of it.
struct Counting(std::sync::Arc<std::sync::atomic::AtomicUsize>);

impl history_core::Projection for Counting {
    fn known(
        &self,
        corpus: &Corpus,
        sessions: &[SessionFile],
        f: &Filter,
    ) -> Vec<history_core::Known> {
        Decoding.known(corpus, sessions, f)
    }

    fn hits(
        &self,
        corpus: &Corpus,
        file: &SessionFile,
        wanted: &history_core::Wanted<'_>,
    ) -> Option<Result<history_core::SessionHits, history_core::HistoryError>> {
        self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Decoding.hits(corpus, file, wanted)
    }
}

#[test]
fn a_ranked_search_stopped_inside_one_long_session_stops_there() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("live");
    let filler = "while the canary watches the error budget and the queue drains ".repeat(40);
    let long: Vec<String> = (0..9_000)
        .map(|i| format!("{}000000000 assistant deploy step {i} {filler}", 1000 + i))
        .collect();
    let long: Vec<&str> = long.iter().map(String::as_str).collect();
    write_sessions(&root, &[("long", 100, &long)]);
    assert!(std::fs::metadata(root.join("long.live")).unwrap().len() > 1 << 20);
    // Asked before the session and for every event or line after it: a stop checked only
    // between sessions is asked a handful of times, and never says stop here.
    let asked = AtomicUsize::new(0);
    let stop = || asked.fetch_add(1, Ordering::Relaxed) >= 100;
    let asks = Arc::new(AtomicUsize::new(0));
    for counted in [false, true] {
        asked.store(0, Ordering::Relaxed);
        let projection =
            counted.then(|| Box::new(Counting(asks.clone())) as Box<dyn history_core::Projection>);
        let history = history_core::History::new(Corpus::new(vec![(LIVE.open)(root.clone())]))
            .with_projection(projection);
        let page = history.find_unless(&request("deploy step"), &FindJson, &stop);
        assert!(page.unwrap().is_none(), "a stopped search gave a page");
    }
    // The 9,000 hits are asked for once, and the stop came as they were shown.
    assert_eq!(asks.load(Ordering::Relaxed), 1);
}
