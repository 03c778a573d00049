//! The transcript write lock, exactly as the gateway takes it (`store.md` §5).
//!
//! A lock is a sidecar file `<realpath(dirname(target))>/<basename(target)>.lock`, created
//! with `O_EXCL` and holding a small pretty-printed JSON payload (`pid`, `createdAt`,
//! `maxHoldMs`, `starttime`). A contended lock is polled every 50 ms; a stale one is
//! reclaimed or reported by the gateway's rules (§5.4), with one deliberate difference
//! (spec decision 9): a live holder whose argv looks like a clawstate binary (`claw-*`) is a
//! legitimate owner, so clawstate processes exclude each other as gateway processes do.
//!
//! A second deliberate difference (issue 23 item 4): a live holder that has the lock file
//! open (the gateway and clawstate keep it open while they hold it), or whose argv is a
//! gateway's (a running gateway renames itself `openclaw-gateway`, which the gateway's own
//! owner rule does not recognise), is *in use*. The doctor's view ([`inspect_lock`]) still
//! reports the gateway's reasons (`non-openclaw-owner`), but an in-use lock is never
//! `removable`, and an acquirer never takes it over: it waits, then times out (75).
//!
//! Locks are released when their [`WriteLockGuard`] is dropped or explicitly released. The
//! gateway also releases every held lock from `exit` and SIGINT/SIGTERM/SIGQUIT/SIGABRT
//! handlers and runs a max-hold watchdog; clawstate does neither: a process that exits
//! without unwinding (`std::process::exit`, a fatal signal) leaves its lock file behind, and
//! the next acquirer reclaims it as `dead-pid` (its pid is gone) as the gateway would.

use crate::fs::process;
use crate::install::paths::absolutize;
use crate::js;
use crate::js::node_path;
use serde_json::Value;
use std::collections::HashMap;
use std::ffi::OsString;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{LazyLock, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use thiserror::Error;

/// Default `session.writeLock.acquireTimeoutMs`.
pub const DEFAULT_ACQUIRE_TIMEOUT_MS: u64 = 60_000;
/// Default `session.writeLock.staleMs`.
pub const DEFAULT_STALE_MS: u64 = 1_800_000;
/// Default `session.writeLock.maxHoldMs`.
pub const DEFAULT_MAX_HOLD_MS: u64 = 300_000;
/// Environment override of the acquire timeout (digits or `Infinity`).
pub const ENV_ACQUIRE_TIMEOUT_MS: &str = "OPENCLAW_SESSION_WRITE_LOCK_ACQUIRE_TIMEOUT_MS";
/// Environment override of the stale threshold.
pub const ENV_STALE_MS: &str = "OPENCLAW_SESSION_WRITE_LOCK_STALE_MS";
/// Environment override of the maximum hold time written into the payload.
pub const ENV_MAX_HOLD_MS: &str = "OPENCLAW_SESSION_WRITE_LOCK_MAX_HOLD_MS";

/// The gateway's `MAX_TIMER_TIMEOUT_MS`.
const MAX_TIMER_TIMEOUT_MS: u64 = 2_147_000_000;
/// Extra hold time the gateway grants compaction on top of its timeout.
const COMPACTION_GRACE_MS: u64 = 120_000;
/// `Number.MAX_SAFE_INTEGER`.
const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;
/// The constant retry delay (min 50, max 1000, factor 1, no jitter).
const POLL_MS: u64 = 50;
/// Grace before a lock with a garbage payload may be reclaimed by its mtime.
const ORPHAN_PAYLOAD_GRACE_MS: u64 = 30_000;
/// The same grace when the acquire timeout is shorter than 30 s.
const SHORT_TIMEOUT_ORPHAN_PAYLOAD_GRACE_MS: u64 = 5_000;

/// Resolved write-lock settings (`store.md` §5.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WriteLockSettings {
    /// How long to wait for a contended lock; `None` is `Infinity` (wait forever).
    pub acquire_timeout_ms: Option<u64>,
    /// Age of `createdAt` beyond which a lock is stale (`too-old`).
    pub stale_ms: u64,
    /// Maximum hold time written into our own payload (`maxHoldMs`).
    pub max_hold_ms: u64,
}

impl Default for WriteLockSettings {
    fn default() -> Self {
        WriteLockSettings {
            acquire_timeout_ms: Some(DEFAULT_ACQUIRE_TIMEOUT_MS),
            stale_ms: DEFAULT_STALE_MS,
            max_hold_ms: DEFAULT_MAX_HOLD_MS,
        }
    }
}

/// A millisecond setting that may be `Infinity`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ms {
    Finite(u64),
    Infinite,
}

impl WriteLockSettings {
    /// Resolve the settings from the whole parsed config (`Value::Null` when there is none)
    /// and an environment lookup: a valid environment value wins over
    /// `session.writeLock.<key>`, which wins over the default; invalid or zero values fall
    /// through, and `Infinity` is accepted for the acquire timeout only.
    pub fn resolve(config: &Value, env: impl Fn(&str) -> Option<String>) -> Self {
        let config_value = |key: &str| {
            config
                .get("session")
                .and_then(|s| s.get("writeLock"))
                .and_then(|w| w.get(key))
                .and_then(positive_ms_from_json)
        };
        let acquire = env_ms(&env, ENV_ACQUIRE_TIMEOUT_MS, true)
            .or_else(|| config_value("acquireTimeoutMs").map(Ms::Finite))
            .unwrap_or(Ms::Finite(DEFAULT_ACQUIRE_TIMEOUT_MS));
        let finite = |env_key: &str, key: &str, fallback: u64| match env_ms(&env, env_key, false) {
            Some(Ms::Finite(ms)) => ms,
            _ => config_value(key).unwrap_or(fallback),
        };
        WriteLockSettings {
            acquire_timeout_ms: match acquire {
                Ms::Finite(ms) => Some(ms),
                Ms::Infinite => None,
            },
            stale_ms: finite(ENV_STALE_MS, "staleMs", DEFAULT_STALE_MS),
            max_hold_ms: finite(ENV_MAX_HOLD_MS, "maxHoldMs", DEFAULT_MAX_HOLD_MS),
        }
    }

    /// The `maxHoldMs` the gateway uses while compacting with this acquire timeout:
    /// `min(MAX_TIMER, max(300000, timeout + 120000))`, `MAX_TIMER` for `Infinity`.
    pub fn compaction_max_hold_ms(&self) -> u64 {
        match self.effective().0 {
            None => MAX_TIMER_TIMEOUT_MS,
            Some(t) => MAX_TIMER_TIMEOUT_MS
                .min(DEFAULT_MAX_HOLD_MS.max(t.saturating_add(COMPACTION_GRACE_MS))),
        }
    }

    /// The effective values, with zero falling back to the defaults as the gateway's
    /// `resolvePositiveMs` does.
    fn effective(&self) -> (Option<u64>, u64, u64) {
        let timeout = match self.acquire_timeout_ms {
            Some(0) => Some(DEFAULT_ACQUIRE_TIMEOUT_MS),
            other => other,
        };
        let nonzero = |v: u64, d: u64| if v == 0 { d } else { v };
        (
            timeout,
            nonzero(self.stale_ms, DEFAULT_STALE_MS),
            nonzero(self.max_hold_ms, DEFAULT_MAX_HOLD_MS),
        )
    }
}

/// `readPositiveMsEnv`: trimmed, then `Infinity` or ASCII digits forming a positive safe integer.
fn env_ms(env: &impl Fn(&str) -> Option<String>, key: &str, allow_infinity: bool) -> Option<Ms> {
    let raw = env(key)?;
    let raw = js::trim(&raw);
    if raw.is_empty() {
        return None;
    }
    if raw == "Infinity" {
        return allow_infinity.then_some(Ms::Infinite);
    }
    if !raw.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let digits = raw.trim_start_matches('0');
    if digits.is_empty() || digits.len() > 16 {
        return None;
    }
    let value: u64 = digits.parse().ok()?;
    (value > 0 && value <= MAX_SAFE_INTEGER).then_some(Ms::Finite(value))
}

/// `parsePositiveMs` for a config value: a JSON number that is a positive safe integer.
fn positive_ms_from_json(value: &Value) -> Option<u64> {
    let n = value.as_f64()?;
    (n.is_finite() && n > 0.0 && n.fract() == 0.0 && n <= MAX_SAFE_INTEGER as f64)
        .then_some(n as u64)
}

/// Why a lock is considered stale (`store.md` §5.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StaleReason {
    /// The payload has no valid pid.
    MissingPid,
    /// The pid is not alive (or is a zombie).
    DeadPid,
    /// The pid is alive but its start time differs from the stored one.
    RecycledPid,
    /// `createdAt` is absent or does not parse.
    InvalidCreatedAt,
    /// `createdAt` is older than `staleMs`.
    TooOld,
    /// `createdAt` is older than the holder's own `maxHoldMs`.
    HoldExceeded,
    /// The lock names this very process, which does not hold it.
    OrphanSelfPid,
    /// The holder is alive but looks like neither OpenClaw nor clawstate.
    NonOpenclawOwner,
}

impl StaleReason {
    /// The gateway's spelling of the reason, e.g. `dead-pid`.
    pub fn as_str(self) -> &'static str {
        match self {
            StaleReason::MissingPid => "missing-pid",
            StaleReason::DeadPid => "dead-pid",
            StaleReason::RecycledPid => "recycled-pid",
            StaleReason::InvalidCreatedAt => "invalid-createdAt",
            StaleReason::TooOld => "too-old",
            StaleReason::HoldExceeded => "hold-exceeded",
            StaleReason::OrphanSelfPid => "orphan-self-pid",
            StaleReason::NonOpenclawOwner => "non-openclaw-owner",
        }
    }

    /// Whether the reason alone never justifies removing the lock (`too-old`, `hold-exceeded`).
    pub fn is_report_only(self) -> bool {
        matches!(self, StaleReason::TooOld | StaleReason::HoldExceeded)
    }
}

impl std::fmt::Display for StaleReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Failure to take, inspect or release a write lock.
#[derive(Debug, Error)]
pub enum WriteLockError {
    /// The lock stayed held until the timeout (the gateway's `SessionWriteLockTimeoutError`).
    #[error("{message}")]
    Timeout {
        /// `session file locked (timeout <ms>ms): <owner> <lockPath>`.
        message: String,
    },
    /// The lock is stale but may not be removed (the gateway's `SessionWriteLockStaleError`).
    #[error("{message}")]
    Stale {
        /// `session file lock stale (<reasons>): <owner> <lockPath>`.
        message: String,
    },
    /// A file-system operation on the lock or its directory failed.
    #[error("session write lock {}: {source}", path.display())]
    Io {
        /// The file or directory involved.
        path: PathBuf,
        /// The underlying error.
        source: io::Error,
    },
}

impl crate::exit::ExitCode for WriteLockError {
    fn exit_code(&self) -> i32 {
        match self {
            WriteLockError::Timeout { .. } | WriteLockError::Stale { .. } => crate::exit::TEMP_FAIL,
            WriteLockError::Io { .. } => crate::exit::CANT_CREATE,
        }
    }
}

fn io_err(path: &Path) -> impl FnOnce(io::Error) -> WriteLockError + '_ {
    move |source| WriteLockError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Options of one acquisition.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AcquireOptions {
    /// Let a second acquisition of a lock this process already holds succeed (a counter).
    pub allow_reentrant: bool,
}

/// Entry point for taking transcript write locks.
#[derive(Debug)]
pub struct WriteLock;

/// A lock this process holds, shared by its reentrant guards.
struct Held {
    id: u64,
    count: usize,
    lock_path: PathBuf,
    snapshot: Snapshot,
    /// Kept open while the lock is held, as the gateway does.
    _file: File,
}

/// Locks held by this process, by normalised target path.
static HELD: LazyLock<Mutex<HashMap<PathBuf, Held>>> = LazyLock::new(|| Mutex::new(HashMap::new()));
/// Identity of each created lock, so a guard never releases someone else's.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

fn held_locks() -> MutexGuard<'static, HashMap<PathBuf, Held>> {
    HELD.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn held_by_this_process(normalized: &Path) -> bool {
    held_locks().contains_key(normalized)
}

impl WriteLock {
    /// Take the write lock of `target` (a transcript path), waiting per `settings`.
    ///
    /// Fails with [`WriteLockError::Timeout`] when the lock stays held, with
    /// [`WriteLockError::Stale`] at once when the holder is a live OpenClaw (or clawstate)
    /// process whose lock is only `too-old`/`hold-exceeded`, and with
    /// [`WriteLockError::Io`] when the directory or lock file cannot be created.
    #[must_use = "the write lock is released when the returned guard is dropped"]
    pub fn acquire(
        target: &Path,
        settings: &WriteLockSettings,
        opts: AcquireOptions,
    ) -> Result<WriteLockGuard, WriteLockError> {
        let (timeout_ms, stale_ms, max_hold_ms) = settings.effective();
        let grace_ms = match timeout_ms {
            Some(t) if t < ORPHAN_PAYLOAD_GRACE_MS => SHORT_TIMEOUT_ORPHAN_PAYLOAD_GRACE_MS,
            _ => ORPHAN_PAYLOAD_GRACE_MS,
        };
        let cwd = std::env::current_dir().map_err(io_err(target))?;
        let resolved = absolutize(target, &cwd);
        let (dir, base) = split_dir_base(&resolved);
        fs::create_dir_all(&dir).map_err(io_err(&dir))?;
        let normalized = match fs::canonicalize(&dir) {
            Ok(real) => node_path::join(&real, &base),
            Err(_) => resolved.clone(),
        };
        let mut lock_os = normalized.clone().into_os_string();
        lock_os.push(".lock");
        let lock_path = PathBuf::from(lock_os);

        if opts.allow_reentrant {
            let mut held = held_locks();
            if let Some(entry) = held.get_mut(&normalized) {
                entry.count += 1;
                return Ok(WriteLockGuard {
                    key: normalized,
                    id: entry.id,
                    lock_path: entry.lock_path.clone(),
                    active: true,
                });
            }
        }

        let ctx = AcquireCtx {
            lock_path: &lock_path,
            normalized: &normalized,
            timeout_ms,
            stale_ms,
            grace_ms,
            started: Instant::now(),
        };
        loop {
            match create_exclusive(&lock_path) {
                Ok(file) => return register(file, &lock_path, normalized, max_hold_ms),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(io_err(&lock_path)(e)),
            }
            let now = now_ms();
            let Some(snapshot) = read_snapshot(&lock_path).map_err(io_err(&lock_path))? else {
                // Vanished between create and read: retry at once (bounded by the timeout).
                if ctx.expired() {
                    return Err(ctx.timeout_error());
                }
                continue;
            };
            let payload = Payload::parse(&snapshot.raw);
            let held = held_by_this_process(&normalized);
            let inspected =
                inspect_payload(&payload, &lock_path, stale_ms, now, Ctx::acquiring(held));
            if should_report_stale(&lock_path, &inspected, held, stale_ms, now, grace_ms) {
                if !still_present(&lock_path, &snapshot)? {
                    continue;
                }
                if ctx.remove_if_approved(&payload, &snapshot)? {
                    continue;
                }
                match ctx.stale_failure() {
                    Some(err) => return Err(err),
                    None => continue,
                }
            }
            let elapsed = ctx.started.elapsed();
            let delay = match timeout_ms {
                Some(t) => {
                    let t = Duration::from_millis(t);
                    if elapsed >= t {
                        return Err(ctx.timeout_error());
                    }
                    Duration::from_millis(POLL_MS).min(t - elapsed)
                }
                None => Duration::from_millis(POLL_MS),
            };
            #[cfg(test)]
            tests::SLEEPS.with(|n| n.set(n.get() + 1));
            std::thread::sleep(delay);
        }
    }
}

/// What one acquisition needs on its slow paths.
struct AcquireCtx<'a> {
    lock_path: &'a Path,
    normalized: &'a Path,
    timeout_ms: Option<u64>,
    stale_ms: u64,
    grace_ms: u64,
    started: Instant,
}

impl AcquireCtx<'_> {
    fn expired(&self) -> bool {
        self.timeout_ms
            .is_some_and(|t| self.started.elapsed() >= Duration::from_millis(t))
    }

    /// The gateway's `removeStaleLockIfAllowed`: true when the lock was removed or changed
    /// (retry at once), false when removal is not approved.
    fn remove_if_approved(
        &self,
        payload: &Payload,
        snapshot: &Snapshot,
    ) -> Result<bool, WriteLockError> {
        let now = now_ms();
        let held = held_by_this_process(self.normalized);
        let inspected = inspect_payload(
            payload,
            self.lock_path,
            self.stale_ms,
            now,
            Ctx::acquiring(held),
        );
        if !should_remove(
            self.lock_path,
            &inspected,
            self.stale_ms,
            now,
            self.grace_ms,
        ) {
            return Ok(false);
        }
        if !still_present(self.lock_path, snapshot)? {
            return Ok(true);
        }
        match fs::remove_file(self.lock_path) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(true),
            Err(_) => Ok(false),
        }
    }

    /// After a stale lock could not be removed: `None` to retry (it vanished or no longer
    /// looks stale), or the stale error.
    fn stale_failure(&self) -> Option<WriteLockError> {
        let (payload, missing) = match read_snapshot(self.lock_path) {
            Ok(Some(s)) => (Payload::parse(&s.raw), false),
            Ok(None) => (Payload::default(), true),
            Err(_) => (Payload::default(), false),
        };
        let now = now_ms();
        let held = held_by_this_process(self.normalized);
        let inspected = inspect_payload(
            &payload,
            self.lock_path,
            self.stale_ms,
            now,
            Ctx::acquiring(held),
        );
        if !self.expired()
            && (missing
                || !should_report_stale(
                    self.lock_path,
                    &inspected,
                    held,
                    self.stale_ms,
                    now,
                    self.grace_ms,
                ))
        {
            return None;
        }
        let reasons = if inspected.reasons.is_empty() {
            "unknown".to_string()
        } else {
            join_reasons(&inspected.reasons)
        };
        Some(WriteLockError::Stale {
            message: format!(
                "session file lock stale ({reasons}): {} {}",
                describe_owner(&inspected),
                self.lock_path.to_string_lossy()
            ),
        })
    }

    fn timeout_error(&self) -> WriteLockError {
        let payload = match read_lock_bytes(self.lock_path) {
            Ok(Some(raw)) => Payload::parse(&raw),
            _ => Payload::default(),
        };
        let now = now_ms();
        let held = held_by_this_process(self.normalized);
        let inspected = inspect_payload(
            &payload,
            self.lock_path,
            self.stale_ms,
            now,
            Ctx::acquiring(held),
        );
        let timeout = self.timeout_ms.unwrap_or(u64::MAX);
        WriteLockError::Timeout {
            message: format!(
                "session file locked (timeout {timeout}ms): {} {}",
                describe_owner(&inspected),
                self.lock_path.to_string_lossy()
            ),
        }
    }
}

fn join_reasons(reasons: &[StaleReason]) -> String {
    reasons
        .iter()
        .map(|r| r.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The gateway's `open(path, "wx")` (`O_WRONLY|O_CREAT|O_EXCL`), but mode 0600 as
/// openclaw 2026.8.1 creates it, not 2026.7.1's 0666 before the umask: the payload (pid,
/// start time) is no one else's business, and a umask of 000 must not make it writable.
fn create_exclusive(lock_path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(lock_path)
}

/// Write our payload into a freshly created lock file and record it as held.
fn register(
    mut file: File,
    lock_path: &Path,
    normalized: PathBuf,
    max_hold_ms: u64,
) -> Result<WriteLockGuard, WriteLockError> {
    let pid = std::process::id();
    let raw = format_payload(
        pid,
        &js::to_iso_string(now_ms()),
        max_hold_ms,
        process::start_time(pid),
    );
    let written = file
        .write_all(raw.as_bytes())
        .and_then(|()| file.metadata());
    let meta = match written {
        Ok(meta) => meta,
        Err(e) => {
            // Remove our half-written file (only if it is still ours) and report.
            if let Ok(current) = fs::symlink_metadata(lock_path) {
                if let Ok(ours) = file.metadata() {
                    if current.ino() == ours.ino() && current.dev() == ours.dev() {
                        let _ = fs::remove_file(lock_path);
                    }
                }
            }
            return Err(io_err(lock_path)(e));
        }
    };
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    let held = Held {
        id,
        count: 1,
        lock_path: lock_path.to_path_buf(),
        snapshot: Snapshot {
            raw: raw.into_bytes(),
            dev: meta.dev(),
            ino: meta.ino(),
        },
        _file: file,
    };
    // A previous entry for this target (its file was removed behind our back) is replaced;
    // its guards then release nothing, as in the gateway.
    held_locks().insert(normalized.clone(), held);
    Ok(WriteLockGuard {
        key: normalized,
        id,
        lock_path: lock_path.to_path_buf(),
        active: true,
    })
}

/// The lock payload: pretty JSON (2-space indent), keys in the gateway's order, then `\n`.
fn format_payload(pid: u32, created_at: &str, max_hold_ms: u64, starttime: Option<u64>) -> String {
    let mut out = format!(
        "{{\n  \"pid\": {pid},\n  \"createdAt\": \"{created_at}\",\n  \"maxHoldMs\": {max_hold_ms}"
    );
    if let Some(st) = starttime {
        out.push_str(&format!(",\n  \"starttime\": {st}"));
    }
    out.push_str("\n}\n");
    out
}

/// A held write lock; released (count decremented, file removed at zero) on drop.
#[must_use = "the write lock is released when this guard is dropped"]
#[derive(Debug)]
pub struct WriteLockGuard {
    key: PathBuf,
    id: u64,
    lock_path: PathBuf,
    active: bool,
}

impl WriteLockGuard {
    /// The lock file's path (`<realpath(dir)>/<name>.lock`).
    pub fn lock_path(&self) -> &Path {
        &self.lock_path
    }

    /// Release now, reporting a failure to remove the lock file.
    pub fn release(mut self) -> Result<(), WriteLockError> {
        self.release_inner()
    }

    fn release_inner(&mut self) -> Result<(), WriteLockError> {
        if !self.active {
            return Ok(());
        }
        self.active = false;
        let held = {
            let mut held = held_locks();
            match held.get_mut(&self.key) {
                Some(entry) if entry.id == self.id => {
                    entry.count -= 1;
                    if entry.count > 0 {
                        return Ok(());
                    }
                }
                _ => return Ok(()),
            }
            held.remove(&self.key)
        };
        let Some(Held {
            lock_path,
            snapshot,
            _file,
            ..
        }) = held
        else {
            return Ok(());
        };
        drop(_file);
        remove_snapshot_if_unchanged(&lock_path, &snapshot).map(|_| ())
    }
}

impl Drop for WriteLockGuard {
    fn drop(&mut self) {
        let _ = self.release_inner();
    }
}

/// A lock file as observed: its bytes and identity (from `lstat`).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Snapshot {
    raw: Vec<u8>,
    dev: u64,
    ino: u64,
}

/// The largest lock payload read (the gateway writes about 150 bytes).
const LOCK_PAYLOAD_MAX_BYTES: u64 = 64 << 10;

/// A lock file's bytes, read as a data file ([`crate::fs::data_file`]): never through a link,
/// never blocking on a FIFO, at most [`LOCK_PAYLOAD_MAX_BYTES`]. What is not a regular file
/// (or is larger) reads as no payload at all, as a garbage payload does.
fn read_lock_bytes(lock_path: &Path) -> io::Result<Option<Vec<u8>>> {
    let (Some(dir), Some(name)) = (lock_path.parent(), lock_path.file_name()) else {
        return Ok(None);
    };
    let Ok(file) = crate::fs::data_file::DataPath::beneath(dir, Path::new(name)) else {
        return Ok(None);
    };
    match file.read_small(LOCK_PAYLOAD_MAX_BYTES, "a lock file") {
        Ok(raw) => Ok(Some(raw)),
        Err(e) if e.is_not_found() => Ok(None),
        Err(crate::fs::data_file::DataFileError::Io { source, .. }) => Err(source),
        Err(_) => Ok(Some(Vec::new())),
    }
}

/// `lstat` + read; `None` when the file does not exist.
fn read_snapshot(lock_path: &Path) -> io::Result<Option<Snapshot>> {
    let meta = match fs::symlink_metadata(lock_path) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let Some(raw) = read_lock_bytes(lock_path)? else {
        return Ok(None);
    };
    Ok(Some(Snapshot {
        raw,
        dev: meta.dev(),
        ino: meta.ino(),
    }))
}

fn still_present(lock_path: &Path, observed: &Snapshot) -> Result<bool, WriteLockError> {
    Ok(read_snapshot(lock_path)
        .map_err(io_err(lock_path))?
        .is_some_and(|current| current == *observed))
}

/// Delete the lock file only if it still has the observed inode and bytes.
fn remove_snapshot_if_unchanged(
    lock_path: &Path,
    observed: &Snapshot,
) -> Result<bool, WriteLockError> {
    if !still_present(lock_path, observed)? {
        return Ok(false);
    }
    match fs::remove_file(lock_path) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(io_err(lock_path)(e)),
    }
}

/// The fields of a lock payload the gateway accepts (numbers kept as JavaScript numbers).
#[derive(Debug, Clone, Default, PartialEq)]
struct Payload {
    pid: Option<f64>,
    created_at: Option<String>,
    starttime: Option<f64>,
    max_hold_ms: Option<f64>,
}

impl Payload {
    /// `parseLockPayload`: unparsable or non-object JSON gives an empty payload.
    fn parse(raw: &[u8]) -> Payload {
        let Ok(Value::Object(map)) = crate::js::jsjson::parse_value(&String::from_utf8_lossy(raw))
        else {
            return Payload::default();
        };
        let lock_number = |key: &str| {
            map.get(key)
                .and_then(Value::as_f64)
                .filter(|n| n.is_finite() && n.fract() == 0.0 && *n >= 0.0)
        };
        Payload {
            pid: lock_number("pid").filter(|n| *n > 0.0),
            created_at: map
                .get("createdAt")
                .and_then(Value::as_str)
                .map(str::to_string),
            starttime: lock_number("starttime"),
            max_hold_ms: lock_number("maxHoldMs").filter(|n| *n > 0.0),
        }
    }
}

/// Who is asking, for the stale rules.
#[derive(Debug, Clone, Copy)]
struct Ctx {
    held_by_this_process: bool,
    reclaim_without_starttime: bool,
    respect_max_hold: bool,
    /// Whether a holder in use (see [`holder_in_use`]) is spared `non-openclaw-owner`: when
    /// acquiring, clawstate never takes over such a lock; the doctor's view keeps the
    /// gateway's reasons and only withholds `removable`.
    spare_in_use: bool,
}

impl Ctx {
    fn acquiring(held: bool) -> Ctx {
        Ctx {
            held_by_this_process: held,
            reclaim_without_starttime: true,
            respect_max_hold: !held,
            spare_in_use: true,
        }
    }

    fn doctor() -> Ctx {
        Ctx {
            held_by_this_process: false,
            reclaim_without_starttime: false,
            respect_max_hold: false,
            spare_in_use: false,
        }
    }
}

/// The gateway's `inspectLockPayloadForSession`, plus whether the holder is in use.
#[derive(Debug, Clone, PartialEq)]
struct Inspected {
    pid: Option<f64>,
    alive: bool,
    age_ms: Option<i64>,
    reasons: Vec<StaleReason>,
    /// The holder is another live process (same start time) that has the lock file open or
    /// is a gateway by its argv ([`holder_in_use`]).
    in_use: bool,
    /// The holder's argv[0] when it is alive and readable (`openclaw-gateway`).
    holder: Option<String>,
}

fn pid_as_u32(pid: f64) -> Option<u32> {
    (pid >= 1.0 && pid <= u32::MAX as f64).then_some(pid as u32)
}

fn inspect_payload(
    payload: &Payload,
    lock_path: &Path,
    stale_ms: u64,
    now_ms: i64,
    ctx: Ctx,
) -> Inspected {
    let pid = payload.pid;
    let alive = pid.and_then(pid_as_u32).is_some_and(process::is_alive);
    let age_ms = payload
        .created_at
        .as_deref()
        .and_then(js::date_parse)
        .map(|created| now_ms.saturating_sub(created).max(0));
    let recycled = alive
        && payload.starttime.is_some_and(|stored| {
            pid.and_then(pid_as_u32)
                .and_then(process::start_time)
                .is_some_and(|current| current as f64 != stored)
        });
    let mut reasons = Vec::new();
    match pid {
        None => reasons.push(StaleReason::MissingPid),
        Some(_) if !alive => reasons.push(StaleReason::DeadPid),
        Some(_) if recycled => reasons.push(StaleReason::RecycledPid),
        Some(_) => {}
    }
    match age_ms {
        None => reasons.push(StaleReason::InvalidCreatedAt),
        Some(age) if age as f64 > stale_ms as f64 => reasons.push(StaleReason::TooOld),
        Some(_) => {}
    }
    if ctx.respect_max_hold {
        if let (Some(max_hold), Some(age)) = (payload.max_hold_ms, age_ms) {
            if age as f64 > max_hold {
                reasons.push(StaleReason::HoldExceeded);
            }
        }
    }
    let own_pid = std::process::id();
    let other_live = pid
        .and_then(pid_as_u32)
        .filter(|&p| alive && !recycled && p != own_pid);
    let argv = other_live.and_then(process::cmdline);
    let in_use = other_live.is_some_and(|p| holder_in_use(p, argv.as_deref(), lock_path));
    let mut inspected = Inspected {
        pid,
        alive,
        age_ms,
        reasons,
        in_use,
        holder: argv.and_then(|a| a.into_iter().next()),
    };
    if pid == Some(own_pid as f64) && !ctx.held_by_this_process {
        let orphan = match payload.starttime {
            None => ctx.reclaim_without_starttime,
            Some(stored) => process::start_time(own_pid).is_some_and(|c| c as f64 == stored),
        };
        if orphan {
            if !inspected.reasons.contains(&StaleReason::OrphanSelfPid) {
                inspected.reasons.push(StaleReason::OrphanSelfPid);
            }
            return inspected;
        }
    }
    if let Some(owner) = pid.and_then(pid_as_u32) {
        let own_held = owner == own_pid && ctx.held_by_this_process;
        if alive
            && !recycled
            && !own_held
            && is_foreign_owner(owner)
            && !(ctx.spare_in_use && inspected.in_use)
        {
            inspected.reasons.push(StaleReason::NonOpenclawOwner);
        }
    }
    inspected
}

/// A live holder whose argv is readable, non-blank and looks like neither OpenClaw nor
/// clawstate (decision 9). Unreadable argv is never foreign.
fn is_foreign_owner(pid: u32) -> bool {
    let Some(argv) = process::cmdline(pid) else {
        return false;
    };
    if argv.iter().all(|a| js::trim(a).is_empty()) {
        return false;
    }
    !process::looks_like_openclaw(&argv) && !process::looks_like_clawstate(&argv)
}

/// Whether a live holder is using its lock: it has the lock file open (the gateway and
/// clawstate keep it open while they hold it), or its argv is a gateway's (a running gateway
/// calls itself `openclaw-gateway`, which the gateway's owner rule does not recognise).
/// Such a lock is never advised for removal nor taken over, whatever the stale reasons.
fn holder_in_use(pid: u32, argv: Option<&[String]>, lock_path: &Path) -> bool {
    if argv.is_some_and(process::looks_like_gateway) {
        return true;
    }
    // The kernel shows the lock's directories resolved.
    let shown = match (lock_path.parent(), lock_path.file_name()) {
        (Some(dir), Some(name)) => fs::canonicalize(dir)
            .map(|d| d.join(name))
            .unwrap_or_else(|_| lock_path.to_path_buf()),
        _ => lock_path.to_path_buf(),
    };
    process::holds_open(pid, &shown)
}

/// Only `missing-pid`/`invalid-createdAt`: a garbage payload, judged by the file's mtime.
fn needs_mtime_fallback(inspected: &Inspected) -> bool {
    !inspected.reasons.is_empty()
        && inspected
            .reasons
            .iter()
            .all(|r| matches!(r, StaleReason::MissingPid | StaleReason::InvalidCreatedAt))
}

/// Whether the lock file's mtime is more than `threshold_ms` before `now_ms`
/// (a vanished file is not; an unreadable one is).
fn mtime_older_than(lock_path: &Path, now_ms: i64, threshold_ms: u64) -> bool {
    match fs::metadata(lock_path) {
        Ok(meta) => {
            let mtime_ms = meta.mtime() as f64 * 1000.0 + meta.mtime_nsec() as f64 / 1e6;
            (now_ms as f64 - mtime_ms).max(0.0) > threshold_ms as f64
        }
        Err(e) => e.kind() != io::ErrorKind::NotFound,
    }
}

/// `shouldReportContendedLockStale`.
fn should_report_stale(
    lock_path: &Path,
    inspected: &Inspected,
    held: bool,
    stale_ms: u64,
    now_ms: i64,
    grace_ms: u64,
) -> bool {
    if inspected.reasons.is_empty() || held {
        return false;
    }
    if needs_mtime_fallback(inspected) {
        return mtime_older_than(lock_path, now_ms, stale_ms.min(grace_ms));
    }
    true
}

/// `shouldRemoveContendedLockFile`.
fn should_remove(
    lock_path: &Path,
    inspected: &Inspected,
    stale_ms: u64,
    now_ms: i64,
    grace_ms: u64,
) -> bool {
    if inspected.reasons.is_empty() || inspected.reasons.iter().all(|r| r.is_report_only()) {
        return false;
    }
    if !needs_mtime_fallback(inspected) {
        return true;
    }
    mtime_older_than(lock_path, now_ms, stale_ms.min(grace_ms))
}

/// `<owner>` of the error messages: `pid=<p> alive=<b>` or `owner=unknown`, plus ` ageMs=<n>`.
fn describe_owner(inspected: &Inspected) -> String {
    let mut out = match inspected.pid {
        Some(pid) => format!(
            "pid={} alive={}",
            ryu_js::Buffer::new().format(pid),
            inspected.alive
        ),
        None => "owner=unknown".to_string(),
    };
    if let Some(age) = inspected.age_ms {
        out.push_str(&format!(" ageMs={age}"));
    }
    out
}

/// A lock file as `openclaw doctor` sees it (heldByThisProcess = false).
#[derive(Debug, Clone)]
pub struct LockInspection {
    /// The inspected lock file.
    pub lock_path: PathBuf,
    /// The payload's `pid`, when a positive integer (saturated to `u64`).
    pub pid: Option<u64>,
    /// The payload's `createdAt`, when a string.
    pub created_at: Option<String>,
    /// The payload's `starttime`, when a non-negative integer.
    pub starttime: Option<u64>,
    /// The payload's `maxHoldMs`, when a positive integer.
    pub max_hold_ms: Option<u64>,
    /// Whether the pid is alive.
    pub alive: bool,
    /// `now - createdAt` (at least 0), when `createdAt` parses.
    pub age_ms: Option<i64>,
    /// Why the lock is stale, in the gateway's order; empty when it is not.
    pub stale_reasons: Vec<StaleReason>,
    /// Whether `lock break` removes it without `--force`: what `openclaw doctor --fix`
    /// would remove (stale, not only too-old), unless the holder is in use.
    pub removable: bool,
    /// The holder is alive and using the lock: it has the lock file open, or it is a gateway
    /// (`openclaw-gateway`). Never removable, whatever `stale_reasons` say.
    pub in_use: bool,
    /// The holder's argv[0], when it is alive and readable.
    pub holder: Option<String>,
    snapshot: Option<Snapshot>,
}

impl LockInspection {
    /// Whether any stale reason applies.
    pub fn is_stale(&self) -> bool {
        !self.stale_reasons.is_empty()
    }

    /// The reasons joined as the gateway prints them (`dead-pid, too-old`).
    pub fn reasons_string(&self) -> String {
        join_reasons(&self.stale_reasons)
    }
}

/// Inspect one lock file as the doctor and gateway start-up do: no `hold-exceeded`, an own
/// pid without `starttime` is not an orphan, and `removable` = stale, not only report-only
/// reasons, and for a garbage payload an mtime older than `min(staleMs, 30 s)` — except that
/// a lock whose holder is in use (alive with the lock file open, or a gateway) is never
/// removable, though its `stale_reasons` stay what the gateway's rule says.
/// A missing file inspects as an empty payload that is not removable.
pub fn inspect_lock(
    lock_path: &Path,
    settings: &WriteLockSettings,
    now_ms: i64,
) -> Result<LockInspection, WriteLockError> {
    let (_, stale_ms, _) = settings.effective();
    let snapshot = read_snapshot(lock_path).map_err(io_err(lock_path))?;
    let payload = snapshot
        .as_ref()
        .map(|s| Payload::parse(&s.raw))
        .unwrap_or_default();
    let inspected = inspect_payload(&payload, lock_path, stale_ms, now_ms, Ctx::doctor());
    let removable = !inspected.in_use
        && should_remove(
            lock_path,
            &inspected,
            stale_ms,
            now_ms,
            ORPHAN_PAYLOAD_GRACE_MS,
        );
    let to_u64 = |n: f64| n as u64;
    Ok(LockInspection {
        lock_path: lock_path.to_path_buf(),
        pid: payload.pid.map(to_u64),
        created_at: payload.created_at,
        starttime: payload.starttime.map(to_u64),
        max_hold_ms: payload.max_hold_ms.map(to_u64),
        alive: inspected.alive,
        age_ms: inspected.age_ms,
        stale_reasons: inspected.reasons,
        removable,
        in_use: inspected.in_use,
        holder: inspected.holder,
        snapshot,
    })
}

/// Remove an inspected lock file if it still has the inspected inode and bytes (`lock
/// break`). Returns whether it was removed; a changed or vanished file is left alone.
pub fn remove_if_unchanged(
    lock_path: &Path,
    inspection: &LockInspection,
) -> Result<bool, WriteLockError> {
    match &inspection.snapshot {
        Some(observed) => remove_snapshot_if_unchanged(lock_path, observed),
        None => Ok(false),
    }
}

/// Milliseconds since the Unix epoch (`Date.now()`).
pub fn now_ms() -> i64 {
    match SystemTime::now().duration_since(UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_millis()).unwrap_or(i64::MAX),
        Err(e) => -i64::try_from(e.duration().as_millis()).unwrap_or(i64::MAX),
    }
}

// ---- Node path semantics ----------------------------------------------------------------

/// `path.dirname` and `path.basename` of a resolved absolute path.
fn split_dir_base(resolved: &Path) -> (PathBuf, PathBuf) {
    let bytes = resolved.as_os_str().as_bytes();
    match bytes.iter().rposition(|&c| c == b'/') {
        Some(0) => (
            PathBuf::from("/"),
            PathBuf::from(OsString::from_vec(bytes[1..].to_vec())),
        ),
        Some(pos) => (
            PathBuf::from(OsString::from_vec(bytes[..pos].to_vec())),
            PathBuf::from(OsString::from_vec(bytes[pos + 1..].to_vec())),
        ),
        None => (PathBuf::from("."), resolved.to_path_buf()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exit::ExitCode;
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::process::CommandExt;
    use std::process::{Child, Command, Stdio};

    fn settings(timeout_ms: u64) -> WriteLockSettings {
        WriteLockSettings {
            acquire_timeout_ms: Some(timeout_ms),
            ..WriteLockSettings::default()
        }
    }

    fn reentrant() -> AcquireOptions {
        AcquireOptions {
            allow_reentrant: true,
        }
    }

    /// A temp dir and a transcript path inside it, with the canonical lock path.
    fn setup() -> (tempfile::TempDir, PathBuf, PathBuf) {
        let dir = tempfile::tempdir().expect("tempdir");
        let target = dir.path().join("sessions").join("abc.jsonl");
        let real = fs::canonicalize(dir.path()).expect("canonicalize");
        let lock = real.join("sessions").join("abc.jsonl.lock");
        (dir, target, lock)
    }

    fn write_lock_file(lock: &Path, content: &str) {
        fs::create_dir_all(lock.parent().expect("parent")).expect("mkdir");
        fs::write(lock, content).expect("write lock");
    }

    fn payload_for(pid: u32, created_ms: i64, max_hold: u64, starttime: Option<u64>) -> String {
        format_payload(pid, &js::to_iso_string(created_ms), max_hold, starttime)
    }

    fn spawn_with_arg0(arg0: &str) -> Child {
        let child = Command::new("sleep")
            .arg0(arg0)
            .arg("30")
            .stdin(Stdio::null())
            .spawn()
            .expect("spawn sleep");
        process::tests::wait_for_exec(child.id());
        child
    }

    struct Reaper(Child);
    impl Drop for Reaper {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }

    fn umask() -> u32 {
        let status = fs::read_to_string("/proc/self/status").expect("status");
        let line = status
            .lines()
            .find_map(|l| l.strip_prefix("Umask:"))
            .expect("Umask line");
        u32::from_str_radix(line.trim(), 8).expect("octal")
    }

    #[test]
    fn acquire_writes_payload_and_release_removes_it() {
        let (_dir, target, lock) = setup();
        let before = now_ms();
        let guard = WriteLock::acquire(&target, &settings(1000), AcquireOptions::default())
            .expect("acquire");
        assert_eq!(guard.lock_path(), lock);
        let raw = fs::read_to_string(&lock).expect("read lock");
        let re = regex::Regex::new(
            r#"^\{\n  "pid": (\d+),\n  "createdAt": "(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)",\n  "maxHoldMs": 300000,\n  "starttime": (\d+)\n\}\n$"#,
        )
        .expect("regex");
        let caps = re
            .captures(&raw)
            .unwrap_or_else(|| panic!("payload shape: {raw:?}"));
        assert_eq!(caps[1].parse::<u32>().ok(), Some(std::process::id()));
        let created = js::date_parse(&caps[2]).expect("createdAt parses");
        assert!(created >= before && created <= now_ms());
        assert_eq!(
            caps[3].parse::<u64>().ok(),
            process::start_time(std::process::id())
        );
        let mode = fs::metadata(&lock).expect("meta").permissions().mode() & 0o777;
        assert_eq!(mode, 0o600 & !umask());
        guard.release().expect("release");
        assert!(!lock.exists());
    }

    #[test]
    fn lock_path_uses_realpath_of_the_directory() {
        let dir = tempfile::tempdir().expect("tempdir");
        let real_dir = dir.path().join("real");
        fs::create_dir_all(&real_dir).expect("mkdir");
        std::os::unix::fs::symlink(&real_dir, dir.path().join("link")).expect("symlink");
        let target = dir.path().join("link").join("./x/../s.jsonl");
        let guard = WriteLock::acquire(&target, &settings(500), AcquireOptions::default())
            .expect("acquire");
        let expected = fs::canonicalize(&real_dir)
            .expect("canon")
            .join("s.jsonl.lock");
        assert_eq!(guard.lock_path(), expected);
        assert!(expected.exists());
        drop(guard);
        assert!(!expected.exists());
    }

    #[test]
    fn reentrant_counts_and_removes_at_zero() {
        let (_dir, target, lock) = setup();
        let outer = WriteLock::acquire(&target, &settings(500), reentrant()).expect("outer");
        let inner = WriteLock::acquire(&target, &settings(500), reentrant()).expect("inner");
        assert_eq!(inner.lock_path(), lock);
        drop(inner);
        assert!(lock.exists(), "inner release keeps the lock");
        drop(outer);
        assert!(!lock.exists(), "outer release removes it");
    }

    thread_local! {
        /// How many times `acquire` slept between attempts on this thread.
        pub(super) static SLEEPS: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
    }

    /// Sleeps between attempts so far on this thread (deterministic, unlike wall time).
    fn sleeps() -> u32 {
        SLEEPS.with(|n| n.get())
    }

    #[test]
    fn held_by_self_non_reentrant_times_out() {
        let (_dir, target, lock) = setup();
        let _held = WriteLock::acquire(&target, &settings(500), reentrant()).expect("first");
        let started = Instant::now();
        let err = WriteLock::acquire(&target, &settings(200), AcquireOptions::default())
            .expect_err("second acquire must time out");
        assert!(started.elapsed() >= Duration::from_millis(200));
        assert_eq!(err.exit_code(), crate::exit::TEMP_FAIL);
        let msg = err.to_string();
        let re = regex::Regex::new(&format!(
            r"^session file locked \(timeout 200ms\): pid={} alive=true ageMs=\d+ {}$",
            std::process::id(),
            regex::escape(&lock.to_string_lossy())
        ))
        .expect("regex");
        assert!(re.is_match(&msg), "{msg}");
        assert!(matches!(err, WriteLockError::Timeout { .. }));
    }

    #[test]
    fn dead_pid_is_reclaimed_at_once() {
        let (_dir, target, lock) = setup();
        let mut child = Command::new("true").spawn().expect("spawn");
        let pid = child.id();
        child.wait().expect("wait");
        write_lock_file(&lock, &payload_for(pid, now_ms(), 300_000, Some(1)));
        let before = sleeps();
        let guard = WriteLock::acquire(&target, &settings(2000), AcquireOptions::default())
            .expect("reclaim dead pid");
        assert_eq!(sleeps(), before, "at once, without waiting");
        let raw = fs::read_to_string(guard.lock_path()).expect("read");
        assert!(raw.contains(&format!("\"pid\": {}", std::process::id())));
    }

    #[test]
    fn live_non_openclaw_owner_is_reclaimed() {
        let (_dir, target, lock) = setup();
        let child = Reaper(spawn_with_arg0("sleep"));
        let pid = child.0.id();
        write_lock_file(
            &lock,
            &payload_for(pid, now_ms(), 300_000, process::start_time(pid)),
        );
        let insp = inspect_lock(&lock, &settings(1000), now_ms()).expect("inspect");
        assert_eq!(insp.stale_reasons, vec![StaleReason::NonOpenclawOwner]);
        assert!(insp.alive && insp.removable);
        let before = sleeps();
        let _guard = WriteLock::acquire(&target, &settings(2000), AcquireOptions::default())
            .expect("reclaim non-openclaw");
        assert_eq!(sleeps(), before, "at once, without waiting");
    }

    /// A `sleep` holder with `lock` open as its stdin (the gateway and clawstate keep their
    /// lock files open while they hold them).
    fn spawn_holding(arg0: &str, lock: &Path) -> Reaper {
        let child = Command::new("sleep")
            .arg0(arg0)
            .arg("30")
            .stdin(Stdio::from(fs::File::open(lock).expect("open lock")))
            .spawn()
            .expect("spawn sleep");
        process::tests::wait_for_exec(child.id());
        Reaper(child)
    }

    #[test]
    fn the_gateways_title_or_an_open_lock_file_is_in_use() {
        let (_dir, target, lock) = setup();
        write_lock_file(&lock, "");
        // The gateway's bare title: its own owner rule says non-openclaw-owner, which is
        // reported, but the lock is in use and never removable nor taken over.
        for (arg0, holding) in [("openclaw-gateway", false), ("sleep", true)] {
            let child = if holding {
                spawn_holding(arg0, &lock)
            } else {
                Reaper(spawn_with_arg0(arg0))
            };
            let pid = child.0.id();
            write_lock_file(
                &lock,
                &payload_for(pid, now_ms(), 300_000, process::start_time(pid)),
            );
            let insp = inspect_lock(&lock, &settings(1000), now_ms()).expect("inspect");
            assert_eq!(
                insp.stale_reasons,
                vec![StaleReason::NonOpenclawOwner],
                "{arg0}"
            );
            assert!(
                insp.alive && insp.in_use && !insp.removable,
                "{arg0}: {insp:?}"
            );
            assert_eq!(insp.holder.as_deref(), Some(arg0));
            let err = WriteLock::acquire(&target, &settings(300), AcquireOptions::default())
                .expect_err("a lock in use is not taken over");
            assert_eq!(err.exit_code(), crate::exit::TEMP_FAIL, "{arg0}: {err}");
            assert!(err.to_string().contains("session file locked"), "{err}");
            assert!(lock.exists());
        }
    }

    #[test]
    fn live_openclaw_owner_times_out() {
        let (_dir, target, lock) = setup();
        let child = Reaper(spawn_with_arg0("openclaw"));
        let pid = child.0.id();
        write_lock_file(
            &lock,
            &payload_for(pid, now_ms(), 300_000, process::start_time(pid)),
        );
        let (started, before) = (Instant::now(), sleeps());
        let err = WriteLock::acquire(&target, &settings(300), AcquireOptions::default())
            .expect_err("must time out");
        // It waited the whole timeout, retrying every 50 ms and no more (300 / 50 sleeps,
        // the last one cut to what remained), however slow the machine.
        assert!(started.elapsed() >= Duration::from_millis(300));
        assert!(
            sleeps() - before <= 300 / POLL_MS as u32 + 1,
            "{}",
            sleeps() - before
        );
        let re = regex::Regex::new(&format!(
            r"^session file locked \(timeout 300ms\): pid={pid} alive=true ageMs=\d+ {}$",
            regex::escape(&lock.to_string_lossy())
        ))
        .expect("regex");
        assert!(re.is_match(&err.to_string()), "{err}");
        assert!(lock.exists());
    }

    #[test]
    fn live_clawstate_owner_is_legitimate() {
        let (_dir, target, lock) = setup();
        let child = Reaper(spawn_with_arg0("/usr/local/bin/claw-sessions"));
        let pid = child.0.id();
        write_lock_file(
            &lock,
            &payload_for(pid, now_ms(), 300_000, process::start_time(pid)),
        );
        let insp = inspect_lock(&lock, &settings(1000), now_ms()).expect("inspect");
        assert!(insp.stale_reasons.is_empty() && !insp.removable);
        let err = WriteLock::acquire(&target, &settings(150), AcquireOptions::default())
            .expect_err("must time out");
        assert!(matches!(err, WriteLockError::Timeout { .. }), "{err}");
    }

    #[test]
    fn recycled_pid_is_reclaimed() {
        let (_dir, target, lock) = setup();
        let child = Reaper(spawn_with_arg0("openclaw"));
        let pid = child.0.id();
        let wrong = process::start_time(pid).expect("st") + 1;
        write_lock_file(&lock, &payload_for(pid, now_ms(), 300_000, Some(wrong)));
        let insp = inspect_lock(&lock, &settings(1000), now_ms()).expect("inspect");
        assert_eq!(insp.stale_reasons, vec![StaleReason::RecycledPid]);
        let _guard = WriteLock::acquire(&target, &settings(1000), AcquireOptions::default())
            .expect("reclaim recycled pid");
    }

    #[test]
    fn too_old_live_owner_fails_at_once_with_stale_error() {
        let (_dir, target, lock) = setup();
        let child = Reaper(spawn_with_arg0("openclaw"));
        let pid = child.0.id();
        let created = now_ms() - 2 * 3_600_000;
        write_lock_file(
            &lock,
            &payload_for(pid, created, 300_000_000, process::start_time(pid)),
        );
        let before = sleeps();
        let err = WriteLock::acquire(&target, &settings(5000), AcquireOptions::default())
            .expect_err("stale");
        assert_eq!(sleeps(), before, "at once, without waiting");
        assert!(matches!(err, WriteLockError::Stale { .. }));
        assert_eq!(err.exit_code(), crate::exit::TEMP_FAIL);
        let msg = err.to_string();
        let prefix = format!("session file lock stale (too-old): pid={pid} alive=true ageMs=");
        let suffix = format!(" {}", lock.to_string_lossy());
        assert!(msg.starts_with(&prefix) && msg.ends_with(&suffix), "{msg}");
        let age: i64 = msg[prefix.len()..msg.len() - suffix.len()]
            .parse()
            .expect("ageMs");
        assert!((7_200_000..7_210_000).contains(&age));
        assert!(lock.exists(), "report-only lock is kept");
        let insp = inspect_lock(&lock, &settings(1000), now_ms()).expect("inspect");
        assert_eq!(insp.stale_reasons, vec![StaleReason::TooOld]);
        assert!(!insp.removable);
    }

    #[test]
    fn hold_exceeded_live_owner_fails_with_stale_error() {
        let (_dir, target, lock) = setup();
        let child = Reaper(spawn_with_arg0("openclaw"));
        let pid = child.0.id();
        write_lock_file(
            &lock,
            &payload_for(pid, now_ms() - 10_000, 1000, process::start_time(pid)),
        );
        let err = WriteLock::acquire(&target, &settings(5000), AcquireOptions::default())
            .expect_err("stale");
        assert!(
            err.to_string()
                .starts_with("session file lock stale (hold-exceeded): "),
            "{err}"
        );
        // The doctor ignores maxHoldMs.
        let insp = inspect_lock(&lock, &settings(1000), now_ms()).expect("inspect");
        assert!(insp.stale_reasons.is_empty());
        assert_eq!(insp.max_hold_ms, Some(1000));
    }

    #[test]
    fn garbage_payload_waits_for_its_mtime_grace() {
        let (_dir, target, lock) = setup();
        write_lock_file(&lock, "not json");
        let started = Instant::now();
        let err = WriteLock::acquire(&target, &settings(200), AcquireOptions::default())
            .expect_err("fresh garbage is not reclaimed");
        assert!(started.elapsed() >= Duration::from_millis(200));
        assert_eq!(
            err.to_string(),
            format!(
                "session file locked (timeout 200ms): owner=unknown {}",
                lock.to_string_lossy()
            )
        );
        let insp = inspect_lock(&lock, &settings(1000), now_ms()).expect("inspect");
        assert_eq!(
            insp.stale_reasons,
            vec![StaleReason::MissingPid, StaleReason::InvalidCreatedAt]
        );
        assert!(!insp.removable);

        // 10 s old: past the 5 s grace of a short timeout, but not the doctor's 30 s.
        let old = SystemTime::now() - Duration::from_secs(10);
        File::options()
            .write(true)
            .open(&lock)
            .and_then(|f| f.set_modified(old))
            .expect("set mtime");
        let insp = inspect_lock(&lock, &settings(1000), now_ms()).expect("inspect");
        assert!(!insp.removable);
        let before = sleeps();
        let guard = WriteLock::acquire(&target, &settings(1500), AcquireOptions::default())
            .expect("10 s old garbage reclaimed with a short timeout");
        assert_eq!(sleeps(), before, "at once, without waiting");
        drop(guard);

        // With a 30 s+ timeout the grace is 30 s; a 40 s old file is removable for all.
        write_lock_file(&lock, "");
        let old = SystemTime::now() - Duration::from_secs(40);
        File::options()
            .write(true)
            .open(&lock)
            .and_then(|f| f.set_modified(old))
            .expect("set mtime");
        assert!(
            inspect_lock(&lock, &settings(1000), now_ms())
                .expect("inspect")
                .removable
        );
        let _guard = WriteLock::acquire(&target, &settings(60_000), AcquireOptions::default())
            .expect("40 s old garbage reclaimed");
    }

    #[test]
    fn orphan_self_lock() {
        let (_dir, target, lock) = setup();
        let me = std::process::id();
        // Own pid, no starttime, fresh: the doctor does not call it an orphan...
        write_lock_file(&lock, &payload_for(me, now_ms(), 300_000, None));
        let insp = inspect_lock(&lock, &settings(1000), now_ms()).expect("inspect");
        assert!(!insp.stale_reasons.contains(&StaleReason::OrphanSelfPid));
        // ...but acquisition reclaims it.
        let guard = WriteLock::acquire(&target, &settings(1000), AcquireOptions::default())
            .expect("orphan without starttime reclaimed");
        drop(guard);
        // With our own starttime, both agree.
        write_lock_file(
            &lock,
            &payload_for(me, now_ms(), 300_000, process::start_time(me)),
        );
        let insp = inspect_lock(&lock, &settings(1000), now_ms()).expect("inspect");
        assert_eq!(insp.stale_reasons, vec![StaleReason::OrphanSelfPid]);
        assert!(insp.removable);
    }

    #[test]
    fn release_leaves_a_replaced_file_alone() {
        let (_dir, target, lock) = setup();
        let guard = WriteLock::acquire(&target, &settings(500), AcquireOptions::default())
            .expect("acquire");
        // Same inode, different bytes.
        fs::write(&lock, "{\"pid\": 1}\n").expect("overwrite");
        drop(guard);
        assert_eq!(fs::read_to_string(&lock).expect("kept"), "{\"pid\": 1}\n");
        fs::remove_file(&lock).expect("cleanup");

        // Same bytes, different inode.
        let guard = WriteLock::acquire(&target, &settings(500), AcquireOptions::default())
            .expect("acquire");
        let bytes = fs::read(&lock).expect("read");
        fs::remove_file(&lock).expect("remove");
        fs::write(&lock, &bytes).expect("rewrite");
        guard.release().expect("release");
        assert_eq!(fs::read(&lock).expect("kept"), bytes);
    }

    #[test]
    fn doctor_view_of_dead_and_missing_locks() {
        let (_dir, _target, lock) = setup();
        let mut child = Command::new("true").spawn().expect("spawn");
        let pid = child.id();
        child.wait().expect("wait");
        write_lock_file(&lock, &payload_for(pid, now_ms() - 5000, 300_000, Some(7)));
        let insp = inspect_lock(&lock, &settings(1000), now_ms()).expect("inspect");
        assert_eq!(insp.pid, Some(u64::from(pid)));
        assert_eq!(insp.starttime, Some(7));
        assert!(!insp.alive);
        assert!(insp.age_ms.is_some_and(|a| (5000..6000).contains(&a)));
        assert_eq!(insp.stale_reasons, vec![StaleReason::DeadPid]);
        assert_eq!(insp.reasons_string(), "dead-pid");
        assert!(insp.removable);

        // A changed file is not removed by `lock break`.
        fs::write(&lock, payload_for(pid, now_ms(), 300_000, Some(8))).expect("rewrite");
        assert!(!remove_if_unchanged(&lock, &insp).expect("remove"));
        assert!(lock.exists());
        let insp = inspect_lock(&lock, &settings(1000), now_ms()).expect("inspect");
        assert!(remove_if_unchanged(&lock, &insp).expect("remove"));
        assert!(!lock.exists());

        let missing = inspect_lock(&lock, &settings(1000), now_ms()).expect("inspect");
        assert!(!missing.removable && missing.pid.is_none());
        assert!(!remove_if_unchanged(&lock, &missing).expect("remove"));
    }

    #[test]
    fn io_error_maps_to_cant_create() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("plain");
        fs::write(&file, "x").expect("write");
        let err = WriteLock::acquire(
            &file.join("s.jsonl"),
            &settings(100),
            AcquireOptions::default(),
        )
        .expect_err("parent is a file");
        assert!(matches!(err, WriteLockError::Io { .. }));
        assert_eq!(err.exit_code(), crate::exit::CANT_CREATE);
    }

    #[test]
    fn settings_resolution() {
        let none = |_: &str| None::<String>;
        assert_eq!(
            WriteLockSettings::resolve(&Value::Null, none),
            WriteLockSettings::default()
        );
        let config = serde_json::json!({"session": {"writeLock": {
            "acquireTimeoutMs": 1500, "staleMs": 5, "maxHoldMs": 2000.0
        }}});
        let from_config = WriteLockSettings::resolve(&config, none);
        assert_eq!(from_config.acquire_timeout_ms, Some(1500));
        assert_eq!(from_config.stale_ms, 5);
        assert_eq!(from_config.max_hold_ms, 2000);

        let env = |key: &str| match key {
            ENV_STALE_MS => Some("7".to_string()),
            ENV_ACQUIRE_TIMEOUT_MS => Some(" Infinity ".to_string()),
            ENV_MAX_HOLD_MS => Some("0".to_string()),
            _ => None,
        };
        let s = WriteLockSettings::resolve(&config, env);
        assert_eq!(s.stale_ms, 7, "env beats config");
        assert_eq!(
            s.acquire_timeout_ms, None,
            "Infinity allowed for the timeout"
        );
        assert_eq!(s.max_hold_ms, 2000, "zero env falls through to config");

        let env = |key: &str| match key {
            ENV_STALE_MS => Some("Infinity".to_string()),
            ENV_ACQUIRE_TIMEOUT_MS => Some("1e3".to_string()),
            ENV_MAX_HOLD_MS => Some("9007199254740992".to_string()),
            _ => None,
        };
        let bad = serde_json::json!({"session": {"writeLock": {
            "acquireTimeoutMs": -1, "staleMs": 1.5, "maxHoldMs": "100"
        }}});
        assert_eq!(
            WriteLockSettings::resolve(&bad, env),
            WriteLockSettings::default()
        );
        let env = |key: &str| (key == ENV_STALE_MS).then(|| "0009007199254740991".to_string());
        assert_eq!(
            WriteLockSettings::resolve(&Value::Null, env).stale_ms,
            9_007_199_254_740_991
        );
        let weird = serde_json::json!({"session": "x"});
        assert_eq!(
            WriteLockSettings::resolve(&weird, none),
            WriteLockSettings::default()
        );
    }

    #[test]
    fn compaction_hold() {
        assert_eq!(settings(60_000).compaction_max_hold_ms(), 300_000);
        assert_eq!(settings(600_000).compaction_max_hold_ms(), 720_000);
        assert_eq!(
            WriteLockSettings {
                acquire_timeout_ms: None,
                ..WriteLockSettings::default()
            }
            .compaction_max_hold_ms(),
            2_147_000_000
        );
        assert_eq!(
            settings(3_000_000_000).compaction_max_hold_ms(),
            2_147_000_000
        );
    }

    #[test]
    fn node_paths() {
        let n = |s: &str| String::from_utf8(node_path::normalize(s.as_bytes())).expect("utf8");
        assert_eq!(n("/a//b/./c/../d/"), "/a/b/d/");
        assert_eq!(n("/../x"), "/x");
        assert_eq!(n("a/../../b"), "../b");
        assert_eq!(n(""), ".");
        assert_eq!(n("./"), "./");
        assert_eq!(n("/"), "/");
        assert_eq!(
            absolutize(Path::new("x/../s.jsonl/"), Path::new("/cwd")),
            PathBuf::from("/cwd/s.jsonl")
        );
        assert_eq!(
            split_dir_base(Path::new("/s.jsonl")),
            (PathBuf::from("/"), PathBuf::from("s.jsonl"))
        );
    }

    #[test]
    fn payload_parsing_follows_the_gateway() {
        let p = Payload::parse(
            br#"{"pid": 5.0, "createdAt": 3, "starttime": -1, "maxHoldMs": 0, "extra": 1}"#,
        );
        assert_eq!(p.pid, Some(5.0));
        assert_eq!(p.created_at, None);
        assert_eq!(p.starttime, None);
        assert_eq!(p.max_hold_ms, None);
        assert_eq!(Payload::parse(b"[1,2]"), Payload::default());
        assert_eq!(Payload::parse(b"{\"pid\": 0}").pid, None);
        let insp = Inspected {
            pid: Some(1e21),
            alive: false,
            age_ms: Some(12),
            reasons: vec![],
            in_use: false,
            holder: None,
        };
        assert_eq!(describe_owner(&insp), "pid=1e+21 alive=false ageMs=12");
    }
}
