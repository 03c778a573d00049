//! What every `claw-*` binary shares: the global options (documented once, reused by
//! `--help` and the man pages), failures with their exit codes, and output under one rule
//! of text vs data: a result through [`emit`] (text, one pretty JSON document, or one NDJSON
//! line), a listing through [`emit_rows`] (a table on a terminal, the same rows as NDJSON
//! in a pipe), large output through the buffered [`stream`].

use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use clap::{Args, CommandFactory};
use clawstate::exit::{self, ExitCode};
use clawstate::install::context::GatewayRoute;
use clawstate::install::context::{GlobalOptions, StateContext};
use clawstate::install::targets::TargetSelection;
use clawstate::js::jsjson;
use clawstate::report::terminal_text::{self, TerminalWriter};
use clawstate::report::text_table::Layout;
use clawstate::store::store_lock::{LockWait, Waiting};
use serde_json::Value;

/// The trait of report types, for binaries that name it in a bound.
pub use serde::Serialize;

pub mod findings_cli;
pub mod signals;

/// mimalloc: the tools allocate many small maps (one per entry); glibc malloc spends more
/// time than the parser on them. Built without transparent huge pages (`no_thp`): with
/// them the kernel zeroed 2 MiB at every first touch, a quarter of cleanup's system time.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Options every binary accepts (listed under their own heading in every command's help).
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Global options")]
pub struct GlobalArgs {
    /// OpenClaw state directory (default: $OPENCLAW_STATE_DIR, ~/.openclaw, legacy ~/.clawdbot).
    #[arg(long, global = true, value_name = "DIR")]
    pub state_dir: Option<PathBuf>,
    /// Agent whose store to use (default: the configured default agent); several: ID,ID.
    #[arg(long, global = true, value_name = "ID[,ID…]")]
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
    /// Write offline even while a live gateway owns the state dir (with a warning; the gateway may overwrite the change).
    #[arg(long, global = true, conflicts_with = "via_gateway")]
    pub offline: bool,
    /// Send the write to the gateway's RPC even if no live gateway was detected (75 when it cannot be reached).
    #[arg(long, global = true)]
    pub via_gateway: bool,
    /// Print a listing as a table even when stdout is not a terminal (piped, a listing is
    /// NDJSON).
    #[arg(long, global = true, conflicts_with_all = ["json", "ndjson"])]
    pub table: bool,
    /// Colour tables and warnings: auto (on a terminal with TERM set, unless NO_COLOR is set), always, never.
    #[arg(
        long,
        global = true,
        value_name = "WHEN",
        default_value = "auto",
        hide_possible_values = true
    )]
    pub color: ColorChoice,
}

/// When tables are coloured (`--color`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorChoice {
    /// On a terminal whose `TERM` is set and not `dumb`, unless `NO_COLOR` is set (and
    /// not empty).
    Auto,
    /// Always, into a pipe too (and despite `NO_COLOR`).
    Always,
    /// Never.
    Never,
}

/// How a listing prints: `--json` one document, `--ndjson` (or a pipe) one object per
/// line, a table on a terminal (or with `--table`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListMode {
    /// One JSON document (an envelope or an array, as the command documents).
    Array,
    /// One object per line.
    Lines,
    /// A readable table.
    Table,
}

/// How tables print in this process: fixed once from the global options
/// ([`GlobalArgs::output`]), so the printers of every command read the same choice
/// without threading it through.
#[derive(Debug, Clone, Copy)]
struct Presentation {
    table: bool,
    color: ColorChoice,
}

static PRESENTATION: std::sync::OnceLock<Presentation> = std::sync::OnceLock::new();

/// The list mode for the global output flags: the one rule of text vs data.
pub fn list_mode(mode: OutputMode) -> ListMode {
    let forced = PRESENTATION.get().is_some_and(|p| p.table);
    match mode {
        OutputMode::Json => ListMode::Array,
        OutputMode::Ndjson => ListMode::Lines,
        OutputMode::Text if forced || stdout_is_terminal() => ListMode::Table,
        OutputMode::Text => ListMode::Lines,
    }
}

/// Whether output to a stream (a terminal or not) is coloured: `--color`, else a
/// terminal whose `TERM` is set and not `dumb`, unless `NO_COLOR` is set and not empty.
fn colour_on(on_terminal: bool) -> bool {
    match PRESENTATION.get().map_or(ColorChoice::Auto, |p| p.color) {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            on_terminal
                && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                && std::env::var_os("TERM").is_some_and(|t| !t.is_empty() && t != "dumb")
        }
    }
}

/// Whether what this process prints on stdout is coloured.
pub fn stdout_colour() -> bool {
    colour_on(stdout_is_terminal())
}

/// How a table is drawn here: coloured as `--color` and `NO_COLOR` say, fitted to
/// `COLUMNS` when set, else to the terminal's width when stdout is one.
pub fn table_layout() -> Layout {
    let on_terminal = stdout_is_terminal();
    let color = colour_on(on_terminal);
    let columns = std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|&c| c > 0);
    let width = columns.or_else(|| {
        terminal_size::terminal_size_of(std::io::stdout())
            .map(|(w, _)| w.0 as usize)
            .filter(|&w| w > 0 && on_terminal)
    });
    Layout { color, width }
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
    /// The output mode chosen by `--json` / `--ndjson`; fixes how tables print in this
    /// process (`--table`, `--color`).
    pub fn output(&self) -> OutputMode {
        let _ = PRESENTATION.set(Presentation {
            table: self.table,
            color: self.color,
        });
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
            route: if self.offline {
                GatewayRoute::Offline
            } else if self.via_gateway {
                GatewayRoute::Required
            } else {
                GatewayRoute::Auto
            },
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
    clawstate::fs::process::ignore_file_size_signal();
    let code = match body() {
        Ok(()) => exit::OK,
        Err(f) if f.code == exit::OK => exit::OK,
        Err(f) => {
            note(prog, &f.message);
            f.code
        }
    };
    // Everything the body changed on disk is written and synced by now.
    clawstate::fs::process::exit_now(code as u8)
}

/// Writes text to stdout; a broken pipe ends the program quietly with success. On a
/// terminal, what data could still hold raw (JSON keeps U+009B or U+202E as they are) is
/// escaped (`clawstate::report::terminal_text`, rule 2).
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

/// Writes styled text to stdout as it is: a rendered [`clawstate::report::text_table::TextTable`]
/// or lines painted with [`clawstate::report::text_table::Tone::paint`], whose data was escaped
/// when they were made and whose only controls are the colours added, which the last
/// guard of [`out`] would otherwise show as text.
pub fn out_styled(text: &str) -> Result<(), Failure> {
    write_stdout(text.as_bytes())
}

fn write_stdout(bytes: &[u8]) -> Result<(), Failure> {
    let stdout = std::io::stdout();
    let mut lock = stdout.lock();
    match lock.write_all(bytes).and_then(|_| lock.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Err(Failure::new(exit::OK, "")),
        Err(e) => Err(Failure::new(
            exit::FAILURE,
            format!("cannot write output: {e}"),
        )),
    }
}

/// Prints one result in the chosen mode: `--json` as `JSON.stringify(v, null, 2)`,
/// `--ndjson` as one line, `text` otherwise. `v` is a report type (`#[derive(Serialize)]`,
/// its fields in the order the JSON shows them) or a [`Value`]; either way the bytes are
/// `jsjson`'s (JavaScript's number formatting and key order).
pub fn emit<T: Serialize + ?Sized>(
    mode: OutputMode,
    v: &T,
    text: impl FnOnce() -> String,
) -> Result<(), Failure> {
    match mode {
        OutputMode::Json => {
            let mut s = jsjson::to_string_pretty(&document(v)?);
            s.push('\n');
            out(&s)
        }
        OutputMode::Ndjson => {
            let mut s = jsjson::to_string_compact(&document(v)?);
            s.push('\n');
            out(&s)
        }
        OutputMode::Text => out(&text()),
    }
}

/// A report as the JSON value `jsjson` writes.
pub fn document<T: Serialize + ?Sized>(v: &T) -> Result<Value, Failure> {
    serde_json::to_value(v)
        .map_err(|e| Failure::new(exit::FAILURE, format!("cannot write output: {e}")))
}

/// Prints a result that has no text form: one line for `--ndjson`, else
/// `JSON.stringify(v, null, 2)`.
pub fn emit_data<T: Serialize + ?Sized>(mode: OutputMode, v: &T) -> Result<(), Failure> {
    let m = if mode == OutputMode::Ndjson {
        OutputMode::Ndjson
    } else {
        OutputMode::Json
    };
    emit(m, v, String::new)
}

/// Prints rows of a listing in its list mode: `--json` as `document` (the command's
/// envelope, or the rows as one array), one compact object per line (`--ndjson`, or
/// piped), or `table` on a terminal (written as [`out_styled`] does).
pub fn emit_rows(
    mode: ListMode,
    rows: &[Value],
    document: impl FnOnce() -> Value,
    table: impl FnOnce(&Layout) -> String,
) -> Result<(), Failure> {
    match mode {
        ListMode::Array => {
            let mut s = jsjson::to_string_pretty(&document());
            s.push('\n');
            out(&s)
        }
        ListMode::Lines => emit_lines(rows),
        ListMode::Table => out_styled(&table(&table_layout())),
    }
}

/// Prints `rows` as NDJSON: one compact object per line.
pub fn emit_lines(rows: &[Value]) -> Result<(), Failure> {
    let mut s = String::new();
    for r in rows {
        jsjson::write_compact(&mut s, r);
        s.push('\n');
    }
    out(&s)
}

/// Prints report rows as NDJSON: one compact object per line (as [`emit_lines`]).
pub fn emit_each<T: Serialize>(rows: &[T]) -> Result<(), Failure> {
    let rows = rows.iter().map(document).collect::<Result<Vec<_>, _>>()?;
    emit_lines(&rows)
}

/// Prints a warning line on stderr, escaped as one line (`warning` in yellow where
/// colour is on for stderr).
pub fn warn(prog: &str, message: &str) {
    let label = if colour_on(std::io::stderr().is_terminal()) {
        "\u{1b}[33mwarning\u{1b}[0m"
    } else {
        "warning"
    };
    eprintln!("{prog}: {label}: {}", terminal_text::escape_line(message));
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

/// Handles the hidden generator flags before the arguments are parsed, and returns true
/// when one was given (the binary then exits 0):
/// - `--man-page`: prints the binary's own roff man page;
/// - `--generate-man DIR`: writes `<bin>.1` and one page per subcommand
///   (`claw-sessions-cleanup.1`, `claw-transcript-lock-break.1`, …) into DIR;
/// - `--generate-completions DIR`: writes the bash, zsh and fish completions into DIR
///   (`<bin>.bash`, `_<bin>`, `<bin>.fish`).
///
/// `scripts/gen-man` runs them into `man/` and `completions/`; tests/man_pages.rs fails
/// when those committed files drift from the clap definitions.
pub fn maybe_print_man<C: CommandFactory>() -> bool {
    let mut args = std::env::args_os().skip(1);
    let (flag, dir) = (args.next(), args.next().map(PathBuf::from));
    let result = match (flag.as_ref().and_then(|f| f.to_str()), dir) {
        (Some("--man-page"), _) => {
            let mut buf = Vec::new();
            clap_mangen::Man::new(built_command::<C>())
                .render(&mut buf)
                .and_then(|_| std::io::stdout().write_all(&buf))
        }
        (Some("--generate-man"), Some(dir)) => clap_mangen::generate_to(C::command(), &dir),
        (Some("--generate-completions"), Some(dir)) => generate_completions::<C>(&dir),
        _ => return false,
    };
    if let Err(e) = result {
        eprintln!("{}: cannot generate: {e}", C::command().get_name());
        std::process::exit(exit::CANT_CREATE);
    }
    true
}

/// The clap command as the generators see it: built, without the `help` subcommand.
fn built_command<C: CommandFactory>() -> clap::Command {
    let mut cmd = C::command().disable_help_subcommand(true);
    cmd.build();
    cmd
}

/// Writes the bash, zsh and fish completion scripts of the binary into `dir`.
fn generate_completions<C: CommandFactory>(dir: &std::path::Path) -> std::io::Result<()> {
    use clap_complete::Shell;
    let mut cmd = C::command();
    let name = cmd.get_name().to_string();
    for shell in [Shell::Bash, Shell::Zsh, Shell::Fish] {
        clap_complete::generate_to(shell, &mut cmd, &name, dir)?;
    }
    Ok(())
}
