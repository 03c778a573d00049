//! The files maintenance sees in a sessions directory (`readSessionsDirFiles`,
//! `readSessionPromptBlobFiles`) and the safe primitives it uses to change them.
//!
//! Scans list regular files only (symlinks and directories are not files here, as in the
//! gateway). Removal and renaming never follow a symlink out of the sessions directory:
//! a link is removed as a link, and only when its target is a regular file inside.

use std::collections::{HashMap, HashSet};
use std::ffi::{OsStr, OsString};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::sync::OnceLock;

use foldhash::fast::FixedState;
use regex::Regex;

use std::ffi::{CStr, CString};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};

use super::dir_snapshot::{lstat_at, open_dir, DirSnapshot};
use super::paths::{name_in_dir, relative_inside};
use crate::fs::clean_path::is_clean_absolute;

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
    // An overlay over this very listing answers by place; any other, by path.
    let by_place = view.is_some_and(|v| v.is_over(snap));
    let mut buf = snap.dir().to_path_buf();
    let mut out = Vec::with_capacity(snap.len());
    for i in snap.files() {
        let Some(st) = snap.stat(i) else { continue };
        let mut name = snap.name(i);
        if let Some(v) = view {
            let fate = if by_place {
                v.fate_of_listed(i)
            } else {
                buf.push(name);
                let fate = v.fate(&buf);
                buf.pop();
                fate
            };
            match fate {
                Fate::Gone => continue,
                Fate::Kept => {}
                Fate::Renamed(to) => {
                    name = to.file_name().and_then(|n| n.to_str()).unwrap_or_default();
                }
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
/// passed through [`DirOverlay::apply`]. Paths are canonical; they are kept and compared
/// as their bytes, normalised as `Path` compares them ([`overlay_key`]; hashing a `Path`
/// parses its components each time). An overlay made [`DirOverlay::over`] a listing keeps
/// the plans of the listed names by their place in it (no source path hashed or copied),
/// and answers a listed file's fate by its place ([`dir_files`]).
#[derive(Debug, Clone, Default)]
pub struct DirOverlay {
    renamed: HashMap<OsString, PathBuf, FixedState>,
    removed: HashSet<OsString, FixedState>,
    listed: Option<ListedPlans>,
}

/// The plans of the names of one listing, by their place in it: every path directly in
/// the listed directory under a listed name is planned here, every other path in the
/// maps, so that each path has one home.
#[derive(Debug, Clone)]
struct ListedPlans {
    listing: Arc<DirSnapshot>,
    /// Per listed entry: [`REMOVED`], and `k + 1` in the other bits when renamed to
    /// `renamed_to[k]` (0: nothing planned).
    plans: Vec<u32>,
    renamed_to: Vec<PathBuf>,
    /// Per `renamed_to`, once [`DirOverlay::place_targets`] found it: the target's place
    /// + 1 (0: it has none); [`UNPLACED`] until then.
    target_places: Vec<u32>,
    /// How many entries have a plan.
    planned: usize,
}

/// A target whose place was not looked up yet.
const UNPLACED: u32 = u32::MAX;

/// The bit of a listed entry's plan that says it is removed.
const REMOVED: u32 = 1 << 31;

/// What a plan does to one file ([`DirOverlay::fate`]).
enum Fate<'a> {
    Gone,
    Kept,
    Renamed(&'a PathBuf),
}

/// A path as [`DirOverlay`] keys it: its bytes, with `//`, `/./` and a trailing `/`
/// normalised away as `Path` equality ignores them (a clean absolute path as it is).
fn overlay_key(p: &Path) -> std::borrow::Cow<'_, OsStr> {
    if is_clean_absolute(p) {
        std::borrow::Cow::Borrowed(p.as_os_str())
    } else {
        std::borrow::Cow::Owned(p.components().collect::<PathBuf>().into_os_string())
    }
}

impl ListedPlans {
    /// The place in the listing of the path keyed `key`: directly in the listed
    /// directory, under a listed name.
    fn place(&self, key: &OsStr) -> Option<usize> {
        use std::os::unix::ffi::OsStrExt;
        let dir = self.listing.dir().as_os_str().as_bytes();
        let name = key.as_bytes().strip_prefix(dir)?.strip_prefix(b"/")?;
        if name.is_empty() || name.contains(&b'/') {
            return None;
        }
        self.listing.lookup(name)
    }

    fn is_removed(&self, i: usize) -> bool {
        self.plans[i] & REMOVED != 0
    }

    fn renamed(&self, i: usize) -> Option<(&PathBuf, u32)> {
        match self.plans[i] & !REMOVED {
            0 => None,
            k => {
                let k = k as usize - 1;
                let place = self.target_places.get(k).copied().unwrap_or(UNPLACED);
                Some((&self.renamed_to[k], place))
            }
        }
    }

    fn set(&mut self, i: usize, plan: u32) {
        if self.plans[i] == 0 && plan != 0 {
            self.planned += 1;
        }
        self.plans[i] = plan;
    }

    /// Plans the rename of entry `i` to `to` unless it has a plan already (removed or
    /// renamed away); whether it was planned.
    fn rename_unless_planned(&mut self, i: usize, to: &Path) -> bool {
        if self.plans[i] != 0 {
            return false;
        }
        self.rename(i, to);
        true
    }

    fn rename(&mut self, i: usize, to: &Path) {
        match self.plans[i] & !REMOVED {
            0 => {
                self.renamed_to.push(to.to_path_buf());
                let k = self.renamed_to.len() as u32;
                self.set(i, self.plans[i] | k);
            }
            k => {
                let k = k as usize - 1;
                self.renamed_to[k] = to.to_path_buf();
                if let Some(place) = self.target_places.get_mut(k) {
                    *place = UNPLACED;
                }
            }
        }
    }
}

impl DirOverlay {
    /// An empty overlay that keeps the plans of `listing`'s names by their place in it
    /// (a listing of a directory whose path is not clean is not used so).
    pub fn over(listing: Arc<DirSnapshot>) -> Self {
        if !is_clean_absolute(listing.dir()) || listing.len() >= REMOVED as usize {
            return DirOverlay::default();
        }
        DirOverlay {
            listed: Some(ListedPlans {
                plans: vec![0; listing.len()],
                listing,
                renamed_to: Vec::new(),
                target_places: Vec::new(),
                planned: 0,
            }),
            ..Default::default()
        }
    }

    /// Looks up where the listing has each rename's target, once, for the fates asked
    /// for afterwards (a renamed file is gone when its target is removed).
    pub fn place_targets(&mut self) {
        let Some(listed) = self.listed.as_mut() else {
            return;
        };
        let known = listed.target_places.len();
        let mut places = std::mem::take(&mut listed.target_places);
        places.extend(listed.renamed_to[known..].iter().map(|to| {
            match listed.place(&overlay_key(to)) {
                Some(j) => j as u32 + 1,
                None => 0,
            }
        }));
        listed.target_places = places;
    }

    /// Whether this overlay keeps plans by their place in `listing`.
    fn is_over(&self, listing: &DirSnapshot) -> bool {
        self.listed
            .as_ref()
            .is_some_and(|l| std::ptr::eq(Arc::as_ptr(&l.listing), listing))
    }

    /// The place of `key` in the listing this overlay keeps plans by.
    fn place(&self, key: &OsStr) -> Option<usize> {
        self.listed.as_ref()?.place(key)
    }

    /// Plans a rename of `from` to `to`.
    pub fn rename(&mut self, from: &Path, to: &Path) {
        let key = overlay_key(from);
        match (self.place(&key), self.listed.as_mut()) {
            (Some(i), Some(listed)) => listed.rename(i, to),
            _ => {
                self.renamed.insert(key.into_owned(), to.to_path_buf());
            }
        }
    }

    /// Plans a rename of `from` to `to` unless `from` is gone already (removed or renamed
    /// away); returns whether it planned it. [`DirOverlay::is_gone`] then
    /// [`DirOverlay::rename`], hashing the path once.
    pub fn rename_unless_gone(&mut self, from: &Path, to: &Path) -> bool {
        let key = overlay_key(from);
        if let (Some(i), Some(listed)) = (self.place(&key), self.listed.as_mut()) {
            return listed.rename_unless_planned(i, to);
        }
        if self.removed.contains(&*key) {
            return false;
        }
        match self.renamed.entry(key.into_owned()) {
            std::collections::hash_map::Entry::Occupied(_) => false,
            std::collections::hash_map::Entry::Vacant(v) => {
                v.insert(to.to_path_buf());
                true
            }
        }
    }

    /// [`DirOverlay::rename_unless_gone`] of a file found at place `i` of `listing`: by
    /// that place when this overlay is over `listing` (nothing hashed).
    pub fn rename_listed_unless_gone(
        &mut self,
        listing: &DirSnapshot,
        i: usize,
        from: &Path,
        to: &Path,
    ) -> bool {
        if self.is_over(listing) && i < listing.len() {
            if let Some(listed) = self.listed.as_mut() {
                return listed.rename_unless_planned(i, to);
            }
        }
        self.rename_unless_gone(from, to)
    }

    /// Makes room for `more` renames.
    pub fn reserve_renames(&mut self, more: usize) {
        match self.listed.as_mut() {
            Some(listed) => listed.renamed_to.reserve(more),
            None => self.renamed.reserve(more),
        }
    }

    /// Plans the removal of `path`.
    pub fn remove(&mut self, path: &Path) {
        let key = overlay_key(path);
        match (self.place(&key), self.listed.as_mut()) {
            (Some(i), Some(listed)) => listed.set(i, listed.plans[i] | REMOVED),
            _ => {
                self.removed.insert(key.into_owned());
            }
        }
    }

    /// Whether nothing is planned.
    pub fn is_empty(&self) -> bool {
        self.renamed.is_empty()
            && self.removed.is_empty()
            && self.listed.as_ref().is_none_or(|l| l.planned == 0)
    }

    /// Whether `path` will be gone (removed or renamed away).
    pub fn is_gone(&self, path: &Path) -> bool {
        let key = overlay_key(path);
        match (self.place(&key), self.listed.as_ref()) {
            (Some(i), Some(listed)) => listed.plans[i] != 0,
            _ => self.removed.contains(&*key) || self.renamed.contains_key(&*key),
        }
    }

    /// Whether the removal of `path` is planned (under this name).
    fn is_removed(&self, path: &Path) -> bool {
        let key = overlay_key(path);
        match (self.place(&key), self.listed.as_ref()) {
            (Some(i), Some(listed)) => listed.is_removed(i),
            _ => self.removed.contains(&*key),
        }
    }

    /// What the plan does to the file `path`: removed (under its name, or under the name
    /// it is renamed to), renamed, or nothing.
    fn fate(&self, path: &Path) -> Fate<'_> {
        let key = overlay_key(path);
        match (self.place(&key), self.listed.as_ref()) {
            (Some(i), Some(_)) => self.fate_of_listed(i),
            _ => self.fate_of_unlisted(&key),
        }
    }

    /// [`DirOverlay::fate`] of the entry at place `i` of the listing this overlay keeps
    /// plans by.
    fn fate_of_listed(&self, i: usize) -> Fate<'_> {
        let Some(listed) = self.listed.as_ref() else {
            return Fate::Kept;
        };
        if listed.is_removed(i) {
            return Fate::Gone;
        }
        let target_removed = |to: &Path, place: u32| match place {
            UNPLACED => self.is_removed(to),
            0 => !self.removed.is_empty() && self.removed.contains(&*overlay_key(to)),
            j => listed.is_removed(j as usize - 1),
        };
        match listed.renamed(i) {
            Some((to, place)) if target_removed(to, place) => Fate::Gone,
            Some((to, _)) => Fate::Renamed(to),
            None => Fate::Kept,
        }
    }

    /// [`DirOverlay::fate`] of a path in its key form ([`overlay_key`]) that has no place
    /// in the listing.
    fn fate_of_unlisted(&self, key: &OsStr) -> Fate<'_> {
        if self.removed.contains(key) {
            return Fate::Gone;
        }
        match self.renamed.get(key) {
            Some(to) if self.is_removed(to) => Fate::Gone,
            Some(to) => Fate::Renamed(to),
            None => Fate::Kept,
        }
    }

    /// The new paths of the files renamed into `dir`.
    pub fn renamed_into<'a>(&'a self, dir: &'a Path) -> impl Iterator<Item = &'a PathBuf> + 'a {
        let listed = self.listed.iter().flat_map(|l| l.renamed_to.iter());
        listed
            .chain(self.renamed.values())
            .filter(move |to| to.parent() == Some(dir))
    }

    /// The files of a scan as they will be: removed ones dropped (under either name),
    /// renamed ones under their new name (same size and mtime, same place in the scan
    /// order).
    pub fn apply(&self, files: Vec<SessionFile>) -> Vec<SessionFile> {
        if self.is_empty() {
            return files;
        }
        files
            .into_iter()
            .filter_map(|f| match self.fate(&f.canonical) {
                Fate::Gone => None,
                Fate::Kept => Some(f),
                Fate::Renamed(to) => Some(SessionFile {
                    path: to.clone(),
                    canonical: to.clone(),
                    name: to
                        .file_name()
                        .map(|n| n.to_string_lossy().into_owned())
                        .unwrap_or_default(),
                    ..f
                }),
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
    /// The temp file of a store or journal write whose process is gone (killed): not
    /// counted in the gateway's report.
    DeadWriterTemp,
}

impl RemovalReason {
    /// A short label.
    pub fn as_str(self) -> &'static str {
        match self {
            RemovalReason::Trajectory => "trajectory sidecar of a removed session",
            RemovalReason::ArchiveRetention => "archive retention",
            RemovalReason::DiskBudget => "disk budget",
            RemovalReason::Unreferenced => "unreferenced artifact",
            RemovalReason::DeadWriterTemp => "temp file of a killed write",
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
    /// The directory last marked touched (most changes are in one directory).
    last_touched: Option<PathBuf>,
    /// Whether `real_dir` is clean and absolute (and not `/`): the names of the paths
    /// directly in it are then read from their bytes ([`DirGuard::plain_c_name`]).
    clean_dir: bool,
    /// The directory's changes being made durable ahead of [`DirGuard::sync`].
    syncing: Option<std::thread::JoinHandle<()>>,
}

/// The longest name of a directory entry (Linux's `NAME_MAX`).
const NAME_MAX: usize = 255;

/// What one removal found and did, before it is recorded: the removals of a batch run on
/// several threads, and their outcomes are recorded afterwards, in order.
#[derive(Debug)]
enum RemovalOutcome {
    /// Unlinked; the bytes the gateway counts.
    Removed(u64),
    /// Left alone on purpose (recorded as skipped).
    Skipped(&'static str),
    /// The unlink failed.
    Failed(std::io::Error),
    /// Nothing to remove: gone, not a file, or not the regular file required.
    Nothing,
}

/// What one rename did, before it is recorded.
#[derive(Debug)]
enum RenameOutcome {
    /// Renamed.
    Done,
    /// Left alone on purpose (recorded as skipped).
    Skipped(&'static str),
    /// Nothing to rename: the source is gone, or not a regular file.
    Nothing,
    /// The rename failed.
    Failed(std::io::Error),
}

/// One removal of a batch ([`DirGuard::archive_and_remove`]).
#[derive(Debug, Clone, Copy)]
pub struct PlannedRemoval<'a> {
    /// The file (canonical).
    pub path: &'a Path,
    /// Which rule removes it.
    pub reason: RemovalReason,
    /// Only a regular file, never a link (trajectory sidecars: `isRegularNonSymlinkFile`).
    pub regular_only: bool,
}

/// Worker threads of a removal batch. On this kind of filesystem an unlink can wait for
/// the device (a synchronous discard as the inode's blocks are freed, after the
/// directory is unlocked), so the waits of several removals overlap.
const REMOVAL_WORKERS: usize = 4;

/// Fewer renames than this are not looked up ahead ([`LookAhead`]).
const LOOK_UP_AHEAD_MIN: usize = 256;

/// Fewer independent removals than this run on the calling thread.
const PARALLEL_REMOVALS_MIN: usize = 32;

/// What `lstat` says about a path.
#[derive(Clone, Copy, PartialEq, Eq)]
enum LinkStat {
    File(u64),
    Symlink,
    Other,
}

const OUTSIDE: &str = "outside the sessions directory";

impl DirGuard {
    /// A guard for the (real) sessions directory.
    pub fn new(real_dir: &Path) -> Self {
        DirGuard {
            real_dir: real_dir.to_path_buf(),
            fd: open_dir(real_dir),
            events: Vec::new(),
            touched_dirs: HashSet::new(),
            last_touched: None,
            clean_dir: is_clean_absolute(real_dir) && real_dir.as_os_str().len() > 1,
            syncing: None,
        }
    }

    /// The open directory and the C name of `p` when `p` lies directly in it.
    fn at(&self, p: &Path) -> Option<(BorrowedFd<'_>, CString)> {
        let fd = self.fd.as_ref()?.as_fd();
        let name = name_in_dir(&self.real_dir, p)?;
        Some((fd, CString::new(name).ok()?))
    }

    /// The name of `p`, NUL-terminated, when `p` is `<directory>/<name>` as the directory
    /// was given (clean and absolute) and the name is one [`DirGuard::contains`] and
    /// [`DirGuard::at`] accept: not empty, not `.`, not starting with `..`, no `/` or NUL,
    /// at most `NAME_MAX` bytes. `None`: ask them.
    fn plain_c_name(&self, p: &Path) -> Option<[u8; NAME_MAX + 1]> {
        if !self.clean_dir {
            return None;
        }
        let name = plain_name_in(&self.real_dir, p)?;
        let mut out = [0u8; NAME_MAX + 1];
        out[..name.len()].copy_from_slice(name);
        Some(out)
    }

    /// `renameat` of two names in the directory (checked as [`plain_name_in`] checks
    /// them); `None` without the directory open.
    fn rename_plain(&self, from: &CStr, to: &CStr) -> Option<RenameOutcome> {
        let fd = self.fd.as_ref()?;
        Some(match rustix::fs::renameat(fd, from, fd, to) {
            Ok(()) => RenameOutcome::Done,
            Err(rustix::io::Errno::NOENT) => RenameOutcome::Nothing,
            Err(e) => RenameOutcome::Failed(e.into()),
        })
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
                let st = lstat_at(fd.as_raw_fd(), &name)?;
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

    /// The sessions directory (its real path).
    pub fn real_dir(&self) -> &Path {
        &self.real_dir
    }

    /// Whether `p` (lexically) lies inside the sessions directory.
    pub fn contains(&self, p: &Path) -> bool {
        // No `..` anywhere below the directory either: `a/../../x` leaves it once `a`
        // exists (or is a symlink), whatever the text looks like (e.g. a path read back
        // from a pending-archive journal).
        // A clean absolute path has no `.`, `..` or empty component: the bytes say it all.
        relative_inside(&self.real_dir, p)
            && (is_clean_absolute(p) || only_names_below(&self.real_dir, p))
    }

    fn skip(&mut self, path: &Path, why: &str) {
        self.events.push(FileEvent::Skipped {
            path: path.to_path_buf(),
            why: why.to_string(),
        });
    }

    /// Whether `path` may be removed, and the size the gateway would count: a regular
    /// file inside the directory, or (unless `regular_only`) a link inside it to a regular
    /// file inside it. `Err(Some(why))`: left alone on purpose; `Err(None)`: nothing to do.
    fn removable(&self, path: &Path, regular_only: bool) -> Result<u64, Option<&'static str>> {
        if !self.contains(path) {
            return Err((!regular_only).then_some(OUTSIDE));
        }
        match self.lstat(path) {
            Some(LinkStat::File(size)) => return Ok(size),
            Some(LinkStat::Symlink) if !regular_only => {}
            _ => return Err(None),
        }
        match std::fs::canonicalize(path) {
            Ok(target) if self.contains(&target) => match std::fs::metadata(&target) {
                Ok(m) if m.is_file() => Ok(m.len()),
                _ => Err(None),
            },
            Ok(_) => Err(Some("symlink out of the sessions directory: not followed")),
            Err(_) => Err(None),
        }
    }

    fn unlink(&self, path: &Path) -> std::io::Result<()> {
        match self.at(path) {
            Some((fd, name)) => {
                rustix::fs::unlinkat(fd, name.as_c_str(), rustix::fs::AtFlags::empty())
                    .map_err(std::io::Error::from)
            }
            None => std::fs::remove_file(path),
        }
    }

    fn rename(&self, from: &Path, to: &Path) -> std::io::Result<()> {
        match (self.at(from), self.at(to)) {
            (Some((fd, a)), Some((_, b))) => {
                rustix::fs::renameat(fd, a.as_c_str(), fd, b.as_c_str())
                    .map_err(std::io::Error::from)
            }
            _ => std::fs::rename(from, to),
        }
    }

    /// Removes `path` if it may be removed, without recording anything.
    fn removal(&self, path: &Path, regular_only: bool) -> RemovalOutcome {
        match self.removable(path, regular_only) {
            Ok(size) => match self.unlink(path) {
                Ok(()) => RemovalOutcome::Removed(size),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => RemovalOutcome::Nothing,
                Err(e) => RemovalOutcome::Failed(e),
            },
            Err(Some(why)) => RemovalOutcome::Skipped(why),
            Err(None) => RemovalOutcome::Nothing,
        }
    }

    /// Records a removal's outcome; returns the bytes the gateway counts.
    fn record_removal(&mut self, path: &Path, reason: RemovalReason, o: RemovalOutcome) -> u64 {
        match o {
            RemovalOutcome::Removed(bytes) => {
                self.mark_dir(path);
                self.events.push(FileEvent::Removed {
                    path: path.to_path_buf(),
                    reason,
                    bytes,
                });
                bytes
            }
            RemovalOutcome::Skipped(why) => {
                self.skip(path, why);
                0
            }
            RemovalOutcome::Failed(e) => {
                self.events.push(FileEvent::Failed {
                    path: path.to_path_buf(),
                    error: e.to_string(),
                });
                0
            }
            RemovalOutcome::Nothing => 0,
        }
    }

    /// Renames `from` to `to` when both lie inside the directory, without recording
    /// anything; a source gone meanwhile is nothing to do.
    fn renaming(&self, from: &Path, to: &Path) -> RenameOutcome {
        // The common case, checked in one pass over each path's bytes.
        if let (Some(a), Some(b)) = (self.plain_c_name(from), self.plain_c_name(to)) {
            let names = (
                CStr::from_bytes_until_nul(&a),
                CStr::from_bytes_until_nul(&b),
            );
            if let (Ok(a), Ok(b)) = names {
                if let Some(o) = self.rename_plain(a, b) {
                    return o;
                }
            }
        }
        if !self.contains(from) || !self.contains(to) {
            return RenameOutcome::Skipped(OUTSIDE);
        }
        match self.rename(from, to) {
            Ok(()) => RenameOutcome::Done,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => RenameOutcome::Nothing,
            Err(e) => RenameOutcome::Failed(e),
        }
    }

    /// Records a rename's outcome; returns whether the file was renamed.
    fn record_rename(&mut self, from: &Path, to: &Path, o: RenameOutcome) -> bool {
        self.record_rename_as(from, o, || archived_event(from, to))
    }

    /// [`DirGuard::record_rename`], with the event of a rename made given by `archived`.
    fn record_rename_as(
        &mut self,
        from: &Path,
        o: RenameOutcome,
        archived: impl FnOnce() -> FileEvent,
    ) -> bool {
        match o {
            RenameOutcome::Done => {
                self.mark_dir(from);
                self.events.push(archived());
                true
            }
            RenameOutcome::Skipped(why) => {
                self.skip(from, why);
                false
            }
            RenameOutcome::Nothing => false,
            RenameOutcome::Failed(e) => {
                self.events.push(FileEvent::Failed {
                    path: from.to_path_buf(),
                    error: e.to_string(),
                });
                false
            }
        }
    }

    /// Removes a file (`removeFileIfExists`): returns the bytes the gateway counts (0 for
    /// a missing file, an empty file, or one left alone for safety).
    pub fn remove(&mut self, path: &Path, reason: RemovalReason) -> u64 {
        let o = self.removal(path, false);
        self.record_removal(path, reason, o)
    }

    /// Whether `path` is a regular file (not a link) inside the directory
    /// (`isRegularNonSymlinkFile` plus containment).
    pub fn is_regular_inside(&self, path: &Path) -> bool {
        self.contains(path) && matches!(self.lstat(path), Some(LinkStat::File(_)))
    }

    /// Removes a regular, non-link file inside the directory (trajectory sidecars);
    /// returns its bytes (0 when it was not one, or was gone).
    pub fn remove_regular(&mut self, path: &Path, reason: RemovalReason) -> u64 {
        let o = self.removal(path, true);
        self.record_removal(path, reason, o)
    }

    /// Renames an existing regular file inside the directory to `to` (same directory),
    /// checking first with `lstat` that it is one (paths read back from a journal).
    pub fn archive(&mut self, from: &Path, to: &Path) -> bool {
        if !self.contains(from) || !self.contains(to) {
            self.skip(from, OUTSIDE);
            return false;
        }
        if !matches!(self.lstat(from), Some(LinkStat::File(_))) {
            return false;
        }
        let o = self.renaming(from, to);
        self.record_rename(from, to, o)
    }

    /// Makes the renames `archives` and the removals `removals`, recorded as if made one
    /// after the other in that order; returns how many files were renamed and the bytes
    /// of each removal ([`DirGuard::start_renames`], then [`DirGuard::finish_batch`]).
    pub fn archive_and_remove(
        &mut self,
        archives: &[(&Path, &Path)],
        removals: &[PlannedRemoval<'_>],
        listing: Option<&Arc<DirSnapshot>>,
    ) -> (usize, Vec<u64>) {
        let pairs: Vec<(PathBuf, PathBuf)> = archives
            .iter()
            .map(|&(from, to)| (from.to_path_buf(), to.to_path_buf()))
            .collect();
        let underway = self.start_renames(RenameBatch::new(Arc::new(pairs), listing));
        self.finish_batch(underway, removals, listing.map(|s| &**s))
    }

    /// Starts the renames of `batch` on a thread of their own, in its order; without a
    /// thread to be had, makes them here. Records nothing: [`DirGuard::finish_batch`]
    /// does.
    ///
    /// The renames were planned on this run's listing, which found each source a regular
    /// file: it is not `lstat`-ed again (a source gone since is nothing to do).
    #[must_use = "the renames are recorded only by `DirGuard::finish_batch`"]
    pub fn start_renames(&self, batch: RenameBatch) -> RenamesUnderway {
        let progress = Arc::new(AtomicUsize::new(0));
        let state = if batch.pairs.is_empty() {
            RenameState::Done(Vec::new())
        } else {
            let (renamer, theirs) = (DirGuard::new(&self.real_dir), batch.clone());
            let counter = Arc::clone(&progress);
            match std::thread::Builder::new().spawn(move || renamer.rename_all(&theirs, &counter)) {
                Ok(t) => RenameState::Running(t),
                Err(_) => RenameState::Done(self.rename_all(&batch, &progress)),
            }
        };
        RenamesUnderway {
            batch,
            state,
            progress,
        }
    }

    /// Makes the renames of `batch`, in its order, counting them in `progress` (set to
    /// `usize::MAX` at the end, or if a rename panics); records nothing.
    fn rename_all(
        &self,
        batch: &RenameBatch,
        progress: &AtomicUsize,
    ) -> Vec<(usize, RenameOutcome)> {
        struct Finished<'a>(&'a AtomicUsize);
        impl Drop for Finished<'_> {
            fn drop(&mut self) {
                self.0.store(usize::MAX, Ordering::Release);
            }
        }
        let _finished = Finished(progress);
        // The names side by side, when they are names in this very directory.
        let names = batch
            .names
            .as_deref()
            .filter(|n| self.clean_dir && n.dir == self.real_dir);
        batch
            .order
            .iter()
            .enumerate()
            .map(|(k, &i)| {
                if let Some((snap, at)) = &batch.listed {
                    if at[k] != usize::MAX {
                        snap.stat(at[k]);
                    }
                }
                let plain = names.and_then(|n| n.pair(i));
                let o = match plain.and_then(|(from, to)| self.rename_plain(from, to)) {
                    Some(o) => o,
                    None => {
                        let (from, to) = batch.pairs.pair(i);
                        self.renaming(from, to)
                    }
                };
                progress.fetch_add(1, Ordering::Release);
                (i, o)
            })
            .collect()
    }

    /// Waits for the renames `underway` and makes the removals `removals`, recording
    /// everything as if made one after the other (the renames first, in plan order);
    /// returns how many files were renamed and the bytes of each removal.
    ///
    /// The removals run meanwhile, on worker threads (unless `listing`, the listing the
    /// plan was made on, shows a symlink, or is not given: a link's removal depends on
    /// its target's, and then they all wait for the renames); a removal that names a
    /// renamed file waits for the last rename that names it. Paths are canonical; no two
    /// changes touch one file but those, so the order changes no outcome, only the
    /// interleaving (see [`REMOVAL_WORKERS`]).
    pub fn finish_batch(
        &mut self,
        mut underway: RenamesUnderway,
        removals: &[PlannedRemoval<'_>],
        listing: Option<&DirSnapshot>,
    ) -> (usize, Vec<u64>) {
        let pairs = Arc::clone(&underway.batch.pairs);
        let parallel = listing.is_some_and(|snap| !snap.has_symlinks());
        // How many renames must be made before each removal: those up to the last that
        // names its file (0: none does).
        let mut renamed_by: HashMap<&OsStr, usize, FixedState> = HashMap::default();
        for (k, &i) in underway.batch.order.iter().enumerate() {
            let (from, to) = pairs.pair(i);
            renamed_by.insert(from.as_os_str(), k + 1);
            renamed_by.insert(to.as_os_str(), k + 1);
        }
        let needs: Vec<usize> = removals
            .iter()
            .map(|r| renamed_by.get(r.path.as_os_str()).copied().unwrap_or(0))
            .collect();
        // Those that wait for no rename first (in plan order), then as the renames go.
        let mut which: Vec<usize> = (0..removals.len()).collect();
        which.sort_by_key(|&i| needs[i]);
        let progress = Arc::clone(&underway.progress);
        let ready = |i: usize| {
            while progress.load(Ordering::Acquire) < needs[i] {
                std::thread::sleep(std::time::Duration::from_micros(200));
            }
        };
        let this = &*self;
        let ((mut renames, mut events), mut done) =
            this.removing(removals, &which, parallel, ready, || {
                // While the renames run, the events they record are made ready (as if
                // each were made), by a thread that would only wait.
                let events: Vec<Option<FileEvent>> = (0..pairs.len())
                    .map(|i| {
                        let (from, to) = pairs.pair(i);
                        Some(archived_event(from, to))
                    })
                    .collect();
                (underway.wait(), events)
            });
        // Every change of the batch is made: the disk writes them while they are recorded.
        if !(pairs.is_empty() && removals.is_empty()) {
            self.start_sync();
        }
        // Every rename and every removal was made once: back to plan order to record.
        renames.sort_unstable_by_key(|&(i, _)| i);
        done.sort_unstable_by_key(|&(i, _)| i);
        self.events.reserve(renames.len() + done.len());
        let mut archived = 0;
        for (i, o) in renames {
            let (from, to) = pairs.pair(i);
            let event = || events[i].take().unwrap_or_else(|| archived_event(from, to));
            archived += usize::from(self.record_rename_as(from, o, event));
        }
        let bytes = done
            .into_iter()
            .map(|(i, o)| self.record_removal(removals[i].path, removals[i].reason, o))
            .collect();
        (archived, bytes)
    }

    /// Makes the removals `which` of `removals`, in that order, on worker threads while
    /// this thread runs `meanwhile`, then helps them; without workers (few removals, or
    /// no thread to be had) this thread makes them all after `meanwhile`. `ready(i)`
    /// returns when removal `i` may be made. Records nothing.
    fn removing<T>(
        &self,
        removals: &[PlannedRemoval<'_>],
        which: &[usize],
        parallel: bool,
        ready: impl Fn(usize) + Sync,
        meanwhile: impl FnOnce() -> T,
    ) -> (T, Vec<(usize, RemovalOutcome)>) {
        let next = AtomicUsize::new(0);
        let work = || {
            let mut done = Vec::new();
            loop {
                let k = next.fetch_add(1, Ordering::Relaxed);
                let Some(&i) = which.get(k) else {
                    return done;
                };
                ready(i);
                let r = &removals[i];
                done.push((i, self.removal(r.path, r.regular_only)));
            }
        };
        std::thread::scope(|s| {
            let workers: Vec<_> = if parallel && which.len() >= PARALLEL_REMOVALS_MIN {
                (0..REMOVAL_WORKERS)
                    .filter_map(|_| std::thread::Builder::new().spawn_scoped(s, work).ok())
                    .collect()
            } else {
                Vec::new()
            };
            let value = meanwhile();
            let mut done = work();
            for w in workers {
                match w.join() {
                    Ok(theirs) => done.extend(theirs),
                    Err(panic) => std::panic::resume_unwind(panic),
                }
            }
            (value, done)
        })
    }

    fn mark_dir(&mut self, p: &Path) {
        let Some(d) = p.parent() else {
            return;
        };
        // The same directory as last time, by its bytes: no hashing of components.
        if self
            .last_touched
            .as_ref()
            .is_some_and(|last| last.as_os_str() == d.as_os_str())
        {
            return;
        }
        if !self.touched_dirs.contains(d) {
            self.touched_dirs.insert(d.to_path_buf());
        }
        self.last_touched = Some(d.to_path_buf());
    }

    /// Starts making the changes made so far in the directory durable, on a thread of its
    /// own: [`DirGuard::sync`] waits for it, and then syncs what came after (a directory
    /// with nothing left to write syncs at once). Without a thread, leaves it to `sync`.
    fn start_sync(&mut self) {
        let Some(fd) = self.fd.as_ref().and_then(|fd| fd.try_clone().ok()) else {
            return;
        };
        if let Some(earlier) = self.syncing.take() {
            let _ = earlier.join();
        }
        self.syncing = std::thread::Builder::new()
            .spawn(move || {
                // A failure shows again in `sync`'s own fsync, which is the one that counts.
                let _ = std::fs::File::from(fd).sync_all();
            })
            .ok();
    }

    /// Makes every rename and removal so far durable (one `fsync` per directory).
    pub fn sync(&mut self) {
        if let Some(syncing) = self.syncing.take() {
            let _ = syncing.join();
        }
        self.last_touched = None;
        for d in self.touched_dirs.drain() {
            let _ = crate::fs::atomic_file::sync_dir(&d);
        }
    }
}

/// Whether every component of `p` below `dir` is a name (no `.`, `..` or root).
fn only_names_below(dir: &Path, p: &Path) -> bool {
    p.strip_prefix(dir).is_ok_and(|rest| {
        rest.components()
            .all(|c| matches!(c, std::path::Component::Normal(_)))
    })
}

/// A list of planned renames in the sessions directory, as a [`RenameBatch`] reads it:
/// the plan itself, shared with the thread that makes them (not copied).
pub trait RenamePairs: Send + Sync + std::fmt::Debug {
    /// How many renames.
    fn len(&self) -> usize;
    /// Whether there are none.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The source and destination of rename `i`.
    fn pair(&self, i: usize) -> (&Path, &Path);
    /// Where the planner's listing found the source of rename `i`, if it noted it (the
    /// batch checks the name there before it trusts it).
    fn listed(&self, _i: usize) -> Option<usize> {
        None
    }
}

impl RenamePairs for Vec<(PathBuf, PathBuf)> {
    fn len(&self) -> usize {
        self.as_slice().len()
    }
    fn pair(&self, i: usize) -> (&Path, &Path) {
        (&self[i].0, &self[i].1)
    }
}

/// The name of `p` in `dir` (a clean absolute directory) when `p` is `dir/name` and the
/// name is one [`DirGuard::contains`] and [`DirGuard::at`] accept: not empty, not `.`,
/// not starting with `..`, no `/` or NUL, at most `NAME_MAX` bytes.
fn plain_name_in<'p>(dir: &Path, p: &'p Path) -> Option<&'p [u8]> {
    let name = p
        .as_os_str()
        .as_encoded_bytes()
        .strip_prefix(dir.as_os_str().as_encoded_bytes())?
        .strip_prefix(b"/")?;
    let plain = !name.is_empty()
        && name.len() <= NAME_MAX
        && name != b"."
        && !name.starts_with(b"..")
        && !name.iter().any(|&c| c == b'/' || c == 0);
    plain.then_some(name)
}

/// The names of a batch's renames, when both are plain names ([`plain_name_in`]) in the
/// listed directory: `from` and `to`, each NUL-terminated, side by side in one buffer,
/// so that the renamer reads neither path (scattered in memory) nor checks it again.
#[derive(Debug)]
struct PlainNames {
    /// The directory they are names in.
    dir: PathBuf,
    bytes: Vec<u8>,
    /// Per pair (by its index in the plan): where its `from` name starts (`u32::MAX`:
    /// not plain; the pair's paths are used).
    at: Vec<u32>,
}

impl PlainNames {
    fn new(dir: &Path, pairs: &dyn RenamePairs) -> Self {
        let mut names = PlainNames {
            dir: dir.to_path_buf(),
            bytes: Vec::new(),
            at: Vec::with_capacity(pairs.len()),
        };
        let mut sized = false;
        for i in 0..pairs.len() {
            let (from, to) = pairs.pair(i);
            let (Some(a), Some(b)) = (plain_name_in(dir, from), plain_name_in(dir, to)) else {
                names.at.push(u32::MAX);
                continue;
            };
            if !sized {
                // The names of a batch are alike: sized from the first, with room to spare.
                names
                    .bytes
                    .reserve((a.len() + b.len() + 2) * pairs.len() * 5 / 4);
                sized = true;
            }
            match u32::try_from(names.bytes.len())
                .ok()
                .filter(|&at| at < u32::MAX)
            {
                Some(at) => names.at.push(at),
                None => {
                    names.at.push(u32::MAX);
                    continue;
                }
            }
            names.bytes.extend_from_slice(a);
            names.bytes.push(0);
            names.bytes.extend_from_slice(b);
            names.bytes.push(0);
        }
        names
    }

    /// The names of pair `i`, when plain.
    fn pair(&self, i: usize) -> Option<(&CStr, &CStr)> {
        let at = *self.at.get(i)?;
        if at == u32::MAX {
            return None;
        }
        let rest = &self.bytes[at as usize..];
        let from = CStr::from_bytes_until_nul(rest).ok()?;
        let to = CStr::from_bytes_until_nul(&rest[from.to_bytes_with_nul().len()..]).ok()?;
        Some((from, to))
    }
}

/// Renames planned in the sessions directory, and the order to make them in: the order
/// of the listing the plan was made on, a hash order, so that neighbours share the
/// directory's blocks.
#[derive(Debug, Clone)]
pub struct RenameBatch {
    pairs: Arc<dyn RenamePairs>,
    order: Arc<[usize]>,
    /// The listing, and where it found each source (in `order`; `usize::MAX`: not found).
    listed: Option<(Arc<DirSnapshot>, Arc<[usize]>)>,
    /// The pairs' plain names in the listed directory (with a listing of a clean one).
    names: Option<Arc<PlainNames>>,
}

impl RenameBatch {
    /// The renames `pairs`, ordered by where `listing` found each source (sources it did
    /// not find last, in plan order). Where the plan noted a source's place in that
    /// listing and the name there is the source's, that place is taken without a
    /// lookup. The listing fetches each source's size and mtime just before it is
    /// renamed, if it has not yet: planning goes on meanwhile, and asks for them by the
    /// name listed.
    pub fn new(pairs: Arc<dyn RenamePairs>, listing: Option<&Arc<DirSnapshot>>) -> Self {
        let mut at: Vec<(usize, usize)> = (0..pairs.len())
            .map(|i| {
                let from = pairs.pair(i).0;
                let at = listing
                    .and_then(|snap| {
                        pairs
                            .listed(i)
                            .filter(|&at| at < snap.len() && ends_in_name(from, snap.name(at)))
                            .or_else(|| {
                                from.file_name()
                                    .and_then(|n| snap.lookup(n.as_encoded_bytes()))
                            })
                    })
                    .unwrap_or(usize::MAX);
                (at, i)
            })
            .collect();
        at.sort_unstable();
        let names = listing
            .filter(|snap| is_clean_absolute(snap.dir()) && snap.dir().as_os_str().len() > 1)
            .map(|snap| Arc::new(PlainNames::new(snap.dir(), &*pairs)));
        RenameBatch {
            pairs,
            order: at.iter().map(|&(_, i)| i).collect(),
            listed: listing.map(|snap| (Arc::clone(snap), at.iter().map(|&(a, _)| a).collect())),
            names,
        }
    }

    /// Starts looking up the destinations in `dir`, in order ([`LookAhead`]), when there
    /// are enough of them for a thread to be worth it. The kernel caches each as absent,
    /// and the rename to it no longer searches the directory (under its lock) for it.
    #[must_use = "the look-ups stop when the returned value is dropped"]
    pub fn look_ahead(&self, dir: &Path) -> Option<LookAhead> {
        (self.pairs.len() >= LOOK_UP_AHEAD_MIN).then(|| {
            let (pairs, order) = (Arc::clone(&self.pairs), Arc::clone(&self.order));
            LookAhead::start(
                dir,
                (0..order.len()).map(move |k| pairs.pair(order[k]).1.to_path_buf()),
            )
        })
    }
}

/// The event of `from` renamed to `to`.
fn archived_event(from: &Path, to: &Path) -> FileEvent {
    FileEvent::Archived {
        from: from.to_path_buf(),
        to: to.to_path_buf(),
    }
}

/// Whether `path`'s last component is `name`, by the bytes (a path ending in `/` is not
/// taken to name anything).
fn ends_in_name(path: &Path, name: &str) -> bool {
    let (path, name) = (path.as_os_str().as_encoded_bytes(), name.as_bytes());
    path.len() > name.len() && path.ends_with(name) && path[path.len() - name.len() - 1] == b'/'
}

/// Renames of a batch under way on a thread of their own ([`DirGuard::start_renames`]);
/// [`DirGuard::finish_batch`] waits for them and records them. Dropped unfinished, it
/// waits for them all the same (and nothing is recorded).
#[must_use = "the renames are recorded only by `DirGuard::finish_batch`"]
#[derive(Debug)]
pub struct RenamesUnderway {
    batch: RenameBatch,
    state: RenameState,
    /// How many renames were made (`usize::MAX` once all were, or the thread died).
    progress: Arc<AtomicUsize>,
}

/// Where the renames of a batch are: on their thread, made (the outcome of each, by its
/// index in the batch, in the order made), or handed out by [`RenamesUnderway::wait`].
#[derive(Debug)]
enum RenameState {
    Running(std::thread::JoinHandle<Vec<(usize, RenameOutcome)>>),
    Done(Vec<(usize, RenameOutcome)>),
    Taken,
}

impl RenamesUnderway {
    /// The outcome of each rename, by its index in the batch (in the order made).
    fn wait(&mut self) -> Vec<(usize, RenameOutcome)> {
        match std::mem::replace(&mut self.state, RenameState::Taken) {
            RenameState::Running(t) => t.join().unwrap_or_else(|p| std::panic::resume_unwind(p)),
            RenameState::Done(done) => done,
            RenameState::Taken => Vec::new(),
        }
    }
}

impl Drop for RenamesUnderway {
    fn drop(&mut self) {
        if let RenameState::Running(t) = std::mem::replace(&mut self.state, RenameState::Taken) {
            let _ = t.join();
        }
    }
}

/// Looks names up in a directory on a thread of its own (an `lstat` each, results
/// unused), until done or dropped: the kernel then has their entries, found or
/// negative, in its cache, and a later rename to or from one of them skips that search
/// of a large directory. Nothing is changed; a name outside the directory is skipped.
#[must_use = "the look-ups stop when this is dropped"]
#[derive(Debug)]
pub struct LookAhead {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl LookAhead {
    /// Starts looking up `paths` (those directly in `dir`), in order, on a thread that
    /// also takes each name (the caller goes on at once); without a thread to be had, does
    /// nothing.
    pub fn start<P: AsRef<Path>>(
        dir: &Path,
        paths: impl Iterator<Item = P> + Send + 'static,
    ) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let thread = open_dir(dir).and_then(|fd| {
            let stop = Arc::clone(&stop);
            let dir = dir.to_path_buf();
            std::thread::Builder::new()
                .spawn(move || {
                    for p in paths {
                        if stop.load(Ordering::Relaxed) {
                            return;
                        }
                        if let Some(name) = name_in_dir(&dir, p.as_ref()) {
                            if let Ok(name) = CString::new(name) {
                                let _ = lstat_at(fd.as_raw_fd(), &name);
                            }
                        }
                    }
                })
                .ok()
        });
        LookAhead { stop, thread }
    }
}

impl Drop for LookAhead {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn containment_by_bytes_agrees_with_the_component_rule() {
        let dir = Path::new("/srv/sessions");
        let guard = DirGuard::new(dir);
        let long = format!("/srv/sessions/{}", "a".repeat(300));
        for p in [
            "/srv/sessions/a.jsonl",
            "/srv/sessions/.a",
            "/srv/sessions/a..b",
            "/srv/sessions/",
            "/srv/sessions/.",
            "/srv/sessions/..",
            "/srv/sessions/..a",
            "/srv/sessions/a/b",
            "/srv/sessions/a/../b",
            "/srv/sessions//a",
            "/srv/sessionsa",
            "/srv/other/a",
            "/srv/sessions/./a",
            "/srv/sessions/../sessions/a",
            long.as_str(),
        ] {
            let p = Path::new(p);
            let by_components = relative_inside(dir, p) && only_names_below(dir, p);
            assert_eq!(guard.contains(p), by_components, "{}", p.display());
            // The renames' one-pass road takes only paths `contains` accepts, with the
            // name `at` takes.
            if let Some(c_name) = guard.plain_c_name(p) {
                let end = c_name.iter().position(|&b| b == 0).unwrap();
                assert!(by_components, "{}", p.display());
                assert_eq!(
                    Some(&c_name[..end]),
                    name_in_dir(dir, p).map(str::as_bytes),
                    "{}",
                    p.display()
                );
            }
        }
        assert!(guard
            .plain_c_name(Path::new("/srv/sessions/a.jsonl"))
            .is_some());
        assert!(guard.contains(Path::new("/srv/sessions/a.jsonl")));
        assert!(!guard.contains(Path::new("/srv/sessions/..a")));
    }

    #[test]
    fn scan_lists_regular_files_only() {
        let (_d, root) = super::super::dir_snapshot::fixtures::file_dir_and_link();
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
        assert_eq!(
            g.remove_regular(&root.join("missing"), RemovalReason::Trajectory),
            0
        );
    }

    #[test]
    fn a_batch_is_recorded_in_order_and_waits_for_its_renames() {
        let d = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(d.path()).unwrap();
        // Enough independent removals for the worker threads, one removal of a rename's
        // destination (it must come after the rename), one of a file outside.
        let n = PARALLEL_REMOVALS_MIN + 8;
        let olds: Vec<PathBuf> = (0..n).map(|i| root.join(format!("old{i}.jsonl"))).collect();
        for (i, p) in olds.iter().enumerate() {
            std::fs::write(p, "x".repeat(i + 1)).unwrap();
        }
        let a = root.join("a.jsonl");
        let a_to = root.join("a.jsonl.deleted.2020-01-01T00-00-00.000Z");
        let b = root.join("b.jsonl");
        let b_to = root.join("b.jsonl.deleted.2020-01-01T00-00-00.000Z");
        std::fs::write(&a, "aaaa").unwrap();
        std::fs::write(&b, "bb").unwrap();
        let outside = tempfile::tempdir().unwrap();
        let keep = outside.path().join("keep.txt");
        std::fs::write(&keep, "keep").unwrap();
        let mut removals: Vec<PlannedRemoval<'_>> = olds
            .iter()
            .map(|p| PlannedRemoval {
                path: p,
                reason: RemovalReason::Unreferenced,
                regular_only: false,
            })
            .collect();
        removals.insert(
            3,
            PlannedRemoval {
                path: &a_to,
                reason: RemovalReason::DiskBudget,
                regular_only: false,
            },
        );
        removals.push(PlannedRemoval {
            path: &keep,
            reason: RemovalReason::Unreferenced,
            regular_only: false,
        });
        let mut g = DirGuard::new(&root);
        let archives = [(a.as_path(), a_to.as_path()), (b.as_path(), b_to.as_path())];
        let listing = Arc::new(DirSnapshot::read(&root));
        let (archived, bytes) = g.archive_and_remove(&archives, &removals, Some(&listing));
        assert_eq!(archived, 2);
        assert_eq!(bytes[3], 4, "the archive was removed after its rename");
        assert_eq!(bytes[0], 1);
        assert_eq!(bytes[n], n as u64);
        assert_eq!(*bytes.last().unwrap(), 0);
        assert!(keep.exists());
        let left: Vec<String> = std::fs::read_dir(&root)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert_eq!(left, [b_to.file_name().unwrap().to_str().unwrap()]);
        // Recorded as if made one after the other: renames in plan order, then removals.
        let mut expected = vec![
            FileEvent::Archived {
                from: a.clone(),
                to: a_to.clone(),
            },
            FileEvent::Archived {
                from: b.clone(),
                to: b_to.clone(),
            },
        ];
        for (r, &size) in removals.iter().zip(&bytes) {
            if r.path == keep {
                expected.push(FileEvent::Skipped {
                    path: keep.clone(),
                    why: OUTSIDE.to_string(),
                });
            } else {
                expected.push(FileEvent::Removed {
                    path: r.path.to_path_buf(),
                    reason: r.reason,
                    bytes: size,
                });
            }
        }
        assert_eq!(g.events, expected);
        // A source gone since the plan is skipped, silently.
        let (archived, _) = g.archive_and_remove(&[(a.as_path(), b.as_path())], &[], None);
        assert_eq!(archived, 0);
        assert_eq!(g.events.len(), expected.len());
    }

    #[test]
    fn with_links_listed_a_batch_removes_in_order() {
        let d = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(d.path()).unwrap();
        // A link planned before its target counts the target's bytes, as one at a time.
        let n = PARALLEL_REMOVALS_MIN + 8;
        let files: Vec<PathBuf> = (0..n).map(|i| root.join(format!("f{i}.jsonl"))).collect();
        for p in &files {
            std::fs::write(p, "12345").unwrap();
        }
        let link = root.join("l.jsonl");
        std::os::unix::fs::symlink(&files[n - 1], &link).unwrap();
        let listing = Arc::new(DirSnapshot::read(&root));
        assert!(listing.has_symlinks());
        let removals: Vec<PlannedRemoval<'_>> = std::iter::once(&link)
            .chain(&files)
            .map(|p| PlannedRemoval {
                path: p,
                reason: RemovalReason::DiskBudget,
                regular_only: false,
            })
            .collect();
        let mut g = DirGuard::new(&root);
        let (_, bytes) = g.archive_and_remove(&[], &removals, Some(&listing));
        assert!(bytes.iter().all(|&b| b == 5), "{bytes:?}");
        assert_eq!(std::fs::read_dir(&root).unwrap().count(), 0);
    }

    #[test]
    fn a_look_ahead_changes_nothing() {
        let d = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(d.path()).unwrap();
        std::fs::write(root.join("a"), "a").unwrap();
        let names = [
            root.join("a"),
            root.join("missing"),
            PathBuf::from("/etc/passwd"),
        ];
        drop(LookAhead::start(&root, names.into_iter()));
        let left: Vec<_> = std::fs::read_dir(&root).unwrap().collect();
        assert_eq!(left.len(), 1);
    }

    /// A batch takes the places its plan noted in the listing only where the name there
    /// is the source's: a wrong, stale or missing place gives the order of the lookups.
    #[test]
    fn a_batch_checks_the_places_its_plan_noted() {
        #[derive(Debug)]
        struct Noted(Vec<(PathBuf, PathBuf, Option<usize>)>);
        impl RenamePairs for Noted {
            fn len(&self) -> usize {
                self.0.len()
            }
            fn pair(&self, i: usize) -> (&Path, &Path) {
                (&self.0[i].0, &self.0[i].1)
            }
            fn listed(&self, i: usize) -> Option<usize> {
                self.0[i].2
            }
        }
        let d = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(d.path()).unwrap();
        let names = ["a.jsonl", "b.jsonl", "c.jsonl", "d.jsonl", "e.jsonl"];
        for n in names {
            std::fs::write(root.join(n), n).unwrap();
        }
        let snap = Arc::new(DirSnapshot::read(&root));
        let at = |n: &str| snap.lookup(n.as_bytes()).unwrap();
        let pair = |n: &str| (root.join(n), root.join(format!("{n}.deleted.x")));
        let plain: Vec<(PathBuf, PathBuf)> = names.iter().rev().map(|n| pair(n)).collect();
        let hints = [
            Some(at("e.jsonl")),
            Some(at("a.jsonl")),
            Some(usize::MAX - 1),
            None,
            Some(at("a.jsonl")),
        ];
        let noted = Noted(
            plain
                .iter()
                .zip(hints)
                .map(|((from, to), h)| (from.clone(), to.clone(), h))
                .collect(),
        );
        let looked_up = RenameBatch::new(Arc::new(plain), Some(&snap));
        let hinted = RenameBatch::new(Arc::new(noted), Some(&snap));
        assert_eq!(hinted.order, looked_up.order);
        let places = |b: &RenameBatch| b.listed.as_ref().map(|(_, at)| at.to_vec());
        assert_eq!(places(&hinted), places(&looked_up));
        let by_listing: Vec<usize> = names.iter().map(|n| at(n)).collect();
        let mut sorted = by_listing.clone();
        sorted.sort_unstable();
        assert_eq!(places(&hinted), Some(sorted), "in the listing's order");
    }

    /// A rename is planned once, and not for a file planned removed, as `is_gone` then
    /// `rename` would have it.
    #[test]
    fn a_rename_unless_gone_is_planned_once() {
        let (a, b, c) = (Path::new("/s/a"), Path::new("/s/b"), Path::new("/s//c"));
        let mut view = DirOverlay::default();
        view.remove(Path::new("/s/c"));
        assert!(view.rename_unless_gone(a, Path::new("/s/a.1")));
        assert!(view.is_gone(a));
        assert!(!view.rename_unless_gone(a, Path::new("/s/a.2")));
        assert!(!view.rename_unless_gone(c, Path::new("/s/c.1")));
        assert!(!view.is_gone(b) && view.rename_unless_gone(b, Path::new("/s/b.1")));
        let applied = view.apply(
            ["/s/a", "/s/b", "/s/c"]
                .iter()
                .map(|p| SessionFile {
                    path: PathBuf::from(p),
                    canonical: PathBuf::from(p),
                    name: String::new(),
                    size: 1,
                    mtime_ms: 0.0,
                })
                .collect(),
        );
        let names: Vec<&Path> = applied.iter().map(|f| f.path.as_path()).collect();
        assert_eq!(names, [Path::new("/s/a.1"), Path::new("/s/b.1")]);
    }

    /// The view of a plan drops a file renamed and then removed under its new name, and
    /// keeps the sizes of the listing once the files change (renames started early).
    #[test]
    fn a_view_drops_a_file_renamed_then_removed() {
        let d = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(d.path()).unwrap();
        for (n, body) in [("a.jsonl", "aa"), ("b.jsonl", "bbb"), ("c.jsonl", "c")] {
            std::fs::write(root.join(n), body).unwrap();
        }
        // No stat fetched yet: the renamer fetches the source's before renaming it.
        let snap = Arc::new(DirSnapshot::read(&root));
        let (a, b, c) = (
            root.join("a.jsonl"),
            root.join("b.jsonl"),
            root.join("c.jsonl"),
        );
        let (a2, b2) = (
            root.join("a.jsonl.deleted.x"),
            root.join("b.jsonl.deleted.x"),
        );
        let mut view = DirOverlay::default();
        view.rename(&a, &a2);
        view.rename(&b, &b2);
        view.remove(&b2);
        view.remove(&c);
        let batch = RenameBatch::new(Arc::new(vec![(a.clone(), a2.clone())]), Some(&snap));
        let mut g = DirGuard::new(&root);
        let underway = g.start_renames(batch);
        let (archived, _) = g.finish_batch(underway, &[], Some(&snap));
        assert_eq!(archived, 1);
        let files: Vec<(&str, u64)> = dir_files(&snap, Some(&view))
            .iter()
            .map(|f| (f.name, f.size))
            .collect();
        assert_eq!(files, [("a.jsonl.deleted.x", 2)]);
        let scanned = |p: &Path| SessionFile {
            path: p.to_path_buf(),
            canonical: p.to_path_buf(),
            name: String::new(),
            size: 1,
            mtime_ms: 0.0,
        };
        let applied = view.apply(vec![scanned(&a), scanned(&b), scanned(&c)]);
        let names: Vec<&Path> = applied.iter().map(|f| f.path.as_path()).collect();
        assert_eq!(names, [a2.as_path()]);
    }

    /// An overlay over a listing keeps the listed names' plans by their place, and
    /// answers every question as the overlay that keeps them all by path: listed and
    /// unlisted files, paths written with `//` or `/./`, targets that are listed (and
    /// removed), paths outside the directory, and the listing's files as the plan leaves
    /// them, before and after the targets' places are looked up.
    #[test]
    fn an_overlay_over_a_listing_answers_as_one_by_paths() {
        let d = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(d.path()).unwrap();
        let listed = [
            "a.jsonl",
            "b.jsonl",
            "c.jsonl",
            "d.jsonl",
            "e.jsonl",
            "e.jsonl.deleted.x",
            "f.jsonl",
            "g.jsonl",
        ];
        for (k, n) in listed.iter().enumerate() {
            std::fs::write(root.join(n), "x".repeat(k + 1)).unwrap();
        }
        let snap = Arc::new(DirSnapshot::read(&root));
        let p = |n: &str| root.join(n);
        let odd = |n: &str| PathBuf::from(format!("{}//./{n}", root.display()));
        let elsewhere = |n: &str| Path::new("/elsewhere").join(n);
        let mut by_path = DirOverlay::default();
        let mut by_place = DirOverlay::over(Arc::clone(&snap));
        assert!(by_place.is_empty());
        let c_at = snap.lookup(b"c.jsonl").unwrap();
        let g_at = snap.lookup(b"g.jsonl").unwrap();
        let mut planned = Vec::new();
        for view in [&mut by_path, &mut by_place] {
            view.rename(&p("a.jsonl"), &p("a.jsonl.deleted.x"));
            let b = (
                view.rename_unless_gone(&odd("b.jsonl"), &p("b.jsonl.deleted.x")),
                view.rename_unless_gone(&p("b.jsonl"), &p("b.jsonl.deleted.y")),
            );
            let c = (
                view.rename_listed_unless_gone(&snap, c_at, &p("c.jsonl"), &p("c.jsonl.1")),
                view.rename_listed_unless_gone(&snap, c_at, &p("c.jsonl"), &p("c.jsonl.2")),
            );
            view.remove(&odd("d.jsonl"));
            // A listed target, then removed: the file renamed to it is gone.
            view.rename(&p("e.jsonl"), &p("e.jsonl.deleted.x"));
            view.remove(&p("e.jsonl.deleted.x"));
            // Renamed twice: the second target counts.
            view.rename(&p("f.jsonl"), &p("f.jsonl.1"));
            view.rename(&p("f.jsonl"), &p("f.jsonl.2"));
            view.remove(&p("g.jsonl"));
            let g = view.rename_listed_unless_gone(&snap, g_at, &p("g.jsonl"), &p("g.jsonl.1"));
            view.rename(&elsewhere("h"), &elsewhere("h.1"));
            view.remove(&elsewhere("i"));
            planned.push((b, c, g));
        }
        assert_eq!(planned[0], planned[1]);
        assert_eq!(planned[0], ((true, false), (true, false), false));
        let probes: Vec<PathBuf> = listed
            .iter()
            .flat_map(|n| [p(n), odd(n)])
            .chain(
                [
                    "a.jsonl.deleted.x",
                    "b.jsonl.deleted.x",
                    "c.jsonl.1",
                    "f.jsonl.1",
                ]
                .map(p),
            )
            .chain(["f.jsonl.2", "missing"].map(p))
            .chain(["h", "h.1", "i", "j"].map(elsewhere))
            .collect();
        let answers = |view: &DirOverlay| {
            let scanned: Vec<SessionFile> = probes
                .iter()
                .map(|q| SessionFile {
                    path: q.clone(),
                    canonical: q.clone(),
                    name: String::new(),
                    size: 1,
                    mtime_ms: 0.0,
                })
                .collect();
            let gone: Vec<bool> = probes.iter().map(|q| view.is_gone(q)).collect();
            let applied: Vec<PathBuf> = view.apply(scanned).into_iter().map(|f| f.path).collect();
            let files: Vec<(String, u64)> = dir_files(&snap, Some(view))
                .iter()
                .map(|f| (f.name.to_string(), f.size))
                .collect();
            let mut into: Vec<&PathBuf> = view.renamed_into(&root).collect();
            into.sort();
            let into: Vec<PathBuf> = into.into_iter().cloned().collect();
            (gone, applied, files, into, view.is_empty())
        };
        let expected = answers(&by_path);
        assert_eq!(answers(&by_place), expected);
        by_place.place_targets();
        assert_eq!(answers(&by_place), expected, "with the targets' places");
        // After the places are known, a target removed later still counts.
        by_path.remove(&p("f.jsonl.2"));
        by_place.remove(&p("f.jsonl.2"));
        by_path.remove(&odd("a.jsonl.deleted.x"));
        by_place.remove(&odd("a.jsonl.deleted.x"));
        let expected = answers(&by_path);
        assert_eq!(answers(&by_place), expected);
        let files: Vec<String> = expected.2.iter().map(|(n, _)| n.clone()).collect();
        assert_eq!(files, ["b.jsonl.deleted.x", "c.jsonl.1"]);
    }

    /// A file found in another listing than the overlay's (or at a place out of its
    /// range) is planned by its path, once, as the overlay by path plans it.
    #[test]
    fn a_rename_found_in_another_listing_is_planned_by_path() {
        let d = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(d.path()).unwrap();
        for n in ["a.jsonl", "b.jsonl"] {
            std::fs::write(root.join(n), n).unwrap();
        }
        let ours = Arc::new(DirSnapshot::read(&root));
        let other = DirSnapshot::read(&root);
        let mut view = DirOverlay::over(Arc::clone(&ours));
        let (a, b) = (root.join("a.jsonl"), root.join("b.jsonl"));
        let a_at = other.lookup(b"a.jsonl").unwrap();
        let to = |p: &Path| PathBuf::from(format!("{}.deleted.x", p.display()));
        assert!(view.rename_listed_unless_gone(&other, a_at, &a, &to(&a)));
        assert!(!view.rename_listed_unless_gone(&other, a_at, &a, &to(&a)));
        assert!(
            !view.rename_unless_gone(&a, &to(&a)),
            "one home for the plan"
        );
        assert!(view.rename_listed_unless_gone(&ours, usize::MAX, &b, &to(&b)));
        assert!(view.is_gone(&a) && view.is_gone(&b));
        let mut files: Vec<String> = dir_files(&ours, Some(&view))
            .iter()
            .map(|f| f.name.to_string())
            .collect();
        files.sort();
        assert_eq!(files, ["a.jsonl.deleted.x", "b.jsonl.deleted.x"]);
    }

    /// A batch's plain names are the pairs' names in the directory, side by side; a pair
    /// with a path elsewhere (or a name the guard would not take as it is) has none, and
    /// is renamed from its paths. Either way, the outcomes are those of renames made from
    /// the paths alone.
    #[test]
    fn a_batch_renames_by_its_plain_names_and_by_paths_alike() {
        let run = |use_names: bool| {
            let d = tempfile::tempdir().unwrap();
            let root = std::fs::canonicalize(d.path()).unwrap();
            std::fs::create_dir(root.join("sub")).unwrap();
            for n in ["a.jsonl", "b.jsonl", "..c.jsonl"] {
                std::fs::write(root.join(n), n).unwrap();
            }
            let pairs: Vec<(PathBuf, PathBuf)> = vec![
                (root.join("a.jsonl"), root.join("a.jsonl.deleted.x")),
                (root.join("b.jsonl"), root.join("sub").join("b.jsonl")),
                (root.join("..c.jsonl"), root.join("..c.jsonl.deleted.x")),
                (root.join("gone.jsonl"), root.join("gone.jsonl.deleted.x")),
            ];
            let names = PlainNames::new(&root, &pairs);
            assert_eq!(names.pair(0), Some((c"a.jsonl", c"a.jsonl.deleted.x")));
            assert_eq!(names.pair(1), None, "a destination in a subdirectory");
            assert_eq!(names.pair(2), None, "a name starting with ..");
            assert_eq!(
                names.pair(3),
                Some((c"gone.jsonl", c"gone.jsonl.deleted.x"))
            );
            let snap = Arc::new(DirSnapshot::read(&root));
            let mut batch = RenameBatch::new(Arc::new(pairs), Some(&snap));
            assert!(batch.names.is_some());
            if !use_names {
                batch.names = None;
            }
            let mut g = DirGuard::new(&root);
            let underway = g.start_renames(batch);
            let (archived, _) = g.finish_batch(underway, &[], Some(&snap));
            let mut left: Vec<String> = walk(&root);
            left.sort();
            let events: Vec<String> = g
                .events
                .iter()
                .map(|e| format!("{e:?}").replace(&*root.to_string_lossy(), "ROOT"))
                .collect();
            (archived, left, events)
        };
        fn walk(dir: &Path) -> Vec<String> {
            let mut out = Vec::new();
            for e in std::fs::read_dir(dir).unwrap().flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                if e.file_type().unwrap().is_dir() {
                    out.extend(walk(&e.path()).into_iter().map(|n| format!("{name}/{n}")));
                } else {
                    out.push(name);
                }
            }
            out
        }
        let by_names = run(true);
        assert_eq!(by_names, run(false));
        assert!(by_names.1.contains(&"a.jsonl.deleted.x".to_string()));
        assert!(by_names.0 >= 1);
    }
}
