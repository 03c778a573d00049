//! Differential tests of the signal log against openclaw@2026.8.1's own signal module.
//!
//! Each scripted scenario runs once through the peer (tests/peer/signals_probe.mjs, one
//! Node process for all scenarios, Date.now pinned to each step's clock) and once through
//! `claw-signals` / `claw-watch` (`--now` the same clock) on fresh databases. Compared:
//! every step's visible result (returned events, registration results, notice lines,
//! `changesSince` text, state versions) and, at the end, every row of the three tables and
//! the allocated sequence. Also: the database we create has the peer's exact schema and
//! pragmas, the peer's module writes into our database, our binaries read and write the
//! peer's, and a real 2026.8.1 gateway starts on a database we created (and refuses the
//! signal-tables-only form, as the control).
//!
//! Deliberate difference (spec README decision 7): after a watcher reset the gateway keeps
//! already-queued notice lines in memory, while offline a pending notice is a cursor, so
//! the scenarios do not read `pending` of a reset watcher.

mod signals_support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use signals_support::scenarios::{pragmas, replay, scenarios, MAIN, OPS, T0};
use signals_support::{dump_schema, dump_tables, peer81, run_probe, stdout, Sandbox};

#[test]
fn signals_match_openclaw_2026_8_1() {
    let Some(peer) = peer81() else { return };
    let started = Instant::now();
    let root = tempfile::tempdir().expect("tempdir");
    let scs = scenarios();
    let mut mismatches: Vec<String> = Vec::new();

    // Ours first: every scenario on its own fresh state dir and TMPDIR.
    let mut ours: Vec<(Vec<Value>, Value, PathBuf)> = Vec::new();
    for sc in &scs {
        let sb = Sandbox::new(&root.path().join("ours").join(sc.name));
        let outputs: Vec<Value> = sc.steps.iter().map(|st| replay(&sb, st, None)).collect();
        ours.push((outputs, dump_tables(&sb.db()), sb.db()));
    }

    // A database made by clawstate, for the peer's module to write into.
    let interop = Sandbox::new(&root.path().join("interop"));
    signals_support::ok(interop.signals(
        T0,
        &[
            "record",
            "--session",
            "agent:main:subagent:i1",
            "--kind",
            "child_spawned",
            "--actor-id",
            MAIN,
            "--run-id",
            "run-i",
        ],
    ));
    let interop_db = interop.db();

    // The peer: the same scenarios in one Node process, plus the interop write.
    let mut peer_scs: Vec<Value> = scs
        .iter()
        .map(|sc| {
            json!({"name": sc.name, "stateDir": root.path().join("peer").join(sc.name), "steps": sc.steps})
        })
        .collect();
    peer_scs.push(json!({
        "name": "interop",
        "stateDir": root.path().join("peer").join("interop"),
        "steps": [{"op": "recordOn", "now": T0 + 5000, "path": interop_db,
            "input": {"sessionKey": "agent:main:subagent:i1", "agentId": "main", "kind": "human_direct_message",
                "actorType": "human", "summary": "human message via telegram"}}],
    }));
    let file = root.path().join("scenarios.json");
    std::fs::write(&file, serde_json::to_vec_pretty(&peer_scs).expect("json")).expect("write");
    let results = run_probe(&peer, &file, &root.path().join("peer-out.json"));
    let results = results.as_array().expect("array");

    let mut steps_compared = 0;
    let mut deliberate_differences = 0;
    for (i, sc) in scs.iter().enumerate() {
        let peer_r = &results[i];
        let (our_out, our_tables, our_db) = &ours[i];
        for (j, step) in sc.steps.iter().enumerate() {
            steps_compared += 1;
            let p = &peer_r["outputs"][j];
            if step.get("deliberate").is_some() {
                let (pv, ov) = (p.as_array(), our_out[j].as_array());
                let subset = matches!((pv, ov), (Some(pv), Some(ov)) if ov.iter().all(|x| pv.contains(x)) && pv.len() > ov.len());
                // (the drain that follows empties the gateway's stale queue: same difference)
                if !subset {
                    mismatches.push(format!(
                        "{} step {j}: expected ours ⊂ peer: peer {p} ours {}",
                        sc.name, our_out[j]
                    ));
                }
                deliberate_differences += 1;
                continue;
            }
            if p != &our_out[j] {
                mismatches.push(format!(
                    "{} step {j} {}:\n  peer: {p}\n  ours: {}",
                    sc.name, step, our_out[j]
                ));
            }
        }
        for table in ["events", "heads", "cursors", "sequence", "cursorColumns"] {
            if peer_r["tables"][table] != our_tables[table] {
                mismatches.push(format!(
                    "{}: table {table} differs:\n  peer: {}\n  ours: {}",
                    sc.name,
                    abbreviate(&peer_r["tables"][table]),
                    abbreviate(&our_tables[table])
                ));
            }
        }
        // The database we create is the one the module creates: same schema, same pragmas.
        if i == 0 {
            if peer_r["schema"] != json!(dump_schema(our_db)) {
                mismatches.push("the created schema differs from the peer's".into());
            }
            if peer_r["pragmas"] != pragmas(our_db) {
                mismatches.push(format!(
                    "pragmas differ: peer {} ours {}",
                    peer_r["pragmas"],
                    pragmas(our_db)
                ));
            }
        }
    }

    // Our database, written by the peer's module: the event went in and lists back.
    let inter = &results[scs.len()]["outputs"][0];
    if inter["event"]["sequence"] != json!(2)
        || inter["listed"]["events"].as_array().map(Vec::len) != Some(2)
    {
        mismatches.push(format!("the peer could not write our database: {inter}"));
    }
    let listed = signals_support::ok(interop.signals(T0 + 6000, &["list", "--ndjson"]));
    if listed.lines().count() != 2 || !listed.contains("human message via telegram") {
        mismatches.push(format!("our list after the peer's write: {listed}"));
    }
    let pend = signals_support::ok(interop.watch(T0 + 6000, &["pending", MAIN]));
    if !pend.contains("changesSince 1.") {
        mismatches.push(format!(
            "the peer's notice is not pending in our view: {pend}"
        ));
    }

    // The peer's databases, read and written by us: changes-since equals the peer's.
    let peer_db = |name: &str| {
        root.path()
            .join("peer")
            .join(name)
            .join("state/openclaw.sqlite")
    };
    let sb = Sandbox::new(&root.path().join("reader"));
    let c1 = "agent:main:subagent:c1";
    let o = sb
        .cmd("claw-signals")
        .args([
            "--db",
            peer_db("notice-trace").to_str().expect("utf8"),
            "changes-since",
            c1,
            "4",
            "--json",
        ])
        .output()
        .expect("runs");
    if stdout(&o).trim_end() != results[0]["outputs"][18].as_str().unwrap_or("?") {
        mismatches.push(format!(
            "changes-since on the peer's database: {}",
            stdout(&o)
        ));
    }
    let o = sb
        .cmd("claw-signals")
        .args([
            "--db",
            peer_db("notice-trace").to_str().expect("utf8"),
            "--now",
            &(T0 + 90_000).to_string(),
            "record",
            "--session",
            c1,
            "--kind",
            "human_direct_message",
            "--via",
            "slack",
            "--json",
        ])
        .output()
        .expect("runs");
    let ev: Value = serde_json::from_slice(&o.stdout).unwrap_or(Value::Null);
    if ev["sequence"] != json!(9) {
        mismatches.push(format!(
            "record into the peer's database: {}{}",
            stdout(&o),
            String::from_utf8_lossy(&o.stderr)
        ));
    }
    let o = sb
        .cmd("claw-watch")
        .args([
            "--db",
            peer_db("notice-trace").to_str().expect("utf8"),
            "pending",
            OPS,
        ])
        .output()
        .expect("runs");
    if !stdout(&o).contains("changesSince 6.") {
        mismatches.push(format!("pending on the peer's database: {}", stdout(&o)));
    }

    eprintln!(
        "signal differential: {} scenarios, {steps_compared} steps ({deliberate_differences} deliberate differences), {} mismatches, {:.1}s",
        scs.len(),
        mismatches.len(),
        started.elapsed().as_secs_f64()
    );
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}

fn abbreviate(v: &Value) -> String {
    let s = v.to_string();
    if s.len() > 1500 {
        format!("{}… ({} bytes)", &s[..1500], s.len())
    } else {
        s
    }
}

/// Runs the 2026.8.1 gateway on `state_dir` until it logs `ready` (true) or exits or
/// times out (false); returns the verdict and its log.
fn gateway_starts(peer: &signals_support::Peer81, home: &Path, state_dir: &Path) -> (bool, String) {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("port");
        l.local_addr().expect("addr").port()
    };
    let log = home.join("gateway.log");
    let mut child = Command::new(&peer.node)
        .arg(&peer.cli)
        .args([
            "gateway",
            "run",
            "--allow-unconfigured",
            "--auth",
            "none",
            "--bind",
            "loopback",
            "--port",
        ])
        .arg(port.to_string())
        .env("HOME", home)
        .env("OPENCLAW_STATE_DIR", state_dir)
        .env("NO_COLOR", "1")
        .env("TZ", "UTC")
        .stdout(std::fs::File::create(&log).expect("log"))
        .stderr(std::fs::File::create(home.join("gateway.err")).expect("log"))
        .spawn()
        .expect("gateway spawns");
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut ready = false;
    while Instant::now() < deadline {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        if text.contains("[gateway] ready") {
            ready = true;
            break;
        }
        if child.try_wait().ok().flatten().is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    // SAFETY: signalling our own child process by its pid.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGTERM);
    }
    let waited = Instant::now();
    while child.try_wait().ok().flatten().is_none() && waited.elapsed() < Duration::from_secs(15) {
        std::thread::sleep(Duration::from_millis(100));
    }
    let _ = child.kill();
    let _ = child.wait();
    let text = std::fs::read_to_string(&log).unwrap_or_default()
        + &std::fs::read_to_string(home.join("gateway.err")).unwrap_or_default();
    (ready, text)
}

#[test]
fn the_gateway_accepts_a_database_we_create() {
    let Some(peer) = peer81() else { return };
    let root = tempfile::tempdir().expect("tempdir");

    // Ours: created by claw-signals, with a watched child and a pending notice.
    let sb = Sandbox::new(&root.path().join("ours"));
    let c1 = "agent:main:subagent:c1";
    signals_support::ok(sb.signals(
        T0,
        &[
            "record",
            "--session",
            c1,
            "--kind",
            "child_spawned",
            "--actor-id",
            MAIN,
            "--run-id",
            "r1",
        ],
    ));
    signals_support::ok(sb.signals(
        T0 + 1,
        &[
            "record",
            "--session",
            c1,
            "--kind",
            "human_direct_message",
            "--via",
            "telegram",
        ],
    ));
    let before = dump_tables(&sb.db());
    let (ready, log) = gateway_starts(&peer, &sb.home, &sb.state_dir);
    assert!(ready, "the gateway did not start on our database:\n{log}");
    assert_eq!(
        dump_tables(&sb.db()),
        before,
        "the gateway changed the signal rows"
    );
    let meta = pragmas(&sb.db());
    assert_eq!(meta["userVersion"], json!(15), "{meta}");
    assert!(
        meta["schemaMeta"].as_array().is_some_and(|m| m
            .iter()
            .any(|r| r["meta_key"] == "primary" && r["app_version"] == "2026.8.1")),
        "{meta}"
    );
    // clawstate still reads and writes it after the gateway ran.
    let out = signals_support::ok(sb.signals(
        T0 + 2,
        &[
            "record",
            "--session",
            c1,
            "--kind",
            "human_direct_message",
            "--json",
        ],
    ));
    assert!(out.contains("\"sequence\": 3"), "{out}");

    // The control: only the signal tables at user_version 15 stop the gateway.
    let bad = Sandbox::new(&root.path().join("bad"));
    std::fs::create_dir_all(bad.state_dir.join("state")).expect("dir");
    let conn = clawstate::signals::rusqlite::Connection::open(bad.db()).expect("open");
    let schema = clawstate::signals::db::CANONICAL_SCHEMA_SQL;
    let only_signals: String = schema
        .split(";\n")
        .filter(|stmt| {
            [
                "session_state_events",
                "session_state_heads",
                "session_watch_cursors",
            ]
            .iter()
            .any(|t| stmt.contains(&format!("TABLE {t} ")) || stmt.contains(&format!("ON {t}(")))
        })
        .map(|s| format!("{s};\n"))
        .collect();
    conn.execute_batch(&format!("{only_signals}PRAGMA user_version = 15;"))
        .expect("signal tables");
    drop(conn);
    let (ready, log) = gateway_starts(&peer, &bad.home, &bad.state_dir);
    assert!(!ready, "the control database was accepted:\n{log}");
    assert!(log.contains("noncanonical"), "{log}");
}
