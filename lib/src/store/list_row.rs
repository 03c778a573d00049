//! The row objects of `openclaw sessions --json` (`store.md` §4.11), field for field and in
//! the gateway's order (`toSessionDisplayRow` + `sessionsCommand` of src/commands/sessions.ts).
//!
//! Row shape: `key`, `updatedAt`, `ageMs`, the optional entry copies (omitted when absent),
//! `totalTokens`, `totalTokensFresh`, `model`, `modelProvider`, optional `providerOverride`,
//! `modelOverride`, then `contextTokens`, `agentId`, `acpRuntime`, `agentRuntime`, `kind`
//! and, when it differs from the key, `runtimePolicySessionKey`.
//!
//! Deliberate difference (spec README, decision 6): what the gateway fills from its model
//! catalog, plugin registry or state database comes from the entry or the config only —
//! `contextTokens` is entry → `agents.defaults.contextTokens` → 200000; `acpRuntime` is true
//! when the entry still carries its (pre-database) `acp` metadata object, and `agentRuntime`
//! then reports `{id: acp.backend || "acpx", source: "session-key"}` for ACP keys; the
//! gateway's bundled CLI backends (`claude-cli`, `google-gemini-cli`) are known by name.
//!
//! Sorting, `--active`, `--limit` and the envelope are not here (see `session_list`).

use serde_json::{Map, Value};

use crate::js;
use crate::session::entry_fields::EntryView;
use crate::session::session_key::{
    cli_row_kind, is_acp_key, normalize_agent_id, normalize_chat_type, parse_agent_session_key,
};
use crate::store::normalize::{
    canonicalize_id, coalesce, field, js_number, lower_or_empty, opt_string,
};

/// The default model when neither the entry nor the config names one.
pub const DEFAULT_MODEL: &str = "gpt-5.5";
/// The default model of openclaw 2026.9.6, the gateway of the agent-DB layout.
pub const DEFAULT_MODEL_2026_9: &str = "gpt-6-astra";

/// Which gateway's rows are built: 2026.7's (the files layout) or 2026.9's (the agent
/// DB layout, `agent-db.md` §CLI): a different default model, `visibility`,
/// `totalTokensVersion`, and freshness that needs `totalTokensVersion === 1`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RowGeneration {
    /// openclaw 2026.7 (`sessions.json`).
    #[default]
    Files2026_7,
    /// openclaw 2026.9 (agent database).
    Db2026_9,
}

thread_local! {
    static ROW_DEFAULT_MODEL: std::cell::Cell<&'static str> = const { std::cell::Cell::new(DEFAULT_MODEL) };
}

/// The default model of the generation whose row is being built.
fn default_model() -> &'static str {
    ROW_DEFAULT_MODEL.with(|m| m.get())
}

/// Entry fields 2026.9's `toSessionDisplayRow` copies, in row order (`visibility` and
/// `forkedFromParent` are computed).
const ROW_COPIES_2026_9: &[&str] = &[
    "sessionId",
    "spawnedBy",
    "spawnedWorkspaceDir",
    "spawnedCwd",
    "parentSessionKey",
    "forkedFromParent",
    "spawnDepth",
    "subagentRole",
    "subagentControlScope",
    "sessionStartedAt",
    "lastInteractionAt",
    "label",
    "color",
    "status",
    "visibility",
    "createdActor",
    "owner",
    "participants",
    "participantCount",
    "systemSent",
    "abortedLastRun",
    "thinkingLevel",
    "verboseLevel",
    "traceLevel",
    "reasoningLevel",
    "elevatedLevel",
    "responseUsage",
    "groupActivation",
    "inputTokens",
    "outputTokens",
];
/// The default provider.
pub const DEFAULT_PROVIDER: &str = "openai";
/// The context window reported when neither the entry nor the config sets one.
pub const DEFAULT_CONTEXT_TOKENS: i64 = 200_000;

/// CLI backends bundled with (and enabled by default in) openclaw@2026.7.1.
const BUNDLED_CLI_BACKENDS: &[&str] = &["claude-cli", "google-gemini-cli"];

/// What a row needs besides the entry.
#[derive(Debug, Clone)]
pub struct ListContext {
    /// The agent id of the store being listed (used for keys that are not `agent:<id>:…`).
    pub target_agent_id: String,
    /// The whole config (`Value::Null` when there is none).
    pub config: Value,
    /// Whose rows: 2026.7's or 2026.9's.
    pub generation: RowGeneration,
}

/// The entry fields copied verbatim into a row when present, in row order.
const ROW_COPIES: &[&str] = &[
    "sessionId",
    "sessionFile",
    "spawnedBy",
    "spawnedWorkspaceDir",
    "spawnedCwd",
    "parentSessionKey",
    "forkedFromParent",
    "spawnDepth",
    "subagentRole",
    "subagentControlScope",
    "sessionStartedAt",
    "lastInteractionAt",
    "label",
    "status",
    "systemSent",
    "abortedLastRun",
    "thinkingLevel",
    "verboseLevel",
    "traceLevel",
    "reasoningLevel",
    "elevatedLevel",
    "responseUsage",
    "groupActivation",
    "inputTokens",
    "outputTokens",
];

/// One `openclaw sessions --json` row for `key` → `entry` (an entry already normalised by
/// the store loader), with the clock at `now_ms`.
pub fn list_row<E: EntryView + ?Sized>(
    key: &str,
    entry: &E,
    now_ms: i64,
    ctx: &ListContext,
) -> Map<String, Value> {
    let mut row = MapRow(Map::new());
    write_row(&mut row, key, entry, now_ms, ctx);
    row.0
}

/// A member's value as the row computes it.
#[derive(Debug, Clone, Copy)]
pub enum RowValue<'a> {
    /// A string.
    Text(&'a str),
    /// A JSON value.
    Json(&'a Value),
    /// A boolean.
    Bool(bool),
    /// `null`.
    Null,
    /// `agentRuntime`: `{id, source}`.
    Runtime(&'a str, &'a str),
}

/// Where a row's members go, in row order: a map ([`list_row`]) or JSON text
/// ([`super::row_text`]), so both are built by the one [`write_row`].
pub trait RowSink<E: EntryView + ?Sized> {
    /// A member the row computes.
    fn put(&mut self, name: &'static str, value: RowValue<'_>);
    /// The entry's field `name` copied as it is, when the entry has it.
    fn copy(&mut self, name: &'static str, entry: &E);
}

/// The row as a map.
struct MapRow(Map<String, Value>);

impl<E: EntryView + ?Sized> RowSink<E> for MapRow {
    fn put(&mut self, name: &'static str, value: RowValue<'_>) {
        let v = match value {
            RowValue::Text(s) => Value::String(s.to_string()),
            RowValue::Json(v) => v.clone(),
            RowValue::Bool(b) => Value::Bool(b),
            RowValue::Null => Value::Null,
            RowValue::Runtime(id, source) => {
                let mut runtime = Map::new();
                runtime.insert("id".into(), Value::String(id.to_string()));
                runtime.insert("source".into(), Value::String(source.to_string()));
                Value::Object(runtime)
            }
        };
        self.0.insert(name.to_string(), v);
    }

    fn copy(&mut self, name: &'static str, entry: &E) {
        if let Some(v) = entry.get(name) {
            self.0.insert(name.to_string(), v.clone());
        }
    }
}

/// Puts the members of the row for `key` → `entry` into `row`, in row order (the
/// definition of a row: [`list_row`] and the streaming writer both come here).
pub fn write_row<E: EntryView + ?Sized, S: RowSink<E>>(
    row: &mut S,
    key: &str,
    entry: &E,
    now_ms: i64,
    ctx: &ListContext,
) {
    let model = match ctx.generation {
        RowGeneration::Files2026_7 => DEFAULT_MODEL,
        RowGeneration::Db2026_9 => DEFAULT_MODEL_2026_9,
    };
    let previous = ROW_DEFAULT_MODEL.with(|m| m.replace(model));
    build_row(row, key, entry, now_ms, ctx);
    ROW_DEFAULT_MODEL.with(|m| m.set(previous));
}

fn build_row<E: EntryView + ?Sized, S: RowSink<E>>(
    row: &mut S,
    key: &str,
    entry: &E,
    now_ms: i64,
    ctx: &ListContext,
) {
    let cfg = &ctx.config;
    let db = ctx.generation == RowGeneration::Db2026_9;
    row.put("key", RowValue::Text(key));
    let updated = entry.get("updatedAt").filter(|v| !v.is_null());
    row.put("updatedAt", updated.map_or(RowValue::Null, RowValue::Json));
    let age = match updated {
        Some(Value::Number(n)) if n.as_f64().is_some_and(|f| f != 0.0) => {
            js_number(now_ms as f64 - n.as_f64().unwrap_or(0.0))
        }
        _ => Value::Null,
    };
    row.put("ageMs", RowValue::Json(&age));
    for &name in if db { ROW_COPIES_2026_9 } else { ROW_COPIES } {
        match name {
            "visibility" if db => {
                let shared = Value::from("shared");
                let v = entry.get("visibility").filter(|v| !v.is_null());
                row.put(name, RowValue::Json(v.unwrap_or(&shared)));
            }
            "forkedFromParent" if db => {
                if entry.get("forkSource").is_some()
                    || entry.get("forkedFromParent") == Some(&Value::Bool(true))
                {
                    row.put(name, RowValue::Bool(true));
                }
            }
            _ => row.copy(name, entry),
        }
    }
    let total = entry
        .get("totalTokens")
        .filter(|v| v.as_f64().is_some_and(|f| f.is_finite() && f >= 0.0));
    row.put("totalTokens", total.map_or(RowValue::Null, RowValue::Json));
    let fresh = if db {
        // `resolveFreshSessionTotalTokens`: a total, `totalTokensFresh === true` and
        // `totalTokensVersion === 1`.
        total.is_some()
            && entry.get("totalTokensFresh") == Some(&Value::Bool(true))
            && entry
                .get("totalTokensVersion")
                .and_then(Value::as_f64)
                .is_some_and(|v| v == 1.0)
    } else {
        entry.get("totalTokens").is_some_and(Value::is_number)
            && !matches!(entry.get("totalTokensFresh"), Some(Value::Bool(false)))
    };
    row.put("totalTokensFresh", RowValue::Bool(fresh));
    if db {
        row.copy("totalTokensVersion", entry);
    }

    let agent_id = parse_agent_session_key(key)
        .map(|p| p.agent_id)
        .unwrap_or_else(|| ctx.target_agent_id.clone());
    let acp = entry.get("acp").filter(|v| v.is_object());
    let acp_runtime = acp.is_some();
    let acp_backend = field(acp, "backend").and_then(Value::as_str).unwrap_or("");
    let acp_key = acp_runtime && is_acp_key(key);
    let model_ref = if acp_key {
        let agent = parse_agent_session_key(key)
            .map(|p| p.agent_id)
            .unwrap_or_else(|| normalize_agent_id(&ctx.target_agent_id));
        ModelRef {
            provider: "acpx".into(),
            model: format!("{agent}-acp"),
        }
    } else {
        display_model_ref(cfg, key, entry)
    };
    row.put("model", RowValue::Text(&model_ref.model));
    row.put("modelProvider", RowValue::Text(&model_ref.provider));
    for name in ["providerOverride", "modelOverride"] {
        row.copy(name, entry);
    }
    // `r.contextTokens ?? configured ?? lookupContextTokens(model) ?? (lookupContextTokens(
    // default model) ?? 200000)`: the lookups are the config's own model windows (all the
    // CLI has without loading a catalog).
    let context_tokens = coalesce(
        entry.get("contextTokens"),
        cfg_path(cfg, &["agents", "defaults", "contextTokens"]),
    )
    .cloned()
    .or_else(|| configured_context_window(cfg, &model_ref.model))
    .or_else(|| configured_context_window(cfg, &default_model_ref(cfg, None).model))
    .unwrap_or(Value::from(DEFAULT_CONTEXT_TOKENS));
    row.put("contextTokens", RowValue::Json(&context_tokens));
    row.put("agentId", RowValue::Text(&agent_id));
    row.put("acpRuntime", RowValue::Bool(acp_runtime));
    let (runtime_id, runtime_source) = if acp_key {
        let id = if acp_backend.is_empty() {
            "acpx"
        } else {
            acp_backend
        };
        (id.to_string(), "session-key".to_string())
    } else {
        agent_runtime(cfg, &agent_id, &model_ref)
    };
    row.put(
        "agentRuntime",
        RowValue::Runtime(&runtime_id, &runtime_source),
    );
    row.put("kind", RowValue::Text(cli_row_kind(key, entry)));
    if let Some(k) = runtime_policy_session_key(cfg, key, entry) {
        row.put("runtimePolicySessionKey", RowValue::Text(&k));
    }
}

// ---------------------------------------------------------------------------------------
// Display model (src/commands/sessions-display-model.ts)
// ---------------------------------------------------------------------------------------

/// A provider/model pair as shown in a row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelRef {
    /// The provider id (may be empty when a blank `providerOverride` was stored).
    pub provider: String,
    /// The model id.
    pub model: String,
}

fn cfg_path<'a>(cfg: &'a Value, path: &[&str]) -> Option<&'a Value> {
    let mut v = Some(cfg);
    for p in path {
        v = field(v, p);
    }
    v
}

/// `lookupContextTokens(modelId, {allowAsyncLoad: false})`: the least positive of the
/// context tokens and the context window the config gives the model id
/// (`models.providers.<p>.models[]`, each model's own values else its provider's; a later
/// model of the same id wins, as it overwrites the gateway's cache).
fn configured_context_window(cfg: &Value, model_id: &str) -> Option<Value> {
    if model_id.is_empty() {
        return None;
    }
    let positive = |v: Option<&Value>| v.and_then(Value::as_f64).filter(|f| *f > 0.0);
    let (mut tokens, mut window) = (None, None);
    let providers = cfg_path(cfg, &["models", "providers"]).and_then(Value::as_object);
    for provider in providers.into_iter().flat_map(|p| p.values()) {
        let models = field(Some(provider), "models").and_then(Value::as_array);
        for model in models.into_iter().flatten() {
            if field(Some(model), "id").and_then(Value::as_str) != Some(model_id) {
                continue;
            }
            let number = |k: &str| {
                let own = field(Some(model), k).filter(|v| v.is_number());
                own.or_else(|| field(Some(provider), k).filter(|v| v.is_number()))
            };
            // The configured tokens when positive, else the window (`applyConfiguredContextWindows`).
            match (
                positive(number("contextTokens")),
                positive(number("contextWindow")),
            ) {
                (Some(t), _) => tokens = Some(t),
                (None, Some(w)) => window = Some(w),
                (None, None) => {}
            }
        }
    }
    let least = match (tokens, window) {
        (Some(t), Some(w)) => Some(t.min(w)),
        (t, w) => t.or(w),
    }?;
    Some(js_number(least))
}

/// `parseModelRef(raw, defaultProvider)` of the display module.
fn parse_model_ref(raw: &str, default_provider: &str) -> ModelRef {
    let trimmed = js::trim(raw);
    if trimmed.is_empty() {
        return ModelRef {
            provider: default_provider.into(),
            model: default_model().into(),
        };
    }
    match trimmed.find('/') {
        Some(i) if i > 0 && i + 1 < trimmed.len() => {
            let provider = js::trim(&trimmed[..i]);
            let model = js::trim(&trimmed[i + 1..]);
            ModelRef {
                provider: if provider.is_empty() {
                    default_provider
                } else {
                    provider
                }
                .into(),
                model: if model.is_empty() {
                    default_model()
                } else {
                    model
                }
                .into(),
            }
        }
        _ => ModelRef {
            provider: default_provider.into(),
            model: trimmed.into(),
        },
    }
}

/// `resolvePrimaryStringValue`: a model config given as a string or as `{primary}`.
fn primary_model(v: Option<&Value>) -> Option<String> {
    match v {
        Some(Value::String(_)) => opt_string(v),
        Some(Value::Object(_)) => opt_string(field(v, "primary")),
        _ => None,
    }
}

fn agent_list(cfg: &Value) -> &[Value] {
    match cfg_path(cfg, &["agents", "list"]) {
        Some(Value::Array(a)) => a,
        _ => &[],
    }
}

/// `resolveDefaultModelRef(cfg, agentId)`: the agent's configured model (agent found by
/// exact id), else `agents.defaults.model`, else `gpt-5.5`, with provider `openai`.
fn default_model_ref(cfg: &Value, agent_id: Option<&str>) -> ModelRef {
    let agent_model = agent_id.filter(|a| !a.is_empty()).and_then(|a| {
        agent_list(cfg)
            .iter()
            .find(|e| field(Some(e), "id").and_then(Value::as_str) == Some(a))
            .and_then(|e| primary_model(field(Some(e), "model")))
    });
    let raw = agent_model
        .or_else(|| primary_model(cfg_path(cfg, &["agents", "defaults", "model"])))
        .unwrap_or_else(|| default_model().to_string());
    parse_model_ref(&raw, DEFAULT_PROVIDER)
}

/// The suffix of `s` after its first `idx` UTF-16 units.
fn utf16_suffix(s: &str, idx: usize) -> String {
    let units: Vec<u16> = s.encode_utf16().collect();
    String::from_utf16_lossy(&units[idx.min(units.len())..])
}

/// `normalizeStoredOverrideModel`: trimmed override strings, with a `<provider>/` prefix
/// removed from the model when it repeats the provider.
fn stored_override<E: EntryView + ?Sized>(entry: &E) -> (Option<String>, Option<String>) {
    let trimmed = |k: &str| {
        entry
            .get(k)
            .and_then(Value::as_str)
            .map(|s| js::trim(s).to_string())
    };
    let provider = trimmed("providerOverride");
    let model = trimmed("modelOverride");
    match (&provider, &model) {
        (Some(p), Some(m)) if !p.is_empty() && !m.is_empty() => {
            let prefix = format!("{}/", js::to_lower_case(p));
            let model = if js::to_lower_case(m).starts_with(&prefix) {
                let rest = utf16_suffix(m, js::utf16_len(p) + 1);
                let rest = js::trim(&rest);
                if rest.is_empty() {
                    m.clone()
                } else {
                    rest.to_string()
                }
            } else {
                m.clone()
            };
            (provider, Some(model))
        }
        _ => (provider, model),
    }
}

/// `resolveSessionDisplayModelRef(cfg, row)`: the override, else the runtime model, else the
/// configured default of the key's agent.
pub fn display_model_ref<E: EntryView + ?Sized>(cfg: &Value, key: &str, entry: &E) -> ModelRef {
    let agent = key
        .strip_prefix("agent:")
        .map(|rest| rest.split(':').next().unwrap_or(""));
    let default_ref = default_model_ref(cfg, agent);
    let (provider_override, model_override) = stored_override(entry);
    if let Some(m) = model_override.filter(|m| !m.is_empty()) {
        let p = provider_override.unwrap_or_else(|| default_ref.provider.clone());
        return parse_model_ref(&m, &p);
    }
    match entry.get("model") {
        Some(Value::String(m)) if !m.is_empty() => {
            let provider = entry
                .get("modelProvider")
                .and_then(Value::as_str)
                .unwrap_or(&default_ref.provider);
            normalize_cli_runtime_display_ref(cfg, parse_model_ref(m, provider), &default_ref)
        }
        _ => default_ref,
    }
}

/// `isCliProvider`: a configured `agents.defaults.cliBackends` key or a bundled CLI backend.
fn is_cli_provider(provider: &str, cfg: &Value) -> bool {
    let n = js::to_lower_case(js::trim(provider));
    if let Some(Value::Object(b)) = cfg_path(cfg, &["agents", "defaults", "cliBackends"]) {
        if b.keys().any(|k| js::to_lower_case(js::trim(k)) == n) {
            return true;
        }
    }
    BUNDLED_CLI_BACKENDS.contains(&n.as_str())
}

/// `inferUniqueProviderFromConfiguredModels` (provider aliases of the model catalog are not
/// applied: config only).
fn infer_unique_provider(cfg: &Value, model: &str) -> Option<String> {
    let model = js::trim(model);
    if model.is_empty() {
        return None;
    }
    let normalized = js::to_lower_case(model);
    let mut providers: Vec<String> = Vec::new();
    let add = |p: &str, providers: &mut Vec<String>| {
        let p = js::to_lower_case(js::trim(p));
        if !p.is_empty() && !providers.contains(&p) {
            providers.push(p);
        }
    };
    if let Some(Value::Object(models)) = cfg_path(cfg, &["agents", "defaults", "models"]) {
        for key in models.keys() {
            let r = js::trim(key);
            if r.is_empty() || !r.contains('/') || r.ends_with("/*") {
                continue;
            }
            let parsed = parse_model_ref(r, DEFAULT_PROVIDER);
            if parsed.model == model || js::to_lower_case(&parsed.model) == normalized {
                add(&parsed.provider, &mut providers);
                if providers.len() > 1 {
                    return None;
                }
            }
        }
    }
    if let Some(Value::Object(configured)) = cfg_path(cfg, &["models", "providers"]) {
        for (provider_id, pc) in configured {
            if let Some(Value::Array(models)) = field(Some(pc), "models") {
                for m in models {
                    let Some(id) = field(Some(m), "id").and_then(Value::as_str) else {
                        continue;
                    };
                    let id = js::trim(id);
                    if !id.is_empty() && (id == model || js::to_lower_case(id) == normalized) {
                        add(provider_id, &mut providers);
                    }
                }
            }
            if providers.len() > 1 {
                return None;
            }
        }
    }
    (providers.len() == 1).then(|| providers.remove(0))
}

/// `normalizeCliRuntimeDisplayRef`: a runtime model recorded under a CLI backend provider is
/// shown under the real provider when one can be told.
fn normalize_cli_runtime_display_ref(cfg: &Value, r: ModelRef, default_ref: &ModelRef) -> ModelRef {
    if !is_cli_provider(&r.provider, cfg) {
        return r;
    }
    if r.model.contains('/') {
        let parsed = parse_model_ref(&r.model, &default_ref.provider);
        if !is_cli_provider(&parsed.provider, cfg) {
            return parsed;
        }
    }
    if let Some(p) = infer_unique_provider(cfg, &r.model) {
        if !is_cli_provider(&p, cfg) {
            return ModelRef {
                provider: p,
                model: r.model,
            };
        }
    }
    let parsed = parse_model_ref(&r.model, &default_ref.provider);
    if !is_cli_provider(&parsed.provider, cfg) {
        return parsed;
    }
    ModelRef {
        provider: if default_ref.provider.is_empty() {
            r.provider
        } else {
            default_ref.provider.clone()
        },
        model: if parsed.model.is_empty() {
            r.model
        } else {
            parsed.model
        },
    }
}

/// The model a session of `agent_id` uses as (provider, model): the entry's override, else
/// its runtime model/provider, else the agent's configured default (a config-only take on
/// the gateway's `resolveSessionModelRef`). `_allow_plugin_normalization` is accepted for
/// parity with the gateway's signature; catalog normalisation is not applied.
pub fn resolve_model_ref(
    cfg: &Value,
    entry: Option<&Map<String, Value>>,
    agent_id: &str,
    _allow_plugin_normalization: bool,
) -> (Option<String>, Option<String>) {
    let get = |k: &str| entry.and_then(|e| opt_string(e.get(k)));
    let (po, mo) = match entry {
        Some(e) => stored_override(e),
        None => (None, None),
    };
    let (po, mo) = (po.filter(|p| !p.is_empty()), mo.filter(|m| !m.is_empty()));
    if let (Some(p), Some(m)) = (&po, &mo) {
        return (Some(p.clone()), Some(m.clone()));
    }
    if let (Some(p), Some(m)) = (get("modelProvider"), get("model")) {
        return (Some(p), Some(m));
    }
    let d = default_model_for_agent(cfg, agent_id);
    if let Some(m) = mo {
        let r = parse_model_ref(&m, &d.provider);
        return (Some(r.provider), Some(r.model));
    }
    if let Some(m) = get("model") {
        let p = get("modelProvider").unwrap_or_else(|| d.provider.clone());
        let r = parse_model_ref(&m, &p);
        return (Some(r.provider), Some(r.model));
    }
    (Some(d.provider), Some(d.model))
}

/// `resolveDefaultModelForAgent` from the config alone: the agent's model (agent matched by
/// normalised id), else `agents.defaults.model` (a bare model id gets the provider the
/// configured models agree on, else `openai`), else the first configured provider's first
/// model (unless an `openai` provider is configured), else openai/gpt-5.5. Model aliases
/// and catalog normalisation are not applied.
fn default_model_for_agent(cfg: &Value, agent_id: &str) -> ModelRef {
    let wanted = normalize_agent_id(agent_id);
    let agent_model = agent_list(cfg)
        .iter()
        .filter(|e| e.is_object())
        .find(|e| {
            normalize_agent_id(field(Some(e), "id").and_then(Value::as_str).unwrap_or("")) == wanted
        })
        .and_then(|e| primary_model(field(Some(e), "model")));
    let raw =
        agent_model.or_else(|| primary_model(cfg_path(cfg, &["agents", "defaults", "model"])));
    if let Some(raw) = raw {
        if let Some((provider, model)) = parse_catalog_ref(&raw) {
            return ModelRef { provider, model };
        }
        if !raw.contains('/') {
            let provider =
                infer_unique_provider(cfg, &raw).unwrap_or_else(|| DEFAULT_PROVIDER.into());
            return ModelRef {
                provider,
                model: raw,
            };
        }
    }
    if let Some(Value::Object(providers)) = cfg_path(cfg, &["models", "providers"]) {
        let has_default = providers.get(DEFAULT_PROVIDER).is_some_and(js::truthy);
        if !has_default {
            for (provider, pc) in providers {
                let first = match field(Some(pc), "models") {
                    Some(Value::Array(models)) => models.first(),
                    _ => None,
                };
                if let Some(id) = field(first, "id").filter(|v| js::truthy(v)) {
                    let model = id
                        .as_str()
                        .map(str::to_string)
                        .unwrap_or_else(|| id.to_string());
                    return ModelRef {
                        provider: provider.clone(),
                        model,
                    };
                }
            }
        }
    }
    ModelRef {
        provider: DEFAULT_PROVIDER.into(),
        model: default_model().into(),
    }
}

// ---------------------------------------------------------------------------------------
// Agent runtime (src/agents/agent-runtime-metadata.ts, harness/policy.ts,
// model-runtime-policy.ts, openai-routing.ts)
// ---------------------------------------------------------------------------------------

/// `{id, source}` of `resolveModelAgentRuntimeMetadata` for a non-ACP row.
fn agent_runtime(cfg: &Value, agent_id: &str, display: &ModelRef) -> (String, String) {
    let resolved = if !display.provider.is_empty() && !display.model.is_empty() {
        display.clone()
    } else {
        default_model_for_agent(cfg, agent_id)
    };
    let (policy, source) =
        resolve_model_runtime_policy(cfg, &resolved.provider, &resolved.model, agent_id);
    let configured = policy
        .and_then(|p| field(Some(p), "id"))
        .and_then(Value::as_str)
        .and_then(normalize_runtime_id);
    let source = source.unwrap_or("implicit").to_string();
    let runtime = match configured {
        Some(r) if r != "default" => r,
        _ => "auto".to_string(),
    };
    if runtime == "auto" && openai_uses_codex_by_default(&resolved.provider, cfg) {
        return ("codex".into(), source);
    }
    (runtime, source)
}

/// `normalizeOptionalAgentRuntimeId`.
fn normalize_runtime_id(raw: &str) -> Option<String> {
    let v = js::to_lower_case(js::trim(raw));
    if v.is_empty() {
        return None;
    }
    Some(match v.as_str() {
        "openclaw" | "pi" => "openclaw".into(),
        "codex-app-server" => "codex".into(),
        _ => v,
    })
}

fn has_runtime_policy(v: Option<&Value>) -> bool {
    field(v, "id")
        .and_then(Value::as_str)
        .is_some_and(|s| !js::trim(s).is_empty())
}

/// `parseModelCatalogRef`: `provider/model`, provider lower-cased.
fn parse_catalog_ref(value: &str) -> Option<(String, String)> {
    let trimmed = js::trim(value);
    let i = trimmed.find('/')?;
    if i == 0 || i + 1 >= trimmed.len() {
        return None;
    }
    let provider = js::trim(&trimmed[..i]);
    let model = js::trim(&trimmed[i + 1..]);
    (!provider.is_empty() && !model.is_empty())
        .then(|| (js::to_lower_case(provider), model.to_string()))
}

/// `normalizeModelIdForProvider`.
fn model_id_for_provider(provider: Option<&str>, model_id: &str) -> Option<String> {
    let trimmed = js::trim(model_id);
    if trimmed.is_empty() {
        return None;
    }
    let Some(i) = trimmed.find('/').filter(|&i| i > 0) else {
        return Some(trimmed.to_string());
    };
    let model_provider = js::to_lower_case(js::trim(&trimmed[..i]));
    let expected = js::to_lower_case(js::trim(provider.unwrap_or("")));
    if !expected.is_empty() && model_provider != expected {
        return None;
    }
    let rest = js::trim(&trimmed[i + 1..]);
    (!rest.is_empty()).then(|| rest.to_string())
}

#[derive(PartialEq, Eq, Clone, Copy)]
enum MatchKind {
    Exact,
    Wildcard,
    None,
}

fn match_kind(entry_id: &str, provider: Option<&str>, model_id: &str) -> MatchKind {
    let entry_id = js::trim(entry_id);
    if entry_id == model_id {
        return MatchKind::Exact;
    }
    let Some((p, m)) = parse_catalog_ref(entry_id) else {
        return MatchKind::None;
    };
    let caller = js::to_lower_case(js::trim(provider.unwrap_or("")));
    if !caller.is_empty() && p != caller {
        return MatchKind::None;
    }
    if m == model_id {
        MatchKind::Exact
    } else if m == "*" {
        MatchKind::Wildcard
    } else {
        MatchKind::None
    }
}

struct PolicyMatch<'a> {
    policy: Option<&'a Value>,
    ambiguous: bool,
}

/// `resolveAgentModelEntryRuntimePolicy`: `agentRuntime` of a matching
/// `agents.list[].models` / `agents.defaults.models` key.
fn agent_model_entry_policy<'a>(
    cfg: &'a Value,
    provider: Option<&str>,
    model_id: &str,
    agent_id: &str,
    kind: MatchKind,
) -> PolicyMatch<'a> {
    let none = PolicyMatch {
        policy: None,
        ambiguous: false,
    };
    let mid = model_id_for_provider(provider, model_id);
    if mid.is_none() && kind != MatchKind::Wildcard {
        return none;
    }
    let session_agent = normalize_agent_id(&js::to_lower_case(js::trim(agent_id)));
    let agent_models = agent_list(cfg)
        .iter()
        .filter(|e| e.is_object())
        .find(|e| {
            normalize_agent_id(field(Some(e), "id").and_then(Value::as_str).unwrap_or(""))
                == session_agent
        })
        .and_then(|e| field(Some(e), "models"));
    let caller = js::to_lower_case(js::trim(provider.unwrap_or("")));
    for models in [
        agent_models,
        cfg_path(cfg, &["agents", "defaults", "models"]),
    ] {
        let Some(Value::Object(models)) = models else {
            continue;
        };
        let mut matches: Vec<(String, &Value)> = Vec::new();
        for (key, entry) in models {
            let hit = match &mid {
                Some(m) => match_kind(key, provider, m) == kind,
                None => parse_catalog_ref(key)
                    .is_some_and(|(p, m)| m == "*" && (caller.is_empty() || p == caller)),
            };
            let policy = field(Some(entry), "agentRuntime");
            if !hit || !js::truthy(policy.unwrap_or(&Value::Null)) || !has_runtime_policy(policy) {
                continue;
            }
            let p = parse_catalog_ref(key).map(|(p, _)| p).unwrap_or_default();
            matches.push((p, policy.unwrap_or(&Value::Null)));
        }
        let provider_matches: Vec<&(String, &Value)> = if caller.is_empty() {
            Vec::new()
        } else {
            matches.iter().filter(|(p, _)| *p == caller).collect()
        };
        let candidates: Vec<&(String, &Value)> = if provider_matches.is_empty() {
            matches.iter().collect()
        } else {
            provider_matches
        };
        let Some(first) = candidates.first() else {
            continue;
        };
        if caller.is_empty() && candidates.iter().any(|(p, _)| *p != first.0) {
            return PolicyMatch {
                policy: None,
                ambiguous: true,
            };
        }
        return PolicyMatch {
            policy: Some(first.1),
            ambiguous: false,
        };
    }
    none
}

/// `resolveProviderConfig`: `models.providers[provider]`, else the first whose id normalises equal.
fn provider_config<'a>(cfg: &'a Value, provider: Option<&str>) -> Option<&'a Value> {
    let Some(Value::Object(providers)) = cfg_path(cfg, &["models", "providers"]) else {
        return None;
    };
    let provider = provider.filter(|p| !js::trim(p).is_empty())?;
    if let Some(direct) = providers.get(provider).filter(|v| js::truthy(v)) {
        return Some(direct);
    }
    let n = js::to_lower_case(js::trim(provider));
    providers
        .iter()
        .find(|(k, _)| js::to_lower_case(js::trim(k)) == n)
        .map(|(_, v)| v)
}

/// `resolveModelRuntimePolicy`: the configured runtime policy and its source.
fn resolve_model_runtime_policy<'a>(
    cfg: &'a Value,
    provider: &str,
    model_id: &str,
    agent_id: &str,
) -> (Option<&'a Value>, Option<&'static str>) {
    let caller = js::to_lower_case(js::trim(provider));
    let effective = if caller.is_empty() {
        parse_catalog_ref(js::trim(model_id)).map(|(p, _)| p)
    } else {
        Some(caller)
    };
    let eff = effective.as_deref();
    let exact = agent_model_entry_policy(cfg, eff, model_id, agent_id, MatchKind::Exact);
    if exact.ambiguous {
        return (None, None);
    }
    if exact.policy.is_some() {
        return (exact.policy, Some("model"));
    }
    let pc = provider_config(cfg, eff);
    if let (Some(mid), Some(Value::Array(models))) =
        (model_id_for_provider(eff, model_id), field(pc, "models"))
    {
        let model_config = models.iter().find(|m| {
            field(Some(m), "id")
                .and_then(Value::as_str)
                .is_some_and(|id| match_kind(id, eff, &mid) == MatchKind::Exact)
        });
        let runtime = field(model_config, "agentRuntime");
        if has_runtime_policy(runtime) {
            return (runtime, Some("model"));
        }
    }
    let wildcard = agent_model_entry_policy(cfg, eff, model_id, agent_id, MatchKind::Wildcard);
    if wildcard.policy.is_some() {
        return (wildcard.policy, Some("model"));
    }
    let runtime = field(pc, "agentRuntime");
    if has_runtime_policy(runtime) {
        return (runtime, Some("provider"));
    }
    (None, None)
}

/// `openAIProviderUsesCodexRuntimeByDefault`: provider `openai` without a custom base URL.
fn openai_uses_codex_by_default(provider: &str, cfg: &Value) -> bool {
    if js::to_lower_case(js::trim(provider)) != "openai" {
        return false;
    }
    let base_url = provider_config_exact_or_normalized(cfg, "openai")
        .and_then(|pc| field(Some(pc), "baseUrl"));
    match base_url {
        Some(Value::String(u)) if !js::trim(u).is_empty() => is_official_openai_url(js::trim(u)),
        _ => true,
    }
}

fn provider_config_exact_or_normalized<'a>(cfg: &'a Value, id: &str) -> Option<&'a Value> {
    let Some(Value::Object(providers)) = cfg_path(cfg, &["models", "providers"]) else {
        return None;
    };
    if let Some(direct) = providers.get(id).filter(|v| js::truthy(v)) {
        return Some(direct);
    }
    providers
        .iter()
        .find(|(k, _)| js::to_lower_case(js::trim(k)) == id)
        .map(|(_, v)| v)
}

/// `isOfficialOpenAIBaseUrl` for a non-blank URL: `https:` to host `api.openai.com` with
/// path `/` or `/v1` (WHATWG parsing, reduced to what such a URL can look like).
fn is_official_openai_url(url: &str) -> bool {
    let Some(colon) = url.find(':') else {
        return false;
    };
    if !url[..colon].eq_ignore_ascii_case("https") {
        return false;
    }
    let rest = url[colon + 1..].replace('\\', "/");
    let rest = rest.trim_start_matches('/');
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..end];
    let host_port = authority.rsplit('@').next().unwrap_or("");
    let host = match host_port.rfind(':') {
        Some(i) if !host_port.starts_with('[') || host_port[..i].ends_with(']') => {
            let port = &host_port[i + 1..];
            if !port.bytes().all(|b| b.is_ascii_digit()) {
                return false;
            }
            &host_port[..i]
        }
        _ => host_port,
    };
    let path_end = rest[end..].find(['?', '#']).map_or(rest.len(), |i| end + i);
    let path = &rest[end..path_end];
    host.eq_ignore_ascii_case("api.openai.com") && matches!(path, "" | "/" | "/v1" | "/v1/")
}

// ---------------------------------------------------------------------------------------
// runtimePolicySessionKey (src/commands/sessions.ts resolveDisplayRuntimePolicySessionKey,
// src/auto-reply/reply/runtime-policy-session-key.ts, src/routing/session-key.ts)
// ---------------------------------------------------------------------------------------

/// `stripChannelRecipientPrefix`: `<channel>:<id>[:topic:…]` → `<id>` (indices in UTF-16).
fn strip_channel_recipient_prefix(value: Option<&str>, channel: Option<&str>) -> Option<String> {
    let raw = value.map(js::trim).filter(|s| !s.is_empty())?;
    let Some(channel) = channel
        .map(|c| js::to_lower_case(js::trim(c)))
        .filter(|c| !c.is_empty())
    else {
        return Some(raw.to_string());
    };
    let prefix = format!("{channel}:");
    if !js::to_lower_case(raw).starts_with(&prefix) {
        return Some(raw.to_string());
    }
    let stripped = utf16_suffix(raw, js::utf16_len(&prefix));
    let lowered = js::to_lower_case(&stripped);
    match lowered.find(":topic:") {
        Some(b) => {
            let idx = js::utf16_len(&lowered[..b]);
            let units: Vec<u16> = stripped.encode_utf16().collect();
            Some(String::from_utf16_lossy(&units[..idx.min(units.len())]))
        }
        None => Some(stripped),
    }
}

/// `isMainSessionAlias` of the runtime-policy module. The gateway's runtime config forces
/// `session.mainKey` to `main` (`applySessionDefaults` warns "session.mainKey is ignored"),
/// so the configured value plays no part.
fn is_main_session_alias(cfg: &Value, agent_id: &str, session_key: &str) -> bool {
    let raw = js::to_lower_case(js::trim(session_key));
    if raw.is_empty() {
        return false;
    }
    let agent = normalize_agent_id(agent_id);
    let global = cfg_path(cfg, &["session", "scope"]).and_then(Value::as_str) == Some("global");
    raw == "main"
        || raw == format!("agent:{agent}:main")
        || raw == "agent:main:main"
        || (global && raw == "global")
}

/// `resolveLinkedPeerId`: the canonical name of an `identityLinks` group naming the peer.
fn linked_peer_id(identity_links: Option<&Value>, channel: &str, peer_id: &str) -> Option<String> {
    let Some(Value::Object(links)) = identity_links else {
        return None;
    };
    let peer = js::trim(peer_id);
    if peer.is_empty() {
        return None;
    }
    let mut candidates = vec![js::to_lower_case(peer)];
    let ch = js::to_lower_case(js::trim(channel));
    if !ch.is_empty() {
        candidates.push(js::to_lower_case(js::trim(&format!("{ch}:{peer}"))));
    }
    for (canonical, ids) in links {
        let name = js::trim(canonical);
        if name.is_empty() {
            continue;
        }
        let Value::Array(ids) = ids else {
            continue;
        };
        for id in ids {
            let n = lower_or_empty(Some(id));
            if !n.is_empty() && candidates.contains(&n) {
                return Some(name.to_string());
            }
        }
    }
    None
}

/// `normalizeAccountId` (routing): blank or unusable → `default`.
fn normalize_account_id(value: Option<&str>) -> String {
    let trimmed = js::trim(value.unwrap_or(""));
    if trimmed.is_empty() {
        return "default".into();
    }
    let c = canonicalize_id(trimmed);
    if c.is_empty() || matches!(c.as_str(), "__proto__" | "prototype" | "constructor") {
        "default".into()
    } else {
        c
    }
}

/// The row's `runtimePolicySessionKey`: for a direct chat on a main-session alias, the
/// per-account-channel-peer DM key the runtime applies policies under; `None` when that is
/// the key itself.
pub fn runtime_policy_session_key<E: EntryView + ?Sized>(
    cfg: &Value,
    key: &str,
    entry: &E,
) -> Option<String> {
    let origin = entry.get("origin");
    let delivery = entry.get("deliveryContext");
    let chat_type = coalesce(field(origin, "chatType"), entry.get("chatType"))
        .and_then(Value::as_str)
        .and_then(normalize_chat_type);
    if chat_type != Some("direct") {
        return None;
    }
    let first = |vals: &[Option<&Value>]| -> Option<String> {
        let mut acc: Option<&Value> = None;
        for v in vals {
            acc = coalesce(acc, *v);
        }
        opt_string(acc)
    };
    let channel = first(&[
        field(origin, "provider"),
        field(delivery, "channel"),
        entry.get("lastChannel"),
        entry.get("channel"),
        field(origin, "surface"),
    ]);
    let to = first(&[
        field(origin, "to"),
        field(delivery, "to"),
        entry.get("lastTo"),
    ]);
    let from = opt_string(field(origin, "from"));
    let native = opt_string(field(origin, "nativeDirectUserId"));
    let surface = opt_string(field(origin, "surface"));
    let account = first(&[
        field(origin, "accountId"),
        field(delivery, "accountId"),
        entry.get("lastAccountId"),
    ]);
    let sender = native
        .clone()
        .or_else(|| strip_channel_recipient_prefix(to.as_deref(), channel.as_deref()))
        .or_else(|| strip_channel_recipient_prefix(from.as_deref(), channel.as_deref()));

    // resolveRuntimePolicySessionKey
    let session_key = js::trim(key);
    if session_key.is_empty() {
        return None;
    }
    let agent_id = normalize_agent_id(
        &parse_agent_session_key(session_key)
            .map(|p| p.agent_id)
            .unwrap_or_else(|| "main".into()),
    );
    let resolved = if !is_main_session_alias(cfg, &agent_id, session_key) {
        session_key.to_string()
    } else {
        let policy_channel = channel
            .clone()
            .or(surface)
            .map(|c| js::to_lower_case(&c))
            .filter(|c| !c.is_empty() && c != "webchat");
        let peer = native
            .or(sender)
            .or_else(|| to.clone())
            .or(from)
            .or(to)
            .map(|p| js::trim(&p).to_string())
            .filter(|p| !p.is_empty());
        match (policy_channel, peer) {
            (Some(ch), Some(peer)) => {
                let links = cfg_path(cfg, &["session", "identityLinks"]);
                let peer_id = linked_peer_id(links, &ch, &peer).unwrap_or(peer);
                let peer_id = js::to_lower_case(js::trim(&peer_id));
                if peer_id.is_empty() {
                    format!("agent:{agent_id}:main")
                } else {
                    let ch = js::to_lower_case(js::trim(&ch));
                    let ch = if ch.is_empty() {
                        "unknown".to_string()
                    } else {
                        ch
                    };
                    format!(
                        "agent:{agent_id}:{ch}:{}:direct:{peer_id}",
                        normalize_account_id(account.as_deref())
                    )
                }
            }
            _ => session_key.to_string(),
        }
    };
    (resolved != key).then_some(resolved)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `lookupContextTokens` from the config alone: the model's own tokens before its
    /// provider's, the least of tokens and window, a later model of the same id winning.
    #[test]
    fn context_windows_come_from_the_configured_models() {
        let cfg = json!({"models": {"providers": {
            "a": {"contextWindow": 50000, "models": [{"id": "m1"}, {"id": "m2", "contextTokens": 8000}]},
            "b": {"models": [{"id": "m3", "contextWindow": 0}, {"id": "m2", "contextWindow": 6000}]},
        }}});
        assert_eq!(configured_context_window(&cfg, "m1"), Some(json!(50000)));
        assert_eq!(configured_context_window(&cfg, "m2"), Some(json!(6000)));
        assert_eq!(configured_context_window(&cfg, "m3"), None);
        assert_eq!(configured_context_window(&cfg, "nope"), None);
        assert_eq!(configured_context_window(&json!({}), "m1"), None);
    }
    use serde_json::json;

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    fn ctx() -> ListContext {
        ListContext {
            target_agent_id: "main".into(),
            config: Value::Null,
            generation: RowGeneration::default(),
        }
    }

    fn row(key: &str, entry: Value) -> String {
        serde_json::to_string(&Value::Object(list_row(
            key,
            &obj(entry),
            1_000_000,
            &ctx(),
        )))
        .unwrap()
    }

    /// E1 defaults: gpt-5.5/openai, 200000 context, null tokens, codex runtime, agent from
    /// the key (lower-cased) or the target, unknown fields not shown.
    #[test]
    fn e1_row_defaults() {
        assert_eq!(
            row("noupdated", json!({"customField": 1})),
            r#"{"key":"noupdated","updatedAt":null,"ageMs":null,"totalTokens":null,"totalTokensFresh":false,"model":"gpt-5.5","modelProvider":"openai","contextTokens":200000,"agentId":"main","acpRuntime":false,"agentRuntime":{"id":"codex","source":"implicit"},"kind":"direct"}"#
        );
        assert!(
            row("Agent:Main:MixedCase", json!({"updatedAt": 1})).contains(r#""agentId":"main""#)
        );
        let work = row("agent:work:main", json!({"updatedAt": 999_000}));
        assert!(work.contains(r#""ageMs":1000,"#));
        assert!(work.contains(r#""agentId":"work""#));
        assert_eq!(
            row(
                "agent:main:x",
                json!({"sessionId": "x1", "updatedAt": 5, "modelProvider": "anthropic",
                "model": "claude-x", "totalTokens": 5, "label": null, "providerOverride": " ", "contextTokens": 9})
            ),
            r#"{"key":"agent:main:x","updatedAt":5,"ageMs":999995,"sessionId":"x1","label":null,"totalTokens":5,"totalTokensFresh":true,"model":"claude-x","modelProvider":"anthropic","providerOverride":" ","contextTokens":9,"agentId":"main","acpRuntime":false,"agentRuntime":{"id":"auto","source":"implicit"},"kind":"direct"}"#
        );
    }

    #[test]
    fn kinds_in_rows() {
        for (key, entry, kind) in [
            ("agent:main:cron:job1", json!({}), "cron"),
            (
                "agent:main:subagent:x",
                json!({"spawnedBy": "agent:main:main"}),
                "spawn-child",
            ),
            ("agent:main:telegram:group:-1", json!({}), "group"),
            ("x", json!({"chatType": "channel"}), "group"),
            ("global", json!({}), "global"),
            ("unknown", json!({}), "unknown"),
            ("cron:legacy", json!({}), "direct"),
        ] {
            assert!(
                row(key, entry).contains(&format!(r#""kind":"{kind}""#)),
                "{key}"
            );
        }
    }

    #[test]
    fn runtime_policy_key() {
        let e = obj(
            json!({"chatType": "direct", "origin": {"provider": "telegram", "to": "telegram:12345"}}),
        );
        assert_eq!(
            runtime_policy_session_key(&Value::Null, "agent:main:main", &e).as_deref(),
            Some("agent:main:telegram:default:direct:12345")
        );
        // not a main alias: the (trimmed) key itself, so nothing when equal
        assert_eq!(
            runtime_policy_session_key(&Value::Null, "agent:main:x", &e),
            None
        );
        assert_eq!(
            runtime_policy_session_key(&Value::Null, " agent:main:x ", &e).as_deref(),
            Some("agent:main:x")
        );
        // group chats have none
        let g = obj(json!({"chatType": "group", "lastChannel": "telegram", "lastTo": "1"}));
        assert_eq!(
            runtime_policy_session_key(&Value::Null, "agent:main:main", &g),
            None
        );
        // topic suffix stripped, account from lastAccountId, identity link applied
        let t = obj(
            json!({"chatType": "dm", "lastChannel": "Telegram", "lastTo": "telegram:42:topic:7",
            "lastAccountId": "Acc 1"}),
        );
        assert_eq!(
            runtime_policy_session_key(&Value::Null, "main", &t).as_deref(),
            Some("agent:main:telegram:acc-1:direct:42")
        );
        let cfg = json!({"session": {"identityLinks": {"Bob": ["telegram:42"]}}});
        assert_eq!(
            runtime_policy_session_key(&cfg, "main", &t).as_deref(),
            Some("agent:main:telegram:acc-1:direct:bob")
        );
    }

    #[test]
    fn display_models() {
        let cfg = json!({"agents": {"defaults": {"model": {"primary": "anthropic/claude-9"}},
            "list": [{"id": "work", "model": "google/gemini-x"}]}});
        let m = |key: &str, e: Value| display_model_ref(&cfg, key, &obj(e));
        assert_eq!(
            m("agent:main:x", json!({})),
            ModelRef {
                provider: "anthropic".into(),
                model: "claude-9".into()
            }
        );
        assert_eq!(
            m("agent:work:x", json!({})),
            ModelRef {
                provider: "google".into(),
                model: "gemini-x".into()
            }
        );
        assert_eq!(
            m(
                "x",
                json!({"providerOverride": "OpenAI", "modelOverride": "openai/gpt-x"})
            ),
            ModelRef {
                provider: "OpenAI".into(),
                model: "gpt-x".into()
            }
        );
        assert_eq!(
            m("x", json!({"modelOverride": "p/m"})),
            ModelRef {
                provider: "p".into(),
                model: "m".into()
            }
        );
        assert_eq!(
            m(
                "x",
                json!({"model": "claude-sonnet", "modelProvider": "claude-cli"})
            ),
            ModelRef {
                provider: "anthropic".into(),
                model: "claude-sonnet".into()
            }
        );
    }

    #[test]
    fn runtimes() {
        let none = Value::Null;
        let r = |cfg: &Value, p: &str, m: &str| {
            agent_runtime(
                cfg,
                "main",
                &ModelRef {
                    provider: p.into(),
                    model: m.into(),
                },
            )
        };
        assert_eq!(
            r(&none, "openai", "gpt"),
            ("codex".into(), "implicit".into())
        );
        assert_eq!(
            r(&none, "anthropic", "c"),
            ("auto".into(), "implicit".into())
        );
        let custom =
            json!({"models": {"providers": {"openai": {"baseUrl": "https://proxy.example/v1"}}}});
        assert_eq!(
            r(&custom, "openai", "gpt"),
            ("auto".into(), "implicit".into())
        );
        let official =
            json!({"models": {"providers": {"openai": {"baseUrl": "https://API.openai.com/v1/"}}}});
        assert_eq!(
            r(&official, "openai", "gpt"),
            ("codex".into(), "implicit".into())
        );
        let model_policy = json!({"agents": {"defaults": {"models": {"anthropic/c": {"agentRuntime": {"id": "PI"}}}}}});
        assert_eq!(
            r(&model_policy, "anthropic", "c"),
            ("openclaw".into(), "model".into())
        );
        let provider_policy = json!({"models": {"providers": {"anthropic": {"agentRuntime": {"id": "codex-app-server"}}}}});
        assert_eq!(
            r(&provider_policy, "Anthropic", "c"),
            ("codex".into(), "provider".into())
        );
        let wildcard = json!({"agents": {"defaults": {"models": {"openai/*": {"agentRuntime": {"id": "default"}}}}}});
        assert_eq!(
            r(&wildcard, "openai", "gpt"),
            ("codex".into(), "model".into())
        );
    }

    #[test]
    fn acp_rows_use_entry_metadata() {
        let out = row(
            "agent:ops:acp:abc",
            json!({"updatedAt": 1, "acp": {"backend": "acpx-2"}}),
        );
        assert!(out.contains(r#""model":"ops-acp","modelProvider":"acpx""#));
        assert!(out.contains(
            r#""acpRuntime":true,"agentRuntime":{"id":"acpx-2","source":"session-key"}"#
        ));
        let bridge = row("agent:ops:acp:abc", json!({"updatedAt": 1}));
        assert!(bridge.contains(r#""acpRuntime":false"#));
        assert!(bridge.contains(r#""model":"gpt-5.5""#));
    }

    /// Differential check against the peer: run `tests/peer/probe_store.mjs gen OUT` and
    /// `… peer OUT`, then `CLAWSTATE_PEER_PROBE=OUT cargo test -p clawstate --lib --
    /// --ignored peer_differential --nocapture`. Compares, per entry, the loaded
    /// (hydrated + normalised) entry, its persisted projection, a second normalisation pass,
    /// and the `sessions --json` row, all as JSON text (key order included).
    #[test]
    #[ignore]
    fn peer_differential() {
        use crate::js::jsjson::{apply_js_key_order, to_string_compact, to_string_pretty};
        use crate::store::normalize::{
            normalize_entry, normalize_entry_fields_with_holes, normalize_entry_with_holes,
            EntryVerdict, Holes,
        };
        use crate::store::prompt_blobs::{hydrate_entry, project_for_persistence};
        let Ok(root) = std::env::var("CLAWSTATE_PEER_PROBE") else {
            eprintln!("CLAWSTATE_PEER_PROBE not set");
            return;
        };
        let read = |p: &std::path::Path| -> Value {
            let mut v: Value = serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
            apply_js_key_order(&mut v);
            v
        };
        let (mut compared, mut mismatches) = (0usize, 0usize);
        let mut report = |what: &str, store: &str, key: &str, mine: String, peer: String| {
            compared += 1;
            if mine != peer {
                mismatches += 1;
                if mismatches <= 40 {
                    eprintln!("MISMATCH {what} {store} {key:?}\n  mine: {mine}\n  peer: {peer}");
                }
            }
        };
        let mut dirs: Vec<_> = std::fs::read_dir(&root)
            .unwrap()
            .map(|d| d.unwrap().path())
            .collect();
        dirs.sort();
        for dir in dirs.iter().filter(|d| d.join("rows.json").exists()) {
            let name = dir.file_name().unwrap().to_string_lossy().into_owned();
            let raw = read(&dir.join("sessions.json"));
            let mut mine = Map::new();
            let mut saved = Map::new();
            for (k, v) in raw.as_object().unwrap() {
                let Value::Object(mut e) = v.clone() else {
                    continue;
                };
                let hydrated = hydrate_entry(&mut e, dir);
                let before = to_string_compact(&Value::Object(e.clone()));
                let mut holes = Holes::default();
                let verdict = normalize_entry_with_holes(&mut e, &mut holes);
                if let EntryVerdict::Keep { changed } = verdict {
                    let after = to_string_compact(&Value::Object(e.clone()));
                    report(
                        "changed-flag",
                        &name,
                        k,
                        (changed || hydrated).to_string(),
                        (before != after || hydrated).to_string(),
                    );
                }
                if let EntryVerdict::Keep { .. } = verdict {
                    mine.insert(k.clone(), Value::Object(e.clone()));
                    normalize_entry_fields_with_holes(&mut e, &mut holes);
                    let (p, _) = project_for_persistence(&e, dir);
                    saved.insert(k.clone(), Value::Object(p.unwrap_or(e)));
                }
            }
            let peer_saved = std::fs::read_to_string(dir.join("saved.json")).unwrap();
            let my_saved = to_string_pretty(&Value::Object(saved));
            if my_saved != peer_saved {
                let a: Vec<&str> = my_saved.lines().collect();
                let b: Vec<&str> = peer_saved.lines().collect();
                let i = a
                    .iter()
                    .zip(&b)
                    .position(|(x, y)| x != y)
                    .unwrap_or(a.len().min(b.len()));
                eprintln!(
                    "saved.json differs at line {}: mine {:?} peer {:?}",
                    i + 1,
                    a.get(i),
                    b.get(i)
                );
            }
            report(
                "saved-bytes",
                &name,
                "",
                (my_saved == peer_saved).to_string(),
                "true".into(),
            );
            let loaded = read(&dir.join("loaded.json"));
            let loaded = loaded.as_object().unwrap();
            report(
                "keys",
                &name,
                "",
                format!("{:?}", mine.keys().collect::<Vec<_>>()),
                format!("{:?}", loaded.keys().collect::<Vec<_>>()),
            );
            let projected = read(&dir.join("projected.json"));
            let twice = read(&dir.join("twice.json"));
            for (k, v) in &mine {
                let peer = loaded.get(k).map(to_string_compact).unwrap_or_default();
                report("loaded", &name, k, to_string_compact(v), peer);
                let (p, _) = project_for_persistence(v.as_object().unwrap(), dir);
                let p = p.map(Value::Object).unwrap_or_else(|| v.clone());
                let peer = projected.get(k).map(to_string_compact).unwrap_or_default();
                report("projected", &name, k, to_string_compact(&p), peer);
                let mut again = v.as_object().unwrap().clone();
                normalize_entry(&mut again);
                let peer = twice.get(k).map(to_string_compact).unwrap_or_default();
                report(
                    "twice",
                    &name,
                    k,
                    to_string_compact(&Value::Object(again)),
                    peer,
                );
            }
            let cfg_path = dir.join("config.json");
            let config = if cfg_path.exists() {
                read(&cfg_path)
            } else {
                Value::Null
            };
            let target = crate::session::session_key::normalize_agent_id(
                agent_list(&config)
                    .iter()
                    .find(|a| field(Some(a), "default") == Some(&Value::Bool(true)))
                    .or_else(|| agent_list(&config).first())
                    .and_then(|a| field(Some(a), "id"))
                    .and_then(Value::as_str)
                    .unwrap_or("main"),
            );
            let ctx = ListContext {
                target_agent_id: target,
                config,
                generation: RowGeneration::default(),
            };
            let rows = read(&dir.join("rows.json"));
            for row in rows["sessions"].as_array().unwrap() {
                let key = row["key"].as_str().unwrap();
                let entry = mine
                    .get(key)
                    .and_then(Value::as_object)
                    .cloned()
                    .unwrap_or_default();
                let now = match (row["updatedAt"].as_f64(), row["ageMs"].as_f64()) {
                    (Some(u), Some(a)) => (u + a).round() as i64,
                    _ => 0,
                };
                let r = list_row(key, &entry, now, &ctx);
                report(
                    "row",
                    &name,
                    key,
                    to_string_compact(&Value::Object(r)),
                    to_string_compact(row),
                );
            }
        }
        eprintln!("peer differential: {compared} comparisons, {mismatches} mismatches");
        assert_eq!(mismatches, 0);
    }
}
