//! UTC timestamps: parsing RFC 3339 from transcripts and user bounds, and formatting them back.
//!
//! The parser is written here rather than taken from `jiff` because it is faster at the one
//! format transcripts write: `cargo xtask bench-raw` parses the 101,759 timestamps of the
//! generated corpus (`cargo xtask corpus --mib 256 --seed 1`) in 28–30 ns each, as written
//! (`2026-01-22T17:51:04.982Z`), with a `+02:00` offset or with nanoseconds, against 72–83 ns
//! for `jiff::Timestamp`'s `FromStr` (2.6–2.7×, best of 15 runs on a busy 2-core machine). The
//! two agree on all of them and on this module's tests; they part only outside them: jiff refuses
//! more than 9 fractional digits, and accepts `,` before a fraction, `+01` offsets, bracketed
//! time zones, the basic format (`20260122T175104Z`) and times without seconds.

use std::fmt;
use std::time::{SystemTime, UNIX_EPOCH};

/// A UTC instant, in nanoseconds since the Unix epoch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(pub i64);

impl Timestamp {
    /// The current time.
    pub fn now() -> Timestamp {
        let d = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        Timestamp(d.as_nanos() as i64)
    }

    /// Builds a timestamp from milliseconds since the epoch.
    pub fn from_millis(ms: i64) -> Timestamp {
        Timestamp(ms.saturating_mul(1_000_000))
    }

    /// Parses an RFC 3339 / ISO 8601 date-time (`2026-01-22T17:51:04.982Z`, `+01:00` offsets,
    /// any number of fractional digits). Returns `None` for anything else.
    pub fn parse_rfc3339(s: &str) -> Option<Timestamp> {
        let b = s.as_bytes();
        if b.len() < 19 {
            return None;
        }
        let (y, mo, d) = parse_date(&b[..10])?;
        if !(b[10] == b'T' || b[10] == b't' || b[10] == b' ') {
            return None;
        }
        let hh = num(&b[11..13])?;
        let mm = num(&b[14..16])?;
        let ss = num(&b[17..19])?;
        if b[13] != b':' || b[16] != b':' || hh > 23 || mm > 59 || ss > 60 {
            return None;
        }
        let mut i = 19;
        let mut nanos: i64 = 0;
        if i < b.len() && b[i] == b'.' {
            i += 1;
            let start = i;
            while i < b.len() && b[i].is_ascii_digit() {
                if i - start < 9 {
                    nanos = nanos * 10 + i64::from(b[i] - b'0');
                }
                i += 1;
            }
            let digits = i - start;
            if digits == 0 {
                return None;
            }
            for _ in digits..9 {
                nanos *= 10;
            }
        }
        let offset_secs: i64 = match b.get(i..) {
            Some([b'Z' | b'z']) => 0,
            Some([sign @ (b'+' | b'-'), h1, h2, b':', m1, m2]) => {
                let h = num(&[*h1, *h2])?;
                let m = num(&[*m1, *m2])?;
                let off = (h * 3600 + m * 60) as i64;
                if *sign == b'+' {
                    off
                } else {
                    -off
                }
            }
            _ => return None,
        };
        let days = days_from_civil(y, mo, d);
        let secs = days * 86_400 + i64::from(hh * 3600 + mm * 60 + ss.min(59)) - offset_secs;
        secs.checked_mul(1_000_000_000)?
            .checked_add(nanos)
            .map(Timestamp)
    }

    /// Parses a date `YYYY-MM-DD` as midnight UTC.
    pub fn parse_date(s: &str) -> Option<Timestamp> {
        if s.len() != 10 {
            return None;
        }
        let (y, m, d) = parse_date(s.as_bytes())?;
        // Nanoseconds since 1970 overflow an i64 before 1678 and after 2262: no time we can hold.
        days_from_civil(y, m, d)
            .checked_mul(86_400 * 1_000_000_000)
            .map(Timestamp)
    }
}

fn num(b: &[u8]) -> Option<u32> {
    let mut n = 0u32;
    for &c in b {
        if !c.is_ascii_digit() {
            return None;
        }
        n = n * 10 + u32::from(c - b'0');
    }
    Some(n)
}

fn parse_date(b: &[u8]) -> Option<(i64, u32, u32)> {
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let y = num(&b[..4])?;
    let m = num(&b[5..7])?;
    let d = num(&b[8..10])?;
    let y = i64::from(y);
    // A day past the month's end would otherwise roll into the next month.
    if !(1..=12).contains(&m) || d < 1 || d > days_in_month(y, m) {
        return None;
    }
    Some((y, m, d))
}

/// The length of month `m` (1 to 12) of year `y` in the proleptic Gregorian calendar.
fn days_in_month(y: i64, m: u32) -> u32 {
    match m {
        2 if y % 4 == 0 && (y % 100 != 0 || y % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

impl fmt::Display for Timestamp {
    /// RFC 3339 in UTC with millisecond precision, or finer when the instant has it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let secs = self.0.div_euclid(1_000_000_000);
        let nanos = self.0.rem_euclid(1_000_000_000);
        let (y, m, d) = civil_from_days(secs.div_euclid(86_400));
        let sod = secs.rem_euclid(86_400);
        write!(
            f,
            "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}",
            sod / 3600,
            sod / 60 % 60,
            sod % 60
        )?;
        if nanos % 1_000_000 == 0 {
            write!(f, ".{:03}Z", nanos / 1_000_000)
        } else if nanos % 1_000 == 0 {
            write!(f, ".{:06}Z", nanos / 1_000)
        } else {
            write!(f, ".{nanos:09}Z")
        }
    }
}

impl serde::Serialize for Timestamp {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Timestamp {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        Timestamp::parse_rfc3339(&s).ok_or_else(|| serde::de::Error::custom("bad timestamp"))
    }
}

/// Parses a user-supplied time bound: RFC 3339, a date (midnight UTC), `today` or `yesterday`
/// (their midnight, UTC), or a relative age counted back from `now`: `90s`, `30m`, `3h`, `7d`,
/// `2w`, and by the calendar `6mo` and `1y` (the same day and time that many months back, or the
/// month's last day when it has no such day).
pub fn parse_bound(s: &str, now: Timestamp) -> Option<Timestamp> {
    let s = s.trim();
    if let Some(t) = Timestamp::parse_rfc3339(s).or_else(|| Timestamp::parse_date(s)) {
        return Some(t);
    }
    const DAY: i64 = 86_400 * 1_000_000_000;
    let midnight = || now.0.checked_sub(now.0.rem_euclid(DAY));
    match s.to_ascii_lowercase().as_str() {
        "today" => return midnight().map(Timestamp),
        "yesterday" => return midnight()?.checked_sub(DAY).map(Timestamp),
        _ => {}
    }
    let calendar = [("mo", 1), ("y", 12)]
        .into_iter()
        .find_map(|(unit, months)| Some((s.strip_suffix(unit)?.parse::<i64>().ok()?, months)));
    if let Some((n, months)) = calendar {
        let back = u32::try_from(n.checked_mul(months)?).ok()?;
        let (y, m, d) = civil_from_days(now.0.div_euclid(DAY));
        let index = (y * 12 + i64::from(m) - 1).checked_sub(i64::from(back))?;
        let (y, m) = (index.div_euclid(12), (index.rem_euclid(12) + 1) as u32);
        let day = days_from_civil(y, m, d.min(days_in_month(y, m)));
        return day
            .checked_mul(DAY)?
            .checked_add(now.0.rem_euclid(DAY))
            .map(Timestamp);
    }
    let unit = s.chars().last()?;
    let n: i64 = s[..s.len() - unit.len_utf8()].parse().ok()?;
    let secs = match unit {
        's' => 1,
        'm' => 60,
        'h' => 3600,
        'd' => 86_400,
        'w' => 7 * 86_400,
        _ => return None,
    };
    if n < 0 {
        return None;
    }
    let back = n.checked_mul(secs)?.checked_mul(1_000_000_000)?;
    Some(Timestamp(now.0.checked_sub(back)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_offsets() {
        let t = Timestamp::parse_rfc3339("2026-01-22T17:51:04.982Z").unwrap();
        assert_eq!(t.to_string(), "2026-01-22T17:51:04.982Z");
        let o = Timestamp::parse_rfc3339("2026-01-22T18:51:04.982+01:00").unwrap();
        assert_eq!(t, o);
        let micro = Timestamp::parse_rfc3339("2026-01-22T17:51:04.982123Z").unwrap();
        assert_eq!(micro.to_string(), "2026-01-22T17:51:04.982123Z");
        assert_eq!(
            Timestamp::parse_rfc3339("1970-01-01T00:00:00Z"),
            Some(Timestamp(0))
        );
        assert!(Timestamp::parse_rfc3339("2026-13-01T00:00:00Z").is_none());
        assert!(Timestamp::parse_rfc3339("yesterday").is_none());
    }

    #[test]
    fn days_past_the_end_of_their_month_are_no_dates() {
        let date = |s: &str| Timestamp::parse_date(s).map(|t| t.to_string());
        let time = |s: &str| Timestamp::parse_rfc3339(s).map(|t| t.to_string());
        assert_eq!(
            date("2024-02-29").as_deref(),
            Some("2024-02-29T00:00:00.000Z")
        );
        assert_eq!(
            date("2000-02-29").as_deref(),
            Some("2000-02-29T00:00:00.000Z")
        );
        assert_eq!(date("2026-02-29"), None);
        assert_eq!(date("1900-02-29"), None);
        assert_eq!(date("2026-02-30"), None);
        assert_eq!(date("2026-04-31"), None);
        assert_eq!(date("2026-04-00"), None);
        assert_eq!(
            date("2026-04-30").as_deref(),
            Some("2026-04-30T00:00:00.000Z")
        );
        assert_eq!(
            date("2026-12-31").as_deref(),
            Some("2026-12-31T00:00:00.000Z")
        );
        assert_eq!(
            time("2024-02-29T12:00:00Z").as_deref(),
            Some("2024-02-29T12:00:00.000Z")
        );
        assert_eq!(
            time("2000-02-29T12:00:00+01:00").as_deref(),
            Some("2000-02-29T11:00:00.000Z")
        );
        assert_eq!(time("2026-02-29T12:00:00Z"), None);
        assert_eq!(time("1900-02-29T12:00:00Z"), None);
        assert_eq!(time("2026-04-31T00:00:00Z"), None);
        assert_eq!(time("2026-06-31T00:00:00.5Z"), None);
        let now = Timestamp::parse_rfc3339("2026-03-10T00:00:00Z").unwrap();
        assert_eq!(parse_bound("2026-02-30", now), None);
        assert_eq!(parse_bound("2026-04-31T00:00:00Z", now), None);
    }

    #[test]
    fn every_day_of_every_month_round_trips() {
        for y in [1900, 1999, 2000, 2023, 2024, 2100] {
            for m in 1..=12 {
                for d in 1..=days_in_month(y, m) {
                    let s = format!("{y:04}-{m:02}-{d:02}");
                    let t = Timestamp::parse_date(&s).unwrap();
                    assert_eq!(t.to_string(), format!("{s}T00:00:00.000Z"));
                }
                let past = format!("{y:04}-{m:02}-{:02}", days_in_month(y, m) + 1);
                assert_eq!(Timestamp::parse_date(&past), None, "{past}");
            }
        }
    }

    #[test]
    fn dates_past_the_range_of_nanoseconds_are_no_dates() {
        assert_eq!(
            Timestamp::parse_date("2262-04-11").map(|t| t.0 > 0),
            Some(true)
        );
        assert_eq!(Timestamp::parse_date("2263-01-01"), None);
        assert_eq!(Timestamp::parse_date("9999-12-31"), None);
        assert_eq!(Timestamp::parse_date("1600-01-01"), None);
        assert_eq!(parse_bound("9999-12-31", Timestamp(0)), None);
    }

    #[test]
    fn bounds() {
        let now = Timestamp::parse_rfc3339("2026-03-10T00:00:00Z").unwrap();
        assert_eq!(
            parse_bound("7d", now).unwrap().to_string(),
            "2026-03-03T00:00:00.000Z"
        );
        assert_eq!(
            parse_bound("2026-03-01", now).unwrap().to_string(),
            "2026-03-01T00:00:00.000Z"
        );
        assert!(parse_bound("-3h", now).is_none());
        assert!(parse_bound("soon", now).is_none());
        let at = |s: &str, now: &str| {
            let now = Timestamp::parse_rfc3339(now).unwrap();
            parse_bound(s, now).map(|t| t.to_string())
        };
        let now = "2026-03-31T15:30:00Z";
        assert_eq!(at("6mo", now).unwrap(), "2025-09-30T15:30:00.000Z");
        assert_eq!(at("1mo", now).unwrap(), "2026-02-28T15:30:00.000Z");
        assert_eq!(at("14mo", now).unwrap(), "2025-01-31T15:30:00.000Z");
        assert_eq!(
            at("1y", "2028-02-29T01:00:00Z").unwrap(),
            "2027-02-28T01:00:00.000Z"
        );
        assert_eq!(at("today", now).unwrap(), "2026-03-31T00:00:00.000Z");
        assert_eq!(at("Yesterday", now).unwrap(), "2026-03-30T00:00:00.000Z");
        assert_eq!(at("0mo", now).unwrap(), "2026-03-31T15:30:00.000Z");
        assert_eq!(at("-1y", now), None);
        assert_eq!(at("99999999999y", now), None);
        // At the ends of the range of times: none, and no overflow.
        for end in [i64::MIN, i64::MAX] {
            for s in ["today", "yesterday", "6mo", "1y"] {
                let back = parse_bound(s, Timestamp(end));
                assert!(back.is_none_or(|t| t.0 <= end), "{s} at {end}: {back:?}");
            }
        }
    }
}
