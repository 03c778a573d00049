//! The tree, the leaf and the active branch (`transcript.md` §1.7), twice: as
//! SessionManager builds them ([`SessionIndex`], used for the model context, `tree` and
//! `cat --branch`) and as the gateway's readers scan them ([`scan_tree`], used by the
//! history and tail readers). Both follow the same rules (side appends, logical parents,
//! transparent opaque links, `leaf` controls) but differ in corner cases, so each is ported
//! as written.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use super::entry::{self, id_of, is_canonical, is_indexed, is_side_append, type_of};

use crate::js;

/// A JavaScript-ish parent reference: `undefined`, `null` or a string id.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Pid {
    /// No value (`undefined`).
    Undef,
    /// `null`.
    Null,
    /// A string id (possibly empty).
    Id(String),
}

impl Pid {
    fn from_json(v: Option<&Value>) -> Pid {
        match v {
            None => Pid::Undef,
            Some(Value::Null) => Pid::Null,
            Some(Value::String(s)) => Pid::Id(s.clone()),
            // Numbers and objects never equal an id; they read as "no parent".
            Some(_) => Pid::Null,
        }
    }

    /// The id, when this is a non-empty string (JavaScript truthiness).
    pub fn truthy(&self) -> Option<&str> {
        match self {
            Pid::Id(s) if !s.is_empty() => Some(s),
            _ => None,
        }
    }

    /// As an optional id (`undefined`/`null` → `None`).
    pub fn as_opt(&self) -> Option<&str> {
        match self {
            Pid::Id(s) => Some(s),
            _ => None,
        }
    }

    /// As JSON (`undefined` → `null`).
    pub fn to_json(&self) -> Value {
        match self {
            Pid::Id(s) => Value::String(s.clone()),
            _ => Value::Null,
        }
    }
}

fn opt_pid(o: &Option<String>) -> Pid {
    match o {
        Some(s) => Pid::Id(s.clone()),
        None => Pid::Null,
    }
}

/// A parsed `leaf` control row (SessionManager's `parseOpaqueLeafEntry`).
#[derive(Debug, Clone)]
struct LeafControl {
    id: String,
    parent_id: Option<String>,
    target_id: Option<String>,
    append_parent_id: Option<Option<String>>,
}

fn parse_opaque_leaf(v: &Value) -> Option<LeafControl> {
    if !v.is_object() || type_of(v) != Some("leaf") {
        return None;
    }
    let id = id_of(v)?.to_string();
    let parent_id = match v.get("parentId") {
        Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        _ => return None,
    };
    let target_id = match v.get("targetId") {
        Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        _ => return None,
    };
    let append_parent_id = match v.get("appendParentId") {
        None => None,
        Some(Value::Null) => Some(None),
        Some(Value::String(s)) => Some(Some(s.clone())),
        Some(_) => return None,
    };
    match v.get("appendMode") {
        None => {}
        Some(Value::String(s)) if s == "side" => {}
        Some(_) => return None,
    }
    Some(LeafControl {
        id,
        parent_id,
        target_id,
        append_parent_id,
    })
}

/// SessionManager's `parseParentLinkedOpaqueEntry`: an unknown row with an id and a parent.
fn parse_opaque_link(v: &Value) -> Option<(String, Option<String>)> {
    if !v.is_object() {
        return None;
    }
    let t = type_of(v);
    if t == Some("session") || t == Some("leaf") {
        return None;
    }
    let id = id_of(v)?.to_string();
    let parent = match v.get("parentId") {
        Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        _ => return None,
    };
    Some((id, parent))
}

/// How SessionManager sorted a row when loading.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slot {
    /// The header (first `session` row with a string id).
    Header,
    /// A canonical file entry.
    File,
    /// An opaque row kept verbatim.
    Opaque,
}

/// Splits rows as `partitionSessionFileEntries` does.
pub fn partition(rows: &[Value]) -> Vec<Slot> {
    let legacy = rows
        .iter()
        .find(|v| entry::is_header(v))
        .map(entry::header_version)
        .is_some_and(|v| v < 2.0)
        || !rows.iter().any(entry::is_header);
    let mut has_header = false;
    rows.iter()
        .map(|v| {
            if !has_header && entry::is_header(v) {
                has_header = true;
                return Slot::Header;
            }
            if is_indexed(v) || (legacy && is_canonical(v)) {
                Slot::File
            } else {
                Slot::Opaque
            }
        })
        .collect()
}

/// A node of the tree view (`getTree`), held in a [`Tree`]'s arena.
#[derive(Debug, Clone)]
pub struct TreeNode {
    /// Index of the entry in [`SessionIndex::rows`].
    pub row: usize,
    /// The entry's id.
    pub id: String,
    /// The label attached to the entry, if any.
    pub label: Option<Value>,
    /// Depth below the root (roots are 0).
    pub depth: usize,
    /// The node this one hangs under (an index into [`Tree::nodes`]), `None` for a root.
    pub parent: Option<usize>,
    /// Children (indices into [`Tree::nodes`]), sorted by entry timestamp.
    pub children: Vec<usize>,
}

/// The tree view (`getTree`) as an arena: nodes in depth-first pre-order, so that a
/// transcript of a million linear rows needs no recursion to build, walk or print.
#[derive(Debug, Clone, Default)]
pub struct Tree {
    /// Every node, depth-first, children in order.
    pub nodes: Vec<TreeNode>,
    /// The roots (indices into `nodes`), in file order.
    pub roots: Vec<usize>,
}

/// How many nodes the tree view may hold per row before it stops expanding: a duplicate
/// id makes the gateway's node reachable from the parent of each of its rows, so its
/// subtree is shown under each of them, and chains of such duplicates could multiply.
const TREE_NODES_PER_ROW: usize = 4;

/// SessionManager's in-memory index of one transcript.
#[derive(Debug, Clone)]
pub struct SessionIndex {
    /// The rows in file order (after any in-memory migration).
    pub rows: Vec<Value>,
    /// How each row was classified.
    pub slots: Vec<Slot>,
    by_id: HashMap<String, usize>,
    opaque_parents: HashMap<String, Option<String>>,
    logical_parents: HashMap<String, Option<String>>,
    invalid_leaf_controls: HashSet<String>,
    labels: HashMap<String, Value>,
    /// The current leaf (`getLeafId`).
    pub leaf_id: Option<String>,
    /// Where the next append attaches (`appendParentId`).
    pub append_parent_id: Option<String>,
}

impl SessionIndex {
    /// Builds the index over rows as SessionManager's `buildIndex` does.
    pub fn build(rows: Vec<Value>) -> SessionIndex {
        let slots = partition(&rows);
        let mut ix = SessionIndex {
            rows,
            slots,
            by_id: HashMap::new(),
            opaque_parents: HashMap::new(),
            logical_parents: HashMap::new(),
            invalid_leaf_controls: HashSet::new(),
            labels: HashMap::new(),
            leaf_id: None,
            append_parent_id: None,
        };
        ix.index();
        ix
    }

    fn is_known_reference(&self, id: &Option<String>) -> bool {
        match id {
            None => true,
            Some(id) => {
                self.by_id.contains_key(id)
                    || (self.opaque_parents.contains_key(id)
                        && !self.invalid_leaf_controls.contains(id))
            }
        }
    }

    fn resolve_opaque_append_parent(&self, parent: &Option<String>) -> Option<String> {
        match parent {
            None => None,
            Some(p) if self.by_id.contains_key(p) || self.opaque_parents.contains_key(p) => {
                Some(p.clone())
            }
            Some(p) => self.resolve_canonical_parent(Some(p)),
        }
    }

    fn resolve_opaque_leaf_target(&self, target: &Option<String>) -> Option<String> {
        match target {
            None => None,
            Some(t) if self.by_id.contains_key(t) => Some(t.clone()),
            Some(t) => self.resolve_canonical_parent(Some(t)),
        }
    }

    /// `resolveCanonicalParentId`: follows opaque links up to a canonical entry.
    pub fn resolve_canonical_parent(&self, parent: Option<&str>) -> Option<String> {
        let mut seen: HashSet<&str> = HashSet::new();
        let mut current: Option<&str> = parent;
        while let Some(c) = current.filter(|c| !c.is_empty()) {
            if self.by_id.contains_key(c) {
                break;
            }
            if !seen.insert(c) {
                return None;
            }
            current = self.opaque_parents.get(c).and_then(|p| p.as_deref());
        }
        current.map(str::to_string)
    }

    fn index(&mut self) {
        for i in 0..self.rows.len() {
            match self.slots[i] {
                Slot::Header => {}
                Slot::Opaque => {
                    let v = &self.rows[i];
                    if let Some(leaf) = parse_opaque_leaf(v) {
                        let append = leaf.append_parent_id.clone();
                        let valid = self.is_known_reference(&leaf.target_id)
                            && append.as_ref().is_none_or(|a| self.is_known_reference(a));
                        if !valid {
                            let parent = self.resolve_opaque_append_parent(&leaf.parent_id);
                            self.invalid_leaf_controls.insert(leaf.id.clone());
                            self.opaque_parents.insert(leaf.id, parent);
                            continue;
                        }
                        let leaf_id = self.resolve_opaque_leaf_target(&leaf.target_id);
                        let append_parent = match &append {
                            None => leaf_id.clone(),
                            Some(a) => self.resolve_opaque_append_parent(a),
                        };
                        self.opaque_parents.insert(leaf.id, leaf_id.clone());
                        self.leaf_id = leaf_id;
                        self.append_parent_id = append_parent;
                        continue;
                    }
                    if let Some((id, parent)) = parse_opaque_link(v) {
                        self.opaque_parents.insert(id.clone(), parent);
                        self.append_parent_id = Some(id);
                    }
                }
                Slot::File => {
                    let v = &self.rows[i];
                    if !is_indexed(v) {
                        continue;
                    }
                    let id = id_of(v).unwrap_or_default().to_string();
                    let side = is_side_append(v);
                    let has_parent = v.get("parentId").is_some();
                    let parent = Pid::from_json(v.get("parentId"));
                    if !has_parent
                        || (!side
                            && parent == opt_pid(&self.append_parent_id)
                            && self.leaf_id != self.append_parent_id)
                    {
                        self.logical_parents
                            .insert(id.clone(), self.leaf_id.clone());
                    }
                    if type_of(v) == Some("label") {
                        if let Some(target) = v.get("targetId").and_then(Value::as_str) {
                            match v.get("label") {
                                Some(l) if js::truthy(l) => {
                                    self.labels.insert(target.to_string(), l.clone());
                                }
                                _ => {
                                    self.labels.remove(target);
                                }
                            }
                        }
                    }
                    self.by_id.insert(id.clone(), i);
                    self.append_parent_id = Some(id.clone());
                    if !side {
                        self.leaf_id = Some(id);
                    }
                }
            }
        }
    }

    /// The row index of an entry id (the last row with that id).
    pub fn row_of(&self, id: &str) -> Option<usize> {
        self.by_id.get(id).copied()
    }

    /// The label of an entry.
    pub fn label(&self, id: &str) -> Option<&Value> {
        self.labels.get(id)
    }

    /// Whether a `leaf` control row was invalid (ignored).
    pub fn is_invalid_leaf_control(&self, id: &str) -> bool {
        self.invalid_leaf_controls.contains(id)
    }

    /// The entry with its parent normalised (`normalizeEntryParent`).
    pub fn normalized(&self, row: usize) -> Value {
        let v = &self.rows[row];
        let id = id_of(v).unwrap_or_default();
        let parent: Option<String> = match self.logical_parents.get(id) {
            Some(p) => p.clone(),
            None => {
                let raw = Pid::from_json(v.get("parentId"));
                match raw.as_opt() {
                    Some(p) => self.resolve_canonical_parent(Some(p)),
                    None => None,
                }
            }
        };
        let raw = Pid::from_json(v.get("parentId"));
        let mut out = if opt_pid(&parent) == raw || (parent.is_none() && raw == Pid::Null) {
            v.clone()
        } else {
            let mut c = v.clone();
            if let Some(o) = c.as_object_mut() {
                o.insert("parentId".into(), opt_pid(&parent).to_json());
            }
            c
        };
        if type_of(v) == Some("compaction") {
            if let Some(fk) = v.get("firstKeptEntryId").and_then(Value::as_str) {
                if !self.by_id.contains_key(fk) && self.opaque_parents.contains_key(fk) {
                    let parent_id = out
                        .get("parentId")
                        .and_then(Value::as_str)
                        .map(String::from);
                    let replacement = self
                        .resolve_canonical_parent(Some(fk))
                        .or_else(|| {
                            self.first_canonical_descendant_on_branch(fk, parent_id.as_deref())
                        })
                        .or_else(|| self.first_canonical_descendant(fk))
                        .or(parent.clone());
                    if let Some(r) = replacement.filter(|r| r != fk) {
                        if let Some(o) = out.as_object_mut() {
                            o.insert("firstKeptEntryId".into(), Value::String(r));
                        }
                    }
                }
            }
        }
        out
    }

    fn first_canonical_descendant_on_branch(
        &self,
        opaque: &str,
        leaf: Option<&str>,
    ) -> Option<String> {
        let mut seen = HashSet::new();
        let mut current = leaf.map(str::to_string);
        let mut first: Option<String> = None;
        while let Some(c) = current.filter(|c| !c.is_empty()) {
            if !seen.insert(c.clone()) {
                break;
            }
            if c == opaque {
                return first;
            }
            if let Some(&row) = self.by_id.get(&c) {
                first = Some(c.clone());
                current = self.rows[row]
                    .get("parentId")
                    .and_then(Value::as_str)
                    .map(String::from);
            } else {
                current = self.opaque_parents.get(&c).cloned().flatten();
            }
        }
        None
    }

    fn first_canonical_descendant(&self, opaque: &str) -> Option<String> {
        for (i, v) in self.rows.iter().enumerate() {
            if self.slots[i] != Slot::File || !is_indexed(v) {
                continue;
            }
            let mut seen = HashSet::new();
            let mut parent = v.get("parentId").and_then(Value::as_str).map(String::from);
            while let Some(p) =
                parent.filter(|p| !p.is_empty() && self.opaque_parents.contains_key(p))
            {
                if !seen.insert(p.clone()) {
                    break;
                }
                if p == opaque {
                    return id_of(v).map(String::from);
                }
                parent = self.opaque_parents.get(&p).cloned().flatten();
            }
        }
        None
    }

    /// `getBranch(fromId)`: the path from a root to `from` (default: the leaf), entries
    /// with normalised parents.
    pub fn branch(&self, from: Option<&str>) -> Vec<Value> {
        self.branch_rows(from)
            .into_iter()
            .map(|r| self.normalized(r))
            .collect()
    }

    /// The row indices of [`SessionIndex::branch`].
    pub fn branch_rows(&self, from: Option<&str>) -> Vec<usize> {
        let mut path = Vec::new();
        let mut seen = HashSet::new();
        let mut current: Option<String> = from.map(String::from).or_else(|| self.leaf_id.clone());
        while let Some(c) = current.filter(|c| !c.is_empty()) {
            if !seen.insert(c.clone()) {
                break;
            }
            if let Some(&row) = self.by_id.get(&c) {
                path.push(row);
                current = self
                    .normalized(row)
                    .get("parentId")
                    .and_then(Value::as_str)
                    .map(String::from);
            } else {
                current = self.opaque_parents.get(&c).cloned().flatten();
            }
        }
        path.reverse();
        path
    }

    /// `getEntries()`: every non-header file entry with normalised parents, in file order,
    /// as (row index, entry).
    pub fn entries(&self) -> Vec<(usize, Value)> {
        (0..self.rows.len())
            .filter(|&i| self.slots[i] == Slot::File && type_of(&self.rows[i]) != Some("session"))
            .map(|i| (i, self.normalized(i)))
            .collect()
    }

    /// `getTree()`: roots in file order, children sorted by entry timestamp.
    pub fn tree(&self) -> Tree {
        let entries = self.entries();
        // Nodes by id (duplicate ids: the last row wins, as a Map would keep it).
        let mut node_rows: HashMap<String, usize> = HashMap::new();
        for (row, e) in &entries {
            if let Some(id) = e.get("id").and_then(Value::as_str) {
                node_rows.insert(id.to_string(), *row);
            }
        }
        let mut children: HashMap<usize, Vec<usize>> = HashMap::new();
        let mut roots: Vec<usize> = Vec::new();
        for (_, e) in &entries {
            let Some(id) = e.get("id").and_then(Value::as_str) else {
                continue;
            };
            let node = node_rows[id];
            let parent = e
                .get("parentId")
                .and_then(Value::as_str)
                .and_then(|p| self.resolve_canonical_parent(Some(p)));
            match parent {
                None => roots.push(node),
                Some(p) if p == id => roots.push(node),
                Some(p) => match node_rows.get(&p) {
                    Some(&pr) => children.entry(pr).or_default().push(node),
                    None => roots.push(node),
                },
            }
        }
        let ts = |row: usize| {
            self.rows[row]
                .get("timestamp")
                .and_then(Value::as_str)
                .and_then(js::date_parse)
        };
        let sorted_children = |row: usize| {
            let mut kids: Vec<usize> = children.get(&row).cloned().unwrap_or_default();
            // Array.prototype.sort is stable; NaN comparisons count as equal.
            kids.sort_by(|a, b| match (ts(*a), ts(*b)) {
                (Some(x), Some(y)) => x.cmp(&y),
                _ => std::cmp::Ordering::Equal,
            });
            kids
        };
        let mut tree = Tree::default();
        let budget = self.rows.len().saturating_mul(TREE_NODES_PER_ROW) + 1024;
        // A duplicate id can also make the parent links loop (the last row of an id is the
        // node, reached from each row's parent); `getTree` returns such a loop as a cyclic
        // graph. A row already on the path from the root is shown once more, without its
        // children, so the loop is visible and finite.
        let mut on_path = vec![false; self.rows.len()];
        enum Step {
            Enter(usize, Option<usize>, usize),
            Leave(usize),
        }
        // Depth-first with an explicit stack (children pushed in reverse so they come out
        // in order): a transcript may be a million rows deep.
        let mut stack: Vec<Step> = roots
            .iter()
            .rev()
            .map(|&r| Step::Enter(r, None, 0))
            .collect();
        while let Some(step) = stack.pop() {
            let (row, parent, depth) = match step {
                Step::Leave(row) => {
                    on_path[row] = false;
                    continue;
                }
                Step::Enter(row, parent, depth) => (row, parent, depth),
            };
            let id = id_of(&self.rows[row]).unwrap_or_default().to_string();
            let at = tree.nodes.len();
            tree.nodes.push(TreeNode {
                row,
                label: self.labels.get(&id).cloned(),
                id,
                depth,
                parent,
                children: Vec::new(),
            });
            match parent {
                Some(p) => tree.nodes[p].children.push(at),
                None => tree.roots.push(at),
            }
            if on_path[row] || tree.nodes.len() > budget {
                continue;
            }
            on_path[row] = true;
            stack.push(Step::Leave(row));
            for k in sorted_children(row).into_iter().rev() {
                stack.push(Step::Enter(k, Some(at), depth + 1));
            }
        }
        tree
    }
}

// ---- the gateway's tree scan ------------------------------------------------------------

/// One node of the gateway's scan (`scanSessionTranscriptTree`).
#[derive(Debug, Clone)]
pub struct ScanNode {
    /// The node's id.
    pub id: String,
    /// The (normalised) parent.
    pub parent_id: Pid,
    /// The leaf this row selects, when it updates the leaf (`Some(None)` = null leaf).
    pub leaf_id: Option<Option<String>>,
    /// Where the next append attaches after this row.
    pub append_parent_id: Pid,
    /// Index of the row in the input.
    pub index: usize,
    /// Whether the row is a valid `leaf` control.
    pub is_leaf_control: bool,
}

/// The result of the gateway's scan.
#[derive(Debug, Clone, Default)]
pub struct ScanTree {
    /// Nodes in file order.
    pub nodes: Vec<ScanNode>,
    /// Node position in `nodes` by id (last wins).
    pub by_id: HashMap<String, usize>,
    /// The leaf (`None` = null).
    pub leaf_id: Option<String>,
    /// Whether any valid leaf control exists.
    pub has_leaf_control: bool,
    /// Whether an explicitly parent-linked row updated the leaf.
    pub has_explicit_leaf_update: bool,
    /// Whether an invalid leaf control exists.
    pub has_invalid_leaf_control: bool,
}

fn read_non_empty(v: Option<&Value>) -> Option<String> {
    match v {
        Some(Value::String(s)) if !js::trim(s).is_empty() => Some(s.clone()),
        _ => None,
    }
}

/// `parseSessionTranscriptTreeEntry`: (id, parentId, leafId, appendParentId, side, is_leaf).
fn parse_tree_entry(v: &Value) -> Option<(String, Pid, Option<Option<String>>, Pid, bool, bool)> {
    if !v.is_object() || type_of(v) == Some("session") || v.get("parentId").is_none() {
        return None;
    }
    let id = read_non_empty(v.get("id"))?;
    let parent = match v.get("parentId") {
        Some(Value::Null) => Pid::Null,
        other => Pid::Id(read_non_empty(other)?),
    };
    if type_of(v) == Some("leaf") {
        let target: Option<String> = match v.get("targetId") {
            Some(Value::Null) => None,
            other => Some(read_non_empty(other)?),
        };
        let append: Option<String> = match v.get("appendParentId") {
            None => target.clone(),
            Some(Value::Null) => None,
            other => Some(read_non_empty(other)?),
        };
        let side = match v.get("appendMode") {
            None => false,
            Some(Value::String(s)) if s == "side" => true,
            Some(_) => return None,
        };
        return Some((
            id,
            opt_pid(&target),
            Some(target),
            opt_pid(&append),
            side,
            true,
        ));
    }
    let side = v.get("appendMode").and_then(Value::as_str) == Some("side");
    let leaf = (is_canonical(v) && !side).then(|| Some(id.clone()));
    Some((id.clone(), parent, leaf, Pid::Id(id), side, false))
}

fn is_leaf_control(v: &Value) -> bool {
    v.is_object() && type_of(v) == Some("leaf") && parse_tree_entry(v).is_some()
}

/// The gateway's `scanSessionTranscriptTree` over records in file order.
pub fn scan_tree(records: &[&Value]) -> ScanTree {
    let mut t = ScanTree::default();
    let mut leaf_id: Option<String> = None;
    let mut append_parent: Pid = Pid::Null;
    let mut invalid: HashSet<String> = HashSet::new();
    for (index, v) in records.iter().enumerate() {
        let explicit = parse_tree_entry(v);
        let known = |t: &ScanTree, invalid: &HashSet<String>, id: &Option<String>| match id {
            None => true,
            Some(id) => t.by_id.contains_key(id) && !invalid.contains(id),
        };
        if let Some((id, _, Some(leaf), append, _, true)) = &explicit {
            let append_opt = append.as_opt().map(String::from);
            if !known(&t, &invalid, leaf) || !known(&t, &invalid, &append_opt) {
                t.has_invalid_leaf_control = true;
                invalid.insert(id.clone());
                let node = ScanNode {
                    id: id.clone(),
                    parent_id: Pid::from_json(v.get("parentId")),
                    leaf_id: None,
                    append_parent_id: append_parent.clone(),
                    index,
                    is_leaf_control: true,
                };
                t.by_id.insert(id.clone(), t.nodes.len());
                t.nodes.push(node);
                continue;
            }
        }
        let tree_entry = match &explicit {
            Some(e) => Some(e.clone()),
            None => {
                if is_canonical(v) && v.get("parentId").is_none() {
                    read_non_empty(v.get("id")).map(|id| {
                        let side = v.get("appendMode").and_then(Value::as_str) == Some("side");
                        (
                            id.clone(),
                            opt_pid(&leaf_id),
                            (!side).then(|| Some(id.clone())),
                            Pid::Id(id),
                            side,
                            false,
                        )
                    })
                } else {
                    None
                }
            }
        };
        let Some((id, mut parent, leaf, append, side, is_leaf)) = tree_entry else {
            continue;
        };
        if is_canonical(v) {
            let candidate = if explicit.is_some()
                && !side
                && parent == append_parent
                && opt_pid(&leaf_id) != append_parent
            {
                opt_pid(&leaf_id)
            } else {
                parent.clone()
            };
            parent = resolve_through_leaf_controls(&t, records, candidate);
        }
        let node = ScanNode {
            id: id.clone(),
            parent_id: parent,
            leaf_id: leaf.clone(),
            append_parent_id: append.clone(),
            index,
            is_leaf_control: is_leaf && is_leaf_control(v),
        };
        t.by_id.insert(id, t.nodes.len());
        t.nodes.push(node);
        append_parent = append;
        if let Some(l) = leaf {
            leaf_id = l;
            if explicit.is_some() {
                t.has_explicit_leaf_update = true;
            }
        }
        if is_leaf && is_leaf_control(v) {
            t.has_leaf_control = true;
        }
    }
    t.leaf_id = leaf_id;
    t
}

/// The transcript-tree `resolveCanonicalParentId`: skips through leaf-control nodes only.
fn resolve_through_leaf_controls(t: &ScanTree, records: &[&Value], start: Pid) -> Pid {
    let mut seen: HashSet<String> = HashSet::new();
    let mut current = start;
    loop {
        let id = match &current {
            Pid::Id(s) => s.clone(),
            _ => return Pid::Null,
        };
        if !seen.insert(id.clone()) {
            return current;
        }
        let Some(&pos) = t.by_id.get(&id) else {
            return current;
        };
        let node = &t.nodes[pos];
        if !is_leaf_control(records[node.index]) {
            return current;
        }
        current = node.parent_id.clone();
    }
}

/// `selectSessionTranscriptTreePathNodes`: node positions from a root to `leaf`, leaf
/// controls left out; a cycle yields nothing, a missing ancestor ends the walk.
pub fn select_path(t: &ScanTree, records: &[&Value], leaf: Option<&str>) -> Vec<usize> {
    let Some(leaf) = leaf else {
        return Vec::new();
    };
    let mut path = Vec::new();
    let mut seen = HashSet::new();
    let mut current = Some(leaf.to_string());
    while let Some(c) = current.filter(|c| !c.is_empty()) {
        if !seen.insert(c.clone()) {
            return Vec::new();
        }
        let Some(&pos) = t.by_id.get(&c) else {
            break;
        };
        let node = &t.nodes[pos];
        if !is_leaf_control(records[node.index]) {
            path.push(pos);
        }
        current = node.parent_id.as_opt().map(String::from);
    }
    path.reverse();
    path
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rows() -> Vec<Value> {
        vec![
            json!({"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}),
            json!({"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}),
            json!({"type":"message","id":"b","parentId":"a","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[],"timestamp":2}}),
            json!({"type":"message","id":"c","parentId":"a","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"assistant","content":[],"timestamp":3}}),
            json!({"type":"message","id":"m","parentId":"c","timestamp":"2026-01-01T00:00:04.000Z","appendMode":"side","message":{"role":"assistant","provider":"openclaw","model":"delivery-mirror","content":[],"timestamp":4}}),
            json!({"type":"message","id":"d","parentId":"m","timestamp":"2026-01-01T00:00:05.000Z","message":{"role":"user","content":"x","timestamp":5}}),
        ]
    }

    #[test]
    fn side_append_does_not_move_the_leaf_and_next_row_parents_logically() {
        let ix = SessionIndex::build(rows());
        assert_eq!(ix.leaf_id.as_deref(), Some("d"));
        let ids: Vec<_> = ix
            .branch(None)
            .iter()
            .map(|e| e["id"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(ids, ["a", "c", "d"]);
        let r = rows();
        let refs: Vec<&Value> = r.iter().collect();
        let t = scan_tree(&refs);
        let path: Vec<_> = select_path(&t, &refs, t.leaf_id.as_deref())
            .iter()
            .map(|&p| t.nodes[p].id.clone())
            .collect();
        assert_eq!(path, ["a", "c", "d"]);
    }

    #[test]
    fn leaf_control_moves_the_leaf() {
        let mut r = rows();
        r.push(json!({"type":"leaf","id":"l1","parentId":"d","timestamp":"t","targetId":"b"}));
        let ix = SessionIndex::build(r.clone());
        assert_eq!(ix.leaf_id.as_deref(), Some("b"));
        r.push(json!({"type":"leaf","id":"l2","parentId":"l1","timestamp":"t","targetId":"zzz"}));
        let ix = SessionIndex::build(r.clone());
        assert_eq!(ix.leaf_id.as_deref(), Some("b"));
        assert!(ix.is_invalid_leaf_control("l2"));
        let tree = ix.tree();
        assert_eq!(tree.roots.len(), 1);
        assert_eq!(tree.nodes[tree.roots[0]].children.len(), 2);
    }

    #[test]
    fn a_loop_made_by_a_duplicate_id_is_shown_once_and_stops() {
        // x's last row hangs under b, and b under x: getTree returns a cyclic graph.
        let r = vec![
            json!({"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}),
            json!({"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}),
            json!({"type":"message","id":"x","parentId":"a","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[],"timestamp":2}}),
            json!({"type":"message","id":"b","parentId":"x","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"user","content":"y","timestamp":3}}),
            json!({"type":"message","id":"x","parentId":"b","timestamp":"2026-01-01T00:00:04.000Z","message":{"role":"assistant","content":[],"timestamp":4}}),
        ];
        let tree = SessionIndex::build(r).tree();
        let ids: Vec<(&str, usize)> = tree
            .nodes
            .iter()
            .map(|n| (n.id.as_str(), n.depth))
            .collect();
        assert_eq!(ids, [("a", 0), ("x", 1), ("b", 2), ("x", 3)]);
        assert!(tree.nodes[3].children.is_empty());
    }
}
