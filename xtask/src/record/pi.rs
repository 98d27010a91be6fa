//! pi in RPC mode (`pi --mode rpc`) and print mode (`pi -p --session`): turns, tools (bash,
//! write, edit, read, a failing command, parallel calls), an in-file branch (an extension
//! command that calls `navigateTree`, as `/tree` does), a compaction (`compact`), a fork (`fork`)
//! and a resume.
//!
//! Offline: `$PI_CODING_AGENT_DIR/models.json` adds a provider whose `baseUrl` is the model
//! server (OpenAI chat completions); `PI_OFFLINE`, `PI_SKIP_VERSION_CHECK`, `PI_TELEMETRY=0` and
//! `enableInstallTelemetry: false` turn off update checks and telemetry, and the proxies refuse.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use serde_json::{json, Value};

use super::kit::{Ctx, Markers, Recording};
use super::server::{Reply, Script};

const PROVIDER: &str = "scripted";
const MODEL: &str = "scripted-model";

const EXTENSION: &str = r#"// Continue the session from an earlier entry, as /tree does, without a summary.
export default function (pi) {
  pi.registerCommand("branch-from", {
    description: "Continue from an earlier entry of this session",
    handler: async (args, ctx) => {
      await ctx.navigateTree(args.trim(), { summarize: false });
    },
  });
}
"#;

/// An agent in RPC mode (pi's protocol, which Oh My Pi keeps): commands in on stdin, responses
/// and events out on stdout, one JSON object a line.
pub(super) struct Rpc {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    next: u32,
}

impl Rpc {
    pub(super) fn start(mut cmd: Command) -> Result<Rpc> {
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .context("starting the agent in --mode rpc")?;
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Ok(Rpc {
            child,
            stdin,
            lines,
            next: 1,
        })
    }

    /// Send a command; wait for its response and, with `until`, for an event of that type.
    pub(super) fn send(&mut self, mut command: Value, until: Option<&str>) -> Result<Value> {
        let id = format!("r{}", self.next);
        self.next += 1;
        command["id"] = json!(id);
        eprintln!("record: rpc {}", command["type"]);
        writeln!(self.stdin, "{command}")?;
        self.stdin.flush()?;
        let deadline = Instant::now() + Duration::from_secs(120);
        let mut response = None;
        let mut waiting = until;
        loop {
            if waiting.is_none() {
                if let Some(response) = response.take() {
                    return Ok(response);
                }
            }
            let left = deadline.saturating_duration_since(Instant::now());
            let line = match self.lines.recv_timeout(left) {
                Ok(line) => line,
                Err(RecvTimeoutError::Timeout) => bail!("no answer to {command}"),
                Err(RecvTimeoutError::Disconnected) => bail!("the agent exited during {command}"),
            };
            let Ok(event) = serde_json::from_str::<Value>(&line) else {
                continue;
            };
            if event["type"] == "response" && event["id"] == json!(id) {
                if event["success"] != json!(true) {
                    bail!("{command} failed: {event}");
                }
                response = Some(event);
            } else if waiting.is_some_and(|t| event["type"] == t) {
                waiting = None;
            }
        }
    }

    pub(super) fn prompt(&mut self, message: &str) -> Result<()> {
        self.send(
            json!({"type": "prompt", "message": message}),
            Some("agent_end"),
        )?;
        Ok(())
    }

    pub(super) fn finish(mut self) -> Result<()> {
        drop(self.stdin);
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if self.child.try_wait()?.is_some() {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        self.child.kill()?;
        self.child.wait()?;
        Ok(())
    }
}

/// The id of the entry of `file` whose line holds `needle`, of type `message` with `role`.
pub(super) fn entry_id(file: &Path, role: &str, needle: &str) -> Result<String> {
    let text = std::fs::read_to_string(file)?;
    for line in text.lines() {
        let v: Value = serde_json::from_str(line)?;
        if v["type"] == "message" && v["message"]["role"] == role && line.contains(needle) {
            return Ok(v["id"].as_str().context("an entry without id")?.to_owned());
        }
    }
    bail!("no {role} entry with {needle} in {}", file.display())
}

fn header_id(file: &Path) -> Result<String> {
    let text = std::fs::read_to_string(file)?;
    let first: Value = serde_json::from_str(text.lines().next().context("an empty session")?)?;
    Ok(first["id"]
        .as_str()
        .context("a header without id")?
        .to_owned())
}

pub fn record(ctx: &Ctx) -> Result<Recording> {
    let cli = ctx
        .install
        .join("node_modules/@mariozechner/pi-coding-agent/dist/cli.js");
    let agent_dir = ctx.home.join(".pi/agent");
    std::fs::create_dir_all(agent_dir.join("extensions"))?;
    std::fs::write(agent_dir.join("extensions/branch-from.js"), EXTENSION)?;
    let models = json!({"providers": {PROVIDER: {
        "baseUrl": format!("{}/v1", ctx.base_url()),
        "api": "openai-completions",
        "apiKey": "sk-recorder-offline",
        "compat": {"supportsDeveloperRole": false, "supportsReasoningEffort": false},
        "models": [{"id": MODEL, "name": "Scripted", "reasoning": false, "input": ["text"],
                    "contextWindow": 200000, "maxTokens": 8192,
                    "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}}],
    }}});
    std::fs::write(
        agent_dir.join("models.json"),
        serde_json::to_string_pretty(&models)?,
    )?;
    let settings = json!({"enableInstallTelemetry": false, "defaultProvider": PROVIDER,
                          "defaultModel": MODEL, "quietStartup": true});
    std::fs::write(
        agent_dir.join("settings.json"),
        serde_json::to_string_pretty(&settings)?,
    )?;

    let mut m = Markers::new("qzp");
    let mut s = Script {
        summary_triggers: vec!["summary".into(), "summarize".into()],
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
            json!({"command": format!("echo {sh}in | sed s/in/out/")}),
        ),
    );
    s.on(
        &format!("{sh}out"),
        Reply::text(&format!("{r1} the shell ran.")),
    );

    // Turn 2: parallel calls (write and bash), then edit, then read.
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
    let edit = m.mark("main", "tool", "edit new text");
    let r2 = m.mark("main", "assistant", "reply of turn 2");
    s.on(
        &u2,
        Reply::call(
            "write",
            json!({"path": format!("{work}/notes.txt"), "content": format!("first line\n{write}\n")}),
        )
        .and_call(
            "bash",
            json!({"command": format!("printf '{read}%s\\n' read > seen.txt; echo {par}in | sed s/in/out/")}),
        )
        .with_text(&t2),
    );
    s.on(
        &format!("{par}out"),
        Reply::call(
            "edit",
            json!({"path": format!("{work}/notes.txt"),
                   "edits": [{"oldText": "first line", "newText": edit}]}),
        ),
    );
    s.on(
        "Successfully replaced",
        Reply::call("read", json!({"path": format!("{work}/seen.txt")})),
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
            "bash",
            json!({"command": format!("echo {fail}in | sed s/in/err/ >&2; exit 3")}),
        ),
    );
    s.on(
        &format!("{fail}err"),
        Reply::text(&format!("{r3} the command failed.")),
    );

    // Turn 4, then abandoned: the session continues from the end of turn 3.
    let u4 = m.mark("main", "user", "user prompt of the abandoned branch");
    let r4 = m.mark("main", "assistant", "reply on the abandoned branch");
    for marker in [&u4, &r4] {
        m.get_mut(marker).branch = "inactive";
    }
    s.on(&u4, Reply::text(&format!("{r4} on a branch left behind.")));
    let u5 = m.mark("main", "user", "user prompt of the branch taken");
    let r5 = m.mark("main", "assistant", "reply on the branch taken");
    s.on(&u5, Reply::text(&format!("{r5} on the branch taken.")));

    // A compaction, then a turn after it.
    let summary = m.mark("main", "context", "compaction summary");
    s.summary = Some(Reply::text(&format!(
        "## Goal\n{summary} the session so far."
    )));
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

    let pi = |args: &[&str]| {
        let mut cmd = ctx.command(Path::new("node"));
        cmd.env("PI_CODING_AGENT_DIR", &agent_dir)
            .env("PI_OFFLINE", "1")
            .env("PI_SKIP_VERSION_CHECK", "1")
            .env("PI_TELEMETRY", "0")
            .arg(&cli)
            .args(["--provider", PROVIDER, "--model", MODEL])
            .args(args);
        cmd
    };
    let mut rpc = Rpc::start(pi(&["--mode", "rpc"]))?;
    rpc.prompt(&format!("{u1} run a command"))?;
    rpc.prompt(&format!("{u2} write, edit, read"))?;
    rpc.prompt(&format!("{u3} fail once"))?;
    let state = rpc.send(json!({"type": "get_state"}), None)?;
    let main_file = PathBuf::from(
        state["data"]["sessionFile"]
            .as_str()
            .context("get_state without sessionFile")?,
    );
    let end_of_turn3 = entry_id(&main_file, "assistant", &r3)?;
    rpc.prompt(&format!("{u4} try one way"))?;
    rpc.send(
        json!({"type": "prompt", "message": format!("/branch-from {end_of_turn3}")}),
        None,
    )?;
    std::thread::sleep(Duration::from_secs(2));
    rpc.prompt(&format!("{u5} try another way"))?;
    rpc.send(json!({"type": "compact"}), None)?;
    rpc.prompt(&format!("{u6} go on"))?;
    let fork_from = entry_id(&main_file, "user", &u6)?;
    rpc.send(json!({"type": "fork", "entryId": fork_from}), None)?;
    rpc.prompt(&format!("{u7} in the fork"))?;
    let state = rpc.send(json!({"type": "get_state"}), None)?;
    let fork_file = PathBuf::from(
        state["data"]["sessionFile"]
            .as_str()
            .context("get_state without sessionFile")?,
    );
    rpc.finish()?;
    ctx.run(
        "resume (-p --session)",
        pi(&[
            "-p",
            "--session",
            &main_file.display().to_string(),
            &format!("{u8} resume"),
        ])
        .stdin(Stdio::null()),
    )?;

    // The fork holds the main session's active branch up to turn 6's prompt.
    m.inherit("main", "fork");
    for marker in [&u6, &r6, &u8, &r8] {
        m.get_mut(marker).sessions = vec!["main".into()];
    }
    for marker in [&u7, &r7] {
        m.get_mut(marker).sessions = vec!["fork".into()];
    }
    for marker in [&u4, &r4] {
        m.get_mut(marker).sessions = vec!["main".into()];
    }

    let sessions = BTreeMap::from([
        ("main".to_owned(), header_id(&main_file)?),
        ("fork".to_owned(), header_id(&fork_file)?),
    ]);
    Ok(Recording {
        tree: (agent_dir.join("sessions"), "sessions"),
        agent: "pi",
        version: ctx.version.clone(),
        sessions,
        markers: m,
        notes: vec![],
    })
}
