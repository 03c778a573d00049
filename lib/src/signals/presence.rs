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
    session_known(ctx, session_key, agent_id) == Some(true)
}

/// Whether `session_key` has an entry in the store of `agent_id`, when that can be told:
/// `None` when the agent has no store on this host (no agent database, no
/// `sessions.json`) or it cannot be read, so that a state database looked at without its
/// stores is not judged by their absence.
pub fn session_known(ctx: &StateContext, session_key: &str, agent_id: &str) -> Option<bool> {
    let store = store_path_for_agent(&ctx.layout, &ctx.config, &ctx.env, agent_id);
    match layout::db_for_store(&store) {
        Some(db) => db_session_known(&db, session_key),
        None => {
            if !store.exists() {
                return None;
            }
            let opts = LoadOptions {
                hydrate_prompts: false,
            };
            let s = SessionStore::load(&store, opts).ok()?;
            Some(s.entry(session_key).is_some())
        }
    }
}

/// Whether the agent database at `db` has a `session_nodes` row for `session_key`; `None` when the database is absent, unreadable or has no
/// `session_nodes` table.
fn db_session_known(db: &Path, session_key: &str) -> Option<bool> {
    if !db.exists() {
        return None;
    }
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = super::db::open_connection(db, flags).ok()?;
    // Only an ordinary table is queried: a view planted in its place never runs.
    if !super::db::table_exists(&conn, "session_nodes").ok()? {
        return None;
    }
    conn.query_row(
        "SELECT 1 FROM session_nodes WHERE session_key = ?1 LIMIT 1",
        [session_key],
        |_| Ok(()),
    )
    .optional()
    .ok()
    .map(|found| found.is_some())
}
