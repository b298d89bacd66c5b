//! File operations relative to an open directory descriptor, never through a symlink.
//!
//! Each helper is one system call (or a loop of them) with the flags that make it safe in a
//! directory another process might tamper with: `O_NOFOLLOW` so a planted symlink is refused
//! instead of followed, `O_CLOEXEC` so no child process inherits the descriptor, `O_NOCTTY` so
//! a planted terminal cannot become ours, and `AT_SYMLINK_NOFOLLOW` when inspecting an entry.
//! Modes are passed in and set exactly; the process umask is never read or changed.
//!
//! Nothing here knows what the runtime directory is or what it must look like: the helpers
//! return the system's [`Errno`], and the callers decide what a failure means and what to tell
//! a person. This is the part that would differ between operating systems.

use std::ffi::CString;
use std::io;
use std::os::fd::OwnedFd;
use std::path::Path;

use rustix::fs::{AtFlags, FileType, FlockOperation, Mode, OFlags, Stat};
use rustix::io::Errno;

/// Opens a path as a directory, close-on-exec, with extra `flags`.
pub(crate) fn open_dir(path: &Path, flags: OFlags) -> Result<OwnedFd, Errno> {
    rustix::fs::open(
        path,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC | flags,
        Mode::empty(),
    )
}

/// Opens `name` in `parent` as a directory, refusing a symlink.
pub(crate) fn open_dir_at<P: rustix::path::Arg>(
    parent: &OwnedFd,
    name: P,
) -> Result<OwnedFd, Errno> {
    rustix::fs::openat(
        parent,
        name,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
}

/// Opens the existing file `name` in `dir` for reading, refusing a symlink.
pub(crate) fn open_read_at(dir: &OwnedFd, name: &str) -> Result<OwnedFd, Errno> {
    rustix::fs::openat(
        dir,
        name,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NOCTTY,
        Mode::empty(),
    )
}

/// Creates the file `name` in `dir` exclusively (it must not exist, not even as a symlink)
/// with `mode` filtered through the umask, and opens it for reading and writing. Follow it
/// with [`set_mode`] to make the mode exact.
pub(crate) fn create_new_at(dir: &OwnedFd, name: &str, mode: u32) -> Result<OwnedFd, Errno> {
    rustix::fs::openat(
        dir,
        name,
        OFlags::RDWR
            | OFlags::CREATE
            | OFlags::EXCL
            | OFlags::NOFOLLOW
            | OFlags::CLOEXEC
            | OFlags::NOCTTY,
        Mode::from_raw_mode(mode),
    )
}

/// Creates the directory `name` in `parent` with `mode` filtered through the umask.
pub(crate) fn make_dir_at(parent: &OwnedFd, name: &str, mode: u32) -> Result<(), Errno> {
    rustix::fs::mkdirat(parent, name, Mode::from_raw_mode(mode))
}

/// Sets the permission bits of an open file or directory to exactly `mode`.
pub(crate) fn set_mode(fd: &OwnedFd, mode: u32) -> Result<(), Errno> {
    rustix::fs::fchmod(fd, Mode::from_raw_mode(mode))
}

/// Sets the permission bits of `name` in `dir` to exactly `mode`. This follows a symlink at
/// `name` (there is no portable way not to), so inspect the entry first with [`stat_at`] and
/// use it only where no one else can change the directory's entries.
pub(crate) fn set_mode_at(dir: &OwnedFd, name: &str, mode: u32) -> Result<(), Errno> {
    rustix::fs::chmodat(dir, name, Mode::from_raw_mode(mode), AtFlags::empty())
}

/// The status of an open file or directory.
pub(crate) fn stat(fd: &OwnedFd) -> Result<Stat, Errno> {
    rustix::fs::fstat(fd)
}

/// The status of the entry `name` in `dir` itself: a symlink is described, not followed.
pub(crate) fn stat_at<P: rustix::path::Arg>(dir: &OwnedFd, name: P) -> Result<Stat, Errno> {
    rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)
}

/// Renames `from` to `to` within `dir`, replacing `to` (a symlink there is replaced, never
/// followed).
pub(crate) fn rename_at(dir: &OwnedFd, from: &str, to: &str) -> Result<(), Errno> {
    rustix::fs::renameat(dir, from, dir, to)
}

/// Removes the non-directory entry `name` from `dir`; a symlink is removed itself, never its
/// target.
pub(crate) fn unlink_at<P: rustix::path::Arg>(dir: &OwnedFd, name: P) -> Result<(), Errno> {
    rustix::fs::unlinkat(dir, name, AtFlags::empty())
}

/// Removes the empty directory `name` from `dir`.
pub(crate) fn remove_dir_at<P: rustix::path::Arg>(dir: &OwnedFd, name: P) -> Result<(), Errno> {
    rustix::fs::unlinkat(dir, name, AtFlags::REMOVEDIR)
}

/// Takes the exclusive `flock` on the open file description of `fd`, failing with
/// [`Errno::WOULDBLOCK`] instead of waiting when someone else holds it.
pub(crate) fn try_lock_exclusive(fd: &OwnedFd) -> Result<(), Errno> {
    rustix::fs::flock(fd, FlockOperation::NonBlockingLockExclusive)
}

/// Names in a directory, without `.` and `..`.
pub(crate) fn list_dir(dir: &OwnedFd) -> Result<Vec<CString>, Errno> {
    // read_from opens its own fd for the directory (close-on-exec), leaving ours and its
    // position untouched.
    let mut entries = rustix::fs::Dir::read_from(dir)?;
    let mut names = Vec::new();
    while let Some(entry) = entries.read() {
        let entry = entry?;
        let name = entry.file_name();
        if name != c"." && name != c".." {
            names.push(name.to_owned());
        }
    }
    Ok(names)
}

/// Writes all of `bytes` to `fd`, retrying after a signal.
pub(crate) fn write_all(fd: &OwnedFd, mut bytes: &[u8]) -> io::Result<()> {
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

/// What kind of entry a stat result describes.
pub(crate) fn file_type(stat: &Stat) -> FileType {
    FileType::from_raw_mode(stat.st_mode)
}

/// Permission bits (rwx for user/group/other) of a stat result.
#[allow(clippy::unnecessary_cast, clippy::useless_conversion)] // st_mode is u16 on macOS
pub(crate) fn permission_bits(stat: &Stat) -> u32 {
    (stat.st_mode as u32) & 0o777
}

/// The modification time of a stat result, in whole seconds since 1970 (negative before).
#[allow(clippy::unnecessary_cast)] // st_mtime's type differs between platforms
pub(crate) fn modified_seconds(stat: &Stat) -> i64 {
    stat.st_mtime as i64
}

/// The effective user id of this process: the owner of everything it creates.
pub(crate) fn effective_uid() -> u32 {
    rustix::process::geteuid().as_raw()
}
