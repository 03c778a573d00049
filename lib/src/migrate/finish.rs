//! `finish`: the stuck-migration cases 2026.9 users report, found and (with `apply`)
//! fixed without losing a byte.
//!
//! - A legacy JSONL left beside a DB-backed session (9.6's `active_sqlite_transcript_jsonl`,
//!   which halts its doctor and crash-loops the gateway). Its events are matched against
//!   the database's transcript by content (each line's JSON value; the header by session
//!   id, as 9.6 rewrites it). When it holds nothing the database lacks, the file is moved
//!   into the import archive under the name 9.6 gives imported transcripts
//!   (`<key>.<base>.imported-<ms>`), with the proof (events matched, SHA-256 of the file and
//!   of the matched events) in the report. When it holds a tail the database lacks, that
//!   tail is what needs importing ([`LeftoverVerdict::MissingTail`]); when it diverges, it
//!   is kept and reported.
//! - A half-written run manifest in `<stateDir>/session-sqlite-migration-runs/`: a file
//!   that is not JSON (moved aside as `<name>.torn-<ms>`, which 9.6 no longer lists), or a
//!   run that never recorded `completedAt`: each planned move is checked on disk, those
//!   done are recorded as completed, and the run is closed (`completedAt` and `failedAt`),
//!   so `doctor --session-sqlite restore` can undo it.
//! - An import archive file whose session has no rows in the database (history a stalled
//!   doctor run archived, or archived as an orphan, `archive-tier.…`): imported again,
//!   its rows exactly those `import` writes (`migrate::import::merge`, one transaction),
//!   under the key the archived legacy store gives its sessionId, or as 9.6 recovers an
//!   orphan (`agent:<id>:recovered:<sid>`). The file stays in the archive; the proof
//!   (events imported, SHA-256 of the file and of the database's events) is reported.
//!
//! Nothing is deleted: files are renamed (same filesystem, never over an existing name),
//! manifests replaced atomically. Without `apply` nothing is written at all.

pub mod run_manifest;
pub mod tail;

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::agent_db::{self, events};
use crate::fs::data_file::DataPath;
use crate::install::targets::StoreTarget;
use crate::migrate::plan::legacy_jsonl::{self, LegacyEvent};
use crate::migrate::plan::{self, DbSnapshot, IMPORT_ARCHIVE_DIR};

mod error;
pub use error::{FinishError, RUNS_DIR};

/// What the events of a leftover JSONL are, against the database.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LeftoverVerdict {
    /// Every event is in the database: nothing new.
    NothingNew,
    /// The first `matched` events are the database's; the rest is a tail it lacks.
    MissingTail {
        /// Events matched.
        matched: usize,
    },
    /// Event `at` differs from the database's and is not in it.
    Diverges {
        /// The index of the first event that is neither.
        at: usize,
    },
}

/// The proof that goes with a leftover's verdict.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Proof {
    /// Events 9.6's reader finds in the legacy file.
    pub legacy_events: usize,
    /// Lines after a malformed one (not events; kept in the archived file).
    pub legacy_dropped_lines: usize,
    /// Events of the database's transcript.
    pub db_events: usize,
    /// Legacy events found in the database.
    pub matched_events: usize,
    /// SHA-256 of the legacy file's bytes.
    pub file_sha256: String,
    /// SHA-256 over the matched database events (decoded lines, each with `\n`).
    pub matched_sha256: String,
}

/// One thing `finish` found, and what it did or would do.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FinishItem {
    /// The agent (`None` for state-wide manifests).
    pub agent_id: Option<String>,
    /// `leftover-jsonl`, `manifest-torn`, `manifest-incomplete`, `archive-without-rows`.
    pub case: &'static str,
    /// The file.
    pub path: PathBuf,
    /// The session key, when it is about one.
    pub session_key: Option<String>,
    /// The sessionId, when it is about one.
    pub session_id: Option<String>,
    /// What is (`archive`, `import-tail`, `reimport`, `keep`, `move-aside`, `close-run`).
    pub action: &'static str,
    /// What it does, in words.
    pub what: String,
    /// Where the file goes, when it moves.
    pub moved_to: Option<PathBuf>,
    /// The events to import (`import-tail`, `reimport`; once done, those imported).
    pub tail_events: usize,
    /// The proof of a leftover's verdict.
    pub proof: Option<Proof>,
    /// Whether it was done (only with `apply`).
    pub done: bool,
    /// The run manifest that records the move (so `doctor --session-sqlite restore`
    /// can undo it).
    pub run_manifest: Option<PathBuf>,
}

/// How `finish` runs.
#[derive(Debug, Clone)]
pub struct FinishOptions {
    /// Act; otherwise only report.
    pub apply: bool,
    /// The clock (archive names, manifest times).
    pub now_ms: i64,
}

/// Compares a legacy event with a database event as 9.6 imported it: the header by its
/// session id (9.6 rewrites it), every other event by its JSON value.
fn same_event(legacy: &LegacyEvent, db: &Value) -> bool {
    let ty = |v: &Value| v.get("type").and_then(Value::as_str).map(str::to_string);
    if ty(&legacy.value).as_deref() == Some("session") && ty(db).as_deref() == Some("session") {
        let id = |v: &Value| {
            v.get("id")
                .or_else(|| v.get("sessionId"))
                .and_then(Value::as_str)
                .map(str::to_string)
        };
        return id(&legacy.value) == id(db);
    }
    &legacy.value == db
}

/// Matches the events of a legacy file against the database's transcript.
pub fn match_leftover(legacy: &[LegacyEvent], db: &[Value]) -> LeftoverVerdict {
    let prefix = legacy
        .iter()
        .zip(db.iter())
        .take_while(|(l, d)| same_event(l, d))
        .count();
    if prefix == legacy.len() {
        return LeftoverVerdict::NothingNew;
    }
    if prefix == db.len() {
        return LeftoverVerdict::MissingTail { matched: prefix };
    }
    // Not a prefix: every event still found somewhere in the database is nothing new.
    let canon: std::collections::HashSet<String> = db
        .iter()
        .filter(|v| v.get("type").and_then(Value::as_str) != Some("session"))
        .map(canonical)
        .collect();
    match legacy
        .iter()
        .enumerate()
        .skip(prefix)
        .find(|(_, l)| !canon.contains(&canonical(&l.value)))
    {
        None => LeftoverVerdict::NothingNew,
        Some((at, _)) => LeftoverVerdict::Diverges { at },
    }
}

/// A JSON value as text with its object keys sorted (content equality).
fn canonical(v: &Value) -> String {
    fn sort(v: &Value) -> Value {
        match v {
            Value::Object(m) => {
                let mut keys: Vec<&String> = m.keys().collect();
                keys.sort();
                let mut out = serde_json::Map::new();
                for k in keys {
                    out.insert(k.clone(), sort(&m[k]));
                }
                Value::Object(out)
            }
            Value::Array(a) => Value::Array(a.iter().map(sort).collect()),
            other => other.clone(),
        }
    }
    sort(v).to_string()
}

fn sha256_hex(bytes: &[u8]) -> String {
    format!("{:x}", Sha256::digest(bytes))
}

/// Moves `from` into directory `to_dir` as `name`, never over an existing file, and
/// syncs both directories. The source must be a regular file (a link is refused).
pub fn move_into(from: &Path, to_dir: &Path, name: &str) -> Result<PathBuf, FinishError> {
    let werr = |path: &Path, what, source| FinishError::Write {
        path: path.to_path_buf(),
        what,
        source,
    };
    let (Some(src_dir), Some(src_name)) = (from.parent(), from.file_name()) else {
        return Err(werr(
            from,
            "move",
            std::io::Error::from(std::io::ErrorKind::InvalidInput),
        ));
    };
    if !from.symlink_metadata().is_ok_and(|m| m.is_file()) {
        return Err(werr(
            from,
            "move (not a regular file)",
            std::io::Error::from(std::io::ErrorKind::InvalidInput),
        ));
    }
    std::fs::create_dir_all(to_dir).map_err(|e| werr(to_dir, "create the archive directory", e))?;
    let sd = crate::fs::atomic_file::open_dir(src_dir).map_err(|e| werr(src_dir, "open", e))?;
    let td = crate::fs::atomic_file::open_dir(to_dir).map_err(|e| werr(to_dir, "open", e))?;
    rustix::fs::renameat_with(
        &sd,
        src_name,
        &td,
        OsStr::new(name),
        rustix::fs::RenameFlags::NOREPLACE,
    )
    .map_err(|e| werr(from, "move into the archive", e.into()))?;
    td.sync_all().map_err(|e| werr(to_dir, "sync", e))?;
    sd.sync_all().map_err(|e| werr(src_dir, "sync", e))?;
    Ok(to_dir.join(name))
}

/// A free name in `dir` for `base` (`base`, then `base.1`, … as 9.6 suffixes).
fn free_name(dir: &Path, base: &str) -> String {
    (0..100)
        .map(|i| {
            if i == 0 {
                base.to_string()
            } else {
                format!("{base}.{i}")
            }
        })
        .find(|n| !dir.join(n).exists())
        .unwrap_or_else(|| format!("{base}.{}", std::process::id()))
}

/// The leftover JSONL files of one agent, and what to do with each.
pub fn leftovers(
    target: &StoreTarget,
    opts: &FinishOptions,
) -> Result<Vec<(FinishItem, Vec<LegacyEvent>)>, FinishError> {
    let Some(db) = plan::open_db(&target.store_path)? else {
        return Ok(Vec::new());
    };
    let snap = DbSnapshot::read(&db)?;
    let sessions_dir = target.store_path.parent().unwrap_or(Path::new("."));
    let agent_dir = sessions_dir.parent().unwrap_or(sessions_dir);
    let archive_dir = agent_dir.join(IMPORT_ARCHIVE_DIR);
    let mut out = Vec::new();
    for (key, sid, dp) in agent_db::check::legacy_jsonl_beside(&snap.sessions(), sessions_dir) {
        let bytes = dp.read_small(plan::MAX_TRANSCRIPT_BYTES, "a legacy transcript")?;
        let path = dp.path().to_path_buf();
        let read = legacy_jsonl::read(&bytes);
        let db_lines = events::lines(&db, &sid)?;
        let db_values: Vec<Value> = db_lines
            .iter()
            .map(|l| crate::js::jsjson::parse_value(l).unwrap_or(Value::Null))
            .collect();
        let verdict = match_leftover(&read.events, &db_values);
        let matched = match verdict {
            LeftoverVerdict::NothingNew => read.events.len(),
            LeftoverVerdict::MissingTail { matched } => matched,
            LeftoverVerdict::Diverges { at } => at,
        };
        let mut h = Sha256::new();
        for l in db_lines.iter().take(matched.min(db_lines.len())) {
            h.update(l.as_bytes());
            h.update(b"\n");
        }
        let proof = Proof {
            legacy_events: read.events.len(),
            legacy_dropped_lines: read.dropped_lines,
            db_events: db_lines.len(),
            matched_events: matched,
            file_sha256: sha256_hex(&bytes),
            matched_sha256: format!("{:x}", h.finalize()),
        };
        let base = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let name = free_name(
            &archive_dir,
            &legacy_jsonl::archive_name(&key, &base, opts.now_ms),
        );
        let (action, what, tail) = match verdict {
            LeftoverVerdict::NothingNew => (
                "archive",
                format!(
                    "all {} event(s) are in the database ({} there); move it into the import archive as {name}",
                    read.events.len(),
                    db_lines.len()
                ),
                Vec::new(),
            ),
            LeftoverVerdict::MissingTail { matched } => (
                "import-tail",
                format!(
                    "its first {matched} event(s) are the database's; import the {} event(s) after them into the database, then archive it as {name}",
                    read.events.len() - matched
                ),
                read.events[matched..].to_vec(),
            ),
            LeftoverVerdict::Diverges { at } => (
                "keep",
                format!(
                    "event {} (line {}) is neither the database's event {at} nor anywhere in it: the file and the database diverge; kept, inspect it (`claw-transcript cat {}`)",
                    at,
                    read.events[at].line,
                    path.display()
                ),
                Vec::new(),
            ),
        };
        out.push((
            FinishItem {
                agent_id: Some(target.agent_id.clone()),
                case: "leftover-jsonl",
                path: path.clone(),
                session_key: Some(key),
                session_id: Some(sid),
                action,
                what,
                moved_to: (action != "keep").then(|| archive_dir.join(&name)),
                tail_events: tail.len(),
                proof: Some(proof),
                done: false,
                run_manifest: None,
            },
            tail,
        ));
    }
    Ok(out)
}

/// Import archive files whose session has no rows in the database.
pub fn archives_without_rows(target: &StoreTarget) -> Result<Vec<FinishItem>, FinishError> {
    let Some(db) = plan::open_db(&target.store_path)? else {
        return Ok(Vec::new());
    };
    let snap = DbSnapshot::read(&db)?;
    let sessions_dir = target.store_path.parent().unwrap_or(Path::new("."));
    let agent_dir = sessions_dir.parent().unwrap_or(sessions_dir);
    let mut names = archive_files(agent_dir, |n| {
        n.contains(".jsonl.imported-") && !n.contains(".trajectory.jsonl.")
    });
    names.sort();
    let mut out = Vec::new();
    for name in names {
        // Below the agent's directory: an archive directory that is a link is not followed.
        let dp = DataPath::beneath(agent_dir, &Path::new(IMPORT_ARCHIVE_DIR).join(&name))?;
        let path = dp.path().to_path_buf();
        let bytes = dp.read_small(plan::MAX_TRANSCRIPT_BYTES, "an archived transcript")?;
        let read = legacy_jsonl::read(&bytes);
        let Some(sid) = read.events.first().and_then(|e| {
            (e.value.get("type").and_then(Value::as_str) == Some("session"))
                .then(|| {
                    e.value
                        .get("id")
                        .and_then(Value::as_str)
                        .map(str::to_string)
                })
                .flatten()
        }) else {
            continue;
        };
        if snap.events_by_id.contains_key(&sid) || snap.keys_by_id.contains_key(&sid) {
            continue;
        }
        let (key, how) = match archived_entry(agent_dir, &sid)? {
            Some((key, _)) => (key, "the key the archived legacy store gives it"),
            None => (
                crate::migrate::import::recovered_session(&target.agent_id, &sid, 0).0,
                "an orphan, recovered as 9.6 recovers one",
            ),
        };
        let taken = snap.keys_by_id.values().any(|k| k == &key)
            || snap.sessions().iter().any(|(k, _)| k == &key);
        let (action, what) = if taken {
            (
                "keep",
                format!(
                    "archived transcript with {} event(s) whose session has no rows in the database, but its key {key:?} holds another session: kept; `claw-migrate export --session {key}` first, or restore it with `openclaw doctor --session-sqlite restore`",
                    read.events.len()
                ),
            )
        } else {
            (
                "reimport",
                format!(
                    "archived transcript with {} event(s) whose session has no rows in the database: import it again as {key:?} ({how}), the file staying in the archive",
                    read.events.len()
                ),
            )
        };
        out.push(FinishItem {
            agent_id: Some(target.agent_id.clone()),
            case: "archive-without-rows",
            path,
            session_key: Some(key),
            session_id: Some(sid),
            action,
            what,
            moved_to: None,
            tail_events: read.events.len(),
            proof: Some(Proof {
                legacy_events: read.events.len(),
                legacy_dropped_lines: read.dropped_lines,
                db_events: 0,
                matched_events: 0,
                file_sha256: sha256_hex(&bytes),
                matched_sha256: sha256_hex(b""),
            }),
            done: false,
            run_manifest: None,
        });
    }
    Ok(out)
}

/// The names of the regular files in the agent's import archive that `keep` accepts
/// (none when there is no archive); each is then read beneath the agent dir.
fn archive_files(agent_dir: &Path, keep: impl Fn(&str) -> bool) -> Vec<String> {
    std::fs::read_dir(agent_dir.join(IMPORT_ARCHIVE_DIR))
        .into_iter()
        .flatten()
        .flatten()
        .filter(|d| d.file_type().is_ok_and(|t| t.is_file()))
        .map(|d| d.file_name().to_string_lossy().into_owned())
        .filter(|n| keep(n))
        .collect()
}

/// The entry the archived legacy stores of an agent (`legacy-store.sessions.json.imported-*`
/// in its import archive, newest first) give `sid`: its key and the entry as stored there.
fn archived_entry(
    agent_dir: &Path,
    sid: &str,
) -> Result<Option<(String, serde_json::Map<String, Value>)>, FinishError> {
    let mut names = archive_files(agent_dir, |n| {
        n.starts_with("legacy-store.sessions.json.imported-")
    });
    // Newest first: the stamp is the archive time in ms.
    names.sort_by_key(|n| {
        std::cmp::Reverse(
            n.rsplit('-')
                .next()
                .and_then(|t| t.split('.').next()?.parse::<i64>().ok())
                .unwrap_or(0),
        )
    });
    for name in names {
        let dp = DataPath::beneath(agent_dir, &Path::new(IMPORT_ARCHIVE_DIR).join(&name))?;
        let bytes = dp.read_small(1 << 30, "an archived legacy store")?;
        let Some(Value::Object(store)) = std::str::from_utf8(&bytes)
            .ok()
            .and_then(|t| crate::js::jsjson::parse_value(t).ok())
        else {
            continue;
        };
        for (key, e) in store {
            if let Value::Object(e) = e {
                if e.get("sessionId").and_then(Value::as_str) == Some(sid) {
                    return Ok(Some((key, e)));
                }
            }
        }
    }
    Ok(None)
}

/// Imports an archived transcript whose session has no rows (the `reimport` action) into
/// the database, as `import` writes a session (one transaction), then checks that every
/// event of the file is in the database and records the proof. The file stays put.
pub fn reimport_archive(
    item: &mut FinishItem,
    target: &StoreTarget,
    opts: &FinishOptions,
) -> Result<(), FinishError> {
    use crate::migrate::import::{self, legacy, merge};
    let (Some(sid), Some(name)) = (
        item.session_id.clone(),
        item.path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned()),
    ) else {
        return Ok(());
    };
    let sessions_dir = target.store_path.parent().unwrap_or(Path::new("."));
    let agent_dir = sessions_dir.parent().unwrap_or(sessions_dir);
    let rel = format!("{IMPORT_ARCHIVE_DIR}/{name}");
    let Some((bytes, file)) = legacy::read_file(agent_dir, &rel)? else {
        item.what.push_str("; the file is gone: nothing imported");
        return Ok(());
    };
    let mtime = file.mtime_ms();
    let (key, entry) = match archived_entry(agent_dir, &sid)? {
        Some((key, e)) => match crate::migrate::rows::rewrite_entry(&key, &e) {
            Ok(rewritten) => (key, rewritten),
            Err(why) => {
                item.action = "keep";
                item.what.push_str(&format!("; its archived entry cannot be reproduced exactly ({why}): kept, use `openclaw doctor --session-sqlite restore`"));
                return Ok(());
            }
        },
        None => import::recovered_session(&target.agent_id, &sid, mtime),
    };
    let (lines, _) = legacy::transcript_lines(&bytes);
    let db_path = agent_db::layout::db_path_for_store(&target.store_path);
    let added = merge::add_sessions(
        &db_path,
        [Ok(merge::NewSession {
            key: key.clone(),
            entry,
            session_id: sid.clone(),
            lines,
            transcript_mtime_ms: mtime,
        })],
        opts.now_ms,
    )?;
    if let Some(d) = added.duplicates.first() {
        item.action = "keep";
        item.what.push_str(&format!(
            "; the database has {:?} now ({}): kept, nothing imported",
            d.session_key, d.reason
        ));
        return Ok(());
    }
    let written = added.sessions.first().map_or(0, |s| s.2);
    // The proof after: the whole file against the database as it is now.
    let read = legacy_jsonl::read(&bytes);
    let stored = merge::stored_lines(&db_path, &sid)?;
    let values: Vec<Value> = stored
        .iter()
        .map(|l| crate::js::jsjson::parse_value(l).unwrap_or(Value::Null))
        .collect();
    let mut h = Sha256::new();
    for l in &stored {
        h.update(l.as_bytes());
        h.update(b"\n");
    }
    let held = match_leftover(&read.events, &values) == LeftoverVerdict::NothingNew;
    item.session_key = Some(key);
    item.tail_events = written;
    item.proof = Some(Proof {
        legacy_events: read.events.len(),
        legacy_dropped_lines: read.dropped_lines,
        db_events: stored.len(),
        matched_events: if held { read.events.len() } else { 0 },
        file_sha256: sha256_hex(&bytes),
        matched_sha256: format!("{:x}", h.finalize()),
    });
    item.what
        .push_str(&format!("; {written} event(s) imported"));
    if !held {
        item.what
            .push_str(", but the database's transcript does not match the file: inspect it");
        return Ok(());
    }
    item.done = true;
    Ok(())
}

/// What one planned move of a manifest is on disk.
fn move_state(m: &Value) -> &'static str {
    let p = |k: &str| m.get(k).and_then(Value::as_str).map(PathBuf::from);
    let (Some(src), Some(arc)) = (p("sourcePath"), p("archivePath")) else {
        return "invalid";
    };
    match (src.exists(), arc.exists()) {
        (false, true) => "done",
        (true, false) => "not-done",
        (true, true) => "both",
        (false, false) => "lost",
    }
}

/// Half-written run manifests of the state dir, and (with `apply`) their repair.
pub fn manifests(state_dir: &Path, opts: &FinishOptions) -> Result<Vec<FinishItem>, FinishError> {
    let dir = state_dir.join(RUNS_DIR);
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|d| d.file_type().is_ok_and(|t| t.is_file()))
        .map(|d| d.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".json") && !n.ends_with(".failure.json"))
        .collect();
    names.sort();
    let mut out = Vec::new();
    for name in names {
        // Below the state dir: a runs directory that is a link is not followed.
        let dp = DataPath::beneath(state_dir, &Path::new(RUNS_DIR).join(&name))?;
        let path = dp.path().to_path_buf();
        let bytes = dp.read_small(64 << 20, "a migration run manifest")?;
        let parsed = std::str::from_utf8(&bytes)
            .ok()
            .and_then(|t| crate::js::jsjson::parse_value(t).ok())
            .filter(Value::is_object);
        let Some(mut manifest) = parsed else {
            let aside = format!("{name}.torn-{}", opts.now_ms);
            let mut item = FinishItem {
                agent_id: None,
                case: "manifest-torn",
                path: path.clone(),
                session_key: None,
                session_id: None,
                action: "move-aside",
                what: format!(
                    "not a JSON object ({} bytes, a write cut short); 9.6 ignores it, so nothing can restore that run: move it aside as {aside} (kept byte for byte)",
                    bytes.len()
                ),
                moved_to: Some(dir.join(&aside)),
                tail_events: 0,
                proof: None,
                done: false,
                run_manifest: None,
            };
            if opts.apply {
                move_into(&path, &dir, &aside)?;
                item.done = true;
            }
            out.push(item);
            continue;
        };
        if manifest.get("completedAt").is_some() {
            continue;
        }
        let mut done_moves = 0usize;
        let mut open = Vec::new();
        if let Some(targets) = manifest.get_mut("targets").and_then(Value::as_array_mut) {
            for t in targets.iter_mut() {
                let planned: Vec<Value> = t
                    .get("plannedMoves")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default();
                let key = |m: &Value| (m.get("sourcePath").cloned(), m.get("archivePath").cloned());
                let completed: Vec<Value> = t
                    .get("completedMoves")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default();
                let mut add = Vec::new();
                for m in &planned {
                    if completed.iter().any(|c| key(c) == key(m)) {
                        continue;
                    }
                    match move_state(m) {
                        "done" => add.push(m.clone()),
                        s => open.push(format!(
                            "{} ({s})",
                            m.get("sourcePath").and_then(Value::as_str).unwrap_or("?")
                        )),
                    }
                }
                done_moves += add.len();
                if let Some(c) = t.get_mut("completedMoves").and_then(Value::as_array_mut) {
                    c.extend(add);
                }
            }
        }
        let now = crate::js::to_iso_string(opts.now_ms);
        let mut item = FinishItem {
            agent_id: None,
            case: "manifest-incomplete",
            path: path.clone(),
            session_key: None,
            session_id: None,
            action: "close-run",
            what: format!(
                "run {} never completed: record {done_moves} move(s) found done on disk as completed{}, and close it (completedAt/failedAt {now}) so `openclaw doctor --session-sqlite restore` can undo it",
                manifest.get("runId").and_then(Value::as_str).unwrap_or("?"),
                if open.is_empty() {
                    String::new()
                } else {
                    format!("; {} planned move(s) not done, left planned: {}", open.len(), open.join(", "))
                }
            ),
            moved_to: None,
            tail_events: 0,
            proof: None,
            done: false,
            run_manifest: None,
        };
        if opts.apply {
            if let Some(o) = manifest.as_object_mut() {
                o.insert("completedAt".into(), Value::String(now.clone()));
                o.insert("failedAt".into(), Value::String(now));
            }
            let mut text = crate::js::jsjson::to_string_pretty(&manifest);
            text.push('\n');
            crate::fs::atomic_file::replace_file(&path, text.as_bytes(), 0o600).map_err(|e| {
                FinishError::Write {
                    path: path.clone(),
                    what: "replace the manifest",
                    source: std::io::Error::other(e.to_string()),
                }
            })?;
            item.done = true;
        }
        out.push(item);
    }
    Ok(out)
}

/// Archives a leftover whose events are all in the database (the `archive` action).
pub fn archive_leftover(item: &mut FinishItem) -> Result<(), FinishError> {
    let Some(to) = item.moved_to.clone() else {
        return Ok(());
    };
    let dir = to.parent().unwrap_or(Path::new("."));
    let name = to
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    move_into(&item.path, dir, &name)?;
    item.done = true;
    Ok(())
}

/// A leftover JSONL of `target` as a file below its sessions directory.
fn leftover_path(target: &StoreTarget, path: &Path) -> Result<DataPath, FinishError> {
    let sessions_dir = target.store_path.parent().unwrap_or(Path::new("."));
    let name = path.file_name().map(Path::new).unwrap_or(Path::new(""));
    Ok(DataPath::beneath(sessions_dir, name)?)
}

/// Imports the missing tail of a leftover into its DB transcript (one transaction), checks
/// that every event of the file is now in the database, and archives the file.
pub fn import_tail(
    item: &mut FinishItem,
    tail: &[LegacyEvent],
    target: &StoreTarget,
    opts: &FinishOptions,
) -> Result<(), FinishError> {
    let (Some(sid), Some(proof)) = (item.session_id.clone(), item.proof.clone()) else {
        return Ok(());
    };
    let db_path = agent_db::layout::db_path_for_store(&target.store_path);
    let written = tail::append_tail(&db_path, &sid, proof.db_events, tail, opts.now_ms)?;
    // The proof after: the whole file against the database as it is now.
    let db = agent_db::AgentDb::open(&db_path)?;
    let bytes = leftover_path(target, &item.path)?
        .read_small(plan::MAX_TRANSCRIPT_BYTES, "a legacy transcript")?;
    let read = legacy_jsonl::read(&bytes);
    let lines = events::lines(&db, &sid)?;
    let values: Vec<Value> = lines
        .iter()
        .map(|l| crate::js::jsjson::parse_value(l).unwrap_or(Value::Null))
        .collect();
    drop(db);
    if match_leftover(&read.events, &values) != LeftoverVerdict::NothingNew {
        item.what.push_str(&format!(
            "; {written} event(s) imported, but the file still does not match the database: kept"
        ));
        return Ok(());
    }
    let mut h = Sha256::new();
    for l in lines.iter().take(read.events.len()) {
        h.update(l.as_bytes());
        h.update(b"\n");
    }
    item.proof = Some(Proof {
        db_events: lines.len(),
        matched_events: read.events.len(),
        matched_sha256: format!("{:x}", h.finalize()),
        ..proof
    });
    item.what
        .push_str(&format!("; {written} event(s) imported"));
    archive_leftover(item)
}

/// A leftover found by [`leftovers`], with its agent and the tail it lacks.
pub type Leftover = (StoreTarget, FinishItem, Vec<LegacyEvent>);

/// Does what the leftovers need (`apply`): one run manifest in 9.6's format plans every
/// move first, then each tail is imported and each file archived, each move recorded as
/// completed, and the run closed. Returns the items, done or not.
pub fn apply_leftovers(
    state_dir: &Path,
    work: Vec<Leftover>,
    opts: &FinishOptions,
) -> Result<Vec<FinishItem>, FinishError> {
    let planned = |t: &StoreTarget, i: &FinishItem| {
        Some(run_manifest::PlannedMove {
            agent_id: t.agent_id.clone(),
            store_path: t.store_path.clone(),
            sqlite_path: agent_db::layout::db_path_for_store(&t.store_path),
            source: i.path.clone(),
            archive: i.moved_to.clone()?,
            session_key: i.session_key.clone()?,
        })
    };
    let moves: Vec<run_manifest::PlannedMove> = work
        .iter()
        .filter(|(_, i, _)| matches!(i.action, "archive" | "import-tail"))
        .filter_map(|(t, i, _)| planned(t, i))
        .collect();
    let mut out = Vec::new();
    if moves.is_empty() {
        return Ok(work.into_iter().map(|(_, i, _)| i).collect());
    }
    let mut run = run_manifest::Run::begin(state_dir, &moves, opts.now_ms)?;
    let mut failure = None;
    for (t, mut item, tail) in work {
        if failure.is_none() {
            let r = match item.action {
                "archive" => archive_leftover(&mut item),
                "import-tail" => import_tail(&mut item, &tail, &t, opts),
                _ => Ok(()),
            };
            match r {
                Ok(()) if item.done => {
                    if let Some(m) = planned(&t, &item) {
                        run.completed(&m)?;
                    }
                    item.run_manifest = Some(run.path().to_path_buf());
                }
                Ok(()) => {}
                Err(e) => failure = Some(e),
            }
        }
        out.push(item);
    }
    let failed = failure.is_some()
        || out
            .iter()
            .any(|i| !i.done && matches!(i.action, "archive" | "import-tail"));
    run.close(opts.now_ms, failed)?;
    match failure {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(s: &str) -> LegacyEvent {
        LegacyEvent {
            line: 1,
            text: s.into(),
            value: serde_json::from_str(s).unwrap(),
        }
    }

    #[test]
    fn verdicts() {
        let db: Vec<Value> = [
            r#"{"type":"session","id":"s","cwd":""}"#,
            r#"{"type":"message","id":"a","b":1}"#,
            r#"{"type":"message","id":"b"}"#,
        ]
        .iter()
        .map(|s| serde_json::from_str(s).unwrap())
        .collect();
        let h = ev(r#"{"type":"session","sessionId":"s","version":3}"#);
        let a = ev(r#"{"b":1,"id":"a","type":"message"}"#);
        let b = ev(r#"{"type":"message","id":"b"}"#);
        let c = ev(r#"{"type":"message","id":"c"}"#);
        assert_eq!(
            match_leftover(&[h.clone(), a.clone()], &db),
            LeftoverVerdict::NothingNew
        );
        assert_eq!(
            match_leftover(&[h.clone(), a.clone(), b.clone(), c.clone()], &db),
            LeftoverVerdict::MissingTail { matched: 3 }
        );
        assert_eq!(
            match_leftover(&[h.clone(), b.clone(), a.clone()], &db),
            LeftoverVerdict::NothingNew
        );
        assert_eq!(
            match_leftover(&[h, c, a], &db),
            LeftoverVerdict::Diverges { at: 1 }
        );
    }
}
