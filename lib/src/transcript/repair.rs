//! The gateway's repair pass (`repairSessionFileIfNeeded`, `transcript.md` §1.8, all eight
//! steps), SessionManager's header recovery with its `.corrupt-<ts>-<8hex>.jsonl` copy, and
//! trimming a torn tail. These functions compute new bytes; the caller writes them
//! atomically under the write lock.

use serde_json::{json, Map, Value};

use super::entry::type_of;
use super::migrate::{
    generate_short_id, migrate_rows, normalize_loaded, serialize_like_session_manager,
};
use super::tree::SessionIndex;

use crate::js;

/// Text of an assistant turn that failed before producing content.
pub const STREAM_ERROR_FALLBACK_TEXT: &str = "[assistant turn failed before producing content]";
/// Replacement of a blank user message.
pub const BLANK_USER_FALLBACK_TEXT: &str = "(continue)";
/// Replacement of a corrupted image block.
pub const CORRUPTED_IMAGE_FALLBACK_TEXT: &str = "[image omitted: corrupted base64 payload]";

/// What the repair pass found and did.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RepairReport {
    /// Lines dropped: not JSON, or `message` rows without a usable role.
    pub dropped_lines: usize,
    /// Line numbers of the dropped lines.
    pub dropped_line_numbers: Vec<usize>,
    /// Empty error assistants given the fallback text.
    pub rewritten_assistant_messages: usize,
    /// Blank user messages rewritten.
    pub rewritten_user_messages: usize,
    /// Corrupted image blocks replaced.
    pub removed_corrupted_image_blocks: usize,
    /// Synthetic tool results inserted.
    pub inserted_tool_results: usize,
    /// Why nothing was written, when the gateway would skip (`invalid session header`, …).
    pub skipped_reason: Option<String>,
}

impl RepairReport {
    /// Whether anything changed.
    pub fn changed(&self) -> bool {
        self.dropped_lines > 0
            || self.rewritten_assistant_messages > 0
            || self.rewritten_user_messages > 0
            || self.removed_corrupted_image_blocks > 0
            || self.inserted_tool_results > 0
    }

    /// The gateway's one-line summary (`dropped 2 malformed line(s), …` or `no changes`).
    pub fn summary(&self) -> String {
        let mut parts = Vec::new();
        if self.dropped_lines > 0 {
            parts.push(format!("dropped {} malformed line(s)", self.dropped_lines));
        }
        if self.rewritten_assistant_messages > 0 {
            parts.push(format!(
                "rewrote {} assistant message(s)",
                self.rewritten_assistant_messages
            ));
        }
        if self.rewritten_user_messages > 0 {
            parts.push(format!(
                "rewrote {} user message(s)",
                self.rewritten_user_messages
            ));
        }
        if self.removed_corrupted_image_blocks > 0 {
            parts.push(format!(
                "removed {} corrupted image block(s)",
                self.removed_corrupted_image_blocks
            ));
        }
        if self.inserted_tool_results > 0 {
            parts.push(format!(
                "inserted {} missing tool result(s)",
                self.inserted_tool_results
            ));
        }
        if parts.is_empty() {
            "no changes".into()
        } else {
            parts.join(", ")
        }
    }
}

fn is_message_obj(v: &Value) -> bool {
    type_of(v) == Some("message")
        && v.get("message")
            .is_some_and(|m| m.is_object() || m.is_array())
}

fn structurally_invalid(v: &Value) -> bool {
    if !(v.is_object() || v.is_array()) || type_of(v) != Some("message") {
        return false;
    }
    let Some(m) = v.get("message").filter(|m| m.is_object() || m.is_array()) else {
        return true;
    };
    match m.get("role") {
        Some(Value::String(r)) => js::trim(r).is_empty(),
        _ => true,
    }
}

fn with_message(v: &Value, f: impl FnOnce(&mut Map<String, Value>)) -> Value {
    let mut out = v.clone();
    if let Some(m) = out.get_mut("message").and_then(Value::as_object_mut) {
        f(m);
    }
    out
}

fn is_image_mime(v: Option<&Value>) -> Option<&str> {
    let s = v?.as_str()?;
    js::trim(s)
        .to_lowercase()
        .starts_with("image/")
        .then_some(s)
}

fn b64_val(c: u8) -> Option<u8> {
    match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    }
}

/// `canonicalizeBase64`: whitespace removed, alphabet and padding checked.
fn canonical_base64(s: &str) -> Option<String> {
    let mut out = String::with_capacity(s.len());
    let mut padding = 0;
    let mut saw_padding = false;
    for c in s.chars() {
        let code = c as u32;
        if code <= 32 {
            continue;
        }
        if c == '=' {
            padding += 1;
            if padding > 2 {
                return None;
            }
            saw_padding = true;
            out.push('=');
            continue;
        }
        if saw_padding || !c.is_ascii() || b64_val(c as u8).is_none() {
            return None;
        }
        out.push(c);
    }
    if out.is_empty() {
        return None;
    }
    let rem = out.len() % 4;
    if rem != 0 {
        if saw_padding || rem == 1 {
            return None;
        }
        out.push_str(&"=".repeat(4 - rem));
    }
    Some(out)
}

fn decode_prefix(b64: &str) -> Vec<u8> {
    let mut out = Vec::new();
    let mut acc = 0u32;
    let mut bits = 0;
    for &c in b64.as_bytes() {
        let Some(v) = b64_val(c) else { break };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    out
}

fn sniff_image(b: &[u8]) -> bool {
    let starts = |p: &[u8]| b.len() >= p.len() && &b[..p.len()] == p;
    if starts(&[137, 80, 78, 71, 13, 10, 26, 10])
        || starts(&[255, 216, 255])
        || starts(b"GIF87a")
        || starts(b"GIF89a")
        || starts(b"BM")
    {
        return true;
    }
    if b.len() >= 12 && &b[..4] == b"RIFF" && &b[8..12] == b"WEBP" {
        return true;
    }
    if b.len() >= 12 && &b[4..8] == b"ftyp" {
        let mut brands = vec![&b[8..12]];
        let mut off = 16;
        while off + 4 <= b.len() {
            brands.push(&b[off..off + 4]);
            off += 4;
        }
        let known: [&[u8]; 10] = [
            b"heic", b"heix", b"hevc", b"hevx", b"heis", b"heim", b"hevm", b"hevs", b"mif1",
            b"msf1",
        ];
        return brands.iter().any(|br| known.contains(br));
    }
    false
}

fn corrupted_image(block: &Value) -> bool {
    if !block.is_object() || block.get("type").and_then(Value::as_str) != Some("image") {
        return false;
    }
    let Some(data) = block.get("data").and_then(Value::as_str) else {
        return false;
    };
    let mime = ["mimeType", "mediaType", "media_type"]
        .iter()
        .find_map(|k| is_image_mime(block.get(*k)));
    if mime.is_none() {
        return false;
    }
    if !data.is_ascii() {
        return true;
    }
    match canonical_base64(data) {
        None => true,
        Some(c) => !sniff_image(&decode_prefix(&c[..c.len().min(128)])),
    }
}

/// `repairSessionLines`: steps 1–5 over the raw lines.
fn repair_lines(lines: &[(usize, String)], report: &mut RepairReport) -> Vec<Value> {
    let mut out = Vec::new();
    for (number, line) in lines {
        if js::trim(line).is_empty() {
            continue;
        }
        let Ok(entry) = crate::js::jsjson::parse_value(line) else {
            report.dropped_lines += 1;
            report.dropped_line_numbers.push(*number);
            continue;
        };
        if structurally_invalid(&entry) {
            report.dropped_lines += 1;
            report.dropped_line_numbers.push(*number);
            continue;
        }
        let msg = entry.get("message");
        if type_of(&entry) == Some("message")
            && msg.and_then(|m| m.get("role")).and_then(Value::as_str) == Some("assistant")
            && msg
                .and_then(|m| m.get("content"))
                .and_then(Value::as_array)
                .is_some_and(Vec::is_empty)
            && msg
                .and_then(|m| m.get("stopReason"))
                .and_then(Value::as_str)
                == Some("error")
        {
            out.push(with_message(&entry, |m| {
                m.insert(
                    "content".into(),
                    json!([{"type": "text", "text": STREAM_ERROR_FALLBACK_TEXT}]),
                );
            }));
            report.rewritten_assistant_messages += 1;
            continue;
        }
        let mut current = entry;
        if is_message_obj(&current) {
            if let Some(Value::Array(blocks)) =
                current.get("message").and_then(|m| m.get("content"))
            {
                let n = blocks.iter().filter(|b| corrupted_image(b)).count();
                if n > 0 {
                    let next: Vec<Value> = blocks
                        .iter()
                        .map(|b| {
                            if corrupted_image(b) {
                                json!({"type": "text", "text": CORRUPTED_IMAGE_FALLBACK_TEXT})
                            } else {
                                b.clone()
                            }
                        })
                        .collect();
                    current = with_message(&current, |m| {
                        m.insert("content".into(), Value::Array(next));
                    });
                    report.removed_corrupted_image_blocks += n;
                }
            }
        }
        if is_message_obj(&current)
            && current
                .get("message")
                .and_then(|m| m.get("role"))
                .and_then(Value::as_str)
                == Some("user")
        {
            let content = current
                .get("message")
                .and_then(|m| m.get("content"))
                .cloned();
            let rewrite: Option<Value> = match content {
                Some(Value::String(s)) if js::trim(&s).is_empty() => {
                    Some(json!(BLANK_USER_FALLBACK_TEXT))
                }
                Some(Value::Array(blocks)) => {
                    let kept: Vec<Value> = blocks
                        .iter()
                        .filter(|b| {
                            !(b.is_object()
                                && b.get("type").and_then(Value::as_str) == Some("text")
                                && b.get("text")
                                    .and_then(Value::as_str)
                                    .is_some_and(|t| js::trim(t).is_empty()))
                        })
                        .cloned()
                        .collect();
                    if kept.is_empty() {
                        Some(json!([{"type": "text", "text": BLANK_USER_FALLBACK_TEXT}]))
                    } else if kept.len() != blocks.len() {
                        Some(Value::Array(kept))
                    } else {
                        None
                    }
                }
                _ => None,
            };
            if let Some(c) = rewrite {
                current = with_message(&current, |m| {
                    m.insert("content".into(), c);
                });
                report.rewritten_user_messages += 1;
            }
        }
        out.push(current);
    }
    out
}

/// The tool-result id of a message object: the first non-blank of the id keys the
/// gateway accepts, trimmed (`toolCallId`, `toolUseId`, `tool_call_id`, `tool_use_id`,
/// `callId`, `call_id`).
pub(crate) fn result_id_in(m: &Map<String, Value>) -> Option<&str> {
    [
        "toolCallId",
        "toolUseId",
        "tool_call_id",
        "tool_use_id",
        "callId",
        "call_id",
    ]
    .iter()
    .filter_map(|k| m.get(*k).and_then(Value::as_str))
    .map(js::trim)
    .find(|s| !s.is_empty())
}

fn tool_result_id(m: &Value) -> Option<String> {
    m.as_object().and_then(result_id_in).map(String::from)
}

/// `extractToolCallsFromAssistant`: (id, name) of `toolCall`/`toolUse`/`functionCall` blocks.
pub fn tool_calls(m: &Value) -> Vec<(String, Option<String>)> {
    m.as_object().map(tool_calls_in).unwrap_or_default()
}

/// [`tool_calls`] of a message already known to be an object.
pub fn tool_calls_in(m: &serde_json::Map<String, Value>) -> Vec<(String, Option<String>)> {
    let Some(Value::Array(blocks)) = m.get("content") else {
        return Vec::new();
    };
    blocks
        .iter()
        .filter(|b| b.is_object())
        .filter_map(|b| {
            let id = b
                .get("id")
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())?;
            let t = b.get("type").and_then(Value::as_str)?;
            matches!(t, "toolCall" | "toolUse" | "functionCall").then(|| {
                (
                    id.to_string(),
                    b.get("name").and_then(Value::as_str).map(String::from),
                )
            })
        })
        .collect()
}

/// The tool-result ids persisted anywhere in `entries`.
pub fn persisted_tool_result_ids(entries: &[Value]) -> std::collections::HashSet<String> {
    entries
        .iter()
        .filter(|e| is_message_obj(e))
        .filter_map(|e| {
            let m = &e["message"];
            (m.get("role").and_then(Value::as_str) == Some("toolResult"))
                .then(|| tool_result_id(m))
                .flatten()
        })
        .collect()
}

fn trimmed(v: Option<&Value>) -> &str {
    v.and_then(Value::as_str).map(js::trim).unwrap_or("")
}

fn synthetic(
    parent: &Value,
    call_id: &str,
    name: Option<&str>,
    now_ms: i64,
    uuid: &mut dyn FnMut() -> String,
) -> Value {
    let mut e = Map::new();
    e.insert("type".into(), json!("message"));
    e.insert("id".into(), json!(format!("repair-{}", uuid())));
    if let Some(p) = parent.get("id").and_then(Value::as_str) {
        e.insert("parentId".into(), json!(p));
    }
    e.insert("timestamp".into(), json!(js::to_iso_string(now_ms)));
    e.insert(
        "message".into(),
        json!({
            "role": "toolResult",
            "toolCallId": call_id,
            "toolName": name.unwrap_or("unknown"),
            "content": [{"type": "text", "text": "aborted"}],
            "details": {"openclawSyntheticMissingToolResult": true},
            "isError": true,
            "timestamp": now_ms,
        }),
    );
    Value::Object(e)
}

/// Step 7: synthetic `aborted` results for unanswered tool calls of OpenAI code-mode
/// assistants, and for `message` tool calls of Responses assistants followed by a
/// delivery mirror.
fn insert_missing_tool_results(
    entries: Vec<Value>,
    now_ms: i64,
    uuid: &mut dyn FnMut() -> String,
    report: &mut RepairReport,
) -> Vec<Value> {
    let mut ids = persisted_tool_result_ids(&entries);
    let mut out = Vec::with_capacity(entries.len());
    for e in &entries {
        out.push(e.clone());
        if !is_message_obj(e) {
            continue;
        }
        let m = &e["message"];
        let stop = m.get("stopReason").and_then(Value::as_str);
        let candidate = m.get("role").and_then(Value::as_str) == Some("assistant")
            && m.get("api").and_then(Value::as_str) == Some("openai-chatgpt-responses")
            && m.get("provider").and_then(Value::as_str) == Some("openai")
            && stop != Some("error")
            && stop != Some("aborted");
        if !candidate {
            continue;
        }
        for (id, name) in tool_calls(m) {
            if ids.contains(&id) {
                continue;
            }
            out.push(synthetic(e, &id, name.as_deref(), now_ms, uuid));
            ids.insert(id);
            report.inserted_tool_results += 1;
        }
    }
    let entries = out;
    let mut out = Vec::with_capacity(entries.len());
    for (i, e) in entries.iter().enumerate() {
        out.push(e.clone());
        if !is_message_obj(e) {
            continue;
        }
        let m = &e["message"];
        let stop = m.get("stopReason").and_then(Value::as_str);
        let api = trimmed(m.get("api"));
        let candidate = m.get("role").and_then(Value::as_str) == Some("assistant")
            && matches!(
                api,
                "openai-responses" | "azure-openai-responses" | "openai-codex-responses"
            )
            && stop != Some("error")
            && stop != Some("aborted");
        if !candidate {
            continue;
        }
        let next = entries[i + 1..].iter().find(|x| {
            x.is_object()
                && type_of(x) == Some("message")
                && x.get("message").is_some_and(|m| m.is_object())
        });
        let mirror = next.is_some_and(|n| {
            let nm = &n["message"];
            nm.get("role").and_then(Value::as_str) == Some("assistant")
                && trimmed(nm.get("provider")) == "openclaw"
                && matches!(
                    trimmed(nm.get("model")),
                    "delivery-mirror" | "gateway-injected"
                )
        });
        if !mirror {
            continue;
        }
        for (id, name) in tool_calls(m) {
            if js::trim(name.as_deref().unwrap_or("")).to_lowercase() != "message"
                || ids.contains(&id)
            {
                continue;
            }
            out.push(synthetic(e, &id, name.as_deref(), now_ms, uuid));
            ids.insert(id);
            report.inserted_tool_results += 1;
        }
    }
    out
}

/// The result of the repair pass over one file's bytes.
#[derive(Debug, Clone)]
pub struct RepairOutcome {
    /// The new file content, when anything changed.
    pub bytes: Option<Vec<u8>>,
    /// What was found.
    pub report: RepairReport,
}

/// The gateway's repair pass over file content. `uuid` draws the `repair-<uuid>` ids.
pub fn repair_content(
    content: &[u8],
    now_ms: i64,
    uuid: &mut dyn FnMut() -> String,
) -> RepairOutcome {
    let text = String::from_utf8_lossy(content);
    let lines: Vec<(usize, String)> = text
        .split('\n')
        .enumerate()
        .map(|(i, l)| (i + 1, l.strip_suffix('\r').unwrap_or(l).to_string()))
        .collect();
    let mut report = RepairReport::default();
    let entries = repair_lines(&lines, &mut report);
    if entries.is_empty() {
        report.skipped_reason = Some("empty session file".into());
        return RepairOutcome {
            bytes: None,
            report,
        };
    }
    let first = &entries[0];
    if !(type_of(first) == Some("session")
        && first
            .get("id")
            .and_then(Value::as_str)
            .is_some_and(|s| !s.is_empty()))
    {
        report.skipped_reason = Some("invalid session header".into());
        return RepairOutcome {
            bytes: None,
            report,
        };
    }
    let entries = insert_missing_tool_results(entries, now_ms, uuid, &mut report);
    if !report.changed() {
        return RepairOutcome {
            bytes: None,
            report,
        };
    }
    let mut out = Vec::new();
    for (i, e) in entries.iter().enumerate() {
        if i > 0 {
            out.push(b'\n');
        }
        out.extend_from_slice(crate::js::jsjson::to_string_compact(e).as_bytes());
    }
    out.push(b'\n');
    RepairOutcome {
        bytes: Some(out),
        report,
    }
}

/// SessionManager's recovery of a file whose first row is not a readable header.
#[derive(Debug, Clone)]
pub struct HeaderRecovery {
    /// The rewritten content (header first).
    pub bytes: Vec<u8>,
    /// Whether the header was found later in the file (else synthesised).
    pub header_found: bool,
    /// The corrupt-copy file name suffix: `.corrupt-<ts>-<8hex>.jsonl`.
    pub backup_suffix: String,
    /// What migrating the recovered rows to the current version changed.
    pub migration: super::migrate::MigrationReport,
}

/// Recovers a header when the first parsed row is not one: the first `session` row
/// anywhere, or a new header (`version:3`, `session_id`, now, `cwd`). `None` when the
/// header is fine or the file is blank.
pub fn recover_header(
    content: &[u8],
    session_id: &str,
    cwd: &str,
    now_ms: i64,
) -> Option<HeaderRecovery> {
    let t = super::reader::parse_bytes(content);
    if js::trim(&String::from_utf8_lossy(content)).is_empty() {
        return None;
    }
    if t.rows
        .first()
        .is_some_and(|r| super::entry::is_header(&r.value))
    {
        return None;
    }
    let rows: Vec<Value> = t.rows.into_iter().map(|r| r.value).collect();
    let found = rows
        .iter()
        .find(|v| type_of(v) == Some("session") && v.get("id").is_some_and(Value::is_string))
        .cloned();
    let header_found = found.is_some();
    let header = found.unwrap_or_else(|| {
        json!({"type": "session", "version": 3, "id": session_id, "timestamp": js::to_iso_string(now_ms), "cwd": cwd})
    });
    let mut recovered = vec![header];
    recovered.extend(rows.into_iter().filter(|v| type_of(v) != Some("session")));
    for r in recovered.iter_mut() {
        normalize_loaded(r);
    }
    let migration = migrate_rows(&mut recovered, &mut |taken| generate_short_id(taken));
    let index = SessionIndex::build(recovered);
    let bytes = serialize_like_session_manager(&index, now_ms);
    let hex = &uuid::Uuid::new_v4().simple().to_string()[..8];
    let ts = js::to_iso_string(now_ms).replace([':', '.'], "-");
    Some(HeaderRecovery {
        bytes,
        header_found,
        backup_suffix: format!(".corrupt-{ts}-{hex}.jsonl"),
        migration,
    })
}

/// The byte length to keep when the file ends in a torn line (everything up to and
/// including the last `\n`), or `None` when the last line is complete or parses.
pub fn torn_tail_keep_len(content: &[u8]) -> Option<usize> {
    if content.is_empty() || content.last() == Some(&b'\n') {
        return None;
    }
    let start = memchr::memrchr(b'\n', content).map_or(0, |i| i + 1);
    let tail = String::from_utf8_lossy(&content[start..]);
    if js::trim(&tail).is_empty()
        || crate::js::jsjson::parse_value(tail.trim_end_matches('\r')).is_ok()
    {
        return None;
    }
    Some(start)
}

/// Whether the repair pass would drop or rewrite this one parsed row (steps 2–5: a message
/// without a usable role, an empty error assistant, a corrupted image, a blank user message).
/// Cross-row steps are [`missing_tool_result_count`]'s.
pub fn row_needs_repair(entry: &Value) -> bool {
    if structurally_invalid(entry) {
        return true;
    }
    if !is_message_obj(entry) {
        return false;
    }
    let m = &entry["message"];
    let role = m.get("role").and_then(Value::as_str);
    let content = m.get("content");
    if role == Some("assistant")
        && content.and_then(Value::as_array).is_some_and(Vec::is_empty)
        && m.get("stopReason").and_then(Value::as_str) == Some("error")
    {
        return true;
    }
    if let Some(Value::Array(blocks)) = content {
        if blocks.iter().any(corrupted_image) {
            return true;
        }
    }
    if role == Some("user") {
        return match content {
            Some(Value::String(s)) => js::trim(s).is_empty(),
            Some(Value::Array(blocks)) => {
                blocks.is_empty()
                    || blocks.iter().any(|b| {
                        b.is_object()
                            && b.get("type").and_then(Value::as_str) == Some("text")
                            && b.get("text")
                                .and_then(Value::as_str)
                                .is_some_and(|t| js::trim(t).is_empty())
                    })
            }
            _ => false,
        };
    }
    false
}

/// How many synthetic tool results the repair pass would insert (step 7) into these rows,
/// which may be slimmed to each message's role, api, provider, model, stopReason, tool-call
/// blocks and tool-result ids.
pub fn missing_tool_result_count(entries: &[Value]) -> usize {
    let mut report = RepairReport::default();
    let mut uuid = String::new;
    insert_missing_tool_results(entries.to_vec(), 0, &mut uuid, &mut report);
    report.inserted_tool_results
}

/// A random UUID v4, as `randomUUID()` draws them (for `repair-<uuid>` ids and headers).
pub fn new_uuid() -> String {
    uuid::Uuid::new_v4().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repair_pass_rewrites_and_drops() {
        let content = concat!(
            "{\"type\":\"session\",\"version\":3,\"id\":\"s\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/\"}\n",
            "{\"type\":\"message\",\"id\":\"a\",\"parentId\":null,\"timestamp\":\"x\",\"message\":{\"role\":null}}\n",
            "{\"type\":\"message\",\"id\":\"b\",\"parentId\":\"a\",\"timestamp\":\"x\",\"message\":{\"role\":\"user\",\"content\":\"  \"}}\n",
            "{\"type\":\"message\",\"id\":\"c\",\"parentId\":\"b\",\"timestamp\":\"x\",\"message\":{\"role\":\"assistant\",\"content\":[],\"stopReason\":\"error\"}}\n",
            "{\"type\":\"message\",\"id\":\"d\",\"parentId\":\"c\",\"timestamp\":\"x\",\"message\":{\"role\":\"assistant\",\"api\":\"openai-chatgpt-responses\",\"provider\":\"openai\",\"stopReason\":\"toolUse\",\"content\":[{\"type\":\"toolCall\",\"id\":\"call_1\",\"name\":\"exec\",\"arguments\":{}}]}}\n",
            "{\"torn\":"
        );
        let mut n = 0;
        let out = repair_content(content.as_bytes(), 1_767_225_600_000, &mut || {
            n += 1;
            format!("u{n}")
        });
        let r = &out.report;
        assert_eq!(r.dropped_lines, 2);
        assert_eq!(r.rewritten_user_messages, 1);
        assert_eq!(r.rewritten_assistant_messages, 1);
        assert_eq!(r.inserted_tool_results, 1);
        let text = String::from_utf8(out.bytes.unwrap()).unwrap();
        assert_eq!(text.lines().count(), 5);
        assert!(text.contains("\"id\":\"repair-u1\",\"parentId\":\"d\""));
        assert!(text.contains("(continue)"));
    }

    #[test]
    fn torn_tail_detection() {
        assert_eq!(torn_tail_keep_len(b"{}\n{\"a\""), Some(3));
        assert_eq!(torn_tail_keep_len(b"{}\n{}"), None);
        assert_eq!(torn_tail_keep_len(b"{}\n"), None);
    }
}
