//! The per-user registry of live server sets: one small record per running set, so that a
//! client can find a project's servers by the project's directory instead of by the runtime
//! directory's random id (`ide-mcp list`, `ide-mcp bridge --project DIR SERVER`).
//!
//! A record names the project root(s), the socket directory, the live servers, the owning
//! process (pid and start time), the IDE or host and when the set started. It never holds the
//! token: finding a set tells where its sockets are, and only the token file beside them (0600,
//! in a 0700 directory) lets a client in.
//!
//! The registry is a directory of this user's only (0700, owned by us, checked like the
//! runtime directory's shared directory), holding one 0600 JSON file per set, written
//! atomically (a temporary name, then a rename in the same directory). A set removes its record
//! when it stops; a record whose process is gone, or whose pid now belongs to another process,
//! is ignored and removed by the next reader or start.
//!
//! The code is split by concern:
//! - `record` — [`LiveSetRecord`], the JSON format, checked when read.
//! - `directory` — where the registry is ([`registry_path`]) and opening it with its checks.
//! - `registration` — [`Registration`]: writing a set's record, rewriting it, removing it.
//! - `listing` — [`list_live_sets`]: reading every record with bounded work, removing stale ones.
//! - `lookup` — [`find_for_project`]: the set whose root holds a directory, the deepest first.

mod directory;
mod listing;
mod lookup;
mod record;
mod registration;

use std::io;
use std::path::PathBuf;

use crate::runtime_dir::RuntimeDirError;

pub use directory::{registry_path, REGISTRY_DIR_NAME, REGISTRY_ENV};
pub use listing::{list_live_sets, list_live_sets_in, Ignored, Listing};
pub use lookup::{
    absolute_project_directory, endpoint_for_project, find_for_project, LookupError,
    ProjectEndpoint,
};
pub use record::{LiveSetRecord, RECORD_FORMAT};
pub use registration::Registration;

/// The largest record file read, in bytes; a larger file in the registry is ignored unread.
pub const MAX_RECORD_BYTES: u64 = 64 * 1024;

/// The most entries of the registry directory one reading looks at; the rest are reported as
/// not examined. A user has a handful of IDE windows open, not thousands.
pub const MAX_REGISTRY_ENTRIES: usize = 1024;

/// The suffix of a record file's name.
const RECORD_SUFFIX: &str = ".json";

/// Why the registry could not be used.
#[derive(Debug, thiserror::Error)]
pub enum LiveSetsError {
    /// No environment variable names a place for it.
    #[error(
        "no directory for the registry of live server sets: none of {REGISTRY_ENV}, \
         XDG_RUNTIME_DIR, XDG_CACHE_HOME or HOME is set to an absolute path; set {REGISTRY_ENV} \
         to a directory of your own"
    )]
    NoDirectory,

    /// The directory exists but fails its checks, or could not be created or opened.
    #[error(
        "the registry of live server sets is refused: {0} (the registry is {REGISTRY_ENV}, \
         else $XDG_RUNTIME_DIR/{REGISTRY_DIR_NAME}, else ~/.cache/{REGISTRY_DIR_NAME})"
    )]
    Directory(#[source] RuntimeDirError),

    /// A record could not be written or removed.
    #[error("could not {action} {}: {source}", .path.display())]
    Io {
        /// What was being done.
        action: &'static str,
        /// The path it was done on.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: io::Error,
    },

    /// A record could not be encoded (a path that is not UTF-8, say).
    #[error("could not encode the record of this server set: {0}")]
    Encode(String),
}
