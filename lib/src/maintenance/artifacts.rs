//! Unreferenced-artifact pruning (`store.md` §4.7, `pruneUnreferencedSessionArtifacts`):
//! old store temps, and checkpoint / trajectory / primary-transcript files that no entry
//! references, plus prompt blobs no entry points to.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::config::TEMP_STALE_MS;
use super::files::{
    is_prompt_blob_temp, prompt_blob_hash, read_prompt_blob_files, read_sessions_dir_files,
    DirGuard, RemovalReason, SessionFile,
};
use super::paths::SessionPaths;
use super::rules::WorkingSet;
use crate::artifact::{
    is_checkpoint_name, is_primary_transcript, is_store_temp, is_trajectory_artifact,
};
use crate::store::prompt_blobs::project_for_persistence;

/// `{scannedFiles, removedFiles, freedBytes, olderThanMs}` of the summary.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UnreferencedReport {
    /// Regular files in the directory plus prompt-blob files at scan time.
    pub scanned_files: u64,
    /// Files removed (or that would be); empty files are not counted.
    pub removed_files: u64,
    /// Their bytes.
    pub freed_bytes: u64,
    /// The age threshold used (`pruneAfter`).
    pub older_than_ms: u64,
}

/// The canonical files the live entries reference (`resolveReferencedSessionArtifactPaths`).
pub fn referenced_paths(ws: &WorkingSet<'_>, paths: &SessionPaths) -> HashSet<PathBuf> {
    let mut out = HashSet::with_capacity(ws.len() * 3);
    for (_, _, e) in ws.iter() {
        out.extend(paths.entry_artifacts(e));
        out.extend(paths.checkpoint_files(e));
    }
    out
}

/// The prompt-blob hash an entry's persisted form points to.
fn projected_blob_hash(entry: &Map<String, Value>, sessions_dir: &Path) -> Option<String> {
    let (projected, _) = project_for_persistence(entry, sessions_dir);
    let e = projected.as_ref().unwrap_or(entry);
    let r = e.get("skillsSnapshot")?.get("promptRef")?;
    (r.get("algorithm").and_then(Value::as_str) == Some("sha256"))
        .then(|| r.get("hash").and_then(Value::as_str).map(str::to_string))
        .flatten()
}

/// How many live entries point to each prompt-blob hash (`buildProjectedPromptBlobRefCounts`).
pub fn blob_ref_counts(ws: &WorkingSet<'_>, sessions_dir: &Path) -> HashMap<String, u64> {
    let mut counts = HashMap::new();
    for (_, _, e) in ws.iter() {
        if !e.contains_key("skillsSnapshot") {
            continue;
        }
        if let Some(h) = projected_blob_hash(e, sessions_dir) {
            *counts.entry(h).or_insert(0) += 1;
        }
    }
    counts
}

/// `isUnreferencedSessionArtifactFile`: a checkpoint, trajectory or primary transcript
/// name that no entry references.
pub fn is_unreferenced_artifact(file: &SessionFile, referenced: &HashSet<PathBuf>) -> bool {
    !referenced.contains(&file.canonical)
        && (is_checkpoint_name(&file.name)
            || is_trajectory_artifact(&file.name)
            || is_primary_transcript(&file.name))
}

/// `isPromptBlobArtifactRemovable`: a blob temp older than the temp cutoff, or a blob
/// older than `blob_cutoff` that no entry references.
pub fn is_blob_removable(
    file: &SessionFile,
    refs: &HashMap<String, u64>,
    blob_cutoff: f64,
    temp_cutoff: f64,
) -> bool {
    if is_prompt_blob_temp(&file.name) {
        return file.mtime_ms <= temp_cutoff;
    }
    if file.mtime_ms > blob_cutoff {
        return false;
    }
    prompt_blob_hash(&file.name).is_some_and(|h| !refs.contains_key(h))
}

/// Simulated or real removal bookkeeping shared by the budget and the pruner
/// (`removeFileForBudget`).
pub struct Remover<'g> {
    /// Sizes of the scanned files by canonical path (what a dry run counts).
    pub sizes: HashMap<PathBuf, u64>,
    /// Files a dry run already counted.
    pub simulated: HashSet<PathBuf>,
    /// Whether nothing is really removed.
    pub dry_run: bool,
    /// The directory guard doing real removals.
    pub guard: &'g mut DirGuard,
}

impl Remover<'_> {
    /// Removes (or simulates removing) one file; returns the bytes counted. `canonical`
    /// identifies it; `path` is what a real removal deletes.
    pub fn remove(&mut self, path: &Path, canonical: &Path, reason: RemovalReason) -> u64 {
        if self.dry_run {
            if self.simulated.contains(canonical) {
                return 0;
            }
            let size = self.sizes.get(canonical).copied().unwrap_or(0);
            if size == 0 {
                return 0;
            }
            self.simulated.insert(canonical.to_path_buf());
            return size;
        }
        self.guard.remove(path, reason)
    }
}

/// Inputs of one unreferenced-artifact pass.
pub struct PruneParams<'a> {
    /// The store file (its base name identifies store temps).
    pub store_path: &'a Path,
    /// `olderThanMs` (`pruneAfter`).
    pub older_than_ms: u64,
    /// The clock.
    pub now_ms: i64,
    /// Canonical paths to leave out (files the preview already removes otherwise).
    pub exclude: &'a HashSet<PathBuf>,
    /// Simulate only.
    pub dry_run: bool,
}

/// `pruneUnreferencedSessionArtifacts` over the live entries of `ws`.
pub fn prune_unreferenced(
    ws: &WorkingSet<'_>,
    paths: &SessionPaths,
    guard: &mut DirGuard,
    p: &PruneParams<'_>,
) -> UnreferencedReport {
    let real_dir = paths.real_dir();
    let files = read_sessions_dir_files(real_dir);
    let blobs = read_prompt_blob_files(real_dir);
    let referenced = referenced_paths(ws, paths);
    let refs = blob_ref_counts(ws, paths.sessions_dir());
    let now = p.now_ms as f64;
    let cutoff = now - p.older_than_ms as f64;
    let temp_cutoff = now - TEMP_STALE_MS as f64;
    let blob_cutoff = now - (p.older_than_ms.max(TEMP_STALE_MS)) as f64;
    let store_base = p
        .store_path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("");
    let mut removable: Vec<(&SessionFile, bool)> = Vec::new();
    for f in &files {
        if p.exclude.contains(&f.canonical) {
            continue;
        }
        let ok = if is_store_temp(&f.name, store_base) {
            f.mtime_ms <= temp_cutoff
        } else {
            f.mtime_ms <= cutoff && is_unreferenced_artifact(f, &referenced)
        };
        if ok {
            removable.push((f, false));
        }
    }
    for b in &blobs {
        if !p.exclude.contains(&b.canonical)
            && is_blob_removable(b, &refs, blob_cutoff, temp_cutoff)
        {
            removable.push((b, true));
        }
    }
    removable.sort_by(|a, b| a.0.mtime_ms.total_cmp(&b.0.mtime_ms));
    let mut remover = Remover {
        sizes: files
            .iter()
            .chain(&blobs)
            .map(|f| (f.canonical.clone(), f.size))
            .collect(),
        simulated: HashSet::new(),
        dry_run: p.dry_run,
        guard,
    };
    let mut report = UnreferencedReport {
        scanned_files: (files.len() + blobs.len()) as u64,
        older_than_ms: p.older_than_ms,
        ..Default::default()
    };
    for (f, is_blob) in removable {
        if is_blob && !p.dry_run {
            // Re-check with the current mtime, as the gateway does before removing.
            let Ok(m) = std::fs::metadata(&f.path) else {
                continue;
            };
            let fresh = SessionFile {
                mtime_ms: super::files::mtime_ms(&m),
                size: m.len(),
                ..f.clone()
            };
            if !m.is_file() || !is_blob_removable(&fresh, &refs, blob_cutoff, temp_cutoff) {
                continue;
            }
        }
        let bytes = remover.remove(&f.path, &f.canonical, RemovalReason::Unreferenced);
        if bytes > 0 {
            report.removed_files += 1;
            report.freed_bytes += bytes;
        }
    }
    report
}
