//! `claw-migrate`: move an agent's sessions between the 2026.7 files (`sessions.json` and
//! JSONL transcripts) and the 2026.8+ agent database, as openclaw 2026.9.6 does, and finish
//! the migrations its doctor leaves stuck.

use clawstate_cli as common;

mod export;
mod finish;
mod import;
mod plan;
mod verify;

use clap::{Parser, Subcommand};
use common::{run_main, Failure, GlobalArgs};

pub(crate) const PROG: &str = "claw-migrate";

/// Move OpenClaw sessions between the legacy files and the agent database.
///
/// `plan` says, per agent and per session, what an import would do (read-only); `import`
/// writes the agent database exactly as openclaw 2026.9.6's `doctor --session-sqlite import`
/// does and moves the legacy files into the import archive; `verify` proves every legacy
/// event is in the database; `export` writes the database back as `sessions.json` and
/// `<sessionId>.jsonl`; `finish` repairs the stuck-migration cases (a legacy JSONL beside a
/// DB-backed session, a half-written run manifest, an import archive without its rows).
///
/// Exit codes: 0 ok, 1 other failure, 2 usage, 3 not found, 65 malformed input, 73 cannot
/// write, 75 busy (a live gateway or a held lock), 77 not permitted.
#[derive(Debug, Parser)]
#[command(name = "claw-migrate", version)]
struct Cli {
    #[command(flatten)]
    global: GlobalArgs,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// What an import would do with every legacy entry and transcript (changes nothing).
    Plan(plan::PlanArgs),
    /// Import the legacy files into the agent database as 2026.9.6's doctor does.
    Import(import::ImportArgs),
    /// Check that every legacy event is in the agent database and nothing else changed.
    Verify(verify::VerifyArgs),
    /// Write the agent database back as sessions.json and JSONL transcripts.
    Export(export::ExportArgs),
    /// Finish a stuck migration: leftover legacy JSONL, half-written manifests, orphan archives.
    Finish(finish::FinishArgs),
}

fn main() -> std::process::ExitCode {
    if common::maybe_print_man::<Cli>() {
        return std::process::ExitCode::SUCCESS;
    }
    let cli = Cli::parse();
    run_main(PROG, || run(cli))
}

fn run(cli: Cli) -> Result<(), Failure> {
    match cli.command {
        Command::Plan(a) => plan::run(&cli.global, a),
        Command::Import(a) => import::run(&cli.global, a),
        Command::Verify(a) => verify::run(&cli.global, a),
        Command::Export(a) => export::run(&cli.global, a),
        Command::Finish(a) => finish::run(&cli.global, a),
    }
}
