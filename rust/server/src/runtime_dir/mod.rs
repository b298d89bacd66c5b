//! The per-instance runtime directory: `<base>/claude-ide-mcp/<id>/`.
//!
//! It holds the server sockets (`code.sock run.sock vcs.sock ops.sock`), the
//! `token` file clients read, and a `lock` file whose `flock` marks the
//! instance as alive. `<id>` is base64url (no padding) of 16 CSPRNG bytes.
//!
//! Security rests on two 0700 directories owned by us: `claude-ide-mcp`
//! (shared by every instance of this user) and `<id>`. Because other users
//! cannot enter them, nothing inside can be swapped under us, and short windows
//! (a socket created with umask-derived permissions before its chmod) are
//! harmless.
//!
//! How files are handled, and why:
//! - Everything is done relative to directory fds (`openat`, `mkdirat`,
//!   `unlinkat`, `renameat`) opened with `O_NOFOLLOW`, so a symlink planted
//!   anywhere below `<base>` is refused or removed, never followed.
//! - Modes are given explicitly at creation and then set exactly with
//!   `fchmod`. The process umask is never read or changed: it is process-wide
//!   and the IDE has many threads creating files.
//! - The working directory is never changed, for the same reason; and the
//!   abstract socket namespace is never used, since it has no permissions.
//! - Every fd is opened with `O_CLOEXEC` so no child process of the IDE
//!   inherits it (an inherited lock fd would keep a dead instance "alive").
//!
//! The code is split by concern:
//! - `lifecycle` — [`RuntimeDir`]: choosing a base, creating and checking the
//!   directories (modes, ownership), the lock, the sockets' modes, the token
//!   file, and removal.
//! - `stale` — [`cleanup_stale`]: removing directories left by instances that
//!   died without removing their own.
//! - `crate::platform::fs` — the descriptor-relative system calls both are built on
//!   (one implementation per OS), with no runtime-directory policy of their own.
//!
//! On Windows the same code runs over handles: the protection is an owner-only, protected
//! ACL instead of a mode, `LockFileEx` stands for `flock`, and an entry's name is opened
//! under the directory's path with reparse points refused (see `platform/windows/fs.rs`).

use std::io;
use std::path::PathBuf;
use std::time::Duration;

mod lifecycle;
mod stale;

pub use lifecycle::{longest_socket_path_len, per_user_shared_dir_name, RuntimeDir};
// The private-file helpers the per-user registry of live server sets is built on as well.
pub(crate) use lifecycle::{
    check_private_dir, create_private_file, fstat, list_dir, open_or_create_private_dir,
    refusal_or_io,
};
pub use stale::{cleanup_stale, cleanup_stale_with_grace};

/// Longest socket path we accept, in bytes. `sun_path` holds 108 bytes on
/// Linux and Windows and 104 on macOS, including the terminating NUL; 100 leaves margin.
pub const MAX_SOCKET_PATH_BYTES: usize = 100;

/// Where runtime directories may go on this OS when the host names no base of its own, best
/// first (the system temp directory; on Unix also `/tmp`, short enough for any socket path).
pub fn default_bases() -> Vec<PathBuf> {
    crate::platform::default_runtime_bases()
}

pub use ide_mcp_protocol::contract::{SHARED_DIR_NAME, TOKEN_FILE_NAME};

/// Name under which the token is written before being renamed to
/// [`TOKEN_FILE_NAME`].
pub const TOKEN_TEMP_FILE_NAME: &str = "token.next";

/// Name of the liveness lock file.
pub const LOCK_FILE_NAME: &str = "lock";

/// Random bytes in an instance id.
pub const ID_BYTES: usize = 16;

/// Length of an instance id: base64url without padding of [`ID_BYTES`].
pub const ID_LEN: usize = 22;

/// How old an instance directory without a `lock` file must be before it is
/// considered stale: younger ones may belong to an instance still being set
/// up.
pub const STALE_GRACE: Duration = Duration::from_secs(60);

/// Name the lock file is created under before it is locked and renamed to
/// [`LOCK_FILE_NAME`], so a `lock` file that exists is always already locked
/// by a live owner (see [`RuntimeDir::create`]).
const LOCK_TEMP_FILE_NAME: &str = "lock.new";

/// The longest entry name in an instance directory that becomes a socket
/// path; the path-length check uses it.
const LONGEST_SOCKET_FILE_NAME: &str = "code.sock";

/// Suffix that turns a server name into its socket file name.
const SOCKET_SUFFIX: &str = ".sock";

/// How deep [`cleanup_stale`] descends into a stale directory. Ours are flat;
/// the limit only bounds recursion on something unexpected.
const MAX_REMOVE_DEPTH: usize = 8;

/// Why a runtime directory could not be set up or used.
#[derive(Debug, thiserror::Error)]
pub enum RuntimeDirError {
    /// No base candidates were given.
    #[error(
        "no base directory candidates were given for the runtime directory; \
         pass the IDE temp dir and java.io.tmpdir"
    )]
    NoCandidates,

    /// Every candidate was rejected; each is listed with why.
    #[error("{}", describe_candidates(.0))]
    NoUsableCandidate(Vec<CandidateRejection>),

    /// A system call failed.
    #[error("could not {action} {}: {source}; {hint}", .path.display())]
    Io {
        /// What was being done, e.g. "create directory".
        action: &'static str,
        /// The path it was done on.
        path: PathBuf,
        /// The error from the system.
        #[source]
        source: io::Error,
        /// What to try.
        hint: &'static str,
    },

    /// Something exists but fails the security checks.
    #[error("refusing {}: {reason}; {hint}", .path.display())]
    Insecure {
        /// The offending path.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
        /// What to try.
        hint: String,
    },

    /// A server name that is not a plain file-name component.
    #[error(
        "invalid server name {0:?}: it must be a non-empty file name without '/' or NUL, \
         such as \"code\""
    )]
    InvalidName(String),

    /// The OS random source failed.
    #[error(
        "could not read random bytes from the operating system for the instance id: {0}; \
         check that the OS random source (getrandom(2), /dev/urandom or ProcessPrng) is \
         available"
    )]
    Random(getrandom::Error),
}

impl From<RuntimeDirError> for io::Error {
    fn from(err: RuntimeDirError) -> Self {
        let kind = match &err {
            RuntimeDirError::Io { source, .. } => source.kind(),
            RuntimeDirError::Insecure { .. } => io::ErrorKind::PermissionDenied,
            RuntimeDirError::InvalidName(_) => io::ErrorKind::InvalidInput,
            _ => io::ErrorKind::Other,
        };
        io::Error::new(kind, err)
    }
}

/// A base candidate that was not used, and why.
#[derive(Debug)]
pub struct CandidateRejection {
    /// The candidate base directory.
    pub candidate: PathBuf,
    /// Length in bytes of the longest socket path under it.
    pub socket_path_len: usize,
    /// Why it was not used.
    pub reason: CandidateRejectionReason,
}

/// Why a base candidate was not used.
#[derive(Debug)]
pub enum CandidateRejectionReason {
    /// The longest socket path would exceed [`MAX_SOCKET_PATH_BYTES`].
    PathTooLong,
    /// The candidate is a relative path.
    NotAbsolute,
    /// Setting up the directory under it failed.
    Failed(Box<RuntimeDirError>),
}

fn describe_candidates(rejections: &[CandidateRejection]) -> String {
    let mut text = String::from("no usable base directory for the runtime directory:");
    for rejection in rejections {
        let candidate = rejection.candidate.display();
        let len = rejection.socket_path_len;
        let reason = match &rejection.reason {
            CandidateRejectionReason::PathTooLong => format!(
                "the longest socket path would be {len} bytes, over the limit of \
                 {MAX_SOCKET_PATH_BYTES}"
            ),
            CandidateRejectionReason::NotAbsolute => {
                format!("not an absolute path (the longest socket path would be {len} bytes)")
            }
            CandidateRejectionReason::Failed(err) => {
                format!("(longest socket path {len} bytes) {err}")
            }
        };
        text.push_str(&format!("\n  - {candidate}: {reason}"));
    }
    let any_too_long = rejections
        .iter()
        .any(|r| matches!(r.reason, CandidateRejectionReason::PathTooLong));
    if any_too_long {
        text.push_str(&format!(
            "\nset the IDE's temp directory (or java.io.tmpdir) to a short path, such as /tmp, \
         so that <base>/{SHARED_DIR_NAME}/<{ID_LEN}-char id>/{LONGEST_SOCKET_FILE_NAME} stays \
         within {MAX_SOCKET_PATH_BYTES} bytes"
        ));
    }
    text
}
