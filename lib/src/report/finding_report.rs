//! What `check` and `doctor` report of their findings: those at or above `--severity`,
//! all of them or only their counts per code (`--summary`), and the one exit code a
//! report makes (0 healthy, 1 findings, 65 damaged).
//!
//! The exit code is made from the findings reported: `--severity error` on a store with
//! warnings only exits 0, as a linter asked for errors only does.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::exit;
use crate::report::finding::{Finding, Severity};

impl Severity {
    /// Parses `--severity` (`error`, `warning`, `info`).
    pub fn parse(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "error" | "errors" => Ok(Severity::Error),
            "warning" | "warnings" | "warn" => Ok(Severity::Warning),
            "info" | "all" => Ok(Severity::Info),
            _ => Err(format!(
                "--severity: unknown severity {s:?} (expected: error, warning, info)"
            )),
        }
    }
}

/// Keeps the findings at `min` or above, in order.
pub fn at_least(findings: Vec<Finding>, min: Severity) -> Vec<Finding> {
    findings.into_iter().filter(|f| f.severity >= min).collect()
}

/// How many findings of one code (and its severity) were made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeCount {
    /// The finding code.
    pub code: &'static str,
    /// Its severity.
    pub severity: Severity,
    /// How many.
    pub count: usize,
}

impl CodeCount {
    /// `{code, severity, count}`.
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("code".into(), Value::from(self.code));
        m.insert("severity".into(), Value::from(self.severity.as_str()));
        m.insert("count".into(), Value::from(self.count));
        Value::Object(m)
    }
}

/// The counts per code, the most severe first, then by code.
pub fn summarize(findings: &[Finding]) -> Vec<CodeCount> {
    let mut by: BTreeMap<(std::cmp::Reverse<Severity>, &'static str), usize> = BTreeMap::new();
    for f in findings {
        *by.entry((std::cmp::Reverse(f.severity), f.code))
            .or_default() += 1;
    }
    by.into_iter()
        .map(|((s, code), count)| CodeCount {
            code,
            severity: s.0,
            count,
        })
        .collect()
}

/// The exit code of a report: 65 with an error, 1 with a warning, else 0 (information
/// is not a problem).
pub fn exit_code(findings: &[Finding]) -> i32 {
    match findings.iter().map(|f| f.severity).max() {
        Some(Severity::Error) => exit::DATA_ERR,
        Some(Severity::Warning) => exit::FAILURE,
        _ => exit::OK,
    }
}

/// Counts of errors, warnings and infos.
pub fn counts(findings: &[Finding]) -> (usize, usize, usize) {
    let n = |s| findings.iter().filter(|f| f.severity == s).count();
    (n(Severity::Error), n(Severity::Warning), n(Severity::Info))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(severity: Severity, code: &'static str) -> Finding {
        Finding {
            path: "/x".into(),
            line: None,
            severity,
            code,
            message: String::new(),
        }
    }

    #[test]
    fn exit_codes_filters_and_counts() {
        let all = vec![
            f(Severity::Info, "b"),
            f(Severity::Warning, "a"),
            f(Severity::Error, "z"),
            f(Severity::Warning, "a"),
        ];
        assert_eq!(exit_code(&all), 65);
        assert_eq!(exit_code(&all[..2]), 1);
        assert_eq!(exit_code(&all[..1]), 0);
        assert_eq!(at_least(all.clone(), Severity::Warning).len(), 3);
        let s = summarize(&all);
        let flat: Vec<(&str, usize)> = s.iter().map(|c| (c.code, c.count)).collect();
        assert_eq!(flat, [("z", 1), ("a", 2), ("b", 1)]);
        assert_eq!(Severity::parse("WARN"), Ok(Severity::Warning));
        assert!(Severity::parse("loud").is_err());
    }
}
