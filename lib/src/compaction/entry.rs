//! The compaction entry (`transcript.md` §4.7): its fields in the order SessionManager
//! writes them, where it attaches, the manual hardening rule, and writing it to the
//! transcript atomically (the original bytes plus one line, through a temp file that is
//! fsync'd and renamed over the transcript with the store's update, [`super::commit`]).

use std::io::{Read, Write};
use std::path::PathBuf;

use serde_json::{json, Map, Value};
use thiserror::Error;

use crate::fs::data_file::DataPath;

use super::commit::{CommitError, TranscriptSide};
use super::index::Field;
use super::plan::{active_path, has_messages_before_kept_tail};
use super::scan::Scanned;
use crate::exit::{self, ExitCode};
use crate::js;
use crate::transcript::migrate::generate_short_id;

/// The transcript could not be written; it is unchanged.
#[derive(Debug, Error)]
pub enum EntryError {
    /// Writing the new transcript failed.
    #[error("{}: cannot write: {source}", path.display())]
    Write {
        /// The transcript.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// The file changed size while it was being compacted.
    #[error("{}: the transcript changed while it was being compacted; retry", path.display())]
    Changed {
        /// The transcript.
        path: PathBuf,
    },
}

impl ExitCode for EntryError {
    fn exit_code(&self) -> i32 {
        match self {
            EntryError::Write { .. } => exit::CANT_CREATE,
            EntryError::Changed { .. } => exit::TEMP_FAIL,
        }
    }
}

/// What goes into a compaction entry.
#[derive(Debug, Clone)]
pub struct EntryFields {
    /// The summary (file lists included).
    pub summary: String,
    /// The first kept entry.
    pub first_kept_entry_id: String,
    /// `tokensBefore`.
    pub tokens_before: f64,
    /// `details.readFiles`.
    pub read_files: Vec<String>,
    /// `details.modifiedFiles`.
    pub modified_files: Vec<String>,
}

/// The appended compaction.
#[derive(Debug, Clone)]
pub struct Appended {
    /// The entry as written.
    pub entry: Value,
    /// Its id.
    pub id: String,
    /// Its row in the scan.
    pub row: usize,
    /// Whether the manual hardening rule set `firstKeptEntryId` to its own id.
    pub hardened: bool,
    /// The `firstKeptEntryId` before hardening.
    pub planned_first_kept: String,
}

/// Builds the entry `SessionManager.appendCompaction` writes, attached where the next
/// append goes (`appendParentId`), and adds it to the scan in memory. With `harden`, the
/// manual rule of §4.7 is applied.
pub fn append_in_memory(
    scan: &mut Scanned,
    f: &EntryFields,
    now_ms: i64,
    harden: bool,
) -> Appended {
    let taken = |c: &str| scan.index.row_of(c).is_some();
    let id = generate_short_id(&taken);
    let mut m = Map::new();
    m.insert("type".into(), json!("compaction"));
    m.insert("id".into(), json!(id));
    m.insert(
        "parentId".into(),
        scan.index
            .append_parent_id()
            .map_or(Value::Null, |p| Value::String(p.to_string())),
    );
    m.insert("timestamp".into(), json!(js::to_iso_string(now_ms)));
    m.insert("summary".into(), json!(f.summary));
    m.insert("firstKeptEntryId".into(), json!(f.first_kept_entry_id));
    m.insert("tokensBefore".into(), number(f.tokens_before));
    m.insert(
        "details".into(),
        json!({"readFiles": f.read_files, "modifiedFiles": f.modified_files}),
    );
    m.insert("fromHook".into(), json!(false));
    let entry = Value::Object(m);
    let row = scan.push_row(entry.clone());
    let mut appended = Appended {
        entry,
        id: id.clone(),
        row,
        hardened: false,
        planned_first_kept: f.first_kept_entry_id.clone(),
    };
    if harden
        && !f.summary.trim().is_empty()
        && f.first_kept_entry_id != id
        && scan.index.leaf_id() == Some(id.as_str())
        && has_messages_before_kept_tail(&active_path(scan))
    {
        appended.entry["firstKeptEntryId"] = json!(id);
        let sym = scan.index.syms.intern(&id);
        scan.index.set_first_kept(row, Field::Str(sym));
        if let Some(a) = scan.added.iter_mut().find(|(i, _)| *i == row) {
            a.1["firstKeptEntryId"] = json!(id);
        }
        appended.hardened = true;
    }
    appended
}

/// A JSON number for a token count (integral values without a fraction).
pub fn number(f: f64) -> Value {
    if f.fract() == 0.0 && f.abs() < 9.0e15 {
        json!(f as i64)
    } else {
        serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)
    }
}

/// Prepares `path` as its first `bytes` bytes plus `line` (a newline first when the file
/// does not end with one): a synced temp file beside it (0600, `O_EXCL`) and an undo link
/// to the file as it is, put in place by [`super::commit::commit`] with the store.
pub fn prepare_appended(
    data: &DataPath,
    bytes: u64,
    ends_with_newline: bool,
    line: &str,
) -> Result<TranscriptSide, CompactWriteError> {
    let path = data.path();
    let err = |source| EntryError::Write {
        path: path.to_path_buf(),
        source,
    };
    // Read as a data file: never through a link, never a FIFO put there since the scan.
    let mut src = data
        .open_read()
        .map_err(|e| err(std::io::Error::other(e.to_string())))?
        .into_file();
    if src.metadata().map_err(err)?.len() != bytes {
        return Err(EntryError::Changed {
            path: path.to_path_buf(),
        }
        .into());
    }
    // A compaction is an append for the gateway: the file keeps its mode.
    let mode = data.mode_or(0o600);
    let side = TranscriptSide::replace(path, None, mode, |out| {
        let copied = std::io::copy(&mut (&mut src).take(bytes), out)?;
        if copied != bytes {
            return Err(std::io::Error::other("short copy"));
        }
        let mut tail = Vec::with_capacity(line.len() + 2);
        if !ends_with_newline {
            tail.push(b'\n');
        }
        tail.extend_from_slice(line.as_bytes());
        tail.push(b'\n');
        out.write_all(&tail)
    })?;
    Ok(side)
}

/// Prepares `path` rewritten as `text` (the repair pass's output) plus `line` when given:
/// like [`prepare_appended`], with the file's mode kept (the gateway's repair keeps it)
/// and refused when the file is no longer `original_len` bytes long.
pub fn prepare_replaced(
    data: &DataPath,
    original_len: u64,
    text: &[u8],
    line: Option<&str>,
) -> Result<TranscriptSide, CompactWriteError> {
    let path = data.path();
    let err = |source| EntryError::Write {
        path: path.to_path_buf(),
        source,
    };
    let now = data
        .open_read()
        .map_err(|e| err(std::io::Error::other(e.to_string())))?
        .size();
    if now != original_len {
        return Err(EntryError::Changed {
            path: path.to_path_buf(),
        }
        .into());
    }
    let mode = data.mode_or(0o600);
    let side = TranscriptSide::replace(path, None, mode, |out| {
        out.write_all(text)?;
        if let Some(line) = line {
            if !text.is_empty() && !text.ends_with(b"\n") {
                out.write_all(b"\n")?;
            }
            out.write_all(line.as_bytes())?;
            out.write_all(b"\n")?;
        }
        Ok(())
    })?;
    Ok(side)
}

/// Why [`prepare_appended`] failed: the transcript changed, or a write failed.
#[derive(Debug, Error)]
pub enum CompactWriteError {
    /// The transcript could not be read or changed.
    #[error(transparent)]
    Entry(#[from] EntryError),
    /// A write failed (nothing was changed).
    #[error(transparent)]
    Commit(#[from] CommitError),
}

impl ExitCode for CompactWriteError {
    fn exit_code(&self) -> i32 {
        match self {
            CompactWriteError::Entry(e) => e.exit_code(),
            CompactWriteError::Commit(e) => e.exit_code(),
        }
    }
}
