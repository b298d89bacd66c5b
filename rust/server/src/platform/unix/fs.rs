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
//! a person. Windows has the same functions over handles (`platform/windows/fs.rs`).

use std::ffi::{OsStr, OsString};
use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStringExt;
use std::path::Path;

use rustix::fs::{AtFlags, FlockOperation, Mode, OFlags};

pub(crate) use rustix::fs::{FileType, Stat};
pub(crate) use rustix::io::Errno;

use super::super::Protection;

/// An open directory (or file: on Unix both are descriptors).
pub(crate) type Dir = OwnedFd;

/// The mode each protection stands for (built from rustix's flags, since `mode_t` is 32 bits
/// on Linux and 16 on macOS).
fn mode_of(protection: Protection) -> Mode {
    match protection {
        Protection::PrivateDirectory => Mode::RWXU,
        Protection::PrivateFile => Mode::RUSR | Mode::WUSR,
    }
}

/// How a protection is named in a message.
pub(crate) fn protection_name(protection: Protection) -> &'static str {
    match protection {
        Protection::PrivateDirectory => "mode 700 (only the owner has access)",
        Protection::PrivateFile => "mode 600 (only the owner has access)",
    }
}

/// Opens a path as a directory, close-on-exec; a symlink on the way is followed.
pub(crate) fn open_dir(path: &Path) -> Result<Dir, Errno> {
    rustix::fs::open(
        path,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
}

/// Opens `name` in `parent` as a directory, refusing a symlink.
pub(crate) fn open_dir_at<N: AsRef<OsStr>>(parent: &Dir, name: N) -> Result<Dir, Errno> {
    rustix::fs::openat(
        parent,
        name.as_ref(),
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
/// with the mode of `protection` filtered through the umask, and opens it for reading and
/// writing. Follow it with [`protect`] to make the mode exact.
pub(crate) fn create_new_at(
    dir: &OwnedFd,
    name: &str,
    protection: Protection,
) -> Result<OwnedFd, Errno> {
    rustix::fs::openat(
        dir,
        name,
        OFlags::RDWR
            | OFlags::CREATE
            | OFlags::EXCL
            | OFlags::NOFOLLOW
            | OFlags::CLOEXEC
            | OFlags::NOCTTY,
        mode_of(protection),
    )
}

/// Creates the directory `name` in `parent` with the mode of `protection` filtered through
/// the umask. Follow it with [`protect`] to make the mode exact.
pub(crate) fn make_dir_at(
    parent: &OwnedFd,
    name: &str,
    protection: Protection,
) -> Result<(), Errno> {
    rustix::fs::mkdirat(parent, name, mode_of(protection))
}

/// Sets the permission bits of an open file or directory to exactly those of `protection`.
pub(crate) fn protect(fd: &OwnedFd, protection: Protection) -> Result<(), Errno> {
    rustix::fs::fchmod(fd, mode_of(protection))
}

/// Sets the permission bits of `name` in `dir` to exactly those of `protection`. This follows
/// a symlink at `name` (there is no portable way not to), so inspect the entry first with
/// [`stat_at`] and use it only where no one else can change the directory's entries.
pub(crate) fn protect_at(dir: &OwnedFd, name: &str, protection: Protection) -> Result<(), Errno> {
    rustix::fs::chmodat(dir, name, mode_of(protection), AtFlags::empty())
}

/// An open file as a `std::fs::File`, for reading it through.
pub(crate) fn into_file(fd: OwnedFd) -> std::fs::File {
    std::fs::File::from(fd)
}

/// The status of an open file or directory.
pub(crate) fn stat(fd: &OwnedFd) -> Result<Stat, Errno> {
    rustix::fs::fstat(fd)
}

/// The status of the entry `name` in `dir` itself: a symlink is described, not followed.
pub(crate) fn stat_at<N: AsRef<OsStr>>(dir: &OwnedFd, name: N) -> Result<Stat, Errno> {
    rustix::fs::statat(dir, name.as_ref(), AtFlags::SYMLINK_NOFOLLOW)
}

/// Renames `from` to `to` within `dir`, replacing `to` (a symlink there is replaced, never
/// followed).
pub(crate) fn rename_at(dir: &OwnedFd, from: &str, to: &str) -> Result<(), Errno> {
    rustix::fs::renameat(dir, from, dir, to)
}

/// Removes the non-directory entry `name` from `dir`; a symlink is removed itself, never its
/// target.
pub(crate) fn unlink_at<N: AsRef<OsStr>>(dir: &OwnedFd, name: N) -> Result<(), Errno> {
    rustix::fs::unlinkat(dir, name.as_ref(), AtFlags::empty())
}

/// Removes the empty directory `name` from `dir`.
pub(crate) fn remove_dir_at<N: AsRef<OsStr>>(dir: &OwnedFd, name: N) -> Result<(), Errno> {
    rustix::fs::unlinkat(dir, name.as_ref(), AtFlags::REMOVEDIR)
}

/// Takes the exclusive `flock` on the open file description of `fd`, failing with
/// [`Errno::WOULDBLOCK`] instead of waiting when someone else holds it.
pub(crate) fn try_lock_exclusive(fd: &OwnedFd) -> Result<(), Errno> {
    rustix::fs::flock(fd, FlockOperation::NonBlockingLockExclusive)
}

/// Names in a directory, without `.` and `..`.
pub(crate) fn list_dir(dir: &OwnedFd) -> Result<Vec<OsString>, Errno> {
    // read_from opens its own fd for the directory (close-on-exec), leaving ours and its
    // position untouched.
    let mut entries = rustix::fs::Dir::read_from(dir)?;
    let mut names = Vec::new();
    while let Some(entry) = entries.read() {
        let entry = entry?;
        let name = entry.file_name();
        if name != c"." && name != c".." {
            names.push(OsString::from_vec(name.to_bytes().to_vec()));
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

/// Whether a stat result shows exactly the protection asked for: for a directory, no
/// group/other bits and full owner access (special bits such as an inherited setgid grant
/// nothing on a 0700 directory); for a file, exactly 0600.
pub(crate) fn is_protected(stat: &Stat, protection: Protection) -> bool {
    let mode = permission_bits(stat);
    match protection {
        Protection::PrivateDirectory => mode & 0o077 == 0 && mode & 0o700 == 0o700,
        Protection::PrivateFile => mode == 0o600,
    }
}

/// What a stat result's protection is, for a message: its mode.
pub(crate) fn describe_protection(stat: &Stat) -> String {
    format!("its mode is {:o}", permission_bits(stat))
}

/// Permission bits (rwx for user/group/other) of a stat result.
#[allow(clippy::unnecessary_cast, clippy::useless_conversion)] // st_mode is u16 on macOS
fn permission_bits(stat: &Stat) -> u32 {
    (stat.st_mode as u32) & 0o777
}

/// The size in bytes.
pub(crate) fn size(stat: &Stat) -> u64 {
    u64::try_from(stat.st_size).unwrap_or(u64::MAX)
}

/// The modification time of a stat result, in whole seconds since 1970 (negative before).
#[allow(clippy::unnecessary_cast)] // st_mtime's type differs between platforms
pub(crate) fn modified_seconds(stat: &Stat) -> i64 {
    stat.st_mtime as i64
}

/// Whether a stat result's owner is this process's user.
pub(crate) fn is_ours(stat: &Stat) -> bool {
    stat.st_uid == super::current_user()
}

/// Who owns a stat result's entry, for a message.
pub(crate) fn describe_owner(stat: &Stat) -> String {
    format!("uid {}", stat.st_uid)
}

/// Who this process's user is, for a message.
pub(crate) fn describe_us() -> String {
    format!("uid {}", super::current_user())
}

/// A number that tells this user apart from others, for a per-user name: the uid.
pub(crate) fn user_number() -> u32 {
    super::current_user()
}
