//! `claw-migrate finish` on the stuck-migration cases planted in a 9.6-imported state
//! dir: without `--apply` (or with `--dry-run`) no byte changes; with `--apply` each case
//! is fixed, and neither `claw-transcript check` nor 9.6's own
//! `openclaw doctor --session-sqlite validate` reports it any more. Nothing is deleted.

mod agent_db_support;
mod migrate_support;
mod support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use agent_db_support::{db_of, imported_home, peer96, run96};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use support::claw;

/// Every file under `root` with the hash of its bytes. SQLite's shared-memory index
/// (`-shm`) is left out, and so is an empty `-wal`: opening a WAL database, even
/// read-only, creates them when they are missing; they hold no data.
fn tree(root: &Path) -> BTreeMap<PathBuf, String> {
    const EMPTY: &str = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
    let mut all = tree_all(root);
    all.retain(|p, h| {
        let n = p.to_string_lossy();
        !(n.ends_with("-shm") || (n.ends_with("-wal") && h == EMPTY))
    });
    all
}

fn tree_all(root: &Path) -> BTreeMap<PathBuf, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            let t = e.file_type().unwrap();
            if t.is_dir() {
                stack.push(p);
            } else if t.is_file() {
                let h = Sha256::digest(std::fs::read(&p).unwrap());
                out.insert(p, format!("{h:x}"));
            }
        }
    }
    out
}

fn agent_dir(home: &Path, agent: &str) -> PathBuf {
    home.join(".openclaw/agents").join(agent)
}

/// The archived originals of `agent` 9.6 imported: (archive file, session id, key slug).
fn archived(home: &Path, agent: &str) -> Vec<(PathBuf, String)> {
    let dir = agent_dir(home, agent).join("session-sqlite-import-archive");
    let mut out: Vec<(PathBuf, String)> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter_map(|p| {
            let n = p.file_name()?.to_string_lossy().into_owned();
            let stem = &n[..n.find(".jsonl.imported-")?];
            let sid = stem.rsplit('.').next()?.to_string();
            Some((p, sid))
        })
        .collect();
    out.sort();
    out
}

/// Puts the archived original of the first session back beside the DB (the stuck
/// case): returns the leftover's path and its session id.
fn plant_leftover(home: &Path, index: usize) -> (PathBuf, String) {
    let (src, sid) = archived(home, "main").swap_remove(index);
    let dst = agent_dir(home, "main").join(format!("sessions/{sid}.jsonl"));
    std::fs::copy(&src, &dst).unwrap();
    (dst, sid)
}

fn finish(home: &Path, args: &[&str]) -> (i32, Value) {
    let mut a = vec!["finish", "--json"];
    a.extend_from_slice(args);
    let o = claw("claw-migrate", home).args(&a).output().unwrap();
    let v = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "finish output: {e}: {}\n{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    });
    (o.status.code().unwrap_or(-1), v)
}

/// Runs every read-only mode: a dry run and the default change no byte.
fn dry_runs_change_nothing(home: &Path) -> Value {
    let before = tree(&home.join(".openclaw"));
    let (code, v) = finish(home, &["--dry-run", "--now", "1796200000000"]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(v["apply"], false);
    let (code, v2) = finish(home, &["--now", "1796200000000"]);
    assert_eq!(code, 0);
    assert_eq!(v["items"], v2["items"]);
    let o = claw("claw-migrate", home)
        .args(["finish"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&o.stdout).contains("dry run"));
    assert_eq!(
        tree(&home.join(".openclaw")),
        before,
        "a dry run changed a byte"
    );
    v
}

/// The codes of claw-transcript check's findings.
fn check_codes(home: &Path) -> Vec<String> {
    let o = claw("claw-transcript", home)
        .args(["check", "--all", "--all-agents"])
        .output()
        .unwrap();
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter_map(|l| {
            [
                "active_sqlite_transcript_jsonl",
                "transcript-seq-gap",
                "transcript-event-undecodable",
                "agent-db-foreign-key",
                "orphan-identity",
            ]
            .into_iter()
            .find(|c| l.contains(&format!(": {c}: ")))
            .map(str::to_string)
        })
        .collect()
}

/// 9.6's validate: every `(code, sessionKey)` it reports.
fn validate96(home: &Path) -> Option<Vec<(String, String)>> {
    let peer = peer96()?;
    let o = run96(
        &peer,
        home,
        &[
            "doctor",
            "--session-sqlite",
            "validate",
            "--session-sqlite-all-agents",
            "--json",
        ],
    );
    let text = String::from_utf8_lossy(&o.stdout);
    let start = text.find('{')?;
    let v: Value = serde_json::from_str(&text[start..])
        .unwrap_or_else(|e| panic!("9.6 validate: {e}\n{text}"));
    let mut out: Vec<(String, String)> = v["targets"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|t| t["issues"].as_array().unwrap().clone())
        .map(|i| {
            (
                i["code"].as_str().unwrap_or("").to_string(),
                i["sessionKey"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    out.sort();
    Some(out)
}

fn has_code(issues: &[(String, String)], code: &str) -> bool {
    issues.iter().any(|(c, _)| c == code)
}

#[test]
fn leftover_with_nothing_new_is_archived_with_proof() {
    let Some(home) = imported_home() else { return };
    let home = home.path();
    let (leftover, sid) = plant_leftover(home, 0);
    let bytes = std::fs::read(&leftover).unwrap();
    assert!(check_codes(home).contains(&"active_sqlite_transcript_jsonl".to_string()));
    if let Some(v) = validate96(home) {
        assert!(has_code(&v, "active_sqlite_transcript_jsonl"), "{v:?}");
    }
    let v = dry_runs_change_nothing(home);
    let item = &v["items"][0];
    assert_eq!(item["case"], "leftover-jsonl");
    assert_eq!(item["action"], "archive");
    assert_eq!(item["sessionId"], sid.as_str());

    let (code, v) = finish(home, &["--apply"]);
    assert_eq!(code, 0, "{v:#}");
    let item = &v["items"][0];
    assert_eq!(item["done"], true);
    let proof = &item["proof"];
    assert_eq!(proof["matchedEvents"], proof["legacyEvents"]);
    assert_eq!(
        proof["fileSha256"],
        format!("{:x}", Sha256::digest(&bytes)).as_str()
    );
    // Moved, byte for byte, under 9.6's name; never deleted.
    assert!(!leftover.exists());
    let to = PathBuf::from(item["movedTo"].as_str().unwrap());
    assert_eq!(std::fs::read(&to).unwrap(), bytes);
    let name = to.file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        name.starts_with("agent_main_") && name.contains(&format!(".{sid}.jsonl.imported-")),
        "{name}"
    );
    assert!(!check_codes(home).contains(&"active_sqlite_transcript_jsonl".to_string()));
    if let Some(v) = validate96(home) {
        assert!(!has_code(&v, "active_sqlite_transcript_jsonl"), "{v:?}");
    }
    // The move is in a run manifest 9.6 reads.
    let run = PathBuf::from(item["runManifest"].as_str().unwrap());
    let m: Value = serde_json::from_slice(&std::fs::read(&run).unwrap()).unwrap();
    assert!(
        m["completedAt"].is_string() && m.get("failedAt").is_none(),
        "{m:#}"
    );
    assert_eq!(
        m["targets"][0]["completedMoves"].as_array().unwrap().len(),
        1
    );
    // Nothing left to do.
    let (code, v) = finish(home, &["--apply"]);
    assert_eq!(code, 0);
    assert_eq!(v["items"].as_array().unwrap().len(), 0, "{v:#}");
    // 9.6's restore moves it back, byte for byte, as it does what its own doctor archived.
    if let Some(peer) = peer96() {
        let o = run96(
            &peer,
            home,
            &[
                "doctor",
                "--session-sqlite",
                "restore",
                "--session-sqlite-all-agents",
                "--json",
            ],
        );
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(
            leftover.is_file(),
            "9.6 restore did not bring {} back: {out}\n{}",
            leftover.display(),
            String::from_utf8_lossy(&o.stderr)
        );
        assert_eq!(std::fs::read(&leftover).unwrap(), bytes);
    }
}

#[test]
fn leftover_with_a_tail_the_db_lacks_is_imported_then_archived() {
    let Some(home) = imported_home() else { return };
    let home = home.path();
    let (leftover, sid) = plant_leftover(home, 1);
    let db = db_of(home, "main");
    let count = |db: &Path| -> i64 {
        let c = rusqlite::Connection::open(db).unwrap();
        c.query_row(
            "SELECT count(*) FROM transcript_events WHERE session_id = ?1",
            [&sid],
            |r| r.get(0),
        )
        .unwrap()
    };
    let before_rows = count(&db);
    // The gateway of 2026.7 kept writing the file after the import: two more lines, one
    // long enough to be stored compressed, one with an escape.
    let mut text = std::fs::read_to_string(&leftover).unwrap();
    let last_id = text
        .lines()
        .rev()
        .find_map(|l| {
            serde_json::from_str::<Value>(l)
                .ok()?
                .get("id")?
                .as_str()
                .map(str::to_string)
        })
        .unwrap();
    let long = "the tail the database lacks ".repeat(80);
    let l1 = json!({"type":"message","id":"tail0001","parentId":last_id,"timestamp":"2026-11-30T10:00:00.000Z",
        "message":{"role":"user","content":[{"type":"text","text":long}],"timestamp":1_796_000_000_000i64}});
    let l2 = "{\"type\":\"message\",\"id\":\"tail0002\",\"parentId\":\"tail0001\",\"timestamp\":\"2026-11-30T10:00:01.000Z\",\"message\":{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"caf\\u00e9 after\"}],\"timestamp\":1796000001000}}".to_string();
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(&format!("{l1}\n{l2}\n"));
    std::fs::write(&leftover, &text).unwrap();

    let v = dry_runs_change_nothing(home);
    let item = &v["items"][0];
    assert_eq!(item["action"], "import-tail", "{v:#}");
    assert_eq!(item["tailEvents"], 2);

    let (code, v) = finish(home, &["--apply"]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(v["items"][0]["done"], true, "{v:#}");
    assert_eq!(count(&db), before_rows + 2);
    assert!(!leftover.exists());
    // The new rows read back as 9.6 stores the lines (é unescaped), one compressed.
    let c = rusqlite::Connection::open(&db).unwrap();
    let (json1, zstd1): (Option<String>, Option<Vec<u8>>) = c
        .query_row(
            "SELECT event_json, event_zstd FROM transcript_events WHERE session_id = ?1 AND seq = ?2",
            rusqlite::params![&sid, before_rows],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert!(
        json1.is_none() && zstd1.is_some(),
        "the long line is stored compressed"
    );
    let json2: String = c
        .query_row(
            "SELECT event_json FROM transcript_events WHERE session_id = ?1 AND seq = ?2",
            rusqlite::params![&sid, before_rows + 1],
            |r| r.get(0),
        )
        .unwrap();
    assert!(json2.contains("café after"), "{json2}");
    let ids: i64 = c
        .query_row(
            "SELECT count(*) FROM transcript_event_identities WHERE session_id = ?1 AND event_id IN ('tail0001','tail0002')",
            [&sid],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(ids, 2);
    drop(c);
    assert!(check_codes(home).is_empty(), "{:?}", check_codes(home));
    if let Some(v) = validate96(home) {
        assert!(!has_code(&v, "active_sqlite_transcript_jsonl"), "{v:?}");
        assert!(
            !v.iter().any(|(c, _)| c.starts_with("sqlite_")),
            "9.6 validate after the tail import: {v:?}"
        );
    }
    // 9.6's CLI still lists the session from the database.
    if let Some(peer) = peer96() {
        let o = run96(&peer, home, &["sessions", "--all-agents", "--json"]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(out.contains(&sid), "{out}");
    }
}

#[test]
fn a_diverging_leftover_is_kept() {
    let Some(home) = imported_home() else { return };
    let home = home.path();
    let (leftover, _) = plant_leftover(home, 2);
    let text = std::fs::read_to_string(&leftover).unwrap();
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    lines[1] = lines[1].replace("question", "QUESTION");
    std::fs::write(&leftover, lines.join("\n") + "\n").unwrap();
    let before = tree(&home.join(".openclaw"));
    let (code, v) = finish(home, &["--apply"]);
    assert_eq!(code, 1, "{v:#}");
    assert_eq!(v["items"][0]["action"], "keep");
    assert_eq!(v["items"][0]["done"], false);
    assert_eq!(tree(&home.join(".openclaw")), before);
}

#[test]
fn half_written_manifests_are_moved_aside_or_closed() {
    let Some(home) = imported_home() else { return };
    let home = home.path();
    let runs = home.join(".openclaw/session-sqlite-migration-runs");
    let good = std::fs::read_dir(&runs)
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path();
    let text = std::fs::read_to_string(&good).unwrap();
    // A torn run: the write stopped half way.
    let torn = runs.join("session-sqlite-1796154099999-deadbeef.json");
    std::fs::write(&torn, &text.as_bytes()[..text.len() / 2]).unwrap();
    // A run killed before it recorded completion: no completedAt, completedMoves empty,
    // the moves done on disk (its paths made to point into this copy).
    let mut m: Value = serde_json::from_str(&text).unwrap();
    let real_root = home.join(".openclaw").to_string_lossy().into_owned();
    let mut s = m.to_string();
    let old_root = m["targets"][0]["storePath"]
        .as_str()
        .unwrap()
        .split("/agents/")
        .next()
        .unwrap()
        .to_string();
    s = s.replace(&old_root, &real_root);
    m = serde_json::from_str(&s).unwrap();
    m.as_object_mut().unwrap().remove("completedAt");
    let mut completed_before = 0;
    for t in m["targets"].as_array_mut().unwrap() {
        completed_before += t["completedMoves"].as_array().unwrap().len();
        t["completedMoves"] = json!([]);
    }
    std::fs::write(&good, serde_json::to_string_pretty(&m).unwrap()).unwrap();
    let torn_bytes = std::fs::read(&torn).unwrap();

    let v = dry_runs_change_nothing(home);
    let cases: Vec<&str> = v["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["case"].as_str().unwrap())
        .collect();
    assert!(
        cases.contains(&"manifest-torn") && cases.contains(&"manifest-incomplete"),
        "{cases:?}"
    );

    let (code, v) = finish(home, &["--apply", "--now", "1796200000000"]);
    assert_eq!(code, 0, "{v:#}");
    assert!(!torn.exists());
    let aside = runs.join("session-sqlite-1796154099999-deadbeef.json.torn-1796200000000");
    assert_eq!(std::fs::read(&aside).unwrap(), torn_bytes);
    let closed: Value = serde_json::from_slice(&std::fs::read(&good).unwrap()).unwrap();
    assert_eq!(closed["completedAt"], "2026-12-02T08:26:40.000Z");
    assert_eq!(closed["failedAt"], closed["completedAt"]);
    let completed_after: usize = closed["targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["completedMoves"].as_array().unwrap().len())
        .sum();
    assert_eq!(completed_after, completed_before);
    // Done: nothing more to finish.
    let (_, v) = finish(home, &[]);
    assert!(v["items"].as_array().unwrap().is_empty(), "{v:#}");
}

#[test]
fn an_archive_without_its_rows_is_imported_again_as_an_orphan() {
    let Some(home) = imported_home() else { return };
    let home = home.path();
    let arch = agent_dir(home, "main").join("session-sqlite-import-archive");
    let file = arch.join("archive-tier.lost-1.jsonl.imported-1796154054300");
    let body = "{\"type\":\"session\",\"version\":3,\"id\":\"lost-1\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/x\"}\n{\"type\":\"message\",\"id\":\"m1\",\"parentId\":null,\"timestamp\":\"2026-01-01T00:00:01.000Z\",\"message\":{\"role\":\"user\",\"content\":\"caf\\u00e9\"}}\n";
    std::fs::write(&file, body).unwrap();
    let v = dry_runs_change_nothing(home);
    let item = &v["items"][0];
    assert_eq!(item["case"], "archive-without-rows");
    assert_eq!(item["sessionId"], "lost-1");
    assert_eq!(item["action"], "reimport", "{item:#}");
    assert_eq!(item["sessionKey"], "agent:main:recovered:lost-1");
    let (code, v) = finish(home, &["--apply"]);
    assert_eq!(code, 0, "{v:#}");
    let item = &v["items"][0];
    assert_eq!(item["done"], true, "{item:#}");
    assert_eq!(item["tailEvents"], 2);
    let proof = &item["proof"];
    assert_eq!(proof["dbEvents"], 2);
    assert_eq!(proof["matchedEvents"], 2);
    assert_eq!(
        proof["fileSha256"],
        format!("{:x}", Sha256::digest(body.as_bytes()))
    );
    // The file stays in the archive, byte for byte; the rows are there.
    assert_eq!(std::fs::read_to_string(&file).unwrap(), body);
    let c = rusqlite::Connection::open(db_of(home, "main")).unwrap();
    let n: i64 = c
        .query_row(
            "SELECT count(*) FROM transcript_events WHERE session_id = 'lost-1'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(n, 2);
    let key: String = c
        .query_row(
            "SELECT session_key FROM session_nodes WHERE current_session_id = 'lost-1'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(key, "agent:main:recovered:lost-1");
    drop(c);
    // Done: nothing more to finish.
    let (_, v) = finish(home, &[]);
    assert!(v["items"].as_array().unwrap().is_empty(), "{v:#}");
}

/// The rows of one session in the canonical dump of `db` (rows that name its key or id).
fn session_rows(db: &Path, key: &str, sid: &str) -> BTreeMap<String, Vec<String>> {
    let mut out = migrate_support::canonical_dump(db);
    for rows in out.values_mut() {
        rows.retain(|r| r.contains(key) || r.contains(sid));
    }
    out.retain(|_, rows| !rows.is_empty());
    // FTS row ids are the table's next free ones: not the session's.
    for (t, rows) in out.iter_mut() {
        if t.starts_with("session_transcript_fts") {
            for r in rows.iter_mut() {
                if let Some(rest) = r.strip_prefix("id=") {
                    *r = rest
                        .split_once('|')
                        .map_or(String::new(), |x| x.1.to_string());
                }
            }
            rows.sort();
        }
    }
    out
}

#[test]
fn an_archived_session_whose_rows_were_lost_comes_back_as_doctor_imported_it() {
    let Some(home) = imported_home() else { return };
    let home = home.path();
    let db = db_of(home, "main");
    let (file, sid) = archived(home, "main").swap_remove(1);
    let key: String = rusqlite::Connection::open(&db)
        .unwrap()
        .query_row(
            "SELECT session_key FROM session_nodes WHERE current_session_id = ?1",
            [&sid],
            |r| r.get(0),
        )
        .unwrap();
    let doctors = session_rows(&db, &key, &sid);
    let sessions_before = peer96().map(|p| sessions96(&p, home));
    // The stalled run: the file archived, its rows gone.
    {
        let c = rusqlite::Connection::open(&db).unwrap();
        c.execute_batch("PRAGMA foreign_keys = ON").unwrap();
        c.execute(
            "DELETE FROM session_transcript_fts WHERE rowid IN (SELECT id FROM session_transcript_fts_rows WHERE session_id = ?1)",
            [&sid],
        )
        .unwrap();
        c.execute("DELETE FROM session_nodes WHERE session_key = ?1", [&key])
            .unwrap();
        let tables: Vec<String> = c
            .prepare("SELECT m.name FROM sqlite_master m, pragma_table_info(m.name) p WHERE m.type = 'table' AND p.name = 'session_id' AND m.name NOT LIKE 'session_transcript_fts%'")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        for t in tables
            .iter()
            .chain(["session_transcript_fts_rows".to_string()].iter())
        {
            c.execute(&format!("DELETE FROM {t} WHERE session_id = ?1"), [&sid])
                .unwrap();
        }
    }
    let v = dry_runs_change_nothing(home);
    let item = v["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["sessionId"] == sid.as_str())
        .unwrap_or_else(|| panic!("{v:#}"))
        .clone();
    assert_eq!(item["action"], "reimport", "{item:#}");
    assert_eq!(item["sessionKey"], key.as_str());
    let bytes = std::fs::read(&file).unwrap();
    let (code, v) = finish(home, &["--apply"]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(
        std::fs::read(&file).unwrap(),
        bytes,
        "the archive file stays"
    );
    let ours = session_rows(&db, &key, &sid);
    let tables: std::collections::BTreeSet<&String> = ours.keys().chain(doctors.keys()).collect();
    for t in tables {
        let (a, b) = (doctors.get(t.as_str()), ours.get(t.as_str()));
        if a != b {
            let cut = |v: Option<&Vec<String>>| -> Vec<String> {
                v.map(|v| v.iter().map(|r| r.chars().take(160).collect()).collect())
                    .unwrap_or_default()
            };
            panic!("{t}: doctor {:#?}\nours {:#?}", cut(a), cut(b));
        }
    }
    if let Some(peer) = peer96() {
        assert_eq!(
            Some(sessions96(&peer, home)),
            sessions_before,
            "sessions --json"
        );
        let issues = validate96(home).unwrap();
        assert!(
            !issues.iter().any(|(_, k)| k == &key),
            "9.6 validate: {issues:?}"
        );
    }
}

/// 9.6's `sessions --json --all-agents`, ages left out.
fn sessions96(peer: &Path, home: &Path) -> Value {
    let o = run96(peer, home, &["sessions", "--json", "--all-agents"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut v: Value = serde_json::from_slice(&o.stdout).unwrap();
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
fn apply_refuses_while_a_gateway_is_live() {
    let Some(home) = imported_home() else { return };
    let home = home.path();
    let (leftover, _) = plant_leftover(home, 0);
    let config = home.join(".openclaw/openclaw.json");
    let hash = Sha256::digest(config.to_string_lossy().as_bytes());
    let hex: String = hash.iter().take(4).map(|b| format!("{b:02x}")).collect();
    // SAFETY: getuid takes no arguments and cannot fail.
    let uid = unsafe { libc::getuid() };
    let dir = home.join("tmp").join(format!("openclaw-{uid}"));
    std::fs::create_dir_all(&dir).unwrap();
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
    let after = &stat[stat.rfind(')').unwrap() + 2..];
    let start: u64 = after.split(' ').nth(19).unwrap().parse().unwrap();
    std::fs::write(
        dir.join(format!("gateway.{hex}.lock")),
        json!({"pid": std::process::id(), "createdAt": "2026-01-01T00:00:00.000Z", "configPath": config, "startTime": start}).to_string(),
    )
    .unwrap();
    let o = claw("claw-migrate", home)
        .env("TMPDIR", home.join("tmp"))
        .args(["finish", "--apply"])
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(75),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(leftover.exists());
}

/// Moves `dir` elsewhere and leaves a symlink to it in its place.
fn replace_dir_with_link(dir: &Path, elsewhere: &Path) {
    std::fs::rename(dir, elsewhere).unwrap();
    std::os::unix::fs::symlink(elsewhere, dir).unwrap();
}

#[test]
fn a_runs_dir_that_is_a_symlink_is_not_followed() {
    let Some(home) = imported_home() else { return };
    let home = home.path();
    let runs = home.join(".openclaw/session-sqlite-migration-runs");
    let torn = runs.join("session-sqlite-1796154099999-deadbeef.json");
    std::fs::write(&torn, b"{\"runId\":").unwrap();
    let other = home.join("elsewhere-runs");
    replace_dir_with_link(&runs, &other);
    let before = tree_all(&other);
    let o = claw("claw-migrate", home)
        .args(["finish", "--apply", "--now", "1796200000000"])
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(65),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("session-sqlite-migration-runs"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(tree_all(&other), before, "nothing moved through the link");
}

#[test]
fn an_import_archive_that_is_a_symlink_is_not_read() {
    let Some(home) = imported_home() else { return };
    let home = home.path();
    let arch = agent_dir(home, "main").join("session-sqlite-import-archive");
    std::fs::write(
        arch.join("agent_main_lost.lost-1.jsonl.imported-1796154054300"),
        "{\"type\":\"session\",\"version\":3,\"id\":\"lost-1\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/x\"}\n",
    )
    .unwrap();
    replace_dir_with_link(&arch, &home.join("elsewhere-archive"));
    let o = claw("claw-migrate", home)
        .args(["finish", "--json"])
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(65),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains("session-sqlite-import-archive"));
}
