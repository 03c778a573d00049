//! The rows one imported session gets, in the order 9.6's import writes them:
//! `session_nodes` (the rewritten entry), `conversations`/`session_conversations` for an
//! external delivery, `session_windows`, then per line `transcript_events` and
//! `transcript_event_identities`, then the projection of the visible branch
//! (`session_transcript_active_events`, the FTS rows) and its state
//! (`session_transcript_index_state`, `transcript_rewrite_watermarks`).
//!
//! A transcript's rows are computed first ([`prepare`]: parse, identities, zstd frames,
//! navigation facts, the visible branch), apart from the database being written, so the
//! import can compute the next session's while this one's are inserted ([`session`]).

use std::collections::{HashMap, HashSet};

use rusqlite::{params, Connection};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::legacy::hex;
use crate::migrate::rows;

/// One session to write.
pub struct SessionInput<'a> {
    /// The session key.
    pub key: &'a str,
    /// The entry as 9.6 stores it (already rewritten).
    pub entry: &'a Map<String, Value>,
    /// `sessionId`.
    pub session_id: &'a str,
    /// The transcript's rows ([`prepare`]).
    pub transcript: &'a PreparedTranscript,
    /// The transcript's mtime in ms (`transcript_updated_at`).
    pub transcript_mtime_ms: i64,
    /// The clock, for rows 9.6 stamps with `Date.now()`.
    pub now_ms: i64,
}

/// What was written for a session.
#[derive(Debug, Clone, Copy, Default)]
pub struct Written {
    /// Transcript rows.
    pub events: usize,
}

fn text(v: Option<&Value>) -> Option<String> {
    let s = crate::js::trim(v?.as_str()?);
    (!s.is_empty()).then(|| s.to_string())
}

fn status(v: Option<&Value>) -> Option<String> {
    let s = v?.as_str()?;
    matches!(s, "running" | "done" | "failed" | "killed" | "timeout").then(|| s.to_string())
}

fn int(v: Option<&Value>) -> Option<i64> {
    v?.as_f64().filter(|f| f.is_finite()).map(|f| f as i64)
}

/// The transport address of an external delivery (a `conversations` row), as 9.6's
/// `conversationIdentityFromSessionEntry` derives it from the entry.
struct Conversation {
    id: String,
    channel: String,
    account: String,
    kind: &'static str,
    peer: String,
    target: String,
    thread: Option<String>,
    native_channel_id: Option<String>,
    native_direct_user_id: Option<String>,
    label: Option<String>,
}

/// `normalizeChatType`: `direct` (or `dm`), `group`, `channel`.
fn chat_kind(v: Option<&Value>) -> Option<&'static str> {
    match crate::js::to_lower_case(crate::js::trim(v?.as_str()?)).as_str() {
        "direct" | "dm" => Some("direct"),
        "group" => Some("group"),
        "channel" => Some("channel"),
        _ => None,
    }
}

/// `normalizeThreadId` of the conversation store: a finite number as text, or a string.
fn thread_text(v: Option<&Value>) -> Option<String> {
    match v? {
        Value::Number(n) => Some(crate::js::jsjson::to_string_compact(&Value::Number(
            n.clone(),
        ))),
        other => text(Some(other)),
    }
}

fn account_or_default(v: Option<&Value>) -> String {
    v.and_then(Value::as_str)
        .and_then(crate::migrate::rows::entry::account_id)
        .unwrap_or_else(|| "default".into())
}

/// `normalizeConversationPeerId`: without the channel prefix and a kind prefix.
fn peer_id(channel: &str, value: &str) -> String {
    let mut v = crate::js::trim(value);
    let prefix = format!("{}:", crate::js::to_lower_case(crate::js::trim(channel)));
    if v.get(..prefix.len())
        .is_some_and(|p| crate::js::to_lower_case(p) == prefix)
    {
        v = crate::js::trim(&v[prefix.len()..]);
    }
    for kind in [
        "user",
        "channel",
        "group",
        "conversation",
        "room",
        "dm",
        "thread",
    ] {
        let n = kind.len() + 1;
        if v.get(..n)
            .is_some_and(|p| p[..kind.len()].eq_ignore_ascii_case(kind) && p.ends_with(':'))
        {
            v = &v[n..];
            break;
        }
    }
    crate::js::trim(v).to_string()
}

fn conversation(entry: &Map<String, Value>) -> Option<Conversation> {
    let d = entry.get("delivery")?.as_object()?;
    if d.get("kind")?.as_str()? != "external" {
        return None;
    }
    let ctx = d.get("context").and_then(Value::as_object);
    let origin = d.get("origin").and_then(Value::as_object);
    let c = |k: &str| ctx.and_then(|c| c.get(k));
    let o = |k: &str| origin.and_then(|o| o.get(k));
    let kind = chat_kind(entry.get("chatType")).unwrap_or("direct");
    let route_target = text(c("to"));
    let target = route_target
        .clone()
        .or_else(|| (kind == "direct").then(|| text(o("from"))).flatten())?;
    let owns = route_target.is_some();
    let channel = if owns {
        text(c("channel"))
    } else {
        text(o("provider"))
    }?;
    let channel = crate::js::to_lower_case(&channel);
    // resolvePairedOriginPeerId: a direct chat's peer is the origin's sender when the
    // origin is the same route.
    let paired = route_target.as_ref().and_then(|to| {
        let from = text(o("from"))?;
        let same = kind == "direct"
            && text(o("to")).as_ref() == Some(to)
            && text(o("provider")).map(|p| crate::js::to_lower_case(&p))
                == text(c("channel")).map(|p| crate::js::to_lower_case(&p))
            && text(o("provider")).is_some()
            && chat_kind(o("chatType")) == Some(kind)
            && account_or_default(o("accountId")) == account_or_default(c("accountId"))
            && thread_text(o("threadId")) == thread_text(c("threadId"));
        same.then_some(from)
    });
    let peer = peer_id(&channel, paired.as_deref().unwrap_or(&target));
    if peer.is_empty() {
        return None;
    }
    let account = account_or_default(if owns { c("accountId") } else { o("accountId") });
    let thread = thread_text(if owns { c("threadId") } else { o("threadId") });
    let hash_input = crate::js::jsjson::to_string_compact(&serde_json::json!([
        channel,
        account,
        kind,
        peer,
        "",
        thread.clone().unwrap_or_default()
    ]));
    let id = format!(
        "conv_{}",
        &hex(&Sha256::digest(hash_input.as_bytes()))[..32]
    );
    let label = match entry.get("displayName") {
        None | Some(Value::Null) => entry.get("label"),
        v => v,
    };
    Some(Conversation {
        id,
        channel,
        account,
        kind,
        peer,
        target,
        thread,
        native_channel_id: text(o("nativeChannelId")),
        native_direct_user_id: text(o("nativeDirectUserId")),
        label: text(label),
    })
}

/// Writes one session's rows; the caller holds the transaction.
pub fn session(conn: &Connection, s: &SessionInput<'_>) -> rusqlite::Result<Written> {
    let e = s.entry;
    let entry_json = crate::js::jsjson::to_string_compact(&Value::Object(e.clone()));
    let updated_at = int(e.get("updatedAt")).unwrap_or(s.now_ms);
    let spawned_by = text(e.get("spawnedBy"));
    let parent = text(e.get("parentSessionKey")).or_else(|| spawned_by.clone());
    let num = |k: &str| e.get(k).and_then(Value::as_f64).filter(|f| f.is_finite());
    let actor = e.get("createdActor").and_then(Value::as_object);
    let fork = e.get("forkSource").and_then(Value::as_object);
    let created_via = e.get("createdVia").and_then(Value::as_str).filter(|v| {
        matches!(
            *v,
            "operator" | "spawn" | "channel" | "cron" | "talk" | "run" | "plugin" | "internal"
        )
    });
    let actor_type = actor
        .and_then(|a| a.get("type"))
        .and_then(Value::as_str)
        .filter(|v| matches!(*v, "human" | "agent" | "system"));
    conn.prepare_cached(
        "INSERT INTO session_nodes (session_key, current_session_id, entry_json, updated_at, status, parent_session_key, spawned_by, label, display_name, archived_at, \
         created_at, created_via, created_actor_type, created_actor_id, project_id, fork_source_session_key, fork_source_session_id, fork_source_entry_id, \
         category, pinned_at, last_read_at, last_interaction_at, last_activity_at, icon) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24)",
    )?
    .execute(params![
        s.key,
        s.session_id,
        entry_json,
        updated_at,
        status(e.get("status")),
        parent,
        spawned_by,
        text(e.get("label")),
        text(e.get("displayName")),
        num("archivedAt"),
        num("createdAt"),
        created_via,
        actor_type,
        text(actor.and_then(|a| a.get("id"))),
        text(e.get("projectId")),
        text(fork.and_then(|f| f.get("sessionKey"))),
        text(fork.and_then(|f| f.get("sessionId"))),
        text(fork.and_then(|f| f.get("entryId"))),
        text(e.get("category")),
        num("pinnedAt"),
        num("lastReadAt"),
        num("lastInteractionAt"),
        num("lastActivityAt"),
        text(e.get("icon")),
    ])?;
    let conv = conversation(e);
    if let Some(c) = &conv {
        conn.prepare_cached(
            "INSERT INTO conversations (conversation_id, channel, account_id, kind, peer_id, delivery_target, thread_id, native_channel_id, native_direct_user_id, label, created_at, updated_at) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?11) ON CONFLICT(conversation_id) DO UPDATE SET channel = excluded.channel, account_id = excluded.account_id, \
             kind = excluded.kind, peer_id = excluded.peer_id, delivery_target = excluded.delivery_target, parent_conversation_id = NULL, thread_id = excluded.thread_id, \
             native_channel_id = excluded.native_channel_id, native_direct_user_id = excluded.native_direct_user_id, label = excluded.label, metadata_json = NULL, updated_at = excluded.updated_at",
        )?
        .execute(params![
            c.id,
            c.channel,
            c.account,
            c.kind,
            c.peer,
            c.target,
            c.thread,
            c.native_channel_id,
            c.native_direct_user_id,
            c.label,
            updated_at
        ])?;
    }
    let chat_type = e
        .get("chatType")
        .and_then(Value::as_str)
        .filter(|t| matches!(*t, "direct" | "group" | "channel"));
    let lower_key = crate::js::trim(s.key).to_lowercase();
    let scope = match chat_type {
        Some("direct") if lower_key == "main" || lower_key.ends_with(":main") => "shared-main",
        Some(t @ ("group" | "channel")) => t,
        _ => "conversation",
    };
    // The window's channel and account: the external delivery's (sessionDeliveryChannel).
    let delivery = e
        .get("delivery")
        .filter(|d| d.get("kind").and_then(Value::as_str) == Some("external"));
    let channel = delivery.and_then(|d| {
        text(d.get("context").and_then(|c| c.get("channel")))
            .or_else(|| text(d.get("origin").and_then(|o| o.get("provider"))))
    });
    let account_id = delivery.and_then(|d| text(d.get("context").and_then(|c| c.get("accountId"))));
    let role = |c: &Conversation| {
        if scope == "shared-main" && c.kind == "direct" {
            "participant"
        } else {
            "primary"
        }
    };
    let t = s.transcript;
    let last_event_at = t.events.iter().map(|p| p.created).max();
    let created_at = ["sessionStartedAt", "startedAt", "updatedAt"]
        .iter()
        .find_map(|k| num(k).filter(|f| *f >= 0.0))
        .map_or(updated_at, |f| f as i64);
    let hook = e
        .get("hookExternalContentSource")
        .and_then(Value::as_str)
        .map(|h| if h == "email" { "webhook" } else { h })
        .filter(|h| matches!(*h, "gmail" | "webhook"));
    conn.prepare_cached(
        "INSERT INTO session_windows (session_id, session_key, previous_session_id, session_scope, created_at, updated_at, transcript_updated_at, transcript_observed_at, \
         session_entry_provenance, acp_owned, plugin_owner_id, hook_external_content_source, started_at, ended_at, status, chat_type, channel, \
         primary_conversation_id, model_provider, model, agent_harness_id, parent_session_key, spawned_by, display_name, account_id) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 1, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24)",
    )?
    .execute(params![
        s.session_id,
        s.key,
        text(e.get("previousSessionId")),
        scope,
        created_at,
        last_event_at.unwrap_or(updated_at),
        s.transcript_mtime_ms,
        updated_at,
        i64::from(e.get("acp").is_some_and(crate::js::truthy)),
        text(e.get("pluginOwnerId")),
        hook,
        num("startedAt"),
        num("endedAt"),
        status(e.get("status")),
        chat_type,
        channel,
        conv.as_ref()
            .filter(|c| role(c) == "primary")
            .map(|c| c.id.clone()),
        text(e.get("modelProvider")),
        text(e.get("model")),
        text(e.get("agentHarnessId")),
        text(e.get("parentSessionKey")),
        spawned_by,
        text(e.get("displayName"))
            .or_else(|| text(e.get("label")))
            .or_else(|| text(e.get("subject")))
            .or_else(|| text(e.get("groupId"))),
        account_id,
    ])?;
    if let Some(c) = &conv {
        conn.prepare_cached(
            "INSERT INTO session_conversations (session_id, conversation_id, role, route_context_json, first_seen_at, last_seen_at) VALUES (?1, ?2, ?3, NULL, ?4, ?4)",
        )?
        .execute(params![
            s.session_id,
            c.id,
            role(c),
            updated_at
        ])?;
    }
    {
        let mut ins_event = conn.prepare_cached(
            "INSERT INTO transcript_events (session_id, seq, event_json, event_zstd, event_utf8_bytes, navigation_json, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        )?;
        let mut ins_ident = conn.prepare_cached(
            "INSERT INTO transcript_event_identities (session_id, event_id, seq, event_type, parent_id, message_idempotency_key, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        )?;
        for (seq, ev) in t.events.iter().enumerate() {
            let (p, created) = (&ev.payload, ev.created);
            ins_event.execute(params![
                s.session_id,
                seq as i64,
                p.event_json,
                p.event_zstd,
                p.event_utf8_bytes,
                p.navigation_json,
                created
            ])?;
            if let Some(i) = &ev.ident {
                ins_ident.execute(params![
                    s.session_id,
                    i.event_id,
                    seq as i64,
                    i.event_type,
                    i.parent_id,
                    i.message_idempotency_key,
                    created
                ])?;
            }
        }
    }
    insert_projection(conn, s)?;
    Ok(Written {
        events: t.events.len(),
    })
}

/// One line's rows.
struct PreparedEvent {
    /// Its `transcript_events` columns.
    payload: rows::EventPayload,
    /// `created_at`.
    created: i64,
    /// Its `transcript_event_identities` row, when it has an id.
    ident: Option<rows::EventIdentity>,
}

/// One line of the visible branch: its FTS row and its active row, when it has them.
struct ProjectionRow {
    fts: Option<rows::FtsEntry>,
    /// `(active_position, event_seq, message_position, context_eligible)`.
    active: Option<(i64, i64, Option<i64>, i64)>,
}

/// A transcript's rows as [`session`] inserts them, computed by [`prepare`].
pub struct PreparedTranscript {
    events: Vec<PreparedEvent>,
    projection: Vec<ProjectionRow>,
    leaf: Option<String>,
    active_events: i64,
    active_messages: i64,
}

/// Computes the rows of a transcript's readable `lines` (`now_ms` stands in for a line
/// without a timestamp). `nav` only evaluates SQLite's JSON functions (the navigation
/// facts of compressed lines); any connection does, an in-memory one included.
pub fn prepare(
    nav: &Connection,
    lines: &[String],
    now_ms: i64,
) -> rusqlite::Result<PreparedTranscript> {
    let mut parsed: Vec<(Value, String, i64, Option<rows::EventIdentity>)> =
        Vec::with_capacity(lines.len());
    let mut seen_ids = HashSet::new();
    let mut seen_keys = HashSet::new();
    for line in lines {
        let Ok((value, json)) = rows::event_line(line) else {
            continue;
        };
        let created = rows::event_created_at(&value).map_or(now_ms, |f| f as i64);
        let mut ident = rows::event_identity(&value);
        if let Some(i) = &mut ident {
            if !seen_ids.insert(i.event_id.clone()) {
                continue;
            }
            if let Some(k) = &i.message_idempotency_key {
                if !seen_keys.insert(k.clone()) {
                    i.message_idempotency_key = None;
                }
            }
        }
        parsed.push((value, json, created, ident));
    }
    let (projection, leaf, active_events, active_messages) = projection(&parsed);
    let mut events = Vec::with_capacity(parsed.len());
    for (value, json, created, ident) in parsed {
        events.push(PreparedEvent {
            payload: rows::event_payload(nav, &json, &value)?,
            created,
            ident,
        });
    }
    Ok(PreparedTranscript {
        events,
        projection,
        leaf,
        active_events,
        active_messages,
    })
}

type Parsed = (Value, String, i64, Option<rows::EventIdentity>);

/// The visible branch (root to the last entry, through `parentId`) as 9.6's projection
/// rebuild walks it: its FTS and active rows, the leaf, and the active event and message
/// counts.
fn projection(events: &[Parsed]) -> (Vec<ProjectionRow>, Option<String>, i64, i64) {
    // The tree: entries with an id (not the header); the leaf is the last one.
    let mut by_id: HashMap<&str, usize> = HashMap::new();
    let mut leaf: Option<&str> = None;
    for (seq, (v, ..)) in events.iter().enumerate() {
        if v.get("type").and_then(Value::as_str) == Some("session") {
            continue;
        }
        if let Some(id) = v.get("id").and_then(Value::as_str) {
            by_id.insert(id, seq);
            if rows::is_indexed_entry(v) {
                leaf = Some(id);
            }
        }
    }
    let mut path = Vec::new();
    let mut cur = leaf;
    let mut guard = HashSet::new();
    while let Some(id) = cur {
        let Some(&seq) = by_id.get(id) else { break };
        if !guard.insert(seq) {
            break;
        }
        path.push(seq);
        cur = events[seq].0.get("parentId").and_then(Value::as_str);
    }
    path.reverse();
    let visible: Vec<usize> = if path.is_empty() {
        (0..events.len()).collect()
    } else {
        path
    };
    let mut active = 0i64;
    let mut messages = 0i64;
    let mut out = Vec::new();
    for seq in visible {
        let (v, _, created, _) = &events[seq];
        let mut row = ProjectionRow {
            fts: rows::fts_entry(v, *created as f64),
            active: None,
        };
        let is_header = v.get("type").and_then(Value::as_str) == Some("session");
        let has_message = v.as_object().is_some_and(|o| o.contains_key("message"));
        let tree_entry = v
            .get("id")
            .and_then(Value::as_str)
            .is_some_and(|i| !i.is_empty())
            && matches!(
                v.get("parentId"),
                Some(Value::String(_)) | Some(Value::Null)
            );
        if is_header || !v.is_object() || !(rows::is_indexed_entry(v) || tree_entry || has_message)
        {
            out.push(row);
            continue;
        }
        let excluded = v
            .get("message")
            .and_then(|m| m.get("excludeFromContext"))
            .and_then(Value::as_bool)
            == Some(true);
        row.active = Some((
            active,
            seq as i64,
            has_message.then_some(messages),
            if excluded { 0 } else { 1 },
        ));
        out.push(row);
        active += 1;
        if has_message {
            messages += 1;
        }
    }
    (out, leaf.map(str::to_string), active, messages)
}

/// Inserts the projection [`prepare`] computed, and the index state and watermark rows.
fn insert_projection(conn: &Connection, s: &SessionInput<'_>) -> rusqlite::Result<()> {
    let t = s.transcript;
    let mut ins_active = conn.prepare_cached(
        "INSERT INTO session_transcript_active_events (session_id, active_position, event_seq, message_position, context_eligible) VALUES (?1, ?2, ?3, ?4, ?5)",
    )?;
    let mut ins_fts_row = conn.prepare_cached(
        "INSERT INTO session_transcript_fts_rows (session_id, message_id) VALUES (?1, ?2)",
    )?;
    let mut ins_fts = conn.prepare_cached(
        "INSERT INTO session_transcript_fts (rowid, text, session_id, message_id, role, timestamp) VALUES (last_insert_rowid(), ?1, ?2, ?3, ?4, ?5)",
    )?;
    for row in &t.projection {
        if let Some(f) = &row.fts {
            ins_fts_row.execute(params![s.session_id, f.message_id])?;
            ins_fts.execute(params![
                f.text,
                s.session_id,
                f.message_id,
                f.role,
                f.timestamp
            ])?;
        }
        if let Some((position, seq, message, eligible)) = row.active {
            ins_active.execute(params![s.session_id, position, seq, message, eligible])?;
        }
    }
    conn.prepare_cached(
        "INSERT INTO session_transcript_index_state (session_id, indexed_seq, leaf_event_id, needs_rebuild, active_event_count, active_message_count, updated_at) VALUES (?1, ?2, ?3, 0, ?4, ?5, ?6)",
    )?
    .execute(params![
        s.session_id,
        t.events.len() as i64 - 1,
        t.leaf,
        t.active_events,
        t.active_messages,
        s.now_ms
    ])?;
    conn.prepare_cached(
        "INSERT INTO transcript_rewrite_watermarks (session_id, generation, updated_at) VALUES (?1, ?2, ?3)",
    )?
    .execute(params![
        s.session_id,
        uuid::Uuid::new_v4().simple().to_string(),
        s.now_ms
    ])?;
    Ok(())
}
