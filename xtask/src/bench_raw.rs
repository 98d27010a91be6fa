//! `cargo xtask bench-raw`: history-raw's hand-written searches, and history-core's time parser,
//! against the crates that would replace them, on a generated corpus held in memory.
//!
//! A hand-written search stays only while this shows it faster than `aho-corasick` or
//! `memchr::memmem` doing the same job on this corpus; the figures it prints are the ones the
//! modules' docs quote. Measured:
//!
//! - **The key search**: [`AsciiNeedle::find_at`] (an ASCII case-insensitive needle), called
//!   from each hit onwards to the end of every file, against `aho-corasick` built with
//!   `ascii_case_insensitive(true)`, against `memmem` over a lowercased copy of each file (the
//!   copy timed too), and against `memmem` on the files as they are, which finds only the
//!   lowercase needle: a lower bound on what a case-sensitive search costs, not the same job.
//! - **The key and its hatches in one pass**: [`Pairs::find_with`], the prefilter's search for a
//!   query's key and the starts of the `\uXXXX` escapes and non-ASCII characters that may stand
//!   for its letters, against one `aho-corasick` automaton over the key and the pairs.
//! - **The hatches alone**: [`Pairs::find_at`] over the pairs of a few letter sets (up to the
//!   9 pairs of every letter), against `aho-corasick` over the same pairs and, where it applies,
//!   `memmem` (one pair) or `memchr`/`memchr2`/`memchr3` on the first bytes with the second
//!   checked (up to three first bytes), or a `memmem` pass per pair (more).
//! - **The time parser**: [`history_core::Timestamp::parse_rfc3339`] against
//!   `jiff::Timestamp`'s `FromStr`, on every `timestamp` of the corpus as written (milliseconds,
//!   `Z`), with an offset instead of `Z`, and with nanoseconds; both must agree on every one of
//!   them, and on the cases of the parser's tests.
//!
//! Every figure is the best of `--runs` runs (the least disturbed by the rest of a shared
//! machine), the ways of doing one job taking turns run by run, in GiB/s of corpus (ns per
//! timestamp for the parser), with its time divided by the hand-written one's: above 1, the
//! hand-written one is faster. Beside it, its noise (how much slower its median run was than its
//! best) and what it found, so that a row doing other work shows it.

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use aho_corasick::AhoCorasick;
use anyhow::{bail, Context, Result};
use history_raw::{AsciiNeedle, Pairs, ASCII_FOLDING};
use memchr::memmem;

use crate::corpus;

struct Options {
    mib: f64,
    seed: u64,
    dir: PathBuf,
    runs: usize,
    needles: Vec<String>,
    /// Which groups of jobs to run: `keys`, `hatches`, `times`.
    only: Vec<String>,
}

/// The groups of jobs, each run unless `--only` names others.
const GROUPS: [&str; 3] = ["keys", "hatches", "times"];

/// A word on most lines (with letters the needle search takes as rare), a word on most lines
/// made of the commonest letters, a word in a few files, and one in none.
const NEEDLES: [&str; 4] = ["request", "session", "zebra", "deploy"];

/// The letter sets whose hatch pairs are searched alone: one pair (`\u`), two, three, and the 9
/// of every letter, the most a query can have.
const LETTER_SETS: [&str; 4] = ["code", "jump", "deploy", "abcdefghijklmnopqrstuvwxyz"];

/// `cargo xtask bench-raw [--mib N] [--seed S] [--dir DIR] [--runs R] [--needles a,b,c]
/// [--only keys,hatches,times]`.
pub fn command(args: &[String]) -> Result<()> {
    let mut o = Options {
        mib: 256.0,
        seed: 1,
        dir: PathBuf::from("target/raw-corpus"),
        runs: 5,
        needles: NEEDLES.map(String::from).to_vec(),
        only: GROUPS.map(String::from).to_vec(),
    };
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let mut value = || it.next().with_context(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--mib" => o.mib = value()?.parse().context("--mib")?,
            "--seed" => o.seed = value()?.parse().context("--seed")?,
            "--dir" => o.dir = PathBuf::from(value()?),
            "--runs" => o.runs = value()?.parse::<usize>().context("--runs")?.max(1),
            "--only" => {
                o.only = value()?.split(',').map(str::to_owned).collect();
                if let Some(bad) = o.only.iter().find(|g| !GROUPS.contains(&g.as_str())) {
                    bail!("--only: `{bad}` is none of {}", GROUPS.join(", "));
                }
            }
            "--needles" => {
                o.needles = value()?.split(',').map(str::to_owned).collect();
                if let Some(bad) = o.needles.iter().find(|n| AsciiNeedle::new(n).is_none()) {
                    bail!("--needles: `{bad}` is not a run of ASCII letters");
                }
            }
            other => bail!("unknown bench-raw option `{other}`"),
        }
    }
    run(&o)
}

fn run(o: &Options) -> Result<()> {
    corpus::ensure(&o.dir, o.mib, o.seed)?;
    let files = read_corpus(&o.dir)?;
    let bytes: usize = files.iter().map(Vec::len).sum();
    if cfg!(debug_assertions) {
        eprintln!("bench-raw: a debug build; the figures mean something in release only");
    }
    println!(
        "corpus: {:.1} MiB in {} files ({}), best of {} runs, AVX2: {}",
        bytes as f64 / MIB,
        files.len(),
        o.dir.display(),
        o.runs,
        if avx2() { "yes" } else { "no" }
    );
    let bench = Bench {
        files: &files,
        bytes,
        runs: o.runs,
    };
    let runs = |group: &str| o.only.iter().any(|g| g == group);
    if runs("keys") {
        for needle in &o.needles {
            bench.key_alone(needle)?.print();
            bench.key_with_hatches(needle)?.print();
        }
    }
    if runs("hatches") {
        for letters in LETTER_SETS {
            bench.hatches_alone(letters)?.print();
        }
    }
    if runs("times") {
        times(&files, o.runs)?;
    }
    Ok(())
}

const MIB: f64 = 1024.0 * 1024.0;
const GIB: f64 = 1024.0 * MIB;

#[cfg(target_arch = "x86_64")]
fn avx2() -> bool {
    std::is_x86_feature_detected!("avx2")
}

#[cfg(not(target_arch = "x86_64"))]
fn avx2() -> bool {
    false
}

/// The bytes of every transcript under `dir`, in a fixed order.
fn read_corpus(dir: &Path) -> Result<Vec<Vec<u8>>> {
    let mut paths = Vec::new();
    let mut stack: Vec<PathBuf> = ["claude", "codex", "pi"]
        .iter()
        .map(|h| dir.join(h))
        .collect();
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).with_context(|| d.display().to_string())? {
            let e = e?;
            if e.file_type()?.is_dir() {
                stack.push(e.path());
            } else if e.path().extension().is_some_and(|x| x == "jsonl") {
                paths.push(e.path());
            }
        }
    }
    paths.sort();
    paths
        .iter()
        .map(|p| std::fs::read(p).with_context(|| p.display().to_string()))
        .collect()
}

/// A way of doing a job: its name, and a pass over the whole input that says how many places
/// it found.
struct Way<'a> {
    name: String,
    pass: Box<dyn FnMut() -> usize + 'a>,
}

/// What was measured of a way: its best and median time, and what it found.
struct Row {
    name: String,
    best: Duration,
    median: Duration,
    found: usize,
}

/// What a table's figures are per.
enum Unit {
    /// Throughput over this many bytes.
    Bytes(usize),
    /// Time per item, of this many.
    Items(usize),
}

/// Ways of doing one job, the hand-written one first.
struct Table {
    title: String,
    unit: Unit,
    rows: Vec<Row>,
}

/// Times each way `runs` times, the ways taking turns, so that the rest of a shared machine
/// disturbs them alike.
fn measure(runs: usize, mut ways: Vec<Way>) -> Vec<Row> {
    let mut times = vec![Vec::with_capacity(runs); ways.len()];
    let mut found = vec![0; ways.len()];
    for _ in 0..runs {
        for (k, way) in ways.iter_mut().enumerate() {
            let started = Instant::now();
            found[k] = black_box((way.pass)());
            times[k].push(started.elapsed());
        }
    }
    ways.into_iter()
        .zip(times)
        .zip(found)
        .map(|((way, mut times), found)| {
            times.sort_unstable();
            Row {
                name: way.name,
                best: times[0],
                median: times[times.len() / 2],
                found,
            }
        })
        .collect()
}

impl Table {
    fn print(&self) {
        println!("\n{}", self.title);
        let unit = match self.unit {
            Unit::Bytes(_) => "GiB/s",
            Unit::Items(_) => "ns each",
        };
        println!(
            "  {:<56} {:>7} {:>8} {:>7} {:>8}",
            "", unit, "÷ first", "noise", "found"
        );
        let first = &self.rows[0];
        for r in &self.rows {
            let secs = r.best.as_secs_f64();
            let figure = match self.unit {
                Unit::Bytes(bytes) => bytes as f64 / GIB / secs,
                Unit::Items(items) => secs * 1e9 / items as f64,
            };
            println!(
                "  {:<56} {:>7.2} {:>8.2} {:>6.0}% {:>8}{}",
                r.name,
                figure,
                secs / first.best.as_secs_f64(),
                (r.median.as_secs_f64() / secs - 1.0) * 100.0,
                r.found,
                if r.found == first.found { "" } else { " (≠)" }
            );
        }
    }
}

struct Bench<'a> {
    files: &'a [Vec<u8>],
    bytes: usize,
    runs: usize,
}

impl<'f> Bench<'f> {
    /// A way that runs `count` over every file, which says how many places it found in one.
    fn way<'a>(&self, name: &str, mut count: impl FnMut(&[u8]) -> usize + 'a) -> Way<'a>
    where
        'f: 'a,
    {
        let files = self.files;
        Way {
            name: name.to_string(),
            pass: Box::new(move || files.iter().map(|f| count(black_box(f))).sum()),
        }
    }

    fn table(&self, title: String, ways: Vec<Way>) -> Table {
        Table {
            title,
            unit: Unit::Bytes(self.bytes),
            rows: measure(self.runs, ways),
        }
    }

    /// The needle alone, ASCII case-insensitive.
    fn key_alone(&self, needle: &str) -> Result<Table> {
        let key = AsciiNeedle::new(needle).context("a needle of ASCII letters")?;
        let lower = key.needle().to_vec();
        let ac = AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .build([&lower])?;
        let finder = memmem::Finder::new(&lower);
        let longest = self.files.iter().map(Vec::len).max().unwrap_or(0);
        let mut copy = Vec::with_capacity(longest);
        let ways = vec![
            self.way("history-raw AsciiNeedle::find_at", |hay| {
                let (mut n, mut at) = (0, 0);
                while let Some(i) = key.find_at(hay, at) {
                    n += 1;
                    at = i + 1;
                }
                n
            }),
            self.way("aho-corasick, ascii_case_insensitive, find_iter", |hay| {
                ac.find_iter(hay).count()
            }),
            self.way("lowercased copy + memchr::memmem find_iter", |hay| {
                copy.clear();
                copy.extend_from_slice(hay);
                copy.make_ascii_lowercase();
                finder.find_iter(&copy).count()
            }),
            self.way("memchr::memmem, case-sensitive (a lower bound)", |hay| {
                finder.find_iter(hay).count()
            }),
        ];
        let title = format!("key alone, ASCII case-insensitive: \"{needle}\"");
        Ok(self.table(title, ways))
    }

    /// The needle and the hatches of its letters in one pass, as the prefilter looks.
    fn key_with_hatches(&self, needle: &str) -> Result<Table> {
        let key = AsciiNeedle::new(needle).context("a needle of ASCII letters")?;
        let pairs = hatch_pairs(needle);
        let search = Pairs::new(pairs.clone());
        let mut patterns: Vec<Vec<u8>> = vec![key.needle().to_vec()];
        patterns.extend(pairs.iter().map(|p| p.to_vec()));
        // Case-insensitive for the key; the pairs' bytes are no letters but the `u` of `\u`.
        let ac = AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .build(&patterns)?;
        let ways = vec![
            self.way("history-raw Pairs::find_with", |hay| {
                let (mut n, mut at) = (0, 0);
                while let Some((i, _)) = search.find_with(&key, hay, at, &mut |_| true) {
                    n += 1;
                    at = i + 1;
                }
                n
            }),
            self.way("aho-corasick, key and pairs, find_iter", |hay| {
                ac.find_iter(hay).count()
            }),
        ];
        let title = format!(
            "key and its {} hatch pairs in one pass: \"{needle}\"",
            pairs.len()
        );
        Ok(self.table(title, ways))
    }

    /// The hatch pairs of `letters` alone.
    fn hatches_alone(&self, letters: &str) -> Result<Table> {
        let pairs = hatch_pairs(letters);
        let search = Pairs::new(pairs.clone());
        let ac = AhoCorasick::new(&pairs)?;
        let mut firsts: Vec<u8> = pairs.iter().map(|p| p[0]).collect();
        firsts.dedup();
        let pairs = pairs.as_slice();
        let second_of = move |hay: &[u8], i: usize| {
            hay.get(i + 1)
                .is_some_and(|&b| pairs.contains(&[hay[i], b]))
        };
        let finders: Vec<memmem::Finder> = pairs.iter().map(memmem::Finder::new).collect();
        let mut ways = vec![
            self.way(
                &format!(
                    "history-raw Pairs::find_at, {} pair{}",
                    pairs.len(),
                    if pairs.len() == 1 { "" } else { "s" }
                ),
                |hay| {
                    let (mut n, mut at) = (0, 0);
                    while let Some(i) = search.find_at(hay, at) {
                        n += 1;
                        at = i + 1;
                    }
                    n
                },
            ),
            self.way("aho-corasick, the same pairs, find_iter", |hay| {
                ac.find_iter(hay).count()
            }),
        ];
        ways.push(match (pairs, firsts.as_slice()) {
            ([_], _) => self.way("memchr::memmem find_iter", |hay| {
                finders[0].find_iter(hay).count()
            }),
            (_, &[a, b]) => self.way("memchr::memchr2_iter, second byte checked", move |hay| {
                memchr::memchr2_iter(a, b, hay)
                    .filter(|&i| second_of(hay, i))
                    .count()
            }),
            (_, &[a, b, c]) => self.way("memchr::memchr3_iter, second byte checked", move |hay| {
                memchr::memchr3_iter(a, b, c, hay)
                    .filter(|&i| second_of(hay, i))
                    .count()
            }),
            _ => self.way(
                &format!("memchr::memmem, a pass per pair ({})", pairs.len()),
                |hay| finders.iter().map(|f| f.find_iter(hay).count()).sum(),
            ),
        });
        Ok(self.table(format!("hatch pairs alone: of \"{letters}\""), ways))
    }
}

/// Where a hatch for one of `letters` may start, as the prefilter searches for them: `\u`, and
/// the first two bytes of every non-ASCII character whose folding holds one of the letters.
fn hatch_pairs(letters: &str) -> Vec<[u8; 2]> {
    let mut pairs = vec![*b"\\u"];
    for (c, folded) in ASCII_FOLDING {
        if folded.chars().any(|f| letters.contains(f)) {
            let mut utf8 = [0u8; 4];
            let b = c.encode_utf8(&mut utf8).as_bytes();
            pairs.push([b[0], b[1]]);
        }
    }
    pairs.sort_unstable();
    pairs.dedup();
    pairs
}

/// Every `"timestamp":"…"` value of the corpus.
fn corpus_timestamps(files: &[Vec<u8>]) -> Vec<String> {
    let key = br#""timestamp":""#;
    let finder = memmem::Finder::new(key);
    let mut out = Vec::new();
    for file in files {
        for i in finder.find_iter(file) {
            let start = i + key.len();
            if let Some(len) = memchr::memchr(b'"', &file[start..]) {
                if let Ok(s) = std::str::from_utf8(&file[start..start + len]) {
                    out.push(s.to_string());
                }
            }
        }
    }
    out
}

/// The cases of the time parser's own tests: both parsers must agree on them too.
const PARSER_CASES: &[&str] = &[
    "2026-01-22T17:51:04.982Z",
    "2026-01-22T18:51:04.982+01:00",
    "2026-01-22T17:51:04.982123Z",
    "1970-01-01T00:00:00Z",
    "2026-13-01T00:00:00Z",
    "yesterday",
    "2024-02-29T12:00:00Z",
    "2000-02-29T12:00:00+01:00",
    "2026-02-29T12:00:00Z",
    "1900-02-29T12:00:00Z",
    "2026-04-31T00:00:00Z",
    "2026-06-31T00:00:00.5Z",
    "2026-03-10T00:00:00Z",
];

/// Inputs outside those tests where the two parsers may part: printed, not required to agree.
const EDGE_CASES: &[&str] = &[
    "2026-01-22t17:51:04.982z",
    "2026-01-22 17:51:04.982Z",
    "2016-12-31T23:59:60Z",
    "2026-01-22T17:51:04.9821234567Z",
    "2026-01-22T17:51:04,982Z",
    "2026-01-22T17:51:04+01",
    "2026-01-22T17:51:04-00:00",
    "2026-01-22T17:51:04.982Z[Europe/Berlin]",
    "20260122T175104Z",
    "2026-01-22T17:51Z",
    "2263-01-01T00:00:00Z",
];

fn ours(s: &str) -> Option<i64> {
    history_core::Timestamp::parse_rfc3339(s).map(|t| t.0)
}

fn jiffs(s: &str) -> Option<i64> {
    s.parse::<jiff::Timestamp>()
        .ok()
        .and_then(|t| i64::try_from(t.as_nanosecond()).ok())
}

/// The time parser against jiff's, on the timestamps of the corpus as written, with an offset,
/// and with nanoseconds.
fn times(files: &[Vec<u8>], runs: usize) -> Result<()> {
    let written = corpus_timestamps(files);
    if written.is_empty() {
        bail!("no timestamp in the corpus");
    }
    let offset: Vec<String> = written.iter().map(|s| s.replace('Z', "+02:00")).collect();
    let nanos: Vec<String> = written.iter().map(|s| s.replace('Z', "123456Z")).collect();
    for (what, set) in [
        ("as written (ms, Z)", &written),
        ("offset +02:00", &offset),
        ("nanoseconds", &nanos),
    ] {
        let way = |name: &str, parse: fn(&str) -> Option<i64>| Way {
            name: name.to_string(),
            pass: Box::new(move || {
                set.iter()
                    .filter(|s| parse(black_box(s.as_str())).is_some())
                    .count()
            }),
        };
        let ways = vec![
            way("history-core Timestamp::parse_rfc3339", ours),
            way("jiff::Timestamp FromStr", jiffs),
        ];
        let table = Table {
            title: format!(
                "time parser: {} timestamps of the corpus, {what}",
                set.len()
            ),
            unit: Unit::Items(set.len()),
            rows: measure(runs, ways),
        };
        table.print();
        let disagree = set.iter().filter(|s| ours(s) != jiffs(s)).count();
        println!("  the two disagree on {disagree} of them");
    }
    let differ = |cases: &[&str]| -> Vec<String> {
        cases
            .iter()
            .filter(|s| ours(s) != jiffs(s))
            .map(|s| format!("{s:?}: {:?}, jiff {:?}", ours(s), jiffs(s)))
            .collect()
    };
    let tests = differ(PARSER_CASES);
    if tests.is_empty() {
        println!("\nthe two parsers agree on the cases of the parser's tests");
    } else {
        println!("\nthe two parsers differ on cases of the parser's tests:");
        for d in &tests {
            println!("  {d}");
        }
    }
    println!("beyond them, they differ on:");
    for d in differ(EDGE_CASES) {
        println!("  {d}");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hatch_pairs_are_the_prefilters() {
        assert_eq!(hatch_pairs("code"), [*b"\\u"]);
        // `y` has ẙ (e1 ba 99), `l` the ligatures ﬂ and ﬄ (ef ac 82, ef ac 84).
        assert_eq!(hatch_pairs("deploy"), [*b"\\u", [0xe1, 0xba], [0xef, 0xac]]);
        // `\u` and eight character prefixes: the most the AVX2 loop takes.
        assert_eq!(hatch_pairs("abcdefghijklmnopqrstuvwxyz").len(), 9);
    }

    /// Every row of a table does the same job (but the lower bound): on text with the needle
    /// in every case, escapes and characters that fold to letters, they find the same places.
    #[test]
    fn the_rows_of_a_table_find_the_same() {
        let files: Vec<Vec<u8>> = [
            r#"{"text":"a Request, a REQUEST and a request: Stra\u00dfe, Straße, ﬂow"}"#,
            "no needle here, but ǰ and K and \\u0041",
            "",
            "requestrequest rEqUeSt",
        ]
        .iter()
        .map(|s| s.repeat(40).into_bytes())
        .collect();
        let bytes = files.iter().map(Vec::len).sum();
        let bench = Bench {
            files: &files,
            bytes,
            runs: 1,
        };
        let mut tables = vec![
            bench.key_alone("request").unwrap(),
            bench.key_with_hatches("request").unwrap(),
        ];
        tables.extend(LETTER_SETS.map(|l| bench.hatches_alone(l).unwrap()));
        for table in &tables {
            let first = table.rows[0].found;
            assert!(first > 0, "{}", table.title);
            for row in &table.rows {
                if !row.name.contains("lower bound") {
                    assert_eq!(row.found, first, "{}: {}", table.title, row.name);
                }
            }
        }
    }

    #[test]
    fn both_time_parsers_agree_on_the_parsers_tests() {
        for case in PARSER_CASES {
            assert_eq!(ours(case), jiffs(case), "{case}");
        }
    }
}
