//! Where the bytes of an agent database are (`claw-sessions du`): per session and per
//! agent, events and their bytes as stored and decoded, the largest events, inline
//! base64 images, transcript archives, and the WAL's and the FTS index's share.
//!
//! This answers "why is my database 4 GB" (`agent-db.md`: WALs grown by base64 images,
//! retention that never prunes). Table sizes come from SQLite's `dbstat` (pages in use per
//! table and index); event sizes from the rows themselves, every event decoded once.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};

use super::events::{decode_event, StoredEvent};
use super::{AgentDb, AgentDbError};

/// What one session (sessionId) holds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionUsage {
    /// The session key (from `session_windows`, else `session_nodes`).
    pub key: Option<String>,
    /// The sessionId.
    pub session_id: String,
    /// Whether it is the key's current session.
    pub current: bool,
    /// Rows in `transcript_events`.
    pub events: u64,
    /// Of those, stored compressed.
    pub compressed: u64,
    /// Bytes as stored (`event_json` text or `event_zstd` blob).
    pub stored_bytes: u64,
    /// Bytes decoded (the JSONL lines without newlines).
    pub decoded_bytes: u64,
    /// Inline base64 images (`{"type":"image","data":…}` blocks).
    pub images: u64,
    /// Their base64 bytes.
    pub image_bytes: u64,
}

/// One large event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LargeEvent {
    /// The sessionId.
    pub session_id: String,
    /// Its seq.
    pub seq: i64,
    /// Decoded bytes.
    pub decoded_bytes: u64,
    /// Stored bytes.
    pub stored_bytes: u64,
    /// `type` (and `message.role`).
    pub kind: String,
}

/// The usage of one agent database.
#[derive(Debug, Clone)]
pub struct DbUsage {
    /// The database.
    pub path: PathBuf,
    /// The file's size.
    pub file_bytes: u64,
    /// The `-wal` file's size.
    pub wal_bytes: u64,
    /// Free pages × page size.
    pub free_bytes: u64,
    /// Pages in use per table or index (`dbstat`), largest first.
    pub tables: Vec<(String, u64)>,
    /// The FTS index's tables (`session_transcript_fts*`), summed.
    pub fts_bytes: u64,
    /// Per session, largest decoded first.
    pub sessions: Vec<SessionUsage>,
    /// The largest events, largest first.
    pub largest: Vec<LargeEvent>,
    /// `session_transcript_archives`: rows and blob bytes.
    pub archives: (u64, u64),
    /// `session_transcript_cold_archives` stored in SQLite: rows and blob bytes.
    pub cold_archives: (u64, u64),
    /// `.zst` archive files in the agent's sessions directory: count and bytes.
    pub archive_files: (u64, u64),
}

impl DbUsage {
    /// The sum over sessions.
    pub fn total(&self) -> SessionUsage {
        let mut t = SessionUsage::default();
        for s in &self.sessions {
            t.events += s.events;
            t.compressed += s.compressed;
            t.stored_bytes += s.stored_bytes;
            t.decoded_bytes += s.decoded_bytes;
            t.images += s.images;
            t.image_bytes += s.image_bytes;
        }
        t
    }
}

/// Counts the inline images of a decoded event: blocks `{"type":"image","data":"…"}`
/// anywhere in it (message content, tool results).
pub fn inline_images(line: &str) -> (u64, u64) {
    if !line.contains("\"image\"") {
        return (0, 0);
    }
    let Ok(v) = serde_json::from_str::<Value>(line) else {
        return (0, 0);
    };
    fn walk(v: &Value, acc: &mut (u64, u64)) {
        match v {
            Value::Object(m) => {
                if m.get("type").and_then(Value::as_str) == Some("image") {
                    if let Some(Value::String(d)) = m.get("data") {
                        acc.0 += 1;
                        acc.1 += d.len() as u64;
                    }
                }
                for x in m.values() {
                    walk(x, acc);
                }
            }
            Value::Array(a) => a.iter().for_each(|x| walk(x, acc)),
            _ => {}
        }
    }
    let mut acc = (0, 0);
    walk(&v, &mut acc);
    acc
}

fn kind_of(line: &str) -> String {
    let Ok(v) = serde_json::from_str::<Value>(line) else {
        return "?".into();
    };
    let t = v.get("type").and_then(Value::as_str).unwrap_or("?");
    match v
        .get("message")
        .and_then(|m| m.get("role"))
        .and_then(Value::as_str)
    {
        Some(r) => format!("{t}/{r}"),
        None => t.to_string(),
    }
}

/// Measures the agent database at `db_path` (`store_path` names its sessions directory
/// for the archive files); `top` largest events are kept.
pub fn usage(db_path: &Path, store_path: &Path, top: usize) -> Result<DbUsage, AgentDbError> {
    let db = AgentDb::open(db_path)?;
    let sql = |e| db.err(e);
    let size = |p: &Path| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
    let wal = PathBuf::from(format!("{}-wal", db_path.display()));
    let page_size: u64 = db
        .conn
        .query_row("PRAGMA page_size", [], |r| r.get::<_, i64>(0))
        .map_err(sql)? as u64;
    let free: u64 = db
        .conn
        .query_row("PRAGMA freelist_count", [], |r| r.get::<_, i64>(0))
        .map_err(sql)? as u64;
    let mut tables: Vec<(String, u64)> = match db
        .conn
        .prepare("SELECT name, sum(pgsize) FROM dbstat GROUP BY name")
    {
        Ok(mut st) => st
            .query_map([], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)? as u64))
            })
            .map_err(sql)?
            .collect::<Result<_, _>>()
            .map_err(sql)?,
        Err(_) => Vec::new(),
    };
    tables.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let fts_bytes = tables
        .iter()
        .filter(|(n, _)| n.starts_with("session_transcript_fts"))
        .map(|(_, b)| b)
        .sum();

    let keys = string_pairs(&db, "SELECT session_id, session_key FROM session_windows")?;
    let current = string_pairs(
        &db,
        "SELECT current_session_id, session_key FROM session_nodes",
    )?;
    let mut per: BTreeMap<String, SessionUsage> = BTreeMap::new();
    let mut largest: Vec<LargeEvent> = Vec::new();
    let mut st = db
        .conn
        .prepare("SELECT session_id, seq, event_json, event_zstd, event_utf8_bytes FROM transcript_events")
        .map_err(sql)?;
    let mut rows = st.query([]).map_err(sql)?;
    while let Some(r) = rows.next().map_err(sql)? {
        let sid: String = r.get(0).map_err(sql)?;
        let ev = StoredEvent {
            seq: r.get(1).map_err(sql)?,
            json: r.get(2).map_err(sql)?,
            zstd: r.get(3).map_err(sql)?,
            utf8_bytes: r.get(4).map_err(sql)?,
        };
        let stored = ev.stored_len() as u64;
        let decoded = decode_event(&ev).ok();
        let decoded_len = match (&decoded, &ev.json) {
            (_, Some(j)) => j.len() as u64,
            (Some(d), None) => d.len() as u64,
            (None, None) => ev.utf8_bytes.unwrap_or(0).max(0) as u64,
        };
        let u = per.entry(sid.clone()).or_insert_with(|| SessionUsage {
            key: current.get(&sid).or_else(|| keys.get(&sid)).cloned(),
            session_id: sid.clone(),
            current: current.contains_key(&sid),
            ..Default::default()
        });
        u.events += 1;
        u.compressed += u64::from(ev.zstd.is_some());
        u.stored_bytes += stored;
        u.decoded_bytes += decoded_len;
        if let Some(d) = &decoded {
            let (n, b) = inline_images(d);
            u.images += n;
            u.image_bytes += b;
        }
        if top > 0 {
            let small_enough = largest.len() >= top
                && largest
                    .last()
                    .is_some_and(|l| l.decoded_bytes >= decoded_len);
            if !small_enough {
                largest.push(LargeEvent {
                    session_id: sid,
                    seq: ev.seq,
                    decoded_bytes: decoded_len,
                    stored_bytes: stored,
                    kind: decoded
                        .as_deref()
                        .map(kind_of)
                        .unwrap_or_else(|| "undecodable".into()),
                });
                largest.sort_by(|a, b| {
                    b.decoded_bytes
                        .cmp(&a.decoded_bytes)
                        .then(a.session_id.cmp(&b.session_id))
                        .then(a.seq.cmp(&b.seq))
                });
                largest.truncate(top);
            }
        }
    }
    drop(rows);
    drop(st);
    let mut sessions: Vec<SessionUsage> = per.into_values().collect();
    sessions.sort_by(|a, b| {
        b.decoded_bytes
            .cmp(&a.decoded_bytes)
            .then(a.session_id.cmp(&b.session_id))
    });
    let pair = |q: &str| -> (u64, u64) {
        db.conn
            .query_row(q, [], |r| {
                Ok((
                    r.get::<_, i64>(0)? as u64,
                    r.get::<_, Option<i64>>(1)?.unwrap_or(0) as u64,
                ))
            })
            .unwrap_or((0, 0))
    };
    let archives =
        pair("SELECT count(*), sum(length(archive_blob)) FROM session_transcript_archives");
    let cold_archives = pair(
        "SELECT count(*), sum(length(archive_blob)) FROM session_transcript_cold_archives WHERE archive_blob IS NOT NULL",
    );
    let mut archive_files = (0u64, 0u64);
    let sessions_dir = super::layout::legacy_store_for(store_path)
        .parent()
        .map(Path::to_path_buf);
    if let Some(dir) = sessions_dir {
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            if e.file_name().to_string_lossy().ends_with(".zst") {
                if let Ok(m) = e.metadata() {
                    if m.is_file() {
                        archive_files.0 += 1;
                        archive_files.1 += m.len();
                    }
                }
            }
        }
    }
    Ok(DbUsage {
        path: db_path.to_path_buf(),
        file_bytes: size(db_path),
        wal_bytes: size(&wal),
        free_bytes: free * page_size,
        tables,
        fts_bytes,
        sessions,
        largest,
        archives,
        cold_archives,
        archive_files,
    })
}

fn session_json(s: &SessionUsage) -> Value {
    json!({
        "key": s.key,
        "sessionId": s.session_id,
        "current": s.current,
        "events": s.events,
        "compressedEvents": s.compressed,
        "storedBytes": s.stored_bytes,
        "decodedBytes": s.decoded_bytes,
        "images": s.images,
        "imageBytes": s.image_bytes,
    })
}

/// The usage as one JSON object (`claw-sessions du --json`).
pub fn to_json(agent_id: &str, u: &DbUsage) -> Value {
    let t = u.total();
    let mut tables = Map::new();
    for (n, b) in &u.tables {
        tables.insert(n.clone(), json!(b));
    }
    json!({
        "agentId": agent_id,
        "path": u.path.to_string_lossy(),
        "fileBytes": u.file_bytes,
        "walBytes": u.wal_bytes,
        "freeBytes": u.free_bytes,
        "ftsBytes": u.fts_bytes,
        "events": t.events,
        "compressedEvents": t.compressed,
        "storedBytes": t.stored_bytes,
        "decodedBytes": t.decoded_bytes,
        "images": t.images,
        "imageBytes": t.image_bytes,
        "archives": {"rows": u.archives.0, "bytes": u.archives.1},
        "coldArchives": {"rows": u.cold_archives.0, "bytes": u.cold_archives.1},
        "archiveFiles": {"count": u.archive_files.0, "bytes": u.archive_files.1},
        "tables": tables,
        "largest": u.largest.iter().map(|l| json!({
            "sessionId": l.session_id, "seq": l.seq, "decodedBytes": l.decoded_bytes,
            "storedBytes": l.stored_bytes, "kind": l.kind,
        })).collect::<Vec<_>>(),
        "sessions": u.sessions.iter().map(session_json).collect::<Vec<_>>(),
    })
}

fn human(b: u64) -> String {
    const U: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut x = b as f64;
    let mut i = 0;
    while x >= 1024.0 && i < U.len() - 1 {
        x /= 1024.0;
        i += 1;
    }
    if i == 0 {
        format!("{b} B")
    } else {
        format!("{x:.1} {}", U[i])
    }
}

fn pct(part: u64, whole: u64) -> String {
    if whole == 0 {
        "-".into()
    } else {
        format!("{:.0}%", part as f64 * 100.0 / whole as f64)
    }
}

/// A readable report; data (keys) escaped for the terminal.
pub fn render_text(agent_id: &str, u: &DbUsage, rows: usize) -> String {
    use crate::report::terminal_text::escape_line;
    let t = u.total();
    let on_disk = u.file_bytes + u.wal_bytes;
    let mut s = format!(
        "Agent {}: {} ({} + WAL {} = {}; free pages {})\n",
        escape_line(agent_id),
        escape_line(&u.path.to_string_lossy()),
        human(u.file_bytes),
        human(u.wal_bytes),
        human(on_disk),
        human(u.free_bytes)
    );
    s.push_str(&format!(
        "  events {} ({} compressed): stored {}, decoded {}; inline images {} ({}, {} of decoded)\n",
        t.events,
        t.compressed,
        human(t.stored_bytes),
        human(t.decoded_bytes),
        t.images,
        human(t.image_bytes),
        pct(t.image_bytes, t.decoded_bytes)
    ));
    s.push_str(&format!(
        "  WAL {} of the files; FTS index {} ({} of the database)\n",
        pct(u.wal_bytes, on_disk),
        human(u.fts_bytes),
        pct(u.fts_bytes, u.file_bytes)
    ));
    s.push_str(&format!(
        "  archives: {} in the database ({}), {} cold ({}), {} .zst files ({})\n",
        u.archives.0,
        human(u.archives.1),
        u.cold_archives.0,
        human(u.cold_archives.1),
        u.archive_files.0,
        human(u.archive_files.1)
    ));
    s.push_str("  largest tables:\n");
    for (n, b) in u.tables.iter().take(5) {
        s.push_str(&format!("    {:>10}  {}\n", human(*b), escape_line(n)));
    }
    s.push_str("  sessions (largest first):\n");
    for x in u.sessions.iter().take(rows) {
        s.push_str(&format!(
            "    {:>10} decoded {:>10} stored {:>6} events {:>3} images  {} {}\n",
            human(x.decoded_bytes),
            human(x.stored_bytes),
            x.events,
            x.images,
            escape_line(x.key.as_deref().unwrap_or("-")),
            escape_line(&x.session_id),
        ));
    }
    if !u.largest.is_empty() {
        s.push_str("  largest events:\n");
        for l in &u.largest {
            s.push_str(&format!(
                "    {:>10}  {} seq {} ({})\n",
                human(l.decoded_bytes),
                escape_line(&l.session_id),
                l.seq,
                escape_line(&l.kind)
            ));
        }
    }
    s
}

/// The (first column → second column) map of a two-text-column query.
fn string_pairs(db: &AgentDb, query: &str) -> Result<HashMap<String, String>, AgentDbError> {
    let sql = |e| db.err(e);
    let mut st = db.conn.prepare(query).map_err(sql)?;
    let rows = st
        .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))
        .map_err(sql)?;
    rows.map(|r| r.map_err(sql)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn images_are_counted_anywhere_in_an_event() {
        let line = r#"{"type":"message","message":{"role":"toolResult","content":[{"type":"image","data":"QUJD","mimeType":"image/png"},{"type":"text","text":"image"}]}}"#;
        assert_eq!(inline_images(line), (1, 4));
        assert_eq!(inline_images(r#"{"type":"message"}"#), (0, 0));
    }
}
