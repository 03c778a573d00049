//! The pending-archive journal: `cleanup --enforce` writes the store before it renames
//! the removed sessions' transcripts to `.deleted.<ts>` (so a failed store write changes
//! nothing, and the gateway never sees an entry whose transcript was archived away). The
//! planned renames are recorded in `<store>.pending-archives.json` first; a run killed
//! between the store write and the renames leaves the journal, and the next run finishes
//! those renames (for sessions the store no longer references) before anything else.
//!
//! The journal also lists the removed sessions' trajectory sidecars the run will delete
//! (`"removals"`: `[path, sessionId]` pairs): a run killed after its store write, before
//! they were all gone, would otherwise leave them for good (no entry names them any more,
//! and the unreferenced pass keeps them until they are old). The next run deletes those
//! of sessions the store no longer references ([`recover_removals`]).

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::archive::PlannedArchive;
use super::artifacts::PathSet;
use super::files::DirGuard;
use super::paths::{is_clean_absolute, split_clean};
use crate::atomic_file::{replace_file, sync_dir, AtomicWriteError, PendingReplace};

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

/// The `version` of the first form ([`Journal`]).
const PATHS_FORM: u32 = 1;
/// The `version` of the second form ([`SuffixJournal`]).
const SUFFIX_FORM: u32 = 2;

/// The first form: every rename with its two whole paths.
#[derive(serde::Serialize)]
struct Journal<'a> {
    version: u32,
    archives: Vec<JournalEntry<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    removals: Vec<JournalRemoval<'a>>,
}

/// Renames that share an archive suffix: `[name, sessionId]` pairs, each file `name`
/// in the directory renamed to `name` + `suffix`.
#[derive(serde::Serialize)]
struct SuffixGroup<'a> {
    suffix: &'a str,
    files: Vec<(&'a str, Option<&'a str>)>,
}

/// The second form, for renames that all add a suffix to a name in one directory (what
/// a cleanup plans): the directory once, then the names grouped by suffix (the clock
/// changes the suffix about once a millisecond). A 48k-rename journal is under a third of
/// the first form's size, and it is written and synced before the store.
#[derive(serde::Serialize)]
struct SuffixJournal<'a> {
    version: u32,
    dir: &'a str,
    archives: Vec<SuffixGroup<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    removals: Vec<JournalRemoval<'a>>,
}

/// The directory, name and added suffix of a planned rename, when it renames a file to
/// its own name plus a suffix in the same directory (all as UTF-8).
fn suffix_rename(a: &PlannedArchive) -> Option<(&str, &str, &str)> {
    suffix_rename_of(&a.from, &a.to)
}

/// [`suffix_rename`] of the rename of `from` to `to`.
fn suffix_rename_of<'a>(from: &'a Path, to: &'a Path) -> Option<(&'a str, &'a str, &'a str)> {
    // Clean absolute paths (the usual ones): the destination is the source's bytes and a
    // suffix without `/`; the source splits at its last `/`.
    if is_clean_absolute(from) && is_clean_absolute(to) {
        let (dir, name) = split_clean(from)?;
        let suffix = to
            .as_os_str()
            .as_encoded_bytes()
            .strip_prefix(from.as_os_str().as_encoded_bytes())?;
        if suffix.is_empty() || suffix.contains(&b'/') {
            return None;
        }
        let utf8 = std::str::from_utf8;
        return Some((utf8(dir).ok()?, utf8(name).ok()?, utf8(suffix).ok()?));
    }
    suffix_rename_by_components(from, to)
}

/// [`suffix_rename_of`] for any paths, by their components.
fn suffix_rename_by_components<'a>(
    from: &'a Path,
    to: &'a Path,
) -> Option<(&'a str, &'a str, &'a str)> {
    let (dir, name) = (from.parent()?.to_str()?, from.file_name()?.to_str()?);
    let suffix = to
        .file_name()?
        .to_str()?
        .strip_prefix(name)
        .filter(|s| !s.is_empty())?;
    (to.parent()? == from.parent()?).then_some((dir, name, suffix))
}

impl SuffixJournal<'_> {
    /// Its JSON text, as `serde_json` writes it (the reader's parser), written directly:
    /// 48k file names, each a JSON string, in one buffer sized up front.
    fn to_json(&self) -> Vec<u8> {
        let files: usize = self.archives.iter().map(|g| g.files.len()).sum();
        let name_bytes: usize = self
            .archives
            .iter()
            .flat_map(|g| &g.files)
            .map(|(n, id)| n.len() + id.map_or(4, str::len))
            .sum();
        let mut out = Vec::with_capacity(64 + self.dir.len() + name_bytes + 8 * files);
        push_journal_start(&mut out, self.version, self.dir);
        for (g, group) in self.archives.iter().enumerate() {
            if g > 0 {
                out.push(b',');
            }
            push_group_start(&mut out, group.suffix);
            for (f, (name, id)) in group.files.iter().enumerate() {
                if f > 0 {
                    out.push(b',');
                }
                push_file(&mut out, name, *id);
            }
            out.extend_from_slice(GROUP_END);
        }
        out.extend_from_slice(ARCHIVES_END);
        out.extend_from_slice(&removals_text(&self.removals));
        out.extend_from_slice(OBJECT_END);
        out
    }
}

/// `{"version":…,"dir":…,"archives":[`
fn push_journal_start(out: &mut Vec<u8>, version: u32, dir: &str) {
    out.extend_from_slice(b"{\"version\":");
    out.extend_from_slice(version.to_string().as_bytes());
    out.extend_from_slice(b",\"dir\":");
    push_json_string(out, dir);
    out.extend_from_slice(b",\"archives\":[");
}

/// `{"suffix":…,"files":[`
fn push_group_start(out: &mut Vec<u8>, suffix: &str) {
    out.extend_from_slice(b"{\"suffix\":");
    push_json_string(out, suffix);
    out.extend_from_slice(b",\"files\":[");
}

/// The end of a group's files and of the group.
const GROUP_END: &[u8] = b"]}";
/// The end of the archives.
const ARCHIVES_END: &[u8] = b"]";
/// The end of the journal.
const OBJECT_END: &[u8] = b"}";

/// `[name,sessionId]`
fn push_file(out: &mut Vec<u8>, name: &str, id: Option<&str>) {
    out.push(b'[');
    push_json_string(out, name);
    out.push(b',');
    match id {
        Some(id) => push_json_string(out, id),
        None => out.extend_from_slice(b"null"),
    }
    out.push(b']');
}

/// Part of the text of a journal of the second form with one suffix, made as the
/// renames are planned (the parts of a plan on the threads that plan them, in plan
/// order): [`journal_text`] joins them.
#[derive(Debug)]
pub struct JournalPart {
    text: Vec<u8>,
    files: usize,
    /// Whether every rename added was a name in the journal's directory renamed to
    /// itself plus its suffix.
    fits: bool,
}

impl JournalPart {
    /// An empty part, with room for about `n` renames.
    pub fn with_capacity(n: usize) -> Self {
        JournalPart {
            text: Vec::with_capacity(n * 96),
            files: 0,
            fits: true,
        }
    }

    /// Adds the rename of `from` to `to` (of `session_id`), planned in a journal of the
    /// directory `dir` whose renames add `suffix`.
    pub fn push(&mut self, dir: &str, suffix: &str, from: &Path, to: &Path, id: Option<&str>) {
        if !self.fits {
            return;
        }
        match suffix_rename_of(from, to) {
            Some((d, name, s)) if d == dir && s == suffix => {
                if self.files > 0 {
                    self.text.push(b',');
                }
                push_file(&mut self.text, name, id);
                self.files += 1;
            }
            _ => self.fits = false,
        }
    }
}

/// The text of a journal of the second form with one suffix, in the pieces it was made
/// in: written without being joined first ([`write_journal_text`]).
#[derive(Debug)]
pub struct JournalText {
    head: Vec<u8>,
    /// The parts with at least one rename, in order.
    parts: Vec<JournalPart>,
    /// `,"removals":[…]`, or nothing ([`JournalText::set_removals`]).
    removals: Vec<u8>,
}

impl JournalText {
    /// The text's pieces, in order.
    fn pieces(&self) -> impl Iterator<Item = &[u8]> {
        let parts = self.parts.iter().enumerate().flat_map(|(k, p)| {
            let separator: &[u8] = if k > 0 { b"," } else { b"" };
            [separator, p.text.as_slice()]
        });
        // Its one group ends, then the archives, the removals, the journal and its line.
        std::iter::once(self.head.as_slice()).chain(parts).chain([
            GROUP_END,
            ARCHIVES_END,
            self.removals.as_slice(),
            OBJECT_END,
            b"\n",
        ])
    }

    /// Lists `removals` (the trajectory sidecars the run will delete) in the journal.
    pub fn set_removals(&mut self, removals: &[(&Path, Option<&str>)]) {
        self.removals = removals_text(&journal_removals(removals));
    }

    /// The text's length in bytes.
    fn len(&self) -> usize {
        self.pieces().map(<[u8]>::len).sum()
    }
}

/// The journal text (with its final newline) of the renames of `parts`, in order: all in
/// `dir`, each adding `suffix`; `None` when one did not fit that form, or there are none
/// ([`write_journal`] then).
pub fn journal_text(dir: &str, suffix: &str, parts: Vec<JournalPart>) -> Option<JournalText> {
    if parts.iter().any(|p| !p.fits) || parts.iter().all(|p| p.files == 0) {
        return None;
    }
    let mut head = Vec::with_capacity(64 + dir.len() + suffix.len());
    push_journal_start(&mut head, SUFFIX_FORM, dir);
    push_group_start(&mut head, suffix);
    Some(JournalText {
        head,
        parts: parts.into_iter().filter(|p| p.files > 0).collect(),
        removals: Vec::new(),
    })
}

/// Records planned renames, durably, before the store is written, from their text made
/// as they were planned ([`journal_text`]): the text [`write_journal`] writes for them.
pub fn write_journal_text(path: &Path, text: &JournalText) -> Result<(), AtomicWriteError> {
    PendingReplace::prepare_pieces(path, text.len(), text.pieces(), 0o600)?.commit()
}

/// Appends `s` as a JSON string, escaped as `serde_json` escapes it; the usual name,
/// with nothing to escape, as it is.
fn push_json_string(out: &mut Vec<u8>, s: &str) {
    if s.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\') {
        out.push(b'"');
        out.extend_from_slice(s.as_bytes());
        out.push(b'"');
    } else {
        // Writing a string to a Vec cannot fail.
        let _ = serde_json::to_writer(&mut *out, s);
    }
}

/// The second form of `plan`, when every rename fits it.
fn suffix_journal<'a>(plan: &[&'a PlannedArchive]) -> Option<SuffixJournal<'a>> {
    let mut journal = SuffixJournal {
        version: SUFFIX_FORM,
        dir: suffix_rename(plan.first()?)?.0,
        archives: Vec::new(),
        removals: Vec::new(),
    };
    for a in plan {
        let (dir, name, suffix) = suffix_rename(a)?;
        if dir != journal.dir {
            return None;
        }
        let entry = (name, a.session_id.as_deref());
        match journal.archives.last_mut() {
            Some(group) if group.suffix == suffix => group.files.push(entry),
            _ => journal.archives.push(SuffixGroup {
                suffix,
                files: vec![entry],
            }),
        }
    }
    Some(journal)
}

/// Records the planned renames, durably, before the store is written.
pub fn write_journal<'a>(
    path: &Path,
    plan: impl IntoIterator<Item = &'a PlannedArchive>,
) -> Result<(), AtomicWriteError> {
    write_journal_with_removals(path, plan, &[])
}

/// [`write_journal`], with the trajectory sidecars the run will delete (`removals`).
pub fn write_journal_with_removals<'a>(
    path: &Path,
    plan: impl IntoIterator<Item = &'a PlannedArchive>,
    removals: &[(&Path, Option<&str>)],
) -> Result<(), AtomicWriteError> {
    let plan: Vec<&PlannedArchive> = plan.into_iter().collect();
    let text = match suffix_journal(&plan) {
        Some(mut journal) => {
            journal.removals = journal_removals(removals);
            Ok(journal.to_json())
        }
        None => serde_json::to_vec(&Journal {
            version: PATHS_FORM,
            archives: plan
                .iter()
                .map(|a| JournalEntry {
                    session_id: a.session_id.as_deref(),
                    from: a.from.to_string_lossy(),
                    to: a.to.to_string_lossy(),
                })
                .collect(),
            removals: journal_removals(removals),
        }),
    };
    let mut text = text.unwrap_or_default();
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

/// The renames a journal lists (`None`: no journal, or one that cannot be read). In the
/// second form, a name that is not a plain file name (`/`, `.`, `..`, empty) is dropped.
pub fn read_journal(path: &Path) -> Option<Vec<PlannedArchive>> {
    let text = std::fs::read_to_string(path).ok()?;
    let v: Value = serde_json::from_str(&text).ok()?;
    let list = v.get("archives")?.as_array()?;
    if v.get("version").and_then(Value::as_u64) == Some(u64::from(SUFFIX_FORM)) {
        let dir = Path::new(v.get("dir")?.as_str()?);
        let plain = |n: &str| !n.is_empty() && n != "." && n != ".." && !n.contains('/');
        let mut out = Vec::new();
        for group in list {
            let suffix = group.get("suffix").and_then(Value::as_str);
            let Some(suffix) = suffix.filter(|s| !s.contains('/')) else {
                continue;
            };
            for f in group
                .get("files")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let Some(name) = f.get(0).and_then(Value::as_str).filter(|n| plain(n)) else {
                    continue;
                };
                out.push(PlannedArchive {
                    session_id: f.get(1).and_then(Value::as_str).map(str::to_string),
                    from: dir.join(name),
                    to: dir.join(format!("{name}{suffix}")),
                    listed: None,
                });
            }
        }
        return Some(out);
    }
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
                    listed: None,
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
    live_ids: &crate::fx_hash::FxHashSet<&str>,
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

// ---------------------------------------------------------------------------------------
// The trajectory sidecars to delete (`"removals"`), kept apart from the renames above.

/// One file to delete, as the journal lists it: `[path, sessionId]`.
type JournalRemoval<'a> = (std::borrow::Cow<'a, str>, Option<&'a str>);

fn journal_removals<'a>(removals: &[(&'a Path, Option<&'a str>)]) -> Vec<JournalRemoval<'a>> {
    removals
        .iter()
        .map(|(p, id)| (p.to_string_lossy(), *id))
        .collect()
}

/// `,"removals":[[path,sessionId],…]` as `serde_json` writes it, or nothing for none.
fn removals_text(removals: &[JournalRemoval<'_>]) -> Vec<u8> {
    if removals.is_empty() {
        return Vec::new();
    }
    let mut out = b",\"removals\":[".to_vec();
    for (k, (p, id)) in removals.iter().enumerate() {
        if k > 0 {
            out.push(b',');
        }
        push_file(&mut out, p, *id);
    }
    out.push(b']');
    out
}

/// The files a journal lists to delete, with their sessions (none when there is no
/// journal, it cannot be read, or it lists none).
pub fn read_journal_removals(path: &Path) -> Vec<(PathBuf, Option<String>)> {
    let Some(v) = std::fs::read_to_string(path)
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
    else {
        return Vec::new();
    };
    let Some(list) = v.get("removals").and_then(Value::as_array) else {
        return Vec::new();
    };
    list.iter()
        .filter_map(|r| {
            let p = r.get(0)?.as_str()?;
            let id = r.get(1).and_then(Value::as_str).map(str::to_string);
            Some((PathBuf::from(p), id))
        })
        .collect()
}

/// Deletes the files a journal left by an interrupted run lists (its trajectory
/// sidecars), each unless its session or the file is still referenced by the current
/// store, and only a regular file reached through real directories below the sessions
/// directory ([`below_through_real_dirs`]). Returns how many were deleted.
pub fn recover_removals(
    removals: &[(PathBuf, Option<String>)],
    live_ids: &crate::fx_hash::FxHashSet<&str>,
    referenced: &PathSet,
    guard: &mut DirGuard,
) -> usize {
    let mut done = 0;
    for (p, id) in removals {
        if id.as_deref().is_some_and(|id| live_ids.contains(id))
            || referenced.contains(p)
            || !below_through_real_dirs(guard.real_dir(), p)
        {
            continue;
        }
        let existed = std::fs::symlink_metadata(p).is_ok();
        guard.remove_regular(p, super::files::RemovalReason::Trajectory);
        if existed && std::fs::symlink_metadata(p).is_err() {
            done += 1;
        }
    }
    guard.sync();
    done
}

/// Whether `p` is a clean absolute path below `dir` whose every directory between the two
/// is a real directory (not a link): a path read from disk leads nowhere else.
pub(super) fn below_through_real_dirs(dir: &Path, p: &Path) -> bool {
    if !is_clean_absolute(p) {
        return false;
    }
    let Ok(rest) = p.strip_prefix(dir) else {
        return false;
    };
    let parts: Vec<_> = rest.components().collect();
    if parts.is_empty() {
        return false;
    }
    let mut at = dir.to_path_buf();
    for c in &parts[..parts.len() - 1] {
        at.push(c);
        if !std::fs::symlink_metadata(&at).is_ok_and(|m| m.is_dir()) {
            return false;
        }
    }
    true
}

#[cfg(test)]
mod removal_tests {
    use super::*;
    use crate::fx_hash::FxHashSet;

    /// Both forms and the text made while planning list the removals; the next run
    /// deletes those of sessions gone from the store, never one still referenced, one of
    /// a live session, or one reached through a link.
    #[test]
    fn removals_round_trip_and_recover() {
        let d = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(d.path()).unwrap();
        std::fs::create_dir(root.join("runtimes")).unwrap();
        std::os::unix::fs::symlink("/etc", root.join("lnk")).unwrap();
        let j = journal_path(&root.join("sessions.json"));
        let files = [
            (root.join("a.trajectory.jsonl"), Some("a")),
            (root.join("runtimes/a.jsonl"), Some("a")),
            (root.join("b.trajectory.jsonl"), Some("b")),
            (root.join("c.trajectory.jsonl"), Some("c")),
            (root.join("lnk/passwd"), None),
        ];
        let removals: Vec<(&Path, Option<&str>)> =
            files.iter().map(|(p, id)| (p.as_path(), *id)).collect();
        let plan = vec![PlannedArchive {
            session_id: Some("a".into()),
            from: root.join("a.jsonl"),
            to: root.join("a.jsonl.deleted.1"),
            listed: None,
        }];
        let expected: Vec<(PathBuf, Option<String>)> = files
            .iter()
            .map(|(p, id)| (p.clone(), id.map(str::to_string)))
            .collect();
        // The second form, written whole and from its planned text; then the first.
        write_journal_with_removals(&j, &plan, &removals).unwrap();
        assert_eq!(read_journal_removals(&j), expected);
        let mut part = JournalPart::with_capacity(1);
        part.push(
            root.to_str().unwrap(),
            ".deleted.1",
            &plan[0].from,
            &plan[0].to,
            Some("a"),
        );
        let mut text = journal_text(root.to_str().unwrap(), ".deleted.1", vec![part]).unwrap();
        text.set_removals(&removals);
        write_journal_text(&j, &text).unwrap();
        let whole = d.path().join("whole.json");
        write_journal_with_removals(&whole, &plan, &removals).unwrap();
        assert_eq!(
            std::fs::read(&j).unwrap(),
            std::fs::read(&whole).unwrap(),
            "the text made while planning is the text written whole"
        );
        assert_eq!(read_journal(&j).unwrap(), plan);
        let odd = vec![PlannedArchive {
            to: root.join("renamed.jsonl"),
            ..plan[0].clone()
        }];
        write_journal_with_removals(&j, &odd, &removals).unwrap();
        assert_eq!(read_journal_removals(&j), expected);
        for (p, _) in &files[..4] {
            std::fs::write(p, "x").unwrap();
        }
        let live: FxHashSet<&str> = ["b"].into_iter().collect();
        let mut referenced = PathSet::new(&root);
        referenced.extend([root.join("c.trajectory.jsonl")]);
        let mut g = DirGuard::new(&root);
        assert_eq!(recover_removals(&expected, &live, &referenced, &mut g), 2);
        assert!(!files[0].0.exists() && !files[1].0.exists());
        assert!(files[2].0.exists() && files[3].0.exists());
        assert!(Path::new("/etc/passwd").exists());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fx_hash::FxHashSet;

    /// The journal's text, written directly, is the text `serde_json` writes for it, for
    /// names and ids that need escaping or not, absent ids, and several groups.
    #[test]
    fn suffix_journal_text_is_what_serde_writes() {
        let odd = [
            "plain.jsonl",
            "q\"uote",
            "back\\slash",
            "tab\tand\u{1}",
            "é\u{7f}✓",
            "",
        ];
        for (dir, groups) in [("/srv/s", 0), ("/srv/s", 1), ("/srv/\"odd\\dir\n", 3)] {
            let archives: Vec<SuffixGroup<'_>> = (0..groups)
                .map(|g| SuffixGroup {
                    suffix: [".deleted.2026-01-01T00-00-00.000Z", ".x\"y"][g % 2],
                    files: odd
                        .iter()
                        .enumerate()
                        .map(|(k, n)| (*n, (k % 3 != 0).then_some(odd[(k + g) % odd.len()])))
                        .collect(),
                })
                .collect();
            let removals: Vec<JournalRemoval<'_>> = odd
                .iter()
                .take(groups)
                .map(|n| (std::borrow::Cow::Borrowed(*n), (groups > 1).then_some(*n)))
                .collect();
            let journal = SuffixJournal {
                version: SUFFIX_FORM,
                dir,
                archives,
                removals,
            };
            let text = journal.to_json();
            assert_eq!(
                String::from_utf8(text.clone()).unwrap(),
                serde_json::to_string(&journal).unwrap(),
                "{dir} {groups}"
            );
            serde_json::from_slice::<Value>(&text).unwrap();
        }
    }

    /// The bytes road of clean absolute paths answers as the component road does.
    #[test]
    fn suffix_renames_alike_on_both_roads() {
        let plan = |from: &str, to: &str| PlannedArchive {
            session_id: None,
            from: PathBuf::from(from),
            to: PathBuf::from(to),
            listed: None,
        };
        let cases = [
            plan("/s/a.jsonl", "/s/a.jsonl.deleted.t"),
            plan("/s/a.jsonl", "/t/a.jsonl.deleted.t"),
            plan("/s/a.jsonl", "/s/a.jsonl"),
            plan("/s/a.jsonl", "/s/b.jsonl.deleted.t"),
            plan("/a.jsonl", "/a.jsonl.x"),
            plan("/s/sub/é.jsonl", "/s/sub/é.jsonl.deleted.t"),
            plan("/s/a.jsonl", "/s/a.jsonl/x"),
            plan("/s/a", "/s/ab"),
            plan("/s/a", "/sa.x"),
        ];
        for a in &cases {
            assert_eq!(
                suffix_rename(a),
                suffix_rename_by_components(&a.from, &a.to),
                "{a:?}"
            );
        }
        assert_eq!(
            suffix_rename(&cases[0]),
            Some(("/s", "a.jsonl", ".deleted.t"))
        );
    }

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
                listed: None,
            })
            .collect();
        for id in ["a", "b", "c"] {
            std::fs::write(root.join(format!("{id}.jsonl")), id).unwrap();
        }
        write_journal(&j, &plan).unwrap();
        // The second form: the directory once, then `[name, sessionId]` by suffix.
        let value = serde_json::json!({"version": 2, "dir": root.to_str().unwrap(), "archives": [
            {"suffix": ".deleted.2026-01-01T00-00-00.000Z", "files": [["a.jsonl", "a"], ["b.jsonl", "b"], ["c.jsonl", "c"]]},
        ]});
        let expected = format!("{}\n", serde_json::to_string(&value).unwrap());
        assert_eq!(std::fs::read_to_string(&j).unwrap(), expected);
        assert_eq!(read_journal(&j).unwrap(), plan);
        // "b" is referenced again by the store: it stays.
        let live: FxHashSet<&str> = ["b"].into_iter().collect();
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

    /// Renames that do not all add a suffix in one directory keep the first form, whose
    /// journals (left by earlier runs too) still read back; a second-form journal drops
    /// names that are not plain file names.
    #[test]
    fn both_forms_read_back() {
        let d = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(d.path()).unwrap();
        let j = journal_path(&root.join("sessions.json"));
        let plan = vec![
            PlannedArchive {
                session_id: Some("a".into()),
                from: root.join("a.jsonl"),
                to: root.join("a.jsonl.deleted.1"),
                listed: None,
            },
            PlannedArchive {
                session_id: None,
                from: root.join("b.jsonl"),
                to: root.join("renamed.jsonl"),
                listed: None,
            },
        ];
        write_journal(&j, &plan).unwrap();
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&j).unwrap()).unwrap();
        assert_eq!(v["version"], 1);
        assert_eq!(read_journal(&j).unwrap(), plan);
        // Two suffixes, two groups, in plan order.
        let grouped = vec![
            PlannedArchive {
                session_id: None,
                from: root.join("x.jsonl"),
                to: root.join("x.jsonl.deleted.1"),
                listed: None,
            },
            PlannedArchive {
                session_id: Some("y".into()),
                from: root.join("y.jsonl"),
                to: root.join("y.jsonl.deleted.2"),
                listed: None,
            },
            PlannedArchive {
                session_id: Some("z".into()),
                from: root.join("z.jsonl"),
                to: root.join("z.jsonl.deleted.1"),
                listed: None,
            },
        ];
        write_journal(&j, &grouped).unwrap();
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&j).unwrap()).unwrap();
        assert_eq!(v["version"], 2);
        assert_eq!(v["archives"].as_array().unwrap().len(), 3);
        assert_eq!(read_journal(&j).unwrap(), grouped);
        let hostile = serde_json::json!({"version": 2, "dir": root.to_str().unwrap(), "archives": [
            {"suffix": ".d", "files": [["../x", "x"], ["..", null], ["", null], ["ok.jsonl", null]]},
            {"suffix": "/../escape", "files": [["ok.jsonl", null]]},
        ]});
        std::fs::write(&j, hostile.to_string()).unwrap();
        let read = read_journal(&j).unwrap();
        assert_eq!(read.len(), 1);
        assert_eq!(read[0].to, root.join("ok.jsonl.d"));
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
            listed: None,
        }];
        write_journal(&j, &plan).unwrap();
        let mut g = DirGuard::new(&root);
        let done = recover_journal(&j, &FxHashSet::default(), &PathSet::new(&root), &mut g);
        assert_eq!(done, 0);
        assert_eq!(std::fs::read_to_string(top.join("victim")).unwrap(), "keep");
        assert!(!top.join("victim.deleted").exists());
    }
}
