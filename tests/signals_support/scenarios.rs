//! The scripted signal scenarios shared by the differential tests against openclaw@2026.8.1
//! (tests/differential_signals.rs) and 2026.9.6 (tests/signals_v18.rs): the steps, and
//! their replay through `claw-signals` / `claw-watch`.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{json, Value};

use super::{stdout, Sandbox};

pub const T0: i64 = 1_795_989_048_800;
pub const DAY: i64 = 86_400_000;
pub const HOUR: i64 = 3_600_000;

pub const MAIN: &str = "agent:main:main";
pub const OPS: &str = "agent:ops:main";

/// A scenario: steps with their clock.
pub struct Sc {
    /// Its name (the state dir's).
    pub name: &'static str,
    /// The clock of the last step.
    pub t: i64,
    /// The steps, each with its `now`.
    pub steps: Vec<Value>,
}

impl Sc {
    /// A scenario `index` × 100 days after T0.
    pub fn new(name: &'static str, index: i64) -> Sc {
        // 100 days apart: the peer process keeps one prune throttle for all scenarios.
        Sc {
            name,
            t: T0 + index * 100 * DAY,
            steps: Vec::new(),
        }
    }

    /// Appends a step one second later.
    pub fn step(&mut self, mut v: Value) -> &mut Sc {
        self.t += 1000;
        v["now"] = json!(self.t);
        self.steps.push(v);
        self
    }

    /// Moves the clock on.
    pub fn advance(&mut self, ms: i64) -> &mut Sc {
        self.t += ms;
        self
    }
}

pub fn spawn(child: &str, requester: &str, run: &str) -> Value {
    json!({"op": "spawn", "child": child, "requester": requester, "runId": run})
}
pub fn terminal(child: &str, requester: &str, run: &str, outcome: &str) -> Value {
    json!({"op": "terminal", "child": child, "requester": requester, "runId": run, "outcome": outcome})
}
pub fn human(session: &str, actor: Option<&str>, run: &str, channel: Option<&str>) -> Value {
    let mut v = json!({"op": "human", "session": session, "sessionId": "sid-1", "runId": run});
    if let Some(a) = actor {
        v["actorId"] = json!(a);
    }
    if let Some(c) = channel {
        v["channel"] = json!(c);
    }
    v
}
pub fn pending(w: &str) -> Value {
    json!({"op": "pending", "watcher": w})
}
pub fn drain(w: &str) -> Value {
    json!({"op": "drain", "watcher": w})
}
pub fn changes(s: &str, since: i64) -> Value {
    json!({"op": "changes", "session": s, "since": since})
}
pub fn version(s: &str) -> Value {
    json!({"op": "version", "session": s})
}
/// A step whose result differs on purpose (spec README decision 7): the gateway keeps a
/// queued notice line in memory after its cursor is deleted (watcher reset, expiry),
/// offline a notice exists only as a pending cursor. Checked as "ours ⊆ peer".
pub fn deliberate(mut v: Value) -> Value {
    v["deliberate"] = json!(true);
    v
}
pub fn register(w: &str, t: &str) -> Value {
    json!({"op": "register", "watcher": w, "target": t})
}

pub fn scenarios() -> Vec<Sc> {
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
pub fn record_flags(input: &Value) -> Vec<String> {
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

pub fn lines_sorted(text: &str) -> Value {
    let mut v: Vec<&str> = text.lines().filter(|l| !l.is_empty()).collect();
    v.sort();
    json!(v)
}

/// Replays one step through our binaries; `session_db`: an agent database holding the
/// watcher's entry that the `session` op installs (2026.9.6 reads no sessions.json), else
/// the op writes sessions.json.
pub fn replay(sb: &Sandbox, step: &Value, session_db: Option<&Path>) -> Value {
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
        "session" if session_db.is_some() => {
            let dir = sb.state_dir.join("agents/main/agent");
            std::fs::create_dir_all(&dir).expect("agent dir");
            let src = session_db.expect("fixture");
            for suffix in ["", "-wal", "-shm"] {
                let from = PathBuf::from(format!("{}{suffix}", src.display()));
                if from.exists() {
                    std::fs::copy(&from, dir.join(format!("openclaw-agent.sqlite{suffix}")))
                        .expect("copy agent db");
                }
            }
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

pub fn pragmas(db: &Path) -> Value {
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
        "schemaMeta": super::query_all(&conn,
            "SELECT meta_key, role, schema_version, agent_id, app_version FROM schema_meta"),
    })
}
