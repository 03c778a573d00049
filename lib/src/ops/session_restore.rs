//! Undo for archives: `claw-sessions restore KEY|FILE` renames a `.deleted.<ts>` or
//! `.reset.<ts>` transcript back to the name it was archived from and, when the store no
//! longer has an entry for its session, adds one.
//!
//! An archive records its session (its original name `<sessionId>.jsonl`, or the id in
//! its header) but not the key its entry had: restoring a FILE whose entry is gone needs
//! `--key KEY`. A KEY still in the store restores the newest archive of its session when
//! its transcript is missing. As every writer: refused while a live gateway owns the
//! state directory (unless `--store`), under the store lock, the rename never replaces a
//! file (`renameat2(RENAME_NOREPLACE)`), and the store is written atomically; a failed
//! store write renames the transcript back.

use std::io::Read;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};
use thiserror::Error;

use crate::exit::{self, ExitCode};
use crate::fs::data_file::{DataFileError, DataPath};
use crate::install::context::StateContext;
use crate::install::targets::StoreTarget;
use crate::ops::session_ops::{OpsError, WriteOptions};
use crate::session::artifact::{archived_from, ArchiveReason};
use crate::session::session_key::resolve_store_key;
use crate::store::entry_lookup;
use crate::store::lifecycle;
use crate::store::store_lock::{StoreLock, StoreLockError};
use crate::store::transcript_path::{is_valid_transcript_id, TranscriptResolver};
use crate::store::{LoadOptions, SaveOutcome, SessionStore, StoreError};

/// Why a restore could not be done; nothing was changed.
#[derive(Debug, Error)]
pub enum RestoreError {
    /// Choosing the store, the live-gateway rule, finding the entry.
    #[error(transparent)]
    Ops(#[from] OpsError),
    /// The store could not be read or written.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Another clawstate writer holds the store.
    #[error(transparent)]
    Lock(#[from] StoreLockError),
    /// The archive cannot be used (a symlink on its way, not a regular file).
    #[error(transparent)]
    File(#[from] DataFileError),
    /// The name is not a `.deleted.<ts>` / `.reset.<ts>` archive.
    #[error("{0}: not a .deleted.<ts> or .reset.<ts> archive")]
    NotAnArchive(PathBuf),
    /// No archive was found.
    #[error("{0}")]
    NoArchive(String),
    /// The archive's session is unknown to the store and no key was given.
    #[error("{archive}: the store has no entry for session {session_id:?}, and an archive does not record its key: give --key KEY")]
    NeedsKey {
        /// The archive.
        archive: PathBuf,
        /// Its session.
        session_id: String,
    },
    /// The key holds another session.
    #[error("{key}: the store already has this key for session {held:?}; restoring {session_id:?} would replace it (choose another --key)")]
    KeyTaken {
        /// The key.
        key: String,
        /// The session it holds.
        held: String,
        /// The archive's session.
        session_id: String,
    },
    /// The archive's session id cannot be told (no `<id>.jsonl` name, no header id).
    #[error("{0}: cannot tell its sessionId (neither its name nor its header says it)")]
    UnknownSession(PathBuf),
    /// Something is already at the original name.
    #[error("{0}: already exists; the archive is left as it is")]
    TargetExists(PathBuf),
    /// The rename failed.
    #[error("cannot rename {from} to {to}: {source}")]
    Rename {
        /// The archive.
        from: PathBuf,
        /// The original name.
        to: PathBuf,
        /// The error.
        source: std::io::Error,
    },
}

impl ExitCode for RestoreError {
    fn exit_code(&self) -> i32 {
        match self {
            RestoreError::Ops(e) => e.exit_code(),
            RestoreError::Store(e) => e.exit_code(),
            RestoreError::Lock(e) => e.exit_code(),
            RestoreError::File(e) => e.exit_code(),
            RestoreError::NotAnArchive(_) | RestoreError::NeedsKey { .. } => exit::USAGE,
            RestoreError::NoArchive(_) => exit::NOT_FOUND,
            RestoreError::KeyTaken { .. } | RestoreError::UnknownSession(_) => exit::FAILURE,
            RestoreError::TargetExists(_) | RestoreError::Rename { .. } => exit::CANT_CREATE,
        }
    }
}

/// What a restore did (or would do).
#[derive(Debug, Clone)]
pub struct RestoreOutcome {
    /// The store.
    pub target: StoreTarget,
    /// The archive.
    pub archive: PathBuf,
    /// The name it is restored to.
    pub restored: PathBuf,
    /// `deleted` or `reset`.
    pub reason: ArchiveReason,
    /// The session.
    pub session_id: String,
    /// The entry's key.
    pub key: String,
    /// The entry added (`None`: the store had one for the session already).
    pub added_entry: Option<Map<String, Value>>,
    /// Whether the store was written.
    pub written: bool,
}

/// The first line of a transcript's header `id`, read boundedly.
fn header_session_id(archive: &DataPath) -> Option<String> {
    let mut head = Vec::new();
    archive
        .open_read()
        .ok()?
        .into_file()
        .take(64 * 1024)
        .read_to_end(&mut head)
        .ok()?;
    let line = head.split(|&b| b == b'\n').next()?;
    let v: Value = serde_json::from_slice(line).ok()?;
    (v.get("type")?.as_str()? == "session")
        .then(|| v.get("id")?.as_str().map(str::to_string))
        .flatten()
}

/// The archive a FILE argument names: a path, or a name in the sessions directory.
fn named_archive(sessions_dir: &Path, file: &str) -> Result<DataPath, RestoreError> {
    if file.contains('/') {
        Ok(DataPath::given(Path::new(file)))
    } else {
        Ok(DataPath::beneath(sessions_dir, Path::new(file))?)
    }
}

/// The newest archive in `dir` archived from one of `originals`.
fn newest_archive(dir: &Path, originals: &[String]) -> Option<(i64, String)> {
    let mut best: Option<(i64, String)> = None;
    for e in std::fs::read_dir(dir).ok()?.flatten() {
        let name = e.file_name();
        let Some(name) = name.to_str() else { continue };
        let Some((original, _, ts)) = archived_from(name) else {
            continue;
        };
        if originals.iter().any(|o| o == original) {
            let ts = ts.unwrap_or(i64::MIN);
            if best.as_ref().is_none_or(|(t, _)| ts > *t) {
                best = Some((ts, name.to_string()));
            }
        }
    }
    best
}

/// Restores an archive (`request`: an archive FILE, or a KEY of the store), adding an
/// entry under `key` when the store has none for its session.
pub fn restore(
    ctx: &StateContext,
    request: &str,
    key: Option<&str>,
    opts: WriteOptions,
) -> Result<RestoreOutcome, RestoreError> {
    let looks_like_file = Path::new(request)
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| archived_from(n).is_some());
    let target = match (key, looks_like_file) {
        (Some(k), _) => entry_lookup::target_for_key(ctx, k).map_err(OpsError::from)?,
        (None, true) => entry_lookup::single_target(ctx).map_err(OpsError::from)?,
        (None, false) => entry_lookup::target_for_key(ctx, request).map_err(OpsError::from)?,
    };
    if !opts.dry_run {
        ctx.check_live_gateway().map_err(OpsError::from)?;
    }
    let _lock = if opts.dry_run {
        None
    } else {
        Some(StoreLock::acquire(&target.store_path, opts.wait)?)
    };
    let mut store = SessionStore::load(&target.store_path, LoadOptions::default())?;
    let sessions_dir = store.sessions_dir();
    let archive = if looks_like_file {
        named_archive(&sessions_dir, request)?
    } else {
        // A KEY: the newest archive of its session, when its transcript is gone.
        let found = lifecycle::find_entry(&store, request, &ctx.key_context()).ok_or_else(|| {
            RestoreError::NoArchive(format!(
                "{request}: no such entry in {}; an archive does not record its key: restore FILE --key {request}",
                target.store_path.display()
            ))
        })?;
        let entry = store.entry(&found.store_key).cloned().unwrap_or_default();
        let text = |k: &str| entry.get(k).and_then(Value::as_str).map(str::to_string);
        let id = text("sessionId").unwrap_or_default();
        let mut originals = vec![format!("{id}.jsonl")];
        if let Some(f) = text("sessionFile") {
            if let Some(n) = Path::new(&f).file_name().and_then(|n| n.to_str()) {
                originals.push(n.to_string());
            }
        }
        let resolver = TranscriptResolver::for_target(ctx, &target);
        let transcript =
            resolver.resolve(text("sessionId").as_deref(), text("sessionFile").as_deref());
        if transcript.as_ref().is_ok_and(|p| p.is_file()) {
            return Err(RestoreError::NoArchive(format!(
                "{}: its transcript {} is in place; nothing to restore (name an archive to restore it as a FILE)",
                found.store_key,
                transcript.map(|p| p.path().display().to_string()).unwrap_or_default()
            )));
        }
        let (_, name) = newest_archive(&sessions_dir, &originals).ok_or_else(|| {
            RestoreError::NoArchive(format!(
                "{}: no .deleted.<ts> or .reset.<ts> archive of session {id:?} in {}",
                found.store_key,
                sessions_dir.display()
            ))
        })?;
        DataPath::beneath(&sessions_dir, Path::new(&name))?
    };
    let name = archive.file_name().to_string_lossy().into_owned();
    let Some((original, reason, archived_at)) = archived_from(&name) else {
        return Err(RestoreError::NotAnArchive(archive.path().to_path_buf()));
    };
    let original = original.to_string();
    if !archive.check()? {
        return Err(RestoreError::NoArchive(format!(
            "{}: no such archive",
            archive.path().display()
        )));
    }
    let restored = archive.sibling(std::ffi::OsStr::new(&original))?;
    if restored.facts()?.is_some() {
        return Err(RestoreError::TargetExists(restored.path().to_path_buf()));
    }
    let session_id = match original.strip_suffix(".jsonl") {
        Some(id) if is_valid_transcript_id(id) => id.to_string(),
        _ => header_session_id(&archive)
            .ok_or_else(|| RestoreError::UnknownSession(archive.path().to_path_buf()))?,
    };
    // The entry of its session, if the store still has one.
    let holder = store
        .entries()
        .iter()
        .find(|(_, e)| e.get("sessionId").and_then(Value::as_str) == Some(session_id.as_str()))
        .map(|(k, _)| k.clone());
    let (key, added_entry) = match (holder, key) {
        (Some(k), _) => (k, None),
        (None, None) => {
            return Err(RestoreError::NeedsKey {
                archive: archive.path().to_path_buf(),
                session_id,
            })
        }
        (None, Some(k)) => {
            let canonical = resolve_store_key(k, &ctx.key_context());
            if let Some(held) = store.entry(&canonical) {
                return Err(RestoreError::KeyTaken {
                    key: canonical,
                    held: held
                        .get("sessionId")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string(),
                    session_id,
                });
            }
            let mut entry = Map::new();
            entry.insert("sessionId".into(), Value::from(session_id.clone()));
            entry.insert(
                "updatedAt".into(),
                Value::from(archived_at.unwrap_or(ctx.now_ms)),
            );
            // A name other than `<sessionId>.jsonl` is found through sessionFile only.
            if original != format!("{session_id}.jsonl") {
                entry.insert(
                    "sessionFile".into(),
                    Value::from(restored.path().to_string_lossy().into_owned()),
                );
            }
            lifecycle::validate_patched_entry(&canonical, &Value::Object(entry.clone()))
                .map_err(OpsError::from)?;
            (canonical, Some(entry))
        }
    };
    let mut written = false;
    if !opts.dry_run {
        let (dir, from) = archive.open_parent()?;
        let rename = |from: &std::ffi::OsStr, to: &std::ffi::OsStr| {
            dir.rename_no_replace(from, to).and_then(|()| dir.sync())
        };
        rename(from, std::ffi::OsStr::new(&original)).map_err(|source| {
            if source.kind() == std::io::ErrorKind::AlreadyExists {
                RestoreError::TargetExists(restored.path().to_path_buf())
            } else {
                RestoreError::Rename {
                    from: archive.path().to_path_buf(),
                    to: restored.path().to_path_buf(),
                    source,
                }
            }
        })?;
        if let Some(entry) = &added_entry {
            store.set_entry(&key, entry.clone());
            match store.save() {
                Ok(o) => written = o == SaveOutcome::Written,
                Err(e) => {
                    // The store stays as it was: so does the archive.
                    let _ = rename(std::ffi::OsStr::new(&original), from);
                    return Err(e.into());
                }
            }
        }
    }
    Ok(RestoreOutcome {
        target,
        archive: archive.path().to_path_buf(),
        restored: restored.path().to_path_buf(),
        reason,
        session_id,
        key,
        added_entry,
        written,
    })
}
