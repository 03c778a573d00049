//! Validation of a transcript with one finding per problem (`claw-transcript check`):
//! torn tails, invalid lines, header problems, duplicate ids, dangling parents, invalid leaf
//! controls, unknown types, orphan tool calls and results, and what the repair pass would
//! rewrite. Streams the file: memory grows with the number of rows, not their size.

use std::borrow::Cow;
use std::collections::hash_map::Entry;
use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::{self, Read};
use std::os::unix::fs::FileExt;
use std::path::Path;

use serde::Deserialize;

use super::entry::is_canonical_type;
use super::partial::{partial_deserialize, visit_object, Skip};
use super::reader::{scan_lines, ReadError};
use crate::fs::data_file::DataPath;
use crate::js;
use crate::report::finding::{Finding, Severity};
#[cfg(test)]
use serde_json::Value;

#[cfg(test)]
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

#[cfg(test)]
fn tool_result_id(m: &Value) -> Option<String> {
    m.as_object()
        .and_then(super::repair::result_id_in)
        .map(String::from)
}

// ---- the fast path: partial parses, borrowed strings, two threads ------------------------

/// A string the check keeps after the line is gone (ids, tool-call ids, type names).
type Text = Box<str>;

/// A string of the line being checked (a copy only when it had escapes).
type Str<'a> = Cow<'a, str>;

fn text(s: Str<'_>) -> Text {
    match s {
        Cow::Borrowed(s) => s.into(),
        Cow::Owned(s) => s.into_boxed_str(),
    }
}

fn trimmed(s: Str<'_>) -> Str<'_> {
    match s {
        Cow::Borrowed(s) => Cow::Borrowed(js::trim(s)),
        Cow::Owned(s) => Cow::Owned(js::trim(&s).to_string()),
    }
}

/// `message.content` as the check looks at it.
#[derive(Debug, Default)]
enum Content<'a> {
    #[default]
    Absent,
    /// A string; whether it is blank.
    Str(bool),
    /// An array: whether empty, whether a text block is blank, the tool-call ids.
    Array(bool, bool, Vec<Str<'a>>),
    Other,
}

/// One content block: whether it is a blank text block, its tool-call id.
#[derive(Debug, Default)]
struct Block<'a>(bool, Option<Str<'a>>);

/// Whether a string is blank (`js::trim(s).is_empty()`), read without keeping the string.
struct Blank(Option<bool>);

partial_deserialize!(Blank, "any JSON value",
    obj: |a| { visit_object(a, &[], |_, _| Ok(()))?; Ok(Blank(None)) },
    seq: |a| { while a.next_element::<Skip>()?.is_some() {} Ok(Blank(None)) },
    other: |s| Blank(s.as_str().map(|t| js::trim(t).is_empty())));

partial_deserialize!(Block<'de>, "a content block",
    obj: |a| {
        let (mut ty, mut id, mut text) = (Scalar::Absent, Scalar::Absent, None);
        visit_object(a, &["type", "id", "text"], |i, a| {
            match i {
                0 => ty = a.next_value()?,
                1 => id = a.next_value()?,
                _ => text = a.next_value::<Blank>()?.0,
            }
            Ok(())
        })?;
        let is_call = matches!(ty.as_str(), Some("toolCall" | "toolUse" | "functionCall"));
        let call = id.into_str().filter(|s| is_call && !s.is_empty());
        Ok(Block(ty.as_str() == Some("text") && text == Some(true), call))
    },
    seq: |a| { while a.next_element::<Skip>()?.is_some() {} Ok(Block::default()) },
    other: |_s| Block::default());

partial_deserialize!(Content<'de>, "message content",
obj: |a| { visit_object(a, &[], |_, _| Ok(()))?; Ok(Content::Other) },
seq: |a| {
    let (mut empty, mut blank, mut calls) = (true, false, Vec::new());
    while let Some(Block(b, call)) = a.next_element::<Block>()? {
        empty = false;
        blank |= b;
        calls.extend(call);
    }
    Ok(Content::Array(empty, blank, calls))
},
other: |s| match s.as_str() {
    Some(t) => Content::Str(js::trim(t).is_empty()),
    None => Content::Other,
});

/// `message.role` as the check sorts it.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Role {
    /// Missing, not a string, or blank.
    Unusable,
    Assistant,
    ToolResult,
    User,
    Other,
}

/// What the check needs of a message object.
#[derive(Debug)]
struct Msg<'a> {
    role: Role,
    /// Tool-call ids (read for any role; used for assistants).
    calls: Vec<Str<'a>>,
    /// `content` is an empty array and `stopReason` is `"error"`.
    empty_error: bool,
    /// The tool-result id (`tool_result_id`: the first non-blank of the keys, trimmed).
    result_id: Option<Str<'a>>,
    /// Blank user text (the `blank-user` rule, read for any role).
    blank_text: bool,
}

/// `message`: an object's facts, or `None` (not an object).
#[derive(Debug, Default)]
struct MsgScan<'a>(Option<Msg<'a>>);

partial_deserialize!(MsgScan<'de>, "a message",
    obj: |a| {
        let mut role = Scalar::Absent;
        let mut content = Content::Absent;
        let mut stop = Scalar::Absent;
        let mut ids: [Scalar; 6] = Default::default();
        let names = ["role", "content", "stopReason", "toolCallId", "toolUseId",
            "tool_call_id", "tool_use_id", "callId", "call_id"];
        visit_object(a, &names, |i, a| {
            match i {
                0 => role = a.next_value()?,
                1 => content = a.next_value()?,
                2 => stop = a.next_value()?,
                _ => ids[i - 3] = a.next_value()?,
            }
            Ok(())
        })?;
        let role = match role.as_str() {
            Some(r) if js::trim(r).is_empty() => Role::Unusable,
            Some("assistant") => Role::Assistant,
            Some("toolResult") => Role::ToolResult,
            Some("user") => Role::User,
            Some(_) => Role::Other,
            None => Role::Unusable,
        };
        let result_id = ids
            .into_iter()
            .filter_map(Scalar::into_str)
            .map(trimmed)
            .find(|s| !s.is_empty());
        let (calls, empty_error, blank_text) = match content {
            Content::Array(empty, blank, calls) => {
                (calls, empty && stop.as_str() == Some("error"), blank)
            }
            Content::Str(blank) => (Vec::new(), false, blank),
            _ => (Vec::new(), false, false),
        };
        Ok(MsgScan(Some(Msg { role, calls, empty_error, result_id, blank_text })))
    },
    seq: |a| { while a.next_element::<Skip>()?.is_some() {} Ok(MsgScan(None)) },
    other: |_s| MsgScan(None));

/// `parentId` as the check reads it.
#[derive(Debug)]
enum Parent<'a> {
    Absent,
    Null,
    Id(Str<'a>),
    Invalid,
}

/// What the check needs of an object row.
#[derive(Debug)]
struct Row<'a> {
    ty: Option<Str<'a>>,
    /// `id` when it is a string (empty included).
    id: Option<Str<'a>>,
    /// The header's version rule: absent or null ⇒ 1, a number, anything else ⇒ `None`.
    version: Option<f64>,
    /// `timestamp` is a string `Date.parse` reads.
    ts_ok: bool,
    /// `cwd` is a non-empty string.
    cwd_ok: bool,
    parent: Parent<'a>,
    /// `targetId` by the leaf-control rule: null ⇒ `Some(None)`, a non-empty string.
    leaf_target: Option<Option<Str<'a>>>,
    /// `appendParentId` by the leaf-control rule.
    leaf_append: Option<Option<Option<Str<'a>>>>,
    /// `appendMode` absent or `"side"`.
    mode_ok: bool,
    /// `targetId` when it is a string (labels).
    label_target: Option<Str<'a>>,
    /// `firstKeptEntryId` when it is a string.
    first_kept: Option<Str<'a>>,
    message: Option<Msg<'a>>,
}

/// A parsed line: an object row, or `None` (JSON that is not an object).
#[derive(Debug)]
struct RowScan<'a>(Option<Row<'a>>);

partial_deserialize!(RowScan<'de>, "a transcript row",
    obj: |a| {
        let mut f: [Scalar; 10] = Default::default();
        let mut message = MsgScan(None);
        let names = ["type", "id", "version", "timestamp", "cwd", "parentId", "targetId",
            "appendParentId", "appendMode", "firstKeptEntryId", "message"];
        visit_object(a, &names, |i, a| {
            if i < 10 {
                f[i] = a.next_value()?;
            } else {
                message = a.next_value()?;
            }
            Ok(())
        })?;
        let [ty, id, version, ts, cwd, parent, target, append, mode, first_kept] = f;
        let version = match version {
            Scalar::Absent | Scalar::Null => Some(1.0),
            Scalar::Num(v) => Some(v),
            _ => None,
        };
        let ts_ok = ts.as_str().is_some_and(|t| js::date_parse(t).is_some());
        let cwd_ok = cwd.as_str().is_some_and(|c| !c.is_empty());
        let mode_ok = matches!(&mode, Scalar::Absent) || mode.as_str() == Some("side");
        let leaf_append = match append {
            Scalar::Absent => Some(None),
            Scalar::Null => Some(Some(None)),
            s => s.into_str().filter(|s| !s.is_empty()).map(|s| Some(Some(s))),
        };
        let (leaf_target, label_target) = match target {
            Scalar::Null => (Some(None), None),
            s => {
                let s = s.into_str();
                (s.clone().filter(|s| !s.is_empty()).map(Some), s)
            }
        };
        Ok(RowScan(Some(Row {
            ty: ty.into_str(),
            id: id.into_str(),
            version,
            ts_ok,
            cwd_ok,
            parent: match parent {
                Scalar::Absent => Parent::Absent,
                Scalar::Null => Parent::Null,
                Scalar::Str(s) => Parent::Id(s),
                _ => Parent::Invalid,
            },
            leaf_target,
            leaf_append,
            mode_ok,
            label_target,
            first_kept: first_kept.into_str(),
            message: message.0,
        })))
    },
    seq: |a| { while a.next_element::<Skip>()?.is_some() {} Ok(RowScan(None)) },
    other: |_s| RowScan(None));

/// One non-blank line, read (handed on at once, never stored: no need to box the row).
#[derive(Debug)]
#[allow(clippy::large_enum_variant)]
enum Scanned<'a> {
    /// Not JSON: the parser's message, whether a newline ended it, its length.
    Invalid(String, bool, usize),
    /// JSON, but not an object.
    NotObject,
    /// An object row.
    Row(Row<'a>),
}

/// Reads one line as the whole-`Value` check does and hands what it needs to `f` (`None`:
/// a blank line). Lines that are not JSON, and the one input the partial parse leaves to a
/// whole-value parse, are parsed whole, so the messages are the same.
fn scan_line<R>(raw: &[u8], terminated: bool, f: impl FnOnce(Scanned<'_>) -> R) -> Option<R> {
    let text = match std::str::from_utf8(raw) {
        Ok(s) => Cow::Borrowed(s),
        Err(_) => String::from_utf8_lossy(raw),
    };
    if js::trim(&text).is_empty() {
        return None;
    }
    // A line that may hold a reserved code point is read whole, as `JSON.parse` reads it.
    let partial = if crate::js::jsjson::may_hold_reserved(&text) {
        Err(())
    } else {
        serde_json::from_str::<RowScan>(&text).map_err(|_| ())
    };
    Some(match partial {
        Ok(RowScan(Some(r))) => f(Scanned::Row(r)),
        Ok(RowScan(None)) => f(Scanned::NotObject),
        Err(_) => match crate::js::jsjson::parse_value(&text) {
            Ok(v) => match RowScan::deserialize(&v) {
                Ok(RowScan(Some(r))) => f(Scanned::Row(r)),
                Ok(RowScan(None)) => f(Scanned::NotObject),
                Err(e) => f(Scanned::Invalid(e.to_string(), terminated, raw.len())),
            },
            Err(e) => f(Scanned::Invalid(e.to_string(), terminated, raw.len())),
        },
    })
}

/// Reads bytes `start..end` of `file` (`end` `None`: to its end, however long it grows).
struct RangeReader<'a> {
    file: &'a File,
    pos: u64,
    end: Option<u64>,
}

impl Read for RangeReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let want = match self.end {
            Some(e) => buf.len().min(e.saturating_sub(self.pos) as usize),
            None => buf.len(),
        };
        if want == 0 {
            return Ok(0);
        }
        let n = self.file.read_at(&mut buf[..want], self.pos)?;
        self.pos += n as u64;
        Ok(n)
    }
}

/// Where to cut `file` (of `size` bytes) into `parts` stretches: just after a newline near
/// each even share, so that every stretch holds whole lines.
fn cut_points(file: &File, size: u64, parts: usize) -> io::Result<Vec<u64>> {
    let mut cuts = vec![0u64];
    let mut buf = vec![0u8; 64 * 1024];
    for k in 1..parts {
        let mut pos = (size * k as u64 / parts as u64).max(*cuts.last().unwrap_or(&0));
        let cut = loop {
            if pos >= size {
                break size;
            }
            let n = file.read_at(&mut buf, pos)?;
            if n == 0 {
                break size;
            }
            if let Some(i) = memchr::memchr(b'\n', &buf[..n]) {
                break pos + i as u64 + 1;
            }
            pos += n as u64;
        };
        cuts.push(cut);
    }
    Ok(cuts)
}

/// The header version the rules use after the file's first row, when that row lies before
/// byte `end` (`Some(None)`: the first row is not a header).
fn first_row_version(file: &File, end: u64) -> io::Result<Option<Option<f64>>> {
    let mut found = None;
    let reader = RangeReader {
        file,
        pos: 0,
        end: Some(end),
    };
    scan_lines(reader, |l| {
        let row = scan_line(l.bytes, l.terminated, |s| match s {
            Scanned::Invalid(..) => None,
            Scanned::NotObject => Some(None),
            Scanned::Row(r) => {
                let header = r.ty.as_deref() == Some("session") && r.id.is_some();
                Some(if header { r.version } else { None })
            }
        });
        found = row.flatten();
        found.is_none()
    })?;
    Ok(found)
}

/// Files smaller than this are checked on one thread.
const PARALLEL_MIN_BYTES: u64 = 8 << 20;

/// The hasher of the id sets: ids are many and short, and SipHash was a tenth of the check.
/// Randomly seeded per process; the sets are only asked, never listed.
type IdHash = foldhash::fast::RandomState;

/// A leaf control's target and append parent, for the check against earlier ids.
type LeafRefs = (Option<Text>, Option<Option<Text>>);

/// The line-by-line rules over one stretch of lines, and what they found there (line
/// numbers counted from 1 inside the stretch until [`Evaluator::absorb`] places them).
/// Instead of every row's tree fields it keeps the ids (with their first lines) and what
/// can only be judged once all ids are known.
struct Evaluator<'p> {
    path: &'p Path,
    findings: Vec<Finding>,
    rows: usize,
    first_row: bool,
    header_version: Option<f64>,
    /// Every row id, with the line it first appears on.
    ids: HashMap<Text, usize, IdHash>,
    /// The id of the last row that had one.
    prev_id: String,
    /// Rows whose id appeared before.
    dups: Vec<(usize, Text)>,
    /// Rows (not leaf controls) whose parent was not among the ids read so far.
    unresolved: Vec<(usize, Text)>,
    leaves: Vec<(usize, LeafRefs)>,
    tool_calls: Vec<(usize, Text)>,
    tool_results: Vec<(usize, Text)>,
    labels: Vec<(usize, Text)>,
    first_kept: Vec<(usize, Text)>,
    unknown_types: HashMap<Text, (usize, usize)>,
    lines: usize,
    blank: usize,
    crlf: usize,
    bytes: u64,
}

impl<'p> Evaluator<'p> {
    /// For a stretch that starts the file (`first_row`), or one after the file's first row
    /// (with the header version it set).
    fn new(path: &'p Path, first_row: bool, header_version: Option<f64>) -> Self {
        Evaluator {
            path,
            findings: Vec::new(),
            rows: 0,
            first_row,
            header_version,
            ids: HashMap::with_hasher(IdHash::default()),
            prev_id: String::new(),
            dups: Vec::new(),
            unresolved: Vec::new(),
            leaves: Vec::new(),
            tool_calls: Vec::new(),
            tool_results: Vec::new(),
            labels: Vec::new(),
            first_kept: Vec::new(),
            unknown_types: HashMap::new(),
            lines: 0,
            blank: 0,
            crlf: 0,
            bytes: 0,
        }
    }

    /// Runs the rules over bytes `start..end` of `file`.
    fn scan(&mut self, file: &File, start: u64, end: Option<u64>) -> io::Result<()> {
        // Room for an id per ~768 bytes up front (rows are rarely shorter), so that the map
        // seldom grows while it is large.
        if let Some(e) = end.or_else(|| file.metadata().ok().map(|m| m.len())) {
            self.ids
                .reserve((e.saturating_sub(start) / 768).min(1 << 24) as usize);
        }
        let reader = RangeReader {
            file,
            pos: start,
            end,
        };
        self.bytes = scan_lines(reader, |l| {
            self.lines = l.number;
            if l.bytes.last() == Some(&b'\r') {
                self.crlf += 1;
            }
            if scan_line(l.bytes, l.terminated, |s| self.line(l.number, s)).is_none() {
                self.blank += 1;
            }
            true
        })?;
        Ok(())
    }

    /// Appends what the stretch after this one found, its line numbers moved past ours.
    fn absorb(&mut self, other: Evaluator) {
        let base = self.lines;
        let at = |(l, t): (usize, Text)| (l + base, t);
        self.findings
            .extend(other.findings.into_iter().map(|mut f| {
                f.line = f.line.map(|l| l + base);
                f
            }));
        self.ids.reserve(other.ids.len());
        for (id, line) in other.ids {
            match self.ids.entry(id) {
                Entry::Occupied(e) => self.dups.push((line + base, e.key().clone())),
                Entry::Vacant(e) => {
                    e.insert(line + base);
                }
            }
        }
        self.dups.extend(other.dups.into_iter().map(at));
        self.unresolved.extend(other.unresolved.into_iter().map(at));
        self.leaves
            .extend(other.leaves.into_iter().map(|(l, r)| (l + base, r)));
        self.tool_calls.extend(other.tool_calls.into_iter().map(at));
        self.tool_results
            .extend(other.tool_results.into_iter().map(at));
        self.labels.extend(other.labels.into_iter().map(at));
        self.first_kept.extend(other.first_kept.into_iter().map(at));
        for (t, (line, n)) in other.unknown_types {
            let e = self.unknown_types.entry(t).or_insert((line + base, 0));
            e.1 += n;
        }
        self.rows += other.rows;
        self.lines += other.lines;
        self.blank += other.blank;
        self.crlf += other.crlf;
        self.bytes += other.bytes;
    }

    fn add(
        &mut self,
        line: Option<usize>,
        severity: Severity,
        code: &'static str,
        message: String,
    ) {
        self.findings.push(Finding {
            path: self.path.to_path_buf(),
            line,
            severity,
            code,
            message,
        });
    }

    fn line(&mut self, line: usize, s: Scanned<'_>) {
        let l = Some(line);
        let r = match s {
            Scanned::Invalid(e, terminated, len) => {
                if terminated {
                    self.add(l, Severity::Error, "invalid-json", format!("not valid JSON ({e}); the gateway skips this line and its repair pass drops it"));
                } else {
                    self.add(l, Severity::Error, "torn-tail", format!("the last line is cut off ({len} bytes, {e}); an append will start a new line after it, repair --trim-torn-tail removes it"));
                }
                return;
            }
            Scanned::NotObject => {
                self.rows += 1;
                self.add(
                    l,
                    Severity::Error,
                    "not-an-object",
                    "the line is JSON but not an object".into(),
                );
                self.first_row = false;
                return;
            }
            Scanned::Row(r) => r,
        };
        self.rows += 1;
        let Row {
            ty,
            id: raw_id,
            version,
            ts_ok,
            cwd_ok,
            parent,
            leaf_target,
            leaf_append,
            mode_ok,
            label_target,
            first_kept,
            message,
        } = r;
        let ty = ty.as_deref();
        let hv2 = self.header_version.is_some_and(|v| v >= 2.0);
        if self.first_row {
            self.first_row = false;
            if ty == Some("session") && raw_id.is_some() {
                self.header_version = version;
                match version {
                    Some(v) if v < 3.0 => self.add(l, Severity::Warning, "legacy-version", format!("schema version {v} (the gateway migrates it to 3 and rewrites the file on its next load; see `migrate`)")),
                    Some(v) if v > 3.0 => self.add(l, Severity::Warning, "future-version", format!("schema version {v} is newer than 3")),
                    None => self.add(l, Severity::Error, "header-invalid", "the header's version is not a number".into()),
                    _ => {}
                }
                if raw_id.as_deref() == Some("") {
                    self.add(
                        l,
                        Severity::Error,
                        "header-invalid",
                        "the header's id is empty".into(),
                    );
                }
                if !ts_ok {
                    self.add(
                        l,
                        Severity::Warning,
                        "header-invalid",
                        "the header has no valid timestamp".into(),
                    );
                }
                if !cwd_ok {
                    self.add(
                        l,
                        Severity::Warning,
                        "header-invalid",
                        "the header has no cwd".into(),
                    );
                }
                return;
            }
            self.add(l, Severity::Error, "header-missing", "the first row is not a session header; the gateway would copy the file to .corrupt-<ts>-<hex>.jsonl and rewrite it (see `repair`)".into());
        }
        if ty == Some("session") {
            self.add(
                l,
                Severity::Warning,
                "extra-header",
                "a second session header (kept as an opaque row)".into(),
            );
            return;
        }
        let id = raw_id.filter(|s| !s.is_empty());
        let parent = match parent {
            Parent::Absent => None,
            Parent::Null => Some(None),
            Parent::Id(s) => Some(Some(s)),
            Parent::Invalid => {
                self.add(
                    l,
                    Severity::Error,
                    "invalid-parent",
                    "parentId is neither a string nor null".into(),
                );
                Some(None)
            }
        };
        let mut leaf = None;
        match ty {
            None => self.add(l, Severity::Warning, "missing-type", "the row has no string type (kept as an opaque row)".into()),
            Some("leaf") => match (id.is_some(), parent.is_some(), leaf_target, leaf_append, mode_ok) {
                (true, true, Some(t), Some(a), true) => leaf = Some((t, a)),
                _ => self.add(l, Severity::Error, "invalid-leaf-control", "a leaf control row with a missing or malformed id, parentId, targetId, appendParentId or appendMode (ignored)".into()),
            },
            Some(t) if is_canonical_type(t) => {
                if id.is_none() && hv2 {
                    self.add(l, Severity::Warning, "missing-id", format!("a {t} row without an id is ignored by the gateway's tree"));
                }
                if parent.is_none() && id.is_some() && hv2 {
                    self.add(l, Severity::Info, "parentless", "no parentId: chained after the row before it (an older appender wrote it)".into());
                }
                if !ts_ok {
                    let sev = if matches!(t, "compaction" | "custom_message" | "branch_summary") { Severity::Error } else { Severity::Warning };
                    self.add(l, sev, "bad-timestamp", format!("the {t} row's timestamp is missing or not a date{}", if sev == Severity::Error { " (rebuilding the context fails on it)" } else { "" }));
                }
                match t {
                    "message" => match message {
                        Some(m) => {
                            if m.role == Role::Unusable {
                                self.add(l, Severity::Error, "invalid-role", "message row without a usable role (the gateway loads it into the context; its repair pass drops it)".into());
                            }
                            if m.role == Role::Assistant {
                                self.tool_calls.extend(m.calls.into_iter().map(|c| (line, text(c))));
                                if m.empty_error {
                                    self.add(l, Severity::Warning, "empty-error-assistant", "an errored assistant turn without content (repair rewrites it)".into());
                                }
                            }
                            if m.role == Role::ToolResult {
                                match m.result_id {
                                    Some(r) => self.tool_results.push((line, text(r))),
                                    None => self.add(l, Severity::Warning, "orphan-tool-result", "a tool result without a tool call id".into()),
                                }
                            }
                            if m.role == Role::User && m.blank_text {
                                self.add(l, Severity::Warning, "blank-user", "blank user text (repair rewrites it to \"(continue)\")".into());
                            }
                        }
                        None => self.add(l, Severity::Error, "invalid-role", "message row whose message is not an object".into()),
                    },
                    "label" => {
                        if let Some(tgt) = label_target {
                            self.labels.push((line, text(tgt)));
                        }
                    }
                    "compaction" => match first_kept {
                        Some(fk) => self.first_kept.push((line, text(fk))),
                        None if hv2 => self.add(l, Severity::Warning, "compaction-invalid", "a compaction without firstKeptEntryId".into()),
                        None => {}
                    },
                    _ => {}
                }
            }
            Some(t) => {
                let e = self.unknown_types.entry(t.into()).or_insert((line, 0));
                e.1 += 1;
            }
        }
        // The row as a tree fact: its id, its parent (judged once every id is known,
        // unless already read), its leaf references (judged against the ids before it).
        if let Some(id) = &id {
            match self.ids.entry(text(id.clone())) {
                Entry::Occupied(e) => self.dups.push((line, e.key().clone())),
                Entry::Vacant(e) => {
                    e.insert(line);
                }
            }
        }
        if let Some(Some(p)) = parent {
            // The row before is the usual parent, and its id is known.
            let known =
                (!self.prev_id.is_empty() && *p == *self.prev_id) || self.ids.contains_key(&*p);
            if ty != Some("leaf") && !known {
                self.unresolved.push((line, text(p)));
            }
        }
        if let Some(id) = id {
            self.prev_id.clear();
            self.prev_id.push_str(&id);
        }
        if let Some((t, a)) = leaf {
            self.leaves
                .push((line, (t.map(text), a.map(|a| a.map(text)))));
        }
    }
}

/// Checks one transcript file.
///
/// The file is read in stretches of whole lines, on two threads for large files; each line
/// is parsed only as far as the checks look (see [`super::partial`]: the same lines are
/// accepted as by a whole-`Value` parse, and the same messages reported for the rest), and
/// the findings come out exactly as a single pass over whole values gives them.
pub fn check_file(path: &DataPath) -> Result<CheckReport, ReadError> {
    check_file_in(path, None)
}

/// [`check_file`] in `parts` stretches (`None`: by the file's size and the cores).
fn check_file_in(data: &DataPath, parts: Option<usize>) -> Result<CheckReport, ReadError> {
    let file = super::reader::open(data)?;
    let path = data.path();
    let io_err = |e| ReadError::io(path, e);
    let size = file.metadata().map_err(io_err)?.len();
    let parts = parts.unwrap_or_else(|| {
        if size < PARALLEL_MIN_BYTES {
            1
        } else {
            std::thread::available_parallelism().map_or(1, |n| n.get().clamp(1, 8))
        }
    });
    let mut ev = Evaluator::new(path, true, None);
    let cuts = if parts > 1 {
        cut_points(&file, size, parts).map_err(io_err)?
    } else {
        Vec::new()
    };
    // The stretches after the first need the header version; a file whose first row is
    // not in the first stretch is read on one thread.
    let version = match cuts.get(1) {
        Some(&end) => first_row_version(&file, end).map_err(io_err)?,
        None => None,
    };
    match version {
        None => ev.scan(&file, 0, None).map_err(io_err)?,
        Some(version) => {
            let file = &file;
            std::thread::scope(|scope| -> Result<(), ReadError> {
                let workers: Vec<_> = (1..cuts.len())
                    .map(|k| {
                        let (start, end) = (cuts[k], cuts.get(k + 1).copied());
                        scope.spawn(move || {
                            let mut ev = Evaluator::new(path, false, version);
                            ev.scan(file, start, end).map(|()| ev)
                        })
                    })
                    .collect();
                ev.scan(file, 0, Some(cuts[1])).map_err(io_err)?;
                for w in workers {
                    let other = w
                        .join()
                        .unwrap_or_else(|p| std::panic::resume_unwind(p))
                        .map_err(io_err)?;
                    ev.absorb(other);
                }
                Ok(())
            })?;
        }
    }
    let mut report = CheckReport {
        rows: ev.rows,
        lines: ev.lines,
        bytes: ev.bytes,
        ..CheckReport::default()
    };
    let Evaluator {
        mut findings,
        ids,
        mut dups,
        unresolved,
        leaves,
        tool_calls,
        tool_results,
        labels,
        first_kept,
        unknown_types,
        crlf,
        blank,
        ..
    } = ev;
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
    if report.rows == 0 && findings.is_empty() {
        add(
            &mut findings,
            None,
            Severity::Warning,
            "empty",
            "the file has no rows (the gateway writes a fresh header on its next load)".into(),
        );
    }
    // Tree checks, in the order of the single pass: duplicate ids, then dangling parents
    // and leaf controls naming entries not written before them, by line.
    dups.sort_by_key(|d| d.0);
    for (line, id) in &dups {
        let first = ids.get(id).copied().unwrap_or(*line);
        add(&mut findings, Some(*line), Severity::Error, "duplicate-id", format!("id {id:?} was already used on line {first} (SessionManager keeps this row, the rewrite reader the first)"));
    }
    let mut tree: Vec<Finding> = Vec::new();
    for (line, p) in &unresolved {
        if !ids.contains_key(p) {
            add(
                &mut tree,
                Some(*line),
                Severity::Warning,
                "dangling-parent",
                format!("parent {p:?} does not exist: the active branch would start here"),
            );
        }
    }
    for (line, (t, a)) in &leaves {
        let known = |x: &Option<Text>| {
            x.as_deref()
                .is_none_or(|x| ids.get(x).is_some_and(|first| first < line))
        };
        if !known(t) || !a.as_ref().is_none_or(known) {
            add(&mut tree, Some(*line), Severity::Error, "invalid-leaf-control", "the leaf control names an entry not written before it (ignored; bounded history reads show nothing)".into());
        }
    }
    tree.sort_by_key(|f| f.line);
    findings.extend(tree);
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
        if !ids.contains_key(tgt) {
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
        if !ids.contains_key(fk) {
            add(&mut findings, Some(*line), Severity::Warning, "compaction-first-kept-unknown", format!("firstKeptEntryId {fk:?} does not exist: the context keeps nothing before the summary"));
        }
    }
    let mut result_ids: HashSet<&str, IdHash> =
        HashSet::with_capacity_and_hasher(tool_results.len(), IdHash::default());
    result_ids.extend(tool_results.iter().map(|(_, r)| &**r));
    let mut call_ids: HashSet<&str, IdHash> =
        HashSet::with_capacity_and_hasher(tool_calls.len(), IdHash::default());
    call_ids.extend(tool_calls.iter().map(|(_, c)| &**c));
    for (line, c) in &tool_calls {
        if !result_ids.contains(&**c) {
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
        if !call_ids.contains(&**r) {
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
    findings.sort_by_key(|f| (f.line.unwrap_or(usize::MAX), f.severity == Severity::Info));
    report.findings = findings;
    Ok(report)
}

/// [`check_file`] as first written: one thread, every line parsed into a whole `Value`.
/// The tests hold the fast path to it, so it stays as it was written.
#[cfg(test)]
#[allow(clippy::nonminimal_bool, clippy::redundant_pattern_matching)]
fn check_file_reference(data: &DataPath) -> Result<CheckReport, ReadError> {
    let file = super::reader::open(data)?;
    let path = data.path();
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
        if js::trim(&text).is_empty() {
            blank += 1;
            return true;
        }
        let parsed: Result<Value, _> = crate::js::jsjson::parse_value(&text);
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
                if !o.get("timestamp").and_then(Value::as_str).is_some_and(|t| js::date_parse(t).is_some()) {
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
                if !o.get("timestamp").and_then(Value::as_str).is_some_and(|s| js::date_parse(s).is_some()) {
                    let sev = if matches!(t, "compaction" | "custom_message" | "branch_summary") { Severity::Error } else { Severity::Warning };
                    add(&mut findings, Some(l.number), sev, "bad-timestamp", format!("the {t} row's timestamp is missing or not a date{}", if sev == Severity::Error { " (rebuilding the context fails on it)" } else { "" }));
                }
                match t {
                    "message" => match o.get("message") {
                        Some(m) if m.is_object() => {
                            let role = m.get("role").and_then(Value::as_str);
                            match role {
                                Some(r) if !js::trim(r).is_empty() => {}
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
                                    Some(Value::String(s)) => js::trim(s).is_empty(),
                                    Some(Value::Array(b)) => b.iter().any(|x| x.get("type").and_then(Value::as_str) == Some("text") && x.get("text").and_then(Value::as_str).is_some_and(|t| js::trim(t).is_empty())),
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

    fn same_report(path: &Path, what: &str) {
        let path = &DataPath::given(path);
        let want = check_file_reference(path).unwrap();
        for parts in [None, Some(1), Some(2), Some(3), Some(7)] {
            let got = check_file_in(path, parts).unwrap();
            if got.findings != want.findings {
                let i = (0..)
                    .find(|&i| got.findings.get(i) != want.findings.get(i))
                    .unwrap_or(0);
                panic!(
                    "{what} in {parts:?} parts: finding {i}: {:?} != {:?}",
                    got.findings.get(i),
                    want.findings.get(i)
                );
            }
            assert_eq!(
                (got.lines, got.rows, got.bytes),
                (want.lines, want.rows, want.bytes),
                "{what} in {parts:?} parts"
            );
        }
    }

    #[test]
    fn the_fast_check_finds_what_the_plain_one_finds() {
        let d = tempfile::tempdir().unwrap();
        for seed in 0..40u64 {
            let p = d.path().join(format!("t{seed}.jsonl"));
            let rows = [0, 1, 3, 30, 300][seed as usize % 5];
            std::fs::write(&p, crate::transcript::testgen::transcript(seed, rows)).unwrap();
            same_report(&p, &format!("seed {seed}"));
        }
        let header = r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}"#;
        let mut cases: Vec<(String, Vec<u8>)> = vec![
            ("empty".into(), Vec::new()),
            ("blank only".into(), b"\n  \n\r\n".to_vec()),
            ("torn only".into(), b"{\"type\":".to_vec()),
            ("no trailing newline".into(), format!("{header}\n{}", r#"{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"x"}}"#).into_bytes()),
            ("crlf everywhere".into(), format!("{header}\r\n{}\r\n", r#"{"type":"label","id":"l","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","targetId":"q"}"#).into_bytes()),
            ("bom".into(), format!("\u{feff}{header}\n").into_bytes()),
        ];
        for v in [
            "null",
            "2",
            "1.5",
            "4",
            "\"3\"",
            "[3]",
            "-0.0",
            "1e2",
            "18446744073709551615",
            "{}",
        ] {
            let text = format!(
                "{{\"type\":\"session\",\"version\":{v},\"id\":\"\",\"timestamp\":5,\"cwd\":\"\"}}\n{}\n{}\n",
                r#"{"type":"message","timestamp":"x","message":{"role":"user","content":[]}}"#,
                r#"{"type":"compaction","id":"c"}"#
            );
            cases.push((format!("version {v}"), text.into_bytes()));
        }
        let rows = [
            r#"{"type":"message","id":"m1","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"c1"},{"type":"toolUse","id":""},{"type":"functionCall","id":"c2","id":"c3"},{"type":"text","text":"  "},"str",[1],{"type":"toolCall","id":5}],"stopReason":"error"}}"#,
            r#"{"type":"message","id":"m2","parentId":"m1","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"assistant","content":[],"stopReason":"error","content":[]}}"#,
            r#"{"type":"message","id":"m3","parentId":"m2","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"toolResult","toolCallId":"  ","toolUseId":7,"call_id":" c3 "}}"#,
            r#"{"type":"message","id":"m4","parentId":"m3","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"toolResult","toolCallId":"x","toolCallId":null}}"#,
            r#"{"type":"message","id":"m5","parentId":"m4","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"\u00a0\u3000"}}"#,
            r#"{"type":"message","id":"m6","parentId":"m5","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":[{"type":"text","text":"\n"},{"type":"text","text":"ok"}]}}"#,
            r#"{"type":"message","id":"m7","parentId":"m6","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":" ","content":"x"}}"#,
            r#"{"type":"message","id":"m8","parentId":"m7","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":5}}"#,
            r#"{"type":"message","id":"m9","parentId":"m8","timestamp":"2026-01-01T00:00:00.000Z","message":"text"}"#,
            r#"{"type":"message","id":"m9","parentId":"m9","timestamp":"2026-01-01T00:00:00.000Z"}"#,
            r#"{"type":"message","id":"m10","parentId":7,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"x"}}"#,
            r#"{"type":"message","id":"m11","parentId":"m10","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"assistant","content":{"a":[{"type":"toolCall","id":"hidden"}]},"stopReason":"error"}}"#,
            r#"{"type":"message","id":"m12","parentId":"m11","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":[{"type":"text","text":{"x":" "}},{"type":"text"}],"content":[{"type":"text","text":"\t"}]}}"#,
            r#"{"type":"leaf","id":"l1","parentId":"m1","targetId":null}"#,
            r#"{"type":"leaf","id":"l2","parentId":"m1","targetId":"m1","appendParentId":null,"appendMode":"side"}"#,
            r#"{"type":"leaf","id":"l3","parentId":"m1","targetId":"zz","appendParentId":"m2"}"#,
            r#"{"type":"leaf","id":"l4","parentId":"m1","targetId":"m1","appendMode":"other"}"#,
            r#"{"type":"leaf","id":"l5","targetId":"","appendParentId":""}"#,
            r#"{"type":"leaf","id":"l6","parentId":"m1","targetId":"later"}"#,
            r#"{"type":"leaf","id":"l7","parentId":null,"targetId":"m1","appendParentId":7}"#,
            r#"{"type":"leaf","id":"self","parentId":"m1","targetId":"self"}"#,
            r#"{"type":"leaf","id":"self2","parentId":"m1","targetId":"m1","appendParentId":"self2"}"#,
            r#"{"type":"leaf","id":"l8","parentId":"m1","targetId":"m1","appendParentId":"later"}"#,
            r#"{"type":"message","id":"selfp","parentId":"selfp","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"x"}}"#,
            r#"{"type":"label","id":"lb","parentId":"m1","timestamp":"2026-01-01T00:00:00.000Z","targetId":""}"#,
            r#"{"type":"label","id":"lb2","parentId":"m1","timestamp":"2026-01-01T00:00:00.000Z","targetId":"m3"}"#,
            r#"{"type":"compaction","id":"c1","parentId":"m1","timestamp":"2026-01-01T00:00:00.000Z","firstKeptEntryId":"gone"}"#,
            r#"{"type":"compaction","id":"c2","parentId":"m1","timestamp":"2026-01-01T00:00:00.000Z","firstKeptEntryId":1}"#,
            r#"{"type":"branch_summary","id":"b","parentId":"m1","timestamp":"nope"}"#,
            r#"{"type":"custom_message","id":"cm","parentId":"m1"}"#,
            r#"{"type":"session","id":"again"}"#,
            r#"{"type":"weird","id":"w1"}"#,
            r#"{"type":"weird","id":"w2"}"#,
            r#"{"type":"other\"kind","id":"w3"}"#,
            r#"{"type":7,"id":"t7"}"#,
            r#"{"id":"notype","parentId":"m1"}"#,
            r#"{"type":"message","type":"leaf","id":"dup","id":"dup2","parentId":"m1","targetId":"m1"}"#,
            r#"{"type":"m\u0065ssage","id":"esc","parentId":"m1","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"\u0075ser","content":"hi"}}"#,
            r#"{"type":"message","id":"later","parentId":"m1","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"x"}}"#,
            r#"{"$serde_json::private::RawValue":"{\"type\":\"message\",\"id\":\"raw\",\"parentId\":\"nope\"}"}"#,
            r#"{"$serde_json::private::RawValue":"[1,2]"}"#,
            r#"{"$serde_json::private::RawValue":"{bad"}"#,
            r#"{"type":"message","id":"x","message":{"content":{"$serde_json::private::RawValue":"1"},"role":"user"}}"#,
            r#"{"type":"message","id":"big","parentId":"m1","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":1e400}}"#,
            r#"{"type":"message","id":"sur","parentId":"m1","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"\ud800"}}"#,
            r#"[1,2]"#,
            r#"{"a":1} trailing"#,
        ];
        let mut all = format!("{header}\n");
        for r in rows {
            all.push_str(r);
            all.push('\n');
        }
        all.push_str("\n   \n");
        all.push_str(&format!(
            "{}{}{}\n",
            r#"{"type":"message","id":"huge","parentId":"m1","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":""#,
            "y".repeat(3 << 20),
            r#""}}"#
        ));
        all.push_str(r#"{"type":"message","id":"torn","message":{"role":"us"#);
        cases.push(("rows".into(), all.into_bytes()));
        // Invalid UTF-8.
        let mut b = header.as_bytes().to_vec();
        b.extend_from_slice(b"\n{\"type\":\"message\",\"id\":\"\xff\xfe\",\"parentId\":null,\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"message\":{\"role\":\"user\",\"content\":\"\xc3\"}}\n");
        b.extend_from_slice(b"{\"type\":\"label\",\"id\":\"\xff\xfe\"}\r\n\xff\n");
        cases.push(("invalid utf-8".into(), b));
        for (i, (name, text)) in cases.iter().enumerate() {
            let p = d.path().join(format!("case{i}.jsonl"));
            std::fs::write(&p, text).unwrap();
            same_report(&p, name);
        }
    }

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
        let r = check_file(&DataPath::given(&p)).unwrap();
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
