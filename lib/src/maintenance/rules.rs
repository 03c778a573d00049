//! The entry rules of maintenance (`store.md` §4.2–4.3, §4.6): model-run probe pruning,
//! stale pruning, capping and the `--fix-dm-scope` retirement, on a [`WorkingSet`] that
//! marks entries removed without copying the store.

use std::borrow::Cow;
use std::collections::HashSet;

use serde_json::{Map, Value};

use crate::session_key::{dm_scope_retirable, is_model_run_probe_key, is_protected_entry};

/// The entries of a store during one maintenance run: removals are marks, repairs are
/// copies of the entries they change, store order is kept.
#[derive(Debug, Clone)]
pub struct WorkingSet<'a> {
    keys: Vec<&'a str>,
    entries: Vec<Cow<'a, Map<String, Value>>>,
    alive: Vec<bool>,
    len: usize,
}

static EMPTY: std::sync::LazyLock<Map<String, Value>> = std::sync::LazyLock::new(Map::new);

impl<'a> WorkingSet<'a> {
    /// All entries of `map`, in its order (non-object values count as empty entries).
    pub fn new(map: &'a Map<String, Value>) -> Self {
        let mut keys = Vec::with_capacity(map.len());
        let mut entries = Vec::with_capacity(map.len());
        for (k, v) in map {
            keys.push(k.as_str());
            entries.push(Cow::Borrowed(v.as_object().unwrap_or(&EMPTY)));
        }
        let len = keys.len();
        WorkingSet {
            keys,
            entries,
            alive: vec![true; len],
            len,
        }
    }

    /// How many entries are left.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no entry is left.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// How many entries there were at the start.
    pub fn capacity(&self) -> usize {
        self.keys.len()
    }

    /// Whether entry `i` is still there.
    pub fn is_alive(&self, i: usize) -> bool {
        self.alive[i]
    }

    /// The key of entry `i`.
    pub fn key(&self, i: usize) -> &'a str {
        self.keys[i]
    }

    /// Entry `i` (with any repair applied).
    pub fn entry(&self, i: usize) -> &Map<String, Value> {
        &self.entries[i]
    }

    /// Whether entry `i` was changed by a repair.
    pub fn is_modified(&self, i: usize) -> bool {
        matches!(self.entries[i], Cow::Owned(_))
    }

    /// Brings a removed entry back.
    pub fn revive(&mut self, i: usize) {
        if !self.alive[i] {
            self.alive[i] = true;
            self.len += 1;
        }
    }

    /// Replaces entry `i` (a repair).
    pub fn set_entry(&mut self, i: usize, entry: Map<String, Value>) {
        self.entries[i] = Cow::Owned(entry);
    }

    /// Marks entry `i` removed.
    pub fn remove(&mut self, i: usize) {
        if self.alive[i] {
            self.alive[i] = false;
            self.len -= 1;
        }
    }

    /// The live entries as (index, key, entry), in store order.
    pub fn iter(&self) -> impl Iterator<Item = (usize, &'a str, &Map<String, Value>)> + '_ {
        (0..self.keys.len())
            .filter(|&i| self.alive[i])
            .map(|i| (i, self.keys[i], &*self.entries[i]))
    }

    /// Ends the run: which entries are alive, and the repaired entries by index.
    pub fn into_plan(self) -> Plan {
        let repaired = self
            .entries
            .into_iter()
            .enumerate()
            .filter_map(|(i, e)| match e {
                Cow::Owned(m) => Some((i, m)),
                Cow::Borrowed(_) => None,
            })
            .collect();
        Plan {
            alive: self.alive,
            repaired,
        }
    }

    /// The index of a live entry by key.
    pub fn find(&self, key: &str) -> Option<usize> {
        (0..self.keys.len()).find(|&i| self.alive[i] && self.keys[i] == key)
    }
}

/// The outcome of a working set: what to keep and what was repaired.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Whether each entry (by store position) stays.
    pub alive: Vec<bool>,
    /// Repaired entries by store position.
    pub repaired: Vec<(usize, Map<String, Value>)>,
}

/// An entry's `updatedAt` when it is a number.
pub fn updated_at(entry: &Map<String, Value>) -> Option<f64> {
    entry.get("updatedAt").and_then(Value::as_f64)
}

/// `shouldPreserveMaintenanceEntry`: in the preserve set, or protected (§4.2).
pub fn is_preserved(key: &str, entry: &Map<String, Value>, preserve: &HashSet<String>) -> bool {
    is_protected_entry(key, entry, preserve)
}

/// Model-run probe pruning (`pruneStaleModelRunEntries`): probe keys older than
/// `max_age_ms`, unless in the preserve set. Returns the removed indices.
pub fn prune_model_runs(
    ws: &mut WorkingSet<'_>,
    now_ms: i64,
    max_age_ms: u64,
    preserve: &HashSet<String>,
) -> Vec<usize> {
    let cutoff = now_ms as f64 - max_age_ms as f64;
    let doomed: Vec<usize> = ws
        .iter()
        .filter(|(_, k, e)| {
            !preserve.contains(*k)
                && is_model_run_probe_key(k)
                && updated_at(e).is_some_and(|u| u < cutoff)
        })
        .map(|(i, _, _)| i)
        .collect();
    doomed.iter().for_each(|&i| ws.remove(i));
    doomed
}

/// Stale pruning (`pruneStaleEntries`): entries with `updatedAt` older than `max_age_ms`
/// that are neither preserved nor protected. Entries without `updatedAt` stay.
pub fn prune_stale(
    ws: &mut WorkingSet<'_>,
    now_ms: i64,
    max_age_ms: u64,
    preserve: &HashSet<String>,
) -> Vec<usize> {
    let cutoff = now_ms as f64 - max_age_ms as f64;
    let doomed: Vec<usize> = ws
        .iter()
        .filter(|(_, k, e)| {
            updated_at(e).is_some_and(|u| u < cutoff) && !is_preserved(k, e, preserve)
        })
        .map(|(i, _, _)| i)
        .collect();
    doomed.iter().for_each(|&i| ws.remove(i));
    doomed
}

/// Capping (`capEntryCount`): keeps the `max_entries − protected` newest unprotected
/// entries (missing `updatedAt` sorts oldest; ties keep store order). Returns the
/// removed indices, oldest last.
pub fn cap_entries(
    ws: &mut WorkingSet<'_>,
    max_entries: u64,
    preserve: &HashSet<String>,
) -> Vec<usize> {
    let mut removable: Vec<(usize, f64)> = Vec::new();
    let mut preserved = 0u64;
    for (i, k, e) in ws.iter() {
        if is_preserved(k, e, preserve) {
            preserved += 1;
        } else {
            removable.push((i, updated_at(e).unwrap_or(f64::NEG_INFINITY)));
        }
    }
    let keep = max_entries.saturating_sub(preserved) as usize;
    if removable.len() <= keep {
        return Vec::new();
    }
    removable.sort_by(|a, b| b.1.total_cmp(&a.1));
    let doomed: Vec<usize> = removable[keep..].iter().map(|(i, _)| *i).collect();
    doomed.iter().for_each(|&i| ws.remove(i));
    doomed
}

/// `--fix-dm-scope` (`retireMainScopeDirectSessionEntries`): with `session.dmScope` =
/// `main`, removes the target agent's per-peer direct-message keys other than the active
/// key. Returns the removed indices.
pub fn retire_dm_scope(
    ws: &mut WorkingSet<'_>,
    dm_scope: &str,
    target_agent_id: &str,
    active_key: Option<&str>,
) -> Vec<usize> {
    if dm_scope != "main" {
        return Vec::new();
    }
    let doomed: Vec<usize> = ws
        .iter()
        .filter(|(_, k, _)| dm_scope_retirable(k, target_agent_id, active_key))
        .map(|(i, _, _)| i)
        .collect();
    doomed.iter().for_each(|&i| ws.remove(i));
    doomed
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const H: i64 = 3_600_000;
    const NOW: i64 = 1_800_000_000_000;

    fn store(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    fn keys(ws: &WorkingSet<'_>, idx: &[usize]) -> Vec<String> {
        idx.iter().map(|&i| ws.key(i).to_string()).collect()
    }

    #[test]
    fn cap_keeps_newest_with_stable_ties() {
        // E10: maxEntries 3; a has no updatedAt, b/c/f tie, d newest, e older, a group.
        let m = store(json!({
            "agent:main:a": {"sessionId": "a"},
            "agent:main:b": {"updatedAt": NOW - 2 * H},
            "agent:main:c": {"updatedAt": NOW - 2 * H},
            "agent:main:d": {"updatedAt": NOW - H},
            "agent:main:e": {"updatedAt": NOW - 5 * H},
            "agent:main:f": {"updatedAt": NOW - 2 * H},
            "agent:main:telegram:group:1": {"updatedAt": NOW - 9 * H},
        }));
        let mut ws = WorkingSet::new(&m);
        let gone = cap_entries(&mut ws, 3, &HashSet::new());
        assert_eq!(
            keys(&ws, &gone),
            [
                "agent:main:c",
                "agent:main:f",
                "agent:main:e",
                "agent:main:a"
            ]
        );
        assert_eq!(ws.len(), 3);
        let mut ws = WorkingSet::new(&m);
        let preserve = crate::session_key::preserve_set(["AGENT:MAIN:E"]);
        let gone = cap_entries(&mut ws, 3, &preserve);
        assert_eq!(gone.len(), 4);
        assert!(ws.find("agent:main:e").is_some() && ws.find("agent:main:d").is_some());
    }

    #[test]
    fn stale_and_model_runs() {
        let u = "123e4567-e89b-42d3-a456-426614174000";
        let m = store(json!({
            "agent:main:main": {"updatedAt": NOW - 40 * 24 * H},
            "agent:main:telegram:group:1": {"updatedAt": NOW - 40 * 24 * H},
            "agent:main:noupdated": {},
            "agent:main:zero": {"updatedAt": 0},
            (format!("agent:main:explicit:model-run-{u}")): {"updatedAt": NOW - 25 * H},
            (format!("agent:Main:explicit:MODEL-RUN-{}", u.to_uppercase())): {"updatedAt": NOW - 25 * H},
            "agent:main:explicit:model-run-zzz": {"updatedAt": NOW - 25 * H},
        }));
        let mut ws = WorkingSet::new(&m);
        let gone = prune_model_runs(&mut ws, NOW, 24 * H as u64, &HashSet::new());
        assert_eq!(gone.len(), 2);
        let gone = prune_stale(&mut ws, NOW, 30 * 24 * H as u64, &HashSet::new());
        assert_eq!(keys(&ws, &gone), ["agent:main:main", "agent:main:zero"]);
        assert!(ws.find("agent:main:noupdated").is_some());
        assert!(ws.find("agent:main:telegram:group:1").is_some());
    }

    #[test]
    fn dm_scope_only_in_main_scope() {
        let m = store(json!({
            "agent:main:telegram:direct:123": {},
            "agent:main:direct:bob": {},
            "agent:main:dm:bob": {},
            "agent:work:direct:bob": {},
        }));
        let mut ws = WorkingSet::new(&m);
        assert!(retire_dm_scope(&mut ws, "per-peer", "main", None).is_empty());
        let gone = retire_dm_scope(&mut ws, "main", "main", Some("agent:main:direct:bob"));
        assert_eq!(keys(&ws, &gone), ["agent:main:telegram:direct:123"]);
    }
}
