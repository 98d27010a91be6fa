//! An embedder adds a source of its own through the `Transcript` trait, and the core lists,
//! searches and pages it like any harness, mixed with the others.

use history_core::overview::{overview, representative};
use history_core::paging::{browse, BrowseRequest, From};
use history_core::search::search;
use history_core::selector::resolve;
use history_core::{
    Corpus, DecodeError, Decoded, Event, Filter, Keep, Role, SessionFile, SessionKey, Timestamp,
    Transcript,
};

/// A session held in memory: id, modification time, events.
type LiveSession = (String, i64, Vec<(Role, &'static str)>);

/// A host's live sessions, held in memory.
struct Live {
    name: &'static str,
    sessions: Vec<LiveSession>,
}

impl Transcript for Live {
    fn harness(&self) -> &str {
        self.name
    }

    fn discover(&self) -> Vec<SessionFile> {
        self.sessions
            .iter()
            .map(|(id, modified, _)| SessionFile {
                key: SessionKey::new(self.name, id.clone()),
                path: format!("/live/{id}").into(),
                modified: *modified,
                size: 0,
            })
            .collect()
    }

    fn decode(
        &self,
        file: &SessionFile,
        sink: &mut dyn FnMut(Event),
        _lines: Option<history_core::source::LineTest<'_>>,
    ) -> Result<Decoded, DecodeError> {
        let (_, modified, events) = self
            .sessions
            .iter()
            .find(|(id, _, _)| *id == file.key.id)
            .ok_or_else(|| DecodeError::Invalid("gone".into()))?;
        for (i, (role, text)) in events.iter().enumerate() {
            sink(Event {
                seq: i as u64 + 1,
                part: 0,
                role: *role,
                kind: "message".into(),
                timestamp: Some(Timestamp(modified * 1_000_000_000 + i as i64)),
                text: text.to_string(),
                visible: matches!(role, Role::User | Role::Assistant),
                tool: None,
                on_active_branch: None,
            });
        }
        // The host's own branch rule: the second event was abandoned.
        let branch = (1..=events.len() as u64).filter(|s| *s != 2).collect();
        Ok(Decoded {
            branch: Some(branch),
            ..Decoded::default()
        })
    }
}

fn corpus() -> Corpus {
    let a = Live {
        name: "live",
        sessions: vec![
            (
                "s1".into(),
                100,
                vec![
                    (Role::User, "deploy the api"),
                    (Role::Assistant, "abandoned deploy"),
                    (Role::Assistant, "deployed"),
                ],
            ),
            (
                "s2".into(),
                200,
                vec![
                    (Role::User, "rollback please"),
                    (Role::Tool, "kubectl rollout undo"),
                ],
            ),
        ],
    };
    let b = Live {
        name: "other",
        sessions: vec![("s1".into(), 150, vec![(Role::User, "Deploy docs")])],
    };
    Corpus::new(vec![Box::new(a), Box::new(b)])
}

#[test]
fn a_fake_source_is_listed_searched_and_paged() {
    let corpus = corpus();
    let sessions = corpus.discover();
    assert_eq!(sessions.len(), 3);
    assert_eq!(sessions[0].key.to_string(), "live:s2", "newest first");

    let filter = Filter::new(&["DEPLOY".to_string()], vec![], None, None);
    let req = history_core::search::SearchRequest {
        filter: &filter,
        limit: 10,
        from: From::Newest,
        all_branches: false,
        raw_prefilter: true,
        candidates: None,
    };
    let hits = search(&corpus, &sessions, &req);
    let found: Vec<String> = hits
        .items
        .iter()
        .map(|h| format!("{}#{}", h.session, h.event.seq))
        .collect();
    assert_eq!(
        found,
        vec!["live:s1#1", "live:s1#3", "other:s1#1"],
        "off-branch seq 2 is not a hit"
    );

    let empty = Filter::default();
    let choose = |f: &SessionFile| representative(&corpus, f, &empty);
    let listing = overview(&sessions, 2, From::Newest, &choose);
    assert_eq!(listing.items.len(), 2);
    assert!(listing.has_older);

    // Resolution: the current harness first; the other harness's exact id otherwise.
    let picked = resolve(None, "s1", &sessions, Some("other"), "s1").unwrap();
    assert_eq!(picked.key.to_string(), "other:s1");
    let ambiguous = resolve(None, "s1", &sessions, None, "s1").unwrap_err();
    assert_eq!(ambiguous.code(), "ambiguous_session");

    let file = &sessions
        .iter()
        .find(|s| s.key.to_string() == "live:s1")
        .unwrap()
        .clone();
    let all = corpus.load(file, &|_| Keep::Full, true, None).unwrap();
    let marks: Vec<Option<bool>> = all.events.iter().map(|e| e.on_active_branch).collect();
    assert_eq!(marks, vec![Some(true), Some(false), Some(true)]);
    let page = browse(
        corpus
            .load(file, &|_| Keep::Full, false, None)
            .unwrap()
            .events,
        &BrowseRequest {
            before_seq: None,
            after_seq: None,
            from: None,
            limit: 1,
            fold: true,
        },
    );
    assert_eq!(page.items[0].event.seq, 3);
    assert!(page.has_older);
}
