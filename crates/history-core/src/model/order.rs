//! The order of a page: which end it starts from, and the places in the merge order of hits
//! across sessions where one page ends and the next goes on.

use serde::Serialize;

use crate::model::{Event, SessionKey, Timestamp};

/// Which end of a session (or of a result set) a page starts from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum End {
    /// The newest end.
    Newest,
    /// The oldest end.
    Oldest,
}

/// A place in the merge order of hits: untimed first, then by time, qualified id, seq and part.
pub type OrderKey<'a> = (bool, Option<i64>, &'a SessionKey, u64, u32);

pub(crate) fn order_key(
    time: Option<Timestamp>,
    session: &SessionKey,
    seq: u64,
    part: u32,
) -> OrderKey<'_> {
    (time.is_some(), time.map(|t| t.0), session, seq, part)
}

/// A place in the merge order of hits across sessions: where a page of them ended, for the
/// next page to go on from. Written `TIME,SESSION,SEQ,PART` (`untimed` for no time) on a
/// command line, and as an object in JSON.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Cursor {
    /// The event's time.
    pub time: Option<Timestamp>,
    /// Its session, qualified (`claude:…`).
    #[serde(serialize_with = "qualified")]
    pub session: SessionKey,
    /// Its seq.
    pub seq: u64,
    /// Its part.
    pub part: u32,
}

fn qualified<S: serde::Serializer>(key: &SessionKey, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(key)
}

impl Cursor {
    /// Its place in the merge order.
    fn key(&self) -> OrderKey<'_> {
        order_key(self.time, &self.session, self.seq, self.part)
    }

    /// Reads the command-line form, `TIME,SESSION,SEQ,PART`; the session is what lies between
    /// the first comma and the last two.
    pub fn parse(text: &str) -> Option<Cursor> {
        let (time, rest) = text.split_once(',')?;
        let (rest, part) = rest.rsplit_once(',')?;
        let (session, seq) = rest.rsplit_once(',')?;
        let (harness, id) = session.split_once(':')?;
        let time = match time {
            UNTIMED => None,
            t => Some(Timestamp::parse_rfc3339(t)?),
        };
        Some(Cursor {
            time,
            session: SessionKey::new(harness, id),
            seq: seq.parse().ok()?,
            part: part.parse().ok()?,
        })
    }
}

impl Cursor {
    /// Reads the JSON form a recipe gives, `{time, session, seq, part}` (`time` absent or null
    /// for no time).
    pub fn from_json(value: &serde_json::Value) -> Option<Cursor> {
        let session = value.get("session")?.as_str()?;
        let (harness, id) = session.split_once(':')?;
        let time = match value.get("time") {
            None | Some(serde_json::Value::Null) => None,
            Some(t) => Some(Timestamp::parse_rfc3339(t.as_str()?)?),
        };
        Some(Cursor {
            time,
            session: SessionKey::new(harness, id),
            seq: value.get("seq")?.as_u64()?,
            part: u32::try_from(value.get("part")?.as_u64()?).ok()?,
        })
    }
}

impl std::fmt::Display for Cursor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.time {
            Some(t) => write!(f, "{t}")?,
            None => f.write_str(UNTIMED)?,
        }
        write!(f, ",{},{},{}", self.session, self.seq, self.part)
    }
}

/// How a place without a time is written.
const UNTIMED: &str = "untimed";

/// Where a search goes on from: only hits before a place, or only after it.
#[derive(Clone, Copy, Debug)]
pub enum Bound<'a> {
    /// Before it (an `older` page).
    Before(&'a Cursor),
    /// After it (a `newer` page).
    After(&'a Cursor),
}

impl Bound<'_> {
    /// Whether an event of `session` lies on the bound's side.
    pub fn admits(&self, session: &SessionKey, event: &Event) -> bool {
        let key =
            |session, event: &Event| order_key(event.timestamp, session, event.seq, event.part);
        match self {
            Bound::Before(c) => key(session, event) < c.key(),
            Bound::After(c) => key(session, event) > c.key(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_place_reads_back_as_written() {
        for text in [
            "2026-05-01T10:00:00.000Z,claude:0f1e-aa,12,0",
            "untimed,pi:x,1,3",
            "2026-05-01T10:00:00.000Z,other:an,id,with,commas,7,2",
        ] {
            let place = Cursor::parse(text).unwrap();
            assert_eq!(place.to_string(), text);
            // Its JSON form reads back too.
            let json = serde_json::to_value(&place).unwrap();
            assert_eq!(Cursor::from_json(&json), Some(place), "{json}");
        }
        let json = serde_json::json!({"session": "claude:x", "seq": 1});
        assert_eq!(Cursor::from_json(&json), None);
        let place = Cursor::parse("untimed,other:a,b,7,2").unwrap();
        assert_eq!(
            (place.session.id.as_str(), place.seq, place.part),
            ("a,b", 7, 2)
        );
        for bad in [
            "",
            "yesterday",
            "untimed,claude:x,1",
            "untimed,nokey,1,0",
            "soon,claude:x,1,0",
        ] {
            assert_eq!(Cursor::parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn a_bound_admits_what_lies_on_its_side_in_the_merge_order() {
        let key = SessionKey::new("claude", "b");
        let place = Cursor::parse("2026-05-01T10:00:00.000Z,claude:b,5,1").unwrap();
        let event = |time: Option<&str>, seq, part| Event {
            seq,
            part,
            role: crate::model::Role::User,
            kind: "message".into(),
            timestamp: time.and_then(Timestamp::parse_rfc3339),
            text: String::new(),
            visible: true,
            tool: None,
            on_active_branch: None,
        };
        let t = Some("2026-05-01T10:00:00.000Z");
        let before = |s: &SessionKey, e: &Event| Bound::Before(&place).admits(s, e);
        let after = |s: &SessionKey, e: &Event| Bound::After(&place).admits(s, e);
        assert!(
            before(&key, &event(None, 99, 0)),
            "untimed events come first"
        );
        assert!(before(&key, &event(t, 5, 0)));
        assert!(!before(&key, &event(t, 5, 1)) && !after(&key, &event(t, 5, 1)));
        assert!(after(&key, &event(t, 5, 2)));
        assert!(before(&SessionKey::new("claude", "a"), &event(t, 9, 0)));
        assert!(after(&SessionKey::new("codex", "a"), &event(t, 1, 0)));
    }
}
