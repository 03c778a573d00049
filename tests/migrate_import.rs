//! `claw-migrate import` against openclaw 2026.9.6's `doctor --session-sqlite import
//! --session-sqlite-all-agents`: the same generated legacy dir imported by both gives the
//! same canonical dump of every agent DB, the same archive and manifest names (timestamps
//! masked), and the same `openclaw sessions --json --all-agents`.

mod agent_db_support;
mod migrate_support;
mod support;

use std::path::Path;

use migrate_support::{write_legacy, Shape};

/// Writes a legacy dir for the benchmark or for a look by hand:
/// `CLAWSTATE_GEN_HOME=DIR CLAWSTATE_GEN_SESSIONS=N cargo test --test migrate_import generate -- --ignored`.
#[test]
#[ignore]
fn generate() {
    let Some(home) = std::env::var_os("CLAWSTATE_GEN_HOME") else {
        return;
    };
    let mut shape = Shape::small();
    if let Some(n) = std::env::var("CLAWSTATE_GEN_SESSIONS")
        .ok()
        .and_then(|s| s.parse().ok())
    {
        shape.sessions = n;
    }
    if let Some(n) = std::env::var("CLAWSTATE_GEN_TURNS")
        .ok()
        .and_then(|s| s.parse().ok())
    {
        shape.max_turns = n;
    }
    if let Some(n) = std::env::var("CLAWSTATE_GEN_TOOL_OUTPUT")
        .ok()
        .and_then(|s| s.parse().ok())
    {
        shape.tool_output = n;
    }
    write_legacy(Path::new(&home), 7, shape);
}
