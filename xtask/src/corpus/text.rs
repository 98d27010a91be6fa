//! Filler text: pools of prose, code and command output generated once per corpus, from which
//! every message, thought and tool output takes a slice. Slicing keeps generation fast; the
//! pools are large and varied enough that transcripts do not look like copies of each other.
//!
//! No pool ever contains the word `needle` (in any case), so planted needles stay unique.

use super::json;
use super::rng::Rng;

const POOL_BYTES: usize = 1 << 20;

/// Which pool a text comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    /// Sentences, as people and models write them (markdown-ish).
    Prose,
    /// Source code lines.
    Code,
    /// Command output: test runs, compiler messages, listings, grep hits, git logs.
    Shell,
}

/// The filler pools.
pub struct Pools {
    prose: String,
    code: String,
    shell: String,
    b64: Vec<u8>,
}

impl Pools {
    pub fn new(seed: u64) -> Pools {
        let mut rng = Rng::new(seed ^ 0x7e57);
        let pools = Pools {
            prose: build(&mut rng, prose_chunk),
            code: build(&mut rng, code_chunk),
            shell: build(&mut rng, shell_chunk),
            b64: (0..1 << 16).map(|_| rng.pick(B64)).collect(),
        };
        for pool in [&pools.prose, &pools.code, &pools.shell] {
            assert!(!pool.to_ascii_lowercase().contains("needle"));
        }
        pools
    }

    fn pool(&self, style: Style) -> &str {
        match style {
            Style::Prose => &self.prose,
            Style::Code => &self.code,
            Style::Shell => &self.shell,
        }
    }

    /// About `len` bytes (at most a quarter of a pool) of whole sentences or lines.
    pub fn slice(&self, rng: &mut Rng, style: Style, len: usize) -> &str {
        let pool = self.pool(style);
        let bytes = pool.as_bytes();
        let len = len.min(pool.len() / 4).max(1);
        let sep: &[u8] = if style == Style::Prose { b". " } else { b"\n" };
        let after_sep = |from: usize| {
            let window = &bytes[from..(from + 2_000).min(bytes.len())];
            window
                .windows(sep.len())
                .position(|w| w == sep)
                .map(|i| from + i + sep.len())
        };
        let start = rng.below((pool.len() - len) as u64) as usize;
        let start = after_sep(start).unwrap_or(start);
        // End after the separator that follows the wanted length (keeping a sentence's `.`).
        let wanted = (start + len).min(pool.len() - 1);
        let end = after_sep(wanted).map_or(wanted, |e| e - 1);
        let (mut start, mut end) = (start.min(end), end);
        while !pool.is_char_boundary(start) {
            start += 1;
        }
        while !pool.is_char_boundary(end) {
            end -= 1;
        }
        pool[start..end].trim_matches([' ', '\n'])
    }

    /// Appends about `len` bytes of filler, JSON-escaped (now and then every non-ASCII character
    /// too).
    pub fn fill(&self, rng: &mut Rng, style: Style, len: usize, out: &mut Vec<u8>) {
        let mut left = len;
        let mut first = true;
        // Some writers escape every non-ASCII character (`\u00df`), as `ensure_ascii` does.
        let ascii = rng.chance(0.2);
        while left > 0 {
            let s = self.slice(rng, style, left);
            if s.is_empty() {
                break;
            }
            if !first {
                out.extend_from_slice(if style == Style::Prose { b" " } else { b"\\n" });
            }
            if ascii {
                json::esc_ascii(out, s);
            } else {
                json::esc(out, s.as_bytes());
            }
            left = left.saturating_sub(s.len() + 1);
            first = false;
        }
    }

    /// Appends `len` base64 characters (signatures, encrypted reasoning), which need no escapes.
    pub fn b64(&self, rng: &mut Rng, len: usize, out: &mut Vec<u8>) {
        let mut left = len;
        while left > 0 {
            let n = left.min(self.b64.len() / 2);
            let start = rng.below((self.b64.len() - n) as u64) as usize;
            out.extend_from_slice(&self.b64[start..start + n]);
            left -= n;
        }
    }

    /// A short title (a session summary, an AI title).
    pub fn title(&self, rng: &mut Rng) -> String {
        let verb = capitalize(rng.pick(VERBS));
        format!("{verb} {} {}", rng.pick(NOUNS), rng.pick(REASONS_SHORT))
    }
}

const B64: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

fn build(rng: &mut Rng, chunk: fn(&mut Rng, &mut String)) -> String {
    let mut s = String::with_capacity(POOL_BYTES + 4096);
    while s.len() < POOL_BYTES {
        chunk(rng, &mut s);
    }
    s
}

const VERBS: &[&str] = &[
    "check",
    "update",
    "refactor",
    "inspect",
    "rename",
    "remove",
    "add",
    "fix",
    "run",
    "read",
    "rewrite",
    "split",
    "merge",
    "move",
    "test",
    "profile",
    "document",
    "simplify",
    "revert",
    "trace",
    "bisect",
    "benchmark",
    "validate",
    "reorder",
    "inline",
    "extract",
    "cache",
    "guard",
];
const NOUNS: &[&str] = &[
    "parser",
    "tokenizer",
    "session loader",
    "cache layer",
    "config file",
    "test suite",
    "migration",
    "error handler",
    "CLI flag",
    "index writer",
    "selector",
    "budget logic",
    "snapshot",
    "fixture",
    "decoder",
    "build script",
    "lockfile",
    "schema",
    "retry loop",
    "timeout",
    "logger",
    "HTTP client",
    "router",
    "query planner",
    "worker pool",
    "release notes",
    "CI workflow",
    "Dockerfile",
    "rate limiter",
    "feature flag",
    "serializer",
    "event stream",
    "auth middleware",
    "connection pool",
    "paging code",
    "date handling",
    "lint config",
];
const REASONS: &[&str] = &[
    "so that the tests pass again",
    "because the old behaviour dropped the last line",
    "to keep the public API stable",
    "before we touch anything else",
    "since the fixture was written by an older version",
    "to avoid reading the whole file twice",
    "because it panics on an empty input",
    "so the error message names the file",
    "to make the output deterministic",
    "because the CI run on main is red",
    "to get rid of the flaky timeout",
    "so that Windows paths work too",
    "without changing the on-disk format",
];
const REASONS_SHORT: &[&str] = &[
    "for the release",
    "after the refactor",
    "in CI",
    "on Windows",
    "for large inputs",
    "with tests",
    "and docs",
    "regression",
    "cleanup",
    "follow-up",
];
const ID_VERBS: &[&str] = &[
    "read",
    "write",
    "parse",
    "load",
    "build",
    "resolve",
    "merge",
    "split",
    "fold",
    "emit",
    "decode",
    "encode",
    "flush",
    "scan",
    "index",
    "fetch",
    "store",
    "apply",
    "render",
    "select",
    "validate",
    "normalize",
    "collect",
    "spawn",
    "open",
    "close",
    "retry",
    "compact",
];
const ID_NOUNS: &[&str] = &[
    "session", "line", "event", "token", "entry", "header", "page", "budget", "root", "path",
    "record", "chunk", "query", "batch", "frame", "node", "leaf", "branch", "cursor", "offset",
    "span", "config", "request", "response", "worker", "handle", "buffer", "schema",
];
const TYPE_SUFFIX: &[&str] = &[
    "Reader", "Writer", "Index", "Config", "Error", "State", "Builder", "Entry", "Page", "Store",
    "Cursor", "Options", "Handle", "Report", "Kind",
];
const DIRS: &[&str] = &[
    "src",
    "crates/core/src",
    "lib",
    "tests",
    "internal/store",
    "pkg/api",
    "app/models",
    "scripts",
    "src/components",
    "server/routes",
    "crates/cli/src",
    "docs",
    "web/src/hooks",
];
const EXTS: &[&str] = &[
    ".rs", ".rs", ".rs", ".ts", ".tsx", ".py", ".go", ".toml", ".json", ".md",
];
const GLYPHS: &[&str] = &["—", "→", "…", "✓", "✗", "·"];

fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

pub fn snake(rng: &mut Rng) -> String {
    format!("{}_{}", rng.pick(ID_VERBS), rng.pick(ID_NOUNS))
}

fn camel(rng: &mut Rng) -> String {
    format!("{}{}", rng.pick(ID_VERBS), capitalize(rng.pick(ID_NOUNS)))
}

fn type_name(rng: &mut Rng) -> String {
    format!(
        "{}{}",
        capitalize(rng.pick(ID_NOUNS)),
        rng.pick(TYPE_SUFFIX)
    )
}

/// A repository-relative file path.
pub fn path(rng: &mut Rng) -> String {
    format!("{}/{}{}", rng.pick(DIRS), snake(rng), rng.pick(EXTS))
}

fn prose_chunk(rng: &mut Rng, s: &mut String) {
    let sentences = rng.range(2, 6);
    for _ in 0..sentences {
        let verb = rng.pick(VERBS);
        let noun = rng.pick(NOUNS);
        let line = match rng.below(15) {
            0 => format!("Let me {verb} the {noun} in `{}` first.", path(rng)),
            1 => format!("I'll {verb} `{}` {}.", snake(rng), rng.pick(REASONS)),
            2 => format!(
                "The {noun} fails when `{}` is empty {} so I need to {verb} it.",
                snake(rng),
                rng.pick(GLYPHS)
            ),
            3 => format!("Now I need to {verb} the {noun} {}.", rng.pick(REASONS)),
            4 => format!(
                "Looking at `{}`, the `{}` function calls `{}` on every {}.",
                path(rng),
                snake(rng),
                camel(rng),
                rng.pick(ID_NOUNS)
            ),
            5 => format!(
                "Tests pass: {} passed, {} ignored.",
                rng.range(3, 400),
                rng.below(6)
            ),
            6 => format!("Can you {verb} the {noun} {}?", rng.pick(REASONS)),
            7 => format!(
                "\n\n- `{}`: {verb} the {noun}\n- `{}`: keep `{}` as is\n\n",
                path(rng),
                path(rng),
                type_name(rng)
            ),
            8 => format!(
                "The `{}` type holds a `Vec<{}>` and a `{}`; that is where the {noun} lives.",
                type_name(rng),
                type_name(rng),
                type_name(rng)
            ),
            9 => format!(
                "Error at line {}: expected `{}`, found `{}` {} see `{}`.",
                rng.range(1, 900),
                type_name(rng),
                rng.pick(ID_NOUNS),
                rng.pick(GLYPHS),
                path(rng)
            ),
            10 => format!(
                "I think we should {verb} the {noun} and then {} the {}.",
                rng.pick(VERBS),
                rng.pick(NOUNS)
            ),
            // German, and text pasted from PDFs: characters whose case folding yields ASCII
            // letters (ß, ẞ, ſ, the ligatures, the Kelvin sign), which a search must see through.
            12 => format!(
                "Die Größe der Straßenkarte ist gemäß `{}` zu groß, also {verb} ich das Maß; GRÜẞE aus der Hauptstraße.",
                path(rng)
            ),
            13 => format!(
                "Aus dem PDF kopiert: die Konﬁguration ﬁndet `{}` nicht, der Zugriﬀ schlägt fehl, die Oberﬂäche bleibt leer und die Eﬃzienz sinkt.",
                snake(rng)
            ),
            14 => format!(
                "Der Sensor meldet {} K an {} Meßpunkten; die Anmerkung „daß dieſe Zeile ſteht“ bleibt.",
                rng.range(2, 400),
                rng.range(3, 90)
            ),
            _ => format!(
                "This is \"{}\" behaviour, not a bug in the {noun}.",
                rng.pick(&["expected", "documented", "intended", "legacy"])
            ),
        };
        s.push_str(&line);
        s.push(' ');
    }
    s.push_str(if rng.chance(0.3) { "\n\n" } else { " " });
}

fn code_chunk(rng: &mut Rng, s: &mut String) {
    let f = snake(rng);
    let t = type_name(rng);
    let u = type_name(rng);
    let var = rng.pick(ID_NOUNS);
    match rng.below(3) {
        0 => {
            s.push_str(&format!("use crate::{}::{t};\n\n", rng.pick(ID_NOUNS)));
            s.push_str(&format!(
                "/// {} the {}.\n",
                capitalize(rng.pick(ID_VERBS)),
                rng.pick(NOUNS)
            ));
            s.push_str(&format!(
                "pub fn {f}(&mut self, {var}: &{t}) -> Result<Option<{u}>, Error> {{\n"
            ));
            for _ in 0..rng.range(2, 9) {
                let line = match rng.below(6) {
                    0 => format!("    let {} = self.{}({var})?;\n", rng.pick(ID_NOUNS), snake(rng)),
                    1 => format!("    if {var}.is_empty() {{\n        return Ok(None);\n    }}\n"),
                    2 => format!("    // {} the {} {}\n", rng.pick(VERBS), rng.pick(NOUNS), rng.pick(REASONS)),
                    3 => format!("    eprintln!(\"{}: {{}}\\n\", {var});\n", snake(rng)),
                    4 => format!("    for {} in {var}.iter().filter(|x| x.{}()) {{\n        out.push({}::from(x));\n    }}\n", rng.pick(ID_NOUNS), snake(rng), u),
                    _ => format!("    self.{}.insert({var}.{}.clone(), {});\n", rng.pick(ID_NOUNS), rng.pick(ID_NOUNS), rng.range(0, 4096)),
                };
                s.push_str(&line);
            }
            s.push_str(&format!("    Ok(Some({u}::default()))\n}}\n\n"));
        }
        1 => {
            s.push_str(&format!("import {{ {t} }} from \"./{}\";\n\n", snake(rng)));
            s.push_str(&format!(
                "export async function {}({var}: {t}): Promise<{u}> {{\n",
                camel(rng)
            ));
            for _ in 0..rng.range(2, 8) {
                let line = match rng.below(4) {
                    0 => format!("  const {} = await {}({var});\n", camel(rng), camel(rng)),
                    1 => format!(
                        "  if (!{var}.{}) throw new Error(\"missing {}\");\n",
                        rng.pick(ID_NOUNS),
                        rng.pick(ID_NOUNS)
                    ),
                    2 => format!("  // {} the {}\n", rng.pick(VERBS), rng.pick(NOUNS)),
                    _ => format!(
                        "  {var}.{} = `${{{}}}/{}`;\n",
                        rng.pick(ID_NOUNS),
                        rng.pick(ID_NOUNS),
                        snake(rng)
                    ),
                };
                s.push_str(&line);
            }
            s.push_str(&format!("  return new {u}({var});\n}}\n\n"));
        }
        _ => {
            s.push_str(&format!("def {f}(self, {var}: \"{t}\") -> \"{u}\":\n"));
            s.push_str(&format!(
                "    \"\"\"{} the {}.\"\"\"\n",
                capitalize(rng.pick(VERBS)),
                rng.pick(NOUNS)
            ));
            for _ in 0..rng.range(2, 7) {
                let line = match rng.below(3) {
                    0 => format!("    {} = self._{}({var})\n", rng.pick(ID_NOUNS), snake(rng)),
                    1 => format!(
                        "    if not {var}:\n        raise ValueError(f\"bad {{{var}!r}}\")\n"
                    ),
                    _ => format!(
                        "    self.{}[{var}.{}] = {}\n",
                        rng.pick(ID_NOUNS),
                        rng.pick(ID_NOUNS),
                        rng.range(0, 99)
                    ),
                };
                s.push_str(&line);
            }
            s.push_str(&format!("    return {u}({var})\n\n"));
        }
    }
}

fn hex(rng: &mut Rng, n: usize) -> String {
    (0..n).map(|_| rng.pick(json::HEX) as char).collect()
}

fn shell_chunk(rng: &mut Rng, s: &mut String) {
    let stem = rng.pick(ID_NOUNS);
    match rng.below(8) {
        0 => {
            s.push_str(&format!(
                "   Compiling {stem} v0.{}.{} (/home/dev/src/{stem})\n",
                rng.below(20),
                rng.below(10)
            ));
            s.push_str(&format!(
                "    Finished `test` profile [unoptimized + debuginfo] target(s) in {}.{:02}s\n",
                rng.below(90),
                rng.below(100)
            ));
            s.push_str(&format!(
                "     Running unittests src/lib.rs (target/debug/deps/{stem}-{})\n\n",
                hex(rng, 16)
            ));
            let n = rng.range(3, 25);
            s.push_str(&format!("running {n} tests\n"));
            for _ in 0..n {
                let status = if rng.chance(0.95) { "ok" } else { "FAILED" };
                s.push_str(&format!(
                    "test {}::tests::{} ... {status}\n",
                    snake(rng),
                    snake(rng)
                ));
            }
            s.push_str(&format!(
                "\ntest result: ok. {n} passed; 0 failed; {} ignored; 0 measured; 0 filtered out; finished in 0.{:02}s\n\n",
                rng.below(3),
                rng.below(100)
            ));
        }
        1 => {
            for _ in 0..rng.range(2, 12) {
                let p = path(rng);
                s.push_str(&format!(
                    "{p}:{}:    let {} = {}(&{});\n",
                    rng.range(1, 800),
                    rng.pick(ID_NOUNS),
                    snake(rng),
                    rng.pick(ID_NOUNS)
                ));
            }
        }
        2 => {
            s.push_str(&format!("total {}\n", rng.range(8, 400)));
            for _ in 0..rng.range(3, 14) {
                let dir = rng.chance(0.3);
                s.push_str(&format!(
                    "{} {:>2} dev  staff  {:>6} Aug {:>2} {:02}:{:02} {}{}\n",
                    if dir { "drwxr-xr-x" } else { "-rw-r--r--" },
                    rng.range(1, 9),
                    rng.range(64, 90_000),
                    rng.range(1, 30),
                    rng.below(24),
                    rng.below(60),
                    snake(rng),
                    if dir { "" } else { rng.pick(EXTS) }
                ));
            }
        }
        3 => {
            for _ in 0..rng.range(2, 10) {
                s.push_str(&format!(
                    "{} {} the {} {}\n",
                    hex(rng, 7),
                    capitalize(rng.pick(VERBS)),
                    rng.pick(NOUNS),
                    rng.pick(REASONS_SHORT)
                ));
            }
        }
        4 => {
            let var = rng.pick(ID_NOUNS);
            s.push_str(&format!("warning: unused variable: `{var}`\n  --> {}:{}:{}\n   |\n{:>3} |     let {var} = {}();\n   |         ^^^^ help: if this is intentional, prefix it with an underscore: `_{var}`\n\n", path(rng), rng.range(1, 500), rng.range(5, 40), rng.range(1, 500), snake(rng)));
            if rng.chance(0.4) {
                s.push_str(&format!("error[E0{}]: mismatched types\n  --> {}:{}:{}\n   = note: expected `{}`, found `{}`\n\n", rng.range(300, 599), path(rng), rng.range(1, 500), rng.range(1, 60), type_name(rng), type_name(rng)));
            }
        }
        5 => {
            for _ in 0..rng.range(2, 8) {
                s.push_str(&format!(
                    " {} {} ({} ms)\n",
                    if rng.chance(0.9) { "✓" } else { "✗" },
                    snake(rng),
                    rng.range(1, 900)
                ));
            }
            s.push_str(&format!(
                "\n Test Files  {} passed ({})\n      Tests  {} passed\n",
                rng.range(1, 40),
                rng.range(1, 40),
                rng.range(5, 400)
            ));
        }
        6 => {
            s.push_str(&format!(
                "{} files changed, {} insertions(+), {} deletions(-)\n",
                rng.range(1, 30),
                rng.range(1, 900),
                rng.range(0, 500)
            ));
            for _ in 0..rng.range(1, 6) {
                s.push_str(&format!(
                    " {} | {:>3} {}\n",
                    path(rng),
                    rng.range(1, 200),
                    "+".repeat(rng.range(1, 30) as usize)
                ));
            }
        }
        _ => {
            s.push_str(&format!(
                "{{\"level\":\"info\",\"ts\":\"2026-08-{:02}T{:02}:{:02}:{:02}Z\",\"msg\":\"{} {}\",\"{}\":{}}}\n",
                rng.range(1, 28),
                rng.below(24),
                rng.below(60),
                rng.below(60),
                rng.pick(ID_VERBS),
                rng.pick(ID_NOUNS),
                rng.pick(ID_NOUNS),
                rng.range(0, 100_000)
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slices_are_valid_and_sized() {
        let pools = Pools::new(3);
        let mut rng = Rng::new(1);
        for style in [Style::Prose, Style::Code, Style::Shell] {
            let mut out = Vec::new();
            pools.fill(&mut rng, style, 5000, &mut out);
            assert!(out.len() > 3000, "{style:?}: {}", out.len());
            let s: String =
                serde_json::from_slice(&[b"\"".as_slice(), &out, b"\""].concat()).unwrap();
            assert!(!s.is_empty());
        }
    }
}
