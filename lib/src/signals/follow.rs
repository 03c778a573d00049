//! Cross-process notices (what OpenClaw v1 lacks, signals spec §4.8): a long-running
//! stream of the notices that become pending as any process records events.
//!
//! No busy polling on Linux: the follower sleeps in `poll(2)` on an inotify watch of the
//! database's directory (the main file, `-wal` and `-journal` are written on every commit)
//! and, when woken, asks SQLite whether anything was committed (`PRAGMA data_version`,
//! which changes only when another connection commits) before it reads the cursors. A slow
//! safety tick re-checks `data_version` in case a notification was missed (e.g. an unusual
//! filesystem). Elsewhere (and with `CLAWSTATE_PORTABLE=1`, see [`crate::fs::platform`]) the
//! follower asks `data_version` every [`POLL_INTERVAL`] instead: one cheap read, no event.
//! The waiting itself is [`crate::fs::change_waiter`].

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use thiserror::Error;

use super::db::{DbError, StateDb};
use super::notice::Notice;
use super::notices::{self, NoticeError};
use crate::exit::{self, ExitCode};
use crate::fs::change_waiter::{ChangeWaiter, WatchError};

/// How often the follower re-checks `data_version` without a notification, by default.
pub const SAFETY_TICK: Duration = Duration::from_secs(2);

/// How often the portable follower (no inotify) re-checks `data_version`.
pub use crate::fs::change_waiter::POLL_INTERVAL;

/// Why following stopped.
#[derive(Debug, Error)]
pub enum FollowError {
    /// The database failed.
    #[error(transparent)]
    Db(#[from] DbError),
    /// Reading or acknowledging notices failed.
    #[error(transparent)]
    Notice(#[from] NoticeError),
    /// The change notification could not be set up.
    #[error("{path}: cannot watch for changes: {source}")]
    Watch {
        /// The watched directory.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// The output consumer failed (e.g. a closed pipe).
    #[error("{0}")]
    Output(String),
}

impl From<WatchError> for FollowError {
    fn from(e: WatchError) -> FollowError {
        FollowError::Watch {
            path: e.dir,
            source: e.source,
        }
    }
}

impl ExitCode for FollowError {
    fn exit_code(&self) -> i32 {
        match self {
            FollowError::Db(e) => e.exit_code(),
            FollowError::Notice(e) => e.exit_code(),
            FollowError::Watch { .. } => exit::FAILURE,
            FollowError::Output(_) => exit::FAILURE,
        }
    }
}

/// How to follow.
#[derive(Debug, Clone, Default)]
pub struct FollowOptions {
    /// Only these watchers (empty: all).
    pub watchers: Vec<String>,
    /// Acknowledge each notice once emitted (drain semantics), so follow-ups appear.
    pub drain: bool,
    /// Stop at this instant (`None`: until interrupted).
    pub until: Option<Instant>,
    /// Emit the notices already pending at start (default true in the CLI).
    pub include_existing: bool,
    /// Re-check without a notification this often ([`SAFETY_TICK`] by default; shorter on
    /// filesystems where inotify misses other hosts' writes, e.g. NFS).
    pub safety_tick: Duration,
    /// Where the watchers' session stores are (schema 18: only notices of cursors of the
    /// current store reach a watcher); `None`: beside the database's state dir.
    pub stores: Option<super::watcher_stores::WatcherStores>,
}

/// Streams notices: each pending (watcher, target, changesSince) is emitted exactly once
/// while it stays pending; a new notice for the pair (a follow-up, or pending again after
/// an acknowledgement) is emitted again. `now` gives the clock for acknowledgements.
pub fn follow(
    db_path: &Path,
    opts: &FollowOptions,
    now: impl Fn() -> i64,
    mut emit: impl FnMut(&Notice) -> Result<(), String>,
) -> Result<(), FollowError> {
    let mut waiter = ChangeWaiter::new(db_path)?;
    // Wait for the database to appear (its directory must exist).
    while !db_path.exists() {
        if expired(opts.until) {
            return Ok(());
        }
        waiter.wait(remaining(opts.until, opts.safety_tick))?;
    }
    let mut reader = StateDb::open_read(db_path)?;
    if let Some(s) = &opts.stores {
        reader.set_watcher_stores(s.clone());
    }
    let mut writer: Option<StateDb> = None;
    let mut emitted: HashMap<(String, String), i64> = HashMap::new();
    let mut first = true;
    let mut seen_version = None;
    loop {
        let version = reader.data_version()?;
        if seen_version != Some(version) {
            seen_version = Some(version);
            let pending = notices::pending(&mut reader, &opts.watchers, |_| None)?;
            let mut still: HashMap<(String, String), i64> = HashMap::new();
            let mut to_ack: Vec<Notice> = Vec::new();
            for n in pending {
                let pair = (n.watcher_session_key.clone(), n.target_session_key.clone());
                let fresh = emitted.get(&pair) != Some(&n.last_seen_sequence);
                if fresh && (!first || opts.include_existing) {
                    emit(&n).map_err(FollowError::Output)?;
                    if opts.drain {
                        to_ack.push(n.clone());
                    }
                }
                still.insert(pair, n.last_seen_sequence);
            }
            emitted = still;
            first = false;
            if !to_ack.is_empty() {
                let w = match &mut writer {
                    Some(w) => w,
                    None => {
                        let mut w = StateDb::open_write(db_path)?;
                        if let Some(s) = &opts.stores {
                            w.set_watcher_stores(s.clone());
                        }
                        writer.insert(w)
                    }
                };
                let mut by_watcher: HashMap<&str, Vec<String>> = HashMap::new();
                for n in &to_ack {
                    by_watcher
                        .entry(n.watcher_session_key.as_str())
                        .or_default()
                        .push(n.target_session_key.clone());
                }
                for (watcher, targets) in by_watcher {
                    notices::drain(w, watcher, &targets, now())?;
                }
                // Our own commit changes data_version for the reader: rescan at once.
                continue;
            }
        }
        if expired(opts.until) {
            return Ok(());
        }
        waiter.wait(remaining(opts.until, opts.safety_tick))?;
    }
}

fn expired(until: Option<Instant>) -> bool {
    until.is_some_and(|u| Instant::now() >= u)
}

fn remaining(until: Option<Instant>, cap: Duration) -> Duration {
    match until {
        Some(u) => u.saturating_duration_since(Instant::now()).min(cap),
        None => cap,
    }
}
