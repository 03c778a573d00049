//! `session.sendPolicy` (`store.md` §7): whether the gateway may send into a session, and which rule
//! decided it.

use serde_json::{Map, Value};

use crate::js;
use crate::session::session_key::{
    chat_type_from_key, field, lower_trim, normalize_chat_type, opt_lower, strip_agent_prefix,
};

/// Where an entry records the channel it talks on, which depends on the store it came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryChannels {
    /// A `sessions.json` entry (2026.7): `channel`, else `lastChannel`.
    Legacy,
    /// An agent-database entry (2026.8+), whose import folded `origin`, `lastChannel`,
    /// `lastTo` and `channel` into `delivery`: 2026.9.6's `sessionDeliveryChannel`,
    /// `delivery.context.channel ?? delivery.origin.provider` for an `external` delivery.
    Delivery,
}

/// `sessionDeliveryChannel` (2026.9.6): the channel of an external delivery.
fn delivery_channel(entry: Option<&Map<String, Value>>) -> Option<&Value> {
    let delivery = js::non_nullish(entry.and_then(|e| e.get("delivery")))?;
    if field(Some(delivery), "kind").and_then(Value::as_str) != Some("external") {
        return None;
    }
    field(field(Some(delivery), "context"), "channel")
        .or_else(|| field(field(Some(delivery), "origin"), "provider"))
}

/// Which step of the algorithm produced the decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DecidedBy {
    /// The entry's own `sendPolicy` override.
    EntryOverride,
    /// No (or a falsy) `session.sendPolicy`: allow.
    NoPolicy,
    /// The key matches more than one peer shape: deny.
    AmbiguousKey,
    /// The first matching `deny` rule, by index in `rules`.
    DenyRule(usize),
    /// No deny matched; the first matching `allow` rule, by index in `rules`.
    AllowRule(usize),
    /// No rule matched: `sendPolicy.default`, or allow.
    Default,
}

/// The outcome of [`resolve_send_policy`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SendDecision {
    /// `allow` or `deny`.
    pub decision: &'static str,
    /// The step that decided.
    pub reason: DecidedBy,
}

/// `normalizeSendPolicy`: `allow` or `deny` from a trimmed, case-insensitive string.
pub fn normalize_send_policy(v: Option<&Value>) -> Option<&'static str> {
    match opt_lower(v).as_deref() {
        Some("allow") => Some("allow"),
        Some("deny") => Some("deny"),
        _ => None,
    }
}

fn decide(decision: &'static str, reason: DecidedBy) -> SendDecision {
    SendDecision { decision, reason }
}

/// A rule's `match` field, when the rule and its `match` are objects (others match everything).
fn matcher<'a>(rule: &'a Value, name: &str) -> Option<&'a Value> {
    rule.as_object()
        .and_then(|r| js::non_nullish(r.get("match")))
        .and_then(Value::as_object)
        .and_then(|m| m.get(name))
}

/// `resolveSendPolicy` for a store key and its entry under the config's `session` object (§7).
///
/// `call_channel` / `call_chat_type` are the channel and chat type of the send itself, when
/// known; they take precedence over the entry's (read as `channels` says) and the key's.
pub fn resolve_send_policy(
    key: &str,
    entry: Option<&Map<String, Value>>,
    channels: EntryChannels,
    session_cfg: &Value,
    call_channel: Option<&str>,
    call_chat_type: Option<&str>,
) -> SendDecision {
    let entry_field = |name: &str| entry.and_then(|e| e.get(name));
    if let Some(d) = normalize_send_policy(entry_field("sendPolicy")) {
        return decide(d, DecidedBy::EntryOverride);
    }
    let policy = session_cfg
        .as_object()
        .and_then(|s| s.get("sendPolicy"))
        .filter(|p| js::truthy(p));
    let Some(policy) = policy else {
        return decide("allow", DecidedBy::NoPolicy);
    };
    let from_key = chat_type_from_key(key);
    if from_key.ambiguous {
        return decide("deny", DecidedBy::AmbiguousKey);
    }
    let raw_norm = lower_trim(key);
    let stripped_norm = lower_trim(strip_agent_prefix(key).unwrap_or(""));

    let channel = || {
        call_channel
            .map(lower_trim)
            .filter(|c| !c.is_empty())
            .or_else(|| match channels {
                EntryChannels::Legacy => opt_lower(entry_field("channel"))
                    .or_else(|| opt_lower(entry_field("lastChannel"))),
                EntryChannels::Delivery => opt_lower(delivery_channel(entry)),
            })
            .or_else(|| from_key.channel.clone())
    };
    let chat_type = || {
        // `call ?? entry.chatType`: a given call value, even an unusable one, hides the entry's.
        let first = match call_chat_type {
            Some(c) => normalize_chat_type(c),
            None => entry_field("chatType")
                .and_then(Value::as_str)
                .and_then(normalize_chat_type),
        };
        first.or(from_key.chat_type)
    };

    let rules: &[Value] = policy
        .get("rules")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice);
    let mut allowed: Option<usize> = None;
    for (i, rule) in rules.iter().enumerate() {
        if !js::truthy(rule) {
            continue;
        }
        let action = rule
            .as_object()
            .and_then(|r| normalize_send_policy(r.get("action")))
            .unwrap_or("allow");
        let m_channel = opt_lower(matcher(rule, "channel"));
        let m_chat = matcher(rule, "chatType")
            .and_then(Value::as_str)
            .and_then(normalize_chat_type);
        let m_prefix = opt_lower(matcher(rule, "keyPrefix"));
        let m_raw_prefix = opt_lower(matcher(rule, "rawKeyPrefix"));
        if m_channel.is_some() && m_channel != channel() {
            continue;
        }
        if m_chat.is_some() && m_chat != chat_type() {
            continue;
        }
        if m_raw_prefix
            .as_deref()
            .is_some_and(|p| !raw_norm.starts_with(p))
        {
            continue;
        }
        if m_prefix
            .as_deref()
            .is_some_and(|p| !raw_norm.starts_with(p) && !stripped_norm.starts_with(p))
        {
            continue;
        }
        if action == "deny" {
            return decide("deny", DecidedBy::DenyRule(i));
        }
        allowed.get_or_insert(i);
    }
    if let Some(i) = allowed {
        return decide("allow", DecidedBy::AllowRule(i));
    }
    let default = normalize_send_policy(policy.get("default")).unwrap_or("allow");
    decide(default, DecidedBy::Default)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn e26_cfg() -> Value {
        json!({"sendPolicy": {
            "default": "deny",
            "rules": [
                {"action": "deny", "match": {"channel": "discord", "chatType": "group"}},
                {"action": "allow", "match": {"keyPrefix": "telegram:"}},
                {"action": "deny", "match": {"rawKeyPrefix": "agent:work:"}}
            ]
        }})
    }

    fn run(key: &str, entry: Option<Value>, cfg: &Value) -> SendDecision {
        let e = entry.map(|v| v.as_object().cloned().unwrap());
        resolve_send_policy(key, e.as_ref(), EntryChannels::Legacy, cfg, None, None)
    }

    #[test]
    fn e26() {
        let cfg = e26_cfg();
        assert_eq!(
            run("agent:main:discord:group:1", None, &cfg),
            decide("deny", DecidedBy::DenyRule(0))
        );
        assert_eq!(
            run("agent:main:telegram:direct:5", None, &cfg),
            decide("allow", DecidedBy::AllowRule(1))
        );
        assert_eq!(
            run("agent:work:telegram:direct:5", None, &cfg),
            decide("deny", DecidedBy::DenyRule(2))
        );
        assert_eq!(
            run("agent:main:main", None, &cfg),
            decide("deny", DecidedBy::Default)
        );
        assert_eq!(
            run(
                "agent:main:main",
                Some(json!({"sendPolicy": " ALLOW "})),
                &cfg
            ),
            decide("allow", DecidedBy::EntryOverride)
        );
        assert_eq!(
            run("agent:main:direct:group:x", None, &cfg),
            decide("deny", DecidedBy::AmbiguousKey)
        );
        assert_eq!(
            run("agent:main:main", None, &Value::Null),
            decide("allow", DecidedBy::NoPolicy)
        );
        assert_eq!(
            run("agent:main:main", None, &json!({"sendPolicy": {}})),
            decide("allow", DecidedBy::Default)
        );
    }

    #[test]
    fn matcher_sources() {
        let cfg = json!({"sendPolicy": {"default": "deny", "rules": [
            {"action": "allow", "match": {"channel": " Slack ", "chatType": "dm"}}
        ]}});
        // Channel from the entry, chat type from the key.
        let e = json!({"channel": "slack"});
        assert_eq!(run("agent:main:direct:u1", Some(e), &cfg).decision, "allow");
        // lastChannel when channel is absent.
        let e = json!({"lastChannel": "SLACK", "chatType": "direct"});
        assert_eq!(run("agent:main:main", Some(e), &cfg).decision, "allow");
        // A call chat type hides the entry's, even when it is unusable.
        let e = json!({"channel": "slack", "chatType": "direct"})
            .as_object()
            .cloned();
        let d = resolve_send_policy(
            "agent:main:main",
            e.as_ref(),
            EntryChannels::Legacy,
            &cfg,
            None,
            Some("room"),
        );
        assert_eq!(d.decision, "deny");
        // A blank call channel does not hide the entry's.
        let d = resolve_send_policy(
            "agent:main:main",
            e.as_ref(),
            EntryChannels::Legacy,
            &cfg,
            Some(" "),
            None,
        );
        assert_eq!(d.decision, "allow");
        // An unknown chatType matcher is no matcher at all.
        let cfg =
            json!({"sendPolicy": {"default": "deny", "rules": [{"match": {"chatType": "room"}}]}});
        assert_eq!(
            run("x", None, &cfg),
            decide("allow", DecidedBy::AllowRule(0))
        );
        // Falsy rules are skipped; truthy non-object rules match everything.
        let cfg = json!({"sendPolicy": {"default": "deny", "rules": [null, 0, "x"]}});
        assert_eq!(
            run("x", None, &cfg),
            decide("allow", DecidedBy::AllowRule(2))
        );
        // keyPrefix also matches the key without its agent prefix.
        let cfg =
            json!({"sendPolicy": {"rules": [{"action": "deny", "match": {"keyPrefix": "cron:"}}]}});
        assert_eq!(run("agent:main:cron:x", None, &cfg).decision, "deny");
        assert_eq!(run("Agent:main:cron:x", None, &cfg).decision, "allow");
    }

    #[test]
    fn delivery_entries_take_the_channel_from_delivery() {
        let cfg = json!({"sendPolicy": {"default": "deny", "rules": [
            {"action": "allow", "match": {"channel": "slack"}}
        ]}});
        let run = |entry: Value| {
            let e = entry.as_object().cloned().unwrap();
            resolve_send_policy(
                "agent:main:x",
                Some(&e),
                EntryChannels::Delivery,
                &cfg,
                None,
                None,
            )
            .decision
        };
        let ext = |ctx: Value, origin: Value| json!({"delivery": {"kind": "external", "context": ctx, "origin": origin}});
        assert_eq!(
            run(ext(json!({"channel": " Slack "}), json!({"provider": "x"}))),
            "allow"
        );
        // `context.channel ?? origin.provider`: only a missing or null channel falls through.
        assert_eq!(
            run(ext(json!({"channel": null}), json!({"provider": "slack"}))),
            "allow"
        );
        assert_eq!(
            run(ext(json!({"channel": ""}), json!({"provider": "slack"}))),
            "deny"
        );
        assert_eq!(run(ext(json!({}), json!({"provider": "slack"}))), "allow");
        // Not external, or only the legacy fields: no channel from the entry.
        assert_eq!(
            run(json!({"delivery": {"kind": "internal", "context": {"channel": "slack"}}})),
            "deny"
        );
        assert_eq!(
            run(json!({"lastChannel": "slack", "channel": "slack"})),
            "deny"
        );
    }
}
