//! Files named by data, and the one way this crate opens them.
//!
//! A store entry's `sessionId` or `sessionFile`, a pending-archive journal, a trajectory
//! pointer, a lock file: their names are written by other programs, and an admin runs
//! clawstate as root. A planted symlink (`lnk → /etc`, `<id>.jsonl → /etc/shadow`) would
//! make such a name lead outside the state directory; a FIFO in place of a transcript
//! would block every reader forever; `/dev/zero` would be read until memory runs out.
//!
//! So a data file is a [`DataPath`]: a trusted directory (from the config, the command
//! line or a realpath) and a name below it made of plain components. Opening walks the
//! name from the directory one component at a time with `openat(…, O_NOFOLLOW)`: a
//! symlink anywhere below the directory, or `..`, is refused and reported, never
//! followed. (A name directly in the directory, the usual transcript, is opened by its
//! whole path with `O_NOFOLLOW` on the name: the directory is trusted, and it takes one
//! descriptor, as a plain open does.) The last component is opened `O_NONBLOCK` (a FIFO opens at once) and must be
//! a regular file by `fstat`; anything else is refused with exit 65 naming the file.
//! Reads take at most the size `fstat` gave when the file was opened, or a stated limit
//! for files that are small by nature. Writes go through the walked directory's
//! descriptor (`renameat`, `unlinkat`, `openat(O_EXCL)`), so what was checked is what is
//! changed.
//!
//! A path the user typed is followed once, when it becomes a [`DataPath`]
//! ([`DataPath::given`]): the user chose it. It still must be a regular file.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::Read;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Component, Path, PathBuf};

use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;
use thiserror::Error;

use crate::exit::{self, ExitCode};

/// A data file that cannot be opened, read or changed as asked; nothing was changed.
#[derive(Debug, Error)]
pub enum DataFileError {
    /// The name leaves its directory (`..`, an absolute part, nothing after the directory).
    #[error("{path}: leaves {root}; not followed")]
    Escapes {
        /// The path as named.
        path: PathBuf,
        /// The directory it must stay in.
        root: PathBuf,
    },
    /// A component below the trusted directory is a symlink.
    #[error(
        "{path}: {}; a path from data is never followed through a link",
        link_text(path, link)
    )]
    Symlink {
        /// The file asked for.
        path: PathBuf,
        /// The component that is a link.
        link: PathBuf,
    },
    /// The file (or a directory on its way) is not what it must be.
    #[error("{path}: is {what}, not a regular file; not opened")]
    NotRegular {
        /// The file, or the component that is not a directory.
        path: PathBuf,
        /// What it is (`a FIFO`, `a character device`, `a directory`, …).
        what: &'static str,
    },
    /// A directory on the way (or the trusted directory) is not one.
    #[error("{path}: is not a directory; not opened")]
    NotADirectory {
        /// The component that should be a directory.
        path: PathBuf,
    },
    /// The file does not exist.
    #[error("{path}: no such file")]
    NotFound {
        /// The file.
        path: PathBuf,
    },
    /// The file is larger than what a file of its kind may be.
    #[error("{path}: {size} bytes, over the {limit}-byte limit for {what}; not read")]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// Its size.
        size: u64,
        /// The limit.
        limit: u64,
        /// What kind of file it is.
        what: &'static str,
    },
    /// The system refused (permissions, too many open files, I/O error, full disk).
    #[error("{path}: cannot {action}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What was being done.
        action: &'static str,
        /// The error.
        source: std::io::Error,
    },
}

/// How a symlink error names the link: the file itself, or a directory on its way.
fn link_text(path: &Path, link: &Path) -> String {
    if path == link {
        "is a symbolic link".to_string()
    } else {
        format!("{} on its way is a symbolic link", link.display())
    }
}

impl DataFileError {
    /// Whether the file (or a directory on its way) does not exist.
    pub fn is_not_found(&self) -> bool {
        matches!(self, DataFileError::NotFound { .. })
    }

    /// The file the error is about.
    pub fn path(&self) -> &Path {
        match self {
            DataFileError::Escapes { path, .. }
            | DataFileError::Symlink { path, .. }
            | DataFileError::NotRegular { path, .. }
            | DataFileError::NotADirectory { path }
            | DataFileError::NotFound { path }
            | DataFileError::TooLarge { path, .. }
            | DataFileError::Io { path, .. } => path,
        }
    }

    /// The same error, about the file as `named` names it (not its realpath).
    fn named(mut self, named: &Path) -> Self {
        match &mut self {
            DataFileError::Escapes { path, .. }
            | DataFileError::Symlink { path, .. }
            | DataFileError::NotRegular { path, .. }
            | DataFileError::NotADirectory { path }
            | DataFileError::NotFound { path }
            | DataFileError::TooLarge { path, .. }
            | DataFileError::Io { path, .. } => *path = named.to_path_buf(),
        }
        self
    }

    fn io(path: &Path, action: &'static str, e: Errno) -> Self {
        DataFileError::Io {
            path: path.to_path_buf(),
            action,
            source: e.into(),
        }
    }
}

impl ExitCode for DataFileError {
    fn exit_code(&self) -> i32 {
        match self {
            DataFileError::NotFound { .. } => exit::NOT_FOUND,
            DataFileError::Escapes { .. }
            | DataFileError::Symlink { .. }
            | DataFileError::NotRegular { .. }
            | DataFileError::NotADirectory { .. }
            | DataFileError::TooLarge { .. } => exit::DATA_ERR,
            DataFileError::Io { .. } => exit::CANT_CREATE,
        }
    }
}

/// What a file type is called in messages.
fn type_name(t: FileType) -> &'static str {
    match t {
        FileType::RegularFile => "a regular file",
        FileType::Directory => "a directory",
        FileType::Symlink => "a symbolic link",
        FileType::Fifo => "a FIFO",
        FileType::Socket => "a socket",
        FileType::CharacterDevice => "a character device",
        FileType::BlockDevice => "a block device",
        _ => "not a regular file",
    }
}

/// A file below a trusted directory, named by plain components (see the module doc).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DataPath {
    /// The directory and the name joined: `<root>/<rel>`.
    full: PathBuf,
    /// Where the name starts in `full`'s bytes.
    rel_start: usize,
}

/// The flags every walk opens a directory with.
fn dir_flags() -> OFlags {
    OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC
}

impl DataPath {
    /// `rel` below the trusted directory `root`. `rel` must be relative and made of plain
    /// components (no `..`, no `.`, not empty); anything else escapes.
    pub fn beneath(root: &Path, rel: &Path) -> Result<DataPath, DataFileError> {
        let plain = !rel.as_os_str().is_empty()
            && rel.components().all(|c| matches!(c, Component::Normal(_)))
            && !rel.as_os_str().as_bytes().ends_with(b"/");
        if !plain {
            return Err(DataFileError::Escapes {
                path: root.join(rel),
                root: root.to_path_buf(),
            });
        }
        let mut full = root.as_os_str().to_os_string().into_vec();
        if full.last() != Some(&b'/') {
            full.push(b'/');
        }
        let rel_start = full.len();
        // Repeated slashes inside `rel` are folded, as the components read them.
        let mut first = true;
        for c in rel.components() {
            if !first {
                full.push(b'/');
            }
            first = false;
            full.extend_from_slice(c.as_os_str().as_bytes());
        }
        Ok(DataPath {
            full: PathBuf::from(OsString::from_vec(full)),
            rel_start,
        })
    }

    /// A file the user named (on the command line): symlinks on the way are followed
    /// once, now, and the file's real directory becomes the trusted one. A file that does
    /// not exist yet is named in its directory's real path.
    pub fn given(path: &Path) -> DataPath {
        let real = std::fs::canonicalize(path).ok().or_else(|| {
            let dir = path.parent().filter(|d| !d.as_os_str().is_empty())?;
            Some(std::fs::canonicalize(dir).ok()?.join(path.file_name()?))
        });
        let p = real.unwrap_or_else(|| path.to_path_buf());
        match (p.parent(), p.file_name()) {
            (Some(dir), Some(name)) if !dir.as_os_str().is_empty() => {
                DataPath::beneath(dir, Path::new(name)).unwrap_or_else(|_| DataPath::whole(&p))
            }
            _ => DataPath::whole(&p),
        }
    }

    /// A path whose every component is the name (no trusted directory): opening it
    /// fails unless it is relative and plain; used only as a fallback for odd names.
    fn whole(p: &Path) -> DataPath {
        DataPath {
            full: p.to_path_buf(),
            rel_start: 0,
        }
    }

    /// The whole path, for messages and comparisons.
    pub fn path(&self) -> &Path {
        &self.full
    }

    /// The trusted directory.
    pub fn root(&self) -> &Path {
        let b = &self.full.as_os_str().as_bytes()[..self.rel_start];
        let b = if b.len() > 1 {
            b.strip_suffix(b"/").unwrap_or(b)
        } else {
            b
        };
        Path::new(OsStr::from_bytes(b))
    }

    /// The name below the trusted directory.
    pub fn rel(&self) -> &Path {
        Path::new(OsStr::from_bytes(
            &self.full.as_os_str().as_bytes()[self.rel_start..],
        ))
    }

    /// The last component.
    pub fn file_name(&self) -> &OsStr {
        self.full.file_name().unwrap_or_default()
    }

    /// The file beside this one called `name` (a plain name), under the same directory.
    pub fn sibling(&self, name: &OsStr) -> Result<DataPath, DataFileError> {
        let rel = self.rel().with_file_name(name);
        DataPath::beneath(self.root(), &rel)
    }

    /// The file beside this one whose name is this one's plus `suffix` (`.lock`,
    /// `.reset.<ts>`).
    pub fn with_suffix(&self, suffix: &str) -> Result<DataPath, DataFileError> {
        let mut name = self.file_name().to_os_string();
        name.push(suffix);
        self.sibling(&name)
    }

    /// Opens the directory that holds the file, walking from the trusted directory
    /// without following any symlink; returns it with the file's name.
    pub fn open_parent(&self) -> Result<(DataDir, &OsStr), DataFileError> {
        self.walk(None)
    }

    /// [`DataPath::open_parent`], creating the directories that are missing on the way
    /// (the trusted one as well) with `mode`.
    pub fn create_parent(&self, mode: u32) -> Result<(DataDir, &OsStr), DataFileError> {
        self.walk(Some(mode))
    }

    fn walk(&self, create: Option<u32>) -> Result<(DataDir, &OsStr), DataFileError> {
        let root = self.root();
        let rel = self.rel().as_os_str().as_bytes();
        if rel.is_empty() || self.rel_start == 0 {
            return Err(DataFileError::Escapes {
                path: self.full.clone(),
                root: root.to_path_buf(),
            });
        }
        if let Some(mode) = create {
            if !root.is_dir() {
                use std::os::unix::fs::DirBuilderExt;
                std::fs::DirBuilder::new()
                    .recursive(true)
                    .mode(mode)
                    .create(root)
                    .map_err(|source| DataFileError::Io {
                        path: root.to_path_buf(),
                        action: "create directory",
                        source,
                    })?;
            }
        }
        let mut fd = rustix::fs::open(root, dir_flags(), Mode::empty()).map_err(|e| match e {
            Errno::NOENT => DataFileError::NotFound {
                path: self.full.clone(),
            },
            Errno::NOTDIR => DataFileError::NotADirectory {
                path: root.to_path_buf(),
            },
            e => DataFileError::io(root, "open its directory", e),
        })?;
        let parts: Vec<&[u8]> = rel.split(|&b| b == b'/').collect();
        let (name, dirs) = parts.split_last().expect("a plain name has a component");
        let mut walked = self.rel_start;
        for part in dirs {
            walked += part.len();
            let at = Path::new(OsStr::from_bytes(
                &self.full.as_os_str().as_bytes()[..walked],
            ));
            walked += 1;
            let part = OsStr::from_bytes(part);
            let open = |fd: &OwnedFd| {
                rustix::fs::openat(fd, part, dir_flags() | OFlags::NOFOLLOW, Mode::empty())
            };
            let mut next = open(&fd);
            if let (Err(Errno::NOENT), Some(mode)) = (&next, create) {
                match rustix::fs::mkdirat(&fd, part, Mode::from_raw_mode(mode as _)) {
                    Ok(()) | Err(Errno::EXIST) => next = open(&fd),
                    Err(e) => return Err(DataFileError::io(at, "create directory", e)),
                }
            }
            fd = match next {
                Ok(next) => next,
                Err(Errno::NOENT) => {
                    return Err(DataFileError::NotFound {
                        path: self.full.clone(),
                    })
                }
                Err(e @ (Errno::LOOP | Errno::NOTDIR | Errno::MLINK)) => {
                    return Err(classify(&fd, part, at, &self.full, e))
                }
                Err(e) => return Err(DataFileError::io(at, "open its directory", e)),
            };
        }
        let dir_path = self
            .full
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default();
        Ok((DataDir { fd, path: dir_path }, OsStr::from_bytes(name)))
    }

    /// What is at the path, without following a symlink: `None` when nothing is.
    pub fn facts(&self) -> Result<Option<FileFacts>, DataFileError> {
        let (dir, name) = match self.open_parent() {
            Ok(p) => p,
            Err(e) if e.is_not_found() => return Ok(None),
            Err(e) => return Err(e),
        };
        match rustix::fs::statat(&dir.fd, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => Ok(Some(FileFacts::of(&st))),
            Err(Errno::NOENT) => Ok(None),
            Err(e) => Err(DataFileError::io(&self.full, "inspect", e)),
        }
    }

    /// The kind of what is at the path, without following a symlink.
    pub fn kind(&self) -> Result<Option<FileType>, DataFileError> {
        Ok(self.facts()?.map(|f| f.kind))
    }

    /// The permission bits of the regular file there, else `default`: what a rewrite of
    /// it keeps, as the gateway keeps them (its repair chmods the new file to the old
    /// mode; its migrations write over the file, which keeps it).
    pub fn mode_or(&self, default: u32) -> u32 {
        match self.facts() {
            Ok(Some(f)) if f.kind == FileType::RegularFile => f.mode,
            _ => default,
        }
    }

    /// Whether a regular file is there (not a link, not a FIFO, not a directory).
    pub fn is_file(&self) -> bool {
        matches!(self.kind(), Ok(Some(FileType::RegularFile)))
    }

    /// Checks that the path can be used: `Ok(true)` for a regular file, `Ok(false)` for
    /// nothing there, an error for a symlink on the way or anything but a regular file.
    pub fn check(&self) -> Result<bool, DataFileError> {
        match self.kind()? {
            None => Ok(false),
            Some(FileType::RegularFile) => Ok(true),
            Some(FileType::Symlink) => Err(DataFileError::Symlink {
                path: self.full.clone(),
                link: self.full.clone(),
            }),
            Some(t) => Err(DataFileError::NotRegular {
                path: self.full.clone(),
                what: type_name(t),
            }),
        }
    }

    /// Opens the regular file for reading.
    pub fn open_read(&self) -> Result<DataFile, DataFileError> {
        self.open(Access::Read)
    }

    /// Opens the file as `access` says. A file directly in the trusted directory (the
    /// usual transcript) is opened by its whole path with `O_NOFOLLOW` on the name (the
    /// directory is trusted, links and all): one descriptor, as a plain open takes, so a
    /// tight descriptor limit fails no sooner than before. Deeper ones walk.
    fn open(&self, access: Access) -> Result<DataFile, DataFileError> {
        if self.rel_start > 0 && !self.rel().as_os_str().as_bytes().contains(&b'/') {
            return open_at(rustix::fs::CWD, self.full.as_os_str(), &self.full, access);
        }
        let (dir, name) = self.open_parent()?;
        dir.open_file(name, &self.full, access)
    }

    /// Opens the regular file for appending (and reading); `create` gives the mode of a
    /// new file (`None`: it must exist).
    pub fn open_append(&self, create: Option<u32>) -> Result<DataFile, DataFileError> {
        self.open(Access::Append { create })
    }

    /// Opens the regular file for writing in place (no truncation).
    pub fn open_write(&self) -> Result<DataFile, DataFileError> {
        self.open(Access::Write)
    }

    /// Reads the whole file (up to the size it had when opened).
    pub fn read(&self) -> Result<Vec<u8>, DataFileError> {
        self.open_read()?.read_to_end()
    }

    /// Reads the whole file, which must be at most `limit` bytes (`what` names its kind
    /// in the error).
    pub fn read_small(&self, limit: u64, what: &'static str) -> Result<Vec<u8>, DataFileError> {
        self.open_read()?.read_limited(limit, what)
    }
}

impl std::fmt::Display for DataPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.full.display().fmt(f)
    }
}

/// The error for a component `name` of `dir` (at `at`) that did not open as a directory.
fn classify(dir: &OwnedFd, name: &OsStr, at: &Path, full: &Path, e: Errno) -> DataFileError {
    match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(st) if FileType::from_raw_mode(st.st_mode) == FileType::Symlink => {
            DataFileError::Symlink {
                path: full.to_path_buf(),
                link: at.to_path_buf(),
            }
        }
        Ok(_) => DataFileError::NotADirectory {
            path: at.to_path_buf(),
        },
        Err(_) => DataFileError::io(at, "open its directory", e),
    }
}

/// How a file is opened.
#[derive(Debug, Clone, Copy)]
enum Access {
    Read,
    Write,
    Append { create: Option<u32> },
}

/// A directory opened by walking from a trusted one: what is done in it is done through
/// its descriptor.
#[derive(Debug)]
pub struct DataDir {
    fd: OwnedFd,
    path: PathBuf,
}

impl DataDir {
    /// Opens a trusted directory (one from the config or the command line: followed).
    pub fn open(path: &Path) -> Result<DataDir, DataFileError> {
        let fd = rustix::fs::open(path, dir_flags(), Mode::empty()).map_err(|e| match e {
            Errno::NOENT => DataFileError::NotFound {
                path: path.to_path_buf(),
            },
            Errno::NOTDIR => DataFileError::NotADirectory {
                path: path.to_path_buf(),
            },
            e => DataFileError::io(path, "open", e),
        })?;
        Ok(DataDir {
            fd,
            path: path.to_path_buf(),
        })
    }

    /// The directory's path (for messages).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The directory's device and inode.
    pub fn identity(&self) -> Result<(u64, u64), DataFileError> {
        let st =
            rustix::fs::fstat(&self.fd).map_err(|e| DataFileError::io(&self.path, "inspect", e))?;
        Ok((st.st_dev as u64, st.st_ino as u64))
    }

    /// Opens `name` (a plain name in this directory) as a regular file, never through a
    /// symlink and never blocking on a FIFO.
    fn open_file(
        &self,
        name: &OsStr,
        full: &Path,
        access: Access,
    ) -> Result<DataFile, DataFileError> {
        open_at(self.fd.as_fd(), name, full, access)
    }

    /// Renames `from` to `to`, both plain names in this directory (never through a link:
    /// `renameat` moves a link itself, not its target).
    pub fn rename(&self, from: &OsStr, to: &OsStr) -> std::io::Result<()> {
        rustix::fs::renameat(&self.fd, from, &self.fd, to).map_err(Into::into)
    }

    /// Renames `from` to `to` in this directory only if nothing is called `to` yet
    /// (`AlreadyExists` otherwise): `renameat2(RENAME_NOREPLACE)`, or where the filesystem
    /// lacks it, a check and a plain rename (under the caller's lock).
    pub fn rename_no_replace(&self, from: &OsStr, to: &OsStr) -> std::io::Result<()> {
        match rustix::fs::renameat_with(
            &self.fd,
            from,
            &self.fd,
            to,
            rustix::fs::RenameFlags::NOREPLACE,
        ) {
            Ok(()) => Ok(()),
            Err(Errno::INVAL | Errno::NOSYS) => {
                if self.kind_of(to)?.is_some() {
                    return Err(std::io::Error::from(std::io::ErrorKind::AlreadyExists));
                }
                self.rename(from, to)
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Moves `from` of this directory to `to` of `dest` (same filesystem) only if nothing
    /// is called `to` there yet: `renameat2(RENAME_NOREPLACE)` (`AlreadyExists` otherwise).
    pub fn move_no_replace(&self, from: &OsStr, dest: &DataDir, to: &OsStr) -> std::io::Result<()> {
        rustix::fs::renameat_with(
            &self.fd,
            from,
            &dest.fd,
            to,
            rustix::fs::RenameFlags::NOREPLACE,
        )
        .map_err(Into::into)
    }

    /// Removes the file `name` of this directory (a link itself, never its target).
    pub fn unlink(&self, name: &OsStr) -> std::io::Result<()> {
        rustix::fs::unlinkat(&self.fd, name, AtFlags::empty()).map_err(Into::into)
    }

    /// What is at `name` in this directory, without following a link.
    pub fn kind_of(&self, name: &OsStr) -> std::io::Result<Option<FileType>> {
        match rustix::fs::statat(&self.fd, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => Ok(Some(FileType::from_raw_mode(st.st_mode))),
            Err(Errno::NOENT) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// Creates `name` for writing with `mode` (before the umask) only if nothing is there
    /// (`O_EXCL`, never through a link).
    pub fn create_exclusive(&self, name: &OsStr, mode: u32) -> std::io::Result<File> {
        let fd = rustix::fs::openat(
            &self.fd,
            name,
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(mode as _),
        )?;
        Ok(File::from(fd))
    }

    /// Makes the renames and removals in this directory durable.
    pub fn sync(&self) -> std::io::Result<()> {
        rustix::fs::fsync(&self.fd).map_err(Into::into)
    }

    /// Creates the file `name` with exactly `mode` only if nothing is there (`O_EXCL`,
    /// never through a link), writes `bytes` and syncs it and the directory. `Ok(false)`:
    /// something already existed.
    pub fn create_new(&self, name: &OsStr, bytes: &[u8], mode: u32) -> std::io::Result<bool> {
        use std::io::Write;
        let fd = match rustix::fs::openat(
            &self.fd,
            name,
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(mode as _),
        ) {
            Ok(fd) => fd,
            Err(Errno::EXIST) => return Ok(false),
            Err(e) => return Err(e.into()),
        };
        let written = (|| {
            rustix::fs::fchmod(&fd, Mode::from_raw_mode(mode as _))?;
            let mut f = File::from(fd);
            f.write_all(bytes)?;
            f.sync_all()
        })();
        if let Err(e) = written {
            let _ = self.unlink(name);
            return Err(e);
        }
        self.sync()?;
        Ok(true)
    }
}

/// Opens `name` relative to `dir` (its last component never followed) as a regular file,
/// never blocking on a FIFO; `full` names it in errors.
fn open_at(
    dir: std::os::fd::BorrowedFd<'_>,
    name: &OsStr,
    full: &Path,
    access: Access,
) -> Result<DataFile, DataFileError> {
    // Refuse what is not a regular file before opening it: opening a device can have
    // effects of its own. (The `fstat` after the open is what decides.)
    match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(st) => match FileType::from_raw_mode(st.st_mode) {
            FileType::RegularFile => {}
            FileType::Symlink => {
                return Err(DataFileError::Symlink {
                    path: full.to_path_buf(),
                    link: full.to_path_buf(),
                })
            }
            t => {
                return Err(DataFileError::NotRegular {
                    path: full.to_path_buf(),
                    what: type_name(t),
                })
            }
        },
        Err(Errno::NOENT) if matches!(access, Access::Append { create: Some(_) }) => {}
        Err(Errno::NOENT) => {
            return Err(DataFileError::NotFound {
                path: full.to_path_buf(),
            })
        }
        Err(e) => return Err(DataFileError::io(full, "inspect", e)),
    }
    let base = OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC;
    let (flags, mode, action) = match access {
        Access::Read => (OFlags::RDONLY, 0, "read"),
        Access::Write => (OFlags::WRONLY, 0, "write"),
        Access::Append { create: None } => (OFlags::RDWR | OFlags::APPEND, 0, "append"),
        Access::Append { create: Some(m) } => {
            (OFlags::RDWR | OFlags::APPEND | OFlags::CREATE, m, "append")
        }
    };
    let fd = rustix::fs::openat(dir, name, base | flags, Mode::from_raw_mode(mode as _)).map_err(
        |e| match e {
            Errno::LOOP | Errno::MLINK => DataFileError::Symlink {
                path: full.to_path_buf(),
                link: full.to_path_buf(),
            },
            Errno::NXIO => DataFileError::NotRegular {
                path: full.to_path_buf(),
                what: "a FIFO",
            },
            Errno::ISDIR => DataFileError::NotRegular {
                path: full.to_path_buf(),
                what: "a directory",
            },
            Errno::NOENT => DataFileError::NotFound {
                path: full.to_path_buf(),
            },
            e => DataFileError::io(full, action, e),
        },
    )?;
    let st = rustix::fs::fstat(&fd).map_err(|e| DataFileError::io(full, "inspect", e))?;
    let t = FileType::from_raw_mode(st.st_mode);
    if t != FileType::RegularFile {
        return Err(DataFileError::NotRegular {
            path: full.to_path_buf(),
            what: type_name(t),
        });
    }
    // Regular files ignore O_NONBLOCK; cleared all the same, for what reads them next.
    if let Ok(fl) = rustix::fs::fcntl_getfl(&fd) {
        let _ = rustix::fs::fcntl_setfl(&fd, fl - OFlags::NONBLOCK);
    }
    Ok(DataFile {
        file: File::from(fd),
        path: full.to_path_buf(),
        facts: FileFacts::of(&st),
    })
}

/// What `stat` says of a file (a link itself, not its target).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileFacts {
    /// Its type.
    pub kind: FileType,
    /// Its size in bytes.
    pub size: u64,
    /// Its permission bits (`mode & 0o7777`).
    pub mode: u32,
    /// The device it is on.
    pub dev: u64,
    /// Its inode.
    pub ino: u64,
}

impl FileFacts {
    // The `stat` fields' types differ by platform (`st_mode` is 16 bits on macOS).
    #[allow(clippy::unnecessary_cast)]
    fn of(st: &rustix::fs::Stat) -> FileFacts {
        FileFacts {
            kind: FileType::from_raw_mode(st.st_mode),
            size: st.st_size as u64,
            mode: (st.st_mode as u32) & 0o7777,
            dev: st.st_dev as u64,
            ino: st.st_ino as u64,
        }
    }
}

/// A regular data file, open, with the size it had when opened.
#[derive(Debug)]
pub struct DataFile {
    file: File,
    path: PathBuf,
    facts: FileFacts,
}

impl DataFile {
    /// The open file, for good.
    pub fn into_file(self) -> File {
        self.file
    }

    /// Its path (for messages).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Its size when it was opened.
    pub fn size(&self) -> u64 {
        self.facts.size
    }

    /// What `fstat` said when it was opened.
    pub fn facts(&self) -> FileFacts {
        self.facts
    }

    /// Reads it from the start, up to the size it had when opened (a file that grows
    /// meanwhile is read as it was; one that shrinks, to its new end).
    pub fn read_to_end(self) -> Result<Vec<u8>, DataFileError> {
        let size = self.facts.size;
        let mut out = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
        let path = self.path;
        (&self.file)
            .take(size)
            .read_to_end(&mut out)
            .map_err(|source| DataFileError::Io {
                path,
                action: "read",
                source,
            })?;
        Ok(out)
    }

    /// Reads it whole when it is at most `limit` bytes; `what` names its kind.
    pub fn read_limited(self, limit: u64, what: &'static str) -> Result<Vec<u8>, DataFileError> {
        if self.facts.size > limit {
            return Err(DataFileError::TooLarge {
                path: self.path,
                size: self.facts.size,
                limit,
                what,
            });
        }
        self.read_to_end()
    }
}

/// Opens a file that a trusted source named (the store, the config) for reading: its
/// symlinks are followed as given ([`DataPath::given`]), but it must be a regular file and
/// is opened without blocking (a FIFO or a device is refused, never read).
pub fn open_named(path: &Path) -> Result<DataFile, DataFileError> {
    DataPath::given(path).open_read().map_err(|e| e.named(path))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn mkfifo(p: &Path) {
        rustix::fs::mknodat(
            rustix::fs::CWD,
            p,
            FileType::Fifo,
            Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
    }

    #[test]
    fn plain_names_only() {
        let root = Path::new("/s");
        assert_eq!(
            DataPath::beneath(root, Path::new("a.jsonl"))
                .unwrap()
                .path(),
            Path::new("/s/a.jsonl")
        );
        let d = DataPath::beneath(root, Path::new("sub//x.jsonl")).unwrap();
        assert_eq!(d.path(), Path::new("/s/sub/x.jsonl"));
        assert_eq!(d.root(), root);
        assert_eq!(d.rel(), Path::new("sub/x.jsonl"));
        for bad in ["../x", "a/../b", "./a", "/etc/passwd", "", "a/"] {
            assert!(
                matches!(
                    DataPath::beneath(root, Path::new(bad)),
                    Err(DataFileError::Escapes { .. })
                ),
                "{bad:?}"
            );
        }
        let top = DataPath::beneath(Path::new("/"), Path::new("x")).unwrap();
        assert_eq!((top.path(), top.root()), (Path::new("/x"), Path::new("/")));
    }

    #[test]
    fn symlinks_below_the_root_are_refused_for_reads_and_writes() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().join("sessions");
        let outside = d.path().join("outside");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("victim.jsonl"), "secret\n").unwrap();
        symlink(&outside, root.join("lnk")).unwrap();
        symlink(outside.join("victim.jsonl"), root.join("abc.jsonl")).unwrap();
        let through = DataPath::beneath(&root, Path::new("lnk/victim.jsonl")).unwrap();
        let link = DataPath::beneath(&root, Path::new("abc.jsonl")).unwrap();
        for p in [&through, &link] {
            assert!(matches!(p.open_read(), Err(DataFileError::Symlink { .. })));
            assert!(matches!(
                p.open_append(Some(0o600)),
                Err(DataFileError::Symlink { .. })
            ));
            assert!(matches!(p.check(), Err(DataFileError::Symlink { .. })));
            assert_eq!(p.open_read().unwrap_err().exit_code(), exit::DATA_ERR);
        }
        assert_eq!(
            std::fs::read_to_string(outside.join("victim.jsonl")).unwrap(),
            "secret\n"
        );
        // A real subdirectory is fine; a missing one is "not found".
        std::fs::create_dir(root.join("sub")).unwrap();
        std::fs::write(root.join("sub/x.jsonl"), "x\n").unwrap();
        let ok = DataPath::beneath(&root, Path::new("sub/x.jsonl")).unwrap();
        assert_eq!(ok.read().unwrap(), b"x\n");
        let gone = DataPath::beneath(&root, Path::new("nope/x.jsonl")).unwrap();
        assert!(gone.open_read().unwrap_err().is_not_found());
        assert_eq!(gone.kind().unwrap(), None);
        // The root itself may be reached through a link (the admin's choice).
        symlink(&root, d.path().join("alias")).unwrap();
        let via = DataPath::beneath(&d.path().join("alias"), Path::new("sub/x.jsonl")).unwrap();
        assert_eq!(via.read().unwrap(), b"x\n");
    }

    #[test]
    fn fifos_and_devices_are_refused_without_blocking() {
        let d = tempfile::tempdir().unwrap();
        mkfifo(&d.path().join("f.jsonl"));
        let fifo = DataPath::beneath(d.path(), Path::new("f.jsonl")).unwrap();
        let e = fifo.open_read().unwrap_err();
        assert!(
            matches!(e, DataFileError::NotRegular { what: "a FIFO", .. }),
            "{e}"
        );
        assert!(matches!(
            fifo.open_append(None),
            Err(DataFileError::NotRegular { .. })
        ));
        assert!(matches!(
            open_named(&d.path().join("f.jsonl")),
            Err(DataFileError::NotRegular { what: "a FIFO", .. })
        ));
        // A link to /dev/zero named by a trusted source is followed, and refused.
        symlink("/dev/zero", d.path().join("sessions.json")).unwrap();
        let e = open_named(&d.path().join("sessions.json")).unwrap_err();
        assert!(matches!(
            e,
            DataFileError::NotRegular {
                what: "a character device",
                ..
            }
        ));
        std::fs::create_dir(d.path().join("dir.jsonl")).unwrap();
        let dir = DataPath::beneath(d.path(), Path::new("dir.jsonl")).unwrap();
        assert!(matches!(
            dir.open_read(),
            Err(DataFileError::NotRegular {
                what: "a directory",
                ..
            })
        ));
    }

    #[test]
    fn reads_are_bounded() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("a"), vec![b'x'; 100]).unwrap();
        let p = DataPath::beneath(d.path(), Path::new("a")).unwrap();
        assert_eq!(p.read_small(100, "a test file").unwrap().len(), 100);
        assert!(matches!(
            p.read_small(99, "a test file"),
            Err(DataFileError::TooLarge { size: 100, .. })
        ));
        // Growth after the open is not chased.
        let f = p.open_read().unwrap();
        let mut w = std::fs::OpenOptions::new()
            .append(true)
            .open(d.path().join("a"))
            .unwrap();
        std::io::Write::write_all(&mut w, b"more").unwrap();
        assert_eq!(f.read_to_end().unwrap().len(), 100);
    }

    #[test]
    fn directory_operations_never_follow() {
        let d = tempfile::tempdir().unwrap();
        let outside = d.path().join("outside");
        std::fs::write(&outside, "keep").unwrap();
        let root = d.path().join("s");
        std::fs::create_dir(&root).unwrap();
        symlink(&outside, root.join("l.jsonl")).unwrap();
        let dir = DataDir::open(&root).unwrap();
        dir.rename(OsStr::new("l.jsonl"), OsStr::new("l.jsonl.deleted.x"))
            .unwrap();
        assert_eq!(
            dir.kind_of(OsStr::new("l.jsonl.deleted.x")).unwrap(),
            Some(FileType::Symlink)
        );
        dir.unlink(OsStr::new("l.jsonl.deleted.x")).unwrap();
        assert_eq!(std::fs::read_to_string(&outside).unwrap(), "keep");
        symlink(&outside, root.join("new")).unwrap();
        assert!(!dir.create_new(OsStr::new("new"), b"x", 0o600).unwrap());
        assert_eq!(std::fs::read_to_string(&outside).unwrap(), "keep");
        assert!(dir.create_new(OsStr::new("fresh"), b"x", 0o600).unwrap());
    }
}
