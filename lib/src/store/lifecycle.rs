//! What the gateway does to one entry on disk: find it by key or sessionId, patch it
//! (RFC 7386), reset it to a new session (`store.md` §6.3) and delete it, archiving transcripts.
//!
//! These functions work on a loaded [`SessionStore`]; the caller holds the store lock
//! for the whole read-modify-write and decides about dry runs.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use foldhash::fast::FixedState;
use serde_json::{Map, Value};
use thiserror::Error;

use crate::exit::{self, ExitCode};
use crate::fs::data_file::{DataFileError, DataPath};
use crate::js;
use crate::session::artifact::{archive_name_suffix, trajectory_sidecars, ArchiveReason};
use crate::session::session_key::{
    is_subagent_key, normalize_session_key, resolve_store_key, KeyContext,
};
use crate::store::normalize::{normalize_entry, EntryVerdict};
use crate::store::transcript_path::{generated_session_id_of, TranscriptResolver};
use crate::store::SessionStore;

/// A lifecycle operation that cannot proceed.
#[derive(Debug, Error)]
pub enum LifecycleError {
    /// No entry matches the key or sessionId.
    #[error("{store}: no session matches {key:?}")]
    NotFound {
        /// The store searched.
        store: PathBuf,
        /// What was asked for.
        key: String,
    },
    /// A patch would leave an entry the gateway drops or rewrites.
    #[error("{key}: invalid patch: {message}")]
    InvalidPatch {
        /// The entry key.
        key: String,
        /// What is wrong.
        message: String,
    },
    /// A transcript could not be archived, created or removed.
    #[error("{path}: {action}: {source}")]
    File {
        /// The file.
        path: PathBuf,
        /// What was attempted.
        action: &'static str,
        /// The I/O error.
        source: std::io::Error,
    },
}

impl ExitCode for LifecycleError {
    fn exit_code(&self) -> i32 {
        match self {
            LifecycleError::NotFound { .. } => exit::NOT_FOUND,
            LifecycleError::InvalidPatch { .. } => exit::DATA_ERR,
            LifecycleError::File { .. } => exit::CANT_CREATE,
        }
    }
}

/// How an entry was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MatchedBy {
    /// The stored key equals the resolved request key.
    Key,
    /// A legacy stored key normalises to the resolved request key.
    Alias,
    /// The request was the entry's sessionId.
    SessionId,
}

/// The entry a request resolved to.
#[derive(Debug, Clone)]
pub struct EntryMatch {
    /// The key the entry is stored under.
    pub store_key: String,
    /// The canonical key the request resolved to.
    pub canonical_key: String,
    /// How it was found.
    pub matched_by: MatchedBy,
}

fn updated_at(entry: &Value) -> f64 {
    entry
        .get("updatedAt")
        .and_then(Value::as_f64)
        .unwrap_or(0.0)
}

/// Finds an entry by request key (resolved as the gateway resolves it, legacy aliases
/// included, freshest wins) or, failing that, by sessionId.
pub fn find_entry(store: &SessionStore, request: &str, ctx: &KeyContext) -> Option<EntryMatch> {
    let canonical = resolve_store_key(request, ctx);
    if store.entries().contains_key(&canonical) {
        return Some(EntryMatch {
            store_key: canonical.clone(),
            canonical_key: canonical,
            matched_by: MatchedBy::Key,
        });
    }
    let raw = request.trim();
    let mut best: Option<(&String, f64)> = None;
    for (k, v) in store.entries() {
        if k == raw
            || normalize_session_key(k) == canonical
            || resolve_store_key(k, ctx) == canonical
        {
            let u = updated_at(v);
            if best.is_none_or(|(_, b)| u > b) {
                best = Some((k, u));
            }
        }
    }
    if let Some((k, _)) = best {
        return Some(EntryMatch {
            store_key: k.clone(),
            canonical_key: canonical,
            matched_by: MatchedBy::Alias,
        });
    }
    let by_id = store
        .entries()
        .iter()
        .filter(|(_, v)| v.get("sessionId").and_then(Value::as_str) == Some(raw))
        .max_by(|a, b| updated_at(a.1).total_cmp(&updated_at(b.1)))?;
    Some(EntryMatch {
        store_key: by_id.0.clone(),
        canonical_key: by_id.0.clone(),
        matched_by: MatchedBy::SessionId,
    })
}

/// [`find_entry`] for many requests against one store: an exact key is one lookup, and
/// the aliases and sessionIds the fallbacks compare are indexed once, on the first request
/// that needs them, so a batch of `k` requests costs `O(n + k)`, not `O(n·k)`.
pub struct KeyFinder<'a> {
    ctx: &'a KeyContext,
    /// Every entry as the lookups see it: key, updatedAt (0 unless a number), sessionId.
    entries: Vec<(&'a str, f64, Option<&'a str>)>,
    by_key: HashMap<&'a str, Slot<'a>, FixedState>,
    index: Option<FallbackIndex<'a>>,
    visits: usize,
}

/// The best entry per alias and per sessionId, as [`find_entry`]'s scans pick them.
struct FallbackIndex<'a> {
    /// `normalize_session_key(k)` and `resolve_store_key(k)` of every stored key `k` →
    /// the freshest, the first in store order on ties.
    by_alias: HashMap<String, Slot<'a>, FixedState>,
    /// sessionId → the freshest, the last in store order on ties (as `Iterator::max_by`).
    by_session_id: HashMap<&'a str, Slot<'a>, FixedState>,
}

/// An entry's position in the store, its updatedAt and its key.
type Slot<'a> = (usize, f64, &'a str);

impl<'a> KeyFinder<'a> {
    /// A finder over a loaded store.
    pub fn new(store: &'a SessionStore, ctx: &'a KeyContext) -> Self {
        Self::over(
            store
                .entries()
                .iter()
                .map(|(k, v)| {
                    (
                        k.as_str(),
                        updated_at(v),
                        v.get("sessionId").and_then(Value::as_str),
                    )
                })
                .collect(),
            ctx,
        )
    }

    /// A finder over the entries of a store as (key, updatedAt or 0, sessionId), in store
    /// order (a reader that does not build entries gives these).
    pub fn over(entries: Vec<(&'a str, f64, Option<&'a str>)>, ctx: &'a KeyContext) -> Self {
        let by_key = entries
            .iter()
            .enumerate()
            .map(|(i, &(k, u, _))| (k, (i, u, k)))
            .collect();
        KeyFinder {
            ctx,
            visits: entries.len(),
            entries,
            by_key,
            index: None,
        }
    }

    /// How many stored entries the finder has examined so far: each once to be built,
    /// and once more when a request first needs the fallbacks.
    pub fn entries_visited(&self) -> usize {
        self.visits
    }

    /// What [`find_entry`] gives for `request`.
    pub fn find(&mut self, request: &str) -> Option<EntryMatch> {
        let canonical = resolve_store_key(request, self.ctx);
        if self.by_key.contains_key(canonical.as_str()) {
            return Some(EntryMatch {
                store_key: canonical.clone(),
                canonical_key: canonical,
                matched_by: MatchedBy::Key,
            });
        }
        let raw = request.trim();
        if self.index.is_none() {
            self.visits += self.entries.len();
            self.index = Some(FallbackIndex::build(&self.entries, self.ctx));
        }
        let index = self.index.as_ref()?;
        // `k == raw`, or an alias of `k` equal to the canonical key: the freshest, the
        // first in store order on ties.
        let exact = self.by_key.get(raw).copied();
        let alias = index.by_alias.get(&canonical).copied();
        let best = [exact, alias].into_iter().flatten().reduce(|a, b| {
            if b.1 > a.1 || (b.1 == a.1 && b.0 < a.0) {
                b
            } else {
                a
            }
        });
        if let Some((_, _, k)) = best {
            return Some(EntryMatch {
                store_key: k.to_string(),
                canonical_key: canonical,
                matched_by: MatchedBy::Alias,
            });
        }
        let &(_, _, k) = index.by_session_id.get(raw)?;
        Some(EntryMatch {
            store_key: k.to_string(),
            canonical_key: k.to_string(),
            matched_by: MatchedBy::SessionId,
        })
    }
}

impl<'a> FallbackIndex<'a> {
    fn build(entries: &[(&'a str, f64, Option<&'a str>)], ctx: &KeyContext) -> Self {
        let mut by_alias: HashMap<String, Slot<'a>, FixedState> = Default::default();
        let mut by_session_id: HashMap<&'a str, Slot<'a>, FixedState> = Default::default();
        for (i, &(k, u, id)) in entries.iter().enumerate() {
            let normalized = normalize_session_key(k);
            let resolved = resolve_store_key(k, ctx);
            for name in [
                Some(normalized.clone()),
                (resolved != normalized).then_some(resolved),
            ]
            .into_iter()
            .flatten()
            {
                let slot = by_alias.entry(name).or_insert((i, u, k));
                if u > slot.1 {
                    *slot = (i, u, k);
                }
            }
            if let Some(id) = id {
                let slot = by_session_id.entry(id).or_insert((i, u, k));
                if u.total_cmp(&slot.1).is_ge() {
                    *slot = (i, u, k);
                }
            }
        }
        FallbackIndex {
            by_alias,
            by_session_id,
        }
    }
}

/// Applies an RFC 7386 JSON merge patch: `null` removes, objects merge recursively,
/// anything else replaces. Existing keys keep their position; new keys go last.
pub fn merge_patch(target: &mut Value, patch: &Value) {
    let Value::Object(patch_map) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = Value::Object(Map::new());
    }
    let Value::Object(map) = target else { return };
    for (k, v) in patch_map {
        if v.is_null() {
            map.shift_remove(k);
        } else if let Some(existing) = map.get_mut(k) {
            merge_patch(existing, v);
        } else {
            let mut fresh = Value::Null;
            merge_patch(&mut fresh, v);
            map.insert(k.clone(), fresh);
        }
    }
}

/// Rewrites patch shorthands: `sendPolicy: "inherit"` (as `/send inherit` says it) means
/// removing the override.
pub fn expand_patch_shorthands(patch: &mut Value) {
    if let Some(sp) = patch.get_mut("sendPolicy") {
        if sp
            .as_str()
            .is_some_and(|s| s.trim().eq_ignore_ascii_case("inherit"))
        {
            *sp = Value::Null;
        }
    }
}

/// Checks that a patched entry survives the gateway's load normalisation unchanged,
/// so a patch never writes something the gateway would drop or silently rewrite.
pub fn validate_patched_entry(key: &str, entry: &Value) -> Result<(), LifecycleError> {
    let invalid = |message: String| LifecycleError::InvalidPatch {
        key: key.to_string(),
        message,
    };
    let Value::Object(map) = entry else {
        return Err(invalid("an entry must be a JSON object".into()));
    };
    if let Some(sp) = map.get("sendPolicy") {
        if !matches!(sp.as_str(), Some("allow" | "deny")) {
            return Err(invalid(format!(
                "sendPolicy must be \"allow\" or \"deny\" (remove the field to inherit), got {sp}"
            )));
        }
    }
    // The load's prompt hydration deletes a `skillsSnapshot` that has no string `prompt`
    // (and no valid `promptRef` blob, which a loaded entry never keeps).
    if let Some(snapshot) = map.get("skillsSnapshot") {
        if crate::js::truthy(snapshot) && !matches!(snapshot.get("prompt"), Some(Value::String(_)))
        {
            return Err(invalid(
                "skillsSnapshot needs a string prompt; the gateway would remove it on load".into(),
            ));
        }
    }
    let mut probe = map.clone();
    match normalize_entry(&mut probe) {
        EntryVerdict::Drop => Err(invalid(
            "the gateway would drop this entry (sessionId must be a string matching ^[A-Za-z0-9][A-Za-z0-9._:@-]*$)".into(),
        )),
        EntryVerdict::Keep { .. } => {
            if let Some(id) = map.get("sessionId") {
                if probe.get("sessionId") != Some(id) {
                    return Err(invalid(format!(
                        "sessionId {id} cannot name a transcript; the gateway would remove it"
                    )));
                }
            }
            Ok(())
        }
    }
}

/// Renames every existing candidate to `<name>.<reason>.<ts>`; returns (from, to) pairs.
/// A candidate that is not a regular file (a symlink, a FIFO) is left alone; a rename is
/// made through the candidate's directory, reached without following a link.
///
/// An archive is never overwritten: when the name for `now_ms` is taken (two resets of one
/// `sessionFile` at the same `--now`), the next free millisecond names it.
pub fn archive_transcripts(
    candidates: &[DataPath],
    reason: ArchiveReason,
    now_ms: impl Fn() -> i64,
    dry_run: bool,
) -> Result<Vec<(PathBuf, PathBuf)>, LifecycleError> {
    /// How many later milliseconds are tried before giving up.
    const TRIES: i64 = 1000;
    let mut done = Vec::new();
    for c in candidates {
        if !c.is_file() {
            continue;
        }
        let fail = |source| LifecycleError::File {
            path: c.path().to_path_buf(),
            action: "cannot archive",
            source,
        };
        let dir = if dry_run {
            None
        } else {
            Some(
                c.open_parent()
                    .map_err(|e| file_error(c.path(), "cannot archive", e))?,
            )
        };
        let ts = now_ms();
        let mut archived = None;
        for i in 0..TRIES {
            let suffix = archive_name_suffix(reason, ts.saturating_add(i));
            let to = c
                .with_suffix(&suffix)
                .map_err(|e| file_error(c.path(), "cannot archive", e))?;
            let taken = match &dir {
                None => !matches!(to.kind(), Ok(None)),
                Some((dir, name)) => match dir.rename_no_replace(name, to.file_name()) {
                    Ok(()) => {
                        dir.sync().map_err(fail)?;
                        false
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => true,
                    Err(e) => return Err(fail(e)),
                },
            };
            if !taken {
                archived = Some(to);
                break;
            }
        }
        let to = archived.ok_or_else(|| {
            fail(std::io::Error::new(
                std::io::ErrorKind::AlreadyExists,
                format!(
                    "{TRIES} archive names from {} on are taken",
                    crate::js::clock::archive_timestamp(ts)
                ),
            ))
        })?;
        done.push((c.path().to_path_buf(), to.path().to_path_buf()));
    }
    Ok(done)
}

/// A [`LifecycleError::File`] for a data file that cannot be used.
fn file_error(path: &Path, action: &'static str, e: DataFileError) -> LifecycleError {
    LifecycleError::File {
        path: path.to_path_buf(),
        action,
        source: std::io::Error::other(e.to_string()),
    }
}

/// Removes a transcript's trajectory sidecars that lie inside the sessions directory;
/// returns the removed paths. Symlinks are removed as links, never followed.
pub fn remove_trajectory_sidecars(
    transcript: &DataPath,
    resolver: &TranscriptResolver,
    dry_run: bool,
) -> Result<Vec<PathBuf>, LifecycleError> {
    if !resolver.is_inside(transcript) {
        return Ok(Vec::new());
    }
    let (runtime, pointer) = trajectory_sidecars(transcript.path());
    let mut removed = Vec::new();
    for p in [runtime, pointer] {
        let Some(name) = p.file_name() else { continue };
        let Ok(sidecar) = transcript.sibling(name) else {
            continue;
        };
        match sidecar.kind() {
            Ok(Some(k)) if k != rustix::fs::FileType::Directory => {}
            _ => continue,
        }
        if !dry_run {
            let (dir, name) = sidecar
                .open_parent()
                .map_err(|e| file_error(&p, "cannot remove", e))?;
            dir.unlink(name).map_err(|source| LifecycleError::File {
                path: p.clone(),
                action: "cannot remove",
                source,
            })?;
        }
        removed.push(p);
    }
    Ok(removed)
}

/// The fresh transcript header the gateway writes on reset.
pub fn transcript_header(session_id: &str, now_ms: i64, cwd: &Path) -> String {
    let mut h = Map::new();
    h.insert("type".into(), Value::from("session"));
    h.insert("version".into(), Value::from(3));
    h.insert("id".into(), Value::from(session_id));
    h.insert("timestamp".into(), Value::from(js::to_iso_string(now_ms)));
    h.insert(
        "cwd".into(),
        Value::from(cwd.to_string_lossy().into_owned()),
    );
    let mut line = crate::js::jsjson::to_string_compact(&Value::Object(h));
    line.push('\n');
    line
}

/// The sessionFile a reset gives the new session: the old file name rewritten to the
/// new id when it was derived from the old one (`<id>.jsonl`, `<id>-topic-…`,
/// `<ts>_<id>.jsonl`), else the old custom file, else `<sessionsDir>/<new>.jsonl`.
pub fn reset_session_file(
    current: Option<&Map<String, Value>>,
    next_id: &str,
    resolver: &TranscriptResolver,
) -> Result<DataPath, crate::store::transcript_path::TranscriptPathError> {
    let file = current
        .and_then(|e| e.get("sessionFile"))
        .and_then(Value::as_str);
    let previous = file
        .and_then(generated_session_id_of)
        .map(str::to_string)
        .or_else(|| {
            current
                .and_then(|e| e.get("sessionId"))
                .and_then(Value::as_str)
                .map(str::to_string)
        });
    let rewritten = match (file, previous.as_deref()) {
        (Some(f), Some(prev)) if !prev.is_empty() => {
            let p = Path::new(f.trim());
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            let new_name = if name == format!("{prev}.jsonl") {
                Some(format!("{next_id}.jsonl"))
            } else if let Some(rest) = name.strip_prefix(&format!("{prev}-topic-")) {
                Some(format!("{next_id}-topic-{rest}"))
            } else {
                name.strip_suffix(&format!("_{prev}.jsonl"))
                    .map(|ts| format!("{ts}_{next_id}.jsonl"))
            };
            new_name.map(|n| p.with_file_name(n).to_string_lossy().into_owned())
        }
        _ => None,
    };
    let chosen = rewritten.or_else(|| file.map(str::to_string));
    resolver.resolve(Some(next_id), chosen.as_deref())
}

/// The user-selected model and auth-profile overrides that survive a reset
/// (`resolveResetPreservedSelection`), in the gateway's field order.
pub fn preserved_selection(current: Option<&Map<String, Value>>) -> Map<String, Value> {
    let mut out = Map::new();
    let Some(c) = current else { return out };
    let s = |k: &str| c.get(k).and_then(Value::as_str);
    let source = s("modelOverrideSource");
    let fallback_provenance = c.contains_key("modelOverrideFallbackOriginProvider")
        || c.contains_key("modelOverrideFallbackOriginModel");
    let user_model = source == Some("user") || (source.is_none() && !fallback_provenance);
    if user_model && s("modelOverride").is_some_and(|m| !m.is_empty()) {
        if let Some(p) = c.get("providerOverride") {
            out.insert("providerOverride".into(), p.clone());
        }
        out.insert("modelOverride".into(), c["modelOverride"].clone());
        out.insert("modelOverrideSource".into(), Value::from("user"));
    }
    if s("authProfileOverrideSource") == Some("user")
        && s("authProfileOverride").is_some_and(|a| !a.is_empty())
    {
        for k in [
            "authProfileOverride",
            "authProfileOverrideSource",
            "authProfileOverrideCompactionCount",
        ] {
            if let Some(v) = c.get(k) {
                out.insert(k.into(), v.clone());
            }
        }
    }
    out
}

/// Builds the entry `sessions.reset` writes: a new session with the carried-over fields
/// of §6.3, in the gateway's field order. `model` is the resolved (provider, model).
pub fn build_reset_entry(
    current: Option<&Map<String, Value>>,
    store_key: &str,
    next_id: &str,
    session_file: &Path,
    now_ms: i64,
    model: (Option<String>, Option<String>),
) -> Map<String, Value> {
    let get = |k: &str| current.and_then(|e| e.get(k)).cloned();
    let mut e = Map::new();
    let put = |e: &mut Map<String, Value>, k: &str, v: Option<Value>| {
        if let Some(v) = v {
            e.insert(k.to_string(), v);
        }
    };
    put(&mut e, "sessionId", Some(Value::from(next_id)));
    put(
        &mut e,
        "sessionFile",
        Some(Value::from(session_file.to_string_lossy().into_owned())),
    );
    put(&mut e, "updatedAt", Some(Value::from(now_ms)));
    put(&mut e, "systemSent", Some(Value::Bool(false)));
    put(&mut e, "abortedLastRun", Some(Value::Bool(false)));
    for k in [
        "thinkingLevel",
        "fastMode",
        "verboseLevel",
        "traceLevel",
        "reasoningLevel",
        "elevatedLevel",
        "ttsAuto",
        "execHost",
        "execSecurity",
        "execAsk",
        "execNode",
        "responseUsage",
        "pinnedAt",
    ] {
        put(&mut e, k, get(k));
    }
    // The user-selected model and auth profile survive a reset.
    for (k, v) in preserved_selection(current) {
        e.insert(k, v);
    }
    for k in [
        "groupActivation",
        "groupActivationNeedsSystemIntro",
        "chatType",
    ] {
        put(&mut e, k, get(k));
    }
    put(&mut e, "model", model.1.map(Value::from));
    put(&mut e, "modelProvider", model.0.map(Value::from));
    for k in [
        "compactionCount",
        "compactionCheckpoints",
        "sendPolicy",
        "queueMode",
        "queueDebounceMs",
        "queueCap",
        "queueDrop",
        "spawnedBy",
        "spawnedWorkspaceDir",
        "spawnedCwd",
        "parentSessionKey",
        "forkedFromParent",
        "spawnDepth",
        "subagentRole",
        "subagentControlScope",
        "label",
        "displayName",
        "channel",
        "groupId",
        "subject",
        "groupChannel",
        "space",
        "origin",
        "deliveryContext",
    ] {
        put(&mut e, k, get(k));
    }
    if is_subagent_key(store_key) {
        for k in ["cliSessionBindings", "cliSessionIds", "claudeCliSessionId"] {
            put(&mut e, k, get(k));
        }
    }
    for k in ["lastChannel", "lastTo", "lastAccountId", "lastThreadId"] {
        put(&mut e, k, get(k));
    }
    put(&mut e, "inputTokens", Some(Value::from(0)));
    put(&mut e, "outputTokens", Some(Value::from(0)));
    put(&mut e, "totalTokens", Some(Value::from(0)));
    put(&mut e, "totalTokensFresh", Some(Value::Bool(true)));
    e
}

/// Whether any entry other than `except_key` references `session_id`.
pub fn session_id_shared(store: &SessionStore, session_id: &str, except_key: &str) -> bool {
    store.entries().iter().any(|(k, v)| {
        k != except_key && v.get("sessionId").and_then(Value::as_str) == Some(session_id)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A store with legacy aliases, mixed case, shared sessionIds and tied updatedAt.
    fn alias_store(n: usize) -> SessionStore {
        let mut store = SessionStore::empty("/nonexistent/sessions.json");
        let entries = store.entries_mut();
        for i in 0..n {
            let key = match i % 7 {
                0 => format!("agent:main:direct:u{i}"),
                1 => format!("Agent:Main:Direct:U{}", i - 1),
                2 => format!("direct:u{}", i - 2),
                3 => "main".to_string(),
                4 => format!("agent:main:cron:j{}", i / 3),
                5 => format!("agent:work:group:g{}", i % 11),
                _ => format!("global{}", i % 5),
            };
            let updated = [json!(i % 4), json!(null), json!(-0.0), json!(3)][i % 4].clone();
            entries.insert(
                key,
                json!({"sessionId": format!("s{}", i % 13), "updatedAt": updated}),
            );
        }
        store
    }

    #[test]
    fn key_finder_agrees_with_find_entry() {
        let store = alias_store(300);
        let ctx = KeyContext::default();
        let mut finder = KeyFinder::new(&store, &ctx);
        let mut requests: Vec<String> = store.entries().keys().cloned().collect();
        requests.extend((0..300).map(|i| format!("direct:U{i}")));
        requests.extend((0..300).map(|i| format!(" AGENT:main:direct:u{i} ")));
        requests.extend((0..20).map(|i| format!("s{i}")));
        requests
            .extend(["main", "MAIN", "global1", "agent:main:main", "nope", ""].map(String::from));
        let mut how = Vec::new();
        for r in &requests {
            let a = find_entry(&store, r, &ctx);
            let b = finder.find(r);
            how.extend(a.as_ref().map(|m| format!("{:?}", m.matched_by)));
            assert_eq!(
                a.as_ref()
                    .map(|m| (&m.store_key, &m.canonical_key, &m.matched_by)),
                b.as_ref()
                    .map(|m| (&m.store_key, &m.canonical_key, &m.matched_by)),
                "{r:?}"
            );
        }
        for way in ["Key", "Alias", "SessionId"] {
            assert!(how.iter().any(|h| h == way), "no match by {way}");
        }
    }

    /// Issue 28: 3,764 keys took 53 s, each fallback a scan of the whole store. A batch
    /// examines each stored entry once, however many requests need the fallbacks.
    #[test]
    fn key_finder_examines_each_entry_once_per_batch() {
        let n = 5_000;
        let store = alias_store(n);
        let ctx = KeyContext::default();
        let mut finder = KeyFinder::new(&store, &ctx);
        for i in 0..2_000 {
            // Aliases, sessionIds and misses: every one needs the fallbacks.
            finder.find(&format!("direct:U{i}"));
            finder.find(&format!("s{}", i % 20));
            finder.find(&format!("missing{i}"));
        }
        assert_eq!(finder.entries_visited(), 2 * store.entries().len());
    }

    #[test]
    fn merge_patch_follows_rfc7386_and_keeps_order() {
        let mut t = json!({"a": 1, "b": {"c": 2, "d": 3}, "e": 4});
        merge_patch(
            &mut t,
            &json!({"b": {"c": null, "x": 5}, "a": 9, "e": null, "n": [1]}),
        );
        assert_eq!(
            crate::js::jsjson::to_string_compact(&t),
            r#"{"a":9,"b":{"d":3,"x":5},"n":[1]}"#
        );
    }

    /// Found by fuzzing: a patched `skillsSnapshot` without a string `prompt` was written,
    /// then deleted by the next load (ours and the gateway's).
    #[test]
    fn a_skills_snapshot_the_load_would_delete_is_refused() {
        let ok = json!({"sessionId": "abc", "skillsSnapshot": {"prompt": "p", "skills": []}});
        assert!(validate_patched_entry("k", &ok).is_ok());
        for snapshot in [
            json!({"x": "y"}),
            json!({"prompt": 5}),
            json!([1]),
            json!("s"),
        ] {
            let entry = json!({"sessionId": "abc", "skillsSnapshot": snapshot});
            assert!(
                validate_patched_entry("k", &entry).is_err(),
                "{entry} was accepted"
            );
        }
        // A falsy snapshot is kept as it is by the load.
        for snapshot in [json!(null), json!(""), json!(0), json!(false)] {
            let entry = json!({"sessionId": "abc", "skillsSnapshot": snapshot});
            assert!(validate_patched_entry("k", &entry).is_ok());
        }
    }

    #[test]
    fn headers_are_compact_with_newline() {
        let h = transcript_header("abc", 1_764_451_200_123, Path::new("/w"));
        assert_eq!(
            h,
            "{\"type\":\"session\",\"version\":3,\"id\":\"abc\",\"timestamp\":\"2025-11-29T21:20:00.123Z\",\"cwd\":\"/w\"}\n"
        );
    }

    #[test]
    fn reset_entry_carries_and_clears() {
        let cur = json!({"sessionId": "old", "updatedAt": 1, "thinkingLevel": "high", "totalTokens": 500,
            "compactionCount": 2, "goal": {"x": 1}, "sendPolicy": "deny", "cliSessionIds": {"a": "b"},
            "modelOverride": "m", "providerOverride": "p", "modelOverrideSource": "user", "label": "L"});
        let e = build_reset_entry(
            cur.as_object(),
            "agent:main:main",
            "new",
            Path::new("/s/new.jsonl"),
            5,
            (Some("openai".into()), Some("gpt".into())),
        );
        let keys: Vec<&str> = e.keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "sessionId",
                "sessionFile",
                "updatedAt",
                "systemSent",
                "abortedLastRun",
                "thinkingLevel",
                "providerOverride",
                "modelOverride",
                "modelOverrideSource",
                "model",
                "modelProvider",
                "compactionCount",
                "sendPolicy",
                "label",
                "inputTokens",
                "outputTokens",
                "totalTokens",
                "totalTokensFresh"
            ]
        );
        assert_eq!(e["totalTokens"], json!(0));
        assert!(e.get("goal").is_none() && e.get("cliSessionIds").is_none());
    }
}
