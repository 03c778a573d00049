//! `session.maintenance` resolved into the numbers the rules use (`store.md` §4.1), with
//! the gateway's defaults and grammars (durations default to days, sizes to bytes).
//!
//! The config was validated when it was loaded ([`crate::install::config::Config::load`]), so an
//! invalid value never reaches this module; like the gateway, a value that still fails to
//! parse falls back to its default.

use serde_json::Value;

use crate::install::config::{stringified, Config};
use crate::js::byte_size::parse_byte_size;
use crate::js::duration::{parse_duration_ms, DurationUnit};

/// Default `pruneAfter`: 30 days.
pub const DEFAULT_PRUNE_AFTER_MS: u64 = 30 * 24 * 60 * 60 * 1000;
/// Default `maxEntries`.
pub const DEFAULT_MAX_ENTRIES: u64 = 500;
/// Model-run probe retention (fixed): 24 hours.
pub const MODEL_RUN_PRUNE_AFTER_MS: u64 = 24 * 60 * 60 * 1000;
/// Store temps and prompt-blob temps are stale after 5 minutes (fixed).
pub const TEMP_STALE_MS: u64 = 5 * 60 * 1000;

/// `session.maintenance.mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MaintenanceMode {
    /// Remove what the rules select.
    Enforce,
    /// Only measure and warn.
    Warn,
}

impl MaintenanceMode {
    /// The config and JSON spelling (`enforce`, `warn`).
    pub fn as_str(self) -> &'static str {
        match self {
            MaintenanceMode::Enforce => "enforce",
            MaintenanceMode::Warn => "warn",
        }
    }
}

/// The resolved maintenance settings (`resolveMaintenanceConfigFromInput`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MaintenanceConfig {
    /// `mode` (default enforce).
    pub mode: MaintenanceMode,
    /// `pruneAfter` / `pruneDays` in ms (default 30 d).
    pub prune_after_ms: u64,
    /// `maxEntries` (default 500).
    pub max_entries: u64,
    /// Model-run probe retention in ms (fixed 24 h).
    pub model_run_prune_after_ms: u64,
    /// `resetArchiveRetention` in ms; `None` when `false` (default: `pruneAfter`).
    pub reset_archive_retention_ms: Option<u64>,
    /// `maxDiskBytes`; `None` means no disk budget.
    pub max_disk_bytes: Option<u64>,
    /// `highWaterBytes` (default 80 % of the budget); `None` without a budget.
    pub high_water_bytes: Option<u64>,
}

impl Default for MaintenanceConfig {
    fn default() -> Self {
        MaintenanceConfig::from_value(None)
    }
}

/// `normalizeStringifiedOptionalString`: strings trimmed, numbers and booleans as text,
/// empty → none.
fn text_of(v: Option<&Value>) -> Option<String> {
    let s = match v? {
        Value::Bool(b) => b.to_string(),
        other => stringified(other)?,
    };
    let t = s.trim();
    (!t.is_empty()).then(|| t.to_string())
}

impl MaintenanceConfig {
    /// Resolves `session.maintenance` of a loaded config.
    pub fn from_config(config: &Config) -> Self {
        MaintenanceConfig::from_value(config.session().get("maintenance"))
    }

    /// Resolves a `session.maintenance` object (`None`: all defaults).
    pub fn from_value(m: Option<&Value>) -> Self {
        let get = |k: &str| m.and_then(|m| m.get(k)).filter(|v| !v.is_null());
        let mode = match get("mode").and_then(Value::as_str) {
            Some("warn") => MaintenanceMode::Warn,
            _ => MaintenanceMode::Enforce,
        };
        let prune_after_ms = text_of(get("pruneAfter").or_else(|| get("pruneDays")))
            .and_then(|s| parse_duration_ms(&s, DurationUnit::Days).ok())
            .unwrap_or(DEFAULT_PRUNE_AFTER_MS);
        let max_entries = get("maxEntries")
            .and_then(Value::as_f64)
            .map(|n| if n <= 0.0 { 0 } else { n as u64 })
            .unwrap_or(DEFAULT_MAX_ENTRIES);
        let reset_archive_retention_ms = match get("resetArchiveRetention") {
            Some(Value::Bool(false)) => None,
            v => Some(
                text_of(v)
                    .and_then(|s| parse_duration_ms(&s, DurationUnit::Days).ok())
                    .unwrap_or(prune_after_ms),
            ),
        };
        let max_disk_bytes = text_of(get("maxDiskBytes")).and_then(|s| parse_byte_size(&s).ok());
        let high_water_bytes = max_disk_bytes.map(|max| {
            let default = if max == 0 {
                0
            } else {
                ((max as f64 * 0.8).floor() as u64).clamp(1, max)
            };
            text_of(get("highWaterBytes"))
                .and_then(|s| parse_byte_size(&s).ok())
                .map(|h| h.min(max))
                .unwrap_or(default)
        });
        MaintenanceConfig {
            mode,
            prune_after_ms,
            max_entries,
            model_run_prune_after_ms: MODEL_RUN_PRUNE_AFTER_MS,
            reset_archive_retention_ms,
            max_disk_bytes,
            high_water_bytes,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn of(v: Value) -> MaintenanceConfig {
        MaintenanceConfig::from_value(Some(&v))
    }

    #[test]
    fn defaults() {
        let d = MaintenanceConfig::default();
        assert_eq!(d.mode, MaintenanceMode::Enforce);
        assert_eq!(d.prune_after_ms, 2_592_000_000);
        assert_eq!(d.max_entries, 500);
        assert_eq!(d.reset_archive_retention_ms, Some(2_592_000_000));
        assert_eq!(d.max_disk_bytes, None);
        assert_eq!(d.high_water_bytes, None);
    }

    #[test]
    fn grammars_and_units() {
        assert_eq!(of(json!({"pruneAfter": 7})).prune_after_ms, 604_800_000);
        assert_eq!(of(json!({"pruneAfter": "2d"})).prune_after_ms, 172_800_000);
        assert_eq!(of(json!({"pruneAfter": "1h30m"})).prune_after_ms, 5_400_000);
        assert_eq!(of(json!({"pruneDays": 3})).prune_after_ms, 259_200_000);
        // pruneAfter wins over pruneDays.
        assert_eq!(
            of(json!({"pruneAfter": "1d", "pruneDays": 3})).prune_after_ms,
            86_400_000
        );
        let c = of(json!({"pruneAfter": "2d", "resetArchiveRetention": false}));
        assert_eq!(c.reset_archive_retention_ms, None);
        let c = of(json!({"pruneAfter": "2d", "resetArchiveRetention": 1}));
        assert_eq!(c.reset_archive_retention_ms, Some(86_400_000));
        assert_eq!(of(json!({"mode": "warn"})).mode, MaintenanceMode::Warn);
    }

    #[test]
    fn disk_budget_and_high_water() {
        let c = of(json!({"maxDiskBytes": "5kb"}));
        assert_eq!(c.max_disk_bytes, Some(5120));
        assert_eq!(c.high_water_bytes, Some(4096));
        let c = of(json!({"maxDiskBytes": 1000, "highWaterBytes": "2kb"}));
        assert_eq!(c.high_water_bytes, Some(1000));
        let c = of(json!({"maxDiskBytes": 1}));
        assert_eq!(c.high_water_bytes, Some(1));
        let c = of(json!({"maxDiskBytes": 0}));
        assert_eq!(c.high_water_bytes, Some(0));
        assert_eq!(of(json!({"highWaterBytes": 5})).high_water_bytes, None);
    }
}
