//! The session listing of `openclaw sessions --json`: filters, order, limit and the
//! envelope (`store.md` §4.11). Rows themselves come from [`crate::listing`].

use serde_json::{Map, Value};

use crate::context::StateContext;
use crate::listing::{list_row, ListContext};
use crate::session_key::{parse_agent_session_key, tool_kind};
use crate::store::scan::StoreScan;
use crate::store::StoreError;
use crate::targets::StoreTarget;
use crate::terminal_text::{escape_line, escape_path};

/// The default `--limit`.
pub const DEFAULT_LIMIT: usize = 100;

/// Parsed listing options.
#[derive(Debug, Clone, Default)]
pub struct ListOptions {
    /// `--active MIN`.
    pub active_minutes: Option<u64>,
    /// `--limit N`; `None` for `all`.
    pub limit: Option<usize>,
    /// `--kinds`: tool kinds to keep (empty = all).
    pub kinds: Vec<String>,
}

const KINDS: [&str; 6] = ["main", "group", "cron", "hook", "node", "other"];

fn strict_positive(s: &str) -> Option<u64> {
    let t = s.trim();
    if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    t.parse::<u64>()
        .ok()
        .filter(|&n| n > 0 && n <= 9_007_199_254_740_991)
}

impl ListOptions {
    /// Parses the raw flag values with the gateway's messages.
    pub fn parse(
        active: Option<&str>,
        limit: Option<&str>,
        kinds: &[String],
    ) -> Result<Self, String> {
        let active_minutes = match active {
            None => None,
            Some(a) => Some(strict_positive(a).ok_or(
                "--active must be a positive number of minutes, for example --active 30.",
            )?),
        };
        let limit =
            match limit {
                None => Some(DEFAULT_LIMIT),
                Some(l) if l.trim().eq_ignore_ascii_case("all") => None,
                Some(l) => Some(strict_positive(l).ok_or(
                    "--limit must be a positive integer or \"all\", for example --limit 25.",
                )? as usize),
            };
        let mut ks = Vec::new();
        for k in kinds {
            let k = k.trim().to_lowercase();
            if k.is_empty() {
                continue;
            }
            if !KINDS.contains(&k.as_str()) {
                return Err(format!(
                    "--kinds: unknown kind {k:?} (expected: {})",
                    KINDS.join(", ")
                ));
            }
            ks.push(k);
        }
        Ok(ListOptions {
            active_minutes,
            limit,
            kinds: ks,
        })
    }
}

/// A listing: which entries are printed, in order, and the numbers of the envelope.
/// Rows are built lazily from the stores' raw text, so memory stays near the file size.
#[derive(Debug)]
pub struct ListResult {
    /// The stores listed.
    pub targets: Vec<StoreTarget>,
    /// Whether `--all-agents` was given.
    pub all_agents: bool,
    /// Rows after filters, before the limit.
    pub total_count: usize,
    /// The limit (`None` = all).
    pub limit: Option<usize>,
    /// `--active`, if given.
    pub active_minutes: Option<u64>,
    /// Warnings from loading.
    pub warnings: Vec<String>,
    scans: Vec<StoreScan>,
    selected: Vec<(usize, usize)>,
    contexts: Vec<ListContext>,
    now_ms: i64,
}

impl ListResult {
    /// How many rows are printed.
    pub fn count(&self) -> usize {
        self.selected.len()
    }

    /// The printed rows, in order, built one at a time.
    pub fn rows(&self) -> impl Iterator<Item = Map<String, Value>> + '_ {
        self.selected.iter().filter_map(move |&(si, ei)| {
            let scan = &self.scans[si];
            let entry = scan.entry(ei)?;
            Some(list_row(
                scan.key(ei),
                &entry,
                self.now_ms,
                &self.contexts[si],
            ))
        })
    }
}

/// The tool kind of a key as an admin means it: the `sessions_list` classifier applied
/// to the key without its `agent:<id>:` prefix (so `agent:main:cron:x` is `cron`).
pub fn list_kind(
    key: &str,
    entry: &Map<String, Value>,
    ctx: &crate::session_key::KeyContext,
) -> &'static str {
    let rest = parse_agent_session_key(key).map(|k| k.rest);
    tool_kind(rest.as_deref().unwrap_or(key), entry, ctx)
}

/// Lists the sessions of `targets` (read-only; no store is written).
pub fn list_sessions(
    ctx: &StateContext,
    targets: &[StoreTarget],
    opts: &ListOptions,
) -> Result<ListResult, StoreError> {
    let key_ctx = ctx.key_context();
    let mut warnings = Vec::new();
    let mut scans = Vec::with_capacity(targets.len());
    for target in targets {
        let scan = StoreScan::open(&target.store_path)?;
        warnings.extend(scan.warnings().iter().cloned());
        scans.push(scan);
    }
    // Filter, order and cut on (updatedAt, position); rows are built only when printed.
    let mut candidates: Vec<(f64, usize, usize)> = Vec::new();
    for (si, scan) in scans.iter().enumerate() {
        for ei in 0..scan.len() {
            let updated = if opts.kinds.is_empty() {
                let Some(u) = scan.peek_updated_at(ei) else {
                    continue;
                };
                u
            } else {
                let Some(entry) = scan.entry(ei) else {
                    continue;
                };
                if !opts
                    .kinds
                    .iter()
                    .any(|k| k == list_kind(scan.key(ei), &entry, &key_ctx))
                {
                    continue;
                }
                entry.get("updatedAt").and_then(Value::as_f64)
            };
            if let Some(min) = opts.active_minutes {
                match updated {
                    Some(u) if (ctx.now_ms as f64 - u) <= (min as f64) * 60000.0 => {}
                    _ => continue,
                }
            }
            candidates.push((updated.unwrap_or(0.0), si, ei));
        }
    }
    let total_count = candidates.len();
    // Newest first; ties keep store order (a stable sort, as the gateway's).
    candidates.sort_by(|a, b| b.0.partial_cmp(&a.0).unwrap_or(std::cmp::Ordering::Equal));
    if let Some(l) = opts.limit {
        candidates.truncate(l);
    }
    let contexts = targets
        .iter()
        .map(|t| ListContext {
            target_agent_id: t.agent_id.clone(),
            config: ctx.config.root.clone(),
            generation: match crate::agent_db::layout::layout_of(&t.store_path) {
                crate::agent_db::layout::Layout::Db => crate::listing::RowGeneration::Db2026_9,
                crate::agent_db::layout::Layout::Files => {
                    crate::listing::RowGeneration::Files2026_7
                }
            },
        })
        .collect();
    Ok(ListResult {
        targets: targets.to_vec(),
        all_agents: ctx.options.targets.all_agents,
        total_count,
        limit: opts.limit,
        active_minutes: opts.active_minutes,
        warnings,
        scans,
        selected: candidates.into_iter().map(|(_, si, ei)| (si, ei)).collect(),
        contexts,
        now_ms: ctx.now_ms,
    })
}

/// Writes the JSON envelope exactly as `openclaw sessions --json` prints it (plus a
/// final newline), streaming one row at a time.
pub fn write_envelope_json<W: std::io::Write + ?Sized>(
    w: &mut W,
    r: &ListResult,
) -> std::io::Result<()> {
    use crate::jsjson::{write_object, write_pretty_at, write_string};
    let aggregate = r.all_agents || r.targets.len() > 1;
    let mut head = Map::new();
    head.insert(
        "path".into(),
        if aggregate {
            Value::Null
        } else {
            r.targets
                .first()
                .map(|t| {
                    Value::from(
                        crate::agent_db::layout::display_store_path(&t.store_path)
                            .to_string_lossy()
                            .into_owned(),
                    )
                })
                .unwrap_or(Value::Null)
        },
    );
    if aggregate {
        head.insert(
            "stores".into(),
            Value::Array(
                r.targets
                    .iter()
                    .map(|t| {
                        let mut m = Map::new();
                        m.insert("agentId".into(), Value::from(t.agent_id.clone()));
                        m.insert(
                            "path".into(),
                            Value::from(
                                crate::agent_db::layout::display_store_path(&t.store_path)
                                    .to_string_lossy()
                                    .into_owned(),
                            ),
                        );
                        Value::Object(m)
                    })
                    .collect(),
            ),
        );
    }
    if r.all_agents {
        head.insert("allAgents".into(), Value::Bool(true));
    }
    head.insert("count".into(), Value::from(r.count()));
    head.insert("totalCount".into(), Value::from(r.total_count));
    head.insert(
        "limitApplied".into(),
        r.limit.map(Value::from).unwrap_or(Value::Null),
    );
    head.insert("hasMore".into(), Value::Bool(r.count() < r.total_count));
    head.insert(
        "activeMinutes".into(),
        r.active_minutes.map(Value::from).unwrap_or(Value::Null),
    );
    let mut out = String::with_capacity(4096);
    out.push('{');
    for (k, v) in &head {
        out.push_str("\n  ");
        write_string(&mut out, k);
        out.push_str(": ");
        write_pretty_at(&mut out, v, 1);
        out.push(',');
    }
    out.push_str("\n  \"sessions\": ");
    if r.count() == 0 {
        out.push_str("[]");
    } else {
        out.push('[');
        for (i, row) in r.rows().enumerate() {
            out.push_str(if i == 0 { "\n    " } else { ",\n    " });
            write_object(&mut out, &row, Some(2));
            if out.len() > 1 << 16 {
                w.write_all(out.as_bytes())?;
                out.clear();
            }
        }
        out.push_str("\n  ]");
    }
    out.push_str("\n}\n");
    w.write_all(out.as_bytes())
}

/// Writes the rows as NDJSON, one compact object per line.
pub fn write_ndjson<W: std::io::Write + ?Sized>(w: &mut W, r: &ListResult) -> std::io::Result<()> {
    let mut out = String::with_capacity(4096);
    for row in r.rows() {
        crate::jsjson::write_object(&mut out, &row, None);
        out.push('\n');
        if out.len() > 1 << 16 {
            w.write_all(out.as_bytes())?;
            out.clear();
        }
    }
    w.write_all(out.as_bytes())
}

fn human_age(age_ms: Option<i64>) -> String {
    let Some(ms) = age_ms else { return "-".into() };
    let s = ms.unsigned_abs() / 1000;
    let t = match s {
        0..=59 => format!("{s}s"),
        60..=3599 => format!("{}m", s / 60),
        3600..=86399 => format!("{}h", s / 3600),
        _ => format!("{}d", s / 86400),
    };
    if ms < 0 {
        format!("in {t}")
    } else {
        format!("{t} ago")
    }
}

/// A readable table of the listing, for terminals; data escaped as one line per cell
/// (`terminal_text`), so no key breaks the table.
pub fn render_table(r: &ListResult, _now_ms: i64) -> String {
    let aggregate = r.all_agents || r.targets.len() > 1;
    let mut s = String::new();
    if aggregate {
        let ids: Vec<&str> = r.targets.iter().map(|t| t.agent_id.as_str()).collect();
        s.push_str(&format!(
            "Session stores: {} ({})\n",
            r.targets.len(),
            escape_line(&ids.join(", "))
        ));
    } else if let Some(t) = r.targets.first() {
        s.push_str(&format!("Session store: {}\n", escape_path(&t.store_path)));
    }
    match r.limit {
        Some(l) if r.count() < r.total_count => s.push_str(&format!(
            "Sessions listed: {} of {} (limit {l})\n",
            r.count(),
            r.total_count
        )),
        _ => s.push_str(&format!("Sessions listed: {}\n", r.count())),
    }
    if let Some(m) = r.active_minutes {
        s.push_str(&format!("Filtered to last {m} minute(s)\n"));
    }
    if r.count() == 0 {
        s.push_str("No sessions found.\n");
        return s;
    }
    let str_of = |row: &Map<String, Value>, k: &str| {
        row.get(k).and_then(Value::as_str).unwrap_or("").to_string()
    };
    let mut header = Vec::new();
    if aggregate {
        header.push("Agent");
    }
    header.extend(["Kind", "Key", "Age", "Model", "Tokens (ctx %)", "Flags"]);
    let mut rows: Vec<Vec<String>> = Vec::new();
    for row in r.rows() {
        let row = &row;
        let mut cells = Vec::new();
        if aggregate {
            cells.push(str_of(row, "agentId"));
        }
        cells.push(str_of(row, "kind"));
        cells.push(str_of(row, "key"));
        cells.push(human_age(row.get("ageMs").and_then(Value::as_i64)));
        cells.push(str_of(row, "model"));
        let ctx_tokens = row.get("contextTokens").and_then(Value::as_f64);
        let tokens = match (row.get("totalTokens").and_then(Value::as_f64), ctx_tokens) {
            (Some(t), Some(c)) if c > 0.0 => format!(
                "{:.1}k/{:.0}k ({:.0}%)",
                t / 1000.0,
                c / 1000.0,
                (t / c * 100.0).min(999.0)
            ),
            (Some(t), _) => format!("{:.1}k/? (?%)", t / 1000.0),
            (None, Some(c)) => format!("unknown/{:.0}k (?%)", c / 1000.0),
            (None, None) => "unknown/? (?%)".into(),
        };
        cells.push(tokens);
        let mut flags = Vec::new();
        for (k, label) in [("systemSent", "system"), ("abortedLastRun", "aborted")] {
            if row.get(k) == Some(&Value::Bool(true)) {
                flags.push(label.to_string());
            }
        }
        for k in [
            "thinkingLevel",
            "verboseLevel",
            "reasoningLevel",
            "elevatedLevel",
        ] {
            if let Some(v) = row.get(k).and_then(Value::as_str) {
                flags.push(format!("{}:{v}", k.trim_end_matches("Level")));
            }
        }
        if let Some(id) = row.get("sessionId").and_then(Value::as_str) {
            flags.push(format!("id:{id}"));
        }
        cells.push(flags.join(" "));
        rows.push(
            cells
                .into_iter()
                .map(|c| escape_line(&c).into_owned())
                .collect(),
        );
    }
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for cells in &rows {
        for (i, c) in cells.iter().enumerate() {
            widths[i] = widths[i].max(c.chars().count());
        }
    }
    let mut line = |cells: Vec<&str>| {
        let mut l = String::new();
        for (i, c) in cells.iter().enumerate() {
            l.push_str(c);
            if i + 1 < cells.len() {
                l.push_str(&" ".repeat(widths[i] - c.chars().count() + 2));
            }
        }
        s.push_str(l.trim_end());
        s.push('\n');
    };
    line(header.clone());
    for cells in &rows {
        line(cells.iter().map(String::as_str).collect());
    }
    s
}
