//! The `sessions_history` projection of a session kept in the agent database, where the
//! 2026.9.6 gateway's differs from the file layout's (2026.7).
//!
//! The 9.6 gateway serves `chat.history` from `transcript_events` and marks every message
//! with where it sits in the stored transcript: `__openclaw.transcriptPosition`
//! (`{source, rawSeq}`: `source` names the database, agent, session and rewrite generation
//! as a SHA-256, `rawSeq` is the event's `seq`). An inline image keeps its place as an
//! `artifactId` built from that position, its payload dropped (`omitted`, and `bytes` as
//! the decoded size), and a compaction marker carries its `tokensBefore`/`tokensAfter`.
//! The tool's result also carries the session's `pendingInputs` page (the
//! `session_pending_inputs` rows not yet in the transcript), whose bytes count against the
//! 80 KiB budget.
//!
//! A page is read from the end of the transcript, and the reader numbers the rows it read;
//! 9.6 numbers every message from the start of the transcript (`seq`, the position among
//! the messages and boundaries of the active path). The numbering comes from the path
//! index the gateway keeps (`session_transcript_active_events`, `message_position`), so a
//! page of a session of a million events still reads only its end.
//!
//! Everything else is the shared projection of [`super::history`]; this module only adds
//! what the database path has, on the messages a page shows.

use std::path::Path;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use rusqlite::OptionalExtension;
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};

use super::history;
use crate::agent_db::{AgentDb, AgentDbError};
use crate::js;

/// The prefix of an image artifact id (`transcript-image-artifacts.ts`).
const IMAGE_ARTIFACT_PREFIX: &str = "artifact_transcript_image_";

/// The media block fields that never reach a client (`MEDIA_PRIVATE_FIELDS`).
const MEDIA_PRIVATE_FIELDS: [&str; 6] = ["data", "blob", "path", "file", "filePath", "localPath"];

/// `createTranscriptDisplaySource`: base64url SHA-256 of the JSON array
/// `["sqlite", dbPath, agentId, sessionId, generation]`.
pub fn display_source(
    db_path: &Path,
    agent_id: &str,
    session_id: &str,
    generation: &str,
) -> String {
    let mut text = String::from("[\"sqlite\",");
    for (i, part) in [
        &*db_path.to_string_lossy(),
        agent_id,
        session_id,
        generation,
    ]
    .iter()
    .enumerate()
    {
        if i > 0 {
            text.push(',');
        }
        crate::js::jsjson::write_string(&mut text, part);
    }
    text.push(']');
    URL_SAFE_NO_PAD.encode(Sha256::digest(text.as_bytes()))
}

/// `estimateBase64DecodedBytes`.
pub fn estimate_base64_decoded_bytes(b64: &str) -> u64 {
    let units: Vec<u16> = b64.encode_utf16().collect();
    let effective = units.iter().filter(|&&c| c > 32).count() as u64;
    if effective == 0 {
        return 0;
    }
    let mut end = units.len();
    let skip_ws = |end: &mut usize| {
        while *end > 0 && units[*end - 1] <= 32 {
            *end -= 1;
        }
    };
    skip_ws(&mut end);
    let mut padding = 0;
    if end > 0 && units[end - 1] == u16::from(b'=') {
        padding = 1;
        end -= 1;
        skip_ws(&mut end);
        if end > 0 && units[end - 1] == u16::from(b'=') {
            padding = 2;
        }
    }
    (effective * 3 / 4).saturating_sub(padding)
}

/// One database session, as its history page is annotated.
pub struct DbHistory<'a> {
    db: &'a AgentDb,
    session_id: String,
    /// `None` when the session has no rewrite generation (9.6 then adds no position).
    source: Option<String>,
    /// How 9.6 numbers the session's history from the transcript start; `None` when the
    /// path index cannot say (the page keeps the numbering of the rows it read).
    numbering: Option<DisplayNumbering>,
}

/// The `customType` of runtime context, never shown (`OPENCLAW_RUNTIME_CONTEXT_CUSTOM_TYPE`).
const RUNTIME_CONTEXT_CUSTOM_TYPE: &str = "openclaw.runtime-context";

/// 9.6's numbering of a session's history (`resolveVisibleHistoryProjection`): the
/// messages of the active path (`session_transcript_active_events.message_position`) and
/// the boundaries between them (a compaction, a reset, a custom message shown in
/// history), counted from the start of the transcript. A message's `seq` is one more than
/// the messages and boundaries before it on the path.
///
/// Built from the path index the gateway keeps, so numbering a page reads the boundary
/// rows (through the `event_type` index) and one index row per message, never the events
/// before the page.
#[derive(Debug, Clone, PartialEq, Eq)]
struct DisplayNumbering {
    /// The `active_position` of every boundary, ascending.
    boundaries: Vec<i64>,
    /// `active_message_count` of the index state.
    active_messages: i64,
}

impl DisplayNumbering {
    /// The numbering of `session_id`, or `None` when the index is missing, marked for a
    /// rebuild, or the path holds a reset (9.6 numbers from the latest reset, keeping the
    /// messages it carries over; not read here).
    fn load(db: &AgentDb, session_id: &str) -> Result<Option<Self>, AgentDbError> {
        // A schema without the index tables: no numbering.
        fn optional<T>(db: &AgentDb, e: rusqlite::Error) -> Result<Option<T>, AgentDbError> {
            if is_missing_table(&e) {
                Ok(None)
            } else {
                Err(db.err(e))
            }
        }
        let state: Option<(i64, i64)> = db
            .conn
            .query_row(
                "SELECT needs_rebuild, active_message_count FROM session_transcript_index_state WHERE session_id = ?1",
                [session_id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()
            .or_else(|e| optional(db, e))?;
        let Some((0, active_messages)) = state else {
            return Ok(None);
        };
        let mut st = match db.conn.prepare(
            "SELECT a.active_position, i.event_type, \
                CASE WHEN i.event_type = 'custom_message' THEN e.event_json END, \
                CASE WHEN i.event_type = 'custom_message' THEN e.event_zstd END, \
                e.event_utf8_bytes, e.seq \
             FROM transcript_event_identities AS i \
             JOIN session_transcript_active_events AS a ON a.session_id = i.session_id AND a.event_seq = i.seq \
             JOIN transcript_events AS e ON e.session_id = i.session_id AND e.seq = i.seq \
             WHERE i.session_id = ?1 AND i.event_type IN ('compaction', 'reset', 'custom_message') \
             ORDER BY a.active_position",
        ) {
            Ok(st) => st,
            Err(e) => return optional(db, e),
        };
        let mut rows = st.query([session_id]).map_err(|e| db.err(e))?;
        let mut boundaries = Vec::new();
        while let Some(r) = rows.next().map_err(|e| db.err(e))? {
            let position: i64 = r.get(0).map_err(|e| db.err(e))?;
            let kind: Option<String> = r.get(1).map_err(|e| db.err(e))?;
            match kind.as_deref() {
                Some("reset") => return Ok(None),
                Some("custom_message") => {
                    let ev = crate::agent_db::events::StoredEvent {
                        seq: r.get(5).map_err(|e| db.err(e))?,
                        json: r.get(2).map_err(|e| db.err(e))?,
                        zstd: r.get(3).map_err(|e| db.err(e))?,
                        utf8_bytes: r.get(4).map_err(|e| db.err(e))?,
                    };
                    let shown = crate::agent_db::events::decode_event(&ev)
                        .ok()
                        .and_then(|l| serde_json::from_str::<Value>(&l).ok())
                        .is_some_and(|v| {
                            v.get("display") == Some(&Value::Bool(true))
                                && v.get("customType").and_then(Value::as_str)
                                    != Some(RUNTIME_CONTEXT_CUSTOM_TYPE)
                        });
                    if shown {
                        boundaries.push(position);
                    }
                }
                _ => boundaries.push(position),
            }
        }
        Ok(Some(DisplayNumbering {
            boundaries,
            active_messages,
        }))
    }

    /// The `seq` 9.6 gives the history row stored at `raw_seq` (`None` when it is not on
    /// the active path).
    fn seq_of(
        &self,
        db: &AgentDb,
        session_id: &str,
        raw_seq: i64,
    ) -> Result<Option<u64>, AgentDbError> {
        let mut st = db
            .conn
            .prepare_cached(
                "SELECT active_position, message_position FROM session_transcript_active_events WHERE session_id = ?1 AND event_seq = ?2",
            )
            .map_err(|e| db.err(e))?;
        let row: Option<(i64, Option<i64>)> = st
            .query_row(rusqlite::params![session_id, raw_seq], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .optional()
            .map_err(|e| db.err(e))?;
        let Some((position, message_position)) = row else {
            return Ok(None);
        };
        let messages_before = match message_position {
            Some(m) => m,
            None => {
                // A boundary sits before the next message of the path.
                let mut st = db
                    .conn
                    .prepare_cached(
                        "SELECT message_position FROM session_transcript_active_events WHERE session_id = ?1 AND active_position > ?2 AND message_position IS NOT NULL ORDER BY active_position LIMIT 1",
                    )
                    .map_err(|e| db.err(e))?;
                st.query_row(rusqlite::params![session_id, position], |r| r.get(0))
                    .optional()
                    .map_err(|e| db.err(e))?
                    .unwrap_or(self.active_messages)
            }
        };
        let boundaries_before = self.boundaries.partition_point(|&p| p < position) as i64;
        Ok(u64::try_from(messages_before + boundaries_before + 1).ok())
    }
}

impl<'a> DbHistory<'a> {
    /// The session `session_id` of agent `agent_id` in `db`.
    pub fn new(db: &'a AgentDb, agent_id: &str, session_id: &str) -> Result<Self, AgentDbError> {
        let generation: Option<String> = db
            .conn
            .query_row(
                "SELECT generation FROM transcript_rewrite_watermarks WHERE session_id = ?1",
                [session_id],
                |r| r.get(0),
            )
            .optional()
            .or_else(|e| match e {
                // A schema without the table: no generation.
                rusqlite::Error::SqliteFailure(..) => Ok(None),
                e => Err(db.err(e)),
            })?;
        Ok(DbHistory {
            db,
            session_id: session_id.to_string(),
            source: generation.map(|g| display_source(&db.path, agent_id, session_id, &g)),
            numbering: DisplayNumbering::load(db, session_id)?,
        })
    }

    fn raw_seq_of(&self, id: &str) -> Result<Option<i64>, AgentDbError> {
        let mut st = self
            .db
            .conn
            .prepare_cached(
                "SELECT seq FROM transcript_event_identities WHERE session_id = ?1 AND event_id = ?2",
            )
            .map_err(|e| self.db.err(e))?;
        st.query_row(rusqlite::params![self.session_id, id], |r| r.get(0))
            .optional()
            .map_err(|e| self.db.err(e))
    }

    fn event_at(&self, seq: i64) -> Result<Option<Value>, AgentDbError> {
        let mut found = None;
        crate::agent_db::events::for_each_stored_from(self.db, &self.session_id, seq, |ev| {
            if found.is_none() && ev.seq == seq {
                found = crate::agent_db::events::decode_event(&ev)
                    .ok()
                    .and_then(|l| serde_json::from_str::<Value>(&l).ok());
            }
            Ok(())
        })?;
        Ok(found)
    }

    /// Adds what the database path has to each projected message of a page: the
    /// transcript position, compaction token counts, image artifact ids, and the tool
    /// blocks 9.6 keeps beside an assistant's text. `max_chars` is the display cap.
    pub fn annotate(&self, messages: &mut [Value], max_chars: usize) -> Result<(), AgentDbError> {
        for m in messages.iter_mut() {
            let Some(meta) = m.get("__openclaw").and_then(Value::as_object) else {
                continue;
            };
            let Some(id) = meta.get("id").and_then(Value::as_str).map(String::from) else {
                continue;
            };
            let Some(raw_seq) = self.raw_seq_of(&id)? else {
                continue;
            };
            // The page numbered the rows it read; 9.6 numbers from the transcript start.
            let from_start = match &self.numbering {
                Some(n) => n.seq_of(self.db, &self.session_id, raw_seq)?,
                None => None,
            };
            if let (Some(seq), Some(Value::Object(meta))) = (from_start, m.get_mut("__openclaw")) {
                if meta.contains_key("seq") {
                    meta.insert("seq".into(), json!(seq));
                }
            }
            let Some(source) = &self.source else {
                continue;
            };
            let Some(meta) = m.get("__openclaw").and_then(Value::as_object) else {
                continue;
            };
            let is_compaction = meta.get("kind").and_then(Value::as_str) == Some("compaction");
            let message_seq = meta.get("seq").and_then(Value::as_u64);
            // The file reader stands in for a line over 256 KiB; the database has the
            // event whole, and 9.6 projects it.
            let stand_in = meta.get("reason").and_then(Value::as_str) == Some("oversized")
                && meta.get("truncated") == Some(&Value::Bool(true));
            if let (true, Some(seq)) = (stand_in, message_seq) {
                if let Some(whole) = self
                    .event_at(raw_seq)?
                    .and_then(|ev| history::record_into_message(ev, seq, 0))
                {
                    let mut projected = history::project_chat_display(vec![whole], max_chars);
                    if projected.len() == 1 {
                        *m = projected.remove(0);
                    }
                }
            }
            let mut tokens = Map::new();
            let is_assistant = m.get("role").and_then(Value::as_str) == Some("assistant");
            if is_compaction || is_assistant {
                if let Some(ev) = self.event_at(raw_seq)? {
                    if is_compaction {
                        for k in ["tokensBefore", "tokensAfter"] {
                            if let Some(n) =
                                ev.get(k).filter(|n| n.as_f64().is_some_and(f64::is_finite))
                            {
                                tokens.insert(k.into(), n.clone());
                            }
                        }
                    } else if let Some(content) = mixed_tool_content(&ev, max_chars) {
                        m["content"] = Value::Array(content);
                    }
                }
            }
            let position = json!({"source": source, "rawSeq": raw_seq});
            if let Some(seq) = message_seq.filter(|s| *s > 0).filter(|_| has_image(m)) {
                if let Some(ev) = self.event_at(raw_seq)? {
                    project_image_artifacts(m, &ev, source, raw_seq, &id, seq);
                }
            }
            let Some(Value::Object(meta)) = m.get_mut("__openclaw") else {
                continue;
            };
            let seq = meta.shift_remove("seq");
            meta.extend(tokens);
            meta.insert("transcriptPosition".into(), position);
            if let Some(seq) = seq {
                meta.insert("seq".into(), seq);
            }
        }
        Ok(())
    }

    /// The session's `pendingInputs` page as the `sessions_history` tool shows it: the
    /// inputs accepted but not yet in the transcript (`session_pending_inputs` rows of
    /// the session and its key, `consumed_event_id` unset), newest 20 at most (fewer
    /// when `limit` is lower), oldest first, each bounded to the tool's 4 KiB share.
    ///
    /// The state is the stored one: the gateway, reading the same rows, marks a `queued`
    /// input that no live turn of its own process holds `interrupted` (and writes that);
    /// a reader outside the gateway cannot see which it holds.
    pub fn pending_inputs(
        &self,
        session_key: Option<&str>,
        limit: Option<usize>,
    ) -> Result<PendingInputs, AgentDbError> {
        let rows = match self.pending_rows(session_key, limit) {
            Ok(rows) => rows,
            // A schema without the table: nothing pending.
            Err(e) if is_missing_table(&e) => PendingRows::default(),
            Err(e) => return Err(self.db.err(e)),
        };
        Ok(bound_pending_inputs(
            &rows,
            history::CHAT_HISTORY_TEXT_MAX_CHARS,
        ))
    }

    /// `readPendingInputRows`: the page of rows, newest first, within the gateway's
    /// payload limit.
    fn pending_rows(
        &self,
        session_key: Option<&str>,
        limit: Option<usize>,
    ) -> Result<PendingRows, rusqlite::Error> {
        let max = limit.unwrap_or(200).min(1000);
        let limit = max.clamp(1, 20);
        let filter =
            "session_id = ?1 AND (?2 IS NULL OR session_key = ?2) AND consumed_event_id IS NULL";
        let params = rusqlite::params![self.session_id, session_key];
        let total: i64 = self.db.conn.query_row(
            &format!("SELECT count(input_id) FROM session_pending_inputs WHERE {filter}"),
            params,
            |r| r.get(0),
        )?;
        let mut st = self.db.conn.prepare(&format!(
            "SELECT seq, octet_length(message_json) FROM session_pending_inputs WHERE {filter} ORDER BY seq DESC LIMIT ?3"
        ))?;
        let metadata: Vec<(i64, i64)> = st
            .query_map(
                rusqlite::params![self.session_id, session_key, limit as i64 + 1],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )?
            .collect::<Result<_, _>>()?;
        let mut selected = Vec::new();
        let mut bytes = 0;
        for (seq, size) in &metadata {
            if selected.len() == limit || bytes + size > PENDING_INPUT_PAYLOAD_MAX_BYTES {
                break;
            }
            selected.push(*seq);
            bytes += size;
        }
        let next_before = (selected.len() < metadata.len())
            .then(|| selected.last().copied())
            .flatten();
        let mut st = self.db.conn.prepare_cached(
            "SELECT input_id, run_id, message_json, accepted_at, state FROM session_pending_inputs WHERE seq = ?1",
        )?;
        let mut items = Vec::new();
        // Oldest first, as `listSessionPendingInputs` turns the page around.
        for seq in selected.iter().rev() {
            let row = st.query_row([seq], |r| {
                Ok(PendingRow {
                    id: r.get(0)?,
                    run_id: r.get(1)?,
                    message_json: r.get(2)?,
                    accepted_at: r.get(3)?,
                    state: r.get(4)?,
                })
            })?;
            items.push(row);
        }
        Ok(PendingRows {
            items,
            total,
            next_before,
        })
    }
}

/// Whether `e` says a table or column the statement names is not in the schema (an older
/// or newer schema without it), rather than that reading failed.
fn is_missing_table(e: &rusqlite::Error) -> bool {
    matches!(e, rusqlite::Error::SqliteFailure(_, Some(m)) if m.starts_with("no such table") || m.starts_with("no such column"))
}

/// The largest stored input the gateway hands out (`> 26214400` refused).
const PENDING_INPUT_PAYLOAD_MAX_BYTES: i64 = 26_214_400;
/// `PENDING_INPUT_DISPLAY_MAX_BYTES`: the `chat.history` share of all pending inputs.
const PENDING_INPUT_DISPLAY_MAX_BYTES: usize = 131_072;
/// `PENDING_INPUT_CORRELATION_MAX_CHARS`: a longer `runId` is not shown.
const PENDING_INPUT_CORRELATION_MAX_CHARS: usize = 256;
/// `SESSIONS_HISTORY_PENDING_MAX_BYTES`: the tool's share of the pending inputs.
const SESSIONS_HISTORY_PENDING_MAX_BYTES: usize = 4096;
/// `CHAT_PENDING_INPUT_MESSAGE_PREFIX`.
const PENDING_INPUT_MESSAGE_PREFIX: &str = "pending:";

/// One stored pending input.
#[derive(Debug, Clone)]
struct PendingRow {
    id: String,
    run_id: String,
    message_json: String,
    accepted_at: i64,
    state: String,
}

/// A page of stored pending inputs, oldest first.
#[derive(Debug, Clone, Default)]
struct PendingRows {
    items: Vec<PendingRow>,
    total: i64,
    /// The `seq` an older page starts before, when there is one.
    next_before: Option<i64>,
}

/// The `pendingInputs` of a `sessions_history` result, and whether bounding it cut text.
#[derive(Debug, Clone, PartialEq)]
pub struct PendingInputs {
    /// `{items, total, nextBefore?}`.
    pub page: Value,
    /// Whether a text was shortened or an input left out for size.
    pub truncated: bool,
}

/// `readChatPendingInputs` then the tool's `boundPendingInputs`: each input's user message
/// projected for display (`max_chars` per text; an input the projection hides is left
/// out), replaced when it alone passes its share of 128 KiB, then cut to the tool's 4 KiB
/// budget: `{id, state, acceptedAt, message: {role, content, media?}}`.
fn bound_pending_inputs(rows: &PendingRows, max_chars: usize) -> PendingInputs {
    let single_max = PENDING_INPUT_DISPLAY_MAX_BYTES / rows.items.len().max(1);
    // chat.history's items.
    let mut shown: Vec<(Value, Value)> = Vec::new();
    for row in &rows.items {
        let Ok(message) = serde_json::from_str::<Value>(&row.message_json) else {
            continue;
        };
        if message.get("role").and_then(Value::as_str) != Some("user") {
            continue;
        }
        let Some(mut m) = history::project_chat_display(vec![message], max_chars).pop() else {
            continue;
        };
        if let Some(o) = m.as_object_mut() {
            let mut meta = match o.get("__openclaw") {
                Some(Value::Object(meta)) => meta.clone(),
                _ => Map::new(),
            };
            meta.shift_remove("idempotencyKey");
            meta.shift_remove("runId");
            meta.insert(
                "id".into(),
                json!(format!("{PENDING_INPUT_MESSAGE_PREFIX}{}", row.id)),
            );
            o.insert("timestamp".into(), json!(row.accepted_at));
            o.shift_remove("idempotencyKey");
            o.insert("__openclaw".into(), Value::Object(meta));
        }
        if history::json_bytes(&m) > single_max {
            m = json!({"role": "user", "content": [{"type": "text", "text": OVERSIZED_PLACEHOLDER}]});
        }
        let mut item = Map::new();
        item.insert("id".into(), json!(row.id));
        item.insert("acceptedAt".into(), json!(row.accepted_at));
        item.insert("state".into(), json!(row.state));
        item.insert("message".into(), m.clone());
        if js::utf16_len(&row.run_id) <= PENDING_INPUT_CORRELATION_MAX_CHARS {
            item.insert("runId".into(), json!(row.run_id));
        }
        shown.push((Value::Object(item), m));
    }
    // The tool's bound.
    let with_page = |items: Vec<Value>| {
        let mut page = Map::new();
        page.insert("items".into(), Value::Array(items));
        page.insert("total".into(), json!(rows.total));
        if let Some(n) = rows.next_before {
            page.insert("nextBefore".into(), json!(n));
        }
        Value::Object(page)
    };
    let metadata: Vec<Value> = shown
        .iter()
        .map(|(item, _)| json!({"id": item["id"], "state": item["state"], "acceptedAt": item["acceptedAt"]}))
        .collect();
    let n = shown.len();
    let budget = ((SESSIONS_HISTORY_PENDING_MAX_BYTES as f64
        - history::json_bytes(&with_page(metadata.clone())) as f64
        - (n * 12) as f64)
        / n.max(1) as f64)
        .floor();
    let text_max = ((budget / 8.0).floor()).max(1.0) as usize;
    let mut truncated = false;
    let items = shown
        .iter()
        .zip(metadata)
        .map(|((_, m), meta)| {
            let (content, cut) = sanitize_pending_content(m.get("content"), text_max);
            truncated |= cut;
            let mut message = Map::new();
            message.insert("role".into(), json!("user"));
            if let Some(c) = content {
                message.insert("content".into(), c);
            }
            if let Some(media) = m.get("__openclaw").and_then(|o| o.get("media")) {
                message.insert("media".into(), media.clone());
            }
            let mut message = Value::Object(message);
            if history::json_bytes(&message) as f64 > budget {
                truncated = true;
                message = json!({"role": "user", "content": "[Input omitted; request limit: 1]"});
            }
            let mut item = meta;
            item["message"] = message;
            item
        })
        .collect();
    PendingInputs {
        page: with_page(items),
        truncated,
    }
}

/// `CHAT_HISTORY_OVERSIZED_PLACEHOLDER`.
const OVERSIZED_PLACEHOLDER: &str = "[chat.history omitted: message too large]";

/// `truncateHistoryText` of the 9.6 tool at `max` UTF-16 units.
fn truncate_pending_text(text: &str, max: usize) -> (String, bool) {
    if js::utf16_len(text) <= max {
        return (text.to_string(), false);
    }
    (
        format!("{}\n…(truncated)…", js::utf16_prefix(text, max)),
        true,
    )
}

/// The content of `sanitizeHistoryMessage(message, max)` of the 9.6 tool: a string, and
/// the `text`, `thinking` and `partialJson` of each block, cut at `max`.
fn sanitize_pending_content(content: Option<&Value>, max: usize) -> (Option<Value>, bool) {
    let mut truncated = false;
    let out = match content {
        Some(Value::String(s)) => {
            let (t, cut) = truncate_pending_text(s, max);
            truncated = cut;
            Some(json!(t))
        }
        Some(Value::Array(blocks)) => Some(Value::Array(
            blocks
                .iter()
                .map(|b| {
                    let Some(o) = b.as_object() else {
                        return b.clone();
                    };
                    let mut o = o.clone();
                    let is_thinking = o.get("type").and_then(Value::as_str) == Some("thinking");
                    for k in ["text", "thinking", "partialJson"] {
                        if k == "thinking" && !is_thinking {
                            continue;
                        }
                        if let Some(Value::String(s)) = o.get(k) {
                            let (t, cut) = truncate_pending_text(s, max);
                            truncated |= cut;
                            o.insert(k.into(), json!(t));
                        }
                    }
                    Value::Object(o)
                })
                .collect(),
        )),
        other => other.cloned(),
    };
    (out, truncated)
}

/// `projectAssistantMixedToolContent` of 9.6 for the stored assistant event `ev`: when its
/// content has a tool block and visible text, the blocks in order, tool blocks kept (the
/// 2026.7 projection keeps only the text), commentary-phase and blank text left out.
fn mixed_tool_content(ev: &Value, max_chars: usize) -> Option<Vec<Value>> {
    let content = ev.get("message")?.get("content")?.as_array()?;
    let ty = |b: &Value| b.get("type").and_then(Value::as_str).map(str::to_string);
    if !content
        .iter()
        .any(|b| b.is_object() && history::is_tool_block(ty(b).as_deref()))
    {
        return None;
    }
    let mut out = Vec::new();
    let mut has_text = false;
    for b in content.iter().filter(|b| b.is_object()) {
        if !history::is_text_block(ty(b).as_deref()) {
            out.push(history::sanitize_display_block(b, max_chars));
            continue;
        }
        if history::is_commentary_text(b) {
            continue;
        }
        if let Some(t) = b
            .get("text")
            .and_then(Value::as_str)
            .and_then(|t| history::mixed_text_block(t, max_chars))
        {
            out.push(t);
            has_text = true;
        }
    }
    has_text.then_some(out)
}

fn display_field(m: &Value) -> &'static str {
    if m.get("role").and_then(Value::as_str) == Some("assistant")
        && m.get("openclawDisplayContent").is_some_and(Value::is_array)
    {
        "openclawDisplayContent"
    } else {
        "content"
    }
}

fn has_image(m: &Value) -> bool {
    m.get(display_field(m))
        .and_then(Value::as_array)
        .is_some_and(|c| {
            c.iter()
                .any(|b| b.get("type").and_then(Value::as_str) == Some("image"))
        })
}

/// `projectTranscriptImageArtifacts` and the media projection of 9.6's display sanitizer,
/// on projected message `m` of stored event `ev`: each inline image of the event (a
/// `data`, or a `source.data`, and no `url`) gets its `artifactId` (the raw block index in
/// it), loses its payload, and says `omitted` and its decoded `bytes` (2026.7 gave the
/// base64 length).
fn project_image_artifacts(
    m: &mut Value,
    ev: &Value,
    source: &str,
    raw_seq: i64,
    id: &str,
    seq: u64,
) {
    let field = display_field(m);
    let Some(raw) = ev
        .get("message")
        .and_then(|r| r.get(field))
        .and_then(Value::as_array)
    else {
        return;
    };
    let Some(Value::Array(blocks)) = m.get_mut(field) else {
        return;
    };
    if blocks.len() != raw.len() {
        return;
    }
    for (index, (block, raw_block)) in blocks.iter_mut().zip(raw).enumerate() {
        let payload = raw_block
            .get("data")
            .and_then(Value::as_str)
            .or_else(|| {
                raw_block
                    .get("source")
                    .and_then(|s| s.get("data"))
                    .and_then(Value::as_str)
            })
            .filter(|d| !d.is_empty());
        let has_url = raw_block
            .get("url")
            .and_then(Value::as_str)
            .is_some_and(|u| !u.trim().is_empty());
        let (Some(payload), false) = (payload, has_url) else {
            continue;
        };
        let Some(b) = block.as_object_mut() else {
            continue;
        };
        if raw_block.get("type").and_then(Value::as_str) != Some("image")
            || b.get("type").and_then(Value::as_str) != Some("image")
        {
            continue;
        }
        let mut reference = String::from("{\"source\":");
        crate::js::jsjson::write_string(&mut reference, source);
        reference.push_str(&format!(",\"rawSeq\":{raw_seq},\"messageId\":"));
        crate::js::jsjson::write_string(&mut reference, id);
        reference.push_str(&format!(",\"messageSeq\":{seq},\"contentIndex\":{index}}}"));
        for f in MEDIA_PRIVATE_FIELDS.iter().chain(&["omitted", "bytes"]) {
            b.shift_remove(*f);
        }
        b.insert(
            "artifactId".into(),
            json!(format!(
                "{IMAGE_ARTIFACT_PREFIX}{}",
                URL_SAFE_NO_PAD.encode(reference.as_bytes())
            )),
        );
        b.insert("omitted".into(), json!(true));
        b.insert(
            "bytes".into(),
            json!(estimate_base64_decoded_bytes(payload)),
        );
    }
}

/// The tool result of a database session: `pendingInputs` after `bytes`, its size added,
/// and the result marked truncated when bounding the inputs cut one.
pub fn add_pending_inputs(result: &mut Value, pending: PendingInputs) {
    let Some(o) = result.as_object_mut() else {
        return;
    };
    let pending_bytes = history::json_bytes(&pending.page) as u64;
    let mut out = Map::new();
    for (k, v) in std::mem::take(o) {
        let v = match k.as_str() {
            "bytes" => json!(v.as_u64().unwrap_or(0) + pending_bytes),
            "truncated" | "contentTruncated" if pending.truncated => json!(true),
            _ => v,
        };
        let is_bytes = k == "bytes";
        out.insert(k, v);
        if is_bytes {
            out.insert("pendingInputs".into(), pending.page.clone());
        }
    }
    *o = out;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn source_is_the_gateways() {
        // Measured on a 9.6 gateway (its state dir at /tmp/h25gw/state).
        let s = display_source(
            Path::new("/tmp/h25gw/state/agents/main/agent/openclaw-agent.sqlite"),
            "main",
            "d31a55a4-94ed-41f3-adf3-0ff20542a7f0",
            "66dc6273f7ba492c8d69e8ca19cf20d1",
        );
        assert_eq!(s, "CMnLWp1wIQS-n9CFduW1jmft060SxYzDI7hC17IIEYc");
    }

    #[test]
    fn base64_sizes() {
        assert_eq!(estimate_base64_decoded_bytes(&"A".repeat(300_000)), 225_000);
        assert_eq!(estimate_base64_decoded_bytes("QUJD"), 3);
        assert_eq!(estimate_base64_decoded_bytes("QUI="), 2);
        assert_eq!(estimate_base64_decoded_bytes("QQ=="), 1);
        assert_eq!(estimate_base64_decoded_bytes(" \n"), 0);
    }

    #[test]
    fn image_artifact_is_the_gateways() {
        let ev = json!({"message":{"role":"user","content":[{"type":"text","text":"x"},
            {"type":"image","data":"A".repeat(300_000),"mimeType":"image/png"}]}});
        // As the 2026.7 display projection left it.
        let mut m = json!({"role":"user","content":[{"type":"text","text":"x"},
            {"type":"image","mimeType":"image/png","omitted":true,"bytes":300000}]});
        project_image_artifacts(
            &mut m,
            &ev,
            "CMnLWp1wIQS-n9CFduW1jmft060SxYzDI7hC17IIEYc",
            4,
            "106a1695",
            4,
        );
        assert_eq!(
            m["content"][1],
            json!({"type":"image","mimeType":"image/png",
                "artifactId":"artifact_transcript_image_eyJzb3VyY2UiOiJDTW5MV3Axd0lRUy1uOUNGZHVXMWptZnQwNjBTeFl6REk3aEMxN0lJRVljIiwicmF3U2VxIjo0LCJtZXNzYWdlSWQiOiIxMDZhMTY5NSIsIm1lc3NhZ2VTZXEiOjQsImNvbnRlbnRJbmRleCI6MX0",
                "omitted":true,"bytes":225000})
        );
        assert_eq!(
            serde_json::to_string(&m["content"][1]).unwrap(),
            r#"{"type":"image","mimeType":"image/png","artifactId":"artifact_transcript_image_eyJzb3VyY2UiOiJDTW5MV3Axd0lRUy1uOUNGZHVXMWptZnQwNjBTeFl6REk3aEMxN0lJRVljIiwicmF3U2VxIjo0LCJtZXNzYWdlSWQiOiIxMDZhMTY5NSIsIm1lc3NhZ2VTZXEiOjQsImNvbnRlbnRJbmRleCI6MX0","omitted":true,"bytes":225000}"#
        );
    }

    fn pending_row(id: &str, message: Value) -> PendingRow {
        PendingRow {
            id: id.into(),
            run_id: format!("run-{id}"),
            message_json: message.to_string(),
            accepted_at: 10,
            state: "queued".into(),
        }
    }

    #[test]
    fn a_pending_input_is_shown_as_the_tool_shows_it() {
        let rows = PendingRows {
            items: vec![pending_row(
                "a",
                json!({"role":"user","content":"hi","timestamp":5}),
            )],
            total: 1,
            next_before: None,
        };
        let p = bound_pending_inputs(&rows, 8000);
        assert_eq!(
            serde_json::to_string(&p.page).unwrap(),
            r#"{"items":[{"id":"a","state":"queued","acceptedAt":10,"message":{"role":"user","content":"hi"}}],"total":1}"#
        );
        assert!(!p.truncated);
    }

    #[test]
    fn a_long_pending_input_is_cut_to_its_share_of_4_kib() {
        let rows = PendingRows {
            items: vec![pending_row(
                "a",
                json!({"role":"user","content":[{"type":"text","text":"x".repeat(5000)}]}),
            )],
            total: 7,
            next_before: Some(3),
        };
        let p = bound_pending_inputs(&rows, 8000);
        let meta =
            r#"{"items":[{"id":"a","state":"queued","acceptedAt":10}],"total":7,"nextBefore":3}"#;
        let share = (4096 - meta.len() - 12) / 8;
        let text = p.page["items"][0]["message"]["content"][0]["text"]
            .as_str()
            .unwrap();
        assert_eq!(text, format!("{}\n…(truncated)…", "x".repeat(share)));
        assert!(p.truncated);
        assert_eq!(p.page["nextBefore"], json!(3));
        let mut r = json!({"sessionKey":"k","messages":[],"truncated":false,"droppedMessages":false,
            "contentTruncated":false,"contentRedacted":false,"bytes":2});
        add_pending_inputs(&mut r, p.clone());
        let keys: Vec<&str> = r.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "sessionKey",
                "messages",
                "truncated",
                "droppedMessages",
                "contentTruncated",
                "contentRedacted",
                "bytes",
                "pendingInputs"
            ]
        );
        assert_eq!(r["truncated"], json!(true));
        assert_eq!(r["contentTruncated"], json!(true));
        assert_eq!(r["bytes"], json!(2 + history::json_bytes(&p.page)));
    }
}
