//! The default-mode summary prompts (`transcript.md` §4.5), byte for byte: the system
//! prompt, the conversation serialisation (`serializeConversation(convertToLlm(…))`), the
//! checkpoint and update instructions, and the split-turn prefix prompt.

use serde_json::Value;
use thiserror::Error;

use crate::exit::{self, ExitCode};
use crate::js;
use crate::transcript::entry::js_slice_prefix;

/// The summariser's system prompt.
pub const SYSTEM_PROMPT: &str = "You are a context summarization assistant. Your task is to read a conversation between a user and an AI assistant, then produce a structured summary following the exact format specified.\n\nDo NOT continue the conversation. Do NOT respond to any questions in the conversation. ONLY output the structured summary.";

/// The first-summary instructions.
pub const SUMMARIZATION_PROMPT: &str = "The messages above are a conversation to summarize. Create a structured context checkpoint summary that another LLM will use to continue the work.\n\nUse this EXACT format:\n\n## Goal\n[What is the user trying to accomplish? Can be multiple items if the session covers different tasks.]\n\n## Constraints & Preferences\n- [Any constraints, preferences, or requirements mentioned by user]\n- [Or \"(none)\" if none were mentioned]\n\n## Progress\n### Done\n- [x] [Completed tasks/changes]\n\n### In Progress\n- [ ] [Current work]\n\n### Blocked\n- [Issues preventing progress, if any]\n\n## Key Decisions\n- **[Decision]**: [Brief rationale]\n\n## Next Steps\n1. [Ordered list of what should happen next]\n\n## Critical Context\n- [Any data, examples, or references needed to continue]\n- [Or \"(none)\" if not applicable]\n\nKeep each section concise. Preserve exact file paths, function names, and error messages.";

/// The instructions used when a previous summary exists.
pub const UPDATE_SUMMARIZATION_PROMPT: &str = "The messages above are NEW conversation messages to incorporate into the existing summary provided in <previous-summary> tags.\n\nUpdate the existing structured summary with new information. RULES:\n- PRESERVE all existing information from the previous summary\n- ADD new progress, decisions, and context from the new messages\n- UPDATE the Progress section: move items from \"In Progress\" to \"Done\" when completed\n- UPDATE \"Next Steps\" based on what was accomplished\n- PRESERVE exact file paths, function names, and error messages\n- If something is no longer relevant, you may remove it\n\nUse this EXACT format:\n\n## Goal\n[Preserve existing goals, add new ones if the task expanded]\n\n## Constraints & Preferences\n- [Preserve existing, add new ones discovered]\n\n## Progress\n### Done\n- [x] [Include previously done items AND newly completed items]\n\n### In Progress\n- [ ] [Current work - update based on progress]\n\n### Blocked\n- [Current blockers - remove if resolved]\n\n## Key Decisions\n- **[Decision]**: [Brief rationale] (preserve all previous, add new)\n\n## Next Steps\n1. [Update based on current state]\n\n## Critical Context\n- [Preserve important context, add new if needed]\n\nKeep each section concise. Preserve exact file paths, function names, and error messages.";

/// The split-turn prefix instructions.
pub const TURN_PREFIX_SUMMARIZATION_PROMPT: &str = "This is the PREFIX of a turn that was too large to keep. The SUFFIX (recent work) is retained.\n\nSummarize the prefix to provide context for the retained suffix:\n\n## Original Request\n[What did the user ask for in this turn?]\n\n## Early Progress\n- [Key decisions and work done in the prefix]\n\n## Context for Suffix\n- [Information needed to understand the retained recent work]\n\nBe concise. Focus on what's needed to understand the kept suffix.";

/// Tool results are cut to this many UTF-16 units in the prompt.
pub const TOOL_RESULT_MAX_CHARS: usize = 2000;

/// A message the peer's serialiser would throw on.
#[derive(Debug, Error)]
pub enum PromptError {
    /// A tool call whose `arguments` is `null` or missing (`Object.entries` throws).
    #[error("a tool call in a summarised message has no arguments object; the gateway's summariser would fail on it")]
    BadToolCall,
}

impl ExitCode for PromptError {
    fn exit_code(&self) -> i32 {
        exit::DATA_ERR
    }
}

fn js_string(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => crate::js::jsjson::to_string_compact(other),
    }
}

fn template_string(v: Option<&Value>) -> String {
    match v {
        None => "undefined".into(),
        Some(Value::Null) => "null".into(),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(a)) => a
            .iter()
            .map(|x| js_string(Some(x)))
            .collect::<Vec<_>>()
            .join(","),
        Some(Value::Object(_)) => "[object Object]".into(),
        Some(other) => crate::js::jsjson::to_string_compact(other),
    }
}

fn block_text(b: &Value) -> String {
    let t = b.get("type").and_then(Value::as_str);
    let text = b.get("text").filter(|x| js::truthy(x));
    if t == Some("text") {
        if let Some(x) = text {
            return js_string(Some(x));
        }
    }
    if t != Some("toolResult") && t != Some("tool_result") {
        return String::new();
    }
    if let Some(x) = text {
        return js_string(Some(x));
    }
    b.get("content")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string()
}

fn truncate_for_summary(text: &str, max: usize) -> String {
    let len = js::utf16_len(text);
    if len <= max {
        return text.to_string();
    }
    format!(
        "{}\n\n[... {} more characters truncated]",
        js_slice_prefix(text, max),
        len - max
    )
}

fn json_or_undefined(v: &Value) -> String {
    crate::js::jsjson::to_string_compact(v)
}

fn args_string(args: Option<&Value>) -> Result<String, PromptError> {
    let entries: Vec<(String, String)> = match args {
        None | Some(Value::Null) => return Err(PromptError::BadToolCall),
        Some(Value::Object(o)) => crate::js::jsjson::js_key_order(o)
            .into_iter()
            .map(|k| (k.clone(), json_or_undefined(&o[k.as_str()])))
            .collect(),
        Some(Value::Array(a)) => a
            .iter()
            .enumerate()
            .map(|(i, v)| (i.to_string(), json_or_undefined(v)))
            .collect(),
        Some(Value::String(s)) => s
            .encode_utf16()
            .enumerate()
            .map(|(i, u)| {
                let c = String::from_utf16_lossy(&[u]);
                (i.to_string(), json_or_undefined(&Value::String(c)))
            })
            .collect(),
        Some(_) => Vec::new(),
    };
    Ok(entries
        .into_iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(", "))
}

/// `serializeConversation` of LLM messages (after `convertToLlm`).
pub fn serialize_conversation(messages: &[Value]) -> Result<String, PromptError> {
    let mut parts: Vec<String> = Vec::new();
    for m in messages {
        match m.get("role").and_then(Value::as_str) {
            Some("user") => {
                let content = match m.get("content") {
                    Some(Value::String(s)) => s.clone(),
                    Some(Value::Array(blocks)) => blocks
                        .iter()
                        .filter(|c| c.get("type").and_then(Value::as_str) == Some("text"))
                        .map(|c| js_string(c.get("text")))
                        .collect::<Vec<_>>()
                        .join(""),
                    _ => String::new(),
                };
                if !content.is_empty() {
                    parts.push(format!("[User]: {content}"));
                }
            }
            Some("assistant") => {
                let mut text = Vec::new();
                let mut thinking = Vec::new();
                let mut calls = Vec::new();
                if let Some(Value::Array(blocks)) = m.get("content") {
                    for b in blocks {
                        match b.get("type").and_then(Value::as_str) {
                            Some("text") => text.push(js_string(b.get("text"))),
                            Some("thinking") => thinking.push(js_string(b.get("thinking"))),
                            Some("toolCall") => calls.push(format!(
                                "{}({})",
                                template_string(b.get("name")),
                                args_string(b.get("arguments"))?
                            )),
                            _ => {}
                        }
                    }
                }
                if !thinking.is_empty() {
                    parts.push(format!("[Assistant thinking]: {}", thinking.join("\n")));
                }
                if !text.is_empty() {
                    parts.push(format!("[Assistant]: {}", text.join("\n")));
                }
                if !calls.is_empty() {
                    parts.push(format!("[Assistant tool calls]: {}", calls.join("; ")));
                }
            }
            Some("toolResult") => {
                let content: String = match m.get("content") {
                    Some(Value::Array(blocks)) => blocks.iter().map(block_text).collect(),
                    _ => String::new(),
                };
                if !content.is_empty() {
                    parts.push(format!(
                        "[Tool result]: {}",
                        truncate_for_summary(&content, TOOL_RESULT_MAX_CHARS)
                    ));
                }
            }
            _ => {}
        }
    }
    Ok(parts.join("\n\n"))
}

/// The user message of the history summary call (`generateSummary`).
pub fn history_prompt(
    conversation: &str,
    previous_summary: Option<&str>,
    instructions: Option<&str>,
) -> String {
    let previous = previous_summary.filter(|s| !s.is_empty());
    let mut base = if previous.is_some() {
        UPDATE_SUMMARIZATION_PROMPT.to_string()
    } else {
        SUMMARIZATION_PROMPT.to_string()
    };
    if let Some(i) = instructions.filter(|s| !s.is_empty()) {
        base.push_str("\n\nAdditional focus: ");
        base.push_str(i);
    }
    let mut p = format!("<conversation>\n{conversation}\n</conversation>\n\n");
    if let Some(prev) = previous {
        p.push_str(&format!(
            "<previous-summary>\n{prev}\n</previous-summary>\n\n"
        ));
    }
    p.push_str(&base);
    p
}

/// The user message of the split-turn prefix call (`generateTurnPrefixSummary`).
pub fn turn_prefix_prompt(conversation: &str) -> String {
    format!("<conversation>\n{conversation}\n</conversation>\n\n{TURN_PREFIX_SUMMARIZATION_PROMPT}")
}

/// `maxTokens` of the history call: `floor(0.8 × reserve)`.
pub fn history_max_tokens(reserve_tokens: u64) -> u64 {
    reserve_tokens * 8 / 10
}

/// `maxTokens` of the prefix call: `floor(0.5 × reserve)`.
pub fn turn_prefix_max_tokens(reserve_tokens: u64) -> u64 {
    reserve_tokens / 2
}

/// How the split-turn summary joins the two calls.
pub fn join_split_turn(history: &str, prefix: &str) -> String {
    format!("{history}\n\n---\n\n**Turn Context (split turn):**\n\n{prefix}")
}

/// `formatFileOperations`: the `<read-files>` / `<modified-files>` tags appended to a summary.
pub fn format_file_operations(read: &[String], modified: &[String]) -> String {
    let mut sections = Vec::new();
    if !read.is_empty() {
        sections.push(format!("<read-files>\n{}\n</read-files>", read.join("\n")));
    }
    if !modified.is_empty() {
        sections.push(format!(
            "<modified-files>\n{}\n</modified-files>",
            modified.join("\n")
        ));
    }
    if sections.is_empty() {
        String::new()
    } else {
        format!("\n\n{}", sections.join("\n\n"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn serialises_like_the_peer() {
        let msgs = vec![
            json!({"role":"user","content":"hi"}),
            json!({"role":"assistant","content":[{"type":"thinking","thinking":"t"},{"type":"text","text":"a"},{"type":"toolCall","id":"c","name":"read","arguments":{"path":"/x","n":1}}]}),
            json!({"role":"toolResult","content":[{"type":"text","text":"r".repeat(2001)}]}),
        ];
        let s = serialize_conversation(&msgs).unwrap();
        assert!(s.starts_with("[User]: hi\n\n[Assistant thinking]: t\n\n[Assistant]: a\n\n[Assistant tool calls]: read(path=\"/x\", n=1)\n\n[Tool result]: rrr"));
        assert!(s.ends_with("r\n\n[... 1 more characters truncated]"));
        let p = history_prompt("X", Some("P"), Some("focus"));
        assert!(p.starts_with("<conversation>\nX\n</conversation>\n\n<previous-summary>\nP\n</previous-summary>\n\nThe messages above are NEW"));
        assert!(p.ends_with("error messages.\n\nAdditional focus: focus"));
        assert_eq!(history_max_tokens(16384), 13107);
        assert_eq!(
            format_file_operations(&["a".into()], &["b".into()]),
            "\n\n<read-files>\na\n</read-files>\n\n<modified-files>\nb\n</modified-files>"
        );
    }
}
