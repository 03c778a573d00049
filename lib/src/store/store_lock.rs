//! The advisory lock that serialises clawstate writers of one store.
//!
//! The lock is `flock(LOCK_EX)` on the store's directory itself, held for the whole
//! read-modify-write. A directory is one inode however it is reached, so writers whose
//! environments differ (cron's `TMPDIR` and a shell's, systemd's `PrivateTmp`, a symlinked
//! state dir, root and the owner) lock the same thing, and there is no lock file: nothing
//! another user can pre-create, redirect or delete, and nothing in the sessions directory
//! for cleanup to count (the gateway counts every regular file there in `scannedFiles`, and
//! cleanup output must stay identical). The kernel drops the lock with the descriptor, so a
//! killed writer never leaves it behind. Opening the directory needs the right to read it:
//! a user who has that can make writers wait, never lose an update, and a directory
//! clawstate creates for a store is 0700.
//!
//! Two stores in one directory share the lock; within one thread it is re-entrant, so a
//! cleanup of both holds it once. A busy lock is waited for, polling, up to a timeout (60 s
//! by default, the gateway's own acquire timeout), then given up with exit 75 naming the
//! store. (Spec README, decision 3, describes the first design, a lock file under
//! `$TMPDIR/clawstate-<uid>/`: it depended on the environment and on a directory any local
//! user could create first.)

use std::fs::{File, OpenOptions};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};
use std::thread::ThreadId;
use std::time::{Duration, Instant};

use thiserror::Error;

use crate::exit::{self, ExitCode};

/// A failure to take the store lock.
#[derive(Debug, Error)]
pub enum StoreLockError {
    /// Another clawstate process held the lock for as long as we could wait.
    #[error("{store}: another clawstate process is writing this store{}", gave_up_after(*.waited))]
    Busy {
        /// The store.
        store: PathBuf,
        /// How long we waited (zero: not at all).
        waited: Duration,
    },
    /// The store's directory could not be created, opened or locked.
    #[error("{dir}: cannot lock the store's directory: {source}")]
    Io {
        /// The directory.
        dir: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The store's agent keeps its sessions in the agent database, which clawstate does
    /// not write (every store writer takes this lock first, so all of them refuse here).
    #[error(transparent)]
    AgentDb(#[from] crate::agent_db::AgentDbError),
}

impl ExitCode for StoreLockError {
    fn exit_code(&self) -> i32 {
        match self {
            StoreLockError::AgentDb(e) => e.exit_code(),
            StoreLockError::Busy { .. } => exit::TEMP_FAIL,
            StoreLockError::Io { .. } => exit::CANT_CREATE,
        }
    }
}

fn gave_up_after(waited: Duration) -> String {
    if waited.is_zero() {
        String::new()
    } else {
        format!(" (gave up after {})", seconds(waited))
    }
}

/// `60 s`, or `250 ms` below a second.
fn seconds(d: Duration) -> String {
    if d.subsec_nanos() == 0 || d >= Duration::from_secs(10) {
        format!("{} s", d.as_secs())
    } else if d < Duration::from_secs(1) {
        format!("{} ms", d.as_millis())
    } else {
        format!("{:.1} s", d.as_secs_f64())
    }
}

/// What a writer is waiting for, given to [`LockWait::announce`] once when the wait starts;
/// it displays as the message for the user.
#[derive(Debug)]
pub struct Waiting<'a> {
    /// The store, as the caller named it.
    pub store: &'a Path,
    /// The longest the wait will last.
    pub timeout: Duration,
}

impl std::fmt::Display for Waiting<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "waiting for another clawstate process writing {} (up to {})",
            self.store.display(),
            seconds(self.timeout)
        )
    }
}

/// How long to wait for a lock another process holds, and how to say that we wait.
#[derive(Debug, Clone, Copy)]
pub struct LockWait {
    /// The longest wait; zero gives up at once.
    pub timeout: Duration,
    /// Called once when a wait starts (to tell the user why nothing happens).
    pub announce: fn(&Waiting<'_>),
}

impl LockWait {
    /// The default timeout, the gateway's own `session.writeLock.acquireTimeoutMs`.
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

    /// Wait up to `timeout`, silently.
    pub fn up_to(timeout: Duration) -> LockWait {
        LockWait {
            timeout,
            announce: |_| {},
        }
    }

    /// Give up at once.
    pub fn no_wait() -> LockWait {
        LockWait::up_to(Duration::ZERO)
    }

    /// The same policy, calling `announce` when a wait starts.
    pub fn announcing(self, announce: fn(&Waiting<'_>)) -> LockWait {
        LockWait { announce, ..self }
    }
}

impl Default for LockWait {
    fn default() -> Self {
        LockWait::up_to(LockWait::DEFAULT_TIMEOUT)
    }
}

/// The first pause between two attempts while waiting; it doubles up to [`MAX_PAUSE`].
const FIRST_PAUSE: Duration = Duration::from_millis(10);
/// The longest pause between two attempts.
const MAX_PAUSE: Duration = Duration::from_millis(200);

/// A locked directory: its device, inode and the thread that holds it.
type DirKey = (u64, u64, ThreadId);

/// One locked directory descriptor, shared by the thread's locks on that directory.
#[must_use = "the directory lock is released when this is dropped"]
#[derive(Debug)]
struct LockedDir {
    file: File,
    key: DirKey,
}

/// The directories each thread holds, so that its second lock on one shares the first.
static HELD: Mutex<Vec<(DirKey, Weak<LockedDir>)>> = Mutex::new(Vec::new());

fn held() -> std::sync::MutexGuard<'static, Vec<(DirKey, Weak<LockedDir>)>> {
    HELD.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Drop for LockedDir {
    fn drop(&mut self) {
        let _ = self.file.unlock();
        held().retain(|(key, w)| *key != self.key || w.strong_count() > 0);
    }
}

/// A held store lock; released when dropped (or when the process dies).
#[must_use = "the store lock is released when this guard is dropped"]
#[derive(Debug)]
pub struct StoreLock {
    /// Kept for its drop, the release.
    _locked: Arc<LockedDir>,
    dir: PathBuf,
}

/// The directory whose lock serialises writers of `store`.
pub fn store_dir(store: &Path) -> PathBuf {
    match store.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Opens `dir` to lock it (read-only, as a directory, close-on-exec), creating it 0700
/// first if it is missing.
fn open_dir(dir: &Path) -> std::io::Result<File> {
    let open = || {
        OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_DIRECTORY | libc::O_CLOEXEC)
            .open(dir)
    };
    match open() {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)?;
            open()
        }
        other => other,
    }
}

impl StoreLock {
    /// Takes the exclusive lock for `store`, waiting as `wait` says.
    #[must_use = "the store lock is released when the returned guard is dropped"]
    pub fn acquire(store: &Path, wait: LockWait) -> Result<StoreLock, StoreLockError> {
        crate::agent_db::layout::refuse_write(store, "a write of the session store")?;
        let dir = store_dir(store);
        let io = |source| StoreLockError::Io {
            dir: dir.clone(),
            source,
        };
        let started = Instant::now();
        let mut pause = FIRST_PAUSE;
        let mut announced = false;
        loop {
            let file = open_dir(&dir).map_err(io)?;
            let meta = file.metadata().map_err(io)?;
            let key = (meta.dev(), meta.ino(), std::thread::current().id());
            if let Some(locked) = held()
                .iter()
                .find(|(k, _)| *k == key)
                .and_then(|(_, w)| w.upgrade())
            {
                return Ok(StoreLock {
                    _locked: locked,
                    dir,
                });
            }
            match file.try_lock() {
                Ok(()) => {
                    // The path may have been renamed away from the directory we locked.
                    let now = std::fs::metadata(&dir).map_err(io)?;
                    if (now.dev(), now.ino()) == (meta.dev(), meta.ino()) {
                        let locked = Arc::new(LockedDir { file, key });
                        held().push((key, Arc::downgrade(&locked)));
                        return Ok(StoreLock {
                            _locked: locked,
                            dir,
                        });
                    }
                }
                Err(std::fs::TryLockError::WouldBlock) => {}
                Err(std::fs::TryLockError::Error(e)) => return Err(io(e)),
            }
            let waited = started.elapsed();
            if waited >= wait.timeout {
                return Err(StoreLockError::Busy {
                    store: store.to_path_buf(),
                    waited: wait.timeout,
                });
            }
            if !announced {
                (wait.announce)(&Waiting {
                    store,
                    timeout: wait.timeout,
                });
                announced = true;
            }
            std::thread::sleep(pause.min(wait.timeout - waited));
            pause = (pause * 2).min(MAX_PAUSE);
        }
    }

    /// The locked directory, as the store's path names it.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn in_another_thread<T: Send>(f: impl FnOnce() -> T + Send) -> T {
        std::thread::scope(|s| s.spawn(f).join().unwrap())
    }

    #[test]
    fn another_holder_is_busy_until_release() {
        let d = tempfile::tempdir().unwrap();
        let store = d.path().join("sessions.json");
        let first = StoreLock::acquire(&store, LockWait::no_wait()).unwrap();
        assert_eq!(first.dir(), d.path());
        let busy =
            in_another_thread(|| StoreLock::acquire(&store, LockWait::no_wait())).unwrap_err();
        assert_eq!(busy.exit_code(), exit::TEMP_FAIL);
        assert_eq!(
            busy.to_string(),
            format!(
                "{}: another clawstate process is writing this store",
                store.display()
            )
        );
        drop(first);
        drop(in_another_thread(|| StoreLock::acquire(&store, LockWait::no_wait())).unwrap());
    }

    #[test]
    fn one_directory_one_lock_whatever_the_path() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir(d.path().join("a")).unwrap();
        std::os::unix::fs::symlink(d.path().join("a"), d.path().join("link")).unwrap();
        let _held =
            StoreLock::acquire(&d.path().join("a/sessions.json"), LockWait::no_wait()).unwrap();
        for other in ["a/../a/sessions.json", "link/sessions.json", "a/work.json"] {
            let store = d.path().join(other);
            let r = in_another_thread(|| StoreLock::acquire(&store, LockWait::no_wait()));
            assert!(matches!(r, Err(StoreLockError::Busy { .. })), "{other}");
        }
    }

    #[test]
    fn the_holding_thread_takes_it_again_and_keeps_it_until_the_last_release() {
        let d = tempfile::tempdir().unwrap();
        let first = StoreLock::acquire(&d.path().join("main.json"), LockWait::no_wait()).unwrap();
        let second = StoreLock::acquire(&d.path().join("work.json"), LockWait::no_wait()).unwrap();
        drop(first);
        let store = d.path().join("main.json");
        assert!(
            in_another_thread(|| StoreLock::acquire(&store, LockWait::no_wait())).is_err(),
            "still held by the second"
        );
        drop(second);
        drop(in_another_thread(|| StoreLock::acquire(&store, LockWait::no_wait())).unwrap());
        drop(StoreLock::acquire(&store, LockWait::no_wait()).unwrap());
    }

    #[test]
    fn a_wait_announces_itself_once_then_gives_up() {
        static ANNOUNCED: Mutex<Vec<String>> = Mutex::new(Vec::new());
        let d = tempfile::tempdir().unwrap();
        let store = d.path().join("sessions.json");
        let _held = StoreLock::acquire(&store, LockWait::no_wait()).unwrap();
        let wait = LockWait::up_to(Duration::from_millis(50))
            .announcing(|w| ANNOUNCED.lock().unwrap().push(w.to_string()));
        let err = in_another_thread(|| StoreLock::acquire(&store, wait)).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "{}: another clawstate process is writing this store (gave up after 50 ms)",
                store.display()
            )
        );
        assert_eq!(
            *ANNOUNCED.lock().unwrap(),
            vec![format!(
                "waiting for another clawstate process writing {} (up to 50 ms)",
                store.display()
            )]
        );
    }

    #[test]
    fn a_waiter_gets_the_lock_once_it_is_released() {
        let d = tempfile::tempdir().unwrap();
        let store = d.path().join("sessions.json");
        let held = StoreLock::acquire(&store, LockWait::no_wait()).unwrap();
        std::thread::scope(|s| {
            let waiter = s.spawn(|| StoreLock::acquire(&store, LockWait::up_to(Duration::MAX)));
            drop(held);
            drop(waiter.join().unwrap().unwrap());
        });
    }

    #[test]
    fn a_missing_directory_is_created_0700() {
        let d = tempfile::tempdir().unwrap();
        let store = d.path().join("new/sessions/sessions.json");
        let _held = StoreLock::acquire(&store, LockWait::no_wait()).unwrap();
        let mode = std::fs::metadata(d.path().join("new/sessions"))
            .unwrap()
            .mode();
        assert_eq!(mode & 0o777, 0o700);
        assert_eq!(
            std::fs::read_dir(d.path().join("new/sessions"))
                .unwrap()
                .count(),
            0
        );
    }

    #[test]
    fn seconds_read_naturally() {
        assert_eq!(seconds(Duration::from_secs(60)), "60 s");
        assert_eq!(seconds(Duration::from_millis(250)), "250 ms");
        assert_eq!(seconds(Duration::from_millis(1500)), "1.5 s");
    }
}
