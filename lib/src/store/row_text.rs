//! A listing row written straight to JSON text, for an entry read field by field
//! ([`LeanEntry`]): the row's members come from [`write_row`] in row order, and a field
//! the row copies from the entry is copied as its text in the store.
//!
//! Building each row as a map and serialising it cost most of a long listing (every
//! copied field parsed, cloned, hashed into the map and escaped again). The store's text
//! of a canonical entry is already `JSON.stringify` of each field's value (see
//! [`super::canonical`]), so a copied field's bytes are its text re-indented to where the
//! row nests it; only computed members are written from values. The bytes are those of
//! [`super::list_row::list_row`] written by [`jsjson::write_object`] (a differential test
//! in `session_list` checks whole listings).

use crate::js::jsjson;
use crate::store::entry_view::{FieldText, LeanEntry};
use crate::store::list_row::{write_row, ListContext, RowSink, RowValue};

/// The depth a [`LeanEntry`]'s field texts are nested at (members of a store's entry).
const FIELD_DEPTH: usize = 2;

/// Appends the row of `key` → `entry` to `out` as `JSON.stringify(row, null, 2)` nested
/// at `depth` (at least 1).
pub fn write_row_text(
    out: &mut String,
    key: &str,
    entry: &LeanEntry<'_>,
    now_ms: i64,
    ctx: &ListContext,
    depth: usize,
) {
    let mut row = TextRow {
        out,
        depth,
        first: true,
    };
    write_row(&mut row, key, entry, now_ms, ctx);
    let TextRow { out, first, .. } = row;
    if first {
        out.push_str("{}");
    } else {
        newline_indent(out, depth);
        out.push('}');
    }
}

/// The row being written: members at `depth + 1`.
struct TextRow<'o> {
    out: &'o mut String,
    depth: usize,
    first: bool,
}

fn newline_indent(out: &mut String, depth: usize) {
    out.push('\n');
    for _ in 0..depth {
        out.push_str("  ");
    }
}

impl TextRow<'_> {
    /// The member's name and separator (the object opened before the first).
    fn name(&mut self, name: &str) {
        self.out.push_str(if std::mem::take(&mut self.first) {
            "{"
        } else {
            ","
        });
        newline_indent(self.out, self.depth + 1);
        jsjson::write_string(self.out, name);
        self.out.push_str(": ");
    }

    /// Canonical text nested at [`FIELD_DEPTH`], re-indented to the member's depth (a
    /// newline in canonical text is always indentation: strings hold none).
    fn reindented(&mut self, text: &str) {
        let extra = self.depth + 1 - FIELD_DEPTH;
        if extra == 0 {
            self.out.push_str(text);
            return;
        }
        let mut from = 0;
        for at in memchr::memchr_iter(b'\n', text.as_bytes()) {
            self.out.push_str(&text[from..=at]);
            for _ in 0..extra {
                self.out.push_str("  ");
            }
            from = at + 1;
        }
        self.out.push_str(&text[from..]);
    }
}

impl<'t> RowSink<LeanEntry<'t>> for TextRow<'_> {
    fn put(&mut self, name: &'static str, value: RowValue<'_>) {
        self.name(name);
        let d = self.depth + 1;
        match value {
            RowValue::Text(s) => jsjson::write_string(self.out, s),
            RowValue::Json(v) => jsjson::write_pretty_at(self.out, v, d),
            RowValue::Bool(b) => self.out.push_str(if b { "true" } else { "false" }),
            RowValue::Null => self.out.push_str("null"),
            RowValue::Runtime(id, source) => {
                self.out.push('{');
                newline_indent(self.out, d + 1);
                self.out.push_str("\"id\": ");
                jsjson::write_string(self.out, id);
                self.out.push(',');
                newline_indent(self.out, d + 1);
                self.out.push_str("\"source\": ");
                jsjson::write_string(self.out, source);
                newline_indent(self.out, d);
                self.out.push('}');
            }
        }
    }

    fn copy(&mut self, name: &'static str, entry: &LeanEntry<'t>) {
        match entry.field_text(name) {
            None => {}
            Some(FieldText::Parsed(v)) => {
                self.name(name);
                jsjson::write_pretty_at(self.out, v, self.depth + 1);
            }
            Some(FieldText::Raw(text)) => {
                self.name(name);
                self.reindented(text);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::entry_view::{Lean, LeanReader};
    use crate::store::list_row::{list_row, RowGeneration};
    use crate::store::scan::StoreScan;
    use crate::store::session_list::tests::{store_text_with, Rng};

    /// Every row written as text, at every depth, for both generations and with a config
    /// that names models, windows and runtimes, is the row built as a map and serialised.
    #[test]
    fn text_rows_equal_map_rows() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sessions.json");
        let config = crate::js::jsjson::parse_value(
            r#"{"agents": {"defaults": {"model": {"primary": "anthropic/claude-9"}, "contextTokens": 5000,
                "models": {"openai/gpt-4.1": {"agentRuntime": {"id": "pi"}}}},
              "list": [{"id": "work", "model": "google/gemini-x"}]},
              "models": {"providers": {"openai": {"baseUrl": "https://example.com/v1",
                "models": [{"id": "gpt-5", "contextWindow": 1000}]}}},
              "session": {"identityLinks": {"Bob": ["telegram:42"]}}}"#,
        )
        .unwrap();
        let contexts: Vec<ListContext> = [
            (serde_json::Value::Null, RowGeneration::Files2026_7),
            (config.clone(), RowGeneration::Files2026_7),
            (serde_json::Value::Null, RowGeneration::Db2026_9),
            (config, RowGeneration::Db2026_9),
        ]
        .into_iter()
        .map(|(config, generation)| ListContext {
            target_agent_id: "main".into(),
            config,
            generation,
        })
        .collect();
        let mut written = 0;
        for seed in 1..=4u64 {
            let mut rng = Rng(seed.wrapping_mul(0xD1B5_4A32_D192_ED03));
            std::fs::write(&path, store_text_with(&mut rng, 300, 4, true)).unwrap();
            let scan = StoreScan::open(&path).unwrap();
            let mut reader = LeanReader::default();
            for i in 0..scan.len() {
                let Lean::Kept(lean) = reader.read(scan.text(), scan.range(i)) else {
                    continue;
                };
                let full = scan.entry(i).unwrap();
                for ctx in &contexts {
                    for depth in 1..=3 {
                        let mut text = String::new();
                        write_row_text(
                            &mut text,
                            scan.key(i),
                            &lean,
                            1_780_000_000_000,
                            ctx,
                            depth,
                        );
                        let mut expected = String::new();
                        let row = list_row(scan.key(i), &full, 1_780_000_000_000, ctx);
                        jsjson::write_object(&mut expected, &row, Some(depth));
                        assert_eq!(text, expected, "seed {seed}, {}", scan.key(i));
                        written += 1;
                    }
                }
            }
        }
        assert!(written > 4 * 12 * 100, "{written}");
    }
}
