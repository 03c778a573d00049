//! One listing of a sessions directory, shared by every step that looks at it: the names
//! and types in directory order (one `getdents` pass, links not followed), a name index,
//! and each regular file's size and mtime, fetched once with `fstatat` relative to the
//! open directory (no path walk per file) and cached.
//!
//! A snapshot describes the directory when it was read; a step that must see the changes
//! of an earlier step reads a new one. Names that are not UTF-8 are left out (no entry of a
//! store can name them, and the gateway cannot stat them either).

use std::ffi::{CStr, CString};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use foldhash::fast::FixedState;

/// What a directory entry is, links not followed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    /// A regular file.
    File,
    /// A symbolic link.
    Symlink,
    /// A directory.
    Dir,
    /// Anything else (fifo, socket, device).
    Other,
}

/// The size and mtime of a regular file.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FileStat {
    /// Size in bytes.
    pub size: u64,
    /// `stat.mtimeMs` as Node computes it.
    pub mtime_ms: f64,
}

#[derive(Debug)]
struct Entry {
    start: u32,
    len: u32,
    kind: EntryKind,
    /// Fetched once, by whichever thread asks first: `None` for not a regular file.
    stat: OnceLock<Option<FileStat>>,
}

/// One listing of a directory (see the module documentation).
#[derive(Debug)]
pub struct DirSnapshot {
    dir: PathBuf,
    fd: Option<OwnedFd>,
    /// The names, each followed by a NUL (so that each is also a C string).
    names: String,
    entries: Vec<Entry>,
    /// Open-addressing index: entry number + 1 (0 for a free slot), and the low bits of
    /// the name's hash (so that a probe reads a name only when they match).
    table: Vec<(u32, u32)>,
    /// The slot of a hash is its top bits: `hash >> shift`.
    shift: u32,
    /// Whether any entry is a symlink.
    has_symlinks: bool,
}

fn name_hash(name: &[u8]) -> u64 {
    use std::hash::{BuildHasher, Hasher};
    // foldhash's finish mixes every bit: the table indexes by the top ones.
    let mut h = FixedState::default().build_hasher();
    h.write(name);
    h.finish()
}

fn kind_of_mode(mode: libc::mode_t) -> EntryKind {
    match mode & libc::S_IFMT {
        libc::S_IFREG => EntryKind::File,
        libc::S_IFLNK => EntryKind::Symlink,
        libc::S_IFDIR => EntryKind::Dir,
        _ => EntryKind::Other,
    }
}

/// `fstatat(dir, name, AT_SYMLINK_NOFOLLOW)`.
pub fn lstat_at(dir: RawFd, name: &CStr) -> Option<libc::stat> {
    let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
    // SAFETY: `name` is a valid C string and `st` a writable stat buffer.
    let r = unsafe {
        libc::fstatat(
            dir,
            name.as_ptr(),
            st.as_mut_ptr(),
            libc::AT_SYMLINK_NOFOLLOW,
        )
    };
    // SAFETY: fstatat filled the buffer when it returned 0.
    (r == 0).then(|| unsafe { st.assume_init() })
}

fn file_stat(st: &libc::stat) -> Option<FileStat> {
    (kind_of_mode(st.st_mode) == EntryKind::File).then(|| FileStat {
        size: st.st_size as u64,
        mtime_ms: st.st_mtime as f64 * 1000.0 + st.st_mtime_nsec as f64 / 1e6,
    })
}

/// Gives the calling thread (alone: Linux priorities are per thread) the lowest priority
/// (nice 19); where that is refused, it runs as it was. Elsewhere (and with
/// `CLAWSTATE_PORTABLE=1`) nothing: a process-wide priority would slow the caller too.
fn lower_this_thread_priority() {
    #[cfg(target_os = "linux")]
    if crate::fs::platform::linux_specific() {
        let tid = rustix::thread::gettid();
        let _ = rustix::process::setpriority_process(Some(tid), 19);
    }
}

/// Opens `dir` for `*at` calls: a directory, not a link (`O_DIRECTORY | O_NOFOLLOW`).
pub fn open_dir(dir: &Path) -> Option<OwnedFd> {
    use rustix::fs::{Mode, OFlags};
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    rustix::fs::open(dir, flags, Mode::empty()).ok()
}

impl DirSnapshot {
    /// Lists `dir` (which should be canonical); an unreadable directory gives an empty,
    /// unreadable snapshot.
    pub fn read(dir: &Path) -> Self {
        let mut snap = DirSnapshot {
            dir: dir.to_path_buf(),
            fd: None,
            names: String::new(),
            entries: Vec::new(),
            table: Vec::new(),
            shift: 64,
            has_symlinks: false,
        };
        let Some(fd) = open_dir(dir) else {
            return snap;
        };
        // The directory's size bounds the bytes of its names (each record holds one plus
        // a header): reserving that (untouched pages cost nothing) saves the copies and
        // the fresh pages of growing by doubling.
        let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
        // SAFETY: `fd` is open and `st` a writable stat buffer.
        if unsafe { libc::fstat(fd.as_raw_fd(), st.as_mut_ptr()) } == 0 {
            // SAFETY: fstat filled the buffer.
            let size = unsafe { st.assume_init() }.st_size.clamp(0, 1 << 30) as usize;
            snap.names.reserve(size);
            snap.entries.reserve(size / 24);
        }
        if snap.list(&fd).is_none() {
            return snap;
        }
        snap.fd = Some(fd);
        snap.build_index();
        snap
    }

    fn list(&mut self, fd: &OwnedFd) -> Option<()> {
        // SAFETY: duplicating an open fd; the duplicate is owned by the DIR stream below.
        let dup = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 0) };
        if dup < 0 {
            return None;
        }
        // SAFETY: `dup` is an open directory fd; on success the stream owns it.
        let dirp = unsafe { libc::fdopendir(dup) };
        if dirp.is_null() {
            // SAFETY: `dup` is still ours when fdopendir failed.
            unsafe { libc::close(dup) };
            return None;
        }
        loop {
            // SAFETY: `dirp` is a valid open stream.
            let ent = unsafe { libc::readdir(dirp) };
            if ent.is_null() {
                break;
            }
            // SAFETY: readdir returned a valid entry, valid until the next call.
            let (name, d_type) = unsafe { (CStr::from_ptr((*ent).d_name.as_ptr()), (*ent).d_type) };
            let bytes = name.to_bytes();
            if bytes == b"." || bytes == b".." {
                continue;
            }
            let Ok(name) = std::str::from_utf8(bytes) else {
                continue;
            };
            let kind = match d_type {
                libc::DT_REG => EntryKind::File,
                libc::DT_LNK => EntryKind::Symlink,
                libc::DT_DIR => EntryKind::Dir,
                libc::DT_UNKNOWN => match lstat_at(fd.as_raw_fd(), &CString::new(bytes).ok()?) {
                    Some(st) => kind_of_mode(st.st_mode),
                    None => continue,
                },
                _ => EntryKind::Other,
            };
            self.has_symlinks |= kind == EntryKind::Symlink;
            let start = self.names.len() as u32;
            self.names.push_str(name);
            self.names.push('\0');
            self.entries.push(Entry {
                start,
                len: bytes.len() as u32,
                kind,
                stat: OnceLock::new(),
            });
        }
        // SAFETY: closing the stream opened above (and its fd).
        unsafe { libc::closedir(dirp) };
        Some(())
    }

    fn build_index(&mut self) {
        let size = (self.entries.len() * 2).next_power_of_two().max(16);
        let mask = size - 1;
        self.shift = 64 - size.trailing_zeros();
        let mut table = vec![(0u32, 0u32); size];
        for i in 0..self.entries.len() {
            let hash = name_hash(self.name(i).as_bytes());
            let mut slot = (hash >> self.shift) as usize;
            while table[slot].0 != 0 {
                slot = (slot + 1) & mask;
            }
            table[slot] = (i as u32 + 1, hash as u32);
        }
        self.table = table;
    }

    /// The directory listed.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Whether the directory could be read.
    pub fn readable(&self) -> bool {
        self.fd.is_some()
    }

    /// The open directory (for `*at` calls), when it could be read.
    pub fn fd(&self) -> Option<RawFd> {
        self.fd.as_ref().map(AsRawFd::as_raw_fd)
    }

    /// How many entries were listed.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether nothing was listed.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The name of entry `i`.
    pub fn name(&self, i: usize) -> &str {
        let e = &self.entries[i];
        &self.names[e.start as usize..(e.start + e.len) as usize]
    }

    fn c_name(&self, i: usize) -> &CStr {
        let e = &self.entries[i];
        CStr::from_bytes_with_nul(
            &self.names.as_bytes()[e.start as usize..=(e.start + e.len) as usize],
        )
        .expect("names are stored NUL-terminated without inner NULs")
    }

    /// Whether any entry was listed as a symlink.
    pub fn has_symlinks(&self) -> bool {
        self.has_symlinks
    }

    /// Whether `name` was listed as a symlink.
    pub fn is_symlink(&self, name: &[u8]) -> bool {
        self.has_symlinks
            && self
                .lookup(name)
                .is_some_and(|i| self.kind(i) == EntryKind::Symlink)
    }

    /// What entry `i` was when listed.
    pub fn kind(&self, i: usize) -> EntryKind {
        self.entries[i].kind
    }

    /// The entry named `name`, its size and mtime fetched now if they were not yet: the
    /// listing keeps them when the file is then renamed or rewritten.
    pub fn lookup_keeping_stat(&self, name: &[u8]) -> Option<usize> {
        let i = self.lookup(name)?;
        let _ = self.stat(i);
        Some(i)
    }

    /// The entry named `name`.
    pub fn lookup(&self, name: &[u8]) -> Option<usize> {
        if self.table.is_empty() {
            return None;
        }
        let mask = self.table.len() - 1;
        let hash = name_hash(name);
        let mut slot = (hash >> self.shift) as usize;
        loop {
            let (i, low) = self.table[slot];
            if i == 0 {
                return None;
            }
            if low == hash as u32 && self.name(i as usize - 1).as_bytes() == name {
                return Some(i as usize - 1);
            }
            slot = (slot + 1) & mask;
        }
    }

    /// The entries listed as regular files, in directory order.
    pub fn files(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.entries.len()).filter(|&i| self.entries[i].kind == EntryKind::File)
    }

    /// The size and mtime of entry `i` (`None`: not a regular file, or gone), stat-ed
    /// once (links not followed).
    pub fn stat(&self, i: usize) -> Option<FileStat> {
        let e = &self.entries[i];
        if let Some(st) = e.stat.get() {
            return *st;
        }
        let st = self
            .fd()
            .and_then(|fd| lstat_at(fd, self.c_name(i)))
            .and_then(|st| file_stat(&st));
        // Another thread may have fetched it meanwhile: the first answer stays.
        *e.stat.get_or_init(|| st)
    }

    /// Stats every regular file now.
    pub fn stat_files(&self) {
        for i in self.files() {
            self.stat(i);
        }
    }

    /// Stats every regular file on a thread of its own, at the lowest priority (nice 19;
    /// on two cores it was still seen taking most of one while busier threads shared the
    /// other, so start it where no critical step runs); whoever needs a stat first
    /// fetches it (see [`DirSnapshot::stat`]). It stops early once no one else holds the
    /// snapshot.
    pub fn stat_files_in_background(self: &Arc<Self>) {
        let snap = Arc::clone(self);
        // A failed spawn leaves every stat to be fetched when asked for.
        let _ = std::thread::Builder::new().spawn(move || {
            lower_this_thread_priority();
            for i in snap.files() {
                if Arc::strong_count(&snap) == 1 {
                    break;
                }
                snap.stat(i);
            }
        });
    }

    /// The full path of entry `i`.
    pub fn path(&self, i: usize) -> PathBuf {
        self.dir.join(self.name(i))
    }
}

/// Directories the maintenance modules' tests share.
#[cfg(test)]
pub(crate) mod fixtures {
    use std::path::PathBuf;

    /// A temp directory (and its canonical path) holding the file `a.jsonl` ("abc"), the
    /// directory `sub` and the symlink `l.jsonl` to `a.jsonl`.
    pub(crate) fn file_dir_and_link() -> (tempfile::TempDir, PathBuf) {
        let d = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(d.path()).unwrap();
        std::fs::write(root.join("a.jsonl"), "abc").unwrap();
        std::fs::create_dir(root.join("sub")).unwrap();
        std::os::unix::fs::symlink(root.join("a.jsonl"), root.join("l.jsonl")).unwrap();
        (d, root)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lowering a thread's priority lowers that thread's alone.
    #[test]
    fn lowers_only_the_calling_thread() {
        let tid = rustix::thread::gettid;
        let nice = |t| rustix::process::getpriority_process(Some(t)).unwrap();
        let here = tid();
        let before = nice(here);
        let (there, after) = std::thread::spawn(move || {
            lower_this_thread_priority();
            (tid(), nice(tid()))
        })
        .join()
        .unwrap();
        assert_ne!(there, here);
        assert_eq!(after, 19);
        assert_eq!(nice(here), before);
    }

    /// The background thread fetches every regular file's stat, each as `stat` would.
    #[test]
    fn stats_files_in_the_background() {
        let d = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(d.path()).unwrap();
        for k in 0..200 {
            std::fs::write(root.join(format!("f{k}.jsonl")), "x".repeat(k)).unwrap();
        }
        std::fs::create_dir(root.join("sub")).unwrap();
        let snap = Arc::new(DirSnapshot::read(&root));
        let fetched = |s: &DirSnapshot| s.files().all(|i| s.entries[i].stat.get().is_some());
        assert!(!fetched(&snap));
        snap.stat_files_in_background();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while !fetched(&snap) {
            assert!(std::time::Instant::now() < deadline, "not all stat-ed");
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert_eq!(snap.files().count(), 200);
        for i in snap.files() {
            let len = std::fs::metadata(snap.path(i)).unwrap().len();
            assert_eq!(snap.stat(i).map(|f| f.size), Some(len), "{}", snap.name(i));
        }
        let sub = snap.lookup(b"sub").unwrap();
        assert!(
            snap.entries[sub].stat.get().is_none(),
            "a directory is not stat-ed"
        );
    }

    #[test]
    fn lists_indexes_and_stats() {
        let (_d, root) = fixtures::file_dir_and_link();
        let s = DirSnapshot::read(&root);
        assert!(s.readable());
        assert_eq!(s.len(), 3);
        let a = s.lookup(b"a.jsonl").unwrap();
        assert_eq!(s.kind(a), EntryKind::File);
        assert_eq!(s.stat(a).map(|f| f.size), Some(3));
        let m = std::fs::metadata(root.join("a.jsonl")).unwrap();
        assert_eq!(
            s.stat(a).map(|f| f.mtime_ms),
            Some(super::super::files::mtime_ms(&m))
        );
        assert!(s.is_symlink(b"l.jsonl") && !s.is_symlink(b"a.jsonl"));
        let l = s.lookup(b"l.jsonl").unwrap();
        assert_eq!(s.kind(l), EntryKind::Symlink);
        assert_eq!(s.stat(l), None);
        assert_eq!(s.kind(s.lookup(b"sub").unwrap()), EntryKind::Dir);
        assert_eq!(s.lookup(b"missing"), None);
        assert_eq!(
            s.files().map(|i| s.name(i)).collect::<Vec<_>>(),
            ["a.jsonl"]
        );
        assert_eq!(s.path(a), root.join("a.jsonl"));
        let gone = DirSnapshot::read(&root.join("nope"));
        assert!(!gone.readable() && gone.is_empty() && gone.lookup(b"a.jsonl").is_none());
    }
}
