//! The gateway's byte-size grammar (`parseByteSize`): `500`, `512kb`, `10mb`, `1g` (binary units).

use crate::js::duration::{js_round, split_decimal};
use thiserror::Error;

/// A byte size that does not follow the grammar.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{message}")]
pub struct ByteSizeError {
    /// The peer's own message, e.g. `Invalid byte size: "x". Use values like …`.
    pub message: String,
}

fn invalid(raw: &str, reason: Option<&str>) -> ByteSizeError {
    let value = if raw.trim().is_empty() {
        "empty value".to_string()
    } else {
        format!("\"{raw}\"")
    };
    let prefix = match reason {
        Some(r) => format!("Invalid byte size ({r}): {value}."),
        None => format!("Invalid byte size: {value}."),
    };
    ByteSizeError {
        message: format!("{prefix} Use values like 512kb, 10mb, 1gb, or 500."),
    }
}

fn multiplier(unit: &str) -> Option<f64> {
    Some(match unit {
        "b" => 1.0,
        "k" | "kb" => 1024.0,
        "m" | "mb" => 1024f64.powi(2),
        "g" | "gb" => 1024f64.powi(3),
        "t" | "tb" => 1024f64.powi(4),
        _ => return None,
    })
}

/// Parses a byte size; a bare number is in bytes.
pub fn parse_byte_size(raw: &str) -> Result<u64, ByteSizeError> {
    let trimmed = raw.trim().to_lowercase();
    if trimmed.is_empty() {
        return Err(invalid(raw, Some("empty")));
    }
    let (num, unit) = split_decimal(&trimmed).ok_or_else(|| invalid(raw, None))?;
    if !unit.bytes().all(|b| b.is_ascii_lowercase()) {
        return Err(invalid(raw, None));
    }
    let unit = if unit.is_empty() { "b" } else { unit };
    let m =
        multiplier(unit).ok_or_else(|| invalid(raw, Some(&format!("unknown unit \"{unit}\""))))?;
    let value: f64 = num.parse().map_err(|_| invalid(raw, None))?;
    let bytes = js_round(value * m);
    if !bytes.is_finite() || bytes >= u64::MAX as f64 {
        return Err(invalid(raw, None));
    }
    Ok(bytes as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_are_binary() {
        assert_eq!(parse_byte_size("5kb"), Ok(5120));
        assert_eq!(parse_byte_size("5K"), Ok(5120));
        assert_eq!(parse_byte_size("1.5mb"), Ok(1_572_864));
        assert_eq!(parse_byte_size("500"), Ok(500));
        assert_eq!(parse_byte_size("2g"), Ok(2 * 1024 * 1024 * 1024));
    }

    #[test]
    fn errors() {
        assert_eq!(
            parse_byte_size("5xb").unwrap_err().message,
            "Invalid byte size (unknown unit \"xb\"): \"5xb\". Use values like 512kb, 10mb, 1gb, or 500."
        );
        assert!(parse_byte_size("").is_err());
        assert!(parse_byte_size("kb").is_err());
        assert!(parse_byte_size("-5").is_err());
    }
}
