//! A finished page, as data: what [`crate::History`] answers and every front end renders. A
//! front end supplies a [`Render`] so that the core can fit the page to the budget in the bytes of
//! the very output it will print, text or JSON.

use serde::Serialize;

use crate::model::Cursor;
use crate::model::Timestamp;
use crate::model::{Event, Role, SessionMeta};
use crate::source::{Location, Resume};

/// The version of the JSON output; fields are only ever added.
pub const SCHEMA_VERSION: u32 = 1;

/// Renders pages. The budget is measured through it: `item` must be exactly what `list` spends
/// on that item.
pub trait Render {
    /// One list item (its folded run included), as it appears in the list output.
    fn item(&self, item: &Item, implicit: bool) -> String;
    /// The whole `list` output.
    fn list(&self, page: &ListPage) -> String;
    /// The whole `read` output.
    fn read(&self, page: &ReadPage) -> String;
}

/// A selector with bounds: how to ask for more (`→ older: {…}`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Recipe {
    /// The session, unless it is the caller's current one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// Only events with a smaller seq.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub before_seq: Option<u64>,
    /// Only events with a larger seq.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub after_seq: Option<u64>,
    /// The search's texts.
    #[serde(rename = "query", skip_serializing_if = "Option::is_none")]
    pub queries: Option<Vec<String>>,
    /// Only these roles.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub roles: Option<Vec<Role>>,
    /// Only events at or after this time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub since: Option<Timestamp>,
    /// Only events before this time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub until: Option<Timestamp>,
    /// Only hits before this place of a search across sessions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub before: Option<Cursor>,
    /// Only hits after this place of a search across sessions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub after: Option<Cursor>,
    /// How many items.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit: Option<usize>,
    /// Every branch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub all_branches: Option<bool>,
    /// The event to read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seq: Option<u64>,
    /// The part of its line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub part: Option<u32>,
    /// Where in its text to start.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offset_chars: Option<usize>,
    /// Only sessions that ran in this directory or below it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// The words of a ranked search (`find`): the recipe is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Only the ranked search's entries after this rank.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub after_rank: Option<usize>,
    /// A ranking of events rather than sessions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub events: Option<bool>,
}

/// A run of tool/context events folded into one row.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Fold {
    /// The first seq of the run.
    pub first_seq: u64,
    /// The last seq of the run.
    pub last_seq: u64,
    /// How many events it holds.
    pub count: usize,
    /// The roles in it.
    pub roles: Vec<Role>,
    /// The tool names in it, in order of first appearance.
    pub tools: Vec<String>,
}

impl Fold {
    /// The run of `events`; `None` for no events.
    pub(crate) fn of(events: &[Event]) -> Option<Fold> {
        let (first, last) = (events.first()?, events.last()?);
        let mut roles: Vec<Role> = events.iter().map(|e| e.role).collect();
        roles.sort();
        roles.dedup();
        let mut tools: Vec<String> = Vec::new();
        for t in events.iter().filter_map(|e| e.tool.as_ref()) {
            if !tools.contains(t) {
                tools.push(t.clone());
            }
        }
        Some(Fold {
            first_seq: first.seq,
            last_seq: last.seq,
            count: events.len(),
            roles,
            tools,
        })
    }
}

/// A folded run of tool/context events, with the recipe that lists it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FoldedRun {
    /// The run.
    #[serde(flatten)]
    pub run: Fold,
    /// The list selector that shows exactly this run.
    pub expand: Recipe,
}

impl FoldedRun {
    /// The run, with an `expand` recipe on the session and branches of `base`.
    pub fn new(run: Fold, base: &Recipe) -> FoldedRun {
        let expand = Recipe {
            session: base.session.clone(),
            all_branches: base.all_branches,
            after_seq: Some(run.first_seq - 1),
            roles: Some(run.roles.clone()),
            limit: Some(run.count),
            ..Recipe::default()
        };
        FoldedRun { run, expand }
    }
}

/// One item of a page: the event's own fields, and where it came from.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Item {
    /// The qualified session id.
    pub session: String,
    /// The event, its text cut where the budget asked.
    #[serde(flatten)]
    pub event: Event,
    /// Whether the text was cut.
    pub truncated: bool,
    /// The transcript file the event's line is in (for history a session inherits, the file
    /// it inherits from).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The session's working directory, where its transcript records it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// The git branch checked out in it, where the transcript records it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub git_branch: Option<String>,
    /// The session's title, where it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The session that started this one (a sub-agent's parent thread), qualified.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    /// The line of `path` the event was decoded from, and where its bytes are.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub location: Option<Location>,
    /// How to reopen the session in its agent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resume: Option<Resume>,
    /// The run folded just before this item.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub folded_before: Option<FoldedRun>,
    /// How many events the session has that the overview's filter admits (the overview's
    /// representatives only): a person tells a one-question session from a long one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_events: Option<usize>,
    /// The time of the session's latest event (the overview's representatives only): its age
    /// and its place on the page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_activity: Option<Timestamp>,
    /// Where in the text the query matched: a cut text keeps the match in view.
    #[serde(skip)]
    pub focus: Option<usize>,
    /// Whether the item stands for its whole session (an overview's representative): a text
    /// front end ends it with how to resume that session.
    #[serde(skip)]
    pub representative: bool,
}

impl Item {
    /// An uncut item.
    pub fn new(session: String, path: Option<String>, event: Event) -> Item {
        Item {
            session,
            event,
            truncated: false,
            path,
            cwd: None,
            git_branch: None,
            title: None,
            parent: None,
            location: None,
            resume: None,
            folded_before: None,
            session_events: None,
            last_activity: None,
            focus: None,
            representative: false,
        }
    }

    /// The item, naming where its session ran and what it is called: people look for "the
    /// session in that repository".
    pub fn about(mut self, meta: &SessionMeta) -> Item {
        self.cwd.clone_from(&meta.cwd);
        self.git_branch.clone_from(&meta.git_branch);
        self.title.clone_from(&meta.title);
        self.parent.clone_from(&meta.parent);
        self
    }
}

/// The answer to a `list` request.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ListPage {
    /// [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// The canonical session, when one session was listed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// The items, oldest first.
    pub items: Vec<Item>,
    /// The run after the last item.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub folded_after: Option<FoldedRun>,
    /// Whether more lies before the page.
    pub has_older: bool,
    /// Whether more lies after the page.
    pub has_newer: bool,
    /// How to ask for what lies before.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub older: Option<Recipe>,
    /// How to ask for what lies after.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub newer: Option<Recipe>,
    /// What the reader should know: damaged lines, skipped sessions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notice: Option<String>,
    /// For a search of many sessions: how many a search projection answered for, and how many
    /// were read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub coverage: Option<Coverage>,
    /// Whether the session was targeted implicitly (the current session): headers and recipes
    /// then leave the session out.
    #[serde(skip)]
    pub implicit: bool,
    /// Whether there were no sessions at all to list (the notice then says where it looked).
    #[serde(skip)]
    pub no_sessions: bool,
    /// Whether the budget, rather than the limit, left items off the page.
    #[serde(skip)]
    pub budget_cut: bool,
    /// For one session: how to reopen it in its agent (its items carry it too, where any).
    #[serde(skip)]
    pub resume: Option<Resume>,
}

/// How a search of many sessions was answered.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Coverage {
    /// Sessions a search projection answered for without reading their files.
    pub from_index: usize,
    /// Sessions whose files were read.
    pub scanned: usize,
    /// How many of those the projection could not take in (updating it would not help).
    #[serde(skip)]
    pub unindexable: usize,
    /// How many it answered for had been appended to since it took them in.
    #[serde(skip)]
    pub appended: usize,
}

impl Coverage {
    /// Whether updating the projection would spare a search like this one reading anything.
    pub fn stale(&self) -> bool {
        self.unindexed() > 0 || self.appended > 0
    }

    /// The sessions read in full that updating the projection would take in: those a notice
    /// names (a session it can never hold, such as a database's, is read every time, and
    /// saying so on every search would be noise).
    pub fn unindexed(&self) -> usize {
        self.scanned.saturating_sub(self.unindexable)
    }
}

/// The answer to a `read` request.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ReadPage {
    /// [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// The canonical session.
    pub session: String,
    /// The event, from `offset_chars` on; `None` when the seq and part hold none.
    pub item: Option<Item>,
    /// How many parts the line has.
    pub parts: u32,
    /// Where the shown text starts, in characters.
    pub offset_chars: usize,
    /// Where to continue when the text was cut.
    pub next_offset_chars: Option<usize>,
    /// The recipe that continues it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next: Option<Recipe>,
    /// The list selector that shows the events around it.
    pub neighborhood: Recipe,
    /// What the reader should know.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notice: Option<String>,
    /// Whether the session was targeted implicitly.
    #[serde(skip)]
    pub implicit: bool,
}

/// One session of a session-level search (`list --sessions`): how often and when it matched,
/// and its best hit.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SessionMatch {
    /// The qualified session id.
    pub session: String,
    /// The session's transcript file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The session's working directory, where its transcript records it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// The git branch checked out in it, where the transcript records it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub git_branch: Option<String>,
    /// The session's title, where it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// How many events of the session match, every one rather than those shown, up to
    /// a hundred.
    pub hits: usize,
    /// Whether more than `hits` match: a count stops there.
    pub more_hits: bool,
    /// The time of its earliest timed hit.
    pub first_hit: Option<Timestamp>,
    /// The time of its latest timed hit.
    pub last_hit: Option<Timestamp>,
    /// The best hit (a prompt before a reply before tool and context events, the latest of
    /// those), its text a snippet that keeps the match in view.
    pub best: Item,
    /// The list selector of the session's hits.
    pub list: Recipe,
    /// The read selector of the best hit.
    pub read: Recipe,
    /// How to reopen the session in its agent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resume: Option<Resume>,
}

/// The answer to a session-level search: the matching sessions, ordered by their latest hit,
/// oldest first.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SessionsPage {
    /// [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// The sessions, ordered by their latest hit (untimed first), oldest first.
    pub sessions: Vec<SessionMatch>,
    /// Whether more sessions matched whose latest hit is older than the page's.
    pub has_older: bool,
    /// Whether more sessions matched whose latest hit is newer than the page's.
    pub has_newer: bool,
    /// What the reader should know: skipped sessions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notice: Option<String>,
    /// How many sessions a search projection answered for, and how many were read.
    pub coverage: Coverage,
    /// Whether the budget, rather than the limit, left sessions off the page.
    #[serde(skip)]
    pub budget_cut: bool,
    /// Whether there were no sessions at all to search (the notice then says where it looked).
    #[serde(skip)]
    pub no_sessions: bool,
}

/// Renders session-level search pages; the budget is measured through it, as with [`Render`].
pub trait RenderSessions {
    /// One session, exactly as it appears in the page's output.
    fn session(&self, session: &SessionMatch) -> String;
    /// The whole output.
    fn sessions(&self, page: &SessionsPage) -> String;
}
