//! One streaming pass over a transcript that keeps what compaction needs and nothing more:
//! the structure of every row (type, ids, parents, leaf controls — enough for
//! SessionManager's tree and leaf, [`SessionIndex`]) and per-row facts (token estimate,
//! role, usage, tool calls, file operations, duplicate-user signature). Message bodies are
//! dropped after the pass and read back by offset only for the rows a command needs, so a
//! 1 GB transcript is planned in memory proportional to its row count.
//!
//! The scan also refuses what the gateway would change before compacting: lines the repair
//! pass would drop or rewrite (`transcript.md` §1.8) and version 1/2 files (§1.9).

use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use thiserror::Error;

use crate::exit::{self, ExitCode};
use crate::transcript::entry::{self, js_len, js_trim, type_of};
use crate::transcript::migrate::normalize_loaded;
use crate::transcript::reader::{decode_line, scan_lines};
use crate::transcript::repair;
use crate::transcript::tokens::{calculate_context_tokens, estimate_tokens};
use crate::transcript::tree::{js_truthy, SessionIndex};

/// A transcript compaction cannot work on; nothing was changed.
#[derive(Debug, Error)]
pub enum ScanError {
    /// The file does not exist.
    #[error("{}: no such transcript", path.display())]
    NotFound {
        /// The transcript.
        path: PathBuf,
    },
    /// The file could not be read.
    #[error("{}: cannot read: {source}", path.display())]
    Io {
        /// The transcript.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The first row is not a session header.
    #[error("{}:{line}: the first row is not a session header; run `claw-transcript repair` first", path.display())]
    NoHeader {
        /// The transcript.
        path: PathBuf,
        /// The line of the first row.
        line: usize,
    },
    /// A version 1 or 2 transcript (the gateway migrates and rewrites it on open).
    #[error("{}:{line}: transcript version {version} must be migrated first; run `claw-transcript migrate`", path.display())]
    NeedsMigration {
        /// The transcript.
        path: PathBuf,
        /// The header line.
        line: usize,
        /// The version found.
        version: f64,
    },
    /// The gateway's repair pass would change the file before compacting.
    #[error("{}:{line}: {what}; the gateway repairs this before compacting: run `claw-transcript repair` first", path.display())]
    NeedsRepair {
        /// The transcript.
        path: PathBuf,
        /// The first offending line (0 when not tied to one line).
        line: usize,
        /// What the repair pass would do.
        what: String,
    },
    /// A row read back by offset no longer parses (the file changed underneath).
    #[error("{}:{line}: the transcript changed while it was being read", path.display())]
    Changed {
        /// The transcript.
        path: PathBuf,
        /// The line.
        line: usize,
    },
}

impl ExitCode for ScanError {
    fn exit_code(&self) -> i32 {
        match self {
            ScanError::NotFound { .. } => exit::NOT_FOUND,
            ScanError::Io { .. } => exit::FAILURE,
            ScanError::Changed { .. } => exit::TEMP_FAIL,
            _ => exit::DATA_ERR,
        }
    }
}

impl ScanError {
    fn io(path: &Path, source: std::io::Error) -> Self {
        if source.kind() == std::io::ErrorKind::NotFound {
            ScanError::NotFound {
                path: path.to_path_buf(),
            }
        } else {
            ScanError::Io {
                path: path.to_path_buf(),
                source,
            }
        }
    }
}

/// Where a row lives in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Loc {
    /// 1-based line number.
    pub line: usize,
    /// Byte offset.
    pub offset: u64,
    /// Byte length (without the newline).
    pub len: usize,
}

/// A file operation found in an assistant tool call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileOp {
    /// `read`.
    Read,
    /// `write`.
    Write,
    /// `edit`.
    Edit,
}

/// What compaction needs to know about one row without its body.
#[derive(Debug, Clone, Default)]
pub struct Facts {
    /// `estimateTokens` of the agent message the row converts to (0 when none).
    pub tokens: u64,
    /// The role of that message (`user`, `assistant`, `toolResult`, `custom`, `bashExecution`,
    /// `branchSummary`, `compactionSummary`, …), when the row converts to one.
    pub role: Option<Box<str>>,
    /// For assistants: the context tokens of usable usage (§4.3), when usable.
    pub usage_tokens: Option<f64>,
    /// For assistants: `stopReason` is `aborted` or `error`.
    pub stopped: bool,
    /// `message.timestamp` when it is a number.
    pub message_ts: Option<f64>,
    /// The row's own `timestamp` in epoch ms, when it parses.
    pub entry_ts: Option<i64>,
    /// For assistants: the ids of `toolCall` blocks (`None` for a block without a string id).
    pub tool_calls: Vec<Option<Box<str>>>,
    /// For assistants: file operations of `read`/`write`/`edit` tool calls.
    pub file_ops: Vec<(FileOp, Box<str>)>,
    /// For tool results: `toolCallId` when it is a string.
    pub tool_result_id: Option<Box<str>>,
    /// For user messages: the duplicate signature of §4.8 step 4 (hash of sender + text).
    pub dup_sig: Option<[u8; 16]>,
    /// Whether the message has meaningful conversation content (§4.5 safeguard step 1).
    pub meaningful: bool,
    /// Whether a context rebuild would throw on this row's timestamp.
    pub bad_timestamp: bool,
}

/// A transcript reduced to its structure and facts.
#[derive(Debug, Clone)]
pub struct Scanned {
    /// The file.
    pub path: PathBuf,
    /// File size in bytes.
    pub bytes: u64,
    /// Whether the file ends with a newline.
    pub ends_with_newline: bool,
    /// Non-blank lines (the `--max-lines` count).
    pub non_blank_lines: usize,
    /// The header row, whole.
    pub header: Value,
    /// SessionManager's index over the slim rows (header included, file order).
    pub index: SessionIndex,
    /// Where each row of the index lives (`None` for rows added in memory).
    pub locs: Vec<Option<Loc>>,
    /// Facts per row of the index.
    pub facts: Vec<Facts>,
    /// Rows added in memory (not in the file), by row index.
    pub added: Vec<(usize, Value)>,
}

const SLIM_KEYS: [&str; 9] = [
    "type",
    "id",
    "parentId",
    "appendMode",
    "targetId",
    "appendParentId",
    "label",
    "timestamp",
    "firstKeptEntryId",
];

/// The structural fields of a row (everything [`SessionIndex`] reads).
pub fn slim(v: &Value) -> Value {
    let Some(o) = v.as_object() else {
        return v.clone();
    };
    let mut m = Map::new();
    for k in SLIM_KEYS {
        if let Some(x) = o.get(k) {
            m.insert(k.into(), x.clone());
        }
    }
    if o.get("type").and_then(Value::as_str) == Some("session") {
        if let Some(x) = o.get("version") {
            m.insert("version".into(), x.clone());
        }
    }
    Value::Object(m)
}

fn str_of(v: Option<&Value>) -> Option<&str> {
    v.and_then(Value::as_str)
}

/// Text of a content value as the compaction helpers read it (text blocks only).
pub fn content_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(blocks)) => {
            let mut parts = Vec::new();
            for b in blocks {
                if b.get("type").and_then(Value::as_str) == Some("text") {
                    if let Some(t) = b.get("text").and_then(Value::as_str) {
                        parts.push(t);
                    }
                }
            }
            parts.join("\n")
        }
        _ => String::new(),
    }
}

fn is_silent_or_heartbeat(text: &str) -> bool {
    let t = js_trim(text);
    let all_tokens = |tok: &str| {
        t.split(crate::transcript::entry::is_js_space)
            .filter(|w| !w.is_empty())
            .all(|w| w.eq_ignore_ascii_case(tok))
    };
    all_tokens("NO_REPLY") || all_tokens("HEARTBEAT_OK")
}

fn meaningful_text(text: &str) -> bool {
    !js_trim(text).is_empty() && !is_silent_or_heartbeat(text)
}

/// `hasMeaningfulMessageContent` (silent and heartbeat-only text do not count).
fn meaningful_content(content: Option<&Value>) -> bool {
    match content {
        Some(Value::String(s)) => meaningful_text(s),
        Some(Value::Array(blocks)) => {
            let mut non_text = false;
            for b in blocks.iter().filter(|b| b.is_object()) {
                match b.get("type").and_then(Value::as_str) {
                    Some("text") => {
                        if b.get("text")
                            .and_then(Value::as_str)
                            .is_some_and(meaningful_text)
                        {
                            return true;
                        }
                    }
                    Some("toolCall" | "toolUse" | "functionCall" | "thinking" | "reasoning") => {}
                    _ => non_text = true,
                }
            }
            non_text
        }
        _ => false,
    }
}

fn required_ts_ok(v: &Value) -> bool {
    v.get("timestamp")
        .and_then(Value::as_str)
        .filter(|s| !js_trim(s).is_empty())
        .and_then(entry::parse_date_ms)
        .is_some()
}

fn dup_signature(m: &Value) -> Option<[u8; 16]> {
    m.get("timestamp").and_then(Value::as_f64)?;
    let text = match m.get("content") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(blocks)) => {
            let mut parts = Vec::new();
            for b in blocks {
                let o = b.as_object()?;
                match o.get("type").and_then(Value::as_str) {
                    Some("image") => return None,
                    Some("text") => {
                        if let Some(t) = o.get("text").and_then(Value::as_str) {
                            parts.push(t.to_string());
                        }
                    }
                    _ => {}
                }
            }
            parts.join("\n")
        }
        _ => return None,
    };
    let collapsed = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if collapsed.is_empty() || js_len(&collapsed) < 24 {
        return None;
    }
    let sender = m
        .get("__openclaw")
        .and_then(|x| x.get("senderId"))
        .and_then(Value::as_str)
        .unwrap_or("");
    let key = Value::Array(vec![
        Value::String(sender.into()),
        Value::String(collapsed.to_lowercase()),
    ]);
    let digest = Sha256::digest(crate::jsjson::to_string_compact(&key).as_bytes());
    let mut out = [0u8; 16];
    out.copy_from_slice(&digest[..16]);
    Some(out)
}

/// The facts of one full (load-normalised) row.
pub fn facts_of(v: &Value) -> Facts {
    let mut f = Facts {
        entry_ts: str_of(v.get("timestamp")).and_then(entry::parse_date_ms),
        ..Facts::default()
    };
    match type_of(v) {
        Some("message") => {
            let Some(m) = v.get("message").filter(|m| m.is_object()) else {
                return f;
            };
            let role = str_of(m.get("role"));
            f.role = role.map(Box::from);
            f.tokens = estimate_tokens(m);
            f.message_ts = m.get("timestamp").and_then(Value::as_f64);
            match role {
                Some("assistant") => {
                    let stop = str_of(m.get("stopReason"));
                    f.stopped = matches!(stop, Some("aborted") | Some("error"));
                    if !f.stopped {
                        if let Some(u) = m.get("usage").filter(|u| js_truthy(u)) {
                            let unavailable = u
                                .get("contextUsage")
                                .and_then(|c| c.get("state"))
                                .and_then(Value::as_str)
                                == Some("unavailable");
                            if !unavailable {
                                f.usage_tokens = Some(calculate_context_tokens(u));
                            }
                        }
                    }
                    if let Some(Value::Array(blocks)) = m.get("content") {
                        for b in blocks.iter().filter(|b| b.is_object()) {
                            if b.get("type").and_then(Value::as_str) != Some("toolCall") {
                                continue;
                            }
                            f.tool_calls.push(str_of(b.get("id")).map(Box::from));
                            let (Some(args), Some(name)) = (b.get("arguments"), b.get("name"))
                            else {
                                continue;
                            };
                            if !js_truthy(args) {
                                continue;
                            }
                            let Some(p) = str_of(args.get("path")).filter(|p| !p.is_empty()) else {
                                continue;
                            };
                            let op = match name.as_str() {
                                Some("read") => FileOp::Read,
                                Some("write") => FileOp::Write,
                                Some("edit") => FileOp::Edit,
                                _ => continue,
                            };
                            f.file_ops.push((op, Box::from(p)));
                        }
                    }
                    f.meaningful = meaningful_content(m.get("content"));
                }
                Some("toolResult") => {
                    f.tool_result_id = str_of(m.get("toolCallId")).map(Box::from);
                }
                Some("user") => {
                    f.dup_sig = dup_signature(m);
                    f.meaningful = meaningful_content(m.get("content"));
                }
                Some("custom") => {
                    f.meaningful = m.get("display") != Some(&Value::Bool(false))
                        && meaningful_content(m.get("content"));
                }
                Some("bashExecution") => {
                    f.meaningful = m.get("excludeFromContext") != Some(&Value::Bool(true))
                        && meaningful_text(&format!(
                            "{}\n{}",
                            str_of(m.get("command")).unwrap_or(""),
                            str_of(m.get("output")).unwrap_or("")
                        ));
                }
                Some("branchSummary") => {
                    f.meaningful = str_of(m.get("summary")).is_some_and(meaningful_text);
                }
                _ => {}
            }
        }
        Some("custom_message") => {
            f.role = Some("custom".into());
            let mut m = Map::new();
            m.insert("role".into(), Value::String("custom".into()));
            if let Some(c) = v.get("content") {
                m.insert("content".into(), c.clone());
            }
            f.tokens = estimate_tokens(&Value::Object(m));
            f.bad_timestamp = !required_ts_ok(v);
            f.meaningful = v.get("display") != Some(&Value::Bool(false))
                && meaningful_content(v.get("content"));
        }
        Some("branch_summary") => {
            if v.get("summary").is_some_and(js_truthy) {
                f.role = Some("branchSummary".into());
                f.tokens = str_of(v.get("summary")).map_or(0, |s| js_len(s).div_ceil(4) as u64);
                f.bad_timestamp = !required_ts_ok(v);
                f.meaningful = str_of(v.get("summary")).is_some_and(meaningful_text);
            }
        }
        Some("compaction") => {
            f.role = Some("compactionSummary".into());
            f.tokens = str_of(v.get("summary")).map_or(0, |s| js_len(s).div_ceil(4) as u64);
            f.bad_timestamp = !required_ts_ok(v);
        }
        _ => {}
    }
    f
}

/// The slim form of a message row for the repair pass's tool-result step.
fn repair_slim(v: &Value) -> Option<Value> {
    if type_of(v) != Some("message") {
        return None;
    }
    let m = v.get("message")?.as_object()?;
    let mut o = Map::new();
    for k in [
        "role",
        "api",
        "provider",
        "model",
        "stopReason",
        "toolCallId",
        "toolUseId",
        "tool_call_id",
        "tool_use_id",
        "callId",
        "call_id",
    ] {
        if let Some(x) = m.get(k) {
            o.insert(k.into(), x.clone());
        }
    }
    if let Some(Value::Array(blocks)) = m.get("content") {
        let calls: Vec<Value> = blocks
            .iter()
            .filter(|b| {
                matches!(
                    b.get("type").and_then(Value::as_str),
                    Some("toolCall" | "toolUse" | "functionCall")
                )
            })
            .cloned()
            .collect();
        o.insert("content".into(), Value::Array(calls));
    }
    let mut row = Map::new();
    row.insert("type".into(), Value::String("message".into()));
    if let Some(id) = v.get("id") {
        row.insert("id".into(), id.clone());
    }
    row.insert("message".into(), Value::Object(o));
    Some(Value::Object(row))
}

/// Scans `path`: structure, facts and the checks above. Fails on the first line the
/// gateway would repair, a missing header, or a version older than 3.
pub fn scan_file(path: &Path) -> Result<Scanned, ScanError> {
    let file = File::open(path).map_err(|e| ScanError::io(path, e))?;
    let mut rows: Vec<Value> = Vec::new();
    let mut locs: Vec<Option<Loc>> = Vec::new();
    let mut facts: Vec<Facts> = Vec::new();
    let mut repair_rows: Vec<Value> = Vec::new();
    let mut header: Option<Value> = None;
    let mut non_blank = 0usize;
    let mut last_byte_newline = true;
    let mut problem: Option<ScanError> = None;
    let total = scan_lines(BufReader::with_capacity(1 << 20, file), |l| {
        last_byte_newline = l.terminated;
        let text = decode_line(l.bytes);
        let trimmed = js_trim(&text);
        if trimmed.is_empty() {
            return true;
        }
        non_blank += 1;
        let mut v: Value = match crate::jsjson::parse_value(trimmed) {
            Ok(v) => v,
            Err(e) => {
                problem = Some(ScanError::NeedsRepair {
                    path: path.to_path_buf(),
                    line: l.number,
                    what: if l.terminated {
                        format!("a line that is not JSON ({e})")
                    } else {
                        "a torn (unterminated) last line".to_string()
                    },
                });
                return false;
            }
        };
        if header.is_none() {
            if !entry::is_header(&v) {
                problem = Some(ScanError::NoHeader {
                    path: path.to_path_buf(),
                    line: l.number,
                });
                return false;
            }
            let version = entry::header_version(&v);
            if version < 3.0 {
                problem = Some(ScanError::NeedsMigration {
                    path: path.to_path_buf(),
                    line: l.number,
                    version,
                });
                return false;
            }
            header = Some(v.clone());
        } else if repair::row_needs_repair(&v) {
            problem = Some(ScanError::NeedsRepair {
                path: path.to_path_buf(),
                line: l.number,
                what: "a message the repair pass would drop or rewrite (missing role, empty error reply, blank user text or corrupted image)".into(),
            });
            return false;
        }
        normalize_loaded(&mut v);
        if let Some(r) = repair_slim(&v) {
            repair_rows.push(r);
        }
        facts.push(facts_of(&v));
        rows.push(slim(&v));
        locs.push(Some(Loc {
            line: l.number,
            offset: l.offset,
            len: l.bytes.len(),
        }));
        true
    })
    .map_err(|e| ScanError::io(path, e))?;
    if let Some(p) = problem {
        return Err(p);
    }
    let Some(header) = header else {
        return Err(ScanError::NoHeader {
            path: path.to_path_buf(),
            line: 1,
        });
    };
    let missing = repair::missing_tool_result_count(&repair_rows);
    if missing > 0 {
        return Err(ScanError::NeedsRepair {
            path: path.to_path_buf(),
            line: 0,
            what: format!(
                "{missing} tool call(s) without a result that the repair pass would answer"
            ),
        });
    }
    drop(repair_rows);
    // The header row keeps everything (it is one row and the successor copies its cwd).
    if let Some(i) = rows.iter().position(entry::is_header) {
        rows[i] = header.clone();
    }
    Ok(Scanned {
        path: path.to_path_buf(),
        bytes: total,
        ends_with_newline: total == 0 || last_byte_newline,
        non_blank_lines: non_blank,
        header,
        index: SessionIndex::build(rows),
        locs,
        facts,
        added: Vec::new(),
    })
}

impl Scanned {
    /// Adds a row in memory (e.g. the new compaction entry) and rebuilds the index.
    pub fn push_row(&mut self, full: Value) -> usize {
        let mut rows = std::mem::take(&mut self.index.rows);
        let i = rows.len();
        rows.push(slim(&full));
        self.locs.push(None);
        self.facts.push(facts_of(&full));
        self.added.push((i, full));
        self.index = SessionIndex::build(rows);
        i
    }

    /// The id of a row.
    pub fn id(&self, row: usize) -> Option<&str> {
        entry::id_of(&self.index.rows[row])
    }

    /// The type of a row.
    pub fn kind(&self, row: usize) -> Option<&str> {
        type_of(&self.index.rows[row])
    }

    /// Reads the given rows whole (load-normalised), in the order given. Rows added in
    /// memory come from memory.
    pub fn read_rows(&self, rows: &[usize]) -> Result<Vec<Value>, ScanError> {
        let mut out: Vec<Option<Value>> = vec![None; rows.len()];
        let mut order: Vec<(u64, usize)> = Vec::new();
        for (k, &r) in rows.iter().enumerate() {
            match self.locs.get(r).copied().flatten() {
                Some(loc) => order.push((loc.offset, k)),
                None => {
                    out[k] = self
                        .added
                        .iter()
                        .find(|(i, _)| *i == r)
                        .map(|(_, v)| v.clone());
                }
            }
        }
        order.sort_unstable();
        if !order.is_empty() {
            let mut f = File::open(&self.path).map_err(|e| ScanError::io(&self.path, e))?;
            let mut buf = Vec::new();
            for (_, k) in order {
                let loc = self.locs[rows[k]].unwrap_or(Loc {
                    line: 0,
                    offset: 0,
                    len: 0,
                });
                buf.resize(loc.len, 0);
                f.seek(SeekFrom::Start(loc.offset))
                    .and_then(|_| f.read_exact(&mut buf))
                    .map_err(|e| ScanError::io(&self.path, e))?;
                let text = decode_line(&buf);
                let mut v: Value =
                    crate::jsjson::parse_value(js_trim(&text)).map_err(|_| ScanError::Changed {
                        path: self.path.clone(),
                        line: loc.line,
                    })?;
                normalize_loaded(&mut v);
                out[k] = Some(v);
            }
        }
        Ok(out.into_iter().map(|v| v.unwrap_or(Value::Null)).collect())
    }

    /// Reads one row whole.
    pub fn read_row(&self, row: usize) -> Result<Value, ScanError> {
        Ok(self.read_rows(&[row])?.pop().unwrap_or(Value::Null))
    }

    /// The id of the last row with a non-blank string id (the checkpoint `entryId`).
    pub fn last_entry_id(&self) -> Option<String> {
        self.index
            .rows
            .iter()
            .rev()
            .filter(|v| type_of(v) != Some("session"))
            .find_map(|v| {
                v.get("id")
                    .and_then(Value::as_str)
                    .map(js_trim)
                    .filter(|s| !s.is_empty())
                    .map(String::from)
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scans_structure_and_refuses_repairs() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.jsonl");
        std::fs::write(
            &p,
            concat!(
                r#"{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#,
                "\n",
                r#"{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"hello there","timestamp":1}}"#,
                "\n",
                r#"{"type":"message","id":"b","parentId":"a","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"read","arguments":{"path":"/etc/hosts"}}],"stopReason":"toolUse","usage":{"totalTokens":900},"timestamp":2}}"#,
                "\n"
            ),
        )
        .unwrap();
        let s = scan_file(&p).unwrap();
        assert_eq!(s.index.leaf_id.as_deref(), Some("b"));
        assert_eq!(s.facts[1].tokens, 3);
        assert_eq!(s.facts[2].usage_tokens, Some(900.0));
        assert_eq!(
            s.facts[2].file_ops,
            vec![(FileOp::Read, "/etc/hosts".into())]
        );
        let full = s.read_rows(&[2, 1]).unwrap();
        assert_eq!(full[0]["id"], "b");
        assert_eq!(full[1]["message"]["content"], "hello there");
        std::fs::write(
            &p,
            "{\"type\":\"session\",\"version\":3,\"id\":\"s\"}\nnot json\n",
        )
        .unwrap();
        let e = scan_file(&p).unwrap_err();
        assert_eq!(e.exit_code(), 65);
        assert!(e.to_string().contains(":2:"), "{e}");
        std::fs::write(&p, "{\"type\":\"session\",\"version\":2,\"id\":\"s\"}\n").unwrap();
        assert!(matches!(
            scan_file(&p).unwrap_err(),
            ScanError::NeedsMigration { .. }
        ));
    }
}
