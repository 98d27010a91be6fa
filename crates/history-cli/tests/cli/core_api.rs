//! One page policy for every front end: the same requests sent through history-core's API (with
//! the CLI's renderers) and through the binary give byte-identical output.

use crate::common::Roots;
use history_cli::render::{Json, Printer, Text};
use history_cli::HARNESSES;
use history_core::current_session;
use history_core::End;
use history_core::Render;
use history_core::{History, ListRequest, ReadRequest, Role, SessionKey, Timestamp};

/// A front end of its own: the core's API over the copied roots, as the binary sees them.
fn history(r: &Roots, current: Option<&str>) -> History {
    let env = |k: &str| match k {
        "HOME" => Some(r.dir.path().join("home").into_os_string()),
        _ => None,
    };
    let current = current_session(current, &HARNESSES, &env).unwrap();
    History::from_registry(&HARNESSES, &|h| Some(r.root(h.name).to_path_buf()), &env)
        .with_current(current, None)
}

/// What the binary would print for the answer.
fn through_core<P: Printer>(
    printer: &P,
    answer: Result<String, history_core::HistoryError>,
) -> String {
    answer.unwrap_or_else(|e| printer.error(&e))
}

fn list<P: Printer>(h: &History, req: &ListRequest, printer: &P) -> String {
    let answer = h
        .list(req, printer)
        .map(|page| both(printer.list_streams(&page)));
    through_core(printer, answer)
}

fn read<P: Printer>(h: &History, req: &ReadRequest, printer: &P) -> String {
    let answer = h
        .read(req, printer)
        .map(|page| both(printer.read_streams(&page)));
    through_core(printer, answer)
}

/// Standard output, then standard error, as [`binary`] gives them.
fn both((stdout, stderr): (String, String)) -> String {
    stdout + &stderr
}

fn binary(r: &Roots, args: &[&str], current: Option<&str>) -> String {
    let mut all: Vec<&str> = args.to_vec();
    if let Some(c) = current {
        all.extend(["--current", c]);
    }
    let run = r.run(&all);
    // Results go to stdout, what is said about them and errors to stderr (errors as JSON to
    // stdout with --json).
    let root = r.dir.path().display().to_string();
    both((run.stdout, run.stderr)).replace("[ROOT]", &root)
}

/// The text renderer whose recipes repeat what the binary's do: the flags before `flags`, and
/// a budget it was given (the roots are written `[ROOT]` either way).
fn text_like_the_binary(flags: &[&str], budget: usize) -> Text {
    let mut prefix: Vec<String> = std::iter::once("notesoup-history")
        .chain(flags.iter().copied())
        .map(String::from)
        .collect();
    if budget != history_core::DEFAULT_BUDGET {
        prefix.extend(["--budget".into(), budget.to_string()]);
    }
    Text {
        prefix,
        ..Text::default()
    }
}

/// Each case: the request as the binary takes it, and as the core takes it.
fn list_cases() -> Vec<(Vec<&'static str>, ListRequest)> {
    let t = |s: &str| Timestamp::parse_rfc3339(s);
    vec![
        (
            vec!["list", "--limit", "500"],
            ListRequest {
                limit: 500,
                ..ListRequest::default()
            },
        ),
        (
            vec!["list", "--from", "oldest", "--limit", "3"],
            ListRequest {
                from: Some(End::Oldest),
                limit: 3,
                ..ListRequest::default()
            },
        ),
        (
            vec![
                "list",
                "--session",
                "*",
                "--query",
                "test",
                "--budget",
                "4000",
            ],
            ListRequest {
                session: Some("*".into()),
                queries: vec!["test".into()],
                budget: 4000,
                ..ListRequest::default()
            },
        ),
        (
            vec![
                "list",
                "--session",
                "claude:*",
                "--query",
                "git",
                "--role",
                "tool",
                "--limit",
                "2",
                "--budget",
                "1500",
            ],
            ListRequest {
                session: Some("claude:*".into()),
                queries: vec!["git".into()],
                roles: vec![Role::Tool],
                limit: 2,
                budget: 1500,
                ..ListRequest::default()
            },
        ),
        (
            vec![
                "list",
                "--session",
                "*",
                "--since",
                "2026-03-01",
                "--role",
                "user",
            ],
            ListRequest {
                session: Some("*".into()),
                roles: vec![Role::User],
                since: t("2026-03-01T00:00:00Z"),
                ..ListRequest::default()
            },
        ),
        (
            vec!["list", "--session", "claude:70fc", "--limit", "4"],
            ListRequest {
                session: Some("claude:70fc".into()),
                limit: 4,
                ..ListRequest::default()
            },
        ),
        (
            vec![
                "list",
                "--session",
                "claude:70fc",
                "--before-seq",
                "30",
                "--budget",
                "2000",
            ],
            ListRequest {
                session: Some("claude:70fc".into()),
                before_seq: Some(30),
                budget: 2000,
                ..ListRequest::default()
            },
        ),
        (
            vec![
                "list",
                "--session",
                "pi:branched",
                "--all-branches",
                "--after-seq",
                "3",
            ],
            ListRequest {
                session: Some("pi:branched".into()),
                all_branches: true,
                after_seq: Some(3),
                ..ListRequest::default()
            },
        ),
        (
            vec![
                "list",
                "--session",
                "codex:*",
                "--query",
                "the",
                "--from",
                "oldest",
            ],
            ListRequest {
                session: Some("codex:*".into()),
                queries: vec!["the".into()],
                from: Some(End::Oldest),
                ..ListRequest::default()
            },
        ),
        (
            vec!["list", "--session", "a"],
            ListRequest {
                session: Some("a".into()),
                ..ListRequest::default()
            },
        ),
        (
            vec!["list", "--session", "*", "--after-seq", "2"],
            ListRequest {
                session: Some("*".into()),
                after_seq: Some(2),
                ..ListRequest::default()
            },
        ),
    ]
}

#[test]
fn list_pages_are_the_binary_s_output() {
    let r = Roots::new();
    let h = history(&r, None);
    let cases = list_cases();
    let with_items = cases.iter().filter(|(args, _)| r.run(args).code == 0);
    assert_eq!(
        with_items.count(),
        cases.len() - 2,
        "all but the two errors"
    );
    for (args, req) in cases {
        let text = binary(&r, &args, None);
        let render = text_like_the_binary(&[], req.budget);
        assert_eq!(list(&h, &req, &render), text, "text of {args:?}");
        let mut json_args = args.clone();
        json_args.push("--json");
        let json = binary(&r, &json_args, None);
        assert_eq!(list(&h, &req, &Json), json, "JSON of {args:?}");
    }
}

#[test]
fn the_current_session_is_implicit_in_both() {
    let r = Roots::new();
    let current = "claude:70fc6d83-147d-4fdf-b015-bd67eeb11883";
    let h = history(&r, Some(current));
    assert_eq!(h.current(), Some(&SessionKey::new("claude", &current[7..])));
    let req = ListRequest {
        limit: 3,
        budget: 3000,
        ..ListRequest::default()
    };
    // The binary is told the current session by flag, which its recipes repeat.
    let text = text_like_the_binary(&["--current", current], req.budget);
    let out = list(&h, &req, &text);
    let headers: Vec<&str> = out
        .lines()
        .filter(|l| l.contains("| seq ") || l.starts_with("seq "))
        .collect();
    assert!(
        !headers.is_empty() && headers.iter().all(|h| h.starts_with("seq ")),
        "implicit headers: {out}"
    );
    assert_eq!(
        out,
        binary(
            &r,
            &["list", "--limit", "3", "--budget", "3000"],
            Some(current)
        )
    );
}

#[test]
fn read_pages_are_the_binary_s_output() {
    let r = Roots::new();
    let h = history(&r, None);
    let session = "claude:70fc6d83-147d-4fdf-b015-bd67eeb11883";
    let cases: Vec<(Vec<&str>, ReadRequest)> = vec![
        (
            vec!["read", "--session", session, "--seq", "11"],
            ReadRequest {
                session: Some(session.into()),
                seq: 11,
                part: 0,
                offset_chars: 0,
                budget: 32768,
            },
        ),
        (
            vec![
                "read",
                "--session",
                session,
                "--seq",
                "11",
                "--budget",
                "1100",
                "--offset-chars",
                "7",
            ],
            ReadRequest {
                session: Some(session.into()),
                seq: 11,
                part: 0,
                offset_chars: 7,
                budget: 1100,
            },
        ),
        (
            vec!["read", "--session", session, "--seq", "9999"],
            ReadRequest {
                session: Some(session.into()),
                seq: 9999,
                part: 0,
                offset_chars: 0,
                budget: 32768,
            },
        ),
        (
            vec!["read", "--session", "*", "--seq", "1"],
            ReadRequest {
                session: Some("*".into()),
                seq: 1,
                part: 0,
                offset_chars: 0,
                budget: 32768,
            },
        ),
    ];
    for (args, req) in cases {
        assert_eq!(
            read(&h, &req, &text_like_the_binary(&[], req.budget)),
            binary(&r, &args, None),
            "{args:?}"
        );
        let mut json_args = args.clone();
        json_args.push("--json");
        assert_eq!(
            read(&h, &req, &Json),
            binary(&r, &json_args, None),
            "JSON of {args:?}"
        );
    }
}

#[test]
fn a_cut_page_fits_the_budget_in_either_rendering() {
    let r = Roots::new();
    let h = history(&r, None);
    let renders: [&dyn Render; 2] = [&Text::default(), &Json];
    for budget in [1024, 1500, 3000, 9000] {
        let req = ListRequest {
            session: Some("*".into()),
            queries: vec!["e".into()],
            limit: 200,
            budget,
            ..ListRequest::default()
        };
        for render in renders {
            let page = h.list(&req, render).unwrap();
            assert!(page.has_older, "a budget of {budget} leaves hits out");
            assert!(render.list(&page).len() <= budget, "{budget}");
        }
    }
}
