//! The demo sessions the binary carries (`--demo`): a few real transcripts of each agent,
//! written out once under the cache, so that a machine without sessions of its own can try
//! every command.

use std::path::{Path, PathBuf};

use history_core::{Harness, HistoryError};

/// Each demo transcript, by its path under the demo's directory (a root per harness).
const FILES: &[(&str, &[u8])] = &[
    (
        "claude/-Users-soph-Work-entire-devenv-cli/70fc6d83-147d-4fdf-b015-bd67eeb11883.jsonl",
        include_bytes!("../../../fixtures/demo/claude/-Users-soph-Work-entire-devenv-cli/70fc6d83-147d-4fdf-b015-bd67eeb11883.jsonl"),
    ),
    (
        "claude/-Users-soph-Work-entire-devenv-cli/abandoned-branch.jsonl",
        include_bytes!("../../../fixtures/demo/claude/-Users-soph-Work-entire-devenv-cli/abandoned-branch.jsonl"),
    ),
    (
        "claude/-Users-soph-Work-entire-devenv-cli/compaction-across-boundary.jsonl",
        include_bytes!("../../../fixtures/demo/claude/-Users-soph-Work-entire-devenv-cli/compaction-across-boundary.jsonl"),
    ),
    (
        "claude/-Users-soph-Work-entire-devenv-cli/parallel-tool-results.jsonl",
        include_bytes!("../../../fixtures/demo/claude/-Users-soph-Work-entire-devenv-cli/parallel-tool-results.jsonl"),
    ),
    (
        "codex/2026/02/23/rollout-2026-02-23T20-34-25-019c8bfe-ec25-79e0-97d7-bda6a9c575ff.jsonl",
        include_bytes!("../../../fixtures/demo/codex/2026/02/23/rollout-2026-02-23T20-34-25-019c8bfe-ec25-79e0-97d7-bda6a9c575ff.jsonl"),
    ),
    (
        "pi/--Users-ben-tui-pi--/2026-07-21T22-33-37-367Z_019f86d0-2b56-72c1-b90f-60a707fde7d7.jsonl",
        include_bytes!("../../../fixtures/demo/pi/--Users-ben-tui-pi--/2026-07-21T22-33-37-367Z_019f86d0-2b56-72c1-b90f-60a707fde7d7.jsonl"),
    ),
];

/// The demo's directory under `base`, its files written where they are missing or differ, and a
/// root for every harness of `registry` (empty for one the demo has no session of).
pub fn written(base: &Path, registry: &[&Harness]) -> Result<PathBuf, HistoryError> {
    let dir = base.join("demo");
    let failed = |e: std::io::Error| {
        HistoryError::usage(format!(
            "the demo cannot be written to {}: {e}",
            dir.display()
        ))
    };
    for (path, bytes) in FILES {
        let file = dir.join(path);
        if std::fs::read(&file).is_ok_and(|b| b == *bytes) {
            continue;
        }
        let parent = file.parent().unwrap_or(&dir);
        std::fs::create_dir_all(parent).map_err(failed)?;
        let mut temp = tempfile::NamedTempFile::new_in(parent).map_err(failed)?;
        std::io::Write::write_all(&mut temp, bytes).map_err(failed)?;
        temp.persist(&file).map_err(|e| failed(e.error))?;
    }
    for h in registry {
        std::fs::create_dir_all(dir.join(h.name)).map_err(failed)?;
    }
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_demo_is_written_once_and_mended_where_it_differs() {
        let base = tempfile::tempdir().unwrap();
        let other = history_core::Harness {
            name: "other",
            ..*crate::HARNESSES[0]
        };
        let registry = [&other];
        let dir = written(base.path(), &registry).unwrap();
        for (path, bytes) in FILES {
            assert_eq!(std::fs::read(dir.join(path)).unwrap(), *bytes);
        }
        assert!(dir.join("other").is_dir());
        let (first, bytes) = FILES[0];
        std::fs::write(dir.join(first), b"changed").unwrap();
        written(base.path(), &registry).unwrap();
        assert_eq!(std::fs::read(dir.join(first)).unwrap(), bytes);
    }
}
