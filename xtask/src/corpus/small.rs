//! Many small Claude Code sessions: the shape of a history kept for years, or of an agent that
//! starts a fresh session for every task. Each session is a prompt, an answer and a follow-up
//! (about 1 KiB), in one of [`PROJECTS`] project directories, started over a year; every one
//! mentions [`EVERYWHERE`], and exactly one mentions [`RARE`].
//!
//! ```text
//! DIR/claude/-home-dev-work-p<N>/<session-id>.jsonl
//! DIR/codex/, DIR/pi/      (empty)
//! DIR/expected.json    {"shape": "small", "sessions", "seed", "everywhere", "rare", "rare_session", "absent"}
//! ```

use std::path::Path;

use anyhow::{Context, Result};
use serde_json::{json, Value};

use super::json::Uuid;
use super::rng::Rng;

/// How many project directories the sessions are spread over.
pub const PROJECTS: usize = 60;

/// A word every session holds.
pub const EVERYWHERE: &str = "deploy";

/// A word one session holds.
pub const RARE: &str = "zygomorphic-quokka";

/// A word no session holds.
pub const ABSENT: &str = "zq-never-written-zq";

/// The generator's version, in `expected.json`.
const GENERATOR: u64 = 2;

const TASKS: &[&str] = &[
    "fix the flaky login test",
    "add pagination to the orders API",
    "rename the config loader",
    "make the CI cache work again",
    "write a migration for the users table",
    "explain why the build is slow",
    "bump the dependencies",
    "add a --dry-run flag",
];

/// Writes `count` small sessions into `out/claude` and `out/expected.json`, unless `out` already
/// holds this very corpus; returns the answer key.
pub fn ensure(out: &Path, count: usize, seed: u64) -> Result<Value> {
    let key = out.join("expected.json");
    if let Ok(text) = std::fs::read_to_string(&key) {
        let v: Value = serde_json::from_str(&text)?;
        if v["shape"] == "small"
            && v["sessions"].as_u64() == Some(count as u64)
            && v["seed"].as_u64() == Some(seed)
            && v["generator"].as_u64() == Some(GENERATOR)
        {
            return Ok(v);
        }
    }
    eprintln!(
        "writing {count} small sessions (seed {seed}) to {}",
        out.display()
    );
    let root = out.join("claude");
    if root.exists() {
        std::fs::remove_dir_all(&root).with_context(|| format!("removing {}", root.display()))?;
    }
    // The other agents' roots are there and empty, as on a machine with only Claude Code.
    for other in ["codex", "pi"] {
        std::fs::create_dir_all(out.join(other))?;
    }
    let master = Rng::new(seed);
    let start_ms = super::json::days_from_civil(2025, 11, 1);
    let rare_at = count / 3;
    let mut rare_session = String::new();
    for i in 0..count {
        let mut rng = master.derive(i as u64 + 1);
        let id = uuid(&mut rng);
        let project = format!("-home-dev-work-p{}", rng.below(PROJECTS as u64));
        let cwd = format!("/home/dev/work/p{}", &project[16..]);
        let at = start_ms + (i as f64 * 365.0 * 86_400_000.0 / count as f64) as i64;
        let task = TASKS[rng.below(TASKS.len() as u64) as usize];
        let mut follow = format!("thanks, now {EVERYWHERE} it to staging");
        if i == rare_at {
            follow.push_str(&format!(" and tell me where the {RARE} went"));
            rare_session = format!("claude:{id}");
        }
        let turns = [
            ("user", format!("please {task} in module {i}")),
            (
                "assistant",
                format!(
                    "Done: the change to module {i} is in; run the tests before you {EVERYWHERE}."
                ),
            ),
            ("user", follow),
        ];
        let mut text = String::new();
        let mut parent = Value::Null;
        for (n, (role, words)) in turns.into_iter().enumerate() {
            let uuid = uuid(&mut rng);
            let message = match role {
                "user" => json!({"role": "user", "content": words}),
                _ => json!({
                    "id": format!("msg_{i}_{n}"), "type": "message", "role": "assistant",
                    "model": "claude-sonnet-4-5", "content": [{"type": "text", "text": words}],
                    "stop_reason": "end_turn",
                }),
            };
            let line = json!({
                "parentUuid": parent, "isSidechain": false, "userType": "external",
                "cwd": cwd, "sessionId": id, "version": "2.0.31", "gitBranch": "main",
                "type": role, "message": message, "uuid": uuid,
                "timestamp": iso(at + 4_000 * n as i64),
            });
            text.push_str(&line.to_string());
            text.push('\n');
            parent = uuid.into();
        }
        let dir = root.join(&project);
        std::fs::create_dir_all(&dir)?;
        let path = dir.join(format!("{id}.jsonl"));
        std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
    }
    let expected = json!({
        "shape": "small", "generator": GENERATOR, "sessions": count, "seed": seed,
        "everywhere": EVERYWHERE, "rare": RARE, "rare_session": rare_session, "absent": ABSENT,
    });
    std::fs::write(&key, serde_json::to_string_pretty(&expected)?)?;
    Ok(expected)
}

fn uuid(rng: &mut Rng) -> String {
    let mut out = Vec::new();
    Uuid::v4(rng).put(&mut out);
    String::from_utf8(out)
        .expect("ASCII")
        .trim_matches('"')
        .to_string()
}

fn iso(ms: i64) -> String {
    let mut out = Vec::new();
    super::json::iso(&mut out, ms, b':', b'.');
    String::from_utf8(out).expect("ASCII")
}
