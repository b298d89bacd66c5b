//! Stale cleanup: removing the directories of instances that died without removing their
//! own (a crash, SIGKILL). A directory is stale when its `lock` can be taken, since the kernel
//! drops a dead holder's `flock`, or when it has had no `lock` for longer than [`STALE_GRACE`].

use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::platform::fs::{self as fs_at, Dir, Errno, Stat};

use super::lifecycle::{check_private_dir, fstat, list_dir, refusal_or_io, remove_contents};
use super::{RuntimeDirError, ID_LEN, LOCK_FILE_NAME, SHARED_DIR_NAME, STALE_GRACE};

/// Removes the directories of dead instances under `<base>/claude-ide-mcp`,
/// returning the ids removed. [`RuntimeDir::create`](super::RuntimeDir::create) calls this.
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
    let base_fd = fs_at::open_dir(base).map_err(|source| RuntimeDirError::Io {
        action: "open base directory",
        path: base.to_owned(),
        source: source.into(),
        hint: "check that it exists and is a directory",
    })?;
    let shared_fd = match fs_at::open_dir_at(&base_fd, SHARED_DIR_NAME) {
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

pub(super) fn cleanup_stale_in(
    shared_fd: &Dir,
    shared_path: &Path,
    grace: Duration,
) -> Result<Vec<String>, RuntimeDirError> {
    let mut removed = Vec::new();
    for name in list_dir(shared_fd, shared_path)? {
        let Some(id) = name.to_str().filter(|id| looks_like_id(id)) else {
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
    shared_fd: &Dir,
    id: &str,
    path: &Path,
    grace: Duration,
) -> Result<bool, RuntimeDirError> {
    let dir_fd = match fs_at::open_dir_at(shared_fd, id) {
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
    if !fs_at::is_ours(&dir_stat) {
        return Ok(false);
    }
    // Kept open (and locked) until the removal is done, so a second scanner
    // cannot take the lock meanwhile and interleave with us.
    let _lock = match fs_at::open_read_at(&dir_fd, LOCK_FILE_NAME) {
        Ok(lock_fd) => {
            match fs_at::try_lock_exclusive(&lock_fd) {
                Ok(()) => Some(lock_fd),
                // Held: a live instance.
                Err(Errno::WOULDBLOCK) => return Ok(false),
                Err(errno) => {
                    return Err(RuntimeDirError::Io {
                        action: "try to lock",
                        path: path.join(LOCK_FILE_NAME),
                        source: errno.into(),
                        hint: "the file system must support flock(2) (LockFileEx on Windows)",
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
    match fs_at::remove_dir_at(shared_fd, id) {
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

/// Whether `stat`'s modification time is more than `grace` ago (wall clock,
/// since that is what the file system records). A time in the future counts
/// as young.
fn older_than(stat: &Stat, grace: Duration) -> bool {
    let mtime = fs_at::modified_seconds(stat);
    let Ok(mtime) = u64::try_from(mtime) else {
        return true; // before 1970: certainly old
    };
    let modified = UNIX_EPOCH + Duration::from_secs(mtime);
    SystemTime::now()
        .duration_since(modified)
        .is_ok_and(|age| age > grace)
}

/// Whether `name` has the shape of an instance id.
pub(super) fn looks_like_id(name: &str) -> bool {
    name.len() == ID_LEN
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}
