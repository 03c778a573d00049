//! The disk budget (`store.md` §4.8, `enforceSessionDiskBudget`): when the sessions
//! directory (with the store as it would be written) exceeds `maxDiskBytes`, remove
//! orphan prompt blobs, then archives and unreferenced files, then the oldest
//! unprotected entries with their files, until it is at most `highWaterBytes`.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use super::artifacts::{
    blob_ref_counts, is_archive_name, is_artifact_name, is_blob_removable, referenced_paths,
    PathSet, Remover, Sizes,
};
use super::config::{MaintenanceConfig, TEMP_STALE_MS};
use super::files::{
    dir_files, mtime_ms, prompt_blob_hash, read_prompt_blob_files, DirFile, DirGuard, DirOverlay,
    RemovalReason, SessionFile,
};
use super::paths::{name_in_dir, trajectory_paths, SessionPaths};
use super::rules::{is_preserved, WorkingSet};
use crate::js;
use crate::session::artifact::is_store_temp;

/// The `diskBudget` object of the summary.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DiskBudgetReport {
    /// Bytes before (store counted as it would be written).
    pub total_bytes_before: i64,
    /// Bytes after the removals.
    pub total_bytes_after: i64,
    /// Files removed (empty files are not counted).
    pub removed_files: u64,
    /// Entries evicted.
    pub removed_entries: u64,
    /// Bytes of the removed files.
    pub freed_bytes: u64,
    /// `maxDiskBytes`.
    pub max_bytes: u64,
    /// `highWaterBytes`.
    pub high_water_bytes: u64,
    /// Whether the directory was over `maxDiskBytes`.
    pub over_budget: bool,
}

/// How the budget runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BudgetMode {
    /// Measure only (warn mode).
    WarnOnly,
    /// Compute what would be removed (preview).
    DryRun,
    /// Compute what to remove, on the directory as a plan leaves it, and list the removals
    /// for the caller to make (the apply path, which writes the store first).
    Plan,
    /// Remove.
    Enforce,
}

/// What the budget did besides its report.
#[derive(Debug, Clone, Default)]
pub struct BudgetOutcome {
    /// The report (`None` without `maxDiskBytes`).
    pub report: Option<DiskBudgetReport>,
    /// Entries evicted, in eviction order.
    pub evicted: Vec<usize>,
    /// Canonical paths of the files removed (or that would be).
    pub removed_paths: Vec<PathBuf>,
    /// [`BudgetMode::Plan`]: the files to remove, in order.
    pub planned: Vec<PathBuf>,
    /// The files the live entries referenced when the budget looked (when it did).
    pub referenced: Option<PathSet>,
}

/// Inputs of one budget pass.
pub struct BudgetParams<'a> {
    /// The store file.
    pub store_path: &'a Path,
    /// The resolved maintenance settings.
    pub maintenance: &'a MaintenanceConfig,
    /// `--active-key`, never evicted.
    pub active_key: Option<&'a str>,
    /// The preserve set.
    pub preserve: &'a HashSet<String>,
    /// The clock.
    pub now_ms: i64,
    /// Warn, dry run, plan or enforce.
    pub mode: BudgetMode,
    /// Changes already planned in the directory (plan mode).
    pub view: Option<&'a DirOverlay>,
    /// The files the live entries reference, when the caller has them already (the
    /// budget computes them otherwise, and hands them back in its outcome).
    pub referenced: Option<&'a PathSet>,
}

/// `enforceSessionDiskBudget` on the live entries of `ws`.
pub fn enforce_disk_budget(
    ws: &mut WorkingSet,
    paths: &SessionPaths,
    guard: &mut DirGuard,
    p: &BudgetParams<'_>,
) -> BudgetOutcome {
    let mut out = BudgetOutcome::default();
    let (Some(max_bytes), Some(high_water)) =
        (p.maintenance.max_disk_bytes, p.maintenance.high_water_bytes)
    else {
        return out;
    };
    let real_dir = paths.real_dir();
    let view = p.view.filter(|v| !v.is_empty());
    let snap = paths.snapshot();
    let files = dir_files(snap, view);
    let blobs = match view {
        Some(view) => view.apply(read_prompt_blob_files(real_dir)),
        None => read_prompt_blob_files(real_dir),
    };
    let store_canonical = paths.canonical(p.store_path);
    let store_file_size = match name_in_dir(real_dir, &store_canonical) {
        Some(name) => files
            .iter()
            .find(|f| f.name == name)
            .map_or(0, |f| f.size as i64),
        None => 0,
    };

    // The store as it would be written: per-entry chunk sizes of the projected form.
    let existing_blobs: HashMap<&str, &SessionFile> = blobs
        .iter()
        .filter_map(|b| prompt_blob_hash(&b.name).map(|h| (h, b)))
        .collect();
    let mut blob_bytes_by_hash: HashMap<String, i64> = HashMap::new();
    for (_, f) in ws.iter() {
        if let Some((hash, bytes)) = &f.blob {
            if !existing_blobs.contains_key(hash.as_str()) {
                blob_bytes_by_hash.insert(hash.clone(), *bytes as i64);
            }
        }
    }
    let n = ws.len() as i64;
    let mut store_bytes: i64 = if n == 0 {
        2
    } else {
        ws.iter().map(|(_, f)| f.chunk_len).sum::<i64>() + 2 * (n - 1) + 4
    };
    let mut refs = blob_ref_counts(ws);
    let projected_blob_bytes: i64 = blob_bytes_by_hash.values().sum();
    let mut total: i64 = files.iter().map(|f| f.size as i64).sum::<i64>()
        + blobs.iter().map(|f| f.size as i64).sum::<i64>()
        - store_file_size
        + store_bytes
        + projected_blob_bytes;
    let before = total;
    let mut report = DiskBudgetReport {
        total_bytes_before: before,
        total_bytes_after: total,
        max_bytes,
        high_water_bytes: high_water,
        ..Default::default()
    };
    if total <= max_bytes as i64 {
        out.report = Some(report);
        return out;
    }
    report.over_budget = true;
    if p.mode == BudgetMode::WarnOnly {
        out.report = Some(report);
        return out;
    }
    let hw = high_water as i64;
    let dry_run = matches!(p.mode, BudgetMode::DryRun | BudgetMode::Plan);
    let referenced = match p.referenced {
        Some(given) => std::borrow::Cow::Borrowed(given),
        None => std::borrow::Cow::Owned(referenced_paths(ws, paths)),
    };
    let now = p.now_ms as f64;
    let temp_cutoff = now - TEMP_STALE_MS as f64;
    let blob_cutoff = now - TEMP_STALE_MS as f64;
    let store_base = p
        .store_path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("");
    let mut remover = Remover {
        sizes: Sizes::new(
            real_dir,
            &files,
            blobs.iter().map(|f| (f.canonical.as_path(), f.size)),
        ),
        simulated: HashSet::default(),
        dry_run,
        guard,
        planned: Vec::new(),
    };
    let mut removed_files = 0u64;
    let mut freed = 0u64;

    // Re-checks a blob with its current mtime before a real removal.
    let remove_blob = |remover: &mut Remover<'_, '_>,
                       f: &SessionFile,
                       refs: &HashMap<String, u64>,
                       removed_paths: &mut Vec<PathBuf>|
     -> u64 {
        let mut f = f.clone();
        if !dry_run {
            let Ok(m) = std::fs::metadata(&f.path) else {
                return 0;
            };
            if !m.is_file() {
                return 0;
            }
            f.size = m.len();
            f.mtime_ms = mtime_ms(&m);
        }
        if !is_blob_removable(&f, refs, blob_cutoff, temp_cutoff) {
            return 0;
        }
        let bytes = remover.remove(&f.path, &f.canonical, RemovalReason::DiskBudget);
        if bytes > 0 {
            removed_paths.push(f.canonical.clone());
        }
        bytes
    };

    // 1. Orphan prompt blobs, oldest first.
    let mut blob_queue: Vec<&SessionFile> = blobs
        .iter()
        .filter(|b| is_blob_removable(b, &refs, blob_cutoff, temp_cutoff))
        .collect();
    blob_queue.sort_by(|a, b| a.mtime_ms.total_cmp(&b.mtime_ms));
    for f in blob_queue {
        if total <= hw {
            break;
        }
        let bytes = remove_blob(&mut remover, f, &refs, &mut out.removed_paths);
        if bytes == 0 {
            continue;
        }
        total -= bytes as i64;
        freed += bytes;
        removed_files += 1;
    }

    // 2. Stale temps, archives and unreferenced artifacts, oldest first (no age threshold).
    let mut file_queue: Vec<&DirFile<'_>> = files
        .iter()
        .filter(|f| {
            if is_store_temp(f.name, store_base) {
                f.mtime_ms <= temp_cutoff
            } else {
                is_archive_name(f.name)
                    || (is_artifact_name(f.name) && !referenced.contains_name(f.name))
            }
        })
        .collect();
    file_queue.sort_by(|a, b| a.mtime_ms.total_cmp(&b.mtime_ms));
    for f in file_queue {
        if total <= hw {
            break;
        }
        let path = real_dir.join(f.name);
        let bytes = remover.remove_listed(&path, &path, f.size, RemovalReason::DiskBudget);
        if bytes == 0 {
            continue;
        }
        out.removed_paths.push(path);
        total -= bytes as i64;
        freed += bytes;
        removed_files += 1;
    }

    // 3. Entries, oldest first, with their files when no other entry shares the session.
    if total > hw {
        let active = p
            .active_key
            .map(|a| js::trim(a).to_lowercase())
            .filter(|a| !a.is_empty());
        let mut id_refs: HashMap<String, u64> = HashMap::new();
        for (_, f) in ws.iter() {
            if let Some(id) = &f.session_id {
                *id_refs.entry(id.clone()).or_insert(0) += 1;
            }
        }
        let mut order: Vec<(usize, f64)> = ws
            .iter()
            .map(|(i, f)| (i, f.updated_at.filter(|u| u.is_finite()).unwrap_or(0.0)))
            .collect();
        order.sort_by(|a, b| a.1.total_cmp(&b.1));
        for (i, _) in order {
            if total <= hw {
                break;
            }
            let key = ws.key(i);
            if active
                .as_deref()
                .is_some_and(|a| js::trim(key).to_lowercase() == a)
            {
                continue;
            }
            if is_preserved(ws.entry(i), p.preserve) {
                continue;
            }
            let previous = store_bytes;
            let chunk = ws.entry(i).chunk_len;
            store_bytes = (store_bytes - (chunk + 2)).max(2);
            total += store_bytes - previous;
            if let Some(hash) = ws.entry(i).blob_hash.clone().as_ref() {
                let left = refs.get(hash).copied().unwrap_or(1).saturating_sub(1);
                if left > 0 {
                    refs.insert(hash.clone(), left);
                } else {
                    refs.remove(hash);
                    match blob_bytes_by_hash.get(hash).copied().filter(|b| *b > 0) {
                        Some(virtual_bytes) => total -= virtual_bytes,
                        None => {
                            if let Some(f) = existing_blobs.get(hash.as_str()) {
                                if is_blob_removable(f, &refs, blob_cutoff, temp_cutoff) {
                                    let bytes =
                                        remove_blob(&mut remover, f, &refs, &mut out.removed_paths);
                                    if bytes > 0 {
                                        total -= bytes as i64;
                                        freed += bytes;
                                        removed_files += 1;
                                    }
                                }
                            }
                        }
                    }
                }
            }
            let entry = ws.entry(i).clone();
            ws.remove(i);
            out.evicted.push(i);
            report.removed_entries += 1;
            let Some(id) = entry.session_id.as_deref() else {
                continue;
            };
            let left = id_refs.get(id).copied().unwrap_or(1).saturating_sub(1);
            if left > 0 {
                id_refs.insert(id.to_string(), left);
                continue;
            }
            id_refs.remove(id);
            let Some(transcript) = paths.entry_transcript(Some(id), entry.session_file.as_deref())
            else {
                continue;
            };
            let (runtime, pointer) = trajectory_paths(&transcript);
            for path in [transcript, pointer, runtime] {
                if !paths.may_exist(&path) {
                    continue;
                }
                let canonical = paths.canonical(&path);
                let bytes = remover.remove(&path, &canonical, RemovalReason::DiskBudget);
                if bytes == 0 {
                    continue;
                }
                out.removed_paths.push(canonical);
                total -= bytes as i64;
                freed += bytes;
                removed_files += 1;
            }
        }
    }
    if let std::borrow::Cow::Owned(referenced) = referenced {
        out.referenced = Some(referenced);
    }
    report.total_bytes_after = total;
    report.removed_files = removed_files;
    report.freed_bytes = freed;
    out.report = Some(report);
    if p.mode == BudgetMode::Plan {
        out.planned = std::mem::take(&mut remover.planned);
    }
    out
}
