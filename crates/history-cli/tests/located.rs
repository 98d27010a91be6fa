//! A search the index answers reads the lines its page needs, located by the index and decoded
//! alone, and never decodes a session it covers, yet gives what a search without it gives.

mod common;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use common::Roots;
use history_cli::render::{Json, Printer};
use history_cli::HARNESSES;
use history_core::page::Render;
use history_core::paging::From;
use history_core::source::{LineTest, LineTime};
use history_core::{
    Corpus, DecodeError, Decoded, Event, History, ListRequest, Role, SessionFile, Transcript,
};
use history_index::build::update;
use history_index::projection::Index;
use history_index::store::Store;
use serde_json::Value;

/// What the sources were asked to do.
#[derive(Default)]
struct Calls {
    /// The own file of each session decoded whole.
    decoded: Vec<PathBuf>,
    /// Bytes read by location.
    located: usize,
}

/// A source that counts what it is asked, doing what the real one does.
struct Counting {
    inner: Box<dyn Transcript>,
    calls: Arc<Mutex<Calls>>,
}

impl Transcript for Counting {
    fn harness(&self) -> &str {
        self.inner.harness()
    }

    fn discover(&self) -> Vec<SessionFile> {
        self.inner.discover()
    }

    fn decode(
        &self,
        file: &SessionFile,
        sink: &mut dyn FnMut(Event),
        lines: Option<LineTest<'_>>,
    ) -> Result<Decoded, DecodeError> {
        self.calls.lock().unwrap().decoded.push(file.path.clone());
        self.inner.decode(file, sink, lines)
    }

    fn lineage(&self, file: &SessionFile) -> Vec<PathBuf> {
        self.inner.lineage(file)
    }

    fn open_raw(&self, path: &Path) -> std::io::Result<Box<dyn Read + '_>> {
        self.inner.open_raw(path)
    }

    fn line_time(&self, line: &[u8]) -> LineTime {
        self.inner.line_time(line)
    }

    fn replay(&self, seq: u64, line: &[u8], sink: &mut dyn FnMut(Event)) -> bool {
        self.inner.replay(seq, line, sink)
    }

    fn read_at(&self, path: &Path, offset: u64, len: usize) -> Option<std::io::Result<Vec<u8>>> {
        let read = self.inner.read_at(path, offset, len);
        if let Some(Ok(bytes)) = &read {
            self.calls.lock().unwrap().located += bytes.len();
        }
        read
    }
}

fn corpus(roots: &Roots, calls: &Arc<Mutex<Calls>>) -> Corpus {
    Corpus::new(
        HARNESSES
            .iter()
            .map(|h| {
                Box::new(Counting {
                    inner: (h.open)(roots.root(h.name).to_path_buf()),
                    calls: calls.clone(),
                }) as Box<dyn Transcript>
            })
            .collect(),
    )
}

/// The page as JSON, without what legitimately differs between the index and a scan.
fn page(history: &History, req: &ListRequest) -> Value {
    let printer = Json;
    let text = match history.list(req, &printer) {
        Ok(page) => printer.list(&page),
        Err(e) => printer.error(&e),
    };
    let mut v: Value = serde_json::from_str(&text).unwrap();
    if let Some(o) = v.as_object_mut() {
        o.remove("coverage");
        o.remove("notice");
    }
    v
}

#[test]
fn the_index_answers_from_located_lines_what_a_scan_answers() {
    let roots = Roots::new();
    let calls = Arc::new(Mutex::new(Calls::default()));
    let db = roots.dir.path().join("index.sqlite");
    let mut store = Store::open(&db).unwrap();
    let indexing = corpus(&roots, &calls);
    update(&mut store, &indexing, "test", &mut |_, _| {}).unwrap();
    // What the index cannot cover: sessions it failed, those built from several files, and
    // compressed files, which cannot be read at a line.
    let rows = store.sessions().unwrap();
    let covered: Vec<PathBuf> = rows
        .iter()
        .filter(|r| {
            r.state == history_index::store::SessionState::Indexed
                && r.witnesses.len() == 1
                && r.root_path.extension().is_none_or(|e| e != "zst")
        })
        .map(|r| r.root_path.clone())
        .collect();
    assert!(
        covered.len() >= 10,
        "the fixtures cover few sessions: {covered:?}"
    );
    let indexed = History::new(corpus(&roots, &calls)).with_projection(Some(Box::new(Index::new(
        Store::open(&db).unwrap(),
        "test",
    ))));
    let scanned = History::new(corpus(&roots, &Arc::new(Mutex::new(Calls::default()))));

    let mut located = 0;
    let queries = [
        "the", "git", "test", "review", "ls -la", "agents", "Hello", "STRASSE", "ß",
    ];
    for query in queries {
        // A query shorter than a token is answered by scanning.
        let tokens = query.chars().count() >= 3;
        for from in [From::Newest, From::Oldest] {
            for (limit, roles, all_branches) in [
                (20, vec![], false),
                (1, vec![], false),
                (3, vec![Role::User, Role::Assistant], false),
                (5, vec![Role::Tool], true),
            ] {
                let req = ListRequest {
                    session: Some("*".into()),
                    queries: vec![query.into()],
                    roles,
                    from: Some(from),
                    limit,
                    all_branches,
                    ..ListRequest::default()
                };
                *calls.lock().unwrap() = Calls::default();
                let with = page(&indexed, &req);
                assert_eq!(with, page(&scanned, &req), "{query:?} {from:?} {limit}");
                let calls = calls.lock().unwrap();
                let decoded_covered: Vec<_> = calls
                    .decoded
                    .iter()
                    .filter(|p| covered.contains(p))
                    .collect();
                assert!(
                    !tokens || decoded_covered.is_empty(),
                    "{query:?}: sessions the index covers were decoded: {decoded_covered:?}"
                );
                located += calls.located;
            }
        }
    }
    assert!(located > 0, "no line was ever read by location");
}
