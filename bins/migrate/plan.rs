//! `claw-migrate plan`: argument parsing and output; the work is `clawstate::migrate::plan`.

use clap::Args;
use clawstate::migrate::plan::{self, AgentPlan};
use clawstate::report::text_table::{Cell, TextTable, Tone};
use clawstate_cli::{self as common, Failure, GlobalArgs, OrFail, OutputMode};
use serde_json::{json, Value};

/// Arguments of `claw-migrate plan` (read-only: it never changes anything).
#[derive(Debug, Args)]
pub struct PlanArgs {
    /// Accepted for symmetry with the other steps; `plan` never writes.
    #[arg(long)]
    pub dry_run: bool,
}

/// Runs `claw-migrate plan`.
pub fn run(global: &GlobalArgs, _args: PlanArgs) -> Result<(), Failure> {
    let mode = global.output();
    let targets = crate::targets_of(global)?;
    let mut plans = Vec::new();
    for t in &targets {
        plans.push(plan::plan_agent(t).or_fail()?);
    }
    match mode {
        OutputMode::Json => {
            let doc = json!({
                "agents": plans.iter().map(to_value).collect::<Vec<_>>(),
                "totals": totals(&plans),
            });
            common::emit_data(OutputMode::Json, &doc)
        }
        OutputMode::Ndjson => {
            let rows: Vec<Value> = plans
                .iter()
                .flat_map(|p| p.sessions.iter())
                .map(|s| serde_json::to_value(s).unwrap_or(Value::Null))
                .collect();
            common::emit_lines(&rows)
        }
        OutputMode::Text => common::out_styled(&table(&plans, &common::table_layout())),
    }
}

fn to_value(p: &AgentPlan) -> Value {
    let mut v = serde_json::to_value(p).unwrap_or(Value::Null);
    if let Some(o) = v.as_object_mut() {
        o.insert("blockingIssues".into(), json!(p.blocking()));
    }
    v
}

fn totals(plans: &[AgentPlan]) -> Value {
    let sessions: usize = plans.iter().map(|p| p.sessions.len()).sum();
    let events: usize = plans
        .iter()
        .flat_map(|p| p.sessions.iter())
        .map(|s| s.events)
        .sum();
    let bytes: u64 = plans
        .iter()
        .flat_map(|p| p.sessions.iter())
        .map(|s| s.bytes)
        .sum();
    json!({
        "agents": plans.len(),
        "sessions": sessions,
        "events": events,
        "bytes": bytes,
        "issues": plans.iter().map(|p| p.doctor.issues.len()).sum::<usize>(),
        "blockingIssues": plans.iter().map(AgentPlan::blocking).sum::<usize>(),
        "archiveMoves": plans.iter().map(|p| p.archive.len()).sum::<usize>(),
    })
}

fn table(plans: &[AgentPlan], layout: &clawstate::report::text_table::Layout) -> String {
    let mut t = TextTable::new(&[
        "AGENT", "SESSION", "ACTION", "EVENTS", "BYTES", "ISSUES", "WHY",
    ]);
    for p in plans {
        for s in &p.sessions {
            let action = serde_json::to_value(s.action)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default();
            let tone = if s.blocking() {
                Tone::Error
            } else if s.issues.is_empty() {
                Tone::Plain
            } else {
                Tone::Warn
            };
            let name = s
                .session_key
                .clone()
                .or_else(|| s.transcript.as_ref().map(|t| t.display().to_string()))
                .unwrap_or_default();
            let codes: Vec<&str> = s.issues.iter().map(|i| i.code.as_str()).collect();
            t.push(vec![
                Cell::plain(&p.agent_id),
                Cell::plain(&name),
                Cell::new(&action, tone),
                Cell::plain(&s.events.to_string()),
                Cell::plain(&s.bytes.to_string()),
                Cell::new(&codes.join(","), tone),
                Cell::plain(s.reason.as_deref().unwrap_or("")),
            ]);
        }
    }
    let mut out = t.render(layout);
    for p in plans {
        out.push_str(&common::text_line(&format!(
            "{}: {} session(s), {} to archive, {} doctor issue(s), {} blocking; database {}",
            p.agent_id,
            p.sessions.len(),
            p.archive.len(),
            p.doctor.issues.len(),
            p.blocking(),
            if p.db_present { "present" } else { "absent" }
        )));
    }
    out
}
