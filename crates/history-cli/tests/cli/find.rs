//! `find` through the binary: a ranking answered through the index equals the ranking a scan
//! gives, appended sessions included; and what a person and a script see of it.

use insta::assert_snapshot;
use std::fs;

use crate::common::Roots;
use crate::index::{append, index, roots, same_both_ways, texts, update, Guard};

/// Questions of a few words drawn from the fixtures' own texts (seeded, so that a failure
/// repeats), and some written for the rules: stems, identifiers, paths, folding, CJK.
fn questions(roots: &Roots) -> Vec<String> {
    let mut rng = fastrand::Rng::with_seed(26);
    let mut words: Vec<String> = texts(roots)
        .iter()
        .flat_map(|t| {
            t.text
                .split_whitespace()
                .filter(|w| w.chars().count() >= 3)
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .collect();
    // Each once: a long session of the same words does not make every question its own.
    words.sort_unstable();
    words.dedup();
    let mut out: Vec<String> = [
        "deploy the api",
        "fixing the failing tests",
        "README.md",
        "flakyLoginTest login_test",
        "die STRASSE",
        "数据库 迁移",
        "kubectl rollout undo",
    ]
    .map(String::from)
    .to_vec();
    for _ in 0..12 {
        let n = rng.usize(1..=5);
        out.push(
            (0..n)
                .map(|_| words[rng.usize(..words.len())].clone())
                .collect::<Vec<_>>()
                .join(" "),
        );
    }
    out
}

/// Every question, ranked by session and by event, agrees with the index and without it.
fn rankings_agree(roots: &Roots, questions: &[String]) {
    for q in questions {
        for extra in [
            &["--limit", "50"][..],
            &["--events", "--limit", "50"][..],
            &["--role", "user", "--limit", "3"][..],
        ] {
            let mut args = vec!["find", "--json", "--budget", "10000000"];
            args.extend(extra);
            args.extend(["--", q.as_str()]);
            same_both_ways(roots, &args);
        }
    }
}

#[test]
fn find_with_the_index_ranks_as_find_without_it_appended_sessions_included() {
    const CODEX: &str =
        "codex/2026/03/02/rollout-2026-03-02T11-00-00-019c9a00-1111-7000-8000-000000000001.jsonl";
    let roots = roots();
    let _guard = Guard(&roots);
    // One session large enough to be read from the lines the index locates (a small one is
    // decoded whole): prompts with the questions' words among others without them.
    let padding =
        "lorem ipsum dolor amet consectetur adipiscing elit tempor incididunt labore ".repeat(16);
    let filler: String = (0..400)
        .map(|i| {
            let text = match i % 4 {
                0 => format!("the flaky login test failed on deploy {i}"),
                1 => format!("flakyLoginTest again, see src/login_test.rs {i}"),
                _ => format!("{padding}{i}"),
            };
            format!(
                r#"{{"timestamp":"2026-03-02T10:{:02}:{:02}.000Z","type":"event_msg","payload":{{"type":"user_message","message":"{text}","images":[]}}}}"#,
                2 + i / 60,
                i % 60
            ) + "\n"
        })
        .collect();
    append(&roots, CODEX, &filler);
    assert!(fs::metadata(roots.dir.path().join(CODEX)).unwrap().len() > 300_000);
    index(&roots);
    let mut questions = questions(&roots);
    rankings_agree(&roots, &questions);
    const PI: &str = "pi/--Users-ben-.claude-jobs-37c36311-tmp-tui-pi--/\
                      2026-07-21T22-33-37-367Z_019f86d0-2b56-72c1-b90f-60a707fde7d7.jsonl";
    append(
        &roots,
        CODEX,
        concat!(
            r#"{"timestamp":"2026-03-02T12:00:00.000Z","type":"event_msg","payload":{"type":"user_message","#,
            r#""message":"the appended rollout of flakyLoginTest keeps flaking","images":[]}}"#,
            "\n"
        ),
    );
    append(
        &roots,
        PI,
        concat!(
            r#"{"type":"message","id":"feedbeef","parentId":"cc9b14cb","timestamp":"2026-07-21T22:37:00.000Z","#,
            r#""message":{"role":"user","content":[{"type":"text","text":"appended: deploy the flaky api"}]}}"#,
            "\n"
        ),
    );
    questions.extend([
        "appended flaky rollout".to_string(),
        "flaking deploy api".to_string(),
    ]);
    rankings_agree(&roots, &questions);
    update(&roots);
    rankings_agree(&roots, &questions);
    // The two appended prompts hold both words: they come first.
    let found = roots.run_indexed(&["find", "--json", "--", "appended", "flaking"]);
    let sessions = found.json()["sessions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let mut top: Vec<&str> = sessions
        .iter()
        .take(2)
        .map(|s| s["session"].as_str().unwrap())
        .collect();
    top.sort_unstable();
    assert_eq!(
        top,
        [
            "codex:019c9a00-1111-7000-8000-000000000001",
            "pi:019f86d0-2b56-72c1-b90f-60a707fde7d7"
        ],
        "{}",
        found.stdout
    );
}

#[test]
fn find_shows_each_session_with_its_best_hits_and_recipes() {
    let roots = Roots::new();
    let text = roots.run(&["find", "--limit", "2", "--", "deploy", "the", "api"]);
    assert_eq!(text.code, 0, "{text:?}");
    assert_snapshot!("find_text", text.shown());
    let explained = roots.run(&[
        "find",
        "--limit",
        "1",
        "--explain",
        "--format",
        "lines",
        "--",
        "deploy api",
    ]);
    assert_snapshot!("find_explain", explained.shown());
    let json = roots.run(&[
        "find",
        "--json",
        "--limit",
        "1",
        "--events",
        "--",
        "deploy api",
    ]);
    let v = json.json();
    assert_eq!(v["schema_version"], 1);
    let hit = &v["events"][0];
    assert!(hit["score"].as_f64().is_some_and(|s| s > 0.0), "{v}");
    assert!(
        hit["read"]["seq"].is_u64() && hit["matched"].is_array(),
        "{v}"
    );
    assert_eq!(v["more"]["after_rank"], 1, "{v}");
    assert_eq!(v["more"]["text"], "deploy api", "{v}");
    // On a terminal the words are highlighted where they are, whole.
    let color = roots.run(&[
        "find",
        "--color",
        "always",
        "--limit",
        "1",
        "--",
        "deploying",
    ]);
    assert!(
        color.stdout.contains("\x1b[1;31mdeploy\x1b[0m"),
        "{}",
        color.stdout
    );
    let none = roots.run(&["find", "--", "zzqqxx"]);
    assert_eq!((none.code, none.stdout.as_str()), (1, ""), "{none:?}");
    assert!(none.stderr.contains("nothing matched"), "{none:?}");
    let usage = roots.run(&["find", "--", "where did we"]);
    assert_eq!(usage.code, 2, "{usage:?}");
}

#[test]
fn the_more_recipe_pages_through_the_ranking() {
    let roots = Roots::new();
    let all = roots.run(&[
        "find", "--json", "--limit", "6", "--", "the", "session", "test",
    ]);
    let ids = |run: &crate::common::Run| -> Vec<String> {
        run.json()["sessions"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|s| s["session"].as_str().unwrap().to_string())
            .collect()
    };
    let whole = ids(&all);
    assert!(whole.len() >= 4, "{}", all.stdout);
    let first = roots.run(&[
        "find", "--json", "--limit", "2", "--", "the", "session", "test",
    ]);
    let more = &first.json()["more"];
    let after = more["after_rank"].as_u64().unwrap().to_string();
    let next = roots.run(&[
        "find",
        "--json",
        "--limit",
        "4",
        "--after-rank",
        &after,
        "--",
        "the session test",
    ]);
    assert_eq!([ids(&first), ids(&next)].concat(), whole);
}

/// A page's sessions that the overview's cache does not hold take their first prompts from the
/// lines the index holds, not from a decode of the whole session: the prompts a decode gives.
#[test]
fn first_prompts_read_from_the_index_are_those_a_decode_gives() {
    let roots = roots();
    let _guard = Guard(&roots);
    index(&roots);
    let overview = roots.cache_home().join("notesoup").join("history");
    let mut prompts = 0;
    for q in questions(&roots) {
        let _ = fs::remove_dir_all(&overview);
        let args = [
            "find", "--json", "--limit", "100", "--budget", "10000000", "--", &q,
        ];
        same_both_ways(&roots, &args);
        let _ = fs::remove_dir_all(&overview);
        let found = roots.run_indexed(&args).json();
        let sessions = found["sessions"].as_array().cloned().unwrap_or_default();
        prompts += sessions.iter().filter(|s| s["prompt"].is_string()).count();
    }
    assert!(prompts >= 20, "{prompts} prompts shown");
}
