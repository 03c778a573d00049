//! A session entry of the agent database back as 2026.7's `sessions.json` held it.
//!
//! The import rewrites each entry (`projectCanonicalSessionEntryShape` and the delivery
//! fold of 9.6): `sessionFile` and `transcriptPath` go, the retired delivery fields
//! (`origin`, `route`, `deliveryContext`, `channel`, `lastChannel`, `lastTo`,
//! `lastAccountId`, `lastThreadId`) are folded into one `delivery` object appended at the
//! end, and a few retired runtime fields are dropped or folded. Two ways back, decided
//! per entry ([`EntrySource`]):
//!
//! - **archived**: the import archive's legacy store has the key with the same
//!   `sessionId`, and it still says what the database says (the import's rewrite of it,
//!   `migrate::rows::rewrite_entry`, gives the database entry byte for byte): that entry is written
//!   as it was, key order and retired fields included, with `sessionFile` pointing at the
//!   exported transcript.
//! - **unfolded**: otherwise (a session created or changed after the migration),
//!   `delivery` is replaced in place by the fields 9.6's own compatibility projection
//!   (`projectSessionDeliveryFields`) gives, in its order, which 2026.7 reads (`none`
//!   becomes no field at all, `internal` 2026.7's `lastChannel: "webchat"`), and
//!   `sessionFile` goes after `updatedAt`.

use serde_json::{Map, Value};

use crate::js::jsjson;

/// Where an exported entry came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntrySource {
    /// The archived legacy store's entry, as it was.
    Archived,
    /// The database's entry with its `delivery` unfolded.
    Unfolded,
}

impl EntrySource {
    /// `archived` / `unfolded`.
    pub fn as_str(self) -> &'static str {
        match self {
            EntrySource::Archived => "archived",
            EntrySource::Unfolded => "unfolded",
        }
    }
}

/// Fields the import drops, folds or rewrites (9.6's retired slot keys, the locator
/// fields and the folded results): left out when an archived entry is compared.
const REWRITTEN_FIELDS: &[&str] = &[
    "sessionFile",
    "transcriptPath",
    "delivery",
    "channel",
    "origin",
    "route",
    "deliveryContext",
    "lastChannel",
    "lastTo",
    "lastAccountId",
    "lastThreadId",
    "compactionCheckpoints",
    "execSecurity",
    "execAsk",
    "pendingFinalDelivery",
    "pendingFinalDeliveryCreatedAt",
    "pendingFinalDeliveryLastAttemptAt",
    "pendingFinalDeliveryAttemptCount",
    "pendingFinalDeliveryLastError",
    "pendingFinalDeliveryText",
    "pendingFinalDeliveryContext",
    "pendingFinalDeliveryIntentId",
    "fallbackNotice",
    "fallbackNoticeSelectedModel",
    "fallbackNoticeActiveModel",
    "fallbackNoticeReason",
    "memoryFlush",
    "memoryFlushAt",
    "memoryFlushCompactionCount",
    "memoryFlushContextHash",
    "memoryFlushFailureCount",
    "memoryFlushLastFailedAt",
    "memoryFlushLastFailureError",
    "owner",
    "participants",
    "participantCount",
];

fn without_rewritten(m: &Map<String, Value>) -> Map<String, Value> {
    m.iter()
        .filter(|(k, _)| !REWRITTEN_FIELDS.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

fn str_at<'v>(v: Option<&'v Value>, path: &[&str]) -> Option<&'v str> {
    let mut cur = v?;
    for p in path {
        cur = cur.get(p)?;
    }
    cur.as_str()
}

/// The delivery target (channel, to) a legacy entry names, as 9.6 folds it.
fn legacy_target(m: &Map<String, Value>) -> (Option<&str>, Option<&str>) {
    let ctx = m.get("deliveryContext");
    let channel = str_at(ctx, &["channel"])
        .or_else(|| m.get("lastChannel").and_then(Value::as_str))
        .or_else(|| m.get("channel").and_then(Value::as_str))
        .or_else(|| str_at(m.get("origin"), &["provider"]));
    let to = str_at(ctx, &["to"])
        .or_else(|| m.get("lastTo").and_then(Value::as_str))
        .or_else(|| str_at(m.get("origin"), &["to"]));
    (channel, to)
}

/// The delivery target of a folded entry.
fn folded_target(m: &Map<String, Value>) -> (Option<&str>, Option<&str>) {
    let d = m.get("delivery");
    match str_at(d, &["kind"]) {
        Some("external") => (
            str_at(d, &["context", "channel"]).or_else(|| str_at(d, &["origin", "provider"])),
            str_at(d, &["context", "to"]).or_else(|| str_at(d, &["origin", "to"])),
        ),
        _ => (None, None),
    }
}

/// Whether the archived legacy entry of `key` still says what the database entry says:
/// the import's own rewrite of it gives the database entry, key order included; for an
/// entry that rewrite does not reproduce (the database came from 9.6's doctor), equal once
/// both lose the fields the import rewrites, and the delivery target the same.
pub fn archived_matches(key: &str, legacy: &Map<String, Value>, db: &Map<String, Value>) -> bool {
    match crate::migrate::rows::rewrite_entry(key, legacy) {
        Ok(rewritten) => {
            jsjson::to_string_compact(&Value::Object(rewritten))
                == jsjson::to_string_compact(&Value::Object(db.clone()))
        }
        Err(_) => loosely_matches(legacy, db),
    }
}

fn loosely_matches(legacy: &Map<String, Value>, db: &Map<String, Value>) -> bool {
    legacy.get("sessionId") == db.get("sessionId")
        && without_rewritten(legacy) == without_rewritten(db)
        && {
            let (lc, lt) = legacy_target(legacy);
            let (dc, dt) = folded_target(db);
            // A legacy entry with no complete external target folds to `none`/`internal`.
            if dc.is_none() && dt.is_none() {
                lc.is_none() || lt.is_none()
            } else {
                (lc, lt) == (dc, dt)
            }
        }
}

/// The legacy fields of a folded `delivery`, in the order of 9.6's
/// `projectSessionDeliveryFields` (absent values left out). An `internal` delivery, for
/// which 9.6 projects nothing, becomes `lastChannel: "webchat"` (2026.7's internal
/// channel), which the import folds back to `internal`.
pub fn unfold_delivery(delivery: &Value) -> Vec<(&'static str, Value)> {
    match str_at(Some(delivery), &["kind"]) {
        Some("external") => {}
        Some("internal") => return vec![("lastChannel", Value::from("webchat"))],
        _ => return Vec::new(),
    }
    let context = delivery.get("context");
    let field = |v: Option<&Value>| v.filter(|v| !v.is_null()).cloned();
    let ctx = |k: &str| field(context.and_then(|c| c.get(k)));
    let channel = ctx("channel").or_else(|| field(delivery.get("origin")?.get("provider")));
    [
        ("route", field(delivery.get("route"))),
        ("deliveryContext", field(context)),
        ("origin", field(delivery.get("origin"))),
        ("channel", channel),
        ("lastChannel", ctx("channel")),
        ("lastTo", ctx("to")),
        ("lastAccountId", ctx("accountId")),
        ("lastThreadId", ctx("threadId")),
    ]
    .into_iter()
    .filter_map(|(k, v)| v.map(|v| (k, v)))
    .collect()
}

/// Sets `sessionFile`: in place when the entry has one, else right after `updatedAt`
/// (or at the end).
fn with_session_file(entry: &Map<String, Value>, session_file: &str) -> Map<String, Value> {
    if entry.contains_key("sessionFile") {
        let mut out = entry.clone();
        out.insert("sessionFile".into(), Value::from(session_file));
        return out;
    }
    let mut out = Map::new();
    let mut placed = false;
    for (k, v) in entry {
        out.insert(k.clone(), v.clone());
        if k == "updatedAt" {
            out.insert("sessionFile".into(), Value::from(session_file));
            placed = true;
        }
    }
    if !placed {
        out.insert("sessionFile".into(), Value::from(session_file));
    }
    out
}

/// The legacy entry for a database entry (see the module doc); `session_file` is the
/// absolute path of the exported transcript (`None`: the session has none, and the
/// entry gets no `sessionFile`).
pub fn legacy_entry(
    key: &str,
    db: &Map<String, Value>,
    archived: Option<&Map<String, Value>>,
    session_file: Option<&str>,
) -> (Map<String, Value>, EntrySource) {
    if let Some(a) = archived.filter(|a| archived_matches(key, a, db)) {
        let out = match session_file {
            Some(f) => with_session_file(a, f),
            None => a.clone(),
        };
        return (out, EntrySource::Archived);
    }
    let mut out = Map::new();
    for (k, v) in db {
        if k == "delivery" {
            for (lk, lv) in unfold_delivery(v) {
                if !db.contains_key(lk) {
                    out.insert(lk.to_string(), lv);
                }
            }
        } else {
            out.insert(k.clone(), v.clone());
        }
    }
    let out = match session_file {
        Some(f) => with_session_file(&out, f),
        None => out,
    };
    (out, EntrySource::Unfolded)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn an_unchanged_archived_entry_comes_back_as_it_was() {
        let legacy = obj(
            json!({"sessionId":"s","updatedAt":1,"sessionFile":"/old/s.jsonl","chatType":"direct",
            "origin":{"provider":"telegram","to":"120"},"lastChannel":"telegram","lastTo":"120","totalTokens":3}),
        );
        let db = obj(
            json!({"sessionId":"s","updatedAt":1,"chatType":"direct","totalTokens":3,
            "delivery":{"kind":"external","route":{"channel":"telegram","target":{"to":"120"}},"context":{"channel":"telegram","to":"120"},"origin":{"provider":"telegram","to":"120"}}}),
        );
        let (e, src) = legacy_entry("k", &db, Some(&legacy), Some("/new/s.jsonl"));
        assert_eq!(src, EntrySource::Archived);
        let keys: Vec<&String> = e.keys().collect();
        let lkeys: Vec<&String> = legacy.keys().collect();
        assert_eq!(keys, lkeys);
        assert_eq!(e["sessionFile"], "/new/s.jsonl");
        // Changed after the migration: unfolded.
        let mut later = db.clone();
        later.insert("updatedAt".into(), json!(2));
        let (e, src) = legacy_entry("k", &later, Some(&legacy), Some("/new/s.jsonl"));
        assert_eq!(src, EntrySource::Unfolded);
        let keys: Vec<&str> = e.keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "sessionId",
                "updatedAt",
                "sessionFile",
                "chatType",
                "totalTokens",
                "route",
                "deliveryContext",
                "origin",
                "channel",
                "lastChannel",
                "lastTo"
            ]
        );
        assert_eq!(e["lastTo"], "120");
    }

    #[test]
    fn none_delivery_unfolds_to_nothing() {
        let db = obj(json!({"sessionId":"s","updatedAt":1,"delivery":{"kind":"none"}}));
        let legacy = obj(json!({"sessionId":"s","updatedAt":1,"sessionFile":"/x"}));
        assert!(archived_matches("k", &legacy, &db));
        let (e, src) = legacy_entry("k", &db, None, None);
        assert_eq!(src, EntrySource::Unfolded);
        assert_eq!(Value::Object(e), json!({"sessionId":"s","updatedAt":1}));
        let other = obj(json!({"sessionId":"t","updatedAt":1}));
        assert!(!archived_matches("k", &other, &db));
        // internal: back as webchat, which folds to internal again.
        let db = obj(json!({"sessionId":"s","updatedAt":1,"delivery":{"kind":"internal"}}));
        let (e, _) = legacy_entry("k", &db, None, None);
        assert_eq!(
            Value::Object(e.clone()),
            json!({"sessionId":"s","updatedAt":1,"lastChannel":"webchat"})
        );
        assert_eq!(crate::migrate::rows::rewrite_entry("k", &e).unwrap(), db);
    }
}
