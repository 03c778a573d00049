//! The gateway's transcript appender (`appendSessionTranscriptMessage`, `transcript.md`
//! §1.5.1): header created (0600) when the file is missing or empty, idempotency-key
//! dedupe, the current leaf found by a reverse scan that honours `leaf` controls,
//! linear files upgraded to parent-linked form first, a full-UUID `message` row appended
//! (a `\n` first when the file ends in a torn line), all under the transcript write lock.
//!
//! Deliberate difference: the message is written as given (the gateway masks secrets in
//! it first; clawstate never changes what it is asked to store).

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};
use thiserror::Error;

use super::entry::is_canonical;
use super::reader::scan_lines;
use crate::exit::{self, ExitCode};
use crate::fs::data_file::DataPath;
use crate::js;
use crate::transcript::write_lock::{AcquireOptions, WriteLock, WriteLockError, WriteLockSettings};

/// Linear files up to this size are upgraded before an append; larger ones get a raw row.
pub const SESSION_MANAGER_APPEND_MAX_BYTES: u64 = 8 * 1024 * 1024;

/// Why an append failed; the file is unchanged unless the message says otherwise.
#[derive(Debug, Error)]
pub enum AppendError {
    /// The write lock could not be taken (exit 75) or its file not created.
    #[error(transparent)]
    Lock(#[from] WriteLockError),
    /// Reading or writing the transcript failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The transcript.
        path: PathBuf,
        /// The error.
        source: io::Error,
    },
    /// The message is not a JSON object with a string `role`.
    #[error("the message must be a JSON object with a string \"role\"")]
    BadMessage,
    /// The linear-file upgrade could not be written.
    #[error(transparent)]
    Rewrite(#[from] crate::fs::atomic_file::AtomicWriteError),
    /// The transcript's path cannot be used (a link on its way, not a regular file) or
    /// the system refused to open it.
    #[error(transparent)]
    Unusable(#[from] crate::fs::data_file::DataFileError),
}

impl ExitCode for AppendError {
    fn exit_code(&self) -> i32 {
        match self {
            AppendError::Lock(e) => e.exit_code(),
            AppendError::Io { .. } => exit::CANT_CREATE,
            AppendError::Rewrite(e) => e.exit_code(),
            AppendError::Unusable(e) => e.exit_code(),
            AppendError::BadMessage => exit::DATA_ERR,
        }
    }
}

/// `readTranscriptLineInfo`: what one line says about ids and parent links.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LineInfo {
    /// A non-header row.
    pub is_non_session: bool,
    /// The row has a `parentId` key.
    pub has_parent_link: bool,
    /// Its id (non-blank string).
    pub entry_id: Option<String>,
    /// A canonical type.
    pub is_canonical: bool,
    /// `appendMode: "side"`.
    pub side: bool,
    /// An invalid `leaf` control.
    pub invalid_leaf_control: bool,
    /// A valid `leaf` control: (targetId, appendParentId (outer None = absent), side).
    pub leaf_control: Option<(Option<String>, Option<Option<String>>, bool)>,
}

fn norm_id(v: Option<&Value>) -> Option<String> {
    match v {
        Some(Value::String(s)) if !js::trim(s).is_empty() => Some(s.clone()),
        _ => None,
    }
}

/// Classifies one (trimmed, non-empty) line.
pub fn line_info(line: &str) -> LineInfo {
    let Ok(parsed) = crate::js::jsjson::parse_value(line) else {
        return LineInfo::default();
    };
    let obj = match &parsed {
        Value::Object(o) => Some(o),
        Value::Null => return LineInfo::default(),
        _ => None,
    };
    if parsed.get("type").and_then(Value::as_str) == Some("session") {
        return LineInfo::default();
    }
    let Some(id) = norm_id(parsed.get("id")) else {
        return LineInfo {
            is_non_session: true,
            ..Default::default()
        };
    };
    // `"parentId" in parsed` throws for strings (no info) and is false for other primitives.
    if parsed.is_string() {
        return LineInfo::default();
    }
    let canonical = is_canonical(&parsed);
    let side = canonical && parsed.get("appendMode").and_then(Value::as_str) == Some("side");
    if !obj.is_some_and(|o| o.contains_key("parentId")) {
        return LineInfo {
            is_non_session: true,
            entry_id: canonical.then(|| id.clone()),
            is_canonical: canonical,
            side,
            ..Default::default()
        };
    }
    if parsed.get("type").and_then(Value::as_str) == Some("leaf") {
        let target = match parsed.get("targetId") {
            Some(Value::Null) => Some(None),
            other => norm_id(other).map(Some),
        };
        let append = match parsed.get("appendParentId") {
            None => Some(None),
            Some(Value::Null) => Some(Some(None)),
            other => norm_id(other).map(|s| Some(Some(s))),
        };
        let mode_ok = match parsed.get("appendMode") {
            None => true,
            Some(Value::String(s)) => s == "side",
            Some(_) => false,
        };
        return match (target, append, mode_ok) {
            (Some(t), Some(a), true) => LineInfo {
                is_non_session: true,
                has_parent_link: true,
                entry_id: Some(id),
                leaf_control: Some((
                    t,
                    a,
                    parsed.get("appendMode").and_then(Value::as_str) == Some("side"),
                )),
                ..Default::default()
            },
            _ => LineInfo {
                is_non_session: true,
                has_parent_link: true,
                entry_id: Some(id),
                invalid_leaf_control: true,
                ..Default::default()
            },
        };
    }
    LineInfo {
        is_non_session: true,
        has_parent_link: true,
        entry_id: Some(id),
        is_canonical: canonical,
        side,
        ..Default::default()
    }
}

/// Opens a transcript for a scan, as an I/O error when it cannot be used.
fn open_data(path: &DataPath) -> io::Result<File> {
    path.open_read()
        .map(crate::fs::data_file::DataFile::into_file)
        .map_err(|e| match e {
            e if e.is_not_found() => io::Error::new(io::ErrorKind::NotFound, e.to_string()),
            e => io::Error::other(e.to_string()),
        })
}

/// Trimmed non-empty lines from the end of a file, newest first (stops when `f` says so).
pub fn for_each_line_reverse(file: &File, mut f: impl FnMut(&str) -> bool) -> io::Result<()> {
    let size = file.metadata()?.len();
    let mut pos = size;
    let chunk = 64 * 1024u64;
    let mut carry: Vec<u8> = Vec::new();
    while pos > 0 {
        let start = pos.saturating_sub(chunk);
        let mut buf = vec![0u8; (pos - start) as usize];
        file.read_exact_at(&mut buf, start)?;
        buf.extend_from_slice(&carry);
        let mut end = buf.len();
        while let Some(i) = memchr::memrchr(b'\n', &buf[..end]) {
            let s = String::from_utf8_lossy(&buf[i + 1..end]);
            let t = js::trim(&s);
            if !t.is_empty() && !f(t) {
                return Ok(());
            }
            end = i;
        }
        carry = buf[..end].to_vec();
        pos = start;
    }
    let s = String::from_utf8_lossy(&carry);
    let t = js::trim(&s);
    if !t.is_empty() {
        f(t);
    }
    Ok(())
}

fn for_each_line_forward(path: &DataPath, mut f: impl FnMut(&str) -> bool) -> io::Result<()> {
    let file = open_data(path)?;
    scan_lines(file, |l| {
        let s = String::from_utf8_lossy(l.bytes);
        let t = js::trim(&s);
        t.is_empty() || f(t)
    })?;
    Ok(())
}

fn validate_leaf_refs(
    path: &DataPath,
    control_id: &str,
    target: &Option<String>,
    append: &Option<Option<String>>,
) -> io::Result<bool> {
    let mut refs: Vec<String> = Vec::new();
    if let Some(t) = target {
        refs.push(t.clone());
    }
    if let Some(Some(a)) = append {
        if !refs.contains(a) {
            refs.push(a.clone());
        }
    }
    if refs.is_empty() {
        return Ok(true);
    }
    let mut result = false;
    let mut nested: Vec<(String, Option<String>, Option<Option<String>>)> = Vec::new();
    let mut failed = false;
    for_each_line_forward(path, |line| {
        let info = line_info(line);
        let Some(id) = info.entry_id.clone() else {
            return true;
        };
        if id == control_id {
            return false;
        }
        if !refs.contains(&id) {
            return true;
        }
        if info.invalid_leaf_control {
            failed = true;
            return false;
        }
        if let Some((t, a, _)) = info.leaf_control {
            nested.push((id.clone(), t, a));
        }
        refs.retain(|r| r != &id);
        if refs.is_empty() {
            result = true;
            return false;
        }
        true
    })?;
    if failed {
        return Ok(false);
    }
    for (id, t, a) in nested {
        if !validate_leaf_refs(path, &id, &t, &a)? {
            return Ok(false);
        }
    }
    Ok(result)
}

/// Where the next gateway append attaches.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LeafInfo {
    /// The current leaf (the new row's parent).
    pub leaf_id: Option<String>,
    /// Whether the current append mode is "side".
    pub side: bool,
    /// Whether any row has a parent link.
    pub has_parent_linked_entries: bool,
    /// Rows other than the header (forward scan only).
    pub non_session_entries: usize,
}

fn leaf_from_trailing_controls(path: &DataPath, file: &File) -> io::Result<(Option<String>, bool)> {
    let mut out: Option<(Option<String>, bool)> = None;
    let mut err: Option<io::Error> = None;
    for_each_line_reverse(file, |line| {
        let info = line_info(line);
        let Some(id) = info.entry_id.clone() else {
            return true;
        };
        if info.invalid_leaf_control {
            return true;
        }
        match &info.leaf_control {
            None => {
                out = Some((Some(id), info.side));
                false
            }
            Some((t, a, side)) => match validate_leaf_refs(path, &id, t, a) {
                Ok(true) => {
                    let leaf = match a {
                        None => t.clone(),
                        Some(x) => x.clone(),
                    };
                    out = Some((leaf, *side));
                    false
                }
                Ok(false) => true,
                Err(e) => {
                    err = Some(e);
                    false
                }
            },
        }
    })?;
    if let Some(e) = err {
        return Err(e);
    }
    Ok(out.unwrap_or((None, false)))
}

fn leaf_forward(path: &DataPath, file: &File) -> io::Result<LeafInfo> {
    let mut info_out = LeafInfo::default();
    let mut trailing = false;
    let mut side = false;
    for_each_line_forward(path, |line| {
        let info = line_info(line);
        if info.is_non_session {
            info_out.non_session_entries += 1;
        }
        if info.has_parent_link {
            info_out.has_parent_linked_entries = true;
        }
        let Some(id) = info.entry_id.clone() else {
            return true;
        };
        if info.invalid_leaf_control || info.leaf_control.is_some() {
            if let Some((_, _, s)) = info.leaf_control {
                side = s;
            }
            trailing = true;
            return true;
        }
        info_out.leaf_id = Some(id);
        if info.is_canonical {
            side = info.side;
        }
        trailing = false;
        true
    })?;
    if trailing {
        let (leaf, s) = leaf_from_trailing_controls(path, file)?;
        info_out.leaf_id = leaf;
        side = s;
    }
    info_out.side = side;
    Ok(info_out)
}

/// `readTranscriptLeafInfo`: the reverse scan (usually one line), else a forward scan.
pub fn read_leaf_info(path: &DataPath) -> io::Result<LeafInfo> {
    let file = open_data(path)?;
    let mut latest: Option<String> = None;
    let mut result: Option<LeafInfo> = None;
    let mut control: Option<(String, Option<String>, Option<Option<String>>, bool)> = None;
    for_each_line_reverse(&file, |line| {
        let info = line_info(line);
        let Some(id) = info.entry_id.clone() else {
            return true;
        };
        if info.invalid_leaf_control {
            return false;
        }
        if let Some((t, a, s)) = info.leaf_control.clone() {
            control = Some((id, t, a, s));
            return false;
        }
        if latest.is_none() {
            latest = Some(id);
        }
        if info.is_canonical && info.has_parent_link {
            result = Some(LeafInfo {
                leaf_id: latest.clone(),
                side: info.side,
                has_parent_linked_entries: true,
                non_session_entries: 0,
            });
        }
        false
    })?;
    if let Some(r) = result {
        return Ok(r);
    }
    if let Some((id, t, a, s)) = control {
        if let Some(l) = latest {
            if validate_leaf_refs(path, &id, &t, &a)? {
                return Ok(LeafInfo {
                    leaf_id: Some(l),
                    side: s,
                    has_parent_linked_entries: true,
                    non_session_entries: 0,
                });
            }
        } else {
            let (leaf, side) = leaf_from_trailing_controls(path, &file)?;
            return Ok(LeafInfo {
                leaf_id: leaf,
                side,
                has_parent_linked_entries: true,
                non_session_entries: 0,
            });
        }
    }
    leaf_forward(path, &file)
}

/// `migrateLinearTranscriptToParentLinked`: ids added (8-hex) where missing, each row's
/// parent = the previous row, header `version` forced to 3. Returns (bytes, leaf id).
pub fn linear_to_parent_linked(content: &[u8]) -> (Vec<u8>, Option<String>) {
    let text = String::from_utf8_lossy(content);
    let mut existing: Vec<String> = Vec::new();
    let mut out: Vec<String> = Vec::new();
    let mut prev: Option<String> = None;
    let mut leaf = None;
    for line in text.split('\n') {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if js::trim(line).is_empty() {
            continue;
        }
        let Ok(mut v) = crate::js::jsjson::parse_value(line) else {
            out.push(line.to_string());
            continue;
        };
        let Some(o) = v.as_object_mut() else {
            out.push(line.to_string());
            continue;
        };
        if o.get("type").and_then(Value::as_str) == Some("session") {
            o.insert("version".into(), json!(3));
            out.push(crate::js::jsjson::to_string_compact(&v));
            continue;
        }
        let id = norm_id(o.get("id")).unwrap_or_else(|| {
            super::migrate::generate_short_id(&|c: &str| existing.iter().any(|x| x == c))
        });
        existing.push(id.clone());
        o.insert("id".into(), json!(id.clone()));
        if !o.contains_key("parentId") {
            o.insert(
                "parentId".into(),
                prev.clone().map_or(Value::Null, Value::String),
            );
        }
        prev = Some(id.clone());
        leaf = Some(id);
        out.push(crate::js::jsjson::to_string_compact(&v));
    }
    let mut bytes = out.join("\n").into_bytes();
    if !out.is_empty() {
        bytes.push(b'\n');
    }
    (bytes, leaf)
}

/// A message to append and how.
#[derive(Debug, Clone)]
pub struct AppendRequest<'a> {
    /// The transcript file.
    pub path: &'a DataPath,
    /// The message (an object with a string `role`).
    pub message: Value,
    /// The session id for a header created now.
    pub session_id: Option<String>,
    /// The `cwd` for a header created now.
    pub cwd: String,
    /// The row timestamp (epoch ms).
    pub now_ms: i64,
    /// Look for an existing row with the message's idempotency key first.
    pub dedupe: bool,
    /// Lock settings.
    pub lock: WriteLockSettings,
    /// Compute, write nothing.
    pub dry_run: bool,
}

/// What an append did (or would do).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AppendOutcome {
    /// The new row's id, or the existing one for a duplicate.
    pub message_id: String,
    /// Whether a row was appended.
    pub appended: bool,
    /// Whether a header was written first.
    pub header_created: bool,
    /// Whether a linear file was rewritten to parent-linked form first.
    pub upgraded_linear: bool,
    /// Whether a `\n` was written first to end a torn line.
    pub newline_repaired: bool,
    /// The row as written.
    pub entry: Option<Value>,
}

fn io_at(path: &Path) -> impl Fn(io::Error) -> AppendError + '_ {
    move |source| AppendError::Io {
        path: path.to_path_buf(),
        source,
    }
}

fn idempotency_key(m: &Value) -> Option<String> {
    m.get("idempotencyKey")
        .and_then(Value::as_str)
        .map(js::trim)
        .filter(|s| !s.is_empty())
        .map(String::from)
}

fn find_by_idempotency_key(path: &DataPath, key: &str) -> io::Result<Option<String>> {
    let file = match path.open_read() {
        Ok(f) => f.into_file(),
        Err(e) if e.is_not_found() => return Ok(None),
        Err(e) => return Err(io::Error::other(e.to_string())),
    };
    let mut found = None;
    for_each_line_reverse(&file, |line| {
        let Ok(v) = crate::js::jsjson::parse_value(line) else {
            return true;
        };
        let Some(m) = v.get("message") else {
            return true;
        };
        if idempotency_key(m).as_deref() != Some(key) {
            return true;
        }
        found = Some(match v.get("id") {
            Some(Value::String(s)) if !js::trim(s).is_empty() => s.clone(),
            _ => key.to_string(),
        });
        false
    })?;
    Ok(found)
}

/// Whether a message is a transcript-only OpenClaw assistant (delivery mirror or
/// gateway-injected), the only kind appended in side mode.
pub fn is_transcript_only_assistant(m: &Value) -> bool {
    m.get("role").and_then(Value::as_str) == Some("assistant")
        && m.get("provider").and_then(Value::as_str) == Some("openclaw")
        && matches!(
            m.get("model").and_then(Value::as_str),
            Some("delivery-mirror") | Some("gateway-injected")
        )
}

/// Appends one message as the gateway appender does, under the write lock.
pub fn append_message(req: &AppendRequest<'_>) -> Result<AppendOutcome, AppendError> {
    if !req.message.get("role").is_some_and(Value::is_string) {
        return Err(AppendError::BadMessage);
    }
    let data = req.path;
    let path = data.path();
    let io = io_at(path);
    // A link on the way or in its place, a FIFO: refused before anything is locked.
    data.check()?;
    let _guard = if req.dry_run {
        None
    } else {
        Some(WriteLock::acquire(
            path,
            &req.lock,
            AcquireOptions {
                allow_reentrant: true,
            },
        )?)
    };
    // ensureTranscriptHeader
    let meta = data.facts()?;
    let needs_header = meta.as_ref().is_none_or(|m| m.size == 0);
    let mut header_created = false;
    if needs_header {
        header_created = true;
        if !req.dry_run {
            let (dir, name) = data.create_parent(0o700)?;
            let header = crate::store::lifecycle::transcript_header(
                &req.session_id
                    .clone()
                    .unwrap_or_else(|| uuid::Uuid::new_v4().to_string()),
                crate::js::clock::system_now_ms(),
                Path::new(&req.cwd),
            );
            let mut f = if meta.is_none() {
                dir.create_exclusive(name, 0o600).map_err(&io)?
            } else {
                data.open_write()?.into_file()
            };
            if let Err(e) = f.write_all(header.as_bytes()).and_then(|()| f.sync_all()) {
                // Leave no partial header: remove the file this call created, or empty the
                // empty file it found.
                let _ = if meta.is_none() {
                    dir.unlink(name)
                } else {
                    f.set_len(0)
                };
                return Err(io(e));
            }
        }
    }
    if req.dedupe {
        if let Some(key) = idempotency_key(&req.message) {
            if let Some(id) = find_by_idempotency_key(data, &key).map_err(&io)? {
                return Ok(AppendOutcome {
                    message_id: id,
                    appended: false,
                    header_created,
                    upgraded_linear: false,
                    newline_repaired: false,
                    entry: None,
                });
            }
        }
    }
    let message_id = uuid::Uuid::new_v4().to_string();
    let size = data.facts()?.map_or(0, |m| m.size);
    let mut leaf = if req.dry_run && needs_header {
        LeafInfo::default()
    } else {
        read_leaf_info(data).unwrap_or_default()
    };
    let linear = !leaf.has_parent_linked_entries && leaf.non_session_entries > 0;
    let raw = linear && size > SESSION_MANAGER_APPEND_MAX_BYTES;
    let mut upgraded = false;
    if linear && !raw {
        let content = data.read()?;
        let (bytes, l) = linear_to_parent_linked(&content);
        if !req.dry_run {
            // Kept at its mode: the gateway writes the upgrade over the file.
            crate::fs::atomic_file::replace_data_file(data, &bytes, data.mode_or(0o600))?;
        }
        upgraded = true;
        leaf = LeafInfo {
            has_parent_linked_entries: l.is_some(),
            leaf_id: l,
            side: false,
            non_session_entries: leaf.non_session_entries,
        };
    }
    let mut entry = Map::new();
    entry.insert("type".into(), json!("message"));
    entry.insert("id".into(), json!(message_id.clone()));
    if !raw {
        entry.insert(
            "parentId".into(),
            leaf.leaf_id.clone().map_or(Value::Null, Value::String),
        );
    }
    entry.insert("timestamp".into(), json!(js::to_iso_string(req.now_ms)));
    entry.insert("message".into(), req.message.clone());
    if leaf.side && is_transcript_only_assistant(&req.message) {
        entry.insert("appendMode".into(), json!("side"));
    }
    let entry = Value::Object(entry);
    let mut newline = false;
    if !req.dry_run {
        let mut f = data.open_append(Some(0o600))?.into_file();
        let len = f.metadata().map_err(&io)?.len();
        if len > 0 {
            let mut last = [0u8; 1];
            f.seek(SeekFrom::Start(len - 1)).map_err(&io)?;
            f.read_exact(&mut last).map_err(&io)?;
            newline = last[0] != b'\n';
        }
        let mut line = String::new();
        if newline {
            line.push('\n');
        }
        line.push_str(&crate::js::jsjson::to_string_compact(&entry));
        line.push('\n');
        if let Err(e) = f.write_all(line.as_bytes()).and_then(|()| f.sync_all()) {
            // A partial write (ENOSPC, EFBIG) must not leave a torn line: the write lock is
            // held, so everything past `len` is ours to take back.
            let _ = f.set_len(len).and_then(|()| f.sync_all());
            return Err(io(e));
        }
    } else {
        let content_end = data.read().ok().and_then(|c| c.last().copied());
        newline = content_end.is_some_and(|b| b != b'\n');
    }
    Ok(AppendOutcome {
        message_id,
        appended: true,
        header_created,
        upgraded_linear: upgraded,
        newline_repaired: newline,
        entry: Some(entry),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_info_shapes() {
        let i = line_info(r#"{"type":"message","id":"a","parentId":null}"#);
        assert!(i.is_canonical && i.has_parent_link);
        let i = line_info(r#"{"type":"leaf","id":"l","parentId":"a","targetId":5}"#);
        assert!(i.invalid_leaf_control);
        let i = line_info(r#"{"type":"message","id":"a"}"#);
        assert!(!i.has_parent_link && i.entry_id.is_some());
        assert_eq!(
            line_info(r#"{"type":"session","id":"s"}"#),
            LineInfo::default()
        );
    }

    #[test]
    fn appends_with_leaf_and_upgrades_linear() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("s.jsonl");
        std::fs::write(
            &p,
            "{\"type\":\"session\",\"id\":\"s\",\"timestamp\":\"t\",\"cwd\":\"/\"}\n{\"type\":\"message\",\"timestamp\":\"t\",\"message\":{\"role\":\"user\",\"content\":\"hi\"}}\n{\"torn\"",
        )
        .unwrap();
        let data = DataPath::given(&p);
        let req = AppendRequest {
            path: &data,
            message: json!({"role":"user","content":"again","idempotencyKey":"k"}),
            session_id: None,
            cwd: "/".into(),
            now_ms: 1_767_225_600_000,
            dedupe: true,
            lock: WriteLockSettings::default(),
            dry_run: false,
        };
        let out = append_message(&req).unwrap();
        assert!(out.upgraded_linear && out.appended);
        let text = std::fs::read_to_string(&p).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].ends_with("\"version\":3}"));
        let second: Value = serde_json::from_str(lines[1]).unwrap();
        let last: Value = serde_json::from_str(lines.last().unwrap()).unwrap();
        assert_eq!(last["parentId"], second["id"]);
        let again = append_message(&req).unwrap();
        assert!(!again.appended);
        assert_eq!(again.message_id, out.message_id);
        assert!(!d.path().join("s.jsonl.lock").exists());
    }
}
