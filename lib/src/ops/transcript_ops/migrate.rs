//! `claw-transcript migrate`: a version 1 or 2 transcript rewritten as version 3, as
//! SessionManager migrates it on open (`transcript.md` §2), under the write lock and
//! atomically. A file whose first row is not a header has it recovered first (the
//! original kept as `.corrupt-<ts>-<8hex>.jsonl`; the first header found, or a new one;
//! other `session` rows dropped) and its rows migrated by that header's version:
//! migrating the rows as they are would never converge (no header to mark as migrated).

use serde::Serialize;

use crate::install::context::StateContext;
use crate::transcript::{migrate, reader, repair, tree};

use super::locked_rewrite::{kept_original, locked_rewrite, Change};
use super::write_access::writable_session;
use super::TranscriptOpError;

/// What `migrate` did (or would do, for a dry run).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MigrateResult {
    /// The transcript, as shown.
    pub path: String,
    /// Whether nothing was written.
    pub dry_run: bool,
    /// The version found (missing = 1).
    pub from_version: f64,
    /// Whether anything was migrated.
    pub migrated: bool,
    /// Ids added by v1 → v2.
    pub ids_added: usize,
    /// `firstKeptEntryIndex` fields turned into ids.
    pub compactions_relinked: usize,
    /// `hookMessage` roles renamed to `custom`.
    pub hook_messages_renamed: usize,
    /// Whether the header was recovered first.
    pub header_recovered: bool,
    /// Where the original was kept.
    pub corrupt_copy: Option<String>,
}

/// Migrates `arg`'s transcript to version 3; refuses (65) a file with lines that are not
/// JSON, which the rewrite would drop. `warn` receives warnings.
pub fn migrate(
    ctx: &StateContext,
    arg: &str,
    dry_run: bool,
    warn: &mut dyn FnMut(&str),
) -> Result<MigrateResult, TranscriptOpError> {
    let s = writable_session(ctx, arg, dry_run, warn)?;
    let cwd = ctx.env.cwd().to_string_lossy().into_owned();
    let sid = s.session_id.clone().unwrap_or_else(repair::new_uuid);
    locked_rewrite(ctx, &s, dry_run, |content| {
        let t = reader::parse_bytes(content);
        if let Some(first) = t.skipped.first() {
            return Err(TranscriptOpError::NotJson {
                path: s.path.clone(),
                line: first.line,
                count: t.skipped.len(),
            });
        }
        let recovery = repair::recover_header(content, &sid, &cwd, ctx.now_ms);
        let (keep_original_as, corrupt_copy) = kept_original(&s, recovery.as_ref())?.unzip();
        let header_recovered = recovery.is_some();
        let (report, bytes) = match recovery {
            Some(r) => (r.migration, Some(r.bytes)),
            None => {
                let mut rows = t.values();
                let report = migrate::migrate_rows(&mut rows, &mut |taken| {
                    migrate::generate_short_id(taken)
                });
                let bytes = report.migrated.then(|| {
                    migrate::serialize_like_session_manager(
                        &tree::SessionIndex::build(rows),
                        ctx.now_ms,
                    )
                });
                (report, bytes)
            }
        };
        let result = MigrateResult {
            path: s.path.to_string_lossy().into_owned(),
            dry_run,
            from_version: report.from_version,
            migrated: report.migrated,
            ids_added: report.ids_added,
            compactions_relinked: report.compactions_relinked,
            hook_messages_renamed: report.hook_messages_renamed,
            header_recovered,
            corrupt_copy,
        };
        let change = match bytes {
            Some(bytes) => Change::Replace {
                keep_original_as,
                bytes,
            },
            None => Change::None,
        };
        Ok((change, result))
    })
}
