//! OpenCode in its non-interactive mode (`opencode run`): turns, tools (bash, write, read, a
//! failing command, parallel calls), a resume (`--session`), a sub-agent (`task`) and a fork
//! (`--session … --fork`).
//!
//! Offline: `opencode.json` adds a provider through the bundled `@ai-sdk/openai-compatible`
//! whose `baseURL` is the model server (chat completions); models are not fetched, nothing is
//! updated or shared, no default plugin is installed, and the proxies refuse. Every first turn
//! names its title (`--title`), so that no title request takes a scripted reply.
//!
//! OpenCode leaves its newest turns in `opencode.db-wal`: the database is recorded as it lies,
//! with its log, and nothing else of the data directory (its logs and snapshots).

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, Result};
use serde_json::{json, Value};

use super::kit::{Ctx, Markers, Recording};
use super::server::{Reply, Script};

const PROVIDER: &str = "scripted";
const MODEL: &str = "scripted-model";

pub fn record(ctx: &Ctx) -> Result<Recording> {
    let bin = ctx
        .install
        .join("node_modules/opencode-ai/node_modules/opencode-linux-x64/bin/opencode");
    let bin = if bin.exists() {
        bin
    } else {
        ctx.install
            .join("node_modules/opencode-linux-x64/bin/opencode")
    };
    let config_dir = ctx.home.join(".config/opencode");
    std::fs::create_dir_all(&config_dir)?;
    let config = json!({
        "$schema": "https://opencode.ai/config.json",
        "provider": {PROVIDER: {
            "npm": "@ai-sdk/openai-compatible",
            "name": "Scripted",
            "options": {"baseURL": format!("{}/v1", ctx.base_url()), "apiKey": "sk-recorder-offline"},
            "models": {MODEL: {"name": "Scripted", "tool_call": true,
                               "limit": {"context": 200000, "output": 8192}}},
        }},
        "model": format!("{PROVIDER}/{MODEL}"),
        "small_model": format!("{PROVIDER}/{MODEL}"),
        "autoupdate": false,
        "share": "disabled",
    });
    std::fs::write(
        config_dir.join("opencode.json"),
        serde_json::to_string_pretty(&config)?,
    )?;

    let mut m = Markers::new("qzo");
    let mut s = Script::default();
    let work = ctx.work.display().to_string();

    // Turn 1: a prompt, a shell call, its output, a reply.
    let u1 = m.mark("main", "user", "user prompt of turn 1");
    let sh = m.shell("main", "shell");
    let r1 = m.mark("main", "assistant", "reply of turn 1");
    s.on(
        &u1,
        Reply::call(
            "bash",
            json!({"command": format!("echo {sh}in | sed s/in/out/"), "description": "Echo"}),
        ),
    );
    s.on(
        &format!("{sh}out"),
        Reply::text(&format!("{r1} the shell ran.")),
    );

    // Turn 2 (a resume): parallel write and bash, then a read of what the shell wrote.
    let u2 = m.mark("main", "user", "user prompt of turn 2");
    let t2 = m.mark("main", "assistant", "reply text beside the parallel calls");
    let write = m.mark("main", "tool", "write content");
    let par = m.shell("main", "parallel shell");
    let read = m.stem();
    m.expect(
        &format!("{read}read"),
        &["main"],
        "tool",
        "read output (a file the shell wrote)",
    );
    let r2 = m.mark("main", "assistant", "reply of turn 2");
    s.on(
        &u2,
        Reply::call(
            "write",
            json!({"filePath": format!("{work}/notes.txt"), "content": format!("first line\n{write}\n")}),
        )
        .and_call(
            "bash",
            json!({"command": format!("printf '{read}%s\\n' read > seen.txt; echo {par}in | sed s/in/out/"),
                   "description": "Write and echo"}),
        )
        .with_text(&t2),
    );
    s.on(
        &format!("{par}out"),
        Reply::call("read", json!({"filePath": format!("{work}/seen.txt")})),
    );
    s.on(
        &format!("{read}read"),
        Reply::text(&format!("{r2} files written and read.")),
    );

    // Turn 3: a failing command (OpenCode completes it, with its exit code).
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
            "bash",
            json!({"command": format!("echo {fail}in | sed s/in/err/ >&2; exit 3"),
                   "description": "Fail"}),
        ),
    );
    s.on(
        &format!("{fail}err"),
        Reply::text(&format!("{r3} the command failed.")),
    );

    // Turn 4: a sub-agent (`task`), its own session; its answer comes back as the task's output.
    let u4 = m.mark("main", "user", "user prompt of turn 4");
    let task = m.mark("sub", "user", "the sub-agent's task");
    m.expect(&task, &["main"], "tool", "the task call's input");
    let sub = m.mark("sub", "assistant", "the sub-agent's answer");
    m.expect(&sub, &["main"], "tool", "the task's output");
    let r4 = m.mark("main", "assistant", "reply of turn 4");
    s.on(
        &u4,
        Reply::call(
            "task",
            json!({"description": "Look around", "prompt": format!("{task} look around"),
                   "subagent_type": "general"}),
        ),
    );
    s.on(&task, Reply::text(&format!("{sub} nothing to report.")));
    s.on(
        &format!("{sub} nothing"),
        Reply::text(&format!("{r4} the sub-agent is done.")),
    );

    // A fork of the main session, with a turn of its own.
    let u5 = m.mark("fork", "user", "user prompt of the fork");
    let r5 = m.mark("fork", "assistant", "reply in the fork");
    s.on(&u5, Reply::text(&format!("{r5} in the fork.")));
    ctx.server.set_script(s);

    let opencode = |args: &[&str]| {
        let mut cmd = ctx.command(&bin);
        cmd.env("OPENCODE_DISABLE_AUTOUPDATE", "1")
            .env("OPENCODE_DISABLE_MODELS_FETCH", "1")
            .env("OPENCODE_DISABLE_LSP_DOWNLOAD", "1")
            .env("OPENCODE_DISABLE_DEFAULT_PLUGINS", "1")
            .env("OPENCODE_DISABLE_SHARE", "1")
            .args(["run", "--auto", "--format", "json"])
            .args(args);
        cmd
    };
    let out = ctx.run(
        "run (turn 1)",
        &mut opencode(&[
            "--title",
            "Recorded session",
            &format!("{u1} run a command"),
        ]),
    )?;
    let main = session_id(&out)?;
    for (what, prompt) in [
        ("turn 2", format!("{u2} write and read")),
        ("turn 3", format!("{u3} fail once")),
        ("turn 4", format!("{u4} ask a sub-agent")),
    ] {
        ctx.run(
            &format!("run --session ({what})"),
            &mut opencode(&["--session", &main, &prompt]),
        )?;
    }
    let out = ctx.run(
        "run --session --fork",
        &mut opencode(&["--session", &main, "--fork", &format!("{u5} in the fork")]),
    )?;
    let fork = session_id(&out)?;

    // The fork copies the whole main session.
    m.inherit("main", "fork");
    for marker in [&u5, &r5] {
        m.get_mut(marker).sessions = vec!["fork".into()];
    }
    for marker in [&task, &sub] {
        // The sub-agent's own session is not copied; the main session's task part is.
        m.get_mut(marker).sessions = vec!["sub".into()];
    }

    let data = ctx.home.join(".local/share/opencode");
    let sub_id = child_of(&bin, ctx, &main)?;
    let tree = ctx.home.join("recorded");
    std::fs::create_dir_all(&tree)?;
    for name in ["opencode.db", "opencode.db-wal", "opencode.db-shm"] {
        let from = data.join(name);
        if from.exists() {
            std::fs::copy(&from, tree.join(name))?;
        }
    }
    let sessions = BTreeMap::from([
        ("main".to_owned(), main),
        ("fork".to_owned(), fork),
        ("sub".to_owned(), sub_id),
    ]);
    Ok(Recording {
        tree: (tree, "opencode"),
        agent: "opencode",
        version: ctx.version.clone(),
        sessions,
        markers: m,
        notes: vec![
            "the database is recorded with its -wal and -shm as OpenCode left them: the newest turns are only in the log".into(),
        ],
    })
}

/// The session id the JSON events of `opencode run --format json` name.
fn session_id(out: &str) -> Result<String> {
    out.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find_map(|v| {
            v.get("sessionID")
                .or_else(|| v.pointer("/part/sessionID"))
                .and_then(Value::as_str)
                .map(str::to_owned)
        })
        .context("opencode run printed no session id")
}

/// The sub-agent session whose parent is `parent`, from `opencode session list`.
fn child_of(bin: &Path, ctx: &Ctx, parent: &str) -> Result<String> {
    let mut cmd = ctx.command(bin);
    cmd.env("OPENCODE_DISABLE_AUTOUPDATE", "1")
        .env("OPENCODE_DISABLE_MODELS_FETCH", "1")
        .args(["export", parent]);
    let out = ctx.run("export", &mut cmd)?;
    let start = out.find('{').context("export printed no JSON")?;
    let export: Value = serde_json::from_str(&out[start..])?;
    let mut found = None;
    for message in export["messages"].as_array().into_iter().flatten() {
        for part in message["parts"].as_array().into_iter().flatten() {
            if part["tool"] == "task" {
                found = part
                    .pointer("/state/metadata/sessionId")
                    .and_then(Value::as_str)
                    .map(str::to_owned);
            }
        }
    }
    found.context("no task part names its session")
}
