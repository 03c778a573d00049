//! The agent database schema 2026.9.6 creates (user_version 23), and recognising a
//! database that already has it.
//!
//! The text is the `.schema` of a database 9.6's doctor created (`agent-schema-v23.sql`,
//! measured); creating it here gives the same `sqlite_master` SQL, which the import's
//! differential test compares. The FTS5 shadow tables and `sqlite_sequence` in that text
//! are created by SQLite itself, so their statements are skipped.

use rusqlite::Connection;

/// The schema text as measured on a 9.6 database.
pub const SCHEMA_SQL: &str = include_str!("agent-schema-v23.sql");

/// The agent schema version this import writes.
pub const USER_VERSION: i64 = 23;

/// The application version 9.6 records in `schema_meta`.
pub const APP_VERSION: &str = "2026.9.6";

/// The statements of [`SCHEMA_SQL`] that create objects (not those SQLite creates itself).
pub fn statements() -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut in_trigger = false;
    for line in SCHEMA_SQL.lines() {
        if cur.is_empty() && (line.starts_with("--") || line.trim().is_empty()) {
            continue;
        }
        if cur.is_empty() && line.starts_with("/*") {
            continue;
        }
        if cur.is_empty() && line.starts_with("CREATE TRIGGER") {
            in_trigger = true;
        }
        cur.push_str(line);
        cur.push('\n');
        let done = if in_trigger {
            line.trim() == "END;"
        } else {
            line.trim_end().ends_with(';')
        };
        if done {
            in_trigger = false;
            let stmt = std::mem::take(&mut cur);
            let shadow = stmt.starts_with("CREATE TABLE IF NOT EXISTS '")
                || stmt.starts_with("CREATE TABLE sqlite_sequence");
            if !shadow {
                out.push(stmt);
            }
        }
    }
    out
}

/// Creates the schema on an empty database: incremental auto-vacuum, 4 KiB pages, the
/// tables, indexes and triggers, `user_version` 23, and the rows 9.6 seeds.
pub fn create(conn: &Connection, agent_id: &str, now_ms: i64) -> rusqlite::Result<()> {
    conn.execute_batch("PRAGMA page_size = 4096; PRAGMA auto_vacuum = INCREMENTAL;")?;
    for stmt in statements() {
        conn.execute_batch(&stmt)?;
    }
    conn.execute_batch(&format!("PRAGMA user_version = {USER_VERSION};"))?;
    conn.execute(
        "INSERT INTO schema_meta (meta_key, role, schema_version, agent_id, app_version, created_at, updated_at) VALUES ('primary', 'agent', ?1, ?2, ?3, ?4, ?4)",
        rusqlite::params![USER_VERSION, agent_id, APP_VERSION, now_ms],
    )?;
    conn.execute(
        "INSERT INTO session_key_contract (id, main_key, canonical_ready, updated_at) VALUES (1, 'main', NULL, 0)",
        [],
    )?;
    conn.execute(
        "INSERT INTO memory_index_state (id, revision) VALUES (1, 0)",
        [],
    )?;
    Ok(())
}

/// What an existing database is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Existing {
    /// An agent database of schema 23 with exactly the objects this import creates.
    Known,
    /// Something else: the reason.
    Unknown(String),
}

/// Whether `conn` holds exactly the schema [`create`] makes (same `sqlite_master` SQL,
/// user_version 23, an agent `schema_meta` row).
pub fn recognise(conn: &Connection) -> rusqlite::Result<Existing> {
    let uv: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if uv != USER_VERSION {
        return Ok(Existing::Unknown(format!(
            "user_version {uv}, this import knows {USER_VERSION}"
        )));
    }
    let mem = Connection::open_in_memory()?;
    for stmt in statements() {
        mem.execute_batch(&stmt)?;
    }
    let objects = |c: &Connection| -> rusqlite::Result<Vec<String>> {
        let mut s = c.prepare(
            "SELECT type || ' ' || name || ' ' || coalesce(sql, '') FROM sqlite_master ORDER BY 1",
        )?;
        let v = s.query_map([], |r| r.get(0))?.collect();
        v
    };
    if objects(conn)? != objects(&mem)? {
        return Ok(Existing::Unknown(
            "its tables, indexes or triggers differ from agent schema 23".into(),
        ));
    }
    let role: Option<String> = conn
        .query_row(
            "SELECT role FROM schema_meta WHERE meta_key = 'primary'",
            [],
            |r| r.get(0),
        )
        .ok();
    if role.as_deref() != Some("agent") {
        return Ok(Existing::Unknown("no schema_meta row of role agent".into()));
    }
    Ok(Existing::Known)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schema_creates_and_is_recognised() {
        let c = Connection::open_in_memory().unwrap();
        create(&c, "main", 1).unwrap();
        assert_eq!(recognise(&c).unwrap(), Existing::Known);
        let n: i64 = c
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE type='trigger'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(n, 23);
        c.execute_batch("CREATE TABLE extra (x)").unwrap();
        assert!(matches!(recognise(&c).unwrap(), Existing::Unknown(_)));
    }
}
