//! The whole text of a file, checked as UTF-8: a large file mapped read-only from the
//! page cache, a small one read into memory.
//!
//! Mapping a large store costs page faults on pages the kernel already holds; reading it
//! costs a fresh page for every 4 KiB and a copy of every byte. A mapping shows
//! the file as it is on disk, so it is only as steady as the file: the gateway replaces
//! its store by renaming a new file over it (the mapped file is left as it was), and
//! writes none in place. A program that broke that rule while the text is in use would
//! change it under its reader: the bytes were checked as UTF-8 once, when mapped, so
//! such a write could make the text other than checked, and a truncation raises `SIGBUS`
//! on the next read past the new end, as for any program that maps files.
//! [`FileText::unchanged`] tells whether the mapped file was written since it was
//! mapped, for a caller about to put bytes of it in another file.

use std::fs::File;
use std::ops::Deref;
use std::os::fd::AsRawFd;
use std::path::Path;

use thiserror::Error;

/// Files at least this large are mapped; smaller ones are read.
pub(crate) const MAP_MIN: u64 = 8 << 20;

/// A file's text that could not be had.
#[derive(Debug, Error)]
pub enum FileTextError {
    /// The file could not be opened, mapped or read.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// The file cannot be read as data: not a regular file (a FIFO, a device, a
    /// directory).
    #[error(transparent)]
    Unusable(crate::fs::data_file::DataFileError),
    /// The file is not UTF-8: the first bad byte is at this line and column (1-based).
    #[error("invalid UTF-8 at {line}:{column}")]
    NotUtf8 {
        /// 1-based line of the first invalid byte.
        line: usize,
        /// 1-based column (in bytes) of the first invalid byte.
        column: usize,
    },
}

/// The text of a whole file (valid UTF-8), read or mapped.
pub struct FileText {
    data: Data,
}

enum Data {
    Read(String),
    Mapped(Mapping),
}

/// A read-only private mapping of a whole file, with the file kept open to check it.
struct Mapping {
    ptr: *const u8,
    len: usize,
    file: File,
    /// The file's size and modification time when mapped.
    seen: Seen,
}

// SAFETY: the mapping is read-only and never handed out mutably; the pointer is only
// read through `&self`.
unsafe impl Send for Mapping {}
// SAFETY: as above: shared reads of read-only memory.
unsafe impl Sync for Mapping {}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: `ptr`/`len` are the mapping made in `Mapping::of`, unmapped once here.
        unsafe {
            libc::munmap(self.ptr as *mut libc::c_void, self.len);
        }
    }
}

/// What says a file was written: its size and modification time (not its change time,
/// which also moves when the file is unlinked: renamed over, which leaves it as it was).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Seen {
    size: u64,
    mtime: (i64, i64),
}

impl Seen {
    fn of(file: &File) -> std::io::Result<Seen> {
        use std::os::unix::fs::MetadataExt;
        let m = file.metadata()?;
        Ok(Seen {
            size: m.size(),
            mtime: (m.mtime(), m.mtime_nsec()),
        })
    }
}

impl Mapping {
    /// Maps all `len` bytes of `file` (`None`: the kernel refused; read it instead). On
    /// Linux the page tables are filled at once (`MAP_POPULATE`: one call instead of a
    /// fault per page, as the whole text is about to be read); elsewhere, and with
    /// `CLAWSTATE_PORTABLE=1`, a plain mapping faults its pages in as they are read.
    fn of(file: File, len: usize, seen: Seen) -> Option<Mapping> {
        Mapping::with_flags(file, len, seen, populate_flag())
    }

    fn with_flags(file: File, len: usize, seen: Seen, extra: libc::c_int) -> Option<Mapping> {
        // SAFETY: a fresh read-only private mapping of an open file; checked below.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_PRIVATE | extra,
                file.as_raw_fd(),
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return None;
        }
        Some(Mapping {
            ptr: ptr as *const u8,
            len,
            file,
            seen,
        })
    }

    fn bytes(&self) -> &[u8] {
        // SAFETY: `ptr` maps `len` readable bytes for as long as `self` lives.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

/// `MAP_POPULATE` where the Linux pieces are in use ([`crate::fs::platform`]), else nothing.
fn populate_flag() -> libc::c_int {
    #[cfg(target_os = "linux")]
    if crate::fs::platform::linux_specific() {
        return libc::MAP_POPULATE;
    }
    0
}

impl FileText {
    /// Reads `path` whole, mapping it when it is large; checks that it is UTF-8. The file
    /// is opened as [`crate::fs::data_file::open_named`] opens it: a FIFO, a device or a
    /// directory is refused, never read.
    pub fn read(path: &Path) -> Result<FileText, FileTextError> {
        let open = || -> Result<File, FileTextError> {
            match crate::fs::data_file::open_named(path) {
                Ok(f) => Ok(f.into_file()),
                Err(e) if e.is_not_found() => {
                    Err(std::io::Error::from(std::io::ErrorKind::NotFound).into())
                }
                Err(crate::fs::data_file::DataFileError::Io { source, .. }) => Err(source.into()),
                Err(e) => Err(FileTextError::Unusable(e)),
            }
        };
        let mut file = open()?;
        let seen = Seen::of(&file)?;
        let len = seen.size;
        if len >= MAP_MIN {
            if let Some(map) = usize::try_from(len)
                .ok()
                .and_then(|len| Mapping::of(file, len, seen))
            {
                // Not shrunk between the `fstat` and the mapping (its pages are read next).
                if Seen::of(&map.file)? == seen {
                    check_utf8(map.bytes())?;
                    return Ok(FileText {
                        data: Data::Mapped(map),
                    });
                }
            }
            // Not mapped as it was: read it as it is now.
            file = open()?;
        }
        let len = Seen::of(&file)?.size;
        let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
        // At most the size `fstat` gave: a file that grows meanwhile is read as it was.
        std::io::Read::read_to_end(&mut std::io::Read::take(&mut file, len), &mut bytes)?;
        let text = String::from_utf8(bytes).map_err(|e| not_utf8(e.as_bytes(), e.utf8_error()))?;
        Ok(FileText::from(text))
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        match &self.data {
            Data::Read(s) => s,
            // SAFETY: checked as UTF-8 when mapped; it stays so unless another program
            // writes the file in place (see the module's doc, and `unchanged`).
            Data::Mapped(m) => unsafe { std::str::from_utf8_unchecked(m.bytes()) },
        }
    }

    /// Whether the file was mapped (not read).
    pub fn is_mapped(&self) -> bool {
        matches!(self.data, Data::Mapped(_))
    }

    /// Whether the text is still the file's as first had: always for text read into
    /// memory; for a mapped file, whether the file's size and modification time are as
    /// when mapped (a write in place changes them; a file renamed over this one leaves
    /// it as it was).
    pub fn unchanged(&self) -> bool {
        match &self.data {
            Data::Read(_) => true,
            Data::Mapped(m) => Seen::of(&m.file).is_ok_and(|now| now == m.seen),
        }
    }
}

/// Checks `bytes` as UTF-8, naming the line and column of the first invalid byte.
fn check_utf8(bytes: &[u8]) -> Result<(), FileTextError> {
    std::str::from_utf8(bytes)
        .map(|_| ())
        .map_err(|e| not_utf8(bytes, e))
}

/// The error for `bytes`, invalid UTF-8 as `e` says.
fn not_utf8(bytes: &[u8], e: std::str::Utf8Error) -> FileTextError {
    let valid = &bytes[..e.valid_up_to()];
    let line = valid.iter().filter(|&&b| b == b'\n').count() + 1;
    let column = valid.len() - valid.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1) + 1;
    FileTextError::NotUtf8 { line, column }
}

impl From<String> for FileText {
    fn from(text: String) -> Self {
        FileText {
            data: Data::Read(text),
        }
    }
}

impl Default for FileText {
    fn default() -> Self {
        FileText::from(String::new())
    }
}

impl Deref for FileText {
    type Target = str;

    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl std::fmt::Debug for FileText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileText")
            .field("len", &self.len())
            .field("mapped", &self.is_mapped())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Seek, SeekFrom, Write};

    fn large_text() -> String {
        let line = "{\"k\": \"é…\"}\n";
        line.repeat((MAP_MIN as usize) / line.len() + 1)
    }

    #[test]
    fn a_large_file_is_mapped_and_a_small_one_read() {
        let d = tempfile::tempdir().unwrap();
        let (big, small) = (d.path().join("big"), d.path().join("small"));
        let text = large_text();
        std::fs::write(&big, &text).unwrap();
        std::fs::write(&small, "{}").unwrap();
        let t = FileText::read(&big).unwrap();
        assert!(t.is_mapped());
        assert_eq!(t.as_str(), text);
        let s = FileText::read(&small).unwrap();
        assert!(!s.is_mapped());
        assert_eq!(&*s, "{}");
        assert!(FileText::read(&d.path().join("none")).is_err());
    }

    #[test]
    fn the_portable_plain_mapping_shows_the_same_bytes() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("big");
        let text = large_text();
        std::fs::write(&p, &text).unwrap();
        for extra in [0, populate_flag()] {
            let file = File::open(&p).unwrap();
            let seen = Seen::of(&file).unwrap();
            let m = Mapping::with_flags(file, text.len(), seen, extra).unwrap();
            assert_eq!(m.bytes(), text.as_bytes(), "flags {extra:#x}");
        }
    }

    #[test]
    fn invalid_utf8_is_named_by_line_and_column_either_way() {
        let d = tempfile::tempdir().unwrap();
        for (name, mut bytes) in [
            ("small", b"{\n  \"a\": 1,\n".to_vec()),
            ("big", large_text().into_bytes()),
        ] {
            let lines = bytes.iter().filter(|&&b| b == b'\n').count();
            bytes.extend_from_slice(b"  \"b\xff");
            let p = d.path().join(name);
            std::fs::write(&p, &bytes).unwrap();
            match FileText::read(&p) {
                Err(FileTextError::NotUtf8 { line, column }) => {
                    assert_eq!((line, column), (lines + 1, 5), "{name}")
                }
                other => panic!("{name}: {other:?}"),
            }
        }
    }

    #[test]
    fn a_write_in_place_is_seen_and_a_rename_over_the_file_is_not() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("store");
        let text = large_text();
        std::fs::write(&p, &text).unwrap();
        let t = FileText::read(&p).unwrap();
        assert!(t.is_mapped() && t.unchanged());
        // Another file renamed over it: the mapped file stays as it was.
        let other = d.path().join("other");
        std::fs::write(&other, "{}").unwrap();
        std::fs::rename(&other, &p).unwrap();
        assert!(t.unchanged());
        assert_eq!(t.as_str(), text);
        // A write in place into the file mapped.
        let t = {
            std::fs::write(&p, &text).unwrap();
            FileText::read(&p).unwrap()
        };
        std::thread::sleep(std::time::Duration::from_millis(20));
        let mut f = std::fs::OpenOptions::new().write(true).open(&p).unwrap();
        f.seek(SeekFrom::Start(3)).unwrap();
        f.write_all(b"x").unwrap();
        f.sync_all().unwrap();
        assert!(!t.unchanged());
        // Read text is a copy: always unchanged.
        assert!(FileText::from("{}".to_string()).unchanged());
    }
}
