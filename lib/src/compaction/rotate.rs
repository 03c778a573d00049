//! The `truncateAfterCompaction` successor (`transcript.md` §4.8,
//! `buildSuccessorEntries`): a new `<ts>_<uuid>.jsonl` holding the tree without the
//! summarised messages — the latest summarised assistant and its tool results preserved
//! unless the boundary was hardened, stale settings rows and duplicate user messages
//! dropped, parents re-linked, thinking signatures stripped, off-branch subtrees first and
//! the active leaf last. The old transcript is not touched.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};
use thiserror::Error;

use super::plan::{active_path, PathEntry};
use super::scan::{ScanError, Scanned};
use crate::exit::{self, ExitCode};
use crate::transcript::entry::type_of;

/// A successor that could not be built or written.
#[derive(Debug, Error)]
pub enum RotateError {
    /// The active branch has no compaction.
    #[error("no compaction entry on the active branch")]
    NoCompaction,
    /// Reading rows back failed.
    #[error(transparent)]
    Scan(#[from] ScanError),
    /// Writing the successor failed.
    #[error(transparent)]
    Write(#[from] crate::atomic_file::AtomicWriteError),
}

impl ExitCode for RotateError {
    fn exit_code(&self) -> i32 {
        match self {
            RotateError::NoCompaction => exit::DATA_ERR,
            RotateError::Scan(e) => e.exit_code(),
            RotateError::Write(e) => e.exit_code(),
        }
    }
}

/// A successor transcript, ready to be written.
#[derive(Debug, Clone)]
pub struct Successor {
    /// The new session id (UUID v4).
    pub session_id: String,
    /// The new file.
    pub path: PathBuf,
    /// The header.
    pub header: Value,
    /// The entries, in file order.
    pub entries: Vec<Value>,
    /// The compaction's id.
    pub compaction_entry_id: String,
    /// The last entry's id (the active leaf).
    pub leaf_id: Option<String>,
}

impl Successor {
    /// The file content: header and entries, one JSON line each.
    pub fn bytes(&self) -> Vec<u8> {
        let mut out = String::new();
        out.push_str(&crate::jsjson::to_string_compact(&self.header));
        out.push('\n');
        for e in &self.entries {
            out.push_str(&crate::jsjson::to_string_compact(e));
            out.push('\n');
        }
        out.into_bytes()
    }

    /// The peer's rotation result object.
    pub fn result_json(&self) -> Value {
        json!({
            "rotated": true,
            "sessionId": self.session_id,
            "sessionFile": self.path.to_string_lossy(),
            "compactionEntryId": self.compaction_entry_id,
            "leafId": self.leaf_id,
            "entriesWritten": self.entries.len(),
        })
    }

    /// Writes the file atomically (temp, fsync, rename, directory fsync; 0600).
    pub fn write(&self) -> Result<(), RotateError> {
        crate::atomic_file::replace_file(&self.path, &self.bytes(), 0o600)?;
        Ok(())
    }
}

fn id_of(v: &Value) -> Option<&str> {
    v.get("id").and_then(Value::as_str)
}

fn parent_of(v: &Value) -> Option<&str> {
    v.get("parentId").and_then(Value::as_str)
}

/// `stripThinkingSignaturesFromMessage` on a message object.
pub fn strip_thinking_signatures(message: &mut Value) {
    if message.get("role").and_then(Value::as_str) != Some("assistant") {
        return;
    }
    let Some(Value::Array(blocks)) = message.get_mut("content") else {
        return;
    };
    for b in blocks.iter_mut() {
        let Some(o) = b.as_object_mut() else { continue };
        let t = o
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        if t != "thinking" && t != "redacted_thinking" {
            continue;
        }
        let present = |k: &str| o.get(k).is_some_and(|v| !v.is_null());
        let signed = present("thinkingSignature")
            || present("signature")
            || present("thought_signature")
            || (t == "redacted_thinking" && present("data"));
        if !signed {
            continue;
        }
        let mut stripped = Map::new();
        for (k, v) in o.iter() {
            if k == "thinkingSignature" || k == "signature" || k == "thought_signature" {
                continue;
            }
            if k == "data" && t == "redacted_thinking" {
                continue;
            }
            stripped.insert(k.clone(), v.clone());
        }
        *o = stripped;
    }
}

/// `resolveSuccessorSessionFile`: `<dir>/<ISO ts, ':' and '.' → '-'>_<id>.jsonl`.
pub fn successor_path(old: &Path, timestamp: &str, session_id: &str) -> PathBuf {
    let stamp = timestamp.replace([':', '.'], "-");
    old.parent()
        .unwrap_or(Path::new("."))
        .join(format!("{stamp}_{session_id}.jsonl"))
}

fn duplicate_user_ids(scan: &Scanned, entries: &[&PathEntry]) -> HashSet<String> {
    let mut last: HashMap<[u8; 16], f64> = HashMap::new();
    let mut dups = HashSet::new();
    for e in entries {
        if type_of(&e.entry) != Some("message") {
            continue;
        }
        let Some(id) = id_of(&e.entry) else { continue };
        let f = &scan.facts[e.row];
        let (Some(sig), Some(ts)) = (f.dup_sig, f.message_ts) else {
            continue;
        };
        if let Some(prev) = last.insert(sig, ts) {
            if ts - prev <= 60_000.0 {
                dups.insert(id.to_string());
            }
        }
    }
    dups
}

/// Builds the successor of `scan` (whose active branch ends in the new compaction), with a
/// fresh id, at `now_ms`; `cwd` is used when the old header has none.
pub fn build(scan: &Scanned, now_ms: i64, cwd: &Path) -> Result<Successor, RotateError> {
    let branch = active_path(scan);
    let ci = branch
        .iter()
        .rposition(|e| type_of(&e.entry) == Some("compaction"))
        .ok_or(RotateError::NoCompaction)?;
    let compaction = &branch[ci].entry;
    let cid = id_of(compaction).unwrap_or("").to_string();
    let first_kept = compaction.get("firstKeptEntryId").and_then(Value::as_str);
    let mut summarized: HashSet<String> = HashSet::new();
    let mut kept_pre: HashSet<String> = HashSet::new();
    let mut found = false;
    for e in &branch[..ci] {
        let id = id_of(&e.entry).unwrap_or("").to_string();
        if first_kept.is_some_and(|fk| fk == id) {
            found = true;
        }
        if found {
            kept_pre.insert(id);
        } else {
            summarized.insert(id);
        }
    }
    let hardened = first_kept == Some(cid.as_str());
    let role = |e: &PathEntry| scan.facts[e.row].role.as_deref();
    let mut preserved: Option<(usize, String)> = None;
    if !hardened {
        for i in (0..ci).rev() {
            let e = &branch[i];
            let id = id_of(&e.entry).unwrap_or("");
            if summarized.contains(id)
                && type_of(&e.entry) == Some("message")
                && role(e) == Some("assistant")
            {
                preserved = Some((i, id.to_string()));
                break;
            }
        }
    }
    let first_kept_index: isize = first_kept
        .and_then(|fk| branch.iter().position(|e| id_of(&e.entry) == Some(fk)))
        .map_or(-1, |i| i as isize);
    let branch_index: HashMap<&str, usize> = branch
        .iter()
        .enumerate()
        .filter_map(|(i, e)| id_of(&e.entry).map(|id| (id, i)))
        .collect();
    let mut preserved_ids: HashSet<String> = HashSet::new();
    if let Some((pi, pid)) = &preserved {
        preserved_ids.insert(pid.clone());
        let calls: HashSet<Option<&str>> = scan.facts[branch[*pi].row]
            .tool_calls
            .iter()
            .map(|c| c.as_deref())
            .collect();
        let mut i = pi + 1;
        while (i as isize) < first_kept_index {
            let e = &branch[i];
            if type_of(&e.entry) == Some("message") && role(e) == Some("toolResult") {
                let tid = scan.facts[e.row].tool_result_id.as_deref();
                if calls.contains(&tid) {
                    preserved_ids.insert(id_of(&e.entry).unwrap_or("").to_string());
                }
            }
            i += 1;
        }
    }
    let preserved_index: isize = preserved.as_ref().map_or(-1, |(i, _)| *i as isize);
    let is_state = |e: &PathEntry| {
        matches!(
            type_of(&e.entry),
            Some("model_change" | "thinking_level_change" | "session_info")
        )
    };
    let mut latest_state: HashMap<&str, &str> = HashMap::new();
    for e in &branch[..ci] {
        if is_state(e) {
            latest_state.insert(
                type_of(&e.entry).unwrap_or(""),
                id_of(&e.entry).unwrap_or(""),
            );
        }
    }
    let latest_ids: HashSet<&str> = latest_state.values().copied().collect();
    let stale: HashSet<&str> = branch[..ci]
        .iter()
        .filter(|e| is_state(e))
        .filter_map(|e| id_of(&e.entry))
        .filter(|id| !latest_ids.contains(id))
        .collect();
    let kept_pre_entries: Vec<&PathEntry> = branch[..ci]
        .iter()
        .filter(|e| !summarized.contains(id_of(&e.entry).unwrap_or("")))
        .collect();
    let post: Vec<&PathEntry> = branch[ci + 1..].iter().collect();
    let mut dups = duplicate_user_ids(scan, &kept_pre_entries);
    dups.extend(duplicate_user_ids(scan, &post));

    let all: Vec<(usize, Value)> = scan.index.entries();
    let mut removed: HashSet<String> = HashSet::new();
    for (_, e) in &all {
        let Some(id) = id_of(e) else { continue };
        let bi = branch_index.get(id).map_or(-1, |i| *i as isize);
        let marker = bi > preserved_index
            && bi < first_kept_index
            && matches!(type_of(e), Some("custom_message" | "branch_summary"));
        let is_summarized = summarized.contains(id);
        if (is_summarized && type_of(e) == Some("message") && !preserved_ids.contains(id))
            || (is_summarized && marker)
            || stale.contains(id)
            || dups.contains(id)
        {
            removed.insert(id.to_string());
        }
    }
    for id in &preserved_ids {
        kept_pre.insert(id.clone());
    }
    for (_, e) in &all {
        if type_of(e) == Some("label") {
            if let Some(t) = e.get("targetId").and_then(Value::as_str) {
                if removed.contains(t) {
                    if let Some(id) = id_of(e) {
                        removed.insert(id.to_string());
                    }
                }
            }
        }
    }
    let mut by_id: HashMap<&str, &Value> = HashMap::new();
    let mut original_index: HashMap<&str, usize> = HashMap::new();
    for (k, (_, e)) in all.iter().enumerate() {
        if let Some(id) = id_of(e) {
            by_id.insert(id, e);
            original_index.insert(id, k);
        }
    }
    let active: HashSet<&str> = branch.iter().filter_map(|e| id_of(&e.entry)).collect();
    // Kept entries: (row, normalised slim, final parent, strip?, new firstKept).
    struct Kept<'a> {
        row: usize,
        slim: &'a Value,
        parent: Option<String>,
        strip: bool,
        first_kept: Option<String>,
    }
    let mut kept: Vec<Kept<'_>> = Vec::new();
    for (row, e) in &all {
        let id = id_of(e).unwrap_or("");
        if removed.contains(id) {
            continue;
        }
        let mut parent = parent_of(e).map(String::from);
        let mut guard = 0usize;
        while let Some(p) = parent.clone().filter(|p| removed.contains(p)) {
            parent = by_id
                .get(p.as_str())
                .and_then(|x| parent_of(x))
                .map(String::from);
            guard += 1;
            if guard > all.len() {
                parent = None;
                break;
            }
        }
        let strip = type_of(e) == Some("message") && kept_pre.contains(id);
        let first_kept = (type_of(e) == Some("compaction")
            && id == cid
            && e.get("firstKeptEntryId").and_then(Value::as_str) != Some(id))
        .then(|| preserved.as_ref().map(|(_, p)| p.clone()))
        .flatten();
        kept.push(Kept {
            row: *row,
            slim: e,
            parent,
            strip,
            first_kept,
        });
    }
    // orderSuccessorEntries: depth-first from the roots, off-branch children first.
    let ids: HashSet<&str> = kept.iter().filter_map(|k| id_of(k.slim)).collect();
    for k in kept.iter_mut() {
        if k.parent.as_deref().is_some_and(|p| !ids.contains(p)) {
            k.parent = None;
        }
    }
    let sort_key = |k: &Kept<'_>| {
        let id = id_of(k.slim).unwrap_or("");
        (
            active.contains(id),
            original_index.get(id).copied().unwrap_or(0),
        )
    };
    let mut children: HashMap<Option<&str>, Vec<usize>> = HashMap::new();
    for (i, k) in kept.iter().enumerate() {
        children.entry(k.parent.as_deref()).or_default().push(i);
    }
    for list in children.values_mut() {
        list.sort_by_key(|&i| sort_key(&kept[i]));
    }
    let mut order: Vec<usize> = Vec::with_capacity(kept.len());
    let mut emitted: HashSet<&str> = HashSet::new();
    let mut emit = |start: usize, order: &mut Vec<usize>| {
        let mut stack = vec![start];
        while let Some(i) = stack.pop() {
            let id = id_of(kept[i].slim).unwrap_or("");
            if !emitted.insert(id) {
                continue;
            }
            order.push(i);
            if let Some(ch) = children.get(&Some(id)) {
                for &c in ch.iter().rev() {
                    stack.push(c);
                }
            }
        }
    };
    let roots = children.get(&None).cloned().unwrap_or_default();
    for r in roots {
        emit(r, &mut order);
    }
    let mut rest: Vec<usize> = (0..kept.len()).collect();
    rest.sort_by_key(|&i| sort_key(&kept[i]));
    for i in rest {
        emit(i, &mut order);
    }
    let rows: Vec<usize> = order.iter().map(|&i| kept[i].row).collect();
    let full = scan.read_rows(&rows)?;
    let mut entries = Vec::with_capacity(order.len());
    for (k, mut v) in order.iter().map(|&i| &kept[i]).zip(full) {
        let parent = k.parent.clone().map_or(Value::Null, Value::String);
        if let Some(o) = v.as_object_mut() {
            if o.get("parentId") != Some(&parent) {
                o.insert("parentId".into(), parent);
            }
            if let Some(fk) = k.slim.get("firstKeptEntryId") {
                if o.get("firstKeptEntryId") != Some(fk) {
                    o.insert("firstKeptEntryId".into(), fk.clone());
                }
            }
            if let Some(fk) = &k.first_kept {
                o.insert("firstKeptEntryId".into(), json!(fk));
            }
        }
        if k.strip {
            if let Some(m) = v.get_mut("message") {
                strip_thinking_signatures(m);
            }
        }
        entries.push(v);
    }
    let session_id = uuid::Uuid::new_v4().to_string();
    let timestamp = crate::clock::iso_ms(now_ms);
    let header_cwd = scan
        .header
        .get("cwd")
        .filter(|c| crate::transcript::tree::js_truthy(c))
        .cloned()
        .unwrap_or_else(|| json!(cwd.to_string_lossy()));
    let old_abs = crate::paths::absolutize(&scan.path, cwd);
    let header = json!({
        "type": "session",
        "version": 3,
        "id": session_id,
        "timestamp": timestamp,
        "cwd": header_cwd,
        "parentSession": old_abs.to_string_lossy(),
    });
    let leaf_id = entries.last().and_then(|e| id_of(e)).map(String::from);
    Ok(Successor {
        path: successor_path(&old_abs, &timestamp, &session_id),
        session_id,
        header,
        entries,
        compaction_entry_id: cid,
        leaf_id,
    })
}
