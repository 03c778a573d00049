//! The `claw-sessions` operations end to end: choose the store, refuse while a gateway
//! is live, take the store lock, load, mutate, save atomically, then archive.
//!
//! The binaries only parse arguments and print what these functions return.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

use foldhash::fast::FixedState;
use serde_json::{Map, Value};
use thiserror::Error;

use crate::exit::{self, ExitCode};
use crate::fs::data_file::{DataFileError, DataPath};
use crate::install::context::StateContext;
use crate::install::live_gateway::GatewayRunning;
use crate::install::targets::{StoreTarget, TargetError};
use crate::maintenance::store_pass::{PassMode, StoreFacts};
use crate::session::artifact::ArchiveReason;
use crate::session::session_key::{parse_agent_session_key, resolve_store_key};
use crate::store::entry_lookup::{show, target_for_key, LookupError};
use crate::store::lifecycle::{self, LifecycleError};
use crate::store::store_lock::{LockWait, StoreLock, StoreLockError};
use crate::store::transcript_path::TranscriptResolver;
use crate::store::{LoadOptions, SaveOutcome, SessionStore, StoreError};
use crate::transcript::write_lock::{AcquireOptions, WriteLock, WriteLockError, WriteLockSettings};

/// Why an operation failed; nothing was written unless the message says so.
#[derive(Debug, Error)]
pub enum OpsError {
    /// The store could not be read or written.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Another clawstate writer holds the store.
    #[error(transparent)]
    Lock(#[from] StoreLockError),
    /// A transcript is locked by a writer.
    #[error(transparent)]
    WriteLock(#[from] WriteLockError),
    /// The target options are wrong.
    #[error(transparent)]
    Targets(#[from] TargetError),
    /// Finding, patching, archiving failed.
    #[error(transparent)]
    Lifecycle(#[from] LifecycleError),
    /// An entry's transcript path cannot be used (a symlink on its way, not a regular
    /// file): never followed.
    #[error("session {key:?}: {source}")]
    Transcript {
        /// The entry.
        key: String,
        /// What is wrong with its path.
        source: DataFileError,
    },
    /// A live gateway owns this state directory.
    #[error(transparent)]
    LiveGateway(#[from] GatewayRunning),
    /// The store, or the entry in it, was not found.
    #[error(transparent)]
    Lookup(#[from] LookupError),
    /// An entry's transcript lies outside the state dir being worked on: never written.
    #[error("session {key:?}: {}", foreign.refusal())]
    ForeignTranscript {
        /// The entry.
        key: String,
        /// Where the transcript is, and its counterpart here.
        foreign: crate::store::transcript_path::ForeignTranscript,
    },
}

impl ExitCode for OpsError {
    fn exit_code(&self) -> i32 {
        match self {
            OpsError::Store(e) => e.exit_code(),
            OpsError::Lock(e) => e.exit_code(),
            OpsError::WriteLock(e) => e.exit_code(),
            OpsError::Targets(e) => e.exit_code(),
            OpsError::Lifecycle(e) => e.exit_code(),
            OpsError::Transcript { source, .. } => source.exit_code(),
            OpsError::LiveGateway(e) => e.exit_code(),
            OpsError::Lookup(e) => e.exit_code(),
            OpsError::ForeignTranscript { .. } => exit::DATA_ERR,
        }
    }
}

/// Options shared by every mutating operation.
#[derive(Debug, Clone, Copy, Default)]
pub struct WriteOptions {
    /// Compute and report, write nothing.
    pub dry_run: bool,
    /// How long to wait for another clawstate writer of the store (then exit 75).
    pub wait: LockWait,
}

/// Takes the store lock for a write (or nothing for a dry run).
fn lock_store(target: &StoreTarget, opts: WriteOptions) -> Result<Option<StoreLock>, OpsError> {
    if opts.dry_run {
        return Ok(None);
    }
    Ok(Some(StoreLock::acquire(&target.store_path, opts.wait)?))
}

/// What a patch did.
#[derive(Debug, Clone)]
pub struct PatchOutcome {
    /// The store written.
    pub target: StoreTarget,
    /// The entry key.
    pub key: String,
    /// The entry before.
    pub before: Map<String, Value>,
    /// The entry after.
    pub after: Map<String, Value>,
    /// Whether the file was written (false for dry runs and no-op patches).
    pub written: bool,
    /// A dry run: every entry the save would change (this one and those its
    /// normalisation rewrites or drops), as the file holds them against the save.
    pub changes: Vec<crate::store::save_diff::EntryDiff>,
}

/// `patch KEY`: applies a JSON merge patch to one entry under the store lock.
pub fn patch(
    ctx: &StateContext,
    request: &str,
    merge: &Value,
    opts: WriteOptions,
) -> Result<PatchOutcome, OpsError> {
    let mut batch = patch_many(ctx, &[request.to_string()], merge, opts)?;
    let store = batch.stores.swap_remove(0);
    let entry = batch.entries.swap_remove(0);
    Ok(PatchOutcome {
        target: store.target,
        key: entry.key,
        before: entry.before,
        after: entry.after,
        written: store.written,
        changes: store.changes,
    })
}

/// One store a batch patch wrote (or would write).
#[derive(Debug, Clone)]
pub struct PatchedStore {
    /// The store.
    pub target: StoreTarget,
    /// Whether the file was written (false for dry runs and no-op patches).
    pub written: bool,
    /// A dry run: every entry the save would change, as [`PatchOutcome::changes`].
    pub changes: Vec<crate::store::save_diff::EntryDiff>,
}

/// One entry a batch patch changed (or would change).
#[derive(Debug, Clone)]
pub struct PatchedEntry {
    /// The index of its store in [`PatchBatch::stores`].
    pub store: usize,
    /// The request as given.
    pub request: String,
    /// The entry key.
    pub key: String,
    /// The entry before.
    pub before: Map<String, Value>,
    /// The entry after.
    pub after: Map<String, Value>,
}

/// What `patch KEY…` did: the stores and one outcome per distinct entry, in request order.
#[derive(Debug, Clone)]
pub struct PatchBatch {
    /// The stores, in the order of their first key.
    pub stores: Vec<PatchedStore>,
    /// The entries, in request order (the first of duplicates counts).
    pub entries: Vec<PatchedEntry>,
    /// How many stored entries the key lookups examined (bounded work: at most twice the
    /// entries of the stores, however many keys).
    pub entries_examined: usize,
}

/// `patch KEY…`: applies the same JSON merge patch to several entries.
///
/// As [`delete`]: each key goes to its own store, every store of the batch is locked (in
/// path order), every key is resolved and every patched entry validated before anything
/// is written, then each store is written once. A missing key or an invalid result
/// writes nothing. `O(n + k)` per store of `n` entries for `k` keys.
pub fn patch_many(
    ctx: &StateContext,
    requests: &[String],
    merge: &Value,
    opts: WriteOptions,
) -> Result<PatchBatch, OpsError> {
    let (targets, of_request) = batch_targets(ctx, requests)?;
    if !opts.dry_run {
        ctx.check_live_gateway()?;
    }
    let _locks = lock_in_path_order(&targets, opts)?;
    let mut merge = merge.clone();
    lifecycle::expand_patch_shorthands(&mut merge);
    let key_ctx = ctx.key_context();
    let mut stores = Vec::with_capacity(targets.len());
    for t in &targets {
        stores.push(SessionStore::load(&t.store_path, LoadOptions::default())?);
    }
    // Every request resolves, and every patched entry is valid, before anything changes.
    let mut entries: Vec<(usize, PatchedEntry)> = Vec::new();
    let mut entries_examined = 0;
    for (si, store) in stores.iter().enumerate() {
        let mut finder = lifecycle::KeyFinder::new(store, &key_ctx);
        let mut seen: HashSet<String, FixedState> = Default::default();
        for (ri, r) in requests.iter().enumerate() {
            if of_request[ri] != si {
                continue;
            }
            let m = find_in(&mut finder, store.path(), r)?;
            let key = m.store_key;
            if !seen.insert(key.clone()) {
                continue;
            }
            let before = store.entry(&key).cloned().unwrap_or_default();
            let mut value = Value::Object(before.clone());
            lifecycle::merge_patch(&mut value, &merge);
            crate::js::jsjson::apply_js_key_order(&mut value);
            lifecycle::validate_patched_entry(&key, &value)?;
            let after = value.as_object().cloned().unwrap_or_default();
            entries.push((
                ri,
                PatchedEntry {
                    store: si,
                    request: r.clone(),
                    key,
                    before,
                    after,
                },
            ));
        }
        entries_examined += finder.entries_visited();
    }
    entries.sort_by_key(|e| e.0);
    let entries: Vec<PatchedEntry> = entries.into_iter().map(|e| e.1).collect();
    for e in &entries {
        stores[e.store].set_entry(&e.key, e.after.clone());
    }
    let mut out = Vec::with_capacity(targets.len());
    for (target, mut store) in targets.into_iter().zip(stores) {
        let mut written = false;
        let mut changes = Vec::new();
        if opts.dry_run {
            changes = store.save_diff()?;
        } else {
            written = store.save()? == SaveOutcome::Written;
        }
        out.push(PatchedStore {
            target,
            written,
            changes,
        });
    }
    Ok(PatchBatch {
        stores: out,
        entries,
        entries_examined,
    })
}

/// The stores of a batch of keys, in the order of their first key, and each key's store:
/// `--store`/`--agent` put every key in that one store, else each key goes to
/// [`target_for_key`]'s.
fn batch_targets(
    ctx: &StateContext,
    requests: &[String],
) -> Result<(Vec<StoreTarget>, Vec<usize>), OpsError> {
    let mut targets: Vec<StoreTarget> = Vec::new();
    let mut of_request: Vec<usize> = Vec::with_capacity(requests.len());
    let explicit = {
        let sel = &ctx.options.targets;
        (sel.store.is_some() || sel.agent.is_some()) && !sel.all_agents
    };
    let mut by_path: std::collections::HashMap<PathBuf, usize> = Default::default();
    for r in requests {
        let t = if explicit && !targets.is_empty() {
            targets[0].clone()
        } else {
            target_for_key(ctx, r)?
        };
        let next = targets.len();
        let i = *by_path.entry(t.store_path.clone()).or_insert(next);
        if i == next {
            targets.push(t);
        }
        of_request.push(i);
    }
    if targets.is_empty() {
        targets.push(target_for_key(ctx, "")?);
    }
    Ok((targets, of_request))
}

/// Takes the store lock of every target in path order, so two batches over the same
/// stores never wait on each other (none for dry runs).
fn lock_in_path_order(
    targets: &[StoreTarget],
    opts: WriteOptions,
) -> Result<Vec<Option<StoreLock>>, OpsError> {
    let mut lock_order: Vec<usize> = (0..targets.len()).collect();
    lock_order.sort_by(|&a, &b| targets[a].store_path.cmp(&targets[b].store_path));
    let mut locks = Vec::with_capacity(targets.len());
    for &i in &lock_order {
        locks.push(lock_store(&targets[i], opts)?);
    }
    Ok(locks)
}

/// What a reset did (or would do).
#[derive(Debug, Clone)]
pub struct ResetOutcome {
    /// The store written.
    pub target: StoreTarget,
    /// The entry key.
    pub key: String,
    /// The previous sessionId, if any.
    pub previous_session_id: Option<String>,
    /// The new entry.
    pub entry: Map<String, Value>,
    /// The new transcript.
    pub session_file: PathBuf,
    /// Transcripts archived as `.reset.<ts>` (from, to).
    pub archived: Vec<(PathBuf, PathBuf)>,
    /// Whether a fresh header was written.
    pub header_written: bool,
    /// Watcher cursors of the key deleted from the state database (`signals.md` §3.8), when it exists;
    /// `Err` says what was left and why (the reset stands; the command must not end 0).
    pub signal_cursors: Option<Result<usize, crate::signals::lifecycle::CleanupError>>,
}

fn lock_settings(ctx: &StateContext) -> WriteLockSettings {
    WriteLockSettings::resolve(&ctx.config.root, |k| ctx.env.var(k).map(str::to_string))
}

/// Takes the transcript write lock on every existing candidate, so no appender is
/// writing while files are archived.
fn lock_transcripts(
    ctx: &StateContext,
    files: &[DataPath],
) -> Result<Vec<crate::transcript::write_lock::WriteLockGuard>, OpsError> {
    let settings = lock_settings(ctx);
    let mut guards = Vec::new();
    for f in files.iter().filter(|f| f.is_file()) {
        guards.push(WriteLock::acquire(
            f.path(),
            &settings,
            AcquireOptions {
                allow_reentrant: false,
            },
        )?);
    }
    Ok(guards)
}

/// `reset KEY`: what the gateway's `sessions.reset` does on disk (`store.md` §6.3).
pub fn reset(
    ctx: &StateContext,
    request: &str,
    opts: WriteOptions,
) -> Result<ResetOutcome, OpsError> {
    let target = target_for_key(ctx, request)?;
    if !opts.dry_run {
        ctx.check_live_gateway()?;
    }
    let _lock = lock_store(&target, opts)?;
    let mut store = SessionStore::load(&target.store_path, LoadOptions::default())?;
    let key = match lifecycle::find_entry(&store, request, &ctx.key_context()) {
        Some(m) => m.store_key,
        None => resolve_store_key(request, &ctx.key_context()),
    };
    let current = store.entry(&key).cloned();
    let resolver = TranscriptResolver::for_target(ctx, &target);
    let next_id = uuid::Uuid::new_v4().to_string();
    let session_file = lifecycle::reset_session_file(current.as_ref(), &next_id, &resolver)
        .map_err(|e| LifecycleError::InvalidPatch {
            key: key.clone(),
            message: e.to_string(),
        })?;
    let agent_for_model = parse_agent_session_key(&key)
        .map(|k| k.agent_id)
        .unwrap_or_else(|| target.agent_id.clone());
    let selection = lifecycle::preserved_selection(current.as_ref());
    let model = crate::store::list_row::resolve_model_ref(
        &ctx.config.root,
        Some(&selection),
        &agent_for_model,
        true,
    );
    let entry = lifecycle::build_reset_entry(
        current.as_ref(),
        &key,
        &next_id,
        session_file.path(),
        ctx.now_ms,
        model,
    );
    let previous_session_id = current
        .as_ref()
        .and_then(|e| e.get("sessionId"))
        .and_then(Value::as_str)
        .map(str::to_string);
    let previous_file = current
        .as_ref()
        .and_then(|e| e.get("sessionFile"))
        .and_then(Value::as_str);
    // Never write (archive the old transcript, create the new one) outside the state dir;
    // a dry run says so too.
    let foreign = previous_session_id
        .as_deref()
        .and_then(|id| resolver.resolve(Some(id), previous_file).ok())
        .and_then(|p| resolver.foreign(&p))
        .or_else(|| resolver.foreign(&session_file));
    if let Some(foreign) = foreign {
        return Err(OpsError::ForeignTranscript { key, foreign });
    }
    let candidates = match &previous_session_id {
        Some(id) => resolver.candidates(id, previous_file, Some(&ctx.layout.legacy_sessions_dir())),
        None => Vec::new(),
    };
    let reuses_path = previous_file
        .is_some_and(|f| resolver.resolve(None, Some(f)).ok().as_ref() == Some(&session_file));
    if opts.dry_run {
        let archived =
            lifecycle::archive_transcripts(&candidates, ArchiveReason::Reset, || ctx.now_ms, true)?;
        let signal_cursors = crate::signals::lifecycle::on_session_reset(ctx, &key, true);
        return Ok(ResetOutcome {
            target,
            key,
            previous_session_id,
            header_written: reuses_path || !matches!(session_file.kind(), Ok(Some(_))),
            entry,
            session_file: session_file.path().to_path_buf(),
            archived,
            signal_cursors,
        });
    }
    // The new transcript's place must be usable before the store points at it.
    let unusable = |source| OpsError::Transcript {
        key: key.clone(),
        source,
    };
    session_file.check().map_err(unusable)?;
    let guards = lock_transcripts(ctx, &candidates)?;
    store.set_entry(&key, entry.clone());
    store.save()?;
    let cwd = ctx.env.cwd().to_path_buf();
    let header = lifecycle::transcript_header(&next_id, ctx.now_ms, &cwd);
    let write_header = || -> Result<bool, OpsError> {
        let (dir, name) = session_file.create_parent(0o700).map_err(unusable)?;
        dir.create_new(name, header.as_bytes(), 0o600)
            .map_err(|source| {
                OpsError::Lifecycle(LifecycleError::File {
                    path: session_file.path().to_path_buf(),
                    action: "cannot create transcript",
                    source,
                })
            })
    };
    let mut header_written = false;
    if !reuses_path {
        header_written = write_header()?;
    }
    // Named from the context's clock, so `--now` fixes the `.reset.<ts>` names too.
    let archived =
        lifecycle::archive_transcripts(&candidates, ArchiveReason::Reset, || ctx.now_ms, false)?;
    drop(guards);
    if reuses_path {
        header_written = write_header()?;
    }
    let signal_cursors = crate::signals::lifecycle::on_session_reset(ctx, &key, false);
    Ok(ResetOutcome {
        target,
        key,
        previous_session_id,
        entry,
        session_file: session_file.path().to_path_buf(),
        archived,
        header_written,
        signal_cursors,
    })
}

/// What deleting one entry did (or would do).
#[derive(Debug, Clone)]
pub struct DeleteOutcome {
    /// The request as given.
    pub request: String,
    /// The key removed.
    pub key: String,
    /// The removed entry's sessionId.
    pub session_id: Option<String>,
    /// Transcripts archived as `.deleted.<ts>` (from, to).
    pub archived: Vec<(PathBuf, PathBuf)>,
    /// Trajectory sidecars removed.
    pub removed_sidecars: Vec<PathBuf>,
    /// The index of its store in the stores [`delete`] returns.
    pub store: usize,
    /// Whether the transcript was kept because another entry shares the sessionId.
    pub transcript_shared: bool,
    /// The key's signal state forgotten in the state database (`signals.md` §3.8), when it exists;
    /// `Err` says what was left and why (the deletion stands; the command must not end 0).
    pub signal_state:
        Option<Result<crate::signals::journal::Forgotten, crate::signals::lifecycle::CleanupError>>,
}

/// `delete KEY…`: removes entries, archives their transcripts as `.deleted.<ts>` unless
/// another entry shares the sessionId, and removes their trajectory sidecars.
///
/// Each key goes to its own store ([`target_for_key`]); every store of the batch is locked
/// (in path order) and every key resolved before anything is changed, then each store is
/// written once. `O(n + k)` per store of `n` entries for `k` keys. Returns the stores (in
/// the order of their first key) and one outcome per distinct entry, in request order.
pub fn delete(
    ctx: &StateContext,
    requests: &[String],
    opts: WriteOptions,
) -> Result<(Vec<StoreTarget>, Vec<DeleteOutcome>), OpsError> {
    let (targets, of_request) = batch_targets(ctx, requests)?;
    if !opts.dry_run {
        ctx.check_live_gateway()?;
    }
    let _locks = lock_in_path_order(&targets, opts)?;
    // The stores as maintenance reads them: each entry's facts and its text as the save
    // pass writes it, without building the entries (a delete is a prune of these keys).
    let mut stores = Vec::with_capacity(targets.len());
    for t in &targets {
        let dir = t.store_path.parent().map(PathBuf::from).unwrap_or_default();
        stores.push(StoreFacts::read(&t.store_path, &dir, PassMode::Apply)?);
    }
    // Every request resolves before anything changes; the first of duplicates counts.
    let key_ctx = ctx.key_context();
    let mut picked: Vec<(usize, String, usize)> = Vec::new();
    let mut alive: Vec<Vec<bool>> = stores.iter().map(|s| vec![true; s.len()]).collect();
    for (si, store) in stores.iter().enumerate() {
        let facts = store.facts();
        let position: HashMap<&str, usize, FixedState> = facts
            .iter()
            .enumerate()
            .map(|(i, f)| (f.key.as_str(), i))
            .collect();
        let mut finder = lifecycle::KeyFinder::over(
            facts
                .iter()
                .map(|f| {
                    (
                        f.key.as_str(),
                        f.updated_at.unwrap_or(0.0),
                        f.session_id.as_deref(),
                    )
                })
                .collect(),
            &key_ctx,
        );
        for (ri, r) in requests.iter().enumerate() {
            if of_request[ri] != si {
                continue;
            }
            let m = find_in(&mut finder, store.path(), r)?;
            let Some(&i) = position.get(m.store_key.as_str()) else {
                continue;
            };
            if std::mem::replace(&mut alive[si][i], false) {
                picked.push((ri, r.clone(), i));
            }
        }
    }
    // Request order, as given.
    picked.sort_by_key(|p| p.0);
    let picked: Vec<(usize, String, usize)> = picked
        .into_iter()
        .map(|(ri, r, i)| (of_request[ri], r, i))
        .collect();
    // The transcripts stay where another entry left in the store shares the sessionId.
    let session_ids_left: Vec<HashSet<&str, FixedState>> = stores
        .iter()
        .zip(&alive)
        .map(|(s, alive)| {
            s.facts()
                .iter()
                .zip(alive)
                .filter(|(_, a)| **a)
                .filter_map(|(f, _)| f.session_id.as_deref())
                .collect()
        })
        .collect();
    let resolvers: Vec<TranscriptResolver> = targets
        .iter()
        .map(|t| TranscriptResolver::for_target(ctx, t))
        .collect();
    let mut plans = Vec::with_capacity(picked.len());
    for (si, request, i) in picked {
        let facts = &stores[si].facts()[i];
        let resolver = &resolvers[si];
        let key = facts.key.clone();
        let session_id = facts.session_id.clone();
        let shared = session_id
            .as_deref()
            .is_some_and(|id| session_ids_left[si].contains(id));
        let candidates: Vec<DataPath> = match (&session_id, shared) {
            (Some(id), false) => resolver
                .candidates(id, facts.session_file.as_deref(), None)
                .into_iter()
                .filter(|p| resolver.is_inside(p))
                .collect(),
            _ => Vec::new(),
        };
        plans.push((si, request, key, session_id, shared, candidates));
    }
    let all_candidates: Vec<DataPath> = plans.iter().flat_map(|p| p.5.iter().cloned()).collect();
    let guards = if opts.dry_run {
        Vec::new()
    } else {
        lock_transcripts(ctx, &all_candidates)?
    };
    if !opts.dry_run {
        for (store, alive) in stores.iter().zip(&alive) {
            store.save(alive)?;
        }
    }
    let agents: Vec<String> = plans
        .iter()
        .map(|p| {
            parse_agent_session_key(&p.2)
                .map(|k| crate::session::session_key::normalize_agent_id(&k.agent_id))
                .unwrap_or_else(|| targets[p.0].agent_id.clone())
        })
        .collect();
    let forgotten: Vec<(&str, &str)> = plans
        .iter()
        .zip(&agents)
        .map(|(p, a)| (p.2.as_str(), a.as_str()))
        .collect();
    let mut signal_states =
        crate::signals::lifecycle::on_sessions_deleted(ctx, &forgotten, opts.dry_run).into_iter();
    let mut out = Vec::new();
    for (si, request, key, session_id, shared, candidates) in plans {
        let resolver = &resolvers[si];
        let mut removed_sidecars = Vec::new();
        for c in &candidates {
            removed_sidecars.extend(lifecycle::remove_trajectory_sidecars(
                c,
                resolver,
                opts.dry_run,
            )?);
        }
        let clock = || {
            if opts.dry_run {
                ctx.now_ms
            } else {
                crate::js::clock::system_now_ms()
            }
        };
        let archived = lifecycle::archive_transcripts(
            &candidates,
            ArchiveReason::Deleted,
            clock,
            opts.dry_run,
        )?;
        out.push(DeleteOutcome {
            store: si,
            request,
            key,
            session_id,
            archived,
            removed_sidecars,
            transcript_shared: shared,
            signal_state: signal_states.next().flatten(),
        });
    }
    drop(guards);
    Ok((targets, out))
}

/// One `sessionFile` that `relocate` points (or would point) at this state dir.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Relocation {
    /// The entry.
    pub key: String,
    /// The `sessionFile` as it was (outside this state dir).
    pub from: String,
    /// The same file here, now the `sessionFile`.
    pub to: String,
}

/// A `sessionFile` outside this state dir that `relocate` left alone, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeftOutside {
    /// The entry.
    pub key: String,
    /// The `sessionFile`.
    pub session_file: String,
    /// Its counterpart here.
    pub here: PathBuf,
    /// Why it was not relocated (the counterpart is missing, a link, …).
    pub why: String,
}

/// What `relocate` did (or would do) to one store.
#[derive(Debug, Clone)]
pub struct RelocateOutcome {
    /// The store.
    pub target: StoreTarget,
    /// The entries pointed at this state dir.
    pub relocated: Vec<Relocation>,
    /// The entries left pointing outside it.
    pub left: Vec<LeftOutside>,
    /// Whether the store was written.
    pub written: bool,
}

/// `relocate`: after a state dir was moved or restored, every entry whose absolute
/// `sessionFile` still leads into the old place (the gateway follows it there: see
/// [`TranscriptResolver::foreign`]) is pointed at the same file under this state dir,
/// where that file exists as a regular file; the others are left and reported. One
/// atomic store write under the store lock per store, nothing else changed.
pub fn relocate(ctx: &StateContext, opts: WriteOptions) -> Result<Vec<RelocateOutcome>, OpsError> {
    if !opts.dry_run {
        ctx.check_live_gateway()?;
    }
    let mut out = Vec::new();
    for target in ctx.targets()? {
        let _lock = lock_store(&target, opts)?;
        let mut store = SessionStore::load(&target.store_path, LoadOptions::default())?;
        let resolver = TranscriptResolver::for_target(ctx, &target);
        let mut relocated = Vec::new();
        let mut left = Vec::new();
        for (key, entry) in store.entries() {
            let Some(file) = entry.get("sessionFile").and_then(Value::as_str) else {
                continue;
            };
            let id = entry.get("sessionId").and_then(Value::as_str);
            let Some(foreign) = resolver
                .resolve(id, Some(file))
                .ok()
                .and_then(|p| resolver.foreign(&p))
            else {
                continue;
            };
            let here = DataPath::given(&foreign.here);
            match here.check() {
                Ok(true) => relocated.push(Relocation {
                    key: key.clone(),
                    from: file.to_string(),
                    to: foreign.here.to_string_lossy().into_owned(),
                }),
                Ok(false) => left.push(LeftOutside {
                    key: key.clone(),
                    session_file: file.to_string(),
                    here: foreign.here,
                    why: "no such file here".into(),
                }),
                Err(e) => left.push(LeftOutside {
                    key: key.clone(),
                    session_file: file.to_string(),
                    here: foreign.here,
                    why: e.to_string(),
                }),
            }
        }
        let mut written = false;
        if !opts.dry_run && !relocated.is_empty() {
            for r in &relocated {
                if let Some(Value::Object(e)) = store.entries_mut().get_mut(&r.key) {
                    e.insert("sessionFile".into(), Value::String(r.to.clone()));
                }
            }
            written = store.save()? == SaveOutcome::Written;
        }
        out.push(RelocateOutcome {
            target,
            relocated,
            left,
            written,
        });
    }
    Ok(out)
}

/// The freshness of an entry under the config's reset policy.
#[derive(Debug, Clone)]
pub struct ResolveOutcome {
    /// The store.
    pub target: StoreTarget,
    /// The entry key.
    pub key: String,
    /// The entry.
    pub entry: Map<String, Value>,
    /// The policy applied.
    pub policy: crate::session::freshness::ResetPolicy,
    /// The verdict.
    pub freshness: crate::session::freshness::Freshness,
    /// Why the policy was not applied, when it was not: `cliSessionBinding` (the entry's
    /// provider owns a CLI session and no policy is configured: always fresh).
    pub exemption: Option<&'static str>,
}

/// The first line of a transcript as JSON (its header), if it parses (read up to 1 MiB).
pub fn read_header(path: &DataPath) -> Option<Value> {
    use std::io::{BufRead, Read};
    let f = path.open_read().ok()?.into_file();
    let mut line = String::new();
    std::io::BufReader::new(f)
        .take(1 << 20)
        .read_line(&mut line)
        .ok()?;
    crate::js::jsjson::parse_value(line.trim()).ok()
}

/// `resolve KEY`: freshness of the entry at `ctx.now_ms`.
pub fn resolve(ctx: &StateContext, request: &str) -> Result<ResolveOutcome, OpsError> {
    let shown = show(ctx, request)?;
    let key = shown.matched.store_key.clone();
    let reset_type = crate::session::freshness::reset_type_for_key(&key);
    let channel = crate::session::freshness::reset_channel_for_entry(&shown.entry);
    let policy =
        crate::session::freshness::resolve_reset_policy(ctx.config.session(), reset_type, channel);
    let session_id = shown
        .entry
        .get("sessionId")
        .and_then(Value::as_str)
        .unwrap_or("");
    let header_ts = shown
        .transcript
        .as_ref()
        .ok()
        .and_then(read_header)
        .and_then(|h| {
            crate::session::freshness::session_header_started_at_ms(&h, session_id, &chrono::Local)
        });
    // As the gateway: `skipImplicitExpiry ? { fresh: true } : evaluateSessionFreshness(…)`.
    let exemption = crate::session::freshness::cli_binding_exempt(&shown.entry, &policy)
        .then_some("cliSessionBinding");
    let freshness = match exemption {
        Some(_) => crate::session::freshness::Freshness {
            fresh: true,
            daily_reset_at: None,
            idle_expires_at: None,
            stale_reason: None,
        },
        None => crate::session::freshness::evaluate_freshness(
            &shown.entry,
            header_ts,
            &policy,
            ctx.now_ms,
            &chrono::Local,
        ),
    };
    Ok(ResolveOutcome {
        target: shown.target,
        key,
        entry: shown.entry,
        policy,
        freshness,
        exemption,
    })
}

/// The entry `request` names in the store at `store_path`, or `NotFound` (exit 3).
fn find_in(
    finder: &mut lifecycle::KeyFinder<'_>,
    store_path: &std::path::Path,
    request: &str,
) -> Result<lifecycle::EntryMatch, OpsError> {
    finder.find(request).ok_or_else(|| {
        OpsError::Lifecycle(LifecycleError::NotFound {
            store: store_path.to_path_buf(),
            key: request.to_string(),
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::session_list::tests::{context, store_text, Rng};

    /// A batch delete writes the store byte for byte as loading it whole, removing the
    /// keys one by one and saving does (the gateway's delete), on generated stores with
    /// canonical and other entries, odd values, dropped entries and aliases.
    #[test]
    fn batch_delete_writes_what_load_remove_save_writes() {
        let dir = tempfile::tempdir().unwrap();
        let ours = dir.path().join("a/sessions.json");
        let theirs = dir.path().join("b/sessions.json");
        std::fs::create_dir_all(ours.parent().unwrap()).unwrap();
        std::fs::create_dir_all(theirs.parent().unwrap()).unwrap();
        for seed in 1..=4u64 {
            let text = store_text(&mut Rng(seed.wrapping_mul(0x2545_F491_4F6C_DD1D)), 300);
            std::fs::write(&ours, &text).unwrap();
            std::fs::write(&theirs, &text).unwrap();
            let mut store = SessionStore::load(&theirs, LoadOptions::default()).unwrap();
            let keys: Vec<String> = store
                .entries()
                .keys()
                .enumerate()
                .filter(|(i, _)| i % 3 == 0)
                .map(|(_, k)| k.clone())
                .collect();
            for k in &keys {
                store.remove_entry(k);
            }
            store.save().unwrap();
            let ctx = context(dir.path(), &ours);
            let (_, out) = delete(&ctx, &keys, WriteOptions::default()).unwrap();
            assert_eq!(out.len(), keys.len());
            assert_eq!(
                std::fs::read_to_string(&ours).unwrap(),
                std::fs::read_to_string(&theirs).unwrap(),
                "seed {seed}"
            );
        }
    }

    /// Issue 28: a batch patch of 10k keys (aliases, so every one needs the lookups'
    /// fallbacks) from a 100k-entry store is one pass over the store, and one write.
    #[test]
    fn batch_patch_examines_each_entry_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sessions.json");
        let n = 100_000;
        let mut text = String::from("{");
        for i in 0..n {
            if i > 0 {
                text.push(',');
            }
            text.push_str(&format!(
                "\"agent:main:direct:u{i}\":{{\"sessionId\":\"s{i}\",\"updatedAt\":{i}}}"
            ));
        }
        text.push('}');
        std::fs::write(&path, &text).unwrap();
        let ctx = context(dir.path(), &path);
        // Upper-case keys and sessionIds: none is a stored key as given.
        let keys: Vec<String> = (0..10_000)
            .map(|i| {
                if i % 2 == 0 {
                    format!("AGENT:main:direct:U{}", i * 10)
                } else {
                    format!("s{}", i * 10)
                }
            })
            .collect();
        let patch = serde_json::json!({"label": "batch"});
        let b = patch_many(&ctx, &keys, &patch, WriteOptions::default()).unwrap();
        assert_eq!(b.entries.len(), keys.len());
        assert_eq!(b.stores.len(), 1);
        assert!(b.stores[0].written);
        assert_eq!(b.entries_examined, 2 * n);
        let store = SessionStore::load(&path, LoadOptions::default()).unwrap();
        let labelled = store
            .entries()
            .values()
            .filter(|v| v.get("label").and_then(Value::as_str) == Some("batch"))
            .count();
        assert_eq!(labelled, keys.len());
    }

    /// A batch patch writes what patching the keys one at a time writes.
    #[test]
    fn batch_patch_writes_what_one_key_at_a_time_writes() {
        let dir = tempfile::tempdir().unwrap();
        let ours = dir.path().join("a/sessions.json");
        let theirs = dir.path().join("b/sessions.json");
        std::fs::create_dir_all(ours.parent().unwrap()).unwrap();
        std::fs::create_dir_all(theirs.parent().unwrap()).unwrap();
        let merge = serde_json::json!({"label": "x", "thinkingLevel": null});
        let mut compared = 0;
        for seed in 1..=6u64 {
            let text = store_text(&mut Rng(seed.wrapping_mul(0x2545_F491_4F6C_DD1D)), 200);
            std::fs::write(&ours, &text).unwrap();
            std::fs::write(&theirs, &text).unwrap();
            let store = SessionStore::load(&theirs, LoadOptions::default()).unwrap();
            let keys: Vec<String> = store
                .entries()
                .keys()
                .enumerate()
                .filter(|(i, _)| i % 4 == 0)
                .map(|(_, k)| k.clone())
                .collect();
            drop(store);
            let one = context(dir.path(), &theirs);
            let mut singles = 0;
            for k in &keys {
                if patch(&one, k, &merge, WriteOptions::default()).is_ok() {
                    singles += 1;
                }
            }
            if singles != keys.len() {
                continue; // an entry the patch cannot validly change: covered elsewhere
            }
            let ctx = context(dir.path(), &ours);
            patch_many(&ctx, &keys, &merge, WriteOptions::default()).unwrap();
            assert_eq!(
                std::fs::read_to_string(&ours).unwrap(),
                std::fs::read_to_string(&theirs).unwrap(),
                "seed {seed}"
            );
            compared += 1;
        }
        assert!(
            compared > 0,
            "no generated store took the patch on every key"
        );
    }
}
