//! Integration tests of `claw-transcript`: reading, checking, repairing, migrating,
//! appending and locks, on real files in a temporary state directory.

mod support;

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;

use serde_json::{json, Value};
use support::{claw, json_of};

use clawstate::js;

const EXAMPLE: &str = concat!(
    "{\"type\":\"session\",\"version\":3,\"id\":\"5f0c2a8e-1b7d-4c3e-9a61-2d4f8b0e7c13\",\"timestamp\":\"2026-11-29T21:56:34.363Z\",\"cwd\":\"/home/alice/project\"}\n",
    "{\"type\":\"message\",\"id\":\"444a580f\",\"parentId\":null,\"timestamp\":\"2026-11-29T21:56:34.364Z\",\"message\":{\"role\":\"user\",\"content\":\"What is in /srv/demo/hostname.txt?\",\"timestamp\":1795989394364}}\n",
    "{\"type\":\"message\",\"id\":\"b6a5bb03\",\"parentId\":\"444a580f\",\"timestamp\":\"2026-11-29T21:56:34.364Z\",\"message\":{\"role\":\"assistant\",\"content\":[{\"type\":\"toolCall\",\"id\":\"toolu_1\",\"name\":\"read\",\"arguments\":{\"path\":\"/srv/demo/hostname.txt\"}}],\"api\":\"anthropic-messages\",\"provider\":\"anthropic\",\"model\":\"claude-sonnet-4-6\",\"usage\":{\"input\":812,\"output\":41,\"cacheRead\":0,\"cacheWrite\":0,\"totalTokens\":853,\"cost\":{\"input\":0,\"output\":0,\"cacheRead\":0,\"cacheWrite\":0,\"total\":0}},\"stopReason\":\"toolUse\",\"timestamp\":1795989394364}}\n",
    "{\"type\":\"message\",\"id\":\"6e87a45c\",\"parentId\":\"b6a5bb03\",\"timestamp\":\"2026-11-29T21:56:34.366Z\",\"message\":{\"role\":\"toolResult\",\"toolCallId\":\"toolu_1\",\"toolName\":\"read\",\"content\":[{\"type\":\"text\",\"text\":\"devbox\\n\"}],\"isError\":false,\"timestamp\":1795989394366}}\n",
    "{\"type\":\"message\",\"id\":\"28e48737\",\"parentId\":\"6e87a45c\",\"timestamp\":\"2026-11-29T21:56:34.366Z\",\"message\":{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"The hostname is devbox.\"}],\"api\":\"anthropic-messages\",\"provider\":\"anthropic\",\"model\":\"claude-sonnet-4-6\",\"usage\":{\"input\":870,\"output\":9,\"cacheRead\":0,\"cacheWrite\":0,\"totalTokens\":879,\"cost\":{\"input\":0,\"output\":0,\"cacheRead\":0,\"cacheWrite\":0,\"total\":0}},\"stopReason\":\"stop\",\"timestamp\":1795989394366}}\n",
    "{\"type\":\"compaction\",\"id\":\"45ded087\",\"parentId\":\"28e48737\",\"timestamp\":\"2026-11-29T21:56:34.369Z\",\"summary\":\"## Goal\\nInspect host files.\",\"firstKeptEntryId\":\"28e48737\",\"tokensBefore\":903,\"details\":{\"readFiles\":[],\"modifiedFiles\":[]},\"fromHook\":false}\n",
    "{\"type\":\"label\",\"id\":\"7826e756\",\"parentId\":\"45ded087\",\"timestamp\":\"2026-11-29T21:56:34.369Z\",\"targetId\":\"444a580f\",\"label\":\"checkpoint-1\"}\n",
    "{\"type\":\"branch_summary\",\"id\":\"9cd097ec\",\"parentId\":\"444a580f\",\"timestamp\":\"2026-11-29T21:56:34.370Z\",\"fromId\":\"444a580f\",\"summary\":\"Explored elsewhere.\"}\n",
    "{\"type\":\"message\",\"id\":\"58385a0e\",\"parentId\":\"9cd097ec\",\"timestamp\":\"2026-11-29T21:56:34.370Z\",\"message\":{\"role\":\"user\",\"content\":\"Back on the main line\",\"timestamp\":1795989394370}}\n",
);

struct Env {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    state: PathBuf,
    sessions: PathBuf,
}

fn env() -> Env {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let state = tmp.path().join("state");
    let sessions = state.join("agents/main/sessions");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&sessions).unwrap();
    Env {
        _tmp: tmp,
        home,
        state,
        sessions,
    }
}

impl Env {
    fn cmd(&self) -> assert_cmd::Command {
        let mut c = claw("claw-transcript", &self.home);
        c.env("OPENCLAW_STATE_DIR", &self.state);
        c
    }
    fn write(&self, name: &str, text: &str) -> PathBuf {
        let p = self.sessions.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }
    fn store(&self, v: Value) {
        std::fs::write(
            self.sessions.join("sessions.json"),
            serde_json::to_string_pretty(&v).unwrap(),
        )
        .unwrap();
    }
}

fn run_json(c: &mut assert_cmd::Command) -> Value {
    let o = c.output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    json_of(&o.stdout)
}

#[test]
fn session_keys_ids_and_paths_resolve_to_the_same_file() {
    let e = env();
    let id = "5f0c2a8e-1b7d-4c3e-9a61-2d4f8b0e7c13";
    e.write(&format!("{id}.jsonl"), EXAMPLE);
    e.store(json!({"agent:main:main": {"sessionId": id, "updatedAt": 1}}));
    for arg in ["main", "agent:main:main", id] {
        let v = run_json(e.cmd().args(["stats", arg, "--json"]));
        assert_eq!(v["sessionId"], id, "{arg}");
        assert_eq!(v["rows"], 9);
    }
    e.cmd().args(["stats", "nope"]).assert().code(3);
    // A sessionFile that escapes the sessions directory is never followed.
    e.store(
        json!({"agent:main:main": {"sessionId": id, "sessionFile": "/etc/passwd", "updatedAt": 1}}),
    );
    let v = run_json(e.cmd().args(["stats", "main", "--json"]));
    assert!(v["path"]
        .as_str()
        .unwrap()
        .ends_with(&format!("{id}.jsonl")));
}

/// A long linear transcript (the common case: one conversation, no forks) must not be
/// walked by recursion: 150,000 rows overflowed the stack of `tree --json` and `stats`.
#[test]
fn tree_and_stats_of_a_very_deep_linear_transcript() {
    const ROWS: usize = 150_000;
    let e = env();
    let mut text = String::from("{\"type\":\"session\",\"version\":3,\"id\":\"deep\",\"timestamp\":\"2026-11-29T21:56:34.363Z\",\"cwd\":\"/\"}\n");
    for i in 0..ROWS {
        let parent = if i == 0 {
            "null".to_string()
        } else {
            format!("\"r{}\"", i - 1)
        };
        let role = if i % 2 == 0 { "user" } else { "assistant" };
        text.push_str(&format!(
            "{{\"type\":\"message\",\"id\":\"r{i}\",\"parentId\":{parent},\"timestamp\":\"2026-11-29T21:56:34.364Z\",\"message\":{{\"role\":\"{role}\",\"content\":\"m{i}\"}}}}\n"
        ));
    }
    let p = e.write("deep.jsonl", &text);
    let f = p.to_str().unwrap();
    let t = run_json(e.cmd().args(["tree", f, "--json"]));
    let nodes = t["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), ROWS);
    assert_eq!(t["roots"], json!(["r0"]));
    assert_eq!(t["leafId"], json!(format!("r{}", ROWS - 1)));
    let last = &nodes[ROWS - 1];
    assert_eq!(last["depth"], json!(ROWS - 1));
    assert_eq!(last["parentId"], json!(format!("r{}", ROWS - 2)));
    assert_eq!(last["leaf"], json!(true));
    assert_eq!(nodes[0]["children"], json!(["r1"]));
    let o = e.cmd().args(["tree", f, "--ndjson"]).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(o.stdout.iter().filter(|&&b| b == b'\n').count(), ROWS);
    let o = e.cmd().args(["tree", f]).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let drawn = String::from_utf8_lossy(&o.stdout);
    assert_eq!(drawn.lines().count(), ROWS);
    // A linear chain stays flat: no line is indented.
    assert!(
        drawn
            .lines()
            .all(|l| l.starts_with('r') || l.starts_with("* r")),
        "indented line"
    );
    let st = run_json(e.cmd().args(["stats", f, "--json"]));
    assert_eq!(st["maxDepth"], json!(ROWS));
    assert_eq!(st["branchLeaves"], json!(1));
    assert_eq!(st["branchPoints"], json!(0));
}

#[test]
fn tree_context_and_history_follow_the_active_branch() {
    let e = env();
    let p = e.write("s.jsonl", EXAMPLE);
    let f = p.to_str().unwrap();
    let t = e.cmd().args(["tree", f]).output().unwrap();
    let text = String::from_utf8_lossy(&t.stdout);
    assert!(
        text.contains("* 58385a0e user: Back on the main line"),
        "{text}"
    );
    assert!(text.contains("[checkpoint-1]"), "{text}");
    let ctx = run_json(e.cmd().args(["context", f]));
    let texts: Vec<String> = ctx["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["content"].to_string())
        .collect();
    assert_eq!(ctx["messages"].as_array().unwrap().len(), 3, "{texts:?}");
    assert!(texts[1].contains("The following is a summary of a branch"));
    let h = run_json(e.cmd().args(["history", f, "--json"]));
    assert_eq!(h["sessionKey"], f);
    assert_eq!(h["messages"].as_array().unwrap().len(), 2);
    assert_eq!(h["messages"][1]["__openclaw"]["seq"], 2);
    let h = run_json(
        e.cmd()
            .args(["history", f, "--json", "--offset", "0", "--limit", "1"]),
    );
    assert_eq!(h["totalMessages"], 2);
    assert_eq!(h["hasMore"], true);
    assert_eq!(h["nextOffset"], 1);
    let cat = e.cmd().args(["cat", f, "--branch"]).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&cat.stdout).lines().count(), 3);
}

#[test]
fn check_reports_findings_and_exits_65_on_errors() {
    let e = env();
    let good = e.write("good.jsonl", EXAMPLE);
    e.cmd()
        .args(["check", good.to_str().unwrap()])
        .assert()
        .success();
    let bad = e.write(
        "bad.jsonl",
        &format!("{EXAMPLE}not json\n{{\"type\":\"message\",\"id\":\"x\""),
    );
    let o = e
        .cmd()
        .args(["check", bad.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(65));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains(":10: error: invalid-json:"), "{out}");
    assert!(out.contains(":11: error: torn-tail:"), "{out}");
    let v: Value = serde_json::from_slice(
        &e.cmd()
            .args(["check", bad.to_str().unwrap(), "--json"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    assert_eq!(v["errors"], 2);
}

#[test]
fn check_all_cross_checks_the_store_and_locks() {
    let e = env();
    e.write("5f0c2a8e-1b7d-4c3e-9a61-2d4f8b0e7c13.jsonl", EXAMPLE);
    e.write("orphan.jsonl", EXAMPLE);
    e.store(json!({
        "agent:main:main": {"sessionId": "5f0c2a8e-1b7d-4c3e-9a61-2d4f8b0e7c13", "updatedAt": 1},
        "agent:main:gone": {"sessionId": "11111111-1111-4111-8111-111111111111", "updatedAt": 1}
    }));
    std::fs::write(
        e.sessions.join("orphan.jsonl.lock"),
        "{\n  \"pid\": 999999999,\n  \"createdAt\": \"2020-01-01T00:00:00.000Z\"\n}\n",
    )
    .unwrap();
    let o = e.cmd().args(["check", "--all"]).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("entry-without-transcript"), "{out}");
    assert!(
        out.contains("orphan.jsonl: info: transcript-without-entry"),
        "{out}"
    );
    assert!(
        out.contains("stale-lock: stale (dead-pid, too-old), removable"),
        "{out}"
    );
}

#[test]
fn repair_is_atomic_and_dry_run_changes_nothing() {
    let e = env();
    let damaged = format!("{EXAMPLE}{{\"type\":\"message\",\"id\":\"n\",\"parentId\":null,\"timestamp\":\"t\",\"message\":{{\"role\":null}}}}\ngarbage\n");
    let p = e.write("r.jsonl", &damaged);
    let f = p.to_str().unwrap();
    let v = run_json(e.cmd().args(["repair", f, "--dry-run", "--json"]));
    assert_eq!(v["changed"], true);
    assert_eq!(v["droppedLines"], 2);
    assert_eq!(std::fs::read_to_string(&p).unwrap(), damaged);
    let mode_before = std::fs::metadata(&p).unwrap().permissions().mode() & 0o7777;
    let v = run_json(e.cmd().args(["repair", f, "--json"]));
    assert_eq!(v["droppedLineNumbers"], json!([10, 11]));
    assert_eq!(std::fs::read_to_string(&p).unwrap(), EXAMPLE);
    // The file keeps its mode, as the gateway's repair keeps it (preserveExistingMode).
    assert_eq!(
        std::fs::metadata(&p).unwrap().permissions().mode() & 0o7777,
        mode_before
    );
    assert!(!p.with_extension("jsonl.lock").exists());
    // Nothing left to do.
    let v = run_json(e.cmd().args(["repair", f, "--json"]));
    assert_eq!(v["changed"], false);
}

#[test]
fn repair_recovers_a_missing_header_and_keeps_a_copy() {
    let e = env();
    let body: String = EXAMPLE.lines().skip(1).map(|l| format!("{l}\n")).collect();
    let p = e.write(
        "11111111-2222-4333-8444-555555555555.jsonl",
        &format!("garbage first\n{body}"),
    );
    let v = run_json(e.cmd().args([
        "repair",
        p.to_str().unwrap(),
        "--json",
        "--now",
        "2026-11-30T00:00:00Z",
    ]));
    assert_eq!(v["headerRecovered"], true);
    let copy = PathBuf::from(v["corruptCopy"].as_str().unwrap());
    assert!(copy
        .to_string_lossy()
        .contains(".jsonl.corrupt-2026-11-30T00-00-00-000Z-"));
    assert_eq!(
        std::fs::read_to_string(&copy).unwrap(),
        format!("garbage first\n{body}")
    );
    let first = std::fs::read_to_string(&p)
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .to_string();
    assert!(
        first.starts_with(
            "{\"type\":\"session\",\"version\":3,\"id\":\"11111111-2222-4333-8444-555555555555\""
        ),
        "{first}"
    );
}

#[test]
fn trim_torn_tail_removes_only_the_fragment() {
    let e = env();
    let p = e.write("t.jsonl", &format!("{EXAMPLE}{{\"type\":\"mess"));
    let v = run_json(
        e.cmd()
            .args(["repair", p.to_str().unwrap(), "--trim-torn-tail", "--json"]),
    );
    assert_eq!(v["removedBytes"], 13);
    assert_eq!(std::fs::read_to_string(&p).unwrap(), EXAMPLE);
}

#[test]
fn migrate_v1_to_v3() {
    let e = env();
    let p = e.write(
        "v1.jsonl",
        "{\"type\":\"session\",\"id\":\"s\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/\"}\n{\"type\":\"message\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"message\":{\"role\":\"user\",\"content\":\"a\"}}\n{\"type\":\"message\",\"timestamp\":\"2026-01-01T00:00:01.000Z\",\"message\":{\"role\":\"hookMessage\",\"content\":\"b\"}}\n",
    );
    let f = p.to_str().unwrap();
    let before = std::fs::read(&p).unwrap();
    let v = run_json(e.cmd().args(["migrate", f, "--dry-run", "--json"]));
    assert_eq!(v["migrated"], true);
    assert_eq!(std::fs::read(&p).unwrap(), before);
    run_json(e.cmd().args(["migrate", f, "--json"]));
    let rows: Vec<Value> = std::fs::read_to_string(&p)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows[0]["version"], 3);
    assert_eq!(rows[2]["parentId"], rows[1]["id"]);
    assert_eq!(rows[2]["message"]["role"], "custom");
    let v = run_json(e.cmd().args(["migrate", f, "--json"]));
    assert_eq!(v["migrated"], false);
}

/// A file whose first row is not a header (here a `session` row without an id, then a
/// v1 header): the gateway's SessionManager recovers the header before it migrates (a
/// `.corrupt-…` copy, the first real header, the other `session` rows dropped), so one
/// migrate run settles it. Expected rows as openclaw@2026.7.1's `SessionManager.open`
/// wrote them for this input (ids drawn at random). Before, every run reported
/// fromVersion 1 and drew new ids.
#[test]
fn migrate_recovers_a_missing_header_first_and_converges() {
    let e = env();
    let p = e.write(
        "nohdr.jsonl",
        "{\"type\":\"session\"}\n{\"type\":\"session\",\"id\":\"sid-2\",\"timestamp\":\"2026-11-29T21:56:34.363Z\",\"cwd\":\"/w\"}\n{\"type\":\"message\",\"timestamp\":\"2026-11-29T21:56:35.000Z\",\"message\":{\"role\":\"user\",\"content\":\"x\",\"timestamp\":1}}\n{\"type\":\"message\",\"timestamp\":\"2026-11-29T21:56:35.000Z\",\"message\":{\"role\":\"user\",\"content\":\"y\",\"timestamp\":1}}\n",
    );
    let f = p.to_str().unwrap();
    let before = std::fs::read(&p).unwrap();
    let v = run_json(e.cmd().args(["migrate", f, "--dry-run", "--json"]));
    assert_eq!(v["headerRecovered"], true);
    assert_eq!(std::fs::read(&p).unwrap(), before);
    assert_eq!(std::fs::read_dir(p.parent().unwrap()).unwrap().count(), 1);
    let v = run_json(e.cmd().args(["migrate", f, "--json"]));
    assert_eq!(v["headerRecovered"], true, "{v}");
    assert_eq!(v["fromVersion"], 1.0, "{v}");
    assert_eq!(v["idsAdded"], 2, "{v}");
    let copy = PathBuf::from(v["corruptCopy"].as_str().unwrap());
    assert_eq!(std::fs::read(&copy).unwrap(), before);
    let after = std::fs::read_to_string(&p).unwrap();
    let lines: Vec<&str> = after.lines().collect();
    assert_eq!(lines.len(), 3, "{after}");
    assert_eq!(
        lines[0],
        r#"{"type":"session","id":"sid-2","timestamp":"2026-11-29T21:56:34.363Z","cwd":"/w","version":3}"#
    );
    let rows: Vec<Value> = lines
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    for (i, r) in rows.iter().enumerate().skip(1) {
        let keys: Vec<&String> = r.as_object().unwrap().keys().collect();
        assert_eq!(
            keys,
            ["type", "timestamp", "message", "id", "parentId"],
            "row {i}"
        );
    }
    assert_eq!(rows[1]["parentId"], Value::Null);
    assert_eq!(rows[2]["parentId"], rows[1]["id"]);
    // Settled: the next run changes nothing.
    let v = run_json(e.cmd().args(["migrate", f, "--json"]));
    assert_eq!(v["migrated"], false, "{v}");
    assert_eq!(v["headerRecovered"], false, "{v}");
    assert_eq!(v["fromVersion"], 3.0, "{v}");
    assert_eq!(std::fs::read_to_string(&p).unwrap(), after);
}

#[test]
fn append_creates_a_private_header_and_dedupes() {
    let e = env();
    let id = "22222222-3333-4444-8555-666666666666";
    e.store(json!({"agent:main:chat": {"sessionId": id, "updatedAt": 1}}));
    let v = run_json(e.cmd().args([
        "append",
        "agent:main:chat",
        "--text",
        "hello",
        "--json",
        "--now",
        "2026-11-30T00:00:00Z",
    ]));
    assert_eq!(v["headerCreated"], true);
    let p = e.sessions.join(format!("{id}.jsonl"));
    assert_eq!(
        std::fs::metadata(&p).unwrap().permissions().mode() & 0o777,
        0o600
    );
    let text = std::fs::read_to_string(&p).unwrap();
    let rows: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows[0]["id"], id);
    assert_eq!(rows[1]["parentId"], Value::Null);
    assert_eq!(rows[1]["id"].as_str().unwrap().len(), 36);
    assert_eq!(rows[1]["timestamp"], "2026-11-30T00:00:00.000Z");
    let msg = r#"{"role":"user","content":"again","idempotencyKey":"k-1","timestamp":1}"#;
    let a = run_json(
        e.cmd()
            .args(["append", "agent:main:chat", "--json"])
            .write_stdin(msg),
    );
    let b = run_json(
        e.cmd()
            .args(["append", "agent:main:chat", "--json"])
            .write_stdin(msg),
    );
    assert_eq!(a["appended"], true);
    assert_eq!(b["appended"], false);
    assert_eq!(a["messageId"], b["messageId"]);
    let rows: Vec<Value> = std::fs::read_to_string(&p)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 3);
    assert_eq!(rows[2]["parentId"], rows[1]["id"]);
    e.cmd()
        .args(["append", "agent:main:chat"])
        .write_stdin("[1,2]")
        .assert()
        .code(65);
    e.cmd()
        .args(["append", "agent:main:chat"])
        .write_stdin("{nope")
        .assert()
        .code(65);
}

#[test]
fn append_after_a_torn_tail_starts_a_new_line() {
    let e = env();
    let p = e.write("torn.jsonl", &format!("{EXAMPLE}{{\"type\":\"mess"));
    run_json(
        e.cmd()
            .args(["append", p.to_str().unwrap(), "--text", "x", "--json"]),
    );
    let text = std::fs::read_to_string(&p).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[9], "{\"type\":\"mess");
    let last: Value = serde_json::from_str(lines[10]).unwrap();
    assert_eq!(last["parentId"], "58385a0e");
}

#[test]
fn lock_break_removes_only_what_the_doctor_would() {
    let e = env();
    let p = e.write("l.jsonl", EXAMPLE);
    let f = p.to_str().unwrap();
    let lock = e.sessions.canonicalize().unwrap().join("l.jsonl.lock");
    // Held by this (live, non-OpenClaw) test process but fresh: not removable by default?
    std::fs::write(
        &lock,
        format!(
            "{{\n  \"pid\": {},\n  \"createdAt\": \"{}\",\n  \"maxHoldMs\": 300000\n}}\n",
            std::process::id(),
            js::to_iso_string(support::now_ms())
        ),
    )
    .unwrap();
    let st = run_json(e.cmd().args(["lock", "status", f, "--json"]));
    assert_eq!(
        st["locks"][0]["staleReasons"],
        json!(["non-openclaw-owner"])
    );
    // A garbage payload that is fresh is kept (mtime grace), --force removes it.
    std::fs::write(&lock, "garbage").unwrap();
    e.cmd().args(["lock", "break", f]).assert().code(75);
    assert!(lock.exists());
    e.cmd()
        .args(["lock", "break", f, "--force", "--dry-run"])
        .assert()
        .success();
    assert!(lock.exists());
    e.cmd()
        .args(["lock", "break", f, "--force"])
        .assert()
        .success();
    assert!(!lock.exists());
    e.cmd().args(["lock", "break", f]).assert().code(3);
}

#[test]
fn tail_prints_the_last_messages() {
    let e = env();
    let p = e.write("t.jsonl", EXAMPLE);
    let o = e
        .cmd()
        .args(["tail", p.to_str().unwrap(), "-n", "1"])
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(out.lines().count(), 1, "{out}");
    assert!(out.contains("user: Back on the main line"), "{out}");
}
