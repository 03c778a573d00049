//! The one sequence of every transcript rewrite: take the write lock (the gateway's
//! `acquireSessionWriteLock`; none for a dry run, which must not disturb a writer), read
//! the file under it, let the command decide, then write what it decided: a header
//! recovery's original kept first as a new file (never over an existing one), then the
//! transcript replaced atomically with its mode kept, or cut to a length in place. The lock
//! is released after the write, so a gateway never reads a half-decided state.

use crate::fs::data_file::DataPath;
use crate::install::context::StateContext;
use crate::transcript::session::SessionRef;
use crate::transcript::write_lock::{AcquireOptions, WriteLock};

use super::write_access::lock_settings;
use super::TranscriptOpError;

/// What a command decided to write.
#[derive(Debug)]
pub enum Change {
    /// Nothing.
    None,
    /// Cut the file to `len` bytes in place (a torn last line removed).
    Truncate {
        /// The length kept.
        len: u64,
    },
    /// Replace the file atomically with `bytes`, after keeping the original as
    /// `keep_original_as` when set (header recovery's `.corrupt-…` copy).
    Replace {
        /// Where the original is kept first.
        keep_original_as: Option<DataPath>,
        /// The new content.
        bytes: Vec<u8>,
    },
}

/// Where a header recovery keeps `session`'s original (its `.corrupt-…` copy beside the
/// transcript), as the [`Change::Replace`] target and as the report's text; `None` without
/// a recovery.
pub fn kept_original(
    session: &SessionRef,
    recovery: Option<&crate::transcript::repair::HeaderRecovery>,
) -> Result<Option<(DataPath, String)>, TranscriptOpError> {
    recovery
        .map(|r| {
            let copy = session.file.with_suffix(&r.backup_suffix)?;
            let text = copy.path().to_string_lossy().into_owned();
            Ok((copy, text))
        })
        .transpose()
}

/// Locks `session`'s transcript (unless `dry_run`), reads it, passes its bytes to
/// `decide`, and writes the [`Change`] it returns (unless `dry_run`); returns what
/// `decide` returned with the change.
pub fn locked_rewrite<T>(
    ctx: &StateContext,
    session: &SessionRef,
    dry_run: bool,
    decide: impl FnOnce(&[u8]) -> Result<(Change, T), TranscriptOpError>,
) -> Result<T, TranscriptOpError> {
    let _lock = if dry_run {
        None
    } else {
        Some(WriteLock::acquire(
            &session.path,
            &lock_settings(ctx),
            AcquireOptions {
                allow_reentrant: false,
            },
        )?)
    };
    let content = session.file.read()?;
    let (change, decided) = decide(&content)?;
    if !dry_run {
        write_change(session, &content, change)?;
    }
    Ok(decided)
}

/// Writes `change` to `session`'s transcript, whose content was `original`.
fn write_change(
    session: &SessionRef,
    original: &[u8],
    change: Change,
) -> Result<(), TranscriptOpError> {
    let file = &session.file;
    match change {
        Change::None => Ok(()),
        Change::Truncate { len } => {
            // Never through a symlink (ELOOP, exit 73), as append opens the file.
            let f = file.open_write()?.into_file();
            f.set_len(len)
                .and_then(|()| f.sync_all())
                .map_err(|source| TranscriptOpError::Write {
                    path: session.path.clone(),
                    source,
                })
        }
        Change::Replace {
            keep_original_as,
            bytes,
        } => {
            if let Some(copy) = keep_original_as {
                keep_copy(&copy, original)?;
            }
            // The file keeps its mode, as the gateway's repair and migrations keep it.
            let mode = file.mode_or(0o600);
            crate::fs::atomic_file::replace_data_file(file, &bytes, mode)?;
            Ok(())
        }
    }
}

/// Creates `copy` holding `original`, never over an existing file (exit 73).
fn keep_copy(copy: &DataPath, original: &[u8]) -> Result<(), TranscriptOpError> {
    let (dir, name) = copy.open_parent()?;
    let created =
        dir.create_new(name, original, 0o600)
            .map_err(|source| TranscriptOpError::Write {
                path: copy.path().to_path_buf(),
                source,
            })?;
    if !created {
        return Err(TranscriptOpError::CopyExists {
            path: copy.path().to_path_buf(),
        });
    }
    Ok(())
}
