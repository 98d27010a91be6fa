//! Selectors (`claude:4f2a`, `pi:*`, `*:abc*`) and their resolution against discovered sessions.

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
        let (harness, id) = (key.harness.to_lowercase(), key.id.to_lowercase());
        match self.folded.split_once(':') {
            None => glob(&self.folded, &id),
            // A harness named literally: no harness holds a `:`, so the rest is the id's.
            Some((named, pattern)) if !named.contains('*') => {
                named == harness && glob(pattern, &id)
            }
            Some(_) => glob(&self.folded, &format!("{harness}:{id}")),
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
