//! A search of a session with a rollback gives the branch a full decode gives, although it reads
//! most lines for their structure alone: whether a line is on the branch depends on whether it
//! shows an event, which for many lines hangs on a text that read skips.

use std::collections::HashSet;
use std::path::Path;

use crate::common::{self, check_matching, codex, raw_lines, rule, try_decode, FIXTURES};

/// Checks `trials` random line tests on `path`: each passes a random share of the lines, chosen
/// at random.
fn check_random(path: &Path, seed: u64, trials: usize) {
    let codex = codex();
    let full = try_decode(&codex, path);
    let lines: Vec<Vec<u8>> = raw_lines(path).into_iter().map(|(l, _)| l).collect();
    let mut rng = fastrand::Rng::with_seed(seed);
    for trial in 0..trials {
        let share = rng.u32(0..=100);
        let passed: HashSet<&[u8]> = lines
            .iter()
            .filter(|_| rng.u32(0..100) < share)
            .map(Vec::as_slice)
            .collect();
        let test = |line: &[u8]| passed.contains(line);
        let what = format!("seed {seed}, trial {trial}, {share}% of the lines");
        check_matching(&codex, path, &full, &test, &what);
    }
}

#[test]
fn the_rollback_fixtures_decode_alike_under_random_line_tests() {
    let mut rolled_back = 0;
    for (name, _) in FIXTURES {
        let path = rule(name);
        let (_, decoded) = try_decode(&codex(), &path);
        if decoded.is_ok_and(|d| d.branch.is_some()) {
            rolled_back += 1;
            check_random(&path, 0x0b5e_55ed ^ rolled_back, 400);
        }
    }
    assert!(rolled_back >= 1, "no fixture has a rollback");
}

const META: &str = r#"{"timestamp":"2026-01-01T00:00:00Z","type":"session_meta","payload":{"id":"019c0000-0000-7000-8000-0000000000aa","cwd":"/x"}}"#;

fn event(payload: &str) -> String {
    format!(r#"{{"timestamp":"2026-01-01T00:00:01Z","type":"event_msg","payload":{payload}}}"#)
}

fn item(payload: &str) -> String {
    format!(r#"{{"timestamp":"2026-01-01T00:00:02Z","type":"response_item","payload":{payload}}}"#)
}

fn envelope(kind: &str, payload: &str) -> String {
    format!(r#"{{"timestamp":"2026-01-01T00:00:03Z","type":"{kind}","payload":{payload}}}"#)
}

fn output(kind: &str, call: &str, output: &str) -> String {
    item(&format!(
        r#"{{"type":"{kind}","call_id":"{call}","output":{output}}}"#
    ))
}

/// A user turn: its lines, each with whether it shows an event.
fn turn(n: u32) -> Vec<(String, Option<bool>)> {
    vec![
        (event(r#"{"type":"task_started"}"#), Some(false)),
        (
            event(&format!(
                r#"{{"type":"user_message","message":"question {n}"}}"#
            )),
            Some(true),
        ),
        (
            event(&format!(
                r#"{{"type":"agent_message","message":"answer {n}"}}"#
            )),
            Some(true),
        ),
    ]
}

/// Lines a rollback takes off the branch, whatever they show.
fn off_branch(lines: Vec<(String, Option<bool>)>) -> Vec<(String, Option<bool>)> {
    lines
        .into_iter()
        .map(|(line, shows)| (line, shows.map(|_| false)))
        .collect()
}

/// Lines whose event (or its absence) a structural read cannot see in what it keeps, each
/// with whether a full decode shows one for it; their call ids start with `calls`.
fn texts_only(calls: &str) -> Vec<(String, Option<bool>)> {
    let mut lines = Vec::new();
    let mut call = 0;
    let mut next_call = || {
        call += 1;
        format!("{calls}{call}")
    };
    for (value, shows) in [
        (r#""ok""#, true),
        (r#""""#, false),
        (r#"" \n\t\r\f""#, false),
        (r#""\u0020\u00a0\u2003""#, false),
        (r#""\u00a0x""#, true),
        (r#""\ud83d\ude00""#, true),
        (
            r#""{\"output\":\"\",\"metadata\":{\"exit_code\":1}}""#,
            false,
        ),
        (r#""  {\"output\":\" \\n\"}""#, false),
        (r#""{\"output\":\"done\",\"metadata\":{}}""#, true),
        (r#""{\"output\":\"\",\"output\":\"again\"}""#, true),
        (r#""{\"output\":\"x\",\"output\":\"\"}""#, false),
        (r#""{\"output\":1}""#, true),
        (r#""{\"output\":\"\"} trailing""#, true),
        (r#""{\"output\":\"\",\"n\":1e999}""#, true),
        (r#""{\"output\":\"\",\"s\":\"\\ud800\"}""#, true),
        (r#""{not json""#, true),
        ("[]", false),
        (r#"[{"type":"input_text","text":" "}]"#, false),
        (r#"[{"type":"input_text","text":"part"}]"#, true),
        (r#"[{"type":"input_image","image_url":"data:"}]"#, true),
        (r#"[{"text":"untyped"}]"#, false),
        (r#"[" ", "text"]"#, true),
        (r#"{"content":""}"#, false),
        (
            r#"{"content":[{"type":"input_text","text":"c"}],"extra":"e"}"#,
            true,
        ),
        (r#"{"content":null,"extra":"e"}"#, false),
        (r#"{"extra":" ","id":"ignored"}"#, false),
        (r#"{"extra":{"deep":["x"]}}"#, true),
        (r#"{"success":false}"#, false),
        ("null", false),
        ("5", false),
    ] {
        for kind in ["function_call_output", "custom_tool_call_output"] {
            lines.push((output(kind, &next_call(), value), Some(shows)));
        }
    }
    // An output shown once per call, whatever logs it again.
    let first = format!("{calls}1");
    lines.push((
        output("function_call_output", &first, r#""ok again""#),
        Some(false),
    ));
    lines.push((
        event(&format!(
            r#"{{"type":"exec_command_end","call_id":"{first}","aggregated_output":"ok"}}"#
        )),
        Some(false),
    ));
    let tools = |tools: &str, shows| {
        (
            item(&format!(
                r#"{{"type":"tool_search_output","call_id":"{calls}t{}","tools":{tools}}}"#,
                u8::from(shows)
            )),
            Some(shows),
        )
    };
    lines.push(tools(r#"[{"id":"x","type":"y"}]"#, false));
    lines.push(tools(r#"[{"name":"finder"}]"#, true));
    for (content, shows) in [
        (r#"[{"type":"input_text","text":""}]"#, false),
        (r#"[{"type":"input_text","text":"be careful"}]"#, true),
        (r#""not parts""#, false),
    ] {
        for role in ["developer", "system"] {
            lines.push((
                item(&format!(
                    r#"{{"type":"message","role":"{role}","content":{content}}}"#
                )),
                Some(shows),
            ));
        }
        lines.push((
            item(&format!(
                r#"{{"type":"agent_message","content":{content}}}"#
            )),
            Some(shows),
        ));
    }
    for (fields, shows) in [
        (r#""aggregated_output":"","stdout":"o""#, false),
        (r#""aggregated_output":"all""#, true),
        (
            r#""aggregated_output":5,"formatted_output":" ","stdout":"o""#,
            false,
        ),
        (r#""formatted_output":"f""#, true),
        (r#""stdout":" ","stderr":"e""#, true),
        (r#""stdout":" ","stderr":"""#, false),
    ] {
        let call = next_call();
        lines.push((
            event(&format!(
                r#"{{"type":"exec_command_end","call_id":"{call}",{fields},"exit_code":0}}"#
            )),
            Some(shows),
        ));
    }
    for (fields, shows) in [(r#""stdout":"""#, false), (r#""stderr":"e""#, true)] {
        let call = next_call();
        lines.push((
            event(&format!(
                r#"{{"type":"patch_apply_end","call_id":"{call}",{fields}}}"#
            )),
            Some(shows),
        ));
    }
    for (result, shows) in [
        (r#"{"Err":""}"#, false),
        (r#"{"Err":{"message":"failed"}}"#, true),
        (
            r#"{"Err":null,"Ok":{"content":[{"type":"text","text":"t"}]}}"#,
            false,
        ),
        (r#"{"Ok":{"content":[]}}"#, false),
        (r#"{"Ok":{"content":[{"type":"text","text":"t"}]}}"#, true),
        (r#"{"content":[{"type":"text","text":"t"}]}"#, true),
        (r#"{"Ok":5,"content":[{"type":"text","text":"t"}]}"#, false),
        (r#""text""#, false),
    ] {
        let call = next_call();
        lines.push((
            event(&format!(
                r#"{{"type":"mcp_tool_call_end","call_id":"{call}","invocation":{{"tool":"t"}},"result":{result}}}"#
            )),
            Some(shows),
        ));
    }
    // Fields before the type are read in full.
    for (payload, shows) in [
        (
            r#"{"aggregated_output":"","type":"exec_command_end","stdout":"o"}"#,
            false,
        ),
        (
            r#"{"stdout":"o","type":"exec_command_end","stderr":""}"#,
            true,
        ),
        (r#"{"message":"","type":"error","details":"d"}"#, true),
    ] {
        let call = next_call();
        let payload = payload.replacen('{', &format!(r#"{{"call_id":"{call}","#), 1);
        lines.push((event(&payload), Some(shows)));
    }
    lines.push((
        item(&format!(
            r#"{{"output":"","call_id":"{}","type":"function_call_output","success":true}}"#,
            next_call()
        )),
        Some(false),
    ));
    for (payload, shows) in [
        (
            r#"{"type":"thread_goal_updated","goal":{"objective":""}}"#,
            false,
        ),
        (
            r#"{"type":"thread_goal_updated","goal":{"objective":"ship"}}"#,
            true,
        ),
        (r#"{"type":"error","message":""}"#, false),
        (r#"{"type":"error","message":"boom"}"#, true),
        (
            r#"{"type":"error","turn_id":"t","codex_error_info":{"id":"x"}}"#,
            false,
        ),
        (
            r#"{"type":"entered_review_mode","review_request":{"prompt":"p"}}"#,
            true,
        ),
        (
            r#"{"type":"exited_review_mode","review_output":null}"#,
            false,
        ),
        (
            r#"{"type":"item_completed","item":{"type":"Plan","text":""}}"#,
            false,
        ),
        (
            r#"{"type":"item_completed","item":{"type":"Plan","text":"plan"}}"#,
            true,
        ),
        (
            r#"{"type":"item_completed","item":{"type":"HookPrompt","id":"h"}}"#,
            false,
        ),
        (
            r#"{"type":"item_completed","item":{"type":"HookPrompt","prompt":"go"}}"#,
            true,
        ),
    ] {
        lines.push((event(payload), Some(shows)));
    }
    let summary = "Another language model started to solve this problem: notes";
    for (kind, payload, shows) in [
        ("compacted", r#"{"message":""}"#.to_string(), false),
        ("compacted", r#"{"message":"summary"}"#.to_string(), true),
        (
            "compacted",
            format!(
                r#"{{"message":" ","replacement_history":[{{"content":[{{"type":"input_text","text":"{summary}"}}]}}]}}"#
            ),
            true,
        ),
        (
            "compacted",
            r#"{"replacement_history":[{"content":[{"type":"input_text","text":"not one"}, "  another language model started to solve this problem"]}]}"#.to_string(),
            true,
        ),
        (
            "compacted",
            r#"{"replacement_history":[{"content":[{"type":"input_image","text":"Another language model started"}]}]}"#.to_string(),
            false,
        ),
        ("inter_agent_communication", r#"{"content":""}"#.into(), false),
        ("inter_agent_communication", r#"{"content":"hello"}"#.into(), true),
        ("world_state", r#"{"state":{"a":""},"other":"o"}"#.into(), false),
        ("world_state", r#"{"state":{"a":"b"}}"#.into(), true),
        ("world_state", r#"{"other":"o","id":"i"}"#.into(), true),
        ("world_state", r#"{"state":null,"other":"o"}"#.into(), false),
        ("world_state", r#""plain""#.into(), true),
        ("turn_context", r#"{"cwd":"/x"}"#.into(), false),
    ] {
        lines.push((envelope(kind, &payload), Some(shows)));
    }
    // A call's text is its name, or its input where the name is blank.
    for (fields, shows) in [
        (r#""name":"","arguments":"{\"command\":[\"ls\"]}""#, true),
        (r#""name":" ","arguments":"""#, false),
        (r#""arguments":"""#, true),
        (r#""name":"shell","arguments":"""#, true),
    ] {
        let call = next_call();
        lines.push((
            item(&format!(
                r#"{{"type":"function_call",{fields},"call_id":"{call}"}}"#
            )),
            Some(shows),
        ));
    }
    lines
}

/// A session with lines of every kind whose event hangs on a skipped text, in turns a rollback
/// keeps and in turns it takes back, and outside any turn.
fn rolled_back_session() -> Vec<(String, Option<bool>)> {
    let rollback = (
        event(r#"{"type":"thread_rolled_back","num_turns":1}"#),
        Some(true),
    );
    let mut lines = vec![(META.to_string(), None)];
    lines.extend(texts_only("a"));
    lines.extend(turn(1));
    lines.extend(off_branch([turn(2), texts_only("b")].concat()));
    lines.push(rollback.clone());
    lines.extend(texts_only("c"));
    lines.extend(turn(3));
    lines.extend(texts_only("d"));
    lines.extend(off_branch([turn(4), texts_only("e")].concat()));
    lines.push(rollback);
    lines.extend(texts_only("f"));
    lines
}

#[test]
fn lines_whose_events_hang_on_skipped_texts_keep_their_place_on_the_branch() {
    let dir = common::temp_dir("rollback-texts");
    let path = dir.join("rollout-2026-01-01T00-00-00-019c0000-0000-7000-8000-0000000000aa.jsonl");
    let lines = rolled_back_session();
    let text: Vec<&str> = lines.iter().map(|(l, _)| l.as_str()).collect();
    std::fs::write(&path, text.join("\n") + "\n").unwrap();

    // What the full decode shows: the stated lines are on the branch exactly when they show.
    let (_, decoded) = try_decode(&codex(), &path);
    let branch = decoded.unwrap().branch.expect("a rollback leaves a branch");
    let mut stated = [0, 0];
    for (n, (line, shows)) in lines.iter().enumerate() {
        if let Some(shows) = shows {
            let seq = n as u64 + 1;
            assert_eq!(
                branch.binary_search(&seq).is_ok(),
                *shows,
                "line {seq}: {line}"
            );
            stated[usize::from(*shows)] += 1;
        }
    }
    assert!(stated[0] > 40 && stated[1] > 40, "{stated:?}");

    let codex = codex();
    let full = try_decode(&codex, &path);
    check_matching(&codex, &path, &full, &|_| false, "no line");
    check_matching(&codex, &path, &full, &|_| true, "every line");
    check_random(&path, 0x5eed_0001, 300);
    std::fs::remove_dir_all(&dir).unwrap();
}
