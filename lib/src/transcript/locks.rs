//! The doctor's view of transcript write locks (`store.md` §5.4, §5.6): where a
//! transcript's lock file is, which lock files a sessions directory holds, and how to
//! describe one.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

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

/// One lock as JSON: `{lockPath, pid, createdAt, ageMs, alive, starttime, maxHoldMs,
/// stale, staleReasons, removable, inUse, holder}`: `stale`/`staleReasons` are the gateway's
/// rule; `removable` is false for a lock in use (its live holder has it open, or is a
/// gateway), and `holder` is the holder's argv[0] (`openclaw-gateway`) or null.
pub fn lock_json(i: &LockInspection) -> Value {
    json!({
        "lockPath": i.lock_path.to_string_lossy(),
        "pid": i.pid,
        "createdAt": i.created_at,
        "ageMs": i.age_ms,
        "alive": i.alive,
        "starttime": i.starttime,
        "maxHoldMs": i.max_hold_ms,
        "stale": i.is_stale(),
        "staleReasons": i.stale_reasons.iter().map(|r| r.as_str()).collect::<Vec<_>>(),
        "removable": i.removable,
        "inUse": i.in_use,
        "holder": i.holder,
    })
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
