//! Rules of one session that hold in either layout: its key, its file names,
//! when it goes stale, and whether the gateway may send into it.

pub mod artifact;
pub mod entry_fields;
pub mod freshness;
pub mod send_policy;
pub mod session_key;
