//! `completions` and `man`: documents of the command line, for every harness of the registry,
//! printed without reading a transcript. Each shell that is installed loads its completion
//! script and is asked for completions as it asks when a person presses Tab; a shell that is
//! not installed is skipped with a note. Manual pages are checked by `man` (or groff) when one
//! is installed.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::Roots;

/// The directory of the binary: completion scripts call `notesoup-history` by name, from $PATH.
fn bin_dir() -> PathBuf {
    Path::new(env!("CARGO_BIN_EXE_notesoup-history"))
        .parent()
        .expect("the binary is in a directory")
        .to_path_buf()
}

/// `program` run with the environment of `r`'s binary (its roots, a private home and cache, no
/// index) and the binary on $PATH; `None`, with a note, when `program` is not installed.
fn shell(r: &Roots, program: &str) -> Option<Command> {
    if Command::new(program)
        .arg("-c")
        .arg("exit 0")
        .output()
        .is_err()
    {
        eprintln!("note: {program} is not installed: its completion test is skipped");
        return None;
    }
    let mut cmd = Command::new(program);
    let path = format!("{}:/usr/local/bin:/usr/bin:/bin", bin_dir().display());
    cmd.env_clear()
        .env("PATH", path)
        .env("HOME", r.dir.path().join("home"))
        .env("XDG_CACHE_HOME", r.dir.path().join("cache"))
        .env("NOTESOUP_HISTORY_INDEX", "off");
    for (harness, root) in r.roots() {
        cmd.env(harness.root_env, root);
    }
    Some(cmd)
}

/// Writes `shell`'s completion script into `r`'s directory.
fn script(r: &Roots, shell: &str) -> PathBuf {
    let run = r.run(&["completions", shell]);
    assert_eq!(run.code, 0, "{shell}: {run:?}");
    let file = r.dir.path().join(format!("completion.{shell}"));
    std::fs::write(&file, run.stdout).unwrap();
    file
}

/// The lines a shell printed, checked for success.
fn lines(what: &str, out: std::process::Output) -> Vec<String> {
    assert!(
        out.status.success(),
        "{what}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect()
}

/// How bash splits `line` for completion: at spaces, and at `:` and `=` (COMP_WORDBREAKS),
/// each of those a word of its own; the last word is the one the cursor is in. Also returns
/// what bash passes as the word to complete: the text after the last break.
fn bash_words(line: &str) -> (Vec<String>, String) {
    let mut words = Vec::new();
    for word in line.split(' ') {
        let mut part = String::new();
        let mut parts = Vec::new();
        for c in word.chars() {
            if c == ':' || c == '=' {
                if !part.is_empty() {
                    parts.push(std::mem::take(&mut part));
                }
                parts.push(c.to_string());
            } else {
                part.push(c);
            }
        }
        if !part.is_empty() || parts.is_empty() {
            parts.push(part);
        }
        words.extend(parts);
    }
    let current = line
        .rsplit([' ', ':', '='])
        .next()
        .unwrap_or("")
        .to_string();
    (words, current)
}

/// What bash offers for `line` (the cursor at its end): the script sourced, the words as bash
/// splits them, and the function the script registers for `notesoup-history` called as bash
/// calls it.
fn bash(r: &Roots, script: &Path, line: &str) -> Option<Vec<String>> {
    let mut cmd = shell(r, "bash")?;
    let (words, current) = bash_words(line);
    let cword = words.len() - 1;
    let previous = words[cword.saturating_sub(1)].clone();
    cmd.arg("-c")
        .arg(
            r#"source "$1" || exit 3
            COMP_LINE="$2"; COMP_POINT=${#COMP_LINE}; COMP_TYPE=9; COMP_KEY=9
            current="$3"; previous="$4"; COMP_CWORD="$5"; shift 5; COMP_WORDS=("$@")
            spec=$(complete -p notesoup-history) || exit 4
            function=${spec##*-F }; function=${function%% *}
            "$function" notesoup-history "$current" "$previous"
            printf '%s\n' "${COMPREPLY[@]}""#,
        )
        .arg("bash")
        .arg(script)
        .args([line, &current, &previous, &cword.to_string()])
        .args(&words);
    Some(lines(&format!("bash: {line}"), cmd.output().unwrap()))
}

/// What zsh offers for `line`: the script sourced, with `compdef` and `_describe` (what the
/// completion system gives a completer) standing in to catch the function it registers and
/// what it offers, and the function called with `words` and `CURRENT` as zsh sets them.
fn zsh(r: &Roots, script: &Path, line: &str) -> Option<Vec<String>> {
    let mut cmd = shell(r, "zsh")?;
    let words: Vec<&str> = line.split(' ').collect();
    cmd.arg("-f")
        .arg("-c")
        .arg(
            r#"compdef() { registered=$1; [[ $2 == notesoup-history ]] || exit 4 }
            _describe() { print -rl -- "${(@P)3}" }
            source "$1" || exit 3
            [[ -n $registered ]] || exit 5
            shift
            words=("$@"); CURRENT=$#words
            "$registered""#,
        )
        .arg("zsh")
        .arg(script)
        .args(&words);
    let offered = lines(&format!("zsh: {line}"), cmd.output().unwrap());
    // `value:help`, a `:` in the value escaped.
    Some(
        offered
            .iter()
            .map(|l| {
                let mut value = String::new();
                let mut chars = l.chars();
                while let Some(c) = chars.next() {
                    match c {
                        '\\' => value.extend(chars.next()),
                        ':' => break,
                        c => value.push(c),
                    }
                }
                value
            })
            .collect(),
    )
}

/// What fish offers for `line`: the script sourced, then `complete -C`.
fn fish(r: &Roots, script: &Path, line: &str) -> Option<Vec<String>> {
    let mut cmd = shell(r, "fish")?;
    cmd.arg("--no-config")
        .arg("-c")
        .arg("source $argv[1]; or exit 3; complete -C $argv[2]")
        .arg(script)
        .arg(line);
    let offered = lines(&format!("fish: {line}"), cmd.output().unwrap());
    // `value<TAB>help`.
    Some(
        offered
            .iter()
            .map(|l| l.split('\t').next().unwrap_or_default().to_string())
            .collect(),
    )
}

/// The words `offered`, sorted, for comparing as a set.
fn sorted(offered: &[String]) -> Vec<&str> {
    let mut words: Vec<&str> = offered.iter().map(String::as_str).collect();
    words.sort_unstable();
    words
}

/// What every shell must offer: subcommands, each subcommand's flags, the values of
/// `--role`, `--from` and `--format`, and session ids; never file names where no path is
/// wanted, nor a global flag the subcommand has no use for.
fn check_shell(name: &str, ask: &dyn Fn(&str) -> Option<Vec<String>>) {
    let Some(top) = ask("notesoup-history ") else {
        return;
    };
    for sub in [
        "list",
        "find",
        "read",
        "export",
        "index",
        "doctor",
        "reindex",
        "mcp",
        "completions",
        "man",
    ] {
        assert!(top.iter().any(|w| w == sub), "{name}: no {sub} in {top:?}");
    }
    let flags = ask("notesoup-history list --").unwrap();
    for flag in [
        "--session",
        "--query",
        "--role",
        "--since",
        "--before-seq",
        "--format",
        "--json",
        "--claude-root",
        "--pi-root",
    ] {
        assert!(
            flags.iter().any(|w| w == flag),
            "{name}: no {flag} in {flags:?}"
        );
    }
    assert!(
        flags.iter().all(|w| w.starts_with("--")),
        "{name}: {flags:?}"
    );
    let roles = ask("notesoup-history list --role ").unwrap();
    assert_eq!(
        sorted(&roles),
        ["assistant", "context", "tool", "user"],
        "{name}"
    );
    let find_roles = ask("notesoup-history find --role a").unwrap();
    assert_eq!(find_roles, ["assistant"], "{name}");
    let from = ask("notesoup-history list --from ").unwrap();
    assert_eq!(sorted(&from), ["newest", "oldest"], "{name}");
    let format = ask("notesoup-history list --format ").unwrap();
    assert_eq!(sorted(&format), ["blocks", "lines"], "{name}");
    let export = ask("notesoup-history export --format ").unwrap();
    assert_eq!(sorted(&export), ["json", "markdown"], "{name}");
    // Text to search for: nothing to offer (not the files of the directory).
    let query = ask("notesoup-history list --query ").unwrap();
    assert!(query.is_empty(), "{name}: {query:?}");
    // Flags a subcommand does not use are not offered there.
    let mcp = ask("notesoup-history mcp --").unwrap();
    assert!(mcp.iter().any(|w| w == "--budget"), "{name}: {mcp:?}");
    for unused in ["--json", "--color", "--show-path"] {
        assert!(
            !mcp.iter().any(|w| w == unused),
            "{name}: {unused} in {mcp:?}"
        );
    }
    // Session ids from the roots the environment names: the 50 newest (Claude's fixtures are
    // older than those).
    let sessions = ask("notesoup-history list --session ").unwrap();
    assert_eq!(sessions.len(), 50, "{name}: {sessions:?}");
    assert!(sessions.iter().any(|s| s.starts_with("pi:")), "{name}");
    assert!(sessions.iter().all(|s| !s.starts_with("claude:")), "{name}");
    let global = ask("notesoup-history --current cla").unwrap();
    assert!(
        !global.is_empty() && global.iter().all(|s| s.starts_with("claude:")),
        "{name}: {global:?}"
    );
}

/// The ids the completion of `--session claude:aban` can end in.
const ABANDONED: &str = "claude:abandoned-branch";

#[test]
fn bash_completes_subcommands_flags_values_and_sessions() {
    let r = Roots::new();
    let before = r.files();
    let script = script(&r, "bash");
    check_shell("bash", &|line| bash(&r, &script, line));
    let Some(qualified) = bash(&r, &script, "notesoup-history read --session claude:aban") else {
        return;
    };
    // Bash split the word at `:` and replaces what follows it.
    assert!(
        qualified.iter().any(|s| format!("claude:{s}") == ABANDONED),
        "{qualified:?}"
    );
    let after_colon = bash(&r, &script, "notesoup-history read --session claude:").unwrap();
    assert!(
        after_colon.iter().any(|s| s == "abandoned-branch"),
        "{after_colon:?}"
    );
    assert!(
        after_colon.iter().all(|s| !s.contains(':')),
        "{after_colon:?}"
    );
    let equals = bash(&r, &script, "notesoup-history list --role=as").unwrap();
    assert_eq!(equals, ["assistant"]);
    // An unqualified start completes unqualified ids.
    let bare = bash(&r, &script, "notesoup-history export --session abandoned-b").unwrap();
    assert_eq!(bare, ["abandoned-branch"]);
    // A directory flag completes directories.
    let dirs = bash(
        &r,
        &script,
        &format!("notesoup-history list --cwd {}/", r.dir.path().display()),
    )
    .unwrap();
    assert!(dirs.iter().any(|d| d.ends_with("/claude/")), "{dirs:?}");
    // Completing wrote nothing: no cache, no changed transcript.
    assert!(!r.dir.path().join("cache").exists());
    assert_eq!(r.files(), before);
}

#[test]
fn zsh_completes_subcommands_flags_values_and_sessions() {
    let r = Roots::new();
    let script = script(&r, "zsh");
    check_shell("zsh", &|line| zsh(&r, &script, line));
    if let Some(qualified) = zsh(&r, &script, "notesoup-history read --session claude:aban") {
        assert!(qualified.iter().any(|s| s == ABANDONED), "{qualified:?}");
    }
}

#[test]
fn fish_completes_subcommands_flags_values_and_sessions() {
    let r = Roots::new();
    let script = script(&r, "fish");
    check_shell("fish", &|line| fish(&r, &script, line));
    if let Some(qualified) = fish(&r, &script, "notesoup-history read --session claude:aban") {
        assert!(qualified.iter().any(|s| s == ABANDONED), "{qualified:?}");
    }
}

#[test]
fn every_shell_has_a_script_and_an_unknown_one_is_refused() {
    let r = Roots::new();
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let run = r.run(&["completions", shell]);
        assert_eq!(run.code, 0, "{shell}: {run:?}");
        assert!(run.stdout.contains("notesoup-history"), "{shell}");
        assert!(
            run.stdout.contains("COMPLETE"),
            "{shell}: calls the binary back"
        );
    }
    // The bash script is one bash reads.
    let bash = r.run(&["completions", "bash"]).stdout;
    let checked = Command::new("bash")
        .args(["-n", "-c", &bash])
        .status()
        .expect("bash runs");
    assert!(checked.success());
    let bad = r.run(&["completions", "tcsh"]);
    assert_eq!(bad.code, 2, "{bad:?}");
}

/// The sections every page has.
const SECTIONS: [&str; 9] = [
    "NAME",
    "SYNOPSIS",
    "DESCRIPTION",
    "OPTIONS",
    "EXAMPLES",
    "\"EXIT STATUS\"",
    "ENVIRONMENT",
    "FILES",
    "\"SEE ALSO\"",
];

/// The pages `man --dir` writes.
const PAGES: [&str; 13] = [
    "notesoup-history",
    "notesoup-history-list",
    "notesoup-history-find",
    "notesoup-history-read",
    "notesoup-history-export",
    "notesoup-history-index",
    "notesoup-history-doctor",
    "notesoup-history-reindex",
    "notesoup-history-pick",
    "notesoup-history-init",
    "notesoup-history-mcp",
    "notesoup-history-completions",
    "notesoup-history-man",
];

/// The line after `.SH NAME`.
fn name_line(page: &str) -> &str {
    let mut lines = page.lines().skip_while(|l| *l != ".SH NAME");
    lines.nth(1).unwrap_or_default()
}

#[test]
fn man_prints_the_main_page() {
    let r = Roots::new();
    let run = r.run(&["man"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout.starts_with(".ie") || run.stdout.starts_with(".TH"),
        "{}",
        &run.stdout[..80]
    );
    let titles: Vec<&str> = run
        .stdout
        .lines()
        .filter(|l| l.starts_with(".TH "))
        .collect();
    assert_eq!(titles.len(), 1, "{titles:?}");
    assert!(
        titles[0].starts_with(".TH NOTESOUP-HISTORY 1 "),
        "{titles:?}"
    );
    assert_eq!(
        name_line(&run.stdout),
        "notesoup\\-history \\- List, search and read the local session transcripts of Claude \
         Code, Codex CLI and pi"
    );
    // It names the page of each subcommand.
    assert!(run.stdout.contains("\\fBnotesoup\\-history\\-list\\fR(1)"));
}

#[test]
fn man_dir_writes_a_page_per_subcommand_with_every_section() {
    let r = Roots::new();
    let dir = r.dir.path().join("share/man/man1");
    let run = r.run(&["man", "--dir", dir.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{run:?}");
    let mut written: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    written.sort();
    let mut expected: Vec<String> = PAGES.iter().map(|p| format!("{p}.1")).collect();
    expected.sort();
    assert_eq!(written, expected);
    assert_eq!(run.stdout.lines().count(), PAGES.len(), "{}", run.stdout);
    for name in PAGES {
        let page = std::fs::read_to_string(dir.join(format!("{name}.1"))).unwrap();
        for section in SECTIONS {
            assert!(
                page.lines().any(|l| l == format!(".SH {section}")),
                "{name}: no {section}"
            );
        }
        assert!(!page.contains(".SH EXTRA"), "{name}");
        assert_eq!(
            page.lines().filter(|l| l.starts_with(".TH ")).count(),
            1,
            "{name}"
        );
        // NAME: the page's name once, then what it does.
        let line = name_line(&page);
        let escaped = name.replace('-', "\\-");
        assert!(
            line.starts_with(&format!("{escaped} \\- ")),
            "{name}: {line}"
        );
        assert_eq!(line.matches(&escaped).count(), 1, "{name}: {line}");
        for var in [
            "NOTESOUP_CURRENT_SESSION",
            "NOTESOUP_HOST",
            "NOTESOUP_HISTORY_INDEX",
            "NOTESOUP_HISTORY_CLAUDE_ROOT",
            "NOTESOUP_HISTORY_CODEX_ROOT",
            "NOTESOUP_HISTORY_PI_ROOT",
            "CLAUDE_CONFIG_DIR",
            "XDG_CACHE_HOME",
        ] {
            assert!(page.contains(var), "{name}: no {var}");
        }
        check_renders(&dir.join(format!("{name}.1")));
    }
    let list = std::fs::read_to_string(dir.join("notesoup-history-list.1")).unwrap();
    assert_eq!(
        name_line(&list),
        "notesoup\\-history\\-list \\- Browse one session, search sessions, or show the \
         recent\\-sessions overview"
    );
    assert!(
        list.contains("\\-\\-after\\-seq"),
        "list's options are described"
    );
    assert!(list.contains(".SS Paging"), "options under their headings");
    assert!(
        list.contains("\\fB\\-\\-json\\fR"),
        "and the global flags it uses"
    );
    assert!(
        list.contains("\\fBnotesoup\\-history list \\-\\-session claude:4f2a\\fR"),
        "examples from list --help"
    );
    assert!(!list.contains("Exit codes:"), "EXIT STATUS says them");
    // A subcommand's page leaves out the global flags it has no use for.
    let completions = std::fs::read_to_string(dir.join("notesoup-history-completions.1")).unwrap();
    assert!(!completions.contains("\\-\\-budget"), "{completions}");
    // Written again over the pages already there.
    assert_eq!(r.run(&["man", "--dir", dir.to_str().unwrap()]).code, 0);
}

/// That `man` (or groff) renders `page` without a warning, in the C locale too (ASCII
/// output); skipped, with a note, when neither is installed.
fn check_renders(page: &Path) {
    let by_man = Command::new("man")
        .args(["--warnings", "-l"])
        .arg(page)
        .env("LC_ALL", "C")
        .env("MANWIDTH", "80")
        .env("MAN_KEEP_FORMATTING", "0")
        .env("PAGER", "cat")
        .output();
    let out = match by_man {
        Ok(out) => out,
        Err(_) => match Command::new("groff")
            .args(["-man", "-Tascii", "-ww", "-z"])
            .arg(page)
            .output()
        {
            Ok(out) => out,
            Err(_) => {
                eprintln!("note: neither man nor groff is installed: pages are not rendered");
                return;
            }
        },
    };
    assert!(out.status.success(), "{}: {out:?}", page.display());
    let warnings = String::from_utf8_lossy(&out.stderr);
    assert!(warnings.trim().is_empty(), "{}: {warnings}", page.display());
}

#[test]
fn man_dir_that_cannot_be_made_is_refused_in_one_line() {
    let r = Roots::new();
    let file = r.dir.path().join("a-file");
    std::fs::write(&file, "").unwrap();
    let dir = file.join("man1");
    let run = r.run(&["man", "--dir", dir.to_str().unwrap()]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stdout.is_empty(), "{run:?}");
    assert_eq!(run.stderr.lines().count(), 1, "{run:?}");
    assert!(
        run.stderr.starts_with("error: man --dir: cannot create "),
        "{run:?}"
    );
    assert!(run.stderr.contains("a-file/man1"), "{run:?}");
}
