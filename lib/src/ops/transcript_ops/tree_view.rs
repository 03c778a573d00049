//! `claw-transcript tree` as data: every entry of a transcript's tree, depth-first, with
//! its parent, depth, kind, label, children and whether it is the current leaf.

use serde::Serialize;
use serde_json::Value;

use crate::transcript::tree::{SessionIndex, Tree, TreeNode};

/// One node of the tree (`--ndjson` prints one per line).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TreeNodeView<'a> {
    /// The entry's id.
    pub id: &'a str,
    /// The node it hangs under (`None` for a root).
    pub parent_id: Option<&'a str>,
    /// Depth below the root (roots are 0).
    pub depth: usize,
    /// The entry's `type`.
    #[serde(rename = "type")]
    pub kind: Option<&'a Value>,
    /// A message's role.
    pub role: Option<&'a Value>,
    /// The label attached to the entry.
    pub label: Option<&'a Value>,
    /// Whether it is the current leaf.
    pub leaf: bool,
    /// The children's ids, in order.
    pub children: Vec<&'a str>,
}

/// The whole tree (`--json`).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TreeView<'a> {
    /// The current leaf.
    pub leaf_id: Option<&'a str>,
    /// The roots' ids.
    pub roots: Vec<&'a str>,
    /// Every node, depth-first.
    pub nodes: Vec<TreeNodeView<'a>>,
}

/// The view of node `n` of `tree`, built from `ix`.
pub fn node_view<'a>(ix: &'a SessionIndex, tree: &'a Tree, n: &'a TreeNode) -> TreeNodeView<'a> {
    let e = &ix.rows[n.row];
    TreeNodeView {
        id: &n.id,
        parent_id: n.parent.map(|p| tree.nodes[p].id.as_str()),
        depth: n.depth,
        kind: e.get("type"),
        role: e.get("message").and_then(|m| m.get("role")),
        label: n.label.as_ref(),
        leaf: ix.leaf_id.as_deref() == Some(n.id.as_str()),
        children: n
            .children
            .iter()
            .map(|&c| tree.nodes[c].id.as_str())
            .collect(),
    }
}

/// The view of `tree` (`ix.tree()`).
pub fn tree_view<'a>(ix: &'a SessionIndex, tree: &'a Tree) -> TreeView<'a> {
    TreeView {
        leaf_id: ix.leaf_id.as_deref(),
        roots: tree
            .roots
            .iter()
            .map(|&r| tree.nodes[r].id.as_str())
            .collect(),
        nodes: tree.nodes.iter().map(|n| node_view(ix, tree, n)).collect(),
    }
}
