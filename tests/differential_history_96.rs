//! The history differential against openclaw@2026.9.6 (issue 25): a real 9.6 gateway on a
//! private state dir holding the doctor-imported agent DBs (`agent_db_support`), and, for
//! every session of the fixture (compressed rows, the compaction, the branch, the inline
//! image included), `claw-transcript history KEY --json` equal to the `sessions_history`
//! projection that gateway serves from the same DB (through `/tools/invoke`), with and
//! without `--include-tools`, and a bounded `--limit`.
//!
//! The gateway writes the DB at start (it repairs session titles); clawstate reads the DB
//! after that, so both read the same rows. Skipped, with a note, when 2026.9.6 is not
//! available or `CLAWSTATE_SKIP_PEER` is set. No wall-time assertion; every wait has a
//! deadline (the field harness's).

mod agent_db_support;
mod field_support;
mod support;

use std::path::Path;

use field_support::{assert_same_json, claw_json, FakeModel, Gateway};
use serde_json::{json, Value};

/// Every session key of `agent` in its DB, in key order.
fn session_keys(db: &Path) -> Vec<String> {
    let o = std::process::Command::new("sqlite3")
        .arg(db)
        .arg("SELECT session_key FROM session_nodes ORDER BY session_key")
        .output()
        .expect("sqlite3 runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

/// A 9.6 gateway on a copy of the imported fixture, started.
fn gateway_on_fixture() -> Option<(Gateway, FakeModel)> {
    let peer = agent_db_support::peer96()?;
    let template = agent_db_support::imported_template()?;
    let model = FakeModel::start();
    let patch = json!({"agents": {"list": [{"id": "main", "default": true}, {"id": "work"}]}});
    let mut gw = Gateway::new(&peer, &model, &patch);
    // The fixture's state dir, without its config (the gateway's own is kept).
    for e in std::fs::read_dir(template.join(".openclaw")).expect("fixture") {
        let e = e.expect("entry");
        if e.file_name() == "openclaw.json" {
            continue;
        }
        let st = std::process::Command::new("cp")
            .arg("-a")
            .arg(e.path())
            .arg(&gw.state)
            .status()
            .expect("cp");
        assert!(st.success());
    }
    gw.start();
    Some((gw, model))
}

fn ours(gw: &Gateway, key: &str, extra: &[&str]) -> Value {
    claw_json({
        let mut c = gw.claw("claw-transcript");
        c.args(["history", key, "--json"]).args(extra);
        c
    })
}

#[test]
fn history_of_every_db_session_is_the_96_gateways_sessions_history() {
    let Some((gw, _model)) = gateway_on_fixture() else {
        return;
    };
    let mut compared = 0;
    let mut seen_compaction = false;
    for agent in agent_db_support::AGENTS {
        let db = gw
            .state
            .join("agents")
            .join(agent)
            .join("agent/openclaw-agent.sqlite");
        for key in session_keys(&db) {
            for (tools, extra) in [(true, &["--include-tools"][..]), (false, &[][..])] {
                let theirs = gw.tool(
                    "agent:main:main",
                    "sessions_history",
                    json!({"sessionKey": key, "includeTools": tools}),
                );
                let mine = ours(&gw, &key, extra);
                assert_same_json(&mine, &theirs, &format!("history {key} (tools: {tools})"));
                assert_eq!(
                    serde_json::to_string(&mine).unwrap(),
                    serde_json::to_string(&theirs).unwrap(),
                    "history {key}: key order"
                );
                seen_compaction |= theirs.to_string().contains("\"kind\":\"compaction\"");
                compared += 1;
            }
            let theirs = gw.tool(
                "agent:main:main",
                "sessions_history",
                json!({"sessionKey": key, "includeTools": true, "limit": 3}),
            );
            let mine = ours(&gw, &key, &["--include-tools", "--limit", "3"]);
            assert_same_json(&mine, &theirs, &format!("history {key} --limit 3"));
        }
    }
    assert_eq!(compared, 20, "ten sessions, with and without tools");
    assert!(seen_compaction, "the fixture's compactions are compared");
}

/// The lines of one long transcript: `turns` user/assistant turns, each with events that
/// history does not show between them (a custom entry, a model change every few turns),
/// and a compaction in the middle.
fn long_transcript(id: &str, turns: usize) -> Vec<String> {
    let ts = |ms: i64| clawstate::js::to_iso_string(ms);
    let mut t = agent_db_support::FIXTURE_NOW - 86_400_000;
    let mut lines = vec![
        json!({"type":"session","version":3,"id":id,"timestamp":ts(t),"cwd":"/home/u"}).to_string(),
    ];
    let mut parent = Value::Null;
    let mut n = 0u32;
    let mut next = |parent: &mut Value, v: Value| {
        n += 1;
        let id = format!("{n:08x}");
        let mut v = v;
        v["id"] = json!(id);
        v["parentId"] = parent.clone();
        *parent = json!(id);
        v.to_string()
    };
    for turn in 0..turns {
        t += 60_000;
        let user = json!({"type":"message","timestamp":ts(t),
            "message":{"role":"user","content":[{"type":"text","text":format!("question {turn}")}],"timestamp":t}});
        lines.push(next(&mut parent, user));
        let custom = json!({"type":"custom","customType":"clawstate-test","timestamp":ts(t),"data":{"turn":turn}});
        lines.push(next(&mut parent, custom));
        if turn % 5 == 0 {
            let change = json!({"type":"model_change","timestamp":ts(t),"provider":"openai","modelId":"gpt-5.5"});
            lines.push(next(&mut parent, change));
        }
        let answer = json!({"type":"message","timestamp":ts(t + 500),
            "message":{"role":"assistant","content":[{"type":"text","text":format!("answer {turn}")}],
              "api":"openai-responses","provider":"openai","model":"gpt-5.5","stopReason":"stop","timestamp":t + 500}});
        lines.push(next(&mut parent, answer));
        if turn == turns / 2 {
            let firstkept = parent.clone();
            let compaction = json!({"type":"compaction","timestamp":ts(t + 600),
                "summary":"Summary of the earlier turns.","firstKeptEntryId":firstkept,"tokensBefore":4242});
            lines.push(next(&mut parent, compaction));
        }
    }
    lines
}

/// A HOME with one long session (`agent:main:main`), imported by 9.6's doctor.
fn imported_long_session(peer: &Path, turns: usize) -> tempfile::TempDir {
    let home = tempfile::tempdir().expect("tempdir");
    let dir = home.path().join(".openclaw/agents/main/sessions");
    std::fs::create_dir_all(&dir).expect("mkdir");
    let id = "5d0c9a9e-1f43-4c4e-9a55-2b7f0c6e1d25";
    let file = dir.join(format!("{id}.jsonl"));
    std::fs::write(&file, long_transcript(id, turns).join("\n") + "\n").expect("write");
    let store = json!({"agent:main:main": {"sessionId": id,
        "updatedAt": agent_db_support::FIXTURE_NOW - 3_600_000, "sessionFile": file}});
    std::fs::write(dir.join("sessions.json"), store.to_string()).expect("write");
    std::fs::write(
        home.path().join(".openclaw/openclaw.json"),
        r#"{"agents":{"list":[{"id":"main","default":true}]}}"#,
    )
    .expect("write");
    agent_db_support::doctor_import(peer, home.path(), "history fixture");
    home
}

/// A session longer than the window a page reads (events that history does not show
/// between the messages, a compaction in the middle): every message's `__openclaw.seq` is
/// its position from the start of the transcript, as 9.6 numbers it, not from the start
/// of the window.
#[test]
fn a_long_db_sessions_history_numbers_from_the_transcript_start() {
    let Some(peer) = agent_db_support::peer96() else {
        return;
    };
    let home = imported_long_session(&peer, 150);
    let model = FakeModel::start();
    let patch = json!({"agents": {"list": [{"id": "main", "default": true}]}});
    let mut gw = Gateway::new(&peer, &model, &patch);
    for e in std::fs::read_dir(home.path().join(".openclaw")).expect("imported") {
        let e = e.expect("entry");
        if e.file_name() == "openclaw.json" {
            continue;
        }
        let st = std::process::Command::new("cp")
            .arg("-a")
            .arg(e.path())
            .arg(&gw.state)
            .status()
            .expect("cp");
        assert!(st.success());
    }
    gw.start();
    let key = "agent:main:main";
    // Inputs accepted while a turn ran, not yet in the transcript: one consumed since (not
    // shown), one `queued` that no turn holds (the gateway reports and stores it
    // `interrupted`), and one too long for the tool's share of the budget.
    let db = gw.state.join("agents/main/agent/openclaw-agent.sqlite");
    let long = "why ".repeat(1500);
    let inserts = [
        (
            "in-1",
            "interrupted",
            json!({"role":"user","content":"a question sent while the turn ran","timestamp":1}),
            "NULL",
        ),
        (
            "in-2",
            "cancelled",
            json!({"role":"user","content":[{"type":"text","text":long}],"timestamp":2}),
            "NULL",
        ),
        (
            "in-3",
            "queued",
            json!({"role":"user","content":[{"type":"text","text":"and another"}]}),
            "NULL",
        ),
        (
            "in-4",
            "queued",
            json!({"role":"user","content":"consumed already"}),
            "'00000001'",
        ),
    ];
    for (i, (id, state, message, consumed)) in inserts.iter().enumerate() {
        let q = format!(
            ".timeout 10000\nINSERT INTO session_pending_inputs (input_id, session_key, session_id, idempotency_key, run_id, request_hash, message_json, lifecycle_generation, state, accepted_at, consumed_event_id) \
             SELECT '{id}', session_key, current_session_id, 'idem-{id}', 'run-{id}', 'hash', '{m}', 'gen-1', '{state}', {at}, {consumed} FROM session_nodes WHERE session_key = '{key}';",
            m = message.to_string().replace('\'', "''"),
            at = agent_db_support::FIXTURE_NOW - 1000 + i as i64,
        );
        let o = std::process::Command::new("sqlite3")
            .arg(&db)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .and_then(|mut c| {
                use std::io::Write;
                c.stdin.take().expect("stdin").write_all(q.as_bytes())?;
                c.wait_with_output()
            })
            .expect("sqlite3 runs");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let mut seen_pending = false;
    for limit in [Some(3), Some(20), None] {
        for tools in [true, false] {
            let mut args = json!({"sessionKey": key, "includeTools": tools});
            let mut extra: Vec<String> = Vec::new();
            if tools {
                extra.push("--include-tools".into());
            }
            if let Some(l) = limit {
                args["limit"] = json!(l);
                extra.extend(["--limit".into(), l.to_string()]);
            }
            let theirs = gw.tool(key, "sessions_history", args);
            let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
            let mine = ours(&gw, key, &extra);
            let what = format!("history --limit {limit:?} (tools: {tools})");
            assert_same_json(&mine, &theirs, &what);
            assert_eq!(
                serde_json::to_string(&mine).unwrap(),
                serde_json::to_string(&theirs).unwrap(),
                "{what}: key order"
            );
            let last_seq = theirs["messages"]
                .as_array()
                .and_then(|m| m.last())
                .and_then(|m| m["__openclaw"]["seq"].as_u64());
            // 150 turns of two messages and a compaction: numbered from the start.
            assert_eq!(last_seq, Some(301), "{what}: {theirs}");
            seen_pending |= theirs["pendingInputs"]["total"] == json!(3)
                && theirs["pendingInputs"]["items"].as_array().map(Vec::len) == Some(3);
        }
    }
    assert!(seen_pending, "the pending inputs are compared");
}
