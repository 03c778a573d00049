//! The store as maintenance needs it, read entry by entry: the few facts the rules use
//! per entry ([`Facts`]) instead of the whole entry tree, so a 100k-entry store costs
//! little more memory than its text; and the write-back, entry by entry.
//!
//! Every entry goes through exactly the pipeline of [`crate::store::SessionStore`]: the
//! load pass (JavaScript key order, prompt hydration, [`normalize_entry_with_holes`]) and,
//! before a write, the save pass ([`normalize_entry_fields_with_holes`] with the entry's
//! load-time holes) and the prompt-blob projection. The gateway's preview measures entries
//! after the load pass; its apply path after the save pass: [`PassMode`] chooses.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::atomic_file::replace_file;
use crate::jsjson;
use crate::session_key::{is_durable_entry, js_trim};
use crate::store::normalize::{
    is_safe_session_id, is_valid_transcript_session_id, normalize_entry_fields_with_holes,
    normalize_entry_with_holes, EntryVerdict, Holes,
};
use crate::store::prompt_blobs::{
    self, hydrate_entry_cached, project_for_persistence, BlobCache, PromptBlob,
};
use crate::store::scan::StoreScan;
use crate::store::{SaveOutcome, StoreError};

/// What the rules need to know about one entry.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Facts {
    /// The store key.
    pub key: String,
    /// `updatedAt` when it is a number.
    pub updated_at: Option<f64>,
    /// `sessionId` (non-empty).
    pub session_id: Option<String>,
    /// `sessionFile`.
    pub session_file: Option<String>,
    /// Protected by its key or chat type (§4.2), the preserve set aside.
    pub durable: bool,
    /// `compactionCheckpoints[].{pre,post}Compaction.sessionFile`, trimmed, non-empty.
    pub checkpoint_files: Vec<String>,
    /// The prompt-blob hash the persisted entry points to.
    pub blob_hash: Option<String>,
    /// A blob the persisted entry needs: (hash, bytes).
    pub blob: Option<(String, u64)>,
    /// Length of the entry's chunk (`  "<key>": {…}`) in the written store.
    pub chunk_len: i64,
    /// Whether `--fix-missing` repaired its `sessionFile`.
    pub repaired: bool,
}

impl Facts {
    /// The facts of an entry already normalised (`durable` and blobs computed here).
    pub fn of(key: &str, entry: &Map<String, Value>, sessions_dir: &Path) -> Self {
        let mut facts = Facts::of_without_blobs(key, entry);
        if entry.contains_key("skillsSnapshot") {
            let (projected, needed) = project_for_persistence(entry, sessions_dir);
            facts.set_blobs(projected.as_ref().unwrap_or(entry), &needed);
        }
        facts
    }

    /// The facts but the blob ones.
    fn of_without_blobs(key: &str, entry: &Map<String, Value>) -> Self {
        let str_of = |k: &str| entry.get(k).and_then(Value::as_str).map(str::to_string);
        let mut checkpoint_files = Vec::new();
        if let Some(Value::Array(cps)) = entry.get("compactionCheckpoints") {
            for cp in cps {
                for side in ["preCompaction", "postCompaction"] {
                    if let Some(f) = cp
                        .get(side)
                        .and_then(|s| s.get("sessionFile"))
                        .and_then(Value::as_str)
                        .map(js_trim)
                        .filter(|f| !f.is_empty())
                    {
                        checkpoint_files.push(f.to_string());
                    }
                }
            }
        }
        Facts {
            key: key.to_string(),
            updated_at: entry.get("updatedAt").and_then(Value::as_f64),
            session_id: str_of("sessionId").filter(|s| !s.is_empty()),
            session_file: str_of("sessionFile"),
            durable: is_durable_entry(key, entry),
            checkpoint_files,
            ..Default::default()
        }
    }

    /// Sets the blob facts from the entry's persisted form and the blobs it needs.
    fn set_blobs(&mut self, persisted: &Map<String, Value>, needed: &[PromptBlob]) {
        self.blob_hash = persisted
            .get("skillsSnapshot")
            .and_then(|s| s.get("promptRef"))
            .filter(|r| r.get("algorithm").and_then(Value::as_str) == Some("sha256"))
            .and_then(|r| r.get("hash"))
            .and_then(Value::as_str)
            .map(str::to_string);
        self.blob = needed.first().map(|b| {
            let hash = b
                .path
                .file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or("")
                .to_string();
            (hash, b.bytes.len() as u64)
        });
    }

    /// The facts and the written chunk of an entry after the load (and save) pass, with
    /// the blobs it needs: the entry is projected for persistence once.
    fn with_chunk(
        key: &str,
        entry: &Map<String, Value>,
        sessions_dir: &Path,
    ) -> (Self, String, Vec<PromptBlob>) {
        let (projected, needed) = project_for_persistence(entry, sessions_dir);
        let persisted = projected.as_ref().unwrap_or(entry);
        let mut f = Facts::of_without_blobs(key, entry);
        if entry.contains_key("skillsSnapshot") {
            f.set_blobs(persisted, &needed);
        }
        let chunk = chunk_text(key, persisted);
        f.chunk_len = chunk.len() as i64;
        (f, chunk, needed)
    }
}

/// Which normalisation the facts describe.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PassMode {
    /// After the load pass (the preview); chunks measured only when `chunks` is set.
    Preview {
        /// Measure chunk lengths (for the disk budget).
        chunks: bool,
    },
    /// After the save pass, with the written chunks kept (the apply path).
    Apply,
}

/// A store read for maintenance.
#[derive(Debug)]
pub struct StoreFacts {
    path: PathBuf,
    sessions_dir: PathBuf,
    scan: StoreScan,
    /// The surviving entries, in JavaScript key order (until taken).
    entries: Vec<Facts>,
    /// For each surviving entry, its raw index in the scan.
    raw_index: Vec<usize>,
    /// Apply mode: each entry's written chunk and the blobs it needs (indices in `blobs`).
    chunks: Vec<(String, Vec<usize>)>,
    /// The blobs entries need, each once.
    blobs: Vec<PromptBlob>,
    blob_ids: HashMap<PathBuf, usize>,
    changed_on_load: bool,
}

/// The fields that decide an entry's facts, read without building the entry. The load
/// normalisation touches only `sessionId`, `sessionFile` and `updatedAt` among them (and
/// `skillsSnapshot`, which sends the entry down the full path).
#[derive(serde::Deserialize)]
struct Peek {
    #[serde(rename = "sessionId", default, deserialize_with = "present")]
    session_id: Option<Value>,
    #[serde(rename = "sessionFile", default, deserialize_with = "present")]
    session_file: Option<Value>,
    #[serde(rename = "updatedAt", default, deserialize_with = "present")]
    updated_at: Option<Value>,
    #[serde(rename = "chatType", default, deserialize_with = "present")]
    chat_type: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    origin: Option<Value>,
    #[serde(
        rename = "compactionCheckpoints",
        default,
        deserialize_with = "present"
    )]
    checkpoints: Option<Value>,
    #[serde(rename = "skillsSnapshot", default, deserialize_with = "present_any")]
    skills: Option<()>,
}

/// A present field, `null` included (absent stays `None` through `default`).
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    <Value as serde::Deserialize>::deserialize(d).map(Some)
}

fn present_any<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<()>, D::Error> {
    <serde::de::IgnoredAny as serde::Deserialize>::deserialize(d).map(|_| Some(()))
}

/// What a peek concluded.
enum Peeked {
    /// The facts, exactly as the full load pass would give them.
    Facts(Facts),
    /// The gateway drops the entry.
    Dropped,
    /// Take the full path.
    Full,
}

/// The facts of a raw entry from its few deciding fields (`normalizePersistedSessionEntryShape`
/// applied to them alone).
fn peek_facts(key: &str, raw: &str) -> Peeked {
    // serde also reads an array into a struct (fields by position): only objects peek.
    if !raw.starts_with('{') {
        return Peeked::Full;
    }
    let Ok(p) = serde_json::from_str::<Peek>(raw) else {
        return Peeked::Full;
    };
    if p.skills.is_some() {
        return Peeked::Full;
    }
    let has_file = matches!(&p.session_file, Some(Value::String(s)) if !js_trim(s).is_empty());
    let session_id = match &p.session_id {
        None => None,
        Some(Value::String(raw)) if is_safe_session_id(raw) => {
            let t = js_trim(raw);
            (is_valid_transcript_session_id(t) || has_file).then(|| t.to_string())
        }
        Some(_) => return Peeked::Dropped,
    };
    let session_file = match p.session_file {
        Some(Value::String(s)) => Some(s),
        _ => None,
    };
    let updated_at = p.updated_at.map(|u| {
        u.as_f64()
            .filter(|n| n.is_finite() && *n >= 0.0)
            .unwrap_or(0.0)
    });
    let mut mini = Map::new();
    if let Some(c) = p.chat_type {
        mini.insert("chatType".into(), c);
    }
    if let Some(o) = p.origin {
        mini.insert("origin".into(), o);
    }
    if let Some(c) = p.checkpoints {
        mini.insert("compactionCheckpoints".into(), c);
    }
    let mut f = Facts::of(key, &mini, Path::new("/"));
    f.session_id = session_id;
    f.session_file = session_file;
    f.updated_at = updated_at;
    Peeked::Facts(f)
}

/// An entry (as [`StoreScan::entry_value`] parses it) put through the load pass; `None`
/// when the gateway drops it.
fn load_pass(
    value: Option<Value>,
    sessions_dir: &Path,
    blobs: &mut BlobCache,
) -> Option<(Map<String, Value>, Holes, bool)> {
    let Value::Object(mut entry) = value? else {
        return None;
    };
    let mut changed = hydrate_entry_cached(&mut entry, sessions_dir, blobs);
    let mut holes = Holes::default();
    match normalize_entry_with_holes(&mut entry, &mut holes) {
        EntryVerdict::Drop => None,
        EntryVerdict::Keep { changed: c } => {
            changed |= c;
            Some((entry, holes, changed))
        }
    }
}

/// The chunk of an entry as written (`  "<key>": {…}`), from its persisted form.
fn chunk_text(key: &str, persisted: &Map<String, Value>) -> String {
    let mut out = String::with_capacity(512);
    out.push_str("  ");
    jsjson::write_string(&mut out, key);
    out.push_str(": ");
    jsjson::write_object(&mut out, persisted, Some(1));
    out
}

impl StoreFacts {
    /// Reads the store at `path` (missing: empty; malformed: the same errors as a full
    /// load) and computes every entry's facts.
    pub fn read(path: &Path, sessions_dir: &Path, mode: PassMode) -> Result<Self, StoreError> {
        let scan = StoreScan::open(path)?;
        let mut out = StoreFacts {
            path: path.to_path_buf(),
            sessions_dir: sessions_dir.to_path_buf(),
            changed_on_load: scan.text().starts_with('\u{feff}'),
            entries: Vec::with_capacity(scan.len()),
            raw_index: Vec::with_capacity(scan.len()),
            chunks: Vec::new(),
            blobs: Vec::new(),
            blob_ids: HashMap::new(),
            scan,
        };
        let mut blobs = BlobCache::default();
        for i in 0..out.scan.len() {
            let key = out.scan.key(i);
            if mode == (PassMode::Preview { chunks: false }) {
                match peek_facts(key, out.scan.raw_entry(i)) {
                    Peeked::Facts(f) => {
                        out.entries.push(f);
                        out.raw_index.push(i);
                        continue;
                    }
                    Peeked::Dropped => continue,
                    Peeked::Full => {}
                }
            }
            let Some((mut entry, mut holes, changed)) =
                load_pass(out.scan.entry_value(i), sessions_dir, &mut blobs)
            else {
                out.changed_on_load = true;
                continue;
            };
            out.changed_on_load |= changed;
            match mode {
                PassMode::Preview { chunks: false } => {
                    out.entries.push(Facts::of(key, &entry, sessions_dir));
                }
                PassMode::Preview { chunks: true } => {
                    out.entries
                        .push(Facts::with_chunk(key, &entry, sessions_dir).0);
                }
                PassMode::Apply => {
                    if normalize_entry_fields_with_holes(&mut entry, &mut holes)
                        == EntryVerdict::Drop
                    {
                        continue;
                    }
                    let (f, chunk, needed) = Facts::with_chunk(key, &entry, sessions_dir);
                    let ids = out.intern_blobs(needed);
                    out.entries.push(f);
                    out.chunks.push((chunk, ids));
                }
            }
            out.raw_index.push(i);
        }
        Ok(out)
    }

    /// Keeps one copy of each blob (entries mostly share a few prompts).
    fn intern_blobs(&mut self, needed: Vec<PromptBlob>) -> Vec<usize> {
        needed
            .into_iter()
            .map(|b| match self.blob_ids.get(&b.path) {
                Some(&id) => id,
                None => {
                    self.blob_ids.insert(b.path.clone(), self.blobs.len());
                    self.blobs.push(b);
                    self.blobs.len() - 1
                }
            })
            .collect()
    }

    /// The store file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// How many entries survived the load.
    pub fn len(&self) -> usize {
        self.raw_index.len()
    }

    /// Whether no entry survived the load.
    pub fn is_empty(&self) -> bool {
        self.raw_index.is_empty()
    }

    /// The key of entry `i`.
    pub fn key(&self, i: usize) -> &str {
        self.scan.key(self.raw_index[i])
    }

    /// Moves the facts out (into a working set).
    pub fn take_facts(&mut self) -> Vec<Facts> {
        std::mem::take(&mut self.entries)
    }

    /// Entry `i` after the load pass, with `session_file` set when given (for display).
    pub fn entry(&self, i: usize, session_file: Option<&str>) -> Map<String, Value> {
        let blobs = &mut BlobCache::default();
        let mut e = load_pass(
            self.scan.entry_value(self.raw_index[i]),
            &self.sessions_dir,
            blobs,
        )
        .map(|(e, _, _)| e)
        .unwrap_or_default();
        if let Some(f) = session_file {
            e.insert("sessionFile".into(), Value::String(f.to_string()));
        }
        e
    }

    /// Repairs entry `i`'s `sessionFile` as the gateway's upsert does (a clone: no
    /// load-time holes; then, when applying, the save pass) and returns its new facts.
    pub fn repair(&mut self, i: usize, session_file: &str, mode: PassMode) -> Option<Facts> {
        let key = self.key(i).to_string();
        let blobs = &mut BlobCache::default();
        let (mut entry, _, _) = load_pass(
            self.scan.entry_value(self.raw_index[i]),
            &self.sessions_dir,
            blobs,
        )?;
        entry.insert(
            "sessionFile".into(),
            Value::String(session_file.to_string()),
        );
        if mode == PassMode::Apply {
            normalize_entry_fields_with_holes(&mut entry, &mut Holes::default());
        }
        let (mut f, chunk, needed) = Facts::with_chunk(&key, &entry, &self.sessions_dir);
        f.repaired = true;
        if mode == PassMode::Apply {
            let ids = self.intern_blobs(needed);
            self.chunks[i] = (chunk, ids);
        }
        Some(f)
    }

    /// Writes the entries marked alive (apply mode), atomically and 0600, unless the text
    /// would be byte-identical to the file (and nothing changed on load). Blobs the kept
    /// entries need are written first.
    pub fn save(&self, alive: &[bool]) -> Result<SaveOutcome, StoreError> {
        let kept = || {
            self.chunks
                .iter()
                .zip(alive)
                .filter(|(_, a)| **a)
                .map(|(c, _)| c)
        };
        let len: usize = kept().map(|(c, _)| c.len() + 2).sum();
        let mut text = String::with_capacity(len + 4);
        let mut any = false;
        for (chunk, _) in kept() {
            text.push_str(if any { ",\n" } else { "{\n" });
            text.push_str(chunk);
            any = true;
        }
        text.push_str(if any { "\n}" } else { "{}" });
        let disk = self.scan.text();
        let existed = !disk.is_empty();
        if existed && !self.changed_on_load && disk == text {
            return Ok(SaveOutcome::Unchanged);
        }
        // Each blob once (the gateway rewrites or touches it once per entry: same result).
        let mut written = vec![false; self.blobs.len()];
        for (_, ids) in kept() {
            for &id in ids {
                if std::mem::replace(&mut written[id], true) {
                    continue;
                }
                let blob = &self.blobs[id];
                prompt_blobs::write_blob(blob).map_err(|source| StoreError::Blob {
                    path: blob.path.clone(),
                    source,
                })?;
            }
        }
        replace_file(&self.path, text.as_bytes(), 0o600)?;
        Ok(SaveOutcome::Written)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{LoadOptions, SessionStore};

    /// The lean pass writes exactly what the full store would.
    #[test]
    fn writes_what_session_store_writes() {
        let d = tempfile::tempdir().unwrap();
        let texts = [
            r#"{"b": {"sessionId": "x", "updatedAt": 1, "provider": "telegram"}, "42": 5, "a": {"sessionId": "../evil"}, "c": {"updatedAt": "z", "9": 1, "lastThreadId": {}, "origin": {"threadId": 7}}, "b": {"updatedAt": 2}}"#,
            "{\n  \"a\": {\n    \"sessionId\": \"x\",\n    \"updatedAt\": 1\n  }\n}",
            "\u{feff}{\"a\": {}}",
        ];
        for text in texts {
            let p = d.path().join("sessions.json");
            std::fs::write(&p, text).unwrap();
            let facts = StoreFacts::read(&p, d.path(), PassMode::Apply).unwrap();
            let alive = vec![true; facts.len()];
            let ours = facts.save(&alive).unwrap();
            let ours_text = std::fs::read_to_string(&p).unwrap();
            std::fs::write(&p, text).unwrap();
            let mut store = SessionStore::load(&p, LoadOptions::default()).unwrap();
            let theirs = store.save().unwrap();
            assert_eq!(ours, theirs, "{text}");
            assert_eq!(ours_text, std::fs::read_to_string(&p).unwrap(), "{text}");
        }
    }

    /// The peek gives the same facts as the full load pass.
    #[test]
    fn peek_matches_the_full_pass() {
        let cases = [
            r#"{"sessionId": " abc ", "updatedAt": "x", "chatType": "GROUP"}"#,
            r#"{"sessionId": "abc:def", "updatedAt": -1}"#,
            r#"{"sessionId": "abc:def", "sessionFile": "f.jsonl", "updatedAt": null}"#,
            r#"{"sessionId": "abc:def", "sessionFile": "  "}"#,
            r#"{"sessionId": 5}"#,
            r#"{"sessionId": "../evil"}"#,
            r#"{"sessionFile": 7, "origin": {"chatType": "channel"}, "updatedAt": 1.5}"#,
            r#"{"sessionId": "x", "compactionCheckpoints": [{"preCompaction": {"sessionFile": "a"}, "postCompaction": {"sessionFile": "b"}}], "provider": "telegram"}"#,
            r#"{"origin": "x", "chatType": 5}"#,
            r#"{"updatedAt": 12345678901234567890}"#,
            r#"["abc", "f.jsonl", 5]"#,
            r#"{"sessionId": "a", "sessionId": "b"}"#,
        ];
        let mut peeked = 0;
        for raw in cases {
            let mut value = crate::jsjson::parse_value(raw).ok();
            value.iter_mut().for_each(crate::jsjson::apply_js_key_order);
            let full = load_pass(value, Path::new("/s"), &mut BlobCache::default())
                .map(|(e, _, _)| Facts::of("agent:main:k", &e, Path::new("/s")));
            match peek_facts("agent:main:k", raw) {
                Peeked::Facts(f) => {
                    peeked += 1;
                    assert_eq!(Some(f), full, "{raw}")
                }
                Peeked::Dropped => assert_eq!(full, None, "{raw}"),
                Peeked::Full => {}
            }
        }
        assert!(peeked >= 8);
    }

    #[test]
    fn facts_of_an_entry() {
        let e: Map<String, Value> = serde_json::from_str(
            r#"{"sessionId": "s", "updatedAt": 5, "sessionFile": "f.jsonl", "chatType": "group",
                "compactionCheckpoints": [{"preCompaction": {"sessionFile": " a "}, "postCompaction": {}}]}"#,
        )
        .unwrap();
        let f = Facts::of("agent:main:x", &e, Path::new("/s"));
        assert_eq!(f.updated_at, Some(5.0));
        assert_eq!(f.session_id.as_deref(), Some("s"));
        assert!(f.durable);
        assert_eq!(f.checkpoint_files, ["a"]);
    }
}
