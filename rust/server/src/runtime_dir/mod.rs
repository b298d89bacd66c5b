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

use std::ffi::{CString, OsStr};
use std::fmt;
use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use rustix::fs::{AtFlags, FileType, FlockOperation, Mode, OFlags, Stat};
use rustix::io::Errno;

/// Longest socket path we accept, in bytes. `sun_path` holds 108 bytes on
/// Linux and 104 on macOS, including the terminating NUL; 100 leaves margin.
pub const MAX_SOCKET_PATH_BYTES: usize = 100;

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

const DIR_MODE: u32 = 0o700;
const FILE_MODE: u32 = 0o600;

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
         check that the OS random source (getrandom(2) or /dev/urandom) is available"
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

/// Length in bytes of the longest socket path that would live under `base`.
pub fn longest_socket_path_len(base: &Path) -> usize {
    let placeholder_id = "x".repeat(ID_LEN);
    base.join(SHARED_DIR_NAME)
        .join(placeholder_id)
        .join(LONGEST_SOCKET_FILE_NAME)
        .as_os_str()
        .len()
}

/// This instance's runtime directory, alive (locked) until removed.
///
/// Dropping it removes the directory too, logging any failure; call
/// [`RuntimeDir::remove`] to see the error instead.
pub struct RuntimeDir {
    path: PathBuf,
    id: String,
    /// `<base>/claude-ide-mcp`, kept open to remove `<id>` relative to it.
    shared_fd: OwnedFd,
    /// `<id>`, kept open so every later operation is relative to it.
    dir_fd: OwnedFd,
    /// Holds the exclusive `flock` that marks this instance as alive; the
    /// lock lasts exactly as long as this open file description.
    lock_fd: Option<OwnedFd>,
    removed: bool,
}

impl RuntimeDir {
    /// Creates `<base>/claude-ide-mcp/<id>/` under the first usable base
    /// candidate, locks it, and removes stale directories of dead instances.
    ///
    /// Candidates are tried in order. One is skipped, before anything is
    /// created, when it is relative or when the longest socket path under it
    /// would exceed [`MAX_SOCKET_PATH_BYTES`]; it is also skipped (with a
    /// warning) when setup under it fails, for example because
    /// `claude-ide-mcp` there is a symlink, has group/other permission bits,
    /// or belongs to another user. If none works, the error names every
    /// candidate, its socket path length, and the reason.
    pub fn create(candidates: &[PathBuf]) -> Result<Self, RuntimeDirError> {
        if candidates.is_empty() {
            return Err(RuntimeDirError::NoCandidates);
        }
        let mut rejections = Vec::new();
        for candidate in candidates {
            let socket_path_len = longest_socket_path_len(candidate);
            let reason = if !candidate.is_absolute() {
                CandidateRejectionReason::NotAbsolute
            } else if socket_path_len > MAX_SOCKET_PATH_BYTES {
                CandidateRejectionReason::PathTooLong
            } else {
                match Self::create_under(candidate) {
                    Ok(dir) => return Ok(dir),
                    Err(err) => {
                        tracing::warn!(
                            candidate = %candidate.display(),
                            error = %err,
                            "cannot create the runtime directory under this base; trying the next"
                        );
                        CandidateRejectionReason::Failed(Box::new(err))
                    }
                }
            };
            rejections.push(CandidateRejection {
                candidate: candidate.clone(),
                socket_path_len,
                reason,
            });
        }
        Err(RuntimeDirError::NoUsableCandidate(rejections))
    }

    fn create_under(base: &Path) -> Result<Self, RuntimeDirError> {
        let shared_path = base.join(SHARED_DIR_NAME);
        // The base itself (a system or IDE temp dir) may legitimately be, or
        // sit under, a symlink (macOS /tmp -> /private/tmp), so it is followed.
        let base_fd = open_dir(base, OFlags::empty()).map_err(|source| RuntimeDirError::Io {
            action: "open base directory",
            path: base.to_owned(),
            source: source.into(),
            hint: "check that it exists and is a directory we can write to",
        })?;
        let shared_fd = open_or_create_private_dir(&base_fd, SHARED_DIR_NAME, &shared_path)?;

        if let Err(err) = cleanup_stale_in(&shared_fd, &shared_path, STALE_GRACE) {
            tracing::warn!(error = %err, "stale runtime directory cleanup failed; continuing");
        }

        // 128 random bits never collide in practice; the retry only covers a
        // leftover entry with the same name, which mkdirat reports as EEXIST.
        let mut attempts = 0;
        let (id, dir_fd) = loop {
            let id = new_id()?;
            let path = shared_path.join(&id);
            match rustix::fs::mkdirat(&shared_fd, id.as_str(), Mode::from_raw_mode(DIR_MODE)) {
                Ok(()) => {}
                Err(Errno::EXIST) if attempts < 3 => {
                    attempts += 1;
                    continue;
                }
                Err(errno) => {
                    return Err(RuntimeDirError::Io {
                        action: "create instance directory",
                        path,
                        source: errno.into(),
                        hint: "check free space and permissions of the shared directory",
                    })
                }
            }
            match secure_new_dir(&shared_fd, &id, &path) {
                Ok(dir_fd) => break (id, dir_fd),
                Err(err) => {
                    // Only removes an empty directory; never follows a link.
                    let _ = rustix::fs::unlinkat(&shared_fd, id.as_str(), AtFlags::REMOVEDIR);
                    return Err(err);
                }
            }
        };
        let path = shared_path.join(&id);

        let mut dir = Self {
            path,
            id,
            shared_fd,
            dir_fd,
            lock_fd: None,
            removed: false,
        };
        // On failure `dir` is dropped, which removes the half-made directory.
        dir.lock_fd = Some(dir.take_lock()?);
        Ok(dir)
    }

    /// Creates `lock.new`, locks it, then renames it to `lock`.
    ///
    /// `flock` is used because the kernel drops it when its holder dies, even
    /// on SIGKILL, and it belongs to the open file description, so it cannot
    /// be inherited by accident across exec (the fd is close-on-exec). Locking
    /// before the rename means any `lock` file another instance sees is
    /// already locked while we live: there is no window in which a scanner
    /// could take the lock of a live instance and delete its directory.
    fn take_lock(&self) -> Result<OwnedFd, RuntimeDirError> {
        let temp_path = self.path.join(LOCK_TEMP_FILE_NAME);
        let fd = create_private_file(&self.dir_fd, LOCK_TEMP_FILE_NAME, &temp_path)?;
        rustix::fs::flock(&fd, FlockOperation::NonBlockingLockExclusive).map_err(|errno| {
            RuntimeDirError::Io {
                action: "lock",
                path: temp_path.clone(),
                source: errno.into(),
                hint: "the file system must support flock(2); use a local temp directory",
            }
        })?;
        rustix::fs::renameat(
            &self.dir_fd,
            LOCK_TEMP_FILE_NAME,
            &self.dir_fd,
            LOCK_FILE_NAME,
        )
        .map_err(|errno| RuntimeDirError::Io {
            action: "rename lock file into place",
            path: self.path.join(LOCK_FILE_NAME),
            source: errno.into(),
            hint: "check the file system under the base directory",
        })?;
        Ok(fd)
    }

    /// The instance directory, `<base>/claude-ide-mcp/<id>`.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The instance id: 22 characters of base64url.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Where the socket of server `server_name` (such as `"code"`) lives:
    /// `<dir>/<server_name>.sock`.
    ///
    /// Bind the socket at this path (inside the 0700 directory, so the socket
    /// is unreachable by others whatever the umask gives it), then call
    /// [`RuntimeDir::secure_socket_file`].
    pub fn socket_path(&self, server_name: &str) -> PathBuf {
        self.path.join(socket_file_name(server_name))
    }

    /// The token file clients read, `<dir>/token`.
    pub fn token_path(&self) -> PathBuf {
        self.path.join(TOKEN_FILE_NAME)
    }

    /// Sets the freshly bound socket of `server_name` to mode 0600 and checks
    /// it: it must be a socket, owned by us, not a symlink, and end up 0600.
    ///
    /// Binding creates the socket with umask-derived permissions; this makes
    /// them exact.
    pub fn secure_socket_file(&self, server_name: &str) -> Result<(), RuntimeDirError> {
        validate_server_name(server_name)?;
        let name = socket_file_name(server_name);
        let path = self.path.join(&name);
        let stat_it = || {
            rustix::fs::statat(&self.dir_fd, name.as_str(), AtFlags::SYMLINK_NOFOLLOW).map_err(
                |errno| RuntimeDirError::Io {
                    action: "inspect socket",
                    path: path.clone(),
                    source: errno.into(),
                    hint: "bind the socket at RuntimeDir::socket_path before securing it",
                },
            )
        };
        let before = stat_it()?;
        if FileType::from_raw_mode(before.st_mode) != FileType::Socket {
            return Err(RuntimeDirError::Insecure {
                path,
                reason: format!(
                    "it is a {:?}, not a socket",
                    FileType::from_raw_mode(before.st_mode)
                ),
                hint: "bind the socket at RuntimeDir::socket_path before securing it".into(),
            });
        }
        check_owner(&before, &path)?;
        // fchmodat follows symlinks, but we just saw a socket, and only we can
        // change entries of our 0700 directory.
        rustix::fs::chmodat(
            &self.dir_fd,
            name.as_str(),
            Mode::from_raw_mode(FILE_MODE),
            AtFlags::empty(),
        )
        .map_err(|errno| RuntimeDirError::Io {
            action: "chmod 0600 socket",
            path: path.clone(),
            source: errno.into(),
            hint: "check the file system supports permissions on sockets",
        })?;
        let after = stat_it()?;
        if FileType::from_raw_mode(after.st_mode) != FileType::Socket
            || permission_bits(&after) != FILE_MODE
        {
            return Err(RuntimeDirError::Insecure {
                path,
                reason: format!(
                    "its mode is {:o} after chmod, expected socket with 600",
                    permission_bits(&after)
                ),
                hint: "check the file system supports permissions on sockets".into(),
            });
        }
        Ok(())
    }

    /// Atomically publishes `token` in the token file, mode 0600.
    ///
    /// The token is written to `token.next` (any stale one removed first;
    /// created exclusively, never through a symlink) and renamed over `token`,
    /// so a reader sees the old token or the new one, never a partial file;
    /// a symlink planted at either name is replaced, never followed. The file
    /// holds exactly the token text, without a newline.
    pub fn write_token(&self, token: &str) -> Result<(), RuntimeDirError> {
        let temp_path = self.path.join(TOKEN_TEMP_FILE_NAME);
        match rustix::fs::unlinkat(&self.dir_fd, TOKEN_TEMP_FILE_NAME, AtFlags::empty()) {
            Ok(()) | Err(Errno::NOENT) => {}
            Err(errno) => {
                return Err(RuntimeDirError::Io {
                    action: "remove stale temporary token file",
                    path: temp_path,
                    source: errno.into(),
                    hint: "remove it by hand",
                })
            }
        }
        let fd = create_private_file(&self.dir_fd, TOKEN_TEMP_FILE_NAME, &temp_path)?;
        write_all(&fd, token.as_bytes()).map_err(|source| RuntimeDirError::Io {
            action: "write token to",
            path: temp_path.clone(),
            source,
            hint: "check free space on the file system",
        })?;
        // No fsync: the token is worthless after a crash (the instance is gone
        // and the next one makes a new token), and rename alone already makes
        // the switch atomic for concurrent readers.
        drop(fd);
        rustix::fs::renameat(
            &self.dir_fd,
            TOKEN_TEMP_FILE_NAME,
            &self.dir_fd,
            TOKEN_FILE_NAME,
        )
        .map_err(|errno| RuntimeDirError::Io {
            action: "rename token file into place",
            path: self.token_path(),
            source: errno.into(),
            hint: "check the file system under the base directory",
        })
    }

    /// Removes the instance directory and everything in it, then releases
    /// the lock. The shared `claude-ide-mcp` directory is left in place even
    /// when empty: removing it could race with another instance that has just
    /// checked it and is about to create its own directory inside.
    pub fn remove(mut self) -> Result<(), RuntimeDirError> {
        self.remove_inner()
    }

    fn remove_inner(&mut self) -> Result<(), RuntimeDirError> {
        if self.removed {
            return Ok(());
        }
        self.removed = true;
        // The lock is released only after the directory is gone: while we
        // hold it no scanner treats the directory as stale, and once `lock`
        // is unlinked a scanner sees a young directory without a lock file,
        // which it also leaves alone.
        let result =
            remove_contents(&self.dir_fd, &self.path, 0).and_then(|()| match rustix::fs::unlinkat(
                &self.shared_fd,
                self.id.as_str(),
                AtFlags::REMOVEDIR,
            ) {
                Ok(()) | Err(Errno::NOENT) => Ok(()),
                Err(errno) => Err(RuntimeDirError::Io {
                    action: "remove instance directory",
                    path: self.path.clone(),
                    source: errno.into(),
                    hint: "remove it by hand; the next start also cleans it up",
                }),
            });
        self.lock_fd = None;
        result
    }
}

impl Drop for RuntimeDir {
    fn drop(&mut self) {
        if let Err(err) = self.remove_inner() {
            tracing::warn!(error = %err, "could not remove the runtime directory");
        }
    }
}

impl fmt::Debug for RuntimeDir {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RuntimeDir")
            .field("path", &self.path)
            .field("removed", &self.removed)
            .finish_non_exhaustive()
    }
}

/// Removes the directories of dead instances under `<base>/claude-ide-mcp`,
/// returning the ids removed. [`RuntimeDir::create`] calls this.
///
/// An entry is removed only if it is a directory named like an instance id,
/// owned by us, and either its `lock` file can be locked (its owner died, which
/// released the lock) or it has no `lock` file and was last modified more than
/// [`STALE_GRACE`] ago. A live instance's directory (lock held) is never
/// touched, nor is anything owned by another user, and removal never follows
/// a symlink. A missing `claude-ide-mcp` means nothing to clean.
pub fn cleanup_stale(base: &Path) -> Result<Vec<String>, RuntimeDirError> {
    cleanup_stale_with_grace(base, STALE_GRACE)
}

/// [`cleanup_stale`] with a chosen grace period for lock-less directories.
pub fn cleanup_stale_with_grace(
    base: &Path,
    grace: Duration,
) -> Result<Vec<String>, RuntimeDirError> {
    let shared_path = base.join(SHARED_DIR_NAME);
    let base_fd = open_dir(base, OFlags::empty()).map_err(|source| RuntimeDirError::Io {
        action: "open base directory",
        path: base.to_owned(),
        source: source.into(),
        hint: "check that it exists and is a directory",
    })?;
    let shared_fd = match open_dir_at(&base_fd, SHARED_DIR_NAME) {
        Ok(fd) => fd,
        Err(Errno::NOENT) => return Ok(Vec::new()),
        Err(errno) => {
            return Err(refusal_or_io(
                &base_fd,
                SHARED_DIR_NAME,
                &shared_path,
                errno,
            ))
        }
    };
    check_private_dir(&fstat(&shared_fd, &shared_path)?, &shared_path)?;
    cleanup_stale_in(&shared_fd, &shared_path, grace)
}

fn cleanup_stale_in(
    shared_fd: &OwnedFd,
    shared_path: &Path,
    grace: Duration,
) -> Result<Vec<String>, RuntimeDirError> {
    let mut removed = Vec::new();
    for name in list_dir(shared_fd, shared_path)? {
        let Some(id) = name.to_str().ok().filter(|id| looks_like_id(id)) else {
            continue;
        };
        let path = shared_path.join(id);
        match remove_if_stale(shared_fd, id, &path, grace) {
            Ok(true) => {
                tracing::info!(path = %path.display(), "removed stale runtime directory");
                removed.push(id.to_owned());
            }
            Ok(false) => {}
            Err(err) => {
                tracing::warn!(error = %err, "could not clean up a stale runtime directory");
            }
        }
    }
    Ok(removed)
}

/// Removes `<shared>/<id>` if it is ours and stale; `Ok(false)` if it is
/// left alone.
fn remove_if_stale(
    shared_fd: &OwnedFd,
    id: &str,
    path: &Path,
    grace: Duration,
) -> Result<bool, RuntimeDirError> {
    let dir_fd = match open_dir_at(shared_fd, id) {
        Ok(fd) => fd,
        // Gone meanwhile, a symlink, or not a directory: not ours to touch.
        Err(Errno::NOENT | Errno::LOOP | Errno::NOTDIR) => return Ok(false),
        Err(errno) => {
            return Err(RuntimeDirError::Io {
                action: "open",
                path: path.to_owned(),
                source: errno.into(),
                hint: "check its permissions",
            })
        }
    };
    let dir_stat = fstat(&dir_fd, path)?;
    if dir_stat.st_uid != our_uid() {
        return Ok(false);
    }
    // Kept open (and locked) until the removal is done, so a second scanner
    // cannot take the lock meanwhile and interleave with us.
    let _lock = match rustix::fs::openat(
        &dir_fd,
        LOCK_FILE_NAME,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NOCTTY,
        Mode::empty(),
    ) {
        Ok(lock_fd) => {
            match rustix::fs::flock(&lock_fd, FlockOperation::NonBlockingLockExclusive) {
                Ok(()) => Some(lock_fd),
                // Held: a live instance.
                Err(Errno::WOULDBLOCK) => return Ok(false),
                Err(errno) => {
                    return Err(RuntimeDirError::Io {
                        action: "try to lock",
                        path: path.join(LOCK_FILE_NAME),
                        source: errno.into(),
                        hint: "the file system must support flock(2)",
                    })
                }
            }
        }
        Err(Errno::NOENT) => {
            // No lock yet (an instance being created) or any more (one being
            // removed): only stale once nothing has happened in it for a while.
            if !older_than(&dir_stat, grace) {
                return Ok(false);
            }
            None
        }
        // A symlink or something else odd at `lock`: the owner did not make
        // that, so treat the directory as lock-less.
        Err(_) if older_than(&dir_stat, grace) => None,
        Err(_) => return Ok(false),
    };
    remove_contents(&dir_fd, path, 0)?;
    match rustix::fs::unlinkat(shared_fd, id, AtFlags::REMOVEDIR) {
        Ok(()) => Ok(true),
        Err(Errno::NOENT) => Ok(false),
        Err(errno) => Err(RuntimeDirError::Io {
            action: "remove stale directory",
            path: path.to_owned(),
            source: errno.into(),
            hint: "it may hold files of another user; remove it by hand",
        }),
    }
}

/// Removes everything inside the directory `dir_fd` without following
/// symlinks: subdirectories are opened with `O_NOFOLLOW` and emptied
/// recursively, everything else (symlinks included) is unlinked, which
/// removes a link itself and never its target. Entries owned by someone else
/// are left alone.
fn remove_contents(dir_fd: &OwnedFd, path: &Path, depth: usize) -> Result<(), RuntimeDirError> {
    if depth > MAX_REMOVE_DEPTH {
        return Err(RuntimeDirError::Insecure {
            path: path.to_owned(),
            reason: format!("directories nested deeper than {MAX_REMOVE_DEPTH} levels"),
            hint: "remove it by hand".into(),
        });
    }
    let io_err = |action, entry: &Path, errno: Errno| RuntimeDirError::Io {
        action,
        path: entry.to_owned(),
        source: errno.into(),
        hint: "remove it by hand",
    };
    for name in list_dir(dir_fd, path)? {
        let entry_path = path.join(OsStr::from_bytes(name.to_bytes()));
        let stat = match rustix::fs::statat(dir_fd, name.as_c_str(), AtFlags::SYMLINK_NOFOLLOW) {
            Ok(stat) => stat,
            Err(Errno::NOENT) => continue,
            Err(errno) => return Err(io_err("inspect", &entry_path, errno)),
        };
        if stat.st_uid != our_uid() {
            tracing::warn!(path = %entry_path.display(), "leaving an entry owned by another user");
            continue;
        }
        let is_dir = FileType::from_raw_mode(stat.st_mode) == FileType::Directory;
        if is_dir {
            match open_dir_at(dir_fd, name.as_c_str()) {
                Ok(sub_fd) => remove_contents(&sub_fd, &entry_path, depth + 1)?,
                Err(Errno::NOENT) => continue,
                Err(errno) => return Err(io_err("open", &entry_path, errno)),
            }
        }
        let flags = if is_dir {
            AtFlags::REMOVEDIR
        } else {
            AtFlags::empty()
        };
        match rustix::fs::unlinkat(dir_fd, name.as_c_str(), flags) {
            Ok(()) | Err(Errno::NOENT) => {}
            Err(errno) => return Err(io_err("remove", &entry_path, errno)),
        }
    }
    Ok(())
}

/// Names in a directory, without `.` and `..`.
fn list_dir(dir_fd: &OwnedFd, path: &Path) -> Result<Vec<CString>, RuntimeDirError> {
    let err = |errno: Errno| RuntimeDirError::Io {
        action: "list directory",
        path: path.to_owned(),
        source: errno.into(),
        hint: "check its permissions",
    };
    // read_from opens its own fd for the directory (close-on-exec), leaving
    // ours and its position untouched.
    let mut dir = rustix::fs::Dir::read_from(dir_fd).map_err(err)?;
    let mut names = Vec::new();
    while let Some(entry) = dir.read() {
        let entry = entry.map_err(err)?;
        let name = entry.file_name();
        if name != c"." && name != c".." {
            names.push(name.to_owned());
        }
    }
    Ok(names)
}

/// Creates `name` in `parent` with mode 0700 (if absent) and opens it,
/// refusing a symlink, another owner, or group/other permission bits.
fn open_or_create_private_dir(
    parent: &OwnedFd,
    name: &str,
    path: &Path,
) -> Result<OwnedFd, RuntimeDirError> {
    match rustix::fs::mkdirat(parent, name, Mode::from_raw_mode(DIR_MODE)) {
        Ok(()) => secure_new_dir(parent, name, path),
        Err(Errno::EXIST) => {
            let fd = open_dir_at(parent, name)
                .map_err(|errno| refusal_or_io(parent, name, path, errno))?;
            check_private_dir(&fstat(&fd, path)?, path)?;
            Ok(fd)
        }
        Err(errno) => Err(RuntimeDirError::Io {
            action: "create directory",
            path: path.to_owned(),
            source: errno.into(),
            hint: "check that the base directory is writable",
        }),
    }
}

/// Opens a directory we just created and sets its mode to exactly 0700
/// (mkdirat's mode was filtered through the umask, which we never touch).
fn secure_new_dir(parent: &OwnedFd, name: &str, path: &Path) -> Result<OwnedFd, RuntimeDirError> {
    let fd = open_dir_at(parent, name).map_err(|errno| refusal_or_io(parent, name, path, errno))?;
    // Check the owner before chmod: if someone swapped the entry between our
    // mkdirat and open, it is not ours to chmod.
    check_owner(&fstat(&fd, path)?, path)?;
    rustix::fs::fchmod(&fd, Mode::from_raw_mode(DIR_MODE)).map_err(|errno| {
        RuntimeDirError::Io {
            action: "chmod 0700",
            path: path.to_owned(),
            source: errno.into(),
            hint: "check the file system supports Unix permissions",
        }
    })?;
    check_private_dir(&fstat(&fd, path)?, path)?;
    Ok(fd)
}

/// Creates `name` in `dir_fd` exclusively, mode 0600, never through a
/// symlink, and sets the mode exactly.
fn create_private_file(
    dir_fd: &OwnedFd,
    name: &str,
    path: &Path,
) -> Result<OwnedFd, RuntimeDirError> {
    let fd = rustix::fs::openat(
        dir_fd,
        name,
        OFlags::RDWR
            | OFlags::CREATE
            | OFlags::EXCL
            | OFlags::NOFOLLOW
            | OFlags::CLOEXEC
            | OFlags::NOCTTY,
        Mode::from_raw_mode(FILE_MODE),
    )
    .map_err(|errno| RuntimeDirError::Io {
        action: "create file",
        path: path.to_owned(),
        source: errno.into(),
        hint: "check free space and that nothing else writes to the runtime directory",
    })?;
    rustix::fs::fchmod(&fd, Mode::from_raw_mode(FILE_MODE)).map_err(|errno| {
        RuntimeDirError::Io {
            action: "chmod 0600",
            path: path.to_owned(),
            source: errno.into(),
            hint: "check the file system supports Unix permissions",
        }
    })?;
    Ok(fd)
}

/// Opens a path as a directory, close-on-exec, with extra `flags`.
fn open_dir(path: &Path, flags: OFlags) -> Result<OwnedFd, Errno> {
    rustix::fs::open(
        path,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC | flags,
        Mode::empty(),
    )
}

/// Opens `name` in `parent` as a directory, refusing a symlink.
fn open_dir_at<P: rustix::path::Arg>(parent: &OwnedFd, name: P) -> Result<OwnedFd, Errno> {
    rustix::fs::openat(
        parent,
        name,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
}

/// Turns a failed [`open_dir_at`] into a clear refusal when the entry is a
/// symlink or not a directory.
fn refusal_or_io(parent: &OwnedFd, name: &str, path: &Path, errno: Errno) -> RuntimeDirError {
    match rustix::fs::statat(parent, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(stat) if FileType::from_raw_mode(stat.st_mode) == FileType::Symlink => {
            RuntimeDirError::Insecure {
                path: path.to_owned(),
                reason: "it is a symbolic link".into(),
                hint: remedy(path),
            }
        }
        Ok(stat) if FileType::from_raw_mode(stat.st_mode) != FileType::Directory => {
            RuntimeDirError::Insecure {
                path: path.to_owned(),
                reason: format!(
                    "it is a {:?}, not a directory",
                    FileType::from_raw_mode(stat.st_mode)
                ),
                hint: remedy(path),
            }
        }
        _ => RuntimeDirError::Io {
            action: "open directory",
            path: path.to_owned(),
            source: errno.into(),
            hint: "check its permissions",
        },
    }
}

fn remedy(path: &Path) -> String {
    format!(
        "if you did not create it, someone may be trying to intercept the IDE's sockets; \
         remove it (rm -rf {}) or point the IDE's temp directory elsewhere",
        path.display()
    )
}

fn fstat(fd: &OwnedFd, path: &Path) -> Result<Stat, RuntimeDirError> {
    rustix::fs::fstat(fd).map_err(|errno| RuntimeDirError::Io {
        action: "stat",
        path: path.to_owned(),
        source: errno.into(),
        hint: "check its permissions",
    })
}

/// A directory must be owned by us with no group/other permission bits and
/// full owner access. Special bits (setgid inherited from the base) grant
/// nothing on a 0700 directory and are ignored.
fn check_private_dir(stat: &Stat, path: &Path) -> Result<(), RuntimeDirError> {
    check_owner(stat, path)?;
    let mode = permission_bits(stat);
    if mode & 0o077 != 0 || mode & 0o700 != 0o700 {
        return Err(RuntimeDirError::Insecure {
            path: path.to_owned(),
            reason: format!("its mode is {mode:o}; it must be 700 (only the owner has access)"),
            hint: format!(
                "{}; or, if you created it yourself, chmod 700 {}",
                remedy(path),
                path.display()
            ),
        });
    }
    Ok(())
}

fn check_owner(stat: &Stat, path: &Path) -> Result<(), RuntimeDirError> {
    let us = our_uid();
    if stat.st_uid != us {
        return Err(RuntimeDirError::Insecure {
            path: path.to_owned(),
            reason: format!("it is owned by uid {}, not by us (uid {us})", stat.st_uid),
            hint: remedy(path),
        });
    }
    Ok(())
}

fn our_uid() -> u32 {
    rustix::process::geteuid().as_raw()
}

/// Permission bits (rwx for user/group/other) of a stat result.
#[allow(clippy::unnecessary_cast, clippy::useless_conversion)] // st_mode is u16 on macOS
fn permission_bits(stat: &Stat) -> u32 {
    (stat.st_mode as u32) & 0o777
}

/// Whether `stat`'s modification time is more than `grace` ago (wall clock,
/// since that is what the file system records). A time in the future counts
/// as young.
#[allow(clippy::unnecessary_cast)] // st_mtime's type differs between platforms
fn older_than(stat: &Stat, grace: Duration) -> bool {
    let mtime = stat.st_mtime as i64;
    let Ok(mtime) = u64::try_from(mtime) else {
        return true; // before 1970: certainly old
    };
    let modified = UNIX_EPOCH + Duration::from_secs(mtime);
    SystemTime::now()
        .duration_since(modified)
        .is_ok_and(|age| age > grace)
}

fn new_id() -> Result<String, RuntimeDirError> {
    let mut bytes = [0u8; ID_BYTES];
    getrandom::fill(&mut bytes).map_err(RuntimeDirError::Random)?;
    Ok(URL_SAFE_NO_PAD.encode(bytes))
}

/// Whether `name` has the shape of an instance id.
fn looks_like_id(name: &str) -> bool {
    name.len() == ID_LEN
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

fn validate_server_name(name: &str) -> Result<(), RuntimeDirError> {
    if name.is_empty() || name == "." || name == ".." || name.contains(['/', '\0']) {
        return Err(RuntimeDirError::InvalidName(name.to_owned()));
    }
    Ok(())
}

fn socket_file_name(server_name: &str) -> String {
    format!("{server_name}{SOCKET_SUFFIX}")
}

fn write_all(fd: &OwnedFd, mut bytes: &[u8]) -> io::Result<()> {
    while !bytes.is_empty() {
        match rustix::io::write(fd, bytes) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => bytes = &bytes[n..],
            Err(Errno::INTR) => {}
            Err(errno) => return Err(errno.into()),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn a_symlink_where_the_instance_directory_goes_is_refused() {
        let base = tempfile::tempdir().unwrap();
        let target = base.path().join("target");
        std::fs::create_dir(&target).unwrap();
        let shared_path = base.path().join(SHARED_DIR_NAME);
        let base_fd = open_dir(base.path(), OFlags::empty()).unwrap();
        let shared_fd =
            open_or_create_private_dir(&base_fd, SHARED_DIR_NAME, &shared_path).unwrap();
        let id = new_id().unwrap();
        symlink(&target, shared_path.join(&id)).unwrap();

        let err = secure_new_dir(&shared_fd, &id, &shared_path.join(&id)).unwrap_err();
        assert!(err.to_string().contains("symbolic link"), "{err}");
        let target_mode = std::fs::metadata(&target).unwrap().permissions();
        assert_eq!(
            std::os::unix::fs::PermissionsExt::mode(&target_mode) & 0o777,
            0o755,
            "the link target was not chmod-ed"
        );
    }

    #[test]
    fn ids_have_the_documented_shape() {
        for _ in 0..50 {
            let id = new_id().unwrap();
            assert_eq!(id.len(), ID_LEN);
            assert!(looks_like_id(&id));
        }
        assert!(!looks_like_id("short"));
        assert!(!looks_like_id(&"a/".repeat(11)));
    }
}
