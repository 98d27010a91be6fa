//! What a page keeps while a session streams by is bounded by the page, not by the session:
//! the live heap is measured with a counting allocator while a session of 64 MiB of dialogue
//! is listed, browsed and searched.
//!
//! This is a test binary of its own beside `tests/history_core`, with one test in it: a global
//! allocator counts the allocations of every thread of the process, and the test harness runs
//! the tests of a binary on parallel threads, so any other test here would add its own bytes to
//! the peak measured.

#![forbid(unsafe_code)]

use std::path::PathBuf;

use history_core::representative;
use history_core::End;
use history_core::{
    Corpus, DecodeError, Decoded, Event, Filter, History, ListRequest, Role, SessionFile,
    SessionKey, Transcript,
};
use history_core::{Item, ListPage, ReadPage, Render};
use peak_alloc::PeakAlloc;

/// Passes every call on to the system allocator and counts the bytes live and their peak.
#[global_allocator]
static ALLOCATOR: PeakAlloc = PeakAlloc;

const MIB: usize = 1 << 20;

/// One session of 64 assistant messages of a MiB each, on its branch but for the first two; the
/// user's first prompt comes after the 40th.
struct Chatty;

impl Transcript for Chatty {
    fn harness(&self) -> &str {
        "chatty"
    }

    fn discover(&self) -> Vec<SessionFile> {
        vec![SessionFile {
            key: SessionKey::new("chatty", "s"),
            path: PathBuf::from("/nonexistent/s"),
            modified: 0,
            size: 64 * MIB as u64,
            fingerprint: None,
        }]
    }

    fn decode(
        &self,
        _file: &SessionFile,
        sink: &mut dyn FnMut(Event),
        _lines: Option<history_core::LineTest<'_>>,
    ) -> Result<Decoded, DecodeError> {
        for seq in 1..=64u64 {
            let (role, text) = match seq {
                41 => (Role::User, format!("the first prompt {}", "p".repeat(MIB))),
                _ => (Role::Assistant, "a".repeat(MIB)),
            };
            sink(Event {
                seq,
                part: 0,
                role,
                kind: "message".into(),
                timestamp: None,
                text,
                visible: true,
                tool: None,
                on_active_branch: None,
            });
        }
        Ok(Decoded {
            branch: Some((3..=64).collect()),
            ..Decoded::default()
        })
    }
}

/// Renders an item as its place and the length of its text.
struct Places;

impl Render for Places {
    fn item(&self, item: &Item, _implicit: bool) -> String {
        format!("{} {}\n", item.event.seq, item.event.text.len())
    }

    fn list(&self, page: &ListPage) -> String {
        page.items.iter().map(|i| self.item(i, false)).collect()
    }

    fn read(&self, _page: &ReadPage) -> String {
        String::new()
    }
}

/// Runs `f`, and returns what it gave and the most bytes live meanwhile beyond those before.
fn peak<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let before = ALLOCATOR.current_usage();
    ALLOCATOR.reset_peak_usage();
    let out = f();
    (out, ALLOCATOR.peak_usage().saturating_sub(before))
}

#[test]
fn what_a_page_holds_is_bounded_by_the_page_not_the_session() {
    let history = History::new(Corpus::new(vec![Box::new(Chatty)]));
    let file = history.corpus().discover().remove(0);
    let bounded = |what: &str, bytes: usize| {
        assert!(
            bytes < 12 * MIB,
            "{what}: {} MiB live at the peak for a session of 64 MiB",
            bytes / MIB
        );
    };

    let (chosen, bytes) = peak(|| representative(history.corpus(), &file, &Filter::default()));
    let event = chosen.unwrap().event.unwrap();
    assert_eq!((event.seq, event.role), (41, Role::User));
    assert!(event.text.starts_with("the first prompt pp"));
    assert_eq!(event.text.len(), "the first prompt ".len() + MIB);
    bounded("the overview", bytes);

    let pages = [
        ("a browse", None, None, vec![62, 63, 64]),
        // The texts kept as the session streamed by were those of seqs 1–4: 5 is read again.
        (
            "a browse from the oldest end",
            None,
            Some(End::Oldest),
            vec![3, 4, 5],
        ),
        ("a search", Some("aaa"), None, vec![62, 63, 64]),
        (
            "a search from the oldest end",
            Some("aaa"),
            Some(End::Oldest),
            vec![3, 4, 5],
        ),
    ];
    for (what, query, from, seqs) in pages {
        let req = ListRequest {
            session: Some(if query.is_some() { "*" } else { "chatty:s" }.into()),
            queries: query.map(String::from).into_iter().collect(),
            from,
            limit: 3,
            budget: 1 << 30,
            ..ListRequest::default()
        };
        let (page, bytes) = peak(|| history.list(&req, &Places));
        let page = page.unwrap();
        let got: Vec<(u64, usize)> = page
            .items
            .iter()
            .map(|i| (i.event.seq, i.event.text.len()))
            .collect();
        let whole: Vec<(u64, usize)> = seqs.iter().map(|&s| (s, MIB)).collect();
        assert_eq!(
            got, whole,
            "{what}: the page's items keep their whole texts"
        );
        bounded(what, bytes);
    }
}
