//! `claw-transcript tail --follow KEY` on the files layout across a reset of KEY: the reset
//! archives the transcript (`<id>.jsonl.reset.<ts>`) and points the entry at a new
//! session; the follower says the file went, then that the session was reset, and follows
//! the new session's transcript from its start, as the agent-database follower does
//! (tests/transcript_follow_db.rs). No wall-time asserts: output is waited for.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::json;

const KEY: &str = "agent:main:main";
const OLD: &str = "0b5e1a8c-1d2e-4f00-8a00-00000000a001";
const NEW: &str = "0b5e1a8c-1d2e-4f00-8a00-00000000a002";
const T: i64 = 1_795_989_048_800;

fn header(id: &str) -> String {
    json!({"type": "session", "version": 3, "id": id,
        "timestamp": clawstate::js::to_iso_string(T), "cwd": "/tmp"})
    .to_string()
}

fn message(id: &str, parent: Option<&str>, role: &str, text: &str, t: i64) -> String {
    json!({"type": "message", "id": id, "parentId": parent,
        "timestamp": clawstate::js::to_iso_string(t),
        "message": {"role": role, "content": [{"type": "text", "text": text}], "timestamp": t}})
    .to_string()
}

fn write_store(sessions: &Path, sid: &str) {
    let tmp = sessions.join("sessions.json.tmp");
    let store = json!({ (KEY): {"sessionId": sid, "updatedAt": T} });
    std::fs::write(&tmp, store.to_string()).expect("store");
    std::fs::rename(&tmp, sessions.join("sessions.json")).expect("rename store");
}

fn wait_for(buf: &Arc<Mutex<String>>, needle: &str, within: Duration) -> String {
    let end = Instant::now() + within;
    loop {
        let s = buf.lock().map(|s| s.clone()).unwrap_or_default();
        if s.contains(needle) || Instant::now() >= end {
            return s;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn collect(rx: &mpsc::Receiver<String>, got: &mut Vec<String>, want: usize, within: Duration) {
    let end = Instant::now() + within;
    while got.len() < want {
        match rx.recv_timeout(end.saturating_duration_since(Instant::now())) {
            Ok(l) => got.push(l),
            Err(_) => break,
        }
    }
}

#[test]
fn follow_by_key_continues_on_the_new_session_after_a_reset() {
    let dir = tempfile::tempdir().expect("tempdir");
    let home = dir.path();
    let sessions = home.join(".openclaw/agents/main/sessions");
    std::fs::create_dir_all(&sessions).expect("sessions");
    std::fs::create_dir_all(home.join("tmp")).expect("tmp");
    let old = format!(
        "{}\n{}\n",
        header(OLD),
        message("a0000001", None, "user", "before the reset", T + 1)
    );
    std::fs::write(sessions.join(format!("{OLD}.jsonl")), old).expect("old transcript");
    write_store(&sessions, OLD);

    let mut child = Command::new(assert_cmd::cargo::cargo_bin("claw-transcript"))
        .env_clear()
        .env("HOME", home)
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("TZ", "UTC")
        .env("TMPDIR", home.join("tmp"))
        .args([
            "--now",
            &(T + 60_000).to_string(),
            "tail",
            KEY,
            "-n",
            "1",
            "--follow",
            "--json",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let (tx, rx) = mpsc::channel::<String>();
    let stdout = child.stdout.take().expect("stdout");
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let stderr = Arc::new(Mutex::new(String::new()));
    let (sink, pipe) = (stderr.clone(), child.stderr.take().expect("stderr"));
    std::thread::spawn(move || {
        for line in BufReader::new(pipe).lines().map_while(Result::ok) {
            if let Ok(mut s) = sink.lock() {
                s.push_str(&line);
                s.push('\n');
            }
        }
    });
    let mut got = Vec::new();
    collect(&rx, &mut got, 1, Duration::from_secs(30));
    assert_eq!(got.len(), 1, "the last message first: {got:?}");

    // The reset: the transcript archived, the new session's transcript, the entry moved.
    std::fs::rename(
        sessions.join(format!("{OLD}.jsonl")),
        sessions.join(format!("{OLD}.jsonl.reset.2026-11-29T21-58-32.518Z")),
    )
    .expect("archive");
    let new = format!(
        "{}\n{}\n",
        header(NEW),
        message("b0000001", None, "user", "first after the reset", T + 2)
    );
    std::fs::write(sessions.join(format!("{NEW}.jsonl")), new).expect("new transcript");
    write_store(&sessions, NEW);
    collect(&rx, &mut got, 2, Duration::from_secs(30));
    let said = wait_for(&stderr, "session reset", Duration::from_secs(30));
    // A later turn of the new session is followed too.
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(sessions.join(format!("{NEW}.jsonl")))
        .expect("append");
    writeln!(
        f,
        "{}",
        message(
            "b0000002",
            Some("b0000001"),
            "assistant",
            "second after the reset",
            T + 3
        )
    )
    .expect("write");
    drop(f);
    collect(&rx, &mut got, 3, Duration::from_secs(30));
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(got.len(), 3, "{got:?}\n{said}");
    assert!(got[0].contains("before the reset"), "{}", got[0]);
    assert!(got[1].contains("first after the reset"), "{}", got[1]);
    assert!(got[2].contains("second after the reset"), "{}", got[2]);
    assert!(
        said.contains("file removed; waiting for it to come back")
            && said.contains(&format!("session reset; following session {NEW}")),
        "{said}"
    );
}
