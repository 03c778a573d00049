//! Why an import failed, with the exit code each failure carries.

use crate::exit::{self, ExitCode};
use std::path::{Path, PathBuf};
use thiserror::Error;

/// Why an import failed.
#[derive(Debug, Error)]
pub enum ImportError {
    /// A legacy or state file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What failed.
        source: std::io::Error,
    },
    /// A file named by data could not be opened safely.
    #[error(transparent)]
    File(#[from] crate::fs::data_file::DataFileError),
    /// A legacy file is not what 9.6 can import.
    #[error("{path}: {what}")]
    Malformed {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        what: String,
    },
    /// Something could not be written.
    #[error("{path}: {what}")]
    Write {
        /// The file.
        path: PathBuf,
        /// What failed.
        what: String,
    },
    /// SQLite failed.
    #[error("{path}: {source}")]
    Sqlite {
        /// The database.
        path: PathBuf,
        /// What SQLite said.
        source: rusqlite::Error,
    },
    /// The agent already has a database this import does not know or will not merge into.
    #[error("{path}: {what}")]
    ExistingDb {
        /// The database.
        path: PathBuf,
        /// What is there.
        what: String,
        /// Whether its schema is unknown (65) rather than merely present (73).
        unknown: bool,
    },
    /// Another import holds the state dir's import lock.
    #[error("{path}: another claw-migrate import is running on this state dir")]
    Busy {
        /// The lock file.
        path: PathBuf,
    },
    /// A gateway is running on the state dir.
    #[error("a gateway is running on {state_dir} ({owner}): stop it first; it imports the legacy files itself at startup")]
    LiveGateway {
        /// The state dir.
        state_dir: PathBuf,
        /// Who.
        owner: String,
    },
}

impl ImportError {
    pub(super) fn io(path: &Path, source: std::io::Error) -> Self {
        ImportError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
    pub(super) fn file(e: crate::fs::data_file::DataFileError) -> Self {
        ImportError::File(e)
    }
    pub(super) fn sqlite(path: &Path) -> impl FnOnce(rusqlite::Error) -> ImportError + '_ {
        move |source| ImportError::Sqlite {
            path: path.to_path_buf(),
            source,
        }
    }
}

impl ExitCode for ImportError {
    fn exit_code(&self) -> i32 {
        match self {
            ImportError::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
                exit::NOT_FOUND
            }
            ImportError::Io { .. } | ImportError::Write { .. } => exit::CANT_CREATE,
            ImportError::File(e) => e.exit_code(),
            ImportError::Malformed { .. } => exit::DATA_ERR,
            ImportError::Sqlite { source, .. } => match source.sqlite_error_code() {
                Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked) => {
                    exit::TEMP_FAIL
                }
                _ => exit::CANT_CREATE,
            },
            ImportError::ExistingDb { unknown, .. } => {
                if *unknown {
                    exit::DATA_ERR
                } else {
                    exit::CANT_CREATE
                }
            }
            ImportError::LiveGateway { .. } | ImportError::Busy { .. } => exit::TEMP_FAIL,
        }
    }
}
