//! What a command does end to end, over the layers below: the session operations,
//! restore, the compaction commands, the health check, and writes delegated to a live
//! gateway.

pub mod session_report;
pub mod transcript_ops;

pub mod compaction_ops;
pub mod delegation;
pub mod doctor;
pub mod session_ops;
pub mod session_restore;
