//! What a witness file looked like when it was indexed: its stat fingerprint
//! ([`history_core::fingerprint`]) and the hash of the bytes before its checkpoint.

use std::fs::File;
use std::hash::Hasher;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::Path;

pub use history_core::Fingerprint;

/// How many bytes at each end of the indexed prefix [`checkpoint_hash`] reads.
pub const CHECKPOINT_WINDOW: u64 = 4096;

/// The hash of what was indexed of the file at `path`, the `checkpoint` bytes before the
/// checkpoint offset: FNV-1a 64 over the offset, the first [`CHECKPOINT_WINDOW`] bytes and the
/// last [`CHECKPOINT_WINDOW`] bytes before it.
///
/// A file that grew is appended to only if this hash is unchanged; a difference means it was
/// rewritten and must be indexed again from the start. The ends are what rewriting tools
/// touch (a new header, a truncated and rewritten tail); a change confined to the middle of a
/// same-sized prefix, with the times restored, is beyond what a stat-and-sample check sees.
pub fn checkpoint_hash(path: &Path, checkpoint: u64) -> io::Result<u64> {
    checkpoint_hash_file(&File::open(path)?, checkpoint)
}

/// [`checkpoint_hash`] of an open file. An error of kind `UnexpectedEof` means the file is now
/// shorter than the checkpoint (it was truncated).
pub fn checkpoint_hash_file(file: &File, checkpoint: u64) -> io::Result<u64> {
    let head_len = checkpoint.min(CHECKPOINT_WINDOW);
    let tail_start = checkpoint.saturating_sub(CHECKPOINT_WINDOW).max(head_len);
    let mut head = vec![0; head_len as usize];
    file.read_exact_at(&mut head, 0)?;
    let mut tail = vec![0; (checkpoint - tail_start) as usize];
    file.read_exact_at(&mut tail, tail_start)?;
    Ok(checkpoint_hash_of(checkpoint, &head, &tail))
}

/// The hash [`checkpoint_hash`] computes, from bytes already in memory: `head` is the prefix's
/// first `min(checkpoint, 4096)` bytes, `tail` the bytes after `head` among its last 4096.
pub fn checkpoint_hash_of(checkpoint: u64, head: &[u8], tail: &[u8]) -> u64 {
    // FNV rather than std's hasher: the value is stored and must not change between builds.
    let mut h = fnv::FnvHasher::default();
    h.write(&checkpoint.to_le_bytes());
    h.write(head);
    h.write(tail);
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_append_changes_the_fingerprint_but_not_the_checkpoint_hash() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let body: Vec<u8> = (0..10_000u32).map(|i| (i % 251) as u8).collect();
        std::fs::write(&path, &body).unwrap();
        let before = Fingerprint::of(&path).unwrap();
        let hash = checkpoint_hash(&path, 9_000).unwrap();
        let mut longer = body.clone();
        longer.extend_from_slice(b"more\n");
        std::fs::write(&path, &longer).unwrap();
        let after = Fingerprint::of(&path).unwrap();
        assert_ne!(before, after);
        assert!(after.may_extend(&before));
        assert_eq!(checkpoint_hash(&path, 9_000).unwrap(), hash);
        assert_eq!(
            Fingerprint::of_file(&File::open(&path).unwrap()).unwrap(),
            after
        );
    }

    #[test]
    fn a_rewrite_at_either_end_changes_the_checkpoint_hash() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        for len in [0u64, 10, 5000, 9000, 20_000] {
            let body = vec![b'a'; len as usize];
            std::fs::write(&path, &body).unwrap();
            let hash = checkpoint_hash(&path, len).unwrap();
            for at in [0, len / 2, len.saturating_sub(1)] {
                if len == 0 || (len > 2 * CHECKPOINT_WINDOW && at == len / 2) {
                    continue; // the middle of a long prefix is not sampled
                }
                let mut changed = body.clone();
                changed[at as usize] = b'b';
                std::fs::write(&path, &changed).unwrap();
                assert_ne!(checkpoint_hash(&path, len).unwrap(), hash, "{len} {at}");
            }
        }
        std::fs::write(&path, b"short").unwrap();
        let err = checkpoint_hash(&path, 6).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof);
    }
}
