//! `claw-transcript history` end to end on a resolved session, on either layout: the
//! `chat.history` page the gateway builds (`transcript::tail::chat_history_with`, with what
//! the 2026.9.6 gateway adds on the agent-database path, `transcript::history_db`), and
//! the `sessions_history` tool result made of it.
//!
//! The first page is a bounded read of the end, so a session of the agent database is
//! copied only that far ([`copy_scope`]); offset pages index the whole transcript.

use serde_json::Value;
use thiserror::Error;

use crate::agent_db::{AgentDb, AgentDbError};
use crate::exit::ExitCode;
use crate::transcript::history::{self, ChatHistory};
use crate::transcript::history_db::{self, DbHistory};
use crate::transcript::reader::ReadError;
use crate::transcript::session::{CopyScope, SessionRef};
use crate::transcript::tail;

/// Why a history page could not be built.
#[derive(Debug, Error)]
pub enum HistoryViewError {
    /// The transcript (or its copy) could not be read.
    #[error(transparent)]
    Read(#[from] ReadError),
    /// The agent database could not be read.
    #[error(transparent)]
    AgentDb(#[from] AgentDbError),
}

impl ExitCode for HistoryViewError {
    fn exit_code(&self) -> i32 {
        match self {
            HistoryViewError::Read(e) => e.exit_code(),
            HistoryViewError::AgentDb(e) => e.exit_code(),
        }
    }
}

/// What page of history to build.
#[derive(Debug, Clone, Copy)]
pub struct HistoryRequest {
    /// `limit` (default 200, at most 1000; never 0).
    pub limit: Option<usize>,
    /// `offset`: `None` for the first page without pagination fields.
    pub offset: Option<u64>,
    /// Whether tool results stay in the `sessions_history` result.
    pub include_tools: bool,
    /// The clock.
    pub now_ms: i64,
}

/// How much of a transcript kept in the agent database the page reads: the first page
/// only the end the gateway's bounded read looks at, an offset page all of it.
pub fn copy_scope(offset: Option<u64>) -> CopyScope {
    match offset {
        None => CopyScope::Tail(tail::CHAT_HISTORY_TAIL_BYTES),
        Some(_) => CopyScope::Whole,
    }
}

/// The `chat.history` page of session `s` (`claw-transcript history --page`).
pub fn chat_history_page(
    s: &SessionRef,
    req: &HistoryRequest,
) -> Result<ChatHistory, HistoryViewError> {
    with_page(s, req, |page, _| Ok(page))
}

/// The `sessions_history` tool result of session `s`: the page, sanitized and within the
/// tool's 80 KiB; a session of the agent database adds its `pendingInputs`, whose bytes
/// count against that budget.
pub fn sessions_history(s: &SessionRef, req: &HistoryRequest) -> Result<Value, HistoryViewError> {
    with_page(s, req, |page, db| match db {
        Some(h) => {
            let pending = h.pending_inputs(s.key.as_deref(), req.limit)?;
            let mut r = history::sessions_history_result_within(
                &s.display_key,
                &page,
                req.include_tools,
                req.offset,
                history::SESSIONS_HISTORY_MAX_BYTES - history::json_bytes(&pending.page),
            );
            history_db::add_pending_inputs(&mut r, pending);
            Ok(r)
        }
        None => Ok(history::sessions_history_result(
            &s.display_key,
            &page,
            req.include_tools,
            req.offset,
        )),
    })
}

/// Builds the page of `s` and hands it to `then`, with the session's database reader when
/// it comes from the agent database.
fn with_page<T>(
    s: &SessionRef,
    req: &HistoryRequest,
    then: impl FnOnce(ChatHistory, Option<&DbHistory<'_>>) -> Result<T, HistoryViewError>,
) -> Result<T, HistoryViewError> {
    let q = tail::HistoryQuery {
        limit: req.limit,
        offset: req.offset,
        session_started_at: s
            .entry
            .as_ref()
            .and_then(|e| e.get("sessionStartedAt"))
            .and_then(Value::as_f64),
        max_chars: history::CHAT_HISTORY_TEXT_MAX_CHARS,
        now_ms: req.now_ms,
    };
    // A session of the agent database: what the 9.6 gateway adds on that path.
    let db = match (&s.agent_db, &s.session_id) {
        (Some(path), Some(sid)) => Some((AgentDb::open(path)?, sid.as_str())),
        _ => None,
    };
    let db_history = match &db {
        Some((db, sid)) => {
            let agent = s.target.as_ref().map_or("main", |t| t.agent_id.as_str());
            Some(DbHistory::new(db, agent, sid)?)
        }
        None => None,
    };
    let mut annotate_failed = None;
    let page = tail::chat_history_with(&s.file, &q, &mut |messages| {
        if let Some(h) = &db_history {
            if let Err(e) = h.annotate(messages, q.max_chars) {
                annotate_failed.get_or_insert(e);
            }
        }
    })?;
    if let Some(e) = annotate_failed {
        return Err(e.into());
    }
    then(page, db_history.as_ref())
}
