//! Codex in exec mode (`codex exec`, `exec resume`, `exec fork`): turns, tools (shell,
//! apply_patch, a failing command, parallel calls), a resume, an automatic compaction and a fork.
//!
//! Offline: `$CODEX_HOME/config.toml` names a model provider of its own whose `base_url` is the
//! model server (Responses API, no retries, no websockets), with its key in an environment
//! variable; update checks, analytics, feedback and OpenTelemetry are off, and the proxies
//! refuse.

use std::collections::BTreeMap;
use std::path::PathBuf;

use anyhow::{Context, Result};
use serde_json::{json, Value};

use super::kit::{Ctx, Markers, Recording};
use super::server::{Reply, Script};

fn binary(ctx: &Ctx) -> Result<PathBuf> {
    let scope = ctx.install.join("node_modules/@openai");
    for entry in std::fs::read_dir(&scope)? {
        let vendor = entry?.path().join("vendor");
        let Ok(triples) = std::fs::read_dir(&vendor) else {
            continue;
        };
        for triple in triples {
            let bin = triple?.path().join("bin/codex");
            if bin.is_file() {
                return Ok(bin);
            }
        }
    }
    Ok(ctx.install.join("node_modules/.bin/codex"))
}

fn config(ctx: &Ctx) -> String {
    format!(
        r#"model = "gpt-5.5"
model_provider = "scripted"
approval_policy = "never"
sandbox_mode = "danger-full-access"
check_for_update_on_startup = false
model_auto_compact_token_limit = 60000
model_context_window = 200000

[model_providers.scripted]
name = "scripted"
base_url = "{base}/v1"
wire_api = "responses"
env_key = "SCRIPTED_API_KEY"
request_max_retries = 0
stream_max_retries = 0
supports_websockets = false

[analytics]
enabled = false

[feedback]
enabled = false

[otel]
exporter = "none"
log_user_prompt = false
"#,
        base = ctx.base_url()
    )
}

/// The thread id from `codex exec --json` output (its `thread.started` event).
fn thread_id(out: &str) -> Result<String> {
    for line in out.lines() {
        if let Ok(v) = serde_json::from_str::<Value>(line) {
            if v["type"] == "thread.started" {
                if let Some(id) = v["thread_id"].as_str() {
                    return Ok(id.to_owned());
                }
            }
        }
    }
    anyhow::bail!("no thread.started event in:\n{out}")
}

pub fn record(ctx: &Ctx) -> Result<Recording> {
    let bin = binary(ctx)?;
    let codex_home = ctx.home.join(".codex");
    std::fs::create_dir_all(&codex_home)?;
    std::fs::write(codex_home.join("config.toml"), config(ctx))?;
    let mut m = Markers::new("qzx");
    let mut s = Script {
        summary_triggers: vec!["helping the next llm".into()],
        ..Script::default()
    };

    // Turn 1: a prompt, a shell call, its output, a reply.
    let u1 = m.mark("main", "user", "user prompt of turn 1");
    let sh = m.shell("main", "shell");
    let r1 = m.mark("main", "assistant", "reply of turn 1");
    s.on(
        &u1,
        Reply::call(
            "exec_command",
            json!({"cmd": format!("echo {sh}in | sed s/in/out/")}),
        ),
    );
    s.on(
        &format!("{sh}out"),
        Reply::text(&format!("{r1} the shell ran.")),
    );

    // Turn 2 (a resume): reasoning, text and parallel calls (apply_patch adds a file, the shell
    // writes another), then apply_patch edits, then the shell reads.
    let u2 = m.mark("main", "user", "user prompt of turn 2, resumed");
    let think = m.mark("main", "assistant", "reasoning before parallel calls");
    let t2 = m.mark("main", "assistant", "reply text beside the parallel calls");
    let write = m.mark("main", "tool", "apply_patch adding a file");
    let par = m.shell("main", "parallel shell");
    let edit = m.mark("main", "tool", "apply_patch editing the file");
    let read = m.stem();
    m.expect(
        &format!("{read}read"),
        &["main"],
        "tool",
        "shell output of a file the shell wrote",
    );
    let r2 = m.mark("main", "assistant", "reply of turn 2");
    s.on(
        &u2,
        Reply::call(
            "apply_patch",
            json!(format!(
                "*** Begin Patch\n*** Add File: notes.txt\n+first line\n+{write}\n*** End Patch\n"
            )),
        )
        .and_call(
            "exec_command",
            json!({"cmd": format!("printf '{read}%s\\n' read > seen.txt; echo {par}in | sed s/in/out/")}),
        )
        .with_text(&t2)
        .with_thinking(&think),
    );
    s.on(
        &format!("{par}out"),
        Reply::call(
            "apply_patch",
            json!(format!(
                "*** Begin Patch\n*** Update File: notes.txt\n@@\n-first line\n+{edit}\n*** End Patch\n"
            )),
        ),
    );
    s.on(
        "notes.txt",
        Reply::call("exec_command", json!({"cmd": "cat seen.txt"})),
    );
    s.on(
        &format!("{read}read"),
        Reply::text(&format!("{r2} files written, edited and read.")),
    );

    // Turn 3: a failing command.
    let u3 = m.mark("main", "user", "user prompt of turn 3");
    let fail = m.stem();
    m.expect(
        &format!("{fail}in"),
        &["main"],
        "tool",
        "failing call input",
    );
    m.expect(
        &format!("{fail}err"),
        &["main"],
        "tool",
        "failing call error",
    );
    let r3 = m.mark("main", "assistant", "reply of turn 3");
    s.on(
        &u3,
        Reply::call(
            "exec_command",
            json!({"cmd": format!("echo {fail}in | sed s/in/err/ >&2; exit 3")}),
        ),
    );
    s.on(
        &format!("{fail}err"),
        Reply::text(&format!("{r3} the command failed.")),
    );

    // Turn 4: a call whose reply claims a context over the compaction limit: Codex compacts
    // mid-turn, then goes on from the summary.
    let u4 = m.mark("main", "user", "user prompt of turn 4");
    let big = m.stem();
    m.expect(
        &format!("{big}in"),
        &["main"],
        "tool",
        "shell call before the compaction",
    );
    m.expect(
        &format!("{big}out"),
        &["main"],
        "tool",
        "shell output before the compaction",
    );
    let summary = m.mark("main", "context", "compaction summary");
    let r4 = m.mark("main", "assistant", "reply after the compaction");
    s.on(
        &u4,
        Reply::call(
            "exec_command",
            json!({"cmd": format!("echo {big}in | sed s/in/out/")}),
        )
        .with_input_tokens(150_000),
    );
    s.summary = Some(Reply::text(&format!("{summary} the session so far.")));
    s.on(&summary, Reply::text(&format!("{r4} after compacting.")));

    // A fork of the session with a turn of its own, then one more turn of the session.
    let u5 = m.mark("fork", "user", "user prompt of the fork");
    let r5 = m.mark("fork", "assistant", "reply in the fork");
    s.on(&u5, Reply::text(&format!("{r5} in the fork.")));
    let u6 = m.mark("main", "user", "user prompt after the fork");
    let r6 = m.mark("main", "assistant", "reply after the fork");
    s.on(&u6, Reply::text(&format!("{r6} after the fork.")));
    ctx.server.set_script(s);

    let codex = |args: &[&str]| {
        let mut cmd = ctx.command(&bin);
        cmd.env("CODEX_HOME", &codex_home)
            .env("SCRIPTED_API_KEY", "sk-recorder-offline")
            .env("RUST_LOG", "warn")
            .arg("exec")
            .args([
                "--json",
                "--skip-git-repo-check",
                "--dangerously-bypass-approvals-and-sandbox",
            ])
            .args(args);
        cmd
    };
    let out = ctx.run("turn 1", &mut codex(&[&format!("{u1} run a command")]))?;
    let main = thread_id(&out).context("turn 1")?;
    let turn = |what: &str, prompt: String| ctx.run(what, &mut codex(&["resume", &main, &prompt]));
    turn("turn 2 (resume)", format!("{u2} write, edit, read"))?;
    turn("turn 3", format!("{u3} fail once"))?;
    turn("turn 4", format!("{u4} a long one"))?;
    let out = ctx.run(
        "fork",
        &mut codex(&["fork", &main, &format!("{u5} try another way")]),
    )?;
    let fork = thread_id(&out).context("the fork")?;
    turn("turn 5", format!("{u6} go on"))?;
    m.inherit("main", "fork");
    for marker in [&u6, &r6] {
        m.get_mut(marker).sessions = vec!["main".into()];
    }

    let mut sessions = BTreeMap::from([("main".to_owned(), main), ("fork".to_owned(), fork)]);

    // A sub-agent (multi_agent_v2) spawned by a session of its own that waits for it.
    let mut notes = Vec::new();
    let before = m.expected.len();
    match sub_agent(ctx, &mut m, &codex) {
        Ok((parent, child)) => {
            sessions.insert("parent".to_owned(), parent);
            sessions.insert("sub".to_owned(), child);
        }
        Err(err) => {
            m.expected.truncate(before);
            notes.push(format!("no sub-agent recorded: {err:#}"));
            eprintln!("record: codex sub-agent: {err:#}");
        }
    }

    Ok(Recording {
        tree: (codex_home.join("sessions"), "sessions"),
        agent: "codex",
        version: ctx.version.clone(),
        sessions,
        markers: m,
        notes,
    })
}

/// A session that spawns a sub-agent and waits for it: the two thread ids.
fn sub_agent(
    ctx: &Ctx,
    m: &mut Markers,
    codex: &dyn Fn(&[&str]) -> std::process::Command,
) -> Result<(String, String)> {
    let mut s = Script::default();
    let u = m.mark("parent", "user", "user prompt that spawns a sub-agent");
    // The sub-agent gets its task as `encrypted_content` (ciphertext from a real model), which
    // is never shown: in its own session the task is not found.
    let task = m.mark(
        "parent",
        "tool",
        "task for the sub-agent (spawn_agent input; the sub-agent gets it encrypted)",
    );
    let sub = m.mark("sub", "assistant", "subagent reply");
    m.expect(
        &sub,
        &["parent"],
        "context",
        "subagent reply (its final answer, a message to the parent)",
    );
    let r = m.mark("parent", "assistant", "reply after the sub-agent");
    s.on(&task, Reply::text(&format!("{sub} the sub-agent looked.")));
    s.on(
        &u,
        Reply::call(
            "collaboration.spawn_agent",
            json!({"task_name": "helper", "message": format!("{task} look around"),
                   "fork_turns": "none"}),
        ),
    );
    s.on(&sub, Reply::text(&format!("{r} the sub-agent is done.")));
    s.on(
        "helper",
        Reply::call("collaboration.wait_agent", json!({"timeout_ms": 20000})),
    );
    ctx.server.set_script(s);
    let out = ctx.run(
        "sub-agent",
        &mut codex(&["--enable", "multi_agent_v2", &format!("{u} ask a helper")]),
    )?;
    let parent = thread_id(&out)?;
    // The sub-agent's thread: the rollout, other than the parent's, that names the parent.
    let mut child = None;
    for file in walk(&ctx.home.join(".codex/sessions"))? {
        let text = std::fs::read_to_string(&file)?;
        let Some(first) = text.lines().next() else {
            continue;
        };
        let meta: Value = serde_json::from_str(first)?;
        let id = meta["payload"]["id"].as_str().unwrap_or_default();
        if id != parent && text.contains(&parent) {
            child = Some(id.to_owned());
        }
    }
    let child = child.context("no sub-agent rollout names the parent")?;
    Ok((parent, child))
}

fn walk(dir: &std::path::Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            out.extend(walk(&path)?);
        } else {
            out.push(path);
        }
    }
    Ok(out)
}
