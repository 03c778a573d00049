//! One problem found in a file, as every `check` reports it: where (file, line), how
//! serious, a stable code and a one-line message. The transcript, store and agent-DB checks
//! and the doctor all produce these; `finding_report` filters and prints them.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

/// How serious a finding is; any `Error` makes `check` exit 65.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    /// Worth knowing; the gateway handles it.
    Info,
    /// The gateway copes, but data is lost, hidden or ambiguous.
    Warning,
    /// Malformed input.
    Error,
}

impl Severity {
    /// `error`, `warning` or `info`.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

/// One problem found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// The file.
    pub path: PathBuf,
    /// The 1-based line, when the finding is about one.
    pub line: Option<usize>,
    /// Severity.
    pub severity: Severity,
    /// A stable kebab-case code (`torn-tail`, `dangling-parent`, …).
    pub code: &'static str,
    /// What is wrong, in one line.
    pub message: String,
}

impl Finding {
    /// A finding about a whole file (no line).
    pub fn about_file(
        path: &Path,
        severity: Severity,
        code: &'static str,
        message: String,
    ) -> Finding {
        Finding {
            path: path.to_path_buf(),
            line: None,
            severity,
            code,
            message,
        }
    }

    /// `file:line: severity: code: message`.
    pub fn to_line(&self) -> String {
        match self.line {
            Some(l) => format!(
                "{}:{}: {}: {}: {}",
                self.path.display(),
                l,
                self.severity.as_str(),
                self.code,
                self.message
            ),
            None => format!(
                "{}: {}: {}: {}",
                self.path.display(),
                self.severity.as_str(),
                self.code,
                self.message
            ),
        }
    }

    /// As a JSON object (camelCase fields).
    pub fn to_json(&self) -> Value {
        json!({
            "path": self.path.to_string_lossy(),
            "line": self.line,
            "severity": self.severity.as_str(),
            "code": self.code,
            "message": self.message,
        })
    }
}
