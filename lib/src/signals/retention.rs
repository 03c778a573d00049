//! Retention (signals spec §6): the 30-day / 50 000-row prune with pruned watermarks
//! stamped before deletion, cursor expiry, and the hourly throttle of the opportunistic
//! prune.
//!
//! The gateway's throttle lives in process memory (a long-lived process prunes at most
//! hourly). A clawstate command is one short process, so the throttle is kept beside the
//! database, in `<db>.clawstate-prune` (the time of the last prune, in ms): the
//! opportunistic prune then runs hourly across clawstate processes, as it would in one
//! gateway, instead of on every `record`. It lives in the database's own directory (the
//! gateway's, 0700), not under a temp directory: another local user cannot put a link or a
//! FIFO there, and every writer finds it whatever its `TMPDIR`. It is read and written as a
//! data file ([`crate::fs::data_file`]): never through a link, never blocking.

use std::path::Path;

use rusqlite::{params, OptionalExtension, Transaction};
use serde_json::{json, Value};

use super::db::{DbError, StateDb};
use crate::fs::data_file::DataPath;

/// Events older than this are pruned (30 days).
pub const RETENTION_MS: i64 = 30 * 24 * 60 * 60 * 1000;
/// At most this many events are kept.
pub const MAX_ROWS: i64 = 50_000;
/// The opportunistic prune runs at most this often (1 h).
pub const PRUNE_INTERVAL_MS: i64 = 60 * 60 * 1000;

/// The bounds of one prune.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PruneLimits {
    /// Age limit in ms (events and cursors).
    pub retention_ms: i64,
    /// Row cap.
    pub max_rows: i64,
}

impl Default for PruneLimits {
    fn default() -> Self {
        PruneLimits {
            retention_ms: RETENTION_MS,
            max_rows: MAX_ROWS,
        }
    }
}

/// What a prune removed (or, dry, would remove).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PruneReport {
    /// Events older than the retention.
    pub events_by_age: usize,
    /// Events beyond the row cap.
    pub events_by_row_cap: usize,
    /// Heads whose pruned watermark rose.
    pub heads_stamped: usize,
    /// Cursors not updated within the retention.
    pub cursors_expired: usize,
    /// Events left.
    pub remaining: usize,
    /// Nothing was written.
    pub dry_run: bool,
}

impl PruneReport {
    /// As JSON (camelCase).
    pub fn to_json(&self) -> Value {
        json!({
            "eventsByAge": self.events_by_age,
            "eventsByRowCap": self.events_by_row_cap,
            "headsStamped": self.heads_stamped,
            "cursorsExpired": self.cursors_expired,
            "remaining": self.remaining,
            "dryRun": self.dry_run,
        })
    }
}

/// Stamps `pruned_max_sequence` for every (session, agent) group of rows matching `cond`
/// (monotonic; a session without head is skipped); returns the keys stamped.
fn stamp(
    tx: &Transaction<'_>,
    cond: &str,
    bound: i64,
    now: i64,
    stamped: &mut std::collections::BTreeSet<(String, String)>,
) -> rusqlite::Result<()> {
    let groups: Vec<(String, String, i64)> = {
        let mut stmt = tx.prepare(&format!(
            "SELECT session_key, agent_id, MAX(sequence) FROM session_state_events WHERE {cond} \
             GROUP BY session_key, agent_id"
        ))?;
        let rows = stmt.query_map([bound], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
        rows.collect::<rusqlite::Result<_>>()?
    };
    let mut upd = tx.prepare(
        "UPDATE session_state_heads SET pruned_max_sequence = ?1, updated_at = ?2 \
         WHERE session_key = ?3 AND agent_id = ?4 AND pruned_max_sequence < ?1",
    )?;
    for (key, agent, max) in groups {
        if upd.execute(params![max, now, key, agent])? > 0 {
            stamped.insert((key, agent));
        }
    }
    Ok(())
}

/// `pruneSessionStateEvents` (§6), one immediate transaction: stamp watermarks and delete
/// events older than the retention, then beyond the row cap (oldest sequences first, across
/// sessions), then expire cursors. Heads are never deleted. With `dry_run` nothing is
/// written and the counts say what would be removed.
pub fn prune(
    db: &mut StateDb,
    now: i64,
    limits: &PruneLimits,
    dry_run: bool,
) -> Result<PruneReport, DbError> {
    let cutoff = now - limits.retention_ms;
    let cap = limits.max_rows.max(0);
    if dry_run || db.is_missing() {
        return db.read(|tx| {
            let one = |sql: &str, p: &[&dyn rusqlite::ToSql]| {
                tx.query_row(sql, p, |r| r.get::<_, i64>(0))
            };
            let by_age = one(
                "SELECT count(*) FROM session_state_events WHERE occurred_at < ?1",
                &[&cutoff],
            )?;
            let seq_cut: Option<i64> = tx
                .query_row(
                    "SELECT sequence FROM session_state_events WHERE occurred_at >= ?1 \
                     ORDER BY sequence DESC LIMIT 1 OFFSET ?2",
                    params![cutoff, cap],
                    |r| r.get(0),
                )
                .optional()?;
            let by_cap = match seq_cut {
                Some(s) => one(
                    "SELECT count(*) FROM session_state_events WHERE occurred_at >= ?1 AND sequence <= ?2",
                    &[&cutoff, &s],
                )?,
                None => 0,
            };
            let heads = one(
                "SELECT count(*) FROM session_state_heads h JOIN (SELECT session_key, agent_id, MAX(sequence) AS m \
                 FROM session_state_events WHERE occurred_at < ?1 OR sequence <= ?2 GROUP BY session_key, agent_id) d \
                 ON h.session_key = d.session_key AND h.agent_id = d.agent_id WHERE h.pruned_max_sequence < d.m",
                &[&cutoff, &seq_cut.unwrap_or(i64::MIN)],
            )?;
            let cursors = one(
                "SELECT count(*) FROM session_watch_cursors WHERE updated_at < ?1",
                &[&cutoff],
            )?;
            let total = one("SELECT count(*) FROM session_state_events", &[])?;
            Ok(PruneReport {
                events_by_age: by_age as usize,
                events_by_row_cap: by_cap as usize,
                heads_stamped: heads as usize,
                cursors_expired: cursors as usize,
                remaining: (total - by_age - by_cap) as usize,
                dry_run: true,
            })
        });
    }
    db.write(|tx| {
        let mut stamped = std::collections::BTreeSet::new();
        stamp(tx, "occurred_at < ?1", cutoff, now, &mut stamped)?;
        let by_age = tx.execute(
            "DELETE FROM session_state_events WHERE occurred_at < ?1",
            [cutoff],
        )?;
        let seq_cut: Option<i64> = tx
            .query_row(
                "SELECT sequence FROM session_state_events ORDER BY sequence DESC LIMIT 1 OFFSET ?1",
                [cap],
                |r| r.get(0),
            )
            .optional()?;
        let mut by_cap = 0;
        if let Some(s) = seq_cut {
            stamp(tx, "sequence <= ?1", s, now, &mut stamped)?;
            by_cap = tx.execute("DELETE FROM session_state_events WHERE sequence <= ?1", [s])?;
        }
        let cursors = tx.execute(
            "DELETE FROM session_watch_cursors WHERE updated_at < ?1",
            [cutoff],
        )?;
        let remaining: i64 =
            tx.query_row("SELECT count(*) FROM session_state_events", [], |r| r.get(0))?;
        Ok(PruneReport {
            events_by_age: by_age,
            events_by_row_cap: by_cap,
            heads_stamped: stamped.len(),
            cursors_expired: cursors,
            remaining: remaining as usize,
            dry_run: false,
        })
    })
}

/// The hourly throttle of the opportunistic prune (see the module documentation).
#[derive(Debug, Clone)]
pub struct PruneThrottle {
    file: Option<DataPath>,
    last: i64,
}

impl PruneThrottle {
    /// A throttle kept in memory only, starting at 0 (the first record prunes).
    pub fn in_process() -> PruneThrottle {
        PruneThrottle {
            file: None,
            last: 0,
        }
    }

    /// The persisted throttle of a database.
    pub fn for_db(db_path: &Path) -> PruneThrottle {
        let file = throttle_path(db_path);
        let last = file
            .as_ref()
            .and_then(|f| f.read_small(64, "a prune throttle").ok())
            .and_then(|b| String::from_utf8(b).ok())
            .and_then(|s| s.trim().parse::<i64>().ok())
            .unwrap_or(0);
        PruneThrottle { file, last }
    }

    /// Whether the opportunistic prune is due at `now` (`now - last > 1 h`).
    pub fn due(&self, now: i64) -> bool {
        now - self.last > PRUNE_INTERVAL_MS
    }

    /// Records a successful prune at `now` (best effort for the file).
    pub fn mark(&mut self, now: i64) {
        self.last = now;
        if let Some(file) = &self.file {
            let _ =
                crate::fs::atomic_file::replace_data_file(file, now.to_string().as_bytes(), 0o600);
        }
    }
}

/// `<db>.clawstate-prune` beside a database (`None` for a path without a file name).
pub fn throttle_path(db_path: &Path) -> Option<DataPath> {
    let dir = db_path.parent().filter(|d| !d.as_os_str().is_empty())?;
    let mut name = db_path.file_name()?.to_os_string();
    name.push(".clawstate-prune");
    DataPath::beneath(dir, Path::new(&name)).ok()
}

/// Records that a full (default-bounds) prune ran at `now`, for commands that prune
/// explicitly (`prune`, `sweep`), as the gateway's `lastPruneAt` does.
pub fn mark_pruned(db_path: &Path, limits: &PruneLimits, now: i64) {
    let d = PruneLimits::default();
    if limits.retention_ms <= d.retention_ms && limits.max_rows <= d.max_rows {
        PruneThrottle::for_db(db_path).mark(now);
    }
}
