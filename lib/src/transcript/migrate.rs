//! Schema migrations v1 → v2 → v3 (`transcript.md` §1.9) and SessionManager's whole-file
//! serialiser, applied only by an explicit command.

use serde_json::{json, Value};

use super::entry::{self, is_header, type_of, CURRENT_VERSION};
use super::tree::{partition, SessionIndex, Slot};

use crate::js;

/// What a migration changed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MigrationReport {
    /// The version found (missing = 1).
    pub from_version: f64,
    /// Whether anything was migrated.
    pub migrated: bool,
    /// Ids added by v1 → v2.
    pub ids_added: usize,
    /// `firstKeptEntryIndex` fields turned into ids.
    pub compactions_relinked: usize,
    /// `hookMessage` roles renamed to `custom`.
    pub hook_messages_renamed: usize,
}

/// `generateId`: the first 8 hex of a random UUID, re-drawn until unused.
pub fn generate_short_id(taken: &dyn Fn(&str) -> bool) -> String {
    for _ in 0..100 {
        let id = uuid::Uuid::new_v4().to_string()[..8].to_string();
        if !taken(&id) {
            return id;
        }
    }
    uuid::Uuid::new_v4().to_string()
}

fn set(v: &mut Value, k: &str, x: Value) {
    if let Some(o) = v.as_object_mut() {
        o.insert(k.into(), x);
    }
}

/// `migrateToCurrentVersion` on parsed rows in file order (opaque rows untouched).
/// `new_id` draws ids for v1 rows (given the ids already drawn).
pub fn migrate_rows(
    rows: &mut [Value],
    new_id: &mut dyn FnMut(&dyn Fn(&str) -> bool) -> String,
) -> MigrationReport {
    // `fileEntries.find((e) => e.type === "session")`: among the rows SessionManager keeps
    // as file entries, so a `session` row that is not a header (opaque) never decides.
    let slots = partition(rows);
    let version = rows
        .iter()
        .zip(&slots)
        .find(|(v, s)| **s != Slot::Opaque && type_of(v) == Some("session"))
        .map(|(v, _)| entry::header_version(v))
        .unwrap_or(1.0);
    let mut report = MigrationReport {
        from_version: version,
        ..Default::default()
    };
    if version.is_nan() || version >= CURRENT_VERSION as f64 {
        return report;
    }
    report.migrated = true;
    let file_rows: Vec<usize> = (0..rows.len())
        .filter(|&i| slots[i] != Slot::Opaque)
        .collect();
    if version < 2.0 {
        let mut ids: Vec<String> = Vec::new();
        let mut prev: Option<String> = None;
        for &i in &file_rows {
            if type_of(&rows[i]) == Some("session") {
                set(&mut rows[i], "version", json!(2));
                continue;
            }
            let id = new_id(&|c: &str| ids.iter().any(|x| x == c));
            ids.push(id.clone());
            set(&mut rows[i], "id", json!(id.clone()));
            set(
                &mut rows[i],
                "parentId",
                prev.clone().map_or(Value::Null, Value::String),
            );
            prev = Some(id);
            report.ids_added += 1;
            if type_of(&rows[i]) == Some("compaction") {
                if let Some(idx) = rows[i].get("firstKeptEntryIndex").and_then(Value::as_f64) {
                    // entriesByOriginalIndex[idx] ?? entries[idx]: the row at that position
                    // among parsed rows when it is a file entry, else the idx-th file entry.
                    let target = if idx >= 0.0 && idx.fract() == 0.0 {
                        let k = idx as usize;
                        if k < rows.len() && slots[k] != Slot::Opaque {
                            Some(k)
                        } else {
                            file_rows.get(k).copied()
                        }
                    } else {
                        None
                    };
                    if let Some(t) = target {
                        if type_of(&rows[t]) != Some("session") {
                            let tid = rows[t].get("id").cloned();
                            match tid {
                                Some(x) => set(&mut rows[i], "firstKeptEntryId", x),
                                None => set(&mut rows[i], "firstKeptEntryId", Value::Null),
                            }
                            if rows[i].get("firstKeptEntryId") == Some(&Value::Null)
                                && rows[t].get("id").is_none()
                            {
                                if let Some(o) = rows[i].as_object_mut() {
                                    o.shift_remove("firstKeptEntryId");
                                }
                            }
                            report.compactions_relinked += 1;
                        }
                    }
                    if let Some(o) = rows[i].as_object_mut() {
                        o.shift_remove("firstKeptEntryIndex");
                    }
                }
            }
        }
    }
    for &i in &file_rows {
        if type_of(&rows[i]) == Some("session") {
            set(&mut rows[i], "version", json!(3));
            continue;
        }
        if type_of(&rows[i]) == Some("message")
            && rows[i]
                .get("message")
                .and_then(|m| m.get("role"))
                .and_then(Value::as_str)
                == Some("hookMessage")
        {
            if let Some(m) = rows[i].get_mut("message") {
                set(m, "role", json!("custom"));
            }
            report.hook_messages_renamed += 1;
        }
    }
    report
}

/// SessionManager's whole-file rewrite (`getPersistedFileEntries` + `writeJsonlEntriesSync`):
/// every row in order, plus a trailing `leaf` control when the rows alone would not
/// reproduce the index's leaf and append parent. Returns the bytes.
pub fn serialize_like_session_manager(index: &SessionIndex, now_ms: i64) -> Vec<u8> {
    let rows = &index.rows;
    let mut persisted_leaf: Option<String> = None;
    let mut persisted_append: Option<String> = None;
    let mut raw_tail: Option<String> = None;
    for (i, v) in rows.iter().enumerate() {
        if index.slots[i] == Slot::Opaque && type_of(v) == Some("leaf") {
            if let Some(id) = entry::id_of(v) {
                let shape_ok = matches!(
                    v.get("parentId"),
                    Some(Value::Null) | Some(Value::String(_))
                ) && matches!(
                    v.get("targetId"),
                    Some(Value::Null) | Some(Value::String(_))
                );
                if shape_ok {
                    raw_tail = Some(id.to_string());
                    if index.is_invalid_leaf_control(id) {
                        continue;
                    }
                    let target = v.get("targetId").and_then(Value::as_str);
                    let t = target.and_then(|t| {
                        if index.row_of(t).is_some() {
                            Some(t.to_string())
                        } else {
                            index.resolve_canonical_parent(Some(t))
                        }
                    });
                    persisted_leaf = t.clone();
                    persisted_append = match v.get("appendParentId") {
                        None => t,
                        Some(Value::Null) => None,
                        Some(Value::String(a)) => Some(a.clone()),
                        Some(_) => t,
                    };
                    continue;
                }
            }
        }
        if entry::is_indexed(v) && index.slots[i] == Slot::File {
            let id = entry::id_of(v).unwrap_or_default().to_string();
            persisted_leaf = Some(id.clone());
            persisted_append = Some(id.clone());
            raw_tail = Some(id);
            continue;
        }
        if index.slots[i] == Slot::Opaque && !is_header(v) && type_of(v) != Some("leaf") {
            if let (Some(id), Some(Value::Null) | Some(Value::String(_))) =
                (entry::id_of(v), v.get("parentId"))
            {
                persisted_append = Some(id.to_string());
                raw_tail = Some(id.to_string());
            }
        }
    }
    let mut out = Vec::new();
    for v in rows {
        out.extend_from_slice(crate::js::jsjson::to_string_compact(v).as_bytes());
        out.push(b'\n');
    }
    if persisted_leaf != index.leaf_id || persisted_append != index.append_parent_id {
        let taken = |c: &str| index.row_of(c).is_some();
        let id = generate_short_id(&taken);
        let mut leaf = serde_json::Map::new();
        leaf.insert("type".into(), json!("leaf"));
        leaf.insert("id".into(), json!(id));
        leaf.insert(
            "parentId".into(),
            raw_tail.map_or(Value::Null, Value::String),
        );
        leaf.insert("timestamp".into(), json!(js::to_iso_string(now_ms)));
        leaf.insert(
            "targetId".into(),
            index.leaf_id.clone().map_or(Value::Null, Value::String),
        );
        if index.append_parent_id != index.leaf_id {
            leaf.insert(
                "appendParentId".into(),
                index
                    .append_parent_id
                    .clone()
                    .map_or(Value::Null, Value::String),
            );
        }
        out.extend_from_slice(
            crate::js::jsjson::to_string_compact(&Value::Object(leaf)).as_bytes(),
        );
        out.push(b'\n');
    }
    out
}

/// SessionManager's in-memory load normalisation: assistant/toolResult string content
/// becomes one text block; a toolResult object content becomes a one-element array.
pub fn normalize_loaded(v: &mut Value) {
    if type_of(v) != Some("message") {
        return;
    }
    let Some(m) = v.get_mut("message").and_then(Value::as_object_mut) else {
        return;
    };
    let role = m.get("role").and_then(Value::as_str).map(String::from);
    match (role.as_deref(), m.get("content")) {
        (Some("assistant") | Some("toolResult"), Some(Value::String(s))) => {
            let s = s.clone();
            m.insert("content".into(), json!([{"type": "text", "text": s}]));
        }
        (Some("toolResult"), Some(Value::Object(o))) => {
            let o = Value::Object(o.clone());
            m.insert("content".into(), json!([o]));
        }
        _ => {}
    }
}

/// The index SessionManager would hold for parsed rows: load normalisation, in-memory
/// migration (ids drawn at random for v1 rows), then `buildIndex`.
pub fn open_index(rows: Vec<Value>) -> (SessionIndex, MigrationReport) {
    let mut rows = rows;
    for r in rows.iter_mut() {
        normalize_loaded(r);
    }
    let report = migrate_rows(&mut rows, &mut |taken| generate_short_id(taken));
    (SessionIndex::build(rows), report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v1_gets_ids_and_relinked_compaction() {
        let mut rows = vec![
            json!({"type":"session","id":"s","timestamp":"t","cwd":"/"}),
            json!({"type":"message","timestamp":"t","message":{"role":"user","content":"a"}}),
            json!({"type":"message","timestamp":"t","message":{"role":"hookMessage","content":"b"}}),
            json!({"type":"compaction","timestamp":"t","summary":"s","firstKeptEntryIndex":2,"tokensBefore":1}),
        ];
        let mut n = 0;
        let r = migrate_rows(&mut rows, &mut |_| {
            n += 1;
            format!("id{n}")
        });
        assert!(r.migrated);
        assert_eq!(
            crate::js::jsjson::to_string_compact(&rows[0]),
            r#"{"type":"session","id":"s","timestamp":"t","cwd":"/","version":3}"#
        );
        assert_eq!(rows[2]["message"]["role"], "custom");
        assert_eq!(rows[3]["firstKeptEntryId"], "id2");
        assert_eq!(rows[3]["parentId"], "id2");
        assert!(rows[3].get("firstKeptEntryIndex").is_none());
    }

    #[test]
    fn the_version_comes_from_the_header_not_an_opaque_session_row() {
        // `migrateToCurrentVersion(fileEntries)`: a `session` row without a string id is
        // opaque, so the v3 header after it decides and the v3 rows keep their ids.
        let mut rows = vec![
            json!({"type":"session","id":5}),
            json!({"type":"session","version":3,"id":"s","timestamp":"t","cwd":"/"}),
            json!({"type":"message","id":"a1","parentId":null,"timestamp":"t","message":{"role":"user","content":"a"}}),
        ];
        let before = rows.clone();
        let r = migrate_rows(&mut rows, &mut |_| unreachable!("no ids are drawn"));
        assert_eq!((r.from_version, r.migrated), (3.0, false));
        assert_eq!(rows, before);
    }
}
