//! The picker as a state machine: keys in, what to do out ([`Action`]), answers of searches in.
//! It knows no terminal: a test feeds it keys and answers and draws it into a buffer.

use std::path::PathBuf;

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use history_core::{Role, Timestamp};

/// How a query is answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Sessions ranked by the query's words, as `find` ranks them.
    Ranked,
    /// Sessions with a literal hit, newest hit first, as `list --query --sessions` gives them.
    Literal,
}

/// Which sessions are searched: every one, those of a directory, one agent's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scope {
    /// What the status line calls it.
    pub label: String,
    /// The selector (`*`, `claude:*`, a prefix).
    pub session: String,
    /// Only sessions that ran in this directory or below it.
    pub cwd: Option<PathBuf>,
}

/// One hit of a session, as the preview shows it.
#[derive(Clone, Debug, PartialEq)]
pub struct Snippet {
    /// Its seq in the session.
    pub seq: u64,
    /// Who said it.
    pub role: Role,
    /// When.
    pub time: Option<Timestamp>,
    /// The text around the hit.
    pub text: String,
    /// The byte ranges of `text` to highlight.
    pub spans: Vec<(usize, usize)>,
}

/// One session of the list.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// The qualified id.
    pub session: String,
    /// Its directory, where known.
    pub cwd: Option<String>,
    /// Its git branch, where known.
    pub branch: Option<String>,
    /// Its title, first prompt or best hit, on one line.
    pub about: String,
    /// How many events hold the query (`None` in the overview).
    pub hits: Option<usize>,
    /// How many events the session has (the overview).
    pub events: Option<usize>,
    /// Its latest hit, or its last activity.
    pub last: Option<Timestamp>,
    /// Its first hit, or its first prompt's time.
    pub first: Option<Timestamp>,
    /// The command that reopens it.
    pub resume: Option<String>,
    /// Its best hits, best first.
    pub snippets: Vec<Snippet>,
    /// Its entry as the page's `--json` gives it.
    pub json: serde_json::Value,
}

impl Row {
    /// The agent and the id.
    pub fn agent_and_id(&self) -> (&str, &str) {
        self.session.split_once(':').unwrap_or(("", &self.session))
    }
}

/// A search the picker wants answered.
#[derive(Clone, Debug, PartialEq)]
pub struct Ask {
    /// Its generation: a later one supersedes it.
    pub generation: u64,
    /// The query (empty: the recent sessions).
    pub text: String,
    /// How to answer it.
    pub mode: Mode,
    /// Over which sessions.
    pub scope: Scope,
}

/// A search's answer, or part of one.
#[derive(Clone, Debug, PartialEq)]
pub struct Answer {
    /// The generation of the [`Ask`] it answers.
    pub generation: u64,
    /// The sessions, best (or newest) first.
    pub rows: Vec<Row>,
    /// Whether this is the whole answer (rather than first results, the ranking to follow).
    pub done: bool,
    /// What the status line says of it (`12 sessions`, `scanning: no index`).
    pub status: String,
}

/// What the picker wants done after a key.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// Nothing but drawing again.
    Nothing,
    /// Run this search; its answers replace the rows.
    Search(Ask),
    /// The person chose this row.
    Choose(usize),
    /// Open this session in the pager.
    Page(String),
    /// Copy this text to the clipboard.
    Copy(String),
    /// Leave with nothing chosen.
    Leave,
}

/// The picker's whole state.
#[derive(Clone, Debug)]
pub struct Picker {
    /// The query line.
    pub query: String,
    /// How the query is answered.
    pub mode: Mode,
    /// The scopes Tab cycles through, and the one in use.
    pub scopes: Vec<Scope>,
    /// The index of the scope in use.
    pub scope: usize,
    /// The sessions shown.
    pub rows: Vec<Row>,
    /// The selected row.
    pub selected: usize,
    /// The first row in view.
    pub top: usize,
    /// How many lines the preview is scrolled down.
    pub scroll: u16,
    /// The generation of the latest search asked.
    pub generation: u64,
    /// Whether the latest search's whole answer is in.
    pub done: bool,
    /// Whether any answer of the latest search is in.
    pub answered: bool,
    /// What the status line says.
    pub status: String,
    /// A message for a moment (`copied`), in place of the status.
    pub flash: Option<String>,
}

impl Picker {
    /// A picker with this first query, mode and scopes, the first scope in use.
    pub fn new(query: &str, mode: Mode, scopes: Vec<Scope>) -> Picker {
        Picker {
            query: query.to_string(),
            mode,
            scopes,
            scope: 0,
            rows: Vec::new(),
            selected: 0,
            top: 0,
            scroll: 0,
            generation: 0,
            done: false,
            answered: false,
            status: String::new(),
            flash: None,
        }
    }

    /// The search for what the picker shows now, under a new generation.
    pub fn ask(&mut self) -> Ask {
        self.generation += 1;
        self.done = false;
        self.answered = false;
        Ask {
            generation: self.generation,
            text: self.query.trim().to_string(),
            mode: self.mode,
            scope: self.scopes.get(self.scope).cloned().unwrap_or(Scope {
                label: "every session".into(),
                session: "*".into(),
                cwd: None,
            }),
        }
    }

    /// The selected row, if any.
    pub fn chosen(&self) -> Option<&Row> {
        self.rows.get(self.selected)
    }

    /// Takes in an answer; one to a search that a later one superseded is dropped. Whether it
    /// was taken.
    pub fn answer(&mut self, answer: Answer) -> bool {
        // First results that come after the whole answer are already in it.
        if answer.generation != self.generation || (self.done && !answer.done) {
            return false;
        }
        // A selection the person moved stays on its session where that is still there.
        let was = (self.selected > 0)
            .then(|| self.chosen().map(|r| r.session.clone()))
            .flatten();
        self.rows = answer.rows;
        self.selected = was
            .and_then(|s| self.rows.iter().position(|r| r.session == s))
            .unwrap_or(0);
        if self.selected == 0 {
            self.top = 0;
            self.scroll = 0;
        }
        self.done = answer.done;
        self.answered = true;
        self.status = answer.status;
        true
    }

    /// What a key does.
    pub fn key(&mut self, key: KeyEvent) -> Action {
        if key.kind == KeyEventKind::Release {
            return Action::Nothing;
        }
        self.flash = None;
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match (key.code, ctrl) {
            (KeyCode::Esc, _) | (KeyCode::Char('c' | 'g' | 'd'), true) => Action::Leave,
            (KeyCode::Enter, _) | (KeyCode::Char('m' | 'j'), true) => match self.chosen() {
                Some(_) => Action::Choose(self.selected),
                None => Action::Nothing,
            },
            (KeyCode::Up, _) | (KeyCode::Char('p' | 'k'), true) => self.move_by(-1),
            (KeyCode::Down, _) | (KeyCode::Char('n'), true) => self.move_by(1),
            (KeyCode::PageUp, _) | (KeyCode::Char('b'), true) => {
                self.scroll = self.scroll.saturating_sub(PAGE);
                Action::Nothing
            }
            (KeyCode::PageDown, _) | (KeyCode::Char('f'), true) => {
                self.scroll = self.scroll.saturating_add(PAGE);
                Action::Nothing
            }
            (KeyCode::Tab, _) => self.next_scope(1),
            (KeyCode::BackTab, _) => self.next_scope(-1),
            (KeyCode::Char('t' | 'r'), true) => {
                self.mode = match self.mode {
                    Mode::Ranked => Mode::Literal,
                    Mode::Literal => Mode::Ranked,
                };
                Action::Search(self.ask())
            }
            (KeyCode::Char('o'), true) => match self.chosen() {
                Some(row) => Action::Page(row.session.clone()),
                None => Action::Nothing,
            },
            (KeyCode::Char('y'), true) => match self.chosen().and_then(|r| r.resume.clone()) {
                Some(cmd) => {
                    self.flash = Some("copied the resume command".into());
                    Action::Copy(cmd)
                }
                None => Action::Nothing,
            },
            (KeyCode::Char('u'), true) => self.edit(|q| q.clear()),
            (KeyCode::Char('w'), true) => self.edit(|q| {
                let kept = q.trim_end().len();
                q.truncate(kept);
                let cut = q.rfind(char::is_whitespace).map_or(0, |i| i + 1);
                q.truncate(cut);
            }),
            (KeyCode::Backspace, _) | (KeyCode::Char('h'), true) => self.edit(|q| {
                q.pop();
            }),
            (KeyCode::Char(c), false) if !key.modifiers.contains(KeyModifiers::ALT) => {
                self.edit(|q| q.push(c))
            }
            _ => Action::Nothing,
        }
    }

    /// Changes the query; a different one is searched.
    fn edit(&mut self, change: impl FnOnce(&mut String)) -> Action {
        let before = self.query.trim().to_string();
        change(&mut self.query);
        match self.query.trim() == before {
            true => Action::Nothing,
            false => Action::Search(self.ask()),
        }
    }

    fn move_by(&mut self, by: isize) -> Action {
        if self.rows.is_empty() {
            return Action::Nothing;
        }
        let last = self.rows.len() - 1;
        let to = self.selected.saturating_add_signed(by).min(last);
        if to != self.selected {
            self.selected = to;
            self.scroll = 0;
        }
        Action::Nothing
    }

    fn next_scope(&mut self, by: isize) -> Action {
        let n = self.scopes.len();
        if n < 2 {
            return Action::Nothing;
        }
        self.scope = (self.scope + n).saturating_add_signed(by) % n;
        Action::Search(self.ask())
    }

    /// Keeps the selected row within `rows` rows from the top.
    pub fn follow(&mut self, rows: usize) {
        let rows = rows.max(1);
        if self.selected < self.top {
            self.top = self.selected;
        } else if self.selected >= self.top + rows {
            self.top = self.selected + 1 - rows;
        }
    }
}

/// How many lines PgUp and PgDn scroll the preview.
const PAGE: u16 = 8;

#[cfg(test)]
mod tests {
    use super::*;

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    fn ctrl(c: char) -> KeyEvent {
        KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL)
    }

    fn row(id: &str) -> Row {
        Row {
            session: format!("claude:{id}"),
            cwd: None,
            branch: None,
            about: id.into(),
            hits: None,
            events: None,
            last: None,
            first: None,
            resume: Some(format!("claude --resume {id}")),
            snippets: Vec::new(),
            json: serde_json::Value::Null,
        }
    }

    fn scopes() -> Vec<Scope> {
        ["*", "claude:*"]
            .iter()
            .map(|s| Scope {
                label: s.to_string(),
                session: s.to_string(),
                cwd: None,
            })
            .collect()
    }

    #[test]
    fn each_keystroke_supersedes_the_search_before_it() {
        let mut p = Picker::new("", Mode::Ranked, scopes());
        let first = p.ask();
        let Action::Search(a) = p.key(key(KeyCode::Char('l'))) else {
            panic!("typing searches")
        };
        let Action::Search(b) = p.key(key(KeyCode::Char('o'))) else {
            panic!("typing searches")
        };
        assert!(first.generation < a.generation && a.generation < b.generation);
        assert_eq!(b.text, "lo");
        let stale = Answer {
            generation: a.generation,
            rows: vec![row("a")],
            done: true,
            status: String::new(),
        };
        assert!(!p.answer(stale), "an answer to a replaced query is dropped");
        assert!(p.rows.is_empty());
        assert!(p.answer(Answer {
            generation: b.generation,
            rows: vec![row("a"), row("b")],
            done: false,
            status: "2 sessions".into(),
        }));
        assert_eq!(p.rows.len(), 2);
        assert_eq!(
            p.key(key(KeyCode::Char(' '))),
            Action::Nothing,
            "same query"
        );
    }

    #[test]
    fn keys_move_choose_cycle_and_leave() {
        let mut p = Picker::new("x", Mode::Ranked, scopes());
        let g = p.ask().generation;
        p.answer(Answer {
            generation: g,
            rows: vec![row("a"), row("b"), row("c")],
            done: true,
            status: String::new(),
        });
        p.key(key(KeyCode::Down));
        p.key(ctrl('n'));
        p.key(ctrl('n'));
        assert_eq!(p.selected, 2, "stops at the last row");
        p.key(ctrl('p'));
        assert_eq!(p.key(key(KeyCode::Enter)), Action::Choose(1));
        assert_eq!(p.key(ctrl('o')), Action::Page("claude:b".into()));
        assert_eq!(p.key(ctrl('y')), Action::Copy("claude --resume b".into()));
        let Action::Search(ask) = p.key(key(KeyCode::Tab)) else {
            panic!("tab searches another scope")
        };
        assert_eq!(ask.scope.session, "claude:*");
        let Action::Search(ask) = p.key(key(KeyCode::Tab)) else {
            panic!()
        };
        assert_eq!(ask.scope.session, "*", "and comes round");
        let Action::Search(ask) = p.key(ctrl('t')) else {
            panic!()
        };
        assert_eq!(ask.mode, Mode::Literal);
        assert_eq!(p.key(key(KeyCode::Esc)), Action::Leave);
        assert_eq!(p.key(ctrl('c')), Action::Leave);
        let Action::Search(ask) = p.key(ctrl('w')) else {
            panic!()
        };
        assert_eq!(ask.text, "");
    }

    #[test]
    fn an_answer_keeps_the_selected_session() {
        let mut p = Picker::new("x", Mode::Ranked, scopes());
        let g = p.ask().generation;
        p.answer(Answer {
            generation: g,
            rows: vec![row("a"), row("b")],
            done: false,
            status: String::new(),
        });
        p.key(key(KeyCode::Down));
        p.answer(Answer {
            generation: g,
            rows: vec![row("c"), row("a"), row("b")],
            done: true,
            status: String::new(),
        });
        assert_eq!(p.chosen().map(|r| r.session.as_str()), Some("claude:b"));
        p.follow(1);
        assert_eq!(p.top, 2);
    }
}
