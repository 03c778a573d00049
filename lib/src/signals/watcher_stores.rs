//! Where each watcher's session store is, as the cursors of a schema-18 state database
//! record it (`watcher_store_path`): computed by the caller (it knows the config and the
//! agents' layouts), asked by the cursor writer and the notice queue.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::session::session_key::parse_agent_session_key;

/// Where each watcher's session store is: the path 2026.9.6 records as
/// `watcher_store_path` and compares a cursor's against (`resolvePhysicalSessionStorePath`
/// of the watcher's agent: its agent database beside the configured session store,
/// resolved through existing ancestors).
#[derive(Clone)]
pub struct WatcherStores(Arc<dyn Fn(&str) -> Option<String> + Send + Sync>);

impl WatcherStores {
    /// Stores computed by `resolve` (watcher key → store path).
    pub fn new(resolve: impl Fn(&str) -> Option<String> + Send + Sync + 'static) -> WatcherStores {
        WatcherStores(Arc::new(resolve))
    }

    /// The store of `watcher`, if it has one (agent-qualified keys only).
    pub fn of(&self, watcher: &str) -> Option<String> {
        parse_agent_session_key(watcher)?;
        (self.0)(watcher)
    }
}

impl std::fmt::Debug for WatcherStores {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("WatcherStores")
    }
}

/// The physical agent store a 2026.9.6 gateway records as `watcher_store_path`:
/// `<stateDir>/agents/<agentId>/agent/openclaw-agent.sqlite`, resolved through existing
/// ancestors; `None` when the database is not at `<stateDir>/state/openclaw.sqlite`.
pub fn watcher_store_path(db_path: &Path, watcher: &str) -> Option<String> {
    let parsed = parse_agent_session_key(watcher)?;
    let state_dir = db_path.parent()?.parent()?;
    let agent = crate::session::session_key::normalize_agent_id(&parsed.agent_id);
    let p: PathBuf = state_dir
        .join("agents")
        .join(agent)
        .join("agent")
        .join("openclaw-agent.sqlite");
    Some(
        crate::js::node_path::resolve_via_existing_ancestor(&p)
            .to_string_lossy()
            .into_owned(),
    )
}

/// The store of an agent database path as 2026.9.6 records it (resolved through existing
/// ancestors).
pub fn store_path_text(db: &Path) -> String {
    crate::js::node_path::resolve_via_existing_ancestor(db)
        .to_string_lossy()
        .into_owned()
}
