//! The runtime directory's lifecycle: choosing a base, creating `claude-ide-mcp` and `<id>`
//! with exact modes and checked ownership, the `lock` that marks the instance alive, the
//! sockets' modes, the token file, and removal.

use std::ffi::OsString;
use std::fmt;
use std::path::{Path, PathBuf};

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;

use crate::platform::fs::{self as fs_at, file_type, Dir, Errno, FileType, Stat};
use crate::platform::Protection;

use super::stale::cleanup_stale_in;
use super::{
    CandidateRejection, CandidateRejectionReason, RuntimeDirError, ID_BYTES, ID_LEN,
    LOCK_FILE_NAME, LOCK_TEMP_FILE_NAME, LONGEST_SOCKET_FILE_NAME, MAX_REMOVE_DEPTH,
    MAX_SOCKET_PATH_BYTES, SHARED_DIR_NAME, SOCKET_SUFFIX, STALE_GRACE, TOKEN_FILE_NAME,
    TOKEN_TEMP_FILE_NAME,
};

/// Length in bytes of the longest socket path that would live under `base`.
pub fn longest_socket_path_len(base: &Path) -> usize {
    longest_socket_path_len_in(&base.join(SHARED_DIR_NAME))
}

/// This instance's runtime directory, alive (locked) until removed.
///
/// Dropping it removes the directory too, logging any failure; call
/// [`RuntimeDir::remove`] to see the error instead.
pub struct RuntimeDir {
    path: PathBuf,
    id: String,
    /// `<base>/claude-ide-mcp`, kept open to remove `<id>` relative to it.
    shared_fd: Dir,
    /// `<id>`, kept open so every later operation is relative to it.
    dir_fd: Dir,
    /// Holds the exclusive `flock` that marks this instance as alive; the
    /// lock lasts exactly as long as this open file description.
    lock_fd: Option<Dir>,
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
        let base_fd = fs_at::open_dir(base).map_err(|source| RuntimeDirError::Io {
            action: "open base directory",
            path: base.to_owned(),
            source: source.into(),
            hint: "check that it exists and is a directory we can write to",
        })?;
        let (shared_path, shared_fd) =
            match open_or_create_private_dir(&base_fd, SHARED_DIR_NAME, &shared_path) {
                Ok(shared_fd) => (shared_path, shared_fd),
                Err(refusal) => per_user_shared_dir(base, &base_fd, &shared_path, refusal)?,
            };

        if let Err(err) = cleanup_stale_in(&shared_fd, &shared_path, STALE_GRACE) {
            tracing::warn!(error = %err, "stale runtime directory cleanup failed; continuing");
        }

        // 128 random bits never collide in practice; the retry only covers a
        // leftover entry with the same name, which mkdirat reports as EEXIST.
        let mut attempts = 0;
        let (id, dir_fd) = loop {
            let id = new_id()?;
            let path = shared_path.join(&id);
            match fs_at::make_dir_at(&shared_fd, id.as_str(), Protection::PrivateDirectory) {
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
                    let _ = fs_at::remove_dir_at(&shared_fd, id.as_str());
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
    fn take_lock(&self) -> Result<Dir, RuntimeDirError> {
        let temp_path = self.path.join(LOCK_TEMP_FILE_NAME);
        let fd = create_private_file(&self.dir_fd, LOCK_TEMP_FILE_NAME, &temp_path)?;
        fs_at::try_lock_exclusive(&fd).map_err(|errno| RuntimeDirError::Io {
            action: "lock",
            path: temp_path.clone(),
            source: errno.into(),
            hint: "the file system must support flock(2); use a local temp directory",
        })?;
        fs_at::rename_at(&self.dir_fd, LOCK_TEMP_FILE_NAME, LOCK_FILE_NAME).map_err(|errno| {
            RuntimeDirError::Io {
                action: "rename lock file into place",
                path: self.path.join(LOCK_FILE_NAME),
                source: errno.into(),
                hint: "check the file system under the base directory",
            }
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
            fs_at::stat_at(&self.dir_fd, name.as_str()).map_err(|errno| RuntimeDirError::Io {
                action: "inspect socket",
                path: path.clone(),
                source: errno.into(),
                hint: "bind the socket at RuntimeDir::socket_path before securing it",
            })
        };
        let before = stat_it()?;
        if file_type(&before) != FileType::Socket {
            return Err(RuntimeDirError::Insecure {
                path,
                reason: format!("it is a {:?}, not a socket", file_type(&before)),
                hint: "bind the socket at RuntimeDir::socket_path before securing it".into(),
            });
        }
        check_owner(&before, &path)?;
        // fchmodat follows symlinks, but we just saw a socket, and only we can
        // change entries of our private directory.
        fs_at::protect_at(&self.dir_fd, name.as_str(), Protection::PrivateFile).map_err(
            |errno| RuntimeDirError::Io {
                action: "protect (chmod 0600, or an owner-only ACL) the socket",
                path: path.clone(),
                source: errno.into(),
                hint: "check the file system supports permissions on sockets",
            },
        )?;
        let after = stat_it()?;
        if file_type(&after) != FileType::Socket
            || !fs_at::is_protected(&after, Protection::PrivateFile)
        {
            return Err(RuntimeDirError::Insecure {
                path,
                reason: format!(
                    "{} after protecting it, expected a socket with {}",
                    fs_at::describe_protection(&after),
                    Protection::PrivateFile
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
        match fs_at::unlink_at(&self.dir_fd, TOKEN_TEMP_FILE_NAME) {
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
        fs_at::write_all(&fd, token.as_bytes()).map_err(|source| RuntimeDirError::Io {
            action: "write token to",
            path: temp_path.clone(),
            source,
            hint: "check free space on the file system",
        })?;
        // No fsync: the token is worthless after a crash (the instance is gone
        // and the next one makes a new token), and rename alone already makes
        // the switch atomic for concurrent readers.
        drop(fd);
        fs_at::rename_at(&self.dir_fd, TOKEN_TEMP_FILE_NAME, TOKEN_FILE_NAME).map_err(|errno| {
            RuntimeDirError::Io {
                action: "rename token file into place",
                path: self.token_path(),
                source: errno.into(),
                hint: "check the file system under the base directory",
            }
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
            remove_contents(&self.dir_fd, &self.path, 0).and_then(|()| match fs_at::remove_dir_at(
                &self.shared_fd,
                self.id.as_str(),
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

/// Removes everything inside the directory `dir_fd` without following
/// symlinks: subdirectories are opened with `O_NOFOLLOW` and emptied
/// recursively, everything else (symlinks included) is unlinked, which
/// removes a link itself and never its target. Entries owned by someone else
/// are left alone.
pub(super) fn remove_contents(
    dir_fd: &Dir,
    path: &Path,
    depth: usize,
) -> Result<(), RuntimeDirError> {
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
        let entry_path = path.join(&name);
        let stat = match fs_at::stat_at(dir_fd, &name) {
            Ok(stat) => stat,
            Err(Errno::NOENT) => continue,
            Err(errno) => return Err(io_err("inspect", &entry_path, errno)),
        };
        if !fs_at::is_ours(&stat) {
            tracing::warn!(path = %entry_path.display(), "leaving an entry owned by another user");
            continue;
        }
        let is_dir = file_type(&stat) == FileType::Directory;
        if is_dir {
            match fs_at::open_dir_at(dir_fd, &name) {
                Ok(sub_fd) => remove_contents(&sub_fd, &entry_path, depth + 1)?,
                Err(Errno::NOENT) => continue,
                Err(errno) => return Err(io_err("open", &entry_path, errno)),
            }
        }
        let removed = if is_dir {
            fs_at::remove_dir_at(dir_fd, &name)
        } else {
            fs_at::unlink_at(dir_fd, &name)
        };
        match removed {
            Ok(()) | Err(Errno::NOENT) => {}
            Err(errno) => return Err(io_err("remove", &entry_path, errno)),
        }
    }
    Ok(())
}

/// Names in a directory, without `.` and `..`.
pub(crate) fn list_dir(dir_fd: &Dir, path: &Path) -> Result<Vec<OsString>, RuntimeDirError> {
    fs_at::list_dir(dir_fd).map_err(|errno| RuntimeDirError::Io {
        action: "list directory",
        path: path.to_owned(),
        source: errno.into(),
        hint: "check its permissions",
    })
}

/// The shared directory to use when `<base>/claude-ide-mcp` was refused: when it belongs to
/// another user (on a shared `/tmp`, anyone can take the name first), `claude-ide-mcp-<uid>`
/// beside it, held to the same checks; any other refusal stands.
fn per_user_shared_dir(
    base: &Path,
    base_fd: &Dir,
    shared_path: &Path,
    refusal: RuntimeDirError,
) -> Result<(PathBuf, Dir), RuntimeDirError> {
    let owner = fs_at::open_dir_at(base_fd, SHARED_DIR_NAME)
        .ok()
        .and_then(|fd| fstat(&fd, shared_path).ok());
    match owner {
        Some(owner) if !fs_at::is_ours(&owner) => {
            let name = per_user_shared_dir_name(fs_at::user_number());
            let path = base.join(&name);
            if longest_socket_path_len_in(&path) > MAX_SOCKET_PATH_BYTES {
                return Err(refusal);
            }
            tracing::warn!(
                squatted = %shared_path.display(),
                owner = %fs_at::describe_owner(&owner),
                instead = %path.display(),
                "the shared runtime directory belongs to another user; using a directory of our own beside it"
            );
            let fd = open_or_create_private_dir(base_fd, &name, &path)?;
            Ok((path, fd))
        }
        _ => Err(refusal),
    }
}

/// `claude-ide-mcp-<uid>`: the shared directory's name when the plain one is another user's
/// (on Windows the number is the user's RID, the last part of its SID).
pub fn per_user_shared_dir_name(uid: u32) -> String {
    format!("{SHARED_DIR_NAME}-{uid}")
}

/// Length in bytes of the longest socket path under the shared directory `shared`.
fn longest_socket_path_len_in(shared: &Path) -> usize {
    shared
        .join("x".repeat(ID_LEN))
        .join(LONGEST_SOCKET_FILE_NAME)
        .as_os_str()
        .len()
}

/// Creates `name` in `parent` private (mode 0700, or an owner-only ACL) if absent, and opens
/// it, refusing a symlink, another owner, or access for anyone else.
pub(crate) fn open_or_create_private_dir(
    parent: &Dir,
    name: &str,
    path: &Path,
) -> Result<Dir, RuntimeDirError> {
    match fs_at::make_dir_at(parent, name, Protection::PrivateDirectory) {
        Ok(()) => secure_new_dir(parent, name, path),
        Err(Errno::EXIST) => {
            let fd = fs_at::open_dir_at(parent, name)
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

/// Opens a directory we just created and sets its protection exactly (mkdirat's mode was
/// filtered through the umask, which we never touch).
fn secure_new_dir(parent: &Dir, name: &str, path: &Path) -> Result<Dir, RuntimeDirError> {
    let fd = fs_at::open_dir_at(parent, name)
        .map_err(|errno| refusal_or_io(parent, name, path, errno))?;
    // Check the owner before chmod: if someone swapped the entry between our
    // mkdirat and open, it is not ours to chmod.
    check_owner(&fstat(&fd, path)?, path)?;
    fs_at::protect(&fd, Protection::PrivateDirectory).map_err(|errno| RuntimeDirError::Io {
        action: "make private (chmod 0700, or an owner-only ACL)",
        path: path.to_owned(),
        source: errno.into(),
        hint: "check the file system supports permissions",
    })?;
    check_private_dir(&fstat(&fd, path)?, path)?;
    Ok(fd)
}

/// Creates `name` in `dir_fd` exclusively and private (mode 0600, or an owner-only ACL),
/// never through a symlink, and sets the protection exactly.
pub(crate) fn create_private_file(
    dir_fd: &Dir,
    name: &str,
    path: &Path,
) -> Result<Dir, RuntimeDirError> {
    let fd = fs_at::create_new_at(dir_fd, name, Protection::PrivateFile).map_err(|errno| {
        RuntimeDirError::Io {
            action: "create file",
            path: path.to_owned(),
            source: errno.into(),
            hint: "check free space and that nothing else writes to the runtime directory",
        }
    })?;
    fs_at::protect(&fd, Protection::PrivateFile).map_err(|errno| RuntimeDirError::Io {
        action: "make private (chmod 0600, or an owner-only ACL)",
        path: path.to_owned(),
        source: errno.into(),
        hint: "check the file system supports permissions",
    })?;
    Ok(fd)
}

/// Turns a failed [`fs_at::open_dir_at`] into a clear refusal when the entry
/// is a symlink or not a directory.
pub(crate) fn refusal_or_io(
    parent: &Dir,
    name: &str,
    path: &Path,
    errno: Errno,
) -> RuntimeDirError {
    match fs_at::stat_at(parent, name) {
        Ok(stat) if file_type(&stat) == FileType::Symlink => RuntimeDirError::Insecure {
            path: path.to_owned(),
            reason: "it is a symbolic link".into(),
            hint: remedy(path),
        },
        Ok(stat) if file_type(&stat) != FileType::Directory => RuntimeDirError::Insecure {
            path: path.to_owned(),
            reason: format!("it is a {:?}, not a directory", file_type(&stat)),
            hint: remedy(path),
        },
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

pub(crate) fn fstat(fd: &Dir, path: &Path) -> Result<Stat, RuntimeDirError> {
    fs_at::stat(fd).map_err(|errno| RuntimeDirError::Io {
        action: "stat",
        path: path.to_owned(),
        source: errno.into(),
        hint: "check its permissions",
    })
}

/// A directory must be owned by us and private: no access for anyone else and full access
/// for the owner (on Unix, special bits such as a setgid inherited from the base grant
/// nothing on a 0700 directory and are ignored).
pub(crate) fn check_private_dir(stat: &Stat, path: &Path) -> Result<(), RuntimeDirError> {
    check_owner(stat, path)?;
    if !fs_at::is_protected(stat, Protection::PrivateDirectory) {
        return Err(RuntimeDirError::Insecure {
            path: path.to_owned(),
            reason: format!(
                "{}; it must be {}",
                fs_at::describe_protection(stat),
                Protection::PrivateDirectory
            ),
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
    if !fs_at::is_ours(stat) {
        return Err(RuntimeDirError::Insecure {
            path: path.to_owned(),
            reason: format!(
                "it is owned by {}, not by us ({})",
                fs_at::describe_owner(stat),
                fs_at::describe_us()
            ),
            hint: remedy(path),
        });
    }
    Ok(())
}

fn new_id() -> Result<String, RuntimeDirError> {
    let mut bytes = [0u8; ID_BYTES];
    getrandom::fill(&mut bytes).map_err(RuntimeDirError::Random)?;
    Ok(URL_SAFE_NO_PAD.encode(bytes))
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::runtime_dir::stale::looks_like_id;

    #[cfg(unix)]
    #[test]
    fn a_symlink_where_the_instance_directory_goes_is_refused() {
        let base = tempfile::tempdir().unwrap();
        let target = base.path().join("target");
        std::fs::create_dir(&target).unwrap();
        let shared_path = base.path().join(SHARED_DIR_NAME);
        let base_fd = fs_at::open_dir(base.path()).unwrap();
        let shared_fd =
            open_or_create_private_dir(&base_fd, SHARED_DIR_NAME, &shared_path).unwrap();
        let id = new_id().unwrap();
        std::os::unix::fs::symlink(&target, shared_path.join(&id)).unwrap();

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
