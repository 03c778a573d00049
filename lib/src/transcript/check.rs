//! Validation of a transcript with one finding per problem (`claw-transcript check`):
//! torn tails, invalid lines, header problems, duplicate ids, dangling parents, invalid leaf
//! controls, unknown types, orphan tool calls and results, and what the repair pass would
//! rewrite. Streams the file: memory grows with the number of rows, not their size.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use super::entry::{is_canonical_type, js_trim, parse_date_ms};
use super::reader::{scan_lines, ReadError};

/// How serious a finding is; any `Error` makes `check` exit 65.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    /// Worth knowing; the gateway handles it.
    Info,
    /// The gateway copes, but data is lost, hidden or ambiguous.
    Warning,
    /// Malformed input.
    Error,
}

impl Severity {
    /// `error`, `warning` or `info`.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

/// One problem found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// The file.
    pub path: PathBuf,
    /// The 1-based line, when the finding is about one.
    pub line: Option<usize>,
    /// Severity.
    pub severity: Severity,
    /// A stable kebab-case code (`torn-tail`, `dangling-parent`, …).
    pub code: &'static str,
    /// What is wrong, in one line.
    pub message: String,
}

impl Finding {
    /// `file:line: severity: code: message`.
    pub fn to_line(&self) -> String {
        match self.line {
            Some(l) => format!(
                "{}:{}: {}: {}: {}",
                self.path.display(),
                l,
                self.severity.as_str(),
                self.code,
                self.message
            ),
            None => format!(
                "{}: {}: {}: {}",
                self.path.display(),
                self.severity.as_str(),
                self.code,
                self.message
            ),
        }
    }

    /// As a JSON object (camelCase fields).
    pub fn to_json(&self) -> Value {
        json!({
            "path": self.path.to_string_lossy(),
            "line": self.line,
            "severity": self.severity.as_str(),
            "code": self.code,
            "message": self.message,
        })
    }
}

#[derive(Debug, Clone)]
struct RowFacts {
    line: usize,
    ty: Option<String>,
    id: Option<String>,
    parent: Option<Option<String>>,
    leaf: Option<(Option<String>, Option<Option<String>>)>,
}

/// Findings for one transcript.
#[derive(Debug, Clone, Default)]
pub struct CheckReport {
    /// Every finding, in line order.
    pub findings: Vec<Finding>,
    /// Lines read.
    pub lines: usize,
    /// Rows parsed.
    pub rows: usize,
    /// Bytes read.
    pub bytes: u64,
}

impl CheckReport {
    /// Whether any finding is an error.
    pub fn has_errors(&self) -> bool {
        self.findings.iter().any(|f| f.severity == Severity::Error)
    }
}

fn tool_result_id(m: &Value) -> Option<String> {
    [
        "toolCallId",
        "toolUseId",
        "tool_call_id",
        "tool_use_id",
        "callId",
        "call_id",
    ]
    .iter()
    .filter_map(|k| m.get(*k).and_then(Value::as_str))
    .map(js_trim)
    .find(|s| !s.is_empty())
    .map(String::from)
}

/// Checks one transcript file.
pub fn check_file(path: &Path) -> Result<CheckReport, ReadError> {
    let file = super::reader::open(path)?;
    let mut report = CheckReport::default();
    let add =
        |findings: &mut Vec<Finding>, line: Option<usize>, severity, code, message: String| {
            findings.push(Finding {
                path: path.to_path_buf(),
                line,
                severity,
                code,
                message,
            })
        };
    let mut findings: Vec<Finding> = Vec::new();
    let mut facts: Vec<RowFacts> = Vec::new();
    let mut first_row = true;
    let mut header_version: Option<f64> = None;
    let mut blank = 0usize;
    let mut crlf = 0usize;
    let mut tool_calls: Vec<(usize, String)> = Vec::new();
    let mut tool_results: Vec<(usize, String)> = Vec::new();
    let mut labels: Vec<(usize, String)> = Vec::new();
    let mut first_kept: Vec<(usize, String)> = Vec::new();
    let mut unknown_types: HashMap<String, (usize, usize)> = HashMap::new();
    let mut last_terminated = true;
    let mut last_line = 0usize;
    let bytes = scan_lines(file, |l| {
        last_line = l.number;
        last_terminated = l.terminated;
        let raw = l.bytes;
        if raw.last() == Some(&b'\r') {
            crlf += 1;
        }
        let text = String::from_utf8_lossy(raw);
        if js_trim(&text).is_empty() {
            blank += 1;
            return true;
        }
        let parsed: Result<Value, _> = serde_json::from_str(&text);
        let v = match parsed {
            Ok(v) => v,
            Err(e) => {
                if l.terminated {
                    add(&mut findings, Some(l.number), Severity::Error, "invalid-json", format!("not valid JSON ({e}); the gateway skips this line and its repair pass drops it"));
                } else {
                    add(&mut findings, Some(l.number), Severity::Error, "torn-tail", format!("the last line is cut off ({} bytes, {e}); an append will start a new line after it, repair --trim-torn-tail removes it", raw.len()));
                }
                return true;
            }
        };
        report.rows += 1;
        let Some(o) = v.as_object() else {
            add(&mut findings, Some(l.number), Severity::Error, "not-an-object", "the line is JSON but not an object".into());
            first_row = false;
            return true;
        };
        let ty = o.get("type").and_then(Value::as_str).map(String::from);
        let id = o.get("id").and_then(Value::as_str).filter(|s| !s.is_empty()).map(String::from);
        if first_row {
            first_row = false;
            if ty.as_deref() == Some("session") && o.get("id").is_some_and(Value::is_string) {
                let ver = match o.get("version") {
                    None | Some(Value::Null) => Some(1.0),
                    Some(v) => v.as_f64(),
                };
                header_version = ver;
                match ver {
                    Some(v) if v < 3.0 => add(&mut findings, Some(l.number), Severity::Warning, "legacy-version", format!("schema version {v} (the gateway migrates it to 3 and rewrites the file on its next load; see `migrate`)")),
                    Some(v) if v > 3.0 => add(&mut findings, Some(l.number), Severity::Warning, "future-version", format!("schema version {v} is newer than 3")),
                    None => add(&mut findings, Some(l.number), Severity::Error, "header-invalid", "the header's version is not a number".into()),
                    _ => {}
                }
                if o.get("id").and_then(Value::as_str).is_some_and(str::is_empty) {
                    add(&mut findings, Some(l.number), Severity::Error, "header-invalid", "the header's id is empty".into());
                }
                if !o.get("timestamp").and_then(Value::as_str).is_some_and(|t| parse_date_ms(t).is_some()) {
                    add(&mut findings, Some(l.number), Severity::Warning, "header-invalid", "the header has no valid timestamp".into());
                }
                if !o.get("cwd").and_then(Value::as_str).is_some_and(|c| !c.is_empty()) {
                    add(&mut findings, Some(l.number), Severity::Warning, "header-invalid", "the header has no cwd".into());
                }
                return true;
            }
            add(&mut findings, Some(l.number), Severity::Error, "header-missing", "the first row is not a session header; the gateway would copy the file to .corrupt-<ts>-<hex>.jsonl and rewrite it (see `repair`)".into());
        }
        if ty.as_deref() == Some("session") {
            add(&mut findings, Some(l.number), Severity::Warning, "extra-header", "a second session header (kept as an opaque row)".into());
            return true;
        }
        let parent = match o.get("parentId") {
            None => None,
            Some(Value::Null) => Some(None),
            Some(Value::String(s)) => Some(Some(s.clone())),
            Some(_) => {
                add(&mut findings, Some(l.number), Severity::Error, "invalid-parent", "parentId is neither a string nor null".into());
                Some(None)
            }
        };
        let mut leaf = None;
        match ty.as_deref() {
            None => add(&mut findings, Some(l.number), Severity::Warning, "missing-type", "the row has no string type (kept as an opaque row)".into()),
            Some("leaf") => {
                let target = match o.get("targetId") {
                    Some(Value::Null) => Some(None),
                    Some(Value::String(s)) if !s.is_empty() => Some(Some(s.clone())),
                    _ => None,
                };
                let append = match o.get("appendParentId") {
                    None => Some(None),
                    Some(Value::Null) => Some(Some(None)),
                    Some(Value::String(s)) if !s.is_empty() => Some(Some(Some(s.clone()))),
                    _ => None,
                };
                let mode_ok = matches!(o.get("appendMode"), None) || o.get("appendMode").and_then(Value::as_str) == Some("side");
                match (id.as_ref(), parent.is_some(), target, append, mode_ok) {
                    (Some(_), true, Some(t), Some(a), true) => leaf = Some((t, a)),
                    _ => add(&mut findings, Some(l.number), Severity::Error, "invalid-leaf-control", "a leaf control row with a missing or malformed id, parentId, targetId, appendParentId or appendMode (ignored)".into()),
                }
            }
            Some(t) if is_canonical_type(t) => {
                if id.is_none() && header_version.is_some_and(|v| v >= 2.0) {
                    add(&mut findings, Some(l.number), Severity::Warning, "missing-id", format!("a {t} row without an id is ignored by the gateway's tree"));
                }
                if parent.is_none() && id.is_some() && header_version.is_some_and(|v| v >= 2.0) {
                    add(&mut findings, Some(l.number), Severity::Info, "parentless", "no parentId: chained after the row before it (an older appender wrote it)".into());
                }
                if !o.get("timestamp").and_then(Value::as_str).is_some_and(|s| parse_date_ms(s).is_some()) {
                    let sev = if matches!(t, "compaction" | "custom_message" | "branch_summary") { Severity::Error } else { Severity::Warning };
                    add(&mut findings, Some(l.number), sev, "bad-timestamp", format!("the {t} row's timestamp is missing or not a date{}", if sev == Severity::Error { " (rebuilding the context fails on it)" } else { "" }));
                }
                match t {
                    "message" => match o.get("message") {
                        Some(m) if m.is_object() => {
                            let role = m.get("role").and_then(Value::as_str);
                            match role {
                                Some(r) if !js_trim(r).is_empty() => {}
                                _ => add(&mut findings, Some(l.number), Severity::Error, "invalid-role", "message row without a usable role (the gateway loads it into the context; its repair pass drops it)".into()),
                            }
                            if role == Some("assistant") {
                                for (cid, _) in super::repair::tool_calls(m) {
                                    tool_calls.push((l.number, cid));
                                }
                                if m.get("content").and_then(Value::as_array).is_some_and(Vec::is_empty) && m.get("stopReason").and_then(Value::as_str) == Some("error") {
                                    add(&mut findings, Some(l.number), Severity::Warning, "empty-error-assistant", "an errored assistant turn without content (repair rewrites it)".into());
                                }
                            }
                            if role == Some("toolResult") {
                                match tool_result_id(m) {
                                    Some(r) => tool_results.push((l.number, r)),
                                    None => add(&mut findings, Some(l.number), Severity::Warning, "orphan-tool-result", "a tool result without a tool call id".into()),
                                }
                            }
                            if role == Some("user") {
                                let blank_user = match m.get("content") {
                                    Some(Value::String(s)) => js_trim(s).is_empty(),
                                    Some(Value::Array(b)) => b.iter().any(|x| x.get("type").and_then(Value::as_str) == Some("text") && x.get("text").and_then(Value::as_str).is_some_and(|t| js_trim(t).is_empty())),
                                    _ => false,
                                };
                                if blank_user {
                                    add(&mut findings, Some(l.number), Severity::Warning, "blank-user", "blank user text (repair rewrites it to \"(continue)\")".into());
                                }
                            }
                        }
                        _ => add(&mut findings, Some(l.number), Severity::Error, "invalid-role", "message row whose message is not an object".into()),
                    },
                    "label" => {
                        if let Some(tgt) = o.get("targetId").and_then(Value::as_str) {
                            labels.push((l.number, tgt.to_string()));
                        }
                    }
                    "compaction" => {
                        match o.get("firstKeptEntryId").and_then(Value::as_str) {
                            Some(fk) => first_kept.push((l.number, fk.to_string())),
                            None if header_version.is_some_and(|v| v >= 2.0) => add(&mut findings, Some(l.number), Severity::Warning, "compaction-invalid", "a compaction without firstKeptEntryId".into()),
                            None => {}
                        }
                    }
                    _ => {}
                }
            }
            Some(t) => {
                let e = unknown_types.entry(t.to_string()).or_insert((l.number, 0));
                e.1 += 1;
            }
        }
        facts.push(RowFacts { line: l.number, ty, id, parent, leaf });
        true
    })
    .map_err(|e| ReadError::io(path, e))?;
    report.bytes = bytes;
    report.lines = last_line;
    if report.rows == 0 && findings.is_empty() {
        add(
            &mut findings,
            None,
            Severity::Warning,
            "empty",
            "the file has no rows (the gateway writes a fresh header on its next load)".into(),
        );
    }
    // Tree checks.
    let mut first_line_of: HashMap<&str, usize> = HashMap::new();
    for f in &facts {
        if let Some(id) = &f.id {
            if let Some(&first) = first_line_of.get(id.as_str()) {
                add(&mut findings, Some(f.line), Severity::Error, "duplicate-id", format!("id {id:?} was already used on line {first} (SessionManager keeps this row, the rewrite reader the first)"));
            } else {
                first_line_of.insert(id, f.line);
            }
        }
    }
    let mut seen: HashSet<&str> = HashSet::new();
    for f in &facts {
        if let Some(Some(p)) = &f.parent {
            if f.ty.as_deref() != Some("leaf") && !first_line_of.contains_key(p.as_str()) {
                add(
                    &mut findings,
                    Some(f.line),
                    Severity::Warning,
                    "dangling-parent",
                    format!("parent {p:?} does not exist: the active branch would start here"),
                );
            }
        }
        if let Some((t, a)) = &f.leaf {
            let known = |x: &Option<String>| x.as_deref().is_none_or(|x| seen.contains(x));
            let a_ok = a.as_ref().is_none_or(known);
            if !known(t) || !a_ok {
                add(&mut findings, Some(f.line), Severity::Error, "invalid-leaf-control", "the leaf control names an entry not written before it (ignored; bounded history reads show nothing)".into());
            }
        }
        if let Some(id) = &f.id {
            seen.insert(id);
        }
    }
    for (t, (line, n)) in {
        let mut v: Vec<_> = unknown_types.into_iter().collect();
        v.sort_by_key(|x| x.1 .0);
        v
    } {
        add(
            &mut findings,
            Some(line),
            Severity::Info,
            "unknown-type",
            format!("{n} row(s) of unknown type {t:?} (kept verbatim as opaque rows)"),
        );
    }
    for (line, tgt) in &labels {
        if !first_line_of.contains_key(tgt.as_str()) {
            add(
                &mut findings,
                Some(*line),
                Severity::Warning,
                "label-target-unknown",
                format!("label for unknown entry {tgt:?}"),
            );
        }
    }
    for (line, fk) in &first_kept {
        if !first_line_of.contains_key(fk.as_str()) {
            add(&mut findings, Some(*line), Severity::Warning, "compaction-first-kept-unknown", format!("firstKeptEntryId {fk:?} does not exist: the context keeps nothing before the summary"));
        }
    }
    let result_ids: HashSet<&str> = tool_results.iter().map(|(_, r)| r.as_str()).collect();
    let call_ids: HashSet<&str> = tool_calls.iter().map(|(_, c)| c.as_str()).collect();
    for (line, c) in &tool_calls {
        if !result_ids.contains(c.as_str()) {
            add(
                &mut findings,
                Some(*line),
                Severity::Warning,
                "orphan-tool-call",
                format!("tool call {c:?} has no result"),
            );
        }
    }
    for (line, r) in &tool_results {
        if !call_ids.contains(r.as_str()) {
            add(
                &mut findings,
                Some(*line),
                Severity::Warning,
                "orphan-tool-result",
                format!("tool result for unknown call {r:?}"),
            );
        }
    }
    if crlf > 0 {
        add(
            &mut findings,
            None,
            Severity::Info,
            "crlf",
            format!("{crlf} line(s) end in CRLF"),
        );
    }
    if blank > 0 {
        add(
            &mut findings,
            None,
            Severity::Info,
            "blank-lines",
            format!("{blank} blank line(s)"),
        );
    }
    let _ = last_terminated;
    findings.sort_by_key(|f| (f.line.unwrap_or(usize::MAX), f.severity == Severity::Info));
    report.findings = findings;
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_usual_problems() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("x.jsonl");
        std::fs::write(
            &p,
            concat!(
                "{\"type\":\"session\",\"version\":3,\"id\":\"s\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/\"}\n",
                "{\"type\":\"message\",\"id\":\"a\",\"parentId\":null,\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"message\":{\"role\":\"assistant\",\"content\":[{\"type\":\"toolCall\",\"id\":\"c1\",\"name\":\"x\",\"arguments\":{}}]}}\n",
                "{\"type\":\"message\",\"id\":\"a\",\"parentId\":\"zz\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"message\":{\"role\":\"user\",\"content\":\"x\"}}\n",
                "{\"type\":\"leaf\",\"id\":\"l\",\"parentId\":\"a\",\"timestamp\":\"t\",\"targetId\":\"nope\"}\n",
                "{\"type\":\"weird\",\"id\":\"w\"}\n",
                "garbage\n",
                "{\"type\":\"mess"
            ),
        )
        .unwrap();
        let r = check_file(&p).unwrap();
        let codes: Vec<&str> = r.findings.iter().map(|f| f.code).collect();
        for c in [
            "orphan-tool-call",
            "duplicate-id",
            "dangling-parent",
            "invalid-leaf-control",
            "unknown-type",
            "invalid-json",
            "torn-tail",
        ] {
            assert!(codes.contains(&c), "{c} missing from {codes:?}");
        }
        assert!(r.has_errors());
    }
}
