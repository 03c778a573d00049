//! `claw-sessions restore KEY|FILE`: undo for archives. A `.deleted.<ts>` transcript
//! (from `delete`) comes back with its entry (`--key`, since an archive does not record
//! its key); a KEY whose transcript is missing gets the newest archive of its session
//! back; dry-run first; refused like every writer (live gateway 75, store lock 75), and
//! never over an existing file (73) or another session's key (1).

mod support;

use std::path::PathBuf;

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

fn header(id: &str) -> String {
    format!("{{\"type\":\"session\",\"version\":3,\"id\":\"{id}\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/w\"}}\n")
}

impl Fixture {
    fn new(store: Value) -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("home");
        let state = home.join(".openclaw");
        let sessions = state.join("agents/main/sessions");
        std::fs::create_dir_all(&sessions).unwrap();
        std::fs::write(sessions.join("sessions.json"), store.to_string()).unwrap();
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

    fn store(&self) -> Value {
        serde_json::from_str(&std::fs::read_to_string(self.sessions.join("sessions.json")).unwrap())
            .unwrap()
    }

    fn files(&self) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(&self.sessions)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    fn archive(&self) -> String {
        self.files()
            .into_iter()
            .find(|n| n.contains(".jsonl.deleted."))
            .expect("an archive")
    }
}

fn deleted() -> Fixture {
    let f = Fixture::new(json!({
        "agent:main:main": {"sessionId": "keep", "updatedAt": NOW},
        "agent:main:work": {"sessionId": SID, "updatedAt": NOW - 1000},
    }));
    std::fs::write(f.sessions.join(format!("{SID}.jsonl")), header(SID)).unwrap();
    f.cmd()
        .args(["delete", "agent:main:work"])
        .assert()
        .success();
    assert!(f.store().get("agent:main:work").is_none());
    f
}

#[test]
fn a_deleted_transcript_comes_back_with_its_entry_dry_run_first() {
    let f = deleted();
    let archive = f.archive();
    let before = (f.files(), f.store());
    // Without --key: the store has no entry for the session, and the archive no key.
    f.cmd()
        .args(["restore", &archive])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--key"));
    let out = f
        .cmd()
        .args(["restore", &archive, "--key", "work", "--dry-run", "--json"])
        .assert()
        .success();
    let doc = json_of(&out.get_output().stdout);
    assert_eq!(doc["key"], "agent:main:work");
    assert_eq!(doc["reason"], "deleted");
    assert_eq!(doc["sessionId"], SID);
    assert_eq!(doc["entryAdded"]["sessionId"], SID);
    assert_eq!(doc["written"], false);
    assert_eq!((f.files(), f.store()), before, "a dry run changes nothing");
    f.cmd()
        .args(["restore", &archive, "--key", "work"])
        .assert()
        .success()
        .stdout(predicate::str::contains("add entry agent:main:work"));
    assert!(f.files().contains(&format!("{SID}.jsonl")));
    assert!(!f.files().contains(&archive));
    assert_eq!(f.store()["agent:main:work"]["sessionId"], SID);
    assert_eq!(f.store()["agent:main:main"]["sessionId"], "keep");
    // The entry finds its transcript again.
    let out = f.cmd().args(["show", "work", "--json"]).assert().success();
    assert_eq!(json_of(&out.get_output().stdout)["transcriptExists"], true);
    let mode = std::fs::metadata(f.sessions.join("sessions.json"))
        .unwrap()
        .permissions();
    assert_eq!(
        std::os::unix::fs::PermissionsExt::mode(&mode) & 0o777,
        0o600
    );
}

#[test]
fn a_key_whose_transcript_is_missing_gets_the_newest_archive_back() {
    let f = Fixture::new(json!({
        "agent:main:main": {"sessionId": SID, "updatedAt": NOW},
    }));
    let older = format!("{SID}.jsonl.reset.2026-01-01T00-00-00.000Z");
    let newer = format!("{SID}.jsonl.reset.2026-02-01T00-00-00.000Z");
    std::fs::write(f.sessions.join(&older), header(SID)).unwrap();
    std::fs::write(f.sessions.join(&newer), header(SID) + "{}\n").unwrap();
    let out = f
        .cmd()
        .args(["restore", "main", "--json"])
        .assert()
        .success();
    let doc = json_of(&out.get_output().stdout);
    assert_eq!(doc["entryAdded"], Value::Null, "the entry is there");
    assert_eq!(doc["written"], false);
    assert_eq!(
        std::fs::read_to_string(f.sessions.join(format!("{SID}.jsonl"))).unwrap(),
        header(SID) + "{}\n"
    );
    assert!(f.files().contains(&older));
    // Its transcript in place now: nothing to restore for the key.
    f.cmd().args(["restore", "main"]).assert().code(3);
    // No entry for a key: exit 3 with the FILE form as a hint.
    f.cmd()
        .args(["restore", "agent:main:gone"])
        .assert()
        .code(3)
        .stderr(predicate::str::contains("restore FILE --key"));
}

#[test]
fn never_over_a_file_or_another_sessions_key() {
    let f = deleted();
    let archive = f.archive();
    // The key holds another session.
    f.cmd()
        .args(["restore", &archive, "--key", "main"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("already has this key"));
    // Something is at the original name.
    std::fs::write(f.sessions.join(format!("{SID}.jsonl")), "new\n").unwrap();
    f.cmd()
        .args(["restore", &archive, "--key", "work"])
        .assert()
        .code(73);
    assert!(f.files().contains(&archive));
    assert_eq!(
        std::fs::read_to_string(f.sessions.join(format!("{SID}.jsonl"))).unwrap(),
        "new\n"
    );
    assert!(f.store().get("agent:main:work").is_none());
    // Not an archive.
    f.cmd()
        .args([
            "restore",
            "x.jsonl.bak.2026-01-01T00-00-00.000Z",
            "--key",
            "w",
        ])
        .assert()
        .code(3);
}

#[test]
fn refused_while_another_writer_or_a_live_gateway_holds_the_store() {
    let f = deleted();
    let archive = f.archive();
    let held = clawstate::store::store_lock::StoreLock::acquire(
        &f.sessions.join("sessions.json"),
        clawstate::store::store_lock::LockWait::no_wait(),
    )
    .unwrap();
    f.cmd()
        .args(["restore", &archive, "--key", "work", "--no-wait"])
        .assert()
        .code(75);
    // A dry run takes no lock.
    f.cmd()
        .args(["restore", &archive, "--key", "work", "--dry-run"])
        .assert()
        .success();
    drop(held);
    // A live gateway owns the state dir.
    {
        use sha2::Digest;
        let config = f.state.join("openclaw.json");
        let hash = sha2::Sha256::digest(config.to_string_lossy().as_bytes());
        let hex: String = hash.iter().take(4).map(|b| format!("{b:02x}")).collect();
        // SAFETY: getuid has no preconditions and cannot fail.
        let uid = unsafe { libc::getuid() };
        let dir = f.home.join("tmp").join(format!("openclaw-{uid}"));
        std::fs::create_dir_all(&dir).unwrap();
        let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
        let after = &stat[stat.rfind(')').unwrap() + 2..];
        let start: u64 = after.split(' ').nth(19).unwrap().parse().unwrap();
        std::fs::write(
            dir.join(format!("gateway.{hex}.lock")),
            json!({"pid": std::process::id(), "createdAt": "2026-01-01T00:00:00.000Z", "configPath": config, "startTime": start}).to_string(),
        )
        .unwrap();
    }
    f.cmd()
        .args(["restore", &archive, "--key", "work"])
        .assert()
        .code(75)
        .stderr(predicate::str::contains("gateway"));
    assert!(f.files().contains(&archive));
}
