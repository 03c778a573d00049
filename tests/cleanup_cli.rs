//! Integration tests for `claw-sessions cleanup`: the cron case (overlapping runs
//! serialise on the store lock, `--no-wait` → 75), the safety rules (malformed store →
//! 65 untouched, symlinks never followed out, nothing outside the sessions directory
//! touched, live gateway → 75), silence on success, and the output forms.

mod support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, UNIX_EPOCH};

use predicates::prelude::*;
use serde_json::{json, Value};
use support::{claw, json_of, Immutable};

const NOW: i64 = 1_780_000_000_000;
const DAY: i64 = 86_400_000;
const HOUR: i64 = 3_600_000;

struct Fixture {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    state: PathBuf,
    sessions: PathBuf,
}

fn set_mtime(p: &Path, ms: i64) {
    let f = std::fs::File::options().write(true).open(p).unwrap();
    f.set_modified(UNIX_EPOCH + Duration::from_millis(ms as u64))
        .unwrap();
}

impl Fixture {
    fn new(store: Value) -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("home");
        let state = home.join(".openclaw");
        let sessions = state.join("agents/main/sessions");
        std::fs::create_dir_all(&sessions).unwrap();
        std::fs::create_dir_all(home.join("tmp")).unwrap();
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

    /// A file in the sessions directory with an mtime `age_ms` before NOW.
    fn file(&self, name: &str, content: &str, age_ms: i64) -> PathBuf {
        let p = self.sessions.join(name);
        if let Some(d) = p.parent() {
            std::fs::create_dir_all(d).unwrap();
        }
        std::fs::write(&p, content).unwrap();
        set_mtime(&p, NOW - age_ms);
        p
    }

    fn store_path(&self) -> PathBuf {
        self.sessions.join("sessions.json")
    }

    fn store(&self) -> Value {
        serde_json::from_str(&std::fs::read_to_string(self.store_path()).unwrap()).unwrap()
    }

    fn files(&self) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(&self.sessions)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    /// Holds the store lock the binary takes, as any clawstate writer would.
    fn hold_store_lock(&self) -> clawstate::store::store_lock::StoreLock {
        clawstate::store::store_lock::StoreLock::acquire(
            &self.store_path(),
            clawstate::store::store_lock::LockWait::no_wait(),
        )
        .unwrap()
    }
}

/// Every path under `root` with its size and mtime (symlinks as links).
fn snapshot(root: &Path) -> BTreeMap<PathBuf, (u64, i128, bool)> {
    fn walk(d: &Path, out: &mut BTreeMap<PathBuf, (u64, i128, bool)>) {
        let Ok(rd) = std::fs::read_dir(d) else { return };
        for e in rd.flatten() {
            let m = std::fs::symlink_metadata(e.path()).unwrap();
            let t = m
                .modified()
                .unwrap()
                .duration_since(UNIX_EPOCH)
                .unwrap()
                .as_nanos() as i128;
            out.insert(e.path(), (m.len(), t, m.file_type().is_symlink()));
            if m.is_dir() {
                walk(&e.path(), out);
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, &mut out);
    out
}

fn message_transcript() -> &'static str {
    "{\"type\":\"session\",\"id\":\"x\"}\n{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"hi\"}}\n"
}

/// A store with `n` stale entries (each with a transcript) and one fresh one.
fn stale_fixture(n: usize) -> Fixture {
    let mut store = serde_json::Map::new();
    store.insert(
        "agent:main:main".into(),
        json!({"sessionId": "fresh", "updatedAt": NOW - HOUR}),
    );
    for i in 0..n {
        store.insert(
            format!("agent:main:cron:job{i}"),
            json!({"sessionId": format!("old{i}"), "updatedAt": NOW - 40 * DAY}),
        );
    }
    let f = Fixture::new(Value::Object(store));
    f.file("fresh.jsonl", message_transcript(), HOUR);
    for i in 0..n {
        f.file(&format!("old{i}.jsonl"), message_transcript(), 40 * DAY);
    }
    f
}

#[test]
fn enforce_prunes_archives_and_is_silent_when_nothing_changes() {
    let f = stale_fixture(3);
    f.file("orphan.jsonl", message_transcript(), 40 * DAY);
    f.file("notes.txt", "keep", 40 * DAY);
    let out = f.cmd().args(["cleanup", "--enforce"]).assert().success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(
        text.contains("Applied maintenance. Current entries: 1"),
        "{text}"
    );
    assert!(text.contains("Pruned unreferenced artifacts: 1"), "{text}");
    let files = f.files();
    assert_eq!(
        files
            .iter()
            .filter(|n| n.starts_with("old") && n.contains(".jsonl.deleted."))
            .count(),
        3,
        "{files:?}"
    );
    assert!(files.contains(&"notes.txt".to_string()));
    assert!(!files.contains(&"orphan.jsonl".to_string()));
    assert_eq!(f.store().as_object().unwrap().len(), 1);
    let mode = std::fs::metadata(f.store_path()).unwrap().permissions();
    assert_eq!(
        std::os::unix::fs::PermissionsExt::mode(&mode) & 0o777,
        0o600
    );
    // The second (cron) run has nothing to do: no output at all.
    f.cmd()
        .args(["cleanup", "--enforce"])
        .assert()
        .success()
        .stdout("")
        .stderr("");
}

/// When a planned archive rename fails (here: a transcript made immutable), the directory
/// is not as the plan left it, so the pruner lists it again. It then finds the transcript
/// that stayed, old and unreferenced, and fails to remove it too (a pruner that trusted
/// the plan would not see it; the peer was not run on an immutable file). Its counts are
/// merged with the removals already made: they are those of a twin run where every
/// rename went through. The failures exit 73, and the other archives are made.
#[test]
fn a_failed_archive_rename_sends_the_pruner_to_a_relisting_with_the_same_counts() {
    let twin = || {
        let f = stale_fixture(3);
        f.file("orphan.jsonl", message_transcript(), 40 * DAY);
        f.file("notes.txt", "keep", 40 * DAY);
        f
    };
    let (planned, failing) = (twin(), twin());
    let Some(_guard) = Immutable::set(&[&failing.sessions.join("old1.jsonl")]) else {
        return;
    };
    let run = |f: &Fixture| {
        let out = f
            .cmd()
            .args(["cleanup", "--enforce", "--json"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        (out.status.code(), json_of(&out.stdout), stderr)
    };
    let (code, as_planned, _) = run(&planned);
    assert_eq!(code, Some(0));
    let (code, relisted, stderr) = run(&failing);
    assert_eq!(code, Some(73), "{stderr}");
    // The rename, then the pruner's removal of the same file.
    assert!(
        stderr.contains("2 file(s) could not be archived or removed"),
        "{stderr}"
    );
    let counts = &as_planned["unreferencedArtifacts"];
    assert_eq!(counts["removedFiles"], 1, "{as_planned}");
    assert_eq!(relisted["unreferencedArtifacts"], *counts, "{relisted}");
    assert_eq!(relisted["appliedCount"], 1);
    let files = failing.files();
    assert!(files.contains(&"old1.jsonl".to_string()), "{files:?}");
    assert!(!files.contains(&"orphan.jsonl".to_string()), "{files:?}");
    for i in [0, 2] {
        let archived = format!("old{i}.jsonl.deleted.");
        assert!(files.iter().any(|n| n.starts_with(&archived)), "{files:?}");
    }
    assert!(!files.iter().any(|n| n.ends_with(".pending-archives.json")));
}

/// A run killed between its store write and its archive renames leaves the journal; the
/// next run finishes the renames for the sessions the store no longer references (instead
/// of pruning those old transcripts as unreferenced), leaves referenced ones alone, and
/// removes the journal. A dry run leaves it in place.
#[test]
fn the_next_run_finishes_an_interrupted_runs_archive_renames() {
    let f = stale_fixture(0);
    let old = f.file("old0.jsonl", message_transcript(), 40 * DAY);
    let fresh = f.sessions.join("fresh.jsonl");
    let dir = std::fs::canonicalize(&f.sessions).unwrap();
    let journal = f.sessions.join("sessions.json.pending-archives.json");
    let to = |n: &str| dir.join(format!("{n}.deleted.2026-05-28T00-00-00.000Z"));
    std::fs::write(
        &journal,
        json!({"version": 1, "archives": [
            {"sessionId": "old0", "from": dir.join("old0.jsonl"), "to": to("old0.jsonl")},
            {"sessionId": "fresh", "from": dir.join("fresh.jsonl"), "to": to("fresh.jsonl")},
        ]})
        .to_string(),
    )
    .unwrap();
    f.cmd()
        .args(["cleanup", "--dry-run", "--json"])
        .assert()
        .success();
    assert!(journal.exists() && old.exists());
    f.cmd().args(["cleanup", "--enforce"]).assert().success();
    assert!(!journal.exists());
    assert!(!old.exists());
    assert_eq!(
        std::fs::read_to_string(to("old0.jsonl")).unwrap(),
        message_transcript()
    );
    assert!(fresh.exists() && !to("fresh.jsonl").exists());
    assert_eq!(f.store().as_object().unwrap().len(), 1);
}

#[test]
fn verbose_logs_every_file_and_prints_the_action_table() {
    let f = stale_fixture(2);
    f.file("orphan.jsonl", message_transcript(), 40 * DAY);
    f.file("x.jsonl.deleted.2020-01-01T00-00-00.000Z", "old", 40 * DAY);
    let out = f
        .cmd()
        .args(["cleanup", "--enforce", "--verbose"])
        .assert()
        .success();
    let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert_eq!(err.matches("archived ").count(), 2, "{err}");
    assert!(err.contains("orphan.jsonl (unreferenced artifact"), "{err}");
    assert!(
        err.contains("x.jsonl.deleted.2020-01-01T00-00-00.000Z (archive retention"),
        "{err}"
    );
    assert!(stdout.contains("prune-stale"), "{stdout}");
    assert!(stdout.contains("Total: 1 kept, 2 pruned"), "{stdout}");
}

#[test]
fn dry_run_prints_the_plan_and_writes_nothing() {
    let f = stale_fixture(2);
    let before = snapshot(&f.home);
    let out = f.cmd().args(["cleanup", "--dry-run"]).assert().success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(text.contains("Entries: 3 -> 1 (remove 2)"), "{text}");
    assert!(text.contains("Would prune stale: 2"), "{text}");
    assert!(text.contains("Planned session actions:"), "{text}");
    assert_eq!(snapshot(&f.home), before);
    // JSON: the gateway's summary object.
    let out = f
        .cmd()
        .args(["cleanup", "--dry-run", "--json"])
        .assert()
        .success();
    let v = json_of(&out.get_output().stdout);
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "agentId",
            "storePath",
            "mode",
            "dryRun",
            "beforeCount",
            "afterCount",
            "repaired",
            "missing",
            "dmScopeRetired",
            "modelRunPruned",
            "pruned",
            "capped",
            "unreferencedArtifacts",
            "diskBudget",
            "wouldMutate"
        ]
    );
    assert_eq!(v["pruned"], 2);
    assert_eq!(snapshot(&f.home), before);
    // A missing store: nothing is created.
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("nested/dir/sessions.json");
    f.cmd()
        .args(["cleanup", "--dry-run", "--json", "--store"])
        .arg(&missing)
        .assert()
        .success();
    assert!(!tmp.path().join("nested").exists());
}

#[test]
fn malformed_store_is_65_and_never_touched() {
    let f = stale_fixture(2);
    std::fs::write(f.store_path(), "{\"a\": {").unwrap();
    f.file("orphan.jsonl", message_transcript(), 40 * DAY);
    let before = snapshot(&f.home);
    for args in [
        vec!["cleanup", "--enforce"],
        vec!["cleanup", "--dry-run", "--json"],
    ] {
        f.cmd()
            .args(&args)
            .assert()
            .code(65)
            .stderr(predicate::str::contains("malformed store"));
        // Not one file changed: no `{}`, no archive, no orphan removed.
        let mut after = snapshot(&f.home);
        after.retain(|p, _| !p.starts_with(f.home.join("tmp")));
        let mut b = before.clone();
        b.retain(|p, _| !p.starts_with(f.home.join("tmp")));
        assert_eq!(after, b);
    }
}

#[test]
fn invalid_config_is_65_and_nothing_is_touched() {
    let f = stale_fixture(2);
    std::fs::write(
        f.state.join("openclaw.json"),
        r#"{session: {maintenance: {pruneAfter: "soon"}}}"#,
    )
    .unwrap();
    let before = snapshot(&f.sessions);
    f.cmd()
        .args(["cleanup", "--enforce"])
        .assert()
        .code(65)
        .stderr(predicate::str::contains("session.maintenance.pruneAfter"));
    assert_eq!(snapshot(&f.sessions), before);
}

#[test]
fn symlinks_out_of_the_directory_are_never_followed_or_deleted() {
    let outside = tempfile::tempdir().unwrap();
    let precious = outside.path().join("precious.jsonl");
    std::fs::write(&precious, message_transcript()).unwrap();
    set_mtime(&precious, NOW - 100 * DAY);
    let outside_before = snapshot(outside.path());
    let f = Fixture::new(json!({
        "agent:main:cron:old": {"sessionId": "old", "updatedAt": NOW - 40 * DAY},
        "agent:main:cron:linked": {"sessionId": "lnk", "updatedAt": NOW - 40 * DAY,
            "sessionFile": "linked.jsonl"},
    }));
    let link = |name: &str| {
        let p = f.sessions.join(name);
        std::os::unix::fs::symlink(&precious, &p).unwrap();
        p
    };
    // A stale entry whose transcript and sidecars are links out of the directory.
    link("old.jsonl");
    link("old.trajectory.jsonl");
    link("old.trajectory-path.json");
    link("linked.jsonl");
    // An archive past retention, an orphan transcript and a checkpoint, all links.
    link("gone.jsonl.deleted.2020-01-01T00-00-00.000Z");
    link("orphan.jsonl");
    link("x.checkpoint.123e4567-e89b-42d3-a456-426614174000.jsonl");
    let out = f
        .cmd()
        .args(["cleanup", "--enforce", "--verbose"])
        .assert()
        .success();
    let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(err.contains("left alone"), "{err}");
    assert_eq!(snapshot(outside.path()), outside_before);
    for name in [
        "old.jsonl",
        "old.trajectory.jsonl",
        "old.trajectory-path.json",
        "linked.jsonl",
        "gone.jsonl.deleted.2020-01-01T00-00-00.000Z",
        "orphan.jsonl",
        "x.checkpoint.123e4567-e89b-42d3-a456-426614174000.jsonl",
    ] {
        let m = std::fs::symlink_metadata(f.sessions.join(name))
            .unwrap_or_else(|_| panic!("{name} was removed"));
        assert!(m.file_type().is_symlink(), "{name}");
    }
    // The entries themselves are pruned.
    assert_eq!(f.store(), json!({}));
}

#[test]
fn nothing_outside_the_sessions_directory_is_touched() {
    let f = stale_fixture(1);
    // A sibling agent's transcript named by a stale entry, and a trajectory runtime file
    // outside every sessions directory named by a pointer: the gateway would delete the
    // latter; clawstate reports it instead.
    let sibling = f.state.join("agents/work/sessions");
    std::fs::create_dir_all(&sibling).unwrap();
    let sib_file = sibling.join("shared.jsonl");
    std::fs::write(&sib_file, message_transcript()).unwrap();
    let traj_dir = f.state.join("trajectories");
    std::fs::create_dir_all(&traj_dir).unwrap();
    let runtime = traj_dir.join("s2.jsonl");
    std::fs::write(
        &runtime,
        "{\"traceSchema\":\"openclaw-trajectory\",\"schemaVersion\":1,\"source\":\"runtime\",\"sessionId\":\"s2\"}\n",
    )
    .unwrap();
    let mut store = f.store();
    store["agent:main:cron:sib"] =
        json!({"sessionId": "s1", "updatedAt": NOW - 40 * DAY, "sessionFile": sib_file});
    store["agent:main:cron:traj"] = json!({"sessionId": "s2", "updatedAt": NOW - 40 * DAY});
    std::fs::write(f.store_path(), serde_json::to_string(&store).unwrap()).unwrap();
    f.file("s2.jsonl", message_transcript(), 40 * DAY);
    f.file(
        "s2.trajectory-path.json",
        &serde_json::to_string(&json!({"traceSchema": "openclaw-trajectory-pointer",
            "schemaVersion": 1, "sessionId": "s2", "runtimeFile": runtime}))
        .unwrap(),
        40 * DAY,
    );
    let mut before = snapshot(&f.home);
    before.retain(|p, _| !p.starts_with(&f.sessions) && !p.starts_with(f.home.join("tmp")));
    let out = f.cmd().args(["cleanup", "--enforce"]).assert().success();
    let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(err.contains("trajectory runtime file outside"), "{err}");
    let mut after = snapshot(&f.home);
    after.retain(|p, _| !p.starts_with(&f.sessions) && !p.starts_with(f.home.join("tmp")));
    assert_eq!(after, before);
    // Inside, the pointer went and the transcripts were archived.
    let files = f.files();
    assert!(!files.contains(&"s2.trajectory-path.json".to_string()));
    assert!(files.iter().any(|n| n.starts_with("s2.jsonl.deleted.")));
}

#[test]
fn no_wait_is_75_while_another_writer_holds_the_store() {
    let f = stale_fixture(2);
    let before = std::fs::read(f.store_path()).unwrap();
    let held = f.hold_store_lock();
    f.cmd()
        .args(["cleanup", "--enforce", "--no-wait"])
        .assert()
        .code(75)
        .stderr(predicate::str::contains("another clawstate process"));
    assert_eq!(std::fs::read(f.store_path()).unwrap(), before);
    // A dry run needs no lock.
    f.cmd().args(["cleanup", "--dry-run"]).assert().success();
    drop(held);
    f.cmd()
        .args(["cleanup", "--enforce", "--no-wait"])
        .assert()
        .success();
    assert_eq!(f.store().as_object().unwrap().len(), 1);
}

#[test]
fn a_blocked_run_waits_for_the_lock_then_runs() {
    let f = stale_fixture(2);
    let held = f.hold_store_lock();
    let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("claw-sessions"));
    cmd.env_clear()
        .env("HOME", &f.home)
        .env("TMPDIR", f.home.join("tmp"))
        .args(["--now", &NOW.to_string(), "cleanup", "--enforce", "--json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    std::thread::sleep(Duration::from_millis(700));
    assert!(
        child.try_wait().unwrap().is_none(),
        "the run must wait for the lock"
    );
    assert_eq!(
        f.store().as_object().unwrap().len(),
        3,
        "nothing written yet"
    );
    drop(held);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    assert_eq!(json_of(&out.stdout)["pruned"], 2);
    assert_eq!(f.store().as_object().unwrap().len(), 1);
}

#[test]
fn overlapping_cron_runs_serialise() {
    // Two cron runs start together on a store with many stale entries: one does the
    // work, the other finds nothing left; nothing is archived twice or lost.
    let f = stale_fixture(300);
    let spawn = || {
        std::process::Command::new(assert_cmd::cargo::cargo_bin("claw-sessions"))
            .env_clear()
            .env("HOME", &f.home)
            .env("TMPDIR", f.home.join("tmp"))
            .args(["--now", &NOW.to_string(), "cleanup", "--enforce", "--json"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    // No deadlock: the loser waits on the store lock (--wait defaults to 60 s, then 75).
    let (a, b) = (spawn(), spawn());
    let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
    assert!(
        a.status.success() && b.status.success(),
        "{}{}",
        String::from_utf8_lossy(&a.stderr),
        String::from_utf8_lossy(&b.stderr)
    );
    let mut pruned = [
        json_of(&a.stdout)["pruned"].as_u64().unwrap(),
        json_of(&b.stdout)["pruned"].as_u64().unwrap(),
    ];
    pruned.sort();
    assert_eq!(pruned, [0, 300]);
    let files = f.files();
    assert_eq!(
        files
            .iter()
            .filter(|n| n.contains(".jsonl.deleted."))
            .count(),
        300
    );
    assert_eq!(f.store().as_object().unwrap().len(), 1);
    assert!(files.iter().all(|n| !n.ends_with(".tmp")), "{files:?}");
}

fn live_gateway_lock(f: &Fixture) {
    use sha2::Digest;
    let config = f.state.join("openclaw.json");
    let hash = sha2::Sha256::digest(config.to_string_lossy().as_bytes());
    let hex: String = hash.iter().take(4).map(|b| format!("{b:02x}")).collect();
    // SAFETY: getuid takes no arguments and cannot fail.
    let uid = unsafe { libc::getuid() };
    let dir = f.home.join("tmp").join(format!("openclaw-{uid}"));
    std::fs::create_dir_all(&dir).unwrap();
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
    let after = &stat[stat.rfind(')').unwrap() + 2..];
    let start: u64 = after.split(' ').nth(19).unwrap().parse().unwrap();
    std::fs::write(
        dir.join(format!("gateway.{hex}.lock")),
        serde_json::to_string(&json!({"pid": std::process::id(), "createdAt": "2026-01-01T00:00:00.000Z", "configPath": config, "startTime": start})).unwrap(),
    )
    .unwrap();
}

#[test]
fn live_gateway_is_75_unless_store_is_given() {
    let f = stale_fixture(2);
    live_gateway_lock(&f);
    let before = snapshot(&f.sessions);
    f.cmd()
        .args(["cleanup", "--enforce"])
        .assert()
        .code(75)
        .stderr(predicate::str::contains("gateway"));
    assert_eq!(snapshot(&f.sessions), before);
    // Previewing is fine.
    f.cmd().args(["cleanup", "--dry-run"]).assert().success();
    // --store: proceeds with a warning.
    f.cmd()
        .args(["cleanup", "--enforce", "--store"])
        .arg(f.store_path())
        .assert()
        .success()
        .stderr(predicate::str::contains("warning"));
    assert_eq!(f.store().as_object().unwrap().len(), 1);
}

#[test]
fn warn_mode_reports_and_keeps_entries() {
    let f = stale_fixture(2);
    std::fs::write(
        f.state.join("openclaw.json"),
        r#"{session: {maintenance: {mode: "warn"}}}"#,
    )
    .unwrap();
    f.file("orphan.jsonl", message_transcript(), 40 * DAY);
    let out = f.cmd().args(["cleanup", "--json"]).assert().success();
    let v = json_of(&out.get_output().stdout);
    assert_eq!(v["mode"], "warn");
    assert_eq!(v["pruned"], 0);
    assert_eq!(v["applied"], true);
    assert_eq!(f.store().as_object().unwrap().len(), 3);
    assert!(f.files().contains(&"orphan.jsonl".to_string()));
    // The preview ignores the mode.
    let out = f
        .cmd()
        .args(["cleanup", "--dry-run", "--json"])
        .assert()
        .success();
    assert_eq!(json_of(&out.get_output().stdout)["pruned"], 2);
    // --enforce overrides it.
    f.cmd().args(["cleanup", "--enforce"]).assert().success();
    assert_eq!(f.store().as_object().unwrap().len(), 1);
}

#[test]
fn all_agents_json_envelope_and_active_key() {
    let f = stale_fixture(2);
    std::fs::write(
        f.state.join("openclaw.json"),
        r#"{agents: {list: [{id: "main"}, {id: "work"}]}}"#,
    )
    .unwrap();
    let out = f
        .cmd()
        .args([
            "cleanup",
            "--all-agents",
            "--enforce",
            "--json",
            "--active-key",
            "AGENT:MAIN:CRON:JOB1",
        ])
        .assert()
        .success();
    let v = json_of(&out.get_output().stdout);
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys, ["allAgents", "mode", "dryRun", "stores"]);
    assert_eq!(v["stores"][0]["pruned"], 1);
    assert_eq!(v["stores"][1]["agentId"], "work");
    // The active key survived; the work agent's empty store was created, as the gateway does.
    assert!(f.store().get("agent:main:cron:job1").is_some());
    assert_eq!(
        std::fs::read_to_string(f.state.join("agents/work/sessions/sessions.json")).unwrap(),
        "{}"
    );
}
