//! A transcript message's attachments as 2026.9.6 stores them: the canonical
//! `message.__openclaw.media` list, the legacy carriers gone.
//!
//! Before 9.6 writes a transcript event into the agent database (import, append, rewrite)
//! it runs `canonicalizeTranscriptEventMedia` (media-facts.ts): for a `type: "message"`
//! event whose message carries a top-level `media` array, the legacy parallel fields
//! (`MediaPath(s)`, `MediaUrl(s)`, `MediaType(s)`, `MediaTranscribedIndexes`,
//! `MediaStaged`, `MediaWorkspaceDir`) or a `__openclaw.media` list, the facts are merged
//! position by position (canonical facts first, the legacy arrays filling the gaps), each
//! normalised (strings trimmed, blank ones dropped, `origin` only `paste`/`file`, sizes
//! only finite non-negative numbers, durations and dimensions only positive safe
//! integers), written back as `__openclaw.media` in a fixed key order, and the carriers
//! deleted. A message whose legacy types are fewer than its paths and whose canonical
//! facts cannot tell which is which is refused (9.6 throws). Inline image blocks in
//! `content` are not touched. A message that comes out the same bytes is left as it was.

use serde_json::{Map, Value};

use crate::js;

/// The legacy per-message media fields 9.6 folds into `__openclaw.media` and deletes.
const PERSISTED_LEGACY_MEDIA_KEYS: &[&str] = &[
    "MediaPath",
    "MediaPaths",
    "MediaUrl",
    "MediaUrls",
    "MediaType",
    "MediaTypes",
    "MediaTranscribedIndexes",
    "MediaStaged",
    "MediaWorkspaceDir",
];

/// The bare kinds a legacy `MediaType(s)` slot may hold instead of a MIME type.
const LEGACY_MEDIA_KINDS: &[&str] = &["image", "audio", "video", "document", "sticker", "unknown"];

/// Why a message's media cannot be stored as 9.6 would.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MediaError {
    /// Fewer legacy types than paths, and no canonical fact says which path has which type.
    #[error("legacy media arrays have ambiguous sparse positional alignment")]
    AmbiguousAlignment,
    /// `MediaTranscribedIndexes` is a value `new Set(…)` throws on (a number, a boolean, an object).
    #[error("MediaTranscribedIndexes is not a list")]
    TranscribedNotIterable,
}

/// One attachment fact after 9.6's `normalizeMediaFact`.
#[derive(Debug, Default, Clone)]
struct Fact {
    path: Option<String>,
    url: Option<String>,
    content_type: Option<String>,
    /// `kind` as given (any JSON value but null): 9.6 copies it through unchecked.
    kind: Option<Value>,
    file_name: Option<String>,
    origin: Option<String>,
    size_bytes: Option<Value>,
    duration_ms: Option<Value>,
    width: Option<Value>,
    height: Option<Value>,
    transcribed: bool,
    message_id: Option<String>,
    workspace_dir: Option<String>,
    staged: bool,
    hydration_suppressed: bool,
}

/// 9.6's `normalizeOptionalString`: a string, trimmed, unless blank.
fn text(v: Option<&Value>) -> Option<String> {
    let s = js::trim(v?.as_str()?);
    (!s.is_empty()).then(|| s.to_string())
}

/// `v ?? …`: the value unless absent or null.
fn given(v: Option<&Value>) -> Option<&Value> {
    v.filter(|v| !v.is_null())
}

fn truthy(v: Option<&Value>) -> bool {
    v.is_some_and(js::truthy)
}

fn array(v: Option<&Value>) -> &[Value] {
    v.and_then(Value::as_array).map_or(&[], Vec::as_slice)
}

fn field<'a>(v: Option<&'a Value>, key: &str) -> Option<&'a Value> {
    v?.as_object()?.get(key)
}

/// `Number.isSafeInteger(v) && v > 0`.
fn positive_safe_integer(v: Option<&Value>) -> Option<Value> {
    let f = v?.as_f64()?;
    (f.fract() == 0.0 && f > 0.0 && f <= 9_007_199_254_740_991.0).then(|| v.cloned())?
}

/// `Number.isFinite(v) && v >= 0`.
fn non_negative_number(v: Option<&Value>) -> Option<Value> {
    let f = v?.as_f64()?;
    (f.is_finite() && f >= 0.0).then(|| v.cloned())?
}

/// 9.6's `normalizeMediaFact` of one raw list entry (anything that is not an object reads
/// as `{}`).
fn normalize(input: &Value) -> Fact {
    let get = |k: &str| input.as_object().and_then(|o| o.get(k));
    Fact {
        path: text(get("path")),
        url: text(get("url")),
        content_type: text(get("contentType")),
        kind: given(get("kind")).cloned(),
        file_name: text(get("fileName")),
        origin: get("origin")
            .and_then(Value::as_str)
            .filter(|o| *o == "paste" || *o == "file")
            .map(str::to_string),
        size_bytes: non_negative_number(get("sizeBytes")),
        duration_ms: positive_safe_integer(get("durationMs")),
        width: positive_safe_integer(get("width")),
        height: positive_safe_integer(get("height")),
        transcribed: get("transcribed") == Some(&Value::Bool(true)),
        message_id: text(get("messageId")),
        workspace_dir: text(get("workspaceDir")),
        staged: get("staged") == Some(&Value::Bool(true)),
        hydration_suppressed: get("hydrationSuppressed") == Some(&Value::Bool(true)),
    }
}

/// The fields of a message that the merge reads, with `media` replaced as 9.6's
/// `source` object replaces it.
struct Source<'a> {
    message: &'a Map<String, Value>,
    media: Option<&'a Value>,
    /// `MediaType`/`MediaTypes` cleared (too few types for the paths, no ambiguity).
    types_cleared: bool,
}

impl<'a> Source<'a> {
    fn get(&self, key: &str) -> Option<&'a Value> {
        if self.types_cleared && (key == "MediaType" || key == "MediaTypes") {
            return None;
        }
        self.message.get(key)
    }

    fn canonical(&self) -> Vec<Fact> {
        array(self.media).iter().map(normalize).collect()
    }

    fn slot_count(&self) -> usize {
        array(self.get("MediaPaths"))
            .len()
            .max(array(self.get("MediaUrls")).len())
    }

    /// 9.6's `hasAmbiguousSparseLegacyMediaAlignment`.
    fn ambiguous(&self) -> bool {
        let (paths, urls) = (array(self.get("MediaPaths")), array(self.get("MediaUrls")));
        let types = array(self.get("MediaTypes"));
        let slots = self.slot_count();
        if types.is_empty() || types.len() >= slots {
            return false;
        }
        let canonical = self.canonical();
        (0..slots).any(|i| {
            if text(paths.get(i)).or_else(|| text(urls.get(i))).is_none() {
                return false;
            }
            let Some(fact) = canonical.get(i) else {
                return true;
            };
            let identity = fact.path.is_some() || fact.url.is_some();
            // `contentType ?? kind`, where a missing content type leaves `kind` as given.
            let classified =
                fact.content_type.is_some() || fact.kind.as_ref().is_some_and(js::truthy);
            !identity || !classified
        })
    }

    /// 9.6's `resolveMediaFactsWithPrecedence`: the merged facts, and beside each whether
    /// the staged (legacy-wins) merge marks it staged.
    fn resolve(&self) -> Result<Vec<(Fact, bool)>, MediaError> {
        let canonical = self.canonical();
        let paths = array(self.get("MediaPaths"));
        let urls = array(self.get("MediaUrls"));
        let types = array(self.get("MediaTypes"));
        let single = truthy(self.get("MediaPath"))
            || truthy(self.get("MediaUrl"))
            || truthy(self.get("MediaType"));
        let count = canonical
            .len()
            .max(paths.len())
            .max(urls.len())
            .max(types.len())
            .max(usize::from(single));
        let transcribed: Vec<f64> = match given(self.get("MediaTranscribedIndexes")) {
            None | Some(Value::String(_)) => Vec::new(),
            Some(Value::Array(items)) => items.iter().filter_map(Value::as_f64).collect(),
            Some(_) => return Err(MediaError::TranscribedNotIterable),
        };
        let legacy_has_path =
            text(self.get("MediaPath")).is_some() || paths.iter().any(|p| text(Some(p)).is_some());
        let staged_source = self.get("MediaStaged") == Some(&Value::Bool(true));
        let workspace = text(self.get("MediaWorkspaceDir"));
        let mut out = Vec::with_capacity(count);
        for index in 0..count {
            let fact = canonical.get(index).cloned().unwrap_or_default();
            let legacy_path = given(paths.get(index)).or(if index == 0 {
                self.get("MediaPath")
            } else {
                None
            });
            let legacy_url = given(urls.get(index)).or(if !paths.is_empty() || index == 0 {
                self.get("MediaUrl")
            } else {
                None
            });
            let legacy_type = text(types.get(index)).or_else(|| {
                if index == 0 {
                    text(given(self.get("MediaType")))
                } else {
                    None
                }
            });
            let was_transcribed = transcribed.contains(&(index as f64));
            let staged =
                fact.staged || (staged_source && (!legacy_has_path || text(legacy_path).is_some()));
            let merged = Fact {
                path: fact.path.clone().or_else(|| text(legacy_path)),
                url: fact.url.clone().or_else(|| text(legacy_url)),
                content_type: fact.content_type.clone().or(legacy_type),
                transcribed: fact.transcribed || was_transcribed,
                workspace_dir: fact.workspace_dir.clone().or_else(|| workspace.clone()),
                ..fact
            };
            out.push((merged, staged));
        }
        Ok(out)
    }
}

/// 9.6's `canonicalizePersistedUserMessageMedia`: the message with its media canonical,
/// or `None` when it would come out the same bytes.
pub fn canonical_message(
    message: &Map<String, Value>,
) -> Result<Option<Map<String, Value>>, MediaError> {
    let had_legacy = PERSISTED_LEGACY_MEDIA_KEYS
        .iter()
        .any(|k| message.contains_key(*k));
    let had_top_level = message.contains_key("media");
    let canonical_inputs = field(message.get("__openclaw"), "media").filter(|m| m.is_array());
    if !had_legacy && !had_top_level && canonical_inputs.is_none() {
        return Ok(None);
    }
    let top_level = message.get("media").filter(|m| m.is_array());
    let mut source = Source {
        message,
        media: canonical_inputs.or(top_level),
        types_cleared: false,
    };
    let ambiguous = source.ambiguous();
    if had_legacy && ambiguous {
        return Err(MediaError::AmbiguousAlignment);
    }
    let types = array(source.get("MediaTypes")).len();
    if types > 0 && types < source.slot_count() && !ambiguous {
        source.types_cleared = true;
    }
    let resolved = source.resolve()?;
    let legacy_types = array(source.get("MediaTypes"));
    let inputs = array(source.media);
    let mut media = Vec::with_capacity(resolved.len());
    for (index, (fact, staged)) in resolved.into_iter().enumerate() {
        let legacy_type = text(given(legacy_types.get(index)).or(if index == 0 {
            source.get("MediaType")
        } else {
            None
        }));
        let existing = inputs.get(index);
        let existing_kind = field(existing, "kind");
        let bare_kind = legacy_type
            .as_deref()
            .is_some_and(|t| LEGACY_MEDIA_KINDS.contains(&t))
            && text(field(existing, "contentType")).is_none()
            && existing_kind.is_none();
        let kind = given(existing_kind)
            .cloned()
            .or_else(|| bare_kind.then(|| Value::String(legacy_type.clone().unwrap_or_default())))
            .filter(js::truthy);
        let mut m = Map::new();
        let mut put = |k: &str, v: Option<Value>| {
            if let Some(v) = v {
                m.insert(k.to_string(), v);
            }
        };
        put("path", fact.path.map(Value::String));
        put("url", fact.url.map(Value::String));
        put(
            "contentType",
            fact.content_type.filter(|_| !bare_kind).map(Value::String),
        );
        put("kind", kind);
        put("fileName", fact.file_name.map(Value::String));
        put("origin", fact.origin.map(Value::String));
        put("sizeBytes", fact.size_bytes);
        put("durationMs", fact.duration_ms);
        put("width", fact.width);
        put("height", fact.height);
        put("transcribed", fact.transcribed.then_some(Value::Bool(true)));
        put("messageId", fact.message_id.map(Value::String));
        put("workspaceDir", fact.workspace_dir.map(Value::String));
        put("staged", staged.then_some(Value::Bool(true)));
        put(
            "hydrationSuppressed",
            fact.hydration_suppressed.then_some(Value::Bool(true)),
        );
        media.push(Value::Object(m));
    }
    let mut next = message.clone();
    next.shift_remove("media");
    for k in PERSISTED_LEGACY_MEDIA_KEYS {
        next.shift_remove(*k);
    }
    let mut openclaw = message
        .get("__openclaw")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    if !media.is_empty() || canonical_inputs.is_some() || top_level.is_some() {
        openclaw.insert("media".to_string(), Value::Array(media));
    }
    if openclaw.is_empty() {
        next.shift_remove("__openclaw");
    } else {
        next.insert("__openclaw".to_string(), Value::Object(openclaw));
    }
    let same = js::jsjson::to_string_compact(&Value::Object(next.clone()))
        == js::jsjson::to_string_compact(&Value::Object(message.clone()));
    Ok((!same).then_some(next))
}

/// 9.6's `canonicalizeTranscriptEventMedia`: rewrites a `type: "message"` event's message
/// in place; whether it changed.
pub fn canonicalize_event(event: &mut Value) -> Result<bool, MediaError> {
    let Some(obj) = event.as_object_mut() else {
        return Ok(false);
    };
    if obj.get("type").and_then(Value::as_str) != Some("message") {
        return Ok(false);
    }
    let Some(message) = obj.get("message").and_then(Value::as_object) else {
        return Ok(false);
    };
    match canonical_message(message)? {
        Some(next) => {
            obj.insert("message".to_string(), Value::Object(next));
            Ok(true)
        }
        None => Ok(false),
    }
}

/// Whether 9.6 can store the event's media: the error it throws, if it throws (the import
/// and the plan ask before anything is written).
pub fn check_event(event: &Value) -> Result<(), MediaError> {
    match event.as_object() {
        Some(obj) if obj.get("type").and_then(Value::as_str) == Some("message") => {
            match obj.get("message").and_then(Value::as_object) {
                Some(message) => canonical_message(message).map(|_| ()),
                None => Ok(()),
            }
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn canon(message: Value) -> Value {
        let mut ev = json!({"type":"message","id":"m","message":message});
        canonicalize_event(&mut ev).unwrap();
        ev["message"].clone()
    }

    #[test]
    fn legacy_fields_fold_into_openclaw_media() {
        let m = canon(
            json!({"role":"user","content":"hi","MediaPath":" /a.png ","MediaType":"image/png","MediaUrl":"https://x/a.png"}),
        );
        assert_eq!(
            jsjson_text(&m),
            r#"{"role":"user","content":"hi","__openclaw":{"media":[{"path":"/a.png","url":"https://x/a.png","contentType":"image/png"}]}}"#
        );
    }

    #[test]
    fn bare_legacy_kind_becomes_kind() {
        let m = canon(
            json!({"role":"user","MediaPaths":["/a","/b"],"MediaTypes":["image","audio/ogg"],"MediaTranscribedIndexes":[1]}),
        );
        assert_eq!(
            jsjson_text(&m),
            r#"{"role":"user","__openclaw":{"media":[{"path":"/a","kind":"image"},{"path":"/b","contentType":"audio/ogg","transcribed":true}]}}"#
        );
    }

    #[test]
    fn ambiguous_sparse_types_are_refused() {
        let mut ev = json!({"type":"message","message":{"MediaPaths":["/a","/b"],"MediaTypes":["image/png"]}});
        assert_eq!(
            canonicalize_event(&mut ev),
            Err(MediaError::AmbiguousAlignment)
        );
    }

    #[test]
    fn untouched_messages_stay_as_they_are() {
        let mut ev = json!({"type":"message","message":{"role":"user","content":[{"type":"image","data":"AAAA"}]}});
        assert_eq!(canonicalize_event(&mut ev), Ok(false));
        let mut ev = json!({"type":"custom","message":{"MediaPath":"/a"}});
        assert_eq!(canonicalize_event(&mut ev), Ok(false));
    }

    fn jsjson_text(v: &Value) -> String {
        js::jsjson::to_string_compact(v)
    }
}
