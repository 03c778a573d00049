//! The cleanup plan as data: one row per entry a run removes or repairs and one per file
//! it archives or removes, the rows `cleanup --ndjson` prints before each store's summary
//! (with `--dry-run`, what it would do; with `--enforce -v`, what it did).
//!
//! The rows are clawstate's own (the gateway prints only the summary); the summary stays
//! the gateway's, byte for byte ([`super::report`]). An entry row's `bytes` is its
//! transcript's size, taken from the file rows of the same run where a row names it
//! (the transcript is archived or removed by then), else from the directory.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::config::MaintenanceConfig;
use super::files::{FileEvent, RemovalReason};
use super::paths::SessionPaths;
use super::report::{Action, ActionRow};

/// What a run does to an entry, in the row's `action` words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryAction {
    /// Older than `pruneAfter` (`prune-stale`).
    Prune,
    /// Over `maxEntries` (`cap-overflow`).
    Cap,
    /// Evicted by the disk budget.
    Budget,
    /// `--fix-missing`: its transcript is missing or holds no message.
    Missing,
    /// `--fix-dm-scope`: a per-peer DM entry under `dmScope` `main`.
    DmScope,
    /// A stale model-run probe.
    ModelRun,
    /// `--fix-missing` repaired its `sessionFile` (the entry stays).
    Repair,
}

impl EntryAction {
    /// The word of the row's `action`.
    pub fn as_str(self) -> &'static str {
        match self {
            EntryAction::Prune => "prune",
            EntryAction::Cap => "cap",
            EntryAction::Budget => "budget",
            EntryAction::Missing => "missing",
            EntryAction::DmScope => "dmScope",
            EntryAction::ModelRun => "modelRun",
            EntryAction::Repair => "repair",
        }
    }

    /// The row action of a gateway action label (`None`: kept as is).
    pub fn of(action: Action) -> Option<Self> {
        Some(match action {
            Action::RetireDmScope => EntryAction::DmScope,
            Action::PruneMissing => EntryAction::Missing,
            Action::PruneModelRun => EntryAction::ModelRun,
            Action::PruneStale => EntryAction::Prune,
            Action::CapOverflow => EntryAction::Cap,
            Action::EvictBudget => EntryAction::Budget,
            Action::RepairSessionFile => EntryAction::Repair,
            Action::Keep => return None,
        })
    }
}

/// One entry a run removes or repairs.
#[derive(Debug, Clone, PartialEq)]
pub struct EntryChange {
    /// The store key.
    pub key: String,
    /// What happens to it.
    pub action: EntryAction,
    /// Why, in words with the rule's setting.
    pub reason: String,
    /// `now - updatedAt` (`None` without a numeric `updatedAt`).
    pub age_ms: Option<i64>,
    /// Its transcript's size (`None`: no transcript found).
    pub bytes: Option<u64>,
}

impl EntryChange {
    /// The NDJSON row: `key`, `action`, `reason`, `ageMs`, `bytes`.
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("key".into(), Value::from(self.key.clone()));
        m.insert("action".into(), Value::from(self.action.as_str()));
        m.insert("reason".into(), Value::from(self.reason.clone()));
        m.insert("ageMs".into(), self.age_ms.map_or(Value::Null, Value::from));
        m.insert("bytes".into(), self.bytes.map_or(Value::Null, Value::from));
        Value::Object(m)
    }
}

/// What a run does to a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileAction {
    /// Renamed to its `.deleted.<ts>` archive name.
    Archive,
    /// Deleted.
    Remove,
}

impl FileAction {
    /// The word of the row's `action`.
    pub fn as_str(self) -> &'static str {
        match self {
            FileAction::Archive => "archive",
            FileAction::Remove => "remove",
        }
    }
}

/// The rule that archives or removes a file, in the row's `rule` words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileRule {
    /// The transcript of an entry the run removes.
    RemovedEntry,
    /// A trajectory sidecar of a removed session.
    Trajectory,
    /// An archive older than its retention.
    ArchiveRetention,
    /// The disk budget.
    DiskBudget,
    /// An unreferenced artifact.
    Unreferenced,
    /// The temp file of a killed store or journal write.
    DeadWriterTemp,
}

impl FileRule {
    /// The word of the row's `rule`.
    pub fn as_str(self) -> &'static str {
        match self {
            FileRule::RemovedEntry => "removedEntry",
            FileRule::Trajectory => "trajectory",
            FileRule::ArchiveRetention => "archiveRetention",
            FileRule::DiskBudget => "diskBudget",
            FileRule::Unreferenced => "unreferenced",
            FileRule::DeadWriterTemp => "deadWriterTemp",
        }
    }

    /// The rule of a file removal.
    pub fn of(reason: RemovalReason) -> Self {
        match reason {
            RemovalReason::Trajectory => FileRule::Trajectory,
            RemovalReason::ArchiveRetention => FileRule::ArchiveRetention,
            RemovalReason::DiskBudget => FileRule::DiskBudget,
            RemovalReason::Unreferenced => FileRule::Unreferenced,
            RemovalReason::DeadWriterTemp => FileRule::DeadWriterTemp,
        }
    }
}

/// One file a run archives or removes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    /// The file.
    pub path: PathBuf,
    /// Archive or remove.
    pub action: FileAction,
    /// Which rule.
    pub rule: FileRule,
    /// Its size (`None`: unknown, e.g. gone meanwhile).
    pub bytes: Option<u64>,
    /// An archive's new name.
    pub to: Option<PathBuf>,
}

impl FileChange {
    /// The NDJSON row: `path`, `action`, `rule`, `bytes` (and `to` for an archive).
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("path".into(), Value::from(self.path.to_string_lossy()));
        m.insert("action".into(), Value::from(self.action.as_str()));
        m.insert("rule".into(), Value::from(self.rule.as_str()));
        m.insert("bytes".into(), self.bytes.map_or(Value::Null, Value::from));
        if let Some(to) = &self.to {
            m.insert("to".into(), Value::from(to.to_string_lossy()));
        }
        Value::Object(m)
    }
}

/// The size of a file, from the directory listing when it lies directly in it, else by
/// `lstat` (links not followed; nothing is opened).
pub fn file_size(paths: &SessionPaths, p: &Path) -> Option<u64> {
    let snap = paths.snapshot();
    if let Some(name) = super::paths::name_in_dir(paths.real_dir(), p) {
        if let Some(i) = snap.lookup(name.as_bytes()) {
            return snap.stat(i).map(|s| s.size);
        }
    }
    std::fs::symlink_metadata(p)
        .ok()
        .filter(|m| m.is_file())
        .map(|m| m.len())
}

/// The file rows of what a run did, from its events (archives and removals; files left
/// alone or failed are reported as warnings instead).
pub fn file_changes_done(events: &[FileEvent]) -> Vec<FileChange> {
    events
        .iter()
        .filter_map(|e| match e {
            FileEvent::Archived { from, to } => Some(FileChange {
                path: from.clone(),
                action: FileAction::Archive,
                rule: FileRule::RemovedEntry,
                // Renamed, not changed: the archive has the transcript's size.
                bytes: std::fs::symlink_metadata(to)
                    .ok()
                    .filter(|m| m.is_file())
                    .map(|m| m.len()),
                to: Some(to.clone()),
            }),
            FileEvent::Removed {
                path,
                reason,
                bytes,
            } => Some(FileChange {
                path: path.clone(),
                action: FileAction::Remove,
                rule: FileRule::of(*reason),
                bytes: Some(*bytes),
                to: None,
            }),
            FileEvent::Skipped { .. } | FileEvent::Failed { .. } => None,
        })
        .collect()
}

/// The reason text of an entry row.
fn reason(action: EntryAction, entry: &Map<String, Value>, m: &MaintenanceConfig) -> String {
    match action {
        EntryAction::Prune => format!(
            "updatedAt older than session.maintenance.pruneAfter ({} ms)",
            m.prune_after_ms
        ),
        EntryAction::Cap => format!(
            "beyond the newest session.maintenance.maxEntries ({})",
            m.max_entries
        ),
        EntryAction::Budget => format!(
            "evicted to bring the sessions directory under session.maintenance.maxDiskBytes ({})",
            m.max_disk_bytes.unwrap_or(0)
        ),
        EntryAction::Missing => "transcript missing or holds no message (--fix-missing)".into(),
        EntryAction::DmScope => {
            "per-peer direct-message entry under session.dmScope \"main\" (--fix-dm-scope)".into()
        }
        EntryAction::ModelRun => format!(
            "model-run probe older than {} ms, with the store over maxEntries",
            m.model_run_prune_after_ms
        ),
        EntryAction::Repair => match entry.get("sessionFile").and_then(Value::as_str) {
            Some(f) => format!("stale generated sessionFile repaired to {f} (--fix-missing)"),
            None => "stale generated sessionFile repaired (--fix-missing)".into(),
        },
    }
}

/// The entry rows of a run's action rows (entries kept as they are have none), in store
/// order; each transcript's size from `files` where a file row names it, else from the
/// directory.
pub fn entry_changes(
    rows: &[ActionRow],
    files: &[FileChange],
    paths: &SessionPaths,
    maintenance: &MaintenanceConfig,
    now_ms: i64,
) -> Vec<EntryChange> {
    let sized: HashMap<&Path, u64> = files
        .iter()
        .filter_map(|f| Some((f.path.as_path(), f.bytes?)))
        .collect();
    rows.iter()
        .filter_map(|r| {
            let action = EntryAction::of(r.action)?;
            let text = |k: &str| r.entry.get(k).and_then(Value::as_str);
            let bytes = paths
                .archive_candidates(text("sessionId"), text("sessionFile"))
                .iter()
                .find_map(|c| {
                    let c = paths.canonical(c);
                    sized
                        .get(c.as_path())
                        .copied()
                        .or_else(|| file_size(paths, &c))
                });
            let age_ms = r
                .entry
                .get("updatedAt")
                .and_then(Value::as_f64)
                .filter(|t| t.is_finite())
                .map(|t| now_ms - t as i64);
            Some(EntryChange {
                key: r.key.clone(),
                action,
                reason: reason(action, &r.entry, maintenance),
                age_ms,
                bytes,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_carry_the_named_fields() {
        let e = EntryChange {
            key: "agent:main:x".into(),
            action: EntryAction::Prune,
            reason: "r".into(),
            age_ms: Some(5),
            bytes: None,
        };
        assert_eq!(
            crate::js::jsjson::to_string_compact(&e.to_json()),
            r#"{"key":"agent:main:x","action":"prune","reason":"r","ageMs":5,"bytes":null}"#
        );
        let f = FileChange {
            path: "/s/a.jsonl".into(),
            action: FileAction::Archive,
            rule: FileRule::RemovedEntry,
            bytes: Some(3),
            to: Some("/s/a.jsonl.deleted.x".into()),
        };
        assert_eq!(
            crate::js::jsjson::to_string_compact(&f.to_json()),
            r#"{"path":"/s/a.jsonl","action":"archive","rule":"removedEntry","bytes":3,"to":"/s/a.jsonl.deleted.x"}"#
        );
    }

    #[test]
    fn every_gateway_action_but_keep_has_a_row_action() {
        assert_eq!(EntryAction::of(Action::Keep), None);
        assert_eq!(EntryAction::of(Action::CapOverflow), Some(EntryAction::Cap));
        assert_eq!(
            EntryAction::of(Action::EvictBudget).map(EntryAction::as_str),
            Some("budget")
        );
    }
}
