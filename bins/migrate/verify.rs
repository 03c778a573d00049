//! `claw-migrate verify`: argument parsing and output; the work is `clawstate::migrate::verify`.

use clap::Args;
use clawstate_cli::{Failure, GlobalArgs};

/// Arguments of `claw-migrate verify`.
#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// Show what would change; change nothing.
    #[arg(long)]
    pub dry_run: bool,
}

/// Runs `claw-migrate verify`.
pub fn run(_global: &GlobalArgs, _args: VerifyArgs) -> Result<(), Failure> {
    Err(Failure::new(1, "verify: not implemented yet"))
}
