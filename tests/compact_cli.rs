//! Integration tests for `claw-compact`: check, plan, run (extractive, summarizer,
//! summary file, dry run, refusals), truncate and auto, on generated state dirs.

mod support;

use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use support::{claw, json_of};

const SID: &str = "11111111-2222-4333-8444-555555555555";

fn setup(tmp: &Path) -> (PathBuf, PathBuf) {
    let dir = tmp.join("state/agents/main/sessions");
    std::fs::create_dir_all(&dir).unwrap();
    let mut rows = vec![
        json!({"type":"session","version":3,"id":SID,"timestamp":"2026-11-29T21:00:00.000Z","cwd":"/home/alice"}),
    ];
    let mut parent = Value::Null;
    let mut add = |id: &str, msg: Value| {
        rows.push(json!({"type":"message","id":id,"parentId":parent,"timestamp":"2026-11-29T21:00:01.000Z","message":msg}));
        parent = json!(id);
    };
    add(
        "u1",
        json!({"role":"user","content":"Deploy build 4f3a88af7304 to devbox:8080 and never restart the database","timestamp":1}),
    );
    add(
        "a1",
        json!({"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"edit","arguments":{"path":"/srv/app/config.yaml"}}],"stopReason":"toolUse","timestamp":2}),
    );
    add(
        "r1",
        json!({"role":"toolResult","toolCallId":"c1","toolName":"edit","content":[{"type":"text","text":"edited"}],"isError":false,"timestamp":3}),
    );
    add(
        "a2",
        json!({"role":"assistant","content":[{"type":"text","text":"Config updated. Next I will deploy."}],"stopReason":"stop","usage":{"totalTokens":1200},"timestamp":4}),
    );
    add(
        "u2",
        json!({"role":"user","content":format!("Now check https://ci.example.com/job/42 {}", "please ".repeat(300)),"timestamp":5}),
    );
    add(
        "a3",
        json!({"role":"assistant","content":[{"type":"text","text":"Checked."}],"stopReason":"stop","usage":{"totalTokens":5000},"timestamp":6}),
    );
    let file = dir.join(format!("{SID}.jsonl"));
    std::fs::write(
        &file,
        rows.iter()
            .map(|r| r.to_string() + "\n")
            .collect::<String>(),
    )
    .unwrap();
    std::fs::write(
        dir.join("sessions.json"),
        serde_json::to_string_pretty(&json!({"agent:main:main": {"sessionId": SID, "updatedAt": 1, "sessionFile": format!("{SID}.jsonl"), "inputTokens": 9, "outputTokens": 2, "totalTokens": 5000, "contextBudgetStatus": {"schemaVersion": 1}, "compactionCount": 1}})).unwrap(),
    )
    .unwrap();
    (tmp.join("state"), file)
}

fn cmd(home: &Path, state: &Path, args: &[&str]) -> assert_cmd::Command {
    let mut c = claw("claw-compact", home);
    c.arg("--state-dir").arg(state).args(args);
    c
}

fn store(state: &Path) -> Value {
    json_of(&std::fs::read(state.join("agents/main/sessions/sessions.json")).unwrap())
        ["agent:main:main"]
        .clone()
}

#[test]
fn check_plan_and_quiet_exit_codes() {
    let tmp = tempfile::tempdir().unwrap();
    let (state, _) = setup(tmp.path());
    let home = tmp.path().join("home");
    let o = cmd(&home, &state, &["check", "main", "--json"])
        .output()
        .unwrap();
    let j = json_of(&o.stdout);
    assert_eq!(j["contextTokens"], 5000);
    assert_eq!(j["source"], "usage");
    assert_eq!(j["reserveTokens"], 20000);
    assert_eq!(j["shouldCompact"], false);
    cmd(&home, &state, &["check", "main", "--quiet"])
        .assert()
        .code(1)
        .stdout("");
    // W = 10000: minPrompt 5000, reserve capped at 5000, threshold 5000: not strictly greater.
    cmd(
        &home,
        &state,
        &["check", "main", "--quiet", "--context-window", "10000"],
    )
    .assert()
    .code(1);
    cmd(
        &home,
        &state,
        &["check", "main", "--quiet", "--context-window", "9999"],
    )
    .assert()
    .code(0);
    let p = json_of(
        &cmd(
            &home,
            &state,
            &["plan", "main", "--keep-recent-tokens", "300"],
        )
        .output()
        .unwrap()
        .stdout,
    );
    assert_eq!(p["firstKeptEntryId"], "u2");
    assert_eq!(p["messagesToSummarize"], json!(["u1", "a1", "r1", "a2"]));
    assert_eq!(p["modifiedFiles"], json!(["/srv/app/config.yaml"]));
}

#[test]
fn run_extractive_hardens_and_updates_the_store() {
    let tmp = tempfile::tempdir().unwrap();
    let (state, file) = setup(tmp.path());
    let home = tmp.path().join("home");
    let before = std::fs::read(&file).unwrap();
    // Dry run: nothing written.
    let o = cmd(
        &home,
        &state,
        &[
            "run",
            "main",
            "--keep-recent-tokens",
            "300",
            "--dry-run",
            "--json",
        ],
    )
    .output()
    .unwrap();
    assert!(o.status.success());
    assert_eq!(std::fs::read(&file).unwrap(), before);
    assert_eq!(store(&state)["compactionCount"], 1);
    let o = cmd(
        &home,
        &state,
        &[
            "run",
            "main",
            "--keep-recent-tokens",
            "300",
            "--json",
            "--now",
            "2026-12-01T00:00:00Z",
        ],
    )
    .output()
    .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let doc = json_of(&o.stdout);
    assert_eq!(doc["hardened"], true);
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.starts_with(std::str::from_utf8(&before).unwrap()));
    let last: Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    assert_eq!(last["type"], "compaction");
    assert_eq!(last["firstKeptEntryId"], last["id"]);
    assert_eq!(last["parentId"], "a3");
    assert_eq!(last["timestamp"], "2026-12-01T00:00:00.000Z");
    assert_eq!(last["fromHook"], false);
    let summary = last["summary"].as_str().unwrap();
    for needle in [
        "## Decisions",
        "## Open TODOs",
        "## Constraints/Rules",
        "## Pending user asks",
        "## Exact identifiers",
        "4f3a88af7304",
        "devbox:8080",
        "/srv/app/config.yaml",
        "https://ci.example.com/job/42",
        "<modified-files>\n/srv/app/config.yaml\n</modified-files>",
    ] {
        assert!(summary.contains(needle), "{needle} missing:\n{summary}");
    }
    let e = store(&state);
    assert_eq!(e["compactionCount"], 2);
    // tokensAfter is dropped when the estimate grew (the peer's sanity check): then the
    // token fields stay and are marked stale.
    match doc["result"]["tokensAfter"].as_u64() {
        Some(t) => {
            assert_eq!(e["totalTokens"], t);
            assert!(e.get("inputTokens").is_none());
        }
        None => assert_eq!(e["totalTokensFresh"], false),
    }
    assert!(e.get("contextBudgetStatus").is_none());
    assert_eq!(e["compactionCheckpoints"].as_array().unwrap().len(), 1);
    assert_eq!(
        e["compactionCheckpoints"][0]["preCompaction"]["leafId"],
        "a3"
    );
    // The leaf is now a compaction: nothing more to do.
    let o = cmd(&home, &state, &["run", "main", "--json"])
        .output()
        .unwrap();
    assert_eq!(json_of(&o.stdout)["reason"], "Already compacted");
}

#[test]
fn failing_or_empty_summaries_write_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let (state, file) = setup(tmp.path());
    let home = tmp.path().join("home");
    let before = std::fs::read(&file).unwrap();
    let store_before = std::fs::read(state.join("agents/main/sessions/sessions.json")).unwrap();
    cmd(
        &home,
        &state,
        &["run", "main", "--summarizer", "cat >/dev/null; exit 4"],
    )
    .assert()
    .code(1);
    cmd(
        &home,
        &state,
        &["run", "main", "--summarizer", "cat >/dev/null; echo '   '"],
    )
    .assert()
    .code(1);
    let empty = tmp.path().join("empty.txt");
    std::fs::write(&empty, "\n\n").unwrap();
    cmd(
        &home,
        &state,
        &["run", "main", "--summary-file", empty.to_str().unwrap()],
    )
    .assert()
    .code(65);
    cmd(
        &home,
        &state,
        &["run", "main", "--summary-file", "/nonexistent/summary"],
    )
    .assert()
    .code(3);
    assert_eq!(std::fs::read(&file).unwrap(), before);
    assert_eq!(
        std::fs::read(state.join("agents/main/sessions/sessions.json")).unwrap(),
        store_before
    );
    // A summarizer sees the exact prompt and its summary lands in the entry.
    let o = cmd(
        &home,
        &state,
        &[
            "run",
            "main",
            "--keep-recent-tokens",
            "300",
            "--summarizer",
            "grep -c '^<conversation>$' >/dev/null && echo \"SUMMARY $CLAW_COMPACT_CALL\"",
            "--json",
        ],
    )
    .output()
    .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(json_of(&o.stdout)["result"]["summary"]
        .as_str()
        .unwrap()
        .starts_with("SUMMARY history\n\n<modified-files>"));
}

#[test]
fn refuses_transcripts_the_gateway_would_repair() {
    let tmp = tempfile::tempdir().unwrap();
    let (state, file) = setup(tmp.path());
    let home = tmp.path().join("home");
    let mut text = std::fs::read_to_string(&file).unwrap();
    text.push_str("{\"type\":\"message\",\"id\":\"torn\"");
    std::fs::write(&file, &text).unwrap();
    let o = cmd(&home, &state, &["run", "main"]).output().unwrap();
    assert_eq!(o.status.code(), Some(65));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains(":8:") && err.contains("torn"), "{err}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
    cmd(&home, &state, &["run", "nope"]).assert().code(3);
}

#[test]
fn rotate_points_the_store_at_a_successor_and_truncate_trims() {
    let tmp = tempfile::tempdir().unwrap();
    let (state, file) = setup(tmp.path());
    let home = tmp.path().join("home");
    let before = std::fs::read(&file).unwrap();
    let o = cmd(
        &home,
        &state,
        &[
            "run",
            "main",
            "--rotate",
            "--keep-tail",
            "--keep-recent-tokens",
            "300",
            "--json",
        ],
    )
    .output()
    .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let doc = json_of(&o.stdout);
    assert_eq!(
        std::fs::read(&file).unwrap(),
        before,
        "the old transcript is untouched"
    );
    let e = store(&state);
    let succ = PathBuf::from(e["sessionFile"].as_str().unwrap());
    assert_eq!(e["sessionId"], doc["result"]["sessionId"]);
    assert_eq!(
        e["usageFamilySessionIds"],
        json!([SID, doc["result"]["sessionId"]])
    );
    let rows: Vec<Value> = std::fs::read_to_string(&succ)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&succ).unwrap().permissions().mode() & 0o777,
        0o600
    );
    assert_eq!(rows[0]["parentSession"], file.to_string_lossy().as_ref());
    // The preserved assistant (a2) is the new firstKeptEntryId and a root.
    assert_eq!(rows[1]["id"], "a2");
    assert_eq!(rows[1]["parentId"], Value::Null);
    assert_eq!(rows.last().unwrap()["firstKeptEntryId"], "a2");
    // truncate the successor to 3 lines.
    let o = cmd(
        &home,
        &state,
        &["truncate", "main", "--max-lines", "3", "--json"],
    )
    .output()
    .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let t = json_of(&o.stdout);
    assert_eq!(t["compacted"], true);
    assert_eq!(t["kept"], 3);
    assert!(Path::new(t["archived"].as_str().unwrap()).is_file());
    assert_eq!(std::fs::read_to_string(&succ).unwrap().lines().count(), 3);
    let e2 = store(&state);
    assert!(e2.get("totalTokens").is_none() && e2.get("totalTokensFresh").is_none());
    assert_eq!(e2["compactionCount"], e["compactionCount"]);
    let o = cmd(
        &home,
        &state,
        &["truncate", "main", "--max-lines", "3", "--json"],
    )
    .output()
    .unwrap();
    assert_eq!(
        json_of(&o.stdout),
        json!({"ok": true, "key": "agent:main:main", "compacted": false, "kept": 3})
    );
}

#[test]
fn auto_compacts_what_is_due() {
    let tmp = tempfile::tempdir().unwrap();
    let (state, file) = setup(tmp.path());
    let home = tmp.path().join("home");
    let o = cmd(&home, &state, &["auto", "--all", "--ndjson"])
        .output()
        .unwrap();
    assert!(o.status.success());
    let line = json_of(
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .next()
            .unwrap()
            .as_bytes(),
    );
    assert_eq!(line["result"]["action"], "skipped");
    let before = std::fs::read(&file).unwrap();
    let o = cmd(
        &home,
        &state,
        &[
            "auto",
            "--all",
            "--context-window",
            "9000",
            "--keep-recent-tokens",
            "300",
            "--ndjson",
        ],
    )
    .output()
    .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let line = json_of(
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .next()
            .unwrap()
            .as_bytes(),
    );
    assert_eq!(line["session"], "agent:main:main");
    assert_eq!(line["result"]["action"], "compacted");
    assert!(std::fs::read(&file).unwrap().len() > before.len());
}
