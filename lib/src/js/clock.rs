//! The clock: `--now` parsing and the gateway's timestamp text forms.

use chrono::{DateTime, Utc};
use thiserror::Error;

use crate::js;

/// A `--now` (or other timestamp) value that is not a time clawstate can use.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ClockError {
    /// Neither epoch milliseconds nor ISO-8601.
    #[error("invalid time {input:?}: expected epoch milliseconds or an ISO-8601 timestamp")]
    Invalid {
        /// The text that was given.
        input: String,
    },
    /// A time no JavaScript `Date` can hold, so the gateway could never have written or
    /// read it (every timestamp and archive name would be `Invalid Date`).
    #[error("time {input:?} is outside the JavaScript date range (at most 8.64e15 ms either side of 1970-01-01, i.e. -271821-04-20 to +275760-09-13)")]
    OutOfRange {
        /// The text that was given.
        input: String,
    },
}

/// Milliseconds since the Unix epoch, now, from the system clock.
pub fn system_now_ms() -> i64 {
    Utc::now().timestamp_millis()
}

/// Parses epoch milliseconds (`1764451200000`) or an ISO-8601 / RFC 3339 timestamp, within
/// JavaScript's date range (`|ms| <= 8.64e15`, [`crate::js::MAX_TIME_MS`]).
pub fn parse_time_ms(input: &str) -> Result<i64, ClockError> {
    let out_of_range = || ClockError::OutOfRange {
        input: input.to_string(),
    };
    match parse_unchecked(input) {
        Ok(ms) if ms.unsigned_abs() <= crate::js::MAX_TIME_MS.unsigned_abs() => Ok(ms),
        Ok(_) => Err(out_of_range()),
        Err(_) if beyond_js_years(input.trim()) => Err(out_of_range()),
        Err(e) => Err(e),
    }
}

/// Whether `s`, which did not parse, is digits too many for an `i64`, or an ISO date with
/// an expanded year at or beyond the ends of the JavaScript range (`+275760-09-13T00:00:00.001Z`).
fn beyond_js_years(s: &str) -> bool {
    let b = s.as_bytes();
    if !b.is_empty() && b.iter().all(u8::is_ascii_digit) {
        return true;
    }
    let (sign, rest) = match b.first() {
        Some(c @ (b'+' | b'-')) => (*c, &s[1..]),
        _ => return false,
    };
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    if digits.len() < 6
        || rest[digits.len()..]
            .chars()
            .next()
            .is_some_and(|c| c != '-' && c != 'T')
    {
        return false;
    }
    let year: u64 = digits.parse().unwrap_or(u64::MAX);
    if sign == b'+' {
        year >= 275_760
    } else {
        year >= 271_821
    }
}

/// [`parse_time_ms`] without the range check.
fn parse_unchecked(input: &str) -> Result<i64, ClockError> {
    let s = input.trim();
    let err = || ClockError::Invalid {
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
    // Expanded years (`+275760-09-13T00:00:00Z`) as JavaScript reads them, to its limits.
    if s.starts_with(['+', '-']) {
        if let Some(ms) = crate::js::date_parse_in(s, &Utc) {
            return Ok(ms);
        }
    }
    Err(err())
}

/// The archive timestamp of a file name: the ISO form with every `:` turned into `-`.
pub fn archive_timestamp(ms: i64) -> String {
    js::to_iso_string(ms).replace(':', "-")
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
    fn times_beyond_javascript_dates_are_out_of_range() {
        assert_eq!(parse_time_ms("8640000000000000"), Ok(8_640_000_000_000_000));
        for bad in [
            "8640000000000001",
            "9000000000000000",
            "99999999999999999999",
            "+275761-01-01T00:00:00Z",
            "+275760-09-13T00:00:00.001Z",
            "-271822-01-01",
        ] {
            assert!(
                matches!(parse_time_ms(bad), Err(ClockError::OutOfRange { .. })),
                "{bad}: {:?}",
                parse_time_ms(bad)
            );
        }
        assert_eq!(
            parse_time_ms("+275760-09-13T00:00:00.000Z"),
            Ok(8_640_000_000_000_000)
        );
        assert_eq!(parse_time_ms("+002026-01-01"), parse_time_ms("2026-01-01"));
        assert!(matches!(
            parse_time_ms("9e15"),
            Err(ClockError::Invalid { .. })
        ));
    }

    #[test]
    fn iso_and_archive_forms() {
        assert_eq!(
            js::to_iso_string(1_764_451_200_123),
            "2025-11-29T21:20:00.123Z"
        );
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
