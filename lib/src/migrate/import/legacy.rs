//! What an agent's legacy (2026.7) sessions directory holds, as 9.6's import sees it: the
//! store's entries in file order, each with its transcript (the readable lines; a torn or
//! malformed line ends the readable prefix) and trajectory sidecars, the transcripts no
//! entry names (orphans, which 9.6 imports as `recovered` sessions), and the files it leaves
//! alone (reset and deleted archives, anything else).

use std::collections::BTreeSet;
use std::ffi::OsStr;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::error::ImportError;
use crate::fs::data_file::DataPath;
use crate::js::jsjson;

/// One legacy file as it was when read: what the manifest and the "never lose a byte"
/// check need.
#[derive(Debug, Clone)]
pub struct FileIdentity {
    /// Its file name in the sessions directory.
    pub name: String,
    /// Device, inode, size.
    pub dev: u64,
    /// Its inode.
    pub ino: u64,
    /// Its size.
    pub size: u64,
    /// Its mtime in ns since the epoch.
    pub mtime_ns: i128,
    /// The SHA-256 of its bytes, hex.
    pub sha256: String,
}

impl FileIdentity {
    /// Its mtime in whole ms, as Node's `Math.floor(stat.mtimeMs)`.
    pub fn mtime_ms(&self) -> i64 {
        self.mtime_ns.div_euclid(1_000_000) as i64
    }
}

/// A transcript file read whole.
#[derive(Debug, Clone)]
pub struct Transcript {
    /// The file.
    pub file: FileIdentity,
    /// How many readable lines it has (the prefix before the first line that is not
    /// JSON, blank lines left out); the lines themselves are read again when written
    /// ([`read_lines`]), so a big dir is never held in memory whole.
    pub line_count: usize,
    /// The first unreadable line (1-based) and why, when there is one.
    pub malformed: Option<(usize, String)>,
}

/// One store entry.
#[derive(Debug, Clone)]
pub struct LegacySession {
    /// Its key.
    pub key: String,
    /// The entry as stored.
    pub entry: Map<String, Value>,
    /// `sessionId`.
    pub session_id: String,
    /// Its transcript, when there is one.
    pub transcript: Option<Transcript>,
    /// Its trajectory sidecars (`<sid>.trajectory.jsonl`, `<sid>.trajectory-path.json`).
    pub sidecars: Vec<FileIdentity>,
}

/// An agent's legacy sessions directory.
#[derive(Debug, Clone)]
pub struct LegacyDir {
    /// `<stateDir>/agents/<id>/sessions`.
    pub dir: PathBuf,
    /// `sessions.json`, when there is one.
    pub store: Option<FileIdentity>,
    /// The entries, in the store's order.
    pub sessions: Vec<LegacySession>,
    /// Transcripts no entry names, by file name.
    pub orphans: Vec<(String, Transcript)>,
}

fn identity_of(name: &str, bytes: &[u8], meta: &std::fs::Metadata) -> FileIdentity {
    use sha2::{Digest, Sha256};
    FileIdentity {
        name: name.to_string(),
        dev: meta.dev(),
        ino: meta.ino(),
        size: bytes.len() as u64,
        mtime_ns: i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec()),
        sha256: hex(&Sha256::digest(bytes)),
    }
}

/// Lower-case hex of bytes.
pub fn hex(b: &[u8]) -> String {
    use std::fmt::Write;
    let mut s = String::with_capacity(b.len() * 2);
    for x in b {
        let _ = write!(s, "{x:02x}");
    }
    s
}

/// Reads `name` of the sessions directory (through `DataPath`); `None` when absent.
pub fn read_file(dir: &Path, name: &str) -> Result<Option<(Vec<u8>, FileIdentity)>, ImportError> {
    let path = DataPath::beneath(dir, Path::new(name)).map_err(ImportError::file)?;
    let f = match path.open_read() {
        Ok(f) => f,
        Err(e) if e.is_not_found() => return Ok(None),
        Err(e) => return Err(ImportError::file(e)),
    };
    let file = f.into_file();
    let meta = file
        .metadata()
        .map_err(|e| ImportError::io(&dir.join(name), e))?;
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    use std::io::Read;
    (&file)
        .read_to_end(&mut bytes)
        .map_err(|e| ImportError::io(&dir.join(name), e))?;
    let id = identity_of(name, &bytes, &meta);
    Ok(Some((bytes, id)))
}

/// Splits a transcript into its readable lines.
pub fn transcript_lines(bytes: &[u8]) -> (Vec<String>, Option<(usize, String)>) {
    let mut out = Vec::new();
    for (i, raw) in bytes.split(|b| *b == b'\n').enumerate() {
        let Ok(text) = std::str::from_utf8(raw) else {
            return (out, Some((i + 1, "not UTF-8".into())));
        };
        let text = text.strip_suffix('\r').unwrap_or(text);
        if text.trim().is_empty() {
            continue;
        }
        if let Err(e) = jsjson::parse_value(text) {
            return (out, Some((i + 1, e.to_string())));
        }
        out.push(text.to_string());
    }
    (out, None)
}

fn read_transcript(dir: &Path, name: &str) -> Result<Option<Transcript>, ImportError> {
    Ok(read_file(dir, name)?.map(|(bytes, file)| {
        let (lines, malformed) = transcript_lines(&bytes);
        Transcript {
            file,
            line_count: lines.len(),
            malformed,
        }
    }))
}

/// The readable lines of a transcript the plan read as `planned`; the file must not have
/// changed since (same size and mtime), or the manifest would describe other bytes.
pub fn read_lines(dir: &Path, planned: &FileIdentity) -> Result<Vec<String>, ImportError> {
    let Some((bytes, now)) = read_file(dir, &planned.name)? else {
        return Err(ImportError::Malformed {
            path: dir.join(&planned.name),
            what: "disappeared while importing".into(),
        });
    };
    if now.size != planned.size || now.mtime_ns != planned.mtime_ns || now.sha256 != planned.sha256
    {
        return Err(ImportError::Malformed {
            path: dir.join(&planned.name),
            what: "changed while importing (is a gateway writing it?)".into(),
        });
    }
    Ok(transcript_lines(&bytes).0)
}

/// Whether a file name is a primary transcript (9.6's `isPrimarySessionTranscriptFileName`
/// for the names 2026.7 writes).
pub fn is_primary_transcript(name: &str) -> bool {
    name != "sessions.json"
        && name.ends_with(".jsonl")
        && !name.ends_with(".trajectory.jsonl")
        && !name.contains(".jsonl.")
        && !name.contains(".checkpoint.")
}

/// Reads an agent's sessions directory.
pub fn read(dir: &Path) -> Result<LegacyDir, ImportError> {
    let mut names: BTreeSet<String> = BTreeSet::new();
    match std::fs::read_dir(dir) {
        Ok(rd) => {
            for e in rd {
                let e = e.map_err(|e| ImportError::io(dir, e))?;
                if e.file_type().map(|t| t.is_file()).unwrap_or(false) {
                    if let Some(n) = e.file_name().to_str() {
                        names.insert(n.to_string());
                    }
                }
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(ImportError::io(dir, e)),
    }
    let mut out = LegacyDir {
        dir: dir.to_path_buf(),
        store: None,
        sessions: Vec::new(),
        orphans: Vec::new(),
    };
    let Some((bytes, store_id)) = read_file(dir, "sessions.json")? else {
        return Ok(out);
    };
    let store_path = dir.join("sessions.json");
    let text = String::from_utf8(bytes).map_err(|_| ImportError::Malformed {
        path: store_path.clone(),
        what: "not UTF-8".into(),
    })?;
    let store = jsjson::parse_value(&text).map_err(|e| ImportError::Malformed {
        path: store_path.clone(),
        what: e.to_string(),
    })?;
    let Value::Object(store) = store else {
        return Err(ImportError::Malformed {
            path: store_path,
            what: "not a JSON object".into(),
        });
    };
    out.store = Some(store_id);
    let mut claimed = BTreeSet::new();
    for (key, entry) in store {
        let Value::Object(entry) = entry else {
            continue;
        };
        let Some(sid) = entry
            .get("sessionId")
            .and_then(Value::as_str)
            .map(str::to_string)
        else {
            continue;
        };
        let tname = format!("{sid}.jsonl");
        let transcript = if names.contains(&tname) && OsStr::new(&tname).len() < 256 {
            read_transcript(dir, &tname)?
        } else {
            None
        };
        claimed.insert(tname);
        let mut sidecars = Vec::new();
        if transcript.is_some() {
            for side in [
                format!("{sid}.trajectory.jsonl"),
                format!("{sid}.trajectory-path.json"),
            ] {
                if names.contains(&side) {
                    if let Some((_, id)) = read_file(dir, &side)? {
                        sidecars.push(id);
                    }
                }
            }
        }
        out.sessions.push(LegacySession {
            key,
            entry,
            session_id: sid,
            transcript,
            sidecars,
        });
    }
    for name in &names {
        if is_primary_transcript(name) && !claimed.contains(name) {
            if let Some(t) = read_transcript(dir, name)? {
                out.orphans.push((name.clone(), t));
            }
        }
    }
    Ok(out)
}
