//! A realistic, deterministic mixed corpus of Claude Code, Codex and pi transcripts, laid out as
//! the agents lay them out, with needles planted in every role and an answer key.
//!
//! ```text
//! DIR/claude/<project-dir>/<session-id>.jsonl                              (projects root)
//! DIR/codex/YYYY/MM/DD/rollout-YYYY-MM-DDThh-mm-ss-<thread-id>.jsonl       (sessions root)
//! DIR/pi/--<encoded-cwd>--/<timestamp>_<session-id>.jsonl                  (sessions root)
//! DIR/expected.json                                                        (the answer key)
//! ```
//!
//! The same options always give the same bytes. One Claude transcript is big (`big_mib`, an
//! eighth of the total by default, at most [`BIG_MAX_MIB`]): the session being worked in, started
//! after all the others.
//! The other sessions have a long-tailed size distribution and start over 55 days; each file's
//! mtime is its last line's time.
//!
//! `expected.json` lists, for every planted needle, the query that must find it and where:
//! `{"query", "session": "<harness>:<id>", "seq": <1-based line>, "role", …}`, plus `absent`:
//! queries that must find nothing (never written, or written only on an abandoned branch).
//!
//! ```no_run
//! use xtask::corpus;
//! let summary = corpus::generate(&corpus::Options {
//!     mib: 64.0, big_mib: None, seed: 1, out: "/tmp/corpus64".into(),
//! })?;
//! println!("{}", summary.line());
//! # Ok::<(), anyhow::Error>(())
//! ```

mod claude;
mod codex;
mod json;
mod needle;
mod pi;
mod rng;
mod session;
pub mod small;
mod text;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use anyhow::{bail, Context, Result};
use serde_json::{json, Value};

use needle::{Factory, Harness, Hit, Needle};
use rng::Rng;
use session::{Spec, Written};
use text::Pools;

const MIB: f64 = 1_048_576.0;
const DAY_MS: i64 = 86_400_000;
/// How the bytes outside the big file are shared out.
const SHARES: [(Harness, f64); 3] = [
    (Harness::Claude, 0.45),
    (Harness::Codex, 0.33),
    (Harness::Pi, 0.22),
];

const CLAUDE_CWDS: &[&str] = &[
    "/home/dev/src/notesoup",
    "/home/dev/src/api-gateway",
    "/home/dev/src/web-app",
    "/home/dev/work/infra-terraform",
    "/Users/sam/code/mobile_client",
    "/home/dev/src/data-pipeline",
    "/home/dev/src/notesoup/crates/history-core",
    "/home/dev/oss/ripgrep",
    "/home/dev/src/billing.v2",
    "/tmp/scratch",
];
const CODEX_CWDS: &[&str] = &[
    "/home/dev/src/notesoup",
    "/home/dev/src/api-gateway",
    "/home/dev/src/ml-experiments",
    "/home/dev/work/infra-terraform",
    "/Users/sam/code/localpush",
    "/home/dev/src/web-app",
    "/home/dev/oss/tokio",
];
const PI_CWDS: &[&str] = &[
    "/home/dev/src/notesoup",
    "/home/dev/src/pi-extensions",
    "/Users/sam/code/dotfiles",
    "/home/dev/src/web-app",
    "/home/dev/src/data-pipeline",
];

/// What to generate.
#[derive(Clone, Debug)]
pub struct Options {
    /// The corpus's approximate total size in MiB.
    pub mib: f64,
    /// The big Claude transcript's size in MiB; `None` means `mib / 8`, at most [`BIG_MAX_MIB`].
    pub big_mib: Option<f64>,
    pub seed: u64,
    /// The output directory (created; a previous corpus in it is replaced).
    pub out: PathBuf,
}

/// Files and bytes written for one harness.
#[derive(Clone, Debug, Default)]
pub struct Totals {
    pub files: usize,
    pub bytes: u64,
}

/// What was written.
#[derive(Clone, Debug)]
pub struct Summary {
    pub out: PathBuf,
    pub seed: u64,
    /// Per harness, in the order claude, codex, pi.
    pub totals: [Totals; 3],
    /// The biggest file, relative to `out`, and its size.
    pub biggest: (String, u64),
    /// The big transcript's qualified session id, file (relative to `out`) and size.
    pub big: (String, String, u64),
    /// Needle occurrences a search must find.
    pub hits: usize,
    /// Queries a search must not find.
    pub absent: usize,
}

impl Summary {
    /// One line for a terminal.
    pub fn line(&self) -> String {
        let files: usize = self.totals.iter().map(|t| t.files).sum();
        let bytes: u64 = self.totals.iter().map(|t| t.bytes).sum();
        let per: Vec<String> = Harness::ALL
            .iter()
            .zip(&self.totals)
            .map(|(h, t)| {
                format!(
                    "{} {} files {:.1} MiB",
                    h.name(),
                    t.files,
                    t.bytes as f64 / MIB
                )
            })
            .collect();
        format!(
            "corpus seed {}: {files} files, {:.1} MiB ({}); big transcript {} {:.1} MiB; biggest file {} {:.1} MiB; {} needles, {} absent; {}",
            self.seed,
            bytes as f64 / MIB,
            per.join(", "),
            self.big.0,
            self.big.2 as f64 / MIB,
            self.biggest.0,
            self.biggest.1 as f64 / MIB,
            self.hits,
            self.absent,
            self.out.join("expected.json").display()
        )
    }
}

/// One session to write.
struct Job {
    harness: Harness,
    big: bool,
    spec: Spec,
}

/// Writes the corpus described by `options` and its `expected.json`.
/// The generator's version, in `expected.json`: a corpus written by another version is
/// written again rather than measured as if it were this one's.
pub const GENERATOR: u64 = 3;

/// The most the big transcript takes by default: under the largest file the product reads
/// ([`history_core::MAX_FILE_BYTES`], 512 MiB), which a transcript of exactly that target
/// overruns by its last line, so that a 4 GiB corpus is searched whole, not refused in part.
pub const BIG_MAX_MIB: f64 = 448.0;

pub fn generate(options: &Options) -> Result<Summary> {
    let total = options.mib * MIB;
    let big = options
        .big_mib
        .unwrap_or((options.mib / 8.0).min(BIG_MAX_MIB))
        * MIB;
    if !(total.is_finite() && total > 0.0 && big > 0.0 && big < total) {
        bail!("sizes: need 0 < big ({big} B) < total ({total} B)");
    }
    prepare(&options.out)?;
    let pools = Pools::new(options.seed);
    let master = Rng::new(options.seed);
    let mut factory = Factory::new(options.seed);
    let (total, big) = (total as u64, big as u64);
    let mut planner = Planner::new(&master, total);
    // Sessions end on a turn boundary, so they overshoot their targets: plan most of the
    // budget, measure, then top each harness up with more sessions.
    let budgets = SHARES.map(|(h, share)| (h, ((total - big) as f64 * share) as u64));
    let mut jobs = vec![planner.big(big)];
    for (harness, budget) in budgets {
        jobs.extend(planner.sessions(harness, budget * 85 / 100));
    }
    plant(&mut jobs, &master, &mut factory, options.mib);
    let mut written = run(jobs, &pools, &options.out)?;
    let mut more = Vec::new();
    for (harness, budget) in budgets {
        let have: u64 = written
            .iter()
            .filter(|(h, big, _)| *h == harness && !big)
            .map(|(_, _, w)| w.bytes)
            .sum();
        if budget > have + (16 << 10) {
            more.extend(planner.sessions(harness, (budget - have) * 9 / 10));
        }
    }
    written.extend(run(more, &pools, &options.out)?);
    let absent: Vec<String> = (0..4).map(|i| factory.absent(i)).collect();
    finish(options, written, absent)
}

/// The answer key of the corpus of `mib` MiB and `seed` in `dir`: the one already there when it
/// was written by this generator with those settings, else a corpus written anew.
pub fn ensure(dir: &Path, mib: f64, seed: u64) -> Result<Value> {
    let key = dir.join("expected.json");
    if let Ok(text) = std::fs::read_to_string(&key) {
        let v: Value = serde_json::from_str(&text)?;
        if v["seed"].as_u64() == Some(seed)
            && v["mib"].as_f64() == Some(mib)
            && v["generator"].as_u64() == Some(GENERATOR)
        {
            return Ok(v);
        }
    }
    eprintln!(
        "writing a {mib} MiB corpus (seed {seed}) to {}",
        dir.display()
    );
    let summary = generate(&Options {
        mib,
        big_mib: None,
        seed,
        out: dir.to_path_buf(),
    })?;
    eprintln!("{}", summary.line());
    Ok(serde_json::from_str(&std::fs::read_to_string(&key)?)?)
}

/// Creates `out`, or empties it if it holds a previous corpus; refuses any other non-empty dir.
fn prepare(out: &Path) -> Result<()> {
    if out.exists() {
        let mut entries =
            std::fs::read_dir(out).with_context(|| format!("reading {}", out.display()))?;
        if entries.next().is_some() {
            if !out.join("expected.json").exists() {
                bail!(
                    "{} is not empty and holds no previous corpus (no expected.json)",
                    out.display()
                );
            }
            for name in ["claude", "codex", "pi"] {
                let dir = out.join(name);
                if dir.exists() {
                    std::fs::remove_dir_all(&dir)
                        .with_context(|| format!("removing {}", dir.display()))?;
                }
            }
            std::fs::remove_file(out.join("expected.json"))?;
        }
    }
    for name in ["claude", "codex", "pi"] {
        std::fs::create_dir_all(out.join(name))
            .with_context(|| format!("creating {}", out.display()))?;
    }
    Ok(())
}

/// Where sessions' sizes, times and directories come from.
struct Planner {
    master: Rng,
    rng: Rng,
    base_ms: i64,
    max_session: u64,
    /// Per harness, how many sessions were planned so far (each gets its own random stream).
    planned: [u64; 3],
}

impl Planner {
    fn new(master: &Rng, total: u64) -> Planner {
        Planner {
            master: master.clone(),
            rng: master.derive(1),
            base_ms: json::days_from_civil(2026, 8, 1),
            max_session: (total / 64).clamp(256 << 10, 16 << 20),
            planned: [0; 3],
        }
    }

    fn big(&mut self, target: u64) -> Job {
        Job {
            harness: Harness::Claude,
            big: true,
            spec: Spec {
                rng: self.master.derive(1_000),
                target,
                // The session being worked in: it starts after every other one, and it is the
                // longest, so it also ends last and is the newest-modified file.
                start_ms: self.base_ms + 55 * DAY_MS + self.rng.below(DAY_MS as u64) as i64,
                cwd: CLAUDE_CWDS[0],
                needles: Vec::new(),
            },
        }
    }

    /// Sessions of long-tailed sizes adding up to `budget` bytes, started over 55 days.
    fn sessions(&mut self, harness: Harness, budget: u64) -> Vec<Job> {
        let h = Harness::ALL
            .iter()
            .position(|x| *x == harness)
            .expect("known harness");
        let cwds = match harness {
            Harness::Claude => CLAUDE_CWDS,
            Harness::Codex => CODEX_CWDS,
            Harness::Pi => PI_CWDS,
        };
        let mut jobs = Vec::new();
        let mut left = budget;
        while left > 0 {
            let mut size = self.rng.long_tail(6 << 10, self.max_session).min(left);
            if left - size < 6 << 10 {
                size = left;
            }
            left -= size;
            self.planned[h] += 1;
            jobs.push(Job {
                harness,
                big: false,
                spec: Spec {
                    rng: self.master.derive(((h as u64 + 2) << 32) | self.planned[h]),
                    target: size,
                    start_ms: self.base_ms + (self.rng.unit() * 55.0 * DAY_MS as f64) as i64,
                    cwd: cwds[self.rng.skewed(cwds.len())],
                    needles: Vec::new(),
                },
            });
        }
        jobs
    }
}

/// Gives every harness its needle matrix plus random extras, spread over its ordinary
/// sessions, and the big transcript needles of its own.
fn plant(jobs: &mut [Job], master: &Rng, factory: &mut Factory, mib: f64) {
    let mut rng = master.derive(2);
    let extra = 6 + (mib / 16.0) as usize;
    for (h, harness) in Harness::ALL.into_iter().enumerate() {
        let sessions: Vec<usize> = (0..jobs.len())
            .filter(|&i| jobs[i].harness == harness && !jobs[i].big)
            .collect();
        let mut needles = factory.matrix(&mut rng, 3 * h);
        needles.extend((0..extra).map(|_| factory.random(&mut rng)));
        if harness != Harness::Codex {
            needles.push(abandoned(factory, &mut rng));
        }
        for needle in needles {
            let i = sessions[rng.below(sessions.len() as u64) as usize];
            jobs[i].spec.needles.push(needle);
        }
    }
    let big = jobs.iter_mut().find(|j| j.big).expect("a big transcript");
    big.spec.needles = factory.matrix(&mut rng, 5).into_iter().step_by(3).collect();
    big.spec
        .needles
        .extend((0..4).map(|_| factory.random(&mut rng)));
    big.spec.needles.push(abandoned(factory, &mut rng));
}

fn abandoned(factory: &mut Factory, rng: &mut Rng) -> Needle {
    let mut n = factory.make(rng, needle::Slot::UserText, needle::Form::Plain);
    n.abandoned = true;
    n
}

/// Writes every session, on as many threads as there are cores (at most 8). Each session has
/// its own random stream, so the bytes do not depend on the schedule.
fn run(jobs: Vec<Job>, pools: &Pools, out: &Path) -> Result<Vec<(Harness, bool, Written)>> {
    let threads = std::thread::available_parallelism()
        .map_or(4, |n| n.get())
        .min(8);
    let kinds: Vec<(Harness, bool)> = jobs.iter().map(|j| (j.harness, j.big)).collect();
    let queue: Vec<Mutex<Option<Job>>> = jobs.into_iter().map(|j| Mutex::new(Some(j))).collect();
    let results: Vec<Mutex<Option<std::io::Result<Written>>>> =
        queue.iter().map(|_| Mutex::new(None)).collect();
    let next = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(slot) = queue.get(i) else { break };
                let job = slot
                    .lock()
                    .expect("job lock")
                    .take()
                    .expect("each job runs once");
                let root = out.join(job.harness.name());
                let written = match job.harness {
                    Harness::Claude => claude::write(job.spec, pools, &root),
                    Harness::Codex => codex::write(job.spec, pools, &root),
                    Harness::Pi => pi::write(job.spec, pools, &root),
                };
                *results[i].lock().expect("result lock") = Some(written);
            });
        }
    });
    let mut written = Vec::with_capacity(results.len());
    for ((harness, big), result) in kinds.into_iter().zip(results) {
        let w = result
            .into_inner()
            .expect("result lock")
            .expect("every job ran");
        written.push((
            harness,
            big,
            w.with_context(|| format!("writing a {} session", harness.name()))?,
        ));
    }
    Ok(written)
}

/// Writes `expected.json` and sums up.
fn finish(
    options: &Options,
    written: Vec<(Harness, bool, Written)>,
    mut absent: Vec<String>,
) -> Result<Summary> {
    let mut totals: [Totals; 3] = Default::default();
    let mut biggest = (String::new(), 0u64);
    let mut big_transcript = (String::new(), String::new(), 0u64);
    let mut hits = Vec::new();
    let mut trapped = Vec::new();
    let mut order: Vec<&(Harness, bool, Written)> = written.iter().collect();
    order.sort_by_key(|(h, big, _)| (Harness::ALL.iter().position(|x| x == h), !big));
    for (harness, big, w) in order {
        let t = &mut totals[Harness::ALL
            .iter()
            .position(|x| x == harness)
            .expect("known harness")];
        t.files += 1;
        t.bytes += w.bytes;
        let file = format!("{}/{}", harness.name(), w.rel);
        let session = format!("{}:{}", harness.name(), w.id);
        if w.bytes > biggest.1 {
            biggest = (file.clone(), w.bytes);
        }
        if *big {
            big_transcript = (session.clone(), file.clone(), w.bytes);
        }
        let mut sorted: Vec<&Hit> = w.hits.iter().collect();
        sorted.sort_by_key(|h| h.seq);
        for hit in sorted {
            hits.push(hit_json(hit, &session, &file, *big));
        }
        for hit in &w.trapped {
            absent.push(hit.needle.query.clone());
            trapped.push(json!({
                "query": hit.needle.query,
                "session": session,
                "seq": hit.seq,
                "file": file,
                "raw": hit.raw_in_file,
            }));
        }
    }
    let expected = json!({
        "schema_version": 1,
        "seed": options.seed,
        "mib": options.mib,
        "generator": GENERATOR,
        "roots": {"claude": "claude", "codex": "codex", "pi": "pi"},
        "big_session": big_transcript.0,
        "big_file": big_transcript.1,
        "hits": hits,
        "absent": absent,
        "abandoned": trapped,
    });
    let path = options.out.join("expected.json");
    let mut text = serde_json::to_string_pretty(&expected)?;
    text.push('\n');
    std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
    Ok(Summary {
        out: options.out.clone(),
        seed: options.seed,
        totals,
        biggest,
        big: big_transcript,
        hits: hits.len(),
        absent: absent.len(),
    })
}

fn hit_json(hit: &Hit, session: &str, file: &str, big: bool) -> Value {
    let mut v = json!({
        "query": hit.needle.query,
        "session": session,
        "seq": hit.seq,
        "role": hit.needle.slot.role(),
        "slot": hit.needle.slot.name(),
        "form": hit.needle.form.name(),
        "file": file,
        "raw": hit.raw_in_file,
    });
    if let Some(m) = hit.mirror_seq {
        v["mirror_seq"] = json!(m);
    }
    if big {
        v["big_only"] = json!(true);
    }
    v
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;
    use std::fs;

    use super::*;

    fn files(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                files(&path, out);
            } else {
                out.push(path);
            }
        }
    }

    #[test]
    fn the_big_transcript_stays_under_the_largest_file_read() {
        // A transcript overruns its target by its last line: 16 MiB of room for it.
        let most = BIG_MAX_MIB * MIB + 16.0 * MIB;
        assert!(most < history_core::MAX_FILE_BYTES as f64);
    }

    fn is_uuid(s: &str) -> bool {
        s.len() == 36
            && s.char_indices().all(|(i, c)| {
                if matches!(i, 8 | 13 | 18 | 23) {
                    c == '-'
                } else {
                    c.is_ascii_hexdigit()
                }
            })
    }

    /// The session id a file's path names, checking the harness's layout.
    fn session_of(root: &Path, path: &Path) -> String {
        let rel = path
            .strip_prefix(root)
            .unwrap()
            .to_str()
            .unwrap()
            .to_string();
        let parts: Vec<&str> = rel.split('/').collect();
        let name = parts.last().unwrap();
        match parts[0] {
            "claude" => {
                assert_eq!(parts.len(), 3, "{rel}");
                assert!(parts[1].starts_with('-'), "{rel}");
                let id = name.strip_suffix(".jsonl").unwrap();
                assert!(is_uuid(id), "{rel}");
                format!("claude:{id}")
            }
            "codex" => {
                assert_eq!(parts.len(), 5, "{rel}");
                let stem = name
                    .strip_prefix("rollout-")
                    .unwrap()
                    .strip_suffix(".jsonl")
                    .unwrap();
                let (stamp, id) = stem.split_at(19);
                assert_eq!(
                    &stamp[..10],
                    format!("{}-{}-{}", parts[1], parts[2], parts[3]),
                    "{rel}"
                );
                let id = id.strip_prefix('-').unwrap();
                assert!(is_uuid(id), "{rel}");
                format!("codex:{id}")
            }
            "pi" => {
                assert_eq!(parts.len(), 3, "{rel}");
                assert!(
                    parts[1].starts_with("--") && parts[1].ends_with("--"),
                    "{rel}"
                );
                let (stamp, id) = name
                    .strip_suffix(".jsonl")
                    .unwrap()
                    .split_once('_')
                    .unwrap();
                assert_eq!(stamp.len(), 24, "{rel}");
                assert!(is_uuid(id), "{rel}");
                format!("pi:{id}")
            }
            other => panic!("unexpected root {other}"),
        }
    }

    /// The id the file's content gives its session.
    fn content_id(harness: &str, first: &Value, lines: &[Value]) -> String {
        match harness {
            "claude" => lines
                .iter()
                .find_map(|l| l.get("sessionId").and_then(Value::as_str))
                .unwrap()
                .to_string(),
            "codex" => {
                assert_eq!(first["type"], "session_meta");
                first["payload"]["id"].as_str().unwrap().to_string()
            }
            _ => {
                assert_eq!(first["type"], "session");
                assert_eq!(first["version"], 3);
                first["id"].as_str().unwrap().to_string()
            }
        }
    }

    /// The line numbers of a Claude file's selected branch: the last leaf that
    /// is not a progress line, its ancestors across compactions, and the tool results that hang
    /// off its tool calls.
    fn claude_branch(lines: &[Value]) -> std::collections::HashSet<usize> {
        let mut by_uuid = HashMap::new();
        let mut children: HashMap<&str, Vec<&str>> = HashMap::new();
        for (i, line) in lines.iter().enumerate() {
            if let (Some(uuid), Some("user" | "assistant" | "system" | "progress")) =
                (line["uuid"].as_str(), line["type"].as_str())
            {
                by_uuid.insert(uuid, (i + 1, line));
                if let Some(parent) = line["parentUuid"].as_str() {
                    children.entry(parent).or_default().push(uuid);
                }
            }
        }
        let leaf = by_uuid
            .iter()
            .filter(|(u, (_, l))| !children.contains_key(*u) && l["type"] != "progress")
            .max_by_key(|(_, (i, _))| *i)
            .map(|(u, _)| *u)
            .unwrap();
        let mut seqs = std::collections::HashSet::new();
        let mut at = Some(leaf);
        while let Some((i, line)) = at.and_then(|u| by_uuid.get(u)) {
            seqs.insert(*i);
            for child in children
                .get(line["uuid"].as_str().unwrap())
                .into_iter()
                .flatten()
            {
                let (j, c) = by_uuid[child];
                if c["sourceToolAssistantUUID"] == line["uuid"] {
                    seqs.insert(j);
                }
            }
            at = line["parentUuid"]
                .as_str()
                .or(line["logicalParentUuid"].as_str());
        }
        seqs
    }

    /// The line numbers of a pi file's active branch: the last entry's ancestry, and the header.
    fn pi_branch(lines: &[Value]) -> std::collections::HashSet<usize> {
        let by_id: HashMap<&str, (usize, &Value)> = lines
            .iter()
            .enumerate()
            .skip(1)
            .map(|(i, l)| (l["id"].as_str().unwrap(), (i + 1, l)))
            .collect();
        let mut seqs = std::collections::HashSet::from([1]);
        let mut at = lines.last().unwrap()["id"].as_str();
        while let Some((i, line)) = at.and_then(|id| by_id.get(id)) {
            seqs.insert(*i);
            at = line["parentId"].as_str();
        }
        seqs
    }

    fn expected_big(dir: &Path) -> (String, String) {
        let v: Value =
            serde_json::from_str(&fs::read_to_string(dir.join("expected.json")).unwrap()).unwrap();
        (
            v["big_session"].as_str().unwrap().into(),
            v["big_file"].as_str().unwrap().into(),
        )
    }

    fn corpus(dir: &Path, seed: u64) -> Summary {
        let _ = fs::remove_dir_all(dir);
        generate(&Options {
            mib: 2.0,
            big_mib: None,
            seed,
            out: dir.to_path_buf(),
        })
        .unwrap()
    }

    #[test]
    fn small_corpus_is_valid_laid_out_and_holds_its_needles() {
        let dir = std::env::temp_dir().join(format!("xtask-corpus-{}", std::process::id()));
        let summary = corpus(&dir, 7);
        let mut paths = Vec::new();
        files(&dir, &mut paths);
        paths.sort();
        let mut by_session: HashMap<String, Vec<String>> = HashMap::new();
        let mut branches: HashMap<String, std::collections::HashSet<usize>> = HashMap::new();
        let mut total = 0u64;
        let mut harnesses = HashMap::new();
        for path in paths
            .iter()
            .filter(|p| p.file_name().unwrap() != "expected.json")
        {
            let session = session_of(&dir, path);
            let harness = session.split(':').next().unwrap().to_string();
            *harnesses.entry(harness.clone()).or_insert(0) += 1;
            let text = fs::read_to_string(path).unwrap();
            total += text.len() as u64;
            assert!(text.ends_with('\n'));
            let lines: Vec<Value> = text
                .lines()
                .enumerate()
                .map(|(i, l)| {
                    serde_json::from_str(l)
                        .unwrap_or_else(|e| panic!("{}:{}: {e}: {l}", path.display(), i + 1))
                })
                .collect();
            assert!(lines.iter().all(Value::is_object));
            assert_eq!(
                format!("{harness}:{}", content_id(&harness, &lines[0], &lines)),
                session
            );
            let mtime = fs::metadata(path).unwrap().modified().unwrap();
            let since = mtime
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_millis() as i64;
            assert!(
                since > json::days_from_civil(2026, 8, 1),
                "{}",
                path.display()
            );
            let branch = match harness.as_str() {
                "claude" => claude_branch(&lines),
                "pi" => pi_branch(&lines),
                _ => (1..=lines.len()).collect(),
            };
            branches.insert(session.clone(), branch);
            by_session.insert(session, text.lines().map(str::to_string).collect());
        }
        assert_eq!(harnesses.len(), 3);
        assert!(total > 2 << 20, "{total}");
        let big = summary.big.2 as f64;
        assert!(
            big > 0.8 * MIB / 4.0 && big < 2.0 * MIB / 4.0,
            "big file {big}"
        );
        assert_eq!(
            expected_big(&dir),
            (summary.big.0.clone(), summary.big.1.clone())
        );
        let newest = paths
            .iter()
            .filter(|p| p.file_name().unwrap() != "expected.json")
            .max_by_key(|p| fs::metadata(p).unwrap().modified().unwrap())
            .unwrap();
        assert_eq!(
            newest,
            &dir.join(&summary.big.1),
            "the big session ends last"
        );

        let expected: Value =
            serde_json::from_str(&fs::read_to_string(dir.join("expected.json")).unwrap()).unwrap();
        let hits = expected["hits"].as_array().unwrap();
        assert_eq!(hits.len(), summary.hits);
        let mut forms = HashMap::new();
        for hit in hits {
            let lines = &by_session[hit["session"].as_str().unwrap()];
            let seq = hit["seq"].as_u64().unwrap() as usize;
            let line = &lines[seq - 1];
            let raw = hit["raw"].as_str().unwrap();
            assert!(line.contains(raw), "{hit}");
            assert!(
                branches[hit["session"].as_str().unwrap()].contains(&seq),
                "off the branch: {hit}"
            );
            let query = hit["query"].as_str().unwrap();
            let harness = hit["session"].as_str().unwrap().split(':').next().unwrap();
            match hit["form"].as_str().unwrap() {
                "plain" => assert!(line.contains(query)),
                "stored_upper" | "queried_upper" => {
                    assert!(line.to_lowercase().contains(&query.to_lowercase()))
                }
                _ => {}
            }
            // The needle occurs nowhere else, except in Codex's mirrored copy.
            let elsewhere: Vec<usize> = by_session
                .values()
                .flat_map(|ls| ls.iter().enumerate())
                .filter(|(_, l)| l.contains(raw))
                .map(|(i, _)| i + 1)
                .collect();
            let allowed = 1 + usize::from(hit.get("mirror_seq").is_some());
            assert_eq!(elsewhere.len(), allowed, "{hit}");
            if let Some(m) = hit.get("mirror_seq") {
                assert!(lines[m.as_u64().unwrap() as usize - 1].contains(raw));
            }
            *forms
                .entry((
                    harness.to_string(),
                    hit["role"].as_str().unwrap().to_string(),
                ))
                .or_insert(0) += 1;
        }
        for harness in ["claude", "codex", "pi"] {
            for role in ["user", "assistant", "tool", "context"] {
                assert!(
                    forms.contains_key(&(harness.to_string(), role.to_string())),
                    "{harness} {role}"
                );
            }
        }
        let kinds: std::collections::HashSet<&str> =
            hits.iter().map(|h| h["form"].as_str().unwrap()).collect();
        assert_eq!(kinds.len(), 10, "{kinds:?}");
        assert!(hits.iter().any(|h| h["big_only"] == true));
        let abandoned = expected["abandoned"].as_array().unwrap();
        assert!(abandoned.len() >= 2);
        for a in abandoned {
            let seq = a["seq"].as_u64().unwrap() as usize;
            assert!(
                !branches[a["session"].as_str().unwrap()].contains(&seq),
                "on the branch: {a}"
            );
            assert!(by_session[a["session"].as_str().unwrap()][seq - 1]
                .contains(a["raw"].as_str().unwrap()));
        }
        for query in expected["absent"].as_array().unwrap() {
            let q = query.as_str().unwrap();
            let count: usize = by_session
                .values()
                .flatten()
                .filter(|l| l.contains(q))
                .count();
            let planted = abandoned.iter().any(|a| a["query"] == q);
            assert_eq!(count, usize::from(planted), "{q}");
        }

        // Deterministic: the same seed gives the same bytes.
        let again = dir.with_extension("again");
        corpus(&again, 7);
        let mut other = Vec::new();
        files(&again, &mut other);
        other.sort();
        assert_eq!(paths.len(), other.len());
        for (a, b) in paths.iter().zip(&other) {
            assert_eq!(
                a.strip_prefix(&dir).unwrap(),
                b.strip_prefix(&again).unwrap()
            );
            assert!(
                fs::read(a).unwrap() == fs::read(b).unwrap(),
                "{}",
                a.display()
            );
        }
        fs::remove_dir_all(&dir).unwrap();
        fs::remove_dir_all(&again).unwrap();
    }
}
