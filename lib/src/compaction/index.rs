//! SessionManager's index (`buildIndex`, `normalizeEntryParent`, `getBranch`, `getEntries`)
//! over slim rows, for compaction: the same rules as [`crate::transcript::tree::SessionIndex`]
//! (ported line by line from it), but each row is a few interned symbols instead of a JSON
//! object, ids are compared as integers, and rows are indexed as they are pushed. A
//! transcript of a million rows is indexed in tens of megabytes.

use std::collections::hash_map::{Entry, RandomState};
use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasher, BuildHasherDefault, Hasher};

use serde_json::Value;

/// An interned string.
pub type Sym = u32;

/// A hasher for keys that already are (keyed, random) hashes.
#[derive(Debug, Default, Clone, Copy)]
struct PassThrough(u64);

impl Hasher for PassThrough {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

/// Interned strings: each distinct string stored once, in one buffer.
#[derive(Debug, Default, Clone)]
pub struct Symbols {
    text: String,
    ends: Vec<usize>,
    /// Symbols by the SipHash of their string.
    by_hash: HashMap<u64, Sym, BuildHasherDefault<PassThrough>>,
    /// Strings whose 64-bit hash collided with an earlier one.
    collided: HashMap<Box<str>, Sym>,
    hasher: RandomState,
    /// The last symbols interned (a row's parent is usually the id of the row before).
    recent: [Sym; 4],
    recent_at: usize,
}

impl Symbols {
    /// Room for about `n` symbols of `bytes` bytes in all.
    pub fn reserve(&mut self, n: usize, bytes: usize) {
        self.text.reserve(bytes);
        self.ends.reserve(n);
        self.by_hash.reserve(n);
    }

    /// The number of symbols.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// The string of a symbol.
    pub fn str(&self, s: Sym) -> &str {
        let i = s as usize;
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.text[start..self.ends[i]]
    }

    /// The symbol of `s`, when interned.
    pub fn get(&self, s: &str) -> Option<Sym> {
        let h = self.hasher.hash_one(s);
        match self.by_hash.get(&h) {
            Some(&sym) if self.str(sym) == s => Some(sym),
            Some(_) => self.collided.get(s).copied(),
            None => None,
        }
    }

    /// Interns `s`.
    pub fn intern(&mut self, s: &str) -> Sym {
        for &r in &self.recent {
            if (r as usize) < self.ends.len() && self.str(r) == s {
                return r;
            }
        }
        let sym = self.intern_hashed(s);
        self.recent[self.recent_at] = sym;
        self.recent_at = (self.recent_at + 1) % self.recent.len();
        sym
    }

    fn intern_hashed(&mut self, s: &str) -> Sym {
        let h = self.hasher.hash_one(s);
        let next = Sym::try_from(self.ends.len())
            .ok()
            .filter(|&n| n < Sym::MAX - 3)
            .expect("fewer than 4 billion distinct ids");
        match self.by_hash.entry(h) {
            Entry::Occupied(e) => {
                let sym = *e.get();
                if self.str(sym) == s {
                    return sym;
                }
                if let Some(&c) = self.collided.get(s) {
                    return c;
                }
                self.collided.insert(s.into(), next);
            }
            Entry::Vacant(e) => {
                e.insert(next);
            }
        }
        self.text.push_str(s);
        self.ends.push(self.text.len());
        next
    }
}

/// A structural field of a row, reduced to what the index distinguishes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Field {
    /// The key is missing (`undefined`).
    #[default]
    Absent,
    /// `null`.
    Null,
    /// A string.
    Str(Sym),
    /// Any other JSON value (number, boolean, object, array).
    Other,
}

impl Field {
    /// The string, when this is one.
    pub fn str(self) -> Option<Sym> {
        match self {
            Field::Str(s) => Some(s),
            _ => None,
        }
    }
}

/// The `type` of a row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// `message`.
    Message,
    /// `thinking_level_change`.
    ThinkingLevelChange,
    /// `model_change`.
    ModelChange,
    /// `compaction`.
    Compaction,
    /// `branch_summary`.
    BranchSummary,
    /// `custom`.
    Custom,
    /// `custom_message`.
    CustomMessage,
    /// `label`.
    Label,
    /// `session_info`.
    SessionInfo,
    /// `session`.
    Session,
    /// `leaf`.
    Leaf,
    /// Another string (the symbol of the string).
    Other(Sym),
    /// No string `type` (or not an object).
    None,
}

impl Kind {
    fn from_str(t: &str, syms: &mut Symbols) -> Kind {
        match t {
            "message" => Kind::Message,
            "thinking_level_change" => Kind::ThinkingLevelChange,
            "model_change" => Kind::ModelChange,
            "compaction" => Kind::Compaction,
            "branch_summary" => Kind::BranchSummary,
            "custom" => Kind::Custom,
            "custom_message" => Kind::CustomMessage,
            "label" => Kind::Label,
            "session_info" => Kind::SessionInfo,
            "session" => Kind::Session,
            "leaf" => Kind::Leaf,
            other => Kind::Other(syms.intern(other)),
        }
    }

    /// The type string.
    pub fn as_str(self, syms: &Symbols) -> Option<&str> {
        Some(match self {
            Kind::Message => "message",
            Kind::ThinkingLevelChange => "thinking_level_change",
            Kind::ModelChange => "model_change",
            Kind::Compaction => "compaction",
            Kind::BranchSummary => "branch_summary",
            Kind::Custom => "custom",
            Kind::CustomMessage => "custom_message",
            Kind::Label => "label",
            Kind::SessionInfo => "session_info",
            Kind::Session => "session",
            Kind::Leaf => "leaf",
            Kind::Other(s) => syms.str(s),
            Kind::None => return None,
        })
    }

    /// One of the nine canonical entry types.
    pub fn is_canonical(self) -> bool {
        !matches!(
            self,
            Kind::Session | Kind::Leaf | Kind::Other(_) | Kind::None
        )
    }
}

/// `appendMode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AppendMode {
    /// Missing.
    #[default]
    Absent,
    /// `"side"`.
    Side,
    /// Anything else.
    Other,
}

/// The structural fields of one row (everything the index reads).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SlimRow {
    /// `type`.
    pub kind: Kind,
    /// `id`.
    pub id: Field,
    /// `parentId`.
    pub parent: Field,
    /// `targetId`.
    pub target: Field,
    /// `appendParentId`.
    pub append_parent: Field,
    /// `firstKeptEntryId`.
    pub first_kept: Field,
    /// `appendMode`.
    pub append_mode: AppendMode,
}

impl SlimRow {
    /// A row with no fields (what a non-object row looks like to the index).
    pub const EMPTY: SlimRow = SlimRow {
        kind: Kind::None,
        id: Field::Absent,
        parent: Field::Absent,
        target: Field::Absent,
        append_parent: Field::Absent,
        first_kept: Field::Absent,
        append_mode: AppendMode::Absent,
    };

    /// The slim form of a parsed row.
    pub fn of(v: &Value, syms: &mut Symbols) -> SlimRow {
        let Some(o) = v.as_object() else {
            return SlimRow::EMPTY;
        };
        let mut field = |k: &str| match o.get(k) {
            None => Field::Absent,
            Some(Value::Null) => Field::Null,
            Some(Value::String(s)) => Field::Str(syms.intern(s)),
            Some(_) => Field::Other,
        };
        let id = field("id");
        let parent = field("parentId");
        let target = field("targetId");
        let append_parent = field("appendParentId");
        let first_kept = field("firstKeptEntryId");
        let kind = match o.get("type") {
            Some(Value::String(t)) => Kind::from_str(t, syms),
            _ => Kind::None,
        };
        let append_mode = match o.get("appendMode") {
            None => AppendMode::Absent,
            Some(Value::String(s)) if s == "side" => AppendMode::Side,
            Some(_) => AppendMode::Other,
        };
        SlimRow {
            kind,
            id,
            parent,
            target,
            append_parent,
            first_kept,
            append_mode,
        }
    }
}

/// How SessionManager sorted a row when loading.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slot {
    /// The header.
    Header,
    /// A canonical file entry.
    File,
    /// An opaque row.
    Opaque,
}

const NO_ROW: u32 = u32::MAX;

fn pack_field(f: Field) -> u32 {
    match f {
        Field::Absent => 0,
        Field::Null => 1,
        Field::Other => 2,
        Field::Str(s) => s + 3,
    }
}

fn unpack_field(c: u32) -> Field {
    match c {
        0 => Field::Absent,
        1 => Field::Null,
        2 => Field::Other,
        s => Field::Str(s - 3),
    }
}

const KINDS: [Kind; 12] = [
    Kind::Message,
    Kind::ThinkingLevelChange,
    Kind::ModelChange,
    Kind::Compaction,
    Kind::BranchSummary,
    Kind::Custom,
    Kind::CustomMessage,
    Kind::Label,
    Kind::SessionInfo,
    Kind::Session,
    Kind::Leaf,
    Kind::None,
];
const KIND_OTHER: u8 = KINDS.len() as u8;

/// A row as the index keeps it (12 bytes): id, parent, type, append mode and slot; the
/// rare fields (`targetId`, `appendParentId`, `firstKeptEntryId`, an unknown type) are
/// kept beside, in [`Index::extras`].
#[derive(Debug, Clone, Copy)]
struct Packed {
    id: u32,
    parent: u32,
    kind: u8,
    mode: AppendMode,
    slot: Slot,
    extra: bool,
}

/// The rare fields of a row.
#[derive(Debug, Clone, Copy, Default)]
struct Extra {
    kind: Option<Sym>,
    target: Field,
    append_parent: Field,
    first_kept: Field,
}

/// SessionManager's in-memory index over slim rows.
#[derive(Debug, Clone)]
pub struct Index {
    /// Interned ids and types.
    pub syms: Symbols,
    /// The rows in file order.
    rows: Vec<Packed>,
    /// The rare fields, by row.
    extras: HashMap<u32, Extra>,
    /// The row of each id symbol (the last row with that id).
    by_id: Vec<u32>,
    opaque_parents: HashMap<Sym, Option<Sym>>,
    logical_parents: HashMap<Sym, Option<Sym>>,
    invalid_leaf_controls: HashSet<Sym>,
    has_header: bool,
    /// The symbol of `""`.
    empty: Sym,
    /// The current leaf (`getLeafId`).
    pub leaf: Option<Sym>,
    /// Where the next append attaches (`appendParentId`).
    pub append_parent: Option<Sym>,
}

impl Default for Index {
    fn default() -> Index {
        Index::new()
    }
}

impl Index {
    /// An empty index.
    pub fn new() -> Index {
        let mut syms = Symbols::default();
        let empty = syms.intern("");
        Index {
            syms,
            rows: Vec::new(),
            extras: HashMap::new(),
            by_id: Vec::new(),
            opaque_parents: HashMap::new(),
            logical_parents: HashMap::new(),
            invalid_leaf_controls: HashSet::new(),
            has_header: false,
            empty,
            leaf: None,
            append_parent: None,
        }
    }

    fn is_empty_sym(&self, s: Sym) -> bool {
        s == self.empty
    }

    /// Room for `n` more rows.
    pub fn reserve(&mut self, n: usize) {
        self.rows.reserve(n);
    }

    /// The number of rows.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Whether there are no rows.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// A row's fields.
    pub fn row(&self, i: usize) -> SlimRow {
        let p = self.rows[i];
        let x = if p.extra {
            self.extras.get(&(i as u32)).copied().unwrap_or_default()
        } else {
            Extra::default()
        };
        SlimRow {
            kind: match KINDS.get(p.kind as usize) {
                Some(&k) => k,
                None => Kind::Other(x.kind.unwrap_or_default()),
            },
            id: unpack_field(p.id),
            parent: unpack_field(p.parent),
            target: x.target,
            append_parent: x.append_parent,
            first_kept: x.first_kept,
            append_mode: p.mode,
        }
    }

    /// A row's type.
    pub fn kind(&self, i: usize) -> Kind {
        let p = self.rows[i];
        match KINDS.get(p.kind as usize) {
            Some(&k) => k,
            None => self.row(i).kind,
        }
    }

    /// A row's `id` when it is a non-empty string.
    pub fn id_at(&self, i: usize) -> Option<Sym> {
        unpack_field(self.rows[i].id)
            .str()
            .filter(|&s| !self.is_empty_sym(s))
    }

    /// A row's `parentId`.
    fn parent_at(&self, i: usize) -> Field {
        unpack_field(self.rows[i].parent)
    }

    /// How a row was classified.
    pub fn slot(&self, i: usize) -> Slot {
        self.rows[i].slot
    }

    /// Sets a row's `firstKeptEntryId` (the hardening rule rewrites the new compaction).
    pub fn set_first_kept(&mut self, i: usize, f: Field) {
        self.rows[i].extra = true;
        self.extras.entry(i as u32).or_default().first_kept = f;
    }

    /// `id` when it is a non-empty string (`id_of`).
    pub fn id_of(&self, r: &SlimRow) -> Option<Sym> {
        r.id.str().filter(|&s| !self.is_empty_sym(s))
    }

    fn is_header(r: &SlimRow) -> bool {
        r.kind == Kind::Session && matches!(r.id, Field::Str(_))
    }

    fn is_indexed(&self, r: &SlimRow) -> bool {
        r.kind.is_canonical() && self.id_of(r).is_some()
    }

    fn in_by_id(&self, s: Sym) -> bool {
        self.by_id.get(s as usize).is_some_and(|&r| r != NO_ROW)
    }

    /// The row of an entry id symbol.
    pub fn row_of_sym(&self, s: Sym) -> Option<usize> {
        self.by_id
            .get(s as usize)
            .filter(|&&r| r != NO_ROW)
            .map(|&r| r as usize)
    }

    /// The row index of an entry id (the last row with that id).
    pub fn row_of(&self, id: &str) -> Option<usize> {
        self.syms.get(id).and_then(|s| self.row_of_sym(s))
    }

    /// The string of a symbol.
    pub fn str(&self, s: Sym) -> &str {
        self.syms.str(s)
    }

    /// The leaf id.
    pub fn leaf_id(&self) -> Option<&str> {
        self.leaf.map(|s| self.syms.str(s))
    }

    /// The append parent id.
    pub fn append_parent_id(&self) -> Option<&str> {
        self.append_parent.map(|s| self.syms.str(s))
    }

    fn is_known_reference(&self, id: Option<Sym>) -> bool {
        match id {
            None => true,
            Some(id) => {
                self.in_by_id(id)
                    || (self.opaque_parents.contains_key(&id)
                        && !self.invalid_leaf_controls.contains(&id))
            }
        }
    }

    fn resolve_opaque_append_parent(&self, parent: Option<Sym>) -> Option<Sym> {
        match parent {
            None => None,
            Some(p) if self.in_by_id(p) || self.opaque_parents.contains_key(&p) => Some(p),
            Some(p) => self.resolve_canonical_parent(Some(p)),
        }
    }

    fn resolve_opaque_leaf_target(&self, target: Option<Sym>) -> Option<Sym> {
        match target {
            None => None,
            Some(t) if self.in_by_id(t) => Some(t),
            Some(t) => self.resolve_canonical_parent(Some(t)),
        }
    }

    /// `resolveCanonicalParentId`: follows opaque links up to a canonical entry.
    pub fn resolve_canonical_parent(&self, parent: Option<Sym>) -> Option<Sym> {
        let mut seen: HashSet<Sym> = HashSet::new();
        let mut current = parent;
        while let Some(c) = current.filter(|&c| !self.is_empty_sym(c)) {
            if self.in_by_id(c) {
                break;
            }
            if !seen.insert(c) {
                return None;
            }
            current = self.opaque_parents.get(&c).copied().flatten();
        }
        current
    }

    /// Adds a row at the end and indexes it, as `buildIndex` would over all rows.
    pub fn push(&mut self, r: SlimRow) -> usize {
        let i = self.rows.len();
        assert!(i < NO_ROW as usize, "too many rows");
        if self.by_id.len() < self.syms.len() {
            self.by_id.resize(self.syms.len(), NO_ROW);
        }
        let slot = if !self.has_header && Index::is_header(&r) {
            self.has_header = true;
            Slot::Header
        } else if self.is_indexed(&r) {
            Slot::File
        } else {
            Slot::Opaque
        };
        let kind = match r.kind {
            Kind::Other(_) => KIND_OTHER,
            k => KINDS.iter().position(|&x| x == k).unwrap_or_default() as u8,
        };
        let x = Extra {
            kind: match r.kind {
                Kind::Other(s) => Some(s),
                _ => None,
            },
            target: r.target,
            append_parent: r.append_parent,
            first_kept: r.first_kept,
        };
        let extra = x.kind.is_some()
            || x.target != Field::Absent
            || x.append_parent != Field::Absent
            || x.first_kept != Field::Absent;
        if extra {
            self.extras.insert(i as u32, x);
        }
        self.rows.push(Packed {
            id: pack_field(r.id),
            parent: pack_field(r.parent),
            kind,
            mode: r.append_mode,
            slot,
            extra,
        });
        match slot {
            Slot::Header => {}
            Slot::Opaque => self.index_opaque(&r),
            Slot::File => self.index_file(&r, i),
        }
        i
    }

    /// `parseOpaqueLeafEntry`: (id, parent, target, appendParentId).
    #[allow(clippy::type_complexity)]
    fn parse_opaque_leaf(&self, r: &SlimRow) -> Option<(Sym, Option<Sym>, Option<Option<Sym>>)> {
        if r.kind != Kind::Leaf {
            return None;
        }
        let id = self.id_of(r)?;
        match r.parent {
            Field::Null | Field::Str(_) => {}
            _ => return None,
        }
        let target = match r.target {
            Field::Null => None,
            Field::Str(s) => Some(s),
            _ => return None,
        };
        let append = match r.append_parent {
            Field::Absent => None,
            Field::Null => Some(None),
            Field::Str(s) => Some(Some(s)),
            Field::Other => return None,
        };
        if r.append_mode == AppendMode::Other {
            return None;
        }
        Some((id, target, append))
    }

    fn index_opaque(&mut self, r: &SlimRow) {
        if let Some((id, target, append)) = self.parse_opaque_leaf(r) {
            let valid = self.is_known_reference(target)
                && append.is_none_or(|a| self.is_known_reference(a));
            if !valid {
                let parent = self.resolve_opaque_append_parent(r.parent.str());
                self.invalid_leaf_controls.insert(id);
                self.opaque_parents.insert(id, parent);
                return;
            }
            let leaf_id = self.resolve_opaque_leaf_target(target);
            let append_parent = match append {
                None => leaf_id,
                Some(a) => self.resolve_opaque_append_parent(a),
            };
            self.opaque_parents.insert(id, leaf_id);
            self.leaf = leaf_id;
            self.append_parent = append_parent;
            return;
        }
        // parseParentLinkedOpaqueEntry.
        if matches!(r.kind, Kind::Session | Kind::Leaf) {
            return;
        }
        let Some(id) = self.id_of(r) else { return };
        let parent = match r.parent {
            Field::Null => None,
            Field::Str(s) => Some(s),
            _ => return,
        };
        self.opaque_parents.insert(id, parent);
        self.append_parent = Some(id);
    }

    fn index_file(&mut self, r: &SlimRow, i: usize) {
        let Some(id) = self.id_of(r) else { return };
        let side = r.append_mode == AppendMode::Side;
        let has_parent = r.parent != Field::Absent;
        // Pid::from_json: a non-string parent reads as null.
        let parent = r.parent.str();
        if !has_parent || (!side && parent == self.append_parent && self.leaf != self.append_parent)
        {
            self.logical_parents.insert(id, self.leaf);
        }
        self.by_id[id as usize] = i as u32;
        self.append_parent = Some(id);
        if !side {
            self.leaf = Some(id);
        }
    }

    /// The parent of `normalizeEntryParent(row)` (what its `parentId` reads as a string).
    pub fn normal_parent(&self, row: usize) -> Option<Sym> {
        if let Some(p) = self
            .id_at(row)
            .and_then(|id| self.logical_parents.get(&id).copied())
        {
            return p;
        }
        match self.parent_at(row).str() {
            Some(p) => self.resolve_canonical_parent(Some(p)),
            None => None,
        }
    }

    /// The `firstKeptEntryId` of `normalizeEntryParent(row)`, when it is a string
    /// (a compaction pointing at an opaque row is re-pointed at a canonical entry).
    pub fn normal_first_kept(&self, row: usize) -> Option<Sym> {
        let r = &self.row(row);
        let fk = r.first_kept.str()?;
        if r.kind != Kind::Compaction || self.in_by_id(fk) || !self.opaque_parents.contains_key(&fk)
        {
            return Some(fk);
        }
        let parent = self.normal_parent(row);
        let replacement = self
            .resolve_canonical_parent(Some(fk))
            .or_else(|| self.first_canonical_descendant_on_branch(fk, parent))
            .or_else(|| self.first_canonical_descendant(fk))
            .or(parent);
        match replacement.filter(|&x| x != fk) {
            Some(x) => Some(x),
            None => Some(fk),
        }
    }

    fn first_canonical_descendant_on_branch(&self, opaque: Sym, leaf: Option<Sym>) -> Option<Sym> {
        let mut seen = HashSet::new();
        let mut current = leaf;
        let mut first = None;
        while let Some(c) = current.filter(|&c| !self.is_empty_sym(c)) {
            if !seen.insert(c) {
                break;
            }
            if c == opaque {
                return first;
            }
            if let Some(row) = self.row_of_sym(c) {
                first = Some(c);
                current = self.parent_at(row).str();
            } else {
                current = self.opaque_parents.get(&c).copied().flatten();
            }
        }
        None
    }

    fn first_canonical_descendant(&self, opaque: Sym) -> Option<Sym> {
        for i in 0..self.rows.len() {
            let r = &self.row(i);
            if self.slot(i) != Slot::File || !self.is_indexed(r) {
                continue;
            }
            let mut seen = HashSet::new();
            let mut parent = r.parent.str();
            while let Some(p) =
                parent.filter(|&p| !self.is_empty_sym(p) && self.opaque_parents.contains_key(&p))
            {
                if !seen.insert(p) {
                    break;
                }
                if p == opaque {
                    return self.id_of(r);
                }
                parent = self.opaque_parents.get(&p).copied().flatten();
            }
        }
        None
    }

    /// The row indices of `getBranch()` (root to leaf).
    pub fn branch_rows(&self) -> Vec<usize> {
        let mut path = Vec::new();
        let mut seen = vec![0u64; self.syms.len().div_ceil(64)];
        let mut current = self.leaf;
        while let Some(c) = current.filter(|&c| !self.is_empty_sym(c)) {
            let (w, b) = (c as usize / 64, 1u64 << (c % 64));
            if seen[w] & b != 0 {
                break;
            }
            seen[w] |= b;
            if let Some(row) = self.row_of_sym(c) {
                path.push(row);
                current = self.normal_parent(row);
            } else {
                current = self.opaque_parents.get(&c).copied().flatten();
            }
        }
        path.reverse();
        path
    }

    /// The rows of `getEntries()`: every non-header file entry, in file order.
    pub fn entry_rows(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.rows.len())
            .filter(|&i| self.slot(i) == Slot::File && self.kind(i) != Kind::Session)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::tree::SessionIndex;
    use serde_json::json;

    fn both(rows: &[Value]) {
        let want = SessionIndex::build(rows.to_vec());
        let mut ix = Index::new();
        for r in rows {
            let s = SlimRow::of(r, &mut ix.syms);
            ix.push(s);
        }
        assert_eq!(ix.leaf_id(), want.leaf_id.as_deref(), "{rows:?}");
        assert_eq!(ix.append_parent_id(), want.append_parent_id.as_deref());
        let w: Vec<usize> = want.branch_rows(None);
        assert_eq!(ix.branch_rows(), w);
        let entries = want.entries();
        for (i, r) in rows.iter().enumerate() {
            assert_eq!(ix.row(i), SlimRow::of(r, &mut ix.syms), "row {i}");
        }
        let mine: Vec<usize> = ix.entry_rows().collect();
        assert_eq!(mine, entries.iter().map(|e| e.0).collect::<Vec<_>>());
        for (row, e) in entries {
            let p = ix.normal_parent(row).map(|s| ix.str(s).to_string());
            assert_eq!(
                p.as_deref(),
                e.get("parentId").and_then(Value::as_str),
                "row {row}"
            );
            let fk = ix.normal_first_kept(row).map(|s| ix.str(s).to_string());
            assert_eq!(
                fk.as_deref(),
                e.get("firstKeptEntryId").and_then(Value::as_str),
                "row {row}"
            );
        }
    }

    #[test]
    fn matches_the_session_index() {
        let h = json!({"type":"session","version":3,"id":"s","timestamp":"t","cwd":"/"});
        let m = |id: &str, p: Value| json!({"type":"message","id":id,"parentId":p,"timestamp":"t","message":{"role":"user","content":"x"}});
        both(&[h.clone(), m("a", Value::Null), m("b", json!("a"))]);
        // Side appends, logical parents, missing parents, numeric parents, empty ids.
        both(&[
            h.clone(),
            m("a", Value::Null),
            m("b", json!("a")),
            json!({"type":"message","id":"m","parentId":"b","appendMode":"side","message":{}}),
            m("c", json!("m")),
            json!({"type":"message","id":"d","message":{}}),
            m("e", json!(5)),
            m("", json!("e")),
            m("f", json!("")),
            json!([1, 2]),
            json!({"type":"custom","id":"g","parentId":"f","appendMode":"other"}),
        ]);
        // Leaf controls (valid, invalid, side), opaque links and a compaction whose
        // firstKeptEntryId points at an opaque row.
        both(&[
            h.clone(),
            m("a", Value::Null),
            m("b", json!("a")),
            json!({"type":"weird","id":"o1","parentId":"b"}),
            m("c", json!("o1")),
            json!({"type":"leaf","id":"l1","parentId":"c","targetId":"a"}),
            m("d", json!("l1")),
            json!({"type":"leaf","id":"l2","parentId":"d","targetId":"zzz"}),
            json!({"type":"leaf","id":"l3","parentId":"d","targetId":"b","appendParentId":null}),
            json!({"type":"leaf","id":"l4","parentId":"d","targetId":"c","appendParentId":"o1","appendMode":"side"}),
            json!({"type":"compaction","id":"k","parentId":"c","firstKeptEntryId":"o1","summary":"s"}),
            json!({"type":"weird","id":"o2","parentId":"k"}),
            json!({"type":"compaction","id":"k2","parentId":"o2","firstKeptEntryId":"o2","summary":"s"}),
            json!({"type":"compaction","id":"k3","parentId":"k2","firstKeptEntryId":7,"summary":"s"}),
            json!({"type":"session","id":"s2"}),
            json!({"type":"label","id":"lb","parentId":"k3","targetId":"a","label":"x"}),
        ]);
    }
}
