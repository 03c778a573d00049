//! `claw-migrate import` into an agent DB that already exists (a first import of a
//! subset, then the rest of the legacy dir): against openclaw 2026.9.6's doctor doing
//! the same, the canonical dump of every agent DB is equal; the sessions the DB already
//! had are reported as duplicates and their rows are not touched.

mod agent_db_support;
mod migrate_support;
mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use migrate_support::{canonical_dump, write_legacy, Shape, AGENTS};
use serde_json::Value;
use support::claw;

fn state(home: &Path) -> PathBuf {
    home.join(".openclaw")
}

fn sessions_dir(home: &Path, agent: &str) -> PathBuf {
    state(home).join("agents").join(agent).join("sessions")
}

fn copy_tree(from: &Path, to: &Path) {
    let st = Command::new("cp")
        .arg("-a")
        .arg(from)
        .arg(to)
        .status()
        .unwrap();
    assert!(st.success());
}

/// Writes `store` as `home`'s store of `agent`, each `sessionFile` pointing into `home`.
fn put_store(home: &Path, agent: &str, store: &serde_json::Map<String, Value>) {
    let dir = sessions_dir(home, agent);
    let mut store = store.clone();
    for e in store.values_mut() {
        if let Some(f) = e.get("sessionFile").and_then(Value::as_str) {
            let name = Path::new(f).file_name().unwrap().to_owned();
            e["sessionFile"] = Value::String(dir.join(name).to_string_lossy().into_owned());
        }
    }
    std::fs::write(
        dir.join("sessions.json"),
        serde_json::to_string_pretty(&Value::Object(store)).unwrap(),
    )
    .unwrap();
}

/// The legacy dir split in two: `first` keeps the first `keep` entries of each agent
/// (and their files); the rest (files moved under `held/<agent>/`) is put back later by
/// [`put_back`]. Returns each agent's whole store.
fn split(
    legacy: &Path,
    first: &Path,
    held: &Path,
    keep: usize,
) -> Vec<serde_json::Map<String, Value>> {
    copy_tree(legacy, first);
    let mut stores = Vec::new();
    for agent in AGENTS {
        let dir = sessions_dir(first, agent);
        let text = std::fs::read_to_string(dir.join("sessions.json")).unwrap();
        let store: serde_json::Map<String, Value> = serde_json::from_str(&text).unwrap();
        let hold = held.join(agent);
        std::fs::create_dir_all(&hold).unwrap();
        let mut kept = serde_json::Map::new();
        for (i, (k, e)) in store.iter().enumerate() {
            if i < keep {
                kept.insert(k.clone(), e.clone());
                continue;
            }
            let sid = e["sessionId"].as_str().unwrap();
            for f in std::fs::read_dir(&dir).unwrap().flatten() {
                let n = f.file_name().to_string_lossy().into_owned();
                if n.starts_with(sid) {
                    std::fs::rename(f.path(), hold.join(&n)).unwrap();
                }
            }
        }
        put_store(first, agent, &kept);
        stores.push(store);
    }
    stores
}

/// Puts the held files and the whole stores back into `home`.
fn put_back(home: &Path, held: &Path, stores: &[serde_json::Map<String, Value>]) {
    for (agent, store) in AGENTS.iter().zip(stores) {
        for f in std::fs::read_dir(held.join(agent)).unwrap().flatten() {
            let to = sessions_dir(home, agent).join(f.file_name());
            copy_tree(&f.path(), &to);
        }
        put_store(home, agent, store);
    }
}

/// The clock our imports run with.
const NOW_ARG: i64 = 1_796_300_000_000;

/// The rows of the state DB's `agent_databases`, sorted.
fn registry(home: &Path) -> Vec<(String, String, i64, i64, Option<i64>)> {
    let c = rusqlite::Connection::open(state(home).join("state/openclaw.sqlite")).unwrap();
    let mut st = c
        .prepare("SELECT agent_id, path, schema_version, last_seen_at, size_bytes FROM agent_databases ORDER BY 1, 2")
        .unwrap();
    st.query_map([], |r| {
        Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
    })
    .unwrap()
    .map(Result::unwrap)
    .collect()
}

fn ours_import(home: &Path) -> Value {
    let o = claw("claw-migrate", home)
        .args([
            "--json",
            "--now",
            &NOW_ARG.to_string(),
            "import",
            "--all-agents",
        ])
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "claw-migrate import: {}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).unwrap()
}

fn assert_same_dump(theirs: &Path, ours: &Path) {
    for agent in AGENTS {
        let a = canonical_dump(&agent_db_support::db_of(theirs, agent));
        let b = canonical_dump(&agent_db_support::db_of(ours, agent));
        assert_eq!(
            a.keys().collect::<Vec<_>>(),
            b.keys().collect::<Vec<_>>(),
            "{agent}: tables"
        );
        for (table, rows) in &a {
            let mine = &b[table];
            if rows != mine {
                let only_theirs: Vec<_> =
                    rows.iter().filter(|r| !mine.contains(r)).take(3).collect();
                let only_ours: Vec<_> = mine.iter().filter(|r| !rows.contains(r)).take(3).collect();
                panic!("{agent}: {table} differs\n doctor only: {only_theirs:#?}\n clawstate only: {only_ours:#?}");
            }
        }
    }
}

#[test]
fn doctor_and_claw_migrate_merge_the_rest_into_an_existing_db_to_the_same_rows() {
    let Some(peer) = agent_db_support::peer96() else {
        eprintln!("skipped: openclaw 2026.9.6 is not available");
        return;
    };
    let base = tempfile::tempdir().unwrap();
    let legacy = base.path().join("legacy");
    write_legacy(&legacy, 31, Shape::small());
    let first = base.path().join("first");
    let held = base.path().join("held");
    let stores = split(&legacy, &first, &held, 3);
    agent_db_support::doctor_import(&peer, &first, "merge");
    let (theirs, ours) = (base.path().join("doctor"), base.path().join("clawstate"));
    for home in [&theirs, &ours] {
        copy_tree(&first, home);
        put_back(home, &held, &stores);
    }
    let before = canonical_dump(&agent_db_support::db_of(&ours, "main"));
    agent_db_support::doctor_import(&peer, &theirs, "merge");
    let report = ours_import(&ours);
    assert_same_dump(&theirs, &ours);

    let main = &report["agents"][0];
    assert_eq!(main["status"], "merged", "{report:#}");
    let dups = main["duplicates"].as_array().unwrap();
    assert_eq!(dups.len(), 3, "{main:#}");
    assert!(
        dups.iter().all(|d| d["reason"] == "same-session"),
        "{main:#}"
    );
    // The rows the DB had are still there, unchanged.
    let after = canonical_dump(&agent_db_support::db_of(&ours, "main"));
    for (table, rows) in &before {
        if table == "schema_meta" || table.starts_with("session_transcript_index_state") {
            continue;
        }
        for r in rows {
            assert!(after[table].contains(r), "{table}: a row changed: {r}");
        }
    }
    // The registry row in the state DB, as doctor leaves it (its times and sizes masked);
    // ours is written by this import (its clock), not left from the first one.
    let (a, b) = (registry(&theirs), registry(&ours));
    let mask = |rows: &[(String, String, i64, i64, Option<i64>)]| -> Vec<(String, String, i64)> {
        rows.iter()
            .map(|r| (r.0.clone(), r.1.clone(), r.2))
            .collect()
    };
    assert_eq!(mask(&a), mask(&b), "agent_databases");
    assert!(
        b.iter()
            .all(|r| r.3 == NOW_ARG && r.4.is_some_and(|s| s > 0)),
        "{b:?}"
    );
    assert_eq!(main["stateRegistry"]["status"], "registered", "{main:#}");
    // A second run finds nothing to merge.
    let again = ours_import(&ours);
    assert_eq!(
        again["agents"][0]["status"], "already-imported",
        "{again:#}"
    );
}

#[test]
fn importing_into_an_existing_db_adds_what_it_lacks_and_reports_duplicates() {
    let base = tempfile::tempdir().unwrap();
    let legacy = base.path().join("legacy");
    write_legacy(&legacy, 32, Shape::small());
    let home = base.path().join("home");
    let held = base.path().join("held");
    let stores = split(&legacy, &home, &held, 2);
    ours_import(&home);
    let db = agent_db_support::db_of(&home, "main");
    let count = |sql: &str| -> i64 {
        rusqlite::Connection::open(&db)
            .unwrap()
            .query_row(sql, [], |r| r.get(0))
            .unwrap()
    };
    let nodes_before = count("SELECT count(*) FROM session_nodes");
    let rows_before: Vec<String> = canonical_dump(&db)["session_nodes"].clone();
    put_back(&home, &held, &stores);
    // A dry run says what it would do and changes nothing.
    let o = claw("claw-migrate", &home)
        .args(["--json", "import", "--all-agents", "--dry-run"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["agents"][0]["status"], "would-merge", "{v:#}");
    assert_eq!(count("SELECT count(*) FROM session_nodes"), nodes_before);

    let v = ours_import(&home);
    let main = &v["agents"][0];
    assert_eq!(main["status"], "merged", "{v:#}");
    let added = main["importedEntries"].as_u64().unwrap() as i64;
    assert_eq!(added, stores[0].len() as i64 - 2, "{main:#}");
    assert_eq!(main["duplicates"].as_array().unwrap().len(), 2, "{main:#}");
    assert_eq!(
        count("SELECT count(*) FROM session_nodes"),
        nodes_before + added
    );
    let rows_after = canonical_dump(&db)["session_nodes"].clone();
    for r in &rows_before {
        assert!(rows_after.contains(r), "a session row changed: {r}");
    }
    // Every legacy entry is in the DB now, and its transcript with it.
    for key in stores[0].keys() {
        let sid = stores[0][key]["sessionId"].as_str().unwrap();
        let n = count(&format!(
            "SELECT count(*) FROM session_nodes WHERE session_key = '{key}' AND current_session_id = '{sid}'"
        ));
        assert_eq!(n, 1, "{key}");
    }
    assert!(
        !sessions_dir(&home, "main").join("sessions.json").exists(),
        "the store is archived"
    );
}

#[test]
fn a_fresh_import_registers_its_db_in_a_known_state_db_and_leaves_an_unknown_one_alone() {
    use clawstate::signals::db::StateDb;
    use clawstate::signals::generation::HostSchema;
    for known in [true, false] {
        let base = tempfile::tempdir().unwrap();
        let home = base.path().join("home");
        write_legacy(&home, 33, Shape::small());
        let sdb = state(&home).join("state/openclaw.sqlite");
        drop(StateDb::open_write_as(&sdb, &HostSchema::Given(18)).unwrap());
        if !known {
            let c = rusqlite::Connection::open(&sdb).unwrap();
            c.execute_batch(
                "DROP TABLE agent_databases; CREATE TABLE agent_databases (agent_id TEXT, path TEXT, schema_version INTEGER, last_seen_at INTEGER, size_bytes INTEGER, owner TEXT, PRIMARY KEY (agent_id, path));",
            )
            .unwrap();
        }
        let v = ours_import(&home);
        let rows = registry(&home);
        if known {
            assert_eq!(
                v["agents"][0]["stateRegistry"]["status"], "registered",
                "{v:#}"
            );
            let want: Vec<(String, String, i64)> = AGENTS
                .iter()
                .map(|a| {
                    (
                        a.to_string(),
                        format!("agents/{a}/agent/openclaw-agent.sqlite"),
                        23,
                    )
                })
                .collect();
            let got: Vec<(String, String, i64)> = rows
                .iter()
                .map(|r| (r.0.clone(), r.1.clone(), r.2))
                .collect();
            assert_eq!(got, want);
            let size = std::fs::metadata(agent_db_support::db_of(&home, "main"))
                .unwrap()
                .len() as i64;
            assert_eq!(rows[0].3, NOW_ARG);
            assert!(rows[0].4.is_some_and(|s| s > 0 && s <= size), "{rows:?}");
        } else {
            assert_eq!(
                v["agents"][0]["stateRegistry"]["status"], "skipped",
                "{v:#}"
            );
            assert!(rows.is_empty(), "{rows:?}");
        }
    }
}
