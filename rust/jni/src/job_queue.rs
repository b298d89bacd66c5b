//! The callback threads' queue of jobs: bounded, first in first out, and a thread that finds
//! it empty goes to sleep at once.
//!
//! Why not a channel crate: a receiver of `crossbeam_channel` that finds the channel empty
//! spins and then yields its CPU a few times before it registers as waiting, and a sender
//! wakes only registered receivers. Between calls of one client all four callback threads
//! are in that phase, so a new job waits until a yielding thread is scheduled again, which on
//! a busy machine is up to a scheduler tick (milliseconds) later, and the yields themselves
//! take CPU time from the Tokio worker that waits for the job's answer. Here a thread that
//! finds nothing waits on the condition variable right away, and every job wakes a sleeper.

use std::collections::VecDeque;
use std::sync::{Condvar, Mutex, MutexGuard};

/// A bounded multi-producer, multi-consumer queue whose consumers never spin.
pub(crate) struct JobQueue<T> {
    state: Mutex<VecDeque<T>>,
    not_empty: Condvar,
    capacity: usize,
}

impl<T> JobQueue<T> {
    /// An empty queue that holds at most `capacity` items.
    pub(crate) fn new(capacity: usize) -> Self {
        JobQueue {
            state: Mutex::new(VecDeque::new()),
            not_empty: Condvar::new(),
            capacity,
        }
    }

    /// Queues `item` without blocking; a full queue gives it back.
    pub(crate) fn try_push(&self, item: T) -> Result<(), T> {
        let mut items = self.lock();
        if items.len() >= self.capacity {
            return Err(item);
        }
        items.push_back(item);
        drop(items);
        self.not_empty.notify_one();
        Ok(())
    }

    /// The oldest item, waiting (asleep) until there is one.
    pub(crate) fn pop(&self) -> T {
        let mut items = self.lock();
        loop {
            if let Some(item) = items.pop_front() {
                return item;
            }
            items = self
                .not_empty
                .wait(items)
                .unwrap_or_else(|poisoned| poisoned.into_inner());
        }
    }

    fn lock(&self) -> MutexGuard<'_, VecDeque<T>> {
        // Every update is one push or pop: a poisoned lock still holds a whole queue.
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use super::JobQueue;

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
