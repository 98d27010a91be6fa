//! Rules of the decoder seen through the `Transcript` trait.

use std::io::Read;
use std::path::PathBuf;

use decode_copilot::{default_root, Copilot};
use history_core::{Event, Transcript};

fn home() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/copilot/home")
}

fn events(id: &str) -> Vec<Event> {
    let copilot = Copilot::new(home());
    let file = copilot
        .discover()
        .into_iter()
        .find(|f| f.key.id == id)
        .unwrap_or_else(|| panic!("no session {id}"));
    let mut events = Vec::new();
    copilot
        .decode(&file, &mut |e| events.push(e), None)
        .unwrap();
    events
}

#[test]
fn the_root_is_copilot_home_else_dot_copilot() {
    let env = |pairs: &'static [(&'static str, &'static str)]| {
        move |k: &str| {
            pairs
                .iter()
                .find(|(key, _)| *key == k)
                .map(|(_, v)| std::ffi::OsString::from(v))
        }
    };
    assert_eq!(
        default_root(env(&[("HOME", "/h"), ("COPILOT_HOME", "/c")])),
        Some(PathBuf::from("/c"))
    );
    assert_eq!(
        default_root(env(&[("HOME", "/h"), ("COPILOT_HOME", "")])),
        Some(PathBuf::from("/h/.copilot"))
    );
    assert_eq!(default_root(env(&[])), None);
}

#[test]
fn a_legacy_file_is_read_as_one_line_per_timeline_item() {
    let copilot = Copilot::new(home());
    let path = home().join("history-session-state/session_legacy-timeline.json");
    let mut stream = String::new();
    copilot
        .open_raw(&path)
        .unwrap()
        .read_to_string(&mut stream)
        .unwrap();
    let lines: Vec<&str> = stream.lines().collect();
    assert_eq!(lines.len(), 8, "the session, then seven items");
    assert!(lines[0].starts_with(r#"{"legacySession":{"sessionId":"legacy-timeline""#));
    assert!(lines[2].contains("rename the crate to driftwood"));
    let events = events("legacy-timeline");
    let user = events
        .iter()
        .find(|e| e.role == history_core::Role::User)
        .unwrap();
    assert_eq!(
        (user.seq, user.text.as_str()),
        (3, "rename the crate to driftwood")
    );
    let line = copilot.read_at(&path, 0, lines[0].len()).unwrap().unwrap();
    assert_eq!(
        line,
        lines[0].as_bytes(),
        "a line is read back from the stream"
    );
}

#[test]
fn resume_is_copilot_resume_with_the_id() {
    let copilot = Copilot::new(home());
    let file = copilot
        .discover()
        .into_iter()
        .find(|f| f.key.id == "basic-turn")
        .unwrap();
    let resume = copilot.resume(&file).unwrap();
    assert_eq!(resume.argv, ["copilot", "--resume", "basic-turn"]);
    assert_eq!(resume.cwd, None);
}
