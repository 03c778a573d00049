//! Session-state awareness over the shared state database (signals spec): the durable
//! signal log, per-session heads, watcher cursors, the one-notice-not-many protocol,
//! `changesSince` reconciliation and retention — exactly as openclaw@2026.8.1 does them,
//! readable and writable offline and across processes.
//!
//! One concept per module: [`db`] (opening, creating, transactions), [`generation`]
//! (which state schema the host's OpenClaw uses), [`kinds`] (event
//! kinds and producer defaults), [`journal`] (recording, listing, reconciliation, deletion),
//! [`cursors`] (watch cursors), [`delivery`] (which pending notices reach their
//! watcher), [`notices`] (notice text, pending, drain, sweep),
//! [`retention`] (prune and its throttle), [`follow`] (cross-process notice stream),
//! [`presence`] (whether a session exists in its store), [`lifecycle`] (what session reset
//! and deletion do to the signal state) and [`request`] (record requests
//! with the producer defaults).

pub mod cursors;
pub mod db;
pub mod delivery;
pub mod follow;
pub mod generation;
pub mod journal;
pub mod kinds;
pub mod lifecycle;
pub mod notice;
pub mod notices;
pub mod presence;
pub mod request;
pub mod retention;
pub mod watcher_stores;

pub use cursors::{Cursor, CursorError, CursorFilter};
pub use db::{Access, DbError, StateDb};
pub use journal::{Event, EventFilter, JournalError, RecordInput, Recorder, StateChanges};
pub use notice::Notice;
pub use notices::NoticeError;
pub use retention::{PruneLimits, PruneReport};

/// The SQLite binding the signal modules use, for callers (and tests) that inspect a
/// state database directly.
pub use rusqlite;
