//! The picker on the real terminal: `/dev/tty` in raw mode on the alternate screen, whatever
//! standard input and output are, left as it was found on every way out (a panic included).

use std::fs::File;
use std::io::{BufWriter, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use crossterm::event::{self, Event as TermEvent};
use crossterm::terminal::{self, EnterAlternateScreen, LeaveAlternateScreen};
use crossterm::{cursor, execute};
use ratatui::backend::CrosstermBackend;

use super::search::Searcher;
use super::state::Picker;
use super::ui::{serve, Event, Outcome, Ui};
use super::view::Look;

/// The terminal the picker draws on.
fn open() -> std::io::Result<File> {
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/tty")
}

/// Raw mode and the alternate screen, given back when dropped.
struct Taken {
    tty: File,
}

impl Taken {
    fn take(tty: File) -> std::io::Result<Taken> {
        let mut taken = Taken { tty };
        taken.enter()?;
        Ok(taken)
    }

    fn enter(&mut self) -> std::io::Result<()> {
        terminal::enable_raw_mode()?;
        // Cleared here rather than by ratatui, which would ask the terminal where its cursor is.
        execute!(
            self.tty,
            EnterAlternateScreen,
            terminal::Clear(terminal::ClearType::All),
            cursor::Show
        )
    }

    fn leave(&mut self) {
        give_back(&mut self.tty);
    }
}

impl Drop for Taken {
    fn drop(&mut self) {
        self.leave();
    }
}

/// Leaves the alternate screen and raw mode, the cursor shown.
fn give_back(tty: &mut File) {
    let _ = execute!(tty, LeaveAlternateScreen, cursor::Show);
    let _ = terminal::disable_raw_mode();
}

/// A panic on either thread gives the terminal back before its message is printed.
fn restore_on_panic() {
    restore_on_panic_to(open);
}

/// [`restore_on_panic`], on the terminal `open` opens.
fn restore_on_panic_to(open: fn() -> std::io::Result<File>) {
    let before = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if let Ok(mut tty) = open() {
            give_back(&mut tty);
        }
        before(info);
    }));
}

#[cfg(test)]
mod tests {
    use std::sync::OnceLock;

    static TTY: OnceLock<std::path::PathBuf> = OnceLock::new();

    #[test]
    fn a_panic_leaves_the_alternate_screen_before_its_message() {
        let dir = tempfile::tempdir().unwrap();
        let tty = TTY.get_or_init(|| dir.path().join("tty"));
        std::fs::write(tty, "").unwrap();
        let before = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        super::restore_on_panic_to(|| {
            std::fs::OpenOptions::new()
                .append(true)
                .open(TTY.get().unwrap())
        });
        let panicked = std::thread::spawn(|| panic!("a fault")).join();
        std::panic::set_hook(before);
        assert!(panicked.is_err());
        let written = std::fs::read(tty).unwrap();
        assert!(
            written.windows(8).any(|w| w == b"\x1b[?1049l"),
            "{written:?}"
        );
    }
}

/// Runs the picker on the terminal: its screen on one thread, its searches on this one.
/// How it ended, and whether the index wants an update.
pub(crate) fn run(
    searcher: &Searcher,
    picker: Picker,
    look: Look,
    pager: &dyn Fn(&str) -> std::io::Result<()>,
) -> std::io::Result<(Outcome, bool)> {
    let tty = open()?;
    let draw_to = BufWriter::with_capacity(64 * 1024, tty.try_clone()?);
    let mut clipboard = tty.try_clone()?;
    restore_on_panic();
    let mut taken = Taken::take(tty)?;
    let screen = ratatui::Terminal::new(CrosstermBackend::new(draw_to))?;
    let (jobs_to, jobs) = mpsc::channel();
    let (events_to, events) = mpsc::channel();
    let latest = AtomicU64::new(0);
    let reading = Keys::start(events_to.clone());
    let signals = Signals::start(events_to.clone());
    let paused = reading.paused.clone();
    let outcome = std::thread::scope(|s| {
        let ui = s.spawn(|| {
            type Drawn = ratatui::Terminal<CrosstermBackend<BufWriter<File>>>;
            let mut suspend = |screen: &mut Drawn, away: bool| -> std::io::Result<()> {
                match away {
                    true => {
                        paused.pause();
                        taken.leave();
                    }
                    false => {
                        taken.enter()?;
                        // A new screen draws every cell again.
                        let to = BufWriter::with_capacity(64 * 1024, taken.tty.try_clone()?);
                        *screen = ratatui::Terminal::new(CrosstermBackend::new(to))?;
                        paused.resume();
                    }
                }
                Ok(())
            };
            let mut copy = |seq: &str| {
                let _ = clipboard.write_all(seq.as_bytes());
                let _ = clipboard.flush();
            };
            let ui = Ui {
                screen,
                picker,
                look,
                jobs: jobs_to,
                events,
                latest: &latest,
                suspend: &mut suspend,
                copy: &mut copy,
                drawn: &mut |_| {},
            };
            let outcome = ui.run();
            // A search under way is no longer wanted.
            latest.store(u64::MAX, Ordering::Relaxed);
            outcome
        });
        let stale = serve(searcher, jobs, &latest, events_to, pager);
        let outcome = ui
            .join()
            .unwrap_or_else(|_| Err(std::io::Error::other("the screen's thread failed")));
        outcome.map(|o| (o, stale))
    });
    reading.stop();
    signals.stop();
    outcome
}

/// The thread that turns the signals that end a process into an end of the picker, so that the
/// terminal is given back as on any other way out (raw mode sends Ctrl-C as a key; these come
/// from elsewhere: `kill`, a closed terminal).
struct Signals {
    handle: Option<signal_hook::iterator::Handle>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Signals {
    /// Without a thread when the handlers cannot be installed: the signals then end the process
    /// as usual.
    fn start(events: mpsc::Sender<Event>) -> Signals {
        use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
        let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGTERM, SIGHUP, SIGINT]) else {
            return Signals {
                handle: None,
                thread: None,
            };
        };
        let handle = signals.handle();
        let thread = std::thread::spawn(move || {
            for signal in signals.forever() {
                let _ = events.send(Event::Signal(signal));
            }
        });
        Signals {
            handle: Some(handle),
            thread: Some(thread),
        }
    }

    fn stop(self) {
        if let Some(handle) = self.handle {
            handle.close();
        }
        if let Some(thread) = self.thread {
            let _ = thread.join();
        }
    }
}

/// Whether the key reader is to leave the terminal to someone else (the pager), and whether
/// it has.
#[derive(Clone, Default)]
struct Pause {
    wanted: Arc<AtomicBool>,
    done: Arc<AtomicBool>,
}

impl Pause {
    fn pause(&self) {
        self.wanted.store(true, Ordering::SeqCst);
        let until = Instant::now() + Duration::from_secs(1);
        while !self.done.load(Ordering::SeqCst) && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    fn resume(&self) {
        self.wanted.store(false, Ordering::SeqCst);
    }
}

/// The thread that reads keys from the terminal.
struct Keys {
    stop: Arc<AtomicBool>,
    paused: Pause,
    thread: std::thread::JoinHandle<()>,
}

impl Keys {
    fn start(events: mpsc::Sender<Event>) -> Keys {
        let stop = Arc::new(AtomicBool::new(false));
        let paused = Pause::default();
        let (stopped, pause) = (stop.clone(), paused.clone());
        let thread = std::thread::spawn(move || {
            while !stopped.load(Ordering::SeqCst) {
                if pause.wanted.load(Ordering::SeqCst) {
                    pause.done.store(true, Ordering::SeqCst);
                    std::thread::sleep(Duration::from_millis(10));
                    continue;
                }
                pause.done.store(false, Ordering::SeqCst);
                // Polled, so that a pause or the end is noticed.
                if !event::poll(Duration::from_millis(25)).unwrap_or(false) {
                    continue;
                }
                let sent = match event::read() {
                    Ok(TermEvent::Key(key)) => events.send(Event::Key(key, Instant::now())),
                    Ok(TermEvent::Resize(..)) => events.send(Event::Resize),
                    Ok(_) => Ok(()),
                    Err(_) => events.send(Event::End),
                };
                if sent.is_err() {
                    break;
                }
            }
        });
        Keys {
            stop,
            paused,
            thread,
        }
    }

    fn stop(self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = self.thread.join();
    }
}
