//! clawstate: the formats and rules of an OpenClaw gateway's on-disk session state.
//!
//! Every format, rule and algorithm of the toolkit lives here; the `claw-*` binaries
//! only parse arguments, call in and print. One concept per module.

#![warn(missing_docs)]

pub mod agent_db;
pub mod compaction;
pub mod exit;
pub mod fs;
pub mod gateway_rpc;
pub mod install;
pub mod js;
pub mod maintenance;
pub mod migrate;
pub mod ops;
pub mod report;
pub mod session;
pub mod signals;
pub mod store;
pub mod transcript;
