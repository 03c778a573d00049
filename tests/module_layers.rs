//! The library's modules import one another without cycles and without climbing a layer
//! (docs/architecture.md, "No cycles, no climbs").
//!
//! Every file of `lib/src` is one module (`a/b.rs` is `a::b`, `a/mod.rs` is `a`). The test
//! reads each file's paths — `use crate::…`, `use super::…`, `use self::…`, a child module
//! named by its bare name, and the same paths written inline in code (`crate::x::f()`) —
//! resolves each to the deepest file module it names, and fails on any cycle in that graph,
//! naming the modules of the cycle and the line of each import that closes it. It also reads
//! the layer table of `docs/architecture.md` (bottom-up, one row per layer, the top-level
//! modules of a row named in its first cell) and fails on any import from a module of one
//! layer into a module of a higher one, naming the edge and its line, and on a top-level
//! module the table does not place. Code under `#[cfg(test)]` is left out: a unit test may
//! use what it likes.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fs;
use std::path::{Path, PathBuf};

/// A module's path below the crate root (`[]` is `lib.rs`).
type ModPath = Vec<String>;

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    Punct(char),
    /// `::`
    PathSep,
}

/// The tokens of a Rust file that matter for paths, each with its line; comments, string
/// and character literals, lifetimes and numbers are dropped.
fn lex(src: &str) -> Vec<(Tok, usize)> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let mut line = 1;
    let count_lines = |s: &[u8]| s.iter().filter(|&&c| c == b'\n').count();
    while i < b.len() {
        let c = b[i];
        if c == b'\n' {
            line += 1;
            i += 1;
        } else if c.is_ascii_whitespace() {
            i += 1;
        } else if b[i..].starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if b[i..].starts_with(b"/*") {
            let start = i;
            let mut depth = 0;
            while i < b.len() {
                if b[i..].starts_with(b"/*") {
                    depth += 1;
                    i += 2;
                } else if b[i..].starts_with(b"*/") {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            line += count_lines(&b[start..i]);
        } else if c == b'"' || ((c == b'b' || c == b'c') && b.get(i + 1) == Some(&b'"')) {
            let start = i;
            i += if c == b'"' { 1 } else { 2 };
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            line += count_lines(&b[start..i.min(b.len())]);
        } else if (c == b'r' || ((c == b'b' || c == b'c') && b.get(i + 1) == Some(&b'r'))) && {
            let j = i + if c == b'r' { 1 } else { 2 };
            let mut k = j;
            while b.get(k) == Some(&b'#') {
                k += 1;
            }
            b.get(k) == Some(&b'"')
        } {
            let start = i;
            i += if c == b'r' { 1 } else { 2 };
            let mut hashes = 0;
            while b[i] == b'#' {
                hashes += 1;
                i += 1;
            }
            i += 1;
            let mut close = vec![b'"'];
            close.extend(std::iter::repeat_n(b'#', hashes));
            while i < b.len() && !b[i..].starts_with(&close) {
                i += 1;
            }
            i += close.len();
            line += count_lines(&b[start..i.min(b.len())]);
        } else if c == b'\'' {
            // A character literal ('x', '\n', '\u{..}') or a lifetime ('a).
            if b.get(i + 1) == Some(&b'\\') {
                i += 2;
                while i < b.len() && b[i] != b'\'' {
                    i += 1;
                }
                i += 1;
            } else {
                let ch_len = src[i + 1..].chars().next().map_or(1, char::len_utf8);
                if b.get(i + 1 + ch_len) == Some(&b'\'') {
                    i += 2 + ch_len;
                } else {
                    i += 1;
                    while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                        i += 1;
                    }
                }
            }
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push((Tok::Ident(src[start..i].to_string()), line));
        } else if c.is_ascii_digit() {
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'.') {
                if b[i] == b'.' && !b.get(i + 1).is_some_and(u8::is_ascii_digit) {
                    break;
                }
                i += 1;
            }
        } else if b[i..].starts_with(b"::") {
            out.push((Tok::PathSep, line));
            i += 2;
        } else {
            let ch = src[i..].chars().next().unwrap();
            out.push((Tok::Punct(ch), line));
            i += ch.len_utf8();
        }
    }
    out
}

/// One import: the path as written (already absolute from the crate root) and its line.
struct Import {
    path: Vec<String>,
    line: usize,
}

/// Reads one file's imports. `module` is the file's module; `children` the file modules
/// directly below it (a bare `child::x` names one of them).
struct Reader<'a> {
    toks: &'a [(Tok, usize)],
    pos: usize,
    module: &'a ModPath,
    children: &'a BTreeSet<String>,
    /// Inline (non-test) `mod x { … }` blocks we are in: their names and brace depth.
    inline: Vec<(String, usize)>,
    depth: usize,
    out: Vec<Import>,
}

impl Reader<'_> {
    fn peek(&self, k: usize) -> Option<&Tok> {
        self.toks.get(self.pos + k).map(|(t, _)| t)
    }

    fn ident(&self, k: usize) -> Option<&str> {
        match self.peek(k) {
            Some(Tok::Ident(s)) => Some(s),
            _ => None,
        }
    }

    fn line(&self) -> usize {
        self.toks.get(self.pos).map_or(0, |(_, l)| *l)
    }

    /// The current module's path including inline modules.
    fn here(&self) -> Vec<String> {
        let mut p = self.module.clone();
        p.extend(self.inline.iter().map(|(n, _)| n.clone()));
        p
    }

    /// The absolute path a path's first segment stands for, or `None` for an outside path.
    fn anchor(&self, first: &str) -> Option<Vec<String>> {
        match first {
            "crate" => Some(Vec::new()),
            "self" => Some(self.here()),
            "super" => {
                let mut p = self.here();
                p.pop();
                Some(p)
            }
            name if self.inline.is_empty() && self.children.contains(name) => {
                let mut p = self.module.clone();
                p.push(name.to_string());
                Some(p)
            }
            _ => None,
        }
    }

    /// Skips one item (after a `#[cfg(test)]`): up to a `;` at its own level or the end
    /// of its first top-level `{ … }` block.
    fn skip_item(&mut self) {
        let mut level = 0usize;
        while let Some(t) = self.peek(0).cloned() {
            self.pos += 1;
            match t {
                Tok::Punct('(' | '[' | '{') => level += 1,
                Tok::Punct(')' | ']') => level = level.saturating_sub(1),
                Tok::Punct('}') => {
                    level = level.saturating_sub(1);
                    if level == 0 {
                        return;
                    }
                }
                Tok::Punct(';') if level == 0 => return,
                _ => {}
            }
        }
    }

    /// An attribute `#[…]` at the cursor (on `#`); returns whether it is `cfg(test)`.
    fn attribute(&mut self) -> bool {
        self.pos += 1; // '#'
        if self.peek(0) == Some(&Tok::Punct('!')) {
            self.pos += 1;
        }
        let mut level = 0usize;
        let mut words = Vec::new();
        while let Some(t) = self.peek(0).cloned() {
            self.pos += 1;
            match t {
                Tok::Punct('[') => level += 1,
                Tok::Punct(']') => {
                    level -= 1;
                    if level == 0 {
                        break;
                    }
                }
                Tok::Ident(s) => words.push(s),
                _ => {}
            }
        }
        words.first().map(String::as_str) == Some("cfg")
            && words.iter().any(|w| w == "test")
            && !words.iter().any(|w| w == "not")
    }

    /// A plain path at the cursor (`a::b::c`, after its first segment's anchor).
    fn plain_path(&mut self, mut base: Vec<String>) {
        let line = self.line();
        self.pos += 1;
        while self.peek(0) == Some(&Tok::PathSep) {
            match self.ident(1) {
                Some(s) => {
                    base.push(s.to_string());
                    self.pos += 2;
                }
                None => break,
            }
        }
        self.out.push(Import { path: base, line });
    }

    /// A use tree at the cursor, below `prefix` (`None`: not yet anchored).
    fn use_tree(&mut self, prefix: Option<Vec<String>>) {
        let mut path = prefix;
        let line = self.line();
        loop {
            match self.peek(0).cloned() {
                Some(Tok::Ident(s)) => {
                    self.pos += 1;
                    path = match path {
                        None => match self.anchor(&s) {
                            Some(p) => Some(p),
                            None => {
                                // An outside path (std, a dependency): skip the rest.
                                self.skip_tree();
                                return;
                            }
                        },
                        Some(mut p) => {
                            if s != "self" {
                                p.push(s);
                            }
                            Some(p)
                        }
                    };
                    if self.peek(0) == Some(&Tok::PathSep) {
                        self.pos += 1;
                        continue;
                    }
                    if self.ident(0) == Some("as") {
                        self.pos += 2;
                    }
                    if let Some(p) = path {
                        self.out.push(Import { path: p, line });
                    }
                    return;
                }
                Some(Tok::Punct('*')) => {
                    self.pos += 1;
                    if let Some(p) = path {
                        self.out.push(Import { path: p, line });
                    }
                    return;
                }
                Some(Tok::Punct('{')) => {
                    self.pos += 1;
                    loop {
                        match self.peek(0) {
                            Some(Tok::Punct('}')) | None => {
                                self.pos += 1;
                                return;
                            }
                            Some(Tok::Punct(',')) => self.pos += 1,
                            _ => self.use_tree(path.clone()),
                        }
                    }
                }
                _ => return,
            }
        }
    }

    /// Skips the rest of a use tree that is not ours.
    fn skip_tree(&mut self) {
        let mut level = 0usize;
        while let Some(t) = self.peek(0) {
            match t {
                Tok::Punct('{') => level += 1,
                Tok::Punct('}') if level == 0 => return,
                Tok::Punct('}') => level -= 1,
                Tok::Punct(',' | ';') if level == 0 => return,
                _ => {}
            }
            self.pos += 1;
        }
    }

    fn run(&mut self) {
        let mut after_sep = false;
        while let Some(t) = self.peek(0).cloned() {
            match &t {
                Tok::Punct('#') => {
                    if self.attribute() {
                        if self.ident(0).is_none() && self.peek(0) != Some(&Tok::Punct('#')) {
                            continue;
                        }
                        // Further attributes of the same item.
                        while self.peek(0) == Some(&Tok::Punct('#')) {
                            self.attribute();
                        }
                        self.skip_item();
                    }
                    after_sep = false;
                    continue;
                }
                Tok::Punct('{') => self.depth += 1,
                Tok::Punct('}') => {
                    self.depth = self.depth.saturating_sub(1);
                    if self.inline.last().is_some_and(|(_, d)| *d == self.depth) {
                        self.inline.pop();
                    }
                }
                Tok::Ident(s) if s == "mod" => {
                    if let (Some(name), Some(Tok::Punct('{'))) =
                        (self.ident(1).map(str::to_string), self.peek(2))
                    {
                        self.inline.push((name, self.depth));
                        self.depth += 1;
                        self.pos += 3;
                        after_sep = false;
                        continue;
                    }
                }
                Tok::Ident(s) if s == "use" && !after_sep => {
                    self.pos += 1;
                    if self.peek(0) == Some(&Tok::PathSep) {
                        self.pos += 1;
                    }
                    self.use_tree(None);
                    after_sep = false;
                    continue;
                }
                Tok::Ident(s) if !after_sep && self.peek(1) == Some(&Tok::PathSep) => {
                    if let Some(base) = self.anchor(s) {
                        self.plain_path(base);
                        after_sep = false;
                        continue;
                    }
                }
                _ => {}
            }
            after_sep = t == Tok::PathSep || t == Tok::Punct('$');
            self.pos += 1;
        }
    }
}

fn lib_src() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("lib/src")
}

/// Every `.rs` file below `dir` with its module path.
fn modules(root: &Path, dir: &Path, out: &mut BTreeMap<ModPath, PathBuf>) {
    let mut entries: Vec<_> = fs::read_dir(dir).unwrap().flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let path = entry.path();
        if path.is_dir() {
            modules(root, &path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let rel = path.strip_prefix(root).unwrap().with_extension("");
            let mut segs: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            if matches!(segs.last().map(String::as_str), Some("mod" | "lib")) {
                segs.pop();
            }
            out.insert(segs, path);
        }
    }
}

/// The deepest file module that `path` names (an item's path ends in its module's).
fn resolve<'m>(path: &[String], known: &'m BTreeMap<ModPath, PathBuf>) -> &'m ModPath {
    (0..=path.len())
        .rev()
        .find_map(|n| known.get_key_value(&path[..n]).map(|(k, _)| k))
        .expect("the crate root is a module")
}

fn name(m: &ModPath) -> String {
    if m.is_empty() {
        "crate".to_string()
    } else {
        m.join("::")
    }
}

/// The file-level import graph of `src` (a crate's source directory): for each module the
/// modules it imports, each with the first line that does.
fn graph(src: &Path) -> BTreeMap<ModPath, BTreeMap<ModPath, (PathBuf, usize)>> {
    let mut known = BTreeMap::new();
    modules(src, src, &mut known);
    let mut edges: BTreeMap<ModPath, BTreeMap<ModPath, (PathBuf, usize)>> = BTreeMap::new();
    for (module, file) in &known {
        let text = fs::read_to_string(file).unwrap();
        let toks = lex(&text);
        let children: BTreeSet<String> = known
            .keys()
            .filter(|k| k.len() == module.len() + 1 && k.starts_with(module))
            .map(|k| k.last().unwrap().clone())
            .collect();
        let mut reader = Reader {
            toks: &toks,
            pos: 0,
            module,
            children: &children,
            inline: Vec::new(),
            depth: 0,
            out: Vec::new(),
        };
        reader.run();
        let from = edges.entry(module.clone()).or_default();
        for import in reader.out {
            let to = resolve(&import.path, &known);
            if to != module {
                let rel = file.strip_prefix(src).unwrap().to_path_buf();
                from.entry(to.clone()).or_insert((rel, import.line));
            }
        }
    }
    edges
}

/// The strongly connected components with more than one module (Tarjan).
fn cycles(edges: &BTreeMap<ModPath, BTreeMap<ModPath, (PathBuf, usize)>>) -> Vec<Vec<ModPath>> {
    struct State<'g> {
        edges: &'g BTreeMap<ModPath, BTreeMap<ModPath, (PathBuf, usize)>>,
        index: BTreeMap<&'g ModPath, usize>,
        low: BTreeMap<&'g ModPath, usize>,
        stack: Vec<&'g ModPath>,
        on_stack: BTreeSet<&'g ModPath>,
        found: Vec<Vec<ModPath>>,
    }
    fn visit<'g>(s: &mut State<'g>, v: &'g ModPath) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on_stack.insert(v);
        let edges = s.edges;
        for w in edges.get(v).into_iter().flat_map(|m| m.keys()) {
            if !s.index.contains_key(w) {
                visit(s, w);
                let lw = s.low[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(lw);
            } else if s.on_stack.contains(w) {
                let iw = s.index[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(iw);
            }
        }
        if s.low[v] == s.index[v] {
            let mut comp = Vec::new();
            loop {
                let w = s.stack.pop().unwrap();
                s.on_stack.remove(w);
                comp.push(w.clone());
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                comp.sort();
                s.found.push(comp);
            }
        }
    }
    let mut s = State {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for v in edges.keys() {
        if !s.index.contains_key(v) {
            visit(&mut s, v);
        }
    }
    s.found.sort();
    s.found
}

/// A shortest cycle through `start` inside `comp`, as `a → b → a` with each import's line.
fn describe(
    start: &ModPath,
    comp: &[ModPath],
    edges: &BTreeMap<ModPath, BTreeMap<ModPath, (PathBuf, usize)>>,
) -> String {
    let inside: BTreeSet<&ModPath> = comp.iter().collect();
    let mut prev: BTreeMap<&ModPath, &ModPath> = BTreeMap::new();
    let mut queue = VecDeque::from([start]);
    let mut last = None;
    'bfs: while let Some(v) = queue.pop_front() {
        for w in edges.get(v).into_iter().flat_map(|m| m.keys()) {
            if w == start {
                last = Some(v);
                break 'bfs;
            }
            if inside.contains(w) && !prev.contains_key(w) {
                prev.insert(w, v);
                queue.push_back(w);
            }
        }
    }
    let mut chain = vec![start];
    let mut v = last.expect("a component's module lies on a cycle");
    while v != start {
        chain.push(v);
        v = prev[v];
    }
    chain[1..].reverse();
    chain.push(start);
    let mut text = name(start);
    for pair in chain.windows(2) {
        let (file, line) = &edges[pair[0]][pair[1]];
        text.push_str(&format!(" → {} ({}:{line})", name(pair[1]), file.display()));
    }
    text
}

#[test]
fn the_library_has_no_import_cycles() {
    let src = lib_src();
    let edges = graph(&src);
    let found = cycles(&edges);
    let text: Vec<String> = found
        .iter()
        .map(|comp| {
            let members: Vec<String> = comp.iter().map(name).collect();
            let inside: BTreeSet<&ModPath> = comp.iter().collect();
            let mut imports = String::new();
            for from in comp {
                for (to, (file, line)) in &edges[from] {
                    if inside.contains(to) {
                        imports.push_str(&format!(
                            "\n      {} → {} ({}:{line})",
                            name(from),
                            name(to),
                            file.display()
                        ));
                    }
                }
            }
            format!(
                "  cycle among {{{}}}: {}\n    its imports:{imports}",
                members.join(", "),
                describe(&comp[0], comp, &edges)
            )
        })
        .collect();
    assert!(
        found.is_empty(),
        "lib/src has {} import cycle(s) between modules (a module must not import, directly \
         or through others, a module that imports it; move the shared concept into a module \
         of its own below both):\n{}",
        found.len(),
        text.join("\n")
    );
}

/// The layer of each top-level module, from the table of `docs/architecture.md`: the rows
/// after the `| Layer (…) |` header, bottom-up, each first cell naming its modules in
/// backticks (`` `fs/` ``, `` `exit` ``).
fn layers(doc: &str) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    let rows = doc
        .lines()
        .skip_while(|l| !l.starts_with("| Layer"))
        .skip(2)
        .take_while(|l| l.starts_with('|'));
    for (rank, row) in rows.enumerate() {
        let cell = row.trim_start_matches('|').split('|').next().unwrap_or("");
        for (k, part) in cell.split('`').enumerate() {
            if k % 2 == 1 {
                out.insert(part.trim_end_matches('/').to_string(), rank);
            }
        }
    }
    out
}

/// Imports that climb a layer, and still exist, which another change removes: each as the
/// importing module and the imported one. A climb listed here is not reported.
const KNOWN_CLIMBS: &[(&str, &str)] = &[];

/// Every import from a module into a module of a higher layer (`from → to (file:line)`),
/// and every top-level module `layer` does not place.
fn climbs(
    edges: &BTreeMap<ModPath, BTreeMap<ModPath, (PathBuf, usize)>>,
    layer: &BTreeMap<String, usize>,
) -> Vec<String> {
    let mut found = Vec::new();
    let mut unplaced = BTreeSet::new();
    for (from, tos) in edges {
        let Some(top) = from.first() else { continue };
        let Some(&low) = layer.get(top) else {
            unplaced.insert(top.clone());
            continue;
        };
        for (to, (file, line)) in tos {
            let Some(up) = to.first() else { continue };
            let Some(&high) = layer.get(up) else {
                unplaced.insert(up.clone());
                continue;
            };
            if high > low && !KNOWN_CLIMBS.contains(&(name(from).as_str(), name(to).as_str())) {
                found.push(format!(
                    "{} → {} ({}:{line}): layer `{top}` imports the higher layer `{up}`",
                    name(from),
                    name(to),
                    file.display()
                ));
            }
        }
    }
    found.extend(
        unplaced
            .into_iter()
            .map(|m| format!("`{m}` is in no layer of the table in docs/architecture.md")),
    );
    found
}

#[test]
fn no_module_imports_a_higher_layer() {
    let doc_path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/architecture.md");
    let doc = fs::read_to_string(&doc_path).unwrap();
    let layer = layers(&doc);
    assert!(
        layer.len() > 5,
        "no layer table found in {}: {layer:?}",
        doc_path.display()
    );
    let found = climbs(&graph(&lib_src()), &layer);
    assert!(
        found.is_empty(),
        "lib/src has {} import(s) against the layers of docs/architecture.md (a module uses \
         only modules of its own layer or a lower one; move the piece it needs down, or the \
         importing module up):\n  {}",
        found.len(),
        found.join("\n  ")
    );
}

/// The layer check reads the table's rows bottom-up and names each climbing import.
#[test]
fn the_layer_check_names_each_climb() {
    let doc = "# A\n\n| Layer (`src/`) | Modules |\n| --- | --- |\n| `a`, `b/` | x |\n\
               | `c/` | y |\n\nAfter.\n| `d` | not a layer row |\n";
    let layer = layers(doc);
    assert_eq!(
        layer.into_iter().collect::<Vec<_>>(),
        [("a".into(), 0), ("b".into(), 0), ("c".into(), 1)]
    );
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    fs::create_dir_all(src.join("b")).unwrap();
    fs::write(
        src.join("lib.rs"),
        "pub mod a;\npub mod b;\npub mod c;\npub mod d;\n",
    )
    .unwrap();
    fs::write(src.join("a.rs"), "use crate::b::y;\n").unwrap();
    fs::write(src.join("b/mod.rs"), "pub mod y;\n").unwrap();
    fs::write(src.join("b/y.rs"), "\nuse crate::c::Z;\nuse crate::a;\n").unwrap();
    fs::write(src.join("c.rs"), "use crate::a;\npub struct Z;\n").unwrap();
    fs::write(src.join("d.rs"), "use crate::a;\n").unwrap();
    let found = climbs(&graph(src), &layers(doc));
    assert_eq!(
        found,
        [
            "b::y → c (b/y.rs:2): layer `b` imports the higher layer `c`",
            "`d` is in no layer of the table in docs/architecture.md",
        ]
    );
}

/// The reader sees the forms of import the library uses, and leaves test code out.
#[test]
fn the_reader_sees_every_form_of_import() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    fs::create_dir_all(src.join("a")).unwrap();
    fs::write(src.join("lib.rs"), "pub mod a;\npub mod b;\npub mod c;\n").unwrap();
    fs::write(
        src.join("a/mod.rs"),
        "//! uses crate::c::X in a comment only\npub mod x;\npub mod y;\n\
         pub fn f() { let s = \"crate::c::Q\"; x::g(); }\n",
    )
    .unwrap();
    fs::write(
        src.join("a/x.rs"),
        "use super::{y::{self, Z}, W};\npub fn g() -> crate::b::T { todo!() }\n\
         #[cfg(test)]\nmod tests { use crate::c::*; }\n",
    )
    .unwrap();
    fs::write(src.join("a/y.rs"), "pub struct Z;\n").unwrap();
    fs::write(src.join("b.rs"), "pub type T = ();\nuse std::fmt;\n").unwrap();
    fs::write(
        src.join("c.rs"),
        "pub fn h<'a>(c: char) -> &'a str { let _ = 'x'; let _ = r#\"crate::b\"#; \
         crate::a::x::g(); \"\" }\n",
    )
    .unwrap();
    let edges = graph(src);
    let seen = |from: &str, to: &str| {
        let parse = |s: &str| -> ModPath {
            if s == "crate" {
                Vec::new()
            } else {
                s.split("::").map(str::to_string).collect()
            }
        };
        edges
            .get(&parse(from))
            .is_some_and(|m| m.contains_key(&parse(to)))
    };
    assert!(seen("a", "a::x"), "{edges:?}");
    assert!(
        !seen("a", "c"),
        "comments and strings are not imports: {edges:?}"
    );
    assert!(seen("a::x", "a::y"));
    assert!(seen("a::x", "a"));
    assert!(seen("a::x", "b"));
    assert!(!seen("a::x", "c"), "cfg(test) code is left out: {edges:?}");
    assert!(!seen("b", "crate"));
    assert!(seen("c", "a::x"));
    assert!(!seen("c", "b"));
    // a → a::x → a is a cycle, c → a::x is not part of one.
    let found = cycles(&edges);
    assert_eq!(found.len(), 1, "{found:?}");
    let members: Vec<String> = found[0].iter().map(name).collect();
    assert_eq!(members, ["a", "a::x"]);
    let text = describe(&found[0][0], &found[0], &edges);
    assert_eq!(text, "a → a::x (a/mod.rs:4) → a (a/x.rs:1)");
}
