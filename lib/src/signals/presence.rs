//! Whether a session exists in its agent's session store: the restart sweep only
//! re-materialises notices for watchers whose session still exists (`signals.md` §4.7), and
//! `changes-since` answers "unknown session" only for keys nobody knows.
//!
//! The agent's layout decides which store is asked ([`crate::agent_db::layout`]): its agent
//! database `<agentDir>/agent/openclaw-agent.sqlite` (`session_nodes`) when there is one —
//! a `sessions.json` still beside it is a leftover the gateway never reads — else the
//! 2026.7 `sessions.json` of the agent (or the configured `session.store`).
//!
//! The same place is the watcher's store that 2026.9.6 records in `watcher_store_path`
//! ([`watcher_stores`]).

use std::path::{Path, PathBuf};

use rusqlite::{OpenFlags, OptionalExtension};

use super::watcher_stores::store_path_text;
use super::watcher_stores::WatcherStores;
use crate::agent_db::layout;
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

/// The 2026.8 agent database of an agent (beside its configured session store).
pub fn agent_database_path(ctx: &StateContext, agent_id: &str) -> PathBuf {
    let store = store_path_for_agent(&ctx.layout, &ctx.config, &ctx.env, agent_id);
    layout::db_path_for_store(&store)
}

/// Where each watcher's session store is, as 2026.9.6 records it in `watcher_store_path`
/// (`resolvePhysicalSessionStorePath`): the agent database of the watcher's agent, beside
/// its configured session store, resolved through existing ancestors.
pub fn watcher_stores(ctx: &StateContext) -> WatcherStores {
    let ctx = ctx.clone();
    WatcherStores::new(move |watcher| {
        let agent = agent_of(&ctx, watcher);
        Some(store_path_text(&agent_database_path(&ctx, &agent)))
    })
}

/// Whether `session_key` has an entry in the store of `agent_id`: its agent database when
/// the agent is on that layout, else its `sessions.json`. Unreadable stores count as "not
/// found here".
pub fn session_exists(ctx: &StateContext, session_key: &str, agent_id: &str) -> bool {
    let store = store_path_for_agent(&ctx.layout, &ctx.config, &ctx.env, agent_id);
    match layout::db_for_store(&store) {
        Some(db) => db_has_session(&db, session_key),
        None => {
            if !store.exists() {
                return false;
            }
            let opts = LoadOptions {
                hydrate_prompts: false,
            };
            SessionStore::load(&store, opts).is_ok_and(|s| s.entry(session_key).is_some())
        }
    }
}

/// Whether the agent database at `db` has a `session_nodes` row for `session_key`.
fn db_has_session(db: &Path, session_key: &str) -> bool {
    if !db.exists() {
        return false;
    }
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let Ok(conn) = super::db::open_connection(db, flags) else {
        return false;
    };
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
    matches!(found, Ok(Some(())))
}
