//! `claw-sessions du` on imported agent DBs, against sums computed with plain SQL.

mod agent_db_support;
mod support;

use agent_db_support::{db_of, imported_home, IMAGE_B64_BYTES};
use rusqlite::{params, Connection};
use serde_json::Value;
use support::{claw, json_of};

fn q(c: &Connection, sql: &str) -> i64 {
    c.query_row(sql, [], |r| r.get::<_, Option<i64>>(0))
        .unwrap()
        .unwrap_or(0)
}

const STORED: &str =
    "coalesce(length(CAST(event_json AS BLOB)), 0) + coalesce(length(event_zstd), 0)";
const DECODED: &str = "CASE WHEN event_json IS NOT NULL THEN length(CAST(event_json AS BLOB)) ELSE event_utf8_bytes END";

#[test]
fn du_matches_plain_sql_sums() {
    let Some(h) = imported_home() else { return };
    // An archive row, as `sessions cleanup --enforce --store <agent.sqlite>` keeps one.
    let main_db = db_of(h.path(), "main");
    let c = Connection::open(&main_db).unwrap();
    c.execute(
        "INSERT INTO session_transcript_archives (session_id, generation, session_key, reason, encoding, archive_blob, archive_sha256, archive_name, created_at) VALUES ('gone', 'g1', 'agent:main:gone', 'deleted', 'zstd', ?1, ?2, 'gone.jsonl.deleted.x.g1.zst', 1)",
        params![vec![1u8; 5000], "0".repeat(64)],
    )
    .unwrap();
    drop(c);
    let o = claw("claw-sessions", h.path())
        .args(["--json", "--all-agents", "du", "--top", "3"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v = json_of(&o.stdout);
    let agents = v["agents"].as_array().unwrap();
    assert_eq!(agents.len(), 2);
    for a in agents {
        let agent = a["agentId"].as_str().unwrap();
        let db = db_of(h.path(), agent);
        let c =
            Connection::open_with_flags(&db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
        assert_eq!(
            a["events"],
            q(&c, "SELECT count(*) FROM transcript_events"),
            "{agent}"
        );
        assert_eq!(
            a["compressedEvents"],
            q(
                &c,
                "SELECT count(*) FROM transcript_events WHERE event_zstd IS NOT NULL"
            )
        );
        assert_eq!(
            a["storedBytes"],
            q(&c, &format!("SELECT sum({STORED}) FROM transcript_events")),
            "{agent}"
        );
        assert_eq!(
            a["decodedBytes"],
            q(&c, &format!("SELECT sum({DECODED}) FROM transcript_events")),
            "{agent}"
        );
        assert_eq!(
            a["ftsBytes"],
            q(
                &c,
                "SELECT sum(pgsize) FROM dbstat WHERE name LIKE 'session_transcript_fts%'"
            )
        );
        assert_eq!(a["fileBytes"], std::fs::metadata(&db).unwrap().len());
        let wal = std::fs::metadata(format!("{}-wal", db.display()))
            .map(|m| m.len())
            .unwrap_or(0);
        assert_eq!(a["walBytes"], wal);
        for s in a["sessions"].as_array().unwrap() {
            let sid = s["sessionId"].as_str().unwrap();
            let w = format!("FROM transcript_events WHERE session_id = '{sid}'");
            assert_eq!(s["events"], q(&c, &format!("SELECT count(*) {w}")), "{sid}");
            assert_eq!(
                s["storedBytes"],
                q(&c, &format!("SELECT sum({STORED}) {w}")),
                "{sid}"
            );
            assert_eq!(
                s["decodedBytes"],
                q(&c, &format!("SELECT sum({DECODED}) {w}")),
                "{sid}"
            );
        }
        let largest = &a["largest"][0];
        assert_eq!(
            largest["decodedBytes"],
            q(&c, &format!("SELECT max({DECODED}) FROM transcript_events"))
        );
        if agent == "main" {
            assert_eq!(a["images"], 1);
            assert_eq!(a["imageBytes"], IMAGE_B64_BYTES as i64);
            assert_eq!(a["archives"]["rows"], 1);
            assert_eq!(a["archives"]["bytes"], 5000);
            // The image line is the largest event, and its session the largest session.
            assert!(largest["kind"]
                .as_str()
                .unwrap()
                .starts_with("message/user"));
            assert_eq!(a["sessions"][0]["images"], 1);
        } else {
            assert_eq!(a["images"], 0);
        }
        let tables: i64 = a["tables"]
            .as_object()
            .unwrap()
            .values()
            .map(|v| v.as_i64().unwrap())
            .sum();
        assert_eq!(tables, q(&c, "SELECT sum(pgsize) FROM dbstat"));
    }
    // The text report names the image share.
    let o = claw("claw-sessions", h.path())
        .args(["du"])
        .output()
        .unwrap();
    let t = String::from_utf8_lossy(&o.stdout);
    assert!(t.contains("inline images 1"), "{t}");
}

#[test]
fn du_on_the_file_layout_says_so() {
    let h = tempfile::tempdir().unwrap();
    let d = h.path().join(".openclaw/agents/main/sessions");
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(d.join("sessions.json"), "{}").unwrap();
    let o = claw("claw-sessions", h.path())
        .args(["du"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(3));
    let _: Option<Value> = None;
}
