//! A global allocator that, once switched on, counts live heap blocks by exact size.
//!
//! It answers "what does one idle connection keep allocated, and in which blocks": the delta
//! between two snapshots, bucketed by size, names the buffers (8 KiB read and write buffers,
//! task cells, channel blocks) far more precisely than RSS can. It also keeps the high-water
//! mark of live bytes, which `hostile-memory` reads around one decode. Counting is off unless a
//! server process is started with `--count-allocations` (or the `hostile-memory` mode switches
//! it on), so the latency and throughput runs pay only one relaxed load per allocation.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};

/// Sizes up to this are counted exactly; larger blocks share the last bucket.
const EXACT_SIZES: usize = 64 * 1024;

/// The allocator of every binary built from this crate.
#[derive(Debug)]
pub struct CountingAllocator;

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

static COUNTING: AtomicBool = AtomicBool::new(false);
static LIVE_BYTES: AtomicI64 = AtomicI64::new(0);
static PEAK_BYTES: AtomicI64 = AtomicI64::new(0);
static LIVE_BLOCKS_BY_SIZE: [AtomicI64; EXACT_SIZES + 1] =
    [const { AtomicI64::new(0) }; EXACT_SIZES + 1];

/// Starts counting. Blocks allocated before are not counted, so call it before the work whose
/// memory is measured (snapshot deltas stay exact either way).
pub fn start_counting() {
    COUNTING.store(true, Ordering::SeqCst);
}

/// Whether counting is on.
pub fn is_counting() -> bool {
    COUNTING.load(Ordering::Relaxed)
}

/// Live bytes, and live blocks per size as `(size, count)` for every size with a non-zero
/// count; the size 65536 stands for "64 KiB or more".
pub fn live_blocks() -> (i64, Vec<(usize, i64)>) {
    let by_size = LIVE_BLOCKS_BY_SIZE
        .iter()
        .enumerate()
        .filter_map(|(size, count)| {
            let count = count.load(Ordering::Relaxed);
            (count != 0).then_some((size, count))
        })
        .collect();
    (LIVE_BYTES.load(Ordering::Relaxed), by_size)
}

/// Restarts the high-water mark at the live bytes of now, and returns them.
pub fn reset_peak() -> i64 {
    let live = LIVE_BYTES.load(Ordering::Relaxed);
    PEAK_BYTES.store(live, Ordering::Relaxed);
    live
}

/// The most live bytes seen since the last [`reset_peak`].
pub fn peak_bytes() -> i64 {
    PEAK_BYTES.load(Ordering::Relaxed)
}

fn record(size: usize, delta: i64) {
    let change = delta * size as i64;
    let live = LIVE_BYTES.fetch_add(change, Ordering::Relaxed) + change;
    if delta > 0 {
        PEAK_BYTES.fetch_max(live, Ordering::Relaxed);
    }
    LIVE_BLOCKS_BY_SIZE[size.min(EXACT_SIZES)].fetch_add(delta, Ordering::Relaxed);
}

// SAFETY: every method forwards to `System` with the caller's arguments unchanged; the
// counting touches only atomics and never allocates.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded with the caller's guarantees about `layout`.
        let block = unsafe { System.alloc(layout) };
        if !block.is_null() && is_counting() {
            record(layout.size(), 1);
        }
        block
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded with the caller's guarantees about `layout`.
        let block = unsafe { System.alloc_zeroed(layout) };
        if !block.is_null() && is_counting() {
            record(layout.size(), 1);
        }
        block
    }

    unsafe fn dealloc(&self, block: *mut u8, layout: Layout) {
        if is_counting() {
            record(layout.size(), -1);
        }
        // SAFETY: forwarded with the caller's guarantees about `block` and `layout`.
        unsafe { System.dealloc(block, layout) }
    }

    unsafe fn realloc(&self, block: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded with the caller's guarantees about `block`, `layout`, `new_size`.
        let moved = unsafe { System.realloc(block, layout, new_size) };
        if !moved.is_null() && is_counting() {
            // The new block first: a moving reallocation holds both for a moment.
            record(new_size, 1);
            record(layout.size(), -1);
        }
        moved
    }
}
