//! Differential test: what `claw-sessions patch --dry-run` says the save does to the
//! entries it does not patch is what the gateway's own store write does to them
//! (openclaw@2026.7.1 `sessions cleanup --enforce --store`, which prunes nothing here and
//! rewrites the store through the gateway's writer).
//!
//! A no-op patch (a field set to the value it has) leaves only the save's normalisation
//! in the preview; applied to the file, the preview must give the store the peer writes.

mod support;

use std::path::Path;

use serde_json::{json, Value};
use support::{claw, json_of, now_ms, peer, run_peer};

/// A store whose load normalisation rewrites some entries: legacy fields, padded model
/// names, an unsafe sessionId (dropped), and entries already clean.
fn store_entries(now: i64) -> Value {
    json!({
        "agent:main:main": {"sessionId": "m", "updatedAt": now, "label": "same"},
        "agent:main:legacy": {"sessionId": "l", "updatedAt": now - 5, "provider": "telegram", "model": "  gpt-x  "},
        "agent:main:room": {"sessionId": "r", "updatedAt": now - 6, "room": "#ops", "lastProvider": "slack"},
        "agent:main:clean": {"sessionId": "c", "updatedAt": now - 9, "chatType": "direct"},
        "agent:main:unsafe": {"sessionId": "../escape", "updatedAt": now - 7},
    })
}

fn write_state(root: &Path, now: i64) -> std::path::PathBuf {
    let sessions = root.join("state/agents/main/sessions");
    std::fs::create_dir_all(&sessions).unwrap();
    std::fs::create_dir_all(root.join("home/tmp")).unwrap();
    for id in ["m", "l", "r", "c"] {
        std::fs::write(sessions.join(format!("{id}.jsonl")), "{}\n").unwrap();
    }
    let store = sessions.join("sessions.json");
    std::fs::write(
        &store,
        serde_json::to_string_pretty(&store_entries(now)).unwrap(),
    )
    .unwrap();
    store
}

/// Applies a preview's changes to the file's entries.
fn apply(file: &mut Value, changes: &[Value]) {
    let entries = file.as_object_mut().unwrap();
    for c in changes {
        let key = c["key"].as_str().unwrap();
        if c["change"] == "removed" {
            entries.remove(key);
            continue;
        }
        let entry = entries.entry(key).or_insert(json!({}));
        for f in c["fields"].as_array().unwrap() {
            let path: Vec<&str> = f["path"].as_str().unwrap().split('.').collect();
            let mut cur = &mut *entry;
            for p in &path[..path.len() - 1] {
                cur = cur.as_object_mut().unwrap().entry(*p).or_insert(json!({}));
            }
            let last = path[path.len() - 1];
            match f.get("after") {
                Some(v) => {
                    cur.as_object_mut().unwrap().insert(last.into(), v.clone());
                }
                None => {
                    cur.as_object_mut().unwrap().remove(last);
                }
            }
        }
    }
}

#[test]
fn the_preview_of_a_no_op_patch_is_the_gateways_own_store_write() {
    let Some(peer) = peer() else { return };
    let now = now_ms();
    let ours = tempfile::tempdir().unwrap();
    let theirs = tempfile::tempdir().unwrap();
    let our_store = write_state(ours.path(), now);
    let their_store = write_state(theirs.path(), now);
    let original: Value =
        serde_json::from_str(&std::fs::read_to_string(&our_store).unwrap()).unwrap();

    let out = claw("claw-sessions", &ours.path().join("home"))
        .env("OPENCLAW_STATE_DIR", ours.path().join("state"))
        .args([
            "patch",
            "main",
            "--set",
            "label=same",
            "--dry-run",
            "--json",
        ])
        .assert()
        .success();
    let doc = json_of(&out.get_output().stdout);
    let changes = doc["changes"].as_array().unwrap().clone();
    assert!(
        changes.iter().all(|c| c["key"] != "agent:main:main"),
        "a no-op patch changes its own entry: {doc}"
    );
    assert!(changes.len() >= 3, "{doc}");

    let p = run_peer(
        &peer,
        &theirs.path().join("home"),
        &[("OPENCLAW_STATE_DIR", &theirs.path().join("state"))],
        &[
            "sessions",
            "cleanup",
            "--enforce",
            "--json",
            "--store",
            &their_store.to_string_lossy(),
        ],
    );
    assert!(p.status.success(), "{}", String::from_utf8_lossy(&p.stderr));
    let peer_written: Value =
        serde_json::from_str(&std::fs::read_to_string(&their_store).unwrap()).unwrap();

    let mut previewed = original;
    apply(&mut previewed, &changes);
    assert_eq!(previewed, peer_written, "preview: {changes:?}");
}
