//! The two renderers, text and JSON, of the pages history-core answers with; and of errors.

use std::fmt::Write as _;

use serde::Serialize;

use history_core::page::{FoldedRun, Item, ListPage, ReadPage, Render};
use history_core::HistoryError;

/// A renderer of pages that also renders errors.
pub trait Printer: Render {
    /// An error, as the command prints it.
    fn error(&self, error: &HistoryError) -> String;

    /// A list page as the command prints it: the results for standard output, and what it says
    /// about them (notices, that nothing matched) for standard error, so that a pipe gets
    /// results only. The default keeps everything in the results.
    fn list_streams(&self, doc: &ListPage) -> (String, String) {
        (self.list(doc), String::new())
    }

    /// [`Printer::list_streams`] for a read page.
    fn read_streams(&self, doc: &ReadPage) -> (String, String) {
        (self.read(doc), String::new())
    }
}

/// The default, human-readable printer.
pub struct Text;

/// The `--json` printer: one object, `schema_version` 1.
pub struct Json;

fn compact<T: Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

fn fold_line(folded: &FoldedRun) -> String {
    let fold = &folded.run;
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
        compact(&folded.expand)
    )
}

fn header(item: &Item, implicit: bool) -> String {
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

fn detail(item: &Item) -> String {
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

impl Render for Text {
    fn item(&self, item: &Item, implicit: bool) -> String {
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

    fn list(&self, doc: &ListPage) -> String {
        let mut s = String::new();
        if let Some(notice) = &doc.notice {
            let _ = writeln!(s, "notice: {notice}\n");
        }
        s.push_str(&self.list_results(doc));
        s.push_str(empty_line(doc));
        s
    }

    fn read(&self, doc: &ReadPage) -> String {
        let mut s = String::new();
        if let Some(notice) = &doc.notice {
            let _ = writeln!(s, "notice: {notice}\n");
        }
        if doc.item.is_none() {
            s.push_str(NO_EVENT);
            s.push('\n');
        }
        s.push_str(&self.read_results(doc));
        s
    }
}

/// What a list page says when nothing matched.
fn empty_line(doc: &ListPage) -> &'static str {
    if doc.items.is_empty() && doc.folded_after.is_none() && !doc.no_sessions {
        "no matching events\n"
    } else {
        ""
    }
}

/// What a read page says when the event is not there.
const NO_EVENT: &str = "no event at that seq and part\n";

impl Text {
    /// A list page's items, folded runs, recipes and footers: everything but what it says
    /// about them.
    fn list_results(&self, doc: &ListPage) -> String {
        let mut s = String::new();
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
        let paged = doc.older.is_some() || doc.newer.is_some();
        if doc.budget_cut {
            let _ = writeln!(
                s,
                "→ the output budget ended this page: follow a recipe, or raise --budget"
            );
        } else if doc.session.is_none() && !paged && (doc.has_older || doc.has_newer) {
            let side = if doc.has_older { "older" } else { "newer" };
            let _ = writeln!(
                s,
                "→ more {side} sessions: narrow with --session, --role, --since/--until, or raise --limit"
            );
        }
        s
    }

    /// A read page's event and recipes.
    fn read_results(&self, doc: &ReadPage) -> String {
        let mut s = String::new();
        if let Some(item) = &doc.item {
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
        if let Some(next) = &doc.next {
            let _ = writeln!(s, "→ continue: {}", compact(next));
        }
        let _ = writeln!(s, "→ neighborhood: {}", compact(&doc.neighborhood));
        s
    }
}

impl Printer for Text {
    fn error(&self, error: &HistoryError) -> String {
        format!("error: {} ({})\n", error, error.code())
    }

    fn list_streams(&self, doc: &ListPage) -> (String, String) {
        let mut said = notice_line(doc.notice.as_deref());
        said.push_str(empty_line(doc));
        (self.list_results(doc), said)
    }

    fn read_streams(&self, doc: &ReadPage) -> (String, String) {
        let mut said = notice_line(doc.notice.as_deref());
        if doc.item.is_none() {
            said.push_str(NO_EVENT);
        }
        (self.read_results(doc), said)
    }
}

/// A notice as standard error carries it.
fn notice_line(notice: Option<&str>) -> String {
    notice.map_or_else(String::new, |n| format!("notice: {n}\n"))
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

impl Render for Json {
    fn item(&self, item: &Item, _implicit: bool) -> String {
        compact(item) + ","
    }

    fn list(&self, doc: &ListPage) -> String {
        compact(doc) + "\n"
    }

    fn read(&self, doc: &ReadPage) -> String {
        compact(doc) + "\n"
    }
}

impl Printer for Json {
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
