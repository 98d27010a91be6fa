//! The two renderers, text and JSON, of the pages history-core answers with; and of errors.

use std::fmt::Write as _;

use serde::Serialize;

use history_core::Resume;
use history_core::{
    Explain, FindPage, FoldedRun, FoundHit, FoundSession, Item, ListPage, ReadPage, Recipe, Render,
    RenderFind, RenderSessions, SessionMatch, SessionsPage,
};
use history_core::{Filter, HistoryError, Timestamp};

use crate::command_line;
use crate::screen::{self, Clock, Paint};

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

/// How text output lays out items.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Layout {
    /// A block per item: a header line, a detail line and the text.
    #[default]
    Blocks,
    /// A line per item (per session, in the overview), its text cut to the rest of the line.
    Lines,
}

/// The human-readable printer. Its default is the plain text that scripts and
/// snapshot tests read; a person at a terminal gets color, local times and lines.
#[derive(Clone, Debug, Default)]
pub struct Text {
    /// The words every command-line recipe starts with: the program, then the flags of this run
    /// that a recipe must repeat to mean the same (the roots). Empty: the program alone.
    pub prefix: Vec<String>,
    /// How events are laid out (a browse or a search).
    pub layout: Layout,
    /// How what stands for a whole session is laid out: the overview's representatives and a
    /// session-level search's sessions.
    pub sessions_layout: Layout,
    /// Whether to color the output (and highlight the matches of `filter`).
    pub color: bool,
    /// Local times with their age, rather than UTC as the transcripts store them.
    pub clock: Option<Clock>,
    /// How many columns a line may take, where known.
    pub width: Option<usize>,
    /// How many rows a block's text may take (a terminal's height), where it is cut to them.
    pub height: Option<usize>,
    /// How many lines of a hit's text to show before and after its match, in lines.
    pub context: Option<usize>,
    /// Whether every item and session also names its transcript file.
    pub show_path: bool,
    /// The search whose matches are highlighted.
    pub filter: Option<Filter>,
    /// The home directory, which lines write as `~` where a directory lies in it.
    pub home: Option<String>,
    /// For an agent over MCP: recipes as the tool calls to make
    /// (`history_list({"session":…,"before_seq":40})`), with these arguments added to each (the
    /// budget and verbosity the page was asked with), and footers in the tools' terms.
    pub calls: Option<serde_json::Map<String, serde_json::Value>>,
}

/// The width lines are cut to when the terminal's is not known.
const DEFAULT_WIDTH: usize = 120;

/// How many characters of a session id a line shows.
const SHORT_ID: usize = 8;

/// How many columns a row keeps for its description at least.
const MIN_TEXT: usize = 20;

/// How many columns a next step must leave the description to share its line.
const SHARED_TEXT: usize = 30;

/// A next step a row standing for a session ends with.
enum Step {
    /// The command that reopens the session in its agent.
    Resume(String),
    /// A recipe, by name.
    Recipe(&'static str, String),
    /// The session's transcript file.
    File(String),
}

impl Step {
    /// The step as text.
    fn plain(&self) -> String {
        match self {
            Step::Resume(cmd) => format!("→ {cmd}"),
            Step::Recipe(name, cmd) => format!("→ {name}: {cmd}"),
            Step::File(path) => format!("file: {path}"),
        }
    }
}

/// A command line that starts `lead` columns in, broken where it would pass `width` columns
/// into lines that a shell reads as one: each but the last ends with ` \`, and the next is
/// indented. Only at spaces between words, never inside quotes; a word longer than a line
/// stays whole.
fn wrapped(command: &str, lead: usize, width: usize) -> String {
    const INDENT: &str = "    ";
    if lead + screen::columns(command) <= width {
        return command.to_string();
    }
    let mut words: Vec<&str> = Vec::new();
    let (mut start, mut quote) = (0, None);
    for (i, c) in command.char_indices() {
        match (c, quote) {
            ('\'' | '"', None) => quote = Some(c),
            (q, Some(open)) if q == open => quote = None,
            (' ', None) => {
                words.push(&command[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    words.push(&command[start..]);
    let mut out = String::new();
    let mut used = lead;
    for (n, word) in words.iter().enumerate() {
        let cols = screen::columns(word);
        if n > 0 {
            // Room for the word and, after it, the ` \` that would carry on to a next line.
            if used + 1 + cols + 2 > width {
                out.push_str(" \\\n");
                out.push_str(INDENT);
                used = INDENT.len();
            } else {
                out.push(' ');
                used += 1;
            }
        }
        out.push_str(word);
        used += cols;
    }
    out
}

/// The start of `text` that takes at most `width` columns.
fn head_columns(text: &str, width: usize) -> &str {
    let mut cols = 0;
    for (i, c) in text.char_indices() {
        cols += screen::columns(&c.to_string());
        if cols > width {
            return &text[..i];
        }
    }
    text
}

/// The end of `text` that takes at most `width` columns.
fn tail_columns(text: &str, width: usize) -> &str {
    let mut cols = 0;
    let mut start = text.len();
    for (i, c) in text.char_indices().rev() {
        cols += screen::columns(&c.to_string());
        if cols > width {
            break;
        }
        start = i;
    }
    &text[start..]
}

/// The `--json` printer: one object, `schema_version` 1.
pub struct Json;

/// The JSON printer's compact form of a value.
fn compact<T: Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

impl Text {
    fn layout_of(&self, item: &Item) -> Layout {
        match item.representative {
            true => self.sessions_layout,
            false => self.layout,
        }
    }

    fn paint(&self, paint: Paint, text: &str) -> String {
        screen::paint(self.color, paint, text)
    }

    /// A recipe as the command line a person pastes (JSON keeps the selector objects), or for
    /// an agent the tool call to make.
    fn recipe(&self, recipe: &Recipe) -> String {
        match &self.calls {
            Some(extra) => command_line::call(recipe, extra),
            None => command_line::recipe(&self.prefix, recipe),
        }
    }

    /// What a footer says: in the command line's words, or for an agent in the tools'.
    fn says<'s>(&self, cli: &'s str, tools: &'s str) -> &'s str {
        match self.calls {
            Some(_) => tools,
            None => cli,
        }
    }

    /// A next step: `→ name: what`, on a line of its own.
    fn step(&self, name: &str, what: &str) -> String {
        let label = format!("→ {name}:");
        // Broken into lines only for a person (who has a clock): a script reads one a line.
        let what = match self.width {
            Some(width) if self.calls.is_none() && self.clock.is_some() => {
                wrapped(what, screen::columns(&label) + 1, width)
            }
            _ => what.to_string(),
        };
        format!("{} {what}\n", self.paint(Paint::Recipe, &label))
    }

    /// The next steps that end a block standing for a session, or an item with its file.
    fn trailer(&self, resume: Option<&Resume>, path: Option<&str>, line: Option<u64>) -> String {
        let mut s = String::new();
        if let Some(r) = resume {
            s.push_str(&self.step("resume", &command_line::resume(r)));
        }
        if let Some(p) = path.filter(|_| self.show_path) {
            let at = line.map(|l| format!("{p}:{l}")).unwrap_or_else(|| p.into());
            s.push_str(&self.step("file", &at));
        }
        s
    }

    fn when(&self, t: Option<Timestamp>) -> String {
        match (t, &self.clock) {
            (None, _) => "(no time)".to_string(),
            (Some(t), Some(clock)) => clock.when(t),
            (Some(t), None) => t.to_string(),
        }
    }

    /// A time as short as a line wants it: its age for a person, else as every time is written
    /// where it is not for a person (RFC 3339, UTC).
    fn short_when(&self, t: Option<Timestamp>) -> String {
        match (t, &self.clock) {
            (None, _) => "untimed".to_string(),
            (Some(t), Some(clock)) => clock.age(t),
            (Some(t), None) => t.to_string(),
        }
    }

    fn fold_line(&self, folded: &FoldedRun) -> String {
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
        let end = match self.layout {
            Layout::Blocks => "\n\n",
            Layout::Lines => "\n",
        };
        format!(
            "  {} {} {}{end}",
            self.paint(
                Paint::Dim,
                &format!("⋯ {} folded ({range}: {what})", fold.count)
            ),
            self.paint(Paint::Recipe, "→ expand:"),
            self.recipe(&folded.expand),
        )
    }

    fn header(&self, item: &Item, implicit: bool) -> String {
        let mut h = String::new();
        if !implicit {
            let _ = write!(
                h,
                "session {} | ",
                self.paint(Paint::Session, &item.session)
            );
        }
        let _ = write!(
            h,
            "seq {}",
            self.paint(Paint::Number, &item.event.seq.to_string())
        );
        if item.event.part > 0 {
            let _ = write!(h, " | part {}", item.event.part);
        }
        let role = item.event.role;
        let _ = write!(h, " | {}", self.paint(Paint::Role(role), role.as_str()));
        h
    }

    fn detail(&self, item: &Item) -> String {
        let mut d = self.when(item.event.timestamp);
        let _ = write!(d, " · {}", item.event.kind);
        if let Some(tool) = &item.event.tool {
            let _ = write!(d, " · {tool}");
        }
        if item.event.on_active_branch == Some(false) {
            d.push_str(" · off the active branch");
        }
        self.paint(Paint::Dim, &d)
    }

    fn text(&self, text: &str) -> String {
        screen::highlight(self.color, self.filter.as_ref(), text)
    }

    fn block(&self, item: &Item, implicit: bool) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "{}\n{}", self.header(item, implicit), self.detail(item));
        // On a terminal a block takes a screen at most, with room for the page's last lines.
        let rows = self.height.map(|h| h.saturating_sub(6).max(8));
        let width = self.width.unwrap_or(DEFAULT_WIDTH);
        match rows.map(|r| screen::screenful(&item.event.text, item.focus, r, width)) {
            Some(Some(cut)) => {
                let _ = writeln!(s, "{}", self.text(&cut.text));
                let what = match cut.hidden {
                    0 => "⋯ the line goes on".to_string(),
                    n => format!("⋯ {n} more line{}", plural(n)),
                };
                let read = Recipe {
                    session: (!implicit).then(|| item.session.clone()),
                    seq: Some(item.event.seq),
                    part: Some(item.event.part),
                    ..Recipe::default()
                };
                let _ = writeln!(
                    s,
                    "{} {} {}",
                    self.paint(Paint::Dim, &what),
                    self.paint(Paint::Recipe, "→ read:"),
                    self.recipe(&read)
                );
            }
            _ => {
                let _ = writeln!(s, "{}", self.text(&item.event.text));
            }
        }
        let resume = item.resume.as_ref().filter(|_| item.representative);
        s.push_str(&self.trailer(resume, item.path.as_deref(), item.location.map(|l| l.line)));
        s.push('\n');
        s
    }

    /// The short form of a qualified id, and the full id where that is longer.
    fn short_session(&self, session: &str) -> String {
        let (harness, id) = session.split_once(':').unwrap_or(("", session));
        let short: String = id.chars().take(SHORT_ID).collect();
        format!("{harness} {}", self.paint(Paint::Session, &short))
    }

    /// Where a session ran, as a line shows it in `cols` columns: its directory's last
    /// components (a line has no room for a long one) and its branch.
    fn short_place(&self, cwd: Option<&str>, branch: Option<&str>, cols: usize) -> String {
        let cwd = cwd.map(|c| self.tilde(c));
        let whole = Text::place(cwd.as_deref(), branch);
        if screen::columns(&whole) <= cols {
            return whole;
        }
        // The branch takes a third at most, the directory's end the rest.
        let branch = branch.map(|b| match screen::columns(b) > cols / 3 {
            true => format!("{}…", head_columns(b, (cols / 3).saturating_sub(1))),
            false => b.to_string(),
        });
        let left = cols.saturating_sub(branch.as_deref().map_or(0, |b| screen::columns(b) + 3));
        let cwd = cwd.map(|c| match screen::columns(&c) > left {
            true => format!("…{}", tail_columns(&c, left.saturating_sub(1))),
            false => c,
        });
        Text::place(cwd.as_deref(), branch.as_deref())
    }

    /// `path` with the home directory written `~`.
    fn tilde(&self, path: &str) -> String {
        let rest = self.home.as_deref().and_then(|h| path.strip_prefix(h));
        match rest.filter(|r| r.is_empty() || r.starts_with('/')) {
            Some(rest) => format!("~{rest}"),
            None => path.to_string(),
        }
    }

    /// How many columns a row's place may take beside the rest of its lead (`others`), leaving
    /// its description room.
    fn place_room(&self, others: &[&str]) -> usize {
        let width = self.width.unwrap_or(DEFAULT_WIDTH);
        let used: usize = others.iter().map(|p| screen::columns(&strip(p)) + 2).sum();
        width.saturating_sub(used + 2 + MIN_TEXT).clamp(8, 48)
    }

    /// A row standing for a session: `lead` and as much of `text` as fits, then its next steps
    /// (`→ resume: …`, `→ hits: …`, `file: …`), the first on the same line where it leaves the
    /// text room, the others on lines of their own, indented. On a terminal a step is
    /// shortened to the width (`~`, the middle of long paths, the ends of session ids); with
    /// `--show-path` steps are whole, to be pasted.
    fn row(&self, lead: &str, text: &str, focus: Option<usize>, steps: &[Step]) -> String {
        let width = self.width.unwrap_or(DEFAULT_WIDTH);
        let lead_cols = screen::columns(&strip(lead));
        let mut rest = steps;
        let mut tail = String::new();
        if let Some((first, more)) = steps.split_first() {
            if lead_cols + 2 + SHARED_TEXT + 2 + screen::columns(&first.plain()) <= width {
                tail = self.paint_step(first, &first.plain());
                rest = more;
            }
        }
        let mut s = self.fit_line(lead, text, focus, &tail);
        let room = width.saturating_sub(4);
        let home = self.home.as_deref();
        for step in rest {
            let plain = step.plain();
            // A recipe is pasted as it stands, over several lines if need be; a resume command
            // or a file loses the middle of its paths (whole with --show-path).
            let lines = match (self.show_path, step) {
                (true, _) => vec![plain],
                (false, Step::Recipe(..)) => screen::wrap_command(&plain, room, home),
                (false, _) => vec![screen::shorten(&plain, room, home)],
            };
            for (i, line) in lines.iter().enumerate() {
                let indent = if i == 0 { "    " } else { "      " };
                let _ = writeln!(s, "{indent}{}", self.paint_step(step, line));
            }
        }
        s
    }

    fn paint_step(&self, step: &Step, shown: &str) -> String {
        let paint = match step {
            Step::File(_) => Paint::Dim,
            _ => Paint::Recipe,
        };
        self.paint(paint, shown)
    }

    /// Where a session ran: its directory and branch.
    fn place(cwd: Option<&str>, branch: Option<&str>) -> String {
        match (cwd, branch) {
            (Some(c), Some(b)) => format!("{c} ({b})"),
            (Some(c), None) => c.to_string(),
            (None, Some(b)) => format!("({b})"),
            (None, None) => "-".to_string(),
        }
    }

    /// `lead` and then as much of `text` (one line, its match in view) as fits before `tail`
    /// within the line's width; at least a few words of it.
    fn fit_line(&self, lead: &str, text: &str, focus: Option<usize>, tail: &str) -> String {
        let width = self.width.unwrap_or(DEFAULT_WIDTH);
        let mut used = screen::columns(&strip(lead)) + 2;
        if !tail.is_empty() {
            used += screen::columns(&strip(tail)) + 2;
        }
        let room = width.saturating_sub(used).max(8);
        let shown = screen::one_line(text, focus, room);
        let mut line = format!("{lead}  {}", self.text(&shown));
        if !tail.is_empty() {
            let _ = write!(line, "  {tail}");
        }
        line.push('\n');
        line
    }

    fn line(&self, item: &Item, implicit: bool) -> String {
        // A session's row is as old as its last activity.
        let when = match item.representative {
            true => item.last_activity.or(item.event.timestamp),
            false => item.event.timestamp,
        };
        let mut lead = self.paint(Paint::Dim, &format!("{:>8}", self.short_when(when)));
        if !implicit {
            let _ = write!(lead, "  {}", self.short_session(&item.session));
        }
        let mut steps = Vec::new();
        if item.representative {
            let events = item.session_events.map(|n| {
                format!(
                    "{} event{}",
                    self.paint(Paint::Number, &n.to_string()),
                    plural(n)
                )
            });
            let room = self.place_room(&[&lead, events.as_deref().unwrap_or("")]);
            let place = self.short_place(item.cwd.as_deref(), item.git_branch.as_deref(), room);
            let _ = write!(lead, "  {}", self.paint(Paint::Dim, &place));
            if let Some(events) = events {
                let _ = write!(lead, "  {events}");
            }
            if let Some(r) = item.resume.as_ref() {
                steps.push(Step::Resume(command_line::resume(r)));
            }
        } else {
            let role = item.event.role;
            let _ = write!(
                lead,
                "  seq {} {}",
                self.paint(Paint::Number, &item.event.seq.to_string()),
                self.paint(Paint::Role(role), role.as_str())
            );
            if let Some(n) = self.context {
                return self.lines_around(&lead, item, n);
            }
        }
        if let Some(p) = item.path.as_deref().filter(|_| self.show_path) {
            let at = item
                .location
                .map(|l| format!("{p}:{}", l.line))
                .unwrap_or_else(|| p.into());
            steps.push(Step::File(at));
        }
        // A session's row is described by its title where the transcript gives one, else by
        // its representative event.
        let title = item
            .title
            .as_deref()
            .filter(|t| item.representative && !t.trim().is_empty());
        match title {
            Some(title) => self.row(&lead, title, None, &steps),
            None => self.row(&lead, &item.event.text, item.focus, &steps),
        }
    }
}

impl Text {
    /// A hit as its lead and then the lines of its text around its match, `n` before and `n`
    /// after, each cut to the line's width (`-C N`).
    fn lines_around(&self, lead: &str, item: &Item, n: usize) -> String {
        let mut s = format!("{lead}\n");
        let width = self
            .width
            .unwrap_or(DEFAULT_WIDTH)
            .saturating_sub(4)
            .max(24);
        for (line, focus) in screen::around(&item.event.text, item.focus, n) {
            let _ = writeln!(
                s,
                "    {}",
                self.text(&screen::one_line(line, focus, width))
            );
        }
        s
    }
}

/// The `s` of a plural count.
fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// `text` without its SGR color codes, to count the columns it takes.
fn strip(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("\x1b[") {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        match rest.find('m') {
            Some(end) => rest = &rest[end + 1..],
            None => rest = "",
        }
    }
    out.push_str(rest);
    out
}

impl Render for Text {
    fn item(&self, item: &Item, implicit: bool) -> String {
        let mut s = String::new();
        if let Some(fold) = &item.folded_before {
            s.push_str(&self.fold_line(fold));
        }
        match self.layout_of(item) {
            Layout::Blocks => s.push_str(&self.block(item, implicit)),
            Layout::Lines => s.push_str(&self.line(item, implicit)),
        }
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
            s.push_str(&self.fold_line(fold));
        }
        if doc
            .items
            .last()
            .is_some_and(|i| self.layout_of(i) == Layout::Lines)
        {
            s.push('\n');
        }
        if let Some(r) = &doc.older {
            s.push_str(&self.step("older", &self.recipe(r)));
        }
        if let Some(r) = &doc.newer {
            s.push_str(&self.step("newer", &self.recipe(r)));
        }
        let paged = doc.older.is_some() || doc.newer.is_some();
        if doc.budget_cut {
            let _ = writeln!(
                s,
                "{}",
                self.says(
                    "→ the output budget ended this page: follow a recipe, or raise --budget",
                    "→ the output budget ended this page: follow a recipe, or raise budget"
                )
            );
        } else if doc.session.is_none() && !paged && (doc.has_older || doc.has_newer) {
            let side = if doc.has_older { "older" } else { "newer" };
            let _ = writeln!(
                s,
                "→ more {side} sessions: {}",
                self.says(
                    "narrow with --session, --role, --since/--until, or raise --limit",
                    "narrow with session, roles, since/until, or raise limit"
                )
            );
        }
        if doc.session.is_some() {
            s.push_str(&self.trailer(doc.resume.as_ref(), None, None));
        }
        s
    }

    /// A read page's event and recipes.
    fn read_results(&self, doc: &ReadPage) -> String {
        let mut s = String::new();
        if let Some(item) = &doc.item {
            let mut d = self.detail(item);
            if doc.parts > 1 {
                let _ = write!(d, " · part {} of {}", item.event.part, doc.parts);
            }
            if doc.offset_chars > 0 {
                let _ = write!(d, " · from character {}", doc.offset_chars);
            }
            let _ = write!(
                s,
                "{}\n{d}\n{}\n\n",
                self.header(item, doc.implicit),
                item.event.text
            );
        }
        if let Some(next) = &doc.next {
            s.push_str(&self.step("continue", &self.recipe(next)));
        }
        s.push_str(&self.step("neighborhood", &self.recipe(&doc.neighborhood)));
        if let Some(item) = &doc.item {
            s.push_str(&self.trailer(
                item.resume.as_ref(),
                item.path.as_deref(),
                item.location.map(|l| l.line),
            ));
        }
        s
    }
}

impl RenderSessions for Text {
    fn session(&self, m: &SessionMatch) -> String {
        let place = Text::place(m.cwd.as_deref(), m.git_branch.as_deref());
        let count = format!("{}{}", m.hits, if m.more_hits { "+" } else { "" });
        let hits = format!(
            "{} hit{}",
            self.paint(Paint::Number, &count),
            if m.hits == 1 && !m.more_hits { "" } else { "s" }
        );
        match self.sessions_layout {
            Layout::Blocks => {
                let mut s = format!(
                    "session {} | {hits} | {}\n",
                    self.paint(Paint::Session, &m.session),
                    self.paint(Paint::Dim, &place)
                );
                let span = match (m.first_hit, m.last_hit) {
                    (Some(a), Some(b)) if a != b => {
                        format!("{} – {}", self.when(Some(a)), self.when(Some(b)))
                    }
                    (_, last) => self.when(last),
                };
                let _ = writeln!(s, "{}", self.paint(Paint::Dim, &span));
                let _ = writeln!(s, "{}", self.header(&m.best, true));
                let _ = writeln!(s, "{}", self.text(&m.best.event.text));
                s.push_str(&self.step("hits", &self.recipe(&m.list)));
                s.push_str(&self.step("read", &self.recipe(&m.read)));
                s.push_str(&self.trailer(m.resume.as_ref(), m.path.as_deref(), None));
                s.push('\n');
                s
            }
            Layout::Lines => {
                let mut lead =
                    self.paint(Paint::Dim, &format!("{:>8}", self.short_when(m.last_hit)));
                let _ = write!(lead, "  {}", self.short_session(&m.session));
                let (first, last) = (self.short_when(m.first_hit), self.short_when(m.last_hit));
                let mut count = hits;
                if m.first_hit.is_some() && first != last {
                    let _ = write!(
                        count,
                        " {}",
                        self.paint(Paint::Dim, &format!("since {first}"))
                    );
                }
                let room = self.place_room(&[&lead, &count]);
                let place = self.short_place(m.cwd.as_deref(), m.git_branch.as_deref(), room);
                let _ = write!(lead, "  {}  {count}", self.paint(Paint::Dim, &place));
                let mut steps = Vec::new();
                if let Some(r) = m.resume.as_ref() {
                    steps.push(Step::Resume(command_line::resume(r)));
                }
                steps.push(Step::Recipe("read", self.recipe(&m.read)));
                steps.push(Step::Recipe("hits", self.recipe(&m.list)));
                if let Some(p) = m.path.as_deref().filter(|_| self.show_path) {
                    steps.push(Step::File(p.to_string()));
                }
                self.row(&lead, &m.best.event.text, m.best.focus, &steps)
            }
        }
    }

    fn sessions(&self, page: &SessionsPage) -> String {
        let mut s = String::new();
        if let Some(notice) = &page.notice {
            let _ = writeln!(s, "notice: {notice}\n");
        }
        for m in &page.sessions {
            s.push_str(&self.session(m));
        }
        if self.sessions_layout == Layout::Lines && !page.sessions.is_empty() {
            s.push('\n');
        }
        if page.budget_cut {
            let _ = writeln!(
                s,
                "→ the output budget ended this page: {}",
                self.says(
                    "raise --budget, or narrow with --session, --role, --since/--until",
                    "raise budget, or narrow with session, roles, since/until"
                )
            );
        } else if page.has_older || page.has_newer {
            let side = if page.has_older { "older" } else { "newer" };
            let _ = writeln!(
                s,
                "→ more sessions with {side} hits: {}",
                self.says(
                    "raise --limit, or narrow with --session, --role, --since/--until",
                    "raise limit, or narrow with session, roles, since/until"
                )
            );
        }
        s
    }
}

impl Text {
    /// A hit of a ranked search: its header with its score, its snippet, how to read it.
    fn found_hit(&self, hit: &FoundHit, indent: &str) -> String {
        let mut s = format!(
            "{indent}{} | score {}\n",
            self.header(&hit.item, false),
            self.paint(Paint::Number, &format!("{:.2}", hit.score))
        );
        let _ = writeln!(s, "{indent}{}", self.detail(&hit.item));
        for line in self.words(&hit.item.event.text, &hit.spans).lines() {
            let _ = writeln!(s, "{indent}{line}");
        }
        s.push_str(indent);
        s.push_str(&self.step("read", &self.recipe(&hit.read)));
        s
    }

    /// `text` with the words at `spans` (sorted, not overlapping) highlighted, in color.
    fn words(&self, text: &str, spans: &[(usize, usize)]) -> String {
        let mut out = String::with_capacity(text.len());
        let mut last = 0;
        for &(a, b) in spans.iter().filter(|_| self.color) {
            if a < last || !text.is_char_boundary(a) || !text.is_char_boundary(b) {
                continue;
            }
            out.push_str(&text[last..a]);
            out.push_str(&self.paint(Paint::Match, &text[a..b]));
            last = b;
        }
        out.push_str(&text[last..]);
        out
    }

    /// Where a session's score comes from, a line.
    fn explain(&self, e: &Explain) -> String {
        let mut s = format!(
            "why: best event {:.2} + next events {:.2} + words held {:.2} (× {:.2} for its size), \
             × recency {:.3}",
            e.best, e.others, e.coverage, e.size, e.recency
        );
        for w in &e.words {
            let _ = write!(
                s,
                "; {} {:.2} (rarity {:.2}, in {} session{}{}{})",
                w.term,
                w.best,
                w.idf,
                w.sessions,
                if w.sessions == 1 { "" } else { "s" },
                if w.weight < 1.0 { ", a part" } else { "" },
                if w.present { "" } else { ", not here" },
            );
        }
        s.push('\n');
        self.paint(Paint::Dim, &s)
    }
}

impl RenderFind for Text {
    fn found_session(&self, f: &FoundSession) -> String {
        let place = Text::place(f.cwd.as_deref(), f.git_branch.as_deref());
        let about = f.title.as_deref().or(f.prompt.as_deref()).unwrap_or("");
        match self.sessions_layout {
            Layout::Blocks => {
                let mut s = format!(
                    "{}. session {} | score {} | {} hit{} | {}\n",
                    f.rank,
                    self.paint(Paint::Session, &f.session),
                    self.paint(Paint::Number, &format!("{:.2}", f.score)),
                    f.hits,
                    if f.hits == 1 { "" } else { "s" },
                    self.paint(Paint::Dim, &place)
                );
                let _ = writeln!(s, "{}", self.paint(Paint::Dim, &self.when(f.last_hit)));
                if !about.is_empty() {
                    let _ = writeln!(s, "{about}");
                }
                for hit in &f.best {
                    s.push('\n');
                    s.push_str(&self.found_hit(hit, "  "));
                }
                if let Some(e) = &f.explain {
                    s.push_str(&self.explain(e));
                }
                s.push_str(&self.step("hits", &self.recipe(&f.list)));
                s.push_str(&self.trailer(f.resume.as_ref(), f.path.as_deref(), None));
                s.push('\n');
                s
            }
            Layout::Lines => {
                let mut lead = format!("{:>2}. ", f.rank);
                let _ = write!(
                    lead,
                    "{}  {}  {}",
                    self.paint(Paint::Number, &format!("{:>6.2}", f.score)),
                    self.paint(Paint::Dim, &format!("{:>8}", self.short_when(f.last_hit))),
                    self.short_session(&f.session),
                );
                let place = self.short_place(
                    f.cwd.as_deref(),
                    f.git_branch.as_deref(),
                    self.place_room(&[&lead]),
                );
                let _ = write!(lead, "  {}", self.paint(Paint::Dim, &place));
                let (text, focus) = match f.best.first() {
                    Some(hit) => (hit.item.event.text.as_str(), hit.item.focus),
                    None => (about, None),
                };
                let steps: Vec<Step> = f
                    .resume
                    .as_ref()
                    .map(|r| Step::Resume(command_line::resume(r)))
                    .into_iter()
                    .collect();
                let mut s = self.row(&lead, text, focus, &steps);
                if let Some(e) = &f.explain {
                    s.push_str("    ");
                    s.push_str(&self.explain(e));
                }
                s
            }
        }
    }

    fn found_event(&self, hit: &FoundHit) -> String {
        match self.layout {
            Layout::Blocks => self.found_hit(hit, "") + "\n",
            Layout::Lines => {
                let lead = format!(
                    "{}  {}  {}",
                    self.paint(Paint::Number, &format!("{:>6.2}", hit.score)),
                    self.paint(
                        Paint::Dim,
                        &format!("{:>8}", self.short_when(hit.item.event.timestamp))
                    ),
                    self.short_session(&hit.item.session),
                );
                self.fit_line(&lead, &hit.item.event.text, hit.item.focus, "")
            }
        }
    }

    fn find(&self, page: &FindPage) -> String {
        let mut s = String::new();
        for f in page.sessions.iter().flatten() {
            s.push_str(&self.found_session(f));
        }
        for h in page.events.iter().flatten() {
            s.push_str(&self.found_event(h));
        }
        if self.sessions_layout == Layout::Lines
            && page.sessions.as_ref().is_some_and(|v| !v.is_empty())
        {
            s.push('\n');
        }
        if let Some(more) = &page.more {
            let what = if page.budget_cut {
                "the output budget ended this page"
            } else {
                "more ranked below"
            };
            let _ = writeln!(
                s,
                "{}",
                self.step(&format!("more ({what})"), &self.recipe(more))
                    .trim_end()
            );
        }
        s
    }
}

impl Printer for Text {
    fn error(&self, error: &HistoryError) -> String {
        format!("error: {} ({})\n", error, error.code())
    }

    fn list_streams(&self, doc: &ListPage) -> (String, String) {
        let mut said = notice_line(doc.notice.as_deref());
        let nothing = empty_line(doc);
        said.push_str(nothing);
        // Nothing matched: nothing for standard output, not even a session's resume command.
        match nothing.is_empty() {
            true => (self.list_results(doc), said),
            false => (String::new(), said),
        }
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
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pid: Option<u32>,
}

impl RenderSessions for Json {
    fn session(&self, session: &SessionMatch) -> String {
        compact(session) + ","
    }

    fn sessions(&self, page: &SessionsPage) -> String {
        compact(page) + "\n"
    }
}

impl RenderFind for Json {
    fn found_session(&self, session: &FoundSession) -> String {
        compact(session) + ","
    }

    fn found_event(&self, hit: &FoundHit) -> String {
        compact(hit) + ","
    }

    fn find(&self, page: &FindPage) -> String {
        compact(page) + "\n"
    }
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
        let mut body = ErrorBody {
            code: error.code(),
            message: error.to_string(),
            candidates: None,
            session: None,
            reason: None,
            pid: None,
        };
        match error {
            HistoryError::AmbiguousSession { candidates, .. } => {
                body.candidates = Some(candidates.as_slice());
            }
            HistoryError::HistoryUnavailable { session, .. } => body.session = Some(session),
            HistoryError::IndexUnavailable { reason, .. } => body.reason = Some(reason),
            HistoryError::IndexBusy { pid } => body.pid = *pid,
            _ => {}
        }
        compact(&ErrorDoc { error: body }) + "\n"
    }
}
