//! `claw-migrate verify`: argument parsing and output; the work is `clawstate::migrate::verify`.

use std::path::Path;

use clap::Args;
use clawstate::agent_db::layout;
use clawstate::migrate::verify::{self, SessionStatus};
use clawstate::report::finding_report;
use clawstate_cli::findings_cli::finding_line;
use clawstate_cli::{emit_lines, note, out, out_styled, Failure, GlobalArgs, OrFail, OutputMode};
use serde_json::{Map, Value};

/// Arguments of `claw-migrate verify`.
#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// Print only the problems, not the information lines (torn tails, sessions created
    /// after the migration).
    #[arg(long)]
    pub quiet: bool,
}

const PROG: &str = "claw-migrate verify";

/// Runs `claw-migrate verify`.
pub fn run(global: &GlobalArgs, args: VerifyArgs) -> Result<(), Failure> {
    let mode = global.output();
    let ctx = global.context(PROG)?;
    let targets = ctx.targets().or_fail()?;
    let mut findings = Vec::new();
    let mut sessions = Vec::new();
    for t in &targets {
        let db = layout::db_path_for_store(&t.store_path);
        let sessions_dir = layout::legacy_store_for(&t.store_path)
            .parent()
            .unwrap_or(Path::new("."))
            .to_path_buf();
        let v = verify::verify_agent(&t.agent_id, &db, &sessions_dir).or_fail()?;
        findings.extend(v.findings);
        sessions.extend(v.sessions);
    }
    if args.quiet {
        findings.retain(|f| f.severity > clawstate::report::finding::Severity::Info);
    }
    let code = finding_report::exit_code(&findings);
    let count = |s: SessionStatus| sessions.iter().filter(|v| v.status == s).count();
    let (verified, failed, created) = (
        count(SessionStatus::Verified),
        count(SessionStatus::Failed),
        count(SessionStatus::CreatedAfterMigration),
    );
    match mode {
        OutputMode::Json => {
            let mut doc = Map::new();
            doc.insert("ok".into(), Value::from(code == 0));
            doc.insert("verified".into(), Value::from(verified));
            doc.insert("failed".into(), Value::from(failed));
            doc.insert("createdAfterMigration".into(), Value::from(created));
            doc.insert(
                "sessions".into(),
                Value::Array(sessions.iter().map(|s| s.to_json()).collect()),
            );
            doc.insert(
                "findings".into(),
                Value::Array(findings.iter().map(|f| f.to_json()).collect()),
            );
            let mut s = clawstate::js::jsjson::to_string_pretty(&Value::Object(doc));
            s.push('\n');
            out(&s)?;
        }
        OutputMode::Ndjson => {
            let mut rows: Vec<Value> = sessions.iter().map(|s| s.to_json()).collect();
            rows.extend(findings.iter().map(|f| f.to_json()));
            emit_lines(&rows)?;
        }
        OutputMode::Text => {
            let mut buf = String::new();
            for f in &findings {
                buf.push_str(&finding_line(f));
            }
            out_styled(&buf)?;
            let mut summary = format!("{verified} sessions verified, {failed} failed");
            if created > 0 {
                summary.push_str(&format!(
                    ", {created} created after the migration (no legacy file; not checked)"
                ));
            }
            note(PROG, &summary);
        }
    }
    match code {
        0 => Ok(()),
        c => Err(Failure::new(
            c,
            if failed > 0 {
                format!("{failed} sessions are not as their legacy files say")
            } else {
                "problems found".to_string()
            },
        )),
    }
}
