//! The runtime directory's file operations on Windows, under the same names as
//! `platform/unix/fs.rs`.
//!
//! Windows has no `openat`: an entry is opened by the path of its directory joined with its
//! name, always with `FILE_FLAG_OPEN_REPARSE_POINT` so that a symlink or junction planted there
//! is seen (and refused) rather than followed. What makes that safe is the protection: the
//! shared and instance directories carry an owner-only, protected DACL, so no other user can
//! create, rename or replace an entry inside them (and `%TEMP%`, the usual base, is the user's
//! own). The owner-only DACL stands for 0700/0600; `LockFileEx` (released by the system when
//! its holder dies) stands for `flock`. Handles are opened sharing read, write and delete, so
//! a held lock file can still be renamed and removed as on Unix.

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::io::{self, Write as _};
use std::os::windows::ffi::OsStrExt;
use std::os::windows::io::{AsRawHandle, FromRawHandle};
use std::path::{Path, PathBuf};

use windows_sys::Win32::Foundation::{
    GetLastError, ERROR_ALREADY_EXISTS, ERROR_DIRECTORY, ERROR_FILE_EXISTS, ERROR_FILE_NOT_FOUND,
    ERROR_LOCK_VIOLATION, ERROR_PATH_NOT_FOUND, ERROR_STOPPED_ON_SYMLINK, FILETIME, GENERIC_READ,
    GENERIC_WRITE, INVALID_HANDLE_VALUE,
};
use windows_sys::Win32::Security::SECURITY_ATTRIBUTES;
use windows_sys::Win32::Storage::FileSystem::{
    CreateDirectoryW, CreateFileW, DeleteFileW, FileAttributeTagInfo, GetFileInformationByHandleEx,
    GetFileTime, LockFileEx, MoveFileExW, RemoveDirectoryW, CREATE_NEW, FILE_ATTRIBUTE_DIRECTORY,
    FILE_ATTRIBUTE_NORMAL, FILE_ATTRIBUTE_REPARSE_POINT, FILE_ATTRIBUTE_TAG_INFO,
    FILE_FLAG_BACKUP_SEMANTICS, FILE_FLAG_OPEN_REPARSE_POINT, FILE_LIST_DIRECTORY,
    FILE_READ_ATTRIBUTES, FILE_SHARE_DELETE, FILE_SHARE_READ, FILE_SHARE_WRITE,
    LOCKFILE_EXCLUSIVE_LOCK, LOCKFILE_FAIL_IMMEDIATELY, MOVEFILE_REPLACE_EXISTING, OPEN_EXISTING,
    READ_CONTROL, SYNCHRONIZE, WRITE_DAC,
};
use windows_sys::Win32::System::IO::OVERLAPPED;

use super::super::Protection;
use super::security::{self, OwnerOnly};

/// `IO_REPARSE_TAG_AF_UNIX`: the reparse point an AF_UNIX socket file is.
const IO_REPARSE_TAG_AF_UNIX: u32 = 0x8000_0023;

/// Seconds between 1601-01-01 (FILETIME's epoch) and 1970-01-01.
const FILETIME_EPOCH_OFFSET_SECONDS: i64 = 11_644_473_600;

/// A system error, normalised so that each condition the callers match on has one value
/// (both "file not found" and "path not found" are [`Errno::NOENT`]).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct Errno(u32);

impl Errno {
    /// The entry does not exist.
    pub(crate) const NOENT: Errno = Errno(ERROR_FILE_NOT_FOUND);
    /// The entry exists already.
    pub(crate) const EXIST: Errno = Errno(ERROR_ALREADY_EXISTS);
    /// The entry is a reparse point (a symlink, a junction) where none may be.
    pub(crate) const LOOP: Errno = Errno(ERROR_STOPPED_ON_SYMLINK);
    /// The entry is not a directory.
    pub(crate) const NOTDIR: Errno = Errno(ERROR_DIRECTORY);
    /// Someone else holds the lock.
    pub(crate) const WOULDBLOCK: Errno = Errno(ERROR_LOCK_VIOLATION);

    fn from_code(code: u32) -> Errno {
        Errno(match code {
            ERROR_PATH_NOT_FOUND => ERROR_FILE_NOT_FOUND,
            ERROR_FILE_EXISTS => ERROR_ALREADY_EXISTS,
            other => other,
        })
    }

    fn last() -> Errno {
        // SAFETY: plain call.
        Errno::from_code(unsafe { GetLastError() })
    }

    fn of(error: &io::Error) -> Errno {
        match error.raw_os_error() {
            Some(code) => Errno::from_code(code as u32),
            None => Errno(windows_sys::Win32::Foundation::ERROR_GEN_FAILURE),
        }
    }
}

impl From<Errno> for io::Error {
    fn from(errno: Errno) -> io::Error {
        io::Error::from_raw_os_error(errno.0 as i32)
    }
}

impl fmt::Debug for Errno {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "{} ({})", io::Error::from(*self), self.0)
    }
}

impl fmt::Display for Errno {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&io::Error::from(*self), formatter)
    }
}

/// An open file or directory, and the path it was opened by (Windows has no `*at` calls).
#[derive(Debug)]
pub(crate) struct Dir {
    file: std::fs::File,
    path: PathBuf,
}

/// What kind of entry a status describes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FileType {
    /// A plain file.
    RegularFile,
    /// A directory.
    Directory,
    /// A symlink, a junction or another reparse point that redirects.
    Symlink,
    /// An AF_UNIX socket file.
    Socket,
}

/// The status of an entry: its kind, size, owner, protection and modification time.
#[derive(Clone, Debug)]
pub(crate) struct Stat {
    kind: FileType,
    size: u64,
    access: security::Access,
    modified_seconds: i64,
}

/// How a protection is named in a message.
pub(crate) fn protection_name(_protection: Protection) -> &'static str {
    "an owner-only, protected ACL (only the owner has access)"
}

const SHARE_ALL: u32 = FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE;

fn wide(path: &Path) -> Vec<u16> {
    path.as_os_str().encode_wide().chain([0]).collect()
}

fn open(
    path: &Path,
    access: u32,
    disposition: u32,
    flags: u32,
    attributes: Option<&SECURITY_ATTRIBUTES>,
) -> Result<std::fs::File, Errno> {
    let name = wide(path);
    // SAFETY: a NUL-terminated path; the attributes, when given, outlive the call.
    let handle = unsafe {
        CreateFileW(
            name.as_ptr(),
            access,
            SHARE_ALL,
            attributes.map_or(std::ptr::null(), |attributes| attributes as *const _),
            disposition,
            flags,
            std::ptr::null_mut(),
        )
    };
    if handle == INVALID_HANDLE_VALUE {
        return Err(Errno::last());
    }
    // SAFETY: a fresh handle we own.
    Ok(unsafe { std::fs::File::from_raw_handle(handle) })
}

/// The attributes and reparse tag of an open handle.
fn tag_info(file: &std::fs::File) -> Result<FILE_ATTRIBUTE_TAG_INFO, Errno> {
    let mut info = FILE_ATTRIBUTE_TAG_INFO {
        FileAttributes: 0,
        ReparseTag: 0,
    };
    // SAFETY: the buffer is this information class's structure.
    if unsafe {
        GetFileInformationByHandleEx(
            file.as_raw_handle(),
            FileAttributeTagInfo,
            (&mut info as *mut FILE_ATTRIBUTE_TAG_INFO).cast(),
            size_of::<FILE_ATTRIBUTE_TAG_INFO>() as u32,
        )
    } == 0
    {
        return Err(Errno::last());
    }
    Ok(info)
}

fn kind_of(info: &FILE_ATTRIBUTE_TAG_INFO) -> FileType {
    if info.FileAttributes & FILE_ATTRIBUTE_REPARSE_POINT != 0 {
        if info.ReparseTag == IO_REPARSE_TAG_AF_UNIX {
            FileType::Socket
        } else {
            FileType::Symlink
        }
    } else if info.FileAttributes & FILE_ATTRIBUTE_DIRECTORY != 0 {
        FileType::Directory
    } else {
        FileType::RegularFile
    }
}

const DIRECTORY_ACCESS: u32 =
    FILE_LIST_DIRECTORY | FILE_READ_ATTRIBUTES | READ_CONTROL | SYNCHRONIZE;

/// Opens a path as a directory; a symlink on the way is followed.
pub(crate) fn open_dir(path: &Path) -> Result<Dir, Errno> {
    let file = open(
        path,
        DIRECTORY_ACCESS,
        OPEN_EXISTING,
        FILE_FLAG_BACKUP_SEMANTICS,
        None,
    )?;
    if kind_of(&tag_info(&file)?) != FileType::Directory {
        return Err(Errno::NOTDIR);
    }
    Ok(Dir {
        file,
        path: path.to_owned(),
    })
}

/// Opens `name` in `parent` as a directory, refusing a reparse point.
pub(crate) fn open_dir_at<N: AsRef<OsStr>>(parent: &Dir, name: N) -> Result<Dir, Errno> {
    let path = parent.path.join(name.as_ref());
    let file = open(
        &path,
        DIRECTORY_ACCESS,
        OPEN_EXISTING,
        FILE_FLAG_BACKUP_SEMANTICS | FILE_FLAG_OPEN_REPARSE_POINT,
        None,
    )?;
    match kind_of(&tag_info(&file)?) {
        FileType::Directory => Ok(Dir { file, path }),
        FileType::Symlink => Err(Errno::LOOP),
        _ => Err(Errno::NOTDIR),
    }
}

/// Opens the existing file `name` in `dir` for reading, refusing a reparse point.
pub(crate) fn open_read_at(dir: &Dir, name: &str) -> Result<Dir, Errno> {
    let path = dir.path.join(name);
    let file = open(
        &path,
        GENERIC_READ | READ_CONTROL,
        OPEN_EXISTING,
        FILE_FLAG_BACKUP_SEMANTICS | FILE_FLAG_OPEN_REPARSE_POINT,
        None,
    )?;
    match kind_of(&tag_info(&file)?) {
        FileType::Symlink | FileType::Socket => Err(Errno::LOOP),
        _ => Ok(Dir { file, path }),
    }
}

fn owner_only(protection: Protection) -> Result<OwnerOnly, Errno> {
    OwnerOnly::new(protection).map_err(|error| Errno::of(&error))
}

/// Creates the file `name` in `dir` exclusively (not even a symlink may be there) with an
/// owner-only ACL, and opens it for reading and writing.
pub(crate) fn create_new_at(dir: &Dir, name: &str, protection: Protection) -> Result<Dir, Errno> {
    let path = dir.path.join(name);
    let descriptor = owner_only(protection)?;
    let attributes = descriptor.attributes();
    let file = open(
        &path,
        GENERIC_READ | GENERIC_WRITE | READ_CONTROL | WRITE_DAC,
        CREATE_NEW,
        FILE_ATTRIBUTE_NORMAL | FILE_FLAG_OPEN_REPARSE_POINT,
        Some(&attributes),
    )?;
    Ok(Dir { file, path })
}

/// Creates the directory `name` in `parent` with an owner-only ACL.
pub(crate) fn make_dir_at(parent: &Dir, name: &str, protection: Protection) -> Result<(), Errno> {
    let descriptor = owner_only(protection)?;
    let attributes = descriptor.attributes();
    let path = wide(&parent.path.join(name));
    // SAFETY: a NUL-terminated path; the attributes outlive the call.
    if unsafe { CreateDirectoryW(path.as_ptr(), &attributes) } == 0 {
        return Err(Errno::last());
    }
    Ok(())
}

/// Opens `path` again with `WRITE_DAC`, refusing a reparse point other than a socket.
fn open_for_protection(path: &Path) -> Result<std::fs::File, Errno> {
    let file = open(
        path,
        READ_CONTROL | WRITE_DAC | FILE_READ_ATTRIBUTES,
        OPEN_EXISTING,
        FILE_FLAG_BACKUP_SEMANTICS | FILE_FLAG_OPEN_REPARSE_POINT,
        None,
    )?;
    if kind_of(&tag_info(&file)?) == FileType::Symlink {
        return Err(Errno::LOOP);
    }
    Ok(file)
}

fn apply(file: &std::fs::File, protection: Protection) -> Result<(), Errno> {
    owner_only(protection)?
        .apply(file.as_raw_handle())
        .map_err(|error| Errno::of(&error))
}

/// Sets the ACL of an open file or directory to exactly the owner-only one.
pub(crate) fn protect(dir: &Dir, protection: Protection) -> Result<(), Errno> {
    apply(&open_for_protection(&dir.path)?, protection)
}

/// Sets the ACL of `name` in `dir` (a socket, typically) to exactly the owner-only one; a
/// symlink there is refused.
pub(crate) fn protect_at(dir: &Dir, name: &str, protection: Protection) -> Result<(), Errno> {
    apply(&open_for_protection(&dir.path.join(name))?, protection)
}

fn status_of(file: &std::fs::File) -> Result<Stat, Errno> {
    let info = tag_info(file)?;
    let mut written = FILETIME {
        dwLowDateTime: 0,
        dwHighDateTime: 0,
    };
    // SAFETY: an open handle; out-pointer for the last write time only.
    if unsafe {
        GetFileTime(
            file.as_raw_handle(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            &mut written,
        )
    } == 0
    {
        return Err(Errno::last());
    }
    let ticks = (u64::from(written.dwHighDateTime) << 32) | u64::from(written.dwLowDateTime);
    let access = security::access_of(file.as_raw_handle()).map_err(|error| Errno::of(&error))?;
    let size = file.metadata().map_err(|error| Errno::of(&error))?.len();
    Ok(Stat {
        kind: kind_of(&info),
        size,
        access,
        modified_seconds: (ticks / 10_000_000) as i64 - FILETIME_EPOCH_OFFSET_SECONDS,
    })
}

/// An open file as a `std::fs::File`, for reading it through.
pub(crate) fn into_file(dir: Dir) -> std::fs::File {
    dir.file
}

/// The status of an open file or directory.
pub(crate) fn stat(dir: &Dir) -> Result<Stat, Errno> {
    status_of(&dir.file)
}

/// The status of the entry `name` in `dir` itself: a reparse point is described, not
/// followed.
pub(crate) fn stat_at<N: AsRef<OsStr>>(dir: &Dir, name: N) -> Result<Stat, Errno> {
    let file = open(
        &dir.path.join(name.as_ref()),
        FILE_READ_ATTRIBUTES | READ_CONTROL,
        OPEN_EXISTING,
        FILE_FLAG_BACKUP_SEMANTICS | FILE_FLAG_OPEN_REPARSE_POINT,
        None,
    )?;
    status_of(&file)
}

/// Renames `from` to `to` within `dir`, replacing `to` (a symlink there is replaced itself).
pub(crate) fn rename_at(dir: &Dir, from: &str, to: &str) -> Result<(), Errno> {
    let from = wide(&dir.path.join(from));
    let to = wide(&dir.path.join(to));
    // SAFETY: NUL-terminated paths.
    if unsafe { MoveFileExW(from.as_ptr(), to.as_ptr(), MOVEFILE_REPLACE_EXISTING) } == 0 {
        return Err(Errno::last());
    }
    Ok(())
}

/// Removes the non-directory entry `name` from `dir`; a symlink or junction is removed
/// itself, never its target.
pub(crate) fn unlink_at<N: AsRef<OsStr>>(dir: &Dir, name: N) -> Result<(), Errno> {
    let path = dir.path.join(name.as_ref());
    let wide_path = wide(&path);
    // SAFETY: a NUL-terminated path.
    if unsafe { DeleteFileW(wide_path.as_ptr()) } != 0 {
        return Ok(());
    }
    let error = Errno::last();
    // A directory symlink or junction is removed as a directory (still only the link).
    match stat_at(dir, name.as_ref()) {
        Ok(status) if status.kind == FileType::Symlink => {
            // SAFETY: a NUL-terminated path.
            if unsafe { RemoveDirectoryW(wide_path.as_ptr()) } != 0 {
                Ok(())
            } else {
                Err(Errno::last())
            }
        }
        _ => Err(error),
    }
}

/// Removes the empty directory `name` from `dir`.
pub(crate) fn remove_dir_at<N: AsRef<OsStr>>(dir: &Dir, name: N) -> Result<(), Errno> {
    let path = wide(&dir.path.join(name.as_ref()));
    // SAFETY: a NUL-terminated path.
    if unsafe { RemoveDirectoryW(path.as_ptr()) } == 0 {
        return Err(Errno::last());
    }
    Ok(())
}

/// Takes an exclusive lock on the whole of the open file, failing with [`Errno::WOULDBLOCK`]
/// instead of waiting when another handle holds it. The system releases it when the handle
/// closes or its process dies.
pub(crate) fn try_lock_exclusive(file: &Dir) -> Result<(), Errno> {
    let mut overlapped = OVERLAPPED::default();
    // SAFETY: an open handle with read access; the OVERLAPPED outlives this synchronous call.
    if unsafe {
        LockFileEx(
            file.file.as_raw_handle(),
            LOCKFILE_EXCLUSIVE_LOCK | LOCKFILE_FAIL_IMMEDIATELY,
            0,
            u32::MAX,
            u32::MAX,
            &mut overlapped,
        )
    } == 0
    {
        return Err(Errno::last());
    }
    Ok(())
}

/// Names in a directory, without `.` and `..`.
pub(crate) fn list_dir(dir: &Dir) -> Result<Vec<OsString>, Errno> {
    let entries = std::fs::read_dir(&dir.path).map_err(|error| Errno::of(&error))?;
    entries
        .map(|entry| {
            entry
                .map(|entry| entry.file_name())
                .map_err(|error| Errno::of(&error))
        })
        .collect()
}

/// Writes all of `bytes` to the open file.
pub(crate) fn write_all(file: &Dir, bytes: &[u8]) -> io::Result<()> {
    (&file.file).write_all(bytes)
}

/// What kind of entry a status describes.
pub(crate) fn file_type(stat: &Stat) -> FileType {
    stat.kind
}

/// Whether a status shows the owner-only ACL (every allowing entry names us).
pub(crate) fn is_protected(stat: &Stat, _protection: Protection) -> bool {
    stat.access.owner_only
}

/// What a status's protection is, for a message.
pub(crate) fn describe_protection(stat: &Stat) -> String {
    if stat.access.owner_only {
        format!("its ACL allows its owner alone ({})", stat.access.sddl)
    } else {
        format!(
            "its ACL allows others than us, or it has none ({})",
            stat.access.sddl
        )
    }
}

/// The modification time of a status, in whole seconds since 1970.
/// The size in bytes.
pub(crate) fn size(stat: &Stat) -> u64 {
    stat.size
}

pub(crate) fn modified_seconds(stat: &Stat) -> i64 {
    stat.modified_seconds
}

/// Whether a status's owner is this process's user.
pub(crate) fn is_ours(stat: &Stat) -> bool {
    stat.access.owner.as_ref() == Some(&security::current_user())
}

/// Who owns a status's entry, for a message.
pub(crate) fn describe_owner(stat: &Stat) -> String {
    match &stat.access.owner {
        Some(owner) => format!("SID {owner}"),
        None => "no one the system names".to_owned(),
    }
}

/// Who this process's user is, for a message.
pub(crate) fn describe_us() -> String {
    format!("SID {}", security::current_user())
}

/// A number that tells this user apart from others, for a per-user name: the RID.
pub(crate) fn user_number() -> u32 {
    security::current_user().relative_id()
}
