//! `pick`: a full-screen picker over the same calls as `list` and `find`. Type to search,
//! see the sessions narrow, Enter prints the chosen session's resume command on standard
//! output (the screen is drawn on the terminal itself, so that `$(notesoup-history pick)`
//! works), Esc leaves with nothing.
//!
//! Two threads: the one that owns the screen ([`state::Picker`] fed keys and answers, drawn by
//! [`view::draw`]) and the one that searches ([`search::Searcher`]); each keystroke's search
//! supersedes the one before it, which stops at its next session. `--script` replays keys
//! without a terminal and says how long each took to show results.

pub mod search;
pub mod shell;
pub mod state;
pub mod view;

mod script;
mod tty;

use std::collections::VecDeque;
use std::io::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::time::Instant;

use crossterm::event::KeyEvent;
use history_core::{Env, Harness, HistoryError};
use ratatui::backend::Backend;
use ratatui::Terminal as Screen;

use crate::args::{Cli, PickArgs, PrintArg};
use crate::screen::Clock;
use crate::{index, Output, Terminal};

use search::Searcher;
use state::{Action, Answer, Ask, Mode, Picker, Row, Scope};
use view::Look;

/// What reaches the screen's thread.
pub(crate) enum Event {
    /// A key, and when it was pressed.
    Key(KeyEvent, Instant),
    /// The terminal changed its size.
    Resize,
    /// A search's answer.
    Answer(Answer),
    /// The pager was closed.
    Paged,
    /// The replayed keys ran out.
    End,
    /// The searching thread ended.
    Gone,
}

/// What the searching thread is asked to do.
pub(crate) enum Job {
    /// Answer a search.
    Search(Ask),
    /// Show a session in the pager, on the terminal; answer [`Event::Paged`].
    Page(String),
}

/// How the picker ended.
pub(crate) enum Outcome {
    /// A session was chosen.
    Chose(Box<Row>),
    /// The person left.
    Left,
}

/// Runs the picker for `notesoup-history pick` (or no subcommand on a terminal).
pub(crate) fn run(
    registry: &[&Harness],
    matches: &clap::ArgMatches,
    cli: &Cli,
    args: &PickArgs,
    env: Env<'_>,
    terminal: &Terminal,
) -> Output {
    let index = index::Settings::new(cli.common.no_index || cli.common.demo, env);
    let open = || crate::open(registry, matches, cli, env);
    let searcher = Searcher {
        open: &open,
        index: &index,
    };
    let mode = match args.literal {
        true => Mode::Literal,
        false => Mode::Ranked,
    };
    let picker = Picker::new(&args.query, mode, scopes(registry, args));
    let no_color = env("NO_COLOR").is_some_and(|v| !v.is_empty());
    let dumb = env("TERM").is_some_and(|t| t == "dumb");
    let look = Look {
        color: cli.common.color != crate::args::ColorArg::Never && !no_color && !dumb,
        clock: Clock {
            now: terminal.now,
            zone: terminal.zone.clone(),
        },
        home: env("HOME")
            .and_then(|h| h.into_string().ok())
            .filter(|h| h.len() > 1),
    };
    if let Some(file) = &args.script {
        return script::run(&searcher, picker, look, file);
    }
    let pager = |session: &str| page(registry, matches, cli, env, session);
    let (outcome, stale) = match tty::run(&searcher, picker, look, &pager) {
        Ok(done) => done,
        Err(e) => {
            return crate::failed(
                false,
                &HistoryError::usage(format!("pick needs a terminal: {e}")),
            )
        }
    };
    let mut out = chosen(outcome, args);
    if stale && index.updates_in_background() {
        out.wants_index = Some(crate::background_argv(registry, matches));
    }
    out
}

/// What the run prints for `outcome`, or runs (`--exec`).
fn chosen(outcome: Outcome, args: &PickArgs) -> Output {
    let row = match outcome {
        Outcome::Left => {
            return Output {
                code: 1,
                ..Output::default()
            }
        }
        Outcome::Chose(row) => row,
    };
    if args.print == PrintArg::Json {
        return Output {
            stdout: format!("{}\n", serde_json::to_string(&row.json).unwrap_or_default()),
            ..Output::default()
        };
    }
    let Some(command) = row.resume.clone() else {
        return Output {
            stderr: format!(
                "{} cannot be resumed: its agent names no command\n",
                row.session
            ),
            code: 1,
            ..Output::default()
        };
    };
    if args.exec {
        let status = std::process::Command::new("sh")
            .args(["-c", &command])
            .status();
        return match status {
            Ok(s) => Output {
                code: s.code().and_then(|c| u8::try_from(c).ok()).unwrap_or(1),
                ..Output::default()
            },
            Err(e) => Output {
                stderr: format!("error: could not run {command}: {e}\n"),
                code: 2,
                ..Output::default()
            },
        };
    }
    Output {
        stdout: format!("{command}\n"),
        ..Output::default()
    }
}

/// The scopes Tab cycles through: the one the flags name first, then every session, this
/// directory, and each agent's.
fn scopes(registry: &[&Harness], args: &PickArgs) -> Vec<Scope> {
    let mut scopes = Vec::new();
    if args.session.is_some() || args.cwd.is_some() {
        let session = args.session.clone().unwrap_or_else(|| "*".into());
        let mut label = match session.as_str() {
            "*" => "every session".to_string(),
            s => s.to_string(),
        };
        if let Some(dir) = &args.cwd {
            label = format!("{label} in {}", dir.display());
        }
        scopes.push(Scope {
            label,
            session,
            cwd: args.cwd.clone(),
        });
    }
    scopes.push(Scope {
        label: "every session".into(),
        session: "*".into(),
        cwd: None,
    });
    scopes.push(Scope {
        label: "this directory".into(),
        session: "*".into(),
        cwd: Some(".".into()),
    });
    for h in registry {
        scopes.push(Scope {
            label: format!("{} only", h.name),
            session: format!("{}:*", h.name),
            cwd: None,
        });
    }
    let mut seen = Vec::new();
    scopes.retain(|s| {
        let key = (s.session.clone(), s.cwd.clone());
        let new = !seen.contains(&key);
        seen.push(key);
        new
    });
    scopes
}

/// Shows `session` as Markdown in the pager (`$PAGER`, else `less -R`), on the terminal; where
/// there is no pager, on the terminal until Enter.
fn page(
    registry: &[&Harness],
    matches: &clap::ArgMatches,
    cli: &Cli,
    env: Env<'_>,
    session: &str,
) -> std::io::Result<()> {
    use std::process::{Command, Stdio};
    let tty = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/tty")?;
    let argv = [crate::command_line::PROGRAM, "export", "--session", session];
    let terminal = Terminal {
        is_terminal: true,
        ..Terminal::piped()
    };
    let history = crate::open(registry, matches, cli, env).map_err(std::io::Error::other)?;
    let args = crate::args::ExportArgs {
        session: Some(session.to_string()),
        format: crate::args::ExportFormat::Markdown,
        all_branches: false,
        no_pager: false,
    };
    match crate::pager(registry, &argv, env, &terminal) {
        Some(pager) => {
            let mut child = Command::new("sh")
                .args(["-c", &pager])
                .stdin(Stdio::piped())
                .stdout(Stdio::from(tty.try_clone()?))
                .stderr(Stdio::from(tty.try_clone()?))
                .spawn()?;
            if let Some(mut stdin) = child.stdin.take() {
                crate::export(&history, &args, false, &mut stdin);
            }
            child.wait()?;
        }
        None => {
            let mut out = tty.try_clone()?;
            crate::export(&history, &args, false, &mut out);
            out.write_all(b"\n(Enter to go back)")?;
            out.flush()?;
            let mut line = String::new();
            std::io::BufRead::read_line(&mut std::io::BufReader::new(tty), &mut line)?;
        }
    }
    Ok(())
}

/// Serves the screen's thread: answers its searches, newest first (a search a later one
/// superseded is dropped unasked), and its pager requests, until it hangs up. The quick part of
/// a search (the first results) runs here, the whole answer on a thread of its own, so that a
/// ranking still stopping never holds up the next keystroke's first results. Whether the index
/// wants an update.
pub(crate) fn serve(
    searcher: &Searcher,
    jobs: Receiver<Job>,
    latest: &AtomicU64,
    events: Sender<Event>,
    pager: &dyn Fn(&str) -> std::io::Result<()>,
) -> bool {
    /// Tells the screen when this thread ends, however it ends.
    struct Bye(Sender<Event>);
    impl Drop for Bye {
        fn drop(&mut self) {
            let _ = self.0.send(Event::Gone);
        }
    }
    let bye = Bye(events);
    let ranker = searcher.ranker();
    std::thread::scope(|s| {
        let (whole_to, wholes) = mpsc::channel::<(Ask, history_core::History)>();
        let answers = bye.0.clone();
        let ranking = s.spawn(move || {
            let mut stale = false;
            while let Ok(mut next) = wholes.recv() {
                // Only the newest search is still wanted.
                next = wholes.try_iter().last().unwrap_or(next);
                let (ask, history) = next;
                let stop = || latest.load(Ordering::Relaxed) != ask.generation;
                if stop() {
                    continue;
                }
                stale |= ranker.whole(history, &ask, &stop, &mut |a| {
                    let _ = answers.send(Event::Answer(a));
                });
            }
            stale
        });
        let mut stale = false;
        let mut queue: VecDeque<Job> = VecDeque::new();
        loop {
            if queue.is_empty() {
                match jobs.recv() {
                    Ok(job) => queue.push_back(job),
                    Err(_) => break,
                }
            }
            queue.extend(jobs.try_iter());
            let newest = queue.iter().rposition(|j| matches!(j, Job::Search(_)));
            let mut i = 0;
            queue.retain(|j| {
                let keep = !matches!(j, Job::Search(_)) || Some(i) == newest;
                i += 1;
                keep
            });
            let Some(job) = queue.pop_front() else {
                continue;
            };
            match job {
                Job::Search(ask) => {
                    if latest.load(Ordering::Relaxed) != ask.generation {
                        continue;
                    }
                    let (more, met) = searcher.first(&ask, &mut |a| {
                        let _ = bye.0.send(Event::Answer(a));
                    });
                    stale |= met;
                    if more && latest.load(Ordering::Relaxed) == ask.generation {
                        match searcher.history(true) {
                            Ok(history) => {
                                let _ = whole_to.send((ask, history));
                            }
                            Err(e) => {
                                let _ = bye.0.send(Event::Answer(Answer {
                                    generation: ask.generation,
                                    rows: Vec::new(),
                                    done: true,
                                    status: format!("error: {e}"),
                                }));
                            }
                        }
                    }
                }
                Job::Page(session) => {
                    let _ = pager(&session);
                    let _ = bye.0.send(Event::Paged);
                }
            }
        }
        drop(whole_to);
        stale | ranking.join().unwrap_or(false)
    })
}

/// The screen's loop, on any backend: keys and answers in, a frame drawn after each, until a
/// session is chosen or the person leaves. `suspend` gives the terminal to the pager and takes
/// it back; `drawn` is told of each frame that shows an answer.
pub(crate) struct Ui<'a, B: Backend> {
    pub screen: Screen<B>,
    pub picker: Picker,
    pub look: Look,
    pub jobs: Sender<Job>,
    pub events: Receiver<Event>,
    pub latest: &'a AtomicU64,
    pub suspend: &'a mut dyn FnMut(&mut Screen<B>, bool) -> std::io::Result<()>,
    /// Writes an escape sequence to the terminal (the clipboard's).
    pub copy: &'a mut dyn FnMut(&str),
    pub drawn: &'a mut dyn FnMut(Drawn),
}

/// What a frame showed, for measuring.
pub(crate) enum Drawn {
    /// A keystroke started the search of this generation at this time.
    Asked(u64, String, Instant),
    /// A frame showed an answer of this generation; whether the whole one.
    Shown(u64, bool),
}

impl<B: Backend> Ui<'_, B> {
    fn search(&mut self, ask: Ask, at: Instant) {
        self.latest.store(ask.generation, Ordering::Relaxed);
        (self.drawn)(Drawn::Asked(ask.generation, ask.text.clone(), at));
        let _ = self.jobs.send(Job::Search(ask));
    }

    fn draw(&mut self) -> std::io::Result<()> {
        let (picker, look) = (&mut self.picker, &self.look);
        self.screen
            .draw(|f| view::draw(f, picker, look))
            .map(|_| ())
            .map_err(|e| std::io::Error::other(e.to_string()))
    }

    /// Runs until a session is chosen or the person leaves.
    pub(crate) fn run(mut self) -> std::io::Result<Outcome> {
        let first = self.picker.ask();
        self.search(first, Instant::now());
        self.draw()?;
        loop {
            let Ok(event) = self.events.recv() else {
                return Ok(Outcome::Left);
            };
            match event {
                Event::Key(key, at) => match self.picker.key(key) {
                    Action::Nothing => {}
                    Action::Search(ask) => self.search(ask, at),
                    Action::Choose(i) => {
                        if let Some(row) = self.picker.rows.get(i) {
                            return Ok(Outcome::Chose(Box::new(row.clone())));
                        }
                    }
                    Action::Leave => return Ok(Outcome::Left),
                    Action::Copy(text) => (self.copy)(&osc52(&text)),
                    Action::Page(session) => {
                        (self.suspend)(&mut self.screen, true)?;
                        let _ = self.jobs.send(Job::Page(session));
                        // Answers that come meanwhile are kept for when the screen is back.
                        loop {
                            match self.events.recv() {
                                Ok(Event::Paged) | Err(_) => break,
                                Ok(Event::Answer(a)) => {
                                    self.picker.answer(a);
                                }
                                Ok(Event::Gone) => return Ok(Outcome::Left),
                                Ok(_) => {}
                            }
                        }
                        (self.suspend)(&mut self.screen, false)?;
                    }
                },
                Event::Answer(answer) => {
                    let (generation, done) = (answer.generation, answer.done);
                    if self.picker.answer(answer) {
                        self.draw()?;
                        (self.drawn)(Drawn::Shown(generation, done));
                        continue;
                    }
                }
                Event::Resize | Event::Paged => {}
                Event::End | Event::Gone => return Ok(Outcome::Left),
            }
            self.draw()?;
        }
    }
}

/// The escape sequence that asks the terminal to put `text` on the clipboard (OSC 52).
fn osc52(text: &str) -> String {
    format!("\x1b]52;c;{}\x07", base64(text.as_bytes()))
}

/// `bytes` in standard base64, as OSC 52 takes it.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[(n >> (18 - 6 * i)) as usize & 63]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clipboard_gets_base64() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(osc52("hi"), "\x1b]52;c;aGk=\x07");
    }
}

#[cfg(test)]
mod screens;
