//! History a thread inherits by reference: the chain of `session_meta.history_base` pointers
//! of paginated forks and reverts. (History that older forks copied into their own file needs
//! nothing here: it is read as the file's own lines.)

use std::collections::HashSet;
use std::fs;
use std::path::{Path, PathBuf};

use crate::discover::RolloutIndex;
use crate::header::{self, Header, HistoryBase};
use crate::reader::{self, LineReader};

/// The most ancestor files one session is built from; a longer chain is cut with a notice.
const MAX_DEPTH: usize = 64;

/// One ancestor file, opened and read up to its header, waiting to be decoded.
pub(crate) struct Ancestor {
    /// The file.
    pub path: PathBuf,
    /// Its lines after the header.
    pub lines: LineReader,
    /// Its header.
    pub header: Header,
    /// Damaged lines before its header: `(line number, terminated)`.
    pub damaged: Vec<(u64, bool)>,
    /// Where the inherited part of it ends (from its child's `history_base`).
    pub base: HistoryBase,
}

/// The ancestors of the thread whose file is `own` and header `head`, nearest first. Every
/// problem (a missing or unreadable ancestor, a cycle, a chain too deep) ends the chain with a
/// notice; it never fails the session.
pub(crate) fn ancestors(
    root: &Path,
    own: &Path,
    head: &Header,
    notices: &mut Vec<String>,
) -> Vec<Ancestor> {
    let mut chain = Vec::new();
    let Some(mut base) = head.history_base() else {
        return chain;
    };
    let mut index = RolloutIndex::new(root);
    let mut seen: HashSet<PathBuf> = HashSet::from([canonical(own)]);
    loop {
        if chain.len() == MAX_DEPTH {
            notices.push(format!(
                "inherited history is more than {MAX_DEPTH} files deep; older history is left out"
            ));
            break;
        }
        let Some(path) = index.find(&base.rollout).map(Path::to_path_buf) else {
            notices.push(format!(
                "inherited history from rollout {} was not found",
                base.rollout
            ));
            break;
        };
        if !seen.insert(canonical(&path)) {
            notices.push(format!(
                "inherited history from rollout {} forms a cycle; it is read once",
                base.rollout
            ));
            break;
        }
        let unavailable = |why: String| {
            format!(
                "inherited history in {} is unavailable: {why}",
                path.display()
            )
        };
        let mut lines = match reader::open(&path) {
            Ok(lines) => lines,
            Err(e) => {
                notices.push(unavailable(e.to_string()));
                break;
            }
        };
        let mut damaged = Vec::new();
        let header = match header::read(&mut lines, &mut damaged) {
            Ok(Some(header)) => header,
            Ok(None) => {
                notices.push(unavailable("it has no session_meta".into()));
                break;
            }
            Err(e) => {
                notices.push(unavailable(e.to_string()));
                break;
            }
        };
        let next = header.history_base();
        chain.push(Ancestor {
            path,
            lines,
            header,
            damaged,
            base,
        });
        match next {
            Some(n) => base = n,
            None => break,
        }
    }
    chain
}

fn canonical(path: &Path) -> PathBuf {
    fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}
