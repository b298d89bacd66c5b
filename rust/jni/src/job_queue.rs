//! The callback threads' queue of jobs: bounded, first in first out. The thread that finished
//! a job last watches the queue for a short while before it sleeps; every other thread that
//! finds the queue empty sleeps at once.
//!
//! Why the watch: a client makes its calls one after another, so the next job comes a round
//! trip after the last one ended. A thread asleep on a condition variable costs that job a
//! wake-up (a futex call, and on a virtual machine often a halted CPU brought back), which
//! was most of what a call into Java cost beyond its own work. The thread that just ran a job
//! is the one whose caches are warm, and while it watches, a new job is taken without waking
//! anyone. The watch yields the CPU between looks, so on a busy machine it gives way to any
//! thread that has work, and it ends after [`WATCH`]: a server set without calls has no
//! thread awake. A watcher that has not looked for [`WATCHER_STALE`] is not getting a CPU
//! (another thread that does not yield holds the one it shares): a job queued then wakes a
//! sleeper as well, and whichever comes first takes it.
//!
//! Why not a channel crate: a receiver of `crossbeam_channel` that finds the channel empty
//! spins and yields too, but every receiver does, and a sender wakes only receivers that
//! gave up and registered as waiting. Between calls of one client all four callback threads
//! were in that phase, taking turns at the CPU the Tokio worker waited on. Here one thread
//! watches, and a sender wakes a sleeper only when no watcher will take its job.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// How long the thread that finished a job watches for the next one before it sleeps. A
/// client that calls again at once (an agent's next step, a test's loop) sends its next call
/// within a round trip, tens of microseconds; a slower one costs a thread this much CPU time
/// per call, in looks that yield between them.
pub(crate) const WATCH: Duration = Duration::from_micros(100);

/// How many looks a watcher makes between two yields of its CPU (and two readings of the
/// clock).
const LOOKS_PER_YIELD: u32 = 8;

/// How long a watcher may go without looking before a new job also wakes a sleeper. Far
/// longer than its looks are apart when it runs (about a microsecond), and than the other
/// threads' turns on a CPU it shares with them (a call's work); far shorter than a
/// scheduler's time slice, which is how long a thread that never yields keeps it away.
pub(crate) const WATCHER_STALE: Duration = Duration::from_micros(50);

/// A bounded multi-producer, multi-consumer queue with at most one consumer watching it.
pub(crate) struct JobQueue<T> {
    state: Mutex<State<T>>,
    not_empty: Condvar,
    /// How many items are queued, for the watcher to look at without taking the lock.
    queued: AtomicUsize,
    /// When the watcher last read the clock, in nanoseconds since `epoch`.
    watcher_seen: AtomicU64,
    epoch: Instant,
    capacity: usize,
    watch: Duration,
}

struct State<T> {
    items: VecDeque<T>,
    /// Whether a consumer is watching (it takes the next item without being woken).
    watching: bool,
    /// How many consumers are asleep on `not_empty`.
    sleeping: usize,
}

impl<T> State<T> {
    /// Whether the items now queued need a sleeper woken: one is asleep, and there are more
    /// items than a watcher takes, or the watcher is stale (`watcher_is_stale`, asked only
    /// then).
    fn wakes_a_sleeper(&self, watcher_is_stale: impl FnOnce() -> bool) -> bool {
        if self.sleeping == 0 {
            return false;
        }
        if !self.watching {
            return !self.items.is_empty();
        }
        self.items.len() > 1 || watcher_is_stale()
    }
}

impl<T> JobQueue<T> {
    /// An empty queue that holds at most `capacity` items, whose consumers watch it for
    /// [`WATCH`] before they sleep.
    pub(crate) fn new(capacity: usize) -> Self {
        Self::with_watch(capacity, WATCH)
    }

    /// An empty queue whose consumers watch it for `watch` before they sleep.
    pub(crate) fn with_watch(capacity: usize, watch: Duration) -> Self {
        JobQueue {
            state: Mutex::new(State {
                items: VecDeque::new(),
                watching: false,
                sleeping: 0,
            }),
            not_empty: Condvar::new(),
            queued: AtomicUsize::new(0),
            watcher_seen: AtomicU64::new(0),
            epoch: Instant::now(),
            capacity,
            watch,
        }
    }

    /// Queues `item` without blocking; a full queue gives it back. Wakes a sleeping consumer
    /// unless the watcher will take the item.
    pub(crate) fn try_push(&self, item: T) -> Result<(), T> {
        let mut state = self.lock();
        if state.items.len() >= self.capacity {
            return Err(item);
        }
        state.items.push_back(item);
        self.queued.store(state.items.len(), Ordering::Release);
        let wake = state.wakes_a_sleeper(|| self.watcher_is_stale());
        drop(state);
        if wake {
            self.not_empty.notify_one();
        }
        Ok(())
    }

    /// The oldest item: at once when there is one; else, when no other consumer watches,
    /// after watching for one; else (or when the watch ends with nothing) asleep until an
    /// item comes.
    pub(crate) fn pop(&self) -> T {
        let mut state = self.lock();
        let mut watched = false;
        loop {
            if let Some(item) = state.items.pop_front() {
                self.queued.store(state.items.len(), Ordering::Release);
                return item;
            }
            if !watched && !state.watching && !self.watch.is_zero() {
                watched = true;
                state.watching = true;
                drop(state);
                if let Some(item) = self.watch_for_item() {
                    return item;
                }
                state = self.lock();
                state.watching = false;
                // An item pushed while this thread watched woke nobody: it is in the queue,
                // and the loop takes it.
                continue;
            }
            state.sleeping += 1;
            state = self
                .not_empty
                .wait(state)
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            state.sleeping -= 1;
        }
    }

    /// Whether the watcher has not looked for [`WATCHER_STALE`].
    fn watcher_is_stale(&self) -> bool {
        let seen = Duration::from_nanos(self.watcher_seen.load(Ordering::Relaxed));
        self.epoch.elapsed().saturating_sub(seen) > WATCHER_STALE
    }

    /// Records that the watcher is looking now.
    fn watcher_looks_at(&self, now: Instant) {
        let since_epoch = now.saturating_duration_since(self.epoch).as_nanos();
        self.watcher_seen.store(
            u64::try_from(since_epoch).unwrap_or(u64::MAX),
            Ordering::Relaxed,
        );
    }

    /// Looks for an item until the watch ends, yielding the CPU between looks. A look that
    /// finds one ends the watch; one that runs out leaves `watching` for the caller to clear.
    fn watch_for_item(&self) -> Option<T> {
        let started = Instant::now();
        self.watcher_looks_at(started);
        let until = started + self.watch;
        let mut looks = 0u32;
        loop {
            if self.queued.load(Ordering::Acquire) > 0 {
                let mut state = self.lock();
                if let Some(item) = state.items.pop_front() {
                    self.queued.store(state.items.len(), Ordering::Release);
                    // The watch ends with the item, under the same lock: a push after it
                    // must not count on this thread taking its item too, and wakes a sleeper.
                    state.watching = false;
                    return Some(item);
                }
            }
            looks = looks.wrapping_add(1);
            if looks.is_multiple_of(LOOKS_PER_YIELD) {
                let now = Instant::now();
                if now >= until {
                    return None;
                }
                self.watcher_looks_at(now);
                std::thread::yield_now();
            } else {
                std::hint::spin_loop();
            }
        }
    }

    fn lock(&self) -> MutexGuard<'_, State<T>> {
        // Every update is one push or pop and its counts: a poisoned lock still holds a whole
        // queue.
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}
#[cfg(test)]
mod tests {
    use std::collections::VecDeque;
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    use super::{JobQueue, State};

    const LONG: Duration = Duration::from_secs(10);

    /// A consumer that pops one item and sends it back, so a test that breaks fails at
    /// `recv_timeout` instead of hanging in a join.
    fn spawn_pop<T: Send + 'static>(queue: &Arc<JobQueue<T>>) -> std::sync::mpsc::Receiver<T> {
        let (sender, received) = std::sync::mpsc::channel();
        let queue = Arc::clone(queue);
        std::thread::spawn(move || {
            let _ = sender.send(queue.pop());
        });
        received
    }

    /// Waits (at most `LONG`) until the queue's state satisfies `ready`.
    fn wait_for<T>(queue: &JobQueue<T>, ready: impl Fn(&State<T>) -> bool) {
        let until = Instant::now() + LONG;
        while !ready(&queue.lock()) {
            assert!(
                Instant::now() < until,
                "the queue never reached the awaited state"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    #[test]
    fn a_watcher_takes_the_next_item_without_a_sleeper_being_woken() {
        let queue = Arc::new(JobQueue::with_watch(8, LONG));
        let watcher = spawn_pop(&queue);
        wait_for(&queue, |state| state.watching);
        assert!(queue.try_push(7).is_ok());
        assert_eq!(watcher.recv_timeout(LONG).ok(), Some(7));
        let state = queue.lock();
        assert!(!state.watching && state.sleeping == 0 && state.items.is_empty());
    }

    #[test]
    fn a_watch_that_runs_out_sleeps_until_an_item_comes() {
        let queue = Arc::new(JobQueue::with_watch(8, Duration::from_millis(1)));
        let consumer = spawn_pop(&queue);
        wait_for(&queue, |state| state.sleeping == 1 && !state.watching);
        assert!(queue.try_push(3).is_ok());
        assert_eq!(consumer.recv_timeout(LONG).ok(), Some(3));
    }

    #[test]
    fn only_one_consumer_watches_and_the_others_sleep() {
        let queue = Arc::new(JobQueue::with_watch(8, LONG));
        let consumers: Vec<_> = (0..3).map(|_| spawn_pop(&queue)).collect();
        wait_for(&queue, |state| state.watching && state.sleeping == 2);
        for item in 0..3 {
            assert!(queue.try_push(item).is_ok());
        }
        let mut taken: Vec<u32> = consumers
            .iter()
            .filter_map(|consumer| consumer.recv_timeout(LONG).ok())
            .collect();
        taken.sort_unstable();
        assert_eq!(taken, [0, 1, 2]);
    }

    /// The watch ends in the same lock that takes the item: a push right after it wakes a
    /// sleeper, where a watch still marked would leave the item to a thread that already
    /// has its own (three pushes to a watcher and two sleepers then left one unserved).
    #[test]
    fn a_watcher_that_takes_an_item_stops_watching_at_once() {
        let queue = JobQueue::with_watch(8, LONG);
        queue.lock().watching = true;
        assert!(queue.try_push(4).is_ok());
        assert_eq!(queue.watch_for_item(), Some(4));
        assert!(!queue.lock().watching);
    }

    /// A watcher that does not look (here: a watch nobody runs, as when the watching thread
    /// shares its CPU with one that never yields) does not keep a job waiting: the sleeper is
    /// woken for it.
    #[test]
    fn a_stale_watcher_does_not_keep_an_item_from_a_sleeper() {
        let queue = Arc::new(JobQueue::with_watch(8, LONG));
        queue.lock().watching = true;
        let sleeper = spawn_pop(&queue);
        wait_for(&queue, |state| state.sleeping == 1);
        // The watcher was last seen when the queue was made.
        std::thread::sleep(super::WATCHER_STALE * 2);
        assert!(queue.try_push(5).is_ok());
        assert_eq!(sleeper.recv_timeout(LONG).ok(), Some(5));
    }

    #[test]
    fn a_sleeper_is_woken_only_for_what_no_watcher_takes() {
        let state = |items: usize, watching: bool, sleeping: usize| State {
            items: (0..items).collect::<VecDeque<usize>>(),
            watching,
            sleeping,
        };
        let fresh = || false;
        let stale = || true;
        // Nobody asleep: nobody to wake.
        assert!(!state(2, false, 0).wakes_a_sleeper(stale));
        // No watcher: every item wakes a sleeper.
        assert!(state(1, false, 1).wakes_a_sleeper(fresh));
        // A watcher that looks takes one item; a second needs a sleeper.
        assert!(!state(1, true, 1).wakes_a_sleeper(fresh));
        assert!(state(2, true, 1).wakes_a_sleeper(fresh));
        // A watcher that has not looked for a while may not be running.
        assert!(state(1, true, 1).wakes_a_sleeper(stale));
    }

    #[test]
    fn items_come_out_in_order_and_a_full_queue_refuses() {
        let queue = JobQueue::new(2);
        assert!(queue.try_push(1).is_ok());
        assert!(queue.try_push(2).is_ok());
        assert_eq!(queue.try_push(3), Err(3));
        assert_eq!(queue.pop(), 1);
        assert!(queue.try_push(3).is_ok());
        assert_eq!(queue.pop(), 2);
        assert_eq!(queue.pop(), 3);
    }

    #[test]
    fn a_sleeping_consumer_is_woken_by_each_item() {
        let queue = Arc::new(JobQueue::new(8));
        let (sender, received) = std::sync::mpsc::channel();
        let consumers: Vec<_> = (0..3)
            .map(|_| {
                let queue = Arc::clone(&queue);
                let sender = sender.clone();
                std::thread::spawn(move || loop {
                    let item: u32 = queue.pop();
                    if item == u32::MAX {
                        return;
                    }
                    if sender.send(item).is_err() {
                        return;
                    }
                })
            })
            .collect();
        // Let the consumers fall asleep on the empty queue first.
        std::thread::sleep(Duration::from_millis(50));
        for item in 0..100 {
            assert!(queue.try_push(item).is_ok());
            assert_eq!(received.recv_timeout(Duration::from_secs(10)), Ok(item));
        }
        for _ in &consumers {
            while queue.try_push(u32::MAX).is_err() {
                std::thread::yield_now();
            }
        }
        for consumer in consumers {
            assert!(consumer.join().is_ok());
        }
    }
}
