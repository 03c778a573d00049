//! `claw-migrate import`: argument parsing and output; the work is `clawstate::migrate::import`.

use clap::Args;
use clawstate_cli::{Failure, GlobalArgs};

/// Arguments of `claw-migrate import`.
#[derive(Debug, Args)]
pub struct ImportArgs {
    /// Show what would change; change nothing.
    #[arg(long)]
    pub dry_run: bool,
}

/// Runs `claw-migrate import`.
pub fn run(_global: &GlobalArgs, _args: ImportArgs) -> Result<(), Failure> {
    Err(Failure::new(1, "import: not implemented yet"))
}
