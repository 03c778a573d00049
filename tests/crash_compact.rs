//! Crash test: `claw-compact run --rotate` killed with SIGKILL at random instants leaves
//! either the old state (store on the old transcript, which is byte-identical) or the new
//! one (store on a complete successor) — never a store pointing at a missing or partial
//! successor.

mod support;

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use support::Rng;

const SID: &str = "0b7c6a52-3f7e-4a56-9d3b-1f2e3d4c5b6a";

fn fixture() -> String {
    let mut rows = vec![
        json!({"type":"session","version":3,"id":SID,"timestamp":"2026-11-29T21:00:00.000Z","cwd":"/home/alice"}),
    ];
    let mut parent = Value::Null;
    for i in 0..400 {
        let id = format!("e{i:04}");
        let msg = match i % 4 {
            0 => {
                json!({"role":"user","content":format!("step {i}: check /srv/app/{i}.log {}", "lorem ".repeat(40)),"timestamp":i})
            }
            1 => {
                json!({"role":"assistant","content":[{"type":"toolCall","id":format!("c{i}"),"name":"read","arguments":{"path":format!("/srv/app/{i}.log")}}],"stopReason":"toolUse","timestamp":i})
            }
            2 => {
                json!({"role":"toolResult","toolCallId":format!("c{}", i - 1),"toolName":"read","content":[{"type":"text","text":"ok ".repeat(200)}],"isError":false,"timestamp":i})
            }
            _ => {
                json!({"role":"assistant","content":[{"type":"text","text":format!("done {i}")}],"stopReason":"stop","usage":{"totalTokens":1000 + i},"timestamp":i})
            }
        };
        rows.push(json!({"type":"message","id":id,"parentId":parent,"timestamp":"2026-11-29T21:00:01.000Z","message":msg}));
        parent = json!(id);
    }
    rows.iter().map(|r| r.to_string() + "\n").collect()
}

fn reset(dir: &Path, transcript: &str, store: &str) {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join(format!("{SID}.jsonl")), transcript).unwrap();
    std::fs::write(dir.join("sessions.json"), store).unwrap();
}

#[test]
fn sigkill_during_rotate_leaves_old_or_new_state() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    std::fs::create_dir_all(home.join("tmp")).unwrap();
    let state = tmp.path().join("state");
    let dir = state.join("agents/main/sessions");
    let transcript = fixture();
    let store = serde_json::to_string_pretty(&json!({"agent:main:main": {"sessionId": SID, "updatedAt": 1, "sessionFile": format!("{SID}.jsonl"), "inputTokens": 7, "compactionCount": 4}})).unwrap();
    let bin = assert_cmd::cargo::cargo_bin("claw-compact");
    let spawn = || {
        std::process::Command::new(&bin)
            .env_clear()
            .env("HOME", &home)
            .env("TMPDIR", home.join("tmp"))
            .arg("--state-dir")
            .arg(&state)
            .args(["run", "main", "--rotate", "--keep-recent-tokens", "2000"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap()
    };
    // Calibrate: how long a whole run takes here.
    reset(&dir, &transcript, &store);
    let t = Instant::now();
    assert!(spawn().wait().unwrap().success());
    let mut full = t.elapsed().as_micros() as u64;
    let mut rng = Rng::new(11);
    let (mut kills, mut old, mut new, mut tries) = (0, 0, 0, 0u64);
    while kills < 220 {
        // One calibration run is a poor guide on a loaded machine: when a side has seen no
        // kill for a while, widen or narrow the window so that both are tried.
        tries += 1;
        if tries % 20 == 0 && new == 0 {
            full = full.saturating_mul(2);
        } else if tries % 20 == 0 && old == 0 {
            full = (full / 2).max(1);
        }
        reset(&dir, &transcript, &store);
        let mut child = spawn();
        std::thread::sleep(Duration::from_micros(rng.below(full * 12 / 10 + 1)));
        let _ = child.kill();
        if !child.wait().unwrap().success() {
            kills += 1;
        }
        // The old transcript is never modified.
        assert_eq!(
            std::fs::read_to_string(dir.join(format!("{SID}.jsonl"))).unwrap(),
            transcript
        );
        let s: Value =
            serde_json::from_slice(&std::fs::read(dir.join("sessions.json")).unwrap()).unwrap();
        let e = &s["agent:main:main"];
        if e["sessionId"] == SID {
            assert_eq!(e["compactionCount"], 4);
            assert_eq!(e["inputTokens"], 7);
            old += 1;
            continue;
        }
        let file = e["sessionFile"].as_str().expect("sessionFile");
        let text = std::fs::read_to_string(file).expect("the successor exists");
        assert!(text.ends_with('\n'));
        let rows: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).expect("whole lines"))
            .collect();
        assert_eq!(rows[0]["id"], e["sessionId"]);
        assert_eq!(rows.last().unwrap()["type"], "compaction");
        assert_eq!(e["compactionCount"], 5);
        new += 1;
    }
    eprintln!(
        "crash compact: {kills} kills, {old} old state, {new} new state (full run {full} µs)"
    );
    assert!(
        old > 0 && new > 0,
        "kills should land on both sides: {old} old, {new} new"
    );
}
