//! The advisory lock that serialises clawstate writers of one store (spec README,
//! decision 3).
//!
//! The lock file is never the store itself (the store is replaced by rename) and never
//! lives in the sessions directory (cleanup counts every file there): it is
//! `<tmpdir>/clawstate-<uid>/store-<16 hex of sha256(real store path)>.lock`, locked
//! exclusively with `File::lock` for the whole read-modify-write.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use thiserror::Error;

use crate::exit::{self, ExitCode};

/// A failure to take the store lock.
#[derive(Debug, Error)]
pub enum StoreLockError {
    /// Another clawstate process holds the lock and waiting was not allowed.
    #[error("{store}: another clawstate process is writing this store (lock {lock})")]
    Busy {
        /// The store.
        store: PathBuf,
        /// The lock file.
        lock: PathBuf,
    },
    /// The lock file could not be created or locked.
    #[error("{lock}: cannot lock: {source}")]
    Io {
        /// The lock file.
        lock: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
}

impl ExitCode for StoreLockError {
    fn exit_code(&self) -> i32 {
        match self {
            StoreLockError::Busy { .. } => exit::TEMP_FAIL,
            StoreLockError::Io { .. } => exit::CANT_CREATE,
        }
    }
}

/// How to behave when the lock is held by someone else.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockWait {
    /// Fail at once with [`StoreLockError::Busy`].
    NoWait,
    /// Block until the holder releases it.
    Block,
}

/// A held store lock; released when dropped (or when the process dies).
#[derive(Debug)]
pub struct StoreLock {
    file: File,
    path: PathBuf,
}

/// The real path of a store that may not exist yet: realpath of the file, else of its
/// directory joined with the file name, else the path as given.
pub fn real_store_path(store: &Path) -> PathBuf {
    if let Ok(p) = std::fs::canonicalize(store) {
        return p;
    }
    match (store.parent(), store.file_name()) {
        (Some(dir), Some(name)) => std::fs::canonicalize(dir)
            .map(|d| d.join(name))
            .unwrap_or_else(|_| store.to_path_buf()),
        _ => store.to_path_buf(),
    }
}

/// The directory holding clawstate's lock files: `<tmpdir>/clawstate-<uid>`.
pub fn lock_dir() -> PathBuf {
    // SAFETY: getuid has no preconditions and cannot fail.
    let uid = unsafe { libc::getuid() };
    std::env::temp_dir().join(format!("clawstate-{uid}"))
}

/// The lock file for `store`.
pub fn lock_path_for(store: &Path) -> PathBuf {
    let real = real_store_path(store);
    let digest = Sha256::digest(real.as_os_str().as_encoded_bytes());
    let hex: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
    lock_dir().join(format!("store-{hex}.lock"))
}

impl StoreLock {
    /// Takes the exclusive lock for `store`. `on_wait` runs once if the lock is held and
    /// the call is about to block (to tell the user why nothing happens).
    pub fn acquire(
        store: &Path,
        wait: LockWait,
        on_wait: impl FnOnce(),
    ) -> Result<StoreLock, StoreLockError> {
        let path = lock_path_for(store);
        let io = |source| StoreLockError::Io {
            lock: path.clone(),
            source,
        };
        if let Some(dir) = path.parent() {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)
                .map_err(io)?;
        }
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&path)
            .map_err(io)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => match wait {
                LockWait::NoWait => {
                    return Err(StoreLockError::Busy {
                        store: store.to_path_buf(),
                        lock: path,
                    })
                }
                LockWait::Block => {
                    on_wait();
                    file.lock().map_err(io)?;
                }
            },
            Err(std::fs::TryLockError::Error(e)) => return Err(io(e)),
        }
        Ok(StoreLock { file, path })
    }

    /// The lock file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for StoreLock {
    fn drop(&mut self) {
        let _ = self.file.unlock();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_holder_is_busy_until_release() {
        let d = tempfile::tempdir().unwrap();
        let store = d.path().join("sessions.json");
        let first = StoreLock::acquire(&store, LockWait::NoWait, || {}).unwrap();
        assert!(!first.path().starts_with(d.path()));
        let busy = StoreLock::acquire(&store, LockWait::NoWait, || {}).unwrap_err();
        assert_eq!(busy.exit_code(), exit::TEMP_FAIL);
        drop(first);
        StoreLock::acquire(&store, LockWait::NoWait, || {}).unwrap();
    }

    #[test]
    fn same_real_path_same_lock() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir(d.path().join("a")).unwrap();
        let direct = d.path().join("a/sessions.json");
        let indirect = d.path().join("a/../a/sessions.json");
        assert_eq!(lock_path_for(&direct), lock_path_for(&indirect));
    }
}
