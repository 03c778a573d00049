//! Which storage holds an agent's sessions: the legacy files (`sessions.json` and
//! `<sessionId>.jsonl`) or the agent database, decided per agent as the gateway decides.
//!
//! A store path names the agent: `<agentDir>/sessions/sessions.json` (or a `--store`
//! given as the `.sqlite` itself). Its database is `<agentDir>/agent/openclaw-agent.sqlite`.
//! When that file is an agent database (`schema_meta` role `agent`) it is authoritative:
//! the gateway of 2026.8+ never reads the files again, so a `sessions.json` or JSONL still
//! beside it is a leftover, reported, never read. `--layout files|db` forces one.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use super::{AgentDbError, DB_FILE_NAME};

/// Where an agent's sessions live.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// `sessions.json` and JSONL transcripts (OpenClaw up to 2026.7).
    Files,
    /// The agent SQLite database (OpenClaw 2026.8+).
    Db,
}

impl std::str::FromStr for Layout {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "files" | "file" => Ok(Layout::Files),
            "db" | "sqlite" => Ok(Layout::Db),
            _ => Err(format!("--layout: {s:?} is not files or db")),
        }
    }
}

static FORCED: OnceLock<Layout> = OnceLock::new();

/// Forces one layout for every agent of this process (`--layout`); the first call wins.
pub fn force(layout: Layout) {
    let _ = FORCED.set(layout);
}

/// The layout forced by `--layout`, if any.
pub fn forced() -> Option<Layout> {
    FORCED.get().copied()
}

/// The agent database that belongs with a store path.
pub fn db_path_for_store(store_path: &Path) -> PathBuf {
    if store_path.extension().is_some_and(|e| e == "sqlite") {
        return store_path.to_path_buf();
    }
    let sessions_dir = store_path.parent().unwrap_or(Path::new("."));
    let agent_dir = sessions_dir.parent().unwrap_or(sessions_dir);
    agent_dir.join("agent").join(DB_FILE_NAME)
}

/// The legacy store path that belongs with a store path (the `.sqlite` of `--store`
/// maps back to `<agentDir>/sessions/sessions.json`).
pub fn legacy_store_for(store_path: &Path) -> PathBuf {
    if store_path.extension().is_some_and(|e| e == "sqlite") {
        let agent = store_path.parent().and_then(Path::parent);
        return agent
            .unwrap_or(Path::new("."))
            .join("sessions")
            .join("sessions.json");
    }
    store_path.to_path_buf()
}

fn probe_cache() -> &'static Mutex<HashMap<PathBuf, bool>> {
    static C: OnceLock<Mutex<HashMap<PathBuf, bool>>> = OnceLock::new();
    C.get_or_init(|| Mutex::new(HashMap::new()))
}

fn db_present(db: &Path) -> bool {
    if let Ok(c) = probe_cache().lock() {
        if let Some(&b) = c.get(db) {
            return b;
        }
    }
    let b = db.is_file() && super::is_agent_db(db);
    if let Ok(mut c) = probe_cache().lock() {
        c.insert(db.to_path_buf(), b);
    }
    b
}

/// The agent database that holds the sessions of `store_path`, or `None` for the files.
pub fn db_for_store(store_path: &Path) -> Option<PathBuf> {
    let db = db_path_for_store(store_path);
    match forced() {
        Some(Layout::Files) => None,
        Some(Layout::Db) => Some(db),
        None => {
            if store_path.extension().is_some_and(|e| e == "sqlite") || db_present(&db) {
                Some(db)
            } else {
                None
            }
        }
    }
}

/// The layout of `store_path`'s agent.
pub fn layout_of(store_path: &Path) -> Layout {
    if db_for_store(store_path).is_some() {
        Layout::Db
    } else {
        Layout::Files
    }
}

/// The path shown for a store: the `.sqlite` for the database layout (as
/// `openclaw sessions --json` shows it), else the store file.
pub fn display_store_path(store_path: &Path) -> PathBuf {
    db_for_store(store_path).unwrap_or_else(|| store_path.to_path_buf())
}

/// Refuses a write to a store whose agent keeps its sessions in the database.
pub fn refuse_write(store_path: &Path, what: &str) -> Result<(), AgentDbError> {
    match db_for_store(store_path) {
        Some(path) => Err(AgentDbError::WriteRefused {
            path,
            what: what.to_string(),
        }),
        None => Ok(()),
    }
}

/// Legacy files still beside a database-backed agent: the store and the JSONL
/// transcripts of its sessions directory (archives excluded), which the gateway never
/// reads again.
pub fn legacy_leftovers(store_path: &Path) -> Vec<PathBuf> {
    let legacy = legacy_store_for(store_path);
    let mut out = Vec::new();
    if legacy.is_file() {
        out.push(legacy.clone());
    }
    if let Some(dir) = legacy.parent() {
        if let Ok(rd) = std::fs::read_dir(dir) {
            let mut names: Vec<PathBuf> = rd
                .flatten()
                .map(|e| e.path())
                .filter(|p| {
                    p.extension().is_some_and(|e| e == "jsonl")
                        && p.symlink_metadata().is_ok_and(|m| m.is_file())
                })
                .collect();
            names.sort();
            out.extend(names);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_of_an_agent() {
        let s = Path::new("/s/agents/main/sessions/sessions.json");
        assert_eq!(
            db_path_for_store(s),
            Path::new("/s/agents/main/agent/openclaw-agent.sqlite")
        );
        let d = Path::new("/s/agents/main/agent/openclaw-agent.sqlite");
        assert_eq!(db_path_for_store(d), d);
        assert_eq!(legacy_store_for(d), s);
    }

    #[test]
    fn files_without_a_db_and_db_when_present() {
        let dir = tempfile::tempdir().unwrap();
        let store = dir.path().join("agents/main/sessions/sessions.json");
        std::fs::create_dir_all(store.parent().unwrap()).unwrap();
        std::fs::write(&store, "{}").unwrap();
        assert_eq!(layout_of(&store), Layout::Files);
        let db = dir.path().join("agents/main/agent/openclaw-agent.sqlite");
        std::fs::create_dir_all(db.parent().unwrap()).unwrap();
        drop(super::super::testdb::create(&db, 23));
        // A new store path (the probe is cached per path).
        let store2 = dir.path().join("agents/main/sessions/./sessions.json");
        let _ = store2;
        assert!(super::super::is_agent_db(&db));
        assert_eq!(legacy_leftovers(&store), vec![store.clone()]);
    }
}
