//! `init bash|zsh|fish`: the snippet that binds Ctrl-G to the picker and puts the chosen
//! session's resume command on the command line, for the person to run with Enter.

use crate::args::InitShell;
use crate::command_line::PROGRAM;

/// The snippet for `shell`.
pub fn snippet(shell: InitShell) -> String {
    let body = match shell {
        // bind -x runs the function with READLINE_LINE holding the line; the picker reads
        // keys from the terminal, and its choice replaces the line.
        InitShell::Bash => BASH,
        InitShell::Zsh => ZSH,
        InitShell::Fish => FISH,
    };
    body.replace("{PROGRAM}", PROGRAM)
}

const BASH: &str = r#"# notesoup-history: Ctrl-G picks a session and puts its resume command on the line.
__notesoup_history_pick() {
    local chosen
    chosen=$({PROGRAM} pick --query "$READLINE_LINE" </dev/tty) || return 0
    READLINE_LINE=$chosen
    READLINE_POINT=${#READLINE_LINE}
}
if [[ $- == *i* ]]; then
    bind -x '"\C-g": __notesoup_history_pick'
fi
"#;

const ZSH: &str = r#"# notesoup-history: Ctrl-G picks a session and puts its resume command on the line.
__notesoup_history_pick() {
    local chosen
    chosen=$({PROGRAM} pick --query "$BUFFER" </dev/tty)
    if [[ $? -eq 0 && -n $chosen ]]; then
        BUFFER=$chosen
        CURSOR=${#BUFFER}
    fi
    zle reset-prompt
}
zle -N __notesoup_history_pick
bindkey '^G' __notesoup_history_pick
"#;

const FISH: &str = r#"# notesoup-history: Ctrl-G picks a session and puts its resume command on the line.
function __notesoup_history_pick
    set -l chosen ({PROGRAM} pick --query=(commandline) </dev/tty)
    and commandline --replace -- $chosen
    commandline --function repaint
end
bind \cg __notesoup_history_pick
"#;

#[cfg(test)]
mod tests {
    use super::*;

    /// Each snippet is read by its shell without running it (`bash -n`, `zsh -n`, `fish
    /// --no-execute`); a shell that is not installed is skipped, and says so.
    #[test]
    fn every_snippet_is_valid_in_its_shell() {
        for (shell, name, check) in [
            (InitShell::Bash, "bash", "-n"),
            (InitShell::Zsh, "zsh", "-n"),
            (InitShell::Fish, "fish", "--no-execute"),
        ] {
            let text = snippet(shell);
            assert!(text.contains("pick --query") && text.contains(PROGRAM));
            let dir = tempfile::tempdir().unwrap();
            let file = dir.path().join(format!("init.{name}"));
            std::fs::write(&file, &text).unwrap();
            let run = std::process::Command::new(name)
                .arg(check)
                .arg(&file)
                .output();
            match run {
                Err(_) => eprintln!("{name} is not installed: its snippet is not checked"),
                Ok(out) => assert!(
                    out.status.success(),
                    "{name}: {}\n{text}",
                    String::from_utf8_lossy(&out.stderr)
                ),
            }
        }
    }
}
