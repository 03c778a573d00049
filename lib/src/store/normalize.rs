//! Per-entry load normalisation of a `sessions.json` entry (`store.md` §2.3 steps 4–6).
//!
//! This mirrors, step for step, what openclaw@2026.7.1 does to every entry it loads
//! (`applySessionStoreMigrations`, `normalizePersistedSessionEntryShape` and the chain in
//! `normalizeSessionStore`): legacy field migrations, the `sessionId`/`sessionFile`/`updatedAt`
//! shape rules, `model`/`modelProvider` trimming, the delivery-route recomputation,
//! `pendingFinalDelivery*` coercion, plugin extension cleanup and the `resolvedSkills` strip.
//!
//! Key positions matter because the store is re-serialised and compared byte for byte with
//! the peer's output. The peer builds new objects with `{...entry, key: value}`: a key that
//! already exists keeps its position, a new key goes to the end, a deleted key disappears.
//! Here the same effect is had by mutating the map in place ([`js_set`] and
//! `Map::shift_remove`, never the order-destroying `Map::remove`).
//!
//! A value the peer sets to `undefined` is simply removed here: `JSON.stringify` omits it and
//! no later step of one normalisation pass assigns that key again, so the bytes agree.

use std::collections::HashSet;

use foldhash::fast::FixedState;
use serde_json::{Map, Number, Value};

use crate::session::entry_fields::EntryFields;

use crate::js;

/// What the load normalisation decided about one entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryVerdict {
    /// The entry stays; `changed` is true when any step rewrote it (the peer then treats the
    /// store as modified, so a later save is not skipped).
    Keep {
        /// Whether any step rewrote the entry.
        changed: bool,
    },
    /// The entry is removed from the store (for example an unsafe `sessionId`).
    Drop,
}

/// Keys the peer keeps in an entry with the value `undefined` after a normalisation pass.
///
/// The delivery step rebuilds an entry as `{...entry, route, deliveryContext, lastChannel,
/// lastTo, lastAccountId, lastThreadId}`; the ones that come out `undefined` vanish from the
/// JSON but stay in the JavaScript object, holding their position. The gateway's writer
/// loads a store without cloning it and re-normalises it before saving, so when that second
/// pass assigns such a key (normalisation is not always idempotent: a junk `lastThreadId`
/// hides `origin.threadId` on the first pass only) the key lands at the hole, not at the end.
///
/// A store that mirrors the writer keeps one `Holes` per entry from the load pass and hands
/// it to the save pass ([`normalize_entry_fields_with_holes`]); replace it with
/// `Holes::default()` when the entry itself is replaced.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Holes {
    /// The entry's whole JavaScript key order, `true` marking an `undefined` key; empty when
    /// there is no hole.
    order: Vec<(String, bool)>,
}

impl Holes {
    /// Whether the entry has no `undefined` key.
    pub fn is_empty(&self) -> bool {
        !self.order.iter().any(|(_, hole)| *hole)
    }

    /// The `undefined` keys, in key order.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.order
            .iter()
            .filter(|(_, h)| *h)
            .map(|(k, _)| k.as_str())
    }
}

/// Runs the whole per-entry load normalisation of §2.3 steps 4–6: legacy field migrations,
/// then [`normalize_entry_fields`].
pub fn normalize_entry<M: EntryFields>(entry: &mut M) -> EntryVerdict {
    normalize_entry_with_holes(entry, &mut Holes::default())
}

/// [`normalize_entry`], recording the keys left `undefined` (see [`Holes`]).
pub fn normalize_entry_with_holes<M: EntryFields>(
    entry: &mut M,
    holes: &mut Holes,
) -> EntryVerdict {
    let migrated = migrate_legacy_fields(entry);
    with_migrated(normalize_fields(entry, holes, None), migrated)
}

/// §2.3 step 4, the legacy field migrations (`applySessionStoreMigrations`):
/// `provider` → `channel`, `lastProvider` → `lastChannel`, `room` → `groupChannel`.
/// Returns whether the entry changed.
pub fn migrate_legacy_fields<M: EntryFields>(entry: &mut M) -> bool {
    let mut changed = false;
    for (old, new) in [("provider", "channel"), ("lastProvider", "lastChannel")] {
        if !is_string(entry.get(new)) && is_string(entry.get(old)) {
            let value = entry.get(old).cloned().unwrap_or(Value::Null);
            js_set(entry, new, value);
            entry.shift_remove(old);
            changed = true;
        }
    }
    if !is_string(entry.get("groupChannel")) && is_string(entry.get("room")) {
        let value = entry.get("room").cloned().unwrap_or(Value::Null);
        js_set(entry, "groupChannel", value);
        entry.shift_remove("room");
        changed = true;
    } else if entry.contains_key("room") {
        entry.shift_remove("room");
        changed = true;
    }
    changed
}

/// §2.3 steps 5–6 without the legacy migrations: the shape rules, then model trimming,
/// delivery recomputation, `pendingFinalDelivery*` coercion, plugin extension cleanup and the
/// `skillsSnapshot.resolvedSkills` strip. This is also what the peer re-runs before a save.
pub fn normalize_entry_fields<M: EntryFields>(entry: &mut M) -> EntryVerdict {
    normalize_entry_fields_with_holes(entry, &mut Holes::default())
}

/// [`normalize_entry_fields`] with the entry's holes from an earlier pass; updates them.
pub fn normalize_entry_fields_with_holes<M: EntryFields>(
    entry: &mut M,
    holes: &mut Holes,
) -> EntryVerdict {
    normalize_fields(entry, holes, None)
}

/// Delivery fields the delivery step left unchanged, remembered by their shape, so that a
/// store's many entries of one shape run the step once (a reader of a whole store keeps
/// one per thread).
///
/// A shape is the delivery step's whole input ([`delivery_shape`]) with each target
/// (`to`, `rawTo`, `lastTo`) that is a trimmed, non-empty string replaced by a placeholder
/// numbering the distinct targets. The step only trims targets, tests them for emptiness,
/// compares them with each other and copies them, so its verdict is the same for every
/// entry of one shape. Only "unchanged" is remembered: a change is computed every time.
#[derive(Debug, Default)]
pub struct DeliveryMemo {
    unchanged: HashSet<String, FixedState>,
}

/// The delivery step's input with its targets abstracted (see [`DeliveryMemo`]); `None`
/// when a target is not a trimmed non-empty string (no memo then).
fn delivery_shape<M: EntryFields>(entry: &M) -> Option<String> {
    let mut w = ShapeWriter::default();
    w.object(entry.get("route"), &[], true)?;
    w.object(entry.get("deliveryContext"), &["to"], false)?;
    for key in ["lastChannel", "channel", "lastAccountId", "lastThreadId"] {
        w.value(entry.get(key));
    }
    w.value(field(entry.get("origin"), "threadId"));
    w.target(entry.get("lastTo"))?;
    (w.targets.len() <= 9).then_some(w.out)
}

/// Writes a delivery shape (see [`delivery_shape`]).
#[derive(Default)]
struct ShapeWriter<'a> {
    out: String,
    /// The distinct targets seen, numbered by position.
    targets: Vec<&'a str>,
}

impl<'a> ShapeWriter<'a> {
    /// Any value, compactly (`-` when absent), then `;`.
    fn value(&mut self, v: Option<&Value>) {
        match v {
            Some(v) => crate::js::jsjson::write_compact(&mut self.out, v),
            None => self.out.push('-'),
        }
        self.out.push(';');
    }

    /// A target: NUL (never raw in JSON text) and its number; other values as they are.
    fn target(&mut self, v: Option<&'a Value>) -> Option<()> {
        let Some(Value::String(t)) = v else {
            self.value(v);
            return Some(());
        };
        if t.is_empty() || js::trim(t).len() != t.len() {
            return None;
        }
        let n = match self.targets.iter().position(|x| *x == t.as_str()) {
            Some(n) => n,
            None => {
                self.targets.push(t);
                self.targets.len() - 1
            }
        };
        self.out.push('\0');
        self.out.push(char::from(b'0' + (n % 10) as u8));
        self.out.push(';');
        Some(())
    }

    /// An object whose members named in `targets_at` are targets; with `route`, its
    /// `target` object's `to` and `rawTo` are.
    fn object(&mut self, v: Option<&'a Value>, targets_at: &[&str], route: bool) -> Option<()> {
        let Some(Value::Object(m)) = v else {
            self.value(v);
            return Some(());
        };
        self.out.push('{');
        for (k, v) in m {
            crate::js::jsjson::write_string(&mut self.out, k);
            self.out.push(':');
            if targets_at.contains(&k.as_str()) {
                self.target(Some(v))?;
            } else if route && k == "target" {
                self.object(Some(v), &["to", "rawTo"], false)?;
            } else {
                self.value(Some(v));
            }
        }
        self.out.push_str("};");
        Some(())
    }
}

/// [`normalize_entry_with_holes`], running the delivery step only for shapes `memo` has
/// not seen unchanged.
pub fn normalize_entry_with_holes_memo<M: EntryFields>(
    entry: &mut M,
    holes: &mut Holes,
    memo: &mut DeliveryMemo,
) -> EntryVerdict {
    let migrated = migrate_legacy_fields(entry);
    with_migrated(normalize_fields(entry, holes, Some(memo)), migrated)
}

/// Folds the legacy migrations' change into the fields' verdict.
fn with_migrated(verdict: EntryVerdict, migrated: bool) -> EntryVerdict {
    match verdict {
        EntryVerdict::Keep { changed } => EntryVerdict::Keep {
            changed: changed || migrated,
        },
        EntryVerdict::Drop => EntryVerdict::Drop,
    }
}

/// The steps of [`normalize_entry_fields_with_holes`]; with a memo, the delivery step runs
/// only for shapes not seen unchanged.
fn normalize_fields<M: EntryFields>(
    entry: &mut M,
    holes: &mut Holes,
    memo: Option<&mut DeliveryMemo>,
) -> EntryVerdict {
    let Some(mut changed) = normalize_shape(entry) else {
        return EntryVerdict::Drop;
    };
    changed |= normalize_model_fields(entry);
    changed |= match memo {
        None => normalize_delivery(entry, holes),
        Some(memo) => {
            let shape = delivery_shape(entry);
            if shape.as_ref().is_some_and(|s| memo.unchanged.contains(s)) {
                false
            } else {
                let c = normalize_delivery(entry, holes);
                if let (false, Some(shape)) = (c, shape) {
                    memo.unchanged.insert(shape);
                }
                c
            }
        }
    };
    changed |= normalize_pending_final_delivery(entry);
    changed |= normalize_plugin_extensions(entry);
    changed |= normalize_plugin_extension_slot_keys(entry);
    changed |= strip_resolved_skills(entry);
    EntryVerdict::Keep { changed }
}

/// Whether `id` can name a transcript file `<id>.jsonl`: it matches
/// `^[a-z0-9][a-z0-9._-]{0,127}$` (ASCII, case-insensitive) and does not look like a
/// compaction checkpoint (`<x>.checkpoint.<uuid v1-5>`). The string is tested as given; the
/// peer trims first, and normalised entries already hold trimmed ids.
pub fn is_valid_transcript_session_id(id: &str) -> bool {
    let bytes = id.as_bytes();
    if bytes.is_empty() || bytes.len() > 128 || !bytes[0].is_ascii_alphanumeric() {
        return false;
    }
    if !bytes[1..]
        .iter()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
    {
        return false;
    }
    !is_checkpoint_shaped(id)
}

/// Whether `id` passes the peer's `isSafeSessionId`: a string that, trimmed, is 1–255
/// UTF-16 units, has no `/` or `\`, is not `.`/`..` and matches
/// `^[A-Za-z0-9][A-Za-z0-9._:@-]*$`.
pub fn is_safe_session_id(id: &str) -> bool {
    // The pattern admits ASCII alone, so the UTF-16 length is the byte length; it leaves
    // out `/` and `\\`, and its alphanumeric first byte rules out `.` and `..`.
    let bytes = js::trim(id).as_bytes();
    bytes.len() <= 255
        && bytes.first().is_some_and(u8::is_ascii_alphanumeric)
        && bytes[1..]
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b':' | b'@' | b'-'))
}

/// `<id>.jsonl` matches `^(.+)\.checkpoint\.<uuid v1-5>\.jsonl$` (case-insensitive).
fn is_checkpoint_shaped(id: &str) -> bool {
    const MARK: &[u8] = b".checkpoint.";
    let b = id.as_bytes();
    if b.len() < 1 + MARK.len() + 36 {
        return false;
    }
    let uuid = &b[b.len() - 36..];
    let mark = &b[b.len() - 36 - MARK.len()..b.len() - 36];
    mark.eq_ignore_ascii_case(MARK) && is_uuid_v1_5(uuid)
}

fn is_uuid_v1_5(u: &[u8]) -> bool {
    if u.len() != 36 {
        return false;
    }
    for (i, &c) in u.iter().enumerate() {
        let ok = match i {
            8 | 13 | 18 | 23 => c == b'-',
            14 => (b'1'..=b'5').contains(&c),
            19 => matches!(c.to_ascii_lowercase(), b'8' | b'9' | b'a' | b'b'),
            _ => c.is_ascii_hexdigit(),
        };
        if !ok {
            return false;
        }
    }
    true
}

// ---------------------------------------------------------------------------------------
// Step 5: normalizePersistedSessionEntryShape
// ---------------------------------------------------------------------------------------

/// Returns `None` when the entry must be dropped, else whether it changed.
fn normalize_shape<M: EntryFields>(entry: &mut M) -> Option<bool> {
    let mut changed = false;
    let has_session_file =
        matches!(entry.get("sessionFile"), Some(Value::String(s)) if !js::trim(s).is_empty());
    if let Some(raw) = entry.get("sessionId") {
        let Value::String(raw) = raw else {
            return None;
        };
        if !is_safe_session_id(raw) {
            return None;
        }
        let trimmed = js::trim(raw);
        if !is_valid_transcript_session_id(trimmed) && !has_session_file {
            entry.shift_remove("sessionId");
            changed = true;
        } else if trimmed.len() != raw.len() {
            let trimmed = trimmed.to_string();
            js_set(entry, "sessionId", Value::String(trimmed));
            changed = true;
        }
    }
    if matches!(entry.get("sessionFile"), Some(v) if !v.is_string()) {
        entry.shift_remove("sessionFile");
        changed = true;
    }
    if let Some(updated) = entry.get("updatedAt") {
        let ok = matches!(updated.as_f64(), Some(n) if n.is_finite() && n >= 0.0);
        if !ok {
            js_set(entry, "updatedAt", Value::from(0));
            changed = true;
        }
    }
    Some(changed)
}

// ---------------------------------------------------------------------------------------
// Step 6a: normalizeSessionRuntimeModelFields
// ---------------------------------------------------------------------------------------

fn normalize_model_fields<M: EntryFields>(entry: &mut M) -> bool {
    let model = opt_string(entry.get("model"));
    let provider = opt_string(entry.get("modelProvider"));
    let Some(model) = model else {
        if entry.contains_key("model") || entry.contains_key("modelProvider") {
            entry.shift_remove("model");
            entry.shift_remove("modelProvider");
            return true;
        }
        return false;
    };
    let mut changed = false;
    if entry.get("model").and_then(Value::as_str) != Some(model.as_str()) {
        js_set(entry, "model", Value::String(model));
        changed = true;
    }
    match provider {
        None => {
            if entry.contains_key("modelProvider") {
                entry.shift_remove("modelProvider");
                changed = true;
            }
        }
        Some(p) => {
            if entry.get("modelProvider").and_then(Value::as_str) != Some(p.as_str()) {
                js_set(entry, "modelProvider", Value::String(p));
                changed = true;
            }
        }
    }
    changed
}

// ---------------------------------------------------------------------------------------
// Step 6b: normalizeSessionEntryDelivery (src/utils/delivery-context.shared.ts,
// src/plugin-sdk/channel-route.ts)
// ---------------------------------------------------------------------------------------

/// A normalised delivery context: `{channel, to, accountId, threadId}` (any may be absent).
#[derive(Debug, Clone, Default, PartialEq)]
struct Dc {
    channel: Option<String>,
    to: Option<String>,
    account_id: Option<String>,
    thread_id: Option<Value>,
}

/// Raw input of `normalizeDeliveryContext`: JS values, type-checked inside.
#[derive(Debug, Clone, Default)]
struct DcIn {
    channel: Option<Value>,
    to: Option<Value>,
    account_id: Option<Value>,
    thread_id: Option<Value>,
}

/// A normalised channel route reference.
#[derive(Debug, Clone, Default, PartialEq)]
struct Route {
    channel: Option<String>,
    account_id: Option<String>,
    target: Option<Target>,
    thread: Option<Thread>,
}

#[derive(Debug, Clone, PartialEq)]
struct Target {
    to: String,
    raw_to: Option<String>,
    chat_type: Option<Value>,
}

#[derive(Debug, Clone, PartialEq)]
struct Thread {
    id: Value,
    kind: Option<Value>,
    source: Option<Value>,
}

/// Raw input of `normalizeChannelRouteRef`.
#[derive(Debug, Clone, Default)]
struct RouteIn {
    channel: Option<Value>,
    to: Option<Value>,
    raw_to: Option<Value>,
    chat_type: Option<Value>,
    account_id: Option<Value>,
    thread_id: Option<Value>,
    thread_kind: Option<Value>,
    thread_source: Option<Value>,
}

fn s(v: &Option<String>) -> Option<Value> {
    v.clone().map(Value::String)
}

/// `normalizeChannelRouteRef`.
fn normalize_route_ref(i: &RouteIn) -> Option<Route> {
    let channel = lower_or_empty(i.channel.as_ref());
    let account_id = match &i.account_id {
        Some(Value::String(a)) => normalize_optional_account_id(a),
        _ => None,
    };
    let to = opt_string(i.to.as_ref());
    let raw_to = opt_string(i.raw_to.as_ref());
    let thread_id = opt_thread_value(i.thread_id.as_ref());
    if channel.is_empty() && to.is_none() && account_id.is_none() && thread_id.is_none() {
        return None;
    }
    let keep_truthy = |v: &Option<Value>| v.clone().filter(|v| truthy(Some(v)));
    Some(Route {
        channel: (!channel.is_empty()).then_some(channel),
        account_id,
        target: to.map(|to| Target {
            raw_to: raw_to.filter(|r| *r != to),
            chat_type: keep_truthy(&i.chat_type),
            to,
        }),
        thread: thread_id.map(|id| Thread {
            id,
            kind: keep_truthy(&i.thread_kind),
            source: keep_truthy(&i.thread_source),
        }),
    })
}

/// `normalizeDeliveryChannelRoute` on a raw (persisted) value.
fn normalize_route_raw(v: Option<&Value>) -> Option<Route> {
    let v @ Some(Value::Object(_)) = v else {
        return None;
    };
    let target = field(v, "target");
    let thread = field(v, "thread");
    normalize_route_ref(&RouteIn {
        channel: field(v, "channel").cloned(),
        to: field(target, "to").cloned(),
        raw_to: field(target, "rawTo").cloned(),
        chat_type: field(target, "chatType").cloned(),
        account_id: field(v, "accountId").cloned(),
        thread_id: field(thread, "id").cloned(),
        thread_kind: field(thread, "kind").cloned(),
        thread_source: field(thread, "source").cloned(),
    })
}

/// `normalizeDeliveryChannelRoute` on an already normalised route (the peer re-normalises).
fn normalize_route(r: Option<&Route>) -> Option<Route> {
    let r = r?;
    normalize_route_ref(&RouteIn {
        channel: s(&r.channel),
        to: r.target.as_ref().map(|t| Value::String(t.to.clone())),
        raw_to: r.target.as_ref().and_then(|t| s(&t.raw_to)),
        chat_type: r.target.as_ref().and_then(|t| t.chat_type.clone()),
        account_id: s(&r.account_id),
        thread_id: r.thread.as_ref().map(|t| t.id.clone()),
        thread_kind: r.thread.as_ref().and_then(|t| t.kind.clone()),
        thread_source: r.thread.as_ref().and_then(|t| t.source.clone()),
    })
}

/// `normalizeDeliveryContext` on a structured input.
fn normalize_dc(i: &DcIn) -> Option<Dc> {
    let channel = match &i.channel {
        Some(Value::String(c)) => Some(Value::String(
            normalize_message_channel(c).unwrap_or_else(|| js::trim(c).to_string()),
        )),
        _ => None,
    };
    let route = normalize_route_ref(&RouteIn {
        channel,
        to: i.to.clone(),
        account_id: i.account_id.clone(),
        thread_id: i.thread_id.clone(),
        ..RouteIn::default()
    })?;
    Some(Dc {
        account_id: route
            .account_id
            .as_deref()
            .and_then(normalize_optional_account_id),
        to: route.target.map(|t| t.to),
        thread_id: route.thread.map(|t| t.id),
        channel: route.channel,
    })
}

/// `normalizeDeliveryContext` on a raw (persisted) value.
fn normalize_dc_raw(v: Option<&Value>) -> Option<Dc> {
    if !truthy(v) {
        return None;
    }
    normalize_dc(&DcIn {
        channel: field(v, "channel").cloned(),
        to: field(v, "to").cloned(),
        account_id: field(v, "accountId").cloned(),
        thread_id: field(v, "threadId").cloned(),
    })
}

fn dc_in(d: &Dc) -> DcIn {
    DcIn {
        channel: s(&d.channel),
        to: s(&d.to),
        account_id: s(&d.account_id),
        thread_id: d.thread_id.clone(),
    }
}

/// `deliveryContextFromChannelRoute`.
fn dc_from_route(route: Option<&Route>) -> Option<Dc> {
    let n = normalize_route(route);
    let n = n.as_ref();
    normalize_dc(&DcIn {
        channel: n.and_then(|r| s(&r.channel)),
        to: n.and_then(|r| r.target.as_ref().map(|t| Value::String(t.to.clone()))),
        account_id: n.and_then(|r| s(&r.account_id)),
        thread_id: n.and_then(|r| r.thread.as_ref().map(|t| t.id.clone())),
    })
}

/// `mergeDeliveryContext(primary, fallback)`.
fn merge_dc(primary: Option<&Dc>, fallback: Option<&Dc>) -> Option<Dc> {
    let p = primary.and_then(|d| normalize_dc(&dc_in(d)));
    let f = fallback.and_then(|d| normalize_dc(&dc_in(d)));
    if p.is_none() && f.is_none() {
        return None;
    }
    let p = p.unwrap_or_default();
    let f = f.unwrap_or_default();
    let conflict = |a: &Option<String>, b: &Option<String>| matches!((a, b), (Some(a), Some(b)) if !a.is_empty() && !b.is_empty() && a != b);
    let accounts_conflict = conflict(&p.account_id, &f.account_id);
    let routes_conflict = conflict(&p.channel, &f.channel) || accounts_conflict;
    let pick = |conflict: bool, a: &Option<String>, b: &Option<String>| {
        if conflict {
            s(a)
        } else {
            s(a).or_else(|| s(b))
        }
    };
    normalize_dc(&DcIn {
        channel: pick(accounts_conflict, &p.channel, &f.channel),
        to: pick(routes_conflict, &p.to, &f.to),
        account_id: pick(routes_conflict, &p.account_id, &f.account_id),
        thread_id: if routes_conflict {
            p.thread_id.clone()
        } else {
            p.thread_id.clone().or_else(|| f.thread_id.clone())
        },
    })
}

const INTERNAL_NON_DELIVERY_CHANNELS: &[&str] =
    &["heartbeat", "cron", "webhook", "voice", "sessions_send"];

fn is_internal_route_context(ctx: Option<&Dc>) -> bool {
    match ctx.and_then(|c| c.channel.as_deref()) {
        Some(c) if !c.is_empty() => c == "webchat" || INTERNAL_NON_DELIVERY_CHANNELS.contains(&c),
        _ => false,
    }
}

fn has_external_delivery_target(ctx: Option<&Dc>) -> bool {
    let Some(ctx) = ctx else {
        return false;
    };
    let Some(channel) = ctx.channel.as_deref().and_then(normalize_message_channel) else {
        return false;
    };
    let deliverable =
        normalize_message_channel(&channel).is_some_and(|n| n != "webchat" && n == channel);
    !INTERNAL_NON_DELIVERY_CHANNELS.contains(&channel.as_str())
        && deliverable
        && ctx.to.as_deref().is_some_and(|t| !t.is_empty())
}

/// `mergeExternalDeliveryContextOverInternalRoute`.
fn merge_external_over_internal(dc: Option<&Dc>, internal: Option<&Dc>) -> Option<Dc> {
    let d = dc.cloned().unwrap_or_default();
    let i = internal.cloned().unwrap_or_default();
    normalize_dc(&DcIn {
        channel: s(&d.channel),
        to: s(&d.to),
        account_id: s(&d.account_id).or_else(|| s(&i.account_id)),
        thread_id: d.thread_id.clone().or(i.thread_id),
    })
}

/// `mergeRouteMetadataWithDeliveryContext`.
fn merge_route_metadata(route: Option<&Route>, ctx: &Dc) -> Option<Route> {
    match route {
        None => {
            let n = normalize_dc(&dc_in(ctx))?;
            normalize_route_ref(&RouteIn {
                channel: s(&n.channel),
                to: s(&n.to),
                account_id: s(&n.account_id),
                thread_id: n.thread_id,
                ..RouteIn::default()
            })
        }
        Some(r) => {
            let t = r.target.as_ref();
            let th = r.thread.as_ref();
            normalize_route_ref(&RouteIn {
                channel: s(&r.channel).or_else(|| s(&ctx.channel)),
                to: t
                    .map(|t| Value::String(t.to.clone()))
                    .or_else(|| s(&ctx.to)),
                raw_to: t.and_then(|t| s(&t.raw_to)),
                chat_type: t.and_then(|t| t.chat_type.clone()),
                account_id: s(&r.account_id).or_else(|| s(&ctx.account_id)),
                thread_id: th.map(|t| t.id.clone()).or_else(|| ctx.thread_id.clone()),
                thread_kind: th.and_then(|t| t.kind.clone()),
                thread_source: th.and_then(|t| t.source.clone()),
            })
        }
    }
}

struct DeliveryFields {
    route: Option<Route>,
    delivery_context: Option<Dc>,
}

/// `normalizeSessionDeliveryFields` (the fields `lastChannel`… are those of the context).
fn normalize_session_delivery_fields(
    route: Option<&Route>,
    legacy: DcIn,
    delivery_context: Option<&Value>,
) -> DeliveryFields {
    let normalized_route = normalize_route(route);
    let route_context = dc_from_route(normalized_route.as_ref());
    let legacy_context = normalize_dc(&legacy);
    let delivery = normalize_dc_raw(delivery_context);
    let session_context = if is_internal_route_context(legacy_context.as_ref())
        && has_external_delivery_target(delivery.as_ref())
    {
        merge_external_over_internal(delivery.as_ref(), legacy_context.as_ref())
    } else {
        merge_dc(legacy_context.as_ref(), delivery.as_ref())
    };
    let route_internal_context = merge_dc(route_context.as_ref(), legacy_context.as_ref());
    let route_is_internal_fallback = is_internal_route_context(route_context.as_ref())
        && has_external_delivery_target(delivery.as_ref());
    let merged = if route_is_internal_fallback {
        merge_external_over_internal(delivery.as_ref(), route_internal_context.as_ref())
    } else {
        merge_dc(route_context.as_ref(), session_context.as_ref())
    };
    let Some(merged) = merged else {
        return DeliveryFields {
            route: None,
            delivery_context: None,
        };
    };
    let meta_route = if route_is_internal_fallback {
        None
    } else {
        normalized_route.as_ref()
    };
    DeliveryFields {
        route: merge_route_metadata(meta_route, &merged),
        delivery_context: Some(merged),
    }
}

fn same_route(a: Option<&Route>, b: Option<&Route>) -> bool {
    let ch = |r: Option<&Route>| r.and_then(|r| r.channel.clone());
    let acc = |r: Option<&Route>| r.and_then(|r| r.account_id.clone());
    let tgt = |r: Option<&Route>| r.and_then(|r| r.target.clone());
    let thr = |r: Option<&Route>| r.and_then(|r| r.thread.clone());
    let (ta, tb) = (tgt(a), tgt(b));
    let (ha, hb) = (thr(a), thr(b));
    ch(a) == ch(b)
        && acc(a) == acc(b)
        && ta.as_ref().map(|t| &t.to) == tb.as_ref().map(|t| &t.to)
        && ta.as_ref().and_then(|t| t.raw_to.as_ref())
            == tb.as_ref().and_then(|t| t.raw_to.as_ref())
        && ta.as_ref().and_then(|t| t.chat_type.as_ref())
            == tb.as_ref().and_then(|t| t.chat_type.as_ref())
        && strict_eq(ha.as_ref().map(|t| &t.id), hb.as_ref().map(|t| &t.id))
        && ha.as_ref().and_then(|t| t.kind.as_ref()) == hb.as_ref().and_then(|t| t.kind.as_ref())
        && ha.as_ref().and_then(|t| t.source.as_ref())
            == hb.as_ref().and_then(|t| t.source.as_ref())
}

/// The entry's key order with the still-`undefined` keys of `holes` put back where they were
/// (after the nearest earlier key that still exists, else after the array-index keys).
fn shadow_order<M: EntryFields>(entry: &M, holes: &Holes) -> Vec<(String, bool)> {
    let mut shadow: Vec<(String, bool)> = entry
        .field_names()
        .map(|k| (k.to_string(), false))
        .collect();
    for (i, (key, hole)) in holes.order.iter().enumerate() {
        if !hole || entry.contains_key(key) || shadow.iter().any(|(k, _)| k == key) {
            continue;
        }
        let anchor = holes.order[..i]
            .iter()
            .rev()
            .find_map(|(prev, _)| shadow.iter().position(|(k, _)| k == prev));
        let pos = match anchor {
            Some(j) => j + 1,
            None => shadow
                .iter()
                .take_while(|(k, _)| array_index(k).is_some())
                .count(),
        };
        shadow.insert(pos, (key.clone(), true));
    }
    shadow
}

fn route_value(r: &Route) -> Value {
    let mut m = Map::new();
    if let Some(c) = &r.channel {
        m.insert("channel".into(), Value::String(c.clone()));
    }
    if let Some(a) = &r.account_id {
        m.insert("accountId".into(), Value::String(a.clone()));
    }
    if let Some(t) = &r.target {
        let mut tm = Map::new();
        tm.insert("to".into(), Value::String(t.to.clone()));
        if let Some(raw) = &t.raw_to {
            tm.insert("rawTo".into(), Value::String(raw.clone()));
        }
        if let Some(c) = &t.chat_type {
            tm.insert("chatType".into(), c.clone());
        }
        m.insert("target".into(), Value::Object(tm));
    }
    if let Some(t) = &r.thread {
        let mut tm = Map::new();
        tm.insert("id".into(), t.id.clone());
        if let Some(k) = &t.kind {
            tm.insert("kind".into(), k.clone());
        }
        if let Some(src) = &t.source {
            tm.insert("source".into(), src.clone());
        }
        m.insert("thread".into(), Value::Object(tm));
    }
    Value::Object(m)
}

fn dc_value(d: &Dc) -> Value {
    let mut m = Map::new();
    if let Some(c) = &d.channel {
        m.insert("channel".into(), Value::String(c.clone()));
    }
    if let Some(t) = &d.to {
        m.insert("to".into(), Value::String(t.clone()));
    }
    if let Some(a) = &d.account_id {
        m.insert("accountId".into(), Value::String(a.clone()));
    }
    if let Some(t) = &d.thread_id {
        m.insert("threadId".into(), t.clone());
    }
    Value::Object(m)
}

/// `normalizeSessionEntryDelivery`.
fn normalize_delivery<M: EntryFields>(entry: &mut M, holes: &mut Holes) -> bool {
    let entry_route = normalize_route_raw(entry.get("route"));
    let raw_dc = entry.get("deliveryContext");
    let last_thread = coalesce(
        coalesce(entry.get("lastThreadId"), field(raw_dc, "threadId")),
        field(entry.get("origin"), "threadId"),
    );
    let legacy = DcIn {
        channel: coalesce(entry.get("lastChannel"), entry.get("channel")).cloned(),
        to: entry.get("lastTo").cloned(),
        account_id: entry.get("lastAccountId").cloned(),
        thread_id: last_thread.cloned(),
    };
    let n = normalize_session_delivery_fields(entry_route.as_ref(), legacy, raw_dc);
    let next = n.delivery_context.as_ref();
    let next_channel = next.and_then(|d| d.channel.clone());
    let next_to = next.and_then(|d| d.to.clone());
    let next_account = next.and_then(|d| d.account_id.clone());
    let next_thread = next.and_then(|d| d.thread_id.clone());

    let as_str = |v: &Option<String>| v.clone().map(Value::String);
    let same_delivery = strict_eq(
        js::non_nullish(field(raw_dc, "channel")),
        as_str(&next_channel).as_ref(),
    ) && strict_eq(
        js::non_nullish(field(raw_dc, "to")),
        as_str(&next_to).as_ref(),
    ) && strict_eq(
        js::non_nullish(field(raw_dc, "accountId")),
        as_str(&next_account).as_ref(),
    ) && strict_eq(
        js::non_nullish(field(raw_dc, "threadId")),
        next_thread.as_ref(),
    );
    let same_last = same_route(entry_route.as_ref(), n.route.as_ref())
        && strict_eq(entry.get("lastChannel"), as_str(&next_channel).as_ref())
        && strict_eq(entry.get("lastTo"), as_str(&next_to).as_ref())
        && strict_eq(entry.get("lastAccountId"), as_str(&next_account).as_ref())
        && strict_eq(entry.get("lastThreadId"), next_thread.as_ref());
    if same_delivery && same_last {
        return false;
    }
    let writes: [(&str, Option<Value>); 6] = [
        ("route", n.route.as_ref().map(route_value)),
        ("deliveryContext", next.map(dc_value)),
        ("lastChannel", as_str(&next_channel)),
        ("lastTo", as_str(&next_to)),
        ("lastAccountId", as_str(&next_account)),
        ("lastThreadId", next_thread),
    ];
    let mut shadow = shadow_order(entry, holes);
    for (key, value) in writes {
        let slot = shadow.iter().position(|(k, _)| k == key);
        match (value, slot) {
            (Some(v), Some(j)) if shadow[j].1 => {
                // Assigning an `undefined` key: it comes back at its old position.
                shadow[j].1 = false;
                let index = shadow[..j].iter().filter(|(_, hole)| !hole).count();
                entry.shift_insert(index, key.to_string(), v);
            }
            (Some(v), Some(_)) => js_set(entry, key, v),
            (Some(v), None) => {
                js_set(entry, key, v);
                shadow.push((key.to_string(), false));
            }
            (None, Some(j)) => {
                if !shadow[j].1 {
                    entry.shift_remove(key);
                    shadow[j].1 = true;
                }
            }
            (None, None) => shadow.push((key.to_string(), true)),
        }
    }
    holes.order = if shadow.iter().any(|(_, hole)| *hole) {
        shadow
    } else {
        Vec::new()
    };
    true
}

// ---------------------------------------------------------------------------------------
// Step 6c: normalizePendingFinalDeliveryFields
// ---------------------------------------------------------------------------------------

/// The fields of a final delivery still pending (and of a restart's recovery of one) that
/// step 6c normalises together.
pub(crate) const PENDING_FINAL_DELIVERY_FIELDS: [&str; 10] = [
    "pendingFinalDelivery",
    "pendingFinalDeliveryText",
    "pendingFinalDeliveryCreatedAt",
    "pendingFinalDeliveryLastAttemptAt",
    "pendingFinalDeliveryAttemptCount",
    "pendingFinalDeliveryLastError",
    "pendingFinalDeliveryContext",
    "pendingFinalDeliveryIntentId",
    "restartRecoveryDeliveryContext",
    "restartRecoveryDeliveryRunId",
];

fn normalize_pending_final_delivery<M: EntryFields>(entry: &mut M) -> bool {
    if !PENDING_FINAL_DELIVERY_FIELDS
        .iter()
        .any(|k| entry.contains_key(k))
    {
        return false;
    }
    // The values as they were before this step (each rule reads the original entry).
    let original: Map<String, Value> = PENDING_FINAL_DELIVERY_FIELDS
        .iter()
        .filter_map(|k| entry.get(k).map(|v| (k.to_string(), v.clone())))
        .collect();
    let get = |k: &str| original.get(k);
    let mut changed = false;
    let mut assign = |entry: &mut M, key: &str, value: Option<Value>| {
        if strict_eq(original.get(key), value.as_ref()) {
            return;
        }
        changed = true;
        match value {
            Some(v) => js_set(entry, key, v),
            None => {
                entry.shift_remove(key);
            }
        }
    };
    let string_or_null = |v: Option<&Value>| match v {
        Some(v @ (Value::Null | Value::String(_))) => Some(v.clone()),
        _ => None,
    };
    let finite_non_negative = |v: Option<&Value>| match v {
        Some(Value::Number(n)) if n.as_f64().is_some_and(|f| f.is_finite() && f >= 0.0) => {
            Some(Value::Number(n.clone()))
        }
        _ => None,
    };
    let attempt_count = |v: Option<&Value>| match v {
        Some(Value::Number(n))
            if n.as_f64()
                .is_some_and(|f| f.is_finite() && f.fract() == 0.0 && f >= 0.0) =>
        {
            Some(Value::Number(n.clone()))
        }
        _ => None,
    };

    let pfd = match get("pendingFinalDelivery") {
        Some(Value::Bool(true)) => Some(Value::Bool(true)),
        _ => None,
    };
    assign(entry, "pendingFinalDelivery", pfd);
    assign(
        entry,
        "pendingFinalDeliveryText",
        string_or_null(get("pendingFinalDeliveryText")),
    );
    assign(
        entry,
        "pendingFinalDeliveryCreatedAt",
        finite_non_negative(get("pendingFinalDeliveryCreatedAt")),
    );
    assign(
        entry,
        "pendingFinalDeliveryLastAttemptAt",
        finite_non_negative(get("pendingFinalDeliveryLastAttemptAt")),
    );
    assign(
        entry,
        "pendingFinalDeliveryAttemptCount",
        attempt_count(get("pendingFinalDeliveryAttemptCount")),
    );
    assign(
        entry,
        "pendingFinalDeliveryLastError",
        string_or_null(get("pendingFinalDeliveryLastError")),
    );
    for (ctx_key, next_key) in [
        (
            "pendingFinalDeliveryContext",
            Some("pendingFinalDeliveryIntentId"),
        ),
        ("restartRecoveryDeliveryContext", None),
    ] {
        let raw = get(ctx_key);
        let normalized = match raw {
            Some(Value::Object(_)) => normalize_dc_raw(raw).filter(|d| {
                d.channel.as_deref().is_some_and(|c| !c.is_empty())
                    && d.to.as_deref().is_some_and(|t| !t.is_empty())
            }),
            _ => None,
        };
        if !same_delivery_context(raw, normalized.as_ref()) {
            assign(entry, ctx_key, normalized.as_ref().map(dc_value));
        }
        if let Some(next_key) = next_key {
            assign(entry, next_key, string_or_null(get(next_key)));
        }
    }
    let run_id = match get("restartRecoveryDeliveryRunId") {
        Some(v @ Value::String(_)) => Some(v.clone()),
        _ => None,
    };
    assign(entry, "restartRecoveryDeliveryRunId", run_id);
    changed
}

/// `sameDeliveryContext(left, right)`: field-wise `(x ?? undefined) ===` comparison.
fn same_delivery_context(left: Option<&Value>, right: Option<&Dc>) -> bool {
    let r = |f: fn(&Dc) -> Option<Value>| right.and_then(f);
    strict_eq(
        js::non_nullish(field(left, "channel")),
        r(|d| s(&d.channel)).as_ref(),
    ) && strict_eq(js::non_nullish(field(left, "to")), r(|d| s(&d.to)).as_ref())
        && strict_eq(
            js::non_nullish(field(left, "accountId")),
            r(|d| s(&d.account_id)).as_ref(),
        )
        && strict_eq(
            js::non_nullish(field(left, "threadId")),
            r(|d| d.thread_id.clone()).as_ref(),
        )
}

// ---------------------------------------------------------------------------------------
// Step 6d: normalizePluginExtensions / normalizePluginExtensionSlotKeys
// ---------------------------------------------------------------------------------------

fn normalize_plugin_extensions<M: EntryFields>(entry: &mut M) -> bool {
    normalize_plugin_map(entry, "pluginExtensions", |namespace_value| {
        is_plugin_json_value(namespace_value).then(|| namespace_value.clone())
    })
}

fn normalize_plugin_extension_slot_keys<M: EntryFields>(entry: &mut M) -> bool {
    normalize_plugin_map(entry, "pluginExtensionSlotKeys", |raw| {
        normalize_slot_key(raw).map(Value::String)
    })
}

/// The shared walk of both plugin maps: `{pluginId: {namespace: value}}` with trimmed keys;
/// `accept` returns the normalised value or `None` to drop the namespace.
fn normalize_plugin_map<M: EntryFields>(
    entry: &mut M,
    field_name: &str,
    accept: impl Fn(&Value) -> Option<Value>,
) -> bool {
    let Some(raw) = entry.get(field_name) else {
        return false;
    };
    let Value::Object(plugins) = raw else {
        entry.shift_remove(field_name);
        return true;
    };
    let mut changed = false;
    let mut normalized = Map::new();
    for (raw_plugin_id, raw_state) in plugins {
        let plugin_id = js::trim(raw_plugin_id);
        let Value::Object(state) = raw_state else {
            changed = true;
            continue;
        };
        if plugin_id.is_empty() {
            changed = true;
            continue;
        }
        if plugin_id.len() != raw_plugin_id.len() {
            changed = true;
        }
        let mut normalized_state = Map::new();
        for (raw_namespace, raw_value) in state {
            let namespace = js::trim(raw_namespace);
            let value = if namespace.is_empty() {
                None
            } else {
                accept(raw_value)
            };
            let Some(value) = value else {
                changed = true;
                continue;
            };
            if namespace.len() != raw_namespace.len() || value != *raw_value {
                changed = true;
            }
            js_set(&mut normalized_state, namespace, value);
        }
        if normalized_state.is_empty() {
            changed = true;
            continue;
        }
        js_set(&mut normalized, plugin_id, Value::Object(normalized_state));
    }
    if !changed {
        return false;
    }
    if normalized.is_empty() {
        entry.shift_remove(field_name);
    } else {
        js_set(entry, field_name, Value::Object(normalized));
    }
    true
}

/// Core `SessionEntry` field names a plugin slot key may not take
/// (`SESSION_ENTRY_RESERVED_SLOT_KEYS`), plus the `Object.prototype` members.
const RESERVED_SLOT_KEYS: &[&str] = &[
    "__proto__",
    "constructor",
    "prototype",
    "lastHeartbeatText",
    "lastHeartbeatSentAt",
    "heartbeatIsolatedBaseSessionKey",
    "heartbeatTaskState",
    "pluginExtensions",
    "pluginExtensionSlotKeys",
    "pluginNextTurnInjections",
    "sessionId",
    "lifecycleRevision",
    "updatedAt",
    "archivedAt",
    "pinnedAt",
    "lastReadAt",
    "markedUnreadAt",
    "lastActivityAt",
    "sessionFile",
    "spawnedBy",
    "spawnedWorkspaceDir",
    "spawnedCwd",
    "parentSessionKey",
    "forkedFromParent",
    "spawnDepth",
    "subagentRole",
    "subagentControlScope",
    "inheritedToolDeny",
    "inheritedToolAllow",
    "subagentRecovery",
    "pluginOwnerId",
    "systemSent",
    "abortedLastRun",
    "restartRecoveryRuns",
    "goal",
    "pendingSkillSuggestion",
    "skillCaptureSignalHashes",
    "sessionStartedAt",
    "ambientTranscriptWatermarks",
    "lastInteractionAt",
    "startedAt",
    "endedAt",
    "runtimeMs",
    "status",
    "abortCutoffMessageSid",
    "abortCutoffTimestamp",
    "chatType",
    "thinkingLevel",
    "fastMode",
    "verboseLevel",
    "traceLevel",
    "reasoningLevel",
    "elevatedLevel",
    "ttsAuto",
    "lastTtsReadLatestHash",
    "lastTtsReadLatestAt",
    "execHost",
    "execSecurity",
    "execAsk",
    "execNode",
    "responseUsage",
    "usageFamilyKey",
    "usageFamilySessionIds",
    "providerOverride",
    "modelOverride",
    "agentRuntimeOverride",
    "modelOverrideSource",
    "modelOverrideFallbackOriginProvider",
    "modelOverrideFallbackOriginModel",
    "authProfileOverride",
    "authProfileOverrideSource",
    "authProfileOverrideCompactionCount",
    "liveModelSwitchPending",
    "groupActivation",
    "groupActivationNeedsSystemIntro",
    "sendPolicy",
    "queueMode",
    "queueDebounceMs",
    "queueCap",
    "queueDrop",
    "inputTokens",
    "outputTokens",
    "totalTokens",
    "pendingFinalDelivery",
    "pendingFinalDeliveryCreatedAt",
    "pendingFinalDeliveryLastAttemptAt",
    "pendingFinalDeliveryAttemptCount",
    "pendingFinalDeliveryLastError",
    "pendingFinalDeliveryText",
    "pendingFinalDeliveryContext",
    "pendingFinalDeliveryIntentId",
    "restartRecoveryDeliveryContext",
    "restartRecoveryDeliveryRunId",
    "totalTokensFresh",
    "estimatedCostUsd",
    "cacheRead",
    "cacheWrite",
    "modelProvider",
    "model",
    "agentHarnessId",
    "fallbackNoticeSelectedModel",
    "fallbackNoticeActiveModel",
    "fallbackNoticeReason",
    "contextTokens",
    "contextBudgetStatus",
    "compactionCount",
    "compactionCheckpoints",
    "memoryFlushAt",
    "memoryFlushCompactionCount",
    "memoryFlushContextHash",
    "memoryFlushFailureCount",
    "memoryFlushLastFailedAt",
    "memoryFlushLastFailureError",
    "cliSessionIds",
    "cliSessionBindings",
    "claudeCliSessionId",
    "label",
    "category",
    "displayName",
    "channel",
    "groupId",
    "subject",
    "groupChannel",
    "space",
    "origin",
    "route",
    "deliveryContext",
    "lastChannel",
    "lastTo",
    "lastAccountId",
    "lastThreadId",
    "skillsSnapshot",
    "systemPromptReport",
    "pluginDebugEntries",
    "acp",
    "quotaSuspension",
    // Object.getOwnPropertyNames(Object.prototype) that pass the identifier pattern.
    "hasOwnProperty",
    "isPrototypeOf",
    "propertyIsEnumerable",
    "toString",
    "valueOf",
    "toLocaleString",
];

/// `normalizeSessionEntrySlotKey`: the trimmed identifier, or `None` when invalid/reserved.
fn normalize_slot_key(raw: &Value) -> Option<String> {
    let Value::String(raw) = raw else {
        return None;
    };
    let key = js::trim(raw);
    let b = key.as_bytes();
    if b.is_empty()
        || !b[0].is_ascii_alphabetic()
        || !b[1..]
            .iter()
            .all(|c| c.is_ascii_alphanumeric() || *c == b'_')
    {
        return None;
    }
    if RESERVED_SLOT_KEYS.contains(&key) {
        return None;
    }
    Some(key.to_string())
}

/// `isPluginJsonValue`: finite plain JSON within the plugin limits (depth 32, 4096 nodes,
/// 512 keys per object, 64 Ki UTF-16 units per string or key, 256 KiB serialised).
fn is_plugin_json_value(value: &Value) -> bool {
    struct State {
        nodes: usize,
        depth: usize,
    }
    fn within(v: &Value, st: &mut State) -> bool {
        st.nodes += 1;
        if st.nodes > 4096 || st.depth > 32 {
            return false;
        }
        match v {
            Value::Null | Value::Bool(_) => true,
            Value::String(s) => js::utf16_len(s) <= 64 * 1024,
            Value::Number(n) => n.as_f64().is_some_and(f64::is_finite),
            Value::Array(items) => {
                st.depth += 1;
                let ok = items.iter().all(|i| within(i, st));
                st.depth -= 1;
                ok
            }
            Value::Object(m) => {
                if m.len() > 512 {
                    return false;
                }
                st.depth += 1;
                let ok = m
                    .iter()
                    .all(|(k, v)| js::utf16_len(k) <= 64 * 1024 && within(v, st));
                st.depth -= 1;
                ok
            }
        }
    }
    within(value, &mut State { nodes: 0, depth: 0 }) && js_json_len(value) <= 256 * 1024
}

// ---------------------------------------------------------------------------------------
// Step 6e: stripPersistedSkillsCache
// ---------------------------------------------------------------------------------------

fn strip_resolved_skills<M: EntryFields>(entry: &mut M) -> bool {
    match entry.get_mut("skillsSnapshot") {
        Some(Value::Object(snapshot)) if snapshot.contains_key("resolvedSkills") => {
            snapshot.shift_remove("resolvedSkills");
            true
        }
        _ => false,
    }
}

// ---------------------------------------------------------------------------------------
// Channel ids (src/utils/message-channel-core.ts, src/channels/ids.ts)
// ---------------------------------------------------------------------------------------

/// Built-in chat channel ids and their aliases: the bundled channel metadata followed by the
/// runtime bundled channel catalog of openclaw@2026.7.1 (`normalizeChatChannelId`).
const CHANNEL_IDS_AND_ALIASES: &[(&str, &[&str])] = &[
    ("clickclack", &[]),
    ("discord", &[]),
    ("feishu", &["lark"]),
    ("googlechat", &["gchat", "google-chat"]),
    ("imessage", &["imsg"]),
    ("irc", &["internet-relay-chat"]),
    ("line", &[]),
    ("matrix", &[]),
    ("mattermost", &[]),
    ("msteams", &["teams"]),
    ("nextcloud-talk", &["nc", "nc-talk"]),
    ("nostr", &[]),
    ("qqbot", &[]),
    ("raft", &[]),
    ("signal", &[]),
    ("slack", &[]),
    ("sms", &[]),
    ("synology-chat", &[]),
    ("telegram", &[]),
    ("tlon", &[]),
    ("twitch", &["twitch-chat"]),
    ("whatsapp", &[]),
    ("zalo", &["zl"]),
    ("zalouser", &["zlu"]),
    ("wecom", &["qywx", "wework", "enterprise-wechat"]),
    ("openclaw-weixin", &["weixin", "wechat", "微信"]),
    ("openclaw-zaloclawbot", &["zaloclawbot", "zalo-clawbot"]),
    ("yuanbao", &["yuanbao", "yb", "tencent-yuanbao", "元宝"]),
];

/// `normalizeMessageChannel`: trimmed, lower-cased, built-in aliases mapped to their ids;
/// `None` for a blank value.
pub(crate) fn normalize_message_channel(raw: &str) -> Option<String> {
    let normalized = js::to_lower_case(js::trim(raw));
    if normalized.is_empty() {
        return None;
    }
    for (id, aliases) in CHANNEL_IDS_AND_ALIASES {
        if *id == normalized || aliases.contains(&normalized.as_str()) {
            return Some((*id).to_string());
        }
    }
    Some(normalized)
}

// ---------------------------------------------------------------------------------------
// Account ids (src/routing/account-id.ts)
// ---------------------------------------------------------------------------------------

/// `canonicalizeAccountId` / `normalizeAgentId` shape: keep a valid
/// `^[a-z0-9][a-z0-9_-]{0,63}$` (ASCII, case-insensitive) id lower-cased, else lower-case,
/// replace runs of other characters with `-`, strip edge dashes and cut to 64.
pub(crate) fn canonicalize_id(trimmed: &str) -> String {
    let normalized = js::to_lower_case(trimmed);
    let b = trimmed.as_bytes();
    let valid = !b.is_empty()
        && b.len() <= 64
        && b[0].is_ascii_alphanumeric()
        && b[1..]
            .iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-'));
    if valid {
        return normalized;
    }
    let mut out = String::new();
    let mut in_run = false;
    for c in normalized.chars() {
        if c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-' {
            out.push(c);
            in_run = false;
        } else if !in_run {
            out.push('-');
            in_run = true;
        }
    }
    let out = out.trim_start_matches('-').trim_end_matches('-');
    out.chars().take(64).collect()
}

/// `normalizeOptionalAccountId`: `None` for blank input, an empty canonical form or a
/// prototype key.
pub(crate) fn normalize_optional_account_id(value: &str) -> Option<String> {
    let trimmed = js::trim(value);
    if trimmed.is_empty() {
        return None;
    }
    let canonical = canonicalize_id(trimmed);
    if canonical.is_empty()
        || matches!(
            canonical.as_str(),
            "__proto__" | "prototype" | "constructor"
        )
    {
        return None;
    }
    Some(canonical)
}

// ---------------------------------------------------------------------------------------
// JavaScript value helpers
// ---------------------------------------------------------------------------------------

/// `normalizeOptionalString`: a string, trimmed, non-empty; else `None`.
pub(crate) fn opt_string(v: Option<&Value>) -> Option<String> {
    match v {
        Some(Value::String(s)) => {
            let t = js::trim(s);
            (!t.is_empty()).then(|| t.to_string())
        }
        _ => None,
    }
}

/// `normalizeLowercaseStringOrEmpty`.
pub(crate) fn lower_or_empty(v: Option<&Value>) -> String {
    opt_string(v)
        .map(|s| js::to_lower_case(&s))
        .unwrap_or_default()
}

/// `normalizeOptionalThreadValue`: a finite number truncated, or a trimmed non-empty string.
fn opt_thread_value(v: Option<&Value>) -> Option<Value> {
    match v {
        Some(Value::Number(n)) => {
            if n.is_i64() || n.is_u64() {
                return Some(Value::Number(n.clone()));
            }
            let f = n.as_f64()?;
            if !f.is_finite() {
                return None;
            }
            Some(js_number(f.trunc()))
        }
        Some(Value::String(_)) => opt_string(v).map(Value::String),
        _ => None,
    }
}

/// A JSON number for a JavaScript double: integral values within 2^53 become integers
/// (`-0` becomes `0`, as `JSON.stringify` writes it).
pub(crate) fn js_number(f: f64) -> Value {
    if f.fract() == 0.0 && f.abs() <= 9_007_199_254_740_992.0 {
        Value::Number(Number::from(f as i64))
    } else {
        Number::from_f64(f).map_or(Value::Null, Value::Number)
    }
}

/// `obj?.key` for a JSON value: only objects have fields.
pub(crate) fn field<'a>(v: Option<&'a Value>, key: &str) -> Option<&'a Value> {
    match v {
        Some(Value::Object(m)) => m.get(key),
        _ => None,
    }
}

/// `a ?? b`.
pub(crate) fn coalesce<'a>(a: Option<&'a Value>, b: Option<&'a Value>) -> Option<&'a Value> {
    if js::non_nullish(a).is_none() {
        b
    } else {
        a
    }
}

/// JavaScript truthiness of a JSON value (`None` is `undefined`).
pub(crate) fn truthy(v: Option<&Value>) -> bool {
    v.is_some_and(crate::js::truthy)
}

/// `a === b` for JSON values (`None` is `undefined`). Two objects or arrays are never
/// identical here: the peer compares them by reference and the values compared always
/// come from different places.
pub(crate) fn strict_eq(a: Option<&Value>, b: Option<&Value>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(Value::Null), Some(Value::Null)) => true,
        (Some(Value::Bool(x)), Some(Value::Bool(y))) => x == y,
        (Some(Value::String(x)), Some(Value::String(y))) => x == y,
        (Some(Value::Number(x)), Some(Value::Number(y))) => match (x.as_i64(), y.as_i64()) {
            (Some(i), Some(j)) => i == j,
            _ => x.as_f64() == y.as_f64(),
        },
        _ => false,
    }
}

fn is_string(v: Option<&Value>) -> bool {
    matches!(v, Some(Value::String(_)))
}

/// The numeric value of `key` when it is a canonical array index (`"0"` … `"4294967294"`,
/// no leading zeros): JavaScript orders such keys first, ascending.
fn array_index(key: &str) -> Option<u64> {
    if crate::js::jsjson::is_array_index(key) {
        key.parse().ok()
    } else {
        None
    }
}

/// `obj[key] = value` with JavaScript key order: an existing key keeps its position, a new
/// array-index key goes among the leading index keys in ascending order, any other new key
/// goes to the end. Assumes `map` is already in JavaScript order.
pub(crate) fn js_set<M: EntryFields>(map: &mut M, key: &str, value: Value) {
    if let Some(slot) = map.get_mut(key) {
        *slot = value;
        return;
    }
    match array_index(key) {
        None => {
            map.insert(key.to_string(), value);
        }
        Some(n) => {
            let pos = map
                .field_names()
                .take_while(|k| array_index(k).is_some_and(|m| m < n))
                .count();
            map.shift_insert(pos, key.to_string(), value);
        }
    }
}

/// Byte length of `JSON.stringify(value)` (compact, JavaScript number formatting and string
/// escaping; lone surrogates cannot occur in Rust strings).
pub(crate) fn js_json_len(v: &Value) -> usize {
    fn str_len(s: &str) -> usize {
        2 + s
            .chars()
            .map(|c| match c {
                '"' | '\\' | '\u{8}' | '\u{c}' | '\n' | '\r' | '\t' => 2,
                c if (c as u32) < 0x20 => 6,
                c => c.len_utf8(),
            })
            .sum::<usize>()
    }
    match v {
        Value::Null => 4,
        Value::Bool(true) => 4,
        Value::Bool(false) => 5,
        Value::Number(n) => {
            if n.is_i64() || n.is_u64() {
                n.to_string().len()
            } else {
                let f = n.as_f64().unwrap_or(0.0);
                ryu_js::Buffer::new().format(f).len()
            }
        }
        Value::String(s) => crate::js::jsjson::deep_text(s).map_or_else(|| str_len(s), str::len),
        Value::Array(items) => {
            2 + items.iter().map(js_json_len).sum::<usize>() + items.len().saturating_sub(1)
        }
        Value::Object(m) => {
            2 + m
                .iter()
                .map(|(k, v)| str_len(k) + 1 + js_json_len(v))
                .sum::<usize>()
                + m.len().saturating_sub(1)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The memo's verdict is the step's: every shape, with targets varied, through the
    /// memo (shared) and without it.
    #[test]
    fn delivery_memo_agrees_with_the_step() {
        let shapes = [
            r#"{"lastChannel":"telegram","lastTo":"T1","deliveryContext":{"channel":"telegram","to":"T1"},"route":{"channel":"telegram","target":{"to":"T1"}}}"#,
            r#"{"lastChannel":"telegram","lastTo":"T1","deliveryContext":{"channel":"telegram","to":"T2"},"route":{"channel":"telegram","target":{"to":"T1"}}}"#,
            r#"{"lastChannel":"telegram","lastTo":"T1","deliveryContext":{"channel":"telegram","to":"T1"},"route":{"channel":"telegram","target":{"to":"T1","rawTo":"T2"}}}"#,
            r#"{"lastChannel":"webchat","lastTo":"T1","deliveryContext":{"channel":"telegram","to":"T2"}}"#,
            r#"{"channel":"Telegram","lastTo":"T1"}"#,
            r#"{"lastChannel":"slack","lastTo":"T1","lastAccountId":"Acc","deliveryContext":{"channel":"slack","to":"T1","accountId":"acc"}}"#,
            r#"{"lastChannel":"discord","lastTo":"T1","deliveryContext":{"channel":"discord","to":"T1"},"route":{"channel":"discord","target":{"to":"T1"}},"origin":{"threadId":7}}"#,
            r#"{"lastChannel":"discord","lastTo":"T1","lastThreadId":7,"deliveryContext":{"channel":"discord","to":"T1","threadId":7},"route":{"channel":"discord","target":{"to":"T1"},"thread":{"id":7}}}"#,
            r#"{"route":{"channel":"telegram","target":{"to":"T1"}}}"#,
            r#"{"deliveryContext":{"channel":"telegram","to":"T1"}}"#,
            r#"{"sessionId":"s"}"#,
        ];
        let targets = [
            ("a:1", "b:2"),
            ("x", "x"),
            (" pad ", "q"),
            ("", "z"),
            ("c:3", "d:4"),
        ];
        let mut memo = DeliveryMemo::default();
        for round in 0..2 {
            for shape in shapes {
                for (t1, t2) in targets {
                    let text = shape.replace("T1", t1).replace("T2", t2);
                    let entry = obj(serde_json::from_str(&text).unwrap());
                    let (mut a, mut b) = (entry.clone(), entry);
                    let va = normalize_entry_with_holes(&mut a, &mut Holes::default());
                    let vb =
                        normalize_entry_with_holes_memo(&mut b, &mut Holes::default(), &mut memo);
                    assert_eq!(va, vb, "{text} (round {round})");
                    assert_eq!(
                        crate::js::jsjson::to_string_compact(&Value::Object(a)),
                        crate::js::jsjson::to_string_compact(&Value::Object(b)),
                        "{text}"
                    );
                }
            }
        }
        assert!(!memo.unchanged.is_empty());
    }

    fn obj(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => panic!("not an object"),
        }
    }

    fn norm(v: Value) -> (EntryVerdict, String) {
        let mut m = obj(v);
        let verdict = normalize_entry(&mut m);
        (verdict, serde_json::to_string(&Value::Object(m)).unwrap())
    }

    #[test]
    fn transcript_ids() {
        assert!(is_valid_transcript_session_id("abc"));
        assert!(is_valid_transcript_session_id("A.b_c-9"));
        assert!(!is_valid_transcript_session_id("abc:def"));
        assert!(!is_valid_transcript_session_id("user@host"));
        assert!(!is_valid_transcript_session_id(&"a".repeat(129)));
        assert!(is_valid_transcript_session_id(&"a".repeat(128)));
        assert!(!is_valid_transcript_session_id(".abc"));
        assert!(!is_valid_transcript_session_id(""));
        assert!(!is_valid_transcript_session_id(
            "x.checkpoint.0b4c5f3e-1d2a-4c3b-8e9f-0a1b2c3d4e5f"
        ));
        assert!(!is_valid_transcript_session_id(
            "x.CHECKPOINT.0B4C5F3E-1D2A-4C3B-8E9F-0A1B2C3D4E5F"
        ));
        // version nibble 6 is not a checkpoint uuid
        assert!(is_valid_transcript_session_id(
            "x.checkpoint.0b4c5f3e-1d2a-6c3b-8e9f-0a1b2c3d4e5f"
        ));
        assert!(is_safe_session_id("  abc:def@x  "));
        assert!(!is_safe_session_id("../evil"));
        assert!(!is_safe_session_id("."));
        assert!(!is_safe_session_id("   "));
    }

    /// E5: legacy fields migrate, `route`/`deliveryContext`/`lastChannel` are added at the
    /// end, unknown fields survive, bad `updatedAt` becomes 0, unsafe ids drop the entry.
    #[test]
    fn e5_normalisation() {
        let (v, out) = norm(json!({
            "sessionId": "z1", "updatedAt": 1, "custom": [1, {"a": 2}],
            "provider": "telegram", "room": "#r"
        }));
        assert_eq!(v, EntryVerdict::Keep { changed: true });
        assert_eq!(
            out,
            r##"{"sessionId":"z1","updatedAt":1,"custom":[1,{"a":2}],"channel":"telegram","groupChannel":"#r","route":{"channel":"telegram"},"deliveryContext":{"channel":"telegram"},"lastChannel":"telegram"}"##
        );
        let (_, out) = norm(json!({"sessionId": "m", "updatedAt": 2, "lastProvider": "discord"}));
        assert_eq!(
            out,
            r#"{"sessionId":"m","updatedAt":2,"lastChannel":"discord","route":{"channel":"discord"},"deliveryContext":{"channel":"discord"}}"#
        );
        let (_, out) = norm(json!({"sessionId": "u", "updatedAt": "notanumber"}));
        assert_eq!(out, r#"{"sessionId":"u","updatedAt":0}"#);
        let (_, out) = norm(json!({"sessionId": "n", "updatedAt": -5}));
        assert_eq!(out, r#"{"sessionId":"n","updatedAt":0}"#);
        let (v, _) = norm(json!({"sessionId": "../evil", "updatedAt": 1}));
        assert_eq!(v, EntryVerdict::Drop);
        let (_, out) = norm(json!({"sessionId": "abc:def", "updatedAt": 3}));
        assert_eq!(out, r#"{"updatedAt":3}"#);
        let (v, out) = norm(json!({"updatedAt": 4}));
        assert_eq!(v, EntryVerdict::Keep { changed: false });
        assert_eq!(out, r#"{"updatedAt":4}"#);
        // room is dropped when groupChannel is already a string
        let (_, out) = norm(json!({"groupChannel": "g", "room": "r"}));
        assert_eq!(out, r#"{"groupChannel":"g"}"#);
    }

    /// E23: sessionId validation, sessionFile type, model trimming, pendingFinalDelivery.
    #[test]
    fn e23_shape_rules() {
        assert_eq!(norm(json!({"sessionId": 5})).0, EntryVerdict::Drop);
        assert_eq!(norm(json!({"sessionId": null})).0, EntryVerdict::Drop);
        assert_eq!(
            norm(json!({"sessionId": "  abc  "})).1,
            r#"{"sessionId":"abc"}"#
        );
        let cp = "s.checkpoint.0b4c5f3e-1d2a-4c3b-8e9f-0a1b2c3d4e5f";
        assert_eq!(norm(json!({"sessionId": cp, "x": 1})).1, r#"{"x":1}"#);
        assert_eq!(
            norm(json!({"sessionId": cp, "sessionFile": "f.jsonl"})).1,
            format!(r#"{{"sessionId":"{cp}","sessionFile":"f.jsonl"}}"#)
        );
        // a blank sessionFile does not rescue an invalid id
        assert_eq!(
            norm(json!({"sessionId": "a:b", "sessionFile": "  "})).1,
            r#"{"sessionFile":"  "}"#
        );
        assert_eq!(norm(json!({"sessionId": "a".repeat(200)})).1, "{}");
        assert_eq!(norm(json!({"sessionId": "user@host"})).1, "{}");
        assert_eq!(
            norm(json!({"sessionId": "k", "sessionFile": 5})).1,
            r#"{"sessionId":"k"}"#
        );
        assert_eq!(
            norm(json!({"model": "  gpt  ", "modelProvider": "  "})).1,
            r#"{"model":"gpt"}"#
        );
        assert_eq!(
            norm(json!({"modelProvider": "openai", "a": 1})).1,
            r#"{"a":1}"#
        );
        assert_eq!(
            norm(json!({"pendingFinalDelivery": "yes", "pendingFinalDeliveryAttemptCount": 1.5, "b": 2})).1,
            r#"{"b":2}"#
        );
        assert_eq!(
            norm(
                json!({"pendingFinalDelivery": true, "pendingFinalDeliveryAttemptCount": 2.0,
                "pendingFinalDeliveryText": null, "pendingFinalDeliveryCreatedAt": -1})
            )
            .0,
            EntryVerdict::Keep { changed: true }
        );
    }

    #[test]
    fn delivery_recomputation() {
        // only a channel: route/deliveryContext/lastChannel appended
        assert_eq!(
            norm(json!({"channel": "Telegram"})).1,
            r#"{"channel":"Telegram","route":{"channel":"telegram"},"deliveryContext":{"channel":"telegram"},"lastChannel":"telegram"}"#
        );
        // legacy fields: aliases, account canonicalisation, thread truncation, in place
        assert_eq!(
            norm(json!({"lastChannel": "Lark", "lastTo": "  z ", "lastAccountId": "Acc One", "lastThreadId": 7.9})).1,
            r#"{"lastChannel":"feishu","lastTo":"z","lastAccountId":"acc-one","lastThreadId":7,"route":{"channel":"feishu","accountId":"acc-one","target":{"to":"z"},"thread":{"id":7}},"deliveryContext":{"channel":"feishu","to":"z","accountId":"acc-one","threadId":7}}"#
        );
        // already consistent: untouched, even with an un-normalised raw route channel
        let (v, out) = norm(json!({
            "route": {"channel": "Telegram", "extra": 1},
            "deliveryContext": {"channel": "telegram", "x": 1},
            "lastChannel": "telegram"
        }));
        assert_eq!(v, EntryVerdict::Keep { changed: false });
        assert!(out.contains(r#""extra":1"#));
        // null last fields are replaced (null !== undefined)
        assert_eq!(norm(json!({"lastTo": null})).1, "{}");
        // internal route context with an external delivery target
        assert_eq!(
            norm(json!({"lastChannel": "webchat", "lastAccountId": "a1",
                "deliveryContext": {"channel": "telegram", "to": "42"}}))
            .1,
            r#"{"lastChannel":"telegram","lastAccountId":"a1","deliveryContext":{"channel":"telegram","to":"42","accountId":"a1"},"route":{"channel":"telegram","accountId":"a1","target":{"to":"42"}},"lastTo":"42"}"#
        );
    }

    /// The gateway's writer re-normalises an uncloned store: keys left `undefined` by the
    /// load pass keep their position (observed with `sessions cleanup --enforce`).
    #[test]
    fn holes_keep_positions_across_passes() {
        let mut e = obj(
            json!({"sessionId": "abc", "updatedAt": 5, "lastTo": null, "lastAccountId": "",
            "lastThreadId": {}, "groupChannel": 7, "origin": {"chatType": "DIRECT", "threadId": 7.9},
            "model": "/x"}),
        );
        let mut holes = Holes::default();
        normalize_entry_with_holes(&mut e, &mut holes);
        assert_eq!(
            serde_json::to_string(&e).unwrap(),
            r#"{"sessionId":"abc","updatedAt":5,"groupChannel":7,"origin":{"chatType":"DIRECT","threadId":7.9},"model":"/x"}"#
        );
        assert_eq!(
            holes.keys().collect::<Vec<_>>(),
            [
                "lastTo",
                "lastAccountId",
                "lastThreadId",
                "route",
                "deliveryContext",
                "lastChannel"
            ]
        );
        let mut without = e.clone();
        normalize_entry_fields_with_holes(&mut e, &mut holes);
        assert_eq!(
            serde_json::to_string(&e).unwrap(),
            r#"{"sessionId":"abc","updatedAt":5,"lastThreadId":7,"groupChannel":7,"origin":{"chatType":"DIRECT","threadId":7.9},"model":"/x","route":{"thread":{"id":7}},"deliveryContext":{"threadId":7}}"#
        );
        // Without the holes the keys would be appended.
        normalize_entry_fields(&mut without);
        assert!(serde_json::to_string(&without)
            .unwrap()
            .ends_with(r#""lastThreadId":7}"#));
        // A migrated blank lastProvider hides `channel` on the first pass only.
        let mut m = obj(json!({"channel": "lark", "lastProvider": "  ", "status": "done"}));
        let mut holes = Holes::default();
        normalize_entry_with_holes(&mut m, &mut holes);
        normalize_entry_fields_with_holes(&mut m, &mut holes);
        assert_eq!(
            serde_json::to_string(&m).unwrap(),
            r#"{"channel":"lark","status":"done","lastChannel":"feishu","route":{"channel":"feishu"},"deliveryContext":{"channel":"feishu"}}"#
        );
    }

    #[test]
    fn plugin_maps() {
        assert_eq!(
            norm(
                json!({"pluginExtensions": {" p ": {" ns ": {"a": 1}, "": 2, "bad": 3},
                "q": 5, "": {"x": 1}}})
            )
            .1,
            r#"{"pluginExtensions":{"p":{"ns":{"a":1},"bad":3}}}"#
        );
        assert_eq!(norm(json!({"pluginExtensions": [1]})).1, "{}");
        assert_eq!(norm(json!({"pluginExtensions": {"p": {}}})).1, "{}");
        let (v, _) = norm(json!({"pluginExtensions": {"p": {"n": 1}}}));
        assert_eq!(v, EntryVerdict::Keep { changed: false });
        assert_eq!(
            norm(
                json!({"pluginExtensionSlotKeys": {"p": {"a": " slotA ", "b": "model",
                "c": "toString", "d": "9x", "e": 4}}})
            )
            .1,
            r#"{"pluginExtensionSlotKeys":{"p":{"a":"slotA"}}}"#
        );
        // a trimmed namespace that becomes an array index moves first
        assert_eq!(
            norm(json!({"pluginExtensions": {"p": {"b": 1, " 5": 2}}})).1,
            r#"{"pluginExtensions":{"p":{"5":2,"b":1}}}"#
        );
    }

    #[test]
    fn resolved_skills_stripped() {
        let (v, out) =
            norm(json!({"skillsSnapshot": {"prompt": "p", "resolvedSkills": [1], "skills": []}}));
        assert_eq!(v, EntryVerdict::Keep { changed: true });
        assert_eq!(out, r#"{"skillsSnapshot":{"prompt":"p","skills":[]}}"#);
    }

    #[test]
    fn js_helpers() {
        assert_eq!(js::trim("\u{feff} a\u{3000}"), "a");
        assert_eq!(js::trim("\u{85}a"), "\u{85}a");
        assert_eq!(
            normalize_optional_account_id(" Acc One "),
            Some("acc-one".into())
        );
        assert_eq!(normalize_optional_account_id("--"), None);
        assert_eq!(normalize_optional_account_id("Constructor"), None);
        assert_eq!(canonicalize_id("Ünï"), "n");
        let mut m = obj(json!({"1": 0, "9": 0, "a": 0}));
        js_set(&mut m, "5", Value::Null);
        js_set(&mut m, "b", Value::Null);
        js_set(&mut m, "a", Value::Bool(true));
        assert_eq!(
            m.keys().cloned().collect::<Vec<_>>(),
            ["1", "5", "9", "a", "b"]
        );
        assert_eq!(
            js_json_len(&json!({"a": [1, 2.5, "x\n"], "b": null})),
            serde_json::to_string(&json!({"a": [1, 2.5, "x\n"], "b": null}))
                .unwrap()
                .len()
        );
    }
}
