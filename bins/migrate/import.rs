//! `claw-migrate import`: argument parsing and output; the work is `clawstate::migrate::import`.

use clap::Args;
use clawstate::migrate::import::{self, ImportError, ImportOptions};
use clawstate::report::terminal_text::escape_text;
use clawstate_cli::{emit, Failure, GlobalArgs, OrFail};

/// Arguments of `claw-migrate import` (`--agent A` / `--all-agents` / `--json` are global).
#[derive(Debug, Args)]
pub struct ImportArgs {
    /// Show what would be imported and archived; change nothing.
    #[arg(long)]
    pub dry_run: bool,
}

/// Runs `claw-migrate import`.
pub fn run(global: &GlobalArgs, args: ImportArgs) -> Result<(), Failure> {
    let mode = global.output();
    let ctx = global.context(crate::PROG)?;
    let targets = ctx.targets().or_fail()?;
    let mut agents: Vec<String> = Vec::new();
    for t in targets {
        if !agents.contains(&t.agent_id) {
            agents.push(t.agent_id);
        }
    }
    if !args.dry_run {
        if let Some(owner) = ctx.live_gateway() {
            return Err(ImportError::LiveGateway {
                state_dir: ctx.layout.state_dir.clone(),
                owner: owner.to_string(),
            })
            .or_fail();
        }
    }
    let report = import::run(&ImportOptions {
        state_dir: ctx.layout.state_dir.clone(),
        agents,
        dry_run: args.dry_run,
        now_ms: ctx.now_ms,
    })
    .or_fail()?;
    let v = serde_json::to_value(&report).map_err(|e| Failure::new(1, e.to_string()))?;
    emit(mode, &v, || {
        let mut s = String::new();
        for a in &report.agents {
            s.push_str(&format!(
                "{}: {} ({} sessions, {} events, {} files {}archived)\n",
                a.agent_id,
                a.status,
                a.imported_entries,
                a.imported_transcript_events,
                a.archived_files.len(),
                if report.dry_run { "to be " } else { "" },
            ));
            for i in &a.issues {
                s.push_str(&format!(
                    "  {}: {}\n",
                    i["code"].as_str().unwrap_or_default(),
                    i["message"].as_str().unwrap_or_default()
                ));
            }
        }
        if let Some(m) = &report.manifest_path {
            s.push_str(&format!("manifest: {}\n", m.display()));
        }
        escape_text(&s).into_owned()
    })
}
