//! The portable confined open: one `openat(O_NOFOLLOW)` per component, each relative to the
//! descriptor of the directory before it, starting at the root's. A component that is a
//! symbolic link is read (`readlinkat`) and its target walked the same way in its place: a
//! relative target continues from the link's directory, an absolute one is refused, and `..`
//! returns to a directory this walk itself entered, so it can never climb above the root.
//! Whatever is swapped in between two steps is only ever opened relative to a descriptor
//! already beneath the root, with no link followed by the kernel.

use std::collections::VecDeque;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

use rustix::fs::{openat, readlinkat, Mode, OFlags};
use rustix::io::Errno;

/// Symbolic links followed in one open before giving up (Linux's own limit).
const MAX_LINKS: usize = 40;

/// Opens `components` beneath `root` with `flags` for the last one (`O_NOFOLLOW` is added:
/// a link in last place is resolved here, not by the kernel). An empty path opens the root
/// itself again. Escaping is `EXDEV`, too many links `ELOOP`.
pub(super) fn open_beneath(
    root: BorrowedFd<'_>,
    components: &[String],
    flags: OFlags,
) -> Result<OwnedFd, Errno> {
    let mut entered: Vec<OwnedFd> = Vec::new();
    let mut pending: VecDeque<String> = components.iter().cloned().collect();
    let mut links = 0;
    let directory_flags =
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK;
    loop {
        let current = entered.last().map_or(root, |fd| fd.as_fd());
        let Some(name) = pending.pop_front() else {
            // The path ended on a directory already entered (the root, or after `..`).
            return openat(current, ".", flags, Mode::empty());
        };
        match name.as_str() {
            "" | "." => continue,
            ".." => {
                if entered.pop().is_none() {
                    return Err(Errno::XDEV);
                }
                continue;
            }
            _ => {}
        }
        let last = pending.is_empty();
        let step_flags = if last {
            flags | OFlags::NOFOLLOW
        } else {
            directory_flags
        };
        match openat(current, name.as_str(), step_flags, Mode::empty()) {
            Ok(fd) if last => return Ok(fd),
            Ok(fd) => entered.push(fd),
            // A link refused by O_NOFOLLOW: ELOOP, or ENOTDIR when O_DIRECTORY was asked
            // (EMLINK on FreeBSD). Anything that is not a link keeps its own error.
            Err(error @ (Errno::LOOP | Errno::NOTDIR | Errno::MLINK)) => {
                let Ok(target) = readlinkat(current, name.as_str(), Vec::new()) else {
                    return Err(error);
                };
                links += 1;
                if links > MAX_LINKS {
                    return Err(Errno::LOOP);
                }
                let target = target.to_string_lossy().into_owned();
                if target.starts_with('/') {
                    return Err(Errno::XDEV);
                }
                for component in target.split('/').rev() {
                    pending.push_front(component.to_owned());
                }
            }
            Err(error) => return Err(error),
        }
    }
}
