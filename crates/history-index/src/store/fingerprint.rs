//! What a witness file looked like when it was indexed: its stat fingerprint
//! ([`history_core::fingerprint`]) and the hash of the bytes before its checkpoint.

use std::fs::File;
use std::hash::Hasher;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::Path;

pub use history_core::Fingerprint;

/// How many bytes each block [`checkpoint_hash`] reads holds.
pub const CHECKPOINT_WINDOW: u64 = 4096;

/// How many blocks [`checkpoint_hash`] reads of a long file.
const BLOCKS: u64 = 16;

/// The hash of what was indexed of the file at `path`, the `checkpoint` bytes before the
/// checkpoint offset: FNV-1a 64 over the offset and 16 blocks of [`CHECKPOINT_WINDOW`] bytes,
/// the first, the last, and 14 spread evenly between them (all the bytes of a shorter file).
/// The file is opened without touching its access time.
///
/// A file that grew is appended to only if this hash is unchanged; a difference means it was
/// rewritten and must be indexed again from the start. The ends are what rewriting tools
/// touch (a new header, a truncated and rewritten tail), and the blocks between catch, in
/// 64 KiB of reads, a rewrite of any stretch longer than a fifteenth of the file. A change of a
/// few bytes in the middle of a long file that also grew is beyond what a sample sees; one that
/// keeps the size is a rewrite by its changed fingerprint ([`crate::freshness`]).
pub fn checkpoint_hash(path: &Path, checkpoint: u64) -> io::Result<u64> {
    checkpoint_hash_file(&history_core::open_untouched(path)?, checkpoint)
}

/// [`checkpoint_hash`] of an open file. An error of kind `UnexpectedEof` means the file is now
/// shorter than the checkpoint (it was truncated).
pub fn checkpoint_hash_file(file: &File, checkpoint: u64) -> io::Result<u64> {
    // FNV rather than std's hasher: the value is stored and must not change between builds.
    let mut h = fnv::FnvHasher::default();
    h.write(&checkpoint.to_le_bytes());
    let mut block = vec![0; CHECKPOINT_WINDOW as usize];
    for start in checkpoint_blocks(checkpoint) {
        let block = &mut block[..(checkpoint - start).min(CHECKPOINT_WINDOW) as usize];
        file.read_exact_at(block, start)?;
        h.write(block);
    }
    Ok(h.finish())
}

/// Where the blocks of [`CHECKPOINT_WINDOW`] bytes [`checkpoint_hash`] reads of `len` bytes
/// start: every block of a short prefix, else 16 evenly spread from the first byte to the last
/// block.
pub fn checkpoint_blocks(len: u64) -> impl Iterator<Item = u64> {
    let short = len <= BLOCKS * CHECKPOINT_WINDOW;
    let (n, last) = match short {
        true => (len.div_ceil(CHECKPOINT_WINDOW), 0),
        false => (BLOCKS, len - CHECKPOINT_WINDOW),
    };
    (0..n).map(move |i| match short {
        true => i * CHECKPOINT_WINDOW,
        false => last * i / (BLOCKS - 1),
    })
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
    fn a_rewrite_of_a_block_read_or_a_longer_stretch_changes_the_checkpoint_hash() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let mut rng = fastrand::Rng::with_seed(7);
        for len in [
            0u64,
            10,
            5000,
            9000,
            65_536,
            65_537,
            70_000,
            1 << 20,
            5 << 20,
        ] {
            let body = vec![b'a'; len as usize];
            std::fs::write(&path, &body).unwrap();
            let hash = checkpoint_hash(&path, len).unwrap();
            let rewritten = |at: u64, n: u64| {
                let mut changed = body.clone();
                changed[at as usize..(at + n).min(len) as usize].fill(b'b');
                std::fs::write(&path, &changed).unwrap();
                checkpoint_hash(&path, len).unwrap()
            };
            if len == 0 {
                continue;
            }
            // A byte of each block read, the first and the last.
            for at in checkpoint_blocks(len).chain([len - 1]) {
                assert_ne!(rewritten(at, 1), hash, "{len} {at}");
            }
            // Any stretch as long as the gap between two blocks and one more block.
            let stretch = (len - CHECKPOINT_WINDOW.min(len)) / (BLOCKS - 1) + CHECKPOINT_WINDOW;
            for _ in 0..8 {
                let at = rng.u64(0..len);
                assert_ne!(rewritten(at, stretch), hash, "{len} {at}+{stretch}");
            }
        }
        std::fs::write(&path, b"short").unwrap();
        let err = checkpoint_hash(&path, 6).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof);
    }
}
