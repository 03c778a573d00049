//! The transcript as the gateway compacts it: its repair pass (`repairSessionFileIfNeeded`,
//! `transcript.md` §1.8) runs first, under the compaction's write lock, and compaction
//! works on what it wrote. A transcript the scan finds in need of repair (a line that is
//! not JSON, an empty error reply, a blank user message, a tool call the pass would
//! answer) is repaired here in memory with [`crate::transcript::repair::repair_content`],
//! exactly as `claw-transcript repair` would rewrite it, and scanned from there.
//!
//! `check` and `plan` read that view and write nothing; `run` writes the repaired text
//! with the compaction in one commit ([`super::commit`]), so a failure leaves the
//! transcript as it was, unrepaired. Header recovery and version migrations are not
//! part of this: such files are still refused (`claw-transcript repair` / `migrate`).

use serde_json::{json, Value};

use super::scan::{self, ScanError, Scanned};
use crate::fs::data_file::DataPath;
use crate::transcript::repair::{self, RepairReport};

/// What the repair pass changes before compacting.
#[derive(Debug, Clone)]
pub struct RepairFirst {
    /// What it found and did.
    pub report: RepairReport,
    /// The size of the file as it was read (a commit checks it is unchanged).
    pub original_len: u64,
}

impl RepairFirst {
    /// The `repairFirst` document: the counts `claw-transcript repair` prints.
    pub fn to_json(&self) -> Value {
        let r = &self.report;
        json!({
            "droppedLines": r.dropped_lines,
            "droppedLineNumbers": r.dropped_line_numbers,
            "rewrittenAssistantMessages": r.rewritten_assistant_messages,
            "rewrittenUserMessages": r.rewritten_user_messages,
            "removedCorruptedImageBlocks": r.removed_corrupted_image_blocks,
            "insertedToolResults": r.inserted_tool_results,
            "summary": r.summary(),
        })
    }
}

/// A scan of the transcript as compaction sees it.
#[derive(Debug)]
pub struct View {
    /// The scan (of the repaired text when [`View::repair`] is set).
    pub scan: Scanned,
    /// The repair that comes first, if any.
    pub repair: Option<RepairFirst>,
}

/// The optional `repairFirst` of a view as JSON (`null` when the file needs none).
pub fn repair_json(repair: Option<&RepairFirst>) -> Value {
    repair.map_or(Value::Null, RepairFirst::to_json)
}

/// Scans `data` as the gateway compacts it: repaired in memory first when it needs it
/// (with `repair`; without, the scan's refusal stands). `now_ms` stamps synthetic tool
/// results, as `claw-transcript repair --now` does.
pub fn scan(data: &DataPath, now_ms: i64, repair: bool) -> Result<View, ScanError> {
    let refusal = match scan::scan_file(data) {
        Ok(scan) => return Ok(View { scan, repair: None }),
        Err(e @ ScanError::NeedsRepair { .. }) if repair => e,
        Err(e) => return Err(e),
    };
    let content = data.read().map_err(ScanError::from)?;
    let outcome = repair::repair_content(&content, now_ms, &mut repair::new_uuid);
    // The pass would skip the file (an invalid header, nothing left): the refusal stands.
    let Some(bytes) = outcome.bytes else {
        return Err(refusal);
    };
    let original_len = content.len() as u64;
    drop(content);
    let scan = scan::scan_bytes(data, bytes)?;
    Ok(View {
        scan,
        repair: Some(RepairFirst {
            report: outcome.report,
            original_len,
        }),
    })
}
