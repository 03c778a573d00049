//! Atomic file replacement: a crash at any instant leaves the old file or the new one,
//! whole (spec README, decision 2).
//!
//! Steps: create `<name>.<pid>.<uuid>.tmp` beside the target with `O_CREAT|O_EXCL` and
//! the final mode, write every byte, `fsync` it, `rename` it over the target, then
//! `fsync` the directory so the rename itself is durable. On any failure the temp file
//! is removed and the target is untouched.

use std::ffi::{OsStr, OsString};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use thiserror::Error;

use crate::exit::{self, ExitCode};
use crate::fs::data_file::{DataDir, DataFileError, DataPath};

/// A failure to replace a file; the target is unchanged.
#[derive(Debug, Error)]
pub enum AtomicWriteError {
    /// The target's directory could not be created.
    #[error("{path}: cannot create directory: {source}")]
    CreateDir {
        /// The directory.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The temp file could not be created, written or synced.
    #[error("{path}: cannot write: {source}")]
    Write {
        /// The target file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The rename over the target failed.
    #[error("{path}: cannot replace: {source}")]
    Rename {
        /// The target file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The target, named by data, cannot be used (a symlink on its way, …).
    #[error(transparent)]
    Unusable(Box<DataFileError>),
    /// The target was replaced, but its directory could not be synced: the new file is
    /// in place (unlike every other variant) but may not survive a crash.
    #[error("{path}: replaced, but its directory could not be synced: {source}")]
    Sync {
        /// The target file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
}

impl AtomicWriteError {
    /// Whether the new file is in place despite the error (only a failed directory sync
    /// after the rename): a caller undoing its other writes must not undo then.
    pub fn replaced(&self) -> bool {
        matches!(self, AtomicWriteError::Sync { .. })
    }
}

impl ExitCode for AtomicWriteError {
    fn exit_code(&self) -> i32 {
        match self {
            AtomicWriteError::Unusable(e) => e.exit_code(),
            _ => exit::CANT_CREATE,
        }
    }
}

/// The temp file name used for `target`: `<basename>.<pid>.<uuid v4>.tmp`.
pub fn temp_path_for(target: &Path) -> PathBuf {
    let base = target.file_name().unwrap_or_default();
    target.with_file_name(temp_name_for(base))
}

/// The temp file name beside a file called `name`: `<name>.<pid>.<uuid v4>.tmp`.
fn temp_name_for(name: &OsStr) -> OsString {
    let mut tmp = name.to_os_string();
    tmp.push(format!(
        ".{}.{}.tmp",
        std::process::id(),
        uuid::Uuid::new_v4()
    ));
    tmp
}

/// A temp file written and synced beside its target but not yet in place (the first
/// steps of [`replace_file`]): [`PendingReplace::commit`] renames it over the target and
/// syncs the directory; dropping it uncommitted removes the temp file.
///
/// Every step goes through one descriptor of the target's directory (`openat` with
/// `O_EXCL|O_NOFOLLOW`, `renameat`, `fsync`): the directory that was opened is the one
/// changed, even if a path to it is swapped meanwhile. It is opened before the temp file
/// is made and kept open, so that the commit opens nothing: under a descriptor limit
/// (`ulimit -n`) it is the preparation that fails, while nothing is in place yet, never
/// the sync after the rename.
#[must_use = "nothing is in place until `commit`; dropped, the temp file is removed"]
#[derive(Debug)]
pub struct PendingReplace {
    target: PathBuf,
    dir: DataDir,
    name: OsString,
    tmp: OsString,
    committed: bool,
}

impl PendingReplace {
    /// Writes `bytes` to a new temp file beside `target` with exactly `mode`, and syncs
    /// it; missing parent directories are created. The target is not touched.
    #[must_use = "nothing is in place until `commit`; dropped, the temp file is removed"]
    pub fn prepare(target: &Path, bytes: &[u8], mode: u32) -> Result<Self, AtomicWriteError> {
        Self::prepare_pieces(target, bytes.len(), [bytes], mode)
    }

    /// [`PendingReplace::prepare`] for a text given in pieces (`len` bytes in all), written
    /// one after the other without first being joined.
    #[must_use = "nothing is in place until `commit`; dropped, the temp file is removed"]
    pub fn prepare_pieces<'p>(
        target: &Path,
        len: usize,
        pieces: impl IntoIterator<Item = &'p [u8]>,
        mode: u32,
    ) -> Result<Self, AtomicWriteError> {
        let dir = target
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let create_dir = |source| AtomicWriteError::CreateDir {
            path: dir.to_path_buf(),
            source,
        };
        if !dir.exists() {
            std::fs::create_dir_all(dir).map_err(create_dir)?;
        }
        let opened = DataDir::open(dir).map_err(|e| create_dir(std::io::Error::other(e)))?;
        let name = target.file_name().ok_or_else(|| AtomicWriteError::Write {
            path: target.to_path_buf(),
            source: std::io::Error::from(std::io::ErrorKind::InvalidInput),
        })?;
        Self::prepare_in(opened, name, target, len, pieces, mode)
    }

    /// [`PendingReplace::prepare`] for a file named by data: its directory is reached
    /// from the trusted one without following a symlink ([`DataPath::open_parent`]).
    #[must_use = "nothing is in place until `commit`; dropped, the temp file is removed"]
    pub fn prepare_data(
        target: &DataPath,
        bytes: &[u8],
        mode: u32,
    ) -> Result<Self, AtomicWriteError> {
        let (dir, name) = target
            .open_parent()
            .map_err(|e| AtomicWriteError::Unusable(Box::new(e)))?;
        let name = name.to_os_string();
        Self::prepare_in(dir, &name, target.path(), bytes.len(), [bytes], mode)
    }

    /// The temp file for `name` in the opened `dir`, written and synced.
    fn prepare_in<'p>(
        dir: DataDir,
        name: &OsStr,
        target: &Path,
        len: usize,
        pieces: impl IntoIterator<Item = &'p [u8]>,
        mode: u32,
    ) -> Result<Self, AtomicWriteError> {
        let write_err = |source| AtomicWriteError::Write {
            path: target.to_path_buf(),
            source,
        };
        let tmp = temp_name_for(name);
        let file = dir.create_exclusive(&tmp, mode).map_err(write_err)?;
        // From here on, dropping `pending` removes the temp file.
        let pending = PendingReplace {
            target: target.to_path_buf(),
            dir,
            name: name.to_os_string(),
            tmp,
            committed: false,
        };
        file.set_permissions(std::fs::Permissions::from_mode(mode))
            .map_err(write_err)?;
        write_pieces(&file, len, pieces).map_err(write_err)?;
        file.sync_all().map_err(write_err)?;
        Ok(pending)
    }

    /// Renames the temp file over the target, then syncs the directory. A failed rename
    /// leaves the target as it was ([`AtomicWriteError::Rename`]); a failed sync after it
    /// leaves the new file in place ([`AtomicWriteError::Sync`]).
    pub fn commit(mut self) -> Result<(), AtomicWriteError> {
        self.dir
            .rename(&self.tmp, &self.name)
            .map_err(|source| AtomicWriteError::Rename {
                path: self.target.clone(),
                source,
            })?;
        self.committed = true;
        self.dir.sync().map_err(|source| AtomicWriteError::Sync {
            path: self.target.clone(),
            source,
        })
    }
}

impl Drop for PendingReplace {
    fn drop(&mut self) {
        if !self.committed {
            let _ = self.dir.unlink(&self.tmp);
        }
    }
}

/// Files from this size on are written around the page cache (`O_DIRECT`) where the
/// filesystem takes it: they are synced at once, so caching their bytes buys nothing,
/// while taking fresh pages for the cache can cost more than the write itself.
const DIRECT_WRITE_MIN: usize = 8 << 20;
/// Alignment of the memory, offsets and lengths of direct writes: a page, which covers
/// any logical block size up to it.
const DIRECT_ALIGN: usize = 4096;
/// Bytes per direct write (through one aligned buffer).
const DIRECT_CHUNK: usize = 4 << 20;

/// Writes `pieces` (`len` bytes in all) to `file` (new, empty, at offset 0), in order.
///
/// From [`DIRECT_WRITE_MIN`] bytes on, the pieces are gathered in one page-aligned buffer
/// and written with `O_DIRECT` where the filesystem takes it; the last partial page, and
/// everything from a refused or failed direct write on, goes the usual way (which meets
/// the same error again, if it was not about `O_DIRECT`). Smaller files are written
/// through a plain buffer. The file's flags are as they were when it returns.
fn write_pieces<'p>(
    file: &File,
    len: usize,
    pieces: impl IntoIterator<Item = &'p [u8]>,
) -> std::io::Result<()> {
    if len < DIRECT_WRITE_MIN {
        let mut out = std::io::BufWriter::with_capacity(len.clamp(1, 64 << 10), file);
        for piece in pieces {
            out.write_all(piece)?;
        }
        return out.flush();
    }
    let mut direct = DirectWrites::start(file);
    let mut storage = vec![0u8; DIRECT_CHUNK + DIRECT_ALIGN];
    let buf = page_aligned(&mut storage, DIRECT_CHUNK);
    let mut filled = 0;
    for mut piece in pieces {
        while !piece.is_empty() {
            let n = piece.len().min(DIRECT_CHUNK - filled);
            buf[filled..filled + n].copy_from_slice(&piece[..n]);
            filled += n;
            piece = &piece[n..];
            if filled == DIRECT_CHUNK {
                direct.write(buf)?;
                filled = 0;
            }
        }
    }
    direct.write(&buf[..filled])
}

/// The first `len` bytes of `storage` that start on a page boundary (`storage` holds at
/// least `len` + [`DIRECT_ALIGN`] bytes).
fn page_aligned(storage: &mut [u8], len: usize) -> &mut [u8] {
    let start = storage
        .as_ptr()
        .align_offset(DIRECT_ALIGN)
        .min(DIRECT_ALIGN);
    &mut storage[start..start + len]
}

/// Direct (`O_DIRECT`) writes of whole pages to a file, falling back to the usual writes
/// for a last partial page and for good after a failure. Dropping it restores the file's
/// flags.
struct DirectWrites<'f> {
    file: &'f File,
    /// The flags before `O_DIRECT` was set; `None`: the usual writes.
    flags: Option<rustix::fs::OFlags>,
}

impl<'f> DirectWrites<'f> {
    /// Sets `O_DIRECT` on `file` when the filesystem takes it (Linux; elsewhere, and with
    /// `CLAWSTATE_PORTABLE=1`, the usual writes: see [`crate::fs::platform`]).
    fn start(file: &'f File) -> Self {
        #[cfg(target_os = "linux")]
        if crate::fs::platform::linux_specific() {
            use rustix::fs::{fcntl_getfl, fcntl_setfl, OFlags};
            let flags = fcntl_getfl(file)
                .ok()
                .filter(|&flags| fcntl_setfl(file, flags | OFlags::DIRECT).is_ok());
            return DirectWrites { file, flags };
        }
        DirectWrites { file, flags: None }
    }

    /// Writes all of `bytes` (page-aligned in memory) at the file's offset.
    fn write(&mut self, mut bytes: &[u8]) -> std::io::Result<()> {
        if self.flags.is_some() {
            let whole = bytes.len() / DIRECT_ALIGN * DIRECT_ALIGN;
            let mut done = 0;
            while done < whole {
                match (&*self.file).write(&bytes[done..whole]) {
                    Ok(n) if n > 0 && n % DIRECT_ALIGN == 0 => done += n,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Ok(n) => {
                        // A short write off a page boundary: the rest goes the usual way.
                        done += n;
                        self.stop();
                        break;
                    }
                    Err(_) => {
                        self.stop();
                        break;
                    }
                }
            }
            bytes = &bytes[done..];
            if done == whole && !bytes.is_empty() {
                // The last partial page.
                self.stop();
            }
        }
        (&*self.file).write_all(bytes)
    }

    /// Goes back to the usual writes.
    fn stop(&mut self) {
        if let Some(flags) = self.flags.take() {
            let _ = rustix::fs::fcntl_setfl(self.file, flags);
        }
    }
}

impl Drop for DirectWrites<'_> {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Replaces `target` with `bytes` atomically and durably; the file gets exactly `mode`.
/// Missing parent directories are created.
pub fn replace_file(target: &Path, bytes: &[u8], mode: u32) -> Result<(), AtomicWriteError> {
    PendingReplace::prepare(target, bytes, mode)?.commit()
}

/// [`replace_file`] for a file named by data ([`PendingReplace::prepare_data`]); its
/// directory must exist.
pub fn replace_data_file(
    target: &DataPath,
    bytes: &[u8],
    mode: u32,
) -> Result<(), AtomicWriteError> {
    PendingReplace::prepare_data(target, bytes, mode)?.commit()
}

/// `fsync`s a directory so that renames and unlinks in it are durable.
pub fn sync_dir(dir: &Path) -> std::io::Result<()> {
    open_dir(dir)?.sync_all()
}

/// Opens a directory (`O_DIRECTORY`), to sync it with `sync_all` later.
pub fn open_dir(dir: &Path) -> std::io::Result<File> {
    OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECTORY | libc::O_CLOEXEC)
        .open(dir)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    #[test]
    fn replaces_with_mode_and_leaves_no_temp() {
        let d = tempfile::tempdir().unwrap();
        let t = d.path().join("sub/sessions.json");
        replace_file(&t, b"{}", 0o600).unwrap();
        replace_file(&t, b"{\"a\":1}", 0o600).unwrap();
        assert_eq!(std::fs::read(&t).unwrap(), b"{\"a\":1}");
        assert_eq!(std::fs::metadata(&t).unwrap().mode() & 0o777, 0o600);
        assert_eq!(std::fs::read_dir(d.path().join("sub")).unwrap().count(), 1);
    }

    #[test]
    fn the_portable_writer_uses_the_usual_writes() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("x");
        let f = File::options()
            .write(true)
            .create_new(true)
            .open(&p)
            .unwrap();
        let bytes: Vec<u8> = (0..3 * DIRECT_ALIGN).map(|i| (i % 249) as u8).collect();
        let mut storage = vec![0u8; 3 * DIRECT_ALIGN];
        let buf = page_aligned(&mut storage, 2 * DIRECT_ALIGN);
        buf.copy_from_slice(&bytes[..2 * DIRECT_ALIGN]);
        let mut portable = DirectWrites {
            file: &f,
            flags: None,
        };
        portable.write(buf).unwrap();
        portable
            .write(&bytes[2 * DIRECT_ALIGN..2 * DIRECT_ALIGN + 100])
            .unwrap();
        drop(portable);
        assert_eq!(std::fs::read(&p).unwrap(), bytes[..2 * DIRECT_ALIGN + 100]);
    }

    #[test]
    fn a_large_file_is_written_whole_direct_or_not() {
        let d = tempfile::tempdir().unwrap();
        let t = d.path().join("sessions.json");
        // Over the direct-write size, not a whole number of pages, every byte telling.
        let bytes: Vec<u8> = (0..DIRECT_WRITE_MIN + DIRECT_CHUNK + 1234)
            .map(|i| (i % 251) as u8)
            .collect();
        replace_file(&t, &bytes, 0o600).unwrap();
        assert_eq!(std::fs::read(&t).unwrap(), bytes);
        // In pieces of every size: empty ones, ones across the buffer's end, one longer
        // than the buffer; below the direct size too.
        for total in [bytes.len(), DIRECT_WRITE_MIN - 1, 10_000] {
            let mut pieces = Vec::new();
            let (mut at, mut step) = (0, 1);
            while at < total {
                let n = step.min(total - at);
                pieces.push(&bytes[at..at + n]);
                pieces.push(&bytes[at..at]);
                at += n;
                step = if step > DIRECT_CHUNK { 7 } else { step * 3 + 5 };
            }
            let p = PendingReplace::prepare_pieces(&t, total, pieces, 0o600).unwrap();
            p.commit().unwrap();
            assert!(
                std::fs::read(&t).unwrap() == bytes[..total],
                "{total} bytes"
            );
        }
        // A partial page ends the direct writes: it and what follows go the usual way,
        // and the file's flags come back as they were.
        let f = File::options()
            .write(true)
            .create_new(true)
            .open(d.path().join("x"))
            .unwrap();
        let flags = rustix::fs::fcntl_getfl(&f).unwrap();
        let mut direct = DirectWrites::start(&f);
        let mut storage = vec![0u8; 3 * DIRECT_ALIGN];
        let buf = page_aligned(&mut storage, 2 * DIRECT_ALIGN);
        buf.copy_from_slice(&bytes[..2 * DIRECT_ALIGN]);
        direct.write(buf).unwrap();
        direct.write(&buf[..100]).unwrap();
        direct.write(buf).unwrap();
        drop(direct);
        assert_eq!(rustix::fs::fcntl_getfl(&f).unwrap(), flags);
        drop(f);
        let mut want = bytes[..2 * DIRECT_ALIGN].to_vec();
        want.extend_from_slice(&bytes[..100]);
        want.extend_from_slice(&bytes[..2 * DIRECT_ALIGN]);
        assert!(std::fs::read(d.path().join("x")).unwrap() == want);
    }

    #[test]
    fn a_pending_replace_touches_nothing_until_committed() {
        let d = tempfile::tempdir().unwrap();
        let t = d.path().join("sessions.json");
        std::fs::write(&t, "old").unwrap();
        let names = || std::fs::read_dir(d.path()).unwrap().count();
        let pending = PendingReplace::prepare(&t, b"new", 0o600).unwrap();
        assert_eq!(names(), 2, "the temp file sits beside the target");
        assert_eq!(std::fs::read(&t).unwrap(), b"old");
        drop(pending);
        assert_eq!(names(), 1, "dropped uncommitted: the temp file is gone");
        assert_eq!(std::fs::read(&t).unwrap(), b"old");
        PendingReplace::prepare(&t, b"new", 0o600)
            .unwrap()
            .commit()
            .unwrap();
        assert_eq!(std::fs::read(&t).unwrap(), b"new");
        assert_eq!(names(), 1);
    }

    #[test]
    fn failure_leaves_target_untouched() {
        let d = tempfile::tempdir().unwrap();
        let t = d.path().join("x.json");
        std::fs::write(&t, b"old").unwrap();
        // Renaming a file over a non-empty directory fails.
        let dir_target = d.path().join("dir");
        std::fs::create_dir(&dir_target).unwrap();
        std::fs::write(dir_target.join("f"), b"").unwrap();
        assert!(replace_file(&dir_target, b"new", 0o600).is_err());
        assert_eq!(std::fs::read(&t).unwrap(), b"old");
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 2);
    }
}
