//! Gemini CLI in non-interactive mode (`gemini -p`, `--resume <id> -p`): turns, tools (shell,
//! write_file, read_file, replace, a failing command), thoughts, a sub-agent (`invoke_agent`
//! of the generalist, which records itself under the parent's id) and resumes.
//!
//! Offline: `GOOGLE_GEMINI_BASE_URL` names the model server (the Gemini API's
//! `:streamGenerateContent`), `GEMINI_API_KEY` holds a placeholder, `settings.json` selects API
//! key authentication and turns telemetry, usage statistics and update checks off,
//! `GEMINI_CLI_TRUST_WORKSPACE` trusts the scratch directory, and the proxies refuse.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde_json::{json, Value};

use super::kit::{Ctx, Markers, Recording};
use super::server::{Reply, Script};

const MODEL: &str = "gemini-2.5-flash";

fn gemini(ctx: &Ctx, cli: &Path, args: &[&str], what: &str) -> Result<String> {
    let node = which("node")?;
    let mut cmd = ctx.command(&node);
    cmd.arg(cli)
        .args(["-m", MODEL, "--yolo"])
        .args(args)
        .env("GEMINI_API_KEY", "recorder-offline")
        .env("GOOGLE_GEMINI_BASE_URL", ctx.base_url())
        .env("GEMINI_CLI_TRUST_WORKSPACE", "true");
    ctx.run(what, &mut cmd)
}

fn which(program: &str) -> Result<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|d| d.join(program))
        .find(|p| p.is_file())
        .with_context(|| format!("{program} is not on the PATH"))
}

/// The main recordings (`session-*.jsonl`) under the home, with their session ids.
fn sessions(home: &Path) -> Result<Vec<(PathBuf, String)>> {
    let mut found = Vec::new();
    let tmp = home.join("tmp");
    for project in std::fs::read_dir(&tmp).with_context(|| format!("reading {}", tmp.display()))? {
        let chats = project?.path().join("chats");
        let Ok(entries) = std::fs::read_dir(&chats) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.extension().is_some_and(|e| e == "jsonl") {
                let text = std::fs::read_to_string(&path)?;
                let first: Value = serde_json::from_str(text.lines().next().unwrap_or("{}"))?;
                if let Some(id) = first["sessionId"].as_str() {
                    found.push((path, id.to_owned()));
                }
            }
        }
    }
    found.sort();
    Ok(found)
}

/// The sub-agents' recordings: `chats/<parent id>/<id>.jsonl`, with their ids.
fn subagents(home: &Path) -> Result<Vec<String>> {
    let mut found = Vec::new();
    for project in std::fs::read_dir(home.join("tmp"))? {
        let Ok(entries) = std::fs::read_dir(project?.path().join("chats")) else {
            continue;
        };
        for dir in entries.flatten().filter(|e| e.path().is_dir()) {
            for file in std::fs::read_dir(dir.path())?.flatten() {
                if let Some(stem) = file.path().file_stem().and_then(|s| s.to_str()) {
                    found.push(stem.to_owned());
                }
            }
        }
    }
    found.sort();
    Ok(found)
}

pub fn record(ctx: &Ctx) -> Result<Recording> {
    let cli = ctx
        .install
        .join("node_modules/@google/gemini-cli/bundle/gemini.js");
    let home = ctx.home.join(".gemini");
    std::fs::create_dir_all(&home)?;
    let settings = json!({
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "telemetry": {"enabled": false},
        "privacy": {"usageStatisticsEnabled": false},
        "general": {"disableAutoUpdate": true, "disableUpdateNag": true},
    });
    std::fs::write(
        home.join("settings.json"),
        serde_json::to_string_pretty(&settings)?,
    )?;

    let mut m = Markers::new("qzg");
    let mut s = Script::default();
    let work = ctx.work.display().to_string();

    // Turn 1: thoughts, a reply beside a shell call, its output, a reply.
    let u1 = m.mark("main", "user", "user prompt of turn 1");
    let think = m.mark("main", "assistant", "thoughts of turn 1");
    let t1 = m.mark("main", "assistant", "reply text beside the shell call");
    let sh = m.shell("main", "shell");
    let r1 = m.mark("main", "assistant", "reply of turn 1");
    s.on(
        &u1,
        Reply::call(
            "run_shell_command",
            json!({"command": format!("echo {sh}in | sed s/in/out/"), "description": "echo"}),
        )
        .with_text(&t1)
        .with_thinking(&think),
    );
    s.on(
        &format!("{sh}out"),
        Reply::text(&format!("{r1} the shell ran.")),
    );

    // Turn 2: write a file, edit it, read it back, and a command that fails.
    let u2 = m.mark("main", "user", "user prompt of turn 2");
    let write = m.mark("main", "tool", "write_file content");
    let edit = m.mark("main", "tool", "replace new text");
    let read = m.stem();
    m.expect(
        &format!("{read}read"),
        &["main"],
        "tool",
        "read_file output (a file the shell wrote)",
    );
    let fail = m.stem();
    m.expect(
        &format!("{fail}err"),
        &["main"],
        "tool",
        "output of a failing command",
    );
    let r2 = m.mark("main", "assistant", "reply of turn 2");
    s.on(
        &u2,
        Reply::call(
            "write_file",
            json!({"file_path": format!("{work}/notes.txt"), "content": format!("first line\n{write}\n")}),
        ),
    );
    s.on(
        "notes.txt",
        Reply::call(
            "replace",
            json!({"file_path": format!("{work}/notes.txt"), "old_string": "first line",
                   "new_string": edit, "instruction": "replace the first line"}),
        ),
    );
    s.on(
        "Successfully modified",
        Reply::call(
            "run_shell_command",
            json!({"command": format!("printf '{read}%s\\n' read > seen.txt; echo {fail}err; exit 3"),
                   "description": "fail"}),
        ),
    );
    s.on(
        &format!("{fail}err"),
        Reply::call(
            "read_file",
            json!({"file_path": format!("{work}/seen.txt")}),
        ),
    );
    s.on(
        &format!("{read}read"),
        Reply::text(&format!("{r2} all done.")),
    );

    // Turn 3 (a resume): a sub-agent. Its task and answer are in both recordings: the task as
    // the parent's tool input and the child's prompt, the answer as the child's `complete_task`
    // input and the parent's tool output.
    let u3 = m.mark("main", "user", "user prompt of turn 3 (after a resume)");
    let task = m.stem();
    m.expect(
        &format!("{task}task"),
        &["main"],
        "tool",
        "invoke_agent input",
    );
    let answer = m.stem();
    let r3 = m.mark("main", "assistant", "reply of turn 3");
    s.on(
        &u3,
        Reply::call(
            "invoke_agent",
            json!({"agent_name": "generalist", "prompt": format!("Say {task}task back.")}),
        ),
    );
    s.on(
        &format!("Say {task}task back."),
        Reply::call(
            "complete_task",
            json!({"result": {"response": format!("{answer}answer")}}),
        ),
    );
    s.on(
        &format!("{answer}answer"),
        Reply::text(&format!("{r3} the agent answered.")),
    );

    ctx.server.set_script(s);
    gemini(
        ctx,
        &cli,
        &["-p", &format!("Run a command, {u1}.")],
        "turn 1",
    )?;
    let first = sessions(&home)?;
    let [(_, id)] = first.as_slice() else {
        bail!("one session expected after turn 1, found {first:?}");
    };
    let id = id.clone();
    gemini(
        ctx,
        &cli,
        &["--resume", &id, "-p", &format!("Write notes, {u2}.")],
        "turn 2 (resume)",
    )?;
    // A minute apart, a resume leaves a stub file behind; within it, it appends the stub.
    std::thread::sleep(std::time::Duration::from_secs(61));
    gemini(
        ctx,
        &cli,
        &["--resume", &id, "-p", &format!("Ask an agent, {u3}.")],
        "turn 3 (resume)",
    )?;

    let mut notes = Vec::new();
    let subs = subagents(&home)?;
    let mut labels = BTreeMap::from([("main".to_owned(), id)]);
    match subs.as_slice() {
        [sub] => {
            labels.insert("sub".to_owned(), sub.clone());
            // The task is the child's prompt; its answer, the child's `complete_task` input.
            m.expect(
                &format!("{task}task"),
                &["sub"],
                "user",
                "the sub-agent's task",
            );
            m.expect(
                &format!("{answer}answer"),
                &["main", "sub"],
                "tool",
                "the sub-agent's answer",
            );
        }
        other => {
            notes.push(format!("the sub-agent left {} recordings", other.len()));
            m.expect(
                &format!("{answer}answer"),
                &["main"],
                "tool",
                "the sub-agent's answer",
            );
        }
    }
    // A write's and an edit's outputs repeat the whole file they wrote (the edit's, the written
    // line too); the failing command names its marker in its input and its output.
    m.get_mut(&write).count = 3;
    for marker in [&edit, &format!("{fail}err")] {
        m.get_mut(marker).count = 2;
    }
    let files = sessions(&home)?;
    notes.push(format!(
        "{} main recording file(s) for one session: a resume in a later minute leaves a stub",
        files.len()
    ));
    Ok(Recording {
        tree: (home, "home"),
        agent: "gemini",
        version: ctx.version.clone(),
        sessions: labels,
        markers: m,
        notes,
    })
}
