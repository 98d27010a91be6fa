//! `notesoup-history`: list, search and read the local session transcripts of AI coding agents.
//!
//! The binary is thin: it parses arguments, calls `history-core` with the harness decoders, and
//! prints text or JSON. Exit codes: 0 a result with items, 1 a valid request with none, 2 an error.

mod args;
mod print;
mod run;
mod view;

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;
use history_core::HistoryError;

use args::{Cli, Command};
use print::{Json, Printer, Text};

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
    std::panic::catch_unwind(run).unwrap_or(ExitCode::from(2))
}

fn run() -> ExitCode {
    let raw: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let wants_json = raw.iter().any(|a| a == "--json");
    let printer: &dyn Printer = if wants_json { &Json } else { &Text };
    let cli = match Cli::try_parse_from(&raw) {
        Ok(cli) => cli,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(
                e.kind(),
                ErrorKind::DisplayHelp
                    | ErrorKind::DisplayVersion
                    | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
            ) {
                let _ = e.print();
                return if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
                    ExitCode::from(2)
                } else {
                    ExitCode::SUCCESS
                };
            }
            let message = e
                .render()
                .to_string()
                .lines()
                .next()
                .unwrap_or("bad arguments")
                .trim_start_matches("error: ")
                .to_string();
            return fail(printer, wants_json, &HistoryError::usage(message));
        }
    };
    let env = |k: &str| std::env::var(k).ok();
    let result = match &cli.command {
        Command::List(args) => run::Context::new(&cli.common, &env)
            .and_then(|ctx| run::list(&ctx, args, &cli.common, printer)),
        Command::Read(args) => run::Context::new(&cli.common, &env)
            .and_then(|ctx| run::read(&ctx, args, &cli.common, printer)),
    };
    match result {
        Ok((out, has_items)) => {
            let mut stdout = std::io::stdout().lock();
            if stdout
                .write_all(out.as_bytes())
                .and_then(|_| stdout.flush())
                .is_err()
            {
                // A closed pipe (`| head`) is not an error worth a message.
                return ExitCode::SUCCESS;
            }
            if has_items {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            }
        }
        Err(e) => fail(printer, wants_json, &e),
    }
}

fn fail(printer: &dyn Printer, json: bool, error: &HistoryError) -> ExitCode {
    let text = printer.error(error);
    if json {
        let _ = std::io::stdout().write_all(text.as_bytes());
    } else {
        let _ = std::io::stderr().write_all(text.as_bytes());
    }
    ExitCode::from(2)
}
