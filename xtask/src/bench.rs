//! `cargo xtask bench`: notesoup-history against `rg -i -F -c` over the same files, in one run.
//!
//! Every figure is the median of several runs with a warm page cache, reported as a ratio to
//! rg's time in the same run, because absolute times on shared machines are noise. Peak RSS is
//! the child's own (`wait4`).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use serde_json::Value;

use xtask::corpus;

struct Options {
    mib: f64,
    seed: u64,
    dir: PathBuf,
    runs: usize,
}

/// One measured command: median wall time and the largest peak RSS over its runs.
struct Measure {
    name: &'static str,
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
    };
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let mut value = || it.next().with_context(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--mib" => o.mib = value()?.parse().context("--mib")?,
            "--seed" => o.seed = value()?.parse().context("--seed")?,
            "--dir" => o.dir = PathBuf::from(value()?),
            "--runs" => o.runs = value()?.parse::<usize>().context("--runs")?.max(1),
            other => bail!("unknown bench option `{other}`"),
        }
    }
    run(&o)
}

fn run(o: &Options) -> Result<()> {
    let expected = corpus::ensure(&o.dir, o.mib, o.seed)?;
    let bin = build_cli()?;
    let rg = which("rg").context("rg is needed for the baseline: apt-get install ripgrep")?;
    let roots = ["claude", "codex", "pi"].map(|h| o.dir.join(h));
    let root_flags: Vec<String> = vec![
        "--claude-root".into(),
        roots[0].display().to_string(),
        "--codex-root".into(),
        roots[1].display().to_string(),
        "--pi-root".into(),
        roots[2].display().to_string(),
    ];
    // A term in about a third of the files (the big one among them), and one in a single file.
    let present = format!("needle-{}-", o.seed);
    let rare = plant_rare_session(&o.dir)?;
    let absent = expected["absent"]
        .as_array()
        .and_then(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .find(|q| !q.contains("needle"))
        })
        .unwrap_or("zq-never-written-zq")
        .to_string();
    let files = corpus_files(&o.dir)?;
    let (bytes, count) = files.iter().fold((0u64, 0usize), |(b, n), f| {
        (b + f.metadata().map_or(0, |m| m.len()), n + 1)
    });
    // Absolute: a relative XDG_CACHE_HOME is ignored (as the XDG specification says), and the
    // overview would then use, and warm, the cache under $HOME.
    let cache = std::env::current_dir()?.join(&o.dir).join("bench-cache");

    // The scan path: without the search index, which a search would otherwise also start
    // building in the background, in the middle of the measurements.
    let nh = |extra: &[&str]| -> Command {
        let mut c = Command::new(&bin);
        c.args(&root_flags)
            .args(extra)
            .env("XDG_CACHE_HOME", &cache)
            .env("NOTESOUP_HISTORY_INDEX", "off");
        c
    };
    let indexed = |extra: &[&str]| -> Command {
        let mut c = Command::new(&bin);
        c.args(&root_flags)
            .args(extra)
            .env("XDG_CACHE_HOME", &cache);
        c
    };
    let rg_cmd = |term: &str| -> Command {
        let mut c = Command::new(&rg);
        c.args(["-i", "-F", "-c", "--no-messages", "--", term])
            .args(&roots);
        c
    };
    // Warm the page cache so that every command reads from memory.
    measure("warm-up", 1, || rg_cmd(&present), || Ok(()))?;

    let fresh_cache = || {
        let _ = std::fs::remove_dir_all(&cache);
        Ok(())
    };
    let no_reset = || Ok(());
    let search = |term: &str| nh(&["list", "--session", "*", "--query", term]);
    // A word of the filler prose, in most files: a page of it is found in the newest (or
    // oldest) few sessions.
    let frequent = "function";
    // Each row: the measure and its rg run, the two taking turns so that both meet the
    // machine in the same state.
    let oldest = [
        "list",
        "--session",
        "*",
        "--query",
        frequent,
        "--from",
        "oldest",
    ];
    let rows = [
        paired(
            "overview, cold cache",
            o.runs,
            || nh(&["list"]),
            fresh_cache,
            || rg_cmd(&present),
        )?,
        // A few milliseconds, where one stray stall moves a median of few runs: three
        // times as many.
        paired(
            "overview, warm cache",
            3 * o.runs,
            || nh(&["list"]),
            no_reset,
            || rg_cmd(&present),
        )?,
        paired(
            "query present in 1/3 of files",
            o.runs,
            || search(&present),
            no_reset,
            || rg_cmd(&present),
        )?,
        paired(
            "query present in 1 file",
            o.runs,
            || search(&rare),
            no_reset,
            || rg_cmd(&rare),
        )?,
        paired(
            "query absent",
            o.runs,
            || search(&absent),
            no_reset,
            || rg_cmd(&absent),
        )?,
        paired(
            "frequent word, newest first",
            o.runs,
            || search(frequent),
            no_reset,
            || rg_cmd(frequent),
        )?,
        paired(
            "frequent word, oldest first",
            o.runs,
            || nh(&oldest),
            no_reset,
            || rg_cmd(frequent),
        )?,
    ];
    println!(
        "\ncorpus: {:.0} MiB in {count} files (largest {:.0} MiB), {} cores, {} runs each (median; the warm overview {})\n",
        bytes as f64 / 1048576.0,
        largest(&files) as f64 / 1048576.0,
        std::thread::available_parallelism().map_or(1, |n| n.get()),
        o.runs,
        3 * o.runs
    );
    print_table("command", &rows);
    println!(
        "\nwarm overview is {:.1}× faster than cold",
        rows[0].0.secs / rows[1].0.secs
    );
    let exits: Vec<i32> = rows[2..].iter().map(|(m, _)| m.exit).collect();
    if exits != [0, 0, 1, 0, 0] {
        bail!("unexpected exit codes of the searches: {exits:?}");
    }
    check_needles(&nh, &expected)?;
    let terms = Terms {
        present: &present,
        rare: &rare,
        absent: &absent,
        frequent,
    };
    bench_index(
        &indexed, &cache, bytes, &o.dir, &expected, &terms, &rg_cmd, o.runs,
    )
}

/// The terms the index is timed with: in a third of the files, in one, in none, and a word on
/// most lines.
struct Terms<'a> {
    present: &'a str,
    rare: &'a str,
    absent: &'a str,
    frequent: &'a str,
}

/// The search index: built from nothing, then queried, then after an append to the big
/// transcript; and every planted needle found through it.
#[allow(clippy::too_many_arguments)]
fn bench_index(
    nh: &dyn Fn(&[&str]) -> Command,
    cache: &Path,
    bytes: u64,
    dir: &Path,
    expected: &Value,
    terms: &Terms<'_>,
    rg: &dyn Fn(&str) -> Command,
    runs: usize,
) -> Result<()> {
    let Terms {
        present,
        rare,
        absent,
        frequent,
    } = *terms;
    let index_dir = cache.join("notesoup/history-search");
    let build = measure(
        "index from nothing",
        1,
        || nh(&["index"]),
        || {
            let _ = std::fs::remove_dir_all(&index_dir);
            Ok(())
        },
    )?;
    // The build's writes reach the disk before anything is timed: a query does not meet an
    // index just written, whose pages the kernel is still writing back.
    sync()?;
    let size: u64 = std::fs::read_dir(&index_dir)?
        .flatten()
        .filter_map(|e| e.metadata().ok())
        .map(|m| m.len())
        .sum();
    let search = |term: &str, extra: &[&str]| {
        let mut args = vec!["list", "--session", "*", "--query", term];
        args.extend_from_slice(extra);
        args.iter().map(|a| a.to_string()).collect::<Vec<String>>()
    };
    let run = |name: &'static str, args: Vec<String>, term: &str| {
        paired(
            name,
            runs,
            || nh(&args.iter().map(String::as_str).collect::<Vec<_>>()),
            || Ok(()),
            || rg(term),
        )
    };
    let mut rows = vec![
        run("indexed: present in 1 file", search(rare, &[]), rare)?,
        run(
            "indexed: present in 1/3 of files",
            search(present, &[]),
            present,
        )?,
        run(
            "indexed: 1/3 of files, from oldest",
            search(present, &["--from", "oldest"]),
            present,
        )?,
        run("indexed: absent", search(absent, &[]), absent)?,
        run(
            "indexed: a word on most lines, newest first",
            search(frequent, &[]),
            frequent,
        )?,
        run(
            "indexed: a word on most lines, oldest first",
            search(frequent, &["--from", "oldest"]),
            frequent,
        )?,
        run(
            "indexed: --sessions, a word on most lines",
            search(frequent, &["--sessions"]),
            frequent,
        )?,
    ];
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
            || Ok(()),
            || rg(present),
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
        size as f64 / 1048576.0,
        size as f64 / bytes as f64,
        update.secs
    );
    // Index the restored file again, then find every needle through the index.
    nh(&["index"]).output()?;
    check_needles(nh, expected)
}

/// Flushes every file's pending writes to disk.
fn sync() -> Result<()> {
    Command::new("sync").status().context("running sync")?;
    Ok(())
}

/// A Markdown table of measures, each beside the rg run it is compared with.
fn print_table(title: &str, rows: &[(Measure, Measure)]) {
    println!("| {title} | time | rg -i -F -c, same term | ratio to rg | peak RSS |");
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

fn build_cli() -> Result<PathBuf> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = Command::new(cargo)
        .args(["build", "--release", "--quiet", "-p", "history-cli"])
        .status()?;
    if !status.success() {
        bail!("building the CLI failed");
    }
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("target"));
    Ok(target.join("release/notesoup-history"))
}

fn which(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|p| p.join(name))
            .find(|p| p.is_file())
    })
}

fn corpus_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut stack: Vec<PathBuf> = ["claude", "codex", "pi"]
        .iter()
        .map(|h| dir.join(h))
        .collect();
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
    name: &'static str,
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
    name: &'static str,
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
    name: &'static str,
    times: Vec<f64>,
    rss: f64,
    exit: i32,
}

impl Runs {
    fn new(name: &'static str) -> Runs {
        Runs {
            name,
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
    let mut args: Vec<String> = vec!["list".into(), "--session".into(), "*".into()];
    for h in hits {
        args.push("--query".into());
        args.push(h["query"].as_str().unwrap_or_default().into());
    }
    args.extend(["--limit", "1000000", "--budget", "1000000000", "--json"].map(String::from));
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = nh(&refs).output()?;
    let found: Value = serde_json::from_slice(&out.stdout).context("needle search output")?;
    let items = found["items"].as_array().context("no items")?;
    let got: std::collections::HashSet<(String, u64)> = items
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
