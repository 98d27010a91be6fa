//! Workspace chores, run as `cargo xtask <command>`.
//!
//! - `corpus`: write a realistic, deterministic mixed corpus of Claude Code, Codex and pi
//!   transcripts with planted needles and an `expected.json` answer key (see [`corpus`]).
//!
//! - `bench`: on such a corpus, time the cold and warm overview and a present and an absent
//!   query against `rg -i -F -c` over the same files, with peak memory, without the search
//!   index and with it, the big transcript's own pages with the index and without it, then the
//!   same on many small sessions, and check that every planted needle is found; or, with `--scale`, the indexed queries at two corpus sizes 4× apart
//!   (see [`bench`]).
//!
//! - `bench-raw`: history-raw's hand-written searches and the time parser against the crates
//!   that would replace them (aho-corasick, memchr, jiff), on such a corpus in memory (see
//!   [`xtask::bench_raw`]).
//!
//! - `faults`: the search index's fault tests (damaged pages, logs, truncations, searches
//!   during a rebuild) with many seeds and many more damaged pages than the test suite tries.
//!
//! - `layers`: check that within every crate the modules import each other without a circle,
//!   and print each crate's modules bottom-up (see [`xtask::layers`]).
//!
//! - `recall`: on the question set of `fixtures/recall`, how often ways of searching (a naive
//!   word count over the files, `list --sessions --query` per word, `find`) put each
//!   question's answer session first: hit@1, hit@5 and MRR@10, overall and per kind (see
//!   [`recall`]).
//!
//! - `record`: install Claude Code, Codex, pi and Oh My Pi from npm and drive each, offline, against a
//!   scripted model server, so that each writes real transcripts with planted markers and an
//!   `expected.json` of where each must be found (see [`record`]).
//!
//! - `peak-rss`: run one command and print its exit code, peak RSS and time; `bench` measures
//!   every command through it.
//!
//! Each command parses its own arguments and calls a `pub fn` of its module, so that other
//! commands (a benchmark, say) can reuse the pieces: `corpus::generate(&corpus::Options { .. })`.

#![forbid(unsafe_code)]

mod bench;
mod recall;
mod record;
use xtask::{corpus, layers};

use std::process::ExitCode;

use anyhow::{bail, Context, Result};

const USAGE: &str = "usage: cargo xtask <command> [options]

commands:
  corpus --mib N --seed S --out DIR [--big-mib M]
      write a mixed Claude/Codex/pi corpus of about N MiB into DIR/{claude,codex,pi},
      with one big Claude transcript of M MiB (default N/8) and DIR/expected.json
  corpus --small N [--seed S] --out DIR
      write N small Claude sessions (about 1 KiB each, over a year, in 60 projects) into
      DIR/claude, every one holding one word and one of them a rare word
  bench [--mib N] [--seed S] [--dir DIR] [--runs R] [--small K]
      (re)use a corpus of N MiB (default 1024) in DIR (default target/bench-corpus), then time
      notesoup-history against rg -i -F -c on it, R runs each (default 3), without the search
      index and with it, and the big transcript's own pages (one event, its newest page, a
      search of it) with the index and without, and check every needle; then the same on K
      small sessions (default
      20000; 0 skips them) in target/bench-small, indexed and not, and `index` with nothing to do
  bench --scale [--mib N] [--seed S] [--dir DIR] [--runs R]
      only the indexed queries and the index build, against rg, on corpora of N and 4N MiB
      (DIR and DIR-4x), or of N/4 and N MiB (DIR-quarter and DIR) where 4N does not fit on
      the disk; one table with each row at both sizes and the ratio
  bench-raw [--mib N] [--seed S] [--dir DIR] [--runs R] [--needles a,b,c] [--only GROUPS]
      (re)use a corpus of N MiB (default 256) in DIR (default target/raw-corpus), read it into
      memory, and time history-raw's searches (keys: the needle search, alone and with the
      hatches; hatches: the pair search alone) against aho-corasick and memchr::memmem, and
      history-core's time parser (times) against jiff, best of R runs (default 5)
  faults [--seeds N] [--flips F]
      run the search index's fault tests (history-cli's index_damage) with seeds 1..N
      (default 20), each changing F random pages of the database (default 100) besides every
      page once; stop at the first seed that fails
  layers [CRATE_DIR...]
      print the modules of each crate (default: every crates/* and xtask) in an order where
      each imports only modules before it, or name every circle of imports with its file:line
      and fail
  recall [--dir DIR] [--only METHOD,...] [--show-misses]
      on the questions of DIR/questions.jsonl (default fixtures/recall) over its history, rank
      the sessions for each question by each method (words-rg: the files by how many of its
      words each holds; query-or: list --sessions -q WORD per word, by hits summed; find:
      notesoup-history find, where this build has it) and print hit@1, hit@5 and MRR@10,
      overall and per kind (query-or, a search per distinct word, takes about a minute);
      --show-misses lists the questions whose answer is not first
  peak-rss PROGRAM [ARGS...]
      run PROGRAM with no output and print its exit code, peak RSS (KiB) and time (s)
  record [--claude VERSION] [--codex VERSION] [--pi VERSION] [--omp VERSION] [--opencode VERSION]
         [--gemini VERSION] [--copilot VERSION] [--only AGENT,...] [--scratch DIR] [--out DIR]
      install Claude Code, Codex, pi, Oh My Pi, OpenCode, Gemini CLI and GitHub Copilot CLI from
      npm (the current release, or VERSION; Oh My Pi with the Bun it runs on) into the
      scratch directory (default /tmp/record-<pid>), drive each offline against a scripted
      model server on 127.0.0.1, and copy the transcripts each wrote, with expected.json, into
      DIR/<agent>-<version> (default fixtures/recorded)";

fn main() -> ExitCode {
    match run(std::env::args().skip(1).collect()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("xtask: {err:#}");
            ExitCode::from(2)
        }
    }
}

fn run(args: Vec<String>) -> Result<()> {
    let Some((command, rest)) = args.split_first() else {
        bail!("no command\n\n{USAGE}");
    };
    match command.as_str() {
        "corpus" => corpus_command(rest),
        "bench" => bench::command(rest),
        "bench-raw" => xtask::bench_raw::command(rest),
        "peak-rss" => bench::peak_rss_command(rest),
        "recall" => recall::command(rest),
        "record" => record::command(rest),
        "layers" => layers_command(rest),
        "faults" => faults_command(rest),
        "help" | "-h" | "--help" => {
            println!("{USAGE}");
            Ok(())
        }
        other => bail!("unknown command `{other}`\n\n{USAGE}"),
    }
}

fn corpus_command(args: &[String]) -> Result<()> {
    if let [flag, count, rest @ ..] = args {
        if flag == "--small" {
            let count = count.parse().context("--small: a number of sessions")?;
            let (seed, out) = match rest {
                [o, out] if o == "--out" => (1, out),
                [s, seed, o, out] if s == "--seed" && o == "--out" => {
                    (seed.parse().context("--seed")?, out)
                }
                _ => bail!("usage: corpus --small N [--seed S] --out DIR"),
            };
            let key = corpus::small::ensure(std::path::Path::new(out), count, seed)?;
            println!(
                "{count} small sessions in {out}; the rare word is in {}",
                key["rare_session"]
            );
            return Ok(());
        }
    }
    let options = parse_corpus_args(args)?;
    let started = std::time::Instant::now();
    let summary = corpus::generate(&options)?;
    println!(
        "{} in {:.1} s",
        summary.line(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

fn faults_command(args: &[String]) -> Result<()> {
    let (mut seeds, mut flips) = (20u64, 100u64);
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let mut number = || -> Result<u64> {
            let v = it.next().with_context(|| format!("{flag} needs a value"))?;
            v.parse()
                .with_context(|| format!("{flag}: bad number `{v}`"))
        };
        match flag.as_str() {
            "--seeds" => seeds = number()?,
            "--flips" => flips = number()?,
            other => bail!("faults: unknown option `{other}`\n\n{USAGE}"),
        }
    }
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    for seed in 1..=seeds {
        let started = std::time::Instant::now();
        let status = std::process::Command::new(&cargo)
            .args([
                "test",
                "-q",
                "-p",
                "history-cli",
                "--test",
                "cli",
                "index_damage",
            ])
            .env("NOTESOUP_FAULT_SEED", seed.to_string())
            .env("NOTESOUP_FAULT_FLIPS", flips.to_string())
            .status()
            .context("running cargo test")?;
        if !status.success() {
            bail!("seed {seed} failed (NOTESOUP_FAULT_SEED={seed} NOTESOUP_FAULT_FLIPS={flips})");
        }
        println!(
            "seed {seed}: ok in {:.0} s",
            started.elapsed().as_secs_f64()
        );
    }
    Ok(())
}

fn layers_command(args: &[String]) -> Result<()> {
    let root = layers::workspace_root();
    let dirs = match args {
        [] => layers::workspace_crates(&root)?,
        [flag, ..] if flag.starts_with('-') => bail!("layers: unknown option `{flag}`\n\n{USAGE}"),
        dirs => dirs
            .iter()
            .map(|dir| std::path::absolute(dir).with_context(|| format!("layers: {dir}")))
            .collect::<Result<_>>()?,
    };
    let mut graphs = Vec::new();
    for dir in &dirs {
        graphs.extend(layers::crate_graphs(&root, dir)?);
    }
    let (text, circles) = layers::report(&graphs);
    print!("{text}");
    if circles > 0 {
        bail!(
            "layers: {circles} circle{} of imports between modules",
            if circles == 1 { "" } else { "s" }
        );
    }
    println!("layers: no circle in {} crate roots", graphs.len());
    Ok(())
}

fn parse_corpus_args(args: &[String]) -> Result<corpus::Options> {
    let mut mib = None;
    let mut big_mib = None;
    let mut seed = None;
    let mut out = None;
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let (name, inline) = match flag.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (flag.as_str(), None),
        };
        let mut value = || -> Result<String> {
            match inline.clone() {
                Some(v) => Ok(v),
                None => it
                    .next()
                    .cloned()
                    .with_context(|| format!("{name} needs a value")),
            }
        };
        match name {
            "--mib" => mib = Some(parse_size(&value()?, name)?),
            "--big-mib" => big_mib = Some(parse_size(&value()?, name)?),
            "--seed" => {
                let v = value()?;
                seed = Some(
                    v.parse::<u64>()
                        .with_context(|| format!("--seed: bad number `{v}`"))?,
                )
            }
            "--out" => out = Some(std::path::PathBuf::from(value()?)),
            "-h" | "--help" => bail!("{USAGE}"),
            other => bail!("corpus: unknown option `{other}`\n\n{USAGE}"),
        }
    }
    Ok(corpus::Options {
        mib: mib.context("corpus: --mib is required")?,
        big_mib,
        seed: seed.unwrap_or(1),
        out: out.context("corpus: --out is required")?,
    })
}

fn parse_size(v: &str, name: &str) -> Result<f64> {
    match v.parse::<f64>() {
        Ok(x) if x.is_finite() && x > 0.0 => Ok(x),
        _ => bail!("{name}: expected a positive number of MiB, got `{v}`"),
    }
}
