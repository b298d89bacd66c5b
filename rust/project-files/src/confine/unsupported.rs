//! Systems without a confined open here yet (Windows): the root opens, and every operation is
//! `Error::Unsupported`, so nothing is ever read by an unconfined path. A Windows
//! implementation would open the root as a handle and each component with
//! `NtCreateFile(RootDirectory = parent, FILE_OPEN_REPARSE_POINT)`, refusing reparse points.

use std::fs::File;
use std::path::Path;

use super::{Entry, RelativePath};
use crate::error::{Error, Result};

const WHY: &str = "only Unix systems have a confined open (openat) so far";

/// Which confined open a root uses (one kind here).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Resolver {
    /// The platform's own.
    Native,
    /// The portable walk (the same here).
    Walk,
}

/// The project root.
#[derive(Debug)]
pub(crate) struct Root;

impl Root {
    pub(crate) fn open(path: &Path, _resolver: Resolver) -> std::io::Result<Root> {
        if !path.is_dir() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                "not a directory",
            ));
        }
        Ok(Root)
    }

    pub(crate) fn open_file(&self, _path: &RelativePath) -> Result<(File, u64)> {
        Err(Error::Unsupported(WHY))
    }

    pub(crate) fn list(&self, _path: &RelativePath) -> Result<Vec<Entry>> {
        Err(Error::Unsupported(WHY))
    }

    pub(crate) fn stat(&self, _path: &RelativePath) -> Result<Entry> {
        Err(Error::Unsupported(WHY))
    }
}
