//! Output for a person: on a terminal (forced in-process, and under a real pseudo-terminal with
//! `script`) color, highlighted matches, local times with ages and one line per session; piped,
//! the plain text. Recipes are command lines that run; `--sessions` sums up whole sessions. Each
//! layout kept as a snapshot is a row of one table ([`Seen`]).

use std::collections::BTreeMap;
use std::process::Command;

use crate::common::Roots;
use history_cli::screen;
use history_cli::{run_on, Io, Terminal, HARNESSES};
use history_core::Timestamp;
use insta::assert_snapshot;

/// 2026-03-02T12:00:00Z: a day or so after most fixtures' times.
const NOW: Timestamp = Timestamp(1_772_452_800 * 1_000_000_000);

/// Runs the command in-process as if its output were a terminal `width` columns wide (or a pipe
/// with `terminal` false), in UTC at [`NOW`].
fn on_terminal(
    r: &Roots,
    terminal: bool,
    width: usize,
    args: &[&str],
    env: &[(&str, &str)],
) -> (String, u8) {
    let out = on_terminal_full(r, terminal, width, args, env);
    (out.stdout, out.code)
}

/// [`on_terminal`], with all the command's output; `TZ` in `env` names the time zone (UTC
/// without it).
fn on_terminal_full(
    r: &Roots,
    terminal: bool,
    width: usize,
    args: &[&str],
    env: &[(&str, &str)],
) -> history_cli::Output {
    let home = r.dir.path().join("home").display().to_string();
    let cache = r.cache_home().display().to_string();
    let roots: Vec<(String, String)> = r
        .roots()
        .iter()
        .map(|(h, p)| (h.root_env.to_string(), p.display().to_string()))
        .collect();
    let lookup = |k: &str| -> Option<std::ffi::OsString> {
        match k {
            "HOME" => Some(home.clone()),
            "XDG_CACHE_HOME" => Some(cache.clone()),
            "NOTESOUP_HISTORY_INDEX" => Some("off".into()),
            _ => env
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
                .or_else(|| roots.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone())),
        }
        .map(Into::into)
    };
    let mut argv = vec!["notesoup-history"];
    argv.extend_from_slice(args);
    let out = run_on(
        &HARNESSES,
        argv,
        &lookup,
        Io {
            input: &mut std::io::empty(),
            output: &mut std::io::sink(),
            start_index: &|_| {},
        },
        &Terminal {
            is_terminal: terminal,
            width: Some(width),
            height: Some(40),
            now: NOW,
            zone: env
                .iter()
                .find(|(k, _)| *k == "TZ")
                .map_or(jiff::tz::TimeZone::UTC, |(_, z)| {
                    jiff::tz::TimeZone::get(z).unwrap()
                }),
        },
    );
    let root = r.dir.path().display().to_string();
    history_cli::Output {
        stdout: out.stdout.replace(&root, "[ROOT]"),
        ..out
    }
}

/// SGR escapes shown as `<1;31>` … `</>`, so that a snapshot shows where color goes.
fn visible_sgr(text: &str) -> String {
    text.replace("\x1b[0m", "</>")
        .split("\x1b[")
        .enumerate()
        .map(|(i, part)| match (i, part.split_once('m')) {
            (0, _) | (_, None) => part.to_string(),
            (_, Some((code, rest))) => format!("<{code}>{rest}"),
        })
        .collect()
}

/// Where a [`Seen`] row's command writes.
enum To {
    /// In process, to a terminal this many columns wide, at [`NOW`] in UTC.
    Terminal(usize),
    /// The binary, to a pipe.
    Pipe,
}

/// One command's output as a person sees it, kept as a snapshot: a row of the table below, one
/// test (or two rows of one) a layout, checked by [`looks`].
struct Seen {
    /// Where the output goes.
    to: To,
    /// The command line.
    args: &'static [&'static str],
    /// Its environment besides the roots.
    env: &'static [(&'static str, &'static str)],
    /// The snapshot of its output, escapes shown by [`visible_sgr`].
    snapshot: &'static str,
    /// What else holds of the output (as written, escapes and all), given the row.
    more: fn(&Roots, &Seen, &str),
}

/// A row that checks nothing besides its snapshot.
const SEEN: Seen = Seen {
    to: To::Pipe,
    args: &[],
    env: &[],
    snapshot: "",
    more: |_, _, _| {},
};

/// Runs the row's command over `r`, which must succeed, and checks its output.
fn looks(r: &Roots, row: Seen) {
    let out = match row.to {
        To::Terminal(width) => {
            let (out, code) = on_terminal(r, true, width, row.args, row.env);
            assert_eq!(code, 0, "{out}");
            out
        }
        To::Pipe => {
            let run = r.run_with(row.args, row.env);
            assert_eq!(run.code, 0, "{}", run.stderr);
            run.stdout
        }
    };
    assert_snapshot!(row.snapshot, visible_sgr(&out));
    (row.more)(r, &row, &out);
}

#[test]
fn the_overview_on_a_terminal_is_a_line_per_session() {
    looks(
        &Roots::new(),
        Seen {
            to: To::Terminal(100),
            args: &["list", "--session", "claude:*"],
            snapshot: "terminal_overview_lines",
            more: |r, row, out| {
                assert!(out.contains('\x1b'), "colored: {out}");
                let (plain, _) = on_terminal(r, true, 100, row.args, &[("NO_COLOR", "1")]);
                assert!(!plain.contains('\x1b'), "NO_COLOR: {plain}");
                for line in plain.lines() {
                    assert!(screen::columns(line) <= 100, "{line}");
                }
                let mut never = row.args.to_vec();
                never.extend(["--color", "never"]);
                let (never, _) = on_terminal(r, true, 100, &never, &[]);
                assert_eq!(never, plain, "--color never is NO_COLOR");
            },
            ..SEEN
        },
    );
}

#[test]
fn a_search_on_a_terminal_highlights_every_match_and_shows_local_times() {
    looks(
        &Roots::new(),
        Seen {
            to: To::Terminal(100),
            args: &[
                "list",
                "--session",
                "claude:*",
                "--query",
                "login",
                "--limit",
                "3",
                "--format",
                "blocks",
            ],
            snapshot: "terminal_search_blocks",
            more: |r, row, _| {
                let (piped, _) = on_terminal(r, false, 100, row.args, &[]);
                assert!(!piped.contains('\x1b') && piped.contains("2026-03-01T09:00:01.000Z"));
                let binary = r.run(row.args);
                assert_eq!(
                    piped, binary.stdout,
                    "piped in-process is the binary's output"
                );
            },
            ..SEEN
        },
    );
}

#[test]
fn session_level_search_layouts() {
    let r = Roots::new();
    looks(
        &r,
        Seen {
            args: &["list", "--sessions", "--query", "login"],
            snapshot: "sessions_blocks",
            ..SEEN
        },
    );
    looks(
        &r,
        Seen {
            to: To::Terminal(110),
            args: &["list", "--sessions", "--query", "login"],
            env: &[("NO_COLOR", "1")],
            snapshot: "sessions_lines",
            ..SEEN
        },
    );
}

#[test]
fn a_search_in_lines_is_a_line_per_hit_with_its_match_in_view() {
    looks(
        &Roots::new(),
        Seen {
            args: &[
                "list",
                "--session",
                "*",
                "--query",
                "login",
                "--format",
                "lines",
                "--limit",
                "4",
            ],
            snapshot: "search_lines",
            more: |_, _, out| {
                for line in out.lines().filter(|l| l.contains(" seq ")) {
                    assert!(line.to_lowercase().contains("login"), "{line}");
                }
            },
            ..SEEN
        },
    );
}

#[test]
fn times_are_taken_in_the_zone_they_are_shown_in_and_say_it() {
    let r = Roots::new();
    let berlin = [("TZ", "Europe/Berlin"), ("NO_COLOR", "1")];
    let search = |since: &str, terminal: bool, env: &[(&str, &str)]| {
        let args = [
            "list",
            "--session",
            "*",
            "-q",
            "the",
            "--since",
            since,
            "--limit",
            "200",
        ];
        let out = on_terminal_full(&r, terminal, 200, &args, env);
        assert!(out.code < 2, "{since}: {}", out.stderr);
        let (piped, _) = on_terminal(&r, false, 200, &args, &[]);
        (out, piped)
    };
    // On a terminal in Berlin, 10:00 on the 1st of March is 09:00 UTC; piped, it is UTC.
    let (local, utc) = search("2026-03-01T10:00", true, &berlin);
    assert!(local.stdout.contains(" seq "), "{}", local.stdout);
    let (_, also) = search("2026-03-01 09:00", false, &[]);
    assert_ne!(utc, also, "piped, 10:00 is UTC");
    let (_, nine) = search("2026-03-01T09:00:00Z", false, &[]);
    assert_eq!(nine, also, "piped, a time without an offset is UTC");
    assert!(
        local.stderr.contains(
            "--since 2026-03-01T10:00 is 2026-03-01 10:00 Europe/Berlin (2026-03-01T09:00:00.000Z)"
        ),
        "{}",
        local.stderr
    );
    // A date is local midnight, and so is today: 2026-03-02 00:00 in Berlin is 23:00 UTC.
    let (today, _) = search("today", true, &berlin);
    assert!(
        today.stderr.contains("(2026-03-01T23:00:00.000Z)"),
        "{}",
        today.stderr
    );
    let (date, _) = search("2026-03-02", true, &berlin);
    assert!(
        date.stderr.contains("is 2026-03-02 00:00 Europe/Berlin"),
        "{}",
        date.stderr
    );
    // An offset or an age needs no zone, and nothing is said.
    let (plain, _) = search("2026-03-01T09:00:00Z", true, &berlin);
    assert!(!plain.stderr.contains("note:"), "{}", plain.stderr);
    assert_eq!(plain.stdout, local.stdout);
    // JSON is UTC wherever it goes.
    let json = on_terminal_full(
        &r,
        true,
        200,
        &[
            "list",
            "--session",
            "*",
            "-q",
            "the",
            "--since",
            "2026-03-01",
            "--json",
        ],
        &berlin,
    );
    assert!(
        json.stderr.contains("2026-03-01 00:00 UTC"),
        "{}",
        json.stderr
    );
}

#[test]
fn rows_fit_the_terminal_at_every_width_and_say_what_to_do_next() {
    let r = Roots::new();
    let no_color = [("NO_COLOR", "1")];
    let overview = [
        "list",
        "--session",
        "*",
        "--limit",
        "100",
        "--budget",
        "1000000",
    ];
    let sessions = ["list", "--query", "the", "--sessions", "--limit", "100"];
    for width in [80, 120, 160, 220] {
        for args in [&overview[..], &sessions[..]] {
            let (out, code) = on_terminal(&r, true, width, args, &no_color);
            assert_eq!(code, 0, "{out}");
            for line in out.lines() {
                assert!(screen::columns(line) <= width, "{width}: {line}");
            }
            // Claude finds a session from its project directory only.
            assert!(out.contains("→ cd /w/app && claude --resume "), "{out}");
        }
        let (out, _) = on_terminal(&r, true, width, &sessions, &no_color);
        let count = |what: &str| out.lines().filter(|l| l.contains(what)).count();
        let (hits, reads) = (count("→ hits: "), count("→ read: "));
        let rows = count(" hit") - hits;
        assert!(
            hits > 3 && hits == rows && reads == rows,
            "{width}: read and hits: {out}"
        );
        let rows = out.lines().filter(|l| l.contains(" hit")).count();
        assert!(
            hits > 3 && hits == rows - hits,
            "{width}: a hits recipe per row: {out}"
        );
    }
    // Whole commands, to paste: with --show-path, and in JSON.
    let mut whole = overview.to_vec();
    whole.push("--show-path");
    let (out, _) = on_terminal(&r, true, 80, &whole, &no_color);
    let pi = r
        .root("pi")
        .display()
        .to_string()
        .replace(&r.dir.path().display().to_string(), "[ROOT]");
    assert!(out.contains(&format!("→ pi --session {pi}/")), "{out}");
    assert!(!out.contains('…') || out.lines().all(|l| !l.contains("→ pi") || !l.contains('…')));
}

#[test]
fn a_search_on_a_terminal_is_a_line_per_hit_and_a_block_one_screen_at_most() {
    let r = Roots::new();
    let (id, text) = r.big_session(20_000);
    let search = ["list", "--session", "*", "--query", "login", "--limit", "5"];
    let (out, code) = on_terminal(&r, true, 100, &search, &[("NO_COLOR", "1")]);
    assert_eq!(code, 0, "{out}");
    let hits: Vec<&str> = out.lines().filter(|l| l.contains(" seq ")).collect();
    assert_eq!(hits.len(), 5, "{out}");
    for line in &hits {
        assert!(screen::columns(line) <= 100, "{line}");
        assert!(line.to_lowercase().contains("login"), "{line}");
    }
    assert!(out.contains("→ older:"), "{out}");
    // -C 1: a hit's lead, then its matching line with one line before and after it.
    let around = [
        "list",
        "--session",
        "claude:sidechain-lines",
        "-q",
        "login",
        "-C",
        "1",
    ];
    let (out, _) = on_terminal(&r, true, 100, &around, &[("NO_COLOR", "1")]);
    let lines: Vec<&str> = out.lines().collect();
    let lead = lines.iter().position(|l| l.contains(" seq ")).unwrap();
    let body: Vec<&&str> = lines[lead + 1..]
        .iter()
        .take_while(|l| l.starts_with("    "))
        .collect();
    assert!(!body.is_empty() && body.len() <= 3, "{out}");
    assert!(body.iter().any(|l| l.contains("login")), "{out}");
    // A block on a 40-row terminal takes a screen at most and says how to read the rest.
    let session = format!("claude:{id}");
    let blocks = [
        "list",
        "--session",
        &session,
        "--format",
        "blocks",
        "--budget",
        "60000",
    ];
    let (out, _) = on_terminal(&r, true, 100, &blocks, &[("NO_COLOR", "1")]);
    assert!(out.lines().count() <= 40, "{}", out.lines().count());
    let more = out.lines().find(|l| l.contains("more lines")).expect("cut");
    let read = more.split("→ read: ").nth(1).unwrap();
    assert!(
        read.contains(&format!("--session {session} --seq 1")),
        "{read}"
    );
    let (piped, _) = on_terminal(&r, false, 100, &blocks, &[]);
    assert!(piped.contains(&text), "piped, the text is whole");
}

#[test]
fn color_always_on_a_pipe_is_for_a_person_and_format_chooses_the_layout() {
    let r = Roots::new();
    let always = r.run(&["list", "--session", "claude:*", "--color", "always"]);
    assert!(always.stdout.contains("\x1b[35m"), "{}", always.stdout);
    assert!(always.stdout.contains(" ago"), "ages: {}", always.stdout);
    let blocks = r.run(&[
        "list",
        "--session",
        "claude:*",
        "--color",
        "always",
        "--format",
        "blocks",
    ]);
    assert!(
        blocks.stdout.contains("session \x1b[35mclaude:"),
        "{}",
        blocks.stdout
    );
    let lines = r.run(&["list", "--session", "claude:*", "--format", "lines"]);
    assert!(!lines.stdout.contains('\x1b'));
    let sessions = lines
        .stdout
        .lines()
        .filter(|l| l.contains("→ cd ") || l.contains("→ claude --resume"))
        .count();
    assert_eq!(
        sessions,
        r.run(&["list", "--session", "claude:*", "--json"]).json()["items"]
            .as_array()
            .unwrap()
            .len()
    );
    let bad = r.run(&["list", "--format", "table"]);
    assert_eq!(bad.code, 2);
    assert!(bad.stderr.contains("usage"), "{}", bad.stderr);
    let bad = r.run(&["list", "--color", "sometimes"]);
    assert_eq!(bad.code, 2);
}

/// Runs the binary under a pseudo-terminal (util-linux `script`), `None` where there is none.
fn under_pty(r: &Roots, args: &str, env: &[(&str, &str)]) -> Option<String> {
    let script = ["/usr/bin/script", "/bin/script"]
        .into_iter()
        .find(|p| std::path::Path::new(p).exists())?;
    let bin = assert_cmd::cargo::cargo_bin("notesoup-history");
    let mut cmd = Command::new(script);
    cmd.env_clear()
        .env("HOME", r.dir.path().join("home"))
        .env("XDG_CACHE_HOME", r.cache_home())
        .env("NOTESOUP_HISTORY_INDEX", "off")
        .env("PATH", "/usr/bin:/bin")
        .env("TERM", "xterm");
    for (h, root) in r.roots() {
        cmd.env(h.root_env, root);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    let line = format!("stty cols 100 2>/dev/null; {} {args}", bin.display());
    let out = cmd.args(["-qec", &line, "/dev/null"]).output().ok()?;
    Some(String::from_utf8_lossy(&out.stdout).replace("\r\n", "\n"))
}

#[test]
fn read_and_export_on_a_terminal_go_through_the_pager() {
    let r = Roots::new();
    let pager = [("PAGER", "sed s/^/PAGED:/")];
    let read = "read --session claude:70fc6d83 --seq 2";
    let bin = r.dir.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink("/bin/sh", bin.join("sh")).unwrap();
    let shell_only = bin.display().to_string();
    let Some(paged) = under_pty(&r, read, &pager) else {
        eprintln!("no script(1): skipped");
        return;
    };
    assert!(paged.lines().count() > 2, "{paged}");
    assert!(paged.lines().all(|l| l.starts_with("PAGED:")), "{paged}");
    let export = under_pty(&r, "export --session claude:70fc6d83", &pager).unwrap();
    assert!(export.starts_with("PAGED:# "), "{export}");
    for direct in [
        under_pty(&r, &format!("{read} --no-pager"), &pager).unwrap(),
        under_pty(&r, "export --session claude:70fc6d83 --no-pager", &pager).unwrap(),
        under_pty(&r, read, &[("PAGER", "")]).unwrap(),
        // No PAGER, and no less on a PATH that has a shell: straight to the terminal.
        under_pty(&r, read, &[("PATH", &shell_only)]).unwrap(),
        under_pty(&r, "list --session claude:70fc6d83", &pager).unwrap(),
    ] {
        assert!(
            direct.contains("70fc6d83") && !direct.contains("PAGED:"),
            "{direct}"
        );
    }
    let piped = r.run_with(
        &["read", "--session", "claude:70fc6d83", "--seq", "2"],
        &pager,
    );
    assert!(!piped.stdout.contains("PAGED:"), "{}", piped.stdout);
}

#[test]
fn under_a_pseudo_terminal_the_binary_colors_and_piped_it_does_not() {
    let r = Roots::new();
    let Some(tty) = under_pty(&r, "list --session 'claude:*'", &[]) else {
        eprintln!("no `script` here: the in-process terminal tests stand in");
        return;
    };
    assert!(tty.contains("\x1b[35m"), "colored on a terminal: {tty:?}");
    assert!(tty.contains(" ago"), "ages: {tty}");
    let piped = r.run(&["list", "--session", "claude:*"]);
    assert!(!piped.stdout.contains('\x1b'));
    assert!(
        piped.stdout.contains("\n\nsession claude:"),
        "§9 blocks: {}",
        piped.stdout
    );
    let lines = tty
        .lines()
        .filter(|l| l.contains("→ cd ") || l.contains("→ claude --resume"))
        .count();
    let blocks = piped.stdout.matches("\n→ resume: ").count();
    assert_eq!(lines, blocks, "a line per session: {tty}");
    // A session with a title is described by it, one without by its first prompt.
    let pi = under_pty(&r, "list --session 'pi:*'", &[("NO_COLOR", "1")]).unwrap_or_default();
    let row = |id: &str| pi.lines().find(|l| l.contains(id)).unwrap_or_default();
    assert!(row("metadata").contains("Refactor auth"), "{pi}");
    assert!(!row("metadata").contains("screenshot"), "{pi}");
    let below = |id: &str| {
        let at = pi.lines().position(|l| l.contains(id)).unwrap_or_default();
        pi.lines().nth(at + 1).unwrap_or_default().to_string()
    };
    assert!(below("branched").contains("→ pi --session"), "{pi}");
    // With --show-path each row names its file, labelled.
    let shown = under_pty(
        &r,
        "list --session 'claude:*' --show-path",
        &[("NO_COLOR", "1")],
    )
    .unwrap_or_default();
    let rows = shown.lines().filter(|l| l.contains(" events ")).count();
    let files = shown
        .lines()
        .filter(|l| l.starts_with("    file: "))
        .count();
    assert!(rows == lines && files == lines, "{shown}");
    let no_color =
        under_pty(&r, "list --session 'claude:*'", &[("NO_COLOR", "1")]).unwrap_or_default();
    assert!(
        !no_color.contains('\x1b') && no_color.contains(" ago"),
        "{no_color:?}"
    );
    let json = under_pty(&r, "list --session 'claude:*' --json", &[]).unwrap_or_default();
    assert!(
        json.trim_start().starts_with('{') && !json.contains('\x1b'),
        "{json:?}"
    );
}

#[test]
fn recipes_are_command_lines_that_run() {
    let r = Roots::new();
    let page = r.run(&["list", "--session", "claude:70fc", "--limit", "2"]);
    let older = page
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("→ older: "))
        .unwrap_or_else(|| panic!("no older recipe: {}", page.stdout));
    assert!(
        older.starts_with("notesoup-history list --session claude:70fc6d83-"),
        "{older}"
    );
    let json = r
        .run(&["list", "--session", "claude:70fc", "--limit", "2", "--json"])
        .json();
    let before = json["older"]["before_seq"].as_u64().unwrap().to_string();
    assert_eq!(json["older"]["limit"], 2, "{}", json["older"]);
    assert!(
        older.ends_with(&format!("--before-seq {before} --limit 2")),
        "{older}"
    );
    let bin = assert_cmd::cargo::cargo_bin("notesoup-history");
    let mut sh = r.cmd();
    let pasted = sh
        .env("PATH", bin.parent().unwrap())
        .args(["-c", older])
        .env_remove("SHELL");
    let pasted = std::process::Command::new("/bin/sh")
        .envs(
            pasted
                .get_envs()
                .filter_map(|(k, v)| Some((k.to_owned(), v?.to_owned()))),
        )
        .args(["-c", older])
        .output()
        .unwrap();
    let direct = r.run(&[
        "list",
        "--session",
        json["session"].as_str().unwrap(),
        "--before-seq",
        &before,
        "--limit",
        "2",
    ]);
    assert_eq!(
        String::from_utf8_lossy(&pasted.stdout)
            .replace(&r.dir.path().display().to_string(), "[ROOT]"),
        direct.stdout
    );
    let search = r.run(&["list", "--session", "*", "--query", "the", "--limit", "1"]);
    let older = search
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("→ older: "))
        .unwrap();
    assert!(
        older.contains(" --session '*' --query the --before ") && older.ends_with(" --limit 1"),
        "{older}"
    );
    // A JSON recipe's place is taken back as it is given, the same as its command-line form.
    let search = |extra: &[&str]| {
        let base = ["list", "--session", "*", "--query", "the", "--limit", "1"];
        r.run(&[&base[..], extra].concat())
    };
    let json = search(&["--json"]).json();
    let place = &json["older"]["before"];
    let cursor = format!(
        "{},{},{},{}",
        place["time"].as_str().unwrap(),
        place["session"].as_str().unwrap(),
        place["seq"],
        place["part"]
    );
    let next = |before: &str| search(&["--before", before]).stdout;
    assert!(older.contains(&cursor), "{older} / {cursor}");
    assert_eq!(next(&place.to_string()), next(&cursor));
    assert!(next(&cursor).contains("→ older: "), "{}", next(&cursor));
}

/// Paging on from a page keeps what shaped it: a search in one session stays that search, with
/// its roles, window, limit and budget, in the text and JSON recipes alike.
#[test]
fn the_next_page_of_a_search_in_one_session_is_the_same_search() {
    let r = Roots::new();
    let args = [
        "list",
        "--session",
        "claude:70fc",
        "--query",
        "the",
        "--role",
        "assistant",
        "--since",
        "2026-01-01",
        "--limit",
        "2",
        "--budget",
        "20000",
    ];
    let page = r.run(&args);
    let older = page
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("→ older: "))
        .unwrap_or_else(|| panic!("no older recipe: {}", page.stdout));
    for flag in [
        "--budget 20000",
        "--query the",
        "--role assistant",
        "--since 2026-01-01T00:00:00.000Z",
        "--limit 2",
    ] {
        assert!(older.contains(flag), "{flag}: {older}");
    }
    let json = r.run(&[&args[..], &["--json"]].concat()).json();
    let recipe = &json["older"];
    assert_eq!(recipe["query"], serde_json::json!(["the"]), "{recipe}");
    assert_eq!(
        recipe["roles"],
        serde_json::json!(["assistant"]),
        "{recipe}"
    );
    assert_eq!(recipe["limit"], 2, "{recipe}");
    // Followed, it gives the older hits of the same search: two, each an assistant's holding it.
    let before = recipe["before_seq"].as_u64().unwrap().to_string();
    let next = r
        .run(&[&args[..], &["--before-seq", before.as_str(), "--json"]].concat())
        .json();
    let items = next["items"].as_array().unwrap();
    assert_eq!(items.len(), 2, "{next}");
    for item in items {
        assert_eq!(item["role"], "assistant", "{item}");
        assert!(
            item["text"]
                .as_str()
                .unwrap()
                .to_lowercase()
                .contains("the"),
            "{item}"
        );
    }
}

#[test]
fn every_session_ends_with_its_resume_command_and_can_name_its_file() {
    let r = Roots::new();
    let overview = r.run(&["list", "--session", "claude:*"]);
    let blocks = overview
        .stdout
        .split("\n\n")
        .filter(|b| b.starts_with("session "))
        .count();
    assert_eq!(
        overview.stdout.matches("\n→ resume: ").count(),
        blocks,
        "{}",
        overview.stdout
    );
    let one = r.run(&["list", "--session", "claude:abandoned-branch"]);
    assert!(
        one.stdout
            .ends_with("→ resume: cd /w/app && claude --resume abandoned-branch\n"),
        "{}",
        one.stdout
    );
    let codex = r.run(&["list", "--session", "codex:019c8a4c"]);
    assert!(
        codex.stdout.contains("→ resume: codex resume 019c8a4c-"),
        "{}",
        codex.stdout
    );
    let pi = r.run(&["list", "--session", "pi:*", "--limit", "1"]);
    assert!(
        pi.stdout.contains("→ resume: pi --session [ROOT]/pi/"),
        "{}",
        pi.stdout
    );
    let read = r.run(&[
        "read",
        "--session",
        "claude:abandoned-branch",
        "--seq",
        "2",
        "--show-path",
    ]);
    assert!(
        read.stdout.contains(
            "→ resume: cd /w/app && claude --resume abandoned-branch\n→ file: [ROOT]/claude/"
        ),
        "{}",
        read.stdout
    );
    assert!(
        read.stdout.trim_end().ends_with("abandoned-branch.jsonl:2"),
        "the file and its line: {}",
        read.stdout
    );
    let shown = r.run(&[
        "list",
        "--session",
        "claude:*",
        "--query",
        "login",
        "--show-path",
    ]);
    let hits = shown.stdout.matches("\nsession claude:").count()
        + usize::from(shown.stdout.starts_with("session "));
    assert_eq!(
        shown.stdout.matches("→ file: [ROOT]/").count(),
        hits,
        "{}",
        shown.stdout
    );
    let json = r.run(&["list", "--session", "claude:abandoned-branch", "--json"]);
    assert!(json.json()["older"].is_null() || json.json()["older"].is_object());
}

/// Every session's hits counted from one page of every hit.
fn hits_by_session(r: &Roots, query: &str) -> BTreeMap<String, usize> {
    let all = r.run(&[
        "list",
        "--session",
        "*",
        "--query",
        query,
        "--limit",
        "100000",
        "--budget",
        "100000000",
        "--json",
    ]);
    let mut counts = BTreeMap::new();
    for item in all.json()["items"].as_array().unwrap() {
        *counts
            .entry(item["session"].as_str().unwrap().to_string())
            .or_default() += 1;
    }
    counts
}

#[test]
fn sessions_are_every_session_with_a_hit_counted_up_to_a_hundred() {
    let r = Roots::with_samples();
    let mut capped = 0;
    for query in ["the", "login", "git"] {
        // Counted up to a hundred; past that, a count says there are more.
        let expected: BTreeMap<String, (usize, bool)> = (hits_by_session(&r, query).into_iter())
            .map(|(session, n)| (session, (n.min(100), n > 100)))
            .collect();
        capped += expected.values().filter(|(_, more)| *more).count();
        let got = r.run(&[
            "list",
            "--sessions",
            "--query",
            query,
            "--limit",
            "1000",
            "--budget",
            "100000000",
            "--json",
        ]);
        assert_eq!(got.code, 0, "{}", got.stderr);
        let doc = got.json();
        let sessions = doc["sessions"].as_array().unwrap();
        let counts: BTreeMap<String, (usize, bool)> = sessions
            .iter()
            .map(|s| {
                let hits = s["hits"].as_u64().unwrap() as usize;
                let more = s["more_hits"].as_bool().unwrap();
                (s["session"].as_str().unwrap().to_string(), (hits, more))
            })
            .collect();
        assert_eq!(counts, expected, "{query}");
        let last: Vec<&str> = sessions
            .iter()
            .map(|s| s["last_hit"].as_str().unwrap_or(""))
            .collect();
        let mut sorted = last.clone();
        sorted.sort();
        assert_eq!(last, sorted, "ordered by the latest hit");
        for s in sessions {
            let text = s["best"]["text"].as_str().unwrap().to_lowercase();
            assert!(
                text.contains(query),
                "{query}: the snippet shows the match: {text}"
            );
            assert!(s["first_hit"].as_str() <= s["last_hit"].as_str());
        }
    }
    assert!(capped > 0, "no session has more than a hundred hits");
    let text = r.run(&["list", "--sessions", "--query", "the", "--limit", "1000"]);
    assert!(text.stdout.contains(" | 100+ hits | "), "{}", text.stdout);
    let two = r
        .run(&[
            "list",
            "--sessions",
            "--query",
            "the",
            "--limit",
            "2",
            "--json",
        ])
        .json();
    let all = r
        .run(&[
            "list",
            "--sessions",
            "--query",
            "the",
            "--limit",
            "1000",
            "--budget",
            "100000000",
            "--json",
        ])
        .json();
    let all = all["sessions"].as_array().unwrap();
    assert_eq!(
        two["sessions"].as_array().unwrap()[..],
        all[all.len() - 2..],
        "--limit counts sessions from the newest"
    );
    assert_eq!(two["has_older"], true);
    let oldest = r
        .run(&[
            "list",
            "--sessions",
            "--query",
            "the",
            "--limit",
            "1",
            "--from",
            "oldest",
            "--json",
        ])
        .json();
    assert_eq!(oldest["sessions"][0], all[0]);
    assert_eq!(oldest["has_newer"], true);
}

#[test]
fn sessions_fit_the_budget_and_say_so() {
    let r = Roots::with_samples();
    let all = r.run(&["list", "--sessions", "--query", "the", "--limit", "1000"]);
    assert!(all.stdout.len() > 2048, "enough to cut");
    let cut = r.run(&[
        "list",
        "--sessions",
        "--query",
        "the",
        "--limit",
        "1000",
        "--budget",
        "2048",
    ]);
    assert_eq!(cut.code, 0);
    assert!(cut.stdout.len() <= 2048, "{}", cut.stdout.len());
    assert!(
        cut.stdout
            .contains("→ the output budget ended this page: raise --budget"),
        "{}",
        cut.stdout
    );
    let json = r.run(&[
        "list",
        "--sessions",
        "--query",
        "the",
        "--limit",
        "1000",
        "--budget",
        "2048",
        "--json",
    ]);
    assert!(json.stdout.len() <= 2048);
    assert_eq!(json.json()["has_older"], true);
}

#[test]
fn session_level_search_refuses_what_it_cannot_do() {
    let r = Roots::new();
    let none = r.run(&["list", "--sessions", "--query", "no such text anywhere"]);
    assert_eq!(
        (none.code, none.stdout.as_str(), none.stderr.as_str()),
        (
            1,
            "",
            "no matching sessions\nhint: --query 'no such text anywhere' is one literal phrase; \
             repeat --query for any of several words, or rank sessions by the words: \
             notesoup-history find no such text anywhere\n"
        ),
        "what is said of the results goes to standard error"
    );
    let no_query = r.run(&["list", "--sessions"]);
    assert_eq!(no_query.code, 2);
    assert!(
        no_query.stderr.contains("--sessions needs --query"),
        "{}",
        no_query.stderr
    );
    let seq = r.run(&[
        "list",
        "--sessions",
        "--query",
        "x",
        "--session",
        "claude:*",
        "--before-seq",
        "3",
        "--json",
    ]);
    assert_eq!(seq.code, 2);
    assert_eq!(seq.json()["error"]["code"], "invalid_bounds");
    let one = r
        .run(&[
            "list",
            "--sessions",
            "--query",
            "login",
            "--session",
            "claude:abandoned",
            "--json",
        ])
        .json();
    assert_eq!(one["sessions"].as_array().unwrap().len(), 1);
}

#[test]
fn sessions_from_the_search_index_are_the_sessions_from_a_scan() {
    let r = Roots::with_samples();
    let args = [
        "list",
        "--sessions",
        "--query",
        "the",
        "--limit",
        "1000",
        "--budget",
        "100000000",
        "--json",
    ];
    let scanned = r.run(&args).json();
    assert_eq!(r.run_indexed(&["index"]).code, 0);
    let indexed = r.run_indexed(&args).json();
    assert!(
        indexed["coverage"]["from_index"].as_u64() > Some(0),
        "{}",
        indexed["coverage"]
    );
    assert_eq!(indexed["sessions"], scanned["sessions"]);
}

#[test]
fn lines_write_the_home_directory_as_a_tilde() {
    let r = Roots::new();
    let args = [
        "list",
        "--session",
        "claude:abandoned-branch",
        "--format",
        "lines",
    ];
    let overview = [
        "list",
        "--session",
        "claude:abandoned*",
        "--format",
        "lines",
    ];
    let home = r.run_with(&overview, &[("HOME", "/w")]);
    assert!(home.stdout.contains("  ~/app (main)  "), "{}", home.stdout);
    let elsewhere = r.run_with(&overview, &[("HOME", "/wo")]);
    assert!(
        elsewhere.stdout.contains("  /w/app (main)  "),
        "{}",
        elsewhere.stdout
    );
    let blocks = r.run_with(&args[..3], &[("HOME", "/w")]);
    assert!(
        blocks.stdout.contains("cd /w/app && claude"),
        "blocks keep the path: {}",
        blocks.stdout
    );
}
