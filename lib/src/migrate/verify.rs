//! `verify`: every legacy event is in the agent database, by content, and nothing else
//! changed.
//!
//! The legacy side is what the import read: the originals in the import archive and any
//! legacy files still in place (`sessions/sessions.json`, `sessions/<sessionId>.jsonl`).
//! A line and an event are the same when the line re-serialised as the import does it
//! (`JSON.stringify(JSON.parse(line))`, the header as the import rewrites it) has the
//! SHA-256 of the event's text ([`crate::migrate::export::archive`]).
//!
//! Per legacy transcript of session S: every readable line must be among S's events
//! (`event-missing`, or `event-changed` when the event at its position is another one no
//! legacy line explains); an event of S no line explains before the end of the legacy
//! lines is `event-added`; after it, the events are the session's continuation after the
//! migration (information). A torn last line is information (the import keeps only the
//! readable prefix); an unreadable line before the end is a warning. A session with no
//! event at all is `session-missing`; so is a legacy store entry whose key the database
//! lacks. Sessions of the database that no legacy file explains are listed as created
//! after the migration, not as failures.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::agent_db::{events, store_text, AgentDb, AgentDbError};
use crate::fs::data_file::DataPath;
use crate::migrate::export::archive::{self, LegacyTranscript, Original};
use crate::report::finding::{Finding, Severity};

/// The command a missing or changed event is repaired with.
const FIX_IMPORT: &str = "`claw-migrate finish` re-imports it from the original (or `openclaw doctor --session-sqlite restore` then `import`)";

/// What verify found of one session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionStatus {
    /// Every legacy event is there and nothing else changed.
    Verified,
    /// Something is missing or changed (see the findings).
    Failed,
    /// In the database, explained by no legacy file.
    CreatedAfterMigration,
}

impl SessionStatus {
    /// `verified`, `failed`, `created-after-migration`.
    pub fn as_str(&self) -> &'static str {
        match self {
            SessionStatus::Verified => "verified",
            SessionStatus::Failed => "failed",
            SessionStatus::CreatedAfterMigration => "created-after-migration",
        }
    }
}

/// One session's verdict.
#[derive(Debug, Clone)]
pub struct SessionVerdict {
    /// The agent.
    pub agent_id: String,
    /// The store key, when known.
    pub key: Option<String>,
    /// The sessionId.
    pub session_id: String,
    /// The verdict.
    pub status: SessionStatus,
    /// The legacy transcript compared, if any.
    pub legacy: Option<PathBuf>,
    /// Readable legacy lines.
    pub legacy_events: usize,
    /// Events in the database.
    pub db_events: usize,
    /// Events appended after the legacy ones.
    pub appended: usize,
}

impl SessionVerdict {
    /// The report row.
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("agentId".into(), Value::from(self.agent_id.as_str()));
        m.insert(
            "sessionKey".into(),
            self.key.as_deref().map_or(Value::Null, Value::from),
        );
        m.insert("sessionId".into(), Value::from(self.session_id.as_str()));
        m.insert("status".into(), Value::from(self.status.as_str()));
        m.insert(
            "legacy".into(),
            self.legacy.as_ref().map_or(Value::Null, |p| {
                Value::from(p.to_string_lossy().into_owned())
            }),
        );
        m.insert("legacyEvents".into(), Value::from(self.legacy_events));
        m.insert("dbEvents".into(), Value::from(self.db_events));
        m.insert("appendedEvents".into(), Value::from(self.appended));
        Value::Object(m)
    }
}

/// Verify's result for one agent.
#[derive(Debug, Clone, Default)]
pub struct AgentVerdict {
    /// Per session.
    pub sessions: Vec<SessionVerdict>,
    /// One per problem (and the information lines).
    pub findings: Vec<Finding>,
}

/// The legacy stores of an agent: the archived one and one still in place.
fn legacy_stores(archive_dir: &Path, sessions_dir: &Path) -> Vec<(PathBuf, Map<String, Value>)> {
    let mut out = Vec::new();
    if let Ok(Some(f)) = archive::archived_store(archive_dir) {
        if let Ok(Some(m)) = archive::read_store(&f) {
            out.push((f.path().to_path_buf(), m));
        }
    }
    if let Ok(f) = DataPath::beneath(sessions_dir, Path::new("sessions.json")) {
        if f.is_file() {
            if let Ok(Some(m)) = archive::read_store(&f) {
                out.push((f.path().to_path_buf(), m));
            }
        }
    }
    out
}

/// Verifies one agent: its database `db_path` against its import archive and the legacy
/// files in `sessions_dir`.
pub fn verify_agent(
    agent_id: &str,
    db_path: &Path,
    sessions_dir: &Path,
) -> Result<AgentVerdict, AgentDbError> {
    let mut v = AgentVerdict::default();
    let archive_dir = archive::archive_dir_for_db(db_path);
    let mut legacy: Vec<LegacyTranscript> = Vec::new();
    let list_err = |e: crate::fs::data_file::DataFileError| AgentDbError::BadRow {
        path: db_path.to_path_buf(),
        what: e.to_string(),
    };
    legacy.extend(archive::archived_transcripts(&archive_dir).map_err(list_err)?);
    legacy.extend(archive::transcripts_in_place(sessions_dir).map_err(list_err)?);
    let stores = legacy_stores(&archive_dir, sessions_dir);
    if !db_path.is_file() {
        if !legacy.is_empty() || !stores.is_empty() {
            v.findings.push(Finding::about_file(
                db_path,
                Severity::Error,
                "not-imported",
                format!("agent {agent_id:?} has legacy sessions but no agent database; fix: `claw-migrate import`"),
            ));
        }
        return Ok(v);
    }
    let db = AgentDb::open(db_path)?;
    let st = store_text::read(&db)?;
    let entries = match crate::js::jsjson::parse_value(&st.text) {
        Ok(Value::Object(m)) => m,
        _ => Map::new(),
    };
    let mut key_of: HashMap<String, String> = HashMap::new();
    for (k, e) in &entries {
        if let Some(id) = e.get("sessionId").and_then(Value::as_str) {
            key_of.entry(id.to_string()).or_insert_with(|| k.clone());
        }
    }
    for (_, store) in &stores {
        for (k, e) in store {
            if let Some(id) = e.get("sessionId").and_then(Value::as_str) {
                key_of.entry(id.to_string()).or_insert_with(|| k.clone());
            }
        }
    }
    let mut explained: HashSet<String> = HashSet::new();
    for t in &legacy {
        explained.insert(t.session_id.clone());
        let key = key_of.get(&t.session_id).cloned();
        let verdict = verify_transcript(&db, agent_id, key, t, &mut v.findings)?;
        v.sessions.push(verdict);
    }
    for (path, store) in &stores {
        for (k, e) in store {
            let Some(id) = e.get("sessionId").and_then(Value::as_str) else {
                continue;
            };
            match entries.get(k) {
                None => v.findings.push(Finding::about_file(
                    path,
                    Severity::Error,
                    "session-missing",
                    format!("session {k:?} ({id}) of the legacy store is not in the agent DB (no session_nodes row); fix: {FIX_IMPORT}"),
                )),
                Some(db_entry) => {
                    let now = db_entry.get("sessionId").and_then(Value::as_str);
                    if now != Some(id) && !explained.contains(now.unwrap_or_default()) {
                        v.findings.push(Finding::about_file(
                            path,
                            Severity::Info,
                            "session-reset-after-migration",
                            format!("session {k:?} was {id} in the legacy store and is {} in the agent DB (a reset after the migration)", now.unwrap_or("?")),
                        ));
                    }
                }
            }
            explained.insert(id.to_string());
        }
    }
    for (k, e) in &entries {
        let id = e
            .get("sessionId")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if explained.contains(id) || stores.iter().any(|(_, s)| s.contains_key(k)) {
            continue;
        }
        let n = events::lines(&db, id).map(|l| l.len()).unwrap_or(0);
        v.sessions.push(SessionVerdict {
            agent_id: agent_id.to_string(),
            key: Some(k.clone()),
            session_id: id.to_string(),
            status: SessionStatus::CreatedAfterMigration,
            legacy: None,
            legacy_events: 0,
            db_events: n,
            appended: n,
        });
    }
    Ok(v)
}

/// Compares one legacy transcript with its session's events.
fn verify_transcript(
    db: &AgentDb,
    agent_id: &str,
    key: Option<String>,
    t: &LegacyTranscript,
    findings: &mut Vec<Finding>,
) -> Result<SessionVerdict, AgentDbError> {
    let path = t.file.path();
    let sid = &t.session_id;
    let who = match &key {
        Some(k) => format!("session {k:?} ({sid})"),
        None => format!("session {sid}"),
    };
    let before = findings.len();
    let mut verdict = SessionVerdict {
        agent_id: agent_id.to_string(),
        key: key.clone(),
        session_id: sid.clone(),
        status: SessionStatus::Verified,
        legacy: Some(path.to_path_buf()),
        legacy_events: 0,
        db_events: 0,
        appended: 0,
    };
    let original = match Original::read(&t.file) {
        Ok(o) => o,
        Err(e) => {
            findings.push(Finding::about_file(
                path,
                Severity::Error,
                "legacy-unreadable",
                format!("{who}: {e}"),
            ));
            verdict.status = SessionStatus::Failed;
            return Ok(verdict);
        }
    };
    let mut events = Vec::new();
    let mut bad_row = None;
    events::for_each_stored(db, sid, |ev| {
        match events::decode_event(&ev) {
            Ok(l) => events.push(l),
            Err(what) => {
                bad_row.get_or_insert(what);
                events.push(String::new());
            }
        }
        Ok(())
    })?;
    if let Some(what) = bad_row {
        findings.push(Finding::about_file(
            &db.path,
            Severity::Error,
            "event-unreadable",
            format!("{who}: transcript_events {what}; fix: {FIX_IMPORT}"),
        ));
    }
    verdict.db_events = events.len();
    let readable: Vec<&archive::OriginalLine> = original
        .lines
        .iter()
        .filter(|l| l.canonical.is_some())
        .collect();
    verdict.legacy_events = readable.len();
    if events.is_empty() && !readable.is_empty() {
        findings.push(Finding::about_file(
            path,
            Severity::Error,
            "session-missing",
            format!("{who} is not in the agent DB (no transcript_events row; {} legacy events); fix: {FIX_IMPORT}", readable.len()),
        ));
        verdict.status = SessionStatus::Failed;
        return Ok(verdict);
    }
    let db_hashes: HashSet<[u8; 32]> = events.iter().map(|e| archive::content_hash(e)).collect();
    let header = original.header_as_imported(sid);
    let legacy_hashes: HashSet<[u8; 32]> = readable
        .iter()
        .enumerate()
        .flat_map(|(i, l)| {
            let mut h = vec![archive::content_hash(
                l.canonical.as_deref().unwrap_or_default(),
            )];
            if i == 0 {
                if let Some(hd) = &header {
                    h.push(archive::content_hash(hd));
                }
            }
            h
        })
        .collect();
    let last = original.lines.len();
    for (i, l) in original.lines.iter().enumerate() {
        if l.canonical.is_none() {
            let (sev, code, why) = if i + 1 == last {
                (Severity::Info, "torn-tail", "does not parse; the import keeps only the readable prefix, so it is not in the agent DB")
            } else {
                (
                    Severity::Warning,
                    "malformed-line",
                    "does not parse; it is not in the agent DB",
                )
            };
            findings.push(Finding {
                path: path.to_path_buf(),
                line: Some(l.number),
                severity: sev,
                code,
                message: format!("line {} of {who} {why}", l.number),
            });
        }
    }
    let mut changed_seqs = HashSet::new();
    for (k, l) in readable.iter().enumerate() {
        let text = l.canonical.as_deref().unwrap_or_default();
        let present = db_hashes.contains(&archive::content_hash(text))
            || (k == 0
                && header
                    .as_deref()
                    .is_some_and(|h| db_hashes.contains(&archive::content_hash(h))));
        if present {
            continue;
        }
        let at_position = events
            .get(k)
            .filter(|e| !legacy_hashes.contains(&archive::content_hash(e)));
        let (code, what) = match at_position {
            Some(_) => {
                changed_seqs.insert(k);
                (
                    "event-changed",
                    format!(
                        "line {} of {who} differs from transcript_events seq {k} of the agent DB",
                        l.number
                    ),
                )
            }
            None => (
                "event-missing",
                format!(
                    "line {} of {who} is not in the agent DB by content (sha256 {})",
                    l.number,
                    hex(&archive::content_hash(text))
                ),
            ),
        };
        findings.push(Finding {
            path: path.to_path_buf(),
            line: Some(l.number),
            severity: Severity::Error,
            code,
            message: format!("{what}; fix: {FIX_IMPORT}"),
        });
    }
    // Events no legacy line explains: before the legacy end a change, after it the
    // session's continuation.
    let last_explained = events
        .iter()
        .rposition(|e| legacy_hashes.contains(&archive::content_hash(e)));
    for (seq, e) in events.iter().enumerate() {
        if legacy_hashes.contains(&archive::content_hash(e)) || changed_seqs.contains(&seq) {
            continue;
        }
        if last_explained.is_some_and(|l| seq < l) {
            findings.push(Finding::about_file(
                &db.path,
                Severity::Error,
                "event-added",
                format!("transcript_events seq {seq} of {who} is in no line of {} and lies among the legacy events; fix: {FIX_IMPORT}", path.display()),
            ));
        } else {
            verdict.appended += 1;
        }
    }
    if findings[before..]
        .iter()
        .any(|f| f.severity >= Severity::Warning)
    {
        verdict.status = SessionStatus::Failed;
    }
    Ok(verdict)
}

fn hex(h: &[u8; 32]) -> String {
    h.iter().take(8).map(|b| format!("{b:02x}")).collect()
}
