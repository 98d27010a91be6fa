//! What the drivers of `record` share: the context of a run (where the agent is installed, its
//! home, the model server), the markers and their expectations, and the recording they hand back.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use anyhow::{bail, Context, Result};
use serde_json::{json, Value};

use super::server::Server;

/// What every agent's driver gets: where it is installed, its home and working directory, the
/// model server and the closed port its proxies point at.
pub struct Ctx<'a> {
    pub agent: &'static str,
    pub version: String,
    pub install: PathBuf,
    pub home: PathBuf,
    pub work: PathBuf,
    pub port: u16,
    pub closed: u16,
    pub server: &'a Server,
}

impl Ctx<'_> {
    /// A command with a clean environment: its own HOME, proxies that refuse, no telemetry.
    pub fn command(&self, program: &Path) -> Command {
        let mut cmd = Command::new(program);
        let proxy = format!("http://127.0.0.1:{}", self.closed);
        cmd.env_clear()
            .current_dir(&self.work)
            .env("HOME", &self.home)
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("LANG", "C.UTF-8")
            .env("TERM", "dumb")
            .env("TZ", "UTC")
            .env("USER", "recorder")
            .env("SHELL", "/bin/sh")
            .env("XDG_CONFIG_HOME", self.home.join(".config"))
            .env("XDG_DATA_HOME", self.home.join(".local/share"))
            .env("XDG_CACHE_HOME", self.home.join(".cache"))
            .env("XDG_STATE_HOME", self.home.join(".local/state"))
            .env("HTTPS_PROXY", &proxy)
            .env("HTTP_PROXY", &proxy)
            .env("ALL_PROXY", &proxy)
            .env("https_proxy", &proxy)
            .env("http_proxy", &proxy)
            .env("all_proxy", &proxy)
            .env("NO_PROXY", "127.0.0.1,localhost")
            .env("no_proxy", "127.0.0.1,localhost")
            .stdin(Stdio::null());
        cmd
    }

    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Run `cmd`, fail with its output unless it succeeds; its stdout.
    pub fn run(&self, what: &str, cmd: &mut Command) -> Result<String> {
        eprintln!("record: {} {what}", self.agent);
        let output: Output = cmd.output().with_context(|| format!("running {what}"))?;
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        if !output.status.success() {
            bail!(
                "{what}: {}\nstdout: {stdout}\nstderr: {}",
                output.status,
                String::from_utf8_lossy(&output.stderr)
            );
        }
        Ok(stdout)
    }
}

/// A marker's expectation: where it must be found and as what.
#[derive(Clone, Debug)]
pub struct Expect {
    pub marker: String,
    /// The sessions (by label) that show it, each exactly `count` times.
    pub sessions: Vec<String>,
    pub role: &'static str,
    pub count: u32,
    /// `active`: on the session's selected branch; `inactive`: only with `--all-branches`.
    pub branch: &'static str,
    pub what: String,
}

/// The markers of one recording, numbered in the order they are made.
pub struct Markers {
    prefix: String,
    next: u32,
    pub expected: Vec<Expect>,
}

impl Markers {
    pub fn new(prefix: &str) -> Markers {
        Markers {
            prefix: prefix.to_owned(),
            next: 1,
            expected: Vec::new(),
        }
    }

    /// A new marker stem (`qzc07`), not yet expected anywhere.
    pub fn stem(&mut self) -> String {
        let stem = format!("{}{:02}", self.prefix, self.next);
        self.next += 1;
        stem
    }

    /// A new marker shown once as `role` in `session`.
    pub fn mark(&mut self, session: &str, role: &'static str, what: &str) -> String {
        let word: String = what
            .split_whitespace()
            .next()
            .unwrap()
            .chars()
            .filter(char::is_ascii_alphanumeric)
            .collect();
        let marker = format!("{}{word}", self.stem());
        self.expect(&marker, &[session], role, what);
        marker
    }

    /// A new stem for a shell call in `session` that echoes `<stem>in` and prints `<stem>out`:
    /// both expected there as tool events (`what`: `shell`, `parallel shell`).
    pub fn shell(&mut self, session: &str, what: &str) -> String {
        let stem = self.stem();
        let call = format!("{what} call input");
        self.expect(&format!("{stem}in"), &[session], "tool", &call);
        self.expect(
            &format!("{stem}out"),
            &[session],
            "tool",
            &format!("{what} output"),
        );
        stem
    }

    pub fn expect(&mut self, marker: &str, sessions: &[&str], role: &'static str, what: &str) {
        self.expected.push(Expect {
            marker: marker.to_owned(),
            sessions: sessions.iter().map(|s| s.to_string()).collect(),
            role,
            count: u32::from(!sessions.is_empty()),
            branch: "active",
            what: what.to_owned(),
        });
    }

    /// Every marker expected in `from` is expected, the same way, in `to` as well (a fork or a
    /// clone that copies its parent's history).
    pub fn inherit(&mut self, from: &str, to: &str) {
        for e in &mut self.expected {
            if e.sessions.iter().any(|s| s == from) && !e.sessions.iter().any(|s| s == to) {
                e.sessions.push(to.to_owned());
            }
        }
    }

    pub fn get_mut(&mut self, marker: &str) -> &mut Expect {
        self.expected
            .iter_mut()
            .find(|e| e.marker == marker)
            .expect("a marker made here")
    }
}

/// What a driver hands back: the tree to copy, the sessions by label, the expectations.
pub struct Recording {
    /// (directory to copy, its path in the recording: `projects`, `sessions`, or
    /// `home/session-state` for an agent whose root is its home)
    pub tree: (PathBuf, &'static str),
    pub agent: &'static str,
    pub version: String,
    pub sessions: BTreeMap<String, String>,
    pub markers: Markers,
    pub notes: Vec<String>,
}

impl Recording {
    pub fn write(&self, target: &Path) -> Result<()> {
        if target.exists() {
            std::fs::remove_dir_all(target)?;
        }
        let (tree, name) = &self.tree;
        copy_tree(tree, &target.join(name))?;
        // The root the CLI is pointed at: the tree itself, or for a tree copied as
        // `home/session-state`, the home that holds it.
        let root = name.split('/').next().unwrap_or(name);
        let markers: Vec<Value> = self
            .markers
            .expected
            .iter()
            .map(|e| {
                json!({"marker": e.marker, "sessions": e.sessions, "role": e.role,
                       "count": e.count, "branch": e.branch, "what": e.what})
            })
            .collect();
        let expected = json!({
            "agent": self.agent,
            "version": self.version,
            "root": root,
            "sessions": self.sessions,
            "notes": self.notes,
            "markers": markers,
        });
        let mut text = serde_json::to_string_pretty(&expected)?;
        text.push('\n');
        std::fs::write(target.join("expected.json"), text)?;
        Ok(())
    }
}

fn copy_tree(from: &Path, to: &Path) -> Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from).with_context(|| format!("reading {}", from.display()))? {
        let entry = entry?;
        let kind = entry.file_type()?;
        let dest = to.join(entry.file_name());
        if kind.is_dir() {
            copy_tree(&entry.path(), &dest)?;
        } else if kind.is_file() {
            std::fs::copy(entry.path(), &dest)?;
        }
    }
    Ok(())
}
