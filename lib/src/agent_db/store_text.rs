//! `session_nodes` as the text of a `sessions.json` object, so that every store reader
//! (listing, show, resolve, policy, transcript resolution) reads the database unchanged.
//!
//! Rows come in `session_key` order, as the gateway's `listSessionEntriesReadOnly` reads
//! them; `entry_json` is the whole SessionEntry, copied verbatim. Keys of the gateway's
//! internal effects sessions (`agent:<id>:internal-session-effects:…`) are skipped as the
//! gateway's listing skips them; a row whose `entry_json` is not a JSON object is skipped
//! with a warning.

use super::{AgentDb, AgentDbError};

/// The store object and the warnings of rows left out.
pub struct DbStoreText {
    /// `{"<key>": <entry_json>, …}`.
    pub text: String,
    /// One line per row left out.
    pub warnings: Vec<String>,
}

/// Whether `key` is an internal effects session the gateway's listing hides.
pub fn is_internal_effects_key(key: &str) -> bool {
    let Some(rest) = key.strip_prefix("agent:") else {
        return false;
    };
    match rest.find(':') {
        Some(i) => rest[i + 1..].starts_with("internal-session-effects:"),
        None => false,
    }
}

/// The store text of the one row keyed `key` (`{}` when there is none, or when the row
/// is one the full text leaves out): what a lookup of an exact key needs, without
/// reading the other rows.
pub fn read_key(db: &AgentDb, key: &str) -> Result<DbStoreText, AgentDbError> {
    let entry: Option<String> = db
        .conn
        .query_row(
            "SELECT entry_json FROM session_nodes WHERE session_key = ?1",
            [key],
            |r| r.get(0),
        )
        .map(Some)
        .or_else(|e| match e {
            rusqlite::Error::QueryReturnedNoRows => Ok(None),
            e => Err(db.err(e)),
        })?;
    let mut text = String::from("{");
    let mut warnings = Vec::new();
    if let Some(entry) = entry.filter(|_| !is_internal_effects_key(key)) {
        if is_object_text(&entry) {
            text.push('\n');
            crate::js::jsjson::write_string(&mut text, key);
            text.push(':');
            text.push_str(&entry);
        } else {
            warnings.push(not_an_object(db, key));
        }
    }
    text.push_str("\n}");
    Ok(DbStoreText { text, warnings })
}

/// Column `i` of row `r` as text, borrowed from SQLite.
fn text_at<'r>(db: &AgentDb, r: &'r rusqlite::Row<'_>, i: usize) -> Result<&'r str, AgentDbError> {
    let v = r.get_ref(i).map_err(|e| db.err(e))?;
    v.as_str().map_err(|e| {
        db.err(rusqlite::Error::FromSqlConversionFailure(
            i,
            v.data_type(),
            Box::new(e),
        ))
    })
}

fn is_object_text(entry: &str) -> bool {
    entry.trim_start().starts_with('{')
        && serde_json::from_str::<serde::de::IgnoredAny>(entry).is_ok()
}

fn not_an_object(db: &AgentDb, key: &str) -> String {
    format!(
        "{}: session_nodes {key:?}: entry_json is not a JSON object; skipped",
        db.path.display()
    )
}

/// Reads every `session_nodes` row into a store text.
///
/// A row the gateway has validated (`entry_valid = 1`) is taken as the JSON object it
/// checked, without parsing it again: the schema's triggers reset `entry_valid` to 0 on
/// every write of `entry_json`, so a row changed since is parsed as any other. Rows are
/// borrowed from SQLite, not copied twice.
pub fn read(db: &AgentDb) -> Result<DbStoreText, AgentDbError> {
    let mut st = db
        .conn
        .prepare(
            "SELECT session_key, entry_json, entry_valid FROM session_nodes ORDER BY session_key",
        )
        .map_err(|e| db.err(e))?;
    let mut rows = st.query([]).map_err(|e| db.err(e))?;
    let mut text = String::with_capacity(1 << 20);
    let mut warnings = Vec::new();
    text.push('{');
    let mut first = true;
    while let Some(r) = rows.next().map_err(|e| db.err(e))? {
        let key = text_at(db, r, 0)?;
        if is_internal_effects_key(key) {
            continue;
        }
        let entry = text_at(db, r, 1)?;
        let validated = r.get_ref(2).ok().and_then(|v| v.as_i64().ok()) == Some(1);
        let ok = if validated {
            entry.trim_start().starts_with('{') && entry.trim_end().ends_with('}')
        } else {
            is_object_text(entry)
        };
        if !ok {
            warnings.push(not_an_object(db, key));
            continue;
        }
        if !first {
            text.push(',');
        }
        first = false;
        text.push('\n');
        crate::js::jsjson::write_string(&mut text, key);
        text.push(':');
        text.push_str(entry);
    }
    text.push_str("\n}");
    Ok(DbStoreText { text, warnings })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_in_key_order_internal_and_bad_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.sqlite");
        let c = super::super::testdb::create(&p, 23);
        c.execute_batch(r#"INSERT INTO session_nodes VALUES ('b','s2','{"sessionId":"s2","updatedAt":2}',1,2);
            INSERT INTO session_nodes VALUES ('a"q','s1','{"sessionId":"s1","updatedAt":1}',1,1);
            INSERT INTO session_nodes VALUES ('agent:main:internal-session-effects:x','s3','{}',1,1);
            INSERT INTO session_nodes VALUES ('c','s4','[1]',1,1);
            INSERT INTO session_nodes VALUES ('d','s5','{"sessionId":',0,1);"#).unwrap();
        drop(c);
        let db = AgentDb::open(&p).unwrap();
        let t = read(&db).unwrap();
        let v: serde_json::Value = serde_json::from_str(&t.text).unwrap();
        let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["a\"q", "b"]);
        // `[1]` (validated, not an object) and the unvalidated torn row.
        assert_eq!(t.warnings.len(), 2, "{:?}", t.warnings);
    }
}
