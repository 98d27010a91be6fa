//! Oh My Pi in RPC mode (`omp --mode rpc`, pi's protocol) and print mode (`omp -p --resume`):
//! turns, tools (bash, write, read, a failing command, parallel calls), a sub-agent (`task`,
//! run synchronously: its session is a file of its own in the parent's artifact directory), a
//! compaction (`compact`), a fork (`branch`, which writes a new file) and a resume.
//!
//! Oh My Pi runs on Bun: npm `bun` is installed beside it and runs its `dist/cli.js`. Offline:
//! `~/.omp/agent/models.yml` adds a provider whose `baseUrl` is the model server (OpenAI chat
//! completions), and the proxies refuse everything else.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use anyhow::{Context, Result};
use serde_json::{json, Value};

use super::kit::{Ctx, Markers, Recording};
use super::pi::{entry_id, Rpc};
use super::server::{Reply, Script};

const PROVIDER: &str = "scripted";
const MODEL: &str = "scripted-model";

/// The runtime Oh My Pi is released for, from npm.
pub const BUN: &str = "bun@1.4.5";

/// The Bun binary npm's `bun` package installed under `install`.
fn bun(install: &Path) -> Result<PathBuf> {
    let candidates = [
        "node_modules/bun/bin/bun.exe",
        "node_modules/bun/bin/bun",
        "node_modules/@oven/bun-linux-x64/bin/bun",
        "node_modules/@oven/bun-linux-x64-baseline/bin/bun",
    ];
    candidates
        .iter()
        .map(|c| install.join(c))
        .find(|p| p.is_file())
        .with_context(|| format!("no bun binary under {}", install.display()))
}

/// The session id in the `session` header of `file` (on line 2, after the title slot).
fn header_id(file: &Path) -> Result<String> {
    let text = std::fs::read_to_string(file)?;
    for line in text.lines() {
        let v: Value = serde_json::from_str(line)?;
        if v["type"] == "session" {
            return Ok(v["id"].as_str().context("a header without id")?.to_owned());
        }
    }
    anyhow::bail!("no session header in {}", file.display())
}

/// The session file of `get_state`.
fn session_file(state: &Value) -> Result<PathBuf> {
    Ok(PathBuf::from(
        state["data"]["sessionFile"]
            .as_str()
            .context("get_state without sessionFile")?,
    ))
}

pub fn record(ctx: &Ctx, bun_install: &Path) -> Result<Recording> {
    let bun = bun(bun_install)?;
    let cli = ctx
        .install
        .join("node_modules/@oh-my-pi/pi-coding-agent/dist/cli.js");
    let agent_dir = ctx.home.join(".omp/agent");
    std::fs::create_dir_all(&agent_dir)?;
    let models = format!(
        "providers:\n  {PROVIDER}:\n    baseUrl: {}/v1\n    api: openai-completions\n    \
         apiKey: sk-recorder-offline\n    models:\n      - id: {MODEL}\n        name: Scripted\n        \
         reasoning: false\n        input: [text]\n        contextWindow: 200000\n        \
         maxTokens: 8192\n        cost: {{input: 0, output: 0, cacheRead: 0, cacheWrite: 0}}\n",
        ctx.base_url()
    );
    std::fs::write(agent_dir.join("models.yml"), models)?;
    // Sub-agents run while the `task` call waits, so that their answer is its result; a
    // compaction keeps only the last turn, so that a short session has something to compact.
    std::fs::write(
        agent_dir.join("config.yml"),
        "async:\n  enabled: false\ncompaction:\n  keepRecentTokens: 1\n",
    )?;

    let mut m = Markers::new("qzo");
    // Only the compaction's requests: a sub-agent's system prompt speaks of summaries too.
    let mut s = Script {
        summary_triggers: vec!["coding-assistant conversations".into()],
        ..Script::default()
    };
    let work = ctx.work.display().to_string();

    // Turn 1: a prompt, a shell call, its output, a reply.
    let u1 = m.mark("main", "user", "user prompt of turn 1");
    let sh = m.shell("main", "shell");
    let r1 = m.mark("main", "assistant", "reply of turn 1");
    s.on(
        &u1,
        Reply::call(
            "bash",
            json!({"command": format!("echo {sh}in | sed s/in/out/"), "i": "run the command"}),
        ),
    );
    s.on(
        &format!("{sh}out"),
        Reply::text(&format!("{r1} the shell ran.")),
    );

    // Turn 2: parallel calls (write and bash) with text beside them, then read.
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
            json!({"path": format!("{work}/notes.txt"), "content": format!("first line\n{write}\n"),
                   "i": "write the notes"}),
        )
        .and_call(
            "bash",
            json!({"command": format!("printf '{read}%s\\n' read > seen.txt; echo {par}in | sed s/in/out/"),
                   "i": "write and echo"}),
        )
        .with_text(&t2),
    );
    s.on(
        &format!("{par}out"),
        Reply::call(
            "read",
            json!({"path": format!("{work}/seen.txt"), "i": "read it back"}),
        ),
    );
    s.on(
        &format!("{read}read"),
        Reply::text(&format!("{r2} files written and read.")),
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
            "bash",
            json!({"command": format!("echo {fail}in | sed s/in/err/ >&2; exit 3"), "i": "fail once"}),
        ),
    );
    s.on(
        &format!("{fail}err"),
        Reply::text(&format!("{r3} the command failed.")),
    );

    // Turn 4: a sub-agent. Its task and answer are in its own session; the parent shows the
    // call (with the task) and the result (with the answer).
    let u4 = m.mark("main", "user", "user prompt of the sub-agent turn");
    let task = m.stem();
    m.expect(
        &format!("{task}task"),
        &["main"],
        "tool",
        "sub-agent task in the parent's call",
    );
    m.expect(
        &format!("{task}task"),
        &["sub"],
        "context",
        "sub-agent task as the sub-agent's first prompt (written by the parent agent)",
    );
    let answer = m.stem();
    m.expect(
        &format!("{answer}answer"),
        &["main", "sub"],
        "tool",
        "sub-agent answer (its yield call; the parent's task result)",
    );
    let r4 = m.mark("main", "assistant", "reply after the sub-agent");
    s.on(
        &u4,
        Reply::call(
            "task",
            json!({"i": "ask a scout", "context": "A scratch directory.",
                   "tasks": [{"name": "Scout", "task": format!("Report {task}task back.")}]}),
        ),
    );
    s.on(
        &format!("{task}task"),
        Reply::call(
            "yield",
            json!({"data": {"answer": format!("{answer}answer")}}),
        ),
    );
    s.on(
        &format!("{answer}answer"),
        Reply::text(&format!("{r4} the scout answered.")),
    );

    // A compaction, then a turn after it.
    let summary = m.mark("main", "context", "compaction summary");
    s.summary = Some(Reply::text(&format!(
        "## Goal\n{summary} the session so far."
    )));
    // Its third call writes the short summary, given the summary as `<previous-summary>`.
    let short = m.mark("main", "context", "compaction short summary");
    s.on(
        "<previous-summary>",
        Reply::text(&format!("{short} in short.")),
    );
    let u6 = m.mark("main", "user", "user prompt after the compaction");
    let r6 = m.mark("main", "assistant", "reply after the compaction");
    s.on(&u6, Reply::text(&format!("{r6} after compacting.")));

    // A fork from turn 6's prompt (the fork holds what came before it), with a turn of its own.
    let u7 = m.mark("fork", "user", "user prompt of the fork");
    let r7 = m.mark("fork", "assistant", "reply in the fork");
    s.on(&u7, Reply::text(&format!("{r7} in the fork.")));

    // A resume of the main session in print mode.
    let u8 = m.mark("main", "user", "user prompt of the resumed session");
    let r8 = m.mark("main", "assistant", "reply in the resumed session");
    s.on(&u8, Reply::text(&format!("{r8} resumed.")));
    ctx.server.set_script(s);

    let omp = |args: &[&str]| {
        let mut cmd = ctx.command(&bun);
        cmd.arg(&cli)
            .args(["--provider", PROVIDER, "--model", MODEL])
            .args(args);
        cmd
    };
    let mut rpc = Rpc::start(omp(&["--mode", "rpc"]))?;
    rpc.prompt(&format!("{u1} run a command"))?;
    rpc.prompt(&format!("{u2} write and read"))?;
    rpc.prompt(&format!("{u3} fail once"))?;
    rpc.prompt(&format!("{u4} ask a scout"))?;
    let state = rpc.send(json!({"type": "get_state"}), None)?;
    let main_file = session_file(&state)?;
    rpc.send(json!({"type": "compact"}), None)?;
    rpc.prompt(&format!("{u6} go on"))?;
    let fork_from = entry_id(&main_file, "user", &u6)?;
    rpc.send(json!({"type": "branch", "entryId": fork_from}), None)?;
    rpc.prompt(&format!("{u7} in the fork"))?;
    let state = rpc.send(json!({"type": "get_state"}), None)?;
    let fork_file = session_file(&state)?;
    rpc.finish()?;
    let main_id = header_id(&main_file)?;
    ctx.run(
        "resume (-p --resume)",
        omp(&["-p", "--resume", &main_id, &format!("{u8} resume")]).stdin(Stdio::null()),
    )?;

    // The fork holds the main session's active branch up to turn 6's prompt.
    m.inherit("main", "fork");
    for marker in [&u6, &r6, &u8, &r8] {
        m.get_mut(marker).sessions = vec!["main".into()];
    }
    for marker in [&u7, &r7] {
        m.get_mut(marker).sessions = vec!["fork".into()];
    }

    let stem = main_file
        .file_stem()
        .context("a session file without a name")?;
    let sub_file = main_file.with_file_name(stem).join("Scout.jsonl");
    let sessions = BTreeMap::from([
        ("main".to_owned(), main_id),
        ("fork".to_owned(), header_id(&fork_file)?),
        ("sub".to_owned(), header_id(&sub_file)?),
    ]);
    Ok(Recording {
        tree: (agent_dir.join("sessions"), "sessions"),
        agent: "omp",
        version: ctx.version.clone(),
        sessions,
        markers: m,
        notes: vec![],
    })
}
