//! Watch cursors (signals spec §3): the per-(watcher, target) watermarks, their seeding at
//! spawn and at explicit registration, material updates, listing and the watcher reset.

use std::cell::Cell;
use std::path::PathBuf;

use rusqlite::{params, OptionalExtension, Row, Transaction};
use serde_json::{json, Map, Value};
use thiserror::Error;

use super::db::{DbError, StateDb};
use super::notice::Notice;
use super::watcher_stores::{watcher_store_path, WatcherStores};
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

/// Whether `cursor`'s notices reach its watcher: always on a database without store
/// provenance; on schema 18 only when the cursor's store is the watcher's current one (a
/// NULL or replaced store is dropped by the gateway's queue as "store replaced").
pub fn is_deliverable(db: &StateDb, cursor: &Cursor) -> bool {
    if !db.tracks_watcher_stores() {
        return true;
    }
    cursor.watcher_store_path.is_some()
        && cursor.watcher_store_path == db.watcher_store(&cursor.watcher_session_key)
}

/// What the writer knows about the database it writes cursors into.
#[derive(Debug)]
pub(crate) struct CursorWriter {
    /// Whether the table has `watcher_store_path` (set once the writer appends it).
    with_path: Cell<bool>,
    /// Whether cursors carry store provenance (schema 18: 2026.9.6's writers).
    tracks_stores: bool,
    /// The watchers' current stores.
    stores: StoreLookup,
}

/// The current store of each watcher, as the database resolves it.
#[derive(Debug)]
struct StoreLookup {
    stores: Option<WatcherStores>,
    db_path: PathBuf,
}

impl StoreLookup {
    fn of(&self, watcher: &str) -> Option<String> {
        match &self.stores {
            Some(s) => s.of(watcher),
            None => watcher_store_path(&self.db_path, watcher),
        }
    }
}

/// A material update's result: the notice, when one reaches the watcher.
pub(crate) struct Material {
    /// The notice (`None`: the cursor belongs to another store and was left as it is, or
    /// its store is not the watcher's current one, so the queue drops it).
    pub notice: Option<Notice>,
}

impl CursorWriter {
    /// A writer for `db`.
    pub fn for_db(db: &StateDb) -> CursorWriter {
        CursorWriter {
            with_path: Cell::new(db.has_watcher_store_path()),
            tracks_stores: db.tracks_watcher_stores(),
            stores: StoreLookup {
                stores: db.stores_for_writer(),
                db_path: db.path().to_path_buf(),
            },
        }
    }

    /// Whether the table has `watcher_store_path` now.
    pub fn with_path(&self) -> bool {
        self.with_path.get()
    }

    /// Whether cursors carry store provenance.
    pub fn tracks_stores(&self) -> bool {
        self.tracks_stores
    }

    /// The watcher's current store, where the table records one.
    pub fn current_store(&self, watcher: &str) -> Option<String> {
        if self.tracks_stores || self.with_path.get() {
            self.stores.of(watcher)
        } else {
            None
        }
    }

    /// `ensureWatcherStoreColumn` (9.6): a migrated schema-18 database gets the column
    /// appended by its first cursor write.
    fn ensure_column(&self, tx: &Transaction<'_>) -> rusqlite::Result<()> {
        if self.tracks_stores && !self.with_path.get() {
            tx.execute_batch(
                "ALTER TABLE session_watch_cursors ADD COLUMN watcher_store_path TEXT",
            )?;
            self.with_path.set(true);
        }
        Ok(())
    }

    /// `upsertSeedCursor`: all three watermarks at `sequence`. On conflict 2026.8.1 keeps
    /// the provenance (and clawstate kept a recorded store); 2026.9.6 (schema 18)
    /// overwrites both with the new provenance and `store`.
    pub fn seed(
        &self,
        tx: &Transaction<'_>,
        watcher: &str,
        target: &str,
        sequence: i64,
        provenance: &str,
        now: i64,
    ) -> rusqlite::Result<()> {
        self.ensure_column(tx)?;
        if self.tracks_stores {
            tx.prepare_cached(
                "INSERT INTO session_watch_cursors (watcher_session_key, watcher_store_path, target_session_key, \
                 last_seen_sequence, notified_sequence, material_sequence, provenance, updated_at) \
                 VALUES (?1, ?2, ?3, ?4, ?4, ?4, ?5, ?6) \
                 ON CONFLICT (watcher_session_key, target_session_key) DO UPDATE SET \
                 watcher_store_path = ?2, provenance = ?5, \
                 last_seen_sequence = ?4, notified_sequence = ?4, material_sequence = ?4, updated_at = ?6",
            )?
            .execute(params![watcher, self.current_store(watcher), target, sequence, provenance, now])?;
        } else if self.with_path.get() {
            tx.prepare_cached(
                "INSERT INTO session_watch_cursors (watcher_session_key, watcher_store_path, target_session_key, \
                 last_seen_sequence, notified_sequence, material_sequence, provenance, updated_at) \
                 VALUES (?1, ?2, ?3, ?4, ?4, ?4, ?5, ?6) \
                 ON CONFLICT (watcher_session_key, target_session_key) DO UPDATE SET \
                 last_seen_sequence = ?4, notified_sequence = ?4, material_sequence = ?4, updated_at = ?6, \
                 watcher_store_path = COALESCE(watcher_store_path, ?2)",
            )?
            .execute(params![watcher, self.current_store(watcher), target, sequence, provenance, now])?;
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
    /// advance the material watermark. `lineage`: the watcher was named by the event (its
    /// store captured now) rather than found by its cursor. With store provenance a
    /// lineage watcher's cursor of another store is left as it is, and a cursor keeps its
    /// own store; the notice reaches the watcher only from its current store.
    pub fn material(
        &self,
        tx: &Transaction<'_>,
        watcher: &str,
        target: &str,
        sequence: i64,
        now: i64,
        lineage: bool,
    ) -> rusqlite::Result<Material> {
        let current = read_cursor(tx, self.with_path.get(), watcher, target)?;
        let last_seen = current.as_ref().map_or(0, |c| c.last_seen_sequence);
        let notified = current.as_ref().map_or(0, |c| c.notified_sequence);
        let frozen = if notified == last_seen {
            sequence
        } else {
            notified
        };
        let captured = self.current_store(watcher);
        let store = match &current {
            Some(c) => c.watcher_store_path.clone(),
            None if lineage => captured.clone(),
            None => None,
        };
        if self.tracks_stores && lineage && current.is_some() && captured != store {
            return Ok(Material { notice: None });
        }
        self.ensure_column(tx)?;
        if self.tracks_stores || self.with_path.get() {
            let path = if self.tracks_stores {
                store.clone()
            } else {
                self.current_store(watcher)
            };
            tx.prepare_cached(
                "INSERT INTO session_watch_cursors (watcher_session_key, watcher_store_path, target_session_key, \
                 last_seen_sequence, notified_sequence, material_sequence, provenance, updated_at) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'explicit', ?7) \
                 ON CONFLICT (watcher_session_key, target_session_key) DO UPDATE SET \
                 notified_sequence = ?5, material_sequence = ?6, updated_at = ?7",
            )?
            .execute(params![watcher, path, target, last_seen, frozen, sequence, now])?;
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
        let deliverable = !self.tracks_stores || (store.is_some() && store == captured);
        Ok(Material {
            notice: deliverable.then(|| Notice {
                watcher_session_key: watcher.to_string(),
                target_session_key: target.to_string(),
                last_seen_sequence: last_seen,
                queue_only: current.is_some_and(|c| c.is_ambient()),
            }),
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
/// notifies). `target_agent` picks the head. With store provenance (schema 18) an existing
/// cursor counts only when it belongs to the watcher's current store; one of another (or
/// no) store is re-seeded at the head with the current store.
pub fn register(
    db: &mut StateDb,
    watcher: &str,
    target: &str,
    target_agent: &str,
    now: i64,
) -> Result<Registration, CursorError> {
    check_registration(watcher, target)?;
    register_as(db, watcher, target, target_agent, now, PROVENANCE_EXPLICIT)
}

/// `registerMainSessionGroupWatch` (§3.5): an ambient, queue-only watch of a main session
/// on a group session. An existing cursor (schema 18: of the watcher's current store) is
/// left as it is; otherwise one is seeded at the group's current head with provenance
/// `ambient-group`.
pub fn register_ambient(
    db: &mut StateDb,
    watcher: &str,
    target: &str,
    target_agent: &str,
    now: i64,
) -> Result<Registration, CursorError> {
    check_registration(watcher, target)?;
    register_as(
        db,
        watcher,
        target,
        target_agent,
        now,
        PROVENANCE_AMBIENT_GROUP,
    )
}

fn register_as(
    db: &mut StateDb,
    watcher: &str,
    target: &str,
    target_agent: &str,
    now: i64,
    provenance: &str,
) -> Result<Registration, CursorError> {
    let writer = CursorWriter::for_db(db);
    let current_store = writer.current_store(watcher);
    let result = db.write(|tx| {
        let with_path = writer.with_path();
        let existing = read_cursor(tx, with_path, watcher, target)?
            .filter(|c| !writer.tracks_stores() || c.watcher_store_path == current_store);
        if let Some(existing) = existing {
            let promoted =
                provenance == PROVENANCE_EXPLICIT && existing.provenance != PROVENANCE_EXPLICIT;
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
        writer.seed(tx, watcher, target, head, provenance, now)?;
        let cursor = read_cursor(tx, writer.with_path(), watcher, target)?
            .ok_or(rusqlite::Error::QueryReturnedNoRows)?;
        Ok(Registration {
            cursor,
            created: true,
            promoted: false,
        })
    });
    db.refresh_store_column();
    Ok(result?)
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
