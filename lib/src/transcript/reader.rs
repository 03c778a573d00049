//! The tolerant transcript reader (`transcript.md` §1.8) and a streaming line scanner.
//!
//! [`parse_bytes`] accepts exactly what SessionManager's `parseJsonlEntries` accepts: the
//! whole content is trimmed (so a UTF-8 BOM before the header is tolerated), split on `\n`,
//! blank lines are skipped, `\r\n` is tolerated and every line that is not JSON (a torn last
//! line included) is skipped — and, unlike the gateway, reported with its line number.
//! [`scan_lines`] walks a file of any size in bounded memory, one line at a time.

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use serde_json::Value;
use thiserror::Error;

use super::entry::Row;
use crate::exit::{self, ExitCode};
use crate::fs::data_file::{DataFileError, DataPath};
use crate::js;

/// A transcript that could not be read at all.
#[derive(Debug, Error)]
pub enum ReadError {
    /// The file does not exist.
    #[error("{}: no such transcript", path.display())]
    NotFound {
        /// The path.
        path: PathBuf,
    },
    /// The path cannot be used: a symlink on the way, not a regular file, or the system
    /// refused to open it.
    #[error(transparent)]
    Unusable(DataFileError),
    /// Any other I/O failure.
    #[error("{}: cannot read: {source}", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// The error.
        source: io::Error,
    },
}

impl ExitCode for ReadError {
    fn exit_code(&self) -> i32 {
        match self {
            ReadError::NotFound { .. } => exit::NOT_FOUND,
            ReadError::Unusable(e) => e.exit_code(),
            ReadError::Io { .. } => exit::CANT_CREATE,
        }
    }
}

impl From<DataFileError> for ReadError {
    fn from(e: DataFileError) -> Self {
        match e {
            DataFileError::NotFound { path } => ReadError::NotFound { path },
            e => ReadError::Unusable(e),
        }
    }
}

impl ReadError {
    /// Wraps an I/O error for `path`.
    pub fn io(path: &Path, source: io::Error) -> Self {
        if source.kind() == io::ErrorKind::NotFound {
            ReadError::NotFound {
                path: path.to_path_buf(),
            }
        } else {
            ReadError::Io {
                path: path.to_path_buf(),
                source,
            }
        }
    }
}

/// A line the tolerant reader skipped because it is not JSON.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedLine {
    /// 1-based line number.
    pub line: usize,
    /// Byte offset of the line.
    pub offset: u64,
    /// Byte length of the line.
    pub len: usize,
    /// Whether it is the last line and has no terminating newline (a torn append).
    pub torn_tail: bool,
    /// What the JSON parser said.
    pub error: String,
}

/// A whole transcript as the tolerant reader sees it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Transcript {
    /// Every parsed line, in file order.
    pub rows: Vec<Row>,
    /// Lines that are not JSON.
    pub skipped: Vec<SkippedLine>,
    /// Blank (white-space only) lines.
    pub blank_lines: usize,
    /// Lines that ended in `\r\n`.
    pub crlf_lines: usize,
    /// Physical lines (a final line without newline counts).
    pub total_lines: usize,
    /// File size in bytes.
    pub bytes: u64,
    /// Whether the last byte is `\n` (or the file is empty).
    pub ends_with_newline: bool,
}

impl Transcript {
    /// Whether the file ends in a torn (unterminated, unparsable) line.
    pub fn has_torn_tail(&self) -> bool {
        self.skipped.iter().any(|s| s.torn_tail)
    }

    /// The rows' values, in order.
    pub fn values(&self) -> Vec<Value> {
        self.rows.iter().map(|r| r.value.clone()).collect()
    }
}

/// One physical line of a file, without its `\n`.
#[derive(Debug, Clone, Copy)]
pub struct RawLine<'a> {
    /// 1-based line number.
    pub number: usize,
    /// Byte offset of the first byte.
    pub offset: u64,
    /// The bytes (a trailing `\r` included).
    pub bytes: &'a [u8],
    /// Whether a `\n` terminated it.
    pub terminated: bool,
}

/// Calls `f` for every line of `reader` in bounded memory (lines are assembled across
/// buffer boundaries; a line is held whole, so memory is bounded by the longest line).
/// Stops early when `f` returns `false`. Returns the number of bytes read.
pub fn scan_lines<R: Read>(
    mut reader: R,
    mut f: impl FnMut(RawLine<'_>) -> bool,
) -> io::Result<u64> {
    // 128 KiB reads (as `cat`'s): the bytes are still in cache when the lines are parsed;
    // 1 MiB reads spent measurably more system time copying (`check`).
    const CHUNK: usize = 1 << 17;
    // buf[start..filled] is the pending partial line; reads go to buf[filled..], at least
    // CHUNK bytes at a time. The buffer is zeroed once, when it grows.
    let mut buf: Vec<u8> = vec![0; CHUNK * 2];
    let mut start = 0usize;
    let mut filled = 0usize;
    let mut base: u64 = 0; // file offset of buf[0]
    let mut number = 0usize;
    let mut total: u64 = 0;
    loop {
        if buf.len() - filled < CHUNK {
            // Compact: move the pending partial line to the front.
            if start > 0 {
                buf.copy_within(start..filled, 0);
                base += start as u64;
                filled -= start;
                start = 0;
            }
            if buf.len() - filled < CHUNK {
                buf.resize(filled + CHUNK, 0);
            }
        }
        let n = loop {
            match reader.read(&mut buf[filled..]) {
                Ok(n) => break n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        };
        if n == 0 {
            break;
        }
        total += n as u64;
        let mut search_from = filled;
        filled += n;
        while let Some(pos) = memchr::memchr(b'\n', &buf[search_from..filled]) {
            let end = search_from + pos;
            number += 1;
            let line = RawLine {
                number,
                offset: base + start as u64,
                bytes: &buf[start..end],
                terminated: true,
            };
            if !f(line) {
                return Ok(total);
            }
            start = end + 1;
            search_from = start;
        }
    }
    if start < filled {
        number += 1;
        f(RawLine {
            number,
            offset: base + start as u64,
            bytes: &buf[start..filled],
            terminated: false,
        });
    }
    Ok(total)
}

/// Decodes a line as `readFileSync(…, "utf8")` would (invalid bytes become U+FFFD).
pub fn decode_line(bytes: &[u8]) -> std::borrow::Cow<'_, str> {
    String::from_utf8_lossy(bytes)
}

/// Parses one line as `JSON.parse` would (JSON white space around the value allowed; lone
/// surrogates and out-of-range numbers read as [`crate::js::jsjson::parse_value`] reads them).
pub fn parse_json_line(text: &str) -> Result<Value, serde_json::Error> {
    crate::js::jsjson::parse_value(text)
}

/// Reads a whole transcript file with the tolerant reader.
pub fn read_file(path: &DataPath) -> Result<Transcript, ReadError> {
    Ok(parse_bytes(&path.read()?))
}

/// The tolerant reader over bytes already in memory.
pub fn parse_bytes(bytes: &[u8]) -> Transcript {
    let mut t = Transcript {
        bytes: bytes.len() as u64,
        ends_with_newline: bytes.is_empty() || bytes.last() == Some(&b'\n'),
        ..Transcript::default()
    };
    // Collect the physical lines first, so the first and last non-blank lines can be
    // trimmed like `content.trim()` trims the whole text.
    let lines = split_lines(bytes);
    t.total_lines = lines.len();
    let texts: Vec<std::borrow::Cow<'_, str>> = lines.iter().map(|l| decode_line(l.2)).collect();
    let is_blank = |s: &str| js::trim(s).is_empty();
    let first = texts.iter().position(|s| !is_blank(s));
    let last = texts.iter().rposition(|s| !is_blank(s));
    for (i, ((number, offset, raw, terminated), text)) in lines.iter().zip(&texts).enumerate() {
        if raw.last() == Some(&b'\r') {
            t.crlf_lines += 1;
        }
        if is_blank(text) {
            t.blank_lines += 1;
            continue;
        }
        let mut s: &str = text;
        if Some(i) == first {
            s = js::trim_start(s);
        }
        if Some(i) == last {
            s = js::trim_end(s);
        }
        match parse_json_line(s) {
            Ok(value) => t.rows.push(Row {
                line: *number,
                offset: *offset,
                len: raw.len(),
                value,
            }),
            Err(e) => t.skipped.push(SkippedLine {
                line: *number,
                offset: *offset,
                len: raw.len(),
                torn_tail: !terminated && i + 1 == lines.len(),
                error: e.to_string(),
            }),
        }
    }
    t
}

/// Splits bytes in memory into (line number, offset, bytes, terminated) without copying.
pub fn split_lines(bytes: &[u8]) -> Vec<(usize, u64, &[u8], bool)> {
    let mut out = Vec::new();
    let mut start = 0usize;
    for pos in memchr::memchr_iter(b'\n', bytes) {
        out.push((out.len() + 1, start as u64, &bytes[start..pos], true));
        start = pos + 1;
    }
    if start < bytes.len() {
        out.push((out.len() + 1, start as u64, &bytes[start..], false));
    }
    out
}

/// Opens a transcript for scanning ([`DataPath::open_read`]), mapping errors to
/// [`ReadError`].
pub fn open(path: &DataPath) -> Result<File, ReadError> {
    Ok(path.open_read()?.into_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tolerant_reader_skips_and_reports() {
        let text =
            "\u{feff}{\"type\":\"session\",\"id\":\"s\"}\r\n\n  \n{\"a\":1}\nnot json\n{\"torn\":";
        let t = parse_bytes(text.as_bytes());
        assert_eq!(t.rows.len(), 2);
        assert_eq!(t.rows[0].line, 1);
        assert_eq!(t.rows[1].line, 4);
        assert_eq!(t.skipped.len(), 2);
        assert_eq!(t.skipped[0].line, 5);
        assert!(!t.skipped[0].torn_tail);
        assert!(t.skipped[1].torn_tail);
        assert_eq!(t.blank_lines, 2);
        assert_eq!(t.crlf_lines, 1);
        assert!(t.has_torn_tail());
    }

    #[test]
    fn scanner_keeps_lines_longer_than_its_buffer() {
        let mut text = Vec::new();
        let sizes = [
            0usize,
            1,
            (1 << 20) - 1,
            1 << 20,
            3 << 20,
            5,
            (2 << 20) + 7,
            0,
            9,
        ];
        for (i, n) in sizes.iter().enumerate() {
            text.extend(std::iter::repeat_n(b'a' + i as u8, *n));
            if i % 3 == 1 {
                text.push(b'\r');
            }
            text.push(b'\n');
        }
        text.extend_from_slice(b"tail");
        // A reader that returns few bytes at a time, to cross every boundary.
        struct Trickle<'a>(&'a [u8], usize);
        impl Read for Trickle<'_> {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                self.1 += 1;
                let n = buf
                    .len()
                    .min(self.0.len())
                    .min(if self.1.is_multiple_of(2) { 7 } else { 300_001 });
                buf[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Ok(n)
            }
        }
        for trickle in [false, true] {
            let mut got: Vec<(usize, u64, Vec<u8>, bool)> = Vec::new();
            let collect = |l: RawLine<'_>, got: &mut Vec<(usize, u64, Vec<u8>, bool)>| {
                got.push((l.number, l.offset, l.bytes.to_vec(), l.terminated));
                true
            };
            let total = if trickle {
                scan_lines(Trickle(&text, 0), |l| collect(l, &mut got)).unwrap()
            } else {
                scan_lines(&text[..], |l| collect(l, &mut got)).unwrap()
            };
            assert_eq!(total, text.len() as u64);
            let want: Vec<(usize, u64, Vec<u8>, bool)> = split_lines(&text)
                .into_iter()
                .map(|(n, o, b, t)| (n, o, b.to_vec(), t))
                .collect();
            assert!(got == want, "trickle {trickle}");
        }
    }

    #[test]
    fn scanner_crosses_chunks() {
        let mut text = String::new();
        for i in 0..5000 {
            text.push_str(&format!(
                "{{\"i\":{i},\"pad\":\"{}\"}}\n",
                "x".repeat(i % 700)
            ));
        }
        let mut n = 0;
        let mut last_offset = 0;
        scan_lines(text.as_bytes(), |l| {
            n += 1;
            let v: Value = serde_json::from_slice(l.bytes).unwrap();
            assert_eq!(v["i"], n - 1);
            assert_eq!(
                &text.as_bytes()[l.offset as usize..l.offset as usize + l.bytes.len()],
                l.bytes
            );
            last_offset = l.offset;
            true
        })
        .unwrap();
        assert_eq!(n, 5000);
        assert!(last_offset > 0);
    }
}
