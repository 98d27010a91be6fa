//! Codex CLI rollouts: `<sessions>/YYYY/MM/DD/rollout-YYYY-MM-DDThh-mm-ss-<thread-id>.jsonl`,
//! the G3 envelope `{"timestamp","type","payload"}`.
//!
//! A session opens with `session_meta`, developer messages and injected user messages
//! (AGENTS.md, `<environment_context>`); each turn writes `task_started`, the user's message
//! twice (`response_item` then `event_msg/user_message`), `turn_context`, reasoning and
//! commentary twice (`event_msg` then `response_item`), function calls with their outputs,
//! `token_count` events, a final answer and `task_complete`. File and directory names use local
//! time (here UTC+1), the lines UTC, as Codex does.

use std::io;
use std::path::Path;

use super::json::{self, Tag, Uuid, BASE62};
use super::needle::{Needle, Slot};
use super::session::{Spec, Writer, Written};
use super::text::{self, Pools, Style};

/// The local time zone's offset from UTC used for file and directory names.
const LOCAL_OFFSET_MS: i64 = 3_600_000;
const CLI_VERSIONS: &[&str] = &["0.104.0-alpha.1", "0.128.0", "0.142.0", "0.146.0"];
const MODELS: &[&str] = &[
    "gpt-5.3-codex",
    "gpt-5.3-codex",
    "gpt-5.2",
    "gpt-5.1-codex-max",
];
const EFFORTS: &[&str] = &["medium", "high", "xhigh", "low"];
const COMMANDS: &[&str] = &[
    "cargo test --workspace",
    "rg -n \"fn main\" src",
    "git status --short",
    "git diff --stat",
    "ls -la",
    "sed -n '1,120p' src/lib.rs",
    "npm run lint",
    "pytest -q",
    "cat Cargo.toml",
    "go vet ./...",
];

/// The file of a session started at `start_ms` with id `id`, relative to the sessions root.
pub fn rel_path(start_ms: i64, id: &Uuid) -> String {
    let mut name = Vec::with_capacity(40);
    json::iso(&mut name, start_ms + LOCAL_OFFSET_MS, b'-', b'.');
    let stamp = String::from_utf8(name).expect("ASCII");
    // `2026-02-23T20-34-25.123Z` → date dirs and `2026-02-23T20-34-25`.
    let (date, _) = stamp.split_once('T').expect("T separator");
    let dirs = date.replace('-', "/");
    format!("{dirs}/rollout-{}-{}.jsonl", &stamp[..19], id.as_str())
}

/// Writes one session under `root` (the `sessions` directory).
pub fn write(mut spec: Spec, pools: &Pools, root: &Path) -> io::Result<Written> {
    let start = spec.start_ms;
    let id = Uuid::v7(&mut spec.rng, start);
    let rel = rel_path(start, &id);
    let cwd = spec.cwd;
    let w = Writer::create(spec, pools, &root.join(&rel))?;
    let mut c = Codex {
        w,
        id,
        cwd,
        model: "",
        effort: "",
        tokens: Tokens::default(),
    };
    c.model = c.w.rng.pick(MODELS);
    c.effort = c.w.rng.pick(EFFORTS);
    c.session_start()?;
    let mut turns = 0u64;
    while !c.w.full(turns) {
        c.turn(turns == 0)?;
        turns += 1;
    }
    c.w.finish(id.as_str().to_string(), rel)
}

#[derive(Default)]
struct Tokens {
    input: u64,
    cached: u64,
    output: u64,
    reasoning: u64,
    last_input: u64,
    last_output: u64,
}

struct Codex<'a> {
    w: Writer<'a>,
    id: Uuid,
    cwd: &'static str,
    model: &'static str,
    effort: &'static str,
    tokens: Tokens,
}

impl Codex<'_> {
    /// `{"timestamp":…,"type":"<kind>","payload":{` (no closing braces).
    fn open(&mut self, kind: &str) {
        let l = &mut self.w.out.line;
        l.extend_from_slice(b"{\"timestamp\":");
        json::ts(l, self.w.now);
        l.extend_from_slice(b",\"type\":\"");
        l.extend_from_slice(kind.as_bytes());
        l.extend_from_slice(b"\",\"payload\":{");
    }

    fn close(&mut self) -> io::Result<()> {
        self.w.out.line.extend_from_slice(b"}}");
        self.w.end()
    }

    fn session_start(&mut self) -> io::Result<()> {
        let created = self.w.now;
        self.w.advance(200, 2_000);
        self.open("session_meta");
        let version = self.w.rng.pick(CLI_VERSIONS);
        let l = &mut self.w.out.line;
        l.extend_from_slice(b"\"session_id\":");
        self.id.put(l);
        l.extend_from_slice(b",\"id\":");
        self.id.put(l);
        l.extend_from_slice(b",\"timestamp\":");
        json::ts(l, created);
        l.extend_from_slice(b",\"cwd\":");
        json::str(l, self.cwd);
        l.extend_from_slice(b",\"originator\":\"codex_cli_rs\",\"cli_version\":");
        json::str(l, version);
        l.extend_from_slice(b",\"source\":\"cli\",\"model_provider\":\"openai\",\"base_instructions\":{\"text\":\"You are Codex, a coding agent based on GPT-5. You and the user share the same workspace and collaborate to achieve the user's goals.\\n\\n");
        let len = self.w.prose_len(1_500, 6_000);
        self.w.text(Style::Prose, len, None);
        let l = &mut self.w.out.line;
        l.extend_from_slice(b"\"},\"history_mode\":\"legacy\",\"git\":{\"commit_hash\":\"");
        json::random_chars(l, &mut self.w.rng, json::HEX, 40);
        l.extend_from_slice(
            b"\",\"branch\":\"main\",\"repository_url\":\"https://github.com/example/",
        );
        json::esc(l, self.cwd.rsplit('/').next().unwrap_or("repo").as_bytes());
        l.extend_from_slice(b".git\"}");
        self.close()?;

        self.developer(b"<permissions instructions>\\nFilesystem sandboxing defines which files can be read or written. `sandbox_mode` is `workspace-write`. ", b"\\n</permissions instructions>")?;
        if self.w.rng.chance(0.4) {
            self.developer(
                b"<collaboration_mode>\\n# Collaboration Mode: Default\\n\\n",
                b"\\n</collaboration_mode>",
            )?;
        }
        if self.w.rng.chance(0.6) {
            let needle = self.w.take(Slot::Context);
            let seq = self.w.out.seq();
            self.open("response_item");
            let l = &mut self.w.out.line;
            l.extend_from_slice(b"\"type\":\"message\",\"role\":\"user\",\"content\":[{\"type\":\"input_text\",\"text\":\"# AGENTS.md instructions for ");
            json::esc(l, self.cwd.as_bytes());
            l.extend_from_slice(b"\\n\\n<INSTRUCTIONS>\\n");
            let len = self.w.prose_len(400, 5_000);
            self.w.text(Style::Prose, len, needle.as_ref());
            self.w.out.line.extend_from_slice(b"\\n</INSTRUCTIONS>\"}]");
            self.close()?;
            if let Some(n) = needle {
                self.w.record(n, seq, None, false);
            }
        }
        self.environment(None)
    }

    /// A developer message: harness text (always context).
    fn developer(&mut self, open: &[u8], close: &[u8]) -> io::Result<()> {
        let needle = self.w.take(Slot::Context);
        let seq = self.w.out.seq();
        self.open("response_item");
        let l = &mut self.w.out.line;
        l.extend_from_slice(b"\"type\":\"message\",\"role\":\"developer\",\"content\":[{\"type\":\"input_text\",\"text\":\"");
        l.extend_from_slice(open);
        let len = self.w.prose_len(300, 4_000);
        self.w.text(Style::Prose, len, needle.as_ref());
        self.w.out.line.extend_from_slice(close);
        self.w.out.line.extend_from_slice(b"\"}]");
        self.close()?;
        if let Some(n) = needle {
            self.w.record(n, seq, None, false);
        }
        Ok(())
    }

    /// The injected `<environment_context>` user message; a needle goes in a `<note>` element.
    fn environment(&mut self, needle: Option<Needle>) -> io::Result<()> {
        let seq = self.w.out.seq();
        self.open("response_item");
        let l = &mut self.w.out.line;
        l.extend_from_slice(b"\"type\":\"message\",\"role\":\"user\",\"content\":[{\"type\":\"input_text\",\"text\":\"<environment_context>\\n  <cwd>");
        json::esc(l, self.cwd.as_bytes());
        l.extend_from_slice(b"</cwd>\\n  <approval_policy>on-request</approval_policy>\\n  <sandbox_mode>workspace-write</sandbox_mode>\\n  <network_access>restricted</network_access>\\n  <shell>zsh</shell>\\n");
        if let Some(n) = &needle {
            l.extend_from_slice(b"  <note>");
            l.extend_from_slice(n.raw.as_bytes());
            l.extend_from_slice(b"</note>\\n");
        }
        l.extend_from_slice(b"</environment_context>\"}]");
        self.close()?;
        if let Some(n) = needle {
            self.w.record(n, seq, None, false);
        }
        Ok(())
    }

    fn turn(&mut self, first: bool) -> io::Result<()> {
        self.w.advance(if first { 2_000 } else { 5_000 }, 900_000);
        if self.w.rng.chance(0.03) {
            self.w.advance(3_600_000, 40_000_000);
        }
        let turn_id = Uuid::v7(&mut self.w.rng, self.w.now);
        self.open("event_msg");
        self.w
            .out
            .line
            .extend_from_slice(b"\"type\":\"task_started\",\"turn_id\":");
        turn_id.put(&mut self.w.out.line);
        self.w.out.line.extend_from_slice(
            b",\"model_context_window\":258400,\"collaboration_mode_kind\":\"default\"",
        );
        self.close()?;
        if self.w.wants(Slot::Context) {
            let needle = self.w.take(Slot::Context);
            if self.w.rng.chance(0.5) {
                self.environment(needle)?;
            } else {
                self.developer_with(needle)?;
            }
        }
        self.user_message()?;
        self.turn_context(turn_id)?;
        self.token_count(first)?;
        let mut steps = 1;
        while steps < self.w.max_steps() && self.w.rng.chance(0.7) {
            steps += 1;
        }
        for _ in 0..steps {
            self.w.advance(1_000, 15_000);
            if self.w.rng.chance(0.7) || self.w.wants(Slot::Reasoning) {
                self.reasoning()?;
            }
            if self.w.rng.chance(0.5) || self.w.wants(Slot::AssistantText) {
                self.agent_message("commentary", true)?;
            }
            if self.w.rng.chance(0.85)
                || self.w.wants(Slot::ToolInput)
                || self.w.wants(Slot::ToolOutput)
            {
                self.exec_command()?;
            } else {
                self.apply_patch()?;
            }
        }
        self.w.advance(1_000, 20_000);
        if self.w.rng.chance(0.5) {
            self.reasoning()?;
        }
        self.agent_message("final_answer", false)?;
        self.token_count(false)?;
        self.w.now += 12;
        self.open("event_msg");
        let l = &mut self.w.out.line;
        l.extend_from_slice(b"\"type\":\"task_complete\",\"turn_id\":");
        turn_id.put(l);
        l.extend_from_slice(b",\"last_agent_message\":\"");
        l.extend_from_slice(&self.w.scratch);
        l.push(b'"');
        self.close()
    }

    /// A developer message written mid-session (a model switch notice) carrying a needle.
    fn developer_with(&mut self, needle: Option<Needle>) -> io::Result<()> {
        let seq = self.w.out.seq();
        self.open("response_item");
        self.w.out.line.extend_from_slice(b"\"type\":\"message\",\"role\":\"developer\",\"content\":[{\"type\":\"input_text\",\"text\":\"<model_switch>\\nThe user was previously using a different model. ");
        let len = self.w.prose_len(200, 1_500);
        self.w.text(Style::Prose, len, needle.as_ref());
        self.w.out.line.extend_from_slice(b"\\n</model_switch>\"}]");
        self.close()?;
        if let Some(n) = needle {
            self.w.record(n, seq, None, false);
        }
        Ok(())
    }

    fn user_message(&mut self) -> io::Result<()> {
        let needle = self.w.take(Slot::UserText);
        self.w.scratch.clear();
        let len = self.w.prose_len(15, 1_500);
        self.w.scratch_text(Style::Prose, len, needle.as_ref());
        let mirror = self.w.out.seq();
        self.open("response_item");
        let l = &mut self.w.out.line;
        l.extend_from_slice(b"\"type\":\"message\",\"role\":\"user\",\"content\":[{\"type\":\"input_text\",\"text\":\"");
        l.extend_from_slice(&self.w.scratch);
        l.extend_from_slice(b"\"}]");
        self.close()?;
        let seq = self.w.out.seq();
        self.open("event_msg");
        let l = &mut self.w.out.line;
        l.extend_from_slice(b"\"type\":\"user_message\",\"message\":\"");
        l.extend_from_slice(&self.w.scratch);
        l.extend_from_slice(b"\",\"images\":[],\"local_images\":[],\"text_elements\":[]");
        self.close()?;
        if let Some(n) = needle {
            self.w.record(n, seq, Some(mirror), false);
        }
        Ok(())
    }

    fn turn_context(&mut self, turn_id: Uuid) -> io::Result<()> {
        self.w.advance(5, 800);
        self.open("turn_context");
        let l = &mut self.w.out.line;
        l.extend_from_slice(b"\"turn_id\":");
        turn_id.put(l);
        l.extend_from_slice(b",\"cwd\":");
        json::str(l, self.cwd);
        l.extend_from_slice(b",\"approval_policy\":\"on-request\",\"sandbox_policy\":{\"type\":\"workspace-write\",\"writable_roots\":[");
        json::str(l, self.cwd);
        l.extend_from_slice(b"],\"network_access\":false,\"exclude_tmpdir_env_var\":false,\"exclude_slash_tmp\":false},\"model\":");
        json::str(l, self.model);
        l.extend_from_slice(b",\"personality\":\"pragmatic\",\"collaboration_mode\":{\"mode\":\"default\",\"settings\":{\"model\":");
        json::str(l, self.model);
        l.extend_from_slice(b",\"reasoning_effort\":");
        json::str(l, self.effort);
        l.extend_from_slice(b",\"developer_instructions\":null}},\"effort\":");
        json::str(l, self.effort);
        l.extend_from_slice(b",\"summary\":\"auto\"");
        self.close()
    }

    fn token_count(&mut self, empty: bool) -> io::Result<()> {
        self.w.now += self.w.rng.range(1, 40) as i64;
        let t = &mut self.tokens;
        if !empty {
            t.last_input = 20_000 + t.input / 8 + self.w.rng.range(0, 9_000);
            t.last_output = self.w.rng.range(20, 2_000);
            t.input += t.last_input;
            t.cached += t.last_input * 4 / 5;
            t.output += t.last_output;
            t.reasoning += t.last_output / 2;
        }
        let (input, cached, output, reasoning) = (t.input, t.cached, t.output, t.reasoning);
        let (last_input, last_output) = (t.last_input, t.last_output);
        let primary = 1 + input / 400_000 % 99;
        let resets = (self.w.now / 1000) as u64 + 7_200;
        self.open("event_msg");
        let l = &mut self.w.out.line;
        l.extend_from_slice(b"\"type\":\"token_count\",\"info\":");
        if empty {
            l.extend_from_slice(b"null");
        } else {
            l.extend_from_slice(b"{\"total_token_usage\":");
            usage(l, input, cached, output, reasoning);
            l.extend_from_slice(b",\"last_token_usage\":");
            usage(
                l,
                last_input,
                last_input * 4 / 5,
                last_output,
                last_output / 2,
            );
            l.extend_from_slice(b",\"model_context_window\":258400}");
        }
        l.extend_from_slice(b",\"rate_limits\":{\"limit_id\":\"codex\",\"limit_name\":null,\"primary\":{\"used_percent\":");
        json::num(l, primary);
        l.extend_from_slice(b".0,\"window_minutes\":300,\"resets_at\":");
        json::num(l, resets);
        l.extend_from_slice(b"},\"secondary\":{\"used_percent\":");
        json::num(l, primary / 3 + 1);
        l.extend_from_slice(b".0,\"window_minutes\":10080,\"resets_at\":");
        json::num(l, resets + 400_000);
        l.extend_from_slice(b"},\"credits\":{\"has_credits\":false,\"unlimited\":false,\"balance\":null},\"plan_type\":null}");
        self.close()
    }

    /// `agent_reasoning` then the `reasoning` item with the same summary.
    fn reasoning(&mut self) -> io::Result<()> {
        let needle = self.w.take(Slot::Reasoning);
        self.w.scratch.clear();
        self.w.scratch.extend_from_slice(b"**");
        let title = self.w.pools.title(&mut self.w.rng);
        json::esc(&mut self.w.scratch, title.as_bytes());
        self.w.scratch.extend_from_slice(b"**\\n\\n");
        let len = self.w.prose_len(40, 1_200);
        self.w.scratch_text(Style::Prose, len, needle.as_ref());
        let seq = self.w.out.seq();
        self.open("event_msg");
        let l = &mut self.w.out.line;
        l.extend_from_slice(b"\"type\":\"agent_reasoning\",\"text\":\"");
        l.extend_from_slice(&self.w.scratch);
        l.push(b'"');
        self.close()?;
        let mirror = self.w.out.seq();
        self.open("response_item");
        let l = &mut self.w.out.line;
        l.extend_from_slice(
            b"\"type\":\"reasoning\",\"summary\":[{\"type\":\"summary_text\",\"text\":\"",
        );
        l.extend_from_slice(&self.w.scratch);
        l.extend_from_slice(b"\"}],\"content\":null,\"encrypted_content\":\"gAAAAAB");
        let len = self.w.rng.range(600, 4_000) as usize;
        self.w.pools.b64(&mut self.w.rng, len, &mut self.w.out.line);
        self.w.out.line.push(b'"');
        self.close()?;
        if let Some(n) = needle {
            self.w.record(n, seq, Some(mirror), false);
        }
        Ok(())
    }

    /// `agent_message` then the assistant `message` item; the text stays in the scratch buffer
    /// (the final answer is copied into `task_complete`). Needles never go in a final answer, as
    /// that copy would be a second occurrence.
    fn agent_message(&mut self, phase: &str, may_plant: bool) -> io::Result<()> {
        let needle = if may_plant {
            self.w.take(Slot::AssistantText)
        } else {
            None
        };
        self.w.scratch.clear();
        let len = self.w.prose_len(40, if may_plant { 600 } else { 2_500 });
        self.w.scratch_text(Style::Prose, len, needle.as_ref());
        let seq = self.w.out.seq();
        self.open("event_msg");
        let l = &mut self.w.out.line;
        l.extend_from_slice(b"\"type\":\"agent_message\",\"message\":\"");
        l.extend_from_slice(&self.w.scratch);
        l.extend_from_slice(b"\",\"phase\":\"");
        l.extend_from_slice(phase.as_bytes());
        l.push(b'"');
        self.close()?;
        let mirror = self.w.out.seq();
        self.open("response_item");
        let l = &mut self.w.out.line;
        l.extend_from_slice(b"\"type\":\"message\",\"role\":\"assistant\",\"content\":[{\"type\":\"output_text\",\"text\":\"");
        l.extend_from_slice(&self.w.scratch);
        l.extend_from_slice(b"\"}],\"phase\":\"");
        l.extend_from_slice(phase.as_bytes());
        l.push(b'"');
        self.close()?;
        if let Some(n) = needle {
            self.w.record(n, seq, Some(mirror), false);
        }
        Ok(())
    }

    fn exec_command(&mut self) -> io::Result<()> {
        let call = Tag::new(&mut self.w.rng, "call_", BASE62, 24);
        let needle = self.w.take(Slot::ToolInput);
        // `arguments` is a JSON document inside a JSON string: build it, then escape it.
        self.w.scratch.clear();
        let s = &mut self.w.scratch;
        s.extend_from_slice(b"{\"cmd\":\"");
        match &needle {
            Some(n) => {
                s.extend_from_slice(b"rg -n ");
                s.extend_from_slice(n.raw.as_bytes());
                s.extend_from_slice(b" .");
            }
            None => json::esc(s, self.w.rng.pick(COMMANDS).as_bytes()),
        }
        s.extend_from_slice(b"\",\"workdir\":");
        json::str(s, self.cwd);
        s.extend_from_slice(b",\"yield_time_ms\":10000,\"max_output_tokens\":12000}");
        let seq = self.w.out.seq();
        self.open("response_item");
        let l = &mut self.w.out.line;
        l.extend_from_slice(
            b"\"type\":\"function_call\",\"name\":\"exec_command\",\"arguments\":\"",
        );
        json::esc(l, &self.w.scratch);
        l.extend_from_slice(b"\",\"call_id\":");
        call.put(l);
        self.close()?;
        if let Some(n) = needle {
            self.w.record(n, seq, None, true);
        }
        self.token_count(false)?;
        let before = self.w.now;
        self.w.advance(50, 60_000);
        let wall = (self.w.now - before) as u64;
        let needle = self.w.take(Slot::ToolOutput);
        let seq = self.w.out.seq();
        let failed = needle.is_none() && self.w.rng.chance(0.07);
        self.open("response_item");
        let l = &mut self.w.out.line;
        l.extend_from_slice(b"\"type\":\"function_call_output\",\"call_id\":");
        call.put(l);
        l.extend_from_slice(b",\"output\":\"Exit code: ");
        l.push(if failed { b'1' } else { b'0' });
        l.extend_from_slice(b"\\nWall time: ");
        json::fixed(l, wall, 3);
        l.extend_from_slice(b" seconds\\nOutput:\\n");
        let len = self.w.output_len(200_000);
        self.w.text(Style::Shell, len, needle.as_ref());
        self.w.out.line.push(b'"');
        self.close()?;
        if let Some(n) = needle {
            self.w.record(n, seq, None, false);
        }
        Ok(())
    }

    fn apply_patch(&mut self) -> io::Result<()> {
        let call = Tag::new(&mut self.w.rng, "call_", BASE62, 24);
        let path = text::path(&mut self.w.rng);
        let pools = self.w.pools;
        let old_len = self.w.prose_len(40, 1_500);
        let new_len = self.w.prose_len(40, 1_500);
        let old = pools.slice(&mut self.w.rng, Style::Code, old_len);
        let new = pools.slice(&mut self.w.rng, Style::Code, new_len);
        self.open("response_item");
        let l = &mut self.w.out.line;
        l.extend_from_slice(b"\"type\":\"custom_tool_call\",\"status\":\"completed\",\"call_id\":");
        call.put(l);
        l.extend_from_slice(
            b",\"name\":\"apply_patch\",\"input\":\"*** Begin Patch\\n*** Update File: ",
        );
        json::esc(l, path.as_bytes());
        l.extend_from_slice(b"\\n@@\\n");
        for (sign, text) in [(b"-", old), (b"+", new)] {
            for line in text.lines() {
                l.extend_from_slice(sign);
                json::esc(l, line.as_bytes());
                l.extend_from_slice(b"\\n");
            }
        }
        l.extend_from_slice(b"*** End Patch\"");
        self.close()?;
        self.w.advance(30, 900);
        self.open("response_item");
        let l = &mut self.w.out.line;
        l.extend_from_slice(b"\"type\":\"custom_tool_call_output\",\"call_id\":");
        call.put(l);
        l.extend_from_slice(b",\"output\":\"Success. Updated the following files:\\nM ");
        json::esc(l, path.as_bytes());
        l.extend_from_slice(b"\\n\"");
        self.close()
    }
}

fn usage(l: &mut Vec<u8>, input: u64, cached: u64, output: u64, reasoning: u64) {
    l.extend_from_slice(b"{\"input_tokens\":");
    json::num(l, input);
    l.extend_from_slice(b",\"cached_input_tokens\":");
    json::num(l, cached);
    l.extend_from_slice(b",\"output_tokens\":");
    json::num(l, output);
    l.extend_from_slice(b",\"reasoning_output_tokens\":");
    json::num(l, reasoning);
    l.extend_from_slice(b",\"total_tokens\":");
    json::num(l, input + output);
    l.push(b'}');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corpus::rng::Rng;

    #[test]
    fn file_names_use_local_time() {
        let ms = json::days_from_civil(2026, 2, 23) + 23 * 3_600_000 + 34 * 60_000 + 25_000;
        let id = Uuid::v7(&mut Rng::new(1), ms);
        let rel = rel_path(ms, &id);
        assert!(
            rel.starts_with("2026/02/24/rollout-2026-02-24T00-34-25-"),
            "{rel}"
        );
        assert!(rel.ends_with(&format!("{}.jsonl", id.as_str())));
    }
}
