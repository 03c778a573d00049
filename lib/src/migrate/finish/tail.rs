//! Appending the tail of a leftover JSONL to its DB transcript, as 9.6's
//! `appendTranscriptEventsInTransaction` appends events: one transaction.
//!
//! Each line is stored as 9.6 stores it (`migrate::rows`: re-serialised, the same
//! compression rule, the identity row; an event whose id the transcript already has is
//! skipped, a repeated idempotency key kept as NULL), after the last seq; the window's
//! `transcript_updated_at` advances strictly, and the transcript's index state is marked
//! for rebuild (`needs_rebuild = 1`, 9.6's `markSessionTranscriptIndexDirtyInTransaction`)
//! so the gateway rebuilds its active-path projection and full-text rows from the events
//! when it next opens the session. Inside the transaction the transcript must still end
//! where the match ended (nothing appended since); otherwise nothing is written.

use std::collections::HashSet;
use std::path::Path;

use rusqlite::{params, Connection, OpenFlags, TransactionBehavior};

use crate::agent_db::AgentDbError;
use crate::migrate::plan::legacy_jsonl::LegacyEvent;
use crate::migrate::rows;

/// A failure to append.
fn sql(path: &Path) -> impl Fn(rusqlite::Error) -> AgentDbError + '_ {
    move |source| AgentDbError::Sqlite {
        path: path.to_path_buf(),
        source,
    }
}

/// Appends `tail` to the transcript `session_id` of the database at `db_path`, whose
/// transcript must hold exactly `expected_rows` rows now. Returns the events written.
pub fn append_tail(
    db_path: &Path,
    session_id: &str,
    expected_rows: usize,
    tail: &[LegacyEvent],
    now_ms: i64,
) -> Result<usize, AgentDbError> {
    let e = sql(db_path);
    let mut conn = Connection::open_with_flags(
        db_path,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(&e)?;
    conn.busy_timeout(std::time::Duration::from_secs(5))
        .map_err(&e)?;
    conn.pragma_update(None, "foreign_keys", true).map_err(&e)?;
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(&e)?;
    let (rows_now, last): (i64, Option<i64>) = tx
        .query_row(
            "SELECT count(*), max(seq) FROM transcript_events WHERE session_id = ?1",
            [session_id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .map_err(&e)?;
    if rows_now as usize != expected_rows {
        return Err(AgentDbError::BadRow {
            path: db_path.to_path_buf(),
            what: format!(
                "transcript {session_id:?} has {rows_now} rows now, {expected_rows} when it was matched: something wrote it meanwhile; nothing appended (run finish again)"
            ),
        });
    }
    let mut seen_ids: HashSet<String> = HashSet::new();
    let mut seen_keys: HashSet<String> = HashSet::new();
    {
        let mut st = tx
            .prepare("SELECT event_id, message_idempotency_key FROM transcript_event_identities WHERE session_id = ?1")
            .map_err(&e)?;
        let mut q = st.query([session_id]).map_err(&e)?;
        while let Some(r) = q.next().map_err(&e)? {
            seen_ids.insert(r.get(0).map_err(&e)?);
            if let Some(k) = r.get::<_, Option<String>>(1).map_err(&e)? {
                seen_keys.insert(k);
            }
        }
    }
    let mut seq = last.map_or(0, |s| s + 1);
    let mut written = 0usize;
    for ev in tail {
        let (value, text) = rows::event_line(&ev.text).map_err(|b| AgentDbError::BadRow {
            path: db_path.to_path_buf(),
            what: format!("line {}: {b}", ev.line),
        })?;
        let created_at = rows::event_created_at(&value).map_or(now_ms, |f| f as i64);
        let mut identity = rows::event_identity(&value);
        if let Some(id) = &identity {
            if seen_ids.contains(&id.event_id) {
                continue;
            }
        }
        let payload = rows::event_payload(&tx, &text, &value).map_err(&e)?;
        tx.execute(
            "INSERT INTO transcript_events (session_id, seq, event_json, created_at, event_zstd, event_utf8_bytes, navigation_json) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![
                session_id,
                seq,
                payload.event_json,
                created_at,
                payload.event_zstd,
                payload.event_utf8_bytes,
                payload.navigation_json
            ],
        )
        .map_err(&e)?;
        if let Some(id) = identity.as_mut() {
            seen_ids.insert(id.event_id.clone());
            if let Some(k) = &id.message_idempotency_key {
                if !seen_keys.insert(k.clone()) {
                    id.message_idempotency_key = None;
                }
            }
            tx.execute(
                "INSERT INTO transcript_event_identities (session_id, event_id, seq, event_type, parent_id, message_idempotency_key, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                params![
                    session_id,
                    id.event_id,
                    seq,
                    id.event_type,
                    id.parent_id,
                    id.message_idempotency_key,
                    created_at
                ],
            )
            .map_err(&e)?;
        }
        seq += 1;
        written += 1;
    }
    if written > 0 {
        tx.execute(
            "UPDATE session_windows SET transcript_updated_at = max(?2, coalesce(transcript_updated_at, -1) + 1, coalesce(transcript_observed_at, -1) + 1) WHERE session_id = ?1",
            params![session_id, now_ms],
        )
        .map_err(&e)?;
        tx.execute(
            "INSERT INTO session_transcript_index_state (session_id, indexed_seq, leaf_event_id, needs_rebuild, active_event_count, active_message_count, updated_at)
             VALUES (?1, -1, NULL, 1, 0, 0, ?2)
             ON CONFLICT(session_id) DO UPDATE SET needs_rebuild = 1, updated_at = excluded.updated_at",
            params![session_id, now_ms],
        )
        .map_err(&e)?;
    }
    tx.commit().map_err(&e)?;
    Ok(written)
}
