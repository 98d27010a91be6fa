//! Paging through a search of many sessions by its recipes: the pages, followed from either end,
//! hold exactly the hits of one big page, in its order, with none lost or repeated, even where
//! many hits share a time (the order of hits: time, then session, seq and part).

use std::fs;

use crate::common::Roots;
use serde_json::Value;

/// Sessions whose hits mostly share three instants, with some untimed.
fn plant(roots: &Roots) {
    let dir = roots.root("claude").join("-w-paging");
    fs::create_dir_all(&dir).unwrap();
    for s in 0..4 {
        let session = format!("0000000{s}-aaaa-4000-8000-00000000000{s}");
        let mut text = String::new();
        let mut parent = "null".to_string();
        for n in 0..15 {
            let uuid = format!("{s}-{n}");
            let time = match n % 5 {
                0 => String::new(),
                k => format!(r#","timestamp":"2026-05-0{}T10:00:00.000Z""#, 1 + k % 3),
            };
            let role = if n % 2 == 0 { "user" } else { "assistant" };
            let content = match role {
                "user" => format!(r#""needle {s}/{n}""#),
                _ => format!(r#"[{{"type":"text","text":"needle {s}/{n}"}}]"#),
            };
            text.push_str(&format!(
                r#"{{"parentUuid":{parent},"isSidechain":false,"cwd":"/w/paging","sessionId":"{session}","type":"{role}","message":{{"role":"{role}","content":{content}}},"uuid":"{uuid}"{time}}}"#
            ));
            text.push('\n');
            parent = format!("\"{uuid}\"");
        }
        fs::write(dir.join(format!("{session}.jsonl")), text).unwrap();
    }
}

/// `(session, seq, part)` of a page's items, oldest first.
fn places(page: &Value) -> Vec<(String, u64, u64)> {
    page["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (
                i["session"].as_str().unwrap().to_string(),
                i["seq"].as_u64().unwrap(),
                i["part"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// The command-line form of a recipe's place.
fn place(v: &Value) -> String {
    let time = v["time"].as_str().unwrap_or("untimed");
    format!(
        "{time},{},{},{}",
        v["session"].as_str().unwrap(),
        v["seq"],
        v["part"]
    )
}

/// Follows `side`'s recipes from the first page of `args` to the end; every page's items, in
/// the order the pages came.
fn follow(
    run: &dyn Fn(&[&str]) -> Value,
    args: &[&str],
    side: &str,
) -> Vec<Vec<(String, u64, u64)>> {
    let flag = if side == "older" {
        "--before"
    } else {
        "--after"
    };
    let mut pages = Vec::new();
    let mut page = run(args);
    loop {
        pages.push(places(&page));
        assert!(pages.len() < 200, "paging does not end");
        let Some(recipe) = page.get(side).cloned() else {
            break;
        };
        let key = if side == "older" { "before" } else { "after" };
        assert_eq!(recipe["query"], serde_json::json!(["needle"]), "{recipe}");
        let at = place(&recipe[key]);
        let mut next: Vec<&str> = args.to_vec();
        next.extend([flag, at.as_str()]);
        page = run(&next);
        assert_eq!(
            page[if side == "older" {
                "has_newer"
            } else {
                "has_older"
            }],
            true,
            "a page a recipe asked for has the page it came from beyond it"
        );
    }
    pages
}

#[test]
fn pages_followed_from_either_end_hold_exactly_the_big_page() {
    let roots = Roots::new();
    plant(&roots);
    let search = [
        "list",
        "--session",
        "claude:*",
        "--query",
        "needle",
        "--json",
    ];
    let mut all: Vec<&str> = search.to_vec();
    all.extend(["--limit", "1000", "--budget", "10000000"]);
    for indexed in [false, true] {
        let run = |args: &[&str]| -> Value {
            let out = if indexed {
                roots.run_indexed(args)
            } else {
                roots.run(args)
            };
            assert_eq!(out.code, 0, "{args:?}: {out:?}");
            out.json()
        };
        if indexed {
            assert_eq!(roots.run_indexed(&["index"]).code, 0);
        }
        let big = places(&run(&all));
        assert_eq!(big.len(), 60, "{big:?}");
        for (limit, budget) in [("3", "100000"), ("7", "100000"), ("20", "1500")] {
            let mut args: Vec<&str> = search.to_vec();
            args.extend(["--limit", limit, "--budget", budget]);
            // Newest first, each page older than the one before.
            let older = follow(&run, &args, "older");
            let joined: Vec<_> = older.into_iter().rev().flatten().collect();
            assert_eq!(
                joined, big,
                "older pages, limit {limit}, budget {budget}, index {indexed}"
            );
            // Oldest first.
            let mut args = args.clone();
            args.extend(["--from", "oldest"]);
            let newer = follow(&run, &args, "newer");
            let joined: Vec<_> = newer.into_iter().flatten().collect();
            assert_eq!(
                joined, big,
                "newer pages, limit {limit}, budget {budget}, index {indexed}"
            );
        }
    }
}

/// The sessions of an overview page, in its order.
fn sessions_of(page: &Value) -> Vec<String> {
    places(page).into_iter().map(|(s, ..)| s).collect()
}

#[test]
fn the_overview_pages_on_through_every_session_once() {
    let roots = Roots::new();
    // Sessions taken in the same nanosecond are taken in the order of their ids.
    for (i, path) in roots.files().keys().enumerate() {
        roots.set_mtime(path, (i % 3) as u64);
    }
    let run = |args: &[&str]| -> Value { roots.run(args).json() };
    let mut every = sessions_of(&run(&[
        "list",
        "--session",
        "*",
        "--json",
        "--limit",
        "500",
        "--budget",
        "10000000",
    ]));
    every.sort();
    assert!(every.len() > 20, "{every:?}");
    for (limit, budget) in [("1", "100000"), ("4", "100000"), ("20", "2500")] {
        for (from, side, flag, key) in [
            ("newest", "older", "--before", "before"),
            ("oldest", "newer", "--after", "after"),
        ] {
            let args = [
                "list",
                "--session",
                "*",
                "--json",
                "--limit",
                limit,
                "--budget",
                budget,
                "--from",
                from,
            ];
            let mut page = run(&args);
            let mut pages = vec![sessions_of(&page)];
            while let Some(recipe) = page.get(side).cloned() {
                assert!(pages.len() < 1000, "paging does not end");
                assert_eq!(recipe["session"], "*", "{recipe}");
                let at = place(&recipe[key]);
                let mut next = args.to_vec();
                next.extend([flag, at.as_str()]);
                page = run(&next);
                pages.push(sessions_of(&page));
                // From a page a recipe asked for, the other recipe goes back to the one before.
                let back = if side == "older" { "newer" } else { "older" };
                let recipe = page[back].clone();
                let (flag, key) = match back {
                    "older" => ("--before", "before"),
                    _ => ("--after", "after"),
                };
                assert!(
                    recipe.is_object(),
                    "{limit}/{budget} from {from}: no {back}"
                );
                if budget == "100000" {
                    let at = place(&recipe[key]);
                    let mut back_args = args.to_vec();
                    back_args.retain(|a| *a != "--from" && *a != from);
                    back_args.extend([flag, at.as_str()]);
                    let mut got = sessions_of(&run(&back_args));
                    let mut want = pages[pages.len() - 2].clone();
                    got.sort();
                    want.sort();
                    assert_eq!(got, want, "{limit} from {from}: back to the page before");
                }
            }
            let mut seen: Vec<String> = pages.concat();
            seen.sort();
            assert_eq!(seen, every, "limit {limit}, budget {budget}, from {from}");
        }
    }
}

#[test]
fn a_place_outside_a_search_of_many_sessions_is_refused() {
    let roots = Roots::new();
    let at = "2026-05-01T10:00:00.000Z,claude:x,1,0";
    for args in [
        vec![
            "list",
            "--session",
            "claude:70fc",
            "--query",
            "a",
            "--after",
            at,
        ],
        vec![
            "list",
            "--session",
            "*",
            "--query",
            "a",
            "--before",
            at,
            "--after",
            at,
        ],
    ] {
        let run = roots.run(&args);
        assert_eq!(run.code, 2, "{args:?}: {run:?}");
        assert!(run.stderr.contains("--before"), "{args:?}: {}", run.stderr);
    }
    let run = roots.run(&[
        "list",
        "--session",
        "*",
        "--query",
        "a",
        "--before",
        "yesterday",
    ]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.contains("not a place"), "{}", run.stderr);
}
