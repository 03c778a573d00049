//! Where maintenance looks for an entry's files: the gateway's own path resolution
//! (`resolveSessionFilePath`, `resolveSessionTranscriptPathInDir`, archive candidates,
//! `canonicalizePathForComparison`), reproduced exactly so that the same files count as
//! referenced, with a realpath cache so 100k entries stay cheap.
//!
//! These functions only *name* files. Every mutation in maintenance separately checks
//! that the file it touches lies inside the sessions directory (spec README, decision 5).

use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use super::dir_snapshot::DirSnapshot;
use crate::fs::clean_path::{is_clean_absolute, split_clean};
use crate::install::paths::absolutize;
use crate::js;
use crate::session::session_key::normalize_agent_id;
use crate::store::transcript_path::{
    agent_id_from_path, is_valid_transcript_id, looks_like_generated_session_id,
};
use regex::Regex;

/// `extractGeneratedTranscriptSessionId`: the generated (UUID v1–8) session id a
/// transcript file name was derived from: `<id>.jsonl`, `<id>-topic-<t>.jsonl` or
/// `<ISO stamp>_<id>.jsonl`.
pub fn generated_session_id(session_file: &str) -> Option<&str> {
    static FORK: OnceLock<Regex> = OnceLock::new();
    let fork = FORK.get_or_init(|| {
        Regex::new(
            r"^(\d{4}-\d{2}-\d{2}T[A-Za-z0-9_-]+(?:Z|[+-]\d{2}(?:-\d{2})?)?)_([^\n\r\u{2028}\u{2029}]+)$",
        )
        .expect("static regex")
    });
    // The ids: `/^[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i`.
    let uuid = looks_like_generated_session_id;
    let trimmed = js::trim(session_file);
    if trimmed.is_empty() {
        return None;
    }
    let base = js_basename(trimmed);
    let stem = base.strip_suffix(".jsonl")?;
    if let Some(i) = stem.find("-topic-").filter(|&i| i > 0) {
        let id = &stem[..i];
        return uuid(id).then_some(id);
    }
    // A fork name starts with a date and holds `_`: most stems are a bare UUID.
    let forked = stem.as_bytes().first().is_some_and(u8::is_ascii_digit) && stem.contains('_');
    if let Some(c) = forked.then(|| fork.captures(stem)).flatten() {
        let id = c.get(2).map_or("", |m| m.as_str());
        return uuid(id).then_some(id);
    }
    uuid(stem).then_some(stem)
}

/// `path.basename` of a POSIX path string (trailing slashes ignored).
pub fn js_basename(p: &str) -> &str {
    let t = p.trim_end_matches('/');
    if t.is_empty() {
        return if p.is_empty() { "" } else { "/" };
    }
    t.rsplit('/').next().unwrap_or(t)
}

/// Whether `target` lies strictly inside `base` in the sense of the gateway's
/// `path.relative` checks: a non-empty relative path whose text does not start with `..`.
pub fn relative_inside(base: &Path, target: &Path) -> bool {
    if is_clean_absolute(base) && is_clean_absolute(target) && base.as_os_str().len() > 1 {
        let (b, t) = (bytes(base), bytes(target));
        return t.len() > b.len() + 1
            && t.starts_with(b)
            && t[b.len()] == b'/'
            && !t[b.len() + 1..].starts_with(b"..");
    }
    match target.strip_prefix(base) {
        Ok(rest) => match rest.components().next() {
            Some(Component::Normal(first)) => !first.as_encoded_bytes().starts_with(b".."),
            _ => false,
        },
        Err(_) => false,
    }
}

fn bytes(p: &Path) -> &[u8] {
    p.as_os_str().as_encoded_bytes()
}

/// The file name of `p` when `p` lies directly in `dir` (compared as paths are: by
/// components).
pub fn name_in_dir<'p>(dir: &Path, p: &'p Path) -> Option<&'p str> {
    if is_clean_absolute(p) {
        let (parent, name) = split_clean(p)?;
        if parent == bytes(dir) {
            return std::str::from_utf8(name).ok();
        }
    }
    if p.parent() == Some(dir) {
        return p.file_name()?.to_str();
    }
    None
}

/// `isPathInside`-style strict containment (`resolvedFile !== resolvedParent`): the first
/// relative segment must not be `..` itself.
pub fn strictly_inside(base: &Path, target: &Path) -> bool {
    target
        .strip_prefix(base)
        .is_ok_and(|rest| !rest.as_os_str().is_empty())
}

/// Which of an entry's session files a `sessionFile` names, relative to its `sessionId`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FileState {
    Custom,
    Current,
    Stale,
}

fn classify(session_id: Option<&str>, session_file: &str) -> FileState {
    match generated_session_id(session_file) {
        None => FileState::Custom,
        Some(g) if Some(g) == session_id => FileState::Current,
        Some(_) => FileState::Stale,
    }
}

/// Where an entry's transcript is, for the sets of referenced files
/// ([`SessionPaths::entry_transcript_name`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TranscriptName<'a> {
    /// The entry has no transcript inside the directory (no artifacts at all).
    Nothing,
    /// Directly in the real directory under this name, which is not a symlink: the file
    /// is its own canonical path.
    InDir(std::borrow::Cow<'a, str>),
    /// Elsewhere, or needs a realpath: use [`SessionPaths::entry_artifacts`].
    Other,
}

/// Path resolution for one store's sessions directory.
#[derive(Debug)]
pub struct SessionPaths {
    sessions_dir: PathBuf,
    real_dir: PathBuf,
    agents_root: PathBuf,
    legacy_dir: Option<PathBuf>,
    cwd: PathBuf,
    real_dirs: Mutex<HashMap<PathBuf, Option<PathBuf>>>,
    snapshot: OnceLock<Arc<DirSnapshot>>,
}

impl SessionPaths {
    /// Paths for the store at `store_path`; `state_dir` locates the default
    /// `<stateDir>/agents/<id>/sessions` directories, `legacy_dir` the home-based
    /// `~/.openclaw/sessions`, and `cwd` resolves relative paths.
    pub fn new(store_path: &Path, state_dir: &Path, legacy_dir: Option<&Path>, cwd: &Path) -> Self {
        let store = absolutize(store_path, cwd);
        let sessions_dir = store
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from("/"));
        let real_dir =
            std::fs::canonicalize(&sessions_dir).unwrap_or_else(|_| sessions_dir.clone());
        // The legacy directory's files matter only when it lies inside this one (they are
        // archived only from inside); realpath it once.
        let legacy_dir = legacy_dir
            .map(|d| {
                let d = absolutize(d, cwd);
                std::fs::canonicalize(&d).unwrap_or(d)
            })
            .filter(|d| relative_inside(&real_dir, d));
        SessionPaths {
            sessions_dir,
            real_dir,
            agents_root: absolutize(&state_dir.join("agents"), cwd),
            legacy_dir,
            cwd: cwd.to_path_buf(),
            real_dirs: Mutex::new(HashMap::new()),
            snapshot: OnceLock::new(),
        }
    }

    /// The sessions directory (the store's directory, absolute).
    pub fn sessions_dir(&self) -> &Path {
        &self.sessions_dir
    }

    /// The sessions directory after realpath.
    pub fn real_dir(&self) -> &Path {
        &self.real_dir
    }

    fn real_parent(&self, dir: &Path) -> Option<PathBuf> {
        // A poisoned cache is still a cache: a panic cannot leave an entry half-made.
        let cache = || self.real_dirs.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(hit) = cache().get(dir) {
            return hit.clone();
        }
        let real = std::fs::canonicalize(dir).ok();
        cache().insert(dir.to_path_buf(), real.clone());
        real
    }

    /// `canonicalizePathForComparison`: the path made absolute (against the cwd) and
    /// lexically normalised, then its realpath when it exists.
    pub fn canonical(&self, p: &Path) -> PathBuf {
        if is_clean_absolute(p) {
            // Directly in the real directory: only a symlink resolves elsewhere (one read
            // of the directory instead of a stat per path).
            if let Some((parent, name)) = split_clean(p) {
                if parent == bytes(&self.real_dir) {
                    if let Some(snap) = self.dir_entries() {
                        return if snap.is_symlink(name) {
                            std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
                        } else {
                            p.to_path_buf()
                        };
                    }
                }
            }
        }
        let p = if is_clean_absolute(p) {
            p.to_path_buf()
        } else {
            absolutize(p, &self.cwd)
        };
        let (Some(parent), Some(name)) = (p.parent(), p.file_name()) else {
            return p;
        };
        match std::fs::symlink_metadata(&p) {
            Err(_) => p,
            Ok(m) if m.file_type().is_symlink() => std::fs::canonicalize(&p).unwrap_or(p),
            Ok(_) => match self.real_parent(parent) {
                Some(real) => real.join(name),
                None => p,
            },
        }
    }

    /// What was directly in the real directory when first asked (or when given with
    /// [`SessionPaths::set_snapshot`]); `None` when it cannot be read. Maintenance never
    /// creates links, and the only files it creates are archives and the store, so the
    /// snapshot stays good for these lookups.
    fn dir_entries(&self) -> Option<&DirSnapshot> {
        Some(&**self.snapshot()).filter(|s| s.readable())
    }

    /// The listing of the real directory: the one given, else read when first asked.
    pub fn snapshot(&self) -> &Arc<DirSnapshot> {
        self.snapshot
            .get_or_init(|| Arc::new(DirSnapshot::read(&self.real_dir)))
    }

    /// Uses `snapshot` (a listing of the real directory) from now on.
    pub fn set_snapshot(&mut self, snapshot: Arc<DirSnapshot>) {
        self.snapshot = OnceLock::from(snapshot);
    }

    /// Forgets the listing: the next use reads the directory again.
    pub fn forget_snapshot(&mut self) {
        self.snapshot = OnceLock::new();
    }

    /// Whether `p` may exist: false only for a path directly in the real directory that
    /// was not there when the directory was first read (saves a `stat` per sidecar).
    pub fn may_exist(&self, p: &Path) -> bool {
        if !is_clean_absolute(p) {
            return true;
        }
        match (split_clean(p), self.dir_entries()) {
            (Some((parent, name)), Some(snap)) if parent == bytes(&self.real_dir) => {
                snap.lookup(name).is_some()
            }
            _ => true,
        }
    }

    /// Whether `p` is a regular file (links not followed): from the listing for a file
    /// directly in the real directory, else by `lstat`.
    pub fn is_regular_file(&self, p: &Path) -> bool {
        if let (Some(name), Some(snap)) = (name_in_dir(&self.real_dir, p), self.dir_entries()) {
            return snap
                .lookup(name.as_bytes())
                .is_some_and(|i| snap.kind(i) == super::dir_snapshot::EntryKind::File);
        }
        std::fs::symlink_metadata(p).is_ok_and(|m| m.is_file())
    }

    /// For a clean absolute path directly in the real directory that was not a symlink
    /// when listed, whether it is a regular file inside the directory, and where the
    /// listing found it: what `canonical` (the path itself), `is_inside` and
    /// `is_regular_file` say of it, with one lookup. `Some(None)`: not one; `None` for any
    /// other path (ask them).
    pub fn listed_regular_file(&self, p: &Path) -> Option<Option<usize>> {
        if !is_clean_absolute(p) {
            return None;
        }
        let (parent, name) = split_clean(p)?;
        if parent != bytes(&self.real_dir) {
            return None;
        }
        let snap = self.dir_entries()?;
        let Some(i) = snap.lookup(name) else {
            return Some(None);
        };
        match snap.kind(i) {
            super::dir_snapshot::EntryKind::Symlink => None,
            super::dir_snapshot::EntryKind::File => {
                Some(relative_inside(&self.real_dir, p).then_some(i))
            }
            _ => Some(None),
        }
    }

    /// Whether a canonical path lies inside the (real) sessions directory.
    pub fn is_inside(&self, canonical: &Path) -> bool {
        relative_inside(&self.real_dir, canonical)
    }

    fn resolve_in_agent_dir(&self, agent_dir: &Path, real_candidate: &Path) -> Option<PathBuf> {
        let base = self
            .real_parent(agent_dir)
            .unwrap_or_else(|| agent_dir.to_path_buf());
        relative_inside(&base, real_candidate).then(|| real_candidate.to_path_buf())
    }

    fn agent_fallback(&self, agent_id: &str, real_candidate: &Path) -> Option<PathBuf> {
        let id = normalize_agent_id(agent_id);
        let base = &self.real_dir;
        if base.file_name().is_some_and(|n| n == "sessions") {
            if let Some(agents) = base.parent().and_then(Path::parent) {
                if agents.file_name().is_some_and(|n| n == "agents") {
                    let sibling = agents.join(&id).join("sessions");
                    if let Some(p) = self.resolve_in_agent_dir(&sibling, real_candidate) {
                        return Some(p);
                    }
                }
            }
        }
        self.resolve_in_agent_dir(&self.agents_root.join(&id).join("sessions"), real_candidate)
    }

    /// `resolvePathWithinSessionsDir(sessionsDir, candidate)` without an explicit agent:
    /// relative names are joined to the real directory (lexically), absolute ones are
    /// realpath-ed and must be inside it or inside an `agents/<id>/sessions` directory.
    pub fn within_sessions_dir(&self, candidate: &str) -> Option<PathBuf> {
        let trimmed = js::trim(candidate);
        if trimmed.is_empty() {
            return None;
        }
        let p = Path::new(trimmed);
        if !p.is_absolute() {
            if trimmed.starts_with("..") {
                return None;
            }
            return Some(absolutize(&self.real_dir.join(p), Path::new("/")));
        }
        let real = self.canonical(p);
        if relative_inside(&self.real_dir, &real) {
            return Some(real);
        }
        if real == self.real_dir {
            return None;
        }
        let agent = agent_id_from_path(&real)?;
        if let Some(found) = self.agent_fallback(&agent, &real) {
            return Some(found);
        }
        // Structural fallback: `…/agents/<id>/sessions/<file>` with a canonical id.
        let parts: Vec<&str> = real.iter().filter_map(|c| c.to_str()).collect();
        let i = parts.iter().rposition(|c| *c == "sessions")?;
        let agent_part = parts.get(i.checked_sub(1)?)?;
        let lowered = js::trim(agent_part).to_lowercase();
        if normalize_agent_id(agent_part) != lowered || parts.len() != i + 2 {
            return None;
        }
        let file = parts[i + 1];
        (file != "." && file != "..").then_some(real)
    }

    /// `resolveSessionTranscriptPathInDir(sessionId, sessionsDir)`: `<realDir>/<id>.jsonl`
    /// for a valid id.
    pub fn transcript_in_dir(&self, session_id: &str) -> Option<PathBuf> {
        let id = js::trim(session_id);
        is_valid_transcript_id(id).then(|| self.real_dir.join(format!("{id}.jsonl")))
    }

    /// `resolveSessionFilePath(sessionId, {sessionFile}, {sessionsDir})`: the entry's
    /// `sessionFile` when it resolves, else `<sessionId>.jsonl`.
    pub fn session_file_path(
        &self,
        session_id: Option<&str>,
        session_file: Option<&str>,
    ) -> Option<PathBuf> {
        if let Some(f) = session_file {
            if let Some(p) = self.within_sessions_dir(f) {
                return Some(p);
            }
        }
        self.transcript_in_dir(session_id?)
    }

    /// `resolveSessionTranscriptPathForEntry`: an entry's transcript, canonical, when it
    /// lies inside the sessions directory.
    pub fn entry_transcript(
        &self,
        session_id: Option<&str>,
        session_file: Option<&str>,
    ) -> Option<PathBuf> {
        let id = session_id.filter(|s| !s.is_empty())?;
        let resolved = self.session_file_path(Some(id), session_file)?;
        let canonical = self.canonical(&resolved);
        self.is_inside(&canonical).then_some(canonical)
    }

    /// The common case of [`SessionPaths::entry_transcript`] without building paths: the
    /// transcript is `<real dir>/<name>` named by an absolute `sessionFile` or by the
    /// `sessionId`, and is not a symlink.
    pub fn entry_transcript_name<'a>(
        &self,
        session_id: Option<&str>,
        session_file: Option<&'a str>,
    ) -> TranscriptName<'a> {
        use std::borrow::Cow;
        let Some(id) = session_id.filter(|s| !s.is_empty()) else {
            return TranscriptName::Nothing;
        };
        let Some(snap) = self.dir_entries() else {
            return TranscriptName::Other;
        };
        let plain = |name: &[u8]| !name.starts_with(b"..") && !snap.is_symlink(name);
        let file = session_file.map(js::trim).filter(|f| !f.is_empty());
        if let Some(f) = file {
            let p = Path::new(f);
            if !is_clean_absolute(p) {
                return TranscriptName::Other;
            }
            return match split_clean(p) {
                Some((parent, name)) if parent == bytes(&self.real_dir) && plain(name) => {
                    TranscriptName::InDir(Cow::Borrowed(&f[f.len() - name.len()..]))
                }
                _ => TranscriptName::Other,
            };
        }
        let id = js::trim(id);
        if !is_valid_transcript_id(id) {
            return TranscriptName::Nothing;
        }
        let name = format!("{id}.jsonl");
        if plain(name.as_bytes()) {
            TranscriptName::InDir(Cow::Owned(name))
        } else {
            TranscriptName::Other
        }
    }

    /// Whether `name` directly in the real directory was a symlink when listed (`None`:
    /// the directory could not be listed).
    pub fn is_link_in_dir(&self, name: &[u8]) -> Option<bool> {
        Some(self.dir_entries()?.is_symlink(name))
    }

    /// `resolveSessionArtifactCanonicalPathsForEntry`: the transcript and its trajectory
    /// pointer and runtime sidecars, canonical (empty when the transcript is outside).
    pub fn entry_artifacts(
        &self,
        session_id: Option<&str>,
        session_file: Option<&str>,
    ) -> Vec<PathBuf> {
        let Some(t) = self.entry_transcript(session_id, session_file) else {
            return Vec::new();
        };
        let (runtime, pointer) = trajectory_paths(&t);
        let pointer = self.canonical(&pointer);
        let runtime = self.canonical(&runtime);
        vec![t, pointer, runtime]
    }

    /// The canonical checkpoint files (`compactionCheckpoints[].*.sessionFile`) that lie
    /// inside the sessions directory.
    pub fn checkpoint_files(&self, files: &[String]) -> Vec<PathBuf> {
        files
            .iter()
            .map(|f| self.canonical(Path::new(f)))
            .filter(|c| self.is_inside(c))
            .collect()
    }

    /// `resolveSessionTranscriptCandidates(sessionId, storePath, sessionFile)`: every file
    /// that may hold a removed session's transcript, de-duplicated, in the gateway's order
    /// (not yet canonical, not yet restricted to the directory).
    pub fn archive_candidates(
        &self,
        session_id: Option<&str>,
        session_file: Option<&str>,
    ) -> Vec<PathBuf> {
        let mut out: Vec<PathBuf> = Vec::new();
        let file = session_file.filter(|f| !f.is_empty());
        let state = file.map(|f| classify(session_id, f));
        if state.is_some_and(|s| s != FileState::Stale) {
            out.extend(self.session_file_path(session_id, file));
        }
        if let Some(id) = session_id {
            out.extend(self.transcript_in_dir(id));
        }
        if state == Some(FileState::Stale) {
            out.extend(self.session_file_path(session_id, file));
        }
        if let (Some(dir), Some(id)) = (&self.legacy_dir, session_id) {
            let id = js::trim(id);
            if is_valid_transcript_id(id) {
                out.push(dir.join(format!("{id}.jsonl")));
            }
        }
        // At most four: keep each first occurrence without hashing.
        let mut i = 0;
        while i < out.len() {
            if out[..i].contains(&out[i]) {
                out.remove(i);
            } else {
                i += 1;
            }
        }
        out
    }
}

/// The trajectory sidecars of a transcript path: (runtime `.trajectory.jsonl`, pointer
/// `.trajectory-path.json`), by string substitution as the gateway does.
pub fn trajectory_paths(transcript: &Path) -> (PathBuf, PathBuf) {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let s = transcript.as_os_str().as_bytes();
    let base = s.strip_suffix(b".jsonl").unwrap_or(s);
    let with = |suffix: &[u8]| PathBuf::from(OsStr::from_bytes(&[base, suffix].concat()));
    (with(b".trajectory.jsonl"), with(b".trajectory-path.json"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const U: &str = "123e4567-e89b-42d3-a456-426614174000";

    /// The hand-written UUID check is the gateway's regex, on ids that nearly are UUIDs.
    #[test]
    fn the_generated_id_check_is_the_gateways_regex() {
        let re = Regex::new(
            r"^(?i)[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$",
        )
        .unwrap();
        let base = "0f1e2d3c-4b5a-4978-8a9b-0c1d2e3f4a5b";
        let mut ids = vec![base.to_string(), base.to_uppercase(), String::new()];
        for at in 0..base.len() {
            for c in [
                '0', '9', 'a', 'f', 'A', 'F', 'g', 'G', '-', 'é', '\n', '1', '8', 'b', 'B', 'c',
            ] {
                let mut id: Vec<char> = base.chars().collect();
                id[at] = c;
                ids.push(id.iter().collect());
            }
            ids.push(format!("{}{}", &base[..at], &base[at + 1..]));
            ids.push(format!("{}x{}", &base[..at], &base[at..]));
        }
        ids.push(format!("{base}\n"));
        for id in &ids {
            assert_eq!(
                looks_like_generated_session_id(id),
                re.is_match(id),
                "{id:?}"
            );
            let file = format!("/s/{id}.jsonl");
            assert_eq!(
                generated_session_id(&file),
                re.is_match(id).then_some(id.as_str()),
                "{file:?}"
            );
        }
    }

    #[test]
    fn generated_ids() {
        assert_eq!(generated_session_id(&format!("/x/{U}.jsonl")), Some(U));
        assert_eq!(
            generated_session_id(&format!("{U}-topic-42.jsonl")),
            Some(U)
        );
        assert_eq!(
            generated_session_id(&format!("2026-01-02T03-04-05-678Z_{U}.jsonl")),
            Some(U)
        );
        assert_eq!(generated_session_id("custom.jsonl"), None);
        assert_eq!(generated_session_id(&format!("{U}.json")), None);
        // Version 9 is not a generated id.
        assert_eq!(
            generated_session_id("123e4567-e89b-92d3-a456-426614174000.jsonl"),
            None
        );
    }

    #[test]
    fn inside_checks() {
        let b = Path::new("/a/s");
        assert!(relative_inside(b, Path::new("/a/s/x.jsonl")));
        assert!(relative_inside(b, Path::new("/a/s/sub/x.jsonl")));
        assert!(!relative_inside(b, Path::new("/a/s")));
        assert!(!relative_inside(b, Path::new("/a/sx/y")));
        assert!(!relative_inside(b, Path::new("/a/s/..x")));
        assert!(strictly_inside(b, Path::new("/a/s/..x")));
    }

    #[test]
    fn resolution_like_the_gateway() {
        let d = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(d.path()).unwrap();
        let sessions = root.join("state/agents/main/sessions");
        std::fs::create_dir_all(&sessions).unwrap();
        std::fs::create_dir_all(root.join("state/agents/work/sessions")).unwrap();
        let p = SessionPaths::new(
            &sessions.join("sessions.json"),
            &root.join("state"),
            None,
            &root,
        );
        assert_eq!(
            p.within_sessions_dir("a.jsonl"),
            Some(sessions.join("a.jsonl"))
        );
        assert_eq!(p.within_sessions_dir("../a.jsonl"), None);
        // The gateway joins relative names lexically: this one escapes.
        assert_eq!(
            p.within_sessions_dir("sub/../../a.jsonl"),
            Some(root.join("state/agents/main/a.jsonl"))
        );
        let sib = root.join("state/agents/work/sessions/s.jsonl");
        assert_eq!(p.within_sessions_dir(sib.to_str().unwrap()), Some(sib));
        // Structural fallback: any `agents/<id>/sessions/<file>` shape.
        let elsewhere = root.join("other/agents/x/sessions/f.jsonl");
        assert_eq!(
            p.within_sessions_dir(elsewhere.to_str().unwrap()),
            Some(elsewhere)
        );
        assert_eq!(p.within_sessions_dir("/etc/passwd"), None);
        assert_eq!(
            p.session_file_path(Some("abc"), Some("/etc/passwd")),
            Some(sessions.join("abc.jsonl"))
        );
        assert_eq!(p.session_file_path(Some("../evil"), None), None);
        // Outside transcripts are not artifacts of the entry.
        let sib = root.join("state/agents/work/sessions/s.jsonl");
        assert!(p.entry_artifacts(Some("abc"), sib.to_str()).is_empty());
        assert_eq!(
            p.entry_artifacts(Some("abc"), None),
            vec![
                sessions.join("abc.jsonl"),
                sessions.join("abc.trajectory-path.json"),
                sessions.join("abc.trajectory.jsonl")
            ]
        );
    }

    #[test]
    fn candidates_order_stale_file_last() {
        let d = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(d.path()).unwrap();
        let p = SessionPaths::new(&root.join("sessions.json"), &root, None, &root);
        let other = "223e4567-e89b-42d3-a456-426614174000";
        let c = p.archive_candidates(Some(U), Some(&format!("{other}.jsonl")));
        assert_eq!(
            c,
            vec![
                root.join(format!("{U}.jsonl")),
                root.join(format!("{other}.jsonl"))
            ]
        );
        let c = p.archive_candidates(Some(U), Some("custom.jsonl"));
        assert_eq!(
            c,
            vec![root.join("custom.jsonl"), root.join(format!("{U}.jsonl"))]
        );
        let c = p.archive_candidates(None, Some("custom.jsonl"));
        assert_eq!(c, vec![root.join("custom.jsonl")]);
    }

    /// Where the one-lookup answer is given, it is what `canonical`, `is_inside` and
    /// `is_regular_file` say, with the position of the file listed; symlinks and paths
    /// not directly in the directory are left to them.
    #[test]
    fn regular_files_in_dir_by_one_lookup() {
        let (_d, root) = super::super::dir_snapshot::fixtures::file_dir_and_link();
        std::fs::write(root.join("sub/g.jsonl"), "x").unwrap();
        let p = SessionPaths::new(&root.join("sessions.json"), &root, None, &root);
        let mut answered = 0;
        for name in [
            "a.jsonl",
            "sub",
            "missing.jsonl",
            "l.jsonl",
            "sub/g.jsonl",
            "../x",
        ] {
            let path = root.join(name);
            let c = p.canonical(&path);
            let slow = p.is_inside(&c) && p.is_regular_file(&c);
            if let Some(fast) = p.listed_regular_file(&path) {
                assert_eq!(fast.is_some(), slow, "{name}");
                if let Some(at) = fast {
                    assert_eq!(p.snapshot().name(at), name, "where {name} was listed");
                }
                answered += 1;
            }
        }
        assert_eq!(
            answered, 3,
            "a.jsonl, sub and missing.jsonl are answered by the lookup"
        );
        assert_eq!(p.listed_regular_file(&root.join("l.jsonl")), None);
    }

    #[test]
    fn canonical_follows_symlinked_parents() {
        let d = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(d.path()).unwrap();
        std::fs::create_dir(root.join("real")).unwrap();
        std::os::unix::fs::symlink(root.join("real"), root.join("link")).unwrap();
        std::fs::write(root.join("real/f"), "x").unwrap();
        let p = SessionPaths::new(&root.join("sessions.json"), &root, None, &root);
        assert_eq!(p.canonical(&root.join("link/f")), root.join("real/f"));
        assert_eq!(
            p.canonical(&root.join("link/missing")),
            root.join("link/missing")
        );
    }
}
