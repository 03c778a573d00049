//! Where an entry's transcript is (`store.md` §1.5), with the escape checks of spec
//! README decision 5: a `sessionId` or `sessionFile` never leads outside the sessions
//! directory or its sibling agent directories.

use std::path::{Component, Path, PathBuf};

use thiserror::Error;

use crate::artifact::is_checkpoint_name;
use crate::exit::{self, ExitCode};
use crate::paths::absolutize;
use crate::session_key::normalize_agent_id;

/// A transcript path that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum TranscriptPathError {
    /// The sessionId cannot name a transcript file.
    #[error("Invalid session ID: {0}")]
    InvalidSessionId(String),
    /// The sessionFile resolves outside the sessions directory.
    #[error("session file {0:?} is outside the sessions directory")]
    Escapes(String),
    /// The sessionFile is blank.
    #[error("Session file path must not be empty")]
    Empty,
}

impl ExitCode for TranscriptPathError {
    fn exit_code(&self) -> i32 {
        exit::DATA_ERR
    }
}

/// Whether `id` can name `<id>.jsonl`: `^[a-z0-9][a-z0-9._-]{0,127}$` (any case) and
/// not checkpoint-shaped.
pub fn is_valid_transcript_id(id: &str) -> bool {
    let b = id.as_bytes();
    !b.is_empty()
        && b.len() <= 128
        && b[0].is_ascii_alphanumeric()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'_' | b'-'))
        // A checkpoint name holds `.checkpoint.` and a UUID after a non-empty session:
        // a shorter id cannot be one (and needs no name built to tell).
        && (id.len() <= 12 + 36 || !is_checkpoint_name(&format!("{id}.jsonl")))
}

/// Whether `s` looks like a generated session id (UUID v1–8, RFC 4122 variant).
pub fn looks_like_generated_session_id(s: &str) -> bool {
    crate::artifact::is_uuid(s) && {
        let b = s.as_bytes();
        matches!(b[14], b'1'..=b'8')
            && matches!(b[19].to_ascii_lowercase(), b'8' | b'9' | b'a' | b'b')
    }
}

/// The generated session id a transcript file name was derived from (`<id>.jsonl`,
/// `<id>-topic-<t>.jsonl`, `<ts>_<id>.jsonl`), if any.
pub fn generated_session_id_of(session_file: &str) -> Option<&str> {
    let base = Path::new(session_file.trim()).file_name()?.to_str()?;
    let stem = base.strip_suffix(".jsonl")?;
    if let Some(i) = stem.find("-topic-").filter(|&i| i > 0) {
        let id = &stem[..i];
        return looks_like_generated_session_id(id).then_some(id);
    }
    if stem.len() > 10 && stem.as_bytes()[4] == b'-' && stem.as_bytes()[10] == b'T' {
        if let Some(i) = stem.find('_') {
            let id = &stem[i + 1..];
            return looks_like_generated_session_id(id).then_some(id);
        }
    }
    looks_like_generated_session_id(stem).then_some(stem)
}

fn realpath_or(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}

/// `realpath(dirname(p))/basename(p)`: symlinked directories resolved, a symlinked file not.
fn realpath_of_dir(p: &Path) -> PathBuf {
    match (p.parent(), p.file_name()) {
        (Some(dir), Some(name)) if !dir.as_os_str().is_empty() => realpath_or(dir).join(name),
        _ => p.to_path_buf(),
    }
}

/// Resolves transcript paths for the entries of one store.
#[derive(Debug, Clone)]
pub struct TranscriptResolver {
    sessions_dir: PathBuf,
    real_dir: PathBuf,
    default_agents_root: Option<PathBuf>,
    agent_id: Option<String>,
}

impl TranscriptResolver {
    /// A resolver for the sessions directory `sessions_dir` (absolute). `state_dir` gives
    /// the default `<stateDir>/agents/<id>/sessions` directories that also count as inside.
    pub fn new(sessions_dir: &Path, state_dir: Option<&Path>, agent_id: Option<&str>) -> Self {
        TranscriptResolver {
            sessions_dir: sessions_dir.to_path_buf(),
            real_dir: realpath_or(sessions_dir),
            default_agents_root: state_dir.map(|s| s.join("agents")),
            agent_id: agent_id.map(normalize_agent_id),
        }
    }

    /// The sessions directory, as given.
    pub fn sessions_dir(&self) -> &Path {
        &self.sessions_dir
    }

    /// The sessions directory after realpath.
    pub fn real_dir(&self) -> &Path {
        &self.real_dir
    }

    /// `<sessionsDir>/<sessionId>.jsonl`, after validating the id.
    pub fn default_path(&self, session_id: &str) -> Result<PathBuf, TranscriptPathError> {
        let id = session_id.trim();
        if !is_valid_transcript_id(id) {
            return Err(TranscriptPathError::InvalidSessionId(
                session_id.to_string(),
            ));
        }
        Ok(self.real_dir.join(format!("{id}.jsonl")))
    }

    fn sibling_dirs(&self, agent_id: &str) -> Vec<PathBuf> {
        let id = normalize_agent_id(agent_id);
        let mut dirs = Vec::new();
        let base = &self.real_dir;
        if base.file_name().is_some_and(|n| n == "sessions") {
            if let Some(agents) = base.parent().and_then(Path::parent) {
                if agents.file_name().is_some_and(|n| n == "agents") {
                    dirs.push(agents.join(&id).join("sessions"));
                }
            }
        }
        if let Some(root) = &self.default_agents_root {
            dirs.push(root.join(&id).join("sessions"));
        }
        dirs
    }

    /// Resolves an explicit `sessionFile` inside the sessions directory (or a sibling
    /// agent's); anything that escapes is refused.
    pub fn resolve_session_file(&self, session_file: &str) -> Result<PathBuf, TranscriptPathError> {
        let trimmed = session_file.trim();
        if trimmed.is_empty() {
            return Err(TranscriptPathError::Empty);
        }
        let escapes = || TranscriptPathError::Escapes(session_file.to_string());
        let p = Path::new(trimmed);
        if p.is_absolute() {
            let real = realpath_or(&absolutize(p, Path::new("/")));
            if let Ok(rel) = real.strip_prefix(&self.real_dir) {
                return if rel.as_os_str().is_empty() {
                    Err(escapes())
                } else {
                    Ok(real)
                };
            }
            let mut agents: Vec<String> = self.agent_id.iter().cloned().collect();
            if let Some(a) = agent_id_from_path(&real) {
                agents.push(a);
            }
            for agent in agents {
                for dir in self.sibling_dirs(&agent) {
                    let dir = realpath_or(&dir);
                    if real
                        .strip_prefix(&dir)
                        .is_ok_and(|r| !r.as_os_str().is_empty())
                    {
                        return Ok(real);
                    }
                }
            }
            return Err(escapes());
        }
        // Relative: every component must stay below the directory.
        if p.components()
            .any(|c| !matches!(c, Component::Normal(_) | Component::CurDir))
        {
            return Err(escapes());
        }
        let joined = absolutize(&self.real_dir.join(p), Path::new("/"));
        if joined
            .strip_prefix(&self.real_dir)
            .is_ok_and(|r| !r.as_os_str().is_empty())
        {
            Ok(joined)
        } else {
            Err(escapes())
        }
    }

    /// The transcript of an entry: its `sessionFile` when that resolves, else
    /// `<sessionId>.jsonl`.
    pub fn resolve(
        &self,
        session_id: Option<&str>,
        session_file: Option<&str>,
    ) -> Result<PathBuf, TranscriptPathError> {
        let file_err = match session_file.map(str::trim).filter(|s| !s.is_empty()) {
            Some(f) => match self.resolve_session_file(f) {
                Ok(p) => return Ok(p),
                Err(e) => Some(e),
            },
            None => None,
        };
        match session_id {
            Some(id) => self.default_path(id),
            None => {
                Err(file_err
                    .unwrap_or_else(|| TranscriptPathError::InvalidSessionId(String::new())))
            }
        }
    }

    /// Every existing-or-not file that may hold this session's transcript, de-duplicated,
    /// in the gateway's order: the `sessionFile` (last when it is a stale inherited
    /// generated name), `<sessionId>.jsonl`, the agent's default directory copy and,
    /// when `legacy_dir` is given, `<home>/.openclaw/sessions/<sessionId>.jsonl`.
    pub fn candidates(
        &self,
        session_id: &str,
        session_file: Option<&str>,
        legacy_dir: Option<&Path>,
    ) -> Vec<PathBuf> {
        let mut out: Vec<PathBuf> = Vec::new();
        let mut push = |p: Result<PathBuf, TranscriptPathError>| {
            if let Ok(p) = p {
                // Directories are resolved (for de-duplication), the file itself is not: a
                // transcript that is a symlink stays the link, so that archiving renames or
                // skips the link and never its target, which may be outside the directory.
                let p = realpath_of_dir(&p);
                if !out.contains(&p) {
                    out.push(p);
                }
            }
        };
        let file = session_file.map(str::trim).filter(|s| !s.is_empty());
        let stale = file
            .and_then(generated_session_id_of)
            .is_some_and(|g| g != session_id);
        let resolve_file = |f: &str| self.resolve(Some(session_id), Some(f));
        if let Some(f) = file.filter(|_| !stale) {
            push(resolve_file(f));
        }
        push(self.default_path(session_id));
        if let Some(f) = file.filter(|_| stale) {
            push(resolve_file(f));
        }
        if let (Some(agent), Some(root)) = (&self.agent_id, &self.default_agents_root) {
            let dir = root.join(agent).join("sessions");
            if is_valid_transcript_id(session_id.trim()) {
                push(Ok(dir.join(format!("{}.jsonl", session_id.trim()))));
            }
        }
        if let Some(legacy) = legacy_dir {
            if is_valid_transcript_id(session_id.trim()) {
                push(Ok(legacy.join(format!("{}.jsonl", session_id.trim()))));
            }
        }
        out
    }

    /// Whether `path` (after realpath) lies directly or deeper inside the sessions dir.
    pub fn is_inside(&self, path: &Path) -> bool {
        realpath_or(path)
            .strip_prefix(&self.real_dir)
            .is_ok_and(|r| !r.as_os_str().is_empty())
    }
}

/// The agent id in `…/agents/<id>/sessions/<file>`, if the path has that shape.
pub fn agent_id_from_path(p: &Path) -> Option<String> {
    let parts: Vec<&str> = p.iter().filter_map(|c| c.to_str()).collect();
    let i = parts.iter().rposition(|c| *c == "sessions")?;
    (i >= 2 && parts[i - 2] == "agents" && !parts[i - 1].is_empty())
        .then(|| parts[i - 1].to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_and_generated_names() {
        assert!(is_valid_transcript_id("abc-1.2_3"));
        assert!(!is_valid_transcript_id("../evil"));
        assert!(!is_valid_transcript_id("abc:def"));
        assert!(!is_valid_transcript_id(&"a".repeat(129)));
        let u = "123e4567-e89b-42d3-a456-426614174000";
        // The shortest checkpoint-shaped id (49 bytes), and one as long without the mark.
        assert!(!is_valid_transcript_id(&format!("x.checkpoint.{u}")));
        assert!(!is_valid_transcript_id(&format!("x.CHECKPOINT.{u}")));
        assert!(is_valid_transcript_id(&format!("x.checkpoinT-{u}")));
        assert_eq!(generated_session_id_of(&format!("/x/{u}.jsonl")), Some(u));
        assert_eq!(
            generated_session_id_of(&format!("{u}-topic-42.jsonl")),
            Some(u)
        );
        assert_eq!(
            generated_session_id_of(&format!("2026-01-02T03-04-05-678Z_{u}.jsonl")),
            Some(u)
        );
        assert_eq!(generated_session_id_of("custom.jsonl"), None);
    }

    #[test]
    fn escapes_are_refused() {
        let d = tempfile::tempdir().unwrap();
        let sessions = d.path().join("agents/main/sessions");
        std::fs::create_dir_all(&sessions).unwrap();
        std::fs::create_dir_all(d.path().join("agents/work/sessions")).unwrap();
        let r = TranscriptResolver::new(&sessions, None, Some("main"));
        let real = std::fs::canonicalize(&sessions).unwrap();
        assert_eq!(
            r.resolve_session_file("a.jsonl").unwrap(),
            real.join("a.jsonl")
        );
        assert!(r.resolve_session_file("../x.jsonl").is_err());
        assert!(r.resolve_session_file("sub/../../x.jsonl").is_err());
        assert!(r.resolve_session_file("/etc/passwd").is_err());
        let sib = std::fs::canonicalize(d.path())
            .unwrap()
            .join("agents/work/sessions/s.jsonl");
        assert_eq!(r.resolve_session_file(sib.to_str().unwrap()).unwrap(), sib);
        // A refused sessionFile falls back to <sessionId>.jsonl.
        assert_eq!(
            r.resolve(Some("abc"), Some("/etc/passwd")).unwrap(),
            real.join("abc.jsonl")
        );
        assert!(r.resolve(Some("../evil"), None).is_err());
    }

    #[test]
    fn candidates_never_resolve_a_symlinked_transcript() {
        let d = tempfile::tempdir().unwrap();
        let sessions = d.path().join("agents/main/sessions");
        std::fs::create_dir_all(&sessions).unwrap();
        let outside = d.path().join("outside.jsonl");
        std::fs::write(&outside, "{}\n").unwrap();
        std::os::unix::fs::symlink(&outside, sessions.join("abc.jsonl")).unwrap();
        // A symlinked sessions directory is still resolved.
        std::os::unix::fs::symlink(d.path().join("agents"), d.path().join("link")).unwrap();
        let r = TranscriptResolver::new(&d.path().join("link/main/sessions"), None, None);
        let real = std::fs::canonicalize(&sessions).unwrap();
        assert_eq!(
            r.candidates("abc", Some("abc.jsonl"), None),
            vec![real.join("abc.jsonl")],
            "the link itself, never its target outside"
        );
    }

    #[test]
    fn symlink_out_of_the_directory_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let sessions = d.path().join("s");
        std::fs::create_dir_all(&sessions).unwrap();
        std::os::unix::fs::symlink("/etc/passwd", sessions.join("link.jsonl")).unwrap();
        let r = TranscriptResolver::new(&sessions, None, None);
        let abs = sessions.join("link.jsonl");
        assert!(r.resolve_session_file(abs.to_str().unwrap()).is_err());
    }
}
