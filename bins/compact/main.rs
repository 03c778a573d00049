//! `claw-compact`: compaction of OpenClaw session transcripts offline — the threshold, the
//! cut point with tool-call pairing, a pluggable or extractive summary, successor rotation
//! and `--max-lines` truncation, exactly as the gateway does them.

use clawstate_cli as common;

use std::io::IsTerminal;
use std::ops::ControlFlow;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};
use clawstate::compaction::settings::Overrides;
use clawstate::compaction::summarizer::SummarizerCommand;
use clawstate::exit;
use clawstate::install::context::StateContext;
use clawstate::js::jsjson;
use clawstate::ops::compaction_ops::auto::AutoRequest;
use clawstate::ops::compaction_ops::{self as ops, CheckOptions, RunOptions, SummarySource};
use clawstate::ops::delegation;
use clawstate::store::store_lock::{LockWait, Waiting};
use common::{
    out, run_main, text_line, warn, Failure, GlobalArgs, OrFail, OutputMode, StoreWaitArgs,
};
use serde_json::Value;

const PROG: &str = "claw-compact";

/// Compact OpenClaw session transcripts offline, as the gateway compacts them.
///
/// SESSION is a session key (resolved through the store, like `main`), a sessionId, or a
/// path to a .jsonl file.
///
/// `check` applies the threshold (context tokens > context window − effective reserve);
/// an estimated context (no usable usage) includes the fixed overhead of every turn —
/// system prompt, workspace bootstrap files and tool schemas, see --overhead-tokens;
/// `plan` shows prepareCompaction's cut point; `run` appends the compaction entry with a
/// summary from --summarizer CMD (the exact default-mode prompt on its stdin, the summary on
/// its stdout), from --summary-file, or by default a deterministic extractive summary under
/// the five safeguard headings; `--rotate` writes the truncateAfterCompaction successor
/// `<ts>_<uuid>.jsonl` and points the store at it; `truncate --max-lines N` is `openclaw
/// sessions compact --max-lines`; `auto` compacts what is due, for cron.
///
/// While a live gateway owns the state directory, `truncate` goes through its RPC
/// (sessions.compact with maxLines); run and auto refuse (75): the gateway's
/// sessions.compact summarizes with its own model (--offline writes anyway).
///
/// Writes take the transcript write lock as the gateway does, are atomic and fsync'd
/// (the successor is durable before the store points at it; the old transcript is not
/// modified by --rotate unless it is repaired first, see below), and refuse while the state directory's gateway is running
/// (pass --store to write offline anyway). The store is updated under the lock other
/// clawstate writers take: run, truncate and auto wait up to --wait SECS (default 60) for
/// it, before changing the transcript. Every command has --dry-run.
///
/// A transcript the gateway would repair before compacting (a line that is not JSON, an
/// empty error reply, a blank user message, a tool call its repair pass answers) is
/// compacted as the gateway compacts it: check and plan work on the repaired view and say
/// so in `repairFirst` (writing nothing); run and auto repair it exactly as `claw-transcript
/// repair` would and compact, in one atomic rewrite under the transcript lock that keeps
/// the file's mode (a failure changes nothing; with nothing to compact, the repair alone
/// is written); --no-repair refuses it instead (65). A
/// transcript needing header recovery or a version migration is refused (run
/// claw-transcript repair/migrate).
///
/// Exit codes: 0 ok (for `check --quiet`: compaction is due), 1 other failure (a summarizer
/// that failed, printed nothing or more than 1 MiB, or ran past --summarizer-timeout; for
/// `check --quiet`: no compaction due), 2 usage,
/// 3 not found, 65 malformed input (a transcript needing migration, or repair with
/// --no-repair, an empty summary file), 73 cannot write, 75 busy (the write lock stayed held, another clawstate
/// writer, a live gateway, or the session changed underneath), 77 the gateway refused the
/// credentials.
#[derive(Debug, Parser)]
#[command(name = "claw-compact", version)]
struct Cli {
    #[command(flatten)]
    global: GlobalArgs,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Clone, Args)]
struct Budget {
    /// Context window W (default: the model's in models.providers, the entry's contextTokens, else 200000; capped by agents.defaults.contextTokens).
    #[arg(long, value_name = "N")]
    context_window: Option<u64>,
    /// reserveTokens before the floor and caps (default: agents.defaults.compaction.reserveTokens, else 16384).
    #[arg(long, value_name = "N")]
    reserve_tokens: Option<u64>,
    /// reserveTokensFloor (default: config, else 20000; 0 disables).
    #[arg(long, value_name = "N")]
    reserve_tokens_floor: Option<u64>,
    /// keepRecentTokens (default: config, else 20000).
    #[arg(long, value_name = "N")]
    keep_recent_tokens: Option<u64>,
}

impl Budget {
    fn overrides(&self) -> Overrides {
        Overrides {
            context_window: self.context_window,
            reserve_tokens: self.reserve_tokens,
            reserve_tokens_floor: self.reserve_tokens_floor,
            keep_recent_tokens: self.keep_recent_tokens,
        }
    }
}

#[derive(Debug, Clone, Args)]
struct OverheadArgs {
    /// Fixed prompt overhead of every turn, in tokens, added to an estimated context.
    ///
    /// Default: estimated as the gateway builds the prompt — the agent's workspace
    /// bootstrap files (AGENTS.md, SOUL.md, TOOLS.md, IDENTITY.md, USER.md, HEARTBEAT.md,
    /// BOOTSTRAP.md, MEMORY.md in agents.list[].workspace, agents.defaults.workspace or
    /// ~/.openclaw/workspace; capped by bootstrapMaxChars, default 20000, and
    /// bootstrapTotalMaxChars, default 60000), plus the rest of the system prompt and the
    /// tool schemas from the session's last run (its systemPromptReport) or, without one,
    /// openclaw 2026.7.1's defaults (17997 chars and 31 tools of 21086 schema chars; 17585
    /// and 22 tools of 12489 with plugins.enabled false); tokens are chars / 4. Usage
    /// counts already include it. 0: the transcript alone.
    #[arg(long, value_name = "N")]
    overhead_tokens: Option<u64>,
}

#[derive(Debug, Clone, Args)]
struct Summary {
    /// Shell command that gets the prompt on stdin and prints the summary on stdout.
    ///
    /// CMD runs as `sh -c CMD` in a process group of its own, with claw-compact's
    /// environment plus CLAW_COMPACT_CALL (`history` or `turn-prefix`),
    /// CLAW_COMPACT_SYSTEM_PROMPT and CLAW_COMPACT_MAX_TOKENS; its stdin is the exact
    /// prompt, then end of file. Its stdout (at most 1 MiB) is the summary; the last line of
    /// its stderr is shown when it fails. The whole process group is killed when CMD runs
    /// past --summarizer-timeout, prints more than 1 MiB, or exits (what it left running in
    /// the group goes with it). A split turn makes two calls. A failure writes nothing and
    /// exits 1.
    #[arg(long, value_name = "CMD", conflicts_with = "summary_file")]
    summarizer: Option<String>,
    /// Seconds one --summarizer call may run before it is killed (at least 1).
    #[arg(
        long,
        value_name = "SECS",
        default_value_t = 120,
        value_parser = clap::value_parser!(u64).range(1..)
    )]
    summarizer_timeout: u64,
    /// Use this file's text as the summary.
    #[arg(long, value_name = "FILE")]
    summary_file: Option<PathBuf>,
    /// Extra focus for the summary (`/compact <instructions>`).
    #[arg(long, value_name = "TEXT")]
    instructions: Option<String>,
}

impl Summary {
    fn source(&self) -> SummarySource {
        match (&self.summarizer, &self.summary_file) {
            (Some(c), _) => SummarySource::Command(SummarizerCommand {
                command: c.clone(),
                timeout: Duration::from_secs(self.summarizer_timeout),
            }),
            (None, Some(f)) => SummarySource::File(f.clone()),
            _ => SummarySource::Extractive,
        }
    }
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Whether compaction is due (the gateway's settings and triggers: context window, reserve, thresholds); JSON.
    Check {
        /// Session key, sessionId or path.
        session: String,
        #[command(flatten)]
        budget: Budget,
        #[command(flatten)]
        overhead: OverheadArgs,
        /// Print nothing; exit 0 when compaction is due, 1 when not.
        #[arg(long)]
        quiet: bool,
        /// Accepted for symmetry; check never writes.
        #[arg(long)]
        dry_run: bool,
    },
    /// prepareCompaction: the cut point, split turn, summarised and kept entries, files.
    Plan {
        /// Session key, sessionId or path.
        session: String,
        #[command(flatten)]
        budget: Budget,
        #[command(flatten)]
        overhead: OverheadArgs,
        /// Include the converted messages that would be summarised.
        #[arg(long)]
        messages: bool,
        /// Accepted for symmetry; plan never writes.
        #[arg(long)]
        dry_run: bool,
    },
    /// Compact now: append the compaction entry and update the store.
    Run {
        /// Session key, sessionId or path.
        session: String,
        #[command(flatten)]
        budget: Budget,
        #[command(flatten)]
        summary: Summary,
        /// Write the truncateAfterCompaction successor and point the store at it.
        #[arg(long)]
        rotate: bool,
        /// Keep the recent tail in context: skip the manual hardening rule (implied when the
        /// config sets agents.defaults.compaction.keepRecentTokens).
        #[arg(long)]
        keep_tail: bool,
        /// Refuse (65) a transcript the gateway's repair pass would change, instead of
        /// repairing it first.
        #[arg(long)]
        no_repair: bool,
        /// Show what would be written; write nothing.
        #[arg(long)]
        dry_run: bool,
        #[command(flatten)]
        wait: StoreWaitArgs,
    },
    /// `sessions compact --max-lines N`: keep the header and the last N-1 lines.
    Truncate {
        /// Session key, sessionId or path.
        session: String,
        /// Lines to keep, header included (at least 1).
        #[arg(long, value_name = "N")]
        max_lines: u64,
        /// Show what would be written; write nothing.
        #[arg(long)]
        dry_run: bool,
        #[command(flatten)]
        wait: StoreWaitArgs,
    },
    /// For cron: compact the session (or every session with --all) when due, one JSON line each.
    Auto {
        /// Session key, sessionId or path (or --all).
        #[arg(required_unless_present = "all")]
        session: Option<String>,
        /// Every session of the selected agent(s).
        #[arg(long, conflicts_with = "session")]
        all: bool,
        #[command(flatten)]
        budget: Budget,
        #[command(flatten)]
        summary: Summary,
        #[command(flatten)]
        overhead: OverheadArgs,
        /// Rotate even when the config does not set truncateAfterCompaction.
        #[arg(long)]
        rotate: bool,
        /// Refuse (65) a transcript the gateway's repair pass would change, instead of
        /// repairing it first.
        #[arg(long)]
        no_repair: bool,
        /// Show what would be done; write nothing.
        #[arg(long)]
        dry_run: bool,
        #[command(flatten)]
        wait: StoreWaitArgs,
    },
}

fn main() -> std::process::ExitCode {
    if common::maybe_print_man::<Cli>() {
        return std::process::ExitCode::SUCCESS;
    }
    let cli = Cli::parse();
    run_main(PROG, || run(cli))
}

/// Refuses (75) a compaction the gateway would do differently while a gateway owns the
/// state dir (or `--via-gateway` asks for one): its `sessions.compact` summarizes with the
/// gateway's own model, not with --summarizer, --summary-file or the extractive summary.
fn not_through_gateway(ctx: &StateContext, dry_run: bool, what: &str) -> Result<(), Failure> {
    delegation::refuse_unless_offline(ctx, dry_run, what, "the gateway's sessions.compact summarizes with its own model, not with this command's summary source (only truncate --max-lines has the same semantics)")
        .map_err(|e| Failure::from_error(PROG, &e))
}

/// Prints one result in the chosen mode (the one emit of `clawstate-cli`).
use common::emit as print_doc;

fn run(cli: Cli) -> Result<(), Failure> {
    let ctx = cli.global.context(PROG)?;
    let mode = cli.global.output();
    match cli.command {
        Command::Check {
            session,
            budget,
            overhead,
            quiet,
            ..
        } => {
            let s = resolve_to_read(&ctx, &session)?;
            let r = ops::check(&ctx, &s, &check_options(&budget, &overhead, false)).or_fail()?;
            if quiet {
                if r.due {
                    return Ok(());
                }
                std::process::exit(exit::FAILURE);
            }
            let j = &common::document(&r.doc)?;
            print_doc(mode, &r.doc, || {
                text_line(&format!(
                    "{}: {} context tokens ({}{}), threshold {} (window {} − reserve {}): {}",
                    s.path.display(),
                    j["contextTokens"],
                    j["source"].as_str().unwrap_or(""),
                    if j["overhead"]["applied"] == Value::Bool(true) {
                        format!(" + {} overhead", j["overhead"]["total"])
                    } else {
                        String::new()
                    },
                    j["threshold"],
                    j["contextWindow"],
                    j["reserveTokens"],
                    if r.due {
                        "compaction due"
                    } else {
                        "no compaction due"
                    }
                ))
            })
        }
        Command::Plan {
            session,
            budget,
            overhead,
            messages,
            ..
        } => {
            let s = resolve_to_read(&ctx, &session)?;
            let o = check_options(&budget, &overhead, false);
            let doc = ops::plan_json(&ctx, &s, &o, messages).or_fail()?;
            let m = if mode == OutputMode::Text {
                OutputMode::Json
            } else {
                mode
            };
            print_doc(m, &doc, String::new)
        }
        Command::Run {
            session,
            budget,
            summary,
            rotate,
            keep_tail,
            no_repair,
            dry_run,
            wait,
        } => {
            not_through_gateway(&ctx, dry_run, "claw-compact run")?;
            let s = ops::resolve(&ctx, &session).or_fail()?;
            let opts = RunOptions {
                overrides: budget.overrides(),
                source: summary.source(),
                instructions: summary.instructions.clone(),
                rotate,
                keep_tail,
                dry_run,
                wait: wait.policy(waiting),
                repair: !no_repair,
            };
            let doc = ops::run(&ctx, &s, &opts).or_fail()?;
            let v = common::document(&doc)?;
            report_warnings(&v);
            print_doc(mode, &doc, || run_text(&v))
        }
        Command::Truncate {
            session,
            max_lines,
            dry_run,
            wait,
        } => {
            if let Some(d) = delegation::route(&ctx, dry_run) {
                let doc = delegation::truncate(&d, &ctx, &session, max_lines)
                    .map_err(|e| Failure::from_error(PROG, &e))?;
                return print_doc(mode, &doc, || {
                    text_line(&format!(
                        "{} through the gateway: {}",
                        doc["key"].as_str().unwrap_or(&session),
                        if doc["compacted"] == Value::Bool(true) {
                            format!("trimmed, kept {} lines", doc["kept"])
                        } else {
                            "not trimmed".to_string()
                        }
                    ))
                });
            }
            let s = ops::resolve(&ctx, &session).or_fail()?;
            let doc =
                ops::truncate(&ctx, &s, max_lines, dry_run, wait.policy(waiting)).or_fail()?;
            report_warnings(&common::document(&doc)?);
            let kept = doc
                .kept
                .map_or_else(|| "null".to_string(), |k| k.to_string());
            print_doc(mode, &doc, || {
                text_line(&if doc.compacted {
                    format!(
                        "{} {}: kept {kept} lines, original archived as {}",
                        if dry_run { "would trim" } else { "trimmed" },
                        s.path.display(),
                        doc.archived.as_deref().unwrap_or("")
                    )
                } else {
                    format!(
                        "{}: not trimmed ({})",
                        s.path.display(),
                        doc.reason
                            .map(String::from)
                            .unwrap_or_else(|| format!("{kept} lines kept"))
                    )
                })
            })
        }
        Command::Auto {
            session,
            all,
            budget,
            summary,
            overhead,
            rotate,
            no_repair,
            dry_run,
            wait,
        } => {
            not_through_gateway(&ctx, dry_run, "claw-compact auto")?;
            // Silent for cron: the wait is announced at a terminal.
            let wait = wait.policy(if std::io::stderr().is_terminal() {
                waiting
            } else {
                |_| {}
            });
            let check = check_options(&budget, &overhead, no_repair);
            auto(
                &ctx, mode, session, all, &check, &summary, rotate, dry_run, wait,
            )
        }
    }
}

/// The options of check, plan and auto's check.
fn check_options(budget: &Budget, overhead: &OverheadArgs, no_repair: bool) -> CheckOptions {
    CheckOptions {
        overrides: budget.overrides(),
        overhead_tokens: overhead.overhead_tokens,
        repair: !no_repair,
    }
}

/// A session to read: a transcript outside the state dir is read as the gateway reads it,
/// with a warning.
fn resolve_to_read(
    ctx: &StateContext,
    session: &str,
) -> Result<clawstate::transcript::session::SessionRef, Failure> {
    let s = ops::resolve(ctx, session).or_fail()?;
    if let Some(w) = s.foreign_warning() {
        warn(PROG, &w);
    }
    Ok(s)
}

/// Says on stderr that a write waits for another clawstate writer of its store.
fn waiting(w: &Waiting<'_>) {
    common::note(PROG, &w.to_string());
}

fn report_warnings(doc: &Value) {
    if let Some(w) = doc.get("warning").and_then(Value::as_str) {
        warn(PROG, w);
    }
    if let Some(e) = doc
        .get("signal")
        .and_then(|s| s.get("error"))
        .and_then(Value::as_str)
    {
        warn(PROG, &format!("could not record the compacted signal: {e}"));
    }
}

fn run_text(doc: &Value) -> String {
    if doc["compacted"] != Value::Bool(true) {
        return text_line(&format!(
            "{}: not compacted ({})",
            doc["path"].as_str().unwrap_or(""),
            doc["reason"].as_str().unwrap_or("")
        ));
    }
    let verb = if doc["dryRun"] == Value::Bool(true) {
        "would compact"
    } else {
        "compacted"
    };
    let r = &doc["result"];
    let mut t = text_line(&format!(
        "{verb} {}: tokens {} → {}, first kept entry {}{}",
        doc["path"].as_str().unwrap_or(""),
        r["tokensBefore"],
        r["tokensAfter"],
        r["firstKeptEntryId"].as_str().unwrap_or(""),
        if doc["hardened"] == Value::Bool(true) {
            " (hardened: summary only)"
        } else {
            ""
        }
    ));
    if let Some(f) = r.get("sessionFile").and_then(Value::as_str) {
        t.push_str(&text_line(&format!("successor: {f}")));
    }
    t
}

#[allow(clippy::too_many_arguments)]
fn auto(
    ctx: &StateContext,
    mode: OutputMode,
    session: Option<String>,
    all: bool,
    check: &CheckOptions,
    summary: &Summary,
    rotate: bool,
    dry_run: bool,
    wait: LockWait,
) -> Result<(), Failure> {
    let req = AutoRequest {
        session,
        all,
        check: *check,
        run: RunOptions {
            overrides: check.overrides,
            source: summary.source(),
            instructions: summary.instructions.clone(),
            rotate,
            keep_tail: false,
            dry_run,
            wait,
            repair: check.repair,
        },
    };
    // One line per session as it completes (cron reads them as they come); --json one
    // array at the end.
    let mut lines: Vec<Value> = Vec::new();
    let mut output: Result<(), Failure> = Ok(());
    let failure = clawstate::ops::compaction_ops::auto::auto(
        ctx,
        &req,
        &mut |w| warn(PROG, w),
        &mut |line| {
            let printed = common::document(&line).and_then(|v| {
                if mode == OutputMode::Json {
                    lines.push(v);
                    Ok(())
                } else {
                    out(&(jsjson::to_string_compact(&v) + "\n"))
                }
            });
            match printed {
                Ok(()) => ControlFlow::Continue(()),
                Err(f) => {
                    output = Err(f);
                    ControlFlow::Break(())
                }
            }
        },
    )
    .or_fail()?;
    output?;
    if mode == OutputMode::Json {
        out(&(jsjson::to_string_pretty(&Value::Array(lines)) + "\n"))?;
    }
    match failure {
        Some(f) => Err(Failure::new(f.code, f.message)),
        None => Ok(()),
    }
}
