//! clawstate: the formats and rules of an OpenClaw gateway's on-disk session state.
//!
//! Every format, rule and algorithm of the toolkit lives here; the `claw-*` binaries
//! only parse arguments, call in and print. One concept per module.

pub mod agent_db;
pub mod artifact;
pub mod atomic_file;
pub mod byte_size;
pub mod clock;
pub mod compaction;
pub mod config;
pub mod context;
pub mod data_file;
pub mod duration;
pub mod exit;
pub mod freshness;
pub mod fx_hash;
pub mod gateway_lock;
pub mod js;
pub mod jsjson;
pub mod lifecycle;
pub mod listing;
pub mod live_gateway;
pub mod maintenance;
pub mod paths;
pub mod process;
pub mod send_policy;
pub mod session_key;
pub mod session_list;
pub mod session_ops;
pub mod signals;
pub mod store;
pub mod store_lock;
pub mod targets;
pub mod terminal_text;
pub mod transcript;
pub mod transcript_path;
pub mod write_lock;
