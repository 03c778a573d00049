//! Transcript events of the agent database: one row of `transcript_events` per JSONL line
//! of the legacy transcript, in `seq` order (seq 0 the header).
//!
//! A row holds its line either as `event_json` (TEXT) or as `event_zstd` (a zstd frame of
//! the UTF-8 bytes, `event_utf8_bytes` long): the gateway compresses events of 1 KiB and
//! more that shrink by 10 %. Every reader selects both columns and decodes through
//! [`decode_event`]; a reader that selected `event_json` alone would silently drop every
//! compressed row.
//!
//! The transcript readers of this toolkit read files, so a database transcript is handed
//! to them as a private copy ([`materialize`]): the decoded lines, in seq order, in a
//! 0600 file of a 0700 directory of `$TMPDIR` that is removed when the process exits.

use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use rusqlite::params;

use super::{AgentDb, AgentDbError};
use crate::data_file::DataPath;

/// The largest decoded event the schema allows (`event_utf8_bytes` ≤ 4 MiB).
pub const MAX_EVENT_BYTES: usize = 4 * 1024 * 1024;

/// One stored row, as read.
#[derive(Debug, Clone)]
pub struct StoredEvent {
    /// `seq`.
    pub seq: i64,
    /// `event_json`.
    pub json: Option<String>,
    /// `event_zstd`.
    pub zstd: Option<Vec<u8>>,
    /// `event_utf8_bytes`.
    pub utf8_bytes: Option<i64>,
}

impl StoredEvent {
    /// The bytes the row occupies as stored (the text or the compressed blob).
    pub fn stored_len(&self) -> usize {
        self.json.as_ref().map_or(0, String::len) + self.zstd.as_ref().map_or(0, Vec::len)
    }
}

/// Decodes one row into its JSONL line: `event_json` as is, or `event_zstd`
/// decompressed (bounded by the schema's 4 MiB) and checked against `event_utf8_bytes`.
pub fn decode_event(e: &StoredEvent) -> Result<String, String> {
    match (&e.json, &e.zstd) {
        (Some(j), None) => Ok(j.clone()),
        (None, Some(z)) => {
            let bytes = zstd::bulk::decompress(z, MAX_EVENT_BYTES)
                .map_err(|err| format!("seq {}: event_zstd does not decode: {err}", e.seq))?;
            if let Some(n) = e.utf8_bytes {
                if n as usize != bytes.len() {
                    return Err(format!(
                        "seq {}: event_zstd decodes to {} bytes, event_utf8_bytes says {n}",
                        e.seq,
                        bytes.len()
                    ));
                }
            }
            String::from_utf8(bytes).map_err(|_| {
                format!(
                    "seq {}: event_zstd decodes to bytes that are not UTF-8",
                    e.seq
                )
            })
        }
        (Some(_), Some(_)) => Err(format!(
            "seq {}: both event_json and event_zstd are set",
            e.seq
        )),
        (None, None) => Err(format!(
            "seq {}: neither event_json nor event_zstd is set",
            e.seq
        )),
    }
}

/// Calls `f` with every stored row of `session_id`, in seq order.
pub fn for_each_stored(
    db: &AgentDb,
    session_id: &str,
    f: impl FnMut(StoredEvent) -> Result<(), AgentDbError>,
) -> Result<(), AgentDbError> {
    for_each_stored_from(db, session_id, i64::MIN, f)
}

/// [`for_each_stored`] from seq `from` on.
pub fn for_each_stored_from(
    db: &AgentDb,
    session_id: &str,
    from: i64,
    mut f: impl FnMut(StoredEvent) -> Result<(), AgentDbError>,
) -> Result<(), AgentDbError> {
    let mut st = db
        .conn
        .prepare_cached(
            "SELECT seq, event_json, event_zstd, event_utf8_bytes FROM transcript_events WHERE session_id = ?1 AND seq >= ?2 ORDER BY seq",
        )
        .map_err(|e| db.err(e))?;
    let mut rows = st.query(params![session_id, from]).map_err(|e| db.err(e))?;
    while let Some(r) = rows.next().map_err(|e| db.err(e))? {
        let ev = StoredEvent {
            seq: r.get(0).map_err(|e| db.err(e))?,
            json: r.get(1).map_err(|e| db.err(e))?,
            zstd: r.get(2).map_err(|e| db.err(e))?,
            utf8_bytes: r.get(3).map_err(|e| db.err(e))?,
        };
        f(ev)?;
    }
    Ok(())
}

/// The decoded lines of `session_id`'s transcript, in seq order; a row that does not
/// decode is an error naming it.
pub fn lines(db: &AgentDb, session_id: &str) -> Result<Vec<String>, AgentDbError> {
    let mut out = Vec::new();
    for_each_stored(db, session_id, |ev| {
        let line = decode_event(&ev).map_err(|what| AgentDbError::BadRow {
            path: db.path.clone(),
            what: format!("transcript_events {session_id:?} {what}"),
        })?;
        out.push(line);
        Ok(())
    })?;
    Ok(out)
}

/// Whether `session_id` has any transcript row.
pub fn has_events(db: &AgentDb, session_id: &str) -> Result<bool, AgentDbError> {
    db.conn
        .query_row(
            "SELECT EXISTS (SELECT 1 FROM transcript_events WHERE session_id = ?1)",
            params![session_id],
            |r| r.get::<_, bool>(0),
        )
        .map_err(|e| db.err(e))
}

static SCRATCH: OnceLock<Mutex<Vec<PathBuf>>> = OnceLock::new();

/// Removes the private copies this process made (called by
/// [`crate::process::exit_now`], and at a normal exit).
pub fn remove_scratch() {
    if let Some(d) = SCRATCH.get() {
        if let Ok(mut dirs) = d.lock() {
            for p in dirs.drain(..) {
                let _ = std::fs::remove_dir_all(p);
            }
        }
    }
}

fn scratch_dirs() -> &'static Mutex<Vec<PathBuf>> {
    SCRATCH.get_or_init(|| {
        extern "C" fn at_exit() {
            remove_scratch();
        }
        // SAFETY: registers a plain function with no captured state, once.
        unsafe {
            libc::atexit(at_exit);
        }
        Mutex::new(Vec::new())
    })
}

/// The process's private 0700 scratch directory (removed at exit), made on first use.
pub(crate) fn scratch_dir() -> std::io::Result<PathBuf> {
    let dirs = scratch_dirs();
    let mut g = dirs.lock().map_err(|_| std::io::Error::other("poisoned"))?;
    if let Some(d) = g.first() {
        return Ok(d.clone());
    }
    let d = std::env::temp_dir().join(format!(
        "clawstate-db-{}-{}",
        std::process::id(),
        uuid::Uuid::new_v4().simple()
    ));
    std::fs::DirBuilder::new().mode(0o700).create(&d)?;
    g.push(d.clone());
    Ok(d)
}

/// How much of a transcript a reader needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CopyScope {
    /// Every event.
    Whole,
    /// Enough of the end for a reader that looks only at the last this many bytes: the
    /// copy's last bytes are then the whole transcript's, byte for byte.
    Tail(u64),
}

/// The first seq a [`CopyScope::Tail`] copy needs: rows from the end until more than
/// `bytes` are covered, plus one whole row before them (so a window of the last `bytes`
/// starts inside a row, as it does in the whole file).
fn tail_start(db: &AgentDb, session_id: &str, bytes: u64) -> Result<i64, AgentDbError> {
    let mut st = db
        .conn
        .prepare_cached(
            "SELECT seq, coalesce(event_utf8_bytes, length(CAST(event_json AS BLOB))) FROM transcript_events WHERE session_id = ?1 ORDER BY seq DESC",
        )
        .map_err(|e| db.err(e))?;
    let mut rows = st.query(params![session_id]).map_err(|e| db.err(e))?;
    let mut covered: u64 = 0;
    let mut start = 0;
    let mut extra = false;
    while let Some(r) = rows.next().map_err(|e| db.err(e))? {
        let seq: i64 = r.get(0).map_err(|e| db.err(e))?;
        let len: Option<i64> = r.get(1).map_err(|e| db.err(e))?;
        start = seq;
        if extra {
            return Ok(seq);
        }
        covered += len.unwrap_or(0).max(0) as u64 + 1;
        if covered > bytes {
            extra = true;
        }
    }
    Ok(start.min(0))
}

/// Writes `session_id`'s decoded transcript to a private file and returns it as a
/// [`DataPath`] for the file readers (`None` when the session has no row at all).
pub fn materialize(db: &AgentDb, session_id: &str) -> Result<Option<DataPath>, AgentDbError> {
    materialize_scoped(db, session_id, CopyScope::Whole)
}

/// [`materialize`], of only as much as `scope` says.
pub fn materialize_scoped(
    db: &AgentDb,
    session_id: &str,
    scope: CopyScope,
) -> Result<Option<DataPath>, AgentDbError> {
    if !has_events(db, session_id)? {
        return Ok(None);
    }
    let from = match scope {
        CopyScope::Whole => i64::MIN,
        CopyScope::Tail(bytes) => tail_start(db, session_id, bytes)?,
    };
    let io = |e: std::io::Error| AgentDbError::BadRow {
        path: db.path.clone(),
        what: format!("cannot copy the transcript of {session_id:?} to a scratch file: {e}"),
    };
    let dir = scratch_dir().map_err(io)?;
    let name = format!("{}.jsonl", uuid::Uuid::new_v4().simple());
    let path = dir.join(&name);
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)
        .map_err(io)?;
    let mut w = std::io::BufWriter::with_capacity(1 << 16, file);
    let mut failed = None;
    for_each_stored_from(db, session_id, from, |ev| {
        match decode_event(&ev) {
            Ok(line) => {
                w.write_all(line.as_bytes()).map_err(io)?;
                w.write_all(b"\n").map_err(io)?;
            }
            Err(what) => {
                failed.get_or_insert(what);
            }
        }
        Ok(())
    })?;
    w.flush().map_err(io)?;
    if let Some(what) = failed {
        return Err(AgentDbError::BadRow {
            path: db.path.clone(),
            what: format!("transcript_events {session_id:?} {what} (`claw-transcript check` lists every such row)"),
        });
    }
    DataPath::beneath(&dir, Path::new(&name))
        .map(Some)
        .map_err(|e| io(std::io::Error::other(e.to_string())))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn db_with_rows() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.sqlite");
        let c = super::super::testdb::create(&p, 23);
        let big = format!(
            r#"{{"type":"message","id":"m2","parentId":"m1","message":{{"role":"assistant","content":[{{"type":"text","text":"{}"}}]}}}}"#,
            "é".repeat(2000)
        );
        let z = zstd::bulk::compress(big.as_bytes(), 1).unwrap();
        c.execute_batch(r#"INSERT INTO transcript_events VALUES ('s',0,'{"type":"session","id":"s"}',0,NULL,27,NULL);
            INSERT INTO transcript_events VALUES ('s',1,'{"type":"message","id":"m1","parentId":null,"message":{"role":"user","content":"hi"}}',0,NULL,NULL,NULL);"#).unwrap();
        c.execute(
            "INSERT INTO transcript_events VALUES ('s',2,NULL,0,?1,?2,'{}')",
            params![z, big.len() as i64],
        )
        .unwrap();
        (dir, p)
    }

    /// A reader that selected `event_json` alone would see two rows here, not three.
    #[test]
    fn a_compressed_row_is_not_lost() {
        let (_d, p) = db_with_rows();
        let db = AgentDb::open(&p).unwrap();
        let l = lines(&db, "s").unwrap();
        assert_eq!(l.len(), 3);
        assert!(l[2].contains("éé") && l[2].starts_with(r#"{"type":"message","id":"m2""#));
        let f = materialize(&db, "s").unwrap().unwrap();
        let text = std::fs::read_to_string(f.path()).unwrap();
        assert_eq!(text.lines().count(), 3);
        assert_eq!(text.lines().nth(2).unwrap(), l[2]);
    }

    #[test]
    fn a_tail_copy_ends_as_the_whole_transcript() {
        let (_d, p) = db_with_rows();
        let db = AgentDb::open(&p).unwrap();
        let whole = std::fs::read(materialize(&db, "s").unwrap().unwrap().path()).unwrap();
        for bytes in [1u64, 50, 100, 1 << 20] {
            let t = materialize_scoped(&db, "s", CopyScope::Tail(bytes))
                .unwrap()
                .unwrap();
            let tail = std::fs::read(t.path()).unwrap();
            assert!(whole.ends_with(&tail));
            // More than `bytes` and a whole row before them, or everything.
            assert!(tail.len() as u64 > bytes || tail == whole, "{bytes}");
        }
        let small = materialize_scoped(&db, "s", CopyScope::Tail(10))
            .unwrap()
            .unwrap();
        // The last row is > 10 bytes: it and one row before it.
        assert_eq!(
            std::fs::read_to_string(small.path())
                .unwrap()
                .lines()
                .count(),
            2
        );
    }

    #[test]
    fn a_torn_blob_or_wrong_size_is_named() {
        let e = StoredEvent {
            seq: 7,
            json: None,
            zstd: Some(vec![0x28, 0xb5, 0x2f, 0xfd, 1, 2]),
            utf8_bytes: Some(10),
        };
        assert!(decode_event(&e)
            .unwrap_err()
            .starts_with("seq 7: event_zstd does not decode"));
        let z = zstd::bulk::compress(b"{\"a\":1}", 1).unwrap();
        let e = StoredEvent {
            seq: 8,
            json: None,
            zstd: Some(z),
            utf8_bytes: Some(99),
        };
        assert!(decode_event(&e)
            .unwrap_err()
            .contains("event_utf8_bytes says 99"));
    }
}
