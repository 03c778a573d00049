//! `claw-sessions doctor`: one health check of a state directory, one exit code (0
//! healthy, 1 findings, 65 damaged; [`crate::report::finding_report::exit_code`]).
//!
//! Each section adds [`Finding`]s in `check`'s form; nothing is written, and no section
//! stops another (one that cannot run is itself a finding). Per store: the store parses
//! and how far it drifts from what the next save writes ([`SessionStore::save_diff`]),
//! the transcripts and write locks (`check --all`, [`check_all::check_store`]), the store
//! lock, the pending-archives and removal journals of an interrupted cleanup, the disk
//! budget against the config (the cleanup preview's own measure), and the agent
//! database ([`agent_db_section`], a hook). Then the state database (integrity, schema,
//! planted objects, signal tables) and whether a gateway is live.

use std::path::Path;

use crate::install::context::StateContext;
use crate::install::targets::StoreTarget;
use crate::maintenance::{self, config::MaintenanceConfig, journal, removal_journal};
use crate::report::finding::{Finding, Severity};
use crate::signals::db::{check_touched_tables, StateDb};
use crate::signals::generation::HostSchema;
use crate::store::store_lock::{LockWait, StoreLock, StoreLockError};
use crate::store::{LoadOptions, SessionStore};
use crate::transcript::check_all;

/// The sections, in the order they run (progress names them).
pub const SECTIONS: [&str; 7] = [
    "store",
    "transcripts",
    "locks",
    "journals",
    "disk",
    "agent-db",
    "state-db",
];

/// What the doctor found.
#[derive(Debug, Clone, Default)]
pub struct DoctorReport {
    /// Every finding, section by section.
    pub findings: Vec<Finding>,
    /// Transcripts checked.
    pub transcripts: usize,
    /// Stores examined.
    pub stores: usize,
}

/// Progress of a run: the section, and within it how many of how many items are done.
pub type Progress<'a> = &'a mut dyn FnMut(&str, usize, usize);

fn finding(path: &Path, severity: Severity, code: &'static str, message: String) -> Finding {
    Finding::about_file(path, severity, code, message)
}

/// Runs every section on the selected stores and the state directory.
pub fn run(ctx: &StateContext, progress: Progress<'_>) -> DoctorReport {
    let mut report = DoctorReport::default();
    match ctx.targets() {
        Ok(targets) => {
            for target in &targets {
                report.stores += 1;
                store_sections(ctx, target, &mut report, progress);
            }
        }
        Err(e) => report.findings.push(finding(
            &ctx.layout.state_dir,
            Severity::Error,
            "targets",
            e.to_string(),
        )),
    }
    progress("state-db", 0, 1);
    report.findings.extend(state_db_section(ctx));
    report.findings.extend(gateway_section(ctx));
    progress("state-db", 1, 1);
    report
}

fn store_sections(
    ctx: &StateContext,
    target: &StoreTarget,
    report: &mut DoctorReport,
    progress: Progress<'_>,
) {
    let store_path = &target.store_path;
    progress("store", 0, 1);
    let store = match SessionStore::load(store_path, LoadOptions::default()) {
        Ok(s) => s,
        Err(e) => {
            // Nothing else of this store can be trusted to run on it.
            report.findings.push(finding(
                store_path,
                Severity::Error,
                "store-unreadable",
                e.to_string(),
            ));
            return;
        }
    };
    if !store.existed() {
        report.findings.push(finding(
            store_path,
            Severity::Info,
            "store-missing",
            format!(
                "no store for agent {:?} (the gateway creates it with the first session)",
                target.agent_id
            ),
        ));
    }
    for w in store.warnings() {
        report.findings.push(finding(
            store_path,
            Severity::Info,
            "store-warning",
            w.clone(),
        ));
    }
    match store.save_diff() {
        Ok(d) if !d.is_empty() => {
            let keys: Vec<&str> = d.iter().take(3).map(|e| e.key.as_str()).collect();
            report.findings.push(finding(
                store_path,
                Severity::Info,
                "store-normalization-drift",
                format!(
                    "the next save (by the gateway or any writer) rewrites {} entr{} the load normalises ({}{}); `claw-sessions patch KEY --dry-run` shows each",
                    d.len(),
                    if d.len() == 1 { "y" } else { "ies" },
                    keys.join(", "),
                    if d.len() > keys.len() { ", …" } else { "" }
                ),
            ));
        }
        Ok(_) => {}
        Err(e) => report.findings.push(finding(
            store_path,
            Severity::Error,
            "store-unreadable",
            e.to_string(),
        )),
    }
    drop(store);
    progress("store", 1, 1);

    // Transcripts and write locks: `check --all` (on the agent DB layout, its own checks
    // below stand for it).
    let mut transcripts = |done: usize, total: usize| progress("transcripts", done, total);
    let on_db = crate::agent_db::layout::db_for_store(store_path).is_some();
    let checked = if on_db {
        Ok(check_all::StoreCheck::default())
    } else {
        check_all::check_store(ctx, target, &mut transcripts)
    };
    match checked {
        Ok(c) => {
            report.transcripts += c.files;
            report.findings.extend(c.findings);
        }
        Err(e) => report.findings.push(finding(
            store_path,
            Severity::Error,
            "check-failed",
            e.to_string(),
        )),
    }

    progress("locks", 0, 1);
    report.findings.extend(store_lock_section(store_path));
    progress("journals", 0, 1);
    report.findings.extend(journal_section(store_path));
    progress("disk", 0, 1);
    report.findings.extend(disk_section(ctx, target));
    progress("agent-db", 0, 1);
    report.findings.extend(agent_db_section(ctx, target));
}

/// Whether another clawstate writer holds the store lock now (taken and dropped at once,
/// never waited for).
fn store_lock_section(store_path: &Path) -> Vec<Finding> {
    let Some(dir) = store_path.parent().filter(|d| d.is_dir()) else {
        return Vec::new();
    };
    match StoreLock::acquire(store_path, LockWait::no_wait()) {
        Ok(_) => Vec::new(),
        Err(e @ StoreLockError::Busy { .. }) => vec![finding(
            dir,
            Severity::Info,
            "store-lock-held",
            format!("{e} (a writer is at work: the findings of this store may be changing)"),
        )],
        Err(e) => vec![finding(dir, Severity::Warning, "store-lock", e.to_string())],
    }
}

/// The journals an interrupted `cleanup --enforce` leaves.
fn journal_section(store_path: &Path) -> Vec<Finding> {
    let mut out = Vec::new();
    let path = journal::journal_path(store_path);
    match journal::read_journal(&path) {
        Ok(None) => {}
        Ok(Some(c)) => out.push(finding(
            &path,
            Severity::Warning,
            "pending-archives",
            format!(
                "an interrupted cleanup left {} planned archive rename(s) and {} removal(s); the next `claw-sessions cleanup --enforce` finishes them",
                c.archives.len(),
                c.removals.len()
            ),
        )),
        Err(e) => out.push(finding(
            &path,
            Severity::Error,
            "pending-archives-unreadable",
            format!("{e}; cleanup --enforce refuses to run until it is dealt with"),
        )),
    }
    let removals = removal_journal::removal_journal_path(store_path);
    if std::fs::symlink_metadata(&removals).is_ok() {
        out.push(finding(
            &removals,
            Severity::Warning,
            "pending-removals",
            "an interrupted cleanup left its disk-budget removals; the next `claw-sessions cleanup --enforce` finishes them".into(),
        ));
    }
    out
}

/// The sessions directory against `session.maintenance.maxDiskBytes`, measured as the
/// cleanup preview measures it, and what a cleanup would change.
fn disk_section(ctx: &StateContext, target: &StoreTarget) -> Vec<Finding> {
    let m = MaintenanceConfig::from_config(&ctx.config);
    let opts = maintenance::CleanupOptions {
        dry_run: true,
        ..Default::default()
    };
    let preview = match maintenance::preview_store(ctx, target, &m, m.mode, &opts) {
        Ok(p) => p,
        Err(e) => {
            return vec![finding(
                &target.store_path,
                Severity::Warning,
                "cleanup-preview-failed",
                e.to_string(),
            )]
        }
    };
    let mut out = Vec::new();
    let dir = target.store_path.parent().unwrap_or(Path::new("/"));
    let s = &preview.summary;
    if let Some(b) = &s.disk_budget {
        if b.over_budget {
            out.push(finding(
                dir,
                Severity::Warning,
                "disk-over-budget",
                format!(
                    "{} bytes, over session.maintenance.maxDiskBytes ({}); `claw-sessions cleanup --enforce` would free {} bytes",
                    b.total_bytes_before, b.max_bytes, b.freed_bytes
                ),
            ));
        } else if b.total_bytes_before > b.high_water_bytes as i64 {
            out.push(finding(
                dir,
                Severity::Info,
                "disk-over-high-water",
                format!(
                    "{} bytes, over highWaterBytes ({}) and under maxDiskBytes ({})",
                    b.total_bytes_before, b.high_water_bytes, b.max_bytes
                ),
            ));
        }
    }
    if s.would_mutate {
        out.push(finding(
            &target.store_path,
            Severity::Info,
            "cleanup-pending",
            format!(
                "a cleanup would remove {} entr{} ({} stale, {} over maxEntries, {} model-run probes) and {} unreferenced file(s); `claw-sessions cleanup --dry-run` shows the plan",
                s.before_count.saturating_sub(s.after_count),
                if s.before_count.saturating_sub(s.after_count) == 1 { "y" } else { "ies" },
                s.pruned,
                s.capped,
                s.model_run_pruned,
                s.unreferenced.removed_files
            ),
        ));
    }
    out
}

/// The agent database checks (the per-agent SQLite layout of 2026.8+, `claw-transcript
/// check --all` on it): integrity (quick), events, windows, leftovers, WAL, and leases
/// held by dead processes. Nothing for an agent on the files layout.
pub fn agent_db_section(ctx: &StateContext, target: &StoreTarget) -> Vec<Finding> {
    let Some(db) = crate::agent_db::layout::db_for_store(&target.store_path) else {
        return Vec::new();
    };
    let opts = crate::agent_db::check::DbCheckOptions {
        integrity: false,
        session_id: None,
    };
    let (mut findings, _) = crate::agent_db::check::check_or_report(&db, &target.store_path, &opts);
    findings.extend(crate::agent_db::check::stale_holders(&ctx.layout.state_dir));
    findings
}

/// The state database: it opens, passes SQLite's quick check, has a known schema, holds
/// no planted trigger or view on the tables clawstate writes, and has the signal tables.
fn state_db_section(ctx: &StateContext) -> Vec<Finding> {
    let path = ctx.layout.state_db_path();
    let mut out = Vec::new();
    if std::fs::symlink_metadata(&path).is_err() {
        out.push(finding(
            &path,
            Severity::Info,
            "state-db-missing",
            "no state database (the gateway creates it when it starts)".into(),
        ));
        return out;
    }
    let host = HostSchema::of(&ctx.config, None);
    let db = match StateDb::open_read_as(&path, &host) {
        Ok(db) => db,
        Err(e) => {
            out.push(finding(
                &path,
                Severity::Error,
                "state-db-unreadable",
                e.to_string(),
            ));
            return out;
        }
    };
    if let Some(n) = db.no_signal_log() {
        out.push(finding(
            &path,
            if n.migration_pending() {
                Severity::Warning
            } else {
                Severity::Info
            },
            "state-db-no-signal-log",
            n.to_string(),
        ));
        return out;
    }
    let quick: Result<Vec<String>, _> =
        db.conn().prepare("PRAGMA quick_check").and_then(|mut s| {
            s.query_map([], |r| r.get::<_, String>(0))?
                .collect::<Result<Vec<_>, _>>()
        });
    match quick {
        Ok(rows) if rows == ["ok"] => {}
        Ok(rows) => out.push(finding(
            &path,
            Severity::Error,
            "state-db-integrity",
            format!("SQLite quick_check: {}", rows.join("; ")),
        )),
        Err(e) => out.push(finding(
            &path,
            Severity::Error,
            "state-db-integrity",
            format!("SQLite quick_check failed: {e}"),
        )),
    }
    let v = db.user_version();
    let known =
        crate::signals::db::OLDEST_WRITABLE_SCHEMA..=crate::signals::db::NEWEST_WRITABLE_SCHEMA;
    if !known.contains(&v) {
        out.push(finding(
            &path,
            Severity::Warning,
            "state-db-schema",
            format!(
                "schema {v}, outside the schemas clawstate writes ({}–{}): signals are read only",
                known.start(),
                known.end()
            ),
        ));
    }
    if let Err(e) = check_touched_tables(db.conn(), &path) {
        out.push(finding(
            &path,
            Severity::Error,
            "state-db-planted-objects",
            e.to_string(),
        ));
    }
    out
}

/// Whether a gateway owns the state directory (writers then refuse without --store).
fn gateway_section(ctx: &StateContext) -> Vec<Finding> {
    match ctx.live_gateway() {
        Some(owner) => vec![finding(
            &ctx.layout.state_dir,
            Severity::Info,
            "gateway-live",
            format!(
                "the OpenClaw gateway is running ({owner}): writers refuse unless --store is given"
            ),
        )],
        None => Vec::new(),
    }
}
