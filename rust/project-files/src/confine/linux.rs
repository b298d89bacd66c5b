//! Linux: `openat2` with `RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS`, so the kernel itself
//! refuses any resolution that leaves the root (a `..` above it, an absolute link, a link out)
//! and every `/proc` magic link. Kernels before 5.6 answer `ENOSYS`, and a seccomp filter may
//! answer `ENOSYS` or `EPERM`: then the walk of `walk.rs` does the same job.

use std::os::fd::{BorrowedFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};

use rustix::fs::{openat2, Mode, OFlags, ResolveFlags};
use rustix::io::Errno;

use super::walk;

/// Set once `openat2` answered `ENOSYS`: from then on only the walk is tried.
static OPENAT2_MISSING: AtomicBool = AtomicBool::new(false);

/// `openat2` retries after `EAGAIN` (a concurrent rename raced a `..` in a link's target).
const RACE_RETRIES: usize = 8;

/// Opens `components` beneath `root` with `flags`; escaping is `EXDEV`.
pub(super) fn open_beneath(
    root: BorrowedFd<'_>,
    components: &[String],
    flags: OFlags,
) -> Result<OwnedFd, Errno> {
    if !OPENAT2_MISSING.load(Ordering::Relaxed) {
        let path = if components.is_empty() {
            ".".to_owned()
        } else {
            components.join("/")
        };
        let resolve = ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS;
        for _ in 0..RACE_RETRIES {
            match openat2(root, path.as_str(), flags, Mode::empty(), resolve) {
                Err(Errno::AGAIN) => continue,
                Err(Errno::NOSYS) => {
                    OPENAT2_MISSING.store(true, Ordering::Relaxed);
                    break;
                }
                // A seccomp filter may refuse the call itself; the walk gives the real answer.
                Err(Errno::PERM) => break,
                outcome => return outcome,
            }
        }
    }
    walk::open_beneath(root, components, flags)
}
