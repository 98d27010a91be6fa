//! The projection of rollout lines onto events: which line says what, for whom.
//!
//! Envelope files (G3/G4) log every message twice: as a `response_item` (what the model saw)
//! and as an event (`event_msg` `user_message`/`agent_message`/`agent_reasoning`, or a paginated
//! `item_completed`: what Codex shows). The events are the dialogue. A message item waits a few
//! lines for its event twin: matched (same text, or the line right next to it), it is dropped;
//! unmatched, a user-role item becomes context (Codex never shows it as typed) and an assistant
//! item or reasoning stays the model's. Early files (G1/G2) have no events: their items are the
//! dialogue.

use std::collections::{HashMap, HashSet, VecDeque};

use history_core::{Event, Role, Timestamp};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::header::{Header, Layout};
use crate::render::{self, IMAGE};

/// How many lines a message item waits for its event twin, and an event for its item.
const WINDOW: u64 = 32;

/// Which dialogue a message item and its event twin carry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
enum Twin {
    User,
    Assistant,
    Reasoning,
}

/// A message item still waiting for its event twin; `event` is what it shows if none comes.
#[derive(Serialize, Deserialize)]
struct Candidate {
    #[serde(with = "history_core::snapshot::event")]
    event: Event,
    emit: bool,
    twin: Twin,
    key: String,
}

/// An event in line for delivery. One whose line a search cannot want (`emit` false) is
/// projected like any other, for what it does to its neighbours, and then not delivered.
#[derive(Serialize, Deserialize)]
enum Slot {
    Ready(#[serde(with = "history_core::snapshot::event")] Event, bool),
    Waiting(Candidate),
    Dropped,
}

/// A dialogue event not yet matched with its item.
#[derive(Serialize, Deserialize)]
struct Recent {
    twin: Twin,
    key: String,
    seq: u64,
}

/// What the projection learned besides the events.
#[derive(Debug, Default)]
pub(crate) struct Outcome {
    /// The seqs left after rollbacks, when any happened: those of the lines that show an event.
    /// (A line read for its structure alone shows the events a full read gives it, only not
    /// delivered, so this is the branch either way.)
    pub branch: Option<Vec<u64>>,
    /// The thread's name, if it was given one.
    pub title: Option<String>,
    /// The working directory an early file's environment context names.
    pub cwd: Option<String>,
}

/// Streams events, in file order, into a sink.
pub(crate) struct Projection<'s> {
    sink: &'s mut dyn FnMut(Event),
    s: State,
}

/// What a projection knows of the lines projected so far: all it needs to go on from there.
#[derive(Default, Serialize, Deserialize)]
pub(crate) struct State {
    queue: VecDeque<Slot>,
    recent: Vec<Recent>,
    /// Tool names by call id.
    calls: HashMap<String, String>,
    /// Call ids whose output was shown (outputs logged both as item and as event show once).
    outputs: HashSet<String>,
    /// Start seqs of the user turns still in force, for rollbacks.
    turns: Vec<u64>,
    /// The `task_started` that opens the next user turn.
    turn_start: Option<u64>,
    rolled_back: Vec<(u64, u64)>,
    seqs: Vec<u64>,
    next_part: u32,
    title: Option<String>,
    cwd: Option<String>,
    /// A spawned sub-agent's address in its agent tree: what its parent sends there is its
    /// prompt.
    agent_path: Option<String>,
    /// Whether the line being projected delivers its events.
    emit: bool,
    /// Whether the values a structural read left out of the line being projected give it an
    /// event (one not delivered, but on the branch).
    hidden: bool,
    /// With `echoes`: the events delivered of the line delivered last, which a projection that
    /// goes on from here delivers again when the rest of that line's events still wait.
    echo: Vec<Echo>,
    #[serde(skip)]
    echoes: bool,
}

/// An event delivered, kept for [`State::echo`].
#[derive(Serialize, Deserialize)]
struct Echo(#[serde(with = "history_core::snapshot::event")] Event);

/// A line's position and time, shared by its events.
#[derive(Clone, Copy)]
struct At {
    seq: u64,
    time: Option<Timestamp>,
}

impl At {
    fn event(self, role: Role, kind: &str, text: impl Into<String>) -> Event {
        Event {
            seq: self.seq,
            part: 0,
            role,
            kind: kind.to_owned(),
            timestamp: self.time,
            text: text.into(),
            visible: matches!(role, Role::User | Role::Assistant),
            tool: None,
            on_active_branch: None,
        }
    }

    fn tool(self, kind: &str, name: &str, text: impl Into<String>) -> Event {
        Event {
            tool: Some(name.to_owned()),
            ..self.event(Role::Tool, kind, text)
        }
    }
}

fn str_at<'v>(value: &'v Value, key: &str) -> Option<&'v str> {
    value.get(key)?.as_str()
}

fn items(value: Option<&Value>) -> &[Value] {
    value.and_then(Value::as_array).map_or(&[], Vec::as_slice)
}

impl<'s> Projection<'s> {
    /// A projection feeding `sink`.
    pub fn new(sink: &'s mut dyn FnMut(Event)) -> Projection<'s> {
        Projection::resume(
            sink,
            State {
                emit: true,
                ..State::default()
            },
        )
    }

    /// A projection that goes on from `state` ([`Projection::state`]), delivering again the
    /// events it delivered of the first line whose events still wait.
    pub fn resume(sink: &'s mut dyn FnMut(Event), state: State) -> Projection<'s> {
        let projection = Projection { sink, s: state };
        if let Some(first) = projection.waiting_from() {
            for Echo(event) in projection.s.echo.iter().filter(|e| e.0.seq == first) {
                (projection.sink)(event.clone());
            }
        }
        projection
    }

    /// Keeps what [`Projection::resume`] needs to deliver again (a clone of each event).
    pub fn echoing(&mut self) {
        self.s.echoes = true;
    }

    /// What it knows so far.
    pub fn state(&self) -> &State {
        &self.s
    }

    /// The first line with an event that still waits (for its twin, or behind one that does):
    /// the events of the lines before it are final.
    pub fn waiting_from(&self) -> Option<u64> {
        self.s.queue.iter().find_map(|slot| match slot {
            Slot::Ready(event, _) => Some(event.seq),
            Slot::Waiting(c) => Some(c.event.seq),
            Slot::Dropped => None,
        })
    }

    /// The session's own header, at `seq`: the instructions it starts with, delivered if `emit`.
    pub fn header(&mut self, seq: u64, header: &Header, emit: bool) {
        self.advance(seq);
        self.s.emit = emit;
        self.s.agent_path = header.agent_path().map(str::to_owned);
        if let Some(text) = header.instructions() {
            let at = At {
                seq,
                time: header.timestamp,
            };
            self.push(at.event(Role::Context, "instructions", text));
        }
    }

    /// One parsed line (anything after the header) of a file in `layout`, at `seq`; its events
    /// are delivered if `emit`. `hidden`: the line was read for its structure alone, and the
    /// values that read left out give it an event (see [`gives_text`]).
    pub fn line(
        &mut self,
        seq: u64,
        line: Map<String, Value>,
        layout: Layout,
        emit: bool,
        hidden: bool,
    ) {
        self.advance(seq);
        self.s.emit = emit;
        self.s.hidden = hidden;
        let time = line
            .get("timestamp")
            .and_then(Value::as_str)
            .and_then(Timestamp::parse_rfc3339);
        let at = At { seq, time };
        let kind = line.get("type").and_then(Value::as_str);
        match (kind, line.get("payload")) {
            (Some(kind), Some(payload)) => self.envelope(at, kind, payload),
            (Some(_), None) if layout == Layout::Bare && !line.contains_key("record_type") => {
                self.response_item(at, &Value::Object(line), Layout::Bare)
            }
            _ => self.s.hidden = false,
        }
        if std::mem::take(&mut self.s.hidden) {
            // Only its presence counts: it is never delivered.
            self.push(at.event(Role::Context, "meta", "…"));
        }
    }

    /// Ends the stream: every waiting item is settled and every event delivered.
    pub fn finish(mut self) -> Outcome {
        self.settle(u64::MAX);
        let branch = (!self.s.rolled_back.is_empty()).then(|| {
            // Both lists are walked once, in order (seqs are delivered in order).
            self.s.rolled_back.sort_unstable();
            let mut ranges = self.s.rolled_back.iter().peekable();
            let mut kept = Vec::with_capacity(self.s.seqs.len());
            for &seq in &self.s.seqs {
                while ranges.next_if(|(_, end)| *end <= seq).is_some() {}
                let gone = matches!(ranges.peek(), Some((start, _)) if *start <= seq);
                if !gone {
                    kept.push(seq);
                }
            }
            kept
        });
        Outcome {
            branch,
            title: self.s.title,
            cwd: self.s.cwd,
        }
    }

    fn envelope(&mut self, at: At, kind: &str, payload: &Value) {
        match kind {
            "response_item" => self.response_item(at, payload, Layout::Envelope),
            "event_msg" => self.event_msg(at, payload),
            "compacted" => self.compacted(at, payload),
            "inter_agent_communication" => {
                if let Some(text) = str_at(payload, "content") {
                    // A sub-agent's prompts are what its parent sends it; the reports of
                    // other agents are context.
                    let role = match self.prompted(payload) {
                        true => Role::User,
                        false => Role::Context,
                    };
                    self.push(at.event(role, "message", text));
                }
            }
            "world_state" => self.push(at.event(Role::Context, "meta", world_state(payload))),
            // Later session_meta lines are the thread's own, re-written after every turn start
            // (Desktop 0.137+), or copies from a fork's parent: neither is dialogue. Turn
            // contexts, token usage and unknown types show nothing either.
            _ => {}
        }
    }

    /// Whether an agent message is addressed to this thread by another agent: a spawned
    /// sub-agent's prompt.
    fn prompted(&self, payload: &Value) -> bool {
        let Some(own) = self.s.agent_path.as_deref() else {
            return false;
        };
        str_at(payload, "recipient") == Some(own) && str_at(payload, "author") != Some(own)
    }

    // ----- delivery -------------------------------------------------------------------------

    /// Moves on to line `seq`: items whose twin can no longer come are settled.
    fn advance(&mut self, seq: u64) {
        self.settle(seq.saturating_sub(WINDOW));
        self.s.recent.retain(|r| r.seq + WINDOW >= seq);
    }

    /// Settles the items of lines before `before` and delivers what is ready.
    fn settle(&mut self, before: u64) {
        for slot in &mut self.s.queue {
            if matches!(slot, Slot::Waiting(c) if c.event.seq < before) {
                if let Slot::Waiting(c) = std::mem::replace(slot, Slot::Dropped) {
                    *slot = Slot::Ready(c.event, c.emit);
                }
            }
        }
        self.flush();
    }

    /// Delivers the events before the first item that still waits.
    fn flush(&mut self) {
        while let Some(slot) = self.s.queue.front() {
            if matches!(slot, Slot::Waiting(_)) {
                break;
            }
            if let Some(Slot::Ready(event, emit)) = self.s.queue.pop_front() {
                self.deliver(event, emit);
            }
        }
    }

    fn deliver(&mut self, mut event: Event, emit: bool) {
        if self.s.seqs.last() == Some(&event.seq) {
            event.part = self.s.next_part;
            self.s.next_part += 1;
        } else {
            self.s.seqs.push(event.seq);
            event.part = 0;
            self.s.next_part = 1;
            self.s.echo.clear();
        }
        if self.s.echoes {
            self.s.echo.push(Echo(event.clone()));
        }
        if emit {
            (self.sink)(event);
        }
    }

    fn push(&mut self, event: Event) {
        if !event.text.trim().is_empty() {
            self.s.queue.push_back(Slot::Ready(event, self.s.emit));
            self.flush();
        }
    }

    /// A dialogue event (what Codex shows); it drops its item twin if one is waiting.
    fn dialogue(&mut self, event: Event, twin: Twin) {
        let key = event.text.trim().to_owned();
        if key.is_empty() {
            return;
        }
        let seq = event.seq;
        let waiting = |slot: &Slot, exact: bool| match slot {
            Slot::Waiting(c) => {
                c.twin == twin
                    && (if exact {
                        c.key == key
                    } else {
                        c.event.seq + 1 == seq
                    })
            }
            _ => false,
        };
        let found = self
            .s
            .queue
            .iter()
            .position(|s| waiting(s, true))
            .or_else(|| self.s.queue.iter().position(|s| waiting(s, false)));
        match found {
            Some(i) => self.s.queue[i] = Slot::Dropped,
            None => self.s.recent.push(Recent { twin, key, seq }),
        }
        self.push(event);
    }

    /// A message item of an envelope file: dropped if its event twin came already, else it
    /// waits for it, showing `event` if it never comes.
    fn item(&mut self, event: Event, twin: Twin) {
        let key = event.text.trim().to_owned();
        if key.is_empty() {
            return;
        }
        let seq = event.seq;
        let found = self
            .s
            .recent
            .iter()
            .position(|r| r.twin == twin && r.key == key)
            .or_else(|| {
                self.s
                    .recent
                    .iter()
                    .position(|r| r.twin == twin && r.seq + 1 == seq)
            });
        match found {
            Some(i) => {
                self.s.recent.remove(i);
            }
            None => self.s.queue.push_back(Slot::Waiting(Candidate {
                event,
                emit: self.s.emit,
                twin,
                key,
            })),
        }
    }

    /// A part of a message item: in early files it is dialogue; in envelope files it waits for
    /// its event twin.
    fn message_part(&mut self, layout: Layout, event: Event, twin: Twin) {
        match layout {
            Layout::Bare => self.push(event),
            Layout::Envelope => self.item(event, twin),
        }
    }

    // ----- turns and rollbacks --------------------------------------------------------------

    fn user_turn(&mut self, seq: u64) {
        let start = self.s.turn_start.take().unwrap_or(seq);
        self.s.turns.push(start);
    }

    fn roll_back(&mut self, seq: u64, turns: u64) {
        let mut start = None;
        for _ in 0..turns {
            match self.s.turns.pop() {
                Some(s) => start = Some(s),
                None => break,
            }
        }
        if let Some(start) = start {
            self.s.rolled_back.push((start, seq));
        }
    }

    // ----- response items -------------------------------------------------------------------

    fn response_item(&mut self, at: At, item: &Value, layout: Layout) {
        let Some(kind) = str_at(item, "type") else {
            return;
        };
        match kind {
            "message" => self.message(at, item, layout),
            "reasoning" => {
                let summary = items(item.get("summary")).iter();
                let content = items(item.get("content")).iter();
                for text in summary.chain(content).filter_map(render::content_part) {
                    let event = at.event(Role::Assistant, "reasoning", text);
                    self.message_part(layout, event, Twin::Reasoning);
                }
            }
            "function_call" | "custom_tool_call" | "tool_search_call" => {
                let name = str_at(item, "name").unwrap_or(match kind {
                    "tool_search_call" => "tool_search",
                    _ => kind,
                });
                let input = ["arguments", "input"]
                    .iter()
                    .find_map(|k| item.get(*k))
                    .map(render::tool_input)
                    .unwrap_or_default();
                self.tool_call(at, item, name, &input);
            }
            "local_shell_call" => {
                let action = item.get("action").unwrap_or(&Value::Null);
                let input = render::tool_input(action);
                self.tool_call(at, item, "local_shell", &input);
            }
            "web_search_call" => {
                let input = item.get("action").map(web_search).unwrap_or_default();
                self.tool_call(at, item, "web_search", &input);
            }
            "image_generation_call" => {
                let input = str_at(item, "revised_prompt").unwrap_or_default();
                self.tool_call(at, item, "image_generation", input);
            }
            "function_call_output" | "custom_tool_call_output" | "tool_search_output" => {
                let output = item_output(kind, item);
                self.tool_output(at, item, str_at(item, "name"), output.parts, output.failed);
            }
            "agent_message" => {
                for text in texts(item.get("content")) {
                    self.push(at.event(Role::Context, "message", text));
                }
            }
            // compaction items are encrypted; ghost snapshots and unknown items show nothing.
            _ => {}
        }
    }

    fn message(&mut self, at: At, item: &Value, layout: Layout) {
        let role = str_at(item, "role").unwrap_or_default();
        for text in texts(item.get("content")) {
            match role {
                "user" => self.user_part(at, text, layout),
                "assistant" => {
                    let event = at.event(Role::Assistant, "message", text);
                    self.message_part(layout, event, Twin::Assistant);
                }
                _ => self.push(at.event(Role::Context, "message", text)),
            }
        }
    }

    /// A user-role content part of a message item.
    fn user_part(&mut self, at: At, text: &str, layout: Layout) {
        if self.s.cwd.is_none() {
            self.s.cwd = render::environment_cwd(text).map(str::to_owned);
        }
        if render::is_summary(text) {
            return self.push(at.event(Role::Context, "summary", text));
        }
        if render::is_injected(text) {
            return self.push(at.event(Role::Context, "message", text));
        }
        let (context, request) = render::split_request(text);
        let typed = match layout {
            Layout::Bare => Role::User,
            // Codex never shows a user item as typed: its user_message event does that.
            Layout::Envelope => Role::Context,
        };
        if let Some(context) = context {
            self.message_part(
                layout,
                at.event(Role::Context, "message", context),
                Twin::User,
            );
        }
        if layout == Layout::Bare && !request.trim().is_empty() && !self.turn_opened(at.seq) {
            self.user_turn(at.seq);
        }
        self.message_part(layout, at.event(typed, "message", request), Twin::User);
    }

    /// Whether a user turn already starts at `seq` (a message with several parts is one turn).
    fn turn_opened(&self, seq: u64) -> bool {
        self.s.turns.last() == Some(&seq)
    }

    fn tool_call(&mut self, at: At, item: &Value, name: &str, input: &str) {
        if let Some(id) = str_at(item, "call_id") {
            self.s.calls.insert(id.to_owned(), name.to_owned());
        }
        let text = if input.trim().is_empty() {
            name.to_owned()
        } else {
            format!("{name}: {input}")
        };
        self.push(at.tool("tool_call", name, text));
    }

    /// A tool's output; an output already shown for the same call (logged both as an item
    /// and as an event) is not shown again.
    fn tool_output(
        &mut self,
        at: At,
        item: &Value,
        name: Option<&str>,
        parts: Vec<String>,
        failed: bool,
    ) {
        let call = str_at(item, "call_id");
        if let Some(call) = call {
            if !self.s.outputs.insert(call.to_owned()) {
                // Nor would the output a structural read left out.
                self.s.hidden = false;
                return;
            }
        }
        let known = call.and_then(|c| self.s.calls.get(c)).map(String::as_str);
        let tool = known.or(name).map(str::to_owned);
        let kind = if failed { "tool_error" } else { "tool_output" };
        for text in parts {
            let event = Event {
                tool: tool.clone(),
                ..at.event(Role::Tool, kind, text)
            };
            self.push(event);
        }
    }

    fn compacted(&mut self, at: At, payload: &Value) {
        if let Some(text) = window(payload) {
            self.push(at.event(Role::Context, "meta", text));
        }
        for text in summaries(payload) {
            self.summarized(text);
            self.push(at.event(Role::Context, "summary", text));
        }
    }

    /// A compaction Codex ran on its own wrote the summarizer's reply as an assistant message
    /// item first, and its summary is that reply after [`render::SUMMARY_PREFIX`]'s paragraph:
    /// the reply was never the conversation's, and is shown once, as the summary.
    fn summarized(&mut self, summary: &str) {
        let Some((_, reply)) = summary
            .split_once('\n')
            .filter(|_| render::is_summary(summary))
        else {
            return;
        };
        let reply = reply.trim();
        if reply.is_empty() {
            return;
        }
        let waiting = self.s.queue.iter().rposition(
            |slot| matches!(slot, Slot::Waiting(c) if c.twin == Twin::Assistant && c.key == reply),
        );
        if let Some(i) = waiting {
            self.s.queue[i] = Slot::Dropped;
            self.flush();
        }
    }

    // ----- events ---------------------------------------------------------------------------

    fn event_msg(&mut self, at: At, msg: &Value) {
        let Some(kind) = str_at(msg, "type") else {
            return;
        };
        match kind {
            "user_message" => self.user_message(at, msg),
            "agent_message" => {
                let text = str_at(msg, "message").unwrap_or_default();
                self.dialogue(at.event(Role::Assistant, "message", text), Twin::Assistant);
            }
            "agent_reasoning" | "agent_reasoning_raw_content" => {
                let text = str_at(msg, "text").unwrap_or_default();
                self.dialogue(
                    at.event(Role::Assistant, "reasoning", text),
                    Twin::Reasoning,
                );
            }
            "task_started" | "turn_started" => self.s.turn_start = Some(at.seq),
            "turn_aborted" => {
                let reason = str_at(msg, "reason").unwrap_or_default();
                self.push(at.event(Role::Context, "meta", format!("{kind}: {reason}")));
            }
            "thread_rolled_back" => {
                let turns = msg.get("num_turns").and_then(Value::as_u64).unwrap_or(0);
                self.push(at.event(Role::Context, "meta", format!("{kind}: {turns}")));
                self.roll_back(at.seq, turns);
            }
            "thread_name_updated" => {
                if let Some(name) = str_at(msg, "thread_name").filter(|n| !n.trim().is_empty()) {
                    self.s.title = Some(name.to_owned());
                }
            }
            "thread_goal_updated" => {
                if let Some(text) = goal(msg) {
                    self.push(at.event(Role::Context, "meta", text));
                }
            }
            "entered_review_mode" | "exited_review_mode" | "error" => {
                self.push(at.event(Role::Context, "meta", render::strings(msg)));
            }
            "exec_command_end" => {
                let text = exec_output(msg);
                let failed = msg
                    .get("exit_code")
                    .and_then(Value::as_i64)
                    .is_some_and(|c| c != 0);
                self.tool_output(at, msg, Some("exec_command"), vec![text], failed);
            }
            "patch_apply_end" => {
                let text = patch_output(msg);
                let failed = msg.get("success").and_then(Value::as_bool) == Some(false);
                self.tool_output(at, msg, Some("apply_patch"), vec![text], failed);
            }
            "mcp_tool_call_end" => {
                let tool = msg.get("invocation").and_then(|i| str_at(i, "tool"));
                let output = mcp_output(msg);
                self.tool_output(at, msg, tool, output.parts, output.failed);
            }
            kind if is_collab_end(kind) => {
                let output = collab_output(msg);
                self.tool_output(at, msg, Some(kind), output.parts, output.failed);
            }
            "view_image_tool_call" => {
                let path = str_at(msg, "path").unwrap_or_default();
                self.tool_call(at, msg, "view_image", path);
            }
            "item_completed" => {
                if let Some(item) = msg.get("item") {
                    self.turn_item(at, item);
                }
            }
            // token counts, task completion, settings, sub-agent activity, begin events and
            // twins of response items (web_search_end, image_generation_end…) show nothing.
            _ => {}
        }
    }

    fn user_message(&mut self, at: At, msg: &Value) {
        // 0.4x also logged injected context as user_message events with a `kind`; their
        // response items show them already.
        if str_at(msg, "kind").is_some_and(|k| k != "plain") {
            return;
        }
        let text = str_at(msg, "message").unwrap_or_default();
        let images = ["images", "local_images"]
            .iter()
            .map(|k| items(msg.get(*k)).len())
            .sum::<usize>();
        if text.trim().is_empty() && images == 0 {
            return;
        }
        self.user_turn(at.seq);
        let mut parts = vec![text];
        parts.resize(1 + images, IMAGE);
        self.user_parts(at, parts.into_iter());
    }

    /// The parts of a message a person typed, as dialogue events.
    fn user_parts<'t>(&mut self, at: At, parts: impl Iterator<Item = &'t str>) {
        for text in parts {
            let (context, request) = render::split_request(text);
            if let Some(context) = context {
                self.dialogue(at.event(Role::Context, "message", context), Twin::User);
            }
            self.dialogue(at.event(Role::User, "message", request), Twin::User);
        }
    }

    /// A paginated `item_completed` turn item (legacy files log only plans this way).
    fn turn_item(&mut self, at: At, item: &Value) {
        let Some(kind) = str_at(item, "type") else {
            return;
        };
        match kind {
            "UserMessage" => {
                let parts: Vec<&str> = items(item.get("content"))
                    .iter()
                    .filter_map(render::content_part)
                    .collect();
                if parts.iter().any(|p| !p.trim().is_empty()) {
                    self.user_turn(at.seq);
                    self.user_parts(at, parts.into_iter());
                }
            }
            "AgentMessage" => {
                for text in items(item.get("content"))
                    .iter()
                    .filter_map(render::content_part)
                {
                    self.dialogue(at.event(Role::Assistant, "message", text), Twin::Assistant);
                }
            }
            "Reasoning" => {
                let summary = items(item.get("summary_text")).iter();
                let raw = items(item.get("raw_content")).iter();
                for text in summary.chain(raw).filter_map(Value::as_str) {
                    self.dialogue(
                        at.event(Role::Assistant, "reasoning", text),
                        Twin::Reasoning,
                    );
                }
            }
            "Plan" => self.push(at.event(Role::Assistant, "plan", plan(item))),
            "HookPrompt" | "EnteredReviewMode" | "ExitedReviewMode" => {
                self.push(at.event(Role::Context, "meta", render::strings(item)));
            }
            // Tool items repeat the response items' calls and outputs.
            _ => {}
        }
    }
}

// ----- texts a structural read skips ----------------------------------------------------------
//
// Each of these gives the text of values that a line read for its structure alone leaves out
// (see `prune`); that read calls them on stand-ins of those values to tell whether the line
// would show that text, so the two reads cannot disagree.

/// Where a line's skipped values would become event text: an envelope line of this type (its
/// payload), or a response item, event or turn item of this type.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Site<'a> {
    Line(&'a str),
    Item(&'a str),
    Event(&'a str),
    TurnItem(&'a str),
}

/// Whether `value`, an object of `site` (an envelope line's payload for [`Site::Line`]) holding
/// the values that only become event text, gives any: the event the projection shows for it.
/// Which of them show at all for tool outputs depends on the outputs shown before (see
/// [`Projection::line`]).
pub(crate) fn gives_text(site: Site<'_>, value: &Value) -> bool {
    let shows = |text: &str| !text.trim().is_empty();
    let any = |mut texts: Vec<String>| texts.iter_mut().any(|t| shows(t));
    match site {
        Site::Line("compacted") => window(value).is_some() || !summaries(value).is_empty(),
        Site::Line("inter_agent_communication") => str_at(value, "content").is_some_and(shows),
        Site::Line("world_state") => shows(&world_state(value)),
        Site::Item("message" | "agent_message") => texts(value.get("content")).any(shows),
        Site::Item(
            kind @ ("function_call_output" | "custom_tool_call_output" | "tool_search_output"),
        ) => any(item_output(kind, value).parts),
        Site::Event("thread_goal_updated") => goal(value).is_some_and(shows),
        Site::Event("entered_review_mode" | "exited_review_mode" | "error")
        | Site::TurnItem("HookPrompt" | "EnteredReviewMode" | "ExitedReviewMode") => {
            shows(&render::strings(value))
        }
        Site::Event("exec_command_end") => shows(&exec_output(value)),
        Site::Event("patch_apply_end") => shows(&patch_output(value)),
        Site::Event("mcp_tool_call_end") => any(mcp_output(value).parts),
        Site::Event(kind) if is_collab_end(kind) => any(collab_output(value).parts),
        Site::TurnItem("Plan") => shows(plan(value)),
        _ => false,
    }
}

/// The texts of a list of content parts.
fn texts(parts: Option<&Value>) -> impl Iterator<Item = &str> {
    items(parts).iter().filter_map(render::content_part)
}

/// What a `compacted` line shows: its message, else the summaries in its replacement history.
fn summaries(payload: &Value) -> Vec<&str> {
    if let Some(text) = str_at(payload, "message").filter(|t| !t.trim().is_empty()) {
        return vec![text];
    }
    items(payload.get("replacement_history"))
        .iter()
        .flat_map(|item| texts(item.get("content")))
        .filter(|text| render::is_summary(text))
        .collect()
}

/// The marker a compaction of Codex's context windows (0.125+) leaves: `compacted: window N`.
/// Its `replacement_history` repeats messages already shown, so the marker is all it adds.
fn window(payload: &Value) -> Option<String> {
    // Older files put the number under `window_id`.
    let number = ["window_number", "window_id"]
        .iter()
        .find_map(|k| payload.get(*k)?.as_u64());
    let id = str_at(payload, "window_id").filter(|id| !id.trim().is_empty());
    match (number, id) {
        (Some(n), _) => Some(format!("compacted: window {n}")),
        (None, Some(id)) => Some(format!("compacted: window {id}")),
        (None, None) => None,
    }
}

/// Whether an event ends a multi-agent tool call (`collab_agent_spawn_end`,
/// `collab_waiting_end`, `collab_agent_interaction_end`, `collab_close_end`…): the output of the
/// `spawn_agent`, `wait_agent`, `send_input` or `close_agent` call it names.
pub(crate) fn is_collab_end(kind: &str) -> bool {
    kind.starts_with("collab_") && kind.ends_with("_end")
}

/// What a multi-agent tool call's end event reports: its prompt, the agents' names, roles and
/// statuses and their last messages (ids left out). A wait lists each agent twice, by thread
/// (`statuses`) and with its name (`agent_statuses`): the named list is shown.
fn collab_output(msg: &Value) -> render::Output {
    let shown: serde_json::Map<String, Value> = msg
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(k, _)| !(*k == "statuses" && msg.get("agent_statuses").is_some()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let status = msg.get("status");
    let failed = status.and_then(Value::as_str) == Some("not_found")
        || status.and_then(|s| s.get("errored")).is_some();
    render::Output {
        parts: vec![render::strings(&Value::Object(shown))],
        failed,
    }
}

fn world_state(payload: &Value) -> String {
    render::strings(payload.get("state").unwrap_or(payload))
}

/// A `function_call_output`, `custom_tool_call_output` or `tool_search_output` item's output.
fn item_output(kind: &str, item: &Value) -> render::Output {
    let mut output = match kind {
        "tool_search_output" => render::Output {
            parts: vec![render::strings(item.get("tools").unwrap_or(&Value::Null))],
            failed: false,
        },
        _ => render::tool_output(item.get("output").unwrap_or(&Value::Null)),
    };
    output.failed |= item.get("success").and_then(Value::as_bool) == Some(false);
    output
}

fn goal(msg: &Value) -> Option<&str> {
    msg.get("goal")?.get("objective")?.as_str()
}

fn exec_output(msg: &Value) -> String {
    str_at(msg, "aggregated_output")
        .or_else(|| str_at(msg, "formatted_output"))
        .map_or_else(|| joined(msg, &["stdout", "stderr"]), str::to_owned)
}

fn patch_output(msg: &Value) -> String {
    joined(msg, &["stdout", "stderr"])
}

/// An `mcp_tool_call_end`'s result: its error, or the content parts of its `Ok`.
fn mcp_output(msg: &Value) -> render::Output {
    let result = msg.get("result").unwrap_or(&Value::Null);
    if let Some(err) = result.get("Err") {
        return render::Output {
            parts: vec![render::strings(err)],
            failed: true,
        };
    }
    let ok = result.get("Ok").unwrap_or(result);
    render::Output {
        parts: texts(ok.get("content")).map(str::to_owned).collect(),
        failed: ["is_error", "isError"]
            .iter()
            .any(|k| ok.get(*k).and_then(Value::as_bool) == Some(true)),
    }
}

fn plan(item: &Value) -> &str {
    str_at(item, "text").unwrap_or_default()
}

fn joined(value: &Value, keys: &[&str]) -> String {
    keys.iter()
        .filter_map(|k| str_at(value, k))
        .filter(|s| !s.trim().is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

/// What a web search looked for: its query (or queries), or the page it opened or searched.
fn web_search(action: &Value) -> String {
    if let Some(query) = str_at(action, "query") {
        return query.to_owned();
    }
    let queries: Vec<&str> = items(action.get("queries"))
        .iter()
        .filter_map(Value::as_str)
        .collect();
    if !queries.is_empty() {
        return queries.join("\n");
    }
    joined(action, &["pattern", "url"])
}
