//! `claw-transcript history` of a long session of the agent database: the page of the last
//! 50 rows is numbered from the start of the transcript (as 2026.9.6 numbers it, compared
//! with a real gateway in `tests/differential_history_96.rs`), and building it reads the
//! end of the session and the path index, never every event: what the process read
//! (`rchar` of `/proc/<pid>/io`) stays far below the events' size.

mod agent_db_support;
mod support;

use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Stdio};

use agent_db_support::{db_of, imported_home};
use serde_json::Value;

/// The columns of the one row `q` gives on `db`, as text joined by `|`.
fn row(db: &std::path::Path, q: &str) -> String {
    let c = rusqlite::Connection::open(db).expect("open");
    c.query_row(q, [], |r| {
        let mut parts = Vec::new();
        for i in 0..r.as_ref().column_count() {
            parts.push(match r.get::<_, rusqlite::types::Value>(i)? {
                rusqlite::types::Value::Integer(i) => i.to_string(),
                rusqlite::types::Value::Text(t) => t,
                other => format!("{other:?}"),
            });
        }
        Ok(parts.join("|"))
    })
    .unwrap_or_else(|e| panic!("{q}: {e}"))
}

/// Runs the statements of `script` on `db` (SQLite as bundled: it has the `octet_length`
/// the schema's CHECKs use, which an older `sqlite3` shell lacks).
fn run_sql(db: &std::path::Path, script: &str) {
    let c = rusqlite::Connection::open(db).expect("open");
    c.execute_batch(script)
        .unwrap_or_else(|e| panic!("{script}: {e}"));
}

/// Runs `c` to its end: (exit status, stdout, `rchar` taken before it is reaped).
#[allow(clippy::zombie_processes)]
fn run_counting_reads(c: &mut Command) -> (std::process::ExitStatus, Vec<u8>, String, Option<u64>) {
    let mut child = c
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut so = child.stdout.take().expect("stdout");
    let mut se = child.stderr.take().expect("stderr");
    let ro = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = std::io::Read::read_to_end(&mut so, &mut v);
        v
    });
    let re = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = std::io::Read::read_to_end(&mut se, &mut v);
        v
    });
    let pid = child.id() as libc::pid_t;
    // SAFETY: an all-zero siginfo is valid; waitid fills it for our own child. WNOWAIT
    // leaves the exited process unreaped, so its I/O counters stay readable.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    // SAFETY: waitid on our own child, writing into the siginfo above.
    let w = unsafe {
        libc::waitid(
            libc::P_PID,
            pid as libc::id_t,
            &mut info,
            libc::WEXITED | libc::WNOWAIT,
        )
    };
    assert_eq!(w, 0, "waitid");
    let rchar = std::fs::read_to_string(format!("/proc/{pid}/io"))
        .ok()
        .and_then(|io| {
            io.lines()
                .find_map(|l| l.strip_prefix("rchar: "))
                .and_then(|n| n.trim().parse().ok())
        });
    let status = child.wait().expect("reaped");
    let _ = status.signal();
    (
        status,
        ro.join().expect("stdout"),
        String::from_utf8_lossy(&re.join().expect("stderr")).into_owned(),
        rchar,
    )
}

fn history(home: &std::path::Path, args: &[&str]) -> (Value, Option<u64>) {
    let bin = assert_cmd::cargo::cargo_bin("claw-transcript");
    let mut c = Command::new(bin);
    c.args(["--json", "history", "agent:main:main"])
        .args(args)
        .env_clear()
        .env("HOME", home)
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("TZ", "UTC")
        .env("TMPDIR", home.join("tmp"));
    std::fs::create_dir_all(home.join("tmp")).expect("tmp");
    let (status, out, err, rchar) = run_counting_reads(&mut c);
    assert!(status.success(), "history: {err}");
    (serde_json::from_slice(&out).expect("JSON"), rchar)
}

fn last_seq(v: &Value) -> u64 {
    v["messages"]
        .as_array()
        .and_then(|m| m.last())
        .and_then(|m| m["__openclaw"]["seq"].as_u64())
        .unwrap_or_else(|| panic!("a numbered last message: {v}"))
}

/// 1,000,000 events appended to an imported session (two messages, then an event that
/// history does not show, over and over), the path index kept as the gateway keeps it.
#[test]
fn the_last_50_rows_of_a_million_event_session_are_numbered_from_the_start_without_reading_it() {
    let Some(h) = imported_home() else { return };
    let db = db_of(h.path(), "main");
    let (before, _) = history(h.path(), &["--limit", "50"]);
    let seq0 = last_seq(&before);
    let sid = row(
        &db,
        "SELECT current_session_id FROM session_nodes WHERE session_key = 'agent:main:main'",
    );
    let state = row(
        &db,
        &format!("SELECT indexed_seq, leaf_event_id, active_event_count, active_message_count FROM session_transcript_index_state WHERE session_id = '{sid}'"),
    );
    let f: Vec<&str> = state.split('|').collect();
    let (base, leaf, events, messages): (i64, &str, i64, i64) = (
        f[0].parse().expect("indexed_seq"),
        f[1],
        f[2].parse().expect("active_event_count"),
        f[3].parse().expect("active_message_count"),
    );
    const N: i64 = 1_000_000;
    // Event i (1-based): a message unless i % 3 == 0 (a custom entry); each the child of
    // the one before, the first the child of the leaf.
    let script = format!(
        "PRAGMA foreign_keys = OFF;
         BEGIN;
         CREATE TEMP TABLE bulk AS WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {N})
           SELECT i, 'bulk-' || i AS id, CASE WHEN i = 1 THEN '{leaf}' ELSE 'bulk-' || (i - 1) END AS parent,
             i % 3 != 0 AS is_message,
             (i - 1) / 3 * 2 + (i - 1) % 3 AS message_index FROM n;
         INSERT INTO transcript_events (session_id, seq, event_json, created_at)
           SELECT '{sid}', {base} + i,
             CASE WHEN is_message THEN json_object('type', 'message', 'id', id, 'parentId', parent,
                 'timestamp', '2026-11-30T00:00:00.000Z',
                 'message', json_object('role', CASE WHEN i % 3 = 1 THEN 'user' ELSE 'assistant' END,
                   'content', json_array(json_object('type', 'text', 'text', 'bulk message number ' || i || ' with some words to make it longer')),
                   'timestamp', 1795900000000 + i))
             ELSE json_object('type', 'custom', 'customType', 'clawstate-bulk', 'id', id, 'parentId', parent,
                 'timestamp', '2026-11-30T00:00:00.000Z', 'data', json_object('i', i)) END,
             0 FROM bulk;
         INSERT INTO transcript_event_identities (session_id, event_id, seq, event_type, parent_id, created_at)
           SELECT '{sid}', id, {base} + i, CASE WHEN is_message THEN 'message' ELSE 'custom' END, parent, 0 FROM bulk;
         INSERT INTO session_transcript_active_events (session_id, active_position, event_seq, message_position, context_eligible)
           SELECT '{sid}', {events} - 1 + i, {base} + i,
             CASE WHEN is_message THEN {messages} + message_index END, 1 FROM bulk;
         UPDATE session_transcript_index_state SET indexed_seq = {base} + {N}, leaf_event_id = 'bulk-{N}',
           active_event_count = {events} + {N}, active_message_count = {messages} + {N} - {N} / 3
           WHERE session_id = '{sid}';
         COMMIT;
"
    );
    run_sql(&db, &script);
    let stored: u64 = row(
        &db,
        &format!("SELECT sum(length(CAST(event_json AS BLOB))) FROM transcript_events WHERE session_id = '{sid}'"),
    )
    .parse()
    .expect("a sum");
    assert!(stored > 150_000_000, "{stored} bytes of events");
    let (after, rchar) = history(h.path(), &["--limit", "50"]);
    // Every added message after the old leaf: N − N/3 of them.
    assert_eq!(last_seq(&after), seq0 + (N - N / 3) as u64, "{after}");
    let n = after["messages"].as_array().map_or(0, Vec::len);
    assert!(n > 0 && n <= 50, "{n} messages");
    let Some(rchar) = rchar else {
        eprintln!("no rchar from /proc: the read bound is not checked");
        return;
    };
    eprintln!("history of the last 50 rows read {rchar} bytes; the events are {stored}");
    // The page reads the end of the session (the gateway's 12 MiB window, copied once) and
    // index rows, not the events before it.
    assert!(
        rchar < stored / 4,
        "history read {rchar} bytes of a session of {stored}"
    );
}
