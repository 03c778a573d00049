//! The gateway's duration grammar (`parseDurationMs`): `500ms`, `30s`, `5m`, `2h`, `1h30m`, `7` (default unit).

use thiserror::Error;

/// A duration string that does not follow the grammar.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{message}")]
pub struct DurationError {
    /// The peer's own message, e.g. `Invalid duration: "abc". Use values like …`.
    pub message: String,
}

/// A unit of the duration grammar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DurationUnit {
    /// Milliseconds (`ms`).
    Millis,
    /// Seconds (`s`).
    Seconds,
    /// Minutes (`m`).
    Minutes,
    /// Hours (`h`).
    Hours,
    /// Days (`d`).
    Days,
}

impl DurationUnit {
    fn millis(self) -> f64 {
        match self {
            DurationUnit::Millis => 1.0,
            DurationUnit::Seconds => 1e3,
            DurationUnit::Minutes => 6e4,
            DurationUnit::Hours => 36e5,
            DurationUnit::Days => 864e5,
        }
    }

    fn from_suffix(s: &str) -> Option<Self> {
        Some(match s {
            "ms" => DurationUnit::Millis,
            "s" => DurationUnit::Seconds,
            "m" => DurationUnit::Minutes,
            "h" => DurationUnit::Hours,
            "d" => DurationUnit::Days,
            _ => return None,
        })
    }
}

fn invalid(raw: &str, reason: Option<&str>) -> DurationError {
    let value = if raw.trim().is_empty() {
        "empty value".to_string()
    } else {
        format!("\"{raw}\"")
    };
    let prefix = match reason {
        Some(r) => format!("Invalid duration ({r}): {value}."),
        None => format!("Invalid duration: {value}."),
    };
    DurationError {
        message: format!("{prefix} Use values like 500ms, 30s, 5m, 2h, or 1h30m."),
    }
}

/// Splits `<digits>[.<digits>]` off the front of `s`; returns the number text and the rest.
pub(crate) fn split_decimal(s: &str) -> Option<(&str, &str)> {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    if i == 0 {
        return None;
    }
    if i + 1 < b.len() && b[i] == b'.' && b[i + 1].is_ascii_digit() {
        i += 1;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
    }
    Some((&s[..i], &s[i..]))
}

/// Rounds a non-negative value as JavaScript's `Math.round` does.
pub(crate) fn js_round(v: f64) -> f64 {
    let r = v.round();
    // Rust rounds half away from zero, JS half towards +∞; they differ only below zero.
    if v < 0.0 && r - v == -0.5 {
        r + 1.0
    } else {
        r
    }
}

const MAX_SAFE: f64 = 9_007_199_254_740_991.0;

/// Parses a duration into milliseconds; `default_unit` applies to a bare number.
pub fn parse_duration_ms(raw: &str, default_unit: DurationUnit) -> Result<u64, DurationError> {
    let trimmed = raw.trim().to_lowercase();
    if trimmed.is_empty() {
        return Err(invalid(raw, Some("empty")));
    }
    let finish = |total: f64| -> Result<u64, DurationError> {
        let ms = js_round(total);
        if !ms.is_finite() || ms > MAX_SAFE {
            return Err(invalid(raw, None));
        }
        Ok(ms as u64)
    };
    // Single value with an optional unit.
    if let Some((num, rest)) = split_decimal(&trimmed) {
        let unit = if rest.is_empty() {
            Some(default_unit)
        } else {
            DurationUnit::from_suffix(rest)
        };
        if let Some(unit) = unit {
            let value: f64 = num.parse().map_err(|_| invalid(raw, None))?;
            return finish(value * unit.millis());
        }
    }
    // Composite: every segment carries a unit, with nothing between segments.
    let mut total = 0.0;
    let mut rest = trimmed.as_str();
    let mut segments = 0;
    while !rest.is_empty() {
        let Some((num, after)) = split_decimal(rest) else {
            return Err(if segments > 0 || find_segment(rest) {
                invalid(raw, Some("each composite segment needs a unit"))
            } else {
                invalid(raw, None)
            });
        };
        let (unit, len) = if after.starts_with("ms") {
            (DurationUnit::Millis, 2)
        } else if let Some(u) = after.get(..1).and_then(DurationUnit::from_suffix) {
            (u, 1)
        } else {
            return Err(invalid(raw, None));
        };
        let value: f64 = num.parse().map_err(|_| invalid(raw, None))?;
        total += value * unit.millis();
        rest = &after[len..];
        segments += 1;
    }
    finish(total)
}

/// Whether a `<number><unit>` segment occurs somewhere later in `s` (the peer then
/// reports a gap before it).
///
/// Only a digit can start a number, and every start inside one run of digits ends the
/// number at the same place, so one test per run (from position 1 at the earliest) is
/// enough: linear, where testing every position was quadratic in a long run of digits.
fn find_segment(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 1;
    while i < b.len() {
        if !b[i].is_ascii_digit() {
            i += 1;
            continue;
        }
        // An ASCII digit is always a char boundary.
        if split_decimal(&s[i..]).is_some_and(|(_, after)| {
            after.starts_with("ms") || after.get(..1).and_then(DurationUnit::from_suffix).is_some()
        }) {
            return true;
        }
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use DurationUnit::*;

    #[test]
    fn single_values_and_default_units() {
        assert_eq!(parse_duration_ms("30d", Millis), Ok(2_592_000_000));
        assert_eq!(parse_duration_ms("7", Days), Ok(604_800_000));
        assert_eq!(parse_duration_ms("24", Hours), Ok(86_400_000));
        assert_eq!(parse_duration_ms(" 2D ", Millis), Ok(172_800_000));
        assert_eq!(parse_duration_ms("1.5s", Millis), Ok(1500));
        assert_eq!(parse_duration_ms("0.0005s", Millis), Ok(1));
        assert_eq!(parse_duration_ms("500", Millis), Ok(500));
    }

    #[test]
    fn composite_values() {
        assert_eq!(parse_duration_ms("1h30m", Millis), Ok(5_400_000));
        assert_eq!(parse_duration_ms("1d2h3m4s5ms", Millis), Ok(93_784_005));
    }

    #[test]
    fn invalid_values_carry_the_peer_message() {
        let e = parse_duration_ms("abc", Days).unwrap_err();
        assert_eq!(
            e.message,
            "Invalid duration: \"abc\". Use values like 500ms, 30s, 5m, 2h, or 1h30m."
        );
        assert!(parse_duration_ms("", Days)
            .unwrap_err()
            .message
            .contains("(empty)"));
        assert!(parse_duration_ms("-1d", Days).is_err());
        assert!(parse_duration_ms("1h30", Days).is_err());
        assert!(parse_duration_ms("1x", Days).is_err());
        assert!(parse_duration_ms("99999999999999999999d", Days).is_err());
    }

    /// Found by fuzzing: a long run of digits after a non-digit took quadratic time
    /// (a 47 KB value took 5 s).
    #[test]
    fn find_segment_is_linear_and_unchanged() {
        let reference = |s: &str| {
            s.char_indices().skip(1).any(|(i, _)| {
                split_decimal(&s[i..]).is_some_and(|(_, after)| {
                    after.starts_with("ms")
                        || after.get(..1).and_then(DurationUnit::from_suffix).is_some()
                })
            })
        };
        for s in [
            "", "1", "12ms", "1ms", "x1ms", "x12", "1.5.5ms", "1.5ms", "a.5s", "é12h", "12é3d",
            "1h 2m", "1 h", "5x3", "00m", "1.2.3", "ms1", "1.x5m", "9.9.9.9d",
        ] {
            assert_eq!(find_segment(s), reference(s), "{s:?}");
        }
        let long = format!("x{}", "1".repeat(100_000));
        let t = std::time::Instant::now();
        assert!(parse_duration_ms(&long, Days).is_err());
        assert!(t.elapsed() < std::time::Duration::from_secs(5));
    }
}
