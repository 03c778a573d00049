//! `claw-migrate export` and `verify` after real turns of a real openclaw@2026.9.6 gateway
//! (the field suite's fake model, `field_support`) on a DB its own doctor imported: the
//! sessions and events the gateway wrote after the migration export as it stored them,
//! the imported ones still byte for byte from their originals, and the export imports
//! again with 9.6's doctor into the same events.

mod agent_db_support;
mod field_support;
mod support;

use std::path::Path;

use agent_db_support::{imported_template, peer96};
use field_support::{FakeModel, Gateway};
use serde_json::json;
use support::{claw, json_of};

fn copy_tree(from: &Path, to: &Path) {
    let st = std::process::Command::new("cp")
        .arg("-a")
        .arg(from)
        .arg(to)
        .status()
        .unwrap();
    assert!(st.success());
}

/// Every session's current events, by key, of an agent DB.
fn events_by_key(db: &Path) -> std::collections::BTreeMap<String, Vec<String>> {
    let db = clawstate::agent_db::AgentDb::open(db).unwrap();
    let mut st = db
        .conn
        .prepare("SELECT session_key, current_session_id FROM session_nodes")
        .unwrap();
    let rows: Vec<(String, String)> = st
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    rows.into_iter()
        .filter(|(k, _)| !clawstate::agent_db::store_text::is_internal_effects_key(k))
        .map(|(k, sid)| (k, clawstate::agent_db::events::lines(&db, &sid).unwrap()))
        .collect()
}

#[test]
fn sessions_a_9_6_gateway_wrote_after_the_migration_export_as_it_stored_them() {
    let Some(peer) = peer96() else { return };
    let Some(template) = imported_template() else {
        return;
    };
    let model = FakeModel::start();
    let mut gw = Gateway::new(
        &peer,
        &model,
        &json!({"agents": {"defaults": {"contextTokens": 32000}}}),
    );
    for part in ["agents", "state", "session-sqlite-migration-runs"] {
        copy_tree(&template.join(".openclaw").join(part), &gw.state.join(part));
    }
    gw.start();
    // 9.6 hands the model its internal context with the text; the fake model acks.
    for (key, text) in [
        ("agent:main:main", "after the migration"),
        ("agent:main:field-new", "caf\u{e9} first"),
    ] {
        let reply = gw.chat(key, text);
        assert!(reply.starts_with("ack: "), "{key}: {reply}");
    }
    gw.stop();

    let db = gw.state.join("agents/main/agent/openclaw-agent.sqlite");
    let state = gw.state.to_string_lossy().into_owned();
    let out = gw.root.join("export");
    let o = claw("claw-migrate", &gw.home)
        .args([
            "--state-dir",
            &state,
            "--agent",
            "main",
            "--json",
            "export",
            "--out",
        ])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let doc = json_of(&o.stdout);
    let rows = doc["sessions"].as_array().unwrap();
    let events = events_by_key(&db);
    let new = rows
        .iter()
        .find(|r| r["sessionKey"] == "agent:main:field-new")
        .expect("the new session is exported");
    assert_eq!(new["mode"], "re-serialised");
    let mut modes = Vec::new();
    for r in rows {
        let key = r["sessionKey"].as_str().unwrap();
        let sid = r["sessionId"].as_str().unwrap();
        let file = out.join(format!("agents/main/sessions/{sid}.jsonl"));
        let bytes = std::fs::read(&file).unwrap();
        let lines = &events[key];
        match r["mode"].as_str().unwrap() {
            // As 9.6 stored it, one event per line.
            "re-serialised" => assert_eq!(bytes, (lines.join("\n") + "\n").into_bytes(), "{key}"),
            // The original, byte for byte, then what 9.6 appended as it stored it.
            "byte-identical" | "original+appended" => {
                let original = std::fs::read(r["original"].as_str().unwrap()).unwrap();
                assert!(bytes.starts_with(&original), "{key}");
                let appended = r["appendedEvents"].as_u64().unwrap() as usize;
                let tail: String = lines[lines.len() - appended..]
                    .iter()
                    .map(|l| format!("{l}\n"))
                    .collect();
                assert_eq!(&bytes[original.len()..], tail.as_bytes(), "{key}");
            }
            m => panic!("{key}: mode {m}"),
        }
        modes.push((key.to_string(), r["mode"].clone()));
    }
    // The gateway's turn on the main key: appended to its imported session, or a new
    // session after a reset; either way not byte-identical any more.
    let main = rows
        .iter()
        .find(|r| r["sessionKey"] == "agent:main:main")
        .unwrap();
    assert_ne!(main["mode"], "byte-identical", "{modes:?}");
    assert!(
        rows.iter()
            .filter(|r| r["mode"] == "byte-identical")
            .count()
            >= 3,
        "{modes:?}"
    );

    // verify: what the gateway added is not a failure.
    let o = claw("claw-migrate", &gw.home)
        .args(["--state-dir", &state, "--agent", "main", "--json", "verify"])
        .output()
        .unwrap();
    let v = json_of(&o.stdout);
    assert!(o.status.success(), "{v}");
    assert!(v["createdAfterMigration"].as_u64().unwrap() >= 1, "{v}");

    // And 9.6's own doctor imports the export into the same events.
    let h2 = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(h2.path().join(".openclaw/agents")).unwrap();
    copy_tree(
        &out.join("agents/main"),
        &h2.path().join(".openclaw/agents/main"),
    );
    std::fs::write(
        h2.path().join(".openclaw/openclaw.json"),
        r#"{"agents":{"list":[{"id":"main","default":true}]}}"#,
    )
    .unwrap();
    agent_db_support::doctor_import(&peer, h2.path(), "the export");
    let again = events_by_key(
        &h2.path()
            .join(".openclaw/agents/main/agent/openclaw-agent.sqlite"),
    );
    let exported: Vec<&str> = rows
        .iter()
        .map(|r| r["sessionKey"].as_str().unwrap())
        .collect();
    for key in exported {
        assert_eq!(again.get(key), events.get(key), "{key}");
    }
}
