//! `claw-signals` end to end: creation, recording, duplicates, listing, `changes-since`,
//! versions, pruning, forgetting, statistics, errors and their exit codes.

mod signals_support;

use std::os::unix::fs::PermissionsExt;
use std::time::{Duration, Instant};

use clawstate::signals::rusqlite::Connection;
use serde_json::Value;
use signals_support::{dump_tables, ok, stdout, Sandbox};

const T: i64 = 1_795_989_048_800;
const DAY: i64 = 86_400_000;
const C1: &str = "agent:main:subagent:c1";
const MAIN: &str = "agent:main:main";

fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

fn code(o: &std::process::Output) -> i32 {
    o.status.code().unwrap_or(-1)
}

fn err(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn record_creates_the_database_privately_and_prints_the_event() {
    let dir = tempfile::tempdir().unwrap();
    let sb = Sandbox::new(dir.path());
    let out = ok(sb.signals(
        T,
        &[
            "record",
            "--session",
            C1,
            "--kind",
            "child_spawned",
            "--actor-id",
            MAIN,
            "--run-id",
            "run-1",
            "--json",
        ],
    ));
    let ev = json(&out);
    assert_eq!(ev["sequence"], 1);
    assert_eq!(ev["summary"], "child session spawned");
    assert_eq!(ev["actorType"], "agent");
    assert_eq!(ev["agentId"], "main");
    let db = sb.db();
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&db), 0o600);
    assert_eq!(mode(db.parent().unwrap()), 0o700);
    let conn = Connection::open(&db).unwrap();
    let jm: String = conn
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(jm, "wal");
    let uv: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(uv, 15);
    // The spawn seeded the requester's cursor at the spawn version.
    let cur = ok(sb.watch(T, &["list", "--ndjson"]));
    let cur = json(cur.trim());
    assert_eq!(
        (
            cur["watcherSessionKey"].clone(),
            cur["lastSeenSequence"].clone(),
            cur["state"].clone()
        ),
        (Value::from(MAIN), Value::from(1), Value::from("idle"))
    );
}

#[test]
fn duplicates_return_the_existing_event_and_burn_a_sequence() {
    let dir = tempfile::tempdir().unwrap();
    let sb = Sandbox::new(dir.path());
    let args = [
        "record",
        "--session",
        C1,
        "--kind",
        "run_failed",
        "--run-id",
        "r",
        "--outcome",
        "cancelled",
        "--json",
    ];
    let first = json(&ok(sb.signals(T, &args)));
    let second = json(&ok(sb.signals(T + 5, &args)));
    assert_eq!(first, second);
    assert_eq!(first["payload"]["outcome"], "cancelled");
    assert_eq!(first["summary"], "child run cancelled");
    let third = json(&ok(sb.signals(
        T + 9,
        &["record", "--session", C1, "--kind", "compacted", "--json"],
    )));
    assert_eq!(third["sequence"], 3, "the duplicate burned sequence 2");
    let text = ok(sb.signals(T, &args[..args.len() - 1]));
    assert!(text.contains("duplicate"), "{text}");
}

#[test]
fn occurred_at_is_clamped_and_payload_keeps_its_order() {
    let dir = tempfile::tempdir().unwrap();
    let sb = Sandbox::new(dir.path());
    let future = ok(sb.signals(
        T,
        &[
            "record",
            "--session",
            C1,
            "--kind",
            "compacted",
            "--occurred-at",
            &(T + 3_600_000).to_string(),
            "--json",
        ],
    ));
    assert_eq!(json(&future)["occurredAt"], T);
    let past = ok(sb.signals(
        T,
        &[
            "record",
            "--session",
            C1,
            "--kind",
            "compacted",
            "--occurred-at",
            "2020-01-01T00:00:00Z",
            "--json",
            "--payload",
            r#"{"z":1,"a":{"y":2,"b":3},"7":"index keys first, as JavaScript"}"#,
        ],
    ));
    let p = json(&past);
    assert_eq!(p["occurredAt"], T - DAY);
    let listed = ok(sb.signals(T, &["list", "--ndjson", "--since", "1"]));
    assert!(
        listed.contains(
            r#""payload":{"7":"index keys first, as JavaScript","z":1,"a":{"y":2,"b":3}}"#
        ),
        "{listed}"
    );
}

#[test]
fn bad_input_is_refused_with_a_distinct_code_and_nothing_changes() {
    let dir = tempfile::tempdir().unwrap();
    let sb = Sandbox::new(dir.path());
    let o = sb.signals(
        T,
        &[
            "record",
            "--session",
            C1,
            "--kind",
            "compacted",
            "--payload",
            "[1,2]",
        ],
    );
    assert_eq!(code(&o), 65, "{}", err(&o));
    assert!(err(&o).contains("payload"), "{}", err(&o));
    assert!(
        !sb.db().exists(),
        "nothing may be created for a refused event"
    );
    let o = sb.signals(T, &["record", "--session", C1, "--kind", "mystery"]);
    assert_eq!(code(&o), 65);
    assert!(err(&o).contains("actor"), "{}", err(&o));
    let o = sb.signals(T, &["record", "--kind", "compacted"]);
    assert_eq!(
        code(&o),
        2,
        "a missing --session is a usage error: {}",
        err(&o)
    );
    let o = sb.signals(
        T,
        &[
            "record",
            "--session",
            C1,
            "--kind",
            "run_failed",
            "--outcome",
            "exploded",
        ],
    );
    assert_eq!(code(&o), 65);
    let o = sb.signals(
        T,
        &[
            "record",
            "--session",
            C1,
            "--kind",
            "compacted",
            "--occurred-at",
            "yesterday",
        ],
    );
    assert_eq!(code(&o), 65);
    // One bad NDJSON line refuses the whole batch before anything is written.
    let mut c = sb.cmd("claw-signals");
    c.args(["--now", &T.to_string(), "record", "--stdin"]);
    let o = run_with_stdin(c, "{\"sessionKey\":\"a\",\"kind\":\"compacted\"}\n{\"sessionKey\":\"b\",\"kind\":\"compacted\",\"oops\":1}\n");
    assert_eq!(code(&o), 65);
    assert!(
        err(&o).contains("stdin line 2") && err(&o).contains("oops"),
        "{}",
        err(&o)
    );
    assert!(!sb.db().exists());
}

fn run_with_stdin(mut c: std::process::Command, input: &str) -> std::process::Output {
    use std::io::Write;
    let mut child = c
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn stdin_batches_and_changes_since_truncates_at_200() {
    let dir = tempfile::tempdir().unwrap();
    let sb = Sandbox::new(dir.path());
    let mut lines = String::new();
    for i in 0..250 {
        lines.push_str(&format!(
            "{{\"sessionKey\":\"{C1}\",\"kind\":\"human_direct_message\",\"via\":\"telegram\",\"runId\":\"r{i}\",\"payload\":{{\"turns\":2}}}}\n"
        ));
    }
    let mut c = sb.cmd("claw-signals");
    c.args(["--now", &T.to_string(), "record", "--stdin"]);
    let o = run_with_stdin(c, &lines);
    assert!(o.status.success(), "{}", err(&o));
    assert_eq!(stdout(&o).lines().count(), 250);
    let ch = json(&ok(sb.signals(T, &["changes-since", C1, "10", "--json"])));
    assert_eq!(ch["stateVersion"], 250);
    let evs = ch["stateChanges"]["events"].as_array().unwrap();
    assert_eq!(evs.len(), 200);
    assert_eq!(evs[0]["sequence"], 11);
    assert_eq!(evs[0]["payload"], serde_json::json!({"turns": 2}));
    assert_eq!(ch["stateChanges"]["truncated"], true);
    assert_eq!(ch["stateChanges"]["earliestAvailableSequence"], 1);
    assert_eq!(ch["stateChanges"]["historyGap"], false);
    let beyond = json(&ok(sb.signals(T, &["changes-since", C1, "999", "--json"])));
    assert_eq!(beyond["stateChanges"]["events"], serde_json::json!([]));
    assert_eq!(beyond["stateChanges"]["truncated"], false);
}

#[test]
fn changes_since_errors_are_the_peers() {
    let dir = tempfile::tempdir().unwrap();
    let sb = Sandbox::new(dir.path());
    ok(sb.signals(T, &["record", "--session", C1, "--kind", "compacted"]));
    let o = sb.signals(T, &["changes-since", "agent:main:nobody", "0"]);
    assert_eq!(code(&o), 3);
    assert_eq!(
        err(&o).trim(),
        "claw-signals: Unknown sessionKey: agent:main:nobody"
    );
    let o = sb.signals(
        T,
        &["changes-since", "0b5e1a8c-1d2e-4f00-8a00-123456789abc", "0"],
    );
    assert_eq!(code(&o), 3);
    assert!(
        err(&o).contains("Unknown sessionId: 0b5e1a8c"),
        "{}",
        err(&o)
    );
    for bad in ["-1", "1.5", "x", "9007199254740993"] {
        let o = sb.signals(T, &["changes-since", C1, bad]);
        assert_eq!(code(&o), 2, "{bad}");
        assert!(err(&o).contains("changesSince must be a non-negative integer"));
    }
    // A session known to the store but without events is not unknown.
    let sessions = sb.state_dir.join("agents/main/sessions");
    std::fs::create_dir_all(&sessions).unwrap();
    std::fs::write(
        sessions.join("sessions.json"),
        r#"{"agent:main:quiet":{"sessionId":"s","updatedAt":1}}"#,
    )
    .unwrap();
    let quiet = json(&ok(
        sb.signals(T, &["changes-since", "agent:main:quiet", "0", "--json"])
    ));
    assert_eq!(quiet["stateVersion"], 0);
    assert_eq!(quiet["stateChanges"]["earliestAvailableSequence"], 0);
}

#[test]
fn versions_list_filters_and_stats() {
    let dir = tempfile::tempdir().unwrap();
    let sb = Sandbox::new(dir.path());
    ok(sb.signals(T, &["record", "--session", C1, "--kind", "compacted"]));
    ok(sb.signals(
        T,
        &[
            "record",
            "--session",
            "main",
            "--kind",
            "goal_changed",
            "--summary",
            "goal created",
        ],
    ));
    ok(sb.signals(
        T,
        &[
            "record",
            "--session",
            C1,
            "--kind",
            "compacted",
            "--agent",
            "ops",
        ],
    ));
    let v = json(&ok(
        sb.signals(T, &["version", C1, "main", "agent:main:none", "--json"])
    ));
    assert_eq!(v[0]["stateVersion"], 1);
    assert_eq!(
        v[1]["sessionKey"], MAIN,
        "main resolves to the main session key"
    );
    assert_eq!(v[1]["stateVersion"], 2);
    assert_eq!(v[2]["stateVersion"], 0);
    let ops = json(&ok(
        sb.signals(T, &["--agent", "ops", "version", C1, "--json"])
    ));
    assert_eq!(ops[0]["stateVersion"], 3);
    let all = ok(sb.signals(T, &["version", "--all", "--ndjson"]));
    assert_eq!(all.lines().count(), 3);
    let o = sb.signals(T, &["version"]);
    assert_eq!(code(&o), 2);
    let kinds = ok(sb.signals(T, &["list", "--kind", "compacted", "--ndjson"]));
    assert_eq!(kinds.lines().count(), 2);
    let limited = ok(sb.signals(T, &["list", "--session", C1, "--limit", "1", "--ndjson"]));
    assert_eq!(limited.lines().count(), 1);
    let arr = json(&ok(sb.signals(T, &["list", "--json"])));
    assert_eq!(arr.as_array().unwrap().len(), 3);
    let s = json(&ok(sb.signals(T, &["stats", "--json"])));
    assert_eq!(s["events"], 3);
    assert_eq!(s["sessions"], 3);
    assert_eq!(s["schemaVersion"], 15);
    assert_eq!(s["lastAllocatedSequence"], 3);
    assert!(s["databaseBytes"].as_u64().unwrap() > 0);
}

#[test]
fn reads_of_a_missing_database_create_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let sb = Sandbox::new(dir.path());
    assert_eq!(ok(sb.signals(T, &["list"])), "");
    assert_eq!(json(&ok(sb.signals(T, &["stats", "--json"])))["events"], 0);
    assert_eq!(
        json(&ok(sb.signals(T, &["version", C1, "--json"])))[0]["stateVersion"],
        0
    );
    assert_eq!(
        json(&ok(sb.signals(T, &["prune", "--json"])))["remaining"],
        0
    );
    assert_eq!(
        json(&ok(sb.signals(T, &["forget", C1, "--json"])))["events"],
        0
    );
    assert!(!sb.state_dir.exists());
}

#[test]
fn prune_by_age_and_row_cap_with_dry_run() {
    let dir = tempfile::tempdir().unwrap();
    let sb = Sandbox::new(dir.path());
    ok(sb.signals(
        T,
        &[
            "record",
            "--session",
            C1,
            "--kind",
            "child_spawned",
            "--actor-id",
            MAIN,
            "--run-id",
            "r",
        ],
    ));
    for i in 0..5 {
        ok(sb.signals(
            T + 10 * DAY + i,
            &["record", "--session", "agent:main:b", "--kind", "compacted"],
        ));
    }
    let later = T + 35 * DAY;
    let dry = json(&ok(
        sb.signals(later, &["prune", "--dry-run", "--max-rows", "3", "--json"])
    ));
    assert_eq!(
        (
            dry["eventsByAge"].clone(),
            dry["eventsByRowCap"].clone(),
            dry["cursorsExpired"].clone(),
            dry["remaining"].clone()
        ),
        (1.into(), 2.into(), 1.into(), 3.into()),
        "{dry}"
    );
    let before = dump_tables(&sb.db());
    assert_eq!(dump_tables(&sb.db()), before, "a dry run changes nothing");
    let real = json(&ok(
        sb.signals(later, &["prune", "--max-rows", "3", "--json"])
    ));
    assert_eq!(real["eventsByAge"], 1);
    assert_eq!(real["eventsByRowCap"], 2);
    assert_eq!(real["headsStamped"], 2);
    assert_eq!(real["remaining"], 3);
    let ch = json(&ok(sb.signals(later, &["changes-since", C1, "0", "--json"])));
    assert_eq!(ch["stateVersion"], 1, "heads survive pruning");
    assert_eq!(ch["stateChanges"]["historyGap"], true);
    assert_eq!(ch["stateChanges"]["earliestAvailableSequence"], 2);
    let b = json(&ok(
        sb.signals(later, &["changes-since", "agent:main:b", "3", "--json"])
    ));
    assert_eq!(
        b["stateChanges"]["historyGap"], false,
        "exactly at the watermark"
    );
    let o = sb.signals(later, &["prune", "--retention", "soon"]);
    assert_eq!(code(&o), 2);
}

#[test]
fn forget_removes_the_session_and_its_cursors() {
    let dir = tempfile::tempdir().unwrap();
    let sb = Sandbox::new(dir.path());
    ok(sb.signals(
        T,
        &[
            "record",
            "--session",
            C1,
            "--kind",
            "child_spawned",
            "--actor-id",
            MAIN,
            "--run-id",
            "r",
        ],
    ));
    ok(sb.signals(
        T,
        &["record", "--session", C1, "--kind", "human_direct_message"],
    ));
    ok(sb.watch(T, &["add", C1, "agent:main:other"]));
    let dry = json(&ok(sb.signals(T, &["forget", C1, "--dry-run", "--json"])));
    assert_eq!(
        (
            dry["events"].clone(),
            dry["heads"].clone(),
            dry["cursors"].clone()
        ),
        (2.into(), 1.into(), 2.into())
    );
    let done = json(&ok(sb.signals(T, &["forget", C1, "--json"])));
    assert_eq!(done, dry);
    assert_eq!(
        json(&ok(sb.signals(T, &["version", C1, "--json"])))[0]["stateVersion"],
        0
    );
    assert_eq!(ok(sb.watch(T, &["list"])), "");
    let next = json(&ok(sb.signals(
        T,
        &["record", "--session", C1, "--kind", "compacted", "--json"],
    )));
    assert_eq!(
        next["sequence"], 3,
        "a new incarnation continues the global counter"
    );
}

#[test]
fn newer_schemas_are_read_but_never_written() {
    let dir = tempfile::tempdir().unwrap();
    let sb = Sandbox::new(dir.path());
    ok(sb.signals(T, &["record", "--session", C1, "--kind", "compacted"]));
    Connection::open(sb.db())
        .unwrap()
        .execute_batch("PRAGMA user_version = 19;")
        .unwrap();
    let o = sb.signals(T, &["record", "--session", C1, "--kind", "compacted"]);
    assert_eq!(code(&o), 65);
    assert!(
        err(&o).contains("schema version 19 is newer"),
        "{}",
        err(&o)
    );
    assert_eq!(ok(sb.signals(T, &["list"])).lines().count(), 1);
    let o = sb.signals(T, &["--db", "/dev/null", "list"]);
    assert_ne!(code(&o), 0);
    let junk = dir.path().join("junk.sqlite");
    std::fs::write(&junk, "this is not sqlite at all, not even close......................................................").unwrap();
    let o = sb.signals(
        T,
        &[
            "--db",
            junk.to_str().unwrap(),
            "record",
            "--session",
            C1,
            "--kind",
            "compacted",
        ],
    );
    assert_eq!(code(&o), 65, "{}", err(&o));
}

#[test]
fn schema_18_store_paths_are_tolerated_and_filled() {
    let dir = tempfile::tempdir().unwrap();
    let sb = Sandbox::new(dir.path());
    ok(sb.signals(T, &["record", "--session", C1, "--kind", "compacted"]));
    Connection::open(sb.db())
        .unwrap()
        .execute_batch("ALTER TABLE session_watch_cursors ADD COLUMN watcher_store_path TEXT; PRAGMA user_version = 18;")
        .unwrap();
    ok(sb.watch(T, &["add", MAIN, C1]));
    let c = json(ok(sb.watch(T, &["list", "--ndjson"])).trim());
    let path = c["watcherStorePath"].as_str().unwrap();
    assert!(
        path.ends_with("agents/main/agent/openclaw-agent.sqlite"),
        "{path}"
    );
    ok(sb.signals(
        T,
        &["record", "--session", C1, "--kind", "human_direct_message"],
    ));
    assert!(ok(sb.watch(T, &["pending"])).contains("changesSince 1."));
}

#[test]
fn a_held_write_lock_past_the_timeout_exits_75() {
    let dir = tempfile::tempdir().unwrap();
    let sb = Sandbox::new(dir.path());
    ok(sb.signals(T, &["record", "--session", C1, "--kind", "compacted"]));
    let conn = Connection::open(sb.db()).unwrap();
    conn.execute_batch("BEGIN IMMEDIATE;").unwrap();
    let t = Instant::now();
    let o = sb.signals(T, &["record", "--session", C1, "--kind", "compacted"]);
    let waited = t.elapsed();
    conn.execute_batch("ROLLBACK;").unwrap();
    assert_eq!(code(&o), 75, "{}", err(&o));
    assert!(err(&o).contains("busy"), "{}", err(&o));
    assert!(
        waited >= Duration::from_millis(4900),
        "gave up after {waited:?}"
    );
    assert_eq!(
        ok(sb.signals(T, &["list"])).lines().count(),
        1,
        "nothing was written"
    );
}

#[test]
fn an_externally_supervised_database_is_not_written() {
    let dir = tempfile::tempdir().unwrap();
    let sb = Sandbox::new(dir.path());
    ok(sb.signals(T, &["record", "--session", C1, "--kind", "compacted"]));
    Connection::open(sb.db())
        .unwrap()
        .execute(
            "INSERT INTO config_machine_state (state_key, value_json, updated_at_ms) VALUES ('gateway.supervision', ?1, 1)",
            [r#"{"version":1,"mode":"external","managerId":"fleet-1","claimedAt":1}"#],
        )
        .unwrap();
    let o = sb.signals(T, &["record", "--session", C1, "--kind", "compacted"]);
    assert_eq!(code(&o), 75);
    assert!(err(&o).contains("fleet-1"), "{}", err(&o));
    let o = sb
        .cmd("claw-signals")
        .env("OPENCLAW_SUPERVISOR_MODE", "external")
        .args(["record", "--session", C1, "--kind", "compacted"])
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "the supervisor itself may write: {}",
        err(&o)
    );
}

#[test]
fn man_page_and_help_document_exit_codes() {
    let dir = tempfile::tempdir().unwrap();
    let sb = Sandbox::new(dir.path());
    let o = sb.cmd("claw-signals").arg("--help").output().unwrap();
    let help = stdout(&o);
    assert!(
        help.contains("Exit codes") && help.contains("75 busy"),
        "{help}"
    );
    for cmd in [
        "record",
        "list",
        "changes-since",
        "version",
        "prune",
        "forget",
        "stats",
    ] {
        assert!(help.contains(cmd), "{cmd} missing from --help");
    }
}
