//! Where an entry's transcript is (`store.md` §1.5), with the escape checks of spec
//! README decision 5: a `sessionId` or `sessionFile` never leads outside the sessions
//! directory or its sibling agent directories.

use std::path::{Component, Path, PathBuf};

use thiserror::Error;

use crate::exit::{self, ExitCode};
use crate::fs::data_file::DataPath;
use crate::install::context::StateContext;
use crate::install::paths::absolutize;
use crate::install::targets::StoreTarget;
use crate::js;
use crate::session::artifact::is_checkpoint_name;
use crate::session::session_key::normalize_agent_id;

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
    crate::session::artifact::is_uuid(s) && {
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

/// `p` split into its directory after realpath and its file name (not resolved): a
/// symlinked directory on the way is resolved, a symlinked file is not.
fn real_dir_and_name(p: &Path) -> Option<(PathBuf, &std::ffi::OsStr)> {
    let name = p.file_name()?;
    let dir = p.parent().filter(|d| !d.as_os_str().is_empty())?;
    Some((realpath_or(dir), name))
}

/// Resolves transcript paths for the entries of one store.
///
/// Every path it returns is a [`DataPath`]: a real directory (the sessions directory or a
/// sibling agent's) and a name of plain components below it, which is opened without
/// following any symlink (see [`crate::fs::data_file`]).
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

    /// The resolver for the entries of `target`'s store: its directory, in `ctx`'s state
    /// dir, for its agent.
    pub fn for_target(ctx: &StateContext, target: &StoreTarget) -> Self {
        let dir = target
            .store_path
            .parent()
            .map(PathBuf::from)
            .unwrap_or_default();
        TranscriptResolver::new(&dir, Some(&ctx.layout.state_dir), Some(&target.agent_id))
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
    pub fn default_path(&self, session_id: &str) -> Result<DataPath, TranscriptPathError> {
        let id = session_id.trim();
        if !is_valid_transcript_id(id) {
            return Err(TranscriptPathError::InvalidSessionId(
                session_id.to_string(),
            ));
        }
        self.beneath(&self.real_dir, Path::new(&format!("{id}.jsonl")), id)
    }

    fn beneath(
        &self,
        root: &Path,
        rel: &Path,
        named: &str,
    ) -> Result<DataPath, TranscriptPathError> {
        DataPath::beneath(root, rel).map_err(|_| TranscriptPathError::Escapes(named.to_string()))
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
    ///
    /// An absolute path is realpath'd, as the gateway does, and must land in the sessions
    /// directory or a sibling agent's. A relative one is taken below the sessions
    /// directory as written: the gateway joins it there and follows whatever links are on
    /// the way; clawstate never does: the [`DataPath`] refuses a link when opened, and
    /// [`DataPath::check`] reports it.
    pub fn resolve_session_file(
        &self,
        session_file: &str,
    ) -> Result<DataPath, TranscriptPathError> {
        let trimmed = session_file.trim();
        if trimmed.is_empty() {
            return Err(TranscriptPathError::Empty);
        }
        let escapes = || TranscriptPathError::Escapes(session_file.to_string());
        let p = Path::new(trimmed);
        if p.is_absolute() {
            // As the gateway: the realpath (a link to a file inside resolves to that file;
            // one leading out escapes), or for a file not there yet its directory's.
            let lexical = absolutize(p, Path::new("/"));
            let real = match std::fs::canonicalize(&lexical) {
                Ok(real) => real,
                Err(_) => {
                    let (dir, name) = real_dir_and_name(&lexical).ok_or_else(escapes)?;
                    dir.join(name)
                }
            };
            let below = |root: &Path| -> Option<PathBuf> {
                let rel = real.strip_prefix(root).ok()?;
                (!rel.as_os_str().is_empty()).then(|| rel.to_path_buf())
            };
            if let Some(rel) = below(&self.real_dir) {
                return self.beneath(&self.real_dir, &rel, session_file);
            }
            let mut agents: Vec<String> = self.agent_id.iter().cloned().collect();
            if let Some(a) = agent_id_from_path(&real) {
                agents.push(a);
            }
            for agent in agents {
                for sibling in self.sibling_dirs(&agent) {
                    let sibling = realpath_or(&sibling);
                    if let Some(rel) = below(&sibling) {
                        return self.beneath(&sibling, &rel, session_file);
                    }
                }
            }
            // The gateway's structural fallback: any `…/agents/<id>/sessions/<file>` is
            // followed, wherever it is (a state dir moved or restored leaves such paths:
            // see [`TranscriptResolver::foreign`]).
            if let Some((dir, name)) = structural_session_path(&real) {
                return self.beneath(dir, Path::new(name), session_file);
            }
            return Err(escapes());
        }
        // Relative: every component must stay below the directory.
        if p.components()
            .any(|c| !matches!(c, Component::Normal(_) | Component::CurDir))
        {
            return Err(escapes());
        }
        let rel: PathBuf = p
            .components()
            .filter(|c| matches!(c, Component::Normal(_)))
            .collect();
        self.beneath(&self.real_dir, &rel, session_file)
    }

    /// The transcript of an entry: its `sessionFile` when that resolves, else
    /// `<sessionId>.jsonl`.
    pub fn resolve(
        &self,
        session_id: Option<&str>,
        session_file: Option<&str>,
    ) -> Result<DataPath, TranscriptPathError> {
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
    ///
    /// A transcript that is a symlink stays the link (its directory is resolved, for
    /// de-duplication), so that archiving renames or skips the link and never its target,
    /// which may be outside the directory.
    pub fn candidates(
        &self,
        session_id: &str,
        session_file: Option<&str>,
        legacy_dir: Option<&Path>,
    ) -> Vec<DataPath> {
        let mut out: Vec<DataPath> = Vec::new();
        let mut push = |p: Result<DataPath, TranscriptPathError>| {
            if let Ok(p) = p {
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
        let id = session_id.trim();
        let name = format!("{id}.jsonl");
        if let (Some(agent), Some(root)) = (&self.agent_id, &self.default_agents_root) {
            if is_valid_transcript_id(id) {
                let dir = realpath_or(&root.join(agent).join("sessions"));
                push(self.beneath(&dir, Path::new(&name), id));
            }
        }
        if let Some(legacy) = legacy_dir {
            if is_valid_transcript_id(id) {
                push(self.beneath(&realpath_or(legacy), Path::new(&name), id));
            }
        }
        out
    }

    /// Whether `path` lies directly or deeper inside the sessions dir (not a sibling
    /// agent's, not the legacy directory).
    pub fn is_inside(&self, path: &DataPath) -> bool {
        path.root() == self.real_dir
    }

    /// The agents directories of the state dir being worked on (after realpath): the
    /// sessions directory's own (`<root>/agents`, when it has that shape) and the state
    /// dir's.
    fn agents_dirs(&self) -> Vec<PathBuf> {
        let mut out = Vec::new();
        if self.real_dir.file_name().is_some_and(|n| n == "sessions") {
            if let Some(agents) = self.real_dir.parent().and_then(Path::parent) {
                if agents.file_name().is_some_and(|n| n == "agents") {
                    out.push(agents.to_path_buf());
                }
            }
        }
        if let Some(root) = &self.default_agents_root {
            let real = realpath_or(root);
            if !out.contains(&real) {
                out.push(real);
            }
        }
        out
    }

    /// When `path` (as [`TranscriptResolver::resolve`] gave it) lies outside the state dir
    /// being worked on — the gateway follows an absolute `…/agents/<id>/sessions/<file>`
    /// wherever it points, such as the old place of a state dir that was moved or
    /// restored — what it is and its counterpart here.
    pub fn foreign(&self, path: &DataPath) -> Option<ForeignTranscript> {
        let root = path.root();
        if root == self.real_dir {
            return None;
        }
        let agents_dirs = self.agents_dirs();
        let agent = root.parent()?;
        if agent
            .parent()
            .is_some_and(|a| agents_dirs.iter().any(|d| d == a))
        {
            return None;
        }
        let id = agent.file_name()?;
        let here_agents = agents_dirs.last()?;
        Some(ForeignTranscript {
            file: path.path().to_path_buf(),
            here: here_agents.join(id).join("sessions").join(path.rel()),
        })
    }
}

/// A transcript the gateway reads outside the state dir being worked on
/// ([`TranscriptResolver::foreign`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForeignTranscript {
    /// Where the entry's `sessionFile` leads (and the gateway reads).
    pub file: PathBuf,
    /// The same file under this state dir (it may not exist).
    pub here: PathBuf,
}

impl ForeignTranscript {
    /// Why a write refuses it, in one line (after `session "<key>": `).
    pub fn refusal(&self) -> String {
        format!(
            "its transcript {} lies outside this state dir (the gateway reads it there); not written: its counterpart here is {} (`claw-sessions relocate` points the entry at it)",
            self.file.display(),
            self.here.display()
        )
    }
}

/// The gateway's `resolveStructuralSessionFallbackPath`: a path `…/agents/<id>/sessions/
/// <file>` (the last `sessions` component, one name after it, `<id>` a canonical agent id),
/// split into its directory and file name.
pub fn structural_session_path(p: &Path) -> Option<(&Path, &std::ffi::OsStr)> {
    let name = p.file_name()?;
    let dir = p.parent()?;
    let agent = dir.parent()?;
    if dir.file_name()? != "sessions" || agent.parent()?.file_name()? != "agents" {
        return None;
    }
    let id = agent.file_name()?.to_str()?;
    let lowered = js::trim(id).to_lowercase();
    // `sessions` as the file name would be the last `sessions` component itself.
    if normalize_agent_id(id) != lowered || name == "sessions" {
        return None;
    }
    Some((dir, name))
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
            r.resolve_session_file("a.jsonl").unwrap().path(),
            real.join("a.jsonl")
        );
        assert!(r.resolve_session_file("../x.jsonl").is_err());
        assert!(r.resolve_session_file("sub/../../x.jsonl").is_err());
        assert!(r.resolve_session_file("/etc/passwd").is_err());
        let sib = std::fs::canonicalize(d.path())
            .unwrap()
            .join("agents/work/sessions/s.jsonl");
        assert_eq!(
            r.resolve_session_file(sib.to_str().unwrap())
                .unwrap()
                .path(),
            sib
        );
        // A refused sessionFile falls back to <sessionId>.jsonl.
        assert_eq!(
            r.resolve(Some("abc"), Some("/etc/passwd")).unwrap().path(),
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
        let c = r.candidates("abc", Some("abc.jsonl"), None);
        assert_eq!(
            c.iter().map(DataPath::path).collect::<Vec<_>>(),
            vec![real.join("abc.jsonl")],
            "the link itself, never its target outside"
        );
        assert!(c[0].open_read().is_err(), "and it is never read through");
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

    /// A relative sessionFile through a symlinked directory resolves where the gateway
    /// would look, and is refused when checked or opened: never followed.
    #[test]
    fn a_relative_session_file_through_a_link_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let sessions = d.path().join("s");
        let outside = d.path().join("outside");
        std::fs::create_dir_all(&sessions).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("victim.jsonl"), "{}\n").unwrap();
        std::os::unix::fs::symlink(&outside, sessions.join("lnk")).unwrap();
        let r = TranscriptResolver::new(&sessions, None, None);
        let p = r.resolve(Some("x"), Some("lnk/victim.jsonl")).unwrap();
        assert_eq!(p.rel(), Path::new("lnk/victim.jsonl"));
        assert!(matches!(
            p.check(),
            Err(crate::fs::data_file::DataFileError::Symlink { .. })
        ));
        assert!(p.open_read().is_err());
        // Absolute through the same link: realpath'd out, so refused (falls back).
        let abs = sessions.join("lnk/victim.jsonl");
        assert!(r.resolve_session_file(abs.to_str().unwrap()).is_err());
    }
}
