//! Helpers shared by the integration tests: the fixture root, decoding a fixture session through
//! the `Transcript` trait, and a compact rendering for snapshots.

use std::path::{Path, PathBuf};

use decode_pi::Pi;
use history_core::{Decoded, Event, SessionFile, Transcript};

/// The fixture sessions root (laid out like `~/.pi/agent/sessions`).
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/pi/sessions")
}

/// The root of the newest real sample (pi v3 of April 2026, `fixtures/samples/pi`): kept out of
/// the fixture root, whose every line the matching tests try against every word.
pub fn samples_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/samples/pi")
}

pub fn pi() -> Pi {
    Pi::new(root())
}

/// The discovered file of a fixture session, by its id.
pub fn file(id: &str) -> SessionFile {
    pi().discover()
        .into_iter()
        .find(|f| f.key.id == id)
        .unwrap_or_else(|| panic!("fixture session {id} not discovered"))
}

/// Every event a fixture streams (all branches), and what decoding returned.
pub fn decode(id: &str) -> (Vec<Event>, Decoded) {
    decode_file(&pi(), &file(id))
}

pub fn decode_file(pi: &Pi, file: &SessionFile) -> (Vec<Event>, Decoded) {
    let mut events = Vec::new();
    let decoded = pi
        .decode(file, &mut |e| events.push(e), None)
        .unwrap_or_else(|e| panic!("{}: {e}", file.path.display()));
    (events, decoded)
}

/// The events of one line.
pub fn at(events: &[Event], seq: u64) -> Vec<&Event> {
    events.iter().filter(|e| e.seq == seq).collect()
}

/// A path shown relative to the fixture root, for snapshots.
pub fn shown(path: &Path) -> String {
    let path = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    [root(), samples_root()]
        .iter()
        .find_map(|root| {
            let root = root.canonicalize().unwrap_or_else(|_| root.clone());
            path.strip_prefix(&root)
                .ok()
                .map(|p| p.display().to_string())
        })
        .unwrap_or_else(|| path.display().to_string())
}

/// One line per event, `seq.part mark role kind [tool] time | text`, where the mark is `*` on
/// the active branch and `-` off it; text is cut to 120 characters, newlines shown as `⏎`.
pub fn render(file: &SessionFile, events: &[Event], decoded: &Decoded) -> String {
    let mut out = String::new();
    out.push_str(&format!(
        "session {}\nfile {}\n",
        file.key,
        shown(&file.path)
    ));
    out.push_str(&format!(
        "title {:?}\ncwd {:?}\n",
        decoded.meta.title, decoded.meta.cwd
    ));
    out.push_str(&format!("branch {:?}\n", decoded.branch));
    let lineage: Vec<String> = decoded.lineage.iter().map(|p| shown(p)).collect();
    out.push_str(&format!("lineage {lineage:?}\n"));
    if let Some(parent) = &decoded.meta.forked_from {
        out.push_str(&format!("forked from {}\n", shown(parent)));
    }
    for notice in &decoded.notices {
        out.push_str(&format!("notice {notice}\n"));
    }
    out.push_str("events\n");
    for e in events {
        let on = match &decoded.branch {
            Some(branch) => branch.binary_search(&e.seq).is_ok(),
            None => true,
        };
        let tool = e
            .tool
            .as_deref()
            .map(|t| format!(" [{t}]"))
            .unwrap_or_default();
        let time = e.timestamp.map_or("-".to_string(), |t| t.to_string());
        let mut text: String = e.text.chars().take(120).collect();
        if e.text.chars().count() > 120 {
            text.push('…');
        }
        out.push_str(&format!(
            "{}.{} {} {} {}{}{} {} | {}\n",
            e.seq,
            e.part,
            if on { '*' } else { '-' },
            e.role,
            e.kind,
            tool,
            if e.visible { "" } else { " (hidden)" },
            time,
            text.replace('\n', "⏎")
        ));
    }
    out
}

/// The lines of a file as the decoder numbers them (`seq` = index + 1): split at `\n`, a `\r`
/// before it dropped, no line after a final newline.
pub fn lines_of(bytes: &[u8]) -> Vec<&[u8]> {
    let mut lines: Vec<&[u8]> = bytes.split(|&b| b == b'\n').collect();
    if bytes.ends_with(b"\n") || bytes.is_empty() {
        lines.pop();
    }
    for line in &mut lines {
        if let Some(stripped) = line.strip_suffix(b"\r") {
            *line = stripped;
        }
    }
    lines
}

/// A line test, as a search passes one.
pub type Test<'a> = &'a (dyn Fn(&[u8]) -> bool + Sync);

/// Checks `decode` with a line test against `decode` for one test: the events of exactly the lines the
/// test passes, equal to those `decode` emits for them, and the same `Decoded` (or error).
pub fn check_matching(pi: &Pi, file: &SessionFile, test: Test<'_>, what: &str) {
    let bytes = std::fs::read(&file.path).unwrap();
    let lines = lines_of(&bytes);
    let mut full = Vec::new();
    let full_decoded = pi.decode(file, &mut |e| full.push(e), None);
    let mut light = Vec::new();
    let light_decoded = pi.decode(file, &mut |e| light.push(e), Some(test));
    let at = || format!("{} with {what}", file.path.display());
    let passes = |seq: u64| {
        let line = lines
            .get(seq as usize - 1)
            .unwrap_or_else(|| panic!("{}: event of line {seq}, past the end", at()));
        test(line)
    };
    let expected: Vec<&Event> = full.iter().filter(|e| passes(e.seq)).collect();
    let got: Vec<&Event> = light.iter().collect();
    assert_eq!(got, expected, "{}: events", at());
    let (full_decoded, light_decoded) = match (full_decoded, light_decoded) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(a), Err(b)) => {
            assert_eq!(a.to_string(), b.to_string(), "{}: error", at());
            return;
        }
        (a, b) => panic!("{}: decode {a:?}, decode with a line test {b:?}", at()),
    };
    assert_eq!(
        light_decoded.branch,
        full_decoded.branch,
        "{}: branch",
        at()
    );
    assert_eq!(
        light_decoded.notices,
        full_decoded.notices,
        "{}: notices",
        at()
    );
    assert_eq!(light_decoded.meta, full_decoded.meta, "{}: meta", at());
    assert_eq!(
        light_decoded.lineage,
        full_decoded.lineage,
        "{}: lineage",
        at()
    );
}

/// `decode` with a line test against `decode` for all lines, none, and seeded random subsets.
pub fn check_matching_subsets(pi: &Pi, file: &SessionFile, seeds: u64) {
    check_matching(pi, file, &|_| true, "every line");
    check_matching(pi, file, &|_| false, "no line");
    for seed in 0..seeds {
        let den = [2, 3, 4, 8][(seed % 4) as usize];
        let test =
            move |line: &[u8]| history_core::testing::line_hash(seed, line) % den == seed % den;
        check_matching(pi, file, &test, &format!("seed {seed}, 1 line in {den}"));
        let test =
            move |line: &[u8]| history_core::testing::line_hash(seed, line) % den != seed % den;
        check_matching(pi, file, &test, &format!("seed {seed}, all but 1 in {den}"));
    }
}
