//! `cargo xtask bench`: notesoup-history against `rg -i -F -c` over the same files, in one run.
//!
//! Every figure is the median of several runs with a warm page cache, reported as a ratio to
//! rg's time in the same run, because absolute times on shared machines are noise. Peak RSS is
//! the child's own (`wait4`).
//!
//! Three shapes of history: the mixed corpus (scanned, then through the search index), many
//! small sessions (indexed and scanned), and, with `--scale`, the mixed corpus at two sizes 4×
//! apart, to show how the indexed queries grow with the history.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use serde_json::Value;

use xtask::corpus;

/// The harnesses' roots inside a corpus directory.
const HARNESSES: [&str; 3] = ["claude", "codex", "pi"];

/// A word of the filler prose, in most files: a page of it is found in the newest (or oldest)
/// few sessions.
const FREQUENT: &str = "function";

/// A phrase of two common words, in about a third of the files (the big one among them).
const PHRASE: &str = "git status";

/// Where the many-small-sessions corpus is written.
const SMALL_DIR: &str = "target/bench-small";

const MIB: f64 = 1048576.0;

struct Options {
    mib: f64,
    seed: u64,
    dir: PathBuf,
    runs: usize,
    /// How many sessions the many-small-sessions section writes; 0 skips the section.
    small: usize,
    /// Time the indexed queries at two sizes of the mixed corpus instead of the other sections.
    scale: bool,
}

/// One measured command: median wall time and the largest peak RSS over its runs.
struct Measure {
    name: String,
    secs: f64,
    rss_mib: f64,
    exit: i32,
}

pub fn command(args: &[String]) -> Result<()> {
    let mut o = Options {
        mib: 1024.0,
        seed: 1,
        dir: PathBuf::from("target/bench-corpus"),
        runs: 3,
        small: 20_000,
        scale: false,
    };
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let mut value = || it.next().with_context(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--mib" => o.mib = value()?.parse().context("--mib")?,
            "--seed" => o.seed = value()?.parse().context("--seed")?,
            "--dir" => o.dir = PathBuf::from(value()?),
            "--runs" => o.runs = value()?.parse::<usize>().context("--runs")?.max(1),
            "--small" => o.small = value()?.parse().context("--small")?,
            "--scale" => o.scale = true,
            other => bail!("unknown bench option `{other}`"),
        }
    }
    run(&o)
}

fn run(o: &Options) -> Result<()> {
    let tools = Tools::find()?;
    if o.scale {
        return bench_scale(o, &tools);
    }
    bench_mixed(o, &tools)?;
    if o.small > 0 {
        bench_small(o, &tools)?;
    }
    Ok(())
}

/// The two programs compared: notesoup-history, built for the bench, and rg.
struct Tools {
    cli: PathBuf,
    rg: PathBuf,
}

impl Tools {
    fn find() -> Result<Tools> {
        Ok(Tools {
            rg: which("rg").context("rg is needed for the baseline: apt-get install ripgrep")?,
            cli: build_cli()?,
        })
    }
}

/// The commands run over one corpus: notesoup-history on its roots, with a cache of its own,
/// and rg over the same roots.
struct Searches<'a> {
    tools: &'a Tools,
    roots: [PathBuf; 3],
    cache: PathBuf,
}

impl<'a> Searches<'a> {
    fn new(tools: &'a Tools, dir: &Path) -> Result<Searches<'a>> {
        Ok(Searches {
            tools,
            roots: HARNESSES.map(|h| dir.join(h)),
            // Absolute: a relative XDG_CACHE_HOME is ignored (as the XDG specification says),
            // and the overview would then use, and warm, the cache under $HOME.
            cache: std::env::current_dir()?.join(dir).join("bench-cache"),
        })
    }

    /// notesoup-history with `args`, on the search index, which it keeps up to date.
    fn indexed(&self, args: &[&str]) -> Command {
        let mut c = Command::new(&self.tools.cli);
        for (flag, root) in ["--claude-root", "--codex-root", "--pi-root"]
            .iter()
            .zip(&self.roots)
        {
            c.arg(flag).arg(root);
        }
        c.args(args).env("XDG_CACHE_HOME", &self.cache);
        c
    }

    /// The scan path: notesoup-history without the search index, which a search would
    /// otherwise also start building in the background, in the middle of the measurements.
    fn scan(&self, args: &[&str]) -> Command {
        let mut c = self.indexed(args);
        c.env("NOTESOUP_HISTORY_INDEX", "off");
        c
    }

    /// The baseline of a question: rg listing the files that hold any of its words.
    fn rg_any(&self, words: &[&str]) -> Command {
        let mut c = Command::new(&self.tools.rg);
        c.args(["-i", "-F", "-l", "--no-messages"]);
        for w in words {
            c.arg("-e").arg(w);
        }
        c.args(&self.roots);
        c
    }

    /// The baseline: rg counting the lines that hold `term` in every file.
    fn rg(&self, term: &str) -> Command {
        self.rg_either(&[term])
    }

    /// rg counting the lines that hold any of `terms`.
    fn rg_either(&self, terms: &[&str]) -> Command {
        let mut c = Command::new(&self.tools.rg);
        c.args(["-i", "-F", "-c", "--no-messages"]);
        for term in terms {
            c.arg("-e").arg(term);
        }
        c.args(&self.roots);
        c
    }

    fn index_dir(&self) -> PathBuf {
        self.cache.join("notesoup/history-search")
    }

    /// Warms the page cache, so that every command reads the transcripts from memory.
    fn warm(&self, term: &str) -> Result<()> {
        measure("warm-up", 1, || self.rg(term), no_reset)?;
        Ok(())
    }
}

/// A search across every session, timed against rg for the same term:
/// `list --session '*' --query TERM` and `flags`.
struct Query<'a> {
    name: &'static str,
    term: &'a str,
    flags: &'a [&'a str],
}

impl Query<'_> {
    fn args(&self) -> Vec<&str> {
        let mut args = vec!["list", "--session", "*", "--query", self.term];
        args.extend_from_slice(self.flags);
        args
    }

    /// The query run by `cli` (indexed or scanning) and rg for its term, in turn, as `name`.
    fn paired(
        &self,
        name: impl Into<String>,
        cli: impl Fn(&[&str]) -> Command,
        s: &Searches,
        runs: usize,
    ) -> Result<(Measure, Measure)> {
        paired(
            name,
            runs,
            || cli(&self.args()),
            no_reset,
            || s.rg_either(&self.terms()),
        )
    }

    /// Its term and those of any other `--query` among its flags (an OR).
    fn terms(&self) -> Vec<&str> {
        let others = self.flags.windows(2).filter(|w| w[0] == "--query");
        std::iter::once(self.term)
            .chain(others.map(|w| w[1]))
            .collect()
    }
}

/// Each query run by `cli`, paired with rg, under its own name.
fn time_queries(
    queries: &[Query],
    cli: impl Fn(&[&str]) -> Command,
    s: &Searches,
    runs: usize,
) -> Result<Vec<(Measure, Measure)>> {
    queries
        .iter()
        .map(|q| q.paired(q.name, &cli, s, runs))
        .collect()
}

/// The mixed corpus: the overview and searches without the index, then the index.
fn bench_mixed(o: &Options, tools: &Tools) -> Result<()> {
    let expected = corpus::ensure(&o.dir, o.mib, o.seed)?;
    let s = Searches::new(tools, &o.dir)?;
    // A term in about a third of the files (the big one among them), and one in a single file.
    let present = format!("needle-{}-", o.seed);
    let rare = plant_rare_session(&o.dir)?;
    let absent = absent_term(&expected);
    let files = corpus_files(&o.dir)?;
    let bytes = total_bytes(&files);
    s.warm(&present)?;

    let fresh_cache = || {
        let _ = std::fs::remove_dir_all(&s.cache);
        Ok(())
    };
    let overview = || s.scan(&["list"]);
    // Each row: the measure and its rg run, the two taking turns so that both meet the
    // machine in the same state.
    let mut rows = vec![
        paired(
            "overview, cold cache",
            o.runs,
            overview,
            fresh_cache,
            || s.rg(&present),
        )?,
        // A few milliseconds, where one stray stall moves a median of few runs: three
        // times as many.
        paired(
            "overview, warm cache",
            3 * o.runs,
            overview,
            no_reset,
            || s.rg(&present),
        )?,
    ];
    let queries = [
        Query {
            name: "query present in 1/3 of files",
            term: &present,
            flags: &[],
        },
        Query {
            name: "query present in 1 file",
            term: &rare,
            flags: &[],
        },
        Query {
            name: "query absent",
            term: &absent,
            flags: &[],
        },
        Query {
            name: "frequent word, newest first",
            term: FREQUENT,
            flags: &[],
        },
        Query {
            name: "frequent word, oldest first",
            term: FREQUENT,
            flags: &["--from", "oldest"],
        },
        Query {
            name: "a phrase of two common words",
            term: PHRASE,
            flags: &[],
        },
        Query {
            name: "either of two words, one on most lines",
            term: FREQUENT,
            flags: &["--query", &absent],
        },
    ];
    rows.extend(time_queries(&queries, |a| s.scan(a), &s, o.runs)?);
    println!(
        "\ncorpus: {:.0} MiB in {} files (largest {:.0} MiB), {} cores, {} runs each (median; the warm overview {})\n",
        bytes as f64 / MIB,
        files.len(),
        largest(&files) as f64 / MIB,
        cores(),
        o.runs,
        3 * o.runs
    );
    print_table("command", &rows);
    println!(
        "\nwarm overview is {:.1}× faster than cold",
        rows[0].0.secs / rows[1].0.secs
    );
    check_exits("the searches", &rows[2..], &[0, 0, 1, 0, 0, 0, 0])?;
    check_needles(&|a| s.scan(a), &expected)?;
    let terms = Terms {
        present: &present,
        rare: &rare,
        absent: &absent,
    };
    bench_index(&s, bytes, &o.dir, &expected, &terms, o.runs)
}

/// The terms the index is timed with: in a third of the files, in one, and in none.
struct Terms<'a> {
    present: &'a str,
    rare: &'a str,
    absent: &'a str,
}

/// The search index: built from nothing, then queried, then after an append to the big
/// transcript; and every planted needle found through it.
fn bench_index(
    s: &Searches,
    bytes: u64,
    dir: &Path,
    expected: &Value,
    terms: &Terms<'_>,
    runs: usize,
) -> Result<()> {
    let Terms {
        present,
        rare,
        absent,
    } = *terms;
    let nh = |args: &[&str]| s.indexed(args);
    let (build, size) = build_index(s)?;
    let queries = [
        Query {
            name: "indexed: present in 1 file",
            term: rare,
            flags: &[],
        },
        Query {
            name: "indexed: present in 1/3 of files",
            term: present,
            flags: &[],
        },
        Query {
            name: "indexed: 1/3 of files, from oldest",
            term: present,
            flags: &["--from", "oldest"],
        },
        Query {
            name: "indexed: absent",
            term: absent,
            flags: &[],
        },
        Query {
            name: "indexed: a word on most lines, newest first",
            term: FREQUENT,
            flags: &[],
        },
        Query {
            name: "indexed: a word on most lines, oldest first",
            term: FREQUENT,
            flags: &["--from", "oldest"],
        },
        Query {
            name: "indexed: --sessions, a word on most lines",
            term: FREQUENT,
            flags: &["--sessions"],
        },
    ];
    let mut rows = time_queries(&queries, nh, s, runs)?;
    // 1 MiB appended to the big transcript: it is stale until the index is updated.
    let big = dir.join(expected["big_file"].as_str().context("no big_file")?);
    let original = std::fs::metadata(&big)?.len();
    let restore = || -> Result<()> {
        std::fs::OpenOptions::new()
            .write(true)
            .open(&big)?
            .set_len(original)?;
        Ok(())
    };
    let appended = (|| -> Result<_> {
        append_lines(&big, 1 << 20)?;
        // The appended session is answered from the index and a decode of its appended lines;
        // `read` keeps the search from starting the background update it would start for a
        // user, so that every run meets the same stale index and the update is measured on its
        // own after.
        let stale = paired(
            "after a 1 MiB append: 1/3 of files",
            runs,
            || {
                let mut c = nh(&["list", "--session", "*", "--query", present]);
                c.env("NOTESOUP_HISTORY_INDEX", "read");
                c
            },
            no_reset,
            || s.rg(present),
        )?;
        // Each run from the index of the transcript before the append: restored, indexed
        // again (a rewrite: the whole transcript), then appended to.
        let first = std::cell::Cell::new(true);
        let update = measure(
            "index after the append",
            runs.min(3),
            || nh(&["index"]),
            || {
                if !first.replace(false) {
                    restore()?;
                    nh(&["index"]).output()?;
                    append_lines(&big, 1 << 20)?;
                }
                sync()
            },
        )?;
        Ok((stale, update))
    })();
    restore()?;
    let (stale, update) = appended?;
    rows.push(stale);
    println!();
    print_table("search index", &rows);
    println!(
        "
index from nothing: {:.1} s ({:.0} MB/s), peak {:.0} MiB, {:.0} MiB on disk ({:.2}× the transcripts); after a 1 MiB append: {:.2} s",
        build.secs,
        bytes as f64 / 1e6 / build.secs,
        build.rss_mib,
        size as f64 / MIB,
        size as f64 / bytes as f64,
        update.secs
    );
    // Index the restored file again, then find every needle through the index.
    nh(&["index"]).output()?;
    bench_one_session(s, expected, absent, runs)?;
    bench_find(s, rare, runs)?;
    check_needles(&nh, expected)
}

/// The pages of the big transcript alone, through the index and without it (`--no-index`):
/// one event, its newest page, and a search of it for a word on most lines and for one it
/// never holds.
fn bench_one_session(s: &Searches, expected: &Value, absent: &str, runs: usize) -> Result<()> {
    let big = expected["big_session"].as_str().context("no big_session")?;
    let read = ["read", "--session", big, "--seq", "30000", "--no-pager"];
    let page = ["list", "--session", big];
    let frequent = ["list", "--session", big, "--query", FREQUENT];
    let never = ["list", "--session", big, "--query", absent];
    let pages: [(&str, &[&str]); 4] = [
        ("one event", &read),
        ("its newest page", &page),
        ("a word on most lines", &frequent),
        ("a word it never holds", &never),
    ];
    let mut rows = Vec::new();
    for (name, args) in pages {
        rows.push(paired(
            name,
            runs,
            || s.indexed(args),
            no_reset,
            || s.scan(args),
        )?);
    }
    println!();
    print_table_against("the big transcript alone", "without the index", &rows);
    check_exits("the big transcript's pages", &rows, &[0, 0, 0, 1])
}

/// `find`, ranked search in plain words, through the index: five-word questions of common
/// words and of one rare word among common ones, each beside rg listing the files that hold
/// any of the words.
fn bench_find(s: &Searches, rare: &str, runs: usize) -> Result<()> {
    let with_rare = format!("{rare} cursor page budget schema");
    let questions = [
        (
            "find: five common words",
            "retry flush batch worker timeout",
        ),
        ("find: one rare word, four common", with_rare.as_str()),
    ];
    let rows = questions
        .iter()
        .map(|(name, q)| {
            let words: Vec<&str> = q.split_whitespace().collect();
            paired(
                *name,
                runs,
                || s.indexed(&["find", "--json", "--", q]),
                no_reset,
                || s.rg_any(&words),
            )
        })
        .collect::<Result<Vec<_>>>()?;
    check_exits("find", &rows, &[0, 0])?;
    println!();
    print_table_against("ranked search", "rg -i -F -l -e w1 … -e w5", &rows);
    Ok(())
}

/// Many small sessions (`corpus::small`): the index built from nothing, then a word in every
/// session, one in a single session and one in none, each through the index and without it;
/// and an `index` with nothing to do, the price of the freshness check over every file.
fn bench_small(o: &Options, tools: &Tools) -> Result<()> {
    let dir = Path::new(SMALL_DIR);
    let key = corpus::small::ensure(dir, o.small, o.seed)?;
    let word = |field: &str| {
        key[field]
            .as_str()
            .with_context(|| format!("{SMALL_DIR}/expected.json has no {field}"))
    };
    let (everywhere, rare, absent) = (word("everywhere")?, word("rare")?, word("absent")?);
    let s = Searches::new(tools, dir)?;
    let files = corpus_files(dir)?;
    let bytes = total_bytes(&files);
    s.warm(everywhere)?;
    let (build, size) = build_index(&s)?;
    let queries = [
        Query {
            name: "a word in every session, newest first",
            term: everywhere,
            flags: &[],
        },
        Query {
            name: "a word in every session, oldest first",
            term: everywhere,
            flags: &["--from", "oldest"],
        },
        Query {
            name: "--sessions, a word in every session",
            term: everywhere,
            flags: &["--sessions"],
        },
        Query {
            name: "a word in 1 session",
            term: rare,
            flags: &[],
        },
        Query {
            name: "a word in none",
            term: absent,
            flags: &[],
        },
    ];
    let mut rows = Vec::new();
    for q in &queries {
        rows.push(q.paired(q.name, |a| s.indexed(a), &s, o.runs)?);
        rows.push(q.paired(format!("{}, --no-index", q.name), |a| s.scan(a), &s, o.runs)?);
    }
    rows.push(paired(
        "index, nothing to do",
        o.runs,
        || s.indexed(&["index"]),
        no_reset,
        || s.rg(everywhere),
    )?);
    println!(
        "\nmany small sessions: {} sessions, {:.1} MiB in {} files, {} cores, {} runs each (median)\n",
        o.small,
        bytes as f64 / MIB,
        files.len(),
        cores(),
        o.runs
    );
    print_table("many small sessions", &rows);
    println!(
        "\nindex from nothing: {:.1} s ({:.0} sessions/s), peak {:.0} MiB, {:.0} MiB on disk ({:.2}× the transcripts)",
        build.secs,
        o.small as f64 / build.secs,
        build.rss_mib,
        size as f64 / MIB,
        size as f64 / bytes as f64
    );
    check_exits(
        "the small searches",
        &rows,
        &[0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0],
    )?;
    let rare_session = word("rare_session")?;
    let finds_it = |how: &str, cli: &dyn Fn(&[&str]) -> Command| -> Result<()> {
        let sessions: Vec<String> = hit_items(cli, &[rare])?
            .iter()
            .filter_map(|i| i["session"].as_str().map(String::from))
            .collect();
        if !sessions.iter().any(|id| id == rare_session) {
            bail!("{how}: the search for {rare} found {sessions:?}, not {rare_session}");
        }
        Ok(())
    };
    finds_it("indexed", &|a| s.indexed(a))?;
    finds_it("--no-index", &|a| s.scan(a))?;
    println!("the word in 1 session is found in {rare_session}, with the index and without it");
    Ok(())
}

/// `--scale`: the indexed queries on the mixed corpus at two sizes 4× apart, each beside rg,
/// to show how each grows with the history.
fn bench_scale(o: &Options, tools: &Tools) -> Result<()> {
    let plan = scale_plan(o)?;
    let mut points = Vec::new();
    for (dir, mib) in &plan {
        points.push(scale_point(tools, dir, *mib, o.seed, o.runs)?);
    }
    let [small, large] = &points[..] else {
        unreachable!("two sizes")
    };
    println!(
        "\nscale: {} and {}, {} cores, {} runs each (median)\n",
        small.line(),
        large.line(),
        cores(),
        o.runs
    );
    println!(
        "| indexed query | {0:.0} MiB | {1:.0} MiB | ratio | rg, {0:.0} MiB | rg, {1:.0} MiB | rg ratio |",
        small.mib, large.mib
    );
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for ((a, rg_a), (b, rg_b)) in small.rows.iter().zip(&large.rows) {
        println!(
            "| {} | {:.0} ms | {:.0} ms | {:.2}× | {:.0} ms | {:.0} ms | {:.2}× |",
            a.name,
            a.secs * 1000.0,
            b.secs * 1000.0,
            b.secs / a.secs,
            rg_a.secs * 1000.0,
            rg_b.secs * 1000.0,
            rg_b.secs / rg_a.secs
        );
    }
    println!(
        "\nindex from nothing: {:.1} s and {:.1} s ({:.2}×), peak {:.0} and {:.0} MiB, {:.0} and {:.0} MiB on disk",
        small.build.secs,
        large.build.secs,
        large.build.secs / small.build.secs,
        small.build.rss_mib,
        large.build.rss_mib,
        small.index_bytes as f64 / MIB,
        large.index_bytes as f64 / MIB
    );
    Ok(())
}

/// The two sizes `--scale` compares, smaller first, each with its directory: `--mib` in
/// `--dir` and 4× that beside it, or, where 4× would not fit on the disk, a quarter of `--mib`
/// beside it and `--mib` in `--dir`. The `--mib` corpus stays in `--dir` either way, so that
/// the other sections reuse it.
fn scale_plan(o: &Options) -> Result<[(PathBuf, f64); 2]> {
    let beside = |suffix: &str| {
        let mut name = o.dir.file_name().unwrap_or_default().to_os_string();
        name.push(suffix);
        o.dir.with_file_name(name)
    };
    let up = [(o.dir.clone(), o.mib), (beside("-4x"), 4.0 * o.mib)];
    let down = [(beside("-quarter"), o.mib / 4.0), (o.dir.clone(), o.mib)];
    let free = free_bytes(&o.dir)?;
    let needs = |plan: &[(PathBuf, f64)]| -> Result<u64> {
        plan.iter().map(|(dir, mib)| room_needed(dir, *mib)).sum()
    };
    if needs(&up)? <= free {
        return Ok(up);
    }
    let need = needs(&down)?;
    if need > free {
        bail!(
            "--scale: even {:.0} and {:.0} MiB need about {:.1} GiB more than the {:.1} GiB free",
            down[0].1,
            down[1].1,
            (need - free) as f64 / MIB / 1024.0,
            free as f64 / MIB / 1024.0
        );
    }
    eprintln!(
        "--scale: {:.0} MiB would not fit in the {:.1} GiB free; using {:.0} and {:.0} MiB",
        up[1].1,
        free as f64 / MIB / 1024.0,
        down[0].1,
        down[1].1
    );
    Ok(down)
}

/// The disk a corpus of `mib` MiB in `dir` still needs: the transcripts, their index (about
/// 0.2× their size) and a margin, 1.5× in all, less what `dir` holds already (a corpus there is
/// removed before another is written, or reused).
fn room_needed(dir: &Path, mib: f64) -> Result<u64> {
    let held = total_bytes(&files_under([dir.to_path_buf()])?);
    Ok(((1.5 * mib * MIB) as u64).saturating_sub(held))
}

/// Free bytes on the filesystem that holds `path` (or its nearest existing ancestor), from
/// POSIX `df -P -k`.
fn free_bytes(path: &Path) -> Result<u64> {
    let path = std::path::absolute(path)?;
    let existing = path
        .ancestors()
        .find(|p| p.exists())
        .context("no existing directory to ask df about")?;
    let out = Command::new("df")
        .args(["-P", "-k"])
        .arg(existing)
        .output()
        .context("running df")?;
    let text = String::from_utf8_lossy(&out.stdout);
    // The second line: filesystem, 1024-blocks, used, available, capacity, mount point.
    let kib: u64 = text
        .lines()
        .nth(1)
        .and_then(|line| line.split_whitespace().nth(3))
        .and_then(|v| v.parse().ok())
        .with_context(|| format!("df said {text:?}"))?;
    Ok(kib * 1024)
}

/// One size of `--scale`: its corpus, its index built from nothing, and the indexed queries,
/// each paired with rg.
struct ScalePoint {
    mib: f64,
    bytes: u64,
    files: usize,
    dir: PathBuf,
    build: Measure,
    index_bytes: u64,
    rows: Vec<(Measure, Measure)>,
}

impl ScalePoint {
    fn line(&self) -> String {
        format!(
            "{:.0} MiB in {} files ({})",
            self.bytes as f64 / MIB,
            self.files,
            self.dir.display()
        )
    }
}

fn scale_point(tools: &Tools, dir: &Path, mib: f64, seed: u64, runs: usize) -> Result<ScalePoint> {
    let expected = corpus::ensure(dir, mib, seed)?;
    let rare = plant_rare_session(dir)?;
    let present = format!("needle-{seed}-");
    let absent = absent_term(&expected);
    let files = corpus_files(dir)?;
    let s = Searches::new(tools, dir)?;
    s.warm(&present)?;
    let (build, index_bytes) = build_index(&s)?;
    let queries = [
        Query {
            name: "present in 1 file",
            term: &rare,
            flags: &[],
        },
        Query {
            name: "present in 1/3 of files",
            term: &present,
            flags: &[],
        },
        Query {
            name: "absent",
            term: &absent,
            flags: &[],
        },
        Query {
            name: "the phrase `git status`",
            term: PHRASE,
            flags: &[],
        },
        Query {
            name: "a word on most lines, newest first",
            term: FREQUENT,
            flags: &[],
        },
        Query {
            name: "a word on most lines, oldest first",
            term: FREQUENT,
            flags: &["--from", "oldest"],
        },
        Query {
            name: "--sessions, a word on most lines",
            term: FREQUENT,
            flags: &["--sessions"],
        },
    ];
    let rows = time_queries(&queries, |a| s.indexed(a), &s, runs)?;
    check_exits("the indexed searches", &rows, &[0, 0, 1, 0, 0, 0, 0])?;
    check_needles(&|a| s.indexed(a), &expected)?;
    Ok(ScalePoint {
        mib,
        bytes: total_bytes(&files),
        files: files.len(),
        dir: dir.to_path_buf(),
        build,
        index_bytes,
        rows,
    })
}

/// The search index built from nothing (timed, once), and its size on disk. Its writes reach
/// the disk before anything else is timed: a query does not meet an index just written, whose
/// pages the kernel is still writing back.
fn build_index(s: &Searches) -> Result<(Measure, u64)> {
    let index_dir = s.index_dir();
    let build = measure(
        "index from nothing",
        1,
        || s.indexed(&["index"]),
        || {
            let _ = std::fs::remove_dir_all(&index_dir);
            Ok(())
        },
    )?;
    if build.exit != 0 {
        bail!("index exited with {}", build.exit);
    }
    sync()?;
    Ok((build, total_bytes(&files_under([index_dir])?)))
}

/// A term of the answer key's absent queries: one that is no needle's variant.
fn absent_term(expected: &Value) -> String {
    expected["absent"]
        .as_array()
        .and_then(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .find(|q| !q.contains("needle"))
        })
        .unwrap_or("zq-never-written-zq")
        .to_string()
}

/// Fails unless the commands of `rows` exited with `want`, in order.
fn check_exits(what: &str, rows: &[(Measure, Measure)], want: &[i32]) -> Result<()> {
    let exits: Vec<i32> = rows.iter().map(|(m, _)| m.exit).collect();
    if exits != want {
        bail!("unexpected exit codes of {what}: {exits:?}, not {want:?}");
    }
    Ok(())
}

/// Every hit of a search for any of `queries`, from its JSON: no limit, no budget.
fn hit_items(nh: &dyn Fn(&[&str]) -> Command, queries: &[&str]) -> Result<Vec<Value>> {
    let mut args = vec!["list", "--session", "*"];
    for q in queries {
        args.extend(["--query", q]);
    }
    args.extend(["--limit", "1000000", "--budget", "1000000000", "--json"]);
    let out = nh(&args).output()?;
    let mut found: Value = serde_json::from_slice(&out.stdout).context("search output")?;
    match found["items"].take() {
        Value::Array(items) => Ok(items),
        _ => bail!("no items in the search output"),
    }
}

fn no_reset() -> Result<()> {
    Ok(())
}

pub(crate) fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Flushes every file's pending writes to disk.
fn sync() -> Result<()> {
    Command::new("sync").status().context("running sync")?;
    Ok(())
}

/// A Markdown table of measures, each beside the rg run it is compared with.
fn print_table(title: &str, rows: &[(Measure, Measure)]) {
    print_table_against(title, "rg -i -F -c, same term", rows)
}

/// [`print_table`], its baseline column named `baseline`.
fn print_table_against(title: &str, baseline: &str, rows: &[(Measure, Measure)]) {
    println!("| {title} | time | {baseline} | ratio | peak RSS |");
    println!("|---|---:|---:|---:|---:|");
    for (m, rg) in rows {
        println!(
            "| {} | {:.0} ms | {:.0} ms | {:.2}× | {:.0} MiB |",
            m.name,
            m.secs * 1000.0,
            rg.secs * 1000.0,
            m.secs / rg.secs,
            m.rss_mib
        );
    }
}

/// Appends about `bytes` of user prompts to a Claude transcript, each a child of the last line.
fn append_lines(path: &Path, bytes: usize) -> Result<()> {
    use std::io::{Read, Seek, SeekFrom, Write};
    // Only the file's tail: a child forked while this process held the whole file would count
    // it in its peak memory until it execs.
    let mut file = std::fs::File::open(path)?;
    let len = file.metadata()?.len();
    file.seek(SeekFrom::Start(len.saturating_sub(1 << 20)))?;
    let mut tail = Vec::new();
    file.read_to_end(&mut tail)?;
    let last_line = tail
        .trim_ascii_end()
        .rsplit(|&b| b == b'\n')
        .next()
        .context("empty")?;
    let last: Value = serde_json::from_slice(last_line)?;
    let session = last["sessionId"].as_str().unwrap_or_default().to_string();
    let mut parent = last["uuid"].as_str().unwrap_or_default().to_string();
    let mut out = std::fs::OpenOptions::new().append(true).open(path)?;
    let mut written = 0;
    let mut n = 0;
    while written < bytes {
        n += 1;
        let uuid = format!("00000000-0000-4000-8000-{n:012}");
        let line = serde_json::json!({
            "type": "user", "uuid": uuid, "parentUuid": parent, "sessionId": session,
            "timestamp": "2030-01-01T00:00:00.000Z", "isSidechain": false,
            "message": {"role": "user", "content": "appended words of a prompt ".repeat(2400)},
        })
        .to_string();
        writeln!(out, "{line}")?;
        written += line.len() + 1;
        parent = uuid;
    }
    Ok(())
}

/// notesoup-history built in release as the README installs it: for this machine's target
/// named outright, with `.cargo/static.toml` (a static executable on Linux with glibc), where
/// cargo puts it; `bench` and `recall` run it.
pub(crate) fn build_cli() -> Result<PathBuf> {
    let host = host_triple()?;
    let config = Path::new(env!("CARGO_MANIFEST_DIR")).join("../.cargo/static.toml");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = Command::new(cargo)
        .args(["build", "--release", "--quiet", "-p", "history-cli"])
        .args(["--target", &host])
        .arg("--config")
        .arg(config)
        .status()?;
    if !status.success() {
        bail!("building the CLI failed");
    }
    Ok(target_dir().join(host).join("release/notesoup-history"))
}

/// The target triple rustc builds for by default (`host:` of `rustc -vV`).
fn host_triple() -> Result<String> {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let out = Command::new(rustc).arg("-vV").output()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let host = text.lines().find_map(|l| l.strip_prefix("host: "));
    host.map(str::to_string)
        .context("`rustc -vV` names no host")
}

/// Cargo's target directory: `$CARGO_TARGET_DIR`, else `target`.
pub(crate) fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("target"))
}

fn which(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|p| p.join(name))
            .find(|p| p.is_file())
    })
}

/// The transcripts of a corpus: every file under its harnesses' roots.
fn corpus_files(dir: &Path) -> Result<Vec<PathBuf>> {
    files_under(HARNESSES.map(|h| dir.join(h)))
}

/// Every file under `dirs`, at any depth; a missing directory holds none.
pub(crate) fn files_under(dirs: impl IntoIterator<Item = PathBuf>) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut stack: Vec<PathBuf> = dirs.into_iter().filter(|d| d.exists()).collect();
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d)?.flatten() {
            let p = e.path();
            if e.file_type()?.is_dir() {
                stack.push(p);
            } else {
                out.push(p);
            }
        }
    }
    Ok(out)
}

/// One small Claude session holding a word found nowhere else, so that a search for it shows
/// what the prefilter saves; written once, beside the generated sessions.
fn plant_rare_session(dir: &Path) -> Result<String> {
    let word = "zygomorphic-quokka";
    let project = dir.join("claude/-bench-rare");
    std::fs::create_dir_all(&project)?;
    let line = |uuid: &str, parent: &str, kind: &str, content: &str| {
        serde_json::json!({
            "parentUuid": if parent.is_empty() { Value::Null } else { parent.into() },
            "isSidechain": false, "type": kind, "uuid": uuid,
            "sessionId": "0b5e55ed-0000-4000-8000-000000000001",
            "timestamp": "2026-01-05T10:00:00.000Z",
            "message": {"role": kind, "content": content},
        })
        .to_string()
    };
    let text = [
        line("r1", "", "user", &format!("where did the {word} go?")),
        line("r2", "r1", "assistant", "It moved to the other branch."),
    ]
    .join("\n")
        + "\n";
    std::fs::write(
        project.join("0b5e55ed-0000-4000-8000-000000000001.jsonl"),
        text,
    )?;
    Ok(word.to_string())
}

/// The bytes of `files` together.
fn total_bytes(files: &[PathBuf]) -> u64 {
    files
        .iter()
        .filter_map(|f| f.metadata().ok())
        .map(|m| m.len())
        .sum()
}

fn largest(files: &[PathBuf]) -> u64 {
    files
        .iter()
        .filter_map(|f| f.metadata().ok())
        .map(|m| m.len())
        .max()
        .unwrap_or(0)
}

/// Runs a command `runs` times (calling `reset` before each) and keeps the median time.
fn measure(
    name: impl Into<String>,
    runs: usize,
    cmd: impl Fn() -> Command,
    reset: impl Fn() -> Result<()>,
) -> Result<Measure> {
    let mut runs_of = Runs::new(name);
    for _ in 0..runs {
        reset()?;
        runs_of.run(cmd())?;
    }
    Ok(runs_of.done())
}

/// [`measure`] of `cmd`, and of its baseline `rg`, run in turn: (the command, the baseline).
fn paired(
    name: impl Into<String>,
    runs: usize,
    cmd: impl Fn() -> Command,
    reset: impl Fn() -> Result<()>,
    rg: impl Fn() -> Command,
) -> Result<(Measure, Measure)> {
    let (mut it, mut base) = (Runs::new(name), Runs::new("rg -i -F -c"));
    for _ in 0..runs {
        base.run(rg())?;
        reset()?;
        it.run(cmd())?;
    }
    Ok((it.done(), base.done()))
}

/// The runs of one command so far.
struct Runs {
    name: String,
    times: Vec<f64>,
    rss: f64,
    exit: i32,
}

impl Runs {
    fn new(name: impl Into<String>) -> Runs {
        Runs {
            name: name.into(),
            times: Vec::new(),
            rss: 0.0,
            exit: 0,
        }
    }

    fn run(&mut self, c: Command) -> Result<()> {
        let (code, maxrss_kib, secs) =
            peak_rss(c).with_context(|| format!("running {}", self.name))?;
        self.times.push(secs);
        self.rss = self.rss.max(maxrss_kib as f64 / 1024.0);
        self.exit = code;
        Ok(())
    }

    /// The median time, the largest peak RSS and the last exit code.
    fn done(mut self) -> Measure {
        self.times.sort_by(f64::total_cmp);
        let m = Measure {
            name: self.name,
            secs: self.times[self.times.len() / 2],
            rss_mib: self.rss,
            exit: self.exit,
        };
        eprintln!(
            "{:<24} {:>8.1} ms  {:>6.1} MiB  exit {}",
            m.name,
            m.secs * 1000.0,
            m.rss_mib,
            m.exit
        );
        m
    }
}

/// Runs `c` through `xtask peak-rss`, a process of its own whose only child it is, so that
/// the peak RSS of its children is the command's own: its exit code, its peak RSS in KiB and
/// its wall time, from just before its start to its end.
fn peak_rss(c: Command) -> Result<(i32, i64, f64)> {
    let mut wrapper = Command::new(std::env::current_exe()?);
    wrapper
        .arg("peak-rss")
        .arg(c.get_program())
        .args(c.get_args());
    for (key, value) in c.get_envs() {
        match value {
            Some(v) => wrapper.env(key, v),
            None => wrapper.env_remove(key),
        };
    }
    if let Some(dir) = c.get_current_dir() {
        wrapper.current_dir(dir);
    }
    let out = wrapper.stderr(Stdio::inherit()).output()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let fields: Vec<&str> = text.split_whitespace().collect();
    let [code, kib, secs] = fields[..] else {
        bail!("peak-rss said {text:?}");
    };
    Ok((code.parse()?, kib.parse()?, secs.parse()?))
}

/// `xtask peak-rss PROGRAM ARGS…`: runs the program with no output, then prints its exit code
/// (-1 for a signal), its peak RSS in KiB and its wall time in seconds.
pub fn peak_rss_command(args: &[String]) -> Result<()> {
    let (program, rest) = args.split_first().context("peak-rss needs a program")?;
    let start = Instant::now();
    let status = Command::new(program)
        .args(rest)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .with_context(|| format!("starting {program}"))?;
    let secs = start.elapsed().as_secs_f64();
    let usage = nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_CHILDREN)?;
    println!("{} {} {secs}", status.code().unwrap_or(-1), usage.max_rss());
    Ok(())
}

/// Every planted needle is found at its session and seq; no absent query is.
fn check_needles(nh: &dyn Fn(&[&str]) -> Command, expected: &Value) -> Result<()> {
    let hits = expected["hits"]
        .as_array()
        .context("expected.json has no hits")?;
    let queries: Vec<&str> = hits
        .iter()
        .map(|h| h["query"].as_str().unwrap_or_default())
        .collect();
    let got: std::collections::HashSet<(String, u64)> = hit_items(nh, &queries)
        .context("the needle search")?
        .iter()
        .map(|i| {
            (
                i["session"].as_str().unwrap_or("").to_string(),
                i["seq"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    let missing: Vec<String> = hits
        .iter()
        .filter(|h| {
            let key = (
                h["session"].as_str().unwrap_or("").to_string(),
                h["seq"].as_u64().unwrap_or(0),
            );
            !got.contains(&key)
        })
        .map(|h| format!("{} at {}#{}", h["query"], h["session"], h["seq"]))
        .collect();
    let absent: Vec<&str> = expected["absent"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut args: Vec<&str> = vec!["list", "--session", "*", "--json"];
    for q in &absent {
        args.push("--query");
        args.push(q);
    }
    let stray = nh(&args).output()?.status.code();
    println!(
        "needles: {} of {} planted hits found; {} absent queries {}",
        hits.len() - missing.len(),
        hits.len(),
        absent.len(),
        if stray == Some(1) {
            "found nowhere"
        } else {
            "FOUND SOMEWHERE"
        }
    );
    if !missing.is_empty() || stray != Some(1) {
        bail!("needles missed: {}", missing.join("; "));
    }
    Ok(())
}
