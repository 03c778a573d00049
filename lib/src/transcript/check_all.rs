//! `claw-transcript check --all` for one store: every entry's transcript checked
//! ([`super::check::check_file`]) and cross-checked with the store (entries without a
//! transcript, transcripts without an entry, foreign `sessionFile`s, paths never
//! followed) and with the write-lock files of the directory (stale or long-held locks).
//!
//! `claw-sessions doctor` runs the same pass as one of its sections.

use std::path::{Path, PathBuf};

use serde_json::Value;
use thiserror::Error;

use super::check::check_file;
use super::locks;
use super::reader::ReadError;
use crate::exit::{self, ExitCode};
use crate::fs::data_file::DataPath;
use crate::install::context::StateContext;
use crate::install::live_gateway::GatewayOwner;
use crate::install::targets::StoreTarget;
use crate::report::finding::{Finding, Severity};
use crate::store::transcript_path::TranscriptResolver;
use crate::store::{SessionStore, StoreError};
use crate::transcript::write_lock::{self, WriteLockError, WriteLockSettings};

/// Why the pass could not run (a finding is not an error: it is reported).
#[derive(Debug, Error)]
pub enum CheckAllError {
    /// The store could not be read.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The sessions directory could not be listed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The directory.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// A lock file could not be inspected.
    #[error(transparent)]
    Lock(#[from] WriteLockError),
}

impl ExitCode for CheckAllError {
    fn exit_code(&self) -> i32 {
        match self {
            CheckAllError::Store(e) => e.exit_code(),
            CheckAllError::Io { .. } => exit::FAILURE,
            CheckAllError::Lock(e) => e.exit_code(),
        }
    }
}

/// The findings of one store's pass.
#[derive(Debug, Clone, Default)]
pub struct StoreCheck {
    /// Every finding, in the pass's order.
    pub findings: Vec<Finding>,
    /// Transcripts checked.
    pub files: usize,
}

/// The finding for a transcript that could not be read at all.
pub fn unreadable(path: &Path, e: &ReadError) -> Finding {
    Finding {
        path: path.to_path_buf(),
        line: None,
        severity: Severity::Error,
        code: "unreadable-transcript",
        message: e.to_string(),
    }
}

/// The finding for an entry whose transcript a live gateway has not written yet: it
/// commits the store first and writes the transcript with the session's first reply.
pub fn not_written_yet(path: &Path, key: &str, owner: &GatewayOwner) -> Finding {
    Finding {
        path: path.to_path_buf(),
        line: None,
        severity: Severity::Info,
        code: "transcript-not-written-yet",
        message: format!(
            "entry {key:?}: no transcript yet; the gateway is live ({owner}) and writes it with the session's first reply"
        ),
    }
}

/// The write-lock settings of the config and environment.
pub fn lock_settings(ctx: &StateContext) -> WriteLockSettings {
    WriteLockSettings::resolve(&ctx.config.root, |k| ctx.env.var(k).map(String::from))
}

fn finding(path: &Path, severity: Severity, code: &'static str, message: String) -> Finding {
    Finding::about_file(path, severity, code, message)
}

/// Runs the pass on one store; `progress(done, total)` is called as transcripts are
/// checked (for a progress line on a terminal).
pub fn check_store(
    ctx: &StateContext,
    target: &StoreTarget,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<StoreCheck, CheckAllError> {
    let settings = lock_settings(ctx);
    let live = std::cell::OnceCell::new();
    let live = || live.get_or_init(|| ctx.live_gateway()).clone();
    let mut findings: Vec<Finding> = Vec::new();
    let store = SessionStore::load(&target.store_path, Default::default())?;
    let resolver = TranscriptResolver::for_target(ctx, target);
    let dir = resolver.sessions_dir().to_path_buf();
    let mut referenced: Vec<DataPath> = Vec::new();
    for (key, entry) in store.entries() {
        let id = entry.get("sessionId").and_then(Value::as_str);
        let file = entry.get("sessionFile").and_then(Value::as_str);
        let resolved = resolver.resolve(id, file);
        if let Some(f) = resolved.as_ref().ok().and_then(|p| resolver.foreign(p)) {
            findings.push(finding(
                &target.store_path,
                Severity::Warning,
                "foreign-session-file",
                format!(
                    "entry {key:?}: its transcript {} lies outside this state dir (the gateway reads and appends there); `claw-sessions relocate` points it at {}",
                    f.file.display(),
                    f.here.display()
                ),
            ));
        }
        match resolved {
            Ok(p) => match p.check() {
                Ok(true) => referenced.push(p),
                Ok(false) if id.is_some() => findings.push(match live() {
                    Some(owner) => not_written_yet(p.path(), key, &owner),
                    None => finding(
                        &target.store_path,
                        Severity::Warning,
                        "entry-without-transcript",
                        format!(
                            "entry {key:?}: transcript {} does not exist",
                            p.path().display()
                        ),
                    ),
                }),
                Ok(false) => {}
                // A link on the way, a FIFO in its place: never followed or read.
                Err(e) => findings.push(finding(
                    &target.store_path,
                    Severity::Error,
                    "entry-transcript-path",
                    format!("entry {key:?}: {e}"),
                )),
            },
            Err(e) => findings.push(finding(
                &target.store_path,
                Severity::Error,
                "entry-transcript-path",
                format!("entry {key:?}: {e}"),
            )),
        }
    }
    referenced.sort();
    referenced.dedup();
    let mut names: Vec<PathBuf> = Vec::new();
    let mut others: Vec<(PathBuf, &str)> = Vec::new();
    for e in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
        if !crate::session::artifact::is_primary_transcript(&e.file_name().to_string_lossy()) {
            continue;
        }
        match e.file_type() {
            Ok(t) if t.is_file() => names.push(e.path()),
            Ok(t) if t.is_symlink() => others.push((e.path(), "a symbolic link")),
            Ok(t) if t.is_dir() => others.push((e.path(), "a directory")),
            Ok(_) => others.push((e.path(), "not a regular file")),
            Err(_) => {}
        }
    }
    names.sort();
    others.sort();
    // What the gateway may follow or block on, clawstate never reads: say so.
    for (p, what) in others {
        findings.push(finding(
            &p,
            Severity::Warning,
            "transcript-not-regular",
            format!("{what}, not a regular file: never followed or read by clawstate"),
        ));
    }
    let referenced_paths: Vec<&Path> = referenced.iter().map(|p| p.path()).collect();
    for p in names {
        let real = std::fs::canonicalize(&p).unwrap_or(p.clone());
        if !referenced_paths.contains(&real.as_path()) {
            findings.push(finding(
                &p,
                Severity::Info,
                "transcript-without-entry",
                "no store entry refers to this transcript".into(),
            ));
        }
    }
    // One unreadable transcript is a finding; the others are still checked.
    let total = referenced.len();
    for (i, p) in referenced.iter().enumerate() {
        match check_file(p) {
            Ok(r) => findings.extend(r.findings),
            Err(e) => findings.push(unreadable(p.path(), &e)),
        }
        progress(i + 1, total);
    }
    let lock_files = locks::lock_files_in(&dir).map_err(|source| CheckAllError::Io {
        path: dir.clone(),
        source,
    })?;
    for lock in lock_files {
        let i = write_lock::inspect_lock(&lock, &settings, ctx.now_ms)?;
        if i.in_use {
            // Held by a live process that has it open: never advice to remove it;
            // worth a warning only when it has been held past staleMs.
            let too_old = i.stale_reasons.contains(&write_lock::StaleReason::TooOld);
            findings.push(finding(
                &lock,
                if too_old {
                    Severity::Warning
                } else {
                    Severity::Info
                },
                "lock-in-use",
                locks::in_use_text(&i),
            ));
        } else if i.is_stale() {
            findings.push(finding(
                &lock,
                Severity::Warning,
                "stale-lock",
                format!(
                    "stale ({}), {}",
                    i.reasons_string(),
                    if i.removable {
                        "removable with `lock break`"
                    } else {
                        "kept: its holder looks alive"
                    }
                ),
            ));
        }
    }
    Ok(StoreCheck {
        findings,
        files: total,
    })
}
