//! What a compaction records outside the transcript (`transcript.md` §4.8 step 7, §4.9,
//! §4.11 step 7): the session entry's counters and token fields, the successor's id and
//! file, the checkpoint list (newest 25), and a `compacted` event in the signal log.

use serde_json::{json, Map, Value};

/// Inputs of the entry update after a compaction.
#[derive(Debug, Clone)]
pub struct CompactionRecord<'a> {
    /// The store key.
    pub session_key: &'a str,
    /// The clock.
    pub now_ms: i64,
    /// The estimate after compaction, when sane.
    pub tokens_after: Option<u64>,
    /// The successor (id, file), when rotated.
    pub successor: Option<(&'a str, &'a str)>,
    /// The checkpoint to append, when there is one.
    pub checkpoint: Option<Value>,
}

/// Checkpoints kept per entry.
pub const MAX_CHECKPOINTS: usize = 25;
/// Bytes of legacy checkpoint snapshots kept per entry.
pub const MAX_CHECKPOINT_SNAPSHOT_BYTES: u64 = 128 * 1024 * 1024;

fn set(e: &mut Map<String, Value>, k: &str, v: Value) {
    e.insert(k.into(), v);
}

/// `trimSessionCheckpoints`: newest 25, then (newest first) while referenced legacy
/// snapshot files sum ≤ 128 MiB (the newest always kept). `snapshot_bytes` sizes a
/// `preCompaction.sessionFile`.
pub fn trim_checkpoints(list: Vec<Value>, snapshot_bytes: impl Fn(&str) -> u64) -> Vec<Value> {
    let skip = list.len().saturating_sub(MAX_CHECKPOINTS);
    let recent: Vec<Value> = list.into_iter().skip(skip).collect();
    let mut kept: Vec<Value> = Vec::new();
    let mut bytes = 0u64;
    for c in recent.into_iter().rev() {
        let b = c
            .get("preCompaction")
            .and_then(|p| p.get("sessionFile"))
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map_or(0, &snapshot_bytes);
        if kept.is_empty() || bytes + b <= MAX_CHECKPOINT_SNAPSHOT_BYTES {
            bytes += b;
            kept.push(c);
        }
    }
    kept.reverse();
    kept
}

/// Applies a compaction to a session entry: the checkpoint first
/// (`persistSessionCompactionCheckpoint`), then `incrementCompactionCount` merged as the
/// gateway merges patches; `contextBudgetStatus` is dropped as `sessions.compact` does.
pub fn apply_compaction(entry: &mut Map<String, Value>, r: &CompactionRecord<'_>) {
    let old_id = entry
        .get("sessionId")
        .and_then(Value::as_str)
        .map(String::from);
    if let Some(cp) = &r.checkpoint {
        if old_id.is_some() {
            let mut list: Vec<Value> = match entry.get("compactionCheckpoints") {
                Some(Value::Array(a)) => a.clone(),
                _ => Vec::new(),
            };
            list.push(cp.clone());
            let list = trim_checkpoints(list, |p| {
                std::fs::metadata(p)
                    .ok()
                    .filter(|m| m.is_file())
                    .map_or(0, |m| m.len())
            });
            let created = cp.get("createdAt").and_then(Value::as_f64).unwrap_or(0.0);
            let updated = entry
                .get("updatedAt")
                .and_then(Value::as_f64)
                .unwrap_or(0.0);
            set(
                entry,
                "updatedAt",
                crate::compaction::entry::number(updated.max(created)),
            );
            set(entry, "compactionCheckpoints", Value::Array(list));
        }
    }
    let mut rotated = false;
    let count = entry
        .get("compactionCount")
        .and_then(Value::as_f64)
        .unwrap_or(0.0)
        .max(0.0);
    set(
        entry,
        "compactionCount",
        crate::compaction::entry::number(count + 1.0),
    );
    set(entry, "updatedAt", json!(r.now_ms));
    if let Some((new_id, new_file)) = r.successor {
        if old_id.as_deref() != Some(new_id) {
            set(entry, "sessionId", json!(new_id));
            set(entry, "sessionFile", json!(new_file));
            let family = entry
                .get("usageFamilyKey")
                .cloned()
                .filter(|v| !v.is_null())
                .unwrap_or_else(|| json!(r.session_key));
            set(entry, "usageFamilyKey", family);
            let mut ids: Vec<Value> = match entry.get("usageFamilySessionIds") {
                Some(Value::Array(a)) => a.clone(),
                _ => Vec::new(),
            };
            if let Some(o) = &old_id {
                ids.push(json!(o));
            }
            ids.push(json!(new_id));
            let mut uniq: Vec<Value> = Vec::new();
            for i in ids {
                if !uniq.contains(&i) {
                    uniq.push(i);
                }
            }
            set(entry, "usageFamilySessionIds", Value::Array(uniq));
            rotated = true;
        }
    }
    match r.tokens_after {
        Some(t) => {
            set(entry, "totalTokens", json!(t));
            set(entry, "totalTokensFresh", json!(true));
            for k in ["inputTokens", "outputTokens", "cacheRead", "cacheWrite"] {
                entry.shift_remove(k);
            }
        }
        None => set(entry, "totalTokensFresh", json!(false)),
    }
    if rotated {
        set(entry, "sessionStartedAt", json!(r.now_ms));
    }
    entry.shift_remove("contextBudgetStatus");
}

/// The store update of `--max-lines` (§4.11 step 7): token fields cleared, `updatedAt`
/// set, `compactionCount` untouched.
pub fn apply_trim(entry: &mut Map<String, Value>, now_ms: i64) {
    for k in [
        "contextBudgetStatus",
        "inputTokens",
        "outputTokens",
        "totalTokens",
        "totalTokensFresh",
    ] {
        entry.shift_remove(k);
    }
    set(entry, "updatedAt", json!(now_ms));
}

/// Inputs of a checkpoint record.
#[derive(Debug, Clone)]
pub struct Checkpoint<'a> {
    /// The canonical session key.
    pub session_key: &'a str,
    /// The session id after compaction.
    pub session_id: &'a str,
    /// When the compaction started.
    pub created_at: i64,
    /// `tokensBefore`.
    pub tokens_before: f64,
    /// `tokensAfter`.
    pub tokens_after: Option<u64>,
    /// The summary.
    pub summary: &'a str,
    /// The effective first kept entry.
    pub first_kept_entry_id: &'a str,
    /// Header id, leaf and last entry of the transcript before compaction.
    pub pre: (&'a str, &'a str, Option<&'a str>),
    /// Active file, leaf and last entry after compaction.
    pub post: (&'a str, Option<&'a str>, Option<&'a str>),
}

/// The `compactionCheckpoints` record of §4.9 (reason `manual`).
pub fn checkpoint_record(c: &Checkpoint<'_>) -> Value {
    let mut m = Map::new();
    m.insert(
        "checkpointId".into(),
        json!(uuid::Uuid::new_v4().to_string()),
    );
    m.insert("sessionKey".into(), json!(c.session_key));
    m.insert("sessionId".into(), json!(c.session_id));
    m.insert("createdAt".into(), json!(c.created_at));
    m.insert("reason".into(), json!("manual"));
    m.insert(
        "tokensBefore".into(),
        crate::compaction::entry::number(c.tokens_before),
    );
    if let Some(t) = c.tokens_after {
        m.insert("tokensAfter".into(), json!(t));
    }
    if !c.summary.trim().is_empty() {
        m.insert("summary".into(), json!(c.summary.trim()));
    }
    if !c.first_kept_entry_id.trim().is_empty() {
        m.insert(
            "firstKeptEntryId".into(),
            json!(c.first_kept_entry_id.trim()),
        );
    }
    let mut pre = Map::new();
    pre.insert("sessionId".into(), json!(c.pre.0));
    pre.insert("leafId".into(), json!(c.pre.1));
    if let Some(e) = c.pre.2 {
        pre.insert("entryId".into(), json!(e));
    }
    m.insert("preCompaction".into(), Value::Object(pre));
    let mut post = Map::new();
    post.insert("sessionId".into(), json!(c.session_id));
    post.insert("sessionFile".into(), json!(c.post.0));
    if let Some(l) = c.post.1 {
        post.insert("leafId".into(), json!(l));
    }
    if let Some(e) = c.post.2 {
        post.insert("entryId".into(), json!(e));
    }
    m.insert("postCompaction".into(), Value::Object(post));
    Value::Object(m)
}

/// Records a `compacted` event (actor `system`, summary `session compacted`, dedupe key
/// `compacted:<operation id>`) when the state database exists. `None` without a database;
/// `Err` is why recording failed (best effort: the compaction stands).
pub fn record_signal(
    ctx: &crate::install::context::StateContext,
    session_key: &str,
    agent_id: &str,
    session_id: &str,
    operation_id: &str,
) -> Option<Result<i64, String>> {
    use crate::signals::{journal::RecordInput, Recorder, StateDb};
    let path = ctx.layout.state_db_path();
    if !path.exists() {
        return None;
    }
    let run = || -> Result<i64, String> {
        let mut db = StateDb::open_write(&path).map_err(|e| e.to_string())?;
        let input = RecordInput {
            session_key: session_key.to_string(),
            session_id: Some(session_id.to_string()),
            agent_id: agent_id.to_string(),
            kind: "compacted".into(),
            actor_type: "system".into(),
            dedupe_key: Some(format!("compacted:{operation_id}")),
            summary: "session compacted".into(),
            ..RecordInput::default()
        };
        let mut rec = Recorder::new(&db);
        let out = rec
            .record(&mut db, &input, ctx.now_ms)
            .map_err(|e| e.to_string())?;
        Ok(out.event.map_or(0, |e| e.sequence))
    };
    Some(run())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entry_update_like_increment_compaction_count() {
        let mut e: Map<String, Value> = serde_json::from_str(
            r#"{"sessionId":"old","updatedAt":5,"inputTokens":3,"totalTokens":900,"contextBudgetStatus":{},"compactionCount":2}"#,
        )
        .unwrap();
        apply_compaction(
            &mut e,
            &CompactionRecord {
                session_key: "agent:main:main",
                now_ms: 100,
                tokens_after: Some(42),
                successor: Some(("new", "/s/new.jsonl")),
                checkpoint: None,
            },
        );
        assert_eq!(
            serde_json::to_string(&e).unwrap(),
            r#"{"sessionId":"new","updatedAt":100,"totalTokens":42,"compactionCount":3,"sessionFile":"/s/new.jsonl","usageFamilyKey":"agent:main:main","usageFamilySessionIds":["old","new"],"totalTokensFresh":true,"sessionStartedAt":100}"#
        );
        let list: Vec<Value> = (0..30).map(|i| json!({"n": i})).collect();
        let kept = trim_checkpoints(list, |_| 0);
        assert_eq!(kept.len(), 25);
        assert_eq!(kept[0]["n"], 5);
    }
}
