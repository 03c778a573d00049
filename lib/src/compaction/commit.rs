//! The order of a compaction's writes, so that a failure at any step leaves the old state
//! whole: the transcript unchanged, the store unchanged, and no successor, backup or temp
//! file left behind.
//!
//! A compaction changes two files: the transcript side (the trimmed transcript and its
//! `.bak`, the transcript with the compaction appended, or the `--rotate` successor) and
//! the store. Everything that can fail for want of space or descriptors is done first,
//! while nothing is in place: the directory is opened, the new transcript text is written
//! to a synced temp file, the file it replaces is hard-linked to its backup name (the
//! `.bak` archive, or a temp name to undo with), and the store's new text is written to
//! its own temp file ([`crate::store::SessionStore::prepare_save`]). Then the transcript
//! side is renamed in and the directory synced, and the store is renamed in. If the
//! store's rename fails, the transcript side is undone: the link is renamed back over the
//! transcript (or the successor removed), and the command fails with the old state
//! whole. Once the store is in place the run completes forward: what fails after that
//! (a directory sync, removing the undo link) is reported, nothing is undone.
//!
//! A crash (kill -9) between the two renames leaves the transcript side new and the store
//! old, with the undo link or the store's temp file left: the state of a run whose store
//! update was lost (as before this order: a crash cannot be undone).

use std::fs::File;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use thiserror::Error;

use crate::exit::{self, ExitCode};
use crate::fs::atomic_file::{open_dir, temp_path_for};
use crate::store::store_lock::StoreLock;
use crate::store::{PreparedStoreSave, StoreError};

/// A compaction write that failed; the message says what is on disk.
#[derive(Debug, Error)]
pub enum CommitError {
    /// A step before anything was in place failed: nothing changed.
    #[error("{}: cannot write: {source}; nothing was changed", path.display())]
    Prepare {
        /// The file (or directory) written.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// Renaming the new transcript side in failed: nothing changed.
    #[error("{}: cannot replace: {source}; nothing was changed", path.display())]
    Rename {
        /// The transcript or successor.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// The store could not be written; the transcript side was undone.
    #[error("{source}; the compaction was undone ({} put back), nothing was changed", transcript.display())]
    Store {
        /// The transcript side undone.
        transcript: PathBuf,
        /// The store's error.
        source: StoreError,
    },
    /// The store could not be written, and undoing the transcript side failed too.
    #[error("{source}; and {} could not be put back: {undo}", transcript.display())]
    Undo {
        /// The transcript side.
        transcript: PathBuf,
        /// The store's error.
        source: StoreError,
        /// Why the undo failed.
        undo: std::io::Error,
    },
    /// Both files are in place, but the store's directory could not be synced.
    #[error("the compaction was written, but {0}")]
    StoreSync(#[source] StoreError),
    /// Both files are in place, but a last step failed (removing the undo link, or the
    /// directory sync after it).
    #[error("the compaction was written, but {what}: {source}")]
    Finish {
        /// What failed.
        what: String,
        /// The error.
        source: std::io::Error,
    },
}

impl ExitCode for CommitError {
    fn exit_code(&self) -> i32 {
        match self {
            CommitError::Store { source, .. }
            | CommitError::Undo { source, .. }
            | CommitError::StoreSync(source) => source.exit_code(),
            _ => exit::CANT_CREATE,
        }
    }
}

/// The old file a replacement keeps a hard link to until the store is written.
#[derive(Debug)]
struct OldLink {
    path: PathBuf,
    /// The `.bak` archive, which stays; otherwise a temp name, removed at the end.
    archive: bool,
}

/// The transcript side of a compaction, prepared: its new text in a synced temp file.
#[must_use = "nothing is in place until `commit`; dropped, the temp file is removed"]
#[derive(Debug)]
pub struct TranscriptSide {
    path: PathBuf,
    tmp: PathBuf,
    old: Option<OldLink>,
    dir: File,
    /// The temp file is renamed in (and not undone).
    committed: bool,
}

fn prepare_err(path: &Path) -> impl Fn(std::io::Error) -> CommitError + '_ {
    move |source| CommitError::Prepare {
        path: path.to_path_buf(),
        source,
    }
}

/// Creates `tmp` with exactly `mode` (`O_EXCL`, no link followed), fills it with `write`
/// and syncs it; removes it again on failure.
fn write_temp(
    tmp: &Path,
    target: &Path,
    mode: u32,
    write: impl FnOnce(&mut File) -> std::io::Result<()>,
) -> Result<(), CommitError> {
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(tmp)
        .map_err(prepare_err(target))?;
    let written = f
        .set_permissions(std::os::unix::fs::PermissionsExt::from_mode(mode))
        .and_then(|()| write(&mut f))
        .and_then(|()| f.flush())
        .and_then(|()| f.sync_all());
    drop(f);
    written.map_err(|e| {
        let _ = std::fs::remove_file(tmp);
        prepare_err(target)(e)
    })
}

impl TranscriptSide {
    /// A replacement of `path` by what `write` writes. The file replaced is linked first
    /// to `backup` (kept: the `.bak` archive) or, without one, to a temp name that undoes
    /// the replacement if the store cannot be written.
    ///
    /// The new file gets exactly `mode`: the old file's, where the gateway changes the
    /// file in place (a compaction appends), 0600 where it writes a new one (`--max-lines`).
    pub fn replace(
        path: &Path,
        backup: Option<&Path>,
        mode: u32,
        write: impl FnOnce(&mut File) -> std::io::Result<()>,
    ) -> Result<Self, CommitError> {
        let dir = parent_of(path);
        let dir = open_dir(dir).map_err(prepare_err(dir))?;
        let tmp = temp_path_for(path);
        write_temp(&tmp, path, mode, write)?;
        let old = OldLink {
            path: backup.map_or_else(|| temp_path_for(path), Path::to_path_buf),
            archive: backup.is_some(),
        };
        if let Err(e) = std::fs::hard_link(path, &old.path) {
            let _ = std::fs::remove_file(&tmp);
            return Err(prepare_err(&old.path)(e));
        }
        Ok(TranscriptSide {
            path: path.to_path_buf(),
            tmp,
            old: Some(old),
            dir,
            committed: false,
        })
    }

    /// A new file at `path` (the successor) holding `bytes`.
    #[must_use = "nothing is in place until `commit`; dropped, the temp file is removed"]
    pub fn create(path: &Path, bytes: &[u8]) -> Result<Self, CommitError> {
        let dir = parent_of(path);
        let dir = open_dir(dir).map_err(prepare_err(dir))?;
        let tmp = temp_path_for(path);
        write_temp(&tmp, path, 0o600, |f| f.write_all(bytes))?;
        Ok(TranscriptSide {
            path: path.to_path_buf(),
            tmp,
            old: None,
            dir,
            committed: false,
        })
    }

    /// Renames the new text in and syncs the directory (which makes the backup link
    /// durable too). On failure nothing is left of it.
    fn commit(&mut self) -> Result<(), CommitError> {
        if let Err(source) = std::fs::rename(&self.tmp, &self.path) {
            return Err(CommitError::Rename {
                path: self.path.clone(),
                source,
            });
        }
        self.committed = true;
        if let Err(source) = self.dir.sync_all() {
            // Not durable: undone, so that nothing is left half done.
            let _ = self.undo();
            return Err(CommitError::Rename {
                path: self.path.clone(),
                source,
            });
        }
        Ok(())
    }

    /// Puts the old state back after [`TranscriptSide::commit`]: the link renamed back
    /// over the transcript (its backup name goes with it), or the new file removed.
    fn undo(&mut self) -> std::io::Result<()> {
        match &self.old {
            Some(old) => std::fs::rename(&old.path, &self.path)?,
            None => std::fs::remove_file(&self.path)?,
        }
        self.old = None;
        self.committed = false;
        self.dir.sync_all()
    }

    /// After the store is in place: the undo link goes (the `.bak` archive stays).
    fn finish(mut self) -> Result<(), CommitError> {
        let Some(old) = self.old.take().filter(|o| !o.archive) else {
            return Ok(());
        };
        let finish_err = |what: String| move |source| CommitError::Finish { what, source };
        std::fs::remove_file(&old.path).map_err(finish_err(format!(
            "{} could not be removed",
            old.path.display()
        )))?;
        self.dir.sync_all().map_err(finish_err(format!(
            "{} could not be synced",
            parent_of(&self.path).display()
        )))
    }
}

impl Drop for TranscriptSide {
    fn drop(&mut self) {
        if !self.committed {
            let _ = std::fs::remove_file(&self.tmp);
            if let Some(old) = self.old.take() {
                let _ = std::fs::remove_file(old.path);
            }
        }
    }
}

fn parent_of(path: &Path) -> &Path {
    path.parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// The store side of a compaction, prepared under the store lock (held until the end).
#[derive(Debug)]
pub struct StoreSide {
    /// The lock the store was read under.
    pub lock: Option<StoreLock>,
    /// The new store text, in its temp file.
    pub save: PreparedStoreSave,
}

/// Puts both sides in place, transcript first; see the module doc. Without a store side
/// (a transcript given by path), only the transcript side.
pub fn commit(transcript: TranscriptSide, store: Option<StoreSide>) -> Result<(), CommitError> {
    commit_all(vec![transcript], store)
}

/// [`commit`] for a transcript side of several files (a `--rotate` of a transcript the
/// repair pass rewrites first: the repaired transcript, then the successor), renamed in
/// in order. A failure undoes the ones already in place, last first, so that nothing
/// changes; once the store is in place, all of them stay.
pub fn commit_all(
    mut sides: Vec<TranscriptSide>,
    store: Option<StoreSide>,
) -> Result<(), CommitError> {
    for k in 0..sides.len() {
        if let Err(e) = sides[k].commit() {
            for done in sides[..k].iter_mut().rev() {
                let _ = done.undo();
            }
            return Err(e);
        }
    }
    if let Some(StoreSide { lock, save }) = store {
        let saved = save.commit();
        drop(lock);
        match saved {
            Ok(_) => {}
            Err(source) if source.replaced() => {
                finish_all(sides)?;
                return Err(CommitError::StoreSync(source));
            }
            Err(source) => {
                let path = sides.first().map(|t| t.path.clone()).unwrap_or_default();
                let mut failed = None;
                for t in sides.iter_mut().rev() {
                    if let Err(undo) = t.undo() {
                        failed.get_or_insert((t.path.clone(), undo));
                    }
                }
                return Err(match failed {
                    None => CommitError::Store {
                        transcript: path,
                        source,
                    },
                    Some((transcript, undo)) => CommitError::Undo {
                        transcript,
                        source,
                        undo,
                    },
                });
            }
        }
    }
    finish_all(sides)
}

/// Finishes every side, reporting the first failure.
fn finish_all(sides: Vec<TranscriptSide>) -> Result<(), CommitError> {
    let mut first = Ok(());
    for t in sides {
        let r = t.finish();
        if first.is_ok() {
            first = r;
        }
    }
    first
}
