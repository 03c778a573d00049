//! `claw-transcript`: read, check, repair, migrate and append OpenClaw session transcripts
//! (`<sessionId>.jsonl`) offline, exactly as the gateway reads and writes them.

use clawstate::fs::data_file::DataPath;
use clawstate::install::context::StateContext;
use clawstate::transcript::{history, locks, migrate, reader, session, stats, tail, tree};
use clawstate_cli as common;
use clawstate_cli::findings_cli;

use std::io::Read;

use clap::{Args, Parser, Subcommand};
use clawstate::exit;
use clawstate::js;
use clawstate::js::jsjson;
use clawstate::ops::transcript_ops::{self, context_view, history_view, tree_view};
use clawstate::report::terminal_text::{escape_line, escape_text};

use common::{out, run_main, text_line, warn, Failure, GlobalArgs, OrFail, OutputMode};
use context_view::ContextStage;
use findings_cli::{print_findings, FindingArgs, TerminalProgress};
use serde_json::Value;

const PROG: &str = "claw-transcript";

/// Read, check, repair and append OpenClaw session transcripts offline.
///
/// SESSION is a session key (resolved through the store, like `main` or
/// `agent:work:telegram:group:1`), a sessionId, or a path to a .jsonl file.
///
/// Reads are tolerant like the gateway's (torn and invalid lines are skipped and
/// reported). Writes (repair, migrate, append, lock break) take the transcript write lock
/// exactly as the gateway does, are atomic and fsync'd, and refuse while the state
/// directory's gateway is running (pass --store to write offline anyway). Every mutating
/// command has --dry-run.
///
/// Lock caveat: a running gateway treats a lock held by a live process that does not look
/// like OpenClaw as stale (`non-openclaw-owner`) and reclaims it at once; claw-transcript
/// holds locks only briefly, but this is why writes refuse while a gateway is live. The
/// gateway's own title (`openclaw-gateway`) fails that rule too: `lock status` and `check`
/// report its reasons, but a lock whose live holder has it open (or is a gateway) is "in
/// use", never removable, and `lock break` refuses it without --force. While the gateway
/// is live, an entry whose transcript is not written yet is a session it has just created
/// (info, not an error).
///
/// Exit codes: 0 ok, 1 other failure, 2 usage, 3 not found, 65 malformed input (check
/// found errors, unusable transcript or message), 73 cannot write, 75 busy (the write lock
/// stayed held — the gateway's `session file locked (timeout …)` message — or a live
/// gateway owns the state directory).
#[derive(Debug, Parser)]
#[command(name = "claw-transcript", version)]
struct Cli {
    #[command(flatten)]
    global: GlobalArgs,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Clone, Args)]
struct DryRun {
    /// Show what would change; write nothing.
    #[arg(long)]
    dry_run: bool,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Print the rows in file order, or only the active branch: a table on a terminal, one
    /// JSON object per line when piped (or --ndjson), one array with --json.
    Cat {
        /// Session key, sessionId or path.
        session: String,
        /// Only the entries of the active branch, root to leaf, with logical parents.
        #[arg(long)]
        branch: bool,
    },
    /// The sessions_history result: display projection, 4000-char texts, 80 KiB cap.
    History {
        /// Session key, sessionId or path.
        session: String,
        /// At most N messages (default 200, at most 1000).
        #[arg(long, value_name = "N")]
        limit: Option<usize>,
        /// Page back from the newest message (adds pagination fields).
        #[arg(long, value_name = "N")]
        offset: Option<u64>,
        /// Keep tool results.
        #[arg(long)]
        include_tools: bool,
        /// Print the gateway's `chat.history` page instead of the tool result.
        #[arg(long, hide = true)]
        page: bool,
    },
    /// The last N visible messages; --follow prints new ones as they are appended.
    Tail {
        /// Session key, sessionId or path.
        session: String,
        /// How many messages.
        #[arg(short = 'n', long = "lines", default_value_t = 10, value_name = "N")]
        n: usize,
        /// Keep printing messages appended later (survives truncation and rotation).
        #[arg(short, long)]
        follow: bool,
        /// Raw transcript messages (no display projection).
        #[arg(long)]
        raw: bool,
    },
    /// An ASCII tree of the entries: labels shown, the current leaf marked with `*`.
    ///
    /// Linear chains stay flat; only forks indent. `--json` gives `{leafId, roots, nodes}`
    /// and `--ndjson` one node per line, depth-first: `id`, `parentId`, `depth`, `type`,
    /// `role`, `label`, `leaf`, `children` (ids), for any depth.
    Tree {
        /// Session key, sessionId or path.
        session: String,
    },
    /// The messages the model receives (after compaction and the gateway's replay
    /// normalisation), as JSON.
    ///
    /// Replay drops what the gateway never sends: NO_REPLY-only and transcript-only
    /// (delivery-mirror, gateway-injected) assistant turns, blank texts, empty and failed
    /// turns; and merges consecutive turns as the model's API asks (users for
    /// openai-completions and Anthropic, assistants for openai-completions, Google and
    /// Anthropic). The API is that of the assistant message that set the current model
    /// (`api` in the output), or --api; an assistant-first history opens with the gateway's
    /// `(session bootstrap)` user turn where the API asks for it. Not shown: image
    /// downscaling, thinking and
    /// signature policies, tool-call id rewriting and pairing repair, provider plugin hooks,
    /// heartbeat filtering and history limits.
    Context {
        /// Session key, sessionId or path.
        session: String,
        /// The agent messages before the replay normalisation and the LLM conversion.
        #[arg(long, conflicts_with = "no_replay")]
        raw: bool,
        /// The LLM conversion of the rebuilt context without the replay normalisation.
        #[arg(long)]
        no_replay: bool,
        /// The model API the replay is for (`openai-completions`, `anthropic-messages`, …).
        #[arg(long, value_name = "API")]
        api: Option<String>,
    },
    /// Rows by type and role, bytes, estimated and recorded tokens, branches.
    Stats {
        /// Session key, sessionId or path.
        session: String,
    },
    /// Validate transcripts; one finding per line; exit 65 when any error is found.
    Check {
        /// Session keys, sessionIds or paths.
        sessions: Vec<String>,
        /// Every transcript of the agent(s), cross-checked with the store and lock files
        /// (progress on stderr at a terminal).
        #[arg(long)]
        all: bool,
        #[command(flatten)]
        report: FindingArgs,
        /// On the agent DB layout: `PRAGMA integrity_check` instead of the faster `quick_check`.
        #[arg(long)]
        integrity: bool,
    },
    /// The gateway's repair pass (and header recovery), atomically under the write lock.
    Repair {
        /// Session key, sessionId or path.
        session: String,
        /// Only remove a torn (cut-off) last line.
        #[arg(long)]
        trim_torn_tail: bool,
        #[command(flatten)]
        dry: DryRun,
    },
    /// Rewrite a version 1 or 2 transcript as version 3 (and recover a missing header first,
    /// as the gateway does).
    Migrate {
        /// Session key, sessionId or path.
        session: String,
        #[command(flatten)]
        dry: DryRun,
    },
    /// Append a message as the gateway appender does (a message JSON object on stdin, or
    /// --role and --text).
    Append {
        /// Session key, sessionId or path.
        session: String,
        /// The role of a message given with --text.
        #[arg(long, requires = "text")]
        role: Option<String>,
        /// The text of the message.
        #[arg(long)]
        text: Option<String>,
        /// Append even when a row with the same idempotencyKey exists.
        #[arg(long)]
        no_dedupe: bool,
        #[command(flatten)]
        dry: DryRun,
    },
    /// Transcript write locks: status and break.
    Lock {
        #[command(subcommand)]
        action: LockAction,
    },
}

#[derive(Debug, Subcommand)]
enum LockAction {
    /// The doctor's view of a transcript's lock (or of every lock with --all).
    Status {
        /// Session key, sessionId or path.
        session: Option<String>,
        /// Every *.jsonl.lock of the agent(s).
        #[arg(long)]
        all: bool,
    },
    /// Remove a lock the doctor would remove (stale and not only too-old); --force for any.
    Break {
        /// Session key, sessionId or path.
        session: String,
        /// Remove it even when its holder looks alive and legitimate.
        #[arg(long)]
        force: bool,
        #[command(flatten)]
        dry: DryRun,
    },
}

fn main() -> std::process::ExitCode {
    if common::maybe_print_man::<Cli>() {
        return std::process::ExitCode::SUCCESS;
    }
    let cli = Cli::parse();
    run_main(PROG, || run(cli))
}

fn run(cli: Cli) -> Result<(), Failure> {
    let ctx = cli.global.context(PROG)?;
    let mode = cli.global.output();
    match cli.command {
        Command::Cat { session, branch } => cat(&ctx, mode, &session, branch),
        Command::History {
            session,
            limit,
            offset,
            include_tools,
            page,
        } => history_cmd(&ctx, mode, &session, limit, offset, include_tools, page),
        Command::Tail {
            session,
            n,
            follow,
            raw,
        } => tail_cmd(&ctx, mode, &session, n, follow, raw),
        Command::Tree { session } => tree_cmd(&ctx, mode, &session),
        Command::Context {
            session,
            raw,
            no_replay,
            api,
        } => context_cmd(&ctx, mode, &session, raw, no_replay, api),
        Command::Stats { session } => stats_cmd(&ctx, mode, &session),
        Command::Check {
            sessions,
            all,
            report,
            integrity,
        } => check_cmd(&ctx, mode, &sessions, all, &report, integrity),
        Command::Repair {
            session,
            trim_torn_tail,
            dry,
        } => repair_cmd(&ctx, mode, &session, trim_torn_tail, dry.dry_run),
        Command::Migrate { session, dry } => migrate_cmd(&ctx, mode, &session, dry.dry_run),
        Command::Append {
            session,
            role,
            text,
            no_dedupe,
            dry,
        } => append_cmd(&ctx, mode, &session, role, text, !no_dedupe, dry.dry_run),
        Command::Lock { action } => lock_cmd(&ctx, mode, action),
    }
}

// ---- helpers ------------------------------------------------------------------------------

fn print_json(v: &Value) -> Result<(), Failure> {
    let mut s = jsjson::to_string_pretty(v);
    s.push('\n');
    out(&s)
}

/// Prints one result in the chosen mode (the one emit of `clawstate-cli`).
use common::emit as print_doc;

/// A `SESSION` to read: a transcript outside the state dir is read as the gateway reads it,
/// with a warning.
fn resolve(ctx: &StateContext, arg: &str) -> Result<session::SessionRef, Failure> {
    resolve_scoped(ctx, arg, session::CopyScope::Whole)
}

/// [`resolve`] for a bounded read of the end (a DB transcript is copied only that far).
fn resolve_scoped(
    ctx: &StateContext,
    arg: &str,
    scope: session::CopyScope,
) -> Result<session::SessionRef, Failure> {
    let s = session::resolve_scoped(ctx, arg, scope).or_fail()?;
    if let Some(w) = s.foreign_warning() {
        warn(PROG, &w);
    }
    Ok(s)
}

fn read(file: &DataPath) -> Result<reader::Transcript, Failure> {
    let t = reader::read_file(file).or_fail()?;
    let path = file.path();
    for s in &t.skipped {
        warn(
            PROG,
            &format!(
                "{}:{}: skipped {} ({})",
                path.display(),
                s.line,
                if s.torn_tail {
                    "a torn last line"
                } else {
                    "a line that is not JSON"
                },
                s.error
            ),
        );
    }
    Ok(t)
}

fn index_of(t: &reader::Transcript) -> tree::SessionIndex {
    migrate::open_index(t.values()).0
}

fn text_of(m: &Value) -> String {
    match m.get("content") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|b| match b.get("type").and_then(Value::as_str) {
                Some("text") => b
                    .get("text")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string(),
                Some("thinking") => format!(
                    "[thinking] {}",
                    b.get("thinking").and_then(Value::as_str).unwrap_or("")
                ),
                Some("toolCall") | Some("toolUse") | Some("functionCall") => format!(
                    "[tool call {}] {}",
                    b.get("name").and_then(Value::as_str).unwrap_or("?"),
                    b.get("arguments")
                        .map(jsjson::to_string_compact)
                        .unwrap_or_default()
                ),
                Some("image") => "[image]".to_string(),
                Some(t) => format!("[{t}]"),
                None => String::new(),
            })
            .collect::<Vec<_>>()
            .join("\n"),
        _ => m
            .get("text")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
    }
}

/// One message for reading: its header on one line, its text's lines indented; data
/// escaped (newlines of the text are its layout).
fn message_line(m: &Value) -> String {
    let role = escape_line(m.get("role").and_then(Value::as_str).unwrap_or("?"));
    let ts = m
        .get("timestamp")
        .and_then(Value::as_i64)
        .map(|t| format!("{} ", js::to_iso_string(t)))
        .unwrap_or_default();
    let label = m
        .get("senderLabel")
        .and_then(Value::as_str)
        .map(|l| format!(" ({})", escape_line(l)))
        .unwrap_or_default();
    let text = escape_text(&text_of(m)).replace('\n', "\n    ");
    format!("{ts}{role}{label}: {text}\n")
}

// ---- commands -----------------------------------------------------------------------------

fn cat(ctx: &StateContext, mode: OutputMode, arg: &str, branch: bool) -> Result<(), Failure> {
    let s = resolve(ctx, arg)?;
    let t = read(&s.file)?;
    let rows: Vec<Value> = if branch {
        index_of(&t).branch(None)
    } else {
        t.values()
    };
    common::emit_rows(
        common::list_mode(mode),
        &rows,
        || Value::Array(rows.clone()),
        |layout| row_table(&rows, layout),
    )
}

/// The rows of a transcript as a table for reading: type, id, parent, time and what the
/// row says (a message's role and text, a compaction's summary, …) on one line each.
fn row_table(rows: &[Value], layout: &clawstate::report::text_table::Layout) -> String {
    use clawstate::report::text_table::{Cell, TextTable, Tone};
    let str_at = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    let mut t = TextTable::new(&["TYPE", "ID", "PARENT", "TIME", "CONTENT"]);
    for r in rows {
        let kind = str_at(r, "type");
        let content = match kind.as_str() {
            "message" => {
                let m = r.get("message").unwrap_or(&Value::Null);
                format!("{}: {}", str_at(m, "role"), text_of(m))
            }
            "compaction" | "branch_summary" => str_at(r, "summary"),
            "custom" | "custom_message" => str_at(r, "customType"),
            "model_change" => format!("{}/{}", str_at(r, "provider"), str_at(r, "modelId")),
            "thinking_level_change" => str_at(r, "thinkingLevel"),
            "label" => str_at(r, "label"),
            "session" => format!(
                "v{} {}",
                r.get("version").map_or(Value::Null, Value::clone),
                str_at(r, "cwd")
            ),
            _ => String::new(),
        };
        t.push(vec![
            Cell::new(&kind, Tone::AccentBright),
            Cell::new(&str_at(r, "id"), Tone::Muted),
            Cell::new(&str_at(r, "parentId"), Tone::Muted),
            Cell::new(&str_at(r, "timestamp"), Tone::Muted),
            Cell::plain(&content),
        ]);
    }
    t.render(layout)
}

fn history_cmd(
    ctx: &StateContext,
    mode: OutputMode,
    arg: &str,
    limit: Option<usize>,
    offset: Option<u64>,
    include_tools: bool,
    raw_page: bool,
) -> Result<(), Failure> {
    if limit == Some(0) {
        return Err(Failure::new(
            exit::USAGE,
            "--limit must be a positive integer",
        ));
    }
    let s = resolve_scoped(ctx, arg, history_view::copy_scope(offset))?;
    let req = history_view::HistoryRequest {
        limit,
        offset,
        include_tools,
        now_ms: ctx.now_ms,
    };
    if raw_page {
        let page = history_view::chat_history_page(&s, &req).or_fail()?;
        return common::emit_data(mode, &page);
    }
    let result = history_view::sessions_history(&s, &req).or_fail()?;
    match mode {
        OutputMode::Json => print_json(&result),
        OutputMode::Ndjson => {
            let mut buf = String::new();
            for m in result["messages"].as_array().into_iter().flatten() {
                buf.push_str(&jsjson::to_string_compact(m));
                buf.push('\n');
            }
            out(&buf)
        }
        OutputMode::Text => {
            let mut buf = String::new();
            for m in result["messages"].as_array().into_iter().flatten() {
                buf.push_str(&message_line(m));
            }
            if result["truncated"] == Value::Bool(true) {
                buf.push_str("(truncated)\n");
            }
            out(&buf)
        }
    }
}

fn print_messages(mode: OutputMode, msgs: &[Value]) -> Result<(), Failure> {
    let mut buf = String::new();
    for m in msgs {
        match mode {
            OutputMode::Text => buf.push_str(&message_line(m)),
            _ => {
                buf.push_str(&jsjson::to_string_compact(m));
                buf.push('\n');
            }
        }
    }
    out(&buf)
}

fn tail_cmd(
    ctx: &StateContext,
    mode: OutputMode,
    arg: &str,
    n: usize,
    follow: bool,
    raw: bool,
) -> Result<(), Failure> {
    let s = if follow {
        resolve_scoped(ctx, arg, tail_follow_scope())?
    } else {
        resolve_scoped(
            ctx,
            arg,
            session::CopyScope::Tail(tail::RECENT_MESSAGES_MAX_BYTES),
        )?
    };
    // A session of the agent database is followed through a mirror of its rows that
    // grows as the gateway commits new ones (the copy `resolve` made does not); named by
    // its key, it is followed across resets onto the key's new session.
    let mut mirror = match (&s.agent_db, &s.session_id) {
        (Some(db), Some(sid)) if follow => Some(
            match &s.key {
                Some(key) => clawstate::agent_db::follow::TranscriptMirror::open_key(db, key, sid),
                None => clawstate::agent_db::follow::TranscriptMirror::open(db, sid),
            }
            .map_err(|e| Failure::from_error(PROG, &e))?,
        ),
        _ => None,
    };
    let file_path = mirror.as_ref().map_or(&s.file, |m| m.path()).clone();
    let mode = if mode == OutputMode::Json {
        OutputMode::Ndjson
    } else {
        mode
    };
    let opened = match file_path.open_read() {
        Ok(f) => Some(f.into_file()),
        Err(e) if e.is_not_found() => None,
        Err(e) => return Err(Failure::from_error(PROG, &e)),
    };
    let mut follower = None;
    if let Some(file) = opened {
        let window = n.max(1) * 20 + 20;
        // What is printed first ends where following starts: with --follow, at the end of
        // the last complete line (a line still being written is printed once it is whole).
        let io_fail =
            |e: std::io::Error| Failure::new(exit::FAILURE, format!("{}: {e}", s.path.display()));
        let mut size = file.metadata().map_err(io_fail)?.len();
        if follow {
            size = tail::Follower::complete_lines_end(&file, size).map_err(io_fail)?;
        }
        let msgs = tail::recent_display_messages_to(
            &file,
            size,
            n,
            window,
            tail::RECENT_MESSAGES_MAX_BYTES,
            history::CHAT_HISTORY_TEXT_MAX_CHARS,
            raw,
            ctx.now_ms,
        )
        .map_err(io_fail)?;
        print_messages(mode, &msgs)?;
        follower = Some(tail::Follower::at_offset(&file_path, file, size));
    } else if !follow {
        return Err(Failure::new(
            exit::NOT_FOUND,
            format!("{}: no such transcript", s.path.display()),
        ));
    }
    if !follow {
        return Ok(());
    }
    let mut f = follower.unwrap_or_else(|| tail::Follower::at_end(&file_path));
    // After a reset the mirror's file is replaced: said once, as the reset.
    let mut reset_said = false;
    // A file transcript named by its key whose file went away (a reset archives it): the
    // key's entry is asked until it names a new session, which is then followed.
    let mut awaiting_reset = false;
    let mut shown = s.path.clone();
    let mut current_sid = s.session_id.clone();
    loop {
        let mut rows = Vec::new();
        f.poll(&mut |r, seq| rows.push((r, seq)), &mut |ev| {
            if std::mem::take(&mut reset_said) && ev == tail::FollowEvent::Replaced {
                return;
            }
            awaiting_reset = ev == tail::FollowEvent::Missing;
            let what = match ev {
                tail::FollowEvent::Truncated => "file truncated; reading from its start",
                tail::FollowEvent::Replaced => "file replaced; following the new file",
                tail::FollowEvent::Missing => "file removed; waiting for it to come back",
            };
            warn(PROG, &format!("{}: {what}", shown.display()));
        })
        .map_err(|e| Failure::new(exit::FAILURE, format!("{}: {e}", shown.display())))?;
        if !rows.is_empty() {
            awaiting_reset = false;
            let msgs: Vec<Value> = rows
                .iter()
                .filter_map(|(r, seq)| history::record_to_message(r, *seq, ctx.now_ms))
                .collect();
            let msgs = if raw {
                msgs
            } else {
                history::project_chat_display(msgs, history::CHAT_HISTORY_TEXT_MAX_CHARS)
            };
            print_messages(mode, &msgs)?;
        }
        match &mut mirror {
            // Sleeps on the database's change notifications; rows committed since are
            // appended to the mirror for the next poll.
            Some(m) => {
                m.wait_and_pull(tail::Follower::interval() * 5)
                    .map_err(|e| Failure::from_error(PROG, &e))?;
                if let Some(sid) = m.take_reset() {
                    warn(
                        PROG,
                        &format!(
                            "{}: session reset; following session {sid}",
                            shown.display()
                        ),
                    );
                    reset_said = true;
                }
            }
            None => {
                if awaiting_reset {
                    if let Some((next, file)) = reset_successor(ctx, &s, current_sid.as_deref()) {
                        warn(
                            PROG,
                            &format!(
                                "{}: session reset; following session {}",
                                shown.display(),
                                next.session_id.as_deref().unwrap_or("?")
                            ),
                        );
                        f = tail::Follower::at_offset(&next.file, file, 0);
                        shown = next.path.clone();
                        current_sid = next.session_id.clone();
                        awaiting_reset = false;
                        continue;
                    }
                }
                std::thread::sleep(tail::Follower::interval())
            }
        }
    }
}

/// The session `s`'s key names now, with its transcript open, when it is another session
/// than `current` (the key was reset); `None` for a transcript not named by a key.
fn reset_successor(
    ctx: &StateContext,
    s: &session::SessionRef,
    current: Option<&str>,
) -> Option<(session::SessionRef, std::fs::File)> {
    let key = s.key.as_deref()?;
    let next = session::resolve_scoped(ctx, key, tail_follow_scope()).ok()?;
    if next.agent_db.is_some() || next.session_id.as_deref() == current {
        return None;
    }
    let file = next.file.open_read().ok()?.into_file();
    Some((next, file))
}

/// The copy `tail --follow` needs from `resolve`: files are read in place; a database
/// session is followed through its own mirror, so the copy can be the small tail one.
fn tail_follow_scope() -> session::CopyScope {
    session::CopyScope::Tail(tail::RECENT_MESSAGES_MAX_BYTES)
}

fn tree_cmd(ctx: &StateContext, mode: OutputMode, arg: &str) -> Result<(), Failure> {
    let s = resolve(ctx, arg)?;
    let t = read(&s.file)?;
    let ix = index_of(&t);
    let tree = ix.tree();
    fn summary(e: &Value) -> String {
        let ty = e.get("type").and_then(Value::as_str).unwrap_or("?");
        let detail = match ty {
            "message" => {
                let m = &e["message"];
                let text: String = text_of(m).chars().take(60).collect();
                format!(
                    "{}: {}",
                    m.get("role").and_then(Value::as_str).unwrap_or("?"),
                    text.replace('\n', " ")
                )
            }
            "compaction" => "compaction".into(),
            "label" => format!(
                "label {}",
                e.get("label")
                    .and_then(Value::as_str)
                    .unwrap_or("(cleared)")
            ),
            "model_change" => format!(
                "model {}/{}",
                e.get("provider").and_then(Value::as_str).unwrap_or("?"),
                e.get("modelId").and_then(Value::as_str).unwrap_or("?")
            ),
            "thinking_level_change" => format!(
                "thinking {}",
                e.get("thinkingLevel")
                    .and_then(Value::as_str)
                    .unwrap_or("?")
            ),
            "custom" | "custom_message" => format!(
                "{ty} {}",
                e.get("customType").and_then(Value::as_str).unwrap_or("?")
            ),
            other => other.to_string(),
        };
        detail
    }
    // Depth-first with an explicit stack (a transcript may be a million rows deep):
    // (node, prefix of its line, last among its siblings, drawn flush as a root or an
    // only child).
    fn draw(ix: &tree::SessionIndex, tree: &tree::Tree, out: &mut String) {
        let mut stack: Vec<(usize, std::rc::Rc<str>, bool, bool)> = tree
            .roots
            .iter()
            .rev()
            .map(|&r| (r, std::rc::Rc::from(""), true, true))
            .collect();
        while let Some((at, prefix, last, root)) = stack.pop() {
            let n = &tree.nodes[at];
            let connector = if root {
                ""
            } else if last {
                "└─ "
            } else {
                "├─ "
            };
            let mark = if ix.leaf_id.as_deref() == Some(n.id.as_str()) {
                "* "
            } else {
                ""
            };
            let label = n
                .label
                .as_ref()
                .map(|l| {
                    format!(
                        " [{}]",
                        l.as_str()
                            .map(String::from)
                            .unwrap_or_else(|| jsjson::to_string_compact(l))
                    )
                })
                .unwrap_or_default();
            out.push_str(&format!(
                "{prefix}{connector}{mark}{}\n",
                escape_line(&format!("{} {}{label}", n.id, summary(&ix.rows[n.row])))
            ));
            let child_prefix: std::rc::Rc<str> = if root {
                prefix.clone()
            } else if last {
                format!("{prefix}   ").into()
            } else {
                format!("{prefix}│  ").into()
            };
            // Long linear chains stay flat: only forks indent.
            if n.children.len() == 1 {
                stack.push((n.children[0], child_prefix, true, true));
                continue;
            }
            let count = n.children.len();
            for (i, &c) in n.children.iter().enumerate().rev() {
                stack.push((c, child_prefix.clone(), i + 1 == count, false));
            }
        }
    }
    match mode {
        OutputMode::Text => {
            let mut buf = String::new();
            draw(&ix, &tree, &mut buf);
            out(&buf)
        }
        // One node per line, depth-first: a stream for jq and friends.
        OutputMode::Ndjson => {
            let mut buf = String::new();
            for n in &tree.nodes {
                let node = tree_view::node_view(&ix, &tree, n);
                let v = serde_json::to_value(&node).map_err(|e| {
                    Failure::new(exit::FAILURE, format!("cannot write output: {e}"))
                })?;
                jsjson::write_compact(&mut buf, &v);
                buf.push('\n');
            }
            out(&buf)
        }
        OutputMode::Json => common::emit(mode, &tree_view::tree_view(&ix, &tree), String::new),
    }
}

fn context_cmd(
    ctx: &StateContext,
    mode: OutputMode,
    arg: &str,
    raw: bool,
    no_replay: bool,
    api: Option<String>,
) -> Result<(), Failure> {
    let s = resolve(ctx, arg)?;
    let t = read(&s.file)?;
    let ix = index_of(&t);
    let stage = if raw {
        ContextStage::Raw
    } else if no_replay {
        ContextStage::Converted
    } else {
        ContextStage::Replayed
    };
    let view = context_view::model_context(&ix, stage, api, ctx.now_ms).or_fail()?;
    common::emit_data(mode, &view)
}

fn stats_cmd(ctx: &StateContext, mode: OutputMode, arg: &str) -> Result<(), Failure> {
    let s = resolve(ctx, arg)?;
    let t = read(&s.file)?;
    let ix = index_of(&t);
    let view = transcript_ops::stats_view::StatsView {
        path: s.path.to_string_lossy().into_owned(),
        stats: stats::stats(&t, &ix),
    };
    print_doc(mode, &view, || {
        let mut buf = text_line(&format!(
            "{:<20} {}",
            "path",
            jsjson::to_string_compact(&Value::String(view.path.clone()))
        ));
        for (k, v) in view.stats.as_object().into_iter().flatten() {
            buf.push_str(&text_line(&format!(
                "{k:<20} {}",
                jsjson::to_string_compact(v)
            )));
        }
        buf
    })
}

fn check_cmd(
    ctx: &StateContext,
    mode: OutputMode,
    sessions: &[String],
    all: bool,
    report: &FindingArgs,
    integrity: bool,
) -> Result<(), Failure> {
    if sessions.is_empty() && !all {
        return Err(Failure::new(exit::USAGE, "check: give SESSION… or --all"));
    }
    let req = transcript_ops::check::CheckRequest {
        sessions,
        all,
        integrity,
        min: report.min()?,
    };
    let mut progress = TerminalProgress::new(PROG);
    let r = transcript_ops::check::check(ctx, &req, &mut warning, &mut |done, total| {
        progress.update("transcripts", done, total)
    })
    .or_fail()?;
    drop(progress);
    let c = &r.counts;
    print_findings(
        PROG,
        mode,
        &r.findings,
        report.summary,
        c,
        &format!(
            "{} transcript(s) checked: {} error(s), {} warning(s)",
            c.files, c.errors, c.warnings
        ),
    )?;
    if c.errors > 0 {
        return Err(Failure::new(
            exit::DATA_ERR,
            format!("{} error-level finding(s)", c.errors),
        ));
    }
    Ok(())
}

fn repair_cmd(
    ctx: &StateContext,
    mode: OutputMode,
    arg: &str,
    trim: bool,
    dry_run: bool,
) -> Result<(), Failure> {
    if trim {
        let r =
            transcript_ops::repair::trim_torn_tail(ctx, arg, dry_run, &mut warning).or_fail()?;
        return print_doc(mode, &r, || {
            text_line(&match r.removed_bytes {
                Some(n) => format!(
                    "{} {n} bytes of a torn last line from {}",
                    if dry_run { "would remove" } else { "removed" },
                    r.path
                ),
                None => format!("{}: no torn last line", r.path),
            })
        });
    }
    let r = transcript_ops::repair::repair(ctx, arg, dry_run, &mut warning).or_fail()?;
    print_doc(mode, &r, || {
        let verb = if dry_run { "would repair" } else { "repaired" };
        let mut t = recovered_line(dry_run, &r.path, r.corrupt_copy.as_deref());
        if r.repaired {
            t.push_str(&text_line(&format!("{verb} {}: {}", r.path, r.summary)));
        } else if !r.header_recovered {
            t.push_str(&text_line(&format!(
                "{}: no changes{}",
                r.path,
                r.report
                    .skipped_reason
                    .as_ref()
                    .map(|x| format!(" ({x})"))
                    .unwrap_or_default()
            )));
        }
        t
    })
}

/// The line saying a header was (or would be) recovered, when a copy was kept.
fn recovered_line(dry_run: bool, path: &str, corrupt_copy: Option<&str>) -> String {
    corrupt_copy.map_or_else(String::new, |c| {
        text_line(&format!(
            "{} header of {path} (copy kept as {c})",
            if dry_run {
                "would recover the"
            } else {
                "recovered the"
            },
        ))
    })
}

/// Prints a library warning as `claw-transcript: warning: …`.
fn warning(message: &str) {
    warn(PROG, message);
}

fn migrate_cmd(
    ctx: &StateContext,
    mode: OutputMode,
    arg: &str,
    dry_run: bool,
) -> Result<(), Failure> {
    let r = transcript_ops::migrate::migrate(ctx, arg, dry_run, &mut warning).or_fail()?;
    print_doc(mode, &r, || {
        let mut t = recovered_line(dry_run, &r.path, r.corrupt_copy.as_deref());
        t.push_str(&text_line(&if r.migrated {
            format!(
                "{} {} from version {} to 3 ({} ids added, {} compactions relinked, {} hookMessage roles renamed)",
                if dry_run { "would migrate" } else { "migrated" },
                r.path,
                r.from_version,
                r.ids_added,
                r.compactions_relinked,
                r.hook_messages_renamed
            )
        } else {
            format!("{}: already version {}", r.path, r.from_version)
        }));
        t
    })
}

#[allow(clippy::too_many_arguments)]
fn append_cmd(
    ctx: &StateContext,
    mode: OutputMode,
    arg: &str,
    role: Option<String>,
    text: Option<String>,
    dedupe: bool,
    dry_run: bool,
) -> Result<(), Failure> {
    let message = match (role, text) {
        (r, Some(t)) => {
            transcript_ops::append::text_message(r.as_deref().unwrap_or("user"), &t, ctx.now_ms)
        }
        (_, None) => {
            let mut s = String::new();
            std::io::stdin()
                .read_to_string(&mut s)
                .map_err(|e| Failure::new(exit::FAILURE, format!("cannot read stdin: {e}")))?;
            jsjson::parse_value(&s).map_err(|e| {
                Failure::new(
                    exit::DATA_ERR,
                    format!(
                        "<stdin>:{}:{}: invalid message JSON: {e}",
                        e.line(),
                        e.column()
                    ),
                )
            })?
        }
    };
    let o = transcript_ops::append::append(ctx, arg, message, dedupe, dry_run, &mut warning)
        .or_fail()?;
    print_doc(mode, &o, || {
        text_line(&if o.outcome.appended {
            format!(
                "{} {} to {}",
                if dry_run { "would append" } else { "appended" },
                o.outcome.message_id,
                o.path
            )
        } else {
            format!(
                "already present: {} (same idempotencyKey)",
                o.outcome.message_id
            )
        })
    })
}

fn lock_cmd(ctx: &StateContext, mode: OutputMode, action: LockAction) -> Result<(), Failure> {
    use transcript_ops::lock_break;
    match action {
        LockAction::Status { session, all } => {
            if session.is_none() && !all {
                return Err(Failure::new(
                    exit::USAGE,
                    "lock status: give SESSION or --all",
                ));
            }
            let found =
                lock_break::lock_status(ctx, session.as_deref(), all, &mut warning).or_fail()?;
            let mut rows = Vec::new();
            let mut text = String::new();
            for l in &found {
                match &l.inspection {
                    None => text.push_str(&text_line(&format!("{}: not locked", l.path.display()))),
                    Some(i) => {
                        text.push_str(&text_line(&locks::lock_line(i)));
                        rows.push(locks::LockReport::of(i));
                    }
                }
            }
            match mode {
                OutputMode::Ndjson => common::emit_each(&rows),
                _ => print_doc(mode, &lock_break::LockStatusReport { locks: rows }, || text),
            }
        }
        LockAction::Break {
            session,
            force,
            dry,
        } => {
            let r = lock_break::break_lock(ctx, &session, force, dry.dry_run, &mut warning)
                .or_fail()?;
            print_doc(mode, &r, || {
                text_line(&if r.dry_run {
                    format!("would remove {}", r.lock_path)
                } else if r.removed {
                    format!("removed {}", r.lock_path)
                } else {
                    format!("{}: changed or vanished meanwhile; left alone", r.lock_path)
                })
            })
        }
    }
}
