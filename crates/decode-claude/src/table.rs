//! A map frozen into two flat buffers, sorted by key: what a snapshot keeps of the decoder's
//! maps of ids. Loading one copies its bytes and builds nothing (no allocation or hash per
//! entry), so that a decode resumed from a snapshot pays for the lines it reads, not for the
//! ones the snapshot stands for: the 2 MB state of a 128 MiB transcript (30k line uuids, 16k
//! response and tool ids) took 8–12 ms to load as hash maps.

use serde::{Deserialize, Serialize};

/// Byte-string keys, each with a `u32`, looked up by binary search.
#[derive(Default, Serialize, Deserialize)]
pub(crate) struct Table {
    /// The keys, concatenated in ascending order.
    #[serde(with = "serde_bytes")]
    keys: Vec<u8>,
    /// Per key, where it ends in `keys` and its value: two little-endian `u32`s.
    #[serde(with = "serde_bytes")]
    entries: Vec<u8>,
}

const ENTRY: usize = 8;

impl Table {
    /// The table of `self`'s entries and of `pairs` (distinct keys, as a map's): where a key
    /// is in both, `pairs` wins.
    pub(crate) fn merged<K: AsRef<[u8]>>(&self, mut pairs: Vec<(K, u32)>) -> Table {
        pairs.sort_unstable_by(|a, b| a.0.as_ref().cmp(b.0.as_ref()));
        let mut out = Table {
            keys: Vec::with_capacity(
                self.keys.len() + pairs.iter().map(|p| p.0.as_ref().len()).sum::<usize>(),
            ),
            entries: Vec::with_capacity(self.entries.len() + pairs.len() * ENTRY),
        };
        let mut old = self.iter().peekable();
        let mut new = pairs.iter().map(|(k, v)| (k.as_ref(), *v)).peekable();
        loop {
            let next = match (old.peek(), new.peek()) {
                (None, None) => break,
                (Some(_), None) => old.next(),
                (None, Some(_)) => new.next(),
                (Some(o), Some(n)) => match o.0.cmp(n.0) {
                    std::cmp::Ordering::Less => old.next(),
                    std::cmp::Ordering::Equal => {
                        old.next();
                        new.next()
                    }
                    std::cmp::Ordering::Greater => new.next(),
                },
            };
            let (key, value) = next.expect("peeked");
            out.keys.extend_from_slice(key);
            // Keys and counts stay far below 4 GiB: one line is at most 64 MiB.
            out.entries
                .extend_from_slice(&(out.keys.len() as u32).to_le_bytes());
            out.entries.extend_from_slice(&value.to_le_bytes());
        }
        out
    }

    pub(crate) fn len(&self) -> usize {
        self.entries.len() / ENTRY
    }

    /// Entry `i`: its key's end and its value.
    fn entry(&self, i: usize) -> (usize, u32) {
        let at = &self.entries[i * ENTRY..(i + 1) * ENTRY];
        let word = |b: &[u8]| u32::from_le_bytes(b.try_into().expect("4 bytes"));
        (word(&at[..4]) as usize, word(&at[4..]))
    }

    fn key(&self, i: usize) -> &[u8] {
        let start = if i == 0 { 0 } else { self.entry(i - 1).0 };
        let end = self.entry(i).0;
        self.keys.get(start..end).unwrap_or_default()
    }

    pub(crate) fn get(&self, key: &[u8]) -> Option<u32> {
        let (mut lo, mut hi) = (0, self.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match self.key(mid).cmp(key) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Some(self.entry(mid).1),
            }
        }
        None
    }

    /// Every key with its value, in key order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&[u8], u32)> {
        (0..self.len()).map(|i| (self.key(i), self.entry(i).1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_merge_keeps_every_key_once_and_the_newer_value() {
        let empty = Table::default();
        assert_eq!(empty.get(b"a"), None);
        let t = empty.merged(vec![
            (b"b".to_vec(), 2),
            (b"a".to_vec(), 1),
            (b"".to_vec(), 9),
        ]);
        assert_eq!(
            (t.get(b"a"), t.get(b"b"), t.get(b""), t.get(b"c")),
            (Some(1), Some(2), Some(9), None)
        );
        let t = t.merged(vec![("c", 3), ("b", 20), ("ab", 4)]);
        let all: Vec<(&[u8], u32)> = t.iter().collect();
        let want: Vec<(&[u8], u32)> = vec![(b"", 9), (b"a", 1), (b"ab", 4), (b"b", 20), (b"c", 3)];
        assert_eq!(all, want);
        let loaded: Table = serde_json::from_str(&serde_json::to_string(&t).unwrap()).unwrap();
        assert_eq!(loaded.iter().collect::<Vec<_>>(), want);
        for (k, v) in want {
            assert_eq!(loaded.get(k), Some(v));
        }
    }
}
