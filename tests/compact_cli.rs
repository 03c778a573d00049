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
    // The document's keys, in the order the peer-shaped report prints them.
    let keys = |v: &Value| -> Vec<String> {
        v.as_object()
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default()
    };
    assert_eq!(
        keys(&doc),
        [
            "ok",
            "compacted",
            "dryRun",
            "key",
            "path",
            "result",
            "entry",
            "hardened",
            "plannedFirstKeptEntryId",
            "isSplitTurn",
            "rotation",
            "repairFirst",
            "store",
            "signal",
            "warning"
        ]
    );
    assert_eq!(
        keys(&doc["result"]),
        [
            "summary",
            "firstKeptEntryId",
            "tokensBefore",
            "tokensAfter",
            "details"
        ]
    );
    assert_eq!(keys(&doc["store"]), ["path", "written", "entry"]);
    assert_eq!(doc["store"]["written"], true);
    match keys(&doc["signal"]).as_slice() {
        [] => assert_eq!(doc["signal"], Value::Null),
        [r, x] => {
            assert_eq!(
                (r.as_str(), doc["signal"]["recorded"].as_bool()),
                ("recorded", Some(x == "sequence"))
            );
            assert!(x == "sequence" || x == "error", "{}", doc["signal"]);
        }
        other => panic!("signal {other:?}"),
    }
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
fn refuses_transcripts_the_gateway_would_repair_with_no_repair() {
    let tmp = tempfile::tempdir().unwrap();
    let (state, file) = setup(tmp.path());
    let home = tmp.path().join("home");
    let mut text = std::fs::read_to_string(&file).unwrap();
    text.push_str("{\"type\":\"message\",\"id\":\"torn\"");
    std::fs::write(&file, &text).unwrap();
    let o = cmd(&home, &state, &["run", "main", "--no-repair"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(65));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains(":8:") && err.contains("torn"), "{err}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
    cmd(&home, &state, &["run", "nope"]).assert().code(3);
    // Without --no-repair the torn line is dropped first, as the gateway drops it.
    let d = json_of(
        &cmd(
            &home,
            &state,
            &["run", "main", "--json", "--keep-recent-tokens", "300"],
        )
        .output()
        .unwrap()
        .stdout,
    );
    assert_eq!(d["repairFirst"]["droppedLines"], 1, "{d}");
    assert_eq!(d["compacted"], true);
    assert!(!std::fs::read_to_string(&file).unwrap().contains("torn"));
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

// ---- A transcript the gateway repairs before compacting (one failed turn). ----

const FAILED_SID: &str = "5fdb620a-1111-4222-8333-444455556666";
const NOW: &str = "2026-12-01T12:00:00.000Z";

/// A transcript as the gateway writes it, with one failed turn: the assistant's error
/// reply has `content: []` (the gateway's repair pass gives it the fallback text on the
/// next run). The file is 0644, as the gateway may have it.
fn setup_failed_turn(tmp: &Path) -> (PathBuf, PathBuf) {
    let dir = tmp.join("state/agents/main/sessions");
    std::fs::create_dir_all(&dir).unwrap();
    let usage = |i: u64, o: u64| json!({"input":i,"output":o,"cacheRead":0,"cacheWrite":0,"totalTokens":i + o,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}});
    let assistant = |text: &str, u: Value, ts: u64| json!({"role":"assistant","content":[{"type":"text","text":text}],"api":"openai-completions","provider":"fake","model":"fake-model","usage":u,"stopReason":"stop","timestamp":ts,"responseId":"c1"});
    let rows = [
        json!({"type":"session","version":3,"id":FAILED_SID,"timestamp":"2026-12-01T10:00:00.000Z","cwd":"/home/alice/.openclaw/workspace"}),
        json!({"type":"model_change","id":"ff47c039","parentId":null,"timestamp":"2026-12-01T10:00:00.100Z","provider":"fake","modelId":"fake-model"}),
        json!({"type":"thinking_level_change","id":"44821d2a","parentId":"ff47c039","timestamp":"2026-12-01T10:00:00.100Z","thinkingLevel":"off"}),
        json!({"type":"custom","customType":"model-snapshot","data":{"timestamp":1796119200200u64,"provider":"fake","modelApi":"openai-completions","modelId":"fake-model"},"id":"51ab3295","parentId":"44821d2a","timestamp":"2026-12-01T10:00:00.200Z"}),
        json!({"type":"message","id":"567d0d37","parentId":"51ab3295","timestamp":"2026-12-01T10:00:01.000Z","message":{"role":"user","content":format!("Deploy build 4f3a88af7304 to devbox:8080 {}", "please ".repeat(200)),"timestamp":1796119201000u64}}),
        json!({"type":"message","id":"2a6b5549","parentId":"567d0d37","timestamp":"2026-12-01T10:00:02.000Z","message":assistant(&format!("Deployed. {}", "ok ".repeat(200)), usage(900, 300), 1796119201500)}),
        json!({"type":"custom","customType":"openclaw:bootstrap-context:full","data":{"timestamp":1796119202100u64,"runId":"chatcmpl_1","sessionId":FAILED_SID},"id":"179ae7d6","parentId":"2a6b5549","timestamp":"2026-12-01T10:00:02.100Z"}),
        json!({"type":"message","id":"94d4bd35","parentId":"179ae7d6","timestamp":"2026-12-01T10:00:03.000Z","message":{"role":"user","content":"now restart it","timestamp":1796119203000u64}}),
        json!({"type":"message","id":"37fb2115","parentId":"94d4bd35","timestamp":"2026-12-01T10:00:03.500Z","message":{"role":"assistant","content":[],"api":"openai-completions","provider":"fake","model":"fake-model","usage":usage(0, 0),"stopReason":"error","timestamp":1796119203400u64,"errorMessage":"400 scripted failure","errorType":"invalid_request_error"}}),
        json!({"type":"message","id":"2064b190","parentId":"37fb2115","timestamp":"2026-12-01T10:00:04.000Z","message":{"role":"user","content":"try again please","timestamp":1796119204000u64}}),
        json!({"type":"message","id":"9ac92564","parentId":"2064b190","timestamp":"2026-12-01T10:00:05.000Z","message":assistant("Restarted.", usage(1300, 20), 1796119204500)}),
    ];
    let file = dir.join(format!("{FAILED_SID}.jsonl"));
    std::fs::write(
        &file,
        rows.iter()
            .map(|r| r.to_string() + "\n")
            .collect::<String>(),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    std::fs::write(
        dir.join("sessions.json"),
        serde_json::to_string_pretty(&json!({"agent:main:main": {"sessionId": FAILED_SID, "updatedAt": 1, "sessionFile": format!("{FAILED_SID}.jsonl"), "compactionCount": 0}})).unwrap(),
    )
    .unwrap();
    (tmp.join("state"), file)
}

fn ok_json(mut c: impl std::borrow::BorrowMut<assert_cmd::Command>) -> Value {
    let c = c.borrow_mut();
    let o = c.output().unwrap();
    assert!(
        o.status.success(),
        "exit {:?}: {}",
        o.status.code(),
        String::from_utf8_lossy(&o.stderr)
    );
    json_of(&o.stdout)
}

/// The file with every compaction's id (and a hardened `firstKeptEntryId` naming it)
/// replaced: the ids are random, the rest must agree byte for byte.
fn without_compaction_ids(file: &Path) -> String {
    let text = std::fs::read_to_string(file).unwrap();
    let mut out = text.clone();
    for line in text.lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        if v["type"] == "compaction" {
            out = out.replace(
                &format!("\"{}\"", v["id"].as_str().unwrap()),
                "\"COMPACTION\"",
            );
        }
    }
    out
}

#[test]
fn plan_and_check_work_on_the_repaired_view() {
    let tmp = tempfile::tempdir().unwrap();
    let (state, file) = setup_failed_turn(tmp.path());
    let home = tmp.path().join("home");
    let before = std::fs::read(&file).unwrap();
    let p = ok_json(cmd(
        &home,
        &state,
        &[
            "plan",
            "main",
            "--keep-recent-tokens",
            "5",
            "--json",
            "--messages",
        ],
    ));
    assert_eq!(p["compactable"], true, "{p}");
    let r = &p["repairFirst"];
    assert_eq!(r["rewrittenAssistantMessages"], 1, "{p}");
    assert_eq!(r["droppedLines"], 0);
    assert_eq!(r["insertedToolResults"], 0);
    assert_eq!(r["summary"], "rewrote 1 assistant message(s)");
    assert_eq!(p["firstKeptEntryId"], "2064b190");
    assert_eq!(
        p["messagesToSummarize"],
        json!(["567d0d37", "2a6b5549", "94d4bd35", "37fb2115"])
    );
    // The failed turn as the repair pass rewrites it.
    assert_eq!(
        p["messages"]["messagesToSummarize"][3]["content"],
        json!([{"type": "text", "text": "[assistant turn failed before producing content]"}])
    );
    let c = ok_json(cmd(&home, &state, &["check", "main", "--json"]));
    assert_eq!(c["repairFirst"]["rewrittenAssistantMessages"], 1, "{c}");
    assert_eq!(c["source"], "usage");
    assert_eq!(
        std::fs::read(&file).unwrap(),
        before,
        "plan and check write nothing"
    );
    // A transcript that needs no repair says so.
    let (state2, _) = setup(&tmp.path().join("clean"));
    let p = ok_json(cmd(&home, &state2, &["plan", "main", "--json"]));
    assert_eq!(p["repairFirst"], Value::Null, "{p}");
}

#[test]
fn run_repairs_then_compacts_as_repair_then_run_would() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let (state_a, file_a) = setup_failed_turn(&tmp.path().join("a"));
    let (state_b, file_b) = setup_failed_turn(&tmp.path().join("b"));
    let run_args = [
        "run",
        "main",
        "--keep-recent-tokens",
        "50",
        "--json",
        "--now",
        NOW,
    ];
    let a = ok_json(cmd(&home, &state_a, &run_args));
    assert_eq!(a["compacted"], true, "{a}");
    assert_eq!(a["repairFirst"]["rewrittenAssistantMessages"], 1, "{a}");
    // B: the two steps the gateway takes, by hand.
    let r = ok_json(
        claw("claw-transcript", &home)
            .arg("--state-dir")
            .arg(&state_b)
            .args(["repair", "main", "--json", "--now", NOW]),
    );
    assert_eq!(r["changed"], true, "{r}");
    let b = ok_json(cmd(&home, &state_b, &run_args));
    assert_eq!(b["repairFirst"], Value::Null);
    assert_eq!(
        without_compaction_ids(&file_a),
        without_compaction_ids(&file_b),
        "claw-compact run == claw-transcript repair + claw-compact run"
    );
    let text = std::fs::read_to_string(&file_a).unwrap();
    assert!(text.contains("[assistant turn failed before producing content]"));
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&file_a).unwrap().permissions().mode() & 0o777,
        0o644,
        "the file keeps its mode"
    );
    let (sa, sb) = (store(&state_a), store(&state_b));
    for k in [
        "compactionCount",
        "totalTokens",
        "totalTokensFresh",
        "sessionId",
    ] {
        assert_eq!(sa[k], sb[k], "{k}");
    }
    assert_eq!(a["result"]["summary"], b["result"]["summary"]);
    assert_eq!(a["result"]["tokensBefore"], b["result"]["tokensBefore"]);
    // Nothing is left beside the transcript.
    let names: Vec<String> = std::fs::read_dir(file_a.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
}

#[test]
fn run_no_repair_refuses_and_dry_run_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let (state, file) = setup_failed_turn(tmp.path());
    let home = tmp.path().join("home");
    let before = std::fs::read(&file).unwrap();
    let o = cmd(&home, &state, &["run", "main", "--no-repair"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(65));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(":9:") && err.contains("claw-transcript repair"),
        "{err}"
    );
    let o = cmd(&home, &state, &["auto", "main", "--no-repair", "--json"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(65));
    let d = ok_json(cmd(
        &home,
        &state,
        &[
            "run",
            "main",
            "--dry-run",
            "--keep-recent-tokens",
            "50",
            "--json",
        ],
    ));
    assert_eq!(d["compacted"], true);
    assert_eq!(d["repairFirst"]["rewrittenAssistantMessages"], 1);
    assert_eq!(std::fs::read(&file).unwrap(), before);
}

#[test]
fn run_rotate_repairs_the_old_transcript_as_repair_would() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let (state_a, file_a) = setup_failed_turn(&tmp.path().join("a"));
    let (state_b, file_b) = setup_failed_turn(&tmp.path().join("b"));
    let a = ok_json(cmd(
        &home,
        &state_a,
        &[
            "run",
            "main",
            "--rotate",
            "--keep-recent-tokens",
            "50",
            "--json",
            "--now",
            NOW,
        ],
    ));
    assert_eq!(a["compacted"], true, "{a}");
    ok_json(
        claw("claw-transcript", &home)
            .arg("--state-dir")
            .arg(&state_b)
            .args(["repair", "main", "--json", "--now", NOW]),
    );
    assert_eq!(
        std::fs::read(&file_a).unwrap(),
        std::fs::read(&file_b).unwrap(),
        "the old transcript is what claw-transcript repair writes"
    );
    let e = store(&state_a);
    let succ = PathBuf::from(e["sessionFile"].as_str().unwrap());
    let last: Value = serde_json::from_str(
        std::fs::read_to_string(&succ)
            .unwrap()
            .lines()
            .last()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(last["type"], "compaction");
}

/// The store cannot be replaced (`chattr +i`) after the repaired transcript side is
/// ready: nothing changes, the repair included.
#[test]
fn a_failed_store_write_undoes_the_repair_too() {
    for rotate in [false, true] {
        let tmp = tempfile::tempdir().unwrap();
        let (state, file) = setup_failed_turn(tmp.path());
        let home = tmp.path().join("home");
        let before = std::fs::read(&file).unwrap();
        let store_path = state.join("agents/main/sessions/sessions.json");
        let dir = file.parent().unwrap().to_path_buf();
        let listing = || {
            let mut v: Vec<String> = std::fs::read_dir(&dir)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            v.sort();
            v
        };
        let names = listing();
        {
            let Some(_guard) = support::Immutable::set(&[&store_path]) else {
                return;
            };
            let mut args = vec!["run", "main", "--keep-recent-tokens", "50"];
            if rotate {
                args.push("--rotate");
            }
            let o = cmd(&home, &state, &args).output().unwrap();
            assert_eq!(
                o.status.code(),
                Some(73),
                "{}",
                String::from_utf8_lossy(&o.stderr)
            );
        }
        assert_eq!(std::fs::read(&file).unwrap(), before, "rotate {rotate}");
        assert_eq!(listing(), names, "rotate {rotate}");
    }
}

/// Nothing to compact (the leaf is a compaction already): `run` still writes the repair,
/// as the gateway's repair pass runs before compaction looks; `--dry-run` does not.
#[test]
fn run_with_nothing_to_compact_still_repairs() {
    let tmp = tempfile::tempdir().unwrap();
    let (state, file) = setup_failed_turn(tmp.path());
    let home = tmp.path().join("home");
    let mut text = std::fs::read_to_string(&file).unwrap();
    text.push_str(&(json!({"type":"compaction","id":"c0ffee00","parentId":"9ac92564","timestamp":"2026-12-01T10:00:06.000Z","summary":"done","firstKeptEntryId":"c0ffee00","tokensBefore":2000,"details":{"readFiles":[],"modifiedFiles":[]},"fromHook":false}).to_string() + "\n"));
    std::fs::write(&file, &text).unwrap();
    let d = ok_json(cmd(&home, &state, &["run", "main", "--dry-run", "--json"]));
    assert_eq!(d["reason"], "Already compacted", "{d}");
    assert_eq!(d["repairFirst"]["rewrittenAssistantMessages"], 1);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
    let r = ok_json(cmd(&home, &state, &["run", "main", "--json", "--now", NOW]));
    assert_eq!(r["compacted"], false);
    assert_eq!(r["repairFirst"]["rewrittenAssistantMessages"], 1);
    let now = std::fs::read_to_string(&file).unwrap();
    assert!(now.contains("[assistant turn failed before producing content]"));
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&file).unwrap().permissions().mode() & 0o777,
        0o644
    );
    let again = ok_json(
        claw("claw-transcript", &home)
            .arg("--state-dir")
            .arg(&state)
            .args(["repair", "main", "--json"]),
    );
    assert_eq!(
        again["changed"], false,
        "repaired as claw-transcript repair would"
    );
}
