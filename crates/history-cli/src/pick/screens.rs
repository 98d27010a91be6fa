//! The picker's screens, drawn into a buffer: its state fed the answers of real searches over
//! the demo sessions (`fixtures/demo`), at a fixed clock, kept as snapshots.

use std::path::PathBuf;
use std::sync::atomic::AtomicU64;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use history_core::{History, Timestamp};
use insta::assert_snapshot;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::style::Modifier;

use super::search::Searcher;
use super::state::{Action, Answer, Mode, Picker, Row, Scope, Snippet};
use super::view::{draw, Look};
use crate::index;
use crate::registry::HARNESSES;
use crate::screen::Clock;

/// 2026-03-02T12:00:00Z: a day or so after the demo's newest sessions but one.
const NOW: Timestamp = Timestamp(1_772_452_800 * 1_000_000_000);

fn demo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/demo")
}

fn look(color: bool) -> Look {
    Look {
        color,
        clock: Clock {
            now: NOW,
            zone: jiff::tz::TimeZone::UTC,
        },
        home: Some(demo().display().to_string()),
    }
}

fn scopes() -> Vec<Scope> {
    let mut scopes = vec![Scope {
        label: "every session".into(),
        session: "*".into(),
        cwd: None,
    }];
    for h in HARNESSES {
        scopes.push(Scope {
            label: format!("{} only", h.name),
            session: format!("{}:*", h.name),
            cwd: None,
        });
    }
    scopes
}

/// The picker after `query` was typed and every answer of its search taken in.
fn searched(query: &str, mode: Mode) -> Picker {
    let env = |_: &str| None::<std::ffi::OsString>;
    let root = demo();
    let open = || {
        Ok(History::from_registry(
            &HARNESSES,
            &|h| Some(root.join(h.name)),
            &env,
        ))
    };
    let settings = index::Settings::new(true, &env);
    let searcher = Searcher {
        open: &open,
        index: &settings,
        recent: Default::default(),
    };
    let mut picker = Picker::new(query, mode, scopes());
    let ask = picker.ask();
    let latest = AtomicU64::new(ask.generation);
    let mut answers: Vec<Answer> = Vec::new();
    searcher.answer(&ask, &latest, &mut |a| answers.push(a));
    assert!(answers.last().is_some_and(|a| a.done), "{answers:?}");
    for a in answers {
        picker.answer(a);
    }
    picker
}

/// The buffer as text: a line a row, wide characters once, trailing blanks cut.
fn text(buffer: &Buffer) -> String {
    let mut out = String::new();
    for y in 0..buffer.area.height {
        let mut line = String::new();
        let mut skip = 0;
        for x in 0..buffer.area.width {
            if skip > 0 {
                skip -= 1;
                continue;
            }
            let symbol = buffer[(x, y)].symbol();
            skip = crate::screen::columns(symbol).saturating_sub(1);
            line.push_str(symbol);
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// `picker` drawn on a `width`×`height` screen.
fn drawn(picker: &mut Picker, width: u16, height: u16, look: &Look) -> Buffer {
    let mut screen = ratatui::Terminal::new(TestBackend::new(width, height)).unwrap();
    screen.draw(|f| draw(f, picker, look)).unwrap();
    screen.backend().buffer().clone()
}

#[test]
fn an_empty_query_shows_the_recent_sessions() {
    let mut p = searched("", Mode::Ranked);
    assert!(p.rows.len() >= 5, "{:?}", p.rows);
    assert_snapshot!("empty_query", text(&drawn(&mut p, 100, 24, &look(false))));
}

#[test]
fn a_query_ranks_sessions_and_previews_the_best_hits() {
    let mut p = searched("login test", Mode::Ranked);
    assert_eq!(
        p.rows.first().map(|r| r.session.as_str()),
        Some("claude:abandoned-branch")
    );
    let buffer = drawn(&mut p, 100, 30, &look(true));
    assert_snapshot!("results", text(&buffer));
    // The words are highlighted in the preview.
    let lit = (0..buffer.area.height).any(|y| {
        (0..buffer.area.width).any(|x| {
            let cell = &buffer[(x, y)];
            cell.modifier.contains(Modifier::BOLD) && cell.symbol() == "l" && y > 12
        })
    });
    assert!(lit, "{}", text(&buffer));
}

#[test]
fn the_preview_beside_the_list_on_a_wide_screen_scrolls() {
    let mut p = searched("git diff", Mode::Literal);
    assert!(!p.rows.is_empty());
    assert_snapshot!("preview_wide", text(&drawn(&mut p, 170, 24, &look(false))));
    p.key(KeyEvent::new(KeyCode::PageDown, KeyModifiers::NONE));
    let scrolled = text(&drawn(&mut p, 170, 24, &look(false)));
    assert_snapshot!("preview_scrolled", scrolled);
}

#[test]
fn nothing_matched_says_what_to_try() {
    let mut p = searched("zqxjv wwqq", Mode::Ranked);
    assert!(p.rows.is_empty());
    assert_snapshot!("no_results", text(&drawn(&mut p, 80, 24, &look(false))));
}

#[test]
fn an_80_column_terminal_keeps_every_line_in_its_width() {
    let mut p = searched("panic", Mode::Ranked);
    assert!(!p.rows.is_empty());
    let screen = text(&drawn(&mut p, 80, 24, &look(false)));
    assert_snapshot!("narrow", screen);
    // Narrower than anyone should use it: still drawn, nothing panics.
    for (w, h) in [(40, 10), (20, 5), (1, 1), (0, 0)] {
        drawn(&mut p, w, h, &look(true));
    }
}

fn row(about: &str, n: usize) -> Row {
    Row {
        session: format!("claude:{n:08}-aaaa"),
        cwd: Some(format!("/home/person/src/日本語/project-{n}")),
        branch: Some("main".into()),
        about: about.into(),
        hits: Some(n % 7 + 1),
        events: None,
        last: Some(Timestamp(NOW.0 - (n as i64) * 60_000_000_000)),
        first: None,
        resume: Some(format!("claude --resume {n:08}-aaaa")),
        snippets: vec![Snippet {
            seq: 3,
            role: history_core::Role::User,
            time: None,
            text: format!("{about}\nsecond line"),
            spans: vec![(0, 3)],
        }],
        json: serde_json::Value::Null,
    }
}

#[test]
fn wide_and_combining_characters_keep_their_columns() {
    let mut p = Picker::new("é", Mode::Ranked, scopes());
    let g = p.ask().generation;
    p.answer(Answer {
        generation: g,
        rows: vec![
            row("日本語のテキストを検索する 🎉 and more words to cut", 1),
            row(
                "cafe\u{301} au lait, e\u{301}te\u{301} — combining accents",
                2,
            ),
        ],
        done: true,
        status: "2 sessions".into(),
    });
    for width in [80u16, 81, 123] {
        let buffer = drawn(&mut p, width, 24, &look(true));
        for line in text(&buffer).lines() {
            assert!(
                crate::screen::columns(line) <= usize::from(width),
                "{width}: {line}"
            );
        }
    }
    let screen = text(&drawn(&mut p, 80, 24, &look(false)));
    assert!(screen.contains("日本語"), "{screen}");
    assert!(screen.contains("cafe\u{301}"), "{screen}");
}

#[test]
fn twenty_thousand_sessions_move_and_draw_at_once() {
    let mut p = Picker::new("", Mode::Ranked, scopes());
    let g = p.ask().generation;
    let rows: Vec<Row> = (0..20_000).map(|n| row("a session", n)).collect();
    p.answer(Answer {
        generation: g,
        rows,
        done: true,
        status: String::new(),
    });
    let started = std::time::Instant::now();
    for _ in 0..19_999 {
        assert_eq!(
            p.key(KeyEvent::new(KeyCode::Down, KeyModifiers::NONE)),
            Action::Nothing
        );
    }
    let screen = text(&drawn(&mut p, 100, 30, &look(true)));
    assert!(screen.contains("00019999"), "{screen}");
    // A frame draws the rows in view only.
    assert!(started.elapsed().as_secs() < 5);
}

#[test]
fn a_query_too_short_to_search_shows_the_recent_sessions_without_reading_them_again() {
    let env = |_: &str| None::<std::ffi::OsString>;
    let root = demo();
    let opened = std::sync::atomic::AtomicUsize::new(0);
    let open = || {
        opened.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Ok(History::from_registry(
            &HARNESSES,
            &|h| Some(root.join(h.name)),
            &env,
        ))
    };
    let settings = index::Settings::new(true, &env);
    let searcher = Searcher {
        open: &open,
        index: &settings,
        recent: Default::default(),
    };
    let mut picker = Picker::new("", Mode::Ranked, scopes());
    let ask = |picker: &mut Picker| {
        let ask = picker.ask();
        let latest = AtomicU64::new(ask.generation);
        let mut answers: Vec<Answer> = Vec::new();
        searcher.answer(&ask, &latest, &mut |a| answers.push(a));
        answers.pop().unwrap()
    };
    let recent = ask(&mut picker);
    assert!(!recent.rows.is_empty());
    let read = opened.load(std::sync::atomic::Ordering::Relaxed);
    picker.key(KeyEvent::new(KeyCode::Char('f'), KeyModifiers::NONE));
    let typed = ask(&mut picker);
    assert_eq!(typed.rows, recent.rows);
    assert!(
        typed.status.contains("type a longer word"),
        "{}",
        typed.status
    );
    assert_eq!(opened.load(std::sync::atomic::Ordering::Relaxed), read);
    // Another scope's recent sessions are its own.
    picker.key(KeyEvent::new(KeyCode::Tab, KeyModifiers::NONE));
    let other = ask(&mut picker);
    assert!(opened.load(std::sync::atomic::Ordering::Relaxed) > read);
    assert_ne!(other.rows, recent.rows);
}
