//! Sessions added to an agent database that already exists, as 2026.9.6's doctor does
//! when it imports into one (a first import of a subset, a legacy dir put back, an
//! archive whose rows were lost): the sessions the database lacks get the rows a fresh
//! import writes ([`super::write::session`]); a session whose key (or sessionId) the
//! database already has is a duplicate: skipped and reported, its rows never touched.
//!
//! Why one transaction: a kill -9 at any point must leave either the database as it was
//! or the database with every added session, never half a session. SQLite's commit is
//! that point (the database is in WAL mode; the commit record is one fsync'd frame).
//!
//! A duplicate's legacy transcript is "held" when the database's transcript of that
//! sessionId has every one of its events (the header by its session id, 9.6 rewrites
//! it; every other line by its JSON value); only a held transcript is archived, so a
//! file with history the database lacks stays where it is (see `claw-migrate finish`).

use std::collections::HashMap;
use std::path::Path;

use rusqlite::{params, Connection, OpenFlags, TransactionBehavior};
use serde_json::{Map, Value};

use super::error::ImportError;
use super::legacy::{self, FileIdentity};
use super::write;

/// One session to add.
#[derive(Debug, Clone)]
pub struct NewSession {
    /// The session key.
    pub key: String,
    /// The entry as 9.6 stores it (already rewritten).
    pub entry: Map<String, Value>,
    /// `sessionId`.
    pub session_id: String,
    /// The transcript's readable lines.
    pub lines: Vec<String>,
    /// The transcript's mtime in ms (`transcript_updated_at`).
    pub transcript_mtime_ms: i64,
}

/// A session the database already has, and why it is one.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Duplicate {
    /// The legacy session key.
    pub session_key: String,
    /// The legacy sessionId.
    pub session_id: String,
    /// `same-session` (key and sessionId both in the database), `key-taken` (the key
    /// holds another sessionId) or `session-id-taken` (another key holds the sessionId).
    pub reason: &'static str,
    /// Whether the database's transcript holds every event of the legacy one (so the
    /// legacy file can be archived); `None` when there is no legacy transcript.
    pub transcript_held: Option<bool>,
}

/// What the database has: session keys with their current sessionId, and the
/// sessionIds it has windows or events for.
#[derive(Debug, Clone, Default)]
pub struct Existing {
    /// `session_key` -> `current_session_id`.
    pub keys: HashMap<String, String>,
    /// sessionId -> the key of its window.
    pub session_ids: HashMap<String, String>,
}

fn open(db: &Path, write: bool) -> Result<Connection, ImportError> {
    let flags = if write {
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX
    } else {
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX
    };
    let c = Connection::open_with_flags(db, flags).map_err(ImportError::sqlite(db))?;
    c.busy_timeout(std::time::Duration::from_secs(10))
        .map_err(ImportError::sqlite(db))?;
    Ok(c)
}

fn read_existing(c: &Connection, db: &Path) -> Result<Existing, ImportError> {
    let mut out = Existing::default();
    let mut st = c
        .prepare("SELECT session_key, current_session_id FROM session_nodes")
        .map_err(ImportError::sqlite(db))?;
    let rows = st
        .query_map([], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, Option<String>>(1)?))
        })
        .map_err(ImportError::sqlite(db))?;
    for r in rows {
        let (k, s) = r.map_err(ImportError::sqlite(db))?;
        out.keys.insert(k, s.unwrap_or_default());
    }
    let mut st = c
        .prepare("SELECT session_id, session_key FROM session_windows")
        .map_err(ImportError::sqlite(db))?;
    let rows = st
        .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))
        .map_err(ImportError::sqlite(db))?;
    for r in rows {
        let (s, k) = r.map_err(ImportError::sqlite(db))?;
        out.session_ids.insert(s, k);
    }
    Ok(out)
}

/// The sessions and sessionIds of the database at `db`.
pub fn existing(db: &Path) -> Result<Existing, ImportError> {
    let c = open(db, false)?;
    read_existing(&c, db)
}

impl Existing {
    /// Whether (`key`, `session_id`) is a duplicate of a database session, and which kind.
    pub fn duplicate_reason(&self, key: &str, session_id: &str) -> Option<&'static str> {
        match self.keys.get(key) {
            Some(s) if s == session_id => Some("same-session"),
            Some(_) => Some("key-taken"),
            None if self.session_ids.contains_key(session_id) => Some("session-id-taken"),
            None => None,
        }
    }
}

/// The session id a header line names (`id`, or `sessionId` as older writers put it).
fn header_id(v: &Value) -> Option<&str> {
    (v.get("type").and_then(Value::as_str) == Some("session"))
        .then(|| v.get("id").or_else(|| v.get("sessionId"))?.as_str())
        .flatten()
}

/// Whether the database's transcript of `session_id` holds every one of `lines` (see
/// the module doc).
pub fn transcript_held(db: &Path, session_id: &str, lines: &[String]) -> Result<bool, ImportError> {
    let adb = crate::agent_db::AgentDb::open(db).map_err(|e| ImportError::Malformed {
        path: db.to_path_buf(),
        what: e.to_string(),
    })?;
    let stored =
        crate::agent_db::events::lines(&adb, session_id).map_err(|e| ImportError::Malformed {
            path: db.to_path_buf(),
            what: e.to_string(),
        })?;
    let stored: Vec<Value> = stored
        .iter()
        .filter_map(|l| crate::js::jsjson::parse_value(l).ok())
        .collect();
    let mut ids: HashMap<String, ()> = HashMap::new();
    for v in &stored {
        if header_id(v).is_none() {
            ids.insert(v.to_string(), ());
        }
    }
    for l in lines {
        let Ok(v) = crate::js::jsjson::parse_value(l) else {
            return Ok(false);
        };
        let held = match header_id(&v) {
            Some(id) => stored.iter().any(|s| header_id(s) == Some(id)),
            None => ids.contains_key(&v.to_string()),
        };
        if !held {
            return Ok(false);
        }
    }
    Ok(true)
}

/// What [`add_sessions`] did.
#[derive(Debug, Clone, Default)]
pub struct Added {
    /// The sessions written: (key, sessionId, transcript rows).
    pub sessions: Vec<(String, String, usize)>,
    /// The sessions skipped as duplicates (found so only at write time: a race).
    pub duplicates: Vec<Duplicate>,
}

/// Adds `sessions` to the existing database at `db` in one transaction (`BEGIN
/// IMMEDIATE`, so no other writer interleaves): each gets the rows a fresh import
/// writes; one the database already has (checked inside the transaction) is skipped and
/// reported. Rows already there are never written. `sessions` is read one at a time
/// (transcripts are not all held in memory).
pub fn add_sessions(
    db: &Path,
    sessions: impl IntoIterator<Item = Result<NewSession, ImportError>>,
    now_ms: i64,
) -> Result<Added, ImportError> {
    let mut c = open(db, true)?;
    c.execute_batch("PRAGMA foreign_keys = ON;")
        .map_err(ImportError::sqlite(db))?;
    let tx = c
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(ImportError::sqlite(db))?;
    let have = read_existing(&tx, db)?;
    let mut out = Added::default();
    for s in sessions {
        // An error drops the transaction: nothing is written.
        let s = s?;
        if let Some(reason) = have.duplicate_reason(&s.key, &s.session_id) {
            out.duplicates.push(Duplicate {
                session_key: s.key.clone(),
                session_id: s.session_id.clone(),
                reason,
                transcript_held: None,
            });
            continue;
        }
        let transcript = write::prepare(&tx, &s.lines, now_ms).map_err(ImportError::sqlite(db))?;
        let w = write::session(
            &tx,
            &write::SessionInput {
                key: &s.key,
                entry: &s.entry,
                session_id: &s.session_id,
                transcript: &transcript,
                transcript_mtime_ms: s.transcript_mtime_ms,
                now_ms,
            },
        )
        .map_err(ImportError::sqlite(db))?;
        // As a fresh import leaves its entries: validated (the triggers reset the flag).
        tx.execute(
            "UPDATE session_nodes SET entry_valid = 1 WHERE session_key = ?1",
            params![s.key],
        )
        .map_err(ImportError::sqlite(db))?;
        out.sessions
            .push((s.key.clone(), s.session_id.clone(), w.events));
    }
    tx.commit().map_err(ImportError::sqlite(db))?;
    Ok(out)
}

/// The decoded transcript lines the database holds for `session_id` (for proofs).
pub fn stored_lines(db: &Path, session_id: &str) -> Result<Vec<String>, ImportError> {
    let adb = crate::agent_db::AgentDb::open(db).map_err(|e| ImportError::Malformed {
        path: db.to_path_buf(),
        what: e.to_string(),
    })?;
    crate::agent_db::events::lines(&adb, session_id).map_err(|e| ImportError::Malformed {
        path: db.to_path_buf(),
        what: e.to_string(),
    })
}

/// A legacy session to check against the database.
#[derive(Debug, Clone, Copy)]
pub struct Candidate<'a> {
    /// The session key.
    pub key: &'a str,
    /// `sessionId`.
    pub session_id: &'a str,
    /// Its transcript in the sessions directory, as planned.
    pub transcript: Option<&'a FileIdentity>,
}

/// For each candidate, the duplicate it is of a database session (`None`: the database
/// lacks it). With `check_held`, a duplicate's transcript is compared with the
/// database's ([`transcript_held`]).
pub fn duplicates(
    db: &Path,
    sessions_dir: &Path,
    candidates: &[Candidate<'_>],
    check_held: bool,
) -> Result<Vec<Option<Duplicate>>, ImportError> {
    let have = existing(db)?;
    let mut out = Vec::with_capacity(candidates.len());
    for c in candidates {
        let Some(reason) = have.duplicate_reason(c.key, c.session_id) else {
            out.push(None);
            continue;
        };
        let transcript_held = match (c.transcript, check_held) {
            (Some(t), true) => {
                let lines = legacy::read_lines(sessions_dir, t)?;
                Some(reason == "same-session" && transcript_held(db, c.session_id, &lines)?)
            }
            _ => None,
        };
        out.push(Some(Duplicate {
            session_key: c.key.to_string(),
            session_id: c.session_id.to_string(),
            reason,
            transcript_held,
        }));
    }
    Ok(out)
}
