//! `claw-signals`: the durable signal log of the shared state database — record events,
//! list them, answer `changesSince`, read state versions, prune, forget a session.

use clawstate_cli as common;
use clawstate_cli::signals as signals_cli;

use std::io::Read;
use std::time::Instant;

use clap::{Parser, Subcommand};
use clawstate::exit;
use clawstate::install::context::StateContext;
use clawstate::js::duration::{parse_duration_ms, DurationUnit};
use clawstate::report::terminal_text::{escape_line, escape_path};
use clawstate::signals::journal::{self, EventFilter, Recorder};
use clawstate::signals::request::RecordRequest;
use clawstate::signals::retention::{self, PruneLimits};
use clawstate::signals::{presence, Access, Event, RecordInput};
use common::{note, out, run_main, text_line, Failure, GlobalArgs, OrFail, OutputMode};
use serde_json::{json, Value};
use signals_cli::{
    agent_for, iso, list_mode, print_doc, print_line, print_list, print_pretty, resolve_key,
    table_of, DbArgs,
};

const PROG: &str = "claw-signals";

/// Read and write the signal log of an OpenClaw state database.
///
/// The log lives in <stateDir>/state/openclaw.sqlite (override with --db): one row per
/// recorded state change, a head (state version) per session, and the watchers' cursors.
/// Every change is one BEGIN IMMEDIATE transaction with a 5 s busy timeout. While a gateway
/// owns the state dir, writes exit 75 unless --offline (its notice queue lives in its
/// memory and its RPC has no signal-log method; --via-gateway always exits 75). Schemas 15
/// to 18 are written (18 with 2026.9.6's store provenance); a newer one is only read, with
/// a warning naming it. A missing
/// database is created in the canonical schema of the host's release (--schema, else
/// openclaw.json's meta.lastTouchedVersion: 18 for 2026.9.6 and later, else 15), directory
/// 0700, file 0600, WAL; reads of a missing database see an empty log.
///
/// The signal log needs OpenClaw 2026.8 or later: on a 2026.7 host (state schema 1, or no
/// database and a 2026.7 config) nothing is created or changed; record and changes-since
/// exit 65, the other commands see an empty log and say so on stderr.
///
/// Exit codes: 0 ok, 1 other failure, 2 usage, 3 not found (changes-since on an unknown
/// session), 65 malformed input (event, payload, NDJSON line, a database that is not a
/// state database or has a newer schema, a host without the signal log), 73 cannot write,
/// 75 busy (the write lock was held past the 5 s timeout, an external supervisor owns
/// the database, or a live gateway owns the state dir).
#[derive(Debug, Parser)]
#[command(name = "claw-signals", version)]
struct Cli {
    #[command(flatten)]
    global: GlobalArgs,
    #[command(flatten)]
    db: DbArgs,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Clone, clap::Args)]
struct RecordArgs {
    /// The session the event is about (key or alias, e.g. agent:main:subagent:c1).
    #[arg(long, value_name = "KEY")]
    session: Option<String>,
    /// The kind: human_direct_message, upstream_missing, goal_changed, child_spawned,
    /// run_completed, run_failed, compacted, adopted, created, or any other word.
    #[arg(long, value_name = "KIND")]
    kind: Option<String>,
    /// Who caused it: human, agent or system (default: the kind's producer's).
    #[arg(long, value_name = "TYPE")]
    actor: Option<String>,
    /// The actor's id; a watcher whose key equals it is not notified (self-suppression).
    #[arg(long, value_name = "ID")]
    actor_id: Option<String>,
    /// The session id.
    #[arg(long, value_name = "ID")]
    session_id: Option<String>,
    /// The run id (child_spawned / run_* dedupe keys are built from it).
    #[arg(long, value_name = "ID")]
    run_id: Option<String>,
    /// The one-line summary (default: the kind's, e.g. "human message via telegram").
    #[arg(long, value_name = "TEXT")]
    summary: Option<String>,
    /// The payload, a JSON object (key order kept).
    #[arg(long, value_name = "JSON")]
    payload: Option<String>,
    /// The dedupe key: a second event with it returns the first (and burns a sequence).
    #[arg(long, value_name = "K")]
    dedupe_key: Option<String>,
    /// When it happened, epoch ms or ISO-8601 (clamped to the last 24 h; default: now).
    #[arg(long, value_name = "T")]
    occurred_at: Option<String>,
    /// A lineage watcher to notify (repeatable; child_spawned seeds its cursor).
    #[arg(long = "watcher", value_name = "KEY")]
    watchers: Vec<String>,
    /// The channel (human_direct_message) or catalog id (upstream_missing, adopted) named
    /// in the default summary and payload.
    #[arg(long, value_name = "NAME")]
    via: Option<String>,
    /// The outcome of a run_failed event: error, timeout or cancelled (default error).
    #[arg(long, value_name = "OUTCOME")]
    outcome: Option<String>,
    /// The compaction operation id (the compacted dedupe key).
    #[arg(long, value_name = "ID")]
    operation_id: Option<String>,
    /// Record human_direct_message only when a watcher would see it (a --watcher is given
    /// or a cursor targets the session), as the gateway's producer does.
    #[arg(long)]
    if_watched: bool,
    /// Read events from stdin, one JSON object per line (fields sessionKey, kind,
    /// actorType, actorId, agentId, sessionId, runId, summary, payload, dedupeKey,
    /// occurredAt, watcherSessionKeys, via, outcome, operationId); one transaction per line.
    #[arg(long)]
    stdin: bool,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Record an event as the gateway does (dedupe, head, watchers, notices, hourly prune)
    /// and print it.
    Record(Box<RecordArgs>),
    /// List events, oldest first (NDJSON unless on a terminal).
    List {
        /// Only this session.
        #[arg(long, value_name = "KEY")]
        session: Option<String>,
        /// Only this kind.
        #[arg(long, value_name = "KIND")]
        kind: Option<String>,
        /// Only events after this sequence.
        #[arg(long, value_name = "SEQ")]
        since: Option<i64>,
        /// At most N events.
        #[arg(long, value_name = "N")]
        limit: Option<i64>,
    },
    /// What session_status returns for changesSince VERSION: the state version and at most
    /// 200 events after VERSION (no cursor moves).
    ChangesSince {
        /// Session key or alias.
        key: String,
        /// The version the caller has seen (a non-negative integer).
        #[arg(allow_hyphen_values = true)]
        version: String,
        /// At most N events (1 to 200; default 200).
        #[arg(long, value_name = "N", hide = true)]
        limit: Option<i64>,
    },
    /// The state version of sessions (0 when nothing was logged).
    Version {
        /// Session keys or aliases.
        keys: Vec<String>,
        /// Every head in the database.
        #[arg(long)]
        all: bool,
    },
    /// Enforce retention: 30 days and 50 000 rows, watermarks stamped, cursors expired.
    Prune {
        /// Count what would be removed; change nothing.
        #[arg(long)]
        dry_run: bool,
        /// Age limit for events and cursors (e.g. 30d, 12h).
        #[arg(long, value_name = "DURATION", default_value = "30d")]
        retention: String,
        /// Row cap.
        #[arg(long, value_name = "N", default_value_t = 50_000)]
        max_rows: i64,
    },
    /// Delete a session's signal state, as session deletion does: its events, head and
    /// upstream link, and every cursor where it is watcher or target.
    Forget {
        /// Session key or alias.
        key: String,
        /// Count what would be deleted; change nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// Rows, sessions, oldest and newest events, cursors, pending notices (those that reach
    /// their watchers; the others counted apart by reason), size.
    Stats,
    /// Measures changes-since in process (for bench/signals.py).
    #[command(hide = true)]
    BenchChangesSince {
        /// Session key.
        key: String,
        /// The version.
        #[arg(long, default_value_t = 0)]
        after: i64,
        /// Repetitions.
        #[arg(long, default_value_t = 1000)]
        iterations: usize,
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
    let db = &cli.db;
    match cli.command {
        Command::Record(a) => record(&ctx, db, mode, *a),
        Command::List {
            session,
            kind,
            since,
            limit,
        } => {
            let session_key = session.map(|s| resolve_key(&ctx, &s)).transpose()?;
            let agent_id = ctx
                .options
                .targets
                .agent
                .as_deref()
                .map(clawstate::session::session_key::normalize_agent_id);
            let filter = EventFilter {
                session_key,
                agent_id,
                kind,
                since,
                limit,
            };
            let mut db = db.open(PROG, &ctx, Access::Read)?;
            let events = journal::list(&mut db, &filter).or_fail()?;
            let rows: Vec<Value> = events.iter().map(Event::to_json).collect();
            print_list(list_mode(mode), &rows, || event_table(&events))
        }
        Command::ChangesSince {
            key,
            version,
            limit,
        } => changes_since(&ctx, db, mode, &key, &version, limit),
        Command::Version { keys, all } => version(&ctx, db, mode, &keys, all),
        Command::Prune {
            dry_run,
            retention,
            max_rows,
        } => prune(&ctx, db, mode, dry_run, &retention, max_rows),
        Command::Forget { key, dry_run } => {
            let key = resolve_key(&ctx, &key)?;
            let agent = agent_for(&ctx, &key);
            let mut sdb = db.open_to_clear(PROG, &ctx, dry_run)?;
            if !dry_run && !sdb.has_signal_log() {
                let f = journal::Forgotten::default();
                let why = if sdb.is_missing() {
                    "no state database"
                } else {
                    "no signal log"
                };
                return print_doc(mode, &f.to_json(), || {
                    text_line(&format!("nothing to forget for {key} ({agent}): {why}"))
                });
            }
            let f = journal::forget(&mut sdb, &key, &agent, dry_run).or_fail()?;
            print_doc(mode, &f.to_json(), || {
                text_line(&format!(
                    "{} {key} ({agent}): {} events, {} head, {} cursors, {} upstream links",
                    if dry_run { "would forget" } else { "forgot" },
                    f.events,
                    f.heads,
                    f.cursors,
                    f.upstream_links
                ))
            })
        }
        Command::Stats => {
            let mut sdb = db.open(PROG, &ctx, Access::Read)?;
            let s = journal::stats(&mut sdb, |w| {
                presence::session_known(&ctx, w, &presence::agent_of(&ctx, w))
            })
            .or_fail()?;
            let doc = s.to_json(sdb.path());
            print_doc(mode, &doc, || {
                let t = |v: Option<i64>| v.map(iso).unwrap_or_else(|| "-".into());
                let n = |v: Option<i64>| v.map(|x| x.to_string()).unwrap_or_else(|| "-".into());
                format!(
                    "database:        {}{}\nschema version:  {}\nevents:          {}\nsessions:        {} ({} with retained events)\nsequences:       {} .. {} (last allocated {})\noldest event:    {}\nnewest event:    {}\ncursors:         {} ({} watchers)\npending notices: {}{}\nsize:            {} bytes\n",
                    escape_path(sdb.path()),
                    if sdb.is_missing() { " (missing)" } else { "" },
                    s.schema_version,
                    s.events,
                    s.sessions,
                    s.sessions_with_events,
                    n(s.oldest_sequence),
                    n(s.newest_sequence),
                    s.last_allocated_sequence,
                    t(s.oldest_at),
                    t(s.newest_at),
                    s.cursors,
                    s.watchers,
                    s.pending_notices,
                    undeliverable_text(&s),
                    s.database_bytes
                )
            })
        }
        Command::BenchChangesSince {
            key,
            after,
            iterations,
        } => {
            let key = resolve_key(&ctx, &key)?;
            let agent = agent_for(&ctx, &key);
            let mut sdb = db.open(PROG, &ctx, Access::Read)?;
            let mut times = Vec::with_capacity(iterations);
            let mut events = 0;
            for _ in 0..iterations.max(1) {
                let t = Instant::now();
                let c = journal::changes_since(&mut sdb, &key, &agent, after, 200).or_fail()?;
                let doc = clawstate::js::jsjson::to_string_compact(&c.to_json());
                times.push(t.elapsed().as_secs_f64() * 1e6);
                events = c.events.len();
                std::hint::black_box(doc);
            }
            times.sort_by(f64::total_cmp);
            let pct = |p: f64| times[((times.len() as f64 - 1.0) * p).round() as usize];
            print_line(&json!({
                "iterations": times.len(),
                "events": events,
                "p50Us": (pct(0.5) * 10.0).round() / 10.0,
                "p99Us": (pct(0.99) * 10.0).round() / 10.0,
                "meanUs": (times.iter().sum::<f64>() / times.len() as f64 * 10.0).round() / 10.0,
            }))
        }
    }
}

fn event_table(events: &[Event]) -> String {
    use clawstate::report::text_table::{Cell, Tone};
    let rows = events.iter().map(|e| {
        vec![
            Cell::new(&e.sequence.to_string(), Tone::Muted),
            Cell::new(&iso(e.occurred_at), Tone::Muted),
            Cell::new(&e.session_key, Tone::Accent),
            Cell::plain(&e.agent_id),
            Cell::new(&e.kind, Tone::AccentBright),
            Cell::plain(&match &e.actor_id {
                Some(id) => format!("{} {id}", e.actor_type),
                None => e.actor_type.clone(),
            }),
            Cell::plain(&e.summary),
        ]
    });
    table_of(
        &[
            "SEQ", "OCCURRED", "SESSION", "AGENT", "KIND", "ACTOR", "SUMMARY",
        ],
        rows,
    )
}

fn request_from_flags(a: &RecordArgs) -> Result<RecordRequest, Failure> {
    let payload = match &a.payload {
        None => None,
        Some(p) => Some(clawstate::js::jsjson::parse_value(p).map_err(|e| {
            Failure::new(exit::DATA_ERR, format!("--payload is not valid JSON: {e}"))
        })?),
    };
    Ok(RecordRequest {
        session_key: a.session.clone(),
        kind: a.kind.clone(),
        actor_type: a.actor.clone(),
        actor_id: a.actor_id.clone(),
        agent_id: None,
        session_id: a.session_id.clone(),
        run_id: a.run_id.clone(),
        summary: a.summary.clone(),
        payload,
        dedupe_key: a.dedupe_key.clone(),
        occurred_at: a.occurred_at.clone().map(Value::String),
        watchers: a.watchers.clone(),
        via: a.via.clone(),
        outcome: a.outcome.clone(),
        operation_id: a.operation_id.clone(),
    })
}

fn record(ctx: &StateContext, db: &DbArgs, mode: OutputMode, a: RecordArgs) -> Result<(), Failure> {
    let kctx = ctx.key_context();
    let mut inputs: Vec<RecordInput> = Vec::new();
    if a.stdin {
        if a.session.is_some() || a.kind.is_some() {
            return Err(Failure::new(
                exit::USAGE,
                "record --stdin takes the events from stdin; drop --session/--kind",
            ));
        }
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .map_err(|e| Failure::new(exit::FAILURE, format!("cannot read stdin: {e}")))?;
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let input = RecordRequest::from_json_line(line)
                .and_then(|r| r.resolve(&kctx))
                .map_err(|m| Failure::new(exit::DATA_ERR, format!("stdin line {}: {m}", i + 1)))?;
            inputs.push(input);
        }
    } else {
        if a.session.is_none() || a.kind.is_none() {
            return Err(Failure::new(
                exit::USAGE,
                "record: give --session KEY and --kind KIND (or --stdin)",
            ));
        }
        let mut req = request_from_flags(&a)?;
        req.agent_id = ctx.options.targets.agent.clone();
        let input = req
            .resolve(&kctx)
            .map_err(|m| Failure::new(exit::DATA_ERR, m))?;
        inputs.push(input);
    }
    if inputs.is_empty() {
        return Ok(());
    }
    let mut sdb = db.open(PROG, ctx, Access::Write)?;
    let mut recorder = Recorder::new(&sdb);
    let batch = a.stdin;
    let mut printed = String::new();
    for input in &inputs {
        if a.if_watched
            && input.kind == "human_direct_message"
            && (input.actor_type != "human"
                || (input.watcher_session_keys.is_empty()
                    && !journal::has_watchers(&mut sdb, &input.session_key).or_fail()?))
        {
            note(
                PROG,
                &format!(
                    "not recorded: no watcher would see human_direct_message on {}",
                    input.session_key
                ),
            );
            continue;
        }
        let outcome = recorder.record(&mut sdb, input, ctx.now_ms).or_fail()?;
        let Some(event) = outcome.event else {
            continue;
        };
        let v = event.to_json();
        if batch || mode == OutputMode::Ndjson {
            clawstate::js::jsjson::write_compact(&mut printed, &v);
            printed.push('\n');
            if printed.len() > 64 * 1024 {
                out(&std::mem::take(&mut printed))?;
            }
        } else if mode == OutputMode::Json {
            print_pretty(&v)?;
        } else {
            let actor = match &event.actor_id {
                Some(id) => format!("{} {id}", event.actor_type),
                None => event.actor_type.clone(),
            };
            let mut line = format!(
                "#{} {} {} [{}] by {}: {}",
                event.sequence, event.kind, event.session_key, event.agent_id, actor, event.summary
            );
            if !outcome.inserted {
                line.push_str(" (duplicate: the existing event)");
            }
            if !outcome.notices.is_empty() {
                line.push_str(&format!(
                    " ({} watcher notices pending)",
                    outcome.notices.len()
                ));
            }
            if !outcome.seeded.is_empty() {
                line.push_str(&format!(" (watched by {})", outcome.seeded.join(", ")));
            }
            out(&text_line(&line))?;
        }
    }
    if !printed.is_empty() {
        out(&printed)?;
    }
    Ok(())
}

fn parse_version(raw: &str) -> Result<i64, Failure> {
    let t = raw.trim();
    let ok = !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    match t.parse::<i64>() {
        Ok(v) if ok && v <= 9_007_199_254_740_991 => Ok(v),
        _ => Err(Failure::new(
            exit::USAGE,
            "changesSince must be a non-negative integer",
        )),
    }
}

fn changes_since(
    ctx: &StateContext,
    db: &DbArgs,
    mode: OutputMode,
    raw_key: &str,
    raw_version: &str,
    limit: Option<i64>,
) -> Result<(), Failure> {
    let after = parse_version(raw_version)?;
    let key = resolve_key(ctx, raw_key)?;
    let agent = agent_for(ctx, &key);
    let mut sdb = db.open_log(PROG, ctx)?;
    let changes =
        journal::changes_since(&mut sdb, &key, &agent, after, limit.unwrap_or(200)).or_fail()?;
    if !changes.has_head
        && changes.events.is_empty()
        && !journal::knows_session(&mut sdb, &key).or_fail()?
        && !presence::session_exists(ctx, &key, &agent)
    {
        return Err(journal::unknown_session(raw_key)).or_fail();
    }
    let doc = changes.to_json();
    match mode {
        OutputMode::Ndjson => print_line(&doc),
        _ => print_pretty(&doc),
    }
}

fn version(
    ctx: &StateContext,
    db: &DbArgs,
    mode: OutputMode,
    keys: &[String],
    all: bool,
) -> Result<(), Failure> {
    if all != keys.is_empty() {
        return Err(Failure::new(
            exit::USAGE,
            "version: give session keys, or --all",
        ));
    }
    let mut sdb = db.open(PROG, ctx, Access::Read)?;
    let rows: Vec<Value> = if all {
        journal::heads(&mut sdb)
            .or_fail()?
            .iter()
            .map(|h| h.to_json())
            .collect()
    } else {
        let mut v = Vec::new();
        for raw in keys {
            let key = resolve_key(ctx, raw)?;
            let agent = agent_for(ctx, &key);
            let n = journal::version(&mut sdb, &key, &agent).or_fail()?;
            v.push(json!({"sessionKey": key, "agentId": agent, "stateVersion": n}));
        }
        v
    };
    let text = || {
        let mut s = String::new();
        for r in &rows {
            s.push_str(&format!(
                "{}\t{}\t{}\n",
                escape_line(r["sessionKey"].as_str().unwrap_or("")),
                escape_line(r["agentId"].as_str().unwrap_or("")),
                r["stateVersion"]
            ));
        }
        s
    };
    match mode {
        OutputMode::Json => print_pretty(&Value::Array(rows.clone())),
        OutputMode::Ndjson => print_list(signals_cli::ListMode::Lines, &rows, text),
        OutputMode::Text => out(&text()),
    }
}

fn prune(
    ctx: &StateContext,
    db: &DbArgs,
    mode: OutputMode,
    dry_run: bool,
    retention: &str,
    max_rows: i64,
) -> Result<(), Failure> {
    let retention_ms = parse_duration_ms(retention, DurationUnit::Days)
        .map_err(|e| Failure::new(exit::USAGE, format!("--retention: {}", e.message)))?;
    if max_rows < 0 {
        return Err(Failure::new(exit::USAGE, "--max-rows must be 0 or more"));
    }
    let limits = PruneLimits {
        retention_ms: retention_ms.min(i64::MAX as u64) as i64,
        max_rows,
    };
    let mut sdb = db.open_to_clear(PROG, ctx, dry_run)?;
    let dry = dry_run || !sdb.has_signal_log();
    let report = retention::prune(&mut sdb, ctx.now_ms, &limits, dry).or_fail()?;
    if !dry {
        retention::mark_pruned(sdb.path(), &limits, ctx.now_ms);
    }
    print_doc(mode, &report.to_json(), || {
        format!(
            "{} {} events by age, {} by the row cap; {} heads stamped; {} cursors expired; {} events remain\n",
            if dry_run { "would prune" } else { "pruned" },
            report.events_by_age,
            report.events_by_row_cap,
            report.heads_stamped,
            report.cursors_expired,
            report.remaining
        )
    })
}

/// ` (and 3 undeliverable: 2 store-replaced, 1 watcher-missing)`, or nothing.
fn undeliverable_text(s: &journal::Stats) -> String {
    if s.undeliverable_notices() == 0 {
        return String::new();
    }
    let parts: Vec<String> = s
        .undeliverable
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(r, n)| format!("{n} {}", r.code()))
        .collect();
    format!(
        " (and {} undeliverable: {})",
        s.undeliverable_notices(),
        parts.join(", ")
    )
}
