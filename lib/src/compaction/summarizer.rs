//! The pluggable summariser (spec README, decision 8): an external command run as
//! `sh -c CMD`, given the exact prompt on stdin and expected to print the summary on stdout.
//! A command that fails, is killed or prints nothing aborts the compaction before anything
//! is written.
//!
//! The command inherits clawstate's environment and also sees `CLAW_COMPACT_CALL`
//! (`history` or `turn-prefix`), `CLAW_COMPACT_SYSTEM_PROMPT` (the summariser's system
//! prompt) and `CLAW_COMPACT_MAX_TOKENS` (the `maxTokens` the gateway would request).
//!
//! The command is untrusted in what it does, so every call is bounded: it runs in a process
//! group of its own, and that whole group is killed (SIGKILL) when the call's timeout
//! expires, when stdout exceeds [`MAX_SUMMARY_BYTES`], and when `sh` itself exits (whatever
//! it left running would otherwise hold the pipes open). stdout, stderr and stdin each have a
//! thread of their own, so a command that floods stderr or never reads its prompt cannot
//! deadlock the exchange; only the end of stderr is kept, for the error message. The waits
//! block on a channel with the deadline (no polling), and the group leader is not reaped
//! until the group has been killed, so its process-group id cannot be reused in between.

use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};

use thiserror::Error;

use crate::exit::{self, ExitCode};

/// The default time one summariser call may take (`--summarizer-timeout`, 120 s).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);

/// The most a summariser may print on stdout (1 MiB): far beyond any summary the gateway's
/// `maxTokens` allows, small enough to hold in memory; more is an error.
pub const MAX_SUMMARY_BYTES: usize = 1 << 20;

/// How much of the end of stderr is kept for the error message; the rest is read and dropped.
const STDERR_TAIL_BYTES: usize = 4096;

/// A summariser command and the limit on each call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SummarizerCommand {
    /// The shell command (`sh -c`).
    pub command: String,
    /// How long one call may run before its process group is killed.
    pub timeout: Duration,
}

impl SummarizerCommand {
    /// `command` with the default timeout.
    pub fn new(command: impl Into<String>) -> Self {
        SummarizerCommand {
            command: command.into(),
            timeout: DEFAULT_TIMEOUT,
        }
    }
}

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
    /// The call ran past its timeout; its process group was killed.
    #[error("summarizer {cmd:?} ({call} call) did not finish within {secs} s (--summarizer-timeout); killed its process group")]
    TimedOut {
        /// The command.
        cmd: String,
        /// Which call.
        call: &'static str,
        /// The timeout, in seconds.
        secs: String,
    },
    /// The command printed more than [`MAX_SUMMARY_BYTES`]; its process group was killed.
    #[error("summarizer {cmd:?} ({call} call) printed more than 1 MiB on stdout (the most a summary may be); killed its process group")]
    TooLarge {
        /// The command.
        cmd: String,
        /// Which call.
        call: &'static str,
    },
    /// Its output could not be read, or it could not be waited for.
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

/// What the helper threads report to the call.
enum Event {
    /// stdout reached its end: everything it printed, or `None` past the cap.
    Stdout(std::io::Result<Option<Vec<u8>>>),
    /// stderr reached its end: its last [`STDERR_TAIL_BYTES`].
    Stderr(Vec<u8>),
    /// `sh` exited (not yet reaped).
    Exited,
}

/// How a call ended before its result is looked at.
enum Ending {
    /// `sh` exited and both pipes reached their end.
    Finished {
        out: Vec<u8>,
        err: Vec<u8>,
    },
    TimedOut,
    TooLarge,
    Io(std::io::Error),
}

/// Runs `cmd` with `prompt` on stdin; returns its stdout with trailing white space removed.
pub fn run(
    cmd: &SummarizerCommand,
    call: Call,
    prompt: &str,
    max_tokens: u64,
) -> Result<String, SummarizerError> {
    let name = || cmd.command.clone();
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(&cmd.command)
        .env("CLAW_COMPACT_CALL", call.as_str())
        .env("CLAW_COMPACT_SYSTEM_PROMPT", super::prompt::SYSTEM_PROMPT)
        .env("CLAW_COMPACT_MAX_TOKENS", max_tokens.to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .map_err(|source| SummarizerError::Spawn {
            cmd: name(),
            source,
        })?;
    let ending = exchange(&mut child, prompt, cmd.timeout);
    // The leader is still unreaped here, so the group id is still this group's.
    kill_group(&child);
    let status = child.wait().map_err(|source| SummarizerError::Io {
        cmd: name(),
        source,
    })?;
    let (out, err) = match ending {
        Ending::Finished { out, err } => (out, err),
        Ending::TimedOut => {
            return Err(SummarizerError::TimedOut {
                cmd: name(),
                call: call.as_str(),
                secs: format_secs(cmd.timeout),
            })
        }
        Ending::TooLarge => {
            return Err(SummarizerError::TooLarge {
                cmd: name(),
                call: call.as_str(),
            })
        }
        Ending::Io(source) => {
            return Err(SummarizerError::Io {
                cmd: name(),
                source,
            })
        }
    };
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
            cmd: name(),
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
            cmd: name(),
            call: call.as_str(),
        });
    }
    Ok(text)
}

/// Feeds the prompt and collects stdout and the end of stderr until `sh` has exited and
/// both pipes have ended, the deadline passes, or stdout exceeds the cap. The helper threads
/// are never joined: once the group is killed they end with the pipes (a process that left
/// the group could keep one open, and must not hang the caller).
fn exchange(child: &mut Child, prompt: &str, timeout: Duration) -> Ending {
    let deadline = Instant::now() + timeout;
    let (tx, rx) = mpsc::channel::<Event>();
    if let Some(mut stdin) = child.stdin.take() {
        let input = prompt.as_bytes().to_vec();
        std::thread::spawn(move || {
            // A summariser may stop reading early; a broken pipe is not our failure.
            let _ = stdin.write_all(&input);
        });
    }
    if let Some(stdout) = child.stdout.take() {
        let tx = tx.clone();
        std::thread::spawn(move || {
            let _ = tx.send(Event::Stdout(read_capped(stdout, MAX_SUMMARY_BYTES)));
        });
    }
    if let Some(stderr) = child.stderr.take() {
        let tx = tx.clone();
        std::thread::spawn(move || {
            let _ = tx.send(Event::Stderr(read_tail(stderr, STDERR_TAIL_BYTES)));
        });
    }
    let pid = child.id();
    std::thread::spawn(move || {
        wait_exited(pid);
        let _ = tx.send(Event::Exited);
    });
    let (mut out, mut err, mut exited) = (None, None, false);
    let mut group_killed = false;
    while out.is_none() || err.is_none() || !exited {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(Event::Stdout(Ok(Some(bytes)))) => out = Some(bytes),
            Ok(Event::Stdout(Ok(None))) => return Ending::TooLarge,
            Ok(Event::Stdout(Err(e))) => return Ending::Io(e),
            Ok(Event::Stderr(bytes)) => err = Some(bytes),
            Ok(Event::Exited) => {
                exited = true;
                // What sh left behind would hold the pipes open: end it now.
                if !group_killed {
                    kill_group(child);
                    group_killed = true;
                }
            }
            Err(RecvTimeoutError::Timeout) => return Ending::TimedOut,
            Err(RecvTimeoutError::Disconnected) => {
                return Ending::Io(std::io::Error::other("lost track of the summarizer"))
            }
        }
    }
    Ending::Finished {
        out: out.unwrap_or_default(),
        err: err.unwrap_or_default(),
    }
}

/// Reads `r` to its end; `Ok(None)` as soon as more than `cap` bytes arrive.
fn read_capped(mut r: impl Read, cap: usize) -> std::io::Result<Option<Vec<u8>>> {
    let mut out = Vec::new();
    let mut buf = [0u8; 64 * 1024];
    loop {
        match r.read(&mut buf) {
            Ok(0) => return Ok(Some(out)),
            Ok(n) if out.len() + n > cap => return Ok(None),
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// Reads `r` to its end, keeping only its last `keep` bytes (read errors end it quietly).
fn read_tail(mut r: impl Read, keep: usize) -> Vec<u8> {
    let mut tail: Vec<u8> = Vec::with_capacity(2 * keep);
    let mut buf = [0u8; 64 * 1024];
    loop {
        match r.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                let chunk = &buf[..n];
                if chunk.len() >= keep {
                    tail.clear();
                    tail.extend_from_slice(&chunk[chunk.len() - keep..]);
                } else {
                    tail.extend_from_slice(chunk);
                    if tail.len() > 2 * keep {
                        tail.drain(..tail.len() - keep);
                    }
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    if tail.len() > keep {
        tail.drain(..tail.len() - keep);
    }
    tail
}

/// Blocks until `pid` (our child) has exited, without reaping it (`waitid` with `WNOWAIT`).
fn wait_exited(pid: u32) {
    use rustix::process::{waitid, Pid, WaitId, WaitIdOptions};
    let Some(pid) = Pid::from_raw(pid as i32) else {
        return;
    };
    while let Err(rustix::io::Errno::INTR) = waitid(
        WaitId::Pid(pid),
        WaitIdOptions::EXITED | WaitIdOptions::NOWAIT,
    ) {}
}

/// SIGKILLs the child's whole process group (it is the group's leader and not yet reaped).
fn kill_group(child: &Child) {
    // The group whose id is our unreaped child's pid: only what the summariser started.
    if let Some(pgid) = rustix::process::Pid::from_raw(child.id() as i32) {
        let _ = rustix::process::kill_process_group(pgid, rustix::process::Signal::KILL);
    }
}

/// A timeout in seconds as given (`1`, `0.5`).
fn format_secs(d: Duration) -> String {
    if d.subsec_nanos() == 0 {
        d.as_secs().to_string()
    } else {
        format!("{}", d.as_secs_f64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(c: &str) -> SummarizerCommand {
        SummarizerCommand::new(c)
    }

    #[test]
    fn runs_and_fails_cleanly() {
        let s = run(
            &sh("tr a-z A-Z; echo; echo $CLAW_COMPACT_CALL"),
            Call::History,
            "abc",
            9,
        )
        .unwrap();
        assert_eq!(s, "ABC\nhistory");
        assert!(matches!(
            run(&sh("cat >/dev/null; exit 3"), Call::History, "x", 1),
            Err(SummarizerError::Failed { .. })
        ));
        assert!(matches!(
            run(
                &sh("cat >/dev/null; printf '  \\n'"),
                Call::TurnPrefix,
                "x",
                1
            ),
            Err(SummarizerError::Empty { .. })
        ));
    }

    #[test]
    fn a_call_past_its_timeout_is_killed() {
        let c = SummarizerCommand {
            command: "exec sleep 1000".into(),
            timeout: Duration::from_millis(50),
        };
        let e = run(&c, Call::History, "x", 1).unwrap_err();
        assert!(matches!(e, SummarizerError::TimedOut { .. }), "{e}");
        assert!(e.to_string().contains("within 0.05 s"), "{e}");
    }

    #[test]
    fn output_past_the_cap_is_refused_and_stderr_is_kept_short() {
        let e = run(&sh("exec yes"), Call::History, "x", 1).unwrap_err();
        assert!(matches!(e, SummarizerError::TooLarge { .. }), "{e}");
        // Exactly the cap is still a summary.
        let exact = format!("head -c {MAX_SUMMARY_BYTES} /dev/zero | tr '\\0' a");
        assert_eq!(
            run(&sh(&exact), Call::History, "", 1).unwrap().len(),
            MAX_SUMMARY_BYTES
        );
        let tail = read_tail(&vec![b'x'; 1_000_000][..], 10);
        assert_eq!(tail, vec![b'x'; 10]);
        let mut small = Vec::new();
        for i in 0..100u8 {
            small.push(i);
        }
        let tail = read_tail(std::io::Cursor::new(small), 7);
        assert_eq!(tail.len(), 7);
        assert_eq!(tail, (93..100).collect::<Vec<u8>>());
    }

    #[test]
    fn what_sh_leaves_running_does_not_hold_the_call() {
        // The background sleep keeps stdout open; the call ends when sh does.
        let c = SummarizerCommand {
            command: "sleep 1000 & echo done".into(),
            timeout: Duration::from_secs(600),
        };
        assert_eq!(run(&c, Call::History, "", 1).unwrap(), "done");
    }
}
