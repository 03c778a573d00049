//! `claw-migrate export`: argument parsing and output; the work is `clawstate::migrate::export`.

use clap::Args;
use clawstate_cli::{Failure, GlobalArgs};

/// Arguments of `claw-migrate export`.
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// Show what would change; change nothing.
    #[arg(long)]
    pub dry_run: bool,
}

/// Runs `claw-migrate export`.
pub fn run(_global: &GlobalArgs, _args: ExportArgs) -> Result<(), Failure> {
    Err(Failure::new(1, "export: not implemented yet"))
}
