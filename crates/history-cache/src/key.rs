//! What an entry is for: the session's key, and the stable file name derived from it.

use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// Which session an entry describes.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Key {
    /// The canonical path of the session's own transcript (for Codex, the root, not an ancestor).
    pub root_path: PathBuf,
    /// The harness that wrote the session (`claude`, `codex`, `pi`…).
    pub harness: String,
    /// The harness's own session id.
    pub session_id: String,
}

impl Key {
    /// Builds a key; `root_path` should already be canonical (see [`std::fs::canonicalize`]).
    pub fn new(
        root_path: impl Into<PathBuf>,
        harness: impl Into<String>,
        session_id: impl Into<String>,
    ) -> Key {
        Key {
            root_path: root_path.into(),
            harness: harness.into(),
            session_id: session_id.into(),
        }
    }

    /// The entry's file name: the FNV-1a 64 hash of the key's fields joined by NUL, in hex.
    ///
    /// FNV rather than std's hasher because the name must not change between builds or Rust
    /// versions. It is not collision-proof, which is why an entry also stores its key.
    pub fn file_name(&self) -> String {
        let fields: [&[u8]; 3] = [
            self.root_path.as_os_str().as_bytes(),
            self.harness.as_bytes(),
            self.session_id.as_bytes(),
        ];
        format!("{:016x}.json", fnv1a64(&fields.join(&0u8)))
    }
}

/// The 64-bit FNV-1a hash.
fn fnv1a64(bytes: &[u8]) -> u64 {
    use std::hash::Hasher;
    let mut h = fnv::FnvHasher::default();
    h.write(bytes);
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a64_matches_the_published_vectors() {
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a64(b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn the_file_name_is_stable_and_separates_fields() {
        let key = Key::new("/r/s.jsonl", "pi", "s");
        assert_eq!(key.file_name(), key.clone().file_name());
        assert_eq!(key.file_name().len(), "0123456789abcdef.json".len());
        // Moving a byte across the separator must give another name.
        let shifted = Key::new("/r/s.jsonl", "p", "is");
        assert_ne!(key.file_name(), shifted.file_name());
    }
}
