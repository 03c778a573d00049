//! `claw-transcript check`: the findings of the transcripts named, and with `--all` of
//! every transcript of the selected agents cross-checked with their stores and lock files
//! (on the agent-DB layout, the database's checks instead), filtered by severity.
//!
//! While the gateway is live, an entry without its transcript is a session it has just
//! created (it commits the store first and writes the transcript with the first reply):
//! an info finding, not an error.

use serde::Serialize;

use crate::agent_db::check::{check_or_report, stale_holders, DbCheckOptions};
use crate::install::context::StateContext;
use crate::report::finding::{Finding, Severity};
use crate::report::finding_report;
use crate::transcript::check::check_file;
use crate::transcript::check_all;
use crate::transcript::reader::ReadError;
use crate::transcript::session;

use super::TranscriptOpError;

/// What to check.
#[derive(Debug, Clone)]
pub struct CheckRequest<'a> {
    /// Session keys, sessionIds or paths.
    pub sessions: &'a [String],
    /// Every transcript of the selected agents.
    pub all: bool,
    /// On the agent-DB layout: `PRAGMA integrity_check` instead of `quick_check`.
    pub integrity: bool,
    /// The least severity kept.
    pub min: Severity,
}

/// The counts `check --json` prints before its findings.
#[derive(Debug, Clone, Serialize)]
pub struct CheckCounts {
    /// Transcripts (or databases' sessions) checked.
    pub files: usize,
    /// Error-level findings.
    pub errors: usize,
    /// Warnings.
    pub warnings: usize,
}

/// What `check` found.
#[derive(Debug, Clone)]
pub struct CheckReport {
    /// The counts.
    pub counts: CheckCounts,
    /// The findings of at least the asked severity.
    pub findings: Vec<Finding>,
}

/// Checks what `req` names; `warn` receives warnings, `progress` (done, total) the
/// progress of a store's transcripts.
pub fn check(
    ctx: &StateContext,
    req: &CheckRequest<'_>,
    warn: &mut dyn FnMut(&str),
    progress: &mut dyn FnMut(usize, usize),
) -> Result<CheckReport, TranscriptOpError> {
    let db_opts = |session_id: Option<String>| DbCheckOptions {
        integrity: req.integrity,
        session_id,
    };
    let mut findings: Vec<Finding> = Vec::new();
    let mut files = 0usize;
    let live = std::cell::OnceCell::new();
    let live = || live.get_or_init(|| ctx.live_gateway()).clone();
    for arg in req.sessions {
        let s = session::resolve(ctx, arg)?;
        if let Some(w) = s.foreign_warning() {
            warn(&w);
        }
        if let (Some(db), Some(t)) = (&s.agent_db, &s.target) {
            let (f, _) = check_or_report(db, &t.store_path, &db_opts(s.session_id.clone()));
            findings.extend(f);
            files += 1;
            continue;
        }
        match check_file(&s.file) {
            Ok(r) => findings.extend(r.findings),
            Err(e @ ReadError::NotFound { .. }) => match (&s.key, live()) {
                (Some(key), Some(owner)) => {
                    findings.push(check_all::not_written_yet(s.file.path(), key, &owner));
                    continue;
                }
                _ => return Err(e.into()),
            },
            Err(e) => findings.push(check_all::unreadable(s.file.path(), &e)),
        }
        files += 1;
    }
    if req.all {
        let mut db_layout = false;
        for target in ctx.targets()? {
            if let Some(db) = crate::agent_db::layout::db_for_store(&target.store_path) {
                let (f, n) = check_or_report(&db, &target.store_path, &db_opts(None));
                findings.extend(f);
                files += n;
                db_layout = true;
                continue;
            }
            let c = check_all::check_store(ctx, &target, progress)?;
            findings.extend(c.findings);
            files += c.files;
        }
        if db_layout {
            findings.extend(stale_holders(&ctx.layout.state_dir));
        }
    }
    let findings = finding_report::at_least(findings, req.min);
    let (errors, warnings, _) = finding_report::counts(&findings);
    Ok(CheckReport {
        counts: CheckCounts {
            files,
            errors,
            warnings,
        },
        findings,
    })
}
