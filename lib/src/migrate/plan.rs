//! `plan`: what openclaw 2026.9.6's import would do with every legacy entry and
//! transcript of an agent, read-only.
//!
//! For each agent: every `sessions.json` entry and every JSONL of its sessions directory,
//! and what 9.6's `doctor --session-sqlite import` would make of it: imported (events and
//! bytes), imported up to a malformed line (the readable prefix; the rest dropped),
//! skipped and why (no session id, a file that is not a primary transcript, a JSONL 9.6
//! defers), already in the agent database, or a legacy JSONL left beside a DB-backed
//! session. With it go the issue codes 9.6's doctor reports for the session (the same
//! rules as its `dry-run`, [`DoctorView`]), whether each blocks its migration, and the
//! name each file would get in the import archive.
//!
//! The rules are the doctor's as read in `doctor-session-sqlite-*.mjs` (2026.9.6), and
//! the counts are checked against its `--session-sqlite dry-run --json` on generated
//! legacy dirs (`tests/migrate_plan.rs`). Nothing here writes: the database is opened
//! read-only (`agent_db::AgentDb`), the files through `DataPath`.

pub mod legacy_jsonl;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;
use thiserror::Error;

pub use super::legacy_transcript::resolve_transcript;
use crate::agent_db::{self, AgentDb, AgentDbError};
use crate::exit::ExitCode;
use crate::fs::data_file::{DataFileError, DataPath};
use crate::install::targets::StoreTarget;
use legacy_jsonl::{LegacyRead, OrphanVerdict};

/// The import archive directory of an agent, beside its `sessions/` (9.6's name).
pub const IMPORT_ARCHIVE_DIR: &str = "session-sqlite-import-archive";

/// The largest legacy transcript `plan` reads (bigger ones are reported, not read).
pub const MAX_TRANSCRIPT_BYTES: u64 = 4 << 30;

/// The issue codes 9.6's doctor treats as warnings (they do not block its migration);
/// every other code does (`SESSION_SQLITE_WARNING_ISSUE_CODES`).
pub const WARNING_CODES: &[&str] = &[
    "active_sqlite_transcript_jsonl",
    "entry_invalid",
    "historical_transcript_deferred",
    "historical_duplicate_settled",
    "legacy_index_informational",
    "plugin_migration_source_retained",
    "retained_plugin_source_index_rebuilt",
    "transcript_archive_failed",
    "transcript_malformed",
    "transcript_missing",
    "unreferenced_jsonl_archive_failed",
];

/// Whether 9.6's doctor stops its migration on an issue of this code.
pub fn blocks_doctor(code: &str) -> bool {
    !WARNING_CODES.contains(&code)
}

/// A failure of `plan` (only for what cannot be read at all; everything else is a row).
#[derive(Debug, Error)]
pub enum PlanError {
    /// The agent database could not be opened or read.
    #[error(transparent)]
    Db(#[from] AgentDbError),
    /// A file could not be read.
    #[error(transparent)]
    File(#[from] DataFileError),
}

impl ExitCode for PlanError {
    fn exit_code(&self) -> i32 {
        match self {
            PlanError::Db(e) => e.exit_code(),
            PlanError::File(e) => e.exit_code(),
        }
    }
}

/// One issue as 9.6's doctor reports it.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct DoctorIssue {
    /// Its code (`transcript_malformed`, …).
    pub code: String,
    /// The session key it is about, when it is about one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_key: Option<String>,
    /// Whether it stops 9.6's migration.
    pub blocking: bool,
    /// What is wrong, in our words.
    pub message: String,
}

impl DoctorIssue {
    fn new(code: &str, key: Option<&str>, message: String) -> Self {
        DoctorIssue {
            code: code.to_string(),
            session_key: key.map(str::to_string),
            blocking: blocks_doctor(code),
            message,
        }
    }
}

/// What the import would do with one session.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// Entry and whole transcript imported.
    Import,
    /// Imported up to the first malformed line (torn tail or a bad line); the rest dropped.
    ImportPrefix,
    /// The entry imported with no transcript (none named, or the file missing).
    EntryOnly,
    /// An unregistered JSONL 9.6 recovers as history (`agent:<id>:recovered:<sid>` or the
    /// DB session that owns its id).
    ImportHistorical,
    /// Nothing imported.
    Skip,
    /// A legacy JSONL beside a session already in the database (`claw-migrate finish`).
    Leftover,
}

/// One row of the plan: a legacy entry, an unregistered JSONL, or a DB session with a
/// leftover file.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionPlan {
    /// The agent.
    pub agent_id: String,
    /// The session key (for recovered history, the key 9.6 gives it).
    pub session_key: Option<String>,
    /// The sessionId.
    pub session_id: Option<String>,
    /// Where it comes from: `store`, `unreferenced` (a JSONL no entry names), `db`.
    pub source: &'static str,
    /// The transcript file, when there is one.
    pub transcript: Option<PathBuf>,
    /// What the import does.
    pub action: Action,
    /// Events imported.
    pub events: usize,
    /// Bytes of those events (trimmed lines).
    pub bytes: u64,
    /// Lines not imported (after the first malformed one).
    pub dropped_lines: usize,
    /// Bytes not imported.
    pub dropped_bytes: u64,
    /// Why it is skipped, cut short, or what it duplicates.
    pub reason: Option<String>,
    /// Events the database already holds for this sessionId, when it is there.
    pub db_events: Option<i64>,
    /// The doctor's issues about it.
    pub issues: Vec<DoctorIssue>,
    /// The name the transcript gets in the import archive (`<ms>` is the run's time).
    pub archive_as: Option<String>,
}

impl SessionPlan {
    /// Whether one of its issues stops 9.6's migration.
    pub fn blocking(&self) -> bool {
        self.issues.iter().any(|i| i.blocking)
    }
}

/// What 9.6's `doctor --session-sqlite dry-run --json` reports for the agent (its
/// target), as computed here: the differential compares these.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DoctorView {
    /// Whether 9.6's legacy modes (dry-run, import, validate) look at this agent at all:
    /// it has a `sessions.json` or a primary JSONL (`filterLegacySessionStoreTargets`).
    pub targeted: bool,
    /// `legacyEntries`: store entries plus recovered unregistered transcripts.
    pub legacy_entries: usize,
    /// `validatedEntries`.
    pub validated_entries: usize,
    /// `validatedTranscriptEvents`.
    pub validated_transcript_events: usize,
    /// `referencedTranscriptFiles`.
    pub referenced_transcript_files: usize,
    /// `unreferencedJsonlFiles`.
    pub unreferenced_jsonl_files: Vec<PathBuf>,
    /// `issues`, in the doctor's order.
    pub issues: Vec<DoctorIssue>,
}

/// A file that would move into the import archive.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ArchiveMove {
    /// The file.
    pub source: PathBuf,
    /// `legacy-store`, `transcript`, `trajectory`, `unreferenced-jsonl`.
    pub kind: &'static str,
    /// Its name in `<agentDir>/session-sqlite-import-archive/`.
    pub archive_as: String,
}

/// The plan of one agent.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentPlan {
    /// The agent.
    pub agent_id: String,
    /// Its legacy store.
    pub store_path: PathBuf,
    /// Its agent database.
    pub sqlite_path: PathBuf,
    /// Whether the database exists (and is an agent database).
    pub db_present: bool,
    /// Every session.
    pub sessions: Vec<SessionPlan>,
    /// What moves into the import archive.
    pub archive: Vec<ArchiveMove>,
    /// The doctor's view.
    pub doctor: DoctorView,
}

impl AgentPlan {
    /// Issues that stop 9.6's migration.
    pub fn blocking(&self) -> usize {
        self.doctor.issues.iter().filter(|i| i.blocking).count()
    }
}

/// What the agent database already holds, as 9.6's validation snapshot reads it.
#[derive(Debug, Default)]
pub struct DbSnapshot {
    /// `session_key -> current_session_id` of valid entries (`entry_valid = 1`).
    pub ids_by_key: BTreeMap<String, String>,
    /// `session_id -> session_key` of `session_windows`.
    pub keys_by_id: HashMap<String, String>,
    /// Events per session id.
    pub events_by_id: HashMap<String, i64>,
}

impl DbSnapshot {
    /// Reads the snapshot of an open database.
    pub fn read(db: &AgentDb) -> Result<DbSnapshot, AgentDbError> {
        let sql = |e| db.err(e);
        let mut s = DbSnapshot::default();
        let mut st = db
            .conn
            .prepare("SELECT session_key, current_session_id FROM session_nodes WHERE entry_valid = 1 ORDER BY session_key")
            .map_err(sql)?;
        for r in st
            .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))
            .map_err(sql)?
        {
            let (k, v) = r.map_err(sql)?;
            s.ids_by_key.insert(k, v);
        }
        let mut st = db
            .conn
            .prepare("SELECT session_id, session_key FROM session_windows")
            .map_err(sql)?;
        for r in st
            .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))
            .map_err(sql)?
        {
            let (k, v) = r.map_err(sql)?;
            s.keys_by_id.insert(k, v);
        }
        let mut st = db
            .conn
            .prepare("SELECT session_id, count(*) FROM transcript_events GROUP BY session_id")
            .map_err(sql)?;
        for r in st
            .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)))
            .map_err(sql)?
        {
            let (k, v) = r.map_err(sql)?;
            s.events_by_id.insert(k, v);
        }
        Ok(s)
    }

    /// `(session_key, current_session_id)` of every valid entry.
    pub fn sessions(&self) -> Vec<(String, String)> {
        self.ids_by_key
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }
}

/// Opens the agent database of `store_path` when there is one.
pub fn open_db(store_path: &Path) -> Result<Option<AgentDb>, AgentDbError> {
    let p = agent_db::layout::db_path_for_store(store_path);
    if !p.is_file() || !agent_db::is_agent_db(&p) {
        return Ok(None);
    }
    AgentDb::open(&p).map(Some)
}

/// A legacy file a store entry or a listing names, as a [`DataPath`] beneath the sessions
/// directory: a name that climbs out of it (a session id `../x`) is refused here, a
/// symlink when it is opened; neither is followed.
pub fn legacy_file(sessions_dir: &Path, path: &Path) -> Result<DataPath, DataFileError> {
    let rel = path
        .strip_prefix(sessions_dir)
        .map_err(|_| DataFileError::Escapes {
            path: path.to_path_buf(),
            root: sessions_dir.to_path_buf(),
        })?;
    DataPath::beneath(sessions_dir, rel)
}

/// Reads a legacy transcript below the sessions directory.
fn read_file(file: &DataPath) -> Result<Vec<u8>, DataFileError> {
    file.read_small(MAX_TRANSCRIPT_BYTES, "a legacy transcript")
}

/// The first event of a transcript whose media 9.6 refuses to store, as an issue: 9.6's
/// doctor stops its import on it (`legacy media arrays have ambiguous sparse positional
/// alignment`), and `claw-migrate import` refuses it too.
fn media_issue(lr: &LegacyRead, path: &Path, key: Option<&str>) -> Option<DoctorIssue> {
    lr.events.iter().find_map(|e| {
        let why = crate::migrate::rows::media::check_event(&e.value).err()?;
        Some(DoctorIssue::new(
            "transcript_media_refused",
            key,
            format!(
                "{}:{}: {why}; 9.6's doctor stops its import on it",
                path.display(),
                e.line
            ),
        ))
    })
}

/// Plans one agent.
pub fn plan_agent(target: &StoreTarget) -> Result<AgentPlan, PlanError> {
    let store_path = &target.store_path;
    let agent = target.agent_id.as_str();
    let sessions_dir = store_path.parent().unwrap_or(Path::new(".")).to_path_buf();
    let sqlite_path = agent_db::layout::db_path_for_store(store_path);
    let db = open_db(store_path)?;
    let snapshot = match &db {
        Some(db) => DbSnapshot::read(db)?,
        None => DbSnapshot::default(),
    };
    let mut issues: Vec<DoctorIssue> = Vec::new();
    let mut rows: Vec<SessionPlan> = Vec::new();
    let mut archive: Vec<ArchiveMove> = Vec::new();
    let row = |key: Option<&str>, sid: Option<&str>, source: &'static str| SessionPlan {
        agent_id: agent.to_string(),
        session_key: key.map(str::to_string),
        session_id: sid.map(str::to_string),
        source,
        transcript: None,
        action: Action::Skip,
        events: 0,
        bytes: 0,
        dropped_lines: 0,
        dropped_bytes: 0,
        reason: None,
        db_events: None,
        issues: Vec::new(),
        archive_as: None,
    };

    // The store's entries (`readLegacySessionStoreEntries`).
    let mut records: Vec<(String, String, Value)> = Vec::new();
    let store_present = store_path.is_file();
    if store_path.exists() && !store_present {
        issues.push(DoctorIssue::new(
            "store_unreadable",
            None,
            format!("{}: not a regular file", store_path.display()),
        ));
    } else if store_present {
        match DataPath::given(store_path).read_small(1 << 32, "a session store") {
            Err(e) => issues.push(DoctorIssue::new(
                "store_unreadable",
                None,
                format!("{}: {e}", store_path.display()),
            )),
            Ok(bytes) => match std::str::from_utf8(&bytes)
                .map_err(|e| e.to_string())
                .and_then(|t| crate::js::jsjson::parse_value(t).map_err(|e| e.to_string()))
            {
                Err(e) => issues.push(DoctorIssue::new(
                    "store_unreadable",
                    None,
                    format!("{}: {e}", store_path.display()),
                )),
                Ok(Value::Object(map)) => {
                    for (key, entry) in map {
                        let sid = entry
                            .get("sessionId")
                            .and_then(Value::as_str)
                            .filter(|s| !s.trim().is_empty());
                        match (entry.is_object(), sid) {
                            (true, Some(sid)) => {
                                let sid = sid.to_string();
                                records.push((key, sid, entry));
                            }
                            _ => {
                                let mut r = row(Some(&key), None, "store");
                                r.reason = Some("the entry has no valid sessionId; 9.6 skips it and keeps the original index".into());
                                let i = DoctorIssue::new(
                                    "entry_invalid",
                                    Some(&key),
                                    format!(
                                        "{}: session entry is missing a valid sessionId",
                                        store_path.display()
                                    ),
                                );
                                r.issues.push(i.clone());
                                issues.push(i);
                                rows.push(r);
                            }
                        }
                    }
                }
                Ok(_) => issues.push(DoctorIssue::new(
                    "store_not_object",
                    None,
                    format!(
                        "{} does not contain an object session store",
                        store_path.display()
                    ),
                )),
            },
        }
    }

    // Each entry's transcript.
    let mut referenced: HashSet<PathBuf> = HashSet::new();
    let mut planned: Vec<(SessionPlan, Option<LegacyRead>)> = Vec::new();
    for (key, sid, entry) in &records {
        let mut r = row(Some(key), Some(sid), "store");
        let path = resolve_transcript(&sessions_dir, entry, sid);
        r.transcript = path.clone();
        r.db_events = snapshot.events_by_id.get(sid).copied();
        let mut read = None;
        // A transcript that leaves the sessions dir or is not a regular file is not
        // followed: the entry alone is imported (as `import` does), and the row says why.
        let file = path
            .as_ref()
            .map(|p| legacy_file(&sessions_dir, p).and_then(|f| f.check().map(|there| (f, there))));
        match (&path, file) {
            (None, _) | (_, None) => {
                r.action = Action::EntryOnly;
                r.reason = Some("no transcript file".into());
            }
            (Some(_), Some(Err(e))) => {
                r.action = Action::EntryOnly;
                r.reason = Some(format!(
                    "its transcript is not followed ({e}); only the entry is imported"
                ));
            }
            (Some(p), Some(Ok((_, false)))) => {
                r.action = Action::EntryOnly;
                r.reason = Some("its sessionFile is missing".into());
                r.issues.push(DoctorIssue::new(
                    "transcript_missing",
                    Some(key),
                    format!("Transcript file is missing: {}", p.display()),
                ));
            }
            (Some(p), Some(Ok((file, true)))) => {
                referenced.insert(p.clone());
                let bytes = read_file(&file)?;
                let lr = legacy_jsonl::read(&bytes);
                fill_counts(&mut r, &lr);
                if let Some(m) = &lr.malformed {
                    r.action = Action::ImportPrefix;
                    r.reason =
                        Some(format!(
                        "{} at line {} ({}): the readable prefix is imported, {} line(s) dropped",
                        if m.torn_tail { "torn tail" } else { "malformed line" },
                        m.line,
                        m.why,
                        lr.dropped_lines
                    ));
                    r.issues.push(DoctorIssue::new(
                        "transcript_malformed",
                        Some(key),
                        format!(
                            "{}:{}: {}; only the readable prefix can be imported",
                            p.display(),
                            m.line,
                            m.why
                        ),
                    ));
                } else {
                    r.action = Action::Import;
                }
                r.issues.extend(media_issue(&lr, p, Some(key)));
                let base = p.file_name().map(|n| n.to_string_lossy().into_owned());
                r.archive_as = base.map(|b| legacy_jsonl::archive_name_pattern(key, &b));
                read = Some(lr);
            }
        }
        if let Some(db_sid) = snapshot.ids_by_key.get(key) {
            let note = if db_sid == sid {
                format!(
                    "already in the database ({} event(s)); 9.6 imports it again over that session",
                    r.db_events.unwrap_or(0)
                )
            } else {
                format!("the database holds this key as session {db_sid}")
            };
            r.reason = Some(match r.reason.take() {
                Some(x) => format!("{x}; {note}"),
                None => note,
            });
        }
        planned.push((r, read));
    }

    // Unregistered JSONL files (`discoverLegacyHistoricalTranscripts`), only when the
    // store read cleanly.
    let mut names: Vec<String> = std::fs::read_dir(&sessions_dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|d| d.file_type().is_ok_and(|t| t.is_file()))
        .map(|d| d.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let db_backed: HashSet<String> = snapshot.ids_by_key.values().cloned().collect();
    let mut historical: Vec<(SessionPlan, Option<LegacyRead>)> = Vec::new();
    if issues.is_empty() {
        let mut candidates: BTreeMap<String, Vec<(SessionPlan, LegacyRead)>> = BTreeMap::new();
        for name in &names {
            let p = sessions_dir.join(name);
            if !legacy_jsonl::is_primary_transcript_name(name) || referenced.contains(&p) {
                continue;
            }
            let bytes = read_file(&legacy_file(&sessions_dir, &p)?)?;
            let lr = legacy_jsonl::read(&bytes);
            let mut r = row(None, None, "unreferenced");
            r.transcript = Some(p.clone());
            match legacy_jsonl::classify_orphan(name, &lr) {
                OrphanVerdict::NotPrimary(why) => {
                    r.reason = Some(format!(
                        "not a primary transcript ({why}); 9.6 archives it as unreferenced"
                    ));
                    rows.push(r);
                }
                OrphanVerdict::Deferred(why) => {
                    r.reason = Some(format!("9.6 defers it: {why}; the original is kept"));
                    let i = DoctorIssue::new(
                        "historical_transcript_deferred",
                        None,
                        format!("{}: {why}", p.display()),
                    );
                    r.issues.push(i.clone());
                    issues.push(i);
                    rows.push(r);
                }
                OrphanVerdict::Primary { session_id } => {
                    if records.iter().any(|(_, s, e)| {
                        s == &session_id
                            && resolve_transcript(&sessions_dir, e, s).is_some_and(|t| {
                                legacy_file(&sessions_dir, &t).is_ok_and(|f| f.is_file())
                            })
                    }) {
                        let why = "A registered primary already claims this identity; extra original retained";
                        r.session_id = Some(session_id);
                        r.reason = Some(format!("9.6 defers it: {why}"));
                        let i = DoctorIssue::new(
                            "historical_transcript_deferred",
                            None,
                            format!("{}: {why}", p.display()),
                        );
                        r.issues.push(i.clone());
                        issues.push(i);
                        rows.push(r);
                        continue;
                    }
                    let owner = snapshot.keys_by_id.get(&session_id).cloned();
                    let key = owner
                        .clone()
                        .unwrap_or_else(|| format!("agent:{agent}:recovered:{session_id}"));
                    r.session_key = Some(key.clone());
                    r.session_id = Some(session_id.clone());
                    r.db_events = snapshot.events_by_id.get(&session_id).copied();
                    fill_counts(&mut r, &lr);
                    r.issues.extend(media_issue(&lr, &p, Some(&key)));
                    r.action = Action::ImportHistorical;
                    r.reason = Some(match &owner {
                        Some(o) => format!("no store entry names it; its id belongs to DB session {o:?}"),
                        None => format!("no store entry names it (an orphan); 9.6 recovers it as {key:?}, archived"),
                    });
                    r.archive_as = Some(legacy_jsonl::archive_name_pattern(&key, name));
                    candidates.entry(session_id).or_default().push((r, lr));
                }
            }
        }
        for (sid, mut list) in candidates {
            if list.len() > 1 {
                let i = DoctorIssue::new(
                    "historical_transcript_deferred",
                    None,
                    format!("{sid}: multiple primary files claim this identity; originals retained without importing"),
                );
                issues.push(i.clone());
                for (mut r, _) in list {
                    r.action = Action::Skip;
                    r.reason =
                        Some("several files claim this session id; 9.6 defers them all".into());
                    r.issues.push(i.clone());
                    rows.push(r);
                }
            } else if let Some((r, lr)) = list.pop() {
                if let Some(t) = &r.transcript {
                    referenced.insert(t.clone());
                }
                historical.push((r, Some(lr)));
            }
        }
    }

    // The doctor's counts (`countLegacyTranscript`, dry-run).
    let mut view = DoctorView {
        legacy_entries: planned.len() + historical.len(),
        ..DoctorView::default()
    };
    let mut ordered: Vec<DoctorIssue> = std::mem::take(&mut issues);
    for (r, read) in planned.iter().chain(historical.iter()) {
        let issue = r
            .issues
            .iter()
            .find(|i| i.code == "transcript_missing" || i.code == "transcript_malformed");
        match issue {
            Some(i) => ordered.push(i.clone()),
            None => {
                view.validated_entries += 1;
                view.validated_transcript_events += read.as_ref().map_or(0, |l| l.events.len());
            }
        }
    }
    view.referenced_transcript_files = planned
        .iter()
        .chain(historical.iter())
        .filter_map(|(r, _)| r.transcript.as_ref())
        .collect::<HashSet<_>>()
        .len();
    for name in &names {
        let p = sessions_dir.join(name);
        if name.ends_with(".jsonl") && !referenced.contains(&p) {
            view.unreferenced_jsonl_files.push(p);
        }
    }
    view.unreferenced_jsonl_files.sort();

    // Legacy JSONL beside DB-backed sessions (`active_sqlite_transcript_jsonl`).
    for (key, sid, dp) in agent_db::check::legacy_jsonl_beside(&snapshot.sessions(), &sessions_dir)
    {
        let path = dp.path().to_path_buf();
        let i = DoctorIssue::new(
            "active_sqlite_transcript_jsonl",
            Some(&key),
            format!(
                "SQLite-backed session has a legacy JSONL transcript awaiting verification: {}",
                path.display()
            ),
        );
        ordered.push(i.clone());
        // The row of the same file, if discovery already made one.
        if let Some((r, _)) = historical
            .iter_mut()
            .find(|(r, _)| r.transcript.as_deref() == Some(path.as_path()))
        {
            r.issues.push(i);
            r.action = Action::Leftover;
            continue;
        }
        let mut r = row(Some(&key), Some(&sid), "db");
        r.transcript = Some(path.clone());
        r.db_events = snapshot.events_by_id.get(&sid).copied();
        if let Ok(bytes) = read_file(&dp) {
            fill_counts(&mut r, &legacy_jsonl::read(&bytes));
        }
        r.action = Action::Leftover;
        r.reason = Some("a legacy JSONL beside the DB-backed session: `claw-migrate finish` imports its missing tail or archives it".into());
        r.issues.push(i);
        r.archive_as = path
            .file_name()
            .map(|n| legacy_jsonl::archive_name_pattern(&key, &n.to_string_lossy()));
        rows.push(r);
    }
    for (r, _) in historical.iter_mut() {
        if r.action == Action::ImportHistorical
            && db_backed.contains(r.session_id.as_deref().unwrap_or(""))
        {
            r.action = Action::Leftover;
        }
    }
    view.issues = ordered;
    view.targeted = store_path.exists()
        || names
            .iter()
            .any(|n| legacy_jsonl::is_primary_transcript_name(n));

    // The archive.
    if store_present {
        archive.push(ArchiveMove {
            source: store_path.clone(),
            kind: "legacy-store",
            archive_as: legacy_jsonl::archive_name_pattern("legacy-store", "sessions.json"),
        });
    }
    for (r, _) in planned.iter().chain(historical.iter()) {
        if let (Some(t), Some(a)) = (&r.transcript, &r.archive_as) {
            if legacy_file(&sessions_dir, t).is_ok_and(|f| f.is_file()) {
                archive.push(ArchiveMove {
                    source: t.clone(),
                    kind: "transcript",
                    archive_as: a.clone(),
                });
                let key = r.session_key.as_deref().unwrap_or("session");
                let s = t.to_string_lossy();
                if let Some(stem) = s.strip_suffix(".jsonl") {
                    for side in [
                        format!("{stem}.trajectory.jsonl"),
                        format!("{stem}.trajectory-path.json"),
                    ] {
                        let sp = PathBuf::from(&side);
                        if legacy_file(&sessions_dir, &sp).is_ok_and(|f| f.is_file()) {
                            let base = sp
                                .file_name()
                                .map(|n| n.to_string_lossy().into_owned())
                                .unwrap_or_default();
                            referenced.insert(sp.clone());
                            archive.push(ArchiveMove {
                                source: sp,
                                kind: "trajectory",
                                archive_as: legacy_jsonl::archive_name_pattern(key, &base),
                            });
                        }
                    }
                }
            }
        }
    }
    for p in &view.unreferenced_jsonl_files {
        if referenced.contains(p) || archive.iter().any(|a| &a.source == p) {
            continue;
        }
        let base = p
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        archive.push(ArchiveMove {
            source: p.clone(),
            kind: "unreferenced-jsonl",
            archive_as: legacy_jsonl::archive_name_pattern("archive-tier", &base),
        });
    }

    let mut sessions: Vec<SessionPlan> = planned
        .into_iter()
        .chain(historical)
        .map(|(r, _)| r)
        .collect();
    sessions.extend(rows);
    Ok(AgentPlan {
        agent_id: agent.to_string(),
        store_path: store_path.clone(),
        sqlite_path,
        db_present: db.is_some(),
        sessions,
        archive,
        doctor: view,
    })
}

fn fill_counts(r: &mut SessionPlan, lr: &LegacyRead) {
    r.events = lr.events.len();
    r.bytes = lr.event_bytes;
    r.dropped_lines = lr.dropped_lines;
    r.dropped_bytes = lr.dropped_bytes;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doctor_blocking_codes() {
        assert!(blocks_doctor("store_unreadable"));
        assert!(!blocks_doctor("transcript_malformed"));
    }
}
