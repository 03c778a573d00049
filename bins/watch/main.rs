//! `claw-watch`: watcher cursors and the one-notice-not-many protocol of the shared state
//! database — register, list, read and drain pending notices, sweep, reset, follow.

use clawstate_cli as common;
use clawstate_cli::signals as signals_cli;

use std::collections::HashMap;
use std::time::{Duration, Instant};

use clap::{Parser, Subcommand};
use clawstate::exit;
use clawstate::install::context::StateContext;
use clawstate::js::duration::{parse_duration_ms, DurationUnit};
use clawstate::signals::cursors::{self, CursorFilter};
use clawstate::signals::delivery::{self, Undeliverable};
use clawstate::signals::follow::{self, FollowOptions};
use clawstate::signals::notices;
use clawstate::signals::retention::{self, PruneLimits};
use clawstate::signals::{presence, Access, Cursor, Notice};
use common::{out, run_main, text_line, Failure, GlobalArgs, OrFail, OutputMode};
use serde_json::{json, Value};
use signals_cli::{
    iso, list_mode, print_doc, print_list, print_pretty, resolve_key, table_of, DbArgs, ListMode,
};

const PROG: &str = "claw-watch";

/// Watcher cursors and stale-state notices of an OpenClaw state database.
///
/// A watcher session holds a cursor on a target session; when a notifying event (a human
/// message, a goal change, an upstream loss) lands on the target, the watcher gets one
/// notice — not one per change — until it acknowledges it. Offline, a pending notice is a
/// cursor whose notified watermark is ahead of its last-seen one: `pending` prints them
/// byte-identical to the gateway's queue lines, `drain` prints and acknowledges them in one
/// transaction, and `follow` streams them as other processes record events.
///
/// On state schema 18 (2026.9.6) a cursor records its watcher's session store; a notice of
/// a cursor of another (or no) store never reaches the watcher, so it is not pending, not
/// drained and not re-opened by a sweep, and a registration re-seeds such a cursor. Nor
/// does the notice of a watcher whose session is gone from its store (a store that is not
/// on this host judges nothing). `list --undeliverable` names such cursors and why.
///
/// The signal log needs OpenClaw 2026.8 or later: on a 2026.7 host (state schema 1, or no
/// database and a 2026.7 config) nothing is created or changed; add and follow exit 65, the
/// other commands see no cursors and say so on stderr. A missing database is created as
/// claw-signals creates it (see --schema).
///
/// Exit codes: 0 ok, 1 other failure, 2 usage, 3 not found, 65 malformed input (a refused
/// registration: self-watch or a watcher key that is not agent-qualified; a database that is
/// not a state database or has a newer schema; a host without the signal log), 73 cannot
/// write, 75 busy (the write lock was held past the 5 s timeout, an external supervisor
/// owns the database, or a live gateway owns the state dir: writes need --offline).
#[derive(Debug, Parser)]
#[command(name = "claw-watch", version)]
struct Cli {
    #[command(flatten)]
    global: GlobalArgs,
    #[command(flatten)]
    db: DbArgs,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Register WATCHER on TARGET as sessions_send watch:true does: seeded at the target's
    /// current version (prior history never notifies); an ambient cursor becomes explicit.
    Add {
        /// The watcher's session key (agent-qualified; `global` is refused).
        watcher: String,
        /// The watched session key.
        target: String,
        /// The agent whose head of TARGET seeds the cursor (default: the target key's).
        #[arg(long, value_name = "A")]
        target_agent: Option<String>,
        /// Register the gateway's ambient group watch instead (a main session on one of its
        /// group sessions: queue-only notices; an existing cursor is left unchanged).
        #[arg(long)]
        ambient: bool,
    },
    /// List cursors with their watermarks, state and provenance (NDJSON unless on a terminal).
    List {
        /// Only this watcher.
        #[arg(long, value_name = "W")]
        watcher: Option<String>,
        /// Only this target.
        #[arg(long, value_name = "T")]
        target: Option<String>,
        /// Only cursors with a pending notice that reaches the watcher (those that never
        /// do are left out, and counted on stderr).
        #[arg(long, conflicts_with = "undeliverable")]
        pending: bool,
        /// Only pending cursors whose notices never reach the watcher, with the reason
        /// (`undeliverable`: no-store, store-replaced, watcher-missing).
        #[arg(long)]
        undeliverable: bool,
    },
    /// Print the pending notices (one line per pending watcher/target pair), changing nothing.
    Pending {
        /// Only this watcher's notices.
        watcher: Option<String>,
    },
    /// Print WATCHER's pending notices and acknowledge them (last seen := notified; one
    /// follow-up opened where changes interleaved), in one transaction.
    Drain {
        /// The watcher session key.
        watcher: String,
    },
    /// Do to the cursors what a gateway start does: re-open the notices of cursors behind
    /// their material watermark (for watchers whose session exists), then prune.
    Sweep {
        /// Treat every watcher session as existing (skip the session-store check).
        #[arg(long)]
        all_watchers: bool,
        /// Show what would be re-opened; change nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// Forget WATCHER's cursors, as a reset of the watcher session does (its targets'
    /// history and cursors watching it are kept).
    Reset {
        /// The watcher session key.
        watcher: String,
        /// Count what would be deleted; change nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// Stream notices as any process records events, until interrupted (reacts within
    /// 100 ms; sleeps on file-change notifications, no busy polling).
    Follow {
        /// Only these watchers (default: all).
        watchers: Vec<String>,
        /// Acknowledge each notice as it is printed, so follow-ups stream too.
        #[arg(long)]
        drain: bool,
        /// Only notices that become pending after the start.
        #[arg(long)]
        new_only: bool,
        /// Stop after this long (e.g. 30s, 5m).
        #[arg(long = "for", value_name = "DURATION")]
        for_duration: Option<String>,
        /// Re-check this often without a change notification (default 2s; shorten it where
        /// inotify misses other hosts' writes, e.g. on NFS).
        #[arg(long, value_name = "DURATION")]
        safety_tick: Option<String>,
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
        Command::Add {
            watcher,
            target,
            target_agent,
            ambient,
        } => {
            let watcher = resolve_key(&ctx, &watcher)?;
            let target = resolve_key(&ctx, &target)?;
            let agent = match target_agent {
                Some(a) => clawstate::session::session_key::normalize_agent_id(&a),
                None => presence::agent_of(&ctx, &target),
            };
            // Refuse before touching (or creating) the database.
            cursors::check_registration(&watcher, &target).or_fail()?;
            let mut sdb = db.open(PROG, &ctx, Access::Write)?;
            let with_path = sdb.has_watcher_store_path();
            let r = if ambient {
                cursors::register_ambient(&mut sdb, &watcher, &target, &agent, ctx.now_ms)
            } else {
                cursors::register(&mut sdb, &watcher, &target, &agent, ctx.now_ms)
            }
            .or_fail()?;
            let doc = json!({
                "registered": true,
                "created": r.created,
                "promoted": r.promoted,
                "cursor": r.cursor.to_json(with_path),
            });
            print_doc(mode, &doc, || {
                text_line(&if r.created {
                    format!(
                        "{watcher} now watches {target} from version {} ({})",
                        r.cursor.last_seen_sequence, r.cursor.provenance
                    )
                } else if r.promoted {
                    format!("{watcher} already watched {target}; the ambient watch is now explicit")
                } else {
                    format!("{watcher} already watches {target} (unchanged)")
                })
            })
        }
        Command::List {
            watcher,
            target,
            pending,
            undeliverable,
        } => {
            let filter = CursorFilter {
                watcher: watcher.map(|w| resolve_key(&ctx, &w)).transpose()?,
                target: target.map(|t| resolve_key(&ctx, &t)).transpose()?,
                pending_only: pending || undeliverable,
            };
            let mut sdb = db.open(PROG, &ctx, Access::Read)?;
            let with_path = sdb.has_watcher_store_path();
            let listed = cursors::list(&mut sdb, &filter).or_fail()?;
            let split = delivery::split(&sdb, listed.clone(), |w| watcher_known(&ctx, w));
            let why: HashMap<(&str, &str), Undeliverable> = split
                .undeliverable
                .iter()
                .map(|(c, r)| {
                    (
                        (
                            c.watcher_session_key.as_str(),
                            c.target_session_key.as_str(),
                        ),
                        *r,
                    )
                })
                .collect();
            let reason = |c: &Cursor| {
                why.get(&(
                    c.watcher_session_key.as_str(),
                    c.target_session_key.as_str(),
                ))
                .copied()
            };
            let rows: Vec<&Cursor> = listed
                .iter()
                .filter(|c| match (pending, undeliverable) {
                    (true, _) => reason(c).is_none(),
                    (_, true) => reason(c).is_some(),
                    _ => true,
                })
                .collect();
            if pending && !split.undeliverable.is_empty() {
                common::note(
                    PROG,
                    &format!(
                        "{} pending cursors left out: their notices never reach the watcher ({}); see list --undeliverable",
                        split.undeliverable.len(),
                        reason_counts(&split)
                    ),
                );
            }
            let json_rows: Vec<Value> = rows
                .iter()
                .map(|c| {
                    let mut v = c.to_json(with_path);
                    if let (Some(r), Some(m)) = (reason(c), v.as_object_mut()) {
                        m.insert("undeliverable".into(), json!(r.code()));
                        m.insert("why".into(), json!(r.why()));
                    }
                    v
                })
                .collect();
            print_list(list_mode(mode), &json_rows, || cursor_table(&rows, &reason))
        }
        Command::Pending { watcher } => {
            let watchers: Vec<String> = watcher
                .map(|w| resolve_key(&ctx, &w))
                .transpose()?
                .into_iter()
                .collect();
            let mut sdb = db.open(PROG, &ctx, Access::Read)?;
            let list =
                notices::pending(&mut sdb, &watchers, |w| watcher_known(&ctx, w)).or_fail()?;
            print_notices(mode, &list)
        }
        Command::Drain { watcher } => {
            let watcher = resolve_key(&ctx, &watcher)?;
            let mut sdb = db.open_to_clear(PROG, &ctx, false)?;
            if !sdb.has_signal_log() {
                return print_notices(mode, &[]);
            }
            let d = notices::drain(&mut sdb, &watcher, &[], ctx.now_ms).or_fail()?;
            if mode == OutputMode::Json {
                let acked: Vec<Value> = d.acknowledged.iter().map(Notice::to_json).collect();
                let follow: Vec<Value> = d.followups.iter().map(Notice::to_json).collect();
                return print_pretty(&json!({"acknowledged": acked, "followups": follow}));
            }
            print_notices(mode, &d.acknowledged)
        }
        Command::Sweep {
            all_watchers,
            dry_run,
        } => sweep(&ctx, db, mode, all_watchers, dry_run),
        Command::Reset { watcher, dry_run } => {
            let watcher = resolve_key(&ctx, &watcher)?;
            let mut sdb = db.open_to_clear(PROG, &ctx, dry_run)?;
            let n = if dry_run || !sdb.has_signal_log() {
                cursors::count_for_watcher(&mut sdb, &watcher).or_fail()?
            } else {
                cursors::reset(&mut sdb, &watcher).or_fail()?
            };
            print_doc(
                mode,
                &json!({"watcher": watcher, "cursorsDeleted": n, "dryRun": dry_run}),
                || {
                    text_line(&format!(
                        "{} {n} cursors of {watcher}",
                        if dry_run { "would delete" } else { "deleted" }
                    ))
                },
            )
        }
        Command::Follow {
            watchers,
            drain,
            new_only,
            for_duration,
            safety_tick,
        } => {
            let watchers = watchers
                .iter()
                .map(|w| resolve_key(&ctx, w))
                .collect::<Result<Vec<_>, _>>()?;
            let until = match for_duration {
                Some(d) => Some(
                    Instant::now()
                        + Duration::from_millis(
                            parse_duration_ms(&d, DurationUnit::Seconds).map_err(|e| {
                                Failure::new(exit::USAGE, format!("--for: {}", e.message))
                            })?,
                        ),
                ),
                None => None,
            };
            let safety_tick = match safety_tick {
                Some(d) => Duration::from_millis(
                    parse_duration_ms(&d, DurationUnit::Seconds)
                        .map_err(|e| {
                            Failure::new(exit::USAGE, format!("--safety-tick: {}", e.message))
                        })?
                        .max(1),
                ),
                None => follow::SAFETY_TICK,
            };
            let opts = FollowOptions {
                watchers,
                drain,
                until,
                include_existing: !new_only,
                safety_tick,
                stores: Some(presence::watcher_stores(&ctx)),
            };
            // A host without the signal log has nothing to stream: say so (65).
            drop(db.open_log(PROG, &ctx)?);
            if opts.drain {
                // Acknowledging is a write: the live-gateway rule of the other writes.
                db.gateway_rule(PROG, &ctx)?;
            }
            let path = db.path(&ctx);
            let fixed = ctx.fixed_clock.then_some(ctx.now_ms);
            let now = move || fixed.unwrap_or_else(clawstate::js::clock::system_now_ms);
            let json = mode != OutputMode::Text;
            let result = follow::follow(&path, &opts, now, |n| {
                let line = if json {
                    let mut s = clawstate::js::jsjson::to_string_compact(&n.to_json());
                    s.push('\n');
                    s
                } else {
                    text_line(&n.text())
                };
                out(&line).map_err(|f| f.message)
            });
            match result {
                Ok(()) => Ok(()),
                // A closed pipe ends the stream quietly.
                Err(follow::FollowError::Output(m)) if m.is_empty() => Ok(()),
                Err(e) => Err(e).or_fail(),
            }
        }
    }
}

/// Prints notices: their text (what the gateway injects, one line each; the document a
/// script pipes on, so text stays text in a pipe), NDJSON for `--ndjson`, one array for
/// `--json`.
fn print_notices(mode: OutputMode, list: &[Notice]) -> Result<(), Failure> {
    let rows: Vec<Value> = list.iter().map(Notice::to_json).collect();
    match mode {
        OutputMode::Json => print_pretty(&Value::Array(rows)),
        OutputMode::Ndjson => print_list(ListMode::Lines, &rows, String::new),
        OutputMode::Text => out(&list
            .iter()
            .map(|n| text_line(&n.text()))
            .collect::<String>()),
    }
}

/// Whether a watcher's session is in its store (`None`: its store is not on this host).
fn watcher_known(ctx: &StateContext, watcher: &str) -> Option<bool> {
    presence::session_known(ctx, watcher, &presence::agent_of(ctx, watcher))
}

/// `2 store-replaced, 1 watcher-missing`.
fn reason_counts(split: &delivery::PendingSplit) -> String {
    Undeliverable::ALL
        .iter()
        .filter_map(|&r| {
            let n = split.count(r);
            (n > 0).then(|| format!("{n} {}", r.code()))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn cursor_table(rows: &[&Cursor], reason: &dyn Fn(&Cursor) -> Option<Undeliverable>) -> String {
    use clawstate::report::text_table::{Cell, Tone};
    let cells = rows.iter().map(|c| {
        let state = match reason(c) {
            Some(r) => format!("{}, undeliverable: {}", c.state().as_str(), r.code()),
            None => c.state().as_str().to_string(),
        };
        let state = state.as_str();
        vec![
            Cell::new(&c.watcher_session_key, Tone::Accent),
            Cell::new(&c.target_session_key, Tone::Accent),
            Cell::plain(&c.last_seen_sequence.to_string()),
            Cell::plain(&c.notified_sequence.to_string()),
            Cell::plain(&c.material_sequence.to_string()),
            Cell::new(
                state,
                if state == "idle" {
                    Tone::Muted
                } else {
                    Tone::Warn
                },
            ),
            Cell::plain(&c.provenance),
            Cell::new(&iso(c.updated_at), Tone::Muted),
        ]
    });
    table_of(
        &[
            "WATCHER",
            "TARGET",
            "SEEN",
            "NOTIFIED",
            "MATERIAL",
            "STATE",
            "PROVENANCE",
            "UPDATED",
        ],
        cells,
    )
}

fn sweep(
    ctx: &StateContext,
    db: &DbArgs,
    mode: OutputMode,
    all_watchers: bool,
    dry_run: bool,
) -> Result<(), Failure> {
    let exists = |watcher: &str| {
        all_watchers || presence::session_exists(ctx, watcher, &presence::agent_of(ctx, watcher))
    };
    let mut sdb = db.open_to_clear(PROG, ctx, dry_run)?;
    if dry_run || !sdb.has_signal_log() {
        let list: Vec<Notice> = notices::sweep_candidates(&mut sdb)
            .or_fail()?
            .into_iter()
            .filter(|c| exists(&c.watcher_session_key) && cursors::is_deliverable(&sdb, c))
            .map(|c| Notice {
                watcher_session_key: c.watcher_session_key.clone(),
                target_session_key: c.target_session_key.clone(),
                last_seen_sequence: c.last_seen_sequence,
                queue_only: c.is_ambient(),
            })
            .collect();
        return print_notices(mode, &list);
    }
    let list = notices::sweep(&mut sdb, ctx.now_ms, exists).or_fail()?;
    let limits = PruneLimits::default();
    retention::prune(&mut sdb, ctx.now_ms, &limits, false).or_fail()?;
    retention::mark_pruned(sdb.path(), &limits, ctx.now_ms);
    print_notices(mode, &list)
}
