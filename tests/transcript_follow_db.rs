//! `claw-transcript tail --follow` on the agent-database layout: rows another connection
//! appends to `transcript_events` (plain and zstd-compressed) while the follower runs are
//! printed exactly as `tail` prints the same lines once they are there. The database is
//! one openclaw@2026.9.6 imported (skipped with a note when it cannot be had).

mod agent_db_support;
mod support;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use agent_db_support::{db_of, imported_home, FIXTURE_NOW};
use clawstate::signals::rusqlite::{params, Connection};
use serde_json::{json, Value};
use support::claw;

const KEY: &str = "agent:main:telegram:direct:120";

fn now_arg() -> String {
    (FIXTURE_NOW + 60_000).to_string()
}

/// The session's id, its last seq and the id of its last entry with an id.
fn session_tail(db: &Path) -> (String, i64, String) {
    let c = Connection::open(db).expect("open");
    let sid: String = c
        .query_row(
            "SELECT current_session_id FROM session_nodes WHERE session_key = ?1",
            [KEY],
            |r| r.get(0),
        )
        .expect("session");
    let seq: i64 = c
        .query_row(
            "SELECT max(seq) FROM transcript_events WHERE session_id = ?1",
            [&sid],
            |r| r.get(0),
        )
        .expect("seq");
    let lines = clawstate::agent_db::events::lines(
        &clawstate::agent_db::AgentDb::open(db).expect("agent db"),
        &sid,
    )
    .expect("lines");
    let last_id = lines
        .iter()
        .rev()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find_map(|v| v["id"].as_str().map(String::from))
        .expect("an entry with an id");
    (sid, seq, last_id)
}

fn message(id: &str, parent: &str, role: &str, text: &str, t: i64) -> String {
    json!({"type": "message", "id": id, "parentId": parent,
        "timestamp": clawstate::js::to_iso_string(t),
        "message": {"role": role, "content": [{"type": "text", "text": text}], "timestamp": t}})
    .to_string()
}

#[test]
fn follow_prints_rows_appended_to_the_database_as_tail_prints_them() {
    let Some(home) = imported_home() else { return };
    let db = db_of(home.path(), "main");
    let (sid, seq, last_id) = session_tail(&db);

    let bin = assert_cmd::cargo::cargo_bin("claw-transcript");
    std::fs::create_dir_all(home.path().join("tmp")).expect("tmp");
    let mut child = Command::new(bin)
        .env_clear()
        .env("HOME", home.path())
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("TZ", "UTC")
        .env("TMPDIR", home.path().join("tmp"))
        .args([
            "--now",
            &now_arg(),
            "tail",
            KEY,
            "-n",
            "2",
            "--follow",
            "--json",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let stdout = child.stdout.take().expect("stdout");
    let (tx, rx) = mpsc::channel::<String>();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut got: Vec<String> = Vec::new();
    let collect = |got: &mut Vec<String>, want: usize, within: Duration| {
        let end = Instant::now() + within;
        while got.len() < want {
            let left = end.saturating_duration_since(Instant::now());
            match rx.recv_timeout(left) {
                Ok(l) => got.push(l),
                Err(_) => break,
            }
        }
    };
    collect(&mut got, 2, Duration::from_secs(30));
    assert_eq!(got.len(), 2, "the last two messages first: {got:?}");

    // Another connection appends a user turn and a long assistant reply stored compressed,
    // as the gateway stores it.
    let c = Connection::open(&db).expect("open");
    c.busy_timeout(Duration::from_secs(5)).expect("timeout");
    let t = FIXTURE_NOW + 1000;
    let user = message("f0110001", &last_id, "user", "followed question é", t);
    c.execute(
        "INSERT INTO transcript_events (session_id, seq, event_json, created_at) VALUES (?1, ?2, ?3, ?4)",
        params![sid, seq + 1, user, t],
    )
    .expect("insert user row");
    let long = format!("followed answer {}", "long text ".repeat(400));
    let reply = message("f0110002", "f0110001", "assistant", &long, t + 1000);
    let nav: String = c
        .query_row(
            "SELECT navigation_json FROM transcript_events WHERE navigation_json IS NOT NULL LIMIT 1",
            [],
            |r| r.get(0),
        )
        .expect("a navigation_json to reuse");
    let z = zstd::bulk::compress(reply.as_bytes(), 1).expect("zstd");
    c.execute(
        "INSERT INTO transcript_events (session_id, seq, event_json, created_at, event_zstd, event_utf8_bytes, navigation_json) \
         VALUES (?1, ?2, NULL, ?3, ?4, ?5, ?6)",
        params![sid, seq + 2, t + 1000, z, reply.len() as i64, nav],
    )
    .expect("insert compressed row");
    drop(c);

    collect(&mut got, 4, Duration::from_secs(30));
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(got.len(), 4, "both appended rows followed: {got:?}");

    // What tail prints for the same lines, once they are in the database.
    let o = claw("claw-transcript", home.path())
        .args(["--now", &now_arg(), "tail", KEY, "-n", "4", "--json"])
        .output()
        .expect("tail");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let expected: Vec<String> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(String::from)
        .collect();
    assert_eq!(got, expected);
    assert!(got[3].contains("followed answer"), "{}", got[3]);
}

/// Lines of a running follower's stdout, and its stderr so far.
struct Running {
    child: std::process::Child,
    lines: mpsc::Receiver<String>,
    stderr: std::sync::Arc<std::sync::Mutex<String>>,
}

impl Running {
    /// Starts `claw-transcript tail KEY -n N --follow --json` on `home`.
    fn start(home: &Path, n: &str) -> Running {
        let bin = assert_cmd::cargo::cargo_bin("claw-transcript");
        std::fs::create_dir_all(home.join("tmp")).expect("tmp");
        let mut child = Command::new(bin)
            .env_clear()
            .env("HOME", home)
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("TZ", "UTC")
            .env("TMPDIR", home.join("tmp"))
            .args([
                "--now",
                &now_arg(),
                "tail",
                KEY,
                "-n",
                n,
                "--follow",
                "--json",
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = mpsc::channel::<String>();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stderr = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let err_pipe = child.stderr.take().expect("stderr");
        let sink = stderr.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(err_pipe).lines().map_while(Result::ok) {
                if let Ok(mut s) = sink.lock() {
                    s.push_str(&line);
                    s.push('\n');
                }
            }
        });
        Running {
            child,
            lines: rx,
            stderr,
        }
    }

    /// Collects stdout lines until `got` holds `want` (or `within` passed).
    fn collect(&self, got: &mut Vec<String>, want: usize, within: Duration) {
        let end = Instant::now() + within;
        while got.len() < want {
            let left = end.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(l) => got.push(l),
                Err(_) => break,
            }
        }
    }

    /// Waits until stderr contains `needle` (or `within` passed); returns stderr.
    fn stderr_with(&self, needle: &str, within: Duration) -> String {
        let end = Instant::now() + within;
        loop {
            let s = self.stderr.lock().map(|s| s.clone()).unwrap_or_default();
            if s.contains(needle) || Instant::now() >= end {
                return s;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn stop(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn follow_continues_on_the_new_session_after_a_reset() {
    let Some(home) = imported_home() else { return };
    let db = db_of(home.path(), "main");
    let (old_sid, old_seq, last_id) = session_tail(&db);
    let run = Running::start(home.path(), "1");
    let mut got = Vec::new();
    run.collect(&mut got, 1, Duration::from_secs(30));
    assert_eq!(got.len(), 1, "the last message first: {got:?}");

    // The session is reset as the gateway resets it: a new window, the node pointing at
    // it, its header and a turn; then a late row of the old window that must not print,
    // and a reply in the new one.
    let new_sid = "0b5e1a8c-1d2e-4f00-8a00-0000000000f1";
    let t = FIXTURE_NOW + 5000;
    let c = Connection::open(&db).expect("open");
    c.busy_timeout(Duration::from_secs(5)).expect("timeout");
    c.execute_batch("BEGIN IMMEDIATE").expect("begin");
    c.execute(
        "INSERT INTO session_windows (session_id, session_key, previous_session_id, reason, created_at, updated_at) \
         VALUES (?1, ?2, ?3, 'reset', ?4, ?4)",
        params![new_sid, KEY, old_sid, t],
    )
    .expect("window");
    c.execute(
        "UPDATE session_nodes SET current_session_id = ?1, updated_at = ?2, \
         entry_json = json_set(entry_json, '$.sessionId', ?1) WHERE session_key = ?3",
        params![new_sid, t, KEY],
    )
    .expect("node");
    let header = json!({"type": "session", "version": 3, "id": new_sid,
        "timestamp": clawstate::js::to_iso_string(t), "cwd": "/tmp"})
    .to_string();
    let first = message("f0220001", "", "user", "first after the reset", t + 1);
    let first = first.replace(r#""parentId":"""#, r#""parentId":null"#);
    for (seq, line) in [(0, header.as_str()), (1, first.as_str())] {
        c.execute(
            "INSERT INTO transcript_events (session_id, seq, event_json, created_at) VALUES (?1, ?2, ?3, ?4)",
            params![new_sid, seq, line, t],
        )
        .expect("new row");
    }
    c.execute_batch("COMMIT").expect("commit");
    run.collect(&mut got, 2, Duration::from_secs(30));
    let noticed = run.stderr_with("session reset", Duration::from_secs(30));
    assert!(noticed.contains("session reset"), "{got:?}\n{noticed}");
    // Once the follower is on the new session, the old window is no longer followed.
    let stale = message(
        "f0220009",
        &last_id,
        "user",
        "late row of the old window",
        t + 2,
    );
    c.execute(
        "INSERT INTO transcript_events (session_id, seq, event_json, created_at) VALUES (?1, ?2, ?3, ?4)",
        params![old_sid, old_seq + 1, stale, t + 2],
    )
    .expect("old row");
    let reply = message(
        "f0220002",
        "f0220001",
        "assistant",
        "second after the reset",
        t + 3,
    );
    c.execute(
        "INSERT INTO transcript_events (session_id, seq, event_json, created_at) VALUES (?1, 2, ?2, ?3)",
        params![new_sid, reply, t + 3],
    )
    .expect("reply");
    drop(c);

    run.collect(&mut got, 3, Duration::from_secs(30));
    let stderr = run.stderr_with("session reset", Duration::from_secs(10));
    run.stop();
    assert_eq!(
        got.len(),
        3,
        "both turns of the new session followed: {got:?}\n{stderr}"
    );
    assert!(got[1].contains("first after the reset"), "{}", got[1]);
    assert!(got[2].contains("second after the reset"), "{}", got[2]);
    assert!(
        !got.iter().any(|l| l.contains("late row of the old window")),
        "{got:?}"
    );
    assert!(
        stderr.contains(&format!("session reset; following session {new_sid}")),
        "{stderr}"
    );

    // What tail prints for the new session, once it is there.
    let o = claw("claw-transcript", home.path())
        .args(["--now", &now_arg(), "tail", KEY, "-n", "2", "--json"])
        .output()
        .expect("tail");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let expected: Vec<String> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(String::from)
        .collect();
    assert_eq!(got[1..].to_vec(), expected);
}
