//! Session keys: agent ids, the key grammar and its normalisation, request-key → store-key
//! resolution, the three kind classifiers, the chat type a key implies, and the
//! maintenance predicates (synthetic, protected, model-run probe, retirable DM keys).
//!
//! Every function reproduces the gateway's JavaScript exactly, including its string
//! semantics: `trim()` strips the ECMAScript white-space set (which differs from Rust's),
//! and the few index computations that the gateway performs on a lower-cased copy and then
//! applies to the original (a `toLowerCase()` can lengthen a string: `İ` → `i̇`) are done
//! in UTF-16 code units, as JavaScript does.

use std::collections::HashSet;
use std::sync::OnceLock;

use regex::Regex;
use serde_json::{Map, Value};

use crate::js;
use crate::session::entry_fields::EntryFields;

// ---------------------------------------------------------------------------
// JavaScript string and value semantics shared by the key, freshness and send-policy rules.

/// `normalizeLowercaseStringOrEmpty`: JavaScript trim, then lower-case.
pub(crate) fn lower_trim(s: &str) -> String {
    js::trim(s).to_lowercase()
}

/// `normalizeOptionalString`: a string value, JavaScript-trimmed, if non-empty.
pub(crate) fn opt_str(v: Option<&Value>) -> Option<&str> {
    v.and_then(Value::as_str)
        .map(js::trim)
        .filter(|s| !s.is_empty())
}

/// `normalizeOptionalLowercaseString`: a trimmed, lower-cased, non-empty string value.
pub(crate) fn opt_lower(v: Option<&Value>) -> Option<String> {
    opt_str(v).map(str::to_lowercase)
}

/// `obj?.field` for a JSON value: only objects have fields (a `null` field is absent).
pub(crate) fn field<'a>(v: Option<&'a Value>, name: &str) -> Option<&'a Value> {
    js::non_nullish(v.and_then(Value::as_object).and_then(|m| m.get(name)))
}

/// The UTF-16 length of a prefix of `s` ending at byte `b`.
fn utf16_pos(s: &str, b: usize) -> usize {
    js::utf16_len(&s[..b])
}

/// The byte offset of UTF-16 index `idx` in `s`, clamped to the end and rounded down to a
/// character boundary (an index inside a surrogate pair selects the whole character).
fn byte_pos(s: &str, idx: usize) -> usize {
    js::utf16_prefix(s, idx).len()
}

/// `hay.lastIndexOf(needle)` in UTF-16 code units.
fn last_index_of(hay: &str, needle: &str) -> Option<usize> {
    hay.rfind(needle).map(|b| utf16_pos(hay, b))
}

/// Decoded UTF-16: characters, or lone surrogates kept as they are (as JavaScript does).
type Units = Vec<Result<char, u16>>;

/// Decodes UTF-16, keeping lone surrogates.
fn decode(units: &[u16]) -> Units {
    char::decode_utf16(units.iter().copied())
        .map(|r| r.map_err(|e| e.unpaired_surrogate()))
        .collect()
}

/// JavaScript `trim` on decoded units (lone surrogates are not white space).
fn trim_units(u: &[Result<char, u16>]) -> &[Result<char, u16>] {
    let ws = |x: &Result<char, u16>| matches!(x, Ok(c) if js::is_whitespace(*c));
    let start = u.iter().position(|x| !ws(x)).unwrap_or(u.len());
    let end = u.iter().rposition(|x| !ws(x)).map_or(start, |e| e + 1);
    &u[start..end.max(start)]
}

/// Re-encodes decoded units, lower-casing runs of characters when `lower` is set.
fn encode_units(u: &[Result<char, u16>], lower: bool, out: &mut Vec<u16>) {
    let mut run = String::new();
    let flush = |run: &mut String, out: &mut Vec<u16>| {
        let text = std::mem::take(run);
        let text = if lower { text.to_lowercase() } else { text };
        out.extend(text.encode_utf16());
    };
    for x in u {
        match x {
            Ok(c) => run.push(*c),
            Err(lone) => {
                flush(&mut run, out);
                out.push(*lone);
            }
        }
    }
    flush(&mut run, out);
}

// ---------------------------------------------------------------------------
// Agent ids.

/// `normalizeAgentId`: trim; a valid id is lower-cased, anything else is slugged; empty → `main`.
pub fn normalize_agent_id(s: &str) -> String {
    let trimmed = js::trim(s);
    if trimmed.is_empty() {
        return "main".to_string();
    }
    let lowered = trimmed.to_lowercase();
    let b = trimmed.as_bytes();
    let valid = b.len() <= 64
        && b[0].is_ascii_alphanumeric()
        && b[1..]
            .iter()
            .all(|c| c.is_ascii_alphanumeric() || *c == b'_' || *c == b'-');
    if valid {
        return lowered;
    }
    let mut slug = String::with_capacity(lowered.len());
    let mut in_run = false;
    for c in lowered.chars() {
        if c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-' {
            slug.push(c);
            in_run = false;
        } else if !in_run {
            slug.push('-');
            in_run = true;
        }
    }
    let stripped = slug.trim_matches('-');
    // Only ASCII remains, so 64 bytes are 64 UTF-16 units.
    let cut = &stripped[..stripped.len().min(64)];
    if cut.is_empty() {
        "main".to_string()
    } else {
        cut.to_string()
    }
}

/// `normalizeMainKey`: a trimmed, lower-cased `session.mainKey`, `main` when blank.
pub fn normalize_main_key(s: &str) -> String {
    let k = lower_trim(s);
    if k.is_empty() {
        "main".to_string()
    } else {
        k
    }
}

// ---------------------------------------------------------------------------
// Normalisation.

struct Span {
    start: usize,
    end: usize,
    trim: bool,
}

struct PeerRegexes {
    signal_group: Regex,
    matrix_scoped: [Regex; 2],
    matrix_unscoped: [Regex; 2],
}

fn peer_regexes() -> &'static PeerRegexes {
    static RE: OnceLock<PeerRegexes> = OnceLock::new();
    RE.get_or_init(|| {
        let scoped = |k: &str| {
            Regex::new(&format!("^(?:(?i-u:agent):[^:]*:)+:*(?i-u:matrix:{k}:)")).unwrap()
        };
        let unscoped = |k: &str| Regex::new(&format!("^(?i-u:matrix:{k}:)")).unwrap();
        PeerRegexes {
            signal_group: Regex::new("(?:^|:)(?i-u:signal:group:)([^:]+)").unwrap(),
            matrix_scoped: [scoped("channel"), scoped("group")],
            matrix_unscoped: [unscoped("channel"), unscoped("group")],
        }
    })
}

/// `collectCasePreservedSpans`, in UTF-16 indices of `raw`.
fn case_preserved_spans(raw: &str) -> Vec<Span> {
    let re = peer_regexes();
    let mut spans = Vec::new();
    for cap in re.signal_group.captures_iter(raw) {
        let seg = cap.get(1).expect("group 1 always participates");
        spans.push(Span {
            start: utf16_pos(raw, seg.start()),
            end: utf16_pos(raw, seg.end()),
            trim: true,
        });
    }
    let len16 = utf16_pos(raw, raw.len());
    let tail = |tail_start_byte: usize, spans: &mut Vec<Span>| {
        let start = utf16_pos(raw, tail_start_byte);
        if start >= len16 {
            return;
        }
        // The marker is searched in a trimmed, lower-cased copy and its index applied to raw.
        match last_index_of(&lower_trim(&raw[tail_start_byte..]), ":thread:") {
            None => spans.push(Span {
                start,
                end: len16,
                trim: false,
            }),
            Some(m) => {
                spans.push(Span {
                    start,
                    end: start + m,
                    trim: false,
                });
                let thread_start = start + m + 8;
                if thread_start < len16 {
                    spans.push(Span {
                        start: thread_start,
                        end: len16,
                        trim: false,
                    });
                }
            }
        }
    };
    for i in 0..2 {
        if let Some(m) = re.matrix_scoped[i].find(raw) {
            tail(m.end(), &mut spans);
            continue;
        }
        if let Some(m) = re.matrix_unscoped[i].find(raw) {
            tail(m.end(), &mut spans);
        }
    }
    spans
}

/// `normalizeSessionKeyPreservingOpaquePeerIds`: trim and lower-case, except Signal group ids
/// and Matrix channel/group tails (whose `:thread:` marker is still lower-cased).
pub fn normalize_session_key(key: &str) -> String {
    let raw = js::trim(key);
    if raw.is_empty() {
        return String::new();
    }
    let folded = raw.to_ascii_lowercase();
    if !folded.contains("signal:") && !folded.contains("matrix:") {
        return raw.to_lowercase();
    }
    let mut spans: Vec<Span> = case_preserved_spans(raw)
        .into_iter()
        .filter(|s| s.end > s.start)
        .collect();
    spans.sort_by_key(|s| s.start);
    let units: Vec<u16> = raw.encode_utf16().collect();
    let clamp = |i: usize| i.min(units.len());
    let mut out: Vec<u16> = Vec::with_capacity(units.len());
    let mut cursor = 0usize;
    let piece = |a: usize, b: usize| -> &[u16] {
        let (a, b) = (clamp(a), clamp(b));
        if a < b {
            &units[a..b]
        } else {
            &[]
        }
    };
    for span in &spans {
        if span.start < cursor {
            continue;
        }
        encode_units(
            trim_units(&decode(piece(cursor, span.start))),
            true,
            &mut out,
        );
        let kept = decode(piece(span.start, span.end));
        let kept = if span.trim {
            trim_units(&kept)
        } else {
            &kept[..]
        };
        encode_units(kept, false, &mut out);
        cursor = span.end;
    }
    encode_units(
        trim_units(&decode(piece(cursor, units.len()))),
        true,
        &mut out,
    );
    String::from_utf16_lossy(&out)
}

/// The `{ agentId, rest }` of an `agent:<id>:<rest>` key, as `parseAgentSessionKey` gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentSessionKey {
    /// The agent segment, trimmed and lower-cased (not slugged by `normalize_agent_id`).
    pub agent_id: String,
    /// Everything after the agent segment, normalised (opaque peer ids keep their case).
    pub rest: String,
}

/// `parseAgentSessionKey`: `agent:<id>:<rest>` after normalisation, id and rest non-empty.
pub fn parse_agent_session_key(key: &str) -> Option<AgentSessionKey> {
    let raw = normalize_session_key(key);
    let mut parts = raw.splitn(3, ':');
    let (head, id, rest) = (parts.next()?, parts.next()?, parts.next()?);
    // `parts[1]` and `parts[2]` must be non-empty: the rest may not start with a separator.
    if head != "agent" || id.is_empty() || rest.is_empty() || rest.starts_with(':') {
        return None;
    }
    let agent_id = js::trim(id);
    if agent_id.is_empty() {
        return None;
    }
    Some(AgentSessionKey {
        agent_id: agent_id.to_string(),
        rest: rest.to_string(),
    })
}

/// `isCronSessionKey`: an agent-scoped key whose rest starts with `cron:`.
pub fn is_cron_key(key: &str) -> bool {
    parse_agent_session_key(key).is_some_and(|p| lower_trim(&p.rest).starts_with("cron:"))
}

/// `isSubagentSessionKey`: `subagent:` at the start of the key or of its agent rest.
pub fn is_subagent_key(key: &str) -> bool {
    let raw = js::trim(key);
    !raw.is_empty()
        && (raw.to_lowercase().starts_with("subagent:")
            || parse_agent_session_key(raw)
                .is_some_and(|p| lower_trim(&p.rest).starts_with("subagent:")))
}

/// `isAcpSessionKey`: `acp:` at the start of the key or of its agent rest.
pub fn is_acp_key(key: &str) -> bool {
    let raw = js::trim(key);
    !raw.is_empty()
        && (raw.to_lowercase().starts_with("acp:")
            || parse_agent_session_key(raw)
                .is_some_and(|p| lower_trim(&p.rest).starts_with("acp:")))
}

// ---------------------------------------------------------------------------
// Request key → store key.

/// The config facts that turn a request key into a store key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyContext {
    /// The default agent id (normalised): `agents.list[]` with `default`, else the first, else `main`.
    pub default_agent_id: String,
    /// `session.mainKey` (normalised by the functions that use it; default `main`).
    pub main_key: String,
    /// Whether `session.scope` is `global`.
    pub scope_global: bool,
    /// The configured agent ids, normalised; empty means no `agents.list` (only the default).
    pub configured_agents: Vec<String>,
}

impl Default for KeyContext {
    fn default() -> Self {
        KeyContext {
            default_agent_id: "main".to_string(),
            main_key: "main".to_string(),
            scope_global: false,
            configured_agents: Vec::new(),
        }
    }
}

impl KeyContext {
    fn main_key(&self) -> String {
        normalize_main_key(&self.main_key)
    }

    fn default_agent(&self) -> String {
        normalize_agent_id(&self.default_agent_id)
    }

    fn has_agent(&self, id: &str) -> bool {
        if self.configured_agents.is_empty() {
            return self.default_agent() == id;
        }
        self.configured_agents
            .iter()
            .any(|a| normalize_agent_id(a) == id)
    }

    /// `resolveMainSessionKey`: `global` under global scope, else `agent:<default>:<mainKey>`.
    pub fn main_session_key(&self) -> String {
        if self.scope_global {
            "global".to_string()
        } else {
            format!("agent:{}:{}", self.default_agent(), self.main_key())
        }
    }
}

/// `canonicalizeMainSessionAlias`: main aliases (`main`, mainKey, `agent:<id|main>:<main|mainKey>`)
/// become `agent:<agent_id>:<mainKey>` (or `global` under global scope); others are returned trimmed.
pub fn canonicalize_main_alias(session_key: &str, agent_id: &str, ctx: &KeyContext) -> String {
    let raw = js::trim(session_key);
    if raw.is_empty() {
        return raw.to_string();
    }
    let agent = normalize_agent_id(agent_id);
    let main_key = ctx.main_key();
    let canonical = format!("agent:{agent}:{main_key}");
    let is_alias = raw == "main"
        || raw == main_key
        || raw == canonical
        || raw == format!("agent:{agent}:main")
        || raw == format!("agent:main:{main_key}")
        || raw == "agent:main:main";
    if is_alias && ctx.scope_global {
        "global".to_string()
    } else if is_alias {
        canonical
    } else {
        raw.to_string()
    }
}

/// `resolveSessionStoreKey`: the key under which a request key is stored (`store.md` §3.2).
pub fn resolve_store_key(request: &str, ctx: &KeyContext) -> String {
    let raw = js::trim(request);
    if raw.is_empty() {
        return String::new();
    }
    let lowered = raw.to_lowercase();
    if lowered == "global" || lowered == "unknown" {
        return lowered;
    }
    let main_key = ctx.main_key();
    if let Some(parsed) = parse_agent_session_key(raw) {
        let parsed_agent = normalize_agent_id(&parsed.agent_id);
        let rest = lower_trim(&parsed.rest);
        let remap = parsed_agent == "main"
            && !ctx.has_agent("main")
            && (rest == "main" || rest == main_key);
        let (agent, key) = if remap {
            let agent = ctx.default_agent();
            let key = format!("agent:{agent}:{rest}");
            (agent, key)
        } else {
            (parsed_agent, normalize_session_key(raw))
        };
        return canonicalize_main_alias(&key, &agent, ctx);
    }
    if lowered == "main" || lowered == main_key {
        return ctx.main_session_key();
    }
    let normalized = normalize_session_key(raw);
    if normalized.starts_with("agent:") {
        return normalized;
    }
    format!("agent:{}:{}", ctx.default_agent(), normalized)
}

/// The normalised preserve set for maintenance: each non-blank key normalised (§4.2).
pub fn preserve_set<I, S>(keys: I) -> HashSet<String>
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    keys.into_iter()
        .map(|k| normalize_session_key(k.as_ref()))
        .filter(|k| !k.is_empty())
        .collect()
}

// ---------------------------------------------------------------------------
// Kinds.

fn chat_type_is_group<E: crate::session::entry_fields::EntryView + ?Sized>(entry: &E) -> bool {
    matches!(
        entry.get("chatType").and_then(Value::as_str),
        Some("group") | Some("channel")
    )
}

fn key_has_group_marker(key: &str) -> bool {
    key.contains(":group:") || key.contains(":channel:")
}

/// The `openclaw sessions --json` row kind: global, unknown, cron, spawn-child, group or direct.
pub fn cli_row_kind<E: crate::session::entry_fields::EntryView + ?Sized>(
    key: &str,
    entry: &E,
) -> &'static str {
    if key == "global" {
        "global"
    } else if key == "unknown" {
        "unknown"
    } else if is_cron_key(key) {
        "cron"
    } else if entry.get("spawnedBy").is_some_and(js::truthy) {
        "spawn-child"
    } else if chat_type_is_group(entry) || key_has_group_marker(key) {
        "group"
    } else {
        "direct"
    }
}

/// The gateway `sessions.list` row kind: global, unknown, group or direct.
pub fn gateway_row_kind(key: &str, entry: &Map<String, Value>) -> &'static str {
    if key == "global" {
        "global"
    } else if key == "unknown" {
        "unknown"
    } else if chat_type_is_group(entry) || key_has_group_marker(key) {
        "group"
    } else {
        "direct"
    }
}

/// The `sessions_list` agent-tool kind (main, group, cron, hook, node, other) by literal prefixes.
pub fn tool_kind(key: &str, entry: &Map<String, Value>, ctx: &KeyContext) -> &'static str {
    let main_key = ctx.main_key();
    let alias = if ctx.scope_global {
        "global"
    } else {
        main_key.as_str()
    };
    if key == alias || key == main_key {
        "main"
    } else if key.starts_with("cron:") {
        "cron"
    } else if key.starts_with("hook:") {
        "hook"
    } else if key.starts_with("node-") || key.starts_with("node:") {
        "node"
    } else if gateway_row_kind(key, entry) == "group" || key_has_group_marker(key) {
        "group"
    } else {
        "other"
    }
}

// ---------------------------------------------------------------------------
// Chat type from a key (sendPolicy).

/// What a key says about its conversation, as `sendPolicy` derives it (§3.4).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct KeyChatType {
    /// `direct`, `group` or `channel`, when the key's shape says so.
    pub chat_type: Option<&'static str>,
    /// The channel segment of a canonical peer shape, lower-cased.
    pub channel: Option<String>,
    /// Whether the key matches more than one peer shape (sendPolicy then denies).
    pub ambiguous: bool,
}

fn is_peer_kind(s: Option<&str>) -> bool {
    matches!(s, Some("direct" | "dm" | "group" | "channel"))
}

fn legacy_regexes() -> &'static [Regex; 4] {
    static RE: OnceLock<[Regex; 4]> = OnceLock::new();
    RE.get_or_init(|| {
        [
            Regex::new(r"^group:[^:]+(?::[^\n\r\u{2028}\u{2029}]*)?$").unwrap(),
            Regex::new(r"^channel:[^:]+(?::[^\n\r\u{2028}\u{2029}]*)?$").unwrap(),
            Regex::new(r"^(?:whatsapp:)?[^:]+@g\.us$").unwrap(),
            Regex::new(r"^discord:(?:[^:]+:)?guild-[^:]+:channel-[^:]+$").unwrap(),
        ]
    })
}

/// `deriveBuiltInLegacySessionChatType`.
fn legacy_chat_type(scoped: &str) -> Option<&'static str> {
    let re = legacy_regexes();
    if re[0].is_match(scoped) {
        Some("group")
    } else if re[1].is_match(scoped) {
        Some("channel")
    } else if re[2].is_match(scoped) {
        Some("group")
    } else if re[3].is_match(scoped) {
        Some("channel")
    } else {
        None
    }
}

/// `hasAmbiguousCanonicalSessionPeerShape`.
fn ambiguous_shape(scoped: &str) -> bool {
    let parts: Vec<&str> = scoped.split(':').collect();
    let p = |i: usize| parts.get(i).copied().filter(|s| !s.is_empty());
    if parts[0] == "agent" {
        return false;
    }
    let flags = [
        matches!(p(0), Some("direct" | "dm")) && p(1).is_some(),
        p(0).is_some() && is_peer_kind(parts.get(1).copied()) && p(2).is_some(),
        p(0).is_some() && p(1).is_some() && is_peer_kind(parts.get(2).copied()) && p(3).is_some(),
        legacy_chat_type(scoped).is_some(),
    ];
    flags.iter().filter(|f| **f).count() > 1
}

/// `parseCanonicalSessionPeerShape`: (channel, chat type) of a canonical peer shape.
fn canonical_peer_shape(scoped: &str) -> Option<(Option<&str>, &'static str)> {
    let parts: Vec<&str> = scoped.split(':').collect();
    if parts[0] == "agent" || ambiguous_shape(scoped) {
        return None;
    }
    let p = |i: usize| parts.get(i).copied().filter(|s| !s.is_empty());
    let (channel, kind, id_at) = if matches!(parts[0], "direct" | "dm") {
        (None, parts[0], 1)
    } else if p(0).is_some() && is_peer_kind(parts.get(1).copied()) {
        (Some(parts[0]), parts[1], 2)
    } else if p(0).is_some() && p(1).is_some() && is_peer_kind(parts.get(2).copied()) {
        (Some(parts[0]), parts[2], 3)
    } else {
        return None;
    };
    p(id_at)?;
    let chat = match kind {
        "direct" | "dm" => "direct",
        "group" => "group",
        _ => "channel",
    };
    Some((channel, chat))
}

/// sendPolicy's `stripAgentSessionKeyPrefix` (case-sensitive `agent`, no normalisation).
pub(crate) fn strip_agent_prefix(key: &str) -> Option<&str> {
    if key.is_empty() {
        return None;
    }
    let parts: Vec<&str> = key.splitn(3, ':').collect();
    if parts[0] != "agent" {
        return Some(key);
    }
    if parts.len() < 3 || parts[1].is_empty() || parts[2].is_empty() || parts[2].starts_with(':') {
        return None;
    }
    Some(parts[2])
}

/// `normalizeChatType`: `direct`/`dm` → direct, `group`, `channel`, else nothing.
pub fn normalize_chat_type(raw: &str) -> Option<&'static str> {
    match lower_trim(raw).as_str() {
        "direct" | "dm" => Some("direct"),
        "group" => Some("group"),
        "channel" => Some("channel"),
        _ => None,
    }
}

/// The chat type, channel and ambiguity sendPolicy derives from a key (§3.4).
pub fn chat_type_from_key(key: &str) -> KeyChatType {
    let stripped = strip_agent_prefix(key);
    let lowered = stripped.map(lower_trim).filter(|s| !s.is_empty());
    let ambiguous = lowered.as_deref().is_some_and(ambiguous_shape);
    let channel = stripped
        .filter(|s| !s.is_empty())
        .and_then(canonical_peer_shape)
        .and_then(|(c, _)| c)
        .map(lower_trim)
        .filter(|c| !c.is_empty());
    let chat_type = lowered
        .as_deref()
        .filter(|s| !s.starts_with("agent:"))
        .and_then(|s| {
            canonical_peer_shape(s)
                .map(|(_, t)| t)
                .or_else(|| legacy_chat_type(s))
        });
    KeyChatType {
        chat_type,
        channel,
        ambiguous,
    }
}

// ---------------------------------------------------------------------------
// Threads and maintenance predicates.

/// The thread id of a key: what follows its last `:thread:` (case-insensitive), trimmed, if non-empty.
pub fn thread_id(key: &str) -> Option<&str> {
    let raw = js::trim(key);
    let marker = last_index_of(&raw.to_lowercase(), ":thread:")?;
    let id = js::trim(&raw[byte_pos(raw, marker + 8)..]);
    (!id.is_empty()).then_some(id)
}

/// Whether a key is synthetic for maintenance: subagent, ACP, cron, acp-bridge, hook, node or heartbeat.
pub fn is_synthetic_key(key: &str) -> bool {
    synthetic_and_rest(key).0
}

/// [`is_synthetic_key`] and the key's lowered rest, from one parse of the key (the
/// subagent, ACP and cron predicates each parse it otherwise).
fn synthetic_and_rest(key: &str) -> (bool, String) {
    let raw = js::trim(key);
    let parsed = parse_agent_session_key(key);
    let rest = match &parsed {
        Some(p) => lower_trim(&p.rest),
        None => lower_trim(key),
    };
    let synthetic = is_synthetic_shape(&raw.to_lowercase(), &rest, parsed.is_some());
    (synthetic, rest)
}

/// The synthetic rule on a key's lowered forms: `head` the whole trimmed key, `rest` its
/// agent rest when `parsed` (else the whole key), trimmed. An empty key has no prefix.
fn is_synthetic_shape(head: &str, rest: &str, parsed: bool) -> bool {
    let agent_rest = |prefix: &str| parsed && rest.starts_with(prefix);
    head.starts_with("subagent:")
        || agent_rest("subagent:")
        || head.starts_with("acp:")
        || agent_rest("acp:")
        || agent_rest("cron:")
        || rest.starts_with("acp-bridge:")
        || rest.starts_with("hook:")
        || rest.starts_with("node:")
        || rest == "heartbeat"
        || rest.ends_with(":heartbeat")
        || rest.contains(":heartbeat:")
}

fn shape_regexes() -> &'static [Regex; 2] {
    static RE: OnceLock<[Regex; 2]> = OnceLock::new();
    RE.get_or_init(|| {
        [
            Regex::new(
                r"^telegram:(?:group|channel|direct|dm):[^\n\r\u{2028}\u{2029}]+:topic:[^:]+$",
            )
            .unwrap(),
            Regex::new(r"^[^:]+:(?:group|channel):[^\n\r\u{2028}\u{2029}]+$").unwrap(),
        ]
    })
}

/// Whether a lowered agent rest has a durable shape (a Telegram topic, a group or a
/// channel). Each regex runs only when the rest holds the literals it needs.
fn has_durable_shape(rest: &str) -> bool {
    let re = shape_regexes();
    (rest.starts_with("telegram:") && rest.contains(":topic:") && re[0].is_match(rest))
        || ((rest.contains(":group:") || rest.contains(":channel:")) && re[1].is_match(rest))
}

/// What a key alone says of durability: `Some(false)` synthetic, `Some(true)` a thread or
/// a durable shape, `None` for the chat type to decide.
fn durable_by_key(key: &str) -> Option<bool> {
    if let Some(verdict) = durable_by_plain_key(key) {
        return verdict;
    }
    let (synthetic, rest) = synthetic_and_rest(key);
    if synthetic {
        return Some(false);
    }
    if thread_id(key).is_some() || has_durable_shape(&rest) {
        return Some(true);
    }
    None
}

/// [`durable_by_key`] for a plain key, without allocating: ASCII, no white space at
/// either end, and no `signal:` or `matrix:` (whose spans keep their case when the key
/// is normalised). Lower-casing such a key is its normalisation, so the parse, the
/// synthetic prefixes and the thread marker all read one lowered copy on the stack.
/// `None` when the key is not plain.
fn durable_by_plain_key(key: &str) -> Option<Option<bool>> {
    // JavaScript's white space, within ASCII: tab, line feed, vertical tab, form feed,
    // carriage return and space.
    let js_space = |c: &u8| matches!(c, b'\t'..=b'\r' | b' ');
    let b = key.as_bytes();
    let mut buf = [0u8; 256];
    if b.len() > buf.len()
        || !b.is_ascii()
        || b.first().is_none_or(js_space)
        || b.last().is_none_or(js_space)
    {
        return None;
    }
    let lower = &mut buf[..b.len()];
    lower.copy_from_slice(b);
    lower.make_ascii_lowercase();
    // ASCII: every byte sequence of it is a str.
    let k = std::str::from_utf8(lower).ok()?;
    if k.contains("signal:") || k.contains("matrix:") {
        return None;
    }
    let mut parts = k.splitn(3, ':');
    let parsed_rest = match (parts.next(), parts.next(), parts.next()) {
        (Some("agent"), Some(id), Some(rest))
            if !js::trim(id).is_empty() && !rest.is_empty() && !rest.starts_with(':') =>
        {
            Some(js::trim(rest))
        }
        _ => None,
    };
    let rest = parsed_rest.unwrap_or(k);
    if is_synthetic_shape(k, rest, parsed_rest.is_some()) {
        return Some(Some(false));
    }
    let thread = k
        .rfind(":thread:")
        .is_some_and(|m| !js::trim(&k[m + 8..]).is_empty());
    Some((thread || has_durable_shape(rest)).then_some(true))
}

/// Whether an entry is durable by its own key and chat type (§4.2 without the preserve set).
pub fn is_durable_entry<M: EntryFields>(key: &str, entry: &M) -> bool {
    if let Some(verdict) = durable_by_key(key) {
        return verdict;
    }
    // `entry.chatType ?? entry.origin?.chatType`, then lower-cased if a string.
    let chat = js::non_nullish(entry.get("chatType"))
        .or_else(|| field(entry.get("origin"), "chatType"))
        .and_then(Value::as_str)
        .map(lower_trim);
    matches!(chat.as_deref(), Some("group" | "channel" | "thread"))
}

/// Whether maintenance must keep an entry: key in the preserve set (verbatim), or durable (§4.2).
pub fn is_protected_entry(
    key: &str,
    entry: &Map<String, Value>,
    preserve: &HashSet<String>,
) -> bool {
    preserve.contains(key) || is_durable_entry(key, entry)
}

fn model_run_regexes() -> &'static [Regex; 2] {
    static RE: OnceLock<[Regex; 2]> = OnceLock::new();
    RE.get_or_init(|| {
        let uuid = "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}";
        let ws = r"\t\n\x0B\x0C\r \x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}\x{FEFF}";
        [
            Regex::new(&format!(
                "^(?i-u:agent):([^:{ws}]+):(?i-u:explicit:model-run-){uuid}$"
            ))
            .unwrap(),
            Regex::new(&format!("^explicit:model-run-{}$", uuid.replace("A-F", ""))).unwrap(),
        ]
    })
}

/// Whether a key is a gateway model-run probe (`agent:<id>:explicit:model-run-<uuid>`, §4.3).
pub fn is_model_run_probe_key(key: &str) -> bool {
    let re = model_run_regexes();
    let Some(cap) = re[0].captures(key) else {
        return false;
    };
    let captured = &cap[1];
    let Some(parsed) = parse_agent_session_key(key) else {
        return false;
    };
    parsed.agent_id == captured.to_lowercase() && re[1].is_match(&lower_trim(&parsed.rest))
}

/// Whether `--fix-dm-scope` retires a key: `agent:<target>:` DM shapes other than the active key (§4.6).
///
/// The caller checks that `session.dmScope` is `main`; `active_key` is compared verbatim.
pub fn dm_scope_retirable(key: &str, target_agent_id: &str, active_key: Option<&str>) -> bool {
    if active_key.is_some_and(|a| !a.is_empty() && a == key) {
        return false;
    }
    let Some(parsed) = parse_agent_session_key(key) else {
        return false;
    };
    if normalize_agent_id(&parsed.agent_id) != normalize_agent_id(target_agent_id) {
        return false;
    }
    let parts: Vec<&str> = parsed.rest.split(':').collect();
    if parts[0] == "agent" {
        return false;
    }
    let full = |i: usize| !parts[i].is_empty();
    match parts.len() {
        2 => parts[0] == "direct" && full(1),
        3 => full(0) && parts[1] == "direct" && full(2),
        4 => full(0) && full(1) && parts[2] == "direct" && full(3),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    fn empty() -> Map<String, Value> {
        Map::new()
    }

    #[test]
    fn agent_id_examples() {
        assert_eq!(normalize_agent_id("my agent!"), "my-agent");
        assert_eq!(normalize_agent_id("--x--"), "x");
        assert_eq!(normalize_agent_id("Ünï"), "n");
        assert_eq!(normalize_agent_id("  "), "main");
        assert_eq!(normalize_agent_id("Work"), "work");
        assert_eq!(normalize_agent_id("a_b-C"), "a_b-c");
        assert_eq!(normalize_agent_id("_x"), "_x");
        assert_eq!(normalize_agent_id("!!!"), "main");
        // 65 valid characters: not valid, so slugged and cut to 64.
        let long = "a".repeat(65);
        assert_eq!(normalize_agent_id(&long), "a".repeat(64));
        // The Kelvin sign lower-cases to an ASCII k.
        assert_eq!(normalize_agent_id("\u{212A}"), "k");
        // JavaScript trim strips U+FEFF but not U+0085.
        assert_eq!(normalize_agent_id("\u{FEFF}x\u{FEFF}"), "x");
        assert_eq!(normalize_agent_id("\u{85}x"), "x");
    }

    #[test]
    fn normalisation_examples() {
        assert_eq!(
            normalize_session_key("Agent:Main:Telegram:Group:ABC"),
            "agent:main:telegram:group:abc"
        );
        assert_eq!(
            normalize_session_key("agent:main:signal:group:AbC=:thread:X"),
            "agent:main:signal:group:AbC=:thread:x"
        );
        assert_eq!(
            normalize_session_key("Agent:Main:Matrix:Channel:!RoomId:Server:THREAD:$EvT"),
            "agent:main:matrix:channel:!RoomId:Server:thread:$EvT"
        );
        assert_eq!(
            normalize_session_key("matrix:group:AbC"),
            "matrix:group:AbC"
        );
        assert_eq!(
            normalize_session_key("  Signal:Group: AbC :x"),
            "signal:group:AbC:x"
        );
        assert_eq!(normalize_session_key(""), "");
        assert_eq!(normalize_session_key("  \u{FEFF} "), "");
        assert!(parse_agent_session_key("agent::main").is_none());
        assert!(parse_agent_session_key("agent:main:").is_none());
        assert!(parse_agent_session_key("agent:main").is_none());
        assert!(parse_agent_session_key("agent:main::x").is_none());
        assert!(parse_agent_session_key("agent: :x").is_none());
        assert_eq!(
            parse_agent_session_key("Agent:Main:Foo:Bar"),
            Some(AgentSessionKey {
                agent_id: "main".into(),
                rest: "foo:bar".into()
            })
        );
    }

    fn ctx(default: &str, agents: &[&str]) -> KeyContext {
        KeyContext {
            default_agent_id: default.into(),
            main_key: "main".into(),
            scope_global: false,
            configured_agents: agents.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn store_key_resolution() {
        let c = ctx("work", &["work"]);
        assert_eq!(resolve_store_key("GLOBAL", &c), "global");
        assert_eq!(resolve_store_key("Unknown", &c), "unknown");
        assert_eq!(resolve_store_key("main", &c), "agent:work:main");
        assert_eq!(resolve_store_key("MAIN", &c), "agent:work:main");
        assert_eq!(resolve_store_key("agent:main:main", &c), "agent:work:main");
        assert_eq!(
            resolve_store_key("foo", &ctx("main", &[])),
            "agent:main:foo"
        );
        assert_eq!(resolve_store_key("Foo", &c), "agent:work:foo");
        assert_eq!(
            resolve_store_key("agent:main:main", &ctx("main", &[])),
            "agent:main:main"
        );
        assert_eq!(resolve_store_key("Agent:Work:X", &c), "agent:work:x");
        assert_eq!(resolve_store_key("agent::main", &c), "agent::main");
        assert_eq!(resolve_store_key("   ", &c), "");
        // main configured alongside work: no remap.
        assert_eq!(
            resolve_store_key("agent:main:main", &ctx("work", &["work", "main"])),
            "agent:main:main"
        );
        let mut g = ctx("main", &[]);
        g.scope_global = true;
        assert_eq!(resolve_store_key("main", &g), "global");
        assert_eq!(resolve_store_key("agent:main:main", &g), "global");
        let mut mk = ctx("work", &["work"]);
        mk.main_key = "Home".into();
        assert_eq!(resolve_store_key("home", &mk), "agent:work:home");
        assert_eq!(resolve_store_key("agent:work:main", &mk), "agent:work:home");
        assert_eq!(resolve_store_key("agent:main:home", &mk), "agent:work:home");
        assert_eq!(
            canonicalize_main_alias("agent:main:main", "ops", &mk),
            "agent:ops:home"
        );
    }

    #[test]
    fn kinds() {
        let c = KeyContext::default();
        assert_eq!(tool_kind("main", &empty(), &c), "main");
        assert_eq!(tool_kind("agent:main:main", &empty(), &c), "other");
        assert_eq!(tool_kind("cron:job1", &empty(), &c), "cron");
        assert_eq!(tool_kind("agent:main:cron:job1", &empty(), &c), "other");
        assert_eq!(tool_kind("hook:abc", &empty(), &c), "hook");
        assert_eq!(tool_kind("node-abc", &empty(), &c), "node");
        assert_eq!(tool_kind("node:abc", &empty(), &c), "node");
        assert_eq!(
            tool_kind("agent:main:telegram:group:1", &empty(), &c),
            "group"
        );
        assert_eq!(
            tool_kind("x", &obj(json!({"chatType": "channel"})), &c),
            "group"
        );
        let mut g = c.clone();
        g.scope_global = true;
        assert_eq!(tool_kind("global", &empty(), &g), "main");
        assert_eq!(tool_kind("global", &empty(), &c), "other");

        let spawned = obj(json!({"spawnedBy": "agent:main:main"}));
        let cases: &[(&str, &Map<String, Value>, &str)] = &[
            ("agent:main:main", &empty(), "direct"),
            (
                "agent:main:telegram:group:-100",
                &obj(json!({"chatType": "group"})),
                "group",
            ),
            ("agent:main:cron:job1", &empty(), "cron"),
            ("agent:main:cron:job1:run:abc", &empty(), "cron"),
            ("agent:main:hook:abc", &empty(), "direct"),
            ("agent:main:subagent:x", &spawned, "spawn-child"),
            ("agent:main:discord:channel:555", &empty(), "group"),
            ("global", &empty(), "global"),
            ("unknown", &empty(), "unknown"),
            ("cron:legacy", &empty(), "direct"),
            ("node-abc", &empty(), "direct"),
            ("Agent:Main:MixedCase", &empty(), "direct"),
            ("Agent:Main:Cron:X", &empty(), "cron"),
            ("agent:work:main", &empty(), "direct"),
        ];
        for (k, e, want) in cases {
            assert_eq!(cli_row_kind(k, *e), *want, "{k}");
        }
        assert_eq!(cli_row_kind("x", &obj(json!({"spawnedBy": ""}))), "direct");
        assert_eq!(gateway_row_kind("agent:main:cron:x", &empty()), "direct");
        assert_eq!(
            gateway_row_kind("agent:main:slack:channel:c", &empty()),
            "group"
        );
    }

    #[test]
    fn chat_type_shapes() {
        let t = |k: &str| chat_type_from_key(k);
        assert_eq!(t("agent:main:direct:bob").chat_type, Some("direct"));
        assert_eq!(t("agent:main:direct:bob").channel, None);
        let g = t("agent:main:discord:group:1");
        assert_eq!(
            (g.chat_type, g.channel.as_deref()),
            (Some("group"), Some("discord"))
        );
        let a = t("agent:main:telegram:acct:dm:5");
        assert_eq!(
            (a.chat_type, a.channel.as_deref()),
            (Some("direct"), Some("telegram"))
        );
        assert_eq!(t("group:x").chat_type, Some("group"));
        assert_eq!(t("channel:x").chat_type, Some("channel"));
        assert_eq!(t("123@g.us").chat_type, Some("group"));
        assert_eq!(t("whatsapp:123@g.us").chat_type, Some("group"));
        assert_eq!(t("discord:guild-1:channel-2").chat_type, Some("channel"));
        assert!(t("agent:main:direct:group:x").ambiguous);
        assert_eq!(t("agent:main:direct:group:x").chat_type, None);
        assert!(!t("agent:main:main").ambiguous);
        assert_eq!(t("agent:main:main").chat_type, None);
        // Only the chat type is derived case-insensitively.
        let m = t("agent:main:Discord:Group:1");
        assert_eq!((m.chat_type, m.channel), (Some("group"), None));
        let up = t("Agent:main:discord:group:1");
        assert_eq!((up.chat_type, up.channel), (None, None));
    }

    #[test]
    fn threads() {
        assert_eq!(
            thread_id("agent:main:slack:channel:c1:thread:171"),
            Some("171")
        );
        assert_eq!(thread_id("agent:main:main:THREAD:Abc"), Some("Abc"));
        assert_eq!(thread_id("a:thread:1:thread:2"), Some("2"));
        assert_eq!(thread_id("a:thread:  "), None);
        assert_eq!(thread_id("a:thread:"), None);
        assert_eq!(thread_id("a"), None);
        // İ lengthens the lower-cased copy by one unit: the index lands one unit late.
        assert_eq!(thread_id("İ:thread:abc"), Some("bc"));
    }

    #[test]
    fn synthetic_from_one_parse_matches_the_predicates() {
        let keys = [
            "agent:main:subagent:x",
            " Subagent:x",
            "subagent:",
            "agent:main:acp:x",
            "ACP:y",
            "agent:main:cron:job:run:1",
            "cron:job",
            "agent:main:acp-bridge:z",
            "hook:x",
            "agent:main:hook:x",
            "agent:Main:node:a",
            "heartbeat",
            "agent:main:heartbeat",
            "agent:main:x:heartbeat",
            "agent:main:x:heartbeat:y",
            "agent:main:telegram:group:1",
            "agent:main:",
            "agent::x",
            "agent:main::x",
            "",
            "  ",
            "agent:main:Signal:group:AbC",
            "agent:main:matrix:channel:!Room:thread:1",
            "x:HEARTBEAT",
        ];
        for key in keys {
            let rest = match parse_agent_session_key(key) {
                Some(p) => lower_trim(&p.rest),
                None => lower_trim(key),
            };
            let old = is_subagent_key(key)
                || is_acp_key(key)
                || is_cron_key(key)
                || rest.starts_with("acp-bridge:")
                || rest.starts_with("hook:")
                || rest.starts_with("node:")
                || rest == "heartbeat"
                || rest.ends_with(":heartbeat")
                || rest.contains(":heartbeat:");
            assert_eq!(synthetic_and_rest(key), (old, rest), "{key:?}");
        }
    }

    /// The plain-key road of [`durable_by_key`] agrees with the general one (every regex
    /// run, no literal check first) on keys built from the tricky pieces of each rule.
    #[test]
    fn plain_keys_take_the_allocation_free_road_and_agree() {
        let general = |key: &str| {
            let (synthetic, rest) = synthetic_and_rest(key);
            let re = shape_regexes();
            if synthetic {
                Some(false)
            } else if thread_id(key).is_some() || re[0].is_match(&rest) || re[1].is_match(&rest) {
                Some(true)
            } else {
                None
            }
        };
        let heads = [
            "agent:main:",
            "AGENT:Ops:",
            "agent: :",
            "agent::",
            "agent:x::",
            "",
            "x:",
            "\tagent:m:",
        ];
        let rests = [
            "whatsapp:direct:1",
            "telegram:group:-100",
            "Telegram:Direct:5:Topic:7",
            "telegram:dm:5:topic:",
            "telegram:group:1:topic:a:b",
            "discord:channel:555",
            "slack:channel:c1:thread:171",
            "main:THREAD:Abc",
            "main:thread: ",
            "main:thread:",
            "subagent:x",
            "SUBAGENT:",
            "acp:y",
            "acp-bridge:z",
            "cron:job:run:1",
            "hook:x",
            "node:a",
            "heartbeat",
            "x:Heartbeat",
            "x:heartbeat:y",
            "explicit:model-run-1",
            "whatsapp:group:123@g.us",
            "a:b:group:",
            ":group:x",
            "x1",
            " padded ",
            "x\u{b}",
            "signal:group:AbC",
            "matrix:channel:!Room",
            "caf\u{e9}:group:1",
        ];
        let mut plain = 0;
        for head in heads {
            for rest in rests {
                let key = format!("{head}{rest}");
                if let Some(verdict) = durable_by_plain_key(&key) {
                    plain += 1;
                    assert_eq!(verdict, general(&key), "{key:?}");
                }
                assert_eq!(durable_by_key(&key), general(&key), "{key:?}");
            }
        }
        // Most keys are plain; white space at an end, non-ASCII and signal/matrix are not.
        assert!(plain > heads.len() * rests.len() * 2 / 3, "{plain}");
        for key in [
            "\tagent:m:x",
            "agent:m:x\u{b}",
            "agent:m:signal:group:A",
            "caf\u{e9}",
        ] {
            assert_eq!(durable_by_plain_key(key), None, "{key:?}");
        }
    }

    #[test]
    fn e8_durable_vs_synthetic() {
        let none = HashSet::new();
        let kept: &[(&str, Value)] = &[
            ("agent:main:telegram:group:-100", json!({})),
            ("agent:main:discord:channel:555", json!({})),
            ("agent:main:slack:channel:c1:thread:171", json!({})),
            ("agent:main:main:thread:42", json!({})),
            ("agent:main:main:THREAD:Abc", json!({})),
            ("agent:main:telegram:group:-100:topic:7", json!({})),
            ("agent:main:telegram:direct:123:topic:5", json!({})),
            ("agent:main:whatsapp:group:123@g.us", json!({})),
            ("agent:main:x1", json!({"chatType": "group"})),
            ("agent:main:x2", json!({"origin": {"chatType": "channel"}})),
            ("agent:main:x3", json!({"chatType": "thread"})),
            ("agent:main:x4", json!({"chatType": " GROUP "})),
            ("telegram:group:legacy", json!({})),
        ];
        for (k, e) in kept {
            assert!(is_protected_entry(k, &obj(e.clone()), &none), "{k} kept");
        }
        let pruned: &[(&str, Value)] = &[
            ("agent:main:main", json!({})),
            ("agent:main:telegram:direct:123", json!({})),
            ("agent:main:direct:bob", json!({})),
            ("agent:main:cron:job", json!({})),
            ("agent:main:cron:job:run:1", json!({})),
            ("agent:main:hook:abc", json!({})),
            ("agent:main:node:abc", json!({})),
            ("agent:main:subagent:abc", json!({"chatType": "group"})),
            ("agent:main:acp:abc", json!({})),
            ("agent:main:acp-bridge:abc", json!({})),
            ("agent:main:heartbeat", json!({})),
            ("agent:main:main:heartbeat", json!({})),
            ("agent:main:x:heartbeat:y", json!({})),
            ("agent:main:discord:channel:1:heartbeat", json!({})),
            ("agent:main:hook:x:thread:1", json!({})),
            ("agent:main:cron:j:thread:1", json!({})),
            ("agent:main:acp:x:group:y", json!({})),
            ("agent:main:node:x:channel:y", json!({})),
            ("agent:main:telegram:dm:1:topic:x:y", json!({})),
            ("agent:main:slack:slash:u1", json!({})),
            (
                "agent:main:explicit:model-run-123e4567-e89b-12d3-a456-426614174000",
                json!({}),
            ),
            ("agent:main:explicit:other", json!({})),
            ("cron:legacy", json!({})),
            ("hook:legacy", json!({})),
            ("group:legacy", json!({})),
            ("agent:main:foo:group:", json!({})),
            ("global", json!({})),
            (
                "agent:main:y",
                json!({"chatType": null, "origin": {"chatType": "direct"}}),
            ),
        ];
        for (k, e) in pruned {
            assert!(!is_protected_entry(k, &obj(e.clone()), &none), "{k} pruned");
        }
        assert!(is_synthetic_key("subagent:x"));
        assert!(is_synthetic_key("ACP:x"));
        assert!(!is_synthetic_key("cron:legacy"));
        assert!(is_synthetic_key("hook:legacy"));
    }

    #[test]
    fn preserve_set_is_verbatim() {
        let p = preserve_set(["Agent:Main:E", "  "]);
        assert_eq!(p.len(), 1);
        assert!(is_protected_entry("agent:main:e", &empty(), &p));
        assert!(!is_protected_entry("Agent:Main:E", &empty(), &p));
    }

    #[test]
    fn model_run_keys() {
        let u = "123e4567-e89b-12d3-a456-426614174000";
        assert!(is_model_run_probe_key(&format!(
            "agent:main:explicit:model-run-{u}"
        )));
        assert!(is_model_run_probe_key(&format!(
            "agent:Main:explicit:MODEL-RUN-{}",
            u.to_uppercase()
        )));
        assert!(!is_model_run_probe_key("agent:main:explicit:model-run-zzz"));
        assert!(!is_model_run_probe_key(&format!(
            " agent:main:explicit:model-run-{u}"
        )));
        assert!(!is_model_run_probe_key(&format!(
            "agent:main:x:explicit:model-run-{u}"
        )));
        assert!(!is_model_run_probe_key(&format!(
            "agent:m\u{A0}n:explicit:model-run-{u}"
        )));
    }

    #[test]
    fn dm_scope_shapes() {
        assert!(dm_scope_retirable(
            "agent:main:telegram:direct:123",
            "main",
            None
        ));
        assert!(dm_scope_retirable(
            "agent:main:telegram:acct1:direct:123",
            "main",
            None
        ));
        assert!(dm_scope_retirable("agent:main:direct:bob", "main", None));
        assert!(!dm_scope_retirable(
            "agent:main:direct:bob",
            "main",
            Some("agent:main:direct:bob")
        ));
        assert!(dm_scope_retirable(
            "agent:main:direct:bob",
            "main",
            Some("")
        ));
        assert!(!dm_scope_retirable(
            "agent:main:telegram:direct:123:thread:9",
            "main",
            None
        ));
        assert!(!dm_scope_retirable("agent:main:dm:bob", "main", None));
        assert!(!dm_scope_retirable("agent:work:direct:bob", "main", None));
        assert!(!dm_scope_retirable("direct:legacy", "main", None));
        assert!(!dm_scope_retirable(
            "agent:main:telegram:group:1",
            "main",
            None
        ));
        assert!(!dm_scope_retirable("agent:main:x::direct:1", "main", None));
        assert!(dm_scope_retirable("Agent:Main:Direct:Bob", "MAIN", None));
    }
}
