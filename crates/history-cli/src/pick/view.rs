//! How the picker looks: the query line, the status line, a line per session, the preview of
//! the selected one and a line of keys, laid out for any size from 80×24 up (the preview beside
//! the list on a wide screen, under it otherwise). Colour only where allowed: without it, the
//! selection is reversed and matches are bold and underlined.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span, Text};
use ratatui::widgets::{Paragraph, Wrap};
use ratatui::Frame;

use crate::screen::{self, Clock};

use super::state::{Mode, Picker, Row, Snippet};

/// How the picker is drawn, besides its state.
#[derive(Clone, Debug)]
pub struct Look {
    /// Whether colour is allowed (not with `NO_COLOR` or `--color never`).
    pub color: bool,
    /// Ages and local times.
    pub clock: Clock,
    /// The home directory, written `~`.
    pub home: Option<String>,
}

/// From how many columns on the preview stands beside the list.
const SIDE_BY_SIDE: u16 = 160;

/// The keys, as the last line names them (a narrow screen gets the first ones).
const KEYS: &[&str] = &[
    "↑↓ move",
    "Enter resume",
    "Tab scope",
    "C-t ranked/literal",
    "PgUp/PgDn preview",
    "C-o read",
    "C-y copy",
    "Esc quit",
];

impl Look {
    fn style(&self, color: Color) -> Style {
        match self.color {
            true => Style::new().fg(color),
            false => Style::new(),
        }
    }

    fn dim(&self) -> Style {
        match self.color {
            true => Style::new().add_modifier(Modifier::DIM),
            false => Style::new(),
        }
    }

    fn matched(&self) -> Style {
        match self.color {
            true => Style::new().fg(Color::Red).add_modifier(Modifier::BOLD),
            false => Style::new().add_modifier(Modifier::BOLD | Modifier::UNDERLINED),
        }
    }

    fn tilde(&self, path: &str) -> String {
        let rest = self.home.as_deref().and_then(|h| path.strip_prefix(h));
        match rest.filter(|r| r.is_empty() || r.starts_with('/')) {
            Some(rest) => format!("~{rest}"),
            None => path.to_string(),
        }
    }
}

/// Draws `picker` on the whole frame; keeps its selection in view.
pub fn draw(frame: &mut Frame, picker: &mut Picker, look: &Look) {
    let area = frame.area();
    let [query, status, body, keys] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(1),
        Constraint::Min(1),
        Constraint::Length(1),
    ])
    .areas(area);
    let (list, preview) = match area.width >= SIDE_BY_SIDE {
        true => {
            let [l, p] =
                Layout::horizontal([Constraint::Percentage(55), Constraint::Percentage(45)])
                    .areas(body);
            (l, p)
        }
        false => {
            let rows = (body.height.saturating_sub(1) * 2 / 5).max(3);
            let [l, p] =
                Layout::vertical([Constraint::Length(rows), Constraint::Min(0)]).areas(body);
            (l, p)
        }
    };
    draw_query(frame, picker, look, query);
    draw_status(frame, picker, look, status);
    picker.follow(usize::from(list.height));
    draw_list(frame, picker, look, list);
    draw_preview(frame, picker, look, preview, area.width >= SIDE_BY_SIDE);
    draw_keys(frame, look, keys);
}

fn draw_query(frame: &mut Frame, picker: &Picker, look: &Look, area: Rect) {
    let prompt = "> ";
    let mode = match picker.mode {
        Mode::Ranked => "ranked",
        Mode::Literal => "literal",
    };
    let scope = picker
        .scopes
        .get(picker.scope)
        .map_or("every session", |s| s.label.as_str());
    let right = format!(" {mode} · {scope} ");
    let width = usize::from(area.width);
    let room = width.saturating_sub(screen::columns(&right) + prompt.len() + 1);
    // The end of a long query stays in view, where the person types.
    let shown = tail(&picker.query, room);
    let used = prompt.len() + screen::columns(&shown);
    let gap = width.saturating_sub(used + screen::columns(&right));
    let line = Line::from(vec![
        Span::styled(prompt, look.style(Color::Cyan).add_modifier(Modifier::BOLD)),
        Span::raw(shown),
        Span::raw(" ".repeat(gap)),
        Span::styled(right, look.dim()),
    ]);
    frame.render_widget(Paragraph::new(line), area);
    let x = area.x + u16::try_from(used).unwrap_or(area.width).min(area.width);
    frame.set_cursor_position((x.min(area.right().saturating_sub(1)), area.y));
}

fn draw_status(frame: &mut Frame, picker: &Picker, look: &Look, area: Rect) {
    let text = match (&picker.flash, picker.answered) {
        (Some(flash), _) => flash.clone(),
        (None, false) => "searching…".to_string(),
        (None, true) if picker.rows.is_empty() && picker.done => match picker.query.trim() {
            "" => format!("no sessions · {}", picker.status),
            _ => format!("no matching sessions · {}", picker.status),
        },
        (None, true) => picker.status.clone(),
    };
    let width = usize::from(area.width);
    let line = Line::from(Span::styled(
        screen::one_line(&format!("  {text}"), None, width),
        look.dim(),
    ));
    frame.render_widget(Paragraph::new(line), area);
}

fn draw_list(frame: &mut Frame, picker: &Picker, look: &Look, area: Rect) {
    let width = usize::from(area.width);
    let lines: Vec<Line> = picker
        .rows
        .iter()
        .enumerate()
        .skip(picker.top)
        .take(usize::from(area.height))
        .map(|(i, row)| row_line(row, i == picker.selected, width, look))
        .collect();
    frame.render_widget(Paragraph::new(lines), area);
}

/// One session on one line: age, agent, short id, place, what it is about, hits.
fn row_line(row: &Row, selected: bool, width: usize, look: &Look) -> Line<'static> {
    let (agent, id) = row.agent_and_id();
    let short: String = id.chars().take(8).collect();
    let age = row
        .last
        .map(|t| look.clock.age(t).replace(" ago", ""))
        .unwrap_or_default();
    let count = match (row.hits, row.events) {
        (Some(1), _) => "1 hit".to_string(),
        (Some(n), _) => format!("{n} hits"),
        (None, Some(n)) => format!("{n} ev"),
        _ => String::new(),
    };
    let mark = if selected { "▌" } else { " " };
    let lead = format!("{mark}{age:>4} {agent:<6} {short:<8} ");
    let cwd = row.cwd.as_deref().map(|c| look.tilde(c));
    let place_room = (width / 4).clamp(8, 40);
    let place = place(cwd.as_deref(), row.branch.as_deref(), place_room);
    let fixed = screen::columns(&lead) + screen::columns(&place) + 2 + 1 + count.len() + 1;
    let about_room = width.saturating_sub(fixed);
    let about = match about_room {
        0 => String::new(),
        n => screen::one_line(&row.about, None, n),
    };
    let gap = width.saturating_sub(fixed + screen::columns(&about)) + 1;
    let base = match selected {
        true => Style::new().add_modifier(Modifier::REVERSED),
        false => Style::new(),
    };
    let mut spans = vec![
        Span::styled(lead, base),
        Span::styled(place, base.patch(look.style(Color::Blue))),
        Span::styled("  ", base),
        Span::styled(about, base),
        Span::styled(" ".repeat(gap), base),
        Span::styled(format!("{count} "), base.patch(look.style(Color::Cyan))),
    ];
    if width < screen::columns(&spans.iter().map(|s| s.content.as_ref()).collect::<String>()) {
        spans.truncate(4);
    }
    Line::from(spans)
}

/// A directory's last components and its branch, in `room` columns.
fn place(cwd: Option<&str>, branch: Option<&str>, room: usize) -> String {
    let whole = match (cwd, branch) {
        (Some(c), Some(b)) => format!("{c} ({b})"),
        (Some(c), None) => c.to_string(),
        (None, Some(b)) => format!("({b})"),
        (None, None) => String::new(),
    };
    let text = match screen::columns(&whole) <= room {
        true => whole,
        false => {
            let branch = branch.map(|b| screen::one_line(b, None, room / 3));
            let rest = room.saturating_sub(branch.as_ref().map_or(0, |b| screen::columns(b) + 3));
            let cwd = cwd.map(|c| format!("…{}", tail(c, rest.saturating_sub(1))));
            match (cwd, branch) {
                (Some(c), Some(b)) => format!("{c} ({b})"),
                (Some(c), None) => c,
                (None, Some(b)) => format!("({b})"),
                (None, None) => String::new(),
            }
        }
    };
    let pad = room.saturating_sub(screen::columns(&text));
    text + &" ".repeat(pad)
}

/// The end of `text` that takes at most `cols` columns.
fn tail(text: &str, cols: usize) -> String {
    let mut used = 0;
    let mut start = text.len();
    for (i, c) in text.char_indices().rev() {
        let w = screen::columns(&c.to_string());
        if used + w > cols {
            break;
        }
        used += w;
        start = i;
    }
    text[start..].to_string()
}

fn draw_preview(frame: &mut Frame, picker: &Picker, look: &Look, area: Rect, beside: bool) {
    if area.height == 0 {
        return;
    }
    let rule = match beside {
        true => None,
        false => Some(Line::from(Span::styled(
            "─".repeat(usize::from(area.width)),
            look.dim(),
        ))),
    };
    let mut lines: Vec<Line> = rule.into_iter().collect();
    let width = usize::from(area.width).saturating_sub(usize::from(beside));
    match picker.chosen() {
        Some(row) => lines.extend(preview(row, look, width)),
        None if picker.answered && picker.done => lines.push(Line::from(Span::styled(
            match picker.query.trim().is_empty() {
                true => "No sessions here: Tab for another scope.",
                false => {
                    "Nothing matched: other words, Ctrl-T for literal text, Tab for another scope."
                }
            },
            look.dim(),
        ))),
        None => {}
    }
    let area = match beside {
        true => Rect {
            x: area.x + 1,
            width: area.width.saturating_sub(1),
            ..area
        },
        false => area,
    };
    let paragraph = Paragraph::new(Text::from(lines))
        .wrap(Wrap { trim: false })
        .scroll((picker.scroll, 0));
    frame.render_widget(paragraph, area);
}

/// The selected session's header and its best hits.
fn preview(row: &Row, look: &Look, width: usize) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    let bold = Style::new().add_modifier(Modifier::BOLD);
    lines.push(Line::from(vec![
        Span::styled(row.session.clone(), bold.patch(look.style(Color::Magenta))),
        Span::raw("  "),
        Span::styled(screen::one_line(&row.about, None, 200), bold),
    ]));
    let cwd = row.cwd.as_deref().map(|c| look.tilde(c));
    let place = match (cwd, row.branch.as_deref()) {
        (Some(c), Some(b)) => format!("{c} ({b})"),
        (Some(c), None) => c,
        (None, Some(b)) => format!("({b})"),
        (None, None) => "(no directory recorded)".into(),
    };
    lines.push(Line::from(Span::styled(place, look.style(Color::Blue))));
    let mut when = Vec::new();
    let (first_name, last_name) = match row.hits {
        Some(_) => ("first hit", "latest hit"),
        None => ("started", "last active"),
    };
    if let Some(t) = row.first {
        when.push(format!("{first_name} {}", look.clock.when(t)));
    }
    if let Some(t) = row.last.filter(|t| Some(*t) != row.first) {
        when.push(format!("{last_name} {}", look.clock.when(t)));
    }
    match (row.hits, row.events) {
        (Some(n), _) => when.push(format!("{n} hit{}", if n == 1 { "" } else { "s" })),
        (None, Some(n)) => when.push(format!("{n} events")),
        _ => {}
    }
    lines.push(Line::from(Span::styled(when.join(" · "), look.dim())));
    if let Some(cmd) = &row.resume {
        let shown = screen::shorten(cmd, width.saturating_sub(2).max(20), look.home.as_deref());
        lines.push(Line::from(vec![
            Span::styled("→ ", look.style(Color::Yellow)),
            Span::styled(shown, look.style(Color::Yellow)),
        ]));
    }
    for s in &row.snippets {
        lines.push(Line::raw(""));
        lines.extend(snippet(s, look));
    }
    lines
}

/// A hit: a line that says where it is, then its text with the matches highlighted.
fn snippet(s: &Snippet, look: &Look) -> Vec<Line<'static>> {
    let mut head = format!("seq {} · {}", s.seq, s.role.as_str());
    if let Some(t) = s.time {
        head.push_str(" · ");
        head.push_str(&look.clock.when(t));
    }
    let mut lines = vec![Line::from(Span::styled(head, look.dim()))];
    let mut spans: Vec<(usize, usize)> = s
        .spans
        .iter()
        .copied()
        .filter(|&(a, b)| a < b && b <= s.text.len())
        .filter(|&(a, b)| s.text.is_char_boundary(a) && s.text.is_char_boundary(b))
        .collect();
    spans.sort_unstable();
    // The text line by line, each line's matches painted; tabs as spaces, other controls out.
    let mut at = 0;
    for (n, raw) in s.text.split('\n').enumerate() {
        if n >= PREVIEW_LINES {
            lines.push(Line::from(Span::styled("⋯", look.dim())));
            break;
        }
        let start = at;
        at += raw.len() + 1;
        let mut parts = Vec::new();
        let mut from = 0;
        for &(a, b) in &spans {
            let (a, b) = (a.max(start), b.min(start + raw.len()));
            if a >= b || a < start + from {
                continue;
            }
            parts.push(Span::raw(clean(&raw[from..a - start])));
            parts.push(Span::styled(
                clean(&raw[a - start..b - start]),
                look.matched(),
            ));
            from = b - start;
        }
        parts.push(Span::raw(clean(&raw[from..])));
        lines.push(Line::from(parts));
    }
    lines
}

/// How many lines of a hit's text the preview shows.
const PREVIEW_LINES: usize = 40;

/// `text` without what would move the cursor: tabs as spaces, other control characters out.
fn clean(text: &str) -> String {
    text.chars()
        .filter_map(|c| match c {
            '\t' => Some(' '),
            c if c.is_control() => None,
            c => Some(c),
        })
        .collect()
}

fn draw_keys(frame: &mut Frame, look: &Look, area: Rect) {
    let width = usize::from(area.width);
    let mut text = String::new();
    for k in KEYS {
        let next = match text.is_empty() {
            true => format!(" {k}"),
            false => format!(" · {k}"),
        };
        if screen::columns(&text) + screen::columns(&next) > width {
            break;
        }
        text.push_str(&next);
    }
    frame.render_widget(
        Paragraph::new(Line::from(Span::styled(text, look.dim()))),
        area,
    );
}
