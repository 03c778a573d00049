//! A record request as a user gives it (command-line flags or one NDJSON line), turned
//! into a [`RecordInput`] with the keys resolved and the producer defaults of `signals.md` §2.1 applied.

use serde_json::{Map, Value};

use super::journal::RecordInput;
use super::kinds::{self, ActorType, DefaultsInput, Outcome};
use crate::js;
use crate::js::clock::parse_time_ms;
use crate::session::session_key::{
    normalize_agent_id, parse_agent_session_key, resolve_store_key, KeyContext,
};

/// The fields of one record request, unvalidated.
#[derive(Debug, Clone, Default)]
pub struct RecordRequest {
    /// `--session` / `sessionKey`.
    pub session_key: Option<String>,
    /// `--kind` / `kind`.
    pub kind: Option<String>,
    /// `--actor` / `actorType`.
    pub actor_type: Option<String>,
    /// `--actor-id` / `actorId`.
    pub actor_id: Option<String>,
    /// `--agent` / `agentId`.
    pub agent_id: Option<String>,
    /// `--session-id` / `sessionId`.
    pub session_id: Option<String>,
    /// `--run-id` / `runId`.
    pub run_id: Option<String>,
    /// `--summary` / `summary`.
    pub summary: Option<String>,
    /// `--payload` / `payload`: a JSON object.
    pub payload: Option<Value>,
    /// `--dedupe-key` / `dedupeKey`.
    pub dedupe_key: Option<String>,
    /// `--occurred-at` / `occurredAt`: epoch ms or ISO-8601.
    pub occurred_at: Option<Value>,
    /// `--watcher` / `watcherSessionKeys`.
    pub watchers: Vec<String>,
    /// `--via` / `via`: the channel or catalog id of the default summary.
    pub via: Option<String>,
    /// `--outcome` / `outcome` (`run_failed`).
    pub outcome: Option<String>,
    /// `--operation-id` / `operationId` (`compacted` dedupe key).
    pub operation_id: Option<String>,
}

const FIELDS: [&str; 15] = [
    "sessionKey",
    "kind",
    "actorType",
    "actorId",
    "agentId",
    "sessionId",
    "runId",
    "summary",
    "payload",
    "dedupeKey",
    "occurredAt",
    "watcherSessionKeys",
    "via",
    "outcome",
    "operationId",
];

impl RecordRequest {
    /// Parses one NDJSON line (an object with the camelCase fields above).
    pub fn from_json_line(line: &str) -> Result<RecordRequest, String> {
        let v = crate::js::jsjson::parse_value(line).map_err(|e| format!("not JSON: {e}"))?;
        let Value::Object(m) = v else {
            return Err("not a JSON object".into());
        };
        if let Some(k) = m.keys().find(|k| !FIELDS.contains(&k.as_str())) {
            return Err(format!(
                "unknown field {k:?} (expected {})",
                FIELDS.join(", ")
            ));
        }
        let s = |name: &str| -> Result<Option<String>, String> {
            match m.get(name) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.clone())),
                Some(_) => Err(format!("{name} must be a string")),
            }
        };
        let watchers = match m.get("watcherSessionKeys") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(a)) => a
                .iter()
                .map(|w| {
                    w.as_str()
                        .map(String::from)
                        .ok_or_else(|| "watcherSessionKeys must be an array of strings".to_string())
                })
                .collect::<Result<_, _>>()?,
            Some(_) => return Err("watcherSessionKeys must be an array of strings".into()),
        };
        Ok(RecordRequest {
            session_key: s("sessionKey")?,
            kind: s("kind")?,
            actor_type: s("actorType")?,
            actor_id: s("actorId")?,
            agent_id: s("agentId")?,
            session_id: s("sessionId")?,
            run_id: s("runId")?,
            summary: s("summary")?,
            payload: m.get("payload").filter(|p| !p.is_null()).cloned(),
            dedupe_key: s("dedupeKey")?,
            occurred_at: m.get("occurredAt").filter(|p| !p.is_null()).cloned(),
            watchers,
            via: s("via")?,
            outcome: s("outcome")?,
            operation_id: s("operationId")?,
        })
    }

    /// Validates and completes the request: keys resolved like the gateway resolves a
    /// request key, the agent from the key, and the kind's default actor, summary, payload
    /// and dedupe key where none was given. A `child_spawned` event without watchers is
    /// watched by its actor (the requester, as `sessions_spawn` records it).
    pub fn resolve(self, kctx: &KeyContext) -> Result<RecordInput, String> {
        let opt = |v: Option<String>| v.filter(|s| !s.is_empty());
        let raw_key = opt(self.session_key).ok_or("a session key is required (--session)")?;
        let session_key = resolve_store_key(&raw_key, kctx);
        if session_key.is_empty() {
            return Err(format!("invalid session key {raw_key:?}"));
        }
        let kind = opt(self.kind.map(|k| js::trim(&k).to_string()))
            .ok_or("a kind is required (--kind)")?;
        let agent_id = match opt(self.agent_id) {
            Some(a) => normalize_agent_id(&a),
            None => match parse_agent_session_key(&session_key) {
                Some(p) => normalize_agent_id(&p.agent_id),
                None => normalize_agent_id(&kctx.default_agent_id),
            },
        };
        let actor = match opt(self.actor_type) {
            Some(a) => ActorType::parse(&a)
                .ok_or_else(|| format!("actor {a:?} must be human, agent or system"))?,
            None => kinds::default_actor(&kind).ok_or_else(|| {
                format!("kind {kind:?} needs an actor (--actor human|agent|system)")
            })?,
        };
        let outcome = match opt(self.outcome) {
            None => None,
            Some(o) if kind == "run_failed" => Some(
                Outcome::parse(&o)
                    .ok_or_else(|| format!("outcome {o:?} must be error, timeout or cancelled"))?,
            ),
            Some(_) => return Err("an outcome applies to run_failed only".into()),
        };
        let session_id = opt(self.session_id);
        let run_id = opt(self.run_id);
        let operation_id = opt(self.operation_id);
        let via = self.via;
        let defaults = DefaultsInput {
            session_key: &session_key,
            agent_id: &agent_id,
            session_id: session_id.as_deref(),
            run_id: run_id.as_deref(),
            operation_id: operation_id.as_deref(),
            via: via.as_deref(),
            outcome,
        };
        let summary = match self.summary {
            Some(s) if !s.is_empty() => s,
            _ => kinds::default_summary(&kind, &defaults)
                .ok_or_else(|| format!("kind {kind:?} needs a summary (--summary)"))?,
        };
        let payload: Option<Map<String, Value>> = match self.payload {
            Some(Value::Object(m)) => Some(m),
            Some(_) => return Err("the payload must be a JSON object".into()),
            None => kinds::default_payload(&kind, &defaults),
        };
        let dedupe_key = match opt(self.dedupe_key) {
            Some(k) => Some(k),
            None => kinds::default_dedupe_key(&kind, &defaults),
        };
        let occurred_at = match self.occurred_at {
            None => None,
            Some(Value::Number(n)) => n.as_f64(),
            Some(Value::String(s)) => {
                Some(parse_time_ms(&s).map_err(|e| format!("occurredAt: {e}"))? as f64)
            }
            Some(_) => return Err("occurredAt must be epoch milliseconds or ISO-8601".into()),
        };
        let actor_id = opt(self.actor_id);
        let mut watcher_session_keys: Vec<String> = self
            .watchers
            .iter()
            .map(|w| resolve_store_key(w, kctx))
            .filter(|w| !w.is_empty())
            .collect();
        if kind == "child_spawned" && watcher_session_keys.is_empty() {
            if let Some(a) = &actor_id {
                watcher_session_keys.push(a.clone());
            }
        }
        Ok(RecordInput {
            session_key,
            session_id,
            agent_id,
            kind,
            actor_type: actor.as_str().to_string(),
            actor_id,
            run_id,
            dedupe_key,
            summary,
            payload,
            occurred_at,
            watcher_session_keys,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_defaults() {
        let r = RecordRequest::from_json_line(
            r#"{"sessionKey":"agent:main:subagent:c1","kind":"run_failed","runId":"run-1","outcome":"timeout"}"#,
        )
        .unwrap();
        let i = r.resolve(&KeyContext::default()).unwrap();
        assert_eq!(i.summary, "child run timed out");
        assert_eq!(i.actor_type, "system");
        assert_eq!(i.dedupe_key.as_deref(), Some("run-terminal:run-1"));
        assert_eq!(
            serde_json::to_string(&i.payload.unwrap()).unwrap(),
            r#"{"outcome":"timeout"}"#
        );
        assert_eq!(i.agent_id, "main");
        let e = RecordRequest::from_json_line(r#"{"sessionKey":"x","kind":"k","bogus":1}"#)
            .unwrap_err();
        assert!(e.contains("bogus"), "{e}");
        let e = RecordRequest {
            session_key: Some("main".into()),
            kind: Some("mystery".into()),
            actor_type: Some("system".into()),
            ..Default::default()
        }
        .resolve(&KeyContext::default())
        .unwrap_err();
        assert!(e.contains("summary"), "{e}");
    }
}
