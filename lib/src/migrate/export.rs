//! `export`: the agent database back to the legacy layout (`sessions.json` and
//! `<sessionId>.jsonl`), for going back to 2026.7 or feeding JSONL tools.
//!
//! **Transcripts.** 2026.9.6 stores each legacy line re-serialised, so the database alone
//! cannot give the original bytes back (`\u00e9` comes out as `é`). The originals are in
//! the import archive ([`archive`]). The rule, per session (`sessionId` S, its events E
//! in seq order):
//!
//! 1. an archived original of S whose readable lines, each re-serialised as the import
//!    does it ([`archive::canonical_line`], the header as the import rewrites it), are
//!    the first events of E, in order, is the export's start, byte for byte: the whole
//!    file when it holds all of E (**byte-identical**), without its torn last line when the
//!    import left that out, followed by the events appended after the migration (as 9.6
//!    stored them, one per line);
//! 2. otherwise (a session created after the migration, or an original that no longer
//!    matches): E as 9.6 stored them, one per line (**re-serialised**).
//!
//! **Entries** come back as [`entry`] says: the archived legacy entry when the database
//! still says the same, else the database's entry with `delivery` unfolded; `sessionFile`
//! is the exported transcript's absolute path. The store is written as the gateway writes
//! it (`JSON.stringify(store, null, 2)`), keys in the archived store's order, then those
//! it did not have in the database's key order. Internal effects sessions of 9.6 are not
//! exported (2026.7 has none); only each key's current session is (older generations stay
//! in the database).
//!
//! **Where.** `--out DIR`: a fresh (missing or empty) directory, laid out as a state dir
//! (`DIR/agents/<id>/sessions/`). Else the agent's own legacy sessions directory, only when
//! no `sessions.json` is there and no gateway is live. Nothing is ever overwritten: every
//! file is written to a temp file, synced and renamed in with `RENAME_NOREPLACE`, the
//! transcripts first and the store last, so an interrupted export leaves no store naming a
//! missing transcript. Every target is checked before the first write.

pub mod archive;
pub mod entry;

use std::collections::HashMap;
use std::ffi::OsStr;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};
use thiserror::Error;

use crate::agent_db::{events, store_text, AgentDb, AgentDbError};
use crate::exit::{self, ExitCode};
use crate::fs::data_file::{DataDir, DataFileError};
use crate::install::live_gateway::GatewayOwner;
use crate::js::jsjson;

use self::archive::{LegacyTranscript, Original};
use self::entry::EntrySource;

/// The mode of exported files (the gateway keeps its state private).
pub const FILE_MODE: u32 = 0o600;
/// The mode of directories an export creates.
pub const DIR_MODE: u32 = 0o700;

/// A failure of `export`; nothing of the failed step was written.
#[derive(Debug, Error)]
pub enum ExportError {
    /// The agent database could not be read.
    #[error(transparent)]
    Db(#[from] AgentDbError),
    /// A legacy file could not be read.
    #[error(transparent)]
    File(#[from] DataFileError),
    /// The target holds something the export would overwrite.
    #[error("{}: {why}; export never overwrites (give --out with a fresh directory)", .path.display())]
    Exists {
        /// The file or directory in the way.
        path: PathBuf,
        /// What is there.
        why: String,
    },
    /// A gateway owns the state directory.
    #[error("{}: a gateway is running ({owner}); stop it before exporting into its sessions directory, or give --out DIR", .state_dir.display())]
    GatewayLive {
        /// The state directory.
        state_dir: PathBuf,
        /// The gateway.
        owner: Box<GatewayOwner>,
    },
    /// `--session` names no session of the agent database.
    #[error("{}: no session {key:?} in the agent database", .db.display())]
    NoSession {
        /// The database.
        db: PathBuf,
        /// The key asked for.
        key: String,
    },
    /// A file could not be written.
    #[error("{}: cannot write: {source}", .path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
}

impl ExitCode for ExportError {
    fn exit_code(&self) -> i32 {
        match self {
            ExportError::Db(e) => e.exit_code(),
            ExportError::File(e) => e.exit_code(),
            ExportError::Exists { .. } | ExportError::Write { .. } => exit::CANT_CREATE,
            ExportError::GatewayLive { .. } => exit::TEMP_FAIL,
            ExportError::NoSession { .. } => exit::NOT_FOUND,
        }
    }
}

/// Where a transcript's bytes came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TranscriptSource {
    /// An archived original, byte for byte (`lines` of its lines), then `appended`
    /// events as 9.6 stored them; `torn_tail` when its unreadable last line was left out.
    Original {
        /// The archived file.
        path: PathBuf,
        /// How many of its lines were kept.
        lines: usize,
        /// Events appended after the migration.
        appended: usize,
        /// Whether its torn last line was left out.
        torn_tail: bool,
    },
    /// The events as 9.6 stored them.
    Database,
}

/// One exported transcript.
#[derive(Debug, Clone)]
pub struct TranscriptExport {
    /// Where its bytes came from.
    pub source: TranscriptSource,
    /// Its bytes.
    pub bytes: Vec<u8>,
    /// How many events it holds.
    pub events: usize,
}

impl TranscriptExport {
    /// Whether the export is the archived original, whole and unchanged.
    pub fn byte_identical(&self) -> bool {
        matches!(
            self.source,
            TranscriptSource::Original {
                appended: 0,
                torn_tail: false,
                ..
            }
        )
    }

    /// `byte-identical`, `original+appended`, `original-without-torn-tail` or
    /// `re-serialised`.
    pub fn mode(&self) -> &'static str {
        match &self.source {
            TranscriptSource::Original {
                appended,
                torn_tail,
                ..
            } => match (*appended > 0, *torn_tail) {
                (false, false) => "byte-identical",
                (true, _) => "original+appended",
                (false, true) => "original-without-torn-tail",
            },
            TranscriptSource::Database => "re-serialised",
        }
    }
}

/// The transcript of `session_id` as the export writes it (`None`: it has no event).
pub fn transcript_of(
    db: &AgentDb,
    session_id: &str,
    originals: &[LegacyTranscript],
) -> Result<Option<TranscriptExport>, ExportError> {
    let events = events::lines(db, session_id)?;
    if events.is_empty() {
        return Ok(None);
    }
    // The newest import first: a session imported twice keeps its latest original.
    for t in originals
        .iter()
        .rev()
        .filter(|t| t.session_id == session_id)
    {
        let original = Original::read(&t.file)?;
        let Some(n) = original.matching_prefix(&events, session_id) else {
            continue;
        };
        if n == 0 {
            continue;
        }
        let mut bytes = original.prefix_bytes(n).to_vec();
        let appended = &events[n..];
        if !appended.is_empty() && bytes.last() != Some(&b'\n') {
            bytes.push(b'\n');
        }
        for e in appended {
            bytes.extend_from_slice(e.as_bytes());
            bytes.push(b'\n');
        }
        return Ok(Some(TranscriptExport {
            source: TranscriptSource::Original {
                path: t.file.path().to_path_buf(),
                lines: n,
                appended: appended.len(),
                torn_tail: original.lines.len() > n,
            },
            bytes,
            events: events.len(),
        }));
    }
    let mut bytes = Vec::with_capacity(events.iter().map(|e| e.len() + 1).sum());
    for e in &events {
        bytes.extend_from_slice(e.as_bytes());
        bytes.push(b'\n');
    }
    Ok(Some(TranscriptExport {
        source: TranscriptSource::Database,
        bytes,
        events: events.len(),
    }))
}

/// One session of an agent's export.
#[derive(Debug, Clone)]
pub struct SessionExport {
    /// The store key.
    pub key: String,
    /// Its current sessionId.
    pub session_id: String,
    /// The transcript file written (`None`: the session has no event).
    pub transcript_path: Option<PathBuf>,
    /// What the transcript is.
    pub transcript: Option<TranscriptSummary>,
    /// Where the entry came from (`None` for a transcript exported alone).
    pub entry: Option<EntrySource>,
}

/// What one exported transcript is, without its bytes.
#[derive(Debug, Clone)]
pub struct TranscriptSummary {
    /// `byte-identical`, … ([`TranscriptExport::mode`]).
    pub mode: &'static str,
    /// Whether it is the archived original, unchanged.
    pub byte_identical: bool,
    /// The archived original it starts with.
    pub original: Option<PathBuf>,
    /// Events appended after the migration.
    pub appended: usize,
    /// Events in all.
    pub events: usize,
    /// Bytes written.
    pub bytes: usize,
}

impl From<&TranscriptExport> for TranscriptSummary {
    fn from(t: &TranscriptExport) -> Self {
        let (original, appended) = match &t.source {
            TranscriptSource::Original { path, appended, .. } => (Some(path.clone()), *appended),
            TranscriptSource::Database => (None, 0),
        };
        TranscriptSummary {
            mode: t.mode(),
            byte_identical: t.byte_identical(),
            original,
            appended,
            events: t.events,
            bytes: t.bytes.len(),
        }
    }
}

impl SessionExport {
    /// The report row: `{agentId, sessionKey, sessionId, transcript, mode, byteIdentical,
    /// original, events, appendedEvents, bytes, entry}`.
    pub fn to_json(&self, agent_id: &str) -> Value {
        let mut m = Map::new();
        m.insert("agentId".into(), Value::from(agent_id));
        m.insert("sessionKey".into(), Value::from(self.key.as_str()));
        m.insert("sessionId".into(), Value::from(self.session_id.as_str()));
        let path = |p: &Option<PathBuf>| {
            p.as_ref().map_or(Value::Null, |p| {
                Value::from(p.to_string_lossy().into_owned())
            })
        };
        m.insert("transcript".into(), path(&self.transcript_path));
        match &self.transcript {
            Some(t) => {
                m.insert("mode".into(), Value::from(t.mode));
                m.insert("byteIdentical".into(), Value::from(t.byte_identical));
                m.insert("original".into(), path(&t.original));
                m.insert("events".into(), Value::from(t.events));
                m.insert("appendedEvents".into(), Value::from(t.appended));
                m.insert("bytes".into(), Value::from(t.bytes));
            }
            None => {
                m.insert("mode".into(), Value::from("no-transcript"));
                m.insert("byteIdentical".into(), Value::from(false));
                m.insert("events".into(), Value::from(0));
            }
        }
        if let Some(e) = self.entry {
            m.insert("entry".into(), Value::from(e.as_str()));
        }
        Value::Object(m)
    }
}

/// One agent's export.
#[derive(Debug, Clone)]
pub struct AgentExport {
    /// The agent id.
    pub agent_id: String,
    /// The database read.
    pub db: PathBuf,
    /// The sessions directory written (or that would be).
    pub sessions_dir: PathBuf,
    /// The store written.
    pub store_path: PathBuf,
    /// Every session exported.
    pub sessions: Vec<SessionExport>,
    /// Rows left out, one line each.
    pub warnings: Vec<String>,
}

/// What to export of one agent, and where.
#[derive(Debug, Clone)]
pub struct AgentTarget {
    /// The agent id.
    pub agent_id: String,
    /// Its database.
    pub db: PathBuf,
    /// The sessions directory to write (`<root>/agents/<id>/sessions`).
    pub sessions_dir: PathBuf,
}

/// The database's entries (key order), internal sessions left out.
fn db_entries(db: &AgentDb) -> Result<(Map<String, Value>, Vec<String>), ExportError> {
    let st = store_text::read(db)?;
    let m = match jsjson::parse_value(&st.text) {
        Ok(Value::Object(m)) => m,
        _ => Map::new(),
    };
    Ok((m, st.warnings))
}

/// The resolved key of `request` among the database's keys (as asked, or normalised).
pub fn find_key<'m>(entries: &'m Map<String, Value>, candidates: &[String]) -> Option<&'m String> {
    candidates
        .iter()
        .find_map(|c| entries.get_key_value(c.as_str()).map(|(k, _)| k))
}

/// Exports one agent (all its sessions, or only `only` keys); writes nothing when
/// `dry_run`. The target directory must have been checked ([`check_target`]).
pub fn export_agent(
    target: &AgentTarget,
    only: Option<&[String]>,
    dry_run: bool,
) -> Result<AgentExport, ExportError> {
    let db = AgentDb::open(&target.db)?;
    let (entries, mut warnings) = db_entries(&db)?;
    if let Some(w) = db.schema.warning(&db.path) {
        warnings.push(w);
    }
    let archive_dir = archive::archive_dir_for_db(&target.db);
    let originals = archive::archived_transcripts(&archive_dir)?;
    let archived_store = match archive::archived_store(&archive_dir)? {
        Some(f) => archive::read_store(&f)?.unwrap_or_default(),
        None => Map::new(),
    };
    let selected: Vec<&String> = match only {
        Some(keys) => {
            let Some(k) = find_key(&entries, keys) else {
                return Err(ExportError::NoSession {
                    db: target.db.clone(),
                    key: keys.first().cloned().unwrap_or_default(),
                });
            };
            vec![k]
        }
        None => {
            // The archived store's order, then the database's for keys it lacks.
            let mut keys: Vec<&String> = archived_store
                .keys()
                .filter_map(|k| entries.get_key_value(k.as_str()).map(|(k, _)| k))
                .collect();
            keys.extend(entries.keys().filter(|k| !archived_store.contains_key(*k)));
            keys
        }
    };
    let store_path = target.sessions_dir.join("sessions.json");
    if !dry_run {
        create_dirs(&target.sessions_dir)?;
    }
    let mut store = Map::new();
    let mut sessions = Vec::new();
    let mut written: HashMap<String, PathBuf> = HashMap::new();
    for key in selected {
        let Some(Value::Object(e)) = entries.get(key) else {
            continue;
        };
        let session_id = e
            .get("sessionId")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let transcript = if session_id.is_empty() {
            warnings.push(format!(
                "{}: session_nodes {key:?} has no sessionId; its entry is exported without a transcript",
                target.db.display()
            ));
            None
        } else {
            transcript_of(&db, &session_id, &originals)?
        };
        let file_name = format!("{session_id}.jsonl");
        let transcript_path = transcript
            .as_ref()
            .map(|_| target.sessions_dir.join(&file_name));
        if let (Some(t), Some(p)) = (&transcript, &transcript_path) {
            // Two keys on one sessionId share one file, as in the legacy layout.
            if !written.contains_key(&session_id) {
                if !dry_run {
                    write_new(&target.sessions_dir, &file_name, &t.bytes)?;
                }
                written.insert(session_id.clone(), p.clone());
            }
        }
        let file_text = transcript_path
            .as_ref()
            .map(|p| p.to_string_lossy().into_owned());
        let archived = match archived_store.get(key) {
            Some(Value::Object(a)) => Some(a),
            _ => None,
        };
        let (legacy, source) = entry::legacy_entry(key, e, archived, file_text.as_deref());
        store.insert(key.clone(), Value::Object(legacy));
        sessions.push(SessionExport {
            key: key.clone(),
            session_id,
            transcript_path,
            transcript: transcript.as_ref().map(TranscriptSummary::from),
            entry: Some(source),
        });
    }
    if !dry_run {
        let text = jsjson::to_string_pretty(&Value::Object(store));
        write_new(&target.sessions_dir, "sessions.json", text.as_bytes())?;
    }
    Ok(AgentExport {
        agent_id: target.agent_id.clone(),
        db: target.db.clone(),
        sessions_dir: target.sessions_dir.clone(),
        store_path,
        sessions,
        warnings,
    })
}

/// Checks that `--out DIR` is fresh: missing, or an empty directory.
pub fn check_fresh_out(dir: &Path) -> Result<(), ExportError> {
    match std::fs::symlink_metadata(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(source) => Err(ExportError::Write {
            path: dir.to_path_buf(),
            source,
        }),
        Ok(m) if !m.is_dir() => Err(ExportError::Exists {
            path: dir.to_path_buf(),
            why: "not a directory".into(),
        }),
        Ok(_) => {
            let mut rd = std::fs::read_dir(dir).map_err(|source| ExportError::Write {
                path: dir.to_path_buf(),
                source,
            })?;
            if rd.next().is_some() {
                return Err(ExportError::Exists {
                    path: dir.to_path_buf(),
                    why: "the --out directory is not empty".into(),
                });
            }
            Ok(())
        }
    }
}

/// Checks that an agent's own sessions directory can take the export: no `sessions.json`
/// there, and none of the transcripts it would write.
pub fn check_target(target: &AgentTarget) -> Result<(), ExportError> {
    let store = target.sessions_dir.join("sessions.json");
    if std::fs::symlink_metadata(&store).is_ok() {
        return Err(ExportError::Exists {
            path: store,
            why: "a legacy store is already there".into(),
        });
    }
    let db = AgentDb::open(&target.db)?;
    let (entries, _) = db_entries(&db)?;
    for e in entries.values() {
        if let Some(id) = e.get("sessionId").and_then(Value::as_str) {
            let p = target.sessions_dir.join(format!("{id}.jsonl"));
            if std::fs::symlink_metadata(&p).is_ok() {
                return Err(ExportError::Exists {
                    path: p,
                    why: "a transcript is already there".into(),
                });
            }
        }
    }
    Ok(())
}

/// Refuses when a gateway owns the state directory.
pub fn refuse_live(state_dir: &Path, owner: Option<GatewayOwner>) -> Result<(), ExportError> {
    match owner {
        Some(owner) => Err(ExportError::GatewayLive {
            state_dir: state_dir.to_path_buf(),
            owner: Box::new(owner),
        }),
        None => Ok(()),
    }
}

/// One session's transcript for `--session KEY -o …`.
pub fn session_transcript(
    db_path: &Path,
    keys: &[String],
) -> Result<(String, String, Option<TranscriptExport>), ExportError> {
    let db = AgentDb::open(db_path)?;
    let (entries, _) = db_entries(&db)?;
    let Some(key) = find_key(&entries, keys) else {
        return Err(ExportError::NoSession {
            db: db_path.to_path_buf(),
            key: keys.first().cloned().unwrap_or_default(),
        });
    };
    let session_id = entries[key.as_str()]
        .get("sessionId")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let originals = archive::archived_transcripts(&archive::archive_dir_for_db(db_path))?;
    let t = transcript_of(&db, &session_id, &originals)?;
    Ok((key.clone(), session_id, t))
}

fn create_dirs(dir: &Path) -> Result<(), ExportError> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(DIR_MODE)
        .create(dir)
        .map_err(|source| ExportError::Write {
            path: dir.to_path_buf(),
            source,
        })
}

/// Writes `bytes` as `dir/name`, never over anything: a temp file beside it (`O_EXCL`,
/// [`FILE_MODE`]), synced, renamed in with `RENAME_NOREPLACE`, the directory synced.
pub fn write_new(dir: &Path, name: &str, bytes: &[u8]) -> Result<(), ExportError> {
    let target = dir.join(name);
    let err = |source| ExportError::Write {
        path: target.clone(),
        source,
    };
    let d = DataDir::open(dir)?;
    let tmp = format!(
        "{name}.{}.{}.tmp",
        std::process::id(),
        uuid::Uuid::new_v4().simple()
    );
    let tmp = OsStr::new(&tmp);
    let written = (|| {
        let mut f = d.create_exclusive(tmp, FILE_MODE)?;
        f.set_permissions(std::os::unix::fs::PermissionsExt::from_mode(FILE_MODE))?;
        f.write_all(bytes)?;
        f.sync_all()?;
        d.rename_no_replace(tmp, OsStr::new(name))
    })();
    if let Err(e) = written {
        let _ = d.unlink(tmp);
        if e.kind() == std::io::ErrorKind::AlreadyExists {
            return Err(ExportError::Exists {
                path: target,
                why: "appeared during the export".into(),
            });
        }
        return Err(err(e));
    }
    d.sync().map_err(err)
}

/// Writes `bytes` to a new file `path` (the `-o FILE` of one transcript), never over
/// anything.
pub fn write_new_path(path: &Path, bytes: &[u8]) -> Result<(), ExportError> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .and_then(OsStr::to_str)
        .ok_or_else(|| ExportError::Exists {
            path: path.to_path_buf(),
            why: "not a file name".into(),
        })?;
    if std::fs::symlink_metadata(path).is_ok() {
        return Err(ExportError::Exists {
            path: path.to_path_buf(),
            why: "the file exists".into(),
        });
    }
    write_new(dir, name, bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_new_never_replaces() {
        let d = tempfile::tempdir().unwrap();
        write_new(d.path(), "a.jsonl", b"one\n").unwrap();
        let e = write_new(d.path(), "a.jsonl", b"two\n").unwrap_err();
        assert_eq!(e.exit_code(), exit::CANT_CREATE);
        assert_eq!(std::fs::read(d.path().join("a.jsonl")).unwrap(), b"one\n");
        let names: Vec<_> = std::fs::read_dir(d.path()).unwrap().flatten().collect();
        assert_eq!(names.len(), 1, "no temp file left");
    }

    #[test]
    fn fresh_out() {
        let d = tempfile::tempdir().unwrap();
        check_fresh_out(&d.path().join("new")).unwrap();
        check_fresh_out(d.path()).unwrap();
        std::fs::write(d.path().join("x"), "").unwrap();
        assert!(check_fresh_out(d.path()).is_err());
    }
}
