//! The installation a command works on: where the state is, the config, the
//! agents and stores chosen, and whether a gateway is running on it.

pub mod config;
pub mod context;
pub mod gateway_lock;
pub mod live_gateway;
pub mod paths;
pub mod targets;
