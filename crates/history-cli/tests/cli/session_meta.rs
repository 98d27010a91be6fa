//! Where a session ran and what it is called, on every `--json` item of every harness: `cwd`,
//! `git_branch` and `title`, each where the transcript records it.

use crate::common::{fixtures, Roots, Run};
use serde_json::Value;

/// The items of a run that must succeed.
fn items(run: &Run) -> Vec<Value> {
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    run.json()["items"].as_array().unwrap().clone()
}

/// `(cwd, git_branch, title)` of an item, each `None` when the item has no such field.
fn place(item: &Value) -> (Option<&str>, Option<&str>, Option<&str>) {
    let field = |k: &str| {
        let v = item.get(k);
        assert!(v.is_none_or(Value::is_string), "{k}: {item}");
        v.and_then(Value::as_str)
    };
    (field("cwd"), field("git_branch"), field("title"))
}

fn browse(r: &Roots, harness: &str, session: &str) -> Vec<Value> {
    items(&r.run_only(harness, &["list", "--session", session, "--json"]))
}

#[test]
fn claude_items_carry_the_cwd_git_branch_and_title() {
    let r = Roots::new();
    for item in browse(&r, "claude", "claude:unknown-line-types") {
        assert_eq!(
            place(&item),
            (Some("/w/app"), Some("main"), Some("Greeting test")),
            "the custom title beats the AI title"
        );
    }
    let read = r.run_only(
        "claude",
        &[
            "read",
            "--session",
            "meta-and-context",
            "--seq",
            "8",
            "--json",
        ],
    );
    assert_eq!(
        place(&read.json()["item"]),
        (Some("/w/app"), Some("main"), Some("Login test fix"))
    );
}

#[test]
fn codex_items_carry_the_session_meta_cwd_and_git_branch() {
    let r = Roots::new();
    let items = browse(&r, "codex", "codex:019c8a4c-ed82-79a1-aa28-7738fc5ab61a");
    assert!(!items.is_empty());
    for item in items {
        let (cwd, branch, _) = place(&item);
        assert_eq!(
            (cwd, branch),
            (Some("/home/u/proj"), Some("main")),
            "{item}"
        );
    }
}

#[test]
fn pi_items_carry_the_header_cwd_and_the_session_name_as_title() {
    let r = Roots::new();
    let items = browse(&r, "pi", "pi:metadata-entries");
    assert!(!items.is_empty());
    for item in items {
        assert_eq!(
            place(&item),
            (Some("/work/demo"), None, Some("Refactor auth")),
            "pi records no branch; the latest non-empty name is the title"
        );
    }
}

#[test]
fn overview_and_search_items_carry_them_too() {
    let r = Roots::new();
    let args = ["list", "--json", "--limit", "1000", "--budget", "10000000"];
    let overview = items(&r.run(&args));
    let by_session = |id: &str| {
        overview
            .iter()
            .find(|i| i["session"] == id)
            .unwrap_or_else(|| panic!("{id} in the overview"))
            .clone()
    };
    let claude = by_session("claude:meta-and-context");
    assert_eq!(
        place(&claude),
        (Some("/w/app"), Some("main"), Some("Login test fix"))
    );
    let cached = items(&r.run(&args));
    assert_eq!(cached, overview, "the overview cache keeps them");
    let codex = by_session("codex:019c8a4c-ed82-79a1-aa28-7738fc5ab61a");
    assert_eq!(place(&codex).1, Some("main"));
    let hits = items(&r.run(&["list", "--session", "*", "--query", "Hello there", "--json"]));
    let hit = hits
        .iter()
        .find(|i| i["session"] == "claude:unknown-line-types")
        .expect("a hit in claude:unknown-line-types");
    assert_eq!(
        place(hit),
        (Some("/w/app"), Some("main"), Some("Greeting test"))
    );
}

#[test]
fn hits_answered_from_the_search_index_carry_them_too() {
    let r = Roots::with_extra("claude", &fixtures().join("claude-2026/projects"));
    let index = r.run_indexed(&["index"]);
    assert_eq!(index.code, 0, "{index:?}");
    let args = ["list", "--session", "*", "--query", "METAFIRST", "--json"];
    let run = r.run_indexed(&args);
    assert!(
        run.json()["coverage"]["from_index"].as_u64().unwrap() > 0,
        "{}",
        run.stdout
    );
    let hits = items(&run);
    assert!(!hits.is_empty());
    for hit in &hits {
        assert_eq!(
            place(hit),
            (
                Some("/w/new"),
                Some("feature/metafirst"),
                Some("METAFIRST custom title")
            )
        );
    }
    assert_eq!(
        hits,
        items(&r.run(&args)),
        "the same items without the index"
    );
}
