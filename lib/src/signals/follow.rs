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

use std::collections::HashMap;
#[cfg(target_os = "linux")]
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use thiserror::Error;

use super::db::{DbError, StateDb};
use super::notice::Notice;
use super::notices::{self, NoticeError};
use crate::exit::{self, ExitCode};

/// How often the follower re-checks `data_version` without a notification, by default.
pub const SAFETY_TICK: Duration = Duration::from_secs(2);

/// How often the portable follower (no inotify) re-checks `data_version`.
pub const POLL_INTERVAL: Duration = Duration::from_millis(200);

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

/// Wakes up when a file of the database may have changed: on an inotify event on its
/// directory (Linux), or every [`POLL_INTERVAL`] (the portable fallback).
#[derive(Debug)]
pub struct ChangeWaiter {
    #[cfg(target_os = "linux")]
    fd: Option<OwnedFd>,
    dir: PathBuf,
}

impl ChangeWaiter {
    /// Watches the directory of `db_path` for writes, creations and renames (inotify),
    /// or polls where inotify is not used ([`crate::fs::platform::linux_specific`]).
    pub fn new(db_path: &Path) -> Result<ChangeWaiter, FollowError> {
        let dir = db_path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
            .to_path_buf();
        #[cfg(target_os = "linux")]
        if crate::fs::platform::linux_specific() {
            let fd = inotify_watch(&dir).map_err(|source| FollowError::Watch {
                path: dir.clone(),
                source,
            })?;
            return Ok(ChangeWaiter { fd: Some(fd), dir });
        }
        Ok(ChangeWaiter::polling(dir))
    }

    /// The portable waiter: every wait ends after at most [`POLL_INTERVAL`].
    fn polling(dir: PathBuf) -> ChangeWaiter {
        ChangeWaiter {
            #[cfg(target_os = "linux")]
            fd: None,
            dir,
        }
    }

    /// Blocks until a change notification or `timeout`; returns whether one arrived (the
    /// polling waiter sleeps at most [`POLL_INTERVAL`] and says a change may have come).
    pub fn wait(&mut self, timeout: Duration) -> Result<bool, FollowError> {
        #[cfg(target_os = "linux")]
        if let Some(fd) = &self.fd {
            return inotify_wait(fd, timeout).map_err(|source| FollowError::Watch {
                path: self.dir.clone(),
                source,
            });
        }
        std::thread::sleep(timeout.min(POLL_INTERVAL));
        Ok(true)
    }
}

/// An inotify descriptor watching `dir` for writes, creations, renames and removals.
#[cfg(target_os = "linux")]
fn inotify_watch(dir: &Path) -> std::io::Result<OwnedFd> {
    use std::os::unix::ffi::OsStrExt;
    // SAFETY: inotify_init1 has no preconditions; a negative result is checked.
    let raw = unsafe { libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC) };
    if raw < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `raw` is a fresh descriptor that nothing else owns.
    let fd = unsafe { OwnedFd::from_raw_fd(raw) };
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes()).map_err(std::io::Error::other)?;
    let mask = libc::IN_MODIFY
        | libc::IN_CLOSE_WRITE
        | libc::IN_CREATE
        | libc::IN_MOVED_TO
        | libc::IN_DELETE;
    // SAFETY: the descriptor is valid and `c` NUL-terminated.
    if unsafe { libc::inotify_add_watch(fd.as_raw_fd(), c.as_ptr(), mask) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(fd)
}

/// Waits up to `timeout` for an inotify event on `fd` and drains the queue.
#[cfg(target_os = "linux")]
fn inotify_wait(fd: &OwnedFd, timeout: Duration) -> std::io::Result<bool> {
    let mut pfd = libc::pollfd {
        fd: fd.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    let ms = timeout.as_millis().min(i32::MAX as u128) as i32;
    // SAFETY: one valid pollfd.
    let n = unsafe { libc::poll(&mut pfd, 1, ms) };
    if n < 0 {
        let e = std::io::Error::last_os_error();
        if e.kind() == std::io::ErrorKind::Interrupted {
            return Ok(false);
        }
        return Err(e);
    }
    if n == 0 {
        return Ok(false);
    }
    // Drain the queued events; which file changed does not matter.
    let mut buf = [0u8; 4096];
    loop {
        // SAFETY: reading into a local buffer of the given length.
        let r = unsafe { libc::read(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
        if r <= 0 {
            break;
        }
    }
    Ok(true)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_polling_waiter_says_look_after_one_interval() {
        let d = tempfile::tempdir().unwrap();
        let mut w = ChangeWaiter::polling(d.path().to_path_buf());
        // No event can come: a wait of an hour still ends (after one interval), saying a
        // change may have come, so the follower asks data_version.
        assert!(w.wait(Duration::from_secs(3600)).unwrap());
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn the_inotify_waiter_wakes_on_a_write_only() {
        let d = tempfile::tempdir().unwrap();
        let db = d.path().join("openclaw.sqlite");
        let fd = inotify_watch(d.path()).unwrap();
        assert!(!inotify_wait(&fd, Duration::ZERO).unwrap());
        std::fs::write(&db, b"x").unwrap();
        assert!(inotify_wait(&fd, Duration::from_secs(3600)).unwrap());
        assert!(!inotify_wait(&fd, Duration::ZERO).unwrap(), "drained");
    }
}
