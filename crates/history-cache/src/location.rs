//! Where the cache lives by default.

use std::ffi::OsString;
use std::path::PathBuf;

/// The cache directory: `$XDG_CACHE_HOME/notesoup/history`, else `$HOME/.cache/notesoup/history`.
///
/// `env` looks up an environment variable (pass `|k| std::env::var_os(k)`; tests pass their
/// own to stay out of the user's cache). As the XDG base directory specification says, an empty
/// or relative `XDG_CACHE_HOME` is ignored. `None` when neither gives an absolute directory: the
/// caller then runs without a cache.
pub fn default_dir(env: impl Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
    let absolute = |var: &str| absolute(&env, var);
    let base = absolute("XDG_CACHE_HOME").or_else(|| absolute("HOME").map(|h| h.join(".cache")))?;
    Some(base.join("notesoup").join("history"))
}

/// The cache root other disposable projections live under: `$XDG_CACHE_HOME/notesoup`,
/// else `~/Library/Caches/notesoup` on macOS and `~/.cache/notesoup` elsewhere; relative or
/// empty variables are ignored as in [`default_dir`].
pub fn cache_root(env: impl Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
    let base = absolute(&env, "XDG_CACHE_HOME").or_else(|| {
        let home = absolute(&env, "HOME")?;
        Some(if cfg!(target_os = "macos") {
            home.join("Library").join("Caches")
        } else {
            home.join(".cache")
        })
    })?;
    Some(base.join("notesoup"))
}

fn absolute(env: &impl Fn(&str) -> Option<OsString>, var: &str) -> Option<PathBuf> {
    env(var)
        .map(PathBuf::from)
        .filter(|path| path.is_absolute())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<OsString> + 'a {
        move |key| {
            vars.iter()
                .find(|(k, _)| *k == key)
                .map(|(_, v)| OsString::from(v))
        }
    }

    #[test]
    fn xdg_cache_home_wins() {
        let vars = [("XDG_CACHE_HOME", "/x/cache"), ("HOME", "/home/u")];
        assert_eq!(
            default_dir(env(&vars)),
            Some(PathBuf::from("/x/cache/notesoup/history"))
        );
    }

    #[test]
    fn home_is_the_fallback() {
        let vars = [("HOME", "/home/u")];
        assert_eq!(
            default_dir(env(&vars)),
            Some(PathBuf::from("/home/u/.cache/notesoup/history"))
        );
    }

    #[test]
    fn empty_or_relative_xdg_cache_home_is_ignored() {
        for xdg in ["", "relative/cache"] {
            let vars = [("XDG_CACHE_HOME", xdg), ("HOME", "/home/u")];
            assert_eq!(
                default_dir(env(&vars)),
                Some(PathBuf::from("/home/u/.cache/notesoup/history"))
            );
        }
    }

    #[test]
    fn the_cache_root_holds_the_overview_cache_on_linux() {
        let vars = [("HOME", "/home/u")];
        if !cfg!(target_os = "macos") {
            assert_eq!(
                cache_root(env(&vars)).map(|r| r.join("history")),
                default_dir(env(&vars))
            );
        }
        let xdg = [("XDG_CACHE_HOME", "/x/cache"), ("HOME", "/home/u")];
        assert_eq!(
            cache_root(env(&xdg)),
            Some(PathBuf::from("/x/cache/notesoup"))
        );
        assert_eq!(cache_root(env(&[("HOME", "rel")])), None);
    }

    #[test]
    fn a_cache_home_that_is_not_utf8_is_used() {
        use std::os::unix::ffi::OsStrExt;
        let odd = std::ffi::OsStr::from_bytes(b"/x/\xff");
        let env = |k: &str| (k == "XDG_CACHE_HOME").then(|| odd.to_os_string());
        assert_eq!(
            default_dir(env),
            Some(PathBuf::from(odd).join("notesoup").join("history"))
        );
    }

    #[test]
    fn nowhere_without_an_absolute_home() {
        assert_eq!(default_dir(env(&[])), None);
        assert_eq!(default_dir(env(&[("HOME", "")])), None);
    }
}
