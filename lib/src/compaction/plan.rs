//! `prepareCompaction` (`transcript.md` §4.4): the context estimate of the rebuilt context
//! (§4.3), the cut point that keeps about `keepRecentTokens` without ever separating a tool
//! call from its results, split turns, the messages to summarise and the file operations.

use serde_json::{json, Map, Value};
use thiserror::Error;

use super::index::{Kind, Sym};
use super::row_facts::{FileOp, Role};
use super::scan::Scanned;
use crate::exit::{self, ExitCode};
use crate::js;
use crate::transcript::entry::type_of;

/// Why a compaction cannot be prepared; nothing was changed.
#[derive(Debug, Error)]
pub enum PlanError {
    /// A row on the path has a timestamp the context rebuild rejects.
    #[error("{}:{line}: entry {id}: {what} must be a valid timestamp", path.display())]
    BadTimestamp {
        /// The transcript.
        path: std::path::PathBuf,
        /// The line.
        line: usize,
        /// The entry id.
        id: String,
        /// Which timestamp.
        what: &'static str,
    },
    /// The cut entry has no id.
    #[error("{}: first kept entry has no id - session may need migration", path.display())]
    NoId {
        /// The transcript.
        path: std::path::PathBuf,
    },
}

impl ExitCode for PlanError {
    fn exit_code(&self) -> i32 {
        exit::DATA_ERR
    }
}

/// One entry of the active path, as SessionManager's `getBranch` returns it (what
/// compaction reads of it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PathEntry {
    /// Row index in [`Scanned::index`].
    pub row: usize,
    /// The entry's type.
    pub kind: Kind,
    /// The entry's id (entries on a path always have a non-empty string id).
    pub id: Sym,
    /// The normalised `firstKeptEntryId`, when it is a string.
    pub first_kept: Option<Sym>,
}

/// The active branch (root to leaf) of a scanned transcript.
pub fn active_path(scan: &Scanned) -> Vec<PathEntry> {
    let ix = &scan.index;
    ix.branch_rows()
        .into_iter()
        .map(|row| {
            let r = ix.row(row);
            PathEntry {
                row,
                kind: r.kind,
                id: r.id.str().unwrap_or_default(),
                first_kept: if r.kind == Kind::Compaction {
                    ix.normal_first_kept(row)
                } else {
                    r.first_kept.str()
                },
            }
        })
        .collect()
}

fn role(scan: &Scanned, e: &PathEntry) -> Role {
    scan.facts[e.row].role
}

/// One message of a rebuilt context, by where it comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContextItem {
    /// The summary of the compaction at this path index.
    Summary(usize),
    /// The message of the entry at this path index.
    Entry(usize),
}

fn bad_ts(scan: &Scanned, path: &[PathEntry], i: usize, what: &'static str) -> PlanError {
    PlanError::BadTimestamp {
        path: scan.path.clone(),
        line: scan.loc(path[i].row).map_or(0, |l| l.line),
        id: scan.index.str(path[i].id).to_string(),
        what,
    }
}

/// `buildSessionContext(path).messages`, as references into the path.
pub fn context_items(scan: &Scanned, path: &[PathEntry]) -> Result<Vec<ContextItem>, PlanError> {
    let mut out = Vec::new();
    let push = |out: &mut Vec<ContextItem>, i: usize| -> Result<(), PlanError> {
        let e = &path[i];
        let f = &scan.facts[e.row];
        match e.kind {
            Kind::Message => out.push(ContextItem::Entry(i)),
            Kind::CustomMessage => {
                if f.bad_timestamp() {
                    return Err(bad_ts(scan, path, i, "custom message timestamp"));
                }
                out.push(ContextItem::Entry(i))
            }
            Kind::BranchSummary if f.role.is_some() => {
                if f.bad_timestamp() {
                    return Err(bad_ts(scan, path, i, "branch summary timestamp"));
                }
                out.push(ContextItem::Entry(i))
            }
            _ => {}
        }
        Ok(())
    };
    let last = path.iter().rposition(|e| e.kind == Kind::Compaction);
    match last {
        None => {
            for i in 0..path.len() {
                push(&mut out, i)?;
            }
        }
        Some(ci) => {
            if scan.facts[path[ci].row].bad_timestamp() {
                return Err(bad_ts(scan, path, ci, "compaction summary timestamp"));
            }
            out.push(ContextItem::Summary(ci));
            let cid = path[ci].id;
            let idx = path
                .iter()
                .position(|e| e.kind == Kind::Compaction && e.id == cid)
                .unwrap_or(ci);
            let first_kept = path[ci].first_kept;
            let mut found = false;
            for (i, e) in path.iter().enumerate().take(idx) {
                if first_kept == Some(e.id) {
                    found = true;
                }
                if found {
                    push(&mut out, i)?;
                }
            }
            for i in idx + 1..path.len() {
                push(&mut out, i)?;
            }
        }
    }
    Ok(out)
}

/// `estimateContextTokens` over a rebuilt context.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    /// Total tokens.
    pub tokens: f64,
    /// Tokens from the last usable provider usage.
    pub usage_tokens: f64,
    /// Estimated tokens after that message.
    pub trailing_tokens: u64,
    /// Path index of the message whose usage was used.
    pub usage_entry: Option<usize>,
}

/// The estimate of §4.3 over context items.
pub fn estimate(scan: &Scanned, path: &[PathEntry], items: &[ContextItem]) -> Estimate {
    let tokens_of = |it: &ContextItem| match it {
        ContextItem::Summary(i) | ContextItem::Entry(i) => scan.facts[path[*i].row].tokens,
    };
    let found = items.iter().enumerate().rev().find_map(|(k, it)| match it {
        ContextItem::Entry(i) => {
            let f = &scan.facts[path[*i].row];
            (f.role == Role::Assistant)
                .then_some(f.usage_tokens())
                .flatten()
                .map(|u| (k, *i, u))
        }
        ContextItem::Summary(_) => None,
    });
    match found {
        None => {
            let t: u64 = items.iter().map(tokens_of).sum();
            Estimate {
                tokens: t as f64,
                usage_tokens: 0.0,
                trailing_tokens: t,
                usage_entry: None,
            }
        }
        Some((k, i, u)) => {
            let t: u64 = items[k + 1..].iter().map(tokens_of).sum();
            Estimate {
                tokens: u + t as f64,
                usage_tokens: u,
                trailing_tokens: t,
                usage_entry: Some(i),
            }
        }
    }
}

/// The sum of per-message estimates (`estimateTokenCountSafe`).
pub fn estimate_sum(scan: &Scanned, path: &[PathEntry], items: &[ContextItem]) -> u64 {
    items
        .iter()
        .map(|it| match it {
            ContextItem::Summary(i) | ContextItem::Entry(i) => scan.facts[path[*i].row].tokens,
        })
        .sum()
}

/// The result of `findCutPoint`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CutPoint {
    /// Path index of the first kept entry.
    pub first_kept_index: usize,
    /// Path index where the split turn starts.
    pub turn_start_index: Option<usize>,
    /// Whether the cut splits a turn.
    pub is_split_turn: bool,
}

fn is_cut_point(scan: &Scanned, e: &PathEntry) -> bool {
    match e.kind {
        Kind::Message => matches!(
            role(scan, e),
            Role::BashExecution
                | Role::Custom
                | Role::BranchSummary
                | Role::CompactionSummary
                | Role::User
                | Role::Assistant
        ),
        Kind::BranchSummary | Kind::CustomMessage => true,
        _ => false,
    }
}

/// `findCutPoint(path, start, end, keepRecentTokens)`.
pub fn find_cut_point(
    scan: &Scanned,
    path: &[PathEntry],
    start: usize,
    end: usize,
    keep_recent_tokens: u64,
) -> CutPoint {
    let cuts: Vec<usize> = (start..end)
        .filter(|&i| is_cut_point(scan, &path[i]))
        .collect();
    if cuts.is_empty() {
        return CutPoint {
            first_kept_index: start,
            turn_start_index: None,
            is_split_turn: false,
        };
    }
    let mut acc = 0u64;
    let mut cut = cuts[0];
    for i in (start..end).rev() {
        if path[i].kind != Kind::Message {
            continue;
        }
        acc += scan.facts[path[i].row].tokens;
        if acc >= keep_recent_tokens {
            cut = cuts
                .iter()
                .copied()
                .find(|&c| c >= i)
                .unwrap_or(cuts[cuts.len() - 1]);
            break;
        }
    }
    while cut > start {
        let prev = path[cut - 1].kind;
        if prev == Kind::Compaction || prev == Kind::Message {
            break;
        }
        cut -= 1;
    }
    let is_user = path[cut].kind == Kind::Message && role(scan, &path[cut]) == Role::User;
    let turn_start = if is_user {
        None
    } else {
        (start..=cut).rev().find(|&i| {
            let e = &path[i];
            match e.kind {
                Kind::BranchSummary | Kind::CustomMessage => true,
                Kind::Message => matches!(role(scan, e), Role::User | Role::BashExecution),
                _ => false,
            }
        })
    };
    CutPoint {
        first_kept_index: cut,
        turn_start_index: turn_start,
        is_split_turn: !is_user && turn_start.is_some(),
    }
}

/// What `prepareCompaction` returns.
#[derive(Debug, Clone)]
pub struct Preparation {
    /// The id of the first kept entry.
    pub first_kept_entry_id: String,
    /// The cut.
    pub cut: CutPoint,
    /// The context estimate before compacting.
    pub tokens_before: f64,
    /// Where summarisation starts on the path (after the previous compaction's kept tail).
    pub boundary_start: usize,
    /// Path index of the previous compaction, if any.
    pub previous_compaction: Option<usize>,
    /// Path indices of the entries whose messages are summarised.
    pub messages_to_summarize: Vec<usize>,
    /// Path indices of the split turn's prefix.
    pub turn_prefix_messages: Vec<usize>,
    /// Read-only files (sorted).
    pub read_files: Vec<String>,
    /// Modified files (sorted).
    pub modified_files: Vec<String>,
}

/// Whether the entry converts to an agent message (message, custom message, branch summary).
pub fn converts(e: &PathEntry) -> bool {
    matches!(
        e.kind,
        Kind::Message | Kind::CustomMessage | Kind::BranchSummary
    )
}

/// `prepareCompaction(path, {keepRecentTokens})`: `None` when the path is empty or already
/// ends with a compaction. `previous_details` is the previous compaction's `details` and
/// `fromHook` (read back by the caller).
pub fn prepare(
    scan: &Scanned,
    path: &[PathEntry],
    keep_recent_tokens: u64,
    previous: Option<&Value>,
) -> Result<Option<Preparation>, PlanError> {
    if path.is_empty() || path[path.len() - 1].kind == Kind::Compaction {
        return Ok(None);
    }
    let prev = path.iter().rposition(|e| e.kind == Kind::Compaction);
    let boundary_start = match prev {
        None => 0,
        Some(pi) => {
            let fk = path[pi].first_kept;
            path.iter().position(|e| Some(e.id) == fk).unwrap_or(pi + 1)
        }
    };
    let items = context_items(scan, path)?;
    let tokens_before = estimate(scan, path, &items).tokens;
    let cut = find_cut_point(scan, path, boundary_start, path.len(), keep_recent_tokens);
    let Some(first_kept) = Some(scan.index.str(path[cut.first_kept_index].id))
        .filter(|s| !s.is_empty())
        .map(String::from)
    else {
        return Err(PlanError::NoId {
            path: scan.path.clone(),
        });
    };
    let history_end = if cut.is_split_turn {
        cut.turn_start_index.unwrap_or(cut.first_kept_index)
    } else {
        cut.first_kept_index
    };
    let messages_to_summarize: Vec<usize> = (boundary_start..history_end)
        .filter(|&i| converts(&path[i]))
        .collect();
    let turn_prefix_messages: Vec<usize> = if cut.is_split_turn {
        (cut.turn_start_index.unwrap_or(cut.first_kept_index)..cut.first_kept_index)
            .filter(|&i| converts(&path[i]))
            .collect()
    } else {
        Vec::new()
    };
    // extractFileOperations + the split-turn prefix.
    let mut read: Vec<String> = Vec::new();
    let mut written: Vec<String> = Vec::new();
    let mut edited: Vec<String> = Vec::new();
    let add = |set: &mut Vec<String>, p: &str| {
        if !set.iter().any(|x| x == p) {
            set.push(p.to_string());
        }
    };
    if let Some(prev) = previous {
        if prev.get("fromHook").is_none_or(|h| !js::truthy(h)) {
            if let Some(d) = prev.get("details").filter(|d| js::truthy(d)) {
                if let Some(Value::Array(r)) = d.get("readFiles") {
                    for f in r.iter().filter_map(Value::as_str) {
                        add(&mut read, f);
                    }
                }
                if let Some(Value::Array(m)) = d.get("modifiedFiles") {
                    for f in m.iter().filter_map(Value::as_str) {
                        add(&mut edited, f);
                    }
                }
            }
        }
    }
    for &i in messages_to_summarize
        .iter()
        .chain(turn_prefix_messages.iter())
    {
        let e = &path[i];
        if e.kind != Kind::Message {
            continue;
        }
        for (op, p) in scan.file_ops(e.row) {
            match op {
                FileOp::Read => add(&mut read, p),
                FileOp::Write => add(&mut written, p),
                FileOp::Edit => add(&mut edited, p),
            }
        }
    }
    let mut modified: Vec<String> = Vec::new();
    for p in edited.iter().chain(written.iter()) {
        add(&mut modified, p);
    }
    let mut read_files: Vec<String> = read.into_iter().filter(|f| !modified.contains(f)).collect();
    read_files.sort_by(|a, b| js_cmp(a, b));
    modified.sort_by(|a, b| js_cmp(a, b));
    Ok(Some(Preparation {
        first_kept_entry_id: first_kept,
        cut,
        tokens_before,
        boundary_start,
        previous_compaction: prev,
        messages_to_summarize,
        turn_prefix_messages,
        read_files,
        modified_files: modified,
    }))
}

/// JavaScript's default sort order (UTF-16 code units).
pub fn js_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    a.encode_utf16().cmp(b.encode_utf16())
}

/// `getMessageFromEntry` for summarisation: the agent message of a full entry.
pub fn entry_message(e: &Value) -> Option<Value> {
    let ts = || {
        e.get("timestamp")
            .and_then(Value::as_str)
            .filter(|s| !js::trim(s).is_empty())
            .and_then(js::date_parse)
            .map_or(Value::Null, |t| json!(t))
    };
    let put = |m: &mut Map<String, Value>, k: &str| {
        if let Some(v) = e.get(k) {
            m.insert(k.into(), v.clone());
        }
    };
    match type_of(e) {
        Some("message") => e.get("message").cloned(),
        Some("custom_message") => {
            let mut m = Map::new();
            m.insert("role".into(), json!("custom"));
            put(&mut m, "customType");
            put(&mut m, "content");
            put(&mut m, "display");
            put(&mut m, "details");
            m.insert("timestamp".into(), ts());
            Some(Value::Object(m))
        }
        Some("branch_summary") => {
            let mut m = Map::new();
            m.insert("role".into(), json!("branchSummary"));
            put(&mut m, "summary");
            put(&mut m, "fromId");
            m.insert("timestamp".into(), ts());
            Some(Value::Object(m))
        }
        _ => None,
    }
}

/// The compaction the manual hardening rule rewrites: whether there are messages to
/// summarise before the kept tail (`hasMessagesToSummarizeBeforeKeptTail`) on `path`, where
/// the last entry is the new compaction.
pub fn has_messages_before_kept_tail(path: &[PathEntry]) -> bool {
    let Some(ci) = path.len().checked_sub(1) else {
        return false;
    };
    let fk = path[ci].first_kept;
    let first_kept = path.iter().position(|e| Some(e.id) == fk);
    let Some(fi) = first_kept else { return false };
    if ci == 0 || fi >= ci {
        return false;
    }
    let mut start = 0;
    for i in (0..ci).rev() {
        if path[i].kind != Kind::Compaction {
            continue;
        }
        let pk = path[i].first_kept;
        start = path.iter().position(|e| Some(e.id) == pk).unwrap_or(i + 1);
        break;
    }
    start < fi && path[start..fi].iter().any(converts)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The measured example of §4.4: tokens `1004,1002,7,7,2000,12,1,1003,102,502`,
    /// roles `U A U A(call) R A(call) R A U A`.
    #[test]
    fn cut_points_match_the_measured_example() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.jsonl");
        let mut lines = vec![
            r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}"#.to_string(),
        ];
        let spec = [
            ("user", 1004),
            ("assistant", 1002),
            ("user", 7),
            ("call", 7),
            ("toolResult", 2000),
            ("call", 12),
            ("toolResult", 1),
            ("assistant", 1003),
            ("user", 102),
            ("assistant", 502),
        ];
        let mut parent = "null".to_string();
        for (i, (r, tok)) in spec.iter().enumerate() {
            let chars = tok * 4;
            let msg = match *r {
                "user" => json!({"role":"user","content":"u".repeat(chars),"timestamp":i}),
                "assistant" => {
                    json!({"role":"assistant","content":[{"type":"text","text":"a".repeat(chars)}],"stopReason":"stop","timestamp":i})
                }
                "call" => {
                    // name "read" (4) + JSON args {"path":"…"} (11 + n) = chars
                    let n = chars - 4 - 11;
                    json!({"role":"assistant","content":[{"type":"toolCall","id":format!("c{i}"),"name":"read","arguments":{"path":"p".repeat(n)}}],"stopReason":"toolUse","timestamp":i})
                }
                _ => {
                    json!({"role":"toolResult","toolCallId":format!("c{}", i - 1),"toolName":"read","content":[{"type":"text","text":"r".repeat(chars)}],"isError":false,"timestamp":i})
                }
            };
            let id = format!("e{i}");
            lines.push(format!(
                r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"2026-01-01T00:00:00.000Z","message":{}}}"#,
                msg
            ));
            parent = format!("\"{id}\"");
        }
        std::fs::write(&p, lines.join("\n") + "\n").unwrap();
        let scan =
            crate::compaction::scan::scan_file(&crate::fs::data_file::DataPath::given(&p)).unwrap();
        let path = active_path(&scan);
        let toks: Vec<u64> = path.iter().map(|e| scan.facts[e.row].tokens).collect();
        assert_eq!(toks, vec![1004, 1002, 7, 7, 2000, 12, 1, 1003, 102, 502]);
        let cut = |keep| find_cut_point(&scan, &path, 0, path.len(), keep);
        assert_eq!(
            cut(100),
            CutPoint {
                first_kept_index: 9,
                turn_start_index: Some(8),
                is_split_turn: true
            }
        );
        assert_eq!(
            cut(600),
            CutPoint {
                first_kept_index: 8,
                turn_start_index: None,
                is_split_turn: false
            }
        );
        assert_eq!(
            cut(1500),
            CutPoint {
                first_kept_index: 7,
                turn_start_index: Some(2),
                is_split_turn: true
            }
        );
        assert_eq!(
            cut(3000),
            CutPoint {
                first_kept_index: 5,
                turn_start_index: Some(2),
                is_split_turn: true
            }
        );
        assert_eq!(cut(5000).first_kept_index, 0);
        let prep = prepare(&scan, &path, 1500, None).unwrap().unwrap();
        assert_eq!(prep.first_kept_entry_id, "e7");
        assert_eq!(prep.messages_to_summarize, vec![0, 1]);
        assert_eq!(prep.turn_prefix_messages, vec![2, 3, 4, 5, 6]);
        assert!(prep.read_files.len() == 2 && prep.modified_files.is_empty());
    }
}
