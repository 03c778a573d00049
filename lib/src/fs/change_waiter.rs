//! Waiting for a database to change without busy polling: on Linux `poll(2)` on an inotify
//! watch of the database's directory (the main file, `-wal` and `-journal` are written on
//! every commit, so every commit wakes it); elsewhere, and with `CLAWSTATE_PORTABLE=1` (see
//! [`super::platform`]), a bounded sleep of [`POLL_INTERVAL`]. The waiter only says "look
//! now": the caller asks SQLite whether anything was committed (`PRAGMA data_version`).
//! Shared by the signal-log follower and the agent-database transcript follower.

#[cfg(target_os = "linux")]
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::time::Duration;

use thiserror::Error;

use crate::exit::{self, ExitCode};

/// How often the portable waiter (no inotify) says to look again.
pub const POLL_INTERVAL: Duration = Duration::from_millis(200);

/// The change notification could not be set up or failed.
#[derive(Debug, Error)]
#[error("{dir}: cannot watch for changes: {source}")]
pub struct WatchError {
    /// The watched directory.
    pub dir: PathBuf,
    /// The error.
    pub source: std::io::Error,
}

impl ExitCode for WatchError {
    fn exit_code(&self) -> i32 {
        exit::FAILURE
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
    pub fn new(db_path: &Path) -> Result<ChangeWaiter, WatchError> {
        let dir = db_path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
            .to_path_buf();
        #[cfg(target_os = "linux")]
        if crate::fs::platform::linux_specific() {
            let fd = inotify_watch(&dir).map_err(|source| WatchError {
                dir: dir.clone(),
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
    pub fn wait(&mut self, timeout: Duration) -> Result<bool, WatchError> {
        #[cfg(target_os = "linux")]
        if let Some(fd) = &self.fd {
            return inotify_wait(fd, timeout).map_err(|source| WatchError {
                dir: self.dir.clone(),
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
