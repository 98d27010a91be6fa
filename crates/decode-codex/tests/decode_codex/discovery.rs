//! Where sessions are found: the dated tree, the flat layout, compressed twins, reverts,
//! symbolic links and missing roots.

use std::fs;
use std::path::{Path, PathBuf};

use crate::common;
use decode_codex::Codex;
use history_core::Transcript;

const THREAD: &str = "019c8a4c-ed82-79a1-aa28-7738fc5ab61a";

fn ids(codex: &Codex) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = codex
        .discover()
        .into_iter()
        .map(|f| {
            let name = f.path.file_name().unwrap().to_string_lossy().into_owned();
            (f.key.to_string(), name)
        })
        .collect();
    out.sort();
    out
}

#[test]
fn the_fixture_root_holds_one_session_per_thread() {
    let found = ids(&common::codex());
    let keys: Vec<&str> = found.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(
        keys,
        [
            "codex:019c8a4c-ed82-79a1-aa28-7738fc5ab61a",
            "codex:019c8bfe-ec25-79e0-97d7-bda6a9c575ff",
            "codex:019c9a00-1111-7000-8000-000000000001",
            "codex:019c9b00-2222-7000-8000-000000000002",
            "codex:019c9c00-3333-7000-8000-000000000003",
            "codex:019c9d00-4444-7000-8000-000000000004",
            "codex:019c9e00-5555-7000-8000-000000000005",
            "codex:019ef000-0000-7000-8000-000000000011",
            "codex:019ef000-0000-7000-8000-000000000012",
            "codex:019ef000-0000-7000-8000-000000000013",
            "codex:019ef000-0000-7000-8000-000000000014",
            "codex:019ef000-0000-7000-8000-000000000015",
            "codex:019ef000-0000-7000-8000-000000000016",
            "codex:019ef000-0000-7000-8000-000000000017",
            "codex:019ef000-0000-7000-8000-000000000018",
            "codex:019ef000-0000-7000-8000-000000000019",
            "codex:019ef000-0000-7000-8000-00000000001a",
            "codex:019f2a10-0000-7000-8000-00000000000a",
            "codex:019f2a10-0000-7000-8000-00000000000b",
            "codex:019f2a10-0000-7000-8000-00000000000d",
            "codex:019f2a10-0000-7000-8000-00000000000f",
            "codex:019f2a10-0000-7000-8000-000000000010",
            "codex:4f1c3a7e-2b8d-4c55-9e61-0a1b2c3d4e01",
            "codex:5973b6c0-94b8-487b-a530-2aeb6098ae0e",
        ]
    );
    let name_of = |key: &str| &found.iter().find(|(k, _)| k.ends_with(key)).unwrap().1;
    assert!(
        name_of(THREAD).ends_with(".jsonl"),
        "the plain file beats its .zst twin"
    );
    assert!(
        name_of("00000000000b").contains("_019f2a10-0000-7000-8000-00000000000c"),
        "a reverted thread is its newest rollout"
    );
    let flat = common::codex()
        .discover()
        .into_iter()
        .find(|f| f.key.id.starts_with("4f1c3a7e"))
        .unwrap();
    assert_eq!(
        flat.path.parent().unwrap(),
        common::root(),
        "the flat layout"
    );
    assert!(flat.size > 0 && flat.modified > 0);
}

fn copy(from: &Path, to: &Path) {
    fs::create_dir_all(to.parent().unwrap()).unwrap();
    fs::copy(from, to).unwrap();
}

#[test]
fn a_compressed_file_alone_is_found_and_symlinked_directories_are_not_followed() {
    let root = common::temp_dir("discovery");
    let zst = common::fixture(&format!("{THREAD}.jsonl.zst"));
    copy(
        &zst,
        &root.join("2026/02/23").join(zst.file_name().unwrap()),
    );
    let elsewhere = common::temp_dir("discovery-elsewhere");
    let sample = common::rule("subagent");
    copy(
        &sample,
        &elsewhere.join("03").join(sample.file_name().unwrap()),
    );
    std::os::unix::fs::symlink(elsewhere.join("03"), root.join("2026/02/24")).unwrap();
    std::os::unix::fs::symlink(&elsewhere, root.join("2027")).unwrap();

    let found = ids(&Codex::new(&root));
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].0, format!("codex:{THREAD}"));
    assert!(found[0].1.ends_with(".jsonl.zst"));
    fs::remove_dir_all(&root).unwrap();
    fs::remove_dir_all(&elsewhere).unwrap();
}

#[test]
fn a_file_named_without_an_id_is_known_by_its_header() {
    let root = common::temp_dir("no-id-in-name");
    copy(
        &common::rule("g1-flat"),
        &root.join("rollout-2025-05-20.jsonl"),
    );
    let found = ids(&Codex::new(&root));
    assert_eq!(found[0].0, "codex:4f1c3a7e-2b8d-4c55-9e61-0a1b2c3d4e01");
    fs::remove_dir_all(&root).unwrap();
}

#[test]
fn a_missing_root_is_empty() {
    let codex = Codex::new("/nonexistent/codex/sessions");
    assert!(codex.discover().is_empty());
    assert_eq!(codex.root(), Path::new("/nonexistent/codex/sessions"));
}

#[test]
fn the_default_root_prefers_the_override_then_codex_home_then_home() {
    let env = |vars: &'static [(&'static str, &'static str)]| {
        move |name: &str| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| std::ffi::OsString::from(v))
        }
    };
    let all = &[
        ("NOTESOUP_HISTORY_CODEX_ROOT", "/o/sessions"),
        ("CODEX_HOME", "/c"),
        ("HOME", "/h"),
    ];
    assert_eq!(
        decode_codex::HARNESS.root(None, &env(all)),
        Some(PathBuf::from("/o/sessions"))
    );
    assert_eq!(
        decode_codex::HARNESS.root(None, &env(&[("CODEX_HOME", "/c"), ("HOME", "/h")])),
        Some(PathBuf::from("/c/sessions"))
    );
    assert_eq!(
        decode_codex::HARNESS.root(None, &env(&[("CODEX_HOME", ""), ("HOME", "/h")])),
        Some(PathBuf::from("/h/.codex/sessions"))
    );
    assert_eq!(decode_codex::HARNESS.root(None, &env(&[])), None);
}
