//! Why a transcript command failed, with the exit code each failure maps to.

use std::path::PathBuf;

use thiserror::Error;

use crate::exit::{self, ExitCode};

/// Why a transcript command failed; nothing was written unless the message says so.
#[derive(Debug, Error)]
pub enum TranscriptOpError {
    /// The `SESSION` argument did not resolve, or may not be written.
    #[error(transparent)]
    Session(#[from] crate::transcript::session::SessionError),
    /// The live-gateway rule refused the write.
    #[error(transparent)]
    Ops(#[from] crate::ops::session_ops::OpsError),
    /// `--via-gateway` asked for a write the gateway's RPC does not have.
    #[error(transparent)]
    Delegation(#[from] crate::ops::delegation::DelegationError),
    /// The transcript write lock stayed held, or could not be taken.
    #[error(transparent)]
    WriteLock(#[from] crate::transcript::write_lock::WriteLockError),
    /// The transcript (or its copy) could not be opened or read.
    #[error(transparent)]
    File(#[from] crate::fs::data_file::DataFileError),
    /// The atomic replacement failed (the transcript is unchanged).
    #[error(transparent)]
    Replace(#[from] crate::fs::atomic_file::AtomicWriteError),
    /// The agents to work on could not be resolved.
    #[error(transparent)]
    Targets(#[from] crate::install::targets::TargetError),
    /// The appender refused or failed.
    #[error(transparent)]
    Append(#[from] crate::transcript::append::AppendError),
    /// A transcript could not be read.
    #[error(transparent)]
    Read(#[from] crate::transcript::reader::ReadError),
    /// Checking a store's transcripts failed.
    #[error(transparent)]
    CheckAll(#[from] crate::transcript::check_all::CheckAllError),
    /// Reading a directory failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The directory.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// There is no lock to break.
    #[error("{}: not locked", lock.display())]
    NotLocked {
        /// The lock file.
        lock: PathBuf,
    },
    /// The lock's holder looks alive and legitimate (`--force` removes it anyway).
    #[error("{}: {why}; not removed (use --force to remove it anyway)", lock.display())]
    LockHeld {
        /// The lock file.
        lock: PathBuf,
        /// Why it may not be removed.
        why: String,
    },
    /// Writing a file failed.
    #[error("{}: {source}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// A header recovery's copy of the original would overwrite a file.
    #[error("{}: already exists", path.display())]
    CopyExists {
        /// The copy's path.
        path: PathBuf,
    },
    /// Lines that are not JSON, which a rewrite would drop.
    #[error("{}:{line}: {count} line(s) are not JSON and a rewrite would drop them; run `repair` first", path.display())]
    NotJson {
        /// The transcript.
        path: PathBuf,
        /// The first such line.
        line: usize,
        /// How many there are.
        count: usize,
    },
}

impl ExitCode for TranscriptOpError {
    fn exit_code(&self) -> i32 {
        match self {
            TranscriptOpError::Session(e) => e.exit_code(),
            TranscriptOpError::Ops(e) => e.exit_code(),
            TranscriptOpError::Delegation(e) => e.exit_code(),
            TranscriptOpError::WriteLock(e) => e.exit_code(),
            TranscriptOpError::File(e) => e.exit_code(),
            TranscriptOpError::Replace(e) => e.exit_code(),
            TranscriptOpError::Write { .. } | TranscriptOpError::CopyExists { .. } => {
                exit::CANT_CREATE
            }
            TranscriptOpError::NotJson { .. } => exit::DATA_ERR,
            TranscriptOpError::Targets(e) => e.exit_code(),
            TranscriptOpError::Read(e) => e.exit_code(),
            TranscriptOpError::CheckAll(e) => e.exit_code(),
            TranscriptOpError::Append(e) => e.exit_code(),
            TranscriptOpError::Io { .. } => exit::FAILURE,
            TranscriptOpError::NotLocked { .. } => exit::NOT_FOUND,
            TranscriptOpError::LockHeld { .. } => exit::TEMP_FAIL,
        }
    }
}
