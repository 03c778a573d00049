//! Rebuilding the model context from the active branch (`transcript.md` §2): the
//! compaction cut, custom and branch-summary messages, and the LLM conversion with its
//! compaction and branch-summary wrappers.

use serde_json::{json, Map, Value};
use thiserror::Error;

use super::entry::{parse_date_ms, type_of};
use crate::exit::{self, ExitCode};

/// Text put before a compaction summary in the LLM conversion.
pub const COMPACTION_SUMMARY_PREFIX: &str =
    "The conversation history before this point was compacted into the following summary:\n\n<summary>\n";
/// Text put after a compaction summary.
pub const COMPACTION_SUMMARY_SUFFIX: &str = "\n</summary>";
/// Text put before a branch summary.
pub const BRANCH_SUMMARY_PREFIX: &str =
    "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n";
/// Text put after a branch summary (no newline before the tag).
pub const BRANCH_SUMMARY_SUFFIX: &str = "</summary>";

/// A context that cannot be rebuilt (the gateway throws the same).
#[derive(Debug, Error)]
pub enum ContextError {
    /// An entry on the path has a timestamp `Date.parse` rejects.
    #[error("entry {id}: {label} must be a valid timestamp")]
    BadTimestamp {
        /// The entry id.
        id: String,
        /// Which timestamp (`custom message timestamp`, …).
        label: &'static str,
    },
    /// A `message` entry whose `message` is not an object.
    #[error("entry {id}: message is not an object")]
    BadMessage {
        /// The entry id.
        id: String,
    },
}

impl ExitCode for ContextError {
    fn exit_code(&self) -> i32 {
        exit::DATA_ERR
    }
}

/// The rebuilt context (`buildSessionContext`).
#[derive(Debug, Clone, PartialEq)]
pub struct SessionContext {
    /// The agent messages, in order (before LLM conversion).
    pub messages: Vec<Value>,
    /// The thinking level (`off` by default).
    pub thinking_level: Value,
    /// `{provider, modelId}` of the last model change or assistant message.
    pub model: Option<Value>,
}

impl SessionContext {
    /// The context as the peer's object `{messages, thinkingLevel, model}`.
    pub fn to_json(&self) -> Value {
        json!({
            "messages": self.messages,
            "thinkingLevel": self.thinking_level,
            "model": self.model.clone().unwrap_or(Value::Null),
        })
    }
}

fn id(e: &Value) -> String {
    e.get("id")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

fn required_ts(e: &Value, label: &'static str) -> Result<i64, ContextError> {
    e.get("timestamp")
        .and_then(Value::as_str)
        .filter(|s| !super::entry::js_trim(s).is_empty())
        .and_then(parse_date_ms)
        .ok_or_else(|| ContextError::BadTimestamp { id: id(e), label })
}

fn put(m: &mut Map<String, Value>, k: &str, v: Option<&Value>) {
    if let Some(v) = v {
        m.insert(k.into(), v.clone());
    }
}

fn append_message(out: &mut Vec<Value>, e: &Value) -> Result<(), ContextError> {
    match type_of(e) {
        Some("message") => match e.get("message") {
            Some(m) => out.push(m.clone()),
            None => return Err(ContextError::BadMessage { id: id(e) }),
        },
        Some("custom_message") => {
            let mut m = Map::new();
            m.insert("role".into(), json!("custom"));
            put(&mut m, "customType", e.get("customType"));
            put(&mut m, "content", e.get("content"));
            put(&mut m, "display", e.get("display"));
            put(&mut m, "details", e.get("details"));
            m.insert(
                "timestamp".into(),
                json!(required_ts(e, "custom message timestamp")?),
            );
            out.push(Value::Object(m));
        }
        Some("branch_summary") => {
            let summary = e.get("summary");
            if summary.is_some_and(super::tree::js_truthy) {
                let mut m = Map::new();
                m.insert("role".into(), json!("branchSummary"));
                put(&mut m, "summary", summary);
                put(&mut m, "fromId", e.get("fromId"));
                m.insert(
                    "timestamp".into(),
                    json!(required_ts(e, "branch summary timestamp")?),
                );
                out.push(Value::Object(m));
            }
        }
        _ => {}
    }
    Ok(())
}

/// `buildSessionContext(pathEntries)`: the messages of a root-to-leaf path.
pub fn build_context(path: &[Value]) -> Result<SessionContext, ContextError> {
    let mut thinking = json!("off");
    let mut model: Option<Value> = None;
    let mut compaction: Option<usize> = None;
    for (i, e) in path.iter().enumerate() {
        match type_of(e) {
            Some("thinking_level_change") => {
                thinking = e.get("thinkingLevel").cloned().unwrap_or(Value::Null)
            }
            Some("model_change") => {
                let mut m = Map::new();
                put(&mut m, "provider", e.get("provider"));
                put(&mut m, "modelId", e.get("modelId"));
                model = Some(Value::Object(m));
            }
            Some("message")
                if e.get("message")
                    .and_then(|m| m.get("role"))
                    .and_then(Value::as_str)
                    == Some("assistant") =>
            {
                let msg = &e["message"];
                let mut m = Map::new();
                put(&mut m, "provider", msg.get("provider"));
                put(&mut m, "modelId", msg.get("model"));
                model = Some(Value::Object(m));
            }
            Some("compaction") => compaction = Some(i),
            _ => {}
        }
    }
    let mut messages = Vec::new();
    match compaction {
        Some(ci) => {
            let c = &path[ci];
            let mut m = Map::new();
            m.insert("role".into(), json!("compactionSummary"));
            put(&mut m, "summary", c.get("summary"));
            put(&mut m, "tokensBefore", c.get("tokensBefore"));
            m.insert(
                "timestamp".into(),
                json!(required_ts(c, "compaction summary timestamp")?),
            );
            messages.push(Value::Object(m));
            // findIndex by type and id: the first compaction on the path with that id.
            let cid = c.get("id");
            let idx = path
                .iter()
                .position(|e| type_of(e) == Some("compaction") && e.get("id") == cid)
                .unwrap_or(ci);
            let first_kept = c.get("firstKeptEntryId");
            let mut found = false;
            for e in &path[..idx] {
                if first_kept.is_some() && e.get("id") == first_kept {
                    found = true;
                }
                if found {
                    append_message(&mut messages, e)?;
                }
            }
            for e in &path[idx + 1..] {
                append_message(&mut messages, e)?;
            }
        }
        None => {
            for e in path {
                append_message(&mut messages, e)?;
            }
        }
    }
    Ok(SessionContext {
        messages,
        thinking_level: thinking,
        model,
    })
}

fn text_block(text: String) -> Value {
    json!([{"type": "text", "text": text}])
}

/// `bashExecutionToText`.
pub fn bash_execution_text(m: &Value) -> String {
    let s = |k: &str| match m.get(k) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => "undefined".to_string(),
        Some(v) => crate::jsjson::to_string_compact(v),
    };
    let mut text = format!("Ran `{}`\n", s("command"));
    let output = m.get("output");
    if output.is_some_and(super::tree::js_truthy) {
        text.push_str(&format!("```\n{}\n```", s("output")));
    } else {
        text.push_str("(no output)");
    }
    if m.get("cancelled").is_some_and(super::tree::js_truthy) {
        text.push_str("\n\n(command cancelled)");
    } else if let Some(code) = m.get("exitCode").filter(|c| !c.is_null()) {
        if code.as_f64() != Some(0.0) {
            text.push_str(&format!(
                "\n\nCommand exited with code {}",
                crate::jsjson::to_string_compact(code)
            ));
        }
    }
    if m.get("truncated").is_some_and(super::tree::js_truthy)
        && m.get("fullOutputPath").is_some_and(super::tree::js_truthy)
    {
        text.push_str(&format!(
            "\n\n[Output truncated. Full output: {}]",
            s("fullOutputPath")
        ));
    }
    text
}

fn summary_text(m: &Value) -> String {
    match m.get("summary") {
        Some(Value::String(s)) => s.clone(),
        Some(v) => crate::jsjson::to_string_compact(v),
        None => "undefined".into(),
    }
}

/// `convertToLlm`: the messages as the model receives them.
pub fn convert_to_llm(messages: &[Value]) -> Vec<Value> {
    let mut out = Vec::with_capacity(messages.len());
    for m in messages {
        let role = m.get("role").and_then(Value::as_str);
        let ts = m.get("timestamp").cloned();
        let with_ts = |mut o: Map<String, Value>| {
            if let Some(t) = &ts {
                o.insert("timestamp".into(), t.clone());
            }
            Value::Object(o)
        };
        match role {
            Some("bashExecution") => {
                if m.get("excludeFromContext")
                    .is_some_and(super::tree::js_truthy)
                {
                    continue;
                }
                let mut o = Map::new();
                o.insert("role".into(), json!("user"));
                o.insert("content".into(), text_block(bash_execution_text(m)));
                out.push(with_ts(o));
            }
            Some("custom") => {
                let content = match m.get("content") {
                    Some(Value::String(s)) => text_block(s.clone()),
                    Some(v) => v.clone(),
                    None => Value::Null,
                };
                let mut o = Map::new();
                o.insert("role".into(), json!("user"));
                if m.get("content").is_some() {
                    o.insert("content".into(), content);
                }
                let mut v = with_ts(o);
                if m.get("details")
                    .and_then(|d| d.get("runtimeContextCarrier"))
                    == Some(&Value::Bool(true))
                {
                    v.as_object_mut()
                        .map(|o| o.insert("runtimeContextCarrier".into(), json!(true)));
                }
                out.push(v);
            }
            Some("branchSummary") => {
                let mut o = Map::new();
                o.insert("role".into(), json!("user"));
                o.insert(
                    "content".into(),
                    text_block(format!(
                        "{BRANCH_SUMMARY_PREFIX}{}{BRANCH_SUMMARY_SUFFIX}",
                        summary_text(m)
                    )),
                );
                out.push(with_ts(o));
            }
            Some("compactionSummary") => {
                let mut o = Map::new();
                o.insert("role".into(), json!("user"));
                o.insert(
                    "content".into(),
                    text_block(format!(
                        "{COMPACTION_SUMMARY_PREFIX}{}{COMPACTION_SUMMARY_SUFFIX}",
                        summary_text(m)
                    )),
                );
                let t = match m.get("timestamp") {
                    Some(Value::Number(n)) => Value::Number(n.clone()),
                    Some(Value::String(s)) => json!(parse_date_ms(s).unwrap_or(0)),
                    _ => json!(0),
                };
                o.insert("timestamp".into(), t);
                out.push(Value::Object(o));
            }
            Some("user") | Some("assistant") | Some("toolResult") => out.push(m.clone()),
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compaction_keeps_from_first_kept() {
        let path = vec![
            json!({"type":"message","id":"a","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"1","timestamp":1}}),
            json!({"type":"message","id":"b","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"assistant","content":[],"provider":"p","model":"m","timestamp":2}}),
            json!({"type":"compaction","id":"c","timestamp":"2026-01-01T00:00:01.000Z","summary":"S","firstKeptEntryId":"b","tokensBefore":9}),
            json!({"type":"custom_message","customType":"x","content":"hey","display":false,"id":"d","timestamp":"2026-01-01T00:00:02.000Z"}),
        ];
        let c = build_context(&path).unwrap();
        assert_eq!(c.messages.len(), 3);
        assert_eq!(c.messages[0]["role"], "compactionSummary");
        assert_eq!(c.messages[0]["timestamp"], 1767225601000i64);
        assert_eq!(c.messages[1]["role"], "assistant");
        assert_eq!(c.model, Some(json!({"provider":"p","modelId":"m"})));
        let llm = convert_to_llm(&c.messages);
        assert!(llm[0]["content"][0]["text"]
            .as_str()
            .unwrap()
            .ends_with("S\n</summary>"));
        assert_eq!(llm[2]["content"], json!([{"type":"text","text":"hey"}]));
    }
}
