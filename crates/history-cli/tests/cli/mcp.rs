//! The MCP server's request handling, driven in-process through `run_io` over the fixtures:
//! the protocol (negotiation, errors, notifications, batches), the tools' schemas, and that a
//! tool answers with the page the CLI prints, made compact, once, within the budget.

use std::ffi::OsString;
use std::io::Cursor;

use crate::common::Roots;
use history_cli::{run, run_io, Io, HARNESSES};
use serde_json::{json, Value};

/// Runs `notesoup-history [args] mcp` over the roots, feeding it `lines`; returns what it wrote,
/// line by line.
fn serve_raw(r: &Roots, env: &[(&str, &str)], lines: &[String]) -> Vec<String> {
    let mut argv: Vec<OsString> = vec!["notesoup-history".into()];
    for (h, root) in r.roots() {
        argv.push(format!("--{}", h.root_flag).into());
        argv.push(root.into());
    }
    argv.push("mcp".into());
    let home = r.dir.path().join("home").display().to_string();
    let cache = r.cache_home().display().to_string();
    let env = |k: &str| match k {
        "HOME" => Some(home.clone().into()),
        "XDG_CACHE_HOME" => Some(cache.clone().into()),
        "NOTESOUP_HISTORY_INDEX" => Some("off".into()),
        _ => env.iter().find(|(n, _)| *n == k).map(|(_, v)| v.into()),
    };
    let mut input = Cursor::new(lines.join("\n").into_bytes());
    let mut output = Vec::new();
    let out = run_io(
        &HARNESSES,
        argv,
        &env,
        Io {
            input: &mut input,
            output: &mut output,
            start_index: &|_| {},
        },
    );
    assert_eq!((out.code, out.stdout.as_str()), (0, ""), "{}", out.stderr);
    String::from_utf8(output)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// [`serve_raw`] with messages, parsing the replies.
fn serve(r: &Roots, messages: &[Value]) -> Vec<Value> {
    let lines: Vec<String> = messages.iter().map(Value::to_string).collect();
    serve_raw(r, &[], &lines)
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// `initialize` as Claude Code sends it (a client that shows a model the structured content).
fn initialize(version: &str) -> Value {
    initialize_as(version, "claude-code")
}

/// `initialize` from the client named `client`.
fn initialize_as(version: &str, client: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": version, "capabilities": {}, "clientInfo": {"name": client, "version": "1"}
    }})
}

/// A structured page with its recipes as the CLI's JSON has them: `{tool: arguments}` made the
/// arguments, less those only the call added (`verbose`, `budget`).
fn unwrap_recipes(v: &mut Value) {
    match v {
        Value::Object(o) => {
            for key in [
                "older",
                "newer",
                "expand",
                "next",
                "neighborhood",
                "read",
                "list",
                "more",
            ] {
                if let Some(Value::Object(call)) = o.get_mut(key) {
                    let (_, arguments) = call.iter().next().expect("a recipe names its tool");
                    let mut arguments = arguments.clone();
                    arguments.as_object_mut().unwrap().remove("verbose");
                    arguments.as_object_mut().unwrap().remove("budget");
                    o.insert(key.into(), arguments);
                }
            }
            for (k, child) in o.iter_mut() {
                if k != "older" && k != "newer" {
                    unwrap_recipes(child);
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(unwrap_recipes),
        _ => {}
    }
}

/// Every text of an event in `page` (items, a read's item, best hits).
fn texts(page: &Value, out: &mut Vec<String>) {
    match page {
        Value::Object(o) => {
            if o.contains_key("seq") && o.contains_key("role") {
                if let Some(t) = o.get("text").and_then(Value::as_str) {
                    out.push(t.to_string());
                }
            }
            o.values().for_each(|v| texts(v, out));
        }
        Value::Array(a) => a.iter().for_each(|v| texts(v, out)),
        _ => {}
    }
}

/// Asserts that no text of an event appears twice in a whole response.
fn each_text_once(response: &str, page: &Value) {
    let mut all = Vec::new();
    texts(page, &mut all);
    for t in all.iter().filter(|t| t.len() >= 24) {
        let needle = serde_json::to_string(t).unwrap();
        let needle = &needle[1..needle.len() - 1];
        // Forked sessions can hold the same event: once per event on the page.
        assert_eq!(
            response.matches(needle).count(),
            all.iter().filter(|a| *a == t).count(),
            "an event text twice in one response: {t:?}"
        );
    }
}

fn call(id: u64, tool: &str, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": tool, "arguments": arguments}})
}

/// One tool call after `initialize` at the newest revision: its result.
fn call_one(r: &Roots, tool: &str, arguments: Value) -> Value {
    call_one_as(r, "claude-code", tool, arguments)
}

/// [`call_one`] from the client named `client`.
fn call_one_as(r: &Roots, client: &str, tool: &str, arguments: Value) -> Value {
    let replies = serve(
        r,
        &[
            initialize_as("2025-11-25", client),
            call(1, tool, arguments),
        ],
    );
    replies[1]["result"].clone()
}

/// The CLI's output for the same request.
fn cli(r: &Roots, args: &[&str]) -> String {
    let mut argv: Vec<String> = vec!["notesoup-history".into()];
    for (h, root) in r.roots() {
        argv.push(format!("--{}", h.root_flag));
        argv.push(root.display().to_string());
    }
    argv.extend(args.iter().map(|a| a.to_string()));
    let home = r.dir.path().join("home").display().to_string();
    let cache = r.cache_home().display().to_string();
    let env = |k: &str| match k {
        "HOME" => Some(home.clone().into()),
        "XDG_CACHE_HOME" => Some(cache.clone().into()),
        "NOTESOUP_HISTORY_INDEX" => Some("off".into()),
        _ => None,
    };
    let out = run(&HARNESSES, argv, &env);
    if out.stdout.is_empty() {
        out.stderr
    } else {
        out.stdout
    }
}

#[test]
fn the_tools_and_their_schemas() {
    let r = Roots::new();
    let replies = serve(
        &r,
        &[
            initialize("2025-11-25"),
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
        ],
    );
    let tools = &replies[1]["result"]["tools"];
    for tool in tools.as_array().unwrap() {
        let description = tool["description"].as_str().unwrap();
        assert!(
            description.len() < 2048,
            "{}: {}",
            tool["name"],
            description.len()
        );
    }
    insta::assert_json_snapshot!("mcp_tools", tools);
}

#[test]
fn versions_are_negotiated() {
    let r = Roots::new();
    for (asked, answered) in [
        ("2024-11-05", "2024-11-05"),
        ("2025-03-26", "2025-03-26"),
        ("2025-06-18", "2025-06-18"),
        ("2025-11-25", "2025-11-25"),
        ("2026-07-28", "2025-11-25"),
        ("1999-01-01", "2025-11-25"),
    ] {
        let reply = &serve(&r, &[initialize(asked)])[0];
        assert_eq!(reply["result"]["protocolVersion"], answered, "{asked}");
        assert_eq!(
            reply["result"]["capabilities"]["tools"]["listChanged"],
            false
        );
        assert_eq!(reply["result"]["serverInfo"]["name"], "notesoup-history");
    }
}

#[test]
fn the_page_is_sent_once_in_the_form_the_client_shows() {
    let r = Roots::new();
    let list = call(1, "history_list", json!({"session": "claude:parallel"}));
    // Before 2025-06-18, and for a client that shows the text first (pi's adapter) or is not
    // known: the text only.
    for init in [
        initialize("2025-03-26"),
        initialize_as("2025-11-25", "pi-mcp-notesoup-history"),
        initialize_as("2025-11-25", "some-client"),
    ] {
        let replies = serve(&r, &[init.clone(), list.clone()]);
        let result = &replies[1]["result"];
        assert!(result.get("structuredContent").is_none(), "{init}");
        let text = result["content"][0]["text"].as_str().unwrap();
        assert!(text.contains("Check the repo in parallel"), "{text}");
        assert!(!text.contains("notesoup-history list"), "{text}");
    }
    // Claude Code and Codex show a model the structured content: the page is there, and the
    // text only says so.
    for client in ["claude-code", "codex-mcp-client"] {
        let lines = [
            initialize_as("2025-06-18", client).to_string(),
            list.to_string(),
        ];
        let raw = serve_raw(&r, &[], &lines);
        let result: Value = serde_json::from_str(&raw[1]).unwrap();
        let result = &result["result"];
        let page = &result["structuredContent"];
        assert!(page["items"].as_array().unwrap().len() > 1, "{client}");
        assert!(page.get("text").is_none());
        let said = result["content"][0]["text"].as_str().unwrap();
        assert!(
            said.ends_with("(the page is in structuredContent)"),
            "{said}"
        );
        assert!(!said.contains("Check the repo"), "{said}");
        each_text_once(&raw[1], page);
    }
    // NOTESOUP_MCP_CONTENT decides for every client.
    let lines = [
        initialize_as("2025-11-25", "some-client").to_string(),
        list.to_string(),
    ];
    let raw = serve_raw(&r, &[("NOTESOUP_MCP_CONTENT", "structured")], &lines);
    let result: Value = serde_json::from_str(&raw[1]).unwrap();
    assert!(result["result"]["structuredContent"]["items"].is_array());
}

#[test]
fn protocol_errors_and_notifications() {
    let r = Roots::new();
    let lines: Vec<String> = [
        "this is not json",
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"resources/list"}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":4}"#,
        r#"{"id":5,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":[1]}"#,
        r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"history_delete"}}"#,
        r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"arguments":{}}}"#,
        r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"history_list","arguments":"*"}}"#,
        "[]",
        r#"[{"jsonrpc":"2.0","id":10,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":11,"method":"nope"}]"#,
        "42",
        r#"{"jsonrpc":"2.0","id":"last","method":"ping"}"#,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let replies: Vec<Value> = serve_raw(&r, &[], &lines)
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let code = |v: &Value| v["error"]["code"].as_i64();
    assert_eq!(code(&replies[0]), Some(-32700));
    assert_eq!(replies[0]["id"], Value::Null);
    assert_eq!(
        (replies[1]["id"].clone(), code(&replies[1])),
        (json!(2), Some(-32601))
    );
    assert_eq!(replies[2], json!({"jsonrpc": "2.0", "id": 3, "result": {}}));
    assert_eq!(code(&replies[3]), Some(-32600), "a boolean id");
    assert_eq!(code(&replies[4]), Some(-32600), "no method");
    assert_eq!(code(&replies[5]), Some(-32600), "no jsonrpc");
    assert_eq!(code(&replies[6]), Some(-32602), "params not an object");
    assert_eq!(code(&replies[7]), Some(-32602), "an unknown tool");
    assert_eq!(code(&replies[8]), Some(-32602), "no tool name");
    assert_eq!(code(&replies[9]), Some(-32602), "arguments not an object");
    assert_eq!(code(&replies[10]), Some(-32600), "an empty batch");
    let batch = replies[11].as_array().unwrap();
    assert_eq!(
        batch.len(),
        2,
        "a batch is answered but for its notifications"
    );
    assert_eq!(
        (batch[0]["id"].clone(), batch[0]["result"].clone()),
        (json!(10), json!({}))
    );
    assert_eq!(code(&batch[1]), Some(-32601));
    assert_eq!(code(&replies[12]), Some(-32600), "not an object");
    assert_eq!(
        replies[13]["id"], "last",
        "the server read on after every failure"
    );
    assert_eq!(
        replies.len(),
        14,
        "notifications and responses get no reply"
    );
}

#[test]
fn a_list_is_the_cli_page() {
    let r = Roots::new();
    let cases: Vec<(Value, Vec<&str>)> = vec![
        (json!({"session": "*"}), vec!["list", "--session", "*"]),
        (
            json!({"session": "*", "query": ["git diff", "PRECOMPACT"], "roles": ["tool", "user"], "limit": 3}),
            vec![
                "list",
                "--session",
                "*",
                "--query",
                "git diff",
                "--query",
                "PRECOMPACT",
                "--role",
                "tool",
                "--role",
                "user",
                "--limit",
                "3",
            ],
        ),
        (
            json!({"session": "claude:parallel", "after_seq": 1, "roles": ["tool"], "limit": 4}),
            vec![
                "list",
                "--session",
                "claude:parallel",
                "--after-seq",
                "1",
                "--role",
                "tool",
                "--limit",
                "4",
            ],
        ),
        (
            json!({"session": "pi:*", "since": "2026-01-01", "until": "2027-01-01", "from": "oldest", "limit": 12}),
            vec![
                "list",
                "--session",
                "pi:*",
                "--since",
                "2026-01-01",
                "--until",
                "2027-01-01",
                "--from",
                "oldest",
                "--limit",
                "12",
            ],
        ),
    ];
    for (arguments, args) in cases {
        let mut json_args = args.clone();
        json_args.push("--json");
        let cli_page: Value = serde_json::from_str(&cli(&r, &json_args)).unwrap();
        // verbose: every field of the CLI's page.
        let mut verbose = arguments.clone();
        verbose["verbose"] = json!(true);
        let result = call_one(&r, "history_list", verbose.clone());
        assert_eq!(result["isError"], false, "{arguments}");
        let mut structured = result["structuredContent"].clone();
        unwrap_recipes(&mut structured);
        assert_eq!(structured, cli_page, "{arguments}: the verbose page");
        // Compact: the same items, each with what a model goes on and no location, what its
        // session says said once per session.
        let result = call_one(&r, "history_list", arguments.clone());
        let page = &result["structuredContent"];
        let items = page["items"].as_array().unwrap();
        let cli_items = cli_page["items"].as_array().unwrap();
        assert_eq!(items.len(), cli_items.len(), "{arguments}");
        for (item, cli_item) in items.iter().zip(cli_items) {
            for key in ["session", "seq", "part", "role", "text"] {
                assert_eq!(item[key], cli_item[key], "{arguments}: {key}");
            }
            assert_eq!(item["time"], cli_item["timestamp"]);
            for gone in [
                "path",
                "line",
                "byte_offset",
                "byte_len",
                "cwd",
                "resume",
                "kind",
            ] {
                assert!(item.get(gone).is_none(), "{arguments}: {gone} in {item}");
            }
            if let Some(resume) = cli_item.get("resume") {
                let session = cli_item["session"].as_str().unwrap();
                assert_eq!(&page["sessions"][session]["resume"], resume);
            }
        }
        for key in ["older", "newer"] {
            if let Some(recipe) = cli_page.get(key) {
                assert_eq!(page[key]["history_list"], *recipe, "{arguments}: {key}");
            }
        }
        // In text, recipes are the calls to make.
        let text = call_one_as(&r, "some-client", "history_list", arguments.clone());
        let text = text["content"][0]["text"].as_str().unwrap().to_string();
        for key in ["older", "newer"] {
            if let Some(recipe) = cli_page.get(key) {
                let line = format!("→ {key}: history_list({recipe})");
                assert!(text.contains(&line), "{arguments}: {line} in\n{text}");
            }
        }
        assert!(!text.contains("notesoup-history"), "{text}");
    }
}

#[test]
fn a_session_is_named_by_its_transcript_path_with_the_home_unexpanded() {
    // A tool call's arguments meet no shell: `~` is the server's home.
    let r = Roots::new();
    let file = r.root("claude").join("-w-app/abandoned-branch.jsonl");
    std::os::unix::fs::symlink(&file, r.dir.path().join("home/mine.jsonl")).unwrap();
    let by_key = call_one(
        &r,
        "history_list",
        json!({"session": "claude:abandoned-branch"}),
    );
    assert_eq!(by_key["isError"], false, "{by_key}");
    for session in [file.display().to_string(), "~/mine.jsonl".into()] {
        let by_path = call_one(&r, "history_list", json!({"session": session}));
        assert_eq!(by_path, by_key, "{session}");
        let read = call_one(&r, "history_read", json!({"session": session, "seq": 2}));
        assert_eq!(read["structuredContent"]["item"]["seq"], 2, "{read}");
    }
    let gone = call_one(&r, "history_list", json!({"session": "~/gone.jsonl"}));
    assert_eq!(
        gone["structuredContent"]["error"]["code"],
        "unknown_session"
    );
}

#[test]
fn a_read_is_the_cli_page() {
    let r = Roots::new();
    let args = ["read", "--session", "claude:parallel", "--seq", "3"];
    let cli_page: Value =
        serde_json::from_str(&cli(&r, &[&args[..], &["--json"]].concat())).unwrap();
    let result = call_one(
        &r,
        "history_read",
        json!({"session": "claude:parallel", "seq": 3, "verbose": true}),
    );
    let mut structured = result["structuredContent"].clone();
    unwrap_recipes(&mut structured);
    assert_eq!(structured, cli_page);
    assert!(structured["item"]["line"].is_u64() && structured["item"]["resume"].is_object());
    let result = call_one(
        &r,
        "history_read",
        json!({"session": "claude:parallel", "seq": 3}),
    );
    let page = &result["structuredContent"];
    assert_eq!(page["item"]["text"], cli_page["item"]["text"]);
    assert!(page["item"].get("line").is_none() && page["item"].get("resume").is_none());
    assert_eq!(
        page["sessions"][cli_page["session"].as_str().unwrap()]["resume"],
        cli_page["item"]["resume"]
    );
    assert_eq!(
        page["neighborhood"]["history_list"],
        cli_page["neighborhood"]
    );
}

#[test]
fn errors_are_tool_results_with_their_codes() {
    let r = Roots::new();
    let error = |tool: &str, arguments: Value| {
        let result = call_one(&r, tool, arguments.clone());
        assert_eq!(result["isError"], true, "{arguments}");
        let text = result["content"][0]["text"].as_str().unwrap().to_string();
        (result["structuredContent"]["error"].clone(), text)
    };
    let (e, text) = error("history_list", json!({"session": "claude:4f2a0c1e"}));
    assert_eq!(e["code"], "ambiguous_session");
    let mut candidates: Vec<&str> = e["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    candidates.sort();
    assert_eq!(
        candidates,
        [
            "claude:4f2a0c1e-1111-4000-8000-000000000001",
            "claude:4f2a0c1e-2222-4000-8000-000000000002"
        ]
    );
    assert!(text.ends_with("(ambiguous_session)"), "{text}");
    let code = |tool: &str, arguments: Value| error(tool, arguments).0["code"].clone();
    assert_eq!(
        code("history_list", json!({"session": "claude:nope"})),
        "unknown_session"
    );
    assert_eq!(
        code("history_read", json!({"session": "*", "seq": 1})),
        "invalid_session"
    );
    assert_eq!(
        code("history_list", json!({"session": "*", "before_seq": 3})),
        "invalid_bounds"
    );
    assert_eq!(
        code("history_list", json!({"session": "claude:no-leaf"})),
        "history_unavailable"
    );
    for bad in [
        json!({"limit": -1}),
        json!({"limit": 2.5}),
        json!({"limit": "many"}),
        json!({"limit": "1e3"}),
        json!({"roles": ["robot"]}),
        json!({"roles": [1]}),
        json!({"since": "last tuesday"}),
        json!({"from": "middle"}),
        json!({"session": 7}),
        json!({"sesion": "*"}),
    ] {
        assert_eq!(code("history_list", bad.clone()), "usage", "{bad}");
    }
    assert_eq!(
        code("history_read", json!({"session": "claude:parallel"})),
        "usage"
    );
}

#[test]
fn numbers_may_come_as_strings_or_floats() {
    let r = Roots::new();
    let items = |limit: Value| {
        let result = call_one(&r, "history_list", json!({"session": "*", "limit": limit}));
        result["structuredContent"]["items"].clone()
    };
    let two = items(json!(2));
    assert_eq!(two.as_array().unwrap().len(), 2);
    for same in [json!("2"), json!(2.0), json!(" 2 "), json!("2.0")] {
        assert_eq!(items(same.clone()), two, "{same}");
    }
    let read = |seq: Value| {
        call_one(
            &r,
            "history_read",
            json!({"session": "claude:parallel", "seq": seq, "part": "0"}),
        )["structuredContent"]["item"]["seq"]
            .clone()
    };
    assert_eq!(read(json!("3")), 3);
    assert_eq!(read(json!(3.0)), 3);
}

#[test]
fn every_answer_fits_the_budget() {
    let r = Roots::new();
    let (id, text) = r.big_session(100_000);
    let mut lines = vec![initialize("2025-11-25").to_string()];
    lines.push(
        call(
            1,
            "history_list",
            json!({"session": "*", "query": "e", "limit": 500}),
        )
        .to_string(),
    );
    lines.push(call(2, "history_list", json!({"session": "*", "limit": 500})).to_string());
    lines.push(
        call(
            3,
            "history_list",
            json!({"session": format!("claude:{id}")}),
        )
        .to_string(),
    );
    lines.push(
        json!({"jsonrpc": "2.0", "id": "a rather long request id, which the frame must leave room for",
               "method": "tools/call",
               "params": {"name": "history_read", "arguments": {"session": format!("claude:{id}"), "seq": 1}}})
        .to_string(),
    );
    let replies = serve_raw(&r, &[], &lines);
    for reply in &replies {
        assert!(
            reply.len() <= 32 * 1024,
            "{} bytes: {}…",
            reply.len(),
            &reply[..200]
        );
    }
    // The read is cut, says where to go on, and going on gives the whole text.
    let mut shown = String::new();
    let mut offset = 0u64;
    loop {
        let result = call_one(
            &r,
            "history_read",
            json!({"session": format!("claude:{id}"), "seq": 1, "offset_chars": offset}),
        );
        let page = &result["structuredContent"];
        assert_eq!(page["offset_chars"], offset);
        shown.push_str(page["item"]["text"].as_str().unwrap());
        match page["next_offset_chars"].as_u64() {
            Some(next) => {
                assert!(next > offset);
                assert_eq!(
                    page["next"]["history_read"]["offset_chars"], next,
                    "the recipe continues there"
                );
                offset = next;
            }
            None => break,
        }
    }
    assert_eq!(shown, text);
    assert!(offset > 0, "the text did not fit one answer");
}

#[test]
fn the_current_session_is_the_default() {
    let r = Roots::new();
    let lines = [
        initialize_as("2025-11-25", "some-client").to_string(),
        call(1, "history_list", json!({"limit": 2})).to_string(),
    ];
    let current = [("CLAUDE_CODE_SESSION_ID", "parallel-tool-results")];
    let replies = serve_raw(&r, &current, &lines);
    let result: Value = serde_json::from_str(&replies[1]).unwrap();
    // An agent is told which session that was, and how to search every one, in its terms.
    let text = result["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with(
            "notice: listing the current session claude:parallel-tool-results (named by \
             CLAUDE_CODE_SESSION_ID); session: \"*\" lists every session\n\nseq 1 | user"
        ),
        "{text}"
    );
    let lines = [
        initialize("2025-11-25").to_string(),
        call(1, "history_list", json!({"limit": 2})).to_string(),
    ];
    let replies = serve_raw(&r, &current, &lines);
    let result: Value = serde_json::from_str(&replies[1]).unwrap();
    let page = &result["result"]["structuredContent"];
    assert_eq!(page["session"], "claude:parallel-tool-results");
    // One that no longer exists: every session, with a notice that says so.
    let stale = [("CLAUDE_CODE_SESSION_ID", "gone")];
    let replies = serve_raw(&r, &stale, &lines);
    let result: Value = serde_json::from_str(&replies[1]).unwrap();
    let page = &result["result"]["structuredContent"];
    assert!(page.get("session").is_none(), "{page}");
    assert!(
        page["notice"].as_str().unwrap().contains("was not found"),
        "{page}"
    );
    // No current session: every session.
    let replies = serve_raw(&r, &[], &lines);
    let result: Value = serde_json::from_str(&replies[1]).unwrap();
    assert!(result["result"]["structuredContent"]
        .get("session")
        .is_none());
}

#[test]
fn a_search_that_misses_the_current_session_says_what_every_session_has() {
    let r = Roots::new();
    let current = [("CLAUDE_CODE_SESSION_ID", "parallel-tool-results")];
    let ask = |client: &str, arguments: Value| {
        let lines = [
            initialize_as("2025-11-25", client).to_string(),
            call(1, "history_list", arguments).to_string(),
        ];
        let replies = serve_raw(&r, &current, &lines);
        serde_json::from_str::<Value>(&replies[1]).unwrap()["result"].clone()
    };
    // PRECOMPACT is in another session only.
    let arguments = json!({"query": "PRECOMPACT", "limit": 3});
    let result = ask("claude-code", arguments.clone());
    let page = &result["structuredContent"];
    assert_eq!(page["items"], json!([]));
    let notice = page["notice"].as_str().unwrap();
    assert!(
        notice.starts_with(
            "no match in the current session claude:parallel-tool-results; session: \"*\" has "
        ),
        "{notice}"
    );
    let everywhere = &page["every_session"]["history_list"];
    assert_eq!(
        everywhere,
        &json!({"query": "PRECOMPACT", "limit": 3, "session": "*"})
    );
    // Following it finds the hits it counted.
    let found = ask("claude-code", everywhere.clone());
    let hits = found["structuredContent"]["items"]
        .as_array()
        .unwrap()
        .len();
    assert!(hits > 0);
    assert!(
        notice.contains(&format!(" has {hits} hit")),
        "{notice} / {hits}"
    );
    // In text, the same, as the call to make.
    let result = ask("some-client", arguments);
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains(
            "→ every session: history_list({\"query\":\"PRECOMPACT\",\"limit\":3,\"session\":\"*\"})"
        ),
        "{text}"
    );
    // Nothing anywhere: the ranked search to try.
    let result = ask("claude-code", json!({"query": "no such words anywhere"}));
    let page = &result["structuredContent"];
    assert!(page["notice"]
        .as_str()
        .unwrap()
        .contains("nor in any other"));
    assert_eq!(
        page["find"]["history_find"]["text"],
        "no such words anywhere"
    );
}

#[test]
fn sessions_budget_and_recipes_that_follow() {
    let r = Roots::new();
    // The sessions view: one entry per session, each with its hits and the call that reads
    // its best hit.
    let result = call_one(
        &r,
        "history_list",
        json!({"query": "git", "sessions": true, "limit": 2}),
    );
    let page = &result["structuredContent"];
    let sessions = page["sessions"].as_array().unwrap();
    assert!(!sessions.is_empty() && sessions.len() <= 2, "{page}");
    for s in sessions {
        assert!(s["hits"].as_u64().unwrap() >= 1);
        assert!(s.get("path").is_none());
        let read = &s["read"]["history_read"];
        assert_eq!(read["session"], s["session"]);
        let got = call_one(&r, "history_read", read.clone());
        assert_eq!(got["structuredContent"]["item"]["seq"], read["seq"]);
        assert!(s["best"].get("cwd").is_none(), "{s}");
    }
    let text = call_one_as(
        &r,
        "some-client",
        "history_list",
        json!({"query": "git", "sessions": true, "limit": 2}),
    );
    let text = text["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("→ read: history_read({"), "{text}");
    // A budget: the whole answer fits it, and the next page's recipe asks for it again.
    for budget in [4096, 1500] {
        let lines = [
            initialize("2025-11-25").to_string(),
            call(
                1,
                "history_list",
                json!({"session": "*", "query": "e", "budget": budget, "limit": 50}),
            )
            .to_string(),
        ];
        let raw = serve_raw(&r, &[], &lines);
        assert!(raw[1].len() <= budget, "{} > {budget}", raw[1].len());
        let result: Value = serde_json::from_str(&raw[1]).unwrap();
        let page = &result["result"]["structuredContent"];
        assert_eq!(page["older"]["history_list"]["budget"], budget, "{page}");
        assert_eq!(page["older"]["history_list"]["query"], json!(["e"]));
        assert_eq!(page["older"]["history_list"]["limit"], 50);
        // The recipe passed whole is the call it names.
        let next = call_one(&r, "history_list", page["older"].clone());
        assert!(next["structuredContent"]["items"].is_array(), "{next}");
    }
    // Out of bounds: clamped.
    let lines = [
        initialize("2025-11-25").to_string(),
        call(
            1,
            "history_list",
            json!({"session": "*", "query": "e", "budget": 10, "limit": 50}),
        )
        .to_string(),
        call(
            2,
            "history_list",
            json!({"session": "*", "query": "e", "budget": 10_000_000, "limit": 500}),
        )
        .to_string(),
    ];
    let raw = serve_raw(&r, &[], &lines);
    let small: Value = serde_json::from_str(&raw[1]).unwrap();
    assert_eq!(small["result"]["isError"], false, "{small}");
    assert!(raw[1].len() <= 1100, "{}", raw[1].len());
    assert!(raw[2].len() <= 32 * 1024);
    // verbose comes back in recipes too.
    let result = call_one(
        &r,
        "history_list",
        json!({"session": "claude:parallel", "limit": 1, "verbose": true}),
    );
    let page = &result["structuredContent"];
    assert_eq!(page["older"]["history_list"]["verbose"], true);
    assert!(page["items"][0]["line"].is_u64());
}

#[test]
fn the_binary_serves_until_stdin_ends() {
    let r = Roots::new();
    let input = [
        initialize("2025-11-25").to_string(),
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_string(),
        call(1, "history_list", json!({"session": "*"})).to_string(),
        "not json".to_string(),
        call(
            2,
            "history_read",
            json!({"session": "pi:019f86d0", "seq": 5}),
        )
        .to_string(),
    ]
    .join("\n")
        + "\n";
    let out = r
        .cmd()
        .env("NOTESOUP_HISTORY_INDEX", "off")
        .arg("mcp")
        .write_stdin(input)
        .timeout(std::time::Duration::from_secs(30))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let stdout = String::from_utf8(out.stdout).unwrap();
    let replies: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(
        replies.len(),
        4,
        "only protocol messages on stdout: {stdout}"
    );
    assert!(replies.iter().all(|m| m["jsonrpc"] == "2.0"));
    assert_eq!(replies[3]["result"]["isError"], false);
}
