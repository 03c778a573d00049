//! `claw-signals`: not implemented yet; prints its usage.

#[path = "../common/mod.rs"]
mod common;

use clap::Parser;

/// OpenClaw signals tool (not yet available in this build: see the project issues).
///
/// Exit codes: 0 ok, 1 other failure, 2 usage, 3 not found, 65 malformed input,
/// 73 cannot write, 75 busy.
#[derive(Debug, Parser)]
#[command(name = "claw-signals", version, about, long_about)]
struct Cli {
    #[command(flatten)]
    global: common::GlobalArgs,
}

fn main() -> std::process::ExitCode {
    if common::maybe_print_man::<Cli>() {
        return std::process::ExitCode::SUCCESS;
    }
    let _cli = Cli::parse();
    use clap::CommandFactory;
    let _ = Cli::command().print_help();
    eprintln!("claw-signals: no commands are available in this build yet");
    std::process::ExitCode::from(2)
}
