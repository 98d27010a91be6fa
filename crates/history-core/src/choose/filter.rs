//! Query matching: literal, case-insensitive with full Unicode case folding, a list of queries
//! is an OR; plus the role and time filters.

use memchr::memmem;

use crate::model::Timestamp;
use crate::model::{Event, Role};
use history_raw::{fold, fold_with_origins, AsciiNeedle, RawFilter};

/// What events a request is about: queries (OR), roles, and a time window.
#[derive(Clone, Debug, Default)]
pub struct Filter {
    queries: Vec<String>,
    /// Each folded query as an ASCII case-insensitive search, for text that is all ASCII (whose
    /// folding is ASCII lowercasing) when the query is too; `None` for other queries. (A
    /// compiled regex took longer to build than a rare word's whole indexed search spends
    /// matching.)
    ascii: Vec<Option<AsciiNeedle>>,
    /// A cheap test that rules out most non-ASCII texts before they are folded.
    quick: Option<std::sync::Arc<RawFilter>>,
    /// The roles asked for; empty means every role.
    pub roles: Vec<Role>,
    /// Inclusive lower time bound.
    pub since: Option<Timestamp>,
    /// Exclusive upper time bound.
    pub until: Option<Timestamp>,
}

impl Filter {
    /// Builds a filter; empty queries are ignored, so a list of only empty queries is no query.
    pub fn new(
        queries: &[String],
        roles: Vec<Role>,
        since: Option<Timestamp>,
        until: Option<Timestamp>,
    ) -> Filter {
        let mut folded: Vec<String> = queries
            .iter()
            .filter(|q| !q.is_empty())
            .map(|q| fold(q))
            .collect();
        folded.sort();
        folded.dedup();
        let ascii = folded.iter().map(|q| AsciiNeedle::ascii(q)).collect();
        let quick = (!folded.is_empty()).then(|| std::sync::Arc::new(RawFilter::new(&folded)));
        Filter {
            queries: folded,
            ascii,
            quick,
            roles,
            since,
            until,
        }
    }

    /// The folded queries.
    pub fn queries(&self) -> &[String] {
        &self.queries
    }

    /// Whether there is a query (a search rather than a browse or overview).
    pub fn is_search(&self) -> bool {
        !self.queries.is_empty()
    }

    /// Whether anything narrows the events at all.
    pub fn is_empty(&self) -> bool {
        self.queries.is_empty()
            && self.roles.is_empty()
            && self.since.is_none()
            && self.until.is_none()
    }

    /// Whether the event falls within the time window; untimed events fail any bound.
    pub fn in_time(&self, event: &Event) -> bool {
        self.at_time(event.timestamp)
    }

    /// Whether an event at `time` falls within the time window ([`Filter::in_time`]).
    pub fn at_time(&self, time: Option<Timestamp>) -> bool {
        if self.since.is_none() && self.until.is_none() {
            return true;
        }
        let Some(t) = time else {
            return false;
        };
        self.since.is_none_or(|s| t >= s) && self.until.is_none_or(|u| t < u)
    }

    /// Whether the event has one of the roles asked for.
    pub fn has_role(&self, event: &Event) -> bool {
        self.takes_role(event.role)
    }

    /// Whether `role` is one of the roles asked for ([`Filter::has_role`]).
    pub fn takes_role(&self, role: Role) -> bool {
        self.roles.is_empty() || self.roles.contains(&role)
    }

    /// Whether the event's text holds one of the queries (true when there is none).
    pub fn matches_text(&self, text: &str) -> bool {
        if self.queries.is_empty() {
            return true;
        }
        if text.is_ascii() {
            // ASCII text folds to its lowercase: only ASCII queries can match, without a copy.
            return (self.queries.iter().zip(&self.ascii)).any(|(q, needle)| match needle {
                Some(needle) => needle.is_in(text.as_bytes()),
                // ASCII without a byte the needle search can key on (`_@`).
                None => q.is_ascii() && memmem::find(text.as_bytes(), q.as_bytes()).is_some(),
            });
        }
        if self
            .quick
            .as_ref()
            .is_some_and(|q| !q.may_match_slice(text.as_bytes()))
        {
            return false;
        }
        let folded = fold(text);
        self.queries
            .iter()
            .any(|q| memmem::find(folded.as_bytes(), q.as_bytes()).is_some())
    }

    /// Whether `line`, one or more whole lines of a transcript as written, can hold an event
    /// whose text holds a query (true when there is none): the test a scan puts each line to
    /// before decoding it.
    pub fn may_match_line(&self, line: &[u8]) -> bool {
        self.quick.as_ref().is_none_or(|q| q.may_match_slice(line))
    }

    /// The byte offset in `text` where the first match of any query starts.
    pub fn first_match(&self, text: &str) -> Option<usize> {
        if text.is_ascii() {
            let folded = text.to_ascii_lowercase();
            return self
                .queries
                .iter()
                .filter_map(|q| memmem::find(folded.as_bytes(), q.as_bytes()))
                .min();
        }
        let (folded, origin) = fold_with_origins(text);
        self.queries
            .iter()
            .filter_map(|q| memmem::find(folded.as_bytes(), q.as_bytes()))
            .min()
            .map(|i| origin[i])
    }

    /// The same filter for `roles` alone.
    pub fn with_roles(&self, roles: Vec<Role>) -> Filter {
        Filter {
            roles,
            ..self.clone()
        }
    }

    /// Whether the event passes every part of the filter.
    pub fn matches(&self, event: &Event) -> bool {
        self.in_time(event) && self.has_role(event) && self.matches_text(&event.text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(text: &str) -> Event {
        Event {
            seq: 1,
            part: 0,
            role: Role::User,
            kind: "message".into(),
            timestamp: None,
            text: text.into(),
            visible: true,
            tool: None,
            on_active_branch: None,
        }
    }

    #[test]
    fn full_case_folding() {
        let f = Filter::new(&["STRASSE".into()], vec![], None, None);
        assert!(f.matches(&ev("die Straße")));
        let kelvin = Filter::new(&["\u{212A}elvin".into()], vec![], None, None);
        assert!(kelvin.matches(&ev("KELVIN scale")));
        let sigma = Filter::new(&["ΟΔΟΣ".into()], vec![], None, None);
        assert!(sigma.matches(&ev("οδος")));
        assert!(sigma.matches(&ev("οδοσ")));
        assert!(Filter::new(&["οδος".into()], vec![], None, None).matches(&ev("ΟΔΟΣ")));
    }

    #[test]
    fn or_of_queries_and_empty_queries() {
        let f = Filter::new(
            &["".into(), "zebra".into(), "Deploy".into()],
            vec![],
            None,
            None,
        );
        assert!(f.matches(&ev("we DEPLOYED it")));
        assert!(!f.matches(&ev("nothing")));
        assert!(!Filter::new(&["".into()], vec![], None, None).is_search());
    }

    #[test]
    fn ascii_text_matches_as_its_folding_holds_the_query() {
        let texts = [
            "needle-1-00267 in Needle-1-00267",
            "a __@@ b",
            "A_B and a_b",
            "DEPLOY_KEY=1",
            "nothing here",
            "",
        ];
        let queries = [
            "needle-1-00267",
            "NEEDLE-1",
            "__@@",
            "_@",
            "a_b",
            "deploy_key=1",
            "1",
            "ß",
            "here!",
        ];
        for q in queries {
            let f = Filter::new(&[q.into()], vec![], None, None);
            for t in texts {
                assert_eq!(
                    f.matches_text(t),
                    fold(t).contains(&fold(q)),
                    "{q:?} in {t:?}"
                );
            }
        }
    }

    #[test]
    fn first_match_points_into_the_original_text() {
        let f = Filter::new(&["STRASSE".into(), "zzz".into()], vec![], None, None);
        let text = "ééé die Straße";
        assert_eq!(&text[f.first_match(text).unwrap()..], "Straße");
        assert_eq!(f.first_match("plain strasse"), Some(6));
        assert_eq!(f.first_match("nothing"), None);
    }

    #[test]
    fn time_bounds_drop_untimed() {
        let t = Timestamp::parse_rfc3339("2026-01-01T00:00:00Z");
        let f = Filter::new(&[], vec![], t, None);
        assert!(!f.matches(&ev("x")));
        let mut e = ev("x");
        e.timestamp = t;
        assert!(f.matches(&e));
        let g = Filter::new(&[], vec![], None, t);
        assert!(!g.matches(&e), "until is exclusive");
    }
}
