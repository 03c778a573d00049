//! The import archive and the migration run manifest, named and shaped as 9.6's doctor
//! writes them.
//!
//! Legacy files are never deleted: each is moved (a rename, so byte for byte) into
//! `agents/<id>/session-sqlite-import-archive/<keySlug>.<baseName>.imported-<ms>` (9.6's
//! `planSessionJsonlArchiveMove`). The run manifest
//! `<stateDir>/session-sqlite-migration-runs/session-sqlite-<ms>-<hex8>.json` lists the
//! planned moves before any is made and the completed ones after, so an interrupted run
//! is finished from it: a planned move whose archive exists is done, one whose source
//! still exists is redone.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};

use super::error::ImportError;
use super::legacy::FileIdentity;
use crate::fs::data_file::DataDir;

/// The archive directory's name beside `sessions/`.
pub const ARCHIVE_DIR: &str = "session-sqlite-import-archive";
/// The manifests' directory in the state dir.
pub const RUNS_DIR: &str = "session-sqlite-migration-runs";

/// 9.6's slug of a name part: runs of characters outside `[A-Za-z0-9_.-]` become `_`,
/// cut to `max` characters, `fallback` when empty.
pub fn slug(s: &str, max: usize, fallback: &str) -> String {
    let mut out = String::new();
    let mut in_run = false;
    for c in s.chars() {
        if c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-') {
            out.push(c);
            in_run = false;
        } else if !in_run {
            out.push('_');
            in_run = true;
        }
    }
    out.truncate(max);
    if out.is_empty() {
        fallback.to_string()
    } else {
        out
    }
}

/// One planned move.
#[derive(Debug, Clone)]
pub struct Move {
    /// `transcript`, `trajectory` or `legacy-store`.
    pub kind: &'static str,
    /// The session it belongs to (none for the store).
    pub session_key: Option<String>,
    /// The file as read.
    pub file: FileIdentity,
    /// The archive file name.
    pub archive_name: String,
    /// `imported` or `protected`.
    pub classification: &'static str,
    /// Why (9.6's reason codes).
    pub reason: &'static str,
    /// For the store: the transcripts it indexes (absolute paths).
    pub dependencies: Vec<String>,
}

/// Names an archive file, unique against `taken` (9.6 adds `.1`, `.2`, … on a clash).
pub fn archive_name(
    key: &str,
    base: &str,
    ms: i64,
    taken: &mut std::collections::HashSet<String>,
    dir: &Path,
) -> String {
    let base = slug(base, 160, "artifact");
    let key = slug(key, 120, "session");
    for attempt in 0..100 {
        let suffix = if attempt == 0 {
            String::new()
        } else {
            format!(".{attempt}")
        };
        let name = format!("{key}.{base}.imported-{ms}{suffix}");
        if !taken.contains(&name) && !dir.join(&name).exists() {
            taken.insert(name.clone());
            return name;
        }
    }
    format!(
        "{key}.{base}.imported-{ms}.{}",
        uuid::Uuid::new_v4().simple()
    )
}

fn move_json(m: &Move, sessions_dir: &Path, archive_dir: &Path) -> Value {
    let mut o = Map::new();
    o.insert(
        "archivePath".into(),
        json!(archive_dir.join(&m.archive_name).to_string_lossy()),
    );
    o.insert(
        "artifact".into(),
        json!({
            "identity": {
                "dev": m.file.dev.to_string(),
                "ino": m.file.ino.to_string(),
                "mtimeNs": m.file.mtime_ns.to_string(),
                "size": m.file.size,
                "sha256": m.file.sha256,
            },
            "classification": m.classification,
            "reason": m.reason,
            "dependencies": m.dependencies,
            "disposal": {"state": "retained"},
        }),
    );
    o.insert("kind".into(), json!(m.kind));
    if let Some(k) = &m.session_key {
        o.insert("sessionKey".into(), json!(k));
    }
    o.insert(
        "sourcePath".into(),
        json!(sessions_dir.join(&m.file.name).to_string_lossy()),
    );
    Value::Object(o)
}

/// One agent's part of a run.
#[derive(Debug, Clone)]
pub struct TargetPlan {
    /// The agent.
    pub agent_id: String,
    /// The agent DB.
    pub sqlite_path: PathBuf,
    /// `sessions.json`.
    pub store_path: PathBuf,
    /// The sessions directory.
    pub sessions_dir: PathBuf,
    /// The archive directory.
    pub archive_dir: PathBuf,
    /// The moves, in order.
    pub moves: Vec<Move>,
    /// The issues (code, message, session key).
    pub issues: Vec<(String, String, Option<String>)>,
}

/// One target of the manifest, with its planned moves (no completed ones yet).
pub fn target_json(t: &TargetPlan) -> Value {
    let moves: Vec<Value> = t
        .moves
        .iter()
        .map(|m| move_json(m, &t.sessions_dir, &t.archive_dir))
        .collect();
    let issues: Vec<Value> = t
        .issues
        .iter()
        .map(|(code, message, key)| {
            let mut o = Map::new();
            o.insert("code".into(), json!(code));
            o.insert("message".into(), json!(message));
            if let Some(k) = key {
                o.insert("sessionKey".into(), json!(k));
            }
            Value::Object(o)
        })
        .collect();
    let mut o = Map::new();
    o.insert("agentId".into(), json!(t.agent_id));
    o.insert("sqlitePath".into(), json!(t.sqlite_path.to_string_lossy()));
    o.insert("storePath".into(), json!(t.store_path.to_string_lossy()));
    o.insert("issues".into(), Value::Array(issues));
    o.insert("plannedMoves".into(), Value::Array(moves));
    o.insert("validationBeforeArchive".into(), json!("passed"));
    Value::Object(o)
}

/// A target with its planned moves recorded as completed (key order as 9.6 writes it).
pub fn completed_target(t: &Value) -> Value {
    let Some(o) = t.as_object() else {
        return t.clone();
    };
    let mut out = Map::new();
    for (k, v) in o {
        if k == "completedMoves" {
            continue;
        }
        if k == "issues" {
            out.insert(
                "completedMoves".into(),
                o.get("plannedMoves").cloned().unwrap_or(json!([])),
            );
        }
        out.insert(k.clone(), v.clone());
    }
    Value::Object(out)
}

/// The (source file name, archive file name) pairs of a target's planned moves.
pub fn planned_pairs(t: &Value) -> Vec<(String, String)> {
    let name = |v: Option<&Value>| -> Option<String> {
        Some(Path::new(v?.as_str()?).file_name()?.to_str()?.to_string())
    };
    t.get("plannedMoves")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|m| Some((name(m.get("sourcePath"))?, name(m.get("archivePath"))?)))
                .collect()
        })
        .unwrap_or_default()
}

/// The manifest of a run over `targets` (from [`target_json`] or [`completed_target`]).
pub fn manifest(
    run_id: &str,
    started_ms: i64,
    targets: Vec<Value>,
    completed_ms: Option<i64>,
) -> Value {
    let mut m = Map::new();
    m.insert("manifestVersion".into(), json!(3));
    m.insert("openClawVersion".into(), json!(super::schema::APP_VERSION));
    m.insert("runId".into(), json!(run_id));
    m.insert(
        "startedAt".into(),
        json!(crate::js::to_iso_string(started_ms)),
    );
    m.insert("targets".into(), Value::Array(targets));
    if let Some(c) = completed_ms {
        m.insert("completedAt".into(), json!(crate::js::to_iso_string(c)));
    }
    Value::Object(m)
}

/// Writes a manifest atomically (0600, in a 0700 directory).
pub fn write_manifest(
    state_dir: &Path,
    run_id: &str,
    value: &Value,
) -> Result<PathBuf, ImportError> {
    let dir = state_dir.join(RUNS_DIR);
    create_dir(&dir, 0o700)?;
    let path = dir.join(format!("{run_id}.json"));
    let text = crate::js::jsjson::to_string_pretty(value);
    crate::fs::atomic_file::replace_file(&path, text.as_bytes(), 0o600).map_err(|e| {
        ImportError::Write {
            path: path.clone(),
            what: e.to_string(),
        }
    })?;
    Ok(path)
}

/// Creates a directory (and its parents) with `mode` when missing.
pub fn create_dir(dir: &Path, mode: u32) -> Result<(), ImportError> {
    use std::os::unix::fs::DirBuilderExt;
    match std::fs::DirBuilder::new()
        .recursive(true)
        .mode(mode)
        .create(dir)
    {
        Ok(()) => Ok(()),
        Err(e) => Err(ImportError::io(dir, e)),
    }
}

/// Makes the planned moves (`(source name, archive name)`) from `sessions_dir` into
/// `archive_dir` that are not done yet; returns how many it made. A move is done when its
/// archive file exists; a source gone with no archive is left to the caller's check.
pub fn perform_moves(
    sessions_dir: &Path,
    archive_dir: &Path,
    pairs: &[(String, String)],
) -> Result<usize, ImportError> {
    if pairs.is_empty() {
        return Ok(0);
    }
    create_dir(archive_dir, 0o755)?;
    let src = DataDir::open(sessions_dir).map_err(ImportError::file)?;
    let dst = DataDir::open(archive_dir).map_err(ImportError::file)?;
    let mut made = 0;
    for (from, to) in pairs {
        let (from, to) = (OsStr::new(from), OsStr::new(to));
        if dst
            .kind_of(to)
            .map_err(|e| ImportError::io(archive_dir, e))?
            .is_some()
        {
            continue;
        }
        if src
            .kind_of(from)
            .map_err(|e| ImportError::io(sessions_dir, e))?
            .is_none()
        {
            return Err(ImportError::Write {
                path: sessions_dir.join(from),
                what: "planned for the import archive but neither it nor its archive copy is there"
                    .into(),
            });
        }
        src.move_no_replace(from, &dst, to)
            .map_err(|e| ImportError::Write {
                path: sessions_dir.join(from),
                what: format!("cannot move into the import archive: {e}"),
            })?;
        made += 1;
    }
    dst.sync().map_err(|e| ImportError::io(archive_dir, e))?;
    src.sync().map_err(|e| ImportError::io(sessions_dir, e))?;
    Ok(made)
}
