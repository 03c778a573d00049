//! What `claw-transcript check` and `claw-sessions doctor` share: the `--severity` and
//! `--summary` options, the progress line on a terminal, and the printers of findings
//! (text lines, one JSON document, NDJSON rows).

use std::io::{IsTerminal, Write};

use clap::Args;
use clawstate::js::jsjson;
use clawstate::report::finding::{Finding, Severity};
use clawstate::report::finding_report::{self, CodeCount};
use clawstate::report::terminal_text::escape_line;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::{note, out, text_line, Failure, OutputMode};

/// `--severity` and `--summary`.
#[derive(Debug, Clone, Args)]
pub struct FindingArgs {
    /// Report findings of this severity and above: error, warning or info (default).
    #[arg(long, value_name = "LEVEL")]
    pub severity: Option<String>,
    /// Print the counts per finding code instead of each finding.
    #[arg(long)]
    pub summary: bool,
}

impl FindingArgs {
    /// The lowest severity reported.
    pub fn min(&self) -> Result<Severity, Failure> {
        match &self.severity {
            None => Ok(Severity::Info),
            Some(s) => Severity::parse(s).map_err(|m| Failure::new(clawstate::exit::USAGE, m)),
        }
    }
}

/// A progress line on stderr, only when stderr is a terminal: `check: transcripts
/// 1200/30000`, redrawn every 64 items and at the end, erased when dropped.
pub struct TerminalProgress {
    prog: &'static str,
    on: bool,
    drawn: bool,
}

impl TerminalProgress {
    /// A progress line for `prog` (silent when stderr is not a terminal).
    pub fn new(prog: &'static str) -> Self {
        TerminalProgress {
            prog,
            on: std::io::stderr().is_terminal(),
            drawn: false,
        }
    }

    /// Shows `done` of `total` items of `what`.
    pub fn update(&mut self, what: &str, done: usize, total: usize) {
        if !self.on || !(done.is_multiple_of(64) || done == total) {
            return;
        }
        let mut e = std::io::stderr().lock();
        let _ = write!(e, "\r\x1b[2K{}: {what} {done}/{total}", self.prog);
        let _ = e.flush();
        self.drawn = true;
    }
}

impl Drop for TerminalProgress {
    fn drop(&mut self) {
        if self.drawn {
            let _ = write!(std::io::stderr(), "\r\x1b[2K");
        }
    }
}

/// Prints findings (or with `summary`, their counts per code) in `mode`; `head` holds the
/// fields of the JSON document before `findings` / `summary` (`files`, `errors`, …): a
/// report type whose fields serialize as an object, or a map.
pub fn print_findings<H: Serialize + ?Sized>(
    prog: &str,
    mode: OutputMode,
    findings: &[Finding],
    summary: bool,
    head: &H,
    text_footer: &str,
) -> Result<(), Failure> {
    let counts: Vec<CodeCount> = if summary {
        finding_report::summarize(findings)
    } else {
        Vec::new()
    };
    match mode {
        OutputMode::Json => {
            let mut doc = match serde_json::to_value(head) {
                Ok(Value::Object(m)) => m,
                Ok(_) => Map::new(),
                Err(e) => {
                    return Err(Failure::new(
                        clawstate::exit::FAILURE,
                        format!("cannot write output: {e}"),
                    ))
                }
            };
            if summary {
                doc.insert(
                    "summary".into(),
                    Value::Array(counts.iter().map(CodeCount::to_json).collect()),
                );
            } else {
                doc.insert(
                    "findings".into(),
                    Value::Array(findings.iter().map(Finding::to_json).collect()),
                );
            }
            let mut s = jsjson::to_string_pretty(&Value::Object(doc));
            s.push('\n');
            out(&s)
        }
        OutputMode::Ndjson => {
            let mut buf = String::new();
            let rows: Vec<Value> = if summary {
                counts.iter().map(CodeCount::to_json).collect()
            } else {
                findings.iter().map(Finding::to_json).collect()
            };
            for r in &rows {
                buf.push_str(&jsjson::to_string_compact(r));
                buf.push('\n');
            }
            out(&buf)
        }
        OutputMode::Text => {
            let mut buf = String::new();
            if summary {
                for c in &counts {
                    buf.push_str(&text_line(&format!(
                        "{:>7}  {:<8} {}",
                        c.count,
                        c.severity.as_str(),
                        c.code
                    )));
                }
            } else {
                for f in findings {
                    buf.push_str(&finding_line(f));
                }
            }
            crate::out_styled(&buf)?;
            note(prog, text_footer);
            Ok(())
        }
    }
}

/// A finding as one escaped line, its severity coloured where stdout's colour is on
/// (error red, warning yellow, info dim), as compilers show theirs.
pub fn finding_line(f: &Finding) -> String {
    use clawstate::report::text_table::Tone;
    let line = text_line(&f.to_line());
    let at = match f.line {
        Some(l) => format!("{}:{l}", f.path.display()),
        None => f.path.display().to_string(),
    };
    // The line is `<at>: <severity>: …`, escaped piecewise as a whole.
    let split = escape_line(&at).len() + 2;
    let sev = f.severity.as_str();
    let tone = match f.severity {
        Severity::Error => Tone::Error,
        Severity::Warning => Tone::Warn,
        Severity::Info => Tone::Muted,
    };
    match (line.get(..split), line.get(split..split + sev.len())) {
        (Some(head), Some(s)) if s == sev => format!(
            "{head}{}{}",
            tone.paint(sev, crate::stdout_colour()),
            &line[split + sev.len()..]
        ),
        _ => line,
    }
}
