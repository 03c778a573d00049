//! One legacy transcript line (or store entry) turned into the rows openclaw 2026.9.6 writes
//! for it when `doctor --session-sqlite import` moves it into the agent database.
//!
//! The import re-serialises every line (`JSON.stringify(JSON.parse(line))`: `\u00e9` is
//! stored as `é`), stores it as `event_json` TEXT or, when it is worth it, as a zstd frame
//! (`event_zstd`) beside a `navigation_json` that lets SQL walk the tree without decoding
//! the body, records its identity (`transcript_event_identities`) and, for user and
//! assistant text, a full-text row. The rule for compressing is 9.6's
//! `prepareTranscriptPayload` (transcript-payload.ts): only UTF-8 databases, only lines of
//! 1 KiB .. 4 MiB without a `\u` escape or NUL, never the header, zstd level 1 with the
//! content checksum, and only when the frame plus the navigation record save at least
//! `max(64, ⌈n/10⌉)` bytes. The navigation record is computed in SQLite by the same SQL
//! 9.6 runs (its JSON functions decide the key order and number text), so
//! [`event_payload`] needs a connection (any; it reads nothing).
//!
//! Users: `migrate::import` (whole transcripts) and `migrate::finish` (appending the tail
//! a stuck migration left in a JSONL file). The API is small on purpose: [`event_line`]
//! (a line as 9.6 stores it), [`event_payload`] (the stored columns), [`event_identity`],
//! [`event_created_at`], [`fts_entry`], [`report_facts`] and [`rewrite_entry`].

use rusqlite::{Connection, OptionalExtension};
use serde_json::{Map, Value};

use crate::js;
use crate::js::jsjson;

/// Lines shorter than this (UTF-8 bytes) are never compressed.
pub const MIN_COMPRESS_BYTES: usize = 1024;
/// Lines longer than this are never compressed (the schema's bound on `event_utf8_bytes`).
pub const MAX_COMPRESSED_EVENT_BYTES: usize = 4 * 1024 * 1024;
/// A navigation record longer than this is not kept (the row stays TEXT).
pub const MAX_NAVIGATION_BYTES: usize = 16 * 1024;

/// The stored columns of one `transcript_events` row (besides `session_id`, `seq`,
/// `created_at`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventPayload {
    /// `event_json`: the line, unless it is compressed.
    pub event_json: Option<String>,
    /// `event_zstd`: the zstd frame of the line, when compressed.
    pub event_zstd: Option<Vec<u8>>,
    /// `event_utf8_bytes`: the line's length in UTF-8 bytes.
    pub event_utf8_bytes: i64,
    /// `navigation_json`: the tree facts of a compressed line.
    pub navigation_json: Option<String>,
}

/// The `transcript_event_identities` row of an event with an id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventIdentity {
    /// `event_id`: the trimmed `id`.
    pub event_id: String,
    /// `event_type`: `type` when it is a string.
    pub event_type: Option<String>,
    /// `parent_id`: `parentId` when it is a string.
    pub parent_id: Option<String>,
    /// `message_idempotency_key`: the trimmed `message.idempotencyKey`.
    pub message_idempotency_key: Option<String>,
}

/// The full-text row of a user or assistant message (`session_transcript_fts`).
#[derive(Debug, Clone, PartialEq)]
pub struct FtsEntry {
    /// `message_id`: the trimmed event id.
    pub message_id: String,
    /// `role`: `user` or `assistant`.
    pub role: String,
    /// `text`: the text blocks joined by newlines.
    pub text: String,
    /// `timestamp`: the event's timestamp in ms (stored as REAL, as a JS number is).
    pub timestamp: f64,
}

/// A legacy line that is not JSON 9.6 can store.
#[derive(Debug, thiserror::Error)]
#[error("not a JSON line: {0}")]
pub struct BadLine(String);

/// A legacy JSONL line as 9.6 stores it: parsed as `JSON.parse` does, its message's media
/// made canonical ([`media`]) and written back as `JSON.stringify` does; returns the value
/// and its text.
pub fn event_line(line: &str) -> Result<(Value, String), BadLine> {
    let mut value = jsjson::parse_value(line).map_err(|e| BadLine(e.to_string()))?;
    media::canonicalize_event(&mut value).map_err(|e| BadLine(e.to_string()))?;
    let text = jsjson::to_string_compact(&value);
    Ok((value, text))
}

/// The timestamp 9.6 records as an event's `created_at`: a finite number `timestamp`, or a
/// string one `Date.parse` reads; `None` means "now" for the caller.
pub fn event_created_at(event: &Value) -> Option<f64> {
    match event.get("timestamp")? {
        Value::Number(n) => n.as_f64().filter(|f| f.is_finite()),
        Value::String(s) if !js::trim(s).is_empty() => js::date_parse(s).map(|ms| ms as f64),
        _ => None,
    }
}

fn trimmed_string(v: Option<&Value>) -> Option<String> {
    let s = js::trim(v?.as_str()?);
    (!s.is_empty()).then(|| s.to_string())
}

/// The identity row of an event (9.6's `readTranscriptEventIdentity`); `None` when it has
/// no non-blank string `id`.
pub fn event_identity(event: &Value) -> Option<EventIdentity> {
    let obj = event.as_object()?;
    let event_id = trimmed_string(obj.get("id"))?;
    Some(EventIdentity {
        event_id,
        event_type: obj.get("type").and_then(Value::as_str).map(str::to_string),
        parent_id: obj
            .get("parentId")
            .and_then(Value::as_str)
            .map(str::to_string),
        message_idempotency_key: obj
            .get("message")
            .and_then(Value::as_object)
            .and_then(|m| trimmed_string(m.get("idempotencyKey"))),
    })
}

/// The searchable text of a user or assistant message (9.6's `extractTranscriptIndexEntry`);
/// `fallback_ms` is the row's `created_at`, used when the event's timestamp is not readable.
pub fn fts_entry(event: &Value, fallback_ms: f64) -> Option<FtsEntry> {
    let obj = event.as_object()?;
    if obj.get("type")?.as_str()? != "message" {
        return None;
    }
    let id = js::trim(obj.get("id")?.as_str()?);
    let message = obj.get("message").and_then(Value::as_object);
    let role = message
        .and_then(|m| m.get("role"))
        .and_then(Value::as_str)?;
    if id.is_empty() || (role != "user" && role != "assistant") {
        return None;
    }
    let message = message?;
    let text = match (message.get("content"), message.get("text")) {
        (Some(Value::String(s)), _) => Some(js::trim(s).to_string()),
        (_, Some(Value::String(s))) => Some(js::trim(s).to_string()),
        (Some(Value::Array(blocks)), _) => {
            let parts: Vec<&str> = blocks
                .iter()
                .filter_map(|b| {
                    let b = b.as_object()?;
                    let t = b.get("type")?.as_str()?;
                    if t != "text" && t != "input_text" && t != "output_text" {
                        return None;
                    }
                    let s = b.get("text")?.as_str()?;
                    (!js::trim(s).is_empty()).then_some(s)
                })
                .collect();
            (!parts.is_empty()).then(|| parts.join("\n"))
        }
        _ => None,
    }
    .filter(|t| !t.is_empty())?;
    let timestamp = match obj.get("timestamp") {
        Some(Value::Number(n)) => n.as_f64(),
        Some(Value::String(s)) => js::date_parse(s).map(|ms| ms as f64),
        _ => None,
    }
    .filter(|f| f.is_finite())
    .unwrap_or(fallback_ms);
    Some(FtsEntry {
        message_id: id.to_string(),
        role: role.to_string(),
        text,
        timestamp,
    })
}

// ---- entry classification (9.6's session-entry-codec.ts) -------------------------------

fn is_str(v: Option<&Value>) -> bool {
    matches!(v, Some(Value::String(_)))
}
fn is_nonempty_str(v: Option<&Value>) -> bool {
    matches!(v, Some(Value::String(s)) if !s.is_empty())
}
fn is_bool(v: Option<&Value>) -> bool {
    matches!(v, Some(Value::Bool(_)))
}
fn is_readable_content(v: Option<&Value>) -> bool {
    match v {
        Some(Value::String(_)) => true,
        Some(Value::Array(a)) => a
            .iter()
            .all(|b| b.as_object().is_some_and(|o| is_str(o.get("type")))),
        _ => false,
    }
}
fn is_readable_message(v: Option<&Value>) -> bool {
    let Some(m) = v.and_then(Value::as_object) else {
        return false;
    };
    match m.get("role").and_then(Value::as_str) {
        Some("user") | Some("assistant") => is_readable_content(m.get("content")),
        Some("toolResult") => {
            is_str(m.get("toolCallId"))
                && is_str(m.get("toolName"))
                && is_bool(m.get("isError"))
                && matches!(m.get("content"), Some(Value::Array(_)))
        }
        Some("custom") => is_str(m.get("customType")) && is_readable_content(m.get("content")),
        Some("bashExecution") => is_str(m.get("command")) && is_str(m.get("output")),
        _ => false,
    }
}

/// Whether an event is one of the session entry kinds 9.6 indexes (`isIndexedSessionEntry`).
pub fn is_indexed_entry(event: &Value) -> bool {
    let Some(o) = event.as_object() else {
        return false;
    };
    if !is_nonempty_str(o.get("id")) {
        return false;
    }
    match o.get("parentId") {
        None | Some(Value::String(_)) | Some(Value::Null) => {}
        _ => return false,
    }
    match o.get("timestamp") {
        None | Some(Value::String(_)) => {}
        _ => return false,
    }
    match o.get("type").and_then(Value::as_str) {
        Some("message") => is_readable_message(o.get("message")),
        Some("thinking_level_change") => is_nonempty_str(o.get("thinkingLevel")),
        Some("model_change") => {
            is_nonempty_str(o.get("provider")) && is_nonempty_str(o.get("modelId"))
        }
        Some("compaction") => {
            is_str(o.get("summary"))
                && is_nonempty_str(o.get("firstKeptEntryId"))
                && matches!(o.get("tokensBefore"), Some(Value::Number(_)))
        }
        Some("reset") => {
            let reason_ok = match o.get("reason") {
                Some(Value::String(s)) => {
                    matches!(
                        s.as_str(),
                        "new" | "reset" | "idle" | "daily" | "cron-stale"
                    )
                }
                // z.coerce.string(): numbers and booleans become strings, none of the enum.
                _ => false,
            };
            reason_ok && matches!(o.get("firstKeptEntryId"), None | Some(Value::String(_)))
        }
        Some("branch_summary") => is_str(o.get("fromId")) && is_str(o.get("summary")),
        Some("custom") => is_nonempty_str(o.get("customType")),
        Some("custom_message") => {
            is_nonempty_str(o.get("customType"))
                && is_readable_content(o.get("content"))
                && is_bool(o.get("display"))
        }
        Some("label") => {
            is_nonempty_str(o.get("targetId"))
                && matches!(o.get("label"), None | Some(Value::String(_)))
        }
        Some("session_info") => matches!(o.get("name"), None | Some(Value::String(_))),
        _ => false,
    }
}

/// 9.6's `normalizePersistedLegacyHookMessage`: a `custom` message without `customType`
/// is a hook message.
fn normalize_hook_message(event: &Value) -> std::borrow::Cow<'_, Value> {
    let Some(m) = event
        .as_object()
        .filter(|o| o.get("type").and_then(Value::as_str) == Some("message"))
        .and_then(|o| o.get("message"))
        .and_then(Value::as_object)
    else {
        return std::borrow::Cow::Borrowed(event);
    };
    if m.get("role").and_then(Value::as_str) != Some("custom")
        || m.contains_key("customType")
        || !is_readable_content(m.get("content"))
    {
        return std::borrow::Cow::Borrowed(event);
    }
    let mut e = event.clone();
    if let Some(m) = e.get_mut("message").and_then(Value::as_object_mut) {
        m.insert("customType".into(), Value::String("hook".into()));
    }
    std::borrow::Cow::Owned(e)
}

fn opaque_leaf(o: &Map<String, Value>) -> Option<Value> {
    let id_or_null = |v: Option<&Value>| matches!(v, Some(Value::String(_)) | Some(Value::Null));
    if o.get("type").and_then(Value::as_str) != Some("leaf")
        || !is_nonempty_str(o.get("id"))
        || !id_or_null(o.get("parentId"))
        || !id_or_null(o.get("targetId"))
        || !matches!(
            o.get("appendParentId"),
            None | Some(Value::String(_)) | Some(Value::Null)
        )
        || !matches!(o.get("appendMode"), None | Some(Value::String(_)))
        || o.get("appendMode").is_some_and(|m| m != "side")
    {
        return None;
    }
    let mut leaf = Map::new();
    for k in ["id", "parentId", "targetId"] {
        leaf.insert(k.into(), o[k].clone());
    }
    if let Some(v) = o.get("appendParentId") {
        leaf.insert("appendParentId".into(), v.clone());
    }
    if o.get("appendMode").and_then(Value::as_str) == Some("side") {
        leaf.insert("appendMode".into(), Value::String("side".into()));
    }
    Some(Value::Object(leaf))
}

/// The report facts 9.6 stores in a compressed row's navigation record
/// (`projectSessionTranscriptReportFacts`, as `JSON.stringify` writes it).
pub fn report_facts(raw: &Value) -> String {
    let entry = normalize_hook_message(raw);
    let recognized = is_indexed_entry(&entry);
    let mut out = Map::new();
    let o = raw.as_object();
    let is_session = entry.get("type").and_then(Value::as_str) == Some("session");
    if !recognized || is_session {
        if let Some(leaf) = o.and_then(opaque_leaf) {
            out.insert("kind".into(), "leaf".into());
            out.insert("entry".into(), leaf);
        } else if let Some(o) = o.filter(|o| {
            o.get("type").is_none_or(|t| t != "session" && t != "leaf")
                && is_nonempty_str(o.get("id"))
                && matches!(
                    o.get("parentId"),
                    Some(Value::String(_)) | Some(Value::Null)
                )
        }) {
            out.insert("kind".into(), "link".into());
            out.insert("id".into(), o["id"].clone());
            out.insert("parentId".into(), o["parentId"].clone());
        } else {
            out.insert("kind".into(), "ignored".into());
        }
        return jsjson::to_string_compact(&Value::Object(out));
    }
    let e = entry.as_object().expect("an indexed entry is an object");
    let mut facts = Map::new();
    for k in ["id", "parentId", "timestamp", "appendMode"] {
        if let Some(v) = e.get(k) {
            facts.insert(k.into(), v.clone());
        }
    }
    let ty = e["type"].as_str().unwrap_or_default();
    facts.insert("type".into(), Value::String(ty.into()));
    match ty {
        "label" => {
            facts.insert("targetId".into(), e["targetId"].clone());
            if let Some(l) = e.get("label") {
                facts.insert("label".into(), l.clone());
            }
        }
        "custom_message" => {
            facts.insert("customType".into(), e["customType"].clone());
        }
        "message" => {
            let m = e["message"].as_object();
            if m.and_then(|m| m.get("role")).and_then(Value::as_str) == Some("assistant") {
                let m = m.expect("checked");
                let run = m
                    .get("__openclaw")
                    .and_then(Value::as_object)
                    .and_then(|md| trimmed_string(md.get("runId")));
                if let Some(run) = run {
                    facts.insert("assistantRunId".into(), Value::String(run));
                }
                if let Some(r @ Value::String(_)) = m.get("responseId") {
                    facts.insert("assistantResponseId".into(), r.clone());
                }
            }
        }
        _ => {}
    }
    out.insert("kind".into(), "canonical".into());
    out.insert(
        "hasParentId".into(),
        Value::Bool(e.contains_key("parentId")),
    );
    out.insert("entry".into(), Value::Object(facts));
    jsjson::to_string_compact(&Value::Object(out))
}

// ---- payload ----------------------------------------------------------------------------

/// `CASE type WHEN ... END` of a json_each member (9.6's `jsonMemberValue`/`pickJsonObject`).
fn member_value(alias: &str) -> String {
    let p = if alias.is_empty() {
        String::new()
    } else {
        format!("{alias}.")
    };
    format!(
        "CASE {p}type WHEN 'object' THEN json({p}value) WHEN 'array' THEN json({p}value) \
         WHEN 'true' THEN json('true') WHEN 'false' THEN json('false') ELSE {p}value END"
    )
}

fn sql_list(keys: &[&str]) -> String {
    keys.iter()
        .map(|k| format!("'{k}'"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn pick(value: &str, keys: &[&str]) -> String {
    format!(
        "(SELECT json_group_object(key, {}) FROM json_each({value}) WHERE key IN ({}))",
        member_value(""),
        sql_list(keys)
    )
}

const NAV_KEYS: &[&str] = &[
    "type",
    "id",
    "parentId",
    "targetId",
    "appendParentId",
    "appendMode",
];

fn model_nav_keys() -> Vec<&'static str> {
    let mut k = NAV_KEYS.to_vec();
    k.extend([
        "timestamp",
        "version",
        "cwd",
        "firstKeptEntryId",
        "reason",
        "tokensBefore",
        "thinkingLevel",
        "provider",
        "modelId",
        "fromId",
        "customType",
        "display",
        "label",
        "name",
    ]);
    k
}

const SYNTHETIC_KEY: &str = "openclawSyntheticMissingToolResult";
const MISSING_TOOL_RESULT_TEXT: &str = "[openclaw] missing tool result in session history; inserted synthetic error result for transcript repair.";

fn content_prop(e: &str, prop: &str) -> String {
    format!(
        "CASE WHEN typeof(key) = 'integer' AND key < 8 THEN json_extract({e}, fullkey || '.{prop}') \
         ELSE json_extract(value, '$.{prop}') END"
    )
}

fn model_event(e: &str, omit_checkpoint: u8) -> String {
    let projected = format!("json_remove({e}, '$.message.__openclaw.upstreamUserText')");
    let model = format!(
        "CASE WHEN json_extract({e}, '$.message.role') = 'toolResult' THEN json_remove({projected}, '$.message.details') ELSE {projected} END"
    );
    format!("CASE WHEN {omit_checkpoint} = 1 THEN json_remove({model}, '$.message.providerReplay') ELSE {model} END")
}

/// The SQL 9.6's `readNavigation` runs: ?1 the line, ?2 the report facts.
fn navigation_sql() -> String {
    let e = "source.event_projection";
    let o = "source.event_json";
    let r = "source.report_json";
    let internal = pick(
        "message_member.value",
        &["runId", "steerTargetRunId", "contextFreeCommand"],
    );
    let message = format!(
        "(SELECT json_group_object(message_member.key, CASE WHEN message_member.key = '__openclaw' AND message_member.type = 'object' \
         THEN json({internal}) ELSE {} END) FROM json_each(root_member.value) AS message_member \
         WHERE message_member.key IN ('role', 'idempotencyKey', 'provenance', 'excludeFromContext', '__openclaw'))",
        member_value("message_member")
    );
    let mut root_keys = model_nav_keys();
    root_keys.push("message");
    let navigation = format!(
        "(SELECT json_group_object(root_member.key, CASE WHEN root_member.key = 'message' AND root_member.type = 'object' \
         THEN json({message}) ELSE {} END) FROM json_each({e}) AS root_member WHERE root_member.key IN ({}))",
        member_value("root_member"),
        sql_list(&root_keys)
    );
    let mut reset_keys = NAV_KEYS.to_vec();
    reset_keys.extend(["timestamp", "firstKeptEntryId", "customType", "display"]);
    let reset_entry = pick(o, &reset_keys);
    let reset = format!(
        "CASE WHEN json_valid({o}) THEN CASE WHEN json_type({o}) = 'object' THEN \
         json_set({reset_entry}, '$.message', json_object('role', json_extract({o}, '$.message.role'))) ELSE {o} END ELSE {o} END"
    );
    let model_entry = pick(e, &model_nav_keys());
    let facts = pick(
        &format!("jsonb_extract({e}, '$.message')"),
        &[
            "role",
            "provider",
            "model",
            "timestamp",
            "excludeFromContext",
            "toolCallId",
            "toolUseId",
            "tool_call_id",
            "tool_use_id",
            "callId",
            "call_id",
            "toolName",
            "isError",
            "stopReason",
            "customType",
            "display",
        ],
    );
    let calls = format!(
        "(SELECT json_group_array(json_object('type', {}, 'id', {}, 'name', {})) FROM json_each({e}, '$.message.content') \
         WHERE type = 'object' AND {} IN ('toolCall', 'toolUse', 'functionCall'))",
        content_prop(e, "type"),
        content_prop(e, "id"),
        content_prop(e, "name"),
        content_prop(e, "type")
    );
    let synthetic = format!(
        "COALESCE(json_extract({e}, '$.message.details.{SYNTHETIC_KEY}'), 0) = 1 OR EXISTS (\
         SELECT 1 FROM json_each({e}, '$.message.content') WHERE type = 'object' AND {} = 'text' AND {} = '{}')",
        content_prop(e, "type"),
        content_prop(e, "text"),
        MISSING_TOOL_RESULT_TEXT.replace('\'', "''")
    );
    let model = format!(
        "CASE json_extract({e}, '$.type') WHEN 'message' THEN json_set({model_entry}, '$.message', json_set({facts}, \
         '$.content', json({calls}), '$.command', '', '$.output', '', \
         '$.providerReplay', json_object('type', json_extract({e}, '$.message.providerReplay.type')), \
         '$.details', json_object('{SYNTHETIC_KEY}', json(CASE WHEN ({synthetic}) THEN 'true' ELSE 'false' END)))) \
         WHEN 'custom_message' THEN json_set({model_entry}, '$.content', json('[]')) \
         WHEN 'compaction' THEN json_set({model_entry}, '$.summary', '') \
         WHEN 'branch_summary' THEN json_set({model_entry}, '$.summary', '') ELSE {model_entry} END"
    );
    let projection = format!(
        "CASE WHEN json_valid({o}) AND json_valid({r}) THEN CASE \
         WHEN json_type({e}) != 'object' OR coalesce(json_type({e}, '$.message'), 'null') NOT IN ('object', 'null') THEN NULL \
         ELSE json_object('version', 1, 'report', json({r}), 'navigation', json({navigation}), 'reset', json({reset}), \
         'model', json({model}), 'modelBytes', octet_length({}), 'modelWithoutCheckpointBytes', octet_length({}), \
         'withoutCustomDataBytes', octet_length(json_remove({e}, '$.data'))) END ELSE NULL END",
        model_event(e, 0),
        model_event(e, 1)
    );
    format!(
        "WITH source AS MATERIALIZED (SELECT ?1 AS event_json, ?2 AS report_json, \
         CASE WHEN json_valid(?1) THEN jsonb(?1) ELSE ?1 END AS event_projection), \
         metadata AS MATERIALIZED (SELECT {projection} AS navigation_json FROM source) \
         SELECT CASE WHEN json_valid(metadata.navigation_json) AND octet_length(metadata.navigation_json) <= {MAX_NAVIGATION_BYTES} \
         THEN metadata.navigation_json ELSE NULL END FROM metadata"
    )
}

fn navigation(
    conn: &Connection,
    event_json: &str,
    report: &str,
) -> rusqlite::Result<Option<String>> {
    thread_local! {
        static SQL: String = navigation_sql();
    }
    let sql = SQL.with(Clone::clone);
    let mut stmt = conn.prepare_cached(&sql)?;
    let nav: Option<Option<String>> = stmt
        .query_row(rusqlite::params![event_json, report], |r| r.get(0))
        .optional()?;
    Ok(nav.flatten().filter(|n| n.len() <= MAX_NAVIGATION_BYTES))
}

/// The zstd frame 9.6 stores: level 1 with the content checksum.
pub fn compress(bytes: &[u8]) -> std::io::Result<Vec<u8>> {
    // One context per thread: making one costs more than compressing a small line, and
    // `ZSTD_compress2` starts each frame afresh with the parameters kept.
    thread_local! {
        static CONTEXT: std::cell::RefCell<Option<zstd::bulk::Compressor<'static>>> =
            const { std::cell::RefCell::new(None) };
    }
    CONTEXT.with(|cell| {
        let mut cell = cell.borrow_mut();
        let c = match &mut *cell {
            Some(c) => c,
            None => {
                let mut c = zstd::bulk::Compressor::new(1)?;
                c.set_parameter(zstd::zstd_safe::CParameter::ChecksumFlag(true))?;
                cell.insert(c)
            }
        };
        c.compress(bytes)
    })
}

/// Whether a parsed line is a session header (`type: "session"` with a string `id`),
/// which 9.6 never compresses.
pub fn is_header(event: &Value) -> bool {
    event.get("type").and_then(Value::as_str) == Some("session")
        && matches!(event.get("id"), Some(Value::String(_)))
}

/// The stored columns of a line (`event_json` as [`event_line`] wrote it, `event` its
/// value), by 9.6's `prepareTranscriptPayload` on a UTF-8 database.
pub fn event_payload(
    conn: &Connection,
    event_json: &str,
    event: &Value,
) -> rusqlite::Result<EventPayload> {
    let raw = event_json.len();
    let identity = EventPayload {
        event_json: Some(event_json.to_string()),
        event_zstd: None,
        event_utf8_bytes: raw as i64,
        navigation_json: None,
    };
    if !(MIN_COMPRESS_BYTES..=MAX_COMPRESSED_EVENT_BYTES).contains(&raw)
        || event_json.contains("\\u")
        || event_json.contains('\0')
    {
        return Ok(identity);
    }
    let Ok(compressed) = compress(event_json.as_bytes()) else {
        return Ok(identity);
    };
    let max_stored = raw - 64usize.max(raw.div_ceil(10));
    if compressed.len() > max_stored || is_header(event) {
        return Ok(identity);
    }
    let report = report_facts(event);
    let Some(nav) = navigation(conn, event_json, &report)? else {
        return Ok(identity);
    };
    if compressed.len() + nav.len() > max_stored {
        return Ok(identity);
    }
    Ok(EventPayload {
        event_json: None,
        event_zstd: Some(compressed),
        event_utf8_bytes: raw as i64,
        navigation_json: Some(nav),
    })
}

// ---- store entries ----------------------------------------------------------------------

pub mod entry;
pub mod media;

/// A legacy store entry of `key` as 9.6 stores it in `session_nodes.entry_json`:
/// `sessionFile` and the retired fields gone, the legacy delivery fields folded into
/// `delivery`, the legacy pending-delivery, notice and flush fields into their objects
/// (see [`entry`]). An error names the field whose value this import cannot reproduce
/// exactly: the caller must not guess.
pub fn rewrite_entry(
    key: &str,
    entry: &Map<String, Value>,
) -> Result<Map<String, Value>, entry::Unsupported> {
    entry::rewrite(key, entry)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn lines_are_reserialised_without_escapes() {
        let (_, text) = event_line(r#"{"a":"caf\u00e9","b":1.0}"#).unwrap();
        assert_eq!(text, r#"{"a":"café","b":1}"#);
    }

    #[test]
    fn small_lines_and_headers_stay_text() {
        let c = Connection::open_in_memory().unwrap();
        let (v, t) = event_line(r#"{"type":"message","id":"a","parentId":null,"message":{"role":"user","content":"hi"}}"#).unwrap();
        let p = event_payload(&c, &t, &v).unwrap();
        assert_eq!(p.event_json.as_deref(), Some(t.as_str()));
        let big = "x".repeat(5000);
        let header = json!({"type":"session","id":"s","cwd":big});
        let t = jsjson::to_string_compact(&header);
        assert!(event_payload(&c, &t, &header).unwrap().event_zstd.is_none());
    }

    #[test]
    fn a_big_repetitive_message_is_compressed_with_navigation() {
        let c = Connection::open_in_memory().unwrap();
        let ev = json!({"type":"message","id":"a","parentId":"b","timestamp":"2026-01-01T00:00:00.000Z",
            "message":{"role":"user","content":[{"type":"text","text":"abc ".repeat(2000)}]}});
        let t = jsjson::to_string_compact(&ev);
        let p = event_payload(&c, &t, &ev).unwrap();
        assert!(p.event_json.is_none());
        let back = zstd::bulk::decompress(p.event_zstd.as_ref().unwrap(), 1 << 20).unwrap();
        assert_eq!(back, t.as_bytes());
        let nav: Value = serde_json::from_str(p.navigation_json.as_deref().unwrap()).unwrap();
        assert_eq!(nav["report"]["kind"], "canonical");
        assert_eq!(nav["navigation"]["message"]["role"], "user");
    }

    #[test]
    fn a_line_with_a_unicode_escape_is_never_compressed() {
        let c = Connection::open_in_memory().unwrap();
        let ev = json!({"type":"message","id":"a","message":{"role":"user","content":format!("\u{1}{}", "abc ".repeat(2000))}});
        let t = jsjson::to_string_compact(&ev);
        assert!(t.contains("\\u0001"));
        assert!(event_payload(&c, &t, &ev).unwrap().event_zstd.is_none());
    }

    #[test]
    fn entries_get_their_delivery_folded() {
        let e = json!({"sessionId":"s","updatedAt":5,"sessionFile":"/x/s.jsonl","origin":{"provider":"telegram","to":"1"},
            "lastChannel":"telegram","lastTo":"1","chatType":"direct"});
        let out = rewrite_entry("k", e.as_object().unwrap()).unwrap();
        assert_eq!(
            Value::Object(out),
            json!({"sessionId":"s","updatedAt":5,"chatType":"direct","delivery":{"kind":"external",
                "route":{"channel":"telegram","target":{"to":"1"}},"context":{"channel":"telegram","to":"1"},
                "origin":{"provider":"telegram","to":"1"}}})
        );
        let plain = json!({"sessionId":"s","updatedAt":5});
        assert_eq!(
            rewrite_entry("k", plain.as_object().unwrap()).unwrap()["delivery"],
            json!({"kind":"none"})
        );
    }

    #[test]
    fn fts_takes_user_and_assistant_text_only() {
        let ev = json!({"type":"message","id":" m1 ","timestamp":"2026-01-01T00:00:00.000Z",
            "message":{"role":"assistant","content":[{"type":"text","text":"a"},{"type":"toolCall"},{"type":"text","text":"b"}]}});
        let f = fts_entry(&ev, 0.0).unwrap();
        assert_eq!((f.message_id.as_str(), f.text.as_str()), ("m1", "a\nb"));
        let tool = json!({"type":"message","id":"m2","message":{"role":"toolResult","content":[]}});
        assert!(fts_entry(&tool, 0.0).is_none());
    }
}
