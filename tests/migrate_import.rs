//! `claw-migrate import` against openclaw 2026.9.6's `doctor --session-sqlite import
//! --session-sqlite-all-agents`: the same generated legacy dir (copied with its mtimes)
//! imported by both gives the same canonical dump of every agent DB, the same archive and
//! manifest names (timestamps masked), the same manifest (volatile fields masked: run id,
//! times, inode numbers; issue messages compared by code and key, their wording is
//! JavaScript's), and the same `openclaw sessions --json --all-agents` of 9.6 itself. Plus
//! what needs no peer: `--dry-run` changes nothing, a live gateway refuses (75), an
//! unknown database is refused (65), a second run has nothing to do.

mod agent_db_support;
mod migrate_support;
mod support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use migrate_support::{canonical_dump, masked_names, write_legacy, Shape, AGENTS};
use serde_json::{json, Value};
use support::claw;

/// Writes a legacy dir for the benchmark or for a look by hand:
/// `CLAWSTATE_GEN_HOME=DIR CLAWSTATE_GEN_SESSIONS=N cargo test --test migrate_import generate -- --ignored`.
#[test]
#[ignore]
fn generate() {
    let Some(home) = std::env::var_os("CLAWSTATE_GEN_HOME") else {
        return;
    };
    let mut shape = Shape::small();
    let num = |name: &str| {
        std::env::var(name)
            .ok()
            .and_then(|s| s.parse::<usize>().ok())
    };
    if let Some(n) = num("CLAWSTATE_GEN_SESSIONS") {
        shape.sessions = n;
    }
    if let Some(n) = num("CLAWSTATE_GEN_TURNS") {
        shape.max_turns = n;
    }
    if let Some(n) = num("CLAWSTATE_GEN_TOOL_OUTPUT") {
        shape.tool_output = n;
    }
    write_legacy(Path::new(&home), 7, shape);
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

fn state(home: &Path) -> PathBuf {
    home.join(".openclaw")
}

/// The state dir's files that both tools write, masked; 9.6's own extras (its state DB,
/// lock files, WAL files of a DB it left open) and the config its doctor rewrites are not
/// part of the import.
fn import_files(home: &Path) -> Vec<String> {
    masked_names(&state(home))
        .into_iter()
        .filter(|n| {
            !n.starts_with("state/")
                && !n.starts_with("tmp/")
                && !n.ends_with("-wal")
                && !n.ends_with("-shm")
                && n != "openclaw.json"
        })
        .collect()
}

/// The run manifest with its volatile fields masked and paths made relative to the home.
fn masked_manifest(home: &Path) -> Value {
    let dir = state(home).join("session-sqlite-migration-runs");
    let files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 1, "one manifest in {}", dir.display());
    let text = std::fs::read_to_string(&files[0]).unwrap();
    let text = text.replace(&home.to_string_lossy().to_string(), "$HOME");
    let mut v: Value = serde_json::from_str(&text).unwrap();
    fn walk(v: &mut Value) {
        match v {
            Value::Object(o) => {
                for (k, x) in o.iter_mut() {
                    match k.as_str() {
                        "runId" | "startedAt" | "completedAt" | "dev" | "ino" => {
                            *x = json!("<masked>")
                        }
                        "archivePath" => {
                            *x = json!(migrate_support::mask_name(x.as_str().unwrap()));
                        }
                        "message" => *x = json!("<wording>"),
                        _ => walk(x),
                    }
                }
            }
            Value::Array(a) => a.iter_mut().for_each(walk),
            _ => {}
        }
    }
    walk(&mut v);
    v
}

fn sessions_json(peer: &Path, home: &Path, config: &str) -> Value {
    // Both state dirs get the same (original) config: doctor rewrites its own.
    std::fs::write(state(home).join("openclaw.json"), config).unwrap();
    let o = agent_db_support::run96(peer, home, &["sessions", "--json", "--all-agents"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text =
        String::from_utf8_lossy(&o.stdout).replace(&home.to_string_lossy().to_string(), "$HOME");
    let mut v: Value = serde_json::from_str(&text).unwrap();
    fn strip(v: &mut Value) {
        match v {
            Value::Object(o) => {
                o.remove("ageMs");
                o.values_mut().for_each(strip);
            }
            Value::Array(a) => a.iter_mut().for_each(strip),
            _ => {}
        }
    }
    strip(&mut v);
    v
}

#[test]
fn doctor_and_claw_migrate_import_the_same_dir_to_the_same_rows() {
    let Some(peer) = agent_db_support::peer96() else {
        eprintln!("skipped: openclaw 2026.9.6 is not available");
        return;
    };
    let base = tempfile::tempdir().unwrap();
    let legacy = base.path().join("legacy");
    write_legacy(&legacy, 26, Shape::small());
    let config = std::fs::read_to_string(state(&legacy).join("openclaw.json")).unwrap();
    let (theirs, ours) = (base.path().join("doctor"), base.path().join("clawstate"));
    copy_tree(&legacy, &theirs);
    copy_tree(&legacy, &ours);
    agent_db_support::doctor_import(&peer, &theirs, "the legacy dir");
    claw("claw-migrate", &ours)
        .args(["import", "--all-agents"])
        .assert()
        .success();

    for agent in AGENTS {
        let a: BTreeMap<_, _> = canonical_dump(&agent_db_support::db_of(&theirs, agent));
        let b: BTreeMap<_, _> = canonical_dump(&agent_db_support::db_of(&ours, agent));
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
        assert!(
            a["transcript_events"].len() > 50,
            "{agent}: the dir has events"
        );
    }
    assert_eq!(
        import_files(&theirs),
        import_files(&ours),
        "archive and manifest names"
    );
    assert_eq!(masked_manifest(&theirs), masked_manifest(&ours), "manifest");
    // Legacy files the import leaves alone (reset and deleted archives) stay, byte for byte.
    for agent in AGENTS {
        let dir = state(&legacy).join("agents").join(agent).join("sessions");
        for e in std::fs::read_dir(&dir).unwrap() {
            let name = e.unwrap().file_name().to_string_lossy().to_string();
            if name.contains(".jsonl.reset.") || name.contains(".jsonl.deleted.") {
                let rel = Path::new("agents").join(agent).join("sessions").join(&name);
                assert_eq!(
                    std::fs::read(state(&ours).join(&rel)).unwrap(),
                    std::fs::read(dir.join(&name)).unwrap()
                );
            }
        }
    }
    assert_eq!(
        sessions_json(&peer, &theirs, &config),
        sessions_json(&peer, &ours, &config),
        "openclaw sessions --json --all-agents"
    );
}

/// Every byte of the files under `dir` (relative path -> bytes).
fn tree(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    fn walk(base: &Path, d: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        for e in std::fs::read_dir(d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(base, &p, out);
            } else {
                out.insert(
                    p.strip_prefix(base).unwrap().to_string_lossy().into(),
                    std::fs::read(&p).unwrap(),
                );
            }
        }
    }
    walk(dir, dir, &mut out);
    out
}

#[test]
fn dry_run_changes_nothing_and_a_second_run_has_nothing_to_do() {
    let home = tempfile::tempdir().unwrap();
    write_legacy(home.path(), 3, Shape::small());
    let before = tree(&state(home.path()));
    let out = claw("claw-migrate", home.path())
        .args(["--json", "import", "--all-agents", "--dry-run"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let v: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["agents"][0]["status"], "would-import");
    assert_eq!(tree(&state(home.path())), before);
    claw("claw-migrate", home.path())
        .args(["import", "--all-agents"])
        .assert()
        .success();
    let out = claw("claw-migrate", home.path())
        .args(["--json", "import", "--all-agents"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let v: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["agents"][0]["status"], "already-imported");
    // Every legacy file is in place or in the archive, byte for byte.
    let after = tree(&state(home.path()));
    let archived: Vec<&Vec<u8>> = after.values().collect();
    for (rel, bytes) in &before {
        assert!(
            after.get(rel) == Some(bytes) || archived.contains(&bytes),
            "{rel} lost"
        );
    }
}

#[test]
fn a_live_gateway_and_an_unknown_database_are_refused() {
    let home = tempfile::tempdir().unwrap();
    write_legacy(home.path(), 4, Shape::small());
    let st = state(home.path());
    {
        use sha2::Digest;
        let config = st.join("openclaw.json");
        let hash = sha2::Sha256::digest(config.to_string_lossy().as_bytes());
        let hex: String = hash.iter().take(4).map(|b| format!("{b:02x}")).collect();
        // SAFETY: getuid has no preconditions and cannot fail.
        let uid = unsafe { libc::getuid() };
        let dir = home.path().join("tmp").join(format!("openclaw-{uid}"));
        std::fs::create_dir_all(&dir).unwrap();
        let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
        let after = &stat[stat.rfind(')').unwrap() + 2..];
        let start: u64 = after.split(' ').nth(19).unwrap().parse().unwrap();
        let lock = dir.join(format!("gateway.{hex}.lock"));
        std::fs::write(
            &lock,
            json!({"pid": std::process::id(), "createdAt": "2026-01-01T00:00:00.000Z", "configPath": config, "startTime": start}).to_string(),
        )
        .unwrap();
        let before = tree(&st);
        claw("claw-migrate", home.path())
            .args(["import", "--all-agents"])
            .assert()
            .code(75)
            .stderr(predicates::str::contains("gateway"));
        assert_eq!(tree(&st), before);
        std::fs::remove_file(lock).unwrap();
    }
    // A database of another schema at the agent's DB path.
    let db = agent_db_support::db_of(home.path(), "main");
    std::fs::create_dir_all(db.parent().unwrap()).unwrap();
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute_batch("CREATE TABLE t (x); PRAGMA user_version = 24;")
        .unwrap();
    let before = tree(&st);
    claw("claw-migrate", home.path())
        .args(["import", "--all-agents"])
        .assert()
        .code(65)
        .stderr(predicates::str::contains("does not know"));
    assert_eq!(tree(&st), before);
}

#[test]
fn a_symlinked_transcript_or_a_session_id_that_leaves_is_a_finding_not_followed() {
    let home = tempfile::tempdir().unwrap();
    write_legacy(home.path(), 5, Shape::small());
    let d = state(home.path()).join("agents/main/sessions");
    let line = "{\"type\":\"session\",\"version\":3,\"id\":\"x\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/x\"}\n";
    let secret = home.path().join("secret.jsonl");
    std::fs::write(&secret, line).unwrap();
    std::os::unix::fs::symlink(&secret, d.join("s-link.jsonl")).unwrap();
    std::fs::write(d.join("../../x.jsonl"), line).unwrap();
    let store = d.join("sessions.json");
    let mut v: Value = serde_json::from_slice(&std::fs::read(&store).unwrap()).unwrap();
    v["agent:main:link"] = json!({"sessionId": "s-link", "updatedAt": 1});
    v["agent:main:climb"] = json!({"sessionId": "../../x", "updatedAt": 1});
    std::fs::write(&store, v.to_string()).unwrap();
    let out = claw("claw-migrate", home.path())
        .args(["--json", "import", "--all-agents"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let v: Value = serde_json::from_slice(&out).unwrap();
    let main = v["agents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["agentId"] == "main")
        .unwrap();
    for key in ["agent:main:link", "agent:main:climb"] {
        let found = main["issues"].as_array().unwrap().iter().any(|i| {
            i["code"] == "transcript_not_followed"
                && i["sessionKey"] == key
                && i["message"].as_str().unwrap().contains("not followed")
        });
        assert!(found, "{key}: {:#}", main["issues"]);
    }
    // Nothing was read through them, and they stay where they were.
    let db = agent_db_support::db_of(home.path(), "main");
    let c = rusqlite::Connection::open(&db).unwrap();
    let n: i64 = c
        .query_row(
            "SELECT count(*) FROM transcript_events WHERE session_id IN ('s-link', '../../x')",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(n, 0);
    assert!(std::fs::symlink_metadata(d.join("s-link.jsonl"))
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(std::fs::read_to_string(&secret).unwrap(), line);
    assert_eq!(
        std::fs::read_to_string(d.join("../../x.jsonl")).unwrap(),
        line
    );
}
