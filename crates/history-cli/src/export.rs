//! The renderers of `export`: a session as a Markdown document a person reads, or as JSON Lines
//! (the session first, then one item per event, as `list --json` gives items). Both write each
//! event as it comes; history-core decides which events, in which order.

use std::io::Write;

use serde::Serialize;

use history_core::Item;
use history_core::{Document, Head};
use history_core::{Event, Role, SessionMeta, Timestamp};

/// A document that writes to `out` and remembers the first write error (a closed pipe), after
/// which it writes nothing more.
struct Sink<'a> {
    out: &'a mut dyn Write,
    failed: Option<std::io::Error>,
}

impl Sink<'_> {
    fn write(&mut self, text: &str) {
        if self.failed.is_none() {
            if let Err(e) = self.out.write_all(text.as_bytes()) {
                self.failed = Some(e);
            }
        }
    }

    fn finish(mut self) -> std::io::Result<()> {
        match self.failed.take() {
            Some(e) => Err(e),
            None => self.out.flush(),
        }
    }
}

/// The Markdown document: the session's title and what it is about, then a section per prompt
/// and reply; tool calls, their output, reasoning and injected context folded as `<details>`.
pub struct Markdown<'a> {
    sink: Sink<'a>,
    /// What decoding said, for standard error: a document holds the session alone.
    notices: Vec<String>,
}

/// JSON Lines: the session's head as one object, then one item per event.
pub struct JsonLines<'a> {
    sink: Sink<'a>,
    session: String,
    path: String,
    meta: SessionMeta,
}

impl<'a> Markdown<'a> {
    /// A document written to `out`.
    pub fn new(out: &'a mut dyn Write) -> Markdown<'a> {
        Markdown {
            sink: Sink { out, failed: None },
            notices: Vec::new(),
        }
    }

    /// Flushes; what decoding said, or the first write error.
    pub fn finish(self) -> std::io::Result<Vec<String>> {
        self.sink.finish().map(|()| self.notices)
    }
}

impl<'a> JsonLines<'a> {
    /// A document written to `out`.
    pub fn new(out: &'a mut dyn Write) -> JsonLines<'a> {
        JsonLines {
            sink: Sink { out, failed: None },
            session: String::new(),
            path: String::new(),
            meta: SessionMeta::default(),
        }
    }

    /// Flushes; the first write error, if any.
    pub fn finish(self) -> std::io::Result<()> {
        self.sink.finish()
    }
}

fn time(t: Option<Timestamp>) -> String {
    t.map_or_else(|| "(no time)".to_string(), |t| t.to_string())
}

/// `text` as a command-line word: quoted when the shell would read it otherwise.
fn shell_word(text: &str) -> String {
    let plain = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=@%+,".contains(c));
    if plain {
        text.to_string()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

/// `text` as inline code: backticks that fence it off from any run of backticks inside.
fn code(text: &str) -> String {
    let ticks = "`".repeat(longest_backtick_run(text) + 1);
    let pad = if text.starts_with('`') || text.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{ticks}{pad}{text}{pad}{ticks}")
}

fn longest_backtick_run(text: &str) -> usize {
    text.split(|c| c != '`').map(str::len).max().unwrap_or(0)
}

/// `text` as a fenced block that no line of it can close.
fn fenced(text: &str) -> String {
    let fence = "`".repeat((longest_backtick_run(text) + 1).max(3));
    let end = if text.ends_with('\n') { "" } else { "\n" };
    format!("{fence}\n{text}{end}{fence}\n")
}

/// What a summary line calls an event that is folded.
fn folded_name(event: &Event) -> Option<String> {
    let tool = event.tool.as_deref();
    let name = match (event.role, event.kind.as_str()) {
        (Role::Tool, "tool_call") => format!("Tool call: {}", tool.unwrap_or("(unnamed)")),
        (Role::Tool, "tool_output") => format!("Tool output: {}", tool.unwrap_or("(unnamed)")),
        (Role::Tool, "tool_error") => format!("Tool error: {}", tool.unwrap_or("(unnamed)")),
        (Role::Tool, kind) => match tool {
            Some(tool) => format!("Tool ({kind}): {tool}"),
            None => format!("Tool ({kind})"),
        },
        (Role::Context, kind) => format!("Context ({kind})"),
        (Role::Assistant, "reasoning") => "Reasoning".to_string(),
        (Role::User | Role::Assistant, _) if event.visible => return None,
        (role, kind) => format!("{} ({kind})", capitalized(role.as_str())),
    };
    Some(name)
}

fn capitalized(word: &str) -> String {
    let mut chars = word.chars();
    chars.next().map_or_else(String::new, |first| {
        first.to_uppercase().chain(chars).collect()
    })
}

/// The longest title, in characters, a first prompt gives.
const TITLE_CHARS: usize = 80;

/// What the session is called: its title, else the first line of its first prompt (cut), else
/// its id.
fn title(head: &Head) -> String {
    let first_line = |text: &str| {
        let line = text.trim().lines().next().unwrap_or("").trim().to_string();
        (!line.is_empty()).then_some(line)
    };
    if let Some(title) = head.meta.title.as_deref().and_then(first_line) {
        return title;
    }
    match head.first_prompt.as_deref().and_then(first_line) {
        Some(line) if line.chars().count() > TITLE_CHARS => {
            let cut: String = line.chars().take(TITLE_CHARS).collect();
            format!("{}…", cut.trim_end())
        }
        Some(line) => line,
        None => format!("Session {}", head.session),
    }
}

impl Document for Markdown<'_> {
    fn head(&mut self, head: &Head) {
        self.notices.clone_from(&head.notices);
        let mut s = format!("# {}\n\n", title(head));
        let mut field = |name: &str, value: String| {
            s.push_str(&format!("- **{name}:** {value}\n"));
        };
        field("Session", code(&head.session));
        field("Agent", head.harness.clone());
        if let Some(cwd) = &head.meta.cwd {
            field("Directory", code(cwd));
        }
        if let Some(branch) = &head.meta.git_branch {
            field("Branch", code(branch));
        }
        field("Started", time(head.first));
        field("Ended", time(head.last));
        field("Events", head.events.to_string());
        if let Some(resume) = &head.resume {
            let argv: Vec<String> = resume.argv.iter().map(|a| shell_word(a)).collect();
            let mut how = code(&argv.join(" "));
            if let Some(cwd) = &resume.cwd {
                how.push_str(&format!(" in {}", code(cwd)));
            }
            field("Resume", how);
        }
        field("File", code(&head.path.display().to_string()));
        if let Some(summary) = &head.meta.summary {
            s.push_str(&format!("\n> {}\n", summary.replace('\n', "\n> ")));
        }
        s.push('\n');
        self.sink.write(&s);
    }

    fn event(&mut self, event: &Event) {
        let mut place = format!("seq {}", event.seq);
        if event.part > 0 {
            place.push_str(&format!(".{}", event.part));
        }
        let mut when = time(event.timestamp);
        if event.on_active_branch == Some(false) {
            when.push_str(" · off the active branch");
        }
        let text = match folded_name(event) {
            None => format!(
                "## {} · {when} · {place}\n\n{}\n\n",
                capitalized(event.role.as_str()),
                event.text.trim_end()
            ),
            Some(name) => format!(
                "<details>\n<summary>{} · {when} · {place}</summary>\n\n{}\n</details>\n\n",
                escape_html(&name),
                fenced(&event.text)
            ),
        };
        self.sink.write(&text);
    }
}

/// `text` safe inside an HTML element.
fn escape_html(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The first line of JSON Lines.
#[derive(Serialize)]
struct HeadLine<'a> {
    schema_version: u32,
    session: &'a str,
    harness: &'a str,
    path: String,
    #[serde(flatten)]
    meta: &'a SessionMeta,
    first: Option<Timestamp>,
    last: Option<Timestamp>,
    events: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    notice: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    resume: Option<&'a history_core::Resume>,
}

impl JsonLines<'_> {
    fn line<T: Serialize>(&mut self, value: &T) {
        match serde_json::to_string(value) {
            Ok(json) => {
                self.sink.write(&json);
                self.sink.write("\n");
            }
            Err(e) => {
                self.sink.failed.get_or_insert(std::io::Error::other(e));
            }
        }
    }
}

impl Document for JsonLines<'_> {
    fn head(&mut self, head: &Head) {
        self.session.clone_from(&head.session);
        self.path = head.path.display().to_string();
        self.meta = head.meta.clone();
        let line = HeadLine {
            schema_version: history_core::SCHEMA_VERSION,
            session: &head.session,
            harness: &head.harness,
            path: self.path.clone(),
            meta: &head.meta,
            first: head.first,
            last: head.last,
            events: head.events,
            notice: (!head.notices.is_empty()).then(|| head.notices.join("; ")),
            resume: head.resume.as_ref(),
        };
        self.line(&line);
    }

    fn event(&mut self, event: &Event) {
        let item = Item::new(self.session.clone(), Some(self.path.clone()), event.clone())
            .about(&self.meta);
        self.line(&item);
    }
}
