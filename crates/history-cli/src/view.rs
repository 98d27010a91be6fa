//! What a command prints, as data: both printers render these, and the budget measures them.

use serde::Serialize;

use history_core::paging::Fold;
use history_core::search::Hit;
use history_core::{Event, Role};

/// The version of the JSON output; fields are only ever added.
pub const SCHEMA_VERSION: u32 = 1;

/// A selector with bounds: how to ask for more (`→ older: {…}`).
#[derive(Clone, Debug, Default, Serialize)]
pub struct Recipe {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub before_seq: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub after_seq: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub roles: Option<Vec<Role>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub all_branches: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seq: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub part: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offset_chars: Option<usize>,
}

/// A folded run of tool/context events.
#[derive(Clone, Debug, Serialize)]
pub struct FoldView {
    pub first_seq: u64,
    pub last_seq: u64,
    pub count: usize,
    pub roles: Vec<Role>,
    pub tools: Vec<String>,
    /// The list selector that shows exactly this run.
    pub expand: Recipe,
}

impl FoldView {
    pub fn new(fold: Fold, base: &Recipe) -> FoldView {
        let expand = Recipe {
            session: base.session.clone(),
            all_branches: base.all_branches,
            after_seq: Some(fold.first_seq - 1),
            roles: Some(fold.roles.clone()),
            limit: Some(fold.count),
            ..Recipe::default()
        };
        FoldView {
            first_seq: fold.first_seq,
            last_seq: fold.last_seq,
            count: fold.count,
            roles: fold.roles,
            tools: fold.tools,
            expand,
        }
    }
}

/// One printed event: the event's own fields, and where it came from.
#[derive(Clone, Debug, Serialize)]
pub struct ItemView {
    pub session: String,
    #[serde(flatten)]
    pub event: Event,
    pub truncated: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub folded_before: Option<FoldView>,
    /// Where in the text the query matched: a cut text keeps the match in view.
    #[serde(skip)]
    pub focus: Option<usize>,
}

impl ItemView {
    pub fn new(session: String, path: Option<String>, event: Event) -> ItemView {
        ItemView {
            session,
            event,
            truncated: false,
            path,
            folded_before: None,
            focus: None,
        }
    }

    pub fn from_hit(hit: Hit) -> ItemView {
        ItemView::new(
            hit.session.to_string(),
            Some(hit.path.display().to_string()),
            hit.event,
        )
    }
}

/// The result of `list`.
#[derive(Debug, Serialize)]
pub struct ListDoc {
    pub schema_version: u32,
    /// The canonical session, when one session was listed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    pub items: Vec<ItemView>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub folded_after: Option<FoldView>,
    pub has_older: bool,
    pub has_newer: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub older: Option<Recipe>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub newer: Option<Recipe>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notice: Option<String>,
    /// Whether the session was targeted implicitly (the current session): headers and recipes
    /// then leave the session out.
    #[serde(skip)]
    pub implicit: bool,
    /// Whether there were no sessions at all to list (the notice then says where it looked).
    #[serde(skip)]
    pub no_sessions: bool,
}

/// The result of `read`.
#[derive(Debug, Serialize)]
pub struct ReadDoc {
    pub schema_version: u32,
    pub session: String,
    pub item: Option<ItemView>,
    /// How many parts the line has.
    pub parts: u32,
    pub offset_chars: usize,
    pub next_offset_chars: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next: Option<Recipe>,
    pub neighborhood: Recipe,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notice: Option<String>,
    #[serde(skip)]
    pub implicit: bool,
}
