//! What happens to the files of removed entries (`store.md` §4.7): transcripts are
//! archived as `<name>.deleted.<ts>` when no remaining entry shares the session, their
//! trajectory sidecars are removed, and old archives are deleted by the timestamp in
//! their name (archive retention).

use std::collections::HashSet;
use std::hash::BuildHasher;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use foldhash::fast::FixedState;
use hashbrown::HashTable;
use serde_json::Value;

use super::dir_snapshot::DirSnapshot;
use super::files::{
    DirGuard, DirOverlay, FileEvent, PlannedRemoval, RemovalReason, RenameBatch, RenamePairs,
    RenamesUnderway,
};
use super::journal;
use super::paths::{strictly_inside, trajectory_paths, SessionPaths};
use super::planned_archive::PlannedArchive;
use super::store_pass::Facts;
use crate::js;
use crate::session::artifact::{
    archive_name_suffix, archive_path_with, archive_time, ArchiveReason,
};

/// Removed sessions and the `sessionFile` to archive for each (`removedSessionFiles`):
/// keyed by sessionId (which may be absent), in first-removal order; a later entry with
/// a `sessionFile` replaces the remembered file.
#[derive(Debug, Clone, Default)]
pub struct RemovedSessions {
    order: Vec<(Option<String>, Option<String>)>,
    /// Positions in `order`, by the hash of their sessionId ([`session_hash`]).
    index: HashTable<usize>,
}

/// The hash [`RemovedSessions`] files a sessionId (or its absence) under.
fn session_hash(id: Option<&str>) -> u64 {
    FixedState::default().hash_one(id)
}

impl RemovedSessions {
    /// Room for `n` removed sessions without growing.
    pub fn with_capacity(n: usize) -> Self {
        RemovedSessions {
            order: Vec::with_capacity(n),
            index: HashTable::with_capacity(n),
        }
    }

    /// Remembers a removed entry (`rememberRemovedSessionFile`).
    pub fn remember(&mut self, entry: &Facts) {
        let RemovedSessions { order, index } = self;
        let id = entry.session_id.as_deref();
        let hash = session_hash(id);
        match index.find(hash, |&i| order[i].0.as_deref() == id) {
            Some(&i) => {
                if let Some(file) = entry.session_file.as_deref().filter(|f| !f.is_empty()) {
                    order[i].1 = Some(file.to_string());
                }
            }
            None => {
                index.insert_unique(hash, order.len(), |&i| session_hash(order[i].0.as_deref()));
                order.push((entry.session_id.clone(), entry.session_file.clone()));
            }
        }
    }

    /// Whether nothing was remembered.
    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    /// The remembered sessions, in order.
    pub fn iter(&self) -> impl Iterator<Item = (Option<&str>, Option<&str>)> {
        self.order.iter().map(|(a, b)| (a.as_deref(), b.as_deref()))
    }
}

/// Plans archiving the transcripts of removed sessions that no remaining entry
/// references (`archiveRemovedSessionTranscripts` restricted to the store directory):
/// existing regular files, not already gone in `overlay`, each once. The renames are
/// added to `overlay`; [`make_file_changes`] does them. With `journal`, the text of their
/// journal comes too ([`journal::journal_text`]), made by the threads that find the files
/// (`None`: the plan does not fit that form, or is empty; [`journal::write_journal`]
/// writes it then).
pub fn plan_archives(
    removed: &RemovedSessions,
    referenced_ids: &HashSet<&str, FixedState>,
    paths: &SessionPaths,
    overlay: &mut DirOverlay,
    clock: &dyn Fn() -> i64,
    journal: bool,
) -> (Vec<PlannedArchive>, Option<journal::JournalText>) {
    let sessions: Vec<(Option<&str>, Option<&str>)> = removed
        .iter()
        .filter(|(id, _)| !id.is_some_and(|id| referenced_ids.contains(id)))
        .collect();
    // One archive time for the whole plan: each archive's name is known as soon as its
    // file is found.
    let suffix = archive_name_suffix(ArchiveReason::Deleted, clock());
    let journal_dir = paths.real_dir().to_str().filter(|_| journal);
    // Which files each session may archive depends on nothing planned: found on two
    // threads for many sessions (their journal text too), then taken in order against
    // the overlay.
    type Found = Vec<(usize, PathBuf, PathBuf, Option<usize>)>;
    let found = |from: usize, part: &[(Option<&str>, Option<&str>)]| {
        let mut out: Found = Vec::with_capacity(part.len());
        let mut text = journal_dir.map(|_| journal::JournalPart::with_capacity(part.len()));
        for (k, &(id, file)) in part.iter().enumerate() {
            for candidate in paths.archive_candidates(id, file) {
                // Most are plain files directly in the directory: one lookup says it.
                let (c, listed) = match paths.listed_regular_file(&candidate) {
                    Some(None) => continue,
                    Some(listed) => (candidate, listed),
                    None => {
                        let c = paths.canonical(&candidate);
                        // A regular file (from the listing, for one directly in the
                        // directory).
                        if !(paths.is_inside(&c) && paths.is_regular_file(&c)) {
                            continue;
                        }
                        (c, None)
                    }
                };
                let to = archive_path_with(&c, &suffix);
                if let (Some(text), Some(dir)) = (text.as_mut(), journal_dir) {
                    text.push(dir, &suffix, &c, &to, id);
                }
                out.push((from + k, c, to, listed));
            }
        }
        (out, text)
    };
    let (files, parts) = if sessions.len() >= PARALLEL_PLAN_MIN {
        let half = sessions.len() / 2;
        let (first, second) = sessions.split_at(half);
        let ((mut files, a), (rest, b)) =
            super::at_once::at_once(|| found(0, first), || found(half, second));
        files.extend(rest);
        (files, a.into_iter().chain(b).collect::<Vec<_>>())
    } else {
        let (files, a) = found(0, &sessions);
        (files, a.into_iter().collect())
    };
    let mut out: Vec<PlannedArchive> = Vec::with_capacity(files.len());
    overlay.reserve_renames(files.len());
    let mut all_planned = true;
    for (k, c, to, listed) in files {
        // Each once: a file an earlier session archives is gone.
        let planned = match listed {
            Some(i) => overlay.rename_listed_unless_gone(paths.snapshot(), i, &c, &to),
            None => overlay.rename_unless_gone(&c, &to),
        };
        if !planned {
            all_planned = false;
            continue;
        }
        out.push(PlannedArchive {
            session_id: sessions[k].0.map(str::to_string),
            from: c,
            to,
            listed,
        });
    }
    // The text lists every file found: it is the plan's when each was planned.
    let text = journal_dir
        .filter(|_| all_planned)
        .and_then(|dir| journal::journal_text(dir, &suffix, parts));
    (out, text)
}

/// From how many sessions [`plan_archives`] looks for their files on two threads.
const PARALLEL_PLAN_MIN: usize = 4096;

/// The directories a plan archives into, in order.
pub fn archive_dirs(plan: &[PlannedArchive]) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    for a in plan {
        if let Some(d) = a.to.parent() {
            if !dirs.iter().any(|x| x == d) {
                dirs.push(d.to_path_buf());
            }
        }
    }
    dirs
}

/// The file changes of an apply run, made after the store write (`store.md` §4.7, §4.8).
#[derive(Debug, Clone, Copy, Default)]
pub struct PlannedFileChanges<'a> {
    /// Transcripts of removed sessions to archive.
    pub archives: &'a [PlannedArchive],
    /// Their trajectory sidecars.
    pub trajectories: &'a [PathBuf],
    /// Archives past their retention.
    pub expired: &'a [PathBuf],
    /// The disk budget's files.
    pub budget: &'a [PathBuf],
    /// Unreferenced artifacts (planned on the directory as the changes above leave it).
    pub unreferenced: &'a [PathBuf],
    /// The listing the changes were planned on.
    pub listing: Option<&'a Arc<DirSnapshot>>,
}

/// The renames of `archives`, in the order of `listing` (to start them ahead of the rest
/// of their plan: [`DirGuard::start_renames`], then [`make_file_changes`]).
pub fn archive_batch(
    archives: &Arc<Vec<PlannedArchive>>,
    listing: Option<&Arc<DirSnapshot>>,
) -> RenameBatch {
    RenameBatch::new(Arc::clone(archives) as Arc<dyn RenamePairs>, listing)
}

/// Makes `plan` in the gateway's order (archives, trajectory sidecars, expired archives,
/// the budget's files), as [`DirGuard::finish_batch`] does a batch: recorded in that
/// order, the removals that touch no archived file made meanwhile. `underway`: the
/// plan's archives, already started ([`archive_batch`]).
pub fn make_file_changes<'a>(
    plan: &PlannedFileChanges<'a>,
    underway: Option<RenamesUnderway>,
    guard: &mut DirGuard,
) -> FileChangesMade {
    let underway = underway.unwrap_or_else(|| {
        let archives = Arc::new(plan.archives.to_vec());
        guard.start_renames(archive_batch(&archives, plan.listing))
    });
    let removal = |reason, regular_only| {
        move |p: &'a PathBuf| PlannedRemoval {
            path: p.as_path(),
            reason,
            regular_only,
        }
    };
    let removals: Vec<PlannedRemoval<'a>> = plan
        .trajectories
        .iter()
        .map(removal(RemovalReason::Trajectory, true))
        .chain(
            plan.expired
                .iter()
                .map(removal(RemovalReason::ArchiveRetention, false)),
        )
        .chain(
            plan.budget
                .iter()
                .map(removal(RemovalReason::DiskBudget, false)),
        )
        .chain(
            plan.unreferenced
                .iter()
                .map(removal(RemovalReason::Unreferenced, false)),
        )
        .collect();
    let (archived, mut bytes) = guard.finish_batch(underway, &removals, plan.listing.map(|s| &**s));
    let expired = plan.trajectories.len()..plan.trajectories.len() + plan.expired.len();
    let expired_removed = bytes[expired].iter().filter(|&&b| b > 0).count() as u64;
    let unreferenced_bytes = bytes.split_off(removals.len() - plan.unreferenced.len());
    FileChangesMade {
        archived,
        expired_removed,
        unreferenced_bytes,
    }
}

/// What [`make_file_changes`] did, for the report.
#[derive(Debug, Clone, Default)]
pub struct FileChangesMade {
    /// How many transcripts were archived (renamed).
    pub archived: usize,
    /// How many expired archives were removed (by retention).
    pub expired_removed: u64,
    /// The bytes each unreferenced artifact's removal freed, in plan order.
    pub unreferenced_bytes: Vec<u64>,
}

/// The largest trajectory pointer read (the gateway writes about 200 bytes).
const POINTER_MAX_BYTES: u64 = 1 << 20;

/// `readTrajectoryPointerFile`: the pointer's `runtimeFile` when the pointer is a regular
/// file for this session.
fn pointer_runtime_file(pointer: &Path, session_id: Option<&str>, cwd: &Path) -> Option<PathBuf> {
    let meta = std::fs::symlink_metadata(pointer).ok()?;
    if !meta.is_file() {
        return None;
    }
    let bytes = crate::fs::data_file::open_named(pointer)
        .and_then(|f| f.read_limited(POINTER_MAX_BYTES, "a trajectory pointer"))
        .ok()?;
    let text = String::from_utf8(bytes).ok()?;
    let v: Value = crate::js::jsjson::parse_value(&text).ok()?;
    let o = v.as_object()?;
    let runtime = o.get("runtimeFile")?.as_str()?;
    let ok = o.get("traceSchema").and_then(Value::as_str) == Some("openclaw-trajectory-pointer")
        && o.get("schemaVersion").and_then(Value::as_f64) == Some(1.0)
        && o.get("sessionId").and_then(Value::as_str) == session_id
        && !js::trim(runtime).is_empty();
    ok.then(|| crate::install::paths::absolutize(Path::new(runtime), cwd))
}

/// `safeTrajectorySessionFileName`: the id with every UTF-16 unit outside
/// `[A-Za-z0-9_-]` turned into `_`, at most 120 units, `session` without an alphanumeric.
pub fn safe_trajectory_name(session_id: &str) -> String {
    let units: Vec<char> = session_id
        .encode_utf16()
        .take(120)
        .map(|u| match char::from_u32(u as u32) {
            Some(c) if c.is_ascii_alphanumeric() || c == '_' || c == '-' => c,
            _ => '_',
        })
        .collect();
    let s: String = units.into_iter().collect();
    if s.bytes().any(|b| b.is_ascii_alphanumeric()) {
        s
    } else {
        "session".into()
    }
}

/// Whether the gateway would delete a runtime file outside the directory: a regular
/// (non-link) file named after the session whose first line is its runtime event.
fn runtime_matches_session(runtime: &Path, resolved: &Path, session_id: &str) -> bool {
    use std::io::Read;
    if resolved.file_name().and_then(|n| n.to_str())
        != Some(&format!("{}.jsonl", safe_trajectory_name(session_id)))
    {
        return false;
    }
    if !std::fs::symlink_metadata(runtime).is_ok_and(|m| m.is_file()) {
        return false;
    }
    let mut buf = vec![0u8; 64 * 1024];
    let Ok(n) = crate::fs::data_file::open_named(resolved)
        .map_err(|e| std::io::Error::other(e.to_string()))
        .and_then(|f| f.into_file().read(&mut buf))
    else {
        return false;
    };
    let text = String::from_utf8_lossy(&buf[..n]);
    let Some(first) = text
        .split('\n')
        .map(|l| js::trim(l.strip_suffix('\r').unwrap_or(l)))
        .find(|l| !l.is_empty())
    else {
        return false;
    };
    crate::js::jsjson::parse_value(first).is_ok_and(|v| {
        v.get("traceSchema").and_then(Value::as_str) == Some("openclaw-trajectory")
            && v.get("schemaVersion").and_then(Value::as_f64) == Some(1.0)
            && v.get("source").and_then(Value::as_str) == Some("runtime")
            && v.get("sessionId").and_then(Value::as_str) == Some(session_id)
    })
}

/// Plans `removeRemovedSessionTrajectoryArtifacts` restricted to the store directory:
/// for each removed, unreferenced session, its `.trajectory.jsonl` and
/// `.trajectory-path.json` next to its transcript, and the pointer's runtime file when
/// that lies inside the directory (regular files only; added to `overlay`). A runtime file
/// outside the directory is reported, never deleted.
pub fn plan_trajectories(
    removed: &RemovedSessions,
    referenced_ids: &HashSet<&str, FixedState>,
    paths: &SessionPaths,
    guard: &mut DirGuard,
    overlay: &mut DirOverlay,
    cwd: &Path,
) -> PlannedTrajectories {
    let store_dir = paths.real_dir().to_path_buf();
    let mut out: Vec<PathBuf> = Vec::new();
    let mut ids: Vec<Option<String>> = Vec::new();
    let mut plan = |p: &Path, guard: &DirGuard, out: &mut Vec<PathBuf>| {
        let c = paths.canonical(p);
        if guard.is_regular_inside(p) && !overlay.is_gone(&c) {
            overlay.remove(&c);
            out.push(p.to_path_buf());
        }
    };
    for (id, file) in removed.iter() {
        // Each file planned so far belongs to the sessions before this one.
        ids.resize(out.len(), None);
        if id.is_some_and(|id| referenced_ids.contains(id)) {
            continue;
        }
        let Some(transcript) = paths.session_file_path(id, file) else {
            continue;
        };
        let (default_runtime, pointer) = trajectory_paths(&transcript);
        if !paths.may_exist(&default_runtime) && !paths.may_exist(&pointer) {
            continue;
        }
        let session = id.map(str::to_string);
        let pointed = pointer_runtime_file(&pointer, id, cwd);
        let default_canonical = paths.canonical(&default_runtime);
        let mut runtimes = vec![default_runtime.clone()];
        if let Some(p) = pointed {
            if p != default_runtime {
                runtimes.push(p);
            }
        }
        for runtime in runtimes {
            let resolved = paths.canonical(&runtime);
            let within = strictly_inside(&store_dir, &resolved);
            if resolved == default_canonical || within {
                if within {
                    plan(&runtime, guard, &mut out);
                }
                continue;
            }
            // The gateway would delete a matching runtime file outside the directory.
            if id.is_some_and(|id| runtime_matches_session(&runtime, &resolved, id)) {
                guard.events.push(FileEvent::Skipped {
                    path: resolved,
                    why: "trajectory runtime file outside the sessions directory: reported, not deleted"
                        .into(),
                });
            }
        }
        if strictly_inside(&store_dir, &paths.canonical(&pointer)) {
            plan(&pointer, guard, &mut out);
        }
        ids.resize(out.len(), session);
    }
    PlannedTrajectories {
        paths: out,
        session_ids: ids,
    }
}

/// The trajectory sidecars planned for removal ([`plan_trajectories`]), each with its
/// session (for the pending-archive journal).
#[derive(Debug, Clone, Default)]
pub struct PlannedTrajectories {
    /// The files, in the gateway's order.
    pub paths: Vec<PathBuf>,
    /// The session of each file.
    pub session_ids: Vec<Option<String>>,
}

impl PlannedTrajectories {
    /// The files with their sessions, as the journal lists them.
    pub fn journal_entries(&self) -> Vec<(&Path, Option<&str>)> {
        self.paths
            .iter()
            .zip(&self.session_ids)
            .map(|(p, id)| (p.as_path(), id.as_deref()))
            .collect()
    }
}

/// One archive-retention rule: archives of `reason` older than `older_than_ms`.
#[derive(Debug, Clone, Copy)]
pub struct RetentionRule {
    /// The archive reason.
    pub reason: ArchiveReason,
    /// The age threshold.
    pub older_than_ms: u64,
}

/// Plans `cleanupArchivedSessionTranscripts`: the archives in `dirs` (as `overlay`
/// leaves them) whose name timestamp is older than their rule (strict `>`; the first rule
/// whose reason parses decides). The removals are added to `overlay`.
pub fn plan_retention(
    dirs: &[PathBuf],
    rules: &[RetentionRule],
    now_ms: i64,
    overlay: &mut DirOverlay,
    listing: Option<&DirSnapshot>,
) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    // A name without any rule's marker has no archive time for any rule.
    let markers: Vec<String> = rules
        .iter()
        .map(|r| format!(".{}.", r.reason.as_str()))
        .collect();
    for dir in dirs {
        if !seen.insert(dir.clone()) {
            continue;
        }
        // The directory as listed already (nothing changed it since), else read now.
        let listed: Vec<String>;
        let names_now: Box<dyn Iterator<Item = &str>> =
            match listing.filter(|s| s.readable() && s.dir() == dir.as_path()) {
                Some(snap) => Box::new((0..snap.len()).map(|i| snap.name(i))),
                None => {
                    let Ok(rd) = std::fs::read_dir(dir) else {
                        continue;
                    };
                    listed = rd
                        .flatten()
                        .filter_map(|e| e.file_name().into_string().ok())
                        .collect();
                    Box::new(listed.iter().map(String::as_str))
                }
            };
        // (name, planned: known to be a regular file once the plan is made)
        let mut buf = dir.clone();
        let mut names: Vec<(String, bool)> = Vec::new();
        for n in names_now {
            if !markers.iter().any(|m| n.contains(m.as_str())) {
                continue;
            }
            buf.push(n);
            let gone = overlay.is_gone(&buf);
            buf.pop();
            if !gone {
                names.push((n.to_string(), false));
            }
        }
        names.extend(
            overlay
                .renamed_into(dir)
                .filter_map(|to| to.file_name()?.to_str().map(|n| (n.to_string(), true))),
        );
        for (name, planned) in names {
            for rule in rules {
                let Some(ts) = archive_time(&name, rule.reason) else {
                    continue;
                };
                if (now_ms - ts) as i128 > rule.older_than_ms as i128 {
                    let full = dir.join(&name);
                    if planned || std::fs::metadata(&full).is_ok_and(|m| m.is_file()) {
                        overlay.remove(&full);
                        out.push(full);
                    }
                }
                break;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn safe_names() {
        assert_eq!(safe_trajectory_name("abc.def"), "abc_def");
        assert_eq!(safe_trajectory_name("..."), "session");
        assert_eq!(safe_trajectory_name("a😀"), "a__");
    }

    #[test]
    fn remembered_files() {
        let mut r = RemovedSessions::default();
        let e = |id: &str, file: Option<&str>| Facts {
            session_id: Some(id.into()),
            session_file: file.map(Into::into),
            ..Default::default()
        };
        r.remember(&e("a", Some("x.jsonl")));
        r.remember(&e("a", None));
        r.remember(&e("b", None));
        r.remember(&e("b", Some("y.jsonl")));
        let got: Vec<_> = r.iter().collect();
        assert_eq!(
            got,
            [(Some("a"), Some("x.jsonl")), (Some("b"), Some("y.jsonl"))]
        );
        // Entries without a sessionId are one session; an empty sessionFile replaces
        // nothing; the index grows past its room and finds every session again.
        let mut r = RemovedSessions::with_capacity(1);
        let none = |file: &str| Facts {
            session_file: Some(file.into()),
            ..Default::default()
        };
        r.remember(&none("n1"));
        for k in 0..500 {
            r.remember(&e(&format!("s{k}"), Some(&format!("{k}.jsonl"))));
        }
        r.remember(&none(""));
        r.remember(&e("s7", Some("")));
        r.remember(&e("s9", Some("nine.jsonl")));
        let got: Vec<_> = r.iter().collect();
        assert_eq!(got.len(), 501);
        assert_eq!(got[0], (None, Some("n1")));
        assert_eq!(got[8], (Some("s7"), Some("7.jsonl")));
        assert_eq!(got[10], (Some("s9"), Some("nine.jsonl")));
        assert_eq!(got[500], (Some("s499"), Some("499.jsonl")));
    }

    #[test]
    fn archives_are_planned_in_session_order_each_file_once_on_either_road() {
        let d = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(d.path()).unwrap();
        let paths = SessionPaths::new(&root.join("sessions.json"), &root, None, &root);
        // Enough sessions for two threads, and few for one. Session k and k + n/2 (one
        // in each half) share a sessionFile; every third transcript is missing.
        for n in [PARALLEL_PLAN_MIN + 10, 10] {
            let mut removed = RemovedSessions::default();
            let half = n / 2;
            for k in 0..n {
                let shared = format!("{}/s{}.jsonl", root.display(), k % half);
                let e = Facts {
                    session_id: Some(format!("s{k}-{n}")),
                    session_file: Some(shared),
                    ..Default::default()
                };
                removed.remember(&e);
            }
            for k in (0..half).filter(|k| k % 3 != 0) {
                std::fs::write(root.join(format!("s{k}.jsonl")), "x").unwrap();
            }
            let mut overlay = DirOverlay::default();
            let (plan, _) = plan_archives(
                &removed,
                &HashSet::default(),
                &paths,
                &mut overlay,
                &|| 0,
                false,
            );
            let want: Vec<(Option<String>, PathBuf)> = (0..half)
                .filter(|k| k % 3 != 0)
                .map(|k| (Some(format!("s{k}-{n}")), root.join(format!("s{k}.jsonl"))))
                .collect();
            let got: Vec<_> = plan
                .iter()
                .map(|a| (a.session_id.clone(), a.from.clone()))
                .collect();
            assert_eq!(got, want, "{n} sessions");
            for k in 0..half {
                let _ = std::fs::remove_file(root.join(format!("s{k}.jsonl")));
            }
        }
    }

    /// The journal text made while the archives are planned (on one thread or two) is
    /// the text `write_journal` writes for the plan; a plan that archives a file once
    /// for two sessions, or a name outside the directory's plain form, has none.
    #[test]
    fn the_journal_made_while_planning_is_the_one_written_after() {
        let d = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(d.path()).unwrap();
        std::fs::create_dir(root.join("sub")).unwrap();
        for n in [PARALLEL_PLAN_MIN + 10, 10] {
            let paths = SessionPaths::new(&root.join("sessions.json"), &root, None, &root);
            let mut removed = RemovedSessions::default();
            for k in 0..n {
                let name = match k {
                    3 => "q\"uote.jsonl".to_string(),
                    _ => format!("s{k}.jsonl"),
                };
                if k % 5 != 0 {
                    std::fs::write(root.join(&name), "x").unwrap();
                }
                removed.remember(&Facts {
                    session_id: (k != 4).then(|| format!("id{k}")),
                    session_file: Some(format!("{}/{name}", root.display())),
                    ..Default::default()
                });
            }
            let plan_with = |removed: &RemovedSessions, overlay: &mut DirOverlay, journal| {
                let clock = || 1_700_000_000_000;
                let none = HashSet::default();
                plan_archives(removed, &none, &paths, overlay, &clock, journal)
            };
            let mut overlay = DirOverlay::over(Arc::clone(paths.snapshot()));
            let (plan, text) = plan_with(&removed, &mut overlay, true);
            assert_eq!(plan.len(), n - n.div_ceil(5), "{n} sessions");
            let (written, made) = (root.join("written.json"), root.join("made.json"));
            journal::write_journal(&written, &plan).unwrap();
            let text = text.expect("a plan of plain renames in one directory");
            journal::write_journal_text(&made, &text).unwrap();
            let read = |p: &Path| std::fs::read_to_string(p).unwrap();
            assert_eq!(read(&made), read(&written));
            let renames = |plan: &[PlannedArchive]| -> Vec<(Option<String>, PathBuf, PathBuf)> {
                plan.iter()
                    .map(|a| (a.session_id.clone(), a.from.clone(), a.to.clone()))
                    .collect()
            };
            let read_back = journal::read_journal(&made)
                .unwrap()
                .expect("a journal the reader reads")
                .archives;
            assert_eq!(renames(&read_back), renames(&plan));
            // Without a journal asked for, the same plan.
            let (same, none) = plan_with(&removed, &mut DirOverlay::default(), false);
            assert_eq!(same, plan);
            assert!(none.is_none());
            // A file archived once for two sessions, or one in a subdirectory: no text.
            let s1 = format!("{}/s1.jsonl", root.display());
            let t = format!("{}/sub/t.jsonl", root.display());
            std::fs::write(&t, "x").unwrap();
            for (first, second) in [
                (s1.clone(), s1),
                (format!("{}/s2.jsonl", root.display()), t),
            ] {
                let mut more = RemovedSessions::default();
                for (id, f) in [("a", first), ("b", second)] {
                    more.remember(&Facts {
                        session_id: Some(id.into()),
                        session_file: Some(f),
                        ..Default::default()
                    });
                }
                let (planned, text) = plan_with(&more, &mut DirOverlay::default(), true);
                assert!(!planned.is_empty());
                assert!(text.is_none(), "{:?}", planned.last());
            }
            for e in std::fs::read_dir(&root).unwrap().flatten() {
                if e.file_type().unwrap().is_file() {
                    std::fs::remove_file(e.path()).unwrap();
                }
            }
        }
    }

    #[test]
    fn retention_by_name_timestamp() {
        let d = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(d.path()).unwrap();
        for n in [
            "a.jsonl.reset.2020-01-01T00-00-00.000Z",
            "b.jsonl.deleted.2020-01-01T00-00-00.000Z",
            "c.jsonl.bak.2020-01-01T00-00-00.000Z",
            "d.jsonl.reset.2020-01-01T00-00-00Z",
            "e.jsonl.reset.garbage",
            "f.jsonl.reset.2099-01-01T00-00-00.000Z",
        ] {
            std::fs::write(root.join(n), "x").unwrap();
        }
        let mut g = DirGuard::new(&root);
        let mut overlay = DirOverlay::default();
        let rules = [
            RetentionRule {
                reason: ArchiveReason::Deleted,
                older_than_ms: 86_400_000,
            },
            RetentionRule {
                reason: ArchiveReason::Reset,
                older_than_ms: 86_400_000,
            },
        ];
        let planned = plan_retention(
            std::slice::from_ref(&root),
            &rules,
            1_800_000_000_000,
            &mut overlay,
            None,
        );
        assert_eq!(planned.len(), 3);
        assert!(overlay.is_gone(&root.join("b.jsonl.deleted.2020-01-01T00-00-00.000Z")));
        let plan = PlannedFileChanges {
            expired: &planned,
            ..Default::default()
        };
        assert_eq!(make_file_changes(&plan, None, &mut g).expired_removed, 3);
        let mut left: Vec<String> = std::fs::read_dir(&root)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        left.sort();
        assert_eq!(
            left,
            [
                "c.jsonl.bak.2020-01-01T00-00-00.000Z",
                "e.jsonl.reset.garbage",
                "f.jsonl.reset.2099-01-01T00-00-00.000Z"
            ]
        );
    }
}
