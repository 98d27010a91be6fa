//! The raw prefilter never loses a hit: for many random queries over every fixture and over a
//! generated corpus (`NOTESOUP_DIFF_CORPUS` names a bigger one to use instead), results with the
//! prefilter equal results with full decoding, and so do short pages, for which only the sessions
//! whose candidate lines' times can reach the page are decoded. A search of one session, which
//! decodes only its candidate lines too, finds that session's hits.

use std::path::{Path, PathBuf};

use fastrand::Rng;
use history_cache::Cache;
use history_core::End;
use history_core::{search, Activity, Listing, RepresentativeCache, SearchRequest};
use history_core::{Corpus, Filter, History, Keep, ListRequest, Role, Timestamp};
use history_core::{SessionActivity, SessionFile};

fn corpus(root: &Path) -> Corpus {
    Corpus::new(vec![
        Box::new(decode_claude::Claude::new(root.join("claude"))),
        Box::new(decode_codex::Codex::new(root.join("codex"))),
        Box::new(decode_pi::Pi::new(root.join("pi"))),
        Box::new(decode_gemini::Gemini::new(root.join("gemini"))),
    ])
}

/// Queries cut from the events' own text, with their case changed, plus a few that are absent.
fn queries(corpus: &Corpus, rng: &mut Rng, n: usize) -> Vec<String> {
    let mut texts = Vec::new();
    for file in corpus.discover() {
        if let Ok(loaded) = corpus.load(&file, &|_| Keep::Full, true, None) {
            texts.extend(
                loaded
                    .events
                    .into_iter()
                    .map(|e| e.text)
                    .filter(|t| !t.is_empty()),
            );
        }
    }
    let mut out = Vec::new();
    while out.len() < n && !texts.is_empty() {
        let text: Vec<char> = texts[rng.usize(..texts.len())].chars().collect();
        let start = rng.usize(..text.len());
        let len = rng.usize(1..=12);
        let cut: String = text[start..(start + len).min(text.len())].iter().collect();
        let q = match rng.usize(..4) {
            0 => cut.to_uppercase(),
            1 => cut.to_lowercase(),
            2 => format!("{cut}zq"),
            _ => cut,
        };
        out.push(q);
    }
    out.extend(
        [
            "STRASSE",
            "\u{212A}elvin",
            "ﬁle",
            "[image]",
            "Bash: git",
            "bash: cargo",
            "\"hi\"",
            "a/b",
        ]
        .map(String::from),
    );
    out
}

/// The events (seq, part) a search of session `key` alone lists: all of them, on every branch;
/// `None` for a session that cannot be decoded (a search of many skips it).
fn one_session(history: &History, key: &str, filter: &Filter) -> Option<Vec<(u64, u32)>> {
    let req = ListRequest {
        session: Some(key.to_string()),
        queries: filter.queries().to_vec(),
        roles: filter.roles.clone(),
        since: filter.since,
        until: filter.until,
        limit: 100_000,
        budget: 1 << 30,
        all_branches: true,
        ..ListRequest::default()
    };
    let page = history.list(&req, &history_cli::render::Json).ok()?;
    let mut events: Vec<_> = page
        .items
        .iter()
        .map(|i| (i.event.seq, i.event.part))
        .collect();
    events.sort_unstable();
    Some(events)
}

fn differential(root: &Path, n: usize) {
    let corpus = corpus(root);
    let history = History::from_registry(
        &history_cli::HARNESSES,
        &|h| Some(root.join(h.name)),
        &|_| None,
    );
    let sessions = corpus.discover();
    let mut rng = Rng::with_seed(42);
    let qs = queries(&corpus, &mut rng, n);
    assert!(qs.len() >= n.min(10));
    let mut hits = 0;
    let mut skipped = 0;
    let mut pruned = 0;
    let at = |t: &str| Timestamp::parse_rfc3339(t);
    for (i, q) in qs.iter().enumerate() {
        // Some queries narrowed by role or time, as a page often is.
        let (roles, since, until) = match i % 4 {
            1 => (vec![Role::User, Role::Tool], None, None),
            2 => (vec![], at("2026-02-01T00:00:00Z"), None),
            3 => (vec![], None, at("2026-09-15T00:00:00Z")),
            _ => (vec![], None, None),
        };
        let filter = Filter::new(std::slice::from_ref(q), roles, since, until);
        let raw = corpus.raw_prefilter(&filter);
        skipped += sessions.iter().filter(|s| !raw(s)).count();
        let run = |raw_prefilter, limit, from| {
            search(
                &corpus,
                &sessions,
                &SearchRequest {
                    filter: &filter,
                    limit,
                    from,
                    all_branches: true,
                    raw_prefilter,
                    projection: None,
                    bound: None,
                    activity: None,
                },
            )
        };
        let full = run(false, usize::MAX, End::Newest).items;
        hits += full.len();
        // Each session with hits, and one without, searched alone.
        let mut keys: Vec<_> = full.iter().map(|h| &h.session).collect();
        keys.sort_unstable();
        keys.dedup();
        keys.truncate(3);
        keys.extend(sessions.get(i % sessions.len()).map(|s| &s.key));
        for key in keys {
            let mut expected: Vec<_> = full
                .iter()
                .filter(|h| &h.session == key)
                .map(|h| (h.event.seq, h.event.part))
                .collect();
            expected.sort_unstable();
            let alone = one_session(&history, &key.to_string(), &filter);
            assert!(
                alone.as_ref().is_none_or(|a| *a == expected)
                    && (alone.is_some() || expected.is_empty()),
                "{q:?} in {key} alone: {alone:?}, not {expected:?}"
            );
        }
        assert_eq!(
            run(true, usize::MAX, End::Newest).items,
            full,
            "the prefilter changed the results of {q:?}"
        );
        // A short page: only the sessions that can hold its hits are decoded.
        for limit in [1, 4] {
            let n = full.len();
            let newest = run(true, limit, End::Newest);
            assert_eq!(
                (&newest.items[..], newest.has_older),
                (&full[n.saturating_sub(limit)..], n > limit),
                "the newest {limit} hits of {q:?}"
            );
            let oldest = run(true, limit, End::Oldest);
            assert_eq!(
                (&oldest.items[..], oldest.has_newer),
                (&full[..limit.min(n)], n > limit),
                "the oldest {limit} hits of {q:?}"
            );
            pruned += newest.candidates - newest.decoded + oldest.candidates - oldest.decoded;
        }
    }
    assert!(hits > 0);
    assert!(
        skipped > qs.len(),
        "the prefilter skipped only {skipped} files: the test proves nothing"
    );
    assert!(
        pruned > qs.len(),
        "short pages left only {pruned} candidate sessions undecoded: the test proves nothing"
    );
}

/// A generated corpus of `mib` MiB (its big transcript `big_mib`) in `dir`.
fn generated(dir: &Path, mib: f64, big_mib: Option<f64>, seed: u64) -> PathBuf {
    let out = dir.join("corpus");
    xtask::corpus::generate(&xtask::corpus::Options {
        mib,
        big_mib,
        seed,
        out: out.clone(),
    })
    .unwrap();
    out
}

#[test]
fn the_prefilter_equals_full_decoding_on_the_fixtures() {
    let dir = tempfile::tempdir().unwrap();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures");
    for (from, to) in [
        ("claude/projects", "claude"),
        ("codex/sessions", "codex"),
        ("pi/sessions", "pi"),
        ("gemini/home", "gemini"),
    ] {
        let src = fixtures.join(from);
        if src.exists() {
            std::os::unix::fs::symlink(&src, dir.path().join(to)).unwrap();
        }
    }
    differential(dir.path(), 300);
}

#[test]
fn the_prefilter_equals_full_decoding_on_a_generated_corpus() {
    let dir = tempfile::tempdir().unwrap();
    let root = match std::env::var_os("NOTESOUP_DIFF_CORPUS") {
        Some(root) => PathBuf::from(root),
        None => generated(dir.path(), 3.0, None, 7),
    };
    differential(&root, 60);
}

/// A session of 16 MiB or more first decodes only the candidate lines that can still reach a
/// short page (`search::Nearest`): the same hits as a full decode, from either end.
#[test]
fn a_large_session_decoded_from_its_nearest_candidates_gives_the_same_hits() {
    let dir = tempfile::tempdir().unwrap();
    differential(&generated(dir.path(), 20.0, Some(17.0), 11), 12);
}

/// The `limit` hits of the selected branches nearest `from`'s end, the prefilter on, without
/// `activity` and with it: the same page. Returns the page, and how many sessions `activity`
/// left unread.
fn page_with_and_without(
    corpus: &Corpus,
    sessions: &[SessionFile],
    filter: &Filter,
    (limit, from): (usize, End),
    activity: &SessionActivity<'_>,
) -> (Listing, usize) {
    let run = |activity| {
        let req = SearchRequest {
            filter,
            limit,
            from,
            all_branches: false,
            raw_prefilter: true,
            projection: None,
            bound: None,
            activity,
        };
        search(corpus, sessions, &req)
    };
    let without = run(None);
    // On every core, and on one: which sessions are spared there depends only on the order.
    let with = run(Some(activity));
    let one = history_core::testing::on_one_core(|| run(Some(activity)));
    for with in [&with, &one] {
        assert_eq!(
            (&with.items, with.has_older, with.has_newer),
            (&without.items, without.has_older, without.has_newer),
            "the {limit} hits of {:?} from the {from:?} end",
            filter.queries()
        );
    }
    let spared = without.candidates - one.candidates;
    (without, spared)
}

/// Each session's activity, as the overview's `cache` holds it.
fn cached<'a>(
    cache: &'a Cache,
    corpus: &'a Corpus,
) -> impl Fn(&SessionFile) -> Option<Activity> + Sync + 'a {
    move |file| Some(RepresentativeCache::cached(cache, corpus, file)?.activity())
}

/// The overview's cache in `dir`, holding every session's representative.
fn warm_cache(corpus: &Corpus, sessions: &[history_core::SessionFile], dir: &Path) -> Cache {
    let cache = Cache::new(dir.to_path_buf(), "test");
    for file in sessions {
        RepresentativeCache::representative(&cache, corpus, file).unwrap();
    }
    cache
}

/// With the overview's cache, a page leaves unread the large sessions whose events, as the cache
/// holds their times, all lie beyond what the hits of the sessions decoded first reach: the same
/// pages from either end, with and without a narrowing filter, as without the cache.
#[test]
fn sessions_the_overview_cache_rules_out_leave_every_page_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = corpus(&generated(dir.path(), 3.0, None, 7));
    let sessions = corpus.discover();
    let cache = warm_cache(&corpus, &sessions, &dir.path().join("cache"));
    let activity = cached(&cache, &corpus);
    let mut rng = Rng::with_seed(9);
    let mut qs = queries(&corpus, &mut rng, 40);
    qs.extend(["function", "the", "git status", "deploy", "error"].map(String::from));
    let at = |t: &str| Timestamp::parse_rfc3339(t);
    let mut spared = 0;
    for (i, q) in qs.iter().enumerate() {
        let (roles, until) = match i % 3 {
            1 => (vec![Role::User, Role::Assistant], None),
            2 => (vec![], at("2026-09-15T00:00:00Z")),
            _ => (vec![], None),
        };
        let filter = Filter::new(std::slice::from_ref(q), roles, None, until);
        for page in [1, 4, 20]
            .map(|n| [(n, End::Newest), (n, End::Oldest)])
            .concat()
        {
            spared += page_with_and_without(&corpus, &sessions, &filter, page, &activity).1;
        }
    }
    assert!(
        spared > qs.len(),
        "the cache spared reading {spared} sessions: the test proves nothing"
    );
}

/// A Claude session of one chain of prompts, each `(time, text)`.
fn claude_session(path: &Path, prompts: &[(String, String)]) {
    let id = path.file_stem().unwrap().to_str().unwrap();
    let mut parent = serde_json::Value::Null;
    let mut text = String::new();
    for (i, (time, prompt)) in prompts.iter().enumerate() {
        let uuid = format!("{id}-{i}");
        let line = serde_json::json!({
            "parentUuid": parent, "isSidechain": false, "type": "user", "uuid": uuid,
            "sessionId": id, "timestamp": time, "cwd": "/p",
            "message": {"role": "user", "content": prompt},
        });
        text.push_str(&line.to_string());
        text.push('\n');
        parent = uuid.into();
    }
    std::fs::write(path, text).unwrap();
}

/// The overview's cache rules a session out only when its events all lie beyond what the eager
/// sessions' hits reach, and only once they have more hits than the page holds: a session just
/// within that rank, or with the one hit beyond a page they fill exactly, is read. From either
/// end.
#[test]
fn the_overview_cache_rules_out_no_session_that_reaches_the_page() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("claude/-p");
    std::fs::create_dir_all(&project).unwrap();
    let t = |s: u32| format!("2026-03-01T10:00:{s:02}Z");
    // Large enough for the cache to be asked, with nothing a query finds.
    let padding = "lorem ipsum ".repeat(12_000);
    let session = |n: u32, prompts: &[(u32, &str)], modified: u64| {
        let path = project.join(format!("00000000-0000-4000-8000-{n:012}.jsonl"));
        // The padding as early as the session's first prompt.
        let first = prompts.first().map_or(0, |&(s, _)| s);
        let mut all = vec![(t(first), padding.clone())];
        all.extend(prompts.iter().map(|&(s, p)| (t(s), p.to_string())));
        claude_session(&path, &all);
        let when = std::time::UNIX_EPOCH + std::time::Duration::from_secs(modified);
        let file = std::fs::File::options().write(true).open(&path).unwrap();
        file.set_modified(when).unwrap();
    };
    // Modified last: decoded first.
    let mut prompts = vec![
        (1, "alpha"),
        (2, "alpha"),
        (3, "alpha"),
        (5, "alpha"),
        (6, "alpha"),
    ];
    prompts.extend((11..16).map(|s| (s, "gamma")));
    session(1, &prompts, 2_000_000_000);
    // Sessions modified in between, without hits, so that the next one is not decoded first
    // however many cores there are.
    for n in 2..70 {
        session(n, &[], 1_900_000_000 - u64::from(n));
    }
    // An `alpha` between the newest session's third and second newest; a `gamma` before its
    // five.
    session(70, &[(4, "alpha")], 1_000_000_000);
    session(71, &[(10, "gamma")], 1_000_000_000);
    // Modified first: decoded first from the oldest end.
    let mut prompts: Vec<(u32, &str)> = vec![(1, "delta"), (2, "delta")];
    prompts.extend((4..7).map(|s| (s, "delta")));
    prompts.extend((11..16).map(|s| (s, "epsilon")));
    session(80, &prompts, 900_000_000);
    // A `delta` between the oldest session's second and third; an `epsilon` after its five.
    session(81, &[(3, "delta")], 1_950_000_000);
    session(82, &[(20, "epsilon")], 1_950_000_000);
    let corpus = corpus(dir.path());
    let sessions = corpus.discover();
    let cache = warm_cache(&corpus, &sessions, &dir.path().join("cache"));
    let activity = cached(&cache, &corpus);
    let (newest, oldest) = (End::Newest, End::Oldest);
    for (q, limit, from) in [
        ("alpha", 3, newest),
        ("gamma", 5, newest),
        ("gamma", 4, newest),
        ("delta", 3, oldest),
        ("epsilon", 5, oldest),
        ("epsilon", 4, oldest),
    ] {
        let filter = Filter::new(&[q.to_string()], vec![], None, None);
        let page = (limit, from);
        let (page, spared) = page_with_and_without(&corpus, &sessions, &filter, page, &activity);
        assert!(
            page.has_older || page.has_newer,
            "{q}: more hits than the page"
        );
        // Only a page of four leaves a session unread: its four reach past the `gamma` of
        // session 71, or the `epsilon` of session 82.
        assert_eq!(spared, usize::from(limit == 4), "{q}, {limit}");
    }
}
