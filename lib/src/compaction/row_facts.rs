//! What compaction keeps of one transcript row without its body: the role of the message
//! it converts to, its token estimate and usage, and the file operations of its tool calls.
//! Both readers of a row produce these: the scan's general path from a parsed `Value`
//! (`super::scan`) and its fast path straight from the text (`super::lean`).
//! The facts are those the compaction rules read (`transcript.md` §4.3, §4.5).

use crate::js;

/// A file operation found in an assistant tool call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileOp {
    /// `read`.
    Read,
    /// `write`.
    Write,
    /// `edit`.
    Edit,
}

/// The role of the agent message a row converts to.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Role {
    /// The row converts to no message (or its role is not a string).
    #[default]
    None,
    /// `user`.
    User,
    /// `assistant`.
    Assistant,
    /// `toolResult`.
    ToolResult,
    /// `custom` (custom messages).
    Custom,
    /// `bashExecution`.
    BashExecution,
    /// `branchSummary` (branch summaries).
    BranchSummary,
    /// `compactionSummary` (compactions).
    CompactionSummary,
    /// Any other string.
    Other,
}

impl Role {
    /// The role of a `role` string.
    pub fn of(r: &str) -> Role {
        match r {
            "user" => Role::User,
            "assistant" => Role::Assistant,
            "toolResult" => Role::ToolResult,
            "custom" => Role::Custom,
            "bashExecution" => Role::BashExecution,
            "branchSummary" => Role::BranchSummary,
            "compactionSummary" => Role::CompactionSummary,
            _ => Role::Other,
        }
    }

    /// Whether the row converts to a message with a string role.
    pub fn is_some(self) -> bool {
        self != Role::None
    }
}

/// What compaction needs to know about one row without its body (32 bytes; the file
/// operations of a row are kept beside, in [`Scanned::file_ops`](super::scan::Scanned::file_ops)).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Facts {
    /// `estimateTokens` of the agent message the row converts to (0 when none).
    pub tokens: u64,
    usage: f64,
    ts: f64,
    /// The role of that message.
    pub role: Role,
    flags: u8,
}

const HAS_USAGE: u8 = 1;
const HAS_TS: u8 = 2;
const STOPPED: u8 = 4;
const MEANINGFUL: u8 = 8;
const BAD_TS: u8 = 16;

impl Facts {
    fn flag(&self, f: u8) -> bool {
        self.flags & f != 0
    }
    fn set(&mut self, f: u8, on: bool) {
        if on {
            self.flags |= f;
        } else {
            self.flags &= !f;
        }
    }
    /// For assistants: the context tokens of usable usage (§4.3), when usable.
    pub fn usage_tokens(&self) -> Option<f64> {
        self.flag(HAS_USAGE).then_some(self.usage)
    }
    pub(crate) fn set_usage_tokens(&mut self, t: f64) {
        self.usage = t;
        self.set(HAS_USAGE, true);
    }
    /// `message.timestamp` when it is a number.
    pub fn message_ts(&self) -> Option<f64> {
        self.flag(HAS_TS).then_some(self.ts)
    }
    pub(crate) fn set_message_ts(&mut self, t: Option<f64>) {
        self.ts = t.unwrap_or(0.0);
        self.set(HAS_TS, t.is_some());
    }
    /// For assistants: `stopReason` is `aborted` or `error`.
    pub fn stopped(&self) -> bool {
        self.flag(STOPPED)
    }
    pub(crate) fn set_stopped(&mut self, on: bool) {
        self.set(STOPPED, on);
    }
    /// Whether the message has meaningful conversation content (§4.5 safeguard step 1).
    pub fn meaningful(&self) -> bool {
        self.flag(MEANINGFUL)
    }
    pub(crate) fn set_meaningful(&mut self, on: bool) {
        self.set(MEANINGFUL, on);
    }
    /// Whether a context rebuild would throw on this row's timestamp.
    pub fn bad_timestamp(&self) -> bool {
        self.flag(BAD_TS)
    }
    pub(crate) fn set_bad_timestamp(&mut self, on: bool) {
        self.set(BAD_TS, on);
    }
}

/// File operations found in a row's tool calls.
pub type FileOps = Vec<(FileOp, Box<str>)>;

fn is_silent_or_heartbeat(text: &str) -> bool {
    let t = js::trim(text);
    let all_tokens = |tok: &str| {
        t.split(js::is_whitespace)
            .filter(|w| !w.is_empty())
            .all(|w| w.eq_ignore_ascii_case(tok))
    };
    all_tokens("NO_REPLY") || all_tokens("HEARTBEAT_OK")
}

/// Non-blank text that is not only `NO_REPLY`/`HEARTBEAT_OK` tokens.
pub(crate) fn meaningful_text(text: &str) -> bool {
    !js::trim(text).is_empty() && !is_silent_or_heartbeat(text)
}
