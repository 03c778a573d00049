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
use std::ops::Range;
use std::path::{Path, PathBuf};

use foldhash::fast::FixedState;
use serde_json::{Map, Value};

use super::halves::{fill_in_halves, Half};
use crate::fs::atomic_file::PendingReplace;
use crate::js;
use crate::js::jsjson;
use crate::session::entry_fields::EntryFields;
use crate::session::session_key::is_durable_entry;
use crate::store::canonical::{self, Member};
use crate::store::deciding_fields::{is_deciding_field, DecidingFields};
use crate::store::normalize::{
    is_safe_session_id, is_valid_transcript_session_id, normalize_entry_fields_with_holes,
    normalize_entry_with_holes, normalize_entry_with_holes_memo, DeliveryMemo, EntryVerdict, Holes,
};
use crate::store::prompt_blobs::{
    self, blob_path, hydrate_entry_cached, project_for_persistence, BlobCache, PromptBlob,
};
use crate::store::scan::{self, StoreScan};
use crate::store::{read_store_text, SaveOutcome, StoreError, StoreText};

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
    /// Protected by its key or chat type (`store.md` §4.2), the preserve set aside.
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
    fn of_without_blobs<M: EntryFields>(key: &str, entry: &M) -> Self {
        let str_of = |k: &str| entry.get(k).and_then(Value::as_str).map(str::to_string);
        let mut checkpoint_files = Vec::new();
        if let Some(Value::Array(cps)) = entry.get("compactionCheckpoints") {
            for cp in cps {
                for side in ["preCompaction", "postCompaction"] {
                    if let Some(f) = cp
                        .get(side)
                        .and_then(|s| s.get("sessionFile"))
                        .and_then(Value::as_str)
                        .map(js::trim)
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
    fn set_blobs<M: EntryFields>(&mut self, persisted: &M, needed: &[PromptBlob]) {
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
    chunks: Vec<(Chunk, Vec<usize>)>,
    /// The blobs entries need, each once.
    blobs: Vec<PromptBlob>,
    blob_ids: HashMap<PathBuf, usize>,
    /// The blobs [`StoreFacts::intern_blob`] found, by hash: the bytes asked for and the id
    /// (an id never changes once given).
    blob_found: HashMap<String, (u64, usize), FixedState>,
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
    let has_file = matches!(&p.session_file, Some(Value::String(s)) if !js::trim(s).is_empty());
    let session_id = match &p.session_id {
        None => None,
        Some(Value::String(raw)) if is_safe_session_id(raw) => {
            let t = js::trim(raw);
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
    let mut out = chunk_head(key, 512);
    jsjson::write_object(&mut out, persisted, Some(1));
    out
}

/// The start of an entry's chunk, `  "<key>": `, with room for `capacity` bytes.
fn chunk_head(key: &str, capacity: usize) -> String {
    let mut out = String::with_capacity(capacity);
    out.push_str("  ");
    jsjson::write_string(&mut out, key);
    out.push_str(": ");
    out
}

/// The text an entry is written as.
#[derive(Debug)]
enum Chunk {
    /// The entry's bytes in the file as read (`  "<key>": {…}`): already canonical.
    InFile(Range<usize>),
    /// Serialised anew.
    Owned(String),
}

impl Chunk {
    fn text<'a>(&'a self, file: &'a str) -> &'a str {
        match self {
            Chunk::InFile(r) => &file[r.clone()],
            Chunk::Owned(s) => s,
        }
    }
}

/// The canonical `promptRef` a load and a save give back as it is: `(hash, bytes)` when
/// `snapshot` has no `prompt` and ends with `promptRef: {version: 1, algorithm:
/// "sha256", hash, bytes}` exactly.
fn canonical_prompt_ref(snapshot: &Value) -> Option<(&str, u64)> {
    let Value::Object(s) = snapshot else {
        return None;
    };
    if s.contains_key("prompt") {
        return None;
    }
    let (last, Value::Object(r)) = s.iter().next_back()? else {
        return None;
    };
    if last != "promptRef" || r.len() != 4 {
        return None;
    }
    let mut it = r.iter();
    let (Some(("version", v)), Some(("algorithm", a)), Some(("hash", h)), Some(("bytes", n))) = (
        it.next().map(|(k, v)| (k.as_str(), v)),
        it.next().map(|(k, v)| (k.as_str(), v)),
        it.next().map(|(k, v)| (k.as_str(), v)),
        it.next().map(|(k, v)| (k.as_str(), v)),
    ) else {
        return None;
    };
    (v.as_u64() == Some(1) && a.as_str() == Some("sha256"))
        .then(|| Some((h.as_str()?, n.as_u64()?)))
        .flatten()
}

/// What the lean road remembers across the entries of one store (one per thread).
#[derive(Debug, Default)]
struct LeanCaches {
    blobs: BlobCache,
    delivery: DeliveryMemo,
    /// The entry at hand's deciding fields (emptied for each).
    fields: DecidingFields,
}

/// What the lean road made of one entry.
#[derive(Debug)]
enum Lean {
    /// The entry's facts after the pass; `changed`: the pass changed the entry;
    /// `identity`: its persisted text is its text as read.
    Kept {
        facts: Facts,
        changed: bool,
        identity: bool,
    },
    /// The gateway drops the entry.
    Dropped,
    /// Something the lean road does not decide: take the full pass.
    Full,
}

/// An entry whose text is canonical (`members`: its top-level members, as offsets into
/// `text`) put through the load pass (and the save pass when applying) on its deciding
/// fields alone ([`is_deciding_field`]): the other fields are neither read nor changed by
/// the passes, so the facts and the change are those of the whole entry, and when nothing
/// but the prompt round trip happened, the entry is written back as its text.
fn lean_entry(
    key: &str,
    text: &str,
    members: &[Member],
    sessions_dir: &Path,
    mode: PassMode,
    caches: &mut LeanCaches,
) -> Lean {
    let blobs = &mut caches.blobs;
    let mini = &mut caches.fields;
    mini.clear();
    for m in members {
        // Deciding names are plain ASCII: their literals hold no escape.
        let name = &text[m.key.start + 1..m.key.end - 1];
        if !is_deciding_field(name) {
            continue;
        }
        let Some(v) = canonical::read_value(&text[m.value.clone()]) else {
            return Lean::Full;
        };
        mini.insert_deciding(name, v);
    }
    // A snapshot ending with a valid canonical promptRef: the load restores the prompt
    // (a change) and the save puts the same promptRef back (the text stays).
    let mut restored: Option<(String, u64)> = None;
    let mut changed = false;
    let mut identity = true;
    if let Some(snapshot) = mini.get("skillsSnapshot") {
        match canonical_prompt_ref(snapshot) {
            Some((hash, bytes)) if blobs.round_trips(sessions_dir, hash, bytes) => {
                restored = Some((hash.to_string(), bytes));
                changed = true;
            }
            _ => {
                if hydrate_entry_cached(mini, sessions_dir, blobs) {
                    changed = true;
                    identity = false;
                }
            }
        }
    }
    let mut holes = Holes::default();
    match normalize_entry_with_holes_memo(mini, &mut holes, &mut caches.delivery) {
        EntryVerdict::Drop => return Lean::Dropped,
        EntryVerdict::Keep { changed: c } => {
            changed |= c;
            identity &= !c;
        }
    }
    if mode == PassMode::Apply
        && !identity
        && normalize_entry_fields_with_holes(mini, &mut holes) == EntryVerdict::Drop
    {
        return Lean::Dropped;
    }
    let mut facts = Facts::of_without_blobs(key, &*mini);
    match restored {
        Some((hash, bytes)) => {
            facts.blob_hash = Some(hash.clone());
            facts.blob = Some((hash, bytes));
        }
        None if mini.contains_key("skillsSnapshot") => {
            let (projected, needed) = project_for_persistence(&*mini, sessions_dir);
            identity &= projected.is_none();
            facts.set_blobs(projected.as_ref().unwrap_or(mini), &needed);
        }
        None => {}
    }
    Lean::Kept {
        facts,
        changed,
        identity,
    }
}

/// One top-level entry of a canonical store as the walk found it: `None` when not an
/// object (the gateway drops it), else what the lean road made of it.
type WalkedEntry = scan::WalkedEntry<Option<Lean>>;

/// Walks a whole canonical store body ([`scan::walk_canonical`]), every entry taking the
/// lean road; `None` when the store is not one the walk reads.
fn walk_canonical(
    st: &StoreText,
    sessions_dir: &Path,
    mode: PassMode,
) -> Option<Vec<Vec<WalkedEntry>>> {
    scan::walk_canonical(st, |caches: &mut LeanCaches, key, body, members| {
        members.map(|members| lean_entry(key, body, members, sessions_dir, mode, caches))
    })
}

/// From how many walked entries [`StoreFacts::from_walk`] gathers them on two threads.
const PARALLEL_GATHER_MIN: usize = 4096;

/// What one half of a walk gathers for [`StoreFacts`] besides the facts themselves.
#[derive(Debug, Default)]
struct Gathered {
    /// Every entry's key and value range, kept or dropped (the scan's).
    keys: Vec<(String, Range<usize>)>,
    /// Each kept entry's raw index.
    raw: Vec<usize>,
    /// Apply mode: each kept entry's chunk, its blob ids not yet interned.
    chunks: Vec<(Chunk, Vec<usize>)>,
    /// Apply mode: the kept entries (by place in this half) that need a blob.
    with_blob: Vec<usize>,
    /// Whether the load changed or dropped an entry.
    changed: bool,
}

impl Gathered {
    /// Gathers the entries of `part` (raw indices from `base`), every one kept as read
    /// or dropped, pushing the kept ones' facts to `facts`; its vectors have room for
    /// `room` entries (the second half's are appended to the first's).
    fn from_part(
        part: Vec<Vec<WalkedEntry>>,
        base: usize,
        room: usize,
        mode: PassMode,
        facts: &mut Half<'_, Facts>,
    ) -> Self {
        let mut out = Gathered {
            keys: Vec::with_capacity(room),
            raw: Vec::with_capacity(room),
            ..Default::default()
        };
        let wants_chunk = mode != PassMode::Preview { chunks: false };
        let apply = mode == PassMode::Apply;
        if apply {
            out.chunks.reserve(room);
        }
        for (i, e) in part.into_iter().flatten().enumerate() {
            let WalkedEntry {
                key,
                key_start,
                value,
                item: lean,
                ..
            } = e;
            let chunk = key_start - 2..value.end;
            out.keys.push((key, value));
            let Some(Lean::Kept {
                facts: mut f,
                changed,
                ..
            }) = lean
            else {
                // Not an object, or dropped: the gateway drops it.
                out.changed = true;
                continue;
            };
            out.changed |= changed;
            if wants_chunk {
                f.chunk_len = chunk.len() as i64;
                if apply {
                    if f.blob.is_some() {
                        out.with_blob.push(out.raw.len());
                    }
                    out.chunks.push((Chunk::InFile(chunk), Vec::new()));
                }
            }
            out.raw.push(base + i);
            facts.push(f);
        }
        out
    }
}

impl StoreFacts {
    /// Reads the store at `path` (missing: empty; malformed: the same errors as a full
    /// load) and computes every entry's facts.
    ///
    /// A store in the form the gateway writes it (see [`canonical`]) is walked once, in
    /// parallel, each entry taking the lean road ([`lean_entry`]); any other store is
    /// split by the JSON parser, and its canonical entries still take the lean road.
    pub fn read(path: &Path, sessions_dir: &Path, mode: PassMode) -> Result<Self, StoreError> {
        let st = read_store_text(path)?;
        let walked = st
            .as_ref()
            .and_then(|st| walk_canonical(st, sessions_dir, mode));
        let st = match (walked, st) {
            (Some(walked), Some(st)) => {
                return Ok(Self::from_walk(path, sessions_dir, st, walked, mode))
            }
            (_, st) => st,
        };
        let scan = StoreScan::from_text(path, st)?;
        let bom = scan.text().starts_with('\u{feff}');
        let mut out = StoreFacts::empty(path, sessions_dir, scan, bom);
        let mut caches = LeanCaches::default();
        let mut members = Vec::new();
        for i in 0..out.scan.len() {
            let lean = if out.scan.is_direct()
                && canonical::object_members(out.scan.text(), out.scan.range(i), 1, &mut members)
            {
                let key = out.scan.key(i).to_string();
                Some(lean_entry(
                    &key,
                    out.scan.text(),
                    &members,
                    sessions_dir,
                    mode,
                    &mut caches,
                ))
            } else {
                None
            };
            match lean {
                Some(lean) => out.push_lean(i, Some(lean), None, mode, &mut caches.blobs),
                None => out.push_full(i, mode, &mut caches.blobs),
            }
        }
        Ok(out)
    }

    /// The store from a whole canonical walk of its text.
    fn from_walk(
        path: &Path,
        sessions_dir: &Path,
        st: StoreText,
        walked: Vec<Vec<WalkedEntry>>,
        mode: PassMode,
    ) -> Self {
        let count: usize = walked.iter().map(Vec::len).sum();
        Self::from_walk_on(
            path,
            sessions_dir,
            st,
            walked,
            mode,
            count >= PARALLEL_GATHER_MIN,
        )
    }

    /// [`StoreFacts::from_walk`], the entries kept as read gathered on two threads when
    /// `in_halves` (and every entry was kept as read or dropped).
    fn from_walk_on(
        path: &Path,
        sessions_dir: &Path,
        st: StoreText,
        mut walked: Vec<Vec<WalkedEntry>>,
        mode: PassMode,
        in_halves: bool,
    ) -> Self {
        let bom = st.body_start > 0;
        let wants_chunk = mode != PassMode::Preview { chunks: false };
        let as_read = |e: &WalkedEntry| match &e.item {
            None | Some(Lean::Dropped) => true,
            Some(Lean::Kept { identity, .. }) => *identity || !wants_chunk,
            Some(Lean::Full) => false,
        };
        if in_halves && walked.iter().flatten().all(as_read) {
            return Self::gathered(path, sessions_dir, st, walked, mode, bom);
        }
        // The keys move into the scan; each entry keeps its chunk and its lean verdict
        // where the walk left them (no second copy of every verdict).
        let count = walked.iter().map(Vec::len).sum();
        let mut split = Vec::with_capacity(count);
        for e in walked.iter_mut().flatten() {
            split.push((std::mem::take(&mut e.key), e.value.clone()));
        }
        let scan = StoreScan::from_split(path, st, split);
        let mut out = StoreFacts::empty(path, sessions_dir, scan, bom);
        let mut blobs = BlobCache::default();
        for (i, e) in walked.into_iter().flatten().enumerate() {
            out.push_lean(
                i,
                e.item,
                Some(e.key_start - 2..e.value.end),
                mode,
                &mut blobs,
            );
        }
        out
    }

    /// The store from a walk whose every entry was kept as read or dropped: the entries'
    /// facts, keys and chunks gathered from the two halves of the walk on two threads (as
    /// [`StoreFacts::push_lean`] does one by one), then the blobs interned in order.
    fn gathered(
        path: &Path,
        sessions_dir: &Path,
        st: StoreText,
        mut walked: Vec<Vec<WalkedEntry>>,
        mode: PassMode,
        bom: bool,
    ) -> Self {
        let count: usize = walked.iter().map(Vec::len).sum();
        // Two halves of whole segments, about as many entries in each.
        let mut at = 0;
        let mut before = 0;
        while at < walked.len() && before + walked[at].len() <= count / 2 {
            before += walked[at].len();
            at += 1;
        }
        let second = walked.split_off(at);
        let first = walked;
        let kept = |part: &[Vec<WalkedEntry>]| {
            part.iter()
                .flatten()
                .filter(|e| matches!(e.item, Some(Lean::Kept { .. })))
                .count()
        };
        let (kept_first, kept_second) = (kept(&first), kept(&second));
        let (entries, mut a, mut b) = fill_in_halves(
            kept_first,
            kept_second,
            |half| Gathered::from_part(first, 0, count, mode, half),
            |half| Gathered::from_part(second, before, count - before, mode, half),
        );
        a.keys.append(&mut b.keys);
        let scan = StoreScan::from_split(path, st, a.keys);
        let mut out = StoreFacts::empty(path, sessions_dir, scan, bom);
        out.entries = entries;
        a.raw.append(&mut b.raw);
        out.raw_index = a.raw;
        a.chunks.append(&mut b.chunks);
        out.chunks = a.chunks;
        out.changed_on_load |= a.changed || b.changed;
        // The blobs in entry order: each gets the id the one-by-one road gives it.
        let mut blobs = BlobCache::default();
        let with_blob = a.with_blob.into_iter();
        for k in with_blob.chain(b.with_blob.into_iter().map(|k| k + kept_first)) {
            let Some((hash, bytes)) = out.entries[k].blob.take() else {
                continue;
            };
            let ids = out.intern_blob(&hash, bytes, &mut blobs);
            out.entries[k].blob = Some((hash, bytes));
            out.chunks[k].1 = ids;
        }
        out
    }

    fn empty(path: &Path, sessions_dir: &Path, scan: StoreScan, bom: bool) -> Self {
        StoreFacts {
            path: path.to_path_buf(),
            sessions_dir: sessions_dir.to_path_buf(),
            changed_on_load: bom,
            entries: Vec::with_capacity(scan.len()),
            raw_index: Vec::with_capacity(scan.len()),
            // Untouched (and so not in memory) where the pass keeps no chunks.
            chunks: Vec::with_capacity(scan.len()),
            blobs: Vec::new(),
            blob_ids: HashMap::new(),
            blob_found: HashMap::default(),
            scan,
        }
    }

    /// Adds raw entry `i` from what the lean road made of it (`None`: not an object);
    /// `chunk`: where its written text lies in the file, when it is there as a whole.
    fn push_lean(
        &mut self,
        i: usize,
        lean: Option<Lean>,
        chunk: Option<Range<usize>>,
        mode: PassMode,
        blobs: &mut BlobCache,
    ) {
        let (mut facts, changed, identity) = match lean {
            None | Some(Lean::Dropped) => {
                self.changed_on_load = true;
                return;
            }
            Some(Lean::Full) => return self.push_full(i, mode, blobs),
            Some(Lean::Kept {
                facts,
                changed,
                identity,
            }) => (facts, changed, identity),
        };
        let wants_chunk = mode != PassMode::Preview { chunks: false };
        if wants_chunk && !identity {
            return self.push_full(i, mode, blobs);
        }
        self.changed_on_load |= changed;
        if wants_chunk {
            let chunk = match chunk {
                Some(r) => Chunk::InFile(r),
                None => {
                    let value = &self.scan.text()[self.scan.range(i)];
                    let mut s = chunk_head(self.scan.key(i), value.len() + 64);
                    s.push_str(value);
                    Chunk::Owned(s)
                }
            };
            facts.chunk_len = chunk.text(self.scan.text()).len() as i64;
            if mode == PassMode::Apply {
                let ids = match &facts.blob {
                    Some((hash, bytes)) => self.intern_blob(hash, *bytes, blobs),
                    None => Vec::new(),
                };
                self.chunks.push((chunk, ids));
            }
        }
        self.entries.push(facts);
        self.raw_index.push(i);
    }

    /// Adds raw entry `i` through the full load (and save) pass.
    fn push_full(&mut self, i: usize, mode: PassMode, blobs: &mut BlobCache) {
        let key = self.scan.key(i).to_string();
        if mode == (PassMode::Preview { chunks: false }) {
            match peek_facts(&key, self.scan.raw_entry(i)) {
                Peeked::Facts(f) => {
                    self.entries.push(f);
                    self.raw_index.push(i);
                    return;
                }
                Peeked::Dropped => return,
                Peeked::Full => {}
            }
        }
        let Some((mut entry, mut holes, changed)) =
            load_pass(self.scan.entry_value(i), &self.sessions_dir, blobs)
        else {
            self.changed_on_load = true;
            return;
        };
        self.changed_on_load |= changed;
        match mode {
            PassMode::Preview { chunks: false } => {
                self.entries
                    .push(Facts::of(&key, &entry, &self.sessions_dir));
            }
            PassMode::Preview { chunks: true } => {
                self.entries
                    .push(Facts::with_chunk(&key, &entry, &self.sessions_dir).0);
            }
            PassMode::Apply => {
                if normalize_entry_fields_with_holes(&mut entry, &mut holes) == EntryVerdict::Drop {
                    return;
                }
                let (f, chunk, needed) = Facts::with_chunk(&key, &entry, &self.sessions_dir);
                let ids = self.intern_blobs(needed);
                self.entries.push(f);
                self.chunks.push((Chunk::Owned(chunk), ids));
            }
        }
        self.raw_index.push(i);
    }

    /// The blob `hash` of `bytes` bytes, interned (read once).
    fn intern_blob(&mut self, hash: &str, bytes: u64, blobs: &mut BlobCache) -> Vec<usize> {
        // Many entries share a few prompts: each hash is answered once.
        if let Some(&(asked, id)) = self.blob_found.get(hash) {
            if asked == bytes {
                return vec![id];
            }
        }
        let path = blob_path(&self.sessions_dir, hash);
        let ids = match self.blob_ids.get(&path) {
            Some(&id) => vec![id],
            None => match blobs.text(&self.sessions_dir, hash, bytes) {
                Some(text) => self.intern_blobs(vec![PromptBlob {
                    path,
                    bytes: text.into_bytes(),
                }]),
                None => Vec::new(),
            },
        };
        if let Some(&id) = ids.first() {
            self.blob_found.insert(hash.to_string(), (bytes, id));
        }
        ids
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

    /// The facts of every surviving entry, in store order (until taken).
    pub fn facts(&self) -> &[Facts] {
        &self.entries
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
            self.chunks[i] = (Chunk::Owned(chunk), ids);
        }
        Some(f)
    }

    /// Writes the entries marked alive (apply mode), atomically and 0600, unless the text
    /// would be byte-identical to the file (and nothing changed on load). Blobs the kept
    /// entries need are written first.
    pub fn save(&self, alive: &[bool]) -> Result<SaveOutcome, StoreError> {
        self.prepare_save(alive)?.commit()
    }

    /// The first half of [`StoreFacts::save`]: the new text written to a synced temp file
    /// beside the store, which [`PreparedSave::commit`] puts in place. The store and the
    /// blobs are not touched; dropping the result removes the temp file.
    pub fn prepare_save(&self, alive: &[bool]) -> Result<PreparedSave<'_>, StoreError> {
        let kept = || {
            self.chunks
                .iter()
                .zip(alive)
                .filter(|(_, a)| **a)
                .map(|(c, _)| c)
        };
        let disk = self.scan.text();
        // The text is written from its pieces (`{`, the kept chunks joined by `,`, `}`)
        // without being joined in memory first.
        let any = kept().next().is_some();
        let pieces = || {
            kept()
                .enumerate()
                .flat_map(|(n, (c, _))| [if n == 0 { "{\n" } else { ",\n" }, c.text(disk)])
                .chain([if any { "\n}" } else { "{}" }])
                .map(str::as_bytes)
        };
        let len: usize = pieces().map(<[u8]>::len).sum();
        let existed = !disk.is_empty();
        if existed && !self.changed_on_load && len == disk.len() && {
            let mut at = 0;
            pieces().all(|p| {
                at += p.len();
                disk.as_bytes()[at - p.len()..at] == *p
            })
        } {
            return Ok(PreparedSave {
                facts: self,
                write: None,
            });
        }
        // Each blob once (the gateway rewrites or touches it once per entry: same result).
        let mut written = vec![false; self.blobs.len()];
        let mut blobs = Vec::new();
        for (_, ids) in kept() {
            for &id in ids {
                if !std::mem::replace(&mut written[id], true) {
                    blobs.push(id);
                }
            }
        }
        let pending = PendingReplace::prepare_pieces(&self.path, len, pieces(), 0o600)?;
        // The pieces were copied from the store's text, which maps the file when it is
        // large: a write in place meanwhile would have mixed two texts (the temp file
        // goes with `pending`).
        if !self.scan.text_unchanged() {
            return Err(StoreError::ChangedWhileRead {
                path: self.path.clone(),
            });
        }
        Ok(PreparedSave {
            facts: self,
            write: Some((pending, blobs)),
        })
    }
}

/// The prompt-blob writes of a store write, split off it ([`PreparedSave::without_blobs`]).
#[derive(Debug)]
pub struct BlobWrites<'a> {
    facts: &'a StoreFacts,
    ids: Vec<usize>,
}

impl BlobWrites<'_> {
    /// Writes each blob, or sets its times to now when it holds these bytes already.
    pub fn write(self) -> Result<(), StoreError> {
        for id in self.ids {
            let blob = &self.facts.blobs[id];
            prompt_blobs::write_blob(blob).map_err(|source| StoreError::Blob {
                path: blob.path.clone(),
                source,
            })?;
        }
        Ok(())
    }
}

/// A store write prepared by [`StoreFacts::prepare_save`].
#[derive(Debug)]
pub struct PreparedSave<'a> {
    facts: &'a StoreFacts,
    /// The store's temp file and the blobs to write first; `None`: nothing to write.
    write: Option<(PendingReplace, Vec<usize>)>,
}

impl<'a> PreparedSave<'a> {
    /// Whether every prompt blob the kept entries need is on disk already with its bytes
    /// (committing then only sets their times to now, as the gateway does).
    pub fn blobs_on_disk(&self) -> bool {
        self.write.as_ref().is_none_or(|(_, ids)| {
            ids.iter().all(|&id| {
                let blob = &self.facts.blobs[id];
                prompt_blobs::read_blob_file(&blob.path).is_some_and(|bytes| bytes == blob.bytes)
            })
        })
    }

    /// Splits the blob writes off: committing the result puts the store alone in place;
    /// the blobs are written (or their times set) by [`BlobWrites::write`].
    pub fn without_blobs(mut self) -> (Self, BlobWrites<'a>) {
        let ids = self
            .write
            .as_mut()
            .map(|(_, ids)| std::mem::take(ids))
            .unwrap_or_default();
        let facts = self.facts;
        (self, BlobWrites { facts, ids })
    }

    /// Writes the blobs the kept entries need, then puts the new store in place.
    pub fn commit(self) -> Result<SaveOutcome, StoreError> {
        let Some((pending, ids)) = self.write else {
            return Ok(SaveOutcome::Unchanged);
        };
        BlobWrites {
            facts: self.facts,
            ids,
        }
        .write()?;
        pending.commit()?;
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

    /// A large store is mapped, not copied: written in place by another program before
    /// its pieces are copied out, it is not replaced (exit 75) and no temp file stays;
    /// replaced by a rename meanwhile (what the gateway does), it is saved from the text
    /// read.
    #[test]
    fn a_mapped_store_written_in_place_is_not_replaced() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("sessions.json");
        let entry = |k: usize| {
            format!("  \"agent:main:k{k}\": {{\n    \"sessionId\": \"s{k}\",\n    \"updatedAt\": {k}\n  }}")
        };
        let n = (crate::store::file_text::MAP_MIN as usize) / entry(0).len() + 1;
        let text = format!(
            "{{\n{}\n}}",
            (0..n).map(entry).collect::<Vec<_>>().join(",\n")
        );
        let files = || std::fs::read_dir(d.path()).unwrap().count();
        for in_place in [true, false] {
            std::fs::write(&p, &text).unwrap();
            let facts = StoreFacts::read(&p, d.path(), PassMode::Apply).unwrap();
            assert!(facts.scan.text().len() as u64 >= crate::store::file_text::MAP_MIN);
            let mut alive = vec![true; facts.len()];
            alive[1] = false;
            std::thread::sleep(std::time::Duration::from_millis(20));
            if in_place {
                // The same length, other bytes: `s0` becomes `t0`.
                let at = text.find("\"s0\"").unwrap() + 1;
                let f = std::fs::OpenOptions::new().write(true).open(&p).unwrap();
                std::os::unix::fs::FileExt::write_all_at(&f, b"t", at as u64).unwrap();
            } else {
                let other = d.path().join("other");
                std::fs::write(&other, "{}").unwrap();
                std::fs::rename(&other, &p).unwrap();
            }
            match facts.save(&alive) {
                Err(e @ StoreError::ChangedWhileRead { .. }) if in_place => {
                    assert_eq!(crate::exit::ExitCode::exit_code(&e), crate::exit::TEMP_FAIL);
                    assert_eq!(files(), 1, "no temp file stays");
                    assert!(std::fs::read_to_string(&p).unwrap().contains("\"t0\""));
                }
                Ok(SaveOutcome::Written) if !in_place => {
                    let saved = std::fs::read_to_string(&p).unwrap();
                    assert!(saved.contains("\"s0\"") && !saved.contains("\"s1\""));
                }
                other => panic!("in place: {in_place}: {other:?}"),
            }
        }
    }

    /// A canonical store with a repeated key or an array-index key leaves the walk for the
    /// full pass (the gateway's object keeps the last value, and orders index keys first);
    /// many distinct keys stay on it. Either way the bytes written are the full pass's.
    #[test]
    fn repeated_and_index_keys_leave_the_walk() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("sessions.json");
        let entry = |k: &str, u: u64| {
            format!("  \"{k}\": {{\n    \"sessionId\": \"s{u}\",\n    \"updatedAt\": {u}\n  }}")
        };
        let many: Vec<String> = (0..3000)
            .map(|k| entry(&format!("agent:main:k{k}"), k))
            .collect();
        let mut repeated = many.clone();
        repeated.push(entry("agent:main:k1234", 9));
        let mut indexed = many.clone();
        indexed.insert(1500, entry("42", 7));
        for (entries, walks) in [(many, true), (repeated, false), (indexed, false)] {
            let text = format!("{{\n{}\n}}", entries.join(",\n"));
            std::fs::write(&p, &text).unwrap();
            let st = read_store_text(&p).unwrap().unwrap();
            let walked = walk_canonical(&st, d.path(), PassMode::Apply);
            assert_eq!(walked.is_some(), walks, "{} entries", entries.len());
            let facts = StoreFacts::read(&p, d.path(), PassMode::Apply).unwrap();
            let alive = vec![true; facts.len()];
            facts.save(&alive).unwrap();
            let ours = std::fs::read_to_string(&p).unwrap();
            std::fs::write(&p, &text).unwrap();
            SessionStore::load(&p, LoadOptions::default())
                .unwrap()
                .save()
                .unwrap();
            assert_eq!(ours, std::fs::read_to_string(&p).unwrap());
        }
    }

    /// A walk's entries gathered in two halves on two threads, or one by one: the same
    /// facts, raw indices, chunks, blob ids, load change and written bytes, in every mode.
    #[test]
    fn a_walk_gathered_in_halves_is_the_walk_taken_one_by_one() {
        let d = tempfile::tempdir().unwrap();
        let mut refs = Vec::new();
        for text in ["first prompt ".repeat(60), "second prompt ".repeat(70)] {
            let hash = {
                use sha2::Digest;
                let d = sha2::Sha256::digest(text.as_bytes());
                d.iter().map(|b| format!("{b:02x}")).collect::<String>()
            };
            let path = blob_path(d.path(), &hash);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, &text).unwrap();
            refs.push(serde_json::json!({"version": 1, "algorithm": "sha256", "hash": hash, "bytes": text.len()}));
        }
        let mut map = serde_json::Map::new();
        for k in 0..3000u64 {
            let value = match k % 7 {
                // Not objects: dropped.
                0 => serde_json::json!(k),
                1 => serde_json::json!([k]),
                // Prompt blobs, the second one first met late in the store.
                2 | 3 => {
                    let r = &refs[usize::from(k % 7 == 3 && k > 2000)];
                    serde_json::json!({"sessionId": format!("s{k}"), "updatedAt": k,
                        "skillsSnapshot": {"skills": [], "promptRef": r}})
                }
                _ => serde_json::json!({"sessionId": format!("s{k}"), "updatedAt": k,
                    "chatType": "direct", "sessionFile": format!("s{k}.jsonl")}),
            };
            map.insert(format!("agent:main:explicit:k{k}"), value);
        }
        let text = crate::js::jsjson::to_string_pretty(&Value::Object(map));
        let p = d.path().join("sessions.json");
        std::fs::write(&p, &text).unwrap();
        let modes = [
            PassMode::Preview { chunks: false },
            PassMode::Preview { chunks: true },
            PassMode::Apply,
        ];
        for mode in modes {
            let read = |in_halves: bool| {
                let st = read_store_text(&p).unwrap().unwrap();
                let walked = walk_canonical(&st, d.path(), mode).unwrap();
                assert!(walked.len() >= 2, "{} segments", walked.len());
                // Every entry kept as read or dropped: the halves' road is open.
                assert!(walked.iter().flatten().all(|e| match &e.item {
                    None | Some(Lean::Dropped) => true,
                    Some(Lean::Kept { identity, .. }) => *identity,
                    Some(Lean::Full) => false,
                }));
                StoreFacts::from_walk_on(&p, d.path(), st, walked, mode, in_halves)
            };
            let (halves, one_by_one) = (read(true), read(false));
            assert_eq!(halves.entries, one_by_one.entries, "{mode:?}");
            assert_eq!(halves.raw_index, one_by_one.raw_index, "{mode:?}");
            assert_eq!(halves.changed_on_load, one_by_one.changed_on_load);
            assert_eq!(halves.scan.len(), one_by_one.scan.len());
            for i in 0..halves.scan.len() {
                assert_eq!(halves.scan.key(i), one_by_one.scan.key(i));
                assert_eq!(halves.scan.range(i), one_by_one.scan.range(i));
            }
            let chunks = |f: &StoreFacts| -> Vec<(String, Vec<usize>)> {
                f.chunks
                    .iter()
                    .map(|(c, ids)| (c.text(f.scan.text()).to_string(), ids.clone()))
                    .collect()
            };
            assert_eq!(chunks(&halves), chunks(&one_by_one), "{mode:?}");
            let blobs = |f: &StoreFacts| -> Vec<PathBuf> {
                f.blobs.iter().map(|b| b.path.clone()).collect()
            };
            assert_eq!(blobs(&halves), blobs(&one_by_one));
            if mode == PassMode::Apply {
                assert_eq!(halves.blobs.len(), 2);
                assert!(halves.chunks.iter().any(|(_, ids)| ids == &[1]));
                let alive: Vec<bool> = (0..halves.len()).map(|i| i % 3 != 0).collect();
                halves.save(&alive).unwrap();
                let ours = std::fs::read_to_string(&p).unwrap();
                std::fs::write(&p, &text).unwrap();
                one_by_one.save(&alive).unwrap();
                assert_eq!(ours, std::fs::read_to_string(&p).unwrap());
                std::fs::write(&p, &text).unwrap();
            }
        }
    }

    /// Canonical stores (the lean road) give the facts, the load change and the written
    /// bytes of the full pass: the same entries written compactly take the full pass.
    #[test]
    fn the_lean_road_agrees_with_the_full_pass() {
        let d = tempfile::tempdir().unwrap();
        // Blobs: a valid one (prompt stored as a blob), a valid short one (inline when
        // saved), and refs to a missing blob.
        let long = "skills prompt ".repeat(60);
        let short = "short prompt";
        let mut refs = Vec::new();
        for text in [long.as_str(), short] {
            let hash = {
                use sha2::Digest;
                let d = sha2::Sha256::digest(text.as_bytes());
                d.iter().map(|b| format!("{b:02x}")).collect::<String>()
            };
            let path = blob_path(d.path(), &hash);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, text).unwrap();
            refs.push(serde_json::json!({"version": 1, "algorithm": "sha256", "hash": hash, "bytes": text.len()}));
        }
        let missing = serde_json::json!({"version": 1, "algorithm": "sha256", "hash": "0".repeat(64), "bytes": 5});
        // The first blob's hash asked with other bytes (after entries that found it).
        let mut wrong_bytes = refs[0].clone();
        wrong_bytes["bytes"] = serde_json::json!(long.len() + 1);
        let entries = serde_json::json!({
            "agent:main:telegram:group:1": {"sessionId": "a1", "updatedAt": 5, "chatType": "group",
                "channel": "telegram", "lastChannel": "telegram", "lastTo": "telegram:1",
                "deliveryContext": {"channel": "telegram", "to": "telegram:1"},
                "route": {"channel": "telegram", "target": {"to": "telegram:1"}}, "misc": [1, {"x": null}]},
            "agent:main:telegram:direct:2": {"sessionId": "a2", "updatedAt": 6,
                "channel": "telegram", "lastChannel": "telegram", "lastTo": "telegram:2",
                "deliveryContext": {"channel": "telegram", "to": "telegram:3"}},
            "agent:main:explicit:ref": {"sessionId": "a3", "updatedAt": 7,
                "skillsSnapshot": {"skills": [], "promptRef": refs[0]}},
            "agent:main:explicit:ref-not-last": {"sessionId": "a4",
                "skillsSnapshot": {"promptRef": refs[0], "version": 1}},
            "agent:main:explicit:ref-other-bytes": {"sessionId": "a4b", "updatedAt": 8,
                "skillsSnapshot": {"skills": [], "promptRef": wrong_bytes}},
            "agent:main:explicit:ref-short": {"sessionId": "a5", "skillsSnapshot": {"promptRef": refs[1]}},
            "agent:main:explicit:ref-missing": {"sessionId": "a6", "skillsSnapshot": {"promptRef": missing}},
            "agent:main:explicit:inline-long": {"sessionId": "a7", "skillsSnapshot": {"prompt": long}},
            "agent:main:explicit:inline-short": {"sessionId": "a8", "skillsSnapshot": {"prompt": short, "resolvedSkills": [1]}},
            "agent:main:explicit:falsy": {"sessionId": "a9", "skillsSnapshot": 0},
            "agent:main:cron:job:run:1": {"sessionId": " padded ", "updatedAt": -1, "model": " m "},
            "agent:main:subagent:x": {"sessionId": "../evil"},
            "agent:main:explicit:array": [1, 2],
            "agent:main:explicit:number": 5,
            "agent:main:explicit:legacy": {"sessionId": "b1", "provider": "slack", "room": "r"},
            "agent:main:explicit:file-only": {"sessionId": "x:y", "sessionFile": "/tmp/f.jsonl",
                "compactionCheckpoints": [{"preCompaction": {"sessionFile": " /tmp/c.jsonl "}}],
                "origin": {"chatType": "Channel", "threadId": 4}},
            "agent:main:explicit:pending": {"sessionId": "b2", "pendingFinalDelivery": true,
                "pendingFinalDeliveryText": 5, "pluginExtensions": {" p ": {"n": 1}}},
            "agent:main:explicit:floats": {"sessionId": "b3", "updatedAt": 1.5, "cost": 0.1, "big": 1e21},
            "agent:main:explicit:escapes": {"sessionId": "b4", "label": "a\"b\n\u{1}é\u{2028}"},
            "agent:main:telegram:direct:9:thread:7": {"sessionId": "b5", "lastThreadId": 7},
        });
        let map = entries.as_object().unwrap();
        let canonical = crate::js::jsjson::to_string_pretty(&entries);
        let compact = serde_json::to_string(&entries).unwrap();
        let p = d.path().join("sessions.json");
        let modes = [
            PassMode::Preview { chunks: false },
            PassMode::Preview { chunks: true },
            PassMode::Apply,
        ];
        for mode in modes {
            std::fs::write(&p, &canonical).unwrap();
            let lean = StoreFacts::read(&p, d.path(), mode).unwrap();
            std::fs::write(&p, &compact).unwrap();
            let full = StoreFacts::read(&p, d.path(), mode).unwrap();
            assert_eq!(lean.entries, full.entries, "{mode:?}");
            assert_eq!(lean.changed_on_load, full.changed_on_load, "{mode:?}");
            assert_eq!(lean.len(), full.len());
            if mode == PassMode::Apply {
                std::fs::write(&p, &canonical).unwrap();
                let alive = vec![true; lean.len()];
                lean.save(&alive).unwrap();
                let ours = std::fs::read_to_string(&p).unwrap();
                std::fs::write(&p, &canonical).unwrap();
                let mut store = SessionStore::load(&p, LoadOptions::default()).unwrap();
                store.save().unwrap();
                assert_eq!(ours, std::fs::read_to_string(&p).unwrap());
            }
        }
        // The walk really took the lean road for the canonical entries.
        let st = read_store_text(&{
            std::fs::write(&p, &canonical).unwrap();
            p.clone()
        })
        .unwrap()
        .unwrap();
        let walked: Vec<WalkedEntry> = walk_canonical(&st, d.path(), PassMode::Apply)
            .unwrap()
            .into_iter()
            .flatten()
            .collect();
        assert_eq!(walked.len(), map.len());
        let identity = walked
            .iter()
            .filter(|e| matches!(e.item, Some(Lean::Kept { identity: true, .. })))
            .count();
        assert!(identity >= 5, "{identity} entries written as read");
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
            let mut value = crate::js::jsjson::parse_value(raw).ok();
            value
                .iter_mut()
                .for_each(crate::js::jsjson::apply_js_key_order);
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

#[cfg(test)]
mod lean_timing {
    use super::*;

    /// Manual probe: `cargo test --release -p clawstate lean_timing -- --ignored --nocapture`.
    #[test]
    #[ignore]
    fn time_the_lean_road() {
        let text = "{\n  \"agent:main:whatsapp:direct:293970699565\": {\n    \"sessionId\": \"b2221a58-008a-45a6-8464-7159c324c985\",\n    \"updatedAt\": 1794749764967,\n    \"sessionFile\": \"/tmp/clawstate-bench-cleanup/state/agents/main/sessions/b2221a58-008a-45a6-8464-7159c324c985.jsonl\",\n    \"chatType\": \"direct\",\n    \"channel\": \"whatsapp\",\n    \"lastChannel\": \"whatsapp\",\n    \"lastTo\": \"whatsapp:351763952441\",\n    \"deliveryContext\": {\n      \"channel\": \"whatsapp\",\n      \"to\": \"whatsapp:351763952441\"\n    },\n    \"thinkingLevel\": \"low\",\n    \"inputTokens\": 170274,\n    \"outputTokens\": 35482,\n    \"totalTokens\": 2413,\n    \"totalTokensFresh\": true,\n    \"model\": \"claude-sonnet-4\",\n    \"modelProvider\": \"anthropic\",\n    \"systemSent\": true,\n    \"route\": {\n      \"channel\": \"whatsapp\",\n      \"target\": {\n        \"to\": \"whatsapp:351763952441\"\n      }\n    }\n  }\n}";
        let segs = canonical::segments(text, 1).unwrap();
        let mut value = 0..0;
        let mut members = Vec::new();
        canonical::walk_segment(text, segs[0].clone(), |m, ms| {
            value = m.value.clone();
            members = ms.unwrap().to_vec();
            true
        });
        let key = "agent:main:whatsapp:direct:293970699565";
        let dir = Path::new("/tmp");
        let n = 100_000;
        let mut caches = LeanCaches::default();
        let t = std::time::Instant::now();
        for _ in 0..n {
            let mut ms = Vec::new();
            std::hint::black_box(canonical::object_members(text, value.clone(), 1, &mut ms));
        }
        eprintln!("check      {:?}/entry", t.elapsed() / n);
        let t = std::time::Instant::now();
        for _ in 0..n {
            std::hint::black_box(lean_entry(
                key,
                text,
                &members,
                dir,
                PassMode::Apply,
                &mut caches,
            ));
        }
        eprintln!("lean_entry {:?}/entry", t.elapsed() / n);
        let mut mini = Map::new();
        for m in &members {
            let name = &text[m.key.start + 1..m.key.end - 1];
            if is_deciding_field(name) {
                mini.insert(
                    name.to_string(),
                    canonical::read_value(&text[m.value.clone()]).unwrap(),
                );
            }
        }
        let t = std::time::Instant::now();
        for _ in 0..n {
            let mut m = mini.clone();
            std::hint::black_box(normalize_entry_with_holes(&mut m, &mut Holes::default()));
        }
        eprintln!("clone+normalize {:?}/entry", t.elapsed() / n);
        let t = std::time::Instant::now();
        for _ in 0..n {
            std::hint::black_box(mini.clone());
        }
        eprintln!("clone {:?}/entry", t.elapsed() / n);
        let t = std::time::Instant::now();
        for _ in 0..n {
            std::hint::black_box(Facts::of_without_blobs(key, &mini));
        }
        eprintln!("facts {:?}/entry", t.elapsed() / n);
        let t = std::time::Instant::now();
        for _ in 0..n {
            std::hint::black_box(crate::session::session_key::is_durable_entry(key, &mini));
        }
        eprintln!("durable {:?}/entry", t.elapsed() / n);
    }
}
