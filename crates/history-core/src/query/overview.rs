//! The recent-sessions overview: one representative event per session.

use std::cell::{Cell, RefCell};

use crate::choose::Filter;
use crate::corpus::parallel::ordered_map;
use crate::corpus::{Corpus, Keep};
use crate::error::HistoryError;
use crate::model::{End, Timestamp};
use crate::model::{Event, SessionFile, SessionMeta};
use crate::query::{Hit, Listing};

/// How much text a representative's decode keeps: the dialogue first, and the tool and context
/// events that come before any dialogue (in case none is found on the session's branch). What
/// comes after is kept without its text, and the chosen event's text read again if it was not
/// kept, so that a session of any size costs this much.
const KEPT_TEXT: usize = 4 << 20;

/// A session's representative and what decoding it said.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Representative {
    /// The chosen event, if the session has one.
    pub event: Option<Event>,
    /// Notices from decoding.
    pub notices: Vec<String>,
    /// What the transcript says of the session (working directory, branch, title).
    #[serde(default)]
    pub meta: SessionMeta,
    /// How many events of the session's branch the filter admits.
    #[serde(default)]
    pub events: usize,
    /// The time of the latest event the filter admits, on any branch: the session's last
    /// activity.
    #[serde(default)]
    pub last_activity: Option<Timestamp>,
    /// The time of the earliest timed event the filter admits.
    #[serde(default)]
    pub first_activity: Option<Timestamp>,
    /// Whether an event the filter admits has no time.
    #[serde(default)]
    pub untimed: bool,
    /// The files decoding read (the session's own first), to compare with a cache's witnesses.
    #[serde(skip)]
    pub lineage: Vec<std::path::PathBuf>,
}

impl Representative {
    /// The times of the events the filter admits: the earliest (none when one of them has no
    /// time) and the latest.
    pub fn activity(&self) -> crate::query::Activity {
        crate::query::Activity {
            earliest: self.first_activity.filter(|_| !self.untimed),
            latest: self.last_activity,
        }
    }
}

/// Which of a session's events represents it, from its events (on its branch, those a filter
/// admits) offered in the session's order.
///
/// Without roles: the first visible prompt, else the first visible user event, else the latest
/// visible event, else the latest event of any role. With roles: the latest visible event, else
/// the latest event (a role such as `tool` has no visible events, and an empty answer would
/// help no one).
#[derive(Clone, Debug)]
pub struct Choice {
    first_user: bool,
    prompt: Option<(u64, u32)>,
    user: Option<(u64, u32)>,
    visible: Option<(u64, u32)>,
    last: Option<(u64, u32)>,
}

impl Choice {
    /// A choice for a filter with no roles (`first_user`), or with some.
    pub fn new(first_user: bool) -> Choice {
        Choice {
            first_user,
            prompt: None,
            user: None,
            visible: None,
            last: None,
        }
    }

    /// Takes the session's next event.
    pub fn offer(&mut self, e: &Event) {
        let at = Some(e.position());
        self.last = at;
        if !e.visible {
            return;
        }
        self.visible = at;
        if e.is_prompt() {
            self.prompt = self.prompt.or(at);
        }
        if e.role == crate::Role::User {
            self.user = self.user.or(at);
        }
    }

    /// Whether no later event can change the choice: the first prompt, when that is what is
    /// chosen.
    pub fn settled(&self) -> bool {
        self.first_user && self.prompt.is_some()
    }

    /// The position of the event chosen; `None` when none was offered.
    pub fn chosen(&self) -> Option<(u64, u32)> {
        let first = match self.first_user {
            true => self.prompt.or(self.user),
            false => None,
        };
        first.or(self.visible).or(self.last)
    }
}

/// Chooses a session's representative under `filter` (roles and time; queries are ignored), as
/// [`Choice`] says.
pub fn representative(
    corpus: &Corpus,
    file: &SessionFile,
    filter: &Filter,
) -> Result<Representative, HistoryError> {
    let admits = |e: &Event| filter.in_time(e) && filter.has_role(e);
    // Only a session with no visible event on its branch shows a tool or context event, its
    // latest: the texts of those that stream before any visible event are kept for that case,
    // so that the session is decoded once.
    let seen_visible = Cell::new(false);
    let kept = Cell::new(0);
    let stripped = RefCell::new(Vec::new());
    let keep = |e: &Event| {
        if !admits(e) {
            return Keep::Drop;
        }
        seen_visible.set(seen_visible.get() || e.visible);
        if (e.visible || !seen_visible.get()) && kept.get() + e.text.len() <= KEPT_TEXT {
            kept.set(kept.get() + e.text.len());
            Keep::Full
        } else {
            stripped.borrow_mut().push(e.position());
            Keep::Meta
        }
    };
    let loaded = corpus.load(file, &keep, false, None)?;
    let mut choice = Choice::new(filter.roles.is_empty());
    loaded.events.iter().for_each(|e| choice.offer(e));
    let chosen = choice
        .chosen()
        .and_then(|at| loaded.events.iter().find(|e| e.position() == at));
    let event = match chosen {
        Some(e) if !stripped.borrow().contains(&e.position()) => Some(e.clone()),
        None => None,
        // Its text was not kept (many megabytes of text came first): read it again, keeping
        // just that one.
        Some(last) => {
            let at = last.position();
            let only = |e: &Event| {
                if e.position() == at {
                    Keep::Full
                } else {
                    Keep::Drop
                }
            };
            corpus.load(file, &only, false, None)?.events.pop()
        }
    };
    Ok(Representative {
        event,
        last_activity: loaded.events.iter().filter_map(|e| e.timestamp).max(),
        first_activity: loaded.events.iter().filter_map(|e| e.timestamp).min(),
        untimed: loaded.events.iter().any(|e| e.timestamp.is_none()),
        events: loaded.events.len(),
        notices: loaded.notices,
        meta: loaded.meta,
        lineage: loaded.lineage,
    })
}

/// Builds the overview: sessions are visited in `from` order of modification until `limit` of
/// them produced a representative; the representatives are returned in the order they were
/// taken, the first at `from`'s end (the page sorts them by last activity once the budget has
/// chosen).
pub fn overview(
    sessions: &[SessionFile],
    limit: usize,
    from: End,
    choose: &(dyn Fn(&SessionFile) -> Result<Representative, HistoryError> + Sync),
) -> Listing {
    let mut ordered: Vec<&SessionFile> = sessions.iter().collect();
    if from == End::Oldest {
        ordered.reverse();
    }
    let mut listing = Listing::default();
    let mut visited = 0;
    if limit > 0 {
        ordered_map(
            &ordered,
            |file| choose(file),
            |file, result| {
                visited += 1;
                match result {
                    Ok(Representative {
                        event: Some(event),
                        meta,
                        events,
                        last_activity,
                        ..
                    }) => listing.items.push(Hit {
                        session: file.key.clone(),
                        path: file.path.clone(),
                        last_activity: last_activity.max(event.timestamp),
                        event,
                        meta,
                        location: None,
                        session_events: Some(events),
                    }),
                    Ok(_) => {}
                    Err(e) => listing.skipped.push(e),
                }
                listing.items.len() < limit
            },
        );
    }
    let more = visited < ordered.len();
    match from {
        End::Newest => listing.has_older = more,
        End::Oldest => listing.has_newer = more,
    }
    listing.visited = visited;
    // From the end the page starts at: the budget leaves out the sessions taken last.
    if from == End::Newest {
        listing.items.reverse();
    }
    listing
}

/// Remembers the unfiltered overview's representatives between runs.
pub trait RepresentativeCache: Send + Sync {
    /// The session's representative with no filter, from the cache or decoded.
    fn representative(
        &self,
        corpus: &Corpus,
        file: &SessionFile,
    ) -> Result<Representative, HistoryError>;

    /// The session's representative with no filter when the cache holds it for the session's
    /// files as they are now; nothing is decoded.
    fn cached(&self, corpus: &Corpus, file: &SessionFile) -> Option<Representative>;
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    use super::*;
    use crate::model::{Role, SessionKey};
    use crate::source::{LineTest, Transcript};
    use crate::{DecodeError, Decoded};

    /// One in-memory session of `(role, text, on the branch)` events that counts its decodes.
    struct Counted {
        events: Vec<(Role, &'static str, bool)>,
        decodes: Arc<AtomicUsize>,
    }

    impl Transcript for Counted {
        fn harness(&self) -> &str {
            "counted"
        }
        fn discover(&self) -> Vec<SessionFile> {
            Vec::new()
        }
        fn decode(
            &self,
            _: &SessionFile,
            sink: &mut dyn FnMut(Event),
            _: Option<LineTest<'_>>,
        ) -> Result<Decoded, DecodeError> {
            self.decodes.fetch_add(1, Ordering::SeqCst);
            for (i, (role, text, _)) in self.events.iter().enumerate() {
                sink(Event {
                    seq: i as u64 + 1,
                    part: 0,
                    role: *role,
                    kind: "message".into(),
                    timestamp: None,
                    text: text.to_string(),
                    visible: matches!(role, Role::User | Role::Assistant),
                    tool: None,
                    on_active_branch: None,
                });
            }
            let on = self.events.iter().enumerate().filter(|(_, e)| e.2);
            Ok(Decoded {
                branch: Some(on.map(|(i, _)| i as u64 + 1).collect()),
                ..Decoded::default()
            })
        }
    }

    /// The representative's text, and how many decodes choosing it took.
    fn choose(events: Vec<(Role, &'static str, bool)>) -> (Option<String>, usize) {
        let decodes = Arc::new(AtomicUsize::new(0));
        let source = Counted {
            events,
            decodes: decodes.clone(),
        };
        let corpus = Corpus::new(vec![Box::new(source)]);
        let file = SessionFile {
            key: SessionKey::new("counted", "s"),
            path: "/counted/s".into(),
            modified: 0,
            size: 0,
            fingerprint: None,
        };
        let rep = representative(&corpus, &file, &Filter::default()).unwrap();
        (rep.event.map(|e| e.text), decodes.load(Ordering::SeqCst))
    }

    #[test]
    fn a_session_is_decoded_once() {
        use Role::*;
        let dialogue = vec![
            (Context, "env", true),
            (User, "hi", true),
            (Tool, "ls", true),
        ];
        assert_eq!(choose(dialogue), (Some("hi".into()), 1));
        let tools_only = vec![
            (Context, "env", true),
            (Tool, "ls", true),
            (Tool, "x", false),
        ];
        assert_eq!(
            choose(tools_only),
            (Some("ls".into()), 1),
            "the latest on the branch"
        );
    }

    #[test]
    fn dialogue_off_the_branch_still_gives_the_latest_event_s_text() {
        use Role::*;
        let events = vec![(User, "abandoned", false), (Tool, "kept", true)];
        assert_eq!(choose(events).0, Some("kept".into()));
    }
}
