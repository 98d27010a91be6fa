//! `cargo xtask recall`: how often ways of searching put a question's answer session first, on
//! the question set of `fixtures/recall` (see its README).
//!
//! Each method ranks the history's sessions for the text of each question, and a question
//! scores by the rank of its one answer: hit@1 and hit@5 (the answer first, or among the first
//! five) and MRR@10 (1/rank within the first ten, else 0), over all questions and per kind.
//!
//! - `words-rg`: the naive baseline. The question's content words ([`content_words`]), and each
//!   session file ranked by how many of them occur in it, case-insensitively, as substrings of
//!   its bytes (what `rg -i -F -l -e WORD` per word would say).
//! - `query-or`: notesoup-history's best today: `list --sessions --query WORD` for each content
//!   word, and each session ranked by its hits summed over the words.
//! - `find`: `notesoup-history find TEXT --json --limit 10`, skipped where this build has no
//!   `find`.
//!
//! In the first two, sessions that score nothing are not ranked, and equal scores are ranked
//! by key.
//!
//! Every run of notesoup-history is without the search index, so that every run gives the same
//! figures, and with a cache of its own (`target/recall-cache`), so that the user's is left
//! alone.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use serde_json::Value;

use crate::bench::{build_cli, cores, files_under, target_dir};

const KINDS: [&str; 3] = ["paraphrase", "keywords", "identifier"];
const METHODS: [&str; 3] = ["words-rg", "query-or", "find"];

/// English words too common to tell sessions apart, dropped from the questions.
const STOPWORDS: &[&str] = &[
    "about", "after", "all", "also", "am", "an", "and", "any", "are", "as", "at", "be", "been",
    "before", "but", "by", "can", "could", "did", "didn", "do", "does", "doesn", "don", "for",
    "from", "had", "has", "have", "he", "her", "his", "how", "if", "in", "into", "is", "isn", "it",
    "its", "me", "my", "no", "not", "of", "on", "or", "our", "out", "over", "she", "so", "some",
    "than", "that", "the", "their", "them", "then", "there", "these", "they", "this", "those",
    "to", "up", "us", "was", "wasn", "we", "were", "what", "when", "where", "which", "while",
    "who", "why", "will", "with", "would", "you", "your",
];

pub fn command(args: &[String]) -> Result<()> {
    let mut dir = PathBuf::from("fixtures/recall");
    let mut only: Vec<String> = METHODS.map(String::from).to_vec();
    let mut show_misses = false;
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let mut value = || it.next().with_context(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--dir" => dir = PathBuf::from(value()?),
            "--only" => {
                only = value()?.split(',').map(|m| m.trim().to_string()).collect();
                if let Some(m) = only.iter().find(|m| !METHODS.contains(&m.as_str())) {
                    bail!(
                        "--only: unknown method `{m}` (known: {})",
                        METHODS.join(", ")
                    );
                }
            }
            "--show-misses" => show_misses = true,
            other => bail!("unknown recall option `{other}`"),
        }
    }
    let path = dir.join("questions.jsonl");
    let text =
        std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    let questions = parse_questions(&text).with_context(|| format!("{}", path.display()))?;
    let history = History::new(&dir)?;
    let mut summary = Vec::new();
    for method in &only {
        let started = Instant::now();
        let rankings = match method.as_str() {
            "words-rg" => words_rg(&history, &questions)?,
            "query-or" => query_or(&history, &questions)?,
            _ => match find(&history, &questions)? {
                Some(rankings) => rankings,
                None => {
                    println!("find: not available in this build\n");
                    continue;
                }
            },
        };
        let ranks: Vec<Option<usize>> = questions
            .iter()
            .zip(&rankings)
            .map(|(q, ranking)| rank_of(ranking, &q.answer))
            .collect();
        let kinds: Vec<&str> = questions.iter().map(|q| q.kind.as_str()).collect();
        let rows = score_rows(&kinds, &ranks);
        println!("{method} ({:.1} s)\n", started.elapsed().as_secs_f64());
        print_table(method, &rows);
        if show_misses {
            print_misses(&questions, &rankings, &ranks);
        }
        println!();
        summary.push((method.as_str(), rows[0].1));
    }
    if !summary.is_empty() {
        print_table("method", &summary);
    }
    Ok(())
}

/// One line of `questions.jsonl`.
struct Question {
    id: String,
    kind: String,
    text: String,
    /// The session it is about, `<harness>:<id>`.
    answer: String,
}

/// The questions of a `questions.jsonl`, one JSON object a line (blank lines skipped), with
/// unique ids and known kinds.
fn parse_questions(text: &str) -> Result<Vec<Question>> {
    let mut questions = Vec::new();
    let mut ids = HashSet::new();
    for (n, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let at = || format!("line {}", n + 1);
        let v: Value = serde_json::from_str(line).with_context(at)?;
        let field = |name: &str| -> Result<String> {
            match v[name].as_str() {
                Some(s) if !s.is_empty() => Ok(s.to_string()),
                _ => bail!("{}: no `{name}` string", at()),
            }
        };
        let q = Question {
            id: field("id")?,
            kind: field("kind")?,
            text: field("text")?,
            answer: field("answer")?,
        };
        if !KINDS.contains(&q.kind.as_str()) {
            bail!(
                "{}: unknown kind `{}` (known: {})",
                at(),
                q.kind,
                KINDS.join(", ")
            );
        }
        if !ids.insert(q.id.clone()) {
            bail!("{}: the id `{}` again", at(), q.id);
        }
        questions.push(q);
    }
    if questions.is_empty() {
        bail!("no questions");
    }
    Ok(questions)
}

/// The distinct content words of `text`, in order: split on every character that is not
/// alphanumeric, lowercased, without [`STOPWORDS`] and words of one character.
fn content_words(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    for word in text.split(|c: char| !c.is_alphanumeric()) {
        let word = word.to_lowercase();
        if word.chars().count() >= 2
            && !STOPWORDS.contains(&word.as_str())
            && !words.contains(&word)
        {
            words.push(word);
        }
    }
    words
}

/// The fixture's history, searched by notesoup-history without the search index.
struct History {
    cli: PathBuf,
    roots: [PathBuf; 3],
    /// `XDG_CACHE_HOME` for notesoup-history: absolute, as the XDG specification wants.
    cache: PathBuf,
}

/// A session of `list --sessions` output.
struct Listed {
    key: String,
    path: PathBuf,
    hits: u64,
}

impl History {
    fn new(dir: &Path) -> Result<History> {
        let roots = ["claude/projects", "codex/sessions", "pi/sessions"].map(|r| dir.join(r));
        if let Some(missing) = roots.iter().find(|r| !r.is_dir()) {
            bail!("{} is not a directory", missing.display());
        }
        Ok(History {
            cli: build_cli()?,
            roots,
            cache: std::path::absolute(target_dir().join("recall-cache"))?,
        })
    }

    /// notesoup-history on the fixture's roots with `args`.
    fn cli(&self, args: &[&str]) -> Command {
        let mut c = Command::new(&self.cli);
        for (flag, root) in ["--claude-root", "--codex-root", "--pi-root"]
            .iter()
            .zip(&self.roots)
        {
            c.arg(flag).arg(root);
        }
        c.args(args)
            .env("NOTESOUP_HISTORY_INDEX", "off")
            .env("XDG_CACHE_HOME", &self.cache);
        c
    }

    /// Every session with a hit of `query`, each with its file and hit count.
    fn sessions(&self, query: &str) -> Result<Vec<Listed>> {
        let args = ["list", "--no-index", "--sessions", "--json", "-q", query];
        let out = self
            .cli(&args)
            .args(["--limit", "1000", "--budget", "100000000"])
            .output()
            .context("running notesoup-history")?;
        // Exit 1: no session has a hit.
        if !matches!(out.status.code(), Some(0 | 1)) {
            bail!(
                "list -q {query:?} failed ({}): {}{}",
                out.status,
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        let v: Value = serde_json::from_slice(&out.stdout)
            .with_context(|| format!("the JSON of list -q {query:?}"))?;
        if v["has_older"] != false {
            bail!("list -q {query:?} did not fit in one page");
        }
        let sessions = v["sessions"]
            .as_array()
            .context("no sessions in the JSON")?;
        sessions
            .iter()
            .map(|s| {
                Ok(Listed {
                    key: s["session"]
                        .as_str()
                        .context("a session without a key")?
                        .into(),
                    path: s["path"]
                        .as_str()
                        .context("a session without a path")?
                        .into(),
                    hits: s["hits"].as_u64().context("a session without hits")?,
                })
            })
            .collect()
    }
}

/// Each question's ranking by `words-rg`: the session files by how many of its content words
/// each holds, compared in lowercase.
fn words_rg(h: &History, questions: &[Question]) -> Result<Vec<Vec<String>>> {
    // Nearly every transcript holds an `e`: the query lists them all with their files.
    let mut keys = HashMap::new();
    for s in h.sessions("e")? {
        keys.insert(s.path.canonicalize()?, s.key);
    }
    let mut files = Vec::new();
    for path in files_under(h.roots.clone())? {
        let key = keys
            .get(&path.canonicalize()?)
            .with_context(|| format!("{}: no session of `list -q e`", path.display()))?;
        let bytes = std::fs::read(&path)?;
        let lower = String::from_utf8_lossy(&bytes).to_lowercase().into_bytes();
        files.push((key.as_str(), lower));
    }
    Ok(questions
        .iter()
        .map(|q| {
            let words = content_words(&q.text);
            rank(files.iter().map(|(key, text)| {
                let held = words
                    .iter()
                    .filter(|w| memchr::memmem::find(text, w.as_bytes()).is_some())
                    .count();
                (*key, held as u64)
            }))
        })
        .collect())
}

/// Each question's ranking by `query-or`: the sessions by their hits of `list --sessions
/// --query WORD` summed over its content words, each word searched once for all questions.
fn query_or(h: &History, questions: &[Question]) -> Result<Vec<Vec<String>>> {
    let words: Vec<String> = questions
        .iter()
        .flat_map(|q| content_words(&q.text))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    // A search takes up to a fifth of a second, and there are hundreds: one at a time on
    // every core.
    let next = AtomicUsize::new(0);
    let search = || -> Result<Vec<(&str, Vec<Listed>)>> {
        let mut done = Vec::new();
        while let Some(word) = words.get(next.fetch_add(1, Ordering::Relaxed)) {
            done.push((word.as_str(), h.sessions(word)?));
        }
        Ok(done)
    };
    let mut hits = HashMap::new();
    std::thread::scope(|s| -> Result<()> {
        let workers: Vec<_> = (0..cores()).map(|_| s.spawn(search)).collect();
        for worker in workers {
            hits.extend(worker.join().expect("a search thread panicked")?);
        }
        Ok(())
    })?;
    Ok(questions
        .iter()
        .map(|q| {
            let mut sum: HashMap<&str, u64> = HashMap::new();
            for word in content_words(&q.text) {
                for s in &hits[word.as_str()] {
                    *sum.entry(s.key.as_str()).or_default() += s.hits;
                }
            }
            rank(sum)
        })
        .collect())
}

/// Each question's ranking by `find`, or `None` where this build has no `find`.
fn find(h: &History, questions: &[Question]) -> Result<Option<Vec<Vec<String>>>> {
    if !h.cli(&["find", "--help"]).output()?.status.success() {
        return Ok(None);
    }
    let mut rankings = Vec::new();
    for q in questions {
        let args = ["find", "--json", "--limit", "10", "--", &q.text];
        let out = h.cli(&args).output().context("running notesoup-history")?;
        let ranked = serde_json::from_slice(&out.stdout)
            .map_err(anyhow::Error::from)
            .and_then(|v| ranked_keys(&v));
        match (out.status.code(), ranked) {
            (Some(0 | 1), Ok(keys)) => rankings.push(keys),
            (_, ranked) => bail!(
                "find for {} ({}): {}{}{}",
                q.id,
                out.status,
                ranked.err().map(|e| format!("{e:#}: ")).unwrap_or_default(),
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ),
        }
    }
    Ok(Some(rankings))
}

/// The sessions of `find`'s JSON, best first, each once: the `session` (or `key`) of each entry
/// of its first array of such entries.
fn ranked_keys(v: &Value) -> Result<Vec<String>> {
    let object = v.as_object().context("not a JSON object")?;
    if !object.contains_key("schema_version") {
        bail!("no schema_version");
    }
    let key = |e: &Value| {
        let key = e.get("session").or_else(|| e.get("key"));
        key.and_then(Value::as_str).map(String::from)
    };
    for entries in object.values().filter_map(Value::as_array) {
        if let Some(keys) = entries.iter().map(key).collect::<Option<Vec<_>>>() {
            if !keys.is_empty() {
                let mut seen = HashSet::new();
                return Ok(keys
                    .into_iter()
                    .filter(|k| seen.insert(k.clone()))
                    .collect());
            }
        }
    }
    Ok(Vec::new())
}

/// The keys of `scores` with a score above 0, highest first, ties by key.
fn rank<'a>(scores: impl IntoIterator<Item = (&'a str, u64)>) -> Vec<String> {
    let mut scored: Vec<_> = scores.into_iter().filter(|(_, s)| *s > 0).collect();
    scored.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    scored.into_iter().map(|(key, _)| key.to_string()).collect()
}

/// Where `answer` is in `ranking`, from 1.
fn rank_of(ranking: &[String], answer: &str) -> Option<usize> {
    ranking.iter().position(|k| k == answer).map(|i| i + 1)
}

/// The scores of some questions, summed.
#[derive(Clone, Copy, Default, Debug, PartialEq)]
struct Score {
    n: usize,
    hit1: usize,
    hit5: usize,
    /// The sum of 1/rank over the answers within the first ten.
    rr: f64,
}

impl Score {
    fn add(&mut self, rank: Option<usize>) {
        self.n += 1;
        if let Some(r) = rank {
            self.hit1 += usize::from(r == 1);
            self.hit5 += usize::from(r <= 5);
            if r <= 10 {
                self.rr += 1.0 / r as f64;
            }
        }
    }

    fn mrr(&self) -> f64 {
        self.rr / self.n.max(1) as f64
    }

    fn share(&self, count: usize) -> f64 {
        100.0 * count as f64 / self.n.max(1) as f64
    }
}

/// The scores of every question (`all`) and of each kind, from each question's kind and the
/// rank of its answer.
fn score_rows(kinds: &[&str], ranks: &[Option<usize>]) -> Vec<(&'static str, Score)> {
    let mut rows: Vec<(&str, Score)> = std::iter::once("all")
        .chain(KINDS)
        .map(|k| (k, Score::default()))
        .collect();
    for (kind, rank) in kinds.iter().zip(ranks) {
        rows[0].1.add(*rank);
        if let Some(row) = rows.iter_mut().find(|(k, _)| k == kind) {
            row.1.add(*rank);
        }
    }
    rows
}

fn print_table(title: &str, rows: &[(&str, Score)]) {
    println!("| {title} | n | hit@1 | hit@5 | MRR@10 |");
    println!("|---|---:|---:|---:|---:|");
    for (name, s) in rows {
        println!(
            "| {name} | {} | {:.1}% | {:.1}% | {:.3} |",
            s.n,
            s.share(s.hit1),
            s.share(s.hit5),
            s.mrr()
        );
    }
}

/// The questions whose answer is not first: the rank it has, the first three sessions and the
/// question's start.
fn print_misses(questions: &[Question], rankings: &[Vec<String>], ranks: &[Option<usize>]) {
    let short = |key: &str| {
        key.chars()
            .take(key.find(':').map_or(0, |i| i + 9))
            .collect::<String>()
    };
    println!("\nmisses (rank, first three, question):");
    for ((q, ranking), rank) in questions.iter().zip(rankings).zip(ranks) {
        if *rank == Some(1) {
            continue;
        }
        let top: Vec<String> = ranking.iter().take(3).map(|k| short(k)).collect();
        let text: String = q.text.chars().take(70).collect();
        println!(
            "  {} {:<10} {:>4}  {:<50} {text}",
            q.id,
            q.kind,
            rank.map_or("-".to_string(), |r| r.to_string()),
            top.join(" ")
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_words_drop_stopwords_short_words_and_repeats() {
        assert_eq!(
            content_words(
                "Where did we cap the PostHog shutdown-timeout? It's the 2x posthog, a_b"
            ),
            ["cap", "posthog", "shutdown", "timeout", "2x"]
        );
        assert_eq!(
            content_words("emdash でコンテンツを Git 管理"),
            ["emdash", "でコンテンツを", "git", "管理"]
        );
    }

    #[test]
    fn questions_need_unique_ids_and_known_kinds() {
        let line = |id: &str, kind: &str| {
            format!(r#"{{"id":"{id}","kind":"{kind}","text":"t","answer":"pi:1"}}"#)
        };
        let ok = format!(
            "{}\n\n{}\n",
            line("q1", "keywords"),
            line("q2", "identifier")
        );
        assert_eq!(parse_questions(&ok).unwrap().len(), 2);
        let twice = format!("{}\n{}", line("q1", "keywords"), line("q1", "paraphrase"));
        assert!(format!("{:#}", parse_questions(&twice).err().unwrap()).contains("again"));
        let unknown = line("q1", "riddle");
        assert!(format!("{:#}", parse_questions(&unknown).err().unwrap()).contains("unknown kind"));
    }

    #[test]
    fn ranks_by_score_then_key_without_zeros() {
        let ranking = rank([("b", 2), ("c", 5), ("a", 2), ("z", 0)]);
        assert_eq!(ranking, ["c", "a", "b"]);
        assert_eq!(rank_of(&ranking, "a"), Some(2));
        assert_eq!(rank_of(&ranking, "z"), None);
    }

    #[test]
    fn scores_hits_and_mrr_overall_and_per_kind() {
        let kinds = [
            "keywords",
            "paraphrase",
            "keywords",
            "identifier",
            "keywords",
        ];
        let ranks = [Some(1), Some(3), None, Some(10), Some(11)];
        let rows = score_rows(&kinds, &ranks);
        let names: Vec<&str> = rows.iter().map(|(n, _)| *n).collect();
        assert_eq!(names, ["all", "paraphrase", "keywords", "identifier"]);
        let all = rows[0].1;
        assert_eq!((all.n, all.hit1, all.hit5), (5, 1, 2));
        assert!((all.mrr() - (1.0 + 1.0 / 3.0 + 0.1) / 5.0).abs() < 1e-12);
        let keywords = rows[2].1;
        assert_eq!((keywords.n, keywords.hit1, keywords.hit5), (3, 1, 1));
        assert!((keywords.mrr() - 1.0 / 3.0).abs() < 1e-12);
        assert_eq!((rows[1].1.hit1, rows[1].1.hit5), (0, 1));
        assert!((rows[3].1.mrr() - 0.1).abs() < 1e-12);
    }

    #[test]
    fn find_entries_give_each_session_once() {
        let v = serde_json::json!({"schema_version": 1, "query": ["x"], "results": [
            {"session": "pi:1"}, {"session": "codex:2"}, {"session": "pi:1"}, {"key": "claude:3"}]});
        assert_eq!(ranked_keys(&v).unwrap(), ["pi:1", "codex:2", "claude:3"]);
        assert!(ranked_keys(&serde_json::json!({"results": []})).is_err());
    }
}
