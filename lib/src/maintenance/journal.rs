//! The pending-archive journal: `cleanup --enforce` writes the store before it renames
//! the removed sessions' transcripts to `.deleted.<ts>` (so a failed store write changes
//! nothing, and the gateway never sees an entry whose transcript was archived away). The
//! planned renames are recorded in `<store>.pending-archives.json` first; a run killed
//! between the store write and the renames leaves the journal, and the next run finishes
//! those renames (for sessions the store no longer references) before anything else.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::archive::PlannedArchive;
use super::artifacts::PathSet;
use super::files::DirGuard;
use crate::atomic_file::{replace_file, sync_dir, AtomicWriteError};

/// The journal of the store at `store_path`.
pub fn journal_path(store_path: &Path) -> PathBuf {
    let name = store_path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    store_path.with_file_name(format!("{name}.pending-archives.json"))
}

#[derive(serde::Serialize)]
struct JournalEntry<'a> {
    #[serde(rename = "sessionId")]
    session_id: Option<&'a str>,
    from: std::borrow::Cow<'a, str>,
    to: std::borrow::Cow<'a, str>,
}

#[derive(serde::Serialize)]
struct Journal<'a> {
    version: u32,
    archives: Vec<JournalEntry<'a>>,
}

/// Records the planned renames, durably, before the store is written.
pub fn write_journal<'a>(
    path: &Path,
    plan: impl IntoIterator<Item = &'a PlannedArchive>,
) -> Result<(), AtomicWriteError> {
    let journal = Journal {
        version: 1,
        archives: plan
            .into_iter()
            .map(|a| JournalEntry {
                session_id: a.session_id.as_deref(),
                from: a.from.to_string_lossy(),
                to: a.to.to_string_lossy(),
            })
            .collect(),
    };
    let mut text = serde_json::to_vec(&journal).unwrap_or_default();
    text.push(b'\n');
    replace_file(path, &text, 0o600)
}

/// Removes the journal once its renames are done (durably: the directory is synced).
pub fn remove_journal(path: &Path) {
    if std::fs::remove_file(path).is_ok() {
        if let Some(dir) = path.parent() {
            let _ = sync_dir(dir);
        }
    }
}

/// The renames a journal lists (`None`: no journal, or one that cannot be read).
pub fn read_journal(path: &Path) -> Option<Vec<PlannedArchive>> {
    let text = std::fs::read_to_string(path).ok()?;
    let v: Value = serde_json::from_str(&text).ok()?;
    let list = v.get("archives")?.as_array()?;
    Some(
        list.iter()
            .filter_map(|a| {
                Some(PlannedArchive {
                    session_id: a
                        .get("sessionId")
                        .and_then(Value::as_str)
                        .map(str::to_string),
                    from: PathBuf::from(a.get("from")?.as_str()?),
                    to: PathBuf::from(a.get("to")?.as_str()?),
                })
            })
            .collect(),
    )
}

/// Finishes the renames of a journal left by an interrupted run: each transcript whose
/// session and file no entry of the current store references, that is still there, and
/// whose archive name is free, is archived. A run interrupted before its store write left
/// the store referencing them, so nothing is renamed then. The journal is removed.
/// Returns how many files were archived.
pub fn recover_journal(
    path: &Path,
    live_ids: &std::collections::HashSet<&str>,
    referenced: &PathSet,
    guard: &mut DirGuard,
) -> usize {
    let Some(plan) = read_journal(path) else {
        if path.exists() {
            guard.events.push(super::files::FileEvent::Skipped {
                path: path.to_path_buf(),
                why: "unreadable pending-archive journal: left in place".into(),
            });
        }
        return 0;
    };
    let mut done = 0;
    for a in &plan {
        if a.session_id
            .as_deref()
            .is_some_and(|id| live_ids.contains(id))
            || referenced.contains(&a.from)
            || std::fs::symlink_metadata(&a.to).is_ok()
            || a.from.parent() != a.to.parent()
        {
            continue;
        }
        if guard.archive(&a.from, &a.to) {
            done += 1;
        }
    }
    guard.sync();
    remove_journal(path);
    done
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn round_trip_and_recovery() {
        let d = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(d.path()).unwrap();
        let store = root.join("sessions.json");
        let j = journal_path(&store);
        assert_eq!(j, root.join("sessions.json.pending-archives.json"));
        let plan: Vec<PlannedArchive> = ["a", "b", "c"]
            .iter()
            .map(|id| PlannedArchive {
                session_id: Some(id.to_string()),
                from: root.join(format!("{id}.jsonl")),
                to: root.join(format!("{id}.jsonl.deleted.2026-01-01T00-00-00.000Z")),
            })
            .collect();
        for id in ["a", "b", "c"] {
            std::fs::write(root.join(format!("{id}.jsonl")), id).unwrap();
        }
        write_journal(&j, &plan).unwrap();
        // The same bytes as a compact `{"version", "archives": [{sessionId, from, to}]}`.
        let value = serde_json::json!({"version": 1, "archives": plan.iter().map(|a| serde_json::json!({
            "sessionId": a.session_id, "from": a.from.to_string_lossy(), "to": a.to.to_string_lossy(),
        })).collect::<Vec<_>>()});
        let expected = format!("{}\n", serde_json::to_string(&value).unwrap());
        assert_eq!(std::fs::read_to_string(&j).unwrap(), expected);
        assert_eq!(read_journal(&j).unwrap(), plan);
        // "b" is referenced again by the store: it stays.
        let live: HashSet<&str> = ["b"].into_iter().collect();
        let mut g = DirGuard::new(&root);
        let done = recover_journal(&j, &live, &PathSet::new(&root), &mut g);
        assert_eq!(done, 2);
        assert!(!j.exists());
        assert!(root.join("b.jsonl").exists());
        assert!(!root.join("a.jsonl").exists());
        assert_eq!(
            std::fs::read_to_string(root.join("c.jsonl.deleted.2026-01-01T00-00-00.000Z")).unwrap(),
            "c"
        );
    }

    #[test]
    fn a_journal_never_renames_outside_the_directory() {
        let d = tempfile::tempdir().unwrap();
        let top = std::fs::canonicalize(d.path()).unwrap();
        let root = top.join("sessions");
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::write(top.join("victim"), "keep").unwrap();
        let j = journal_path(&root.join("sessions.json"));
        let sneaky = root.join("sub/../../victim");
        let plan = vec![PlannedArchive {
            session_id: Some("x".into()),
            from: sneaky.clone(),
            to: root.join("sub/../../victim.deleted"),
        }];
        write_journal(&j, &plan).unwrap();
        let mut g = DirGuard::new(&root);
        let done = recover_journal(&j, &HashSet::new(), &PathSet::new(&root), &mut g);
        assert_eq!(done, 0);
        assert_eq!(std::fs::read_to_string(top.join("victim")).unwrap(), "keep");
        assert!(!top.join("victim.deleted").exists());
    }
}
