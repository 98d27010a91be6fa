//! The requests the core answers, from the arguments of a command line or of a tool call, and
//! the version that the cache's and the index's entries are written under.

use history_cache::DECODER_VERSION;
use history_core::{
    parse_bound, Cursor, FindRequest, HistoryError, ListRequest, Place, ReadRequest, Role,
    Timestamp,
};

use crate::args::{FindArgs, ListArgs, ReadArgs};

/// The cache's and the index's entry version: the decoders' declared version and this very
/// build (the executable's size and modification time), so that entries written by any other
/// build of a decoder are misses even when nobody remembered to bump the declared version.
pub(crate) fn cache_version() -> String {
    let build = std::env::current_exe()
        .and_then(std::fs::metadata)
        .map(|m| {
            let modified = m
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos());
            format!("{}-{modified}", m.len())
        })
        .unwrap_or_default();
    format!("{DECODER_VERSION} build {build}")
}

/// How the command reads the times it is given: the time ages count back from, and the zone
/// a date or a time without an offset is in (local on a terminal, else UTC, as times are shown).
#[derive(Clone, Debug)]
pub(crate) struct Times {
    /// Now.
    pub now: Timestamp,
    /// The zone of dates and times without an offset, and of `today` and `yesterday`.
    pub zone: jiff::tz::TimeZone,
}

impl Times {
    /// UTC, now: what a program reading JSON expects.
    pub(crate) fn utc() -> Times {
        Times {
            now: Timestamp::now(),
            zone: jiff::tz::TimeZone::UTC,
        }
    }

    /// A time bound a flag names.
    fn bound(&self, flag: &str, v: &Option<String>) -> Result<Option<Timestamp>, HistoryError> {
        v.as_deref()
            .map(|s| {
                self.civil(s)
                    .map(|(t, _)| t)
                    .or_else(|| parse_bound(s, self.now))
                    .ok_or_else(|| {
                        HistoryError::usage(format!(
                            "--{flag} {s:?} is not a time (use RFC 3339, a date, a date and time such as 2026-06-05T10:00, today, yesterday, or an age like 7d, 3h, 30m, 6mo, 1y)"
                        ))
                    })
            })
            .transpose()
    }

    /// A date, a date and time without an offset, `today` or `yesterday`, in the zone: the
    /// time it names and how it reads there.
    fn civil(&self, text: &str) -> Option<(Timestamp, String)> {
        use jiff::civil::{Date, DateTime};
        let text = text.trim();
        let today = || self.zoned(self.now).map(|z| z.date());
        let start = match text.to_ascii_lowercase().as_str() {
            "today" => today()?.to_datetime(jiff::civil::Time::midnight()),
            "yesterday" => today()?
                .yesterday()
                .ok()?
                .to_datetime(jiff::civil::Time::midnight()),
            _ if text.len() == 10 => text
                .parse::<Date>()
                .ok()?
                .to_datetime(jiff::civil::Time::midnight()),
            _ if text.ends_with(['Z', 'z']) || text.get(10..)?.contains(['+', '-']) => return None,
            _ => text.replacen(' ', "T", 1).parse::<DateTime>().ok()?,
        };
        let zoned = start.to_zoned(self.zone.clone()).ok()?;
        let at = Timestamp(i64::try_from(zoned.timestamp().as_nanosecond()).ok()?);
        Some((at, zoned.strftime("%Y-%m-%d %H:%M").to_string()))
    }

    fn zoned(&self, t: Timestamp) -> Option<jiff::Zoned> {
        let at = jiff::Timestamp::from_nanosecond(i128::from(t.0)).ok()?;
        Some(at.to_zoned(self.zone.clone()))
    }

    /// What the command says of the zone it read `--since`/`--until` in, where one of them
    /// named a date or a time without an offset.
    pub(crate) fn said(&self, since: &Option<String>, until: &Option<String>) -> String {
        let zone = self.zone.iana_name().unwrap_or("the local time zone");
        [("since", since), ("until", until)]
            .into_iter()
            .filter_map(|(flag, text)| {
                let text = text.as_deref()?;
                let (at, local) = self.civil(text)?;
                Some(format!("note: --{flag} {text} is {local} {zone} ({at})\n"))
            })
            .collect()
    }
}

/// The roles `--role` names.
fn roles(names: &[String]) -> Result<Vec<Role>, HistoryError> {
    names
        .iter()
        .map(|r| {
            Role::parse(r).ok_or_else(|| {
                HistoryError::usage(format!(
                    "--role {r:?} is not a role (user, assistant, tool, context)"
                ))
            })
        })
        .collect()
}

/// The core's request for `find`, from its arguments.
pub(crate) fn find_request(
    args: &FindArgs,
    budget: usize,
    times: &Times,
) -> Result<FindRequest, HistoryError> {
    Ok(FindRequest {
        text: args.text.join(" "),
        session: args.session.clone(),
        roles: roles(&args.roles)?,
        since: times.bound("since", &args.since)?,
        until: times.bound("until", &args.until)?,
        cwd: args.cwd.as_deref().map(directory).transpose()?,
        limit: args.limit,
        budget,
        events: args.events,
        explain: args.explain,
        after_rank: args.after_rank,
    })
}

/// The core's request for `list`, from its arguments: times, roles and places parsed, `--cwd`
/// taken relative to the directory the command runs in.
pub(crate) fn list_request(
    args: &ListArgs,
    budget: usize,
    times: &Times,
) -> Result<ListRequest, HistoryError> {
    Ok(ListRequest {
        session: args.session.clone(),
        queries: args.queries.clone(),
        roles: roles(&args.roles)?,
        since: times.bound("since", &args.since)?,
        until: times.bound("until", &args.until)?,
        before_seq: args.before_seq,
        after_seq: args.after_seq,
        from: args.from.map(Into::into),
        limit: args.limit,
        budget,
        all_branches: args.all_branches,
        before: place("before", &args.before)?,
        after: place("after", &args.after)?,
        cwd: args.cwd.as_deref().map(directory).transpose()?,
    })
}

/// The directory `--cwd` names, relative to the one the command runs in.
fn directory(path: &std::path::Path) -> Result<Place, HistoryError> {
    let base = match std::env::current_dir() {
        Ok(here) => here,
        Err(_) if path.is_absolute() => std::path::PathBuf::from("/"),
        Err(e) => {
            return Err(HistoryError::usage(format!(
                "--cwd {}: the current directory cannot be told ({e})",
                path.display()
            )))
        }
    };
    Ok(Place::new(path, &base))
}

/// A place of a search across sessions, as a recipe gives it: on the command line, or the
/// object of a JSON recipe.
fn place(flag: &str, text: &Option<String>) -> Result<Option<Cursor>, HistoryError> {
    text.as_deref()
        .map(|t| {
            let json = || {
                serde_json::from_str(t)
                    .ok()
                    .and_then(|v| Cursor::from_json(&v))
            };
            Cursor::parse(t).or_else(json).ok_or_else(|| {
                HistoryError::usage(format!(
                    "--{flag} {t:?} is not a place: TIME,SESSION,SEQ,PART or the JSON object a \
                     recipe gives"
                ))
            })
        })
        .transpose()
}

/// The core's request for `read`, from its arguments.
pub(crate) fn read_request(args: &ReadArgs, budget: usize) -> ReadRequest {
    ReadRequest {
        session: args.session.clone(),
        seq: args.seq,
        part: args.part,
        offset_chars: args.offset_chars,
        budget,
    }
}
