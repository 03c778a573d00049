//! Transcript rows and their kinds (`transcript.md` §1.3–§1.6): the header, the nine
//! canonical entry types, `leaf` control rows and opaque rows, with the field readers every
//! other module shares.

use serde_json::{Map, Value};

/// The canonical entry types, the only ones that take part in the tree.
pub const CANONICAL_TYPES: [&str; 9] = [
    "message",
    "thinking_level_change",
    "model_change",
    "compaction",
    "branch_summary",
    "custom",
    "custom_message",
    "label",
    "session_info",
];

/// The current transcript schema version.
pub const CURRENT_VERSION: i64 = 3;

/// Whether `t` is one of the nine canonical entry types.
pub fn is_canonical_type(t: &str) -> bool {
    CANONICAL_TYPES.contains(&t)
}

/// One parsed line of a transcript, with where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// 1-based physical line number in the file.
    pub line: usize,
    /// Byte offset of the line's first byte.
    pub offset: u64,
    /// Byte length of the line (without its `\n`).
    pub len: usize,
    /// The parsed JSON value (any JSON value; rows that are not objects are opaque).
    pub value: Value,
}

/// How a row takes part in the transcript.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowKind {
    /// `type: "session"` with a string `id`.
    Header,
    /// A canonical type (with or without an id).
    Canonical,
    /// A `type: "leaf"` navigation control.
    Leaf,
    /// Anything else: unknown types, non-objects, rows without `type`.
    Opaque,
}

/// The object of a row, if it is one.
pub fn obj(v: &Value) -> Option<&Map<String, Value>> {
    v.as_object()
}

/// `record.type` when it is a string.
pub fn type_of(v: &Value) -> Option<&str> {
    v.get("type").and_then(Value::as_str)
}

/// `record.id` when it is a non-empty string (`normalizeEntryId` keeps untrimmed ids).
pub fn id_of(v: &Value) -> Option<&str> {
    v.get("id")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}

/// What a row says about its parent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParentRef<'a> {
    /// No `parentId` key at all.
    Absent,
    /// `parentId: null`.
    Null,
    /// `parentId: "<id>"`.
    Id(&'a str),
    /// Any other value (number, object, …).
    Invalid,
}

/// The row's `parentId`.
pub fn parent_of(v: &Value) -> ParentRef<'_> {
    match v.get("parentId") {
        None => ParentRef::Absent,
        Some(Value::Null) => ParentRef::Null,
        Some(Value::String(s)) => ParentRef::Id(s),
        Some(_) => ParentRef::Invalid,
    }
}

/// Whether the row is a header: `type: "session"` and a string `id`.
pub fn is_header(v: &Value) -> bool {
    type_of(v) == Some("session") && v.get("id").is_some_and(Value::is_string)
}

/// Whether the row is an object with a canonical `type`.
pub fn is_canonical(v: &Value) -> bool {
    v.is_object() && type_of(v).is_some_and(is_canonical_type)
}

/// SessionManager's indexed entry: canonical type and a non-empty string id.
pub fn is_indexed(v: &Value) -> bool {
    is_canonical(v) && id_of(v).is_some()
}

/// A canonical row appended in "side" mode (does not move the visible leaf).
pub fn is_side_append(v: &Value) -> bool {
    is_canonical(v) && v.get("appendMode").and_then(Value::as_str) == Some("side")
}

/// The kind of a row.
pub fn kind_of(v: &Value) -> RowKind {
    if !v.is_object() {
        return RowKind::Opaque;
    }
    match type_of(v) {
        Some("session") if v.get("id").is_some_and(Value::is_string) => RowKind::Header,
        Some("leaf") => RowKind::Leaf,
        Some(t) if is_canonical_type(t) => RowKind::Canonical,
        _ => RowKind::Opaque,
    }
}

/// The header's `version` (missing or non-numeric ⇒ 1, as `?? 1` would treat a missing one).
pub fn header_version(v: &Value) -> f64 {
    match v.get("version") {
        None | Some(Value::Null) => 1.0,
        Some(Value::Number(n)) => n.as_f64().unwrap_or(1.0),
        // A non-number version compares as NaN in `version < 2`: no migration.
        Some(_) => f64::NAN,
    }
}

/// `message.role` of a `message`-carrying row, when it is a string.
pub fn role_of(v: &Value) -> Option<&str> {
    v.get("message")
        .and_then(|m| m.get("role"))
        .and_then(Value::as_str)
}

/// `String.prototype.slice(0, n)` on UTF-16 units; a pair cut in half keeps a replacement
/// character, which JSON then escapes. Used where the peer does a raw `slice`.
pub fn js_slice_prefix(s: &str, n: usize) -> String {
    if s.is_ascii() {
        return s[..n.min(s.len())].to_string();
    }
    let mut out = String::new();
    let mut units = 0;
    for c in s.chars() {
        let w = c.len_utf16();
        if units + w > n {
            if units < n {
                // Half a surrogate pair: JavaScript keeps the lone high surrogate.
                out.push('\u{FFFD}');
            }
            break;
        }
        out.push(c);
        units += w;
    }
    out
}

/// A JSON number for an integer millisecond value.
pub fn ms_value(ms: i64) -> Value {
    Value::from(ms)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn kinds() {
        assert_eq!(
            kind_of(&json!({"type":"session","id":"x"})),
            RowKind::Header
        );
        assert_eq!(kind_of(&json!({"type":"session"})), RowKind::Opaque);
        assert_eq!(
            kind_of(&json!({"type":"message","id":"a"})),
            RowKind::Canonical
        );
        assert_eq!(kind_of(&json!({"type":"leaf"})), RowKind::Leaf);
        assert_eq!(kind_of(&json!({"type":"weird"})), RowKind::Opaque);
        assert_eq!(kind_of(&json!(5)), RowKind::Opaque);
    }
}
