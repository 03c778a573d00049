//! The 2026.8+ layout: every read command on agent DBs imported by openclaw@2026.9.6
//! itself, compared with 9.6's own output where it has one; writes refused.

mod agent_db_support;
mod support;

use agent_db_support::{db_of, imported_home, peer96, run96, FIXTURE_NOW};
use serde_json::Value;
use support::{claw, json_of};

fn ours(home: &std::path::Path, bin: &str, args: &[&str]) -> std::process::Output {
    claw(bin, home).args(args).output().unwrap()
}

#[test]
fn fixture_is_an_imported_db_with_compressed_rows() {
    let Some(h) = imported_home() else { return };
    for agent in agent_db_support::AGENTS {
        let db = db_of(h.path(), agent);
        assert!(db.is_file(), "{}", db.display());
        assert!(!h
            .path()
            .join(format!(".openclaw/agents/{agent}/sessions/sessions.json"))
            .exists());
    }
    let c = rusqlite_count(
        &db_of(h.path(), "main"),
        "SELECT count(*) FROM transcript_events WHERE event_zstd IS NOT NULL",
    );
    assert!(c > 0, "the fixture has zstd rows");
}

fn rusqlite_count(db: &std::path::Path, sql: &str) -> i64 {
    let o = std::process::Command::new("sqlite3")
        .arg(db)
        .arg(sql)
        .output()
        .unwrap();
    String::from_utf8_lossy(&o.stdout)
        .trim()
        .parse()
        .unwrap_or(-1)
}

/// Every field equal except `ageMs` (the peer reads the real clock), key order included.
fn assert_same_listing(ours: &Value, theirs: &Value, what: &str) {
    let strip = |v: &Value| -> Value {
        let mut v = v.clone();
        for r in v["sessions"].as_array_mut().into_iter().flatten() {
            if let Some(a) = r.get_mut("ageMs") {
                assert!(a.is_number() || a.is_null(), "{what}: ageMs {a}");
                *a = Value::from("<age>");
            }
        }
        v
    };
    let (a, b) = (
        serde_json::to_string_pretty(&strip(ours)).unwrap(),
        serde_json::to_string_pretty(&strip(theirs)).unwrap(),
    );
    if a != b {
        for (i, (la, lb)) in a.lines().zip(b.lines()).enumerate() {
            assert_eq!(la, lb, "{what}: first difference at line {i}");
        }
        panic!("{what}: lengths differ:\n{a}\n---\n{b}");
    }
}

#[test]
fn list_json_matches_2026_9_6_on_its_own_db() {
    let Some(peer) = peer96() else { return };
    let Some(h) = imported_home() else { return };
    let cases: &[&[&str]] = &[
        &["--all-agents"],
        &[],
        &["--agent", "work"],
        &["--all-agents", "--limit", "3"],
        &["--limit", "all"],
    ];
    for args in cases {
        let mut theirs_args = vec!["sessions", "--json"];
        theirs_args.extend_from_slice(args);
        let o = run96(&peer, h.path(), &theirs_args);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let theirs = json_of(&o.stdout);
        let mut our_args = vec!["--json", "list"];
        our_args.extend_from_slice(args);
        let o = ours(h.path(), "claw-sessions", &our_args);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let mine = json_of(&o.stdout);
        assert!(mine["count"].as_u64().unwrap() > 0, "{args:?}: rows");
        assert_same_listing(&mine, &theirs, &format!("sessions --json {args:?}"));
    }
}

fn sha(p: &std::path::Path) -> Vec<u8> {
    use sha2::Digest;
    sha2::Sha256::digest(std::fs::read(p).unwrap()).to_vec()
}

#[test]
fn show_resolve_policy_read_the_db() {
    let Some(h) = imported_home() else { return };
    let db = db_of(h.path(), "main");
    let o = ours(
        h.path(),
        "claw-sessions",
        &["--json", "show", "agent:main:main"],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v = json_of(&o.stdout);
    assert_eq!(
        v["storePath"],
        Value::from(db.to_string_lossy().into_owned())
    );
    assert_eq!(v["layout"], "db");
    assert_eq!(v["transcriptExists"], true);
    let raw = std::process::Command::new("sqlite3")
        .arg(&db)
        .arg("SELECT entry_json FROM session_nodes WHERE session_key = 'agent:main:main'")
        .output()
        .unwrap();
    let stored: Value = serde_json::from_slice(&raw.stdout).unwrap();
    assert_eq!(v["entry"]["sessionId"], stored["sessionId"]);
    assert_eq!(v["entry"]["delivery"], stored["delivery"]);
    // By sessionId too.
    let sid = stored["sessionId"].as_str().unwrap();
    let o = ours(h.path(), "claw-sessions", &["--json", "show", sid]);
    assert!(o.status.success());
    assert_eq!(json_of(&o.stdout)["key"], "agent:main:main");
    let o = ours(
        h.path(),
        "claw-sessions",
        &[
            "--json",
            "--now",
            &FIXTURE_NOW.to_string(),
            "resolve",
            "agent:main:main",
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(json_of(&o.stdout)["sessionId"], stored["sessionId"]);
    let o = ours(
        h.path(),
        "claw-sessions",
        &["--json", "policy", "agent:main:main"],
    );
    assert!(o.status.success());
    assert_eq!(json_of(&o.stdout)["entryFound"], true);
}

#[test]
fn writes_on_the_db_layout_refuse_with_77_and_change_nothing() {
    let Some(h) = imported_home() else { return };
    let db = db_of(h.path(), "main");
    let before = sha(&db);
    let sessions = h.path().join(".openclaw/agents/main/sessions");
    let cases: &[(&str, &[&str])] = &[
        (
            "claw-sessions",
            &["patch", "agent:main:main", "--set", "label=x"],
        ),
        ("claw-sessions", &["reset", "agent:main:main"]),
        ("claw-sessions", &["delete", "agent:main:main"]),
        ("claw-sessions", &["cleanup", "--enforce"]),
        (
            "claw-transcript",
            &[
                "append",
                "agent:main:main",
                "--role",
                "user",
                "--text",
                "hi",
            ],
        ),
        ("claw-transcript", &["repair", "agent:main:main"]),
        ("claw-compact", &["run", "agent:main:main"]),
    ];
    for (bin, args) in cases {
        let o = ours(h.path(), bin, args);
        assert_eq!(
            o.status.code(),
            Some(77),
            "{bin} {args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("SQLite database") && err.contains("refused"),
            "{err}"
        );
        assert!(
            !sessions.join("sessions.json").exists(),
            "{bin} {args:?} wrote a store"
        );
    }
    assert_eq!(sha(&db), before, "the agent DB was not written");
}

#[test]
fn layout_files_forces_the_legacy_files_and_leftovers_are_reported() {
    let Some(h) = imported_home() else { return };
    let o = ours(
        h.path(),
        "claw-sessions",
        &["--json", "--layout", "files", "list"],
    );
    assert!(o.status.success());
    assert_eq!(json_of(&o.stdout)["count"], 0);
    // A legacy store put back beside the DB: the DB stays authoritative, the file is named.
    let store = h
        .path()
        .join(".openclaw/agents/main/sessions/sessions.json");
    std::fs::write(
        &store,
        r#"{"agent:main:stale":{"sessionId":"x","updatedAt":1}}"#,
    )
    .unwrap();
    let o = ours(h.path(), "claw-sessions", &["--json", "list"]);
    assert!(o.status.success());
    let v = json_of(&o.stdout);
    assert!(v["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["key"] != "agent:main:stale"));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("legacy file") && err.contains("sessions.json"),
        "{err}"
    );
}

/// The legacy JSONL 9.6 imported for `key` (moved byte-identical into the import
/// archive), copied to `<dir>/<sid>.jsonl`.
fn legacy_copy(
    home: &std::path::Path,
    agent: &str,
    key: &str,
    sid: &str,
    dir: &std::path::Path,
) -> std::path::PathBuf {
    let arch = home.join(format!(
        ".openclaw/agents/{agent}/session-sqlite-import-archive"
    ));
    let prefix = format!("{}.{sid}.jsonl.imported-", key.replace(':', "_"));
    let found = std::fs::read_dir(&arch)
        .unwrap()
        .flatten()
        .find(|e| e.file_name().to_string_lossy().starts_with(&prefix))
        .unwrap_or_else(|| panic!("no archive {prefix} in {}", arch.display()));
    let to = dir.join(format!("{sid}.jsonl"));
    std::fs::copy(found.path(), &to).unwrap();
    to
}

fn session_ids(home: &std::path::Path, agent: &str) -> Vec<(String, String)> {
    let o = std::process::Command::new("sqlite3")
        .arg(db_of(home, agent))
        .arg("SELECT session_key || char(9) || current_session_id FROM session_nodes ORDER BY session_key")
        .output()
        .unwrap();
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| {
            let (k, s) = l.split_once('\t').unwrap();
            (k.to_string(), s.to_string())
        })
        .collect()
}

fn ok_stdout(o: std::process::Output, what: &str) -> String {
    assert!(
        o.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

/// `cat` gives every event in seq order, compressed rows included, each equal (as JSON)
/// to the line 9.6 imported; the big image line is a zstd row.
#[test]
fn cat_gives_every_event_in_seq_order_compressed_rows_included() {
    let Some(h) = imported_home() else { return };
    let scratch = tempfile::tempdir().unwrap();
    let mut saw_zstd_line = false;
    for agent in agent_db_support::AGENTS {
        let db = db_of(h.path(), agent);
        for (key, sid) in session_ids(h.path(), agent) {
            let out = ok_stdout(ours(h.path(), "claw-transcript", &["cat", &key]), &key);
            let mine: Vec<Value> = out
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect();
            let legacy = legacy_copy(h.path(), agent, &key, &sid, scratch.path());
            let theirs: Vec<Value> = std::fs::read_to_string(&legacy)
                .unwrap()
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect();
            assert_eq!(mine.len(), theirs.len(), "{key}: event count");
            assert_eq!(mine, theirs, "{key}: events as imported");
            let n = rusqlite_count(
                &db,
                &format!("SELECT count(*) FROM transcript_events WHERE session_id = '{sid}'"),
            );
            assert_eq!(n as usize, mine.len(), "{key}: one line per row");
            let z = rusqlite_count(
                &db,
                &format!("SELECT count(*) FROM transcript_events WHERE session_id = '{sid}' AND event_zstd IS NOT NULL"),
            );
            if z > 0 && out.contains("\"type\":\"image\"") {
                saw_zstd_line = true;
            }
        }
    }
    assert!(
        saw_zstd_line,
        "the image line is stored compressed and read back"
    );
}

/// history, tail, tree and stats on the DB equal the same commands on the legacy JSONL.
/// `history` of one key on a DB of many big entries reads that key's row, not the whole
/// store (peak RSS well under the entries' size; GNU time's `%M`). Before, `show` loaded
/// and parsed every row. Skipped without `/usr/bin/time`.
#[test]
fn history_of_one_key_does_not_load_the_other_rows() {
    let Some(h) = imported_home() else { return };
    let time = std::path::Path::new("/usr/bin/time");
    if !time.is_file() {
        eprintln!("skipped: no /usr/bin/time");
        return;
    }
    let db = db_of(h.path(), "main");
    // 20,000 entries of ~8 KB each: about 160 MB of entry_json.
    let o = std::process::Command::new("sqlite3")
        .arg(&db)
        .arg("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000) INSERT INTO session_nodes (session_key, current_session_id, entry_json, updated_at) SELECT 'agent:main:bulk:' || i, 'bulk-' || i, json_object('sessionId', 'bulk-' || i, 'updatedAt', i, 'pad', printf('%.8000c', 'x')), i FROM n")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(rusqlite_count(&db, "SELECT sum(length(entry_json)) FROM session_nodes") > 150_000_000);
    let rss = h.path().join("rss");
    let bin = assert_cmd::cargo::cargo_bin("claw-transcript");
    let o = std::process::Command::new(time)
        .arg("-f")
        .arg("%M")
        .arg("-o")
        .arg(&rss)
        .arg(bin)
        .args(["--json", "history", "agent:main:main"])
        .env_clear()
        .env("HOME", h.path())
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("TZ", "UTC")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v = json_of(&o.stdout);
    assert_eq!(v["sessionKey"], "agent:main:main");
    assert!(!v["messages"].as_array().unwrap().is_empty());
    let kib: u64 = std::fs::read_to_string(&rss)
        .unwrap()
        .trim()
        .lines()
        .last()
        .unwrap()
        .parse()
        .unwrap();
    assert!(kib < 60 * 1024, "peak RSS {kib} KiB for one key's history");
}

/// Tail, tree and stats on the DB read the same transcript as the file layout. (History on
/// the DB is 2026.9.6's projection, with transcript positions and image artifacts; it is
/// compared with a running 9.6 gateway in `tests/differential_history_96.rs`.)
#[test]
fn tail_tree_stats_on_the_db_equal_the_file_layout() {
    let Some(h) = imported_home() else { return };
    let scratch = tempfile::tempdir().unwrap();
    for agent in agent_db_support::AGENTS {
        for (key, sid) in session_ids(h.path(), agent) {
            let legacy = legacy_copy(h.path(), agent, &key, &sid, scratch.path());
            let lp = legacy.to_string_lossy().into_owned();
            for args in [
                vec!["tail", "-n", "3"],
                vec!["--json", "tree"],
                vec!["--json", "stats"],
            ] {
                let mut a = args.clone();
                a.push(&key);
                let mine = ok_stdout(ours(h.path(), "claw-transcript", &a), &format!("{a:?}"));
                let mut b = args.clone();
                b.push(&lp);
                let theirs = ok_stdout(ours(h.path(), "claw-transcript", &b), &format!("{b:?}"));
                let norm = |s: &str| -> String {
                    match serde_json::from_str::<Value>(s) {
                        Ok(mut v) => {
                            if let Some(o) = v.as_object_mut() {
                                o.remove("sessionKey");
                                o.remove("path");
                                o.remove("file");
                                // The DB holds lines re-serialised (`\u00e9` as `é`).
                                o.remove("bytes");
                            }
                            v.to_string()
                        }
                        Err(_) => s.to_string(),
                    }
                };
                assert_eq!(norm(&mine), norm(&theirs), "{key}: {args:?}");
            }
        }
    }
}
