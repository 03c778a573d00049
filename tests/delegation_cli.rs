//! Delegation without the peer: a fake gateway on 127.0.0.1 replays the frames recorded
//! from a real openclaw@2026.7.1 gateway (`lib/src/gateway_rpc/recorded/`) and records
//! what clawstate sends. Checks the connect frame (client, role, least scopes, token, the
//! device block when there is no shared secret), the request, the output's `"via"`, and
//! that refused, misdirected or unreachable calls exit 77 / 75 and write nothing locally.
//! The real gateway is in `tests/field_delegation.rs`.

mod support;

use std::net::TcpListener;
use std::path::PathBuf;

use serde_json::{json, Value};
use support::claw;

const RECORDED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/lib/src/gateway_rpc/recorded/");

fn recorded(name: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(format!("{RECORDED}{name}")).unwrap()).unwrap()
}

struct Fixture {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    state: PathBuf,
    store: PathBuf,
}

impl Fixture {
    fn new(port: u16, auth: Value) -> Fixture {
        let tmp = tempfile::tempdir().unwrap();
        let home = std::fs::canonicalize(tmp.path()).unwrap();
        let state = home.join(".openclaw");
        let sessions = state.join("agents/main/sessions");
        std::fs::create_dir_all(&sessions).unwrap();
        std::fs::write(
            state.join("openclaw.json"),
            json!({"gateway": {"port": port, "bind": "loopback", "auth": auth}}).to_string(),
        )
        .unwrap();
        let store = sessions.join("sessions.json");
        std::fs::write(
            &store,
            r#"{"agent:main:main": {"sessionId": "s1", "updatedAt": 1}}"#,
        )
        .unwrap();
        Fixture {
            _tmp: tmp,
            home,
            state,
            store,
        }
    }

    fn cmd(&self) -> assert_cmd::Command {
        let mut c = claw("claw-sessions", &self.home);
        c.arg("--state-dir").arg(&self.state).arg("--via-gateway");
        c
    }
}

/// What the fake gateway answers the connect with.
enum Hello {
    /// `hello-ok` naming this state dir (or, with `Some`, another one).
    Ok(Option<String>),
    /// The recorded refusal (`AUTH_TOKEN_MISMATCH`).
    Refused,
}

/// A fake gateway for one connection: challenge, then `hello` for the connect, then the
/// recorded cleanup answer for the next request. Returns its port and the frames it got.
fn fake_gateway(
    state: Option<PathBuf>,
    hello: Hello,
) -> (u16, std::thread::JoinHandle<Vec<Value>>) {
    use tungstenite::Message;
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let handle = std::thread::spawn(move || {
        let (stream, _) = listener.accept().unwrap();
        stream
            .set_read_timeout(Some(std::time::Duration::from_secs(30)))
            .unwrap();
        let mut ws = tungstenite::accept(stream).unwrap();
        let mut got = Vec::new();
        let send = |ws: &mut tungstenite::WebSocket<_>, v: Value| {
            ws.send(Message::Text(v.to_string().into())).unwrap()
        };
        let read = |ws: &mut tungstenite::WebSocket<std::net::TcpStream>| loop {
            match ws.read() {
                Ok(Message::Text(t)) => {
                    return Some(serde_json::from_str::<Value>(t.as_str()).unwrap())
                }
                Ok(_) => continue,
                Err(_) => return None,
            }
        };
        send(&mut ws, recorded("challenge.json"));
        let Some(connect) = read(&mut ws) else {
            return got;
        };
        let id = connect["id"].clone();
        got.push(connect);
        match hello {
            Hello::Refused => {
                let mut r = recorded("connect-rejected.json");
                r["id"] = id;
                send(&mut ws, r);
                let _ = ws.close(None);
                let _ = ws.flush();
                if let Some(more) = read(&mut ws) {
                    got.push(more);
                }
                return got;
            }
            Hello::Ok(other) => {
                let mut h = recorded("hello-ok.json");
                h["id"] = id;
                h["payload"]["snapshot"]["stateDir"] = match other {
                    Some(o) => json!(o),
                    None => json!(state.unwrap()),
                };
                send(&mut ws, h);
            }
        }
        send(&mut ws, recorded("health-event.json"));
        let Some(request) = read(&mut ws) else {
            return got;
        };
        let mut r = recorded("cleanup-response.json");
        r["id"] = request["id"].clone();
        got.push(request);
        send(&mut ws, r);
        let _ = read(&mut ws);
        got
    });
    (port, handle)
}

/// Binds the port first, so the fixture's config can name it.
fn with_gateway(
    auth: Value,
    hello: impl FnOnce(&Fixture) -> Hello,
) -> (Fixture, std::thread::JoinHandle<Vec<Value>>) {
    // The fixture needs the port and the fake needs the state dir: make the fixture on a
    // placeholder port, start the fake, then rewrite the config with its port.
    let f = Fixture::new(1, auth.clone());
    let (port, handle) = fake_gateway(Some(f.state.clone()), hello(&f));
    std::fs::write(
        f.state.join("openclaw.json"),
        json!({"gateway": {"port": port, "bind": "loopback", "auth": auth}}).to_string(),
    )
    .unwrap();
    (f, handle)
}

#[test]
fn a_cleanup_goes_through_the_gateway_with_the_least_scope_and_writes_nothing_itself() {
    let (f, gw) = with_gateway(json!({"mode": "token", "token": "T"}), |_| Hello::Ok(None));
    let before = std::fs::read(&f.store).unwrap();
    let out = f
        .cmd()
        .args(["cleanup", "--enforce", "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let doc = support::json_of(&out.stdout);
    assert_eq!(doc["via"], "gateway");
    assert_eq!(
        (doc["beforeCount"].clone(), doc["afterCount"].clone()),
        (json!(4), json!(2))
    );
    let got = gw.join().unwrap();
    let connect = &got[0];
    assert_eq!(connect["method"], "connect");
    let p = &connect["params"];
    assert_eq!(
        (p["minProtocol"].clone(), p["maxProtocol"].clone()),
        (json!(4), json!(4))
    );
    assert_eq!(
        (p["client"]["id"].clone(), p["client"]["mode"].clone()),
        (json!("cli"), json!("cli"))
    );
    assert_eq!(p["role"], "operator");
    assert_eq!(p["scopes"], json!(["operator.admin"]));
    assert_eq!(p["auth"], json!({"token": "T"}));
    assert!(
        p.get("device").is_none(),
        "loopback with a token sends no device block: {p}"
    );
    assert_eq!(got[1]["method"], "sessions.cleanup");
    assert_eq!(
        got[1]["params"],
        json!({"enforce": true, "fixMissing": false, "fixDmScope": false})
    );
    assert_eq!(
        std::fs::read(&f.store).unwrap(),
        before,
        "the store was written locally"
    );
}

#[test]
fn a_refused_token_is_77_with_the_reason_and_nothing_is_sent_or_written() {
    let (f, gw) = with_gateway(json!({"mode": "token", "token": "wrong"}), |_| {
        Hello::Refused
    });
    let before = std::fs::read(&f.store).unwrap();
    let out = f
        .cmd()
        .args(["patch", "main", "--set", "label=x"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(77), "{err}");
    assert!(err.contains("AUTH_TOKEN_MISMATCH"), "{err}");
    assert!(err.contains("OPENCLAW_GATEWAY_TOKEN"), "{err}");
    assert_eq!(gw.join().unwrap().len(), 1, "only the connect was sent");
    assert_eq!(std::fs::read(&f.store).unwrap(), before);
}

#[test]
fn a_gateway_of_another_state_dir_gets_no_request() {
    let (f, gw) = with_gateway(json!({"token": "T"}), |_| {
        Hello::Ok(Some("/srv/other/.openclaw".into()))
    });
    let before = std::fs::read(&f.store).unwrap();
    let out = f.cmd().args(["cleanup", "--enforce"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(75), "{err}");
    assert!(err.contains("serves /srv/other/.openclaw"), "{err}");
    assert_eq!(gw.join().unwrap().len(), 1, "only the connect was sent");
    assert_eq!(std::fs::read(&f.store).unwrap(), before);
}

#[test]
fn via_gateway_with_no_gateway_is_75_and_never_offline() {
    let closed = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let f = Fixture::new(closed, json!({"token": "T"}));
    let before = std::fs::read(&f.store).unwrap();
    for args in [
        &["cleanup", "--enforce"][..],
        &["patch", "main", "--set", "label=x"][..],
        &["reset", "main"][..],
        &["delete", "main"][..],
    ] {
        let out = f.cmd().args(args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(75), "{args:?}: {err}");
        assert!(err.contains("cannot reach the gateway"), "{args:?}: {err}");
    }
    // Transcript writes have no gateway method: refused too, never done offline.
    let transcript = f.store.with_file_name("s1.jsonl");
    let out = claw("claw-transcript", &f.home)
        .arg("--state-dir")
        .arg(&f.state)
        .arg("--via-gateway")
        .args(["append", "main", "--role", "user", "--text", "hi"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(75), "{err}");
    assert!(err.contains("no method that writes a transcript"), "{err}");
    assert!(!transcript.exists(), "nothing written offline");
    // A dry run is a read: offline, whatever the route.
    f.cmd().args(["cleanup", "--dry-run"]).assert().success();
    assert_eq!(std::fs::read(&f.store).unwrap(), before);
}

#[test]
fn without_a_shared_secret_the_device_identity_signs_the_nonce() {
    let (f, gw) = with_gateway(json!({"mode": "token"}), |f| {
        std::fs::create_dir_all(f.state.join("identity")).unwrap();
        std::fs::copy(
            format!("{RECORDED}device.json"),
            f.state.join("identity/device.json"),
        )
        .unwrap();
        Hello::Refused
    });
    let out = f.cmd().args(["reset", "main"]).output().unwrap();
    assert_eq!(out.status.code(), Some(77), "{out:?}");
    let got = gw.join().unwrap();
    let p = &got[0]["params"];
    assert!(p.get("auth").is_none(), "{p}");
    let device = &p["device"];
    let identity = recorded("device.json");
    assert_eq!(device["id"], identity["deviceId"]);
    assert_eq!(
        device["nonce"],
        recorded("challenge.json")["payload"]["nonce"]
    );
    assert_eq!(
        device["signature"].as_str().map(str::len),
        Some(86),
        "{device}"
    );
    assert!(device["signedAt"].as_i64().is_some_and(|t| t > 0));
}
