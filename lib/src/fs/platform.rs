//! Which implementation of the operating-system specific pieces runs: the Linux ones
//! (inotify, `MAP_POPULATE`, `O_DIRECT`, per-thread priority by `gettid`, `/proc`) or the
//! portable fallbacks every other Unix (macOS, the BSDs) gets: polling, a plain mapping,
//! the usual writes, no per-thread priority, process facts unknown.
//!
//! The Linux pieces are compiled only on Linux (`cfg(target_os = "linux")`); the fallbacks
//! are compiled everywhere, and `CLAWSTATE_PORTABLE=1` in the environment selects them on
//! Linux too, so that the tests run them (tests/portable_fallbacks.rs) and the code a
//! macOS build runs is not code no test has run. What a fallback gives up is speed or
//! precision, never safety: a lock whose owner cannot be examined counts as held.

/// Whether the Linux-specific implementations are in use: on Linux, unless
/// `CLAWSTATE_PORTABLE=1` asks for the portable ones (read once per process).
pub fn linux_specific() -> bool {
    #[cfg(target_os = "linux")]
    {
        static LINUX: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        *LINUX.get_or_init(|| std::env::var_os(PORTABLE_ENV).is_none_or(|v| v != "1"))
    }
    #[cfg(not(target_os = "linux"))]
    {
        false
    }
}

/// The environment variable that selects the portable fallbacks on Linux.
pub const PORTABLE_ENV: &str = "CLAWSTATE_PORTABLE";
