//! `claw-transcript repair`: the gateway's repair pass over a transcript, with the header
//! recovery SessionManager does first (`transcript.md` §3), or only the removal of a torn
//! last line (`--trim-torn-tail`), under the write lock and atomically.

use serde::Serialize;

use crate::install::context::StateContext;
use crate::transcript::repair;

use super::locked_rewrite::{kept_original, locked_rewrite, Change};
use super::write_access::writable_session;
use super::TranscriptOpError;

/// What `repair` did (or would do, for a dry run).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RepairResult {
    /// The transcript, as shown.
    pub path: String,
    /// Whether nothing was written.
    pub dry_run: bool,
    /// Whether the file changed.
    pub changed: bool,
    /// Whether the header was recovered (the original kept as `corrupt_copy`).
    pub header_recovered: bool,
    /// Where the original was kept.
    pub corrupt_copy: Option<String>,
    /// What the repair pass found and did.
    #[serde(flatten)]
    pub report: repair::RepairReport,
    /// Whether the repair pass itself changed anything (not counting header recovery).
    #[serde(skip)]
    pub repaired: bool,
    /// The gateway's one-line summary of the repair pass.
    #[serde(skip)]
    pub summary: String,
}

/// What `repair --trim-torn-tail` did (or would do).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TornTailResult {
    /// The transcript, as shown.
    pub path: String,
    /// Whether nothing was written.
    pub dry_run: bool,
    /// Whether the last line is cut off.
    pub torn_tail: bool,
    /// The bytes of that line (removed unless a dry run).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub removed_bytes: Option<usize>,
    /// Whether the file changed.
    pub changed: bool,
}

/// Repairs `arg`'s transcript as the gateway's repair pass does, recovering its header
/// first when its first row is not one; `warn` receives warnings.
pub fn repair(
    ctx: &StateContext,
    arg: &str,
    dry_run: bool,
    warn: &mut dyn FnMut(&str),
) -> Result<RepairResult, TranscriptOpError> {
    let s = writable_session(ctx, arg, dry_run, warn)?;
    let cwd = ctx.env.cwd().to_string_lossy().into_owned();
    let sid = s.session_id.clone().unwrap_or_else(repair::new_uuid);
    locked_rewrite(ctx, &s, dry_run, |content| {
        let recovery = repair::recover_header(content, &sid, &cwd, ctx.now_ms);
        let base = recovery.as_ref().map_or(content, |r| &r.bytes[..]);
        let outcome = repair::repair_content(base, ctx.now_ms, &mut repair::new_uuid);
        let (keep_original_as, corrupt_copy) = kept_original(&s, recovery.as_ref())?.unzip();
        let header_recovered = recovery.is_some();
        let bytes = outcome.bytes.or_else(|| recovery.map(|r| r.bytes));
        let r = outcome.report;
        let result = RepairResult {
            path: s.path.to_string_lossy().into_owned(),
            dry_run,
            changed: bytes.is_some(),
            header_recovered,
            corrupt_copy,
            repaired: r.changed(),
            summary: r.summary(),
            report: r,
        };
        let change = match bytes {
            Some(bytes) => Change::Replace {
                keep_original_as,
                bytes,
            },
            None => Change::None,
        };
        Ok((change, result))
    })
}

/// Removes a torn (cut-off) last line from `arg`'s transcript, in place; `warn` receives
/// warnings.
pub fn trim_torn_tail(
    ctx: &StateContext,
    arg: &str,
    dry_run: bool,
    warn: &mut dyn FnMut(&str),
) -> Result<TornTailResult, TranscriptOpError> {
    let s = writable_session(ctx, arg, dry_run, warn)?;
    locked_rewrite(ctx, &s, dry_run, |content| {
        let keep = repair::torn_tail_keep_len(content);
        let result = TornTailResult {
            path: s.path.to_string_lossy().into_owned(),
            dry_run,
            torn_tail: keep.is_some(),
            removed_bytes: keep.map(|k| content.len() - k),
            changed: keep.is_some(),
        };
        let change = match keep {
            Some(k) => Change::Truncate { len: k as u64 },
            None => Change::None,
        };
        Ok((change, result))
    })
}
