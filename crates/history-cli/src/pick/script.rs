//! `pick --script FILE`: the picker fed keys from a file, drawn into a buffer the size of a
//! terminal rather than on one, to measure how long each keystroke takes to show results. The
//! same screen thread and searching thread as on a terminal; only the keys and the screen
//! differ. Prints one JSON object: each search's times, and the median and 95th percentile.
//!
//! The file has one step a line: `type TEXT` (a key per character, `gap` apart), `key NAME`
//! (`down`, `up`, `enter`, `esc`, `tab`, `backspace`, `pgdn`, `pgup`, `ctrl-t`, …), `wait MS`,
//! `gap MS` (between typed keys; 120 by default), `settle` (until the search is answered whole),
//! and `#` comments.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::backend::TestBackend;

use super::search::Searcher;
use super::state::Picker;
use super::ui::{serve, Drawn, Event, Outcome, Ui};
use super::view::Look;

/// The size of the buffer the picker draws into.
const WIDTH: u16 = 120;
const HEIGHT: u16 = 40;

/// How long `settle` waits at most.
const SETTLE: Duration = Duration::from_secs(120);

/// One step of a script.
#[derive(Debug, PartialEq)]
enum Step {
    Keys(Vec<KeyEvent>),
    Wait(Duration),
    Gap(Duration),
    Settle,
}

/// The steps of a script's text.
fn parse(text: &str) -> Result<Vec<Step>, String> {
    let mut steps = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim_start();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (word, rest) = line.split_once(' ').unwrap_or((line, ""));
        let ms = || {
            rest.trim()
                .parse::<u64>()
                .map(Duration::from_millis)
                .map_err(|_| format!("line {}: {word} takes milliseconds", n + 1))
        };
        steps.push(match word {
            "type" => Steps::typed(rest),
            "key" => Step::Keys(vec![key(rest.trim())
                .ok_or_else(|| format!("line {}: no key {:?}", n + 1, rest.trim()))?]),
            "wait" => Step::Wait(ms()?),
            "gap" => Step::Gap(ms()?),
            "settle" => Step::Settle,
            _ => return Err(format!("line {}: unknown step {word:?}", n + 1)),
        });
    }
    Ok(steps)
}

struct Steps;

impl Steps {
    fn typed(text: &str) -> Step {
        Step::Keys(
            text.chars()
                .map(|c| KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE))
                .collect(),
        )
    }
}

/// A key by its name.
fn key(name: &str) -> Option<KeyEvent> {
    let plain = |code| Some(KeyEvent::new(code, KeyModifiers::NONE));
    match name {
        "down" => plain(KeyCode::Down),
        "up" => plain(KeyCode::Up),
        "enter" => plain(KeyCode::Enter),
        "esc" => plain(KeyCode::Esc),
        "tab" => plain(KeyCode::Tab),
        "backspace" => plain(KeyCode::Backspace),
        "pgdn" => plain(KeyCode::PageDown),
        "pgup" => plain(KeyCode::PageUp),
        _ => {
            let c = name.strip_prefix("ctrl-")?;
            let mut chars = c.chars();
            let (Some(c), None) = (chars.next(), chars.next()) else {
                return None;
            };
            Some(KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL))
        }
    }
}

/// What was measured of one search.
#[derive(Debug, Default, serde::Serialize)]
struct Timing {
    query: String,
    /// From its keystroke to the first frame that showed results.
    first_ms: Option<f64>,
    /// To the frame that showed the whole answer.
    whole_ms: Option<f64>,
    #[serde(skip)]
    at: Option<Instant>,
}

/// Replays the script in `file` and prints what it measured.
pub(crate) fn run(
    searcher: &Searcher,
    picker: Picker,
    look: Look,
    file: &Path,
) -> Result<String, String> {
    let steps = std::fs::read_to_string(file)
        .map_err(|e| format!("{}: {e}", file.display()))
        .and_then(|t| parse(&t))?;
    let screen =
        ratatui::Terminal::new(TestBackend::new(WIDTH, HEIGHT)).map_err(|e| e.to_string())?;
    let (jobs_to, jobs) = mpsc::channel();
    let (events_to, events) = mpsc::channel();
    let latest = Arc::new(AtomicU64::new(0));
    // The generation the screen last showed whole.
    let whole = Arc::new(AtomicU64::new(0));
    let timings: Mutex<BTreeMap<u64, Timing>> = Mutex::default();
    let typist = {
        let events = events_to.clone();
        let (latest, whole) = (latest.clone(), whole.clone());
        std::thread::spawn(move || play(&steps, &events, &latest, &whole))
    };
    let outcome = std::thread::scope(|s| {
        let ui = s.spawn(|| {
            let mut drawn = |d: Drawn| {
                let mut t = timings.lock().unwrap_or_else(|e| e.into_inner());
                match d {
                    Drawn::Asked(generation, query, at) => {
                        t.insert(
                            generation,
                            Timing {
                                query,
                                at: Some(at),
                                ..Timing::default()
                            },
                        );
                    }
                    Drawn::Shown(generation, done) => {
                        if let Some(timing) = t.get_mut(&generation) {
                            let ms = timing
                                .at
                                .map(|at| at.elapsed().as_secs_f64() * 1000.0)
                                .map(|ms| (ms * 10.0).round() / 10.0);
                            timing.first_ms = timing.first_ms.or(ms);
                            if done {
                                timing.whole_ms = ms;
                                whole.store(generation, Ordering::SeqCst);
                            }
                        }
                    }
                }
            };
            let ui = Ui {
                screen,
                picker,
                look,
                jobs: jobs_to,
                events,
                latest: &latest,
                suspend: &mut |_, _| Ok(()),
                copy: &mut |_| {},
                drawn: &mut drawn,
            };
            let outcome = ui.run();
            latest.store(u64::MAX, Ordering::Relaxed);
            outcome
        });
        let _ = serve(searcher, jobs, &latest, events_to, &|_| Ok(()));
        ui.join()
    });
    let _ = typist.join();
    let chosen = match outcome {
        Ok(Ok(Outcome::Chose(row))) => row.resume.clone(),
        _ => None,
    };
    let timings: Vec<Timing> = timings
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .into_values()
        .collect();
    Ok(report(&timings, chosen))
}

/// Plays `steps` as keys into `events`, then ends the picker. `latest` is the newest search
/// the picker asked, `whole` the newest it showed whole.
fn play(steps: &[Step], events: &mpsc::Sender<Event>, latest: &AtomicU64, whole: &AtomicU64) {
    let mut gap = Duration::from_millis(120);
    for step in steps {
        match step {
            Step::Keys(keys) => {
                for (i, k) in keys.iter().enumerate() {
                    if i > 0 {
                        std::thread::sleep(gap);
                    }
                    if events.send(Event::Key(*k, Instant::now())).is_err() {
                        return;
                    }
                }
            }
            Step::Wait(d) => std::thread::sleep(*d),
            Step::Gap(d) => gap = *d,
            Step::Settle => {
                // The last key is taken in first.
                std::thread::sleep(Duration::from_millis(20));
                let until = Instant::now() + SETTLE;
                let wanted = || latest.load(Ordering::SeqCst);
                while whole.load(Ordering::SeqCst) != wanted()
                    && wanted() != u64::MAX
                    && Instant::now() < until
                {
                    std::thread::sleep(Duration::from_millis(2));
                }
            }
        }
    }
    let _ = events.send(Event::End);
}

/// The JSON report: each search, and the median and 95th percentile of the first results and
/// of the whole answers.
fn report(timings: &[Timing], chosen: Option<String>) -> String {
    let stats = |pick: fn(&Timing) -> Option<f64>| {
        let mut v: Vec<f64> = timings.iter().filter_map(pick).collect();
        v.sort_by(f64::total_cmp);
        let at = |p: f64| {
            let i = ((v.len() as f64 - 1.0) * p).round() as usize;
            v.get(i).copied()
        };
        serde_json::json!({"count": v.len(), "median_ms": at(0.5), "p95_ms": at(0.95), "max_ms": v.last()})
    };
    let superseded = timings.iter().filter(|t| t.first_ms.is_none()).count();
    let value = serde_json::json!({
        "searches": timings,
        "first_results": stats(|t| t.first_ms),
        "whole_answer": stats(|t| t.whole_ms),
        "superseded": superseded,
        "chosen": chosen,
    });
    serde_json::to_string_pretty(&value).unwrap_or_default() + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_script_is_steps() {
        let steps = parse("# c\ntype ab\nkey down\nkey ctrl-t\nwait 5\nsettle\n").unwrap();
        assert_eq!(steps.len(), 5);
        assert!(matches!(&steps[0], Step::Keys(k) if k.len() == 2));
        assert!(parse("key nope").is_err());
        assert!(parse("fly 3").is_err());
    }
}
