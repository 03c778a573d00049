//! The file-name grammar of a sessions directory (`store.md` §1.4): archives, checkpoints,
//! trajectory sidecars, primary transcripts and store temp files.

use std::path::{Path, PathBuf};

use crate::js::clock::{archive_timestamp, is_archive_timestamp_shape, parse_archive_timestamp};

/// Why a transcript was archived; the reason marker in `<name>.<reason>.<ts>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArchiveReason {
    /// `sessions.reset` or a daily/idle rotation.
    Reset,
    /// Entry deletion or maintenance pruning.
    Deleted,
    /// Manual compaction backup.
    Bak,
}

impl ArchiveReason {
    /// The marker text (`reset`, `deleted`, `bak`).
    pub fn as_str(self) -> &'static str {
        match self {
            ArchiveReason::Reset => "reset",
            ArchiveReason::Deleted => "deleted",
            ArchiveReason::Bak => "bak",
        }
    }
}

fn archive_suffix(name: &str, reason: ArchiveReason) -> Option<&str> {
    let marker = format!(".{}.", reason.as_str());
    let i = name.rfind(&marker)?;
    Some(&name[i + marker.len()..])
}

/// Whether `name` ends in `.<reason>.<ts>` with a timestamp of the right shape.
pub fn has_archive_suffix(name: &str, reason: ArchiveReason) -> bool {
    archive_suffix(name, reason).is_some_and(is_archive_timestamp_shape)
}

/// What a `.deleted.<ts>` or `.reset.<ts>` archive name was archived from: the original
/// file name, the reason, and the archive time (epoch ms) when its timestamp parses.
pub fn archived_from(name: &str) -> Option<(&str, ArchiveReason, Option<i64>)> {
    [ArchiveReason::Deleted, ArchiveReason::Reset]
        .into_iter()
        .filter(|&r| has_archive_suffix(name, r))
        .find_map(|r| {
            let marker = format!(".{}.", r.as_str());
            let original = &name[..name.rfind(&marker)?];
            (!original.is_empty()).then(|| (original, r, archive_time(name, r)))
        })
}

/// The archive time (epoch ms) in `name` for `reason`, when the timestamp parses.
pub fn archive_time(name: &str, reason: ArchiveReason) -> Option<i64> {
    archive_suffix(name, reason)
        .filter(|s| is_archive_timestamp_shape(s))
        .and_then(parse_archive_timestamp)
}

fn is_legacy_store_backup(name: &str) -> bool {
    name.strip_prefix("sessions.json.bak.")
        .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
}

/// Archived transcripts (`.deleted/.reset/.bak.<ts>`) and legacy `sessions.json.bak.<n>`.
pub fn is_archive_artifact(name: &str) -> bool {
    is_legacy_store_backup(name)
        || [
            ArchiveReason::Deleted,
            ArchiveReason::Reset,
            ArchiveReason::Bak,
        ]
        .iter()
        .any(|r| has_archive_suffix(name, *r))
}

/// Whether `s` is a UUID (8-4-4-4-12 hex, any version).
pub fn is_uuid(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 36
        && b.iter().enumerate().all(|(i, &c)| match i {
            8 | 13 | 18 | 23 => c == b'-',
            _ => c.is_ascii_hexdigit(),
        })
}

fn is_rfc4122_uuid(s: &str) -> bool {
    is_uuid(s) && {
        let b = s.as_bytes();
        matches!(b[14], b'1'..=b'5')
            && matches!(b[19].to_ascii_lowercase(), b'8' | b'9' | b'a' | b'b')
    }
}

/// Splits `<sessionId>.checkpoint.<uuid>.jsonl` into its session and checkpoint ids.
pub fn parse_checkpoint_name(name: &str) -> Option<(&str, &str)> {
    // Suffixes are matched on bytes, and split only where they are ASCII: a name may
    // hold multi-byte characters anywhere (`str::get` is `None` off a char boundary).
    let ends_with_ci = |s: &str, suffix: &str| {
        s.len() >= suffix.len()
            && s.as_bytes()[s.len() - suffix.len()..].eq_ignore_ascii_case(suffix.as_bytes())
    };
    let stem = name.get(..name.len().checked_sub(6)?)?;
    if !ends_with_ci(name, ".jsonl") || stem.len() < 36 + 12 {
        return None;
    }
    let (head, uuid) = (stem.get(..stem.len() - 36)?, stem.get(stem.len() - 36..)?);
    if !ends_with_ci(head, ".checkpoint.") {
        return None;
    }
    let session = head.get(..head.len() - 12)?;
    (!session.is_empty() && is_rfc4122_uuid(uuid)).then_some((session, uuid))
}

/// Compaction checkpoint transcripts (legacy).
pub fn is_checkpoint_name(name: &str) -> bool {
    parse_checkpoint_name(name).is_some()
}

/// Trajectory runtime files and pointer sidecars.
pub fn is_trajectory_artifact(name: &str) -> bool {
    name.ends_with(".trajectory.jsonl") || name.ends_with(".trajectory-path.json")
}

/// Live transcripts: `.jsonl` files that are not the store, a trajectory, a checkpoint or
/// an archive.
pub fn is_primary_transcript(name: &str) -> bool {
    name != "sessions.json"
        && name.ends_with(".jsonl")
        && !name.ends_with(".trajectory.jsonl")
        && !is_checkpoint_name(name)
        && !is_archive_artifact(name)
}

/// Store temp files: `<store basename>.[<pid>.]<uuid>.tmp` (case-insensitive).
pub fn is_store_temp(name: &str, store_basename: &str) -> bool {
    // On bytes: every part matched is ASCII, but a name may hold any character.
    let (name, base) = (name.as_bytes(), store_basename.as_bytes());
    if base.is_empty() || name.len() < base.len() + 1 + 36 + 4 {
        return false;
    }
    let (head, rest) = name.split_at(base.len());
    if !head.eq_ignore_ascii_case(base) || rest[0] != b'.' {
        return false;
    }
    let rest = &rest[1..];
    let (body, tail) = rest.split_at(rest.len() - 4);
    if !tail.eq_ignore_ascii_case(b".tmp") || body.len() < 36 {
        return false;
    }
    let (pid, uuid) = body.split_at(body.len() - 36);
    if !std::str::from_utf8(uuid).is_ok_and(is_uuid) {
        return false;
    }
    pid.is_empty()
        || (pid.len() > 1
            && pid[pid.len() - 1] == b'.'
            && pid[..pid.len() - 1].iter().all(u8::is_ascii_digit))
}

/// The archive path for `file` at `now_ms`: `<file name>.<reason>.<ts>` beside it.
pub fn archive_path(file: &Path, reason: ArchiveReason, now_ms: i64) -> PathBuf {
    archive_path_with(file, &archive_name_suffix(reason, now_ms))
}

/// What an archive name adds to the file name: `.<reason>.<ts>`.
pub fn archive_name_suffix(reason: ArchiveReason, now_ms: i64) -> String {
    format!(".{}.{}", reason.as_str(), archive_timestamp(now_ms))
}

/// The archive path for `file` with the name suffix `suffix` ([`archive_name_suffix`]).
pub fn archive_path_with(file: &Path, suffix: &str) -> PathBuf {
    // A clean absolute path ends with its file name: the suffix goes after its bytes.
    if crate::fs::clean_path::is_clean_absolute(file) && file.as_os_str().len() > 1 {
        let mut out = std::ffi::OsString::with_capacity(file.as_os_str().len() + suffix.len());
        out.push(file.as_os_str());
        out.push(suffix);
        return PathBuf::from(out);
    }
    archive_path_by_name(file, suffix)
}

/// [`archive_path_with`] for any path: the suffix added to its file name.
fn archive_path_by_name(file: &Path, suffix: &str) -> PathBuf {
    let mut name = file
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_default();
    name.push(suffix);
    file.with_file_name(name)
}

/// The trajectory sidecars of a transcript: (runtime `.trajectory.jsonl`, pointer
/// `.trajectory-path.json`).
pub fn trajectory_sidecars(transcript: &Path) -> (PathBuf, PathBuf) {
    let s = transcript.to_string_lossy();
    let base = s.strip_suffix(".jsonl").unwrap_or(&s);
    (
        PathBuf::from(format!("{base}.trajectory.jsonl")),
        PathBuf::from(format!("{base}.trajectory-path.json")),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bytes road of a clean absolute path gives what the file-name road gives.
    #[test]
    fn archive_paths_alike_on_both_roads() {
        let suffix = ".deleted.2026-01-01T00-00-00.000Z";
        for p in ["/s/a.jsonl", "/a", "/s/sub/é.jsonl", "/s/a.jsonl.reset.x"] {
            let p = Path::new(p);
            assert_eq!(
                archive_path_with(p, suffix),
                archive_path_by_name(p, suffix)
            );
        }
        // Paths off the bytes road still get the suffix on their file name.
        assert_eq!(
            archive_path_with(Path::new("s/./a.jsonl"), suffix),
            Path::new("s/./a.jsonl").with_file_name(format!("a.jsonl{suffix}"))
        );
    }

    #[test]
    fn archive_names() {
        assert!(is_archive_artifact(
            "a.jsonl.reset.2020-01-01T00-00-00.000Z"
        ));
        assert!(is_archive_artifact("a.jsonl.deleted.2020-01-01T00-00-00Z"));
        assert!(is_archive_artifact("sessions.json.bak.123"));
        assert!(is_archive_artifact(
            "x.jsonl.reset.2026-13-45T99-99-99.000Z"
        ));
        assert!(!is_archive_artifact("a.jsonl.reset.garbage"));
        assert_eq!(
            archive_time(
                "x.jsonl.reset.2026-13-45T99-99-99.000Z",
                ArchiveReason::Reset
            ),
            None
        );
        assert_eq!(
            archive_time(
                "a.jsonl.deleted.2020-01-01T00-00-00Z",
                ArchiveReason::Deleted
            ),
            Some(1_577_836_800_000)
        );
        assert_eq!(
            archive_path(
                Path::new("/d/a.jsonl"),
                ArchiveReason::Reset,
                1_764_451_200_123
            ),
            PathBuf::from("/d/a.jsonl.reset.2025-11-29T21-20-00.123Z")
        );
    }

    #[test]
    fn checkpoint_and_primary() {
        let cp = "abc.checkpoint.123e4567-e89b-42d3-a456-426614174000.jsonl";
        assert_eq!(
            parse_checkpoint_name(cp),
            Some(("abc", "123e4567-e89b-42d3-a456-426614174000"))
        );
        assert!(!is_checkpoint_name(
            "abc.checkpoint.123e4567-e89b-72d3-a456-426614174000.jsonl"
        ));
        assert!(!is_primary_transcript(cp));
        assert!(is_primary_transcript("abc.jsonl"));
        assert!(!is_primary_transcript("abc.trajectory.jsonl"));
        assert!(!is_primary_transcript("sessions.json"));
        assert!(is_primary_transcript(
            "f.corrupt-2026-01-01T00-00-00-000Z-deadbeef.jsonl"
        ));
    }

    #[test]
    fn store_temps() {
        assert!(is_store_temp(
            "sessions.json.999.123e4567-e89b-42d3-a456-426614174000.tmp",
            "sessions.json"
        ));
        assert!(is_store_temp(
            "SESSIONS.json.123E4567-e89b-42d3-a456-426614174000.TMP",
            "sessions.json"
        ));
        assert!(!is_store_temp(
            "sessions.json.x.123e4567-e89b-42d3-a456-426614174000.tmp",
            "sessions.json"
        ));
        assert!(!is_store_temp(
            "other.json.1.123e4567-e89b-42d3-a456-426614174000.tmp",
            "sessions.json"
        ));
    }

    /// Names with multi-byte characters where a suffix or a UUID would be cut are
    /// matched on bytes (they once panicked: "not a char boundary").
    #[test]
    fn names_with_multibyte_characters_never_panic() {
        let u = "123e4567-e89b-42d3-a456-426614174000";
        let names = [
            format!("\u{feff}\u{feff}{}", &u[..9]),
            format!("\u{feff}.checkpoint.{u}.jsonl"),
            format!("é{}.jsonl", "é".repeat(30)),
            format!("sessions.json.é{}.tmp", "é".repeat(20)),
            format!("sessions.jsoné{u}.tmp"),
            format!("sessions.json.{u}.tmé"),
            "é".repeat(60),
        ];
        for n in &names {
            let _ = parse_checkpoint_name(n);
            let _ = is_store_temp(n, "sessions.json");
            let _ = is_store_temp(n, "sessions.jsoné");
        }
        assert_eq!(
            parse_checkpoint_name(&format!("\u{feff}.checkpoint.{u}.jsonl")),
            Some(("\u{feff}", u))
        );
        assert!(!is_store_temp(
            &format!("sessions.jsoné{u}.tmp"),
            "sessions.json"
        ));
        assert!(is_store_temp(
            &format!("sessions.jsoné.{u}.tmp"),
            "sessions.jsoné"
        ));
    }
}
