//! The signal log (signals spec §2, §5): recording an event step by step as
//! `recordSessionStateEvent` does, listing, `changesSince` reconciliation, state versions,
//! session deletion (`forget`) and statistics.

use rusqlite::{params, OptionalExtension, Row, Transaction};
use serde_json::{json, Map, Value};
use thiserror::Error;

use super::cursors::{is_notifiable_watcher, CursorWriter, PROVENANCE_EXPLICIT};
use super::db::{DbError, StateDb};
use super::delivery::Undeliverable;
use super::kinds;
use super::notice::Notice;
use super::retention::{self, PruneThrottle};
use crate::exit::{self, ExitCode};
use crate::js;

/// How far in the past an `occurredAt` may lie (24 h); later values are clamped to now.
pub const OCCURRED_AT_MAX_SKEW_MS: i64 = 24 * 60 * 60 * 1000;
/// The most events one `changesSince` returns.
pub const CHANGES_LIMIT: i64 = 200;

/// Why a journal operation failed.
#[derive(Debug, Error)]
pub enum JournalError {
    /// The database failed.
    #[error(transparent)]
    Db(#[from] DbError),
    /// An event or argument is malformed (nothing was written).
    #[error("{0}")]
    Invalid(String),
    /// `changes-since` on a session the log and the stores do not know (the peer's text).
    #[error("Unknown {kind}: {input}")]
    UnknownSession {
        /// `sessionKey` or `sessionId`.
        kind: &'static str,
        /// The key as given.
        input: String,
    },
}

impl ExitCode for JournalError {
    fn exit_code(&self) -> i32 {
        match self {
            JournalError::Db(e) => e.exit_code(),
            JournalError::Invalid(_) => exit::DATA_ERR,
            JournalError::UnknownSession { .. } => exit::NOT_FOUND,
        }
    }
}

/// One row of `session_state_events`.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// Global sequence (the session's state version when it is the head).
    pub sequence: i64,
    /// The dedupe key, if any.
    pub dedupe_key: Option<String>,
    /// The session key.
    pub session_key: String,
    /// The session id, if recorded.
    pub session_id: Option<String>,
    /// The agent id.
    pub agent_id: String,
    /// The kind.
    pub kind: String,
    /// `human`, `agent` or `system`.
    pub actor_type: String,
    /// The actor id, if any.
    pub actor_id: Option<String>,
    /// The run id, if any.
    pub run_id: Option<String>,
    /// When it happened (epoch ms, clamped at record time).
    pub occurred_at: i64,
    /// One-line summary.
    pub summary: String,
    /// The raw `payload_json`.
    pub payload_json: Option<String>,
}

const EVENT_COLUMNS: &str = "sequence, dedupe_key, session_key, session_id, agent_id, kind, \
     actor_type, actor_id, run_id, occurred_at, summary, payload_json";

impl Event {
    fn from_row(r: &Row<'_>) -> rusqlite::Result<Event> {
        Ok(Event {
            sequence: r.get(0)?,
            dedupe_key: r.get(1)?,
            session_key: r.get(2)?,
            session_id: r.get(3)?,
            agent_id: r.get(4)?,
            kind: r.get(5)?,
            actor_type: r.get(6)?,
            actor_id: r.get(7)?,
            run_id: r.get(8)?,
            occurred_at: r.get(9)?,
            summary: r.get(10)?,
            payload_json: r.get(11)?,
        })
    }

    /// `safeParseJsonRecord(payload_json)`: the payload when it is a JSON object.
    pub fn payload(&self) -> Option<Map<String, Value>> {
        let text = self.payload_json.as_deref().filter(|s| !s.is_empty())?;
        match crate::js::jsjson::parse_value(text) {
            Ok(Value::Object(m)) => Some(m),
            _ => None,
        }
    }

    /// `rowToSessionStateEvent`: the event object (empty optional fields omitted).
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        let non_empty = |s: &Option<String>| s.as_ref().filter(|s| !s.is_empty()).cloned();
        m.insert("sequence".into(), json!(self.sequence));
        m.insert("sessionKey".into(), json!(self.session_key));
        if let Some(s) = non_empty(&self.session_id) {
            m.insert("sessionId".into(), json!(s));
        }
        m.insert("agentId".into(), json!(self.agent_id));
        m.insert("kind".into(), json!(self.kind));
        m.insert("actorType".into(), json!(self.actor_type));
        if let Some(s) = non_empty(&self.actor_id) {
            m.insert("actorId".into(), json!(s));
        }
        if let Some(s) = non_empty(&self.run_id) {
            m.insert("runId".into(), json!(s));
        }
        m.insert("occurredAt".into(), json!(self.occurred_at));
        m.insert("summary".into(), json!(self.summary));
        if let Some(p) = self.payload() {
            m.insert("payload".into(), Value::Object(p));
        }
        Value::Object(m)
    }

    /// `compactSessionStateChanges` form (§5.2): the fields `session_status` shows, with the
    /// payload reduced to `outcome`, `channel` and `turns`.
    pub fn to_compact_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("sequence".into(), json!(self.sequence));
        m.insert("kind".into(), json!(self.kind));
        m.insert("actorType".into(), json!(self.actor_type));
        m.insert("occurredAt".into(), json!(self.occurred_at));
        m.insert("summary".into(), json!(self.summary));
        if let Some(s) = self.actor_id.as_ref().filter(|s| !s.is_empty()) {
            m.insert("actorId".into(), json!(s));
        }
        if let Some(s) = self.run_id.as_ref().filter(|s| !s.is_empty()) {
            m.insert("runId".into(), json!(s));
        }
        if let Some(p) = self.payload().and_then(|p| compact_payload(&p)) {
            m.insert("payload".into(), p);
        }
        Value::Object(m)
    }
}

/// `compactSessionStateEventPayload`.
fn compact_payload(p: &Map<String, Value>) -> Option<Value> {
    let mut m = Map::new();
    if let Some(o) = p
        .get("outcome")
        .and_then(Value::as_str)
        .filter(|o| ["error", "timeout", "cancelled"].contains(o))
    {
        m.insert("outcome".into(), json!(o));
    }
    if let Some(c) = p
        .get("channel")
        .and_then(Value::as_str)
        .filter(|c| !c.is_empty())
    {
        m.insert("channel".into(), json!(c));
    }
    if let Some(t) = p.get("turns").and_then(Value::as_f64) {
        if t > 0.0 && t.fract() == 0.0 && t <= 9_007_199_254_740_991.0 {
            m.insert("turns".into(), p["turns"].clone());
        }
    }
    (!m.is_empty()).then_some(Value::Object(m))
}

/// One event to record (the input of `recordSessionStateEvent`).
#[derive(Debug, Clone, Default)]
pub struct RecordInput {
    /// The session key.
    pub session_key: String,
    /// The session id.
    pub session_id: Option<String>,
    /// The agent id.
    pub agent_id: String,
    /// The kind.
    pub kind: String,
    /// `human`, `agent` or `system`.
    pub actor_type: String,
    /// The actor id.
    pub actor_id: Option<String>,
    /// The run id.
    pub run_id: Option<String>,
    /// The dedupe key (a duplicate returns the existing row).
    pub dedupe_key: Option<String>,
    /// The summary.
    pub summary: String,
    /// The payload object (key order kept).
    pub payload: Option<Map<String, Value>>,
    /// When it happened (epoch ms); clamped to `[now - 24 h, now]`, now when absent.
    pub occurred_at: Option<f64>,
    /// Explicit lineage watchers.
    pub watcher_session_keys: Vec<String>,
}

/// What recording did.
#[derive(Debug, Clone)]
pub struct RecordOutcome {
    /// The new event, or the existing one for a duplicate dedupe key.
    pub event: Option<Event>,
    /// Whether a row was inserted (false: duplicate).
    pub inserted: bool,
    /// The notices the gateway would enqueue after commit.
    pub notices: Vec<Notice>,
    /// Cursors seeded by a `child_spawned` event.
    pub seeded: Vec<String>,
    /// Whether the opportunistic prune ran.
    pub pruned: bool,
}

/// `clampSessionStateOccurredAt`.
pub fn clamp_occurred_at(value: Option<f64>, now: i64) -> i64 {
    match value {
        Some(v) if v.is_finite() => {
            let lo = (now - OCCURRED_AT_MAX_SKEW_MS) as f64;
            v.max(lo).min(now as f64) as i64
        }
        _ => now,
    }
}

/// Records events on one database connection, keeping the prune throttle.
#[derive(Debug)]
pub struct Recorder {
    throttle: PruneThrottle,
}

impl Recorder {
    /// A recorder for the database at `db.path()`, with its persisted prune throttle.
    pub fn new(db: &StateDb) -> Recorder {
        Recorder {
            throttle: PruneThrottle::for_db(db.path()),
        }
    }

    /// A recorder whose throttle is process-local only (starts at 0, like the gateway's).
    pub fn in_process() -> Recorder {
        Recorder {
            throttle: PruneThrottle::in_process(),
        }
    }

    /// `recordSessionStateEvent` (§2.3), one immediate transaction, then the opportunistic
    /// prune when more than an hour passed since the last one.
    pub fn record(
        &mut self,
        db: &mut StateDb,
        input: &RecordInput,
        now: i64,
    ) -> Result<RecordOutcome, JournalError> {
        let occurred_at = clamp_occurred_at(input.occurred_at, now);
        let payload_json = input
            .payload
            .as_ref()
            .map(|p| crate::js::jsjson::to_string_compact(&Value::Object(p.clone())));
        let writer = CursorWriter::for_db(db);
        let notifies = kinds::notifies(&input.kind);
        let written = db.write(|tx| {
            let changes = tx
                .prepare_cached(
                    "INSERT INTO session_state_events (dedupe_key, session_key, session_id, agent_id, kind, \
                     actor_type, actor_id, run_id, occurred_at, summary, payload_json) \
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11) \
                     ON CONFLICT (dedupe_key) DO NOTHING",
                )?
                .execute(params![
                    input.dedupe_key,
                    input.session_key,
                    input.session_id,
                    input.agent_id,
                    input.kind,
                    input.actor_type,
                    input.actor_id,
                    input.run_id,
                    occurred_at,
                    input.summary,
                    payload_json
                ])?;
            if changes == 0 {
                let existing = match &input.dedupe_key {
                    Some(k) => event_by(tx, "dedupe_key = ?1", k)?,
                    None => None,
                };
                return Ok((existing, false, Vec::new(), Vec::new()));
            }
            let sequence = tx.last_insert_rowid();
            tx.prepare_cached(
                "INSERT INTO session_state_heads (session_key, agent_id, last_sequence, updated_at) \
                 VALUES (?1, ?2, ?3, ?4) ON CONFLICT (session_key, agent_id) DO UPDATE SET \
                 last_sequence = ?3, updated_at = ?4",
            )?
            .execute(params![input.session_key, input.agent_id, sequence, now])?;
            let mut watchers: Vec<String> = Vec::new();
            let mut push = |w: &str| {
                if !watchers.iter().any(|x| x == w) {
                    watchers.push(w.to_string());
                }
            };
            for w in &input.watcher_session_keys {
                push(w);
            }
            if notifies {
                let mut stmt = tx.prepare_cached(
                    "SELECT watcher_session_key FROM session_watch_cursors WHERE target_session_key = ?1",
                )?;
                let rows = stmt.query_map([&input.session_key], |r| r.get::<_, String>(0))?;
                for w in rows {
                    push(&w?);
                }
            }
            let mut notices = Vec::new();
            let mut seeded = Vec::new();
            for w in watchers
                .iter()
                .filter(|w| !w.is_empty() && is_notifiable_watcher(w))
            {
                if input.kind == "child_spawned" {
                    writer.seed(tx, w, &input.session_key, sequence, PROVENANCE_EXPLICIT, now)?;
                    seeded.push(w.clone());
                    continue;
                }
                if !notifies || input.actor_id.as_deref() == Some(w.as_str()) {
                    continue;
                }
                let lineage = input.watcher_session_keys.iter().any(|l| l == w);
                let m = writer.material(tx, w, &input.session_key, sequence, now, lineage)?;
                notices.extend(m.notice);
            }
            let event = event_by(tx, "sequence = ?1", &sequence)?;
            Ok((event, true, notices, seeded))
        });
        db.refresh_store_column();
        let (event, inserted, notices, seeded) = written?;
        let mut pruned = false;
        if self.throttle.due(now) {
            retention::prune(db, now, &retention::PruneLimits::default(), false)?;
            self.throttle.mark(now);
            pruned = true;
        }
        Ok(RecordOutcome {
            event,
            inserted,
            notices,
            seeded,
            pruned,
        })
    }
}

fn event_by(
    tx: &Transaction<'_>,
    cond: &str,
    value: &dyn rusqlite::ToSql,
) -> rusqlite::Result<Option<Event>> {
    tx.prepare_cached(&format!(
        "SELECT {EVENT_COLUMNS} FROM session_state_events WHERE {cond}"
    ))?
    .query_row([value], Event::from_row)
    .optional()
}

/// Whether a session may record `human_direct_message` (§2.3 gate): a lineage watcher is
/// given or a cursor targets the session.
pub fn has_watchers(db: &mut StateDb, target: &str) -> Result<bool, JournalError> {
    Ok(db.read(|tx| {
        tx.query_row(
            "SELECT 1 FROM session_watch_cursors WHERE target_session_key = ?1 LIMIT 1",
            [target],
            |_| Ok(()),
        )
        .optional()
        .map(|o| o.is_some())
    })?)
}

/// Which events to list.
#[derive(Debug, Clone, Default)]
pub struct EventFilter {
    /// Only this session key.
    pub session_key: Option<String>,
    /// Only this agent.
    pub agent_id: Option<String>,
    /// Only this kind.
    pub kind: Option<String>,
    /// Only sequences greater than this.
    pub since: Option<i64>,
    /// At most this many (oldest first).
    pub limit: Option<i64>,
}

/// Lists events in ascending sequence order.
pub fn list(db: &mut StateDb, f: &EventFilter) -> Result<Vec<Event>, JournalError> {
    let mut sql = format!("SELECT {EVENT_COLUMNS} FROM session_state_events WHERE 1 = 1");
    let mut args: Vec<&dyn rusqlite::ToSql> = Vec::new();
    if let Some(s) = &f.session_key {
        args.push(s);
        sql.push_str(&format!(" AND session_key = ?{}", args.len()));
    }
    if let Some(a) = &f.agent_id {
        args.push(a);
        sql.push_str(&format!(" AND agent_id = ?{}", args.len()));
    }
    if let Some(k) = &f.kind {
        args.push(k);
        sql.push_str(&format!(" AND kind = ?{}", args.len()));
    }
    if let Some(s) = &f.since {
        args.push(s);
        sql.push_str(&format!(" AND sequence > ?{}", args.len()));
    }
    sql.push_str(" ORDER BY sequence ASC");
    if let Some(l) = &f.limit {
        args.push(l);
        sql.push_str(&format!(" LIMIT ?{}", args.len()));
    }
    Ok(db.read(|tx| {
        let mut stmt = tx.prepare(&sql)?;
        let rows = stmt.query_map(args.as_slice(), Event::from_row)?;
        rows.collect()
    })?)
}

/// A `session_status` reconciliation (§5): the head and the events after a version.
#[derive(Debug, Clone)]
pub struct StateChanges {
    /// `stateVersion`: the head's `last_sequence` (0 without a head).
    pub state_version: i64,
    /// At most `limit` events after the version, ascending.
    pub events: Vec<Event>,
    /// More events existed.
    pub truncated: bool,
    /// Minimum retained sequence, else head + 1 (head > 0), else 0.
    pub earliest_available_sequence: i64,
    /// The version predates retained history (per-session pruned watermark).
    pub history_gap: bool,
    /// Whether the session has a head row.
    pub has_head: bool,
}

impl StateChanges {
    /// `{stateVersion, stateChanges: {events, truncated, earliestAvailableSequence, historyGap}}`
    /// with events compacted as `session_status` shows them.
    pub fn to_json(&self) -> Value {
        let events: Vec<Value> = self.events.iter().map(Event::to_compact_json).collect();
        let mut sc = Map::new();
        sc.insert("events".into(), Value::Array(events));
        sc.insert("truncated".into(), json!(self.truncated));
        sc.insert(
            "earliestAvailableSequence".into(),
            json!(self.earliest_available_sequence),
        );
        sc.insert("historyGap".into(), json!(self.history_gap));
        let mut m = Map::new();
        m.insert("stateVersion".into(), json!(self.state_version));
        m.insert("stateChanges".into(), Value::Object(sc));
        Value::Object(m)
    }
}

/// `listSessionStateEventsSince` plus the state version, in one read snapshot; no cursor
/// is read or moved. `limit` is clamped to 1–200.
pub fn changes_since(
    db: &mut StateDb,
    session_key: &str,
    agent_id: &str,
    after: i64,
    limit: i64,
) -> Result<StateChanges, JournalError> {
    let bounded = limit.clamp(1, CHANGES_LIMIT);
    Ok(db.read(|tx| {
        let mut stmt = tx.prepare_cached(&format!(
            "SELECT {EVENT_COLUMNS} FROM session_state_events WHERE session_key = ?1 AND agent_id = ?2 \
             AND sequence > ?3 ORDER BY sequence ASC LIMIT ?4"
        ))?;
        let mut events: Vec<Event> = stmt
            .query_map(params![session_key, agent_id, after, bounded + 1], Event::from_row)?
            .collect::<rusqlite::Result<_>>()?;
        let earliest: Option<i64> = tx
            .prepare_cached(
                "SELECT MIN(sequence) FROM session_state_events WHERE session_key = ?1 AND agent_id = ?2",
            )?
            .query_row(params![session_key, agent_id], |r| r.get(0))?;
        let head: Option<(i64, i64)> = tx
            .prepare_cached(
                "SELECT last_sequence, pruned_max_sequence FROM session_state_heads \
                 WHERE session_key = ?1 AND agent_id = ?2",
            )?
            .query_row(params![session_key, agent_id], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?;
        let (last, pruned) = head.unwrap_or((0, 0));
        let truncated = events.len() as i64 > bounded;
        events.truncate(bounded as usize);
        Ok(StateChanges {
            state_version: last,
            events,
            truncated,
            earliest_available_sequence: earliest.unwrap_or(if last > 0 { last + 1 } else { 0 }),
            history_gap: after < pruned,
            has_head: head.is_some(),
        })
    })?)
}

/// `Unknown sessionKey: <input>`, or `Unknown sessionId: <input>` when the input looks like
/// a session id or not like a session key (`shouldResolveSessionIdInput`).
pub fn unknown_session(input: &str) -> JournalError {
    let raw = js::trim(input);
    let looks_like_id = {
        let b = raw.as_bytes();
        b.len() == 36
            && b.iter().enumerate().all(|(i, c)| match i {
                8 | 13 | 18 | 23 => *c == b'-',
                _ => c.is_ascii_hexdigit(),
            })
    };
    let looks_like_key = !raw.is_empty()
        && (["main", "global", "unknown", "current"].contains(&raw)
            || crate::session::session_key::is_acp_key(raw)
            || raw.starts_with("agent:")
            || raw.starts_with("cron:")
            || raw.starts_with("hook:")
            || raw.starts_with("node-")
            || raw.starts_with("node:")
            || raw.contains(":group:")
            || raw.contains(":channel:"));
    JournalError::UnknownSession {
        kind: if looks_like_id || !looks_like_key {
            "sessionId"
        } else {
            "sessionKey"
        },
        input: raw.to_string(),
    }
}

/// One `session_state_heads` row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Head {
    /// The session key.
    pub session_key: String,
    /// The agent id.
    pub agent_id: String,
    /// The state version.
    pub last_sequence: i64,
    /// The pruned watermark.
    pub pruned_max_sequence: i64,
    /// Last write, epoch ms.
    pub updated_at: i64,
}

impl Head {
    /// The head as JSON (camelCase; `stateVersion` is `last_sequence`).
    pub fn to_json(&self) -> Value {
        json!({
            "sessionKey": self.session_key,
            "agentId": self.agent_id,
            "stateVersion": self.last_sequence,
            "prunedMaxSequence": self.pruned_max_sequence,
            "updatedAt": self.updated_at,
        })
    }
}

/// The state version of (key, agent): the head's `last_sequence`, 0 without a head.
pub fn version(db: &mut StateDb, session_key: &str, agent_id: &str) -> Result<i64, JournalError> {
    Ok(db.read(|tx| {
        tx.query_row(
            "SELECT last_sequence FROM session_state_heads WHERE session_key = ?1 AND agent_id = ?2",
            params![session_key, agent_id],
            |r| r.get::<_, i64>(0),
        )
        .optional()
        .map(|o| o.unwrap_or(0))
    })?)
}

/// Every head, ordered by session key then agent.
pub fn heads(db: &mut StateDb) -> Result<Vec<Head>, JournalError> {
    Ok(db.read(|tx| {
        let mut stmt = tx.prepare(
            "SELECT session_key, agent_id, last_sequence, pruned_max_sequence, updated_at \
             FROM session_state_heads ORDER BY session_key, agent_id",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok(Head {
                session_key: r.get(0)?,
                agent_id: r.get(1)?,
                last_sequence: r.get(2)?,
                pruned_max_sequence: r.get(3)?,
                updated_at: r.get(4)?,
            })
        })?;
        rows.collect()
    })?)
}

/// What `forget` removed (or would remove).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Forgotten {
    /// Events of (key, agent).
    pub events: usize,
    /// Heads of (key, agent) (0 or 1).
    pub heads: usize,
    /// Cursors where the key is the watcher or the target (any agent).
    pub cursors: usize,
    /// Upstream links of (key, agent).
    pub upstream_links: usize,
}

impl Forgotten {
    /// As JSON.
    pub fn to_json(&self) -> Value {
        json!({
            "events": self.events,
            "heads": self.heads,
            "cursors": self.cursors,
            "upstreamLinks": self.upstream_links,
        })
    }

    /// Whether nothing was (or would be) removed.
    pub fn is_empty(&self) -> bool {
        self == &Forgotten::default()
    }
}

/// `handleSessionStateSessionDeleted` (§3.8) in one transaction: the upstream link, events
/// and head of (key, agent), and every cursor where the key is watcher or target. With
/// `dry_run` only counts.
pub fn forget(
    db: &mut StateDb,
    session_key: &str,
    agent_id: &str,
    dry_run: bool,
) -> Result<Forgotten, JournalError> {
    let count = |tx: &Transaction<'_>, has_links: bool| -> rusqlite::Result<Forgotten> {
        let c = |sql: &str, p: &[&dyn rusqlite::ToSql]| -> rusqlite::Result<usize> {
            tx.query_row(sql, p, |r| r.get::<_, i64>(0))
                .map(|n| n as usize)
        };
        Ok(Forgotten {
            events: c(
                "SELECT count(*) FROM session_state_events WHERE session_key = ?1 AND agent_id = ?2",
                &[&session_key, &agent_id],
            )?,
            heads: c(
                "SELECT count(*) FROM session_state_heads WHERE session_key = ?1 AND agent_id = ?2",
                &[&session_key, &agent_id],
            )?,
            cursors: c(
                "SELECT count(*) FROM session_watch_cursors WHERE watcher_session_key = ?1 OR target_session_key = ?1",
                &[&session_key],
            )?,
            upstream_links: if has_links {
                c(
                    "SELECT count(*) FROM session_upstream_links WHERE session_key = ?1 AND agent_id = ?2",
                    &[&session_key, &agent_id],
                )?
            } else {
                0
            },
        })
    };
    if dry_run || db.is_missing() {
        return Ok(db.read(|tx| {
            let links = super::db::table_exists(tx, "session_upstream_links")?;
            count(tx, links)
        })?);
    }
    Ok(db.write(|tx| {
        let links = super::db::table_exists(tx, "session_upstream_links")?;
        let mut out = Forgotten::default();
        if links {
            out.upstream_links = tx.execute(
                "DELETE FROM session_upstream_links WHERE session_key = ?1 AND agent_id = ?2",
                params![session_key, agent_id],
            )?;
        }
        out.events = tx.execute(
            "DELETE FROM session_state_events WHERE session_key = ?1 AND agent_id = ?2",
            params![session_key, agent_id],
        )?;
        out.heads = tx.execute(
            "DELETE FROM session_state_heads WHERE session_key = ?1 AND agent_id = ?2",
            params![session_key, agent_id],
        )?;
        out.cursors = tx.execute(
            "DELETE FROM session_watch_cursors WHERE watcher_session_key = ?1 OR target_session_key = ?1",
            params![session_key],
        )?;
        Ok(out)
    })?)
}

/// Whether any events, head or cursors mention the key (any agent): the log knows it.
pub fn knows_session(db: &mut StateDb, session_key: &str) -> Result<bool, JournalError> {
    Ok(db.read(|tx| {
        let any = |sql: &str| -> rusqlite::Result<bool> {
            tx.query_row(sql, [session_key], |_| Ok(()))
                .optional()
                .map(|o| o.is_some())
        };
        Ok(
            any("SELECT 1 FROM session_state_heads WHERE session_key = ?1 LIMIT 1")?
                || any("SELECT 1 FROM session_state_events WHERE session_key = ?1 LIMIT 1")?
                || any("SELECT 1 FROM session_watch_cursors WHERE target_session_key = ?1 OR watcher_session_key = ?1 LIMIT 1")?,
        )
    })?)
}

/// Figures about the log.
#[derive(Debug, Clone, Default)]
pub struct Stats {
    /// Event rows.
    pub events: i64,
    /// Sessions with a head.
    pub sessions: i64,
    /// Sessions with retained events.
    pub sessions_with_events: i64,
    /// Lowest retained sequence.
    pub oldest_sequence: Option<i64>,
    /// Highest retained sequence.
    pub newest_sequence: Option<i64>,
    /// Earliest `occurred_at`.
    pub oldest_at: Option<i64>,
    /// Latest `occurred_at`.
    pub newest_at: Option<i64>,
    /// The last sequence ever allocated (`sqlite_sequence`).
    pub last_allocated_sequence: i64,
    /// Cursor rows.
    pub cursors: i64,
    /// Distinct watchers.
    pub watchers: i64,
    /// Pending notices that reach their watchers (`notified > last_seen`, deliverable).
    pub pending_notices: i64,
    /// Pending cursors whose notices never reach their watchers, per reason (in
    /// [`Undeliverable::ALL`] order).
    pub undeliverable: Vec<(Undeliverable, i64)>,
    /// Database file plus WAL, in bytes.
    pub database_bytes: u64,
    /// `user_version`.
    pub schema_version: i64,
}

impl Stats {
    /// Pending cursors whose notices never reach their watchers.
    pub fn undeliverable_notices(&self) -> i64 {
        self.undeliverable.iter().map(|(_, n)| n).sum()
    }

    /// As JSON (camelCase).
    pub fn to_json(&self, db_path: &std::path::Path) -> Value {
        json!({
            "database": db_path.to_string_lossy(),
            "schemaVersion": self.schema_version,
            "events": self.events,
            "sessions": self.sessions,
            "sessionsWithEvents": self.sessions_with_events,
            "oldestSequence": self.oldest_sequence,
            "newestSequence": self.newest_sequence,
            "oldestOccurredAt": self.oldest_at,
            "newestOccurredAt": self.newest_at,
            "lastAllocatedSequence": self.last_allocated_sequence,
            "cursors": self.cursors,
            "watchers": self.watchers,
            "pendingNotices": self.pending_notices,
            "undeliverableNotices": self.undeliverable_notices(),
            "undeliverableByReason": self
                .undeliverable
                .iter()
                .map(|(r, n)| (r.code().to_string(), json!(n)))
                .collect::<Map<String, Value>>(),
            "databaseBytes": self.database_bytes,
        })
    }
}

/// Counts rows, sessions, cursors and pending notices in one snapshot; pending notices are
/// split by whether they reach their watchers (`watcher_known`: whether a watcher's
/// session is in its store, `None` when that cannot be told; see [`super::delivery`]).
pub fn stats(
    db: &mut StateDb,
    watcher_known: impl FnMut(&str) -> Option<bool>,
) -> Result<Stats, JournalError> {
    let size = db.size_bytes();
    let version = db.user_version();
    let mut s = db.read(|tx| {
        let one = |sql: &str| tx.query_row(sql, [], |r| r.get::<_, i64>(0));
        let (events, min_s, max_s, min_t, max_t) = tx.query_row(
            "SELECT count(*), MIN(sequence), MAX(sequence), MIN(occurred_at), MAX(occurred_at) FROM session_state_events",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
        )?;
        let seq: Option<i64> = tx
            .query_row(
                "SELECT seq FROM sqlite_sequence WHERE name = 'session_state_events'",
                [],
                |r| r.get(0),
            )
            .optional()
            .unwrap_or(None);
        Ok(Stats {
            events,
            sessions: one("SELECT count(*) FROM session_state_heads")?,
            sessions_with_events: one(
                "SELECT count(*) FROM (SELECT DISTINCT session_key, agent_id FROM session_state_events)",
            )?,
            oldest_sequence: min_s,
            newest_sequence: max_s,
            oldest_at: min_t,
            newest_at: max_t,
            last_allocated_sequence: seq.unwrap_or(0),
            cursors: one("SELECT count(*) FROM session_watch_cursors")?,
            watchers: one("SELECT count(DISTINCT watcher_session_key) FROM session_watch_cursors")?,
            pending_notices: 0,
            undeliverable: Vec::new(),
            database_bytes: 0,
            schema_version: 0,
        })
    })?;
    let pending = super::notices::pending_cursors(db, &[]).map_err(|e| match e {
        super::notices::NoticeError::Db(e) => JournalError::from(e),
    })?;
    let split = super::delivery::split(db, pending, watcher_known);
    s.pending_notices = split.deliverable.len() as i64;
    s.undeliverable = Undeliverable::ALL
        .iter()
        .map(|&r| (r, split.count(r) as i64))
        .collect();
    s.database_bytes = size;
    s.schema_version = version;
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clamps_occurred_at() {
        let now = 1_800_000_000_000;
        assert_eq!(clamp_occurred_at(Some((now + 3_600_000) as f64), now), now);
        assert_eq!(
            clamp_occurred_at(Some((now - 3 * 86_400_000) as f64), now),
            now - 86_400_000
        );
        assert_eq!(clamp_occurred_at(None, now), now);
        assert_eq!(clamp_occurred_at(Some(f64::NAN), now), now);
        assert_eq!(clamp_occurred_at(Some((now - 5) as f64), now), now - 5);
    }

    #[test]
    fn compact_payload_keeps_three_fields() {
        let p: Map<String, Value> =
            serde_json::from_str(r#"{"catalogId":"x","turns":2,"outcome":"timeout","channel":""}"#)
                .unwrap();
        assert_eq!(
            compact_payload(&p).unwrap().to_string(),
            r#"{"outcome":"timeout","turns":2}"#
        );
        let p: Map<String, Value> = serde_json::from_str(r#"{"catalogId":"x"}"#).unwrap();
        assert!(compact_payload(&p).is_none());
    }

    #[test]
    fn unknown_session_text() {
        assert_eq!(
            unknown_session("agent:main:x").to_string(),
            "Unknown sessionKey: agent:main:x"
        );
        assert_eq!(
            unknown_session("0b5e1a8c-1d2e-4f00-8a00-123456789abc").to_string(),
            "Unknown sessionId: 0b5e1a8c-1d2e-4f00-8a00-123456789abc"
        );
        assert_eq!(
            unknown_session("hello").to_string(),
            "Unknown sessionId: hello"
        );
    }
}
