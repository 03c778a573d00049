//! Looking up one entry for a command: the store a key lives in (the key's own agent
//! unless `--store`/`--agent` chose one), the entry the key, an alias or a sessionId
//! names there, and where its transcript is, checked but never followed (a symlink on
//! its way, a FIFO in its place, a path outside the state dir are reported as such).
//!
//! `claw-sessions show` prints it; the session operations and a `SESSION` argument of
//! the transcript commands ([`crate::transcript::session`]) start from it.

use serde_json::{Map, Value};
use thiserror::Error;

use crate::exit::{self, ExitCode};
use crate::fs::data_file::DataPath;
use crate::install::context::StateContext;
use crate::install::targets::{store_path_for_agent, StoreTarget, TargetError};
use crate::session::session_key::{parse_agent_session_key, resolve_store_key};
use crate::store::lifecycle::{self, EntryMatch, LifecycleError};
use crate::store::transcript_path::TranscriptResolver;
use crate::store::{LoadOptions, SessionStore, StoreError};

/// Why an entry could not be looked up.
#[derive(Debug, Error)]
pub enum LookupError {
    /// The store could not be read.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The target options are wrong.
    #[error(transparent)]
    Targets(#[from] TargetError),
    /// No entry by that name.
    #[error(transparent)]
    Lifecycle(#[from] LifecycleError),
    /// The operation needs exactly one store.
    #[error("this command works on one store; use --agent or --store instead of --all-agents")]
    NeedsOneStore,
}

impl ExitCode for LookupError {
    fn exit_code(&self) -> i32 {
        match self {
            LookupError::Store(e) => e.exit_code(),
            LookupError::Targets(e) => e.exit_code(),
            LookupError::Lifecycle(e) => e.exit_code(),
            LookupError::NeedsOneStore => exit::USAGE,
        }
    }
}

/// The store a key lives in: `--store`/`--agent` when given, else the store of the key's
/// own agent when that agent is configured, else the default agent's.
pub fn target_for_key(ctx: &StateContext, request: &str) -> Result<StoreTarget, LookupError> {
    let sel = &ctx.options.targets;
    if sel.all_agents {
        return Err(LookupError::NeedsOneStore);
    }
    if sel.store.is_some() || sel.agent.is_some() {
        let mut t = ctx.targets()?;
        if t.len() != 1 {
            return Err(LookupError::NeedsOneStore);
        }
        return Ok(t.remove(0));
    }
    let canonical = resolve_store_key(request, &ctx.key_context());
    let agent = parse_agent_session_key(&canonical)
        .map(|k| k.agent_id)
        .filter(|a| ctx.config.all_agent_ids().contains(a))
        .unwrap_or_else(|| ctx.config.default_agent_id());
    Ok(StoreTarget {
        store_path: store_path_for_agent(&ctx.layout, &ctx.config, &ctx.env, &agent),
        agent_id: agent,
    })
}

/// The single store of the selection (refusing `--all-agents` with several stores).
pub fn single_target(ctx: &StateContext) -> Result<StoreTarget, LookupError> {
    let mut t = ctx.targets()?;
    if t.len() != 1 {
        return Err(LookupError::NeedsOneStore);
    }
    Ok(t.remove(0))
}

/// The entry `request` names in `store` (a key, an alias or a sessionId), or `NotFound`
/// (exit 3).
pub fn find(
    store: &SessionStore,
    ctx: &StateContext,
    request: &str,
) -> Result<EntryMatch, LifecycleError> {
    lifecycle::find_entry(store, request, &ctx.key_context()).ok_or_else(|| {
        LifecycleError::NotFound {
            store: store.path().to_path_buf(),
            key: request.to_string(),
        }
    })
}

/// One entry, with where its transcript is.
#[derive(Debug, Clone)]
pub struct ShownEntry {
    /// The store it came from.
    pub target: StoreTarget,
    /// How the request matched.
    pub matched: EntryMatch,
    /// The entry as loaded (normalised).
    pub entry: Map<String, Value>,
    /// The resolved transcript, or why it cannot be used (it escapes the sessions
    /// directory, passes through a symlink, is not a regular file).
    pub transcript: Result<DataPath, String>,
    /// Whether the transcript exists.
    pub transcript_exists: bool,
    /// Whether something is at the transcript's path that is never followed or read (a
    /// symlink on its way or in its place, a FIFO, a directory): `transcript` says what.
    pub transcript_refused: bool,
    /// When the transcript lies outside the state dir being worked on (an absolute
    /// `sessionFile` into a moved or restored state dir's old place): where, and its
    /// counterpart here.
    pub transcript_foreign: Option<crate::store::transcript_path::ForeignTranscript>,
    /// The agent database the entry and its transcript come from (the 2026.8+ layout);
    /// `transcript` is then a private decoded copy of its `transcript_events`.
    pub agent_db: Option<std::path::PathBuf>,
}

/// `show KEY`: the entry a key (or sessionId) resolves to.
pub fn show(ctx: &StateContext, request: &str) -> Result<ShownEntry, LookupError> {
    let target = target_for_key(ctx, request)?;
    let opts = LoadOptions {
        hydrate_prompts: false,
    };
    // On the database layout an exact key is one row: the rest is read only when the
    // request is an alias or a sessionId.
    let canonical = crate::session::session_key::resolve_store_key(request, &ctx.key_context());
    let exact = SessionStore::load_db_key(&target.store_path, &canonical, opts)?
        .filter(|s| s.entries().contains_key(&canonical));
    let store = match exact {
        Some(s) => s,
        None => SessionStore::load(&target.store_path, opts)?,
    };
    let matched = find(&store, ctx, request)?;
    let entry = store.entry(&matched.store_key).cloned().unwrap_or_default();
    if let Some(db_path) = crate::agent_db::layout::db_for_store(&target.store_path) {
        // The transcript is `transcript_events`: readers get a decoded copy from
        // `transcript::session`, made only when and as far as they need it.
        let db = crate::agent_db::AgentDb::open(&db_path).map_err(StoreError::from)?;
        let sid = entry.get("sessionId").and_then(Value::as_str).unwrap_or("");
        let exists = crate::agent_db::events::has_events(&db, sid).map_err(StoreError::from)?;
        let transcript = Err(format!(
            "{}: {} for session {sid:?}",
            db_path.display(),
            if exists {
                "transcript_events"
            } else {
                "no transcript_events"
            }
        ));
        return Ok(ShownEntry {
            target,
            matched,
            entry,
            transcript,
            transcript_exists: exists,
            transcript_refused: false,
            transcript_foreign: None,
            agent_db: Some(db_path),
        });
    }
    let resolver = TranscriptResolver::for_target(ctx, &target);
    let resolved = resolver
        .resolve(
            entry.get("sessionId").and_then(Value::as_str),
            entry.get("sessionFile").and_then(Value::as_str),
        )
        .map_err(|e| e.to_string());
    // A link on the way, a FIFO in its place: reported, never followed or read.
    let transcript_foreign = resolved.as_ref().ok().and_then(|p| resolver.foreign(p));
    let (transcript, transcript_exists, transcript_refused) = match resolved {
        Ok(p) => match p.check() {
            Ok(exists) => (Ok(p), exists, false),
            Err(e) => (Err(e.to_string()), false, true),
        },
        Err(e) => (Err(e), false, false),
    };
    Ok(ShownEntry {
        target,
        matched,
        entry,
        transcript,
        transcript_exists,
        transcript_refused,
        transcript_foreign,
        agent_db: None,
    })
}
