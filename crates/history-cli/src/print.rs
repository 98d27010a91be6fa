//! The two printers, text and JSON, over the same views; and fitting a view into the budget.

use std::fmt::Write as _;

use serde::Serialize;

use history_core::budget::{admit, cut};
use history_core::paging::From;
use history_core::HistoryError;

use crate::view::{FoldView, ItemView, ListDoc, ReadDoc, Recipe};

/// Renders views as text or JSON.
pub trait Printer {
    /// One list item (its folded run included), as it appears in the list output.
    fn item(&self, item: &ItemView, implicit: bool) -> String;
    /// The whole `list` output.
    fn list(&self, doc: &ListDoc) -> String;
    /// The whole `read` output.
    fn read(&self, doc: &ReadDoc) -> String;
    /// An error.
    fn error(&self, error: &HistoryError) -> String;
}

/// The default, human-readable printer.
pub struct Text;

/// The `--json` printer: one object, `schema_version` 1.
pub struct Json;

fn compact<T: Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

fn fold_line(fold: &FoldView) -> String {
    let roles: Vec<&str> = fold.roles.iter().map(|r| r.as_str()).collect();
    let range = if fold.first_seq == fold.last_seq {
        format!("seq {}", fold.first_seq)
    } else {
        format!("seq {}–{}", fold.first_seq, fold.last_seq)
    };
    let mut what = roles.join(", ");
    if !fold.tools.is_empty() {
        let _ = write!(what, "; {}", fold.tools.join(", "));
    }
    format!(
        "  ⋯ {} folded ({range}: {what}) → expand: {}\n\n",
        fold.count,
        compact(&fold.expand)
    )
}

fn header(item: &ItemView, implicit: bool) -> String {
    let mut h = String::new();
    if !implicit {
        let _ = write!(h, "session {} | ", item.session);
    }
    let _ = write!(h, "seq {}", item.event.seq);
    if item.event.part > 0 {
        let _ = write!(h, " | part {}", item.event.part);
    }
    let _ = write!(h, " | {}", item.event.role);
    h
}

fn detail(item: &ItemView) -> String {
    let mut d = match item.event.timestamp {
        Some(t) => t.to_string(),
        None => "(no time)".to_string(),
    };
    let _ = write!(d, " · {}", item.event.kind);
    if let Some(tool) = &item.event.tool {
        let _ = write!(d, " · {tool}");
    }
    if item.event.on_active_branch == Some(false) {
        d.push_str(" · off the active branch");
    }
    d
}

impl Printer for Text {
    fn item(&self, item: &ItemView, implicit: bool) -> String {
        let mut s = String::new();
        if let Some(fold) = &item.folded_before {
            s.push_str(&fold_line(fold));
        }
        let _ = write!(
            s,
            "{}\n{}\n{}\n\n",
            header(item, implicit),
            detail(item),
            item.event.text
        );
        s
    }

    fn list(&self, doc: &ListDoc) -> String {
        let mut s = String::new();
        if let Some(notice) = &doc.notice {
            let _ = writeln!(s, "notice: {notice}\n");
        }
        for item in &doc.items {
            s.push_str(&self.item(item, doc.implicit));
        }
        if let Some(fold) = &doc.folded_after {
            s.push_str(&fold_line(fold));
        }
        if let Some(r) = &doc.older {
            let _ = writeln!(s, "→ older: {}", compact(r));
        }
        if let Some(r) = &doc.newer {
            let _ = writeln!(s, "→ newer: {}", compact(r));
        }
        if doc.session.is_none() && (doc.has_older || doc.has_newer) {
            let side = if doc.has_older { "older" } else { "newer" };
            let _ = writeln!(
                s,
                "→ more {side} results: narrow with --session, --query, --role, --since/--until, or raise --limit"
            );
        }
        if doc.items.is_empty() && doc.folded_after.is_none() && !doc.no_sessions {
            s.push_str("no matching events\n");
        }
        s
    }

    fn read(&self, doc: &ReadDoc) -> String {
        let mut s = String::new();
        if let Some(notice) = &doc.notice {
            let _ = writeln!(s, "notice: {notice}\n");
        }
        match &doc.item {
            Some(item) => {
                let mut d = detail(item);
                if doc.parts > 1 {
                    let _ = write!(d, " · part {} of {}", item.event.part, doc.parts);
                }
                if doc.offset_chars > 0 {
                    let _ = write!(d, " · from character {}", doc.offset_chars);
                }
                let _ = write!(
                    s,
                    "{}\n{d}\n{}\n\n",
                    header(item, doc.implicit),
                    item.event.text
                );
            }
            None => s.push_str("no event at that seq and part\n\n"),
        }
        if let Some(next) = &doc.next {
            let _ = writeln!(s, "→ continue: {}", compact(next));
        }
        let _ = writeln!(s, "→ neighborhood: {}", compact(&doc.neighborhood));
        s
    }

    fn error(&self, error: &HistoryError) -> String {
        format!("error: {} ({})\n", error, error.code())
    }
}

#[derive(Serialize)]
struct ErrorDoc<'a> {
    error: ErrorBody<'a>,
}

#[derive(Serialize)]
struct ErrorBody<'a> {
    code: &'a str,
    message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    candidates: Option<&'a [String]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    session: Option<&'a str>,
}

impl Printer for Json {
    fn item(&self, item: &ItemView, _implicit: bool) -> String {
        compact(item) + ","
    }

    fn list(&self, doc: &ListDoc) -> String {
        compact(doc) + "\n"
    }

    fn read(&self, doc: &ReadDoc) -> String {
        compact(doc) + "\n"
    }

    fn error(&self, error: &HistoryError) -> String {
        let (candidates, session) = match error {
            HistoryError::AmbiguousSession { candidates, .. } => {
                (Some(candidates.as_slice()), None)
            }
            HistoryError::HistoryUnavailable { session, .. } => (None, Some(session.as_str())),
            _ => (None, None),
        };
        compact(&ErrorDoc {
            error: ErrorBody {
                code: error.code(),
                message: error.to_string(),
                candidates,
                session,
            },
        }) + "\n"
    }
}

/// Room kept for recipe numbers that are filled in after admission.
const FRAME_SLACK: usize = 96;

/// Admits the doc's items from the end `from` names until the output would exceed `budget`,
/// cutting one long text to fit where that is worth it. With `fair_share` (results from many
/// sessions), a text longer than its share of the room is cut first, so that one long event
/// does not crowd out every other hit.
pub fn fit_list(
    doc: &mut ListDoc,
    printer: &dyn Printer,
    budget: usize,
    from: From,
    fair_share: bool,
) -> (bool, bool) {
    let mut items = std::mem::take(&mut doc.items);
    let frame = printer.list(doc).len() + FRAME_SLACK;
    let implicit = doc.implicit;
    let cost = |i: &ItemView| printer.item(i, implicit).len();
    let room = budget.saturating_sub(frame);
    if fair_share && !items.is_empty() {
        let share = (room / items.len()).max(MIN_SHARE);
        for item in &mut items {
            if cost(item) > share {
                shrink(item, share, cost);
            }
        }
    }
    let admitted = admit(&mut items, from, room, cost, |i, room| {
        shrink(i, room, cost)
    });
    doc.items = items;
    (admitted.dropped_older, admitted.dropped_newer)
}

/// The least room a hit's share of the budget gets.
const MIN_SHARE: usize = 600;

/// How much text before a match stays in view when a long hit is cut.
const LEAD: usize = 160;

/// Cuts an item's text until its rendering fits in `room`; false if even an empty text won't.
/// A search hit keeps its match in view: the text then starts a little before it.
fn shrink(item: &mut ItemView, room: usize, cost: impl Fn(&ItemView) -> usize) -> bool {
    let original = std::mem::take(&mut item.event.text);
    let full = match item.focus.filter(|f| *f > LEAD) {
        Some(focus) => {
            let mut start = focus - LEAD;
            while !original.is_char_boundary(start) {
                start += 1;
            }
            format!("…{}", &original[start..])
        }
        None => original.clone(),
    };
    item.truncated = true;
    let overhead = cost(item) + history_core::budget::CUT_MARKER.len();
    if overhead >= room {
        item.event.text = original;
        item.truncated = false;
        return false;
    }
    let mut allowed = room - overhead;
    loop {
        let mut text = full.clone();
        cut(&mut text, allowed + history_core::budget::CUT_MARKER.len());
        item.event.text = text;
        let c = cost(item);
        if c <= room || allowed == 0 {
            return c <= room;
        }
        allowed = allowed.saturating_sub((c - room).max(allowed / 8).max(1));
    }
}

/// Cuts the read item's text so the output fits in `budget`; returns how many characters of it
/// are shown.
pub fn fit_read(doc: &mut ReadDoc, printer: &dyn Printer, budget: usize) -> Option<usize> {
    let full_len = doc.item.as_ref()?.event.text.chars().count();
    if printer.read(doc).len() + FRAME_SLACK <= budget {
        return None;
    }
    let item = doc.item.as_mut()?;
    let full = std::mem::take(&mut item.event.text);
    item.truncated = true;
    doc.next = Some(Recipe::default());
    let overhead = printer.read(doc).len() + FRAME_SLACK;
    let mut allowed = budget.saturating_sub(overhead);
    loop {
        let shown: String = take_bytes(&full, allowed);
        let chars = shown.chars().count();
        if let Some(item) = doc.item.as_mut() {
            item.event.text = shown;
        }
        let total = printer.read(doc).len() + FRAME_SLACK;
        if total <= budget || allowed == 0 {
            return Some(chars.min(full_len));
        }
        allowed = allowed.saturating_sub((total - budget).max(allowed / 8).max(1));
    }
}

fn take_bytes(s: &str, max: usize) -> String {
    let mut end = max.min(s.len());
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s[..end].to_string()
}
