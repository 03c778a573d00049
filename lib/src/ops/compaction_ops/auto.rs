//! `claw-compact auto`, for cron: every session named (or with `--all`, every entry with a
//! sessionId of the selected agents) checked and compacted when due, one result line per
//! session as it completes. A session that fails is reported on its line and the run goes
//! on, except when the store or transcript is busy (75): the run stops there, as a cron
//! job should rather retry later than pile up behind a writer.

use std::ops::ControlFlow;

use serde::Serialize;
use serde_json::Value;

use crate::exit::{self, ExitCode};
use crate::install::context::StateContext;
use crate::ops::session_ops::OpsError;
use crate::store::{LoadOptions, SessionStore};

use super::{self as ops, CheckOptions, CompactError, RunOptions};

/// What `auto` does.
#[derive(Debug, Clone)]
pub struct AutoRequest {
    /// One session, or none with `all`.
    pub session: Option<String>,
    /// Every session of the selected agents.
    pub all: bool,
    /// The check (its `repair`: repair first, or refuse with `--no-repair`).
    pub check: CheckOptions,
    /// The run of a due session (its `rotate` also set by `truncateAfterCompaction`).
    pub run: RunOptions,
}

/// The result of one session.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AutoResult {
    /// `compacted`, `skipped` or `error`.
    pub action: &'static str,
    /// Why it was skipped before running (`no transcript`, `not due`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<&'static str>,
    /// The exit code of an error.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// The error's message.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// `check`'s document.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub check: Option<super::CheckDoc>,
    /// `run`'s document.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run: Option<super::RunReport>,
}

/// One line of `auto`'s output.
#[derive(Debug, Clone, Serialize)]
pub struct AutoLine {
    /// The session as named (a store key with `--all`).
    pub session: String,
    /// What happened to it.
    pub result: AutoResult,
}

/// The failure `auto` ends with after printing its lines: the busy one that stopped the
/// run, else the first.
#[derive(Debug, Clone)]
pub struct AutoFailure {
    /// Its exit code.
    pub code: i32,
    /// Its message.
    pub message: String,
}

/// Runs `auto`, passing each session's line to `on_line` as it completes (`Break` stops
/// the run: the output is gone); `warn` receives the warning of an offline write while a
/// gateway runs. A live gateway refuses (75) before anything is read.
pub fn auto(
    ctx: &StateContext,
    req: &AutoRequest,
    warn: &mut dyn FnMut(&str),
    on_line: &mut dyn FnMut(AutoLine) -> ControlFlow<()>,
) -> Result<Option<AutoFailure>, CompactError> {
    if let Some(w) = ops::live_gateway_rule(ctx, req.run.dry_run)? {
        warn(&w);
    }
    let mut failure: Option<AutoFailure> = None;
    for name in sessions(ctx, req)? {
        let result = match step(ctx, req, &name) {
            Ok(r) => r,
            Err(e) => {
                let code = e.exit_code();
                let busy = code == exit::TEMP_FAIL;
                if busy || failure.is_none() {
                    failure = Some(AutoFailure {
                        code,
                        message: e.to_string(),
                    });
                }
                let line = AutoLine {
                    session: name,
                    result: AutoResult {
                        action: "error",
                        reason: None,
                        exit_code: Some(code),
                        error: Some(e.to_string()),
                        check: None,
                        run: None,
                    },
                };
                if on_line(line).is_break() || busy {
                    break;
                }
                continue;
            }
        };
        if on_line(AutoLine {
            session: name,
            result,
        })
        .is_break()
        {
            break;
        }
    }
    Ok(failure)
}

/// The sessions `req` names.
fn sessions(ctx: &StateContext, req: &AutoRequest) -> Result<Vec<String>, CompactError> {
    let mut sessions = Vec::new();
    if req.all {
        for target in ctx.targets().map_err(OpsError::from)? {
            let store = SessionStore::load(
                &target.store_path,
                LoadOptions {
                    hydrate_prompts: false,
                },
            )?;
            for (k, v) in store.entries() {
                if v.get("sessionId").and_then(Value::as_str).is_some() {
                    sessions.push(k.clone());
                }
            }
        }
    } else if let Some(s) = &req.session {
        sessions.push(s.clone());
    }
    Ok(sessions)
}

/// One session: skipped, or checked and compacted when due.
fn step(ctx: &StateContext, req: &AutoRequest, name: &str) -> Result<AutoResult, CompactError> {
    let skipped = |reason, check| AutoResult {
        action: "skipped",
        reason: Some(reason),
        exit_code: None,
        error: None,
        check,
        run: None,
    };
    let s = ops::resolve(ctx, name)?;
    if !s.path.is_file() {
        return Ok(skipped("no transcript", None));
    }
    let c = ops::check(ctx, &s, &req.check)?;
    if !c.due {
        return Ok(skipped("not due", Some(c.doc)));
    }
    let st = ops::settings_for(ctx, &s, &req.check.overrides);
    let opts = RunOptions {
        rotate: req.run.rotate || st.truncate_after_compaction,
        ..req.run.clone()
    };
    let doc = ops::run(ctx, &s, &opts)?;
    let compacted = doc.compacted();
    Ok(AutoResult {
        action: if compacted { "compacted" } else { "skipped" },
        reason: None,
        exit_code: None,
        error: None,
        check: Some(c.doc),
        run: Some(doc),
    })
}
