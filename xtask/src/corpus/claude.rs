//! Claude Code transcripts: `<projects>/<project-dir>/<session-id>.jsonl`.
//!
//! Each API response is written one content block per line, all lines chained by `parentUuid`;
//! tool results hang off their `tool_use` line (`sourceToolAssistantUUID`), so parallel calls
//! make sibling branches. Sessions also carry progress lines, file-history snapshots,
//! `turn_duration` lines, occasional compactions (a `compact_boundary` with `logicalParentUuid`
//! and an `isCompactSummary` user line) and occasional rewinds (an abandoned branch: a turn
//! whose successor hangs off the turn before it).

use std::io;
use std::path::Path;

use super::json::{self, Tag, Uuid, BASE62, HEX};
use super::needle::Slot;
use super::session::{Spec, Writer, Written};
use super::text::{self, Pools, Style};

const VERSIONS: &[&str] = &["2.1.7", "2.1.19", "2.1.31", "2.1.42", "2.1.88", "2.1.120"];
const MODELS: &[&str] = &[
    "claude-opus-4-5-20251101",
    "claude-opus-4-5-20251101",
    "claude-sonnet-4-5-20250929",
    "claude-opus-4-6",
    "claude-haiku-4-5-20251001",
];
const BRANCHES: &[&str] = &[
    "main",
    "main",
    "dev",
    "feat/paging",
    "fix/flaky-timeout",
    "refactor/decoder",
    "soph/chunking",
];
const SLUG_WORDS: &[&str] = &[
    "velvety", "nibbling", "squid", "quiet", "amber", "falcon", "rustling", "maple", "sleepy",
    "otter", "brisk", "lantern", "gentle", "comet", "woolly", "harbor", "dancing", "pebble",
];
const BASH_COMMANDS: &[&str] = &[
    "cargo test --workspace",
    "cargo clippy --all-targets -- -D warnings",
    "git status --short",
    "git log --oneline -20",
    "git diff main...HEAD --stat",
    "npm run build",
    "npm test -- --run",
    "python -m pytest -x -q",
    "ls -la",
    "rg -n 'TODO|FIXME' src",
    "go test ./...",
    "make lint",
];
const TOOL_ERRORS: &[&str] = &["Exit code 1", "Exit code 101", "Exit code 2"];

/// The directory Claude Code derives from a cwd: every non-alphanumeric byte becomes `-`.
pub fn project_dir(cwd: &str) -> String {
    cwd.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

/// Writes one session under `root` (the `projects` directory).
pub fn write(mut spec: Spec, pools: &Pools, root: &Path) -> io::Result<Written> {
    let session = Uuid::v4(&mut spec.rng);
    let rel = format!("{}/{}.jsonl", project_dir(spec.cwd), session.as_str());
    let target = spec.target;
    let cwd = spec.cwd;
    let mut w = Writer::create(spec, pools, &root.join(&rel))?;
    let slug = format!(
        "{}-{}-{}",
        w.rng.pick(SLUG_WORDS),
        w.rng.pick(SLUG_WORDS),
        w.rng.pick(SLUG_WORDS)
    );
    let next_compaction = if target > 2 << 20 {
        w.rng.log_uniform(1 << 20, 8 << 20)
    } else if w.rng.chance(0.12) {
        (w.rng.unit() * target as f64) as u64
    } else {
        u64::MAX
    };
    let mut c = Claude {
        session,
        cwd,
        version: w.rng.pick(VERSIONS),
        branch: w.rng.pick(BRANCHES),
        model: w.rng.pick(MODELS),
        slug,
        parent: None,
        context_tokens: 20_000,
        next_compaction,
        w,
    };
    c.session_start()?;
    let mut turns = 0u64;
    loop {
        if turns > 0 {
            if c.w.full(turns) {
                break;
            }
            if c.w.planter.wants_abandoned(c.w.out.bytes()) || c.w.rng.chance(0.015) {
                c.rewind()?;
            } else if c.w.out.bytes() >= c.next_compaction {
                c.compact()?;
            }
        }
        c.turn()?;
        turns += 1;
    }
    c.session_end()?;
    c.w.finish(session.as_str().to_string(), rel)
}

struct Claude<'a> {
    w: Writer<'a>,
    session: Uuid,
    cwd: &'static str,
    version: &'static str,
    branch: &'static str,
    model: &'static str,
    slug: String,
    /// The line the next conversational line hangs off.
    parent: Option<Uuid>,
    /// Grows with each response; reset by a compaction (realistic usage numbers).
    context_tokens: u64,
    next_compaction: u64,
}

/// One tool call of a response.
struct Call<'a> {
    tool: Tool,
    id: Tag,
    line: Uuid,
    /// The file a Read or Edit call names.
    path: String,
    input_a: &'a str,
    input_b: &'a str,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Tool {
    Bash,
    Read,
    Edit,
    Grep,
}

impl Tool {
    fn name(self) -> &'static str {
        match self {
            Tool::Bash => "Bash",
            Tool::Read => "Read",
            Tool::Edit => "Edit",
            Tool::Grep => "Grep",
        }
    }
}

impl<'a> Claude<'a> {
    /// `{"parentUuid":…,"isSidechain":false,…,"slug":…` (no closing brace).
    fn head(&mut self, parent: Option<Uuid>) {
        let l = &mut self.w.out.line;
        l.extend_from_slice(b"{\"parentUuid\":");
        match parent {
            Some(p) => p.put(l),
            None => l.extend_from_slice(b"null"),
        }
        self.envelope();
    }

    fn envelope(&mut self) {
        let l = &mut self.w.out.line;
        l.extend_from_slice(b",\"isSidechain\":false,\"userType\":\"external\",\"cwd\":");
        json::str(l, self.cwd);
        l.extend_from_slice(b",\"sessionId\":");
        self.session.put(l);
        l.extend_from_slice(b",\"version\":");
        json::str(l, self.version);
        l.extend_from_slice(b",\"gitBranch\":");
        json::str(l, self.branch);
        l.extend_from_slice(b",\"slug\":");
        json::str(l, &self.slug);
    }

    /// `,"uuid":…,"timestamp":…` (no closing brace).
    fn id_and_time(&mut self, uuid: Uuid) {
        let l = &mut self.w.out.line;
        l.extend_from_slice(b",\"uuid\":");
        uuid.put(l);
        l.extend_from_slice(b",\"timestamp\":");
        json::ts(l, self.w.now);
    }

    fn session_start(&mut self) -> io::Result<()> {
        if self.w.rng.chance(0.25) {
            for _ in 0..self.w.rng.range(1, 3) {
                let title = self.w.pools.title(&mut self.w.rng);
                let leaf = Uuid::v4(&mut self.w.rng);
                let l = &mut self.w.out.line;
                l.extend_from_slice(b"{\"type\":\"summary\",\"summary\":");
                json::str(l, &title);
                l.extend_from_slice(b",\"leafUuid\":");
                leaf.put(l);
                l.push(b'}');
                self.w.end()?;
            }
        }
        if self.w.rng.chance(0.7) {
            let uuid = Uuid::v4(&mut self.w.rng);
            let hook = Uuid::v4(&mut self.w.rng);
            self.head(None);
            let l = &mut self.w.out.line;
            l.extend_from_slice(b",\"type\":\"progress\",\"data\":{\"type\":\"hook_progress\",\"hookEvent\":\"SessionStart\",\"hookName\":\"SessionStart:startup\",\"command\":\"$CLAUDE_PROJECT_DIR/.claude/hooks/session-start.sh\"},\"parentToolUseID\":");
            hook.put(l);
            l.extend_from_slice(b",\"toolUseID\":");
            hook.put(l);
            self.id_and_time(uuid);
            self.w.out.line.push(b'}');
            self.w.end()?;
            self.parent = Some(uuid);
        }
        Ok(())
    }

    fn session_end(&mut self) -> io::Result<()> {
        if self.w.rng.chance(0.5) {
            let title = self.w.pools.title(&mut self.w.rng);
            let l = &mut self.w.out.line;
            l.extend_from_slice(b"{\"type\":\"ai-title\",\"aiTitle\":");
            json::str(l, &title);
            l.extend_from_slice(b",\"sessionId\":");
            self.session.put(l);
            l.push(b'}');
            self.w.end()?;
        }
        Ok(())
    }

    /// A turn on a branch the user then rewinds: the next turn hangs off the same parent.
    fn rewind(&mut self) -> io::Result<()> {
        let keep = self.parent;
        self.w.planter.live = false;
        self.turn()?;
        self.w.planter.live = true;
        self.parent = keep;
        Ok(())
    }

    fn compact(&mut self) -> io::Result<()> {
        self.w.advance(20_000, 120_000);
        let boundary = Uuid::v4(&mut self.w.rng);
        let l = &mut self.w.out.line;
        l.extend_from_slice(b"{\"parentUuid\":null,\"logicalParentUuid\":");
        match self.parent {
            Some(p) => p.put(l),
            None => l.extend_from_slice(b"null"),
        }
        self.envelope();
        let l = &mut self.w.out.line;
        l.extend_from_slice(b",\"type\":\"system\",\"subtype\":\"compact_boundary\",\"content\":\"Conversation compacted\",\"isMeta\":false,\"timestamp\":");
        json::ts(l, self.w.now);
        l.extend_from_slice(b",\"uuid\":");
        boundary.put(l);
        l.extend_from_slice(
            b",\"level\":\"info\",\"compactMetadata\":{\"trigger\":\"auto\",\"preTokens\":",
        );
        json::num(l, self.context_tokens);
        l.extend_from_slice(b"}}");
        self.w.end()?;

        self.w.now += 3;
        let summary = Uuid::v4(&mut self.w.rng);
        let needle = self.w.take(Slot::Context);
        let seq = self.w.out.seq();
        self.head(Some(boundary));
        self.w.out.line.extend_from_slice(b",\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"This session is being continued from a previous conversation that ran out of context. The conversation is summarized below:\\nAnalysis:\\n");
        let len = self.w.prose_len(1_500, 9_000);
        self.w.text(Style::Prose, len, needle.as_ref());
        self.w
            .out
            .line
            .extend_from_slice(b"\"},\"isVisibleInTranscriptOnly\":true,\"isCompactSummary\":true");
        self.id_and_time(summary);
        self.w.out.line.push(b'}');
        self.w.end()?;
        if let Some(n) = needle {
            self.w.record(n, seq, None, false);
        }
        self.parent = Some(summary);
        self.context_tokens = 18_000;
        self.next_compaction = self.w.out.bytes() + self.w.rng.log_uniform(2 << 20, 10 << 20);
        Ok(())
    }

    fn turn(&mut self) -> io::Result<()> {
        self.w.advance(4_000, 900_000);
        if self.w.rng.chance(0.03) {
            self.w.advance(3_600_000, 40_000_000);
        }
        let started = self.w.now;
        self.user_prompt()?;
        if self.w.rng.chance(0.1) || self.w.wants(Slot::Context) {
            self.meta_line()?;
        }
        let mut rounds = 1;
        while rounds < self.w.max_steps() && self.w.rng.chance(0.72) {
            rounds += 1;
        }
        for _ in 0..rounds {
            self.round()?;
        }
        self.final_reply()?;
        if self.w.rng.chance(0.2) {
            self.stop_hook()?;
        }
        self.w.now += 40;
        let uuid = Uuid::v4(&mut self.w.rng);
        self.head(self.parent);
        let l = &mut self.w.out.line;
        l.extend_from_slice(b",\"type\":\"system\",\"subtype\":\"turn_duration\",\"durationMs\":");
        json::num(l, (self.w.now - started) as u64);
        l.extend_from_slice(b",\"isMeta\":false");
        self.id_and_time(uuid);
        self.w.out.line.push(b'}');
        self.w.end()?;
        self.parent = Some(uuid);
        Ok(())
    }

    fn user_prompt(&mut self) -> io::Result<()> {
        let uuid = Uuid::v4(&mut self.w.rng);
        self.snapshot(uuid)?;
        let needle = self.w.take(Slot::UserText);
        let seq = self.w.out.seq();
        self.head(self.parent);
        self.w
            .out
            .line
            .extend_from_slice(b",\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"");
        let len = self.w.prose_len(15, 1_200);
        self.w.text(Style::Prose, len, needle.as_ref());
        if self.w.rng.chance(0.05) {
            self.w.out.line.extend_from_slice(b"\\n\\n```\\n");
            let len = self.w.prose_len(300, 8_000);
            self.w.text(Style::Shell, len, None);
            self.w.out.line.extend_from_slice(b"\\n```");
        }
        self.w.out.line.extend_from_slice(b"\"}");
        self.id_and_time(uuid);
        self.w.out.line.extend_from_slice(b",\"thinkingMetadata\":{\"level\":\"high\",\"disabled\":false,\"triggers\":[]},\"todos\":[],\"permissionMode\":\"default\"}");
        self.w.end()?;
        if let Some(n) = needle {
            self.w.record(n, seq, None, false);
        }
        self.parent = Some(uuid);
        Ok(())
    }

    fn snapshot(&mut self, message: Uuid) -> io::Result<()> {
        let files = if self.w.rng.chance(0.6) {
            0
        } else {
            self.w.rng.range(1, 4)
        };
        let l = &mut self.w.out.line;
        l.extend_from_slice(b"{\"type\":\"file-history-snapshot\",\"messageId\":");
        message.put(l);
        l.extend_from_slice(b",\"snapshot\":{\"messageId\":");
        message.put(l);
        l.extend_from_slice(b",\"trackedFileBackups\":{");
        for i in 0..files {
            if i > 0 {
                l.push(b',');
            }
            let path = text::path(&mut self.w.rng);
            json::str(l, &path);
            l.extend_from_slice(b":{\"backupFileName\":\"");
            json::random_chars(l, &mut self.w.rng, HEX, 16);
            l.extend_from_slice(b"@v");
            let version = self.w.rng.range(1, 6);
            json::num(l, version);
            l.extend_from_slice(b"\",\"version\":");
            json::num(l, version);
            l.extend_from_slice(b",\"backupTime\":");
            json::ts(l, self.w.now - 1_000);
            l.push(b'}');
        }
        l.extend_from_slice(b"},\"timestamp\":");
        json::ts(l, self.w.now);
        l.extend_from_slice(b"},\"isSnapshotUpdate\":false}");
        self.w.end()
    }

    /// An injected user line (`isMeta`): a caveat or a system reminder.
    fn meta_line(&mut self) -> io::Result<()> {
        self.w.now += 2;
        let uuid = Uuid::v4(&mut self.w.rng);
        let needle = self.w.take(Slot::Context);
        let seq = self.w.out.seq();
        self.head(self.parent);
        let (open, close): (&[u8], &[u8]) = if self.w.rng.chance(0.5) {
            (b"<system-reminder>\\n", b"\\n</system-reminder>")
        } else {
            (
                b"<local-command-caveat>Caveat: The messages below were generated by the user while running local commands. ",
                b"</local-command-caveat>",
            )
        };
        self.w
            .out
            .line
            .extend_from_slice(b",\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"");
        self.w.out.line.extend_from_slice(open);
        let len = self.w.prose_len(100, 2_500);
        self.w.text(Style::Prose, len, needle.as_ref());
        self.w.out.line.extend_from_slice(close);
        self.w.out.line.extend_from_slice(b"\"},\"isMeta\":true");
        self.id_and_time(uuid);
        self.w.out.line.push(b'}');
        self.w.end()?;
        if let Some(n) = needle {
            self.w.record(n, seq, None, false);
        }
        self.parent = Some(uuid);
        Ok(())
    }

    /// `{…envelope…,"message":{"model":…,"id":…,…,"content":[` (the block follows).
    fn assistant_head(&mut self, msg: Tag) {
        self.head(self.parent);
        let l = &mut self.w.out.line;
        l.extend_from_slice(b",\"message\":{\"model\":");
        json::str(l, self.model);
        l.extend_from_slice(b",\"id\":");
        msg.put(l);
        l.extend_from_slice(b",\"type\":\"message\",\"role\":\"assistant\",\"content\":[");
    }

    /// `],"stop_reason":…,"usage":{…}},"requestId":…,"type":"assistant","uuid":…,"timestamp":…}`.
    fn assistant_tail(&mut self, uuid: Uuid, req: Tag, stop: Option<&str>, output_tokens: u64) {
        let cache_read = self.context_tokens;
        let created = self.w.rng.range(0, 3_000);
        let l = &mut self.w.out.line;
        l.extend_from_slice(b"],\"stop_reason\":");
        match stop {
            Some(s) => json::str(l, s),
            None => l.extend_from_slice(b"null"),
        }
        l.extend_from_slice(b",\"stop_sequence\":null,\"usage\":{\"input_tokens\":");
        json::num(l, 1 + cache_read % 9);
        l.extend_from_slice(b",\"cache_creation_input_tokens\":");
        json::num(l, created);
        l.extend_from_slice(b",\"cache_read_input_tokens\":");
        json::num(l, cache_read);
        l.extend_from_slice(b",\"cache_creation\":{\"ephemeral_5m_input_tokens\":");
        json::num(l, created);
        l.extend_from_slice(b",\"ephemeral_1h_input_tokens\":0},\"output_tokens\":");
        json::num(l, output_tokens);
        l.extend_from_slice(b",\"service_tier\":\"standard\"}},\"requestId\":");
        req.put(l);
        l.extend_from_slice(b",\"type\":\"assistant\"");
        self.id_and_time(uuid);
        self.w.out.line.push(b'}');
    }

    fn thinking(&mut self, msg: Tag, req: Tag) -> io::Result<()> {
        let uuid = Uuid::v4(&mut self.w.rng);
        let needle = self.w.take(Slot::Reasoning);
        let seq = self.w.out.seq();
        self.assistant_head(msg);
        self.w
            .out
            .line
            .extend_from_slice(b"{\"type\":\"thinking\",\"thinking\":\"");
        let len = self.w.prose_len(80, 3_000);
        self.w.text(Style::Prose, len, needle.as_ref());
        self.w.out.line.extend_from_slice(b"\",\"signature\":\"Eo");
        let sig = self.w.rng.range(200, 1_600) as usize;
        self.w.pools.b64(&mut self.w.rng, sig, &mut self.w.out.line);
        self.w.out.line.extend_from_slice(b"\"}");
        self.assistant_tail(uuid, req, None, 1);
        self.w.end()?;
        if let Some(n) = needle {
            self.w.record(n, seq, None, false);
        }
        self.parent = Some(uuid);
        Ok(())
    }

    fn text_block(&mut self, msg: Tag, req: Tag, len: usize, stop: Option<&str>) -> io::Result<()> {
        let uuid = Uuid::v4(&mut self.w.rng);
        let needle = self.w.take(Slot::AssistantText);
        let seq = self.w.out.seq();
        self.assistant_head(msg);
        self.w
            .out
            .line
            .extend_from_slice(b"{\"type\":\"text\",\"text\":\"");
        self.w.text(Style::Prose, len, needle.as_ref());
        self.w.out.line.extend_from_slice(b"\"}");
        self.assistant_tail(uuid, req, stop, (len / 4) as u64);
        self.w.end()?;
        if let Some(n) = needle {
            self.w.record(n, seq, None, false);
        }
        self.parent = Some(uuid);
        Ok(())
    }

    /// One API response that calls tools, then the tools' results.
    fn round(&mut self) -> io::Result<()> {
        let msg = Tag::new(&mut self.w.rng, "msg_01", BASE62, 22);
        let req = Tag::new(&mut self.w.rng, "req_011C", BASE62, 18);
        self.context_tokens += self.w.rng.range(300, 6_000);
        self.w.advance(800, 12_000);
        if self.w.rng.chance(0.55) || self.w.wants(Slot::Reasoning) {
            self.thinking(msg, req)?;
            self.w.advance(50, 3_000);
        }
        if self.w.rng.chance(0.45) || self.w.wants(Slot::AssistantText) {
            let len = self.w.prose_len(30, 700);
            self.text_block(msg, req, len, None)?;
            self.w.advance(50, 2_000);
        }
        let n = if self.w.rng.chance(0.18) {
            self.w.rng.range(2, 3)
        } else {
            1
        };
        let mut calls: Vec<Call<'a>> = Vec::with_capacity(n as usize);
        for i in 0..n {
            let call = self.tool_use(msg, req, i + 1 == n)?;
            calls.push(call);
            self.w.advance(30, 600);
        }
        for call in &calls {
            if call.tool == Tool::Bash && self.w.rng.chance(0.2) {
                self.bash_progress(call)?;
            }
            self.w.advance(40, 40_000);
            self.tool_result(call)?;
        }
        Ok(())
    }

    fn tool_use(&mut self, msg: Tag, req: Tag, last: bool) -> io::Result<Call<'a>> {
        let uuid = Uuid::v4(&mut self.w.rng);
        let needle = self.w.take(Slot::ToolInput);
        let tool = if needle.is_some() || self.w.wants(Slot::ToolOutput) {
            if self.w.rng.chance(0.8) || needle.is_some() {
                Tool::Bash
            } else {
                Tool::Grep
            }
        } else {
            match self.w.rng.below(20) {
                0..=8 => Tool::Bash,
                9..=13 => Tool::Read,
                14..=16 => Tool::Edit,
                _ => Tool::Grep,
            }
        };
        let pools: &'a Pools = self.w.pools;
        let mut call = Call {
            tool,
            id: Tag::new(&mut self.w.rng, "toolu_01", BASE62, 22),
            line: uuid,
            path: String::new(),
            input_a: "",
            input_b: "",
        };
        let seq = self.w.out.seq();
        self.assistant_head(msg);
        let l = &mut self.w.out.line;
        l.extend_from_slice(b"{\"type\":\"tool_use\",\"id\":");
        call.id.put(l);
        l.extend_from_slice(b",\"name\":");
        json::str(l, tool.name());
        l.extend_from_slice(b",\"input\":{");
        match tool {
            Tool::Bash => {
                l.extend_from_slice(b"\"command\":\"");
                match &needle {
                    Some(n) => {
                        l.extend_from_slice(b"grep -rn ");
                        l.extend_from_slice(n.raw.as_bytes());
                        l.extend_from_slice(b" . | head -50");
                    }
                    None => json::esc(l, self.w.rng.pick(BASH_COMMANDS).as_bytes()),
                }
                l.extend_from_slice(b"\",\"description\":\"");
                json::esc(l, pools.slice(&mut self.w.rng, Style::Prose, 40).as_bytes());
                l.extend_from_slice(b"\"");
            }
            Tool::Read => {
                call.path = format!("{}/{}", self.cwd, text::path(&mut self.w.rng));
                l.extend_from_slice(b"\"file_path\":");
                json::str(l, &call.path);
            }
            Tool::Edit => {
                call.path = format!("{}/{}", self.cwd, text::path(&mut self.w.rng));
                let a = self.w.rng.log_uniform(40, 900) as usize;
                let b = self.w.rng.log_uniform(40, 900) as usize;
                call.input_a = pools.slice(&mut self.w.rng, Style::Code, a);
                call.input_b = pools.slice(&mut self.w.rng, Style::Code, b);
                l.extend_from_slice(b"\"file_path\":");
                json::str(l, &call.path);
                l.extend_from_slice(b",\"old_string\":");
                json::str(l, call.input_a);
                l.extend_from_slice(b",\"new_string\":");
                json::str(l, call.input_b);
            }
            Tool::Grep => {
                let pattern = text::snake(&mut self.w.rng);
                l.extend_from_slice(b"\"pattern\":");
                json::str(l, &pattern);
                l.extend_from_slice(b",\"path\":");
                json::str(l, self.cwd);
                l.extend_from_slice(b",\"output_mode\":\"content\",\"-n\":true");
            }
        }
        self.w.out.line.extend_from_slice(b"}}");
        let out_tokens = self.w.rng.range(20, 400);
        self.assistant_tail(uuid, req, last.then_some("tool_use"), out_tokens);
        self.w.end()?;
        if let Some(n) = needle {
            self.w.record(n, seq, None, false);
        }
        self.parent = Some(uuid);
        Ok(call)
    }

    fn bash_progress(&mut self, call: &Call<'_>) -> io::Result<()> {
        for i in 0..self.w.rng.range(1, 3) {
            self.w.advance(1_000, 5_000);
            let uuid = Uuid::v4(&mut self.w.rng);
            let len = self.w.prose_len(40, 1_500);
            self.head(Some(call.line));
            let l = &mut self.w.out.line;
            l.extend_from_slice(
                b",\"type\":\"progress\",\"data\":{\"type\":\"bash_progress\",\"output\":\"",
            );
            let start = l.len();
            self.w.pools.fill(&mut self.w.rng, Style::Shell, len, l);
            let copy = l[start..].to_vec();
            l.extend_from_slice(b"\",\"fullOutput\":\"");
            l.extend_from_slice(&copy);
            l.extend_from_slice(b"\",\"elapsedTimeSeconds\":");
            json::num(l, 3 * (i + 1));
            l.extend_from_slice(b",\"totalLines\":");
            json::num(l, (len / 60) as u64 + 1);
            l.extend_from_slice(b",\"timeoutMs\":120000},\"toolUseID\":\"bash-progress-");
            json::num(l, i);
            l.extend_from_slice(b"\",\"parentToolUseID\":");
            call.id.put(l);
            self.id_and_time(uuid);
            self.w.out.line.push(b'}');
            self.w.end()?;
        }
        Ok(())
    }

    /// The user line with a call's `tool_result`, hanging off the call's line.
    fn tool_result(&mut self, call: &Call<'_>) -> io::Result<()> {
        let uuid = Uuid::v4(&mut self.w.rng);
        let needle = match call.tool {
            Tool::Bash | Tool::Grep => self.w.take(Slot::ToolOutput),
            Tool::Read | Tool::Edit => None,
        };
        let failed = call.tool == Tool::Bash && needle.is_none() && self.w.rng.chance(0.06);
        let seq = self.w.out.seq();
        // The output, escaped, goes to the scratch buffer: it is written twice.
        self.w.scratch.clear();
        let pools = self.w.pools;
        let mut raw_code = "";
        match call.tool {
            Tool::Bash | Tool::Grep => {
                if failed {
                    let code = self.w.rng.pick(TOOL_ERRORS);
                    self.w.scratch.extend_from_slice(code.as_bytes());
                    self.w.scratch.extend_from_slice(b"\\n");
                }
                let len = self.w.output_len(30_000);
                self.w.scratch_text(Style::Shell, len, needle.as_ref());
            }
            Tool::Read => {
                let len = self.w.output_len(90_000);
                raw_code = pools.slice(&mut self.w.rng, Style::Code, len);
                numbered(raw_code, 1, &mut self.w.scratch);
            }
            Tool::Edit => {
                self.w.scratch.extend_from_slice(b"The file ");
                json::esc(&mut self.w.scratch, call.path.as_bytes());
                self.w.scratch.extend_from_slice(b" has been updated. Here's the result of running `cat -n` on a snippet of the edited file:\\n");
                let start = self.w.rng.range(1, 400) as usize;
                numbered(call.input_b, start, &mut self.w.scratch);
                let len = self.w.output_len(60_000).max(200);
                raw_code = pools.slice(&mut self.w.rng, Style::Code, len);
            }
        }
        self.head(Some(call.line));
        let l = &mut self.w.out.line;
        l.extend_from_slice(
            b",\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":[{\"tool_use_id\":",
        );
        call.id.put(l);
        l.extend_from_slice(b",\"type\":\"tool_result\",\"content\":\"");
        l.extend_from_slice(&self.w.scratch);
        l.extend_from_slice(if failed {
            b"\",\"is_error\":true}]}"
        } else {
            b"\",\"is_error\":false}]}"
        });
        self.id_and_time(uuid);
        let l = &mut self.w.out.line;
        l.extend_from_slice(b",\"toolUseResult\":");
        match call.tool {
            Tool::Bash if failed => {
                l.extend_from_slice(b"\"Error: ");
                l.extend_from_slice(&self.w.scratch);
                l.push(b'"');
            }
            Tool::Bash => {
                l.extend_from_slice(b"{\"stdout\":\"");
                l.extend_from_slice(&self.w.scratch);
                l.extend_from_slice(b"\",\"stderr\":\"\",\"interrupted\":false,\"isImage\":false}");
            }
            Tool::Grep => {
                let lines = self.w.scratch.windows(2).filter(|w| w == b"\\n").count() as u64 + 1;
                l.extend_from_slice(
                    b"{\"mode\":\"content\",\"numFiles\":0,\"filenames\":[],\"content\":\"",
                );
                l.extend_from_slice(&self.w.scratch);
                l.extend_from_slice(b"\",\"numLines\":");
                json::num(l, lines);
                l.push(b'}');
            }
            Tool::Read => {
                let lines = raw_code.lines().count() as u64;
                l.extend_from_slice(b"{\"type\":\"text\",\"file\":{\"filePath\":");
                json::str(l, &call.path);
                l.extend_from_slice(b",\"content\":");
                json::str(l, raw_code);
                l.extend_from_slice(b",\"numLines\":");
                json::num(l, lines);
                l.extend_from_slice(b",\"startLine\":1,\"totalLines\":");
                json::num(l, lines);
                l.extend_from_slice(b"}}");
            }
            Tool::Edit => {
                l.extend_from_slice(b"{\"filePath\":");
                json::str(l, &call.path);
                l.extend_from_slice(b",\"oldString\":");
                json::str(l, call.input_a);
                l.extend_from_slice(b",\"newString\":");
                json::str(l, call.input_b);
                l.extend_from_slice(b",\"originalFile\":");
                json::str(l, raw_code);
                l.extend_from_slice(b",\"structuredPatch\":[{\"oldStart\":1,\"oldLines\":");
                json::num(l, call.input_a.lines().count() as u64);
                l.extend_from_slice(b",\"newStart\":1,\"newLines\":");
                json::num(l, call.input_b.lines().count() as u64);
                l.extend_from_slice(b",\"lines\":[");
                let mut first = true;
                for (sign, text) in [("-", call.input_a), ("+", call.input_b)] {
                    for line in text.lines() {
                        if !first {
                            l.push(b',');
                        }
                        first = false;
                        l.push(b'"');
                        l.extend_from_slice(sign.as_bytes());
                        json::esc(l, line.as_bytes());
                        l.push(b'"');
                    }
                }
                l.extend_from_slice(b"]}],\"userModified\":false,\"replaceAll\":false}");
            }
        }
        l.extend_from_slice(b",\"sourceToolAssistantUUID\":");
        call.line.put(l);
        l.push(b'}');
        self.w.end()?;
        if let Some(n) = needle {
            self.w.record(n, seq, None, false);
        }
        self.parent = Some(uuid);
        Ok(())
    }

    fn final_reply(&mut self) -> io::Result<()> {
        let msg = Tag::new(&mut self.w.rng, "msg_01", BASE62, 22);
        let req = Tag::new(&mut self.w.rng, "req_011C", BASE62, 18);
        self.context_tokens += self.w.rng.range(300, 4_000);
        self.w.advance(800, 15_000);
        if self.w.rng.chance(0.3) {
            self.thinking(msg, req)?;
            self.w.advance(50, 3_000);
        }
        let len = self.w.prose_len(60, 3_000);
        self.text_block(msg, req, len, Some("end_turn"))
    }

    fn stop_hook(&mut self) -> io::Result<()> {
        self.w.now += 90;
        let uuid = Uuid::v4(&mut self.w.rng);
        let hook = Uuid::v4(&mut self.w.rng);
        self.head(self.parent);
        let l = &mut self.w.out.line;
        l.extend_from_slice(b",\"type\":\"system\",\"subtype\":\"stop_hook_summary\",\"hookCount\":1,\"hookInfos\":[{\"command\":\"$CLAUDE_PROJECT_DIR/.claude/hooks/stop.sh\"}],\"hookErrors\":[],\"preventedContinuation\":false,\"stopReason\":\"\",\"hasOutput\":false,\"level\":\"suggestion\",\"toolUseID\":");
        hook.put(l);
        self.id_and_time(uuid);
        self.w.out.line.push(b'}');
        self.w.end()?;
        self.parent = Some(uuid);
        Ok(())
    }
}

/// Appends `code` as `cat -n` shows it (`     1\t…`), escaped.
fn numbered(code: &str, start: usize, out: &mut Vec<u8>) {
    for (i, line) in code.lines().enumerate() {
        let n = (start + i) as u64;
        let digits = if n == 0 { 1 } else { n.ilog10() as usize + 1 };
        out.extend(std::iter::repeat_n(b' ', 6usize.saturating_sub(digits)));
        json::num(out, n);
        out.extend_from_slice(b"\\t");
        json::esc(out, line.as_bytes());
        out.extend_from_slice(b"\\n");
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn project_dir_replaces_every_non_alphanumeric() {
        assert_eq!(
            super::project_dir("/home/u/my_proj.v2"),
            "-home-u-my-proj-v2"
        );
    }
}
