//! `cargo xtask record`: real transcripts written by the agents themselves.
//!
//! Each agent (Claude Code, Codex, pi, Oh My Pi, OpenCode, Gemini CLI, GitHub Copilot CLI) is
//! installed from npm at the named or the current release into a scratch directory and driven
//! non-interactively (print, exec and RPC modes) against the scripted model server of
//! [`server`] on 127.0.0.1, with a home and configuration of its own, telemetry and update checks off, and every other address refused (its proxies
//! point at a closed port). Every prompt, reply, tool input and tool output of the script
//! carries a marker; `expected.json` beside the recording says, for each marker, the session it
//! belongs to, its role (CONTRACT §4), how often it is shown and on which branch.
//!
//! The recording is copied, as the agent laid it out, into `fixtures/recorded/<agent>-<version>/`
//! (`projects/` for Claude, `sessions/` for Codex, pi and Oh My Pi, `opencode/` for OpenCode's
//! database, `home/` for Gemini CLI and Copilot, which holds `session-state/`), which the CLI
//! reads with its `--<agent>-root`.

mod claude;
mod codex;
mod copilot;
mod gemini;
mod kit;
mod omp;
mod opencode;
mod pi;
pub mod server;

use std::collections::BTreeMap;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{bail, Context, Result};
use serde_json::Value;

use kit::Ctx;
use server::Server;

/// The agents, their npm packages.
const AGENTS: [(&str, &str); 7] = [
    ("claude", "@anthropic-ai/claude-code"),
    ("codex", "@openai/codex"),
    ("pi", "@mariozechner/pi-coding-agent"),
    ("omp", "@oh-my-pi/pi-coding-agent"),
    ("opencode", "opencode-ai"),
    ("gemini", "@google/gemini-cli"),
    ("copilot", "@github/copilot"),
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
            "--omp" => drop(versions.insert("omp", value()?)),
            "--opencode" => drop(versions.insert("opencode", value()?)),
            "--gemini" => drop(versions.insert("gemini", value()?)),
            "--copilot" => drop(versions.insert("copilot", value()?)),
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
                "omp" => {
                    // Oh My Pi runs on Bun, a package of its own.
                    let bun = dir.join("bun");
                    npm_install(&bun, omp::BUN, "bun")?;
                    omp::record(&ctx, &bun)?
                }
                "opencode" => opencode::record(&ctx)?,
                "gemini" => gemini::record(&ctx)?,
                "copilot" => copilot::record(&ctx)?,
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
