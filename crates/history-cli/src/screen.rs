//! What text output does for a person at a terminal: color (ANSI SGR), every match highlighted,
//! local times with their age, and lines cut to the terminal's width. Piped output uses none of
//! it, so that it stays the plain format scripts and snapshot tests read.

use history_core::{Filter, Role, Timestamp};
use unicode_width::UnicodeWidthChar;

/// Where standard output goes, as the binary finds it, and the clock and time zone that local
/// times and ages are shown in. Tests build one to force a terminal.
#[derive(Clone, Debug)]
pub struct Terminal {
    /// Whether standard output is a terminal.
    pub is_terminal: bool,
    /// Its width in columns, where known.
    pub width: Option<usize>,
    /// Its height in rows, where known.
    pub height: Option<usize>,
    /// The time ages are counted to.
    pub now: Timestamp,
    /// The time zone local times are shown in on a terminal.
    pub zone: jiff::tz::TimeZone,
}

impl Terminal {
    /// Output that is not a terminal (a pipe or a file): its times are UTC, so the system's
    /// time zone is not looked up (that reads the whole zone database).
    pub fn piped() -> Terminal {
        Terminal {
            is_terminal: false,
            width: None,
            height: None,
            now: Timestamp::now(),
            zone: jiff::tz::TimeZone::UTC,
        }
    }
}

/// The clock local times and ages are shown by.
#[derive(Clone, Debug)]
pub struct Clock {
    /// The time ages are counted to.
    pub now: Timestamp,
    /// The time zone local times are shown in.
    pub zone: jiff::tz::TimeZone,
}

impl Clock {
    fn local(&self, t: Timestamp, format: &str) -> Option<String> {
        let at = jiff::Timestamp::from_nanosecond(i128::from(t.0)).ok()?;
        Some(at.to_zoned(self.zone.clone()).strftime(format).to_string())
    }

    /// `2026-03-02 11:00:05 (3h ago)`, in the clock's time zone.
    pub fn when(&self, t: Timestamp) -> String {
        match self.local(t, "%Y-%m-%d %H:%M:%S") {
            Some(local) => format!("{local} ({})", self.age(t)),
            None => t.to_string(),
        }
    }

    /// How long before now `t` was, in its largest unit: `45s ago`, `3h ago`, `2mo ago`; `in 5m`
    /// for a time after now.
    pub fn age(&self, t: Timestamp) -> String {
        let secs = (self.now.0 - t.0) / 1_000_000_000;
        let (n, unit) = match secs.unsigned_abs() {
            s if s < 60 => (s, "s"),
            s if s < 3600 => (s / 60, "m"),
            s if s < 86_400 => (s / 3600, "h"),
            s if s < 30 * 86_400 => (s / 86_400, "d"),
            s if s < 365 * 86_400 => (s / (30 * 86_400), "mo"),
            s => (s / (365 * 86_400), "y"),
        };
        match secs < 0 {
            true => format!("in {n}{unit}"),
            false => format!("{n}{unit} ago"),
        }
    }
}

/// A kind of text that gets its own color.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Paint {
    /// A session's id.
    Session,
    /// A seq, a count.
    Number,
    /// Times, kinds, working directories: what frames the text.
    Dim,
    /// A matched query.
    Match,
    /// A recipe's arrow and name.
    Recipe,
    /// What a role says.
    Role(Role),
}

impl Paint {
    fn sgr(self) -> &'static str {
        match self {
            Paint::Session => "35",
            Paint::Number => "36",
            Paint::Dim => "2",
            Paint::Match => "1;31",
            Paint::Recipe => "33",
            Paint::Role(Role::User) => "1;32",
            Paint::Role(Role::Assistant) => "1;34",
            Paint::Role(Role::Tool) => "33",
            Paint::Role(Role::Context) => "2",
        }
    }
}

/// `text` in `paint`'s color when `color` is on.
pub fn paint(color: bool, paint: Paint, text: &str) -> String {
    match color && !text.is_empty() {
        true => format!("\x1b[{}m{text}\x1b[0m", paint.sgr()),
        false => text.to_string(),
    }
}

/// The byte ranges of `text` where `filter`'s queries match, left to right, not overlapping:
/// at each place the leftmost match starts, the shortest query that matches there. The text is
/// folded once and each query sought once through it, so that a long text with many matches
/// costs its length (the picker shows texts of tens of KiB where a short word matches
/// hundreds of times).
pub fn matches(filter: &Filter, text: &str) -> Vec<std::ops::Range<usize>> {
    let (folded, origin) = history_raw::fold_with_origins(text);
    // A match of the folded text, in the original: from its first character to the end of its
    // last (a character whose folding it takes only a part of is taken whole).
    let original = |from: usize, to: usize| {
        let last = origin[to - 1];
        let width = text[last..].chars().next().map_or(0, char::len_utf8);
        origin[from]..last + width
    };
    let mut found: Vec<(usize, usize)> = Vec::new();
    for q in filter.queries().iter().filter(|q| !q.is_empty()) {
        found.extend(
            folded
                .match_indices(q.as_str())
                .map(|(at, m)| (at, at + m.len())),
        );
    }
    found.sort_unstable();
    let mut out: Vec<std::ops::Range<usize>> = Vec::new();
    for (from, to) in found {
        let range = original(from, to);
        if out.last().is_none_or(|last| range.start >= last.end) {
            out.push(range);
        }
    }
    out
}

/// `text` with every match of `filter` painted, when `color` is on.
pub fn highlight(color: bool, filter: Option<&Filter>, text: &str) -> String {
    let Some(filter) = filter.filter(|f| color && f.is_search()) else {
        return text.to_string();
    };
    let mut out = String::with_capacity(text.len() + 16);
    let mut last = 0;
    for m in matches(filter, text) {
        out.push_str(&text[last..m.start]);
        out.push_str(&paint(true, Paint::Match, &text[m.clone()]));
        last = m.end;
    }
    out.push_str(&text[last..]);
    out
}

/// How many columns `text` takes on a terminal.
pub fn columns(text: &str) -> usize {
    text.chars().map(|c| c.width().unwrap_or(0)).sum()
}

/// `text` on one line (line breaks and tabs as spaces, runs of them as one), starting a little
/// before `focus` when that would otherwise lie beyond `width` columns, and cut to `width`
/// columns with `…` where it goes on.
pub fn one_line(text: &str, focus: Option<usize>, width: usize) -> String {
    let mut flat = String::with_capacity(text.len().min(4 * width + 16));
    let mut at_focus = None;
    let mut space = false;
    for (i, c) in text.char_indices() {
        if Some(i) == focus {
            at_focus = Some(flat.len());
        }
        if c.is_whitespace() {
            space = !flat.is_empty();
            continue;
        }
        if space {
            flat.push(' ');
            space = false;
        }
        flat.push(c);
        // Enough text to fill the line past the match is enough.
        let reached = at_focus.or(focus.is_none().then_some(0));
        if reached.is_some_and(|f| flat.len() - f > 8 * width) {
            break;
        }
    }
    let mut start = 0;
    if let Some(f) = at_focus {
        if columns(&flat[..f]) + 8 > width {
            let lead = width / 4;
            let mut s = f;
            let mut cols = 0;
            for (i, c) in flat[..f].char_indices().rev() {
                cols += c.width().unwrap_or(0);
                if cols > lead {
                    break;
                }
                s = i;
            }
            start = s;
        }
    }
    let mut out = String::new();
    let mut cols = 0;
    if start > 0 {
        out.push('…');
        cols += 1;
    }
    let rest = &flat[start..];
    for (i, c) in rest.char_indices() {
        let w = c.width().unwrap_or(0);
        let more = i + c.len_utf8() < rest.len();
        if cols + w + usize::from(more) > width {
            out.push('…');
            return out;
        }
        out.push(c);
        cols += w;
    }
    out
}

/// A command line shortened to `room` columns for a person to read: the home directory as
/// `~`, a session id after `--session` to its first eight characters (a prefix still names it),
/// the middle of long paths left out (longest first), and at last its end.
pub fn shorten(command: &str, room: usize, home: Option<&str>) -> String {
    let total = |words: &[String]| {
        words.iter().map(|w| columns(w)).sum::<usize>() + words.len().saturating_sub(1)
    };
    let mut words = shorten_words(command, room, home);
    let mut paths: Vec<usize> = (0..words.len())
        .filter(|&i| words[i].contains('/'))
        .collect();
    paths.sort_by_key(|&i| std::cmp::Reverse(columns(&words[i])));
    for i in paths {
        let over = total(&words).saturating_sub(room);
        if over == 0 {
            break;
        }
        words[i] = middle_out(&words[i], columns(&words[i]).saturating_sub(over));
    }
    let line = words.join(" ");
    match columns(&line) > room {
        true => one_line(&line, None, room),
        false => line,
    }
}

/// A command line in lines of at most `room` columns that a POSIX shell still reads as one
/// (each but the last ends with ` \\`; the caller indents the others by two more): the home
/// directory as `~` and session ids after `--session` cut to eight characters where it does
/// not fit on one; a word wider than a line alone loses its middle.
pub fn wrap_command(command: &str, room: usize, home: Option<&str>) -> Vec<String> {
    let shortened = shorten_words(command, room, home);
    if columns(&shortened.join(" ")) <= room {
        return vec![shortened.join(" ")];
    }
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in shortened {
        // Room on this line for the word and, after it, ` \`.
        let here = if lines.is_empty() {
            room
        } else {
            room.saturating_sub(2)
        };
        let word = middle_out(&word, here.saturating_sub(2));
        if !line.is_empty() && columns(&line) + 1 + columns(&word) + 2 > here {
            lines.push(std::mem::take(&mut line) + " \\");
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(&word);
    }
    lines.push(line);
    lines
}

/// The words of `command` with the home directory as `~`, and, where they do not fit in
/// `room`, session ids after `--session` cut to their first eight characters.
fn shorten_words(command: &str, room: usize, home: Option<&str>) -> Vec<String> {
    let total = |words: &[String]| {
        words.iter().map(|w| columns(w)).sum::<usize>() + words.len().saturating_sub(1)
    };
    let home = home.filter(|h| h.len() > 1);
    let mut words: Vec<String> = command
        .split(' ')
        .map(|w| match home.and_then(|h| w.strip_prefix(h)) {
            Some(rest) if rest.is_empty() || rest.starts_with('/') => format!("~{rest}"),
            _ => w.to_string(),
        })
        .collect();
    for i in 1..words.len() {
        if total(&words) <= room {
            break;
        }
        if words[i - 1] != "--session" || words[i].contains('*') {
            continue;
        }
        if let Some((harness, id)) = words[i].split_once(':') {
            if id.chars().count() > 12 {
                words[i] = format!("{harness}:{}", id.chars().take(8).collect::<String>());
            }
        }
    }
    words
}

/// `path` in at most `cols` columns (twelve at least): its start up to its first component and
/// its end, with `…` for what lies between.
fn middle_out(path: &str, cols: usize) -> String {
    let cols = cols.max(12);
    if columns(path) <= cols {
        return path.to_string();
    }
    let chars: Vec<char> = path.chars().collect();
    // The start: up to the second `/` (`~/.pi/`, `/home/`), a third of the room at most.
    let mut head = 0;
    let mut slashes = 0;
    for (i, c) in chars.iter().enumerate() {
        if i >= cols / 3 {
            break;
        }
        head = i + 1;
        if *c == '/' {
            slashes += 1;
            if slashes == 2 && i > 0 {
                break;
            }
        }
    }
    let mut tail = chars.len();
    let mut used = columns(&chars[..head].iter().collect::<String>()) + 1;
    while tail > head {
        let w = chars[tail - 1].to_string();
        if used + columns(&w) > cols {
            break;
        }
        used += columns(&w);
        tail -= 1;
    }
    let start: String = chars[..head].iter().collect();
    let end: String = chars[tail..].iter().collect();
    format!("{start}…{end}")
}

/// The lines of `text` around the one that holds byte `focus` (the first line without one):
/// `n` before it and `n` after, each with where the focus lies in it.
pub fn around(text: &str, focus: Option<usize>, n: usize) -> Vec<(&str, Option<usize>)> {
    let mut starts = Vec::new();
    let mut at = 0;
    for line in text.split('\n') {
        starts.push((at, line));
        at += line.len() + 1;
    }
    let hit = focus.map_or(0, |f| starts.partition_point(|(s, _)| *s <= f) - 1);
    let from = hit.saturating_sub(n);
    let to = hit.saturating_add(n).min(starts.len() - 1);
    starts[from..=to]
        .iter()
        .enumerate()
        .map(|(i, (start, line))| {
            let focus = focus.filter(|_| from + i == hit).map(|f| f - start);
            (*line, focus)
        })
        .collect()
}

/// What of a text fits a screen: its lines from a little before the focus on.
#[derive(Debug, PartialEq, Eq)]
pub struct Screenful {
    /// The lines shown.
    pub text: String,
    /// How many lines were left out.
    pub hidden: usize,
}

/// `text` cut to `rows` rows of `width` columns (a line wider than the screen takes several),
/// with the line that holds byte `focus` in view; `None` when it fits whole.
pub fn screenful(text: &str, focus: Option<usize>, rows: usize, width: usize) -> Option<Screenful> {
    let width = width.max(1);
    let rows_of = |line: &str| columns(line).div_ceil(width).max(1);
    let mut total = 0;
    let lines: Vec<(&str, usize)> = text
        .split('\n')
        .map(|l| {
            let r = rows_of(l);
            total += r;
            (l, r)
        })
        .collect();
    if total <= rows {
        return None;
    }
    // The focus's line, a quarter of a screen below the top.
    let hit = match focus {
        Some(f) => text[..f.min(text.len())].matches('\n').count(),
        None => 0,
    };
    let mut start = hit;
    let mut above = 0;
    while start > 0 && above + lines[start - 1].1 <= rows / 4 {
        start -= 1;
        above += lines[start].1;
    }
    let mut shown = Vec::new();
    let mut used = 0;
    for (i, (line, r)) in lines.iter().enumerate().skip(start) {
        if used + r > rows {
            if shown.is_empty() {
                // One line wider than the screen: as much of it as fills it, the match in view.
                let f = focus.filter(|_| i == hit).map(|f| {
                    let line_start = text[..f].rfind('\n').map_or(0, |p| p + 1);
                    f - line_start
                });
                shown.push(one_line(line, f, rows * width - 1));
            }
            break;
        }
        used += r;
        shown.push(line.to_string());
    }
    Some(Screenful {
        hidden: lines.len() - shown.len(),
        text: shown.join("\n"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_in_the_largest_unit() {
        let clock = Clock {
            now: Timestamp(10_000 * 86_400 * 1_000_000_000),
            zone: jiff::tz::TimeZone::UTC,
        };
        let ago = |secs: i64| clock.age(Timestamp(clock.now.0 - secs * 1_000_000_000));
        assert_eq!(ago(5), "5s ago");
        assert_eq!(ago(3 * 3600 + 10), "3h ago");
        assert_eq!(ago(2 * 86_400), "2d ago");
        assert_eq!(ago(400 * 86_400), "1y ago");
        assert_eq!(ago(-300), "in 5m");
        assert_eq!(
            clock.when(Timestamp(clock.now.0 - 90 * 1_000_000_000)),
            "1997-05-18 23:58:30 (1m ago)"
        );
    }

    #[test]
    fn every_match_is_found_with_its_length_in_the_original_text() {
        let f = Filter::new(&["STRASSE".into(), "ab".into()], vec![], None, None);
        let text = "Straße, ab, AB und strasse";
        let got: Vec<&str> = matches(&f, text).into_iter().map(|r| &text[r]).collect();
        assert_eq!(got, ["Straße", "ab", "AB", "strasse"]);
        let lit = highlight(true, Some(&f), "x ab y");
        assert_eq!(lit, "x \x1b[1;31mab\x1b[0m y");
        assert_eq!(highlight(false, Some(&f), "x ab y"), "x ab y");
        // Where queries overlap, the leftmost match, and the shortest of those that start there.
        let f = Filter::new(
            &["test".into(), "tes".into(), "stf".into()],
            vec![],
            None,
            None,
        );
        let text = "testing, TEStf tests";
        let got: Vec<&str> = matches(&f, text).into_iter().map(|r| &text[r]).collect();
        assert_eq!(got, ["tes", "TES", "tes"]);
    }

    #[test]
    fn a_screenful_keeps_the_match_in_view_and_counts_what_it_leaves_out() {
        let text: String = (0..100).map(|i| format!("line {i}\n")).collect();
        let text = text.trim_end();
        assert_eq!(screenful(text, None, 200, 80), None, "it fits");
        let at = text.find("line 50").unwrap();
        let cut = screenful(text, Some(at), 20, 80).unwrap();
        assert_eq!(cut.text.lines().count(), 20);
        assert_eq!(cut.hidden, 80);
        assert!(cut.text.starts_with("line 45\n"), "{}", cut.text);
        // A line three screens wide is cut to one, its match in view.
        let long = format!("{} needle {}", "a ".repeat(1000), "b ".repeat(1000));
        let cut = screenful(&long, long.find("needle"), 10, 40).unwrap();
        assert!(
            cut.text.contains("needle") && columns(&cut.text) < 400,
            "{}",
            cut.text
        );
        assert_eq!(cut.hidden, 0);
        // Wide characters take two columns each.
        assert!(screenful(&"日".repeat(50), None, 2, 40).is_some());
    }

    #[test]
    fn commands_shortened_to_the_room_they_have() {
        let pi = "pi --session /home/ben/.pi/agent/sessions/--Users-ben-tui-pi--/2026-07-21T22-33-37-367Z_019f86d0-2b56-72c1-b90f-60a707fde7d7.jsonl";
        let short = shorten(pi, 76, Some("/home/ben"));
        assert!(columns(&short) <= 76, "{short}");
        assert!(short.starts_with("pi --session ~/.pi/…"), "{short}");
        assert!(
            short.ends_with("019f86d0-2b56-72c1-b90f-60a707fde7d7.jsonl"),
            "{short}"
        );
        assert_eq!(shorten(pi, 500, None), pi, "room enough: whole");
        let hits = "notesoup-history list --session claude:70fc6d83-147d-4fdf-b015-bd67eeb11883 --query 'git diff'";
        assert_eq!(
            shorten(hits, 76, None),
            "notesoup-history list --session claude:70fc6d83 --query 'git diff'"
        );
        let resume = "cd /home/ben/Work/entire/devenv/cli && claude --resume 70fc6d83-147d-4fdf-b015-bd67eeb11883";
        let short = shorten(resume, 72, Some("/home/ben"));
        assert!(
            columns(&short) <= 72 && short.starts_with("cd ~/"),
            "{short}"
        );
        assert!(
            short.ends_with("--resume 70fc6d83-147d-4fdf-b015-bd67eeb11883"),
            "{short}"
        );
        // Whatever is left is cut at its end.
        assert!(columns(&shorten(&"x".repeat(300), 40, None)) <= 40);
        assert_eq!(
            middle_out("~/a/b/c/d/e/f/g/h/i/jjjjjjjj", 16),
            "~/a/…/i/jjjjjjjj"
        );
    }

    #[test]
    fn a_long_command_wraps_as_a_shell_reads_it() {
        let hits = "notesoup-history list --claude-root /very/long/root/of/claude --codex-root /very/long/root/of/codex --session claude:70fc6d83-147d-4fdf-b015-bd67eeb11883 --query 'git diff'";
        let lines = wrap_command(hits, 60, None);
        assert!(lines.len() > 1, "{lines:?}");
        for (i, line) in lines.iter().enumerate() {
            let room = if i == 0 { 60 } else { 58 };
            assert!(columns(line) <= room, "{line}");
            assert_eq!(line.ends_with(" \\"), i + 1 < lines.len(), "{line}");
        }
        let joined = lines.join(" ").replace(" \\ ", " ");
        assert_eq!(
            joined,
            hits.replace("70fc6d83-147d-4fdf-b015-bd67eeb11883", "70fc6d83"),
            "the same words: pasted, the same command"
        );
        assert_eq!(wrap_command("a b", 60, None), ["a b"]);
    }

    #[test]
    fn lines_around_a_match() {
        let text = "a\nb\nc needle\nd\ne";
        let got = around(text, text.find("needle"), 1);
        assert_eq!(got, [("b", None), ("c needle", Some(2)), ("d", None)]);
        assert_eq!(around(text, None, 0), [("a", None)]);
        assert_eq!(around(text, text.find('e'), 5).len(), 5);
    }

    #[test]
    fn one_line_fits_the_width_and_keeps_the_match_in_view() {
        assert_eq!(one_line("a\n\n  b\tc", None, 20), "a b c");
        assert_eq!(one_line("abcdefghij", None, 5), "abcd…");
        let text = format!("{}needle and more", "x ".repeat(100));
        let at = text.find("needle");
        let line = one_line(&text, at, 30);
        assert!(line.starts_with('…') && line.contains("needle"), "{line}");
        assert!(columns(&line) <= 30);
        assert_eq!(columns(&one_line("日本語のテキスト", None, 7)), 7);
    }
}
