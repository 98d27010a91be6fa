//! The entry tree of one session file and the choice of its active branch.

use std::collections::{HashMap, HashSet};

/// One entry of a session file (every parsed line but the header), as a node of its tree.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Entry {
    /// The 1-based line the entry is on (two entries share it when a line holds two objects).
    pub seq: u64,
    /// The entry's id; synthesized from its order for version-1 files and entries without one.
    pub id: String,
    /// The id of the entry it was appended to, `None` for a root.
    pub parent_id: Option<String>,
    /// The entry's `type` (`message`, `compaction`…; empty when it has none).
    pub entry_type: String,
    /// For a compaction: the id of the first entry it kept (`firstKeptEntryId`, or the entry that
    /// a version-1 `firstKeptEntryIndex` points at).
    pub first_kept_id: Option<String>,
}

/// The tree of one session file: every entry, and which of them lie on the active branch.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tree {
    /// Every entry, in file order.
    pub entries: Vec<Entry>,
    /// The sorted, distinct seqs of the entries on the active branch.
    pub branch: Vec<u64>,
    /// Indexes into `entries` of the active branch, root first.
    pub path: Vec<usize>,
}

impl Tree {
    /// The entry with this id (its first occurrence when a buggy fork wrote it twice).
    pub fn entry(&self, id: &str) -> Option<&Entry> {
        self.entries.iter().find(|e| e.id == id)
    }

    /// The seq of the entry with this id.
    pub fn seq_of(&self, id: &str) -> Option<u64> {
        self.entry(id).map(|e| e.seq)
    }

    /// The entries of the active branch, root first.
    pub fn active_path(&self) -> impl Iterator<Item = &Entry> {
        self.path.iter().filter_map(|&i| self.entries.get(i))
    }
}

/// Builds the tree as entries stream past, then walks the active branch.
#[derive(Default, serde::Serialize, serde::Deserialize)]
pub(crate) struct Growing {
    entries: Vec<Entry>,
    first_by_id: HashMap<String, usize>,
}

/// What went wrong while walking the active branch.
pub(crate) enum Break {
    /// An entry names a parent that is not in the file.
    MissingParent { seq: u64, parent: String },
    /// The parent of the entry on this line is already on the branch: the links loop.
    Cycle { seq: u64 },
}

impl Growing {
    /// The id of the last entry added.
    pub(crate) fn last_id(&self) -> Option<&str> {
        self.entries.last().map(|e| e.id.as_str())
    }

    pub(crate) fn push(&mut self, entry: Entry) {
        let index = self.entries.len();
        self.first_by_id.entry(entry.id.clone()).or_insert(index);
        self.entries.push(entry);
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The leaf is the last entry in file order; the branch is its chain of parents up to a
    /// root, a missing parent, or the first entry seen twice.
    pub(crate) fn finish(self) -> (Tree, Option<Break>) {
        let mut path = Vec::new();
        let mut seen = HashSet::new();
        let mut broke = None;
        let mut next = self
            .entries
            .last()
            .and_then(|leaf| self.first_by_id.get(&leaf.id).copied());
        while let Some(index) = next {
            if !seen.insert(index) {
                let seq = path
                    .last()
                    .and_then(|&i| self.entries.get(i))
                    .map_or(0, |e: &Entry| e.seq);
                broke = Some(Break::Cycle { seq });
                break;
            }
            path.push(index);
            let Some(entry) = self.entries.get(index) else {
                break;
            };
            next = match &entry.parent_id {
                None => None,
                Some(parent) => match self.first_by_id.get(parent) {
                    Some(&p) => Some(p),
                    None => {
                        broke = Some(Break::MissingParent {
                            seq: entry.seq,
                            parent: parent.clone(),
                        });
                        None
                    }
                },
            };
        }
        path.reverse();
        let mut branch: Vec<u64> = path
            .iter()
            .filter_map(|&i| self.entries.get(i).map(|e| e.seq))
            .collect();
        branch.sort_unstable();
        branch.dedup();
        let tree = Tree {
            entries: self.entries,
            branch,
            path,
        };
        (tree, broke)
    }
}
