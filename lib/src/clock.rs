//! The clock: `--now` parsing and the gateway's timestamp text forms.

use chrono::{DateTime, Utc};
use thiserror::Error;

/// JavaScript's `new Date(ms).toISOString()`: `2026-11-29T21:55:15.244Z`.
pub use crate::js::to_iso_string as iso_ms;

/// A `--now` (or other timestamp) value that is neither epoch milliseconds nor ISO-8601.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("invalid time {input:?}: expected epoch milliseconds or an ISO-8601 timestamp")]
pub struct ClockError {
    /// The text that was given.
    pub input: String,
}

/// Milliseconds since the Unix epoch, now, from the system clock.
pub fn system_now_ms() -> i64 {
    Utc::now().timestamp_millis()
}

/// Parses epoch milliseconds (`1764451200000`) or an ISO-8601 / RFC 3339 timestamp.
pub fn parse_time_ms(input: &str) -> Result<i64, ClockError> {
    let s = input.trim();
    let err = || ClockError {
        input: input.to_string(),
    };
    if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
        return s.parse::<i64>().map_err(|_| err());
    }
    if let Ok(t) = DateTime::parse_from_rfc3339(s) {
        return Ok(t.timestamp_millis());
    }
    // Accept a date-time without zone as UTC, and a bare date.
    for fmt in [
        "%Y-%m-%dT%H:%M:%S%.f",
        "%Y-%m-%d %H:%M:%S%.f",
        "%Y-%m-%dT%H:%M",
    ] {
        if let Ok(t) = chrono::NaiveDateTime::parse_from_str(s, fmt) {
            return Ok(t.and_utc().timestamp_millis());
        }
    }
    if let Ok(d) = chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d") {
        return Ok(d
            .and_hms_opt(0, 0, 0)
            .ok_or_else(err)?
            .and_utc()
            .timestamp_millis());
    }
    Err(err())
}

/// The archive timestamp of a file name: the ISO form with every `:` turned into `-`.
pub fn archive_timestamp(ms: i64) -> String {
    iso_ms(ms).replace(':', "-")
}

/// Parses an archive timestamp (`YYYY-MM-DDTHH-MM-SS[.mmm]Z`) back into epoch ms.
pub fn parse_archive_timestamp(ts: &str) -> Option<i64> {
    let b = ts.as_bytes();
    let shape_ok = |b: &[u8]| -> bool {
        // YYYY-MM-DDTHH-MM-SS
        b.len() >= 19
            && b[..4].iter().all(u8::is_ascii_digit)
            && b[4] == b'-'
            && b[5..7].iter().all(u8::is_ascii_digit)
            && b[7] == b'-'
            && b[8..10].iter().all(u8::is_ascii_digit)
            && b[10] == b'T'
            && b[11..13].iter().all(u8::is_ascii_digit)
            && b[13] == b'-'
            && b[14..16].iter().all(u8::is_ascii_digit)
            && b[16] == b'-'
            && b[17..19].iter().all(u8::is_ascii_digit)
    };
    if !shape_ok(b) {
        return None;
    }
    let tail = &ts[19..];
    let ok_tail = tail == "Z"
        || (tail.len() == 5
            && tail.starts_with('.')
            && tail[1..4].bytes().all(|c| c.is_ascii_digit())
            && tail.ends_with('Z'));
    if !ok_tail {
        return None;
    }
    let iso = format!(
        "{}T{}:{}:{}{}",
        &ts[..10],
        &ts[11..13],
        &ts[14..16],
        &ts[17..19],
        tail
    );
    DateTime::parse_from_rfc3339(&iso)
        .ok()
        .map(|t| t.timestamp_millis())
}

/// Whether an archive timestamp has the right shape, whatever its date (the disk budget
/// classifies by shape alone).
pub fn is_archive_timestamp_shape(ts: &str) -> bool {
    let b = ts.as_bytes();
    let digits =
        |r: std::ops::Range<usize>| b.get(r).is_some_and(|s| s.iter().all(u8::is_ascii_digit));
    let at = |i: usize, c: u8| b.get(i) == Some(&c);
    let base = digits(0..4)
        && at(4, b'-')
        && digits(5..7)
        && at(7, b'-')
        && digits(8..10)
        && at(10, b'T')
        && digits(11..13)
        && at(13, b'-')
        && digits(14..16)
        && at(16, b'-')
        && digits(17..19);
    base && (&ts[19..] == "Z" || (b.len() == 24 && at(19, b'.') && digits(20..23) && at(23, b'Z')))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_both_forms() {
        assert_eq!(parse_time_ms("1764451200000"), Ok(1_764_451_200_000));
        assert_eq!(parse_time_ms("2025-11-29T21:20:00Z"), Ok(1_764_451_200_000));
        assert_eq!(
            parse_time_ms("2025-11-29T22:20:00+01:00"),
            Ok(1_764_451_200_000)
        );
        assert!(parse_time_ms("yesterday").is_err());
    }

    #[test]
    fn iso_and_archive_forms() {
        assert_eq!(iso_ms(1_764_451_200_123), "2025-11-29T21:20:00.123Z");
        assert_eq!(
            archive_timestamp(1_764_451_200_123),
            "2025-11-29T21-20-00.123Z"
        );
        assert_eq!(
            parse_archive_timestamp("2025-11-29T21-20-00.123Z"),
            Some(1_764_451_200_123)
        );
        assert_eq!(
            parse_archive_timestamp("2020-01-01T00-00-00Z"),
            Some(1_577_836_800_000)
        );
        assert_eq!(parse_archive_timestamp("2026-13-45T99-99-99.000Z"), None);
        assert!(is_archive_timestamp_shape("2026-13-45T99-99-99.000Z"));
        assert!(!is_archive_timestamp_shape("garbage"));
    }
}
