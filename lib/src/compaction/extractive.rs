//! The deterministic extractive summary (spec README, decision 8): no model, the same
//! input always gives the same text, under the five safeguard headings the gateway's
//! quality audit checks (`## Decisions`, `## Open TODOs`, `## Constraints/Rules`,
//! `## Pending user asks`, `## Exact identifiers`). Every opaque identifier of the
//! summarised messages (and of the previous summary) is kept literally, and the latest user
//! ask is quoted.

use std::collections::HashSet;
use std::sync::LazyLock;

use regex::Regex;
use serde_json::Value;

use crate::js;

/// The five headings, in the order the audit requires.
pub const HEADINGS: [&str; 5] = [
    "## Decisions",
    "## Open TODOs",
    "## Constraints/Rules",
    "## Pending user asks",
    "## Exact identifiers",
];

const MAX_ITEMS: usize = 12;
const MAX_ITEM_CHARS: usize = 240;
const MAX_ASK_CHARS: usize = 4000;

/// `extractOpaqueIdentifiers`' pattern (ASCII `\w` and `\b`, as in JavaScript).
static IDENTIFIER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"([A-Fa-f0-9]{8,}|https?://[^\s\x{feff}]+|/[A-Za-z0-9_.-]{2,}(?:/[A-Za-z0-9_.-]+)+|[A-Za-z]:\\[A-Za-z0-9_\\.-]+|[A-Za-z0-9._-]+\.[A-Za-z0-9._/-]+:[0-9]{1,5}|(?-u:\b)[0-9]{6,}(?-u:\b))",
    )
    .expect("identifier pattern")
});

static RULE_WORDS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(must|never|always|don't|do not|should|shouldn't|only|required?|prefer|avoid|make sure)\b")
        .expect("rule pattern")
});

static TODO_WORDS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)(\bTODO\b|\bnext\b|\bstill need|\bremaining\b|\bfollow[- ]up\b|- \[ \])")
        .expect("todo pattern")
});

fn sanitize(value: &str) -> &str {
    let v = js::trim(value);
    let v = v.trim_start_matches(['(', '"', '\'', '`', '[', '{', '<']);
    v.trim_end_matches([
        ')', ']', '"', '\'', '`', ',', ';', ':', '.', '!', '?', '<', '>',
    ])
}

fn is_pure_hex(s: &str) -> bool {
    s.len() >= 8 && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Every opaque identifier in `text`, sanitised as the audit does (at least 4 characters),
/// in order of first appearance.
pub fn identifiers(text: &str) -> Vec<String> {
    IDENTIFIER
        .find_iter(text)
        .map(|m| sanitize(m.as_str()).to_string())
        .filter(|s| js::utf16_len(s) >= 4)
        .collect()
}

fn one_line(text: &str) -> String {
    let collapsed = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if js::utf16_len(&collapsed) > MAX_ITEM_CHARS {
        format!("{}…", js::utf16_prefix(&collapsed, MAX_ITEM_CHARS))
    } else {
        collapsed
    }
}

fn text_of(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter_map(|b| match b.get("type").and_then(Value::as_str) {
                Some("text") => b.get("text").and_then(Value::as_str).map(String::from),
                Some("toolResult" | "tool_result") => b
                    .get("text")
                    .or_else(|| b.get("content"))
                    .and_then(Value::as_str)
                    .map(String::from),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

fn first_sentence(text: &str) -> &str {
    let t = js::trim(text);
    let end = t
        .char_indices()
        .find(|(i, c)| {
            *c == '\n' || ((*c == '.' || *c == '!' || *c == '?') && t[i + 1..].starts_with(' '))
        })
        .map(|(i, c)| if c == '\n' { i } else { i + 1 })
        .unwrap_or(t.len());
    &t[..end]
}

/// Accumulates the summarised messages one at a time (bounded memory).
#[derive(Debug, Default)]
pub struct Extractor {
    decisions: Vec<String>,
    todos: Vec<String>,
    rules: Vec<String>,
    latest_ask: Option<String>,
    ids: Vec<String>,
    seen_ids: HashSet<String>,
    open_calls: Vec<(String, String)>,
    messages: usize,
}

fn push_bounded(list: &mut Vec<String>, item: String) {
    if item.is_empty() || list.contains(&item) {
        return;
    }
    list.push(item);
    // Keep the most recent items.
    if list.len() > MAX_ITEMS * 4 {
        list.drain(..list.len() - MAX_ITEMS * 2);
    }
}

impl Extractor {
    /// A new, empty extractor.
    pub fn new() -> Self {
        Self::default()
    }

    fn add_ids(&mut self, text: &str) {
        for id in identifiers(text) {
            let key = if is_pure_hex(&id) {
                id.to_uppercase()
            } else {
                id.clone()
            };
            if self.seen_ids.insert(key) {
                self.ids.push(id);
            }
        }
    }

    /// Adds one agent message (as `getMessageFromEntry` returns it).
    pub fn push(&mut self, m: &Value) {
        self.messages += 1;
        let role = m.get("role").and_then(Value::as_str).unwrap_or("");
        match role {
            "user" | "custom" => {
                let text = text_of(m.get("content"));
                self.add_ids(&text);
                if role == "user" && !js::trim(&text).is_empty() {
                    self.latest_ask = Some(js::trim(&text).to_string());
                }
                for line in text.lines() {
                    if RULE_WORDS.is_match(line) {
                        push_bounded(&mut self.rules, one_line(line));
                    }
                }
            }
            "assistant" => {
                if let Some(Value::Array(blocks)) = m.get("content") {
                    for b in blocks {
                        match b.get("type").and_then(Value::as_str) {
                            Some("text") => {
                                let t = b.get("text").and_then(Value::as_str).unwrap_or("");
                                self.add_ids(t);
                                let s = one_line(first_sentence(t));
                                push_bounded(&mut self.decisions, s);
                                for line in t.lines() {
                                    if TODO_WORDS.is_match(line) {
                                        push_bounded(&mut self.todos, one_line(line));
                                    }
                                }
                            }
                            Some("toolCall") => {
                                let name = b.get("name").and_then(Value::as_str).unwrap_or("tool");
                                let args = b
                                    .get("arguments")
                                    .map(crate::js::jsjson::to_string_compact)
                                    .unwrap_or_default();
                                self.add_ids(&args);
                                if let Some(id) = b.get("id").and_then(Value::as_str) {
                                    self.open_calls.push((id.to_string(), name.to_string()));
                                }
                            }
                            _ => {}
                        }
                    }
                }
            }
            "toolResult" => {
                let text = text_of(m.get("content"));
                self.add_ids(&text);
                let id = m.get("toolCallId").and_then(Value::as_str).unwrap_or("");
                self.open_calls.retain(|(c, _)| c != id);
                if m.get("isError") == Some(&Value::Bool(true)) {
                    let name = m.get("toolName").and_then(Value::as_str).unwrap_or("tool");
                    push_bounded(
                        &mut self.todos,
                        format!("Tool `{name}` failed: {}", one_line(&text)),
                    );
                }
            }
            "bashExecution" => {
                let cmd = m.get("command").and_then(Value::as_str).unwrap_or("");
                let out = m.get("output").and_then(Value::as_str).unwrap_or("");
                self.add_ids(cmd);
                self.add_ids(out);
                push_bounded(&mut self.decisions, one_line(&format!("Ran `{cmd}`")));
            }
            "branchSummary" | "compactionSummary" => {
                let s = m.get("summary").and_then(Value::as_str).unwrap_or("");
                self.add_ids(s);
                push_bounded(&mut self.decisions, one_line(first_sentence(s)));
            }
            _ => {}
        }
    }

    /// The summary body: the previous summary re-distilled with the new messages.
    pub fn finish(mut self, previous: Option<&str>, instructions: Option<&str>) -> String {
        let mut prev_sections: Vec<Vec<String>> = vec![Vec::new(); 5];
        if let Some(p) = previous
            .map(strip_file_tags)
            .filter(|p| !js::trim(p).is_empty())
        {
            if has_headings(&p) {
                let mut current: Option<usize> = None;
                for line in p.lines() {
                    let t = js::trim(line);
                    if let Some(h) = HEADINGS.iter().position(|h| *h == t) {
                        current = Some(h);
                        continue;
                    }
                    if let Some(h) = current {
                        if !t.is_empty() && t != "None." && t != "None captured." {
                            prev_sections[h].push(t.to_string());
                        }
                    }
                }
            } else {
                prev_sections[0].push(js::trim(&p).to_string());
            }
            self.add_ids(&p);
        }
        for (id, name) in std::mem::take(&mut self.open_calls) {
            push_bounded(
                &mut self.todos,
                format!("Tool call `{name}` ({id}) has no result"),
            );
        }
        if let Some(i) = instructions.map(js::trim).filter(|s| !s.is_empty()) {
            push_bounded(
                &mut self.rules,
                format!("Compaction focus: {}", one_line(i)),
            );
        }
        let bullets = |prev: &[String], new: &[String]| -> String {
            let mut items: Vec<String> = prev.to_vec();
            let fresh: Vec<String> = new
                .iter()
                .map(|s| format!("- {s}"))
                .filter(|s| !items.contains(s))
                .collect();
            items.extend(fresh);
            if items.len() > MAX_ITEMS {
                let dropped = items.len() - MAX_ITEMS;
                items.drain(..dropped);
                items.insert(0, format!("- …and {dropped} earlier item(s)"));
            }
            items.join("\n")
        };
        let or_none = |s: String, none: &str| if s.is_empty() { none.to_string() } else { s };
        let decisions = or_none(bullets(&prev_sections[0], &self.decisions), "None.");
        let todos = or_none(bullets(&prev_sections[1], &self.todos), "None.");
        let rules = or_none(bullets(&prev_sections[2], &self.rules), "None.");
        let asks = match &self.latest_ask {
            Some(a) => {
                let quoted = if js::utf16_len(a) > MAX_ASK_CHARS {
                    format!(
                        "{} [… {} more characters]",
                        js::utf16_prefix(a, MAX_ASK_CHARS),
                        js::utf16_len(a) - MAX_ASK_CHARS
                    )
                } else {
                    a.clone()
                };
                let lines: Vec<String> = quoted.lines().map(|l| format!("> {l}")).collect();
                format!("Latest user ask (verbatim):\n{}", lines.join("\n"))
            }
            None => or_none(prev_sections[3].join("\n"), "None."),
        };
        let ids = if self.ids.is_empty() {
            "None captured.".to_string()
        } else {
            self.ids
                .iter()
                .map(|i| format!("- {i}"))
                .collect::<Vec<_>>()
                .join("\n")
        };
        format!(
            "{}\n{decisions}\n\n{}\n{todos}\n\n{}\n{rules}\n\n{}\n{asks}\n\n{}\n{ids}",
            HEADINGS[0], HEADINGS[1], HEADINGS[2], HEADINGS[3], HEADINGS[4]
        )
    }
}

/// Whether `summary` has the five headings in order (`hasRequiredSummarySections`).
pub fn has_headings(summary: &str) -> bool {
    let lines: Vec<&str> = summary
        .lines()
        .map(js::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let mut cursor = 0;
    for h in HEADINGS {
        match lines[cursor..].iter().position(|l| *l == h) {
            Some(i) => cursor += i + 1,
            None => return false,
        }
    }
    true
}

/// A summary without the `<read-files>` / `<modified-files>` tags compaction appends.
pub fn strip_file_tags(summary: &str) -> String {
    let mut s = summary.to_string();
    for tag in ["read-files", "modified-files"] {
        let open = format!("<{tag}>");
        let close = format!("</{tag}>");
        while let Some(a) = s.find(&open) {
            let Some(b) = s[a..].find(&close) else { break };
            s.replace_range(a..a + b + close.len(), "");
        }
    }
    s.trim_end().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keeps_identifiers_and_quotes_the_ask() {
        let mut x = Extractor::new();
        x.push(&json!({"role":"user","content":"Deploy build 4f3a88af7304 to https://ci.example.com/run/9 and never touch /srv/prod/db.sqlite"}));
        x.push(&json!({"role":"assistant","content":[{"type":"text","text":"Deployed to devbox:8080. Next I will verify."},{"type":"toolCall","id":"c1","name":"exec","arguments":{"cmd":"ls /var/log/app"}}]}));
        x.push(&json!({"role":"user","content":"Check ticket 1234567 please"}));
        let s = x.finish(Some("## Goal\nold goal"), None);
        assert!(has_headings(&s), "{s}");
        for id in [
            "4f3a88af7304",
            "https://ci.example.com/run/9",
            "/srv/prod/db.sqlite",
            "devbox:8080",
            "/var/log/app",
            "1234567",
        ] {
            assert!(s.contains(id), "{id} missing from {s}");
        }
        assert!(s.contains("> Check ticket 1234567 please"));
        assert!(s.contains("- never touch") || s.contains("never touch /srv/prod/db.sqlite"));
        assert!(s.contains("Tool call `exec` (c1) has no result"));
        assert!(s.contains("## Goal"));
        // Deterministic, and re-distils its own output.
        let again = Extractor::new().finish(Some(&s), None);
        assert!(has_headings(&again));
        assert!(again.contains("4f3a88af7304"));
    }
}
