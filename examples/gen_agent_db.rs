//! Generates benchmark state dirs of the 2026.8+ layout (bench/agent_db.py): an agent DB of
//! N sessions and one session of M events, built from a real 2026.9.6 agent DB (its schema,
//! emptied), and the same sessions as a 2026.7 files layout beside it.
//!
//! `cargo run --release --example gen_agent_db -- TEMPLATE.sqlite OUTDIR SESSIONS EVENTS`
//! writes `OUTDIR/db/.openclaw/...` and `OUTDIR/files/.openclaw/...`.

use std::io::Write;
use std::path::Path;

use rusqlite::{params, Connection};
use serde_json::json;

fn line(i: usize, parent: &str, id: &str) -> String {
    let t = 1_790_000_000_000i64 + i as i64 * 1000;
    let ts = format!("2026-09-{:02}T00:00:00.000Z", 1 + (i / 86_400) % 28);
    match i % 4 {
        0 => json!({"type":"message","id":id,"parentId":parent,"timestamp":ts,
            "message":{"role":"user","content":[{"type":"text","text":format!("question {i}: what is in the directory?")}],"timestamp":t}}),
        1 => json!({"type":"message","id":id,"parentId":parent,"timestamp":ts,
            "message":{"role":"assistant","content":[{"type":"text","text":"Let me look."},{"type":"toolCall","id":format!("call_{i}"),"name":"exec","arguments":{"command":"ls -la"}}],
              "api":"openai-responses","provider":"openai","model":"gpt-5.5","usage":{"input":100,"output":20,"totalTokens":120},"stopReason":"toolUse","timestamp":t}}),
        2 => json!({"type":"message","id":id,"parentId":parent,"timestamp":ts,
            "message":{"role":"toolResult","toolCallId":format!("call_{}", i - 1),"toolName":"exec","content":[{"type":"text","text":"drwxr-xr-x 2 u u 4096 file\n".repeat(1 + i % 40)}],"isError":false,"timestamp":t}}),
        _ => json!({"type":"message","id":id,"parentId":parent,"timestamp":ts,
            "message":{"role":"assistant","content":[{"type":"text","text":format!("There are {} files.", i % 40)}],"api":"openai-responses","provider":"openai","model":"gpt-5.5","usage":{"input":200,"output":10,"totalTokens":210},"stopReason":"stop","timestamp":t}}),
    }
    .to_string()
}

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let (template, out) = (Path::new(&a[1]), Path::new(&a[2]));
    let sessions: usize = a[3].parse().unwrap();
    let events: usize = a[4].parse().unwrap();
    let db_dir = out.join("db/.openclaw/agents/main/agent");
    let files_dir = out.join("files/.openclaw/agents/main/sessions");
    std::fs::create_dir_all(&db_dir).unwrap();
    std::fs::create_dir_all(&files_dir).unwrap();
    std::fs::create_dir_all(out.join("db/.openclaw/agents/main/sessions")).unwrap();
    let db_path = db_dir.join("openclaw-agent.sqlite");
    let _ = std::fs::remove_file(&db_path);
    Connection::open(template)
        .unwrap()
        .execute("VACUUM INTO ?1", params![db_path.to_string_lossy()])
        .unwrap();
    let mut c = Connection::open(&db_path).unwrap();
    c.pragma_update(None, "foreign_keys", true).unwrap();
    c.pragma_update(None, "journal_mode", "wal").unwrap();
    c.execute_batch(
        "DELETE FROM session_nodes; DELETE FROM session_windows; DELETE FROM transcript_events;
         DELETE FROM transcript_event_identities; DELETE FROM session_transcript_fts_rows;
         DELETE FROM session_transcript_index_state; DELETE FROM session_canonical_validation_pending;",
    )
    .unwrap();
    let tx = c.transaction().unwrap();
    let mut store =
        std::io::BufWriter::new(std::fs::File::create(files_dir.join("sessions.json")).unwrap());
    store.write_all(b"{").unwrap();
    let big_sid = "00000000-0000-4000-8000-000000000001";
    {
        let mut node = tx
            .prepare("INSERT INTO session_nodes (session_key, current_session_id, entry_json, updated_at) VALUES (?1, ?2, ?3, ?4)")
            .unwrap();
        let mut win = tx
            .prepare("INSERT INTO session_windows (session_id, session_key, reason, created_at, updated_at) VALUES (?1, ?2, 'initial', ?3, ?3)")
            .unwrap();
        let mut hdr = tx
            .prepare("INSERT INTO transcript_events (session_id, seq, event_json, created_at, event_utf8_bytes) VALUES (?1, 0, ?2, ?3, ?4)")
            .unwrap();
        for i in 0..sessions {
            let key = if i == 0 {
                "agent:main:main".to_string()
            } else {
                format!("agent:main:telegram:group:-100{i}")
            };
            let sid = if i == 0 {
                big_sid.to_string()
            } else {
                format!("{:08x}-0000-4000-8000-{:012x}", i, i)
            };
            let updated = 1_790_000_000_000i64 + (i as i64 * 7919) % 100_000_000;
            let entry = json!({"sessionId":sid,"updatedAt":updated,"chatType":"group","label":format!("group {i}"),
                "inputTokens":1000,"outputTokens":200,"totalTokens":1200,"totalTokensFresh":true,"totalTokensVersion":1,
                "modelProvider":"openai","model":"gpt-5.5","thinkingLevel":"low"})
            .to_string();
            node.execute(params![key, sid, entry, updated]).unwrap();
            win.execute(params![sid, key, updated]).unwrap();
            let h = json!({"type":"session","version":3,"id":sid,"timestamp":"2026-09-01T00:00:00.000Z","cwd":"/tmp"}).to_string();
            hdr.execute(params![sid, h, updated, h.len() as i64])
                .unwrap();
            store
                .write_all(
                    format!(
                        "{}\n  {}: {}",
                        if i > 0 { "," } else { "" },
                        json!(key),
                        entry
                    )
                    .as_bytes(),
                )
                .unwrap();
        }
    }
    store.write_all(b"\n}").unwrap();
    // The big session, also as a JSONL file of the same lines.
    let mut jsonl = std::io::BufWriter::new(
        std::fs::File::create(files_dir.join(format!("{big_sid}.jsonl"))).unwrap(),
    );
    let header = json!({"type":"session","version":3,"id":big_sid,"timestamp":"2026-09-01T00:00:00.000Z","cwd":"/tmp"}).to_string();
    writeln!(jsonl, "{header}").unwrap();
    {
        let mut ev = tx
            .prepare("INSERT INTO transcript_events (session_id, seq, event_json, created_at, event_zstd, event_utf8_bytes, navigation_json) VALUES (?1, ?2, ?3, 0, ?4, ?5, ?6)")
            .unwrap();
        let mut parent = String::new();
        for i in 1..events {
            let id = format!("{:08x}", i);
            let l = line(i, &parent, &id);
            writeln!(jsonl, "{l}").unwrap();
            // As the gateway stores them: >= 1 KiB, no \u escape, >= 10 % smaller.
            let z = (l.len() >= 1024 && !l.contains("\\u"))
                .then(|| zstd::bulk::compress(l.as_bytes(), 1).unwrap())
                .filter(|z| z.len() * 10 <= l.len() * 9);
            match z {
                Some(z) => {
                    let n = l.len() as i64;
                    let nav = json!({"version":1,"report":{"kind":"canonical"},"navigation":{},"reset":{},"model":{},
                        "modelBytes":n,"modelWithoutCheckpointBytes":n,"withoutCustomDataBytes":n}).to_string();
                    ev.execute(params![big_sid, i as i64, None::<String>, z, n, nav])
                        .unwrap();
                }
                None => {
                    ev.execute(params![
                        big_sid,
                        i as i64,
                        l,
                        None::<Vec<u8>>,
                        l.len() as i64,
                        None::<String>
                    ])
                    .unwrap();
                }
            }
            parent = id;
        }
    }
    // As the gateway leaves rows it has validated.
    tx.execute_batch(
        "UPDATE session_nodes SET entry_valid = 1; DELETE FROM session_canonical_validation_pending;",
    )
    .unwrap();
    tx.commit().unwrap();
    c.execute_batch("PRAGMA wal_checkpoint(TRUNCATE)").unwrap();
    std::fs::write(
        out.join("db/.openclaw/openclaw.json"),
        r#"{"agents":{"list":[{"id":"main","default":true}]}}"#,
    )
    .unwrap();
    std::fs::write(
        out.join("files/.openclaw/openclaw.json"),
        r#"{"agents":{"list":[{"id":"main","default":true}]}}"#,
    )
    .unwrap();
}
