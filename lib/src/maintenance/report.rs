//! The cleanup summary (`store.md` §4.10): the JSON the gateway prints, key for key, and
//! the text forms (dry-run plan with its action table, applied summary).

use serde_json::{Map, Value};

use super::artifacts::UnreferencedReport;
use super::config::MaintenanceMode;
use super::disk_budget::DiskBudgetReport;
use crate::install::targets::StoreTarget;
use crate::js;
use crate::js::jsjson;
use crate::report::terminal_text::escape_line;
use crate::report::text_table::{Cell, Layout, TextTable, Tone};
use crate::store::list_row::display_model_ref;

/// What maintenance did (or would do) to one entry (`resolveSessionCleanupAction`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Action {
    /// Retired by `--fix-dm-scope`.
    RetireDmScope,
    /// Removed by `--fix-missing`.
    PruneMissing,
    /// A stale model-run probe.
    PruneModelRun,
    /// Older than `pruneAfter`.
    PruneStale,
    /// Over `maxEntries`.
    CapOverflow,
    /// Evicted by the disk budget.
    EvictBudget,
    /// `sessionFile` repaired by `--fix-missing`.
    RepairSessionFile,
    /// Kept as is.
    Keep,
}

impl Action {
    /// The label the gateway prints.
    pub fn as_str(self) -> &'static str {
        match self {
            Action::RetireDmScope => "retire-dm-scope",
            Action::PruneMissing => "prune-missing",
            Action::PruneModelRun => "prune-model-run",
            Action::PruneStale => "prune-stale",
            Action::CapOverflow => "cap-overflow",
            Action::EvictBudget => "evict-budget",
            Action::RepairSessionFile => "repair-session-file",
            Action::Keep => "keep",
        }
    }

    /// Whether the entry stays.
    pub fn keeps(self) -> bool {
        matches!(self, Action::Keep | Action::RepairSessionFile)
    }
}

/// The summary of one store, as `openclaw sessions cleanup --json` prints it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreSummary {
    /// The agent the store is reported under.
    pub agent_id: String,
    /// The store path.
    pub store_path: String,
    /// `enforce` or `warn`.
    pub mode: MaintenanceMode,
    /// Whether this was a preview.
    pub dry_run: bool,
    /// Entries before (apply: after `--fix-*` removals).
    pub before_count: u64,
    /// Entries after.
    pub after_count: u64,
    /// Repaired `sessionFile`s.
    pub repaired: u64,
    /// Entries removed by `--fix-missing`.
    pub missing: u64,
    /// Entries retired by `--fix-dm-scope`.
    pub dm_scope_retired: u64,
    /// Model-run probes pruned.
    pub model_run_pruned: u64,
    /// Stale entries pruned.
    pub pruned: u64,
    /// Entries capped.
    pub capped: u64,
    /// Unreferenced-artifact pruning.
    pub unreferenced: UnreferencedReport,
    /// The disk budget (`null` without `maxDiskBytes`).
    pub disk_budget: Option<DiskBudgetReport>,
    /// Whether anything changes.
    pub would_mutate: bool,
    /// Apply only: the entry count after the run.
    pub applied_count: Option<u64>,
}

impl StoreSummary {
    /// An all-zero summary for a target.
    pub fn new(target: &StoreTarget, mode: MaintenanceMode, dry_run: bool) -> Self {
        StoreSummary {
            agent_id: target.agent_id.clone(),
            store_path: target.store_path.to_string_lossy().into_owned(),
            mode,
            dry_run,
            before_count: 0,
            after_count: 0,
            repaired: 0,
            missing: 0,
            dm_scope_retired: 0,
            model_run_pruned: 0,
            pruned: 0,
            capped: 0,
            unreferenced: UnreferencedReport::default(),
            disk_budget: None,
            would_mutate: false,
            applied_count: None,
        }
    }

    /// `wouldMutate`: any removal, repair or file removal.
    pub fn compute_would_mutate(&self) -> bool {
        self.missing > 0
            || self.repaired > 0
            || self.dm_scope_retired > 0
            || self.model_run_pruned > 0
            || self.pruned > 0
            || self.capped > 0
            || self.unreferenced.removed_files > 0
            || self
                .disk_budget
                .is_some_and(|b| b.removed_entries > 0 || b.removed_files > 0)
    }

    /// The summary object, in the gateway's key order.
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("agentId".into(), Value::from(self.agent_id.clone()));
        m.insert("storePath".into(), Value::from(self.store_path.clone()));
        m.insert("mode".into(), Value::from(self.mode.as_str()));
        m.insert("dryRun".into(), Value::from(self.dry_run));
        m.insert("beforeCount".into(), Value::from(self.before_count));
        m.insert("afterCount".into(), Value::from(self.after_count));
        m.insert("repaired".into(), Value::from(self.repaired));
        m.insert("missing".into(), Value::from(self.missing));
        m.insert("dmScopeRetired".into(), Value::from(self.dm_scope_retired));
        m.insert("modelRunPruned".into(), Value::from(self.model_run_pruned));
        m.insert("pruned".into(), Value::from(self.pruned));
        m.insert("capped".into(), Value::from(self.capped));
        let u = &self.unreferenced;
        let mut um = Map::new();
        um.insert("scannedFiles".into(), Value::from(u.scanned_files));
        um.insert("removedFiles".into(), Value::from(u.removed_files));
        um.insert("freedBytes".into(), Value::from(u.freed_bytes));
        um.insert("olderThanMs".into(), Value::from(u.older_than_ms));
        m.insert("unreferencedArtifacts".into(), Value::Object(um));
        let budget = match &self.disk_budget {
            None => Value::Null,
            Some(b) => {
                let mut bm = Map::new();
                bm.insert("totalBytesBefore".into(), Value::from(b.total_bytes_before));
                bm.insert("totalBytesAfter".into(), Value::from(b.total_bytes_after));
                bm.insert("removedFiles".into(), Value::from(b.removed_files));
                bm.insert("removedEntries".into(), Value::from(b.removed_entries));
                bm.insert("freedBytes".into(), Value::from(b.freed_bytes));
                bm.insert("maxBytes".into(), Value::from(b.max_bytes));
                bm.insert("highWaterBytes".into(), Value::from(b.high_water_bytes));
                bm.insert("overBudget".into(), Value::from(b.over_budget));
                Value::Object(bm)
            }
        };
        m.insert("diskBudget".into(), budget);
        m.insert("wouldMutate".into(), Value::from(self.would_mutate));
        if let Some(n) = self.applied_count {
            m.insert("applied".into(), Value::Bool(true));
            m.insert("appliedCount".into(), Value::from(n));
        }
        Value::Object(m)
    }
}

/// `serializeSessionCleanupResult`: one summary alone, several in
/// `{allAgents, mode, dryRun, stores}`; printed like `JSON.stringify(v, null, 2)` + newline.
pub fn cleanup_json(summaries: &[&StoreSummary], mode: MaintenanceMode, dry_run: bool) -> String {
    let v = if summaries.len() == 1 {
        summaries[0].to_json()
    } else {
        let mut m = Map::new();
        m.insert("allAgents".into(), Value::Bool(true));
        m.insert("mode".into(), Value::from(mode.as_str()));
        m.insert("dryRun".into(), Value::from(dry_run));
        m.insert(
            "stores".into(),
            Value::Array(summaries.iter().map(|s| s.to_json()).collect()),
        );
        Value::Object(m)
    };
    let mut s = jsjson::to_string_pretty(&v);
    s.push('\n');
    s
}

/// One row of the per-key action table.
#[derive(Debug, Clone)]
pub struct ActionRow {
    /// The entry key.
    pub key: String,
    /// What happens to it.
    pub action: Action,
    /// The entry as it was before the run.
    pub entry: Map<String, Value>,
}

pub use crate::report::human_format::format_time_ago;

fn pad(s: &str, width: usize) -> String {
    let n = s.encode_utf16().count();
    if n >= width {
        s.to_string()
    } else {
        format!("{s}{}", " ".repeat(width - n))
    }
}

fn truncate_key(key: &str) -> String {
    let units: Vec<u16> = key.encode_utf16().collect();
    if units.len() <= 26 {
        return key.to_string();
    }
    format!(
        "{}...{}",
        String::from_utf16_lossy(&units[..16]),
        String::from_utf16_lossy(&units[units.len() - 6..])
    )
}

fn flags_cell(e: &Map<String, Value>) -> String {
    let truthy = |k: &str| e.get(k).is_some_and(js::truthy);
    let text = |k: &str| match e.get(k) {
        Some(Value::String(s)) => s.clone(),
        Some(v) => jsjson::to_string_compact(v),
        None => String::new(),
    };
    let mut out = Vec::new();
    for (k, label) in [
        ("thinkingLevel", "think"),
        ("verboseLevel", "verbose"),
        ("traceLevel", "trace"),
        ("reasoningLevel", "reasoning"),
        ("elevatedLevel", "elev"),
        ("responseUsage", "usage"),
        ("groupActivation", "activation"),
    ] {
        if truthy(k) {
            out.push(format!("{label}:{}", text(k)));
        }
    }
    if truthy("systemSent") {
        out.push("system".into());
    }
    if truthy("abortedLastRun") {
        out.push("aborted".into());
    }
    if truthy("sessionId") {
        out.push(format!("id:{}", text("sessionId")));
    }
    out.join(" ")
}

/// The `Planned session actions:` table and `Summary by Label:` block, rows sorted by
/// `updatedAt` descending (stable).
///
/// Without a width (a pipe) the table is the gateway's, byte for byte: fixed columns, keys
/// cut to 26 units with `...`. Given a terminal width it is a [`TextTable`] fitted to it
/// as the listing's is: whole keys when they fit, else the widest column cut with `…`.
pub fn render_action_table(
    rows: &[ActionRow],
    cfg: &Value,
    now_ms: i64,
    title: &str,
    layout: &Layout,
) -> String {
    let mut s = String::new();
    if rows.is_empty() {
        return s;
    }
    let mut sorted: Vec<&ActionRow> = rows.iter().collect();
    let u = |r: &ActionRow| {
        r.entry
            .get("updatedAt")
            .and_then(Value::as_f64)
            .unwrap_or(0.0)
    };
    sorted.sort_by(|a, b| u(b).total_cmp(&u(a)));
    s.push_str(&format!("\n{title}\n"));
    let age_of = |r: &ActionRow| match r.entry.get("updatedAt").and_then(Value::as_f64) {
        Some(t) if t != 0.0 => format_time_ago(now_ms as f64 - t),
        _ => "unknown".into(),
    };
    if layout.width.is_some() {
        let mut table = TextTable::new(&["Action", "Key", "Age", "Model", "Flags"]);
        for r in &sorted {
            let model = display_model_ref(cfg, &r.key, &r.entry).model;
            let tone = if r.action.keeps() {
                Tone::Plain
            } else {
                Tone::Warn
            };
            table.push(vec![
                Cell::new(r.action.as_str(), tone),
                Cell::new(&r.key, Tone::Accent),
                Cell::new(&age_of(r), Tone::Muted),
                Cell::new(&model, Tone::Info),
                Cell::new(&flags_cell(&r.entry), Tone::Muted),
            ]);
        }
        s.push_str(&table.render(layout));
        s.push_str(&summary_by_label(rows));
        return s;
    }
    s.push_str(&format!(
        "{} {} {} {} Flags\n",
        pad("Action", 19),
        pad("Key", 26),
        pad("Age", 9),
        pad("Model", 14)
    ));
    for r in &sorted {
        let age = age_of(r);
        let model = display_model_ref(cfg, &r.key, &r.entry).model;
        // Data escaped before the columns are measured (terminal_text): a key is cut
        // to the gateway's 26 units as it is shown.
        let line = format!(
            "{} {} {} {} {}",
            pad(r.action.as_str(), 19),
            pad(&truncate_key(&escape_line(&r.key)), 26),
            pad(&age, 9),
            pad(&escape_line(&model), 14),
            escape_line(&flags_cell(&r.entry))
        );
        s.push_str(line.trim_end());
        s.push('\n');
    }
    s.push_str(&summary_by_label(rows));
    s
}

/// The `Summary by Label:` block and its total, labels sorted.
fn summary_by_label(rows: &[ActionRow]) -> String {
    let mut s = String::new();
    let mut by_label: Vec<(String, u64, u64)> = Vec::new();
    for r in rows {
        let label = match r.entry.get("label").and_then(Value::as_str).map(str::trim) {
            Some(l) if !l.is_empty() => escape_line(l).into_owned(),
            _ => "(unlabeled)".to_string(),
        };
        let slot = match by_label.iter().position(|(l, _, _)| *l == label) {
            Some(i) => i,
            None => {
                by_label.push((label, 0, 0));
                by_label.len() - 1
            }
        };
        if r.action.keeps() {
            by_label[slot].1 += 1;
        } else {
            by_label[slot].2 += 1;
        }
    }
    by_label.sort_by(|a, b| a.0.cmp(&b.0));
    let width = by_label
        .iter()
        .map(|(l, _, _)| l.encode_utf16().count())
        .max()
        .unwrap_or(0);
    s.push_str("\nSummary by Label:\n");
    let (mut kept, mut pruned) = (0, 0);
    for (l, k, p) in &by_label {
        s.push_str(&format!("{}  {k} kept, {p} pruned\n", pad(l, width)));
        kept += k;
        pruned += p;
    }
    s.push_str(&format!("Total: {kept} kept, {pruned} pruned\n"));
    s
}

/// The dry-run text of one store (§4.10).
pub fn render_dry_run(
    summary: &StoreSummary,
    rows: &[ActionRow],
    cfg: &Value,
    now_ms: i64,
    agent_header: bool,
    layout: &Layout,
) -> String {
    let mut s = String::new();
    if agent_header {
        s.push_str(&format!("Agent: {}\n", escape_line(&summary.agent_id)));
    }
    s.push_str(&format!(
        "Session store: {}\n",
        escape_line(&summary.store_path)
    ));
    s.push_str(&format!("Maintenance mode: {}\n", summary.mode.as_str()));
    s.push_str(&format!(
        "Entries: {} -> {} (remove {})\n",
        summary.before_count,
        summary.after_count,
        summary.before_count as i64 - summary.after_count as i64
    ));
    s.push_str(&format!(
        "Would repair sessionFile metadata: {}\n",
        summary.repaired
    ));
    s.push_str(&format!(
        "Would prune missing transcripts: {}\n",
        summary.missing
    ));
    s.push_str(&format!(
        "Would retire stale direct DM sessions: {}\n",
        summary.dm_scope_retired
    ));
    s.push_str(&format!(
        "Would prune stale model-run probes: {}\n",
        summary.model_run_pruned
    ));
    s.push_str(&format!("Would prune stale: {}\n", summary.pruned));
    s.push_str(&format!("Would cap overflow: {}\n", summary.capped));
    if summary.unreferenced.scanned_files > 0 {
        s.push_str(&format!(
            "Would prune unreferenced artifacts: {}\n",
            summary.unreferenced.removed_files
        ));
    }
    if let Some(b) = &summary.disk_budget {
        s.push_str(&format!(
            "Would enforce disk budget: {} -> {} bytes (files {}, entries {})\n",
            b.total_bytes_before, b.total_bytes_after, b.removed_files, b.removed_entries
        ));
    }
    s.push_str(&render_action_table(
        rows,
        cfg,
        now_ms,
        "Planned session actions:",
        layout,
    ));
    s
}

/// The applied text of one store (§4.10).
pub fn render_applied(summary: &StoreSummary, agent_header: bool) -> String {
    let mut s = String::new();
    if agent_header {
        s.push_str(&format!("Agent: {}\n", escape_line(&summary.agent_id)));
    }
    s.push_str(&format!(
        "Session store: {}\n",
        escape_line(&summary.store_path)
    ));
    s.push_str(&format!(
        "Applied maintenance. Current entries: {}\n",
        summary.applied_count.unwrap_or(0)
    ));
    if summary.unreferenced.removed_files > 0 {
        s.push_str(&format!(
            "Pruned unreferenced artifacts: {}\n",
            summary.unreferenced.removed_files
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_ago() {
        assert_eq!(format_time_ago(10_000.0), "just now");
        assert_eq!(format_time_ago(90_000.0), "2m ago");
        assert_eq!(format_time_ago(3_600_000.0 * 5.0), "5h ago");
        assert_eq!(format_time_ago(86_400_000.0 * 40.0), "40d ago");
        assert_eq!(format_time_ago(-1.0), "unknown");
    }

    #[test]
    fn summary_key_order() {
        let t = StoreTarget {
            agent_id: "main".into(),
            store_path: "/s/sessions.json".into(),
        };
        let mut s = StoreSummary::new(&t, MaintenanceMode::Enforce, true);
        s.pruned = 3;
        s.would_mutate = s.compute_would_mutate();
        let text = cleanup_json(&[&s], MaintenanceMode::Enforce, true);
        assert!(text.starts_with("{\n  \"agentId\": \"main\",\n  \"storePath\": \"/s/sessions.json\",\n  \"mode\": \"enforce\",\n  \"dryRun\": true,\n  \"beforeCount\": 0,"));
        assert!(text.ends_with("\"diskBudget\": null,\n  \"wouldMutate\": true\n}\n"));
        s.applied_count = Some(2);
        let two = cleanup_json(&[&s, &s], MaintenanceMode::Enforce, false);
        assert!(two.starts_with("{\n  \"allAgents\": true,\n  \"mode\": \"enforce\",\n  \"dryRun\": false,\n  \"stores\": [\n    {"));
        assert!(two.contains("\"applied\": true,\n      \"appliedCount\": 2\n"));
    }
}
