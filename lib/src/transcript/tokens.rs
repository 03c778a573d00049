//! Token estimates (`transcript.md` §4.3) and recorded usage (§3.4): the agent-core
//! `chars/4` estimator, the context estimate that prefers provider usage, the CJK-aware
//! character count, and the gateway's usage aggregation over transcript lines.

use serde_json::{json, Map, Value};

use crate::js;

/// Characters an image block counts for.
pub const IMAGE_BLOCK_CHARS: usize = 4800;

fn str_len(v: Option<&Value>) -> usize {
    match v {
        Some(Value::String(s)) => js::utf16_len(s),
        _ => 0,
    }
}

/// `getCompactionContentBlockText(block).length`.
fn block_text_len(b: &Value) -> usize {
    let t = b.get("type").and_then(Value::as_str);
    if t == Some("text") {
        return str_len(b.get("text"));
    }
    if t != Some("toolResult") && t != Some("tool_result") {
        return 0;
    }
    match b.get("text") {
        Some(Value::String(s)) if !s.is_empty() => js::utf16_len(s),
        _ => str_len(b.get("content")),
    }
}

fn content_chars(content: Option<&Value>) -> usize {
    match content {
        Some(Value::String(s)) => js::utf16_len(s),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .map(|b| {
                if b.get("type").and_then(Value::as_str) == Some("image") {
                    IMAGE_BLOCK_CHARS
                } else {
                    block_text_len(b)
                }
            })
            .sum(),
        _ => 0,
    }
}

fn ceil4(chars: usize) -> u64 {
    chars.div_ceil(4) as u64
}

/// `estimateTokens(message)`: `ceil(chars / 4)` by the per-role rules.
pub fn estimate_tokens(message: &Value) -> u64 {
    match message.get("role").and_then(Value::as_str) {
        Some("user") | Some("custom") | Some("toolResult") => {
            ceil4(content_chars(message.get("content")))
        }
        Some("assistant") => {
            let mut chars = 0;
            if let Some(Value::Array(blocks)) = message.get("content") {
                for b in blocks {
                    match b.get("type").and_then(Value::as_str) {
                        Some("text") => chars += str_len(b.get("text")),
                        Some("thinking") => chars += str_len(b.get("thinking")),
                        Some("toolCall") => {
                            chars += str_len(b.get("name"));
                            chars += match b.get("arguments") {
                                None => 9, // JSON.stringify(undefined) ?? "undefined"
                                Some(a) => js::utf16_len(&crate::js::jsjson::to_string_compact(a)),
                            };
                        }
                        _ => {}
                    }
                }
            }
            ceil4(chars)
        }
        Some("bashExecution") => {
            ceil4(str_len(message.get("command")) + str_len(message.get("output")))
        }
        Some("branchSummary") | Some("compactionSummary") => ceil4(str_len(message.get("summary"))),
        _ => 0,
    }
}

fn num(v: Option<&Value>) -> f64 {
    v.and_then(Value::as_f64).unwrap_or(0.0)
}

/// `calculateContextTokens(usage)`: `contextUsage.totalTokens` when available, else
/// `totalTokens || input + output + cacheRead + cacheWrite`.
pub fn calculate_context_tokens(usage: &Value) -> f64 {
    if let Some(cu) = usage.get("contextUsage") {
        if cu.get("state").and_then(Value::as_str) == Some("available") {
            return num(cu.get("totalTokens"));
        }
    }
    let total = num(usage.get("totalTokens"));
    if total != 0.0 && !total.is_nan() {
        return total;
    }
    num(usage.get("input"))
        + num(usage.get("output"))
        + num(usage.get("cacheRead"))
        + num(usage.get("cacheWrite"))
}

fn assistant_usage(m: &Value) -> Option<&Value> {
    if m.get("role").and_then(Value::as_str) != Some("assistant") {
        return None;
    }
    let stop = m.get("stopReason").and_then(Value::as_str);
    if stop == Some("aborted") || stop == Some("error") {
        return None;
    }
    m.get("usage").filter(|u| js::truthy(u))
}

/// The context estimate (`estimateContextTokens`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ContextEstimate {
    /// Total tokens.
    pub tokens: f64,
    /// Tokens from the last usable provider usage.
    pub usage_tokens: f64,
    /// Estimated tokens after that message.
    pub trailing_tokens: u64,
    /// Index of the message whose usage was used.
    pub last_usage_index: Option<usize>,
}

/// `estimateContextTokens(messages)`: the last usable assistant usage plus estimates of
/// everything after it; without one, the sum of all estimates.
pub fn estimate_context_tokens(messages: &[Value]) -> ContextEstimate {
    let found = messages.iter().enumerate().rev().find_map(|(i, m)| {
        let u = assistant_usage(m)?;
        let unavailable = u
            .get("contextUsage")
            .and_then(|c| c.get("state"))
            .and_then(Value::as_str)
            == Some("unavailable");
        (!unavailable).then_some((i, u))
    });
    match found {
        None => {
            let t: u64 = messages.iter().map(estimate_tokens).sum();
            ContextEstimate {
                tokens: t as f64,
                usage_tokens: 0.0,
                trailing_tokens: t,
                last_usage_index: None,
            }
        }
        Some((i, u)) => {
            let usage_tokens = calculate_context_tokens(u);
            let trailing: u64 = messages[i + 1..].iter().map(estimate_tokens).sum();
            ContextEstimate {
                tokens: usage_tokens + trailing as f64,
                usage_tokens,
                trailing_tokens: trailing,
                last_usage_index: Some(i),
            }
        }
    }
}

/// Whether a character counts as non-Latin (~1 token each) for `estimateStringChars`.
fn is_non_latin(c: char) -> bool {
    matches!(c as u32,
        0x2E80..=0x9FFF | 0xA000..=0xA4FF | 0xAC00..=0xD7AF | 0xF900..=0xFAFF
        | 0xFF01..=0xFF60 | 0xFFE0..=0xFFE6 | 0x20000..=0x2FA1F)
}

/// `estimateStringChars`: UTF-16 length with each non-Latin character counted 4 times
/// (CJK Extension B+ pairs counted once before that).
pub fn estimate_string_chars(text: &str) -> usize {
    if text.is_empty() {
        return 0;
    }
    let non_latin = text.chars().filter(|&c| is_non_latin(c)).count();
    if non_latin == 0 {
        return js::utf16_len(text);
    }
    let ext_b = text
        .chars()
        .filter(|&c| (0x20000..=0x2FA1F).contains(&(c as u32)))
        .count();
    js::utf16_len(text) - ext_b + non_latin * 3
}

fn finite(v: Option<&Value>) -> Option<f64> {
    v.and_then(Value::as_f64).filter(|f| f.is_finite())
}

fn token_count(v: Option<&Value>) -> Option<f64> {
    let n = finite(v)?;
    Some(if n <= 0.0 {
        0.0
    } else {
        n.trunc().min(9_007_199_254_740_991.0)
    })
}

fn first<'a>(raw: &'a Value, keys: &[&str]) -> Option<&'a Value> {
    keys.iter()
        .find_map(|k| raw.get(*k).filter(|v| !v.is_null()))
}

/// `normalizeUsage`: provider usage shapes into `{input, output, cacheRead, cacheWrite,
/// contextUsage?, reasoningTokens?, total}` (absent buckets are `None`).
pub fn normalize_usage(raw: &Value) -> Option<NormalizedUsage> {
    if !raw.is_object() {
        return None;
    }
    let nested = |a: &str, b: &str| raw.get(a).and_then(|x| x.get(b)).filter(|v| !v.is_null());
    let cache_read = token_count(
        first(
            raw,
            &[
                "cacheRead",
                "cache_read",
                "cache_read_input_tokens",
                "cached_tokens",
            ],
        )
        .or_else(|| nested("input_tokens_details", "cached_tokens"))
        .or_else(|| nested("prompt_tokens_details", "cached_tokens")),
    );
    let raw_input = finite(
        first(
            raw,
            &[
                "input",
                "inputTokens",
                "input_tokens",
                "promptTokens",
                "prompt_tokens",
                "prompt_n",
            ],
        )
        .or_else(|| nested("timings", "prompt_n")),
    );
    let openai_style = raw.get("cached_tokens").is_some()
        || nested("input_tokens_details", "cached_tokens").is_some()
        || nested("prompt_tokens_details", "cached_tokens").is_some();
    let input_v = match (raw_input, openai_style, cache_read) {
        (Some(i), true, Some(c)) => Some(i - c),
        (i, _, _) => i,
    };
    let input = input_v.map(|n| if n <= 0.0 { 0.0 } else { n.trunc() });
    let output = token_count(
        first(
            raw,
            &[
                "output",
                "outputTokens",
                "output_tokens",
                "completionTokens",
                "completion_tokens",
                "predicted_n",
            ],
        )
        .or_else(|| nested("timings", "predicted_n")),
    );
    let cache_write = token_count(first(
        raw,
        &["cacheWrite", "cache_write", "cache_creation_input_tokens"],
    ));
    let cu = raw.get("contextUsage");
    let state = cu.and_then(|c| c.get("state")).and_then(Value::as_str);
    let context_usage = if state == Some("unavailable") {
        Some(json!({"state": "unavailable"}))
    } else if state == Some("available") {
        let p = token_count(cu.and_then(|c| c.get("promptTokens")));
        let t = token_count(cu.and_then(|c| c.get("totalTokens")));
        match (p, t) {
            (Some(p), Some(t)) if t >= p => {
                Some(json!({"state":"available","promptTokens":p as u64,"totalTokens":t as u64}))
            }
            _ => None,
        }
    } else {
        None
    };
    let reasoning = token_count(
        first(raw, &["reasoningTokens", "reasoning_tokens"])
            .or_else(|| nested("completion_tokens_details", "reasoning_tokens"))
            .or_else(|| nested("output_tokens_details", "reasoning_tokens")),
    );
    let total = token_count(first(raw, &["total", "totalTokens", "total_tokens"]));
    if input.is_none()
        && output.is_none()
        && cache_read.is_none()
        && cache_write.is_none()
        && context_usage.is_none()
        && reasoning.is_none()
        && total.is_none()
    {
        return None;
    }
    Some(NormalizedUsage {
        input,
        output,
        cache_read,
        cache_write,
        context_usage,
        reasoning_tokens: reasoning,
        total,
    })
}

/// Usage after `normalizeUsage`.
#[derive(Debug, Clone, PartialEq)]
pub struct NormalizedUsage {
    /// Input tokens.
    pub input: Option<f64>,
    /// Output tokens.
    pub output: Option<f64>,
    /// Cache reads.
    pub cache_read: Option<f64>,
    /// Cache writes.
    pub cache_write: Option<f64>,
    /// `{state, promptTokens?, totalTokens?}`.
    pub context_usage: Option<Value>,
    /// Reasoning tokens.
    pub reasoning_tokens: Option<f64>,
    /// The provider's total.
    pub total: Option<f64>,
}

impl NormalizedUsage {
    fn any_positive(&self) -> bool {
        let cu = self.context_usage.as_ref();
        let avail = cu.and_then(|c| c.get("state")).and_then(Value::as_str) == Some("available");
        let vals = [
            self.input,
            self.output,
            self.cache_read,
            self.cache_write,
            if avail {
                cu.and_then(|c| c.get("promptTokens"))
                    .and_then(Value::as_f64)
            } else {
                None
            },
            if avail {
                cu.and_then(|c| c.get("totalTokens"))
                    .and_then(Value::as_f64)
            } else {
                None
            },
            self.reasoning_tokens,
            self.total,
        ];
        vals.iter().any(|v| v.is_some_and(|v| v > 0.0))
            || cu.and_then(|c| c.get("state")).and_then(Value::as_str) == Some("unavailable")
    }

    /// `deriveSessionTotalTokens({usage})`: the prompt tokens (`contextUsage.promptTokens`,
    /// else `input + cacheRead + cacheWrite`), when positive.
    pub fn session_total_tokens(&self) -> Option<f64> {
        let cu = self.context_usage.as_ref();
        let state = cu.and_then(|c| c.get("state")).and_then(Value::as_str);
        let prompt = match state {
            Some("unavailable") => None,
            Some("available") => cu
                .and_then(|c| c.get("promptTokens"))
                .and_then(Value::as_f64),
            _ => {
                let s = self.input.unwrap_or(0.0)
                    + self.cache_read.unwrap_or(0.0)
                    + self.cache_write.unwrap_or(0.0);
                (s > 0.0).then_some(s)
            }
        };
        prompt.filter(|p| p.is_finite() && *p > 0.0)
    }
}

/// Recorded usage summed over transcript rows (`extractAggregateUsageFromTranscriptLines`,
/// the reader behind `sessions.list` and `/status`).
#[derive(Debug, Clone, Default)]
pub struct UsageAggregate {
    /// The snapshot object as the gateway builds it, or `None` when no row had usage.
    pub snapshot: Option<Map<String, Value>>,
}

/// Aggregates usage over parsed rows (their JSON values), as the gateway does over lines.
pub fn aggregate_usage<'a>(
    rows: impl IntoIterator<Item = &'a Value>,
) -> Option<Map<String, Value>> {
    let mut snap = Map::new();
    let mut saw = false;
    let (mut input, mut output, mut cr, mut cw, mut cost) = (0.0, 0.0, 0.0, 0.0, 0.0);
    let (mut si, mut so, mut scr, mut scw, mut sc) = (false, false, false, false, false);
    let mut est_chars = 0usize;
    let mut saw_est = false;
    let mut saw_identity = false;
    for row in rows {
        let Some(message) = row.get("message").filter(|m| m.is_object()) else {
            continue;
        };
        let role = message.get("role").and_then(Value::as_str);
        let trimmed = |k: &str| -> Option<String> {
            match message.get(k) {
                Some(Value::String(s)) => Some(js::trim(s).to_string()),
                _ => match row.get(k) {
                    Some(Value::String(s)) => Some(js::trim(s).to_string()),
                    _ => None,
                },
            }
        };
        let provider = trimmed("provider");
        let model = trimmed("model");
        let mirror =
            provider.as_deref() == Some("openclaw") && model.as_deref() == Some("delivery-mirror");
        // Estimate.
        if (role == Some("user") || role == Some("assistant"))
            && !(role == Some("assistant") && mirror)
        {
            let chars = transcript_content_chars(message.get("content"));
            if chars > 0 {
                est_chars += chars;
                saw_est = true;
                saw_identity |= role == Some("assistant")
                    && (provider.as_deref().is_some_and(|p| !p.is_empty())
                        || model.as_deref().is_some_and(|m| !m.is_empty()));
            }
        }
        // Snapshot.
        if role.is_some() && role != Some("assistant") {
            continue;
        }
        let usage_raw = message
            .get("usage")
            .filter(|u| u.is_object())
            .or_else(|| row.get("usage").filter(|u| u.is_object()));
        let usage = usage_raw.and_then(normalize_usage);
        let total = usage
            .as_ref()
            .and_then(NormalizedUsage::session_total_tokens);
        let cost_usd = usage_raw
            .and_then(|u| u.get("cost"))
            .filter(|c| c.is_object())
            .and_then(|c| c.get("total"))
            .and_then(Value::as_f64)
            .filter(|t| t.is_finite() && *t >= 0.0);
        let meaningful = usage.as_ref().is_some_and(NormalizedUsage::any_positive)
            || total.is_some()
            || cost_usd.is_some();
        let has_identity = provider.as_deref().is_some_and(|p| !p.is_empty())
            || model.as_deref().is_some_and(|m| !m.is_empty());
        if !meaningful && !has_identity {
            continue;
        }
        if mirror && !meaningful {
            continue;
        }
        saw = true;
        if !mirror {
            if let Some(p) = provider.filter(|p| !p.is_empty()) {
                snap.insert("modelProvider".into(), json!(p));
            }
            if let Some(m) = model.filter(|m| !m.is_empty()) {
                snap.insert("model".into(), json!(m));
            }
        }
        if let Some(u) = &usage {
            if let Some(v) = u.input {
                input += v;
                si = true;
            }
            if let Some(v) = u.output {
                output += v;
                so = true;
            }
            if let Some(v) = u.cache_read {
                cr += v;
                scr = true;
            }
            if let Some(v) = u.cache_write {
                cw += v;
                scw = true;
            }
        }
        let cu = usage.as_ref().and_then(|u| u.context_usage.clone());
        let unavailable = cu
            .as_ref()
            .and_then(|c| c.get("state"))
            .and_then(Value::as_str)
            == Some("unavailable");
        match cu {
            Some(c) => {
                snap.insert("contextUsage".into(), c);
            }
            None => {
                snap.shift_remove("contextUsage");
            }
        }
        if unavailable {
            snap.shift_remove("totalTokens");
            snap.shift_remove("totalTokensFresh");
        } else if let Some(t) = total {
            snap.insert("totalTokens".into(), json!(t));
            snap.insert("totalTokensFresh".into(), json!(true));
        }
        if let Some(c) = cost_usd {
            cost += c;
            sc = true;
        }
    }
    if !saw {
        return None;
    }
    if si {
        snap.insert("inputTokens".into(), json!(input));
    }
    if so {
        snap.insert("outputTokens".into(), json!(output));
    }
    if scr {
        snap.insert("cacheRead".into(), json!(cr));
    }
    if scw {
        snap.insert("cacheWrite".into(), json!(cw));
    }
    if sc {
        snap.insert("costUsd".into(), json!(cost));
    }
    if !snap.get("totalTokens").is_some_and(Value::is_number) && saw_est && saw_identity {
        let t = est_chars.div_ceil(4);
        if t > 0 {
            snap.insert("totalTokens".into(), json!(t));
            snap.insert("totalTokensFresh".into(), json!(true));
        }
    }
    // Integral floats print as integers.
    for v in snap.values_mut() {
        if let Some(f) = v.as_f64() {
            if f.fract() == 0.0 && f.abs() < 9e15 && !v.is_boolean() {
                *v = json!(f as i64);
            }
        }
    }
    Some(snap)
}

fn transcript_content_chars(content: Option<&Value>) -> usize {
    let norm = |s: &str| -> usize {
        let stripped = super::history::strip_inline_directive_tags(s);
        let t = js::trim(&stripped);
        if t.is_empty() {
            0
        } else {
            estimate_string_chars(t)
        }
    };
    match content {
        Some(Value::String(s)) => norm(s),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter(|p| p.is_object())
            .filter_map(|p| {
                let text = p.get("text").and_then(Value::as_str)?;
                let t = p.get("type").and_then(Value::as_str).unwrap_or("text");
                matches!(t, "text" | "output_text" | "input_text").then(|| norm(text))
            })
            .sum(),
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimates_follow_the_rules() {
        assert_eq!(
            estimate_tokens(&json!({"role":"user","content":"abcde"})),
            2
        );
        assert_eq!(
            estimate_tokens(
                &json!({"role":"user","content":[{"type":"image"},{"type":"text","text":"ab"}]})
            ),
            1201
        );
        assert_eq!(
            estimate_tokens(
                &json!({"role":"assistant","content":[{"type":"toolCall","name":"read","arguments":{"path":"/x"}}]})
            ),
            5
        );
        let msgs = vec![
            json!({"role":"user","content":"x".repeat(40)}),
            json!({"role":"assistant","content":[],"stopReason":"stop","usage":{"input":10,"output":5,"cacheRead":0,"cacheWrite":0,"totalTokens":0}}),
            json!({"role":"user","content":"abcd"}),
        ];
        let e = estimate_context_tokens(&msgs);
        assert_eq!(e.tokens, 16.0);
        assert_eq!(e.last_usage_index, Some(1));
        assert_eq!(estimate_string_chars("ab漢"), 6);
    }
}
