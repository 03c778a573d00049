//! What the session lifecycle does to the signal state (`signals.md` §3.8), for `claw-sessions`:
//! a reset forgets the cursors the session holds as a watcher; a deletion forgets the
//! session's events, head, upstream link and every cursor naming it.
//!
//! Both come after the store change, as in the gateway: the store change stands even when
//! the state database cannot be updated. Unlike the gateway, which only logs it, the failure
//! is returned as a [`CleanupError`] that says what was left and carries the database's exit
//! code, so the command ends non-zero instead of reporting a clean success. Nothing happens
//! when there is no signal log to update: no database, or one without the log (OpenClaw
//! 2026.7's schema 1, which holds no cursors and which its gateway alone may write), which
//! is then not even opened by SQLite.

use thiserror::Error;

use super::cursors;
use super::db::{DbError, StateDb};
use super::generation::HostSchema;
use super::journal::{self, Forgotten};
use crate::exit::ExitCode;
use crate::install::context::StateContext;

/// The signal state of a reset or deleted session was not updated (the store change stands).
#[derive(Debug, Clone, Error)]
#[error("{done}{what} of {key} {failed}: {reason}")]
pub struct CleanupError {
    /// The session key.
    pub key: String,
    /// `store updated; ` after a write, empty for a dry run.
    done: &'static str,
    /// What was left: the watch cursors, the signal state.
    what: &'static str,
    /// What did not happen to it.
    failed: &'static str,
    /// Why (the database's or the query's error).
    pub reason: String,
    /// The exit code of the underlying error.
    code: i32,
}

impl ExitCode for CleanupError {
    fn exit_code(&self) -> i32 {
        self.code
    }
}

/// What a failed cleanup leaves behind, before the reason is known.
struct Left<'k> {
    key: &'k str,
    dry_run: bool,
    what: &'static str,
    /// What did not happen: in a dry run, after a write.
    failed: [&'static str; 2],
}

impl Left<'_> {
    /// The error for `reason`, with its exit code.
    fn because(&self, reason: &(impl std::fmt::Display + ExitCode)) -> CleanupError {
        CleanupError {
            key: self.key.to_string(),
            done: if self.dry_run { "" } else { "store updated; " },
            what: self.what,
            failed: self.failed[usize::from(!self.dry_run)],
            reason: reason.to_string(),
            code: reason.exit_code(),
        }
    }
}

/// Opens the state database for a lifecycle update: for reading when `dry_run`, else for
/// writing; `None` when there is no signal log to update (no database, or one without the
/// log), so nothing is created or changed.
fn open_signal_log(ctx: &StateContext, dry_run: bool) -> Result<Option<StateDb>, DbError> {
    let path = ctx.layout.state_db_path();
    if !path.exists() {
        return Ok(None);
    }
    let host = HostSchema::of(&ctx.config, None);
    let read = StateDb::open_read_as(&path, &host)?;
    if !read.has_signal_log() {
        return Ok(None);
    }
    if dry_run {
        return Ok(Some(read));
    }
    drop(read);
    StateDb::open_write_as(&path, &host).map(Some)
}

/// After a reset of `key`: deletes (or, dry, counts) the cursors `key` holds as a watcher.
/// `None` when there is no signal log.
pub fn on_session_reset(
    ctx: &StateContext,
    key: &str,
    dry_run: bool,
) -> Option<Result<usize, CleanupError>> {
    let left = Left {
        key,
        dry_run,
        what: "the watch cursors",
        failed: ["could not be counted", "were not reset"],
    };
    let mut db = match open_signal_log(ctx, dry_run) {
        Ok(Some(db)) => db,
        Ok(None) => return None,
        Err(e) => return Some(Err(left.because(&e))),
    };
    Some(if dry_run {
        cursors::count_for_watcher(&mut db, key).map_err(|e| left.because(&e))
    } else {
        cursors::reset(&mut db, key).map_err(|e| left.because(&e))
    })
}

/// After `key` of `agent_id` was deleted: forgets (or, dry, counts) its signal state.
/// `None` when there is no signal log.
pub fn on_session_deleted(
    ctx: &StateContext,
    key: &str,
    agent_id: &str,
    dry_run: bool,
) -> Option<Result<Forgotten, CleanupError>> {
    on_sessions_deleted(ctx, &[(key, agent_id)], dry_run)
        .pop()
        .flatten()
}

/// [`on_session_deleted`] for a batch of (key, agent id), the database opened once; one
/// result per key, in order.
pub fn on_sessions_deleted(
    ctx: &StateContext,
    deleted: &[(&str, &str)],
    dry_run: bool,
) -> Vec<Option<Result<Forgotten, CleanupError>>> {
    let left = |key| Left {
        key,
        dry_run,
        what: "the signal state (events, head, upstream link, watch cursors)",
        failed: ["could not be counted", "was not forgotten"],
    };
    let mut db = match open_signal_log(ctx, dry_run) {
        Ok(Some(db)) => db,
        Ok(None) => return deleted.iter().map(|_| None).collect(),
        Err(e) => {
            return deleted
                .iter()
                .map(|(key, _)| Some(Err(left(key).because(&e))))
                .collect()
        }
    };
    deleted
        .iter()
        .map(|(key, agent_id)| {
            Some(
                journal::forget(&mut db, key, agent_id, dry_run).map_err(|e| left(key).because(&e)),
            )
        })
        .collect()
}
