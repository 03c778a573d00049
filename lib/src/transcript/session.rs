//! What a `SESSION` argument names: a session key (resolved through the store), a
//! sessionId, or a path to a `.jsonl` file. Ids and `sessionFile`s from the store go through
//! [`TranscriptResolver`](crate::transcript_path::TranscriptResolver), which refuses escapes.

use std::path::PathBuf;

use serde_json::{Map, Value};
use thiserror::Error;

use crate::context::StateContext;
use crate::data_file::DataPath;
use crate::exit::{self, ExitCode};
use crate::session_ops::{self, OpsError};
use crate::targets::StoreTarget;
use crate::transcript_path::{is_valid_transcript_id, ForeignTranscript};

/// A `SESSION` argument that cannot be resolved.
#[derive(Debug, Error)]
pub enum SessionError {
    /// No entry and no transcript by that name.
    #[error("no session or transcript {0:?} (give a session key, a sessionId or a path to a .jsonl file)")]
    NotFound(String),
    /// The entry's transcript path is unusable (escapes the sessions directory, passes
    /// through a symlink, is not a regular file, bad id).
    #[error("session {key:?}: {message}")]
    BadPath {
        /// The store key.
        key: String,
        /// Why.
        message: String,
    },
    /// The transcript lies outside the state dir being worked on: read there (as the
    /// gateway does), never written.
    #[error("session {key:?}: {}", foreign.refusal())]
    Foreign {
        /// The store key.
        key: String,
        /// Where the transcript is, and its counterpart here.
        foreign: ForeignTranscript,
    },
    /// The store or its options failed.
    #[error(transparent)]
    Ops(#[from] OpsError),
}

impl ExitCode for SessionError {
    fn exit_code(&self) -> i32 {
        match self {
            SessionError::NotFound(_) => exit::NOT_FOUND,
            SessionError::BadPath { .. } | SessionError::Foreign { .. } => exit::DATA_ERR,
            SessionError::Ops(e) => e.exit_code(),
        }
    }
}

/// A resolved `SESSION`.
#[derive(Debug, Clone)]
pub struct SessionRef {
    /// The transcript file (it may not exist yet), as shown to the user.
    pub path: PathBuf,
    /// The transcript file as it is opened: below its directory, never through a link.
    pub file: DataPath,
    /// The store key, when resolved through the store.
    pub key: Option<String>,
    /// The store the key lives in.
    pub target: Option<StoreTarget>,
    /// The entry.
    pub entry: Option<Map<String, Value>>,
    /// The session id (entry's, or the file name's).
    pub session_id: Option<String>,
    /// The key as `sessions_history` shows it (`main` for the main session).
    pub display_key: String,
    /// When the transcript lies outside the state dir being worked on: where, and its
    /// counterpart here (reads say so; [`SessionRef::for_writing`] refuses).
    pub foreign: Option<ForeignTranscript>,
}

impl SessionRef {
    /// The session, for a command that writes its transcript: refused (exit 65, naming
    /// both paths) when the transcript lies outside the state dir being worked on, where
    /// a write would change a file this state dir's gateway may not even read.
    pub fn for_writing(self) -> Result<SessionRef, SessionError> {
        match &self.foreign {
            Some(f) => Err(SessionError::Foreign {
                key: self.key.clone().unwrap_or_else(|| self.display_key.clone()),
                foreign: f.clone(),
            }),
            None => Ok(self),
        }
    }

    /// The warning a read of a transcript outside the state dir prints, if any.
    pub fn foreign_warning(&self) -> Option<String> {
        self.foreign.as_ref().map(|f| {
            format!(
                "session {:?}: reading {}, outside this state dir, as the gateway does (its counterpart here: {}; see `claw-sessions relocate`)",
                self.key.as_deref().unwrap_or(&self.display_key),
                f.file.display(),
                f.here.display()
            )
        })
    }
}

fn looks_like_path(arg: &str) -> bool {
    arg.contains('/') || arg.ends_with(".jsonl") || arg.starts_with('.')
}

/// Resolves `arg` against the state directory of `ctx`.
pub fn resolve(ctx: &StateContext, arg: &str) -> Result<SessionRef, SessionError> {
    if looks_like_path(arg) {
        let path = crate::paths::absolutize(std::path::Path::new(arg), ctx.env.cwd());
        // A path typed by the user is followed as given, once (like `cat` would), and must
        // be a regular file: a FIFO or a device is never read.
        let file = DataPath::given(&path);
        file.check().map_err(|e| SessionError::BadPath {
            key: arg.to_string(),
            message: e.to_string(),
        })?;
        let session_id = path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_suffix(".jsonl"))
            .filter(|s| is_valid_transcript_id(s))
            .map(String::from);
        return Ok(SessionRef {
            path,
            file,
            key: None,
            target: None,
            entry: None,
            session_id,
            display_key: arg.to_string(),
            foreign: None,
        });
    }
    match session_ops::show(ctx, arg) {
        Ok(shown) => {
            let key = shown.matched.store_key.clone();
            let file = shown.transcript.map_err(|message| SessionError::BadPath {
                key: key.clone(),
                message,
            })?;
            let session_id = shown
                .entry
                .get("sessionId")
                .and_then(Value::as_str)
                .map(String::from);
            let kc = ctx.key_context();
            let main = format!("agent:{}:{}", kc.default_agent_id, kc.main_key);
            let display_key =
                if key == main || key == kc.main_key || (kc.scope_global && key == "global") {
                    "main".to_string()
                } else {
                    key.clone()
                };
            Ok(SessionRef {
                path: file.path().to_path_buf(),
                file,
                key: Some(key),
                target: Some(shown.target),
                entry: Some(shown.entry),
                session_id,
                display_key,
                foreign: shown.transcript_foreign,
            })
        }
        Err(e) if e.exit_code() == exit::NOT_FOUND => {
            let id = arg.trim();
            if is_valid_transcript_id(id) {
                for target in ctx.targets().map_err(OpsError::from)? {
                    let resolver = session_ops::resolver_for(ctx, &target);
                    if let Ok(p) = resolver.default_path(id) {
                        let found = p.check().map_err(|e| SessionError::BadPath {
                            key: id.to_string(),
                            message: e.to_string(),
                        })?;
                        if found {
                            return Ok(SessionRef {
                                path: p.path().to_path_buf(),
                                file: p,
                                key: None,
                                target: Some(target),
                                entry: None,
                                session_id: Some(id.to_string()),
                                display_key: id.to_string(),
                                foreign: None,
                            });
                        }
                    }
                }
            }
            Err(SessionError::NotFound(arg.to_string()))
        }
        Err(e) => Err(e.into()),
    }
}
