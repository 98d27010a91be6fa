//! What a command's help ends with (its `after_help`): examples, a command a line with what it
//! does beside it, and paragraphs. Read here for the manual, and laid out again for the width
//! help is wrapped to, so that a narrow terminal shows each example whole rather than its
//! explanation broken under the command.

/// An epilogue, read.
#[derive(Debug, Default)]
pub struct Epilogue {
    /// Each example: the command line, and what it does (empty where nothing is said).
    pub examples: Vec<(String, String)>,
    /// The other paragraphs, each as one line of text, in order (`Exit codes: …` among them).
    pub paragraphs: Vec<String>,
}

/// How far an explanation on a line of its own is indented under its command.
const UNDER: usize = 6;

/// The column explanations start in at the least; left of it, each goes below its command.
const MIN_COLUMN: usize = 24;

impl Epilogue {
    /// Reads paragraphs separated by blank lines; the one headed `Examples:` holds a command
    /// a line, indented by two spaces, with what it does after a run of spaces or on the next
    /// line, indented further.
    pub fn parse(text: &str) -> Epilogue {
        let mut epilogue = Epilogue::default();
        for paragraph in text.split("\n\n") {
            match paragraph.strip_prefix("Examples:\n") {
                Some(lines) => epilogue.read_examples(lines),
                None => epilogue.paragraphs.push(one_line(paragraph)),
            }
        }
        epilogue
    }

    /// The lines of an `Examples:` paragraph.
    fn read_examples(&mut self, lines: &str) {
        for line in lines.lines() {
            let indent = line.len() - line.trim_start().len();
            let line = line.trim();
            if line.is_empty() {
                continue;
            }
            match self.examples.last_mut() {
                Some((_, what)) if indent > 4 && what.is_empty() => *what = line.to_string(),
                _ => {
                    let (command, what) = line.split_once("  ").unwrap_or((line, ""));
                    self.examples
                        .push((command.trim().to_string(), what.trim().to_string()));
                }
            }
        }
    }

    /// The epilogue laid out for `width` columns: each explanation beside its command, in one
    /// column, where it fits; else below it, indented. Paragraphs are filled to the width.
    pub fn layout(&self, width: usize) -> String {
        let mut parts = Vec::new();
        if !self.examples.is_empty() {
            parts.push(format!("Examples:\n{}", self.examples_layout(width)));
        }
        parts.extend(self.paragraphs.iter().map(|p| fill(p, 0, width)));
        parts.join("\n\n")
    }

    /// The examples' lines: the explanations in one column, as far right as the longest of
    /// them allows (a command that reaches it on a line of its own, its explanation below in
    /// that column); when that column would be too narrow, each explanation below its command.
    fn examples_layout(&self, width: usize) -> String {
        let widest = self.examples.iter().map(|(_, what)| what.len()).max();
        let longest = self.examples.iter().map(|(c, _)| c.len()).max();
        let column = match (widest, longest) {
            (Some(what), Some(command)) => (2 + command + 3).min(width.saturating_sub(what)),
            _ => 0,
        };
        let mut out = String::new();
        for (command, what) in &self.examples {
            let line = format!("  {command}");
            match () {
                _ if what.is_empty() => out += &format!("{line}\n"),
                _ if column < MIN_COLUMN => {
                    out += &format!("{line}\n{}\n", fill(what, UNDER, width));
                }
                _ if line.len() + 3 <= column => out += &format!("{line:column$}{what}\n"),
                _ => out += &format!("{line}\n{:column$}{what}\n", ""),
            }
        }
        out.trim_end().to_string()
    }
}

/// A paragraph's lines as one.
fn one_line(paragraph: &str) -> String {
    paragraph.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `text`'s words in lines of at most `width` columns (a longer word alone on its line), each
/// indented by `indent`.
fn fill(text: &str, indent: usize, width: usize) -> String {
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && indent + line.len() + 1 + word.len() > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    let pad = " ".repeat(indent);
    lines
        .iter()
        .map(|l| format!("{pad}{l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "\
Examples:
  prog list                     the recent sessions
  prog list --session a-long-session-id --before-seq 27
                                page back

Exit codes: 0 a result with items, 1 a valid request with none.";

    #[test]
    fn explanations_stand_in_a_column_where_they_fit() {
        let wide = Epilogue::parse(TEXT).layout(100);
        let column = 2 + "prog list --session a-long-session-id --before-seq 27".len() + 3;
        assert!(wide.contains("--before-seq 27   page back\n"), "{wide}");
        let first = format!("{:column$}the recent sessions\n", "  prog list");
        assert!(wide.contains(&first), "{wide}");
        // At 60 columns the column moves left so that the widest explanation fits.
        let medium = Epilogue::parse(TEXT).layout(60);
        assert!(medium.lines().all(|l| l.len() <= 60), "{medium}");
        let column = 60 - "the recent sessions".len();
        let first = format!("{:column$}the recent sessions\n", "  prog list");
        assert!(medium.contains(&first), "{medium}");
        let below = format!("--before-seq 27\n{:column$}page back\n", "");
        assert!(medium.contains(&below), "{medium}");
        assert!(medium
            .ends_with("\n\nExit codes: 0 a result with items, 1 a valid request with\nnone."));
    }

    #[test]
    fn a_narrow_width_puts_them_below() {
        let narrow = Epilogue::parse(TEXT).layout(30);
        assert!(
            narrow.contains("  prog list\n      the recent sessions\n"),
            "{narrow}"
        );
        assert!(
            narrow.contains("--before-seq 27\n      page back"),
            "{narrow}"
        );
    }
}
