//! `claw-transcript check` on agent DBs damaged on purpose: each planted fault is found,
//! one line each, with the command that fixes it; an undamaged DB is clean.

mod agent_db_support;
mod support;

use std::path::Path;

use agent_db_support::{db_of, imported_home};
use rusqlite::{params, Connection};
use support::claw;

/// Runs `check --all --all-agents` and returns (exit code, finding lines).
fn check(home: &Path, extra: &[&str]) -> (i32, Vec<String>) {
    let mut args = vec!["check", "--all", "--all-agents"];
    args.extend_from_slice(extra);
    let o = claw("claw-transcript", home).args(&args).output().unwrap();
    let lines = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(String::from)
        .collect();
    (o.status.code().unwrap_or(-1), lines)
}

fn with_code<'a>(lines: &'a [String], code: &str) -> Vec<&'a String> {
    lines
        .iter()
        .filter(|l| l.contains(&format!(": {code}: ")))
        .collect()
}

/// A connection that writes the DB as a careless tool would (no foreign keys).
fn damage(db: &Path) -> Connection {
    let c = Connection::open(db).unwrap();
    c.pragma_update(None, "foreign_keys", false).unwrap();
    c
}

fn current_sid(c: &Connection, key: &str) -> String {
    c.query_row(
        "SELECT current_session_id FROM session_nodes WHERE session_key = ?1",
        params![key],
        |r| r.get(0),
    )
    .unwrap()
}

#[test]
fn an_undamaged_db_is_clean() {
    let Some(h) = imported_home() else { return };
    let (code, lines) = check(h.path(), &["--integrity"]);
    assert_eq!(code, 0, "{lines:#?}");
    assert!(
        lines.iter().all(|l| l.contains(": info: ")),
        "only infos: {lines:#?}"
    );
}

#[test]
fn deleted_header_torn_blob_seq_gap_and_invalid_entry_are_found() {
    let Some(h) = imported_home() else { return };
    let db = db_of(h.path(), "main");
    let c = damage(&db);
    let main = current_sid(&c, "agent:main:main");
    let direct = current_sid(&c, "agent:main:telegram:direct:120");
    c.execute(
        "DELETE FROM transcript_events WHERE session_id = ?1 AND seq = 0",
        params![main],
    )
    .unwrap();
    // A torn zstd blob: the first 20 bytes of a frame.
    let n = c
        .execute(
            "UPDATE transcript_events SET event_zstd = substr(event_zstd, 1, 20) WHERE session_id = ?1 AND seq = (SELECT min(seq) FROM transcript_events WHERE session_id = ?1 AND event_zstd IS NOT NULL)",
            params![direct],
        )
        .unwrap();
    assert_eq!(n, 1, "the fixture has a zstd row in {direct}");
    c.execute(
        "DELETE FROM transcript_events WHERE session_id = ?1 AND seq = 5",
        params![direct],
    )
    .unwrap();
    c.execute(
        "UPDATE session_nodes SET entry_valid = -1 WHERE session_key = 'agent:main:cron:nightly'",
        [],
    )
    .unwrap();
    drop(c);
    let (code, lines) = check(h.path(), &[]);
    assert_eq!(code, 65, "{lines:#?}");
    let header = with_code(&lines, "session-without-header");
    assert_eq!(header.len(), 1, "{lines:#?}");
    assert!(header[0].contains("agent:main:main") && header[0].contains("`openclaw doctor"));
    let gap = with_code(&lines, "transcript-seq-gap");
    assert!(
        gap.iter()
            .any(|l| l.contains(&direct) && l.contains("from seq 4 to 6")),
        "{lines:#?}"
    );
    let torn = with_code(&lines, "transcript-event-undecodable");
    assert!(
        torn.iter()
            .any(|l| l.contains(&direct) && l.contains("does not decode")),
        "{lines:#?}"
    );
    assert_eq!(with_code(&lines, "entry-invalid").len(), 1, "{lines:#?}");
    // Every finding names a command.
    for l in &lines {
        if !l.contains(": info: ") {
            assert!(l.contains('`'), "no fix in: {l}");
        }
    }
    // The undamaged agent has none of these.
    assert!(lines
        .iter()
        .filter(|l| l.contains("/agents/work/"))
        .all(|l| l.contains(": info: ")));
}

#[test]
fn a_wrong_size_a_missing_window_and_fts_drift_are_found() {
    let Some(h) = imported_home() else { return };
    let db = db_of(h.path(), "work");
    let c = damage(&db);
    let main = current_sid(&c, "agent:work:main");
    let other = current_sid(&c, "agent:work:cron:nightly");
    let n = c
        .execute(
            "UPDATE transcript_events SET event_utf8_bytes = event_utf8_bytes + 1 WHERE session_id = ?1 AND event_zstd IS NOT NULL",
            params![other],
        )
        .unwrap();
    assert!(n > 0);
    c.execute(
        "DELETE FROM session_windows WHERE session_id = ?1",
        params![main],
    )
    .unwrap();
    c.execute(
        "INSERT INTO session_transcript_fts_rows (id, session_id, message_id) VALUES (999999, ?1, 'ghost')",
        params![main],
    )
    .unwrap();
    drop(c);
    let (code, lines) = check(h.path(), &[]);
    assert_eq!(code, 65, "{lines:#?}");
    assert!(
        with_code(&lines, "transcript-event-undecodable")
            .iter()
            .any(|l| l.contains("event_utf8_bytes says")),
        "{lines:#?}"
    );
    assert_eq!(
        with_code(&lines, "session-without-window").len(),
        1,
        "{lines:#?}"
    );
    assert!(!with_code(&lines, "orphan-events").is_empty(), "{lines:#?}");
    assert!(
        !with_code(&lines, "agent-db-foreign-key").is_empty(),
        "{lines:#?}"
    );
    assert_eq!(with_code(&lines, "fts-out-of-sync").len(), 1, "{lines:#?}");
}

#[test]
fn a_legacy_jsonl_beside_the_db_says_whether_it_holds_more_history() {
    let Some(h) = imported_home() else { return };
    let db = db_of(h.path(), "main");
    let c = Connection::open(&db).unwrap();
    let sid = current_sid(&c, "agent:main:main");
    let sid2 = current_sid(&c, "agent:main:cron:nightly");
    drop(c);
    let sessions = h.path().join(".openclaw/agents/main/sessions");
    let arch = h
        .path()
        .join(".openclaw/agents/main/session-sqlite-import-archive");
    for (key, s, extra) in [
        ("agent_main_main", &sid, true),
        ("agent_main_cron_nightly", &sid2, false),
    ] {
        let f = std::fs::read_dir(&arch)
            .unwrap()
            .flatten()
            .find(|e| {
                e.file_name()
                    .to_string_lossy()
                    .starts_with(&format!("{key}.{s}.jsonl"))
            })
            .unwrap();
        let mut text = std::fs::read_to_string(f.path()).unwrap();
        if extra {
            text.push_str(r#"{"type":"message","id":"newafter1","parentId":null,"timestamp":"2026-12-01T00:00:00.000Z","message":{"role":"user","content":"written after the import","timestamp":1}}"#);
            text.push('\n');
        }
        std::fs::write(sessions.join(format!("{s}.jsonl")), text).unwrap();
    }
    let (code, lines) = check(h.path(), &[]);
    assert_eq!(code, 65, "{lines:#?}");
    let found = with_code(&lines, "active_sqlite_transcript_jsonl");
    assert_eq!(found.len(), 2, "{lines:#?}");
    let main_line = found.iter().find(|l| l.contains(&sid)).unwrap();
    assert!(
        main_line.contains("holds 1 entr(ies) absent"),
        "{main_line}"
    );
    assert!(main_line.contains("`mv "), "{main_line}");
    let cron_line = found.iter().find(|l| l.contains(&sid2)).unwrap();
    assert!(
        cron_line.contains("all of its entries are in the database"),
        "{cron_line}"
    );
}

#[test]
fn a_lease_and_a_pid_lock_of_dead_processes_are_stale() {
    let Some(h) = imported_home() else { return };
    let state = h.path().join(".openclaw/state/openclaw.sqlite");
    // A pid that is not running: past the kernel's pid_max.
    let dead: i64 = 4_194_305;
    let c = Connection::open(&state).unwrap();
    c.execute(
        "INSERT INTO agent_database_leases (lease_id, agent_id, path, owner_pid, owner_start_time, opened_at) VALUES ('l1', 'main', ?1, ?2, 1, 1)",
        params![db_of(h.path(), "main").to_string_lossy(), dead],
    )
    .unwrap();
    drop(c);
    let lockdir = h.path().join(".openclaw/tmp/openclaw-0");
    std::fs::create_dir_all(&lockdir).unwrap();
    std::fs::write(
        lockdir.join("gateway.state.lock"),
        format!(r#"{{"pid":{dead},"createdAt":1}}"#),
    )
    .unwrap();
    // A live holder is not stale.
    std::fs::write(
        lockdir.join("gateway.abcd1234.lock"),
        format!(r#"{{"pid":{}}}"#, std::process::id()),
    )
    .unwrap();
    let (code, lines) = check(h.path(), &[]);
    assert_eq!(code, 0, "warnings only: {lines:#?}");
    let lease = with_code(&lines, "stale-db-lease");
    assert_eq!(lease.len(), 1, "{lines:#?}");
    assert!(lease[0].contains("DELETE FROM agent_database_leases"));
    let lock = with_code(&lines, "stale-gateway-lock");
    assert_eq!(lock.len(), 1, "{lines:#?}");
    assert!(lock[0].contains("gateway.state.lock") && lock[0].contains("`rm "));
}

#[test]
fn a_wal_larger_than_the_db_is_reported() {
    let Some(h) = imported_home() else { return };
    let db = db_of(h.path(), "work");
    // A WAL grown by a reader that never let it checkpoint: write through one connection
    // while another holds a read transaction open.
    let reader = Connection::open(&db).unwrap();
    reader
        .execute_batch("BEGIN; SELECT count(*) FROM session_nodes;")
        .unwrap();
    let w = Connection::open(&db).unwrap();
    w.pragma_update(None, "wal_autocheckpoint", 0).unwrap();
    w.execute_batch("CREATE TABLE IF NOT EXISTS cache_fill (b BLOB)")
        .unwrap();
    let blob = vec![7u8; 1 << 20];
    for _ in 0..80 {
        w.execute("INSERT INTO cache_fill VALUES (?1)", params![blob])
            .unwrap();
    }
    let (_, lines) = check(h.path(), &[]);
    drop(reader);
    std::mem::forget(w); // keep the WAL as it is until the process ends
    let wal = with_code(&lines, "wal-oversized");
    assert_eq!(wal.len(), 1, "{lines:#?}");
    assert!(wal[0].contains("openclaw doctor --session-sqlite compact"));
}

/// Rows the gateway has not validated (entry_valid 0) make 9.6's own `openclaw sessions`
/// fail; check says so, with the fix.
#[test]
fn unvalidated_entries_are_a_warning_that_names_doctor_fix() {
    let Some(h) = imported_home() else { return };
    let db = db_of(h.path(), "main");
    let c = damage(&db);
    c.execute(
        "UPDATE session_nodes SET entry_valid = 0 WHERE session_key = 'agent:main:main'",
        [],
    )
    .unwrap();
    drop(c);
    let (code, lines) = check(h.path(), &[]);
    assert_eq!(code, 0, "{lines:#?}");
    let f = with_code(&lines, "entry-validation-pending");
    assert!(
        f.iter().any(|l| l.contains(": warning: ")
            && l.contains("1 entr(ies) not validated")
            && l.contains("`openclaw doctor --fix`")),
        "{lines:#?}"
    );
    if let Some(peer) = agent_db_support::peer96() {
        let o = agent_db_support::run96(&peer, h.path(), &["sessions", "--json"]);
        assert!(!o.status.success(), "9.6 refuses the unvalidated row");
    }
}

#[test]
fn doctor_runs_the_agent_db_checks() {
    let Some(h) = imported_home() else { return };
    let db = db_of(h.path(), "main");
    let c = damage(&db);
    let main = current_sid(&c, "agent:main:main");
    c.execute(
        "DELETE FROM transcript_events WHERE session_id = ?1 AND seq = 0",
        params![main],
    )
    .unwrap();
    drop(c);
    let o = claw("claw-sessions", h.path())
        .args(["doctor", "--all-agents", "--ndjson"])
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(65), "{out}");
    let rows: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let header: Vec<_> = rows
        .iter()
        .filter(|r| r["code"] == "session-without-header")
        .collect();
    assert_eq!(header.len(), 1, "{rows:#?}");
    // The DB agent's transcripts are not looked for as files.
    assert!(
        !rows.iter().any(|r| r["code"] == "transcript-missing"),
        "{rows:#?}"
    );
}
