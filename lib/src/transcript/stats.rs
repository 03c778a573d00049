//! Figures about one transcript (`claw-transcript stats`): rows by type and role, bytes,
//! estimated and recorded tokens, branches and labels.

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use super::entry::{role_of, type_of};
use super::reader::Transcript;
use super::tree::SessionIndex;

/// Computes the stats document (camelCase JSON) of a transcript read with the tolerant
/// reader and its SessionManager index.
pub fn stats(t: &Transcript, index: &SessionIndex) -> Value {
    let mut by_type: BTreeMap<String, u64> = BTreeMap::new();
    let mut by_role: BTreeMap<String, u64> = BTreeMap::new();
    let mut estimated: u64 = 0;
    for r in &t.rows {
        let ty = match type_of(&r.value) {
            Some(t) => t.to_string(),
            None => "(none)".to_string(),
        };
        *by_type.entry(ty).or_default() += 1;
        if let Some(role) = role_of(&r.value) {
            *by_role.entry(role.to_string()).or_default() += 1;
            estimated += super::tokens::estimate_tokens(&r.value["message"]);
        }
    }
    let tree = index.tree();
    let (mut leaves, mut forks, mut depth) = (0u64, 0u64, 0usize);
    for n in &tree.nodes {
        if n.children.is_empty() {
            leaves += 1;
        }
        if n.children.len() > 1 {
            forks += 1;
        }
        depth = depth.max(n.depth + 1);
    }
    let branch = index.branch(None);
    let context = super::context::build_context(&branch)
        .map(|c| super::tokens::estimate_context_tokens(&c.messages).tokens)
        .ok();
    let usage = super::tokens::aggregate_usage(t.rows.iter().map(|r| &r.value));
    let header = t
        .rows
        .first()
        .map(|r| &r.value)
        .filter(|v| super::entry::is_header(v));
    let mut out = Map::new();
    out.insert("bytes".into(), json!(t.bytes));
    out.insert("lines".into(), json!(t.total_lines));
    out.insert("rows".into(), json!(t.rows.len()));
    out.insert("skippedLines".into(), json!(t.skipped.len()));
    out.insert("tornTail".into(), json!(t.has_torn_tail()));
    out.insert(
        "sessionId".into(),
        header
            .and_then(|h| h.get("id"))
            .cloned()
            .unwrap_or(Value::Null),
    );
    out.insert(
        "version".into(),
        header
            .and_then(|h| h.get("version"))
            .cloned()
            .unwrap_or(Value::Null),
    );
    out.insert("byType".into(), json!(by_type));
    out.insert("byRole".into(), json!(by_role));
    out.insert("leafId".into(), json!(index.leaf_id));
    out.insert("activeBranchEntries".into(), json!(branch.len()));
    out.insert("roots".into(), json!(tree.roots.len()));
    out.insert("branchLeaves".into(), json!(leaves));
    out.insert("branchPoints".into(), json!(forks));
    out.insert("maxDepth".into(), json!(depth));
    out.insert("estimatedTokens".into(), json!(estimated));
    out.insert("contextTokens".into(), json!(context));
    out.insert(
        "recordedUsage".into(),
        usage.map_or(Value::Null, Value::Object),
    );
    Value::Object(out)
}
