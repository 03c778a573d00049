//! `openclaw sessions compact --max-lines N` (`transcript.md` §4.11): keep the header and
//! the last N−1 non-blank lines, re-link what lost its parent, archive the original as
//! `<file>.bak.<ts>`. No model involved.
//!
//! Unlike the peer (which renames the original away before renaming the new file in), the
//! original is hard-linked to its archive name first and the new file is renamed over it,
//! so the transcript path always holds a whole file, old or new; and the store is written
//! with it ([`super::commit`]): a failed store write renames the archive back.

use std::collections::{HashMap, HashSet, VecDeque};
use std::io::{BufReader, Write};
use std::path::{Path, PathBuf};

use serde_json::Value;
use thiserror::Error;

use crate::fs::data_file::DataPath;

use super::commit::{CommitError, TranscriptSide};
use crate::exit::{self, ExitCode};
use crate::js;
use crate::session::artifact::{archive_path, ArchiveReason};
use crate::transcript::entry::type_of;
use crate::transcript::reader::{decode_line, scan_lines};
use crate::transcript::tree::{scan_tree, select_path};

/// A trim that could not be planned; the transcript is unchanged.
#[derive(Debug, Error)]
pub enum TruncateError {
    /// The transcript could not be read.
    #[error("{}: cannot read: {source}", path.display())]
    Read {
        /// The transcript.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
}

impl ExitCode for TruncateError {
    fn exit_code(&self) -> i32 {
        match self {
            TruncateError::Read { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
                exit::NOT_FOUND
            }
            TruncateError::Read { .. } => exit::FAILURE,
        }
    }
}

/// What a trim would do.
#[derive(Debug, Clone)]
pub struct TrimPlan {
    /// Non-blank lines in the file.
    pub total_lines: usize,
    /// The lines to write (header first), or `None` when nothing is trimmed.
    pub lines: Option<Vec<String>>,
    /// `kept` of the peer's result.
    pub kept: usize,
}

/// Splits text into lines as Node's `readline` does (`\n`, `\r\n` and a lone `\r`).
fn readline_split(text: &str) -> impl Iterator<Item = &str> {
    text.split('\n').flat_map(|l| {
        let l = l.strip_suffix('\r').unwrap_or(l);
        l.split('\r')
    })
}

fn parse_record(line: &str) -> Option<Value> {
    crate::js::jsjson::parse_value(line)
        .ok()
        .filter(Value::is_object)
}

/// `normalizeManualCompactTranscriptLines`: `None` when the header is not a session row.
pub fn normalize_lines(header: &str, tail: &[String]) -> Option<Vec<String>> {
    let h = parse_record(header)?;
    if type_of(&h) != Some("session") || !h.get("id").is_some_and(Value::is_string) {
        return None;
    }
    let records: Vec<Value> = tail.iter().filter_map(|l| parse_record(l)).collect();
    let mut retained: HashSet<String> = HashSet::new();
    let mut transparent: HashMap<String, Value> = HashMap::new();
    let mut out: Vec<Value> = Vec::new();
    for record in records {
        let mut parent = record.get("parentId").cloned();
        let mut seen: HashSet<String> = HashSet::new();
        while let Some(Value::String(p)) = parent.clone() {
            if !transparent.contains_key(&p) || !seen.insert(p.clone()) {
                break;
            }
            parent = Some(transparent.get(&p).cloned().unwrap_or(Value::Null));
        }
        let mut next = record.clone();
        match &parent {
            Some(Value::String(p)) if !retained.contains(p) => {
                next["parentId"] = Value::Null;
            }
            _ if parent.as_ref() != record.get("parentId") => {
                if let (Some(o), Some(p)) = (next.as_object_mut(), parent.clone()) {
                    o.insert("parentId".into(), p);
                }
            }
            _ => {}
        }
        if type_of(&next) == Some("leaf") {
            let target = next.get("targetId").cloned();
            let valid_target = match &target {
                Some(Value::Null) => true,
                Some(Value::String(s)) => !js::trim(s).is_empty(),
                _ => false,
            };
            if !valid_target {
                if let Some(id) = next.get("id").and_then(Value::as_str) {
                    let p = match next.get("parentId") {
                        Some(Value::Null) | None => Value::Null,
                        Some(Value::String(s)) => Value::String(s.clone()),
                        Some(_) => Value::Null,
                    };
                    transparent.insert(id.to_string(), p);
                }
            }
            match &target {
                Some(Value::String(t)) if !js::trim(t).is_empty() && !retained.contains(t) => {
                    next["targetId"] = Value::Null;
                    next["appendParentId"] = Value::Null;
                }
                _ => {
                    if valid_target {
                        if let Some(Value::String(a)) = next.get("appendParentId") {
                            if !retained.contains(a) {
                                next["appendParentId"] = target.clone().unwrap_or(Value::Null);
                            }
                        }
                    }
                }
            }
        }
        if type_of(&next) == Some("compaction") {
            if let Some(id) = next.get("id").and_then(Value::as_str).map(String::from) {
                if let Some(fk) = next
                    .get("firstKeptEntryId")
                    .and_then(Value::as_str)
                    .map(String::from)
                {
                    if fk != id {
                        let mut all: Vec<&Value> = out.iter().collect();
                        all.push(&next);
                        let tree = scan_tree(&all);
                        let path = select_path(&tree, &all, Some(&id));
                        let ids: Vec<&str> =
                            path.iter().map(|&p| tree.nodes[p].id.as_str()).collect();
                        if !ids.contains(&fk.as_str()) {
                            let first = ids.first().map(|s| s.to_string()).unwrap_or(id.clone());
                            next["firstKeptEntryId"] = Value::String(first);
                        }
                    }
                }
            }
        }
        if let Some(id) = next.get("id").and_then(Value::as_str) {
            if !js::trim(id).is_empty() {
                retained.insert(id.to_string());
            }
        }
        out.push(next);
    }
    let mut lines = vec![crate::js::jsjson::to_string_compact(&h)];
    lines.extend(out.iter().map(crate::js::jsjson::to_string_compact));
    Some(lines)
}

/// Streams `data` and plans the trim to `max_lines` (at least 1).
pub fn plan(data: &DataPath, max_lines: u64) -> Result<TrimPlan, TruncateError> {
    let max = max_lines.max(1) as usize;
    let tail_max = max - 1;
    let path = data.path();
    let f = data
        .open_read()
        .map_err(|e| TruncateError::Read {
            path: path.to_path_buf(),
            source: std::io::Error::other(e.to_string()),
        })?
        .into_file();
    let mut header: Option<String> = None;
    let mut tail: VecDeque<String> = VecDeque::new();
    let mut total = 0usize;
    scan_lines(BufReader::with_capacity(1 << 20, f), |l| {
        let text = decode_line(l.bytes);
        for piece in readline_split(&text) {
            let t = js::trim(piece);
            if t.is_empty() {
                continue;
            }
            total += 1;
            if header.is_none() {
                header = Some(t.to_string());
                continue;
            }
            tail.push_back(t.to_string());
            if tail.len() > tail_max {
                tail.pop_front();
            }
        }
        true
    })
    .map_err(|source| TruncateError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    if total <= max {
        return Ok(TrimPlan {
            total_lines: total,
            lines: None,
            kept: total,
        });
    }
    let tail: Vec<String> = tail.into_iter().collect();
    match header.as_deref().and_then(|h| normalize_lines(h, &tail)) {
        Some(lines) => Ok(TrimPlan {
            total_lines: total,
            kept: lines.len(),
            lines: Some(lines),
        }),
        None => Ok(TrimPlan {
            total_lines: total,
            lines: None,
            kept: 0,
        }),
    }
}

/// Prepares the trimmed lines: a synced temp file beside the transcript (0600, `O_EXCL`)
/// and the original hard-linked as `<file>.bak.<ts>`, put in place with the store by
/// [`super::commit::commit`] (the temp renamed over the original, the directory synced).
/// Returns the archive path too.
pub fn prepare(
    path: &Path,
    lines: &[String],
    now_ms: i64,
) -> Result<(TranscriptSide, PathBuf), CommitError> {
    let archived = archive_path(path, ArchiveReason::Bak, now_ms);
    // The gateway writes the trimmed file anew, `wx` at 0600; the archive keeps the old.
    let side = TranscriptSide::replace(path, Some(&archived), 0o600, |f| {
        let mut out = std::io::BufWriter::new(f);
        for line in lines {
            out.write_all(line.as_bytes())?;
            out.write_all(b"\n")?;
        }
        out.flush()
    })?;
    Ok((side, archived))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relinks_like_the_peer() {
        let header = r#"{"type":"session","version":3,"id":"s"}"#;
        let tail = vec![
            r#"{"type":"message","id":"c","parentId":"b","message":{"role":"user"}}"#.to_string(),
            "not json".to_string(),
            r#"{"type":"leaf","id":"l","parentId":"c","targetId":"zz","appendParentId":"c"}"#.to_string(),
            r#"{"type":"compaction","id":"k","parentId":"c","firstKeptEntryId":"a","summary":"s","tokensBefore":1}"#.to_string(),
        ];
        let out = normalize_lines(header, &tail).unwrap();
        assert_eq!(out.len(), 4);
        assert!(out[1].contains(r#""parentId":null"#));
        assert!(
            out[2].contains(r#""targetId":null,"appendParentId":null"#),
            "{}",
            out[2]
        );
        assert!(out[3].contains(r#""firstKeptEntryId":"c""#), "{}", out[3]);
    }
}
