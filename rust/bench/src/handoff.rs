//! The floor under one JVM entry on this machine, measured beside the Java target: a job
//! handed to a thread asleep on a condition variable (as a callback thread waits for its next
//! job) and the answer watched for by the thread that handed it over (as a Tokio worker
//! watches for the answer of a lone Java call). No JNI and no work: only the wake-up of a
//! sleeping thread and the answer's way back, which a Java call cannot do without under the
//! thread model (Tokio workers never enter the JVM).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use crate::load::Percentiles;

/// How long the handing thread sleeps between two hand-offs, so that the other one is asleep
/// again when the next job comes, as a callback thread is between a client's calls.
const GAP: Duration = Duration::from_micros(crate::report::HANDOFF_GAP_US);

struct Slot {
    /// The next job's number; 0 tells the sleeper to end.
    job: Mutex<Option<u64>>,
    ready: Condvar,
    /// The number of the last job done.
    done: AtomicU64,
}

/// Hands `samples` jobs over after `warmup` unmeasured ones, one at a time; the round trip of
/// each, from queueing the job to seeing its answer.
pub fn measure(warmup: usize, samples: usize) -> Option<Percentiles> {
    let slot = Arc::new(Slot {
        job: Mutex::new(None),
        ready: Condvar::new(),
        done: AtomicU64::new(0),
    });
    let sleeper = {
        let slot = Arc::clone(&slot);
        std::thread::Builder::new()
            .name("bench-handoff".to_owned())
            .spawn(move || loop {
                let mut job = slot.job.lock().unwrap_or_else(|poison| poison.into_inner());
                let number = loop {
                    if let Some(number) = job.take() {
                        break number;
                    }
                    job = slot
                        .ready
                        .wait(job)
                        .unwrap_or_else(|poison| poison.into_inner());
                };
                drop(job);
                if number == 0 {
                    return;
                }
                slot.done.store(number, Ordering::Release);
            })
            .ok()?
    };
    let mut round_trips = Vec::with_capacity(samples);
    for number in 1..=(warmup + samples) as u64 {
        std::thread::sleep(GAP);
        let started = Instant::now();
        *slot.job.lock().unwrap_or_else(|poison| poison.into_inner()) = Some(number);
        slot.ready.notify_one();
        let mut looks = 0u32;
        while slot.done.load(Ordering::Acquire) != number {
            looks = looks.wrapping_add(1);
            if looks.is_multiple_of(64) {
                std::thread::yield_now();
            }
            std::hint::spin_loop();
        }
        if number > warmup as u64 {
            round_trips.push(u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX));
        }
    }
    *slot.job.lock().unwrap_or_else(|poison| poison.into_inner()) = Some(0);
    slot.ready.notify_one();
    let _ = sleeper.join();
    Percentiles::of(&mut round_trips)
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_hand_off_is_answered_and_timed() {
        let measured = super::measure(5, 50).expect("samples");
        assert!(measured.p50_us > 0.0 && measured.p99_us >= measured.p50_us);
    }
}
