//! `claw-migrate finish`: argument parsing and output; the work is `clawstate::migrate::finish`.

use clap::Args;
use clawstate::migrate::finish::{self, FinishItem, FinishOptions};
use clawstate::report::text_table::{Cell, TextTable, Tone};
use clawstate_cli::{self as common, Failure, GlobalArgs, OrFail, OutputMode};
use serde_json::{json, Value};

/// Arguments of `claw-migrate finish`.
#[derive(Debug, Args)]
pub struct FinishArgs {
    /// Only print what would be done (the default; nothing is changed).
    #[arg(long, conflicts_with = "apply")]
    pub dry_run: bool,
    /// Do it: import missing tails and archived transcripts without rows, move leftovers
    /// into the import archive, close runs.
    #[arg(long)]
    pub apply: bool,
}

/// Runs `claw-migrate finish`.
pub fn run(global: &GlobalArgs, args: FinishArgs) -> Result<(), Failure> {
    let mode = global.output();
    let ctx = global.context(crate::PROG)?;
    let apply = args.apply && !args.dry_run;
    if let Some(owner) = ctx.live_gateway() {
        let msg = format!(
            "a gateway is running on {} ({owner}); stop it first: finishing a migration under a live gateway races its writes",
            ctx.layout.state_dir.display()
        );
        if apply {
            return Err(Failure::new(clawstate::exit::TEMP_FAIL, msg));
        }
        common::warn(crate::PROG, &msg);
    }
    let opts = FinishOptions {
        apply,
        now_ms: ctx.now_ms,
    };
    let mut items: Vec<FinishItem> = Vec::new();
    let mut work = Vec::new();
    let mut orphans = Vec::new();
    for t in crate::targets_of(global)? {
        for (item, tail) in finish::leftovers(&t, &opts).or_fail()? {
            work.push((t.clone(), item, tail));
        }
        for item in finish::archives_without_rows(&t).or_fail()? {
            orphans.push((t.clone(), item));
        }
    }
    if apply {
        items.extend(finish::apply_leftovers(&ctx.layout.state_dir, work, &opts).or_fail()?);
    } else {
        items.extend(work.into_iter().map(|(_, i, _)| i));
    }
    for (t, mut item) in orphans {
        if apply && item.action == "reimport" {
            finish::reimport_archive(&mut item, &t, &opts).or_fail()?;
        }
        items.push(item);
    }
    items.extend(finish::manifests(&ctx.layout.state_dir, &opts).or_fail()?);
    let undone = items.iter().filter(|i| !i.done).count();
    let doc = json!({
        "apply": apply,
        "items": items.iter().map(|i| serde_json::to_value(i).unwrap_or(Value::Null)).collect::<Vec<_>>(),
        "done": items.len() - undone,
        "remaining": undone,
    });
    match mode {
        OutputMode::Json => common::emit_data(OutputMode::Json, &doc)?,
        OutputMode::Ndjson => common::emit_lines(doc["items"].as_array().map_or(&[][..], |v| v))?,
        OutputMode::Text => common::out_styled(&table(&items, apply, &common::table_layout()))?,
    }
    if apply && undone > 0 {
        return Err(Failure::new(
            clawstate::exit::FAILURE,
            format!("{undone} case(s) left as they were (see above)"),
        ));
    }
    Ok(())
}

fn table(
    items: &[FinishItem],
    apply: bool,
    layout: &clawstate::report::text_table::Layout,
) -> String {
    if items.is_empty() {
        return common::text_line(
            "nothing to finish: no leftover JSONL, half-written run or orphan archive",
        );
    }
    let mut t = TextTable::new(&["CASE", "FILE", "ACTION", "DONE", "WHAT"]);
    for i in items {
        let tone = if i.done {
            Tone::Success
        } else if i.action == "keep" {
            Tone::Warn
        } else {
            Tone::Plain
        };
        t.push(vec![
            Cell::plain(i.case),
            Cell::plain(&i.path.display().to_string()),
            Cell::new(i.action, tone),
            Cell::plain(if i.done { "yes" } else { "no" }),
            Cell::plain(&i.what),
        ]);
    }
    let mut out = t.render(layout);
    if !apply {
        out.push_str(&common::text_line(
            "dry run: nothing changed; run with --apply to do it",
        ));
    }
    out
}
