//! Delegation to a live gateway (issue 27), against one real openclaw@2026.7.1 gateway
//! (the field suite's harness, `field_support`): writes while it runs go through its
//! WebSocket RPC and are checked with the gateway's own `openclaw sessions --json`; a
//! wrong or missing token exits 77 and changes no byte; an unreachable gateway, or one
//! that dies mid-request, exits 75 and changes nothing; nothing ever falls back to a
//! local write. Commands run as cron runs them: `env -i` with only HOME, PATH, TZ and the
//! token (`support::claw`), the state dir given with `--state-dir`.
//!
//! One gateway start (6-15 s) for every check; the gateway is killed by the last one.
//! Skipped, with a note, when the peer is unavailable or `CLAWSTATE_SKIP_PEER` is set.

mod field_support;
mod support;

use std::collections::BTreeMap;
use std::net::TcpListener;
use std::path::Path;

use field_support::gateway::TOKEN;
use field_support::{changed, snapshot, Field, Gateway};
use serde_json::{json, Value};

const DAY_MS: i64 = 86_400_000;
const KEEP: &str = "agent:main:keep";
const OLD_1: &str = "agent:main:old-1";
const OLD_2: &str = "agent:main:old-2";
const PATCH_ME: &str = "agent:main:patch-me";
const RESET_ME: &str = "agent:main:reset-me";
const DELETE_ME: &str = "agent:main:delete-me";

/// A store written before the gateway starts: three fresh sessions, two 95 and 120 days
/// old (pruned by `cleanup --enforce` under `pruneAfter: 30d`), each with a transcript.
fn seed(gw: &Gateway) -> BTreeMap<String, String> {
    let dir = gw.sessions_dir();
    std::fs::create_dir_all(&dir).unwrap();
    let now = chrono_now_ms();
    let mut store = serde_json::Map::new();
    let mut ids = BTreeMap::new();
    for (i, (key, age_days)) in [
        (KEEP, 0),
        (PATCH_ME, 0),
        (RESET_ME, 0),
        (DELETE_ME, 0),
        (OLD_1, 95),
        (OLD_2, 120),
    ]
    .into_iter()
    .enumerate()
    {
        let sid = format!("00000000-0000-4000-8000-{:012}", i + 1);
        let file = dir.join(format!("{sid}.jsonl"));
        let header = json!({"type": "session", "version": 3, "id": sid,
            "timestamp": "2026-01-01T00:00:00.000Z", "cwd": gw.root.join("workspace")});
        std::fs::write(&file, format!("{header}\n")).unwrap();
        store.insert(
            key.to_string(),
            json!({"sessionId": sid, "updatedAt": now - age_days * DAY_MS - i as i64,
                "sessionFile": file}),
        );
        ids.insert(key.to_string(), sid);
    }
    std::fs::write(
        dir.join("sessions.json"),
        serde_json::to_string_pretty(&Value::Object(store)).unwrap(),
    )
    .unwrap();
    ids
}

fn chrono_now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

/// A cron-like clawstate command on the gateway's state dir: `env -i` with a HOME of its
/// own, PATH, TZ; plus `vars`.
fn cron(bin: &str, home: &Path, gw: &Gateway, vars: &[(&str, &str)]) -> assert_cmd::Command {
    let mut c = support::claw(bin, home);
    c.arg("--state-dir").arg(&gw.state);
    for (k, v) in vars {
        c.env(k, v);
    }
    c
}

/// Every write that goes through the gateway, on a session that exists.
const DELEGATED: &[&[&str]] = &[
    &["claw-sessions", "cleanup", "--enforce"],
    &["claw-sessions", "patch", PATCH_ME, "--set", "label=nightly"],
    &["claw-sessions", "reset", RESET_ME],
    &["claw-sessions", "delete", DELETE_ME],
    &["claw-compact", "truncate", KEEP, "--max-lines", "1"],
];

/// The gateway's own listing: key → entry.
fn gateway_listing(gw: &Gateway) -> BTreeMap<String, Value> {
    let o = gw.openclaw(&["sessions", "--json"]);
    assert!(o.status.success(), "openclaw sessions --json: {o:?}");
    let doc = field_support::json_tail(&o.stdout);
    doc["sessions"]
        .as_array()
        .expect("sessions")
        .iter()
        .map(|s| (s["key"].as_str().unwrap().to_string(), s.clone()))
        .collect()
}

#[test]
fn field_writes_go_through_the_live_gateway_and_never_around_it() {
    let patch = json!({"session": {"maintenance": {"pruneAfter": "30d"}}});
    let Some(mut f) = Field::with_config(&patch) else {
        return;
    };
    let ids = seed(&f.gw);
    f.gw.start();
    let caller = tempfile::tempdir().unwrap();
    let home = caller.path();
    let agents = f.gw.state.join("agents");
    let pid = f.gw.pid();
    let url = format!("ws://127.0.0.1:{}", f.gw.port);

    // 1. A wrong token (77 with the gateway's reason and how to pass a token), a missing
    //    one (the URL from the environment gets no config credentials), an unreachable
    //    gateway (75): not a byte changes.
    let before = snapshot(&agents);
    let closed = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let closed_url = format!("ws://127.0.0.1:{closed}");
    let cases: [(&[(&str, &str)], i32, &str); 3] = [
        (
            &[("OPENCLAW_GATEWAY_TOKEN", "not-the-token")],
            77,
            "AUTH_TOKEN_MISMATCH",
        ),
        (&[("OPENCLAW_GATEWAY_URL", &url)], 77, "AUTH_TOKEN_MISSING"),
        (
            &[
                ("OPENCLAW_GATEWAY_URL", &closed_url),
                ("OPENCLAW_GATEWAY_TOKEN", TOKEN),
            ],
            75,
            "cannot reach the gateway",
        ),
    ];
    for (vars, code, reason) in cases {
        for w in DELEGATED {
            let o = cron(w[0], home, &f.gw, vars)
                .args(&w[1..])
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(code), "{w:?} with {vars:?}: {err}");
            assert!(err.contains(reason), "{w:?} with {vars:?}: {err}");
            if code == 77 {
                assert!(err.contains("OPENCLAW_GATEWAY_TOKEN"), "{w:?}: {err}");
            }
        }
    }
    assert_eq!(
        changed(&before, &snapshot(&agents)),
        Vec::<String>::new(),
        "refused calls changed the state dir"
    );

    // 2. What has no counterpart on the gateway keeps refusing with 75 and says why.
    for (w, why) in [
        (&["claw-compact", "run", KEEP][..], "its own model"),
        (&["claw-compact", "auto", "--all"][..], "its own model"),
        (&["claw-sessions", "relocate"][..], "sessionFile"),
        (
            &["claw-sessions", "patch", KEEP, "--set", "origin.label=x"][..],
            "top-level",
        ),
    ] {
        let o = cron(w[0], home, &f.gw, &[]).args(&w[1..]).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(75), "{w:?}: {err}");
        assert!(
            err.contains(why) && err.contains(&format!("pid {pid}")),
            "{w:?}: {err}"
        );
    }
    assert_eq!(changed(&before, &snapshot(&agents)), Vec::<String>::new());

    // 3. Cron: `env -i` plus the token; cleanup --enforce is the gateway's and exits 0.
    let token = [("OPENCLAW_GATEWAY_TOKEN", TOKEN)];
    let o = cron("claw-sessions", home, &f.gw, &token)
        .args(["cleanup", "--enforce", "--json"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let doc = support::json_of(&o.stdout);
    assert_eq!(doc["via"], "gateway", "{doc}");
    assert_eq!(
        (doc["pruned"].clone(), doc["applied"].clone()),
        (json!(2), json!(true)),
        "{doc}"
    );
    // And silent in text when nothing is left to do (for cron mail).
    cron("claw-sessions", home, &f.gw, &token)
        .args(["cleanup", "--enforce"])
        .assert()
        .success()
        .stdout("");

    // 4. patch, reset, delete, truncate through the gateway; list --live asks it.
    let o = cron("claw-sessions", home, &f.gw, &token)
        .args(["patch", PATCH_ME, "--set", "label=nightly", "--json"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let doc = support::json_of(&o.stdout);
    assert_eq!(
        (doc["via"].clone(), doc["entry"]["label"].clone()),
        (json!("gateway"), json!("nightly"))
    );
    let o = cron("claw-sessions", home, &f.gw, &token)
        .args(["reset", RESET_ME, "--json"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let reset = support::json_of(&o.stdout);
    assert_eq!(reset["previousSessionId"], ids[RESET_ME].as_str());
    let o = cron("claw-sessions", home, &f.gw, &token)
        .args(["delete", DELETE_ME, "--json"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let deleted = support::json_of(&o.stdout);
    assert_eq!(deleted["deleted"][0]["deleted"], true, "{deleted}");
    let o = cron("claw-compact", home, &f.gw, &token)
        .args(["truncate", KEEP, "--max-lines", "1", "--json"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    assert_eq!(support::json_of(&o.stdout)["via"], "gateway");
    let o = cron("claw-sessions", home, &f.gw, &token)
        .args(["list", "--live", "--json"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let live = support::json_of(&o.stdout);
    assert_eq!(live["via"], "gateway");

    // The gateway's own view agrees.
    let listing = gateway_listing(&f.gw);
    let keys: Vec<&str> = listing.keys().map(String::as_str).collect();
    for gone in [OLD_1, OLD_2, DELETE_ME] {
        assert!(!keys.contains(&gone), "{gone} is still listed: {keys:?}");
    }
    assert_eq!(listing[PATCH_ME]["label"], "nightly");
    assert_eq!(listing[RESET_ME]["sessionId"], reset["sessionId"]);
    assert_ne!(listing[RESET_ME]["sessionId"], ids[RESET_ME].as_str());
    let live_keys: Vec<&str> = live["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["key"].as_str())
        .collect();
    for k in [KEEP, PATCH_ME, RESET_ME] {
        assert!(
            live_keys.contains(&k),
            "list --live lacks {k}: {live_keys:?}"
        );
    }

    // 5. --offline writes with a warning while the gateway runs (the old --store path).
    let o = cron("claw-sessions", home, &f.gw, &[])
        .args(["--offline", "patch", KEEP, "--set", "label=offline"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("--offline"),
        "{o:?}"
    );

    // 6. The gateway dies mid-request: 75, and nothing changed.
    f.gw.settle();
    let before = snapshot(&agents);
    let (relay, handle) = dying_relay(f.gw.port, pid);
    let relay_url = format!("ws://127.0.0.1:{relay}");
    let o = cron(
        "claw-sessions",
        home,
        &f.gw,
        &[
            ("OPENCLAW_GATEWAY_URL", &relay_url),
            ("OPENCLAW_GATEWAY_TOKEN", TOKEN),
        ],
    )
    .args(["cleanup", "--enforce", "--fix-missing"])
    .output()
    .unwrap();
    let seen = handle.join().expect("the relay ran");
    assert_eq!(seen, "sessions.cleanup");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(75), "{err}");
    assert!(err.contains("went away during sessions.cleanup"), "{err}");
    assert_eq!(
        changed(&before, &snapshot(&agents)),
        Vec::<String>::new(),
        "a write happened although the gateway died"
    );
    f.gw.stop();
}

/// Relays text frames from `from` to `to` until one satisfies `until`.
fn pass<A, B>(
    from: &mut tungstenite::WebSocket<A>,
    to: &mut tungstenite::WebSocket<B>,
    until: &dyn Fn(&Value) -> bool,
) where
    A: std::io::Read + std::io::Write,
    B: std::io::Read + std::io::Write,
{
    loop {
        let tungstenite::Message::Text(t) = from.read().unwrap() else {
            continue;
        };
        to.send(tungstenite::Message::Text(t.clone())).unwrap();
        if until(&serde_json::from_str::<Value>(t.as_str()).unwrap()) {
            return;
        }
    }
}

/// A WebSocket relay in front of the gateway on `port` that passes the handshake, then
/// kills the gateway (its process group, SIGKILL) when the first request arrives and
/// drops both connections without a close frame. Returns its port and a handle whose
/// value is the method of the request it swallowed.
fn dying_relay(port: u16, gateway_pid: u32) -> (u16, std::thread::JoinHandle<String>) {
    use tungstenite::Message;
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let relay = listener.local_addr().unwrap().port();
    let handle = std::thread::spawn(move || {
        let (stream, _) = listener.accept().unwrap();
        let mut client = tungstenite::accept(stream).unwrap();
        let (mut up, _) = tungstenite::connect(format!("ws://127.0.0.1:{port}")).unwrap();
        pass(&mut up, &mut client, &|v| v["event"] == "connect.challenge");
        let Message::Text(connect) = client.read().unwrap() else {
            panic!("no connect")
        };
        up.send(Message::Text(connect)).unwrap();
        pass(&mut up, &mut client, &|v| v["type"] == "res");
        let request = loop {
            if let Message::Text(t) = client.read().unwrap() {
                break serde_json::from_str::<Value>(t.as_str()).unwrap();
            }
        };
        // SAFETY: the gateway was spawned as the leader of its own process group.
        unsafe { libc::kill(-(gateway_pid as libc::pid_t), libc::SIGKILL) };
        drop(up);
        drop(client);
        request["method"].as_str().unwrap_or("").to_string()
    });
    (relay, handle)
}
