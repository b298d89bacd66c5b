//! The seam's promises, on whichever OS the suite runs: a real listener and a real
//! connection, the peer's identity as the kernel recorded it, our own process's information.
#![allow(clippy::unwrap_used)]

use super::*;

/// A real accepted connection: its directory, the server's end and the client's end.
pub(crate) fn accepted_pair() -> (tempfile::TempDir, Stream, BlockingStream) {
    accepted_with(|server_side| server_side)
}

/// A real accepted connection split as a connection splits it: its directory, the server's
/// read half and the client's end (the write half is dropped).
pub(crate) fn accepted_read_half() -> (tempfile::TempDir, StreamReadHalf, BlockingStream) {
    accepted_with(|server_side| split_stream(server_side).unwrap().0)
}

/// A real accepted connection whose server end is made by `make` inside the runtime (where a
/// registration with its reactor can be made).
fn accepted_with<T>(make: impl FnOnce(Stream) -> T) -> (tempfile::TempDir, T, BlockingStream) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.sock");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (server_side, client) = runtime.block_on(async {
        let listener = bind_listener(&path).unwrap();
        let client = connect_blocking(&path).unwrap();
        let (server_side, _) = listener.accept().await.unwrap();
        (make(server_side), client)
    });
    // The runtime goes, the stream stays usable for calls that need no reactor.
    std::mem::forget(runtime);
    (dir, server_side, client)
}

#[test]
fn an_accepted_connection_reports_our_own_process_and_user() {
    let (_dir, server_side, _client) = accepted_pair();
    let peer = peer_credentials(&server_side).unwrap();
    assert_eq!(peer.pid, i32::try_from(std::process::id()).unwrap());
    assert_eq!(peer.user, current_user());
    assert!(is_same_user(&peer));
}

#[test]
fn recv_now_tells_waiting_bytes_from_nothing_and_from_a_hang_up() {
    use std::io::Write;
    let (_dir, server_side, mut client) = accepted_pair();
    let mut buffer = [0u8; 16];
    let nothing = recv_now(&server_side, &mut buffer).unwrap_err();
    assert_eq!(nothing.kind(), std::io::ErrorKind::WouldBlock);
    client.write_all(b"hi").unwrap();
    // The bytes are in the socket buffer once write returned (a local socket).
    let mut read = 0;
    while read == 0 {
        match recv_now(&server_side, &mut buffer) {
            Ok(count) => read = count,
            Err(error) if error.kind() == std::io::ErrorKind::WouldBlock => {
                std::thread::yield_now()
            }
            Err(error) => panic!("{error}"),
        }
    }
    assert_eq!(&buffer[..read], b"hi");
    drop(client);
    loop {
        match recv_now(&server_side, &mut buffer) {
            Ok(0) => break,
            Err(error) if error.kind() == std::io::ErrorKind::WouldBlock => {
                std::thread::yield_now()
            }
            other => panic!("expected a hang-up, got {other:?}"),
        }
    }
}

/// `recv_now_on_half` until it reads something (the bytes reach the socket buffer as `write`
/// returns on a local socket, but the test does not count on it).
fn recv_on_half_until_some(half: &StreamReadHalf, buffer: &mut bytes::BytesMut) -> usize {
    loop {
        match recv_now_on_half(half, buffer) {
            Ok(count) => return count,
            Err(error) if error.kind() == std::io::ErrorKind::WouldBlock => {
                std::thread::yield_now()
            }
            Err(error) => panic!("{error}"),
        }
    }
}

#[test]
fn recv_now_on_half_appends_within_the_room_and_leaves_the_rest_on_the_socket() {
    use std::io::Write;
    let (_dir, read_half, mut client) = accepted_read_half();
    let mut buffer = bytes::BytesMut::with_capacity(64);
    buffer.extend_from_slice(b"held:");
    let nothing = recv_now_on_half(&read_half, &mut buffer).unwrap_err();
    assert_eq!(nothing.kind(), std::io::ErrorKind::WouldBlock);
    assert_eq!(
        &buffer[..],
        b"held:",
        "nothing read leaves the buffer as it was"
    );
    let message: Vec<u8> = (0..100_000u32).map(|index| (index % 251) as u8).collect();
    let writer = std::thread::spawn(move || {
        client.write_all(&message).unwrap();
        (client, message)
    });
    // Read with the buffer's room only: each read fills at most what room there was.
    let mut room_exceeded = false;
    while buffer.len() < 5 + 100_000 {
        let room = buffer.capacity() - buffer.len();
        let read = recv_on_half_until_some(&read_half, &mut buffer);
        assert_ne!(read, 0, "no hang-up before the whole message");
        room_exceeded |= room > 0 && read > room;
        if buffer.capacity() == buffer.len() {
            buffer.reserve(4096);
        }
    }
    assert!(!room_exceeded, "a read took more than the buffer's room");
    let (client, message) = writer.join().unwrap();
    assert_eq!(&buffer[..5], b"held:");
    assert_eq!(
        &buffer[5..],
        &message[..],
        "every byte, in order, after those held"
    );
    drop(client);
    assert_eq!(
        recv_on_half_until_some(&read_half, &mut buffer),
        0,
        "the hang-up"
    );
}

#[test]
fn a_socket_path_longer_than_sun_path_is_refused_before_bind_with_the_limit_named() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x".repeat(SUN_PATH_CAPACITY + 1));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let _entered = runtime.enter();
    let error = bind_listener(&path).unwrap_err();
    assert_eq!(error.kind(), std::io::ErrorKind::InvalidInput);
    assert!(
        error.to_string().contains(&SUN_PATH_CAPACITY.to_string()),
        "{error}"
    );
    assert!(!path.exists(), "nothing was bound");
    let error = connect_blocking(&path).unwrap_err();
    assert_eq!(error.kind(), std::io::ErrorKind::InvalidInput);
}

#[test]
fn a_private_directory_and_file_are_protected_and_ours() {
    let base = tempfile::tempdir().unwrap();
    let base_dir = fs::open_dir(base.path()).unwrap();
    fs::make_dir_at(&base_dir, "private", Protection::PrivateDirectory).unwrap();
    let private = fs::open_dir_at(&base_dir, "private").unwrap();
    fs::protect(&private, Protection::PrivateDirectory).unwrap();
    let status = fs::stat(&private).unwrap();
    assert!(fs::is_ours(&status));
    assert!(
        fs::is_protected(&status, Protection::PrivateDirectory),
        "{}",
        fs::describe_protection(&status)
    );
    assert_eq!(fs::file_type(&status), fs::FileType::Directory);

    let file = fs::create_new_at(&private, "token", Protection::PrivateFile).unwrap();
    fs::protect(&file, Protection::PrivateFile).unwrap();
    fs::write_all(&file, b"secret").unwrap();
    let status = fs::stat_at(&private, "token").unwrap();
    assert!(fs::is_ours(&status));
    assert!(
        fs::is_protected(&status, Protection::PrivateFile),
        "{}",
        fs::describe_protection(&status)
    );
    assert_eq!(fs::file_type(&status), fs::FileType::RegularFile);
    assert_eq!(
        fs::create_new_at(&private, "token", Protection::PrivateFile).unwrap_err(),
        fs::Errno::EXIST
    );
    drop(file);
    assert_eq!(fs::list_dir(&private).unwrap(), ["token"]);
    fs::rename_at(&private, "token", "renamed").unwrap();
    assert_eq!(
        fs::stat_at(&private, "token").unwrap_err(),
        fs::Errno::NOENT
    );
    fs::unlink_at(&private, "renamed").unwrap();
    drop(private);
    fs::remove_dir_at(&base_dir, "private").unwrap();
    assert!(!base.path().join("private").exists());
}

#[test]
fn a_lock_is_exclusive_between_open_files() {
    let base = tempfile::tempdir().unwrap();
    let dir = fs::open_dir(base.path()).unwrap();
    let holder = fs::create_new_at(&dir, "lock", Protection::PrivateFile).unwrap();
    fs::try_lock_exclusive(&holder).unwrap();
    let other = fs::open_read_at(&dir, "lock").unwrap();
    assert_eq!(
        fs::try_lock_exclusive(&other).unwrap_err(),
        fs::Errno::WOULDBLOCK
    );
    drop(holder);
    fs::try_lock_exclusive(&other).unwrap();
}

/// Not a test of its own: the child process of the next test, which waits until its standard
/// input closes. Run only through that test (`--ignored --exact`).
#[test]
#[ignore = "the child process of a_child_is_ours_until_it_exits"]
fn child_that_waits_for_its_standard_input_to_close() {
    use std::io::Read;
    let mut input = Vec::new();
    let _ = std::io::stdin().read_to_end(&mut input);
}

#[test]
fn a_child_is_ours_until_it_exits() {
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--ignored",
            "--exact",
            "platform::tests::child_that_waits_for_its_standard_input_to_close",
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let me = i32::try_from(std::process::id()).unwrap();
    let pid = i32::try_from(child.id()).unwrap();
    assert_eq!(process::parent_pid(pid), Some(me));
    let started = process::start_time(pid).unwrap();
    assert_eq!(process::start_time(pid), Some(started));
    assert_eq!(
        process::executable(pid).unwrap().file_name(),
        std::env::current_exe().unwrap().file_name()
    );
    // A spawn returns once the child's exec has begun, which on Linux can be before the
    // kernel has set up its arguments (they read as empty until then): wait for them.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let mut arguments = process::command_line(pid);
    while arguments.is_empty() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(5));
        arguments = process::command_line(pid);
    }
    assert!(arguments.iter().any(|argument| argument == "--ignored"));
    drop(child.stdin.take());
    assert!(child.wait().unwrap().success());
    assert_eq!(
        process::start_time(pid),
        None,
        "an exited process has no start time"
    );
}

#[test]
fn our_own_process_has_a_start_time_and_an_executable() {
    let me = i32::try_from(std::process::id()).unwrap();
    assert!(process::start_time(me).is_some());
    assert_eq!(process::start_time(me), process::start_time(me));
    let executable = process::executable(me).unwrap();
    assert_eq!(
        executable.file_name(),
        std::env::current_exe().unwrap().file_name()
    );
    assert!(!process::command_line(me).is_empty());
    assert_eq!(process::start_time(-1), None);
}
