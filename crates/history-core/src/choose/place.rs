//! Selecting sessions by where they ran (`--cwd PATH`): a session is under a directory when its
//! working directory ([`crate::SessionMeta::cwd`], as [`crate::Transcript::cwd`] reads it) is
//! that directory or lies below it.
//!
//! Paths compare by their components after lexical normalization (`.` and `..` resolved,
//! repeated and trailing separators dropped), so `/w/app/` is under `/w/./app`, and `/w/apple`
//! is not under `/w/app`.
//!
//! ```
//! use history_core::Place;
//! let here = Place::new("../app".as_ref(), "/w/lib".as_ref());
//! assert!(here.contains("/w/app"));
//! assert!(here.contains("/w/app/crates/core/"));
//! assert!(!here.contains("/w/apple"));
//! ```

use std::path::{Component, Path, PathBuf};

/// A directory that sessions are selected by.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Place {
    /// The directory as named, absolute and normalized, first; then its canonical form where
    /// that differs: an agent records its directory as the system resolves it (`/private/tmp`
    /// for `/tmp` on macOS, a symbolic link's target), a person names it as they reach it.
    dirs: Vec<PathBuf>,
}

impl Place {
    /// The directory `path`, made absolute against `base` (the caller's working directory).
    pub fn new(path: &Path, base: &Path) -> Place {
        let named = normalize(&base.join(path));
        let mut dirs = vec![named.clone()];
        if let Ok(real) = std::fs::canonicalize(&named) {
            if real != named {
                dirs.push(real);
            }
        }
        Place { dirs }
    }

    /// The directory as named, absolute and normalized.
    pub fn path(&self) -> &Path {
        &self.dirs[0]
    }

    /// Whether a session that ran in `cwd` ran in this directory or below it. A relative `cwd`
    /// is no place on this machine and is under nothing.
    pub fn contains(&self, cwd: &str) -> bool {
        let cwd = Path::new(cwd);
        cwd.is_absolute() && {
            let cwd = normalize(cwd);
            self.dirs.iter().any(|dir| cwd.starts_with(dir))
        }
    }
}

/// `path` with `.` and `..` resolved by their names alone (`..` at the root stays at the root).
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => match out.components().next_back() {
                Some(Component::Normal(_)) => {
                    out.pop();
                }
                Some(Component::RootDir | Component::Prefix(_)) => {}
                _ => out.push(part),
            },
            Component::RootDir | Component::Prefix(_) | Component::Normal(_) => out.push(part),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_compare_by_components_after_normalizing() {
        let app = Place::new("/w/app/".as_ref(), "/".as_ref());
        assert_eq!(app.path(), Path::new("/w/app"));
        assert!(app.contains("/w/app"));
        assert!(app.contains("/w/app/"));
        assert!(app.contains("/w//app/./src/../lib"));
        assert!(!app.contains("/w/apple"));
        assert!(!app.contains("/w"));
        assert!(!app.contains("w/app"), "a relative directory is no place");
        let root = Place::new("/".as_ref(), "/".as_ref());
        assert!(root.contains("/anything"));
    }

    #[test]
    fn a_relative_path_is_taken_from_the_base() {
        let here = Place::new(".".as_ref(), "/home/me/repo".as_ref());
        assert_eq!(here.path(), Path::new("/home/me/repo"));
        let up = Place::new("../..".as_ref(), "/home/me/repo".as_ref());
        assert_eq!(up.path(), Path::new("/home"));
        assert_eq!(normalize("/../x".as_ref()), Path::new("/x"));
    }
}
