//! Compaction of OpenClaw transcripts (`transcript.md` §4): settings and the threshold
//! (with the fixed prompt overhead of the system prompt, workspace bootstrap files and
//! tool schemas), the gateway's repair pass first (in memory), `prepareCompaction`'s cut
//! point with tool-call pairing, the default-mode prompts, a
//! pluggable summariser (an external command) or a deterministic extractive summary, the
//! compaction entry with the manual hardening rule, the `truncateAfterCompaction`
//! successor, `--max-lines` truncation, and the store bookkeeping.
//!
//! One concept per module; the `claw-compact` binary only parses arguments, calls
//! [`crate::ops::compaction_ops`] and prints.

pub mod bookkeeping;
pub mod bootstrap;
pub mod commit;
pub mod entry;
pub mod extractive;
pub mod index;
mod lean;
mod missing_results;
pub mod overhead;
pub mod plan;
pub mod prompt;
pub mod repaired;
pub mod rotate;
pub mod row_facts;
pub mod scan;
pub mod settings;
pub mod summarizer;
pub mod truncate;
