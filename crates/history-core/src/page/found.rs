//! The page of a ranked search (`find`): sessions (or events) best first, each with its score,
//! the hits that earned it, and the recipes to read them, list them and resume the session.

use serde::Serialize;

use crate::model::Timestamp;
use crate::page::{Coverage, Item, Recipe};
use crate::source::Resume;

/// One hit of a ranked search: an event holding some of the words, its text a snippet with
/// the first of them in view.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FoundHit {
    /// The event, its session and where it is.
    #[serde(flatten)]
    pub item: Item,
    /// The event's own score.
    pub score: f64,
    /// The words of the text that matched, as the text writes them, each once.
    pub matched: Vec<String>,
    /// The byte ranges of the snippet that hold them (highlighted on a terminal).
    #[serde(skip)]
    pub spans: Vec<(usize, usize)>,
    /// The read selector of the event.
    pub read: Recipe,
}

/// How one word of the question added to a session's score.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WordScore {
    /// The term the word became.
    pub term: String,
    /// Its weight in the question: 1, or less for a part of an identifier.
    pub weight: f64,
    /// How many sessions in scope hold it.
    pub sessions: usize,
    /// How rare that makes it (inverse document frequency).
    pub idf: f64,
    /// What it added to the best event's score.
    pub best: f64,
    /// Whether the session holds it anywhere in scope.
    pub present: bool,
}

/// Where a session's score comes from.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Explain {
    /// The best event's score (its words' sum, its role's weight and nearness included).
    pub best: f64,
    /// The bounded bonus of its next best events.
    pub others: f64,
    /// The bonus for the question's words the session holds anywhere.
    pub coverage: f64,
    /// What that bonus was multiplied by for the session's size: above 1 for a session smaller
    /// than those in scope take on average, below it for a larger one.
    pub size: f64,
    /// The recency factor the sum was multiplied by (a tie-breaker: at most 1.01).
    pub recency: f64,
    /// Each word's part.
    pub words: Vec<WordScore>,
}

/// One session of a ranked search.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FoundSession {
    /// Its place in the ranking, from 1.
    pub rank: usize,
    /// The qualified session id.
    pub session: String,
    /// Its score: higher is better.
    pub score: f64,
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
    /// Its first prompt, cut, where it has no title.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    /// The time of its latest timed hit, else when its transcript was last written.
    pub last_hit: Option<Timestamp>,
    /// How many of its events hold some of the words.
    pub hits: usize,
    /// Its best hits, best first.
    pub best: Vec<FoundHit>,
    /// The list selector of its hits: the matched words as literal queries.
    pub list: Recipe,
    /// How to reopen the session in its agent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resume: Option<Resume>,
    /// Where its score comes from (`--explain`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub explain: Option<Explain>,
}

/// The answer to a ranked search.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FindPage {
    /// [`crate::page::SCHEMA_VERSION`].
    pub schema_version: u32,
    /// The terms the question became.
    pub terms: Vec<String>,
    /// The sessions, best first (a ranking of sessions).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sessions: Option<Vec<FoundSession>>,
    /// The events, best first (`--events`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub events: Option<Vec<FoundHit>>,
    /// How many sessions (or events) hold some of the words.
    pub matched: usize,
    /// Whether more lie below the page.
    pub has_more: bool,
    /// How to ask for the next page: the same search after the page's last rank.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub more: Option<Recipe>,
    /// What the reader should know: skipped sessions, sessions read in full.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notice: Option<String>,
    /// How many sessions a search projection answered for, and how many were read.
    pub coverage: Coverage,
    /// Whether the budget, rather than the limit, left entries off the page.
    #[serde(skip)]
    pub budget_cut: bool,
    /// Whether there were no sessions at all to search.
    #[serde(skip)]
    pub no_sessions: bool,
}

/// Renders ranked search pages; the budget is measured through it, as with
/// [`crate::page::Render`].
pub trait RenderFind {
    /// One session, exactly as it appears in the page's output.
    fn found_session(&self, session: &FoundSession) -> String;
    /// One event of an event ranking, exactly as it appears in the page's output.
    fn found_event(&self, hit: &FoundHit) -> String;
    /// The whole output.
    fn find(&self, page: &FindPage) -> String;
}
