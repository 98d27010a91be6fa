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
    /// is in both, `pairs` wins. The runs of `self` between new keys are copied whole.
    pub(crate) fn merged<K: AsRef<[u8]>>(&self, mut pairs: Vec<(K, u32)>) -> Table {
        pairs.sort_unstable_by(|a, b| a.0.as_ref().cmp(b.0.as_ref()));
        let added: usize = pairs.iter().map(|p| p.0.as_ref().len()).sum();
        let mut out = Table {
            keys: Vec::with_capacity(self.keys.len() + added),
            entries: Vec::with_capacity(self.entries.len() + pairs.len() * ENTRY),
        };
        let mut from = 0;
        for (key, value) in &pairs {
            let key = key.as_ref();
            let at = self.position(key);
            out.copy_run(self, from..at);
            from = match at < self.len() && self.key(at) == key {
                true => at + 1,
                false => at,
            };
            out.push(key, *value);
        }
        out.copy_run(self, from..self.len());
        out
    }

    fn push(&mut self, key: &[u8], value: u32) {
        self.keys.extend_from_slice(key);
        // Keys and counts stay far below 4 GiB: one line is at most 64 MiB.
        self.entries
            .extend_from_slice(&(self.keys.len() as u32).to_le_bytes());
        self.entries.extend_from_slice(&value.to_le_bytes());
    }

    /// Appends `from`'s entries in `run`, their keys in one copy.
    fn copy_run(&mut self, from: &Table, run: std::ops::Range<usize>) {
        if run.is_empty() {
            return;
        }
        let start = from.start(run.start);
        let shift = self.keys.len() as i64 - start as i64;
        // A damaged table (its ends out of order) is copied as far as it reads, never panics.
        let keys = from.keys.get(start..from.entry(run.end - 1).0);
        self.keys.extend_from_slice(keys.unwrap_or_default());
        for i in run {
            let (end, value) = from.entry(i);
            self.entries
                .extend_from_slice(&((end as i64 + shift) as u32).to_le_bytes());
            self.entries.extend_from_slice(&value.to_le_bytes());
        }
    }

    /// The index of the first key not less than `key`.
    fn position(&self, key: &[u8]) -> usize {
        let (mut lo, mut hi) = (0, self.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match self.key(mid) < key {
                true => lo = mid + 1,
                false => hi = mid,
            }
        }
        lo
    }

    fn start(&self, i: usize) -> usize {
        match i {
            0 => 0,
            _ => self.entry(i - 1).0,
        }
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
        self.keys
            .get(self.start(i)..self.entry(i).0)
            .unwrap_or_default()
    }

    pub(crate) fn get(&self, key: &[u8]) -> Option<u32> {
        let at = self.position(key);
        (at < self.len() && self.key(at) == key).then(|| self.entry(at).1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    impl Table {
        fn iter(&self) -> impl Iterator<Item = (&[u8], u32)> {
            (0..self.len()).map(|i| (self.key(i), self.entry(i).1))
        }
    }

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

    #[test]
    fn a_damaged_table_reads_and_merges_without_a_panic() {
        // What it answers is undefined; that it answers is the point.
        let t = Table::default().merged(vec![("aa", 1), ("bb", 2), ("cc", 3)]);
        for cut in [0, 1, 7, 9, 16, 23] {
            let mut damaged = Table {
                keys: t.keys.clone(),
                entries: t.entries[..cut].to_vec(),
            };
            damaged.entries.extend_from_slice(&99u32.to_le_bytes());
            damaged.keys.truncate(3);
            let _ = (damaged.get(b"bb"), damaged.len());
            let merged = damaged.merged(vec![("ab", 4)]);
            let _ = (merged.get(b"ab"), merged.get(b"cc"));
        }
    }
}
