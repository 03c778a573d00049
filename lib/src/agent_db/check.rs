//! `check` for the agent database: what is wrong with it, one finding per line, each
//! naming the command that fixes it (the faults 2026.9 users report, `agent-db.md`).
//!
//! Read-only, as everything here: `PRAGMA quick_check` (or, opted in, the slow
//! `integrity_check`), `foreign_key_check`, every session's window and header event, seq
//! contiguous from 0, compressed rows that decode to their recorded size, entries the
//! gateway marked invalid and its validation backlog, orphan windows, events and
//! identities, the FTS index against its rows, a legacy JSONL still beside a DB-backed
//! session (the gateway's `active_sqlite_transcript_jsonl`, which halts its migration),
//! a WAL grown past the database, and leases or pid locks of dead processes.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use rusqlite::params;
use serde_json::Value;

use super::events::{decode_event, for_each_stored, StoredEvent};
use super::{AgentDb, AgentDbError};
use crate::fs::data_file::DataPath;
use crate::report::finding::{Finding, Severity};

/// What to check.
#[derive(Debug, Clone, Default)]
pub struct DbCheckOptions {
    /// Run `PRAGMA integrity_check` instead of `quick_check` (reads every page and index).
    pub integrity: bool,
    /// Only this session (sessionId); every session when `None`.
    pub session_id: Option<String>,
}

/// A WAL at least this large is reported when it is also larger than the database.
pub const WAL_REPORT_MIN: u64 = 64 << 20;

fn finding(path: &Path, severity: Severity, code: &'static str, message: String) -> Finding {
    Finding::about_file(path, severity, code, message)
}

const VALIDATE: &str = "`openclaw doctor --session-sqlite validate`";

/// Checks the agent database of `store_path` (`db_path`): every finding, worst first is
/// not promised; the caller sorts or counts them. `Err` only when the database cannot be
/// opened at all (that is itself reported as a finding by [`check_or_report`]).
pub fn check_db(
    db_path: &Path,
    store_path: &Path,
    opts: &DbCheckOptions,
) -> Result<(Vec<Finding>, usize), AgentDbError> {
    let db = AgentDb::open(db_path)?;
    let p = db_path;
    let mut out = Vec::new();
    if let Some(w) = db.schema.warning(p) {
        out.push(finding(p, Severity::Warning, "agent-db-schema-newer", w));
    }
    let sql = |e| db.err(e);

    // Pages and indexes.
    let pragma = if opts.integrity {
        "PRAGMA integrity_check"
    } else {
        "PRAGMA quick_check"
    };
    let mut st = db.conn.prepare(pragma).map_err(sql)?;
    let rows: Vec<String> = st
        .query_map([], |r| r.get::<_, String>(0))
        .map_err(sql)?
        .collect::<Result<_, _>>()
        .map_err(sql)?;
    for r in rows.iter().filter(|r| r.as_str() != "ok").take(20) {
        out.push(finding(
            p,
            Severity::Error,
            "agent-db-corrupt",
            format!("{pragma}: {r}; copy the database aside and run `openclaw doctor --session-sqlite recover`"),
        ));
    }
    let mut st = db.conn.prepare("PRAGMA foreign_key_check").map_err(sql)?;
    let fks: Vec<(String, Option<i64>, String)> = st
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .map_err(sql)?
        .collect::<Result<_, _>>()
        .map_err(sql)?;
    let mut fk_counts: HashMap<(String, String), (usize, Option<i64>)> = HashMap::new();
    for (table, rowid, parent) in fks {
        let e = fk_counts.entry((table, parent)).or_insert((0, rowid));
        e.0 += 1;
    }
    let mut fk_sorted: Vec<_> = fk_counts.into_iter().collect();
    fk_sorted.sort();
    for ((table, parent), (n, rowid)) in fk_sorted {
        out.push(finding(
            p,
            Severity::Error,
            "agent-db-foreign-key",
            format!(
                "{n} row(s) of {table} refer to missing {parent} rows (first rowid {}); {VALIDATE} reports them, `openclaw doctor --session-sqlite recover` rebuilds",
                rowid.map_or("?".into(), |r| r.to_string())
            ),
        ));
    }

    // Sessions: window and header.
    let only = opts.session_id.as_deref();
    let mut st = db
        .conn
        .prepare(
            "SELECT n.session_key, n.current_session_id, n.entry_valid,
                    EXISTS (SELECT 1 FROM session_windows w WHERE w.session_id = n.current_session_id),
                    (SELECT event_json FROM transcript_events e WHERE e.session_id = n.current_session_id AND e.seq = 0),
                    EXISTS (SELECT 1 FROM transcript_events e WHERE e.session_id = n.current_session_id AND e.seq = 0)
             FROM session_nodes n ORDER BY n.session_key",
        )
        .map_err(sql)?;
    #[allow(clippy::type_complexity)]
    let nodes: Vec<(String, String, i64, bool, Option<String>, bool)> = st
        .query_map([], |r| {
            Ok((
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get(3)?,
                r.get(4)?,
                r.get(5)?,
            ))
        })
        .map_err(sql)?
        .collect::<Result<_, _>>()
        .map_err(sql)?;
    let mut pending = 0usize;
    let mut sessions = 0usize;
    for (key, sid, valid, has_window, header, has_header) in &nodes {
        if only.is_some_and(|o| o != sid) {
            continue;
        }
        sessions += 1;
        if !has_window {
            out.push(finding(p, Severity::Error, "session-without-window", format!(
                "session {key:?}: current_session_id {sid} has no session_windows row; {VALIDATE}, then `openclaw doctor --session-sqlite recover`"
            )));
        }
        if !has_header {
            out.push(finding(p, Severity::Error, "session-without-header", format!(
                "session {key:?}: transcript {sid} has no header event (seq 0); the gateway cannot open it: `openclaw doctor --session-sqlite recover`"
            )));
        } else if let Some(h) = header {
            let ty = serde_json::from_str::<Value>(h)
                .ok()
                .and_then(|v| v.get("type").and_then(Value::as_str).map(String::from));
            if ty.as_deref() != Some("session") {
                out.push(finding(p, Severity::Error, "session-bad-header", format!(
                    "session {key:?}: seq 0 of {sid} is not a session header (type {}); `openclaw doctor --session-sqlite recover`",
                    ty.as_deref().unwrap_or("none")
                )));
            }
        }
        match valid {
            -1 => out.push(finding(p, Severity::Warning, "entry-invalid", format!(
                "session {key:?}: the gateway marked its entry invalid (entry_valid -1); {VALIDATE} says why"
            ))),
            0 => pending += 1,
            _ => {}
        }
    }
    let backlog: i64 = db
        .conn
        .query_row(
            "SELECT count(*) FROM session_canonical_validation_pending",
            [],
            |r| r.get(0),
        )
        .unwrap_or(0);
    if pending > 0 {
        // 2026.9.6's CLI refuses such rows ("invalid persisted session row requires
        // repair"): `openclaw sessions` fails until they are validated.
        out.push(finding(p, Severity::Warning, "entry-validation-pending", format!(
            "{pending} entr(ies) not validated (entry_valid 0), {backlog} in session_canonical_validation_pending; `openclaw sessions` refuses them until validated: stop the gateway and run `openclaw doctor --fix`"
        )));
    } else if backlog > 0 {
        out.push(finding(p, Severity::Info, "entry-validation-pending", format!(
            "{backlog} session(s) in session_canonical_validation_pending; the gateway revalidates them at start, or {VALIDATE}"
        )));
    }

    // Events: seq contiguous from 0; rows decode to their recorded size.
    let gap_sql = "SELECT session_id, seq, prev FROM (
            SELECT session_id, seq, LAG(seq) OVER (PARTITION BY session_id ORDER BY seq) AS prev
            FROM transcript_events WHERE ?1 IS NULL OR session_id = ?1)
         WHERE (prev IS NULL AND seq != 0) OR (prev IS NOT NULL AND seq != prev + 1)";
    let mut st = db.conn.prepare(gap_sql).map_err(sql)?;
    let gaps: Vec<(String, i64, Option<i64>)> = st
        .query_map(params![only], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .map_err(sql)?
        .collect::<Result<_, _>>()
        .map_err(sql)?;
    let mut gap_seen = HashSet::new();
    for (sid, seq, prev) in gaps {
        if !gap_seen.insert(sid.clone()) {
            continue;
        }
        let what = match prev {
            None => format!("starts at seq {seq}, not 0"),
            Some(pv) => format!("jumps from seq {pv} to {seq}"),
        };
        out.push(finding(p, Severity::Error, "transcript-seq-gap", format!(
            "transcript {sid}: {what} (events lost); `openclaw doctor --session-sqlite recover`, or export what is left with `claw-transcript cat`"
        )));
    }
    let mut sids: Vec<String> = Vec::new();
    {
        let mut st = db
            .conn
            .prepare("SELECT DISTINCT session_id FROM transcript_events WHERE ?1 IS NULL OR session_id = ?1 ORDER BY session_id")
            .map_err(sql)?;
        let rows = st
            .query_map(params![only], |r| r.get::<_, String>(0))
            .map_err(sql)?;
        for r in rows {
            sids.push(r.map_err(sql)?);
        }
    }
    for sid in &sids {
        let mut bad = 0usize;
        let mut first = None;
        for_each_stored(&db, sid, |ev: StoredEvent| {
            let problem = match decode_event(&ev) {
                Ok(line) => {
                    if serde_json::from_str::<serde::de::IgnoredAny>(&line).is_err() {
                        Some(format!("seq {}: the event is not JSON", ev.seq))
                    } else if ev.json.is_some()
                        && ev.utf8_bytes.is_some_and(|n| n as usize != line.len())
                    {
                        Some(format!(
                            "seq {}: event_json is {} bytes, event_utf8_bytes says {}",
                            ev.seq,
                            line.len(),
                            ev.utf8_bytes.unwrap_or(0)
                        ))
                    } else {
                        None
                    }
                }
                Err(e) => Some(e),
            };
            if let Some(pr) = problem {
                bad += 1;
                first.get_or_insert(pr);
            }
            Ok(())
        })?;
        if let Some(first) = first {
            out.push(finding(p, Severity::Error, "transcript-event-undecodable", format!(
                "transcript {sid}: {bad} event(s) do not decode (first: {first}); readers skip nothing silently: `openclaw doctor --session-sqlite recover`"
            )));
        }
    }

    // Orphans.
    let count = |q: &str| -> Result<i64, AgentDbError> {
        db.conn
            .query_row(q, [], |r| r.get(0))
            .map_err(|e| db.err(e))
    };
    if only.is_none() {
        let orphans = [
            (
                "orphan-window",
                "SELECT count(*) FROM session_windows w WHERE NOT EXISTS (SELECT 1 FROM session_nodes n WHERE n.session_key = w.session_key)",
                "session_windows rows whose session key has no session_nodes row",
            ),
            (
                "orphan-events",
                "SELECT count(*) FROM transcript_events e WHERE NOT EXISTS (SELECT 1 FROM session_windows w WHERE w.session_id = e.session_id)",
                "transcript_events rows whose session has no session_windows row",
            ),
            (
                "orphan-identity",
                "SELECT count(*) FROM transcript_event_identities i WHERE NOT EXISTS (SELECT 1 FROM transcript_events e WHERE e.session_id = i.session_id AND e.seq = i.seq)",
                "transcript_event_identities rows without their event",
            ),
        ];
        for (code, q, what) in orphans {
            let n = count(q).unwrap_or(0);
            if n > 0 {
                out.push(finding(p, Severity::Warning, code, format!(
                    "{n} {what}; {VALIDATE} lists them, `openclaw doctor --session-sqlite compact` drops them"
                )));
            }
        }
        // FTS: the index against its row map, and indexed_seq against the events.
        if let (Ok(fts), Ok(rows)) = (
            count("SELECT count(*) FROM session_transcript_fts"),
            count("SELECT count(*) FROM session_transcript_fts_rows"),
        ) {
            if fts != rows {
                out.push(finding(p, Severity::Warning, "fts-out-of-sync", format!(
                    "session_transcript_fts has {fts} rows, session_transcript_fts_rows {rows}; search misses or repeats messages: {VALIDATE}"
                )));
            }
        }
        if let Ok(n) = count(
            "SELECT count(*) FROM session_transcript_index_state s WHERE s.indexed_seq < (SELECT max(seq) FROM transcript_events e WHERE e.session_id = s.session_id)",
        ) {
            if n > 0 {
                out.push(finding(p, Severity::Info, "fts-index-behind", format!(
                    "{n} transcript(s) have events past their indexed_seq; the gateway indexes them when next opened"
                )));
            }
        }
    }

    // Legacy files beside the database.
    let legacy_store = super::layout::legacy_store_for(store_path);
    let sessions_dir = legacy_store.parent().map(Path::to_path_buf);
    if only.is_none() && legacy_store.is_file() {
        out.push(finding(&legacy_store, Severity::Warning, "legacy-store-beside-db", format!(
            "a sessions.json beside the agent database {}; the gateway no longer reads it: move it aside (`mv {} {}.bak`)",
            p.display(), legacy_store.display(), legacy_store.display()
        )));
    }
    if let Some(dir) = &sessions_dir {
        let keys: Vec<(String, String)> = nodes
            .iter()
            .map(|(k, s, ..)| (k.clone(), s.clone()))
            .collect();
        for (key, sid, dp) in legacy_jsonl_beside(&keys, dir) {
            if only.is_some_and(|o| o != sid) {
                continue;
            }
            let absent = history_absent_from_db(&db, &sid, &dp);
            let jsonl = dp.path();
            let held = match absent {
                Some(0) => "all of its entries are in the database".to_string(),
                Some(n) => format!("it holds {n} entr(ies) absent from the database: export them first (`claw-transcript cat {}`)", jsonl.display()),
                None => "it cannot be read".to_string(),
            };
            out.push(finding(jsonl, Severity::Error, "active_sqlite_transcript_jsonl", format!(
                "session {key:?}: a legacy JSONL beside its DB-backed transcript, which halts `openclaw doctor`'s migration ({held}); `claw-migrate finish --apply` imports what is missing and archives it as 9.6 does, or move it aside: `mv {} {}.bak`",
                jsonl.display(), jsonl.display()
            )));
        }
    }

    // WAL.
    let size = |q: &Path| std::fs::metadata(q).map(|m| m.len()).unwrap_or(0);
    let wal = PathBuf::from(format!("{}-wal", p.display()));
    let (db_bytes, wal_bytes) = (size(p), size(&wal));
    if wal_bytes >= WAL_REPORT_MIN && wal_bytes > db_bytes {
        out.push(finding(&wal, Severity::Warning, "wal-oversized", format!(
            "the WAL is {wal_bytes} bytes, the database {db_bytes}: checkpoints are not keeping up (a reader held open, or base64 images in transcript_events: `claw-sessions du`); stop the gateway and run `openclaw doctor --session-sqlite compact`"
        )));
    }
    Ok((out, sessions))
}

/// The legacy JSONL still beside each DB-backed session (9.6's
/// `active_sqlite_transcript_jsonl`): `(session key, session id, <sessionsDir>/<sid>.jsonl)`
/// for each `(key, sid)` of `sessions` whose file is a regular file.
pub fn legacy_jsonl_beside(
    sessions: &[(String, String)],
    sessions_dir: &Path,
) -> Vec<(String, String, DataPath)> {
    sessions
        .iter()
        .filter_map(|(key, sid)| {
            // A session id is data: one that is not a plain file name names nothing here.
            let jsonl = DataPath::beneath(sessions_dir, Path::new(&format!("{sid}.jsonl"))).ok()?;
            jsonl.is_file().then(|| (key.clone(), sid.clone(), jsonl))
        })
        .collect()
}

/// Whether some entry ids of the JSONL at `jsonl` are not in the database's transcript
/// of `sid`: `Some(count)`, `None` when the file cannot be read.
fn history_absent_from_db(db: &AgentDb, sid: &str, jsonl: &DataPath) -> Option<usize> {
    let text = jsonl.read_small(1 << 30, "a legacy transcript").ok()?;
    let mut ids: HashSet<String> = HashSet::new();
    let _ = for_each_stored(db, sid, |ev| {
        if let Ok(line) = decode_event(&ev) {
            if let Ok(v) = serde_json::from_str::<Value>(&line) {
                if let Some(id) = v.get("id").and_then(Value::as_str) {
                    ids.insert(id.to_string());
                }
            }
        }
        Ok(())
    });
    let mut absent = 0;
    for line in String::from_utf8_lossy(&text).lines() {
        if let Ok(v) = serde_json::from_str::<Value>(line) {
            if let Some(id) = v.get("id").and_then(Value::as_str) {
                if !ids.contains(id) {
                    absent += 1;
                }
            }
        }
    }
    Some(absent)
}

/// Leases of agent databases (state DB `agent_database_leases`) and JSON pid locks in
/// `<stateDir>/tmp/openclaw-<uid>/` held by processes that are gone.
pub fn stale_holders(state_dir: &Path) -> Vec<Finding> {
    let mut out = Vec::new();
    let state_db = state_dir.join("state/openclaw.sqlite");
    if state_db.is_file() {
        if let Ok(c) = rusqlite::Connection::open_with_flags(
            &state_db,
            rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
        ) {
            let rows: Vec<(String, String, i64)> = c
                .prepare(
                    "SELECT lease_id, path, owner_pid FROM agent_database_leases ORDER BY lease_id",
                )
                .and_then(|mut st| {
                    st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
                        .collect::<Result<_, _>>()
                })
                .unwrap_or_default();
            for (lease, path, pid) in rows {
                if pid > 0 && !crate::fs::process::is_alive(pid as u32) {
                    out.push(finding(&state_db, Severity::Warning, "stale-db-lease", format!(
                        "lease {lease} on {path} is held by pid {pid}, which is gone; with no gateway running, `sqlite3 {} \"DELETE FROM agent_database_leases WHERE lease_id = '{lease}'\"`",
                        state_db.display()
                    )));
                }
            }
        }
    }
    let tmp = state_dir.join("tmp");
    for d in std::fs::read_dir(&tmp).into_iter().flatten().flatten() {
        if !d.file_name().to_string_lossy().starts_with("openclaw-") {
            continue;
        }
        for f in std::fs::read_dir(d.path()).into_iter().flatten().flatten() {
            let name = f.file_name().to_string_lossy().into_owned();
            if !name.ends_with(".lock") {
                continue;
            }
            let path = f.path();
            let Ok(text) =
                crate::fs::data_file::DataPath::given(&path).read_small(1 << 16, "a lock file")
            else {
                continue;
            };
            let pid = serde_json::from_slice::<Value>(&text)
                .ok()
                .and_then(|v| v.get("pid").and_then(Value::as_u64));
            if let Some(pid) = pid {
                if !crate::fs::process::is_alive(pid as u32) {
                    out.push(finding(
                        &path,
                        Severity::Warning,
                        "stale-gateway-lock",
                        format!(
                            "held by pid {pid}, which is gone; with no gateway running, `rm {}`",
                            path.display()
                        ),
                    ));
                }
            }
        }
    }
    out
}

/// [`check_db`], with a database that cannot be opened or read reported as a finding
/// (`agent-db-unreadable`) instead of failing the whole check.
pub fn check_or_report(
    db_path: &Path,
    store_path: &Path,
    opts: &DbCheckOptions,
) -> (Vec<Finding>, usize) {
    match check_db(db_path, store_path, opts) {
        Ok(r) => r,
        Err(e) => (
            vec![finding(
                db_path,
                Severity::Error,
                "agent-db-unreadable",
                format!("{e}; stop the gateway, copy the file aside and run `openclaw doctor --session-sqlite recover`"),
            )],
            0,
        ),
    }
}

#[cfg(test)]
mod legacy_beside_tests {
    use super::legacy_jsonl_beside;

    #[test]
    fn a_session_id_that_leaves_the_sessions_dir_names_no_leftover() {
        let d = tempfile::tempdir().unwrap();
        let sessions = d.path().join("sessions");
        std::fs::create_dir(&sessions).unwrap();
        std::fs::write(d.path().join("outside.jsonl"), b"{}\n").unwrap();
        std::fs::write(sessions.join("inside.jsonl"), b"{}\n").unwrap();
        std::os::unix::fs::symlink(d.path().join("outside.jsonl"), sessions.join("link.jsonl"))
            .unwrap();
        let ids = |s: &str| ("agent:main:".to_string() + s, s.to_string());
        let found =
            legacy_jsonl_beside(&[ids("../outside"), ids("inside"), ids("link")], &sessions);
        let names: Vec<_> = found.iter().map(|(_, sid, _)| sid.as_str()).collect();
        assert_eq!(names, ["inside"]);
    }
}
