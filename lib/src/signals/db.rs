//! The shared state database `<stateDir>/state/openclaw.sqlite`: opened exactly as the
//! gateway opens it (signals spec §1.2), created when it is missing in the canonical form of
//! the host's release (schema 15 or 18, [`super::generation`]), gated on the schema version,
//! and written only in `BEGIN IMMEDIATE` transactions.
//!
//! Never a schema the host's gateway cannot open: a database below schema 15 (OpenClaw
//! 2026.7 writes schema 1, with no signal tables) has no signal log, and a missing one on a
//! host without the log is not created. Writers refuse both ([`DbError::NoSignalLog`], exit
//! 65) before they create or open anything; readers see an empty log marked
//! [`StateDb::no_signal_log`]. A schema-1 file whose WAL is empty is recognised from its
//! header alone, so not even a `-wal` or `-shm` file appears next to it.
//!
//! Reads of a missing database see an empty in-memory copy of the signal tables, so a
//! read never creates a file.
//!
//! The file is input, not code clawstate trusts: anyone who can write it can plant
//! triggers, views or cascading foreign keys that SQLite would run inside clawstate's own
//! write transactions (deleting every watch cursor, or spinning a recursive CTE forever).
//! So every connection runs with `trusted_schema = OFF` (schema code may call no function
//! with side effects) and a progress handler that stops any statement after
//! [`QUERY_TIME_LIMIT`]; a writer first checks `sqlite_master` and refuses (exit 65, naming
//! them, changing nothing) any trigger, view, virtual table or foreign key on the tables it
//! touches ([`TOUCHED_TABLES`]) — the canonical schemas 15 and 18 have none. Readers run
//! nothing planted: triggers fire only on writes, and a name clawstate reads must be an
//! ordinary table ([`table_exists`]), so a view in its place is never queried.

use std::fs::{DirBuilder, OpenOptions};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rusqlite::{Connection, ErrorCode, OpenFlags, OptionalExtension, TransactionBehavior};
use sha2::{Digest, Sha256};
use thiserror::Error;

use super::generation::{HostSchema, NoSignalLog, SCHEMA_2026_7, SIGNAL_LOG_SCHEMA};
use crate::exit::{self, ExitCode};

/// The busy timeout every connection uses (`OPENCLAW_SQLITE_BUSY_TIMEOUT_MS`).
pub const BUSY_TIMEOUT_MS: u64 = 5000;
/// The state schema version clawstate creates when nothing says what the host uses
/// (openclaw@2026.8.1's, which every release since opens).
pub const SCHEMA_VERSION: i64 = 15;
/// The oldest state schema clawstate writes to (the first with the signal tables as shipped).
pub const OLDEST_WRITABLE_SCHEMA: i64 = SIGNAL_LOG_SCHEMA;
/// The newest state schema clawstate writes to (openclaw@2026.9.6 adds `watcher_store_path`).
pub const NEWEST_WRITABLE_SCHEMA: i64 = 18;
/// The first state schema whose cursors carry `watcher_store_path` (openclaw@2026.9.6).
pub const STORE_PROVENANCE_SCHEMA: i64 = 18;
/// The `schema_meta.app_version` stamped on a created database: the build whose schema it
/// reproduces exactly, so the gateway takes its fast path and accepts the file as is.
pub const SCHEMA_APP_VERSION: &str = "2026.8.1";
/// The `schema_meta.app_version` stamped on a database created at schema 18.
pub const SCHEMA_V18_APP_VERSION: &str = "2026.9.6";
/// The canonical schema-15 DDL of openclaw@2026.8.1, as observed (see the file's header).
pub const CANONICAL_SCHEMA_SQL: &str = include_str!("schema-v15.sql");
/// The canonical schema-18 DDL of openclaw@2026.9.6, as observed (see the file's header).
pub const CANONICAL_SCHEMA_V18_SQL: &str = include_str!("schema-v18.sql");
/// `PRAGMA journal_size_limit` (64 MiB).
pub const JOURNAL_SIZE_LIMIT: i64 = 64 * 1024 * 1024;
/// `PRAGMA wal_autocheckpoint` (pages).
pub const WAL_AUTOCHECKPOINT: i64 = 1000;

/// The three tables of the signal log (signals spec §1.4).
pub const SIGNAL_TABLES: [&str; 3] = [
    "session_state_events",
    "session_state_heads",
    "session_watch_cursors",
];

/// Every table clawstate reads or writes in the state database: the signal log, the
/// upstream links a deletion forgets, the supervision claim and the schema stamp. No
/// trigger, view, virtual table or foreign key may touch them (the canonical schemas 15 and
/// 18 have none) before a writer goes ahead.
pub const TOUCHED_TABLES: [&str; 6] = [
    "session_state_events",
    "session_state_heads",
    "session_watch_cursors",
    "session_upstream_links",
    "config_machine_state",
    "schema_meta",
];

/// The longest one database operation (a read snapshot, a write transaction, an open) may
/// run before SQLite is told to stop it: far beyond what a legitimate database of millions
/// of events needs, short enough that a planted endless query cannot hang a command.
pub const QUERY_TIME_LIMIT: Duration = Duration::from_secs(60);

/// SQLite virtual-machine instructions between two looks at the deadline.
const PROGRESS_CHECK_OPS: i32 = 10_000;

/// The signal tables alone (§1.4), used for the empty in-memory view of a missing database.
const SIGNAL_TABLES_SQL: &str = "
CREATE TABLE session_state_events (
  sequence INTEGER PRIMARY KEY AUTOINCREMENT,
  dedupe_key TEXT UNIQUE,
  session_key TEXT NOT NULL,
  session_id TEXT,
  agent_id TEXT NOT NULL,
  kind TEXT NOT NULL,
  actor_type TEXT NOT NULL,
  actor_id TEXT,
  run_id TEXT,
  occurred_at INTEGER NOT NULL,
  summary TEXT NOT NULL,
  payload_json TEXT
) STRICT;
CREATE TABLE session_state_heads (
  session_key TEXT NOT NULL,
  agent_id TEXT NOT NULL,
  last_sequence INTEGER NOT NULL,
  pruned_max_sequence INTEGER NOT NULL DEFAULT 0,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (session_key, agent_id)
) STRICT;
CREATE TABLE session_watch_cursors (
  watcher_session_key TEXT NOT NULL,
  target_session_key TEXT NOT NULL,
  last_seen_sequence INTEGER NOT NULL DEFAULT 0,
  notified_sequence INTEGER NOT NULL DEFAULT 0,
  material_sequence INTEGER NOT NULL DEFAULT 0,
  provenance TEXT NOT NULL DEFAULT 'explicit' CHECK (provenance IN ('explicit', 'ambient-group')),
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (watcher_session_key, target_session_key)
) STRICT;
";

/// Why the state database could not be opened, created or written.
#[derive(Debug, Error)]
pub enum DbError {
    /// Another connection held the write lock past the busy timeout.
    #[error(
        "{path}: the state database is busy (its write lock was held for more than 5 s); try again"
    )]
    Busy {
        /// The database.
        path: PathBuf,
    },
    /// The schema is newer than clawstate knows; writing could corrupt it.
    #[error("{path}: state schema version {version} is newer than this clawstate writes (15 to 18); refusing to write")]
    NewerSchema {
        /// The database.
        path: PathBuf,
        /// Its `user_version`.
        version: i64,
    },
    /// The database predates the signal log (OpenClaw 2026.7's schema 1), or there is none
    /// and the host's release has no signal log: nothing may be created or written.
    #[error("{0}; nothing was created or changed")]
    NoSignalLog(NoSignalLog),
    /// A signal table is missing.
    #[error("{path}: not an OpenClaw state database with a signal log (no {table} table)")]
    NotStateDb {
        /// The database.
        path: PathBuf,
        /// The missing table.
        table: String,
    },
    /// An external supervisor owns the database (`gateway.supervision`).
    #[error("{path}: the state database is externally supervised by {manager}; write through that supervisor (or set OPENCLAW_SUPERVISOR_MODE=external)")]
    ExternallySupervised {
        /// The database.
        path: PathBuf,
        /// The manager id recorded in the database.
        manager: String,
    },
    /// The database lives on SSHFS, where SQLite cannot coordinate writers.
    #[error("{path}: the state database is on SSHFS, which cannot safely coordinate SQLite writes; refusing to open it for writing")]
    UnsupportedFilesystem {
        /// The database.
        path: PathBuf,
    },
    /// A file or directory could not be created.
    #[error("{path}: cannot create: {source}")]
    Create {
        /// What could not be created.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A write to the database, its WAL or its WAL index failed (a full disk, an I/O
    /// error): SQLITE_FULL and the write-side SQLITE_IOERR codes.
    #[error("{path}: cannot write the state database ({step}): {cause}")]
    WriteFailed {
        /// The database.
        path: PathBuf,
        /// What SQLite was doing.
        step: &'static str,
        /// The cause: "No space left on device" when the file system is full, else
        /// SQLite's message.
        cause: String,
    },
    /// The schema carries triggers, views, virtual tables or foreign keys on the tables
    /// clawstate touches, which SQLite would run inside clawstate's writes.
    #[error("{path}: the state database has schema objects that OpenClaw's schema does not ({objects}); SQLite would run them inside clawstate's writes, so clawstate refuses to write it (inspect them with `sqlite3 {path} .schema`)")]
    UnexpectedSchema {
        /// The database.
        path: PathBuf,
        /// The objects, named and described, comma-separated.
        objects: String,
    },
    /// A statement ran past [`QUERY_TIME_LIMIT`] and was stopped.
    #[error("{path}: a state database operation ran longer than {secs} s and was stopped (a trigger or view planted in the database, or one far larger than expected); its transaction was rolled back", secs = QUERY_TIME_LIMIT.as_secs())]
    TooSlow {
        /// The database.
        path: PathBuf,
    },
    /// SQLite reported an error.
    #[error("{path}: {source}")]
    Sqlite {
        /// The database.
        path: PathBuf,
        /// The SQLite error.
        source: rusqlite::Error,
    },
}

impl DbError {
    /// Wraps a SQLite error for `path`, recognising "busy" and "locked".
    pub fn sqlite(path: &Path, source: rusqlite::Error) -> Self {
        if source.sqlite_error_code() == Some(ErrorCode::OperationInterrupted) {
            // Only the deadline's progress handler interrupts a connection.
            DbError::TooSlow {
                path: path.to_path_buf(),
            }
        } else if is_busy(&source) {
            DbError::Busy {
                path: path.to_path_buf(),
            }
        } else if let Some(step) = write_failure_step(&source) {
            DbError::WriteFailed {
                path: path.to_path_buf(),
                step,
                cause: write_failure_cause(path, &source),
            }
        } else {
            DbError::Sqlite {
                path: path.to_path_buf(),
                source,
            }
        }
    }
}

impl ExitCode for DbError {
    fn exit_code(&self) -> i32 {
        match self {
            DbError::Busy { .. } | DbError::ExternallySupervised { .. } => exit::TEMP_FAIL,
            DbError::NewerSchema { .. } | DbError::NoSignalLog(_) => exit::DATA_ERR,
            DbError::NotStateDb { .. } | DbError::UnexpectedSchema { .. } => exit::DATA_ERR,
            DbError::TooSlow { .. } => exit::FAILURE,
            DbError::UnsupportedFilesystem { .. }
            | DbError::Create { .. }
            | DbError::WriteFailed { .. } => exit::CANT_CREATE,
            DbError::Sqlite { source, .. } => match source.sqlite_error_code() {
                Some(ErrorCode::NotADatabase) | Some(ErrorCode::DatabaseCorrupt) => exit::DATA_ERR,
                Some(ErrorCode::ReadOnly) | Some(ErrorCode::CannotOpen) => exit::CANT_CREATE,
                Some(ErrorCode::PermissionDenied) | Some(ErrorCode::DiskFull) => exit::CANT_CREATE,
                _ => exit::FAILURE,
            },
        }
    }
}

/// What SQLite was doing when a write-side error struck (SQLITE_FULL; SQLITE_IOERR with
/// the extended codes SHMSIZE, WRITE, FSYNC, DIR_FSYNC, TRUNCATE); `None` for others.
fn write_failure_step(e: &rusqlite::Error) -> Option<&'static str> {
    use rusqlite::ffi;
    let rusqlite::Error::SqliteFailure(f, _) = e else {
        return None;
    };
    match f.extended_code {
        ffi::SQLITE_IOERR_SHMSIZE => Some("sizing its WAL index, the -shm file"),
        ffi::SQLITE_IOERR_WRITE => Some("writing"),
        ffi::SQLITE_IOERR_FSYNC | ffi::SQLITE_IOERR_DIR_FSYNC => Some("syncing"),
        ffi::SQLITE_IOERR_TRUNCATE => Some("truncating"),
        _ if f.code == ErrorCode::DiskFull => Some("writing"),
        _ => None,
    }
}

/// The cause of a write-side failure: SQLite does not say which OS error it met, so a file
/// system with no space left (statvfs of the database's directory) is named as such.
fn write_failure_cause(path: &Path, e: &rusqlite::Error) -> String {
    let sqlite_message = match e {
        rusqlite::Error::SqliteFailure(f, Some(m)) if f.code == ErrorCode::DiskFull => m.clone(),
        rusqlite::Error::SqliteFailure(f, _) if f.code == ErrorCode::DiskFull => {
            "database or disk is full".to_string()
        }
        other => other.to_string(),
    };
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if free_bytes(dir).is_some_and(|free| free < 64 * 1024) {
        let enospc = std::io::Error::from_raw_os_error(libc::ENOSPC);
        if sqlite_message.contains("full") {
            format!("{sqlite_message}: {enospc}")
        } else {
            enospc.to_string()
        }
    } else {
        sqlite_message
    }
}

/// Bytes an unprivileged writer may still use on the file system holding `dir`.
fn free_bytes(dir: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    // SAFETY: a valid NUL-terminated path and a zeroed out-parameter.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return None;
    }
    Some(st.f_bavail as u64 * st.f_frsize as u64)
}

/// Whether a SQLite error means another connection holds a lock.
pub fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(ErrorCode::DatabaseBusy) | Some(ErrorCode::DatabaseLocked)
    )
}

/// How a connection journals, decided from the filesystem as the gateway decides (§1.2 step 5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JournalPolicy {
    /// A local filesystem: write-ahead log.
    Wal,
    /// A network or cross-VM filesystem (NFS, SMB/CIFS, 9p, virtiofs): rollback journal.
    Rollback,
    /// SSHFS: refused.
    Unsupported,
}

/// The journal policy for a database path (statfs magic, then `/proc/self/mountinfo`).
pub fn journal_policy(db_path: &Path) -> JournalPolicy {
    let mut dir = db_path.parent().unwrap_or(Path::new("/")).to_path_buf();
    while !dir.exists() {
        match dir.parent() {
            Some(p) => dir = p.to_path_buf(),
            None => return JournalPolicy::Wal,
        }
    }
    let canonical = std::fs::canonicalize(&dir).unwrap_or(dir.clone());
    if let Some(magic) = statfs_magic(&canonical) {
        const NFS: i64 = 0x6969;
        const SMB: i64 = 0x517B;
        const CIFS: i64 = 0xFF53_4D42;
        const SMB2: i64 = 0xFE53_4D42;
        const V9FS: i64 = 0x0102_1997;
        if [NFS, SMB, CIFS, SMB2, V9FS].contains(&magic) {
            return JournalPolicy::Rollback;
        }
    }
    let Ok(info) = std::fs::read_to_string("/proc/self/mountinfo") else {
        return JournalPolicy::Wal;
    };
    let mut policies = Vec::new();
    for target in [&dir, &canonical] {
        let mut best: Option<(usize, &str, Option<&str>)> = None;
        for line in info.lines() {
            let Some((left, right)) = line.split_once(" - ") else {
                continue;
            };
            let Some(mount_point) = left.split(' ').nth(4) else {
                continue;
            };
            let mount_point = decode_mountinfo(mount_point);
            let mut suffix = right.split(' ');
            let Some(fs_type) = suffix.next() else {
                continue;
            };
            let source = suffix.next();
            let mp = Path::new(&mount_point);
            if (target.starts_with(mp) || mount_point == "/")
                && best.is_none_or(|(len, _, _)| mount_point.len() > len)
            {
                best = Some((mount_point.len(), fs_type, source));
            }
        }
        if let Some((_, fs_type, source)) = best {
            policies.push(mount_type_policy(fs_type, source));
        }
    }
    if policies.contains(&JournalPolicy::Unsupported) {
        JournalPolicy::Unsupported
    } else if policies.contains(&JournalPolicy::Rollback) {
        JournalPolicy::Rollback
    } else {
        JournalPolicy::Wal
    }
}

fn mount_type_policy(fs_type: &str, source: Option<&str>) -> JournalPolicy {
    let t = fs_type.to_ascii_lowercase();
    if t.starts_with("nfs") || ["cifs", "smbfs", "smb2", "smb3"].contains(&t.as_str()) {
        return JournalPolicy::Rollback;
    }
    if ["virtiofs", "fuse.virtiofs"].contains(&t.as_str()) || t.starts_with("9p") {
        return JournalPolicy::Rollback;
    }
    if t == "fuse.sshfs" {
        return JournalPolicy::Unsupported;
    }
    if (t == "macfuse" || t == "osxfuse")
        && source.is_some_and(|s| s.to_ascii_lowercase().starts_with("sshfs"))
    {
        return JournalPolicy::Unsupported;
    }
    JournalPolicy::Wal
}

/// Decodes the octal escapes (`\040`) of a mountinfo path.
fn decode_mountinfo(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 3 < b.len()
            && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c))
        {
            let v = (b[i + 1] - b'0') * 64 + (b[i + 2] - b'0') * 8 + (b[i + 3] - b'0');
            out.push(v);
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn statfs_magic(dir: &Path) -> Option<i64> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    // SAFETY: `c` is a valid NUL-terminated path and `buf` a properly sized, zeroed struct.
    unsafe {
        let mut buf: libc::statfs = std::mem::zeroed();
        if libc::statfs(c.as_ptr(), &mut buf) == 0 {
            #[allow(clippy::unnecessary_cast)]
            Some(buf.f_type as i64 & 0xFFFF_FFFF)
        } else {
            None
        }
    }
}

/// What an open is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Reading only (`query_only`); a missing database reads as empty.
    Read,
    /// Writing: a missing database is created in the canonical form.
    Write,
}

/// The deadline a connection's progress handler enforces: re-armed at the start of every
/// operation, so that only one operation's own running time counts against the limit.
#[derive(Debug, Clone)]
struct QueryDeadline {
    /// When this connection's clock started.
    base: Instant,
    /// The deadline, in nanoseconds after `base`.
    at: Arc<AtomicU64>,
    /// How long an operation may run.
    limit: Duration,
}

impl QueryDeadline {
    /// Installs the progress handler on `conn` and arms it.
    fn install(conn: &Connection) -> QueryDeadline {
        let d = QueryDeadline {
            base: Instant::now(),
            at: Arc::new(AtomicU64::new(u64::MAX)),
            limit: QUERY_TIME_LIMIT,
        };
        d.arm();
        let (base, at) = (d.base, Arc::clone(&d.at));
        conn.progress_handler(
            PROGRESS_CHECK_OPS,
            Some(move || base.elapsed().as_nanos() as u64 >= at.load(Ordering::Relaxed)),
        );
        d
    }

    /// Starts the clock of a new operation.
    fn arm(&self) {
        let at = self.base.elapsed().saturating_add(self.limit).as_nanos();
        self.at
            .store(u64::try_from(at).unwrap_or(u64::MAX), Ordering::Relaxed);
    }
}

/// Opens a connection to any SQLite file clawstate reads as data (the state database, an
/// agent database, the lifecycle coordinator): `flags`, the busy timeout, `trusted_schema =
/// OFF`, and a progress handler that stops any statement after [`QUERY_TIME_LIMIT`].
pub fn open_connection(path: &Path, flags: OpenFlags) -> Result<Connection, DbError> {
    open_guarded(path, flags).map(|(conn, _)| conn)
}

fn open_guarded(path: &Path, flags: OpenFlags) -> Result<(Connection, QueryDeadline), DbError> {
    let err = |e| DbError::sqlite(path, e);
    let conn = Connection::open_with_flags(path, flags).map_err(err)?;
    harden(&conn).map_err(err)?;
    let deadline = QueryDeadline::install(&conn);
    Ok((conn, deadline))
}

/// The settings every connection gets before its first statement.
fn harden(conn: &Connection) -> rusqlite::Result<()> {
    conn.busy_timeout(Duration::from_millis(BUSY_TIMEOUT_MS))?;
    conn.execute_batch("PRAGMA trusted_schema = OFF;")
}

/// An open state database.
#[derive(Debug)]
pub struct StateDb {
    conn: Connection,
    deadline: QueryDeadline,
    path: PathBuf,
    user_version: i64,
    has_store_path: bool,
    has_machine_state: bool,
    missing: bool,
    created: bool,
    no_log: Option<NoSignalLog>,
    stores: Option<super::watcher_stores::WatcherStores>,
}

impl StateDb {
    /// Opens `path` for `access` (see [`Access`]) on a host nothing is known about.
    pub fn open(path: &Path, access: Access) -> Result<StateDb, DbError> {
        Self::open_as(path, access, &HostSchema::Unknown)
    }

    /// Opens `path` for `access` on a host whose state schema `host` describes: what a
    /// missing database is created as, and what a database without a signal log is told.
    pub fn open_as(path: &Path, access: Access, host: &HostSchema) -> Result<StateDb, DbError> {
        match access {
            Access::Read => Self::open_read_as(path, host),
            Access::Write => Self::open_write_as(path, host),
        }
    }

    /// Opens for reading on a host nothing is known about ([`StateDb::open_read_as`]).
    pub fn open_read(path: &Path) -> Result<StateDb, DbError> {
        Self::open_read_as(path, &HostSchema::Unknown)
    }

    /// Opens for reading: `busy_timeout`, `query_only`, `trusted_schema = OFF`. A missing
    /// (or empty) database, and one below schema 15 without the signal tables, read as an
    /// empty log; the latter, and a missing one on a host without the log, are marked
    /// [`StateDb::no_signal_log`].
    pub fn open_read_as(path: &Path, host: &HostSchema) -> Result<StateDb, DbError> {
        let absent = match std::fs::metadata(path) {
            Err(_) => true,
            Ok(m) => m.is_file() && m.len() == 0,
        };
        if absent {
            let no_log = (host.has_signal_log() == Some(false)).then(|| NoSignalLog {
                path: path.to_path_buf(),
                db_schema: None,
                host: host.clone(),
            });
            return Self::empty_view(path, SCHEMA_VERSION, true, no_log);
        }
        if let Some(v) = peek_user_version(path).filter(|v| *v == SCHEMA_2026_7) {
            return Self::empty_view(path, v, false, Some(no_log(path, v, host)));
        }
        let err = |e| DbError::sqlite(path, e);
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX
            | OpenFlags::SQLITE_OPEN_URI;
        let (conn, deadline) = match open_guarded(path, flags) {
            Ok(c) => c,
            Err(_) => open_guarded(
                path,
                OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
            )?,
        };
        conn.execute_batch("PRAGMA query_only = ON;").map_err(err)?;
        keep_wal_on_close(&conn).map_err(err)?;
        let version = user_version(&conn).map_err(err)?;
        if (1..OLDEST_WRITABLE_SCHEMA).contains(&version)
            && !has_signal_tables(&conn).map_err(err)?
        {
            drop(conn);
            return Self::empty_view(path, version, false, Some(no_log(path, version, host)));
        }
        let mut db = StateDb {
            conn,
            deadline,
            path: path.to_path_buf(),
            user_version: version,
            has_store_path: false,
            has_machine_state: false,
            missing: false,
            created: false,
            no_log: None,
            stores: None,
        };
        db.inspect()?;
        Ok(db)
    }

    /// An empty in-memory copy of the signal tables standing for `path`.
    fn empty_view(
        path: &Path,
        user_version: i64,
        missing: bool,
        no_log: Option<NoSignalLog>,
    ) -> Result<StateDb, DbError> {
        let err = |e| DbError::sqlite(path, e);
        let conn = Connection::open_in_memory().map_err(err)?;
        harden(&conn).map_err(err)?;
        let deadline = QueryDeadline::install(&conn);
        conn.execute_batch(SIGNAL_TABLES_SQL).map_err(err)?;
        Ok(StateDb {
            conn,
            deadline,
            path: path.to_path_buf(),
            user_version,
            has_store_path: false,
            has_machine_state: false,
            missing,
            created: false,
            no_log,
            stores: None,
        })
    }

    /// Opens for writing on a host nothing is known about ([`StateDb::open_write_as`]): a
    /// missing database is created at schema 15.
    pub fn open_write(path: &Path) -> Result<StateDb, DbError> {
        Self::open_write_as(path, &HostSchema::Unknown)
    }

    /// Opens for writing, creating the database (directory 0700, file 0600, WAL, the
    /// canonical schema `host` calls for: [`HostSchema::creation`]) when it is missing or
    /// empty. Refuses, before it creates or changes anything (even the journal mode): a
    /// missing database on a host without the signal log, a database below schema 15 or
    /// above 18, and schemas with objects on the tables it touches
    /// ([`check_touched_tables`]).
    pub fn open_write_as(path: &Path, host: &HostSchema) -> Result<StateDb, DbError> {
        let policy = journal_policy(path);
        if policy == JournalPolicy::Unsupported {
            return Err(DbError::UnsupportedFilesystem {
                path: path.to_path_buf(),
            });
        }
        let refuse_creation = || {
            DbError::NoSignalLog(NoSignalLog {
                path: path.to_path_buf(),
                db_schema: None,
                host: host.clone(),
            })
        };
        let mut created = false;
        if needs_creation(path) {
            let schema = host.creation().ok_or_else(refuse_creation)?;
            created =
                with_state_lifecycle_coordinator(path, || create_database(path, policy, schema))?;
        } else if let Some(v) = peek_user_version(path).filter(|v| *v < OLDEST_WRITABLE_SCHEMA) {
            if v != 0 {
                return Err(DbError::NoSignalLog(no_log(path, v, host)));
            }
        }
        let err = |e| DbError::sqlite(path, e);
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let (conn, deadline) = open_guarded(path, flags)?;
        let mut version = user_version(&conn).map_err(err)?;
        if version == 0 && !created {
            // Another process may be creating it right now (or died doing so): wait for its
            // coordinator, finish the creation if nothing was committed, and look again.
            let schema = host.creation().ok_or_else(refuse_creation)?;
            created =
                with_state_lifecycle_coordinator(path, || create_database(path, policy, schema))?;
            version = user_version(&conn).map_err(err)?;
        }
        check_writable_version(path, version, host)?;
        check_touched_tables(&conn, path)?;
        configure_connection(&conn, path, policy)?;
        keep_wal_on_close(&conn).map_err(err)?;
        let mut db = StateDb {
            conn,
            deadline,
            path: path.to_path_buf(),
            user_version: version,
            has_store_path: false,
            has_machine_state: false,
            missing: false,
            created,
            no_log: None,
            stores: None,
        };
        db.inspect()?;
        Ok(db)
    }

    fn inspect(&mut self) -> Result<(), DbError> {
        let err = |e| DbError::sqlite(&self.path, e);
        self.user_version = user_version(&self.conn).map_err(err)?;
        for table in SIGNAL_TABLES {
            if !table_exists(&self.conn, table).map_err(err)? {
                return Err(DbError::NotStateDb {
                    path: self.path.clone(),
                    table: table.to_string(),
                });
            }
        }
        self.has_store_path =
            column_exists(&self.conn, "session_watch_cursors", "watcher_store_path")
                .map_err(err)?;
        self.has_machine_state = table_exists(&self.conn, "config_machine_state").map_err(err)?;
        Ok(())
    }

    /// The database path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The schema version (`PRAGMA user_version`).
    pub fn user_version(&self) -> i64 {
        self.user_version
    }

    /// Whether the cursors table has 2026.9.6's `watcher_store_path` column (schema 18).
    pub fn has_watcher_store_path(&self) -> bool {
        self.has_store_path
    }

    /// Whether cursors carry 2026.9.6's store provenance (schema 18 and later known ones):
    /// seeds record the watcher's store, a cursor of another store is re-seeded, never
    /// advanced by a lineage event, and its notices are undeliverable (`signals.md` §3.7).
    /// The column itself is appended by the first cursor write when a migrated database
    /// lacks it, as 9.6's writers do.
    pub fn tracks_watcher_stores(&self) -> bool {
        self.user_version >= STORE_PROVENANCE_SCHEMA
    }

    /// Sets where watchers' session stores are (from the host's config and layout).
    pub fn set_watcher_stores(&mut self, stores: super::watcher_stores::WatcherStores) {
        self.stores = Some(stores);
    }

    /// The store `watcher_store_path` records for `watcher` now: the host's, else the
    /// agent database beside this state database's state dir.
    pub fn watcher_store(&self, watcher: &str) -> Option<String> {
        match &self.stores {
            Some(s) => s.of(watcher),
            None => super::watcher_stores::watcher_store_path(&self.path, watcher),
        }
    }

    /// The watchers' stores as set by [`StateDb::set_watcher_stores`], for a cursor writer.
    pub(crate) fn stores_for_writer(&self) -> Option<super::watcher_stores::WatcherStores> {
        self.stores.clone()
    }

    /// Re-reads whether the cursors table has `watcher_store_path` (after a write that may
    /// have appended it).
    pub fn refresh_store_column(&mut self) {
        if self.missing || self.no_log.is_some() {
            return;
        }
        if let Ok(b) = column_exists(&self.conn, "session_watch_cursors", "watcher_store_path") {
            self.has_store_path = b;
        }
    }

    /// The warning for a state schema newer than clawstate writes: read only.
    pub fn newer_schema_warning(&self) -> Option<String> {
        (self.has_signal_log() && self.user_version > NEWEST_WRITABLE_SCHEMA).then(|| {
            format!(
                "{}: state schema {} is newer than {NEWEST_WRITABLE_SCHEMA}, the newest clawstate knows; reading it read-only (nothing is written)",
                self.path.display(),
                self.user_version
            )
        })
    }

    /// Whether the file did not exist (reads see an empty log).
    pub fn is_missing(&self) -> bool {
        self.missing
    }

    /// Why this host has no signal log (a database below schema 15, or none on a host whose
    /// release has no log): reads see an empty log, writers refuse. `None` otherwise.
    pub fn no_signal_log(&self) -> Option<&NoSignalLog> {
        self.no_log.as_ref()
    }

    /// Whether this is a signal log that can be written: the file exists and has the log.
    pub fn has_signal_log(&self) -> bool {
        !self.missing && self.no_log.is_none()
    }

    /// Whether this open created the database.
    pub fn was_created(&self) -> bool {
        self.created
    }

    /// The connection, for reads outside a transaction (the operation's clock starts now).
    pub fn conn(&self) -> &Connection {
        self.deadline.arm();
        &self.conn
    }

    /// `PRAGMA data_version`: changes whenever another connection commits.
    pub fn data_version(&self) -> Result<i64, DbError> {
        self.deadline.arm();
        self.conn
            .query_row("PRAGMA data_version", [], |r| r.get(0))
            .map_err(|e| DbError::sqlite(&self.path, e))
    }

    /// Runs `f` in one read transaction (a consistent snapshot).
    pub fn read<T>(
        &mut self,
        f: impl FnOnce(&rusqlite::Transaction<'_>) -> rusqlite::Result<T>,
    ) -> Result<T, DbError> {
        let path = self.path.clone();
        let err = |e| DbError::sqlite(&path, e);
        self.deadline.arm();
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Deferred)
            .map_err(err)?;
        let out = f(&tx).map_err(err)?;
        tx.commit().map_err(err)?;
        Ok(out)
    }

    /// Runs `f` in one `BEGIN IMMEDIATE` transaction and commits it; nothing is written when
    /// `f` fails. Busy past the timeout is [`DbError::Busy`].
    pub fn write<T>(
        &mut self,
        f: impl FnOnce(&rusqlite::Transaction<'_>) -> rusqlite::Result<T>,
    ) -> Result<T, DbError> {
        let path = self.path.clone();
        let err = |e| DbError::sqlite(&path, e);
        let check_owner = self.has_machine_state;
        self.deadline.arm();
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(err)?;
        if check_owner {
            if let Some(manager) = external_owner(&tx).map_err(err)? {
                return Err(DbError::ExternallySupervised {
                    path: path.clone(),
                    manager,
                });
            }
        }
        let out = f(&tx).map_err(err)?;
        tx.commit().map_err(err)?;
        Ok(out)
    }

    /// The database file size in bytes plus its `-wal` (0 when missing).
    pub fn size_bytes(&self) -> u64 {
        let main = std::fs::metadata(&self.path).map(|m| m.len()).unwrap_or(0);
        let wal = std::fs::metadata(sidecar(&self.path, "-wal"))
            .map(|m| m.len())
            .unwrap_or(0);
        main + wal
    }
}

/// Leaves the WAL in place when this (short-lived) connection closes, as it would stay
/// while a gateway holds the database open: no checkpoint and two fsyncs per command.
/// Committed transactions are in the WAL either way; the gateway's and SQLite's automatic
/// checkpoints (every 1000 pages) fold it back.
fn keep_wal_on_close(conn: &Connection) -> rusqlite::Result<()> {
    conn.set_db_config(
        rusqlite::config::DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE,
        true,
    )
    .map(|_| ())
}

fn sidecar(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_os_string();
    s.push(suffix);
    PathBuf::from(s)
}

/// The manager id of an external ownership claim, unless this process is that supervisor.
fn external_owner(conn: &Connection) -> rusqlite::Result<Option<String>> {
    let supervised_here = std::env::var("OPENCLAW_SUPERVISOR_MODE")
        .map(|v| v.trim().eq_ignore_ascii_case("external"))
        .unwrap_or(false);
    if supervised_here {
        return Ok(None);
    }
    let row: Option<String> = conn
        .query_row(
            "SELECT value_json FROM config_machine_state WHERE state_key = 'gateway.supervision' LIMIT 1",
            [],
            |r| r.get(0),
        )
        .optional()?;
    Ok(row.map(|json| {
        crate::js::jsjson::parse_value(&json)
            .ok()
            .and_then(|v| {
                v.get("managerId")
                    .and_then(|m| m.as_str())
                    .map(String::from)
            })
            .unwrap_or_else(|| "an external manager".to_string())
    }))
}

fn user_version(conn: &Connection) -> rusqlite::Result<i64> {
    conn.query_row("PRAGMA user_version", [], |r| r.get(0))
}

/// Whether an ordinary table (not a view, not a virtual table) of that name exists in the
/// main schema: only then is it queried, so a planted look-alike never runs.
pub fn table_exists(conn: &Connection, table: &str) -> rusqlite::Result<bool> {
    conn.query_row(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1 \
         AND sql NOT LIKE 'CREATE VIRTUAL %'",
        [table],
        |_| Ok(()),
    )
    .optional()
    .map(|o| o.is_some())
}

fn column_exists(conn: &Connection, table: &str, column: &str) -> rusqlite::Result<bool> {
    let mut stmt = conn.prepare("SELECT name FROM pragma_table_info(?1)")?;
    let names = stmt.query_map([table], |r| r.get::<_, String>(0))?;
    for n in names {
        if n? == column {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Refuses a schema in which SQLite would run something clawstate did not write while it
/// writes the tables it touches ([`TOUCHED_TABLES`]): a trigger on one of them, a view or
/// virtual table in place of one, a view reading one, a foreign key from or to one (its
/// cascades reach other tables and their triggers). Reads `sqlite_master` only, so nothing
/// planted runs; the canonical schemas 15 and 18 have none of these. Objects elsewhere in
/// the database are the gateway's (or its plugins') business and are left alone.
pub fn check_touched_tables(conn: &Connection, path: &Path) -> Result<(), DbError> {
    let err = |e| DbError::sqlite(path, e);
    let touched = |name: &str| TOUCHED_TABLES.iter().any(|t| t.eq_ignore_ascii_case(name));
    let mut found: Vec<String> = Vec::new();
    let mut stmt = conn
        .prepare(
            "SELECT type, name, tbl_name, coalesce(sql, '') FROM sqlite_master \
             WHERE type IN ('trigger', 'view', 'table') ORDER BY rowid",
        )
        .map_err(err)?;
    let rows = stmt
        .query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, String>(3)?,
            ))
        })
        .map_err(err)?;
    for row in rows {
        let (kind, name, table, sql) = row.map_err(err)?;
        match kind.as_str() {
            "trigger" if touched(&table) => found.push(format!("trigger {name:?} on {table}")),
            "view" if touched(&name) => {
                found.push(format!("view {name:?} in place of the table {name}"))
            }
            "view" => {
                if let Some(t) = TOUCHED_TABLES.iter().find(|t| mentions(&sql, t)) {
                    found.push(format!("view {name:?} reading {t}"));
                }
            }
            "table" if touched(&name) && starts_with_ignore_case(&sql, "CREATE VIRTUAL") => found
                .push(format!(
                    "virtual table {name:?} in place of the table {name}"
                )),
            _ => {}
        }
    }
    drop(stmt);
    let mut stmt = conn
        .prepare(
            "SELECT m.name, f.\"table\" FROM sqlite_master AS m, pragma_foreign_key_list(m.name) AS f \
             WHERE m.type = 'table' GROUP BY m.name, f.id ORDER BY m.rowid",
        )
        .map_err(err)?;
    let rows = stmt
        .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))
        .map_err(err)?;
    for row in rows {
        let (child, parent) = row.map_err(err)?;
        if touched(&parent) || touched(&child) {
            found.push(format!(
                "foreign key of table {child:?} referencing {parent}"
            ));
        }
    }
    if found.is_empty() {
        Ok(())
    } else {
        Err(DbError::UnexpectedSchema {
            path: path.to_path_buf(),
            objects: found.join(", "),
        })
    }
}

/// Whether `sql` names the identifier `ident` (case-insensitively, as a whole word).
fn mentions(sql: &str, ident: &str) -> bool {
    let hay = sql.to_ascii_lowercase();
    let needle = ident.to_ascii_lowercase();
    let is_ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c == b'$';
    let b = hay.as_bytes();
    let mut from = 0;
    while let Some(i) = hay[from..].find(&needle) {
        let start = from + i;
        let end = start + needle.len();
        let before_ok = start == 0 || !is_ident(b[start - 1]);
        let after_ok = end == b.len() || !is_ident(b[end]);
        if before_ok && after_ok {
            return true;
        }
        from = start + 1;
    }
    false
}

fn starts_with_ignore_case(s: &str, prefix: &str) -> bool {
    s.trim_start()
        .get(..prefix.len())
        .is_some_and(|p| p.eq_ignore_ascii_case(prefix))
}

fn check_writable_version(path: &Path, version: i64, host: &HostSchema) -> Result<(), DbError> {
    if version > NEWEST_WRITABLE_SCHEMA {
        return Err(DbError::NewerSchema {
            path: path.to_path_buf(),
            version,
        });
    }
    if version < OLDEST_WRITABLE_SCHEMA {
        return Err(DbError::NoSignalLog(no_log(path, version, host)));
    }
    Ok(())
}

/// Why the database at `path`, at schema `version` (below 15), has no signal log.
fn no_log(path: &Path, version: i64, host: &HostSchema) -> NoSignalLog {
    NoSignalLog {
        path: path.to_path_buf(),
        db_schema: Some(version),
        host: host.clone(),
    }
}

/// Whether all three signal tables exist.
fn has_signal_tables(conn: &Connection) -> rusqlite::Result<bool> {
    for table in SIGNAL_TABLES {
        if !table_exists(conn, table)? {
            return Ok(false);
        }
    }
    Ok(true)
}

/// The `user_version` in the database header (bytes 60–63), when the header says it all:
/// a SQLite file whose WAL is absent or empty, so no newer page 1 can be pending. Reads
/// 100 bytes and opens nothing else, so no `-wal` or `-shm` file is created.
fn peek_user_version(path: &Path) -> Option<i64> {
    use std::io::Read;
    match std::fs::symlink_metadata(sidecar(path, "-wal")) {
        Ok(m) if m.len() > 0 => return None,
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return None,
        _ => {}
    }
    let mut header = [0u8; 100];
    let mut file = crate::fs::data_file::open_named(path).ok()?.into_file();
    file.read_exact(&mut header).ok()?;
    if &header[..16] != b"SQLite format 3\0" {
        return None;
    }
    let v = i32::from_be_bytes([header[60], header[61], header[62], header[63]]);
    Some(i64::from(v))
}

/// The connection pragmas of §1.2 steps 5–7 (the busy timeout is already set).
fn configure_connection(
    conn: &Connection,
    path: &Path,
    policy: JournalPolicy,
) -> Result<(), DbError> {
    let err = |e| DbError::sqlite(path, e);
    match policy {
        JournalPolicy::Rollback => {
            let mode: String = conn
                .query_row("PRAGMA journal_mode = DELETE", [], |r| r.get(0))
                .map_err(err)?;
            if !mode.eq_ignore_ascii_case("delete") {
                return Err(DbError::Sqlite {
                    path: path.to_path_buf(),
                    source: rusqlite::Error::InvalidParameterName(format!(
                        "on a network volume but SQLite kept journal_mode={mode}"
                    )),
                });
            }
        }
        _ => {
            let deadline = Instant::now() + Duration::from_millis(BUSY_TIMEOUT_MS);
            loop {
                match conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get::<_, String>(0)) {
                    Ok(_) => break,
                    Err(e) if is_busy(&e) && Instant::now() < deadline => {
                        std::thread::sleep(Duration::from_millis(10))
                    }
                    Err(e) => return Err(err(e)),
                }
            }
            conn.execute_batch(&format!(
                "PRAGMA wal_autocheckpoint = {WAL_AUTOCHECKPOINT}; PRAGMA journal_size_limit = {JOURNAL_SIZE_LIMIT};"
            ))
            .map_err(err)?;
        }
    }
    conn.execute_batch("PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;")
        .map_err(err)?;
    Ok(())
}

/// Whether the file is missing or holds no pages.
fn needs_creation(path: &Path) -> bool {
    match std::fs::metadata(path) {
        Err(_) => true,
        Ok(m) => m.len() == 0,
    }
}

/// Creates the database in the canonical form of `schema` (18, else 15), stamped with the
/// `app_version` of the build whose schema it is; a no-op returning false when another
/// process created it first. Runs under the state-lifecycle coordinator.
fn create_database(path: &Path, policy: JournalPolicy, schema: i64) -> Result<bool, DbError> {
    let (schema, app_version, ddl) = match schema {
        18 => (18, SCHEMA_V18_APP_VERSION, CANONICAL_SCHEMA_V18_SQL),
        _ => (SCHEMA_VERSION, SCHEMA_APP_VERSION, CANONICAL_SCHEMA_SQL),
    };
    let create_err = |p: &Path, source| DbError::Create {
        path: p.to_path_buf(),
        source,
    };
    if let Some(dir) = path.parent() {
        if !dir.exists() {
            DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)
                .map_err(|e| create_err(dir, e))?;
        }
    }
    match OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
    {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(create_err(path, e)),
    }
    let err = |e| DbError::sqlite(path, e);
    let conn = open_connection(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    let objects: i64 = conn
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'",
            [],
            |r| r.get(0),
        )
        .map_err(err)?;
    if objects != 0 {
        return Ok(false);
    }
    // Before the first table, as the gateway does for a fresh file.
    conn.execute_batch("PRAGMA auto_vacuum = INCREMENTAL;")
        .map_err(err)?;
    configure_connection(&conn, path, policy)?;
    conn.execute_batch("PRAGMA foreign_keys = OFF;")
        .map_err(err)?;
    let now = crate::js::clock::system_now_ms();
    let created = (|| -> rusqlite::Result<bool> {
        let tx = rusqlite::Transaction::new_unchecked(&conn, TransactionBehavior::Immediate)?;
        let objects: i64 = tx.query_row(
            "SELECT count(*) FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'",
            [],
            |r| r.get(0),
        )?;
        if objects != 0 {
            return Ok(false);
        }
        tx.execute_batch(ddl)?;
        tx.execute_batch(&format!("PRAGMA user_version = {schema};"))?;
        tx.execute(
            "INSERT INTO schema_meta (meta_key, role, schema_version, agent_id, app_version, created_at, updated_at) \
             VALUES ('primary', 'global', ?1, NULL, ?2, ?3, ?3)",
            rusqlite::params![schema, app_version, now],
        )?;
        tx.commit()?;
        Ok(true)
    })()
    .map_err(err)?;
    conn.execute_batch("PRAGMA foreign_keys = ON;")
        .map_err(err)?;
    drop(conn);
    for suffix in ["", "-wal", "-shm"] {
        let p = sidecar(path, suffix);
        if let Ok(m) = std::fs::symlink_metadata(&p) {
            if m.file_type().is_file() && m.mode() & 0o077 != 0 {
                let _ = std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600));
            }
        }
    }
    Ok(created)
}

/// The gateway's state-lifecycle coordinator for a database:
/// `/tmp/openclaw-state-locks-<uid>/state-lifecycle.<8 hex of sha256(real path)>.lock.sqlite`.
pub fn state_lifecycle_coordinator_path(db_path: &Path) -> PathBuf {
    let real = crate::js::node_path::resolve_via_existing_ancestor(db_path);
    let digest = Sha256::digest(real.as_os_str().as_encoded_bytes());
    let hex: String = digest.iter().take(4).map(|b| format!("{b:02x}")).collect();
    // SAFETY: getuid has no preconditions and cannot fail.
    let uid = unsafe { libc::getuid() };
    PathBuf::from("/tmp")
        .join(format!("openclaw-state-locks-{uid}"))
        .join(format!("state-lifecycle.{hex}.lock.sqlite"))
}

/// Runs `f` while holding the gateway's state-lifecycle coordinator (an exclusive SQLite
/// transaction on a private lock database), as the gateway does around a fresh open, so a
/// database is never created or migrated by two processes at once.
fn with_state_lifecycle_coordinator<T>(
    db_path: &Path,
    f: impl FnOnce() -> Result<T, DbError>,
) -> Result<T, DbError> {
    let lock = state_lifecycle_coordinator_path(db_path);
    let dir = lock.parent().unwrap_or(Path::new("/tmp"));
    let create_err = |source| DbError::Create {
        path: dir.to_path_buf(),
        source,
    };
    match DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(create_err(e)),
    }
    let meta = std::fs::symlink_metadata(dir).map_err(create_err)?;
    // SAFETY: getuid has no preconditions and cannot fail.
    let uid = unsafe { libc::getuid() };
    if !meta.is_dir() || meta.uid() != uid {
        return Err(create_err(std::io::Error::other(
            "the coordinator directory is not a private directory of this user",
        )));
    }
    if meta.mode() & 0o077 != 0 {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
            .map_err(create_err)?;
    }
    let err = |e| DbError::sqlite(&lock, e);
    let conn = open_connection(
        &lock,
        OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    conn.execute_batch("BEGIN EXCLUSIVE;").map_err(|e| {
        if is_busy(&e) {
            DbError::Busy {
                path: db_path.to_path_buf(),
            }
        } else {
            err(e)
        }
    })?;
    let out = f();
    let _ = conn.execute_batch("ROLLBACK;");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn creates_the_canonical_database() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state/openclaw.sqlite");
        let db = StateDb::open_write(&path).unwrap();
        assert!(db.was_created());
        assert_eq!(db.user_version(), 15);
        let av: i64 = db
            .conn()
            .query_row("PRAGMA auto_vacuum", [], |r| r.get(0))
            .unwrap();
        assert_eq!(av, 2);
        let jm: String = db
            .conn()
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .unwrap();
        assert_eq!(jm, "wal");
        let meta: (String, i64, String) = db
            .conn()
            .query_row(
                "SELECT role, schema_version, app_version FROM schema_meta WHERE meta_key='primary'",
                [],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .unwrap();
        assert_eq!(meta, ("global".into(), 15, "2026.8.1".into()));
        let mode = std::fs::metadata(&path).unwrap().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let dmode = std::fs::metadata(path.parent().unwrap()).unwrap().mode() & 0o777;
        assert_eq!(dmode, 0o700);
        drop(db);
        let again = StateDb::open_write(&path).unwrap();
        assert!(!again.was_created());
    }

    #[test]
    fn refuses_newer_and_older_schemas_for_writing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("openclaw.sqlite");
        drop(StateDb::open_write(&path).unwrap());
        let c = Connection::open(&path).unwrap();
        c.execute_batch("PRAGMA user_version = 19;").unwrap();
        drop(c);
        let e = StateDb::open_write(&path).unwrap_err();
        assert_eq!(e.exit_code(), 65, "{e}");
        assert!(StateDb::open_read(&path).is_ok());
        let c = Connection::open(&path).unwrap();
        c.execute_batch("PRAGMA user_version = 3;").unwrap();
        drop(c);
        assert_eq!(StateDb::open_write(&path).unwrap_err().exit_code(), 65);
    }

    #[test]
    fn the_host_decides_what_a_missing_database_is_created_as() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state/openclaw.sqlite");
        let host71 = HostSchema::Config {
            version: "2026.7.1".into(),
            path: dir.path().join("openclaw.json"),
        };
        let e = StateDb::open_write_as(&path, &host71).unwrap_err();
        assert_eq!(e.exit_code(), 65, "{e}");
        assert!(e.to_string().contains("2026.8 or later"), "{e}");
        assert!(!path.parent().unwrap().exists(), "nothing is created");
        let read = StateDb::open_read_as(&path, &host71).unwrap();
        assert!(read.no_signal_log().is_some() && !read.has_signal_log());
        let db = StateDb::open_write_as(&path, &HostSchema::Given(18)).unwrap();
        assert!(db.was_created() && db.has_watcher_store_path());
        assert_eq!(db.user_version(), 18);
        let meta: (i64, String) = db
            .conn()
            .query_row(
                "SELECT schema_version, app_version FROM schema_meta WHERE meta_key='primary'",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap();
        assert_eq!(meta, (18, "2026.9.6".into()));
        // An existing database decides by its own schema, whatever the host says.
        drop(db);
        let again = StateDb::open_write_as(&path, &host71).unwrap();
        assert_eq!(again.user_version(), 18);
    }

    #[test]
    fn a_schema_1_database_is_refused_from_its_header_alone() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("openclaw.sqlite");
        let c = Connection::open(&path).unwrap();
        c.execute_batch("PRAGMA journal_mode = WAL; CREATE TABLE t (x); PRAGMA user_version = 1;")
            .unwrap();
        drop(c);
        let listing = || {
            let mut v: Vec<String> = std::fs::read_dir(dir.path())
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            v.sort();
            v
        };
        assert_eq!(listing(), ["openclaw.sqlite"]);
        let before = std::fs::read(&path).unwrap();
        let e = StateDb::open_write(&path).unwrap_err();
        assert!(
            matches!(&e, DbError::NoSignalLog(n) if n.db_schema == Some(1)),
            "{e}"
        );
        assert_eq!(e.exit_code(), 65);
        assert!(e.to_string().contains("OpenClaw 2026.7"), "{e}");
        let r = StateDb::open_read(&path).unwrap();
        assert_eq!(r.user_version(), 1);
        assert!(r.no_signal_log().is_some() && !r.is_missing());
        drop(r);
        assert_eq!(listing(), ["openclaw.sqlite"], "no -wal or -shm appeared");
        assert_eq!(std::fs::read(&path).unwrap(), before);
        // With a WAL pending, SQLite itself is asked; the answer is the same.
        std::fs::write(dir.path().join("openclaw.sqlite-wal"), b"").unwrap();
        assert_eq!(peek_user_version(&path), Some(1));
        let host = HostSchema::Given(15);
        let e = StateDb::open_write_as(&path, &host).unwrap_err();
        assert!(e.to_string().contains("openclaw doctor --fix"), "{e}");
    }

    #[test]
    fn a_half_created_database_is_finished() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("openclaw.sqlite");
        let c = Connection::open(&path).unwrap();
        c.execute_batch("PRAGMA auto_vacuum = INCREMENTAL; PRAGMA journal_mode = WAL;")
            .unwrap();
        drop(c);
        assert!(std::fs::metadata(&path).unwrap().len() > 0);
        let db = StateDb::open_write(&path).unwrap();
        assert!(db.was_created());
        assert_eq!(db.user_version(), 15);
        let av: i64 = db
            .conn()
            .query_row("PRAGMA auto_vacuum", [], |r| r.get(0))
            .unwrap();
        assert_eq!(av, 2);
    }

    #[test]
    fn missing_database_reads_empty_without_creating() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("nope/openclaw.sqlite");
        let db = StateDb::open_read(&path).unwrap();
        assert!(db.is_missing());
        assert!(!path.exists());
    }

    #[test]
    fn every_connection_distrusts_the_schema() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("openclaw.sqlite");
        drop(StateDb::open_write(&path).unwrap());
        for db in [
            StateDb::open_write(&path).unwrap(),
            StateDb::open_read(&path).unwrap(),
            StateDb::open_read(&dir.path().join("missing.sqlite")).unwrap(),
        ] {
            let on: i64 = db
                .conn()
                .query_row("PRAGMA trusted_schema", [], |r| r.get(0))
                .unwrap();
            assert_eq!(on, 0);
        }
    }

    #[test]
    fn an_endless_statement_is_stopped_at_the_deadline() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("openclaw.sqlite");
        let mut db = StateDb::open_write(&path).unwrap();
        db.deadline.limit = Duration::from_millis(20);
        let endless = "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) \
                       SELECT count(*) FROM r";
        let e = db
            .read(|tx| tx.query_row(endless, [], |r| r.get::<_, i64>(0)))
            .unwrap_err();
        assert!(matches!(e, DbError::TooSlow { .. }), "{e}");
        assert_eq!(e.exit_code(), 1);
        let e = db
            .write(|tx| {
                tx.execute("DELETE FROM session_watch_cursors", [])?;
                tx.query_row(endless, [], |r| r.get::<_, i64>(0))
            })
            .unwrap_err();
        assert!(matches!(e, DbError::TooSlow { .. }), "{e}");
        // Re-armed per operation: the next one has its own time.
        db.deadline.limit = QUERY_TIME_LIMIT;
        let n: i64 = db
            .read(|tx| {
                tx.query_row("SELECT count(*) FROM session_state_events", [], |r| {
                    r.get(0)
                })
            })
            .unwrap();
        assert_eq!(n, 0);
    }

    #[test]
    fn writers_refuse_objects_on_the_touched_tables_only() {
        let planted = [
            (
                "CREATE TRIGGER t1 AFTER INSERT ON session_state_events BEGIN DELETE FROM session_watch_cursors; END;",
                "trigger \"t1\" on session_state_events",
            ),
            (
                "CREATE TRIGGER t2 BEFORE UPDATE ON Session_Watch_Cursors BEGIN SELECT 1; END;",
                "trigger \"t2\" on Session_Watch_Cursors",
            ),
            (
                "CREATE VIEW v1 AS SELECT * FROM \"session_state_heads\";",
                "view \"v1\" reading session_state_heads",
            ),
            (
                "DROP TABLE session_upstream_links; CREATE VIEW session_upstream_links AS SELECT 1 AS session_key;",
                "view \"session_upstream_links\" in place of the table session_upstream_links",
            ),
            (
                "CREATE TABLE kid (k TEXT, a TEXT, FOREIGN KEY (k, a) REFERENCES session_state_heads(session_key, agent_id) ON DELETE CASCADE);",
                "foreign key of table \"kid\" referencing session_state_heads",
            ),
        ];
        for (sql, want) in planted {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("openclaw.sqlite");
            drop(StateDb::open_write(&path).unwrap());
            Connection::open(&path).unwrap().execute_batch(sql).unwrap();
            let e = StateDb::open_write(&path).unwrap_err();
            assert_eq!(e.exit_code(), 65, "{e}");
            assert!(e.to_string().contains(want), "{sql}: {e}");
            // Readers still open it: nothing planted runs on a read.
            assert!(StateDb::open_read(&path).is_ok(), "{sql}");
        }
        // Elsewhere in the database, and words that merely contain a table name, are fine.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("openclaw.sqlite");
        drop(StateDb::open_write(&path).unwrap());
        Connection::open(&path)
            .unwrap()
            .execute_batch(
                "CREATE TABLE notes (n TEXT); \
                 CREATE TRIGGER notes_t AFTER INSERT ON notes BEGIN SELECT 1; END; \
                 CREATE VIEW notes_v AS SELECT n AS session_state_heads_copy FROM notes;",
            )
            .unwrap();
        assert!(StateDb::open_write(&path).is_ok());
    }

    #[test]
    fn the_canonical_schema_passes_the_check() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(CANONICAL_SCHEMA_SQL).unwrap();
        check_touched_tables(&conn, Path::new("mem")).unwrap();
        assert!(mentions(
            "select * from main.session_watch_cursors",
            "session_watch_cursors"
        ));
        assert!(mentions(
            "FROM [Session_Watch_Cursors]",
            "session_watch_cursors"
        ));
        assert!(!mentions(
            "FROM session_watch_cursors_old",
            "session_watch_cursors"
        ));
    }

    #[test]
    fn mountinfo_decoding_and_policies() {
        assert_eq!(decode_mountinfo("/a\\040b"), "/a b");
        assert_eq!(mount_type_policy("nfs4", None), JournalPolicy::Rollback);
        assert_eq!(
            mount_type_policy("fuse.sshfs", None),
            JournalPolicy::Unsupported
        );
        assert_eq!(mount_type_policy("ext4", None), JournalPolicy::Wal);
    }
}
