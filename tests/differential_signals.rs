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
use signals_support::{dump_schema, dump_tables, peer81, run_probe, stdout, Sandbox};

const T0: i64 = 1_795_989_048_800;
const DAY: i64 = 86_400_000;
const HOUR: i64 = 3_600_000;

const MAIN: &str = "agent:main:main";
const OPS: &str = "agent:ops:main";

/// A scenario: steps with their clock.
struct Sc {
    name: &'static str,
    t: i64,
    steps: Vec<Value>,
}

impl Sc {
    fn new(name: &'static str, index: i64) -> Sc {
        // 100 days apart: the peer process keeps one prune throttle for all scenarios.
        Sc {
            name,
            t: T0 + index * 100 * DAY,
            steps: Vec::new(),
        }
    }

    fn step(&mut self, mut v: Value) -> &mut Sc {
        self.t += 1000;
        v["now"] = json!(self.t);
        self.steps.push(v);
        self
    }

    fn advance(&mut self, ms: i64) -> &mut Sc {
        self.t += ms;
        self
    }
}

fn spawn(child: &str, requester: &str, run: &str) -> Value {
    json!({"op": "spawn", "child": child, "requester": requester, "runId": run})
}
fn terminal(child: &str, requester: &str, run: &str, outcome: &str) -> Value {
    json!({"op": "terminal", "child": child, "requester": requester, "runId": run, "outcome": outcome})
}
fn human(session: &str, actor: Option<&str>, run: &str, channel: Option<&str>) -> Value {
    let mut v = json!({"op": "human", "session": session, "sessionId": "sid-1", "runId": run});
    if let Some(a) = actor {
        v["actorId"] = json!(a);
    }
    if let Some(c) = channel {
        v["channel"] = json!(c);
    }
    v
}
fn pending(w: &str) -> Value {
    json!({"op": "pending", "watcher": w})
}
fn drain(w: &str) -> Value {
    json!({"op": "drain", "watcher": w})
}
fn changes(s: &str, since: i64) -> Value {
    json!({"op": "changes", "session": s, "since": since})
}
fn version(s: &str) -> Value {
    json!({"op": "version", "session": s})
}
/// A step whose result differs on purpose (spec README decision 7): the gateway keeps a
/// queued notice line in memory after its cursor is deleted (watcher reset, expiry),
/// offline a notice exists only as a pending cursor. Checked as "ours ⊆ peer".
fn deliberate(mut v: Value) -> Value {
    v["deliberate"] = json!(true);
    v
}
fn register(w: &str, t: &str) -> Value {
    json!({"op": "register", "watcher": w, "target": t})
}

fn scenarios() -> Vec<Sc> {
    let c1 = "agent:main:subagent:c1";
    let mut out = Vec::new();

    // `signals.md` §4.6: spawn seeding, duplicate spawn, log-only kinds, frozen watermark, dedupe of the
    // repeated notice, self-suppression, ack with and without interleaved work, a second
    // watcher registered at the head.
    let mut s = Sc::new("notice-trace", 0);
    s.step(spawn(c1, MAIN, "run-1"))
        .step(spawn(c1, MAIN, "run-1"))
        .step(terminal(c1, MAIN, "run-1", "timeout"))
        .step(human(c1, Some("telegram:42"), "r3", Some("telegram")))
        .step(human(c1, None, "r4", None))
        .step(pending(MAIN))
        .step(json!({"op": "goal", "session": c1, "sessionId": "sid-1", "spawnedBy": MAIN,
            "actor": {"type": "agent", "id": MAIN}, "summary": "goal created"}))
        .step(pending(MAIN))
        .step(drain(MAIN))
        .step(pending(MAIN))
        .step(drain(MAIN))
        .step(pending(MAIN))
        .step(json!({"op": "compacted", "session": MAIN, "sessionId": "sid-main", "runId": "rc", "operationId": "op1"}))
        .step(register(OPS, c1))
        .step(human(c1, None, "r8", Some(" discord ")))
        .step(pending(MAIN))
        .step(pending(OPS))
        .step(changes(c1, 0))
        .step(changes(c1, 4))
        .step(changes(c1, 6))
        .step(changes(c1, 99))
        .step(version(c1))
        .step(version(MAIN));
    out.push(s);

    // Goal changes through lineage (a cursor inserted at 0), every producer kind and its
    // default summary, dedupe key and payload, payload reduction in changesSince.
    let g1 = "agent:main:subagent:g1";
    let mut s = Sc::new("kinds-and-goals", 1);
    s.step(json!({"op": "goal", "session": g1, "sessionId": "sid-g1", "spawnedBy": MAIN,
            "actor": {"type": "human"}, "summary": "goal status changed to paused"}))
        .step(pending(MAIN))
        .step(json!({"op": "goal", "session": g1, "sessionId": "sid-g1", "spawnedBy": MAIN, "summary": "goal cleared"}))
        .step(json!({"op": "created", "session": g1, "sessionId": "sid-g1", "actor": {"type": "agent", "id": MAIN}}))
        .step(json!({"op": "created", "session": g1, "sessionId": "sid-g1", "actor": {"type": "agent", "id": MAIN}}))
        .step(json!({"op": "compacted", "session": g1, "sessionId": "sid-g1", "runId": "run-c", "operationId": "op-1"}))
        .step(json!({"op": "compacted", "session": g1, "sessionId": "sid-g1", "runId": "run-c", "operationId": "op-1"}))
        .step(json!({"op": "record", "input": {"sessionKey": g1, "agentId": "main", "kind": "adopted",
            "actorType": "human", "dedupeKey": format!("adopted:{g1}"), "summary": "adopted from claude",
            "payload": {"catalogId": "claude", "hostId": "h1"}}}))
        .step(json!({"op": "record", "input": {"sessionKey": g1, "agentId": "main", "kind": "upstream_missing",
            "actorType": "system", "summary": "upstream missing via claude", "payload": {"channel": "claude"},
            "dedupeKey": format!("upstream-missing:{g1}:0123456789abcdef:1795989048800")}}))
        .step(json!({"op": "human", "session": g1, "sessionId": "sid-g1", "runId": "r9", "channel": "acp",
            "payload": {"turns": 3, "9": "index keys first", "nested": {"b": 1, "a": [1.5, 2e21]}}}))
        .step(pending(MAIN))
        .step(changes(g1, 0))
        .step(drain(MAIN))
        .step(pending(MAIN))
        .step(version(g1));
    out.push(s);

    // Acknowledge without interleaved work (closes) and with it (one follow-up), a
    // cancelled child run (log only).
    let a1 = "agent:main:subagent:a1";
    let mut s = Sc::new("ack-interleave", 2);
    s.step(spawn(a1, MAIN, "run-a"))
        .step(human(a1, None, "h2", Some("telegram")))
        .step(drain(MAIN))
        .step(pending(MAIN))
        .step(human(a1, None, "h3", Some("telegram")))
        .step(human(a1, None, "h4", Some("telegram")))
        .step(human(a1, None, "h5", Some("telegram")))
        .step(drain(MAIN))
        .step(pending(MAIN))
        .step(terminal(a1, MAIN, "run-a", "cancelled"))
        .step(pending(MAIN))
        .step(drain(MAIN))
        .step(pending(MAIN))
        .step(changes(a1, 3))
        .step(changes(a1, 0));
    out.push(s);

    // Ambient group watches: queue-only notices, promotion by explicit registration.
    let grp = "agent:main:telegram:group:123";
    let mut s = Sc::new("ambient-groups", 3);
    s.step(json!({"op": "ambient", "target": grp, "agentId": "main"}))
        .step(human(grp, Some("telegram:7"), "g1", Some("telegram")))
        .step(human(grp, Some("telegram:8"), "g2", Some("telegram")))
        .step(pending(MAIN))
        .step(register(MAIN, grp))
        .step(human(grp, None, "g3", Some("telegram")))
        .step(pending(MAIN))
        .step(drain(MAIN))
        .step(pending(MAIN))
        .step(json!({"op": "ambient", "target": grp, "agentId": "main"}))
        .step(changes(grp, 0));
    out.push(s);

    // Refused registrations, the human-message gate, self-caused events, bare lineage keys.
    let lonely = "agent:main:lonely";
    let mut s = Sc::new("refusals-and-self", 4);
    s.step(register("global", "agent:main:x"))
        .step(register("agent:main:x", "agent:main:x"))
        .step(human(lonely, None, "l1", Some("telegram")))
        .step(register(OPS, lonely))
        .step(human(lonely, None, "l2", Some("telegram")))
        .step(pending(OPS))
        .step(drain(OPS))
        .step(json!({"op": "record", "input": {"sessionKey": lonely, "agentId": "main", "kind": "goal_changed",
            "actorType": "agent", "actorId": OPS, "summary": "goal objective changed"}}))
        .step(pending(OPS))
        .step(json!({"op": "record", "input": {"sessionKey": lonely, "agentId": "main", "kind": "goal_changed",
            "actorType": "system", "summary": "goal created", "watcherSessionKeys": ["global", "", MAIN]}}))
        .step(pending(MAIN))
        .step(pending(OPS))
        .step(json!({"op": "record", "input": {"sessionKey": lonely, "agentId": "main", "kind": "mystery",
            "actorType": "system", "summary": "unknown kinds never notify", "watcherSessionKeys": [MAIN]}}))
        .step(pending(MAIN))
        .step(version(lonely))
        .step(changes(lonely, 0));
    out.push(s);

    // occurredAt clamping: never in the future, at most 24 h in the past.
    let c = "agent:main:clamp";
    let mut s = Sc::new("occurred-at", 5);
    let base = s.t;
    for (i, off) in [HOUR, -3 * DAY, -5000, -23 * HOUR].iter().enumerate() {
        s.step(json!({"op": "record", "input": {"sessionKey": c, "agentId": "main", "kind": "compacted",
            "actorType": "system", "summary": "session compacted", "runId": format!("r{i}"),
            "occurredAt": base + 1000 * (i as i64 + 1) + off}}));
    }
    s.step(changes(c, 0));
    out.push(s);

    // Watcher reset and session deletion (`signals.md` §3.8).
    let (r1, r2) = ("agent:main:subagent:r1", "agent:main:subagent:r2");
    let mut s = Sc::new("reset-and-delete", 6);
    s.step(spawn(r1, MAIN, "run-r1"))
        .step(spawn(r2, MAIN, "run-r2"))
        .step(register(OPS, r1))
        .step(human(r1, None, "x1", Some("telegram")))
        .step(human(r2, None, "x2", Some("telegram")))
        .step(pending(MAIN))
        .step(pending(OPS))
        .step(json!({"op": "reset", "watcher": MAIN}))
        .step(deliberate(pending(MAIN)))
        .step(deliberate(drain(MAIN)))
        .step(human(r1, None, "x3", Some("telegram")))
        .step(json!({"op": "delete", "session": r1}))
        .step(version(r1))
        .step(human(r1, None, "x4", Some("telegram")))
        .step(json!({"op": "human", "session": r1, "sessionId": "sid-2", "runId": "x5", "channel": "telegram", "spawnedBy": MAIN}))
        .step(pending(MAIN))
        .step(changes(r1, 0))
        .step(changes(r2, 0));
    out.push(s);

    // Retention by age: watermarks, cursor expiry, exact gaps, continuing sequences.
    let p = "agent:main:subagent:p1";
    let mut s = Sc::new("prune-by-age", 7);
    s.step(spawn(p, MAIN, "run-p"))
        .step(human(p, None, "p2", Some("telegram")))
        .step(json!({"op": "compacted", "session": MAIN, "sessionId": "sid-main", "runId": "rc", "operationId": "op-p"}))
        .advance(31 * DAY)
        .step(json!({"op": "prune"}))
        .step(deliberate(pending(MAIN)))
        .step(deliberate(drain(MAIN)))
        .step(changes(p, 0))
        .step(changes(p, 2))
        .step(changes(MAIN, 0))
        .step(json!({"op": "human", "session": p, "sessionId": "sid-1", "runId": "p4", "channel": "telegram", "spawnedBy": MAIN}))
        .step(changes(p, 0))
        .step(pending(MAIN))
        .step(version(p));
    out.push(s);

    // Retention by row cap, through the opportunistic prune of a record an hour later.
    let mut s = Sc::new("prune-by-row-cap", 8);
    let t = s.t;
    s.step(json!({"op": "record", "input": {"sessionKey": "agent:main:a", "agentId": "main", "kind": "compacted",
            "actorType": "system", "summary": "session compacted"}}))
        .step(json!({"op": "sql", "sql": format!(
            "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 50011) \
             INSERT INTO session_state_events (session_key, agent_id, kind, actor_type, occurred_at, summary) \
             SELECT CASE i % 3 WHEN 0 THEN 'agent:main:a' WHEN 1 THEN 'agent:main:b' ELSE 'agent:main:c' END, \
             'main', 'compacted', 'system', {t} + i, 'session compacted' FROM c; \
             INSERT INTO session_state_heads (session_key, agent_id, last_sequence, updated_at) \
             SELECT session_key, agent_id, MAX(sequence), {t} FROM session_state_events GROUP BY session_key, agent_id \
             ON CONFLICT (session_key, agent_id) DO UPDATE SET last_sequence = excluded.last_sequence;")}))
        .advance(2 * HOUR)
        .step(json!({"op": "record", "input": {"sessionKey": "agent:main:b", "agentId": "main", "kind": "compacted",
            "actorType": "system", "summary": "session compacted"}}))
        .step(changes("agent:main:c", 0))
        .step(changes("agent:main:a", 4))
        .step(changes("agent:main:b", 50000))
        .step(version("agent:main:a"));
    out.push(s);

    // Restart recovery: nothing without a watcher session; with one, notified := material
    // and the next ack closes without a follow-up.
    let w = "agent:main:subagent:w1";
    let mut s = Sc::new("restart-sweep", 9);
    s.step(spawn(w, MAIN, "run-w"))
        .step(human(w, None, "w2", Some("telegram")))
        .step(human(w, None, "w3", Some("telegram")))
        .step(json!({"op": "sweep"}))
        .step(pending(MAIN))
        .step(json!({"op": "session", "session": MAIN, "sessionId": "11111111-1111-4111-8111-111111111111"}))
        .step(json!({"op": "sweep"}))
        .step(pending(MAIN))
        .step(drain(MAIN))
        .step(pending(MAIN))
        .step(changes(w, 1));
    out.push(s);

    // Duplicates: every dedupe path returns the existing row and burns a sequence.
    let d = "agent:main:subagent:d1";
    let mut s = Sc::new("duplicates", 10);
    s.step(terminal(d, MAIN, "run-d", "ok"))
        .step(terminal(d, MAIN, "run-d", "ok"))
        .step(json!({"op": "record", "input": {"sessionKey": d, "agentId": "main", "kind": "compacted",
            "actorType": "system", "summary": "first", "dedupeKey": "k1", "payload": {"z": 1, "a": 2}}}))
        .step(json!({"op": "record", "input": {"sessionKey": d, "agentId": "main", "kind": "compacted",
            "actorType": "system", "summary": "second", "dedupeKey": "k1"}}))
        .step(json!({"op": "compacted", "session": d, "sessionId": "sid-d", "runId": "rc", "operationId": "op-9"}))
        .step(json!({"op": "compacted", "session": d, "sessionId": "sid-d", "runId": "rc", "operationId": "op-9"}))
        .step(json!({"op": "record", "input": {"sessionKey": d, "agentId": "ops", "kind": "compacted",
            "actorType": "system", "summary": "another agent, same key"}}))
        .step(changes(d, 0))
        .step(version(d));
    out.push(s);
    out
}

/// The event flags for a raw `recordSessionStateEvent` input.
fn record_flags(input: &Value) -> Vec<String> {
    let mut a: Vec<String> = vec!["record".into(), "--json".into()];
    let s = |k: &str| input.get(k).and_then(Value::as_str).map(String::from);
    let mut push = |flag: &str, v: Option<String>| {
        if let Some(v) = v {
            a.push(flag.into());
            a.push(v);
        }
    };
    push("--session", s("sessionKey"));
    push("--agent", s("agentId"));
    push("--kind", s("kind"));
    push("--actor", s("actorType"));
    push("--actor-id", s("actorId"));
    push("--run-id", s("runId"));
    push("--session-id", s("sessionId"));
    push("--dedupe-key", s("dedupeKey"));
    push("--summary", s("summary"));
    push("--payload", input.get("payload").map(|p| p.to_string()));
    push(
        "--occurred-at",
        input
            .get("occurredAt")
            .and_then(Value::as_i64)
            .map(|n| n.to_string()),
    );
    if let Some(ws) = input.get("watcherSessionKeys").and_then(Value::as_array) {
        for w in ws.iter().filter_map(Value::as_str) {
            a.push("--watcher".into());
            a.push(w.into());
        }
    }
    a
}

fn lines_sorted(text: &str) -> Value {
    let mut v: Vec<&str> = text.lines().filter(|l| !l.is_empty()).collect();
    v.sort();
    json!(v)
}

/// Replays one step through our binaries; returns the comparable result.
fn replay(sb: &Sandbox, step: &Value) -> Value {
    let now = step["now"].as_i64().expect("now");
    let s = |k: &str| step[k].as_str().unwrap_or_default().to_string();
    let run = |args: Vec<String>| -> std::process::Output {
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        sb.signals(now, &refs)
    };
    let must = |o: std::process::Output| -> String {
        assert!(
            o.status.success(),
            "step {step} failed: {}{}",
            stdout(&o),
            String::from_utf8_lossy(&o.stderr)
        );
        stdout(&o)
    };
    let strs = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    match step["op"].as_str().unwrap_or_default() {
        "spawn" => {
            must(run(strs(&[
                "record",
                "--session",
                &s("child"),
                "--kind",
                "child_spawned",
                "--actor-id",
                &s("requester"),
                "--run-id",
                &s("runId"),
            ])));
            Value::Null
        }
        "terminal" => {
            let outcome = s("outcome");
            let mut a = strs(&[
                "record",
                "--session",
                &s("child"),
                "--run-id",
                &s("runId"),
                "--watcher",
                &s("requester"),
            ]);
            if outcome == "ok" {
                a.extend(strs(&["--kind", "run_completed"]));
            } else {
                a.extend(strs(&["--kind", "run_failed", "--outcome", &outcome]));
            }
            must(run(a));
            Value::Null
        }
        "human" => {
            let mut a = strs(&[
                "record",
                "--json",
                "--if-watched",
                "--session",
                &s("session"),
                "--kind",
                "human_direct_message",
                "--run-id",
                &s("runId"),
                "--session-id",
                &s("sessionId"),
            ]);
            for (k, flag) in [
                ("actorId", "--actor-id"),
                ("channel", "--via"),
                ("spawnedBy", "--watcher"),
            ] {
                if let Some(v) = step[k].as_str() {
                    a.extend(strs(&[flag, v]));
                }
            }
            if let Some(p) = step.get("payload") {
                a.extend(strs(&["--payload", &p.to_string()]));
            }
            let text = must(run(a));
            if text.trim().is_empty() {
                Value::Null
            } else {
                serde_json::from_str::<Value>(&text).expect("event")["sequence"].clone()
            }
        }
        "goal" => {
            let mut a = strs(&[
                "record",
                "--session",
                &s("session"),
                "--kind",
                "goal_changed",
                "--summary",
                &s("summary"),
                "--session-id",
                &s("sessionId"),
            ]);
            if let Some(t) = step["actor"]["type"].as_str() {
                a.extend(strs(&["--actor", t]));
            }
            if let Some(id) = step["actor"]["id"].as_str() {
                a.extend(strs(&["--actor-id", id]));
            }
            if let Some(w) = step["spawnedBy"].as_str() {
                a.extend(strs(&["--watcher", w]));
            }
            must(run(a));
            Value::Null
        }
        "compacted" => {
            must(run(strs(&[
                "record",
                "--session",
                &s("session"),
                "--kind",
                "compacted",
                "--session-id",
                &s("sessionId"),
                "--run-id",
                &s("runId"),
                "--operation-id",
                &s("operationId"),
            ])));
            Value::Null
        }
        "created" => {
            let mut a = strs(&[
                "record",
                "--session",
                &s("session"),
                "--kind",
                "created",
                "--session-id",
                &s("sessionId"),
            ]);
            a.extend(strs(&[
                "--actor",
                step["actor"]["type"].as_str().unwrap_or("system"),
            ]));
            if let Some(id) = step["actor"]["id"].as_str() {
                a.extend(strs(&["--actor-id", id]));
            }
            must(run(a));
            Value::Null
        }
        "record" => {
            let text = must(run(record_flags(&step["input"])));
            if text.trim().is_empty() {
                Value::Null
            } else {
                serde_json::from_str(&text).expect("event JSON")
            }
        }
        "register" | "ambient" => {
            let (w, t) = if step["op"] == "ambient" {
                (MAIN.to_string(), s("target"))
            } else {
                (s("watcher"), s("target"))
            };
            let mut a = vec!["add", w.as_str(), t.as_str()];
            if step["op"] == "ambient" {
                a.push("--ambient");
            }
            let o = sb.watch(now, &a);
            match o.status.code() {
                Some(0) => json!(true),
                Some(65) => json!(false),
                c => panic!("add exited {c:?}: {}", String::from_utf8_lossy(&o.stderr)),
            }
        }
        "pending" => lines_sorted(&must(sb.watch(now, &["pending", &s("watcher")]))),
        "drain" => lines_sorted(&must(sb.watch(now, &["drain", &s("watcher")]))),
        "changes" => {
            let since = step["since"].as_i64().unwrap_or(0).to_string();
            let text = must(run(strs(&[
                "changes-since",
                &s("session"),
                &since,
                "--json",
            ])));
            json!(text.trim_end_matches('\n'))
        }
        "version" => {
            let text = must(run(strs(&["version", &s("session"), "--json"])));
            serde_json::from_str::<Value>(&text).expect("json")[0]["stateVersion"].clone()
        }
        "prune" => {
            must(run(strs(&["prune"])));
            Value::Null
        }
        "sweep" => {
            must(sb.watch(now, &["sweep"]));
            Value::Null
        }
        "reset" => {
            must(sb.watch(now, &["reset", &s("watcher")]));
            Value::Null
        }
        "delete" => {
            must(run(strs(&["forget", &s("session")])));
            Value::Null
        }
        "session" => {
            let dir = sb.state_dir.join("agents/main/sessions");
            std::fs::create_dir_all(&dir).expect("sessions dir");
            let store = json!({ s("session"): {"sessionId": s("sessionId"), "updatedAt": now} });
            std::fs::write(dir.join("sessions.json"), store.to_string()).expect("store");
            Value::Null
        }
        "sql" => {
            let conn = clawstate::signals::rusqlite::Connection::open(sb.db()).expect("open");
            conn.busy_timeout(Duration::from_secs(5)).expect("timeout");
            conn.execute_batch(step["sql"].as_str().expect("sql"))
                .expect("sql runs");
            Value::Null
        }
        op => panic!("unknown op {op}"),
    }
}

fn pragmas(db: &Path) -> Value {
    let conn = clawstate::signals::rusqlite::Connection::open(db).expect("open");
    let one = |sql: &str| -> Value {
        conn.query_row(sql, [], |r| {
            Ok(match r.get_ref(0)? {
                clawstate::signals::rusqlite::types::ValueRef::Integer(i) => json!(i),
                clawstate::signals::rusqlite::types::ValueRef::Text(t) => {
                    json!(String::from_utf8_lossy(t))
                }
                _ => Value::Null,
            })
        })
        .expect("pragma")
    };
    json!({
        "userVersion": one("PRAGMA user_version"),
        "autoVacuum": one("PRAGMA auto_vacuum"),
        "journalMode": one("PRAGMA journal_mode"),
        "pageSize": one("PRAGMA page_size"),
        "schemaMeta": signals_support::query_all(&conn,
            "SELECT meta_key, role, schema_version, agent_id, app_version FROM schema_meta"),
    })
}

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
        let outputs: Vec<Value> = sc.steps.iter().map(|st| replay(&sb, st)).collect();
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
