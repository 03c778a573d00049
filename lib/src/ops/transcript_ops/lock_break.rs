//! `claw-transcript lock break`: a transcript's write lock removed when the doctor would
//! remove it (stale, and not only too old), or with `--force` whatever holds it; only if
//! it is still the lock inspected (never one a writer has just taken). A forced removal
//! follows the live-gateway rule: the gateway may be the holder. And `lock status`, the
//! doctor's view of the locks it would break.

use std::path::PathBuf;

use serde::Serialize;

use crate::install::context::StateContext;
use crate::transcript::locks;
use crate::transcript::write_lock::{self, LockInspection};

use super::write_access::{live_gateway_rule, lock_settings};
use super::TranscriptOpError;

/// What `lock break` did (or would do, for a dry run).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LockBreakResult {
    /// The lock file.
    pub lock_path: String,
    /// Whether nothing was removed on purpose.
    pub dry_run: bool,
    /// Whether it was removed (false: it changed or vanished meanwhile, or a dry run).
    pub removed: bool,
    /// The lock as inspected (`lock status`'s row).
    pub lock: locks::LockReport,
}

/// Removes the write lock of `arg`'s transcript; `warn` receives warnings.
pub fn break_lock(
    ctx: &StateContext,
    arg: &str,
    force: bool,
    dry_run: bool,
    warn: &mut dyn FnMut(&str),
) -> Result<LockBreakResult, TranscriptOpError> {
    let s = crate::transcript::session::resolve(ctx, arg)
        .and_then(crate::transcript::session::SessionRef::for_writing)?;
    let lock = locks::lock_path_for(&s.path);
    if !lock.exists() {
        return Err(TranscriptOpError::NotLocked { lock });
    }
    let i = write_lock::inspect_lock(&lock, &lock_settings(ctx), ctx.now_ms)?;
    if !i.removable && !force {
        let why = if i.in_use {
            locks::in_use_text(&i)
        } else if i.is_stale() {
            format!("stale ({}) but its holder looks alive", i.reasons_string())
        } else {
            "held by a live process".to_string()
        };
        return Err(TranscriptOpError::LockHeld { lock, why });
    }
    if !i.removable {
        live_gateway_rule(ctx, dry_run, warn)?;
    }
    let removed = !dry_run && write_lock::remove_if_unchanged(&lock, &i)?;
    Ok(LockBreakResult {
        lock_path: lock.to_string_lossy().into_owned(),
        dry_run,
        removed,
        lock: locks::LockReport::of(&i),
    })
}

/// One lock file `lock status` looked at: its path and, when it exists, what it holds.
#[derive(Debug)]
pub struct LockStatus {
    /// The lock file.
    pub path: PathBuf,
    /// The doctor's view of it; `None` when there is no such file (not locked).
    pub inspection: Option<LockInspection>,
}

/// What `lock status` prints as JSON: the inspected locks (`lock status`'s rows).
#[derive(Debug, Clone, Serialize)]
pub struct LockStatusReport {
    /// One row per existing lock file.
    pub locks: Vec<locks::LockReport>,
}

/// The doctor's view of `session`'s transcript's lock, and with `all` of every
/// `*.jsonl.lock` of the selected agents; `warn` receives warnings.
pub fn lock_status(
    ctx: &StateContext,
    session: Option<&str>,
    all: bool,
    warn: &mut dyn FnMut(&str),
) -> Result<Vec<LockStatus>, TranscriptOpError> {
    let mut paths = Vec::new();
    if let Some(arg) = session {
        let s = crate::transcript::session::resolve(ctx, arg)?;
        if let Some(w) = s.foreign_warning() {
            warn(&w);
        }
        paths.push(locks::lock_path_for(&s.path));
    }
    if all {
        for t in ctx.targets()? {
            let dir = crate::store::transcript_path::TranscriptResolver::for_target(ctx, &t)
                .real_dir()
                .to_path_buf();
            let found = locks::lock_files_in(&dir).map_err(|source| TranscriptOpError::Io {
                path: dir.clone(),
                source,
            })?;
            paths.extend(found);
        }
    }
    let settings = lock_settings(ctx);
    paths
        .into_iter()
        .map(|path| {
            let inspection = if path.exists() {
                Some(write_lock::inspect_lock(&path, &settings, ctx.now_ms)?)
            } else {
                None
            };
            Ok(LockStatus { path, inspection })
        })
        .collect()
}
