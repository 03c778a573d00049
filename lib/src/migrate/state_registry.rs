//! The agent database's row in the state database's registry (`agent_databases` of
//! `<stateDir>/state/openclaw.sqlite`), written as 2026.9.6 writes it when its doctor
//! creates or opens an agent database (`registerOpenClawAgentDatabase`): the agent id,
//! the path relative to the state dir (absolute when outside it), schema version 23,
//! `last_seen_at` = now, `size_bytes` = the file's size; an upsert on `(agent_id, path)`.
//!
//! Why only so far: the state database is the gateway's. A missing one is not created
//! (9.6 registers the agent database itself when it first opens it), one whose schema
//! clawstate does not know (outside 15..=18, or an `agent_databases` table of other
//! columns, or a trigger or view on it) is not written, and an agent with a row in
//! `agent_deletion_journal` (being deleted, 9.6's deletion fence) is not registered.

use std::path::Path;

use rusqlite::params;
use serde::Serialize;
use thiserror::Error;

use crate::exit::ExitCode;
use crate::signals::db::{DbError, StateDb};

/// The state database under a state dir.
pub const STATE_DB: &str = "state/openclaw.sqlite";

/// The agent schema version 9.6 records.
pub const AGENT_SCHEMA_VERSION: i64 = 23;

/// The columns of `agent_databases` clawstate knows, in order.
const COLUMNS: [&str; 5] = [
    "agent_id",
    "path",
    "schema_version",
    "last_seen_at",
    "size_bytes",
];

/// A failure to register (the state database could not be opened or written).
#[derive(Debug, Error)]
pub enum RegistryError {
    /// The state database refused.
    #[error(transparent)]
    State(#[from] DbError),
}

impl ExitCode for RegistryError {
    fn exit_code(&self) -> i32 {
        match self {
            RegistryError::State(e) => e.exit_code(),
        }
    }
}

/// What [`register`] did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase", tag = "status")]
pub enum Registration {
    /// The row is written.
    Registered {
        /// The stored path.
        path: String,
        /// The size recorded.
        size_bytes: i64,
    },
    /// Nothing written, and why.
    Skipped {
        /// Why.
        reason: String,
    },
}

/// The path 9.6 stores for `db` (`resolveOpenClawAgentDatabaseStoredPath`): relative to
/// the state dir when inside it, else absolute.
pub fn stored_path(state_dir: &Path, db: &Path) -> String {
    match db.strip_prefix(state_dir) {
        Ok(rel) if !rel.as_os_str().is_empty() => rel.to_string_lossy().into_owned(),
        _ => db.to_string_lossy().into_owned(),
    }
}

fn skipped(reason: impl Into<String>) -> Registration {
    Registration::Skipped {
        reason: reason.into(),
    }
}

/// Registers the agent database `db` of `agent_id` in the state database of
/// `state_dir` (see the module doc), at `now_ms`.
pub fn register(
    state_dir: &Path,
    agent_id: &str,
    db: &Path,
    now_ms: i64,
) -> Result<Registration, RegistryError> {
    let state_db = state_dir.join(STATE_DB);
    if !state_db.is_file() {
        return Ok(skipped(
            "no state database: 9.6 registers the agent database when it first opens it",
        ));
    }
    let mut sdb = match StateDb::open_write(&state_db) {
        Ok(s) => s,
        Err(e @ (DbError::Busy { .. } | DbError::Sqlite { .. })) => return Err(e.into()),
        Err(e) => return Ok(skipped(format!("state database not written: {e}"))),
    };
    let cols: Vec<String> = {
        let mut st = sdb
            .conn()
            .prepare("SELECT name FROM pragma_table_info('agent_databases') ORDER BY cid")
            .map_err(|e| DbError::sqlite(&state_db, e))?;
        let rows = st
            .query_map([], |r| r.get(0))
            .map_err(|e| DbError::sqlite(&state_db, e))?;
        rows.collect::<rusqlite::Result<_>>()
            .map_err(|e| DbError::sqlite(&state_db, e))?
    };
    if cols != COLUMNS {
        return Ok(skipped(format!(
            "state schema {}: agent_databases has columns {cols:?}, not the ones clawstate knows; not written",
            sdb.user_version()
        )));
    }
    let planted: i64 = sdb
        .conn()
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE type IN ('trigger', 'view') AND (tbl_name = 'agent_databases' OR sql LIKE '%agent_databases%')",
            [],
            |r| r.get(0),
        )
        .map_err(|e| DbError::sqlite(&state_db, e))?;
    if planted > 0 {
        return Ok(skipped(
            "a trigger or view on agent_databases this schema does not have; not written",
        ));
    }
    let fenced: i64 = sdb
        .conn()
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'agent_deletion_journal'",
            [],
            |r| r.get(0),
        )
        .map_err(|e| DbError::sqlite(&state_db, e))?;
    if fenced > 0 {
        let deleting: i64 = sdb
            .conn()
            .query_row(
                "SELECT count(*) FROM agent_deletion_journal WHERE agent_id = ?1",
                params![agent_id],
                |r| r.get(0),
            )
            .map_err(|e| DbError::sqlite(&state_db, e))?;
        if deleting > 0 {
            return Ok(skipped(format!(
                "agent {agent_id:?} is being deleted (agent_deletion_journal); not registered"
            )));
        }
    }
    let path = stored_path(state_dir, db);
    let size = std::fs::metadata(db).map(|m| m.len() as i64).ok();
    sdb.write(|tx| {
        tx.execute(
            "INSERT INTO agent_databases (agent_id, path, schema_version, last_seen_at, size_bytes) VALUES (?1, ?2, ?3, ?4, ?5) \
             ON CONFLICT(agent_id, path) DO UPDATE SET schema_version = excluded.schema_version, last_seen_at = excluded.last_seen_at, size_bytes = excluded.size_bytes",
            params![agent_id, path, AGENT_SCHEMA_VERSION, now_ms, size],
        )
    })?;
    Ok(Registration::Registered {
        path,
        size_bytes: size.unwrap_or(0),
    })
}

#[cfg(test)]
mod tests {
    use super::stored_path;
    use std::path::Path;

    #[test]
    fn paths_inside_the_state_dir_are_stored_relative() {
        let s = Path::new("/h/.openclaw");
        assert_eq!(
            stored_path(
                s,
                Path::new("/h/.openclaw/agents/main/agent/openclaw-agent.sqlite")
            ),
            "agents/main/agent/openclaw-agent.sqlite"
        );
        assert_eq!(
            stored_path(s, Path::new("/elsewhere/a.sqlite")),
            "/elsewhere/a.sqlite"
        );
    }
}
