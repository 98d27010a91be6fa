//! What a front end asks — a list (one session's page, a search, the overview, or hits summed up
//! per session) or a read — with the defaults every front end shares and the checks every
//! request passes before anything is read.

use crate::choose::{Filter, Place};
use crate::error::HistoryError;
use crate::model::{Cursor, End, Role, Timestamp};
use crate::page::budget::{DEFAULT_BUDGET, MIN_BUDGET};
use crate::page::Recipe;

/// How many items a page holds when the request does not say, whichever front end asks.
pub const DEFAULT_LIMIT: usize = 20;

/// What `list` asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ListRequest {
    /// The selector; `None`: the current session, else every session.
    pub session: Option<String>,
    /// Literal texts, any of which matches.
    pub queries: Vec<String>,
    /// Only these roles (empty: every role).
    pub roles: Vec<Role>,
    /// Only events at or after this time.
    pub since: Option<Timestamp>,
    /// Only events before this time.
    pub until: Option<Timestamp>,
    /// Only events with a smaller seq (one session only).
    pub before_seq: Option<u64>,
    /// Only events with a larger seq (one session only).
    pub after_seq: Option<u64>,
    /// The end the page starts from; `None`: the default for the request.
    pub from: Option<End>,
    /// How many items at most.
    pub limit: usize,
    /// How many bytes the rendered output may take.
    pub budget: usize,
    /// Every branch of a branched session, each event marked.
    pub all_branches: bool,
    /// Only hits before this place (a search of many sessions).
    pub before: Option<Cursor>,
    /// Only hits after this place (a search of many sessions); the page then starts at the
    /// oldest end.
    pub after: Option<Cursor>,
    /// Only sessions that ran in this directory or below it; with no selector, every such
    /// session rather than the current one.
    pub cwd: Option<Place>,
}

impl Default for ListRequest {
    fn default() -> ListRequest {
        ListRequest {
            session: None,
            queries: Vec::new(),
            roles: Vec::new(),
            since: None,
            until: None,
            before_seq: None,
            after_seq: None,
            from: None,
            limit: DEFAULT_LIMIT,
            budget: DEFAULT_BUDGET,
            all_branches: false,
            before: None,
            after: None,
            cwd: None,
        }
    }
}

/// What `read` asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReadRequest {
    /// The selector of one session; `None`: the current session.
    pub session: Option<String>,
    /// The event's seq.
    pub seq: u64,
    /// The part of its line.
    pub part: u32,
    /// Where in its text to start, in characters.
    pub offset_chars: usize,
    /// How many bytes the rendered output may take.
    pub budget: usize,
}

impl ListRequest {
    /// Whether it is a search: some query has text. Only a search consults a search projection
    /// (the index); every other page is answered without one.
    pub fn is_search(&self) -> bool {
        self.queries.iter().any(|q| !q.is_empty())
    }

    /// Its queries, roles (each once) and time window.
    pub(crate) fn filter(&self) -> Filter {
        let mut roles = Vec::new();
        for role in &self.roles {
            if !roles.contains(role) {
                roles.push(*role);
            }
        }
        Filter::new(&self.queries, roles, self.since, self.until)
    }

    /// The end a page of many sessions starts from: the one asked for, else the oldest when it
    /// goes on after a place, else the newest.
    pub(crate) fn many_from(&self) -> End {
        let default = match self.after {
            Some(_) => End::Oldest,
            None => End::Newest,
        };
        self.from.unwrap_or(default)
    }

    /// The limit as a recipe to the next page repeats it: `None` for the default.
    pub(crate) fn paged_limit(&self) -> Option<usize> {
        (self.limit != DEFAULT_LIMIT).then_some(self.limit)
    }

    /// The request as a recipe repeats it across sessions.
    pub(crate) fn recipe(&self) -> Recipe {
        Recipe {
            session: Some(self.session.clone().unwrap_or_else(|| "*".into())),
            queries: (!self.queries.is_empty()).then(|| self.queries.clone()),
            roles: (!self.roles.is_empty()).then(|| self.roles.clone()),
            since: self.since,
            until: self.until,
            all_branches: self.all_branches.then_some(true),
            cwd: self.cwd.as_ref().map(|p| p.path().display().to_string()),
            ..Recipe::default()
        }
    }
}

/// Refuses a budget below [`MIN_BUDGET`].
pub(crate) fn check_budget(budget: usize) -> Result<(), HistoryError> {
    if budget < MIN_BUDGET {
        return Err(HistoryError::usage(format!(
            "--budget must be at least {MIN_BUDGET} bytes"
        )));
    }
    Ok(())
}

/// Refuses a time window with nothing in it.
pub(crate) fn check_window(
    since: Option<Timestamp>,
    until: Option<Timestamp>,
) -> Result<(), HistoryError> {
    if let (Some(since), Some(until)) = (since, until) {
        if since >= until {
            return Err(HistoryError::usage(format!(
                "--since ({since}) must be before --until ({until}): nothing lies between"
            )));
        }
    }
    Ok(())
}
