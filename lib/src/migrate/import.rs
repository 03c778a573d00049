//! `import`: the legacy files (`sessions.json`, `<sessionId>.jsonl`) of each agent into its
//! agent database, exactly as openclaw 2026.9.6's `doctor --session-sqlite import` does
//! (the rows of each line are [`super::rows`]'s), with the originals moved byte for byte
//! into the import archive and a run manifest beside them.
//!
//! Why the order of the steps: a user's history must never be in neither place. So
//! (1) the run manifest with every planned move is written first; (2) each agent's
//! database is built whole in a temporary file of its directory, in one transaction,
//! synced, and renamed in (never over an existing database); (3) only then are the legacy
//! files moved (renames in one filesystem) and (4) the manifest completed. A run killed at
//! any point is finished by the next one: before (2) the legacy files are all in place and
//! the database is built again; after it, the manifest's remaining moves are made. A live
//! gateway refuses the run (exit 75): it would import the same files itself.

pub mod archive;
pub mod legacy;
pub mod merge;
pub mod schema;
pub mod write;

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use rusqlite::{Connection, OpenFlags};
use serde_json::{json, Map, Value};

use archive::{Move, TargetPlan};

mod error;
pub use error::ImportError;

/// What to import.
#[derive(Debug, Clone)]
pub struct ImportOptions {
    /// The state directory.
    pub state_dir: PathBuf,
    /// The agents, in order.
    pub agents: Vec<String>,
    /// Plan only; change nothing.
    pub dry_run: bool,
    /// The clock (epoch ms).
    pub now_ms: i64,
}

/// What happened to one agent.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentOutcome {
    /// The agent.
    pub agent_id: String,
    /// `imported`, `merged`, `resumed`, `already-imported`, `nothing-to-import`,
    /// `would-import` or `would-merge`.
    pub status: String,
    /// The agent DB.
    pub sqlite_path: PathBuf,
    /// Sessions written (entries and recovered orphans).
    pub imported_entries: usize,
    /// Transcript rows written.
    pub imported_transcript_events: usize,
    /// Files moved (or to move) into the import archive.
    pub archived_files: Vec<PathBuf>,
    /// Issues, as 9.6 names them (`transcript_malformed`).
    pub issues: Vec<Value>,
    /// Legacy sessions the existing database already has: skipped, rows untouched.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub duplicates: Vec<merge::Duplicate>,
    /// The database's row in the state database's `agent_databases`, once written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state_registry: Option<crate::migrate::state_registry::Registration>,
}

/// What a run did.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ImportReport {
    /// The run id (the manifest's name), when a run was written or resumed.
    pub run_id: Option<String>,
    /// The manifest, when written.
    pub manifest_path: Option<PathBuf>,
    /// Whether nothing was changed (`--dry-run`).
    pub dry_run: bool,
    /// Per agent.
    pub agents: Vec<AgentOutcome>,
}

/// The agent DB of an agent.
pub fn sqlite_path(state_dir: &Path, agent: &str) -> PathBuf {
    state_dir
        .join("agents")
        .join(agent)
        .join("agent")
        .join(crate::agent_db::DB_FILE_NAME)
}

/// The session 9.6 makes of a transcript no entry names (an orphan): its key and entry,
/// archived at the file's mtime.
pub fn recovered_session(agent: &str, sid: &str, mtime_ms: i64) -> (String, Map<String, Value>) {
    let mut entry = Map::new();
    entry.insert("sessionId".into(), json!(sid));
    entry.insert("updatedAt".into(), json!(mtime_ms));
    entry.insert("archivedAt".into(), json!(mtime_ms));
    entry.insert("delivery".into(), json!({"kind": "none"}));
    (format!("agent:{agent}:recovered:{sid}"), entry)
}

const TEMP_SUFFIX: &str = ".clawstate-import";

/// One session to write: key, rewritten entry, session id, its transcript (as planned)
/// and line count, and `transcript_updated_at`.
struct PlannedSession {
    key: String,
    entry: Map<String, Value>,
    session_id: String,
    transcript: Option<legacy::FileIdentity>,
    /// Where its readable prefix ends (bytes).
    readable_end: usize,
    line_count: usize,
    mtime_ms: i64,
}

/// One agent's work: the plan and the rows to write.
struct AgentWork {
    plan: TargetPlan,
    legacy: legacy::LegacyDir,
    sessions: Vec<PlannedSession>,
}

/// A transcript with a line whose media 9.6 refuses to store: 9.6's doctor stops its
/// whole import on it, and so does this one, before anything is written (65).
fn refuse_media(sessions_dir: &Path, t: &legacy::Transcript) -> Result<(), ImportError> {
    match &t.media_refused {
        Some((line, why)) => Err(ImportError::Malformed {
            path: sessions_dir.join(&t.file.name),
            what: format!("line {line}: {why} (9.6's doctor stops on it too); nothing imported"),
        }),
        None => Ok(()),
    }
}

fn plan_agent(state_dir: &Path, agent: &str, ms: i64) -> Result<AgentWork, ImportError> {
    let agent_dir = state_dir.join("agents").join(agent);
    let sessions_dir = agent_dir.join("sessions");
    let archive_dir = agent_dir.join(archive::ARCHIVE_DIR);
    let legacy = legacy::read(&sessions_dir)?;
    let mut moves = Vec::new();
    let mut issues = Vec::new();
    let mut taken = HashSet::new();
    let mut sessions = Vec::new();
    let mut deps = Vec::new();
    for s in &legacy.sessions {
        let rewritten = match crate::migrate::rows::rewrite_entry(&s.key, &s.entry) {
            Ok(e) => e,
            Err(why) => {
                return Err(ImportError::Malformed {
                    path: sessions_dir.join("sessions.json"),
                    what: format!("entry {}: {why}", s.key),
                })
            }
        };
        if let Some(t) = &s.transcript {
            refuse_media(&sessions_dir, t)?;
        }
        if let Some(why) = &s.not_followed {
            issues.push((
                "transcript_not_followed".to_string(),
                format!("transcript not followed: {why}; only the entry is imported"),
                Some(s.key.clone()),
            ));
        }
        let (line_count, mtime) = match &s.transcript {
            Some(t) => (t.line_count, t.file.mtime_ms()),
            None => (0, ms),
        };
        if let Some(t) = &s.transcript {
            let path = sessions_dir.join(&t.file.name);
            deps.push(path.to_string_lossy().into_owned());
            let (classification, reason) = match &t.malformed {
                None => ("imported", "verified-import-original"),
                Some((line, why)) => {
                    issues.push((
                        "transcript_malformed".to_string(),
                        format!(
                            "{}: line {line}: {why}. Only the readable prefix can be imported; the original remains protected for recovery.",
                            path.display()
                        ),
                        Some(s.key.clone()),
                    ));
                    ("protected", "unimported-or-unknown-history")
                }
            };
            moves.push(Move {
                kind: "transcript",
                session_key: Some(s.key.clone()),
                archive_name: archive::archive_name(
                    &s.key,
                    &t.file.name,
                    ms,
                    &mut taken,
                    &archive_dir,
                ),
                file: t.file.clone(),
                classification,
                reason,
                dependencies: Vec::new(),
            });
            for side in &s.sidecars {
                moves.push(Move {
                    kind: "trajectory",
                    session_key: Some(s.key.clone()),
                    archive_name: archive::archive_name(
                        &s.key,
                        &side.name,
                        ms,
                        &mut taken,
                        &archive_dir,
                    ),
                    file: side.clone(),
                    classification: "protected",
                    reason: "unimported-or-unknown-history",
                    dependencies: Vec::new(),
                });
            }
        }
        sessions.push(PlannedSession {
            key: s.key.clone(),
            entry: rewritten,
            session_id: s.session_id.clone(),
            transcript: s.transcript.as_ref().map(|t| t.file.clone()),
            readable_end: s.transcript.as_ref().map_or(0, |t| t.readable_end),
            line_count,
            mtime_ms: mtime,
        });
    }
    for (name, t) in &legacy.orphans {
        refuse_media(&sessions_dir, t)?;
        let sid = name.trim_end_matches(".jsonl").to_string();
        let mtime = t.file.mtime_ms();
        let (key, entry) = recovered_session(agent, &sid, mtime);
        deps.push(sessions_dir.join(name).to_string_lossy().into_owned());
        moves.push(Move {
            kind: "transcript",
            session_key: Some(key.clone()),
            archive_name: archive::archive_name(&key, name, ms, &mut taken, &archive_dir),
            file: t.file.clone(),
            classification: "protected",
            reason: "indexed-historical-primary",
            dependencies: Vec::new(),
        });
        sessions.push(PlannedSession {
            key,
            entry,
            session_id: sid,
            transcript: Some(t.file.clone()),
            readable_end: t.readable_end,
            line_count: t.line_count,
            mtime_ms: mtime,
        });
    }
    if let Some(store) = &legacy.store {
        let clean = issues.is_empty();
        moves.push(Move {
            kind: "legacy-store",
            session_key: None,
            archive_name: archive::archive_name(
                "legacy-store",
                &store.name,
                ms,
                &mut taken,
                &archive_dir,
            ),
            file: store.clone(),
            classification: if clean { "imported" } else { "protected" },
            reason: if clean {
                "verified-index-import"
            } else {
                "incomplete-index-import"
            },
            dependencies: deps,
        });
    }
    Ok(AgentWork {
        plan: TargetPlan {
            agent_id: agent.to_string(),
            sqlite_path: sqlite_path(state_dir, agent),
            store_path: sessions_dir.join("sessions.json"),
            sessions_dir,
            archive_dir,
            moves,
            issues,
        },
        legacy,
        sessions,
    })
}

/// Builds an agent's database in a temporary file beside it and renames it in.
fn build_db(work: &AgentWork, now_ms: i64) -> Result<usize, ImportError> {
    let db = &work.plan.sqlite_path;
    let dir = db.parent().expect("the DB has a directory");
    archive::create_dir(dir, 0o700)?;
    let tmp = PathBuf::from(format!("{}{TEMP_SUFFIX}", db.display()));
    remove_temp(&tmp)?;
    let mut events = 0;
    {
        use std::os::unix::fs::OpenOptionsExt;
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&tmp)
            .map_err(|e| ImportError::io(&tmp, e))?;
        let mut conn = Connection::open_with_flags(
            &tmp,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(ImportError::sqlite(&tmp))?;
        conn.execute_batch(
            "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA foreign_keys = ON; PRAGMA cache_size = -65536;",
        )
        .map_err(ImportError::sqlite(&tmp))?;
        let tx = conn.transaction().map_err(ImportError::sqlite(&tmp))?;
        schema::create(&tx, &work.plan.agent_id, now_ms).map_err(ImportError::sqlite(&tmp))?;
        // A few threads read, check and prepare the next sessions' rows (parse, zstd,
        // navigation facts: most of the work) while this one inserts them. Worker k takes
        // the sessions k, k + n, …; each hands them over on its own bounded channel
        // (READ_AHEAD sessions in memory at most), so the rows go in in the plan's order.
        std::thread::scope(|scope| -> Result<(), ImportError> {
            let (sessions, dir, tmp) = (&work.sessions, &work.plan.sessions_dir, &tmp);
            let workers = prepare_threads(sessions.len());
            let mut recvs = Vec::with_capacity(workers);
            for k in 0..workers {
                let (send, recv) = std::sync::mpsc::sync_channel(READ_AHEAD);
                recvs.push(recv);
                scope.spawn(move || {
                    // The navigation facts are SQLite JSON functions: any connection
                    // computes them.
                    let nav = match Connection::open_in_memory() {
                        Ok(c) => c,
                        Err(e) => {
                            let _ = send.send(Err(ImportError::sqlite(tmp)(e)));
                            return;
                        }
                    };
                    for ps in sessions.iter().skip(k).step_by(workers) {
                        let prepared = prepare_session(&nav, dir, ps, now_ms, tmp);
                        let failed = prepared.is_err();
                        if send.send(prepared).is_err() || failed {
                            return;
                        }
                    }
                });
            }
            for (i, ps) in work.sessions.iter().enumerate() {
                let prepared = recvs[i % workers].recv().map_err(|_| ImportError::Write {
                    path: tmp.clone(),
                    what: "a thread reading the transcripts stopped".into(),
                })??;
                let w = write::session(
                    &tx,
                    &write::SessionInput {
                        key: &ps.key,
                        entry: &ps.entry,
                        session_id: &ps.session_id,
                        transcript: &prepared,
                        transcript_mtime_ms: ps.mtime_ms,
                        now_ms,
                    },
                )
                .map_err(ImportError::sqlite(tmp))?;
                events += w.events;
            }
            Ok(())
        })?;
        tx.execute("UPDATE session_nodes SET entry_valid = 1", [])
            .map_err(ImportError::sqlite(&tmp))?;
        tx.commit().map_err(ImportError::sqlite(&tmp))?;
        conn.execute_batch("PRAGMA journal_mode = WAL;")
            .map_err(ImportError::sqlite(&tmp))?;
        conn.close().map_err(|(_, e)| ImportError::Sqlite {
            path: tmp.clone(),
            source: e,
        })?;
    }
    std::fs::File::open(&tmp)
        .and_then(|f| f.sync_all())
        .map_err(|e| ImportError::io(&tmp, e))?;
    let d = crate::fs::data_file::DataDir::open(dir).map_err(ImportError::file)?;
    let tmp_name = tmp.file_name().expect("named");
    let db_name = db.file_name().expect("named");
    d.rename_no_replace(tmp_name, db_name)
        .map_err(|e| ImportError::Write {
            path: db.clone(),
            what: format!("cannot rename the imported database in: {e}"),
        })?;
    d.sync().map_err(|e| ImportError::io(dir, e))?;
    Ok(events)
}

/// Drops from `work` the sessions the existing database already has (and, for those
/// whose legacy transcript holds events the database lacks, their moves: the file stays
/// for `claw-migrate finish`); returns them.
fn merge_plan(
    db: &Path,
    work: &mut AgentWork,
    check_held: bool,
) -> Result<Vec<merge::Duplicate>, ImportError> {
    let cands: Vec<merge::Candidate<'_>> = work
        .sessions
        .iter()
        .map(|s| merge::Candidate {
            key: &s.key,
            session_id: &s.session_id,
            transcript: s.transcript.as_ref(),
        })
        .collect();
    let found = merge::duplicates(db, &work.plan.sessions_dir, &cands, check_held)?;
    let mut keep = found.iter().map(Option::is_none);
    work.sessions.retain(|_| keep.next().unwrap_or(true));
    let dups: Vec<merge::Duplicate> = found.into_iter().flatten().collect();
    for d in dups.iter().filter(|d| d.transcript_held == Some(false)) {
        work.plan
            .moves
            .retain(|m| m.session_key.as_deref() != Some(&d.session_key));
    }
    Ok(dups)
}

/// Adds the planned sessions to the agent's existing database (one transaction).
fn merge_db(work: &AgentWork, now_ms: i64) -> Result<usize, ImportError> {
    let new = work.sessions.iter().map(|ps| {
        Ok(merge::NewSession {
            key: ps.key.clone(),
            entry: ps.entry.clone(),
            session_id: ps.session_id.clone(),
            lines: match &ps.transcript {
                Some(t) => legacy::read_lines(&work.plan.sessions_dir, t)?,
                None => Vec::new(),
            },
            transcript_mtime_ms: ps.mtime_ms,
        })
    });
    let added = merge::add_sessions(&work.plan.sqlite_path, new, now_ms)?;
    Ok(added.sessions.iter().map(|s| s.2).sum())
}

/// How many sessions' rows each preparing thread holds ready ahead of the inserts.
const READ_AHEAD: usize = 2;

/// How many threads prepare rows: one per CPU (the inserting thread mostly waits for
/// them), two to four.
fn prepare_threads(sessions: usize) -> usize {
    std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .clamp(2, 4)
        .min(sessions.max(1))
}

/// A session's transcript read again (it must not have changed since the plan read it)
/// and its rows computed.
fn prepare_session(
    nav: &Connection,
    dir: &Path,
    ps: &PlannedSession,
    now_ms: i64,
    tmp: &Path,
) -> Result<write::PreparedTranscript, ImportError> {
    let lines = match &ps.transcript {
        Some(t) => legacy::read_prefix(dir, t, ps.readable_end)?,
        None => Vec::new(),
    };
    write::prepare(nav, &lines, now_ms).map_err(ImportError::sqlite(tmp))
}

fn remove_temp(tmp: &Path) -> Result<(), ImportError> {
    for suffix in ["", "-journal", "-wal", "-shm"] {
        let p = PathBuf::from(format!("{}{suffix}", tmp.display()));
        match std::fs::remove_file(&p) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(ImportError::io(&p, e)),
        }
    }
    Ok(())
}

/// What is at an agent's DB path.
fn existing_db(path: &Path) -> Result<Option<schema::Existing>, ImportError> {
    if !path.exists() {
        return Ok(None);
    }
    let c = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY)
        .map_err(ImportError::sqlite(path))?;
    schema::recognise(&c)
        .map(Some)
        .map_err(ImportError::sqlite(path))
}

/// Holds the import lock of a state dir (`flock` on the `<stateDir>/agents` directory
/// itself, so no lock file joins the layout): one import at a time. While held, the temp
/// files an interrupted run left in the runs directory are removed.
fn run_lock(state_dir: &Path) -> Result<std::fs::File, ImportError> {
    let dir = state_dir.join(archive::RUNS_DIR);
    let path = state_dir.join("agents");
    let f = std::fs::File::open(&path).map_err(|e| ImportError::io(&path, e))?;
    match rustix::fs::flock(&f, rustix::fs::FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => {}
        Err(rustix::io::Errno::WOULDBLOCK) => {
            return Err(ImportError::Busy { path });
        }
        Err(e) => return Err(ImportError::io(&path, e.into())),
    }
    if let Ok(rd) = std::fs::read_dir(&dir) {
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.starts_with("session-sqlite-")
                && name.contains(".json.")
                && name.ends_with(".tmp")
            {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }
    Ok(f)
}

/// An unfinished run of an earlier import: its manifest, run id and start.
struct Pending {
    run_id: String,
    started_ms: i64,
    manifest: Value,
}

fn pending_run(state_dir: &Path) -> Result<Option<Pending>, ImportError> {
    let dir = state_dir.join(archive::RUNS_DIR);
    let Ok(rd) = std::fs::read_dir(&dir) else {
        return Ok(None);
    };
    let mut names: Vec<String> = rd
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with("session-sqlite-") && n.ends_with(".json"))
        .collect();
    names.sort();
    for n in names.into_iter().rev() {
        let f = crate::fs::data_file::open_named(&dir.join(&n)).map_err(ImportError::file)?;
        let bytes = f.read_to_end().map_err(ImportError::file)?;
        let Ok(v) = serde_json::from_slice::<Value>(&bytes) else {
            continue;
        };
        if v.get("completedAt").is_some() || v.get("clawstateImport").is_none() {
            continue;
        }
        let run_id = n.trim_end_matches(".json").to_string();
        let started_ms = run_id
            .split('-')
            .nth(2)
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        return Ok(Some(Pending {
            run_id,
            started_ms,
            manifest: v,
        }));
    }
    Ok(None)
}

/// The pending manifest's target of one agent.
fn pending_target<'a>(p: &'a Pending, agent: &str) -> Option<&'a Value> {
    p.manifest
        .get("targets")?
        .as_array()?
        .iter()
        .find(|t| t.get("agentId").and_then(Value::as_str) == Some(agent))
}

fn with_marker(mut v: Value) -> Value {
    if let Some(o) = v.as_object_mut() {
        // Marks a manifest this tool wrote, so only its own unfinished runs are resumed.
        o.insert("clawstateImport".into(), json!(true));
    }
    v
}

/// Imports the agents' legacy files (see the module doc).
pub fn run(opts: &ImportOptions) -> Result<ImportReport, ImportError> {
    let state_dir = &opts.state_dir;
    let _lock = if opts.dry_run {
        None
    } else {
        Some(run_lock(state_dir)?)
    };
    let pending = if opts.dry_run {
        None
    } else {
        pending_run(state_dir)?
    };
    let (run_id, started_ms) = match &pending {
        Some(p) => (p.run_id.clone(), p.started_ms),
        None => (
            format!(
                "session-sqlite-{}-{}",
                opts.now_ms,
                &uuid::Uuid::new_v4().simple().to_string()[..8]
            ),
            opts.now_ms,
        ),
    };
    let mut works = Vec::new();
    let mut outcomes = Vec::new();
    for agent in &opts.agents {
        let db = sqlite_path(state_dir, agent);
        let mut work = plan_agent(state_dir, agent, opts.now_ms)?;
        let planned = pending.as_ref().and_then(|p| pending_target(p, agent));
        // A resumed run keeps the archive names it planned.
        if let Some(t) = planned {
            let names = archive::planned_pairs(t);
            for m in &mut work.plan.moves {
                if let Some((_, dst)) = names.iter().find(|(src, _)| *src == m.file.name) {
                    m.archive_name = dst.clone();
                }
            }
        }
        let existing = existing_db(&db)?;
        let status = match (&existing, work.legacy.store.is_some(), planned.is_some()) {
            (Some(schema::Existing::Unknown(why)), _, _) => {
                return Err(ImportError::ExistingDb {
                    path: db,
                    what: format!(
                        "an agent database this import does not know ({why}); refusing to touch it"
                    ),
                    unknown: true,
                })
            }
            (Some(schema::Existing::Known), _, true) => "resumed",
            (Some(schema::Existing::Known), false, false) => "already-imported",
            (Some(schema::Existing::Known), true, false) if opts.dry_run => "would-merge",
            (Some(schema::Existing::Known), true, false) => "merged",
            (None, false, _) => "nothing-to-import",
            (None, true, _) => {
                if opts.dry_run {
                    "would-import"
                } else {
                    "imported"
                }
            }
        };
        // Into an existing database: only the sessions it lacks (see `merge`).
        let merging = matches!(status, "merged" | "would-merge")
            || (status == "resumed" && work.legacy.store.is_some());
        let duplicates = if merging {
            merge_plan(&db, &mut work, status != "resumed")?
        } else {
            Vec::new()
        };
        // The manifest target: the pending one for a resumed agent (its files may be
        // moved already), else the fresh plan.
        let target = match (status, planned) {
            ("resumed", Some(t)) => t.clone(),
            _ => archive::target_json(&work.plan),
        };
        let fresh = matches!(status, "imported" | "would-import") || merging;
        outcomes.push(AgentOutcome {
            agent_id: agent.clone(),
            status: status.to_string(),
            sqlite_path: db,
            imported_entries: if fresh { work.sessions.len() } else { 0 },
            imported_transcript_events: if fresh {
                work.sessions.iter().map(|s| s.line_count).sum()
            } else {
                0
            },
            archived_files: archive::planned_pairs(&target)
                .into_iter()
                .map(|(_, dst)| work.plan.archive_dir.join(dst))
                .collect(),
            issues: target
                .get("issues")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default(),
            duplicates,
            state_registry: None,
        });
        works.push((work, status, target));
    }
    let targets: Vec<Value> = works
        .iter()
        .filter(|(_, s, _)| matches!(*s, "imported" | "resumed" | "merged"))
        .map(|(_, _, t)| t.clone())
        .collect();
    if opts.dry_run || targets.is_empty() {
        return Ok(ImportReport {
            run_id: None,
            manifest_path: None,
            dry_run: opts.dry_run,
            agents: outcomes,
        });
    }
    // (1) The plan, before anything moves.
    let manifest_path = archive::write_manifest(
        state_dir,
        &run_id,
        &with_marker(archive::manifest(
            &run_id,
            started_ms,
            targets.clone(),
            None,
        )),
    )?;
    for (work, status, target) in &works {
        if *status == "imported" {
            // (2) The database, whole, renamed in.
            build_db(work, opts.now_ms)?;
        }
        if *status == "merged" || (*status == "resumed" && work.legacy.store.is_some()) {
            merge_db(work, opts.now_ms)?;
        }
        if matches!(*status, "imported" | "resumed" | "merged") {
            // (3) The legacy files, into the archive.
            archive::perform_moves(
                &work.plan.sessions_dir,
                &work.plan.archive_dir,
                &archive::planned_pairs(target),
            )?;
        }
    }
    // The state database's registry, as 9.6 registers a database it creates or opens.
    for ((work, status, _), out) in works.iter().zip(outcomes.iter_mut()) {
        if matches!(*status, "imported" | "merged") {
            let r = crate::migrate::state_registry::register(
                state_dir,
                &work.plan.agent_id,
                &work.plan.sqlite_path,
                opts.now_ms,
            );
            out.state_registry =
                Some(
                    r.unwrap_or_else(|e| crate::migrate::state_registry::Registration::Skipped {
                        reason: e.to_string(),
                    }),
                );
        }
    }
    // (4) The run, completed.
    let done = targets.iter().map(archive::completed_target).collect();
    archive::write_manifest(
        state_dir,
        &run_id,
        &archive::manifest(
            &run_id,
            started_ms,
            done,
            Some(crate::js::clock::system_now_ms()),
        ),
    )?;
    Ok(ImportReport {
        run_id: Some(run_id),
        manifest_path: Some(manifest_path),
        dry_run: false,
        agents: outcomes,
    })
}
