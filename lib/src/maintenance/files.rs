//! The files maintenance sees in a sessions directory (`readSessionsDirFiles`,
//! `readSessionPromptBlobFiles`) and the safe primitives it uses to change them.
//!
//! Scans list regular files only (symlinks and directories are not files here, as in the
//! gateway). Removal and renaming never follow a symlink out of the sessions directory:
//! a link is removed as a link, and only when its target is a regular file inside.

use std::collections::{HashMap, HashSet};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use regex::Regex;

use super::artifacts::FxBuild;
use std::ffi::CString;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};

use super::dir_snapshot::{lstat_at, open_dir, DirSnapshot};
use super::paths::{name_in_dir, relative_inside};

/// One regular file seen by a scan.
#[derive(Debug, Clone)]
pub struct SessionFile {
    /// The file as found (`<dir>/<name>`, with the real directory).
    pub path: PathBuf,
    /// Its canonical path (what the gateway compares).
    pub canonical: PathBuf,
    /// The file name.
    pub name: String,
    /// Size in bytes.
    pub size: u64,
    /// Modification time in ms since the epoch, with sub-millisecond precision.
    pub mtime_ms: f64,
}

/// `stat.mtimeMs` as Node computes it.
pub fn mtime_ms(m: &std::fs::Metadata) -> f64 {
    m.mtime() as f64 * 1000.0 + m.mtime_nsec() as f64 / 1e6
}

/// The names of the regular files directly inside `real_dir`, in directory order,
/// without a `stat` each (names that are not UTF-8 are skipped: the gateway cannot stat
/// them either).
pub fn list_regular_files(real_dir: &Path) -> Vec<String> {
    let snap = DirSnapshot::read(real_dir);
    snap.files().map(|i| snap.name(i).to_string()).collect()
}

/// One regular file directly inside `real_dir`, with its size and mtime.
pub fn stat_file(real_dir: &Path, name: &str) -> Option<SessionFile> {
    let path = real_dir.join(name);
    let meta = std::fs::metadata(&path).ok()?;
    meta.is_file().then(|| SessionFile {
        canonical: path.clone(),
        path,
        name: name.to_string(),
        size: meta.len(),
        mtime_ms: mtime_ms(&meta),
    })
}

/// The regular files directly inside `real_dir`, in directory order, each with its size
/// and mtime (`readSessionsDirFiles`).
pub fn read_sessions_dir_files(real_dir: &Path) -> Vec<SessionFile> {
    let snap = DirSnapshot::read(real_dir);
    dir_files(&snap, None)
        .into_iter()
        .map(|f| f.to_session_file(real_dir))
        .collect()
}

/// One regular file of a sessions-directory listing, by name (its path is
/// `<real dir>/<name>`, which is also its canonical path).
#[derive(Debug, Clone, Copy)]
pub struct DirFile<'a> {
    /// The file name (the new name of a file a plan renames).
    pub name: &'a str,
    /// Size in bytes.
    pub size: u64,
    /// Modification time in ms since the epoch.
    pub mtime_ms: f64,
}

impl DirFile<'_> {
    /// The file as a [`SessionFile`] of the directory `real_dir`.
    pub fn to_session_file(&self, real_dir: &Path) -> SessionFile {
        let path = real_dir.join(self.name);
        SessionFile {
            canonical: path.clone(),
            path,
            name: self.name.to_string(),
            size: self.size,
            mtime_ms: self.mtime_ms,
        }
    }
}

/// `readSessionsDirFiles` on a listing: the regular files with their size and mtime, in
/// directory order, as `view` (planned changes) leaves them when given.
pub fn dir_files<'a>(snap: &'a DirSnapshot, view: Option<&'a DirOverlay>) -> Vec<DirFile<'a>> {
    let view = view.filter(|v| !v.is_empty());
    let mut buf = snap.dir().to_path_buf();
    let mut out = Vec::with_capacity(snap.len());
    for i in snap.files() {
        let Some(st) = snap.stat(i) else { continue };
        let mut name = snap.name(i);
        if let Some(v) = view {
            buf.push(name);
            let gone = v.removed.contains(buf.as_path());
            let to = v.renamed.get(buf.as_path());
            buf.pop();
            if gone {
                continue;
            }
            if let Some(to) = to {
                name = to.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            }
        }
        out.push(DirFile {
            name,
            size: st.size,
            mtime_ms: st.mtime_ms,
        });
    }
    out
}

fn blob_name_res() -> &'static (Regex, Regex, Regex) {
    static RE: OnceLock<(Regex, Regex, Regex)> = OnceLock::new();
    RE.get_or_init(|| {
        (
            Regex::new(r"^[a-f0-9]{2}$").expect("static regex"),
            Regex::new(r"^[a-f0-9]{64}\.txt$").expect("static regex"),
            Regex::new(
                r"^[a-f0-9]{64}\.txt\.(?:\d+\.)?[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.tmp$",
            )
            .expect("static regex"),
        )
    })
}

/// Whether `name` is a prompt-blob temp file (`<hash>.txt.[<pid>.]<uuid>.tmp`).
pub fn is_prompt_blob_temp(name: &str) -> bool {
    blob_name_res().2.is_match(name)
}

/// The hash a prompt-blob file name carries (`<64 hex>.txt`).
pub fn prompt_blob_hash(name: &str) -> Option<&str> {
    blob_name_res().1.is_match(name).then(|| &name[..64])
}

/// The prompt-blob files (and blob temps) under `<real_dir>/skills-prompts/sha256/<xx>/`.
pub fn read_prompt_blob_files(real_dir: &Path) -> Vec<SessionFile> {
    let (prefix_re, blob_re, temp_re) = blob_name_res();
    let root = real_dir.join("skills-prompts").join("sha256");
    let Ok(rd) = std::fs::read_dir(&root) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for prefix in rd.flatten() {
        if !prefix.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        let Ok(pname) = prefix.file_name().into_string() else {
            continue;
        };
        if !prefix_re.is_match(&pname) {
            continue;
        }
        let pdir = root.join(&pname);
        let real_pdir = std::fs::canonicalize(&pdir).unwrap_or_else(|_| pdir.clone());
        let Ok(inner) = std::fs::read_dir(&pdir) else {
            continue;
        };
        for blob in inner.flatten() {
            if !blob.file_type().is_ok_and(|t| t.is_file()) {
                continue;
            }
            let Ok(name) = blob.file_name().into_string() else {
                continue;
            };
            if !blob_re.is_match(&name) && !temp_re.is_match(&name) {
                continue;
            }
            let Ok(meta) = blob.metadata() else { continue };
            if !meta.is_file() {
                continue;
            }
            out.push(SessionFile {
                path: pdir.join(&name),
                canonical: real_pdir.join(&name),
                name,
                size: meta.len(),
                mtime_ms: mtime_ms(&meta),
            });
        }
    }
    out
}

/// Changes planned in a sessions directory but not made yet (renames to archives,
/// removals), so that a later step can plan on the directory as it will be: scans are
/// passed through [`DirOverlay::apply`]. Paths are canonical.
#[derive(Debug, Clone, Default)]
pub struct DirOverlay {
    renamed: HashMap<PathBuf, PathBuf, FxBuild>,
    removed: HashSet<PathBuf, FxBuild>,
}

impl DirOverlay {
    /// Plans a rename of `from` to `to`.
    pub fn rename(&mut self, from: &Path, to: &Path) {
        self.renamed.insert(from.to_path_buf(), to.to_path_buf());
    }

    /// Plans the removal of `path`.
    pub fn remove(&mut self, path: &Path) {
        self.removed.insert(path.to_path_buf());
    }

    /// Whether nothing is planned.
    pub fn is_empty(&self) -> bool {
        self.renamed.is_empty() && self.removed.is_empty()
    }

    /// Whether `path` will be gone (removed or renamed away).
    pub fn is_gone(&self, path: &Path) -> bool {
        self.removed.contains(path) || self.renamed.contains_key(path)
    }

    /// The new paths of the files renamed into `dir`.
    pub fn renamed_into<'a>(&'a self, dir: &'a Path) -> impl Iterator<Item = &'a PathBuf> + 'a {
        self.renamed
            .values()
            .filter(move |to| to.parent() == Some(dir))
    }

    /// The files of a scan as they will be: removed ones dropped, renamed ones under their
    /// new name (same size and mtime, same place in the scan order).
    pub fn apply(&self, files: Vec<SessionFile>) -> Vec<SessionFile> {
        if self.renamed.is_empty() && self.removed.is_empty() {
            return files;
        }
        files
            .into_iter()
            .filter(|f| !self.removed.contains(&f.canonical))
            .map(|f| match self.renamed.get(&f.canonical) {
                Some(to) => SessionFile {
                    path: to.clone(),
                    canonical: to.clone(),
                    name: to
                        .file_name()
                        .map(|n| n.to_string_lossy().into_owned())
                        .unwrap_or_default(),
                    ..f
                },
                None => f,
            })
            .collect()
    }
}

/// What happened to one file, for `--verbose` and the report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileEvent {
    /// A transcript was renamed to an archive name.
    Archived {
        /// The transcript.
        from: PathBuf,
        /// The archive.
        to: PathBuf,
    },
    /// A file was deleted.
    Removed {
        /// The file.
        path: PathBuf,
        /// Which rule removed it.
        reason: RemovalReason,
        /// Its size.
        bytes: u64,
    },
    /// A file the gateway would touch was left alone on purpose.
    Skipped {
        /// The file.
        path: PathBuf,
        /// Why.
        why: String,
    },
    /// A removal or rename failed; the run went on.
    Failed {
        /// The file.
        path: PathBuf,
        /// The error.
        error: String,
    },
}

/// Why a file was deleted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RemovalReason {
    /// A trajectory sidecar of a removed session.
    Trajectory,
    /// An archive older than its retention.
    ArchiveRetention,
    /// The disk budget.
    DiskBudget,
    /// An unreferenced artifact (orphan transcript, checkpoint, trajectory, temp, blob).
    Unreferenced,
}

impl RemovalReason {
    /// A short label.
    pub fn as_str(self) -> &'static str {
        match self {
            RemovalReason::Trajectory => "trajectory sidecar of a removed session",
            RemovalReason::ArchiveRetention => "archive retention",
            RemovalReason::DiskBudget => "disk budget",
            RemovalReason::Unreferenced => "unreferenced artifact",
        }
    }
}

/// The safe file primitives of one sessions directory: every change is checked to stay
/// inside it, links are never followed out of it, and every change is recorded.
#[derive(Debug)]
pub struct DirGuard {
    real_dir: PathBuf,
    /// The directory, open: files directly in it are changed with `*at` calls (one
    /// lookup each, never through a path that could change meanwhile).
    fd: Option<OwnedFd>,
    /// What was done, in order.
    pub events: Vec<FileEvent>,
    touched_dirs: HashSet<PathBuf>,
}

/// A file that may be removed: its size, and whether it is a link to it.
enum Removable {
    Yes(u64),
    No,
}

/// What `lstat` says about a path.
#[derive(Clone, Copy, PartialEq, Eq)]
enum LinkStat {
    File(u64),
    Symlink,
    Other,
}

impl DirGuard {
    /// A guard for the (real) sessions directory.
    pub fn new(real_dir: &Path) -> Self {
        DirGuard {
            real_dir: real_dir.to_path_buf(),
            fd: open_dir(real_dir),
            events: Vec::new(),
            touched_dirs: HashSet::new(),
        }
    }

    /// The open directory and the C name of `p` when `p` lies directly in it.
    fn at(&self, p: &Path) -> Option<(RawFd, CString)> {
        let fd = self.fd.as_ref()?.as_raw_fd();
        let name = name_in_dir(&self.real_dir, p)?;
        Some((fd, CString::new(name).ok()?))
    }

    /// `lstat(p)`; `None` when it fails.
    fn lstat(&self, p: &Path) -> Option<LinkStat> {
        let kind = |regular: bool, link: bool, size: u64| {
            if regular {
                LinkStat::File(size)
            } else if link {
                LinkStat::Symlink
            } else {
                LinkStat::Other
            }
        };
        match self.at(p) {
            Some((fd, name)) => {
                let st = lstat_at(fd, &name)?;
                let fmt = st.st_mode & libc::S_IFMT;
                Some(kind(
                    fmt == libc::S_IFREG,
                    fmt == libc::S_IFLNK,
                    st.st_size as u64,
                ))
            }
            None => {
                let m = std::fs::symlink_metadata(p).ok()?;
                Some(kind(m.is_file(), m.file_type().is_symlink(), m.len()))
            }
        }
    }

    /// Whether `p` (lexically) lies inside the sessions directory.
    pub fn contains(&self, p: &Path) -> bool {
        // No `..` anywhere below the directory either: `a/../../x` leaves it once `a`
        // exists (or is a symlink), whatever the text looks like (e.g. a path read back
        // from a pending-archive journal).
        relative_inside(&self.real_dir, p)
            && p.strip_prefix(&self.real_dir).is_ok_and(|rest| {
                rest.components()
                    .all(|c| matches!(c, std::path::Component::Normal(_)))
            })
    }

    fn skip(&mut self, path: &Path, why: &str) {
        self.events.push(FileEvent::Skipped {
            path: path.to_path_buf(),
            why: why.to_string(),
        });
    }

    /// Checks that `path` is a regular file inside the directory, or a link inside it to
    /// a regular file inside it; returns the size the gateway would count.
    fn check(&mut self, path: &Path) -> Removable {
        if !self.contains(path) {
            self.skip(path, "outside the sessions directory");
            return Removable::No;
        }
        match self.lstat(path) {
            Some(LinkStat::File(size)) => return Removable::Yes(size),
            Some(LinkStat::Symlink) => {}
            _ => return Removable::No,
        }
        match std::fs::canonicalize(path) {
            Ok(target) if self.contains(&target) => match std::fs::metadata(&target) {
                Ok(m) if m.is_file() => Removable::Yes(m.len()),
                _ => Removable::No,
            },
            Ok(_) => {
                self.skip(path, "symlink out of the sessions directory: not followed");
                Removable::No
            }
            Err(_) => Removable::No,
        }
    }

    fn unlink(&self, path: &Path) -> std::io::Result<()> {
        match self.at(path) {
            Some((fd, name)) => {
                // SAFETY: `name` is a valid C string; `fd` an open directory.
                let r = unsafe { libc::unlinkat(fd, name.as_ptr(), 0) };
                if r == 0 {
                    Ok(())
                } else {
                    Err(std::io::Error::last_os_error())
                }
            }
            None => std::fs::remove_file(path),
        }
    }

    fn rename(&self, from: &Path, to: &Path) -> std::io::Result<()> {
        match (self.at(from), self.at(to)) {
            (Some((fd, a)), Some((_, b))) => {
                // SAFETY: valid C strings; `fd` an open directory.
                let r = unsafe { libc::renameat(fd, a.as_ptr(), fd, b.as_ptr()) };
                if r == 0 {
                    Ok(())
                } else {
                    Err(std::io::Error::last_os_error())
                }
            }
            _ => std::fs::rename(from, to),
        }
    }

    /// Removes a file (`removeFileIfExists`): returns the bytes the gateway counts (0 for
    /// a missing file, an empty file, or one left alone for safety).
    pub fn remove(&mut self, path: &Path, reason: RemovalReason) -> u64 {
        let Removable::Yes(size) = self.check(path) else {
            return 0;
        };
        match self.unlink(path) {
            Ok(()) => {
                self.mark_dir(path);
                self.events.push(FileEvent::Removed {
                    path: path.to_path_buf(),
                    reason,
                    bytes: size,
                });
                size
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => 0,
            Err(e) => {
                self.events.push(FileEvent::Failed {
                    path: path.to_path_buf(),
                    error: e.to_string(),
                });
                0
            }
        }
    }

    /// Whether `path` is a regular file (not a link) inside the directory
    /// (`isRegularNonSymlinkFile` plus containment).
    pub fn is_regular_inside(&self, path: &Path) -> bool {
        self.contains(path) && matches!(self.lstat(path), Some(LinkStat::File(_)))
    }

    /// Removes a regular, non-link file inside the directory (trajectory sidecars).
    pub fn remove_regular(&mut self, path: &Path, reason: RemovalReason) -> bool {
        if !self.is_regular_inside(path) {
            return false;
        }
        self.remove(path, reason);
        true
    }

    /// Renames an existing regular file inside the directory to `to` (same directory).
    pub fn archive(&mut self, from: &Path, to: &Path) -> bool {
        if !self.contains(from) || !self.contains(to) {
            self.skip(from, "outside the sessions directory");
            return false;
        }
        if !matches!(self.lstat(from), Some(LinkStat::File(_))) {
            return false;
        }
        match self.rename(from, to) {
            Ok(()) => {
                self.mark_dir(from);
                self.events.push(FileEvent::Archived {
                    from: from.to_path_buf(),
                    to: to.to_path_buf(),
                });
                true
            }
            Err(e) => {
                self.events.push(FileEvent::Failed {
                    path: from.to_path_buf(),
                    error: e.to_string(),
                });
                false
            }
        }
    }

    fn mark_dir(&mut self, p: &Path) {
        if let Some(d) = p.parent() {
            if !self.touched_dirs.contains(d) {
                self.touched_dirs.insert(d.to_path_buf());
            }
        }
    }

    /// Makes every rename and removal so far durable (one `fsync` per directory).
    pub fn sync(&mut self) {
        for d in self.touched_dirs.drain() {
            let _ = crate::atomic_file::sync_dir(&d);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scan_lists_regular_files_only() {
        let d = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(d.path()).unwrap();
        std::fs::write(root.join("a.jsonl"), "abc").unwrap();
        std::fs::create_dir(root.join("sub")).unwrap();
        std::os::unix::fs::symlink(root.join("a.jsonl"), root.join("l.jsonl")).unwrap();
        let files = read_sessions_dir_files(&root);
        assert_eq!(files.len(), 1);
        assert_eq!(files[0].name, "a.jsonl");
        assert_eq!(files[0].size, 3);
        let h = "a".repeat(64);
        let bdir = root.join("skills-prompts/sha256/aa");
        std::fs::create_dir_all(&bdir).unwrap();
        std::fs::write(bdir.join(format!("{h}.txt")), "p").unwrap();
        std::fs::write(bdir.join("notes.txt"), "p").unwrap();
        let blobs = read_prompt_blob_files(&root);
        assert_eq!(blobs.len(), 1);
        assert_eq!(prompt_blob_hash(&blobs[0].name), Some(h.as_str()));
    }

    #[test]
    fn never_follows_links_out() {
        let outside = tempfile::tempdir().unwrap();
        let target = outside.path().join("precious.txt");
        std::fs::write(&target, "keep me").unwrap();
        let d = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(d.path()).unwrap();
        let link = root.join("x.jsonl.deleted.2020-01-01T00-00-00.000Z");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let mut g = DirGuard::new(&root);
        assert_eq!(g.remove(&link, RemovalReason::ArchiveRetention), 0);
        assert!(target.exists() && std::fs::symlink_metadata(&link).is_ok());
        assert!(matches!(g.events[0], FileEvent::Skipped { .. }));
        assert_eq!(g.remove(&target, RemovalReason::Unreferenced), 0);
        assert!(target.exists());
        // A link inside to a file inside is removed as a link.
        std::fs::write(root.join("t"), "12345").unwrap();
        std::os::unix::fs::symlink(root.join("t"), root.join("l")).unwrap();
        assert_eq!(
            g.remove(&root.join("l"), RemovalReason::ArchiveRetention),
            5
        );
        assert!(root.join("t").exists());
        assert!(!g.remove_regular(&root.join("missing"), RemovalReason::Trajectory));
    }
}
