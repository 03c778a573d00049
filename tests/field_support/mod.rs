//! The field suite's harness: a real openclaw@2026.7.1 gateway ([`Gateway`]) on a fake
//! OpenAI-compatible model ([`FakeModel`]), and checks of clawstate against what that
//! gateway wrote and says. Each check is one function taking the running field, so a new
//! item adds its own `assert_*` here and calls it from `tests/field_gateway.rs`.

#![allow(dead_code)]

pub mod gateway;
pub mod http;
pub mod model;

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{json, Value};

pub use gateway::Gateway;
pub use model::FakeModel;

/// A fake model and a gateway that uses it (not started yet); `None`, with a note on
/// stderr, when the peer is unavailable or `CLAWSTATE_SKIP_PEER` is set.
pub struct Field {
    /// The gateway (declared first: it stops before the model does).
    pub gw: Gateway,
    /// The model it talks to.
    pub model: FakeModel,
    _slot: Slot,
}

impl Field {
    /// A new field with the suite's config, or `None` when the peer cannot run here.
    pub fn new() -> Option<Field> {
        Field::with_config(&json!({}))
    }

    /// A new field whose config is the suite's with `patch` merged in (`null` removes).
    ///
    /// The suite's config sets `agents.defaults.contextTokens` to the fake model's window: an
    /// entry without `contextTokens` (one the gateway's `sessions.reset` wrote, or whose first
    /// turn failed) lists as the configured model's `contextWindow` in `openclaw sessions`
    /// (its model catalog), and as 200000 in `claw-sessions list`, which reads only the entry
    /// and `agents.defaults`; see `field_listing_of_an_entry_without_context_tokens`.
    ///
    /// At most [`SLOTS`] fields exist at once (a gateway takes most of a core while it
    /// starts, and about 800 MB).
    pub fn with_config(patch: &Value) -> Option<Field> {
        let peer = crate::support::peer()?;
        let slot = Slot::take();
        let model = FakeModel::start();
        let mut config = json!({"agents": {"defaults": {"contextTokens": 32000}}});
        gateway::merge(&mut config, patch);
        let gw = Gateway::new(&peer, &model, &config);
        Some(Field {
            gw,
            model,
            _slot: slot,
        })
    }
}

/// How many fields may run at once.
pub const SLOTS: usize = 2;

static IN_USE: std::sync::Mutex<usize> = std::sync::Mutex::new(0);
static FREED: std::sync::Condvar = std::sync::Condvar::new();

/// One of the [`SLOTS`], given back when dropped.
pub struct Slot(());

impl Slot {
    fn take() -> Slot {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(900);
        let mut n = IN_USE.lock().unwrap_or_else(|e| e.into_inner());
        while *n >= SLOTS {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            assert!(!left.is_zero(), "no field slot in 15 minutes");
            n = FREED
                .wait_timeout(n, left)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        *n += 1;
        Slot(())
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        *IN_USE.lock().unwrap_or_else(|e| e.into_inner()) -= 1;
        FREED.notify_one();
    }
}

/// The JSON document of a command's output: from its first line that starts with `{`
/// (the peer CLI may print notices before it).
pub fn json_tail(out: &[u8]) -> Value {
    let text = String::from_utf8_lossy(out);
    crate::support::json_of(from_first_brace(&text).as_bytes())
}

/// `text` from its first line that starts with `{`.
pub fn from_first_brace(text: &str) -> &str {
    if text.starts_with('{') {
        return text;
    }
    match text.find("\n{") {
        Some(i) => &text[i + 1..],
        None => panic!("no JSON in: {text}"),
    }
}

/// Runs a clawstate command and parses its JSON stdout (it must succeed).
pub fn claw_json(mut cmd: assert_cmd::Command) -> Value {
    let o = cmd.output().expect("runs");
    assert!(
        o.status.success(),
        "{cmd:?} failed ({:?}): {}",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
    crate::support::json_of(&o.stdout)
}

/// Compact serialisation (key order kept), for comparisons that include key order.
fn text(v: &Value) -> String {
    serde_json::to_string(v).expect("serialise")
}

/// Panics at the first differing line of the two documents' pretty forms.
pub fn assert_same_json(ours: &Value, theirs: &Value, what: &str) {
    let (a, b) = (
        serde_json::to_string_pretty(ours).expect("serialise"),
        serde_json::to_string_pretty(theirs).expect("serialise"),
    );
    if a != b {
        for (i, (la, lb)) in a.lines().zip(b.lines()).enumerate() {
            if la != lb {
                panic!("{what}: first difference at line {i}:\n ours: {la}\n gateway: {lb}\nours:\n{a}");
            }
        }
        panic!(
            "{what}: lengths differ ({} vs {} lines)\nours:\n{a}\ngateway:\n{b}",
            a.lines().count(),
            b.lines().count()
        );
    }
}

/// `claw-sessions list --json` equals `openclaw sessions --json` on the gateway's state
/// (`ageMs` may differ by the time between the two runs).
pub fn assert_listing_matches(gw: &Gateway) {
    gw.settle();
    let now = crate::support::now_ms().to_string();
    let mut ours = claw_json({
        let mut c = gw.claw("claw-sessions");
        c.args(["list", "--json", "--now", &now]);
        c
    });
    let o = gw.openclaw(&["sessions", "--json"]);
    assert!(
        o.status.success(),
        "openclaw sessions: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let mut theirs = json_tail(&o.stdout);
    for doc in [&mut ours, &mut theirs] {
        for row in doc["sessions"].as_array_mut().into_iter().flatten() {
            if let Some(age) = row.get_mut("ageMs").filter(|a| a.is_number()) {
                *age = json!("<ms>");
            }
        }
    }
    assert_same_json(&ours, &theirs, "claw-sessions list vs openclaw sessions");
    assert_eq!(
        text(&ours),
        text(&theirs),
        "listing: same values, different key order"
    );
}

/// `claw-transcript history KEY --json --include-tools` equals the gateway's own
/// `sessions_history` (through `/tools/invoke`, requested by the session itself).
pub fn assert_history_matches(gw: &Gateway, key: &str) {
    gw.settle();
    let ours = claw_json({
        let mut c = gw.claw("claw-transcript");
        c.args(["history", key, "--json", "--include-tools"]);
        c
    });
    let requester = if key == "main" {
        "agent:main:main"
    } else {
        key
    };
    let theirs = gw.tool(
        requester,
        "sessions_history",
        json!({"sessionKey": key, "includeTools": true}),
    );
    assert_same_json(&ours, &theirs, &format!("history {key}"));
    assert_eq!(text(&ours), text(&theirs), "history {key}: key order");
}

/// `claw-sessions cleanup --dry-run --json FLAGS` is byte for byte `openclaw sessions
/// cleanup --dry-run --json FLAGS` on the gateway's state.
pub fn assert_cleanup_preview_matches(gw: &Gateway, flags: &[&str]) {
    gw.settle();
    let now = crate::support::now_ms().to_string();
    let o = gw
        .claw("claw-sessions")
        .args(["cleanup", "--dry-run", "--json", "--now", &now])
        .args(flags)
        .output()
        .expect("runs");
    assert!(
        o.status.success(),
        "claw-sessions cleanup: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let mut args = vec!["sessions", "cleanup", "--dry-run", "--json"];
    args.extend_from_slice(flags);
    let p = gw.openclaw(&args);
    assert!(
        p.status.success(),
        "openclaw sessions cleanup: {}",
        String::from_utf8_lossy(&p.stderr)
    );
    let theirs = String::from_utf8_lossy(&p.stdout);
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        from_first_brace(&theirs),
        "cleanup --dry-run {flags:?}: ours vs the gateway's CLI"
    );
}

/// One message as the model sees it: role, text, and tool calls as (name, arguments).
#[derive(Debug, Clone, PartialEq)]
pub struct Seen {
    /// `user`, `assistant` or `tool`.
    pub role: String,
    /// The text (user text without the gateway's date envelope).
    pub text: String,
    /// Tool calls: name and parsed arguments.
    pub calls: Vec<(String, Value)>,
}

/// The conversation of a chat request as [`Seen`] rows (system messages dropped).
pub fn seen_in_request(request: &Value) -> Vec<Seen> {
    let mut out = Vec::new();
    for m in request["messages"].as_array().into_iter().flatten() {
        let role = m["role"].as_str().unwrap_or_default();
        if role == "system" || role == "developer" {
            continue;
        }
        let mut text = model::content_text(m.get("content"));
        if role == "user" {
            text = model::strip_envelope(&text).to_string();
        }
        let calls = m["tool_calls"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|c| {
                let args = c["function"]["arguments"].as_str().unwrap_or("{}");
                (
                    c["function"]["name"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string(),
                    serde_json::from_str(args).unwrap_or(Value::Null),
                )
            })
            .collect();
        out.push(Seen {
            role: role.to_string(),
            text,
            calls,
        });
    }
    out
}

/// The messages of `claw-transcript context --json` as [`Seen`] rows.
pub fn seen_in_context(context: &Value) -> Vec<Seen> {
    let mut out = Vec::new();
    for m in context["messages"].as_array().into_iter().flatten() {
        let role = match m["role"].as_str().unwrap_or_default() {
            "toolResult" => "tool",
            r => r,
        };
        let (mut text, mut calls) = (String::new(), Vec::new());
        match &m["content"] {
            Value::String(s) => text.push_str(s),
            Value::Array(parts) => {
                for p in parts {
                    match p["type"].as_str() {
                        Some("text") => text.push_str(p["text"].as_str().unwrap_or_default()),
                        Some("toolCall") => calls.push((
                            p["name"].as_str().unwrap_or_default().to_string(),
                            p["arguments"].clone(),
                        )),
                        _ => {}
                    }
                }
            }
            _ => {}
        }
        out.push(Seen {
            role: role.to_string(),
            text,
            calls,
        });
    }
    out
}

/// `claw-transcript context KEY` before a turn is what the model receives in that turn:
/// drives the turn `text` on `key` and compares the model's request with the context
/// clawstate printed just before (plus the new user message).
pub fn assert_context_is_the_model_request(gw: &Gateway, model: &FakeModel, key: &str, text: &str) {
    gw.settle();
    let context = claw_json({
        let mut c = gw.claw("claw-transcript");
        c.args(["context", key, "--json"]);
        c
    });
    gw.chat(key, text);
    let request = model
        .request_for(text)
        .unwrap_or_else(|| panic!("the model never saw {text:?}"));
    let mut expected = seen_in_context(&context);
    expected.push(Seen {
        role: "user".into(),
        text: text.to_string(),
        calls: Vec::new(),
    });
    let got = seen_in_request(&request);
    assert_eq!(
        expected, got,
        "context of {key} (clawstate, left) vs the model's request (right)"
    );
}

/// Every regular file below `dir` with its bytes (relative paths).
pub fn snapshot(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(base: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        for e in rd.flatten() {
            let p = e.path();
            let Ok(t) = e.file_type() else { continue };
            if t.is_dir() {
                walk(base, &p, out);
            } else if t.is_file() {
                let rel = p
                    .strip_prefix(base)
                    .unwrap_or(&p)
                    .to_string_lossy()
                    .into_owned();
                out.insert(rel, std::fs::read(&p).unwrap_or_default());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// The names that differ between two snapshots (added, removed or changed).
pub fn changed(a: &BTreeMap<String, Vec<u8>>, b: &BTreeMap<String, Vec<u8>>) -> Vec<String> {
    let names: std::collections::BTreeSet<&String> = a
        .keys()
        .chain(b.keys())
        .filter(|k| a.get(*k) != b.get(*k))
        .collect();
    names.into_iter().cloned().collect()
}
