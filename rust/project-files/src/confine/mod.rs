//! Confined access: every path is opened beneath the project root's descriptor, never by its
//! absolute name, so a symbolic link swapped in between a check and an open cannot lead out of
//! the project. This module holds all the code that differs by operating system:
//!
//! - `linux.rs` — `openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)`: the kernel resolves the
//!   path and refuses to leave the root; where `openat2` is missing (before Linux 5.6, or
//!   blocked by a seccomp filter) it falls back to the walk.
//! - `walk.rs` — the other Unixes (and the fallback): one `openat(O_NOFOLLOW)` per component
//!   from the root's descriptor; a symbolic link met on the way is read and its target walked
//!   the same way, and a `..` never climbs above the root.
//! - `unix.rs` — what every Unix shares: the type check with `fstat` after opening (a FIFO,
//!   socket or device is refused; `O_NONBLOCK | O_NOCTTY` make sure opening one never blocks),
//!   listing a directory and stat, both relative to a confined descriptor.
//! - `unsupported.rs` — other systems (Windows): every operation is `Error::Unsupported`.
//!
//! Symbolic links inside the project are followed when they resolve beneath the root; a link
//! whose target is absolute, or that climbs out with `..`, is refused (`Error::Escapes`).

use crate::error::{Error, Result};

#[cfg(target_os = "linux")]
mod linux;
#[cfg(unix)]
mod unix;
#[cfg(not(unix))]
mod unsupported;
#[cfg(unix)]
mod walk;

#[cfg(unix)]
pub(crate) use unix::{Resolver, Root};
#[cfg(not(unix))]
pub(crate) use unsupported::{Resolver, Root};

/// A path argument, checked: relative, no `..`, no NUL. Empty components and `.` are dropped,
/// so the root itself has no components.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct RelativePath {
    /// The path as given, for messages.
    pub(crate) display: String,
    /// Its names, in order.
    pub(crate) components: Vec<String>,
}

impl RelativePath {
    /// Checks `path` (relative to the root, `/`-separated; empty or `.` for the root).
    pub(crate) fn parse(path: &str) -> Result<Self> {
        let display = if path.is_empty() { "." } else { path }.to_owned();
        let invalid = |why| Error::InvalidPath {
            path: display.clone(),
            why,
        };
        if path.contains('\0') {
            return Err(invalid("it contains a NUL byte"));
        }
        if path.starts_with('/') || path.starts_with('\\') || has_drive_prefix(path) {
            return Err(invalid(
                "it is absolute; give it relative to the project root",
            ));
        }
        let mut components = Vec::new();
        for component in path.split(['/', '\\']) {
            match component {
                "" | "." => {}
                ".." => return Err(invalid("`..` is not allowed")),
                name => components.push(name.to_owned()),
            }
        }
        Ok(RelativePath {
            display,
            components,
        })
    }

    /// The path with `/` separators; `.` for the root.
    pub(crate) fn joined(&self) -> String {
        if self.components.is_empty() {
            ".".to_owned()
        } else {
            self.components.join("/")
        }
    }
}

fn has_drive_prefix(path: &str) -> bool {
    let bytes = path.as_bytes();
    bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':'
}

/// What a directory entry or a stat found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntryKind {
    /// A regular file.
    File,
    /// A directory.
    Directory,
    /// A symbolic link (not followed by listing or stat).
    Symlink,
    /// A FIFO, a socket or a device.
    Other,
}

impl EntryKind {
    /// The word the tools use for it.
    pub fn as_str(self) -> &'static str {
        match self {
            EntryKind::File => "file",
            EntryKind::Directory => "directory",
            EntryKind::Symlink => "symlink",
            EntryKind::Other => "other",
        }
    }
}

/// One entry of a directory, or what stat found at a path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// Its name (the last component; `.` for the root).
    pub name: String,
    /// Its type, without following a symbolic link.
    pub kind: EntryKind,
    /// Its size in bytes, for a regular file.
    pub size: Option<u64>,
    /// When it was last modified, in milliseconds since the Unix epoch.
    pub modified_millis: Option<i64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths_are_split_and_escapes_refused() {
        assert_eq!(
            RelativePath::parse("a/./b//c").expect("ok").components,
            ["a", "b", "c"]
        );
        assert!(RelativePath::parse("").expect("root").components.is_empty());
        assert!(RelativePath::parse(".")
            .expect("root")
            .components
            .is_empty());
        for bad in ["/etc/passwd", "a/../../b", "..", "a\0b", "C:/x", "\\x"] {
            assert!(
                matches!(RelativePath::parse(bad), Err(Error::InvalidPath { .. })),
                "{bad:?}"
            );
        }
    }
}
