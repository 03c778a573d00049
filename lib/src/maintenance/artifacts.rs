//! Unreferenced-artifact pruning (`store.md` §4.7, `pruneUnreferencedSessionArtifacts`):
//! old store temps, and checkpoint / trajectory / primary-transcript files that no entry
//! references, plus prompt blobs no entry points to.

use std::cell::OnceCell;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use foldhash::fast::FixedState;

use super::config::TEMP_STALE_MS;
use super::dir_snapshot::FileStat;
use super::files::{
    dir_files, is_prompt_blob_temp, prompt_blob_hash, read_prompt_blob_files, DirFile, DirGuard,
    DirOverlay, PlannedRemoval, RemovalReason, SessionFile,
};
use super::paths::{name_in_dir, SessionPaths, TranscriptName};
use super::rules::WorkingSet;
use crate::fs::clean_path::{is_clean_absolute, split_clean};
use crate::session::artifact::{
    is_archive_artifact, is_checkpoint_name, is_store_temp, is_trajectory_artifact,
};

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

impl UnreferencedReport {
    /// Counts a removal of `bytes` (an empty or missing file is not counted).
    fn count(&mut self, bytes: u64) {
        if bytes > 0 {
            self.removed_files += 1;
            self.freed_bytes += bytes;
        }
    }
}

/// A set of canonical paths, with the files directly in the sessions directory kept by
/// name (what scans compare against, without hashing whole paths).
#[derive(Debug, Clone, Default)]
pub struct PathSet {
    dir: PathBuf,
    names: HashSet<Box<[u8]>, FixedState>,
    others: HashSet<PathBuf>,
}

impl PathSet {
    /// An empty set for the (real) sessions directory `dir`.
    pub fn new(dir: &Path) -> Self {
        PathSet {
            dir: dir.to_path_buf(),
            ..Default::default()
        }
    }

    fn name_in_dir<'p>(&self, p: &'p Path) -> Option<&'p [u8]> {
        if !is_clean_absolute(p) {
            return None;
        }
        let (parent, name) = split_clean(p)?;
        (parent == self.dir.as_os_str().as_encoded_bytes()).then_some(name)
    }

    /// Adds a canonical path.
    pub fn insert(&mut self, p: PathBuf) {
        match self.name_in_dir(&p) {
            Some(name) => {
                if !self.names.contains(name) {
                    self.names.insert(name.into());
                }
            }
            None => {
                self.others.insert(p);
            }
        }
    }

    /// An empty set for `dir` with room for `names` file names directly in it.
    pub fn with_capacity(dir: &Path, names: usize) -> Self {
        let mut set = PathSet::new(dir);
        set.names.reserve(names);
        set
    }

    /// Adds the file `name` directly in the directory.
    pub fn insert_name(&mut self, name: &[u8]) {
        if !self.names.contains(name) {
            self.names.insert(name.into());
        }
    }

    /// Whether a canonical path is in the set.
    pub fn contains(&self, p: &Path) -> bool {
        match self.name_in_dir(p) {
            Some(name) => self.names.contains(name),
            None => self.others.contains(p),
        }
    }

    /// Whether the file `name` directly in the directory is in the set.
    pub fn contains_name(&self, name: &str) -> bool {
        self.names.contains(name.as_bytes())
    }
}

impl Extend<PathBuf> for PathSet {
    fn extend<T: IntoIterator<Item = PathBuf>>(&mut self, iter: T) {
        for p in iter {
            self.insert(p);
        }
    }
}

/// Adds an entry's canonical artifacts (`resolveSessionArtifactCanonicalPathsForEntry`:
/// the transcript, its trajectory pointer and runtime sidecar) to `set`, by name when
/// they lie directly in the sessions directory.
pub fn add_entry_artifacts(
    set: &mut PathSet,
    paths: &SessionPaths,
    session_id: Option<&str>,
    session_file: Option<&str>,
) {
    match paths.entry_transcript_name(session_id, session_file) {
        TranscriptName::Nothing => {}
        TranscriptName::Other => set.extend(paths.entry_artifacts(session_id, session_file)),
        TranscriptName::InDir(name) => {
            set.insert_name(name.as_bytes());
            let stem = name.strip_suffix(".jsonl").unwrap_or(&name);
            let mut sidecar = String::with_capacity(stem.len() + 21);
            for suffix in [".trajectory-path.json", ".trajectory.jsonl"] {
                sidecar.clear();
                sidecar.push_str(stem);
                sidecar.push_str(suffix);
                match paths.is_link_in_dir(sidecar.as_bytes()) {
                    Some(false) => set.insert_name(sidecar.as_bytes()),
                    _ => set.insert(paths.canonical(&paths.real_dir().join(&sidecar))),
                }
            }
        }
    }
}

/// The canonical files the live entries reference (`resolveReferencedSessionArtifactPaths`).
pub fn referenced_paths(ws: &WorkingSet, paths: &SessionPaths) -> PathSet {
    let mut out = PathSet::with_capacity(paths.real_dir(), ws.len() * 3);
    for (_, f) in ws.iter() {
        add_entry_artifacts(
            &mut out,
            paths,
            f.session_id.as_deref(),
            f.session_file.as_deref(),
        );
        if !f.checkpoint_files.is_empty() {
            out.extend(paths.checkpoint_files(&f.checkpoint_files));
        }
    }
    out
}

/// How many live entries point to each prompt-blob hash (`buildProjectedPromptBlobRefCounts`).
pub fn blob_ref_counts(ws: &WorkingSet) -> HashMap<String, u64> {
    let mut counts = HashMap::new();
    for (_, f) in ws.iter() {
        if let Some(h) = &f.blob_hash {
            *counts.entry(h.clone()).or_insert(0) += 1;
        }
    }
    counts
}

/// `isUnreferencedSessionArtifactFile`: a checkpoint, trajectory or primary transcript
/// name that no entry references.
pub fn is_unreferenced_artifact(file: &SessionFile, referenced: &PathSet) -> bool {
    is_artifact_name(&file.name) && !referenced.contains(&file.canonical)
}

/// A checkpoint, trajectory or primary-transcript name.
pub fn is_artifact_name(name: &str) -> bool {
    is_checkpoint_name(name)
        || is_trajectory_artifact(name)
        // `is_primary_transcript`, with the archive test only for names that may be one.
        || (name != "sessions.json"
            && name.ends_with(".jsonl")
            && !name.ends_with(".trajectory.jsonl")
            && !is_checkpoint_name(name)
            && !is_archive_name(name))
}

/// `is_archive_artifact`, answering at once for names without an archive marker.
pub fn is_archive_name(name: &str) -> bool {
    // Every archive name contains `.deleted.`, `.reset.` or `.bak.` (the legacy
    // `sessions.json.bak.<n>` too).
    (name.contains(".deleted.") || name.contains(".reset.") || name.contains(".bak."))
        && is_archive_artifact(name)
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

/// Sizes of the scanned files by canonical path: the directory's listing, by name (its
/// index built on the first lookup that needs it), and other files (which win over the
/// listing for the same name).
pub struct Sizes<'a> {
    dir: &'a Path,
    listed: &'a [DirFile<'a>],
    listed_by_name: OnceCell<HashMap<&'a str, u64, FixedState>>,
    named: HashMap<&'a str, u64, FixedState>,
    others: HashMap<&'a Path, u64, FixedState>,
}

impl<'a> Sizes<'a> {
    /// The sizes of the files `listed` directly in `dir`, then of the files `others` (by
    /// canonical path); a later size for the same file wins.
    pub fn new(
        dir: &'a Path,
        listed: &'a [DirFile<'a>],
        others: impl Iterator<Item = (&'a Path, u64)>,
    ) -> Self {
        let mut named = HashMap::default();
        let mut by_path = HashMap::default();
        for (p, size) in others {
            match name_in_dir(dir, p) {
                Some(name) => {
                    named.insert(name, size);
                }
                None => {
                    by_path.insert(p, size);
                }
            }
        }
        Sizes {
            dir,
            listed,
            listed_by_name: OnceCell::new(),
            named,
            others: by_path,
        }
    }

    /// The size of the scanned file `canonical`.
    pub fn get(&self, canonical: &Path) -> Option<u64> {
        match name_in_dir(self.dir, canonical) {
            Some(name) => self.named.get(name).copied().or_else(|| {
                let by_name = self.listed_by_name.get_or_init(|| {
                    let mut m =
                        HashMap::with_capacity_and_hasher(self.listed.len(), FixedState::default());
                    m.extend(self.listed.iter().map(|f| (f.name, f.size)));
                    m
                });
                by_name.get(name).copied()
            }),
            None => self.others.get(canonical).copied(),
        }
    }

    /// The size of the listed file `canonical`, whose listed size the caller has: what
    /// [`Sizes::get`] answers, without the listing's index.
    pub fn get_listed(&self, canonical: &Path, listed_size: u64) -> Option<u64> {
        match name_in_dir(self.dir, canonical) {
            Some(name) => Some(self.named.get(name).copied().unwrap_or(listed_size)),
            None => self.others.get(canonical).copied(),
        }
    }
}

/// Simulated or real removal bookkeeping shared by the budget and the pruner
/// (`removeFileForBudget`).
pub struct Remover<'g, 's> {
    /// Sizes of the scanned files by canonical path (what a dry run counts).
    pub sizes: Sizes<'s>,
    /// Files a dry run already counted.
    pub simulated: HashSet<PathBuf, FixedState>,
    /// Whether nothing is really removed.
    pub dry_run: bool,
    /// The directory guard doing real removals.
    pub guard: &'g mut DirGuard,
    /// A dry run's removals, in order (the paths a real run would remove).
    pub planned: Vec<PathBuf>,
}

impl Remover<'_, '_> {
    /// Removes (or simulates removing) one file; returns the bytes counted. `canonical`
    /// identifies it; `path` is what a real removal deletes.
    pub fn remove(&mut self, path: &Path, canonical: &Path, reason: RemovalReason) -> u64 {
        self.remove_sized(path, canonical, reason, None)
    }

    /// [`Remover::remove`] of a file of the listing, whose listed size the caller has.
    pub fn remove_listed(
        &mut self,
        path: &Path,
        canonical: &Path,
        listed_size: u64,
        reason: RemovalReason,
    ) -> u64 {
        self.remove_sized(path, canonical, reason, Some(listed_size))
    }

    fn remove_sized(
        &mut self,
        path: &Path,
        canonical: &Path,
        reason: RemovalReason,
        listed_size: Option<u64>,
    ) -> u64 {
        if self.dry_run {
            if self.simulated.contains(canonical) {
                return 0;
            }
            self.planned.push(path.to_path_buf());
            let size = match listed_size {
                Some(listed) => self.sizes.get_listed(canonical, listed),
                None => self.sizes.get(canonical),
            };
            let size = size.unwrap_or(0);
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
    pub exclude: &'a PathSet,
    /// Simulate only.
    pub dry_run: bool,
    /// The files the live entries reference, when already known.
    pub referenced: Option<&'a PathSet>,
}

/// The removals of an unreferenced-artifact pass planned on the directory as the rest
/// of the run's plan leaves it ([`plan_unreferenced`]), to be made with that plan.
#[derive(Debug, Default)]
pub struct PlannedUnreferenced {
    /// The pass's report, removals not counted yet ([`PlannedUnreferenced::count`]).
    pub report: UnreferencedReport,
    /// The files to remove, in the gateway's order (oldest first).
    pub removals: Vec<PathBuf>,
}

impl PlannedUnreferenced {
    /// Counts the bytes each planned removal freed (0: missing, empty, or left alone).
    pub fn count(&mut self, bytes: impl IntoIterator<Item = u64>) {
        for b in bytes {
            self.report.count(b);
        }
    }
}

/// `pruneUnreferencedSessionArtifacts` over the live entries of `ws`, planned on the
/// listing as `view` (the run's other changes, not made yet) leaves it: what the gateway
/// finds when it lists the directory after those changes. Nothing is removed.
pub fn plan_unreferenced(
    ws: &WorkingSet,
    paths: &SessionPaths,
    p: &PruneParams<'_>,
    view: &DirOverlay,
) -> PlannedUnreferenced {
    let (report, removable) = unreferenced_removable(ws, paths, p, Some(view));
    PlannedUnreferenced {
        report,
        removals: removable.into_iter().map(|f| f.path).collect(),
    }
}

/// `pruneUnreferencedSessionArtifacts` over the live entries of `ws`.
pub fn prune_unreferenced(
    ws: &WorkingSet,
    paths: &SessionPaths,
    guard: &mut DirGuard,
    p: &PruneParams<'_>,
) -> UnreferencedReport {
    let (mut report, removable) = unreferenced_removable(ws, paths, p, None);
    if !p.dry_run {
        let batch: Vec<PlannedRemoval<'_>> = removable
            .iter()
            .map(|f| PlannedRemoval {
                path: &f.path,
                reason: RemovalReason::Unreferenced,
                regular_only: false,
            })
            .collect();
        // The removals are independent of each other: one batch.
        for bytes in guard
            .archive_and_remove(&[], &batch, Some(paths.snapshot()))
            .1
        {
            report.count(bytes);
        }
        return report;
    }
    simulate_removals(report, &removable, paths, guard).0
}

/// The dry run of [`prune_unreferenced`] (`p.dry_run` is taken as set), with the files it
/// would remove and the bytes each counts (the cleanup plan's file rows).
pub fn simulate_unreferenced(
    ws: &WorkingSet,
    paths: &SessionPaths,
    guard: &mut DirGuard,
    p: &PruneParams<'_>,
) -> (UnreferencedReport, Vec<(PathBuf, u64)>) {
    let (report, removable) = unreferenced_removable(ws, paths, p, None);
    simulate_removals(report, &removable, paths, guard)
}

fn simulate_removals(
    mut report: UnreferencedReport,
    removable: &[SessionFile],
    paths: &SessionPaths,
    guard: &mut DirGuard,
) -> (UnreferencedReport, Vec<(PathBuf, u64)>) {
    let mut remover = Remover {
        sizes: Sizes::new(
            paths.real_dir(),
            &[],
            removable.iter().map(|f| (f.canonical.as_path(), f.size)),
        ),
        simulated: HashSet::default(),
        dry_run: true,
        guard,
        planned: Vec::new(),
    };
    let mut planned = Vec::with_capacity(removable.len());
    for f in removable {
        let before = remover.planned.len();
        let bytes = remover.remove(&f.path, &f.canonical, RemovalReason::Unreferenced);
        report.count(bytes);
        // A file counted already (by another name) is not a second row.
        if remover.planned.len() > before {
            planned.push((f.path.clone(), bytes));
        }
    }
    (report, planned)
}

/// The report of an unreferenced-artifact pass (removals not counted) and the files it
/// removes, oldest first: the directory's listing, or the listing as `view` leaves it.
fn unreferenced_removable(
    ws: &WorkingSet,
    paths: &SessionPaths,
    p: &PruneParams<'_>,
    view: Option<&DirOverlay>,
) -> (UnreferencedReport, Vec<SessionFile>) {
    let real_dir = paths.real_dir();
    let snap = paths.snapshot();
    let mut blobs = read_prompt_blob_files(real_dir);
    if let Some(view) = view {
        blobs.retain(|b| !view.is_gone(&b.canonical));
    }
    let computed;
    let referenced = match p.referenced {
        Some(r) => r,
        None => {
            computed = referenced_paths(ws, paths);
            &computed
        }
    };
    let refs = blob_ref_counts(ws);
    let now = p.now_ms as f64;
    let cutoff = now - p.older_than_ms as f64;
    let temp_cutoff = now - TEMP_STALE_MS as f64;
    let blob_cutoff = now - (p.older_than_ms.max(TEMP_STALE_MS)) as f64;
    let store_base = p
        .store_path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("");
    // Only the files that can be removed are stat-ed.
    let mut files: Vec<(SessionFile, bool)> = Vec::new();
    let mut scanned = 0u64;
    let mut consider = |name: &str, stat: &dyn Fn() -> Option<FileStat>| {
        scanned += 1;
        if p.exclude.contains_name(name) {
            return;
        }
        let temp = is_store_temp(name, store_base);
        if !temp && (!is_artifact_name(name) || referenced.contains_name(name)) {
            return;
        }
        let Some(st) = stat() else {
            return;
        };
        if st.mtime_ms <= if temp { temp_cutoff } else { cutoff } {
            let f = DirFile {
                name,
                size: st.size,
                mtime_ms: st.mtime_ms,
            };
            files.push((f.to_session_file(real_dir), false));
        }
    };
    match view {
        Some(view) => {
            for f in dir_files(snap, Some(view)) {
                let st = FileStat {
                    size: f.size,
                    mtime_ms: f.mtime_ms,
                };
                consider(f.name, &|| Some(st));
            }
        }
        None => {
            for i in snap.files() {
                consider(snap.name(i), &|| snap.stat(i));
            }
        }
    }
    let report = UnreferencedReport {
        scanned_files: scanned + blobs.len() as u64,
        older_than_ms: p.older_than_ms,
        ..Default::default()
    };
    for b in blobs {
        if !p.exclude.contains(&b.canonical)
            && is_blob_removable(&b, &refs, blob_cutoff, temp_cutoff)
        {
            files.push((b, true));
        }
    }
    files.sort_by(|a, b| a.0.mtime_ms.total_cmp(&b.0.mtime_ms));
    if !p.dry_run {
        // A blob is checked again with its current mtime, as the gateway does before
        // removing it.
        files.retain(|(f, is_blob)| {
            !is_blob
                || std::fs::metadata(&f.path).is_ok_and(|m| {
                    let fresh = SessionFile {
                        mtime_ms: super::files::mtime_ms(&m),
                        size: m.len(),
                        ..f.clone()
                    };
                    m.is_file() && is_blob_removable(&fresh, &refs, blob_cutoff, temp_cutoff)
                })
        });
    }
    (report, files.into_iter().map(|(f, _)| f).collect())
}

/// The temp files a killed write of this store left, by name in `names` (the sessions
/// directory's listing): the store's (`<store>.<pid>.<uuid>.tmp`) and its journals'
/// (`<store>.pending-archives.json.<pid>.<uuid>.tmp`, `….pending-removals.json.…`), whose
/// writer `pid` is not alive (and is not this process).
///
/// The gateway removes a store temp only once it is five minutes old (and counts it as an
/// unreferenced artifact then); one left by a clawstate write killed a moment ago would
/// outlive the run that follows. Under the store lock no clawstate writer of this store
/// is at work, so a temp whose writer is gone is garbage: the caller removes it after the
/// report is made, uncounted (the report stays the gateway's), and only while no gateway
/// is live (a gateway in another pid namespace would look dead).
pub fn dead_writer_temps<'a>(
    names: impl Iterator<Item = &'a str>,
    store_path: &Path,
) -> Vec<&'a str> {
    let store_base = store_path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("");
    if store_base.is_empty() {
        return Vec::new();
    }
    let journals = [
        format!("{store_base}.pending-archives.json"),
        format!("{store_base}.pending-removals.json"),
    ];
    let me = std::process::id();
    names
        .filter(|name| {
            name.len() > store_base.len()
                && name.as_bytes()[..store_base.len()].eq_ignore_ascii_case(store_base.as_bytes())
        })
        .filter(|name| {
            let base = match journals.iter().find(|j| is_store_temp(name, j)) {
                Some(j) => j.as_str(),
                None if is_store_temp(name, store_base) => store_base,
                None => return false,
            };
            // `<base>.<pid>.<uuid>.tmp`: the pid sits between the base and the last 41 bytes.
            let pid = name
                .get(base.len() + 1..name.len() - 41)
                .and_then(|p| p.parse::<u32>().ok());
            pid.is_some_and(|pid| pid != me && !crate::fs::process::is_alive(pid))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A listed file's size is its listed size unless another file of the same path says
    /// otherwise, whether asked with the listed size at hand or through the index.
    #[test]
    fn sizes_answer_alike_with_or_without_the_listed_size() {
        let dir = Path::new("/state/sessions");
        let listed = [
            DirFile {
                name: "a.jsonl",
                size: 10,
                mtime_ms: 0.0,
            },
            DirFile {
                name: "b.jsonl",
                size: 20,
                mtime_ms: 0.0,
            },
        ];
        let b = dir.join("b.jsonl");
        let blob = PathBuf::from("/state/sessions/skills-prompts/sha256/ab/x");
        let sizes = Sizes::new(
            dir,
            &listed,
            [(b.as_path(), 25), (blob.as_path(), 7)].into_iter(),
        );
        for (name, size) in [("a.jsonl", 10), ("b.jsonl", 20)] {
            let p = dir.join(name);
            assert_eq!(sizes.get_listed(&p, size), sizes.get(&p), "{name}");
        }
        assert_eq!(sizes.get(&dir.join("a.jsonl")), Some(10));
        assert_eq!(sizes.get(&b), Some(25));
        assert_eq!(sizes.get(&blob), Some(7));
        assert_eq!(sizes.get(&dir.join("c.jsonl")), None);
        assert_eq!(sizes.get_listed(&blob, 99), Some(7));
    }
}
