//! A scripted model server on 127.0.0.1 for `record`: the Anthropic Messages API
//! (`/v1/messages`), the OpenAI Responses API (`/responses`), OpenAI chat completions
//! (`/chat/completions`) and the Gemini API (`/v1beta/models/<model>:generateContent`, and
//! `:streamGenerateContent`), each streamed as server-sent events when the request asks for it.
//!
//! It does not think: a request that asks for a summary of the conversation (a compaction) gets
//! the script's summary; any other gets the reply of the first rule of the script whose trigger
//! appears in what the request newly brings (the text of the trailing user and tool items, after
//! the model's last turn), and otherwise a plain acknowledgement. Each rule, and the summary,
//! answers once: an agent that brings an earlier tool output back (a compaction re-attaching a
//! file it read) does not replay that step. Every request is logged under
//! the log directory, numbered, so that a script can be fitted to what an agent sends.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use anyhow::{bail, Context, Result};
use serde_json::{json, Value};

/// One tool call of a scripted reply: the tool's name as the agent offers it, and its input.
#[derive(Clone, Debug)]
pub struct Call {
    pub name: String,
    pub input: Value,
}

/// A scripted reply: optional reasoning, optional text, then tool calls (several are parallel
/// calls), and the input tokens it claims to have read (a large count makes an agent compact).
#[derive(Clone, Debug, Default)]
pub struct Reply {
    pub thinking: Option<String>,
    pub text: Option<String>,
    pub calls: Vec<Call>,
    pub input_tokens: u64,
}

impl Reply {
    pub fn text(text: &str) -> Reply {
        Reply {
            text: Some(text.to_owned()),
            ..Reply::default()
        }
    }

    pub fn call(name: &str, input: Value) -> Reply {
        Reply::default().and_call(name, input)
    }

    pub fn and_call(mut self, name: &str, input: Value) -> Reply {
        self.calls.push(Call {
            name: name.to_owned(),
            input,
        });
        self
    }

    pub fn with_text(mut self, text: &str) -> Reply {
        self.text = Some(text.to_owned());
        self
    }

    pub fn with_thinking(mut self, text: &str) -> Reply {
        self.thinking = Some(text.to_owned());
        self
    }

    pub fn with_input_tokens(mut self, tokens: u64) -> Reply {
        self.input_tokens = tokens;
        self
    }
}

/// When `trigger` is in what a request newly brings, answer `reply`.
#[derive(Clone, Debug)]
pub struct Rule {
    pub trigger: String,
    pub reply: Reply,
}

/// What the server answers.
#[derive(Clone, Debug, Default)]
pub struct Script {
    pub rules: Vec<Rule>,
    /// The reply to a request for a summary of the conversation (a compaction).
    pub summary: Option<Reply>,
    /// Words that mark a request for a summary, in the request's last input (lowercase).
    pub summary_triggers: Vec<String>,
}

impl Script {
    pub fn on(&mut self, trigger: &str, reply: Reply) {
        self.rules.push(Rule {
            trigger: trigger.to_owned(),
            reply,
        });
    }
}

/// A running server: its port, and the script it answers from (replaceable between runs).
pub struct Server {
    pub port: u16,
    script: Arc<Mutex<Script>>,
}

impl Server {
    /// Start serving on an ephemeral port of 127.0.0.1, logging requests into `log_dir`.
    pub fn start(log_dir: PathBuf) -> Result<Server> {
        std::fs::create_dir_all(&log_dir)?;
        let listener = TcpListener::bind("127.0.0.1:0").context("binding 127.0.0.1")?;
        let port = listener.local_addr()?.port();
        let script = Arc::new(Mutex::new(Script::default()));
        let counter = Arc::new(AtomicUsize::new(0));
        let shared = script.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let script = shared.clone();
                let counter = counter.clone();
                let log_dir = log_dir.clone();
                std::thread::spawn(move || {
                    if let Err(err) = serve(stream, &script, &counter, &log_dir) {
                        eprintln!("model server: {err:#}");
                    }
                });
            }
        });
        Ok(Server { port, script })
    }

    pub fn set_script(&self, script: Script) {
        *self.script.lock().unwrap() = script;
    }
}

struct Request {
    method: String,
    path: String,
    body: Vec<u8>,
}

fn read_request(reader: &mut BufReader<TcpStream>) -> Result<Option<Request>> {
    let mut line = String::new();
    if reader.read_line(&mut line)? == 0 {
        return Ok(None);
    }
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or_default().to_owned();
    let path = parts.next().unwrap_or_default().to_owned();
    let mut length = 0usize;
    let mut chunked = false;
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header)? == 0 {
            bail!("connection closed in the headers");
        }
        let header = header.trim_end();
        if header.is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':') {
            let value = value.trim();
            match name.to_ascii_lowercase().as_str() {
                "content-length" => length = value.parse().context("content-length")?,
                "transfer-encoding" => chunked = value.eq_ignore_ascii_case("chunked"),
                _ => {}
            }
        }
    }
    let mut body = Vec::new();
    if chunked {
        loop {
            let mut size = String::new();
            reader.read_line(&mut size)?;
            let size = usize::from_str_radix(size.trim().split(';').next().unwrap_or("0"), 16)
                .context("chunk size")?;
            let mut chunk = vec![0; size + 2];
            reader.read_exact(&mut chunk)?;
            if size == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..size]);
        }
    } else {
        body.resize(length, 0);
        reader.read_exact(&mut body)?;
    }
    Ok(Some(Request { method, path, body }))
}

fn serve(
    stream: TcpStream,
    script: &Mutex<Script>,
    counter: &AtomicUsize,
    log_dir: &std::path::Path,
) -> Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut out = stream;
    // One request a connection (`connection: close`): clients open another for the next.
    if let Some(request) = read_request(&mut reader)? {
        let n = counter.fetch_add(1, Ordering::SeqCst) + 1;
        let body: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
        let (status, content_type, payload, reply) =
            respond(&request, &body, &mut script.lock().unwrap());
        let name = request
            .path
            .trim_start_matches('/')
            .replace(['/', '?', '&', '='], "_");
        let log = json!({
            "method": request.method,
            "path": request.path,
            "latest_input": latest_input(&request.path, &body),
            "reply": reply.map(|r| format!("{r:?}")),
            "request": body,
        });
        std::fs::write(
            log_dir.join(format!("{n:03}-{name}.json")),
            serde_json::to_vec_pretty(&log)?,
        )?;
        let head = format!(
            "HTTP/1.1 {status}\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\n\
             cache-control: no-cache\r\nconnection: close\r\n\r\n",
            payload.len()
        );
        out.write_all(head.as_bytes())?;
        out.write_all(&payload)?;
        out.flush()?;
    }
    Ok(())
}

type Response = (&'static str, &'static str, Vec<u8>, Option<Reply>);

fn respond(request: &Request, body: &Value, script: &mut Script) -> Response {
    let path = request.path.split('?').next().unwrap_or_default();
    if request.method != "POST" {
        return ("404 Not Found", "application/json", b"{}".to_vec(), None);
    }
    if path.ends_with("/messages/count_tokens") {
        let body = json!({"input_tokens": 1000}).to_string().into_bytes();
        return ("200 OK", "application/json", body, None);
    }
    if path.ends_with(":countTokens") {
        let body = json!({"totalTokens": 1000}).to_string().into_bytes();
        return ("200 OK", "application/json", body, None);
    }
    let Some(api) = api_of(path) else {
        return ("404 Not Found", "application/json", b"{}".to_vec(), None);
    };
    let reply = choose(script, api, body);
    let stream =
        body["stream"].as_bool().unwrap_or(false) || path.ends_with(":streamGenerateContent");
    let model = body["model"].as_str().unwrap_or("scripted").to_owned();
    let payload = match (api, stream) {
        (Api::Messages, true) => messages_sse(&reply, &model),
        (Api::Messages, false) => serde_json::to_vec(&messages_json(&reply, &model)).unwrap(),
        (Api::Responses, _) => responses_sse(&reply, &model),
        (Api::Chat, true) => chat_sse(&reply, &model),
        (Api::Chat, false) => serde_json::to_vec(&chat_json(&reply, &model)).unwrap(),
        (Api::Gemini, true) => gemini_sse(&reply),
        (Api::Gemini, false) => serde_json::to_vec(&gemini_json(&reply)).unwrap(),
    };
    let content_type = if (stream && api != Api::Gemini)
        || api == Api::Responses
        || (api == Api::Gemini && request.path.contains("alt=sse"))
    {
        "text/event-stream"
    } else {
        "application/json"
    };
    ("200 OK", content_type, payload, Some(reply))
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Api {
    Messages,
    Responses,
    Chat,
    Gemini,
}

fn api_of(path: &str) -> Option<Api> {
    let path = path.split('?').next().unwrap_or_default();
    if path.ends_with("/messages") {
        Some(Api::Messages)
    } else if path.ends_with("/responses") {
        Some(Api::Responses)
    } else if path.ends_with("/chat/completions") {
        Some(Api::Chat)
    } else if path.ends_with(":generateContent") || path.ends_with(":streamGenerateContent") {
        Some(Api::Gemini)
    } else {
        None
    }
}

/// The reply to a request; each rule, and the summary, answers once.
fn choose(script: &mut Script, api: Api, body: &Value) -> Reply {
    let input = latest(api, body);
    let lower = input.to_lowercase();
    if script.summary.is_some()
        && script
            .summary_triggers
            .iter()
            .any(|t| lower.contains(t.as_str()))
    {
        return script.summary.take().unwrap();
    }
    if let Some(at) = script.rules.iter().position(|r| input.contains(&r.trigger)) {
        return script.rules.remove(at).reply;
    }
    Reply::text("Done.")
}

fn latest_input(path: &str, body: &Value) -> String {
    api_of(path)
        .map(|api| latest(api, body))
        .unwrap_or_default()
}

/// The text of what a request newly brings: its trailing user and tool items after the
/// model's last turn.
fn latest(api: Api, body: &Value) -> String {
    let empty = Vec::new();
    let (items, is_model_turn): (&Vec<Value>, fn(&Value) -> bool) = match api {
        // Trailing user messages, and the system notes some clients append after them.
        Api::Messages | Api::Chat => (body["messages"].as_array().unwrap_or(&empty), |m| {
            m["role"] == "assistant"
        }),
        Api::Gemini => return gemini_latest(body),
        Api::Responses => (body["input"].as_array().unwrap_or(&empty), |item| {
            let kind = item["type"].as_str().unwrap_or("message");
            matches!(
                kind,
                "function_call" | "custom_tool_call" | "local_shell_call" | "reasoning"
            ) || (kind == "message" && item["role"] == "assistant")
        }),
    };
    let start = items.iter().rposition(is_model_turn).map_or(0, |at| at + 1);
    let mut texts = Vec::new();
    for item in &items[start..] {
        collect_text(&item["content"], &mut texts);
        collect_text(&item["output"], &mut texts);
    }
    texts.join("\n")
}

/// The text of the trailing user turns of a Gemini API request: their text parts and function
/// responses.
fn gemini_latest(body: &Value) -> String {
    let empty = Vec::new();
    let contents = body["contents"].as_array().unwrap_or(&empty);
    let start = contents
        .iter()
        .rposition(|c| c["role"] == "model")
        .map_or(0, |at| at + 1);
    let mut texts = Vec::new();
    for part in contents[start..]
        .iter()
        .flat_map(|c| c["parts"].as_array().unwrap_or(&empty))
    {
        collect_text(&part["text"], &mut texts);
        collect_text(&part["functionResponse"]["response"], &mut texts);
    }
    texts.join("\n")
}

fn collect_text(value: &Value, texts: &mut Vec<String>) {
    match value {
        Value::String(s) => texts.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|i| collect_text(i, texts)),
        Value::Object(map) => {
            // A message between agents carries its payload as `encrypted_content`.
            for key in ["text", "content", "output", "encrypted_content"] {
                if let Some(v) = map.get(key) {
                    collect_text(v, texts);
                }
            }
        }
        _ => {}
    }
}

fn id(prefix: &str) -> String {
    static NEXT: AtomicUsize = AtomicUsize::new(1);
    format!("{prefix}_{:024}", NEXT.fetch_add(1, Ordering::SeqCst))
}

fn sse(out: &mut Vec<u8>, event: Option<&str>, data: &Value) {
    if let Some(event) = event {
        out.extend_from_slice(format!("event: {event}\n").as_bytes());
    }
    out.extend_from_slice(format!("data: {data}\n\n").as_bytes());
}

fn usage_input(reply: &Reply) -> u64 {
    reply.input_tokens.max(100)
}

// ---- Anthropic Messages ----

fn messages_blocks(reply: &Reply) -> Vec<Value> {
    let mut blocks = Vec::new();
    if let Some(thinking) = &reply.thinking {
        blocks.push(json!({"type": "thinking", "thinking": thinking, "signature": "c2lnbmF0dXJl"}));
    }
    if let Some(text) = &reply.text {
        blocks.push(json!({"type": "text", "text": text}));
    }
    for call in &reply.calls {
        blocks.push(
            json!({"type": "tool_use", "id": id("toolu"), "name": call.name, "input": call.input}),
        );
    }
    blocks
}

fn messages_json(reply: &Reply, model: &str) -> Value {
    let stop = if reply.calls.is_empty() {
        "end_turn"
    } else {
        "tool_use"
    };
    json!({
        "id": id("msg"), "type": "message", "role": "assistant", "model": model,
        "content": messages_blocks(reply), "stop_reason": stop, "stop_sequence": null,
        "usage": {"input_tokens": usage_input(reply), "output_tokens": 20,
                  "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0},
    })
}

fn messages_sse(reply: &Reply, model: &str) -> Vec<u8> {
    let whole = messages_json(reply, model);
    let mut out = Vec::new();
    let mut start = whole.clone();
    start["content"] = json!([]);
    start["stop_reason"] = Value::Null;
    start["usage"]["output_tokens"] = json!(1);
    sse(
        &mut out,
        Some("message_start"),
        &json!({"type": "message_start", "message": start}),
    );
    for (index, block) in whole["content"].as_array().unwrap().iter().enumerate() {
        let (empty, delta) = match block["type"].as_str().unwrap() {
            "thinking" => (
                json!({"type": "thinking", "thinking": "", "signature": ""}),
                vec![
                    json!({"type": "thinking_delta", "thinking": block["thinking"]}),
                    json!({"type": "signature_delta", "signature": block["signature"]}),
                ],
            ),
            "text" => (
                json!({"type": "text", "text": ""}),
                vec![json!({"type": "text_delta", "text": block["text"]})],
            ),
            _ => (
                json!({"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}),
                vec![
                    json!({"type": "input_json_delta", "partial_json": block["input"].to_string()}),
                ],
            ),
        };
        sse(
            &mut out,
            Some("content_block_start"),
            &json!({"type": "content_block_start", "index": index, "content_block": empty}),
        );
        for delta in delta {
            sse(
                &mut out,
                Some("content_block_delta"),
                &json!({"type": "content_block_delta", "index": index, "delta": delta}),
            );
        }
        sse(
            &mut out,
            Some("content_block_stop"),
            &json!({"type": "content_block_stop", "index": index}),
        );
    }
    sse(
        &mut out,
        Some("message_delta"),
        &json!({"type": "message_delta",
                "delta": {"stop_reason": whole["stop_reason"], "stop_sequence": null},
                "usage": {"output_tokens": 20}}),
    );
    sse(
        &mut out,
        Some("message_stop"),
        &json!({"type": "message_stop"}),
    );
    out
}

// ---- OpenAI Responses ----

fn responses_sse(reply: &Reply, model: &str) -> Vec<u8> {
    let response_id = id("resp");
    let mut out = Vec::new();
    let mut seq = 0u64;
    let mut event = |out: &mut Vec<u8>, kind: &str, mut data: Value| {
        data["type"] = json!(kind);
        data["sequence_number"] = json!(seq);
        seq += 1;
        sse(out, Some(kind), &data);
    };
    let created = json!({"id": response_id, "object": "response", "model": model, "status": "in_progress", "output": []});
    event(&mut out, "response.created", json!({"response": created}));
    let mut items = Vec::new();
    if let Some(thinking) = &reply.thinking {
        items.push(json!({"type": "reasoning", "id": id("rs"),
            "summary": [{"type": "summary_text", "text": thinking}], "content": null,
            "encrypted_content": null}));
    }
    if let Some(text) = &reply.text {
        items.push(
            json!({"type": "message", "id": id("msg"), "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}]}),
        );
    }
    for call in &reply.calls {
        if let Some(input) = call.input.as_str() {
            // A freeform tool (apply_patch): its input is the raw text.
            items.push(
                json!({"type": "custom_tool_call", "id": id("ctc"), "status": "completed",
                "call_id": id("call"), "name": call.name, "input": input}),
            );
        } else {
            let mut item = json!({"type": "function_call", "id": id("fc"), "status": "completed",
                "call_id": id("call"), "name": call.name, "arguments": call.input.to_string()});
            // A tool of a namespace (`collaboration.spawn_agent`) names its namespace apart.
            if let Some((namespace, name)) = call.name.split_once('.') {
                item["namespace"] = json!(namespace);
                item["name"] = json!(name);
            }
            items.push(item);
        }
    }
    for (index, item) in items.iter().enumerate() {
        event(
            &mut out,
            "response.output_item.added",
            json!({"output_index": index, "item": item}),
        );
        if item["type"] == "message" {
            event(
                &mut out,
                "response.output_text.delta",
                json!({"output_index": index, "item_id": item["id"], "content_index": 0,
                       "delta": item["content"][0]["text"]}),
            );
        }
        event(
            &mut out,
            "response.output_item.done",
            json!({"output_index": index, "item": item}),
        );
    }
    let input = usage_input(reply);
    let completed = json!({"id": response_id, "object": "response", "model": model,
        "status": "completed", "output": items,
        "usage": {"input_tokens": input, "input_tokens_details": {"cached_tokens": 0},
                  "output_tokens": 20, "output_tokens_details": {"reasoning_tokens": 0},
                  "total_tokens": input + 20}});
    event(
        &mut out,
        "response.completed",
        json!({"response": completed}),
    );
    out
}

// ---- Gemini API ----

fn gemini_json(reply: &Reply) -> Value {
    let mut parts = Vec::new();
    if let Some(thinking) = &reply.thinking {
        parts.push(json!({"text": thinking, "thought": true}));
    }
    if let Some(text) = &reply.text {
        parts.push(json!({"text": text}));
    }
    for call in &reply.calls {
        parts
            .push(json!({"functionCall": {"id": id("fc"), "name": call.name, "args": call.input}}));
    }
    let input = usage_input(reply);
    json!({
        "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": input, "candidatesTokenCount": 20,
                          "totalTokenCount": input + 20},
        "modelVersion": "scripted",
        "responseId": id("resp"),
    })
}

/// A streamed answer (`alt=sse`): the whole reply in one chunk, as a short reply comes.
fn gemini_sse(reply: &Reply) -> Vec<u8> {
    let mut out = Vec::new();
    sse(&mut out, None, &gemini_json(reply));
    out
}

// ---- OpenAI chat completions ----

fn chat_tool_calls(reply: &Reply) -> Vec<Value> {
    reply
        .calls
        .iter()
        .enumerate()
        .map(|(index, call)| {
            json!({"index": index, "id": id("call"), "type": "function",
                   "function": {"name": call.name, "arguments": call.input.to_string()}})
        })
        .collect()
}

fn chat_finish(reply: &Reply) -> &'static str {
    if reply.calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    }
}

fn chat_usage(reply: &Reply) -> Value {
    let input = usage_input(reply);
    json!({"prompt_tokens": input, "completion_tokens": 20, "total_tokens": input + 20})
}

fn chat_json(reply: &Reply, model: &str) -> Value {
    let mut message = json!({"role": "assistant", "content": reply.text});
    if !reply.calls.is_empty() {
        message["tool_calls"] = json!(chat_tool_calls(reply));
    }
    json!({"id": id("chatcmpl"), "object": "chat.completion", "created": 1_700_000_000, "model": model,
           "choices": [{"index": 0, "message": message, "finish_reason": chat_finish(reply)}],
           "usage": chat_usage(reply)})
}

fn chat_sse(reply: &Reply, model: &str) -> Vec<u8> {
    let chat_id = id("chatcmpl");
    let mut out = Vec::new();
    let chunk = |choices: Value, usage: Value| {
        json!({"id": chat_id, "object": "chat.completion.chunk", "created": 1_700_000_000,
               "model": model, "choices": choices, "usage": usage})
    };
    sse(
        &mut out,
        None,
        &chunk(
            json!([{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": null}]),
            Value::Null,
        ),
    );
    if let Some(thinking) = &reply.thinking {
        sse(
            &mut out,
            None,
            &chunk(
                json!([{"index": 0, "delta": {"reasoning_content": thinking}, "finish_reason": null}]),
                Value::Null,
            ),
        );
    }
    if let Some(text) = &reply.text {
        sse(
            &mut out,
            None,
            &chunk(
                json!([{"index": 0, "delta": {"content": text}, "finish_reason": null}]),
                Value::Null,
            ),
        );
    }
    for call in chat_tool_calls(reply) {
        sse(
            &mut out,
            None,
            &chunk(
                json!([{"index": 0, "delta": {"tool_calls": [call]}, "finish_reason": null}]),
                Value::Null,
            ),
        );
    }
    sse(
        &mut out,
        None,
        &chunk(
            json!([{"index": 0, "delta": {}, "finish_reason": chat_finish(reply)}]),
            Value::Null,
        ),
    );
    sse(&mut out, None, &chunk(json!([]), chat_usage(reply)));
    out.extend_from_slice(b"data: [DONE]\n\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn script() -> Script {
        let mut s = Script {
            summary: Some(Reply::text("the summary")),
            summary_triggers: vec!["summarize this".into()],
            ..Script::default()
        };
        s.on(
            "mk-prompt",
            Reply::call("Bash", json!({"command": "echo mk-in"})),
        );
        s.on("mk-out", Reply::text("mk-reply"));
        s
    }

    #[test]
    fn what_a_request_newly_brings_is_after_the_model_s_last_turn() {
        let messages = json!({"messages": [
            {"role": "user", "content": "old mk-prompt"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "Bash", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "mk-out"}]},
            {"role": "system", "content": [{"type": "text", "text": "a note"}]},
        ]});
        assert_eq!(latest(Api::Messages, &messages), "mk-out\na note");
        let responses = json!({"input": [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "mk-prompt"}]},
            {"type": "function_call", "name": "exec_command", "arguments": "{}", "call_id": "c"},
            {"type": "function_call_output", "call_id": "c", "output": "mk-out"},
        ]});
        assert_eq!(latest(Api::Responses, &responses), "mk-out");
        let chat = json!({"messages": [
            {"role": "user", "content": "mk-prompt"},
            {"role": "assistant", "content": null, "tool_calls": []},
            {"role": "tool", "tool_call_id": "c", "content": "mk-out"},
        ]});
        assert_eq!(latest(Api::Chat, &chat), "mk-out");
    }

    #[test]
    fn each_rule_and_the_summary_answer_once() {
        let mut s = script();
        let ask = |text: &str| json!({"messages": [{"role": "user", "content": text}]});
        let first = choose(&mut s, Api::Messages, &ask("mk-prompt please"));
        assert_eq!(first.calls[0].name, "Bash");
        let again = choose(&mut s, Api::Messages, &ask("mk-prompt please"));
        assert_eq!(again.text.as_deref(), Some("Done."));
        let summary = choose(&mut s, Api::Messages, &ask("Summarize this mk-out"));
        assert_eq!(summary.text.as_deref(), Some("the summary"));
        let reply = choose(&mut s, Api::Messages, &ask("Summarize this mk-out"));
        assert_eq!(reply.text.as_deref(), Some("mk-reply"));
    }

    /// The events of an SSE body: (event name, data).
    fn events(body: &[u8]) -> Vec<(Option<String>, Value)> {
        let text = String::from_utf8(body.to_vec()).unwrap();
        text.split("\n\n")
            .filter(|e| !e.trim().is_empty() && !e.contains("[DONE]"))
            .map(|e| {
                let mut name = None;
                let mut data = Value::Null;
                for line in e.lines() {
                    if let Some(n) = line.strip_prefix("event: ") {
                        name = Some(n.to_owned());
                    } else if let Some(d) = line.strip_prefix("data: ") {
                        data = serde_json::from_str(d).unwrap();
                    }
                }
                (name, data)
            })
            .collect()
    }

    #[test]
    fn each_api_streams_the_reply_as_its_clients_read_it() {
        let reply = Reply::call("Bash", json!({"command": "ls"}))
            .with_text("mk-text")
            .with_thinking("mk-think");
        let anthropic = events(&messages_sse(&reply, "m"));
        let names: Vec<&str> = anthropic
            .iter()
            .map(|(n, _)| n.as_deref().unwrap())
            .collect();
        assert_eq!(names.first(), Some(&"message_start"));
        assert_eq!(names.last(), Some(&"message_stop"));
        assert_eq!(
            names
                .iter()
                .filter(|n| **n == "content_block_start")
                .count(),
            3
        );
        let delta = anthropic
            .iter()
            .find(|(_, d)| d["delta"]["type"] == "input_json_delta")
            .unwrap();
        assert_eq!(delta.1["delta"]["partial_json"], r#"{"command":"ls"}"#);

        let responses = events(&responses_sse(&reply, "m"));
        let done: Vec<&Value> = responses
            .iter()
            .filter(|(n, _)| n.as_deref() == Some("response.output_item.done"))
            .map(|(_, d)| &d["item"])
            .collect();
        let kinds: Vec<&str> = done.iter().map(|i| i["type"].as_str().unwrap()).collect();
        assert_eq!(kinds, ["reasoning", "message", "function_call"]);
        assert_eq!(
            responses.last().unwrap().0.as_deref(),
            Some("response.completed")
        );

        let chat = events(&chat_sse(&reply, "m"));
        assert!(chat
            .iter()
            .any(|(_, d)| d["choices"][0]["delta"]["tool_calls"][0]["function"]["name"] == "Bash"));
        assert!(chat
            .iter()
            .any(|(_, d)| d["choices"][0]["finish_reason"] == "tool_calls"));
    }

    #[test]
    fn the_server_answers_over_http() {
        let dir = std::env::temp_dir().join(format!("record-server-test-{}", std::process::id()));
        let server = Server::start(dir.clone()).unwrap();
        server.set_script(script());
        let body = json!({"model": "m", "stream": true,
                          "messages": [{"role": "user", "content": "mk-prompt"}]})
        .to_string();
        let mut stream = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
        write!(
            stream,
            "POST /v1/messages?beta=true HTTP/1.1\r\nhost: x\r\ncontent-length: {}\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).unwrap();
        assert!(answer.starts_with("HTTP/1.1 200 OK"), "{answer}");
        assert!(answer.contains("text/event-stream"));
        assert!(answer.contains(r#"\"command\":\"echo mk-in\""#), "{answer}");
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
        std::fs::remove_dir_all(dir).unwrap();
    }
}
