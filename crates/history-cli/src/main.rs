//! `notesoup-history`: list, search and read the local session transcripts of AI coding agents.
//!
//! The binary prints what [`history_cli::run`] returns. Exit codes: 0 a result with items, 1 a
//! valid request with none, 2 an error, 130 an index update stopped by Ctrl-C.
#![forbid(unsafe_code)]

use std::io::{IsTerminal, Write};
use std::process::ExitCode;

fn main() -> ExitCode {
    // A bug must still end as one line and exit code 2, never a panic message or a backtrace.
    std::panic::set_hook(Box::new(|info| {
        let what = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_default();
        eprintln!("error: internal error, please report it: {what}");
    }));
    std::panic::catch_unwind(|| {
        // A completion script asking for candidates is answered here, and the run ends.
        history_cli::completion::answer_if_asked(&history_cli::HARNESSES);
        let env = |k: &str| std::env::var_os(k);
        let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
        let terminal = terminal(&env);
        let mut pager = history_cli::pager(&history_cli::HARNESSES, &argv, &env, &terminal)
            .and_then(|command| start_pager(&command));
        let mut stdout = std::io::stdout().lock();
        let paged = pager.is_some();
        let output: &mut dyn Write = match pager.as_mut().and_then(|p| p.stdin.as_mut()) {
            Some(stdin) => stdin,
            None => &mut stdout,
        };
        let io = history_cli::Io {
            input: &mut std::io::stdin().lock(),
            output: &mut *output,
            start_index: &start_background_index,
        };
        let out = history_cli::run_on(&history_cli::HARNESSES, argv, &env, io, &terminal);
        if !paged {
            let _ = std::io::stderr().write_all(out.stderr.as_bytes());
        }
        let written = output
            .write_all(out.stdout.as_bytes())
            .and_then(|_| output.flush());
        if let Some(argv) = &out.wants_index {
            start_background_index(argv);
        }
        // Through a pager, what the command says of its answer comes after it, where it stays
        // in view.
        if let Some(mut pager) = pager {
            drop(pager.stdin.take());
            let _ = pager.wait();
            let _ = std::io::stderr().write_all(out.stderr.as_bytes());
        }
        if written.is_err() {
            // A closed pipe (`| head`, or a pager quit early) is not an error worth a message.
            return ExitCode::from(if out.code == 2 { 2 } else { 0 });
        }
        ExitCode::from(out.code)
    })
    .unwrap_or(ExitCode::from(2))
}

/// Whether standard output is a terminal and how wide: decided here, once, so that the library
/// renders for whatever it is told (and tests can tell it a terminal).
fn terminal(env: &dyn Fn(&str) -> Option<std::ffi::OsString>) -> history_cli::Terminal {
    let stdout = std::io::stdout();
    let is_terminal = stdout.is_terminal();
    let size = is_terminal
        .then(|| rustix::termios::tcgetwinsize(&stdout).ok())
        .flatten();
    let measure = |from: Option<u16>, name: &str| {
        from.map(usize::from)
            .filter(|n| *n > 0)
            .or_else(|| env(name)?.to_str()?.parse().ok())
    };
    history_cli::Terminal {
        is_terminal,
        width: measure(size.map(|s| s.ws_col), "COLUMNS"),
        height: measure(size.map(|s| s.ws_row), "LINES"),
        zone: match is_terminal {
            true => jiff::tz::TimeZone::system(),
            false => jiff::tz::TimeZone::UTC,
        },
        ..history_cli::Terminal::piped()
    }
}

/// Starts `command` (a shell command line, as `$PAGER` is) reading what the run prints.
fn start_pager(command: &str) -> Option<std::process::Child> {
    use std::process::{Command, Stdio};
    Command::new("sh")
        .args(["-c", command])
        .stdin(Stdio::piped())
        .spawn()
        .ok()
}

/// Starts one detached `notesoup-history index --background` (as git starts its auto gc): the
/// search has answered already and never waits for it; the update's lock keeps it to one.
fn start_background_index(argv: &[std::ffi::OsString]) {
    use std::os::unix::process::CommandExt;
    use std::process::{Command, Stdio};
    let Ok(exe) = std::env::current_exe() else {
        return;
    };
    let _ = Command::new(exe)
        .args(argv)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn();
}
