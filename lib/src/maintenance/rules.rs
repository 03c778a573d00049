//! The entry rules of maintenance (`store.md` §4.2–4.3, §4.6): model-run probe pruning,
//! stale pruning, capping and the `--fix-dm-scope` retirement, on a [`WorkingSet`] that
//! marks entries removed without copying the store.

use std::collections::HashSet;

use crate::session::session_key::{dm_scope_retirable, is_model_run_probe_key};

use super::store_pass::Facts;

/// The entries of a store during one maintenance run: removals are marks, store order
/// is kept.
#[derive(Debug, Clone, Default)]
pub struct WorkingSet {
    facts: Vec<Facts>,
    alive: Vec<bool>,
    len: usize,
}

impl WorkingSet {
    /// All entries, in store order.
    pub fn new(facts: Vec<Facts>) -> Self {
        let len = facts.len();
        WorkingSet {
            facts,
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

    /// Whether entry `i` is still there.
    pub fn is_alive(&self, i: usize) -> bool {
        self.alive[i]
    }

    /// Which entries are still there, by store position.
    pub fn alive(&self) -> &[bool] {
        &self.alive
    }

    /// The key of entry `i`.
    pub fn key(&self, i: usize) -> &str {
        &self.facts[i].key
    }

    /// The facts of entry `i`.
    pub fn entry(&self, i: usize) -> &Facts {
        &self.facts[i]
    }

    /// Replaces the facts of entry `i` (a repair).
    pub fn set_entry(&mut self, i: usize, facts: Facts) {
        self.facts[i] = facts;
    }

    /// Marks entry `i` removed.
    pub fn remove(&mut self, i: usize) {
        if self.alive[i] {
            self.alive[i] = false;
            self.len -= 1;
        }
    }

    /// Brings a removed entry back.
    pub fn revive(&mut self, i: usize) {
        if !self.alive[i] {
            self.alive[i] = true;
            self.len += 1;
        }
    }

    /// The live entries as (index, facts), in store order.
    pub fn iter(&self) -> impl Iterator<Item = (usize, &Facts)> + '_ {
        self.facts
            .iter()
            .enumerate()
            .filter(|(i, _)| self.alive[*i])
    }
}

/// `shouldPreserveMaintenanceEntry`: in the preserve set, or protected (§4.2).
pub fn is_preserved(f: &Facts, preserve: &HashSet<String>) -> bool {
    f.durable || preserve.contains(&f.key)
}

/// Model-run probe pruning (`pruneStaleModelRunEntries`): probe keys older than
/// `max_age_ms`, unless in the preserve set. Returns the removed indices.
pub fn prune_model_runs(
    ws: &mut WorkingSet,
    now_ms: i64,
    max_age_ms: u64,
    preserve: &HashSet<String>,
) -> Vec<usize> {
    let cutoff = now_ms as f64 - max_age_ms as f64;
    let doomed: Vec<usize> = ws
        .iter()
        .filter(|(_, f)| {
            !preserve.contains(&f.key)
                && is_model_run_probe_key(&f.key)
                && f.updated_at.is_some_and(|u| u < cutoff)
        })
        .map(|(i, _)| i)
        .collect();
    doomed.iter().for_each(|&i| ws.remove(i));
    doomed
}

/// Stale pruning (`pruneStaleEntries`): entries with `updatedAt` older than `max_age_ms`
/// that are neither preserved nor protected. Entries without `updatedAt` stay.
pub fn prune_stale(
    ws: &mut WorkingSet,
    now_ms: i64,
    max_age_ms: u64,
    preserve: &HashSet<String>,
) -> Vec<usize> {
    let cutoff = now_ms as f64 - max_age_ms as f64;
    let doomed: Vec<usize> = ws
        .iter()
        .filter(|(_, f)| f.updated_at.is_some_and(|u| u < cutoff) && !is_preserved(f, preserve))
        .map(|(i, _)| i)
        .collect();
    doomed.iter().for_each(|&i| ws.remove(i));
    doomed
}

/// Capping (`capEntryCount`): keeps the `max_entries − protected` newest unprotected
/// entries (missing `updatedAt` sorts oldest; ties keep store order). Returns the
/// removed indices, oldest last.
pub fn cap_entries(
    ws: &mut WorkingSet,
    max_entries: u64,
    preserve: &HashSet<String>,
) -> Vec<usize> {
    let mut removable: Vec<(usize, f64)> = Vec::new();
    let mut preserved = 0u64;
    for (i, f) in ws.iter() {
        if is_preserved(f, preserve) {
            preserved += 1;
        } else {
            removable.push((i, f.updated_at.unwrap_or(f64::NEG_INFINITY)));
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
    ws: &mut WorkingSet,
    dm_scope: &str,
    target_agent_id: &str,
    active_key: Option<&str>,
) -> Vec<usize> {
    if dm_scope != "main" {
        return Vec::new();
    }
    let doomed: Vec<usize> = ws
        .iter()
        .filter(|(_, f)| dm_scope_retirable(&f.key, target_agent_id, active_key))
        .map(|(i, _)| i)
        .collect();
    doomed.iter().for_each(|&i| ws.remove(i));
    doomed
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    const H: i64 = 3_600_000;
    const NOW: i64 = 1_800_000_000_000;

    fn store(v: Value) -> WorkingSet {
        let facts = v
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, e)| Facts::of(k, e.as_object().unwrap(), std::path::Path::new("/s")))
            .collect();
        WorkingSet::new(facts)
    }

    fn find(ws: &WorkingSet, key: &str) -> bool {
        ws.iter().any(|(_, f)| f.key == key)
    }

    fn keys(ws: &WorkingSet, idx: &[usize]) -> Vec<String> {
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
        let mut ws = m.clone();
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
        let mut ws = m.clone();
        let preserve = crate::session::session_key::preserve_set(["AGENT:MAIN:E"]);
        let gone = cap_entries(&mut ws, 3, &preserve);
        assert_eq!(gone.len(), 4);
        assert!(find(&ws, "agent:main:e") && find(&ws, "agent:main:d"));
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
        let mut ws = m.clone();
        let gone = prune_model_runs(&mut ws, NOW, 24 * H as u64, &HashSet::new());
        assert_eq!(gone.len(), 2);
        let gone = prune_stale(&mut ws, NOW, 30 * 24 * H as u64, &HashSet::new());
        assert_eq!(keys(&ws, &gone), ["agent:main:main", "agent:main:zero"]);
        assert!(find(&ws, "agent:main:noupdated"));
        assert!(find(&ws, "agent:main:telegram:group:1"));
    }

    #[test]
    fn dm_scope_only_in_main_scope() {
        let m = store(json!({
            "agent:main:telegram:direct:123": {},
            "agent:main:direct:bob": {},
            "agent:main:dm:bob": {},
            "agent:work:direct:bob": {},
        }));
        let mut ws = m.clone();
        assert!(retire_dm_scope(&mut ws, "per-peer", "main", None).is_empty());
        let gone = retire_dm_scope(&mut ws, "main", "main", Some("agent:main:direct:bob"));
        assert_eq!(keys(&ws, &gone), ["agent:main:telegram:direct:123"]);
    }
}
