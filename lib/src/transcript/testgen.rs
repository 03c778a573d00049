//! Seeded generators of awkward transcripts for the tests that compare the fast readers
//! (partial parses, projected tails, parallel checks) with the plain ones.

use serde_json::{json, Value};

/// A small deterministic PRNG (xorshift64*).
pub struct Rng(u64);

impl Rng {
    /// Seeded.
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    /// The next 64 random bits.
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in `0..n`.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    /// True with probability `p` percent.
    pub fn chance(&mut self, p: usize) -> bool {
        self.below(100) < p
    }

    /// One of `items`.
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

const TEXTS: [&str; 14] = [
    "hello",
    "NO_REPLY",
    "no_reply.",
    "HEARTBEAT_OK",
    "**HEARTBEAT_OK**",
    "Audio reply",
    "  ",
    "",
    "[Telegram Bob 2026-01-01 10:00] hi there",
    "done [[reply_to_current]] ok",
    "line\n[message_id: 42]\nmore",
    "[Inter-session message] sourceSession=agent:ops:main sourceTool=subagent_announce\nresult",
    "hi\n<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>\nsecret\n<<<END_OPENCLAW_INTERNAL_CONTEXT>>>\nthere",
    "ANNOUNCE_SKIP REPLY_SKIP",
];

fn text(r: &mut Rng) -> String {
    match r.below(40) {
        0 => "x".repeat(7990 + r.below(30)),
        1..=4 => format!("{} é😀 {}", r.pick(&TEXTS), r.below(3)),
        _ => r.pick(&TEXTS).to_string(),
    }
}

/// One history message (what `record_to_message` returns) of a random awkward kind.
pub fn message(r: &mut Rng, i: usize) -> Value {
    let ts = 1_700_000_000_000u64 + i as u64 * 1000;
    let meta = json!({"id": format!("m{i}"), "seq": i + 1, "recordTimestampMs": ts});
    let call = format!("call_{}", i / 3);
    let mut m = match r.below(24) {
        0..=3 => json!({"role": "user", "content": text(r), "timestamp": ts}),
        4 => {
            json!({"role": "user", "content": [{"type": "text", "text": text(r)}, {"type": "image", "data": "QUJD"}]})
        }
        5 => json!({"role": "user", "content": "[OpenClaw heartbeat poll]"}),
        6 => {
            json!({"role": "user", "content": text(r), "provenance": {"kind": "inter_session", "sourceTool": *r.pick(&["sessions_send", "subagent_announce", "other"]), "sourceSessionKey": "agent:ops:main"}})
        }
        7..=9 => {
            json!({"role": "assistant", "content": [{"type": "text", "text": text(r)}], "usage": {"input": 3, "output": 4, "junk": "x", "cost": {"total": 1, "bad": "y"}}, "details": {"a": 1}})
        }
        10 => {
            json!({"role": "assistant", "content": [{"type": "toolCall", "id": call, "name": "message", "arguments": {"action": "send", "message": text(r)}}]})
        }
        11 => {
            json!({"role": "toolResult", "toolCallId": call, "toolName": "message", "content": [{"type": "text", "text": *r.pick(&["{\"ok\":true}", "{\"ok\":false}", "{\"dryRun\":true}", "sent"])}]})
        }
        12 => {
            json!({"role": "assistant", "provider": "openclaw", "model": *r.pick(&["delivery-mirror", "acp-runtime", "gateway-injected"]), "content": [{"type": "text", "text": text(r)}], "openclawDeliveryMirror": {"kind": "channel-final"}})
        }
        13 => {
            json!({"role": "assistant", "content": [{"type": "audio", "source": {"type": "base64", "data": "AAAA"}}, {"type": "text", "text": "Audio reply"}], "openclawTtsSupplement": {"spokenText": text(r)}})
        }
        14 => {
            json!({"role": "assistant", "stopReason": "error", "content": if r.chance(50) { json!([]) } else { json!([{"type": "text", "text": text(r)}]) }, "errorMessage": "boom"})
        }
        15 => {
            json!({"role": "assistant", "phase": *r.pick(&["commentary", "final_answer"]), "content": [{"type": "text", "text": text(r), "textSignature": "{\"v\":1,\"phase\":\"commentary\"}"}, {"type": "toolCall", "id": call, "name": "read", "arguments": {}}]})
        }
        16 => {
            json!({"role": "toolResult", "toolCallId": call, "toolName": "canvas", "content": [{"type": "text", "text": "{\"kind\":\"canvas\",\"view\":{\"url\":\"https://x/v\",\"id\":\"v1\"},\"presentation\":{\"title\":\"T\",\"preferredHeight\":300}}"}]})
        }
        17 => {
            json!({"role": "assistant", "content": [{"type": "toolCall", "id": call, "name": "read", "arguments": {"path": "/x"}}], "provenance": {"kind": "inter_session", "sourceTool": "sessions_send"}})
        }
        18 => {
            json!({"role": "system", "content": [{"type": "text", "text": "Compaction"}], "__openclaw": {"kind": "compaction"}})
        }
        19 => json!({"role": "custom", "customType": "openclaw.runtime-context", "content": "ctx"}),
        20 => json!({"role": "assistant", "content": text(r), "display": r.chance(50)}),
        21 => {
            json!({"role": "toolResult", "toolCallId": call, "content": text(r), "isError": r.chance(30)})
        }
        22 => json!(text(r)),
        _ => {
            json!({"role": "assistant", "content": [{"type": "thinking", "thinking": text(r), "thinkingSignature": "s"}, {"type": "text", "text": text(r)}], "__openclaw": {"mirrorIdentity": "mi"}})
        }
    };
    if let Some(o) = m.as_object_mut() {
        let mut meta = meta;
        if let Some(Value::Object(old)) = o.get("__openclaw") {
            for (k, v) in old {
                meta[k] = v.clone();
            }
        }
        o.insert("__openclaw".into(), meta);
    }
    m
}

/// `n` random messages.
pub fn messages(seed: u64, n: usize) -> Vec<Value> {
    let mut r = Rng::new(seed);
    (0..n).map(|i| message(&mut r, i)).collect()
}

/// A transcript text: a header and `n` rows (messages, compactions, labels, leaf controls,
/// side appends, branches, opaque rows), with awkward lines mixed in (blank, CRLF, invalid
/// JSON, non-objects, invalid UTF-8, duplicate keys, escapes, oversized lines, the raw-value
/// token), and sometimes a torn last line.
pub fn transcript(seed: u64, n: usize) -> Vec<u8> {
    let mut r = Rng::new(seed);
    let mut out: Vec<u8> = Vec::new();
    let line = |out: &mut Vec<u8>, s: &str, r: &mut Rng| {
        out.extend_from_slice(s.as_bytes());
        out.extend_from_slice(if r.chance(5) { b"\r\n" } else { b"\n" });
    };
    if !r.chance(5) {
        line(
            &mut out,
            r#"{"type":"session","version":3,"id":"sess","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#,
            &mut r,
        );
    }
    let mut ids: Vec<String> = Vec::new();
    let ts = "2026-01-01T00:00:01.000Z";
    let some_id = |r: &mut Rng, ids: &[String]| {
        if ids.is_empty() {
            "none".to_string()
        } else {
            r.pick(ids).clone()
        }
    };
    for i in 0..n {
        let id = format!("e{i:04}");
        let parent = match (ids.last(), r.below(20)) {
            (None, _) => json!(null),
            (Some(_), 0) => json!(some_id(&mut r, &ids)),
            (Some(_), 1) => json!("missing"),
            (Some(p), _) => json!(p),
        };
        let rec = match r.below(40) {
            0 => {
                line(&mut out, "", &mut r);
                continue;
            }
            1 => {
                line(&mut out, "  \t", &mut r);
                continue;
            }
            2 => {
                line(&mut out, "{\"type\":\"message\",\"id\":", &mut r);
                continue;
            }
            3 => {
                let s = *r.pick(&[
                    "[1,2]",
                    "\"str\"",
                    "7",
                    "null",
                    "{\"a\":1e400}",
                    "{\"a\":\"\\ud800\"}",
                ]);
                line(&mut out, s, &mut r);
                continue;
            }
            4 => {
                out.extend_from_slice(b"{\"type\":\"message\",\"id\":\"bad\xff\",\"parentId\":null,\"message\":{\"role\":\"user\",\"content\":\"x\xfe\"}}\n");
                continue;
            }
            5 => {
                let s = format!("{{\"type\":\"message\",\"id\":\"{id}\",\"parentId\":{parent},\"id\":\"{id}d\",\"message\":{{\"role\":\"user\",\"content\":\"dup\"}},\"message\":{{\"role\":\"assistant\",\"content\":[{{\"type\":\"text\",\"text\":\"second\"}}]}}}}");
                ids.push(format!("{id}d"));
                line(&mut out, &s, &mut r);
                continue;
            }
            6 => {
                let s = format!("{{\"$serde_json::private::RawValue\":\"{{\\\"type\\\":\\\"message\\\",\\\"id\\\":\\\"{id}\\\",\\\"parentId\\\":{},\\\"message\\\":{{\\\"role\\\":\\\"user\\\",\\\"content\\\":\\\"raw\\\"}}}}\"}}", parent.to_string().replace('"', "\\\""));
                line(&mut out, &s, &mut r);
                continue;
            }
            7 => {
                json!({"type": "leaf", "id": format!("l{i}"), "parentId": parent, "timestamp": ts, "targetId": some_id(&mut r, &ids)})
            }
            8 => {
                json!({"type": "compaction", "id": id, "parentId": parent, "timestamp": ts, "summary": "s", "firstKeptEntryId": some_id(&mut r, &ids), "tokensBefore": 10})
            }
            9 => {
                json!({"type": "label", "id": id, "parentId": parent, "timestamp": ts, "targetId": "e0001", "label": "x"})
            }
            10 => json!({"type": "custom_thing", "id": id, "data": 1}),
            11 => {
                json!({"type": "message", "id": id, "parentId": parent, "timestamp": ts, "appendMode": "side", "message": message(&mut r, i)})
            }
            12 => {
                json!({"type": "message", "id": id, "timestamp": ts, "message": message(&mut r, i)})
            }
            13 if seed.is_multiple_of(3) => {
                json!({"type": "message", "id": id, "parentId": parent, "timestamp": ts, "message": {"role": "user", "content": "x".repeat(270_000)}})
            }
            14 => {
                json!({"type": "message", "id": id, "parentId": parent, "timestamp": 1_700_000_000_000u64, "message": {"role": "assistant", "content": [{"type": "text", "text": "esc \"q\" \\ \u{1F600} \t"}], "idempotencyKey": "k1"}})
            }
            _ => {
                json!({"type": "message", "id": id, "parentId": parent, "timestamp": ts, "message": message(&mut r, i)})
            }
        };
        if let Some(id) = rec.get("id").and_then(Value::as_str) {
            ids.push(id.to_string());
        }
        let mut s = rec.to_string();
        if r.chance(3) {
            s = s.replace("\"hello\"", "\"h\\u0065llo\"");
        }
        line(&mut out, &s, &mut r);
    }
    if r.chance(30) {
        out.extend_from_slice(b"{\"type\":\"message\",\"id\":\"torn\",\"parentId\":");
    }
    out
}
