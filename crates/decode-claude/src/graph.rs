//! The conversation graph: lines linked by `parentUuid`, the choice of the live leaf, and the
//! branch it stands on.

use std::collections::HashMap;

/// What a graph node is, for the choice of leaf.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NodeKind {
    /// A user or assistant line.
    Message,
    /// An attachment or progress line: hook callbacks and streaming, never a preferred leaf.
    Aside,
    /// A system line.
    Other,
}

struct Node {
    seq: u64,
    parent: Option<u32>,
    /// The parent across a compaction boundary.
    logical: Option<u32>,
    kind: NodeKind,
    foreign: bool,
    tool_uses: Vec<String>,
    tool_results: Vec<String>,
    /// Whether the node appeared as a line (not only as someone's parent).
    present: bool,
    has_child: bool,
}

/// The lines of one file, by interned uuid.
#[derive(Default)]
pub(crate) struct Graph {
    ids: HashMap<String, u32>,
    nodes: Vec<Node>,
}

/// The selected branch.
pub(crate) struct Branch {
    pub(crate) seqs: Vec<u64>,
    pub(crate) notices: Vec<String>,
}

impl Graph {
    fn intern(&mut self, uuid: &str) -> u32 {
        if let Some(&i) = self.ids.get(uuid) {
            return i;
        }
        let i = self.nodes.len() as u32;
        self.ids.insert(uuid.to_string(), i);
        self.nodes.push(Node {
            seq: 0,
            parent: None,
            logical: None,
            kind: NodeKind::Other,
            foreign: false,
            tool_uses: Vec::new(),
            tool_results: Vec::new(),
            present: false,
            has_child: false,
        });
        i
    }

    /// Records a line. The first line with a given uuid wins; replays are ignored.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn add(
        &mut self,
        uuid: &str,
        seq: u64,
        parent: Option<&str>,
        logical: Option<&str>,
        kind: NodeKind,
        foreign: bool,
        tool_uses: Vec<String>,
        tool_results: Vec<String>,
    ) {
        let me = self.intern(uuid);
        if self.nodes[me as usize].present {
            return;
        }
        let parent = parent.filter(|p| *p != uuid).map(|p| self.intern(p));
        let logical = logical.filter(|p| *p != uuid).map(|p| self.intern(p));
        for p in parent.iter().chain(logical.iter()) {
            self.nodes[*p as usize].has_child = true;
        }
        let node = &mut self.nodes[me as usize];
        *node = Node {
            seq,
            parent,
            logical,
            kind,
            foreign,
            tool_uses,
            tool_results,
            present: true,
            has_child: node.has_child,
        };
    }

    /// Chooses the leaf (not an attachment/progress line when another exists; the last in file
    /// order among the rest), walks its ancestors across compaction boundaries, and adds the
    /// tool results that hang off the branch's tool calls.
    pub(crate) fn select(&self) -> Result<Branch, String> {
        let leaves: Vec<usize> = (0..self.nodes.len())
            .filter(|&i| {
                let n = &self.nodes[i];
                n.present && !n.foreign && !n.has_child
            })
            .collect();
        let last = |candidates: &mut dyn Iterator<Item = usize>| {
            candidates.max_by_key(|&i| self.nodes[i].seq)
        };
        let leaf = last(&mut leaves
            .iter()
            .copied()
            .filter(|&i| self.nodes[i].kind != NodeKind::Aside))
        .or_else(|| last(&mut leaves.iter().copied()))
        .ok_or("the conversation has no leaf (no line that ends a chain)")?;
        let mut notices = Vec::new();
        let mut on = vec![false; self.nodes.len()];
        let mut seqs = Vec::new();
        let mut at = Some(leaf as u32);
        while let Some(i) = at {
            let node = &self.nodes[i as usize];
            if on[i as usize] {
                notices.push(format!(
                    "the parent links loop at line {}; the history before it is not shown",
                    node.seq
                ));
                break;
            }
            if !node.present {
                notices.push(
                    "the conversation's earliest part is not in this file (a parent line is missing)"
                        .to_string(),
                );
                break;
            }
            on[i as usize] = true;
            seqs.push(node.seq);
            at = node.parent.or(node.logical);
        }
        // Parallel tool calls: each result hangs off its own call, and the conversation goes on
        // from only one of them; the others still belong to the branch.
        let calls: HashMap<&str, u32> = self
            .nodes
            .iter()
            .enumerate()
            .filter(|(i, _)| on[*i])
            .flat_map(|(i, n)| n.tool_uses.iter().map(move |id| (id.as_str(), i as u32)))
            .collect();
        for node in self.nodes.iter().filter(|n| n.present && !n.foreign) {
            let hangs_off_branch = node.parent.is_some_and(|p| on[p as usize]);
            if hangs_off_branch
                && node
                    .tool_results
                    .iter()
                    .any(|id| calls.get(id.as_str()) == node.parent.as_ref())
            {
                seqs.push(node.seq);
            }
        }
        seqs.sort_unstable();
        seqs.dedup();
        Ok(Branch { seqs, notices })
    }
}
