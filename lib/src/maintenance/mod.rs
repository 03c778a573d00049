//! (being written: see the issue)
