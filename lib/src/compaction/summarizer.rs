//! The pluggable summariser (spec README, decision 8): an external command run with
//! `sh -c`, given the exact prompt on stdin and expected to print the summary on stdout.
//! A command that fails, is killed or prints nothing aborts the compaction before anything
//! is written.
//!
//! The command also sees `CLAW_COMPACT_CALL` (`history` or `turn-prefix`),
//! `CLAW_COMPACT_SYSTEM_PROMPT` (the summariser's system prompt) and
//! `CLAW_COMPACT_MAX_TOKENS` (the `maxTokens` the gateway would request).

use std::io::{Read, Write};
use std::process::{Command, Stdio};

use thiserror::Error;

use crate::exit::{self, ExitCode};

/// A summariser that did not produce a summary.
#[derive(Debug, Error)]
pub enum SummarizerError {
    /// The command could not be started.
    #[error("summarizer {cmd:?}: cannot start: {source}")]
    Spawn {
        /// The command.
        cmd: String,
        /// The error.
        source: std::io::Error,
    },
    /// The command exited unsuccessfully.
    #[error("summarizer {cmd:?} ({call} call) failed: {status}{stderr}")]
    Failed {
        /// The command.
        cmd: String,
        /// Which call.
        call: &'static str,
        /// The exit status.
        status: String,
        /// The end of its stderr (prefixed with `: ` when present).
        stderr: String,
    },
    /// The command printed nothing (or only white space).
    #[error("summarizer {cmd:?} ({call} call) printed an empty summary")]
    Empty {
        /// The command.
        cmd: String,
        /// Which call.
        call: &'static str,
    },
    /// Its output could not be read.
    #[error("summarizer {cmd:?}: {source}")]
    Io {
        /// The command.
        cmd: String,
        /// The error.
        source: std::io::Error,
    },
}

impl ExitCode for SummarizerError {
    fn exit_code(&self) -> i32 {
        exit::FAILURE
    }
}

/// Which summarisation call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Call {
    /// The history summary (`generateSummary`).
    History,
    /// The split-turn prefix summary (`generateTurnPrefixSummary`).
    TurnPrefix,
}

impl Call {
    /// `history` or `turn-prefix`.
    pub fn as_str(self) -> &'static str {
        match self {
            Call::History => "history",
            Call::TurnPrefix => "turn-prefix",
        }
    }
}

/// Runs `cmd` with `prompt` on stdin; returns its stdout with trailing white space removed.
pub fn run(
    cmd: &str,
    call: Call,
    prompt: &str,
    max_tokens: u64,
) -> Result<String, SummarizerError> {
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(cmd)
        .env("CLAW_COMPACT_CALL", call.as_str())
        .env("CLAW_COMPACT_SYSTEM_PROMPT", super::prompt::SYSTEM_PROMPT)
        .env("CLAW_COMPACT_MAX_TOKENS", max_tokens.to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|source| SummarizerError::Spawn {
            cmd: cmd.to_string(),
            source,
        })?;
    let mut stdin = child.stdin.take();
    let input = prompt.to_string();
    let writer = std::thread::spawn(move || {
        if let Some(s) = stdin.as_mut() {
            // A summariser may stop reading early; a broken pipe is not our failure.
            let _ = s.write_all(input.as_bytes());
        }
        drop(stdin);
    });
    let mut err_pipe = child.stderr.take();
    let err_reader = std::thread::spawn(move || {
        let mut e = Vec::new();
        if let Some(p) = err_pipe.as_mut() {
            let _ = p.read_to_end(&mut e);
        }
        e
    });
    let mut out = Vec::new();
    if let Some(mut o) = child.stdout.take() {
        o.read_to_end(&mut out)
            .map_err(|source| SummarizerError::Io {
                cmd: cmd.to_string(),
                source,
            })?;
    }
    let status = child.wait().map_err(|source| SummarizerError::Io {
        cmd: cmd.to_string(),
        source,
    })?;
    let _ = writer.join();
    let err = err_reader.join().unwrap_or_default();
    if !status.success() {
        let text = String::from_utf8_lossy(&err);
        let tail: String = text
            .trim()
            .lines()
            .last()
            .unwrap_or("")
            .chars()
            .take(300)
            .collect();
        return Err(SummarizerError::Failed {
            cmd: cmd.to_string(),
            call: call.as_str(),
            status: status.to_string(),
            stderr: if tail.is_empty() {
                String::new()
            } else {
                format!(": {tail}")
            },
        });
    }
    let text = String::from_utf8_lossy(&out).trim_end().to_string();
    if text.trim().is_empty() {
        return Err(SummarizerError::Empty {
            cmd: cmd.to_string(),
            call: call.as_str(),
        });
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_and_fails_cleanly() {
        let s = run(
            "tr a-z A-Z; echo; echo $CLAW_COMPACT_CALL",
            Call::History,
            "abc",
            9,
        )
        .unwrap();
        assert_eq!(s, "ABC\nhistory");
        assert!(matches!(
            run("cat >/dev/null; exit 3", Call::History, "x", 1),
            Err(SummarizerError::Failed { .. })
        ));
        assert!(matches!(
            run("cat >/dev/null; printf '  \\n'", Call::TurnPrefix, "x", 1),
            Err(SummarizerError::Empty { .. })
        ));
    }
}
