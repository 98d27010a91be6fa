//! The conversation graph: lines linked by `parentUuid`, the choice of the live leaf, and the
//! branch it stands on.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::table::Table;

/// What a graph node is, for the choice of leaf.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum NodeKind {
    /// A user or assistant line.
    Message,
    /// An attachment or progress line: hook callbacks and streaming, never a preferred leaf.
    Aside,
    /// A system line.
    Other,
}

/// One line (or a uuid only named as a parent), small and flat: a session of a million lines
/// keeps a million of these, and a snapshot loads them without an allocation each. Response and
/// tool-call ids are [`Names`]; a line's tool calls, then its tool results, are the run of
/// [`Graph::calls`] from `calls`.
struct Node {
    seq: u64,
    parent: Option<u32>,
    /// The parent across a compaction boundary.
    logical: Option<u32>,
    /// The API response an assistant line is part of (`message.id`).
    response: Option<u32>,
    calls: u32,
    uses: u32,
    results: u32,
    kind: NodeKind,
    foreign: bool,
    /// Whether the node appeared as a line (not only as someone's parent).
    present: bool,
    has_child: bool,
}

/// [`Graph::nodes`] in a snapshot: one fixed-size record each, in one byte string, which loads
/// without a step per field (30k nodes took 1.8 ms to load field by field).
mod records {
    use serde::{Deserialize, Deserializer, Serializer};

    use super::{Node, NodeKind};

    const SIZE: usize = 33;

    /// An optional number as one more than itself, `None` as zero.
    fn opt(n: Option<u32>) -> u32 {
        n.map_or(0, |n| n + 1)
    }

    pub(super) fn serialize<S: Serializer>(nodes: &[Node], s: S) -> Result<S::Ok, S::Error> {
        let mut out = Vec::with_capacity(nodes.len() * SIZE);
        for n in nodes {
            out.extend_from_slice(&n.seq.to_le_bytes());
            for word in [opt(n.parent), opt(n.logical), opt(n.response)] {
                out.extend_from_slice(&word.to_le_bytes());
            }
            for word in [n.calls, n.uses, n.results] {
                out.extend_from_slice(&word.to_le_bytes());
            }
            let kind = match n.kind {
                NodeKind::Message => 0,
                NodeKind::Aside => 1,
                NodeKind::Other => 2,
            };
            let flags = u8::from(n.foreign) | u8::from(n.present) << 1 | u8::from(n.has_child) << 2;
            out.push(kind | flags << 2);
        }
        s.serialize_bytes(&out)
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Node>, D::Error> {
        let bytes = serde_bytes::ByteBuf::deserialize(d)?;
        if bytes.len() % SIZE != 0 {
            return Err(serde::de::Error::custom("a node record is cut short"));
        }
        let word = |b: &[u8], at: usize| u32::from_le_bytes(b[at..at + 4].try_into().expect("4"));
        let none_or = |w: u32| w.checked_sub(1);
        let mut nodes = Vec::with_capacity(bytes.len() / SIZE);
        for r in bytes.chunks_exact(SIZE) {
            let kind = match r[32] & 3 {
                0 => NodeKind::Message,
                1 => NodeKind::Aside,
                2 => NodeKind::Other,
                _ => return Err(serde::de::Error::custom("an unknown node kind")),
            };
            let flags = r[32] >> 2;
            nodes.push(Node {
                seq: u64::from_le_bytes(r[..8].try_into().expect("8 bytes")),
                parent: none_or(word(r, 8)),
                logical: none_or(word(r, 12)),
                response: none_or(word(r, 16)),
                calls: word(r, 20),
                uses: word(r, 24),
                results: word(r, 28),
                kind,
                foreign: flags & 1 != 0,
                present: flags & 2 != 0,
                has_child: flags & 4 != 0,
            });
        }
        Ok(nodes)
    }
}

/// Strings given numbers in the order first seen: each is stored once however many lines name
/// it. Uuids in their canonical form (lowercase hex, hyphens at 8-4-4-4-12, as Claude Code
/// writes them) are kept as the 128-bit number they spell; any other id as text. The names a
/// snapshot held stay in its [`Table`]s; only those seen after it go into the maps.
#[derive(Default)]
struct Names {
    uuids: FastMap<u128, u32>,
    others: FastMap<Box<str>, u32>,
    /// Uuids as their 16 big-endian bytes, from a snapshot.
    frozen_uuids: Table,
    frozen_others: Table,
}

/// What a snapshot keeps of [`Names`]: every name in its table.
#[derive(Serialize, Deserialize)]
struct FrozenNames {
    uuids: Table,
    others: Table,
}

impl Serialize for Names {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let uuids = self
            .uuids
            .iter()
            .map(|(n, i)| (n.to_be_bytes(), *i))
            .collect();
        let others = self
            .others
            .iter()
            .map(|(n, i)| (n.as_bytes(), *i))
            .collect();
        FrozenNames {
            uuids: self.frozen_uuids.merged(uuids),
            others: self.frozen_others.merged(others),
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for Names {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Names, D::Error> {
        let frozen = FrozenNames::deserialize(d)?;
        Ok(Names {
            frozen_uuids: frozen.uuids,
            frozen_others: frozen.others,
            ..Names::default()
        })
    }
}

impl Names {
    fn with_capacity(n: usize) -> Names {
        Names {
            uuids: FastMap::with_capacity_and_hasher(n, Default::default()),
            ..Names::default()
        }
    }

    fn len(&self) -> usize {
        self.uuids.len() + self.others.len() + self.frozen_uuids.len() + self.frozen_others.len()
    }

    /// The number of `name`, and whether it is new.
    fn intern(&mut self, name: &str) -> (u32, bool) {
        use std::collections::hash_map::Entry;
        let next = self.len() as u32;
        let known = match canonical_uuid(name) {
            Some(n) => match self.uuids.entry(n) {
                Entry::Occupied(e) => Some(*e.get()),
                Entry::Vacant(e) => {
                    let frozen = self.frozen_uuids.get(&n.to_be_bytes());
                    if frozen.is_none() {
                        e.insert(next);
                    }
                    frozen
                }
            },
            None => {
                let known = (self.others.get(name).copied())
                    .or_else(|| self.frozen_others.get(name.as_bytes()));
                if known.is_none() {
                    self.others.insert(name.into(), next);
                }
                known
            }
        };
        known.map_or((next, true), |i| (i, false))
    }
}

/// The number a uuid in canonical form spells; `None` for any other text (so that two ids that
/// differ only in case stay two ids).
fn canonical_uuid(s: &str) -> Option<u128> {
    let b = s.as_bytes();
    if b.len() != 36 || [8, 13, 18, 23].iter().any(|&i| b[i] != b'-') {
        return None;
    }
    let mut n: u128 = 0;
    for (i, &c) in b.iter().enumerate() {
        if matches!(i, 8 | 13 | 18 | 23) {
            continue;
        }
        let digit = match c {
            b'0'..=b'9' => c - b'0',
            b'a'..=b'f' => c - b'a' + 10,
            _ => return None,
        };
        n = n << 4 | u128::from(digit);
    }
    Some(n)
}

/// A map with a fast hash (FxHash): the keys are the user's own transcript ids, not adversarial
/// input, and SipHash showed up in profiles.
pub(crate) type FastMap<K, V> = rustc_hash::FxHashMap<K, V>;

/// The lines of one file, by interned uuid.
#[derive(Default, Serialize, Deserialize)]
pub(crate) struct Graph {
    /// The lines' uuids, numbered as their nodes are.
    ids: Names,
    /// Response and tool-call ids.
    names: Names,
    #[serde(with = "records")]
    nodes: Vec<Node>,
    /// The nodes' tool-call and tool-result ids, a run per node.
    calls: Vec<u32>,
    /// Compaction boundaries that kept recent messages, with what they kept.
    boundaries: Vec<Boundary>,
}

/// A compaction boundary that kept messages where they were in the file (`preservedSegment`,
/// `preservedMessages`): the conversation goes on from the last kept message, not from the
/// boundary and its summary.
#[derive(Serialize, Deserialize)]
struct Boundary {
    node: u32,
    /// The line the kept messages follow once the harness loads them: the summary.
    anchor: Option<u32>,
    kept: Vec<u32>,
}

/// What a `compact_boundary` line's `compactMetadata` says it kept.
#[derive(Default)]
pub(crate) struct Kept {
    anchor: Option<String>,
    uuids: Vec<String>,
}

impl Kept {
    /// What a line of type `kind` kept, if it is a boundary that kept anything. The metadata's
    /// shape varies by version, and an odd one keeps nothing rather than losing the line.
    pub(crate) fn of(kind: &str, metadata: Option<&Value>) -> Option<Kept> {
        let metadata = metadata.filter(|_| kind == "system")?;
        let text = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).map(str::to_owned);
        let mut kept = Kept::default();
        if let Some(messages) = metadata.get("preservedMessages") {
            kept.anchor = text(messages, "anchorUuid");
            for key in ["uuids", "allUuids"] {
                let uuids = messages.get(key).and_then(Value::as_array);
                kept.uuids.extend(
                    uuids
                        .into_iter()
                        .flatten()
                        .filter_map(Value::as_str)
                        .map(str::to_owned),
                );
            }
        }
        if let Some(segment) = metadata.get("preservedSegment") {
            kept.anchor = kept.anchor.or_else(|| text(segment, "anchorUuid"));
            kept.uuids.extend(
                ["headUuid", "tailUuid"]
                    .into_iter()
                    .filter_map(|k| text(segment, k)),
            );
        }
        (!kept.uuids.is_empty()).then_some(kept)
    }
}

/// One line's place in the graph.
pub(crate) struct Link<'a> {
    pub(crate) seq: u64,
    pub(crate) parent: Option<&'a str>,
    pub(crate) logical: Option<&'a str>,
    pub(crate) kind: NodeKind,
    pub(crate) foreign: bool,
    pub(crate) response: Option<String>,
    pub(crate) tool_uses: Vec<String>,
    pub(crate) tool_results: Vec<String>,
    /// For a compaction boundary, the messages it kept.
    pub(crate) kept: Option<Kept>,
}

/// The selected branch.
pub(crate) struct Branch {
    pub(crate) seqs: Vec<u64>,
    pub(crate) notices: Vec<String>,
}

impl Graph {
    /// Whether every number in the graph names a node, an id or a run it holds: always so for
    /// a graph built here, not for one loaded from a damaged snapshot.
    pub(crate) fn is_whole(&self) -> bool {
        let (nodes, names, calls) = (self.nodes.len(), self.names.len(), self.calls.len());
        let node = |n: &u32| (*n as usize) < nodes;
        self.ids.len() == nodes
            && self.calls.iter().all(|&c| (c as usize) < names)
            && self.nodes.iter().all(|n| {
                n.parent.iter().chain(&n.logical).all(node)
                    && n.response.is_none_or(|r| (r as usize) < names)
                    && (n.calls as u64 + n.uses as u64 + n.results as u64) <= calls as u64
            })
            && (self.boundaries.iter())
                .all(|b| node(&b.node) && b.anchor.iter().chain(&b.kept).all(node))
    }

    /// A graph with room for about `lines` lines.
    pub(crate) fn with_capacity(lines: usize) -> Graph {
        Graph {
            ids: Names::with_capacity(lines),
            names: Names::default(),
            nodes: Vec::with_capacity(lines),
            calls: Vec::new(),
            boundaries: Vec::new(),
        }
    }

    fn intern(&mut self, uuid: &str) -> u32 {
        let (i, new) = self.ids.intern(uuid);
        if new {
            self.nodes.push(Node {
                seq: 0,
                parent: None,
                logical: None,
                response: None,
                calls: 0,
                uses: 0,
                results: 0,
                kind: NodeKind::Other,
                foreign: false,
                present: false,
                has_child: false,
            });
        }
        i
    }

    /// Node `n`'s tool-use ids and tool-result ids.
    fn calls_of(&self, n: &Node) -> (&[u32], &[u32]) {
        let start = n.calls as usize;
        let (uses, results) = (n.uses as usize, n.results as usize);
        let run = &self.calls[start..start + uses + results];
        run.split_at(uses)
    }

    /// Records a line. The first line with a given uuid wins; replays are ignored.
    pub(crate) fn add(&mut self, uuid: &str, link: Link<'_>) {
        let me = self.intern(uuid);
        if self.nodes[me as usize].present {
            return;
        }
        let parent = link.parent.filter(|p| *p != uuid).map(|p| self.intern(p));
        let logical = link.logical.filter(|p| *p != uuid).map(|p| self.intern(p));
        for p in parent.iter().chain(logical.iter()) {
            self.nodes[*p as usize].has_child = true;
        }
        if let Some(kept) = link.kept {
            let boundary = Boundary {
                node: me,
                anchor: kept.anchor.as_deref().map(|a| self.intern(a)),
                kept: kept.uuids.iter().map(|k| self.intern(k)).collect(),
            };
            self.boundaries.push(boundary);
        }
        let response = link.response.map(|r| self.names.intern(&r).0);
        let calls = self.calls.len() as u32;
        for id in link.tool_uses.iter().chain(&link.tool_results) {
            let (n, _) = self.names.intern(id);
            self.calls.push(n);
        }
        let node = &mut self.nodes[me as usize];
        *node = Node {
            seq: link.seq,
            parent,
            logical,
            response,
            calls,
            uses: link.tool_uses.len() as u32,
            results: link.tool_results.len() as u32,
            kind: link.kind,
            foreign: link.foreign,
            present: true,
            has_child: node.has_child,
        };
    }

    /// The line the conversation ends at: of the lines that end a chain, the one whose last
    /// message or system line is last in the file. Attachment and progress lines (hook
    /// callbacks, streaming, the prompt snapshot Claude Code writes after a reply) end a chain
    /// where the message they hang off does; so a parallel tool call's result that the
    /// conversation did not go on from never outranks the reply an attachment follows.
    fn leaf(&self) -> Option<usize> {
        // Per node, the seq of its nearest ancestor-or-self that is no aside line (`None`: none
        // is present), found once per node however many leaves share a chain of asides.
        let mut anchor: Vec<Option<Option<u64>>> = vec![None; self.nodes.len()];
        let mut path = Vec::new();
        let mut anchor_of = |leaf: usize| {
            let mut at = Some(leaf);
            let found = loop {
                let Some(i) = at else { break None };
                if let Some(known) = anchor[i] {
                    break known;
                }
                let n = &self.nodes[i];
                if !n.present {
                    break None;
                }
                if n.kind != NodeKind::Aside {
                    break Some(n.seq);
                }
                // A loop of asides ends the walk: it has no anchor.
                if path.len() > self.nodes.len() {
                    break None;
                }
                path.push(i);
                at = n.parent.map(|p| p as usize);
            };
            for i in path.drain(..) {
                anchor[i] = Some(found);
            }
            found
        };
        (0..self.nodes.len())
            .filter(|&i| {
                let n = &self.nodes[i];
                n.present && !n.foreign && !n.has_child
            })
            .max_by_key(|&i| (anchor_of(i), self.nodes[i].seq))
    }

    /// Chooses the leaf ([`Graph::leaf`]), walks its ancestors across compaction boundaries,
    /// and adds the tool results that hang off the branch's tool calls.
    /// Kept whole: the walk and the tool results share its marks of the lines on the branch.
    pub(crate) fn select(&self) -> Result<Branch, String> {
        let leaf = self
            .leaf()
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
        self.add_kept_compactions(&mut on, &mut seqs);
        // Parallel tool calls: the calls of one response form a chain, each result hangs off
        // its own call, and the conversation goes on from only one result. The sibling calls
        // and results still belong to the branch; anything else hanging off it does not.
        // The children of every present line, as runs by parent: parent `p`'s are
        // `children[starts[p]..starts[p + 1]]`, in node order.
        let linked = |n: &Node| match (n.present, n.foreign, n.parent) {
            (true, false, Some(p)) => Some(p as usize),
            _ => None,
        };
        let mut starts = vec![0u32; self.nodes.len() + 1];
        for p in self.nodes.iter().filter_map(linked) {
            starts[p + 1] += 1;
        }
        for i in 1..starts.len() {
            starts[i] += starts[i - 1];
        }
        let mut children = vec![0u32; starts[self.nodes.len()] as usize];
        let mut next = starts.clone();
        for (i, n) in self.nodes.iter().enumerate() {
            if let Some(p) = linked(n) {
                children[next[p] as usize] = i as u32;
                next[p] += 1;
            }
        }
        let mut queue: Vec<u32> = (0..self.nodes.len() as u32)
            .filter(|&i| on[i as usize])
            .collect();
        while let Some(p) = queue.pop() {
            let parent = &self.nodes[p as usize];
            let run = &children[starts[p as usize] as usize..starts[p as usize + 1] as usize];
            for &c in run {
                let child = &self.nodes[c as usize];
                let same_response = child.response.is_some() && child.response == parent.response;
                let (uses, _) = self.calls_of(parent);
                let (_, results) = self.calls_of(child);
                let answers = results.iter().any(|id| uses.contains(id));
                if !on[c as usize] && (same_response || answers) {
                    on[c as usize] = true;
                    seqs.push(child.seq);
                    queue.push(c);
                }
            }
        }
        seqs.sort_unstable();
        seqs.dedup();
        Ok(Branch { seqs, notices })
    }

    /// A compaction that kept recent messages leaves them linked to the lines before them, and
    /// the conversation goes on from them: a walk back from the leaf passes the kept messages
    /// and the history before them, never the boundary or its summary. When a boundary's kept
    /// messages are on the branch, so are the boundary, the lines from it to its anchor (the
    /// summary; else its own children) and the lines before it through `logicalParentUuid`
    /// (the first may hang off a `system` `away_summary` line) that the walk did not pass.
    fn add_kept_compactions(&self, on: &mut [bool], seqs: &mut Vec<u64>) {
        let mut add = |i: u32, on: &mut [bool]| {
            let node = &self.nodes[i as usize];
            let fresh = node.present && !node.foreign && !on[i as usize];
            if fresh {
                on[i as usize] = true;
                seqs.push(node.seq);
            }
            fresh
        };
        // One boundary's lines can hold another's kept messages: go round until none is added.
        let mut added = true;
        while added {
            added = false;
            for b in &self.boundaries {
                if on[b.node as usize] || !b.kept.iter().any(|&k| on[k as usize]) {
                    continue;
                }
                if !add(b.node, on) {
                    continue;
                }
                added = true;
                match b.anchor.and_then(|a| self.path_up(a, b.node)) {
                    Some(path) => path.into_iter().for_each(|i| {
                        add(i, on);
                    }),
                    None => {
                        let children = (0..self.nodes.len() as u32)
                            .filter(|&c| self.nodes[c as usize].parent == Some(b.node));
                        children.for_each(|c| {
                            add(c, on);
                        });
                    }
                }
                let mut at = self.nodes[b.node as usize].logical;
                while let Some(i) = at {
                    if !add(i, on) {
                        break;
                    }
                    let node = &self.nodes[i as usize];
                    at = node.parent.or(node.logical);
                }
            }
        }
    }

    /// The lines from `from` up its parent links to `to` (excluded), if it descends from `to`.
    fn path_up(&self, from: u32, to: u32) -> Option<Vec<u32>> {
        let mut path = Vec::new();
        let mut at = Some(from);
        while let Some(i) = at {
            if i == to {
                return Some(path);
            }
            // Parent links can loop in a damaged file.
            if path.len() > self.nodes.len() {
                return None;
            }
            path.push(i);
            at = self.nodes[i as usize].parent;
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line<'a>(seq: u64, parent: Option<&'a str>, logical: Option<&'a str>) -> Link<'a> {
        Link {
            seq,
            parent,
            logical,
            kind: NodeKind::Message,
            foreign: false,
            response: None,
            tool_uses: Vec::new(),
            tool_results: Vec::new(),
            kept: None,
        }
    }

    fn boundary<'a>(seq: u64, logical: &'a str, anchor: &str, kept: &[&str]) -> Link<'a> {
        Link {
            kept: Some(Kept {
                anchor: Some(anchor.to_string()),
                uuids: kept.iter().map(|k| k.to_string()).collect(),
            }),
            ..line(seq, None, Some(logical))
        }
    }

    #[test]
    fn a_loaded_graph_that_names_what_it_lacks_is_not_whole() {
        let mut g = Graph::default();
        g.add("u1", line(1, None, None));
        g.add(
            "u2",
            Link {
                response: Some("r1".into()),
                tool_uses: vec!["t1".into()],
                ..line(2, Some("u1"), None)
            },
        );
        g.add("cb", boundary(3, "u2", "cs", &["u2"]));
        let saved = history_core::snapshot::save(&g);
        let loaded: Graph = history_core::snapshot::load(&saved).unwrap();
        assert!(loaded.is_whole());
        let damage: [&dyn Fn(&mut Graph); 5] = [
            &|g| g.nodes[1].parent = Some(9),
            &|g| g.nodes[1].response = Some(9),
            &|g| g.nodes[1].uses = 5,
            &|g| g.calls[0] = 9,
            &|g| g.boundaries[0].kept.push(9),
        ];
        for damage in damage {
            let mut g: Graph = history_core::snapshot::load(&saved).unwrap();
            damage(&mut g);
            assert!(!g.is_whole());
        }
    }

    #[test]
    fn kept_messages_bring_their_boundary_and_summary_onto_the_branch() {
        let mut g = Graph::default();
        g.add("u1", line(1, None, None));
        g.add("u2", line(2, Some("u1"), None));
        g.add("cb", boundary(3, "u2", "cs", &["u2"]));
        g.add("cs", line(4, Some("cb"), None));
        g.add("u3", line(5, Some("u2"), None));
        assert_eq!(g.select().unwrap().seqs, [1, 2, 3, 4, 5]);
        let mut without = Graph::default();
        without.add("u1", line(1, None, None));
        without.add("cb", boundary(2, "u1", "cs", &["gone"]));
        without.add("cs", line(3, Some("cb"), None));
        without.add("u2", line(4, Some("u1"), None));
        assert_eq!(
            without.select().unwrap().seqs,
            [1, 4],
            "a boundary whose kept lines are off the branch stays off it"
        );
    }

    #[test]
    fn ids_are_numbers_only_in_their_canonical_form() {
        let uuid = "0c0ffee0-0000-4000-8000-00000000beef";
        assert_eq!(
            canonical_uuid(uuid),
            Some(0x0c0ffee0_0000_4000_8000_00000000beef)
        );
        for other in [
            "0C0FFEE0-0000-4000-8000-00000000BEEF",
            "0c0ffee0000040008000000000000beef",
            "0c0ffee0-0000-4000-8000-00000000beeg",
            "u1",
        ] {
            assert_eq!(canonical_uuid(other), None, "{other}");
        }
        let mut names = Names::default();
        assert_eq!(names.intern(uuid), (0, true));
        assert_eq!(
            names.intern("0C0FFEE0-0000-4000-8000-00000000BEEF"),
            (1, true)
        );
        assert_eq!(names.intern(uuid), (0, false));
        assert_eq!(names.intern("u1"), (2, true));
    }

    #[test]
    fn an_aside_leaf_ends_the_chain_where_its_message_does() {
        let aside = |seq, parent| Link {
            kind: NodeKind::Aside,
            ..line(seq, Some(parent), None)
        };
        let call = |seq, parent, id: &str| Link {
            response: Some("r1".into()),
            tool_uses: vec![id.into()],
            ..line(seq, Some(parent), None)
        };
        let result = |seq, parent, id: &str| Link {
            tool_results: vec![id.into()],
            ..line(seq, Some(parent), None)
        };
        // Two parallel calls; the conversation goes on from the second one's result, and the
        // reply after it is followed by an attachment (the prompt snapshot): the first call's
        // result, a leaf as well, is not the end.
        let mut g = Graph::default();
        g.add("u1", line(1, None, None));
        g.add("c1", call(2, "u1", "t1"));
        g.add("c2", call(3, "c1", "t2"));
        g.add("r1", result(4, "c1", "t1"));
        g.add("r2", result(5, "c2", "t2"));
        g.add("a1", aside(6, "r2"));
        g.add("re", line(7, Some("a1"), None));
        g.add("a2", aside(8, "re"));
        assert_eq!(g.select().unwrap().seqs, [1, 2, 3, 4, 5, 6, 7, 8]);
        // A hook's aside line hanging off an older message still does not outrank the later
        // message that ends another chain.
        let mut g = Graph::default();
        g.add("u1", line(1, None, None));
        g.add("u2", line(2, Some("u1"), None));
        g.add("h1", aside(3, "u1"));
        g.add("h2", aside(4, "h1"));
        assert_eq!(g.select().unwrap().seqs, [1, 2]);
        // Asides only: the last of them.
        let mut g = Graph::default();
        g.add(
            "a1",
            Link {
                kind: NodeKind::Aside,
                ..line(1, None, None)
            },
        );
        g.add("a2", aside(2, "a1"));
        g.add("a3", aside(3, "a1"));
        assert_eq!(g.select().unwrap().seqs, [1, 3]);
    }

    #[test]
    fn looping_links_around_a_boundary_end() {
        let mut g = Graph::default();
        g.add("u1", line(1, None, None));
        g.add("cb", boundary(2, "l1", "a1", &["u1"]));
        // The anchor's parents loop without reaching the boundary, and so do the lines
        // before it.
        g.add("a1", line(3, Some("a2"), None));
        g.add("a2", line(4, Some("a1"), None));
        g.add("l1", line(5, Some("l2"), None));
        g.add("l2", line(6, Some("l1"), None));
        g.add("u2", line(7, Some("u1"), None));
        assert_eq!(g.select().unwrap().seqs, [1, 2, 5, 6, 7]);
    }
}
