//! One streaming pass over a transcript that keeps what compaction needs and nothing more:
//! the structure of every row (type, interned ids and parents, leaf controls — enough for
//! SessionManager's tree and leaf, [`Index`]) and per-row facts (token estimate, role,
//! usage, file operations). Each line is reduced and dropped before the next one — user,
//! assistant and tool-result messages straight from the text, without a `Value` (the
//! `lean` module), anything else through a parsed `Value`; message bodies (and the facts
//! only the successor needs: tool-call ids, duplicate-user signatures) are read back by
//! offset for the rows a command needs. A transcript is planned in memory proportional to
//! its row count, a small fixed-size record a row (the measured peak RSS is in
//! `bench/REPORT.md`, `claw-compact`).
//!
//! The scan also refuses what the gateway would change before compacting: lines the repair
//! pass would drop or rewrite (`transcript.md` §1.8) and version 1/2 files (§1.9); the
//! cross-row check (tool calls the repair pass would answer) is counted as the rows stream
//! by. [`scan_bytes`] scans a text held in memory instead (the repaired view of
//! `super::repaired`): its rows are read back from there.

use std::borrow::Cow;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use thiserror::Error;

use crate::fs::data_file::{DataFileError, DataPath};

use super::index::{Index, Kind, SlimRow};
use super::lean;
use super::missing_results::{MissingResults, RepairView};
use super::row_facts::{meaningful_text, Facts, FileOp, FileOps, Role};
use crate::exit::{self, ExitCode};
use crate::js;
use crate::transcript::entry::{self, type_of};
use crate::transcript::migrate::normalize_loaded;
use crate::transcript::reader::scan_lines;
use crate::transcript::repair;
use crate::transcript::tokens::{calculate_context_tokens, estimate_tokens};

/// A transcript compaction cannot work on; nothing was changed.
#[derive(Debug, Error)]
pub enum ScanError {
    /// The file does not exist.
    #[error("{}: no such transcript", path.display())]
    NotFound {
        /// The transcript.
        path: PathBuf,
    },
    /// The path cannot be used (a link on its way, not a regular file) or the system
    /// refused to open it.
    #[error(transparent)]
    Unusable(DataFileError),
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
            ScanError::Io { .. } => exit::CANT_CREATE,
            ScanError::Unusable(e) => e.exit_code(),
            ScanError::Changed { .. } => exit::TEMP_FAIL,
            _ => exit::DATA_ERR,
        }
    }
}

impl From<DataFileError> for ScanError {
    fn from(e: DataFileError) -> Self {
        match e {
            DataFileError::NotFound { path } => ScanError::NotFound { path },
            e => ScanError::Unusable(e),
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

/// Where rows live, 16 bytes a row.
#[derive(Debug, Clone, Default)]
struct Locs {
    /// (offset, length, line); line 0 for rows added in memory, length `u32::MAX` for a
    /// row found in `big`.
    packed: Vec<(u64, u32, u32)>,
    big: std::collections::HashMap<usize, Loc>,
}

impl Locs {
    fn push(&mut self, loc: Option<Loc>) {
        let Some(l) = loc else {
            self.packed.push((0, 0, 0));
            return;
        };
        match (u32::try_from(l.len), u32::try_from(l.line)) {
            (Ok(len), Ok(line)) if len < u32::MAX && line > 0 => {
                self.packed.push((l.offset, len, line))
            }
            _ => {
                self.big.insert(self.packed.len(), l);
                self.packed.push((l.offset, u32::MAX, 1));
            }
        }
    }

    fn get(&self, row: usize) -> Option<Loc> {
        let &(offset, len, line) = self.packed.get(row)?;
        if line == 0 {
            return None;
        }
        if len == u32::MAX {
            return self.big.get(&row).copied();
        }
        Some(Loc {
            line: line as usize,
            offset,
            len: len as usize,
        })
    }
}

/// Where a scan's rows are read back from.
#[derive(Debug, Clone)]
pub enum Backing {
    /// The transcript file (opened again below its directory, never through a link).
    File,
    /// A text held in memory (the transcript as the repair pass would rewrite it).
    Memory(std::sync::Arc<Vec<u8>>),
}

/// A transcript reduced to its structure and facts.
#[derive(Debug, Clone)]
pub struct Scanned {
    /// The file.
    pub path: PathBuf,
    /// The file as it is opened again (below its directory, never through a link).
    pub data: DataPath,
    /// Where the rows are read back from.
    pub backing: Backing,
    /// File size in bytes.
    pub bytes: u64,
    /// Whether the file ends with a newline.
    pub ends_with_newline: bool,
    /// Non-blank lines (the `--max-lines` count).
    pub non_blank_lines: usize,
    /// The header row, whole.
    pub header: Value,
    /// SessionManager's index over the slim rows (header included, file order).
    pub index: Index,
    /// Where each row of the index lives.
    locs: Locs,
    /// Facts per row of the index.
    pub facts: Vec<Facts>,
    /// File operations by row (rows in increasing order).
    pub file_ops: Vec<(usize, FileOp, Box<str>)>,
    /// Rows added in memory (not in the file), by row index.
    pub added: Vec<(usize, Value)>,
}

/// A line as text ([`crate::transcript::reader::decode_line`]: invalid UTF-8 replaced),
/// without the lossy decoder's cost on valid lines.
fn decode(bytes: &[u8]) -> Cow<'_, str> {
    match std::str::from_utf8(bytes) {
        Ok(s) => Cow::Borrowed(s),
        Err(_) => String::from_utf8_lossy(bytes),
    }
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
        .filter(|s| !js::trim(s).is_empty())
        .and_then(js::date_parse)
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
    if collapsed.is_empty() || js::utf16_len(&collapsed) < 24 {
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
    let digest = Sha256::digest(crate::js::jsjson::to_string_compact(&key).as_bytes());
    let mut out = [0u8; 16];
    out.copy_from_slice(&digest[..16]);
    Some(out)
}

/// The facts and file operations of one full (load-normalised) row.
pub fn facts_of(v: &Value) -> (Facts, FileOps) {
    let mut f = Facts::default();
    let mut ops = FileOps::new();
    match type_of(v) {
        Some("message") => {
            let Some(m) = v.get("message").filter(|m| m.is_object()) else {
                return (f, ops);
            };
            let role = str_of(m.get("role"));
            f.role = role.map_or(Role::None, Role::of);
            f.tokens = estimate_tokens(m);
            f.set_message_ts(m.get("timestamp").and_then(Value::as_f64));
            match role {
                Some("assistant") => {
                    let stop = str_of(m.get("stopReason"));
                    f.set_stopped(matches!(stop, Some("aborted") | Some("error")));
                    if !f.stopped() {
                        if let Some(u) = m.get("usage").filter(|u| js::truthy(u)) {
                            let unavailable = u
                                .get("contextUsage")
                                .and_then(|c| c.get("state"))
                                .and_then(Value::as_str)
                                == Some("unavailable");
                            if !unavailable {
                                f.set_usage_tokens(calculate_context_tokens(u));
                            }
                        }
                    }
                    if let Some(Value::Array(blocks)) = m.get("content") {
                        for b in blocks.iter().filter(|b| b.is_object()) {
                            if b.get("type").and_then(Value::as_str) != Some("toolCall") {
                                continue;
                            }
                            let (Some(args), Some(name)) = (b.get("arguments"), b.get("name"))
                            else {
                                continue;
                            };
                            if !js::truthy(args) {
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
                            ops.push((op, Box::from(p)));
                        }
                    }
                    f.set_meaningful(meaningful_content(m.get("content")));
                }
                Some("user") => {
                    f.set_meaningful(meaningful_content(m.get("content")));
                }
                Some("custom") => {
                    f.set_meaningful(
                        m.get("display") != Some(&Value::Bool(false))
                            && meaningful_content(m.get("content")),
                    );
                }
                Some("bashExecution") => {
                    f.set_meaningful(
                        m.get("excludeFromContext") != Some(&Value::Bool(true))
                            && meaningful_text(&format!(
                                "{}\n{}",
                                str_of(m.get("command")).unwrap_or(""),
                                str_of(m.get("output")).unwrap_or("")
                            )),
                    );
                }
                Some("branchSummary") => {
                    f.set_meaningful(str_of(m.get("summary")).is_some_and(meaningful_text));
                }
                _ => {}
            }
        }
        Some("custom_message") => {
            f.role = Role::Custom;
            let mut m = Map::new();
            m.insert("role".into(), Value::String("custom".into()));
            if let Some(c) = v.get("content") {
                m.insert("content".into(), c.clone());
            }
            f.tokens = estimate_tokens(&Value::Object(m));
            f.set_bad_timestamp(!required_ts_ok(v));
            f.set_meaningful(
                v.get("display") != Some(&Value::Bool(false))
                    && meaningful_content(v.get("content")),
            );
        }
        Some("branch_summary") if v.get("summary").is_some_and(js::truthy) => {
            f.role = Role::BranchSummary;
            f.tokens = str_of(v.get("summary")).map_or(0, |s| js::utf16_len(s).div_ceil(4) as u64);
            f.set_bad_timestamp(!required_ts_ok(v));
            f.set_meaningful(str_of(v.get("summary")).is_some_and(meaningful_text));
        }
        Some("compaction") => {
            f.role = Role::CompactionSummary;
            f.tokens = str_of(v.get("summary")).map_or(0, |s| js::utf16_len(s).div_ceil(4) as u64);
            f.set_bad_timestamp(!required_ts_ok(v));
        }
        _ => {}
    }
    (f, ops)
}

/// The agent message of a `message` row, when it is an object.
fn message_of(v: &Value) -> Option<&Value> {
    if type_of(v) != Some("message") {
        return None;
    }
    v.get("message").filter(|m| m.is_object())
}

/// For an assistant row: the ids of its `toolCall` blocks (`None` for a block without a
/// string id).
pub fn tool_call_ids(v: &Value) -> Vec<Option<String>> {
    let Some(m) = message_of(v).filter(|m| str_of(m.get("role")) == Some("assistant")) else {
        return Vec::new();
    };
    let Some(Value::Array(blocks)) = m.get("content") else {
        return Vec::new();
    };
    blocks
        .iter()
        .filter(|b| b.is_object() && b.get("type").and_then(Value::as_str) == Some("toolCall"))
        .map(|b| str_of(b.get("id")).map(String::from))
        .collect()
}

/// For a tool result row: `toolCallId` when it is a string.
pub fn tool_result_id(v: &Value) -> Option<String> {
    let m = message_of(v).filter(|m| str_of(m.get("role")) == Some("toolResult"))?;
    str_of(m.get("toolCallId")).map(String::from)
}

/// For a user message row: the duplicate signature of §4.8 step 4 (hash of sender + text).
pub fn dup_signature_of(v: &Value) -> Option<[u8; 16]> {
    let m = message_of(v).filter(|m| str_of(m.get("role")) == Some("user"))?;
    dup_signature(m)
}

/// Scans `path`: structure, facts and the checks above. Fails on the first line the
/// gateway would repair, a missing header, or a version older than 3.
pub fn scan_file(data: &DataPath) -> Result<Scanned, ScanError> {
    let file = data.open_read().map_err(ScanError::from)?.into_file();
    let len = file.metadata().map_or(0, |m| m.len());
    scan_reader(data, file, len, Backing::File)
}

/// Scans a text held in memory as the transcript at `data` (the repaired view): the same
/// checks as [`scan_file`], rows read back from `bytes`.
pub fn scan_bytes(data: &DataPath, bytes: Vec<u8>) -> Result<Scanned, ScanError> {
    let bytes = std::sync::Arc::new(bytes);
    let text = std::sync::Arc::clone(&bytes);
    let len = text.len() as u64;
    scan_reader(data, text.as_slice(), len, Backing::Memory(bytes))
}

fn scan_reader(
    data: &DataPath,
    file: impl Read,
    len: u64,
    backing: Backing,
) -> Result<Scanned, ScanError> {
    let path = data.path();
    // Rows are rarely smaller than 0.6 KB on average; reserve for that many to avoid
    // regrowing the tables (capacity never used is never touched).
    let guess = ((len / 600) as usize).min(1 << 24);
    let mut index = Index::new();
    index.reserve(guess);
    index.syms.reserve(guess, guess * 12);
    let mut locs = Locs::default();
    locs.packed.reserve(guess);
    let mut facts: Vec<Facts> = Vec::with_capacity(guess);
    let mut file_ops: Vec<(usize, FileOp, Box<str>)> = Vec::new();
    let mut missing = MissingResults::default();
    let mut header: Option<Value> = None;
    let mut non_blank = 0usize;
    let mut last_byte_newline = true;
    let mut problem: Option<ScanError> = None;
    let total = scan_lines(file, |l| {
        last_byte_newline = l.terminated;
        let text = decode(l.bytes);
        let trimmed = js::trim(&text);
        if trimmed.is_empty() {
            return true;
        }
        non_blank += 1;
        if header.is_some() {
            if let Some(lean) = lean::read(trimmed) {
                let slim = lean.slim(&mut index.syms);
                missing.observe(lean.repair);
                let row = facts.len();
                file_ops.extend(lean.ops.into_iter().map(|(op, p)| (row, op, p)));
                facts.push(lean.facts);
                index.push(slim);
                locs.push(Some(Loc {
                    line: l.number,
                    offset: l.offset,
                    len: l.bytes.len(),
                }));
                return true;
            }
        }
        let mut v: Value = match crate::js::jsjson::parse_value(trimmed) {
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
        if type_of(&v) == Some("message") {
            if let Some(m) = v.get("message").and_then(Value::as_object) {
                missing.observe(RepairView::of(m));
            }
        }
        let (f, ops) = facts_of(&v);
        let row = facts.len();
        file_ops.extend(ops.into_iter().map(|(op, p)| (row, op, p)));
        facts.push(f);
        let slim = SlimRow::of(&v, &mut index.syms);
        index.push(slim);
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
    let missing = missing.count();
    if missing > 0 {
        return Err(ScanError::NeedsRepair {
            path: path.to_path_buf(),
            line: 0,
            what: format!(
                "{missing} tool call(s) without a result that the repair pass would answer"
            ),
        });
    }
    Ok(Scanned {
        path: path.to_path_buf(),
        data: data.clone(),
        backing,
        bytes: total,
        ends_with_newline: total == 0 || last_byte_newline,
        non_blank_lines: non_blank,
        header,
        index,
        locs,
        facts,
        file_ops,
        added: Vec::new(),
    })
}

/// What rows are read back through.
trait ReadSeek: Read + Seek {}
impl<T: Read + Seek> ReadSeek for T {}

impl Scanned {
    /// Adds a row in memory (e.g. the new compaction entry) and indexes it.
    pub fn push_row(&mut self, full: Value) -> usize {
        let slim = SlimRow::of(&full, &mut self.index.syms);
        let i = self.index.push(slim);
        self.locs.push(None);
        let (f, ops) = facts_of(&full);
        self.file_ops
            .extend(ops.into_iter().map(|(op, p)| (i, op, p)));
        self.facts.push(f);
        self.added.push((i, full));
        i
    }

    /// Where a row lives in the file (`None` for rows added in memory).
    pub fn loc(&self, row: usize) -> Option<Loc> {
        self.locs.get(row)
    }

    /// The file operations of a row's tool calls.
    pub fn file_ops(&self, row: usize) -> impl Iterator<Item = (FileOp, &str)> {
        let start = self.file_ops.partition_point(|o| o.0 < row);
        self.file_ops[start..]
            .iter()
            .take_while(move |o| o.0 == row)
            .map(|o| (o.1, &*o.2))
    }

    /// The id of a row (a non-empty string).
    pub fn id(&self, row: usize) -> Option<&str> {
        self.index.id_at(row).map(|s| self.index.str(s))
    }

    /// The type of a row.
    pub fn kind(&self, row: usize) -> Option<&str> {
        self.index.kind(row).as_str(&self.index.syms)
    }

    /// Reads the given rows whole (load-normalised), in the order given. Rows added in
    /// memory come from memory.
    pub fn read_rows(&self, rows: &[usize]) -> Result<Vec<Value>, ScanError> {
        let mut out: Vec<Option<Value>> = vec![None; rows.len()];
        self.for_each_row(rows, |k, v| out[k] = Some(v))?;
        Ok(out.into_iter().map(|v| v.unwrap_or(Value::Null)).collect())
    }

    /// Reads the given rows whole (load-normalised) in file order, calling `f` with each
    /// one's position in `rows`. Rows added in memory come from memory.
    pub fn for_each_row(
        &self,
        rows: &[usize],
        mut f: impl FnMut(usize, Value),
    ) -> Result<(), ScanError> {
        let mut order: Vec<(u64, usize)> = Vec::new();
        for (k, &r) in rows.iter().enumerate() {
            match self.locs.get(r) {
                Some(loc) => order.push((loc.offset, k)),
                None => {
                    let v = self
                        .added
                        .iter()
                        .find(|(i, _)| *i == r)
                        .map_or(Value::Null, |(_, v)| v.clone());
                    f(k, v);
                }
            }
        }
        order.sort_unstable();
        if order.is_empty() {
            return Ok(());
        }
        let mut file: Box<dyn ReadSeek> = match &self.backing {
            Backing::File => Box::new(self.data.open_read().map_err(ScanError::from)?.into_file()),
            Backing::Memory(b) => Box::new(std::io::Cursor::new(b.as_slice())),
        };
        let loc_of = |k: usize| {
            self.locs.get(rows[k]).unwrap_or(Loc {
                line: 0,
                offset: 0,
                len: 0,
            })
        };
        // Rows close together are read with one read of the span they cover.
        const GAP: u64 = 64 << 10;
        const SPAN: u64 = 4 << 20;
        let mut buf: Vec<u8> = Vec::new();
        let mut g = 0;
        while g < order.len() {
            let first = loc_of(order[g].1);
            let start = first.offset;
            let mut end = start + first.len as u64;
            let mut h = g + 1;
            while h < order.len() {
                let l = loc_of(order[h].1);
                let e = l.offset + l.len as u64;
                if l.offset > end + GAP || e - start > SPAN {
                    break;
                }
                end = end.max(e);
                h += 1;
            }
            buf.clear();
            buf.resize((end - start) as usize, 0);
            file.seek(SeekFrom::Start(start))
                .and_then(|_| file.read_exact(&mut buf))
                .map_err(|e| ScanError::io(&self.path, e))?;
            for &(_, k) in &order[g..h] {
                let loc = loc_of(k);
                let at = (loc.offset - start) as usize;
                let text = decode(&buf[at..at + loc.len]);
                let mut v: Value =
                    crate::js::jsjson::parse_value(js::trim(&text)).map_err(|_| {
                        ScanError::Changed {
                            path: self.path.clone(),
                            line: loc.line,
                        }
                    })?;
                normalize_loaded(&mut v);
                f(k, v);
            }
            g = h;
        }
        Ok(())
    }

    /// Reads one row whole.
    pub fn read_row(&self, row: usize) -> Result<Value, ScanError> {
        Ok(self.read_rows(&[row])?.pop().unwrap_or(Value::Null))
    }

    /// The id of the last row with a non-blank string id (the checkpoint `entryId`).
    pub fn last_entry_id(&self) -> Option<String> {
        let ix = &self.index;
        (0..ix.len())
            .rev()
            .filter(|&i| ix.kind(i) != Kind::Session)
            .find_map(|i| {
                ix.row(i)
                    .id
                    .str()
                    .map(|s| js::trim(ix.str(s)))
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
        let s = scan_file(&DataPath::given(&p)).unwrap();
        assert_eq!(s.index.leaf_id(), Some("b"));
        assert_eq!(s.facts[1].tokens, 3);
        assert_eq!(s.facts[2].usage_tokens(), Some(900.0));
        assert_eq!(
            s.file_ops(2).collect::<Vec<_>>(),
            vec![(FileOp::Read, "/etc/hosts")]
        );
        let full = s.read_rows(&[2, 1]).unwrap();
        assert_eq!(full[0]["id"], "b");
        assert_eq!(full[1]["message"]["content"], "hello there");
        std::fs::write(
            &p,
            "{\"type\":\"session\",\"version\":3,\"id\":\"s\"}\nnot json\n",
        )
        .unwrap();
        let e = scan_file(&DataPath::given(&p)).unwrap_err();
        assert_eq!(e.exit_code(), 65);
        assert!(e.to_string().contains(":2:"), "{e}");
        std::fs::write(&p, "{\"type\":\"session\",\"version\":2,\"id\":\"s\"}\n").unwrap();
        assert!(matches!(
            scan_file(&DataPath::given(&p)).unwrap_err(),
            ScanError::NeedsMigration { .. }
        ));
    }

    /// The streaming count of step 7 agrees with the repair pass over the whole file.
    #[test]
    fn missing_results_match_the_repair_pass() {
        use serde_json::json;
        let pool = [
            json!({"role":"assistant","api":"openai-chatgpt-responses","provider":"openai","stopReason":"toolUse","content":[{"type":"toolCall","id":"c1","name":"exec"},{"type":"toolUse","id":"c2","name":"x"},{"type":"functionCall","id":"","name":"y"},{"type":"toolCall","id":"c1","name":"dup"}]}),
            json!({"role":"assistant","api":"openai-chatgpt-responses","provider":"openai","stopReason":"error","content":[{"type":"toolCall","id":"c3","name":"exec"}]}),
            json!({"role":"assistant","api":" openai-responses ","provider":"openai","stopReason":"toolUse","content":[{"type":"toolCall","id":"m1","name":" Message "},{"type":"toolCall","id":"m2","name":"exec"}]}),
            json!({"role":"assistant","api":"azure-openai-responses","content":[{"type":"toolCall","id":"m3","name":"message"}]}),
            json!({"role":"assistant","api":"openai-codex-responses","stopReason":"aborted","content":[{"type":"toolCall","id":"m4","name":"message"}]}),
            json!({"role":"assistant","provider":" openclaw ","model":"delivery-mirror","content":[]}),
            json!({"role":"assistant","provider":"openclaw","model":"gateway-injected","api":"openai-responses","content":[{"type":"toolCall","id":"m5","name":"message"}]}),
            json!({"role":"toolResult","toolCallId":" c1 ","content":[]}),
            json!({"role":"toolResult","toolCallId":"","call_id":"m1","content":[]}),
            json!({"role":"toolResult","tool_use_id":"m3","content":[]}),
            json!({"role":"user","content":"hi"}),
            json!({"role":"assistant","content":"plain"}),
        ];
        let mut seed = 7u64;
        let mut next = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as usize
        };
        for round in 0..300 {
            let n = 1 + next() % 12;
            let rows: Vec<Value> = (0..n)
                .map(|i| {
                    let k = next() % (pool.len() + 1);
                    if k == pool.len() {
                        json!({"type":"custom","id":format!("x{i}")})
                    } else {
                        json!({"type":"message","id":format!("r{i}"),"message":pool[k]})
                    }
                })
                .collect();
            let mut missing = MissingResults::default();
            let mut messages = Vec::new();
            for r in &rows {
                if let Some(m) = r.get("message").and_then(Value::as_object) {
                    missing.observe(RepairView::of(m));
                    messages.push(r.clone());
                }
            }
            assert_eq!(
                missing.count(),
                repair::missing_tool_result_count(&messages),
                "round {round}: {rows:?}"
            );
        }
    }
}
