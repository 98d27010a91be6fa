//! GitHub Copilot CLI in prompt mode (`copilot -p`, `copilot --resume <id> -p`): turns, tools
//! (bash, create, a failing command, parallel calls), resumes, a sub-agent (`task`) and a manual
//! compaction (`-p /compact`).
//!
//! Offline, without a GitHub login: bring-your-own-key mode (`COPILOT_PROVIDER_TYPE=openai`,
//! `COPILOT_PROVIDER_BASE_URL` naming the model server's chat completions, `COPILOT_MODEL`,
//! `COPILOT_PROVIDER_API_KEY`) with `COPILOT_OFFLINE=true`, `COPILOT_AUTO_UPDATE=false`, its home
//! in `COPILOT_HOME`, and the proxies refusing.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;

use anyhow::{bail, Context, Result};
use serde_json::{json, Value};

use super::kit::{Ctx, Markers, Recording};
use super::server::{Reply, Script};

const MODEL: &str = "scripted-model";

/// The platform binary the npm loader starts (`@github/copilot-<platform>-<arch>/copilot`).
fn binary(ctx: &Ctx) -> Result<PathBuf> {
    let scope = ctx.install.join("node_modules/@github");
    for entry in std::fs::read_dir(&scope)? {
        let bin = entry?.path().join("copilot");
        if bin.is_file() {
            return Ok(bin);
        }
    }
    bail!("no Copilot CLI binary under {}", scope.display())
}

/// The session id from `--output-format json` output (its `result` line).
fn session_id(out: &str) -> Result<String> {
    for line in out.lines() {
        if let Ok(v) = serde_json::from_str::<Value>(line) {
            if let Some(id) = v["sessionId"].as_str() {
                return Ok(id.to_owned());
            }
            if let Some(id) = v["data"]["sessionId"].as_str() {
                return Ok(id.to_owned());
            }
        }
    }
    bail!("no session id in:\n{out}")
}

pub fn record(ctx: &Ctx) -> Result<Recording> {
    let bin = binary(ctx)?;
    let copilot_home = ctx.home.join(".copilot");
    std::fs::create_dir_all(&copilot_home)?;
    let command = |args: &[&str]| -> Command {
        let mut cmd = ctx.command(&bin);
        cmd.env("COPILOT_HOME", &copilot_home)
            .env("COPILOT_PROVIDER_TYPE", "openai")
            .env(
                "COPILOT_PROVIDER_BASE_URL",
                format!("{}/v1", ctx.base_url()),
            )
            .env("COPILOT_PROVIDER_API_KEY", "sk-recorder-offline")
            .env("COPILOT_MODEL", MODEL)
            .env("COPILOT_OFFLINE", "true")
            .env("COPILOT_AUTO_UPDATE", "false")
            .args(args)
            .args(["--allow-all", "--output-format", "json"]);
        cmd
    };
    let mut m = Markers::new("qzg");
    let mut s = Script {
        // The compaction request's own words (the system prompt speaks of summaries too).
        summary_triggers: vec!["the history is being compacted".into()],
        ..Script::default()
    };
    let env_file = ctx.home.join("shell-env.txt");

    // Turn 1: a prompt, a shell call (which also keeps its environment), its output, a reply.
    let u1 = m.mark("main", "user", "user prompt of turn 1");
    let sh = m.shell("main", "shell");
    let r1 = m.mark("main", "assistant", "reply of turn 1");
    s.on(
        &u1,
        Reply::call(
            "bash",
            json!({"command": format!("echo {sh}in | sed s/in/out/; env > {}", env_file.display()),
                   "description": "Echo a marker"}),
        ),
    );
    s.on(
        &format!("{sh}out"),
        Reply::text(&format!("{r1} the shell ran.")),
    );

    // Turn 2 (a resume): text beside parallel calls (create a file, a failing command), then a
    // reply.
    let u2 = m.mark("main", "user", "user prompt of turn 2, resumed");
    let t2 = m.mark("main", "assistant", "reply text beside the parallel calls");
    let created = m.mark("main", "tool", "create call with the file's text");
    let fail = m.stem();
    m.expect(
        &format!("{fail}in"),
        &["main"],
        "tool",
        "failing shell call input",
    );
    m.expect(
        &format!("{fail}out"),
        &["main"],
        "tool",
        "failing shell output (exit 3)",
    );
    let r2 = m.mark("main", "assistant", "reply after the parallel calls");
    s.on(
        &u2,
        Reply::call(
            "create",
            json!({"path": ctx.work.join("notes.md").display().to_string(),
                   "file_text": format!("{created} notes\n")}),
        )
        .and_call(
            "bash",
            json!({"command": format!("echo {fail}in | sed s/in/out/; exit 3"),
                   "description": "Fail on purpose"}),
        )
        .with_text(&format!("{t2} writing and failing.")),
    );
    s.on(
        &format!("{fail}out"),
        Reply::text(&format!("{r2} one call failed.")),
    );

    // Turn 3 (a resume): a sub-agent through the task tool; its prompt and its reply are the
    // work of the call, written inline with an agentId.
    let u3 = m.mark("main", "user", "user prompt of turn 3, a sub-agent");
    let task = m.stem();
    m.expect(
        &format!("{task}task"),
        &["main"],
        "tool",
        "the task call's prompt, also the sub-agent's prompt (tool)",
    );
    m.get_mut(&format!("{task}task")).count = 2;
    let sub = m.mark(
        "main",
        "tool",
        "the sub-agent's reply, also the task's result",
    );
    m.get_mut(&sub).count = 2;
    let r3 = m.mark("main", "assistant", "reply after the sub-agent");
    s.on(
        &u3,
        Reply::call(
            "task",
            json!({"description": "Look around", "agent_type": "explore", "name": "looker",
                   "prompt": format!("{task}task list the working directory and answer")}),
        ),
    );
    s.on(
        &format!("{task}task"),
        Reply::text(&format!("{sub} the directory holds notes.md")),
    );
    s.on(
        &format!("{sub} the directory"),
        Reply::text(&format!("{r3} the sub-agent answered.")),
    );

    // A manual compaction (`-p /compact`): its summary is context.
    let summary = m.mark("main", "context", "compaction summary");
    s.summary = Some(Reply::text(&format!(
        "<overview>{summary} the user ran a shell, wrote notes.md and asked a sub-agent.</overview>\n\
         <checkpoint_title>Recorded session</checkpoint_title>"
    )));

    // Turn 4 (a resume after the compaction).
    let u4 = m.mark("main", "user", "user prompt of turn 4, after compaction");
    let r4 = m.mark("main", "assistant", "reply of turn 4");
    s.on(&u4, Reply::text(&format!("{r4} still here.")));

    ctx.server.set_script(s);
    let out = ctx.run("prompt 1", &mut command(&["-p", &u1]))?;
    let id = session_id(&out)?;
    ctx.run(
        "resume, prompt 2",
        &mut command(&["--resume", &id, "-p", &u2]),
    )?;
    ctx.run(
        "resume, prompt 3",
        &mut command(&["--resume", &id, "-p", &u3]),
    )?;
    ctx.run(
        "resume, /compact",
        &mut command(&["--resume", &id, "-p", "/compact"]),
    )?;
    ctx.run(
        "resume, prompt 4",
        &mut command(&["--resume", &id, "-p", &u4]),
    )?;

    let mut notes = vec![
        "copilot -p with bring-your-own-key (openai chat completions) and COPILOT_OFFLINE=true; \
         each later prompt resumes the session with --resume <id> -p"
            .to_owned(),
    ];
    let env = std::fs::read_to_string(&env_file)
        .with_context(|| format!("the shell tool's environment, {}", env_file.display()))?;
    let named: Vec<&str> = env
        .lines()
        .filter(|l| l.starts_with("COPILOT") || l.contains(&id))
        .filter_map(|l| l.split_once('=').map(|(k, _)| k))
        .collect();
    notes.push(format!(
        "variables the shell tool's environment holds that name Copilot or the session: {}",
        if named.is_empty() {
            "none".to_owned()
        } else {
            named.join(", ")
        }
    ));
    let mut sessions = BTreeMap::new();
    sessions.insert("main".to_owned(), id);
    Ok(Recording {
        tree: (copilot_home.join("session-state"), "home/session-state"),
        agent: ctx.agent,
        version: ctx.version.clone(),
        sessions,
        markers: m,
        notes,
    })
}
