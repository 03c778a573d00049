//! What `claw-signals` and `claw-watch` share: the `--db` and `--schema` options, key
//! resolution and the JSON / NDJSON / text printers.

use std::path::PathBuf;

use clap::Args;
use clawstate::install::context::StateContext;
use clawstate::js;
use clawstate::js::jsjson;
use clawstate::report::text_table::{Cell, TextTable};
use clawstate::session::session_key::resolve_store_key;
use clawstate::signals::generation::HostSchema;
use clawstate::signals::{Access, StateDb};
use serde_json::Value;

use crate::{note, out, Failure, OrFail};

/// The `--db` and `--schema` options.
#[derive(Debug, Clone, Args)]
pub struct DbArgs {
    /// The shared state database (default: <stateDir>/state/openclaw.sqlite).
    #[arg(long, global = true, value_name = "PATH")]
    pub db: Option<PathBuf>,
    /// The state schema of the host's gateway, which decides what a missing database is
    /// created as: auto (openclaw.json's meta.lastTouchedVersion; 15 when it has none) or
    /// N (1 = OpenClaw 2026.7, no signal log: nothing is created; 15 to 17 = 2026.8.1 to
    /// 2026.9.5: schema 15; 18 or more = 2026.9.6 and later: schema 18). An existing
    /// database's own schema always decides.
    #[arg(long, global = true, value_name = "auto|N", default_value = "auto", value_parser = parse_schema)]
    pub schema: SchemaChoice,
}

/// A `--schema` value: `auto`, or the state schema the host's gateway uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SchemaChoice(pub Option<i64>);

/// Parses `--schema`: `auto` or a schema number from 1 on.
fn parse_schema(raw: &str) -> Result<SchemaChoice, String> {
    if raw == "auto" {
        return Ok(SchemaChoice(None));
    }
    match raw.parse::<i64>() {
        Ok(n) if raw.bytes().all(|b| b.is_ascii_digit()) && (1..=1_000_000).contains(&n) => {
            Ok(SchemaChoice(Some(n)))
        }
        _ => Err("expected auto or a state schema number (1 = OpenClaw 2026.7, 15 = 2026.8.1, 18 = 2026.9.6)".into()),
    }
}

impl DbArgs {
    /// The database path: `--db` (made absolute), else the state dir's.
    pub fn path(&self, ctx: &StateContext) -> PathBuf {
        match &self.db {
            Some(p) => clawstate::install::paths::absolutize(
                &clawstate::install::paths::expand_tilde(&p.to_string_lossy(), &ctx.layout.home),
                ctx.env.cwd(),
            ),
            None => ctx.layout.state_db_path(),
        }
    }

    /// The host's state schema as `--schema` or the config says.
    pub fn host(&self, ctx: &StateContext) -> HostSchema {
        HostSchema::of(&ctx.config, self.schema.0)
    }

    /// Opens the database for `access`. A read of a database without a signal log (OpenClaw
    /// 2026.7's) sees an empty log and says why on stderr; a writer refuses it (65). An
    /// explicit `--schema` that an existing database contradicts is noted.
    pub fn open(&self, prog: &str, ctx: &StateContext, access: Access) -> Result<StateDb, Failure> {
        if access == Access::Write {
            self.gateway_rule(prog, ctx)?;
        }
        let mut db = StateDb::open_as(&self.path(ctx), access, &self.host(ctx)).or_fail()?;
        self.note_on(prog, &mut db, ctx);
        Ok(db)
    }

    /// Opens the database for a command that clears or acknowledges (forget, prune, drain,
    /// reset, sweep): for reading when `dry_run` or when there is no signal log to change
    /// (no database, or one without the log: nothing is created or written), else for
    /// writing. [`StateDb::has_signal_log`] tells which.
    pub fn open_to_clear(
        &self,
        prog: &str,
        ctx: &StateContext,
        dry_run: bool,
    ) -> Result<StateDb, Failure> {
        let (path, host) = (self.path(ctx), self.host(ctx));
        let read = StateDb::open_read_as(&path, &host).or_fail()?;
        let mut db = if dry_run || !read.has_signal_log() {
            read
        } else {
            drop(read);
            self.gateway_rule(prog, ctx)?;
            StateDb::open_write_as(&path, &host).or_fail()?
        };
        self.note_on(prog, &mut db, ctx);
        Ok(db)
    }

    /// The live-gateway rule of the write commands, as for the other binaries' writes the
    /// gateway has no method for ([`clawstate::ops::delegation`]): while a gateway owns the state
    /// dir a write refuses (75) unless `--offline` says to go on (with a warning), and
    /// `--via-gateway` always refuses. The gateway's RPC records no signal events and moves
    /// no cursors, and its notice queue lives in its memory: a notice opened or
    /// acknowledged by another process never reaches or leaves that queue. A `--db` other
    /// than the state dir's is no gateway's.
    pub fn gateway_rule(&self, prog: &str, ctx: &StateContext) -> Result<(), Failure> {
        use clawstate::install::context::GatewayRoute;
        use clawstate::ops::delegation;
        let own_db = self.path(ctx) == ctx.layout.state_db_path();
        if !own_db && ctx.options.route != GatewayRoute::Required {
            return Ok(());
        }
        let why = "the gateway's RPC has no method that records signal events or moves watch cursors, and its notice queue lives in its memory (a notice opened or acknowledged here never reaches or leaves it)";
        if ctx.options.route == GatewayRoute::Offline {
            if let Some(owner) = ctx.live_gateway() {
                crate::warn(
                    prog,
                    &format!(
                        "the OpenClaw gateway (pid {}) is running; writing the signal log offline anyway (--offline): {why}",
                        owner.pid
                    ),
                );
            }
            return Ok(());
        }
        delegation::refuse_unless_offline(ctx, false, "a signal-log write", why)
            .map_err(|e| Failure::from_error(prog, &e))
    }

    /// Says on stderr why an opened database has no signal log, that its schema is newer
    /// than clawstate writes (read only), or that it contradicts an explicit `--schema`;
    /// tells it where the watchers' session stores are.
    fn note_on(&self, prog: &str, db: &mut StateDb, ctx: &StateContext) {
        db.set_watcher_stores(clawstate::signals::presence::watcher_stores(ctx));
        if let Some(w) = db.newer_schema_warning() {
            note(prog, &w);
        }
        if let Some(why) = db.no_signal_log() {
            note(prog, &format!("{why}; the signal log reads as empty"));
        }
        if let Some(n) = self.schema.0 {
            if db.has_signal_log() && !db.was_created() && db.user_version() != n {
                note(
                    prog,
                    &format!(
                        "--schema {n} ignored: {} is at state schema {} (an existing database's own schema decides)",
                        clawstate::report::terminal_text::escape_path(db.path()),
                        db.user_version()
                    ),
                );
            }
        }
    }

    /// Opens the database for a read that answers from the signal log itself (a session's
    /// changes since a version, a stream of notices): a host without the log is an error
    /// (65), not an empty answer.
    pub fn open_log(&self, prog: &str, ctx: &StateContext) -> Result<StateDb, Failure> {
        let mut db = StateDb::open_read_as(&self.path(ctx), &self.host(ctx)).or_fail()?;
        if let Some(why) = db.no_signal_log() {
            return Err(Failure::new(
                clawstate::exit::DATA_ERR,
                format!("{why}; there are no state versions, changes or notices to report"),
            ));
        }
        self.note_on(prog, &mut db, ctx);
        Ok(db)
    }
}

/// A request key as the gateway resolves it (`main` → `agent:<default>:<mainKey>`, …).
pub fn resolve_key(ctx: &StateContext, raw: &str) -> Result<String, Failure> {
    let k = resolve_store_key(raw, &ctx.key_context());
    if k.is_empty() {
        return Err(Failure::new(
            clawstate::exit::USAGE,
            format!("invalid session key {raw:?}"),
        ));
    }
    Ok(k)
}

/// The agent for a key: `--agent` when given, else the key's own, else the default agent.
pub fn agent_for(ctx: &StateContext, key: &str) -> String {
    match &ctx.options.targets.agent {
        Some(a) if !a.trim().is_empty() => clawstate::session::session_key::normalize_agent_id(a),
        _ => clawstate::signals::presence::agent_of(ctx, key),
    }
}

/// Prints `JSON.stringify(v, null, 2)` and a newline.
pub fn print_pretty(v: &Value) -> Result<(), Failure> {
    let mut s = jsjson::to_string_pretty(v);
    s.push('\n');
    out(&s)
}

/// Prints one compact JSON line.
pub fn print_line(v: &Value) -> Result<(), Failure> {
    let mut s = jsjson::to_string_compact(v);
    s.push('\n');
    out(&s)
}

/// Prints one document in the chosen mode: pretty for `--json`, one line for `--ndjson`,
/// `text` otherwise.
pub use crate::emit as print_doc;

pub use crate::{list_mode, ListMode};

/// Prints rows in a list mode: `--json` one array, lines, or `table` (the text of
/// [`table_of`]) on a terminal.
pub fn print_list(
    mode: ListMode,
    rows: &[Value],
    table: impl FnOnce() -> String,
) -> Result<(), Failure> {
    crate::emit_rows(mode, rows, || Value::Array(rows.to_vec()), |_| table())
}

/// A [`TextTable`] of `rows`, laid out for this process's terminal.
pub fn table_of(header: &[&str], rows: impl IntoIterator<Item = Vec<Cell>>) -> String {
    let mut t = TextTable::new(header);
    for r in rows {
        t.push(r);
    }
    t.render(&crate::table_layout())
}

/// An epoch-ms time as ISO-8601.
pub fn iso(ms: i64) -> String {
    js::to_iso_string(ms)
}
