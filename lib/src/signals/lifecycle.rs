//! What the session lifecycle does to the signal state (§3.8), for `claw-sessions`:
//! a reset forgets the cursors the session holds as a watcher; a deletion forgets the
//! session's events, head, upstream link and every cursor naming it.
//!
//! Both are best effort, as in the gateway: the store change stands even when the state
//! database cannot be updated, and the reason is returned for a warning. Nothing happens
//! when the database does not exist.

use super::cursors;
use super::db::StateDb;
use super::journal::{self, Forgotten};
use crate::context::StateContext;

/// After a reset of `key`: deletes (or, dry, counts) the cursors `key` holds as a watcher.
/// `None` when there is no state database.
pub fn on_session_reset(
    ctx: &StateContext,
    key: &str,
    dry_run: bool,
) -> Option<Result<usize, String>> {
    let path = ctx.layout.state_db_path();
    if !path.exists() {
        return None;
    }
    let run = || -> Result<usize, String> {
        if dry_run {
            let mut db = StateDb::open_read(&path).map_err(|e| e.to_string())?;
            cursors::count_for_watcher(&mut db, key).map_err(|e| e.to_string())
        } else {
            let mut db = StateDb::open_write(&path).map_err(|e| e.to_string())?;
            cursors::reset(&mut db, key).map_err(|e| e.to_string())
        }
    };
    Some(run())
}

/// After `key` of `agent_id` was deleted: forgets (or, dry, counts) its signal state.
/// `None` when there is no state database.
pub fn on_session_deleted(
    ctx: &StateContext,
    key: &str,
    agent_id: &str,
    dry_run: bool,
) -> Option<Result<Forgotten, String>> {
    let path = ctx.layout.state_db_path();
    if !path.exists() {
        return None;
    }
    let run = || -> Result<Forgotten, String> {
        let mut db = if dry_run {
            StateDb::open_read(&path)
        } else {
            StateDb::open_write(&path)
        }
        .map_err(|e| e.to_string())?;
        journal::forget(&mut db, key, agent_id, dry_run).map_err(|e| e.to_string())
    };
    Some(run())
}
