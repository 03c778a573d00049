//! What a `claw-transcript` write does end to end: resolve the session for writing, apply
//! the live-gateway rule, take the transcript write lock, read, decide, write atomically
//! (`transcript.md` §3). One module per command; the lock-read-write sequence they share
//! is [`locked_rewrite`], so that every rewrite holds the lock the gateway's writers take
//! and keeps the original of a header recovery before replacing the file.
//!
//! The read commands' views (`context_view`, `history_view`, `tree_view`, `stats_view`) live here too,
//! as the typed documents they print.
//!
//! Each command returns a typed result (`#[derive(Serialize)]`, camelCase as the
//! gateway's JSON) that the binary prints; nothing here writes to stdout.

pub mod append;
pub mod check;
pub mod context_view;
pub mod error;
pub mod history_view;
pub mod lock_break;
pub mod locked_rewrite;
pub mod migrate;
pub mod repair;
pub mod stats_view;
pub mod tree_view;
pub mod write_access;

pub use error::TranscriptOpError;
