//! `claw-transcript stats` as printed: the transcript's path, then its statistics
//! (`transcript::stats`: rows by type and role, bytes, tokens, branches).

use serde::Serialize;
use serde_json::Value;

/// What `stats` prints.
#[derive(Debug, Clone, Serialize)]
pub struct StatsView {
    /// The transcript, as shown.
    pub path: String,
    /// The statistics, in their order.
    #[serde(flatten)]
    pub stats: Value,
}
