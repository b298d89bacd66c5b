//! Start/stop cycles leave nothing behind. Alone in its own test binary, so no other test's
//! threads or descriptors are counted.
// Unix only: it counts descriptors in /proc/self/fd and reads uids.
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::field_reassign_with_default)]

mod support;

use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ide_mcp_protocol::contract::SHARED_DIR_NAME;
use ide_mcp_server::client::Client;
use ide_mcp_server::diagnostics::diagnostics_domain;
use ide_mcp_server::{AllowAll, IdeMcpServers, ServerName};
use serde_json::json;

fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

fn threads() -> usize {
    std::fs::read_dir("/proc/self/task").unwrap().count()
}

fn start(base: &Path) -> IdeMcpServers {
    IdeMcpServers::builder([base.to_path_buf()])
        .guard(Arc::new(AllowAll))
        .domain(diagnostics_domain(ServerName::Code))
        .domain({
            let mut ops = diagnostics_domain(ServerName::Ops);
            ops.name = "ops-diagnostics".to_owned();
            ops
        })
        .start()
        .unwrap()
}

/// A client of the `code` server that has made one echo call.
fn client_after_a_call(servers: &IdeMcpServers) -> Client {
    let mut client = Client::connect(&servers.socket_path(ServerName::Code).unwrap()).unwrap();
    client
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    assert!(!client.run("echo", json!({ "value": 1 })).unwrap().is_error);
    client
}

/// Waits (at most ten seconds) until the process holds `expected` descriptors; the count at
/// the end.
fn fds_settled_at(expected: usize) -> usize {
    let until = Instant::now() + Duration::from_secs(10);
    while open_fds() != expected && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(10));
    }
    open_fds()
}

// One test, so that no other test's descriptors and threads are counted.
#[test]
fn start_stop_cycles_and_connections_leave_no_fd_thread_or_file_behind() {
    let base = tempfile::tempdir().unwrap();
    let run_cycle = || {
        let servers = start(base.path());
        let mut client = client_after_a_call(&servers);
        client
            .send_request(
                "tools/call",
                support::run_params("sleep", json!({ "ms": 60_000 })),
            )
            .unwrap();
        servers.stop().unwrap();
        drop(client);
    };
    // One warm-up cycle, so lazily created process-wide state is not counted as a leak.
    run_cycle();
    let (fds, thread_count) = (open_fds(), threads());
    for _ in 0..100 {
        run_cycle();
    }
    assert_eq!(open_fds(), fds);
    assert_eq!(threads(), thread_count);
    let shared = base.path().join(SHARED_DIR_NAME);
    assert_eq!(std::fs::read_dir(&shared).unwrap().count(), 0);
    assert_eq!(
        std::fs::metadata(&shared).unwrap().uid(),
        rustix::process::geteuid().as_raw()
    );

    // Connections that come and go while the servers run leave nothing behind either: each
    // holds its socket (and on Linux an epoll set of its own) only while it lives. The server
    // closes its side when it reads the client's hang-up, a moment after the client's drop.
    let servers = start(base.path());
    let running = open_fds();
    drop(client_after_a_call(&servers));
    assert_eq!(fds_settled_at(running), running);
    for _ in 0..200 {
        drop(client_after_a_call(&servers));
    }
    assert_eq!(fds_settled_at(running), running);
    servers.stop().unwrap();
}
