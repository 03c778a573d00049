//! The run manifest `finish` writes for the files it moves into the import archive, in
//! 9.6's format (`<stateDir>/session-sqlite-migration-runs/<runId>.json`, manifest
//! version 3), so that `openclaw doctor --session-sqlite restore` can move them back as it
//! moves back what its own doctor archived.
//!
//! As 9.6 does: the manifest is written with the planned moves (each file's identity:
//! device, inode, mtime in ns, size, SHA-256) before anything moves, each move is recorded
//! as completed once done, and `completedAt` (with `failedAt` when a move failed) closes the
//! run. A run cut short (kill -9) is left without `completedAt`; `finish` itself closes
//! such runs ([`super::manifests`]). Every write is an atomic replace (0600).

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};

use super::error::{FinishError, RUNS_DIR};

/// One file to move: where from, where to, for which session.
#[derive(Debug, Clone)]
pub struct PlannedMove {
    /// The agent.
    pub agent_id: String,
    /// Its legacy store (9.6's target key).
    pub store_path: PathBuf,
    /// Its database.
    pub sqlite_path: PathBuf,
    /// The file.
    pub source: PathBuf,
    /// Its place in the import archive.
    pub archive: PathBuf,
    /// The session it belongs to.
    pub session_key: String,
}

/// An open run: its manifest and where it is.
pub struct Run {
    path: PathBuf,
    manifest: Value,
}

fn werr(path: &Path, what: &'static str, e: impl std::fmt::Display) -> FinishError {
    FinishError::Write {
        path: path.to_path_buf(),
        what,
        source: std::io::Error::other(e.to_string()),
    }
}

/// 9.6's identity of a file to move (`readMigrationArtifactIdentity`): a leftover, read
/// below its sessions directory.
fn identity(m: &PlannedMove) -> Result<Value, FinishError> {
    let sessions_dir = m.store_path.parent().unwrap_or(Path::new("."));
    let name = m.source.file_name().map(Path::new).unwrap_or(Path::new(""));
    let dp = crate::fs::data_file::DataPath::beneath(sessions_dir, name)?;
    // One open file for the stat and the bytes: the identity is of what was read.
    let mut file = dp.open_read()?.into_file();
    let md = file.metadata().map_err(|e| werr(dp.path(), "stat", e))?;
    let limit = crate::migrate::plan::MAX_TRANSCRIPT_BYTES;
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut std::io::Read::take(&mut file, limit + 1), &mut bytes)
        .map_err(|e| werr(dp.path(), "read a file to archive", e))?;
    if bytes.len() as u64 > limit {
        return Err(werr(
            dp.path(),
            "read a file to archive",
            "larger than the limit",
        ));
    }
    let mtime_ns = md.mtime() as i128 * 1_000_000_000 + md.mtime_nsec() as i128;
    Ok(json!({
        "dev": md.dev().to_string(),
        "ino": md.ino().to_string(),
        "mtimeNs": mtime_ns.to_string(),
        "size": bytes.len(),
        "sha256": format!("{:x}", Sha256::digest(&bytes)),
    }))
}

fn canonical(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}

fn canonical_in_dir(p: &Path) -> PathBuf {
    match (p.parent(), p.file_name()) {
        (Some(d), Some(n)) => canonical(d).join(n),
        _ => p.to_path_buf(),
    }
}

fn move_value(m: &PlannedMove, identity: Value) -> Value {
    json!({
        "archivePath": canonical_in_dir(&m.archive).to_string_lossy(),
        "artifact": {
            "identity": identity,
            "classification": "imported",
            "reason": "verified-import-original",
            "dependencies": [],
            "disposal": {"state": "retained"},
        },
        "kind": "transcript",
        "sessionKey": m.session_key,
        "sourcePath": canonical_in_dir(&m.source).to_string_lossy(),
    })
}

impl Run {
    /// Writes a new run with `moves` planned (nothing has moved yet).
    pub fn begin(state_dir: &Path, moves: &[PlannedMove], now_ms: i64) -> Result<Run, FinishError> {
        let dir = state_dir.join(RUNS_DIR);
        std::fs::create_dir_all(&dir).map_err(|e| werr(&dir, "create the runs directory", e))?;
        let run_id = format!(
            "session-sqlite-{now_ms}-{}",
            &uuid::Uuid::new_v4().simple().to_string()[..8]
        );
        let mut targets: Vec<Value> = Vec::new();
        for m in moves {
            let store = canonical_in_dir(&m.store_path)
                .to_string_lossy()
                .into_owned();
            let pos = targets.iter().position(|t| {
                t["agentId"] == m.agent_id.as_str() && t["storePath"] == store.as_str()
            });
            let i = match pos {
                Some(i) => i,
                None => {
                    targets.push(json!({
                        "agentId": m.agent_id,
                        "sqlitePath": canonical_in_dir(&m.sqlite_path).to_string_lossy(),
                        "storePath": store,
                        "completedMoves": [],
                        "issues": [],
                        "plannedMoves": [],
                        "validationBeforeArchive": "passed",
                    }));
                    targets.len() - 1
                }
            };
            let mv = move_value(m, identity(m)?);
            if let Some(p) = targets[i]["plannedMoves"].as_array_mut() {
                p.push(mv);
            }
        }
        let mut manifest = Map::new();
        manifest.insert("manifestVersion".into(), json!(3));
        manifest.insert(
            "openClawVersion".into(),
            json!(format!("clawstate {}", env!("CARGO_PKG_VERSION"))),
        );
        manifest.insert("runId".into(), json!(run_id));
        manifest.insert("startedAt".into(), json!(crate::js::to_iso_string(now_ms)));
        manifest.insert("targets".into(), Value::Array(targets));
        let run = Run {
            path: dir.join(format!("{run_id}.json")),
            manifest: Value::Object(manifest),
        };
        run.write()?;
        Ok(run)
    }

    /// Where the manifest is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Records a move as done (the file is at its archive path now).
    pub fn completed(&mut self, m: &PlannedMove) -> Result<(), FinishError> {
        let src = canonical_in_dir(&m.source).to_string_lossy().into_owned();
        if let Some(targets) = self.manifest["targets"].as_array_mut() {
            for t in targets {
                let planned = t["plannedMoves"]
                    .as_array()
                    .and_then(|p| p.iter().find(|x| x["sourcePath"] == src.as_str()).cloned());
                if let (Some(p), Some(c)) = (planned, t["completedMoves"].as_array_mut()) {
                    c.push(p);
                }
            }
        }
        self.write()
    }

    /// Closes the run (`completedAt`; `failedAt` too when not every move was done).
    pub fn close(mut self, now_ms: i64, failed: bool) -> Result<PathBuf, FinishError> {
        let now = crate::js::to_iso_string(now_ms);
        if let Some(o) = self.manifest.as_object_mut() {
            o.insert("completedAt".into(), json!(now));
            if failed {
                o.insert("failedAt".into(), json!(now));
            }
        }
        self.write()?;
        Ok(self.path)
    }

    fn write(&self) -> Result<(), FinishError> {
        let mut text = crate::js::jsjson::to_string_pretty(&self.manifest);
        text.push('\n');
        crate::fs::atomic_file::replace_file(&self.path, text.as_bytes(), 0o600)
            .map_err(|e| werr(&self.path, "write the run manifest", e))
    }
}
