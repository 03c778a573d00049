//! Pending notices that never reach their watcher (`signals::delivery`): on a 2026.9.6 state
//! database (schema 18) a cursor with no store or another store than the watcher's current
//! one is dropped by the queue, and a watcher whose session is gone from its store is never
//! drained nor re-opened by a gateway start. `claw-watch list --pending`, `pending` and
//! `claw-signals stats` count only the deliverable ones; `list --undeliverable` and the
//! stats' `undeliverableByReason` name the others.

mod signals_support;

use serde_json::{json, Value};
use signals_support::{ok, Sandbox};

const T: i64 = 1_795_989_048_800;
const TARGET: &str = "agent:main:subagent:t1";
const MAIN: &str = "agent:main:main";
const LEGACY: &str = "agent:main:legacy";
const MOVED: &str = "agent:main:moved";
const GONE: &str = "agent:main:gone";
/// An agent with no store on this host: whether its session exists cannot be told.
const OPS: &str = "agent:ops:main";

fn json_lines(text: &str) -> Vec<Value> {
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

fn watchers_of(rows: &[Value]) -> Vec<String> {
    let mut w: Vec<String> = rows
        .iter()
        .map(|r| r["watcherSessionKey"].as_str().unwrap_or("?").to_string())
        .collect();
    w.sort();
    w
}

/// A 2026.9.6 host: five watchers of TARGET, each with a pending notice; agent main's
/// store holds MAIN, LEGACY and MOVED (not GONE); LEGACY's cursor records no store and
/// MOVED's another one.
fn host(root: &std::path::Path) -> Sandbox {
    let sb = Sandbox::new(root);
    std::fs::create_dir_all(&sb.state_dir).expect("state dir");
    std::fs::write(
        sb.state_dir.join("openclaw.json"),
        r#"{"meta":{"lastTouchedVersion":"2026.9.6"}}"#,
    )
    .expect("config");
    for w in [MAIN, LEGACY, MOVED, GONE, OPS] {
        ok(sb.watch(T, &["add", w, TARGET]));
    }
    let conn = clawstate::signals::rusqlite::Connection::open(sb.db()).expect("open");
    conn.execute(
        "UPDATE session_watch_cursors SET watcher_store_path = NULL WHERE watcher_session_key = ?1",
        [LEGACY],
    )
    .expect("legacy");
    conn.execute(
        "UPDATE session_watch_cursors SET watcher_store_path = '/elsewhere/openclaw-agent.sqlite' WHERE watcher_session_key = ?1",
        [MOVED],
    )
    .expect("moved");
    drop(conn);
    ok(sb.signals(
        T + 1,
        &[
            "record",
            "--session",
            TARGET,
            "--kind",
            "human_direct_message",
            "--via",
            "telegram",
        ],
    ));
    let sessions = sb.state_dir.join("agents/main/sessions");
    std::fs::create_dir_all(&sessions).expect("sessions dir");
    let store = json!({
        (MAIN): {"sessionId": "s-main", "updatedAt": T},
        (LEGACY): {"sessionId": "s-legacy", "updatedAt": T},
        (MOVED): {"sessionId": "s-moved", "updatedAt": T},
    });
    std::fs::write(sessions.join("sessions.json"), store.to_string()).expect("store");
    sb
}

#[test]
fn list_pending_and_pending_leave_out_notices_that_never_reach_the_watcher() {
    let dir = tempfile::tempdir().unwrap();
    let sb = host(dir.path());
    // Every cursor is pending in the state machine ...
    let all = json_lines(&ok(sb.watch(T, &["list", "--ndjson"])));
    assert_eq!(all.len(), 5);
    assert!(all.iter().all(|c| c["state"] == "pending"), "{all:?}");
    // ... but only two notices reach their watchers.
    let o = sb.watch(T, &["list", "--pending", "--ndjson"]);
    let pending = json_lines(&ok(o.clone()));
    assert_eq!(watchers_of(&pending), vec![MAIN, OPS], "{pending:?}");
    let note = String::from_utf8_lossy(&o.stderr);
    assert!(
        note.contains("3 pending cursors left out")
            && note.contains("1 no-store, 1 store-replaced, 1 watcher-missing"),
        "{note}"
    );
    let notices = ok(sb.watch(T, &["pending", "--ndjson"]));
    assert_eq!(
        watchers_of(&json_lines(&notices)),
        vec![MAIN, OPS],
        "{notices}"
    );
    // The others, with why.
    let und = json_lines(&ok(sb.watch(T, &["list", "--undeliverable", "--ndjson"])));
    let mut reasons: Vec<(String, String)> = und
        .iter()
        .map(|r| {
            (
                r["watcherSessionKey"].as_str().unwrap_or("?").to_string(),
                r["undeliverable"].as_str().unwrap_or("?").to_string(),
            )
        })
        .collect();
    reasons.sort();
    assert_eq!(
        reasons,
        vec![
            (GONE.to_string(), "watcher-missing".to_string()),
            (LEGACY.to_string(), "no-store".to_string()),
            (MOVED.to_string(), "store-replaced".to_string()),
        ]
    );
    assert!(und
        .iter()
        .all(|r| r["why"].as_str().is_some_and(|w| !w.is_empty())));
    // The full listing marks them too.
    assert_eq!(
        all.iter()
            .filter(|c| c.get("undeliverable").is_some())
            .count(),
        3
    );
}

#[test]
fn stats_count_deliverable_notices_and_the_others_by_reason() {
    let dir = tempfile::tempdir().unwrap();
    let sb = host(dir.path());
    let s: Value = serde_json::from_str(&ok(sb.signals(T, &["stats", "--json"]))).expect("json");
    assert_eq!(s["cursors"], 5);
    assert_eq!(s["pendingNotices"], 2, "{s}");
    assert_eq!(s["undeliverableNotices"], 3, "{s}");
    assert_eq!(
        s["undeliverableByReason"],
        json!({"no-store": 1, "store-replaced": 1, "watcher-missing": 1})
    );
    let text = ok(sb.signals(T, &["stats"]));
    assert!(
        text.contains(
            "pending notices: 2 (and 3 undeliverable: 1 no-store, 1 store-replaced, 1 watcher-missing)"
        ),
        "{text}"
    );
}

#[test]
fn without_the_watchers_stores_every_pending_notice_counts() {
    // A state database looked at without its session stores: nothing is judged missing.
    let dir = tempfile::tempdir().unwrap();
    let sb = host(dir.path());
    std::fs::remove_dir_all(sb.state_dir.join("agents/main/sessions")).expect("rm");
    let s: Value = serde_json::from_str(&ok(sb.signals(T, &["stats", "--json"]))).expect("json");
    assert_eq!(s["pendingNotices"], 3, "{s}");
    assert_eq!(s["undeliverableByReason"]["watcher-missing"], 0, "{s}");
}
