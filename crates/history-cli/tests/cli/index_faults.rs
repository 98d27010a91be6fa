//! The search index when things go wrong around it: transcripts' access times stay as they
//! were whatever the index does; one update at a time, by a lock that names its holder; errors
//! that name their cause (another user's files, a full disk) and leave no oversized log; and
//! Ctrl-C, which keeps what an update stored and says how far it got.
//!
//! Linux only: access times, `flock`, mount namespaces and `/proc` as Linux has them.
#![cfg(target_os = "linux")]

use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::common::{Roots, Run};
use serde_json::Value;

pub(crate) const BIN: &str = env!("CARGO_BIN_EXE_notesoup-history");

/// The one fixture session no decoder can read: it is recorded as failed, which tests that
/// count sessions do without.
const UNDECODABLE: &str = "claude/-w-app/no-leaf.jsonl";

/// A Claude fixture session whose last line is `a1`.
const GROWN: &str = "claude/-w-other/4f2a0c1e-1111-4000-8000-000000000001.jsonl";

/// The environment [`Roots::cmd`] gives the binary, with the index on, for a process run
/// outside of `Roots` (to signal it, or in a mount namespace of its own).
pub(crate) fn command(roots: &Roots, program: &str) -> Command {
    let mut cmd = Command::new(program);
    cmd.env_clear()
        .env("HOME", roots.dir.path().join("home"))
        .env("XDG_CACHE_HOME", roots.cache_home())
        .env("PATH", std::env::var_os("PATH").unwrap_or_default());
    for (harness, root) in roots.roots() {
        cmd.env(harness.root_env, root);
    }
    cmd
}

/// Runs the binary with the index on, without reading a transcript around it (which
/// [`Roots::run_indexed`] does, to check that none changed).
fn run(roots: &Roots, args: &[&str]) -> Run {
    let out = command(roots, BIN).args(args).output().unwrap();
    Run {
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        code: out.status.code().unwrap_or(-1),
    }
}

/// Writes into `dir` (a Claude project directory) the sessions numbered `sessions`, each of
/// `lines` user messages of `chars` random letters, digits and blanks: text whose every few
/// characters are a token of their own, each on few lines (its list too sparse for bitmaps),
/// so that indexing it takes a while and a good deal of room.
fn plant(dir: &Path, sessions: std::ops::Range<usize>, lines: usize, chars: usize) {
    plant_with(dir, sessions, lines, chars, true);
}

/// [`plant`], with spaces between the characters when `spaced`, else none: one word a text,
/// of letters and digits only (a few bytes of word lists where spaced text has a term of
/// its own every few characters).
fn plant_with(
    dir: &Path,
    sessions: std::ops::Range<usize>,
    lines: usize,
    chars: usize,
    spaced: bool,
) {
    let mut rng = fastrand::Rng::with_seed(sessions.start as u64);
    fs::create_dir_all(dir).unwrap();
    for s in sessions {
        let id = format!("5e55a000-{s:04}-4000-8000-000000000000");
        let mut body = String::new();
        for l in 0..lines {
            let text: String = (0..chars)
                .map(|_| match rng.u8(..6) {
                    0 if spaced => ' ',
                    _ if spaced => rng.alphanumeric(),
                    _ => rng.alphanumeric().to_ascii_lowercase(),
                })
                .collect();
            let parent = (l > 0).then(|| format!("u{}", l - 1));
            let line = serde_json::json!({
                "parentUuid": parent, "isSidechain": false, "type": "user", "uuid": format!("u{l}"),
                "sessionId": id, "cwd": "/w/planted", "timestamp": "2026-03-02T10:00:00.000Z",
                "message": {"role": "user", "content": text},
            });
            body.push_str(&format!("{line}\n"));
        }
        fs::write(dir.join(format!("{id}.jsonl")), body).unwrap();
    }
}

/// A page without what legitimately differs between the index and a scan.
fn comparable(page: &str) -> Value {
    let mut v: Value = serde_json::from_str(page).unwrap_or_else(|e| panic!("{e}: {page}"));
    if let Some(o) = v.as_object_mut() {
        o.remove("coverage");
        o.remove("notice");
    }
    v
}

fn accessed(path: &Path) -> SystemTime {
    fs::metadata(path).unwrap().accessed().unwrap()
}

/// Sets a file's access time, and only that (its modification time stays).
fn set_accessed(path: &Path, when: SystemTime) {
    let file = fs::File::options().write(true).open(path).unwrap();
    file.set_times(fs::FileTimes::new().set_accessed(when))
        .unwrap();
}

/// Whether a plain read of a file whose access time is older than its modification time
/// updates it here (a `relatime` or `strictatime` mount does; `noatime` does not).
fn reads_update_access_times(dir: &Path) -> bool {
    let probe = dir.join("atime-probe");
    fs::write(&probe, b"probe").unwrap();
    set_accessed(&probe, UNIX_EPOCH + Duration::from_secs(1_000_000_000));
    let before = accessed(&probe);
    fs::read(&probe).unwrap();
    let updated = accessed(&probe) != before;
    fs::remove_file(&probe).unwrap();
    updated
}

#[test]
fn nothing_the_index_does_changes_a_transcripts_access_time() {
    let roots = Roots::new();
    if !reads_update_access_times(roots.dir.path()) {
        eprintln!("skipped: reads do not update access times on this filesystem (noatime)");
        return;
    }
    let files: Vec<PathBuf> = roots
        .files()
        .into_keys()
        .map(|rel| roots.dir.path().join(rel))
        .collect();
    for harness in ["claude", "codex", "pi"] {
        assert!(
            files.iter().any(|f| f.starts_with(roots.root(harness))),
            "no {harness} transcript"
        );
    }
    // 2001: older than every modification time, so that any plain read would update it.
    let old = UNIX_EPOCH + Duration::from_secs(978_307_200);
    files.iter().for_each(|f| set_accessed(f, old));
    let unchanged = |what: &str| {
        roots.wait_background();
        for f in &files {
            assert_eq!(
                accessed(f),
                old,
                "{what} read {} with a plain open",
                f.display()
            );
        }
    };
    let search = ["list", "--session", "*", "--query", "the", "--json"];
    for args in [
        &["index"][..],
        &["reindex"],
        &["doctor"],
        &search,
        &["list"],
    ] {
        let run = run(&roots, args);
        assert!(run.code < 2, "{args:?}: {run:?}");
        unchanged(&args.join(" "));
    }
    // An append: the search reads the new bytes, and the update it starts indexes them.
    let grown = roots.dir.path().join(GROWN);
    let line = serde_json::json!({
        "parentUuid": "a1", "isSidechain": false, "type": "user", "uuid": "u2",
        "sessionId": "4f2a0c1e-1111-4000-8000-000000000001", "cwd": "/w/app",
        "timestamp": "2026-03-01T09:31:00.000Z",
        "message": {"role": "user", "content": "the appended line"},
    });
    let mut file = fs::File::options().append(true).open(&grown).unwrap();
    std::io::Write::write_all(&mut file, format!("{line}\n").as_bytes()).unwrap();
    drop(file);
    set_accessed(&grown, old);
    let run = run(&roots, &search);
    assert!(run.code < 2, "{run:?}");
    unchanged("a search after an append");
    set_accessed(&grown, old);
    let run = self::run(&roots, &["index", "--background"]);
    assert_eq!(run.code, 0, "{run:?}");
    unchanged("index --background");
}

/// Holds the update lock as a running update would, its id written in it.
fn hold_lock(path: &Path, pid: &str) -> fs::File {
    let file = fs::File::options()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .open(path)
        .unwrap();
    rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockExclusive).unwrap();
    file.set_len(0).unwrap();
    std::os::unix::fs::FileExt::write_all_at(&file, pid.as_bytes(), 0).unwrap();
    file
}

#[test]
fn one_update_at_a_time_and_the_lock_names_its_holder() {
    let roots = Roots::new();
    let lock = roots.index_db().with_file_name("index.lock");
    // An update takes the lock, private, and writes its id into it.
    let child = command(&roots, BIN).arg("index").output().unwrap();
    assert!(child.status.success(), "{child:?}");
    assert_eq!(fs::metadata(&lock).unwrap().mode() & 0o777, 0o600);
    let mut index = command(&roots, BIN)
        .args(["index", "--json"])
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let pid = index.id();
    assert!(index.wait().unwrap().success());
    assert_eq!(fs::read_to_string(&lock).unwrap(), format!("{pid}\n"));
    // A lock file left readable by others is made private again.
    fs::set_permissions(&lock, fs::Permissions::from_mode(0o644)).unwrap();
    assert_eq!(run(&roots, &["index"]).code, 0);
    assert_eq!(fs::metadata(&lock).unwrap().mode() & 0o777, 0o600);

    let held = hold_lock(&lock, "4242\n");
    for args in [&["index"][..], &["reindex"]] {
        let run = run(&roots, args);
        assert_eq!(run.code, 2, "{args:?}: {run:?}");
        assert!(run.stdout.is_empty(), "{args:?}: {run:?}");
        assert_eq!(
            run.stderr, "error: another index is running (pid 4242) (index_busy)\n",
            "{args:?}"
        );
    }
    let run = run(&roots, &["index", "--json"]);
    assert_eq!(run.code, 2, "{run:?}");
    let error = &run.json()["error"];
    assert_eq!(error["code"], "index_busy", "{run:?}");
    assert_eq!(error["message"], "another index is running (pid 4242)");
    assert_eq!(error["pid"], 4242);
    // A background update gives way silently; searches are not held up.
    let background = self::run(&roots, &["index", "--background"]);
    assert_eq!(
        (
            background.code,
            background.stdout.as_str(),
            background.stderr.as_str()
        ),
        (0, "", "")
    );
    let search = self::run(&roots, &["list", "--query", "the", "--json"]);
    assert_eq!(search.code, 0, "{search:?}");
    assert_eq!(fs::read_to_string(&lock).unwrap(), "4242\n");
    // The update the search started gives way too: gone before the lock is let go, or it could
    // take the lock from the update below.
    let start = Instant::now();
    while roots.background_running() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "no background update ends"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    drop(held);
    assert_eq!(self::run(&roots, &["index"]).code, 0);
}

/// A user other than this one, with their name when the system knows it.
fn another_user() -> (u32, Option<String>) {
    let uid = 65534;
    let name = nix::unistd::User::from_uid(nix::unistd::Uid::from_raw(uid))
        .ok()
        .flatten()
        .map(|u| u.name);
    (uid, name)
}

/// `index`, `reindex` and `doctor` fail with `index_unavailable` for `reason`, their message
/// naming `cause`, in text and in JSON; searches still answer, by reading the transcripts.
fn unavailable(roots: &Roots, reason: &str, cause: &str) {
    for args in [&["index"][..], &["reindex"], &["doctor"]] {
        let run = run(roots, args);
        assert_eq!(run.code, 2, "{args:?}: {run:?}");
        assert!(run.stdout.is_empty(), "{args:?}: {run:?}");
        assert!(
            run.stderr.contains(cause) && run.stderr.ends_with(") (index_unavailable)\n"),
            "{args:?}: {run:?}"
        );
        let mut json = args.to_vec();
        json.push("--json");
        let run = self::run(roots, &json);
        assert_eq!(run.code, 2, "{json:?}: {run:?}");
        let error = &run.json()["error"];
        assert_eq!(error["code"], "index_unavailable", "{run:?}");
        assert_eq!(error["reason"], reason, "{run:?}");
        let message = error["message"].as_str().unwrap();
        assert!(
            message.contains(cause) && message.ends_with(&format!("({reason})")),
            "{message}"
        );
    }
    let with = run(roots, &["list", "--query", "prefix twin", "--json"]);
    let without = run(
        roots,
        &["--no-index", "list", "--query", "prefix twin", "--json"],
    );
    assert_eq!(with.code, 0, "{with:?}");
    assert_eq!(comparable(&with.stdout), comparable(&without.stdout));
}

#[test]
fn an_index_that_belongs_to_another_user_is_refused_naming_the_owner() {
    let roots = Roots::new();
    let (uid, name) = another_user();
    let owner = match &name {
        Some(name) => format!("belongs to user {name} (uid {uid})"),
        None => format!("belongs to uid {uid}"),
    };
    let me = rustix::process::geteuid().as_raw();
    if me != 0 {
        // Where this user may not create the index's directory, the owner of the directory
        // above it is named: `/`, root's.
        let mut cmd = command(&roots, BIN);
        let out = cmd
            .env("XDG_CACHE_HOME", "/")
            .args(["index", "--json"])
            .output()
            .unwrap();
        let run = Run {
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::new(),
            code: out.status.code().unwrap_or(-1),
        };
        assert_eq!(run.code, 2, "{run:?}");
        let error = &run.json()["error"];
        assert_eq!(error["reason"], "permission_denied", "{run:?}");
        let message = error["message"].as_str().unwrap();
        assert!(
            message.contains("/ belongs to user root (uid 0)"),
            "{message}"
        );
        eprintln!("note: not root, so no file could be given to another user here");
        return;
    }
    // Root can write anything, but does not: its files would lock their owner out.
    assert_eq!(run(&roots, &["index"]).code, 0);
    let db = roots.index_db();
    let dir = db.parent().unwrap();
    let chown = |path: &Path, uid: u32| {
        nix::unistd::chown(path, Some(nix::unistd::Uid::from_raw(uid)), None).unwrap();
    };
    chown(&db, uid);
    unavailable(
        &roots,
        "permission_denied",
        &format!("{} {owner}, not to this user (uid 0)", db.display()),
    );
    chown(&db, me);
    chown(dir, uid);
    unavailable(
        &roots,
        "permission_denied",
        &format!("{} {owner}, not to this user (uid 0)", dir.display()),
    );
    chown(dir, me);
    assert_eq!(run(&roots, &["index"]).code, 0);
}

/// Runs `script` with `sh` in a mount namespace of its own (`unshare`, in a user namespace or
/// as root), in the binary's environment, with `args` as `$1`…; `None` when this system
/// allows neither. The script creates `marker` once its mount worked.
fn in_mount_namespace(roots: &Roots, script: &str, args: &[&Path], marker: &Path) -> Option<Run> {
    for flags in ["-rm", "-m"] {
        let out = command(roots, "unshare")
            .args([flags, "sh", "-c", script, "sh"])
            .args(args)
            .output()
            .ok()?;
        if marker.exists() {
            return Some(Run {
                stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
                stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
                code: out.status.code().unwrap_or(-1),
            });
        }
    }
    None
}

/// The files a step of [`a_full_disk_is_named_and_leaves_no_oversized_log`]'s script left.
struct Step<'a>(&'a Path, &'static str);

impl Step<'_> {
    fn read(&self, what: &str) -> String {
        fs::read_to_string(self.0.join(format!("{}.{what}", self.1))).unwrap_or_default()
    }

    fn json(&self, what: &str) -> Value {
        let text = self.read(what);
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}.{what}: {e}: {text}", self.1))
    }

    /// The update failed for a full disk, left no log over the limit, and searches answer as
    /// without the index, from it for `from_index` sessions.
    fn full(&self, from_index: u64) -> String {
        let step = self.1;
        assert_eq!(
            self.read("code").trim(),
            "2",
            "{step}: {}",
            self.read("json")
        );
        let error = &self.json("json")["error"];
        assert_eq!(error["code"], "index_unavailable", "{step}: {error}");
        assert_eq!(error["reason"], "disk_full", "{step}: {error}");
        let message = error["message"].as_str().unwrap().to_string();
        assert!(
            message.contains(": the disk that holds it is full (disk_full)"),
            "{message}"
        );
        let log: u64 = self.read("wal").trim().parse().unwrap_or(0);
        assert!(
            log <= 32 << 20,
            "{step}: the failed update left a log of {log} bytes"
        );
        assert_eq!(
            comparable(&self.read("with")),
            comparable(&self.read("without")),
            "{step}"
        );
        let with = self.json("with");
        assert!(with["items"].as_array().is_some_and(|i| !i.is_empty()));
        assert_eq!(with["coverage"]["from_index"], from_index, "{step}");
        assert_eq!(self.json("doctor")["indexed"], from_index, "{step}");
        message
    }
}

/// Indexes the fixtures (without the undecodable one) with the cache on a tmpfs of `size`, in
/// a mount namespace, moves what `plant` wrote into the stash it is given into the Claude
/// root, then runs `steps` (sh, where `step NAME` updates the index and leaves what it said, its
/// log's size, a search with and without the index and `doctor` in `NAME.*`); the roots, the
/// directory of those files and how many sessions the fixtures' index held. `None` where no
/// mount namespace can be had.
fn on_a_small_disk(
    size: &str,
    plant: impl FnOnce(&Path),
    steps: &str,
) -> Option<(Roots, PathBuf, u64)> {
    let roots = Roots::new();
    fs::remove_file(roots.dir.path().join(UNDECODABLE)).unwrap();
    let stash = roots.dir.path().join("stash");
    plant(&stash);
    let cache = roots.cache_home();
    let out = roots.dir.path().join("out");
    fs::create_dir_all(&cache).unwrap();
    fs::create_dir_all(&out).unwrap();
    let wal = PathBuf::from(format!("{}-wal", roots.index_db().display()));
    let marker = out.join("mounted");
    let script = format!(
        r#"
        cache=$1 bin=$2 out=$3 wal=$4 marker=$5 stash=$6 claude=$7
        mount -t tmpfs -o size={size} tmpfs "$cache" || exit 99
        touch "$marker"
        cd "$out"
        step() {{
            "$bin" index --json > $1.json; echo $? > $1.code
            if [ -e "$wal" ]; then stat -c %s "$wal" > $1.wal; fi
            NOTESOUP_HISTORY_INDEX=read "$bin" list --query 'prefix twin' --json > $1.with
            "$bin" --no-index list --query 'prefix twin' --json > $1.without
            "$bin" doctor --json > $1.doctor
        }}
        "$bin" index --json > fixtures.json || exit 98
        mv "$stash"/* "$claude"
        {steps}
    "#
    );
    let claude = roots.root("claude");
    let args = [&cache, Path::new(BIN), &out, &wal, &marker, &stash, claude];
    let Some(ran) = in_mount_namespace(&roots, &script, &args, &marker) else {
        eprintln!("skipped: no mount namespace here (neither a user namespace nor root)");
        return None;
    };
    assert_eq!(ran.code, 0, "{ran:?}");
    let fixtures = Step(&out, "fixtures").json("json")["indexed"]
        .as_u64()
        .unwrap();
    Some((roots, out, fixtures))
}

#[test]
fn a_full_disk_is_named_and_leaves_no_oversized_log() {
    // The cache gets 40 MiB, more than the 32 MiB a log may keep. An update of 36 MB of
    // transcripts of long words commits a log of about that size, then cannot copy it into the
    // database; one of 60 MB more of text with a word every few characters fills the disk
    // before it commits (after a batch or so: the word lists of so many words fill a batch's
    // memory sooner).
    let stash = |stash: &Path| {
        plant_with(&stash.join("-w-planted-a"), 0..360, 50, 2000, false);
        plant_with(&stash.join("-w-planted-b"), 360..960, 50, 2000, true);
    };
    let steps = r#"
        mv "$claude/-w-planted-b" "$stash"
        step after_commit
        mv "$stash/-w-planted-b" "$claude"
        step before_commit
    "#;
    let Some((_roots, out, fixtures)) = on_a_small_disk("40m", stash, steps) else {
        return;
    };
    // The log it committed cannot be emptied: the index is deleted to give its room back.
    let message = Step(&out, "after_commit").full(0);
    assert!(
        message.contains("was deleted to give back the room"),
        "{message}"
    );
    // Filled before its commit, the update keeps what the index held: the batches it
    // committed before the one that filled it (the word lists of so many words fill a batch's
    // memory sooner), never all of it.
    let held = Step(&out, "before_commit").json("doctor")["indexed"]
        .as_u64()
        .unwrap();
    assert!(held < fixtures + 960, "{held}");
    let message = Step(&out, "before_commit").full(held);
    assert!(message.contains("could not be updated: "), "{message}");
}

#[test]
fn a_disk_that_fills_while_a_session_is_written_is_named() {
    // One session of 30,000 lines: their rows alone take more than the 2 MiB the cache gets,
    // so the disk fills while they are written, long before the update's commit.
    let stash = |stash: &Path| plant(&stash.join("-w-planted"), 0..1, 30_000, 20);
    let Some((_roots, out, fixtures)) = on_a_small_disk("2m", stash, "step written") else {
        return;
    };
    // The update fails for the full disk (not for what undoing the session's writes met
    // after SQLite rolled them back), and keeps what the index held.
    let message = Step(&out, "written").full(fixtures);
    assert!(message.contains("could not be updated: "), "{message}");
}

/// How many bytes the process whose `/proc/<pid>/io` is `io` has read so far.
fn bytes_read(io: &str) -> u64 {
    let io = fs::read_to_string(io).unwrap_or_default();
    io.lines()
        .find_map(|l| l.strip_prefix("rchar: ")?.parse().ok())
        .unwrap_or(0)
}

/// The binary started with `args` over `roots`, its output kept, with where the kernel counts
/// the bytes it reads.
fn spawn(roots: &Roots, args: &[&str]) -> (std::process::Child, String) {
    let child = command(roots, BIN)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let io = format!("/proc/{}/io", child.id());
    (child, io)
}

/// `(indexed, to index, MiB read, MiB to read)` of what an interrupted update says.
fn how_far(stderr: &str) -> (u64, u64, f64, f64) {
    let line = stderr
        .strip_prefix("interrupted: ")
        .and_then(|l| l.strip_suffix(" MiB); the rest is indexed next time\n"))
        .unwrap_or_else(|| panic!("{stderr:?}"));
    let (sessions, bytes) = line.split_once(" sessions indexed (").unwrap();
    let (done, all) = sessions.split_once(" of ").unwrap();
    let (read, total) = bytes.split_once(" of ").unwrap();
    let n = |s: &str| s.parse::<u64>().unwrap();
    let f = |s: &str| s.parse::<f64>().unwrap();
    (n(done), n(all), f(read), f(total))
}

#[test]
fn ctrl_c_stops_an_update_which_keeps_what_it_stored() {
    let roots = Roots::new();
    fs::remove_file(roots.dir.path().join(UNDECODABLE)).unwrap();
    let planted = roots.root("claude").join("-w-planted");
    let mut sessions = 0;
    // Ctrl-C once the update has read as many bytes as the planted transcripts hold (it reads
    // each twice: where its lines are, then their events; and stores a session soon after);
    // when it was done before that, again on a history twice as large.
    let (out, total) = loop {
        assert!(
            sessions < 1000,
            "every update was done before it could be interrupted"
        );
        let more = sessions.max(200);
        plant(&planted, sessions..sessions + more, 25, 2000);
        sessions += more;
        let planted_bytes: u64 = fs::read_dir(&planted)
            .unwrap()
            .map(|e| e.unwrap().metadata().unwrap().len())
            .sum();
        let _ = fs::remove_dir_all(roots.index_db().parent().unwrap());
        let (mut index, io) = spawn(&roots, &["index"]);
        let start = Instant::now();
        let written = loop {
            if index.try_wait().unwrap().is_some() {
                break false;
            }
            if bytes_read(&io) > planted_bytes {
                break true;
            }
            assert!(start.elapsed() < Duration::from_secs(20), "no progress");
            std::thread::sleep(Duration::from_millis(2));
        };
        if written {
            let pid = nix::unistd::Pid::from_raw(index.id() as i32);
            nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).unwrap();
        }
        let out = index.wait_with_output().unwrap();
        if written {
            break (out, sessions);
        }
        assert!(out.status.success(), "{out:?}");
    };
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(out.stdout.is_empty(), "{out:?}");
    let (indexed, all, read, to_read) = how_far(&stderr);
    assert!(0 < indexed && indexed < all, "{stderr}");
    assert!(0.0 < read && read < to_read, "{stderr}");
    assert!(all > total as u64, "{stderr}");
    let doctor = run(&roots, &["doctor", "--json"]).json();
    assert_eq!(doctor["indexed"], indexed, "{doctor}");
    // The next update indexes the rest.
    let next = run(&roots, &["index", "--json"]);
    assert_eq!(next.code, 0, "{next:?}");
    let next = next.json();
    assert_eq!(next["indexed"], all - indexed, "{next}");
    assert_eq!(next["fresh"], indexed, "{next}");
    assert_eq!(run(&roots, &["doctor", "--json"]).json()["indexed"], all);
}

#[test]
fn an_update_whose_database_is_deleted_stops_at_the_next_session() {
    let roots = Roots::new();
    fs::remove_file(roots.dir.path().join(UNDECODABLE)).unwrap();
    let planted = roots.root("claude").join("-w-planted");
    plant(&planted, 0..400, 25, 2000);
    let planted_bytes: u64 = fs::read_dir(&planted)
        .unwrap()
        .map(|e| e.unwrap().metadata().unwrap().len())
        .sum();
    for args in [&["index"][..], &["index", "--background"]] {
        let dir = roots.index_db().parent().unwrap().to_path_buf();
        let _ = fs::remove_dir_all(&dir);
        let (mut index, io) = spawn(&roots, args);
        // Once it writes (it has read a quarter of the history), its database goes, as a user
        // clearing the cache would remove it.
        let start = Instant::now();
        while bytes_read(&io) < planted_bytes / 4 {
            assert!(index.try_wait().unwrap().is_none(), "{args:?} ended first");
            assert!(start.elapsed() < Duration::from_secs(20), "no progress");
            std::thread::sleep(Duration::from_millis(2));
        }
        fs::remove_dir_all(&dir).unwrap();
        let removed = Instant::now();
        let out = index.wait_with_output().unwrap();
        let stopped = removed.elapsed();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stopped < Duration::from_secs(2),
            "{args:?} went on for {stopped:?}"
        );
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains("(replaced)"), "{args:?}: {stderr}");
        // Nothing came back where the database was.
        assert!(!dir.exists(), "{args:?} wrote its database again");
    }
}
