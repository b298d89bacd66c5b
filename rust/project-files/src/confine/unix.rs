//! What every Unix shares: the root's descriptor, the type check after opening, listing and
//! stat relative to confined descriptors.

use std::fs::File;
use std::os::fd::{AsFd, OwnedFd};
use std::path::Path;

use rustix::fs::{fstat, openat, statat, AtFlags, Dir, FileType, Mode, OFlags, Stat, CWD};
use rustix::io::Errno;

use super::{Entry, EntryKind, RelativePath};
use crate::error::{Error, Result};

/// Which confined open a root uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Resolver {
    /// `openat2` where the kernel has it (Linux), else the walk.
    Native,
    /// Always the portable `openat(O_NOFOLLOW)` walk.
    Walk,
}

/// The project root, held open: every path is opened beneath this descriptor.
#[derive(Debug)]
pub(crate) struct Root {
    fd: OwnedFd,
    resolver: Resolver,
}

/// Flags for opening what may turn out to be a FIFO or a device: never block, never become
/// the controlling terminal, never leak into a child.
fn read_flags() -> OFlags {
    OFlags::RDONLY | OFlags::CLOEXEC | OFlags::NONBLOCK | OFlags::NOCTTY
}

impl Root {
    /// Opens the root directory itself (the trust anchor: its own path is the caller's).
    pub(crate) fn open(path: &Path, resolver: Resolver) -> std::io::Result<Root> {
        let fd = openat(CWD, path, read_flags() | OFlags::DIRECTORY, Mode::empty())?;
        Ok(Root { fd, resolver })
    }

    fn open_beneath(&self, path: &RelativePath, flags: OFlags) -> Result<OwnedFd> {
        let opened = match self.resolver {
            #[cfg(target_os = "linux")]
            Resolver::Native => {
                super::linux::open_beneath(self.fd.as_fd(), &path.components, flags)
            }
            #[cfg(not(target_os = "linux"))]
            Resolver::Native => super::walk::open_beneath(self.fd.as_fd(), &path.components, flags),
            Resolver::Walk => super::walk::open_beneath(self.fd.as_fd(), &path.components, flags),
        };
        opened.map_err(|errno| open_error(&path.display, errno))
    }

    /// Opens a regular file for reading; returns it with its size.
    pub(crate) fn open_file(&self, path: &RelativePath) -> Result<(File, u64)> {
        let fd = self.open_beneath(path, read_flags())?;
        let stat = fstat(&fd).map_err(|errno| Error::io(&path.display, errno.into()))?;
        match FileType::from_raw_mode(stat.st_mode) {
            FileType::RegularFile => Ok((File::from(fd), size_of(&stat))),
            FileType::Directory => Err(Error::IsDirectory(path.display.clone())),
            other => Err(Error::NotRegularFile {
                path: path.display.clone(),
                kind: kind_word(other),
            }),
        }
    }

    /// The entries of a directory (not `.` and `..`), each stat'ed without following links.
    pub(crate) fn list(&self, path: &RelativePath) -> Result<Vec<Entry>> {
        // Opened without O_DIRECTORY, so a file is told apart from a missing path by fstat.
        let fd = self.open_beneath(path, read_flags())?;
        let stat = fstat(&fd).map_err(|errno| Error::io(&path.display, errno.into()))?;
        if FileType::from_raw_mode(stat.st_mode) != FileType::Directory {
            return Err(Error::NotDirectory(path.display.clone()));
        }
        let mut dir =
            Dir::read_from(&fd).map_err(|errno| Error::io(&path.display, errno.into()))?;
        let mut entries = Vec::new();
        while let Some(entry) = dir.read() {
            let entry = entry.map_err(|errno| Error::io(&path.display, errno.into()))?;
            let name = entry.file_name().to_bytes();
            if name == b"." || name == b".." {
                continue;
            }
            let name = String::from_utf8_lossy(name).into_owned();
            let entry = match statat(&fd, entry.file_name(), AtFlags::SYMLINK_NOFOLLOW) {
                Ok(stat) => entry_of(name, &stat),
                // Gone since the listing, or unreadable: shown as what the listing said.
                Err(_) => Entry {
                    name,
                    kind: EntryKind::Other,
                    size: None,
                    modified_millis: None,
                },
            };
            entries.push(entry);
        }
        Ok(entries)
    }

    /// What is at `path`, without following a link in last place.
    pub(crate) fn stat(&self, path: &RelativePath) -> Result<Entry> {
        let Some((name, parent)) = path.components.split_last() else {
            let stat = fstat(&self.fd).map_err(|errno| Error::io(".", errno.into()))?;
            return Ok(entry_of(".".to_owned(), &stat));
        };
        let parent = RelativePath {
            display: path.display.clone(),
            components: parent.to_vec(),
        };
        let fd = self.open_beneath(&parent, read_flags() | OFlags::DIRECTORY)?;
        let stat = statat(&fd, name.as_str(), AtFlags::SYMLINK_NOFOLLOW)
            .map_err(|errno| open_error(&path.display, errno))?;
        Ok(entry_of(name.clone(), &stat))
    }
}

fn open_error(path: &str, errno: Errno) -> Error {
    match errno {
        Errno::XDEV | Errno::LOOP => Error::Escapes(path.to_owned()),
        Errno::NOENT | Errno::NOTDIR => Error::NotFound(path.to_owned()),
        // Opening a socket file.
        Errno::NXIO | Errno::OPNOTSUPP => Error::NotRegularFile {
            path: path.to_owned(),
            kind: "a socket or a device",
        },
        other => Error::io(path, other.into()),
    }
}

fn size_of(stat: &Stat) -> u64 {
    u64::try_from(stat.st_size).unwrap_or(0)
}

fn entry_of(name: String, stat: &Stat) -> Entry {
    let file_type = FileType::from_raw_mode(stat.st_mode);
    let kind = match file_type {
        FileType::RegularFile => EntryKind::File,
        FileType::Directory => EntryKind::Directory,
        FileType::Symlink => EntryKind::Symlink,
        _ => EntryKind::Other,
    };
    #[allow(clippy::useless_conversion)] // st_mtime is i32 or i64 depending on the target
    let seconds = i64::from(stat.st_mtime);
    Entry {
        name,
        kind,
        size: (kind == EntryKind::File).then(|| size_of(stat)),
        modified_millis: seconds.checked_mul(1000),
    }
}

fn kind_word(file_type: FileType) -> &'static str {
    match file_type {
        FileType::Fifo => "a FIFO",
        FileType::Socket => "a socket",
        FileType::CharacterDevice => "a character device",
        FileType::BlockDevice => "a block device",
        FileType::Symlink => "a symbolic link",
        _ => "not a regular file",
    }
}
