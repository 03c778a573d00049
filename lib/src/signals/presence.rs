//! Whether a session exists in its agent's session store: the restart sweep only
//! re-materialises notices for watchers whose session still exists (`signals.md` §4.7), and
//! `changes-since` answers "unknown session" only for keys nobody knows.
//!
//! Both store generations are consulted: the 2026.7 `sessions.json` of the agent (or the
//! configured `session.store`), and the 2026.8 agent database
//! `<stateDir>/agents/<agentId>/agent/openclaw-agent.sqlite` (`session_nodes`).

use std::path::PathBuf;

use rusqlite::{OpenFlags, OptionalExtension};

use crate::install::context::StateContext;
use crate::install::targets::store_path_for_agent;
use crate::session::session_key::{normalize_agent_id, parse_agent_session_key};
use crate::store::{LoadOptions, SessionStore};

/// The agent a session key belongs to (`resolveAgentIdFromSessionKey`): the key's own
/// agent, else the configured default agent.
pub fn agent_of(ctx: &StateContext, session_key: &str) -> String {
    match parse_agent_session_key(session_key) {
        Some(p) => normalize_agent_id(&p.agent_id),
        None => normalize_agent_id(&ctx.config.default_agent_id()),
    }
}

/// The 2026.8 agent database of an agent.
pub fn agent_database_path(ctx: &StateContext, agent_id: &str) -> PathBuf {
    ctx.layout
        .state_dir
        .join("agents")
        .join(normalize_agent_id(agent_id))
        .join("agent")
        .join("openclaw-agent.sqlite")
}

/// Whether `session_key` has an entry in the store of `agent_id` (either generation).
/// Unreadable stores count as "not found here".
pub fn session_exists(ctx: &StateContext, session_key: &str, agent_id: &str) -> bool {
    let store = store_path_for_agent(&ctx.layout, &ctx.config, &ctx.env, agent_id);
    if store.exists() {
        let opts = LoadOptions {
            hydrate_prompts: false,
        };
        if let Ok(s) = SessionStore::load(&store, opts) {
            if s.entry(session_key).is_some() {
                return true;
            }
        }
    }
    let db = agent_database_path(ctx, agent_id);
    if db.exists() {
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        if let Ok(conn) = super::db::open_connection(&db, flags) {
            // Only an ordinary table is queried: a view planted in its place never runs.
            let found = super::db::table_exists(&conn, "session_nodes").and_then(|t| {
                if !t {
                    return Ok(None);
                }
                conn.query_row(
                    "SELECT 1 FROM session_nodes WHERE session_key = ?1 LIMIT 1",
                    [session_key],
                    |_| Ok(()),
                )
                .optional()
            });
            if matches!(found, Ok(Some(()))) {
                return true;
            }
        }
    }
    false
}
