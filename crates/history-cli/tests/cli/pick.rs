//! `pick` end to end: the binary under a pseudo-terminal, its screen read back through a
//! terminal emulator (vt100). Keys typed as a person types them; what it prints goes to a file,
//! as `$(notesoup-history pick)` takes it, and the terminal is left as it was found.

use std::io::{Read, Write};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use portable_pty::{native_pty_system, Child, CommandBuilder, MasterPty, PtySize};

use crate::common::Roots;

/// The picker running under a pseudo-terminal, its screen as a terminal shows it.
struct Picking {
    screen: Arc<Mutex<vt100::Parser>>,
    keys: Box<dyn Write + Send>,
    child: Box<dyn Child + Send + Sync>,
    master: Box<dyn MasterPty + Send>,
    dir: tempfile::TempDir,
}

impl Picking {
    /// `notesoup-history pick ARGS` on the fixtures, 100×30, its standard output to a file.
    fn start(r: &Roots, args: &[&str]) -> Option<Picking> {
        Picking::start_with(r, args, &[])
    }

    /// The same, with the variables `env` set over those it sets.
    fn start_with(r: &Roots, args: &[&str], env: &[(&str, String)]) -> Option<Picking> {
        let pty = native_pty_system()
            .openpty(PtySize {
                rows: 30,
                cols: 100,
                pixel_width: 0,
                pixel_height: 0,
            })
            .ok()?;
        let dir = tempfile::tempdir().ok()?;
        let bin = assert_cmd::cargo::cargo_bin("notesoup-history");
        let mut cmd = CommandBuilder::new("/bin/sh");
        cmd.args([
            "-c",
            // The terminal's modes once the picker is gone: raw mode is given back.
            "\"$@\" > \"$OUT\"; echo $? > \"$OUT.code\"; stty -a > \"$OUT.stty\"",
            "sh",
            &bin.display().to_string(),
            "pick",
        ]);
        cmd.args(args);
        cmd.env_clear();
        cmd.env("OUT", dir.path().join("out"));
        cmd.env("HOME", r.dir.path().join("home"));
        cmd.env("XDG_CACHE_HOME", r.cache_home());
        cmd.env("NOTESOUP_HISTORY_INDEX", "off");
        cmd.env("PATH", "/usr/bin:/bin");
        cmd.env("TERM", "xterm-256color");
        cmd.env("TZ", "UTC");
        for (h, root) in r.roots() {
            cmd.env(h.root_env, root);
        }
        for (k, v) in env {
            cmd.env(k, v);
        }
        let child = pty.slave.spawn_command(cmd).ok()?;
        drop(pty.slave);
        let mut reader = pty.master.try_clone_reader().ok()?;
        let keys = pty.master.take_writer().ok()?;
        let size = |n| std::num::NonZeroU16::new(n).unwrap();
        let screen = Arc::new(Mutex::new(vt100::Parser::new(size(30), size(100), 0)));
        let parsed = screen.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                parsed.lock().unwrap().process(&buf[..n]);
            }
        });
        Some(Picking {
            screen,
            keys,
            child,
            master: pty.master,
            dir,
        })
    }

    /// The terminal takes a new size, as a window resized.
    fn resize(&mut self, rows: u16, cols: u16) {
        let size = |n| std::num::NonZeroU16::new(n).unwrap();
        self.screen.lock().unwrap().set_size(size(rows), size(cols));
        self.master
            .resize(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .unwrap();
    }

    fn contents(&self) -> String {
        self.screen.lock().unwrap().screen().contents()
    }

    /// Waits until the screen shows `text`.
    fn wait_for(&self, text: &str) -> String {
        let until = Instant::now() + Duration::from_secs(30);
        loop {
            let shown = self.contents();
            if shown.contains(text) {
                return shown;
            }
            assert!(
                Instant::now() < until,
                "no {text:?} on the screen:\n{shown}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Types `keys` a key at a time.
    fn press(&mut self, keys: &str) {
        for c in keys.chars() {
            let mut b = [0u8; 4];
            self.keys
                .write_all(c.encode_utf8(&mut b).as_bytes())
                .unwrap();
            self.keys.flush().unwrap();
            std::thread::sleep(Duration::from_millis(30));
        }
    }

    fn key(&mut self, bytes: &[u8]) {
        self.keys.write_all(bytes).unwrap();
        self.keys.flush().unwrap();
        std::thread::sleep(Duration::from_millis(30));
    }

    /// Waits for the picker to end: what it printed and its exit code.
    fn finish(mut self) -> (String, i32, bool) {
        let until = Instant::now() + Duration::from_secs(30);
        while self.child.try_wait().ok().flatten().is_none() {
            assert!(
                Instant::now() < until,
                "still running:\n{}",
                self.contents()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        std::thread::sleep(Duration::from_millis(100));
        let read = |p: &Path| std::fs::read_to_string(p).unwrap_or_default();
        let out = read(&self.dir.path().join("out"));
        let code = read(&self.dir.path().join("out.code"))
            .trim()
            .parse()
            .unwrap_or(-1);
        let alternate = self.screen.lock().unwrap().screen().alternate_screen();
        let modes = read(&self.dir.path().join("out.stty"));
        let words: Vec<&str> = modes.split_whitespace().collect();
        assert!(
            ["icanon", "echo", "isig"].iter().all(|m| words.contains(m)),
            "the terminal is left in raw mode: {modes}"
        );
        (out, code, alternate)
    }

    /// Sends `signal` to the picker (the shell's child).
    fn signal(&self, signal: nix::sys::signal::Signal) {
        let shell = self.child.process_id().unwrap();
        let children = std::fs::read_to_string(format!("/proc/{shell}/task/{shell}/children"))
            .unwrap_or_default();
        let pid: i32 = children.split_whitespace().next().unwrap().parse().unwrap();
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), signal).unwrap();
    }
}

/// The selected row's short id, as the screen shows it (the row marked `▌`).
fn selected(screen: &str) -> String {
    let row = screen
        .lines()
        .find(|l| l.starts_with('▌'))
        .unwrap_or_else(|| panic!("no selected row:\n{screen}"));
    let words: Vec<&str> = row.split_whitespace().collect();
    let agent = words
        .iter()
        .position(|w| ["claude", "codex", "pi", "omp"].contains(w))
        .unwrap_or_else(|| panic!("{row}"));
    words[agent + 1].to_string()
}

#[test]
fn type_move_enter_prints_the_resume_command() {
    let r = Roots::new();
    let Some(mut p) = Picking::start(&r, &[]) else {
        eprintln!("no pseudo-terminal here: skipped");
        return;
    };
    p.wait_for("recent session");
    p.press("login");
    // The ranking's status, not the first results'.
    let shown = p.wait_for(", ranked");
    assert!(shown.contains("Why does the login test fail?"), "{shown}");
    p.key(b"\x1b[B");
    let moved = p.contents();
    let id = selected(&moved);
    p.key(b"\r");
    let (out, code, alternate) = p.finish();
    assert_eq!(code, 0, "{out}");
    assert!(!alternate, "the terminal is back on its main screen");
    assert_eq!(out.lines().count(), 1, "{out:?}");
    assert!(
        out.contains(&id)
            && ["cd ", "codex resume ", "pi --session "]
                .iter()
                .any(|c| out.starts_with(c)),
        "the second row, {id}: {out:?}\n{moved}"
    );
}

#[test]
fn a_resize_redraws_and_esc_prints_nothing_and_exits_1() {
    let r = Roots::new();
    let Some(mut p) = Picking::start(&r, &["--query", "login"]) else {
        eprintln!("no pseudo-terminal here: skipped");
        return;
    };
    let narrow = p.wait_for("abandone");
    assert!(
        !narrow.contains("Esc quit"),
        "100 columns name the first keys"
    );
    // A wider window is drawn again at its width.
    p.resize(30, 140);
    p.wait_for("C-y copy · Esc quit");
    p.key(b"\x1b");
    let (out, code, alternate) = p.finish();
    assert_eq!((out.as_str(), code), ("", 1));
    assert!(!alternate);
}

#[test]
fn a_signal_to_end_gives_the_terminal_back_and_prints_nothing() {
    use nix::sys::signal::Signal;
    for (signal, exit) in [
        (Signal::SIGTERM, 143),
        (Signal::SIGHUP, 129),
        (Signal::SIGINT, 130),
    ] {
        let r = Roots::new();
        let Some(mut p) = Picking::start(&r, &[]) else {
            eprintln!("no pseudo-terminal here: skipped");
            return;
        };
        p.wait_for("recent session");
        p.press("log");
        p.signal(signal);
        let (out, code, alternate) = p.finish();
        assert_eq!((out.as_str(), code), ("", exit), "{signal}");
        assert!(
            !alternate,
            "{signal}: the terminal is back on its main screen"
        );
    }
}

#[test]
fn print_json_prints_the_sessions_entry() {
    let r = Roots::new();
    let Some(mut p) = Picking::start(&r, &["--print", "json", "--session", "claude:*"]) else {
        eprintln!("no pseudo-terminal here: skipped");
        return;
    };
    p.wait_for("ranked · claude:*");
    p.press("login");
    p.wait_for(", ranked");
    p.key(b"\r");
    let (out, code, _) = p.finish();
    assert_eq!(code, 0, "{out}");
    let entry: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(entry["session"], "claude:abandoned-branch", "{entry}");
    assert!(entry["resume"]["argv"].is_array(), "{entry}");
}

#[test]
fn exec_runs_the_resume_command_and_exits_with_its_code() {
    use std::os::unix::fs::PermissionsExt;
    let r = Roots::new();
    // A `codex` of our own on the PATH, which says how it was run.
    let bin = r.dir.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let fake = bin.join("codex");
    std::fs::write(&fake, "#!/bin/sh\necho \"$@\" > \"$RAN\"\nexit 7\n").unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let ran = r.dir.path().join("ran");
    let env = [
        ("PATH", format!("{}:/usr/bin:/bin", bin.display())),
        ("RAN", ran.display().to_string()),
    ];
    let Some(mut p) = Picking::start_with(&r, &["--exec", "--session", "codex:*"], &env) else {
        eprintln!("no pseudo-terminal here: skipped");
        return;
    };
    let shown = p.wait_for("▌");
    let id = selected(&shown);
    p.key(b"\r");
    let (out, code, alternate) = p.finish();
    assert_eq!(
        (out.as_str(), code),
        ("", 7),
        "the command's exit code, nothing printed"
    );
    assert!(!alternate);
    let ran = std::fs::read_to_string(&ran).unwrap_or_default();
    assert!(
        ran.starts_with("resume ") && ran.contains(&id),
        "{ran:?} for {id}"
    );
}

#[test]
fn without_a_terminal_it_says_so() {
    let r = Roots::new();
    // In a session of its own, the command has no controlling terminal to draw on.
    let setsid = ["/usr/bin/setsid", "/bin/setsid"]
        .into_iter()
        .find(|p| Path::new(p).exists());
    if let Some(setsid) = setsid {
        let bin = assert_cmd::cargo::cargo_bin("notesoup-history");
        let out = std::process::Command::new(setsid)
            .arg("-w")
            .arg(bin)
            .arg("pick")
            .env("HOME", r.dir.path().join("home"))
            .env("XDG_CACHE_HOME", r.cache_home())
            .env("NOTESOUP_HISTORY_INDEX", "off")
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains("pick needs a terminal"), "{stderr}");
        assert!(out.stdout.is_empty());
    } else {
        eprintln!("no setsid here: the run without a terminal is not checked");
    }
    let init = r.run(&["init", "zsh"]);
    assert_eq!(init.code, 0);
    assert!(init.stdout.contains("bindkey '^G'"), "{}", init.stdout);
}
