//! What `claw-signals` and `claw-watch` share: the `--db` option, key resolution and the
//! JSON / NDJSON / text printers.

#![allow(dead_code)]

use std::path::PathBuf;

use clap::Args;
use clawstate::context::StateContext;
use clawstate::jsjson;
use clawstate::session_key::resolve_store_key;
use clawstate::signals::{Access, StateDb};
use clawstate::terminal_text::escape_line;
use serde_json::Value;

use crate::common::{out, Failure, OrFail, OutputMode};

/// The `--db` option.
#[derive(Debug, Clone, Args)]
pub struct DbArgs {
    /// The shared state database (default: <stateDir>/state/openclaw.sqlite).
    #[arg(long, global = true, value_name = "PATH")]
    pub db: Option<PathBuf>,
}

impl DbArgs {
    /// The database path: `--db` (made absolute), else the state dir's.
    pub fn path(&self, ctx: &StateContext) -> PathBuf {
        match &self.db {
            Some(p) => clawstate::paths::absolutize(
                &clawstate::paths::expand_tilde(&p.to_string_lossy(), &ctx.layout.home),
                ctx.env.cwd(),
            ),
            None => ctx.layout.state_db_path(),
        }
    }

    /// Opens the database for `access`.
    pub fn open(&self, ctx: &StateContext, access: Access) -> Result<StateDb, Failure> {
        StateDb::open(&self.path(ctx), access).or_fail()
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
        Some(a) if !a.trim().is_empty() => clawstate::session_key::normalize_agent_id(a),
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
pub fn print_doc(
    mode: OutputMode,
    v: &Value,
    text: impl FnOnce() -> String,
) -> Result<(), Failure> {
    match mode {
        OutputMode::Json => print_pretty(v),
        OutputMode::Ndjson => print_line(v),
        OutputMode::Text => out(&text()),
    }
}

/// How a list prints: `--json` one array, `--ndjson` (or a pipe) one object per line, a
/// table on a terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListMode {
    /// One JSON array.
    Array,
    /// One object per line.
    Lines,
    /// A readable table.
    Table,
}

/// The list mode for the global output flags.
pub fn list_mode(mode: OutputMode) -> ListMode {
    match mode {
        OutputMode::Json => ListMode::Array,
        OutputMode::Ndjson => ListMode::Lines,
        OutputMode::Text if crate::common::stdout_is_terminal() => ListMode::Table,
        OutputMode::Text => ListMode::Lines,
    }
}

/// Prints rows in a list mode; `table` renders them for a terminal.
pub fn print_list(
    mode: ListMode,
    rows: &[Value],
    table: impl FnOnce() -> String,
) -> Result<(), Failure> {
    match mode {
        ListMode::Array => print_pretty(&Value::Array(rows.to_vec())),
        ListMode::Lines => {
            let mut s = String::new();
            for r in rows {
                jsjson::write_compact(&mut s, r);
                s.push('\n');
            }
            out(&s)
        }
        ListMode::Table => out(&table()),
    }
}

/// Left-aligned columns separated by two spaces; every cell escaped as one line, so data
/// never breaks the layout (`clawstate::terminal_text`).
pub fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let rows: Vec<Vec<String>> = rows
        .iter()
        .map(|r| r.iter().map(|c| escape_line(c).into_owned()).collect())
        .collect();
    let rows = &rows;
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for r in rows {
        for (i, c) in r.iter().enumerate() {
            if i < widths.len() {
                widths[i] = widths[i].max(c.chars().count());
            }
        }
    }
    let mut s = String::new();
    let line = |cells: Vec<String>, s: &mut String| {
        let n = cells.len();
        for (i, c) in cells.into_iter().enumerate() {
            s.push_str(&c);
            if i + 1 < n {
                let pad = widths[i].saturating_sub(c.chars().count()) + 2;
                s.push_str(&" ".repeat(pad));
            }
        }
        s.push('\n');
    };
    line(header.iter().map(|h| h.to_string()).collect(), &mut s);
    for r in rows {
        line(r.clone(), &mut s);
    }
    s
}

/// An epoch-ms time as ISO-8601.
pub fn iso(ms: i64) -> String {
    clawstate::clock::iso_ms(ms)
}
