//! Integration tests for `claw-sessions`, driving the binary on fixtures in temp dirs.

mod support;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use predicates::prelude::*;
use serde_json::{json, Value};
use support::{claw, json_of};

const NOW: i64 = 1_780_000_000_000;
const SID: &str = "11111111-2222-4333-8444-555555555555";

struct Fixture {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    state: PathBuf,
    sessions: PathBuf,
}

impl Fixture {
    fn new(store: Value) -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("home");
        let state = home.join(".openclaw");
        let sessions = state.join("agents/main/sessions");
        std::fs::create_dir_all(&sessions).unwrap();
        std::fs::write(
            sessions.join("sessions.json"),
            serde_json::to_string_pretty(&store).unwrap(),
        )
        .unwrap();
        Fixture {
            _tmp: tmp,
            home,
            state,
            sessions,
        }
    }

    fn cmd(&self) -> assert_cmd::Command {
        let mut c = claw("claw-sessions", &self.home);
        c.arg("--now").arg(NOW.to_string());
        c
    }

    fn store_text(&self) -> String {
        std::fs::read_to_string(self.sessions.join("sessions.json")).unwrap()
    }

    fn store(&self) -> Value {
        serde_json::from_str(&self.store_text()).unwrap()
    }

    fn files(&self) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(&self.sessions)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }
}

fn basic() -> Fixture {
    let f = Fixture::new(json!({
        "agent:main:main": {"sessionId": SID, "updatedAt": NOW - 1000, "thinkingLevel": "high", "totalTokens": 900, "custom": {"z": 1, "a": 2}},
        "agent:main:telegram:group:-100": {"sessionId": "grp", "updatedAt": NOW - 5000, "chatType": "group"},
        "agent:main:cron:nightly": {"sessionId": "shared", "updatedAt": NOW - 9000},
        "agent:main:cron:other": {"sessionId": "shared", "updatedAt": NOW - 9500}
    }));
    std::fs::write(
        f.sessions.join(format!("{SID}.jsonl")),
        "{\"type\":\"session\",\"version\":3,\"id\":\"x\"}\n",
    )
    .unwrap();
    std::fs::write(f.sessions.join("grp.jsonl"), "{}\n").unwrap();
    std::fs::write(f.sessions.join("grp.trajectory.jsonl"), "{}\n").unwrap();
    std::fs::write(f.sessions.join("grp.trajectory-path.json"), "{}\n").unwrap();
    std::fs::write(f.sessions.join("shared.jsonl"), "{}\n").unwrap();
    f
}

#[test]
fn list_is_the_default_command_and_prints_a_table() {
    let f = basic();
    f.cmd()
        .arg("--table")
        .assert()
        .success()
        .stdout(predicate::str::contains("Sessions listed: 4"))
        .stdout(predicate::str::contains("agent:main:telegram:group:-100"));
}

#[test]
fn list_ndjson_prints_one_row_per_line() {
    let f = basic();
    let out = f.cmd().args(["list", "--ndjson"]).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let rows: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 4);
    assert_eq!(rows[0]["key"], "agent:main:main");
    assert_eq!(rows[0]["ageMs"], 1000);
}

#[test]
fn list_kinds_filter() {
    let f = basic();
    let out = f
        .cmd()
        .args(["list", "--json", "--kinds", "cron"])
        .output()
        .unwrap();
    let v = json_of(&out.stdout);
    assert_eq!(v["count"], 2);
    let out = f
        .cmd()
        .args(["list", "--json", "--kinds", "main,group"])
        .output()
        .unwrap();
    assert_eq!(json_of(&out.stdout)["count"], 2);
    f.cmd().args(["list", "--kinds", "bogus"]).assert().code(2);
}

#[test]
fn show_by_alias_and_session_id() {
    let f = basic();
    let out = f.cmd().args(["show", "main", "--json"]).output().unwrap();
    let v = json_of(&out.stdout);
    assert_eq!(v["key"], "agent:main:main");
    assert_eq!(v["transcriptExists"], true);
    assert!(v["transcriptPath"]
        .as_str()
        .unwrap()
        .ends_with(&format!("{SID}.jsonl")));
    let out = f.cmd().args(["show", "grp", "--json"]).output().unwrap();
    assert_eq!(
        json_of(&out.stdout)["key"],
        "agent:main:telegram:group:-100"
    );
    f.cmd()
        .args(["show", "nope"])
        .assert()
        .code(3)
        .stderr(predicate::str::contains("no session matches"));
}

#[test]
fn patch_sets_unsets_and_keeps_order_and_unknown_fields() {
    let f = basic();
    f.cmd()
        .args([
            "patch",
            "main",
            "--set",
            "sendPolicy=deny",
            "--set",
            "label=\"x y\"",
            "--unset",
            "thinkingLevel",
            "--set",
            "custom.a=3",
        ])
        .assert()
        .success();
    let s = f.store();
    let e = &s["agent:main:main"];
    assert_eq!(e["sendPolicy"], "deny");
    assert_eq!(e["label"], "x y");
    assert!(e.get("thinkingLevel").is_none());
    assert_eq!(e["custom"], json!({"z": 1, "a": 3}));
    let keys: Vec<&String> = e.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        [
            "sessionId",
            "updatedAt",
            "totalTokens",
            "custom",
            "sendPolicy",
            "label"
        ]
    );
    let mode = std::fs::metadata(f.sessions.join("sessions.json"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    assert!(!f.store_text().ends_with('\n'));
}

#[test]
fn patch_merge_from_stdin_and_dry_run_changes_nothing() {
    let f = basic();
    let before = f.store_text();
    let out = f
        .cmd()
        .args(["patch", "main", "--merge", "-", "--dry-run", "--json"])
        .write_stdin("{\"sendPolicy\":\"allow\",\"totalTokens\":null}")
        .output()
        .unwrap();
    assert!(out.status.success());
    let v = json_of(&out.stdout);
    assert_eq!(v["entry"]["sendPolicy"], "allow");
    assert!(v["entry"].get("totalTokens").is_none());
    assert_eq!(f.store_text(), before);
}

#[test]
fn invalid_patches_are_refused_with_65_and_nothing_written() {
    let f = basic();
    let before = f.store_text();
    f.cmd()
        .args(["patch", "main", "--set", "sendPolicy=sometimes"])
        .assert()
        .code(65);
    f.cmd()
        .args(["patch", "main", "--set", "sessionId=../evil"])
        .assert()
        .code(65);
    f.cmd()
        .args(["patch", "main", "--merge", "-"])
        .write_stdin("[1]")
        .assert()
        .code(65);
    f.cmd()
        .args(["patch", "main", "--merge", "-"])
        .write_stdin("{bad")
        .assert()
        .code(65);
    f.cmd().args(["patch", "main"]).assert().code(2);
    assert_eq!(f.store_text(), before);
}

#[test]
fn malformed_store_is_an_error_and_is_never_replaced() {
    let f = basic();
    std::fs::write(f.sessions.join("sessions.json"), "{\"a\": {").unwrap();
    f.cmd()
        .args(["patch", "main", "--set", "label=x"])
        .assert()
        .code(65)
        .stderr(predicate::str::contains("sessions.json:1:"));
    f.cmd().args(["list", "--json"]).assert().code(65);
    assert_eq!(f.store_text(), "{\"a\": {");
    std::fs::write(f.sessions.join("sessions.json"), "[]").unwrap();
    f.cmd()
        .args(["list"])
        .assert()
        .code(65)
        .stderr(predicate::str::contains("expected an object"));
    std::fs::write(f.sessions.join("sessions.json"), "").unwrap();
    f.cmd().args(["delete", "x"]).assert().code(65);
    assert_eq!(f.store_text(), "");
}

#[test]
fn missing_store_lists_empty() {
    let tmp = tempfile::tempdir().unwrap();
    let out = claw("claw-sessions", tmp.path())
        .args(["list", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let v = json_of(&out.stdout);
    assert_eq!(v["count"], 0);
    assert!(
        !tmp.path().join(".openclaw").exists(),
        "listing must not create the state dir"
    );
}

#[test]
fn reset_rotates_the_session_and_archives_the_transcript() {
    let f = basic();
    let out = f.cmd().args(["reset", "main", "--json"]).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = json_of(&out.stdout);
    let new_id = v["sessionId"].as_str().unwrap().to_string();
    assert_ne!(new_id, SID);
    assert_eq!(new_id.len(), 36);
    assert_eq!(&new_id[14..15], "4");
    let s = f.store();
    let e = &s["agent:main:main"];
    assert_eq!(e["sessionId"], new_id.as_str());
    assert_eq!(e["totalTokens"], 0);
    assert_eq!(e["totalTokensFresh"], true);
    assert_eq!(e["thinkingLevel"], "high");
    assert!(e.get("custom").is_none());
    let new_file = PathBuf::from(e["sessionFile"].as_str().unwrap());
    assert!(new_file.is_absolute());
    let header = std::fs::read_to_string(&new_file).unwrap();
    let h: Value = serde_json::from_str(header.trim()).unwrap();
    assert_eq!(h["type"], "session");
    assert_eq!(h["id"], new_id.as_str());
    assert_eq!(
        std::fs::metadata(&new_file).unwrap().permissions().mode() & 0o777,
        0o600
    );
    let files = f.files();
    assert!(
        files
            .iter()
            .any(|n| n.starts_with(&format!("{SID}.jsonl.reset."))),
        "{files:?}"
    );
    assert!(!files.contains(&format!("{SID}.jsonl")));
    // The store keeps its key order: the reset entry stays first.
    assert_eq!(
        s.as_object().unwrap().keys().next().unwrap(),
        "agent:main:main"
    );
}

#[test]
fn reset_dry_run_changes_nothing() {
    let f = basic();
    let before = (f.store_text(), f.files());
    f.cmd()
        .args(["reset", "main", "--dry-run"])
        .assert()
        .success()
        .stdout(predicate::str::contains("would archive"));
    assert_eq!((f.store_text(), f.files()), before);
}

#[test]
fn delete_archives_unless_shared_and_removes_sidecars() {
    let f = basic();
    f.cmd()
        .args([
            "delete",
            "agent:main:telegram:group:-100",
            "agent:main:cron:nightly",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "transcript kept: another entry shares",
        ));
    let s = f.store();
    assert!(s.get("agent:main:telegram:group:-100").is_none());
    assert!(s.get("agent:main:cron:nightly").is_none());
    assert!(s.get("agent:main:cron:other").is_some());
    let files = f.files();
    assert!(
        files.iter().any(|n| n.starts_with("grp.jsonl.deleted.")),
        "{files:?}"
    );
    assert!(
        !files.iter().any(|n| n.starts_with("grp.trajectory")),
        "{files:?}"
    );
    assert!(files.contains(&"shared.jsonl".to_string()));
}

#[test]
fn delete_is_all_or_nothing_when_a_key_is_unknown() {
    let f = basic();
    let before = (f.store_text(), f.files());
    f.cmd().args(["delete", "main", "nope"]).assert().code(3);
    assert_eq!((f.store_text(), f.files()), before);
}

#[test]
fn delete_keys_from_stdin() {
    let f = basic();
    f.cmd()
        .args(["delete", "--stdin", "--json"])
        .write_stdin("main\n\nagent:main:cron:other\n")
        .assert()
        .success();
    assert_eq!(f.store().as_object().unwrap().len(), 2);
}

#[test]
fn session_file_escaping_the_directory_is_never_followed() {
    let f = Fixture::new(json!({
        "agent:main:main": {"sessionId": "abc", "sessionFile": "../../../../outside.jsonl", "updatedAt": NOW}
    }));
    let outside = f.home.join(".openclaw/outside.jsonl");
    std::fs::write(&outside, "keep").unwrap();
    let out = f.cmd().args(["show", "main", "--json"]).output().unwrap();
    let v = json_of(&out.stdout);
    assert!(v["transcriptPath"]
        .as_str()
        .unwrap()
        .ends_with("sessions/abc.jsonl"));
    f.cmd().args(["delete", "main"]).assert().success();
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "keep");
}

fn live_gateway_lock(f: &Fixture) -> PathBuf {
    // A gateway lock naming this (live) test process, for the default config path.
    use sha2::Digest;
    let config = f.state.join("openclaw.json");
    let hash = sha2::Sha256::digest(config.to_string_lossy().as_bytes());
    let hex: String = hash.iter().take(4).map(|b| format!("{b:02x}")).collect();
    // SAFETY: getuid takes no arguments and cannot fail.
    let uid = unsafe { libc::getuid() };
    let dir = f.home.join("tmp").join(format!("openclaw-{uid}"));
    std::fs::create_dir_all(&dir).unwrap();
    let lock = dir.join(format!("gateway.{hex}.lock"));
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
    let after = &stat[stat.rfind(')').unwrap() + 2..];
    let start: u64 = after.split(' ').nth(19).unwrap().parse().unwrap();
    std::fs::write(
        &lock,
        serde_json::to_string(&json!({"pid": std::process::id(), "createdAt": "2026-01-01T00:00:00.000Z", "configPath": config, "startTime": start})).unwrap(),
    )
    .unwrap();
    lock
}

#[test]
fn live_gateway_refuses_writes_unless_store_is_explicit() {
    let f = basic();
    live_gateway_lock(&f);
    let before = f.store_text();
    f.cmd()
        .args(["patch", "main", "--set", "label=x"])
        .assert()
        .code(75)
        .stderr(predicate::str::contains("gateway"));
    assert_eq!(f.store_text(), before);
    // Reading is fine.
    f.cmd().args(["list"]).assert().success();
    // --store is the explicit offline path: proceeds with a warning.
    let store = f.sessions.join("sessions.json");
    f.cmd()
        .args(["patch", "main", "--set", "label=x", "--store"])
        .arg(&store)
        .assert()
        .success()
        .stderr(predicate::str::contains("warning"));
    assert_eq!(f.store()["agent:main:main"]["label"], "x");
}

#[test]
fn store_lock_busy_with_no_wait_is_75() {
    let f = basic();
    let store = f.sessions.join("sessions.json");
    // Hold the store lock from this process, as any clawstate writer would.
    let _held = clawstate::store::store_lock::StoreLock::acquire(
        &store,
        clawstate::store::store_lock::LockWait::no_wait(),
    )
    .unwrap();
    f.cmd()
        .args(["patch", "main", "--set", "label=x", "--no-wait"])
        .assert()
        .code(75)
        .stderr(predicate::str::contains("another clawstate process"));
}

#[test]
fn resolve_and_policy() {
    let f = basic();
    std::fs::write(
        f.state.join("openclaw.json"),
        "{ session: { reset: { mode: 'idle', idleMinutes: 60 }, sendPolicy: { default: 'deny', rules: [ { action: 'allow', match: { chatType: 'group' } } ] } } }",
    )
    .unwrap();
    let out = f
        .cmd()
        .args(["resolve", "main", "--json"])
        .output()
        .unwrap();
    let v = json_of(&out.stdout);
    assert_eq!(v["fresh"], true);
    assert_eq!(v["idleExpiresAt"], NOW - 1000 + 3_600_000);
    let out = f.cmd().args(["policy", "main", "--json"]).output().unwrap();
    assert_eq!(json_of(&out.stdout)["decision"], "deny");
    let out = f
        .cmd()
        .args(["policy", "agent:main:telegram:group:-100", "--json"])
        .output()
        .unwrap();
    assert_eq!(json_of(&out.stdout)["decision"], "allow");
    f.cmd()
        .args(["patch", "main", "--set", "sendPolicy=allow"])
        .assert()
        .success();
    let out = f.cmd().args(["policy", "main", "--json"]).output().unwrap();
    assert_eq!(json_of(&out.stdout)["decision"], "allow");
    assert_eq!(
        json_of(&out.stdout)["decidedBy"],
        "entry sendPolicy override"
    );
    f.cmd()
        .args(["patch", "main", "--set", "sendPolicy=inherit"])
        .assert()
        .success();
    assert!(f.store()["agent:main:main"].get("sendPolicy").is_none());
    let out = f.cmd().args(["policy", "main", "--json"]).output().unwrap();
    assert_eq!(json_of(&out.stdout)["decision"], "deny");
}

#[test]
fn invalid_config_is_65_naming_the_key() {
    let f = basic();
    std::fs::write(
        f.state.join("openclaw.json"),
        "{session: {maintenance: {mode: 'bogus'}}}",
    )
    .unwrap();
    f.cmd()
        .args(["list"])
        .assert()
        .code(65)
        .stderr(predicate::str::contains("session.maintenance.mode"));
    std::fs::write(f.state.join("openclaw.json"), "{session: ").unwrap();
    f.cmd()
        .args(["list"])
        .assert()
        .code(65)
        .stderr(predicate::str::contains("openclaw.json:1:"));
}

#[test]
fn store_and_agent_conflict_is_usage() {
    let f = basic();
    f.cmd()
        .args(["list", "--store", "x.json", "--all-agents"])
        .assert()
        .code(2);
    f.cmd().args(["list", "--agent", "nope"]).assert().code(3);
}

#[test]
fn bom_is_skipped_with_a_warning() {
    let f = basic();
    let text = format!("\u{feff}{}", f.store_text());
    std::fs::write(f.sessions.join("sessions.json"), text).unwrap();
    f.cmd()
        .args(["list", "--json"])
        .assert()
        .success()
        .stderr(predicate::str::contains("byte-order mark"));
}

#[test]
fn the_quick_start_demo_lists_both_agents() {
    let tmp = tempfile::tempdir().unwrap();
    let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/demo");
    let out = claw("claw-sessions", tmp.path())
        .arg("--state-dir")
        .arg(&demo)
        .args(["--all-agents", "--json", "--now", "2026-11-29T12:00:00Z"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = json_of(&out.stdout);
    assert_eq!(v["count"], 8);
    assert_eq!(v["stores"].as_array().unwrap().len(), 2);
    assert_eq!(v["sessions"][0]["key"], "agent:main:main");
    assert_eq!(v["sessions"][0]["ageMs"], 120000);
}

/// Issue 23 item 11: under the implicit reset policy (nothing configured), an entry whose
/// provider owns a CLI session stays fresh, as in openclaw 2026.7.1 (`skipImplicitExpiry`:
/// `{fresh: true}`, no boundaries); a configured policy applies to it as to any entry.
#[test]
fn resolve_applies_the_cli_binding_exemption() {
    let day = 24 * 3_600_000;
    let f = Fixture::new(json!({
        "agent:main:main": {
            "sessionId": SID, "updatedAt": NOW - 3 * day, "model": "opus", "modelProvider": "Claude-CLI",
            "cliSessionBindings": {"claude-cli": {"sessionId": "cli-1"}}
        },
        "agent:main:other": {"sessionId": "other", "updatedAt": NOW - 3 * day, "model": "opus", "modelProvider": "anthropic"}
    }));
    let resolve = |key: &str| {
        let out = f.cmd().args(["resolve", key, "--json"]).output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        json_of(&out.stdout)
    };
    let v = resolve("main");
    assert_eq!(v["fresh"], true, "{v}");
    assert_eq!(v["dailyResetAt"], Value::Null, "{v}");
    assert_eq!(v["exemption"], "cliSessionBinding", "{v}");
    let text = f.cmd().args(["resolve", "main"]).output().unwrap();
    assert!(String::from_utf8_lossy(&text.stdout).contains("CLI session"));
    // Without the binding: the implicit daily reset makes it stale.
    let v = resolve("agent:main:other");
    assert_eq!(v["fresh"], false, "{v}");
    assert_eq!(v["exemption"], Value::Null, "{v}");
    // A configured policy: no exemption.
    std::fs::write(
        f.state.join("openclaw.json"),
        "{ session: { reset: { mode: 'daily', atHour: 4 } } }",
    )
    .unwrap();
    let v = resolve("main");
    assert_eq!(v["fresh"], false, "{v}");
    assert_eq!(v["staleReason"], "daily", "{v}");
}

/// `basic()` plus a configured agent `work` with its own store.
fn two_agents() -> (Fixture, PathBuf) {
    let f = basic();
    std::fs::write(
        f.state.join("openclaw.json"),
        r#"{"agents": {"list": [{"id": "main", "default": true}, {"id": "work"}]}}"#,
    )
    .unwrap();
    let work = f.state.join("agents/work/sessions");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::write(
        work.join("sessions.json"),
        serde_json::to_string_pretty(&json!({
            "agent:work:main": {"sessionId": "w-main", "updatedAt": NOW - 100},
            "agent:work:cron:x": {"sessionId": "w-cron", "updatedAt": NOW - 200}
        }))
        .unwrap(),
    )
    .unwrap();
    std::fs::write(work.join("w-main.jsonl"), "{}\n").unwrap();
    (f, work)
}

/// Issue 28: keys of several agents in one batch go to their own stores (this exited 3,
/// "no session matches agent:work:main", looking every key up in the first key's store).
#[test]
fn delete_batch_of_several_agents_goes_to_each_store() {
    let (f, work) = two_agents();
    let out = f
        .cmd()
        .args(["delete", "--stdin", "--json"])
        .write_stdin("agent:main:cron:nightly\nagent:work:main\nmain\n")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = json_of(&out.stdout);
    assert_eq!(v["storePath"], Value::Null, "{v}");
    assert_eq!(v["stores"].as_array().map(Vec::len), Some(2), "{v}");
    let keys: Vec<&str> = v["deleted"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["key"].as_str().unwrap())
        .collect();
    assert_eq!(
        keys,
        [
            "agent:main:cron:nightly",
            "agent:work:main",
            "agent:main:main"
        ]
    );
    let main = f.store();
    assert!(main.get("agent:main:main").is_none());
    assert!(main.get("agent:main:cron:nightly").is_none());
    assert!(main.get("agent:main:cron:other").is_some());
    let w: Value =
        serde_json::from_str(&std::fs::read_to_string(work.join("sessions.json")).unwrap())
            .unwrap();
    assert_eq!(
        w.as_object().unwrap().keys().collect::<Vec<_>>(),
        ["agent:work:cron:x"]
    );
    let archived = std::fs::read_dir(&work).unwrap().any(|e| {
        e.unwrap()
            .file_name()
            .to_string_lossy()
            .starts_with("w-main.jsonl.deleted.")
    });
    assert!(archived);
}

/// A batch over several stores changes nothing unless every key resolves in its store.
#[test]
fn delete_batch_of_several_agents_is_all_or_nothing() {
    let (f, work) = two_agents();
    let before = (
        f.store_text(),
        std::fs::read_to_string(work.join("sessions.json")).unwrap(),
    );
    f.cmd()
        .args(["delete", "agent:main:main", "agent:work:nope"])
        .assert()
        .code(3)
        .stderr(predicate::str::contains("agent:work:nope"));
    let after = (
        f.store_text(),
        std::fs::read_to_string(work.join("sessions.json")).unwrap(),
    );
    assert_eq!(after, before);
}

/// Every store of a batch is locked before any is written: one busy store, nothing
/// changed in the other.
#[test]
fn delete_batch_of_several_agents_locks_every_store_first() {
    let (f, work) = two_agents();
    let before = (
        f.store_text(),
        std::fs::read_to_string(work.join("sessions.json")).unwrap(),
    );
    let _held = clawstate::store::store_lock::StoreLock::acquire(
        &work.join("sessions.json"),
        clawstate::store::store_lock::LockWait::no_wait(),
    )
    .unwrap();
    f.cmd()
        .args(["delete", "agent:main:main", "agent:work:main", "--no-wait"])
        .assert()
        .code(75);
    let after = (
        f.store_text(),
        std::fs::read_to_string(work.join("sessions.json")).unwrap(),
    );
    assert_eq!(after, before);
}
