//! Every `§` citation in the code resolves to a heading in `docs/`.
//!
//! The code cites the rules it mirrors as `` `store.md` §4.7 `` (also `store.md §4.7`,
//! `signals spec §4`, ranges such as `§1.3–§1.6` or `§4.1–4.2`). A bare `§N.N` cites the
//! chapter the same file named last before it (or, when it names one only later, the first
//! chapter it names). Each cited number must be the number of a heading of
//! `docs/<chapter>.md` (`## 4.7 …`, `### 1.5.1 …`), so that a fresh clone can follow it.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The source trees whose comments cite the docs.
const SCANNED: &[&str] = &["lib", "bins", "tests", "cli"];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if path.is_dir() {
            if name != "target" && !name.starts_with('.') {
                sources(&path, out);
            }
        } else if [".rs", ".mjs", ".js", ".py", ".sh"]
            .iter()
            .any(|ext| name.ends_with(ext))
        {
            out.push(path);
        }
    }
}

/// The section numbers of the headings of one chapter (`## 4.7 Title` -> `4.7`).
fn headings(chapter: &Path) -> BTreeSet<String> {
    let text = fs::read_to_string(chapter).unwrap_or_default();
    text.lines()
        .filter_map(|line| {
            let rest = line.strip_prefix('#')?.trim_start_matches('#').trim_start();
            let number: String = rest
                .chars()
                .take_while(|c| c.is_ascii_digit() || *c == '.')
                .collect();
            let number = number.trim_end_matches('.');
            (!number.is_empty()).then(|| number.to_string())
        })
        .collect()
}

/// A chapter named at byte `at` of a line: `store.md`, `` `store.md` ``, `signals spec`.
fn chapters_named(line: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let bytes = line.as_bytes();
    for (at, _) in line.match_indices(".md") {
        let start = line[..at]
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
            .map_or(0, |i| i + 1);
        let end = at + 3;
        let boundary = bytes
            .get(end)
            .is_none_or(|b| !(b.is_ascii_alphanumeric() || *b == b'_'));
        // Chapters are lower-case names; `AGENTS.md`, `MEMORY.md`, `README.md` are not.
        let chapter = bytes.get(start).is_some_and(u8::is_ascii_lowercase);
        if start < at && boundary && chapter {
            out.push((start, line[start..at].to_string()));
        }
    }
    for (at, _) in line.match_indices(" spec §") {
        let start = line[..at]
            .rfind(|c: char| !c.is_ascii_alphanumeric())
            .map_or(0, |i| i + 1);
        if start < at {
            out.push((start, line[start..at].to_string()));
        }
    }
    out.sort();
    out
}

/// The section numbers a citation starting right after `§` names: `4.7`, `1.3–§1.6` (both
/// ends), `4.1–4.2`, `1–3`.
fn cited_numbers(after: &str) -> Vec<String> {
    let number = |s: &str| -> String {
        let n: String = s
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == '.')
            .collect();
        n.trim_end_matches('.').to_string()
    };
    let first = number(after);
    let mut out = vec![first.clone()];
    let rest = &after[first.len()..];
    for dash in ["–", "-"] {
        if let Some(tail) = rest.strip_prefix(dash) {
            let tail = tail.strip_prefix('§').unwrap_or(tail);
            let last = number(tail);
            if !last.is_empty() {
                out.push(last);
            }
        }
    }
    out.retain(|n| !n.is_empty());
    out
}

/// Every citation of the trees in `SCANNED` that does not resolve, as `file:line: …`.
fn unresolved(root: &Path) -> (usize, Vec<String>) {
    let mut files = Vec::new();
    for dir in SCANNED {
        sources(&root.join(dir), &mut files);
    }
    files.sort();
    let mut chapters: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut count = 0;
    let mut failures = Vec::new();
    for file in files {
        if file.ends_with("tests/doc_references.rs") {
            continue;
        }
        let Ok(text) = fs::read_to_string(&file) else {
            continue;
        };
        let shown = file
            .strip_prefix(root)
            .unwrap_or(&file)
            .display()
            .to_string();
        let first_named = text
            .lines()
            .flat_map(chapters_named)
            .map(|(_, name)| name)
            .next();
        let mut current: Option<String> = None;
        for (index, line) in text.lines().enumerate() {
            let named = chapters_named(line);
            for (at, _) in line.match_indices('§') {
                let chapter = named
                    .iter()
                    .rev()
                    .find(|(start, _)| *start < at)
                    .map(|(_, name)| name.clone())
                    .or_else(|| current.clone())
                    .or_else(|| first_named.clone());
                let numbers = cited_numbers(&line[at + '§'.len_utf8()..]);
                if numbers.is_empty() {
                    continue;
                }
                count += 1;
                let Some(chapter) = chapter else {
                    failures.push(format!(
                        "{shown}:{}: §{} names no chapter (write `store.md` §… or similar)",
                        index + 1,
                        numbers[0]
                    ));
                    continue;
                };
                let known = chapters
                    .entry(chapter.clone())
                    .or_insert_with(|| headings(&root.join("docs").join(format!("{chapter}.md"))));
                for number in numbers {
                    if !known.contains(&number) {
                        failures.push(format!(
                            "{shown}:{}: {chapter}.md §{number} is not a heading of docs/{chapter}.md",
                            index + 1
                        ));
                    }
                }
            }
            if let Some((_, name)) = named.last() {
                current = Some(name.clone());
            }
        }
    }
    (count, failures)
}

#[test]
fn every_section_citation_resolves_to_a_docs_heading() {
    let (count, failures) = unresolved(&root());
    assert!(
        count > 50,
        "only {count} citations found: is the scanner broken?"
    );
    assert!(
        failures.is_empty(),
        "{} unresolved (of {count} § citations):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn the_scanner_reads_the_citation_forms_the_code_uses() {
    assert_eq!(cited_numbers("4.7 apply"), ["4.7"]);
    assert_eq!(cited_numbers("1.3–§1.6): the"), ["1.3", "1.6"]);
    assert_eq!(cited_numbers("4.1–4.2 for"), ["4.1", "4.2"]);
    assert_eq!(cited_numbers("1–3)."), ["1", "3"]);
    assert_eq!(cited_numbers("1.2 steps 5–7"), ["1.2"]);
    assert_eq!(cited_numbers("4.10)."), ["4.10"]);
    let named = chapters_named("(`store.md` §5.4, signals spec §4, see README.md, x.md.)");
    let names: Vec<&str> = named.iter().map(|(_, n)| n.as_str()).collect();
    assert_eq!(names, ["store", "signals", "x"]);
}

#[test]
fn headings_give_their_section_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let chapter = dir.path().join("x.md");
    fs::write(
        &chapter,
        "# X\n## 4. Maintenance\n### 4.7 Apply\n#### 1.5.1 Notes\n## Sources\n",
    )
    .unwrap();
    let numbers: Vec<String> = headings(&chapter).into_iter().collect();
    assert_eq!(numbers, ["1.5.1", "4", "4.7"]);
}
