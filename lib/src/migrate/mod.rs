//! Migration between the two layouts: the 2026.7 files (`sessions.json`, JSONL transcripts)
//! and the 2026.8+ agent database, as openclaw 2026.9.6's `doctor --session-sqlite` does it.
//!
//! One submodule per step: [`plan`] (what an import would do), [`import`] (write the agent
//! DB and the import archive), [`verify`] (every legacy event is in the DB), [`export`] (the
//! DB back to files), [`finish`] (the stuck-migration cases).

pub mod export;
pub mod finish;
pub mod import;
pub mod legacy_transcript;
pub mod plan;
pub mod rows;
pub mod state_registry;
pub mod verify;
