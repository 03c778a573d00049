//! `clawstate::migrate::rows` against openclaw 2026.9.6: every legacy line of the fixture
//! (the originals doctor moved into the import archive) turned into rows by clawstate
//! equals the `transcript_events` and `transcript_event_identities` rows doctor wrote for
//! it, compressed bytes included.

mod agent_db_support;
mod support;

use agent_db_support::{db_of, imported_home, AGENTS};
use clawstate::migrate::rows;
use rusqlite::{Connection, OptionalExtension};

#[test]
fn every_fixture_line_gives_the_rows_doctor_wrote() {
    let Some(home) = imported_home() else {
        eprintln!("skipped: openclaw 2026.9.6 is not available");
        return;
    };
    let scratch = Connection::open_in_memory().unwrap();
    let mut compared = 0;
    let mut compressed = 0;
    for agent in AGENTS {
        let db = Connection::open(db_of(home.path(), agent)).unwrap();
        let archive = home
            .path()
            .join(".openclaw/agents")
            .join(agent)
            .join("session-sqlite-import-archive");
        for f in std::fs::read_dir(&archive).unwrap() {
            let f = f.unwrap().path();
            let name = f.file_name().unwrap().to_string_lossy().to_string();
            if !name.contains(".jsonl.imported-") {
                continue;
            }
            let sid = name.split('.').nth(1).unwrap().to_string();
            let text = std::fs::read_to_string(&f).unwrap();
            for (seq, line) in text.lines().enumerate() {
                let (value, json) = rows::event_line(line).unwrap();
                let payload = rows::event_payload(&scratch, &json, &value).unwrap();
                type Row = (Option<String>, Option<Vec<u8>>, i64, Option<String>, i64);
                let want: Row = db
                    .query_row(
                        "SELECT event_json, event_zstd, event_utf8_bytes, navigation_json, created_at FROM transcript_events WHERE session_id=?1 AND seq=?2",
                        rusqlite::params![sid, seq as i64],
                        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
                    )
                    .unwrap();
                let at = format!("{agent} {sid} seq {seq}");
                assert_eq!(payload.event_json, want.0, "{at}: event_json");
                assert_eq!(payload.event_utf8_bytes, want.2, "{at}: event_utf8_bytes");
                assert_eq!(payload.navigation_json, want.3, "{at}: navigation_json");
                assert_eq!(payload.event_zstd, want.1, "{at}: event_zstd bytes");
                assert_eq!(
                    rows::event_created_at(&value).map(|f| f as i64),
                    Some(want.4),
                    "{at}: created_at"
                );
                compressed += usize::from(want.1.is_some());
                type Ident = (String, Option<String>, Option<String>, Option<String>);
                let ident: Option<Ident> = db
                    .query_row(
                        "SELECT event_id, event_type, parent_id, message_idempotency_key FROM transcript_event_identities WHERE session_id=?1 AND seq=?2",
                        rusqlite::params![sid, seq as i64],
                        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
                    )
                    .optional()
                    .unwrap();
                let mine = rows::event_identity(&value).map(|i| {
                    (
                        i.event_id,
                        i.event_type,
                        i.parent_id,
                        i.message_idempotency_key,
                    )
                });
                assert_eq!(mine, ident, "{at}: identity");
                compared += 1;
            }
        }
    }
    assert!(compared > 50, "compared {compared} lines");
    assert!(compressed > 0, "no compressed row in the fixture");
}
