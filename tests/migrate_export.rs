//! `claw-migrate export` and `verify` on agent DBs imported by openclaw@2026.9.6 itself:
//! the archived originals come back byte for byte, sessions written after the migration as
//! 9.6 stored them, the export imports again with 9.6's own doctor into the same sessions,
//! and verify names the session and line of every event removed or changed.

mod agent_db_support;
mod support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use agent_db_support::{db_of, imported_home, peer96, run96, AGENTS};
use rusqlite::params;
use serde_json::{json, Value};
use support::{claw, json_of};

fn migrate(home: &Path, args: &[&str]) -> std::process::Output {
    claw("claw-migrate", home).args(args).output().unwrap()
}

fn rw(db: &Path) -> rusqlite::Connection {
    rusqlite::Connection::open(db).unwrap()
}

/// Every file below `dir` with its bytes.
fn tree(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    for (p, bytes) in tree_all(dir) {
        out.insert(p, bytes);
    }
    out
}

/// Asserts that two trees are the same, naming the files that differ.
#[track_caller]
fn assert_same_tree(before: &BTreeMap<PathBuf, Vec<u8>>, after: &BTreeMap<PathBuf, Vec<u8>>) {
    let differ: Vec<&PathBuf> = before
        .keys()
        .chain(after.keys())
        .filter(|p| before.get(*p) != after.get(*p))
        .collect();
    assert!(differ.is_empty(), "changed: {differ:?}");
}

fn tree_all(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            let t = e.file_type().unwrap();
            if t.is_dir() {
                stack.push(p);
            } else if t.is_file() {
                out.insert(p.clone(), std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

fn archive_of(home: &Path, agent: &str) -> PathBuf {
    home.join(".openclaw/agents")
        .join(agent)
        .join("session-sqlite-import-archive")
}

/// The archived original of `sid`.
fn original_of(home: &Path, agent: &str, sid: &str) -> PathBuf {
    std::fs::read_dir(archive_of(home, agent))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .contains(&format!(".{sid}.jsonl.imported-"))
        })
        .unwrap_or_else(|| panic!("no original of {sid}"))
}

fn archived_store(home: &Path, agent: &str) -> serde_json::Map<String, Value> {
    let p = std::fs::read_dir(archive_of(home, agent))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("legacy-store.sessions.json.imported-")
        })
        .unwrap();
    serde_json::from_slice::<Value>(&std::fs::read(p).unwrap())
        .unwrap()
        .as_object()
        .unwrap()
        .clone()
}

#[test]
fn export_reproduces_the_archived_originals_byte_for_byte() {
    let Some(h) = imported_home() else { return };
    let out = h.path().join("out");
    let o = migrate(
        h.path(),
        &[
            "--all-agents",
            "--json",
            "export",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let doc = json_of(&o.stdout);
    let rows = doc["sessions"].as_array().unwrap();
    assert_eq!(rows.len(), 10);
    for agent in AGENTS {
        let store_path = out
            .join("agents")
            .join(agent)
            .join("sessions/sessions.json");
        let store: Value = serde_json::from_slice(&std::fs::read(&store_path).unwrap()).unwrap();
        let legacy = archived_store(h.path(), agent);
        // The entries as the legacy store had them (key order too), sessionFile rewritten.
        assert_eq!(
            store.as_object().unwrap().keys().collect::<Vec<_>>(),
            legacy.keys().collect::<Vec<_>>()
        );
        for (key, want) in &legacy {
            let got = &store[key];
            let sid = want["sessionId"].as_str().unwrap();
            let file = out
                .join("agents")
                .join(agent)
                .join(format!("sessions/{sid}.jsonl"));
            assert_eq!(got["sessionFile"], json!(file.to_string_lossy()));
            let mut w = want.clone();
            w["sessionFile"] = got["sessionFile"].clone();
            assert_eq!(
                serde_json::to_string(got).unwrap(),
                serde_json::to_string(&w).unwrap(),
                "{key}"
            );
            let original = std::fs::read(original_of(h.path(), agent, sid)).unwrap();
            assert_eq!(std::fs::read(&file).unwrap(), original, "{key}");
            // The originals hold `\u00e9` escapes, which 9.6 stored as é.
            if key.ends_with(":main") {
                assert!(String::from_utf8_lossy(&original).contains("\\u00e9"));
            }
            let row = rows.iter().find(|r| r["sessionKey"] == json!(key)).unwrap();
            assert_eq!(row["byteIdentical"], true, "{row}");
            assert_eq!(row["mode"], "byte-identical");
            assert_eq!(row["entry"], "archived");
        }
    }
    assert_eq!(doc["byteIdentical"], 10);
}

/// A session created after the migration, and one continued after it, written as 9.6
/// writes rows (a plain row and a zstd row; the entry with a folded external delivery).
fn add_post_migration_rows(db: &Path) -> (String, Vec<String>, String) {
    let c = rw(db);
    let (sid, key) = (
        "0b1e2c3d-0000-4000-8000-000000000001".to_string(),
        "agent:main:telegram:direct:777".to_string(),
    );
    let nav: String = c
        .query_row(
            "SELECT navigation_json FROM transcript_events WHERE event_zstd IS NOT NULL LIMIT 1",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let big = format!(
        r#"{{"type":"message","id":"b2","parentId":"b1","timestamp":"2026-12-01T10:00:02.000Z","message":{{"role":"assistant","content":[{{"type":"text","text":"{}"}}]}}}}"#,
        "café ✓ ".repeat(400)
    );
    let lines = vec![
        format!(r#"{{"type":"session","version":3,"id":"{sid}","timestamp":"2026-12-01T10:00:00.000Z","cwd":"/home/u"}}"#),
        r#"{"type":"message","id":"b1","parentId":null,"timestamp":"2026-12-01T10:00:01.000Z","message":{"role":"user","content":[{"type":"text","text":"après la migration"}]}}"#.to_string(),
        big.clone(),
    ];
    let entry = json!({"sessionId": sid, "updatedAt": 1796100002000i64, "chatType": "direct",
        "delivery": {"kind":"external","route":{"channel":"telegram","target":{"to":"777"}},
            "context":{"channel":"telegram","to":"777"},"origin":{"provider":"telegram","to":"777"}}});
    c.execute(
        "INSERT INTO session_nodes (session_key, current_session_id, entry_json, updated_at) VALUES (?1, ?2, ?3, 1796100002000)",
        params![key, sid, entry.to_string()],
    )
    .unwrap();
    c.execute(
        "INSERT INTO session_windows (session_id, session_key, created_at, updated_at) VALUES (?1, ?2, 1796100000000, 1796100000000)",
        params![sid, key],
    )
    .unwrap();
    for (seq, l) in lines[..2].iter().enumerate() {
        c.execute(
            "INSERT INTO transcript_events (session_id, seq, event_json, created_at) VALUES (?1, ?2, ?3, 1796100000000)",
            params![sid, seq as i64, l],
        )
        .unwrap();
    }
    let z = zstd::bulk::compress(big.as_bytes(), 1).unwrap();
    c.execute(
        "INSERT INTO transcript_events (session_id, seq, event_json, created_at, event_zstd, event_utf8_bytes, navigation_json) VALUES (?1, 2, NULL, 1796100000000, ?2, ?3, ?4)",
        params![sid, z, big.len() as i64, nav],
    )
    .unwrap();
    // A turn appended to an imported session.
    let main_sid: String = c
        .query_row(
            "SELECT current_session_id FROM session_nodes WHERE session_key = 'agent:main:cron:nightly'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let next: i64 = c
        .query_row(
            "SELECT max(seq) + 1 FROM transcript_events WHERE session_id = ?1",
            params![main_sid],
            |r| r.get(0),
        )
        .unwrap();
    let appended = r#"{"type":"message","id":"zz1","parentId":null,"timestamp":"2026-12-01T11:00:00.000Z","message":{"role":"user","content":[{"type":"text","text":"naïve, later"}]}}"#;
    c.execute(
        "INSERT INTO transcript_events (session_id, seq, event_json, created_at) VALUES (?1, ?2, ?3, 1796100000000)",
        params![main_sid, next, appended],
    )
    .unwrap();
    (key, lines, appended.to_string())
}

#[test]
fn sessions_written_after_the_migration_export_as_9_6_stored_them() {
    let Some(h) = imported_home() else { return };
    let db = db_of(h.path(), "main");
    let (key, lines, appended) = add_post_migration_rows(&db);
    let out = h.path().join("out");
    let o = migrate(
        h.path(),
        &[
            "--agent",
            "main",
            "--json",
            "export",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let doc = json_of(&o.stdout);
    let rows = doc["sessions"].as_array().unwrap();
    let row = |k: &str| rows.iter().find(|r| r["sessionKey"] == json!(k)).unwrap();
    let new = row(&key);
    assert_eq!(new["mode"], "re-serialised");
    assert_eq!(new["byteIdentical"], false);
    assert_eq!(new["entry"], "unfolded");
    let dir = out.join("agents/main/sessions");
    let sid = new["sessionId"].as_str().unwrap();
    assert_eq!(
        std::fs::read_to_string(dir.join(format!("{sid}.jsonl"))).unwrap(),
        lines.join("\n") + "\n"
    );
    let store: Value =
        serde_json::from_slice(&std::fs::read(dir.join("sessions.json")).unwrap()).unwrap();
    let e = &store[&key];
    assert_eq!(e["lastChannel"], "telegram");
    assert_eq!(e["lastTo"], "777");
    assert_eq!(e["origin"], json!({"provider":"telegram","to":"777"}));
    assert!(e.get("delivery").is_none());
    let keys: Vec<&String> = e.as_object().unwrap().keys().collect();
    assert_eq!(&keys[..3], ["sessionId", "updatedAt", "sessionFile"]);
    // The new key comes after those of the legacy store.
    assert_eq!(store.as_object().unwrap().keys().next_back().unwrap(), &key);
    // The continued session: its original byte for byte, then the appended line.
    let cont = row("agent:main:cron:nightly");
    assert_eq!(cont["mode"], "original+appended");
    assert_eq!(cont["appendedEvents"], 1);
    let csid = cont["sessionId"].as_str().unwrap();
    let mut want = std::fs::read(original_of(h.path(), "main", csid)).unwrap();
    want.extend_from_slice(appended.as_bytes());
    want.push(b'\n');
    assert_eq!(
        std::fs::read(dir.join(format!("{csid}.jsonl"))).unwrap(),
        want
    );
    // The others are still byte-identical.
    assert_eq!(doc["byteIdentical"], 4);
    // verify: the new session is created after the migration, not a failure.
    let o = migrate(h.path(), &["--agent", "main", "--json", "verify"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stdout));
    let v = json_of(&o.stdout);
    assert_eq!(v["createdAfterMigration"], 1);
    assert_eq!(v["verified"], 5);
    let s = v["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["sessionKey"] == json!("agent:main:cron:nightly"))
        .unwrap();
    assert_eq!(s["appendedEvents"], 1);
}

/// `openclaw sessions --json --all-agents` without what depends on where and when.
fn listing(peer: &Path, home: &Path) -> Value {
    let o = run96(peer, home, &["sessions", "--json", "--all-agents"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut v = json_of(&o.stdout);
    for r in v["sessions"].as_array_mut().into_iter().flatten() {
        if let Some(a) = r.get_mut("ageMs") {
            *a = Value::from("<age>");
        }
    }
    let home_s = home.to_string_lossy().into_owned();
    serde_json::from_str(
        &serde_json::to_string(&v)
            .unwrap()
            .replace(&home_s, "<home>"),
    )
    .unwrap()
}

/// Every session's entry and events, by key.
fn db_sessions(db: &Path) -> BTreeMap<String, (String, Vec<String>)> {
    let db = clawstate::agent_db::AgentDb::open(db).unwrap();
    let mut st = db
        .conn
        .prepare("SELECT session_key, current_session_id, entry_json FROM session_nodes")
        .unwrap();
    let rows: Vec<(String, String, String)> = st
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    rows.into_iter()
        .map(|(k, sid, e)| {
            let lines = clawstate::agent_db::events::lines(&db, &sid).unwrap();
            (k, (e, lines))
        })
        .collect()
}

#[test]
fn export_then_9_6_import_round_trips() {
    let Some(peer) = peer96() else { return };
    let Some(h) = imported_home() else { return };
    let h2 = tempfile::tempdir().unwrap();
    let state2 = h2.path().join(".openclaw");
    let o = migrate(
        h.path(),
        &["--all-agents", "export", "--out", state2.to_str().unwrap()],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    std::fs::copy(
        h.path().join(".openclaw/openclaw.json"),
        state2.join("openclaw.json"),
    )
    .unwrap();
    agent_db_support::doctor_import(&peer, h2.path(), "the export");
    assert_eq!(listing(&peer, h.path()), listing(&peer, h2.path()));
    for agent in AGENTS {
        let a = db_sessions(&db_of(h.path(), agent));
        let b = db_sessions(&db_of(h2.path(), agent));
        assert_eq!(a.len(), 5);
        assert_eq!(a, b, "{agent}");
    }
    // And the re-imported DB verifies against the export, now its archive.
    let o = migrate(h2.path(), &["--all-agents", "verify"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stdout));
}

#[test]
fn verify_passes_on_doctors_db_and_names_what_changed() {
    let Some(h) = imported_home() else { return };
    let o = migrate(h.path(), &["--all-agents", "verify"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stdout));
    assert!(String::from_utf8_lossy(&o.stderr).contains("10 sessions verified, 0 failed"));

    let db = db_of(h.path(), "work");
    let c = rw(&db);
    let sid = |key: &str| -> String {
        c.query_row(
            "SELECT current_session_id FROM session_nodes WHERE session_key = ?1",
            params![key],
            |r| r.get(0),
        )
        .unwrap()
    };
    // An event row deleted: seq 2 is line 3 of the original.
    let s1 = sid("agent:work:main");
    c.execute(
        "DELETE FROM transcript_events WHERE session_id = ?1 AND seq = 2",
        params![s1],
    )
    .unwrap();
    // An event altered.
    let s2 = sid("agent:work:cron:nightly");
    c.execute(
        "UPDATE transcript_events SET event_json = replace(event_json, 'question', 'QUESTION') WHERE session_id = ?1 AND seq = 1",
        params![s2],
    )
    .unwrap();
    // A session dropped.
    let s3 = sid("agent:work:discord:channel:991");
    c.execute(
        "DELETE FROM session_nodes WHERE session_key = 'agent:work:discord:channel:991'",
        [],
    )
    .unwrap();
    c.execute(
        "DELETE FROM session_windows WHERE session_id = ?1",
        params![s3],
    )
    .unwrap();
    c.execute(
        "DELETE FROM transcript_events WHERE session_id = ?1",
        params![s3],
    )
    .unwrap();
    drop(c);
    let o = migrate(h.path(), &["--all-agents", "verify"]);
    assert_eq!(o.status.code(), Some(65));
    let text = String::from_utf8_lossy(&o.stdout);
    let line_of = |code: &str, sid: &str| {
        text.lines()
            .find(|l| l.contains(code) && l.contains(sid))
            .unwrap_or_else(|| panic!("no {code} for {sid} in:\n{text}"))
            .to_string()
    };
    let l = line_of("event-missing", &s1);
    assert!(
        l.contains(&format!(".{s1}.jsonl.imported-"))
            && l.contains(":3: error: event-missing: line 3 of session \"agent:work:main\""),
        "{l}"
    );
    assert!(l.contains("claw-migrate"), "{l}");
    let l = line_of("event-changed", &s2);
    assert!(
        l.contains(":2: error: event-changed: line 2 of session \"agent:work:cron:nightly\""),
        "{l}"
    );
    let l = line_of("session-missing", &s3);
    assert!(l.contains("agent:work:discord:channel:991"), "{l}");
    // The JSON report says the same per session.
    let o = migrate(h.path(), &["--all-agents", "--json", "verify"]);
    assert_eq!(o.status.code(), Some(65));
    let v = json_of(&o.stdout);
    assert_eq!(v["failed"], 3);
    assert_eq!(v["verified"], 7);
    // NDJSON: one row per session, then one per finding.
    let o = migrate(h.path(), &["--all-agents", "--ndjson", "verify"]);
    let rows: Vec<Value> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(rows.iter().any(|r| r["code"] == "event-changed"));
}

#[test]
fn one_session_to_stdout() {
    let Some(h) = imported_home() else { return };
    let o = migrate(
        h.path(),
        &[
            "--agent",
            "main",
            "export",
            "--session",
            "agent:main:main",
            "-o",
            "-",
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let c = rw(&db_of(h.path(), "main"));
    let sid: String = c
        .query_row(
            "SELECT current_session_id FROM session_nodes WHERE session_key = 'agent:main:main'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(
        o.stdout,
        std::fs::read(original_of(h.path(), "main", &sid)).unwrap()
    );
    // A short key resolves as the gateway resolves it; a file is written once, never over.
    let f = h.path().join("one.jsonl");
    let o = migrate(
        h.path(),
        &["export", "--session", "main", "-o", f.to_str().unwrap()],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        std::fs::read(&f).unwrap(),
        std::fs::read(original_of(h.path(), "main", &sid)).unwrap()
    );
    let o = migrate(
        h.path(),
        &["export", "--session", "main", "-o", f.to_str().unwrap()],
    );
    assert_eq!(o.status.code(), Some(73));
    let o = migrate(
        h.path(),
        &["export", "--session", "agent:main:nope", "-o", "-"],
    );
    assert_eq!(o.status.code(), Some(3));
    // A key of another agent is looked up in that agent's DB.
    let o = migrate(
        h.path(),
        &["export", "--session", "agent:work:main", "-o", "-"],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let wsid: String = rw(&db_of(h.path(), "work"))
        .query_row(
            "SELECT current_session_id FROM session_nodes WHERE session_key = 'agent:work:main'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(
        o.stdout,
        std::fs::read(original_of(h.path(), "work", &wsid)).unwrap()
    );
}

#[test]
fn verify_reads_legacy_files_still_in_place() {
    let Some(h) = imported_home() else { return };
    let c = rw(&db_of(h.path(), "main"));
    let sid: String = c
        .query_row(
            "SELECT current_session_id FROM session_nodes WHERE session_key = 'agent:main:cron:nightly'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    drop(c);
    let dir = h.path().join(".openclaw/agents/main/sessions");
    let original = std::fs::read(original_of(h.path(), "main", &sid)).unwrap();
    // A torn last line: the import keeps the readable prefix; information, exit 0.
    let mut torn = original.clone();
    torn.extend_from_slice(br#"{"type":"message","id":"to"#);
    std::fs::write(dir.join(format!("{sid}.jsonl")), &torn).unwrap();
    let o = migrate(h.path(), &["--agent", "main", "verify"]);
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(o.status.success(), "{text}");
    let lines = original.iter().filter(|&&b| b == b'\n').count();
    assert!(
        text.contains(&format!("{sid}.jsonl:{}: info: torn-tail", lines + 1)),
        "{text}"
    );
    // A whole line the DB lacks (a tail written after the import): an error at that line.
    let mut longer = original.clone();
    longer.extend_from_slice(
        br#"{"type":"message","id":"late","parentId":null,"message":{"role":"user","content":"caf\u00e9"}}"#,
    );
    longer.push(b'\n');
    std::fs::write(dir.join(format!("{sid}.jsonl")), &longer).unwrap();
    let o = migrate(h.path(), &["--agent", "main", "verify"]);
    assert_eq!(o.status.code(), Some(65));
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        text.contains(&format!(
            "sessions/{sid}.jsonl:{}: error: event-missing",
            lines + 1
        )),
        "{text}"
    );
}

fn fake_live_gateway(home: &Path) {
    use sha2::Digest;
    let config = home.join(".openclaw/openclaw.json");
    let hash = sha2::Sha256::digest(config.to_string_lossy().as_bytes());
    let hex: String = hash.iter().take(4).map(|b| format!("{b:02x}")).collect();
    // SAFETY: getuid has no preconditions and cannot fail.
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
}

#[test]
fn refusals_change_no_byte() {
    let Some(h) = imported_home() else { return };
    let state = h.path().join(".openclaw");
    // A non-empty --out: 73.
    let out = h.path().join("busy");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("keep"), "x").unwrap();
    let before = tree(h.path());
    let o = migrate(
        h.path(),
        &["--all-agents", "export", "--out", out.to_str().unwrap()],
    );
    assert_eq!(o.status.code(), Some(73));
    assert_eq!(String::from_utf8_lossy(&o.stderr).lines().count(), 1);
    assert_same_tree(&before, &tree(h.path()));
    // Into the agent's own dir, where a sessions.json already is: 73.
    let main_store = state.join("agents/main/sessions/sessions.json");
    std::fs::write(&main_store, "{}").unwrap();
    let before = tree(h.path());
    let o = migrate(h.path(), &["--all-agents", "export"]);
    assert_eq!(
        o.status.code(),
        Some(73),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains("sessions.json"));
    assert_same_tree(&before, &tree(h.path()));
    std::fs::remove_file(&main_store).unwrap();
    // A live gateway: 75.
    fake_live_gateway(h.path());
    let before = tree(h.path());
    let o = migrate(h.path(), &["--all-agents", "export"]);
    assert_eq!(
        o.status.code(),
        Some(75),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains("gateway"));
    assert_same_tree(&before, &tree(h.path()));
    // A dry run writes nothing, even where a real run would.
    let fresh = h.path().join("fresh");
    let o = migrate(
        h.path(),
        &[
            "--all-agents",
            "--json",
            "export",
            "--dry-run",
            "--out",
            fresh.to_str().unwrap(),
        ],
    );
    assert!(o.status.success());
    assert_eq!(json_of(&o.stdout)["sessions"].as_array().unwrap().len(), 10);
    assert!(!fresh.exists());
    // Reading the DB makes SQLite's own -wal/-shm, as every reader does; nothing else.
    let data = |t: BTreeMap<PathBuf, Vec<u8>>| -> BTreeMap<PathBuf, Vec<u8>> {
        t.into_iter()
            .filter(|(p, _)| {
                let n = p.to_string_lossy();
                !n.ends_with("-shm") && !n.ends_with("-wal")
            })
            .collect()
    };
    assert_same_tree(&data(before), &data(tree(h.path())));
}

#[test]
fn export_into_the_agents_own_dir_when_it_is_free() {
    let Some(h) = imported_home() else { return };
    let o = migrate(h.path(), &["--all-agents", "--ndjson", "export"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let rows: Vec<Value> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 10);
    for agent in AGENTS {
        let dir = h
            .path()
            .join(".openclaw/agents")
            .join(agent)
            .join("sessions");
        let store: Value =
            serde_json::from_slice(&std::fs::read(dir.join("sessions.json")).unwrap()).unwrap();
        for (_, e) in store.as_object().unwrap() {
            let f = e["sessionFile"].as_str().unwrap();
            assert!(Path::new(f).starts_with(&dir), "{f}");
            assert!(Path::new(f).is_file());
        }
    }
    // A second run refuses: the store is there now.
    let o = migrate(h.path(), &["--all-agents", "export"]);
    assert_eq!(o.status.code(), Some(73));
}

/// 2026.7's `sessions --json --all-agents` on `home`, with what depends on where and when
/// masked.
fn listing71(peer: &Path, home: &Path) -> Value {
    let o = support::run_peer(peer, home, &[], &["sessions", "--json", "--all-agents"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut v = json_of(&o.stdout);
    for r in v["sessions"].as_array_mut().into_iter().flatten() {
        if let Some(a) = r.get_mut("ageMs") {
            *a = Value::from("<age>");
        }
    }
    let home_s = home.to_string_lossy().into_owned();
    serde_json::from_str(
        &serde_json::to_string(&v)
            .unwrap()
            .replace(&home_s, "<home>"),
    )
    .unwrap()
}

#[test]
fn the_export_reads_in_2026_7_as_the_legacy_dir_did() {
    let Some(peer71) = support::peer() else {
        return;
    };
    let Some(h) = imported_home() else { return };
    // The legacy dir as it was before the import, rebuilt from the import archive.
    let before = tempfile::tempdir().unwrap();
    for agent in AGENTS {
        let dir = before
            .path()
            .join(".openclaw/agents")
            .join(agent)
            .join("sessions");
        std::fs::create_dir_all(&dir).unwrap();
        let mut store = archived_store(h.path(), agent);
        for (_, e) in store.iter_mut() {
            let sid = e["sessionId"].as_str().unwrap().to_string();
            let file = dir.join(format!("{sid}.jsonl"));
            std::fs::copy(original_of(h.path(), agent, &sid), &file).unwrap();
            e["sessionFile"] = json!(file.to_string_lossy());
        }
        std::fs::write(
            dir.join("sessions.json"),
            serde_json::to_string_pretty(&Value::Object(store)).unwrap(),
        )
        .unwrap();
    }
    let after = tempfile::tempdir().unwrap();
    let state = after.path().join(".openclaw");
    let o = migrate(
        h.path(),
        &["--all-agents", "export", "--out", state.to_str().unwrap()],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for home in [before.path(), after.path()] {
        std::fs::copy(
            h.path().join(".openclaw/openclaw.json"),
            home.join(".openclaw/openclaw.json"),
        )
        .unwrap();
    }
    let a = listing71(&peer71, before.path());
    assert_eq!(a["count"], 10);
    assert_eq!(a, listing71(&peer71, after.path()));
}
