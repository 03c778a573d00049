//! One planned archive rename of cleanup (`store.md` §4.7): a removed session's transcript
//! and its `<name>.deleted.<ts>` name. The archive pass plans them (`super::archive`), the
//! pending-archive journal records them before the store is written (`super::journal`).

use std::path::{Path, PathBuf};

use super::files::RenamePairs;

/// A planned rename of a removed session's transcript to its archive name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedArchive {
    /// The removed session.
    pub session_id: Option<String>,
    /// The transcript (canonical, inside the sessions directory).
    pub from: PathBuf,
    /// Its archive name (`<name>.deleted.<ts>`, same directory).
    pub to: PathBuf,
    /// Where the run's listing found the transcript, when it looked it up there.
    pub listed: Option<usize>,
}

impl RenamePairs for Vec<PlannedArchive> {
    fn len(&self) -> usize {
        self.as_slice().len()
    }
    fn pair(&self, i: usize) -> (&Path, &Path) {
        (&self[i].from, &self[i].to)
    }
    fn listed(&self, i: usize) -> Option<usize> {
        self[i].listed
    }
}
