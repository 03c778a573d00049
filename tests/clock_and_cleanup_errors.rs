//! `--now` outside JavaScript's date range is a usage error everywhere; `reset` names its
//! `.reset.<ts>` archives from `--now`; a `delete` or `reset` whose signal cleanup fails
//! exits non-zero after the store change, saying what was left.

mod signals_support;
mod support;

use std::path::PathBuf;

use clawstate::signals::rusqlite::Connection;
use serde_json::{json, Value};
use signals_support::{dump_tables, ok, Sandbox};

const T: i64 = 1_795_989_048_800;
const SID: &str = "11111111-2222-4333-8444-555555555555";
const MAIN: &str = "agent:main:main";
const C1: &str = "agent:main:subagent:c1";

fn code(o: &std::process::Output) -> i32 {
    o.status.code().unwrap_or(-1)
}

fn err(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn sessions_dir(sb: &Sandbox) -> PathBuf {
    sb.state_dir.join("agents/main/sessions")
}

/// A store with `main` and `c1`, each with a transcript.
fn with_store(sb: &Sandbox) {
    let dir = sessions_dir(sb);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("sessions.json"),
        serde_json::to_string_pretty(&json!({
            MAIN: {"sessionId": SID, "updatedAt": T - 1000},
            C1: {"sessionId": "c1-session", "updatedAt": T - 2000},
        }))
        .unwrap(),
    )
    .unwrap();
    std::fs::write(
        dir.join(format!("{SID}.jsonl")),
        "{\"type\":\"session\",\"version\":3,\"id\":\"x\"}\n",
    )
    .unwrap();
    std::fs::write(dir.join("c1-session.jsonl"), "{}\n").unwrap();
}

fn store(sb: &Sandbox) -> Value {
    serde_json::from_str(&std::fs::read_to_string(sessions_dir(sb).join("sessions.json")).unwrap())
        .unwrap()
}

fn files(sb: &Sandbox) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(sessions_dir(sb))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn now_outside_the_javascript_date_range_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let sb = Sandbox::new(dir.path());
    with_store(&sb);
    for bad in [
        "9000000000000000",
        "8640000000000001",
        "99999999999999999999",
        "+275760-09-13T00:00:00.001Z",
    ] {
        for bin in [
            "claw-sessions",
            "claw-signals",
            "claw-watch",
            "claw-compact",
        ] {
            let sub = match bin {
                "claw-sessions" | "claw-signals" | "claw-watch" => "list",
                _ => "check",
            };
            let mut c = sb.cmd(bin);
            c.args(["--now", bad, sub]);
            if bin == "claw-compact" {
                c.arg("main");
            }
            let o = c.output().unwrap();
            assert_eq!(code(&o), 2, "{bin} --now {bad}: {}", err(&o));
            assert!(
                err(&o).contains("--now") && err(&o).contains("JavaScript date range"),
                "{bin} --now {bad}: {}",
                err(&o)
            );
        }
    }
    // The ends of the range themselves are dates.
    for good in ["8640000000000000", "0"] {
        let o = sb
            .cmd("claw-sessions")
            .args(["--now", good, "list"])
            .output()
            .unwrap();
        assert_eq!(code(&o), 0, "--now {good}: {}", err(&o));
    }
}

#[test]
fn reset_names_its_archive_from_now() {
    let dir = tempfile::tempdir().unwrap();
    let sb = Sandbox::new(dir.path());
    with_store(&sb);
    let o = sb
        .cmd("claw-sessions")
        .args(["--now", "2030-01-02T03:04:05.678Z", "reset", "main"])
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", err(&o));
    let want = format!("{SID}.jsonl.reset.2030-01-02T03-04-05.678Z");
    assert!(files(&sb).contains(&want), "{:?}", files(&sb));
}

#[test]
fn a_reset_at_the_same_now_never_overwrites_an_earlier_archive() {
    let dir = tempfile::tempdir().unwrap();
    let sb = Sandbox::new(dir.path());
    with_store(&sb);
    // A fixed sessionFile: every reset archives the same name.
    let dir2 = sessions_dir(&sb);
    std::fs::write(
        dir2.join("sessions.json"),
        serde_json::to_string_pretty(&json!({
            MAIN: {"sessionId": SID, "updatedAt": T - 1000, "sessionFile": "fixed.jsonl"},
        }))
        .unwrap(),
    )
    .unwrap();
    std::fs::write(dir2.join("fixed.jsonl"), "first\n").unwrap();
    let now = "2030-01-02T03:04:05.678Z";
    ok(sb
        .cmd("claw-sessions")
        .args(["--now", now, "reset", "main"])
        .output()
        .unwrap());
    let path_of = |s: &Value| s[MAIN]["sessionFile"].as_str().unwrap().to_string();
    let second = path_of(&store(&sb));
    std::fs::write(&second, "second\n").unwrap();
    ok(sb
        .cmd("claw-sessions")
        .args(["--now", now, "reset", "main"])
        .output()
        .unwrap());
    let archives: Vec<String> = files(&sb)
        .into_iter()
        .filter(|n| n.contains(".reset."))
        .collect();
    let contents: Vec<String> = archives
        .iter()
        .map(|n| std::fs::read_to_string(dir2.join(n)).unwrap())
        .collect();
    assert!(
        contents.contains(&"first\n".to_string()),
        "{archives:?} {contents:?}"
    );
    assert!(
        archives
            .iter()
            .any(|n| n.ends_with(".reset.2030-01-02T03-04-05.678Z")),
        "{archives:?}"
    );
}

/// A state DB whose writers must refuse: a planted trigger on the signal log.
fn plant_trigger(sb: &Sandbox) {
    ok(sb.signals(T, &["record", "--session", C1, "--kind", "compacted"]));
    ok(sb.watch(T, &["add", MAIN, C1]));
    Connection::open(sb.db())
        .unwrap()
        .execute_batch(
            "CREATE TRIGGER wipe_cursors AFTER DELETE ON session_state_events \
             BEGIN DELETE FROM session_watch_cursors; END;",
        )
        .unwrap();
}

#[test]
fn delete_whose_signal_cleanup_fails_exits_non_zero_after_the_store_change() {
    let dir = tempfile::tempdir().unwrap();
    let sb = Sandbox::new(dir.path());
    with_store(&sb);
    plant_trigger(&sb);
    let before = dump_tables(&sb.db());
    let o = sb
        .cmd("claw-sessions")
        .args(["--now", &T.to_string(), "delete", C1])
        .output()
        .unwrap();
    assert_eq!(code(&o), 65, "{}", err(&o));
    let e = err(&o);
    assert!(
        e.contains("store updated") && e.contains(C1) && e.contains("wipe_cursors"),
        "{e}"
    );
    // The store change stands; the signal state is untouched.
    assert!(store(&sb).get(C1).is_none());
    assert!(files(&sb)
        .iter()
        .any(|n| n.starts_with("c1-session.jsonl.deleted.")));
    assert_eq!(dump_tables(&sb.db()), before);
}

#[test]
fn reset_whose_signal_cleanup_fails_exits_non_zero_after_the_store_change() {
    let dir = tempfile::tempdir().unwrap();
    let sb = Sandbox::new(dir.path());
    with_store(&sb);
    plant_trigger(&sb);
    let before = dump_tables(&sb.db());
    let o = sb
        .cmd("claw-sessions")
        .args(["--now", &T.to_string(), "reset", "main"])
        .output()
        .unwrap();
    assert_eq!(code(&o), 65, "{}", err(&o));
    let e = err(&o);
    assert!(
        e.contains("store updated") && e.contains(MAIN) && e.contains("watch cursors"),
        "{e}"
    );
    assert_ne!(store(&sb)[MAIN]["sessionId"], SID);
    assert_eq!(dump_tables(&sb.db()), before);
}

#[test]
fn delete_with_an_unwritable_state_database_exits_73_after_the_store_change() {
    let dir = tempfile::tempdir().unwrap();
    let sb = Sandbox::new(dir.path());
    with_store(&sb);
    ok(sb.signals(T, &["record", "--session", C1, "--kind", "compacted"]));
    let db = sb.db();
    let Some(_guard) = support::Immutable::set(&[db.as_path()]) else {
        return;
    };
    let o = sb
        .cmd("claw-sessions")
        .args(["--now", &T.to_string(), "delete", C1])
        .output()
        .unwrap();
    assert_eq!(code(&o), 73, "{}", err(&o));
    assert!(err(&o).contains("store updated"), "{}", err(&o));
    assert!(store(&sb).get(C1).is_none());
}
