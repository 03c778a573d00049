//! `--fix-missing` (`store.md` §4.5): entries whose transcript is missing or holds no
//! message are removed; an entry whose `sessionFile` is a stale generated name while
//! `<sessionId>.jsonl` has messages gets its `sessionFile` repaired.

use std::path::Path;

use serde_json::Value;

use super::paths::{generated_session_id, js_basename, SessionPaths};
use super::rules::WorkingSet;
use crate::js;
use crate::session::session_key::parse_agent_session_key;

/// Transcripts larger than this always count as having messages.
pub const EMPTY_TRANSCRIPT_MAX_BYTES: u64 = 4096;

fn is_message_role(v: Option<&Value>) -> bool {
    matches!(
        v.and_then(Value::as_str),
        Some("user" | "assistant" | "tool" | "toolResult" | "system")
    )
}

/// `isTranscriptMessageRecord`: `type: "message"`, or no `type` and a message role on
/// the record or on its `message` object.
pub fn is_message_record(v: &Value) -> bool {
    let (Value::Object(_) | Value::Array(_)) = v else {
        return false;
    };
    let Some(o) = v.as_object() else { return false };
    match o.get("type") {
        Some(Value::String(t)) if t == "message" => true,
        Some(_) => false,
        None => {
            let msg = o.get("message");
            (msg.is_some_and(Value::is_object) && is_message_role(msg.and_then(|m| m.get("role"))))
                || is_message_role(o.get("role"))
        }
    }
}

/// `transcriptHasNoMessageRecords`: a regular file (links followed) of at most 4096 bytes
/// whose non-blank lines all parse as JSON and none is a message. Unreadable → false.
pub fn has_no_message_records(path: &Path) -> bool {
    let Ok(meta) = std::fs::metadata(path) else {
        return false;
    };
    if !meta.is_file() || meta.len() > EMPTY_TRANSCRIPT_MAX_BYTES {
        return false;
    }
    // Opened as the store is (links followed, as the gateway does here), but never a FIFO
    // or a device put there since the `stat`: only a regular file is read, and at most
    // what a message-free transcript can hold.
    let Ok(raw) = crate::fs::data_file::open_named(path)
        .and_then(|f| f.read_limited(EMPTY_TRANSCRIPT_MAX_BYTES, "an empty transcript"))
    else {
        return false;
    };
    let text = String::from_utf8_lossy(&raw);
    for line in text.split('\n') {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if js::trim(line).is_empty() {
            continue;
        }
        match crate::js::jsjson::parse_value(line) {
            Ok(v) if !is_message_record(&v) => {}
            _ => return false,
        }
    }
    true
}

/// `transcriptExistsWithMessages`: the path exists (links followed) and is not empty of
/// messages.
pub fn exists_with_messages(path: &Path) -> bool {
    std::fs::metadata(path).is_ok() && !has_no_message_records(path)
}

/// `isStaleGeneratedBaseTranscript`: `sessionFile` is `<other generated id>.jsonl`.
fn is_stale_generated_base(session_id: &str, session_file: Option<&str>) -> bool {
    let Some(file) = session_file else {
        return false;
    };
    match generated_session_id(file) {
        Some(g) if g != session_id => js_basename(js::trim(file)) == format!("{g}.jsonl"),
        _ => false,
    }
}

/// What `--fix-missing` decided.
#[derive(Debug, Clone, Default)]
pub struct MissingOutcome {
    /// Entries removed (missing or message-less transcript, or no sessionId on a
    /// non-agent key), in store order.
    pub removed: Vec<usize>,
    /// Entries whose `sessionFile` is to be repaired: (index, the canonical transcript).
    pub repaired: Vec<(usize, String)>,
}

/// `pruneMissingTranscriptEntries` on the working set: removes entries in place and
/// returns the repairs for the caller to apply.
pub fn fix_missing(ws: &mut WorkingSet, paths: &SessionPaths) -> MissingOutcome {
    let mut out = MissingOutcome::default();
    let live: Vec<usize> = ws.iter().map(|(i, _)| i).collect();
    for i in live {
        let f = ws.entry(i);
        let Some(session_id) = f.session_id.as_deref() else {
            if parse_agent_session_key(&f.key).is_none() {
                ws.remove(i);
                out.removed.push(i);
            }
            continue;
        };
        let session_file = f.session_file.as_deref();
        let canonical = paths.transcript_in_dir(session_id);
        let transcript = paths.session_file_path(Some(session_id), session_file);
        if let Some(c) = &canonical {
            if is_stale_generated_base(session_id, session_file)
                && Some(c) != transcript.as_ref()
                && exists_with_messages(c)
            {
                out.repaired.push((i, c.to_string_lossy().into_owned()));
                continue;
            }
        }
        if transcript.as_deref().is_some_and(exists_with_messages) {
            continue;
        }
        ws.remove(i);
        out.removed.push(i);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::maintenance::store_pass::Facts;
    use serde_json::json;

    #[test]
    fn message_records() {
        assert!(is_message_record(&json!({"type": "message"})));
        assert!(is_message_record(&json!({"role": "assistant"})));
        assert!(is_message_record(&json!({"message": {"role": "user"}})));
        assert!(!is_message_record(
            &json!({"type": "session", "role": "user"})
        ));
        assert!(!is_message_record(&json!({"type": "custom"})));
        assert!(!is_message_record(&json!({"role": "bot"})));
        assert!(!is_message_record(&json!([1])));
        assert!(!is_message_record(&json!(null)));
    }

    #[test]
    fn e15_fix_missing() {
        let d = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(d.path()).unwrap();
        let w = |n: &str, s: &str| std::fs::write(root.join(n), s).unwrap();
        let header = "{\"type\":\"session\",\"id\":\"x\"}\n";
        w("hdr.jsonl", &format!("{header}{{\"type\":\"custom\"}}\n"));
        w("empty.jsonl", "");
        w("ws.jsonl", "  \n\n");
        w("big.jsonl", &format!("{header}{}", " ".repeat(5000)));
        w("bad.jsonl", "{\"type\":\"session\"}\nnot json\n");
        w("bare.jsonl", "{\"role\":\"assistant\"}\n");
        w("ok.jsonl", "{\"type\":\"message\"}\n");
        let gen = "123e4567-e89b-42d3-a456-426614174000";
        let other = "223e4567-e89b-42d3-a456-426614174000";
        w(&format!("{gen}.jsonl"), "{\"type\":\"message\"}\n");
        w(&format!("{other}.jsonl"), header);
        let m = json!({
            "unscoped": {"updatedAt": 1},
            "agent:main:nosid": {"updatedAt": 1},
            "agent:main:missing": {"sessionId": "nothere"},
            "agent:main:hdr": {"sessionId": "hdr"},
            "agent:main:empty": {"sessionId": "empty"},
            "agent:main:ws": {"sessionId": "ws"},
            "agent:main:big": {"sessionId": "big"},
            "agent:main:bad": {"sessionId": "bad"},
            "agent:main:bare": {"sessionId": "bare"},
            "agent:main:ok": {"sessionId": "ok"},
            "agent:main:repair": {"sessionId": gen, "sessionFile": format!("{}/{other}.jsonl", root.display())},
        });
        let facts = m
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, e)| Facts::of(k, e.as_object().unwrap(), &root))
            .collect();
        let mut ws = WorkingSet::new(facts);
        let paths = SessionPaths::new(&root.join("sessions.json"), &root, None, &root);
        let o = fix_missing(&mut ws, &paths);
        let removed: Vec<&str> = o.removed.iter().map(|&i| ws.key(i)).collect();
        assert_eq!(
            removed,
            [
                "unscoped",
                "agent:main:missing",
                "agent:main:hdr",
                "agent:main:empty",
                "agent:main:ws"
            ]
        );
        assert_eq!(o.repaired.len(), 1);
        assert_eq!(ws.key(o.repaired[0].0), "agent:main:repair");
        assert_eq!(
            o.repaired[0].1,
            root.join(format!("{gen}.jsonl")).to_string_lossy()
        );
        assert_eq!(ws.len(), 6);
    }
}
