//! The doctor's view of transcript write locks (`store.md` §5.4, §5.6): where a
//! transcript's lock file is, which lock files a sessions directory holds, and how to
//! describe one.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::transcript::write_lock::LockInspection;

/// The lock file of a transcript: `<realpath(dirname)>/<basename>.lock`.
pub fn lock_path_for(transcript: &Path) -> PathBuf {
    let dir = transcript.parent().unwrap_or(Path::new("."));
    let real = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let mut name = transcript
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_default();
    name.push(".lock");
    real.join(name)
}

/// The `*.jsonl.lock` files of a directory, in name order (as the doctor scans them).
pub fn lock_files_in(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut out: Vec<PathBuf> = match std::fs::read_dir(dir) {
        Ok(rd) => rd
            .filter_map(Result::ok)
            .filter(|e| e.file_name().to_string_lossy().ends_with(".jsonl.lock"))
            .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
            .map(|e| e.path())
            .collect(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(e),
    };
    out.sort();
    Ok(out)
}

/// One lock as a command prints it (`lock status`'s row, `lock break`'s `lock`):
/// `stale`/`staleReasons` are the gateway's rule; `removable` is false for a lock in use
/// (its live holder has it open, or is a gateway).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LockReport {
    /// The lock file.
    pub lock_path: String,
    /// The pid it names.
    pub pid: Option<u64>,
    /// Its `createdAt`, as written.
    pub created_at: Option<String>,
    /// Its age.
    pub age_ms: Option<i64>,
    /// Whether its pid is alive.
    pub alive: bool,
    /// The holder's process start time it records.
    pub starttime: Option<u64>,
    /// The longest hold it allows.
    pub max_hold_ms: Option<u64>,
    /// Whether the gateway's rule calls it stale.
    pub stale: bool,
    /// Why (`dead-pid`, `too-old`, …).
    pub stale_reasons: Vec<&'static str>,
    /// Whether it may be removed.
    pub removable: bool,
    /// Whether its live holder has it open.
    pub in_use: bool,
    /// The holder's argv[0] (`openclaw-gateway`), when known.
    pub holder: Option<String>,
}

impl LockReport {
    /// The report of one inspected lock.
    pub fn of(i: &LockInspection) -> Self {
        LockReport {
            lock_path: i.lock_path.to_string_lossy().into_owned(),
            pid: i.pid,
            created_at: i.created_at.clone(),
            age_ms: i.age_ms,
            alive: i.alive,
            starttime: i.starttime,
            max_hold_ms: i.max_hold_ms,
            stale: i.is_stale(),
            stale_reasons: i.stale_reasons.iter().map(|r| r.as_str()).collect(),
            removable: i.removable,
            in_use: i.in_use,
            holder: i.holder.clone(),
        }
    }
}

/// How the holder of a lock in use is named: `"openclaw-gateway" (pid 12)`.
pub fn holder_name(i: &LockInspection) -> String {
    let pid = i.pid.map_or("?".into(), |p| p.to_string());
    match &i.holder {
        Some(h) => format!("{h:?} (pid {pid})"),
        None => format!("pid {pid}"),
    }
}

/// What a lock in use is, in words: who holds it, and what the gateway's own rule says.
pub fn in_use_text(i: &LockInspection) -> String {
    let mut out = format!("in use by {}, which is alive and holds it", holder_name(i));
    if i.is_stale() {
        out.push_str(&format!(
            "; the gateway's own rule calls it stale ({}), so another OpenClaw process may take it over, but it is kept",
            i.reasons_string()
        ));
    }
    out
}

/// One lock as a table line.
pub fn lock_line(i: &LockInspection) -> String {
    let state = if i.in_use {
        in_use_text(i)
    } else if !i.is_stale() {
        "held".to_string()
    } else if i.removable {
        format!("stale ({}), removable", i.reasons_string())
    } else {
        format!("stale ({}), kept", i.reasons_string())
    };
    format!(
        "{}  pid={} alive={} age={}  {}",
        i.lock_path.display(),
        i.pid.map_or("?".into(), |p| p.to_string()),
        i.alive,
        i.age_ms.map_or("?".into(), |a| format!("{}s", a / 1000)),
        state
    )
}
