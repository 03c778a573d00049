//! The `truncateAfterCompaction` successor (`transcript.md` §4.8,
//! `buildSuccessorEntries`): a new `<ts>_<uuid>.jsonl` holding the tree without the
//! summarised messages — the latest summarised assistant and its tool results preserved
//! unless the boundary was hardened, stale settings rows and duplicate user messages
//! dropped, parents re-linked, thinking signatures stripped, off-branch subtrees first and
//! the active leaf last. The old transcript is not touched; the successor is put in place
//! with the store's update ([`super::commit`]).

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};
use thiserror::Error;

use super::index::{Kind, Sym};
#[cfg(doc)]
use super::plan::active_path;
use super::plan::PathEntry;
use super::row_facts::Role;
use super::scan::{self, ScanError, Scanned};
use crate::exit::{self, ExitCode};
use crate::js;

/// A successor that could not be built or written.
#[derive(Debug, Error)]
pub enum RotateError {
    /// The active branch has no compaction.
    #[error("no compaction entry on the active branch")]
    NoCompaction,
    /// Reading rows back failed.
    #[error(transparent)]
    Scan(#[from] ScanError),
    /// Writing the successor failed (nothing was changed).
    #[error(transparent)]
    Write(#[from] super::commit::CommitError),
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
    /// The entries, in file order, one JSON line each (newline-terminated).
    pub body: Vec<u8>,
    /// How many entries `body` holds.
    pub entries_written: usize,
    /// The compaction's id.
    pub compaction_entry_id: String,
    /// The last entry's id (the active leaf).
    pub leaf_id: Option<String>,
}

impl Successor {
    /// The file content: header and entries, one JSON line each.
    pub fn bytes(&self) -> Vec<u8> {
        let header = crate::js::jsjson::to_string_compact(&self.header);
        let mut out = Vec::with_capacity(header.len() + 1 + self.body.len());
        out.extend_from_slice(header.as_bytes());
        out.push(b'\n');
        out.extend_from_slice(&self.body);
        out
    }

    /// The peer's rotation result object.
    pub fn result_json(&self) -> Value {
        json!({
            "rotated": true,
            "sessionId": self.session_id,
            "sessionFile": self.path.to_string_lossy(),
            "compactionEntryId": self.compaction_entry_id,
            "leafId": self.leaf_id,
            "entriesWritten": self.entries_written,
        })
    }

    /// Prepares the file (a synced 0600 temp file beside it), put in place with the store
    /// by [`super::commit::commit`].
    #[must_use = "nothing is in place until `commit`; dropped, the temp file is removed"]
    pub fn prepare(&self) -> Result<super::commit::TranscriptSide, RotateError> {
        Ok(super::commit::TranscriptSide::create(
            &self.path,
            &self.bytes(),
        )?)
    }
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

/// A set of symbols (ids), as a bit set over the symbol table.
struct SymSet(Vec<u64>);

impl SymSet {
    fn new(n: usize) -> SymSet {
        SymSet(vec![0; n.div_ceil(64)])
    }
    fn insert(&mut self, s: Sym) -> bool {
        let (w, b) = (s as usize / 64, 1u64 << (s % 64));
        if w >= self.0.len() {
            self.0.resize(w + 1, 0);
        }
        let fresh = self.0[w] & b == 0;
        self.0[w] |= b;
        fresh
    }
    fn contains(&self, s: Sym) -> bool {
        self.0
            .get(s as usize / 64)
            .is_some_and(|w| w & (1u64 << (s % 64)) != 0)
    }
}

/// A map from symbols to small integers (`u32::MAX` = absent).
struct SymMap(Vec<u32>);

impl SymMap {
    fn new(n: usize) -> SymMap {
        SymMap(vec![u32::MAX; n])
    }
    fn insert(&mut self, s: Sym, v: usize) {
        if s as usize >= self.0.len() {
            self.0.resize(s as usize + 1, u32::MAX);
        }
        self.0[s as usize] = v as u32;
    }
    fn get(&self, s: Sym) -> Option<usize> {
        self.0
            .get(s as usize)
            .filter(|&&v| v != u32::MAX)
            .map(|&v| v as usize)
    }
}

fn duplicate_user_ids(
    scan: &Scanned,
    entries: &[&PathEntry],
    sigs: &HashMap<usize, [u8; 16]>,
    dups: &mut SymSet,
) {
    let mut last: HashMap<[u8; 16], f64> = HashMap::new();
    for e in entries {
        if e.kind != Kind::Message {
            continue;
        }
        let f = &scan.facts[e.row];
        let (Some(sig), Some(ts)) = (sigs.get(&e.row), f.message_ts()) else {
            continue;
        };
        if let Some(prev) = last.insert(*sig, ts) {
            if ts - prev <= 60_000.0 {
                dups.insert(e.id);
            }
        }
    }
}

/// Builds the successor of `scan` (whose active branch, `branch` as [`active_path`]
/// returns it, ends in the new compaction), with a fresh id, at `now_ms`; `cwd` is used
/// when the old header has none.
pub fn build(
    scan: &Scanned,
    branch: &[PathEntry],
    now_ms: i64,
    cwd: &Path,
) -> Result<Successor, RotateError> {
    let ix = &scan.index;
    let nsyms = ix.syms.len();
    let ci = branch
        .iter()
        .rposition(|e| e.kind == Kind::Compaction)
        .ok_or(RotateError::NoCompaction)?;
    let cid = branch[ci].id;
    let first_kept = branch[ci].first_kept;
    let mut summarized = SymSet::new(nsyms);
    let mut kept_pre = SymSet::new(nsyms);
    let mut found = false;
    for e in &branch[..ci] {
        if first_kept == Some(e.id) {
            found = true;
        }
        if found {
            kept_pre.insert(e.id);
        } else {
            summarized.insert(e.id);
        }
    }
    let hardened = first_kept == Some(cid);
    let role = |e: &PathEntry| scan.facts[e.row].role;
    let mut preserved: Option<(usize, Sym)> = None;
    if !hardened {
        for i in (0..ci).rev() {
            let e = &branch[i];
            if summarized.contains(e.id) && e.kind == Kind::Message && role(e) == Role::Assistant {
                preserved = Some((i, e.id));
                break;
            }
        }
    }
    let first_kept_index: isize = first_kept
        .and_then(|fk| branch.iter().position(|e| e.id == fk))
        .map_or(-1, |i| i as isize);
    let mut branch_index = SymMap::new(nsyms);
    for (i, e) in branch.iter().enumerate() {
        branch_index.insert(e.id, i);
    }
    let mut preserved_ids = SymSet::new(nsyms);
    if let Some((pi, pid)) = preserved {
        preserved_ids.insert(pid);
        let calls: HashSet<Option<String>> = scan_tool_calls(scan, branch[pi].row)?;
        let results: Vec<usize> = (pi + 1..first_kept_index.max(0) as usize)
            .filter(|&i| branch[i].kind == Kind::Message && role(&branch[i]) == Role::ToolResult)
            .collect();
        let rows: Vec<usize> = results.iter().map(|&i| branch[i].row).collect();
        scan.for_each_row(&rows, |k, v| {
            if calls.contains(&scan::tool_result_id(&v)) {
                preserved_ids.insert(branch[results[k]].id);
            }
        })?;
    }
    let preserved_index: isize = preserved.map_or(-1, |(i, _)| i as isize);
    let is_state = |e: &PathEntry| {
        matches!(
            e.kind,
            Kind::ModelChange | Kind::ThinkingLevelChange | Kind::SessionInfo
        )
    };
    let mut latest_state: HashMap<Kind, Sym> = HashMap::new();
    for e in &branch[..ci] {
        if is_state(e) {
            latest_state.insert(e.kind, e.id);
        }
    }
    let latest_ids: HashSet<Sym> = latest_state.values().copied().collect();
    let mut stale = SymSet::new(nsyms);
    for e in branch[..ci].iter().filter(|e| is_state(e)) {
        if !latest_ids.contains(&e.id) {
            stale.insert(e.id);
        }
    }
    let kept_pre_entries: Vec<&PathEntry> = branch[..ci]
        .iter()
        .filter(|e| !summarized.contains(e.id))
        .collect();
    let post: Vec<&PathEntry> = branch[ci + 1..].iter().collect();
    // Duplicate-user signatures, read back for the user messages that could be dropped.
    let mut sigs: HashMap<usize, [u8; 16]> = HashMap::new();
    let users: Vec<usize> = kept_pre_entries
        .iter()
        .chain(post.iter())
        .filter(|e| {
            e.kind == Kind::Message
                && role(e) == Role::User
                && scan.facts[e.row].message_ts().is_some()
        })
        .map(|e| e.row)
        .collect();
    scan.for_each_row(&users, |k, v| {
        if let Some(sig) = scan::dup_signature_of(&v) {
            sigs.insert(users[k], sig);
        }
    })?;
    let mut dups = SymSet::new(nsyms);
    duplicate_user_ids(scan, &kept_pre_entries, &sigs, &mut dups);
    duplicate_user_ids(scan, &post, &sigs, &mut dups);

    // getEntries(): (row, id, kind, normalised parent).
    struct Ent {
        row: usize,
        id: Sym,
        kind: Kind,
        parent: Option<Sym>,
    }
    let all: Vec<Ent> = ix
        .entry_rows()
        .map(|row| Ent {
            row,
            id: ix.id_at(row).unwrap_or_default(),
            kind: ix.kind(row),
            parent: ix.normal_parent(row),
        })
        .collect();
    let mut removed = SymSet::new(nsyms);
    for e in &all {
        let bi = branch_index.get(e.id).map_or(-1, |i| i as isize);
        let marker = bi > preserved_index
            && bi < first_kept_index
            && matches!(e.kind, Kind::CustomMessage | Kind::BranchSummary);
        let is_summarized = summarized.contains(e.id);
        if (is_summarized && e.kind == Kind::Message && !preserved_ids.contains(e.id))
            || (is_summarized && marker)
            || stale.contains(e.id)
            || dups.contains(e.id)
        {
            removed.insert(e.id);
        }
    }
    for e in &all {
        if e.kind == Kind::Label {
            if let Some(t) = ix.row(e.row).target.str() {
                if removed.contains(t) {
                    removed.insert(e.id);
                }
            }
        }
    }
    // By id, the last entry wins (as a Map would keep it).
    let mut by_id = SymMap::new(nsyms);
    for (k, e) in all.iter().enumerate() {
        by_id.insert(e.id, k);
    }
    let mut active = SymSet::new(nsyms);
    for e in branch {
        active.insert(e.id);
    }
    // Kept entries: (entry, final parent, strip?, new firstKept).
    struct Kept {
        at: usize,
        parent: Option<Sym>,
        strip: bool,
        first_kept: Option<Sym>,
    }
    let mut kept: Vec<Kept> = Vec::new();
    for (at, e) in all.iter().enumerate() {
        if removed.contains(e.id) {
            continue;
        }
        let mut parent = e.parent;
        let mut guard = 0usize;
        while let Some(p) = parent.filter(|&p| removed.contains(p)) {
            parent = by_id.get(p).and_then(|k| all[k].parent);
            guard += 1;
            if guard > all.len() {
                parent = None;
                break;
            }
        }
        let strip =
            e.kind == Kind::Message && (kept_pre.contains(e.id) || preserved_ids.contains(e.id));
        let first_kept = (e.kind == Kind::Compaction
            && e.id == cid
            && ix.normal_first_kept(e.row) != Some(e.id))
        .then(|| preserved.map(|(_, p)| p))
        .flatten();
        kept.push(Kept {
            at,
            parent,
            strip,
            first_kept,
        });
    }
    // orderSuccessorEntries: depth-first from the roots, off-branch children first.
    let mut ids = SymSet::new(nsyms);
    for k in &kept {
        ids.insert(all[k.at].id);
    }
    for k in kept.iter_mut() {
        if k.parent.is_some_and(|p| !ids.contains(p)) {
            k.parent = None;
        }
    }
    let sort_key = |k: &Kept| {
        let id = all[k.at].id;
        (active.contains(id), by_id.get(id).unwrap_or(0))
    };
    let mut children: HashMap<Option<Sym>, Vec<usize>> = HashMap::new();
    for (i, k) in kept.iter().enumerate() {
        children.entry(k.parent).or_default().push(i);
    }
    for list in children.values_mut() {
        list.sort_by_key(|&i| sort_key(&kept[i]));
    }
    let mut order: Vec<usize> = Vec::with_capacity(kept.len());
    let mut emitted = SymSet::new(nsyms);
    let mut emit = |start: usize, order: &mut Vec<usize>| {
        let mut stack = vec![start];
        while let Some(i) = stack.pop() {
            let id = all[kept[i].at].id;
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
    // Read the kept rows back (in file order), fix them up and serialise each one.
    let rows: Vec<usize> = order.iter().map(|&i| all[kept[i].at].row).collect();
    let mut lines: Vec<String> = vec![String::new(); order.len()];
    let mut leaf_id: Option<String> = None;
    let last = order.len().checked_sub(1);
    scan.for_each_row(&rows, |pos, mut v| {
        let k = &kept[order[pos]];
        let e = &all[k.at];
        let parent = k
            .parent
            .map_or(Value::Null, |p| Value::String(ix.str(p).into()));
        if let Some(o) = v.as_object_mut() {
            if o.get("parentId") != Some(&parent) {
                o.insert("parentId".into(), parent);
            }
            if e.kind == Kind::Compaction {
                if let Some(fk) = ix.normal_first_kept(e.row).map(|s| ix.str(s)) {
                    if o.get("firstKeptEntryId").and_then(Value::as_str) != Some(fk) {
                        o.insert("firstKeptEntryId".into(), json!(fk));
                    }
                }
            }
            if let Some(fk) = k.first_kept {
                o.insert("firstKeptEntryId".into(), json!(ix.str(fk)));
            }
        }
        if k.strip {
            if let Some(m) = v.get_mut("message") {
                strip_thinking_signatures(m);
            }
        }
        if Some(pos) == last {
            leaf_id = v.get("id").and_then(Value::as_str).map(String::from);
        }
        let mut line = crate::js::jsjson::to_string_compact(&v);
        line.push('\n');
        lines[pos] = line;
    })?;
    let mut body = Vec::with_capacity(lines.iter().map(String::len).sum());
    for l in &lines {
        body.extend_from_slice(l.as_bytes());
    }
    drop(lines);
    let session_id = uuid::Uuid::new_v4().to_string();
    let timestamp = js::to_iso_string(now_ms);
    let header_cwd = scan
        .header
        .get("cwd")
        .filter(|c| js::truthy(c))
        .cloned()
        .unwrap_or_else(|| json!(cwd.to_string_lossy()));
    let old_abs = crate::install::paths::absolutize(&scan.path, cwd);
    let header = json!({
        "type": "session",
        "version": 3,
        "id": session_id,
        "timestamp": timestamp,
        "cwd": header_cwd,
        "parentSession": old_abs.to_string_lossy(),
    });
    Ok(Successor {
        path: successor_path(&old_abs, &timestamp, &session_id),
        session_id,
        header,
        body,
        entries_written: order.len(),
        compaction_entry_id: ix.str(cid).to_string(),
        leaf_id,
    })
}

/// The `toolCall` ids of an assistant row, read back.
fn scan_tool_calls(scan: &Scanned, row: usize) -> Result<HashSet<Option<String>>, RotateError> {
    let v = scan.read_row(row)?;
    Ok(scan::tool_call_ids(&v).into_iter().collect())
}
