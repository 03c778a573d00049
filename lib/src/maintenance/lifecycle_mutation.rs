//! How the gateway's apply path carries out the `--fix-missing` and `--fix-dm-scope`
//! decisions (`applySessionEntryLifecycleMutation`): each removal and each repair names
//! its entry by the key *trimmed*, and acts only when the entry under that key in a fresh
//! load is still exactly the one planned (`JSON.stringify` equal for a removal; the same
//! `sessionId` and `sessionFile` for a repair).
//!
//! For a key with surrounding whitespace (`" agent:work:x "`) the trimmed key names no
//! entry, or another one: the gateway then keeps the padded entry (and so its transcript
//! stays referenced), and may remove or repair the entry under the trimmed key instead.
//! The decisions are first taken on the store as the gateway's apply path takes them
//! ([`super::missing::fix_missing`], [`super::rules::retire_dm_scope`] on the working
//! set); [`settle`] then turns them into what that mutation does.

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::rules::WorkingSet;
use super::store_pass::{PassMode, StoreFacts};
use crate::js;
use crate::js::jsjson;

/// The entries planned for removal and repair, by store position, in the gateway's
/// order (`--fix-missing` removals, then `--fix-dm-scope` ones; repairs in store order).
#[derive(Debug, Default)]
pub struct Planned {
    /// Removed by `--fix-missing` (removed from the working set already).
    pub missing: Vec<usize>,
    /// Retired by `--fix-dm-scope` (removed from the working set already).
    pub dm_scope: Vec<usize>,
    /// `--fix-missing` repairs: (position, the new `sessionFile`), not yet applied.
    pub repairs: Vec<(usize, String)>,
}

/// What the mutation did, by store position.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Settled {
    /// Planned `--fix-missing` removals whose own key was removed (`missingApplied`).
    pub missing: Vec<usize>,
    /// Planned `--fix-dm-scope` removals whose own key was removed.
    pub dm_scope: Vec<usize>,
    /// The entries a `--fix-dm-scope` removal removed (their transcripts are archived).
    pub dm_removed: Vec<usize>,
    /// Planned repairs whose own entry now has the new `sessionFile` (`repairedApplied`,
    /// before the budget and the rules remove any).
    pub repaired: Vec<usize>,
}

/// Carries out `planned` on `ws` (and the repairs on `store`) as the gateway's
/// lifecycle mutation does; see the module doc.
pub fn settle(ws: &mut WorkingSet, store: &mut StoreFacts, planned: Planned) -> Settled {
    let Planned {
        missing,
        dm_scope,
        repairs,
    } = planned;
    // The planned removals were taken on the apply path's own copy: the fresh load has
    // every entry.
    for &i in missing.iter().chain(&dm_scope) {
        ws.revive(i);
    }
    let padded = |i: usize| js::trim(ws.key(i)).len() != ws.key(i).len();
    let any_padded = missing
        .iter()
        .chain(&dm_scope)
        .chain(repairs.iter().map(|(i, _)| i))
        .any(|&i| padded(i));
    // Only a padded key needs the lookup by key (a store's keys are distinct).
    let by_key: HashMap<String, usize> = if any_padded {
        (0..ws.alive().len())
            .map(|i| (ws.key(i).to_string(), i))
            .collect()
    } else {
        HashMap::new()
    };
    let target = |ws: &WorkingSet, i: usize| -> Option<usize> {
        let key = ws.key(i);
        let trimmed = js::trim(key);
        if trimmed.is_empty() {
            return None;
        }
        if trimmed.len() == key.len() {
            return Some(i);
        }
        by_key.get(trimmed).copied()
    };
    let repaired_file: HashMap<usize, &str> =
        repairs.iter().map(|(i, f)| (*i, f.as_str())).collect();
    let mut out = Settled::default();
    let removals = missing
        .iter()
        .map(|&i| (i, false))
        .chain(dm_scope.iter().map(|&i| (i, true)));
    for (planned, dm) in removals {
        let Some(t) = target(ws, planned).filter(|&t| ws.is_alive(t)) else {
            continue;
        };
        // The planned entry as the apply path's copy holds it: repaired first.
        let planned_file = repaired_file.get(&planned).copied();
        let same = if t == planned {
            // The same entry, unchanged unless it was repaired since.
            planned_file.is_none()
        } else {
            entry_text(store, planned, planned_file) == entry_text(store, t, None)
        };
        if same {
            ws.remove(t);
            if dm {
                out.dm_removed.push(t);
            }
        }
    }
    out.missing = missing.into_iter().filter(|&i| !ws.is_alive(i)).collect();
    out.dm_scope = dm_scope.into_iter().filter(|&i| !ws.is_alive(i)).collect();
    // The repairs, on the entries left: each checks the entry as earlier repairs left it.
    let mut file_now: HashMap<usize, Option<String>> = HashMap::new();
    let mut applied: Vec<(usize, &str)> = Vec::new();
    for (planned, file) in &repairs {
        let Some(t) = target(ws, *planned).filter(|&t| ws.is_alive(t)) else {
            continue;
        };
        let (want, now) = (ws.entry(*planned), ws.entry(t));
        let current_file = file_now
            .get(&t)
            .cloned()
            .unwrap_or_else(|| now.session_file.clone());
        if now.session_id == want.session_id && current_file == want.session_file {
            file_now.insert(t, Some(file.clone()));
            applied.push((t, file));
        }
    }
    for (t, file) in applied {
        if let Some(f) = store.repair(t, file, PassMode::Apply) {
            ws.set_entry(t, f);
        }
    }
    out.repaired = repairs
        .iter()
        .filter(|(i, file)| {
            let f = ws.entry(*i);
            f.repaired && f.session_file.as_deref() == Some(file.as_str())
        })
        .map(|(i, _)| *i)
        .collect();
    out
}

/// `JSON.stringify` of entry `i` after the load pass, with `sessionFile` set when given.
fn entry_text(store: &StoreFacts, i: usize, session_file: Option<&str>) -> String {
    let entry: Map<String, Value> = store.entry(i, session_file);
    let mut out = String::new();
    jsjson::write_object(&mut out, &entry, None);
    out
}
