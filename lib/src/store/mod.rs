//! `sessions.json`: the session store (sessionKey → SessionEntry), loaded with the
//! gateway's normalisations and written back byte-identical to
//! `JSON.stringify(store, null, 2)` (`store.md` §2).
//!
//! Deliberate differences from the gateway (spec README, decisions 1–2): a malformed or
//! non-object store is an error and is never replaced; every write is an fsync'd atomic
//! replace.

pub mod entry_lookup;
pub mod lifecycle;
pub mod list_row;
pub mod row_text;
pub mod session_list;
pub mod store_lock;
pub mod transcript_path;

pub mod canonical;
pub mod deciding_fields;
pub mod entry_view;
pub mod file_text;
pub mod normalize;
pub mod prompt_blobs;
pub mod save_diff;
pub mod scan;

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};
use thiserror::Error;

use crate::exit::{self, ExitCode};
use crate::fs::atomic_file::{AtomicWriteError, PendingReplace};
use crate::js::jsjson;
use file_text::{FileText, FileTextError};
use normalize::{
    normalize_entry_fields_with_holes, normalize_entry_with_holes, EntryVerdict, Holes,
};

/// A store that cannot be read or written.
#[derive(Debug, Error)]
pub enum StoreError {
    /// The file exists but could not be read.
    #[error("{path}: cannot read store: {source}")]
    Read {
        /// The store.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file is not valid JSON (or not UTF-8, or empty).
    #[error("{path}:{line}:{column}: malformed store: {message}")]
    Malformed {
        /// The store.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What is wrong.
        message: String,
    },
    /// The path is not a regular file (a FIFO, a device, a directory): never read.
    #[error(transparent)]
    Unusable(crate::fs::data_file::DataFileError),
    /// The file is valid JSON but not an object.
    #[error(
        "{path}: malformed store: top level is {found}, expected an object of sessionKey → entry"
    )]
    NotObject {
        /// The store.
        path: PathBuf,
        /// The JSON type found.
        found: &'static str,
    },
    /// A skill-prompt blob could not be written.
    #[error("{path}: cannot write prompt blob: {source}")]
    Blob {
        /// The blob file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The store could not be replaced.
    #[error(transparent)]
    Write(#[from] AtomicWriteError),
    /// Another program wrote the store in place while it was being read (the gateway
    /// never does: it renames a new file over it); nothing was replaced.
    #[error("{path}: changed by another program while being read; not replaced, run again")]
    ChangedWhileRead {
        /// The store.
        path: PathBuf,
    },
    /// The agent keeps its sessions in the agent database, which failed to read (or which
    /// a write would have to change).
    #[error(transparent)]
    AgentDb(#[from] crate::agent_db::AgentDbError),
}

impl StoreError {
    /// Whether the store was replaced despite the error (its directory could not be
    /// synced after the rename).
    pub fn replaced(&self) -> bool {
        matches!(self, StoreError::Write(e) if e.replaced())
    }
}

impl ExitCode for StoreError {
    fn exit_code(&self) -> i32 {
        match self {
            StoreError::Read { .. } => exit::CANT_CREATE,
            StoreError::Unusable(e) => e.exit_code(),
            StoreError::Malformed { .. } | StoreError::NotObject { .. } => exit::DATA_ERR,
            StoreError::Blob { .. } | StoreError::Write(_) => exit::CANT_CREATE,
            StoreError::ChangedWhileRead { .. } => exit::TEMP_FAIL,
            StoreError::AgentDb(e) => e.exit_code(),
        }
    }
}

/// What to do while loading.
#[derive(Debug, Clone, Copy)]
pub struct LoadOptions {
    /// Restore skill prompts from their blobs (§2.6); read-only listings can skip it.
    pub hydrate_prompts: bool,
}

impl Default for LoadOptions {
    fn default() -> Self {
        LoadOptions {
            hydrate_prompts: true,
        }
    }
}

/// A loaded session store.
#[derive(Debug, Clone)]
pub struct SessionStore {
    path: PathBuf,
    entries: Map<String, Value>,
    disk_text: Option<std::sync::Arc<FileText>>,
    changed_on_load: bool,
    warnings: Vec<String>,
    /// Keys the gateway's load left `undefined` inside an entry (they keep their slot for
    /// the save pass); only entries that have any.
    holes: std::collections::HashMap<String, Holes>,
}

/// What [`SessionStore::save`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SaveOutcome {
    /// The serialisation equals the file's bytes: nothing was written.
    Unchanged,
    /// The file was replaced.
    Written,
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Splits serde_json's "… at line L column C" into the message alone.
fn strip_position(msg: &str) -> String {
    match msg.rfind(" at line ") {
        Some(i) => msg[..i].to_string(),
        None => msg.to_string(),
    }
}

/// Parses store text into its top-level object, in JavaScript key order.
pub fn parse_store_text(path: &Path, text: &str) -> Result<Map<String, Value>, StoreError> {
    if text.trim().is_empty() {
        return Err(StoreError::Malformed {
            path: path.to_path_buf(),
            line: 1,
            column: 1,
            message: "the file is empty (a store is a JSON object; `{}` is an empty store)".into(),
        });
    }
    let mut value: Value = jsjson::parse_value(text).map_err(|e| StoreError::Malformed {
        path: path.to_path_buf(),
        line: e.line(),
        column: e.column(),
        message: strip_position(&e.to_string()),
    })?;
    jsjson::apply_js_key_order(&mut value);
    match value {
        Value::Object(map) => Ok(map),
        other => Err(StoreError::NotObject {
            path: path.to_path_buf(),
            found: json_type(&other),
        }),
    }
}

/// The text of a store file, read and checked (UTF-8, byte-order mark skipped).
#[derive(Debug)]
pub struct StoreText {
    /// The whole file (mapped, when large: [`FileText`]).
    pub text: FileText,
    /// Where the JSON starts (3 when a byte-order mark was skipped).
    pub body_start: usize,
    /// Warnings (a skipped byte-order mark).
    pub warnings: Vec<String>,
}

/// Reads a store file; `None` when it does not exist.
pub fn read_store_text(path: &Path) -> Result<Option<StoreText>, StoreError> {
    // The storage seam: an agent whose sessions live in its database is read from there.
    if let Some(db_path) = crate::agent_db::layout::db_for_store(path) {
        return read_db_store_text(path, &db_path).map(Some);
    }
    let text = match FileText::read(path) {
        Ok(t) => t,
        Err(FileTextError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(FileTextError::Io(source)) => {
            return Err(StoreError::Read {
                path: path.to_path_buf(),
                source,
            })
        }
        Err(FileTextError::Unusable(e)) => return Err(StoreError::Unusable(e)),
        Err(FileTextError::NotUtf8 { line, column }) => {
            return Err(StoreError::Malformed {
                path: path.to_path_buf(),
                line,
                column,
                message: "invalid UTF-8".into(),
            })
        }
    };
    let mut warnings = Vec::new();
    let body_start = if text.starts_with('\u{feff}') {
        warnings.push(format!(
            "{}: skipped a UTF-8 byte-order mark",
            path.display()
        ));
        3
    } else {
        0
    };
    Ok(Some(StoreText {
        text,
        body_start,
        warnings,
    }))
}

/// The store text of an agent database (`agent_db::store_text`), with its warnings: a
/// schema newer than the one we know, legacy files still beside the database.
fn read_db_store_text(store_path: &Path, db_path: &Path) -> Result<StoreText, StoreError> {
    read_db_store_text_with(store_path, db_path, crate::agent_db::store_text::read)
}

/// [`read_db_store_text`] with the rows `read` takes from the database.
fn read_db_store_text_with(
    store_path: &Path,
    db_path: &Path,
    read: impl FnOnce(
        &crate::agent_db::AgentDb,
    )
        -> Result<crate::agent_db::store_text::DbStoreText, crate::agent_db::AgentDbError>,
) -> Result<StoreText, StoreError> {
    let db = crate::agent_db::AgentDb::open(db_path)?;
    let t = read(&db)?;
    let mut warnings = t.warnings;
    warnings.extend(db.schema.warning(db_path));
    let leftovers = crate::agent_db::layout::legacy_leftovers(store_path);
    if !leftovers.is_empty() {
        warnings.push(format!(
            "{}: {} legacy file(s) beside the agent database, which the gateway no longer reads (first: {}); `claw-transcript check --all` says which hold history",
            db_path.display(),
            leftovers.len(),
            leftovers[0].display()
        ));
    }
    Ok(StoreText {
        text: FileText::from(t.text),
        body_start: 0,
        warnings,
    })
}

impl SessionStore {
    /// An empty store at `path` that has never been written.
    pub fn empty(path: impl Into<PathBuf>) -> Self {
        SessionStore {
            path: path.into(),
            entries: Map::new(),
            disk_text: None,
            changed_on_load: false,
            warnings: Vec::new(),
            holes: std::collections::HashMap::new(),
        }
    }

    /// Loads `path` with every load normalisation of §2.3. A missing file is an empty
    /// store; an empty, malformed, non-UTF-8 or non-object file is an error.
    pub fn load(path: &Path, opts: LoadOptions) -> Result<Self, StoreError> {
        match read_store_text(path)? {
            Some(t) => Self::from_text(path, t, opts),
            None => Ok(SessionStore::empty(path)),
        }
    }

    /// The store of an agent database holding only the row keyed `key` (none when there
    /// is no such row), loaded as [`SessionStore::load`] loads every row; `None` when the
    /// store is not on the database layout. An exact-key lookup reads one row, not all.
    pub fn load_db_key(
        path: &Path,
        key: &str,
        opts: LoadOptions,
    ) -> Result<Option<Self>, StoreError> {
        let Some(db_path) = crate::agent_db::layout::db_for_store(path) else {
            return Ok(None);
        };
        let t = read_db_store_text_with(path, &db_path, |db| {
            crate::agent_db::store_text::read_key(db, key)
        })?;
        Self::from_text(path, t, opts).map(Some)
    }

    fn from_text(path: &Path, t: StoreText, opts: LoadOptions) -> Result<Self, StoreError> {
        let StoreText {
            text,
            body_start,
            warnings,
        } = t;
        let body = &text[body_start..];
        let raw = parse_store_text(path, body)?;
        let had_bom = body_start != 0;
        let mut store = SessionStore {
            path: path.to_path_buf(),
            entries: Map::with_capacity(raw.len()),
            disk_text: None,
            changed_on_load: had_bom,
            warnings,
            holes: std::collections::HashMap::new(),
        };
        let sessions_dir = store.sessions_dir();
        for (key, value) in raw {
            let Value::Object(mut entry) = value else {
                store.changed_on_load = true;
                continue;
            };
            if opts.hydrate_prompts && prompt_blobs::hydrate_entry(&mut entry, &sessions_dir) {
                store.changed_on_load = true;
            }
            let mut holes = Holes::default();
            match normalize_entry_with_holes(&mut entry, &mut holes) {
                EntryVerdict::Drop => store.changed_on_load = true,
                EntryVerdict::Keep { changed } => {
                    store.changed_on_load |= changed;
                    if !holes.is_empty() {
                        store.holes.insert(key.clone(), holes);
                    }
                    store.entries.insert(key, Value::Object(entry));
                }
            }
        }
        store.disk_text = Some(std::sync::Arc::new(text));
        Ok(store)
    }

    /// The store file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The sessions directory: the store's directory, where transcripts live.
    pub fn sessions_dir(&self) -> PathBuf {
        crate::install::paths::absolutize(
            self.path.parent().unwrap_or(Path::new(".")),
            &std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/")),
        )
    }

    /// Whether the file existed when loaded.
    pub fn existed(&self) -> bool {
        self.disk_text.is_some()
    }

    /// Whether loading changed anything (dropped or normalised entries, hydrated prompts).
    pub fn changed_on_load(&self) -> bool {
        self.changed_on_load
    }

    /// Warnings raised while loading (e.g. a skipped byte-order mark).
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// The entries, in JavaScript key order.
    pub fn entries(&self) -> &Map<String, Value> {
        &self.entries
    }

    /// Inserts or replaces one entry (a replaced entry starts afresh: no load-time holes).
    pub fn set_entry(&mut self, key: &str, entry: Map<String, Value>) {
        self.holes.remove(key);
        self.entries.insert(key.to_string(), Value::Object(entry));
    }

    /// Removes one entry, keeping the others' order; returns it.
    pub fn remove_entry(&mut self, key: &str) -> Option<Value> {
        self.holes.remove(key);
        self.entries.shift_remove(key)
    }

    /// The entries, for mutation (call [`SessionStore::save`] afterwards).
    pub fn entries_mut(&mut self) -> &mut Map<String, Value> {
        &mut self.entries
    }

    /// One entry as an object.
    pub fn entry(&self, key: &str) -> Option<&Map<String, Value>> {
        self.entries.get(key).and_then(Value::as_object)
    }

    /// The exact text a save would write, and the prompt blobs it needs.
    pub fn serialize(&self) -> (String, Vec<prompt_blobs::PromptBlob>) {
        let sessions_dir = self.sessions_dir();
        let mut blobs = Vec::new();
        let mut out = String::with_capacity(self.disk_text.as_ref().map_or(1024, |t| t.len() + 64));
        if self.entries.is_empty() {
            return ("{}".to_string(), blobs);
        }
        out.push('{');
        for (i, key) in jsjson::js_key_order(&self.entries).into_iter().enumerate() {
            out.push_str(if i == 0 { "\n  " } else { ",\n  " });
            jsjson::write_string(&mut out, key);
            out.push_str(": ");
            let value = &self.entries[key.as_str()];
            match value.as_object() {
                Some(entry) => {
                    let (projected, mut needed) =
                        prompt_blobs::project_for_persistence(entry, &sessions_dir);
                    blobs.append(&mut needed);
                    match projected {
                        Some(p) => jsjson::write_object(&mut out, &p, Some(1)),
                        None => jsjson::write_pretty_at(&mut out, value, 1),
                    }
                }
                None => jsjson::write_pretty_at(&mut out, value, 1),
            }
        }
        out.push_str("\n}");
        (out, blobs)
    }

    /// Re-normalises every entry (as the gateway does before a save), then writes the
    /// store atomically (0600) unless the bytes would be identical.
    pub fn save(&mut self) -> Result<SaveOutcome, StoreError> {
        let prepared = self.prepare_save()?;
        let text = prepared.text.clone();
        let outcome = prepared.commit()?;
        if let Some(text) = text {
            self.disk_text = Some(std::sync::Arc::new(FileText::from(text)));
            self.changed_on_load = false;
        }
        Ok(outcome)
    }

    /// The first half of [`SessionStore::save`]: every entry re-normalised, the prompt
    /// blobs written and the new text in a synced temp file beside the store, which
    /// [`PreparedStoreSave::commit`] puts in place. The store is not touched; dropping the
    /// result removes the temp file and the blobs this call created.
    #[must_use = "the store is not written until `commit`; dropped, the temp file and new blobs are removed"]
    pub fn prepare_save(&mut self) -> Result<PreparedStoreSave, StoreError> {
        crate::agent_db::layout::refuse_write(&self.path, "writing the session store")?;
        self.normalize_for_save();
        let (text, blobs) = self.serialize();
        let mut prepared = PreparedStoreSave::default();
        if !self.changed_on_load
            && self.disk_text.as_deref().map(FileText::as_str) == Some(text.as_str())
        {
            return Ok(prepared);
        }
        for blob in &blobs {
            let existed = std::fs::symlink_metadata(&blob.path).is_ok();
            prompt_blobs::write_blob(blob).map_err(|source| StoreError::Blob {
                path: blob.path.clone(),
                source,
            })?;
            if !existed {
                prepared.new_blobs.push(blob.path.clone());
            }
        }
        prepared.pending = Some(PendingReplace::prepare(&self.path, text.as_bytes(), 0o600)?);
        prepared.text = Some(text);
        Ok(prepared)
    }

    /// The save's pass over the entries: every entry re-normalised, those the gateway
    /// drops removed.
    fn normalize_for_save(&mut self) {
        let holes = &mut self.holes;
        self.entries.retain(|k, v| match v {
            Value::Object(entry) => {
                let verdict = match holes.get_mut(k) {
                    Some(h) => normalize_entry_fields_with_holes(entry, h),
                    None => normalize_entry_fields_with_holes(entry, &mut Holes::default()),
                };
                !matches!(verdict, EntryVerdict::Drop)
            }
            _ => false,
        });
    }

    /// What a save would change, entry by entry, against the file as it is
    /// ([`save_diff`]): the entry meant and every other the save's normalisation rewrites
    /// or drops. Nothing is written.
    pub fn save_diff(&self) -> Result<Vec<save_diff::EntryDiff>, StoreError> {
        let mut saved = self.clone();
        saved.normalize_for_save();
        let (text, _) = saved.serialize();
        let after = parse_store_text(&self.path, &text)?;
        let before = match &self.disk_text {
            Some(t) => {
                let text = t.as_str();
                parse_store_text(&self.path, text.strip_prefix('\u{feff}').unwrap_or(text))?
            }
            None => Map::new(),
        };
        Ok(save_diff::diff_stores(&before, &after))
    }
}

/// A store write prepared by [`SessionStore::prepare_save`], not yet in place.
#[must_use = "the store is not written until `commit`; dropped, the temp file and new blobs are removed"]
#[derive(Debug, Default)]
pub struct PreparedStoreSave {
    /// The temp file; `None`: the text is the file's already.
    pending: Option<PendingReplace>,
    /// Prompt blobs that did not exist before (removed when this is dropped uncommitted).
    new_blobs: Vec<PathBuf>,
    /// The text written.
    text: Option<String>,
}

impl PreparedStoreSave {
    /// Puts the new store in place. On an error the store is as it was, unless the error
    /// says it was replaced ([`StoreError::replaced`]).
    pub fn commit(mut self) -> Result<SaveOutcome, StoreError> {
        let Some(pending) = self.pending.take() else {
            return Ok(SaveOutcome::Unchanged);
        };
        let committed = pending.commit();
        if committed.as_ref().is_ok() || committed.as_ref().is_err_and(AtomicWriteError::replaced) {
            // The blobs belong to the store in place.
            self.new_blobs.clear();
        }
        committed?;
        Ok(SaveOutcome::Written)
    }
}

impl Drop for PreparedStoreSave {
    fn drop(&mut self) {
        for p in &self.new_blobs {
            let _ = std::fs::remove_file(p);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A store large enough to be mapped comes back whole, byte for byte.
    #[test]
    fn a_large_store_is_read_whole() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("sessions.json");
        let entry = "  \"agent:main:x\": {\n    \"sessionId\": \"é😀\"\n  }";
        let n = (file_text::MAP_MIN as usize) / entry.len() + 2;
        let text = format!("{{\n{}\n}}", vec![entry; n].join(",\n"));
        assert!(text.len() as u64 >= file_text::MAP_MIN);
        std::fs::write(&p, &text).unwrap();
        let st = read_store_text(&p).unwrap().unwrap();
        assert!(st.text.is_mapped());
        assert_eq!(*st.text, *text);
        // Invalid UTF-8 near the end is still reported by line.
        let mut bytes = text.into_bytes();
        let at = bytes.len() - 10;
        bytes[at] = 0xff;
        std::fs::write(&p, &bytes).unwrap();
        assert!(matches!(
            read_store_text(&p),
            Err(StoreError::Malformed { line, .. }) if line > 1
        ));
    }
}
