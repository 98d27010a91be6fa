//! Recipes and resume commands as command lines a person can paste: the flags of `list` and
//! `read` that a [`Recipe`] stands for, quoted for a POSIX shell.

use history_core::Recipe;
use history_core::Resume;

/// The program's name, as a command line starts it.
pub const PROGRAM: &str = "notesoup-history";

/// `word` as one word of a POSIX shell command line: unquoted when it holds only characters no
/// shell treats specially, else in single quotes.
pub fn quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./:,@+%".contains(&b));
    match plain {
        true => word.to_string(),
        false => format!("'{}'", word.replace('\'', r"'\''")),
    }
}

/// The tool call that asks for what `recipe` selects, for an agent over MCP:
/// `history_read({…})` for a recipe that names an event, `history_find({…})` for one of ranked
/// words, `history_list({…})` otherwise; its arguments the recipe's, with `extra` added.
pub fn call(recipe: &Recipe, extra: &serde_json::Map<String, serde_json::Value>) -> String {
    let mut arguments = match serde_json::to_value(recipe) {
        Ok(serde_json::Value::Object(map)) => map,
        _ => serde_json::Map::new(),
    };
    for (k, v) in extra {
        arguments.entry(k.clone()).or_insert_with(|| v.clone());
    }
    let arguments = serde_json::to_string(&arguments).unwrap_or_default();
    format!("{}({arguments})", tool_of(recipe))
}

/// The tool a recipe is a call of.
pub fn tool_of(recipe: &Recipe) -> &'static str {
    match (recipe.seq.is_some(), recipe.text.is_some()) {
        (true, _) => "history_read",
        (false, true) => "history_find",
        (false, false) => "history_list",
    }
}

/// The command line that asks for what `recipe` selects, after `prefix` (the program and the
/// flags of this run that every recipe repeats, such as the roots): `read` for a recipe that
/// names an event, `list` otherwise.
pub fn recipe(prefix: &[String], recipe: &Recipe) -> String {
    let mut words: Vec<String> = Vec::new();
    let mut flag = |name: &str, value: String| {
        words.push(format!("--{name}"));
        words.push(value);
    };
    if let Some(s) = &recipe.session {
        flag("session", s.clone());
    }
    let read = recipe.seq.is_some();
    let command = match (read, recipe.text.is_some()) {
        (true, _) => "read",
        (false, true) => "find",
        (false, false) => "list",
    };
    if let Some(seq) = recipe.seq {
        flag("seq", seq.to_string());
    }
    if let Some(part) = recipe.part.filter(|p| *p > 0) {
        flag("part", part.to_string());
    }
    if let Some(n) = recipe.offset_chars {
        flag("offset-chars", n.to_string());
    }
    for q in recipe.queries.iter().flatten() {
        flag("query", q.clone());
    }
    for r in recipe.roles.iter().flatten() {
        flag("role", r.as_str().to_string());
    }
    if let Some(t) = recipe.since {
        flag("since", t.to_string());
    }
    if let Some(t) = recipe.until {
        flag("until", t.to_string());
    }
    if let Some(n) = recipe.before_seq {
        flag("before-seq", n.to_string());
    }
    if let Some(n) = recipe.after_seq {
        flag("after-seq", n.to_string());
    }
    if let Some(c) = &recipe.before {
        flag("before", c.to_string());
    }
    if let Some(c) = &recipe.after {
        flag("after", c.to_string());
    }
    if let Some(n) = recipe.limit {
        flag("limit", n.to_string());
    }
    if let Some(dir) = &recipe.cwd {
        flag("cwd", dir.clone());
    }
    if let Some(n) = recipe.after_rank {
        flag("after-rank", n.to_string());
    }
    if recipe.all_branches == Some(true) {
        words.push("--all-branches".into());
    }
    if recipe.events == Some(true) {
        words.push("--events".into());
    }
    if let Some(text) = &recipe.text {
        words.push("--".into());
        words.push(text.clone());
    }
    let mut line: Vec<String> = match prefix.split_first() {
        Some((program, globals)) => std::iter::once(program.clone())
            .chain(std::iter::once(command.to_string()))
            .chain(globals.iter().cloned())
            .collect(),
        None => vec![PROGRAM.into(), command.to_string()],
    };
    line.extend(words);
    line.iter().map(|w| quote(w)).collect::<Vec<_>>().join(" ")
}

/// The command that reopens a session in its agent, run from its directory where it needs one
/// (`cd DIR && claude --resume ID`).
pub fn resume(resume: &Resume) -> String {
    let argv: Vec<String> = resume.argv.iter().map(|w| quote(w)).collect();
    match &resume.cwd {
        Some(dir) => format!("cd {} && {}", quote(dir), argv.join(" ")),
        None => argv.join(" "),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use history_core::Cursor;
    use history_core::Role;

    #[test]
    fn words_a_shell_would_split_or_expand_are_quoted() {
        assert_eq!(quote("claude:4f2a-b"), "claude:4f2a-b");
        assert_eq!(quote("*"), "'*'");
        assert_eq!(quote("git diff"), "'git diff'");
        assert_eq!(quote("it's"), r"'it'\''s'");
        assert_eq!(quote(""), "''");
    }

    #[test]
    fn a_recipe_is_the_flags_it_stands_for() {
        let older = Recipe {
            session: Some("*".into()),
            queries: Some(vec!["git diff".into()]),
            roles: Some(vec![Role::Tool]),
            before: Cursor::parse("2026-01-22T17:51:18.777Z,claude:70fc,11,0"),
            cwd: Some("/w/my app".into()),
            ..Recipe::default()
        };
        assert_eq!(
            recipe(&[], &older),
            "notesoup-history list --session '*' --query 'git diff' --role tool \
             --before 2026-01-22T17:51:18.777Z,claude:70fc,11,0 --cwd '/w/my app'"
        );
        let prefix = ["nh".to_string(), "--claude-root".into(), "/c".into()];
        let next = Recipe {
            seq: Some(7),
            part: Some(1),
            offset_chars: Some(100),
            ..Recipe::default()
        };
        assert_eq!(
            recipe(&prefix, &next),
            "nh read --claude-root /c --seq 7 --part 1 --offset-chars 100"
        );
    }

    #[test]
    fn resume_runs_in_its_directory_where_it_has_one() {
        let r = Resume {
            argv: vec!["claude".into(), "--resume".into(), "abc".into()],
            cwd: Some("/w/my repo".into()),
        };
        assert_eq!(resume(&r), "cd '/w/my repo' && claude --resume abc");
    }
}
