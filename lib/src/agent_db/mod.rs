//! The per-agent SQLite session database of OpenClaw 2026.8+ (`agent-db.md`): one
//! storage seam, read-only.
//!
//! Since 2026.8 the gateway keeps an agent's sessions and transcripts in
//! `<stateDir>/agents/<id>/agent/openclaw-agent.sqlite` and no longer reads
//! `sessions.json` or the JSONL files at run time. Which one holds an agent's sessions is
//! decided per agent by [`layout`]: the database, when it is there and says it is an agent
//! database (`schema_meta` role `agent`), else the files; with both, the database is
//! authoritative (as for the gateway) and the files are reported as leftovers.
//!
//! Everything here opens the database read-only (`SQLITE_OPEN_READ_ONLY` and
//! `query_only`) and never writes it: a schema we know is read exactly, one we do not know
//! is read only where the tables and columns we use are all there (a newer one with a
//! warning naming its version), and nothing writes the database layout yet (writers refuse
//! with [`AgentDbError::WriteRefused`], exit 77).
//!
//! Readers built on the seam: the store text ([`store_text`]: `session_nodes` as the
//! `sessions.json` object every store reader already parses) and transcripts
//! ([`events`]: `transcript_events` in seq order, `event_json` or zstd `event_zstd`).

pub mod check;
pub mod du;
pub mod events;
pub mod follow;
pub mod layout;
pub mod store_text;

use std::path::{Path, PathBuf};

use rusqlite::{Connection, OpenFlags};
use thiserror::Error;

use crate::exit::{self, ExitCode};

/// The agent schema version this toolkit reads exactly (openclaw 2026.9.6).
pub const SCHEMA_VERSION: i64 = 23;

/// The file name of the agent database inside `<agentDir>/agent/`.
pub const DB_FILE_NAME: &str = "openclaw-agent.sqlite";

/// The columns each table this toolkit reads must have; a database of another schema
/// version is read only when all of them are there.
const USED_COLUMNS: &[(&str, &[&str])] = &[
    ("schema_meta", &["meta_key", "role", "schema_version"]),
    (
        "session_nodes",
        &[
            "session_key",
            "current_session_id",
            "entry_json",
            "entry_valid",
            "updated_at",
        ],
    ),
    ("session_windows", &["session_id", "session_key"]),
    (
        "transcript_events",
        &[
            "session_id",
            "seq",
            "event_json",
            "event_zstd",
            "event_utf8_bytes",
        ],
    ),
];

/// A failure to open, recognise or read an agent database.
#[derive(Debug, Error)]
pub enum AgentDbError {
    /// SQLite failed (busy, corrupt, I/O).
    #[error("{path}: {source}")]
    Sqlite {
        /// The database.
        path: PathBuf,
        /// What SQLite said.
        source: rusqlite::Error,
    },
    /// The file is not an agent database (no `schema_meta` row of role `agent`).
    #[error("{path}: not an OpenClaw agent database ({why})")]
    NotAgentDb {
        /// The database.
        path: PathBuf,
        /// What is missing.
        why: String,
    },
    /// A schema version whose tables differ from what we read.
    #[error("{path}: agent schema {version} lacks {table}.{column}, which clawstate reads (it knows schema {SCHEMA_VERSION})")]
    UnknownSchema {
        /// The database.
        path: PathBuf,
        /// Its `user_version`.
        version: i64,
        /// The table.
        table: String,
        /// The missing column.
        column: String,
    },
    /// A row that cannot be decoded (a torn zstd blob, a size that does not match).
    #[error("{path}: {what}")]
    BadRow {
        /// The database.
        path: PathBuf,
        /// Which row and what is wrong.
        what: String,
    },
    /// A write on the database layout, which clawstate does not do (yet).
    #[error("{path}: this agent keeps its sessions in the SQLite database (OpenClaw 2026.8+); clawstate reads it but does not write it yet: {what} refused (use the gateway, or `--layout files` for the legacy files)")]
    WriteRefused {
        /// The database.
        path: PathBuf,
        /// The refused operation.
        what: String,
    },
}

impl ExitCode for AgentDbError {
    fn exit_code(&self) -> i32 {
        match self {
            AgentDbError::Sqlite { source, .. } => match source.sqlite_error_code() {
                Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked) => {
                    exit::TEMP_FAIL
                }
                Some(rusqlite::ErrorCode::CannotOpen) => exit::NOT_FOUND,
                _ => exit::DATA_ERR,
            },
            AgentDbError::NotAgentDb { .. }
            | AgentDbError::UnknownSchema { .. }
            | AgentDbError::BadRow { .. } => exit::DATA_ERR,
            AgentDbError::WriteRefused { .. } => NOT_PERMITTED,
        }
    }
}

/// Exit code of an operation that is not permitted (sysexits `EX_NOPERM`).
pub const NOT_PERMITTED: i32 = 77;

/// What the schema gate found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaInfo {
    /// `PRAGMA user_version`.
    pub user_version: i64,
    /// `schema_meta.schema_version` of the `agent` row.
    pub meta_version: i64,
    /// `schema_meta.agent_id`.
    pub agent_id: Option<String>,
    /// `schema_meta.app_version` (the OpenClaw that created it).
    pub app_version: Option<String>,
}

impl SchemaInfo {
    /// The warning for a schema other than the one read exactly, if any.
    pub fn warning(&self, path: &Path) -> Option<String> {
        (self.user_version > SCHEMA_VERSION).then(|| {
            format!(
                "{}: agent schema {} is newer than {SCHEMA_VERSION}, which clawstate knows; reading it read-only where its tables are unchanged",
                path.display(),
                self.user_version
            )
        })
    }
}

/// An agent database opened read-only, its schema checked.
pub struct AgentDb {
    /// The database file.
    pub path: PathBuf,
    /// The open connection (read-only, `query_only`).
    pub conn: Connection,
    /// What the gate found.
    pub schema: SchemaInfo,
}

impl AgentDb {
    /// Opens `path` read-only and checks it is an agent database we can read.
    pub fn open(path: &Path) -> Result<AgentDb, AgentDbError> {
        let sql = |source| AgentDbError::Sqlite {
            path: path.to_path_buf(),
            source,
        };
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(sql)?;
        conn.busy_timeout(std::time::Duration::from_secs(5))
            .map_err(sql)?;
        conn.pragma_update(None, "query_only", true).map_err(sql)?;
        let schema = gate(&conn, path)?;
        Ok(AgentDb {
            path: path.to_path_buf(),
            conn,
            schema,
        })
    }

    /// A SQLite error about this database.
    pub fn err(&self, source: rusqlite::Error) -> AgentDbError {
        AgentDbError::Sqlite {
            path: self.path.clone(),
            source,
        }
    }
}

/// Whether `path` is an agent database (it opens and its `schema_meta` says `agent`).
pub fn is_agent_db(path: &Path) -> bool {
    let Ok(conn) = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    ) else {
        return false;
    };
    conn.query_row(
        "SELECT 1 FROM schema_meta WHERE role = 'agent' LIMIT 1",
        [],
        |_| Ok(()),
    )
    .is_ok()
}

/// The `user_version` / `schema_meta` gate: an agent database, schema 23 read exactly,
/// any other version only when every column we read is there.
fn gate(conn: &Connection, path: &Path) -> Result<SchemaInfo, AgentDbError> {
    let sql = |source| AgentDbError::Sqlite {
        path: path.to_path_buf(),
        source,
    };
    let user_version: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .map_err(sql)?;
    let has_meta: bool = conn
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_meta'",
            [],
            |r| r.get::<_, i64>(0),
        )
        .map_err(sql)?
        > 0;
    if !has_meta {
        return Err(AgentDbError::NotAgentDb {
            path: path.to_path_buf(),
            why: "no schema_meta table".into(),
        });
    }
    let meta = conn
        .query_row(
            "SELECT schema_version, agent_id, app_version FROM schema_meta WHERE role = 'agent' ORDER BY meta_key = 'primary' DESC LIMIT 1",
            [],
            |r| Ok((r.get::<_, i64>(0)?, r.get::<_, Option<String>>(1)?, r.get::<_, Option<String>>(2)?)),
        );
    let (meta_version, agent_id, app_version) = match meta {
        Ok(m) => m,
        Err(rusqlite::Error::QueryReturnedNoRows) => {
            return Err(AgentDbError::NotAgentDb {
                path: path.to_path_buf(),
                why: "schema_meta has no row of role agent".into(),
            })
        }
        Err(e) => return Err(sql(e)),
    };
    let info = SchemaInfo {
        user_version,
        meta_version,
        agent_id,
        app_version,
    };
    if user_version == SCHEMA_VERSION {
        return Ok(info);
    }
    for (table, columns) in USED_COLUMNS {
        let mut st = conn
            .prepare(&format!("PRAGMA table_info({table})"))
            .map_err(sql)?;
        let have: Vec<String> = st
            .query_map([], |r| r.get::<_, String>(1))
            .map_err(sql)?
            .collect::<Result<_, _>>()
            .map_err(sql)?;
        for c in *columns {
            if !have.iter().any(|h| h == c) {
                return Err(AgentDbError::UnknownSchema {
                    path: path.to_path_buf(),
                    version: user_version,
                    table: (*table).to_string(),
                    column: (*c).to_string(),
                });
            }
        }
    }
    Ok(info)
}

#[cfg(test)]
pub(crate) mod testdb {
    //! A minimal agent database for unit tests (the tables the readers use).
    use rusqlite::Connection;
    use std::path::Path;

    /// Creates a schema-23-shaped database at `path` with the used tables.
    pub fn create(path: &Path, version: i64) -> Connection {
        let c = Connection::open(path).unwrap();
        c.execute_batch(&format!(
            "PRAGMA user_version = {version};
             CREATE TABLE schema_meta (meta_key TEXT NOT NULL PRIMARY KEY, role TEXT NOT NULL, schema_version INTEGER NOT NULL, agent_id TEXT, app_version TEXT, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL);
             INSERT INTO schema_meta VALUES ('primary','agent',{version},'main','2026.9.6',0,0);
             CREATE TABLE session_nodes (session_key TEXT NOT NULL PRIMARY KEY, current_session_id TEXT NOT NULL, entry_json TEXT NOT NULL, entry_valid INTEGER NOT NULL DEFAULT 0, updated_at INTEGER NOT NULL);
             CREATE TABLE session_windows (session_id TEXT NOT NULL PRIMARY KEY, session_key TEXT NOT NULL);
             CREATE TABLE transcript_events (session_id TEXT NOT NULL, seq INTEGER NOT NULL, event_json TEXT, created_at INTEGER NOT NULL, event_zstd BLOB, event_utf8_bytes INTEGER, navigation_json TEXT, PRIMARY KEY (session_id, seq));"
        ))
        .unwrap();
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_23_is_read_and_newer_warns() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.sqlite");
        drop(testdb::create(&p, 23));
        let db = AgentDb::open(&p).unwrap();
        assert_eq!(db.schema.user_version, 23);
        assert!(db.schema.warning(&p).is_none());
        let p2 = dir.path().join("b.sqlite");
        drop(testdb::create(&p2, 24));
        let db = AgentDb::open(&p2).unwrap();
        assert!(db.schema.warning(&p2).unwrap().contains("agent schema 24"));
    }

    #[test]
    fn other_version_without_a_used_column_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.sqlite");
        let c = testdb::create(&p, 30);
        c.execute_batch("ALTER TABLE transcript_events DROP COLUMN event_zstd")
            .unwrap();
        drop(c);
        let e = AgentDb::open(&p).err().unwrap();
        assert!(
            e.to_string().contains("transcript_events.event_zstd"),
            "{e}"
        );
        assert_eq!(e.exit_code(), exit::DATA_ERR);
    }

    #[test]
    fn not_an_agent_db() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.sqlite");
        let c = Connection::open(&p).unwrap();
        c.execute_batch("CREATE TABLE schema_meta (meta_key TEXT, role TEXT, schema_version INTEGER, agent_id TEXT, app_version TEXT); INSERT INTO schema_meta VALUES ('primary','state',18,NULL,NULL)").unwrap();
        drop(c);
        assert!(!is_agent_db(&p));
        assert!(matches!(
            AgentDb::open(&p),
            Err(AgentDbError::NotAgentDb { .. })
        ));
    }

    #[test]
    fn opening_never_writes() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.sqlite");
        drop(testdb::create(&p, 23));
        let db = AgentDb::open(&p).unwrap();
        assert!(db.conn.execute("DELETE FROM session_nodes", []).is_err());
    }
}
