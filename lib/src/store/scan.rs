//! A read-only pass over a store that never holds the whole entry tree: the top level is
//! split into raw entry texts, and each entry is parsed and normalised only when asked.
//!
//! Listing a 100k-entry store this way keeps memory near the file size and parses the
//! printed entries twice at most, instead of building (and freeing) every entry's map.

use std::collections::HashSet;
use std::fmt;
use std::hash::BuildHasher;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use foldhash::fast::FixedState;

use serde::de::{Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::canonical;
use super::file_text::FileText;
use super::normalize::{normalize_entry, EntryVerdict};
use super::{read_store_text, StoreError, StoreText};
use crate::js::jsjson::{self, apply_js_key_order, is_array_index};

/// The raw entries of a store, in JavaScript key order, duplicates resolved as
/// `JSON.parse` does (last value at the first key's position).
#[derive(Debug)]
pub struct StoreScan {
    path: PathBuf,
    text: FileText,
    /// The body as [`jsjson::to_serde_text`] maps it, when serde_json could not split the
    /// file as it is (a lone surrogate in a key) or it may hold reserved code points; the
    /// entry ranges then point into this text instead of `text`.
    mapped: Option<String>,
    entries: Vec<(String, Range<usize>)>,
    /// Each entry's [`StoreScan::peek_updated_at`], when a canonical walk of the whole
    /// store found them.
    peeked: Option<Vec<Option<Option<f64>>>>,
    warnings: Vec<String>,
}

struct TopLevel<'a> {
    base: usize,
    text: &'a str,
}

impl<'de> Visitor<'de> for TopLevel<'de> {
    type Value = Vec<(String, Range<usize>)>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object of sessionKey → entry")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut out: Vec<(String, Range<usize>)> = Vec::new();
        let mut index: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
        while let Some(key) = map.next_key::<String>()? {
            let raw: &'de RawValue = map.next_value()?;
            let start = raw.get().as_ptr() as usize - self.text.as_ptr() as usize + self.base;
            let range = start..start + raw.get().len();
            match index.get(&key) {
                Some(&i) => out[i].1 = range,
                None => {
                    index.insert(key.clone(), out.len());
                    out.push((key, range));
                }
            }
        }
        Ok(out)
    }
}

impl StoreScan {
    /// Reads and splits `path`; a missing store is empty. Malformed or non-object stores
    /// are the same errors as [`super::SessionStore::load`] gives.
    pub fn open(path: &Path) -> Result<Self, StoreError> {
        Self::from_text(path, read_store_text(path)?)
    }

    /// [`StoreScan::open`] of text already read (`None`: no store).
    pub fn from_text(path: &Path, st: Option<StoreText>) -> Result<Self, StoreError> {
        let Some(st) = st else {
            return Ok(StoreScan {
                path: path.to_path_buf(),
                text: FileText::default(),
                mapped: None,
                entries: Vec::new(),
                peeked: None,
                warnings: Vec::new(),
            });
        };
        let body = &st.text[st.body_start..];
        if body.trim().is_empty() {
            // Same message as a full load.
            super::parse_store_text(path, body)?;
        }
        // A store as the gateway writes it is split (and checked) in one canonical walk.
        if let Some((entries, peeked)) = split_canonical(&st) {
            return Ok(StoreScan {
                path: path.to_path_buf(),
                text: st.text,
                mapped: None,
                entries,
                peeked: Some(peeked),
                warnings: st.warnings,
            });
        }
        // Text serde_json splits as it is, and that holds no reserved code point, is split
        // in place; other text as `JSON.parse` reads it (through the mapping).
        let direct = if jsjson::may_hold_reserved(body) {
            None
        } else {
            split_top_level(body, st.body_start).ok()
        };
        let (mut entries, mapped) = match direct {
            Some(e) => (e, None),
            None => {
                let mapped = jsjson::to_serde_text(body).into_owned();
                match split_top_level(&mapped, 0) {
                    Ok(e) => (e, Some(mapped)),
                    // Let the full parser produce the exact error (position, or "not an
                    // object").
                    Err(_) => {
                        super::parse_store_text(path, body)?;
                        (Vec::new(), None)
                    }
                }
            }
        };
        if entries.iter().any(|(k, _)| is_array_index(k)) {
            entries.sort_by_key(|(k, _)| {
                if is_array_index(k) {
                    (0, k.parse::<u64>().unwrap_or(0))
                } else {
                    (1, 0)
                }
            });
        }
        Ok(StoreScan {
            path: path.to_path_buf(),
            text: st.text,
            mapped,
            entries,
            peeked: None,
            warnings: st.warnings,
        })
    }

    /// A scan of `st` split elsewhere: `entries` are the keys and value ranges (in
    /// `st.text`) in JavaScript key order, without duplicates, as [`StoreScan::open`]
    /// would give them.
    pub fn from_split(path: &Path, st: StoreText, entries: Vec<(String, Range<usize>)>) -> Self {
        StoreScan {
            path: path.to_path_buf(),
            text: st.text,
            mapped: None,
            entries,
            peeked: None,
            warnings: st.warnings,
        }
    }

    /// Whether the entry ranges point into the file's text as read (not into a mapped
    /// copy of it, see [`StoreScan::raw_entry`]).
    pub fn is_direct(&self) -> bool {
        self.mapped.is_none()
    }

    /// Whether the store was split in one canonical walk (the gateway's form; see
    /// [`canonical`]), every entry's text checked canonical on the way.
    pub fn walked(&self) -> bool {
        self.peeked.is_some()
    }

    /// The byte range of raw entry `i`'s value in [`StoreScan::text`] (when
    /// [`StoreScan::is_direct`]).
    pub fn range(&self, i: usize) -> Range<usize> {
        self.entries[i].1.clone()
    }

    /// The store file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Warnings raised while reading.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// How many raw entries (before dropping invalid ones).
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the store has no entries.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The raw JSON text of entry `i`, as in the file, or as [`jsjson::to_serde_text`]
    /// maps it when the file needed that: serde_json reads the fields it holds, but only
    /// [`StoreScan::entry_value`] reads every entry as `JSON.parse` does.
    pub fn raw_entry(&self, i: usize) -> &str {
        let text = self.mapped.as_deref().unwrap_or(&self.text);
        &text[self.entries[i].1.clone()]
    }

    /// Entry `i` parsed as `JSON.parse` reads it, in JavaScript key order, not normalised
    /// (`None`: not JSON, which a split store never holds).
    pub fn entry_value(&self, i: usize) -> Option<Value> {
        let raw = self.raw_entry(i);
        // Nested one level deep in the store: built as a load of the whole store builds it.
        let mut value: Value = if self.mapped.is_some() {
            jsjson::parse_mapped_value_at(raw, 1).ok()?
        } else {
            jsjson::parse_value_at(raw, 1).ok()?
        };
        apply_js_key_order(&mut value);
        Some(value)
    }

    /// The whole file as read (a byte-order mark included); empty for a missing store.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Whether the file is still as read ([`FileText::unchanged`]): check before copying
    /// bytes of [`StoreScan::text`] into another file.
    pub fn text_unchanged(&self) -> bool {
        self.text.unchanged()
    }

    /// The key of raw entry `i`.
    pub fn key(&self, i: usize) -> &str {
        &self.entries[i].0
    }

    /// Whether entry `i` survives the gateway's load and its effective `updatedAt`
    /// (`Some(None)` when absent), read without building the entry: `None` when dropped.
    pub fn peek_updated_at(&self, i: usize) -> Option<Option<f64>> {
        if let Some(peeked) = &self.peeked {
            return peeked[i];
        }
        let raw = self.raw_entry(i);
        // serde also reads an array into `Peek` (fields by position), so only an object
        // takes the fast path.
        let peeked = if raw.starts_with('{') {
            serde_json::from_str::<Peek>(raw).ok()
        } else {
            None
        };
        match peeked {
            Some(p) => {
                if let Some(id) = &p.session_id {
                    let Value::String(id) = id else { return None };
                    if !super::normalize::is_safe_session_id(id) {
                        return None;
                    }
                }
                Some(p.updated_at.map(|u| match u.as_f64() {
                    Some(n) if n.is_finite() && n >= 0.0 => n,
                    _ => 0.0,
                }))
            }
            // Not an object, duplicate fields, …: take the exact path.
            None => self
                .entry(i)
                .map(|e| e.get("updatedAt").and_then(Value::as_f64)),
        }
    }

    /// Entry `i` parsed and normalised as the gateway loads it; `None` when the gateway
    /// would drop it (not an object, invalid sessionId).
    pub fn entry(&self, i: usize) -> Option<Map<String, Value>> {
        let Value::Object(mut entry) = self.entry_value(i)? else {
            return None;
        };
        match normalize_entry(&mut entry) {
            EntryVerdict::Drop => None,
            EntryVerdict::Keep { .. } => Some(entry),
        }
    }
}

/// One top-level entry of a canonical store, as [`walk_canonical`] found it.
#[derive(Debug)]
pub struct WalkedEntry<T> {
    /// The store key.
    pub key: String,
    /// The key's hash ([`FixedState`]), taken while the key is fresh in the cache: the
    /// duplicate check compares hashes, and strings only where two hashes meet.
    key_hash: u64,
    /// Where its key literal starts in the file.
    pub key_start: usize,
    /// Its value, in the file.
    pub value: Range<usize>,
    /// What the walk's visitor made of it.
    pub item: T,
}

/// How many threads a canonical store is walked with.
fn walk_threads(body_len: usize) -> usize {
    if body_len < 4 << 20 {
        return 1;
    }
    std::thread::available_parallelism().map_or(1, |n| n.get().min(4))
}

/// Segments per walking thread: each thread takes the next segment when it is done with
/// one, so that threads finish together although entries differ in cost and another
/// thread shares the cores.
const SEGMENTS_PER_THREAD: usize = 8;

/// Walks the whole body of a store in canonical text (the form the gateway writes, see
/// [`canonical`]) once, in segments, on this thread and helpers (each with its own `C`),
/// checking every entry's text and handing each to `visit` (with the body, which the
/// members' offsets point into, and the entry's members when it is an object). The
/// entries come back in file order, segment by segment. `None` when the text is not
/// canonical, or holds keys a walk cannot order (array indices) or duplicate keys: then
/// the JSON parser splits the store ([`StoreScan::from_text`]).
pub fn walk_canonical<T, C>(
    st: &StoreText,
    visit: impl Fn(&mut C, &str, &str, Option<&[canonical::Member]>) -> T + Sync,
) -> Option<Vec<Vec<WalkedEntry<T>>>>
where
    T: Send,
    C: Default,
{
    let body = &st.text[st.body_start..];
    if jsjson::may_hold_reserved(body) {
        return None;
    }
    let threads = walk_threads(body.len());
    let segments = canonical::segments(body, threads * SEGMENTS_PER_THREAD)?;
    let base = st.body_start;
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let work = || {
        let mut cache = C::default();
        let mut done = Vec::new();
        loop {
            let k = next.fetch_add(1, Ordering::Relaxed);
            let Some(segment) = segments.get(k) else {
                return done;
            };
            if failed.load(Ordering::Relaxed) {
                return done;
            }
            match walk_segment(body, base, segment.clone(), &visit, &mut cache) {
                Some(entries) => done.push((k, entries)),
                None => {
                    failed.store(true, Ordering::Relaxed);
                    return done;
                }
            }
        }
    };
    let mut parts = std::thread::scope(|scope| {
        let helpers: Vec<_> = (1..threads)
            .filter_map(|_| std::thread::Builder::new().spawn_scoped(scope, work).ok())
            .collect();
        let mut parts = work();
        for helper in helpers {
            match helper.join() {
                Ok(theirs) => parts.extend(theirs),
                // A failed walk only sends the store to the parser.
                Err(_) => failed.store(true, Ordering::Relaxed),
            }
        }
        parts
    });
    if failed.load(Ordering::Relaxed) || parts.len() != segments.len() {
        return None;
    }
    parts.sort_unstable_by_key(|&(k, _)| k);
    let parts: Vec<Vec<WalkedEntry<T>>> = parts.into_iter().map(|(_, part)| part).collect();
    (!has_duplicate_key(&parts)).then_some(parts)
}

/// Walks one segment of a canonical store body (offset `base` in the file) for
/// [`walk_canonical`]; `None` when the text is not canonical or holds an array-index key.
fn walk_segment<T, C>(
    body: &str,
    base: usize,
    segment: Range<usize>,
    visit: &impl Fn(&mut C, &str, &str, Option<&[canonical::Member]>) -> T,
    cache: &mut C,
) -> Option<Vec<WalkedEntry<T>>> {
    // Entries are seldom under 300 bytes: reserve so that the vector never moves.
    let mut out = Vec::with_capacity(segment.len() / 300 + 16);
    let mut failed = false;
    let walked = canonical::walk_segment(body, segment, |m, members| {
        let Some(key) = canonical::literal_text(&body[m.key.clone()]) else {
            failed = true;
            return false;
        };
        let key = key.into_owned();
        // An array-index key makes the gateway's object reorder its keys: the parser.
        if is_array_index(&key) {
            failed = true;
            return false;
        }
        let key_hash = FixedState::default().hash_one(key.as_str());
        let item = visit(cache, &key, body, members);
        out.push(WalkedEntry {
            key,
            key_hash,
            key_start: base + m.key.start,
            value: base + m.value.start..base + m.value.end,
            item,
        });
        true
    });
    (walked && !failed).then_some(out)
}

/// Whether two walked entries share a key (the gateway's object keeps the last one: the
/// parser's road). The hashes are sorted and compared; the strings only where two meet.
fn has_duplicate_key<T>(parts: &[Vec<WalkedEntry<T>>]) -> bool {
    let mut hashes: Vec<u64> = parts.iter().flatten().map(|e| e.key_hash).collect();
    hashes.sort_unstable();
    if hashes.windows(2).all(|w| w[0] != w[1]) {
        return false;
    }
    let count = hashes.len();
    drop(hashes);
    let mut seen: HashSet<&str, FixedState> =
        HashSet::with_capacity_and_hasher(count, Default::default());
    !parts.iter().flatten().all(|e| seen.insert(&e.key))
}

/// Splits a store body in canonical text into its raw entries and their
/// [`StoreScan::peek_updated_at`], in one [`walk_canonical`].
fn split_canonical(st: &StoreText) -> Option<SplitCanonical> {
    let walked = walk_canonical(st, |_: &mut (), _, body, members| {
        members.and_then(|members| peek_members(body, members))
    })?;
    let count = walked.iter().map(Vec::len).sum();
    let mut entries = Vec::with_capacity(count);
    let mut peeked = Vec::with_capacity(count);
    for e in walked.into_iter().flatten() {
        entries.push((e.key, e.value));
        peeked.push(e.item);
    }
    Some((entries, peeked))
}

/// The entries of a canonical walk and their peeks.
type SplitCanonical = (Vec<(String, Range<usize>)>, Vec<Option<Option<f64>>>);

/// [`StoreScan::peek_updated_at`] of a canonical entry from its members (the same
/// reading of the same two fields as the [`Peek`] of other text).
fn peek_members(body: &str, members: &[canonical::Member]) -> Option<Option<f64>> {
    let mut updated = None;
    for m in members {
        // Canonical literals of these names hold no escape.
        match &body[m.key.clone()] {
            "\"sessionId\"" => {
                let text = &body[m.value.clone()];
                let safe = text.starts_with('"')
                    && canonical::literal_text(text)
                        .is_some_and(|id| super::normalize::is_safe_session_id(&id));
                if !safe {
                    return None;
                }
            }
            "\"updatedAt\"" => {
                let n = canonical::read_value(&body[m.value.clone()]).and_then(|v| v.as_f64());
                updated = Some(match n {
                    Some(n) if n.is_finite() && n >= 0.0 => n,
                    _ => 0.0,
                });
            }
            _ => {}
        }
    }
    Some(updated)
}

/// Splits a store body (`base`: its offset in the file text) into its raw entries.
fn split_top_level(
    body: &str,
    base: usize,
) -> Result<Vec<(String, Range<usize>)>, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_str(body);
    let visitor = TopLevel { base, text: body };
    de.deserialize_map(visitor)
        .and_then(|v| de.end().map(|_| v))
}

/// The two fields that decide whether a listed entry survives and where it sorts.
#[derive(serde::Deserialize)]
struct Peek {
    #[serde(rename = "sessionId", default, deserialize_with = "present")]
    session_id: Option<Value>,
    #[serde(rename = "updatedAt", default, deserialize_with = "present")]
    updated_at: Option<Value>,
}

/// A present field, `null` included (absent stays `None` through `default`).
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    <Value as serde::Deserialize>::deserialize(d).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_orders_and_dedupes_like_json_parse() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("sessions.json");
        std::fs::write(&p, "\u{feff}{\"b\": {\"sessionId\": \"x\", \"updatedAt\": 1}, \"42\": 5, \"a\": {}, \"b\": {\"updatedAt\": 2}}").unwrap();
        let s = StoreScan::open(&p).unwrap();
        assert_eq!(s.len(), 3);
        assert_eq!(s.key(0), "42");
        assert!(s.entry(0).is_none());
        assert_eq!(s.peek_updated_at(0), None);
        assert_eq!(s.peek_updated_at(1), Some(Some(2.0)));
        assert_eq!(s.key(1), "b");
        assert_eq!(s.entry(1).unwrap()["updatedAt"], 2);
        assert_eq!(s.warnings().len(), 1);
    }

    /// Found by fuzzing: an array entry (`"k": []`, `"k": ["id", 5]`) survived the peek,
    /// so `list` counted it and gave it a `--limit` slot, then printed nothing for it.
    #[test]
    fn array_entries_do_not_survive_the_peek() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("sessions.json");
        std::fs::write(
            &p,
            r#"{"a": {"sessionId": "x", "updatedAt": 1}, "b": [], "c": ["abc", 5], "d": [null]}"#,
        )
        .unwrap();
        let s = StoreScan::open(&p).unwrap();
        assert_eq!(s.peek_updated_at(0), Some(Some(1.0)));
        for i in 1..4 {
            assert_eq!(s.peek_updated_at(i), None, "{}", s.key(i));
            assert!(s.entry(i).is_none());
        }
    }

    /// Found by fuzzing: valid JSON that `JSON.parse` reads and serde_json refuses (lone
    /// surrogates, out-of-range numbers) made the full load fail (exit 65) and the scan
    /// count an entry it could not read (`list`: count 2, one row). The expected bytes are
    /// what the gateway's load + save wrote for this store (Node 24, openclaw@2026.7.1).
    #[test]
    fn lone_surrogates_and_out_of_range_numbers_load_like_json_parse() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("sessions.json");
        let repro = r#"{"a":{"sessionId":"x","updatedAt":1},"b":{"sessionId":"y","updatedAt":2,"label":"\ud800"}}"#;
        std::fs::write(&p, repro).unwrap();
        let s = StoreScan::open(&p).unwrap();
        assert_eq!(s.len(), 2);
        for i in 0..2 {
            assert!(s.peek_updated_at(i).is_some());
            assert!(s.entry(i).is_some(), "{}", s.key(i));
        }
        let input = "{\"a\":{\"sessionId\":\"x\",\"updatedAt\":1},\"b\":{\"sessionId\":\"y\",\"updatedAt\":2,\"label\":\"\\ud800\",\"n\":1e999,\"m\":-1e999,\"u\":1e-999,\"v\":-1e-999,\"s\":\"x\\udc00\\ud83d\\ude00\\uDBFF\",\"\\udfff\":1,\"r\":\"\\udbfe\\udc00\u{10ffff}\"},\"c\":{\"sessionId\":\"z\",\"updatedAt\":1e999},\"d\":{\"sessionId\":\"w\\ud800\",\"updatedAt\":3},\"k\\ud83d\":{\"sessionId\":\"q\",\"updatedAt\":4}}";
        let gateway_saved = "{\n  \"a\": {\n    \"sessionId\": \"x\",\n    \"updatedAt\": 1\n  },\n  \"b\": {\n    \"sessionId\": \"y\",\n    \"updatedAt\": 2,\n    \"label\": \"\\ud800\",\n    \"n\": null,\n    \"m\": null,\n    \"u\": 0,\n    \"v\": 0,\n    \"s\": \"x\\udc00\u{1f600}\\udbff\",\n    \"\\udfff\": 1,\n    \"r\": \"\u{10f800}\u{10ffff}\"\n  },\n  \"c\": {\n    \"sessionId\": \"z\",\n    \"updatedAt\": 0\n  },\n  \"k\\ud83d\": {\n    \"sessionId\": \"q\",\n    \"updatedAt\": 4\n  }\n}";
        std::fs::write(&p, input).unwrap();
        let mut store = super::super::SessionStore::load(&p, Default::default()).unwrap();
        let s = StoreScan::open(&p).unwrap();
        let scanned: Vec<(String, Map<String, Value>)> = (0..s.len())
            .filter_map(|i| Some((s.key(i).to_string(), s.entry(i)?)))
            .collect();
        let loaded: Vec<(String, Map<String, Value>)> = store
            .entries()
            .iter()
            .map(|(k, v)| (k.clone(), v.as_object().unwrap().clone()))
            .collect();
        assert_eq!(scanned, loaded);
        assert_eq!(loaded.len(), 4, "{loaded:?}");
        assert_eq!(s.peek_updated_at(2), Some(Some(0.0)));
        assert_eq!(s.peek_updated_at(3), None);
        store.save().unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), gateway_saved);
        // And that is a fixed point.
        let mut again = super::super::SessionStore::load(&p, Default::default()).unwrap();
        assert!(matches!(
            again.save().unwrap(),
            super::super::SaveOutcome::Unchanged
        ));
    }

    #[test]
    fn malformed_and_non_object_are_errors() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("sessions.json");
        std::fs::write(&p, "{\"a\": {").unwrap();
        assert!(matches!(
            StoreScan::open(&p),
            Err(StoreError::Malformed { .. })
        ));
        std::fs::write(&p, "[1]").unwrap();
        assert!(matches!(
            StoreScan::open(&p),
            Err(StoreError::NotObject { .. })
        ));
        assert!(StoreScan::open(&d.path().join("missing.json"))
            .unwrap()
            .is_empty());
    }
}
