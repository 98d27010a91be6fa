//! The modules of each crate are layers: no circle of imports between them.
//!
//! Within a crate the compiler accepts any web of `crate::` and `super::` references, so a
//! module that was meant to sit below another can quietly start importing from it, and the two
//! can then only be understood, tested and moved together. This check keeps the graph of
//! imports between the modules of every crate a graph without circles, so that each crate reads
//! bottom-up: every module depends only on modules listed before it (`cargo xtask layers`
//! prints that order), and a change that closes a circle fails the test
//! `every_crate_of_the_workspace_is_layered` with the files and lines that close it.
//!
//! What the graph is:
//! - a node is a module that is a file: the crate root (`src/lib.rs` or `src/main.rs`, each a
//!   tree of its own), `src/a.rs` or `src/a/mod.rs` is `a`, `src/a/b.rs` is `a::b`. Modules are
//!   found by following the `mod x;` declarations from the root, as the compiler does. Inline
//!   `mod x { .. }` blocks belong to the file they are written in;
//! - an edge `A -> B` exists where the code of `A` refers to `B`: a private `use` of a
//!   `crate::`, `super::` or `self::` path, or of a path starting with a child module of `A`
//!   (`child::f()`), or such a path written anywhere in the code. Comments, doc comments and literals do not
//!   count, nor does a test-only module (`#[cfg(test)] mod tests { .. }` or `mod tests;`);
//! - `pub use`, `pub(crate) use` and `pub(super) use` are re-exports, the table of contents of
//!   a module, and not edges; nor is `mod x;`. A path leads to the module that defines the
//!   item: its segments are followed while they name modules, then the item is looked up in
//!   the re-exports of the module reached (named, renamed or glob) down to the module that
//!   defines it. A path that comes back into the referring module itself, or reaches one of
//!   its descendants through its own re-exports, is no edge: the module names its own table;
//! - a strongly connected component of more than one module is a circle (Tarjan); for each
//!   edge inside it one `file:line` that makes it is reported.
//!
//! Only references within one crate are considered: paths into other crates are not edges.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

/// The root of the workspace: the parent of the directory of xtask's `Cargo.toml`.
pub fn workspace_root() -> PathBuf {
    let xtask = Path::new(env!("CARGO_MANIFEST_DIR"));
    xtask.parent().unwrap_or(xtask).to_path_buf()
}

/// The crates of the workspace whose modules are checked: every `crates/*` with a `src`, and
/// `xtask`, in order of name.
pub fn workspace_crates(root: &Path) -> Result<Vec<PathBuf>> {
    let crates = root.join("crates");
    let mut dirs = Vec::new();
    for entry in std::fs::read_dir(&crates).with_context(|| format!("{}", crates.display()))? {
        let path = entry?.path();
        if path.join("src").is_dir() {
            dirs.push(path);
        }
    }
    dirs.sort();
    dirs.push(root.join("xtask"));
    Ok(dirs)
}

/// The module graphs of one crate directory: one per crate root, `src/lib.rs` and
/// `src/main.rs`, whichever exist. Files are shown relative to `root`.
pub fn crate_graphs(root: &Path, crate_dir: &Path) -> Result<Vec<Graph>> {
    let src = crate_dir.join("src");
    let shown = crate_dir.strip_prefix(root).unwrap_or(crate_dir);
    let name = crate_dir.file_name().map_or_else(
        || shown.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let mut graphs = Vec::new();
    for root_file in ["lib.rs", "main.rs"] {
        if src.join(root_file).is_file() {
            let prefix = format!("{}/", shown.join("src").display());
            let label = format!("{name} ({prefix}{root_file})");
            graphs.push(Graph::from_dir(label, &src, prefix, root_file)?);
        }
    }
    if graphs.is_empty() {
        bail!(
            "{}: neither src/lib.rs nor src/main.rs",
            crate_dir.display()
        );
    }
    Ok(graphs)
}

/// The module graphs of every crate of the workspace at `root` (see [`workspace_crates`]).
pub fn workspace_graphs(root: &Path) -> Result<Vec<Graph>> {
    let mut graphs = Vec::new();
    for dir in workspace_crates(root)? {
        graphs.extend(crate_graphs(root, &dir)?);
    }
    Ok(graphs)
}

/// The text printed by `cargo xtask layers` for `graphs`, and the number of circles in them:
/// per graph, its modules in an order where each imports only modules before it (with what it
/// imports), or every circle with the `file:line` of each of its edges.
pub fn report(graphs: &[Graph]) -> (String, usize) {
    let mut out = String::new();
    let mut total = 0;
    for graph in graphs {
        let circles = graph.circles();
        total += circles.len();
        if circles.is_empty() {
            let order = graph.order();
            let _ = writeln!(
                out,
                "{}: {} module{}, no circle; each imports only modules above it",
                graph.label,
                order.len(),
                if order.len() == 1 { "" } else { "s" }
            );
            let width = order.iter().map(|(m, _)| m.len()).max().unwrap_or(0);
            for (module, imports) in order {
                if imports.is_empty() {
                    let _ = writeln!(out, "  {module}");
                } else {
                    let _ = writeln!(out, "  {module:width$}  <- {}", imports.join(", "));
                }
            }
        } else {
            let _ = writeln!(
                out,
                "{}: {} circle{}",
                graph.label,
                circles.len(),
                if circles.len() == 1 { "" } else { "s" }
            );
            for circle in &circles {
                let _ = write!(out, "{circle}");
            }
        }
        out.push('\n');
    }
    (out, total)
}

/// One circle: modules that import each other, directly or through one another.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Circle {
    /// Its modules, by name (`crate` for the root), in order of name.
    pub modules: Vec<String>,
    /// Every edge between two of its modules, with the first line that makes it.
    pub edges: Vec<Edge>,
}

impl std::fmt::Display for Circle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "  circle: {}", self.modules.join(", "))?;
        let width = self.edges.iter().map(|e| e.from.len() + e.to.len()).max();
        for edge in &self.edges {
            let pad = width.unwrap_or(0) - edge.from.len() - edge.to.len();
            writeln!(
                f,
                "    {} -> {}{:pad$}  {}:{}",
                edge.from, edge.to, "", edge.file, edge.line
            )?;
        }
        Ok(())
    }
}

/// An edge of the graph: module `from` refers to module `to`, first at `file:line`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edge {
    /// The referring module.
    pub from: String,
    /// The module referred to.
    pub to: String,
    /// The file of `from`, as shown (relative to the workspace root for a crate on disk).
    pub file: String,
    /// The first line of that file making the edge.
    pub line: u32,
}

/// The graph of the modules of one crate root and of the references between them.
#[derive(Debug)]
pub struct Graph {
    label: String,
    prefix: String,
    modules: Vec<Module>,
    edges: BTreeMap<(usize, usize), u32>,
}

#[derive(Debug)]
struct Module {
    /// The path below the root: empty for the root, `["a", "b"]` for `a::b`.
    path: Vec<String>,
    /// The file, relative to the source directory: `lib.rs`, `a/mod.rs`, `a/b.rs`.
    file: String,
    parent: Option<usize>,
    children: BTreeMap<String, usize>,
    scan: Scan,
}

impl Module {
    fn name(&self) -> String {
        if self.path.is_empty() {
            "crate".to_string()
        } else {
            self.path.join("::")
        }
    }
}

/// Where a path leads.
enum Target {
    /// To a module itself, so that further segments are looked up in it.
    Module(usize),
    /// To an item defined in (or at least not traced beyond) a module.
    Item(usize),
    /// Out of the crate.
    Outside,
}

/// How deep re-exports are followed before giving up (they cannot really be circular, but a
/// file being edited may say anything).
const MAX_HOPS: usize = 32;

impl Graph {
    /// The graph of the crate whose sources are in `src_dir`, from its root `root_file`
    /// (`lib.rs`, `main.rs`); `label` names it in reports, and `prefix` is put before a file
    /// relative to `src_dir` to show it.
    pub fn from_dir(
        label: impl Into<String>,
        src_dir: &Path,
        prefix: impl Into<String>,
        root_file: &str,
    ) -> Result<Graph> {
        Graph::from_sources(label, prefix, root_file, |file| {
            std::fs::read_to_string(src_dir.join(file)).ok()
        })
    }

    /// The graph of the crate rooted at `root_file`, whose files (paths relative to the source
    /// directory, with `/`) are read by `read`: `None` when there is no such file.
    pub fn from_sources(
        label: impl Into<String>,
        prefix: impl Into<String>,
        root_file: &str,
        mut read: impl FnMut(&str) -> Option<String>,
    ) -> Result<Graph> {
        let label = label.into();
        let prefix = prefix.into();
        let text = read(root_file).with_context(|| format!("{label}: no {prefix}{root_file}"))?;
        let mut modules = vec![Module {
            path: Vec::new(),
            file: root_file.to_string(),
            parent: None,
            children: BTreeMap::new(),
            scan: scan(&text),
        }];
        let mut next = 0;
        while next < modules.len() {
            let dir = children_dir(&modules[next].file, next == 0);
            for (name, line) in modules[next].scan.mods.clone() {
                let candidates = [format!("{dir}{name}.rs"), format!("{dir}{name}/mod.rs")];
                let Some((file, text)) = candidates
                    .iter()
                    .find_map(|file| read(file).map(|text| (file.clone(), text)))
                else {
                    bail!(
                        "{prefix}{}:{line}: `mod {name};` has neither {prefix}{} nor {prefix}{}",
                        modules[next].file,
                        candidates[0],
                        candidates[1]
                    );
                };
                let mut path = modules[next].path.clone();
                path.push(name.clone());
                let id = modules.len();
                modules.push(Module {
                    path,
                    file,
                    parent: Some(next),
                    children: BTreeMap::new(),
                    scan: scan(&text),
                });
                modules[next].children.insert(name, id);
            }
            next += 1;
        }
        let mut graph = Graph {
            label,
            prefix,
            modules,
            edges: BTreeMap::new(),
        };
        let mut edges = BTreeMap::new();
        for (from, module) in graph.modules.iter().enumerate() {
            for reference in &module.scan.refs {
                if let Some(to) = graph.target(from, &reference.segs, reference.inline) {
                    if to != from {
                        edges.entry((from, to)).or_insert(reference.line);
                    }
                }
            }
        }
        graph.edges = edges;
        Ok(graph)
    }

    /// The name of this graph in reports: the crate and its root file.
    pub fn label(&self) -> &str {
        &self.label
    }

    /// The modules, by name (`crate` for the root), in the order they were found.
    pub fn modules(&self) -> Vec<String> {
        self.modules.iter().map(Module::name).collect()
    }

    /// Every edge, with the first line that makes it.
    pub fn edges(&self) -> Vec<Edge> {
        self.edges
            .iter()
            .map(|(&(from, to), &line)| self.edge(from, to, line))
            .collect()
    }

    fn edge(&self, from: usize, to: usize, line: u32) -> Edge {
        Edge {
            from: self.modules[from].name(),
            to: self.modules[to].name(),
            file: format!("{}{}", self.prefix, self.modules[from].file),
            line,
        }
    }

    /// Every circle: each strongly connected component of more than one module.
    pub fn circles(&self) -> Vec<Circle> {
        let mut circles: Vec<Circle> = strongly_connected(&self.adjacency())
            .into_iter()
            .filter(|component| component.len() > 1)
            .map(|component| {
                let inside: BTreeSet<usize> = component.iter().copied().collect();
                let mut modules: Vec<String> =
                    component.iter().map(|&m| self.modules[m].name()).collect();
                modules.sort();
                let mut edges: Vec<Edge> = self
                    .edges
                    .iter()
                    .filter(|((from, to), _)| inside.contains(from) && inside.contains(to))
                    .map(|(&(from, to), &line)| self.edge(from, to, line))
                    .collect();
                edges.sort_by(|a, b| (&a.from, &a.to).cmp(&(&b.from, &b.to)));
                Circle { modules, edges }
            })
            .collect();
        circles.sort_by(|a, b| a.modules.cmp(&b.modules));
        circles
    }

    /// Every module with the modules it imports, in an order where each imports only modules
    /// before it: by layer (a module importing nothing is in layer 0, any other one layer
    /// above the highest it imports), then by name. Meaningful only without circles: a
    /// module in a circle is put after the rest of its circle.
    pub fn order(&self) -> Vec<(String, Vec<String>)> {
        let adjacency = self.adjacency();
        let mut layer: Vec<Option<usize>> = vec![None; self.modules.len()];
        for m in 0..self.modules.len() {
            layer_of(
                m,
                &adjacency,
                &mut layer,
                &mut vec![false; self.modules.len()],
            );
        }
        let mut order: Vec<(usize, String, Vec<String>)> = adjacency
            .iter()
            .enumerate()
            .map(|(m, imports)| {
                let mut names: Vec<String> =
                    imports.iter().map(|&i| self.modules[i].name()).collect();
                names.sort();
                (layer[m].unwrap_or(0), self.modules[m].name(), names)
            })
            .collect();
        order.sort();
        order
            .into_iter()
            .map(|(_, name, imports)| (name, imports))
            .collect()
    }

    fn adjacency(&self) -> Vec<Vec<usize>> {
        let mut adjacency = vec![Vec::new(); self.modules.len()];
        for &(from, to) in self.edges.keys() {
            adjacency[from].push(to);
        }
        adjacency
    }

    /// The module a reference from `from` leads to, if it stays in the crate.
    fn target(&self, from: usize, segs: &[String], inline: usize) -> Option<usize> {
        let (base, rest) = self.start(from, segs, inline)?;
        match self.resolve(base, rest, from, 0) {
            Target::Module(m) | Target::Item(m) => Some(m),
            Target::Outside => None,
        }
    }

    /// Where a path written in module `at` starts (`inline` inline modules deep), and the
    /// segments left to follow from there; `None` for a path out of the crate.
    fn start<'p>(
        &self,
        at: usize,
        segs: &'p [String],
        inline: usize,
    ) -> Option<(usize, &'p [String])> {
        let first = segs.first()?;
        match first.as_str() {
            "crate" => Some((0, &segs[1..])),
            "self" => Some((at, &segs[1..])),
            "super" => {
                let ups = segs.iter().take_while(|s| *s == "super").count();
                let mut module = at;
                // The first `super`s leave the inline modules the path is written in.
                for _ in inline.min(ups)..ups {
                    module = self.modules[module].parent?;
                }
                Some((module, &segs[ups..]))
            }
            child if inline == 0 && self.modules[at].children.contains_key(child) => {
                Some((at, segs))
            }
            _ => None,
        }
    }

    /// Follows `segs` from module `base` for a reference made by module `referrer`.
    fn resolve(&self, base: usize, segs: &[String], referrer: usize, hops: usize) -> Target {
        let mut module = base;
        for seg in segs {
            if let Some(&child) = self.modules[module].children.get(seg) {
                module = child;
                continue;
            }
            if module == referrer {
                // Into the referring module's own items or table of contents.
                return Target::Module(referrer);
            }
            match self.lookup(module, seg, referrer, hops + 1) {
                Target::Module(m) => module = m,
                other => return other,
            }
        }
        Target::Module(module)
    }

    /// Where the name `name`, not a child module, of module `module` leads.
    fn lookup(&self, module: usize, name: &str, referrer: usize, hops: usize) -> Target {
        if hops > MAX_HOPS {
            return Target::Item(module);
        }
        let scan = &self.modules[module].scan;
        let follow = |leaf: &Leaf| match self.start(module, &leaf.segs, 0) {
            Some((base, rest)) => self.resolve(base, rest, referrer, hops),
            None => Target::Outside,
        };
        if let Some(leaf) = scan
            .reexports
            .iter()
            .find(|l| l.name.as_deref() == Some(name))
        {
            return follow(leaf);
        }
        if scan.defs.contains(name) {
            return Target::Item(module);
        }
        for glob in scan.reexports.iter().filter(|l| l.name.is_none()) {
            if let Target::Module(from) = follow(glob) {
                if from == referrer {
                    return Target::Module(referrer);
                }
                if from != module && self.knows(from, name) {
                    return match self.modules[from].children.get(name) {
                        Some(&child) => Target::Module(child),
                        None => self.lookup(from, name, referrer, hops + 1),
                    };
                }
            }
        }
        // A descendant may also name what its ancestor imported privately.
        if let Some(leaf) = scan
            .imports
            .iter()
            .find(|l| l.name.as_deref() == Some(name))
        {
            return follow(leaf);
        }
        Target::Item(module)
    }

    /// Whether module `module` has something called `name` for a glob re-export to take.
    fn knows(&self, module: usize, name: &str) -> bool {
        let m = &self.modules[module];
        m.children.contains_key(name)
            || m.scan.defs.contains(name)
            || m.scan
                .reexports
                .iter()
                .any(|l| l.name.as_deref() == Some(name))
    }
}

/// The directory, relative to the source directory and ending in `/` unless empty, of the
/// children of the module in `file`.
fn children_dir(file: &str, root: bool) -> String {
    let (dir, base) = match file.rfind('/') {
        Some(slash) => (&file[..=slash], &file[slash + 1..]),
        None => ("", file),
    };
    if root || base == "mod.rs" {
        dir.to_string()
    } else {
        format!("{}/", file.strip_suffix(".rs").unwrap_or(file))
    }
}

fn layer_of(
    m: usize,
    adjacency: &[Vec<usize>],
    layer: &mut [Option<usize>],
    visiting: &mut [bool],
) -> usize {
    if let Some(l) = layer[m] {
        return l;
    }
    if visiting[m] {
        return 0;
    }
    visiting[m] = true;
    let mut l = 0;
    for &to in &adjacency[m] {
        l = l.max(layer_of(to, adjacency, layer, visiting) + 1);
    }
    visiting[m] = false;
    layer[m] = Some(l);
    l
}

/// Tarjan's strongly connected components of a graph given as adjacency lists.
fn strongly_connected(adjacency: &[Vec<usize>]) -> Vec<Vec<usize>> {
    struct Tarjan<'a> {
        adjacency: &'a [Vec<usize>],
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on_stack: Vec<bool>,
        stack: Vec<usize>,
        next: usize,
        components: Vec<Vec<usize>>,
    }
    fn visit(t: &mut Tarjan<'_>, v: usize) {
        t.index[v] = Some(t.next);
        t.low[v] = t.next;
        t.next += 1;
        t.stack.push(v);
        t.on_stack[v] = true;
        let adjacency = t.adjacency;
        for &w in &adjacency[v] {
            match t.index[w] {
                None => {
                    visit(t, w);
                    t.low[v] = t.low[v].min(t.low[w]);
                }
                Some(index) if t.on_stack[w] => t.low[v] = t.low[v].min(index),
                Some(_) => {}
            }
        }
        if t.index[v] == Some(t.low[v]) {
            let mut component = Vec::new();
            while let Some(w) = t.stack.pop() {
                t.on_stack[w] = false;
                component.push(w);
                if w == v {
                    break;
                }
            }
            t.components.push(component);
        }
    }
    let n = adjacency.len();
    let mut t = Tarjan {
        adjacency,
        index: vec![None; n],
        low: vec![0; n],
        on_stack: vec![false; n],
        stack: Vec::new(),
        next: 0,
        components: Vec::new(),
    };
    for v in 0..n {
        if t.index[v].is_none() {
            visit(&mut t, v);
        }
    }
    t.components
}

// ---------------------------------------------------------------------------------------------
// Reading a file: tokens without comments and literals, then its declarations and references.

#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    Ident(String),
    /// `::`
    Sep,
    Punct(char),
    /// A string, character or number literal, or a lifetime.
    Lit,
}

#[derive(Debug, Clone)]
struct Token {
    tok: Tok,
    line: u32,
}

fn is_ident_start(c: char) -> bool {
    c == '_' || c.is_alphabetic()
}

fn is_ident_char(c: char) -> bool {
    c == '_' || c.is_alphanumeric()
}

/// The tokens of Rust source, without comments (line, block, nested, doc) and with every
/// literal reduced to [`Tok::Lit`], each with its line.
fn lex(src: &str) -> Vec<Token> {
    let s: Vec<char> = src.chars().collect();
    let at = |i: usize| s.get(i).copied().unwrap_or('\0');
    let mut out = Vec::new();
    let mut line = 1u32;
    let mut i = 0;
    while i < s.len() {
        let c = s[i];
        let start_line = line;
        let mut push = |tok: Tok| {
            out.push(Token {
                tok,
                line: start_line,
            })
        };
        if c == '\n' {
            line += 1;
            i += 1;
        } else if c.is_whitespace() {
            i += 1;
        } else if c == '/' && at(i + 1) == '/' {
            while i < s.len() && s[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && at(i + 1) == '*' {
            let mut depth = 0;
            while i < s.len() {
                if s[i] == '/' && at(i + 1) == '*' {
                    depth += 1;
                    i += 2;
                } else if s[i] == '*' && at(i + 1) == '/' {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    line += u32::from(s[i] == '\n');
                    i += 1;
                }
            }
        } else if c == '"' {
            i = skip_string(&s, i + 1, &mut line);
            push(Tok::Lit);
        } else if c == '\'' {
            i = skip_quote(&s, i);
            push(Tok::Lit);
        } else if let Some(end) = prefixed_literal(&s, i, &mut line) {
            i = end;
            push(Tok::Lit);
        } else if is_ident_start(c) {
            let start = i;
            while i < s.len() && is_ident_char(s[i]) {
                i += 1;
            }
            let mut word: String = s[start..i].iter().collect();
            if word == "r" && at(i) == '#' && is_ident_start(at(i + 1)) {
                // A raw identifier, `r#type`: kept with its `r#`, so never a keyword.
                let raw = i + 1;
                i = raw;
                while i < s.len() && is_ident_char(s[i]) {
                    i += 1;
                }
                word = format!("r#{}", s[raw..i].iter().collect::<String>());
            }
            push(Tok::Ident(word));
        } else if c.is_ascii_digit() {
            while i < s.len() && is_ident_char(s[i]) {
                i += 1;
            }
            push(Tok::Lit);
        } else if c == ':' && at(i + 1) == ':' {
            push(Tok::Sep);
            i += 2;
        } else {
            push(Tok::Punct(c));
            i += 1;
        }
    }
    out
}

/// The end of a string whose contents start at `i`, with escapes.
fn skip_string(s: &[char], mut i: usize, line: &mut u32) -> usize {
    while i < s.len() {
        match s[i] {
            '\\' => {
                *line += u32::from(s.get(i + 1) == Some(&'\n'));
                i += 2;
            }
            '"' => return i + 1,
            c => {
                *line += u32::from(c == '\n');
                i += 1;
            }
        }
    }
    s.len()
}

/// The end of a character literal or of a lifetime (or label) starting with the `'` at `i`.
fn skip_quote(s: &[char], i: usize) -> usize {
    let at = |i: usize| s.get(i).copied().unwrap_or('\0');
    if at(i + 1) == '\\' {
        let mut j = i + 3;
        while j < s.len() && s[j] != '\'' && s[j] != '\n' {
            j += 1;
        }
        j + 1
    } else if at(i + 2) == '\'' {
        i + 3
    } else {
        let mut j = i + 1;
        while j < s.len() && is_ident_char(s[j]) {
            j += 1;
        }
        j
    }
}

/// The end of a literal with a prefix starting at `i` (`b"..."`, `c"..."`, `b'x'`, `r"..."`,
/// `r#"..."#`, `br#"..."#`, `cr"..."`), or `None` if none starts there.
fn prefixed_literal(s: &[char], i: usize, line: &mut u32) -> Option<usize> {
    let at = |i: usize| s.get(i).copied().unwrap_or('\0');
    let mut j = i;
    if matches!(at(j), 'b' | 'c') {
        if at(j) == 'b' && at(j + 1) == '\'' {
            return Some(skip_quote(s, j + 1));
        }
        j += 1;
    }
    if at(j) == 'r' {
        let mut k = j + 1;
        while at(k) == '#' {
            k += 1;
        }
        if at(k) != '"' {
            return None;
        }
        let hashes = k - j - 1;
        let mut p = k + 1;
        while p < s.len() {
            if s[p] == '"' && (1..=hashes).all(|h| at(p + h) == '#') {
                return Some(p + 1 + hashes);
            }
            *line += u32::from(s[p] == '\n');
            p += 1;
        }
        return Some(s.len());
    }
    if j > i && at(j) == '"' {
        return Some(skip_string(s, j + 1, line));
    }
    None
}

/// What a file declares and refers to.
#[derive(Debug, Default)]
struct Scan {
    /// `mod x;` at the top level of the file, not test-only, with its line.
    mods: Vec<(String, u32)>,
    /// Names of the items defined at the top level of the file.
    defs: BTreeSet<String>,
    /// `pub use` (and `pub(crate)`, `pub(super)`, `pub(in ..)`) leaves at the top level.
    reexports: Vec<Leaf>,
    /// Private `use` leaves at the top level, which descendants may name too.
    imports: Vec<Leaf>,
    /// Every reference that may make an edge: private `use` leaves and paths in code.
    refs: Vec<Ref>,
}

/// One leaf of a use tree: the full path, the name it brings in (`None` for a glob).
#[derive(Debug, Clone)]
struct Leaf {
    segs: Vec<String>,
    name: Option<String>,
    line: u32,
}

/// A path in the code of a file, written `inline` inline modules deep.
#[derive(Debug, Clone)]
struct Ref {
    segs: Vec<String>,
    line: u32,
    inline: usize,
}

const ITEM_KEYWORDS: [&str; 8] = [
    "fn", "struct", "enum", "trait", "type", "const", "static", "union",
];

fn scan(src: &str) -> Scan {
    let toks = lex(src);
    let tok = |i: usize| toks.get(i).map(|t| &t.tok);
    let ident = |i: usize| match tok(i) {
        Some(Tok::Ident(w)) => Some(w.as_str()),
        _ => None,
    };
    let mut scan = Scan::default();
    let mut depth = 0usize;
    // The brace depth inside each enclosing inline module.
    let mut inline: Vec<usize> = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        if let Some(end) = test_module_end(&toks, i) {
            i = end;
            continue;
        }
        let line = toks[i].line;
        match &toks[i].tok {
            Tok::Punct('{') => depth += 1,
            Tok::Punct('}') => {
                depth = depth.saturating_sub(1);
                while inline.last().is_some_and(|&d| d > depth) {
                    inline.pop();
                }
            }
            Tok::Ident(w) if w == "use" => {
                let reexport = is_reexport(&toks, i);
                let mut leaves = Vec::new();
                let mut j = i + 1;
                if tok(j) != Some(&Tok::Sep) {
                    parse_use_tree(&toks, &mut j, Vec::new(), &mut leaves);
                }
                while j < toks.len() && toks[j].tok != Tok::Punct(';') {
                    j += 1;
                }
                let top = depth == 0;
                for leaf in leaves {
                    if reexport {
                        if top {
                            scan.reexports.push(leaf);
                        }
                    } else {
                        scan.refs.push(Ref {
                            segs: leaf.segs.clone(),
                            line: leaf.line,
                            inline: inline.len(),
                        });
                        if top && leaf.name.is_some() {
                            scan.imports.push(leaf);
                        }
                    }
                }
                i = j + 1;
                continue;
            }
            Tok::Ident(w) if w == "mod" => {
                if let Some(name) = ident(i + 1) {
                    match tok(i + 2) {
                        Some(Tok::Punct(';')) if depth == 0 => {
                            scan.mods.push((name.to_string(), line));
                        }
                        Some(Tok::Punct('{')) => {
                            if depth == 0 {
                                scan.defs.insert(name.to_string());
                            }
                            depth += 1;
                            inline.push(depth);
                            i += 3;
                            continue;
                        }
                        _ => {}
                    }
                }
            }
            Tok::Ident(w) if depth == 0 && ITEM_KEYWORDS.contains(&w.as_str()) => {
                let mut j = i + 1;
                if w == "static" && ident(j) == Some("mut") {
                    j += 1;
                }
                if let Some(name) = ident(j) {
                    if !["fn", "unsafe", "extern", "async"].contains(&name) {
                        scan.defs.insert(name.to_string());
                    }
                }
            }
            Tok::Ident(w) if depth == 0 && w == "macro_rules" => {
                if let (Some(Tok::Punct('!')), Some(name)) = (tok(i + 1), ident(i + 2)) {
                    scan.defs.insert(name.to_string());
                }
            }
            Tok::Ident(first) if tok(i + 1) == Some(&Tok::Sep) && path_may_start(&toks, i) => {
                let mut segs = vec![first.clone()];
                let mut j = i;
                while tok(j + 1) == Some(&Tok::Sep) {
                    match ident(j + 2) {
                        Some(seg) => {
                            segs.push(seg.to_string());
                            j += 2;
                        }
                        None => break,
                    }
                }
                if matches!(first.as_str(), "crate" | "super" | "self") || inline.is_empty() {
                    scan.refs.push(Ref {
                        segs,
                        line,
                        inline: inline.len(),
                    });
                }
                i = j + 1;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    scan
}

/// Whether the identifier at `i`, followed by `::`, starts a path: it does not follow `::` or
/// `.` (a method's turbofish) or a `$` (a macro variable, but `$crate` is a path), and is not
/// the path of a visibility `pub(in path)`.
fn path_may_start(toks: &[Token], i: usize) -> bool {
    let Some(before) = i.checked_sub(1).map(|p| &toks[p].tok) else {
        return true;
    };
    match before {
        Tok::Sep | Tok::Punct('.') => false,
        Tok::Punct('$') => toks[i].tok == Tok::Ident("crate".to_string()),
        Tok::Ident(w) if w == "in" => !(i >= 2 && toks[i - 2].tok == Tok::Punct('(')),
        _ => true,
    }
}

/// Whether the `use` at `i` is a re-export: `pub use`, `pub(crate) use`, `pub(super) use`,
/// `pub(in path) use` (but not `pub(self) use`, which is private).
fn is_reexport(toks: &[Token], i: usize) -> bool {
    let Some(before) = i.checked_sub(1) else {
        return false;
    };
    match &toks[before].tok {
        Tok::Ident(w) => w == "pub",
        Tok::Punct(')') => {
            let Some(open) = (0..before).rev().find(|&p| toks[p].tok == Tok::Punct('(')) else {
                return false;
            };
            let inner: Vec<&Tok> = toks[open + 1..before].iter().map(|t| &t.tok).collect();
            open > 0
                && toks[open - 1].tok == Tok::Ident("pub".to_string())
                && inner != [&Tok::Ident("self".to_string())]
        }
        _ => false,
    }
}

/// Parses a use tree at `*i`, each path prefixed with `prefix`, into `leaves`, leaving `*i`
/// after it.
fn parse_use_tree(toks: &[Token], i: &mut usize, prefix: Vec<String>, leaves: &mut Vec<Leaf>) {
    let mut segs = prefix;
    loop {
        let Some(token) = toks.get(*i) else {
            return;
        };
        match &token.tok {
            Tok::Ident(seg) => {
                segs.push(seg.clone());
                *i += 1;
                if toks.get(*i).map(|t| &t.tok) == Some(&Tok::Sep) {
                    *i += 1;
                    continue;
                }
                let mut name = None;
                if toks.get(*i).map(|t| &t.tok) == Some(&Tok::Ident("as".to_string())) {
                    if let Some(Tok::Ident(alias)) = toks.get(*i + 1).map(|t| &t.tok) {
                        name = Some(alias.clone());
                    }
                    *i += 2;
                }
                if segs.last().map(String::as_str) == Some("self") {
                    segs.pop();
                }
                let name = name.or_else(|| segs.last().cloned());
                leaves.push(Leaf {
                    segs,
                    name,
                    line: token.line,
                });
                return;
            }
            Tok::Punct('*') => {
                *i += 1;
                leaves.push(Leaf {
                    segs,
                    name: None,
                    line: token.line,
                });
                return;
            }
            Tok::Punct('{') => {
                *i += 1;
                loop {
                    match toks.get(*i).map(|t| &t.tok) {
                        None => return,
                        Some(Tok::Punct('}')) => {
                            *i += 1;
                            return;
                        }
                        Some(Tok::Punct(',')) => *i += 1,
                        Some(_) => {
                            let before = *i;
                            parse_use_tree(toks, i, segs.clone(), leaves);
                            if *i == before {
                                return;
                            }
                        }
                    }
                }
            }
            _ => return,
        }
    }
}

/// If a test-only module starts at `i` (`#[cfg(test)]`, maybe more attributes and a
/// visibility, then `mod name { .. }` or `mod name;`), the index just after it.
fn test_module_end(toks: &[Token], i: usize) -> Option<usize> {
    if toks[i].tok != Tok::Punct('#') {
        return None;
    }
    let word = |s: &str| Tok::Ident(s.to_string());
    let cfg_test = [
        Tok::Punct('#'),
        Tok::Punct('['),
        word("cfg"),
        Tok::Punct('('),
        word("test"),
        Tok::Punct(')'),
        Tok::Punct(']'),
    ];
    let window = toks.get(i..i + cfg_test.len())?;
    if window.iter().map(|t| &t.tok).ne(cfg_test.iter()) {
        return None;
    }
    let mut j = i + cfg_test.len();
    while toks.get(j)?.tok == Tok::Punct('#') && toks.get(j + 1)?.tok == Tok::Punct('[') {
        j = closing(toks, j + 1, '[', ']')? + 1;
    }
    if toks.get(j)?.tok == word("pub") {
        j += 1;
        if toks.get(j)?.tok == Tok::Punct('(') {
            j = closing(toks, j, '(', ')')? + 1;
        }
    }
    if toks.get(j)?.tok != word("mod") || !matches!(toks.get(j + 1)?.tok, Tok::Ident(_)) {
        return None;
    }
    match toks.get(j + 2)?.tok {
        Tok::Punct(';') => Some(j + 3),
        Tok::Punct('{') => Some(closing(toks, j + 2, '{', '}')? + 1),
        _ => None,
    }
}

/// The index of the `close` matching the `open` at `i`.
fn closing(toks: &[Token], i: usize, open: char, close: char) -> Option<usize> {
    let mut depth = 0usize;
    for (j, token) in toks.iter().enumerate().skip(i) {
        if token.tok == Tok::Punct(open) {
            depth += 1;
        } else if token.tok == Tok::Punct(close) {
            depth -= 1;
            if depth == 0 {
                return Some(j);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The graph of an in-memory crate whose root is `lib.rs`.
    fn graph(files: &[(&str, &str)]) -> Graph {
        let files: BTreeMap<String, String> = files
            .iter()
            .map(|(path, text)| (path.to_string(), text.to_string()))
            .collect();
        Graph::from_sources("test", "src/", "lib.rs", |path| files.get(path).cloned()).unwrap()
    }

    /// The edges of `graph`, in order of name.
    fn edges(graph: &Graph) -> Vec<(String, String)> {
        let mut edges: Vec<_> = graph.edges().into_iter().map(|e| (e.from, e.to)).collect();
        edges.sort();
        edges
    }

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    }

    fn members(graph: &Graph) -> Vec<Vec<String>> {
        graph.circles().into_iter().map(|c| c.modules).collect()
    }

    fn evidence(circle: &Circle) -> Vec<String> {
        circle
            .edges
            .iter()
            .map(|e| format!("{} -> {} {}:{}", e.from, e.to, e.file, e.line))
            .collect()
    }

    /// Every crate of the workspace is layered. This is the check a change closing a circle
    /// fails, naming it.
    #[test]
    fn every_crate_of_the_workspace_is_layered() {
        let graphs = workspace_graphs(&workspace_root()).unwrap();
        let crates: Vec<&str> = graphs.iter().map(Graph::label).collect();
        assert!(
            crates
                .iter()
                .any(|c| c.starts_with("xtask (xtask/src/lib.rs)")),
            "{crates:?}"
        );
        let (text, circles) = report(&graphs);
        let named: String = text
            .split("\n\n")
            .filter(|block| block.contains("  circle: "))
            .collect::<Vec<_>>()
            .join("\n");
        assert_eq!(circles, 0, "modules importing each other:\n{named}");
    }

    #[test]
    fn a_crate_on_disk_is_read_from_each_root() {
        let root = workspace_root();
        let crates = workspace_crates(&root).unwrap();
        assert!(
            crates.contains(&root.join("crates/history-core")),
            "{crates:?}"
        );
        let graphs = crate_graphs(&root, &root.join("xtask")).unwrap();
        let xtask_lib = graphs
            .iter()
            .find(|g| g.label() == "xtask (xtask/src/lib.rs)")
            .unwrap();
        let modules = xtask_lib.modules();
        assert!(
            modules.contains(&"corpus::claude".to_string()),
            "{modules:?}"
        );
        assert!(
            !modules.contains(&"bench".to_string()),
            "bench belongs to main.rs: {modules:?}"
        );
        let xtask_main = graphs
            .iter()
            .find(|g| g.label() == "xtask (xtask/src/main.rs)")
            .unwrap();
        assert!(xtask_main.modules().contains(&"bench".to_string()));
        // `layers` itself is a module of xtask and layered like any other.
        assert!(modules.contains(&"layers".to_string()));
    }

    #[test]
    fn a_two_file_circle_is_named_with_its_lines() {
        let g = graph(&[
            ("lib.rs", "mod a;\nmod b;\n"),
            ("a.rs", "use crate::b::B;\n\npub struct A(B);\n"),
            ("b.rs", "pub struct B;\n\nfn from_a(_: &crate::a::A) {}\n"),
        ]);
        let circles = g.circles();
        assert_eq!(circles.len(), 1);
        assert_eq!(circles[0].modules, ["a", "b"]);
        assert_eq!(
            evidence(&circles[0]),
            ["a -> b src/a.rs:1", "b -> a src/b.rs:3"]
        );
        let (text, count) = report(&[g]);
        assert_eq!(count, 1);
        assert!(text.contains("circle: a, b"), "{text}");
        assert!(text.contains("src/b.rs:3"), "{text}");
    }

    #[test]
    fn a_circle_through_a_folder_facade_leads_to_the_defining_file() {
        // `page` imports `Session` through the facade `model/mod.rs`, which re-exports it
        // from `model/session.rs`; that file calls back into `page`.
        let g = graph(&[
            ("lib.rs", "mod model;\nmod page;\npub use model::Session;\n"),
            (
                "model/mod.rs",
                "mod session;\nmod time;\npub use session::{Session, Kind as SessionKind};\npub(crate) use time::*;\n",
            ),
            (
                "model/session.rs",
                "pub struct Session;\npub enum Kind {}\nfn shown() {\n    crate::page::render();\n}\n",
            ),
            ("model/time.rs", "pub struct Time;\n"),
            (
                "page.rs",
                "use crate::model::{SessionKind, Time};\nuse crate::Session;\npub fn render() {}\n",
            ),
        ]);
        assert_eq!(
            edges(&g),
            pairs(&[
                ("model::session", "page"),
                ("page", "model::session"),
                ("page", "model::time"),
            ])
        );
        let circles = g.circles();
        assert_eq!(members(&g), [["model::session", "page"]]);
        assert_eq!(
            evidence(&circles[0]),
            [
                "model::session -> page src/model/session.rs:4",
                "page -> model::session src/page.rs:1",
            ]
        );
    }

    #[test]
    fn super_paths_are_resolved_from_the_file_and_its_inline_modules() {
        let g = graph(&[
            ("lib.rs", "mod store;\nmod top;\n"),
            (
                "store.rs",
                "mod read;\nmod write;\nmod inner {\n    use super::read::Reader;\n}\n",
            ),
            (
                "store/read.rs",
                "pub struct Reader;\nfn f() -> super::write::Writer { todo!() }\n",
            ),
            (
                "store/write.rs",
                "use super::super::top::Top;\nuse super::read::Reader;\npub struct Writer;\n",
            ),
            ("top.rs", "pub struct Top;\n"),
        ]);
        assert_eq!(
            edges(&g),
            pairs(&[
                ("store", "store::read"),
                ("store::read", "store::write"),
                ("store::write", "store::read"),
                ("store::write", "top"),
            ])
        );
        assert_eq!(members(&g), [["store::read", "store::write"]]);
        assert_eq!(
            evidence(&g.circles()[0]),
            [
                "store::read -> store::write src/store/read.rs:2",
                "store::write -> store::read src/store/write.rs:2",
            ]
        );
    }

    #[test]
    fn use_trees_with_nested_braces_self_globs_and_renames_make_edges() {
        let g = graph(&[
            ("lib.rs", "mod a;\nmod b;\nmod c;\nmod d;\nmod user;\n"),
            ("a.rs", "pub struct A;\n"),
            ("b.rs", "pub struct B;\n"),
            ("c.rs", "mod deep;\n"),
            ("c/deep.rs", "pub struct Deep;\n"),
            ("d.rs", "pub struct D;\n"),
            (
                "user.rs",
                "use std::fmt;\nuse crate::{\n    a::{self, A as Alpha},\n    c::{deep::{Deep}},\n};\nuse crate::b::*;\nuse self::super::d;\n",
            ),
        ]);
        // `self::super::d` is not a path this check follows (nor is it ever written).
        assert_eq!(
            edges(&g),
            pairs(&[("user", "a"), ("user", "b"), ("user", "c::deep")])
        );
    }

    #[test]
    fn reexports_and_mod_declarations_are_not_edges() {
        // Were `pub use` an edge, `crate -> a` would close a circle with `a -> crate`.
        let g = graph(&[
            (
                "lib.rs",
                "mod a;\nmod b;\npub use a::A;\npub(crate) use a::Helper as H;\npub(super) use b::*;\npub(in crate) use b::B as BB;\npub struct Root;\n",
            ),
            ("a.rs", "pub struct A;\npub struct Helper;\nfn f(_: crate::Root) {}\n"),
            ("b.rs", "pub struct B;\nfn g(_: crate::H) {}\n"),
        ]);
        assert_eq!(edges(&g), pairs(&[("a", "crate"), ("b", "a")]));
        assert!(g.circles().is_empty());
        // A private `use` is an edge, though, and `pub(self)` is private.
        let g = graph(&[
            (
                "lib.rs",
                "mod a;\nuse a::A;\npub(self) use a::A as Same;\npub struct Root;\n",
            ),
            ("a.rs", "pub struct A;\nfn f(_: crate::Root) {}\n"),
        ]);
        assert_eq!(edges(&g), pairs(&[("a", "crate"), ("crate", "a")]));
        assert_eq!(members(&g), [["a", "crate"]]);
    }

    #[test]
    fn comments_literals_and_test_modules_are_not_edges() {
        let g = graph(&[
            ("lib.rs", "mod a;\nmod b;\n"),
            (
                "a.rs",
                r####"//! Uses [`crate::b::B`].
/// See crate::b::B.
// crate::b::B
/* crate::b::B /* nested crate::b */ crate::b */
pub struct A;
fn f() -> &'static str {
    let _ = ('"', '\'', b'"', "crate::b::B \" crate::b", r#"crate::b"#, br##"crate::b "# "##);
    "crate::b::B"
}
#[cfg(test)]
#[allow(dead_code)]
mod tests {
    use crate::b::B;
    fn g(_: crate::b::B) {}
}
#[cfg(test)]
mod fixtures;
"####,
            ),
            ("b.rs", "pub struct B;\nfn f(_: crate::a::A) {}\n"),
        ]);
        assert_eq!(edges(&g), pairs(&[("b", "a")]));
        assert_eq!(g.modules(), ["crate", "a", "b"]);
    }

    #[test]
    fn a_module_naming_itself_through_facades_is_no_edge() {
        let g = graph(&[
            ("lib.rs", "mod model;\npub use model::{Session, Time};\n"),
            (
                "model/mod.rs",
                "mod session;\nmod time;\npub use session::Session;\npub use time::Time;\nfn now() -> self::Time { todo!() }\nfn first() -> crate::Session { todo!() }\n",
            ),
            (
                "model/session.rs",
                "pub struct Session;\nfn again() -> crate::Session { todo!() }\nfn twice() -> super::Session { todo!() }\nfn same() -> self::Session { todo!() }\nfn at() -> crate::Time { todo!() }\n",
            ),
            ("model/time.rs", "pub struct Time;\n"),
        ]);
        // `model` names its own table; `session` comes back to itself through two facades;
        // only `crate::Time` from `session` is an edge, to the file defining `Time`.
        assert_eq!(edges(&g), pairs(&[("model::session", "model::time")]));
    }

    #[test]
    fn items_defined_in_a_module_and_paths_through_child_modules() {
        let g = graph(&[
            (
                "lib.rs",
                "mod a;\nmod b;\npub fn helper() {}\nmacro_rules! shout { () => {} }\n",
            ),
            (
                "a.rs",
                "mod inner;\nfn f() { inner::go(); crate::helper(); }\n",
            ),
            ("a/inner.rs", "pub fn go() { crate::b::Kind::One; }\n"),
            (
                "b.rs",
                "pub enum Kind { One }\nfn g() { crate::shout!(); Vec::<u8>::new(); }\n",
            ),
        ]);
        assert_eq!(
            edges(&g),
            pairs(&[
                ("a", "a::inner"),
                ("a", "crate"),
                ("a::inner", "b"),
                ("b", "crate")
            ])
        );
        assert!(g.circles().is_empty());
        let order = g.order();
        let names: Vec<&str> = order.iter().map(|(m, _)| m.as_str()).collect();
        assert_eq!(names, ["crate", "b", "a::inner", "a"]);
    }

    #[test]
    fn order_puts_each_module_after_what_it_imports() {
        let g = graph(&[
            ("lib.rs", "mod x;\nmod y;\nmod z;\n"),
            ("x.rs", "use crate::y::Y;\nuse crate::z::Z;\n"),
            ("y.rs", "pub struct Y;\nfn f(_: crate::z::Z) {}\n"),
            ("z.rs", "pub struct Z;\n"),
        ]);
        assert_eq!(
            g.order(),
            [
                ("crate".to_string(), vec![]),
                ("z".to_string(), vec![]),
                ("y".to_string(), vec!["z".to_string()]),
                ("x".to_string(), vec!["y".to_string(), "z".to_string()]),
            ]
        );
    }

    #[test]
    fn a_declared_module_without_a_file_is_an_error() {
        let err = Graph::from_sources("t", "src/", "lib.rs", |p| {
            (p == "lib.rs").then(|| "\nmod gone;\n".to_string())
        })
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "src/lib.rs:2: `mod gone;` has neither src/gone.rs nor src/gone/mod.rs"
        );
    }

    #[test]
    fn lines_survive_multiline_comments_and_strings() {
        let toks = lex("/* a\n b */ \"x\ny\" r#\"\n\"# x\n'a' 'b y");
        let lines: Vec<(Tok, u32)> = toks.into_iter().map(|t| (t.tok, t.line)).collect();
        assert_eq!(
            lines,
            [
                (Tok::Lit, 2),
                (Tok::Lit, 3),
                (Tok::Ident("x".to_string()), 4),
                (Tok::Lit, 5),
                (Tok::Lit, 5),
                (Tok::Ident("y".to_string()), 5),
            ]
        );
    }
}
