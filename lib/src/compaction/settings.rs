//! Compaction settings (`transcript.md` §4.1): `agents.defaults.compaction.*` from the
//! config, command-line overrides, the context window, and the effective reserve with its
//! floor and small-window caps (`applyAgentCompactionSettingsFromConfig`).

use serde_json::{Map, Value};

use crate::js;

/// agent-core's default `reserveTokens`.
pub const DEFAULT_RESERVE_TOKENS: u64 = 16_384;
/// agent-core's default `keepRecentTokens`.
pub const DEFAULT_KEEP_RECENT_TOKENS: u64 = 20_000;
/// OpenClaw's default `reserveTokensFloor`.
pub const DEFAULT_RESERVE_TOKENS_FLOOR: u64 = 20_000;
/// The context window when nothing says otherwise (`DEFAULT_CONTEXT_TOKENS`).
pub const DEFAULT_CONTEXT_WINDOW: u64 = 200_000;
/// `MIN_PROMPT_BUDGET_TOKENS`.
const MIN_PROMPT_BUDGET_TOKENS: u64 = 8_000;

/// Values given on the command line, which win over the config.
#[derive(Debug, Clone, Copy, Default)]
pub struct Overrides {
    /// `--context-window`.
    pub context_window: Option<u64>,
    /// `--reserve-tokens`.
    pub reserve_tokens: Option<u64>,
    /// `--reserve-tokens-floor`.
    pub reserve_tokens_floor: Option<u64>,
    /// `--keep-recent-tokens`.
    pub keep_recent_tokens: Option<u64>,
}

/// The compaction mode of the config.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// agent-core's built-in summary (`fromHook:false`).
    Default,
    /// OpenClaw's safeguard extension (`mode: safeguard`, or a `provider`).
    Safeguard,
}

impl Mode {
    /// `default` or `safeguard`.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Default => "default",
            Mode::Safeguard => "safeguard",
        }
    }
}

/// Resolved settings for one session.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// The context window `W` used for the caps and the threshold.
    pub context_window: u64,
    /// Where `W` came from (`option`, `modelsConfig`, `entry`, `default`, `agentContextTokens`).
    pub context_window_source: &'static str,
    /// The configured (or default) reserve before the floor and caps.
    pub configured_reserve_tokens: u64,
    /// The floor after the cap.
    pub reserve_tokens_floor: u64,
    /// The effective reserve.
    pub reserve_tokens: u64,
    /// `keepRecentTokens`.
    pub keep_recent_tokens: u64,
    /// Whether the config sets `keepRecentTokens` (manual compactions then keep the tail
    /// instead of being hardened, as the gateway decides).
    pub keep_recent_explicit: bool,
    /// The mode.
    pub mode: Mode,
    /// `truncateAfterCompaction`.
    pub truncate_after_compaction: bool,
    /// `maxActiveTranscriptBytes` (only when truncation is on and the value is > 0).
    pub max_active_transcript_bytes: Option<u64>,
}

impl Settings {
    /// The threshold `W − reserve`; compaction is due when context tokens exceed it.
    pub fn threshold(&self) -> i64 {
        self.context_window as i64 - self.reserve_tokens as i64
    }

    /// agent-core's `shouldCompact`: strictly greater than the threshold.
    pub fn should_compact(&self, context_tokens: f64) -> bool {
        context_tokens > self.threshold() as f64
    }
}

fn non_negative_int(v: Option<&Value>) -> Option<u64> {
    let f = v?.as_f64()?;
    (f.is_finite() && f >= 0.0).then(|| f.floor() as u64)
}

fn positive_int(v: Option<&Value>) -> Option<u64> {
    let f = v?.as_f64()?;
    (f.is_finite() && f > 0.0).then(|| f.floor() as u64)
}

/// The effective reserve: `minPromptBudget = min(8000, max(1, floor(W/2)))`,
/// `maxReserve = max(0, W − minPromptBudget)`, `floor = min(floor, maxReserve)`,
/// `reserve = min(max(configured, floor), maxReserve)`. Returns (reserve, floor).
pub fn effective_reserve(configured: u64, floor: u64, window: Option<u64>) -> (u64, u64) {
    match window.filter(|w| *w > 0) {
        None => (configured.max(floor), floor),
        Some(w) => {
            let min_prompt = MIN_PROMPT_BUDGET_TOKENS.min((w / 2).max(1));
            let max_reserve = w.saturating_sub(min_prompt);
            let floor = floor.min(max_reserve);
            (configured.max(floor).min(max_reserve), floor)
        }
    }
}

fn window_from_models(config: &Value, entry: Option<&Map<String, Value>>) -> Option<u64> {
    let entry = entry?;
    let provider = entry.get("modelProvider").and_then(Value::as_str)?;
    let model = entry.get("model").and_then(Value::as_str)?;
    let providers = config.get("models")?.get("providers")?.as_object()?;
    let p = providers
        .iter()
        .find(|(k, _)| k.trim().eq_ignore_ascii_case(provider.trim()))?
        .1;
    let m = p.get("models")?.as_array()?.iter().find(|m| {
        m.get("id").and_then(Value::as_str).is_some_and(|id| {
            id == model || id.strip_prefix(&format!("{provider}/")) == Some(model)
        })
    })?;
    positive_int(m.get("contextTokens")).or_else(|| positive_int(m.get("contextWindow")))
}

/// Resolves the settings from the whole config, the session entry (for its model and
/// `contextTokens`) and the command-line overrides.
pub fn resolve(config: &Value, entry: Option<&Map<String, Value>>, o: &Overrides) -> Settings {
    let c = config
        .get("agents")
        .and_then(|a| a.get("defaults"))
        .and_then(|d| d.get("compaction"))
        .cloned()
        .unwrap_or(Value::Null);
    let (mut window, mut source) = match o.context_window.filter(|w| *w > 0) {
        Some(w) => (w, "option"),
        None => match window_from_models(config, entry) {
            Some(w) => (w, "modelsConfig"),
            None => match entry.and_then(|e| positive_int(e.get("contextTokens"))) {
                Some(w) => (w, "entry"),
                None => (DEFAULT_CONTEXT_WINDOW, "default"),
            },
        },
    };
    if o.context_window.is_none() {
        let cap = positive_int(
            config
                .get("agents")
                .and_then(|a| a.get("defaults"))
                .and_then(|d| d.get("contextTokens")),
        );
        if let Some(cap) = cap.filter(|cap| *cap < window) {
            window = cap;
            source = "agentContextTokens";
        }
    }
    let configured = o
        .reserve_tokens
        .or_else(|| non_negative_int(c.get("reserveTokens")))
        .unwrap_or(DEFAULT_RESERVE_TOKENS);
    let floor = o
        .reserve_tokens_floor
        .or_else(|| non_negative_int(c.get("reserveTokensFloor")))
        .unwrap_or(DEFAULT_RESERVE_TOKENS_FLOOR);
    let (reserve, floor) = effective_reserve(configured, floor, Some(window));
    let keep_config = positive_int(c.get("keepRecentTokens"));
    let keep_explicit = keep_config.is_some();
    let keep = o
        .keep_recent_tokens
        .or(keep_config)
        .unwrap_or(DEFAULT_KEEP_RECENT_TOKENS);
    let mode = if c.get("provider").is_some_and(js::truthy)
        || c.get("mode").and_then(Value::as_str) == Some("safeguard")
    {
        Mode::Safeguard
    } else {
        Mode::Default
    };
    let truncate = c.get("truncateAfterCompaction") == Some(&Value::Bool(true));
    let max_bytes = if truncate {
        match c.get("maxActiveTranscriptBytes") {
            Some(Value::Number(n)) => n.as_f64().filter(|f| *f > 0.0).map(|f| f.floor() as u64),
            Some(Value::String(s)) => crate::js::byte_size::parse_byte_size(s).ok(),
            _ => None,
        }
        .filter(|b| *b > 0)
    } else {
        None
    };
    Settings {
        context_window: window,
        context_window_source: source,
        configured_reserve_tokens: configured,
        reserve_tokens_floor: floor,
        reserve_tokens: reserve,
        keep_recent_tokens: keep,
        keep_recent_explicit: keep_explicit,
        mode,
        truncate_after_compaction: truncate,
        max_active_transcript_bytes: max_bytes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reserve_floor_and_caps() {
        assert_eq!(
            effective_reserve(16384, 20000, Some(200_000)),
            (20000, 20000)
        );
        // Small window: W=16000 → minPrompt 8000, maxReserve 8000.
        assert_eq!(effective_reserve(16384, 20000, Some(16_000)), (8000, 8000));
        assert_eq!(effective_reserve(16384, 0, Some(20_000)), (12000, 0));
        assert_eq!(effective_reserve(16384, 0, None), (16384, 0));
        let s = resolve(&json!({}), None, &Overrides::default());
        assert_eq!(s.reserve_tokens, 20000);
        assert_eq!(s.threshold(), 180_000);
        assert!(!s.keep_recent_explicit);
        let s = resolve(
            &json!({"agents":{"defaults":{"contextTokens":50000,"compaction":{"mode":"safeguard","keepRecentTokens":300,"truncateAfterCompaction":true,"maxActiveTranscriptBytes":"2mb"}}}}),
            None,
            &Overrides::default(),
        );
        assert_eq!(s.context_window, 50000);
        assert_eq!(s.mode, Mode::Safeguard);
        assert_eq!(s.keep_recent_tokens, 300);
        assert!(s.keep_recent_explicit);
        assert_eq!(s.max_active_transcript_bytes, Some(2 * 1024 * 1024));
    }
}
