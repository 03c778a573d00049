//! The pending-removals journal: the disk budget's file removals, recorded before they are
//! made, so that a run killed among them is finished by the next one.
//!
//! The budget removes files until the directory is under its high-water mark, but acts
//! only while it is over its maximum: a run killed halfway leaves the directory between
//! the two, where the next run's budget does nothing, and the end state differs from an
//! uninterrupted run's. So the planned removals are written to
//! `<store>.pending-removals.json` first, and the next run makes those still to make.
//!
//! They were planned against the store the run writes last (the budget may remove
//! entries): they are valid only once that store is in place. The journal names a key
//! that store no longer holds (`unlessKey`, when the write was still to come); while the
//! store holds it, the write did not happen, nothing is removed, and the next run's own
//! budget decides from the same state. The pending-archive journal ([`super::journal`])
//! covers the renames and the trajectory sidecars.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use super::artifacts::PathSet;
use super::files::{DirGuard, RemovalReason};
use super::journal::{confine_file, read_journal_value, JournalError};
use crate::fs::atomic_file::{replace_file, sync_dir, AtomicWriteError};

/// The pending-removals journal of the store at `store_path`.
pub fn removal_journal_path(store_path: &Path) -> PathBuf {
    let name = store_path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    store_path.with_file_name(format!("{name}.pending-removals.json"))
}

/// Records the planned removals, durably, before the store write they depend on (named by
/// `unless_key`, a key that write removes; `None`: the store is in place already).
pub fn write_removal_journal(
    path: &Path,
    unless_key: Option<&str>,
    removals: &[PathBuf],
) -> Result<(), AtomicWriteError> {
    let files: Vec<String> = removals
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let mut text = json!({"version": 1, "unlessKey": unless_key, "removals": files}).to_string();
    text.push('\n');
    replace_file(path, text.as_bytes(), 0o600)
}

/// Finishes the removals of a journal left by an interrupted run, when the store it was
/// planned against is in place (`store_has_key` says the store no longer holds its key):
/// each file the current store does not reference. The journal is removed. Returns how
/// many files went.
///
/// As the pending-archive journal ([`super::journal`]): a journal that does not read back,
/// or names a file outside the sessions directory (`sessions_dir` as configured) or
/// through a link, is refused whole, nothing removed and the journal left in place.
pub fn recover_removal_journal(
    path: &Path,
    sessions_dir: &Path,
    store_has_key: impl Fn(&str) -> bool,
    referenced: &PathSet,
    guard: &mut DirGuard,
) -> Result<usize, JournalError> {
    let Some(v) = read_journal_value(path)? else {
        return Ok(0);
    };
    let real_dir = guard.real_dir().to_path_buf();
    let mut files = Vec::new();
    for p in v
        .get("removals")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let Some(p) = p.as_str() else {
            return Err(JournalError::Malformed {
                path: path.to_path_buf(),
                why: "a removal is not a path".into(),
            });
        };
        files.push(confine_file(path, Path::new(p), &real_dir, sessions_dir)?);
    }
    let mut done = 0;
    let written = v
        .get("unlessKey")
        .and_then(Value::as_str)
        .is_none_or(|k| !store_has_key(k));
    if written {
        for file in &files {
            let p = file.path();
            if referenced.contains(p) {
                continue;
            }
            let existed = !matches!(file.kind(), Ok(None));
            guard.remove(p, RemovalReason::DiskBudget);
            if existed && matches!(file.kind(), Ok(None)) {
                done += 1;
            }
        }
        guard.sync();
    }
    remove_removal_journal(path);
    Ok(done)
}

/// Removes the journal once its removals are done (durably: the directory is synced).
pub fn remove_removal_journal(path: &Path) {
    if std::fs::remove_file(path).is_ok() {
        if let Some(dir) = path.parent() {
            let _ = sync_dir(dir);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn removals_wait_for_the_store_they_were_planned_against() {
        let d = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(d.path()).unwrap();
        let j = removal_journal_path(&root.join("sessions.json"));
        assert_eq!(j, root.join("sessions.json.pending-removals.json"));
        std::fs::create_dir(root.join("sub")).unwrap();
        std::os::unix::fs::symlink("/etc", root.join("lnk")).unwrap();
        let files = [
            root.join("a.jsonl"),
            root.join("sub/b.jsonl"),
            root.join("kept.jsonl"),
        ];
        for f in &files {
            std::fs::write(f, "x").unwrap();
        }
        let plan = files.to_vec();
        // The store still holds the key: its write did not happen, nothing goes.
        write_removal_journal(&j, Some("agent:main:evicted"), &plan).unwrap();
        let mut g = DirGuard::new(&root);
        let referenced = PathSet::new(&root);
        assert_eq!(
            recover_removal_journal(&j, &root, |_| true, &referenced, &mut g).unwrap(),
            0
        );
        assert!(!j.exists() && files.iter().all(|f| f.exists()));
        // It is gone: every planned file inside goes, but a referenced one.
        write_removal_journal(&j, Some("agent:main:evicted"), &plan).unwrap();
        let mut referenced = PathSet::new(&root);
        referenced.extend([root.join("kept.jsonl")]);
        let mut g = DirGuard::new(&root);
        assert_eq!(
            recover_removal_journal(&j, &root, |_| false, &referenced, &mut g).unwrap(),
            2
        );
        assert!(!files[0].exists() && !files[1].exists() && files[2].exists());
        assert!(!j.exists());
        // A journal naming a file through a link or `..` is refused whole: nothing goes,
        // and it stays for the admin to look at.
        for hostile in [root.join("lnk/passwd"), root.join("sub/../../x")] {
            std::fs::write(&files[2], "x").unwrap();
            write_removal_journal(&j, None, &[files[2].clone(), hostile.clone()]).unwrap();
            let mut g = DirGuard::new(&root);
            let e = recover_removal_journal(&j, &root, |_| false, &PathSet::new(&root), &mut g);
            assert!(
                matches!(e, Err(JournalError::Outside { .. })),
                "{hostile:?}: {e:?}"
            );
            assert!(files[2].exists() && j.exists(), "{hostile:?}");
        }
        assert!(Path::new("/etc/passwd").exists());
    }
}
