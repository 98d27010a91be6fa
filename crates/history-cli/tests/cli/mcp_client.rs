//! The MCP server end to end with the official client: `mcp_client.py`, beside this file, drives
//! the built binary through the PyPI `mcp` package (initialize, the tools, both calls, a recipe
//! followed, errors with their codes, a read far over the budget continued, many calls on one
//! connection), and the tools as that client lists them are the ones served. It also replays,
//! on the demo, the calls a model makes to answer a question about an earlier session, as
//! Claude Code's model and as pi's see them, and holds the whole exchange under 12 KiB.
//!
//! It needs Python 3 with `mcp`. `NOTESOUP_MCP_PYTHON` names an interpreter that has it;
//! otherwise the test makes a virtualenv of its own under the target directory on first use
//! (`python3 -m venv`, then `pip install` from PyPI, once) and uses it from then on.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::Roots;

/// The client package the test drives the server with.
const MCP_REQUIREMENT: &str = "mcp>=2.3,<3";

/// Whether `python` can import the client.
fn has_client(python: &Path) -> bool {
    Command::new(python)
        .args(["-c", "import mcp.client.stdio, mcp.client.client"])
        .output()
        .is_ok_and(|out| out.status.success())
}

/// The interpreter: `$NOTESOUP_MCP_PYTHON`, else a virtualenv under the target directory, made
/// on first use.
fn python() -> PathBuf {
    if let Some(p) = std::env::var_os("NOTESOUP_MCP_PYTHON") {
        return p.into();
    }
    let venv = Path::new(env!("CARGO_TARGET_TMPDIR")).join("mcp-venv");
    let python = venv.join("bin/python");
    if has_client(&python) {
        return python;
    }
    eprintln!(
        "making {} for the MCP end-to-end test: python3 -m venv, then pip install '{MCP_REQUIREMENT}' (once)",
        venv.display()
    );
    let made = Command::new("python3")
        .args(["-m", "venv", "--clear"])
        .arg(&venv)
        .status();
    assert!(
        made.is_ok_and(|s| s.success()),
        "the MCP end-to-end test needs Python 3 with the venv module (python3 -m venv failed); \
         or set NOTESOUP_MCP_PYTHON to an interpreter that has the `mcp` package"
    );
    let installed = Command::new(&python)
        .args(["-m", "pip", "install", "--quiet", MCP_REQUIREMENT])
        .status();
    assert!(
        installed.is_ok_and(|s| s.success()),
        "pip could not install '{MCP_REQUIREMENT}' into {}: the MCP end-to-end test needs it \
         from PyPI (or set NOTESOUP_MCP_PYTHON to an interpreter that has it)",
        venv.display()
    );
    python
}

#[test]
fn the_official_client_lists_searches_pages_and_reads() {
    let python = python();
    assert!(
        has_client(&python),
        "{} cannot import the `mcp` client package",
        python.display()
    );
    let r = Roots::new();
    let (big_id, big_text) = r.big_session(100_000);
    let big_file = r.dir.path().join("big.txt");
    std::fs::write(&big_file, &big_text).unwrap();
    let out_file = r.dir.path().join("tools.json");
    let before = r.files();
    let mut cmd = Command::new(&python);
    cmd.arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cli/mcp_client.py"))
        .arg("--binary")
        .arg(env!("CARGO_BIN_EXE_notesoup-history"))
        .arg("--home")
        .arg(r.dir.path().join("home"))
        .arg("--cache")
        .arg(r.cache_home())
        .args(["--big-session", &big_id])
        .arg("--big-text")
        .arg(&big_file)
        .args(["--current", "parallel-tool-results"])
        .arg("--out")
        .arg(&out_file);
    for (h, root) in r.roots() {
        cmd.arg("--root").arg(h.root_flag).arg(root);
    }
    // The demo, for the exchange a model has to answer a question about an earlier session.
    let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/demo");
    // A harness with no demo reads its default root under the empty home.
    for h in history_cli::HARNESSES
        .iter()
        .filter(|h| demo.join(h.name).is_dir())
    {
        cmd.arg("--demo-root")
            .arg(h.root_flag)
            .arg(demo.join(h.name));
    }
    // The real samples, laid out as each agent stores them.
    let recall = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/recall");
    for (h, under) in
        history_cli::HARNESSES
            .iter()
            .zip(["claude/projects", "codex/sessions", "pi/sessions"])
    {
        cmd.arg("--samples-root")
            .arg(h.root_flag)
            .arg(recall.join(under));
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "the client failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "ok");
    assert!(before == r.files(), "a transcript changed");
    let tools: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out_file).unwrap()).unwrap();
    // The client sees the tools exactly as served (their schemas are in the mcp_tools
    // snapshot of tests/mcp.rs).
    assert_eq!(tools, history_cli::mcp::tools());
}
