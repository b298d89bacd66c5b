//! Holds a client thread and every thread of the server it talks to on one CPU, for the
//! "blocking, one CPU" latency rows.
//!
//! Why: on a virtual machine whose idle CPUs halt, a thread woken on the other CPU costs a
//! wake-up of that CPU (tens of microseconds here), while one woken on the waker's CPU costs a
//! context switch. Which of the two a ping-pong gets depends on where the scheduler happens to
//! put each thread, so a blocking round trip read from two CPUs measures that placement as much
//! as the server: the same raw echo socket reads 4 µs or 70 µs from run to run. With the client
//! and the server on one CPU every wake-up is a context switch on that CPU, and what a server
//! adds over the raw ping-pong is its own work.

use std::fs;

use rustix::process::Pid;
use rustix::thread::{sched_getaffinity, sched_setaffinity, CpuSet};

use crate::connection::BenchError;

/// The affinities changed by [`OneCpu::pin`], restored when it is dropped.
#[derive(Debug)]
pub struct OneCpu {
    /// Each thread moved (`None`: the calling thread), with the CPUs it was allowed before.
    previous: Vec<(Option<Pid>, CpuSet)>,
}

impl OneCpu {
    /// Moves the calling thread and every thread of process `server` to the lowest CPU the
    /// calling thread may use. A thread the server starts later is not moved.
    pub fn pin(server: Pid) -> Result<OneCpu, BenchError> {
        let mut pinned = OneCpu::pin_calling_thread()?;
        let only = sched_getaffinity(None).map_err(|error| cpu_error("read", error))?;
        for thread in threads_of(server)? {
            match sched_getaffinity(Some(thread)) {
                Ok(previous) => {
                    if sched_setaffinity(Some(thread), &only).is_ok() {
                        pinned.previous.push((Some(thread), previous));
                    }
                }
                // The thread ended since the listing.
                Err(rustix::io::Errno::SRCH) => {}
                Err(error) => return Err(cpu_error("read", error)),
            }
        }
        Ok(pinned)
    }

    /// Moves the calling thread alone to the lowest CPU it may use. A thread it starts while
    /// held there starts on that CPU too (a new thread inherits its creator's affinity).
    pub fn pin_calling_thread() -> Result<OneCpu, BenchError> {
        let own = sched_getaffinity(None).map_err(|error| cpu_error("read", error))?;
        let cpu = (0..CpuSet::MAX_CPU)
            .find(|&cpu| own.is_set(cpu))
            .ok_or_else(|| BenchError("this thread may run on no CPU".to_owned()))?;
        let mut only = CpuSet::new();
        only.set(cpu);
        let mut pinned = OneCpu {
            previous: Vec::new(),
        };
        pinned.move_thread(None, &only)?;
        Ok(pinned)
    }

    fn move_thread(&mut self, thread: Option<Pid>, only: &CpuSet) -> Result<(), BenchError> {
        let previous = sched_getaffinity(thread).map_err(|error| cpu_error("read", error))?;
        sched_setaffinity(thread, only).map_err(|error| cpu_error("set", error))?;
        self.previous.push((thread, previous));
        Ok(())
    }
}

impl Drop for OneCpu {
    fn drop(&mut self) {
        // Newest first: when the server is this very process (the smoke tests), the calling
        // thread is in the list twice, and its first entry holds what it had before.
        for (thread, previous) in self.previous.drain(..).rev() {
            // A server thread that ended meanwhile has nothing to restore.
            let _ = sched_setaffinity(thread, &previous);
        }
    }
}

/// The thread ids of process `process` (`/proc/<pid>/task`).
fn threads_of(process: Pid) -> Result<Vec<Pid>, BenchError> {
    let directory = format!("/proc/{}/task", process.as_raw_nonzero());
    let entries = fs::read_dir(&directory)
        .map_err(|error| BenchError(format!("cannot list {directory}: {error}")))?;
    Ok(entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(Pid::from_raw)
        .collect())
}

fn cpu_error(what: &str, error: rustix::io::Errno) -> BenchError {
    BenchError(format!("cannot {what} a thread's CPU affinity: {error}"))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
pub(crate) mod tests {
    use std::process::{Command, Stdio};

    use rustix::process::Pid;
    use rustix::thread::{sched_getaffinity, CpuSet};

    use super::OneCpu;

    /// Pinning the test's own process moves every test thread: one such test at a time, so
    /// none restores another's thread to what it read while pinned (nor a thread that another
    /// test holds on one CPU to what it had before).
    pub(crate) static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

    fn cpus(set: &CpuSet) -> Vec<usize> {
        (0..CpuSet::MAX_CPU)
            .filter(|&cpu| set.is_set(cpu))
            .collect()
    }

    #[test]
    fn the_client_and_every_server_thread_share_one_cpu_until_dropped() {
        let _alone = ONE_AT_A_TIME
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let mut server = Command::new("sleep")
            .arg("30")
            .stdin(Stdio::null())
            .spawn()
            .unwrap();
        let pid = Pid::from_raw(i32::try_from(server.id()).unwrap()).unwrap();
        let own_before = cpus(&sched_getaffinity(None).unwrap());
        let server_before = cpus(&sched_getaffinity(Some(pid)).unwrap());
        {
            let _pinned = OneCpu::pin(pid).unwrap();
            let own = cpus(&sched_getaffinity(None).unwrap());
            assert_eq!(
                own,
                vec![own_before[0]],
                "the lowest CPU the client may use"
            );
            assert_eq!(cpus(&sched_getaffinity(Some(pid)).unwrap()), own);
        }
        assert_eq!(cpus(&sched_getaffinity(None).unwrap()), own_before);
        assert_eq!(cpus(&sched_getaffinity(Some(pid)).unwrap()), server_before);
        server.kill().unwrap();
        server.wait().unwrap();
    }

    #[test]
    fn a_server_in_the_clients_own_process_gets_every_affinity_back() {
        let _alone = ONE_AT_A_TIME
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let own = Pid::from_raw(i32::try_from(std::process::id()).unwrap()).unwrap();
        let before = cpus(&sched_getaffinity(None).unwrap());
        {
            let _pinned = OneCpu::pin(own).unwrap();
            assert_eq!(cpus(&sched_getaffinity(None).unwrap()), vec![before[0]]);
        }
        assert_eq!(cpus(&sched_getaffinity(None).unwrap()), before);
    }
}
