//! The cache keeps itself tidy and safe: entries of vanished transcripts go, the total size is
//! capped, and nothing is read or written through a symbolic link or in another user's directory.

use std::fs;
use std::os::unix::fs::{symlink, MetadataExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use history_cache::{fingerprints, Cache, Key, Swept, SWEEP_READS};
use tempfile::TempDir;

const DECODER: &str = "test-decoder-1";

/// A temporary directory with transcripts in `sessions/` and the cache in `cache/`.
struct World {
    tmp: TempDir,
}

impl World {
    fn new() -> World {
        let tmp = tempfile::tempdir().unwrap();
        fs::create_dir(tmp.path().join("sessions")).unwrap();
        World { tmp }
    }

    fn cache_dir(&self) -> PathBuf {
        self.tmp.path().join("cache")
    }

    fn cache(&self) -> Cache {
        Cache::new(self.cache_dir(), DECODER)
    }

    /// Writes transcript `name` and stores an entry for it; its key.
    fn session(&self, cache: &Cache, name: &str) -> Key {
        let path = self.tmp.path().join("sessions").join(name);
        fs::write(&path, format!("{{\"id\":\"{name}\"}}\n")).unwrap();
        let path = fs::canonicalize(path).unwrap();
        let key = Key::new(&path, "pi", name);
        let before = fingerprints(std::slice::from_ref(&path)).unwrap();
        assert!(cache.put(&key, &before, &format!("the value of {name}")));
        key
    }

    fn hit(&self, cache: &Cache, key: &Key) -> Option<String> {
        cache.get(key, std::slice::from_ref(&key.root_path))
    }

    fn entries(&self) -> usize {
        fs::read_dir(self.cache_dir()).map_or(0, |d| d.count())
    }
}

/// The uid this process creates files as.
fn my_uid(dir: &Path) -> u32 {
    fs::metadata(dir).unwrap().uid()
}

fn set_modified(path: &Path, ago: Duration) {
    let file = fs::File::options().write(true).open(path).unwrap();
    file.set_modified(SystemTime::now() - ago).unwrap();
}

#[test]
fn entries_of_vanished_transcripts_are_swept() {
    let world = World::new();
    let cache = world.cache();
    let keys: Vec<Key> = ["a", "b", "c"]
        .iter()
        .map(|n| world.session(&cache, n))
        .collect();
    fs::remove_file(&keys[0].root_path).unwrap();
    assert_eq!(
        world.cache().sweep(),
        Swept {
            gone: 1,
            ..Swept::default()
        }
    );
    assert!(!cache.entry_path(&keys[0]).exists());
    assert_eq!(
        world.hit(&cache, &keys[1]).as_deref(),
        Some("the value of b")
    );
    assert_eq!(
        world.hit(&cache, &keys[2]).as_deref(),
        Some("the value of c")
    );
}

#[test]
fn the_first_put_of_a_run_sweeps() {
    let world = World::new();
    let first = world.session(&world.cache(), "old");
    fs::remove_file(&first.root_path).unwrap();
    // Another run: its first put tidies what the last one left.
    let run = world.cache();
    let kept = world.session(&run, "new");
    assert!(!run.entry_path(&first).exists());
    assert!(run.entry_path(&kept).exists());
    assert_eq!(world.entries(), 1);
}

#[test]
fn a_sweep_reads_a_bounded_number_of_entries() {
    let world = World::new();
    let cache = world.cache();
    let extra = 44;
    for i in 0..SWEEP_READS + extra {
        let key = world.session(&cache, &format!("s{i}"));
        fs::remove_file(&key.root_path).unwrap();
    }
    assert_eq!(world.cache().sweep().gone, SWEEP_READS, "one run's work");
    assert_eq!(world.entries(), extra);
    assert_eq!(world.cache().sweep().gone, extra, "the next run's");
    assert_eq!(world.entries(), 0);
}

#[test]
fn the_oldest_entries_go_past_the_size_cap() {
    let world = World::new();
    let cache = world.cache();
    let keys: Vec<Key> = (0..4)
        .map(|i| world.session(&cache, &format!("s{i}")))
        .collect();
    for (i, key) in keys.iter().enumerate() {
        // s0 is the oldest, s3 the newest.
        set_modified(
            &cache.entry_path(key),
            Duration::from_secs(100 * (4 - i as u64)),
        );
    }
    let size = fs::metadata(cache.entry_path(&keys[0])).unwrap().len();
    let capped = world.cache().with_max_bytes(size * 5 / 2);
    assert_eq!(
        capped.sweep(),
        Swept {
            over_cap: 2,
            ..Swept::default()
        }
    );
    let left: Vec<bool> = keys.iter().map(|k| cache.entry_path(k).exists()).collect();
    assert_eq!(left, [false, false, true, true]);
    assert_eq!(capped.sweep(), Swept::default(), "under the cap now");
}

#[test]
fn only_stale_temporary_files_are_swept() {
    let world = World::new();
    let cache = world.cache();
    world.session(&cache, "s");
    let (old, fresh) = (
        world.cache_dir().join(".tmp-1-2-3"),
        world.cache_dir().join(".tmp-4-5-6"),
    );
    fs::write(&old, b"{").unwrap();
    fs::write(&fresh, b"{").unwrap();
    set_modified(&old, Duration::from_secs(2 * 3600));
    assert_eq!(
        cache.sweep(),
        Swept {
            stale: 1,
            ..Swept::default()
        }
    );
    assert!(!old.exists());
    assert!(fresh.exists(), "a writer may still rename it");
}

#[test]
fn an_entry_that_is_a_link_is_neither_read_nor_written_through() {
    let world = World::new();
    let cache = world.cache();
    let key = world.session(&cache, "s");
    let entry = cache.entry_path(&key);
    let elsewhere = world.tmp.path().join("elsewhere.json");
    fs::rename(&entry, &elsewhere).unwrap();
    symlink(&elsewhere, &entry).unwrap();
    assert_eq!(
        world.hit(&cache, &key),
        None,
        "a valid entry, but behind a link"
    );

    let before = fingerprints(std::slice::from_ref(&key.root_path)).unwrap();
    let victim = fs::read(&elsewhere).unwrap();
    assert!(cache.put(&key, &before, &"rewritten".to_string()));
    assert_eq!(fs::read(&elsewhere).unwrap(), victim, "the link's target");
    assert!(fs::symlink_metadata(&entry).unwrap().is_file());
    assert_eq!(world.hit(&cache, &key).as_deref(), Some("rewritten"));
}

#[test]
fn a_cache_directory_that_is_the_users_own_link_is_followed() {
    let world = World::new();
    let real = world.tmp.path().join("real-cache");
    fs::create_dir(&real).unwrap();
    symlink(&real, world.cache_dir()).unwrap();
    let cache = world.cache();
    let key = world.session(&cache, "s");
    assert_eq!(world.hit(&cache, &key).as_deref(), Some("the value of s"));
    assert_eq!(fs::read_dir(&real).unwrap().count(), 1);
}

/// Gives `path` (not following a link) to another user; `false` when this process may not.
fn give_away(path: &Path) -> bool {
    std::os::unix::fs::lchown(path, Some(4242), Some(4242)).is_ok()
}

#[test]
fn a_cache_directory_link_of_another_user_is_not_used() {
    let world = World::new();
    let real = world.tmp.path().join("real-cache");
    fs::create_dir(&real).unwrap();
    symlink(&real, world.cache_dir()).unwrap();
    if my_uid(&real) == 4242 || !give_away(&world.cache_dir()) {
        eprintln!("skipped: only a privileged process can give a link away");
        return;
    }
    let cache = world.cache();
    let path = world.tmp.path().join("sessions").join("s");
    fs::write(&path, "{}\n").unwrap();
    let key = Key::new(&path, "pi", "s");
    let before = fingerprints(std::slice::from_ref(&path)).unwrap();
    assert!(!cache.put(&key, &before, &"value".to_string()));
    assert_eq!(fs::read_dir(&real).unwrap().count(), 0, "nothing written");

    // Nor is an entry read through it, even a valid one put there directly.
    let direct = Cache::new(&real, DECODER);
    assert!(direct.put(&key, &before, &"planted".to_string()));
    assert_eq!(world.hit(&cache, &key), None);
    assert_eq!(cache.sweep(), Swept::default());
}

#[test]
fn a_cache_directory_of_another_user_is_not_used() {
    let world = World::new();
    let cache = world.cache();
    let key = world.session(&cache, "s");
    if my_uid(&world.cache_dir()) == 4242 || !give_away(&world.cache_dir()) {
        eprintln!("skipped: only a privileged process can give a directory away");
        return;
    }
    assert_eq!(
        world.hit(&cache, &key),
        None,
        "entries planted by another user"
    );
    let before = fingerprints(std::slice::from_ref(&key.root_path)).unwrap();
    assert!(!cache.put(&key, &before, &"value".to_string()));
}
