//! Differential tests: `claw-sessions list --json` against `openclaw sessions --json`
//! (openclaw@2026.7.1) on generated stores, field for field.
//!
//! One state dir holds many agents, so each peer run (about 1.5 s) covers every store at
//! once through `--all-agents`. Generators are seeded; `CLAWSTATE_DIFF_SEEDS=N` runs N
//! seeds instead of the default 2.

mod support;

use std::path::Path;

use serde_json::{json, Map, Value};
use support::{claw, json_of, now_ms, peer, run_peer, Rng};

const MIN: i64 = 60_000;
const HOUR: i64 = 60 * MIN;
const DAY: i64 = 24 * HOUR;

fn key_for(rng: &mut Rng, agent: &str, i: usize) -> String {
    let families = [
        format!("agent:{agent}:main"),
        format!("agent:{agent}:telegram:group:-100{i}"),
        format!("agent:{agent}:discord:channel:{i}"),
        format!("agent:{agent}:cron:job{i}"),
        format!("agent:{agent}:cron:job{i}:run:r{i}"),
        format!("agent:{agent}:hook:h{i}"),
        format!("agent:{agent}:subagent:{}", rng.uuid()),
        format!("agent:{agent}:telegram:direct:{i}"),
        format!("agent:{agent}:direct:user{i}"),
        format!("agent:{agent}:slack:channel:c{i}:thread:17{i}"),
        format!("agent:{agent}:explicit:model-run-{}", rng.uuid()),
        format!("Agent:{}:MixedCase{i}", agent.to_uppercase()),
        format!("agent:other{i}:main"),
        "global".to_string(),
        "unknown".to_string(),
        format!("cron:legacy{i}"),
        format!("node-{i}"),
        format!("{i}"),
        format!("group:legacy{i}"),
        format!("agent:{agent}:whatsapp:group:{i}@g.us"),
        format!("agent:{agent}:acp:{}", rng.uuid()),
        // A lone surrogate (see `with_js_only_json`).
        format!("agent:{agent}:direct:cut{i}{LONE}"),
    ];
    rng.pick(&families).clone()
}

fn age(rng: &mut Rng) -> i64 {
    // Buckets stay far from the --active 90 threshold used below.
    match rng.below(5) {
        0 => rng.below(60) as i64 * MIN + 1000,
        1 => 2 * HOUR + rng.below(18) as i64 * HOUR,
        2 => 2 * DAY + rng.below(38) as i64 * DAY,
        3 => -(rng.below(300) as i64 + 1) * DAY,
        _ => rng.below(50) as i64 * MIN + 5 * MIN,
    }
}

fn entry(rng: &mut Rng, now: i64, i: usize) -> Value {
    let mut e = Map::new();
    if rng.chance(10) {
        e.insert("9".into(), json!("nine"));
    }
    match rng.below(20) {
        0 => {
            e.insert("sessionId".into(), json!("../evil"));
        }
        1 => {
            e.insert("sessionId".into(), json!(5));
        }
        2 => {
            e.insert("sessionId".into(), json!("abc:def"));
        }
        3 => {}
        4 => {
            e.insert("sessionId".into(), json!(format!("  sess{i}  ")));
        }
        _ => {
            e.insert("sessionId".into(), json!(rng.uuid()));
        }
    }
    match rng.below(15) {
        0 => {}
        14 => {
            e.insert("updatedAt".into(), json!(INFINITE));
        }
        1 => {
            e.insert("updatedAt".into(), json!("notanumber"));
        }
        2 => {
            e.insert("updatedAt".into(), json!(-5));
        }
        3 => {
            e.insert("updatedAt".into(), json!((now - age(rng)) as f64 + 0.5));
        }
        _ => {
            e.insert("updatedAt".into(), json!(now - age(rng)));
        }
    }
    macro_rules! opt {
        ($k:expr, $v:expr) => {{
            let v = $v;
            if rng.chance(25) {
                e.insert($k.to_string(), v);
            }
        }};
    }
    opt!(
        "chatType",
        json!(*rng.pick(&["direct", "group", "channel", "dm"]))
    );
    opt!("spawnedBy", json!("agent:main:main"));
    opt!("label", json!(format!("label {i} ✓")));
    opt!("label", json!(format!("cut {i} {LONE}")));
    opt!("status", json!(*rng.pick(&["running", "done", "failed"])));
    opt!("systemSent", json!(rng.chance(50)));
    opt!("abortedLastRun", json!(rng.chance(50)));
    opt!("thinkingLevel", json!("high"));
    opt!("verboseLevel", json!("on"));
    opt!("inputTokens", json!(rng.below(100000)));
    opt!("outputTokens", json!(rng.below(100000)));
    opt!("totalTokens", json!(rng.below(300000)));
    opt!("totalTokensFresh", json!(rng.chance(50)));
    opt!("contextTokens", json!(128000));
    opt!("model", json!(*rng.pick(&["claude-x", "  gpt-4.1  ", ""])));
    opt!("modelProvider", json!(*rng.pick(&["anthropic", " "])));
    opt!("modelOverride", json!("o3"));
    opt!("providerOverride", json!("openai"));
    opt!(
        "channel",
        json!(*rng.pick(&["telegram", "Discord", "slack"]))
    );
    opt!("provider", json!("whatsapp"));
    opt!("lastProvider", json!("signal"));
    opt!("room", json!("#room"));
    opt!("lastTo", json!(format!("telegram:{i}")));
    opt!(
        "origin",
        json!({"chatType": "direct", "provider": "telegram", "from": format!("telegram:{i}"), "to": "telegram:bot"})
    );
    opt!(
        "deliveryContext",
        json!({"channel": "telegram", "to": format!("{i}")})
    );
    opt!("sessionStartedAt", json!(now - 3 * DAY));
    opt!(
        "customField",
        json!({"b": [1, {"2": 3, "a": null}], "1": 2})
    );
    opt!("sessionFile", json!(format!("custom-{i}.jsonl")));
    opt!("pendingFinalDeliveryAttemptCount", json!(1.5));
    opt!("subagentRole", json!("leaf"));
    opt!("spawnDepth", json!(2));
    opt!("groupActivation", json!("mention"));
    opt!("responseUsage", json!("tokens"));
    Value::Object(e)
}

/// Stands for a lone surrogate escape inside a generated string.
const LONE: &str = "@@lone@@";
/// Stands for a number beyond the double range (a whole JSON string value).
const INFINITE: &str = "@@infinite@@";

/// Store text with the placeholders replaced by what `JSON.parse` reads and serde_json
/// alone refuses: lone surrogate escapes (which `JSON.stringify` writes for a string cut
/// inside a surrogate pair) and `1e999`.
fn with_js_only_json(text: String) -> String {
    text.replace(LONE, "\\ud83d")
        .replace(&format!("\"{INFINITE}\""), "1e999")
}

fn store(rng: &mut Rng, agent: &str, now: i64) -> Value {
    let mut m = Map::new();
    let n = 5 + rng.below(30) as usize;
    for i in 0..n {
        let key = key_for(rng, agent, i);
        let v = match rng.below(30) {
            0 => json!(5),
            1 => json!([1]),
            2 => Value::Null,
            _ => entry(rng, now, i),
        };
        m.insert(key, v);
    }
    Value::Object(m)
}

/// Builds a state dir with `agents` generated stores and returns the agent ids.
fn build_state(state: &Path, seed: u64, agents: usize, now: i64) -> Vec<String> {
    let mut rng = Rng::new(seed);
    let ids: Vec<String> = (0..agents)
        .map(|i| {
            if i == 0 {
                "main".into()
            } else {
                format!("a{seed}x{i}")
            }
        })
        .collect();
    let list: Vec<Value> = ids.iter().map(|id| json!({"id": id})).collect();
    std::fs::create_dir_all(state).unwrap();
    std::fs::write(
        state.join("openclaw.json"),
        serde_json::to_string(&json!({"agents": {"list": list}})).unwrap(),
    )
    .unwrap();
    for id in &ids {
        let dir = state.join("agents").join(id).join("sessions");
        std::fs::create_dir_all(&dir).unwrap();
        let s = store(&mut rng, id, now);
        let text = if rng.chance(50) {
            serde_json::to_string(&s)
        } else {
            serde_json::to_string_pretty(&s)
        }
        .unwrap();
        std::fs::write(dir.join("sessions.json"), with_js_only_json(text)).unwrap();
    }
    ids
}

/// Compares two listings: every field equal except `ageMs`, which may differ by the
/// seconds between the two runs (the peer reads the real clock).
fn assert_same_listing(ours: &Value, theirs: &Value, what: &str) {
    let strip = |v: &Value| -> Value {
        let mut v = v.clone();
        if let Some(rows) = v.get_mut("sessions").and_then(Value::as_array_mut) {
            for r in rows {
                if let Some(o) = r.as_object_mut() {
                    if let Some(a) = o.get_mut("ageMs") {
                        if a.is_number() {
                            *a = json!("<number>");
                        }
                    }
                }
            }
        }
        v
    };
    let (a, b) = (strip(ours), strip(theirs));
    if a != b {
        let sa = serde_json::to_string_pretty(&a).unwrap();
        let sb = serde_json::to_string_pretty(&b).unwrap();
        for (i, (la, lb)) in sa.lines().zip(sb.lines()).enumerate() {
            if la != lb {
                panic!("{what}: first difference at line {i}:\n ours: {la}\n peer: {lb}");
            }
        }
        panic!(
            "{what}: outputs differ in length ({} vs {} lines)",
            sa.lines().count(),
            sb.lines().count()
        );
    }
    // Key order matters too (scripts may rely on it): compare the serialised text.
    let (ta, tb) = (
        serde_json::to_string(&a).unwrap(),
        serde_json::to_string(&b).unwrap(),
    );
    assert_eq!(ta, tb, "{what}: same values but different key order");
    if let (Some(ra), Some(rb)) = (ours["sessions"].as_array(), theirs["sessions"].as_array()) {
        for (x, y) in ra.iter().zip(rb) {
            if let (Some(p), Some(q)) = (x["ageMs"].as_i64(), y["ageMs"].as_i64()) {
                assert!((p - q).abs() < 120_000, "{what}: ageMs {p} vs {q}");
            }
        }
    }
}

#[test]
fn list_json_matches_the_peer() {
    let Some(peer) = peer() else { return };
    let seeds: u64 = std::env::var("CLAWSTATE_DIFF_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2);
    for seed in 1..=seeds {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("home");
        std::fs::create_dir_all(&home).unwrap();
        let state = tmp.path().join("state");
        let now = now_ms();
        let ids = build_state(&state, seed, 12, now);
        let second = ids[1].clone();
        let cases: Vec<Vec<&str>> = vec![
            vec!["--all-agents"],
            vec!["--all-agents", "--limit", "all"],
            vec!["--all-agents", "--limit", "7"],
            vec!["--all-agents", "--active", "90", "--limit", "all"],
            vec!["--agent", &second, "--limit", "all"],
            vec![],
        ];
        for case in &cases {
            let mut args = vec!["sessions", "--json"];
            args.extend(case.iter().copied());
            let p = run_peer(&peer, &home, &[("OPENCLAW_STATE_DIR", &state)], &args);
            assert!(
                p.status.success(),
                "peer failed on {case:?}: {}",
                String::from_utf8_lossy(&p.stderr)
            );
            let theirs = json_of(&p.stdout);
            let now_s = now_ms().to_string();
            let mut ours_args = vec!["list", "--json", "--now", now_s.as_str()];
            ours_args.extend(case.iter().copied());
            let o = claw("claw-sessions", &home)
                .env("OPENCLAW_STATE_DIR", &state)
                .args(&ours_args)
                .output()
                .unwrap();
            assert!(
                o.status.success(),
                "ours failed on {case:?}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
            let ours = json_of(&o.stdout);
            assert_same_listing(&ours, &theirs, &format!("seed {seed} {case:?}"));
        }
        // --store on one file (agentId reported as the default agent, rows by key).
        let store = state
            .join("agents")
            .join(&second)
            .join("sessions/sessions.json");
        let store_s = store.to_str().unwrap();
        let p = run_peer(
            &peer,
            &home,
            &[("OPENCLAW_STATE_DIR", &state)],
            &["sessions", "--json", "--store", store_s, "--limit", "all"],
        );
        let o = claw("claw-sessions", &home)
            .env("OPENCLAW_STATE_DIR", &state)
            .args(["list", "--json", "--limit", "all", "--store", store_s])
            .output()
            .unwrap();
        assert_same_listing(
            &json_of(&o.stdout),
            &json_of(&p.stdout),
            &format!("seed {seed} --store"),
        );
    }
}

#[test]
fn limit_and_active_errors_match_the_peer_messages() {
    let tmp = tempfile::tempdir().unwrap();
    for (args, msg) in [
        (
            vec!["list", "--limit", "0"],
            "--limit must be a positive integer or \"all\", for example --limit 25.",
        ),
        (
            vec!["list", "--limit", "1.5"],
            "--limit must be a positive integer",
        ),
        (
            vec!["list", "--active", "x"],
            "--active must be a positive number of minutes, for example --active 30.",
        ),
    ] {
        claw("claw-sessions", tmp.path())
            .args(&args)
            .assert()
            .code(2)
            .stderr(predicates::str::contains(msg));
    }
}
