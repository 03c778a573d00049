//! Skill-prompt blobs (`store.md` §2.6): large `skillsSnapshot.prompt` strings live in
//! `<sessionsDir>/skills-prompts/sha256/<hash[0..2]>/<hash>.txt` and the store keeps a
//! `promptRef` instead.
//!
//! * On load ([`hydrate_entry`]) an entry whose `skillsSnapshot` has no string `prompt` gets
//!   it back from a valid `promptRef` blob, or loses its `skillsSnapshot`.
//! * On save ([`project_for_persistence`]) a prompt of at least 512 UTF-16 units and at most
//!   512 KiB of UTF-8 is replaced by `promptRef`, the last key of `skillsSnapshot`, and the
//!   blob to write is returned; [`write_blob`] writes it.

use std::io;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::fs::data_file::DataPath;
use crate::js;

use super::normalize::js_set;
use crate::session::entry_fields::EntryFields;

/// Prompts shorter than this many UTF-16 units stay inline.
pub const MIN_PROMPT_BLOB_CHARS: usize = 512;
/// Prompts longer than this many UTF-8 bytes stay inline.
pub const MAX_PROMPT_BLOB_BYTES: usize = 512 * 1024;

/// A blob a save needs on disk before the store is replaced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptBlob {
    /// `<sessionsDir>/skills-prompts/sha256/<hash[0..2]>/<hash>.txt`.
    pub path: PathBuf,
    /// The prompt, UTF-8.
    pub bytes: Vec<u8>,
}

/// `<sessions_dir>/skills-prompts/sha256/<hash[0..2]>/<hash>.txt` (the hash is not checked
/// here; see [`is_sha256_hex`]).
pub fn blob_path(sessions_dir: &Path, hash_hex: &str) -> PathBuf {
    let prefix: String = hash_hex.chars().take(2).collect();
    sessions_dir
        .join("skills-prompts")
        .join("sha256")
        .join(prefix)
        .join(format!("{hash_hex}.txt"))
}

/// A blob's path as a [`DataPath`] below its sessions directory: the directories on the way
/// (`skills-prompts/sha256/<xx>`) are never followed through a link.
pub fn blob_data_path(path: &Path) -> Option<DataPath> {
    let root = path.ancestors().nth(4)?;
    DataPath::beneath(root, path.strip_prefix(root).ok()?).ok()
}

/// The bytes of the blob file at `path` when it is a regular file reached without a link.
pub fn read_blob_file(path: &Path) -> Option<Vec<u8>> {
    blob_data_path(path)?
        .read_small(MAX_PROMPT_BLOB_BYTES as u64, "a skill-prompt blob")
        .ok()
}

/// Whether `s` is 64 lower-case hex digits.
pub fn is_sha256_hex(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

fn sha256_hex(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut out = String::with_capacity(64);
    for b in digest {
        out.push_str(&format!("{b:02x}"));
    }
    out
}

/// A parsed `promptRef` (`parsePromptRef`): `version` 1, `algorithm` "sha256", a string
/// `hash` and a numeric `bytes`.
struct PromptRef<'a> {
    hash: &'a str,
    bytes: f64,
}

fn parse_prompt_ref(v: Option<&Value>) -> Option<PromptRef<'_>> {
    let Some(Value::Object(r)) = v else {
        return None;
    };
    let version_ok = r.get("version").and_then(Value::as_f64) == Some(1.0);
    let algorithm_ok = r.get("algorithm").and_then(Value::as_str) == Some("sha256");
    let hash = r.get("hash").and_then(Value::as_str)?;
    let bytes = r.get("bytes").and_then(Value::as_f64)?;
    (version_ok && algorithm_ok).then_some(PromptRef { hash, bytes })
}

/// `readValidPromptBlob`: the blob's text when it exists as a regular file of exactly
/// `bytes` bytes whose (UTF-8 decoded) content hashes to `hash`.
fn read_valid_blob(sessions_dir: &Path, r: &PromptRef<'_>) -> Option<String> {
    if !is_sha256_hex(r.hash)
        || !r.bytes.is_finite()
        || r.bytes < 0.0
        || r.bytes > MAX_PROMPT_BLOB_BYTES as f64
    {
        return None;
    }
    let path = blob_data_path(&blob_path(sessions_dir, r.hash))?;
    let file = path.open_read().ok()?;
    if file.size() as f64 != r.bytes {
        return None;
    }
    let raw = file.read_to_end().ok()?;
    // Node decodes with U+FFFD replacement (maximal subparts), as from_utf8_lossy does.
    let text = String::from_utf8_lossy(&raw).into_owned();
    (sha256_hex(text.as_bytes()) == r.hash && text.len() as f64 == r.bytes).then_some(text)
}

/// The blobs one load already read and verified, by (hash, bytes): entries of a store
/// mostly share a handful of skill prompts, so each blob is read and hashed once.
#[derive(Debug, Default)]
pub struct BlobCache {
    texts: std::collections::HashMap<(String, u64), Option<String>>,
    /// Per blob: whether a load and a save give its `promptRef` back unchanged.
    round_trips: std::collections::HashMap<(String, u64), bool>,
}

impl BlobCache {
    fn get(&mut self, sessions_dir: &Path, r: &PromptRef<'_>) -> &Option<String> {
        let key = (r.hash.to_string(), r.bytes.to_bits());
        self.texts
            .entry(key)
            .or_insert_with(|| read_valid_blob(sessions_dir, r))
    }

    fn read(&mut self, sessions_dir: &Path, r: &PromptRef<'_>) -> Option<String> {
        self.get(sessions_dir, r).clone()
    }

    /// The text of the valid blob `hash` of `bytes` bytes (see [`hydrate_entry`]).
    pub fn text(&mut self, sessions_dir: &Path, hash: &str, bytes: u64) -> Option<String> {
        self.read(
            sessions_dir,
            &PromptRef {
                hash,
                bytes: bytes as f64,
            },
        )
    }

    /// Whether a snapshot whose last key is the canonical `promptRef` of this blob
    /// (`{version: 1, algorithm: "sha256", hash, bytes}`) comes back byte for byte from a
    /// load and a save: the blob is valid, not empty, and its prompt is stored as a blob
    /// again (hydration puts the prompt last, projection puts this same `promptRef` last).
    pub fn round_trips(&mut self, sessions_dir: &Path, hash: &str, bytes: u64) -> bool {
        let key = (hash.to_string(), (bytes as f64).to_bits());
        if let Some(&known) = self.round_trips.get(&key) {
            return known;
        }
        let r = PromptRef {
            hash,
            bytes: bytes as f64,
        };
        let verdict = self
            .get(sessions_dir, &r)
            .as_deref()
            .is_some_and(|t| !t.is_empty() && should_store_as_blob(t));
        self.round_trips.insert(key, verdict);
        verdict
    }
}

/// Load-time hydration of one entry (`hydrateSessionStoreSkillPromptRefs`): when
/// `skillsSnapshot` is present (truthy) without a string `prompt`, restore the prompt from
/// a valid `promptRef` blob (`promptRef` removed, `prompt` last, or in place if a non-string
/// `prompt` key was there), else delete `skillsSnapshot`. Returns whether the entry changed.
pub fn hydrate_entry(entry: &mut Map<String, Value>, sessions_dir: &Path) -> bool {
    hydrate_entry_cached(entry, sessions_dir, &mut BlobCache::default())
}

/// [`hydrate_entry`] with the blobs read through `cache` (one load of one store).
pub fn hydrate_entry_cached<M: EntryFields>(
    entry: &mut M,
    sessions_dir: &Path,
    cache: &mut BlobCache,
) -> bool {
    let snapshot = entry.get("skillsSnapshot");
    if !snapshot.is_some_and(js::truthy) {
        return false;
    }
    let snapshot = snapshot.unwrap_or(&Value::Null);
    if matches!(snapshot.get("prompt"), Some(Value::String(_))) {
        return false;
    }
    let prompt = match snapshot {
        Value::Object(s) => {
            parse_prompt_ref(s.get("promptRef")).and_then(|r| cache.read(sessions_dir, &r))
        }
        _ => None,
    };
    match prompt {
        Some(prompt) if !prompt.is_empty() => {
            if let Some(Value::Object(s)) = entry.get_mut("skillsSnapshot") {
                s.shift_remove("promptRef");
                js_set(s, "prompt", Value::String(prompt));
            }
        }
        _ => {
            entry.shift_remove("skillsSnapshot");
        }
    }
    true
}

/// Whether a prompt is stored as a blob: at least 512 UTF-16 units, at most 512 KiB UTF-8.
pub fn should_store_as_blob(prompt: &str) -> bool {
    prompt.len() <= MAX_PROMPT_BLOB_BYTES && js::utf16_len(prompt) >= MIN_PROMPT_BLOB_CHARS
}

/// The persisted form of one entry (`projectSessionStoreForPersistence`): when its
/// `skillsSnapshot.prompt` qualifies, a copy whose snapshot has `prompt` removed and
/// `promptRef: {version, algorithm, hash, bytes}` set (last key, or in place of a stale
/// `promptRef`), plus the blob to write. `(None, [])` when the entry is persisted as is.
pub fn project_for_persistence<M: EntryFields + Clone>(
    entry: &M,
    sessions_dir: &Path,
) -> (Option<M>, Vec<PromptBlob>) {
    let Some(Value::Object(snapshot)) = entry.get("skillsSnapshot") else {
        return (None, Vec::new());
    };
    let Some(Value::String(prompt)) = snapshot.get("prompt") else {
        return (None, Vec::new());
    };
    if prompt.is_empty() || !should_store_as_blob(prompt) {
        return (None, Vec::new());
    }
    let hash = sha256_hex(prompt.as_bytes());
    let mut prompt_ref = Map::new();
    prompt_ref.insert("version".into(), Value::from(1));
    prompt_ref.insert("algorithm".into(), Value::from("sha256"));
    prompt_ref.insert("hash".into(), Value::from(hash.clone()));
    prompt_ref.insert("bytes".into(), Value::from(prompt.len() as u64));
    let mut new_snapshot = snapshot.clone();
    new_snapshot.shift_remove("prompt");
    js_set(&mut new_snapshot, "promptRef", Value::Object(prompt_ref));
    let mut projected = entry.clone();
    js_set(
        &mut projected,
        "skillsSnapshot",
        Value::Object(new_snapshot),
    );
    let blob = PromptBlob {
        path: blob_path(sessions_dir, &hash),
        bytes: prompt.as_bytes().to_vec(),
    };
    (Some(projected), vec![blob])
}

/// Writes a blob: when the file already holds exactly these bytes only its times are set to
/// now (as the gateway does); otherwise it is written atomically — temp
/// `<hash>.txt.<pid>.<uuid>.tmp` in the same directory (created as needed), mode 0600,
/// fsync'd, renamed over the target, directory fsync'd.
///
/// The blob's directories are created and reached below the sessions directory without
/// following a link (a planted `skills-prompts` link to elsewhere is refused).
pub fn write_blob(blob: &PromptBlob) -> io::Result<()> {
    let refused = |e: crate::fs::data_file::DataFileError| io::Error::other(e.to_string());
    let data =
        blob_data_path(&blob.path).ok_or_else(|| io::Error::from(io::ErrorKind::InvalidInput))?;
    if read_blob_file(&blob.path).is_some_and(|existing| existing == blob.bytes)
        && touch(&blob.path).is_ok()
    {
        return Ok(());
    }
    data.create_parent(0o700).map_err(refused)?;
    crate::fs::atomic_file::replace_data_file(&data, &blob.bytes, 0o600)
        .map_err(|e| io::Error::other(e.to_string()))
}

/// Sets a file's access and modification times to now.
fn touch(path: &Path) -> io::Result<()> {
    use rustix::fs::{Timespec, Timestamps, UTIME_NOW};
    // Both times `UTIME_NOW`: "now", with the permission rules of a null `times`. A link
    // is never followed (its own times would be set; the caller read a file).
    let now = Timespec {
        tv_sec: 0,
        tv_nsec: UTIME_NOW,
    };
    let times = Timestamps {
        last_access: now,
        last_modification: now,
    };
    rustix::fs::utimensat(
        rustix::fs::CWD,
        path,
        &times,
        rustix::fs::AtFlags::SYMLINK_NOFOLLOW,
    )
    .map_err(io::Error::from)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::os::unix::fs::PermissionsExt;

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    /// E18: a 600-char prompt becomes a blob and `promptRef` (last key of the snapshot); a
    /// short prompt stays inline; the blob hydrates back; a dangling ref drops the snapshot.
    #[test]
    fn e18_prompt_blobs() {
        let dir = tempfile::tempdir().unwrap();
        let prompt = "x".repeat(600);
        let entry = obj(json!({
            "sessionId": "a",
            "skillsSnapshot": {"prompt": prompt, "skills": [{"name": "s"}], "version": 2},
            "updatedAt": 1
        }));
        let (projected, blobs) = project_for_persistence(&entry, dir.path());
        let projected = projected.unwrap();
        let hash = sha256_hex(prompt.as_bytes());
        assert_eq!(blobs.len(), 1);
        assert_eq!(blobs[0].path, blob_path(dir.path(), &hash));
        assert!(blobs[0]
            .path
            .ends_with(format!("skills-prompts/sha256/{}/{hash}.txt", &hash[..2])));
        assert_eq!(
            serde_json::to_string(&Value::Object(projected.clone())).unwrap(),
            format!(
                r#"{{"sessionId":"a","skillsSnapshot":{{"skills":[{{"name":"s"}}],"version":2,"promptRef":{{"version":1,"algorithm":"sha256","hash":"{hash}","bytes":600}}}},"updatedAt":1}}"#
            )
        );
        write_blob(&blobs[0]).unwrap();
        let meta = std::fs::metadata(&blobs[0].path).unwrap();
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);
        assert_eq!(meta.len(), 600);
        // rewriting an identical blob only touches it
        write_blob(&blobs[0]).unwrap();
        assert_eq!(
            std::fs::read_dir(blobs[0].path.parent().unwrap())
                .unwrap()
                .count(),
            1
        );

        let mut loaded = projected;
        assert!(hydrate_entry(&mut loaded, dir.path()));
        assert_eq!(
            serde_json::to_string(&Value::Object(loaded)).unwrap(),
            format!(
                r#"{{"sessionId":"a","skillsSnapshot":{{"skills":[{{"name":"s"}}],"version":2,"prompt":"{prompt}"}},"updatedAt":1}}"#
            )
        );

        let short = obj(json!({"skillsSnapshot": {"prompt": "hello"}}));
        assert_eq!(project_for_persistence(&short, dir.path()), (None, vec![]));
        let mut short2 = short.clone();
        assert!(!hydrate_entry(&mut short2, dir.path()));

        let mut dangling = obj(json!({"a": 1, "skillsSnapshot": {"promptRef":
            {"version": 1, "algorithm": "sha256", "hash": "0".repeat(64), "bytes": 600}}, "b": 2}));
        assert!(hydrate_entry(&mut dangling, dir.path()));
        assert_eq!(
            serde_json::to_string(&Value::Object(dangling)).unwrap(),
            r#"{"a":1,"b":2}"#
        );

        // a wrong size or corrupted content is not valid either
        let mut wrong = obj(json!({"skillsSnapshot": {"promptRef":
            {"version": 1, "algorithm": "sha256", "hash": hash, "bytes": 599}}}));
        assert!(hydrate_entry(&mut wrong, dir.path()));
        assert!(!wrong.contains_key("skillsSnapshot"));
        // a falsy snapshot is left alone
        let mut falsy = obj(json!({"skillsSnapshot": null}));
        assert!(!hydrate_entry(&mut falsy, dir.path()));
        assert!(falsy.contains_key("skillsSnapshot"));
    }

    #[test]
    fn blob_thresholds() {
        assert!(!should_store_as_blob(&"x".repeat(511)));
        assert!(should_store_as_blob(&"x".repeat(512)));
        // 300 astral characters are 600 UTF-16 units
        assert!(should_store_as_blob(&"😀".repeat(300)));
        assert!(!should_store_as_blob(&"é".repeat(300)));
        assert!(should_store_as_blob(&"x".repeat(MAX_PROMPT_BLOB_BYTES)));
        assert!(!should_store_as_blob(
            &"x".repeat(MAX_PROMPT_BLOB_BYTES + 1)
        ));
    }

    #[test]
    fn stale_prompt_ref_is_replaced_in_place() {
        let dir = tempfile::tempdir().unwrap();
        let entry =
            obj(json!({"skillsSnapshot": {"promptRef": 1, "prompt": "y".repeat(512), "z": 0}}));
        let (p, _) = project_for_persistence(&entry, dir.path());
        let snap = p.unwrap()["skillsSnapshot"].as_object().unwrap().clone();
        assert_eq!(snap.keys().cloned().collect::<Vec<_>>(), ["promptRef", "z"]);
    }
}
