//! The runtime directory against a real file system: modes, refusals,
//! path-length fallback, atomic token writes, stale cleanup and removal.
// Unix only: these check modes, uids, symlinks and flock by hand; the Windows port of the same
// code is covered by the platform seam's own tests and the server tests that run under Wine.
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::field_reassign_with_default)]

use std::fs;
use std::os::unix::fs::{symlink, MetadataExt, PermissionsExt};
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::time::Duration;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use ide_mcp_server::runtime_dir::{
    cleanup_stale, cleanup_stale_with_grace, longest_socket_path_len, per_user_shared_dir_name,
    RuntimeDir, RuntimeDirError, ID_LEN, MAX_SOCKET_PATH_BYTES, SHARED_DIR_NAME,
};
use rustix::fs::{AtFlags, FlockOperation, Timespec, Timestamps};

/// The uid of `nobody`, used to fake a directory of another user.
const NOBODY: u32 = 65534;

fn base() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

fn mode(path: &Path) -> u32 {
    fs::symlink_metadata(path).unwrap().permissions().mode() & 0o7777
}

fn am_root() -> bool {
    rustix::process::geteuid().is_root()
}

/// A directory entry name with the shape of an instance id.
fn fake_id(fill: char) -> String {
    std::iter::repeat_n(fill, ID_LEN).collect()
}

/// Sets a path's modification time (not following symlinks) `ago` in the past.
fn backdate(path: &Path, ago: Duration) {
    let when = std::time::SystemTime::now() - ago;
    let secs = when
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let stamp = Timespec {
        tv_sec: i64::try_from(secs).unwrap(),
        tv_nsec: 0,
    };
    let times = Timestamps {
        last_access: stamp,
        last_modification: stamp,
    };
    rustix::fs::utimensat(rustix::fs::CWD, path, &times, AtFlags::SYMLINK_NOFOLLOW).unwrap();
}

/// Lays out what a dead instance leaves behind: an id directory with an
/// unlocked lock file, a token, a socket-named file, a nested directory, and a
/// symlink to `outside` (which must survive the cleanup).
fn plant_dead_instance(shared: &Path, id: &str, outside: &Path) -> PathBuf {
    let dir = shared.join(id);
    fs::create_dir(&dir).unwrap();
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o700)).unwrap();
    fs::write(dir.join("lock"), b"").unwrap();
    fs::write(dir.join("token"), b"old-token").unwrap();
    fs::write(dir.join("code.sock"), b"").unwrap();
    fs::create_dir(dir.join("nested")).unwrap();
    fs::write(dir.join("nested").join("file"), b"x").unwrap();
    symlink(outside, dir.join("escape")).unwrap();
    symlink(outside.parent().unwrap(), dir.join("escape-dir")).unwrap();
    dir
}

#[test]
fn create_makes_private_directories_with_a_random_id() {
    let base = base();
    let dir = RuntimeDir::create(&[base.path().to_owned()]).unwrap();
    let shared = base.path().join(SHARED_DIR_NAME);

    assert_eq!(dir.path(), shared.join(dir.id()));
    assert_eq!(mode(&shared), 0o700);
    assert_eq!(mode(dir.path()), 0o700);
    assert_eq!(mode(&dir.path().join("lock")), 0o600);
    assert!(!dir.path().join("lock.new").exists());

    let id = dir.id();
    assert_eq!(id.len(), 22);
    assert!(id
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'));
    assert_eq!(URL_SAFE_NO_PAD.decode(id).unwrap().len(), 16);

    let other = RuntimeDir::create(&[base.path().to_owned()]).unwrap();
    assert_ne!(dir.id(), other.id());

    assert_eq!(dir.socket_path("code"), dir.path().join("code.sock"));
    assert_eq!(dir.token_path(), dir.path().join("token"));
}

#[test]
fn an_existing_private_shared_directory_is_reused() {
    let base = base();
    let shared = base.path().join(SHARED_DIR_NAME);
    fs::create_dir(&shared).unwrap();
    fs::set_permissions(&shared, fs::Permissions::from_mode(0o700)).unwrap();
    let dir = RuntimeDir::create(&[base.path().to_owned()]).unwrap();
    assert!(dir.path().starts_with(&shared));
}

#[test]
fn a_symlink_at_the_shared_directory_is_refused() {
    let base = base();
    let target = base.path().join("elsewhere");
    fs::create_dir(&target).unwrap();
    fs::set_permissions(&target, fs::Permissions::from_mode(0o700)).unwrap();
    symlink(&target, base.path().join(SHARED_DIR_NAME)).unwrap();

    let err = RuntimeDir::create(&[base.path().to_owned()]).unwrap_err();
    let text = err.to_string();
    assert!(text.contains("symbolic link"), "{text}");
    assert!(text.contains(SHARED_DIR_NAME), "{text}");
    assert_eq!(
        fs::read_dir(&target).unwrap().count(),
        0,
        "target untouched"
    );
}

#[test]
fn a_shared_directory_open_to_others_is_refused() {
    let base = base();
    let shared = base.path().join(SHARED_DIR_NAME);
    fs::create_dir(&shared).unwrap();
    fs::set_permissions(&shared, fs::Permissions::from_mode(0o755)).unwrap();

    let err = RuntimeDir::create(&[base.path().to_owned()]).unwrap_err();
    let text = err.to_string();
    assert!(text.contains("755"), "{text}");
    assert_eq!(fs::read_dir(&shared).unwrap().count(), 0);
    assert_eq!(mode(&shared), 0o755, "left as found");
}

#[test]
fn a_shared_directory_of_another_user_is_left_alone_for_one_of_our_own_beside_it() {
    if !am_root() {
        eprintln!("skipped: needs root to chown a directory to another user");
        return;
    }
    let base = base();
    let shared = base.path().join(SHARED_DIR_NAME);
    fs::create_dir(&shared).unwrap();
    fs::set_permissions(&shared, fs::Permissions::from_mode(0o700)).unwrap();
    std::os::unix::fs::chown(&shared, Some(NOBODY), Some(NOBODY)).unwrap();

    // A shared /tmp where another user took the name first: the servers still start.
    let dir = RuntimeDir::create(&[base.path().to_owned()]).unwrap();
    let ours = base.path().join(per_user_shared_dir_name(
        rustix::process::geteuid().as_raw(),
    ));
    assert_eq!(dir.path().parent(), Some(ours.as_path()));
    assert_eq!(mode(&ours), 0o700);
    assert_eq!(
        fs::read_dir(&shared).unwrap().count(),
        0,
        "the squatted one is untouched"
    );
    dir.remove().unwrap();

    // The per-user name is held to the same checks: another user's is refused.
    std::os::unix::fs::chown(&ours, Some(NOBODY), Some(NOBODY)).unwrap();
    let err = RuntimeDir::create(&[base.path().to_owned()]).unwrap_err();
    let text = err.to_string();
    assert!(text.contains(&format!("uid {NOBODY}")), "{text}");
}

#[test]
fn a_too_long_first_candidate_falls_back_to_the_second() {
    let long_holder = base();
    let long = long_holder.path().join("l".repeat(90));
    fs::create_dir(&long).unwrap();
    assert!(longest_socket_path_len(&long) > MAX_SOCKET_PATH_BYTES);
    let short = base();

    let dir = RuntimeDir::create(&[long.clone(), short.path().to_owned()]).unwrap();
    assert!(dir.path().starts_with(short.path()));
    assert!(dir.socket_path("code").as_os_str().len() <= MAX_SOCKET_PATH_BYTES);
    assert_eq!(
        fs::read_dir(&long).unwrap().count(),
        0,
        "nothing created under the rejected candidate"
    );
}

#[test]
fn all_candidates_too_long_is_an_error_naming_each() {
    let holder = base();
    let first = holder.path().join("a".repeat(80));
    let second = holder.path().join("b".repeat(120));
    fs::create_dir(&first).unwrap();

    let err = RuntimeDir::create(&[first.clone(), second.clone()]).unwrap_err();
    assert!(matches!(err, RuntimeDirError::NoUsableCandidate(ref r) if r.len() == 2));
    let text = err.to_string();
    for candidate in [&first, &second] {
        assert!(text.contains(&candidate.display().to_string()), "{text}");
        let len = longest_socket_path_len(candidate);
        assert!(text.contains(&format!("{len} bytes")), "{text}");
    }
    assert!(text.contains("100"), "{text}");
    assert_eq!(fs::read_dir(&first).unwrap().count(), 0);
    assert!(!second.exists());
}

#[test]
fn socket_path_length_is_computed_with_the_real_id_length() {
    let base = Path::new("/tmp");
    let expected = format!("/tmp/{SHARED_DIR_NAME}/{}/code.sock", "x".repeat(22)).len();
    assert_eq!(longest_socket_path_len(base), expected);

    let real = tempfile::tempdir().unwrap();
    let dir = RuntimeDir::create(&[real.path().to_owned()]).unwrap();
    assert_eq!(
        dir.socket_path("code").as_os_str().len(),
        longest_socket_path_len(real.path())
    );
}

#[test]
fn no_candidates_is_an_error() {
    assert!(matches!(
        RuntimeDir::create(&[]),
        Err(RuntimeDirError::NoCandidates)
    ));
}

#[test]
fn a_relative_candidate_is_skipped() {
    let short = base();
    let dir =
        RuntimeDir::create(&[PathBuf::from("relative/tmp"), short.path().to_owned()]).unwrap();
    assert!(dir.path().starts_with(short.path()));
}

#[test]
fn token_is_written_atomically_with_mode_0600() {
    let base = base();
    let dir = RuntimeDir::create(&[base.path().to_owned()]).unwrap();
    dir.write_token("first-token").unwrap();
    let token = dir.path().join("token");
    assert_eq!(fs::read_to_string(&token).unwrap(), "first-token");
    assert_eq!(mode(&token), 0o600);
    assert!(!dir.path().join("token.next").exists());

    dir.write_token("second-token").unwrap();
    assert_eq!(fs::read_to_string(&token).unwrap(), "second-token");
    assert_eq!(mode(&token), 0o600);
    assert!(!dir.path().join("token.next").exists());
}

#[test]
fn a_stale_token_next_is_replaced() {
    let base = base();
    let dir = RuntimeDir::create(&[base.path().to_owned()]).unwrap();
    fs::write(dir.path().join("token.next"), b"leftover").unwrap();
    dir.write_token("fresh").unwrap();
    assert_eq!(fs::read_to_string(dir.token_path()).unwrap(), "fresh");
    assert!(!dir.path().join("token.next").exists());
}

#[test]
fn symlinks_at_token_names_are_never_followed() {
    let base = base();
    let outside = base.path().join("victim");
    fs::write(&outside, b"precious").unwrap();
    fs::set_permissions(&outside, fs::Permissions::from_mode(0o644)).unwrap();
    let dir = RuntimeDir::create(&[base.path().to_owned()]).unwrap();

    symlink(&outside, dir.path().join("token.next")).unwrap();
    symlink(&outside, dir.path().join("token")).unwrap();
    dir.write_token("secret").unwrap();

    assert_eq!(fs::read(&outside).unwrap(), b"precious");
    assert_eq!(mode(&outside), 0o644);
    let token = dir.path().join("token");
    assert!(fs::symlink_metadata(&token).unwrap().file_type().is_file());
    assert_eq!(fs::read_to_string(&token).unwrap(), "secret");
    assert_eq!(mode(&token), 0o600);
    assert!(fs::symlink_metadata(dir.path().join("token.next")).is_err());
}

#[test]
fn bound_sockets_are_secured_to_0600() {
    let base = base();
    let dir = RuntimeDir::create(&[base.path().to_owned()]).unwrap();
    let mut listeners = Vec::new();
    for server in ["code", "run", "vcs", "ops"] {
        let path = dir.socket_path(server);
        assert!(path.as_os_str().len() <= MAX_SOCKET_PATH_BYTES);
        listeners.push(UnixListener::bind(&path).unwrap());
        dir.secure_socket_file(server).unwrap();
        assert_eq!(mode(&path), 0o600);
    }
}

#[test]
fn securing_a_non_socket_or_a_bad_name_fails() {
    let base = base();
    let dir = RuntimeDir::create(&[base.path().to_owned()]).unwrap();
    let err = dir.secure_socket_file("code").unwrap_err();
    assert!(err.to_string().contains("code.sock"), "{err}");

    fs::write(dir.socket_path("run"), b"").unwrap();
    let err = dir.secure_socket_file("run").unwrap_err();
    assert!(err.to_string().contains("not a socket"), "{err}");

    let outside = base.path().join("victim");
    fs::write(&outside, b"").unwrap();
    fs::set_permissions(&outside, fs::Permissions::from_mode(0o644)).unwrap();
    symlink(&outside, dir.socket_path("vcs")).unwrap();
    assert!(dir.secure_socket_file("vcs").is_err());
    assert_eq!(mode(&outside), 0o644, "symlink target untouched");

    for bad in ["", "..", "a/b"] {
        assert!(matches!(
            dir.secure_socket_file(bad),
            Err(RuntimeDirError::InvalidName(_))
        ));
    }
}

#[test]
fn remove_leaves_nothing_but_the_shared_directory() {
    let base = base();
    let dir = RuntimeDir::create(&[base.path().to_owned()]).unwrap();
    let path = dir.path().to_owned();
    let _listeners: Vec<_> = ["code", "run", "vcs", "ops"]
        .into_iter()
        .map(|server| {
            let listener = UnixListener::bind(dir.socket_path(server)).unwrap();
            dir.secure_socket_file(server).unwrap();
            listener
        })
        .collect();
    dir.write_token("t").unwrap();
    fs::write(path.join("token.next"), b"half-written").unwrap();

    dir.remove().unwrap();
    assert!(fs::symlink_metadata(&path).is_err());
    let shared = base.path().join(SHARED_DIR_NAME);
    assert_eq!(fs::read_dir(&shared).unwrap().count(), 0);
}

#[test]
fn drop_removes_the_directory() {
    let base = base();
    let dir = RuntimeDir::create(&[base.path().to_owned()]).unwrap();
    let path = dir.path().to_owned();
    dir.write_token("t").unwrap();
    drop(dir);
    assert!(fs::symlink_metadata(&path).is_err());
}

#[test]
fn stale_directories_are_removed_and_live_ones_kept() {
    let base = base();
    let outside = base.path().join("outside-file");
    fs::write(&outside, b"keep me").unwrap();

    let live = RuntimeDir::create(&[base.path().to_owned()]).unwrap();
    live.write_token("live-token").unwrap();
    let shared = base.path().join(SHARED_DIR_NAME);
    let dead = plant_dead_instance(&shared, &fake_id('d'), &outside);

    // Creating a second instance runs the cleanup.
    let second = RuntimeDir::create(&[base.path().to_owned()]).unwrap();

    assert!(
        fs::symlink_metadata(&dead).is_err(),
        "dead instance removed"
    );
    assert_eq!(fs::read(&outside).unwrap(), b"keep me");
    assert!(base.path().exists());
    assert_eq!(
        fs::read_to_string(live.token_path()).unwrap(),
        "live-token",
        "live instance untouched"
    );
    assert!(live.path().join("lock").exists());
    assert!(second.path().exists());
}

#[test]
fn a_directory_whose_lock_is_held_is_never_removed() {
    let base = base();
    let outside = base.path().join("outside-file");
    fs::write(&outside, b"").unwrap();
    let _ = RuntimeDir::create(&[base.path().to_owned()]).unwrap();
    let shared = base.path().join(SHARED_DIR_NAME);
    let held = plant_dead_instance(&shared, &fake_id('h'), &outside);
    backdate(&held, Duration::from_secs(3600));

    // flock belongs to the open file description: this one, held by "another
    // instance", makes the scanner's own open+flock fail with EWOULDBLOCK.
    let lock = fs::File::open(held.join("lock")).unwrap();
    rustix::fs::flock(&lock, FlockOperation::NonBlockingLockExclusive).unwrap();

    let removed = cleanup_stale_with_grace(base.path(), Duration::ZERO).unwrap();
    assert!(removed.is_empty(), "{removed:?}");
    assert!(held.join("token").exists());

    drop(lock);
    let removed = cleanup_stale_with_grace(base.path(), Duration::ZERO).unwrap();
    assert_eq!(removed, vec![fake_id('h')]);
    assert!(fs::symlink_metadata(&held).is_err());
}

#[test]
fn lockless_directories_are_removed_only_after_the_grace_period() {
    let base = base();
    let _ = RuntimeDir::create(&[base.path().to_owned()]).unwrap();
    let shared = base.path().join(SHARED_DIR_NAME);
    let young = shared.join(fake_id('y'));
    let old = shared.join(fake_id('o'));
    for dir in [&young, &old] {
        fs::create_dir(dir).unwrap();
        fs::write(dir.join("token"), b"t").unwrap();
    }
    backdate(&old, Duration::from_secs(3600));

    let removed = cleanup_stale(base.path()).unwrap();
    assert_eq!(removed, vec![fake_id('o')]);
    assert!(young.exists());
    assert!(fs::symlink_metadata(&old).is_err());
}

#[test]
fn cleanup_leaves_foreign_and_unrelated_entries_alone() {
    let base = base();
    let _ = RuntimeDir::create(&[base.path().to_owned()]).unwrap();
    let shared = base.path().join(SHARED_DIR_NAME);
    let outside = base.path().join("outside-dir");
    fs::create_dir(&outside).unwrap();
    fs::write(outside.join("file"), b"keep").unwrap();

    // A symlink with an id-shaped name, pointing at a directory.
    symlink(&outside, shared.join(fake_id('s'))).unwrap();
    // A directory not named like an id.
    let unrelated = shared.join("not-an-instance");
    fs::create_dir(&unrelated).unwrap();
    fs::write(unrelated.join("lock"), b"").unwrap();
    backdate(&unrelated, Duration::from_secs(3600));

    let foreign = shared.join(fake_id('f'));
    if am_root() {
        plant_dead_instance(&shared, &fake_id('f'), &outside.join("file"));
        for entry in ["", "lock", "token", "code.sock", "nested", "nested/file"] {
            let path = foreign.join(entry);
            std::os::unix::fs::lchown(&path, Some(NOBODY), Some(NOBODY)).unwrap();
        }
        backdate(&foreign, Duration::from_secs(3600));
    }

    let removed = cleanup_stale_with_grace(base.path(), Duration::ZERO).unwrap();
    assert!(removed.is_empty(), "{removed:?}");
    assert_eq!(fs::read(outside.join("file")).unwrap(), b"keep");
    assert!(fs::symlink_metadata(shared.join(fake_id('s'))).is_ok());
    assert!(unrelated.join("lock").exists());
    if am_root() {
        assert!(foreign.join("token").exists());
        assert_eq!(fs::metadata(&foreign).unwrap().uid(), NOBODY);
    }
}

#[test]
fn cleanup_of_a_base_without_a_shared_directory_does_nothing() {
    let base = base();
    assert!(cleanup_stale(base.path()).unwrap().is_empty());
    assert_eq!(fs::read_dir(base.path()).unwrap().count(), 0);
}

#[cfg(target_os = "linux")]
#[test]
fn every_fd_on_the_runtime_directory_is_close_on_exec() {
    let base = base();
    let dir = RuntimeDir::create(&[base.path().to_owned()]).unwrap();
    dir.write_token("t").unwrap();

    let mut seen_lock = false;
    let mut seen = 0;
    for entry in fs::read_dir("/proc/self/fd").unwrap() {
        let entry = entry.unwrap();
        let Ok(target) = fs::read_link(entry.path()) else {
            continue; // the fd of read_dir itself, closed meanwhile
        };
        if !target.starts_with(base.path()) {
            continue;
        }
        let raw: i32 = entry.file_name().to_str().unwrap().parse().unwrap();
        // SAFETY: the fd belongs to `dir` (its target is inside our fresh
        // temp directory), which stays alive and keeps it open until the end
        // of this test; it is only borrowed for one fcntl.
        let fd = unsafe { std::os::fd::BorrowedFd::borrow_raw(raw) };
        let flags = rustix::io::fcntl_getfd(fd).unwrap();
        assert!(
            flags.contains(rustix::io::FdFlags::CLOEXEC),
            "{} is not close-on-exec",
            target.display()
        );
        seen += 1;
        seen_lock |= target == dir.path().join("lock");
    }
    assert!(seen_lock, "the lock fd was not found among our fds");
    assert!(seen >= 3, "expected the shared, instance and lock fds");
}
