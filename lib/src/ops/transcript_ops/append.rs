//! `claw-transcript append`: one message appended as the gateway's appender does
//! (`transcript.md` §3), after the write rules of [`super::write_access`]; the locking,
//! deduplication and header creation are `transcript::append`'s.

use serde::Serialize;
use serde_json::{json, Map, Value};

use crate::install::context::StateContext;
use crate::transcript::append;

use super::write_access::{lock_settings, writable_session};
use super::TranscriptOpError;

/// What `append` did (or would do, for a dry run).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AppendResult {
    /// The transcript, as shown.
    pub path: String,
    /// Whether nothing was written.
    pub dry_run: bool,
    /// What the appender did.
    #[serde(flatten)]
    pub outcome: append::AppendOutcome,
}

/// The message `--role ROLE --text TEXT` appends: one text block, now; an assistant
/// message is marked as the gateway marks what it injects (`openclaw`/`gateway-injected`).
pub fn text_message(role: &str, text: &str, now_ms: i64) -> Value {
    let mut m = Map::new();
    m.insert("role".into(), json!(role));
    m.insert("content".into(), json!([{"type": "text", "text": text}]));
    if role == "assistant" {
        m.insert("provider".into(), json!("openclaw"));
        m.insert("model".into(), json!("gateway-injected"));
    }
    m.insert("timestamp".into(), json!(now_ms));
    Value::Object(m)
}

/// Appends `message` to `arg`'s transcript (`dedupe`: not when a row with its
/// idempotencyKey exists); `warn` receives warnings.
pub fn append(
    ctx: &StateContext,
    arg: &str,
    message: Value,
    dedupe: bool,
    dry_run: bool,
    warn: &mut dyn FnMut(&str),
) -> Result<AppendResult, TranscriptOpError> {
    let s = writable_session(ctx, arg, dry_run, warn)?;
    let req = append::AppendRequest {
        path: &s.file,
        message,
        session_id: s.session_id.clone(),
        cwd: ctx.env.cwd().to_string_lossy().into_owned(),
        now_ms: ctx.now_ms,
        dedupe,
        lock: lock_settings(ctx),
        dry_run,
    };
    let o = append::append_message(&req)?;
    Ok(AppendResult {
        path: s.path.to_string_lossy().into_owned(),
        dry_run,
        outcome: o,
    })
}
