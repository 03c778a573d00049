//! `claw-migrate plan`: argument parsing and output; the work is `clawstate::migrate::plan`.

use clap::Args;
use clawstate_cli::{Failure, GlobalArgs};

/// Arguments of `claw-migrate plan`.
#[derive(Debug, Args)]
pub struct PlanArgs {
    /// Show what would change; change nothing.
    #[arg(long)]
    pub dry_run: bool,
}

/// Runs `claw-migrate plan`.
pub fn run(_global: &GlobalArgs, _args: PlanArgs) -> Result<(), Failure> {
    Err(Failure::new(1, "plan: not implemented yet"))
}
