//! OpenClaw transcripts (`<sessionId>.jsonl`): reading them as tolerantly as the gateway,
//! their tree and leaf, the model context, history and tail readers, token estimates,
//! validation, repair, migrations and the gateway's appender (`transcript.md` §1–3).
//!
//! One concept per module; the `claw-transcript` binary only parses arguments, calls in
//! here and prints.

pub mod write_lock;

pub mod append;
pub mod check;
pub mod check_all;
pub mod context;
pub mod entry;
pub mod history;
pub mod history_db;
pub mod locks;
pub mod migrate;
pub mod partial;
pub mod reader;
pub mod repair;
pub mod session;
pub mod stats;
pub mod tail;
#[cfg(test)]
pub(crate) mod testgen;
pub mod tokens;
pub mod tree;

pub use context::{build_context, convert_to_llm, SessionContext};
pub use entry::{Row, RowKind};
pub use reader::{parse_bytes, read_file, Transcript};
pub use tokens::{estimate_context_tokens, estimate_tokens};
pub use tree::SessionIndex;
