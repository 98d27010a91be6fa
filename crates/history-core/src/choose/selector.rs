//! Selectors (`claude:4f2a`, `pi:*`, `*:abc*`, `~/.claude/projects/-w-app/4f2a….jsonl`) and
//! their resolution against discovered sessions.

use std::path::{Path, PathBuf};

use crate::choose::place::normalize;
use crate::error::HistoryError;
use crate::model::{SessionFile, SessionKey};

/// The harness whose sessions exist only inside their host process.
pub const HOST_ONLY_HARNESS: &str = "dsh";

/// A parsed `--session` value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Selector {
    /// One session: an id or a unique prefix, optionally qualified by its harness.
    One {
        /// The harness named, if any.
        harness: Option<String>,
        /// The id or prefix.
        id: String,
    },
    /// Many sessions: a pattern where `*` matches any string.
    Many(Pattern),
    /// One session, named by the path of its transcript file as given (see [`is_path`]):
    /// [`transcript_path`] makes it absolute, [`resolve_path`] finds the session.
    Path(PathBuf),
}

/// Whether a selector names a transcript file rather than a session id: it holds a `/` or starts
/// with `.` or `~`, and is not `harness:id` (a known harness, or the host-only one, before its
/// first `:`). No id holds a `/`.
pub fn is_path(text: &str, harnesses: &[&str]) -> bool {
    let text = text.trim();
    let qualified = text.split_once(':').is_some_and(|(harness, _)| {
        let harness = harness.to_ascii_lowercase();
        harness == HOST_ONLY_HARNESS || harnesses.contains(&harness.as_str())
    });
    !qualified && (text.contains('/') || text.starts_with(['.', '~']))
}

/// A transcript path as given, made absolute: `~` and `~/…` are taken from `home` (a shell
/// has expanded them already; a tool call has not), anything relative from `base` (the
/// caller's working directory); then `.` and `..` are resolved by name, as [`crate::Place`]
/// resolves a directory.
pub fn transcript_path(path: &Path, base: &Path, home: Option<&Path>) -> PathBuf {
    let path = match (path.strip_prefix("~"), home) {
        (Ok(rest), Some(home)) => home.join(rest),
        _ => path.to_path_buf(),
    };
    normalize(&base.join(path))
}

/// Why no session is read from a path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PathMiss {
    /// Nothing is there.
    Missing,
    /// A directory is there.
    Directory,
    /// A file is there that no discovered session has as its own transcript (a file outside
    /// every root, a sub-agent's file, a copy another file of its session supersedes).
    NotTranscript,
    /// The path cannot be looked at.
    Unreadable(String),
}

/// The session whose own transcript file is `path` (absolute and normalized, as
/// [`transcript_path`] makes it), among `sessions`. Paths compare as named, then by their
/// canonical forms (symbolic links followed on both sides). A path that names no file but
/// would with its `:LINE` dropped (`file: ….jsonl:7`, as `--show-path` writes it) is that
/// file's. The file is looked at, never opened.
pub fn resolve_path<'a>(
    path: &Path,
    sessions: &'a [SessionFile],
) -> Result<&'a SessionFile, PathMiss> {
    let meta = match std::fs::metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let text = path.as_os_str().to_string_lossy();
            return match text.rsplit_once(':') {
                Some((file, line))
                    if !line.is_empty()
                        && line.bytes().all(|b| b.is_ascii_digit())
                        && Path::new(file).exists() =>
                {
                    resolve_path(Path::new(file), sessions)
                }
                _ => Err(PathMiss::Missing),
            };
        }
        Err(e) => return Err(PathMiss::Unreadable(e.to_string())),
    };
    if meta.is_dir() {
        return Err(PathMiss::Directory);
    }
    if let Some(file) = sessions.iter().find(|s| normalize(&s.path) == path) {
        return Ok(file);
    }
    let real = std::fs::canonicalize(path).map_err(|e| PathMiss::Unreadable(e.to_string()))?;
    let same = |s: &SessionFile| std::fs::canonicalize(&s.path).is_ok_and(|p| p == real);
    // The files named alike first: one canonical form each. A discovered file that is itself
    // a link under another name is found by the rest, all of them looked at on every core.
    let names = [path.file_name(), real.file_name()];
    let (alike, rest): (Vec<&SessionFile>, Vec<&SessionFile>) = sessions
        .iter()
        .partition(|s| names.contains(&s.path.file_name()));
    if let Some(file) = alike.into_iter().find(|s| same(s)) {
        return Ok(file);
    }
    let found = crate::corpus::parallel::map(&rest, |s| same(s));
    (rest.into_iter().zip(found))
        .find_map(|(file, same)| same.then_some(file))
        .ok_or(PathMiss::NotTranscript)
}

/// A wildcard pattern; matched against `harness:id` when it has a `:`, else against the id.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pattern {
    text: String,
    /// The text in lower case, which a session's key is matched against in lower case.
    folded: String,
}

impl Pattern {
    /// Whether the pattern selects this session.
    /// Letters match either case.
    pub fn matches(&self, key: &SessionKey) -> bool {
        // Matched against every session a query finds: `*` and `claude:*` copy no key.
        let any = |pattern: &str| pattern.bytes().all(|b| b == b'*');
        let lower = |s: &str| s.to_lowercase();
        match self.folded.split_once(':') {
            None => any(&self.folded) || glob(&self.folded, &lower(&key.id)),
            // A harness named literally: no harness holds a `:`, so the rest is the id's.
            Some((named, pattern)) if !named.contains('*') => {
                key.harness
                    .chars()
                    .flat_map(char::to_lowercase)
                    .eq(named.chars())
                    && (any(pattern) || glob(pattern, &lower(&key.id)))
            }
            Some(_) => glob(
                &self.folded,
                &format!("{}:{}", lower(&key.harness), lower(&key.id)),
            ),
        }
    }

    /// The pattern as given.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The one harness the pattern can select, when it names it literally (`pi:*`).
    pub fn harness(&self) -> Option<&str> {
        let (harness, _) = self.folded.split_once(':')?;
        (!harness.contains('*')).then_some(harness)
    }
}

/// `*` matches any string; everything else is literal.
fn glob(pattern: &str, text: &str) -> bool {
    let Some((head, tail)) = pattern.split_once('*') else {
        return pattern == text;
    };
    let (middle, last) = tail.rsplit_once('*').unwrap_or(("", tail));
    let Some(mut rest) = text
        .strip_prefix(head)
        .and_then(|rest| rest.strip_suffix(last))
    else {
        return false;
    };
    for piece in middle.split('*').filter(|p| !p.is_empty()) {
        match rest.find(piece) {
            Some(at) => rest = &rest[at + piece.len()..],
            None => return false,
        }
    }
    true
}

impl Selector {
    /// Parses a selector. `harnesses` are the known harness names.
    pub fn parse(text: &str, harnesses: &[&str]) -> Result<Selector, HistoryError> {
        let text = text.trim();
        if text.is_empty() {
            return Err(HistoryError::InvalidSession {
                message: "the session selector is empty".into(),
            });
        }
        if is_path(text, harnesses) {
            if text.contains('*') {
                return Err(HistoryError::InvalidSession {
                    message: format!(
                        "{text:?} is a path with a *: a path names one transcript file (let the \
                         shell expand the pattern, or select ids with a pattern like claude:4f*)"
                    ),
                });
            }
            return Ok(Selector::Path(PathBuf::from(text)));
        }
        // Harness names and ids are matched in either case (`CLAUDE:4F2A`).
        if text.contains('*') {
            return Ok(Selector::Many(Pattern {
                text: text.into(),
                folded: text.to_lowercase(),
            }));
        }
        match text.split_once(':') {
            Some((harness, id)) => {
                let harness = harness.to_ascii_lowercase();
                let harness = harness.as_str();
                if harness != HOST_ONLY_HARNESS && !harnesses.contains(&harness) {
                    return Err(HistoryError::InvalidSession {
                        message: format!(
                            "unknown harness {harness:?} in {text:?} (known: {})",
                            harnesses.join(", ")
                        ),
                    });
                }
                if id.is_empty() {
                    return Err(HistoryError::InvalidSession {
                        message: format!("{text:?} names a harness but no session id"),
                    });
                }
                Ok(Selector::One {
                    harness: Some(harness.into()),
                    id: id.into(),
                })
            }
            None => Ok(Selector::One {
                harness: None,
                id: text.into(),
            }),
        }
    }
}

/// Resolves a single-session selector among `sessions` (newest-modified first gives the order of
/// candidates). `current_harness` is tried first when the selector names no harness.
pub fn resolve<'a>(
    harness: Option<&str>,
    id: &str,
    sessions: &'a [SessionFile],
    current_harness: Option<&str>,
    selector_text: &str,
) -> Result<&'a SessionFile, HistoryError> {
    if harness == Some(HOST_ONLY_HARNESS) {
        return Err(HistoryError::UnknownSession {
            selector: format!(
                "{selector_text} ({HOST_ONLY_HARNESS} sessions exist only inside their host)"
            ),
            detail: None,
        });
    }
    let in_harness = |h: &str| -> Vec<&'a SessionFile> {
        sessions.iter().filter(|s| s.key.harness == h).collect()
    };
    // The id as written, else in either case, else a prefix in either case.
    let lower = id.to_lowercase();
    let pick = |pool: Vec<&'a SessionFile>| -> Option<Result<&'a SessionFile, HistoryError>> {
        let kept = |test: &dyn Fn(&str) -> bool| -> Vec<&'a SessionFile> {
            pool.iter().copied().filter(|s| test(&s.key.id)).collect()
        };
        let mut chosen = kept(&|k| k == id);
        if chosen.is_empty() {
            chosen = kept(&|k| k.to_lowercase() == lower);
        }
        if chosen.is_empty() {
            chosen = kept(&|k| k.to_lowercase().starts_with(&lower));
        }
        match chosen.len() {
            0 => None,
            1 => Some(Ok(chosen[0])),
            _ => Some(Err(ambiguous(selector_text, &chosen))),
        }
    };
    let found = match (harness, current_harness) {
        (Some(h), _) => pick(in_harness(h)),
        (None, Some(cur)) => pick(in_harness(cur))
            .or_else(|| pick(sessions.iter().filter(|s| s.key.harness != cur).collect())),
        (None, None) => pick(sessions.iter().collect()),
    };
    found.unwrap_or_else(|| {
        Err(HistoryError::UnknownSession {
            selector: selector_text.into(),
            detail: None,
        })
    })
}

fn ambiguous(selector: &str, chosen: &[&SessionFile]) -> HistoryError {
    let mut candidates: Vec<&SessionFile> = chosen.to_vec();
    candidates.sort_by(|a, b| b.modified.cmp(&a.modified).then(a.key.cmp(&b.key)));
    HistoryError::AmbiguousSession {
        selector: selector.into(),
        candidates: candidates
            .iter()
            .take(5)
            .map(|s| s.key.to_string())
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    const H: &[&str] = &["claude", "codex", "pi"];

    fn file(h: &str, id: &str, modified: i64) -> SessionFile {
        SessionFile {
            key: SessionKey::new(h, id),
            path: PathBuf::from(format!("/{h}/{id}")),
            modified,
            size: 0,
            fingerprint: None,
        }
    }

    #[test]
    fn globbing() {
        let p = |s: &str| match Selector::parse(s, H).unwrap() {
            Selector::Many(p) => p,
            other => panic!("{other:?}"),
        };
        let k = SessionKey::new("claude", "4f2abc");
        assert!(p("*").matches(&k));
        assert!(p("claude:4f2*").matches(&k));
        assert!(p("*:*abc").matches(&k));
        assert!(p("4f*c").matches(&k));
        assert!(!p("pi:*").matches(&k));
        assert!(!p("claud:*").matches(&k), "a harness is named whole");
        assert!(!p("*:abd*").matches(&k));
        assert!(!p("4f2*x").matches(&k));
        assert!(p("c*e:*").matches(&k));
        assert!(p("*2*b*").matches(&k) && p("4f*2*c").matches(&k) && p("**").matches(&k));
        assert!(!p("4f2a*f2abc").matches(&k), "the ends do not overlap");
        assert!(!p("*c*2*").matches(&k), "the pieces are found in order");
        assert_eq!(p("claude:4f*").harness(), Some("claude"));
        assert_eq!(p("*:4f*").harness(), None);
        assert_eq!(p("4f*").harness(), None);
        // Either case.
        assert!(p("CLAUDE:4F2*").matches(&k) && p("*ABC").matches(&k));
        assert!(p("pi:abc*").matches(&SessionKey::new("pi", "AbCd")));
        assert_eq!(p("Claude:4F*").harness(), Some("claude"));
    }

    #[test]
    fn one_session_is_named_in_either_case() {
        assert_eq!(
            Selector::parse("CLAUDE:4F2A", H).unwrap(),
            Selector::One {
                harness: Some("claude".into()),
                id: "4F2A".into()
            }
        );
        let all = vec![
            file("pi", "Ab", 1),
            file("pi", "ab", 2),
            file("claude", "4f2abc", 3),
        ];
        let r = |id: &str| resolve(None, id, &all, None, id).map(|s| s.key.to_string());
        assert_eq!(
            r("4F2A").unwrap(),
            "claude:4f2abc",
            "a prefix in either case"
        );
        assert_eq!(r("Ab").unwrap(), "pi:Ab", "the id as written first");
        assert_eq!(r("aB").unwrap_err().code(), "ambiguous_session");
    }

    #[test]
    fn parse_errors() {
        assert_eq!(
            Selector::parse("", H).unwrap_err().code(),
            "invalid_session"
        );
        assert_eq!(
            Selector::parse("foo:bar", H).unwrap_err().code(),
            "invalid_session"
        );
        assert_eq!(
            Selector::parse("claude:", H).unwrap_err().code(),
            "invalid_session"
        );
        assert!(Selector::parse("dsh:abc", H).is_ok());
    }

    #[test]
    fn a_path_is_told_from_an_id() {
        let path = |s: &str| Selector::parse(s, H).unwrap() == Selector::Path(s.into());
        for text in [
            "/home/u/.claude/projects/-w-app/4f2a.jsonl",
            "-w-app/4f2a.jsonl",
            "./4f2a.jsonl",
            "../x",
            ".",
            "~/.pi/agent/sessions/x.jsonl",
            "/c/rollout-2026-03-02T11-00-00-019c.jsonl.zst",
            "/w/odd:name.jsonl",
            "foo:bar/baz.jsonl",
        ] {
            assert!(is_path(text, H) && path(text), "{text:?} is a path");
        }
        for text in [
            "4f2a",
            "claude:4f2a",
            "CODEX:019c",
            "pi:x/y",
            "dsh:a/b",
            "*:a*",
            "a.b",
        ] {
            assert!(!is_path(text, H), "{text:?} is no path");
            assert!(!matches!(Selector::parse(text, H), Ok(Selector::Path(_))));
        }
        assert_eq!(
            Selector::parse("/w/*.jsonl", H).unwrap_err().code(),
            "invalid_session",
            "a path names one file"
        );
        assert_eq!(
            Selector::parse("*/x", H).unwrap_err().code(),
            "invalid_session"
        );
    }

    #[test]
    fn a_path_is_taken_from_the_working_directory_and_home() {
        let t = |p: &str| transcript_path(p.as_ref(), "/w/app".as_ref(), Some("/home/u".as_ref()));
        assert_eq!(t("./a.jsonl"), Path::new("/w/app/a.jsonl"));
        assert_eq!(t("a/../b/./c.jsonl"), Path::new("/w/app/b/c.jsonl"));
        assert_eq!(t("../lib//x.jsonl"), Path::new("/w/lib/x.jsonl"));
        assert_eq!(t("/abs/x.jsonl"), Path::new("/abs/x.jsonl"));
        assert_eq!(t("~/.claude/x.jsonl"), Path::new("/home/u/.claude/x.jsonl"));
        assert_eq!(t("~"), Path::new("/home/u"));
        assert_eq!(
            t("~bob/x"),
            Path::new("/w/app/~bob/x"),
            "only one's own home"
        );
        let homeless = transcript_path("~/x".as_ref(), "/w".as_ref(), None);
        assert_eq!(homeless, Path::new("/w/~/x"));
    }

    #[test]
    fn a_path_names_the_session_whose_own_file_it_is() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        std::fs::create_dir_all(root.join("p/s1/subagents")).unwrap();
        let touch = |p: &Path| std::fs::write(p, "{}\n").unwrap();
        let (one, two) = (root.join("p/s1.jsonl"), root.join("p/s2.jsonl"));
        let sub = root.join("p/s1/subagents/agent-x.jsonl");
        let outside = dir.path().join("notes.jsonl");
        for p in [&one, &two, &sub, &outside] {
            touch(p);
        }
        let at = |h: &str, id: &str, path: &Path| SessionFile {
            path: path.to_path_buf(),
            ..file(h, id, 0)
        };
        let all = vec![at("claude", "s1", &one), at("claude", "s2", &two)];
        let r = |p: &Path| resolve_path(p, &all).map(|s| s.key.to_string());
        assert_eq!(r(&one).unwrap(), "claude:s1");
        assert_eq!(r(&two).unwrap(), "claude:s2");
        assert_eq!(
            r(&sub),
            Err(PathMiss::NotTranscript),
            "no session's own file"
        );
        assert_eq!(r(&outside), Err(PathMiss::NotTranscript));
        assert_eq!(r(&root.join("p/s3.jsonl")), Err(PathMiss::Missing));
        // A line after the file, as `file: …` says it.
        let line = |p: &Path, n: &str| PathBuf::from(format!("{}{n}", p.display()));
        assert_eq!(r(&line(&two, ":17")).unwrap(), "claude:s2");
        assert_eq!(
            r(&line(&root.join("p/s3.jsonl"), ":17")),
            Err(PathMiss::Missing)
        );
        assert_eq!(r(&line(&two, ":")), Err(PathMiss::Missing));
        assert_eq!(r(&line(&two, ":1x")), Err(PathMiss::Missing));
        assert_eq!(
            r(&line(&two, ":1:2")),
            Err(PathMiss::Missing),
            "one line, no more"
        );
        assert_eq!(r(&root.join("p")), Err(PathMiss::Directory));
        // Through a link to the file, under its own name or another; through a linked directory.
        let linked = dir.path().join("linked.jsonl");
        std::os::unix::fs::symlink(&two, &linked).unwrap();
        assert_eq!(r(&linked).unwrap(), "claude:s2");
        let alias = dir.path().join("alias");
        std::os::unix::fs::symlink(&root, &alias).unwrap();
        assert_eq!(r(&alias.join("p/s1.jsonl")).unwrap(), "claude:s1");
        // Discovery reading the root through a link, the path naming the real file.
        let through = vec![at("claude", "s1", &alias.join("p/s1.jsonl"))];
        let found = resolve_path(&one, &through).map(|s| s.key.to_string());
        assert_eq!(found.unwrap(), "claude:s1");
        // A discovered file that is itself a link under another name.
        let other = vec![at("pi", "odd", &linked)];
        let found = resolve_path(&two, &other).map(|s| s.key.to_string());
        assert_eq!(found.unwrap(), "pi:odd");
        // A dangling link is no file.
        let dangling = dir.path().join("dangling.jsonl");
        std::os::unix::fs::symlink(root.join("gone"), &dangling).unwrap();
        assert_eq!(r(&dangling), Err(PathMiss::Missing));
    }

    #[test]
    fn resolution_order() {
        let all = vec![
            file("claude", "abc", 3),
            file("claude", "abcd", 2),
            file("pi", "abx", 1),
            file("codex", "zzz1", 1),
            file("codex", "zzz2", 2),
        ];
        let r = |h: Option<&str>, id: &str, cur: Option<&str>| {
            resolve(h, id, &all, cur, id).map(|s| s.key.to_string())
        };
        assert_eq!(
            r(None, "abc", None).unwrap(),
            "claude:abc",
            "exact beats prefix"
        );
        assert_eq!(
            r(None, "ab", Some("pi")).unwrap(),
            "pi:abx",
            "current harness first"
        );
        assert_eq!(
            r(None, "ab", None).unwrap_err(),
            HistoryError::AmbiguousSession {
                selector: "ab".into(),
                candidates: vec!["claude:abc".into(), "claude:abcd".into(), "pi:abx".into()]
            }
        );
        assert_eq!(
            r(Some("codex"), "zzz", None).unwrap_err().code(),
            "ambiguous_session"
        );
        assert_eq!(
            r(Some("pi"), "abc", None).unwrap_err().code(),
            "unknown_session"
        );
        assert_eq!(
            r(Some("dsh"), "abc", None).unwrap_err().code(),
            "unknown_session"
        );
    }
}
