//! The originals 2026.9.6's import keeps (`agents/<id>/session-sqlite-import-archive/`)
//! and the legacy files still in place, read as export and verify compare them with the
//! agent database.
//!
//! The import moves each imported transcript there byte for byte as
//! `<key with ':' as '_'>.<sessionId>.jsonl.imported-<ms>` and the store as
//! `legacy-store.sessions.json.imported-<ms>`; orphans it did not import go there as
//! `archive-tier.…` and are not read here. It stores every line re-serialised:
//! `JSON.stringify(JSON.parse(line))`, blank lines dropped, a torn last line left out
//! (only the readable prefix is imported). So an original line and a stored event are the
//! same event when the line's [`canonical_line`] equals the event's text: that is the
//! content whose SHA-256 ([`content_hash`]) verify looks up, as the import itself
//! deduplicates events by the SHA-256 of their text.

use std::ops::Range;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::fs::data_file::{DataFileError, DataPath};
use crate::js::jsjson;

/// The name of the import archive directory inside an agent directory.
pub const ARCHIVE_DIR_NAME: &str = "session-sqlite-import-archive";

/// The marker between a transcript's name and the import time in an archived name.
const IMPORTED_MARK: &str = ".jsonl.imported-";

/// The prefix of the archived legacy store.
const STORE_PREFIX: &str = "legacy-store.sessions.json.imported-";

/// The largest legacy file read whole (a transcript the import could have read).
pub const MAX_LEGACY_FILE: u64 = 4 << 30;

/// The import archive of the agent whose database is `db_path`
/// (`<agentDir>/agent/openclaw-agent.sqlite` → `<agentDir>/session-sqlite-import-archive`).
pub fn archive_dir_for_db(db_path: &Path) -> PathBuf {
    agent_dir_for_db(db_path).join(ARCHIVE_DIR_NAME)
}

/// The agent directory of a database path.
pub fn agent_dir_for_db(db_path: &Path) -> PathBuf {
    db_path
        .parent()
        .and_then(Path::parent)
        .unwrap_or(Path::new("."))
        .to_path_buf()
}

/// One original transcript: in the import archive, or still in the legacy sessions dir.
#[derive(Debug, Clone)]
pub struct LegacyTranscript {
    /// The file.
    pub file: DataPath,
    /// The sessionId its name carries.
    pub session_id: String,
    /// The import time of an archived copy (ms), `None` for a file in place.
    pub imported_ms: Option<i64>,
}

/// Every archived transcript of an import archive, oldest import first (none when the
/// directory is missing).
pub fn archived_transcripts(archive: &Path) -> Result<Vec<LegacyTranscript>, DataFileError> {
    let mut out = Vec::new();
    for name in names_in(archive)? {
        if name.starts_with("archive-tier.") {
            continue;
        }
        let Some(at) = name.rfind(IMPORTED_MARK) else {
            continue;
        };
        let Ok(ms) = name[at + IMPORTED_MARK.len()..].parse::<i64>() else {
            continue;
        };
        let stem = &name[..at];
        let Some(dot) = stem.rfind('.') else { continue };
        let session_id = stem[dot + 1..].to_string();
        if session_id.is_empty() {
            continue;
        }
        out.push(LegacyTranscript {
            file: DataPath::beneath(archive, Path::new(&name))?,
            session_id,
            imported_ms: Some(ms),
        });
    }
    out.sort_by(|a, b| (a.imported_ms, a.file.path()).cmp(&(b.imported_ms, b.file.path())));
    Ok(out)
}

/// The `<sessionId>.jsonl` transcripts still in a legacy sessions directory.
pub fn transcripts_in_place(sessions_dir: &Path) -> Result<Vec<LegacyTranscript>, DataFileError> {
    let mut out = Vec::new();
    for name in names_in(sessions_dir)? {
        let Some(id) = name.strip_suffix(".jsonl") else {
            continue;
        };
        if id.is_empty() {
            continue;
        }
        let file = DataPath::beneath(sessions_dir, Path::new(&name))?;
        if !file.is_file() {
            continue;
        }
        out.push(LegacyTranscript {
            file,
            session_id: id.to_string(),
            imported_ms: None,
        });
    }
    Ok(out)
}

/// The newest archived legacy store of an import archive.
pub fn archived_store(archive: &Path) -> Result<Option<DataPath>, DataFileError> {
    let mut best: Option<(i64, String)> = None;
    for name in names_in(archive)? {
        if let Some(ms) = name
            .strip_prefix(STORE_PREFIX)
            .and_then(|s| s.parse::<i64>().ok())
        {
            if best.as_ref().is_none_or(|(b, _)| ms > *b) {
                best = Some((ms, name));
            }
        }
    }
    best.map(|(_, name)| DataPath::beneath(archive, Path::new(&name)))
        .transpose()
}

/// A legacy store's entries in their order (`None`: the text is not a JSON object).
pub fn read_store(file: &DataPath) -> Result<Option<Map<String, Value>>, DataFileError> {
    let bytes = file.read_small(MAX_LEGACY_FILE, "legacy store")?;
    let Ok(text) = std::str::from_utf8(&bytes) else {
        return Ok(None);
    };
    Ok(match jsjson::parse_value(text) {
        Ok(Value::Object(m)) => Some(m),
        _ => None,
    })
}

fn names_in(dir: &Path) -> Result<Vec<String>, DataFileError> {
    let rd = match std::fs::read_dir(dir) {
        Ok(rd) => rd,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => {
            return Err(DataFileError::Io {
                path: dir.to_path_buf(),
                action: "list",
                source,
            })
        }
    };
    let mut names: Vec<String> = rd
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .collect();
    names.sort();
    Ok(names)
}

/// `JSON.stringify(JSON.parse(line))`: the text 9.6 stores for a legacy line (`None`
/// when the line does not parse).
pub fn canonical_line(line: &str) -> Option<String> {
    jsjson::parse_value(line)
        .ok()
        .map(|v| jsjson::to_string_compact(&v))
}

/// The SHA-256 of an event's text, as the import deduplicates events.
pub fn content_hash(text: &str) -> [u8; 32] {
    Sha256::digest(text.as_bytes()).into()
}

/// One non-blank line of an original transcript.
#[derive(Debug, Clone)]
pub struct OriginalLine {
    /// The 1-based line number in the file.
    pub number: usize,
    /// Its bytes in the file, with the newline after it when there is one.
    pub bytes: Range<usize>,
    /// Its re-serialised text (`None`: it does not parse).
    pub canonical: Option<String>,
}

/// An original transcript read whole: its bytes and its non-blank lines.
#[derive(Debug, Clone)]
pub struct Original {
    /// The file's bytes.
    pub bytes: Vec<u8>,
    /// The non-blank lines in order.
    pub lines: Vec<OriginalLine>,
}

impl Original {
    /// Reads and splits an original transcript.
    pub fn read(file: &DataPath) -> Result<Original, DataFileError> {
        let bytes = file.read_small(MAX_LEGACY_FILE, "legacy transcript")?;
        Ok(Self::from_bytes(bytes))
    }

    /// Splits bytes into lines (blank ones skipped, as the import skips them).
    pub fn from_bytes(bytes: Vec<u8>) -> Original {
        let mut lines = Vec::new();
        let mut start = 0;
        let mut number = 0;
        while start < bytes.len() {
            number += 1;
            let end = bytes[start..]
                .iter()
                .position(|&b| b == b'\n')
                .map_or(bytes.len(), |i| start + i + 1);
            let raw = &bytes[start..end];
            let text = String::from_utf8_lossy(raw);
            let trimmed = text.trim();
            if !trimmed.is_empty() {
                lines.push(OriginalLine {
                    number,
                    bytes: start..end,
                    canonical: canonical_line(trimmed),
                });
            }
            start = end;
        }
        Original { bytes, lines }
    }

    /// How many leading lines are, in order, the first `events` (all of them parse and
    /// equal the events' texts); `None` when they are not.
    /// The first line may also be the header as the import rewrites it for `session_id`
    /// ([`canonical_header`]).
    pub fn matching_prefix(&self, events: &[String], session_id: &str) -> Option<usize> {
        let readable = self
            .lines
            .iter()
            .take_while(|l| l.canonical.is_some())
            .count();
        // A torn (unreadable) line may only be the last: the import kept the prefix.
        if readable + 1 < self.lines.len() {
            return None;
        }
        if readable > events.len() {
            return None;
        }
        let same = self.lines[..readable]
            .iter()
            .zip(events)
            .enumerate()
            .all(|(i, (l, e))| {
                l.canonical.as_deref() == Some(e.as_str())
                    || (i == 0 && self.header_as_imported(session_id).as_deref() == Some(e))
            });
        same.then_some(readable)
    }

    /// The first line as the import stores it for `session_id`.
    pub fn header_as_imported(&self, session_id: &str) -> Option<String> {
        let first = self.lines.first()?;
        let text = String::from_utf8_lossy(&self.bytes[first.bytes.clone()]);
        canonical_header(text.trim(), session_id)
    }

    /// The bytes of the first `n` lines, as in the file (with what lies between them).
    pub fn prefix_bytes(&self, n: usize) -> &[u8] {
        match n.checked_sub(1).and_then(|i| self.lines.get(i)) {
            Some(l) => &self.bytes[..l.bytes.end],
            None => &[],
        }
    }
}

/// The header as the import rewrites it: `{...header, id, type: "session", timestamp,
/// cwd}` without `sessionId` (what it stores as seq 0).
pub fn canonical_header(header: &str, session_id: &str) -> Option<String> {
    let Ok(Value::Object(mut m)) = jsjson::parse_value(header) else {
        return None;
    };
    let ts = match m.get("timestamp") {
        Some(Value::String(s)) => s.clone(),
        _ => String::new(),
    };
    let cwd = match m.get("cwd") {
        Some(Value::String(s)) => s.clone(),
        _ => String::new(),
    };
    m.insert("id".into(), Value::from(session_id));
    m.insert("type".into(), Value::from("session"));
    m.insert("timestamp".into(), Value::from(ts));
    m.insert("cwd".into(), Value::from(cwd));
    m.shift_remove("sessionId");
    Some(jsjson::to_string_compact(&Value::Object(m)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_re_serialised_and_torn_tail() {
        let o = Original::from_bytes(b"{\"a\":\"caf\\u00e9\"}\n\n{\"b\": 1}\n{\"torn\"".to_vec());
        assert_eq!(o.lines.len(), 3);
        assert_eq!(o.lines[0].canonical.as_deref(), Some("{\"a\":\"café\"}"));
        assert_eq!(o.lines[1].number, 3);
        assert!(o.lines[2].canonical.is_none());
        let ev = vec!["{\"a\":\"café\"}".to_string(), "{\"b\":1}".to_string()];
        assert_eq!(o.matching_prefix(&ev, "s"), Some(2));
        assert_eq!(o.prefix_bytes(2), b"{\"a\":\"caf\\u00e9\"}\n\n{\"b\": 1}\n");
        assert_eq!(o.matching_prefix(&ev[..1], "s"), None);
        let changed = vec!["{\"a\":\"cafe\"}".to_string(), "{\"b\":1}".to_string()];
        assert_eq!(o.matching_prefix(&changed, "s"), None);
    }

    #[test]
    fn header_as_the_import_stores_it() {
        assert_eq!(
            canonical_header(r#"{"type":"session","sessionId":"x","version":3}"#, "s").unwrap(),
            r#"{"type":"session","version":3,"id":"s","timestamp":"","cwd":""}"#
        );
    }

    #[test]
    fn archived_names() {
        let d = tempfile::tempdir().unwrap();
        for n in [
            "agent_main_main.abc-1.jsonl.imported-20",
            "agent_main_x.abc-2.jsonl.imported-10",
            "legacy-store.sessions.json.imported-5",
            "legacy-store.sessions.json.imported-7",
            "archive-tier.foo.jsonl.imported-3",
        ] {
            std::fs::write(d.path().join(n), "{}").unwrap();
        }
        let t = archived_transcripts(d.path()).unwrap();
        let ids: Vec<&str> = t.iter().map(|t| t.session_id.as_str()).collect();
        assert_eq!(ids, ["abc-2", "abc-1"]);
        let s = archived_store(d.path()).unwrap().unwrap();
        assert!(s.path().ends_with("legacy-store.sessions.json.imported-7"));
        assert!(archived_transcripts(&d.path().join("none"))
            .unwrap()
            .is_empty());
    }
}
