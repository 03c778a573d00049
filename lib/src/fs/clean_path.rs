//! Clean absolute paths: absolute, with no `.` or `..` component and no doubled or
//! trailing `/`. Such a path is already what normalisation would make of it, so it can be
//! compared, split and extended by its bytes, without walking its components (cleanup does
//! this for every file of a 100k-entry store).

use std::path::Path;

fn bytes(p: &Path) -> &[u8] {
    p.as_os_str().as_encoded_bytes()
}

/// Whether `p` is absolute and already normal (no `.`, `..`, doubled or trailing `/`).
pub fn is_clean_absolute(p: &Path) -> bool {
    let b = bytes(p);
    if b.first() != Some(&b'/') {
        return false;
    }
    b.len() == 1
        || b[1..]
            .split(|&c| c == b'/')
            .all(|c| !c.is_empty() && c != b"." && c != b"..")
}

/// The parent and file name of a clean absolute path, by bytes (`None` for `/`).
pub fn split_clean(p: &Path) -> Option<(&[u8], &[u8])> {
    let b = bytes(p);
    let i = b.iter().rposition(|&c| c == b'/')?;
    if i + 1 == b.len() {
        return None;
    }
    Some((if i == 0 { &b[..1] } else { &b[..i] }, &b[i + 1..]))
}
