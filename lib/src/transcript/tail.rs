//! Bounded reads from the end of a transcript (`transcript.md` §3.4) and the history pages
//! built on them (§3.2), the full visible-message index for offset pages (§3.5), and
//! following a file as it grows (`tail --follow`).
//!
//! The tail readers read backwards only as far as the newest `maxLines` lines need, inside
//! the gateway's byte window, so their cost does not grow with the file.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::os::unix::fs::FileExt;
use std::sync::LazyLock;
use std::time::Duration;

use regex::Regex;
use serde_json::{json, Map, Value};

use super::entry::js_slice_prefix;
use super::history::{self, ChatHistory};
use super::reader::{scan_lines, ReadError};
use super::tree::{scan_tree, select_path, ScanTree};
use crate::fs::data_file::DataPath;
use crate::js;

/// Lines longer than this many bytes are not parsed: a placeholder stands in.
pub const MAX_PARSE_LINE_BYTES: usize = 256 * 1024;
/// The default byte window of the recent-messages reader.
pub const RECENT_MESSAGES_MAX_BYTES: u64 = 8 * 1024 * 1024;
/// The byte window `chat.history` asks for (`max(2 × 6 MiB, 1 MiB)`).
pub const CHAT_HISTORY_TAIL_BYTES: u64 = 12 * 1024 * 1024;
const OVERSIZED_PLACEHOLDER: &str = "[chat.history omitted: message too large]";

/// The last `max_lines` non-blank lines inside the last `max_bytes` bytes of `file`, as
/// `readRecentTranscriptTailLines` returns them (the window's first line is dropped when
/// the window does not start at offset 0; `\r\n` endings removed), reading backwards only
/// as far as needed.
pub fn read_tail_lines(file: &File, max_bytes: u64, max_lines: usize) -> io::Result<Vec<String>> {
    read_tail_lines_to(file, file.metadata()?.len(), max_bytes, max_lines)
}

/// [`read_tail_lines`] of the file's first `size` bytes (what it held when a reader
/// looked at it: bytes appended since are left to a [`Follower`]).
pub fn read_tail_lines_to(
    file: &File,
    size: u64,
    max_bytes: u64,
    max_lines: usize,
) -> io::Result<Vec<String>> {
    let size = size.min(file.metadata()?.len());
    let window = size.min(max_bytes.max(1024));
    let read_start = size - window;
    let mut out_rev: Vec<String> = Vec::new();
    if max_lines == 0 || size == 0 {
        return Ok(out_rev);
    }
    let mut pos = size;
    let mut chunk = 64 * 1024u64;
    let mut carry: Vec<u8> = Vec::new();
    let mut trailing = true; // the segment after the last '\n' is not '\n'-terminated
    let push = |seg: &[u8], terminated: bool, out: &mut Vec<String>| {
        let seg = if terminated && seg.last() == Some(&b'\r') {
            &seg[..seg.len() - 1]
        } else {
            seg
        };
        let s = match std::str::from_utf8(seg) {
            Ok(s) => std::borrow::Cow::Borrowed(s),
            Err(_) => String::from_utf8_lossy(seg),
        };
        if !js::trim(&s).is_empty() {
            out.push(s.into_owned());
        }
    };
    while pos > read_start {
        let start = read_start.max(pos.saturating_sub(chunk));
        let mut buf = vec![0u8; (pos - start) as usize];
        file.read_exact_at(&mut buf, start)?;
        buf.extend_from_slice(&carry);
        let mut end = buf.len();
        while let Some(i) = memchr::memrchr(b'\n', &buf[..end]) {
            push(&buf[i + 1..end], !trailing, &mut out_rev);
            trailing = false;
            end = i;
            if out_rev.len() >= max_lines {
                out_rev.truncate(max_lines);
                out_rev.reverse();
                return Ok(out_rev);
            }
        }
        carry = buf[..end].to_vec();
        pos = start;
        chunk = (chunk * 2).min(8 * 1024 * 1024);
    }
    if read_start == 0 {
        push(&carry, !trailing, &mut out_rev);
    }
    out_rev.truncate(max_lines);
    out_rev.reverse();
    Ok(out_rev)
}

static FIELD_RES: LazyLock<
    std::sync::Mutex<std::collections::HashMap<String, (Regex, Regex, Regex)>>,
> = LazyLock::new(Default::default);

fn field_res(field: &str) -> (Regex, Regex, Regex) {
    let mut m = FIELD_RES.lock().unwrap_or_else(|p| p.into_inner());
    m.entry(field.to_string())
        .or_insert_with(|| {
            let f = regex::escape(field);
            let mk = |s: String| {
                Regex::new(&s).unwrap_or_else(|_| Regex::new("$^").expect("trivial regex"))
            };
            (
                mk(format!(r#""{f}"\s*:\s*"((?:\\.|[^"\\])*)""#)),
                mk(format!(r#""{f}"\s*:\s*null"#)),
                mk(format!(
                    r#""{f}"\s*:\s*(-?[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)"#
                )),
            )
        })
        .clone()
}

fn extract_string_field(prefix: &str, field: &str) -> Option<String> {
    let (s, _, _) = field_res(field);
    let c = s.captures(prefix)?;
    let raw = c.get(1)?.as_str();
    match crate::js::jsjson::parse_value(&format!("\"{raw}\"")) {
        Ok(Value::String(v)) if !js::trim(&v).is_empty() => Some(v),
        _ => None,
    }
}

fn extract_nullable_string_field(prefix: &str, field: &str) -> Option<Value> {
    let (_, n, _) = field_res(field);
    if n.is_match(prefix) {
        return Some(Value::Null);
    }
    extract_string_field(prefix, field).map(Value::String)
}

fn extract_number_field(prefix: &str, field: &str) -> Option<Value> {
    let (_, _, num) = field_res(field);
    let c = num.captures(prefix)?;
    let f: f64 = c.get(1)?.as_str().parse().ok()?;
    f.is_finite().then(|| json!(f))
}

/// `buildOversizedTranscriptRecord`: what the tail readers keep of a line over 256 KiB.
pub fn oversized_record(line: &str, with_idempotency: bool) -> Value {
    let prefix = js_slice_prefix(line, 64 * 1024);
    let msg_at = Regex::new(r#""message"\s*:"#)
        .ok()
        .and_then(|r| r.find(&prefix))
        .map(|m| m.start());
    let record_prefix = match msg_at {
        Some(i) => &prefix[..i],
        None => &prefix[..],
    };
    let id = extract_string_field(&prefix, "id");
    let parent = extract_nullable_string_field(&prefix, "parentId");
    let ty = extract_string_field(&prefix, "type");
    let ts = extract_string_field(record_prefix, "timestamp")
        .map(Value::String)
        .or_else(|| extract_number_field(record_prefix, "timestamp"));
    let role = extract_string_field(&prefix, "role").unwrap_or_else(|| "assistant".into());
    let idem = if with_idempotency {
        extract_string_field(&prefix, "idempotencyKey").or_else(|| {
            let mut start = line.len().saturating_sub(64 * 1024);
            while !line.is_char_boundary(start) {
                start += 1;
            }
            extract_idempotency_suffix(&line[start..])
        })
    } else {
        None
    };
    let mut rec = Map::new();
    if let Some(t) = ty {
        rec.insert("type".into(), json!(t));
    }
    if let Some(i) = id {
        rec.insert("id".into(), json!(i));
    }
    if let Some(p) = parent {
        rec.insert("parentId".into(), p);
    }
    if let Some(t) = ts {
        rec.insert("timestamp".into(), t);
    }
    let mut message = Map::new();
    message.insert("role".into(), json!(role));
    if let Some(k) = idem {
        message.insert("idempotencyKey".into(), json!(k));
    }
    message.insert(
        "content".into(),
        json!([{"type": "text", "text": OVERSIZED_PLACEHOLDER}]),
    );
    message.insert(
        "__openclaw".into(),
        json!({"truncated": true, "reason": "oversized"}),
    );
    rec.insert("message".into(), Value::Object(message));
    Value::Object(rec)
}

/// The string value after an `"idempotencyKey"` name: `: "<JSON string body>"`.
static IDEMPOTENCY_VALUE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"^\s*:\s*"((?:\\.|[^"\\])*)""#).expect("a constant, valid pattern")
});

fn extract_idempotency_suffix(source: &str) -> Option<String> {
    let token = "\"idempotencyKey\"";
    let mut search = 0;
    while let Some(rel) = source[search..].find(token) {
        let idx = search + rel;
        search = idx + token.len();
        let before = source[..idx].trim_end_matches(char::is_whitespace);
        if !(before.is_empty() || before.ends_with('{') || before.ends_with(',')) {
            continue;
        }
        let rest = &source[search..];
        if let Some(c) = IDEMPOTENCY_VALUE.captures(rest) {
            return match crate::js::jsjson::parse_value(&format!("\"{}\"", &c[1])) {
                Ok(Value::String(v)) if !js::trim(&v).is_empty() => Some(v),
                _ => None,
            };
        }
    }
    None
}

/// `parseTailTranscriptRecord`: an object record, the oversized placeholder, or `None`.
pub fn parse_tail_record(line: &str) -> Option<Value> {
    if line.len() > MAX_PARSE_LINE_BYTES {
        return Some(oversized_record(line, true));
    }
    match crate::js::jsjson::parse_value(line) {
        Ok(v @ Value::Object(_)) => Some(v),
        _ => None,
    }
}

/// `selectBoundedActiveTailRecords`: the active branch inside a window of records (with
/// the nearest earlier compaction prepended when the branch starts later), all records
/// for a linear window, nothing when `fail_closed` and a leaf control is invalid.
pub fn select_active_records(records: &[Value], fail_closed: bool) -> Vec<usize> {
    if is_plain_chain(records) {
        return (0..records.len()).collect();
    }
    select_active_records_scan(records, fail_closed)
}

/// [`select_active_records`] through the tree scan.
fn select_active_records_scan(records: &[Value], fail_closed: bool) -> Vec<usize> {
    let refs: Vec<&Value> = records.iter().collect();
    let tree = scan_tree(&refs);
    if fail_closed && tree.has_invalid_leaf_control {
        return Vec::new();
    }
    if !tree.has_explicit_leaf_update {
        return (0..records.len()).collect();
    }
    let active: Vec<usize> = select_path(&tree, &refs, tree.leaf_id.as_deref())
        .into_iter()
        .map(|p| tree.nodes[p].index)
        .collect();
    if let Some(&first) = active.first() {
        if first > 0 {
            if let Some(c) = (0..first)
                .rev()
                .find(|&i| records[i].get("type").and_then(Value::as_str) == Some("compaction"))
            {
                let mut out = vec![c];
                out.extend(active);
                return out;
            }
        }
    }
    active
}

/// Whether `records` are one plain parent chain: canonical rows with distinct ids, no
/// `appendMode`, each `parentId` naming the row before it (the first's null or outside the
/// window). The tree scan then makes every row a node whose parent is the row before, the
/// leaf is the last row, and the active branch is the whole window, with no compaction to
/// prepend: what [`select_active_records`] returns without building the tree.
fn is_plain_chain(records: &[Value]) -> bool {
    records.iter().all(Value::is_object)
        && is_plain_chain_of(records.iter().map(|r| {
            [
                r.get("type"),
                r.get("id"),
                r.get("parentId"),
                r.get("appendMode"),
            ]
        }))
}

/// [`is_plain_chain`] over the `type`, `id`, `parentId` and `appendMode` of object records.
fn is_plain_chain_of<'a>(records: impl ExactSizeIterator<Item = [Option<&'a Value>; 4]>) -> bool {
    fn non_empty(v: Option<&Value>) -> Option<&str> {
        match v {
            Some(Value::String(s)) if !js::trim(s).is_empty() => Some(s.as_str()),
            _ => None,
        }
    }
    let mut ids: std::collections::HashSet<&str> =
        std::collections::HashSet::with_capacity(records.len());
    let mut prev: Option<&str> = None;
    let mut first_parent: Option<&str> = None;
    for [ty, id, parent, append_mode] in records {
        if !ty
            .and_then(Value::as_str)
            .is_some_and(super::entry::is_canonical_type)
            || append_mode.is_some()
        {
            return false;
        }
        let Some(id) = non_empty(id) else {
            return false;
        };
        match (prev, parent) {
            (None, Some(Value::Null)) => {}
            (None, p @ Some(_)) => match non_empty(p) {
                Some(p) => first_parent = Some(p),
                None => return false,
            },
            (Some(prev), Some(Value::String(p))) if p == prev => {}
            _ => return false,
        }
        if !ids.insert(id) {
            return false;
        }
        prev = Some(id);
    }
    first_parent.is_none_or(|p| !ids.contains(p))
}

/// The recent visible messages of a transcript (`readRecentSessionMessagesFromPath`):
/// bounded tail read, active branch, messages numbered inside the window, last
/// `max_messages` kept.
pub fn recent_messages(
    file: &File,
    max_messages: usize,
    max_lines: usize,
    max_bytes: u64,
    now_ms: i64,
) -> io::Result<Vec<Value>> {
    let size = file.metadata()?.len();
    recent_messages_to(file, size, max_messages, max_lines, max_bytes, now_ms)
}

/// [`recent_messages`] of the file's first `size` bytes.
fn recent_messages_to(
    file: &File,
    size: u64,
    max_messages: usize,
    max_lines: usize,
    max_bytes: u64,
    now_ms: i64,
) -> io::Result<Vec<Value>> {
    if max_messages == 0 || size == 0 {
        return Ok(Vec::new());
    }
    let lines = read_tail_lines_to(file, size, max_bytes, max_lines.max(max_messages))?;
    let records: Vec<Value> = lines.iter().filter_map(|l| parse_tail_record(l)).collect();
    let selected = select_active_records(&records, true);
    let refs: Vec<&Value> = selected.iter().map(|&i| &records[i]).collect();
    let msgs = history::records_to_messages(&refs, now_ms);
    let skip = msgs.len().saturating_sub(max_messages);
    Ok(msgs.into_iter().skip(skip).collect())
}

/// The visible messages of a bounded tail read ([`recent_messages`]), with each line parsed
/// only as far as the tree and the numbering need: a message is built from its line when
/// it is asked for, so a reader that shows the last few of a thousand messages parses only
/// those few in full.
#[derive(Debug, Default)]
pub struct RecentWindow {
    lines: Vec<String>,
    /// (line index, seq, the record when it had to be built whole) per visible message.
    rows: Vec<(usize, u64, Option<Value>)>,
    now_ms: i64,
}

impl RecentWindow {
    /// Reads the window [`recent_messages`] reads, with the same arguments.
    pub fn read(
        file: &File,
        max_messages: usize,
        max_lines: usize,
        max_bytes: u64,
        now_ms: i64,
    ) -> io::Result<RecentWindow> {
        let size = file.metadata()?.len();
        RecentWindow::read_to(file, size, max_messages, max_lines, max_bytes, now_ms)
    }

    /// [`RecentWindow::read`] of the file's first `size` bytes.
    fn read_to(
        file: &File,
        size: u64,
        max_messages: usize,
        max_lines: usize,
        max_bytes: u64,
        now_ms: i64,
    ) -> io::Result<RecentWindow> {
        let mut w = RecentWindow {
            now_ms,
            ..RecentWindow::default()
        };
        if max_messages == 0 || size == 0 {
            return Ok(w);
        }
        w.lines = read_tail_lines_to(file, size, max_bytes, max_lines.max(max_messages))?;
        // Per record (object lines, as `parse_tail_record` keeps them): the tree fields,
        // and the line index, visibility and the whole record when it was built anyway.
        let mut trees: Vec<super::partial::TreeFields> = Vec::new();
        let mut records: Vec<(usize, bool, Option<Value>)> = Vec::new();
        for (i, line) in w.lines.iter().enumerate() {
            let partial = if line.len() > MAX_PARSE_LINE_BYTES {
                Err(super::partial::NeedsFullParse)
            } else {
                super::partial::tree_fields(line)
            };
            match partial {
                Ok(Some(t)) if t.is_object => {
                    records.push((i, t.is_visible(), None));
                    trees.push(t);
                }
                Ok(_) => {}
                Err(super::partial::NeedsFullParse) => {
                    if let Some(r) = parse_tail_record(line) {
                        records.push((i, history::is_visible_record(&r), None));
                        trees.push(super::partial::TreeFields::of_record(&r));
                        records.last_mut().expect("pushed").2 = Some(r);
                    }
                }
            }
        }
        let chain = is_plain_chain_of(
            trees
                .iter()
                .map(|t| [0, 1, 2, 5].map(|k| t.fields[k].as_ref())),
        );
        let selected: Vec<usize> = if chain {
            (0..trees.len()).collect()
        } else {
            let lights: Vec<Value> = trees.iter().map(|t| t.light_record()).collect();
            select_active_records(&lights, true)
        };
        let mut seq = 0;
        for i in selected {
            let (line, visible, whole) = &mut records[i];
            if *visible {
                seq += 1;
                w.rows.push((*line, seq, whole.take()));
            }
        }
        let skip = w.rows.len().saturating_sub(max_messages);
        w.rows.drain(..skip);
        Ok(w)
    }

    /// How many messages.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The `i`-th message, built from its line (`None` only if the line no longer reads
    /// as it did, which cannot happen for lines in memory).
    pub fn message(&self, i: usize) -> Option<Value> {
        let (line, seq, whole) = self.rows.get(i)?;
        let rec = match whole {
            Some(r) => r.clone(),
            None => parse_tail_record(&self.lines[*line])?,
        };
        history::record_into_message(rec, *seq, self.now_ms)
    }

    /// Messages `from..` (what [`recent_messages`] returns for `from` = 0).
    pub fn messages_from(&self, from: usize) -> Option<Vec<Value>> {
        (from..self.len()).map(|i| self.message(i)).collect()
    }

    /// The last `n` messages of the display projection of messages `from..`
    /// ([`history::project_chat_display_last`]), building only the messages it needs.
    pub fn project_last(&self, from: usize, max_chars: usize, n: usize) -> Option<Vec<Value>> {
        let len = self.len().saturating_sub(from);
        history::project_chat_display_last_with(len, &mut |i| self.message(from + i), max_chars, n)
    }

    /// Whether a message might be a subagent announce (whose pairs
    /// [`history::drop_pre_session_start_announce_pairs`] can drop): its line names one,
    /// or has an escape that could spell one.
    pub fn may_hold_announces(&self) -> bool {
        self.rows.iter().any(|(line, _, whole)| {
            whole.is_some() || {
                let l = self.lines[*line].as_bytes();
                memchr::memmem::find(l, b"subagent_announce").is_some()
                    || memchr::memmem::find(l, b"\\u").is_some()
            }
        })
    }
}

/// `tail`'s view: the last `n` messages of the display projection of
/// [`recent_messages`]`(file, window, window, max_bytes, now_ms)` (or of the messages
/// themselves when `raw`), parsing in full only the lines those need.
pub fn recent_display_messages(
    file: &File,
    n: usize,
    window: usize,
    max_bytes: u64,
    max_chars: usize,
    raw: bool,
    now_ms: i64,
) -> io::Result<Vec<Value>> {
    let size = file.metadata()?.len();
    recent_display_messages_to(file, size, n, window, max_bytes, max_chars, raw, now_ms)
}

/// [`recent_display_messages`] of the file's first `size` bytes: what `tail --follow`
/// prints before it follows the file from `size` on.
#[allow(clippy::too_many_arguments)]
pub fn recent_display_messages_to(
    file: &File,
    size: u64,
    n: usize,
    window: usize,
    max_bytes: u64,
    max_chars: usize,
    raw: bool,
    now_ms: i64,
) -> io::Result<Vec<Value>> {
    let w = RecentWindow::read_to(file, size, window, window, max_bytes, now_ms)?;
    let lazy = if raw {
        w.messages_from(w.len().saturating_sub(n))
    } else {
        w.project_last(0, max_chars, n)
    };
    if let Some(m) = lazy {
        return Ok(m);
    }
    let msgs = recent_messages_to(file, size, window, window, max_bytes, now_ms)?;
    Ok(if raw {
        let skip = msgs.len().saturating_sub(n);
        msgs.into_iter().skip(skip).collect()
    } else {
        history::project_chat_display_last(msgs, max_chars, n)
    })
}

/// One visible record of the full index.
#[derive(Debug, Clone)]
pub struct IndexedEntry {
    /// 1-based position among visible records of the view.
    pub seq: u64,
    /// Byte offset of the line.
    pub offset: u64,
    /// Byte length of the line.
    pub len: usize,
}

/// The gateway's transcript index (`readSessionTranscriptIndex`), kept light: tree fields
/// only, lines re-read by offset when a page needs them.
#[derive(Debug, Clone, Default)]
pub struct TranscriptIndex {
    /// Visible records on the active path (or all, for a linear file).
    pub entries: Vec<IndexedEntry>,
    /// Visible records of the whole file.
    pub all_entries: usize,
    /// Whether an explicit parent link updated the leaf.
    pub has_tree_entries: bool,
    /// The leaf, when the file is a tree.
    pub leaf_id: Option<String>,
}

fn light_record(v: &Value) -> Value {
    let mut m = Map::new();
    if let Some(o) = v.as_object() {
        for k in [
            "type",
            "id",
            "parentId",
            "targetId",
            "appendParentId",
            "appendMode",
        ] {
            if let Some(x) = o.get(k) {
                m.insert(k.into(), x.clone());
            }
        }
    }
    Value::Object(m)
}

/// Builds the index of `path` by streaming the whole file once.
pub fn build_index(path: &DataPath) -> Result<TranscriptIndex, ReadError> {
    let f = super::reader::open(path)?;
    let scan = IndexScan::read(f).map_err(|e| ReadError::io(path.path(), e))?;
    let entries = scan
        .active
        .iter()
        .filter(|&&i| scan.visible[i])
        .enumerate()
        .map(|(n, &i)| IndexedEntry {
            seq: n as u64 + 1,
            offset: scan.spans[i].0,
            len: scan.spans[i].1,
        })
        .collect();
    let all = scan.visible.iter().filter(|v| **v).count();
    Ok(TranscriptIndex {
        entries,
        all_entries: all,
        has_tree_entries: scan.tree.has_explicit_leaf_update,
        leaf_id: if scan.tree.has_explicit_leaf_update {
            scan.tree.leaf_id
        } else {
            None
        },
    })
}

/// One pass of `readSessionTranscriptIndex` over a file's lines, kept whole: what
/// [`build_index`] reduces to a [`TranscriptIndex`], and what a [`Follower`] numbers the
/// rows it prints by.
struct IndexScan {
    /// The tree fields of every object record, in file order.
    lights: Vec<Value>,
    /// Whether each record is a history message.
    visible: Vec<bool>,
    /// (byte offset, byte length) of each record's line.
    spans: Vec<(u64, usize)>,
    /// The gateway's tree scan of the records.
    tree: ScanTree,
    /// The records of the active path (every record for a linear file), root first;
    /// empty when the parent links from the leaf run in a cycle.
    active: Vec<usize>,
}

impl IndexScan {
    /// Scans every line `reader` gives (offsets count from its start).
    fn read<R: Read>(reader: R) -> io::Result<IndexScan> {
        let mut lights: Vec<Value> = Vec::new();
        let mut visible: Vec<bool> = Vec::new();
        let mut spans: Vec<(u64, usize)> = Vec::new();
        scan_lines(reader, |l| {
            let bytes = l.bytes.strip_suffix(b"\r").unwrap_or(l.bytes);
            let text = String::from_utf8_lossy(bytes);
            if js::trim(&text).is_empty() {
                return true;
            }
            let rec = if bytes.len() > MAX_PARSE_LINE_BYTES {
                oversized_record(&text, false)
            } else {
                match crate::js::jsjson::parse_value(&text) {
                    Ok(v @ Value::Object(_)) => v,
                    _ => return true,
                }
            };
            visible.push(history::is_visible_record(&rec));
            lights.push(light_record(&rec));
            spans.push((l.offset, bytes.len()));
            true
        })?;
        let refs: Vec<&Value> = lights.iter().collect();
        let tree = scan_tree(&refs);
        let active: Vec<usize> = if tree.has_explicit_leaf_update {
            // buildActiveTreeEntries: walk parents from the leaf (leaf controls included).
            walk_to_root(&tree, tree.leaf_id.clone()).unwrap_or_default()
        } else {
            (0..lights.len()).collect()
        };
        Ok(IndexScan {
            lights,
            visible,
            spans,
            tree,
            active,
        })
    }

    /// The `seq` of the message whose line starts at `offset`: its position on the active
    /// path; for a row off it, its position on its own branch (the path from the root to
    /// it); for a row on no path, the number of messages on the active path (what the
    /// gateway reports for an append it cannot place).
    fn seq_at(&self, offset: u64, on_path: &[u64]) -> u64 {
        let count = self.active.iter().filter(|&&i| self.visible[i]).count() as u64;
        let Ok(row) = self.spans.binary_search_by_key(&offset, |s| s.0) else {
            return count;
        };
        if on_path[row] > 0 {
            return on_path[row];
        }
        let node = self.lights[row]
            .get("id")
            .and_then(Value::as_str)
            .and_then(|id| self.tree.by_id.get(id))
            .map(|&n| &self.tree.nodes[n])
            .filter(|n| n.index == row);
        match node.and_then(|n| walk_to_root(&self.tree, Some(n.id.clone()))) {
            Some(path) => path.iter().filter(|&&i| self.visible[i]).count() as u64,
            None => count,
        }
    }

    /// The `seq` of every record on the active path (0 for the others), by record.
    fn active_seqs(&self) -> Vec<u64> {
        let mut out = vec![0; self.lights.len()];
        let mut seq = 0;
        for &i in &self.active {
            if self.visible[i] {
                seq += 1;
                out[i] = seq;
            }
        }
        out
    }
}

/// The records from the root to `leaf` through the scan's parent links (leaf controls
/// included); `None` when the links run in a cycle.
fn walk_to_root(tree: &ScanTree, leaf: Option<String>) -> Option<Vec<usize>> {
    let mut out = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut cur = leaf;
    while let Some(c) = cur.filter(|c| !c.is_empty()) {
        if !seen.insert(c.clone()) {
            return None;
        }
        let Some(&pos) = tree.by_id.get(&c) else {
            break;
        };
        let node = &tree.nodes[pos];
        out.push(node.index);
        cur = node.parent_id.as_opt().map(String::from);
    }
    out.reverse();
    Some(out)
}

/// Reads the message of one indexed entry back from the file.
pub fn indexed_message(file: &File, e: &IndexedEntry, now_ms: i64) -> io::Result<Option<Value>> {
    let mut buf = vec![0u8; e.len];
    file.read_exact_at(&mut buf, e.offset)?;
    let text = String::from_utf8_lossy(&buf);
    let rec = if e.len > MAX_PARSE_LINE_BYTES {
        oversized_record(&text, false)
    } else {
        match crate::js::jsjson::parse_value(&text) {
            Ok(v) => v,
            Err(_) => return Ok(None),
        }
    };
    Ok(history::record_to_message(&rec, e.seq, now_ms))
}

/// Parameters of a history page.
#[derive(Debug, Clone, Copy)]
pub struct HistoryQuery {
    /// `limit` (default 200, at most 1000).
    pub limit: Option<usize>,
    /// `offset`: `None` for the first page without pagination fields.
    pub offset: Option<u64>,
    /// The entry's `sessionStartedAt`, if any.
    pub session_started_at: Option<f64>,
    /// The per-text cap of the display projection (default 8000).
    pub max_chars: usize,
    /// The clock.
    pub now_ms: i64,
}

/// `chat.history` for a transcript file: the first page from the bounded tail read,
/// offset pages from the full index.
pub fn chat_history(path: &DataPath, q: &HistoryQuery) -> Result<ChatHistory, ReadError> {
    chat_history_with(path, q, &mut |_| {})
}

/// [`chat_history`] with `before_budget` applied to the projected messages before the
/// gateway's final budget (the agent database path adds what 9.6 adds there).
pub fn chat_history_with(
    path: &DataPath,
    q: &HistoryQuery,
    before_budget: &mut dyn FnMut(&mut Vec<Value>),
) -> Result<ChatHistory, ReadError> {
    let mut budget = |mut projected: Vec<Value>| {
        before_budget(&mut projected);
        history::apply_chat_history_budget(projected, q.now_ms)
    };
    let max = q.limit.unwrap_or(200).min(1000);
    let raw_window = max.max(1) * 20 + 20;
    let file = match path.open_read() {
        Ok(f) => f.into_file(),
        Err(e) if e.is_not_found() => return Ok(ChatHistory::default()),
        Err(e) => return Err(e.into()),
    };
    let io_err = |e| ReadError::io(path.path(), e);
    let started = q.session_started_at;
    let drop_overread = |msgs: Vec<Value>, overread: Option<Value>| -> Vec<Value> {
        let msgs = history::drop_pre_session_start_announce_pairs(msgs, started);
        match overread {
            Some(o) => {
                let mut msgs = msgs;
                if let Some(i) = msgs.iter().position(|m| *m == o) {
                    msgs.remove(i);
                }
                msgs
            }
            None => msgs,
        }
    };
    let project_recent = |msgs: Vec<Value>| -> Vec<Value> {
        if max > 0 {
            history::project_chat_display_last(msgs, q.max_chars, max)
        } else {
            history::project_chat_display(msgs, q.max_chars)
        }
    };
    match q.offset {
        None if max > 0 => {
            let w = RecentWindow::read(
                &file,
                raw_window + 1,
                raw_window + 1,
                CHAT_HISTORY_TAIL_BYTES,
                q.now_ms,
            )
            .map_err(io_err)?;
            // Without announce pairs to drop, the over-read first message is the one
            // dropped, and the rest is projected from the end.
            let lazy = if started.is_none() || !w.may_hold_announces() {
                w.project_last(usize::from(w.len() > raw_window), q.max_chars, max)
            } else {
                None
            };
            let projected = match lazy {
                Some(p) => p,
                None => {
                    let msgs = w.messages_from(0).map_or_else(
                        || {
                            recent_messages(
                                &file,
                                raw_window + 1,
                                raw_window + 1,
                                CHAT_HISTORY_TAIL_BYTES,
                                q.now_ms,
                            )
                        },
                        Ok,
                    );
                    let msgs = msgs.map_err(io_err)?;
                    let overread = (msgs.len() > raw_window).then(|| msgs[0].clone());
                    let local = drop_overread(msgs, overread);
                    let local = history::drop_pre_session_start_announce_pairs(local, started);
                    project_recent(local)
                }
            };
            let projected = history::augment_canvas(projected);
            Ok(ChatHistory {
                messages: budget(projected),
                ..ChatHistory::default()
            })
        }
        None => {
            let msgs = recent_messages(
                &file,
                raw_window + 1,
                raw_window + 1,
                CHAT_HISTORY_TAIL_BYTES,
                q.now_ms,
            )
            .map_err(io_err)?;
            let overread = (msgs.len() > raw_window).then(|| msgs[0].clone());
            let local = drop_overread(msgs, overread);
            let local = history::drop_pre_session_start_announce_pairs(local, started);
            let projected = history::augment_canvas(project_recent(local));
            Ok(ChatHistory {
                messages: budget(projected),
                ..ChatHistory::default()
            })
        }
        Some(0) => {
            let total = build_index(path)?.entries.len() as u64;
            let msgs = recent_messages(
                &file,
                raw_window + 1,
                raw_window + 1,
                CHAT_HISTORY_TAIL_BYTES,
                q.now_ms,
            )
            .map_err(io_err)?;
            let first_seq = 1.max((total + 1).saturating_sub(msgs.len() as u64));
            let msgs: Vec<Value> = msgs
                .iter()
                .enumerate()
                .map(|(i, m)| {
                    let mut meta = Map::new();
                    meta.insert("seq".into(), json!(first_seq + i as u64));
                    history::attach_meta(m, meta)
                })
                .collect();
            let raw_page = msgs.len() as u64;
            let overread = (msgs.len() > raw_window).then(|| msgs[0].clone());
            let local = drop_overread(msgs, overread);
            let local = history::drop_pre_session_start_announce_pairs(local, started);
            let projected = history::augment_canvas(project_recent(local));
            let messages = budget(projected);
            Ok(page(messages, 0, total, raw_page))
        }
        Some(offset) => {
            let index = build_index(path)?;
            let total = index.entries.len() as u64;
            let off = offset.min(total);
            let end = (total - off) as usize;
            let start = end.saturating_sub(max + 1);
            let mut msgs = Vec::new();
            for e in &index.entries[start..end] {
                if let Some(m) = indexed_message(&file, e, q.now_ms).map_err(io_err)? {
                    msgs.push(m);
                }
            }
            let overread = (msgs.len() > max).then(|| msgs[0].clone());
            let raw_page = (max as u64).min(total.saturating_sub(offset));
            let local = drop_overread(msgs, overread);
            let local = history::drop_pre_session_start_announce_pairs(local, started);
            let projected = history::project_chat_display(local, q.max_chars);
            let projected = history::augment_canvas(history::cap_offset_projected(projected, max));
            let messages = budget(projected);
            Ok(page(messages, offset, total, raw_page))
        }
    }
}

fn page(messages: Vec<Value>, offset: u64, total: u64, raw_page: u64) -> ChatHistory {
    let next = history::next_offset(&messages, total, offset, raw_page);
    let has_more = next < total;
    ChatHistory {
        messages,
        offset: Some(offset),
        next_offset: has_more.then_some(next),
        has_more: Some(has_more),
        total_messages: Some(total),
    }
}

/// What a [`Follower`] noticed about the file between polls.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FollowEvent {
    /// The file shrank: reading restarts at its beginning.
    Truncated,
    /// The path now names a different file (rotation or replacement).
    Replaced,
    /// The file disappeared; waiting for it to come back.
    Missing,
}

/// Follows a transcript as rows are appended to it, surviving truncation and rotation,
/// and numbers the messages it reads as `history` does (`seq`, `transcript.md` §3.5).
#[derive(Debug)]
pub struct Follower {
    path: DataPath,
    file: Option<File>,
    ino: u64,
    dev: u64,
    offset: u64,
    pending: Vec<u8>,
    /// File offset of `pending[0]`.
    pending_at: u64,
    missing_reported: bool,
    /// The numbering up to the end of the last complete line read (none yet, or the
    /// file was truncated or replaced since).
    numbering: Option<Numbering>,
}

/// What a [`Follower`] knows of the index numbering at the end of the rows it has read,
/// enough to number a plain append without reading the file again.
#[derive(Debug, Default)]
struct Numbering {
    /// Messages on the active path.
    count: u64,
    /// Whether the file is linear (no parent link updated the leaf): every record is on
    /// the path, in file order.
    linear: bool,
    /// The leaf, when it is the last record, a parent-linked canonical row: a canonical
    /// row naming it as parent (and no appendMode) extends the active path by itself.
    tail: Option<String>,
    /// Every node id of the tree scan (a new row must not reuse one).
    ids: std::collections::HashSet<String>,
}

impl Numbering {
    fn of(scan: &IndexScan) -> Numbering {
        let count = scan.active.iter().filter(|&&i| scan.visible[i]).count() as u64;
        let linear = !scan.tree.has_explicit_leaf_update;
        let tail = scan.lights.last().and_then(|last| {
            let id = last.get("id").and_then(Value::as_str)?;
            let plain = super::entry::is_canonical(last)
                && last.get("appendMode").is_none()
                && last.get("parentId").is_some()
                && !js::trim(id).is_empty()
                && scan.tree.leaf_id.as_deref() == Some(id)
                && scan.active.last() == Some(&(scan.lights.len() - 1))
                && scan
                    .tree
                    .by_id
                    .get(id)
                    .is_some_and(|&n| scan.tree.nodes[n].index == scan.lights.len() - 1);
            (!linear && plain).then(|| id.to_string())
        });
        Numbering {
            count,
            linear,
            tail,
            ids: scan.tree.by_id.keys().cloned().collect(),
        }
    }

    /// The seq of `record` appended after what is numbered, when the numbering can tell
    /// without the tree scan; `None` when the file has to be scanned again.
    fn extend(&mut self, record: &Value) -> Option<u64> {
        let visible = u64::from(history::is_visible_record(record));
        if self.linear {
            // No parent link: the file stays linear.
            if record.get("parentId").is_some() {
                return None;
            }
            self.count += visible;
            return Some(self.count);
        }
        let tail = self.tail.as_deref()?;
        let id = record.get("id").and_then(Value::as_str)?;
        let plain = super::entry::is_canonical(record)
            && record.get("appendMode").is_none()
            && record.get("parentId").and_then(Value::as_str) == Some(tail)
            && !js::trim(id).is_empty()
            && !self.ids.contains(id);
        if !plain {
            return None;
        }
        self.count += visible;
        self.ids.insert(id.to_string());
        self.tail = Some(id.to_string());
        Some(self.count)
    }
}

/// Reads `file` from `pos` to `end` by position (the follower's own offset untouched).
struct ReadAt<'a> {
    file: &'a File,
    pos: u64,
    end: u64,
}

impl Read for ReadAt<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = (self.end.saturating_sub(self.pos)).min(buf.len() as u64) as usize;
        if n == 0 {
            return Ok(0);
        }
        let r = self.file.read_at(&mut buf[..n], self.pos)?;
        self.pos += r as u64;
        Ok(r)
    }
}

impl Follower {
    /// Starts following at the current end of `path` (or at 0 when it does not exist yet).
    pub fn at_end(path: &DataPath) -> Follower {
        let mut f = Follower {
            path: path.clone(),
            file: None,
            ino: 0,
            dev: 0,
            offset: 0,
            pending: Vec::new(),
            pending_at: 0,
            missing_reported: false,
            numbering: None,
        };
        if let Ok(file) = path.open_read() {
            let facts = file.facts();
            f.ino = facts.ino;
            f.dev = facts.dev;
            f.offset = facts.size;
            f.pending_at = facts.size;
            f.file = Some(file.into_file());
        }
        f
    }

    /// Starts following `path` at byte `offset` of `file`, the open file a reader read up
    /// to there (so nothing appended in between is missed, nor shown twice).
    pub fn at_offset(path: &DataPath, file: File, offset: u64) -> Follower {
        let (ino, dev) = {
            use std::os::unix::fs::MetadataExt;
            file.metadata()
                .map(|m| (m.ino(), m.dev()))
                .unwrap_or((0, 0))
        };
        Follower {
            path: path.clone(),
            file: Some(file),
            ino,
            dev,
            offset,
            pending: Vec::new(),
            pending_at: offset,
            missing_reported: false,
            numbering: None,
        }
    }

    /// The end of the last complete (`\n`-terminated) line among the first `size` bytes
    /// of `file`: where following starts, so a line still being written is read whole.
    pub fn complete_lines_end(file: &File, size: u64) -> io::Result<u64> {
        let mut end = size.min(file.metadata()?.len());
        let mut buf = vec![0u8; 64 * 1024];
        while end > 0 {
            let start = end.saturating_sub(buf.len() as u64);
            let chunk = &mut buf[..(end - start) as usize];
            file.read_exact_at(chunk, start)?;
            if let Some(i) = memchr::memrchr(b'\n', chunk) {
                return Ok(start + i as u64 + 1);
            }
            end = start;
        }
        Ok(0)
    }

    /// Polls once: calls `on_row` for every complete new row (parsed objects only) with
    /// the `seq` `history` gives it, and `on_event` for truncation/rotation. Returns
    /// whether anything was read.
    pub fn poll(
        &mut self,
        on_row: &mut dyn FnMut(Value, u64),
        on_event: &mut dyn FnMut(FollowEvent),
    ) -> io::Result<bool> {
        let unusable = |e: crate::fs::data_file::DataFileError| io::Error::other(e.to_string());
        let meta = match self.path.facts().map_err(unusable)? {
            Some(m) => m,
            None => {
                if !self.missing_reported && self.file.is_some() {
                    self.missing_reported = true;
                    on_event(FollowEvent::Missing);
                }
                self.file = None;
                return Ok(false);
            }
        };
        if self.file.is_none() || meta.ino != self.ino || meta.dev != self.dev {
            if self.file.is_some() || self.missing_reported {
                on_event(FollowEvent::Replaced);
            }
            // Never through a link, never a FIFO: what replaced the file is checked anew.
            self.file = Some(self.path.open_read().map_err(unusable)?.into_file());
            self.ino = meta.ino;
            self.dev = meta.dev;
            self.restart();
            self.missing_reported = false;
        }
        let len = meta.size;
        if len < self.offset {
            on_event(FollowEvent::Truncated);
            self.restart();
        }
        if len == self.offset {
            return Ok(false);
        }
        let Some(file) = self.file.as_mut() else {
            return Ok(false);
        };
        file.seek(SeekFrom::Start(self.offset))?;
        let mut buf = Vec::new();
        file.take(len - self.offset).read_to_end(&mut buf)?;
        self.offset += buf.len() as u64;
        self.pending.extend_from_slice(&buf);
        let mut rows: Vec<(u64, Value)> = Vec::new();
        let mut start = 0;
        while let Some(i) = memchr::memchr(b'\n', &self.pending[start..]) {
            let line = &self.pending[start..start + i];
            let text = String::from_utf8_lossy(line);
            if let Some(v) = parse_tail_record(text.trim_end_matches('\r')) {
                rows.push((self.pending_at + start as u64, v));
            }
            start += i + 1;
        }
        self.pending.drain(..start);
        self.pending_at += start as u64;
        let seqs = self.number(&rows)?;
        for ((_, row), seq) in rows.into_iter().zip(seqs) {
            on_row(row, seq);
        }
        Ok(true)
    }

    /// Reading starts again at the beginning of the file, numbering from scratch.
    fn restart(&mut self) {
        self.offset = 0;
        self.pending.clear();
        self.pending_at = 0;
        self.numbering = None;
    }

    /// The seqs of `rows` (read up to `pending_at`, the end of the last complete line):
    /// counted on from the last poll for plain appends, else from a scan of the file up to
    /// there, the index `history` reads.
    fn number(&mut self, rows: &[(u64, Value)]) -> io::Result<Vec<u64>> {
        if rows.is_empty() {
            return Ok(Vec::new());
        }
        if let Some(n) = self.numbering.as_mut() {
            let seqs: Option<Vec<u64>> = rows.iter().map(|(_, r)| n.extend(r)).collect();
            if let Some(seqs) = seqs {
                #[cfg(test)]
                tests::FAST_NUMBERED.with(|c| c.set(c.get() + 1));
                return Ok(seqs);
            }
        }
        let Some(file) = self.file.as_ref() else {
            return Ok(vec![0; rows.len()]);
        };
        let scan = IndexScan::read(ReadAt {
            file,
            pos: 0,
            end: self.pending_at,
        })?;
        let on_path = scan.active_seqs();
        let seqs = rows
            .iter()
            .map(|(at, _)| scan.seq_at(*at, &on_path))
            .collect();
        self.numbering = Some(Numbering::of(&scan));
        Ok(seqs)
    }

    /// The poll interval `tail --follow` uses.
    pub fn interval() -> Duration {
        Duration::from_millis(200)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::path::Path;

    thread_local! {
        /// Polls whose rows the follower numbered without scanning the file.
        pub(super) static FAST_NUMBERED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    }

    #[test]
    fn followed_rows_are_numbered_as_a_full_scan_numbers_them() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("t.jsonl");
        let mut polls = 0;
        for seed in 0..24u64 {
            let mut bytes = crate::transcript::testgen::transcript(seed, 60 + seed as usize * 3);
            if seed % 2 == 0 {
                // Plain gateway appends after the awkward part.
                for i in 0..30 {
                    let parent = if i == 0 {
                        "e0000".to_string()
                    } else {
                        format!("p{}", i - 1)
                    };
                    bytes.extend_from_slice(format!("{{\"type\":\"message\",\"id\":\"p{i}\",\"parentId\":\"{parent}\",\"message\":{{\"role\":\"user\",\"content\":\"x\"}}}}\n").as_bytes());
                }
            }
            let mut r = crate::transcript::testgen::Rng::new(seed);
            let start = r.below(bytes.len() / 2);
            std::fs::write(&p, &bytes[..start]).unwrap();
            let file = File::open(&p).unwrap();
            let path = DataPath::given(&p);
            let mut f = Follower::at_offset(&path, file, start as u64);
            let mut written = start;
            let mut seen_end = start;
            while written < bytes.len() {
                let n = if r.chance(10) {
                    1 + r.below(300_000)
                } else {
                    1 + r.below(400)
                };
                let n = n.min(bytes.len() - written);
                let mut out = std::fs::OpenOptions::new().append(true).open(&p).unwrap();
                out.write_all(&bytes[written..written + n]).unwrap();
                drop(out);
                written += n;
                let mut got = Vec::new();
                f.poll(&mut |row, seq| got.push((row, seq)), &mut |_| {})
                    .unwrap();
                polls += 1;
                // What a scan of the complete lines written so far says of the new ones.
                let end = memchr::memrchr(b'\n', &bytes[..written]).map_or(0, |i| i + 1);
                let end = end.max(seen_end);
                let scan = IndexScan::read(&bytes[..end]).unwrap();
                let on_path = scan.active_seqs();
                let mut want = Vec::new();
                let mut at = seen_end;
                while at < end {
                    let nl = memchr::memchr(b'\n', &bytes[at..end]).unwrap() + at;
                    let text = String::from_utf8_lossy(&bytes[at..nl]);
                    if let Some(v) = parse_tail_record(text.trim_end_matches('\r')) {
                        want.push((v, scan.seq_at(at as u64, &on_path)));
                    }
                    at = nl + 1;
                }
                seen_end = end;
                assert!(got == want, "seed {seed} at {written}: {got:?} vs {want:?}");
            }
        }
        let fast = FAST_NUMBERED.with(|c| c.get());
        assert!(fast > 40 && fast < polls, "{fast} of {polls}");
    }

    #[test]
    fn tail_lines_match_the_window_rules() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("t.jsonl");
        let mut f = File::create(&p).unwrap();
        for i in 0..2000 {
            writeln!(f, "{{\"i\":{i}}}\r").unwrap();
        }
        writeln!(f, "   ").unwrap();
        write!(f, "{{\"last\":true}}").unwrap();
        drop(f);
        let f = File::open(&p).unwrap();
        let lines = read_tail_lines(&f, 8 << 20, 3).unwrap();
        assert_eq!(lines, ["{\"i\":1998}", "{\"i\":1999}", "{\"last\":true}"]);
        // A window that starts mid-file drops its first (partial) line.
        let lines = read_tail_lines(&f, 1024, 10_000).unwrap();
        assert!(lines.len() < 200);
        assert!(lines[0].starts_with("{\"i\":"));
        let all = read_tail_lines(&f, 8 << 20, 10_000).unwrap();
        assert_eq!(all.len(), 2001);
        assert_eq!(all[0], "{\"i\":0}");
    }

    /// `chat_history`'s first page as it was computed before the lazy window: every
    /// message built, the whole window projected.
    fn first_page_reference(path: &Path, q: &HistoryQuery) -> Vec<Value> {
        let max = q.limit.unwrap_or(200).min(1000);
        let raw_window = max.max(1) * 20 + 20;
        let file = File::open(path).unwrap();
        let msgs = recent_messages(
            &file,
            raw_window + 1,
            raw_window + 1,
            CHAT_HISTORY_TAIL_BYTES,
            q.now_ms,
        )
        .unwrap();
        let started = q.session_started_at;
        let overread = (msgs.len() > raw_window).then(|| msgs[0].clone());
        let mut local = history::drop_pre_session_start_announce_pairs(msgs, started);
        if let Some(o) = overread {
            if let Some(i) = local.iter().position(|m| *m == o) {
                local.remove(i);
            }
        }
        let local = history::drop_pre_session_start_announce_pairs(local, started);
        let p = history::project_chat_display(local, q.max_chars);
        let skip = p.len().saturating_sub(max);
        let p: Vec<Value> = p.into_iter().skip(if max > 0 { skip } else { 0 }).collect();
        let p = history::augment_canvas(p);
        history::apply_chat_history_budget(p, q.now_ms)
    }

    #[test]
    fn lazy_tail_reads_equal_the_plain_ones() {
        let d = tempfile::tempdir().unwrap();
        for seed in 0..12u64 {
            let rows = [5, 40, 400, 1300][seed as usize % 4];
            let p = d.path().join(format!("t{seed}.jsonl"));
            std::fs::write(&p, crate::transcript::testgen::transcript(seed, rows)).unwrap();
            let f = File::open(&p).unwrap();
            for (window, bytes) in [(1021, CHAT_HISTORY_TAIL_BYTES), (61, 8 << 20), (30, 4096)] {
                let plain = recent_messages(&f, window, window, bytes, 77).unwrap();
                let w = RecentWindow::read(&f, window, window, bytes, 77).unwrap();
                assert_eq!(
                    w.messages_from(0).unwrap(),
                    plain,
                    "seed {seed} window {window}"
                );
                for n in [1, 3, 50] {
                    let projected =
                        recent_display_messages(&f, n, window, bytes, 8000, false, 77).unwrap();
                    let full = history::project_chat_display(plain.clone(), 8000);
                    assert!(
                        projected == full[full.len().saturating_sub(n)..],
                        "seed {seed} window {window} n {n}"
                    );
                    let raw =
                        recent_display_messages(&f, n, window, bytes, 8000, true, 77).unwrap();
                    assert_eq!(
                        raw,
                        plain[plain.len().saturating_sub(n)..],
                        "seed {seed} raw"
                    );
                }
            }
            for limit in [Some(1), Some(3), Some(50), None] {
                for started in [None, Some(0.0), Some(1_700_000_100_000.0), Some(4e12)] {
                    let q = HistoryQuery {
                        limit,
                        offset: None,
                        session_started_at: started,
                        max_chars: 8000,
                        now_ms: 99,
                    };
                    let got = chat_history(&DataPath::given(&p), &q).unwrap();
                    assert!(
                        got.messages == first_page_reference(&p, &q),
                        "seed {seed} limit {limit:?} started {started:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn plain_chains_select_what_the_tree_scan_selects() {
        let scan = |records: &[Value]| select_active_records_scan(records, true);
        let mut r = crate::transcript::testgen::Rng::new(5);
        let mut chains = 0;
        for _ in 0..3000 {
            let n = r.below(6);
            let mut recs: Vec<Value> = Vec::new();
            for i in 0..n {
                let mut o = serde_json::Map::new();
                let ty = *r.pick(&[
                    "message",
                    "message",
                    "label",
                    "compaction",
                    "leaf",
                    "session",
                    "x",
                ]);
                if !r.chance(3) {
                    o.insert("type".into(), json!(ty));
                }
                let id = *r.pick(&["a", "b", "c", " ", ""]);
                let id = if r.chance(70) {
                    format!("{id}{i}")
                } else {
                    id.to_string()
                };
                if !r.chance(3) {
                    o.insert("id".into(), json!(id));
                }
                let prev = recs.last().and_then(|p| p.get("id")).cloned();
                let parent = match r.below(8) {
                    0 => None,
                    1 => Some(json!(null)),
                    2 => Some(json!("zz")),
                    3 => Some(json!(" ")),
                    4 => Some(json!("a0")),
                    _ => Some(prev.unwrap_or(json!(null))),
                };
                if let Some(p) = parent {
                    o.insert("parentId".into(), p);
                }
                if r.chance(5) {
                    o.insert("appendMode".into(), json!(*r.pick(&["side", "x"])));
                }
                if ty == "leaf" {
                    o.insert("targetId".into(), json!("a0"));
                }
                recs.push(Value::Object(o));
            }
            if is_plain_chain(&recs) {
                chains += 1;
            }
            assert_eq!(select_active_records(&recs, true), scan(&recs), "{recs:?}");
        }
        assert!(chains > 300, "{chains}");
    }

    #[test]
    fn oversized_lines_become_placeholders() {
        let big = format!(
            "{{\"type\":\"message\",\"id\":\"x1\",\"parentId\":null,\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"message\":{{\"role\":\"user\",\"content\":\"{}\",\"idempotencyKey\":\"k1\"}}}}",
            "a".repeat(300_000)
        );
        let r = parse_tail_record(&big).unwrap();
        assert_eq!(r["id"], "x1");
        assert_eq!(r["parentId"], Value::Null);
        assert_eq!(r["message"]["role"], "user");
        assert_eq!(r["message"]["idempotencyKey"], "k1");
        assert_eq!(r["message"]["__openclaw"]["reason"], "oversized");
    }
}
