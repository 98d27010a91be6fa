//! A private copy of the fixtures with fixed modification times, and running the binary on it.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use assert_cmd::Command;
use history_cli::HARNESSES;
use history_core::Harness;
use serde_json::Value;

/// The fixtures directory of the repository.
pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures")
}

/// A temporary home with the fixture roots copied in, one per harness of the registry.
pub struct Roots {
    pub dir: tempfile::TempDir,
    roots: Vec<(&'static Harness, PathBuf)>,
}

/// What one run printed.
#[derive(Debug)]
pub struct Run {
    pub stdout: String,
    pub stderr: String,
    pub code: i32,
}

impl Run {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.stdout))
    }

    /// `(seq, part)` of every item.
    pub fn positions(&self) -> Vec<(u64, u64)> {
        self.json()["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| (i["seq"].as_u64().unwrap(), i["part"].as_u64().unwrap()))
            .collect()
    }

    /// What a terminal shows of the run: standard error's lines, each marked `stderr│ `, then
    /// standard output; snapshots keep notices in view this way.
    pub fn shown(&self) -> String {
        let mut out: String = self
            .stderr
            .lines()
            .map(|l| format!("stderr│ {l}\n"))
            .collect();
        out.push_str(&self.stdout);
        out
    }

    pub fn texts(&self) -> Vec<String> {
        self.json()["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["text"].as_str().unwrap().to_string())
            .collect()
    }
}

const BASE_SECS: u64 = 1_772_000_000;

impl Roots {
    /// Copies every harness's fixture root (`fixtures/<harness>/<its one directory>`); file `i`
    /// in path order gets modification time `BASE + i` minutes.
    pub fn new() -> Roots {
        let dir = tempfile::tempdir().unwrap();
        let mut roots = Vec::new();
        for harness in HARNESSES {
            let to = dir.path().join(harness.name);
            copy_tree(&fixture_root(harness), &to);
            roots.push((harness, to));
        }
        fs::create_dir_all(dir.path().join("home")).unwrap();
        let roots = Roots { dir, roots };
        for (i, file) in roots.files().keys().enumerate() {
            roots.set_mtime(file, i as u64 * 60);
        }
        roots
    }

    /// [`Roots::new`] with `extra`, a directory laid out as `harness`'s root, copied into that
    /// harness's root; every file's modification time is set again in path order.
    pub fn with_extra(harness: &str, extra: &Path) -> Roots {
        let roots = Roots::new();
        copy_tree(extra, roots.root(harness));
        for (i, file) in roots.files().keys().enumerate() {
            roots.set_mtime(file, i as u64 * 60);
        }
        roots
    }

    /// [`Roots::new`] with the newest real samples (`fixtures/samples/<harness>`) copied into
    /// the roots of their harnesses: old and new versions side by side. Every file then gets
    /// its modification time in path order, as in [`Roots::new`].
    pub fn with_samples() -> Roots {
        let roots = Roots::new();
        for (harness, root) in &roots.roots {
            let samples = fixtures().join("samples").join(harness.name);
            if samples.is_dir() {
                copy_tree(&samples, root);
            }
        }
        for (i, file) in roots.files().keys().enumerate() {
            roots.set_mtime(file, i as u64 * 60);
        }
        roots
    }

    /// Sets a file's modification time to `BASE + offset` seconds.
    pub fn set_mtime(&self, rel: &Path, offset: u64) {
        let file = fs::File::options()
            .write(true)
            .open(self.dir.path().join(rel))
            .unwrap();
        file.set_modified(UNIX_EPOCH + Duration::from_secs(BASE_SECS + offset))
            .unwrap();
    }

    /// Every transcript file, relative to the temporary directory, with its bytes and mtime.
    pub fn files(&self) -> BTreeMap<PathBuf, (Vec<u8>, SystemTime)> {
        let mut out = BTreeMap::new();
        for (_, root) in &self.roots {
            walk(root, &mut |p| {
                let meta = fs::symlink_metadata(p).unwrap();
                if meta.is_file() {
                    out.insert(
                        p.strip_prefix(self.dir.path()).unwrap().to_path_buf(),
                        (fs::read(p).unwrap(), meta.modified().unwrap()),
                    );
                }
            });
        }
        out
    }

    /// A command with a clean environment pointing at these roots, without the search index
    /// (whose tests turn it on).
    pub fn cmd(&self) -> Command {
        let mut cmd = Command::cargo_bin("notesoup-history").unwrap();
        cmd.env_clear()
            .env("HOME", self.dir.path().join("home"))
            .env("XDG_CACHE_HOME", self.dir.path().join("cache"))
            .env("NOTESOUP_HISTORY_INDEX", "off");
        for (harness, root) in &self.roots {
            cmd.env(harness.root_env, root);
        }
        cmd
    }

    /// Adds a Claude session whose one message is `chars` characters long; returns its id and text.
    pub fn big_session(&self, chars: usize) -> (String, String) {
        let text: String = (0..chars)
            .map(|i| match i {
                _ if i % 100 == 99 => '\n',
                _ if i % 37 == 0 => 'é',
                _ if i % 53 == 0 => '✓',
                _ => (b'a' + (i % 26) as u8) as char,
            })
            .collect();
        let id = "big-message".to_string();
        let line = serde_json::json!({
            "parentUuid": null, "isSidechain": false, "type": "user", "uuid": "u1",
            "sessionId": id, "cwd": "/w/big", "timestamp": "2026-03-02T10:00:00.000Z",
            "message": {"role": "user", "content": text},
        });
        let dir = self.root("claude").join("-w-big");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(format!("{id}.jsonl")), format!("{line}\n")).unwrap();
        (id, text)
    }

    /// The copy of a harness's root.
    pub fn root(&self, harness: &str) -> &Path {
        let (_, root) = self.roots.iter().find(|(h, _)| h.name == harness).unwrap();
        root
    }

    /// Every harness with its root.
    pub fn roots(&self) -> &[(&'static Harness, PathBuf)] {
        &self.roots
    }

    /// Runs the binary and checks that no transcript changed.
    pub fn run(&self, args: &[&str]) -> Run {
        self.run_with(args, &[])
    }

    /// The qualified ids of every session of `harness` that `list` shows, sorted.
    pub fn session_ids(&self, harness: &str) -> Vec<String> {
        let selector = format!("{harness}:*");
        let args = ["list", "--session", &selector, "--json", "--limit", "500"];
        let run = self.run_only(harness, &[&args[..], &["--budget", "100000000"]].concat());
        let mut ids: Vec<String> = (run.json()["items"].as_array().unwrap().iter())
            .map(|i| i["session"].as_str().unwrap().to_string())
            .collect();
        ids.sort();
        ids
    }

    /// Runs with the roots of every harness but `harness` pointed at an empty directory, so
    /// that the other harnesses' fixtures do not change the results.
    pub fn run_only(&self, harness: &str, args: &[&str]) -> Run {
        let empty = self.dir.path().join("empty");
        fs::create_dir_all(&empty).unwrap();
        let mut all = Vec::new();
        for other in HARNESSES.iter().filter(|h| h.name != harness) {
            all.push(format!("--{}", other.root_flag));
            all.push(empty.display().to_string());
        }
        all.extend(args.iter().map(|a| a.to_string()));
        let all: Vec<&str> = all.iter().map(String::as_str).collect();
        self.run(&all)
    }

    /// Runs with extra environment variables.
    pub fn run_with(&self, args: &[&str], env: &[(&str, &str)]) -> Run {
        self.run_cmd(args, &mut |cmd| {
            for (k, v) in env {
                cmd.env(k, v);
            }
        })
    }

    /// Runs with the search index on (as a user has it), and checks that no transcript changed.
    pub fn run_indexed(&self, args: &[&str]) -> Run {
        self.run_cmd(args, &mut |cmd| {
            cmd.env_remove("NOTESOUP_HISTORY_INDEX")
                .timeout(Duration::from_secs(30));
        })
    }

    /// Runs with the search index consulted but never updated (`NOTESOUP_HISTORY_INDEX=read`):
    /// what a search answers from an index that lags the transcripts.
    pub fn run_reading_index(&self, args: &[&str]) -> Run {
        self.run_cmd(args, &mut |cmd| {
            cmd.env("NOTESOUP_HISTORY_INDEX", "read")
                .timeout(Duration::from_secs(30));
        })
    }

    /// The cache root the commands are given (`XDG_CACHE_HOME`).
    pub fn cache_home(&self) -> PathBuf {
        self.dir.path().join("cache")
    }

    /// Where the search index's database is under that cache root.
    pub fn index_db(&self) -> PathBuf {
        self.cache_home()
            .join("notesoup")
            .join("history-search")
            .join("v1.sqlite")
    }

    /// Whether an `index --background` started by a search over these roots is still running:
    /// a process with that argument whose environment names this cache root (Linux only). Or
    /// one of this binary whose arguments are not in place yet: a search exits once the update
    /// it starts is past `exec`, and the kernel sets up the new program's arguments and
    /// environment a moment later (empty until then), when it may be this one's.
    pub fn background_running(&self) -> bool {
        let needle = format!("XDG_CACHE_HOME={}", self.cache_home().display());
        let binary = fs::canonicalize(env!("CARGO_BIN_EXE_notesoup-history")).ok();
        let Ok(procs) = fs::read_dir("/proc") else {
            return false;
        };
        procs.flatten().any(|p| {
            let p = p.path();
            let args = fs::read(p.join("cmdline")).unwrap_or_default();
            if args.is_empty() {
                return fs::read_link(p.join("exe")).ok() == binary;
            }
            args.split(|b| *b == 0).any(|a| a == b"--background")
                && fs::read(p.join("environ"))
                    .unwrap_or_default()
                    .split(|b| *b == 0)
                    .any(|v| v == needle.as_bytes())
        })
    }

    /// Whether an update holds the index's lock, as `/proc/locks` tells (trying the lock
    /// would make an update starting meanwhile give way).
    fn update_locked(&self) -> bool {
        use std::os::unix::fs::MetadataExt;
        let lock = self.index_db().with_file_name("index.lock");
        let Ok(meta) = fs::metadata(lock) else {
            return false;
        };
        let inode = format!(":{}", meta.ino());
        let locks = fs::read_to_string("/proc/locks").unwrap_or_default();
        locks.lines().any(|l| {
            let fields: Vec<&str> = l.split_whitespace().collect();
            fields.get(1) == Some(&"FLOCK") && fields.get(5).is_some_and(|f| f.ends_with(&inode))
        })
    }

    /// Waits until no background update over these roots runs ([`Roots::background_running`])
    /// and none holds the index's lock; panics after 20 s.
    pub fn wait_background(&self) {
        let start = std::time::Instant::now();
        while self.background_running() || self.update_locked() {
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "a background index update is still running after 20 s"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    fn run_cmd(&self, args: &[&str], setup: &mut dyn FnMut(&mut Command)) -> Run {
        let before = self.files();
        let mut cmd = self.cmd();
        setup(&mut cmd);
        let out = cmd.args(args).output().unwrap();
        let after = self.files();
        assert!(
            before == after,
            "a transcript changed (bytes or mtime) during {args:?}"
        );
        let root = self.dir.path().display().to_string();
        let clean = |b: &[u8]| String::from_utf8_lossy(b).replace(&root, "[ROOT]");
        Run {
            stdout: clean(&out.stdout),
            stderr: clean(&out.stderr),
            code: out.status.code().unwrap_or(-1),
        }
    }
}

/// `list --session SESSION` with every role (so that nothing is folded), all events, as JSON.
pub fn every_role<'a>(session: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut v = vec![
        "list",
        "--session",
        session,
        "--role",
        "user",
        "--role",
        "assistant",
        "--role",
        "tool",
        "--role",
        "context",
        "--limit",
        "1000",
        "--json",
    ];
    v.extend_from_slice(extra);
    v
}

/// A harness's fixture root: the one directory in `fixtures/<harness>`.
pub fn fixture_root(harness: &Harness) -> PathBuf {
    let dir = fixtures().join(harness.name);
    let mut found = fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir());
    let root = found
        .next()
        .unwrap_or_else(|| panic!("no root in {}", dir.display()));
    assert!(found.next().is_none(), "two roots in {}", dir.display());
    root
}

pub fn copy_tree(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            fs::copy(entry.path(), &target).unwrap();
        }
    }
}

fn walk(dir: &Path, f: &mut dyn FnMut(&Path)) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    paths.sort();
    for p in paths {
        if fs::symlink_metadata(&p).unwrap().is_dir() {
            walk(&p, f);
        } else {
            f(&p);
        }
    }
}
