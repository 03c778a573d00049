//! How openclaw 2026.9.6's `doctor --session-sqlite` reads a legacy JSONL transcript: the
//! lines it counts, the events it would import, and where a malformed file stops.
//!
//! Its reader (`iterateJsonlLinesSync` in `doctor-session-sqlite-readers-*.mjs`) decodes
//! the file as strict UTF-8 in 64 KiB chunks, splits on `\n`, trims each piece as
//! `String.prototype.trim` does and skips blank ones; every other piece goes through
//! `JSON.parse`, and a falsy value (`null`, `false`, `0`, `""`) is skipped without being
//! counted. The first piece that does not parse (or a chunk that is not UTF-8) makes the
//! whole file `transcript_malformed`: the dry run counts nothing for it, and the import
//! keeps the readable prefix (every event before it). Both `plan` and `finish` read
//! legacy files through here, so their counts are the doctor's.

use serde_json::Value;

/// The chunk size of 9.6's reader: an invalid UTF-8 byte loses the whole chunk it is in.
pub const READ_CHUNK_BYTES: usize = 65536;

/// One event 9.6 would import: the parsed line and the bytes of its trimmed text.
#[derive(Debug, Clone)]
pub struct LegacyEvent {
    /// 1-based line number in the file.
    pub line: usize,
    /// The trimmed line as written.
    pub text: String,
    /// `JSON.parse` of it.
    pub value: Value,
}

/// What reading a legacy transcript as 9.6 does gives.
#[derive(Debug, Clone, Default)]
pub struct LegacyRead {
    /// The events of the readable prefix (all of them when the file is well formed).
    pub events: Vec<LegacyEvent>,
    /// Bytes of the trimmed text of those events.
    pub event_bytes: u64,
    /// Where and why the file stops being readable (`transcript_malformed`), if it does.
    pub malformed: Option<Malformed>,
    /// Lines after the first malformed one that 9.6 will not import (blank ones not counted).
    pub dropped_lines: usize,
    /// Bytes from the start of the first dropped line to the end of the file.
    pub dropped_bytes: u64,
    /// Pieces skipped as blank or falsy JSON.
    pub skipped_blank: usize,
}

/// The first place 9.6's reader fails.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Malformed {
    /// 1-based line number.
    pub line: usize,
    /// Why (`not JSON: …`, `not UTF-8`).
    pub why: String,
    /// Whether it is the last non-blank line (a torn tail) rather than one in the middle.
    pub torn_tail: bool,
}

/// Whether a parsed value is falsy in JavaScript (9.6 skips such lines).
fn falsy(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::String(s) => s.is_empty(),
        _ => false,
    }
}

/// Reads `bytes` as 9.6's doctor reads a legacy transcript.
pub fn read(bytes: &[u8]) -> LegacyRead {
    let mut out = LegacyRead::default();
    // Strict UTF-8: the readable text ends before the chunk holding the first bad byte
    // (9.6 decodes chunk by chunk and throws on the chunk; the lines it already yielded
    // stay read).
    let (text, utf8_stop) = match std::str::from_utf8(bytes) {
        Ok(t) => (t, None),
        Err(e) => {
            let bad = e.valid_up_to();
            let chunk_start = bad - bad % READ_CHUNK_BYTES;
            // Lines wholly before the chunk are yielded; a line straddling into it is not.
            let upto = bytes[..chunk_start]
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |p| p + 1);
            // SAFETY of the slice: `upto <= bad`, all valid UTF-8, and on a `\n` boundary.
            (
                std::str::from_utf8(&bytes[..upto]).unwrap_or(""),
                Some(upto),
            )
        }
    };
    let mut line_no = 0usize;
    let mut offset = 0usize;
    let pieces: Vec<&str> = text.split('\n').collect();
    for (i, piece) in pieces.iter().enumerate() {
        line_no += 1;
        let start = offset;
        offset += piece.len() + 1;
        let t = crate::js::trim(piece);
        if t.is_empty() {
            if out.malformed.is_none() {
                out.skipped_blank += 1;
            }
            continue;
        }
        if out.malformed.is_some() {
            out.dropped_lines += 1;
            continue;
        }
        match crate::js::jsjson::parse_value(t) {
            Ok(v) if falsy(&v) => out.skipped_blank += 1,
            Ok(v) => {
                out.event_bytes += t.len() as u64;
                out.events.push(LegacyEvent {
                    line: line_no,
                    text: t.to_string(),
                    value: v,
                });
            }
            Err(e) => {
                let rest_blank = pieces[i + 1..]
                    .iter()
                    .all(|p| crate::js::trim(p).is_empty());
                out.malformed = Some(Malformed {
                    line: line_no,
                    why: format!("not JSON: {e}"),
                    torn_tail: rest_blank && utf8_stop.is_none(),
                });
                out.dropped_lines = 1;
                out.dropped_bytes = (bytes.len() - start.min(bytes.len())) as u64;
            }
        }
    }
    if let Some(upto) = utf8_stop {
        if out.malformed.is_none() {
            out.malformed = Some(Malformed {
                line: line_no.max(1),
                why: "not UTF-8".into(),
                torn_tail: false,
            });
            out.dropped_bytes = (bytes.len() - upto) as u64;
            out.dropped_lines = bytes[upto..]
                .split(|&b| b == b'\n')
                .filter(|l| !l.iter().all(u8::is_ascii_whitespace))
                .count();
        }
    }
    out
}

/// The entry types a legacy transcript line may have and 9.6 still recognises as
/// session entries (anything else in an unregistered file makes 9.6 defer it).
pub const KNOWN_ENTRY_TYPES: &[&str] = &[
    "message",
    "compaction",
    "branch_summary",
    "custom",
    "custom_message",
    "label",
    "model_change",
    "thinking_level_change",
    "session_info",
    "leaf",
];

/// What 9.6 makes of a JSONL no store entry names (`readLegacyPrimaryTranscriptIdentity`):
/// recovered as history of its own session, ignored, or deferred with a reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OrphanVerdict {
    /// A primary transcript of `session_id` with at least one message: 9.6 imports it.
    Primary {
        /// Its header's id.
        session_id: String,
    },
    /// Not a primary transcript (no header first, no message, a trajectory): left alone.
    NotPrimary(String),
    /// 9.6 refuses it (`historical_transcript_deferred`) and keeps the original.
    Deferred(String),
}

/// Classifies an unregistered JSONL named `file_name` with content `read`.
pub fn classify_orphan(file_name: &str, read: &LegacyRead) -> OrphanVerdict {
    let stem = file_name.strip_suffix(".jsonl").unwrap_or(file_name);
    let filename_id = stem.split("-topic-").next().unwrap_or(stem);
    if let Some(m) = &read.malformed {
        return OrphanVerdict::Deferred(format!("line {}: {}", m.line, m.why));
    }
    let mut session_id: Option<String> = None;
    let mut messages = 0usize;
    for ev in &read.events {
        let Some(obj) = ev.value.as_object() else {
            return OrphanVerdict::NotPrimary(format!("line {} is not an object", ev.line));
        };
        if obj.contains_key("traceSchema") {
            return OrphanVerdict::NotPrimary("a trajectory file".into());
        }
        let ty = obj.get("type").and_then(Value::as_str);
        if session_id.is_none() {
            let id = obj
                .get("id")
                .or_else(|| obj.get("sessionId"))
                .and_then(Value::as_str);
            let valid = id.is_some_and(|id| {
                let b = id.as_bytes();
                !b.is_empty()
                    && b.len() <= 128
                    && b[0].is_ascii_alphanumeric()
                    && b.iter()
                        .all(|c| c.is_ascii_alphanumeric() || *c == b'_' || *c == b'-')
            });
            if ty != Some("session") || !valid {
                return OrphanVerdict::NotPrimary("no session header on its first line".into());
            }
            let id = id.unwrap_or_default();
            if id != filename_id {
                return OrphanVerdict::Deferred(
                    "Primary transcript header does not match its original filename".into(),
                );
            }
            let version = obj.get("version").map_or(Some(1.0), Value::as_f64);
            if !version.is_some_and(|v| v.fract() == 0.0 && (1.0..=3.0).contains(&v)) {
                return OrphanVerdict::Deferred("Unsupported primary transcript version".into());
            }
            session_id = Some(id.to_string());
            continue;
        }
        if ty == Some("session") {
            return OrphanVerdict::Deferred("Multiple primary transcript headers".into());
        }
        if !ty.is_some_and(|t| KNOWN_ENTRY_TYPES.contains(&t)) {
            return OrphanVerdict::Deferred(format!(
                "Unrecognized primary transcript record (line {})",
                ev.line
            ));
        }
        if ty == Some("message") {
            messages += 1;
        }
    }
    match session_id {
        Some(session_id) if messages > 0 => OrphanVerdict::Primary { session_id },
        Some(_) => OrphanVerdict::NotPrimary("a header and no message".into()),
        None => OrphanVerdict::NotPrimary("empty".into()),
    }
}

/// Whether 9.6 treats `name` in a sessions directory as a primary transcript file
/// (`isPrimarySessionTranscriptFileName`): `*.jsonl`, not a trajectory, not a compaction
/// checkpoint, not an archive.
pub fn is_primary_transcript_name(name: &str) -> bool {
    name != "sessions.json"
        && name.ends_with(".jsonl")
        && !name.ends_with(".trajectory.jsonl")
        && !name.contains(".checkpoint.")
        && ![".deleted.", ".reset.", ".bak."]
            .iter()
            .any(|s| name.contains(s))
}

/// The name 9.6 gives a file it moves into the import archive: `<key>.<base>.imported-<ms>`
/// with every run of characters outside `[A-Za-z0-9_.-]` as `_` (key cut to 120, base to
/// 160 characters); `<ms>` is the time of the move.
pub fn archive_name(archive_key: &str, base_name: &str, ms: i64) -> String {
    format!(
        "{}.{}.imported-{ms}",
        crate::migrate::import::archive::slug(archive_key, 120, "session"),
        crate::migrate::import::archive::slug(base_name, 160, "artifact")
    )
}

/// The same name with `<ms>` left as a placeholder (what `plan` shows).
pub fn archive_name_pattern(archive_key: &str, base_name: &str) -> String {
    format!(
        "{}.{}.imported-<ms>",
        crate::migrate::import::archive::slug(archive_key, 120, "session"),
        crate::migrate::import::archive::slug(base_name, 160, "artifact")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn torn_tail_keeps_the_prefix() {
        let r = read(b"{\"type\":\"session\",\"id\":\"a\"}\n\n{\"a\":1}\nnull\n{\"type\":\"mess");
        assert_eq!(r.events.len(), 2);
        let m = r.malformed.unwrap();
        assert_eq!(m.line, 5);
        assert!(m.torn_tail);
        assert_eq!(r.dropped_lines, 1);
        assert_eq!(r.skipped_blank, 2);
    }

    #[test]
    fn a_bad_line_in_the_middle_drops_the_rest() {
        let r = read(b"{\"a\":1}\nnope\n{\"b\":2}\n");
        assert_eq!(r.events.len(), 1);
        let m = r.malformed.unwrap();
        assert_eq!(m.line, 2);
        assert!(!m.torn_tail);
        assert_eq!(r.dropped_lines, 2);
    }

    #[test]
    fn crlf_and_bom_are_trimmed() {
        let r = read("\u{feff}{\"a\":1}\r\n{\"b\":2}".as_bytes());
        assert_eq!(r.events.len(), 2);
        assert!(r.malformed.is_none());
    }

    #[test]
    fn orphans() {
        let f = |s: &str| read(s.as_bytes());
        let ok = f("{\"type\":\"session\",\"version\":3,\"id\":\"s1\"}\n{\"type\":\"message\",\"id\":\"x\",\"message\":{}}\n");
        assert_eq!(
            classify_orphan("s1.jsonl", &ok),
            OrphanVerdict::Primary {
                session_id: "s1".into()
            }
        );
        assert!(matches!(
            classify_orphan("s2.jsonl", &ok),
            OrphanVerdict::Deferred(_)
        ));
        let empty = f("{\"type\":\"session\",\"id\":\"s1\"}\n");
        assert!(matches!(
            classify_orphan("s1.jsonl", &empty),
            OrphanVerdict::NotPrimary(_)
        ));
    }

    #[test]
    fn archive_names_as_upstream() {
        assert_eq!(
            archive_name("agent:main:main", "abc.jsonl", 17),
            "agent_main_main.abc.jsonl.imported-17"
        );
        assert_eq!(archive_name("", "", 1), "session.artifact.imported-1");
        assert!(is_primary_transcript_name("a.jsonl"));
        assert!(!is_primary_transcript_name("a.trajectory.jsonl"));
        assert!(!is_primary_transcript_name("sessions.json"));
    }
}
