//! Exit codes shared by every binary, and the trait errors use to carry theirs.

/// Success.
pub const OK: i32 = 0;
/// Any failure without a more specific code.
pub const FAILURE: i32 = 1;
/// Bad command-line usage (clap's own code).
pub const USAGE: i32 = 2;
/// A session, entry or file that was asked for does not exist.
pub const NOT_FOUND: i32 = 3;
/// Malformed input: a store, config, transcript or argument value that does not parse.
pub const DATA_ERR: i32 = 65;
/// A file could not be created or written.
pub const CANT_CREATE: i32 = 73;
/// Busy: a lock is held or a live gateway owns the state.
pub const TEMP_FAIL: i32 = 75;
/// Not permitted: the gateway refused this client's credentials.
pub const NO_PERM: i32 = 77;

/// An error that knows which process exit code it maps to.
pub trait ExitCode {
    /// The exit code a binary should end with for this error.
    fn exit_code(&self) -> i32;
}
