//! The MCP server end to end with the official client: tests/mcp_client.py drives the built
//! binary through the PyPI `mcp` package (initialize, the tools, both calls, a recipe followed,
//! errors with their codes, a read far over the budget continued, many calls on one
//! connection), and the tools as that client lists them are the ones served.
//!
//! It needs Python 3 with `mcp`: `.ci/run` installs it into `target/mcp-venv`; elsewhere set
//! `NOTESOUP_MCP_PYTHON` to an interpreter that has it. Without one the test fails and says so.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::Roots;

/// The interpreter: `$NOTESOUP_MCP_PYTHON`, else the venv `.ci/run` makes, else `python3`.
fn python() -> PathBuf {
    if let Some(p) = std::env::var_os("NOTESOUP_MCP_PYTHON") {
        return p.into();
    }
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/mcp-venv/bin/python");
    if venv.exists() {
        return venv;
    }
    "python3".into()
}

#[test]
fn the_official_client_lists_searches_pages_and_reads() {
    let python = python();
    let probe = Command::new(&python)
        .args(["-c", "import mcp.client.stdio, mcp.client.client"])
        .output();
    match probe {
        Ok(out) if out.status.success() => {}
        other => panic!(
            "the MCP end-to-end test needs Python 3 with the `mcp` package ({} failed: {}). \
             Run .ci/run, or: python3 -m venv target/mcp-venv && target/mcp-venv/bin/pip install mcp \
             (or set NOTESOUP_MCP_PYTHON to an interpreter that has it)",
            python.display(),
            match other {
                Ok(out) => String::from_utf8_lossy(&out.stderr).trim().to_string(),
                Err(e) => e.to_string(),
            }
        ),
    }
    let r = Roots::new();
    let (big_id, big_text) = r.big_session(100_000);
    let big_file = r.dir.path().join("big.txt");
    std::fs::write(&big_file, &big_text).unwrap();
    let out_file = r.dir.path().join("tools.json");
    let before = r.files();
    let mut cmd = Command::new(&python);
    cmd.arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_client.py"))
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
