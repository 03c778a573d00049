//! `claw-sessions patch --dry-run`: the preview shows every entry the save would change,
//! not only the one patched: the save re-normalises the whole store (a legacy field
//! migrated, a model name trimmed, an entry with an unsafe sessionId dropped), as the
//! gateway's does. The preview is checked against the real write: the entries the file
//! then holds are the preview's `after` sides, and no other entry changed.

mod support;

use std::path::PathBuf;

use serde_json::{json, Value};
use support::{claw, json_of};

const NOW: i64 = 1_780_000_000_000;

struct Fixture {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    store: PathBuf,
}

fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let sessions = home.join(".openclaw/agents/main/sessions");
    std::fs::create_dir_all(&sessions).unwrap();
    let store = sessions.join("sessions.json");
    std::fs::write(
        &store,
        serde_json::to_string_pretty(&json!({
            "agent:main:main": {"sessionId": "m", "updatedAt": NOW, "label": "old"},
            "agent:main:legacy": {"sessionId": "l", "updatedAt": NOW - 5, "provider": "telegram", "model": "  gpt-x  "},
            "agent:main:clean": {"sessionId": "c", "updatedAt": NOW - 9},
            "agent:main:unsafe": {"sessionId": "../escape", "updatedAt": NOW - 7},
        }))
        .unwrap(),
    )
    .unwrap();
    Fixture {
        _tmp: tmp,
        home,
        store,
    }
}

impl Fixture {
    fn cmd(&self) -> assert_cmd::Command {
        let mut c = claw("claw-sessions", &self.home);
        c.arg("--now").arg(NOW.to_string());
        c
    }

    fn entries(&self) -> serde_json::Map<String, Value> {
        serde_json::from_str::<Value>(&std::fs::read_to_string(&self.store).unwrap())
            .unwrap()
            .as_object()
            .unwrap()
            .clone()
    }
}

/// Applies the `before` → `after` field changes of a diff entry to `entry`.
fn apply(entry: &mut Value, fields: &[Value]) {
    for f in fields {
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

#[test]
fn dry_run_lists_every_entry_the_save_changes_and_the_write_matches_it() {
    let f = fixture();
    let before_text = std::fs::read_to_string(&f.store).unwrap();
    let out = f
        .cmd()
        .args(["patch", "main", "--set", "label=new", "--dry-run", "--json"])
        .assert()
        .success();
    let doc = json_of(&out.get_output().stdout);
    let changes = doc["changes"].as_array().unwrap();
    let kinds: Vec<(&str, &str)> = changes
        .iter()
        .map(|c| (c["key"].as_str().unwrap(), c["change"].as_str().unwrap()))
        .collect();
    assert_eq!(
        kinds,
        [
            ("agent:main:main", "changed"),
            ("agent:main:legacy", "changed"),
            ("agent:main:unsafe", "removed"),
        ],
        "{doc}"
    );
    assert_eq!(
        changes[0]["fields"],
        json!([{"path": "label", "before": "old", "after": "new"}])
    );
    assert_eq!(std::fs::read_to_string(&f.store).unwrap(), before_text);

    // The text form names them too.
    let out = f
        .cmd()
        .args(["patch", "main", "--set", "label=new", "--dry-run"])
        .assert()
        .success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(text.contains("The save would change 3 entries:"), "{text}");
    assert!(
        text.contains("~ agent:main:legacy (normalised by the save)"),
        "{text}"
    );
    assert!(
        text.contains("    - label: \"old\"\n    + label: \"new\""),
        "{text}"
    );
    assert!(text.contains("- agent:main:unsafe"), "{text}");

    // The real write: the file's entries are the preview applied to the old file.
    let mut expected = serde_json::from_str::<Value>(&before_text).unwrap();
    for c in changes {
        let key = c["key"].as_str().unwrap();
        if c["change"] == "removed" {
            expected.as_object_mut().unwrap().remove(key);
        } else {
            apply(&mut expected[key], c["fields"].as_array().unwrap());
        }
    }
    f.cmd()
        .args(["patch", "main", "--set", "label=new"])
        .assert()
        .success();
    let written = f.entries();
    assert_eq!(Value::Object(written), expected);
}

#[test]
fn a_store_the_save_leaves_alone_shows_only_the_patched_entry() {
    let f = fixture();
    // A first real write normalises the store.
    f.cmd()
        .args(["patch", "main", "--set", "label=x"])
        .assert()
        .success();
    let out = f
        .cmd()
        .args(["patch", "main", "--unset", "label", "--dry-run", "--json"])
        .assert()
        .success();
    let doc = json_of(&out.get_output().stdout);
    assert_eq!(
        doc["changes"],
        json!([{"key": "agent:main:main", "change": "changed", "fields": [{"path": "label", "before": "x"}]}])
    );
}
