//! A legacy (2026.7) store entry as 2026.9.6's `doctor --session-sqlite import` stores it
//! in `session_nodes.entry_json`.
//!
//! Doctor reads `sessions.json` with `JSON.parse`, then per entry runs
//! `normalizeLegacySessionEntryDelivery` (the eight legacy delivery fields `route`,
//! `deliveryContext`, `origin`, `channel`, `lastChannel`, `lastTo`, `lastAccountId`,
//! `lastThreadId` folded into one closed `delivery` state: `none`, `internal` or
//! `external` with a route, a context and an origin), `migrateLegacySessionCreator`, and
//! `writeSessionEntry` (`providerReview`, `profileInvolvement`, `publicShare` checks),
//! which serialises `projectCanonicalSessionEntryShape` of the result: retired locator
//! and counter fields gone, the legacy pending-delivery, fallback-notice and memory-flush
//! fields folded into their objects, icon and colour normalised or dropped, archive
//! fields kept only with an `archivedAt`. The key order is JavaScript's: a field that is
//! replaced keeps its place, a new one goes at the end.
//!
//! The facts come from 9.6's `delivery-context.shared.ts`, `channel-route.ts`,
//! `account-id.ts`, `state-migrations.legacy-session-store.ts`, `store-entry-shape.ts`
//! and `session-accessor.sqlite-entry-store.ts`. Where 9.6 consults something this
//! cannot know (channel plugins registered at run time, emoji tables, SVG sanitising,
//! the clock), [`rewrite`] answers `None` rather than guess.

use serde_json::{Map, Value};

use crate::js;

/// The legacy fields whose values are folded into `delivery`.
pub const LEGACY_DELIVERY_FIELDS: &[&str] = &[
    "route",
    "deliveryContext",
    "origin",
    "channel",
    "lastChannel",
    "lastTo",
    "lastAccountId",
    "lastThreadId",
];

/// Why an entry is not rewritten.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unsupported {
    /// A field whose value 9.6 decides with something this import cannot reproduce.
    #[error("{0}: a value this import cannot reproduce exactly; use openclaw doctor")]
    Field(&'static str),
}

// ---- strings, channels, accounts (string-coerce, message-channel, account-id) -----------

/// `normalizeOptionalString`: a trimmed non-blank string.
fn opt_string(v: Option<&Value>) -> Option<String> {
    let s = js::trim(v?.as_str()?);
    (!s.is_empty()).then(|| s.to_string())
}

/// Channel ids 9.6 ships with aliases (`GENERATED_BUNDLED_CHANNEL_IDS`).
const CHANNEL_ALIASES: &[(&str, &str)] = &[
    ("lark", "feishu"),
    ("gchat", "googlechat"),
    ("google-chat", "googlechat"),
    ("imsg", "imessage"),
    ("internet-relay-chat", "irc"),
    ("teams", "msteams"),
    ("nc", "nextcloud-talk"),
    ("nc-talk", "nextcloud-talk"),
    ("twitch-chat", "twitch"),
    ("zl", "zalo"),
    ("zlu", "zalouser"),
];

/// `normalizeMessageChannel` for a string: trimmed, lower case, built-in aliases resolved.
fn message_channel(raw: &str) -> Option<String> {
    let lower = js::to_lower_case(js::trim(raw));
    if lower.is_empty() {
        return None;
    }
    Some(
        CHANNEL_ALIASES
            .iter()
            .find(|(a, _)| *a == lower)
            .map_or(lower, |(_, id)| id.to_string()),
    )
}

/// Channels that never deliver outside (`INTERNAL_NON_DELIVERY_CHANNELS`).
const INTERNAL_NON_DELIVERY: &[&str] = &["heartbeat", "cron", "webhook", "voice", "sessions_send"];

fn is_internal_channel(c: &str) -> bool {
    c == "webchat" || INTERNAL_NON_DELIVERY.contains(&c)
}

/// `normalizeOptionalAccountId`: trimmed, lower case; anything but `[a-z0-9_-]` becomes
/// `-` runs, dashes trimmed, at most 64 characters.
pub fn account_id(raw: &str) -> Option<String> {
    let trimmed = js::trim(raw);
    if trimmed.is_empty() {
        return None;
    }
    let lower = js::to_lower_case(trimmed);
    let valid = {
        let b = trimmed.as_bytes();
        (1..=64).contains(&b.len())
            && b[0].is_ascii_alphanumeric()
            && b.iter()
                .all(|c| c.is_ascii_alphanumeric() || *c == b'_' || *c == b'-')
    };
    let canonical = if valid {
        lower
    } else {
        let mut out = String::new();
        let mut in_run = false;
        for c in lower.chars() {
            if c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-' {
                out.push(c);
                in_run = false;
            } else if !in_run {
                out.push('-');
                in_run = true;
            }
        }
        let t = out.trim_matches('-');
        t.chars().take(64).collect()
    };
    (!canonical.is_empty()
        && !matches!(
            canonical.as_str(),
            "__proto__" | "prototype" | "constructor"
        ))
    .then_some(canonical)
}

/// `normalizeOptionalThreadValue`: a finite number truncated, or a trimmed non-blank string.
fn thread_value(v: Option<&Value>) -> Option<Value> {
    match v? {
        Value::Number(n) => {
            if n.is_i64() || n.is_u64() {
                return Some(Value::Number(n.clone()));
            }
            let f = n.as_f64()?.trunc();
            if !f.is_finite() {
                return None;
            }
            if f.abs() < 9.007_199_254_740_992e15 {
                Some(Value::from(f as i64))
            } else {
                serde_json::Number::from_f64(f).map(Value::Number)
            }
        }
        Value::String(s) => {
            let t = js::trim(s);
            (!t.is_empty()).then(|| Value::String(t.to_string()))
        }
        _ => None,
    }
}

/// A property of an object (`value?.[key]` on anything else is `undefined`).
fn prop<'v>(v: Option<&'v Value>, key: &str) -> Option<&'v Value> {
    v?.as_object()?.get(key)
}

// ---- routes and contexts (channel-route.ts, delivery-context.shared.ts) -----------------

/// A normalized channel route reference (`normalizeChannelRouteRef`).
#[derive(Debug, Clone, Default, PartialEq)]
struct RouteRef {
    channel: Option<String>,
    account_id: Option<String>,
    /// `target`: `to`, `rawTo` (when it differs), `chatType` (any truthy value).
    target: Option<(String, Option<String>, Option<Value>)>,
    /// `thread`: `id`, `kind`, `source` (truthy values as they were).
    thread: Option<(Value, Option<Value>, Option<Value>)>,
}

/// The loose input of `normalizeChannelRouteRef`.
#[derive(Default)]
struct RouteInput<'a> {
    channel: Option<&'a Value>,
    to: Option<&'a Value>,
    raw_to: Option<&'a Value>,
    chat_type: Option<&'a Value>,
    account_id: Option<&'a Value>,
    thread_id: Option<Value>,
    thread_kind: Option<&'a Value>,
    thread_source: Option<&'a Value>,
}

fn truthy_clone(v: Option<&Value>) -> Option<Value> {
    v.filter(|v| js::truthy(v)).cloned()
}

fn route_ref(input: RouteInput<'_>) -> Option<RouteRef> {
    let channel = input
        .channel
        .and_then(Value::as_str)
        .map(|s| js::to_lower_case(js::trim(s)))
        .filter(|s| !s.is_empty());
    let account = input
        .account_id
        .and_then(Value::as_str)
        .and_then(account_id);
    let to = opt_string(input.to);
    let raw_to = opt_string(input.raw_to);
    let thread = thread_value(input.thread_id.as_ref());
    if channel.is_none() && to.is_none() && account.is_none() && thread.is_none() {
        return None;
    }
    Some(RouteRef {
        channel,
        account_id: account,
        target: to.map(|to| {
            let raw = raw_to.filter(|r| *r != to);
            (to, raw, truthy_clone(input.chat_type))
        }),
        thread: thread.map(|id| {
            (
                id,
                truthy_clone(input.thread_kind),
                truthy_clone(input.thread_source),
            )
        }),
    })
}

impl RouteRef {
    fn to(&self) -> Option<&String> {
        self.target.as_ref().map(|t| &t.0)
    }
    fn thread_id(&self) -> Option<&Value> {
        self.thread.as_ref().map(|t| &t.0)
    }
    fn to_json(&self) -> Value {
        let mut m = Map::new();
        if let Some(c) = &self.channel {
            m.insert("channel".into(), Value::String(c.clone()));
        }
        if let Some(a) = &self.account_id {
            m.insert("accountId".into(), Value::String(a.clone()));
        }
        if let Some((to, raw, chat)) = &self.target {
            let mut t = Map::new();
            t.insert("to".into(), Value::String(to.clone()));
            if let Some(r) = raw {
                t.insert("rawTo".into(), Value::String(r.clone()));
            }
            if let Some(c) = chat {
                t.insert("chatType".into(), c.clone());
            }
            m.insert("target".into(), Value::Object(t));
        }
        if let Some((id, kind, source)) = &self.thread {
            let mut t = Map::new();
            t.insert("id".into(), id.clone());
            if let Some(k) = kind {
                t.insert("kind".into(), k.clone());
            }
            if let Some(s) = source {
                t.insert("source".into(), s.clone());
            }
            m.insert("thread".into(), Value::Object(t));
        }
        Value::Object(m)
    }
}

/// A normalized delivery context (`normalizeDeliveryContext`'s result).
#[derive(Debug, Clone, Default, PartialEq)]
struct Context {
    channel: Option<String>,
    to: Option<String>,
    account_id: Option<String>,
    thread_id: Option<Value>,
}

impl Context {
    fn to_json(&self) -> Value {
        let mut m = Map::new();
        if let Some(c) = &self.channel {
            m.insert("channel".into(), Value::String(c.clone()));
        }
        if let Some(t) = &self.to {
            m.insert("to".into(), Value::String(t.clone()));
        }
        if let Some(a) = &self.account_id {
            m.insert("accountId".into(), Value::String(a.clone()));
        }
        if let Some(t) = &self.thread_id {
            m.insert("threadId".into(), t.clone());
        }
        Value::Object(m)
    }
    fn is_internal(&self) -> bool {
        self.channel.as_deref().is_some_and(is_internal_channel)
    }
    fn has_external_target(&self) -> bool {
        self.channel
            .as_deref()
            .is_some_and(|c| !is_internal_channel(c))
            && self.to.is_some()
    }
}

/// `normalizeDeliveryContext` of loose fields: `channel` must be a string (normalized as a
/// message channel), the rest go through the route normalization.
fn context_of(
    channel: Option<&Value>,
    to: Option<&Value>,
    account: Option<&Value>,
    thread: Option<Value>,
) -> Option<Context> {
    let channel = channel
        .and_then(Value::as_str)
        .map(|c| message_channel(c).unwrap_or_else(|| js::trim(c).to_string()))
        .map(Value::String);
    let r = route_ref(RouteInput {
        channel: channel.as_ref(),
        to,
        account_id: account,
        thread_id: thread,
        ..RouteInput::default()
    })?;
    Some(Context {
        to: r.to().cloned(),
        thread_id: r.thread_id().cloned(),
        channel: r.channel,
        account_id: r.account_id.as_deref().and_then(account_id),
    })
}

/// `normalizeDeliveryContext` of a context that is already one.
fn renormalize(c: Option<&Context>) -> Option<Context> {
    let c = c?;
    let ch = c.channel.clone().map(Value::String);
    let to = c.to.clone().map(Value::String);
    let acc = c.account_id.clone().map(Value::String);
    context_of(ch.as_ref(), to.as_ref(), acc.as_ref(), c.thread_id.clone())
}

/// `normalizeDeliveryContext(value)` of a stored value: its `channel`, `to`,
/// `accountId`, `threadId`.
fn context_of_value(v: Option<&Value>) -> Option<Context> {
    let v = v.filter(|v| js::truthy(v))?;
    context_of(
        prop(Some(v), "channel"),
        prop(Some(v), "to"),
        prop(Some(v), "accountId"),
        prop(Some(v), "threadId").cloned(),
    )
}

/// `normalizeDeliveryChannelRoute`: a stored route object, normalized.
fn channel_route(v: Option<&Value>) -> Option<RouteRef> {
    let o = v?.as_object()?;
    let target = o.get("target");
    let thread = o.get("thread");
    route_ref(RouteInput {
        channel: o.get("channel"),
        to: prop(target, "to"),
        raw_to: prop(target, "rawTo"),
        chat_type: prop(target, "chatType"),
        account_id: o.get("accountId"),
        thread_id: prop(thread, "id").cloned(),
        thread_kind: prop(thread, "kind"),
        thread_source: prop(thread, "source"),
    })
}

/// `deliveryContextFromChannelRoute` of a normalized route.
fn context_from_route(r: Option<&RouteRef>) -> Option<Context> {
    let json = r.map(RouteRef::to_json);
    let n = channel_route(json.as_ref());
    let ch = n
        .as_ref()
        .and_then(|n| n.channel.clone())
        .map(Value::String);
    let to = n.as_ref().and_then(|n| n.to().cloned()).map(Value::String);
    let acc = n
        .as_ref()
        .and_then(|n| n.account_id.clone())
        .map(Value::String);
    context_of(
        ch.as_ref(),
        to.as_ref(),
        acc.as_ref(),
        n.as_ref().and_then(|n| n.thread_id().cloned()),
    )
}

/// `mergeDeliveryContext`: the primary's fields over the fallback's, never mixing the
/// target, account and thread of two different channels or accounts.
fn merge(primary: Option<&Context>, fallback: Option<&Context>) -> Option<Context> {
    let p = renormalize(primary);
    let f = renormalize(fallback);
    if p.is_none() && f.is_none() {
        return None;
    }
    let pc = p.as_ref().and_then(|c| c.channel.clone());
    let fc = f.as_ref().and_then(|c| c.channel.clone());
    let pa = p.as_ref().and_then(|c| c.account_id.clone());
    let fa = f.as_ref().and_then(|c| c.account_id.clone());
    let channels_conflict = matches!((&pc, &fc), (Some(a), Some(b)) if a != b);
    let accounts_conflict = matches!((&pa, &fa), (Some(a), Some(b)) if a != b);
    let conflict = channels_conflict || accounts_conflict;
    let pick = |pv: Option<String>, fv: Option<String>, c: bool| if c { pv } else { pv.or(fv) };
    let channel = pick(pc, fc, accounts_conflict);
    let to = pick(
        p.as_ref().and_then(|c| c.to.clone()),
        f.as_ref().and_then(|c| c.to.clone()),
        conflict,
    );
    let account = pick(pa, fa, conflict);
    let thread = {
        let pt = p.as_ref().and_then(|c| c.thread_id.clone());
        if conflict {
            pt
        } else {
            pt.or_else(|| f.as_ref().and_then(|c| c.thread_id.clone()))
        }
    };
    let s = |v: Option<String>| v.map(Value::String);
    context_of(
        s(channel).as_ref(),
        s(to).as_ref(),
        s(account).as_ref(),
        thread,
    )
}

/// `mergeExternalDeliveryContextOverInternalRoute`.
fn merge_external_over_internal(ext: Option<&Context>, int: Option<&Context>) -> Option<Context> {
    let s = |v: Option<String>| v.map(Value::String);
    context_of(
        s(ext.and_then(|c| c.channel.clone())).as_ref(),
        s(ext.and_then(|c| c.to.clone())).as_ref(),
        s(ext
            .and_then(|c| c.account_id.clone())
            .or_else(|| int.and_then(|c| c.account_id.clone())))
        .as_ref(),
        ext.and_then(|c| c.thread_id.clone())
            .or_else(|| int.and_then(|c| c.thread_id.clone())),
    )
}

/// `mergeRouteMetadataWithDeliveryContext`: the route's fields, the context's where the
/// route has none.
fn route_with_context(route: Option<&RouteRef>, ctx: &Context) -> Option<RouteRef> {
    let s = |v: Option<String>| v.map(Value::String);
    let Some(r) = route else {
        let c = renormalize(Some(ctx))?;
        return route_ref(RouteInput {
            channel: s(c.channel).as_ref(),
            to: s(c.to).as_ref(),
            account_id: s(c.account_id).as_ref(),
            thread_id: c.thread_id,
            ..RouteInput::default()
        });
    };
    let target = r.target.as_ref();
    let thread = r.thread.as_ref();
    let raw_to = target.and_then(|t| t.1.clone()).map(Value::String);
    route_ref(RouteInput {
        channel: s(r.channel.clone().or_else(|| ctx.channel.clone())).as_ref(),
        to: s(r.to().cloned().or_else(|| ctx.to.clone())).as_ref(),
        raw_to: raw_to.as_ref(),
        chat_type: target.and_then(|t| t.2.as_ref()),
        account_id: s(r.account_id.clone().or_else(|| ctx.account_id.clone())).as_ref(),
        thread_id: r.thread_id().cloned().or_else(|| ctx.thread_id.clone()),
        thread_kind: thread.and_then(|t| t.1.as_ref()),
        thread_source: thread.and_then(|t| t.2.as_ref()),
    })
}

/// `isCanonicalSessionDeliveryState`.
fn is_canonical_delivery(v: Option<&Value>) -> bool {
    let Some(o) = v.and_then(Value::as_object) else {
        return false;
    };
    let is_obj = |k: &str| matches!(o.get(k), Some(Value::Object(_)) | Some(Value::Array(_)));
    match o.get("kind").and_then(Value::as_str) {
        Some("none") | Some("internal") => true,
        Some("external") => is_obj("route") && is_obj("context") && is_obj("origin"),
        _ => false,
    }
}

fn kind_of(v: &Value) -> Option<&str> {
    v.get("kind").and_then(Value::as_str)
}

/// `{ ...origin }` of a stored origin: an object's fields; nothing for null, numbers and
/// booleans. Strings and arrays spread into index keys, which is not reproduced.
fn spread(v: Option<&Value>) -> Result<Map<String, Value>, Unsupported> {
    match v {
        None | Some(Value::Null) | Some(Value::Bool(_)) | Some(Value::Number(_)) => Ok(Map::new()),
        Some(Value::Object(o)) => Ok(o.clone()),
        Some(Value::String(s)) if s.is_empty() => Ok(Map::new()),
        Some(Value::Array(a)) if a.is_empty() => Ok(Map::new()),
        Some(_) => Err(Unsupported::Field("origin")),
    }
}

/// `target[key] ??= value`: a nullish field takes the value (in place), or goes when
/// there is none (`undefined` is not written).
fn fill(origin: &mut Map<String, Value>, key: &str, value: Option<Value>) {
    if matches!(origin.get(key), Some(v) if !v.is_null()) {
        return;
    }
    match value {
        Some(v) => {
            origin.insert(key.into(), v);
        }
        None => {
            origin.shift_remove(key);
        }
    }
}

/// `normalizeSessionDeliveryState({ route, context, origin })`.
fn delivery_state(
    route: Option<&RouteRef>,
    context: Option<&Context>,
    origin: Option<&Value>,
) -> Result<Value, Unsupported> {
    let none = || serde_json::json!({"kind": "none"});
    let route_json = route.map(RouteRef::to_json);
    let normalized_route = channel_route(route_json.as_ref());
    let route_context = context_from_route(normalized_route.as_ref());
    let origin_context = context_of(
        prop(origin, "provider"),
        prop(origin, "to"),
        prop(origin, "accountId"),
        prop(origin, "threadId").cloned(),
    );
    let context = renormalize(context);
    let fallback = merge(context.as_ref(), origin_context.as_ref());
    let internal_fallback = route_context.as_ref().is_some_and(Context::is_internal)
        && context.as_ref().is_some_and(Context::has_external_target);
    let merged = if internal_fallback {
        merge_external_over_internal(
            context.as_ref(),
            merge(route_context.as_ref(), origin_context.as_ref()).as_ref(),
        )
    } else {
        merge(route_context.as_ref(), fallback.as_ref())
    };
    let Some(merged) = merged else {
        return Ok(none());
    };
    if merged.is_internal() {
        return Ok(serde_json::json!({"kind": "internal"}));
    }
    let final_route = route_with_context(
        if internal_fallback {
            None
        } else {
            normalized_route.as_ref()
        },
        &merged,
    );
    let Some(final_route) = final_route else {
        return Ok(none());
    };
    let mut o = spread(origin)?;
    fill(
        &mut o,
        "provider",
        merged.channel.clone().map(Value::String),
    );
    fill(&mut o, "to", merged.to.clone().map(Value::String));
    fill(
        &mut o,
        "accountId",
        merged.account_id.clone().map(Value::String),
    );
    fill(&mut o, "threadId", merged.thread_id.clone());
    fill(
        &mut o,
        "chatType",
        final_route.target.as_ref().and_then(|t| t.2.clone()),
    );
    let mut d = Map::new();
    d.insert("kind".into(), "external".into());
    d.insert("route".into(), final_route.to_json());
    d.insert("context".into(), merged.to_json());
    d.insert("origin".into(), Value::Object(o));
    Ok(Value::Object(d))
}

/// `normalizeLegacySessionEntryDelivery`: the legacy delivery fields folded into
/// `delivery` and removed.
fn fold_delivery(entry: Map<String, Value>) -> Result<Map<String, Value>, Unsupported> {
    let has_legacy = LEGACY_DELIVERY_FIELDS
        .iter()
        .any(|k| entry.contains_key(*k));
    let current = entry.get("delivery");
    if is_canonical_delivery(current) && !has_legacy {
        return Ok(entry);
    }
    let g = |k: &str| entry.get(k);
    let origin = g("origin");
    let route = channel_route(g("route"));
    let route_context = context_from_route(route.as_ref());
    let explicit = context_of_value(g("deliveryContext"));
    let channel_only = |v: Option<&Value>| context_of(v, None, None, None).and_then(|c| c.channel);
    let last_channel = channel_only(g("lastChannel"));
    let stored_channel = channel_only(g("channel"));
    let origin_channel = channel_only(prop(origin, "provider"));
    let last_fields = context_of(
        None,
        g("lastTo"),
        g("lastAccountId"),
        g("lastThreadId").cloned(),
    );
    let has_last_fields = last_fields
        .as_ref()
        .is_some_and(|l| l.to.is_some() || l.account_id.is_some() || l.thread_id.is_some());
    let candidate_channel = last_channel.clone().or_else(|| {
        has_last_fields
            .then(|| stored_channel.clone().or(origin_channel.clone()))
            .flatten()
    });
    let s = |v: Option<String>| v.map(Value::String);
    let last_candidate = context_of(
        s(candidate_channel).as_ref(),
        s(last_fields.as_ref().and_then(|l| l.to.clone())).as_ref(),
        s(last_fields.as_ref().and_then(|l| l.account_id.clone())).as_ref(),
        last_fields.as_ref().and_then(|l| l.thread_id.clone()),
    );
    let lc = last_candidate.as_ref();
    let last_context = (lc.is_some_and(Context::is_internal)
        || lc.is_some_and(Context::has_external_target)
        || (last_channel.is_some() && lc.is_some_and(|c| c.channel.is_some()))
        || lc
            .and_then(|c| c.channel.as_ref())
            .is_some_and(|c| explicit.as_ref().and_then(|e| e.channel.as_ref()) == Some(c)))
    .then(|| last_candidate.clone())
    .flatten();
    let channel_context = context_of(g("channel"), None, None, None);
    let origin_context = context_of(
        prop(origin, "provider"),
        prop(origin, "to"),
        prop(origin, "accountId"),
        prop(origin, "threadId").cloned(),
    );
    let fallback = merge(
        last_context.as_ref(),
        merge(
            explicit.as_ref(),
            merge(channel_context.as_ref(), origin_context.as_ref()).as_ref(),
        )
        .as_ref(),
    );
    let internal_fallback = if route_context.as_ref().is_some_and(Context::is_internal) {
        merge(route_context.as_ref(), last_context.as_ref())
    } else if last_context.as_ref().is_some_and(Context::is_internal) {
        last_context.clone()
    } else if channel_context.as_ref().is_some_and(Context::is_internal) {
        merge(channel_context.as_ref(), last_context.as_ref())
    } else {
        None
    };
    let has_internal_fallback =
        internal_fallback.is_some() && explicit.as_ref().is_some_and(Context::has_external_target);
    let context = if has_internal_fallback {
        merge_external_over_internal(explicit.as_ref(), internal_fallback.as_ref())
    } else {
        merge(route_context.as_ref(), fallback.as_ref())
    };
    let migrated = delivery_state(
        if has_internal_fallback {
            None
        } else {
            route.as_ref()
        },
        context.as_ref(),
        origin,
    )?;
    let recover = is_canonical_delivery(current)
        && match current.and_then(kind_of) {
            Some("none") => kind_of(&migrated) != Some("none"),
            Some("internal") => kind_of(&migrated) == Some("external"),
            _ => false,
        };
    let delivery = match current {
        Some(c) if is_canonical_delivery(Some(c)) && !recover => c.clone(),
        _ => migrated,
    };
    let legacy_chat_type = prop(origin, "chatType")
        .and_then(Value::as_str)
        .filter(|t| matches!(*t, "direct" | "group" | "channel"))
        .map(str::to_string);
    let mut next = entry;
    next.insert("delivery".into(), delivery);
    if matches!(next.get("chatType"), None | Some(Value::Null)) {
        if let Some(t) = legacy_chat_type {
            next.insert("chatType".into(), Value::String(t));
        }
    }
    for k in LEGACY_DELIVERY_FIELDS {
        next.shift_remove(*k);
    }
    Ok(next)
}

// ---- the rest of the entry (session-creator, writeSessionEntry, store-entry-shape) ------

/// `migrateLegacySessionCreator`: a legacy `createdBy` becomes a human `createdActor`
/// with a `source`.
fn migrate_creator(mut entry: Map<String, Value>) -> Map<String, Value> {
    let created_by = entry.get("createdBy").and_then(Value::as_object).cloned();
    let actor: Option<Map<String, Value>> = match entry.get("createdActor") {
        Some(Value::Null) | None => created_by.map(|mut a| {
            a.insert("type".into(), "human".into());
            a.insert("source".into(), "unknown".into());
            a
        }),
        Some(Value::Object(a)) => Some(a.clone()),
        Some(_) => return entry,
    };
    let Some(mut actor) = actor.filter(|a| a.get("type").and_then(Value::as_str) == Some("human"))
    else {
        return entry;
    };
    let from_entry = matches!(entry.get("createdActor"), Some(Value::Object(_)));
    let source = match actor.get("source").and_then(Value::as_str) {
        Some(s @ ("profile" | "channel" | "unknown")) => s.to_string(),
        _ => match entry.get("createdVia").and_then(Value::as_str) {
            Some("operator" | "run") => "profile".into(),
            Some("channel") => "channel".into(),
            _ => "unknown".into(),
        },
    };
    let same_source = actor.get("source").and_then(Value::as_str) == Some(source.as_str());
    if from_entry && same_source && !entry.get("createdBy").is_some_and(js::truthy) {
        return entry;
    }
    actor.insert("source".into(), Value::String(source));
    entry.insert("createdActor".into(), Value::Object(actor));
    entry.shift_remove("createdBy");
    entry
}

/// `normalizeOptionalTimestamp` of a present value: a finite non-negative number, else 0.
fn timestamp(v: Option<&Value>) -> Option<Value> {
    let v = v?;
    Some(match v {
        Value::Number(n) if n.as_f64().is_some_and(|f| f.is_finite() && f >= 0.0) => v.clone(),
        _ => Value::from(0),
    })
}

/// `normalizeCount`: a finite non-negative number, floored.
fn count(v: Option<&Value>) -> Option<Value> {
    match v? {
        Value::Number(n) if n.is_u64() => Some(Value::Number(n.clone())),
        Value::Number(n) => {
            let f = n.as_f64()?;
            (f.is_finite() && f >= 0.0).then(|| {
                let f = f.floor();
                if f < 9.007_199_254_740_992e15 {
                    Value::from(f as u64)
                } else {
                    Value::from(f)
                }
            })
        }
        _ => None,
    }
}

fn is_record(v: Option<&Value>) -> bool {
    matches!(v, Some(Value::Object(_)))
}

fn pending_final_deliveries(v: Option<&Value>) -> Option<Value> {
    let items: Vec<Value> = v?
        .as_array()?
        .iter()
        .filter_map(|item| {
            let id = opt_string(prop(Some(item), "id"))?;
            let state = prop(Some(item), "state")?.as_str()?;
            matches!(
                state,
                "prepared" | "queued" | "delivered" | "suppressed" | "unknown"
            )
            .then(|| serde_json::json!({"id": id, "state": state}))
        })
        .collect();
    (!items.is_empty()).then_some(Value::Array(items))
}

/// `normalizePendingFinalDelivery` of an object.
fn pending_final_delivery(v: Option<&Value>) -> Option<Value> {
    let o = v?.as_object()?;
    let created_at = timestamp(o.get("createdAt"))?;
    let mut base = Map::new();
    base.insert("createdAt".into(), created_at);
    if is_record(o.get("context")) {
        base.insert("context".into(), o["context"].clone());
    }
    if let Some(i) = opt_string(o.get("intentId")) {
        base.insert("intentId".into(), Value::String(i));
    }
    if let Some(d) = pending_final_deliveries(o.get("deliveries")) {
        base.insert("deliveries".into(), d);
    }
    let mut out = Map::new();
    match o.get("kind").and_then(Value::as_str) {
        Some("transport-only") => {
            out.insert("kind".into(), "transport-only".into());
        }
        Some("replayable") => {
            out.insert("kind".into(), "replayable".into());
            out.insert("text".into(), Value::String(opt_string(o.get("text"))?));
        }
        _ => return None,
    }
    out.extend(base);
    Some(Value::Object(out))
}

fn pending_delivery_notice(v: Option<&Value>) -> Option<Value> {
    let o = v?.as_object()?;
    if !is_record(o.get("context")) {
        return None;
    }
    let created_at = timestamp(o.get("createdAt"))?;
    let intent = opt_string(o.get("intentId"))?;
    let state = o.get("state")?.as_str()?;
    if !matches!(state, "owed" | "unresolved" | "acknowledged") {
        return None;
    }
    Some(
        serde_json::json!({"createdAt": created_at, "context": o["context"], "intentId": intent, "state": state}),
    )
}

fn pending_transcript_repair(v: Option<&Value>) -> Option<Value> {
    let items: Vec<Value> = v?
        .as_array()?
        .iter()
        .filter_map(|item| {
            let o = item.as_object()?;
            let id = opt_string(o.get("id"))?;
            let text = opt_string(o.get("text"))?;
            let created_at = timestamp(o.get("createdAt"))?;
            let mut m = Map::new();
            m.insert("id".into(), Value::String(id));
            m.insert("text".into(), Value::String(text));
            if let Some(p) = opt_string(o.get("provider")) {
                m.insert("provider".into(), Value::String(p));
            }
            if let Some(p) = opt_string(o.get("model")) {
                m.insert("model".into(), Value::String(p));
            }
            m.insert("createdAt".into(), created_at);
            Some(Value::Object(m))
        })
        .collect();
    (!items.is_empty()).then_some(Value::Array(items))
}

fn fallback_notice(v: Option<&Value>) -> Option<Value> {
    let o = v?.as_object()?;
    if o.get("kind").and_then(Value::as_str) != Some("active") {
        return None;
    }
    active_notice(
        o.get("selectedModel"),
        o.get("activeModel"),
        o.get("reason"),
    )
}

fn active_notice(
    selected: Option<&Value>,
    active: Option<&Value>,
    reason: Option<&Value>,
) -> Option<Value> {
    let mut m = Map::new();
    m.insert("kind".into(), "active".into());
    m.insert("selectedModel".into(), Value::String(opt_string(selected)?));
    m.insert("activeModel".into(), Value::String(opt_string(active)?));
    if let Some(r) = opt_string(reason) {
        m.insert("reason".into(), Value::String(r));
    }
    Some(Value::Object(m))
}

fn positive(v: &Option<Value>) -> bool {
    v.as_ref().and_then(Value::as_f64).is_some_and(|f| f > 0.0)
}

fn memory_flush(v: Option<&Value>) -> Option<Value> {
    let o = v?.as_object()?;
    let compactions = count(o.get("compactionCount"));
    let kind = o.get("kind").and_then(Value::as_str);
    if kind == Some("succeeded") {
        if let Some(c) = compactions {
            return Some(serde_json::json!({"kind": "succeeded", "compactionCount": c}));
        }
    }
    let failures = count(o.get("failureCount"));
    if kind != Some("failed") || !positive(&failures) {
        return None;
    }
    Some(failed_flush(compactions, failures))
}

fn failed_flush(compactions: Option<Value>, failures: Option<Value>) -> Value {
    let mut m = Map::new();
    m.insert("kind".into(), "failed".into());
    if let Some(c) = compactions {
        m.insert("compactionCount".into(), c);
    }
    m.insert("failureCount".into(), failures.unwrap_or(Value::Null));
    Value::Object(m)
}

/// Glyph icons 9.6 names (`SESSION_ICON_GLYPH_IDS`).
const ICON_GLYPHS: &[&str] = &["braces", "book", "monitor", "bot", "kanban", "coins"];
/// Colours 9.6 names (`SESSION_COLOR_IDS`).
const COLORS: &[&str] = &[
    "red", "blue", "green", "yellow", "purple", "orange", "pink", "cyan",
];

/// `normalizeSessionIconValue`: a glyph id, or nothing for a blank or plain-ASCII value;
/// emoji and SVG icons need tables this does not have.
fn icon(v: &str) -> Result<Option<String>, Unsupported> {
    let t = js::trim(v);
    if t.is_empty() {
        return Ok(None);
    }
    if ICON_GLYPHS.contains(&t) {
        return Ok(Some(t.to_string()));
    }
    if t.starts_with('<') || t.get(..5).is_some_and(|p| p.eq_ignore_ascii_case("data:")) {
        return Err(Unsupported::Field("icon"));
    }
    // Text of printable ASCII is no emoji (RGI_Emoji sequences hold a non-ASCII
    // character; the keycaps `#️⃣` too).
    if t.bytes().all(|b| (0x20..0x7f).contains(&b)) {
        return Ok(None);
    }
    Err(Unsupported::Field("icon"))
}

/// Fields `projectCanonicalSessionEntryShape` drops after folding what they carry.
const RETIRED_FIELDS: &[&str] = &[
    "sessionFile",
    "transcriptPath",
    "pendingFinalDeliveryCreatedAt",
    "pendingFinalDeliveryLastAttemptAt",
    "pendingFinalDeliveryAttemptCount",
    "pendingFinalDeliveryLastError",
    "pendingFinalDeliveryText",
    "pendingFinalDeliveryContext",
    "pendingFinalDeliveryIntentId",
    "fallbackNoticeSelectedModel",
    "fallbackNoticeActiveModel",
    "fallbackNoticeReason",
    "memoryFlushAt",
    "memoryFlushCompactionCount",
    "memoryFlushContextHash",
    "memoryFlushFailureCount",
    "memoryFlushLastFailedAt",
    "memoryFlushLastFailureError",
    "owner",
    "participants",
    "participantCount",
];

/// Sets `key` to `value` in place, or removes it when there is none.
fn set_or_remove(m: &mut Map<String, Value>, key: &str, value: Option<Value>) {
    match value {
        Some(v) => {
            m.insert(key.into(), v);
        }
        None => {
            m.shift_remove(key);
        }
    }
}

/// `projectCanonicalSessionEntryShape`.
fn canonical_shape(value: &Map<String, Value>) -> Result<Map<String, Value>, Unsupported> {
    let g = |k: &str| value.get(k);
    let mut c: Map<String, Value> = value
        .iter()
        .filter(|(k, _)| !RETIRED_FIELDS.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let icon = match c.get("icon") {
        Some(Value::String(s)) => icon(s)?.map(Value::String),
        _ => None,
    };
    set_or_remove(&mut c, "icon", icon);
    let color = match c.get("color") {
        Some(Value::String(s)) => {
            let n = js::to_lower_case(js::trim(s));
            COLORS.contains(&n.as_str()).then_some(Value::String(n))
        }
        _ => None,
    };
    set_or_remove(&mut c, "color", color);
    let legacy_text = opt_string(g("pendingFinalDeliveryText"));
    let intent = opt_string(g("pendingFinalDeliveryIntentId"));
    let pending = pending_final_delivery(c.get("pendingFinalDelivery")).or_else(|| {
        (legacy_text.is_some() || g("pendingFinalDelivery") == Some(&Value::Bool(true))).then(
            || {
                let mut m = Map::new();
                match &legacy_text {
                    Some(t) => {
                        m.insert("kind".into(), "replayable".into());
                        m.insert("text".into(), Value::String(t.clone()));
                    }
                    None => {
                        m.insert("kind".into(), "transport-only".into());
                    }
                }
                let created = timestamp(g("pendingFinalDeliveryCreatedAt"))
                    .or_else(|| timestamp(g("updatedAt")))
                    .unwrap_or(Value::from(0));
                m.insert("createdAt".into(), created);
                if is_record(g("pendingFinalDeliveryContext")) {
                    m.insert(
                        "context".into(),
                        value["pendingFinalDeliveryContext"].clone(),
                    );
                }
                if let Some(i) = &intent {
                    m.insert("intentId".into(), Value::String(i.clone()));
                }
                Value::Object(m)
            },
        )
    });
    set_or_remove(&mut c, "pendingFinalDelivery", pending);
    let notice = pending_delivery_notice(c.get("pendingDeliveryNotice"));
    set_or_remove(&mut c, "pendingDeliveryNotice", notice);
    let repair = pending_transcript_repair(c.get("pendingTranscriptRepair"));
    set_or_remove(&mut c, "pendingTranscriptRepair", repair);
    let fallback = fallback_notice(c.get("fallbackNotice")).or_else(|| {
        active_notice(
            g("fallbackNoticeSelectedModel"),
            g("fallbackNoticeActiveModel"),
            g("fallbackNoticeReason"),
        )
    });
    set_or_remove(&mut c, "fallbackNotice", fallback);
    let compactions = count(g("memoryFlushCompactionCount"));
    let failures = count(g("memoryFlushFailureCount"));
    let flush = memory_flush(c.get("memoryFlush")).or_else(|| {
        if positive(&failures) {
            Some(failed_flush(compactions.clone(), failures.clone()))
        } else {
            compactions
                .clone()
                .map(|c| serde_json::json!({"kind": "succeeded", "compactionCount": c}))
        }
    });
    set_or_remove(&mut c, "memoryFlush", flush);
    let reason = c
        .get("archiveReason")
        .and_then(Value::as_str)
        .filter(|r| {
            matches!(
                *r,
                "manual"
                    | "active-session-cap"
                    | "age-retention"
                    | "stale-dashboard"
                    | "restart-recovery"
            )
        })
        .map(|r| Value::String(r.to_string()));
    if c.contains_key("archivedAt") {
        set_or_remove(&mut c, "archiveReason", reason);
    } else {
        c.shift_remove("archivedBy");
        c.shift_remove("archiveReason");
    }
    Ok(c)
}

/// What `writeSessionEntry` changes on a fresh import (no previous row, stored aliases
/// allowed): a `providerReview` of another session and a `publicShare` of another
/// generation go, a `profileInvolvement` is re-keyed to the session key.
fn write_entry_checks(
    mut e: Map<String, Value>,
    key: &str,
) -> Result<Map<String, Value>, Unsupported> {
    let sid = e.get("sessionId").cloned();
    if prop(e.get("providerReview"), "sessionId") != sid.as_ref() || sid.is_none() {
        e.shift_remove("providerReview");
    }
    match e.get("profileInvolvement") {
        Some(Value::Object(inv)) => {
            let mut inv = inv.clone();
            inv.insert("key".into(), Value::String(key.to_string()));
            e.insert("profileInvolvement".into(), Value::Object(inv));
        }
        Some(v) if js::truthy(v) => return Err(Unsupported::Field("profileInvolvement")),
        _ => {}
    }
    if e.get("incognito") == Some(&Value::Bool(true))
        || prop(e.get("publicShare"), "sessionId") != sid.as_ref()
        || sid.is_none()
    {
        e.shift_remove("publicShare");
    }
    Ok(e)
}

/// A legacy entry of `key` as 9.6's import stores it (see the module doc). The entry must
/// have a non-negative `updatedAt` (9.6 stamps others with the clock).
pub fn rewrite(key: &str, entry: &Map<String, Value>) -> Result<Map<String, Value>, Unsupported> {
    if !matches!(entry.get("updatedAt"), Some(Value::Number(n)) if n.as_f64().is_some_and(|f| f.is_finite() && f >= 0.0))
    {
        return Err(Unsupported::Field("updatedAt"));
    }
    let folded = migrate_creator(fold_delivery(entry.clone())?);
    let written = write_entry_checks(folded, key)?;
    let mut out = canonical_shape(&written)?;
    // stripRuntimeOnlySessionSkillsFields: the resolved catalog is runtime-only.
    if let Some(Value::Object(snap)) = out.get_mut("skillsSnapshot") {
        snap.shift_remove("resolvedSkills");
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rw(v: Value) -> Value {
        Value::Object(rewrite("agent:main:x", v.as_object().unwrap()).unwrap())
    }

    #[test]
    fn accounts_are_canonicalised_like_9_6() {
        assert_eq!(account_id(" Work ").as_deref(), Some("work"));
        assert_eq!(account_id("Bot Two!").as_deref(), Some("bot-two"));
        assert_eq!(account_id("--").as_deref(), None);
        assert_eq!(account_id("constructor").as_deref(), None);
    }

    #[test]
    fn a_route_with_account_and_thread_folds_into_an_external_delivery() {
        let out = rw(json!({"sessionId":"s","updatedAt":1,
            "route":{"channel":"Telegram","accountId":"Bot","target":{"to":"42","chatType":"direct"},"thread":{"id":7.9}},
            "lastChannel":"telegram","lastTo":"42"}));
        assert_eq!(
            out,
            json!({"sessionId":"s","updatedAt":1,"delivery":{"kind":"external",
                "route":{"channel":"telegram","accountId":"bot","target":{"to":"42","chatType":"direct"},"thread":{"id":7}},
                "context":{"channel":"telegram","to":"42","accountId":"bot","threadId":7},
                "origin":{"provider":"telegram","to":"42","accountId":"bot","threadId":7,"chatType":"direct"}}})
        );
    }

    #[test]
    fn internal_channels_and_bare_entries() {
        assert_eq!(
            rw(json!({"sessionId":"s","updatedAt":1,"lastChannel":"webchat"}))["delivery"],
            json!({"kind":"internal"})
        );
        assert_eq!(
            rw(json!({"sessionId":"s","updatedAt":1,"lastTo":"x"}))["delivery"],
            json!({"kind":"none"})
        );
    }

    #[test]
    fn legacy_pending_and_notice_fields_fold_into_objects() {
        let out = rw(
            json!({"sessionId":"s","updatedAt":5,"pendingFinalDelivery":true,"pendingFinalDeliveryText":" t ",
            "fallbackNoticeSelectedModel":"a","fallbackNoticeActiveModel":"b","memoryFlushCompactionCount":2.5,"icon":"bot","color":"Red"}),
        );
        assert_eq!(
            out,
            json!({"sessionId":"s","updatedAt":5,"pendingFinalDelivery":{"kind":"replayable","text":"t","createdAt":5},
                "icon":"bot","color":"red","delivery":{"kind":"none"},
                "fallbackNotice":{"kind":"active","selectedModel":"a","activeModel":"b"},
                "memoryFlush":{"kind":"succeeded","compactionCount":2}})
        );
    }
}
