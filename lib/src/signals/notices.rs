//! Stale-state notices (signals spec §4; one notice is `super::notice`): the offline
//! protocol of decision 7 — a pending notice *is* a cursor with
//! `notified > last_seen`; draining is the acknowledge step, in one immediate transaction;
//! the sweep is what a gateway start does to cursors.

use rusqlite::params;
use thiserror::Error;

use super::cursors::{self, Cursor};
use super::db::{DbError, StateDb};
use super::delivery;
use super::notice::Notice;
use crate::exit::ExitCode;

/// Why a notice operation failed.
#[derive(Debug, Error)]
pub enum NoticeError {
    /// The database failed.
    #[error(transparent)]
    Db(#[from] DbError),
}

impl ExitCode for NoticeError {
    fn exit_code(&self) -> i32 {
        match self {
            NoticeError::Db(e) => e.exit_code(),
        }
    }
}

const PENDING_ORDER: &str = "ORDER BY watcher_session_key, notified_sequence, target_session_key";

/// The pending notices that reach their watchers (see [`super::delivery`]), one per
/// pending (watcher, target) pair, in the order they were opened; `watchers` empty means
/// every watcher. `watcher_known` tells whether a watcher's session is in its store
/// (`None`: cannot be told here).
pub fn pending(
    db: &mut StateDb,
    watchers: &[String],
    watcher_known: impl FnMut(&str) -> Option<bool>,
) -> Result<Vec<Notice>, NoticeError> {
    let all = pending_cursors(db, watchers)?;
    Ok(delivery::split(db, all, watcher_known)
        .deliverable
        .iter()
        .filter_map(Cursor::pending_notice)
        .collect())
}

/// The pending cursors behind [`pending`].
pub fn pending_cursors(db: &mut StateDb, watchers: &[String]) -> Result<Vec<Cursor>, NoticeError> {
    let with_path = db.has_watcher_store_path();
    Ok(db.read(|tx| {
        let all = cursors::select(
            tx,
            with_path,
            &format!("WHERE notified_sequence > last_seen_sequence {PENDING_ORDER}"),
            &[],
        )?;
        Ok(all
            .into_iter()
            .filter(|c| watchers.is_empty() || watchers.contains(&c.watcher_session_key))
            .collect())
    })?)
}

/// What a drain did.
#[derive(Debug, Clone, Default)]
pub struct Drained {
    /// The notices printed and acknowledged.
    pub acknowledged: Vec<Notice>,
    /// The follow-up notices opened for interleaved work (pending now).
    pub followups: Vec<Notice>,
}

/// `acknowledgeSessionStateNotices` for every pending notice of `watcher` (§4.4), in one
/// immediate transaction: `last_seen := notified`, `notified := max(material, notified)`,
/// and one follow-up opened where material events interleaved. Idle cursors are untouched,
/// and so are cursors whose notices never reach the watcher (schema 18: of another store).
/// With `targets` non-empty only those targets are acknowledged.
pub fn drain(
    db: &mut StateDb,
    watcher: &str,
    targets: &[String],
    now: i64,
) -> Result<Drained, NoticeError> {
    let with_path = db.has_watcher_store_path();
    let tracks_stores = db.tracks_watcher_stores();
    let current = db.watcher_store(watcher);
    Ok(db.write(|tx| {
        let rows = cursors::select(
            tx,
            with_path,
            &format!(
                "WHERE watcher_session_key = ?1 AND notified_sequence > last_seen_sequence {PENDING_ORDER}"
            ),
            &[&watcher],
        )?;
        let mut out = Drained::default();
        for c in rows {
            if !targets.is_empty() && !targets.contains(&c.target_session_key) {
                continue;
            }
            if tracks_stores && (c.watcher_store_path.is_none() || c.watcher_store_path != current)
            {
                continue;
            }
            let Some(notice) = c.pending_notice() else {
                continue;
            };
            let next = c.material_sequence.max(c.notified_sequence);
            tx.prepare_cached(
                "UPDATE session_watch_cursors SET last_seen_sequence = ?1, notified_sequence = ?2, updated_at = ?3 \
                 WHERE watcher_session_key = ?4 AND target_session_key = ?5",
            )?
            .execute(params![c.notified_sequence, next, now, watcher, c.target_session_key])?;
            if c.material_sequence > c.notified_sequence {
                out.followups.push(Notice {
                    watcher_session_key: watcher.to_string(),
                    target_session_key: c.target_session_key.clone(),
                    last_seen_sequence: c.notified_sequence,
                    queue_only: c.is_ambient(),
                });
            }
            out.acknowledged.push(notice);
        }
        Ok(out)
    })?)
}

/// The cursors a gateway start would re-materialise: `material > last_seen`.
pub fn sweep_candidates(db: &mut StateDb) -> Result<Vec<Cursor>, NoticeError> {
    let with_path = db.has_watcher_store_path();
    Ok(db.read(|tx| {
        cursors::select(
            tx,
            with_path,
            "WHERE material_sequence > last_seen_sequence ORDER BY watcher_session_key, target_session_key",
            &[],
        )
    })?)
}

/// `sweepSessionStateWatchNotices` steps 1–4 (§4.7): for the candidates whose watcher
/// session exists (`exists`), `notified := material`, `updated_at := now`, in one
/// transaction; returns the notices a restarted gateway enqueues (`N = last_seen`; on
/// schema 18 only those of cursors of the watcher's current store reach it). The caller
/// runs the prune (step 5).
pub fn sweep(
    db: &mut StateDb,
    now: i64,
    mut exists: impl FnMut(&str) -> bool,
) -> Result<Vec<Notice>, NoticeError> {
    let candidates = sweep_candidates(db)?;
    let kept: Vec<Cursor> = candidates
        .into_iter()
        .filter(|c| exists(&c.watcher_session_key))
        .collect();
    if kept.is_empty() {
        return Ok(Vec::new());
    }
    db.write(|tx| {
        for c in &kept {
            tx.prepare_cached(
                "UPDATE session_watch_cursors SET notified_sequence = ?1, updated_at = ?2 \
                 WHERE watcher_session_key = ?3 AND target_session_key = ?4",
            )?
            .execute(params![
                c.material_sequence,
                now,
                c.watcher_session_key,
                c.target_session_key
            ])?;
        }
        Ok(())
    })?;
    Ok(kept
        .iter()
        .filter(|c| cursors::is_deliverable(db, c))
        .map(|c| Notice {
            watcher_session_key: c.watcher_session_key.clone(),
            target_session_key: c.target_session_key.clone(),
            last_seen_sequence: c.last_seen_sequence,
            queue_only: c.is_ambient(),
        })
        .collect())
}
