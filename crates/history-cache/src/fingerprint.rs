//! What a source file looked like when it was read: history-core's stat [`Fingerprint`].

use std::path::Path;

pub use history_core::{fingerprints, Fingerprint};

/// Takes the fingerprint of `path`, following symbolic links.
pub fn fingerprint(path: &Path) -> std::io::Result<Fingerprint> {
    Fingerprint::of(path)
}
