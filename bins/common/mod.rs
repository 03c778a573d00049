//! What every `claw-*` binary shares: the global options (documented once, reused by
//! `--help` and the man pages), output modes and error reporting with exit codes.

#![allow(dead_code)]

use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use clap::{Args, CommandFactory};
use clawstate::context::{GlobalOptions, StateContext};
use clawstate::exit::{self, ExitCode};
use clawstate::store_lock::{LockWait, Waiting};
use clawstate::targets::TargetSelection;
use clawstate::terminal_text::{self, TerminalWriter};

/// mimalloc: the tools allocate many small maps (one per entry); glibc malloc spends more
/// time than the parser on them. Built without transparent huge pages (`no_thp`): with
/// them the kernel zeroed 2 MiB at every first touch, a quarter of cleanup's system time.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Options every binary accepts.
#[derive(Debug, Clone, Args)]
pub struct GlobalArgs {
    /// OpenClaw state directory (default: $OPENCLAW_STATE_DIR, ~/.openclaw, legacy ~/.clawdbot).
    #[arg(long, global = true, value_name = "DIR")]
    pub state_dir: Option<PathBuf>,
    /// Agent whose store to use (default: the configured default agent).
    #[arg(long, global = true, value_name = "ID")]
    pub agent: Option<String>,
    /// Every configured agent's store.
    #[arg(long, global = true)]
    pub all_agents: bool,
    /// Work on this sessions.json directly (the offline repair path; `~` and {agentId} expand).
    #[arg(long, global = true, value_name = "PATH")]
    pub store: Option<String>,
    /// Config file (default: $OPENCLAW_CONFIG_PATH, then <stateDir>/openclaw.json and legacy names).
    #[arg(long, global = true, value_name = "PATH")]
    pub config: Option<PathBuf>,
    /// The clock: epoch milliseconds or ISO-8601 (default: the system clock).
    #[arg(long, global = true, value_name = "TIME")]
    pub now: Option<String>,
    /// Print one JSON document.
    #[arg(long, global = true, conflicts_with = "ndjson")]
    pub json: bool,
    /// Print one JSON object per line.
    #[arg(long, global = true)]
    pub ndjson: bool,
    /// Where sessions live: `files` (sessions.json + JSONL) or `db` (the 2026.8+ agent
    /// SQLite database); default: per agent, the database when present.
    #[arg(long, global = true, value_name = "files|db")]
    pub layout: Option<clawstate::agent_db::layout::Layout>,
}

/// How long a command that writes a store waits for another clawstate writer of it.
#[derive(Debug, Clone, Args)]
pub struct StoreWaitArgs {
    /// Wait at most SECS seconds while another clawstate process writes the store, then exit 75 (0: do not wait).
    #[arg(long, value_name = "SECS", default_value_t = LockWait::DEFAULT_TIMEOUT.as_secs())]
    pub wait: u64,
    /// Exit 75 at once when another clawstate process writes the store (--wait 0).
    #[arg(long, conflicts_with = "wait")]
    pub no_wait: bool,
}

impl StoreWaitArgs {
    /// The wait policy, saying `prog: waiting for …` on stderr when a wait starts.
    pub fn policy(&self, announce: fn(&Waiting<'_>)) -> LockWait {
        let secs = if self.no_wait { 0 } else { self.wait };
        LockWait::up_to(std::time::Duration::from_secs(secs)).announcing(announce)
    }
}

/// How results are printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputMode {
    /// A readable table or text.
    Text,
    /// One JSON document.
    Json,
    /// One JSON object per line.
    Ndjson,
}

impl GlobalArgs {
    /// The output mode chosen by `--json` / `--ndjson`.
    pub fn output(&self) -> OutputMode {
        if self.json {
            OutputMode::Json
        } else if self.ndjson {
            OutputMode::Ndjson
        } else {
            OutputMode::Text
        }
    }

    /// Builds the library's global options.
    pub fn options(&self) -> GlobalOptions {
        GlobalOptions {
            state_dir: self.state_dir.clone(),
            config: self.config.clone(),
            targets: TargetSelection {
                store: self.store.clone(),
                agent: self.agent.clone(),
                all_agents: self.all_agents,
            },
            now: self.now.clone(),
        }
    }

    /// Resolves the installation, or exits with the right code.
    pub fn context(&self, prog: &str) -> Result<StateContext, Failure> {
        if let Some(l) = self.layout {
            clawstate::agent_db::layout::force(l);
        }
        StateContext::from_options(self.options()).map_err(|e| Failure::from_error(prog, &e))
    }
}

/// A failure already turned into a message and an exit code.
#[derive(Debug)]
pub struct Failure {
    /// The one-line message (without the program prefix).
    pub message: String,
    /// The exit code.
    pub code: i32,
}

impl Failure {
    /// From any library error that carries its exit code.
    pub fn from_error<E: std::fmt::Display + ExitCode>(_prog: &str, e: &E) -> Self {
        Failure {
            message: e.to_string(),
            code: e.exit_code(),
        }
    }

    /// A failure with an explicit code.
    pub fn new(code: i32, message: impl Into<String>) -> Self {
        Failure {
            message: message.into(),
            code,
        }
    }
}

/// Converts library errors into failures with `?`.
pub trait OrFail<T> {
    /// Maps the error into a [`Failure`] carrying its exit code.
    fn or_fail(self) -> Result<T, Failure>;
}

impl<T, E: std::fmt::Display + ExitCode> OrFail<T> for Result<T, E> {
    fn or_fail(self) -> Result<T, Failure> {
        self.map_err(|e| Failure {
            message: e.to_string(),
            code: e.exit_code(),
        })
    }
}

/// Runs a binary's body: prints a failure as `prog: message` on stderr and exits with
/// its code; a closed stdout (broken pipe) counts as success. A write past the file-size
/// limit fails with EFBIG (exit 73) instead of killing the process with SIGXFSZ.
pub fn run_main(prog: &str, body: impl FnOnce() -> Result<(), Failure>) -> std::process::ExitCode {
    clawstate::process::ignore_file_size_signal();
    let code = match body() {
        Ok(()) => exit::OK,
        Err(f) if f.code == exit::OK => exit::OK,
        Err(f) => {
            note(prog, &f.message);
            f.code
        }
    };
    // Everything the body changed on disk is written and synced by now.
    clawstate::process::exit_now(code as u8)
}

/// Writes text to stdout; a broken pipe ends the program quietly with success. On a
/// terminal, what data could still hold raw (JSON keeps U+009B or U+202E as they are) is
/// escaped (`clawstate::terminal_text`, rule 2).
pub fn out(text: &str) -> Result<(), Failure> {
    let stdout = std::io::stdout();
    let mut lock = stdout.lock();
    let text = if stdout_is_terminal() {
        terminal_text::escape_text(text)
    } else {
        std::borrow::Cow::Borrowed(text)
    };
    match lock.write_all(text.as_bytes()).and_then(|_| lock.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Err(Failure::new(exit::OK, "")),
        Err(e) => Err(Failure::new(
            exit::FAILURE,
            format!("cannot write output: {e}"),
        )),
    }
}

/// Streams output through a buffered stdout; a broken pipe ends quietly with success. On
/// a terminal, escaped as [`out`] does.
pub fn stream(body: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) -> Result<(), Failure> {
    let stdout = std::io::stdout();
    let lock: Box<dyn Write> = if stdout_is_terminal() {
        Box::new(TerminalWriter::new(stdout.lock()))
    } else {
        Box::new(stdout.lock())
    };
    let mut w = std::io::BufWriter::with_capacity(1 << 16, lock);
    match body(&mut w).and_then(|_| w.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Err(Failure::new(exit::OK, "")),
        Err(e) => Err(Failure::new(
            exit::FAILURE,
            format!("cannot write output: {e}"),
        )),
    }
}

/// Prints a warning line on stderr, escaped as one line.
pub fn warn(prog: &str, message: &str) {
    eprintln!("{prog}: warning: {}", terminal_text::escape_line(message));
}

/// Prints `prog: message` on stderr (an error or progress), escaped as one line: data in
/// a message never drives the terminal nor forges a second line.
pub fn note(prog: &str, message: &str) {
    eprintln!("{prog}: {}", terminal_text::escape_line(message));
}

/// One line of text output for a record that holds data (keys, summaries, paths): the
/// line escaped as a whole (its own text holds no control), then a newline.
pub fn text_line(line: &str) -> String {
    let mut s = terminal_text::escape_line(line).into_owned();
    s.push('\n');
    s
}

/// Whether stdout is a terminal.
pub fn stdout_is_terminal() -> bool {
    std::io::stdout().is_terminal()
}

/// Handles the hidden `--man-page` flag: prints the roff man page generated from the clap
/// definition and returns true.
pub fn maybe_print_man<C: CommandFactory>() -> bool {
    if std::env::args().nth(1).as_deref() != Some("--man-page") {
        return false;
    }
    let cmd = C::command();
    let mut buf = Vec::new();
    if clap_mangen::Man::new(cmd).render(&mut buf).is_ok() {
        let _ = std::io::stdout().write_all(&buf);
    }
    true
}
