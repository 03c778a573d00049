//! The store lock from outside: it holds whatever the environment of each writer
//! (`TMPDIR`), cannot be redirected through a directory another user pre-creates, gives up
//! after `--wait SECS` with exit 75, and leaves nothing in the sessions directory for cleanup
//! to count. The transcript write lock's `.lock` file is 0600 whatever the umask. Two
//! environments patching one store lose nothing: `concurrency_writers.rs`.

mod support;

use std::path::{Path, PathBuf};

use clawstate::store::store_lock::{LockWait, StoreLock};
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
    fn new() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("home");
        let state = home.join(".openclaw");
        let sessions = state.join("agents/main/sessions");
        std::fs::create_dir_all(&sessions).unwrap();
        std::fs::create_dir_all(home.join("tmp")).unwrap();
        std::fs::write(
            sessions.join("sessions.json"),
            serde_json::to_string_pretty(&json!({
                "agent:main:main": {"sessionId": SID, "updatedAt": NOW - 1000},
                "agent:main:cron:old": {"sessionId": "old", "updatedAt": NOW - 40 * 86_400_000i64}
            }))
            .unwrap(),
        )
        .unwrap();
        std::fs::write(
            sessions.join(format!("{SID}.jsonl")),
            "{\"type\":\"session\",\"version\":3,\"id\":\"x\"}\n{}\n{}\n",
        )
        .unwrap();
        std::fs::write(sessions.join("old.jsonl"), "{}\n").unwrap();
        Fixture {
            _tmp: tmp,
            home,
            state,
            sessions,
        }
    }

    fn store_path(&self) -> PathBuf {
        self.sessions.join("sessions.json")
    }

    fn store_bytes(&self) -> Vec<u8> {
        std::fs::read(self.store_path()).unwrap()
    }

    fn cmd(&self, bin: &str) -> assert_cmd::Command {
        let mut c = claw(bin, &self.home);
        c.arg("--state-dir")
            .arg(&self.state)
            .arg("--now")
            .arg(NOW.to_string());
        c
    }

    fn names(&self) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(&self.sessions)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    /// Holds the store lock from this process, whose `TMPDIR` is not the binaries' (they get
    /// `<home>/tmp`): the lock must hold across environments.
    fn hold(&self) -> StoreLock {
        assert_ne!(std::env::temp_dir(), self.home.join("tmp"));
        StoreLock::acquire(&self.store_path(), LockWait::no_wait()).unwrap()
    }
}

#[test]
fn a_writer_under_another_tmpdir_is_busy_while_the_lock_is_held() {
    let f = Fixture::new();
    let before = f.store_bytes();
    let held = f.hold();
    f.cmd("claw-sessions")
        .args(["patch", "main", "--set", "label=x", "--no-wait"])
        .assert()
        .code(75)
        .stderr(predicate::str::contains("another clawstate process"));
    f.cmd("claw-sessions")
        .args(["cleanup", "--enforce", "--no-wait"])
        .assert()
        .code(75)
        .stderr(predicate::str::contains("another clawstate process"));
    // The same directory under another spelling is the same lock.
    let link = f.home.join("link");
    std::os::unix::fs::symlink(&f.sessions, &link).unwrap();
    f.cmd("claw-sessions")
        .arg("--store")
        .arg(link.join("sessions.json"))
        .args(["patch", "main", "--set", "label=x", "--no-wait"])
        .assert()
        .code(75);
    assert_eq!(f.store_bytes(), before);
    drop(held);
    f.cmd("claw-sessions")
        .args(["patch", "main", "--set", "label=x", "--no-wait"])
        .assert()
        .success();
}

#[test]
fn a_hostile_lock_directory_under_tmpdir_is_irrelevant() {
    let f = Fixture::new();
    // Another user's `$TMPDIR/clawstate-<uid>`, a symlink to a directory of theirs.
    // SAFETY: getuid takes no arguments and cannot fail.
    let uid = unsafe { libc::getuid() };
    let theirs = f.home.join("theirs");
    std::fs::create_dir_all(&theirs).unwrap();
    std::os::unix::fs::symlink(&theirs, f.home.join(format!("tmp/clawstate-{uid}"))).unwrap();
    f.cmd("claw-sessions")
        .args(["patch", "main", "--set", "label=x", "--no-wait"])
        .assert()
        .success();
    f.cmd("claw-sessions")
        .args(["cleanup", "--enforce", "--no-wait"])
        .assert()
        .success();
    assert_eq!(
        std::fs::read_dir(&theirs).unwrap().count(),
        0,
        "nothing written through the symlink"
    );
    // A TMPDIR that cannot hold a directory at all changes nothing either.
    let file = f.home.join("not-a-dir");
    std::fs::write(&file, "").unwrap();
    f.cmd("claw-sessions")
        .env("TMPDIR", &file)
        .args(["patch", "main", "--set", "label=y", "--no-wait"])
        .assert()
        .success();
    assert_eq!(json_of(&f.store_bytes())["agent:main:main"]["label"], "y");
}

#[test]
fn a_blocked_writer_says_so_and_gives_up_after_wait_secs_with_75() {
    let f = Fixture::new();
    let before = f.store_bytes();
    let transcript = std::fs::read(f.sessions.join(format!("{SID}.jsonl"))).unwrap();
    let held = f.hold();
    let store = f.store_path();
    let waiting = format!(
        "waiting for another clawstate process writing {} (up to 1 s)",
        store.display()
    );
    for (bin, args) in [
        ("claw-sessions", &["patch", "main", "--set", "label=x"][..]),
        ("claw-sessions", &["reset", "main"][..]),
        ("claw-sessions", &["cleanup", "--enforce", "--verbose"][..]),
        (
            "claw-compact",
            &["truncate", "main", "--max-lines", "1"][..],
        ),
    ] {
        let out = f
            .cmd(bin)
            .args(args)
            .args(["--wait", "1"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(75), "{bin} {args:?}: {err}");
        assert_eq!(err.matches(&waiting).count(), 1, "{bin} {args:?}: {err}");
        assert!(
            err.contains(&format!(
                "{}: another clawstate process is writing this store",
                store.display()
            )),
            "{bin} {args:?}: {err}"
        );
        assert_eq!(f.store_bytes(), before, "{bin} {args:?}");
        assert_eq!(
            std::fs::read(f.sessions.join(format!("{SID}.jsonl"))).unwrap(),
            transcript,
            "{bin} {args:?}: the transcript is untouched"
        );
    }
    // Cleanup and `claw-compact auto` are for cron: silent unless at a terminal or verbose.
    f.cmd("claw-sessions")
        .args(["cleanup", "--enforce", "--wait", "1"])
        .assert()
        .code(75)
        .stderr(predicate::str::contains(
            "another clawstate process is writing this store",
        ))
        .stderr(predicate::str::contains("waiting").not());
    // --wait 0 is --no-wait: at once, without the message.
    f.cmd("claw-sessions")
        .args(["patch", "main", "--set", "label=x", "--wait", "0"])
        .assert()
        .code(75)
        .stderr(predicate::str::contains("waiting").not());
    f.cmd("claw-sessions")
        .args([
            "patch",
            "main",
            "--set",
            "label=x",
            "--wait",
            "1",
            "--no-wait",
        ])
        .assert()
        .code(2);
    drop(held);
    f.cmd("claw-sessions")
        .args(["patch", "main", "--set", "label=x", "--wait", "1"])
        .assert()
        .success()
        .stderr(predicate::str::contains("waiting").not());
}

/// Every `scannedFiles` count in a cleanup document.
fn scanned(v: &Value, out: &mut Vec<u64>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                if k == "scannedFiles" {
                    out.push(x.as_u64().unwrap());
                } else {
                    scanned(x, out);
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|x| scanned(x, out)),
        _ => {}
    }
}

#[test]
fn the_lock_leaves_nothing_in_the_sessions_directory_for_cleanup_to_count() {
    let f = Fixture::new();
    let names = f.names();
    let held = f.hold();
    assert_eq!(f.names(), names);
    drop(held);
    f.cmd("claw-sessions")
        .args(["patch", "main", "--set", "label=x"])
        .assert()
        .success();
    assert_eq!(f.names(), names);
    let dry = f
        .cmd("claw-sessions")
        .args(["cleanup", "--dry-run", "--json"])
        .output()
        .unwrap();
    let mut counts = Vec::new();
    scanned(&json_of(&dry.stdout), &mut counts);
    assert_eq!(counts, vec![names.len() as u64]);
    let enforced = f
        .cmd("claw-sessions")
        .args(["cleanup", "--enforce", "--json"])
        .output()
        .unwrap();
    assert!(enforced.status.success());
    let mut counts = Vec::new();
    scanned(&json_of(&enforced.stdout), &mut counts);
    assert_eq!(counts, vec![names.len() as u64]);
    let after = f.names();
    assert!(
        after
            .iter()
            .all(|n| names.contains(n) || n.contains(".deleted.")),
        "{after:?}"
    );
}

/// Runs a binary under umask 000 (through `sh`, which sets it and execs the binary).
fn under_umask_0(f: &Fixture, bin: &str, args: &[&str]) -> std::process::Output {
    let mut c = std::process::Command::new("sh");
    c.env_clear()
        .env("HOME", &f.home)
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("TZ", "UTC")
        .env("TMPDIR", f.home.join("tmp"))
        .arg("-c")
        .arg("umask 000 && exec \"$@\"")
        .arg("sh")
        .arg(assert_cmd::cargo::cargo_bin(bin))
        .arg("--state-dir")
        .arg(&f.state)
        .args(args);
    c.output().unwrap()
}

#[test]
fn transcript_lock_files_are_0600_even_with_umask_0() {
    let f = Fixture::new();
    let transcript = f.sessions.join(format!("{SID}.jsonl"));
    let rows = [
        json!({"type":"session","version":3,"id":SID,"timestamp":"2026-11-29T21:00:00.000Z","cwd":"/"}),
        json!({"type":"message","id":"u1","parentId":null,"timestamp":"2026-11-29T21:00:01.000Z","message":{"role":"user","content":format!("hello {}", "please ".repeat(300)),"timestamp":1}}),
        json!({"type":"message","id":"a1","parentId":"u1","timestamp":"2026-11-29T21:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"ok"}],"stopReason":"stop","usage":{"totalTokens":900},"timestamp":2}}),
        json!({"type":"message","id":"u2","parentId":"a1","timestamp":"2026-11-29T21:00:03.000Z","message":{"role":"user","content":format!("again {}", "please ".repeat(300)),"timestamp":3}}),
        json!({"type":"message","id":"a2","parentId":"u2","timestamp":"2026-11-29T21:00:04.000Z","message":{"role":"assistant","content":[{"type":"text","text":"done"}],"stopReason":"stop","usage":{"totalTokens":1900},"timestamp":4}}),
    ];
    std::fs::write(
        &transcript,
        rows.iter()
            .map(|r| r.to_string() + "\n")
            .collect::<String>(),
    )
    .unwrap();
    // The summarizer runs while `claw-compact run` holds the transcript's write lock: it
    // reports the lock file's mode as the summary.
    let probe = format!(
        "cat >/dev/null; stat -c 'MODE %a' '{}.lock'",
        transcript.display()
    );
    let out = under_umask_0(
        &f,
        "claw-compact",
        &[
            "run",
            "main",
            "--keep-recent-tokens",
            "100",
            "--summarizer",
            &probe,
            "--json",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let summary = json_of(&out.stdout)["result"]["summary"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(summary.lines().next(), Some("MODE 600"), "{summary:?}");
    assert!(!Path::new(&format!("{}.lock", transcript.display())).exists());
}
