//! pi sessions (version 3): `<sessions>/--<encoded-cwd>--/<timestamp>_<session-id>.jsonl`.
//!
//! A header line, then tree entries (`id`/`parentId`): model and thinking-level changes,
//! messages (user; assistant with thinking, text and tool calls in one line; one toolResult per
//! call), context messages, compactions and occasional branches (turns abandoned by `/tree`,
//! optionally followed by a `branch_summary`). The active branch is the last entry's ancestry.

use std::collections::HashSet;
use std::io;
use std::path::Path;

use super::json::{self, Tag, Uuid, BASE62, HEX};
use super::needle::{Needle, Slot};
use super::session::{Spec, Writer, Written};
use super::text::{self, Pools, Style};

/// The directory pi derives from a cwd.
pub fn session_dir(cwd: &str) -> String {
    let trimmed = cwd.strip_prefix(['/', '\\']).unwrap_or(cwd);
    format!("--{}--", trimmed.replace(['/', '\\', ':'], "-"))
}

/// Writes one session under `root` (the `sessions` directory).
pub fn write(mut spec: Spec, pools: &Pools, root: &Path) -> io::Result<Written> {
    let start = spec.start_ms;
    let id = Uuid::v7(&mut spec.rng, start);
    let mut stamp = Vec::new();
    json::iso(&mut stamp, start, b'-', b'-');
    let rel = format!(
        "{}/{}_{}.jsonl",
        session_dir(spec.cwd),
        String::from_utf8(stamp).expect("ASCII"),
        id.as_str()
    );
    let target = spec.target;
    let cwd = spec.cwd;
    let w = Writer::create(spec, pools, &root.join(&rel))?;
    let mut p = Pi {
        w,
        cwd,
        parent: None,
        ids: HashSet::new(),
        model: &MODELS[0],
        last_user: None,
        context_tokens: 8_000,
        next_compaction: 0,
    };
    p.next_compaction = if target > 2 << 20 {
        p.w.rng.log_uniform(1 << 20, 6 << 20)
    } else if p.w.rng.chance(0.12) {
        (p.w.rng.unit() * target as f64) as u64
    } else {
        u64::MAX
    };
    p.header(id)?;
    let mut turns = 0u64;
    loop {
        if turns > 0 {
            if p.w.full(turns) {
                break;
            }
            if p.w.planter.wants_abandoned(p.w.out.bytes()) || p.w.rng.chance(0.02) {
                p.branch()?;
            } else if p.w.out.bytes() >= p.next_compaction {
                p.compaction()?;
            } else if p.w.rng.chance(0.03) {
                p.model_change()?;
            }
        }
        p.turn()?;
        turns += 1;
    }
    p.w.finish(id.as_str().to_string(), rel)
}

struct Model {
    provider: &'static str,
    api: &'static str,
    id: &'static str,
}

const MODELS: &[Model] = &[
    Model {
        provider: "anthropic",
        api: "anthropic-messages",
        id: "claude-sonnet-4-5",
    },
    Model {
        provider: "anthropic",
        api: "anthropic-messages",
        id: "claude-opus-4-5",
    },
    Model {
        provider: "openai",
        api: "openai-responses",
        id: "gpt-5.1-codex",
    },
    Model {
        provider: "google",
        api: "google-generative-ai",
        id: "gemini-2.5-pro",
    },
];

/// An entry id: 8 hex digits, unique in the file.
#[derive(Clone, Copy)]
struct EntryId([u8; 8]);

impl EntryId {
    fn put(&self, out: &mut Vec<u8>) {
        out.push(b'"');
        out.extend_from_slice(&self.0);
        out.push(b'"');
    }
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
            Tool::Bash => "bash",
            Tool::Read => "read",
            Tool::Edit => "edit",
            Tool::Grep => "grep",
        }
    }
}

struct Call<'a> {
    tool: Tool,
    id: Tag,
    old: &'a str,
    new: &'a str,
}

struct Pi<'a> {
    w: Writer<'a>,
    cwd: &'static str,
    /// The current leaf: the next entry's parent.
    parent: Option<EntryId>,
    ids: HashSet<[u8; 8]>,
    model: &'static Model,
    last_user: Option<EntryId>,
    context_tokens: u64,
    next_compaction: u64,
}

impl<'a> Pi<'a> {
    fn new_id(&mut self) -> EntryId {
        loop {
            let mut id = [0u8; 8];
            for b in &mut id {
                *b = HEX[self.w.rng.below(16) as usize];
            }
            if self.ids.insert(id) {
                return EntryId(id);
            }
        }
    }

    /// `{"type":"<kind>","id":…,"parentId":…,"timestamp":…` (no closing brace); the new entry
    /// becomes the leaf.
    fn entry(&mut self, kind: &str) -> EntryId {
        let id = self.new_id();
        let l = &mut self.w.out.line;
        l.extend_from_slice(b"{\"type\":\"");
        l.extend_from_slice(kind.as_bytes());
        l.extend_from_slice(b"\",\"id\":");
        id.put(l);
        l.extend_from_slice(b",\"parentId\":");
        match self.parent {
            Some(p) => p.put(l),
            None => l.extend_from_slice(b"null"),
        }
        l.extend_from_slice(b",\"timestamp\":");
        json::ts(l, self.w.now);
        self.parent = Some(id);
        id
    }

    fn header(&mut self, id: Uuid) -> io::Result<()> {
        let l = &mut self.w.out.line;
        l.extend_from_slice(b"{\"type\":\"session\",\"version\":3,\"id\":");
        id.put(l);
        l.extend_from_slice(b",\"timestamp\":");
        json::ts(l, self.w.now);
        l.extend_from_slice(b",\"cwd\":");
        json::str(l, self.cwd);
        l.push(b'}');
        self.w.end()?;
        self.w.now += 120;
        self.model_change()?;
        self.entry("thinking_level_change");
        let level = self.w.rng.pick(&["off", "low", "medium", "high"]);
        self.w.out.line.extend_from_slice(b",\"thinkingLevel\":");
        json::str(&mut self.w.out.line, level);
        self.w.out.line.push(b'}');
        self.w.end()
    }

    fn model_change(&mut self) -> io::Result<()> {
        self.model = &MODELS[self.w.rng.skewed(MODELS.len())];
        self.entry("model_change");
        let l = &mut self.w.out.line;
        l.extend_from_slice(b",\"provider\":");
        json::str(l, self.model.provider);
        l.extend_from_slice(b",\"modelId\":");
        json::str(l, self.model.id);
        l.push(b'}');
        self.w.end()
    }

    /// A turn the user abandons with `/tree`: the session continues from before it.
    fn branch(&mut self) -> io::Result<()> {
        let keep = self.parent;
        let keep_user = self.last_user;
        self.w.planter.live = false;
        self.turn()?;
        self.w.planter.live = true;
        self.parent = keep;
        self.last_user = keep_user;
        if self.w.rng.chance(0.6) {
            self.w.advance(5_000, 120_000);
            let needle = self.w.take(Slot::Context);
            let seq = self.w.out.seq();
            self.entry("branch_summary");
            let l = &mut self.w.out.line;
            l.extend_from_slice(b",\"fromId\":");
            match keep {
                Some(k) => k.put(l),
                None => l.extend_from_slice(b"\"root\""),
            }
            l.extend_from_slice(b",\"summary\":\"The user explored a different direction: ");
            let len = self.w.prose_len(200, 2_000);
            self.w.text(Style::Prose, len, needle.as_ref());
            self.w.out.line.extend_from_slice(
                b"\",\"details\":{\"readFiles\":[],\"modifiedFiles\":[]},\"fromHook\":false}",
            );
            self.w.end()?;
            if let Some(n) = needle {
                self.w.record(n, seq, None, false);
            }
        }
        Ok(())
    }

    fn compaction(&mut self) -> io::Result<()> {
        self.w.advance(10_000, 90_000);
        let needle = self.w.take(Slot::Context);
        let seq = self.w.out.seq();
        let kept = self.last_user;
        self.entry("compaction");
        self.w
            .out
            .line
            .extend_from_slice(b",\"summary\":\"## Goal\\n");
        let len = self.w.prose_len(800, 6_000);
        self.w.text(Style::Prose, len, needle.as_ref());
        let l = &mut self.w.out.line;
        l.extend_from_slice(b"\\n\\n## Next Steps\\n1. Continue.\"");
        if let Some(k) = kept {
            l.extend_from_slice(b",\"firstKeptEntryId\":");
            k.put(l);
        }
        l.extend_from_slice(b",\"tokensBefore\":");
        json::num(l, self.context_tokens);
        l.extend_from_slice(b",\"details\":{\"readFiles\":[");
        let path = text::path(&mut self.w.rng);
        json::str(l, &path);
        l.extend_from_slice(b"],\"modifiedFiles\":[]},\"fromHook\":false}");
        self.w.end()?;
        if let Some(n) = needle {
            self.w.record(n, seq, None, false);
        }
        self.context_tokens = 12_000;
        self.next_compaction = self.w.out.bytes() + self.w.rng.log_uniform(2 << 20, 8 << 20);
        Ok(())
    }

    fn turn(&mut self) -> io::Result<()> {
        self.w.advance(4_000, 900_000);
        if self.w.rng.chance(0.03) {
            self.w.advance(3_600_000, 40_000_000);
        }
        self.user()?;
        if self.w.rng.chance(0.05) || self.w.wants(Slot::Context) {
            self.custom_message()?;
        }
        let mut steps = 1;
        while steps < self.w.max_steps().min(12) && self.w.rng.chance(0.68) {
            steps += 1;
        }
        for _ in 0..steps {
            self.w.advance(1_000, 20_000);
            let calls = self.assistant(true)?;
            for call in &calls {
                self.w.advance(30, 40_000);
                self.tool_result(call)?;
            }
        }
        self.w.advance(1_000, 20_000);
        self.assistant(false)?;
        Ok(())
    }

    fn user(&mut self) -> io::Result<()> {
        let needle = self.w.take(Slot::UserText);
        let seq = self.w.out.seq();
        let id = self.entry("message");
        self.w.out.line.extend_from_slice(
            b",\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"",
        );
        let len = self.w.prose_len(15, 1_200);
        self.w.text(Style::Prose, len, needle.as_ref());
        self.w.out.line.extend_from_slice(b"\"}],\"timestamp\":");
        json::num(&mut self.w.out.line, (self.w.now - 2) as u64);
        self.w.out.line.extend_from_slice(b"}}");
        self.w.end()?;
        if let Some(n) = needle {
            self.w.record(n, seq, None, false);
        }
        if self.w.planter.live {
            self.last_user = Some(id);
        }
        Ok(())
    }

    /// An extension's injected message (context).
    fn custom_message(&mut self) -> io::Result<()> {
        self.w.now += 5;
        let needle = self.w.take(Slot::Context);
        let seq = self.w.out.seq();
        let id = self.new_id();
        let l = &mut self.w.out.line;
        l.extend_from_slice(
            b"{\"type\":\"custom_message\",\"customType\":\"project-context\",\"content\":\"",
        );
        let len = self.w.prose_len(100, 2_000);
        self.w.text(Style::Prose, len, needle.as_ref());
        let l = &mut self.w.out.line;
        l.extend_from_slice(b"\",\"display\":false,\"id\":");
        id.put(l);
        l.extend_from_slice(b",\"parentId\":");
        match self.parent {
            Some(p) => p.put(l),
            None => l.extend_from_slice(b"null"),
        }
        l.extend_from_slice(b",\"timestamp\":");
        json::ts(l, self.w.now);
        l.push(b'}');
        self.parent = Some(id);
        self.w.end()?;
        if let Some(n) = needle {
            self.w.record(n, seq, None, false);
        }
        Ok(())
    }

    /// One assistant message; with `tools`, it ends in tool calls, which are returned.
    fn assistant(&mut self, tools: bool) -> io::Result<Vec<Call<'a>>> {
        let mut calls = Vec::new();
        let mut planted: Vec<Needle> = Vec::new();
        let seq = self.w.out.seq();
        let message_ms = self.w.now - self.w.rng.range(200, 9_000) as i64;
        self.entry("message");
        self.w
            .out
            .line
            .extend_from_slice(b",\"message\":{\"role\":\"assistant\",\"content\":[");
        let mut parts = 0;
        if self.w.rng.chance(if tools { 0.6 } else { 0.3 }) || self.w.wants(Slot::Reasoning) {
            let needle = self.w.take(Slot::Reasoning);
            self.w
                .out
                .line
                .extend_from_slice(b"{\"type\":\"thinking\",\"thinking\":\"");
            let len = self.w.prose_len(60, 2_500);
            self.w.text(Style::Prose, len, needle.as_ref());
            self.w
                .out
                .line
                .extend_from_slice(b"\",\"thinkingSignature\":\"");
            self.signature();
            self.w.out.line.extend_from_slice(b"\"}");
            planted.extend(needle);
            parts += 1;
        }
        if !tools || self.w.rng.chance(0.4) || self.w.wants(Slot::AssistantText) {
            let needle = self.w.take(Slot::AssistantText);
            if parts > 0 {
                self.w.out.line.push(b',');
            }
            self.w
                .out
                .line
                .extend_from_slice(b"{\"type\":\"text\",\"text\":\"");
            let len = self.w.prose_len(30, if tools { 600 } else { 2_500 });
            self.w.text(Style::Prose, len, needle.as_ref());
            self.w.out.line.extend_from_slice(b"\"}");
            planted.extend(needle);
            parts += 1;
        }
        if tools {
            let n = if self.w.rng.chance(0.15) { 2 } else { 1 };
            for _ in 0..n {
                if parts > 0 {
                    self.w.out.line.push(b',');
                }
                let (call, needle) = self.tool_call();
                calls.push(call);
                planted.extend(needle);
                parts += 1;
            }
        }
        self.context_tokens += self.w.rng.range(300, 5_000);
        let output = self.w.rng.range(20, 1_500);
        let m = self.model;
        let l = &mut self.w.out.line;
        l.extend_from_slice(b"],\"api\":");
        json::str(l, m.api);
        l.extend_from_slice(b",\"provider\":");
        json::str(l, m.provider);
        l.extend_from_slice(b",\"model\":");
        json::str(l, m.id);
        let input = self.context_tokens / 10;
        let cache = self.context_tokens - input;
        l.extend_from_slice(b",\"usage\":{\"input\":");
        json::num(l, input);
        l.extend_from_slice(b",\"output\":");
        json::num(l, output);
        l.extend_from_slice(b",\"cacheRead\":");
        json::num(l, cache);
        l.extend_from_slice(b",\"cacheWrite\":0,\"totalTokens\":");
        json::num(l, input + output + cache);
        // Costs in millionths of a dollar (3 $/M input, 15 $/M output, 0.3 $/M cache reads).
        let (ci, co, cc) = (input * 3, output * 15, cache * 3 / 10);
        l.extend_from_slice(b",\"cost\":{\"input\":");
        json::fixed(l, ci, 6);
        l.extend_from_slice(b",\"output\":");
        json::fixed(l, co, 6);
        l.extend_from_slice(b",\"cacheRead\":");
        json::fixed(l, cc, 6);
        l.extend_from_slice(b",\"cacheWrite\":0,\"total\":");
        json::fixed(l, ci + co + cc, 6);
        l.extend_from_slice(b"}},\"stopReason\":");
        json::str(l, if tools { "toolUse" } else { "stop" });
        l.extend_from_slice(b",\"timestamp\":");
        json::num(l, message_ms as u64);
        if m.provider == "openai" {
            l.extend_from_slice(b",\"responseId\":\"resp_");
            json::random_chars(l, &mut self.w.rng, HEX, 48);
            l.push(b'"');
        }
        l.extend_from_slice(b"}}");
        self.w.end()?;
        for n in planted {
            self.w.record(n, seq, None, false);
        }
        Ok(calls)
    }

    /// A thinking signature: base64 for Anthropic, a JSON-encoded reasoning item for OpenAI.
    fn signature(&mut self) {
        let len = self.w.rng.range(200, 1_500) as usize;
        let l = &mut self.w.out.line;
        if self.model.provider == "openai" {
            l.extend_from_slice(b"{\\\"id\\\":\\\"rs_");
            json::random_chars(l, &mut self.w.rng, HEX, 48);
            l.extend_from_slice(b"\\\",\\\"type\\\":\\\"reasoning\\\",\\\"summary\\\":[],\\\"encrypted_content\\\":\\\"gAAAAAB");
            self.w.pools.b64(&mut self.w.rng, len, l);
            l.extend_from_slice(b"\\\"}");
        } else {
            self.w.pools.b64(&mut self.w.rng, len, l);
        }
    }

    fn tool_call(&mut self) -> (Call<'a>, Option<Needle>) {
        let needle = self.w.take(Slot::ToolInput);
        let tool = if needle.is_some() {
            Tool::Bash
        } else if self.w.wants(Slot::ToolOutput) {
            self.w.rng.pick(&[Tool::Bash, Tool::Grep])
        } else {
            self.w.rng.pick(&[
                Tool::Bash,
                Tool::Bash,
                Tool::Bash,
                Tool::Read,
                Tool::Read,
                Tool::Edit,
                Tool::Grep,
            ])
        };
        let id = if self.model.provider == "openai" {
            Tag::new(&mut self.w.rng, "call_", BASE62, 24).then(&mut self.w.rng, "|fc_", HEX, 32)
        } else {
            Tag::new(&mut self.w.rng, "toolu_01", BASE62, 22)
        };
        let pools: &'a Pools = self.w.pools;
        let mut call = Call {
            tool,
            id,
            old: "",
            new: "",
        };
        let l = &mut self.w.out.line;
        l.extend_from_slice(b"{\"type\":\"toolCall\",\"id\":");
        id.put(l);
        l.extend_from_slice(b",\"name\":");
        json::str(l, tool.name());
        l.extend_from_slice(b",\"arguments\":{");
        match tool {
            Tool::Bash => {
                l.extend_from_slice(b"\"command\":\"");
                match &needle {
                    Some(n) => {
                        l.extend_from_slice(b"grep -rn ");
                        l.extend_from_slice(n.raw.as_bytes());
                        l.extend_from_slice(b" src tests");
                    }
                    None => {
                        let cmd = self.w.rng.pick(&[
                            "cargo test",
                            "git status",
                            "ls -la src",
                            "npm test",
                            "git diff --stat",
                            "make check",
                        ]);
                        json::esc(l, cmd.as_bytes());
                    }
                }
                l.push(b'"');
            }
            Tool::Read => {
                let path = text::path(&mut self.w.rng);
                l.extend_from_slice(b"\"path\":");
                json::str(l, &path);
            }
            Tool::Edit => {
                let path = text::path(&mut self.w.rng);
                let a = self.w.rng.log_uniform(40, 800) as usize;
                let b = self.w.rng.log_uniform(40, 800) as usize;
                call.old = pools.slice(&mut self.w.rng, Style::Code, a);
                call.new = pools.slice(&mut self.w.rng, Style::Code, b);
                l.extend_from_slice(b"\"path\":");
                json::str(l, &path);
                l.extend_from_slice(b",\"oldText\":");
                json::str(l, call.old);
                l.extend_from_slice(b",\"newText\":");
                json::str(l, call.new);
            }
            Tool::Grep => {
                let pattern = text::snake(&mut self.w.rng);
                l.extend_from_slice(b"\"pattern\":");
                json::str(l, &pattern);
                l.extend_from_slice(b",\"path\":\"src\"");
            }
        }
        l.extend_from_slice(b"}}");
        (call, needle)
    }

    fn tool_result(&mut self, call: &Call<'_>) -> io::Result<()> {
        let needle = match call.tool {
            Tool::Bash | Tool::Grep => self.w.take(Slot::ToolOutput),
            _ => None,
        };
        let seq = self.w.out.seq();
        self.entry("message");
        let l = &mut self.w.out.line;
        l.extend_from_slice(b",\"message\":{\"role\":\"toolResult\",\"toolCallId\":");
        call.id.put(l);
        l.extend_from_slice(b",\"toolName\":");
        json::str(l, call.tool.name());
        l.extend_from_slice(b",\"content\":[{\"type\":\"text\",\"text\":\"");
        match call.tool {
            Tool::Bash | Tool::Grep => {
                let len = self.w.output_len(50_000);
                self.w.text(Style::Shell, len, needle.as_ref());
                self.w.out.line.extend_from_slice(b"\"}]");
            }
            Tool::Read => {
                let len = self.w.output_len(50_000);
                self.w.text(Style::Code, len, None);
                self.w.out.line.extend_from_slice(b"\"}]");
            }
            Tool::Edit => {
                let l = &mut self.w.out.line;
                l.extend_from_slice(
                    b"Successfully replaced text in the file.\"}],\"details\":{\"diff\":\"",
                );
                for (sign, text) in [(b"-", call.old), (b"+", call.new)] {
                    for line in text.lines() {
                        l.extend_from_slice(sign);
                        json::esc(l, line.as_bytes());
                        l.extend_from_slice(b"\\n");
                    }
                }
                l.extend_from_slice(b"\",\"firstChangedLine\":");
                json::num(l, 1 + call.old.len() as u64 % 300);
                l.push(b'}');
            }
        }
        let l = &mut self.w.out.line;
        l.extend_from_slice(b",\"isError\":false,\"timestamp\":");
        json::num(l, self.w.now as u64);
        l.extend_from_slice(b"}}");
        self.w.end()?;
        if let Some(n) = needle {
            self.w.record(n, seq, None, false);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn session_dir_encodes_like_pi() {
        assert_eq!(
            super::session_dir("/Users/badlogic/workspaces/pi-mono"),
            "--Users-badlogic-workspaces-pi-mono--"
        );
    }
}
