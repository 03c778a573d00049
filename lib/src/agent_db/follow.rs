//! `tail --follow` on the agent database: a private mirror of one session's transcript
//! that grows as the gateway appends `transcript_events` rows.
//!
//! The transcript readers (and the file follower that numbers appended rows exactly as a
//! whole read numbers them) work on files, so a database transcript is followed through a
//! mirror: the decoded lines in seq order, in a 0600 file of the process's 0700 scratch
//! directory, written from one read snapshot together with the last seq it holds. Later
//! rows (`seq` above it) are decoded and appended to it as they commit; the file follower
//! then reads them as it reads a growing JSONL file, so what is printed for a line is what
//! `tail` prints for it.
//!
//! Followed by its session key ([`TranscriptMirror::open_key`]), the mirror notices a reset
//! (`session_nodes.current_session_id` moved to a new window) and continues on the new
//! session: its file is replaced, as a rotated transcript file is, so the file follower
//! reads the new session from its start.
//!
//! No busy loop: the mirror sleeps on change notifications of the database's directory (the
//! WAL is written on every commit; [`crate::fs::change_waiter::ChangeWaiter`], a bounded poll
//! where inotify is not used) and asks SQLite only whether the database changed
//! (`PRAGMA data_version`, which moves on other connections' commits and not on
//! checkpoints) before it looks for rows.

use std::fs::File;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::OptionalExtension;
use thiserror::Error;

use super::events::{decode_event, for_each_stored_from};
use super::{AgentDb, AgentDbError};
use crate::exit::{self, ExitCode};
use crate::fs::change_waiter::ChangeWaiter;
use crate::fs::data_file::DataPath;

/// Why following a database transcript failed.
#[derive(Debug, Error)]
pub enum MirrorError {
    /// Reading the database failed (or a row does not decode).
    #[error(transparent)]
    Db(#[from] AgentDbError),
    /// Writing the mirror failed.
    #[error("{path}: cannot write the transcript mirror: {source}")]
    Io {
        /// The mirror file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// The change notification could not be set up or failed.
    #[error("{0}")]
    Watch(String),
}

impl ExitCode for MirrorError {
    fn exit_code(&self) -> i32 {
        match self {
            MirrorError::Db(e) => e.exit_code(),
            MirrorError::Io { .. } => exit::CANT_CREATE,
            MirrorError::Watch(_) => exit::FAILURE,
        }
    }
}

/// One session's transcript, mirrored from the agent database into a private file.
pub struct TranscriptMirror {
    db: AgentDb,
    session_id: String,
    /// The session key whose current session is followed across resets (`None`: only
    /// `session_id`).
    session_key: Option<String>,
    /// A reset noticed since [`TranscriptMirror::take_reset`] was last asked: the new id.
    reset_to: Option<String>,
    file: File,
    dir: PathBuf,
    name: String,
    path: DataPath,
    last_seq: Option<i64>,
    data_version: i64,
    waiter: ChangeWaiter,
}

/// A new 0600 file in `dir`, created exclusively, for appending.
fn create_private(dir: &Path, name: &str) -> Result<File, MirrorError> {
    let full = dir.join(name);
    std::fs::OpenOptions::new()
        .append(true)
        .create_new(true)
        .mode(0o600)
        .open(&full)
        .map_err(|source| MirrorError::Io { path: full, source })
}

fn mirror_name() -> String {
    format!("{}.jsonl", uuid::Uuid::new_v4().simple())
}

impl TranscriptMirror {
    /// Mirrors `session_id`'s rows of the database at `db_path` as they are now (one read
    /// snapshot), ready to follow.
    pub fn open(db_path: &Path, session_id: &str) -> Result<TranscriptMirror, MirrorError> {
        TranscriptMirror::open_session(db_path, session_id, None)
    }

    /// [`TranscriptMirror::open`] for the session of `session_key`, followed across resets:
    /// when `session_nodes.current_session_id` moves to a new session, the mirror is
    /// replaced by one of the new session's rows (the file follower sees its file
    /// replaced and reads it from its start), and [`TranscriptMirror::take_reset`] says so.
    pub fn open_key(
        db_path: &Path,
        session_key: &str,
        session_id: &str,
    ) -> Result<TranscriptMirror, MirrorError> {
        TranscriptMirror::open_session(db_path, session_id, Some(session_key))
    }

    fn open_session(
        db_path: &Path,
        session_id: &str,
        session_key: Option<&str>,
    ) -> Result<TranscriptMirror, MirrorError> {
        let db = AgentDb::open(db_path)?;
        let waiter = ChangeWaiter::new(db_path).map_err(|e| MirrorError::Watch(e.to_string()))?;
        let dir = crate::fs::scratch_dir::dir().map_err(|source| MirrorError::Io {
            path: std::env::temp_dir(),
            source,
        })?;
        let name = mirror_name();
        let file = create_private(&dir, &name)?;
        let path = DataPath::beneath(&dir, Path::new(&name)).map_err(|e| MirrorError::Io {
            path: dir.join(&name),
            source: std::io::Error::other(e.to_string()),
        })?;
        let mut m = TranscriptMirror {
            db,
            session_id: session_id.to_string(),
            session_key: session_key.map(str::to_string),
            reset_to: None,
            file,
            dir,
            name,
            path,
            last_seq: None,
            data_version: 0,
            waiter,
        };
        // A key whose current session is another (an older window named by its id) is
        // not followed across resets: the window asked for is.
        if m.reset_target()?.is_some() {
            m.session_key = None;
        }
        m.data_version = m.current_data_version()?;
        m.append_new()?;
        Ok(m)
    }

    /// The new session id when the followed key was reset since the last call.
    pub fn take_reset(&mut self) -> Option<String> {
        self.reset_to.take()
    }

    /// The followed key's current session, when it is not the mirrored one.
    fn reset_target(&self) -> Result<Option<String>, MirrorError> {
        let Some(key) = &self.session_key else {
            return Ok(None);
        };
        let current: Option<String> = self
            .db
            .conn
            .query_row(
                "SELECT current_session_id FROM session_nodes WHERE session_key = ?1",
                [key],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| self.db.err(e))?;
        Ok(current.filter(|c| *c != self.session_id))
    }

    /// Replaces the mirror by an empty one for `session_id` (a new file renamed over it),
    /// so that the next rows appended are the new session's from its start.
    fn switch_to(&mut self, session_id: String) -> Result<(), MirrorError> {
        let fresh = mirror_name();
        let file = create_private(&self.dir, &fresh)?;
        let (from, to) = (self.dir.join(&fresh), self.dir.join(&self.name));
        std::fs::rename(&from, &to).map_err(|source| MirrorError::Io {
            path: to.clone(),
            source,
        })?;
        self.file = file;
        self.session_id = session_id.clone();
        self.last_seq = None;
        self.reset_to = Some(session_id);
        Ok(())
    }

    /// The mirror file (for the file readers and the file follower).
    pub fn path(&self) -> &DataPath {
        &self.path
    }

    /// The last seq the mirror holds (`None`: no row yet).
    pub fn last_seq(&self) -> Option<i64> {
        self.last_seq
    }

    /// Sleeps until the database may have changed or `timeout` passed, then appends the
    /// rows committed since the last look; returns how many.
    pub fn wait_and_pull(&mut self, timeout: Duration) -> Result<usize, MirrorError> {
        self.waiter
            .wait(timeout)
            .map_err(|e| MirrorError::Watch(e.to_string()))?;
        self.pull()
    }

    /// Appends the rows committed since the last look (none when `data_version` says
    /// nothing changed); returns how many.
    pub fn pull(&mut self) -> Result<usize, MirrorError> {
        let v = self.current_data_version()?;
        if v == self.data_version {
            return Ok(0);
        }
        self.data_version = v;
        // The old session's rows up to now first, then the new session's, from its start.
        let mut count = self.append_new()?;
        if let Some(next) = self.reset_target()? {
            self.switch_to(next)?;
            count += self.append_new()?;
        }
        Ok(count)
    }

    fn current_data_version(&self) -> Result<i64, MirrorError> {
        Ok(self
            .db
            .conn
            .query_row("PRAGMA data_version", [], |r| r.get(0))
            .map_err(|e| self.db.err(e))?)
    }

    /// Decodes and appends every row above `last_seq`, from one read snapshot; a row that
    /// does not decode is an error naming it (nothing of it is written).
    fn append_new(&mut self) -> Result<usize, MirrorError> {
        let from = self.last_seq.map_or(i64::MIN, |s| s.saturating_add(1));
        let tx = self
            .db
            .conn
            .unchecked_transaction()
            .map_err(|e| self.db.err(e))?;
        // The snapshot starts at the first read: rows and the check agree.
        let any: Option<i64> = tx
            .query_row(
                "SELECT max(seq) FROM transcript_events WHERE session_id = ?1",
                [&self.session_id],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| self.db.err(e))?
            .flatten();
        if any.is_none() || any.zip(self.last_seq).is_some_and(|(a, l)| a <= l) {
            return Ok(0);
        }
        let mut buf = Vec::new();
        let mut last = self.last_seq;
        let mut count = 0;
        let (db, sid) = (&self.db, self.session_id.clone());
        for_each_stored_from(db, &sid, from, |ev| {
            let line = decode_event(&ev).map_err(|what| AgentDbError::BadRow {
                path: db.path.clone(),
                what: format!("transcript_events {sid:?} {what}"),
            })?;
            buf.extend_from_slice(line.as_bytes());
            buf.push(b'\n');
            last = Some(ev.seq);
            count += 1;
            Ok(())
        })?;
        drop(tx);
        let io = |source| MirrorError::Io {
            path: self.path.path().to_path_buf(),
            source,
        };
        self.file.write_all(&buf).map_err(io)?;
        self.file.flush().map_err(io)?;
        self.last_seq = last;
        Ok(count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rusqlite::params;

    fn insert(c: &rusqlite::Connection, seq: i64, line: &str) {
        c.execute(
            "INSERT INTO transcript_events VALUES ('s', ?1, ?2, 0, NULL, NULL, NULL)",
            params![seq, line],
        )
        .unwrap();
    }

    #[test]
    fn appends_rows_committed_after_it_opened_and_compressed_ones_decoded() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.sqlite");
        let c = super::super::testdb::create(&p, 23);
        insert(&c, 0, r#"{"type":"session","id":"s"}"#);
        let mut m = TranscriptMirror::open(&p, "s").unwrap();
        assert_eq!(m.last_seq(), Some(0));
        assert_eq!(m.pull().unwrap(), 0, "nothing committed since");
        insert(&c, 1, r#"{"type":"message","id":"m1"}"#);
        let big = format!(
            r#"{{"type":"message","id":"m2","x":"{}"}}"#,
            "é".repeat(900)
        );
        let z = zstd::bulk::compress(big.as_bytes(), 1).unwrap();
        c.execute(
            "INSERT INTO transcript_events VALUES ('s', 2, NULL, 0, ?1, ?2, NULL)",
            params![z, big.len() as i64],
        )
        .unwrap();
        assert_eq!(m.wait_and_pull(Duration::from_secs(5)).unwrap(), 2);
        let text = std::fs::read_to_string(m.path().path()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3);
        assert_eq!(lines[2], big);
        assert_eq!(m.last_seq(), Some(2));
    }
}
