//! What a store save would change, entry by entry: the store as the file holds it
//! against the store the save would write.
//!
//! A save re-normalises every entry (`store.md` §2.3–2.4), so a write meant for one entry
//! (a `patch`) can rewrite others the gateway's load normalised: a legacy field moved, an
//! invalid entry dropped, a prompt moved to its blob. A dry run shows all of them, each
//! as a diff of its fields ([`EntryDiff`]), so the preview is the write.

use serde_json::{Map, Value};

/// How one entry changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryChangeKind {
    /// Not in the file; the save adds it.
    Added,
    /// In the file; the save drops it.
    Removed,
    /// In both, with different fields.
    Changed,
}

impl EntryChangeKind {
    /// The word of the JSON form (`added`, `removed`, `changed`).
    pub fn as_str(self) -> &'static str {
        match self {
            EntryChangeKind::Added => "added",
            EntryChangeKind::Removed => "removed",
            EntryChangeKind::Changed => "changed",
        }
    }
}

/// One field that differs, by its dotted path inside the entry (objects are descended
/// into; arrays and scalars compare whole).
#[derive(Debug, Clone, PartialEq)]
pub struct FieldChange {
    /// The dotted path (`label`, `origin.provider`).
    pub path: String,
    /// The value in the file (`None`: absent).
    pub before: Option<Value>,
    /// The value the save writes (`None`: absent).
    pub after: Option<Value>,
}

/// How one entry differs between the file and the save.
#[derive(Debug, Clone, PartialEq)]
pub struct EntryDiff {
    /// The store key.
    pub key: String,
    /// Added, removed or changed.
    pub kind: EntryChangeKind,
    /// The fields that differ (for an added or removed entry: all of its fields).
    pub fields: Vec<FieldChange>,
}

impl EntryDiff {
    /// The JSON form: `{key, change, fields: [{path, before, after}]}` (an absent side
    /// is left out of its field).
    pub fn to_json(&self) -> Value {
        let fields = self
            .fields
            .iter()
            .map(|f| {
                let mut m = Map::new();
                m.insert("path".into(), Value::from(f.path.clone()));
                if let Some(b) = &f.before {
                    m.insert("before".into(), b.clone());
                }
                if let Some(a) = &f.after {
                    m.insert("after".into(), a.clone());
                }
                Value::Object(m)
            })
            .collect();
        let mut m = Map::new();
        m.insert("key".into(), Value::from(self.key.clone()));
        m.insert("change".into(), Value::from(self.kind.as_str()));
        m.insert("fields".into(), Value::Array(fields));
        Value::Object(m)
    }
}

/// The text form: one block per entry (`~` changed, `+` added, `-` removed; the entry
/// `patched` is named so, the others are the save's normalisation), one `-`/`+` line
/// per field side; data escaped for the terminal.
pub fn render_text(diffs: &[EntryDiff], patched: &str) -> String {
    render_text_for(diffs, &|k| k == patched)
}

/// [`render_text`] for a patch of several entries: `patched` says which keys the patch
/// changed (the others the save's normalisation).
pub fn render_text_for(diffs: &[EntryDiff], patched: &dyn Fn(&str) -> bool) -> String {
    use crate::report::terminal_text::escape_line;
    let mut s = String::new();
    if diffs.is_empty() {
        s.push_str("The save would change no entry.\n");
        return s;
    }
    s.push_str(&format!(
        "The save would change {} entr{}:\n",
        diffs.len(),
        if diffs.len() == 1 { "y" } else { "ies" }
    ));
    for d in diffs {
        let mark = match d.kind {
            EntryChangeKind::Added => '+',
            EntryChangeKind::Removed => '-',
            EntryChangeKind::Changed => '~',
        };
        let why = if patched(&d.key) {
            "the patch"
        } else {
            "normalised by the save"
        };
        s.push_str(&format!("{mark} {} ({why})\n", escape_line(&d.key)));
        for f in &d.fields {
            let path = escape_line(&f.path);
            for (sign, v) in [('-', &f.before), ('+', &f.after)] {
                if let Some(v) = v {
                    let v = crate::js::jsjson::to_string_compact(v);
                    s.push_str(&format!("    {sign} {path}: {}\n", escape_line(&v)));
                }
            }
        }
    }
    s
}

fn field_changes(prefix: &str, before: &Value, after: &Value, out: &mut Vec<FieldChange>) {
    let path = |k: &str| {
        if prefix.is_empty() {
            k.to_string()
        } else {
            format!("{prefix}.{k}")
        }
    };
    match (before, after) {
        (Value::Object(b), Value::Object(a)) => {
            for (k, bv) in b {
                match a.get(k) {
                    Some(av) => field_changes(&path(k), bv, av, out),
                    None => out.push(FieldChange {
                        path: path(k),
                        before: Some(bv.clone()),
                        after: None,
                    }),
                }
            }
            for (k, av) in a {
                if !b.contains_key(k) {
                    out.push(FieldChange {
                        path: path(k),
                        before: None,
                        after: Some(av.clone()),
                    });
                }
            }
        }
        (b, a) if b == a => {}
        (b, a) => out.push(FieldChange {
            path: prefix.to_string(),
            before: Some(b.clone()),
            after: Some(a.clone()),
        }),
    }
}

/// The entries that differ between `before` (the file's top-level object) and `after`
/// (the saved one): in `after`'s order, then those only `before` holds. Key order alone
/// is not a change.
pub fn diff_stores(before: &Map<String, Value>, after: &Map<String, Value>) -> Vec<EntryDiff> {
    let mut out = Vec::new();
    let whole = |v: &Value, before: bool| -> Vec<FieldChange> {
        let empty = Value::Object(Map::new());
        let mut f = Vec::new();
        if before {
            field_changes("", v, &empty, &mut f);
        } else {
            field_changes("", &empty, v, &mut f);
        }
        f
    };
    for (key, av) in after {
        match before.get(key) {
            None => out.push(EntryDiff {
                key: key.clone(),
                kind: EntryChangeKind::Added,
                fields: whole(av, false),
            }),
            Some(bv) => {
                let mut fields = Vec::new();
                field_changes("", bv, av, &mut fields);
                if !fields.is_empty() {
                    out.push(EntryDiff {
                        key: key.clone(),
                        kind: EntryChangeKind::Changed,
                        fields,
                    });
                }
            }
        }
    }
    for (key, bv) in before {
        if !after.contains_key(key) {
            out.push(EntryDiff {
                key: key.clone(),
                kind: EntryChangeKind::Removed,
                fields: whole(bv, true),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn map(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn only_entries_that_differ_are_listed_with_their_dotted_fields() {
        let before = map(json!({
            "a": {"x": 1, "o": {"p": 1, "q": 2}},
            "same": {"y": [1, 2]},
            "gone": {"z": 1},
        }));
        let after = map(json!({
            "same": {"y": [1, 2]},
            "a": {"o": {"q": 3, "p": 1}, "x": 1, "n": true},
            "new": {"w": 2},
        }));
        let d = diff_stores(&before, &after);
        let keys: Vec<(&str, &str)> = d
            .iter()
            .map(|e| (e.key.as_str(), e.kind.as_str()))
            .collect();
        assert_eq!(
            keys,
            [("a", "changed"), ("new", "added"), ("gone", "removed")]
        );
        assert_eq!(
            d[0].fields,
            [
                FieldChange {
                    path: "o.q".into(),
                    before: Some(json!(2)),
                    after: Some(json!(3))
                },
                FieldChange {
                    path: "n".into(),
                    before: None,
                    after: Some(json!(true))
                },
            ]
        );
        assert_eq!(
            d[2].to_json(),
            json!({"key": "gone", "change": "removed", "fields": [{"path": "z", "before": 1}]})
        );
    }
}
