//! What a call costs the runtime's threads in wake-ups. In a test binary of their own, one
//! test at a time, so the only `ide-mcp-io` threads in the process are those of the one
//! server set the running test starts.
// Linux only: it reads the threads' context switches in /proc/self/task.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used)]

mod support;

use std::time::Duration;

use ide_mcp_server::ServerName;
use serde_json::json;
use support::TestServers;

/// The tests count every `ide-mcp-io` thread of the process: one server set at a time.
static ONE_SERVER_SET_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The servers, started with `setup` while no other test of this file runs, and a client of
/// `code` that has made a few calls already.
fn started_with_a_warm_client(
    setup: support::Setup,
) -> (
    std::sync::MutexGuard<'static, ()>,
    TestServers,
    ide_mcp_server::client::Client,
) {
    let alone = ONE_SERVER_SET_AT_A_TIME
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let servers = TestServers::start_with(setup);
    let mut client = servers.client_of(ServerName::Code, ide_mcp_server::client::Wire::Lines);
    client
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    for value in 0..20 {
        echo(&mut client, value);
    }
    (alone, servers, client)
}

/// One echo call, which must succeed.
fn echo(client: &mut ide_mcp_server::client::Client, value: u64) {
    let result = client.run("echo", json!({ "value": value })).unwrap();
    assert!(!result.is_error, "{result:?}");
}

/// Times each of the runtime's worker threads gave up its CPU to wait, by thread id.
fn worker_waits() -> std::collections::BTreeMap<String, u64> {
    let mut waits = std::collections::BTreeMap::new();
    for task in std::fs::read_dir("/proc/self/task").unwrap() {
        let task = task.unwrap().path();
        let Ok(name) = std::fs::read_to_string(task.join("comm")) else {
            continue;
        };
        if name.trim() != "ide-mcp-io" {
            continue;
        }
        let Ok(status) = std::fs::read_to_string(task.join("status")) else {
            continue;
        };
        let count = status
            .lines()
            .find_map(|line| line.strip_prefix("voluntary_ctxt_switches:"))
            .and_then(|count| count.trim().parse::<u64>().ok())
            .unwrap_or(0);
        waits.insert(task.display().to_string(), count);
    }
    waits
}

/// A call that arrives at an idle server and finishes on the connection's task wakes the
/// worker that reads it and no other. A reply the connection's task queued itself used to
/// wake that very task while it ran, and Tokio then woke the second worker for it: both
/// workers waited about once per call. Now one of them sleeps through the calls (which one
/// is up to the runtime).
#[test]
fn a_call_to_an_idle_server_wakes_only_the_worker_that_reads_it() {
    let (_alone, servers, mut client) = started_with_a_warm_client(support::Setup::default());
    let mut call = |value: u64| echo(&mut client, value);
    const CALLS: u64 = 200;
    let before = worker_waits();
    for value in 0..CALLS {
        // Long enough for every worker to be asleep when the call comes, as between an
        // agent's calls.
        std::thread::sleep(Duration::from_millis(2));
        call(value);
    }
    let after = worker_waits();
    let waits: Vec<u64> = after
        .iter()
        .map(|(thread, count)| count - before.get(thread).copied().unwrap_or(0))
        .collect();
    assert_eq!(waits.len(), 2, "the default configuration has two workers");
    // The reading worker waits once per call or more; the other, woken by no call, about
    // never (a few dozen times over the calls on a loaded machine).
    let least = waits.iter().copied().min().unwrap_or(0);
    assert!(
        least <= CALLS * 3 / 4,
        "each worker waited {waits:?} times over {CALLS} calls"
    );
    servers.stop();
}

/// A client that sends its next call right after each reply (a script, a test suite, an
/// agent working through a batch) has it read by a look at the socket before the worker
/// waits, not by a wake-up of that worker: over calls made back to back, the workers wait far
/// fewer times than there are calls. Without the look, the reading worker waited about once
/// per call or more (566 times over 400 calls). The best of three runs counts: when the
/// scheduler puts the client on the worker's CPU and does not let it run at once, the look
/// gives way to it only when it ends, and such a run waits more.
///
/// A figure of a release build: in a debug build the client, in this same process, is slow
/// enough and shares enough with the server (the allocator's locks among them) that the
/// workers wait for other reasons, with the look or without. `scripts/test.sh` runs this
/// file with `--release` as well.
#[test]
#[cfg_attr(
    debug_assertions,
    ignore = "a release build's figure: scripts/test.sh runs it with --release"
)]
fn calls_made_back_to_back_are_read_without_a_wait_each() {
    let (_alone, servers, mut client) = started_with_a_warm_client(support::Setup::default());
    let mut call = |value: u64| echo(&mut client, value);
    const CALLS: u64 = 400;
    let mut runs = Vec::new();
    for _ in 0..3 {
        let before = worker_waits();
        for value in 0..CALLS {
            call(value);
        }
        let after = worker_waits();
        let waits: u64 = after
            .iter()
            .map(|(thread, count)| count - before.get(thread).copied().unwrap_or(0))
            .sum();
        runs.push(waits);
        if waits < CALLS / 2 {
            break;
        }
    }
    let best = runs.iter().copied().min().unwrap_or(u64::MAX);
    assert!(
        best < CALLS / 2,
        "the workers waited {runs:?} times in runs of {CALLS} calls made back to back"
    );
    servers.stop();
}

/// A client that sends its next call right after each reply keeps its connection reading
/// without waiting, but never keeps the worker from other connections: the runtime's budget
/// of work per turn still sends the connection back to the scheduler now and then, where the
/// other connections' messages are seen. With one worker thread, a second client's call is
/// answered while the first goes on sending requests back to back.
#[test]
fn a_client_calling_back_to_back_leaves_the_worker_to_others() {
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    use std::sync::Arc;
    use std::time::Instant;

    let _alone = ONE_SERVER_SET_AT_A_TIME
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let mut setup = support::Setup::default();
    setup.config.worker_threads = 1;
    let servers = TestServers::start_with(setup);
    let mut eager = servers.client_of(ServerName::Code, ide_mcp_server::client::Wire::Lines);
    let mut other = servers.client_of(ServerName::Code, ide_mcp_server::client::Wire::Lines);
    echo(&mut other, 0);
    let stop = Arc::new(AtomicBool::new(false));
    let eager_calls = Arc::new(AtomicU64::new(0));
    let eager_thread = {
        let stop = Arc::clone(&stop);
        let eager_calls = Arc::clone(&eager_calls);
        std::thread::spawn(move || {
            let started = Instant::now();
            // Stops when told, or after 20 s, which would be the other client's wait if the
            // eager one kept the worker.
            // Pings: a `run` waits for a handler's place, a Tokio semaphore that charges the
            // same budget, and a ping waits for nothing.
            while !stop.load(Ordering::Relaxed) && started.elapsed() < Duration::from_secs(20) {
                eager.request("ping", json!({})).unwrap();
                eager_calls.fetch_add(1, Ordering::Relaxed);
            }
        })
    };
    while eager_calls.load(Ordering::Relaxed) < 1_000 {
        std::thread::sleep(Duration::from_millis(1));
    }
    let asked = Instant::now();
    echo(&mut other, 2);
    let waited = asked.elapsed();
    let calls_before_stop = eager_calls.load(Ordering::Relaxed);
    stop.store(true, Ordering::Relaxed);
    eager_thread.join().unwrap();
    assert!(
        waited < Duration::from_secs(5),
        "the other client waited {waited:?} while the eager one made {calls_before_stop} calls"
    );
    servers.stop();
}
