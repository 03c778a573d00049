//! `claw-sessions patch KEY…` / `patch --stdin`: one patch for several entries, every key
//! found first, each store written once, nothing written when a key is missing (issue 28).

mod support;

use std::path::PathBuf;

use serde_json::{json, Value};
use support::{claw, json_of};

const NOW: i64 = 1_780_000_000_000;

struct Fixture {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    main: PathBuf,
    work: PathBuf,
}

/// Two agents, `main` (with an entry the save normalises and one it drops) and `work`.
fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let state = home.join(".openclaw");
    std::fs::create_dir_all(&state).unwrap();
    std::fs::write(
        state.join("openclaw.json"),
        r#"{"agents": {"list": [{"id": "main", "default": true}, {"id": "work"}]}}"#,
    )
    .unwrap();
    let write = |agent: &str, store: Value| {
        let dir = state.join(format!("agents/{agent}/sessions"));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("sessions.json");
        std::fs::write(&path, serde_json::to_string_pretty(&store).unwrap()).unwrap();
        path
    };
    let main = write(
        "main",
        json!({
            "agent:main:main": {"sessionId": "m", "updatedAt": NOW, "label": "old"},
            "agent:main:cron:nightly": {"sessionId": "n", "updatedAt": NOW - 3},
            "agent:main:legacy": {"sessionId": "l", "updatedAt": NOW - 5, "provider": "telegram", "model": "  gpt-x  "},
            "agent:main:clean": {"sessionId": "c", "updatedAt": NOW - 9},
        }),
    );
    let work = write(
        "work",
        json!({
            "agent:work:main": {"sessionId": "w-main", "updatedAt": NOW - 100},
            "agent:work:cron:x": {"sessionId": "w-cron", "updatedAt": NOW - 200}
        }),
    );
    Fixture {
        _tmp: tmp,
        home,
        main,
        work,
    }
}

impl Fixture {
    fn cmd(&self) -> assert_cmd::Command {
        let mut c = claw("claw-sessions", &self.home);
        c.arg("--now").arg(NOW.to_string());
        c
    }

    fn texts(&self) -> (String, String) {
        (
            std::fs::read_to_string(&self.main).unwrap(),
            std::fs::read_to_string(&self.work).unwrap(),
        )
    }

    fn label(&self, store: &PathBuf, key: &str) -> Value {
        let v: Value = serde_json::from_str(&std::fs::read_to_string(store).unwrap()).unwrap();
        v[key].get("label").cloned().unwrap_or(Value::Null)
    }
}

#[test]
fn several_keys_get_the_same_patch() {
    let f = fixture();
    let out = f
        .cmd()
        .args(["patch", "main", "n", "--set", "label=batch", "--json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = json_of(&out.stdout);
    let keys: Vec<&str> = v["patched"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["key"].as_str().unwrap())
        .collect();
    // `n` is a sessionId: found as an entry's.
    assert_eq!(keys, ["agent:main:main", "agent:main:cron:nightly"], "{v}");
    assert_eq!(f.label(&f.main, "agent:main:main"), "batch");
    assert_eq!(f.label(&f.main, "agent:main:cron:nightly"), "batch");
    assert_eq!(f.label(&f.main, "agent:main:clean"), Value::Null);
}

#[test]
fn keys_from_stdin_one_per_line() {
    let f = fixture();
    f.cmd()
        .args(["patch", "--stdin", "--set", "label=s"])
        .write_stdin("main\n\n  agent:main:clean \n")
        .assert()
        .success()
        .stdout(predicates::str::contains("patched agent:main:clean in"));
    assert_eq!(f.label(&f.main, "agent:main:main"), "s");
    assert_eq!(f.label(&f.main, "agent:main:clean"), "s");
    assert_eq!(f.label(&f.main, "agent:main:cron:nightly"), Value::Null);
}

#[test]
fn keys_of_two_agents_go_to_their_own_stores() {
    let f = fixture();
    let out = f
        .cmd()
        .args([
            "patch",
            "agent:work:main",
            "main",
            "--set",
            "label=two",
            "--json",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = json_of(&out.stdout);
    assert_eq!(v["stores"].as_array().map(Vec::len), Some(2), "{v}");
    assert_eq!(f.label(&f.work, "agent:work:main"), "two");
    assert_eq!(f.label(&f.work, "agent:work:cron:x"), Value::Null);
    assert_eq!(f.label(&f.main, "agent:main:main"), "two");
}

#[test]
fn a_missing_key_changes_nothing_in_any_store() {
    let f = fixture();
    let before = f.texts();
    f.cmd()
        .args([
            "patch",
            "agent:work:main",
            "main",
            "agent:work:nope",
            "--set",
            "label=x",
        ])
        .assert()
        .code(3)
        .stderr(predicates::str::contains("agent:work:nope"));
    assert_eq!(f.texts(), before);
}

#[test]
fn dry_run_shows_every_entry_the_saves_would_change_and_writes_nothing() {
    let f = fixture();
    let before = f.texts();
    let out = f
        .cmd()
        .args([
            "patch",
            "main",
            "clean",
            "--set",
            "label=new",
            "--dry-run",
            "--json",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = json_of(&out.stdout);
    let changed: Vec<&str> = v["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["key"].as_str().unwrap())
        .collect();
    assert_eq!(
        changed,
        ["agent:main:main", "agent:main:legacy", "agent:main:clean"],
        "{v}"
    );
    let out = f
        .cmd()
        .args(["patch", "main", "clean", "--set", "label=new", "--dry-run"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(text.contains("would patch agent:main:main in"), "{text}");
    assert!(text.contains("The save would change 3 entries:"), "{text}");
    assert!(text.contains("~ agent:main:main (the patch)"), "{text}");
    assert!(text.contains("~ agent:main:clean (the patch)"), "{text}");
    assert!(
        text.contains("~ agent:main:legacy (normalised by the save)"),
        "{text}"
    );
    assert_eq!(f.texts(), before);
}

/// The gateway's sessions.patch changes one entry per call: a batch through it could not
/// be all-or-nothing, so it is refused (75) and nothing is written offline either.
#[test]
fn a_batch_through_the_gateway_is_refused_with_75() {
    let f = fixture();
    let before = f.texts();
    let out = f
        .cmd()
        .args([
            "--via-gateway",
            "patch",
            "main",
            "clean",
            "--set",
            "label=x",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(75), "{err}");
    assert!(err.contains("a patch of several keys"), "{err}");
    assert_eq!(f.texts(), before);
}

#[test]
fn stdin_keys_and_a_merge_patch_on_stdin_are_refused() {
    let f = fixture();
    f.cmd()
        .args(["patch", "--stdin", "--merge", "-"])
        .write_stdin("main\n")
        .assert()
        .code(2);
    f.cmd().args(["patch", "--set", "label=x"]).assert().code(2);
}
