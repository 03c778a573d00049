//! Which legacy JSONL file 2026.9.6 takes for a store entry (`resolveLegacyTranscriptPaths`),
//! for the plan and the import alike: a `sessionFile` that names a file inside the
//! sessions directory (a topic transcript `<sessionId>-topic-<n>.jsonl`, say), else
//! `<sessionId>.jsonl`, then the file of the `sessionFile`'s name moved into the sessions
//! directory. The caller opens the answer beneath the sessions directory, so one that
//! leaves it (a `sessionId` such as `../x`) is reported, not followed.

use std::path::{Component, Path, PathBuf};

use serde_json::Value;

/// The transcript 9.6 resolves for a store entry (`resolveLegacyTranscriptPaths`): the
/// `sessionFile` when it lies inside the sessions directory, else `<sessionId>.jsonl`,
/// then the file of the `sessionFile`'s name in the sessions directory; the first that
/// exists, else (with a `sessionFile`) the first, missing; else none.
pub fn resolve_transcript(sessions_dir: &Path, entry: &Value, session_id: &str) -> Option<PathBuf> {
    let session_file = entry
        .get("sessionFile")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty());
    if session_file.is_some_and(|s| s.starts_with("sqlite:")) {
        return None;
    }
    let within = |cand: &str| -> Option<PathBuf> {
        let p = Path::new(cand);
        let rel: PathBuf = if p.is_absolute() {
            p.strip_prefix(sessions_dir).ok()?.to_path_buf()
        } else {
            p.to_path_buf()
        };
        let plain = rel.components().all(|c| matches!(c, Component::Normal(_)));
        (plain && !rel.as_os_str().is_empty()).then(|| sessions_dir.join(rel))
    };
    let default = session_file
        .and_then(within)
        .unwrap_or_else(|| sessions_dir.join(format!("{session_id}.jsonl")));
    let relocated =
        session_file.and_then(|s| Path::new(s).file_name().map(|n| sessions_dir.join(n)));
    let mut candidates = vec![default.clone()];
    candidates.extend(relocated.clone());
    if let Some(found) = candidates.iter().find(|c| c.exists()) {
        return Some(found.clone());
    }
    relocated.map(|_| default)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transcript_resolution_as_the_doctor() {
        let d = Path::new("/nonexistent/s");
        let e = serde_json::json!({"sessionId":"x"});
        assert_eq!(resolve_transcript(d, &e, "x"), None);
        let e = serde_json::json!({"sessionId":"x","sessionFile":"/elsewhere/y.jsonl"});
        assert_eq!(resolve_transcript(d, &e, "x"), Some(d.join("x.jsonl")));
        let e = serde_json::json!({"sessionId":"x","sessionFile":"/nonexistent/s/z.jsonl"});
        assert_eq!(resolve_transcript(d, &e, "x"), Some(d.join("z.jsonl")));
    }
}
