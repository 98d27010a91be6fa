//! Shell completion: the scripts `completions SHELL` prints, and the answers the binary gives
//! when such a script calls it back (`COMPLETE=bash notesoup-history -- WORDS…`).
//!
//! Every shell asks the binary, through clap_complete's completion engine, rather than read a
//! table of flags written into its script: the answers are this version's subcommands, flags
//! and values (`--role`, `--from`, `--format`), never a flag a subcommand hides, and after
//! `--session` the ids of the user's recent sessions. (clap_complete's static bash script also
//! breaks for a name with a hyphen: its states are spelled two ways, so that no subcommand's
//! flags are ever offered.)

use clap_complete::env::Shells;
use clap_complete::Shell;
use history_core::Harness;

use crate::command_line::PROGRAM;

/// The environment variable that tells the binary a shell's script is asking it to complete,
/// and which shell.
const VAR: &str = "COMPLETE";

/// What `completions SHELL` prints: the script that makes `shell` ask the binary (found on
/// `$PATH` as `notesoup-history`) for each completion.
pub fn script(shell: Shell) -> String {
    if shell == Shell::Bash {
        return BASH
            .replace("FUNCTION", &PROGRAM.replace('-', "_"))
            .replace("PROGRAM", PROGRAM);
    }
    let mut out = Vec::new();
    if let Some(completer) = Shells::builtins().completer(&shell.to_string()) {
        // Writing to memory cannot fail.
        let _ = completer.write_registration(VAR, PROGRAM, PROGRAM, PROGRAM, &mut out);
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Answers a completion script's call, when this run is one (`COMPLETE` is set): prints the
/// candidates for the words after `--` and exits. Otherwise it returns, and the command runs.
pub fn answer_if_asked(registry: &[&Harness]) {
    clap_complete::CompleteEnv::with_factory(|| crate::args::command(registry))
        .var(VAR)
        .bin(PROGRAM)
        .completer(PROGRAM)
        .complete();
}

/// The bash script. clap_complete's own sends bash's words as bash split them, at `:` and `=`
/// too (`COMP_WORDBREAKS`), so that `--session claude:70<TAB>` reached the binary as three
/// words; this one joins them again, and gives bash back only the part of each candidate after
/// the break it replaces. Where nothing completes, bash offers nothing (no file names for
/// `--query`): the binary itself completes paths where a flag takes one.
const BASH: &str = r#"# bash completion for PROGRAM: source <(PROGRAM completions bash)
_FUNCTION() {
    local IFS=$'\013'
    # What bash replaces: the word up to the cursor, after the last `:` or `=` in it.
    local current="$2"
    if [[ "${BASH_VERSINFO[0]}" -lt 4 ]]; then
        current="${COMP_WORDS[COMP_CWORD]}"
    fi
    # The words up to the cursor, with what bash split at `:` or `=` joined again (a word that
    # ends with one is split before an empty current word: `claude:` is `claude` `:`).
    local -a words=()
    local i word joined=false
    for ((i = 0; i <= COMP_CWORD; i++)); do
        word="${COMP_WORDS[i]}"
        if ((i == COMP_CWORD)) && [[ -n ${word//[:=]/} ]]; then
            word="$current"
        fi
        if ((i > 0)) && [[ $joined == true || ( -n $word && -z ${word//[:=]/} ) ]]; then
            words[${#words[@]}-1]+="$word"
        else
            words+=("$word")
        fi
        if [[ -n $word && -z ${word//[:=]/} ]]; then
            joined=true
        else
            joined=false
        fi
    done
    local space=true
    if compopt +o nospace 2>/dev/null; then
        space=false
    fi
    COMPREPLY=( $( \
        _CLAP_IFS="$IFS" \
        _CLAP_COMPLETE_INDEX="$((${#words[@]} - 1))" \
        _CLAP_COMPLETE_COMP_TYPE="${COMP_TYPE:-9}" \
        _CLAP_COMPLETE_SPACE="$space" \
        COMPLETE="bash" \
        PROGRAM -- "${words[@]}" 2>/dev/null \
    ) ) || { COMPREPLY=(); return 0; }
    # Bash replaces only what follows the last break: give it that part of each candidate.
    local typed="${words[${#words[@]}-1]}"
    local before="${typed%"$current"}"
    if [[ -n $before ]]; then
        COMPREPLY=("${COMPREPLY[@]#"$before"}")
    fi
    if [[ $space == false && ${#COMPREPLY[@]} -eq 1 && ${COMPREPLY[0]} =~ [=/:]$ ]]; then
        compopt -o nospace
    fi
    return 0
}
if [[ "${BASH_VERSINFO[0]}" -eq 4 && "${BASH_VERSINFO[1]}" -ge 4 || "${BASH_VERSINFO[0]}" -gt 4 ]]; then
    complete -o nospace -o nosort -F _FUNCTION PROGRAM
else
    complete -o nospace -F _FUNCTION PROGRAM
fi
"#;
