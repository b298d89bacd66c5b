//! Search in native code with ripgrep's own libraries: `ignore` walks the tree the way `rg`
//! does (`.gitignore`, `.git/info/exclude`, `.ignore` in a git repository; `.git` itself
//! skipped; hidden files included), `regex` matches in linear time (Rust regex syntax: no
//! look-around, no backreferences, so no pattern can make a search backtrack), `globset`
//! filters by glob, and `grep-searcher` reads each file line by line.
//!
//! Every file is opened through the confined open (`crate::confine`), so a path swapped while
//! the walk runs can at worst be refused; the walk itself never follows a symbolic link, and a
//! link found in the tree is neither searched nor listed. Every file passes the credential
//! rule before anything of it is shown. A search stops at its deadline (with what it found so
//! far) or when its [`CancelFlag`] is raised, checked for every file and for every buffer
//! read within a file.

mod find;
mod glob;
mod text;
mod walk;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

pub use find::{find_files, FindOutcome, FindRequest};
pub use text::{search_text, SearchOutcome, SearchRequest, TextMatch};

/// A flag another thread raises to stop a search.
#[derive(Clone, Debug, Default)]
pub struct CancelFlag(Arc<AtomicBool>);

impl CancelFlag {
    /// A flag not raised yet.
    pub fn new() -> Self {
        CancelFlag::default()
    }

    /// Stops every search watching this flag, soon.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    /// Whether [`CancelFlag::cancel`] was called.
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// When a search must stop: a cancellation flag and an optional deadline.
#[derive(Clone, Debug, Default)]
pub struct Stop {
    /// Raised by the caller to cancel.
    pub cancel: CancelFlag,
    /// Past it, the search answers with what it found so far.
    pub deadline: Option<Instant>,
}

/// Why a search stopped early.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Halt {
    Cancelled,
    Deadline,
}

impl Stop {
    pub(crate) fn halted(&self) -> Option<Halt> {
        if self.cancel.is_cancelled() {
            return Some(Halt::Cancelled);
        }
        match self.deadline {
            Some(deadline) if Instant::now() >= deadline => Some(Halt::Deadline),
            _ => None,
        }
    }
}
