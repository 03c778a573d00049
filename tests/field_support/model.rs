//! A fake OpenAI-compatible model server on 127.0.0.1 for the field suite: `GET /v1/models`
//! and `POST /v1/chat/completions` (SSE when the request says `stream: true`, one JSON
//! document otherwise), answering from a fixed script chosen by the last message, so every
//! run gets the same replies whatever the gateway sends around them.
//!
//! The script, by marker in the last user message:
//! - `[[tool:NAME]]`: one call of tool NAME with `{}`; the follow-up request (its last message
//!   is the tool result) is answered with [`AFTER_TOOL`].
//! - `[[noreply]]`: `NO_REPLY`, the gateway's silent reply.
//! - `[[error]]`: HTTP 400 with an OpenAI error body (the gateway records a failed turn).
//! - `[[hold]]`: the reply waits until [`FakeModel::release`] (or 60 s), so the gateway
//!   stays mid-turn holding its transcript lock; [`FakeModel::wait_for_hold`] says when.
//! - anything else: `ack: <text>` (the text without the gateway's `[date]` envelope).
//!
//! A request without tools (the gateway's compaction summary) gets [`SUMMARY`].
//! Every chat request body is kept, in arrival order, for the context checks.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// The model id the gateway is configured with (`fake/fake-model`).
pub const MODEL_ID: &str = "fake-model";
/// The reply after a tool result.
pub const AFTER_TOOL: &str = "tool result received";
/// The reply to a summary request (no tools offered).
pub const SUMMARY: &str = "Scripted summary: the user said hello and asked for a tool.";
/// How long a held reply waits at most for [`FakeModel::release`].
const HOLD_LIMIT: Duration = Duration::from_secs(60);
/// Socket timeouts: a stuck peer never blocks a handler thread for long.
const IO_TIMEOUT: Duration = Duration::from_secs(30);

#[derive(Default)]
struct State {
    stopping: bool,
    released: bool,
    holding: usize,
    requests: Vec<Value>,
}

#[derive(Default)]
struct Shared {
    state: Mutex<State>,
    changed: Condvar,
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The running fake model; stops (and releases every hold) when dropped.
pub struct FakeModel {
    port: u16,
    shared: Arc<Shared>,
    accept: Option<JoinHandle<()>>,
}

impl FakeModel {
    /// Starts the server on a free 127.0.0.1 port.
    pub fn start() -> FakeModel {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the fake model");
        let port = listener.local_addr().expect("local addr").port();
        let shared = Arc::new(Shared::default());
        let s = Arc::clone(&shared);
        let accept = std::thread::spawn(move || {
            for conn in listener.incoming() {
                if s.lock().stopping {
                    break;
                }
                let Ok(conn) = conn else { continue };
                let s = Arc::clone(&s);
                std::thread::spawn(move || {
                    let _ = serve(conn, &s);
                });
            }
        });
        FakeModel {
            port,
            shared,
            accept: Some(accept),
        }
    }

    /// The base URL the gateway's provider config points at.
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    /// Every chat request body so far.
    pub fn requests(&self) -> Vec<Value> {
        self.shared.lock().requests.clone()
    }

    /// The last chat request whose last message is a user message containing `text`.
    pub fn request_for(&self, text: &str) -> Option<Value> {
        self.requests()
            .into_iter()
            .rev()
            .find(|r| last_message(r).is_some_and(|(role, t)| role == "user" && t.contains(text)))
    }

    /// Waits (at most `limit`) until a `[[hold]]` request is waiting; false on timeout.
    pub fn wait_for_hold(&self, limit: Duration) -> bool {
        let deadline = Instant::now() + limit;
        let mut st = self.shared.lock();
        while st.holding == 0 {
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            st = self
                .shared
                .changed
                .wait_timeout(st, deadline - now)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        true
    }

    /// Lets every held reply (and every later `[[hold]]`) through.
    pub fn release(&self) {
        self.shared.lock().released = true;
        self.shared.changed.notify_all();
    }
}

impl Drop for FakeModel {
    fn drop(&mut self) {
        {
            let mut st = self.shared.lock();
            st.stopping = true;
            st.released = true;
        }
        self.shared.changed.notify_all();
        // Wake the accept loop so it sees `stopping`.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
        if let Some(h) = self.accept.take() {
            let _ = h.join();
        }
    }
}

/// The role and text of a request's last message.
pub fn last_message(request: &Value) -> Option<(String, String)> {
    let m = request.get("messages")?.as_array()?.last()?;
    let role = m.get("role")?.as_str()?.to_string();
    Some((role, content_text(m.get("content"))))
}

/// The text of an OpenAI message content (a string or an array of text parts).
pub fn content_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join(""),
        _ => String::new(),
    }
}

/// The user text without the gateway's `[Tue 2026-12-01 14:34 UTC] ` envelope.
pub fn strip_envelope(text: &str) -> &str {
    if let Some(rest) = text.strip_prefix('[') {
        if let Some((_, after)) = rest.split_once("] ") {
            return after;
        }
    }
    text
}

enum Reply {
    Text(String),
    Tool(String),
    Error,
}

fn script(request: &Value, shared: &Shared) -> Reply {
    let tools = request
        .get("tools")
        .and_then(Value::as_array)
        .is_some_and(|t| !t.is_empty());
    let Some((role, text)) = last_message(request) else {
        return Reply::Text("ack".into());
    };
    if role == "tool" {
        return Reply::Text(AFTER_TOOL.into());
    }
    if !tools {
        return Reply::Text(SUMMARY.into());
    }
    if let Some(rest) = text.split("[[tool:").nth(1) {
        if let Some((name, _)) = rest.split_once("]]") {
            return Reply::Tool(name.to_string());
        }
    }
    if text.contains("[[noreply]]") {
        return Reply::Text("NO_REPLY".into());
    }
    if text.contains("[[error]]") {
        return Reply::Error;
    }
    if text.contains("[[hold]]") {
        let deadline = Instant::now() + HOLD_LIMIT;
        let mut st = shared.lock();
        st.holding += 1;
        shared.changed.notify_all();
        while !st.released && Instant::now() < deadline {
            let left = deadline.saturating_duration_since(Instant::now());
            st = shared
                .changed
                .wait_timeout(st, left)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        st.holding -= 1;
    }
    Reply::Text(format!("ack: {}", strip_envelope(&text)))
}

fn serve(conn: TcpStream, shared: &Shared) -> std::io::Result<()> {
    conn.set_read_timeout(Some(IO_TIMEOUT))?;
    conn.set_write_timeout(Some(IO_TIMEOUT))?;
    let mut reader = BufReader::new(conn.try_clone()?);
    let mut request_line = String::new();
    reader.read_line(&mut request_line)?;
    let mut length = 0usize;
    let mut chunked = false;
    for _ in 0..200 {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 || line == "\r\n" || line == "\n" {
            break;
        }
        let lower = line.to_ascii_lowercase();
        if let Some(v) = lower.strip_prefix("content-length:") {
            length = v.trim().parse().unwrap_or(0);
        }
        if lower.starts_with("transfer-encoding:") && lower.contains("chunked") {
            chunked = true;
        }
    }
    let body = if chunked {
        read_chunked(&mut reader)?
    } else {
        let mut b = vec![0; length.min(64 << 20)];
        reader.read_exact(&mut b)?;
        b
    };
    let mut out = conn;
    let path = request_line.split_whitespace().nth(1).unwrap_or("");
    if request_line.starts_with("GET") && path.starts_with("/v1/models") {
        let doc = json!({"object": "list", "data": [{"id": MODEL_ID, "object": "model", "owned_by": "field"}]});
        return respond_json(&mut out, 200, &doc);
    }
    if !(request_line.starts_with("POST") && path.starts_with("/v1/chat/completions")) {
        return respond_json(&mut out, 404, &json!({"error": {"message": "not found"}}));
    }
    let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    shared.lock().requests.push(request.clone());
    let stream = request.get("stream").and_then(Value::as_bool) == Some(true);
    let reply = script(&request, shared);
    if let Reply::Error = reply {
        let doc =
            json!({"error": {"message": "scripted failure", "type": "invalid_request_error"}});
        return respond_json(&mut out, 400, &doc);
    }
    let usage = json!({"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13});
    if !stream {
        let message = match &reply {
            Reply::Text(t) => json!({"role": "assistant", "content": t}),
            Reply::Tool(name) => json!({"role": "assistant", "content": null, "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": name, "arguments": "{}"}}]}),
            Reply::Error => unreachable!(),
        };
        let finish = if matches!(reply, Reply::Tool(_)) {
            "tool_calls"
        } else {
            "stop"
        };
        let doc = json!({"id": "cmpl-field", "object": "chat.completion", "created": 1, "model": MODEL_ID,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}], "usage": usage});
        return respond_json(&mut out, 200, &doc);
    }
    out.write_all(
        b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nConnection: close\r\n\r\n",
    )?;
    let chunk = |choices: Value, usage: Option<&Value>| {
        let mut c = json!({"id": "cmpl-field", "object": "chat.completion.chunk", "created": 1, "model": MODEL_ID, "choices": choices});
        if let Some(u) = usage {
            c["usage"] = u.clone();
        }
        format!("data: {c}\n\n")
    };
    let mut events = vec![chunk(
        json!([{"index": 0, "delta": {"role": "assistant", "content": ""}}]),
        None,
    )];
    match &reply {
        Reply::Text(t) => {
            events.push(chunk(json!([{"index": 0, "delta": {"content": t}}]), None));
            events.push(chunk(
                json!([{"index": 0, "delta": {}, "finish_reason": "stop"}]),
                None,
            ));
        }
        Reply::Tool(name) => {
            events.push(chunk(json!([{"index": 0, "delta": {"tool_calls": [
                {"index": 0, "id": "call_1", "type": "function", "function": {"name": name, "arguments": "{}"}}]}}]), None));
            events.push(chunk(
                json!([{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]),
                None,
            ));
        }
        Reply::Error => unreachable!(),
    }
    events.push(chunk(json!([]), Some(&usage)));
    events.push("data: [DONE]\n\n".into());
    for e in events {
        out.write_all(e.as_bytes())?;
        out.flush()?;
    }
    out.shutdown(Shutdown::Both)
}

fn read_chunked(reader: &mut BufReader<TcpStream>) -> std::io::Result<Vec<u8>> {
    let mut body = Vec::new();
    for _ in 0..100_000 {
        let mut size = String::new();
        reader.read_line(&mut size)?;
        let n = usize::from_str_radix(size.trim().split(';').next().unwrap_or(""), 16).unwrap_or(0);
        if n == 0 || body.len() + n > 64 << 20 {
            let mut end = String::new();
            let _ = reader.read_line(&mut end);
            break;
        }
        let mut part = vec![0; n];
        reader.read_exact(&mut part)?;
        body.extend_from_slice(&part);
        let mut crlf = [0u8; 2];
        reader.read_exact(&mut crlf)?;
    }
    Ok(body)
}

fn respond_json(out: &mut TcpStream, status: u16, doc: &Value) -> std::io::Result<()> {
    let body = doc.to_string();
    let reason = match status {
        200 => "OK",
        400 => "Bad Request",
        _ => "Not Found",
    };
    write!(
        out,
        "HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )?;
    out.flush()?;
    out.shutdown(Shutdown::Both)
}
