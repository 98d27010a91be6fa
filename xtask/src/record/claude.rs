//! Claude Code in print mode (`claude -p`): turns, a resume, tools (Bash, Write, Edit, Read, a
//! failing command, parallel calls), a sub-agent, `--fork-session`, and `/compact`.
//!
//! Offline: `ANTHROPIC_BASE_URL` names the model server and `ANTHROPIC_API_KEY` a made-up key;
//! `DISABLE_TELEMETRY`, `DISABLE_ERROR_REPORTING`, `DISABLE_AUTOUPDATER` and
//! `CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC` turn off the rest, and the proxies refuse.

use std::collections::BTreeMap;
use std::path::PathBuf;

use anyhow::{Context, Result};
use serde_json::{json, Value};

use super::kit::{Ctx, Markers, Recording};
use super::server::{Reply, Script};

const MAIN: &str = "6f1c0de0-0000-4000-8000-000000000001";
const TAIL: &str = "6f1c0de0-0000-4000-8000-000000000002";

fn binary(ctx: &Ctx) -> Result<PathBuf> {
    let scope = ctx.install.join("node_modules/@anthropic-ai");
    for entry in std::fs::read_dir(&scope)? {
        let path = entry?.path().join("claude");
        let name = path
            .parent()
            .unwrap()
            .file_name()
            .unwrap()
            .to_string_lossy();
        if name.starts_with("claude-code-") && path.is_file() {
            return Ok(path);
        }
    }
    // Older releases ran as a Node script.
    let cli = scope.join("claude-code/cli.js");
    cli.is_file()
        .then_some(cli)
        .context("no claude binary for this platform in the package")
}

pub fn record(ctx: &Ctx) -> Result<Recording> {
    let bin = binary(ctx)?;
    let mut m = Markers::new("qzc");
    let mut s = Script {
        summary_triggers: vec![
            "summary of the conversation".into(),
            "detailed summary".into(),
        ],
        ..Script::default()
    };
    let work = ctx.work.display().to_string();

    // Turn 1: a prompt, a shell call (that also writes a file for turn 2), its output, a reply.
    let u1 = m.mark("main", "user", "user prompt of turn 1");
    let sh = m.shell("main", "shell");
    let read = m.stem();
    m.expect(
        &format!("{read}read"),
        &["main"],
        "tool",
        "Read output (a file the shell wrote)",
    );
    let r1 = m.mark("main", "assistant", "reply of turn 1");
    s.on(
        &u1,
        Reply::call(
            "Bash",
            json!({"command": format!("printf '{read}%s\\n' read > seen.txt; echo {sh}in | sed s/in/out/"),
                   "description": "Write a file and echo"}),
        ),
    );
    s.on(
        &format!("{sh}out"),
        Reply::text(&format!("{r1} the shell ran.")),
    );

    // Turn 2 (a resume): Write, Edit, Read, one after the other.
    let u2 = m.mark("main", "user", "user prompt of turn 2, resumed");
    let write = m.mark("main", "tool", "Write content");
    let edit = m.mark("main", "tool", "Edit new string");
    let r2 = m.mark("main", "assistant", "reply of turn 2");
    s.on(
        &u2,
        Reply::call(
            "Write",
            json!({"file_path": format!("{work}/notes.txt"), "content": format!("first line\n{write}\n")}),
        ),
    );
    s.on(
        "File created successfully",
        Reply::call(
            "Edit",
            json!({"file_path": format!("{work}/notes.txt"), "old_string": "first line",
                   "new_string": edit}),
        ),
    );
    s.on(
        "has been updated",
        Reply::call("Read", json!({"file_path": format!("{work}/seen.txt")})),
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
            "Bash",
            // The files go, so that the compaction does not bring them back as attachments.
            json!({"command": format!("rm -f notes.txt seen.txt; echo {fail}in | sed s/in/err/ >&2; exit 3"),
                   "description": "Fail on purpose"}),
        ),
    );
    s.on(
        &format!("{fail}err"),
        Reply::text(&format!("{r3} the command failed.")),
    );

    // Turn 4: a sub-agent. Its own dialogue is in its own store, not the session; what it
    // returns is the Agent call's result.
    let u4 = m.mark("main", "user", "user prompt of turn 4");
    let task = m.mark("main", "tool", "sub-agent prompt (Agent call input)");
    let inner = m.stem();
    m.expect(
        &format!("{inner}in"),
        &[],
        "tool",
        "sub-agent's own shell call (in its store only)",
    );
    let sub = m.mark(
        "main",
        "tool",
        "sub-agent's reply (the Agent call's result)",
    );
    let r4 = m.mark("main", "assistant", "reply of turn 4");
    s.on(
        &u4,
        Reply::call(
            "Agent",
            json!({"description": "Look around", "prompt": format!("{task} look around"),
                   "subagent_type": "general-purpose", "run_in_background": false}),
        ),
    );
    s.on(
        &task,
        Reply::call(
            "Bash",
            json!({"command": format!("echo {inner}in | sed s/in/out/"), "description": "Echo"}),
        ),
    );
    s.on(
        &format!("{inner}out"),
        Reply::text(&format!("{sub} the sub-agent looked.")),
    );
    s.on(&sub, Reply::text(&format!("{r4} the sub-agent is done.")));

    // Turn 5: /compact, then a turn after it.
    let summary = m.mark("main", "context", "compaction summary");
    s.summary = Some(Reply::text(&format!(
        "<summary>{summary} the session so far.</summary>"
    )));
    let u5 = m.mark("main", "user", "user prompt after the compaction");
    let r5 = m.mark("main", "assistant", "reply after the compaction");
    s.on(&u5, Reply::text(&format!("{r5} after compacting.")));

    // Turn 6: reasoning, text and parallel calls (Write and Bash), then a reply.
    let u7 = m.mark("main", "user", "user prompt of the parallel calls");
    let think = m.mark("main", "assistant", "reasoning before parallel calls");
    let t7 = m.mark("main", "assistant", "reply text beside the parallel calls");
    let pwrite = m.mark("main", "tool", "Write content of a parallel call");
    let par = m.shell("main", "parallel shell");
    let r7 = m.mark("main", "assistant", "reply after the parallel calls");
    s.on(
        &u7,
        Reply::call(
            "Write",
            json!({"file_path": format!("{work}/other.txt"), "content": format!("{pwrite}\n")}),
        )
        .and_call(
            "Bash",
            json!({"command": format!("echo {par}in | sed s/in/out/"), "description": "Echo"}),
        )
        .with_text(&t7)
        .with_thinking(&think),
    );
    s.on(
        &format!("{par}out"),
        Reply::text(&format!("{r7} both calls ran.")),
    );

    // A fork of the session with a turn of its own.
    let u6 = m.mark("fork", "user", "user prompt of the fork");
    let r6 = m.mark("fork", "assistant", "reply in the fork");
    s.on(&u6, Reply::text(&format!("{r6} in the fork.")));
    ctx.server.set_script(s);

    let claude = |args: &[&str]| {
        let mut cmd = ctx.command(&bin);
        cmd.env("ANTHROPIC_BASE_URL", ctx.base_url())
            .env("ANTHROPIC_API_KEY", "sk-ant-recorder-offline")
            .env("DISABLE_TELEMETRY", "1")
            .env("DISABLE_ERROR_REPORTING", "1")
            .env("DISABLE_AUTOUPDATER", "1")
            .env("DISABLE_BUG_COMMAND", "1")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .env("CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY", "1")
            .env("CLAUDE_CODE_DISABLE_TERMINAL_TITLE", "1")
            .args([
                "--output-format",
                "json",
                "--permission-mode",
                "acceptEdits",
            ])
            .args(["--allowedTools", "Bash,Write,Edit,Read,Agent,Task"])
            .args(args);
        cmd
    };
    let prompt = |marker: &str, rest: &str| format!("{marker} {rest}");
    ctx.run(
        "turn 1",
        &mut claude(&["-p", &prompt(&u1, "run a command"), "--session-id", MAIN]),
    )?;
    ctx.run(
        "turn 2 (resume)",
        &mut claude(&["-p", &prompt(&u2, "write, edit, read"), "--resume", MAIN]),
    )?;
    ctx.run(
        "turn 3",
        &mut claude(&["-p", &prompt(&u3, "fail once"), "--resume", MAIN]),
    )?;
    ctx.run(
        "turn 4",
        &mut claude(&["-p", &prompt(&u4, "ask a helper"), "--resume", MAIN]),
    )?;
    // The fork copies the session so far and goes on with a turn of its own.
    let out = ctx.run(
        "fork",
        &mut claude(&[
            "-p",
            &prompt(&u6, "try another way"),
            "--resume",
            MAIN,
            "--fork-session",
        ]),
    )?;
    let result: Value = serde_json::from_str(out.trim()).context("the fork's JSON result")?;
    let fork = result["session_id"]
        .as_str()
        .context("no session_id in the fork's result")?
        .to_owned();
    m.inherit("main", "fork");
    for marker in [&u6, &r6] {
        m.get_mut(marker).sessions = vec!["fork".into()];
    }
    for marker in [&summary, &u5, &r5, &u7, &think, &t7, &pwrite, &r7] {
        m.get_mut(marker).sessions = vec!["main".into()];
    }
    for marker in [format!("{par}in"), format!("{par}out")] {
        m.get_mut(&marker).sessions = vec!["main".into()];
    }
    ctx.run(
        "/compact",
        &mut claude(&["-p", "/compact", "--resume", MAIN]),
    )?;
    ctx.run(
        "turn 5",
        &mut claude(&["-p", &prompt(&u5, "go on"), "--resume", MAIN]),
    )?;
    ctx.run(
        "turn 6",
        &mut claude(&["-p", &prompt(&u7, "two at once"), "--resume", MAIN]),
    )?;

    // A second session: parallel calls, then /compact and a turn, which Claude Code ends with
    // an attachment line (a `prompt_snapshot`) after the reply.
    let mut s = Script {
        summary_triggers: vec![
            "summary of the conversation".into(),
            "detailed summary".into(),
        ],
        ..Script::default()
    };
    let u8 = m.mark("tail", "user", "user prompt of the parallel calls");
    let pwrite = m.mark("tail", "tool", "Write content of a parallel call");
    // After /compact, Claude Code attaches the file it wrote again: injected context.
    m.expect(
        &pwrite,
        &["tail"],
        "context",
        "the file written in parallel, attached again after /compact",
    );
    let par = m.stem();
    m.expect(
        &format!("{par}in"),
        &["tail"],
        "tool",
        "parallel shell call input",
    );
    m.expect(
        &format!("{par}out"),
        &["tail"],
        "tool",
        "parallel shell output",
    );
    let r8 = m.mark("tail", "assistant", "reply after the parallel calls");
    s.on(
        &u8,
        Reply::call(
            "Write",
            json!({"file_path": format!("{work}/third.txt"), "content": format!("{pwrite}\n")}),
        )
        .and_call(
            "Bash",
            json!({"command": format!("echo {par}in | sed s/in/out/"), "description": "Echo"}),
        ),
    );
    s.on(
        &format!("{par}out"),
        Reply::text(&format!("{r8} both calls ran.")),
    );
    let summary = m.mark("tail", "context", "compaction summary");
    s.summary = Some(Reply::text(&format!(
        "<summary>{summary} the session so far.</summary>"
    )));
    let u9 = m.mark("tail", "user", "user prompt after the compaction");
    let r9 = m.mark("tail", "assistant", "reply after the compaction");
    s.on(&u9, Reply::text(&format!("{r9} after compacting.")));
    ctx.server.set_script(s);
    ctx.run(
        "second session",
        &mut claude(&["-p", &prompt(&u8, "two at once"), "--session-id", TAIL]),
    )?;
    ctx.run(
        "/compact",
        &mut claude(&["-p", "/compact", "--resume", TAIL]),
    )?;
    ctx.run(
        "second session, after /compact",
        &mut claude(&["-p", &prompt(&u9, "go on"), "--resume", TAIL]),
    )?;

    let sessions = BTreeMap::from([
        ("main".to_owned(), MAIN.to_owned()),
        ("fork".to_owned(), fork),
        ("tail".to_owned(), TAIL.to_owned()),
    ]);
    Ok(Recording {
        tree: (ctx.home.join(".claude/projects"), "projects"),
        agent: "claude",
        version: ctx.version.clone(),
        sessions,
        markers: m,
        notes: vec![],
    })
}
