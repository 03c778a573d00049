//! `claw-migrate finish`: argument parsing and output; the work is `clawstate::migrate::finish`.

use clap::Args;
use clawstate_cli::{Failure, GlobalArgs};

/// Arguments of `claw-migrate finish`.
#[derive(Debug, Args)]
pub struct FinishArgs {
    /// Show what would change; change nothing.
    #[arg(long)]
    pub dry_run: bool,
}

/// Runs `claw-migrate finish`.
pub fn run(_global: &GlobalArgs, _args: FinishArgs) -> Result<(), Failure> {
    Err(Failure::new(1, "finish: not implemented yet"))
}
