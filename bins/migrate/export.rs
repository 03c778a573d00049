//! `claw-migrate export`: argument parsing and output; the work is `clawstate::migrate::export`.

use std::path::{Path, PathBuf};

use clap::Args;
use clawstate::agent_db::layout;
use clawstate::install::paths::absolutize;
use clawstate::migrate::export::{self, AgentTarget, ExportError};
use clawstate_cli::{
    emit_lines, note, out, text_line, warn, Failure, GlobalArgs, OrFail, OutputMode,
};
use serde_json::{Map, Value};

/// Arguments of `claw-migrate export`.
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// Write into this fresh (missing or empty) directory, laid out as a state dir
    /// (`DIR/agents/<id>/sessions/`); without it, into each agent's own legacy sessions
    /// directory, only if it holds no sessions.json and no gateway is running.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Export only this session (a store key; `main` and other short keys resolve as the
    /// gateway resolves them).
    #[arg(long, value_name = "KEY")]
    pub session: Option<String>,
    /// With --session: write its transcript to FILE (`-` for stdout) instead of a layout.
    #[arg(
        short = 'o',
        long = "output",
        value_name = "FILE",
        requires = "session"
    )]
    pub output: Option<String>,
    /// Show what would be written; write nothing.
    #[arg(long)]
    pub dry_run: bool,
}

const PROG: &str = "claw-migrate export";

/// Runs `claw-migrate export`.
pub fn run(global: &GlobalArgs, args: ExportArgs) -> Result<(), Failure> {
    let mode = global.output();
    let ctx = global.context(PROG)?;
    let targets = ctx.targets().or_fail()?;
    let keys = args.session.as_ref().map(|raw| {
        let resolved = clawstate::session::session_key::resolve_store_key(raw, &ctx.key_context());
        let mut v = vec![raw.clone()];
        if resolved != *raw {
            v.push(resolved);
        }
        v
    });
    if let (Some(output), Some(keys)) = (&args.output, &keys) {
        // The agent the key names (`agent:<id>:…`), else the first one selected.
        let named = keys
            .iter()
            .rev()
            .find_map(|k| clawstate::session::session_key::parse_agent_session_key(k))
            .map(|p| clawstate::session::session_key::normalize_agent_id(&p.agent_id));
        let (agent_id, store_path) = match targets
            .iter()
            .find(|t| Some(&t.agent_id) == named.as_ref())
            .or(if named.is_none() {
                targets.first()
            } else {
                None
            }) {
            Some(t) => (t.agent_id.clone(), t.store_path.clone()),
            None => match &named {
                Some(a) => (a.clone(), ctx.layout.default_store_path(a)),
                None => {
                    return Err(Failure::new(
                        clawstate::exit::NOT_FOUND,
                        "no agent selected",
                    ))
                }
            },
        };
        let db = layout::db_path_for_store(&store_path);
        let (key, sid, t) = export::session_transcript(&db, keys).or_fail()?;
        let Some(t) = t else {
            return Err(Failure::new(
                clawstate::exit::NOT_FOUND,
                format!(
                    "{}: session {key:?} ({sid}) has no transcript event",
                    db.display()
                ),
            ));
        };
        if output == "-" {
            if args.dry_run {
                return Ok(());
            }
            return clawstate_cli::stream(|w| w.write_all(&t.bytes));
        }
        let path = absolutize(Path::new(output), ctx.env.cwd());
        if !args.dry_run {
            export::write_new_path(&path, &t.bytes).or_fail()?;
        }
        let row = export::SessionExport {
            key,
            session_id: sid,
            transcript_path: Some(path),
            transcript: Some((&t).into()),
            entry: None,
        };
        let mut v = row.to_json(&agent_id);
        if let Value::Object(m) = &mut v {
            m.insert("dryRun".into(), Value::from(args.dry_run));
        }
        return report(mode, &[v], args.dry_run, 1);
    }
    let root = args.out.as_ref().map(|d| absolutize(d, ctx.env.cwd()));
    let mut plan = Vec::new();
    for t in &targets {
        let db = layout::db_path_for_store(&t.store_path);
        if !db.is_file() {
            warn(
                PROG,
                &format!(
                    "{}: agent {:?} has no agent database; nothing to export",
                    db.display(),
                    t.agent_id
                ),
            );
            continue;
        }
        let sessions_dir = match &root {
            Some(r) => r.join("agents").join(&t.agent_id).join("sessions"),
            None => layout::legacy_store_for(&t.store_path)
                .parent()
                .unwrap_or(Path::new("."))
                .to_path_buf(),
        };
        plan.push(AgentTarget {
            agent_id: t.agent_id.clone(),
            db,
            sessions_dir,
        });
    }
    // Every refusal before the first write.
    match &root {
        Some(r) => export::check_fresh_out(r).or_fail()?,
        None => {
            export::refuse_live(&ctx.layout.state_dir, ctx.live_gateway()).or_fail()?;
            for a in &plan {
                export::check_target(a).or_fail()?;
            }
        }
    }
    let mut rows = Vec::new();
    let mut agents = 0;
    for a in &plan {
        let done = match export::export_agent(a, keys.as_deref(), args.dry_run) {
            Ok(d) => d,
            Err(e @ ExportError::NoSession { .. }) if plan.len() > 1 => {
                warn(PROG, &e.to_string());
                continue;
            }
            Err(e) => return Err(e).or_fail(),
        };
        agents += 1;
        for w in &done.warnings {
            warn(PROG, w);
        }
        for s in &done.sessions {
            let mut v = s.to_json(&done.agent_id);
            if let Value::Object(m) = &mut v {
                m.insert(
                    "store".into(),
                    Value::from(done.store_path.to_string_lossy().into_owned()),
                );
                m.insert("dryRun".into(), Value::from(args.dry_run));
            }
            rows.push(v);
        }
    }
    report(mode, &rows, args.dry_run, agents)
}

fn report(mode: OutputMode, rows: &[Value], dry_run: bool, agents: usize) -> Result<(), Failure> {
    let identical = rows.iter().filter(|r| r["byteIdentical"] == true).count();
    match mode {
        OutputMode::Json => {
            let mut doc = Map::new();
            doc.insert("dryRun".into(), Value::from(dry_run));
            doc.insert("agents".into(), Value::from(agents));
            doc.insert("sessions".into(), Value::Array(rows.to_vec()));
            doc.insert("byteIdentical".into(), Value::from(identical));
            doc.insert("reSerialised".into(), Value::from(rows.len() - identical));
            let mut s = clawstate::js::jsjson::to_string_pretty(&Value::Object(doc));
            s.push('\n');
            out(&s)
        }
        OutputMode::Ndjson => emit_lines(rows),
        OutputMode::Text => {
            let mut buf = String::new();
            for r in rows {
                let s = |k: &str| r[k].as_str().unwrap_or("-").to_string();
                let mut line = format!("{}: {}", s("sessionKey"), s("mode"));
                if let Some(o) = r["original"].as_str() {
                    line.push_str(&format!(" (from {o}"));
                    match r["appendedEvents"].as_u64() {
                        Some(n) if n > 0 => {
                            line.push_str(&format!(", {n} events appended after the migration)"))
                        }
                        _ => line.push(')'),
                    }
                }
                line.push_str(&format!(", {} events", r["events"]));
                if let Some(t) = r["transcript"].as_str() {
                    line.push_str(&format!(" -> {t}"));
                }
                if let Some(e) = r["entry"].as_str() {
                    line.push_str(&format!("; entry {e}"));
                }
                buf.push_str(&text_line(&line));
            }
            out(&buf)?;
            note(
                PROG,
                &format!(
                    "{}{} sessions of {agents} agents: {identical} byte-identical to their originals, {} re-serialised",
                    if dry_run { "would export " } else { "exported " },
                    rows.len(),
                    rows.len() - identical
                ),
            );
            Ok(())
        }
    }
}
