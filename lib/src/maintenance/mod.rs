//! Session-store maintenance: `openclaw sessions cleanup`, exactly, and safe for cron
//! (`store.md` §4).
//!
//! One module per concept: [`config`] (settings), [`paths`] (the gateway's path
//! resolution), [`files`] (scans and safe file changes), [`rules`] (entry rules),
//! [`missing`] (`--fix-missing`), [`archive`] (archiving, trajectories, retention),
//! [`disk_budget`], [`artifacts`] (unreferenced files) and [`report`] (JSON and text).
//! This module runs them in the gateway's order, as a preview ([`preview_store`]) or for
//! real ([`apply_store`]), under the store lock.
//!
//! Deliberate differences from the gateway (spec README): a malformed store is an error
//! and never replaced; the store lock is held for the whole run; every write is fsync'd;
//! nothing outside the sessions directory is deleted or renamed, and symlinks are never
//! followed out of it (such files are reported in the events instead); the temp file of a
//! store or journal write whose process is gone is removed at once, uncounted, where the
//! gateway waits until it is five minutes old (`artifacts::dead_writer_temps`).

pub mod archive;
pub mod artifacts;
mod at_once;
pub mod config;
pub use crate::store::deciding_fields;
pub mod dir_snapshot;
pub mod disk_budget;
pub mod files;
pub mod halves;
pub mod journal;
pub mod lifecycle_mutation;
pub mod missing;
pub mod paths;
pub mod plan_rows;
pub mod planned_archive;
pub mod removal_journal;
pub mod report;
pub mod rules;
pub mod store_pass;

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;

use crate::fs::atomic_file::AtomicWriteError;

use foldhash::fast::FixedState;
use thiserror::Error;

use crate::exit::{self, ExitCode};
use crate::install::context::StateContext;
use crate::install::targets::{StoreTarget, TargetError};
use crate::session::artifact::ArchiveReason;
use crate::session::session_key::preserve_set;
use crate::store::store_lock::{LockWait, StoreLock, StoreLockError};
use crate::store::{SaveOutcome, StoreError};

use archive::{
    archive_batch, archive_dirs, make_file_changes, plan_archives, plan_retention,
    plan_trajectories, PlannedFileChanges, PlannedTrajectories, RemovedSessions, RetentionRule,
};
use artifacts::{plan_unreferenced, prune_unreferenced, PathSet, PruneParams, UnreferencedReport};
use at_once::at_once;
use config::{MaintenanceConfig, MaintenanceMode};
use dir_snapshot::DirSnapshot;
use disk_budget::{enforce_disk_budget, BudgetMode, BudgetParams};
use files::{DirGuard, DirOverlay, FileEvent, RenamesUnderway};
use paths::SessionPaths;
use plan_rows::{EntryChange, FileAction, FileChange, FileRule};
use planned_archive::PlannedArchive;
use report::{Action, ActionRow, StoreSummary};
use rules::WorkingSet;
use store_pass::{BlobWrites, PassMode, PreparedSave, StoreFacts};

/// Why a cleanup could not run; stores already finished stay finished.
#[derive(Debug, Error)]
pub enum CleanupError {
    /// A store could not be read (malformed: exit 65) or written (exit 73).
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The pending-archive journal could not be written (nothing was changed).
    #[error("cannot record the planned archive renames: {0}")]
    Journal(#[source] AtomicWriteError),
    /// A pending-archive journal left in the sessions directory cannot be trusted
    /// (nothing was changed).
    #[error(transparent)]
    PendingJournal(#[from] journal::JournalError),
    /// A store lock could not be taken (another clawstate writer held it too long).
    #[error(transparent)]
    Lock(#[from] StoreLockError),
    /// The target options are wrong.
    #[error(transparent)]
    Targets(#[from] TargetError),
    /// A live gateway owns the state directory.
    #[error("the OpenClaw gateway is running ({owner}) and owns {state_dir}; stop it first, or pass --offline (or --store) to clean up offline anyway")]
    LiveGateway {
        /// The running gateway.
        owner: crate::install::live_gateway::GatewayOwner,
        /// The state directory.
        state_dir: PathBuf,
    },
}

impl ExitCode for CleanupError {
    fn exit_code(&self) -> i32 {
        match self {
            CleanupError::Store(e) => e.exit_code(),
            CleanupError::Journal(e) => e.exit_code(),
            CleanupError::PendingJournal(e) => e.exit_code(),
            CleanupError::Lock(e) => e.exit_code(),
            CleanupError::Targets(e) => e.exit_code(),
            CleanupError::LiveGateway { .. } => exit::TEMP_FAIL,
        }
    }
}

/// The options of `cleanup`.
#[derive(Debug, Clone, Default)]
pub struct CleanupOptions {
    /// Preview only.
    pub dry_run: bool,
    /// Enforce even when `session.maintenance.mode` is `warn`.
    pub enforce: bool,
    /// `--fix-missing`.
    pub fix_missing: bool,
    /// `--fix-dm-scope`.
    pub fix_dm_scope: bool,
    /// `--active-key`: never pruned, capped, evicted or retired.
    pub active_key: Option<String>,
    /// How long to wait for another clawstate writer of a store (then exit 75).
    pub wait: LockWait,
    /// Build the per-key action rows (for text output).
    pub want_rows: bool,
    /// Build the plan as rows ([`plan_rows`]: what a preview would do, what a run did;
    /// implies `want_rows`).
    pub want_plan: bool,
}

/// The result for one store.
#[derive(Debug, Clone)]
pub struct StoreOutcome {
    /// The store.
    pub target: StoreTarget,
    /// The summary the gateway would print.
    pub summary: StoreSummary,
    /// Per-key actions (when asked for), in store order.
    pub rows: Vec<ActionRow>,
    /// Every file renamed or removed (or left alone on purpose), in order.
    pub events: Vec<FileEvent>,
    /// Whether the store file was rewritten.
    pub store_written: bool,
    /// Archives deleted by retention (not part of the gateway's summary).
    pub retention_removed: u64,
    /// With `want_plan`: the entries removed or repaired, in store order.
    pub entry_changes: Vec<EntryChange>,
    /// With `want_plan`: the files archived or removed, in the gateway's order.
    pub file_changes: Vec<FileChange>,
}

impl StoreOutcome {
    /// Whether the run changed anything on disk for this store.
    pub fn changed(&self) -> bool {
        self.store_written || !self.events.is_empty()
    }
}

/// The whole run.
#[derive(Debug, Clone)]
pub struct CleanupRun {
    /// `enforce` with `--enforce`, else the configured mode.
    pub mode: MaintenanceMode,
    /// Whether this was a preview.
    pub dry_run: bool,
    /// One outcome per target, in target order.
    pub stores: Vec<StoreOutcome>,
    /// Warnings for stderr (e.g. writing next to a live gateway with `--store`).
    pub warnings: Vec<String>,
}

impl CleanupRun {
    /// The `--json` document, byte for byte the gateway's.
    pub fn to_json(&self) -> String {
        let s: Vec<&StoreSummary> = self.stores.iter().map(|o| &o.summary).collect();
        report::cleanup_json(&s, self.mode, self.dry_run)
    }
}

/// Runs `cleanup` on the selected stores.
pub fn run_cleanup(ctx: &StateContext, opts: &CleanupOptions) -> Result<CleanupRun, CleanupError> {
    let targets = ctx.targets()?;
    let maintenance = MaintenanceConfig::from_config(&ctx.config);
    let mode = if opts.enforce {
        MaintenanceMode::Enforce
    } else {
        maintenance.mode
    };
    let mut run = CleanupRun {
        mode,
        dry_run: opts.dry_run,
        stores: Vec::with_capacity(targets.len()),
        warnings: Vec::new(),
    };
    if !opts.dry_run {
        if let Some(owner) = ctx.live_gateway() {
            if !ctx.writes_offline() {
                return Err(CleanupError::LiveGateway {
                    owner,
                    state_dir: ctx.layout.state_dir.clone(),
                });
            }
            run.warnings.push(format!(
                "the OpenClaw gateway (pid {}) is running; cleaning {} offline anyway ({}): the gateway may overwrite this change",
                owner.pid,
                ctx.options.targets.store.as_deref().unwrap_or("the store"),
                if ctx.explicit_store() { "--store" } else { "--offline" }
            ));
        }
    }
    // Locks are kept until the end, so the whole run is one step for other writers.
    let mut locks: Vec<StoreLock> = Vec::new();
    for target in &targets {
        let outcome = if opts.dry_run {
            preview_store(ctx, target, &maintenance, mode, opts)?
        } else {
            locks.push(StoreLock::acquire(&target.store_path, opts.wait)?);
            apply_store(ctx, target, &maintenance, mode, opts)?
        };
        run.stores.push(outcome);
    }
    drop(locks);
    Ok(run)
}

fn session_paths(ctx: &StateContext, target: &StoreTarget) -> SessionPaths {
    SessionPaths::new(
        &target.store_path,
        &ctx.layout.state_dir,
        Some(&ctx.layout.legacy_sessions_dir()),
        ctx.env.cwd(),
    )
}

/// Reads the store with `read` while a second thread lists the sessions directory; the
/// listing is then the one `paths` uses. Neither depends on the other, and nothing changes
/// the directory before the steps that look at it.
///
/// When the disk budget will need every file's size ([`wants_sizes`]), the files are
/// stat-ed too by the listing thread, unless `stats_later`: enforce then starts them
/// itself ([`DirSnapshot::stat_files_in_background`]) once its renames are under way,
/// off the road to them. It needs no size before its renames, each source's stat is
/// fetched before it is renamed (and the store's before it is replaced), and the budget
/// fetches those not yet fetched before any other file changes.
fn read_store_and_dir<T>(
    paths: &mut SessionPaths,
    maintenance: &MaintenanceConfig,
    stats_later: bool,
    read: impl FnOnce() -> T,
) -> T {
    let real_dir = paths.real_dir().to_path_buf();
    let stat_files = wants_sizes(maintenance) && !stats_later;
    let list = move |dir: PathBuf| {
        let snapshot = Arc::new(DirSnapshot::read(&dir));
        if stat_files {
            snapshot.stat_files();
        }
        snapshot
    };
    let (value, snapshot) = at_once(read, move || list(real_dir));
    paths.set_snapshot(snapshot);
    value
}

/// Whether the disk budget will need the size of every file in the directory.
fn wants_sizes(maintenance: &MaintenanceConfig) -> bool {
    maintenance.max_disk_bytes.is_some() && maintenance.high_water_bytes.is_some()
}

/// Which rule removed each entry (by position).
#[derive(Debug, Default)]
struct Removals {
    missing: Vec<usize>,
    dm_scope: Vec<usize>,
    model_run: Vec<usize>,
    stale: Vec<usize>,
    capped: Vec<usize>,
    budget: Vec<usize>,
    repaired: Vec<usize>,
}

impl Removals {
    /// Model-run probes under cap pressure, then stale entries, then the cap (the
    /// gateway's order), recorded per step.
    fn prune_and_cap(
        &mut self,
        ws: &mut WorkingSet,
        now: i64,
        maintenance: &MaintenanceConfig,
        preserve: &HashSet<String>,
    ) {
        if ws.len() as u64 > maintenance.max_entries {
            self.model_run =
                rules::prune_model_runs(ws, now, maintenance.model_run_prune_after_ms, preserve);
        }
        self.stale = rules::prune_stale(ws, now, maintenance.prune_after_ms, preserve);
        self.capped = rules::cap_entries(ws, maintenance.max_entries, preserve);
    }

    fn action_rows(&self, store: &StoreFacts, ws: &WorkingSet) -> Vec<ActionRow> {
        let mut actions: HashMap<usize, Action> = HashMap::new();
        // The first label wins: the gateway checks in this priority order.
        for (set, action) in [
            (&self.dm_scope, Action::RetireDmScope),
            (&self.missing, Action::PruneMissing),
            (&self.model_run, Action::PruneModelRun),
            (&self.stale, Action::PruneStale),
            (&self.capped, Action::CapOverflow),
            (&self.budget, Action::EvictBudget),
            (&self.repaired, Action::RepairSessionFile),
        ] {
            for &i in set {
                actions.entry(i).or_insert(action);
            }
        }
        (0..store.len())
            .map(|i| {
                let f = ws.entry(i);
                let repaired = f.repaired.then_some(f.session_file.as_deref()).flatten();
                ActionRow {
                    key: store.key(i).to_string(),
                    action: actions.get(&i).copied().unwrap_or(Action::Keep),
                    entry: store.entry(i, repaired),
                }
            })
            .collect()
    }
}

/// Applies the `--fix-missing` repairs to the working set.
fn apply_repairs(
    ws: &mut WorkingSet,
    store: &mut StoreFacts,
    repairs: &[(usize, String)],
    mode: PassMode,
) {
    for (i, file) in repairs {
        if let Some(f) = store.repair(*i, file, mode) {
            ws.set_entry(*i, f);
        }
    }
}

/// The preview of one store (`previewStoreCleanup`): nothing is written.
pub fn preview_store(
    ctx: &StateContext,
    target: &StoreTarget,
    maintenance: &MaintenanceConfig,
    mode: MaintenanceMode,
    opts: &CleanupOptions,
) -> Result<StoreOutcome, CleanupError> {
    let mut paths = session_paths(ctx, target);
    let paths_dir = &paths.sessions_dir().to_path_buf();
    let pass = PassMode::Preview {
        chunks: maintenance.max_disk_bytes.is_some(),
    };
    let store = read_store_and_dir(&mut paths, maintenance, false, || {
        StoreFacts::read(&target.store_path, paths_dir, pass)
    });
    let mut store = store?;
    let mut guard = DirGuard::new(paths.real_dir());
    let before_count = store.len();
    let mut ws = WorkingSet::new(store.take_facts());
    // What the entries looked like before any repair (their files are excluded below).
    let originals: HashMap<usize, Option<String>> = HashMap::new();
    let preserve = preserve_set(opts.active_key.iter());
    let active = opts.active_key.as_deref();
    let now = ctx.now_ms;
    let mut r = Removals::default();
    let mut originals = originals;
    if opts.fix_missing {
        let m = missing::fix_missing(&mut ws, &paths);
        r.missing = m.removed;
        r.repaired = m.repaired.iter().map(|(i, _)| *i).collect();
        for &(i, _) in &m.repaired {
            originals.insert(i, ws.entry(i).session_file.clone());
        }
        apply_repairs(&mut ws, &mut store, &m.repaired, pass);
    }
    if opts.fix_dm_scope {
        r.dm_scope =
            rules::retire_dm_scope(&mut ws, ctx.config.dm_scope(), &target.agent_id, active);
    }
    r.prune_and_cap(&mut ws, now, maintenance, &preserve);
    // The removed entries' files and the live entries' files, one set on each core:
    // neither changes the entries, and the budget and the pruner need both.
    let removed_files = || {
        let removed = r.model_run.len() + r.stale.len() + r.capped.len() + r.dm_scope.len();
        let mut exclude = PathSet::with_capacity(paths.real_dir(), removed * 3);
        for &i in r
            .model_run
            .iter()
            .chain(&r.stale)
            .chain(&r.capped)
            .chain(&r.dm_scope)
        {
            let f = ws.entry(i);
            let file = match originals.get(&i) {
                Some(before) => before.as_deref(),
                None => f.session_file.as_deref(),
            };
            artifacts::add_entry_artifacts(&mut exclude, &paths, f.session_id.as_deref(), file);
        }
        exclude
    };
    let (referenced, mut exclude) =
        at_once(|| artifacts::referenced_paths(&ws, &paths), removed_files);
    let budget = enforce_disk_budget(
        &mut ws,
        &paths,
        &mut guard,
        &BudgetParams {
            store_path: &target.store_path,
            maintenance,
            active_key: active,
            preserve: &preserve,
            now_ms: now,
            mode: BudgetMode::DryRun,
            view: None,
            referenced: Some(&referenced),
        },
    );
    r.budget = budget.evicted.clone();
    exclude.extend(budget.removed_paths.iter().cloned());
    let (unreferenced, unreferenced_files) = artifacts::simulate_unreferenced(
        &ws,
        &paths,
        &mut guard,
        &PruneParams {
            store_path: &target.store_path,
            older_than_ms: maintenance.prune_after_ms,
            now_ms: now,
            exclude: &exclude,
            dry_run: true,
            // Nothing changed on disk: without evictions, the live entries' set is still right.
            referenced: Some(&referenced).filter(|_| budget.evicted.is_empty()),
        },
    );
    r.repaired.retain(|&i| ws.is_alive(i));
    let mut summary = StoreSummary::new(target, mode, true);
    summary.before_count = before_count as u64;
    summary.after_count = ws.len() as u64;
    summary.repaired = r.repaired.len() as u64;
    summary.missing = r.missing.len() as u64;
    summary.dm_scope_retired = r.dm_scope.len() as u64;
    summary.model_run_pruned = r.model_run.len() as u64;
    summary.pruned = r.stale.len() as u64;
    summary.capped = r.capped.len() as u64;
    summary.unreferenced = unreferenced;
    summary.disk_budget = budget.report;
    summary.would_mutate = summary.compute_would_mutate();
    let rows = if opts.want_rows || opts.want_plan {
        r.action_rows(&store, &ws)
    } else {
        Vec::new()
    };
    let (entry_changes, file_changes) = if opts.want_plan {
        let files = preview_file_changes(
            ctx,
            &r,
            &ws,
            &paths,
            maintenance,
            &budget.removed_paths,
            unreferenced_files,
        );
        let entries = plan_rows::entry_changes(&rows, &files, &paths, maintenance, now);
        (entries, files)
    } else {
        (Vec::new(), Vec::new())
    };
    free_in_background((store, ws, paths, exclude, budget, referenced));
    Ok(StoreOutcome {
        target: target.clone(),
        summary,
        rows,
        events: guard.events,
        store_written: false,
        retention_removed: 0,
        entry_changes,
        file_changes,
    })
}

/// The files a preview's run would archive and remove, in the gateway's order: the
/// removed entries' transcripts and trajectory sidecars, expired archives, the disk
/// budget's and the unreferenced pass's removals. Planned on the listing as
/// [`apply_store`] plans them; nothing is touched.
fn preview_file_changes(
    ctx: &StateContext,
    r: &Removals,
    ws: &WorkingSet,
    paths: &SessionPaths,
    maintenance: &MaintenanceConfig,
    budget_removed: &[PathBuf],
    unreferenced: Vec<(PathBuf, u64)>,
) -> Vec<FileChange> {
    let now = ctx.now_ms;
    let mut removed = RemovedSessions::default();
    for &i in r
        .model_run
        .iter()
        .chain(&r.stale)
        .chain(&r.capped)
        .chain(&r.dm_scope)
    {
        removed.remember(ws.entry(i));
    }
    let referenced = live_session_ids(ws);
    let mut overlay = DirOverlay::over(Arc::clone(paths.snapshot()));
    let (archives, _) = plan_archives(&removed, &referenced, paths, &mut overlay, &|| now, false);
    // Files it would leave alone are the run's warnings, not the plan's.
    let mut scratch = DirGuard::new(paths.real_dir());
    let trajectories = if removed.is_empty() {
        PlannedTrajectories::default()
    } else {
        plan_trajectories(
            &removed,
            &referenced,
            paths,
            &mut scratch,
            &mut overlay,
            ctx.env.cwd(),
        )
    };
    let archived_dirs = archive_dirs(&archives);
    let expired = if !archived_dirs.is_empty() || maintenance.reset_archive_retention_ms.is_some() {
        let dirs = if archived_dirs.is_empty() {
            vec![paths.sessions_dir().to_path_buf()]
        } else {
            archived_dirs
        };
        let mut rules = vec![RetentionRule {
            reason: ArchiveReason::Deleted,
            older_than_ms: maintenance.prune_after_ms,
        }];
        if let Some(ms) = maintenance.reset_archive_retention_ms {
            rules.push(RetentionRule {
                reason: ArchiveReason::Reset,
                older_than_ms: ms,
            });
        }
        plan_retention(&dirs, &rules, now, &mut overlay, Some(paths.snapshot()))
    } else {
        Vec::new()
    };
    let removal = |p: &PathBuf, rule: FileRule| FileChange {
        path: p.clone(),
        action: FileAction::Remove,
        rule,
        bytes: plan_rows::file_size(paths, p),
        to: None,
    };
    let mut out: Vec<FileChange> = archives
        .iter()
        .map(|a| FileChange {
            path: a.from.clone(),
            action: FileAction::Archive,
            rule: FileRule::RemovedEntry,
            bytes: plan_rows::file_size(paths, &a.from),
            to: Some(a.to.clone()),
        })
        .collect();
    out.extend(
        trajectories
            .paths
            .iter()
            .map(|p| removal(p, FileRule::Trajectory)),
    );
    out.extend(
        expired
            .iter()
            .map(|p| removal(p, FileRule::ArchiveRetention)),
    );
    out.extend(
        budget_removed
            .iter()
            .map(|p| removal(p, FileRule::DiskBudget)),
    );
    out.extend(unreferenced.into_iter().map(|(path, bytes)| FileChange {
        path,
        action: FileAction::Remove,
        rule: FileRule::Unreferenced,
        bytes: Some(bytes),
        to: None,
    }));
    out
}

/// Frees `value` on a thread of its own: a run's large structures (the store's text,
/// the facts of 100k entries, a directory listing) take a while to free, and the caller
/// need not wait for that. Without a thread to be had, frees it here.
fn free_in_background<T: Send + 'static>(value: T) {
    // A failed spawn drops the closure, and the value with it, here.
    let _ = std::thread::Builder::new().spawn(move || drop(value));
}

fn live_session_ids(ws: &WorkingSet) -> HashSet<&str, FixedState> {
    ws.iter()
        .filter_map(|(_, f)| f.session_id.as_deref())
        .collect()
}

/// Applies maintenance to one store (`applySessionEntryLifecycleMutation` with forced
/// maintenance); the caller holds the store lock.
///
/// Everything is decided on the working set and on the directory as the gateway's steps
/// would leave it (archiving, trajectory removal, archive retention, disk budget). The
/// planned archive renames are recorded in the journal ([`journal`]) and the store is
/// written before any file is renamed or removed; files change in the gateway's order.
/// A failed store write thus changes nothing, and an interrupted run leaves a store that
/// references no archived or removed file (the next run finishes the journal's renames).
/// The gateway renames and removes before it writes the store (deliberate difference).
///
/// On enforce, the store without the pruned and capped entries is written as soon as their
/// archives are planned, and the renames run while the rest is planned; if the disk budget
/// then removes entries, the store is written again before their files are removed. A
/// run interrupted between the two writes leaves the first store, a valid one the next
/// run goes on from.
pub fn apply_store(
    ctx: &StateContext,
    target: &StoreTarget,
    maintenance: &MaintenanceConfig,
    mode: MaintenanceMode,
    opts: &CleanupOptions,
) -> Result<StoreOutcome, CleanupError> {
    let mut paths = session_paths(ctx, target);
    let journal = journal::journal_path(&target.store_path);
    let removal_journal = removal_journal::removal_journal_path(&target.store_path);
    // A journal left by an interrupted run (nothing else writes them under the store lock).
    let pending_journal = journal.exists() || removal_journal.exists();
    // Listed with the store read (without a journal to finish first), the directory's
    // sizes are left for later (`stats_later`), when the budget needs them.
    let sizes_later = !pending_journal && wants_sizes(maintenance);
    let mut store = if pending_journal {
        // The journal's renames come first: the directory is listed after them.
        StoreFacts::read(&target.store_path, paths.sessions_dir(), PassMode::Apply)?
    } else {
        let dir = paths.sessions_dir().to_path_buf();
        read_store_and_dir(&mut paths, maintenance, true, || {
            StoreFacts::read(&target.store_path, &dir, PassMode::Apply)
        })?
    };
    // Enforce fetches them once its renames are under way (below).
    if sizes_later && mode != MaintenanceMode::Enforce {
        paths.snapshot().stat_files_in_background();
    }
    let mut guard = DirGuard::new(paths.real_dir());
    let preserve = preserve_set(opts.active_key.iter());
    let active = opts.active_key.as_deref();
    let now = ctx.now_ms;
    let fixed = ctx.fixed_clock;
    let clock = move || {
        if fixed {
            now
        } else {
            crate::js::clock::system_now_ms()
        }
    };
    let mut r = Removals::default();
    let mut dm_removed = RemovedSessions::default();
    let mut summary = StoreSummary::new(target, mode, false);
    let mut ws = WorkingSet::new(store.take_facts());

    // Finish the renames of a run interrupted after its store write.
    if pending_journal {
        let live = live_session_ids(&ws);
        let referenced = artifacts::referenced_paths(&ws, &paths);
        journal::recover_journal(
            &journal,
            paths.sessions_dir(),
            &live,
            &referenced,
            &mut guard,
        )?;
        let has_key = |k: &str| ws.iter().any(|(_, f)| f.key == k);
        removal_journal::recover_removal_journal(
            &removal_journal,
            paths.sessions_dir(),
            has_key,
            &referenced,
            &mut guard,
        )?;
        // The recovered renames changed the directory: list it again.
        paths.forget_snapshot();
    }

    // Decide everything on the working set, then write the store once. The removals and
    // repairs are decided as the gateway's apply path decides them, then carried out as
    // its lifecycle mutation does: by trimmed key, on entries still as planned.
    let mut planned = lifecycle_mutation::Planned::default();
    if opts.fix_missing {
        let m = missing::fix_missing(&mut ws, &paths);
        planned.missing = m.removed;
        planned.repairs = m.repaired;
    }
    if opts.fix_dm_scope {
        planned.dm_scope =
            rules::retire_dm_scope(&mut ws, ctx.config.dm_scope(), &target.agent_id, active);
    }
    let settled = lifecycle_mutation::settle(&mut ws, &mut store, planned);
    r.missing = settled.missing;
    r.dm_scope = settled.dm_scope;
    r.repaired = settled.repaired;
    for &i in &settled.dm_removed {
        if ws.entry(i).session_id.is_some() {
            dm_removed.remember(ws.entry(i));
        }
    }
    summary.before_count = ws.len() as u64;
    let budget_mode = match mode {
        MaintenanceMode::Warn => BudgetMode::WarnOnly,
        MaintenanceMode::Enforce => BudgetMode::Plan,
    };
    // The temp files of this store's writes killed earlier, removed once the report is
    // made (see `artifacts::dead_writer_temps`).
    let dead_temps: Vec<PathBuf> = if mode == MaintenanceMode::Enforce {
        let snap = paths.snapshot();
        let names = (0..snap.len()).map(|i| snap.name(i));
        let temps: Vec<PathBuf> = artifacts::dead_writer_temps(names, &target.store_path)
            .into_iter()
            .map(|n| paths.real_dir().join(n))
            .collect();
        if !temps.is_empty() && ctx.live_gateway().is_some() {
            Vec::new()
        } else {
            temps
        }
    } else {
        Vec::new()
    };
    let mut overlay = DirOverlay::over(Arc::clone(paths.snapshot()));
    let mut archives: Arc<Vec<PlannedArchive>> = Arc::default();
    let mut trajectories = PlannedTrajectories::default();
    let mut expired: Vec<PathBuf> = Vec::new();
    if mode == MaintenanceMode::Enforce {
        r.prune_and_cap(&mut ws, now, maintenance, &preserve);
    }
    // Only the disk budget removes entries from here on. The store's new text is written
    // to its temp file meanwhile, on a second thread. When archives are planned (and no
    // retired DM session is archived after the budget), the store is written as soon as
    // they are, and the renames start while the rest is planned: that store references
    // none of them. If the budget then removes entries, the store is written again.
    let alive_before_budget = ws.alive().to_vec();
    let facts = &store;
    let mut early: Option<(RenamesUnderway, SaveOutcome, Option<BlobWrites<'_>>)> = None;
    let planned = std::thread::scope(|s| -> Result<_, CleanupError> {
        let mut early_save = std::thread::Builder::new()
            .spawn_scoped(s, || facts.prepare_save(&alive_before_budget))
            .ok();
        let mut early_prepared = None;
        let join = |h: std::thread::ScopedJoinHandle<'_, _>| {
            h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))
        };
        if mode == MaintenanceMode::Enforce {
            // The sessions removed, and those still referenced: one on each thread.
            let (removed, referenced) = at_once(
                || {
                    let removed_by = [&r.model_run, &r.stale, &r.capped];
                    let n = removed_by.iter().map(|v| v.len()).sum();
                    let mut removed = RemovedSessions::with_capacity(n);
                    for &i in removed_by.into_iter().flatten() {
                        removed.remember(ws.entry(i));
                    }
                    removed
                },
                || live_session_ids(&ws),
            );
            let (planned, mut journal_text) =
                plan_archives(&removed, &referenced, &paths, &mut overlay, &clock, true);
            archives = Arc::new(planned);
            // The removed sessions' trajectory sidecars are planned before the journal is
            // written, which lists them: a run killed before they are all gone leaves
            // them to the next run (no entry names them any more).
            if !removed.is_empty() {
                trajectories = plan_trajectories(
                    &removed,
                    &referenced,
                    &paths,
                    &mut guard,
                    &mut overlay,
                    ctx.env.cwd(),
                );
            }
            if let Some(text) = journal_text.as_mut() {
                text.set_removals(&trajectories.journal_entries());
            }
            if !archives.is_empty() && dm_removed.is_empty() {
                let prepared = match early_save.take() {
                    Some(h) => join(h),
                    None => facts.prepare_save(&alive_before_budget),
                };
                if !prepared.as_ref().is_ok_and(PreparedSave::blobs_on_disk) {
                    // A store that needs new prompt blobs waits for the budget: the
                    // gateway writes none for the entries the budget then removes.
                    early_prepared = Some(prepared);
                } else {
                    // The blobs' times are set once the budget has decided, for the
                    // entries kept: those of the entries it removes stay as they were.
                    let (prepared, blob_writes) = match prepared {
                        Ok(p) => {
                            let (p, b) = p.without_blobs();
                            (Ok(p), Some(b))
                        }
                        Err(e) => (Err(e), None),
                    };
                    // Planning goes on after this store write: the listing keeps the
                    // store's size as it was (the budget counts it).
                    let store = paths.canonical(&target.store_path);
                    if let Some(name) = paths::name_in_dir(paths.real_dir(), &store) {
                        paths.snapshot().lookup_keeping_stat(name.as_bytes());
                    }
                    // The journal is written while the batch is ordered.
                    let ((batch, look_ahead), written) = at_once(
                        || {
                            let batch = archive_batch(&archives, Some(paths.snapshot()));
                            let look_ahead = batch.look_ahead(paths.real_dir());
                            (batch, look_ahead)
                        },
                        || match &journal_text {
                            Some(text) => journal::write_journal_text(&journal, text),
                            None => journal::write_journal_with_removals(
                                &journal,
                                archives.iter(),
                                &trajectories.journal_entries(),
                            ),
                        },
                    );
                    written.map_err(CleanupError::Journal)?;
                    // The store replaced keeps its inode (and its blocks) while this holds
                    // it open: freeing them (a discard, on some mounts) waits until the
                    // renames are under way, off the critical path.
                    let replaced = crate::fs::data_file::open_named(&target.store_path)
                        .ok()
                        .map(crate::fs::data_file::DataFile::into_file);
                    match prepared.and_then(PreparedSave::commit) {
                        Ok(outcome) => {
                            // The renames start: the look-ahead has had its time (looking
                            // up alongside, it would wait for their lock).
                            drop(look_ahead);
                            early = Some((guard.start_renames(batch), outcome, blob_writes));
                            if sizes_later {
                                paths.snapshot().stat_files_in_background();
                            }
                            free_in_background(replaced);
                        }
                        Err(e) => {
                            journal::remove_journal(&journal);
                            return Err(e.into());
                        }
                    }
                }
            }
            // Without renames started early, the sizes are fetched from here on.
            if early.is_none() && sizes_later {
                paths.snapshot().stat_files_in_background();
            }
            let archived_dirs = archive_dirs(&archives);
            if !archived_dirs.is_empty() || maintenance.reset_archive_retention_ms.is_some() {
                let dirs = if archived_dirs.is_empty() {
                    vec![paths.sessions_dir().to_path_buf()]
                } else {
                    archived_dirs
                };
                let mut rules = vec![RetentionRule {
                    reason: ArchiveReason::Deleted,
                    older_than_ms: maintenance.prune_after_ms,
                }];
                if let Some(ms) = maintenance.reset_archive_retention_ms {
                    rules.push(RetentionRule {
                        reason: ArchiveReason::Reset,
                        older_than_ms: ms,
                    });
                }
                expired = plan_retention(&dirs, &rules, now, &mut overlay, Some(paths.snapshot()));
            }
        }
        // The budget and the unreferenced pass ask each renamed file's fate.
        overlay.place_targets();
        let budget = enforce_disk_budget(
            &mut ws,
            &paths,
            &mut guard,
            &BudgetParams {
                store_path: &target.store_path,
                maintenance,
                active_key: active,
                preserve: &preserve,
                now_ms: now,
                mode: budget_mode,
                view: Some(&overlay),
                referenced: None,
            },
        );
        // The retired DM sessions are archived after the budget's removals.
        for p in &budget.planned {
            overlay.remove(&paths.canonical(p));
        }
        let dm_archives = if dm_removed.is_empty() {
            Vec::new()
        } else {
            let referenced = live_session_ids(&ws);
            plan_archives(
                &dm_removed,
                &referenced,
                &paths,
                &mut overlay,
                &clock,
                false,
            )
            .0
        };
        Ok((budget, dm_archives, early_save.map(join).or(early_prepared)))
    });
    // Every error above comes before the early store write: no rename is under way, and
    // the journal is gone (a failed write removes it).
    let (budget, dm_archives, early_save) = planned?;
    r.budget = budget.evicted;
    summary.disk_budget = budget.report;
    r.repaired.retain(|&i| ws.is_alive(i));

    // Record the renames, write the store, then change files in the gateway's order.
    let journaled =
        !archives.is_empty() || !dm_archives.is_empty() || !trajectories.paths.is_empty();
    let budget_removed_entries = ws.alive() != alive_before_budget.as_slice();
    // The budget's removals are recorded before the store write they depend on, with a
    // key that write removes (none when the store is in place already).
    let removals_journaled = !budget.planned.is_empty();
    if removals_journaled {
        let unless_key = match &early {
            Some(_) => r.budget.first(),
            None => [
                &r.missing,
                &r.dm_scope,
                &r.model_run,
                &r.stale,
                &r.capped,
                &r.budget,
            ]
            .into_iter()
            .flatten()
            .next(),
        }
        .map(|&i| ws.key(i));
        let written =
            removal_journal::write_removal_journal(&removal_journal, unless_key, &budget.planned);
        match written {
            Ok(()) => {}
            // Nothing is changed yet: the run stops as for the other journal.
            Err(e) if early.is_none() => return Err(CleanupError::Journal(e)),
            // The renames are under way: they go on, the removals unrecorded.
            Err(e) => guard.events.push(FileEvent::Failed {
                path: removal_journal.clone(),
                error: e.to_string(),
            }),
        }
    }
    let (underway, saved) = match early {
        Some((underway, first, _)) if budget_removed_entries => {
            let second = store
                .prepare_save(ws.alive())
                .and_then(PreparedSave::commit);
            let written = |o| if o == SaveOutcome::Written { o } else { first };
            (Some(underway), second.map(written))
        }
        Some((underway, first, blob_writes)) => {
            let blobs = blob_writes.map_or(Ok(()), BlobWrites::write);
            (Some(underway), blobs.map(|()| first))
        }
        None => {
            if journaled {
                journal::write_journal_with_removals(
                    &journal,
                    archives.iter().chain(&dm_archives),
                    &trajectories.journal_entries(),
                )
                .map_err(CleanupError::Journal)?;
            }
            let prepared = match early_save {
                Some(early) if !budget_removed_entries => early,
                // The budget removed entries (its temp file goes now), or no second thread
                // was to be had.
                unused => {
                    drop(unused);
                    store.prepare_save(ws.alive())
                }
            };
            (None, prepared.and_then(PreparedSave::commit))
        }
    };
    let store_written = match saved {
        Ok(outcome) => outcome == SaveOutcome::Written,
        Err(e) => {
            // Renames under way finish first (the first store references none of them).
            drop(underway);
            if journaled {
                journal::remove_journal(&journal);
            }
            if removals_journaled {
                removal_journal::remove_removal_journal(&removal_journal);
            }
            return Err(e.into());
        }
    };
    // No store write is left, and rows are made from the store only when asked for: the
    // store goes now, on a thread of its own, while the file changes are made. Its text
    // maps the file it read, which the write replaced: unmapping it frees that file (its
    // cached pages and its blocks), which would otherwise delay the exit (bench/REPORT.md).
    let store = if opts.want_rows || opts.want_plan {
        Some(store)
    } else {
        free_in_background(store);
        None
    };
    let prune_params = PruneParams {
        store_path: &target.store_path,
        older_than_ms: maintenance.prune_after_ms,
        now_ms: now,
        exclude: &PathSet::new(paths.real_dir()),
        dry_run: false,
        // The budget's, when it removed no entry: the live entries are the same.
        referenced: budget
            .referenced
            .as_ref()
            .filter(|_| !budget_removed_entries),
    };
    // With the renames under way, the unreferenced artifacts are planned on the directory
    // as the changes will leave it (what the gateway lists after them), and removed with
    // them. With links listed (a link's removal depends on its target), the pruner lists
    // the directory afterwards instead.
    let early_unreferenced = underway
        .as_ref()
        .filter(|_| !paths.snapshot().has_symlinks())
        .map(|_| plan_unreferenced(&ws, &paths, &prune_params, &overlay));
    let events_before = guard.events.len();
    let made = make_file_changes(
        &PlannedFileChanges {
            archives: &archives,
            trajectories: &trajectories.paths,
            expired: &expired,
            budget: &budget.planned,
            unreferenced: early_unreferenced
                .as_ref()
                .map_or(&[], |u| u.removals.as_slice()),
            listing: Some(paths.snapshot()),
        },
        underway,
        &mut guard,
    );
    make_file_changes(
        &PlannedFileChanges {
            archives: &dm_archives,
            ..Default::default()
        },
        None,
        &mut guard,
    );
    guard.sync();
    if journaled {
        journal::remove_journal(&journal);
    }
    if removals_journaled {
        removal_journal::remove_removal_journal(&removal_journal);
    }
    // A change not made as planned (failed, or its file gone meanwhile) leaves the
    // directory otherwise than the plan said: the pruner then lists it.
    let as_planned = made.archived == archives.len()
        && guard.events[events_before..].iter().all(|e| match e {
            FileEvent::Skipped { path, .. } | FileEvent::Failed { path, .. } => {
                path.parent() != Some(paths.real_dir())
            }
            _ => true,
        });
    let unreferenced = match early_unreferenced {
        Some(mut planned) if as_planned => {
            planned.count(made.unreferenced_bytes);
            planned.report
        }
        early if mode == MaintenanceMode::Enforce => {
            // Those removed already were there after the changes, for the gateway.
            let removed_early = guard.events[events_before..]
                .iter()
                .filter(|e| {
                    matches!(e, FileEvent::Removed { reason, .. }
                        if *reason == files::RemovalReason::Unreferenced)
                })
                .count() as u64;
            // The pruner sees the directory after the renames and removals above.
            paths.forget_snapshot();
            let mut report = prune_unreferenced(&ws, &paths, &mut guard, &prune_params);
            guard.sync();
            if let Some(mut early) = early {
                early.count(made.unreferenced_bytes);
                report.scanned_files += removed_early;
                report.removed_files += early.report.removed_files;
                report.freed_bytes += early.report.freed_bytes;
            }
            report
        }
        _ => UnreferencedReport {
            older_than_ms: maintenance.prune_after_ms,
            ..Default::default()
        },
    };
    // After the report: the gateway would keep these (younger than its five minutes).
    for p in &dead_temps {
        guard.remove_regular(p, files::RemovalReason::DeadWriterTemp);
    }
    if !dead_temps.is_empty() {
        guard.sync();
    }
    summary.after_count = ws.len() as u64;
    summary.repaired = r.repaired.len() as u64;
    summary.missing = r.missing.len() as u64;
    summary.dm_scope_retired = r.dm_scope.len() as u64;
    summary.model_run_pruned = r.model_run.len() as u64;
    summary.pruned = r.stale.len() as u64;
    summary.capped = r.capped.len() as u64;
    summary.unreferenced = unreferenced;
    summary.would_mutate = summary.compute_would_mutate();
    summary.applied_count = Some(ws.len() as u64);
    let rows = match &store {
        Some(store) => r.action_rows(store, &ws),
        None => Vec::new(),
    };
    let (entry_changes, file_changes) = if opts.want_plan {
        let files = plan_rows::file_changes_done(&guard.events);
        let entries = plan_rows::entry_changes(&rows, &files, &paths, maintenance, now);
        (entries, files)
    } else {
        (Vec::new(), Vec::new())
    };
    free_in_background((store, ws, paths, overlay, archives));
    Ok(StoreOutcome {
        target: target.clone(),
        summary,
        rows,
        events: guard.events,
        store_written,
        retention_removed: made.expired_removed,
        entry_changes,
        file_changes,
    })
}
