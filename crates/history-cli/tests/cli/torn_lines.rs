//! Lines torn by a writer: an agent appends each line in two `write` calls (a half line, a
//! pause, the rest) while reads, searches and the overview run in a loop. No run fails, every
//! event shown is the event a complete file has at that position (never one of a half line),
//! and the overview cache never keeps an entry of a state that ended in a half line.

use std::ffi::OsString;
use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use history_cli::{run, HARNESSES};
use serde_json::Value;

/// A temporary world: the roots and a cache home.
struct World {
    tmp: tempfile::TempDir,
}

impl World {
    fn new() -> World {
        let world = World {
            tmp: tempfile::tempdir().unwrap(),
        };
        // A root that is named must exist, even where it holds nothing.
        for root in ["claude", "codex", "pi"] {
            fs::create_dir_all(world.path(root)).unwrap();
        }
        world
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.tmp.path().join(rel)
    }

    /// Runs the command over the world's roots, with the overview cache in the world.
    fn run(&self, args: &[&str]) -> (u8, Value, String) {
        let home: OsString = self.path("home").into();
        let cache: OsString = self.path("cache").into();
        let roots = [
            ("NOTESOUP_HISTORY_PI_ROOT", self.path("pi")),
            ("NOTESOUP_HISTORY_CODEX_ROOT", self.path("codex")),
            ("NOTESOUP_HISTORY_CLAUDE_ROOT", self.path("claude")),
        ];
        let env = |k: &str| match k {
            "HOME" => Some(home.clone()),
            "XDG_CACHE_HOME" => Some(cache.clone()),
            "NOTESOUP_HISTORY_INDEX" => Some("off".into()),
            _ => roots
                .iter()
                .find(|(name, _)| *name == k)
                .map(|(_, p)| p.clone().into_os_string()),
        };
        let mut argv = vec!["notesoup-history"];
        argv.extend_from_slice(args);
        let out = run(&HARNESSES, argv, &env);
        let json = serde_json::from_str(&out.stdout).unwrap_or(Value::Null);
        (out.code, json, out.stderr)
    }

    /// The cache entries' witnesses: (path, size) of every source file as an entry saw it.
    fn cached_sizes(&self) -> Vec<(PathBuf, u64)> {
        let dir = self.path("cache").join("notesoup").join("history");
        let mut out = Vec::new();
        for entry in fs::read_dir(dir).into_iter().flatten().flatten() {
            let Ok(bytes) = fs::read(entry.path()) else {
                continue;
            };
            let Ok(entry) = serde_json::from_slice::<Value>(&bytes) else {
                continue;
            };
            for w in entry["witnesses"].as_array().into_iter().flatten() {
                let path = PathBuf::from(w["path"].as_str().unwrap_or_default());
                out.push((path, w["fingerprint"]["size"].as_u64().unwrap_or(0)));
            }
        }
        out
    }
}

/// Appends `lines` to `path`, each in two writes with a pause inside and after it.
fn append_torn(path: &Path, lines: &[String], pause: Duration, done: &AtomicBool) {
    let mut file = OpenOptions::new().append(true).open(path).unwrap();
    for line in lines {
        let bytes = format!("{line}\n").into_bytes();
        let half = bytes.len() / 2;
        file.write_all(&bytes[..half]).unwrap();
        thread::sleep(pause);
        file.write_all(&bytes[half..]).unwrap();
        thread::sleep(pause);
    }
    done.store(true, Ordering::SeqCst);
}

/// Every item of a JSON page by position: (session, seq, part) → the item.
fn items(page: &Value) -> Vec<((String, u64, u64), Value)> {
    page["items"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|item| {
            let at = (
                item["session"].as_str().unwrap_or_default().to_string(),
                item["seq"].as_u64().unwrap_or(0),
                item["part"].as_u64().unwrap_or(0),
            );
            (at, item.clone())
        })
        .collect()
}

/// The fields of an item that the file decides (the path and the recipes may differ by page).
fn event_of(item: &Value) -> Value {
    let mut event = serde_json::Map::new();
    for key in ["role", "kind", "timestamp", "text"] {
        event.insert(key.to_string(), item[key].clone());
    }
    Value::Object(event)
}

/// Runs `requests` in a loop while `writer` appends, then holds every item seen to the final
/// file: each must equal the item at its position when the file is complete. Entries the cache
/// kept must each describe a file that ended at a line's end. Returns how many runs were made.
fn race(world: &World, requests: &[Vec<&str>], writer: impl FnOnce(&AtomicBool) + Send) -> usize {
    let done = Arc::new(AtomicBool::new(false));
    let mut seen: Vec<((String, u64, u64), Value, String)> = Vec::new();
    let mut cached: Vec<(PathBuf, u64)> = Vec::new();
    let mut runs = 0;
    thread::scope(|scope| {
        let flag = Arc::clone(&done);
        scope.spawn(move || writer(&flag));
        while !done.load(Ordering::SeqCst) {
            for request in requests {
                let (code, page, stderr) = world.run(request);
                assert!(
                    code == 0 || code == 1,
                    "{request:?} failed while the file was written (exit {code}): {stderr}"
                );
                for (at, item) in items(&page) {
                    seen.push((at, event_of(&item), request.join(" ")));
                }
                runs += 1;
            }
            cached.extend(world.cached_sizes());
        }
    });
    let mut complete = std::collections::HashMap::new();
    for request in requests {
        let (code, page, stderr) = world.run(request);
        assert!(
            code == 0 || code == 1,
            "{request:?} after the writes: {stderr}"
        );
        for (at, item) in items(&page) {
            complete.insert(at, event_of(&item));
        }
    }
    for (at, event, request) in &seen {
        if let Some(full) = complete.get(at) {
            assert_eq!(
                event, full,
                "{request}: {at:?} showed an event the complete file does not have there"
            );
        }
    }
    for (path, size) in cached {
        let bytes = fs::read(&path).unwrap();
        let cut = usize::try_from(size).unwrap();
        assert!(
            cut == 0 || bytes.get(cut - 1) == Some(&b'\n'),
            "the cache kept an entry of {} cut at byte {size}, inside a line",
            path.display()
        );
    }
    runs
}

/// A pi message line.
fn pi_line(n: usize, role: &str) -> String {
    let parent = if n == 1 {
        "null".to_string()
    } else {
        format!("\"m{}\"", n - 1)
    };
    let content = format!("{role} turn {n} with the deploy word and some padding to tear");
    format!(
        r#"{{"type":"message","id":"m{n}","parentId":{parent},"timestamp":"2026-03-01T10:00:{:02}.000Z","message":{{"role":"{role}","content":[{{"type":"text","text":"{content}"}}]}}}}"#,
        n % 60
    )
}

#[test]
fn lines_torn_by_a_writer_are_never_shown_nor_cached() {
    let world = World::new();
    let dir = world.path("pi").join("--work-torn--");
    fs::create_dir_all(&dir).unwrap();
    let file = dir.join("2026-03-01T10-00-00-000Z_torn.jsonl");
    let header = r#"{"type":"session","version":3,"id":"torn","timestamp":"2026-03-01T10:00:00.000Z","cwd":"/work/torn"}"#;
    fs::write(&file, format!("{header}\n{}\n", pi_line(1, "user"))).unwrap();
    let lines: Vec<String> = (2..=60)
        .map(|n| pi_line(n, if n % 2 == 0 { "assistant" } else { "user" }))
        .collect();
    let all = ["--limit", "1000", "--budget", "10000000", "--json"];
    let browse = [&["list", "--session", "pi:torn"][..], &all].concat();
    let search = [&["list", "--session", "*", "--query", "deploy"][..], &all].concat();
    let overview = [&["list", "--session", "*"][..], &all].concat();
    let read = vec!["read", "--session", "pi:torn", "--seq", "2", "--json"];
    let runs = race(&world, &[browse, search, overview, read], |done| {
        append_torn(&file, &lines, Duration::from_millis(4), done)
    });
    assert!(runs > 20, "only {runs} runs raced the writer");
    let (_, page, _) = world.run(&["list", "--session", "pi:torn", "--limit", "1000", "--json"]);
    assert_eq!(items(&page).len(), 60, "every line is shown once complete");
}

#[test]
fn a_fork_whose_parent_is_being_written_never_shows_a_half_line() {
    let world = World::new();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/codex/sessions");
    let parent_rel =
        "2026/07/20/rollout-2026-07-20T12-00-00-019f2a10-0000-7000-8000-00000000000a.jsonl";
    let fork_rel =
        "2026/07/21/rollout-2026-07-21T09-00-00-019f2a10-0000-7000-8000-00000000000b.jsonl";
    let root = world.path("codex");
    for rel in [parent_rel, fork_rel] {
        let to = root.join(rel);
        fs::create_dir_all(to.parent().unwrap()).unwrap();
        fs::copy(fixtures.join(rel), &to).unwrap();
    }
    // The parent goes on after the fork took its first eight records: its next turns arrive
    // torn, and the fork, which reads the parent, must not notice.
    let parent = root.join(parent_rel);
    let turns: Vec<String> = (12..40)
        .map(|n| {
            format!(
                r#"{{"timestamp":"2026-07-20T10:01:{:02}.000Z","ordinal":{n},"type":"event_msg","payload":{{"type":"item_completed","thread_id":"019f2a10-0000-7000-8000-00000000000a","turn_id":"t{n}","item":{{"type":"AgentMessage","id":"a{n}","content":[{{"type":"Text","text":"parent turn {n} about the doc"}}]}},"completed_at_ms":1784541600000}}}}"#,
                n % 60
            )
        })
        .collect();
    let all = ["--limit", "1000", "--budget", "10000000", "--json"];
    let fork = [
        &[
            "list",
            "--session",
            "codex:019f2a10-0000-7000-8000-00000000000b",
        ][..],
        &all,
    ]
    .concat();
    let search = [
        &["list", "--session", "codex:*", "--query", "doc"][..],
        &all,
    ]
    .concat();
    let overview = [&["list", "--session", "codex:*"][..], &all].concat();
    let runs = race(&world, &[fork, search, overview], |done| {
        append_torn(&parent, &turns, Duration::from_millis(10), done)
    });
    assert!(runs > 20, "only {runs} runs raced the writer");
}
