//! What a source file looked like when it was read: history-core's stat [`Fingerprint`], and the
//! [`Witness`] of each source an entry was decoded from, compared with the files now by
//! history-core's [`same_files`], the rule the search index uses too.

use std::path::Path;

pub use history_core::{fingerprints, same_files, Fingerprint, Witness};

/// Takes the fingerprint of `path`, following symbolic links.
pub fn fingerprint(path: &Path) -> std::io::Result<Fingerprint> {
    Fingerprint::of(path)
}
