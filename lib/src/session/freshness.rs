//! Reset policy and freshness (`store.md` §6.1–6.2): which daily/idle rule governs a session, and
//! whether its current session id is still fresh at a given instant.
//!
//! Values read from the config and the entry follow the gateway's JavaScript semantics
//! (`??` skips only `null`/absent, truthiness, `Math.floor` coercion). The daily boundary is
//! computed in a caller-supplied time zone with JavaScript `Date` local-time rules: a
//! wall-clock hour skipped by a DST change resolves with the offset in force before it
//! (i.e. one hour later), a repeated hour resolves to its first occurrence.

use chrono::TimeZone;
use serde_json::{Map, Value};

use crate::js;
use crate::session::session_key::{field, lower_trim, opt_str, thread_id};

/// How a session expires.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResetMode {
    /// A new session id at the first message after the daily boundary (`atHour`).
    Daily,
    /// Only idle expiry (also what any mode other than `daily` behaves as).
    Idle,
}

impl ResetMode {
    /// The config spelling: `daily` or `idle`.
    pub fn as_str(self) -> &'static str {
        match self {
            ResetMode::Daily => "daily",
            ResetMode::Idle => "idle",
        }
    }
}

/// Which `session.resetByType` block applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResetType {
    /// Direct messages and everything else (falls back to the legacy `dm` block).
    Direct,
    /// Group and channel conversations.
    Group,
    /// Thread-scoped sessions.
    Thread,
}

impl ResetType {
    /// The config spelling: `direct`, `group` or `thread`.
    pub fn as_str(self) -> &'static str {
        match self {
            ResetType::Direct => "direct",
            ResetType::Group => "group",
            ResetType::Thread => "thread",
        }
    }
}

/// The resolved reset policy of one session (`resolveSessionResetPolicy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResetPolicy {
    /// Daily or idle.
    pub mode: ResetMode,
    /// The daily boundary's local hour, 0..=23 (default 4).
    pub at_hour: u32,
    /// Idle expiry in minutes; `None` or `Some(0)` never expires by idleness.
    pub idle_minutes: Option<u64>,
    /// Whether anything was configured (an implicit daily default is not).
    pub configured: bool,
}

/// The verdict on a session's freshness (`evaluateSessionFreshness`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Freshness {
    /// Whether the session id may be reused.
    pub fresh: bool,
    /// The most recent daily boundary (epoch ms), in daily mode.
    pub daily_reset_at: Option<i64>,
    /// When idleness expires the session (epoch ms, floored), when idle minutes > 0.
    pub idle_expires_at: Option<i64>,
    /// `daily` or `idle` when stale: the earlier boundary (a tie is `daily`).
    pub stale_reason: Option<&'static str>,
}

/// Built-in channel aliases (`normalizeMessageChannel`), as the bundled catalogs define them.
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
    ("qywx", "wecom"),
    ("wework", "wecom"),
    ("enterprise-wechat", "wecom"),
    ("weixin", "openclaw-weixin"),
    ("wechat", "openclaw-weixin"),
    ("微信", "openclaw-weixin"),
    ("zaloclawbot", "openclaw-zaloclawbot"),
    ("zalo-clawbot", "openclaw-zaloclawbot"),
    ("yb", "yuanbao"),
    ("tencent-yuanbao", "yuanbao"),
    ("元宝", "yuanbao"),
];

/// `normalizeMessageChannel`: trimmed, lower-cased, built-in aliases resolved; `None` if blank.
pub fn normalize_message_channel(raw: &str) -> Option<String> {
    let lowered = lower_trim(raw);
    if lowered.is_empty() {
        return None;
    }
    Some(
        CHANNEL_ALIASES
            .iter()
            .find(|(alias, _)| *alias == lowered)
            .map_or(lowered, |(_, id)| id.to_string()),
    )
}

/// JavaScript `ToNumber` for the JSON values a config can hold.
fn js_to_number(v: &Value) -> f64 {
    match v {
        Value::Null => 0.0,
        Value::Bool(b) => f64::from(u8::from(*b)),
        Value::Number(n) => n.as_f64().unwrap_or(f64::NAN),
        Value::String(s) => js_string_to_number(s),
        Value::Array(a) if a.is_empty() => 0.0,
        Value::Array(a) if a.len() == 1 => match &a[0] {
            Value::Null => 0.0,
            Value::Object(_) => f64::NAN,
            other => js_to_number(other),
        },
        _ => f64::NAN,
    }
}

/// JavaScript `StringToNumber` (decimal, `Infinity`, `0x`/`0o`/`0b` integers).
fn js_string_to_number(s: &str) -> f64 {
    let t = js::trim(s);
    if t.is_empty() {
        return 0.0;
    }
    for (prefix, radix) in [
        ("0x", 16),
        ("0X", 16),
        ("0o", 8),
        ("0O", 8),
        ("0b", 2),
        ("0B", 2),
    ] {
        if let Some(digits) = t.strip_prefix(prefix) {
            if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
                return f64::NAN;
            }
            return digits.chars().fold(0.0, |acc, c| {
                acc * f64::from(radix) + f64::from(c.to_digit(radix).unwrap())
            });
        }
    }
    let unsigned = t.strip_prefix(['+', '-']).unwrap_or(t);
    if unsigned == "Infinity" {
        return if t.starts_with('-') {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        };
    }
    let b = unsigned.as_bytes();
    let mut i = 0;
    let int_digits = b.iter().take_while(|c| c.is_ascii_digit()).count();
    i += int_digits;
    let mut frac_digits = 0;
    if b.get(i) == Some(&b'.') {
        i += 1;
        frac_digits = b[i..].iter().take_while(|c| c.is_ascii_digit()).count();
        i += frac_digits;
    }
    if int_digits + frac_digits == 0 {
        return f64::NAN;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        let exp_digits = b[i..].iter().take_while(|c| c.is_ascii_digit()).count();
        if exp_digits == 0 {
            return f64::NAN;
        }
        i += exp_digits;
    }
    if i != b.len() {
        return f64::NAN;
    }
    t.parse::<f64>().unwrap_or(f64::NAN)
}

/// `normalizeResetAtHour`: a finite number floored and clamped to 0..=23, else 4.
fn normalize_at_hour(v: Option<&Value>) -> u32 {
    match v.and_then(Value::as_f64) {
        Some(f) if f.is_finite() => f.floor().clamp(0.0, 23.0) as u32,
        _ => 4,
    }
}

/// `session.resetByChannel[<normalised channel>]`, when present.
fn channel_override<'a>(session_cfg: &'a Value, channel: Option<&str>) -> Option<&'a Value> {
    let by_channel = field(Some(session_cfg), "resetByChannel")?;
    if !js::truthy(by_channel) {
        return None;
    }
    let key = normalize_message_channel(channel?)?;
    js::non_nullish(by_channel.as_object()?.get(&key))
}

/// `resolveSessionResetPolicy` with the `resetByChannel` override for `channel` (§6.1).
///
/// `session_cfg` is the config's `session` object (or `Null`); `channel` is the raw channel
/// the runtime would use (see [`reset_channel_for_entry`]), normalised here.
pub fn resolve_reset_policy(
    session_cfg: &Value,
    reset_type: ResetType,
    channel: Option<&str>,
) -> ResetPolicy {
    let cfg = Some(session_cfg);
    let over = channel_override(session_cfg, channel);
    let over_set = over.is_some_and(js::truthy);
    let base = over.or_else(|| field(cfg, "reset"));
    let by_type = field(cfg, "resetByType");
    let typed = if over_set {
        None
    } else {
        field(by_type, reset_type.as_str()).or_else(|| {
            if reset_type == ResetType::Direct {
                field(by_type, "dm")
            } else {
                None
            }
        })
    };
    let has_explicit = base.is_some_and(js::truthy) || by_type.is_some_and(js::truthy);
    let legacy_idle = if over_set {
        None
    } else {
        field(cfg, "idleMinutes")
    };
    let configured =
        base.is_some_and(js::truthy) || typed.is_some_and(js::truthy) || legacy_idle.is_some();
    let mode_value = field(typed, "mode").or_else(|| field(base, "mode"));
    let mode = match mode_value {
        Some(v) => match v.as_str() {
            Some("daily") => ResetMode::Daily,
            _ => ResetMode::Idle,
        },
        None if !has_explicit && legacy_idle.is_some() => ResetMode::Idle,
        None => ResetMode::Daily,
    };
    let mode_is_idle_literal = match mode_value {
        Some(v) => v.as_str() == Some("idle"),
        None => mode == ResetMode::Idle,
    };
    let at_hour = normalize_at_hour(field(typed, "atHour").or_else(|| field(base, "atHour")));
    let idle_raw = field(typed, "idleMinutes")
        .or_else(|| field(base, "idleMinutes"))
        .or(legacy_idle);
    let idle_minutes = match idle_raw {
        Some(v) => {
            let n = js_to_number(v).floor();
            // `as` saturates: absurdly large values stay "never within reach".
            n.is_finite().then(|| n.max(0.0) as u64)
        }
        None if mode_is_idle_literal => Some(0),
        None => None,
    };
    ResetPolicy {
        mode,
        at_hour,
        idle_minutes,
        configured,
    }
}

/// `resolveSessionResetType` from the key alone: thread id → thread; `:group:`/`:channel:` → group.
pub fn reset_type_for_key(key: &str) -> ResetType {
    if thread_id(key).is_some() {
        return ResetType::Thread;
    }
    let lowered = lower_trim(key);
    if lowered.contains(":group:") || lowered.contains(":channel:") {
        ResetType::Group
    } else {
        ResetType::Direct
    }
}

/// The channel the offline agent path uses for `resetByChannel`: `lastChannel ?? channel ?? origin.provider`.
pub fn reset_channel_for_entry(entry: &Map<String, Value>) -> Option<&str> {
    js::non_nullish(entry.get("lastChannel"))
        .or_else(|| js::non_nullish(entry.get("channel")))
        .or_else(|| field(entry.get("origin"), "provider"))
        .and_then(Value::as_str)
}

/// `resolveDailyResetAtMs`: today's local `at_hour:00`, or yesterday's if `now_ms` is before it.
pub fn daily_reset_at_ms<Tz: TimeZone>(now_ms: i64, at_hour: u32, tz: &Tz) -> i64 {
    let Some(now_local) = js::local_from_utc(tz, now_ms) else {
        return now_ms;
    };
    let Some(reset) = now_local
        .date()
        .and_hms_opt(at_hour.min(23), 0, 0)
        .and_then(|today| js::utc_from_local(tz, today))
    else {
        return now_ms;
    };
    if now_ms >= reset {
        return reset;
    }
    // `setDate(getDate() - 1)` keeps the (possibly DST-shifted) wall time of `reset`.
    js::local_from_utc(tz, reset)
        .and_then(|w| js::utc_from_local(tz, w.date().pred_opt()?.and_time(w.time())))
        .unwrap_or(reset)
}

/// A lifecycle timestamp from the entry: a finite number in `0..=8.64e15`.
fn lifecycle_ts(v: Option<&Value>) -> Option<f64> {
    v.and_then(Value::as_f64)
        .filter(|f| f.is_finite() && (0.0..=8.64e15).contains(f))
}

/// `evaluateSessionFreshness` over an entry's lifecycle timestamps (§6.2).
///
/// `header_timestamp_ms` is the transcript header's start time (see
/// [`session_header_started_at_ms`]); it is used only when the entry has no valid
/// `sessionStartedAt`. The daily boundary is computed in `tz`.
pub fn evaluate_freshness<Tz: TimeZone>(
    entry: &Map<String, Value>,
    header_timestamp_ms: Option<i64>,
    policy: &ResetPolicy,
    now_ms: i64,
    tz: &Tz,
) -> Freshness {
    let now = now_ms as f64;
    let usable = |v: Option<f64>| v.filter(|f| f.is_finite() && *f >= 0.0 && *f <= now);
    let updated = usable(entry.get("updatedAt").and_then(Value::as_f64)).unwrap_or(0.0);
    let started_input = lifecycle_ts(entry.get("sessionStartedAt")).or_else(|| {
        header_timestamp_ms
            .map(|h| h as f64)
            .filter(|f| (0.0..=8.64e15).contains(f))
    });
    let started = usable(started_input).unwrap_or(updated);
    let last = usable(lifecycle_ts(entry.get("lastInteractionAt"))).unwrap_or(started);

    let daily =
        (policy.mode == ResetMode::Daily).then(|| daily_reset_at_ms(now_ms, policy.at_hour, tz));
    let idle = policy
        .idle_minutes
        .filter(|m| *m > 0)
        .map(|m| last + m as f64 * 60000.0);
    let stale_daily = daily.is_some_and(|d| started < d as f64);
    let stale_idle = idle.is_some_and(|e| now > e);
    let stale_reason = match (stale_daily, stale_idle) {
        (true, true) => Some(if daily.unwrap() as f64 <= idle.unwrap() {
            "daily"
        } else {
            "idle"
        }),
        (false, true) => Some("idle"),
        (true, false) => Some("daily"),
        (false, false) => None,
    };
    Freshness {
        fresh: !(stale_daily || stale_idle),
        daily_reset_at: daily,
        idle_expires_at: idle.map(|e| e.floor() as i64),
        stale_reason,
    }
}

/// `hasProviderOwnedSession`: the entry's provider has a CLI session binding with a session id.
///
/// Provider = `providerOverride ?? modelProvider` (trimmed); the binding is
/// `cliSessionBindings[p].sessionId`, else `cliSessionIds[p]`, else (for `claude-cli`)
/// `claudeCliSessionId`, with `p` the lower-cased provider.
pub fn has_provider_owned_session(entry: &Map<String, Value>) -> bool {
    let provider = js::non_nullish(entry.get("providerOverride"))
        .or_else(|| js::non_nullish(entry.get("modelProvider")));
    let Some(provider) = opt_str(provider) else {
        return false;
    };
    let p = provider.to_lowercase();
    opt_str(field(
        field(entry.get("cliSessionBindings"), &p),
        "sessionId",
    ))
    .is_some()
        || opt_str(field(entry.get("cliSessionIds"), &p)).is_some()
        || (p == "claude-cli" && opt_str(entry.get("claudeCliSessionId")).is_some())
}

/// The CLI-binding exemption: with no configured policy, a provider-owned session is always fresh.
pub fn cli_binding_exempt(entry: &Map<String, Value>, policy: &ResetPolicy) -> bool {
    !policy.configured && has_provider_owned_session(entry)
}

/// The start time a transcript header gives (`readSessionHeaderStartedAtMs` on the parsed first line).
///
/// The header must be `type: "session"` and its `id`, when a non-blank string, must equal
/// `session_id`; `timestamp` is a number or a string read by `Date.parse` ([`js::date_parse_in`]:
/// local-time forms resolve in `tz`; the legacy forms it does not read give `None`).
pub fn session_header_started_at_ms<Tz: TimeZone>(
    header: &Value,
    session_id: &str,
    tz: &Tz,
) -> Option<i64> {
    let session_id = js::trim(session_id);
    if session_id.is_empty() || header.get("type").and_then(Value::as_str) != Some("session") {
        return None;
    }
    if let Some(id) = header.get("id").and_then(Value::as_str) {
        if !js::trim(id).is_empty() && id != session_id {
            return None;
        }
    }
    let ms = match header.get("timestamp")? {
        Value::Number(n) => n.as_f64()?,
        Value::String(s) if !js::trim(s).is_empty() => js::date_parse_in(s, tz)? as f64,
        _ => return None,
    };
    (ms.is_finite() && (0.0..=8.64e15).contains(&ms)).then(|| ms.floor() as i64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::js::tests::NewYork;
    use chrono::{DateTime, FixedOffset, Utc};
    use serde_json::json;

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    fn ms(s: &str) -> i64 {
        DateTime::parse_from_rfc3339(s).unwrap().timestamp_millis()
    }

    #[test]
    fn e27_daily_boundary() {
        let now = ms("2026-03-10T10:00:00Z");
        assert_eq!(daily_reset_at_ms(now, 4, &Utc), ms("2026-03-10T04:00:00Z"));
        assert_eq!(
            daily_reset_at_ms(now, 4, &NewYork),
            ms("2026-03-10T08:00:00Z")
        );
        let early = ms("2026-03-10T02:00:00Z");
        assert_eq!(
            daily_reset_at_ms(early, 4, &Utc),
            ms("2026-03-09T04:00:00Z")
        );
        let plus2 = FixedOffset::east_opt(2 * 3600).unwrap();
        assert_eq!(
            daily_reset_at_ms(now, 4, &plus2),
            ms("2026-03-10T02:00:00Z")
        );
    }

    #[test]
    fn dst_gap_and_overlap() {
        // 2026-03-08 02:00 does not exist in New York: it resolves to 03:00 EDT (07:00Z).
        let now = ms("2026-03-08T12:00:00Z");
        assert_eq!(
            daily_reset_at_ms(now, 2, &NewYork),
            ms("2026-03-08T07:00:00Z")
        );
        // Before it: the previous day at the shifted wall time (03:00 EST = 08:00Z).
        let before = ms("2026-03-08T06:30:00Z");
        assert_eq!(
            daily_reset_at_ms(before, 2, &NewYork),
            ms("2026-03-07T08:00:00Z")
        );
        // 2026-11-01 01:00 happens twice: the first (EDT, 05:00Z) counts.
        let now = ms("2026-11-01T12:00:00Z");
        assert_eq!(
            daily_reset_at_ms(now, 1, &NewYork),
            ms("2026-11-01T05:00:00Z")
        );
        // Day after the change: 04:00 EST = 09:00Z.
        let now = ms("2026-11-02T12:00:00Z");
        assert_eq!(
            daily_reset_at_ms(now, 4, &NewYork),
            ms("2026-11-02T09:00:00Z")
        );
    }

    fn policy(cfg: Value, t: ResetType) -> ResetPolicy {
        resolve_reset_policy(&cfg, t, None)
    }

    #[test]
    fn e27_policy_table() {
        let cfg = json!({"idleMinutes": 30, "resetByType": {"group": {"mode": "idle", "idleMinutes": 5}}});
        assert_eq!(
            policy(cfg.clone(), ResetType::Direct),
            ResetPolicy {
                mode: ResetMode::Daily,
                at_hour: 4,
                idle_minutes: Some(30),
                configured: true
            }
        );
        assert_eq!(
            policy(cfg, ResetType::Group),
            ResetPolicy {
                mode: ResetMode::Idle,
                at_hour: 4,
                idle_minutes: Some(5),
                configured: true
            }
        );
        assert_eq!(
            policy(Value::Null, ResetType::Direct),
            ResetPolicy {
                mode: ResetMode::Daily,
                at_hour: 4,
                idle_minutes: None,
                configured: false
            }
        );
        let legacy = policy(json!({"idleMinutes": 45}), ResetType::Thread);
        assert_eq!(
            (legacy.mode, legacy.idle_minutes),
            (ResetMode::Idle, Some(45))
        );
        assert_eq!(
            policy(json!({"reset": {"atHour": 25.7}}), ResetType::Direct).at_hour,
            23
        );
        assert_eq!(
            policy(json!({"reset": {"atHour": -3}}), ResetType::Direct).at_hour,
            0
        );
        assert_eq!(
            policy(json!({"reset": {"atHour": "7"}}), ResetType::Direct).at_hour,
            4
        );
        let idle0 = policy(json!({"reset": {"mode": "idle"}}), ResetType::Direct);
        assert_eq!(idle0.idle_minutes, Some(0));
        let dm = policy(
            json!({"resetByType": {"dm": {"atHour": 9}}}),
            ResetType::Direct,
        );
        assert_eq!((dm.at_hour, dm.configured), (9, true));
        let frac = policy(json!({"reset": {"idleMinutes": 2.9}}), ResetType::Direct);
        assert_eq!(frac.idle_minutes, Some(2));
    }

    #[test]
    fn channel_override_replaces_reset_and_type() {
        let cfg = json!({
            "idleMinutes": 30,
            "reset": {"atHour": 6},
            "resetByType": {"direct": {"atHour": 7}},
            "resetByChannel": {"feishu": {"mode": "idle", "idleMinutes": 10}}
        });
        let p = resolve_reset_policy(&cfg, ResetType::Direct, Some(" Lark "));
        assert_eq!(
            (p.mode, p.idle_minutes, p.at_hour),
            (ResetMode::Idle, Some(10), 4)
        );
        let p = resolve_reset_policy(&cfg, ResetType::Direct, Some("slack"));
        assert_eq!(
            (p.mode, p.idle_minutes, p.at_hour),
            (ResetMode::Daily, Some(30), 7)
        );
        assert_eq!(
            normalize_message_channel("ZLU").as_deref(),
            Some("zalouser")
        );
        assert_eq!(normalize_message_channel("  ").as_deref(), None);
        let e = obj(json!({"lastChannel": null, "channel": "telegram"}));
        assert_eq!(reset_channel_for_entry(&e), Some("telegram"));
        let e = obj(json!({"origin": {"provider": "slack"}}));
        assert_eq!(reset_channel_for_entry(&e), Some("slack"));
    }

    #[test]
    fn reset_types() {
        assert_eq!(
            reset_type_for_key("agent:main:slack:channel:c:thread:1"),
            ResetType::Thread
        );
        assert_eq!(
            reset_type_for_key("agent:main:Telegram:GROUP:1"),
            ResetType::Group
        );
        assert_eq!(reset_type_for_key("agent:main:main"), ResetType::Direct);
    }

    #[test]
    fn e27_freshness() {
        let now = ms("2026-03-10T10:00:00Z");
        let daily = policy(Value::Null, ResetType::Direct);
        let e =
            obj(json!({"updatedAt": now - 1000, "sessionStartedAt": ms("2026-03-10T03:59:00Z")}));
        let f = evaluate_freshness(&e, None, &daily, now, &Utc);
        assert_eq!((f.fresh, f.stale_reason), (false, Some("daily")));
        assert_eq!(f.daily_reset_at, Some(ms("2026-03-10T04:00:00Z")));
        assert_eq!(f.idle_expires_at, None);

        let both = policy(json!({"reset": {"idleMinutes": 60}}), ResetType::Direct);
        let e = obj(json!({
            "updatedAt": now,
            "sessionStartedAt": ms("2026-03-10T04:00:00Z"),
            "lastInteractionAt": now - 61 * 60000
        }));
        let f = evaluate_freshness(&e, None, &both, now, &Utc);
        assert_eq!((f.fresh, f.stale_reason), (false, Some("idle")));
        assert_eq!(f.idle_expires_at, Some(now - 60000));

        // Future sessionStartedAt is ignored (falls back to updatedAt) — and blocks the header.
        let e = obj(json!({"updatedAt": now - 1000, "sessionStartedAt": now + 1000}));
        let f = evaluate_freshness(&e, Some(0), &daily, now, &Utc);
        assert!(f.fresh);
        // Without an entry start time the header's timestamp counts.
        let e = obj(json!({"updatedAt": now - 1000}));
        assert!(!evaluate_freshness(&e, Some(0), &daily, now, &Utc).fresh);
        assert!(evaluate_freshness(&e, None, &daily, now, &Utc).fresh);

        // Both stale: the earlier boundary wins; a tie is daily.
        let e = obj(json!({"updatedAt": ms("2026-03-10T03:00:00Z")}));
        let p = policy(json!({"reset": {"idleMinutes": 30}}), ResetType::Direct);
        let f = evaluate_freshness(&e, None, &p, now, &Utc);
        assert_eq!(f.stale_reason, Some("idle"));
        let p = policy(json!({"reset": {"idleMinutes": 90}}), ResetType::Direct);
        let f = evaluate_freshness(&e, None, &p, now, &Utc);
        assert_eq!(
            (f.idle_expires_at, f.stale_reason),
            (Some(ms("2026-03-10T04:30:00Z")), Some("daily"))
        );
        let p = policy(json!({"reset": {"idleMinutes": 60}}), ResetType::Direct);
        assert_eq!(
            evaluate_freshness(&e, None, &p, now, &Utc).stale_reason,
            Some("daily")
        );

        // Idle mode without minutes never expires.
        let idle = policy(json!({"reset": {"mode": "idle"}}), ResetType::Direct);
        let f = evaluate_freshness(&obj(json!({"updatedAt": 0})), None, &idle, now, &Utc);
        assert_eq!(
            f,
            Freshness {
                fresh: true,
                daily_reset_at: None,
                idle_expires_at: None,
                stale_reason: None
            }
        );
        // No updatedAt at all: everything falls back to 0.
        assert!(!evaluate_freshness(&Map::new(), None, &daily, now, &Utc).fresh);
    }

    #[test]
    fn cli_binding() {
        let e = obj(
            json!({"modelProvider": "Claude-CLI", "cliSessionBindings": {"claude-cli": {"sessionId": "s"}}}),
        );
        assert!(has_provider_owned_session(&e));
        let daily = policy(Value::Null, ResetType::Direct);
        assert!(cli_binding_exempt(&e, &daily));
        let configured = policy(json!({"reset": {"atHour": 4}}), ResetType::Direct);
        assert!(!cli_binding_exempt(&e, &configured));
        assert!(has_provider_owned_session(&obj(
            json!({"providerOverride": "x", "cliSessionIds": {"x": " id "}})
        )));
        assert!(has_provider_owned_session(&obj(
            json!({"modelProvider": "claude-cli", "claudeCliSessionId": "a"})
        )));
        assert!(!has_provider_owned_session(&obj(
            json!({"providerOverride": 5, "modelProvider": "x", "cliSessionIds": {"x": "a"}})
        )));
        assert!(!has_provider_owned_session(&obj(
            json!({"modelProvider": "x", "cliSessionBindings": {"x": {"sessionId": " "}}})
        )));
    }

    #[test]
    fn header_timestamps() {
        let h = json!({"type": "session", "id": "abc", "timestamp": "2026-03-10T10:00:00.000Z"});
        assert_eq!(
            session_header_started_at_ms(&h, "abc", &Utc),
            Some(ms("2026-03-10T10:00:00Z"))
        );
        assert_eq!(session_header_started_at_ms(&h, "other", &Utc), None);
        let h = json!({"type": "session", "timestamp": 1234});
        assert_eq!(session_header_started_at_ms(&h, "abc", &Utc), Some(1234));
        let h = json!({"type": "message", "timestamp": 1234});
        assert_eq!(session_header_started_at_ms(&h, "abc", &Utc), None);
        let h = json!({"type": "session", "timestamp": -5});
        assert_eq!(session_header_started_at_ms(&h, "abc", &Utc), None);
        // A date-time without offset is local time in the given zone.
        let h = json!({"type": "session", "timestamp": "2026-03-10T10:00"});
        let plus2 = FixedOffset::east_opt(7200).unwrap();
        assert_eq!(
            session_header_started_at_ms(&h, "abc", &plus2),
            Some(ms("2026-03-10T08:00:00Z"))
        );
    }

    #[test]
    fn string_numbers() {
        assert_eq!(js_string_to_number(" 30 "), 30.0);
        assert_eq!(js_string_to_number("0x10"), 16.0);
        assert_eq!(js_string_to_number(""), 0.0);
        assert!(js_string_to_number("3x").is_nan());
        assert!(js_string_to_number("inf").is_nan());
        assert_eq!(js_string_to_number("-Infinity"), f64::NEG_INFINITY);
        assert_eq!(js_string_to_number(".5e1"), 5.0);
    }
}
