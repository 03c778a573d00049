//! What an agent's legacy (2026.7) sessions directory holds, as 9.6's import sees it: the
//! store's entries in file order, each with its transcript (the readable lines; a torn or
//! malformed line ends the readable prefix) and trajectory sidecars, the transcripts no
//! entry names (orphans, which 9.6 imports as `recovered` sessions), and the files it leaves
//! alone (reset and deleted archives, anything else).

use std::collections::{BTreeSet, HashMap};
use std::ffi::OsStr;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

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
    /// Where the readable prefix ends (bytes): what [`read_prefix`] splits again.
    pub readable_end: usize,
    /// The first unreadable line (1-based) and why, when there is one.
    pub malformed: Option<(usize, String)>,
    /// The first readable line whose media 9.6 refuses to store (1-based) and why: 9.6's
    /// doctor stops its whole import on it ([`crate::migrate::rows::media`]).
    pub media_refused: Option<(usize, String)>,
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
    /// Why its transcript was not followed, when its name leaves the sessions directory
    /// (a session id `../x`) or the file there is a symlink or not a regular file: the
    /// entry alone is imported and the import reports it.
    pub not_followed: Option<String>,
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

/// A transcript's readable prefix (see [`Prefix`]).
struct Prefix {
    /// How many readable lines it has.
    count: usize,
    /// Where it ends (bytes).
    end: usize,
    /// The first unreadable line (1-based) and why.
    malformed: Option<(usize, String)>,
    /// The first readable line whose media 9.6 refuses (1-based) and why.
    media_refused: Option<(usize, String)>,
}

/// A transcript's readable prefix: its lines parsed (and their media checked) once.
fn readable_prefix(bytes: &[u8]) -> Prefix {
    let mut p = Prefix {
        count: 0,
        end: bytes.len(),
        malformed: None,
        media_refused: None,
    };
    let mut start = 0;
    for (i, raw) in bytes.split(|b| *b == b'\n').enumerate() {
        let here = start;
        start += raw.len() + 1;
        let Ok(text) = std::str::from_utf8(raw) else {
            p.end = here;
            p.malformed = Some((i + 1, "not UTF-8".into()));
            return p;
        };
        let text = text.strip_suffix('\r').unwrap_or(text);
        if text.trim().is_empty() {
            continue;
        }
        match jsjson::parse_value(text) {
            Ok(v) => {
                if p.media_refused.is_none() {
                    if let Err(why) = crate::migrate::rows::media::check_event(&v) {
                        p.media_refused = Some((i + 1, why.to_string()));
                    }
                }
            }
            Err(e) => {
                p.end = here;
                p.malformed = Some((i + 1, e.to_string()));
                return p;
            }
        }
        p.count += 1;
    }
    p
}

/// The non-blank lines of a prefix [`readable_prefix`] already checked (no parse again).
fn prefix_lines(bytes: &[u8]) -> Vec<String> {
    bytes
        .split(|b| *b == b'\n')
        .map_while(|raw| std::str::from_utf8(raw).ok())
        .map(|text| text.strip_suffix('\r').unwrap_or(text))
        .filter(|text| !text.trim().is_empty())
        .map(str::to_string)
        .collect()
}

/// Splits a transcript into its readable lines.
pub fn transcript_lines(bytes: &[u8]) -> (Vec<String>, Option<(usize, String)>) {
    let p = readable_prefix(bytes);
    (prefix_lines(&bytes[..p.end]), p.malformed)
}

fn read_transcript(dir: &Path, name: &str) -> Result<Option<Transcript>, ImportError> {
    Ok(read_file(dir, name)?.map(|(bytes, file)| {
        let p = readable_prefix(&bytes);
        Transcript {
            file,
            line_count: p.count,
            readable_end: p.end,
            malformed: p.malformed,
            media_refused: p.media_refused,
        }
    }))
}

/// The bytes of a transcript the plan read as `planned`; the file must not have changed
/// since (same size, mtime and SHA-256), or the manifest would describe other bytes.
fn reread(dir: &Path, planned: &FileIdentity) -> Result<Vec<u8>, ImportError> {
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
    Ok(bytes)
}

/// The readable lines of a transcript the plan read as `planned` (see [`reread`]).
pub fn read_lines(dir: &Path, planned: &FileIdentity) -> Result<Vec<String>, ImportError> {
    Ok(transcript_lines(&reread(dir, planned)?).0)
}

/// The readable lines of a transcript the plan read as `planned`, whose readable prefix
/// ends at `end` ([`Transcript::readable_end`]): the same bytes (see [`reread`]), so the
/// prefix is split without parsing it again.
pub fn read_prefix(
    dir: &Path,
    planned: &FileIdentity,
    end: usize,
) -> Result<Vec<String>, ImportError> {
    let bytes = reread(dir, planned)?;
    Ok(prefix_lines(&bytes[..end.min(bytes.len())]))
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

/// `read` of each name, by up to four threads; the results in the names' order (the
/// first error in that order when one fails).
fn read_many<T: Send>(
    names: &[&str],
    read: impl Fn(&str) -> Result<T, ImportError> + Sync,
) -> Result<Vec<T>, ImportError> {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, 4)
        .min(names.len());
    if threads <= 1 {
        return names.iter().map(|n| read(n)).collect();
    }
    let next = AtomicUsize::new(0);
    let mut slots: Vec<Option<Result<T, ImportError>>> = names.iter().map(|_| None).collect();
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut got = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(name) = names.get(i) else {
                            return got;
                        };
                        got.push((i, read(name)));
                    }
                })
            })
            .collect();
        for w in workers {
            let got = w.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
            for (i, r) in got {
                slots[i] = Some(r);
            }
        }
    });
    slots
        .into_iter()
        .map(|r| r.expect("every name was read"))
        .collect()
}

/// Reads an agent's sessions directory.
pub fn read(dir: &Path) -> Result<LegacyDir, ImportError> {
    let mut names: BTreeSet<String> = BTreeSet::new();
    // Names that are there but not regular files (symlinks, FIFOs, directories).
    let mut others: BTreeSet<String> = BTreeSet::new();
    match std::fs::read_dir(dir) {
        Ok(rd) => {
            for e in rd {
                let e = e.map_err(|e| ImportError::io(dir, e))?;
                let Some(n) = e.file_name().to_str().map(str::to_string) else {
                    continue;
                };
                if e.file_type().map(|t| t.is_file()).unwrap_or(false) {
                    names.insert(n);
                } else {
                    others.insert(n);
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
    // The entries first, then every file to read, read by a few threads at once (each
    // file is read whole, hashed and parsed: the import's costliest part before the
    // writes), then the dir put together in the store's order.
    let mut claimed = BTreeSet::new();
    let mut entries = Vec::new();
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
        // The file 9.6 resolves for the entry (`sessionFile` inside the dir, a topic
        // transcript `<sid>-topic-<n>.jsonl` included), else `<sid>.jsonl`.
        let session_file = serde_json::json!({ "sessionFile": entry.get("sessionFile") });
        let tname = crate::migrate::legacy_transcript::resolve_transcript(dir, &session_file, &sid)
            .and_then(|p| Some(p.strip_prefix(dir).ok()?.to_str()?.to_string()))
            .unwrap_or_else(|| format!("{sid}.jsonl"));
        let not_followed = match DataPath::beneath(dir, Path::new(&tname)) {
            Err(e) => Some(e.to_string()),
            Ok(p) if others.contains(&tname) => p.check().err().map(|e| e.to_string()),
            Ok(_) => None,
        };
        let readable = names.contains(&tname) && OsStr::new(&tname).len() < 256;
        claimed.insert(tname.clone());
        entries.push((key, entry, sid, readable.then_some(tname), not_followed));
    }
    let orphans: Vec<&String> = names
        .iter()
        .filter(|n| is_primary_transcript(n) && !claimed.contains(*n))
        .collect();
    let wanted: BTreeSet<String> = entries
        .iter()
        .filter_map(|e| e.3.clone())
        .chain(orphans.iter().map(|n| n.to_string()))
        .collect();
    let wanted: Vec<&str> = wanted.iter().map(String::as_str).collect();
    let transcripts: HashMap<&str, Option<Transcript>> = wanted
        .iter()
        .copied()
        .zip(read_many(&wanted, |n| read_transcript(dir, n))?)
        .collect();
    let transcript_of = |n: Option<&str>| n.and_then(|n| transcripts.get(n).cloned().flatten());
    let sides: Vec<String> = entries
        .iter()
        .filter(|e| transcript_of(e.3.as_deref()).is_some())
        .flat_map(|e| {
            [
                format!("{}.trajectory.jsonl", e.2),
                format!("{}.trajectory-path.json", e.2),
            ]
        })
        .filter(|n| names.contains(n))
        .collect::<BTreeSet<String>>()
        .into_iter()
        .collect();
    let side_names: Vec<&str> = sides.iter().map(String::as_str).collect();
    let side_ids: HashMap<&str, Option<FileIdentity>> = side_names
        .iter()
        .copied()
        .zip(read_many(&side_names, |n| {
            Ok(read_file(dir, n)?.map(|(_, id)| id))
        })?)
        .collect();
    for (key, entry, sid, tname, not_followed) in entries {
        let transcript = transcript_of(tname.as_deref());
        let mut sidecars = Vec::new();
        if transcript.is_some() {
            for side in [
                format!("{sid}.trajectory.jsonl"),
                format!("{sid}.trajectory-path.json"),
            ] {
                if let Some(Some(id)) = side_ids.get(side.as_str()) {
                    sidecars.push(id.clone());
                }
            }
        }
        out.sessions.push(LegacySession {
            key,
            entry,
            session_id: sid,
            transcript,
            sidecars,
            not_followed,
        });
    }
    for name in orphans {
        if let Some(t) = transcript_of(Some(name)) {
            out.orphans.push((name.clone(), t));
        }
    }
    Ok(out)
}
