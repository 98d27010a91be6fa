//! The picker's two threads: the screen's ([`Ui`]: keys and answers in, a frame out) and the
//! searching one ([`serve`]), and what they say to each other.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::time::Instant;

use crossterm::event::KeyEvent;
use ratatui::backend::Backend;
use ratatui::Terminal as Screen;

use super::search::Searcher;
use super::state::{Action, Answer, Ask, Picker, Row};
use super::view::{self, Look};

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
    /// The process was asked to end by this signal (SIGTERM, SIGHUP, SIGINT).
    Signal(i32),
}

/// What the searching thread is asked to do.
pub(crate) enum Job {
    /// Answer a search.
    Search(Ask),
    /// Show a session in the pager, on the terminal; answer [`Event::Paged`].
    Page(String),
}

/// How the picker ended.
pub enum Outcome {
    /// A session was chosen.
    Chose(Box<Row>),
    /// The person left.
    Left,
    /// The process was asked to end by this signal.
    Ended(i32),
}

/// How much lower the whole answers' thread runs than the first results' (a nice value's
/// increment): while a ranking superseded is stopping, the next keystroke's first results
/// take the cores (with both at the same priority, the last keys of `flaky login test` on the
/// 1 GiB bench corpus showed first results in 48–53 ms, against 20 ms alone).
const RANKING_NICE: i32 = 10;

/// Lowers the calling thread's priority, and that of the threads it starts, by
/// [`RANKING_NICE`]. On Linux a nice value is a thread's own (setpriority(2)); elsewhere it is
/// the process's, and the threads would gain nothing over each other, so it is left alone.
fn yield_to_first_results() {
    #[cfg(target_os = "linux")]
    let _ = rustix::process::nice(RANKING_NICE);
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
            yield_to_first_results();
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
                                // Ctrl-C in the pager is the pager's.
                                Ok(Event::Signal(signal))
                                    if signal != signal_hook::consts::SIGINT =>
                                {
                                    return Ok(Outcome::Ended(signal))
                                }
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
                Event::Signal(signal) => return Ok(Outcome::Ended(signal)),
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
