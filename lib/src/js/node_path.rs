//! Node's `path` module on POSIX, byte for byte: the gateway builds lock and state paths
//! with `path.join`/`path.normalize`, and the paths it writes are compared as it made them.

use std::ffi::OsString;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

/// `path.posix.normalize` on raw bytes.
pub fn normalize(path: &[u8]) -> Vec<u8> {
    if path.is_empty() {
        return b".".to_vec();
    }
    let absolute = path[0] == b'/';
    let trailing = path[path.len() - 1] == b'/';
    let mut segments: Vec<&[u8]> = Vec::new();
    for seg in path.split(|&c| c == b'/') {
        match seg {
            b"" | b"." => {}
            b".." => {
                if segments.last().is_some_and(|last| *last != b"..") {
                    segments.pop();
                } else if !absolute {
                    segments.push(seg);
                }
            }
            _ => segments.push(seg),
        }
    }
    let mut out = Vec::with_capacity(path.len());
    if absolute {
        out.push(b'/');
    }
    out.extend(segments.join(&b'/'));
    if segments.is_empty() {
        if !absolute {
            return if trailing {
                b"./".to_vec()
            } else {
                b".".to_vec()
            };
        }
    } else if trailing {
        out.push(b'/');
    }
    out
}

/// `path.join(a, b)`.
pub fn join(a: &Path, b: &Path) -> PathBuf {
    let (a, b) = (a.as_os_str().as_bytes(), b.as_os_str().as_bytes());
    let joined = match (a.is_empty(), b.is_empty()) {
        (true, true) => Vec::new(),
        (false, true) => a.to_vec(),
        (true, false) => b.to_vec(),
        (false, false) => [a, b"/", b].concat(),
    };
    PathBuf::from(OsString::from_vec(normalize(&joined)))
}

/// The real path of a file that may not exist: realpath of the deepest existing ancestor
/// joined with the rest (`resolvePathViaExistingAncestorSync`).
pub fn resolve_via_existing_ancestor(path: &Path) -> PathBuf {
    let abs = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()
            .map(|d| d.join(path))
            .unwrap_or_else(|_| path.to_path_buf())
    };
    let mut cursor = abs.clone();
    let mut missing = Vec::new();
    while !cursor.exists() {
        match (cursor.parent(), cursor.file_name()) {
            (Some(parent), Some(name)) => {
                missing.push(name.to_os_string());
                cursor = parent.to_path_buf();
            }
            _ => return abs,
        }
    }
    match std::fs::canonicalize(&cursor) {
        Ok(mut real) => {
            for name in missing.iter().rev() {
                real.push(name);
            }
            real
        }
        Err(_) => abs,
    }
}
