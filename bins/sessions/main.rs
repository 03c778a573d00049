//! `claw-sessions`: list, show, patch, reset, delete, resolve and police the entries of
//! an OpenClaw session store (`sessions.json`), offline.

use clawstate::install::context::StateContext;
use clawstate::ops::delegation;
use clawstate_cli as common;
use clawstate_cli::findings_cli;

use std::io::{IsTerminal, Read};

use clap::{Parser, Subcommand};
use clawstate::exit;
use clawstate::js;
use clawstate::ops::session_ops::{self, WriteOptions};
use clawstate::ops::session_report;
use clawstate::report::terminal_text::escape_text;
use clawstate::store::session_list::{self as listing, ListOptions};
use clawstate::store::store_lock::Waiting;
use common::{
    note, out, run_main, text_line, warn, Failure, GlobalArgs, ListMode, OrFail, OutputMode,
    StoreWaitArgs,
};
use serde_json::{Map, Value};

const PROG: &str = "claw-sessions";

/// Read and maintain an OpenClaw session store offline.
///
/// Without a command, lists sessions like `openclaw sessions`.
///
/// Writers of one store (patch, reset, delete, cleanup --enforce, claw-compact) exclude each
/// other with a lock on the store's directory, whatever their environment; a writer waits
/// up to --wait SECS (default 60) for another, then exits 75 naming the store.
///
/// While a live gateway owns the state directory, patch, reset, delete and cleanup --enforce
/// go through its WebSocket RPC (sessions.patch, .reset, .delete, .cleanup) with the token
/// of OPENCLAW_GATEWAY_TOKEN or gateway.auth.token, and `--json` adds "via": "gateway";
/// they never fall back to writing the live store. --offline writes offline anyway (with a
/// warning), --via-gateway insists on the gateway; `list --live` asks sessions.list.
///
/// Exit codes: 0 ok, 1 other failure, 2 usage, 3 not found, 65 malformed input
/// (store, config, patch), 73 cannot write, 75 busy (store or transcript lock held, a live
/// gateway that cannot be reached or went away, or one that owns the state directory for
/// a command it cannot do, like relocate: pass --offline to write anyway), 77 the gateway
/// refused the credentials (nothing was written). A `reset`
/// or `delete` whose state-database update fails keeps its store change and still exits
/// non-zero with that failure's code (65 for a state database with planted triggers or
/// views, 73 when it cannot be written, 75 when it is busy), saying what was left.
#[derive(Debug, Parser)]
#[command(name = "claw-sessions", version)]
struct Cli {
    #[command(flatten)]
    global: GlobalArgs,
    /// The listing's options work without `list` too (`claw-sessions --limit 2`), as
    /// `openclaw sessions --limit 2` does.
    #[command(flatten)]
    list: ListArgs,
    #[command(subcommand)]
    command: Option<Command>,
}

/// Options of mutating commands.
#[derive(Debug, Clone, clap::Args)]
struct WriteArgs {
    /// Show what would change; write nothing.
    #[arg(long)]
    dry_run: bool,
    #[command(flatten)]
    wait: StoreWaitArgs,
}

impl WriteArgs {
    fn options(&self) -> WriteOptions {
        WriteOptions {
            dry_run: self.dry_run,
            wait: self.wait.policy(waiting),
        }
    }
}

#[derive(Debug, Clone, Default, clap::Args)]
struct ListArgs {
    /// Only sessions updated within the last MIN minutes.
    #[arg(long, value_name = "MIN")]
    active: Option<String>,
    /// At most N rows (default 100), or `all`.
    #[arg(long, value_name = "N|all")]
    limit: Option<String>,
    /// Only these kinds (comma-separated): the Kind column's direct, spawn-child, group,
    /// global, cron, unknown, or the gateway tool's main, group, cron, hook, node, other.
    #[arg(long, value_name = "KINDS", value_delimiter = ',')]
    kinds: Vec<String>,
    /// Ask the running gateway (`sessions.list`, its in-memory view) instead of reading the store.
    #[arg(long)]
    live: bool,
    /// Accepted for `openclaw sessions --verbose`; the listing is the same.
    #[arg(long, hide = true)]
    verbose: bool,
    /// Only sessions not updated for at least DURATION (`7d`, `12h`; a bare number is days).
    #[arg(long, value_name = "DURATION")]
    older_than: Option<String>,
    /// Row order before --limit: updated (newest first, the default), size (largest
    /// transcript first) or tokens (most totalTokens first).
    #[arg(long, value_name = "ORDER")]
    sort: Option<String>,
}

impl ListArgs {
    /// Whether any listing option was given.
    fn given(&self) -> bool {
        self.active.is_some()
            || self.limit.is_some()
            || !self.kinds.is_empty()
            || self.verbose
            || self.live
            || self.older_than.is_some()
            || self.sort.is_some()
    }

    /// These options, with `outer`'s (given before `list`) where these have none.
    fn or(self, outer: ListArgs) -> ListArgs {
        ListArgs {
            active: self.active.or(outer.active),
            limit: self.limit.or(outer.limit),
            kinds: if self.kinds.is_empty() {
                outer.kinds
            } else {
                self.kinds
            },
            verbose: self.verbose || outer.verbose,
            live: self.live || outer.live,
            older_than: self.older_than.or(outer.older_than),
            sort: self.sort.or(outer.sort),
        }
    }
}

#[derive(Debug, Subcommand)]
enum Command {
    /// List sessions, newest first (the envelope of `openclaw sessions --json`).
    ///
    /// --json rows are the gateway's; the table and --ndjson rows add the transcript's
    /// path and size (`transcriptPath`, `transcriptBytes`).
    List(ListArgs),
    /// Show one entry (by session key or sessionId) and its transcript path.
    Show {
        /// Session key (`main`, `agent:work:telegram:group:1`, …) or sessionId.
        key: String,
    },
    /// Change fields of entries: --set FIELD=JSON, --unset FIELD, or --merge - (RFC 7386 patch on stdin).
    ///
    /// Several keys (or --stdin) get the same patch: every key is found first, each store
    /// is written once; a missing key writes nothing (exit 3).
    Patch {
        /// Session keys or sessionIds.
        keys: Vec<String>,
        /// Also read keys from stdin, one per line.
        #[arg(long)]
        stdin: bool,
        /// Set a field to a JSON value (a bare word is taken as a string); dots reach into objects.
        #[arg(long = "set", value_name = "FIELD=JSON")]
        set: Vec<String>,
        /// Remove a field (dots reach into objects).
        #[arg(long = "unset", value_name = "FIELD")]
        unset: Vec<String>,
        /// Read an RFC 7386 JSON merge patch from FILE (`-` for stdin).
        #[arg(long, value_name = "FILE")]
        merge: Option<String>,
        #[command(flatten)]
        write: WriteArgs,
    },
    /// Start a new session for a key, as the gateway's sessions.reset does on disk.
    Reset {
        /// Session key or sessionId.
        key: String,
        #[command(flatten)]
        write: WriteArgs,
    },
    /// Remove entries; archive their transcripts as .deleted.<ts> unless shared.
    Delete {
        /// Session keys or sessionIds.
        keys: Vec<String>,
        /// Also read keys from stdin, one per line.
        #[arg(long)]
        stdin: bool,
        #[command(flatten)]
        write: WriteArgs,
    },
    /// Point the entries of a moved or restored state dir back at it.
    ///
    /// Every absolute sessionFile that still leads into the old place is rewritten to the same file here,
    /// where that file exists (one atomic store write under the store lock).
    ///
    /// The gateway follows an absolute `…/agents/<id>/sessions/<file>` wherever it points,
    /// so after a move it keeps reading (and appending to) the old copy. clawstate reads
    /// such a transcript with a warning and refuses to write it; `check --all` reports it
    /// (`foreign-session-file`).
    Relocate {
        #[command(flatten)]
        write: WriteArgs,
    },
    /// Undo an archive: bring back a .deleted.<ts> / .reset.<ts> transcript.
    ///
    /// Renames the archive back and, when the store has no entry for its session, add one (--key KEY; an archive does not
    /// record its key). A KEY of the store restores the newest archive of its session
    /// when its transcript is missing. Try --dry-run first.
    Restore {
        /// An archive (a path, or a name in the sessions directory), or a session key.
        target: String,
        /// The key of the entry to add when the store has none for the archive's session.
        #[arg(long, value_name = "KEY")]
        key: Option<String>,
        #[command(flatten)]
        write: WriteArgs,
    },
    /// Whether a session is still fresh under the config's reset policy.
    Resolve {
        /// Session key or sessionId.
        key: String,
    },
    /// The sendPolicy decision for a session, and the rule that made it.
    Policy {
        /// Session key or sessionId (an unknown key is evaluated from the key alone).
        key: String,
        /// The channel of the send (default: from the entry or key).
        #[arg(long)]
        channel: Option<String>,
        /// The chat type of the send: direct, group, channel.
        #[arg(long)]
        chat_type: Option<String>,
    },
    /// Session-store maintenance, exactly as `openclaw sessions cleanup`.
    ///
    /// Prunes stale entries, caps the count, enforces the disk budget, archives and prunes
    /// files.
    ///
    /// Silent on success unless something changed (for cron); --verbose logs every file
    /// (and, as at a terminal, says when it waits for another clawstate writer).
    ///
    /// Unlike the gateway, which renames and deletes files before it writes the store,
    /// --enforce decides everything first, records the planned transcript renames in
    /// <store>.pending-archives.json, writes the store, and only then renames and deletes
    /// files: a failed store write (a full disk) changes nothing, and a run killed after
    /// the write leaves a store that references no archived file; the next run finishes
    /// the journal's renames.
    Cleanup(CleanupArgs),
    /// One health check of the state directory, read only.
    ///
    /// Covers the store (parse, drift from
    /// what the next save writes), transcripts and write locks (`claw-transcript check
    /// --all`), the store lock, the journals of an interrupted cleanup, the disk budget
    /// against the config, the state database (integrity, schema, planted objects,
    /// signal tables) and a live gateway. Progress on stderr at a terminal.
    ///
    /// Exit 0 healthy (information only), 1 warnings, 65 errors (damaged), counting the
    /// findings reported (--severity).
    Doctor {
        #[command(flatten)]
        report: findings_cli::FindingArgs,
    },
    /// Where the bytes of the agent database are (the 2026.8+ layout).
    ///
    /// Per agent and per session: events and their bytes as stored and decoded, the largest events, inline
    /// base64 images, archives, the WAL's and the FTS index's share.
    Du {
        /// How many sessions (text) and largest events to show.
        #[arg(long, default_value_t = 10)]
        top: usize,
    },
}

/// Options of `cleanup` (the same names and meaning as `openclaw sessions cleanup`).
#[derive(Debug, Clone, clap::Args)]
struct CleanupArgs {
    /// Preview what would be pruned or capped; write nothing.
    #[arg(long)]
    dry_run: bool,
    /// Apply maintenance even when session.maintenance.mode is "warn".
    #[arg(long)]
    enforce: bool,
    /// Remove entries whose transcript is missing or holds no message; repair stale
    /// generated sessionFile paths.
    #[arg(long)]
    fix_missing: bool,
    /// With session.dmScope "main", retire the agent's per-peer direct-message entries.
    #[arg(long)]
    fix_dm_scope: bool,
    /// Never prune, cap, evict or retire this session key.
    #[arg(long, value_name = "KEY")]
    active_key: Option<String>,
    /// Log every file archived or removed (stderr) and print the per-key action table
    /// (with --ndjson, one row per entry and file changed before each store's summary, as
    /// --dry-run --ndjson prints what it would change).
    #[arg(long, short = 'v')]
    verbose: bool,
    #[command(flatten)]
    wait: StoreWaitArgs,
}

fn main() -> std::process::ExitCode {
    if common::maybe_print_man::<Cli>() {
        return std::process::ExitCode::SUCCESS;
    }
    let cli = Cli::parse();
    run_main(PROG, || run(cli))
}

fn run(cli: Cli) -> Result<(), Failure> {
    if cli.list.given() && !matches!(cli.command, None | Some(Command::List(_))) {
        return Err(Failure::new(
            exit::USAGE,
            "--active, --limit and --kinds are options of the listing (claw-sessions [list])",
        ));
    }
    let ctx = cli.global.context(PROG)?;
    let mode = cli.global.output();
    match cli.command {
        None => list(&ctx, mode, cli.list),
        Some(Command::List(a)) => list(&ctx, mode, a.or(cli.list)),
        Some(Command::Show { key }) => show(&ctx, mode, &key),
        Some(Command::Patch {
            mut keys,
            stdin,
            set,
            unset,
            merge,
            write,
        }) => {
            if stdin && merge.as_deref() == Some("-") {
                return Err(Failure::new(
                    exit::USAGE,
                    "patch: --stdin and --merge - both read stdin; give the merge patch as a file",
                ));
            }
            let patch = build_patch(&set, &unset, merge.as_deref())?;
            if stdin {
                keys.extend(read_stdin_keys()?);
            }
            match keys.as_slice() {
                [] => Err(Failure::new(
                    exit::USAGE,
                    "patch: give at least one KEY (or --stdin)",
                )),
                [key] => patch_cmd(&ctx, mode, key, &patch, write.options()),
                _ => patch_batch(&ctx, mode, &keys, &patch, write.options()),
            }
        }
        Some(Command::Reset { key, write }) => reset(&ctx, mode, &key, write.options()),
        Some(Command::Relocate { write }) => relocate(&ctx, mode, write.options()),
        Some(Command::Delete {
            mut keys,
            stdin,
            write,
        }) => {
            if stdin {
                keys.extend(read_stdin_keys()?);
            }
            if keys.is_empty() {
                return Err(Failure::new(
                    exit::USAGE,
                    "delete: give at least one KEY (or --stdin)",
                ));
            }
            delete(&ctx, mode, &keys, write.options())
        }
        Some(Command::Restore { target, key, write }) => {
            restore(&ctx, mode, &target, key.as_deref(), write.options())
        }
        Some(Command::Resolve { key }) => resolve(&ctx, mode, &key),
        Some(Command::Policy {
            key,
            channel,
            chat_type,
        }) => policy(&ctx, mode, &key, channel.as_deref(), chat_type.as_deref()),
        Some(Command::Cleanup(a)) => cleanup(&ctx, mode, &a),
        Some(Command::Doctor { report }) => doctor(&ctx, mode, &report),
        Some(Command::Du { top }) => du(&ctx, mode, top),
    }
}

fn du(ctx: &StateContext, mode: OutputMode, top: usize) -> Result<(), Failure> {
    use clawstate::agent_db::{du, layout};
    let mut docs = Vec::new();
    let mut text = String::new();
    for t in ctx.targets().or_fail()? {
        let Some(db) = layout::db_for_store(&t.store_path) else {
            warn(
                PROG,
                &format!(
                    "agent {}: sessions are in files ({}), not an agent database; `du` measures the database layout",
                    t.agent_id,
                    t.store_path.display()
                ),
            );
            continue;
        };
        let u = du::usage(&db, &t.store_path, top).map_err(|e| Failure::from_error(PROG, &e))?;
        docs.push(du::to_json(&t.agent_id, &u));
        text.push_str(&du::render_text(&t.agent_id, &u, top));
    }
    if docs.is_empty() {
        return Err(Failure::new(
            exit::NOT_FOUND,
            "du: no agent database (the 2026.8+ layout) among the selected agents",
        ));
    }
    match mode {
        OutputMode::Json => print_data(mode, &session_report::DuReport { agents: docs }),
        OutputMode::Ndjson => common::emit_lines(&docs),
        OutputMode::Text => out(&text),
    }
}

/// Says on stderr that a write waits for another clawstate writer of its store.
fn waiting(w: &Waiting<'_>) {
    note(PROG, &w.to_string());
}

/// Prints a result as data: pretty for `--json`, one line for `--ndjson`.
fn print_data<T: common::Serialize + ?Sized>(mode: OutputMode, v: &T) -> Result<(), Failure> {
    common::emit(mode, v, String::new)
}

/// Prints the answer of a write the gateway did (`--json`: the offline shape plus `"via"`),
/// or fails with its exit code (77 refused, 75 unreachable); never falls back to offline.
fn delegated(
    mode: OutputMode,
    r: Result<Value, delegation::DelegationError>,
    text: impl Fn(&Value) -> String,
) -> Result<(), Failure> {
    let v = r.map_err(|e| Failure::from_error(PROG, &e))?;
    common::emit(mode, &v, || escape_text(&text(&v)).into_owned())
}

fn print_warning(w: Option<String>) {
    if let Some(w) = w {
        warn(PROG, &w);
    }
}

fn list(ctx: &StateContext, mode: OutputMode, a: ListArgs) -> Result<(), Failure> {
    if a.live {
        let number = |s: Option<&str>| {
            s.and_then(|s| s.trim().parse::<u64>().ok())
                .filter(|n| *n > 0)
        };
        let limit =
            number(a.limit.as_deref()).or((a.limit.as_deref() != Some("all")).then_some(100));
        let d = delegation::live_reader(ctx);
        return delegated(
            mode,
            delegation::list(&d, ctx, limit, number(a.active.as_deref())),
            |v| {
                let mut t = String::new();
                for s in v["sessions"].as_array().into_iter().flatten() {
                    t.push_str(&format!(
                        "{}\t{}\n",
                        s["key"].as_str().unwrap_or(""),
                        s["sessionId"].as_str().unwrap_or("")
                    ));
                }
                t
            },
        );
    }
    let opts = ListOptions::parse(a.active.as_deref(), a.limit.as_deref(), &a.kinds)
        .and_then(|o| o.with_selection(a.older_than.as_deref(), a.sort.as_deref()))
        .map_err(|m| Failure::new(exit::USAGE, m))?;
    let targets = ctx.targets().or_fail()?;
    print_warning(ctx.check_present(&targets).or_fail()?);
    let result = listing::list_sessions(ctx, &targets, &opts).or_fail()?;
    for w in &result.warnings {
        warn(PROG, w);
    }
    match common::list_mode(mode) {
        ListMode::Array => common::stream(|w| listing::write_envelope_json(w, &result)),
        ListMode::Lines => common::stream(|w| listing::write_ndjson(w, &result)),
        ListMode::Table => {
            common::out_styled(&listing::render_table(&result, &common::table_layout()))
        }
    }
}

fn show(ctx: &StateContext, mode: OutputMode, key: &str) -> Result<(), Failure> {
    let s = clawstate::store::entry_lookup::show(ctx, key).or_fail()?;
    // The agent-DB layout: the store and the transcript are the database (the copy read
    // from it is private to this run).
    let doc = session_report::ShowReport::of(&s);
    let store_path = s
        .agent_db
        .clone()
        .unwrap_or_else(|| s.target.store_path.clone());
    // Outside this state dir (a moved or restored one): the gateway reads it there.
    if let Some(f) = &s.transcript_foreign {
        warn(
            PROG,
            &format!(
                "{}: the transcript {} lies outside this state dir (the gateway reads it there; `claw-sessions relocate` points the entry at {})",
                s.matched.store_key,
                f.file.display(),
                f.here.display()
            ),
        );
    }
    match mode {
        OutputMode::Json | OutputMode::Ndjson => print_data(mode, &doc),
        OutputMode::Text => {
            let mut t = text_line(&format!("Key:        {}", s.matched.store_key));
            t.push_str(&text_line(&format!("Agent:      {}", s.target.agent_id)));
            t.push_str(&text_line(&format!("Store:      {}", store_path.display())));
            t.push_str(&text_line(&match &s.transcript {
                Ok(_) if s.agent_db.is_some() => {
                    format!("Transcript: transcript_events of {}", store_path.display())
                }
                Ok(p) => format!(
                    "Transcript: {}{}",
                    p.path().display(),
                    if s.transcript_exists {
                        ""
                    } else {
                        " (missing)"
                    }
                ),
                Err(e) => format!("Transcript: unresolvable ({e})"),
            }));
            t.push_str(&escape_text(&clawstate::js::jsjson::to_string_pretty(
                &Value::Object(s.entry.clone()),
            )));
            t.push('\n');
            out(&t)
        }
    }?;
    // The entry is shown; a transcript path that is never followed still fails the command.
    match &s.transcript {
        Err(e) if s.transcript_refused => Err(Failure::new(
            exit::DATA_ERR,
            format!("session {:?}: {e}", s.matched.store_key),
        )),
        _ => Ok(()),
    }
}

/// Sets `value` at a dotted `path` inside a merge patch object.
fn put_path(patch: &mut Map<String, Value>, path: &str, value: Value) -> Result<(), Failure> {
    let parts: Vec<&str> = path.split('.').collect();
    if parts.iter().any(|p| p.is_empty()) {
        return Err(Failure::new(
            exit::USAGE,
            format!("invalid field path {path:?}"),
        ));
    }
    let mut cur = patch;
    for p in &parts[..parts.len() - 1] {
        let slot = cur
            .entry(p.to_string())
            .or_insert_with(|| Value::Object(Map::new()));
        if !slot.is_object() {
            return Err(Failure::new(
                exit::USAGE,
                format!("field {p:?} is set twice in {path:?}"),
            ));
        }
        cur = slot
            .as_object_mut()
            .ok_or_else(|| Failure::new(exit::USAGE, "bad path"))?;
    }
    cur.insert(parts[parts.len() - 1].to_string(), value);
    Ok(())
}

fn build_patch(set: &[String], unset: &[String], merge: Option<&str>) -> Result<Value, Failure> {
    if set.is_empty() && unset.is_empty() && merge.is_none() {
        return Err(Failure::new(
            exit::USAGE,
            "patch: give --set FIELD=JSON, --unset FIELD or --merge FILE",
        ));
    }
    let mut patch = Map::new();
    if let Some(src) = merge {
        let text = if src == "-" {
            let mut s = String::new();
            std::io::stdin()
                .read_to_string(&mut s)
                .map_err(|e| Failure::new(exit::FAILURE, format!("cannot read stdin: {e}")))?;
            s
        } else {
            std::fs::read_to_string(src)
                .map_err(|e| Failure::new(exit::NOT_FOUND, format!("{src}: {e}")))?
        };
        let name = if src == "-" { "<stdin>" } else { src };
        let v: Value = clawstate::js::jsjson::parse_value(&text).map_err(|e| {
            Failure::new(
                exit::DATA_ERR,
                format!(
                    "{name}:{}:{}: invalid merge patch: {e}",
                    e.line(),
                    e.column()
                ),
            )
        })?;
        match v {
            Value::Object(m) => patch = m,
            _ => {
                return Err(Failure::new(
                    exit::DATA_ERR,
                    format!("{name}: a merge patch for an entry must be a JSON object"),
                ))
            }
        }
    }
    for s in set {
        let (field, raw) = s.split_once('=').ok_or_else(|| {
            Failure::new(exit::USAGE, format!("--set {s:?}: expected FIELD=JSON"))
        })?;
        let value = clawstate::js::jsjson::parse_value(raw)
            .unwrap_or_else(|_| Value::String(raw.to_string()));
        put_path(&mut patch, field.trim(), value)?;
    }
    for u in unset {
        put_path(&mut patch, u.trim(), Value::Null)?;
    }
    Ok(Value::Object(patch))
}

fn patch_cmd(
    ctx: &StateContext,
    mode: OutputMode,
    key: &str,
    patch: &Value,
    w: WriteOptions,
) -> Result<(), Failure> {
    if let Some(d) = delegation::route(ctx, w.dry_run) {
        return delegated(mode, delegation::patch(&d, ctx, key, patch), |v| {
            let entry = clawstate::js::jsjson::to_string_pretty(&v["entry"]);
            format!(
                "patched {} through the gateway\n{entry}\n",
                v["key"].as_str().unwrap_or("")
            )
        });
    }
    print_warning(if w.dry_run {
        None
    } else {
        ctx.check_live_gateway().ok().flatten()
    });
    let r = session_ops::patch(ctx, key, patch, w).or_fail()?;
    match mode {
        OutputMode::Text => {
            let verb = if w.dry_run {
                "would patch"
            } else if r.written {
                "patched"
            } else {
                "unchanged"
            };
            let mut t = text_line(&format!(
                "{verb} {} in {}",
                r.key,
                r.target.store_path.display()
            ));
            t.push_str(&escape_text(&clawstate::js::jsjson::to_string_pretty(
                &Value::Object(r.after.clone()),
            )));
            t.push('\n');
            if w.dry_run {
                t.push_str(&clawstate::store::save_diff::render_text(
                    &r.changes, &r.key,
                ));
            }
            out(&t)
        }
        _ => print_data(mode, &session_report::PatchReport::of(&r, w.dry_run)),
    }
}

/// The keys of `--stdin`: one per line, blank lines skipped.
fn read_stdin_keys() -> Result<Vec<String>, Failure> {
    let mut s = String::new();
    std::io::stdin()
        .read_to_string(&mut s)
        .map_err(|e| Failure::new(exit::FAILURE, format!("cannot read stdin: {e}")))?;
    Ok(s.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(String::from)
        .collect())
}

/// `patch KEY KEY…`: one patch for several entries, each store written once.
fn patch_batch(
    ctx: &StateContext,
    mode: OutputMode,
    keys: &[String],
    patch: &Value,
    w: WriteOptions,
) -> Result<(), Failure> {
    if let Some(d) = delegation::route(ctx, w.dry_run) {
        // The gateway's sessions.patch changes one entry per call: one call per key would
        // leave a half-patched batch when a later key fails, so a batch is never sent.
        let e = d.not_delegable(
            "a patch of several keys",
            "the gateway's sessions.patch changes one entry per call, so a batch could not be all-or-nothing (patch one key at a time through it)",
        );
        return Err(Failure::from_error(PROG, &e));
    }
    print_warning(if w.dry_run {
        None
    } else {
        ctx.check_live_gateway().ok().flatten()
    });
    let b = session_ops::patch_many(ctx, keys, patch, w).or_fail()?;
    let several = b.stores.len() > 1;
    let report = session_report::PatchBatchReport::of(&b, w.dry_run);
    match mode {
        OutputMode::Text => {
            let mut t = String::new();
            for e in &b.entries {
                let verb = if w.dry_run {
                    "would patch"
                } else if b.stores[e.store].written {
                    "patched"
                } else {
                    "unchanged"
                };
                t.push_str(&text_line(&format!(
                    "{verb} {} in {}",
                    e.key,
                    b.stores[e.store].target.store_path.display()
                )));
            }
            if w.dry_run {
                for s in &b.stores {
                    if several {
                        t.push_str(&text_line(&format!("{}:", s.target.store_path.display())));
                    }
                    t.push_str(&render_batch_diff(&s.changes, &b.entries));
                }
            }
            out(&t)
        }
        OutputMode::Ndjson => common::emit_each(&report.patched),
        OutputMode::Json => print_data(mode, &report),
    }
}

/// A store's dry-run diff, each entry marked as the patch's or the save's normalisation.
fn render_batch_diff(
    changes: &[clawstate::store::save_diff::EntryDiff],
    entries: &[session_ops::PatchedEntry],
) -> String {
    let patched: std::collections::HashSet<&str> = entries.iter().map(|e| e.key.as_str()).collect();
    clawstate::store::save_diff::render_text_for(changes, &|k| patched.contains(k))
}

fn reset(ctx: &StateContext, mode: OutputMode, key: &str, w: WriteOptions) -> Result<(), Failure> {
    if let Some(d) = delegation::route(ctx, w.dry_run) {
        return delegated(mode, delegation::reset(&d, ctx, key), |v| {
            let id = |k: &str| v[k].as_str().unwrap_or("(none)").to_string();
            format!(
                "reset {} through the gateway: {} -> {}\n",
                id("key"),
                id("previousSessionId"),
                id("sessionId")
            )
        });
    }
    print_warning(if w.dry_run {
        None
    } else {
        ctx.check_live_gateway().ok().flatten()
    });
    let r = session_ops::reset(ctx, key, w).or_fail()?;
    // The reset stands, but what the state database kept makes the command fail (after
    // its report).
    let left = match &r.signal_cursors {
        Some(Err(e)) => Some(Failure::from_error(PROG, e)),
        _ => None,
    };
    let printed = match mode {
        OutputMode::Text => {
            let would = if w.dry_run { "would " } else { "" };
            let mut t = text_line(&format!(
                "{would}reset {}: {} -> {}",
                r.key,
                r.previous_session_id.as_deref().unwrap_or("(none)"),
                r.entry
                    .get("sessionId")
                    .and_then(Value::as_str)
                    .unwrap_or(""),
            ));
            t.push_str(&text_line(&format!(
                "{would}create transcript {}",
                r.session_file.display()
            )));
            for (a, b) in &r.archived {
                t.push_str(&text_line(&format!(
                    "{would}archive {} -> {}",
                    a.display(),
                    b.display()
                )));
            }
            if let Some(Ok(n)) = &r.signal_cursors {
                t.push_str(&format!("{would}reset {n} watcher cursor(s)\n"));
            }
            out(&t)
        }
        _ => print_data(mode, &session_report::ResetReport::of(&r, w.dry_run)),
    };
    printed?;
    left.map_or(Ok(()), Err)
}

fn delete(
    ctx: &StateContext,
    mode: OutputMode,
    keys: &[String],
    w: WriteOptions,
) -> Result<(), Failure> {
    if let Some(d) = delegation::route(ctx, w.dry_run) {
        return delegated(mode, delegation::delete(&d, ctx, keys), |v| {
            let mut t = String::new();
            for r in v["deleted"].as_array().into_iter().flatten() {
                t.push_str(&format!(
                    "delete {} through the gateway\n",
                    r["key"].as_str().unwrap_or("")
                ));
                for a in r["archived"].as_array().into_iter().flatten() {
                    t.push_str(&format!(
                        "  archived -> {}\n",
                        a["to"].as_str().unwrap_or("")
                    ));
                }
            }
            t
        });
    }
    print_warning(if w.dry_run {
        None
    } else {
        ctx.check_live_gateway().ok().flatten()
    });
    let (targets, results) = session_ops::delete(ctx, keys, w).or_fail()?;
    // The deletions stand, but what the state database kept makes the command fail (after
    // its report): one line per session left, the first one's exit code.
    let left: Vec<_> = results
        .iter()
        .filter_map(|r| match &r.signal_state {
            Some(Err(e)) => Some(e),
            _ => None,
        })
        .collect();
    let left = match left.as_slice() {
        [] => None,
        [only] => Some(Failure::from_error(PROG, *only)),
        [first, ..] => {
            for e in &left {
                warn(PROG, &e.to_string());
            }
            Some(Failure::new(
                clawstate::exit::ExitCode::exit_code(*first),
                format!(
                    "the signal state of {} deleted sessions was left in the state database (see above)",
                    left.len()
                ),
            ))
        }
    };
    let report = session_report::DeleteReport::of(&targets, &results, w.dry_run);
    let printed = match mode {
        OutputMode::Json => print_data(mode, &report),
        OutputMode::Ndjson => common::emit_each(&report.deleted),
        OutputMode::Text => {
            let would = if w.dry_run { "would " } else { "" };
            let mut t = String::new();
            for r in &results {
                t.push_str(&text_line(&format!("{would}delete {}", r.key)));
                for (a, b) in &r.archived {
                    t.push_str(&text_line(&format!(
                        "  {would}archive {} -> {}",
                        a.display(),
                        b.display()
                    )));
                }
                for p in &r.removed_sidecars {
                    t.push_str(&text_line(&format!("  {would}remove {}", p.display())));
                }
                if r.transcript_shared {
                    t.push_str("  transcript kept: another entry shares this sessionId\n");
                }
            }
            out(&t)
        }
    };
    printed?;
    left.map_or(Ok(()), Err)
}

fn relocate(ctx: &StateContext, mode: OutputMode, w: WriteOptions) -> Result<(), Failure> {
    delegation::refuse_unless_offline(
        ctx,
        w.dry_run,
        "relocate",
        "the gateway has no method that rewrites sessionFile paths",
    )
    .map_err(|e| Failure::from_error(PROG, &e))?;
    print_warning(if w.dry_run {
        None
    } else {
        ctx.check_live_gateway().ok().flatten()
    });
    let outcomes = session_ops::relocate(ctx, w).or_fail()?;
    let report = session_report::RelocateReport {
        dry_run: w.dry_run,
        stores: outcomes
            .iter()
            .map(session_report::RelocatedStore::of)
            .collect(),
    };
    match mode {
        OutputMode::Json => print_data(mode, &report),
        OutputMode::Ndjson => common::emit_each(&report.stores),
        OutputMode::Text => {
            let would = if w.dry_run { "would " } else { "" };
            let mut t = String::new();
            for o in &outcomes {
                for r in &o.relocated {
                    t.push_str(&text_line(&format!(
                        "{would}relocate {}: {} -> {}",
                        r.key, r.from, r.to
                    )));
                }
                for l in &o.left {
                    t.push_str(&text_line(&format!(
                        "left {}: {} ({}: {})",
                        l.key,
                        l.session_file,
                        l.here.display(),
                        l.why
                    )));
                }
            }
            if t.is_empty() {
                t.push_str("nothing to relocate\n");
            }
            out(&t)
        }
    }
}

fn restore(
    ctx: &StateContext,
    mode: OutputMode,
    target: &str,
    key: Option<&str>,
    w: WriteOptions,
) -> Result<(), Failure> {
    print_warning(if w.dry_run {
        None
    } else {
        ctx.check_live_gateway().ok().flatten()
    });
    let r = clawstate::ops::session_restore::restore(ctx, target, key, w).or_fail()?;
    match mode {
        OutputMode::Text => {
            let would = if w.dry_run { "would " } else { "" };
            let mut t = text_line(&format!(
                "{would}restore {} -> {}",
                r.archive.display(),
                r.restored.display()
            ));
            t.push_str(&text_line(&match &r.added_entry {
                Some(_) => format!("{would}add entry {} (session {})", r.key, r.session_id),
                None => format!("entry {} already holds session {}", r.key, r.session_id),
            }));
            out(&t)
        }
        _ => print_data(mode, &session_report::RestoreReport::of(&r, w.dry_run)),
    }
}

fn resolve(ctx: &StateContext, mode: OutputMode, key: &str) -> Result<(), Failure> {
    let r = session_ops::resolve(ctx, key).or_fail()?;
    let f = &r.freshness;
    let iso = |v: Option<i64>| v.map(js::to_iso_string);
    let doc = session_report::ResolveReport::of(&r, ctx.now_ms);
    match mode {
        OutputMode::Text => out(&format!(
            "{}{}  daily reset at: {}\n  idle expires at: {}\n",
            text_line(&format!(
                "{}: {}{}",
                r.key,
                if f.fresh { "fresh" } else { "stale" },
                match (r.exemption, f.stale_reason) {
                    (Some(_), _) => " (its provider owns a CLI session: no policy is configured, so the implicit reset does not apply)".to_string(),
                    (None, Some(s)) => format!(" ({s})"),
                    (None, None) => String::new(),
                },
            )),
            text_line(&format!(
                "  policy: {}",
                clawstate::js::jsjson::to_string_compact(&common::document(&doc.policy)?)
            )),
            iso(f.daily_reset_at).unwrap_or_else(|| "-".into()),
            iso(f.idle_expires_at).unwrap_or_else(|| "-".into()),
        )),
        _ => print_data(mode, &doc),
    }
}

fn policy(
    ctx: &StateContext,
    mode: OutputMode,
    key: &str,
    channel: Option<&str>,
    chat_type: Option<&str>,
) -> Result<(), Failure> {
    let found = clawstate::store::entry_lookup::show(ctx, key);
    let (store_key, entry) = match &found {
        Ok(s) => (s.matched.store_key.clone(), Some(&s.entry)),
        Err(e) if clawstate::exit::ExitCode::exit_code(e) == exit::NOT_FOUND => (
            clawstate::session::session_key::resolve_store_key(key, &ctx.key_context()),
            None,
        ),
        Err(_) => return found.map(|_| ()).or_fail(),
    };
    // An agent-database entry keeps its channel in `delivery` (2026.9.6's import folds it).
    let channels = match &found {
        Ok(s) if s.agent_db.is_some() => clawstate::session::send_policy::EntryChannels::Delivery,
        _ => clawstate::session::send_policy::EntryChannels::Legacy,
    };
    let d = clawstate::session::send_policy::resolve_send_policy(
        &store_key,
        entry,
        channels,
        ctx.config.session(),
        channel,
        chat_type,
    );
    match mode {
        OutputMode::Text => out(&text_line(&format!(
            "{}: {} ({})",
            store_key,
            d.decision,
            describe(d.reason)
        ))),
        _ => print_data(
            mode,
            &session_report::SendPolicyReport {
                key: store_key,
                entry_found: entry.is_some(),
                decision: d.decision,
                decided_by: describe(d.reason),
            },
        ),
    }
}

fn describe(d: clawstate::session::send_policy::DecidedBy) -> String {
    use clawstate::session::send_policy::DecidedBy::*;
    match d {
        EntryOverride => "entry sendPolicy override".into(),
        NoPolicy => "no session.sendPolicy configured".into(),
        AmbiguousKey => "ambiguous key shape".into(),
        DenyRule(i) => format!("session.sendPolicy.rules[{i}] (deny)"),
        AllowRule(i) => format!("session.sendPolicy.rules[{i}] (allow)"),
        Default => "session.sendPolicy.default".into(),
    }
}

fn doctor(
    ctx: &StateContext,
    mode: OutputMode,
    a: &findings_cli::FindingArgs,
) -> Result<(), Failure> {
    use clawstate::report::finding_report;
    let min = a.min()?;
    let report = {
        let mut progress = findings_cli::TerminalProgress::new(PROG);
        clawstate::ops::doctor::run(ctx, &mut |section, done, total| {
            progress.update(section, done, total)
        })
    };
    let findings = finding_report::at_least(report.findings, min);
    let (errors, warnings, infos) = finding_report::counts(&findings);
    let code = finding_report::exit_code(&findings);
    let head = session_report::DoctorCounts {
        healthy: code == exit::OK,
        stores: report.stores,
        transcripts: report.transcripts,
        errors,
        warnings,
        infos,
    };
    findings_cli::print_findings(
        PROG,
        mode,
        &findings,
        a.summary,
        &head,
        &format!(
            "doctor: {} store(s), {} transcript(s): {errors} error(s), {warnings} warning(s), {infos} info",
            report.stores, report.transcripts
        ),
    )?;
    match code {
        exit::OK => Ok(()),
        exit::DATA_ERR => Err(Failure::new(
            code,
            format!("{errors} error-level finding(s): damaged"),
        )),
        _ => Err(Failure::new(code, format!("{warnings} warning(s)"))),
    }
}

fn cleanup(ctx: &StateContext, mode: OutputMode, a: &CleanupArgs) -> Result<(), Failure> {
    use clawstate::maintenance::{self, files::FileEvent, report};
    if let Some(d) = delegation::route(ctx, a.dry_run) {
        let request = delegation::CleanupRequest {
            enforce: a.enforce,
            fix_missing: a.fix_missing,
            fix_dm_scope: a.fix_dm_scope,
            active_key: a.active_key.clone(),
        };
        return delegated(
            mode,
            delegation::cleanup(&d, ctx, &request),
            delegation::cleanup_text,
        );
    }
    let opts = maintenance::CleanupOptions {
        dry_run: a.dry_run,
        enforce: a.enforce,
        fix_missing: a.fix_missing,
        fix_dm_scope: a.fix_dm_scope,
        active_key: a.active_key.clone(),
        // Silent for cron: the wait is announced at a terminal or with --verbose.
        wait: a
            .wait
            .policy(if a.verbose || std::io::stderr().is_terminal() {
                waiting
            } else {
                |_| {}
            }),
        want_rows: mode == OutputMode::Text && (a.dry_run || a.verbose),
        // NDJSON: the plan's rows before each summary (what it would do, or did).
        want_plan: mode == OutputMode::Ndjson && (a.dry_run || a.verbose),
    };
    let verbose = a.verbose;
    let run = maintenance::run_cleanup(ctx, &opts).or_fail()?;
    for w in &run.warnings {
        warn(PROG, w);
    }
    let mut failed = 0;
    for o in &run.stores {
        for e in &o.events {
            match e {
                FileEvent::Failed { path, error } => {
                    failed += 1;
                    warn(PROG, &format!("{}: {error}", path.display()));
                }
                FileEvent::Skipped { path, why } => {
                    warn(PROG, &format!("left alone: {} ({why})", path.display()))
                }
                FileEvent::Archived { from, to } if verbose => note(
                    PROG,
                    &format!("archived {} -> {}", from.display(), to.display()),
                ),
                FileEvent::Removed {
                    path,
                    reason,
                    bytes,
                } if verbose => note(
                    PROG,
                    &format!(
                        "removed {} ({}, {bytes} bytes)",
                        path.display(),
                        reason.as_str()
                    ),
                ),
                _ => {}
            }
        }
    }
    let several = run.stores.len() > 1;
    // Fitted to the terminal as the listing is; printed through `out`, so uncoloured.
    let layout = clawstate::report::text_table::Layout {
        color: false,
        ..common::table_layout()
    };
    match mode {
        OutputMode::Json => out(&run.to_json())?,
        OutputMode::Ndjson => {
            let mut s = String::new();
            for o in &run.stores {
                let rows = o.entry_changes.iter().map(|e| e.to_json());
                let files = o.file_changes.iter().map(|f| f.to_json());
                for row in rows.chain(files).chain([o.summary.to_json()]) {
                    s.push_str(&clawstate::js::jsjson::to_string_compact(&row));
                    s.push('\n');
                }
            }
            out(&s)?
        }
        OutputMode::Text if run.dry_run => {
            let texts: Vec<String> = run
                .stores
                .iter()
                .map(|o| {
                    report::render_dry_run(
                        &o.summary,
                        &o.rows,
                        &ctx.config.root,
                        ctx.now_ms,
                        several,
                        &layout,
                    )
                })
                .collect();
            out(&texts.join("\n"))?
        }
        OutputMode::Text => {
            let shown: Vec<String> = run
                .stores
                .iter()
                .filter(|o| verbose || o.changed())
                .map(|o| {
                    let mut t = report::render_applied(&o.summary, several);
                    if verbose {
                        t.push_str(&report::render_action_table(
                            &o.rows,
                            &ctx.config.root,
                            ctx.now_ms,
                            "Session actions:",
                            &layout,
                        ));
                    }
                    t
                })
                .collect();
            if !shown.is_empty() {
                out(&shown.join("\n"))?
            }
        }
    }
    if failed > 0 {
        return Err(Failure::new(
            exit::CANT_CREATE,
            format!("cleanup: {failed} file(s) could not be archived or removed"),
        ));
    }
    Ok(())
}
