//! What a person at a shell meets first: wrong input refused in one line with exit 2, results on
//! stdout and everything said about them on stderr, the current session named when the
//! environment chose it, sessions selected by directory, and `list --help`.

use crate::common::{Roots, Run};

/// An error: exit 2, one line on stderr naming the `usage` code, nothing on stdout.
fn usage_error(run: &Run) -> String {
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stdout.is_empty(), "{run:?}");
    assert_eq!(run.stderr.lines().count(), 1, "one line: {run:?}");
    assert!(run.stderr.ends_with("(usage)\n"), "{run:?}");
    run.stderr.clone()
}

#[test]
fn a_limit_below_one_is_refused() {
    let r = Roots::new();
    for limit in ["0", "-1"] {
        let err = usage_error(&r.run(&["list", "--limit", limit]));
        assert_eq!(
            err,
            format!("error: invalid value '{limit}' for '--limit <LIMIT>': must be at least 1 (usage)\n")
        );
    }
    let json = r.run(&["list", "--limit", "0", "--json"]);
    assert_eq!(json.code, 2);
    assert_eq!(json.json()["error"]["code"], "usage");
}

#[test]
fn clap_s_tip_is_kept_on_the_line() {
    let r = Roots::new();
    let err = usage_error(&r.run(&["list", "--sesion", "x"]));
    assert_eq!(
        err,
        "error: unexpected argument '--sesion' found; tip: a similar argument exists: '--session' (usage)\n"
    );
}

#[test]
fn a_missing_required_flag_is_named() {
    let r = Roots::new();
    let err = usage_error(&r.run(&["read", "--session", "abandoned-branch"]));
    assert!(
        err.contains("the following required arguments were not provided: --seq <SEQ>"),
        "{err}"
    );
}

#[test]
fn a_named_root_that_is_not_a_directory_is_refused() {
    let r = Roots::new();
    let missing = r.dir.path().join("no-such-dir");
    let missing = missing.to_str().unwrap();
    let err = usage_error(&r.run(&["list", "--claude-root", missing]));
    assert_eq!(
        err,
        "error: --claude-root [ROOT]/no-such-dir: no such directory (usage)\n"
    );
    let file = r.dir.path().join("a-file");
    std::fs::write(&file, "").unwrap();
    let err = usage_error(&r.run(&["list", "--pi-root", file.to_str().unwrap()]));
    assert!(
        err.contains("--pi-root [ROOT]/a-file: not a directory"),
        "{err}"
    );
    // The environment's roots are held to the same rule.
    let by_env = r.run_with(&["list"], &[("NOTESOUP_HISTORY_CODEX_ROOT", missing)]);
    let err = usage_error(&by_env);
    assert!(
        err.contains("NOTESOUP_HISTORY_CODEX_ROOT [ROOT]/no-such-dir: no such directory"),
        "{err}"
    );
}

#[test]
fn a_missing_default_root_is_simply_empty() {
    // No Claude Code on this machine: its default root (`~/.claude/projects`) does not exist.
    let r = Roots::new();
    let mut cmd = r.cmd();
    cmd.env_remove("NOTESOUP_HISTORY_CLAUDE_ROOT");
    let out = cmd
        .args(["list", "--session", "pi:*", "--limit", "1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(out.stderr.is_empty(), "{out:?}");
}

/// The id of a Claude fixture session and the environment of a shell inside it.
const INSIDE: &str = "abandoned-branch";

#[test]
fn the_current_session_from_the_environment_is_named_on_stderr() {
    let r = Roots::new();
    let run = r.run_with(
        &["list", "--limit", "2"],
        &[("CLAUDE_CODE_SESSION_ID", INSIDE)],
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        run.stderr,
        "notice: listing the current session claude:abandoned-branch (named by \
         CLAUDE_CODE_SESSION_ID); --session '*' lists every session\n"
    );
    assert!(
        run.stdout.starts_with("seq "),
        "results only: {}",
        run.stdout
    );
    assert!(!run.stdout.contains("notice"), "{}", run.stdout);
    // JSON keeps it in the object.
    let json = r.run_with(
        &["list", "--json"],
        &[("NOTESOUP_CURRENT_SESSION", "claude:abandoned-branch")],
    );
    assert!(json.stderr.is_empty(), "{json:?}");
    assert!(json.json()["notice"]
        .as_str()
        .unwrap()
        .contains("(named by NOTESOUP_CURRENT_SESSION)"));
    // A session named on the command line is what the person asked for: nothing to say.
    let asked = r.run_with(
        &["list", "--session", INSIDE],
        &[("CLAUDE_CODE_SESSION_ID", INSIDE)],
    );
    assert!(asked.stderr.is_empty(), "{asked:?}");
    let flag = r.run(&["list", "--current", "claude:abandoned-branch"]);
    assert!(flag.stderr.is_empty(), "{flag:?}");
}

#[test]
fn a_current_session_that_no_longer_exists_gives_way_to_every_session() {
    let r = Roots::new();
    let env = [("CLAUDE_CODE_SESSION_ID", "gone-since-yesterday")];
    let run = r.run_with(&["list", "--limit", "3"], &env);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        run.stderr,
        "notice: the current session claude:gone-since-yesterday (named by \
         CLAUDE_CODE_SESSION_ID) was not found: listing every session (--session '*')\n"
    );
    let everything = r.run(&["list", "--limit", "3"]);
    assert_eq!(run.stdout, everything.stdout);
    // A search too searches everything, and says so.
    let search = r.run_with(&["list", "--query", "login", "--json"], &env);
    assert_eq!(search.code, 0, "{search:?}");
    let json = search.json();
    assert!(json["notice"].as_str().unwrap().contains("was not found"));
    assert!(json["items"].as_array().unwrap().len() > 1);
}

#[test]
fn reading_a_current_session_that_no_longer_exists_names_its_variable() {
    let r = Roots::new();
    let run = r.run_with(
        &["read", "--seq", "1"],
        &[("CLAUDE_CODE_SESSION_ID", "gone-since-yesterday")],
    );
    assert_eq!(run.code, 2);
    assert_eq!(
        run.stderr,
        "error: no session matches \"claude:gone-since-yesterday (the current session, named by \
         CLAUDE_CODE_SESSION_ID; name one with --session)\" (unknown_session)\n"
    );
}

#[test]
fn notices_and_no_matching_events_go_to_stderr() {
    let r = Roots::new();
    let none = r.run(&["list", "--session", "*", "--query", "zqxj-not-anywhere"]);
    assert_eq!(none.code, 1);
    assert_eq!(none.stdout, "");
    assert_eq!(none.stderr, "no matching events\n");
    // A phrase that is nowhere: how to ask for any of its words, or rank by them.
    let phrase = r.run(&["list", "--session", "*", "--query", "zqxj fix the deploy"]);
    assert_eq!(phrase.code, 1);
    assert_eq!(
        phrase.stderr,
        "no matching events\nhint: --query 'zqxj fix the deploy' is one literal phrase; repeat \
         --query for any of several words, or rank sessions by the words: notesoup-history find \
         zqxj fix the deploy\n"
    );
    let sessions = r.run(&["list", "--sessions", "--query", "zqxj fix"]);
    assert!(
        sessions
            .stderr
            .contains("\nhint: --query 'zqxj fix' is one"),
        "{sessions:?}"
    );
    // The same in one session: nothing on stdout, not even its resume command.
    let none = r.run(&[
        "list",
        "--session",
        "claude:70fc",
        "--query",
        "zqxj-not-anywhere",
    ]);
    assert_eq!((none.code, none.stdout.as_str()), (1, ""), "{none:?}");
    assert_eq!(none.stderr, "no matching events\n");
    let damaged = r.run_only("claude", &["list", "--session", "non-json-line"]);
    assert_eq!(damaged.code, 0);
    assert!(
        damaged
            .stderr
            .starts_with("notice: skipped 4 unreadable lines"),
        "{damaged:?}"
    );
    assert!(
        damaged.stdout.starts_with("session claude:non-json-line"),
        "{damaged:?}"
    );
    let read = r.run(&["read", "--session", "abandoned-branch", "--seq", "999"]);
    assert_eq!(read.code, 1);
    assert_eq!(read.stderr, "no event at that seq and part\n");
    assert!(read.stdout.starts_with("→ neighborhood:"), "{read:?}");
}

/// The sessions of a `list --json` page.
fn sessions(run: &Run) -> Vec<String> {
    let mut all: Vec<String> = run.json()["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["session"].as_str().unwrap().to_string())
        .collect();
    all.sort();
    all.dedup();
    all
}

/// The two Codex sessions that ran in `/home/u/pag`.
const PAG: [&str; 2] = [
    "codex:019f2a10-0000-7000-8000-00000000000a",
    "codex:019f2a10-0000-7000-8000-00000000000b",
];

#[test]
fn cwd_selects_sessions_by_directory_in_every_mode() {
    let r = Roots::new();
    // The overview: only sessions that ran in /home/u/pag or below it.
    let overview = r.run(&["list", "--cwd", "/home/u/pag", "--json"]);
    assert_eq!(sessions(&overview), PAG);
    for item in overview.json()["items"].as_array().unwrap() {
        assert_eq!(item["cwd"], "/home/u/pag");
    }
    // A directory is matched by its components, after normalizing: /home/u is above them all.
    let above = r.run(&[
        "list",
        "--cwd",
        "/home/./u/pag/../",
        "--limit",
        "100",
        "--json",
    ]);
    let above = sessions(&above);
    assert!(above.iter().all(|s| s.starts_with("codex:")), "{above:?}");
    assert!(above.len() > 10, "{above:?}");
    assert!(above.contains(&PAG[0].to_string()));
    let prefix = r.run(&["list", "--cwd", "/home/u/pa"]);
    assert_eq!(prefix.code, 1, "/home/u/pa is not /home/u/pag: {prefix:?}");
    // Where no session ran, it says the directory it took and where sessions did run, those
    // named like it first: in the overview, a search, --sessions and find.
    for args in [
        &["list", "--cwd", "/elsewhere/pag"][..],
        &[
            "list",
            "--cwd",
            "/elsewhere/pag",
            "-q",
            "e",
            "--session",
            "*",
        ],
        &["list", "--cwd", "/elsewhere/pag", "-q", "e", "--sessions"],
        &["find", "--cwd", "/elsewhere/pag", "summarise"],
    ] {
        let run = r.run(args);
        assert_eq!(run.code, 1, "{args:?}: {run:?}");
        assert!(
            run.stderr.contains(
                "no session ran in /elsewhere/pag or below; sessions ran in /home/u/pag ("
            ),
            "{args:?}: {}",
            run.stderr
        );
        assert!(run.stdout.is_empty(), "{args:?}: {}", run.stdout);
    }
    let json = r.run(&["list", "--cwd", "/elsewhere/pag", "--json"]).json();
    assert!(
        json["notice"].as_str().unwrap().contains("/home/u/pag"),
        "{json}"
    );
    // A search.
    let search = r.run(&[
        "list",
        "--session",
        "*",
        "--query",
        "e",
        "--cwd",
        "/home/u/pag",
        "--json",
    ]);
    assert_eq!(search.code, 0, "{search:?}");
    assert_eq!(sessions(&search), PAG);
    let paged = r.run(&[
        "list",
        "--session",
        "*",
        "--query",
        "e",
        "--cwd",
        "/home/u/pag",
        "--limit",
        "1",
        "--json",
    ]);
    assert_eq!(
        paged.json()["older"]["cwd"],
        "/home/u/pag",
        "the recipe keeps the place"
    );
    // One session: found there, or not.
    let here = r.run(&["list", "--session", "abandoned-branch", "--cwd", "/w/app"]);
    assert_eq!(here.code, 0, "{here:?}");
    let elsewhere = r.run(&[
        "list",
        "--session",
        "abandoned-branch",
        "--cwd",
        "/home/u/pag",
    ]);
    assert_eq!(elsewhere.code, 2);
    assert_eq!(
        elsewhere.stderr,
        "error: no session matches \"abandoned-branch under /home/u/pag\" (unknown_session)\n"
    );
}

#[test]
fn cwd_dot_is_the_directory_the_command_runs_in() {
    let r = Roots::new();
    let mut cmd = r.cmd();
    let out = cmd
        .current_dir("/")
        .args(["list", "--cwd", "home/u/pag/.", "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["items"].as_array().unwrap().len(), 2);
    let dot = r
        .cmd()
        .current_dir("/")
        .args([
            "list", "--cwd", ".", "--limit", "500", "--budget", "10000000", "--json",
        ])
        .output()
        .unwrap();
    let dot: serde_json::Value = serde_json::from_slice(&dot.stdout).unwrap();
    let all = r
        .run(&["list", "--limit", "500", "--budget", "10000000", "--json"])
        .json();
    let with_cwd = all["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["cwd"].as_str().is_some_and(|c| c.starts_with('/')))
        .count();
    assert_eq!(dot["items"].as_array().unwrap().len(), with_cwd);
}

#[test]
fn cwd_without_a_session_means_every_session_there_not_the_current_one() {
    let r = Roots::new();
    let run = r.run_with(
        &["list", "--cwd", "/home/u/pag", "--json"],
        &[("CLAUDE_CODE_SESSION_ID", INSIDE)],
    );
    assert_eq!(sessions(&run), PAG, "{run:?}");
    assert!(run.json().get("notice").is_none());
}

#[test]
fn list_help_groups_its_options_and_ends_with_examples_and_exit_codes() {
    let r = Roots::new();
    let run = r.run(&["list", "--help"]);
    assert_eq!(run.code, 0);
    insta::assert_snapshot!("list_help", run.stdout);
}

#[test]
fn cwd_gives_the_same_hits_with_the_search_index() {
    let r = Roots::new();
    // Three letters at least: the index holds trigrams, and a shorter query is a scan.
    let args = [
        "list",
        "--session",
        "*",
        "--query",
        "the",
        "--cwd",
        "/home/u",
        "--json",
    ];
    let plain = r.run(&args).json();
    let built = r.run_indexed(&["index"]);
    assert_eq!(built.code, 0, "{built:?}");
    let indexed = r.run_indexed(&args).json();
    r.wait_background();
    assert!(
        indexed["coverage"]["from_index"].as_u64().unwrap() > 0,
        "{indexed}"
    );
    assert!(!plain["items"].as_array().unwrap().is_empty());
    assert_eq!(indexed["items"], plain["items"]);
    assert_eq!(indexed["older"], plain["older"]);
}

#[test]
fn a_session_is_named_in_either_case() {
    let r = Roots::new();
    let lower = r.run(&["list", "--session", "claude:70fc", "--limit", "1"]);
    let upper = r.run(&["list", "--session", "CLAUDE:70FC", "--limit", "1"]);
    assert_eq!(lower.code, 0, "{lower:?}");
    assert_eq!(upper.stdout, lower.stdout);
    let many = r.run(&[
        "list",
        "--session",
        "Claude:70FC*",
        "--query",
        "the",
        "--limit",
        "1",
    ]);
    assert_eq!(many.code, 0, "{many:?}");
}

#[test]
fn times_by_the_calendar_and_by_name_are_taken() {
    let r = Roots::new();
    for (flag, value) in [
        ("--since", "6mo"),
        ("--since", "1y"),
        ("--until", "today"),
        ("--since", "yesterday"),
    ] {
        let run = r.run(&["list", "--session", "*", "--query", "the", flag, value]);
        assert_ne!(run.code, 2, "{flag} {value}: {run:?}");
    }
    // The fixtures are of 2026, before today: until today holds them all.
    let since = |extra: &[&str]| {
        let base = [
            "list",
            "--session",
            "*",
            "--query",
            "the",
            "--since",
            "2025-01-01",
        ];
        r.run(&[&base[..], extra, &["--json"]].concat())
    };
    let (all, until_today) = (since(&[]), since(&["--until", "today"]));
    assert!(!all.json()["items"].as_array().unwrap().is_empty());
    assert_eq!(all.json()["items"], until_today.json()["items"]);
}

/// The long flags a subcommand's help shows.
fn help_flags(r: &Roots, sub: &str) -> Vec<String> {
    let run = r.run(&[sub, "--help"]);
    assert_eq!(run.code, 0, "{run:?}");
    run.stdout
        .split_whitespace()
        .filter(|w| w.starts_with("--"))
        .map(|w| w.trim_end_matches([',', ')', ';', '.']).to_string())
        .collect()
}

#[test]
fn help_shows_the_global_flags_a_subcommand_uses() {
    let r = Roots::new();
    let shown = |sub: &str, flag: &str| help_flags(&r, sub).iter().any(|f| f == flag);
    for sub in ["list", "find", "read"] {
        for flag in ["--json", "--budget", "--color", "--show-path"] {
            assert!(shown(sub, flag), "{sub} --help: no {flag}");
        }
    }
    for sub in ["export", "index", "doctor", "reindex"] {
        assert!(shown(sub, "--json"), "{sub}");
        for flag in ["--budget", "--color", "--show-path"] {
            assert!(!shown(sub, flag), "{sub} --help: {flag}");
        }
    }
    assert!(shown("mcp", "--budget"));
    for flag in ["--json", "--color", "--show-path"] {
        assert!(!shown("mcp", flag), "mcp --help: {flag}");
    }
    for sub in ["completions", "man"] {
        for flag in [
            "--json",
            "--budget",
            "--color",
            "--show-path",
            "--claude-root",
            "--no-index",
        ] {
            assert!(!shown(sub, flag), "{sub} --help: {flag}");
        }
    }
    // Hidden, not removed: every command line that worked still works.
    let export = r.run(&[
        "export",
        "--session",
        "abandoned-branch",
        "--budget",
        "10",
        "--color",
        "always",
        "--show-path",
    ]);
    assert_eq!(export.code, 0, "{export:?}");
    let plain = r.run(&["export", "--session", "abandoned-branch"]);
    assert_eq!(export.stdout, plain.stdout);
    let man = r.run(&[
        "man",
        "--json",
        "--budget",
        "5",
        "--no-index",
        "--current",
        "claude:x",
    ]);
    assert_eq!(man.code, 0, "{man:?}");
    let completions = r.run(&["completions", "bash", "--show-path", "--color", "never"]);
    assert_eq!(completions.code, 0, "{completions:?}");
    let hidden_value = r.run(&["export", "--session", "abandoned-branch", "--budget", "x"]);
    assert_eq!(
        hidden_value.code, 2,
        "a hidden flag's value is still checked"
    );
}

#[test]
fn help_wraps_to_the_terminal_width_up_to_100_columns() {
    let r = Roots::new();
    for (columns, widest) in [(None, 100), (Some("60"), 60), (Some("250"), 100)] {
        let mut cmd = r.cmd();
        if let Some(c) = columns {
            cmd.env("COLUMNS", c);
        }
        let out = cmd.args(["list", "--help"]).output().unwrap();
        let help = String::from_utf8(out.stdout).unwrap();
        let longest = help.lines().map(|l| l.chars().count()).max().unwrap();
        assert!(longest <= widest, "{columns:?}: {longest}\n{help}");
        assert!(longest > widest - 10, "{columns:?}: {longest}\n{help}");
    }
}

#[test]
fn a_role_that_is_not_one_is_refused_in_one_line() {
    let r = Roots::new();
    let err = usage_error(&r.run(&["list", "--role", "robot"]));
    assert_eq!(
        err,
        "error: invalid value 'robot' for '--role <ROLE>'; [possible values: user, assistant, \
         tool, context] (usage)\n"
    );
    let find = usage_error(&r.run(&["find", "x", "--role", "User"]));
    assert!(find.contains("[possible values: user, assistant"), "{find}");
}
