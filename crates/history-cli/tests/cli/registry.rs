//! A harness is one descriptor in the registry: a fourth, test-only harness added to the list
//! alone gets its root flag, its root variable, its current-session variable, and is listed,
//! searched and read through the command's own code path.

use std::path::{Path, PathBuf};

use history_cli::{run, Output, HARNESSES};
use history_core::Harness;
use history_core::{
    DecodeError, Decoded, Event, Role, SessionFile, SessionKey, Timestamp, Transcript,
};
use history_core::{LineTest, LineTime, Lines};

/// Notes: `<root>/<id>.notes`, one event per line, `role<TAB>time<TAB>text`.
struct Notes {
    root: PathBuf,
}

const NOTES: Harness = Harness {
    name: "notes",
    root_flag: "notes-root",
    root_env: "NOTESOUP_HISTORY_NOTES_ROOT",
    root_about: "the notes directory",
    default_root_about: "~/.notes",
    default_root: |env| env("HOME").map(|h| Path::new(&h).join(".notes")),
    session_env: Some("NOTES_SESSION_ID"),
    open: |root| Box::new(Notes { root }),
};

fn fields(line: &[u8]) -> Option<(Role, Option<Timestamp>, &str)> {
    let line = std::str::from_utf8(line).ok()?;
    let mut parts = line.splitn(3, '\t');
    let role = Role::parse(parts.next()?)?;
    let time = Timestamp::parse_rfc3339(parts.next()?);
    Some((role, time, parts.next()?))
}

impl Transcript for Notes {
    fn harness(&self) -> &str {
        NOTES.name
    }

    fn discover(&self) -> Vec<SessionFile> {
        let Ok(entries) = std::fs::read_dir(&self.root) else {
            return Vec::new();
        };
        entries
            .flatten()
            .filter_map(|e| {
                let path = e.path();
                let id = path.file_stem()?.to_str()?.to_string();
                let meta = e.metadata().ok()?;
                Some(SessionFile {
                    key: SessionKey::new(NOTES.name, id),
                    modified: meta
                        .modified()
                        .ok()?
                        .duration_since(std::time::UNIX_EPOCH)
                        .ok()?
                        .as_nanos() as i64,
                    size: meta.len(),
                    fingerprint: None,
                    path,
                })
            })
            .collect()
    }

    fn decode(
        &self,
        file: &SessionFile,
        sink: &mut dyn FnMut(Event),
        lines: Option<LineTest<'_>>,
    ) -> Result<Decoded, DecodeError> {
        let mut reader = Lines::open(&file.path)?;
        while let Some(line) = reader.next_line()? {
            if lines.is_some_and(|wanted| !wanted(line.bytes)) {
                continue;
            }
            let Some((role, timestamp, text)) = fields(line.bytes) else {
                continue;
            };
            sink(Event {
                seq: line.seq,
                part: 0,
                role,
                kind: "message".into(),
                timestamp,
                text: text.into(),
                visible: matches!(role, Role::User | Role::Assistant),
                tool: None,
                on_active_branch: None,
            });
        }
        Ok(Decoded {
            lineage: vec![file.path.clone()],
            ..Decoded::default()
        })
    }

    fn line_time(&self, line: &[u8]) -> LineTime {
        fields(line).map_or(LineTime::Untimed, |(_, time, _)| LineTime::of(time))
    }
}

struct World {
    dir: tempfile::TempDir,
}

impl World {
    fn new() -> World {
        let dir = tempfile::tempdir().unwrap();
        let notes = dir.path().join("notes");
        std::fs::create_dir_all(&notes).unwrap();
        std::fs::write(
            notes.join("groceries.notes"),
            "user\t2026-05-01T10:00:00Z\tbuy oat milk\n\
             tool\t2026-05-01T10:00:01Z\tlookup: shop hours\n\
             assistant\t2026-05-01T10:00:02Z\tThe shop opens at 8; oat milk is in aisle 4.\n",
        )
        .unwrap();
        std::fs::write(
            notes.join("garden.notes"),
            "user\t2026-05-02T09:00:00Z\twhen to plant tomatoes?\n",
        )
        .unwrap();
        World { dir }
    }

    fn run(&self, args: &[&str], vars: &[(&str, &str)]) -> Output {
        let home = self.dir.path().join("home");
        let root = self.dir.path().join("notes");
        let env = |k: &str| match k {
            "HOME" => Some(home.clone().into_os_string()),
            "NOTESOUP_HISTORY_NOTES_ROOT" => Some(root.clone().into_os_string()),
            "NOTESOUP_HISTORY_INDEX" => Some("off".into()),
            _ => vars
                .iter()
                .find(|(name, _)| *name == k)
                .map(|(_, v)| v.into()),
        };
        let mut registry = HARNESSES.to_vec();
        registry.push(&NOTES);
        let mut argv = vec!["notesoup-history"];
        argv.extend_from_slice(args);
        run(&registry, argv, &env)
    }
}

#[test]
fn a_fourth_harness_is_listed_searched_and_read() {
    let w = World::new();
    let overview = w.run(&["list", "--json"], &[]);
    assert_eq!(overview.code, 0, "{overview:?}");
    let page: serde_json::Value = serde_json::from_str(&overview.stdout).unwrap();
    let sessions: Vec<&str> = page["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["session"].as_str().unwrap())
        .collect();
    assert_eq!(sessions, ["notes:groceries", "notes:garden"]);

    let search = w.run(
        &["list", "--session", "notes:*", "--query", "OAT MILK"],
        &[],
    );
    assert_eq!(search.code, 0, "{search:?}");
    assert_eq!(search.stdout.matches("session notes:groceries").count(), 2);
    assert!(!search.stdout.contains("garden"));

    let browse = w.run(&["list", "--session", "groc"], &[]);
    assert!(
        browse.stdout.contains("⋯ 1 folded (seq 2: tool)"),
        "{}",
        browse.stdout
    );

    let read = w.run(&["read", "--session", "notes:groceries", "--seq", "3"], &[]);
    assert_eq!(read.code, 0);
    assert!(read.stdout.contains("aisle 4"));
}

#[test]
fn its_flag_and_its_agent_s_variable_come_from_the_descriptor() {
    let w = World::new();
    let help = w.run(&["--help"], &[]);
    assert!(
        help.stdout.contains("--notes-root <DIR>"),
        "{}",
        help.stdout
    );
    assert!(help
        .stdout
        .contains("the notes directory (default: $NOTESOUP_HISTORY_NOTES_ROOT, ~/.notes)"));

    let elsewhere = w.dir.path().join("nowhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let flag = w.run(
        &[
            "list",
            "--notes-root",
            elsewhere.to_str().unwrap(),
            "--session",
            "notes:*",
        ],
        &[],
    );
    assert_eq!(flag.code, 1, "the flag beats the variable: {flag:?}");

    // The agent's variable makes its session the current one: headers leave the session out.
    let current = w.run(&["list"], &[("NOTES_SESSION_ID", "garden")]);
    assert!(current.stdout.starts_with("seq 1 | user"), "{current:?}");
    assert!(
        current.stderr.contains("(named by NOTES_SESSION_ID)"),
        "the notice names the descriptor's variable: {current:?}"
    );
    let qualified = w.run(&["read", "--seq", "1"], &[("NOTES_SESSION_ID", "garden")]);
    assert!(qualified.stdout.contains("when to plant tomatoes?"));
}
