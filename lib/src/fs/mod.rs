//! Files and processes: atomic replace, files named by data, private scratch
//! directories, waiting for a file to change, facts about other processes and the platform's implementations of them.

pub mod atomic_file;
pub mod change_waiter;
pub mod clean_path;
pub mod data_file;
pub mod platform;
pub mod process;
pub mod scratch_dir;
