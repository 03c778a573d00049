//! The `sessions_history` projection of a session kept in the agent database, where the
//! 2026.9.6 gateway's differs from the file layout's (2026.7).
//!
//! The 9.6 gateway serves `chat.history` from `transcript_events` and marks every message
//! with where it sits in the stored transcript: `__openclaw.transcriptPosition`
//! (`{source, rawSeq}`: `source` names the database, agent, session and rewrite generation
//! as a SHA-256, `rawSeq` is the event's `seq`). An inline image keeps its place as an
//! `artifactId` built from that position, its payload dropped (`omitted`, and `bytes` as
//! the decoded size), and a compaction marker carries its `tokensBefore`/`tokensAfter`.
//! The tool's result also carries the session's `pendingInputs` page, whose bytes count
//! against the 80 KiB budget.
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
        let Some(source) = &self.source else {
            return Ok(());
        };
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

    /// The session's `pendingInputs` page as the tool bounds it (`{items, total}`): inputs
    /// accepted but not yet in the transcript (`session_pending_inputs`).
    pub fn pending_inputs(&self) -> Result<Value, AgentDbError> {
        let total: i64 = self
            .db
            .conn
            .query_row(
                "SELECT count(*) FROM session_pending_inputs WHERE session_id = ?1",
                [&self.session_id],
                |r| r.get(0),
            )
            .or_else(|e| match e {
                rusqlite::Error::SqliteFailure(..) => Ok(0),
                e => Err(self.db.err(e)),
            })?;
        Ok(json!({"items": [], "total": total}))
    }
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

/// The tool result of a database session: `pendingInputs` after `bytes`, its size added.
pub fn add_pending_inputs(result: &mut Value, pending: Value) {
    let Some(o) = result.as_object_mut() else {
        return;
    };
    let pending_bytes = history::json_bytes(&pending) as u64;
    let mut out = Map::new();
    for (k, v) in std::mem::take(o) {
        let is_bytes = k == "bytes";
        let v = if is_bytes {
            json!(v.as_u64().unwrap_or(0) + pending_bytes)
        } else {
            v
        };
        out.insert(k, v);
        if is_bytes {
            out.insert("pendingInputs".into(), pending.clone());
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
}
