//! `decode` with a line test reads the lines a search cannot want for their structure alone: it must
//! deliver exactly the events `decode` delivers for the other lines, and the same `Decoded`.

use std::collections::BTreeSet;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::{Path, PathBuf};

use crate::common::{self, check_matching, codex, raw_lines, root, try_decode};
use fastrand::Rng;
use history_core::Filter;

/// Every rollout under the fixture root, plain and compressed.
fn fixtures() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.to_string_lossy().ends_with(".jsonl")
                || path.to_string_lossy().ends_with(".jsonl.zst")
            {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    walk(&root(), &mut out);
    out.sort();
    assert!(out.len() >= 15, "{out:?}");
    assert!(out
        .iter()
        .any(|p| p.extension().is_some_and(|e| e == "zst")));
    out
}

fn hash(seed: u64, bytes: &[u8]) -> u64 {
    let mut h = DefaultHasher::new();
    seed.hash(&mut h);
    bytes.hash(&mut h);
    h.finish()
}

/// The words (3+ letters, digits or `_`) of every fixture line, each once.
fn words(files: &[PathBuf]) -> Vec<String> {
    let mut words = BTreeSet::new();
    for path in files {
        for (line, _) in raw_lines(path) {
            for word in line.split(|b| !(b.is_ascii_alphanumeric() || *b == b'_')) {
                if word.len() >= 3 {
                    words.insert(String::from_utf8(word.to_vec()).unwrap());
                }
            }
        }
    }
    words.into_iter().collect()
}

fn contains(line: &[u8], word: &[u8]) -> bool {
    line.windows(word.len()).any(|w| w == word)
}

#[test]
fn every_line_test_gives_the_full_decode_s_events_for_the_lines_it_passes() {
    let codex = codex();
    let files = fixtures();
    let words = words(&files);
    assert!(words.len() > 300, "{}", words.len());
    let mut cases = 0;
    for path in &files {
        let full = try_decode(&codex, path);
        let check = |test: &(dyn Fn(&[u8]) -> bool + Sync), what: &str| {
            check_matching(&codex, path, &full, test, what);
        };
        check(&|_| true, "all lines");
        check(&|_| false, "no line");
        for seed in 0..40 {
            for percent in [5, 30, 50, 70, 95] {
                let test = move |line: &[u8]| hash(seed, line) % 100 < percent;
                check(&test, &format!("seed {seed}, {percent}%"));
                cases += 1;
            }
        }
        // Every other word, with the lines holding it; and every line but those.
        for word in words.iter().step_by(2) {
            let test = |line: &[u8]| contains(line, word.as_bytes());
            check(&test, &format!("lines with {word}"));
            let test = |line: &[u8]| !contains(line, word.as_bytes());
            check(&test, &format!("lines without {word}"));
            cases += 2;
        }
    }
    assert!(cases > 10_000, "{cases}");
}

#[test]
fn a_search_s_own_raw_line_test_gives_the_same_events() {
    let codex = codex();
    let files = fixtures();
    let words = words(&files);
    for path in &files {
        let full = try_decode(&codex, path);
        for word in words.iter().step_by(7) {
            let filter = Filter::new(std::slice::from_ref(word), vec![], None, None);
            let raw = history_raw::RawFilter::new(filter.queries());
            let test = |line: &[u8]| raw.may_match_slice(line);
            check_matching(&codex, path, &full, &test, &format!("raw filter {word}"));
        }
    }
}

/// Lines whose skipped fields hold what only a full parse refuses (a number out of range, a
/// lone surrogate, nesting past the depth limit, a control character), or which repeat the
/// tags the skipping is decided by.
#[test]
fn lines_the_full_parse_refuses_are_refused_when_skipped_too() {
    let dir = common::temp_dir("matching-edge");
    let meta = r#"{"timestamp":"2026-01-01T00:00:00Z","type":"session_meta","payload":{"id":"019c0000-0000-7000-8000-000000000000","cwd":"/x"}}"#;
    let deep = format!("{}1{}", "[".repeat(200), "]".repeat(200));
    let shallow = format!("{}1{}", "[".repeat(100), "]".repeat(100));
    let said = |n: usize, text: &str| {
        format!(
            r#"{{"timestamp":"2026-01-01T00:00:{n:02}Z","type":"event_msg","payload":{{"type":"agent_message","message":"{text}"}}}}"#
        )
    };
    let item = |n: usize, text: &str| {
        format!(
            r#"{{"timestamp":"2026-01-01T00:00:{n:02}Z","type":"response_item","payload":{{"type":"message","role":"assistant","content":[{{"type":"output_text","text":"{text}"}}]}}}}"#
        )
    };
    let output = |value: &str| {
        format!(
            r#"{{"timestamp":"2026-01-01T00:00:09Z","type":"response_item","payload":{{"type":"function_call_output","call_id":"c1","output":{value}}}}}"#
        )
    };
    let lines = [
        meta.to_string(),
        r#"{"timestamp":"2026-01-01T00:00:01Z","type":"response_item","payload":{"type":"function_call","name":"shell","call_id":"c1","arguments":"{\"command\":[\"ls\"]}"}}"#.to_string(),
        output("1e999"),
        output(r#""\ud800 lone""#),
        output(r#""\ud83d\ude00 pair""#),
        output(&deep),
        output(&shallow),
        output("\"tab\there\""),
        output("-123456789012345678901234567890e-5"),
        output(&format!("1{}", "0".repeat(400))),
        output("\"ok\"").replace(r#""type":"function_call_output""#, r#""type":"function_call_output","type":"message""#),
        item(10, "alpha"),
        said(11, "alpha"),
        said(12, "beta"),
        item(13, "beta").replace(r#""role":"assistant""#, r#""role":"assistant","role":"developer""#),
        item(14, "gamma").replace(r#""type":"response_item""#, r#""type":"response_item","type":"event_msg""#),
        said(15, "gamma"),
        item(16, "delta"),
        "{\"type\":\"event_msg\",\"payload\":{\"type\":\"agent_message\",\"message\":\"bad \u{1} control\"}}".to_string(),
        said(17, "delta"),
        output("\"\\u00e9t\\u00e9\""),
        output("{\"content\":[{\"type\":\"input_text\",\"text\":\"x\"}],\"n\":1.5e300}"),
        output("{\"n\":2e308}"),
    ];
    let mut bytes = lines.join("\n").into_bytes();
    bytes.push(b'\n');
    // Invalid UTF-8 inside a skipped string.
    bytes.extend_from_slice(
        b"{\"type\":\"response_item\",\"payload\":{\"type\":\"function_call_output\",\"call_id\":\"c2\",\"output\":\"\xff\"}}\n",
    );
    let path = dir.join("rollout-2026-01-01T00-00-00-019c0000-0000-7000-8000-000000000000.jsonl");
    std::fs::write(&path, &bytes).unwrap();
    let codex = codex();
    let full = try_decode(&codex, &path);
    let notices = &full.1.as_ref().unwrap().notices;
    assert_eq!(
        notices,
        &["skipped 8 unreadable lines (3, 4, 6, 8, 10, …)"],
        "the full parse's verdicts"
    );
    check_matching(&codex, &path, &full, &|_| true, "all");
    check_matching(&codex, &path, &full, &|_| false, "none");
    for word in ["alpha", "beta", "gamma", "delta", "ok", "pair", "shell"] {
        let test = |line: &[u8]| contains(line, word.as_bytes());
        check_matching(&codex, &path, &full, &test, word);
    }
    for seed in 0..200 {
        let test = |line: &[u8]| hash(seed, line) % 2 == 1;
        check_matching(&codex, &path, &full, &test, &format!("seed {seed}"));
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// One of `from`.
fn pick<'a>(rng: &mut Rng, from: &[&'a str]) -> &'a str {
    from[rng.usize(..from.len())]
}

/// Texts few enough that items and events often repeat each other.
const TEXTS: &[&str] = &[
    "alpha",
    "beta",
    "alpha ",
    "",
    "  ",
    "gamma delta",
    "<environment_context>\\n  <cwd>/home/u/rand</cwd>\\n</environment_context>",
    "ide context\\n## My request for Codex:\\nfix alpha",
    "## My request for Codex:",
    "Another language model started to solve this problem: beta",
    "<user_instructions>be brief</user_instructions>",
    "caf\\u00e9 \\ud83d\\ude00",
];

fn quoted(text: &str) -> String {
    format!("\"{text}\"")
}

/// One random envelope line (G3/G4).
fn envelope_line(rng: &mut Rng, n: usize) -> String {
    let t = |rng: &mut Rng| quoted(pick(rng, TEXTS));
    let call = |rng: &mut Rng| format!("\"c{}\"", rng.usize(..4));
    let parts = |rng: &mut Rng, kind: &str| {
        let mut parts = Vec::new();
        for _ in 0..rng.usize(..3) + 1 {
            parts.push(match rng.usize(..6) {
                0 => r#"{"type":"input_image","image_url":"data:image/png;base64,AAAA"}"#.into(),
                1 => t(rng),
                _ => format!(r#"{{"type":"{kind}","text":{}}}"#, t(rng)),
            });
        }
        format!("[{}]", parts.join(","))
    };
    let item = |payload: String| {
        format!(
            r#"{{"timestamp":"2026-01-01T00:00:{:02}Z","type":"response_item","payload":{payload}}}"#,
            n % 60
        )
    };
    let event = |payload: String| {
        format!(
            r#"{{"timestamp":"2026-01-01T00:00:{:02}Z","type":"event_msg","payload":{payload}}}"#,
            n % 60
        )
    };
    match rng.usize(..34) {
        0..=2 => item(format!(
            r#"{{"type":"message","role":"user","content":{}}}"#,
            parts(rng, "input_text")
        )),
        3..=4 => item(format!(
            r#"{{"type":"message","role":"assistant","content":{}}}"#,
            parts(rng, "output_text")
        )),
        5 => item(format!(
            r#"{{"type":"message","role":"developer","content":{}}}"#,
            parts(rng, "input_text")
        )),
        6..=7 => item(format!(
            r#"{{"type":"reasoning","summary":{},"content":{},"encrypted_content":"gAAAA"}}"#,
            parts(rng, "summary_text"),
            if rng.usize(..2) == 0 {
                "null".into()
            } else {
                parts(rng, "reasoning_text")
            }
        )),
        8..=9 => event(format!(
            r#"{{"type":"user_message","message":{},"images":{},"local_images":[]{}}}"#,
            t(rng),
            ["[]", r#"["data:x"]"#, r#"["a","b"]"#][rng.usize(..3)],
            ["", r#","kind":"plain""#, r#","kind":"environment_context""#][rng.usize(..3)]
        )),
        10..=11 => event(format!(
            r#"{{"type":"agent_message","message":{}}}"#,
            t(rng)
        )),
        12..=13 => event(format!(
            r#"{{"type":"{}","text":{}}}"#,
            pick(rng, &["agent_reasoning", "agent_reasoning_raw_content"]),
            t(rng)
        )),
        14 => item(format!(
            r#"{{"type":"function_call","name":"{}","arguments":"{{\"command\":[\"bash\",\"-lc\",\"ls\"]}}","call_id":{}}}"#,
            pick(rng, &["shell", "exec", ""]),
            call(rng)
        )),
        15 => item(format!(
            r#"{{"type":"{}","call_id":{},"output":{}}}"#,
            pick(rng, &["function_call_output", "custom_tool_call_output"]),
            call(rng),
            pick(
                rng,
                &[
                    r#""ok""#,
                    r#""""#,
                    r#""  ""#,
                    r#""{\"output\":\"boom\",\"metadata\":{\"exit_code\":1}}""#,
                    r#"[{"type":"input_text","text":"part"},{"type":"input_image","image_url":"x"}]"#,
                    r#"{"content":"c","success":false}"#,
                ]
            )
        )),
        16 => item(format!(
            r#"{{"type":"{}","call_id":{},"action":{{"type":"search","query":"q"}},"input":"x"}}"#,
            pick(
                rng,
                &[
                    "local_shell_call",
                    "web_search_call",
                    "custom_tool_call",
                    "image_generation_call"
                ]
            ),
            call(rng)
        )),
        17 => event(format!(
            r#"{{"type":"{}","call_id":{},"aggregated_output":{},"stdout":"o","stderr":"","exit_code":{}}}"#,
            pick(rng, &["exec_command_end", "patch_apply_end"]),
            call(rng),
            t(rng),
            rng.usize(..2)
        )),
        18 => event(format!(
            r#"{{"type":"mcp_tool_call_end","call_id":{},"invocation":{{"tool":"t"}},"result":{{"Ok":{{"content":[{{"type":"text","text":{}}}]}}}}}}"#,
            call(rng),
            t(rng)
        )),
        19 => event(format!(
            r#"{{"type":"view_image_tool_call","call_id":{},"path":"/p.png"}}"#,
            call(rng)
        )),
        20..=21 => event(format!(
            r#"{{"type":"{}"}}"#,
            pick(rng, &["task_started", "turn_started", "task_complete"])
        )),
        22 => event(format!(
            r#"{{"type":"thread_rolled_back","num_turns":{}}}"#,
            rng.usize(..3)
        )),
        23 => event(format!(
            r#"{{"type":"{}","reason":"interrupted","thread_name":{},"goal":{{"objective":{}}},"message":{}}}"#,
            pick(
                rng,
                &[
                    "turn_aborted",
                    "thread_name_updated",
                    "thread_goal_updated",
                    "error",
                    "token_count"
                ]
            ),
            t(rng),
            t(rng),
            t(rng)
        )),
        24..=26 => event(format!(
            r#"{{"type":"item_completed","item":{{"type":"{}","content":{},"summary_text":[{}],"raw_content":[{}],"text":{}}}}}"#,
            pick(
                rng,
                &[
                    "UserMessage",
                    "AgentMessage",
                    "Reasoning",
                    "Plan",
                    "HookPrompt",
                    "CommandExecution"
                ]
            ),
            parts(rng, "text"),
            t(rng),
            t(rng),
            t(rng)
        )),
        27 => format!(
            r#"{{"timestamp":"2026-01-01T00:00:00Z","type":"{}","payload":{{"message":{},"replacement_history":[{{"content":[{{"type":"input_text","text":"Another language model started to solve this problem"}}]}}],"content":{},"state":{{"a":{}}}}}}}"#,
            pick(
                rng,
                &[
                    "compacted",
                    "inter_agent_communication",
                    "world_state",
                    "turn_context",
                    "session_meta"
                ]
            ),
            t(rng),
            t(rng),
            t(rng)
        ),
        28 => item(format!(
            r#"{{"type":"agent_message","content":{}}}"#,
            parts(rng, "text")
        )),
        29 => "not json".into(),
        30 => String::new(),
        31 => item(format!(
            r#"{{"type":"message","content":{},"role":"{}"}}"#,
            parts(rng, "input_text"),
            pick(rng, &["user", "assistant", "developer"])
        )),
        32 => event(format!(
            r#"{{"message":{},"type":"agent_message"}}"#,
            t(rng)
        )),
        // Tags given twice: the last one counts.
        _ => {
            let text = t(rng);
            match rng.usize(..4) {
                0 => item(format!(
                    r#"{{"type":"message","role":"user","content":[{{"type":"input_text","text":{text}}}],"type":"reasoning"}}"#
                )),
                1 => item(format!(
                    r#"{{"type":"function_call","content":[{{"type":"output_text","text":{text}}}],"role":"assistant","type":"message"}}"#
                )),
                2 => item(format!(
                    r#"{{"type":"message","role":"developer","content":[{{"type":"input_text","text":{text}}}],"role":"user"}}"#
                )),
                _ => format!(
                    r#"{{"type":"turn_context","payload":{{"type":"agent_message","message":{text}}},"type":"event_msg"}}"#
                ),
            }
        }
    }
}

/// One random line of an early file (G1/G2): bare items.
fn bare_line(rng: &mut Rng) -> String {
    let t = |rng: &mut Rng| quoted(pick(rng, TEXTS));
    match rng.usize(..8) {
        0..=2 => format!(
            r#"{{"type":"message","role":"{}","content":[{{"type":"input_text","text":{}}},{{"type":"input_text","text":{}}}]}}"#,
            pick(rng, &["user", "assistant", "system"]),
            t(rng),
            t(rng)
        ),
        3 => format!(
            r#"{{"type":"reasoning","summary":[{{"type":"summary_text","text":{}}}],"encrypted_content":"x"}}"#,
            t(rng)
        ),
        4 => format!(
            r#"{{"type":"local_shell_call","call_id":"c{}","action":{{"command":["ls"]}}}}"#,
            rng.usize(..3)
        ),
        5 => format!(
            r#"{{"type":"function_call_output","call_id":"c{}","output":{}}}"#,
            rng.usize(..3),
            t(rng)
        ),
        6 => r#"{"record_type":"state"}"#.into(),
        _ => format!(r#"{{"type":"message","role":"user","content":{}}}"#, t(rng)),
    }
}

#[test]
fn random_sessions_decode_alike() {
    let dir = common::temp_dir("matching-random");
    let codex = codex();
    let mut rng = Rng::with_seed(0x5eed_1234_abcd_0001);
    let mut rolled_back = 0;
    for round in 0..300 {
        let bare = round % 5 == 4;
        let mut lines = vec![if bare {
            r#"{"id":"4f1c3a7e-2b8d-4c55-9e61-0a1b2c3d4e99","timestamp":"2025-05-20T10:00:00Z","instructions":"be good"}"#.to_string()
        } else {
            r#"{"timestamp":"2026-01-01T00:00:00Z","type":"session_meta","payload":{"id":"019c0000-0000-7000-8000-000000000001","base_instructions":{"text":"be good"}}}"#.to_string()
        }];
        for n in 0..rng.usize(..70) + 5 {
            lines.push(if bare {
                bare_line(&mut rng)
            } else {
                envelope_line(&mut rng, n)
            });
        }
        let path = dir.join(if bare {
            "rollout-2025-05-20T10-00-00-4f1c3a7e-2b8d-4c55-9e61-0a1b2c3d4e99.jsonl"
        } else {
            "rollout-2026-01-01T00-00-00-019c0000-0000-7000-8000-000000000001.jsonl"
        });
        std::fs::write(&path, lines.join("\n")).unwrap();
        let full = try_decode(&codex, &path);
        if full.1.as_ref().is_ok_and(|d| d.branch.is_some()) {
            rolled_back += 1;
        }
        check_matching(
            &codex,
            &path,
            &full,
            &|_| true,
            &format!("round {round}, all"),
        );
        check_matching(
            &codex,
            &path,
            &full,
            &|_| false,
            &format!("round {round}, none"),
        );
        for seed in 0..12 {
            let test = |line: &[u8]| hash(seed, line) % 3 == 1;
            check_matching(
                &codex,
                &path,
                &full,
                &test,
                &format!("round {round}, seed {seed}"),
            );
        }
        for word in [
            "alpha", "beta", "gamma", "cwd", "request", "output", "c1", "00:0",
        ] {
            let test = |line: &[u8]| contains(line, word.as_bytes());
            check_matching(
                &codex,
                &path,
                &full,
                &test,
                &format!("round {round}, {word}"),
            );
        }
    }
    assert!(rolled_back > 20, "{rolled_back} sessions with a rollback");
    std::fs::remove_dir_all(&dir).unwrap();
}
