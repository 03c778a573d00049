//! clawstate: the formats and rules of an OpenClaw gateway's on-disk session state.
//!
//! Every format, rule and algorithm of the toolkit lives here; the `claw-*` binaries
//! only parse arguments, call in and print. One concept per module.

#![warn(missing_docs)]

pub mod agent_db;
pub mod artifact;
pub mod atomic_file;
pub mod byte_size;
pub mod clock;
pub mod compaction;
pub mod config;
pub mod context;
pub mod data_file;
pub mod delegation;
pub mod doctor;
pub mod duration;
pub mod exit;
pub mod finding_report;
pub mod freshness;
pub mod fx_hash;
pub mod gateway_lock;
pub mod gateway_rpc;
pub mod human_format;
pub mod js;
pub mod jsjson;
pub mod lifecycle;
pub mod listing;
pub mod live_gateway;
pub mod maintenance;
pub mod migrate;
pub mod paths;
pub mod platform;
pub mod process;
pub mod send_policy;
pub mod session_key;
pub mod session_list;
pub mod session_ops;
pub mod session_report;
pub mod session_restore;
pub mod signals;
pub mod store;
pub mod store_lock;
pub mod targets;
pub mod terminal_text;
pub mod text_table;
pub mod transcript;
pub mod transcript_ops;
pub mod transcript_path;
pub mod write_lock;
