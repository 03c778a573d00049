//! Whether a pending notice can reach its watcher. A cursor with `notified > last_seen` is
//! pending in the state machine (`signals.md` §4.5), but 2026.9.6 delivers its notice only
//! when the queue accepts it and a turn of the watcher drains it:
//! - on state schema 18 the queue drops a notice whose cursor records no store (a legacy
//!   NULL `watcher_store_path`) or a store that is not the watcher's current one
//!   (`isSystemEventStoreCurrent`: "store replaced"), and the acknowledge skips such a
//!   cursor, so it stays pending until re-registration or expiry (`signals.md` §3.7, §4.3);
//! - a watcher whose session is gone from its store runs no turn to drain the queue, and a
//!   gateway start does not re-open its notice (`sweepSessionStateWatchNotices` keeps only
//!   watchers whose session exists, `signals.md` §4.7).
//!
//! Pending counts (`claw-watch list --pending`, `pending`, `claw-signals stats`) count the
//! deliverable ones and report the others with the reason, so that a backlog nobody will
//! ever see is not mistaken for work a watcher has yet to do.

use super::cursors::{self, Cursor};
use super::db::StateDb;

/// Why a pending notice never reaches its watcher.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Undeliverable {
    /// Schema 18: the cursor records no store (a cursor written before 2026.9.6).
    NoStore,
    /// Schema 18: the cursor's store is not the watcher's current store.
    StoreReplaced,
    /// The watcher's session is not in its store (which exists and was read).
    WatcherMissing,
}

impl Undeliverable {
    /// Every reason, in report order.
    pub const ALL: [Undeliverable; 3] = [
        Undeliverable::NoStore,
        Undeliverable::StoreReplaced,
        Undeliverable::WatcherMissing,
    ];

    /// The reason's code (`no-store`, `store-replaced`, `watcher-missing`).
    pub fn code(self) -> &'static str {
        match self {
            Undeliverable::NoStore => "no-store",
            Undeliverable::StoreReplaced => "store-replaced",
            Undeliverable::WatcherMissing => "watcher-missing",
        }
    }

    /// What the reason means, and what makes the watch live again.
    pub fn why(self) -> &'static str {
        match self {
            Undeliverable::NoStore => {
                "the cursor records no watcher store; 2026.9.6 drops its notices until the watch is registered again"
            }
            Undeliverable::StoreReplaced => {
                "the cursor's watcher store is not the watcher's current store; 2026.9.6 drops its notices until the watch is registered again"
            }
            Undeliverable::WatcherMissing => {
                "the watcher's session is not in its session store; no turn drains the notice and a gateway start does not re-open it"
            }
        }
    }
}

/// Why `cursor`'s pending notice never reaches its watcher, or `None` when it does (or the
/// cursor is not pending). `watcher_known` tells whether a watcher session exists in its
/// store (`None`: that cannot be told here, such as a store absent from this host).
pub fn undeliverable(
    db: &StateDb,
    cursor: &Cursor,
    watcher_known: &mut dyn FnMut(&str) -> Option<bool>,
) -> Option<Undeliverable> {
    if !cursor.is_pending() {
        return None;
    }
    if !cursors::is_deliverable(db, cursor) {
        return Some(if cursor.watcher_store_path.is_none() {
            Undeliverable::NoStore
        } else {
            Undeliverable::StoreReplaced
        });
    }
    (watcher_known(&cursor.watcher_session_key) == Some(false))
        .then_some(Undeliverable::WatcherMissing)
}

/// Pending cursors split by whether their notices reach the watcher.
#[derive(Debug, Clone, Default)]
pub struct PendingSplit {
    /// Cursors whose notices reach the watcher.
    pub deliverable: Vec<Cursor>,
    /// Cursors whose notices never do, with the reason.
    pub undeliverable: Vec<(Cursor, Undeliverable)>,
}

impl PendingSplit {
    /// How many undeliverable cursors have `reason`.
    pub fn count(&self, reason: Undeliverable) -> usize {
        self.undeliverable
            .iter()
            .filter(|(_, r)| *r == reason)
            .count()
    }
}

/// Splits `pending` (cursors with `notified > last_seen`) into deliverable and not; the
/// order of each part is kept. Each watcher is asked about once.
pub fn split(
    db: &StateDb,
    pending: Vec<Cursor>,
    mut watcher_known: impl FnMut(&str) -> Option<bool>,
) -> PendingSplit {
    let mut seen: std::collections::HashMap<String, Option<bool>> = Default::default();
    let mut known = |w: &str| {
        if let Some(k) = seen.get(w) {
            return *k;
        }
        let k = watcher_known(w);
        seen.insert(w.to_string(), k);
        k
    };
    let mut out = PendingSplit::default();
    for c in pending {
        match undeliverable(db, &c, &mut known) {
            Some(r) => out.undeliverable.push((c, r)),
            None if c.is_pending() => out.deliverable.push(c),
            None => {}
        }
    }
    out
}
