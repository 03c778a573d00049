//! Why `finish` failed, with its exit code; the directory of 9.6's run manifests.

use crate::agent_db::AgentDbError;
use crate::exit::{self, ExitCode};
use crate::fs::data_file::DataFileError;
use crate::migrate::plan::{self};
use std::path::PathBuf;
use thiserror::Error;

/// The directory of 9.6's run manifests under the state dir.
pub const RUNS_DIR: &str = "session-sqlite-migration-runs";

/// A failure of `finish`.
#[derive(Debug, Error)]
pub enum FinishError {
    /// The agent database could not be read.
    #[error(transparent)]
    Db(#[from] AgentDbError),
    /// A file could not be read.
    #[error(transparent)]
    File(#[from] DataFileError),
    /// A plan step failed.
    #[error(transparent)]
    Plan(#[from] plan::PlanError),
    /// Re-importing an archived transcript failed (nothing was written).
    #[error(transparent)]
    Import(#[from] crate::migrate::import::ImportError),
    /// A move or a write failed.
    #[error("{path}: {what}: {source}")]
    Write {
        /// The file.
        path: PathBuf,
        /// What was being done.
        what: &'static str,
        /// The I/O error.
        source: std::io::Error,
    },
}

impl ExitCode for FinishError {
    fn exit_code(&self) -> i32 {
        match self {
            FinishError::Db(e) => e.exit_code(),
            FinishError::File(e) => e.exit_code(),
            FinishError::Plan(e) => e.exit_code(),
            FinishError::Import(e) => e.exit_code(),
            FinishError::Write { .. } => exit::CANT_CREATE,
        }
    }
}
