//! A private scratch directory of this process (mode 0700 in the temp dir), for copies a
//! reader needs as files (a transcript materialised from the agent DB), removed when the
//! process exits — at a normal exit and by [`crate::fs::process::exit_now`].

use std::os::unix::fs::DirBuilderExt;
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};

static SCRATCH: OnceLock<Mutex<Vec<PathBuf>>> = OnceLock::new();

/// Removes the private directory of this process (called by
/// [`crate::fs::process::exit_now`], and at a normal exit).
pub fn remove() {
    if let Some(d) = SCRATCH.get() {
        if let Ok(mut dirs) = d.lock() {
            for p in dirs.drain(..) {
                let _ = std::fs::remove_dir_all(p);
            }
        }
    }
}

fn dirs() -> &'static Mutex<Vec<PathBuf>> {
    SCRATCH.get_or_init(|| {
        extern "C" fn at_exit() {
            remove();
        }
        // SAFETY: registers a plain function with no captured state, once.
        unsafe {
            libc::atexit(at_exit);
        }
        Mutex::new(Vec::new())
    })
}

/// The private directory of this process (mode 0700 under the temp dir), made on first use.
pub fn dir() -> std::io::Result<PathBuf> {
    let dirs = dirs();
    let mut g = dirs.lock().map_err(|_| std::io::Error::other("poisoned"))?;
    if let Some(d) = g.first() {
        return Ok(d.clone());
    }
    let d = std::env::temp_dir().join(format!(
        "clawstate-db-{}-{}",
        std::process::id(),
        uuid::Uuid::new_v4().simple()
    ));
    std::fs::DirBuilder::new().mode(0o700).create(&d)?;
    g.push(d.clone());
    Ok(d)
}
