//! The `claw-compact` operations end to end: resolve the session, refuse while a gateway is
//! live, take the transcript write lock as the gateway does for compaction, scan (the
//! repaired view when the gateway's repair pass would change the file, [`repaired`]),
//! plan, summarise, write (transcript or successor first, the store last), record the
//! signal. `check` adds the fixed prompt overhead ([`overhead`]) to an estimated context.
//!
//! Write order ([`commit`]): the new transcript side and the store's new text are written
//! to synced temp files first, then the transcript side is renamed in and the store after
//! it; a failed store write undoes the transcript side, so a failure at any step leaves the
//! old state whole. A repaired transcript is part of the transcript side: rewritten with
//! the compaction appended, or for `--rotate` rewritten as repaired and renamed in before
//! the successor (both undone on a failure). Otherwise `--rotate` never modifies the old
//! transcript, so a crash leaves either the old state (plus at most an unreferenced
//! successor file) or the new one; with a repair, a crash between the renames may leave
//! the repaired transcript under the old store, which is what `claw-transcript repair`
//! writes.

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::{Map, Value};
use thiserror::Error;

use crate::compaction::bookkeeping::{self, Checkpoint, CompactionRecord};
use crate::compaction::commit::{self, CommitError, StoreSide};
use crate::compaction::entry::{self, CompactWriteError, EntryError, EntryFields};
use crate::compaction::extractive::Extractor;
use crate::compaction::index::Kind;
use crate::compaction::overhead::{self, Overhead};
use crate::compaction::plan::{self, active_path, ContextItem, PathEntry, PlanError, Preparation};
use crate::compaction::prompt::{self, PromptError};
use crate::compaction::repaired::{self, View};
use crate::compaction::rotate::{self, RotateError};
use crate::compaction::row_facts::Role;
use crate::compaction::scan::{self, ScanError, Scanned};
use crate::compaction::settings::{self, Overrides, Settings};
use crate::compaction::summarizer::{self, Call, SummarizerCommand, SummarizerError};
use crate::compaction::truncate::{self, TruncateError};
use crate::exit::{self, ExitCode};
use crate::install::context::StateContext;
use crate::js;
use crate::ops::session_ops::OpsError;
use crate::store::store_lock::{LockWait, StoreLock, StoreLockError};
use crate::store::{LoadOptions, SessionStore, StoreError};
use crate::transcript::context::convert_to_llm;
use crate::transcript::session::{self, SessionError, SessionRef};
use crate::transcript::write_lock::{
    AcquireOptions, WriteLock, WriteLockError, WriteLockGuard, WriteLockSettings,
    DEFAULT_MAX_HOLD_MS,
};

pub mod auto;

/// Why a compaction command failed; nothing was written unless the message says so.
#[derive(Debug, Error)]
pub enum CompactError {
    /// The session could not be resolved.
    #[error(transparent)]
    Session(#[from] SessionError),
    /// Store selection, live gateway.
    #[error(transparent)]
    Ops(#[from] OpsError),
    /// The transcript lock stayed held.
    #[error(transparent)]
    Lock(#[from] WriteLockError),
    /// Another clawstate writer holds the store.
    #[error(transparent)]
    StoreLock(#[from] StoreLockError),
    /// The store could not be read or written.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The transcript is unusable.
    #[error(transparent)]
    Scan(#[from] ScanError),
    /// The plan failed.
    #[error(transparent)]
    Plan(#[from] PlanError),
    /// The prompt could not be built.
    #[error(transparent)]
    Prompt(#[from] PromptError),
    /// The summariser failed.
    #[error(transparent)]
    Summarizer(#[from] SummarizerError),
    /// Writing the compaction failed.
    #[error(transparent)]
    Entry(#[from] EntryError),
    /// Writing the successor failed.
    #[error(transparent)]
    Rotate(#[from] RotateError),
    /// `--max-lines` failed.
    #[error(transparent)]
    Truncate(#[from] TruncateError),
    /// `--summary-file` could not be read or is empty.
    #[error("{}: {message}", path.display())]
    SummaryFile {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// The session entry changed while compacting (checked before anything is written).
    #[error("session {key:?} changed while it was being compacted ({what}); nothing was written — rerun")]
    Changed {
        /// The key.
        key: String,
        /// What changed.
        what: String,
    },
    /// Putting the compaction in place failed.
    #[error(transparent)]
    Commit(#[from] CommitError),
    /// Preparing the compacted transcript failed.
    #[error(transparent)]
    Write(#[from] CompactWriteError),
}

impl ExitCode for CompactError {
    fn exit_code(&self) -> i32 {
        match self {
            CompactError::Session(e) => e.exit_code(),
            CompactError::Ops(e) => e.exit_code(),
            CompactError::Lock(e) => e.exit_code(),
            CompactError::StoreLock(e) => e.exit_code(),
            CompactError::Store(e) => e.exit_code(),
            CompactError::Scan(e) => e.exit_code(),
            CompactError::Plan(e) => e.exit_code(),
            CompactError::Prompt(e) => e.exit_code(),
            CompactError::Summarizer(e) => e.exit_code(),
            CompactError::Entry(e) => e.exit_code(),
            CompactError::Rotate(e) => e.exit_code(),
            CompactError::Truncate(e) => e.exit_code(),
            CompactError::SummaryFile { message, .. } if message.contains("empty") => {
                exit::DATA_ERR
            }
            CompactError::SummaryFile { .. } => exit::NOT_FOUND,
            CompactError::Changed { .. } => exit::TEMP_FAIL,
            CompactError::Commit(e) => e.exit_code(),
            CompactError::Write(e) => e.exit_code(),
        }
    }
}

/// Resolves `SESSION` (key, sessionId or path).
pub fn resolve(ctx: &StateContext, arg: &str) -> Result<SessionRef, CompactError> {
    Ok(session::resolve(ctx, arg)?)
}

/// The settings for a resolved session.
pub fn settings_for(ctx: &StateContext, s: &SessionRef, o: &Overrides) -> Settings {
    settings::resolve(&ctx.config.root, s.entry.as_ref(), o)
}

/// The write-lock settings the gateway uses while compacting.
pub fn lock_settings(ctx: &StateContext) -> WriteLockSettings {
    let mut s = WriteLockSettings::resolve(&ctx.config.root, |k| ctx.env.var(k).map(String::from));
    if s.max_hold_ms == DEFAULT_MAX_HOLD_MS {
        s.max_hold_ms = s.compaction_max_hold_ms();
    }
    s
}

fn lock(
    ctx: &StateContext,
    path: &Path,
    dry_run: bool,
) -> Result<Option<WriteLockGuard>, CompactError> {
    if dry_run {
        return Ok(None);
    }
    Ok(Some(WriteLock::acquire(
        path,
        &lock_settings(ctx),
        AcquireOptions {
            allow_reentrant: false,
        },
    )?))
}

/// The live-gateway rule: `Some(warning)` with `--store`, an error otherwise.
pub fn live_gateway_rule(
    ctx: &StateContext,
    dry_run: bool,
) -> Result<Option<String>, CompactError> {
    if dry_run {
        return Ok(None);
    }
    Ok(ctx.check_live_gateway().map_err(OpsError::from)?)
}

fn items_real(scan: &Scanned, path: &[PathEntry], items: &[ContextItem]) -> bool {
    let role = |it: &ContextItem| match it {
        ContextItem::Entry(i) => scan.facts[path[*i].row].role,
        ContextItem::Summary(_) => Role::CompactionSummary,
    };
    let meaningful = |it: &ContextItem| match it {
        ContextItem::Entry(i) => scan.facts[path[*i].row].meaningful(),
        ContextItem::Summary(_) => false,
    };
    items.iter().enumerate().any(|(k, it)| match role(it) {
        Role::User | Role::Assistant | Role::Custom | Role::BashExecution | Role::BranchSummary => {
            meaningful(it)
        }
        Role::ToolResult => items[k.saturating_sub(20)..k].iter().rev().any(|c| {
            matches!(
                role(c),
                Role::User | Role::Custom | Role::BashExecution | Role::BranchSummary
            ) && meaningful(c)
        }),
        _ => false,
    })
}

/// What `check` found.
#[derive(Debug, Clone)]
pub struct CheckReport {
    /// The document printed by `check --json`.
    pub doc: CheckDoc,
    /// Whether compaction is due.
    pub due: bool,
}

/// The document `check --json` prints: the settings, the estimate and the decision.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CheckDoc {
    /// The store key, when resolved through the store.
    pub key: Option<String>,
    /// The session id.
    pub session_id: Option<String>,
    /// The transcript.
    pub path: String,
    /// The compaction mode.
    pub mode: &'static str,
    /// The model's context window.
    pub context_window: u64,
    /// Where the window came from.
    pub context_window_source: &'static str,
    /// The tokens kept free for the reply.
    pub reserve_tokens: u64,
    /// The reserve's floor.
    pub reserve_tokens_floor: u64,
    /// The recent tokens a compaction keeps.
    pub keep_recent_tokens: u64,
    /// Compaction is due above this many context tokens.
    pub threshold: i64,
    /// The context's tokens (the overhead included when estimated).
    pub context_tokens: Value,
    /// The transcript's tokens.
    pub transcript_tokens: Value,
    /// `usage` (a provider's count) or `estimate`.
    pub source: &'static str,
    /// The provider's count.
    pub usage_tokens: Value,
    /// The estimated tokens after it.
    pub trailing_tokens: u64,
    /// Whether the usage predates the last compaction (and was not used).
    pub usage_stale: bool,
    /// The fixed prompt overhead.
    pub overhead: Value,
    /// The transcript's size.
    pub transcript_bytes: u64,
    /// `maxActiveTranscriptBytes`, when set.
    pub max_active_transcript_bytes: Option<u64>,
    /// `truncateAfterCompaction`.
    pub truncate_after_compaction: bool,
    /// Whether the last entry is a compaction.
    pub already_compacted: bool,
    /// The repair the gateway would make first.
    pub repair_first: Value,
    /// `threshold`, `transcript_bytes`.
    pub reasons: Vec<&'static str>,
    /// Whether compaction is due.
    pub should_compact: bool,
}

/// The part of `check`'s decision `plan` repeats as `due` (see [`CheckDoc`]).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DueDecision {
    /// Whether compaction is due.
    pub should_compact: bool,
    /// `threshold`, `transcript_bytes`.
    pub reasons: Vec<&'static str>,
    /// The context's tokens.
    pub context_tokens: Value,
    /// The transcript's tokens.
    pub transcript_tokens: Value,
    /// `usage` or `estimate`.
    pub source: &'static str,
    /// The threshold.
    pub threshold: i64,
    /// The fixed prompt overhead.
    pub overhead: Value,
}

impl DueDecision {
    fn of(c: CheckDoc) -> Self {
        DueDecision {
            should_compact: c.should_compact,
            reasons: c.reasons,
            context_tokens: c.context_tokens,
            transcript_tokens: c.transcript_tokens,
            source: c.source,
            threshold: c.threshold,
            overhead: c.overhead,
        }
    }
}

/// The timestamp (epoch ms) of the last compaction on the path, read back.
fn latest_compaction_ts(scan: &Scanned, path: &[PathEntry]) -> Result<Option<i64>, CompactError> {
    let Some(e) = path.iter().rev().find(|e| e.kind == Kind::Compaction) else {
        return Ok(None);
    };
    let row = scan.read_row(e.row)?;
    Ok(row
        .get("timestamp")
        .and_then(Value::as_str)
        .and_then(js::date_parse))
}

/// What `check` (and the decisions of `plan` and `auto`) take besides the session.
#[derive(Debug, Clone, Copy)]
pub struct CheckOptions {
    /// Setting overrides.
    pub overrides: Overrides,
    /// `--overhead-tokens N`: the fixed overhead as given instead of estimated.
    pub overhead_tokens: Option<u64>,
    /// Work on the repaired view of a transcript the gateway would repair first (without:
    /// such a transcript is refused, exit 65).
    pub repair: bool,
}

/// The session's fixed prompt overhead ([`overhead`]): as given, or estimated from its
/// agent's workspace, config and last run's report.
pub fn overhead_for(ctx: &StateContext, s: &SessionRef, given: Option<u64>) -> Overhead {
    if let Some(n) = given {
        return Overhead::given(n);
    }
    let default_agent = ctx.config.default_agent_id();
    let agent_id = s
        .target
        .as_ref()
        .map(|t| t.agent_id.clone())
        .or_else(|| {
            s.key
                .as_deref()
                .and_then(crate::session::session_key::parse_agent_session_key)
                .map(|k| k.agent_id)
        })
        .unwrap_or(default_agent);
    Overhead::estimate(&overhead::Inputs {
        config: &ctx.config,
        env: &ctx.env,
        home: &ctx.layout.home,
        state_dir: &ctx.layout.state_dir,
        agent_id: &agent_id,
        session_key: s.key.as_deref(),
        entry: s.entry.as_ref(),
    })
}

/// `check`: the threshold of `transcript.md` §4.1–4.2 for one session, the fixed overhead included.
pub fn check(
    ctx: &StateContext,
    s: &SessionRef,
    o: &CheckOptions,
) -> Result<CheckReport, CompactError> {
    let view = repaired::scan(&s.file, ctx.now_ms, o.repair)?;
    decide(ctx, s, o, &view)
}

/// The decision of `check` on a scanned view.
fn decide(
    ctx: &StateContext,
    s: &SessionRef,
    o: &CheckOptions,
    view: &View,
) -> Result<CheckReport, CompactError> {
    let st = settings_for(ctx, s, &o.overrides);
    let scan = &view.scan;
    let path = active_path(scan);
    let items = plan::context_items(scan, &path)?;
    let mut est = plan::estimate(scan, &path, &items);
    let mut usage_stale = false;
    let latest = match est.usage_entry {
        Some(_) => latest_compaction_ts(scan, &path)?,
        None => None,
    };
    if let (Some(ui), Some(cts)) = (est.usage_entry, latest) {
        let mts = scan.facts[path[ui].row].message_ts();
        if mts.is_none_or(|t| t <= cts as f64) {
            usage_stale = true;
            let t = plan::estimate_sum(scan, &path, &items);
            est = plan::Estimate {
                tokens: t as f64,
                usage_tokens: 0.0,
                trailing_tokens: t,
                usage_entry: None,
            };
        }
    }
    // A provider's usage counts the system prompt and tools already; an estimate of the
    // transcript does not.
    let overhead = overhead_for(ctx, s, o.overhead_tokens);
    let applied = est.usage_entry.is_none();
    let context_tokens = est.tokens + if applied { overhead.total as f64 } else { 0.0 };
    let nothing = path.is_empty() || path.last().is_some_and(|e| e.kind == Kind::Compaction);
    let over = st.should_compact(context_tokens);
    let bytes_due = st
        .max_active_transcript_bytes
        .is_some_and(|limit| scan.bytes >= limit);
    let due = !nothing && (over || bytes_due);
    let mut reasons = Vec::new();
    if over {
        reasons.push("threshold");
    }
    if bytes_due {
        reasons.push("transcript_bytes");
    }
    let doc = CheckDoc {
        key: s.key.clone(),
        session_id: s.session_id.clone(),
        path: s.path.to_string_lossy().into_owned(),
        mode: st.mode.as_str(),
        context_window: st.context_window,
        context_window_source: st.context_window_source,
        reserve_tokens: st.reserve_tokens,
        reserve_tokens_floor: st.reserve_tokens_floor,
        keep_recent_tokens: st.keep_recent_tokens,
        threshold: st.threshold(),
        context_tokens: entry::number(context_tokens),
        transcript_tokens: entry::number(est.tokens),
        source: if est.usage_entry.is_some() {
            "usage"
        } else {
            "estimate"
        },
        usage_tokens: entry::number(est.usage_tokens),
        trailing_tokens: est.trailing_tokens,
        usage_stale,
        overhead: overhead.to_json(applied),
        transcript_bytes: scan.bytes,
        max_active_transcript_bytes: st.max_active_transcript_bytes,
        truncate_after_compaction: st.truncate_after_compaction,
        already_compacted: nothing && !path.is_empty(),
        repair_first: repaired::repair_json(view.repair.as_ref()),
        reasons,
        should_compact: due,
    };
    Ok(CheckReport { doc, due })
}

fn ids_of(scan: &Scanned, path: &[PathEntry], idx: &[usize]) -> Vec<Option<String>> {
    idx.iter()
        .map(|&i| scan.id(path[i].row).map(String::from))
        .collect()
}

/// What `plan` printed: `prepareCompaction` on the transcript as the gateway compacts it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanReport {
    /// The store key.
    pub key: Option<String>,
    /// The transcript.
    pub path: String,
    /// The leaf the plan starts from.
    pub leaf_id: Option<String>,
    /// The recent tokens kept.
    pub keep_recent_tokens: u64,
    /// The tokens kept free for the reply.
    pub reserve_tokens: u64,
    /// The repair the gateway makes first.
    pub repair_first: Value,
    /// `check`'s decision.
    pub due: DueDecision,
    /// Whether there is anything to compact.
    pub compactable: bool,
    /// Why not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<&'static str>,
    /// The cut, when compactable.
    #[serde(flatten)]
    pub cut: Option<PlanCut>,
}

/// The cut `plan` found.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanCut {
    /// The first entry kept.
    pub first_kept_entry_id: String,
    /// The context's tokens before.
    pub tokens_before: Value,
    /// Whether the cut splits a turn.
    pub is_split_turn: bool,
    /// The split turn's first entry.
    pub turn_start_entry_id: Option<String>,
    /// The compaction before this one.
    pub previous_compaction_id: Option<String>,
    /// Where the summarised part starts.
    pub boundary_start_entry_id: Option<String>,
    /// The entries summarised.
    pub messages_to_summarize: Vec<Option<String>>,
    /// The split turn's prefix, summarised apart.
    pub turn_prefix_messages: Vec<Option<String>>,
    /// The entries kept.
    pub kept_entries: Vec<Option<String>>,
    /// Files read, not modified.
    pub read_files: Vec<String>,
    /// Files modified.
    pub modified_files: Vec<String>,
    /// Whether the manual hardening rule applies.
    pub hardening: bool,
    /// With `--messages`, the converted messages.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub messages: Option<PlanMessages>,
}

/// The messages a compaction would summarise, converted as the model sees them.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanMessages {
    /// The summarised part.
    pub messages_to_summarize: Vec<Value>,
    /// The split turn's prefix.
    pub turn_prefix_messages: Vec<Value>,
}

/// `plan`: `prepareCompaction` as JSON on the transcript as the gateway compacts it (the
/// repair that would come first in `repairFirst`), with `check`'s decision in `due`;
/// with `messages`, the converted messages too.
pub fn plan_json(
    ctx: &StateContext,
    s: &SessionRef,
    o: &CheckOptions,
    messages: bool,
) -> Result<PlanReport, CompactError> {
    let st = settings_for(ctx, s, &o.overrides);
    let view = repaired::scan(&s.file, ctx.now_ms, o.repair)?;
    let due = DueDecision::of(decide(ctx, s, o, &view)?.doc);
    let scan = &view.scan;
    let path = active_path(scan);
    let previous = previous_row(scan, &path)?;
    let prep = plan::prepare(scan, &path, st.keep_recent_tokens, previous.as_ref())?;
    let mut doc = PlanReport {
        key: s.key.clone(),
        path: s.path.to_string_lossy().into_owned(),
        leaf_id: scan.index.leaf_id().map(String::from),
        keep_recent_tokens: st.keep_recent_tokens,
        reserve_tokens: st.reserve_tokens,
        repair_first: repaired::repair_json(view.repair.as_ref()),
        due,
        compactable: false,
        reason: None,
        cut: None,
    };
    let Some(p) = prep else {
        doc.reason = Some(if !path.is_empty() {
            "Already compacted"
        } else {
            "Nothing to compact (session too small)"
        });
        return Ok(doc);
    };
    let id = |i: usize| scan.id(path[i].row).map(String::from);
    let kept: Vec<usize> = (p.cut.first_kept_index..path.len()).collect();
    let messages = if messages {
        let (h, t) = summarized_messages(scan, &path, &p)?;
        Some(PlanMessages {
            messages_to_summarize: h,
            turn_prefix_messages: t,
        })
    } else {
        None
    };
    doc.compactable = true;
    doc.cut = Some(PlanCut {
        first_kept_entry_id: p.first_kept_entry_id.clone(),
        tokens_before: entry::number(p.tokens_before),
        is_split_turn: p.cut.is_split_turn,
        turn_start_entry_id: p
            .cut
            .turn_start_index
            .filter(|_| p.cut.is_split_turn)
            .and_then(id),
        previous_compaction_id: p.previous_compaction.and_then(id),
        boundary_start_entry_id: (p.boundary_start < path.len())
            .then(|| id(p.boundary_start))
            .flatten(),
        messages_to_summarize: ids_of(scan, &path, &p.messages_to_summarize),
        turn_prefix_messages: ids_of(scan, &path, &p.turn_prefix_messages),
        kept_entries: ids_of(scan, &path, &kept),
        read_files: p.read_files.clone(),
        modified_files: p.modified_files.clone(),
        hardening: !st.keep_recent_explicit,
        messages,
    });
    Ok(doc)
}

fn previous_row(scan: &Scanned, path: &[PathEntry]) -> Result<Option<Value>, CompactError> {
    match path.iter().rposition(|e| e.kind == Kind::Compaction) {
        Some(i) => Ok(Some(scan.read_row(path[i].row)?)),
        None => Ok(None),
    }
}

fn summarized_messages(
    scan: &Scanned,
    path: &[PathEntry],
    p: &Preparation,
) -> Result<(Vec<Value>, Vec<Value>), CompactError> {
    let conv = |idx: &[usize]| -> Result<Vec<Value>, CompactError> {
        let rows: Vec<usize> = idx.iter().map(|&i| path[i].row).collect();
        Ok(scan
            .read_rows(&rows)?
            .iter()
            .filter_map(plan::entry_message)
            .collect())
    };
    Ok((
        conv(&p.messages_to_summarize)?,
        conv(&p.turn_prefix_messages)?,
    ))
}

/// Where the summary comes from.
#[derive(Debug, Clone)]
pub enum SummarySource {
    /// The deterministic extractive summary.
    Extractive,
    /// An external command (`sh -c`) and its per-call timeout.
    Command(SummarizerCommand),
    /// A file's text.
    File(PathBuf),
}

/// Options of `run`.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Setting overrides.
    pub overrides: Overrides,
    /// The summary source.
    pub source: SummarySource,
    /// `--instructions`.
    pub instructions: Option<String>,
    /// `--rotate` (the successor of §4.8).
    pub rotate: bool,
    /// `--keep-tail`: never apply the manual hardening rule (as when the config sets
    /// `keepRecentTokens`).
    pub keep_tail: bool,
    /// Compute and report, write nothing.
    pub dry_run: bool,
    /// How long to wait for another clawstate writer of the store (then exit 75).
    pub wait: LockWait,
    /// Repair first what the gateway's repair pass would (`false`: `--no-repair`, such a
    /// transcript is refused, exit 65).
    pub repair: bool,
}

/// The summary text for a preparation (file lists appended).
fn summarize(
    scan: &Scanned,
    path: &[PathEntry],
    p: &Preparation,
    previous: Option<&Value>,
    st: &Settings,
    o: &RunOptions,
    will_harden: bool,
) -> Result<String, CompactError> {
    let previous_summary = previous
        .and_then(|v| v.get("summary"))
        .and_then(Value::as_str)
        .map(String::from);
    let body = match &o.source {
        SummarySource::File(f) => {
            let text = std::fs::read(f).map_err(|e| CompactError::SummaryFile {
                path: f.clone(),
                message: format!("cannot read: {e}"),
            })?;
            let text = String::from_utf8_lossy(&text).trim_end().to_string();
            if text.trim().is_empty() {
                return Err(CompactError::SummaryFile {
                    path: f.clone(),
                    message: "the summary is empty".into(),
                });
            }
            text
        }
        SummarySource::Extractive => {
            let mut x = Extractor::new();
            // When the hardening rule will drop the kept tail from the context, the
            // extractive summary covers it too, so nothing leaves the context unsummarised.
            let tail: Vec<usize> = if will_harden {
                (p.cut.first_kept_index..path.len())
                    .filter(|&i| plan::converts(&path[i]))
                    .collect()
            } else {
                Vec::new()
            };
            let idx: Vec<usize> = p
                .messages_to_summarize
                .iter()
                .chain(p.turn_prefix_messages.iter())
                .chain(tail.iter())
                .copied()
                .collect();
            for chunk in idx.chunks(4096) {
                let rows: Vec<usize> = chunk.iter().map(|&i| path[i].row).collect();
                for v in scan.read_rows(&rows)? {
                    if let Some(m) = plan::entry_message(&v) {
                        x.push(&m);
                    }
                }
            }
            x.finish(previous_summary.as_deref(), o.instructions.as_deref())
        }
        SummarySource::Command(cmd) => {
            let (h, t) = summarized_messages(scan, path, p)?;
            let history = |msgs: &[Value]| -> Result<String, CompactError> {
                let conv = prompt::serialize_conversation(&convert_to_llm(msgs))?;
                let text = prompt::history_prompt(
                    &conv,
                    previous_summary.as_deref(),
                    o.instructions.as_deref(),
                );
                Ok(summarizer::run(
                    cmd,
                    Call::History,
                    &text,
                    prompt::history_max_tokens(st.reserve_tokens),
                )?)
            };
            if p.cut.is_split_turn && !t.is_empty() {
                let hist = if h.is_empty() {
                    "No prior history.".to_string()
                } else {
                    history(&h)?
                };
                let conv = prompt::serialize_conversation(&convert_to_llm(&t))?;
                let prefix = summarizer::run(
                    cmd,
                    Call::TurnPrefix,
                    &prompt::turn_prefix_prompt(&conv),
                    prompt::turn_prefix_max_tokens(st.reserve_tokens),
                )?;
                prompt::join_split_turn(&hist, &prefix)
            } else {
                history(&h)?
            }
        }
    };
    Ok(format!(
        "{body}{}",
        prompt::format_file_operations(&p.read_files, &p.modified_files)
    ))
}

/// What `run` printed: a compaction, or why there was none.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum RunReport {
    /// Nothing was compacted (a repair found first is still written).
    NotCompacted(NotCompacted),
    /// A compaction was appended (or, with `--rotate`, a successor written).
    Compacted(Box<Compacted>),
}

impl RunReport {
    /// Whether a compaction was made.
    pub fn compacted(&self) -> bool {
        matches!(self, RunReport::Compacted(_))
    }
}

/// `run`'s document when nothing was compacted.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NotCompacted {
    /// Always true.
    pub ok: bool,
    /// Always false.
    pub compacted: bool,
    /// Why not.
    pub reason: String,
    /// The store key.
    pub key: Option<String>,
    /// The transcript.
    pub path: String,
    /// Whether nothing was written.
    pub dry_run: bool,
    /// The repair the gateway makes first.
    pub repair_first: Value,
    /// The live-gateway warning, if any.
    pub warning: Option<String>,
}

/// `run`'s document for a compaction.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Compacted {
    /// Always true.
    pub ok: bool,
    /// Always true.
    pub compacted: bool,
    /// Whether nothing was written.
    pub dry_run: bool,
    /// The store key.
    pub key: Option<String>,
    /// The transcript.
    pub path: String,
    /// What the gateway's `compact` returns.
    pub result: CompactionResult,
    /// The compaction entry appended.
    pub entry: Value,
    /// Whether the manual hardening rule set `firstKeptEntryId`.
    pub hardened: bool,
    /// The `firstKeptEntryId` before hardening.
    pub planned_first_kept_entry_id: String,
    /// Whether the cut splits a turn.
    pub is_split_turn: bool,
    /// The successor, with `--rotate`.
    pub rotation: Option<Value>,
    /// The repair the gateway makes first.
    pub repair_first: Value,
    /// The store write, when the session has an entry.
    pub store: Option<StoreWrite>,
    /// The signal recorded, when written.
    pub signal: Option<SignalRecord>,
    /// The live-gateway warning, if any.
    pub warning: Option<String>,
}

/// The store side of a compaction.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StoreWrite {
    /// The store.
    pub path: String,
    /// Whether it was written (not for a dry run).
    pub written: bool,
    /// The entry after.
    pub entry: Value,
}

/// The compaction signal, as recorded or not.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum SignalRecord {
    /// Recorded in the signal log.
    Recorded {
        /// Always true.
        recorded: bool,
        /// Its sequence number.
        sequence: i64,
    },
    /// Not recorded.
    Failed {
        /// Always false.
        recorded: bool,
        /// Why.
        error: String,
    },
}

/// The gateway's `compact` result.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CompactionResult {
    /// The summary.
    pub summary: String,
    /// The first entry kept.
    pub first_kept_entry_id: String,
    /// The context's tokens before.
    pub tokens_before: Value,
    /// The estimate after, when plausible.
    pub tokens_after: Option<u64>,
    /// The files the summarised part read and modified.
    pub details: FileDetails,
    /// The successor's session id, with `--rotate`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// The successor's transcript, with `--rotate`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_file: Option<String>,
}

/// The files a compaction's summarised part touched.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FileDetails {
    /// Read, not modified.
    pub read_files: Vec<String>,
    /// Modified.
    pub modified_files: Vec<String>,
}

/// What `truncate --max-lines` printed (the peer's result document).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TruncateReport {
    /// Always true.
    pub ok: bool,
    /// The store key.
    pub key: Option<String>,
    /// Whether lines were cut.
    pub compacted: bool,
    /// Why nothing was done (`no sessionId`, `no transcript`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<&'static str>,
    /// Where the original is archived.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub archived: Option<String>,
    /// The lines kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kept: Option<usize>,
    /// Set for a dry run.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub dry_run: bool,
    /// The live-gateway warning, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
}

impl TruncateReport {
    fn nothing(key: &Option<String>, reason: Option<&'static str>, kept: Option<usize>) -> Self {
        TruncateReport {
            ok: true,
            key: key.clone(),
            compacted: false,
            reason,
            archived: None,
            kept,
            dry_run: false,
            warning: None,
        }
    }
}

/// `run`: one manual compaction. Returns the result document.
pub fn run(ctx: &StateContext, s: &SessionRef, o: &RunOptions) -> Result<RunReport, CompactError> {
    // Never a transcript outside the state dir (dry runs say so too).
    s.clone().for_writing()?;
    let st = settings_for(ctx, s, &o.overrides);
    let warning = live_gateway_rule(ctx, o.dry_run)?;
    let _guard = lock(ctx, &s.path, o.dry_run)?;
    // The repair pass first, in memory (written below with the compaction, in one commit).
    let View {
        mut scan,
        repair: repair_first,
    } = repaired::scan(&s.file, ctx.now_ms, o.repair)?;
    let repaired_text = match &scan.backing {
        scan::Backing::Memory(b) => Some(std::sync::Arc::clone(b)),
        scan::Backing::File => None,
    };
    let path = active_path(&scan);
    let repair_doc = repaired::repair_json(repair_first.as_ref());
    // Nothing to compact: the repair is still written, as the gateway's repair pass runs
    // before it looks (alone, as `claw-transcript repair` writes it).
    let not_compacted = |reason: &str| -> Result<RunReport, CompactError> {
        if let (Some(r), Some(text), false) = (&repair_first, &repaired_text, o.dry_run) {
            let side = entry::prepare_replaced(&s.file, r.original_len, text, None)?;
            commit::commit(side, None)?;
        }
        Ok(RunReport::NotCompacted(NotCompacted {
            ok: true,
            compacted: false,
            reason: reason.to_string(),
            key: s.key.clone(),
            path: s.path.to_string_lossy().into_owned(),
            dry_run: o.dry_run,
            repair_first: repair_doc.clone(),
            warning: warning.clone(),
        }))
    };
    let items = plan::context_items(&scan, &path)?;
    if path.is_empty() {
        return not_compacted("Nothing to compact (session too small)");
    }
    if path.last().is_some_and(|e| e.kind == Kind::Compaction) {
        return not_compacted("Already compacted");
    }
    if !items_real(&scan, &path, &items) {
        return not_compacted("no real conversation messages");
    }
    let previous = previous_row(&scan, &path)?;
    let Some(p) = plan::prepare(&scan, &path, st.keep_recent_tokens, previous.as_ref())? else {
        return not_compacted("Nothing to compact (session too small)");
    };
    let full_before = plan::estimate_sum(&scan, &path, &items);
    let harden = !st.keep_recent_explicit && !o.keep_tail;
    let will_harden =
        harden && (!p.messages_to_summarize.is_empty() || !p.turn_prefix_messages.is_empty());
    let summary = summarize(&scan, &path, &p, previous.as_ref(), &st, o, will_harden)?;
    // The pre-compaction path is not needed any more (a million rows' worth at 1 GB).
    drop((path, items));
    let pre_session = scan
        .header
        .get("id")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let pre_leaf = scan.index.leaf_id().unwrap_or_default().to_string();
    let pre_entry = scan.last_entry_id();
    let (bytes, ends_nl) = (scan.bytes, scan.ends_with_newline);
    let fields = EntryFields {
        summary: summary.clone(),
        first_kept_entry_id: p.first_kept_entry_id.clone(),
        tokens_before: p.tokens_before,
        read_files: p.read_files.clone(),
        modified_files: p.modified_files.clone(),
    };
    let appended = entry::append_in_memory(&mut scan, &fields, ctx.now_ms, harden);
    let post_path = active_path(&scan);
    let post_items = plan::context_items(&scan, &post_path)?;
    let after = plan::estimate_sum(&scan, &post_path, &post_items);
    let tokens_after =
        (full_before == 0 || (after as f64) <= full_before as f64 * 1.1).then_some(after);
    drop(post_items);
    let successor = if o.rotate {
        Some(rotate::build(&scan, &post_path, ctx.now_ms, ctx.env.cwd())?)
    } else {
        None
    };
    let line = crate::js::jsjson::to_string_compact(&appended.entry);
    // The store lock before anything is written (a busy store leaves both sides as they
    // were), but after the summary: a summarizer may take minutes, and other writers of
    // the store should not wait for it. (Reset and delete take the store lock first and
    // then transcript locks; both waits are bounded, so the two orders cannot hang.)
    let _store_lock = lock_store(s, o.dry_run, o.wait)?;
    // Written but not yet in place: both sides go in together, below (`commit`). A
    // repaired transcript is rewritten whole: with the compaction appended, or (with a
    // successor) as the repair pass writes it, before the successor.
    let transcript_side = if o.dry_run {
        None
    } else {
        Some(
            match (
                &successor,
                repair_first.as_ref().zip(repaired_text.as_deref()),
            ) {
                (Some(succ), None) => vec![succ.prepare()?],
                (Some(succ), Some((r, text))) => vec![
                    entry::prepare_replaced(&s.file, r.original_len, text, None)?,
                    succ.prepare()?,
                ],
                (None, None) => vec![entry::prepare_appended(&s.file, bytes, ends_nl, &line)?],
                (None, Some((r, text))) => vec![entry::prepare_replaced(
                    &s.file,
                    r.original_len,
                    text,
                    Some(&line),
                )?],
            },
        )
    };
    let active_file = successor
        .as_ref()
        .map_or_else(|| s.path.clone(), |x| x.path.clone());
    let active_id = successor
        .as_ref()
        .map(|x| x.session_id.clone())
        .or_else(|| s.session_id.clone())
        .unwrap_or_else(|| pre_session.clone());
    let post_leaf = successor
        .as_ref()
        .and_then(|x| x.leaf_id.clone())
        .unwrap_or_else(|| appended.id.clone());
    let effective_first_kept = appended
        .entry
        .get("firstKeptEntryId")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let mut store_doc = None;
    let mut signal_doc = None;
    let mut store_side = None;
    if let (Some(key), Some(target)) = (&s.key, &s.target) {
        let cp = bookkeeping::checkpoint_record(&Checkpoint {
            session_key: key,
            session_id: &active_id,
            created_at: ctx.now_ms,
            tokens_before: p.tokens_before,
            tokens_after,
            summary: &summary,
            first_kept_entry_id: &effective_first_kept,
            pre: (&pre_session, &pre_leaf, pre_entry.as_deref()),
            post: (
                &active_file.to_string_lossy(),
                Some(&post_leaf),
                Some(&post_leaf),
            ),
        });
        let file_str = active_file.to_string_lossy().into_owned();
        let record = CompactionRecord {
            session_key: key,
            now_ms: ctx.now_ms,
            tokens_after,
            successor: successor
                .as_ref()
                .map(|x| (x.session_id.as_str(), file_str.as_str())),
            checkpoint: Some(cp),
        };
        let (updated, side) =
            prepare_entry_update(target, key, s.session_id.as_deref(), o.dry_run, |e| {
                bookkeeping::apply_compaction(e, &record)
            })?;
        store_side = side;
        store_doc = Some(StoreWrite {
            path: target.store_path.to_string_lossy().into_owned(),
            written: !o.dry_run,
            entry: updated,
        });
    }
    if let Some(sides) = transcript_side {
        commit::commit_all(sides, store_side)?;
    }
    if let (Some(key), Some(target), false) = (&s.key, &s.target, o.dry_run) {
        let op = uuid::Uuid::new_v4().to_string();
        signal_doc = match bookkeeping::record_signal(ctx, key, &target.agent_id, &active_id, &op) {
            None => None,
            Some(Ok(seq)) => Some(SignalRecord::Recorded {
                recorded: true,
                sequence: seq,
            }),
            Some(Err(e)) => Some(SignalRecord::Failed {
                recorded: false,
                error: e,
            }),
        };
    }
    let result = CompactionResult {
        summary,
        first_kept_entry_id: effective_first_kept,
        tokens_before: entry::number(p.tokens_before),
        tokens_after,
        details: FileDetails {
            read_files: p.read_files,
            modified_files: p.modified_files,
        },
        session_id: successor.as_ref().map(|x| x.session_id.clone()),
        session_file: successor
            .as_ref()
            .map(|x| x.path.to_string_lossy().into_owned()),
    };
    Ok(RunReport::Compacted(Box::new(Compacted {
        ok: true,
        compacted: true,
        dry_run: o.dry_run,
        key: s.key.clone(),
        path: s.path.to_string_lossy().into_owned(),
        result,
        entry: appended.entry,
        hardened: appended.hardened,
        planned_first_kept_entry_id: appended.planned_first_kept,
        is_split_turn: p.cut.is_split_turn,
        rotation: successor.as_ref().map(|x| x.result_json()),
        repair_first: repair_doc,
        store: store_doc,
        signal: signal_doc,
        warning,
    })))
}

/// Takes the lock of the session's store, when it has one and this is not a dry run.
fn lock_store(
    s: &SessionRef,
    dry_run: bool,
    wait: LockWait,
) -> Result<Option<StoreLock>, CompactError> {
    match (&s.key, &s.target) {
        (Some(_), Some(target)) if !dry_run => {
            Ok(Some(StoreLock::acquire(&target.store_path, wait)?))
        }
        _ => Ok(None),
    }
}

/// Loads the store (under the lock the caller holds, see [`lock_store`]), checks the entry
/// still names `session_id`, applies `f` and prepares the save (or, dry, only computes).
/// Returns the entry after, and the prepared store side for [`commit::commit`].
fn prepare_entry_update(
    target: &crate::install::targets::StoreTarget,
    key: &str,
    session_id: Option<&str>,
    dry_run: bool,
    f: impl FnOnce(&mut Map<String, Value>),
) -> Result<(Value, Option<StoreSide>), CompactError> {
    let mut store = SessionStore::load(&target.store_path, LoadOptions::default())?;
    let Some(mut e) = store.entry(key).cloned() else {
        return Err(CompactError::Changed {
            key: key.to_string(),
            what: "the entry is gone".into(),
        });
    };
    let now_id = e.get("sessionId").and_then(Value::as_str);
    if now_id != session_id {
        return Err(CompactError::Changed {
            key: key.to_string(),
            what: format!("sessionId is now {now_id:?}"),
        });
    }
    f(&mut e);
    if dry_run {
        return Ok((Value::Object(e), None));
    }
    store.set_entry(key, e.clone());
    let save = store.prepare_save()?;
    Ok((Value::Object(e), Some(StoreSide { lock: None, save })))
}

/// `truncate --max-lines N`: the peer's result document.
pub fn truncate(
    ctx: &StateContext,
    s: &SessionRef,
    max_lines: u64,
    dry_run: bool,
    wait: LockWait,
) -> Result<TruncateReport, CompactError> {
    // Never a transcript outside the state dir (dry runs say so too).
    s.clone().for_writing()?;
    let key = &s.key;
    if let Some(e) = &s.entry {
        if e.get("sessionId")
            .and_then(Value::as_str)
            .is_none_or(str::is_empty)
        {
            return Ok(TruncateReport::nothing(key, Some("no sessionId"), None));
        }
    }
    if !s.path.is_file() {
        return Ok(TruncateReport::nothing(key, Some("no transcript"), None));
    }
    let warning = live_gateway_rule(ctx, dry_run)?;
    // The store lock first, then the transcript's: a busy store leaves both as they were.
    let _store_lock = lock_store(s, dry_run, wait)?;
    let _guard = lock(ctx, &s.path, dry_run)?;
    let plan = truncate::plan(&s.file, max_lines)?;
    let Some(lines) = plan.lines else {
        return Ok(TruncateReport::nothing(key, None, Some(plan.kept)));
    };
    // Written but not yet in place: both sides go in together, below (`commit`).
    let (transcript_side, archived) = if dry_run {
        let archived = crate::session::artifact::archive_path(
            &s.path,
            crate::session::artifact::ArchiveReason::Bak,
            ctx.now_ms,
        );
        (None, archived)
    } else {
        let (side, archived) = truncate::prepare(&s.path, &lines, ctx.now_ms)?;
        (Some(side), archived)
    };
    let mut doc = TruncateReport {
        ok: true,
        key: key.clone(),
        compacted: true,
        reason: None,
        archived: Some(archived.to_string_lossy().into_owned()),
        kept: Some(plan.kept),
        dry_run,
        warning: None,
    };
    let mut store_side = None;
    if let (Some(k), Some(target)) = (&s.key, &s.target) {
        store_side = prepare_entry_update(target, k, s.session_id.as_deref(), dry_run, |e| {
            bookkeeping::apply_trim(e, ctx.now_ms)
        })?
        .1;
    }
    if let Some(side) = transcript_side {
        commit::commit(side, store_side)?;
    }
    doc.warning = warning;
    Ok(doc)
}
