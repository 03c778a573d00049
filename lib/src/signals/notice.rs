//! One stale-state notice (signals spec §4): for a watcher, about a target that changed;
//! its exact text and its queue context key. Where notices come from and how they are
//! acknowledged is `super::notices`.

use serde_json::{json, Map, Value};

/// The queue context-key prefix of stale-state notices.
pub const CONTEXT_PREFIX: &str = "session-state:";

/// One notice for a watcher about a target.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Notice {
    /// The watcher (whose queue receives it).
    pub watcher_session_key: String,
    /// The changed session.
    pub target_session_key: String,
    /// `changesSince` in the text: the cursor's `last_seen_sequence` when it was opened.
    pub last_seen_sequence: i64,
    /// Queue-only (ambient group watch: replace semantics, no wake).
    pub queue_only: bool,
}

impl Notice {
    /// `sessionStateNoticeText`, byte for byte.
    pub fn text(&self) -> String {
        notice_text(&self.target_session_key, self.last_seen_sequence)
    }

    /// The queue context key: `session-state:` + lowercase hex of the UTF-8 target key.
    pub fn context_key(&self) -> String {
        context_key(&self.target_session_key)
    }

    /// The notice as one JSON object (camelCase).
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("watcherSessionKey".into(), json!(self.watcher_session_key));
        m.insert("targetSessionKey".into(), json!(self.target_session_key));
        m.insert("changesSince".into(), json!(self.last_seen_sequence));
        m.insert("contextKey".into(), json!(self.context_key()));
        m.insert("queueOnly".into(), json!(self.queue_only));
        m.insert("text".into(), json!(self.text()));
        Value::Object(m)
    }
}

/// The notice text for `target` with `changesSince` `n`.
pub fn notice_text(target: &str, n: i64) -> String {
    format!(
        "Session \"{target}\" changed (other actor). Reconcile before acting: session_status sessionKey \"{target}\" changesSince {n}."
    )
}

/// `session-state:<hex>` for a target key.
pub fn context_key(target: &str) -> String {
    let mut s = String::with_capacity(CONTEXT_PREFIX.len() + target.len() * 2);
    s.push_str(CONTEXT_PREFIX);
    for b in target.as_bytes() {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

/// `decodeSessionStateNoticeContextKey`: the target of a context key (non-empty, even-length
/// lowercase hex of valid UTF-8), else `None`.
pub fn decode_context_key(key: &str) -> Option<String> {
    let hex = key.strip_prefix(CONTEXT_PREFIX)?;
    if hex.is_empty()
        || hex.len() % 2 != 0
        || !hex
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    {
        return None;
    }
    let bytes: Option<Vec<u8>> = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).ok())
        .collect();
    String::from_utf8(bytes?).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_and_context_key_are_exact() {
        let n = Notice {
            watcher_session_key: "agent:main:main".into(),
            target_session_key: "agent:main:subagent:c1".into(),
            last_seen_sequence: 1,
            queue_only: false,
        };
        assert_eq!(
            n.text(),
            "Session \"agent:main:subagent:c1\" changed (other actor). Reconcile before acting: session_status sessionKey \"agent:main:subagent:c1\" changesSince 1."
        );
        assert_eq!(
            n.context_key(),
            "session-state:6167656e743a6d61696e3a7375626167656e743a6331"
        );
        assert_eq!(
            decode_context_key(&n.context_key()).as_deref(),
            Some("agent:main:subagent:c1")
        );
        assert_eq!(decode_context_key("session-state:ABCD"), None);
        assert_eq!(decode_context_key("session-state:abc"), None);
        assert_eq!(decode_context_key("session-state:ff"), None);
    }
}
