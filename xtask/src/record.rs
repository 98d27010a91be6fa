//! `cargo xtask record`: real transcripts written by the agents themselves.
//!
//! Each agent (Claude Code, Codex, pi) is installed from npm at the named or the current
//! release into a scratch directory and driven non-interactively (print, exec and RPC modes)
//! against the scripted model server of [`server`] on 127.0.0.1, with a home and configuration
//! of its own, telemetry and update checks off, and every other address refused (its proxies
//! point at a closed port). Every prompt, reply, tool input and tool output of the script
//! carries a marker; `expected.json` beside the recording says, for each marker, the session it
//! belongs to, its role (CONTRACT §4), how often it is shown and on which branch.
//!
//! The recording is copied, as the agent laid it out, into `fixtures/recorded/<agent>-<version>/`
//! (`projects/` for Claude, `sessions/` for Codex and pi), which the CLI reads with
//! `--claude-root`, `--codex-root` or `--pi-root`.

mod claude;
mod codex;
mod pi;
pub mod server;

use std::collections::BTreeMap;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use anyhow::{bail, Context, Result};
use serde_json::{json, Value};

use server::Server;

/// The three agents, their npm packages.
const AGENTS: [(&str, &str); 3] = [
    ("claude", "@anthropic-ai/claude-code"),
    ("codex", "@openai/codex"),
    ("pi", "@mariozechner/pi-coding-agent"),
];

pub fn command(args: &[String]) -> Result<()> {
    let mut versions: BTreeMap<&str, String> = BTreeMap::new();
    let mut only: Option<Vec<String>> = None;
    let mut scratch = PathBuf::from(format!("/tmp/record-{}", std::process::id()));
    let mut out = workspace_root().join("fixtures/recorded");
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let mut value = || {
            it.next()
                .cloned()
                .with_context(|| format!("{flag} needs a value"))
        };
        match flag.as_str() {
            "--claude" => drop(versions.insert("claude", value()?)),
            "--codex" => drop(versions.insert("codex", value()?)),
            "--pi" => drop(versions.insert("pi", value()?)),
            "--only" => only = Some(value()?.split(',').map(str::to_owned).collect()),
            "--scratch" => scratch = PathBuf::from(value()?),
            "--out" => out = PathBuf::from(value()?),
            other => bail!("record: unknown option `{other}` (cargo xtask help)"),
        }
    }
    std::fs::create_dir_all(&scratch)?;
    let scratch = scratch.canonicalize()?;
    let server = Server::start(scratch.join("requests"))?;
    let closed = closed_port()?;
    eprintln!(
        "record: model server on 127.0.0.1:{}, proxies at the closed port {closed}, scratch {}",
        server.port,
        scratch.display()
    );
    let mut failures = Vec::new();
    for (agent, package) in AGENTS {
        if only.as_ref().is_some_and(|o| !o.iter().any(|a| a == agent)) {
            continue;
        }
        let spec = match versions.get(agent) {
            Some(v) => format!("{package}@{v}"),
            None => format!("{package}@latest"),
        };
        let dir = scratch.join(agent);
        let result = (|| -> Result<PathBuf> {
            let install = dir.join("npm");
            let version = npm_install(&install, &spec, package)?;
            let ctx = Ctx {
                agent,
                version: version.clone(),
                install,
                home: dir.join("home"),
                work: dir.join("work"),
                port: server.port,
                closed,
                server: &server,
            };
            for d in [&ctx.home, &ctx.work] {
                if d.exists() {
                    std::fs::remove_dir_all(d)?;
                }
                std::fs::create_dir_all(d)?;
            }
            let recording = match agent {
                "claude" => claude::record(&ctx)?,
                "codex" => codex::record(&ctx)?,
                _ => pi::record(&ctx)?,
            };
            let target = out.join(format!("{agent}-{version}"));
            recording.write(&target)?;
            Ok(target)
        })();
        match result {
            Ok(target) => eprintln!("record: {agent} → {}", target.display()),
            Err(err) => {
                eprintln!("record: {agent} failed: {err:#}");
                failures.push(agent);
            }
        }
    }
    if !failures.is_empty() {
        bail!(
            "not recorded: {} (the requests each sent are in {})",
            failures.join(", "),
            scratch.join("requests").display()
        );
    }
    Ok(())
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_owned()
}

/// A port of 127.0.0.1 that nothing listens on: connections to it are refused.
fn closed_port() -> Result<u16> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    Ok(listener.local_addr()?.port())
}

/// `npm install` of `spec` into `dir`; the version installed.
fn npm_install(dir: &Path, spec: &str, package: &str) -> Result<String> {
    std::fs::create_dir_all(dir)?;
    let manifest = dir.join("node_modules").join(package).join("package.json");
    let mut wanted = spec
        .rsplit_once('@')
        .map(|(_, v)| v)
        .unwrap_or("latest")
        .to_owned();
    if wanted == "latest" {
        let view = Command::new("npm")
            .args(["view", package, "version"])
            .output()
            .context("running npm view")?;
        wanted = String::from_utf8_lossy(&view.stdout).trim().to_owned();
    }
    let installed = || -> Option<String> {
        let text = std::fs::read_to_string(&manifest).ok()?;
        let v: Value = serde_json::from_str(&text).ok()?;
        v["version"].as_str().map(str::to_owned)
    };
    if installed().as_deref() != Some(wanted.as_str()) {
        eprintln!("record: npm install {spec}");
        let status = Command::new("npm")
            .args([
                "install",
                "--no-audit",
                "--no-fund",
                "--no-save",
                "--prefix",
            ])
            .arg(dir)
            .arg(spec)
            .stdout(Stdio::null())
            .status()
            .context("running npm")?;
        if !status.success() {
            bail!("npm install {spec} failed");
        }
    }
    installed().with_context(|| format!("{} missing after npm install", manifest.display()))
}

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
    /// (directory to copy, its name in the recording: `projects` or `sessions`)
    pub tree: (PathBuf, &'static str),
    pub agent: &'static str,
    pub version: String,
    pub sessions: BTreeMap<String, String>,
    pub markers: Markers,
    pub notes: Vec<String>,
}

impl Recording {
    fn write(&self, target: &Path) -> Result<()> {
        if target.exists() {
            std::fs::remove_dir_all(target)?;
        }
        let (tree, name) = &self.tree;
        copy_tree(tree, &target.join(name))?;
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
            "root": name,
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
