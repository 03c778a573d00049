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

/// Reads every `session_nodes` row into a store text.
pub fn read(db: &AgentDb) -> Result<DbStoreText, AgentDbError> {
    let mut st = db
        .conn
        .prepare("SELECT session_key, entry_json FROM session_nodes ORDER BY session_key")
        .map_err(|e| db.err(e))?;
    let mut rows = st.query([]).map_err(|e| db.err(e))?;
    let mut text = String::with_capacity(4096);
    let mut warnings = Vec::new();
    text.push('{');
    let mut first = true;
    while let Some(r) = rows.next().map_err(|e| db.err(e))? {
        let key: String = r.get(0).map_err(|e| db.err(e))?;
        let entry: String = r.get(1).map_err(|e| db.err(e))?;
        if is_internal_effects_key(&key) {
            continue;
        }
        let ok = entry.trim_start().starts_with('{')
            && serde_json::from_str::<serde::de::IgnoredAny>(&entry).is_ok();
        if !ok {
            warnings.push(format!(
                "{}: session_nodes {key:?}: entry_json is not a JSON object; skipped",
                db.path.display()
            ));
            continue;
        }
        if !first {
            text.push(',');
        }
        first = false;
        text.push('\n');
        crate::js::jsjson::write_string(&mut text, &key);
        text.push(':');
        text.push_str(&entry);
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
            INSERT INTO session_nodes VALUES ('c','s4','[1]',1,1);"#).unwrap();
        drop(c);
        let db = AgentDb::open(&p).unwrap();
        let t = read(&db).unwrap();
        let v: serde_json::Value = serde_json::from_str(&t.text).unwrap();
        let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["a\"q", "b"]);
        assert_eq!(t.warnings.len(), 1);
    }
}
