//! The session listing of `openclaw sessions --json`: filters, order, limit and the
//! envelope (`store.md` §4.11). Rows themselves come from [`crate::store::list_row`].
//!
//! clawstate's own selection (`--older-than`, `--sort`) changes which rows the envelope
//! holds and in which order, never a row: the `--json` rows stay the gateway's, field for
//! field. The transcript's path and size (`transcriptPath`, `transcriptBytes`) are added
//! to the NDJSON rows and the table only ([`ListResult::rows_with_transcripts`]).

use serde_json::{Map, Value};

use crate::install::context::StateContext;
use crate::install::targets::StoreTarget;
use crate::js::duration::{parse_duration_ms, DurationUnit};
use crate::report::human_format::{context_percent, format_k_tokens, format_time_ago};
use crate::report::terminal_text::{escape_line, escape_path};
use crate::report::text_table::{Cell, Layout, TextTable, Tone};
use crate::session::session_key::{parse_agent_session_key, tool_kind};
use crate::store::entry_view::{Lean, LeanReader};
use crate::store::list_row::{list_row, ListContext};
use crate::store::row_text::write_row_text;
use crate::store::scan::StoreScan;
use crate::store::transcript_path::TranscriptResolver;
use crate::store::StoreError;

/// The default `--limit`.
pub const DEFAULT_LIMIT: usize = 100;

/// Parsed listing options.
#[derive(Debug, Clone, Default)]
pub struct ListOptions {
    /// `--active MIN`.
    pub active_minutes: Option<u64>,
    /// `--limit N`; `None` for `all`.
    pub limit: Option<usize>,
    /// `--kinds`: the kinds to keep (empty = all), in the words of the gateway's
    /// `sessions_list` tool (main, hook, node, other, …) or of the Kind column (direct,
    /// spawn-child, global, …); a row is kept when either of its kinds is named.
    pub kinds: Vec<String>,
    /// `--older-than`: only entries whose `updatedAt` is at least this long ago (an entry
    /// without `updatedAt` has no age and is left out).
    pub older_than_ms: Option<u64>,
    /// `--sort`: the order of the rows (before the limit).
    pub sort: ListSort,
}

/// The order of a listing: largest first, ties in store order.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ListSort {
    /// Newest `updatedAt` first (the gateway's order).
    #[default]
    Updated,
    /// Largest transcript first (entries without one last).
    Size,
    /// Most `totalTokens` first (entries without a count last).
    Tokens,
}

impl ListSort {
    /// Parses `--sort`.
    pub fn parse(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "updated" | "updatedat" | "age" => Ok(ListSort::Updated),
            "size" | "bytes" => Ok(ListSort::Size),
            "tokens" | "totaltokens" => Ok(ListSort::Tokens),
            _ => Err(format!(
                "--sort: unknown order {s:?} (expected: updated, size, tokens)"
            )),
        }
    }
}

/// The kinds of the gateway's `sessions_list` tool (`kinds` of its request).
const KINDS: [&str; 6] = ["main", "group", "cron", "hook", "node", "other"];
/// The kinds the table's Kind column (and `kind` of a row) prints (`classifySessionKind`).
const ROW_KINDS: [&str; 6] = [
    "direct",
    "spawn-child",
    "group",
    "global",
    "cron",
    "unknown",
];

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
            if !KINDS.contains(&k.as_str()) && !ROW_KINDS.contains(&k.as_str()) {
                let mut all: Vec<&str> = KINDS.to_vec();
                all.extend(ROW_KINDS.iter().filter(|k| !KINDS.contains(k)));
                return Err(format!(
                    "--kinds: unknown kind {k:?} (expected: {})",
                    all.join(", ")
                ));
            }
            ks.push(k);
        }
        Ok(ListOptions {
            active_minutes,
            limit,
            kinds: ks,
            older_than_ms: None,
            sort: ListSort::Updated,
        })
    }

    /// Adds clawstate's own selection: `--older-than DURATION` (a bare number is days,
    /// as the maintenance settings read it) and `--sort`.
    pub fn with_selection(
        mut self,
        older_than: Option<&str>,
        sort: Option<&str>,
    ) -> Result<Self, String> {
        if let Some(d) = older_than {
            self.older_than_ms = Some(
                parse_duration_ms(d, DurationUnit::Days)
                    .map_err(|e| format!("--older-than: {e}"))?,
            );
        }
        if let Some(s) = sort {
            self.sort = ListSort::parse(s)?;
        }
        Ok(self)
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
    resolvers: Vec<TranscriptResolver>,
    now_ms: i64,
}

impl ListResult {
    /// How many rows are printed.
    pub fn count(&self) -> usize {
        self.selected.len()
    }

    /// The printed rows, in order, built one at a time.
    pub fn rows(&self) -> impl Iterator<Item = Map<String, Value>> + '_ {
        self.rows_with(true)
    }

    /// The rows; with `lean`, an entry in canonical text (as the gateway writes every
    /// entry) is read field by field ([`LeanReader`]), any other entry is parsed whole.
    fn rows_with(&self, lean: bool) -> impl Iterator<Item = Map<String, Value>> + '_ {
        self.rows_of(&self.selected, lean)
    }

    /// The rows of `selected` (a part of `self.selected`), as [`ListResult::rows_with`].
    fn rows_of<'s>(
        &'s self,
        selected: &'s [(usize, usize)],
        lean: bool,
    ) -> impl Iterator<Item = Map<String, Value>> + 's {
        let mut reader = LeanReader::default();
        selected.iter().filter_map(move |&(si, ei)| {
            let scan = &self.scans[si];
            let (key, ctx) = (scan.key(ei), &self.contexts[si]);
            if lean && scan.is_direct() {
                match reader.read(scan.text(), scan.range(ei)) {
                    Lean::Kept(entry) => return Some(list_row(key, &entry, self.now_ms, ctx)),
                    Lean::Dropped => return None,
                    Lean::Full => {}
                }
            }
            let entry = scan.entry(ei)?;
            Some(list_row(key, &entry, self.now_ms, ctx))
        })
    }

    /// [`ListResult::rows`] with each entry's transcript: `transcriptPath` (`null` when it
    /// does not resolve) and `transcriptBytes` (`null` when no regular file is there).
    pub fn rows_with_transcripts(&self) -> impl Iterator<Item = Map<String, Value>> + '_ {
        self.selected.iter().filter_map(move |&(si, ei)| {
            let scan = &self.scans[si];
            let entry = scan.entry(ei)?;
            let (path, bytes) = transcript_of(&self.resolvers[si], &entry);
            let mut row = list_row(scan.key(ei), &entry, self.now_ms, &self.contexts[si]);
            row.insert(
                "transcriptPath".into(),
                path.map_or(Value::Null, |p| {
                    Value::from(p.to_string_lossy().into_owned())
                }),
            );
            row.insert(
                "transcriptBytes".into(),
                bytes.map_or(Value::Null, Value::from),
            );
            Some(row)
        })
    }
}

/// An entry's transcript and its size (links not followed; nothing is opened).
fn transcript_of(
    resolver: &TranscriptResolver,
    entry: &Map<String, Value>,
) -> (Option<std::path::PathBuf>, Option<u64>) {
    let text = |k: &str| entry.get(k).and_then(Value::as_str);
    match resolver.resolve(text("sessionId"), text("sessionFile")) {
        Ok(p) => {
            let size = match p.facts() {
                Ok(Some(f)) if f.kind == rustix::fs::FileType::RegularFile => Some(f.size),
                _ => None,
            };
            (Some(p.path().to_path_buf()), size)
        }
        Err(_) => (None, None),
    }
}

/// The tool kind of a key as an admin means it: the `sessions_list` classifier applied
/// to the key without its `agent:<id>:` prefix (so `agent:main:cron:x` is `cron`).
pub fn list_kind(
    key: &str,
    entry: &Map<String, Value>,
    ctx: &crate::session::session_key::KeyContext,
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
    let resolvers: Vec<TranscriptResolver> = targets
        .iter()
        .map(|t| TranscriptResolver::for_target(ctx, t))
        .collect();
    // Filter, order and cut on (sort key, position); rows are built only when printed.
    let mut candidates: Vec<(f64, usize, usize)> = Vec::new();
    for (si, scan) in scans.iter().enumerate() {
        for ei in 0..scan.len() {
            let updated = if opts.kinds.is_empty() && opts.sort == ListSort::Updated {
                let Some(u) = scan.peek_updated_at(ei) else {
                    continue;
                };
                u
            } else {
                let Some(entry) = scan.entry(ei) else {
                    continue;
                };
                let key = scan.key(ei);
                let (tool, row) = (
                    list_kind(key, &entry, &key_ctx),
                    crate::session::session_key::cli_row_kind(key, &entry),
                );
                if !opts.kinds.is_empty() && !opts.kinds.iter().any(|k| k == tool || k == row) {
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
            if let Some(ms) = opts.older_than_ms {
                match updated {
                    Some(u) if (ctx.now_ms as f64 - u) >= ms as f64 => {}
                    _ => continue,
                }
            }
            let key = match opts.sort {
                ListSort::Updated => updated.unwrap_or(0.0),
                // Those without a size or count sort after every number.
                ListSort::Size => scan
                    .entry(ei)
                    .and_then(|e| transcript_of(&resolvers[si], &e).1)
                    .map_or(-1.0, |b| b as f64),
                ListSort::Tokens => scan
                    .entry(ei)
                    .and_then(|e| e.get("totalTokens").and_then(Value::as_f64))
                    .map_or(-1.0, |t| t),
            };
            candidates.push((key, si, ei));
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
                crate::agent_db::layout::Layout::Db => {
                    crate::store::list_row::RowGeneration::Db2026_9
                }
                crate::agent_db::layout::Layout::Files => {
                    crate::store::list_row::RowGeneration::Files2026_7
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
        resolvers,
        now_ms: ctx.now_ms,
    })
}

/// Rows per part when a long listing is built on several threads.
const ROWS_PER_PART: usize = 2048;

impl ListResult {
    /// Appends the JSON rows of `part` (a part of `self.selected`) to `out`, each after
    /// `,\n    `, nested as the envelope nests them: an entry in canonical text is written
    /// straight from its text ([`write_row_text`]), any other built as a map and
    /// serialised.
    fn render_json_rows(&self, part: &[(usize, usize)], out: &mut String) {
        let mut reader = LeanReader::default();
        for &(si, ei) in part {
            let scan = &self.scans[si];
            let (key, ctx) = (scan.key(ei), &self.contexts[si]);
            if scan.is_direct() {
                match reader.read(scan.text(), scan.range(ei)) {
                    Lean::Kept(entry) => {
                        out.push_str(",\n    ");
                        write_row_text(out, key, &entry, self.now_ms, ctx, 2);
                        continue;
                    }
                    Lean::Dropped => continue,
                    Lean::Full => {}
                }
            }
            if let Some(entry) = scan.entry(ei) {
                out.push_str(",\n    ");
                let row = list_row(key, &entry, self.now_ms, ctx);
                crate::js::jsjson::write_object(out, &row, Some(2));
            }
        }
    }

    /// Writes the text `render` gives for each part of the rows, in order; a long
    /// listing is rendered in parts on up to four threads, written as each wave of parts
    /// is done, so memory stays a few parts' text above the store's. The first
    /// `strip_first` bytes of the first text written are cut (the first row's comma).
    fn write_rows<W: std::io::Write + ?Sized>(
        &self,
        w: &mut W,
        render: &(dyn Fn(&[(usize, usize)], &mut String) + Sync),
        strip_first: usize,
    ) -> std::io::Result<()> {
        let mut first = true;
        let mut put = |w: &mut W, text: &str| -> std::io::Result<()> {
            if text.is_empty() {
                return Ok(());
            }
            let text = if std::mem::take(&mut first) {
                &text[strip_first..]
            } else {
                text
            };
            w.write_all(text.as_bytes())
        };
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get().clamp(1, 4));
        if threads == 1 || self.selected.len() < 4 * ROWS_PER_PART {
            let mut out = String::with_capacity(1 << 17);
            for part in self.selected.chunks(64) {
                render(part, &mut out);
                if out.len() > 1 << 16 {
                    put(w, &out)?;
                    out.clear();
                }
            }
            return put(w, &out);
        }
        for wave in self.selected.chunks(ROWS_PER_PART * threads) {
            let parts: Vec<String> = std::thread::scope(|s| {
                let handles: Vec<_> = wave
                    .chunks(ROWS_PER_PART)
                    .map(|part| {
                        s.spawn(move || {
                            let mut out = String::with_capacity(part.len() * 1024);
                            render(part, &mut out);
                            out
                        })
                    })
                    .collect();
                handles
                    .into_iter()
                    .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                    .collect()
            });
            for part in &parts {
                put(w, part)?;
            }
        }
        Ok(())
    }
}

/// Writes the JSON envelope exactly as `openclaw sessions --json` prints it (plus a
/// final newline), streaming one row at a time.
pub fn write_envelope_json<W: std::io::Write + ?Sized>(
    w: &mut W,
    r: &ListResult,
) -> std::io::Result<()> {
    use crate::js::jsjson::{write_pretty_at, write_string};
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
        w.write_all(out.as_bytes())?;
        out.clear();
        // Each row after a comma; the first row's comma is cut.
        r.write_rows(w, &|part, out| r.render_json_rows(part, out), 1)?;
        out.push_str("\n  ]");
    }
    out.push_str("\n}\n");
    w.write_all(out.as_bytes())
}

/// Writes the rows as NDJSON, one compact object per line.
pub fn write_ndjson<W: std::io::Write + ?Sized>(w: &mut W, r: &ListResult) -> std::io::Result<()> {
    let mut out = String::with_capacity(4096);
    for row in r.rows_with_transcripts() {
        crate::js::jsjson::write_object(&mut out, &row, None);
        out.push('\n');
        if out.len() > 1 << 16 {
            w.write_all(out.as_bytes())?;
            out.clear();
        }
    }
    w.write_all(out.as_bytes())
}

/// A byte count as the table shows it: `512B`, `3.4K`, `12M`, `1.1G` (1024-based).
fn human_bytes(n: u64) -> String {
    let units = ["B", "K", "M", "G", "T"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < units.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{n}B")
    } else if v < 10.0 {
        format!("{v:.1}{}", units[u])
    } else {
        format!("{v:.0}{}", units[u])
    }
}

/// A readable table of the listing, for terminals; data escaped as one line per cell
/// (`terminal_text`), so no key breaks the table; ages and token counts as the gateway
/// writes them (`human_format`), coloured as its table is when `layout` says so.
pub fn render_table(r: &ListResult, layout: &Layout) -> String {
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
    header.extend([
        "Kind",
        "Key",
        "Age",
        "Model",
        "Tokens (ctx %)",
        "Size",
        "Transcript",
        "Flags",
    ]);
    let mut table = TextTable::new(&header);
    for (row, target) in r
        .rows_with_transcripts()
        .zip(r.selected.iter().map(|s| s.0))
    {
        let row = &row;
        let mut cells = Vec::new();
        if aggregate {
            cells.push(Cell::new(&str_of(row, "agentId"), Tone::AccentBright));
        }
        let kind = str_of(row, "kind");
        let kind_tone = match kind.as_str() {
            "group" => Tone::AccentBright,
            "global" => Tone::Warn,
            "direct" => Tone::Accent,
            _ => Tone::Muted,
        };
        cells.push(Cell::new(&kind, kind_tone));
        cells.push(Cell::new(&str_of(row, "key"), Tone::Accent));
        let age = match row.get("ageMs").and_then(Value::as_f64) {
            Some(ms) => format_time_ago(ms),
            None => "unknown".into(),
        };
        cells.push(Cell::new(&age, Tone::Muted));
        cells.push(Cell::new(&str_of(row, "model"), Tone::Info));
        let ctx_tokens = row
            .get("contextTokens")
            .and_then(Value::as_f64)
            .filter(|&c| c != 0.0);
        let ctx_label = ctx_tokens.map_or("?".into(), format_k_tokens);
        let tokens = match row.get("totalTokens").and_then(Value::as_f64) {
            Some(t) => {
                let pct = ctx_tokens.and_then(|c| context_percent(t, c));
                let tone = match pct {
                    Some(p) if p >= 95.0 => Tone::Error,
                    Some(p) if p >= 80.0 => Tone::Warn,
                    Some(p) if p >= 60.0 => Tone::Success,
                    Some(_) => Tone::Muted,
                    None => Tone::Plain,
                };
                let pct = pct.map_or("?".into(), |p| p.to_string());
                Cell::new(
                    &format!("{}/{ctx_label} ({pct}%)", format_k_tokens(t)),
                    tone,
                )
            }
            None => Cell::new(&format!("unknown/{ctx_label} (?%)"), Tone::Muted),
        };
        cells.push(tokens);
        let size = row
            .get("transcriptBytes")
            .and_then(Value::as_u64)
            .map_or_else(|| "-".into(), human_bytes);
        cells.push(Cell::new(&size, Tone::Plain));
        // Inside its sessions directory, the file's name is enough.
        let dir = r.resolvers[target].sessions_dir();
        let file = match row.get("transcriptPath").and_then(Value::as_str) {
            Some(p) => match std::path::Path::new(p).strip_prefix(dir) {
                Ok(rel) => rel.to_string_lossy().into_owned(),
                Err(_) => p.to_string(),
            },
            None => "-".into(),
        };
        cells.push(Cell::new(&file, Tone::Muted));
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
        cells.push(Cell::new(&flags.join(" "), Tone::Muted));
        table.push(cells);
    }
    s.push_str(&table.render(layout));
    s
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::install::context::GlobalOptions;
    use crate::install::paths::Environment;
    use crate::install::targets::TargetSelection;

    /// A seeded xorshift.
    pub(crate) struct Rng(pub(crate) u64);

    impl Rng {
        fn below(&mut self, n: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % n as u64) as usize
        }
    }

    /// Members (name, value text) a generated entry picks from: the fields the row reads,
    /// the deciding fields the load rewrites, unknown fields, deep JSON, escapes, non-ASCII
    /// text and numbers `JSON.stringify` prints differently from how they are written.
    fn member_pool(deep: &str) -> Vec<(&'static str, String)> {
        let mut pool: Vec<(&'static str, String)> = [
            ("updatedAt", "1779990000000"),
            ("updatedAt", "\"soon\""),
            ("updatedAt", "null"),
            ("updatedAt", "-5"),
            ("updatedAt", "1e21"),
            ("sessionFile", "\"/x/a.jsonl\""),
            ("label", "\"tab\\there \\\"q\\\" \\\\ \\u0001 \\u2028 h\u{e9}llo \u{65e5}\u{672c} \u{1f600}\""),
            ("label", "\"caf\\u00e9\""),
            ("model", "\"  claude-sonnet-4 \""),
            ("model", "\"openai/gpt-5\""),
            ("modelProvider", "\"anthropic\""),
            ("providerOverride", "\" OpenAI \""),
            ("modelOverride", "\"openai/gpt-4.1\""),
            ("modelOverride", "\"\""),
            ("contextTokens", "1e21"),
            ("contextTokens", "-0"),
            ("contextTokens", "0.1"),
            ("totalTokens", "12345678901234567890"),
            ("totalTokens", "-3"),
            ("totalTokens", "1.5e-7"),
            ("totalTokens", "\"9\""),
            ("totalTokensFresh", "false"),
            ("inputTokens", "-0.0"),
            ("outputTokens", "1E+2"),
            ("chatType", "\"group\""),
            ("chatType", "\"direct\""),
            ("chatType", "\" Channel \""),
            ("origin", "{\"chatType\": \"direct\", \"provider\": \"telegram\", \"to\": \"telegram:42\", \"accountId\": \"a1\"}"),
            ("deliveryContext", "{\"channel\": \"discord\", \"to\": \" discord:7 \"}"),
            ("lastChannel", "\"slack\""),
            ("lastTo", "\"slack:U1\""),
            ("channel", "\"whatsapp\""),
            ("provider", "\"signal\""),
            ("room", "\"#general\""),
            ("spawnedBy", "\"agent:main:main\""),
            ("spawnedBy", "\"\""),
            ("acp", "{\"backend\": \"codex\"}"),
            ("acp", "[]"),
            ("status", "\"running\""),
            ("responseUsage", "{\"mode\": \"full\", \"n\": [1, 2.50, -0]}"),
            ("zzUnknown", "{\"b\": 1, \"a\": [true, null, {\"2\": 0, \"1\": 1}]}"),
            ("\\u0041scaped", "\"name with an escape\""),
            ("sessionStartedAt", "1779000000000"),
            ("skillsSnapshot", "{\"prompt\": \"p\", \"skills\": []}"),
        ]
        .into_iter()
        .map(|(k, v)| (k, v.to_string()))
        .collect();
        pool.push(("deep", deep.to_string()));
        pool
    }

    /// A store of `n` generated entries; each entry written canonically (as the gateway
    /// writes it) unless `rng` picks compact text.
    pub(crate) fn store_text(rng: &mut Rng, n: usize) -> String {
        store_text_with(rng, n, 5, false)
    }

    /// [`store_text`] with one entry in `compact_one_in` written compactly (0: none, and
    /// nothing nested past [`crate::store::canonical::MAX_DEPTH`], so that the whole store
    /// is canonical) and, with `duplicates`, duplicate names in
    /// compact entries and duplicate store keys now and then.
    pub(crate) fn store_text_with(
        rng: &mut Rng,
        n: usize,
        compact_one_in: usize,
        duplicates: bool,
    ) -> String {
        let deep = format!("{}1{}", "[".repeat(40), "]".repeat(40));
        let deeper = format!("{}0{}", "{\"a\": ".repeat(120), "}".repeat(120));
        let pool = member_pool(&deep);
        let ids = [
            "s-ok",
            "../bad",
            "",
            "x y",
            "7f1c2a3b-0000-4000-8000-000000000001",
        ];
        let keys = [
            "agent:main:main",
            "agent:main:telegram:direct:42",
            "agent:main:discord:group:1",
            "agent:main:cron:nightly:run:1",
            "agent:main:subagent:abc",
            "agent:main:acp:abc",
            "agent:work:main",
            "global",
            "main",
            "Agent:Main:X\u{e9}",
        ];
        let mut out = String::from("{");
        for i in 0..n {
            let mut members: Vec<(String, String)> = Vec::new();
            if rng.below(10) != 0 {
                members.push((
                    "sessionId".into(),
                    format!("\"{}{i}\"", ids[rng.below(ids.len())]),
                ));
            }
            let compact = compact_one_in > 0 && rng.below(compact_one_in) == 0;
            for _ in 0..rng.below(12) {
                let (k, v) = &pool[rng.below(pool.len())];
                if (duplicates && compact) || !members.iter().any(|(m, _)| m == k) {
                    members.push((k.to_string(), v.clone()));
                }
            }
            // Nested past what the canonical check reads: only in stores not all canonical.
            if compact_one_in > 0 && rng.below(40) == 0 {
                members.push(("deeper".into(), deeper.clone()));
            }
            let mut entry = String::from("{");
            for (j, (k, v)) in members.iter().enumerate() {
                entry.push_str(if j == 0 { "" } else { "," });
                entry.push_str(&format!("\"{k}\":{v}"));
            }
            entry.push('}');
            let text = if compact {
                entry
            } else {
                let value = crate::js::jsjson::parse_value(&entry).unwrap();
                let mut s = String::new();
                crate::js::jsjson::write_pretty_at(&mut s, &value, 1);
                s
            };
            let key = if duplicates && i > 0 && rng.below(50) == 0 {
                format!("{}{}", keys[rng.below(keys.len())], rng.below(i))
            } else {
                format!("{}{}", keys[rng.below(keys.len())], i)
            };
            out.push_str(if i == 0 { "\n  " } else { ",\n  " });
            crate::js::jsjson::write_string(&mut out, &key);
            out.push_str(": ");
            out.push_str(&text);
        }
        out.push_str("\n}");
        out
    }

    /// A context for `--store store`, `HOME` and the state dir in `dir`.
    pub(crate) fn context(dir: &std::path::Path, store: &std::path::Path) -> StateContext {
        let env = Environment::from_vars([("HOME", dir.to_string_lossy().into_owned())], dir);
        StateContext::with_environment(
            env,
            GlobalOptions {
                state_dir: Some(dir.join("state")),
                config: None,
                targets: TargetSelection {
                    store: Some(store.to_string_lossy().into_owned()),
                    agent: None,
                    all_agents: false,
                },
                now: Some("1780000000000".into()),
                route: Default::default(),
            },
        )
        .unwrap()
    }

    /// The listing of a generated store at `path`, `--limit all`.
    fn listing(dir: &std::path::Path, store: &std::path::Path) -> ListResult {
        let ctx = context(dir, store);
        let targets = ctx.targets().unwrap();
        let opts = ListOptions::parse(None, Some("all"), &[]).unwrap();
        list_sessions(&ctx, &targets, &opts).unwrap()
    }

    /// A listing long enough to be built on several threads is written byte for byte as
    /// one thread writes the full-parse rows (JSON envelope and NDJSON).
    #[test]
    fn long_listings_in_parts_equal_one_pass() {
        let dir = tempfile::tempdir().unwrap();
        let store = dir.path().join("sessions.json");
        let mut rng = Rng(77);
        std::fs::write(&store, store_text(&mut rng, 8 * ROWS_PER_PART + 77)).unwrap();
        let r = listing(dir.path(), &store);
        assert!(r.count() > 4 * ROWS_PER_PART, "{}", r.count());
        let mut envelope = Vec::new();
        write_envelope_json(&mut envelope, &r).unwrap();
        let envelope = String::from_utf8(envelope).unwrap();
        let mut rows = String::new();
        let mut ndjson = String::new();
        for (i, row) in r.rows_with(false).enumerate() {
            rows.push_str(if i == 0 { "\n    " } else { ",\n    " });
            crate::js::jsjson::write_object(&mut rows, &row, Some(2));
        }
        // NDJSON rows also carry the transcript's path and size.
        for row in r.rows_with_transcripts() {
            crate::js::jsjson::write_object(&mut ndjson, &row, None);
            ndjson.push('\n');
        }
        let at = envelope.find("\"sessions\": [").unwrap() + "\"sessions\": [".len();
        assert_eq!(&envelope[at..], format!("{rows}\n  ]\n}}\n"));
        let mut nd = Vec::new();
        write_ndjson(&mut nd, &r).unwrap();
        assert_eq!(String::from_utf8(nd).unwrap(), ndjson);
    }

    /// The JSON envelope with its rows written straight from the store's text is byte
    /// for byte the envelope of the rows built as maps, from entries parsed whole (and
    /// from entries read field by field), on generated stores: wholly canonical (split
    /// in one canonical walk), mixed with compact entries, and with duplicate names and
    /// store keys (which the walk leaves to the parser).
    #[test]
    fn streamed_rows_equal_rows_built_as_maps() {
        let dir = tempfile::tempdir().unwrap();
        let store = dir.path().join("sessions.json");
        for (seed, compact_one_in, duplicates) in [
            (1u64, 0, false),
            (2, 0, false),
            (3, 5, false),
            (4, 3, true),
            (5, 0, true),
            (6, 2, true),
        ] {
            let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
            let text = store_text_with(&mut rng, 600, compact_one_in, duplicates);
            std::fs::write(&store, &text).unwrap();
            let r = listing(dir.path(), &store);
            // Canonical stores take the one walk; the others the parser.
            assert_eq!(
                r.scans[0].walked(),
                compact_one_in == 0 && !duplicates,
                "seed {seed}"
            );
            let mut envelope = Vec::new();
            write_envelope_json(&mut envelope, &r).unwrap();
            let envelope = String::from_utf8(envelope).unwrap();
            let at = envelope.find("\"sessions\": [").unwrap() + "\"sessions\": [".len();
            for lean in [false, true] {
                let mut rows = String::new();
                for (i, row) in r.rows_with(lean).enumerate() {
                    rows.push_str(if i == 0 { "\n    " } else { ",\n    " });
                    crate::js::jsjson::write_object(&mut rows, &row, Some(2));
                }
                assert_eq!(
                    &envelope[at..],
                    format!("{rows}\n  ]\n}}\n"),
                    "seed {seed}, lean {lean}"
                );
            }
            assert!(r.count() > 300, "seed {seed}: {}", r.count());
        }
    }

    /// The fast path (entries in canonical text read field by field) gives every row byte
    /// for byte as the full parse and normalisation of each entry does.
    #[test]
    fn lean_rows_equal_full_rows() {
        let dir = tempfile::tempdir().unwrap();
        let store = dir.path().join("sessions.json");
        let env = Environment::from_vars(
            [("HOME", dir.path().to_string_lossy().into_owned())],
            dir.path(),
        );
        for seed in 1..=6u64 {
            let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
            let text = store_text(&mut rng, 400);
            std::fs::write(&store, &text).unwrap();
            let ctx = StateContext::with_environment(
                env.clone(),
                GlobalOptions {
                    state_dir: Some(dir.path().join("state")),
                    config: None,
                    targets: TargetSelection {
                        store: Some(store.to_string_lossy().into_owned()),
                        agent: None,
                        all_agents: false,
                    },
                    now: Some("1780000000000".into()),
                    route: Default::default(),
                },
            )
            .unwrap();
            let targets = ctx.targets().unwrap();
            let opts = ListOptions::parse(None, Some("all"), &[]).unwrap();
            let r = list_sessions(&ctx, &targets, &opts).unwrap();
            let show = |rows: Vec<Map<String, Value>>| -> Vec<String> {
                rows.into_iter()
                    .map(|m| crate::js::jsjson::to_string_compact(&Value::Object(m)))
                    .collect()
            };
            let lean = show(r.rows_with(true).collect());
            let full = show(r.rows_with(false).collect());
            assert_eq!(lean.len(), r.count(), "seed {seed}");
            for (a, b) in lean.iter().zip(&full) {
                assert_eq!(a, b, "seed {seed}");
            }
            assert_eq!(lean.len(), full.len());
            // Not vacuous: most entries took the fast path, some the full parse.
            let scan = &r.scans[0];
            let mut reader = LeanReader::default();
            let (mut kept, mut dropped) = (0, 0);
            for i in 0..scan.len() {
                match reader.read(scan.text(), scan.range(i)) {
                    Lean::Kept(_) => kept += 1,
                    Lean::Dropped => dropped += 1,
                    Lean::Full => {}
                }
            }
            let lean = kept + dropped;
            assert!(kept > 0 && dropped > 0, "seed {seed}: {kept} {dropped}");
            assert!(
                lean > scan.len() / 2 && lean < scan.len(),
                "seed {seed}: {lean}"
            );
        }
    }
}
