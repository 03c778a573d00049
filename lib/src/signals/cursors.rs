//! Watch cursors (signals spec §3): the per-(watcher, target) watermarks, their seeding at
//! spawn and at explicit registration, material updates, listing and the watcher reset.

use std::path::{Path, PathBuf};

use rusqlite::{params, OptionalExtension, Row, Transaction};
use serde_json::{json, Map, Value};
use thiserror::Error;

use super::db::{DbError, StateDb};
use super::notices::Notice;
use crate::exit::{self, ExitCode};
use crate::session::session_key::parse_agent_session_key;

/// `explicit`: immediate-wake watches (spawn edges, `sessions_send watch: true`).
pub const PROVENANCE_EXPLICIT: &str = "explicit";
/// `ambient-group`: queue-only watches of a main session on its group sessions.
pub const PROVENANCE_AMBIENT_GROUP: &str = "ambient-group";

/// Why a cursor operation failed.
#[derive(Debug, Error)]
pub enum CursorError {
    /// The database failed.
    #[error(transparent)]
    Db(#[from] DbError),
    /// The registration is refused, as the gateway refuses it (self-watch, bare watcher key).
    #[error("{0}")]
    Refused(String),
}

impl ExitCode for CursorError {
    fn exit_code(&self) -> i32 {
        match self {
            CursorError::Db(e) => e.exit_code(),
            CursorError::Refused(_) => exit::DATA_ERR,
        }
    }
}

/// `isNotifiableWatcherKey`: agent-qualified keys only (`agent:<id>:<rest>`), never `global`.
pub fn is_notifiable_watcher(key: &str) -> bool {
    parse_agent_session_key(key).is_some()
}

/// One row of `session_watch_cursors`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cursor {
    /// The watcher's session key.
    pub watcher_session_key: String,
    /// 2026.9.6's store provenance (`None` when the column is absent or NULL).
    pub watcher_store_path: Option<String>,
    /// The watched session key.
    pub target_session_key: String,
    /// Acknowledged position (the notice's `changesSince`).
    pub last_seen_sequence: i64,
    /// Frozen notified watermark.
    pub notified_sequence: i64,
    /// Latest material event.
    pub material_sequence: i64,
    /// `explicit` or `ambient-group`.
    pub provenance: String,
    /// Last write, epoch ms.
    pub updated_at: i64,
}

/// The state of a cursor in the notice state machine (§4.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CursorState {
    /// `last_seen = notified = material` (or nothing pending).
    Idle,
    /// A notice is pending (`notified > last_seen`).
    Pending,
    /// Pending, and material events arrived after the notice was opened.
    PendingInterleaved,
}

impl CursorState {
    /// `idle`, `pending` or `pending+interleaved`.
    pub fn as_str(self) -> &'static str {
        match self {
            CursorState::Idle => "idle",
            CursorState::Pending => "pending",
            CursorState::PendingInterleaved => "pending+interleaved",
        }
    }
}

impl Cursor {
    /// Reads a row selected with [`CURSOR_COLUMNS`] (or its variant with the store path).
    fn from_row(row: &Row<'_>, with_path: bool) -> rusqlite::Result<Cursor> {
        let o = usize::from(with_path);
        Ok(Cursor {
            watcher_session_key: row.get(0)?,
            watcher_store_path: if with_path { row.get(1)? } else { None },
            target_session_key: row.get(1 + o)?,
            last_seen_sequence: row.get(2 + o)?,
            notified_sequence: row.get(3 + o)?,
            material_sequence: row.get(4 + o)?,
            provenance: row.get(5 + o)?,
            updated_at: row.get(6 + o)?,
        })
    }

    /// Where the cursor is in the notice state machine.
    pub fn state(&self) -> CursorState {
        if self.notified_sequence > self.last_seen_sequence {
            if self.material_sequence > self.notified_sequence {
                CursorState::PendingInterleaved
            } else {
                CursorState::Pending
            }
        } else {
            CursorState::Idle
        }
    }

    /// Whether a notice is pending (decision 7: `notified > last_seen`).
    pub fn is_pending(&self) -> bool {
        self.notified_sequence > self.last_seen_sequence
    }

    /// Whether the watch is queue-only (ambient group).
    pub fn is_ambient(&self) -> bool {
        self.provenance == PROVENANCE_AMBIENT_GROUP
    }

    /// The pending notice of this cursor, if one is pending.
    pub fn pending_notice(&self) -> Option<Notice> {
        self.is_pending().then(|| Notice {
            watcher_session_key: self.watcher_session_key.clone(),
            target_session_key: self.target_session_key.clone(),
            last_seen_sequence: self.last_seen_sequence,
            queue_only: self.is_ambient(),
        })
    }

    /// The row as JSON (camelCase), with the derived `state`.
    pub fn to_json(&self, include_store_path: bool) -> Value {
        let mut m = Map::new();
        m.insert("watcherSessionKey".into(), json!(self.watcher_session_key));
        if include_store_path {
            m.insert("watcherStorePath".into(), json!(self.watcher_store_path));
        }
        m.insert("targetSessionKey".into(), json!(self.target_session_key));
        m.insert("lastSeenSequence".into(), json!(self.last_seen_sequence));
        m.insert("notifiedSequence".into(), json!(self.notified_sequence));
        m.insert("materialSequence".into(), json!(self.material_sequence));
        m.insert("provenance".into(), json!(self.provenance));
        m.insert("updatedAt".into(), json!(self.updated_at));
        m.insert("state".into(), json!(self.state().as_str()));
        Value::Object(m)
    }
}

const CURSOR_COLUMNS: &str = "watcher_session_key, target_session_key, last_seen_sequence, \
     notified_sequence, material_sequence, provenance, updated_at";
const CURSOR_COLUMNS_WITH_PATH: &str =
    "watcher_session_key, watcher_store_path, target_session_key, \
     last_seen_sequence, notified_sequence, material_sequence, provenance, updated_at";

/// The select list for cursors on this database.
pub(crate) fn columns(with_path: bool) -> &'static str {
    if with_path {
        CURSOR_COLUMNS_WITH_PATH
    } else {
        CURSOR_COLUMNS
    }
}

/// Selects cursors with a `WHERE`/`ORDER BY` tail and positional parameters.
pub(crate) fn select(
    tx: &Transaction<'_>,
    with_path: bool,
    tail: &str,
    params: &[&dyn rusqlite::ToSql],
) -> rusqlite::Result<Vec<Cursor>> {
    let sql = format!(
        "SELECT {} FROM session_watch_cursors {tail}",
        columns(with_path)
    );
    let mut stmt = tx.prepare_cached(&sql)?;
    let rows = stmt.query_map(params, |r| Cursor::from_row(r, with_path))?;
    rows.collect()
}

fn read_cursor(
    tx: &Transaction<'_>,
    with_path: bool,
    watcher: &str,
    target: &str,
) -> rusqlite::Result<Option<Cursor>> {
    Ok(select(
        tx,
        with_path,
        "WHERE watcher_session_key = ?1 AND target_session_key = ?2",
        &[&watcher, &target],
    )?
    .into_iter()
    .next())
}

/// The physical agent store a 2026.9.6 gateway records as `watcher_store_path`:
/// `<stateDir>/agents/<agentId>/agent/openclaw-agent.sqlite`, resolved through existing
/// ancestors; `None` when the database is not at `<stateDir>/state/openclaw.sqlite`.
pub fn watcher_store_path(db_path: &Path, watcher: &str) -> Option<String> {
    let parsed = parse_agent_session_key(watcher)?;
    let state_dir = db_path.parent()?.parent()?;
    let agent = crate::session::session_key::normalize_agent_id(&parsed.agent_id);
    let p: PathBuf = state_dir
        .join("agents")
        .join(agent)
        .join("agent")
        .join("openclaw-agent.sqlite");
    Some(
        super::db::resolve_via_existing_ancestor(&p)
            .to_string_lossy()
            .into_owned(),
    )
}

/// What the writer knows about the database it writes cursors into.
#[derive(Debug, Clone)]
pub(crate) struct CursorWriter<'a> {
    /// The database path (for `watcher_store_path`).
    pub db_path: &'a Path,
    /// Whether the table has `watcher_store_path`.
    pub with_path: bool,
}

impl CursorWriter<'_> {
    fn store_path(&self, watcher: &str) -> Option<String> {
        if self.with_path {
            watcher_store_path(self.db_path, watcher)
        } else {
            None
        }
    }

    /// `upsertSeedCursor` (2026.8.1): all three watermarks at `sequence`; on conflict the
    /// provenance is kept (2026.9.6 would reset it to explicit).
    pub fn seed(
        &self,
        tx: &Transaction<'_>,
        watcher: &str,
        target: &str,
        sequence: i64,
        provenance: &str,
        now: i64,
    ) -> rusqlite::Result<()> {
        if self.with_path {
            tx.prepare_cached(
                "INSERT INTO session_watch_cursors (watcher_session_key, watcher_store_path, target_session_key, \
                 last_seen_sequence, notified_sequence, material_sequence, provenance, updated_at) \
                 VALUES (?1, ?2, ?3, ?4, ?4, ?4, ?5, ?6) \
                 ON CONFLICT (watcher_session_key, target_session_key) DO UPDATE SET \
                 last_seen_sequence = ?4, notified_sequence = ?4, material_sequence = ?4, updated_at = ?6, \
                 watcher_store_path = COALESCE(watcher_store_path, ?2)",
            )?
            .execute(params![watcher, self.store_path(watcher), target, sequence, provenance, now])?;
        } else {
            tx.prepare_cached(
                "INSERT INTO session_watch_cursors (watcher_session_key, target_session_key, \
                 last_seen_sequence, notified_sequence, material_sequence, provenance, updated_at) \
                 VALUES (?1, ?2, ?3, ?3, ?3, ?4, ?5) \
                 ON CONFLICT (watcher_session_key, target_session_key) DO UPDATE SET \
                 last_seen_sequence = ?3, notified_sequence = ?3, material_sequence = ?3, updated_at = ?5",
            )?
            .execute(params![watcher, target, sequence, provenance, now])?;
        }
        Ok(())
    }

    /// `updateMaterialCursor` (§4.2): open a notice at `sequence` unless one is pending,
    /// advance the material watermark; returns the notice to deliver.
    pub fn material(
        &self,
        tx: &Transaction<'_>,
        watcher: &str,
        target: &str,
        sequence: i64,
        now: i64,
    ) -> rusqlite::Result<Notice> {
        let current = read_cursor(tx, self.with_path, watcher, target)?;
        let last_seen = current.as_ref().map_or(0, |c| c.last_seen_sequence);
        let notified = current.as_ref().map_or(0, |c| c.notified_sequence);
        let frozen = if notified == last_seen {
            sequence
        } else {
            notified
        };
        if self.with_path {
            tx.prepare_cached(
                "INSERT INTO session_watch_cursors (watcher_session_key, watcher_store_path, target_session_key, \
                 last_seen_sequence, notified_sequence, material_sequence, provenance, updated_at) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'explicit', ?7) \
                 ON CONFLICT (watcher_session_key, target_session_key) DO UPDATE SET \
                 notified_sequence = ?5, material_sequence = ?6, updated_at = ?7",
            )?
            .execute(params![
                watcher,
                self.store_path(watcher),
                target,
                last_seen,
                frozen,
                sequence,
                now
            ])?;
        } else {
            tx.prepare_cached(
                "INSERT INTO session_watch_cursors (watcher_session_key, target_session_key, \
                 last_seen_sequence, notified_sequence, material_sequence, provenance, updated_at) \
                 VALUES (?1, ?2, ?3, ?4, ?5, 'explicit', ?6) \
                 ON CONFLICT (watcher_session_key, target_session_key) DO UPDATE SET \
                 notified_sequence = ?4, material_sequence = ?5, updated_at = ?6",
            )?
            .execute(params![watcher, target, last_seen, frozen, sequence, now])?;
        }
        Ok(Notice {
            watcher_session_key: watcher.to_string(),
            target_session_key: target.to_string(),
            last_seen_sequence: last_seen,
            queue_only: current.is_some_and(|c| c.is_ambient()),
        })
    }
}

/// What an explicit registration did.
#[derive(Debug, Clone)]
pub struct Registration {
    /// The cursor after registration.
    pub cursor: Cursor,
    /// Whether a new cursor was seeded (false: one existed).
    pub created: bool,
    /// Whether an ambient cursor was promoted to explicit.
    pub promoted: bool,
}

/// The gateway's refusals of an explicit registration: a self-watch, and a watcher that
/// is not agent-qualified (such as `global`).
pub fn check_registration(watcher: &str, target: &str) -> Result<(), CursorError> {
    if watcher == target {
        return Err(CursorError::Refused(format!(
            "refused: a session cannot watch itself ({watcher})"
        )));
    }
    if !is_notifiable_watcher(watcher) {
        return Err(CursorError::Refused(format!(
            "refused: watcher {watcher:?} is not an agent-qualified session key (agent:<id>:<rest>); such sessions get no notices"
        )));
    }
    Ok(())
}

/// `registerSessionStateWatch` (§3.3): refuse self and bare watchers; promote an existing
/// cursor to explicit; otherwise seed at the target's current head (prior history never
/// notifies). `target_agent` picks the head; `None` means the agent of the target key.
pub fn register(
    db: &mut StateDb,
    watcher: &str,
    target: &str,
    target_agent: &str,
    now: i64,
) -> Result<Registration, CursorError> {
    check_registration(watcher, target)?;
    let db_path = db.path().to_path_buf();
    let writer = CursorWriter {
        db_path: &db_path,
        with_path: db.has_watcher_store_path(),
    };
    let with_path = writer.with_path;
    Ok(db.write(|tx| {
        if let Some(existing) = read_cursor(tx, with_path, watcher, target)? {
            let promoted = existing.provenance != PROVENANCE_EXPLICIT;
            if promoted {
                tx.execute(
                    "UPDATE session_watch_cursors SET provenance = 'explicit' \
                     WHERE watcher_session_key = ?1 AND target_session_key = ?2",
                    params![watcher, target],
                )?;
            }
            let cursor = read_cursor(tx, with_path, watcher, target)?.unwrap_or(existing);
            return Ok(Registration {
                cursor,
                created: false,
                promoted,
            });
        }
        let head: i64 = tx
            .query_row(
                "SELECT last_sequence FROM session_state_heads WHERE session_key = ?1 AND agent_id = ?2",
                params![target, target_agent],
                |r| r.get(0),
            )
            .optional()?
            .unwrap_or(0);
        writer.seed(tx, watcher, target, head, PROVENANCE_EXPLICIT, now)?;
        let cursor = read_cursor(tx, with_path, watcher, target)?
            .ok_or(rusqlite::Error::QueryReturnedNoRows)?;
        Ok(Registration {
            cursor,
            created: true,
            promoted: false,
        })
    })?)
}

/// `registerMainSessionGroupWatch` (§3.5): an ambient, queue-only watch of a main session
/// on a group session. An existing cursor is left as it is; otherwise one is seeded at the
/// group's current head with provenance `ambient-group`.
pub fn register_ambient(
    db: &mut StateDb,
    watcher: &str,
    target: &str,
    target_agent: &str,
    now: i64,
) -> Result<Registration, CursorError> {
    check_registration(watcher, target)?;
    let db_path = db.path().to_path_buf();
    let writer = CursorWriter {
        db_path: &db_path,
        with_path: db.has_watcher_store_path(),
    };
    let with_path = writer.with_path;
    Ok(db.write(|tx| {
        if let Some(existing) = read_cursor(tx, with_path, watcher, target)? {
            return Ok(Registration {
                cursor: existing,
                created: false,
                promoted: false,
            });
        }
        let head: i64 = tx
            .query_row(
                "SELECT last_sequence FROM session_state_heads WHERE session_key = ?1 AND agent_id = ?2",
                params![target, target_agent],
                |r| r.get(0),
            )
            .optional()?
            .unwrap_or(0);
        writer.seed(tx, watcher, target, head, PROVENANCE_AMBIENT_GROUP, now)?;
        let cursor = read_cursor(tx, with_path, watcher, target)?
            .ok_or(rusqlite::Error::QueryReturnedNoRows)?;
        Ok(Registration {
            cursor,
            created: true,
            promoted: false,
        })
    })?)
}

/// Which cursors to list.
#[derive(Debug, Clone, Default)]
pub struct CursorFilter {
    /// Only this watcher.
    pub watcher: Option<String>,
    /// Only this target.
    pub target: Option<String>,
    /// Only pending cursors.
    pub pending_only: bool,
}

/// Lists cursors, ordered by watcher then target.
pub fn list(db: &mut StateDb, filter: &CursorFilter) -> Result<Vec<Cursor>, CursorError> {
    let with_path = db.has_watcher_store_path();
    let mut tail = String::from("WHERE 1 = 1");
    let mut args: Vec<&dyn rusqlite::ToSql> = Vec::new();
    if let Some(w) = &filter.watcher {
        args.push(w);
        tail.push_str(&format!(" AND watcher_session_key = ?{}", args.len()));
    }
    if let Some(t) = &filter.target {
        args.push(t);
        tail.push_str(&format!(" AND target_session_key = ?{}", args.len()));
    }
    if filter.pending_only {
        tail.push_str(" AND notified_sequence > last_seen_sequence");
    }
    tail.push_str(" ORDER BY watcher_session_key, target_session_key");
    Ok(db.read(|tx| select(tx, with_path, &tail, &args))?)
}

/// `handleSessionStateSessionReset` (§3.8): deletes every cursor the watcher holds;
/// returns how many. Target history and cursors on the session as a target are kept.
pub fn reset(db: &mut StateDb, watcher: &str) -> Result<usize, CursorError> {
    Ok(db.write(|tx| {
        tx.execute(
            "DELETE FROM session_watch_cursors WHERE watcher_session_key = ?1",
            [watcher],
        )
    })?)
}

/// Counts the cursors `reset` would delete.
pub fn count_for_watcher(db: &mut StateDb, watcher: &str) -> Result<usize, CursorError> {
    Ok(db.read(|tx| {
        tx.query_row(
            "SELECT count(*) FROM session_watch_cursors WHERE watcher_session_key = ?1",
            [watcher],
            |r| r.get::<_, i64>(0),
        )
    })? as usize)
}
