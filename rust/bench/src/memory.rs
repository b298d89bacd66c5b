//! Memory per idle connection: a server process's growth while it holds many initialised,
//! idle connections.

use std::collections::BTreeMap;
use std::io;
use std::os::unix::net::UnixStream;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::connection::{BenchConnection, BenchError};
use crate::counting_alloc;
use crate::endpoint::Endpoint;
use crate::server_process::ServerProcess;

/// How long the server gets to finish processing the last handshakes before a snapshot.
const SETTLE: Duration = Duration::from_millis(500);

/// Connections opened, used and closed before the baseline, so one-time costs (lazy statics,
/// the first task allocations, allocator arenas) are not charged to the idle connections.
const WARMUP_CONNECTIONS: usize = 16;

/// A process's memory at one moment.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MemorySnapshot {
    /// `VmRSS` from `/proc/<pid>/status`.
    pub vm_rss_kib: u64,
    /// `Private_Dirty` from `/proc/<pid>/smaps_rollup`: pages only this process wrote.
    pub private_dirty_kib: u64,
    /// `Anonymous` from `/proc/<pid>/smaps_rollup`: heap and stacks.
    pub anonymous_kib: u64,
    /// Live heap bytes, when the process counts its allocations.
    pub heap_live_bytes: Option<i64>,
    /// Live heap blocks per exact size, when the process counts its allocations.
    pub heap_blocks_by_size: Vec<(usize, i64)>,
}

impl MemorySnapshot {
    /// The figures of the calling process.
    pub fn of_this_process() -> io::Result<MemorySnapshot> {
        let status = std::fs::read_to_string("/proc/self/status")?;
        let rollup = std::fs::read_to_string("/proc/self/smaps_rollup")?;
        let (heap_live_bytes, heap_blocks_by_size) = if counting_alloc::is_counting() {
            let (bytes, by_size) = counting_alloc::live_blocks();
            (Some(bytes), by_size)
        } else {
            (None, Vec::new())
        };
        Ok(MemorySnapshot {
            vm_rss_kib: kib_field(&status, "VmRSS:")?,
            private_dirty_kib: kib_field(&rollup, "Private_Dirty:")?,
            anonymous_kib: kib_field(&rollup, "Anonymous:")?,
            heap_live_bytes,
            heap_blocks_by_size,
        })
    }
}

fn kib_field(text: &str, name: &str) -> io::Result<u64> {
    text.lines()
        .find_map(|line| line.strip_prefix(name))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|number| number.parse().ok())
        .ok_or_else(|| io::Error::other(format!("no `{name}` in /proc")))
}

/// Heap blocks of one size that the idle connections added.
#[derive(Debug, Clone, PartialEq)]
pub struct BlockGrowth {
    /// Block size in bytes (65536 means 64 KiB or more).
    pub size: usize,
    /// Blocks of this size added per connection.
    pub blocks_per_connection: f64,
    /// Bytes added per connection by blocks of this size.
    pub bytes_per_connection: f64,
}

/// What holding idle connections cost a server process.
#[derive(Debug, Clone)]
pub struct IdleMemoryResult {
    /// Idle connections held.
    pub connections: usize,
    /// Growth of `VmRSS` per connection, in KiB.
    pub rss_kib_per_connection: f64,
    /// Growth of `Private_Dirty` per connection, in KiB.
    pub private_dirty_kib_per_connection: f64,
    /// Growth of `Anonymous` per connection, in KiB.
    pub anonymous_kib_per_connection: f64,
    /// Growth of live heap bytes per connection, in KiB, when counted.
    pub heap_kib_per_connection: Option<f64>,
    /// Growth of live heap blocks per connection, when counted.
    pub heap_blocks_per_connection: Option<f64>,
    /// The block sizes that grew the most, largest byte growth first.
    pub largest_growth: Vec<BlockGrowth>,
}

/// Opens `count` connections to `endpoint` that each complete the handshake and then stay idle,
/// and measures the growth of `server`'s memory.
pub fn measure_idle_connections(
    server: &mut ServerProcess,
    endpoint: &Endpoint,
    count: usize,
) -> Result<IdleMemoryResult, BenchError> {
    for _ in 0..WARMUP_CONNECTIONS {
        let mut connection = BenchConnection::open(endpoint)?;
        connection.send_call()?;
        connection.read_reply()?;
    }
    std::thread::sleep(SETTLE);
    let before = server.memory()?;
    let idle: Vec<UnixStream> = (0..count)
        .map(|_| BenchConnection::open(endpoint).map(BenchConnection::into_idle_socket))
        .collect::<Result<_, _>>()?;
    std::thread::sleep(SETTLE);
    let after = server.memory()?;
    drop(idle);
    Ok(compare(&before, &after, count))
}

fn compare(before: &MemorySnapshot, after: &MemorySnapshot, count: usize) -> IdleMemoryResult {
    let per_connection = |before: f64, after: f64| (after - before) / count as f64;
    let heap_kib_per_connection = before
        .heap_live_bytes
        .zip(after.heap_live_bytes)
        .map(|(before, after)| per_connection(before as f64, after as f64) / 1024.0);
    let mut growth: BTreeMap<usize, i64> = BTreeMap::new();
    for &(size, blocks) in &after.heap_blocks_by_size {
        *growth.entry(size).or_default() += blocks;
    }
    for &(size, blocks) in &before.heap_blocks_by_size {
        *growth.entry(size).or_default() -= blocks;
    }
    let heap_blocks_per_connection =
        heap_kib_per_connection.map(|_| growth.values().sum::<i64>() as f64 / count as f64);
    let mut largest_growth: Vec<BlockGrowth> = growth
        .into_iter()
        .filter(|&(_, blocks)| blocks > 0)
        .map(|(size, blocks)| BlockGrowth {
            size,
            blocks_per_connection: blocks as f64 / count as f64,
            bytes_per_connection: (blocks as f64 * size as f64) / count as f64,
        })
        .collect();
    largest_growth.sort_by(|a, b| b.bytes_per_connection.total_cmp(&a.bytes_per_connection));
    largest_growth.truncate(8);
    IdleMemoryResult {
        connections: count,
        rss_kib_per_connection: per_connection(before.vm_rss_kib as f64, after.vm_rss_kib as f64),
        private_dirty_kib_per_connection: per_connection(
            before.private_dirty_kib as f64,
            after.private_dirty_kib as f64,
        ),
        anonymous_kib_per_connection: per_connection(
            before.anonymous_kib as f64,
            after.anonymous_kib as f64,
        ),
        heap_kib_per_connection,
        heap_blocks_per_connection,
        largest_growth,
    }
}
