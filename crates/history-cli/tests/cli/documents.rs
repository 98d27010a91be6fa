//! `completions` and `man`: documents of the command line, for every harness of the registry,
//! printed without reading a transcript.

use crate::common::Roots;

#[test]
fn completions_name_every_subcommand_and_root_flag_in_every_shell() {
    let r = Roots::new();
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let run = r.run(&["completions", shell]);
        assert_eq!(run.code, 0, "{shell}: {run:?}");
        // Shells spell long flags their own way (fish: `-l claude-root`).
        for word in [
            "list",
            "read",
            "index",
            "mcp",
            "claude-root",
            "pi-root",
            "before-seq",
        ] {
            assert!(run.stdout.contains(word), "{shell}: no {word}");
        }
    }
    // The bash script is one bash reads.
    let bash = r.run(&["completions", "bash"]).stdout;
    let checked = std::process::Command::new("bash")
        .args(["-n", "-c", &bash])
        .status()
        .expect("bash runs");
    assert!(checked.success());
    let bad = r.run(&["completions", "tcsh"]);
    assert_eq!(bad.code, 2, "{bad:?}");
}

#[test]
fn the_manual_has_a_page_per_subcommand() {
    let r = Roots::new();
    let run = r.run(&["man"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout.starts_with(".ie") || run.stdout.starts_with(".TH"),
        "{}",
        &run.stdout[..80]
    );
    for page in [
        "notesoup-history",
        "notesoup-history-list",
        "notesoup-history-read",
        "notesoup-history-mcp",
    ] {
        assert!(
            run.stdout
                .lines()
                .any(|l| l.starts_with(&format!(".TH {page} "))),
            "no page {page}"
        );
    }
    assert!(
        run.stdout.contains("\\-\\-after\\-seq"),
        "list's options are described"
    );
}
