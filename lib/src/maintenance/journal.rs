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

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use foldhash::fast::FixedState;
use serde_json::Value;
use thiserror::Error;

use super::artifacts::PathSet;
use super::files::DirGuard;
use super::planned_archive::PlannedArchive;
use crate::exit::{self, ExitCode};
use crate::fs::atomic_file::{replace_file, sync_dir, AtomicWriteError, PendingReplace};
use crate::fs::clean_path::{is_clean_absolute, split_clean};
use crate::fs::data_file::{DataDir, DataPath};

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

/// A pending-archive journal that cannot be trusted: it is refused whole and nothing is
/// renamed (exit 65). Only clawstate writes journals, atomically; one that does not read
/// back, or names a file outside the sessions directory, was not written by it.
#[derive(Debug, Error)]
pub enum JournalError {
    /// The journal cannot be read as a journal.
    #[error("{path}: malformed clawstate journal: {why}; nothing was changed (remove it if it is not clawstate's)")]
    Malformed {
        /// The journal.
        path: PathBuf,
        /// What is wrong.
        why: String,
    },
    /// The journal names a file outside the sessions directory (or through a symlink).
    #[error("{path}: journal names {named}, outside {dir} (or through a link); refused, nothing was changed")]
    Outside {
        /// The journal.
        path: PathBuf,
        /// The path it names.
        named: String,
        /// The sessions directory.
        dir: PathBuf,
    },
}

impl ExitCode for JournalError {
    fn exit_code(&self) -> i32 {
        exit::DATA_ERR
    }
}

/// The largest journal read back: 100k renames take about 10 MB.
pub const JOURNAL_MAX_BYTES: u64 = 256 << 20;

/// What a pending-archive journal lists, as written: paths not yet confined
/// ([`confine_journal`], [`confine_file`] do that).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JournalContents {
    /// The planned renames.
    pub archives: Vec<PlannedArchive>,
    /// The files to delete after them (trajectory sidecars): `[path, sessionId]`.
    pub removals: Vec<(PathBuf, Option<String>)>,
}

/// A clawstate journal beside a store, parsed (`Ok(None)`: there is none). It lies in the
/// sessions directory and only clawstate writes it: a link, a FIFO, text that is not
/// JSON is not one of ours, and refused.
pub(super) fn read_journal_value(path: &Path) -> Result<Option<Value>, JournalError> {
    let malformed = |why: String| JournalError::Malformed {
        path: path.to_path_buf(),
        why,
    };
    let (dir, name) = match (path.parent(), path.file_name()) {
        (Some(d), Some(n)) => (d, n),
        _ => return Ok(None),
    };
    let file = DataPath::beneath(dir, Path::new(name)).map_err(|e| malformed(e.to_string()))?;
    let bytes = match file.read_small(JOURNAL_MAX_BYTES, "a clawstate journal") {
        Ok(b) => b,
        Err(e) if e.is_not_found() => return Ok(None),
        Err(e) => return Err(malformed(e.to_string())),
    };
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(|e| malformed(e.to_string()))
}

/// What the journal at `path` lists as written (`Ok(None)`: no journal).
pub fn read_journal(path: &Path) -> Result<Option<JournalContents>, JournalError> {
    let malformed = |why: String| JournalError::Malformed {
        path: path.to_path_buf(),
        why,
    };
    let Some(v) = read_journal_value(path)? else {
        return Ok(None);
    };
    let list = v
        .get("archives")
        .and_then(Value::as_array)
        .ok_or_else(|| malformed("no \"archives\" array".into()))?;
    let text = |v: Option<&Value>, what: &str| -> Result<String, JournalError> {
        v.and_then(Value::as_str)
            .map(str::to_string)
            .ok_or_else(|| malformed(format!("{what} is not a string")))
    };
    let id = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_string);
    let mut out = Vec::new();
    match v.get("version").and_then(Value::as_u64) {
        Some(n) if n == u64::from(SUFFIX_FORM) => {
            let dir = PathBuf::from(text(v.get("dir"), "\"dir\"")?);
            for group in list {
                let suffix = text(group.get("suffix"), "a group's \"suffix\"")?;
                let files = group
                    .get("files")
                    .and_then(Value::as_array)
                    .ok_or_else(|| malformed("a group has no \"files\" array".into()))?;
                for f in files {
                    let name = text(f.get(0), "a file name")?;
                    out.push(PlannedArchive {
                        session_id: id(f.get(1)),
                        from: dir.join(&name),
                        to: dir.join(format!("{name}{suffix}")),
                        listed: None,
                    });
                    // What the form says: the name and the suffix, each one component.
                    if !is_plain_name(&name) || !is_plain_name(&format!("{name}{suffix}")) {
                        return Err(JournalError::Outside {
                            path: path.to_path_buf(),
                            named: format!("{name:?} + {suffix:?}"),
                            dir,
                        });
                    }
                }
            }
        }
        Some(n) if n == u64::from(PATHS_FORM) => {
            for a in list {
                out.push(PlannedArchive {
                    session_id: id(a.get("sessionId")),
                    from: PathBuf::from(text(a.get("from"), "\"from\"")?),
                    to: PathBuf::from(text(a.get("to"), "\"to\"")?),
                    listed: None,
                });
            }
        }
        _ => return Err(malformed("unknown \"version\"".into())),
    }
    let mut removals = Vec::new();
    for r in v
        .get("removals")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        removals.push((
            PathBuf::from(text(r.get(0), "a removal's path")?),
            id(r.get(1)),
        ));
    }
    Ok(Some(JournalContents {
        archives: out,
        removals,
    }))
}

/// Whether `name` is one plain file name: not empty, not `.` or `..`, no `/` or NUL.
fn is_plain_name(name: &str) -> bool {
    !name.is_empty() && name != "." && name != ".." && !name.contains(['/', '\0'])
}

/// A journal rename confined to the sessions directory: both names below it, in one
/// directory reached without following a link.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfinedRename {
    /// The session the renamed transcript belonged to.
    pub session_id: Option<String>,
    /// The transcript.
    pub from: DataPath,
    /// Its archive name, beside it.
    pub to: DataPath,
}

/// Confines every rename of `plan` (read from the journal at `path`) to the sessions
/// directory `real_dir` (after realpath; `given` is the same directory as configured):
/// each path must lie below it by plain names, both ends of a rename in one directory,
/// and no component below it a symlink; the second form's `dir` must be that directory
/// itself (same device and inode). One rename that fails refuses the whole journal.
pub fn confine_journal(
    path: &Path,
    plan: Vec<PlannedArchive>,
    real_dir: &Path,
    given: &Path,
) -> Result<Vec<ConfinedRename>, JournalError> {
    let outside = |named: &Path| JournalError::Outside {
        path: path.to_path_buf(),
        named: named.display().to_string(),
        dir: real_dir.to_path_buf(),
    };
    let identity = |d: &Path| DataDir::open(d).and_then(|d| d.identity()).ok();
    let home = identity(real_dir);
    let mut same_dir: Option<(PathBuf, bool)> = None;
    let mut out = Vec::with_capacity(plan.len());
    for a in plan {
        let (Some(from_dir), Some(to_dir)) = (a.from.parent(), a.to.parent()) else {
            return Err(outside(&a.from));
        };
        if from_dir != to_dir {
            return Err(outside(&a.to));
        }
        // The journal's directory, as written: the sessions directory itself (by
        // identity: a path through a link to it is it), or a directory below it.
        let is_home = match &same_dir {
            Some((d, home)) if d == from_dir => *home,
            _ => {
                let h = home.is_some() && identity(from_dir) == home && from_dir.is_absolute();
                same_dir = Some((from_dir.to_path_buf(), h));
                h
            }
        };
        let below = |p: &Path| -> Result<DataPath, JournalError> {
            let rel = if is_home {
                PathBuf::from(p.file_name().ok_or_else(|| outside(p))?)
            } else {
                p.strip_prefix(real_dir)
                    .or_else(|_| p.strip_prefix(given))
                    .map_err(|_| outside(p))?
                    .to_path_buf()
            };
            DataPath::beneath(real_dir, &rel).map_err(|_| outside(p))
        };
        let (from, to) = (below(&a.from)?, below(&a.to)?);
        if from == to {
            return Err(outside(&a.to));
        }
        // No link on the way below the directory (a transcript already gone is fine).
        match from.open_parent() {
            Ok(_) => {}
            Err(e) if e.is_not_found() => {}
            Err(_) => return Err(outside(&a.from)),
        }
        out.push(ConfinedRename {
            session_id: a.session_id,
            from,
            to,
        });
    }
    Ok(out)
}

/// Confines a file a journal names for deletion to the sessions directory `real_dir`
/// (after realpath; `given` as configured): below it by plain names, no link on the way
/// (the file itself may be gone). Anything else refuses the journal.
pub fn confine_file(
    path: &Path,
    named: &Path,
    real_dir: &Path,
    given: &Path,
) -> Result<DataPath, JournalError> {
    let outside = || JournalError::Outside {
        path: path.to_path_buf(),
        named: named.display().to_string(),
        dir: real_dir.to_path_buf(),
    };
    let rel = named
        .strip_prefix(real_dir)
        .or_else(|_| named.strip_prefix(given))
        .map_err(|_| outside())?;
    let file = DataPath::beneath(real_dir, rel).map_err(|_| outside())?;
    match file.open_parent() {
        Ok(_) => Ok(file),
        Err(e) if e.is_not_found() => Ok(file),
        Err(_) => Err(outside()),
    }
}

/// Finishes the renames of a journal left by an interrupted run: each transcript whose
/// session and file no entry of the current store references, that is still there (a
/// regular file), and whose archive name is free, is archived. A run interrupted before
/// its store write left the store referencing them, so nothing is renamed then. The
/// journal is removed. Returns how many files were archived.
///
/// The journal is data from disk: every path it names is confined to the sessions
/// directory first ([`confine_journal`]); a journal that fails is refused whole, with
/// nothing renamed and the journal left in place.
pub fn recover_journal(
    path: &Path,
    sessions_dir: &Path,
    live_ids: &HashSet<&str, FixedState>,
    referenced: &PathSet,
    guard: &mut DirGuard,
) -> Result<usize, JournalError> {
    let Some(contents) = read_journal(path)? else {
        return Ok(0);
    };
    // Every path is confined before anything is done: one that fails refuses the lot.
    let real_dir = guard.real_dir().to_path_buf();
    let renames = confine_journal(path, contents.archives, &real_dir, sessions_dir)?;
    let removals = contents
        .removals
        .iter()
        .map(|(p, id)| {
            Ok((
                confine_file(path, p, &real_dir, sessions_dir)?,
                id.as_deref(),
            ))
        })
        .collect::<Result<Vec<_>, JournalError>>()?;
    let mut done = 0;
    for a in &renames {
        if a.session_id
            .as_deref()
            .is_some_and(|id| live_ids.contains(id))
            || referenced.contains(a.from.path())
            || !matches!(a.to.kind(), Ok(None))
        {
            continue;
        }
        if a.from.rel().components().count() == 1 {
            // Directly in the directory: through the guard's descriptor of it.
            if guard.archive(a.from.path(), a.to.path()) {
                done += 1;
            }
        } else if let Ok((dir, name)) = a.from.open_parent() {
            // Deeper: through the directory reached without following a link.
            if !matches!(
                dir.kind_of(name),
                Ok(Some(rustix::fs::FileType::RegularFile))
            ) {
                continue;
            }
            match dir.rename(name, a.to.file_name()).and_then(|()| dir.sync()) {
                Ok(()) => {
                    done += 1;
                    guard.events.push(super::files::FileEvent::Archived {
                        from: a.from.path().to_path_buf(),
                        to: a.to.path().to_path_buf(),
                    });
                }
                Err(e) => guard.events.push(super::files::FileEvent::Failed {
                    path: a.from.path().to_path_buf(),
                    error: e.to_string(),
                }),
            }
        }
    }
    // Then the sidecars the run deleted after its renames, of sessions still gone.
    for (file, id) in &removals {
        if id.is_some_and(|id| live_ids.contains(id)) || referenced.contains(file.path()) {
            continue;
        }
        guard.remove_regular(file.path(), super::files::RemovalReason::Trajectory);
    }
    guard.sync();
    remove_journal(path);
    Ok(done)
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

#[cfg(test)]
mod removal_tests {
    use super::*;
    use foldhash::fast::FixedState;

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
        let removals_of = |j: &Path| read_journal(j).unwrap().unwrap().removals;
        assert_eq!(removals_of(&j), expected);
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
        assert_eq!(read_journal(&j).unwrap().unwrap().archives, plan);
        let odd = vec![PlannedArchive {
            to: root.join("renamed.jsonl"),
            ..plan[0].clone()
        }];
        write_journal_with_removals(&j, &odd, &removals).unwrap();
        assert_eq!(removals_of(&j), expected);
        for (p, _) in &files[..4] {
            std::fs::write(p, "x").unwrap();
        }
        // A removal through a link refuses the whole journal: nothing goes.
        let live: HashSet<&str, FixedState> = ["b"].into_iter().collect();
        let mut referenced = PathSet::new(&root);
        referenced.extend([root.join("c.trajectory.jsonl")]);
        let mut g = DirGuard::new(&root);
        let e = recover_journal(&j, &root, &live, &referenced, &mut g);
        assert!(matches!(e, Err(JournalError::Outside { .. })), "{e:?}");
        assert!(files[..4].iter().all(|(p, _)| p.exists()) && j.exists());
        assert!(Path::new("/etc/passwd").exists());
        // Without it: those of sessions gone from the store go, the others stay.
        write_journal_with_removals(&j, &[], &removals[..4]).unwrap();
        let mut g = DirGuard::new(&root);
        recover_journal(&j, &root, &live, &referenced, &mut g).unwrap();
        assert!(!files[0].0.exists() && !files[1].0.exists());
        assert!(files[2].0.exists() && files[3].0.exists());
        assert!(!j.exists());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use foldhash::fast::FixedState;

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
        assert_eq!(read_journal(&j).unwrap().unwrap().archives, plan);
        // "b" is referenced again by the store: it stays.
        let live: HashSet<&str, FixedState> = ["b"].into_iter().collect();
        let mut g = DirGuard::new(&root);
        let done = recover_journal(&j, &root, &live, &PathSet::new(&root), &mut g).unwrap();
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
        assert_eq!(read_journal(&j).unwrap().unwrap().archives, plan);
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
        assert_eq!(read_journal(&j).unwrap().unwrap().archives, grouped);
        // A name or a suffix that is not one plain component refuses the whole journal.
        for (name, suffix) in [
            ("../x", ".d"),
            ("..", ".d"),
            ("", ".d"),
            ("ok.jsonl", "/../x"),
        ] {
            let hostile = serde_json::json!({"version": 2, "dir": root.to_str().unwrap(), "archives": [
                {"suffix": ".d", "files": [["fine.jsonl", null]]},
                {"suffix": suffix, "files": [[name, "x"]]},
            ]});
            std::fs::write(&j, hostile.to_string()).unwrap();
            let e = read_journal(&j).unwrap_err();
            assert_eq!(e.exit_code(), exit::DATA_ERR, "{name:?} {suffix:?}");
        }
        // Not JSON, or not a journal: refused too, not skipped.
        for text in ["{\"version\":2,", "[]", "{\"version\":9,\"archives\":[]}"] {
            std::fs::write(&j, text).unwrap();
            assert!(
                matches!(read_journal(&j), Err(JournalError::Malformed { .. })),
                "{text}"
            );
        }
        std::fs::remove_file(&j).unwrap();
        assert!(read_journal(&j).unwrap().is_none());
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
        let e = recover_journal(&j, &root, &HashSet::default(), &PathSet::new(&root), &mut g);
        assert!(matches!(e, Err(JournalError::Outside { .. })), "{e:?}");
        assert_eq!(std::fs::read_to_string(top.join("victim")).unwrap(), "keep");
        assert!(!top.join("victim.deleted").exists());
        assert!(j.exists(), "a refused journal is left in place");
    }

    /// A journal whose `dir`, `from` or `to` passes through a symlinked subdirectory of the
    /// sessions directory is refused whole: nothing outside (or inside) is renamed.
    #[test]
    fn a_journal_through_a_symlinked_directory_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let top = std::fs::canonicalize(d.path()).unwrap();
        let root = top.join("sessions");
        let outside = top.join("outside");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("victim.jsonl"), "keep").unwrap();
        std::fs::write(root.join("inside.jsonl"), "in").unwrap();
        std::os::unix::fs::symlink(&outside, root.join("lnk")).unwrap();
        let j = journal_path(&root.join("sessions.json"));
        let lnk = root.join("lnk");
        let journals = [
            serde_json::json!({"version": 2, "dir": lnk, "archives": [
                {"suffix": ".deleted.2026-01-01T00-00-00.000Z", "files": [["victim.jsonl", "v"]]}]}),
            serde_json::json!({"version": 2, "dir": outside, "archives": [
                {"suffix": ".deleted.2026-01-01T00-00-00.000Z", "files": [["victim.jsonl", "v"]]}]}),
            serde_json::json!({"version": 1, "archives": [
                {"sessionId": "i", "from": root.join("inside.jsonl"), "to": root.join("inside.jsonl.deleted.x")},
                {"sessionId": "v", "from": lnk.join("victim.jsonl"), "to": lnk.join("victim.jsonl.deleted.x")}]}),
            serde_json::json!({"version": 1, "archives": [
                {"sessionId": "v", "from": root.join("inside.jsonl"), "to": lnk.join("inside.jsonl")}]}),
            serde_json::json!({"version": 1, "archives": [
                {"sessionId": "v", "from": "inside.jsonl", "to": "inside.jsonl.d"}]}),
        ];
        for journal in journals {
            std::fs::write(&j, journal.to_string()).unwrap();
            let mut g = DirGuard::new(&root);
            let e = recover_journal(&j, &root, &HashSet::default(), &PathSet::new(&root), &mut g)
                .unwrap_err();
            assert_eq!(e.exit_code(), exit::DATA_ERR, "{journal}");
            assert!(g.events.is_empty(), "{journal}: {:?}", g.events);
            assert_eq!(
                std::fs::read_to_string(outside.join("victim.jsonl")).unwrap(),
                "keep"
            );
            assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 1, "{journal}");
            assert!(
                root.join("inside.jsonl").exists(),
                "{journal}: nothing is renamed"
            );
            assert!(j.exists());
        }
        // The sessions directory through a link to it is the sessions directory: accepted.
        std::os::unix::fs::symlink(&root, top.join("alias")).unwrap();
        let ok = serde_json::json!({"version": 2, "dir": top.join("alias"), "archives": [
            {"suffix": ".deleted.x", "files": [["inside.jsonl", "i"]]}]});
        std::fs::write(&j, ok.to_string()).unwrap();
        let mut g = DirGuard::new(&root);
        let done =
            recover_journal(&j, &root, &HashSet::default(), &PathSet::new(&root), &mut g).unwrap();
        assert_eq!(done, 1);
        assert!(root.join("inside.jsonl.deleted.x").exists());
        // A real subdirectory, in the first form: renamed there.
        std::fs::create_dir(root.join("sub")).unwrap();
        std::fs::write(root.join("sub/s.jsonl"), "s").unwrap();
        let sub = serde_json::json!({"version": 1, "archives": [
            {"sessionId": "s", "from": root.join("sub/s.jsonl"), "to": root.join("sub/s.jsonl.deleted.x")}]});
        std::fs::write(&j, sub.to_string()).unwrap();
        let mut g = DirGuard::new(&root);
        let done =
            recover_journal(&j, &root, &HashSet::default(), &PathSet::new(&root), &mut g).unwrap();
        assert_eq!(done, 1);
        assert!(root.join("sub/s.jsonl.deleted.x").exists());
        assert!(!j.exists());
    }
}
