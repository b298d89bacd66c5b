//! The floor under one JVM entry on this machine, measured beside the Java target: a job
//! handed to a thread asleep on a condition variable (as a callback thread waits for its next
//! job) and the answer watched for by the thread that handed it over (as a Tokio worker
//! watches for the answer of a lone Java call). No JNI and no work: only the wake-up of a
//! sleeping thread and the answer's way back, which a Java call cannot do without under the
//! thread model (Tokio workers never enter the JVM).
//!
//! Measured twice: with both threads where the scheduler puts them, the floor of the
//! spinning and blocking rows; and with both held on one CPU, the floor of the "blocking, one
//! CPU" rows, where the hand-off and its way back are two context switches on that CPU.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use crate::load::Percentiles;
use crate::one_cpu::OneCpu;

/// How long the handing thread sleeps between two hand-offs, so that the other one is asleep
/// again when the next job comes, as a callback thread is between a client's calls.
const GAP: Duration = Duration::from_micros(crate::report::HANDOFF_GAP_US);

/// Looks at the answer between two yields of the CPU, as the worker's watch for a lone Java
/// call's answer makes them (`LOOKS_PER_YIELD` of the JNI crate): on one CPU the sleeper
/// runs only when the watcher yields or is preempted.
const LOOKS_PER_YIELD: u32 = 8;

/// Where the two threads run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    /// Wherever the scheduler puts them, as it puts a callback thread and a Tokio worker.
    Scheduled,
    /// Both held on the lowest CPU the calling thread may use, as the client and the server
    /// are in the "blocking, one CPU" rows.
    OneCpu,
}

struct Slot {
    /// The next job's number; 0 tells the sleeper to end.
    job: Mutex<Option<u64>>,
    ready: Condvar,
    /// The number of the last job done.
    done: AtomicU64,
    /// The CPUs either thread was seen on while measuring, one bit each (CPUs 0 to 63).
    cpus: AtomicU64,
}

impl Slot {
    fn note_cpu(&self) {
        let cpu = rustix::thread::sched_getcpu();
        if cpu < 64 {
            self.cpus.fetch_or(1 << cpu, Ordering::Relaxed);
        }
    }
}

/// What one measurement found.
struct Measured {
    round_trips: Percentiles,
    /// The CPUs the two threads were seen on, one bit each.
    cpus: u64,
}

/// Hands `samples` jobs over after `warmup` unmeasured ones, one at a time, with both threads
/// placed as `placement` says; the round trip of each, from queueing the job to seeing its
/// answer. `None` when no sample was taken, or when the threads could not be held on one CPU
/// (a figure from two CPUs is not that floor).
pub fn measure(warmup: usize, samples: usize, placement: Placement) -> Option<Percentiles> {
    let measured = hand_off(warmup, samples, placement)?;
    if placement == Placement::OneCpu && measured.cpus.count_ones() != 1 {
        return None;
    }
    Some(measured.round_trips)
}

fn hand_off(warmup: usize, samples: usize, placement: Placement) -> Option<Measured> {
    // Held until the sleeper has ended (it is dropped last); the sleeper, started while the
    // calling thread is held, starts on the same CPU.
    let _held = match placement {
        Placement::Scheduled => None,
        Placement::OneCpu => Some(OneCpu::pin_calling_thread().ok()?),
    };
    let slot = Arc::new(Slot {
        job: Mutex::new(None),
        ready: Condvar::new(),
        done: AtomicU64::new(0),
        cpus: AtomicU64::new(0),
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
                // After the answer, so that the look at the CPU is not in the round trip.
                slot.note_cpu();
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
            if looks.is_multiple_of(LOOKS_PER_YIELD) {
                std::thread::yield_now();
            }
            std::hint::spin_loop();
        }
        if number > warmup as u64 {
            round_trips.push(u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX));
        }
        slot.note_cpu();
    }
    *slot.job.lock().unwrap_or_else(|poison| poison.into_inner()) = Some(0);
    slot.ready.notify_one();
    let _ = sleeper.join();
    Some(Measured {
        round_trips: Percentiles::of(&mut round_trips)?,
        cpus: slot.cpus.load(Ordering::Relaxed),
    })
}

#[cfg(test)]
mod tests {
    use super::{hand_off, Placement};
    use crate::one_cpu::tests::ONE_AT_A_TIME;

    #[test]
    fn every_hand_off_is_answered_and_timed() {
        let _alone = ONE_AT_A_TIME
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        for placement in [Placement::Scheduled, Placement::OneCpu] {
            let measured = hand_off(5, 50, placement).expect("samples");
            let percentiles = measured.round_trips;
            assert!(
                percentiles.p50_us > 0.0 && percentiles.p99_us >= percentiles.p50_us,
                "{placement:?}"
            );
        }
    }

    /// The one-CPU floor is one only if both threads ran on the same CPU throughout; the
    /// calling thread gets its CPUs back afterwards.
    #[test]
    fn on_one_cpu_both_threads_run_on_one_cpu() {
        let _alone = ONE_AT_A_TIME
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let before = rustix::thread::sched_getaffinity(None).expect("affinity");
        let measured = hand_off(5, 200, Placement::OneCpu).expect("samples");
        assert_eq!(
            measured.cpus.count_ones(),
            1,
            "CPUs seen: {:#b}",
            measured.cpus
        );
        assert_eq!(
            rustix::thread::sched_getaffinity(None).expect("affinity"),
            before
        );
    }
}
