//! What a `SESSION` argument names: a session key (resolved through the store), a
//! sessionId, or a path to a `.jsonl` file. Ids and `sessionFile`s from the store go through
//! [`TranscriptResolver`](crate::store::transcript_path::TranscriptResolver), which refuses escapes.
//!
//! An argument is read as the `sessions_history` tool reads its `sessionKey`
//! (`transcript.md` §3.1): one that looks like a key (`main`, `global`, `agent:…`, `cron:…`,
//! …) is that key; anything else (a sessionId, a bare name) is first a key of the store,
//! then a sessionId looked up in every agent's store, configured or found on disk, with the
//! gateway's `sessions.resolve` rules for several matches. The key is then shown as the
//! tool shows it: `main` only for the main alias itself.

use std::path::PathBuf;

use serde_json::{Map, Value};
use thiserror::Error;

use crate::exit::{self, ExitCode};
use crate::fs::data_file::DataPath;
use crate::install::context::StateContext;
use crate::install::targets::{resolve_targets, StoreTarget, TargetSelection};
use crate::js;
use crate::session::session_key::{
    canonicalize_main_alias, is_acp_key, normalize_agent_id, normalize_main_key,
    normalize_session_key, parse_agent_session_key, resolve_store_key, KeyContext,
};
use crate::store::entry_lookup::{self, LookupError, ShownEntry};
use crate::store::lifecycle::MatchedBy;
use crate::store::transcript_path::{
    is_valid_transcript_id, ForeignTranscript, TranscriptResolver,
};
use crate::store::{LoadOptions, SessionStore};

pub use crate::agent_db::events::CopyScope;

/// A `SESSION` argument that cannot be resolved.
#[derive(Debug, Error)]
pub enum SessionError {
    /// No entry and no transcript by that name.
    #[error("no session or transcript {0:?} (give a session key, a sessionId or a path to a .jsonl file)")]
    NotFound(String),
    /// The entry's transcript path is unusable (escapes the sessions directory, passes
    /// through a symlink, is not a regular file, bad id).
    #[error("session {key:?}: {message}")]
    BadPath {
        /// The store key.
        key: String,
        /// Why.
        message: String,
    },
    /// The transcript lies outside the state dir being worked on: read there (as the
    /// gateway does), never written.
    #[error("session {key:?}: {}", foreign.refusal())]
    Foreign {
        /// The store key.
        key: String,
        /// Where the transcript is, and its counterpart here.
        foreign: ForeignTranscript,
    },
    /// A sessionId that several sessions have (`sessions.resolve`'s message).
    #[error("Multiple sessions found for sessionId: {id} ({keys}); give the session key")]
    Ambiguous {
        /// The sessionId.
        id: String,
        /// The keys, comma-separated.
        keys: String,
    },
    /// The session's agent is not configured any more (its store was found on disk).
    #[error("session {key:?}: Agent \"{agent}\" no longer exists in configuration (give the transcript's path to read it)")]
    DeletedAgent {
        /// The session key.
        key: String,
        /// The agent id.
        agent: String,
    },
    /// The store or its options failed.
    #[error(transparent)]
    Lookup(#[from] LookupError),
    /// The agent database refused or failed.
    #[error(transparent)]
    AgentDb(crate::agent_db::AgentDbError),
}

impl ExitCode for SessionError {
    fn exit_code(&self) -> i32 {
        match self {
            SessionError::NotFound(_) | SessionError::DeletedAgent { .. } => exit::NOT_FOUND,
            SessionError::Ambiguous { .. } => exit::USAGE,
            SessionError::BadPath { .. } | SessionError::Foreign { .. } => exit::DATA_ERR,
            SessionError::Lookup(e) => e.exit_code(),
            SessionError::AgentDb(e) => e.exit_code(),
        }
    }
}

/// A resolved `SESSION`.
#[derive(Debug, Clone)]
pub struct SessionRef {
    /// The transcript file (it may not exist yet), as shown to the user.
    pub path: PathBuf,
    /// The transcript file as it is opened: below its directory, never through a link.
    pub file: DataPath,
    /// The store key, when resolved through the store.
    pub key: Option<String>,
    /// The store the key lives in.
    pub target: Option<StoreTarget>,
    /// The entry.
    pub entry: Option<Map<String, Value>>,
    /// The session id (entry's, or the file name's).
    pub session_id: Option<String>,
    /// The key as `sessions_history` shows it (`main` only when the argument was the main
    /// alias; the path as given for a file).
    pub display_key: String,
    /// When the transcript lies outside the state dir being worked on: where, and its
    /// counterpart here (reads say so; [`SessionRef::for_writing`] refuses).
    pub foreign: Option<ForeignTranscript>,
    /// The agent database the session comes from (2026.8+ layout): `file` is then a
    /// private decoded copy of its events, and writes are refused.
    pub agent_db: Option<PathBuf>,
}

impl SessionRef {
    /// The session, for a command that writes its transcript: refused (exit 65, naming
    /// both paths) when the transcript lies outside the state dir being worked on, where
    /// a write would change a file this state dir's gateway may not even read.
    pub fn for_writing(self) -> Result<SessionRef, SessionError> {
        if let Some(db) = &self.agent_db {
            return Err(SessionError::AgentDb(
                crate::agent_db::AgentDbError::WriteRefused {
                    path: db.clone(),
                    what: "a write of the transcript".into(),
                },
            ));
        }
        match &self.foreign {
            Some(f) => Err(SessionError::Foreign {
                key: self.key.clone().unwrap_or_else(|| self.display_key.clone()),
                foreign: f.clone(),
            }),
            None => Ok(self),
        }
    }

    /// The warning a read of a transcript outside the state dir prints, if any.
    pub fn foreign_warning(&self) -> Option<String> {
        self.foreign.as_ref().map(|f| {
            format!(
                "session {:?}: reading {}, outside this state dir, as the gateway does (its counterpart here: {}; see `claw-sessions relocate`)",
                self.key.as_deref().unwrap_or(&self.display_key),
                f.file.display(),
                f.here.display()
            )
        })
    }
}

fn looks_like_path(arg: &str) -> bool {
    arg.contains('/') || arg.ends_with(".jsonl") || arg.starts_with('.')
}

/// Resolves `arg` against the state directory of `ctx`.
pub fn resolve(ctx: &StateContext, arg: &str) -> Result<SessionRef, SessionError> {
    resolve_scoped(ctx, arg, CopyScope::Whole)
}

/// [`resolve`] for a reader that needs only `scope` of a transcript kept in the agent
/// database (a bounded tail read copies only the end).
pub fn resolve_scoped(
    ctx: &StateContext,
    arg: &str,
    scope: CopyScope,
) -> Result<SessionRef, SessionError> {
    if looks_like_path(arg) {
        let path = crate::install::paths::absolutize(std::path::Path::new(arg), ctx.env.cwd());
        // A path typed by the user is followed as given, once (like `cat` would), and must
        // be a regular file: a FIFO or a device is never read.
        let file = DataPath::given(&path);
        file.check().map_err(|e| SessionError::BadPath {
            key: arg.to_string(),
            message: e.to_string(),
        })?;
        let session_id = path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_suffix(".jsonl"))
            .filter(|s| is_valid_transcript_id(s))
            .map(String::from);
        return Ok(SessionRef {
            path,
            file,
            key: None,
            target: None,
            entry: None,
            session_id,
            display_key: arg.to_string(),
            foreign: None,
            agent_db: None,
        });
    }
    let kc = ctx.key_context();
    let raw = js::trim(arg);
    let sel = &ctx.options.targets;
    let chosen_store = sel.store.is_some() || sel.agent.is_some() || sel.all_agents;
    let id_like = should_resolve_session_id_input(raw);
    let shown = match entry_lookup::show(ctx, arg) {
        // A sessionId matched in one store is looked up in all of them, as the gateway does.
        Ok(shown)
            if id_like && !chosen_store && shown.matched.matched_by == MatchedBy::SessionId =>
        {
            None
        }
        Ok(shown) => Some(shown),
        Err(e) if e.exit_code() == exit::NOT_FOUND => None,
        Err(e) => return Err(e.into()),
    };
    if let Some(shown) = shown {
        let resolved = if !id_like {
            internal_key(raw, &kc)
        } else if shown.matched.matched_by == MatchedBy::SessionId {
            stored_key_for_agent_store(&shown.matched.store_key, &shown.target.agent_id, &kc)
        } else {
            shown.matched.canonical_key.clone()
        };
        return session_ref(shown, display_key(&resolved, &kc), scope);
    }
    if id_like && !chosen_store {
        if let Some(key) = find_by_session_id(ctx, raw)? {
            return match entry_lookup::show(ctx, &key) {
                Ok(shown) => session_ref(shown, display_key(&key, &kc), scope),
                Err(e) if e.exit_code() == exit::NOT_FOUND => {
                    Err(SessionError::NotFound(arg.to_string()))
                }
                Err(e) => Err(e.into()),
            };
        }
    }
    // No entry: a transcript file of that id in the stores' directories.
    let id = raw;
    if is_valid_transcript_id(id) {
        let targets = if chosen_store {
            ctx.targets().map_err(LookupError::from)?
        } else {
            session_id_targets(ctx)?
        };
        for target in targets {
            let resolver = TranscriptResolver::for_target(ctx, &target);
            if let Ok(p) = resolver.default_path(id) {
                let found = p.check().map_err(|e| SessionError::BadPath {
                    key: id.to_string(),
                    message: e.to_string(),
                })?;
                if found {
                    return Ok(SessionRef {
                        path: p.path().to_path_buf(),
                        file: p,
                        key: None,
                        target: Some(target),
                        entry: None,
                        session_id: Some(id.to_string()),
                        display_key: id.to_string(),
                        foreign: None,
                        agent_db: None,
                    });
                }
            }
        }
    }
    Err(SessionError::NotFound(arg.to_string()))
}

/// The [`SessionRef`] of an entry the store resolved.
fn session_ref(
    shown: ShownEntry,
    display_key: String,
    scope: CopyScope,
) -> Result<SessionRef, SessionError> {
    let key = shown.matched.store_key.clone();
    let file = match &shown.agent_db {
        Some(db_path) => {
            let sid = shown
                .entry
                .get("sessionId")
                .and_then(Value::as_str)
                .unwrap_or("");
            let db = crate::agent_db::AgentDb::open(db_path).map_err(SessionError::AgentDb)?;
            crate::agent_db::events::materialize_scoped(&db, sid, scope)
                .map_err(SessionError::AgentDb)?
                .ok_or_else(|| SessionError::NotFound(format!("{}#{sid}", db_path.display())))?
        }
        None => shown.transcript.map_err(|message| SessionError::BadPath {
            key: key.clone(),
            message,
        })?,
    };
    let session_id = shown
        .entry
        .get("sessionId")
        .and_then(Value::as_str)
        .map(String::from);
    // A copy decoded from the agent DB is named by the database and the session.
    let path = match (&shown.agent_db, &session_id) {
        (Some(db), Some(sid)) => PathBuf::from(format!("{}#{sid}", db.display())),
        _ => file.path().to_path_buf(),
    };
    Ok(SessionRef {
        path,
        file,
        key: Some(key),
        target: Some(shown.target),
        entry: Some(shown.entry),
        session_id,
        display_key,
        foreign: shown.transcript_foreign,
        agent_db: shown.agent_db,
    })
}

/// `looksLikeSessionKey`: the literal aliases, ACP keys, and the key prefixes and
/// markers the tool recognises.
fn looks_like_session_key(raw: &str) -> bool {
    if raw.is_empty() {
        return false;
    }
    matches!(raw, "main" | "global" | "unknown" | "current")
        || is_acp_key(raw)
        || ["agent:", "cron:", "hook:", "node-", "node:"]
            .iter()
            .any(|p| raw.starts_with(p))
        || raw.contains(":group:")
        || raw.contains(":channel:")
}

/// `looksLikeSessionId`: a UUID, any case.
fn looks_like_session_id(raw: &str) -> bool {
    let b = raw.as_bytes();
    b.len() == 36
        && b.iter().enumerate().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => *c == b'-',
            _ => c.is_ascii_hexdigit(),
        })
}

/// `shouldResolveSessionIdInput`: what the tool asks `sessions.resolve` about.
fn should_resolve_session_id_input(raw: &str) -> bool {
    looks_like_session_id(raw) || !looks_like_session_key(raw)
}

/// The main alias: `global` under global scope, else the main key.
fn main_alias(kc: &KeyContext) -> String {
    if kc.scope_global {
        "global".to_string()
    } else {
        normalize_main_key(&kc.main_key)
    }
}

/// `resolveInternalSessionKey`: a key-like argument as the tool uses it (`main` is the alias).
fn internal_key(raw: &str, kc: &KeyContext) -> String {
    if raw == "main" {
        main_alias(kc)
    } else {
        raw.to_string()
    }
}

/// `resolveDisplaySessionKey`: `main` for the alias and the main key, else the key.
fn display_key(key: &str, kc: &KeyContext) -> String {
    if key == main_alias(kc) || key == normalize_main_key(&kc.main_key) {
        "main".to_string()
    } else {
        key.to_string()
    }
}

/// `resolveStoredSessionKeyForAgentStore`: the canonical key of `key` as stored in
/// `agent`'s store (bare keys are that agent's; the legacy `agent:main:main` alias moves to
/// the default agent only in the default agent's store).
fn stored_key_for_agent_store(key: &str, agent: &str, kc: &KeyContext) -> String {
    let raw = js::trim(key);
    if raw.is_empty() {
        return String::new();
    }
    let lowered = raw.to_lowercase();
    if lowered == "global" || lowered == "unknown" {
        return lowered;
    }
    let key = if parse_agent_session_key(raw).is_some() {
        raw.to_string()
    } else {
        let n = normalize_session_key(raw);
        if n.starts_with("agent:") {
            n
        } else {
            format!("agent:{}:{n}", normalize_agent_id(agent))
        }
    };
    if let Some(p) = parse_agent_session_key(&key) {
        let has_main = kc
            .configured_agents
            .iter()
            .any(|a| normalize_agent_id(a) == "main");
        let other_store = normalize_agent_id(agent) != normalize_agent_id(&kc.default_agent_id);
        if normalize_agent_id(&p.agent_id) == "main" && !has_main && other_store {
            return canonicalize_main_alias(&normalize_session_key(&key), "main", kc);
        }
    }
    resolve_store_key(&key, kc)
}

/// The stores a sessionId is looked up in (`loadCombinedSessionStoreForGateway`): the
/// single `session.store` when it names one file; else every configured agent's store and
/// every `<agents>/<dir>/sessions/sessions.json` found on disk (a regular file, not a link,
/// inside the agents directory), de-duplicated by path.
fn session_id_targets(ctx: &StateContext) -> Result<Vec<StoreTarget>, SessionError> {
    let all = TargetSelection {
        all_agents: true,
        ..TargetSelection::default()
    };
    let configured =
        resolve_targets(&ctx.layout, &ctx.config, &ctx.env, &all).map_err(LookupError::from)?;
    if ctx
        .config
        .store_template()
        .is_some_and(|t| !t.trim().is_empty() && !t.contains("{agentId}"))
    {
        return Ok(configured.into_iter().take(1).collect());
    }
    let mut roots: Vec<PathBuf> = Vec::new();
    let agents_dir_of = |store: &std::path::Path| -> Option<PathBuf> {
        let sessions = store.parent()?;
        let agents = sessions.parent()?.parent()?;
        (store.file_name()? == "sessions.json"
            && sessions.file_name()? == "sessions"
            && agents.file_name()? == "agents")
            .then(|| agents.to_path_buf())
    };
    for t in &configured {
        if let Some(r) = agents_dir_of(&t.store_path) {
            if !roots.contains(&r) {
                roots.push(r);
            }
        }
    }
    let state_agents = ctx.layout.state_dir.join("agents");
    if !roots.contains(&state_agents) {
        roots.push(state_agents);
    }
    let inside = |store: &std::path::Path, root: &std::path::Path| -> bool {
        let regular = std::fs::symlink_metadata(store).is_ok_and(|m| m.file_type().is_file());
        let (Ok(real), Ok(real_root)) = (store.canonicalize(), root.canonicalize()) else {
            return false;
        };
        regular && real.starts_with(real_root)
    };
    let mut out: Vec<StoreTarget> = Vec::new();
    for t in configured {
        let keep = match agents_dir_of(&t.store_path) {
            Some(root) => inside(&t.store_path, &root),
            None => true,
        };
        if keep && !out.iter().any(|o| o.store_path == t.store_path) {
            out.push(t);
        }
    }
    for root in roots {
        let Ok(dirs) = std::fs::read_dir(&root) else {
            continue;
        };
        let mut names: Vec<String> = dirs
            .flatten()
            .filter(|d| d.file_type().is_ok_and(|t| t.is_dir()))
            .filter_map(|d| d.file_name().into_string().ok())
            .collect();
        names.sort();
        for name in names {
            let agent_id = normalize_agent_id(&name);
            if agent_id == "main" && name.to_lowercase() != "main" {
                continue;
            }
            let store = root.join(&name).join("sessions").join("sessions.json");
            if inside(&store, &root) && !out.iter().any(|o| o.store_path == store) {
                out.push(StoreTarget {
                    agent_id,
                    store_path: store,
                });
            }
        }
    }
    Ok(out)
}

/// One candidate of a sessionId lookup: (canonical key, updatedAt, entry).
type Candidate = (String, f64, Map<String, Value>);

/// `sessions.resolve {sessionId}`: the key of the one visible session whose sessionId (or
/// key) is `id`, across [`session_id_targets`]; `None` when there is none.
fn find_by_session_id(ctx: &StateContext, id: &str) -> Result<Option<String>, SessionError> {
    let kc = ctx.key_context();
    let updated = |e: &Map<String, Value>| e.get("updatedAt").and_then(Value::as_f64);
    // The combined store: canonical key → the fresher entry (`mergeSessionEntryIntoCombined`).
    let mut combined: Map<String, Value> = Map::new();
    for target in session_id_targets(ctx)? {
        let store = SessionStore::load(
            &target.store_path,
            LoadOptions {
                hydrate_prompts: false,
            },
        )
        .map_err(LookupError::from)?;
        for (key, entry) in store.entries() {
            let Some(entry) = entry.as_object() else {
                continue;
            };
            let canonical = stored_key_for_agent_store(key, &target.agent_id, &kc);
            let keep_existing = combined
                .get(&canonical)
                .and_then(Value::as_object)
                .is_some_and(|old| updated(old).unwrap_or(0.0) > updated(entry).unwrap_or(0.0));
            if !keep_existing {
                combined.insert(canonical, Value::Object(entry.clone()));
            }
        }
    }
    let matches: Vec<Candidate> = combined
        .into_iter()
        .filter_map(|(k, v)| match v {
            Value::Object(e) => Some((k, e)),
            _ => None,
        })
        .filter(|(k, e)| visible_for_session_id_lookup(k, e))
        .filter(|(k, e)| e.get("sessionId").and_then(Value::as_str) == Some(id) || k == id)
        .map(|(k, e)| {
            let u = updated(&e).unwrap_or(0.0);
            (k, u, e)
        })
        .collect();
    let key = match select_session_id_match(&matches, id) {
        Selection::None => return Ok(None),
        Selection::Ambiguous(keys) => {
            return Err(SessionError::Ambiguous {
                id: id.to_string(),
                keys: keys.join(", "),
            })
        }
        Selection::Selected(k) => k,
    };
    // `validateSessionAgentExists`: a session of an agent no longer configured.
    if let Some(p) = parse_agent_session_key(&key) {
        let agent = normalize_agent_id(&p.agent_id);
        let entry = matches.iter().find(|m| m.0 == key).map(|m| &m.2);
        let acp_kept = is_acp_key(&key)
            && !p.rest.starts_with("acp:binding:")
            && entry.is_some_and(|e| e.get("acp").is_some_and(Value::is_object));
        if !ctx.config.agent_ids().contains(&agent) && !acp_kept {
            return Err(SessionError::DeletedAgent { key, agent });
        }
    }
    Ok(Some(key))
}

/// `filterSessionEntries` as `sessions.resolve` calls it for a sessionId (global and
/// unknown included): no cron run, no phantom `agent:<id>:sessions` row, not archived.
fn visible_for_session_id_lookup(key: &str, entry: &Map<String, Value>) -> bool {
    let parsed = parse_agent_session_key(key);
    let cron_run = parsed.as_ref().is_some_and(|p| {
        let mut parts = p.rest.splitn(4, ':');
        parts.next() == Some("cron")
            && parts.next().is_some_and(|j| !j.is_empty())
            && parts.next() == Some("run")
            && parts
                .next()
                .is_some_and(|r| !r.is_empty() && !r.starts_with(':'))
    });
    let phantom = parsed.as_ref().is_some_and(|p| p.rest == "sessions")
        && entry
            .get("sessionId")
            .and_then(Value::as_str)
            .is_none_or(|s| js::trim(s).is_empty())
        && entry.get("updatedAt").is_none_or(Value::is_null);
    !cron_run && !phantom && entry.get("archivedAt").is_none()
}

/// What `resolveSessionIdMatchSelection` chose.
#[derive(Debug, PartialEq)]
enum Selection {
    None,
    Selected(String),
    Ambiguous(Vec<String>),
}

/// `resolveSessionIdMatchSelection`: alias keys of one session collapse to the freshest
/// (canonical first, then by key); one left wins; else the freshest of the keys that end in
/// the id, if strictly fresher; else the freshest of all, if strictly fresher; else
/// ambiguous.
fn select_session_id_match(matches: &[Candidate], id: &str) -> Selection {
    if matches.is_empty() {
        return Selection::None;
    }
    let sid = id.to_lowercase();
    struct M<'a> {
        key: &'a str,
        updated: f64,
        lower: String,
        canonical: bool,
        structural: bool,
    }
    let mut groups: Vec<(String, Vec<M>)> = Vec::new();
    for (key, updated, _) in matches {
        let lower = key.to_lowercase();
        let request = parse_agent_session_key(key)
            .map(|p| p.rest)
            .unwrap_or_else(|| js::trim(key).to_string())
            .to_lowercase();
        let structural = lower.ends_with(&format!(":{sid}"))
            || request == sid
            || request.ends_with(&format!(":{sid}"));
        let m = M {
            key,
            updated: *updated,
            canonical: *key == lower,
            lower,
            structural,
        };
        match groups.iter_mut().find(|g| g.0 == request) {
            Some(g) => g.1.push(m),
            None => groups.push((request, vec![m])),
        }
    }
    let collapsed: Vec<M> = groups
        .into_iter()
        .filter_map(|(_, mut g)| {
            g.sort_by(|a, b| {
                b.updated
                    .total_cmp(&a.updated)
                    .then(b.canonical.cmp(&a.canonical))
                    .then(a.lower.cmp(&b.lower))
            });
            g.into_iter().next()
        })
        .collect();
    if collapsed.len() == 1 {
        return Selection::Selected(collapsed[0].key.to_string());
    }
    let freshest = |ms: &[&M]| -> Option<String> {
        if ms.len() == 1 {
            return Some(ms[0].key.to_string());
        }
        let mut sorted: Vec<&&M> = ms.iter().collect();
        sorted.sort_by(|a, b| b.updated.total_cmp(&a.updated));
        let first = sorted.first()?;
        let second = sorted.get(1).map_or(0.0, |s| s.updated);
        (first.updated > second).then(|| first.key.to_string())
    };
    let structural: Vec<&M> = collapsed.iter().filter(|m| m.structural).collect();
    if let Some(k) = freshest(&structural) {
        return Selection::Selected(k);
    }
    if structural.len() > 1 {
        return Selection::Ambiguous(structural.iter().map(|m| m.key.to_string()).collect());
    }
    let all: Vec<&M> = collapsed.iter().collect();
    if let Some(k) = freshest(&all) {
        return Selection::Selected(k);
    }
    Selection::Ambiguous(collapsed.iter().map(|m| m.key.to_string()).collect())
}
