//! One test per rule of the overview cache.

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use history_cache::{fingerprints, Cache, Key, MAX_ENTRY_BYTES};
use serde::{Deserialize, Serialize};
use tempfile::TempDir;

const DECODER: &str = "test-decoder-1";

/// A stand-in for the overview's representative.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Value {
    text: String,
    notices: Vec<String>,
}

fn value() -> Value {
    Value {
        text: "hello".into(),
        notices: vec!["1 damaged line skipped".into()],
    }
}

/// A temporary world: a sessions directory with a root transcript and two ancestors, and a
/// cache directory that does not exist yet.
struct World {
    tmp: TempDir,
    root: PathBuf,
    parent: PathBuf,
    grandparent: PathBuf,
}

impl World {
    fn new() -> World {
        let tmp = tempfile::tempdir().unwrap();
        let sessions = tmp.path().join("sessions");
        fs::create_dir(&sessions).unwrap();
        let write = |name: &str| {
            let path = sessions.join(name);
            fs::write(&path, format!("{{\"id\":\"{name}\"}}\n")).unwrap();
            fs::canonicalize(path).unwrap()
        };
        World {
            root: write("root.jsonl"),
            parent: write("parent.jsonl"),
            grandparent: write("grandparent.jsonl"),
            tmp,
        }
    }

    fn cache_dir(&self) -> PathBuf {
        self.tmp
            .path()
            .join("cache")
            .join("notesoup")
            .join("history")
    }

    fn cache(&self) -> Cache {
        Cache::new(self.cache_dir(), DECODER)
    }

    fn key(&self) -> Key {
        Key::new(&self.root, "codex", "019a-root")
    }

    fn lineage(&self) -> Vec<PathBuf> {
        vec![
            self.root.clone(),
            self.parent.clone(),
            self.grandparent.clone(),
        ]
    }

    /// Puts `value()` for the root and its lineage, asserting that it was stored.
    fn put(&self, cache: &Cache) {
        let before = fingerprints(&self.lineage()).unwrap();
        assert!(cache.put(&self.key(), &before, &value()));
    }

    fn get(&self, cache: &Cache, witnesses: &[PathBuf]) -> Option<Value> {
        cache.get(&self.key(), witnesses)
    }
}

fn append(path: &Path, line: &str) {
    let mut file = OpenOptions::new().append(true).open(path).unwrap();
    file.write_all(line.as_bytes()).unwrap();
}

/// Rewrites the JSON entry at `path` with `edit`.
fn edit_entry(path: &Path, edit: impl FnOnce(&mut serde_json::Value)) {
    let mut entry: serde_json::Value = serde_json::from_slice(&fs::read(path).unwrap()).unwrap();
    edit(&mut entry);
    fs::write(path, serde_json::to_vec(&entry).unwrap()).unwrap();
}

/// Whether this process ignores file permissions (root, or CAP_DAC_OVERRIDE).
fn permissions_are_bypassed(dir: &Path) -> bool {
    let probe = dir.join(".probe");
    let bypassed = fs::write(&probe, b"").is_ok();
    let _ = fs::remove_file(probe);
    bypassed
}

#[test]
fn a_put_then_a_get_hits() {
    let world = World::new();
    let cache = world.cache();
    assert_eq!(world.get(&cache, &world.lineage()), None);
    world.put(&cache);
    assert_eq!(world.get(&cache, &world.lineage()), Some(value()));
}

#[test]
fn a_fresh_cache_object_reads_what_another_wrote() {
    let world = World::new();
    world.put(&world.cache());
    assert_eq!(world.get(&world.cache(), &world.lineage()), Some(value()));
}

#[test]
fn appending_to_the_transcript_is_a_miss() {
    let world = World::new();
    let cache = world.cache();
    world.put(&cache);
    append(&world.root, "{\"id\":\"more\"}\n");
    assert_eq!(world.get(&cache, &world.lineage()), None);
}

#[test]
fn appending_to_an_ancestor_is_a_miss() {
    let world = World::new();
    let cache = world.cache();
    world.put(&cache);
    append(&world.grandparent, "{\"id\":\"more\"}\n");
    assert_eq!(world.get(&cache, &world.lineage()), None);
}

#[test]
fn replacing_the_transcript_with_same_size_is_a_miss() {
    let world = World::new();
    let cache = world.cache();
    world.put(&cache);
    let content = fs::read(&world.root).unwrap();
    let replacement = world.root.with_extension("new");
    fs::write(&replacement, &content).unwrap();
    fs::rename(&replacement, &world.root).unwrap();
    assert_eq!(world.get(&cache, &world.lineage()), None);
}

#[test]
fn a_decode_that_raced_an_append_is_not_stored() {
    let world = World::new();
    let cache = world.cache();
    let before = fingerprints(&world.lineage()).unwrap();
    append(&world.root, "{\"id\":\"written while decoding\"}\n");
    assert!(!cache.put(&world.key(), &before, &value()));
    assert!(!cache.entry_path(&world.key()).exists());
    assert_eq!(world.get(&cache, &world.lineage()), None);
}

#[test]
fn a_decode_that_raced_a_deletion_is_not_stored() {
    let world = World::new();
    let cache = world.cache();
    let before = fingerprints(&world.lineage()).unwrap();
    fs::remove_file(&world.parent).unwrap();
    assert!(!cache.put(&world.key(), &before, &value()));
    assert!(!cache.entry_path(&world.key()).exists());
}

#[test]
fn an_extra_ancestor_is_a_miss() {
    let world = World::new();
    let cache = world.cache();
    let before = fingerprints(&world.lineage()[..2]).unwrap();
    assert!(cache.put(&world.key(), &before, &value()));
    assert_eq!(world.get(&cache, &world.lineage()[..2]), Some(value()));
    assert_eq!(world.get(&cache, &world.lineage()), None);
}

#[test]
fn a_missing_ancestor_is_a_miss() {
    let world = World::new();
    let cache = world.cache();
    world.put(&cache);
    assert_eq!(world.get(&cache, &world.lineage()[..2]), None);
    assert_eq!(world.get(&cache, &world.lineage()[..1]), None);
    assert_eq!(world.get(&cache, &[]), None);
}

#[test]
fn reordered_witnesses_are_a_miss() {
    let world = World::new();
    let cache = world.cache();
    world.put(&cache);
    let mut reordered = world.lineage();
    reordered.swap(1, 2);
    assert_eq!(world.get(&cache, &reordered), None);
}

#[test]
fn a_witness_that_cannot_be_stated_is_a_miss() {
    let world = World::new();
    let cache = world.cache();
    world.put(&cache);
    fs::remove_file(&world.grandparent).unwrap();
    assert_eq!(world.get(&cache, &world.lineage()), None);
}

#[test]
fn a_corrupt_entry_is_a_miss_and_a_put_repairs_it() {
    let world = World::new();
    let cache = world.cache();
    world.put(&cache);
    let entry = cache.entry_path(&world.key());
    let bytes = fs::read(&entry).unwrap();
    fs::write(&entry, &bytes[..bytes.len() / 2]).unwrap();
    assert_eq!(world.get(&cache, &world.lineage()), None);
    world.put(&cache);
    assert_eq!(world.get(&cache, &world.lineage()), Some(value()));
}

#[test]
fn an_entry_of_another_shape_is_a_miss() {
    let world = World::new();
    let cache = world.cache();
    world.put(&cache);
    let entry = cache.entry_path(&world.key());
    edit_entry(&entry, |e| e["value"] = serde_json::json!({"text": 42}));
    assert_eq!(world.get(&cache, &world.lineage()), None);
}

#[test]
fn a_foreign_entry_format_is_a_miss() {
    let world = World::new();
    let cache = world.cache();
    world.put(&cache);
    let entry = cache.entry_path(&world.key());
    edit_entry(&entry, |e| e["format"] = "notesoup-history-cache/2".into());
    assert_eq!(world.get(&cache, &world.lineage()), None);
}

#[test]
fn another_decoder_version_is_a_miss_and_is_overwritten() {
    let world = World::new();
    let old = Cache::new(world.cache_dir(), "test-decoder-0");
    world.put(&old);
    let cache = world.cache();
    assert_eq!(world.get(&cache, &world.lineage()), None);
    world.put(&cache);
    assert_eq!(world.get(&cache, &world.lineage()), Some(value()));
    assert_eq!(world.get(&old, &world.lineage()), None);
}

#[test]
fn an_entry_over_the_cap_is_a_miss() {
    let world = World::new();
    let cache = world.cache();
    world.put(&cache);
    // Still valid JSON (trailing whitespace), so only the size cap can refuse it.
    let entry = cache.entry_path(&world.key());
    let padding = " ".repeat(MAX_ENTRY_BYTES as usize);
    append(&entry, &padding);
    assert!(fs::metadata(&entry).unwrap().len() > MAX_ENTRY_BYTES);
    assert_eq!(world.get(&cache, &world.lineage()), None);
}

#[test]
fn junk_over_the_cap_at_the_entry_path_is_a_miss() {
    let world = World::new();
    let cache = world.cache();
    let entry = cache.entry_path(&world.key());
    fs::create_dir_all(entry.parent().unwrap()).unwrap();
    fs::write(&entry, vec![b'x'; MAX_ENTRY_BYTES as usize + 1]).unwrap();
    assert_eq!(world.get(&cache, &world.lineage()), None);
}

#[test]
fn a_value_over_the_cap_is_not_written() {
    let world = World::new();
    let cache = world.cache();
    let big = Value {
        text: "x".repeat(MAX_ENTRY_BYTES as usize),
        notices: vec![],
    };
    let before = fingerprints(&world.lineage()).unwrap();
    assert!(!cache.put(&world.key(), &before, &big));
    assert!(!cache.entry_path(&world.key()).exists());
    assert_eq!(world.get(&cache, &world.lineage()), None);
}

#[test]
fn a_directory_at_the_entry_path_is_a_miss_and_put_fails_quietly() {
    let world = World::new();
    let cache = world.cache();
    fs::create_dir_all(cache.entry_path(&world.key())).unwrap();
    assert_eq!(world.get(&cache, &world.lineage()), None);
    let before = fingerprints(&world.lineage()).unwrap();
    assert!(!cache.put(&world.key(), &before, &value()));
}

#[test]
fn a_cache_dir_under_a_regular_file_cannot_be_written() {
    let world = World::new();
    let file = world.tmp.path().join("not-a-dir");
    fs::write(&file, b"").unwrap();
    let cache = Cache::new(file.join("notesoup").join("history"), DECODER);
    let before = fingerprints(&world.lineage()).unwrap();
    assert!(!cache.put(&world.key(), &before, &value()));
    assert_eq!(world.get(&cache, &world.lineage()), None);
}

#[test]
fn a_read_only_cache_dir_cannot_be_written() {
    let world = World::new();
    let dir = world.cache_dir();
    fs::create_dir_all(&dir).unwrap();
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o500)).unwrap();
    let cache = world.cache();
    let before = fingerprints(&world.lineage()).unwrap();
    let stored = cache.put(&world.key(), &before, &value());
    if !permissions_are_bypassed(&dir) {
        assert!(!stored);
        assert_eq!(world.get(&cache, &world.lineage()), None);
        assert_eq!(
            fs::read_dir(&dir).unwrap().count(),
            0,
            "no temporary file left"
        );
    }
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o700)).unwrap();
}

#[test]
fn the_directory_and_entries_are_private() {
    let world = World::new();
    let cache = world.cache();
    world.put(&cache);
    let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
    let dir = world.cache_dir();
    assert_eq!(mode(&dir), 0o700);
    assert_eq!(mode(dir.parent().unwrap()), 0o700, "created parents too");
    assert_eq!(mode(&cache.entry_path(&world.key())), 0o600);
    // Overwriting keeps it private, and leaves no temporary file behind.
    world.put(&cache);
    assert_eq!(mode(&cache.entry_path(&world.key())), 0o600);
    assert_eq!(fs::read_dir(&dir).unwrap().count(), 1);
}

#[test]
fn another_key_under_the_same_file_name_is_a_miss() {
    let world = World::new();
    let cache = world.cache();
    world.put(&cache);
    let other = Key::new(&world.root, "codex", "another-session");
    fs::rename(cache.entry_path(&world.key()), cache.entry_path(&other)).unwrap();
    assert_eq!(cache.get::<Value>(&other, &world.lineage()), None);
}

#[test]
fn keys_differ_by_each_field() {
    let world = World::new();
    let cache = world.cache();
    world.put(&cache);
    let others = [
        Key::new(&world.parent, "codex", "019a-root"),
        Key::new(&world.root, "pi", "019a-root"),
        Key::new(&world.root, "codex", "019a-other"),
    ];
    for other in others {
        assert_ne!(cache.entry_path(&other), cache.entry_path(&world.key()));
        assert_eq!(cache.get::<Value>(&other, &world.lineage()), None);
    }
}

#[test]
fn an_entry_without_witnesses_is_neither_written_nor_read() {
    let world = World::new();
    let cache = world.cache();
    assert!(!cache.put(&world.key(), &[], &value()));
    assert!(!cache.entry_path(&world.key()).exists());
    world.put(&cache);
    edit_entry(&cache.entry_path(&world.key()), |e| {
        e["witnesses"] = serde_json::json!([])
    });
    assert_eq!(world.get(&cache, &[]), None);
}

#[test]
fn a_path_that_is_not_utf8_is_not_cached() {
    use std::os::unix::ffi::OsStrExt;
    let world = World::new();
    let odd = world
        .tmp
        .path()
        .join(std::ffi::OsStr::from_bytes(b"odd-\xff.jsonl"));
    fs::write(&odd, b"{}\n").unwrap();
    let cache = world.cache();
    let before = fingerprints(std::slice::from_ref(&odd)).unwrap();
    assert!(!cache.put(&Key::new(&odd, "pi", "odd"), &before, &value()));
    assert_eq!(
        cache.get::<Value>(&Key::new(&odd, "pi", "odd"), &[odd]),
        None
    );
}
