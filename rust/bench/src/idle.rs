//! What a server set costs while nobody uses it: wake-ups (context switches) and CPU time of
//! its threads over a window, from `/proc/<pid>/task/*`.
//!
//! Every time a sleeping thread is woken it runs and then switches out again, so the sum of
//! its voluntary and involuntary context switches over the window counts its wake-ups. CPU
//! time is `utime + stime` of `/proc/<pid>/task/<tid>/stat`, in clock ticks.

use std::collections::HashMap;
use std::io;
use std::time::{Duration, Instant};

/// Which threads of a process are counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThreadFilter {
    /// Every thread (a process that is only our servers).
    All,
    /// Threads whose name starts with this (our threads inside a JVM: `ide-mcp-…`).
    NamePrefix(&'static str),
}

/// One thread's counters at one moment.
#[derive(Debug, Clone, Copy, Default)]
struct ThreadCounters {
    switches: u64,
    cpu_ticks: u64,
}

/// A process's idle cost over a window.
#[derive(Debug, Clone)]
pub struct IdleCpuResult {
    /// How long the process was watched.
    pub window: Duration,
    /// Threads counted (alive at the end of the window).
    pub threads: usize,
    /// Context switches of those threads during the window.
    pub switches: u64,
    /// CPU time of those threads during the window, in milliseconds.
    pub cpu_ms: f64,
}

impl IdleCpuResult {
    /// Wake-ups per second.
    pub fn wakeups_per_second(&self) -> f64 {
        self.switches as f64 / self.window.as_secs_f64()
    }
}

/// Watches the threads of `pid` chosen by `filter` for `window` while nothing else is asked
/// of the process.
pub fn measure_idle_cpu(
    pid: u32,
    filter: ThreadFilter,
    window: Duration,
) -> io::Result<IdleCpuResult> {
    let before = sample(pid, filter)?;
    let started = Instant::now();
    std::thread::sleep(window);
    let after = sample(pid, filter)?;
    let window = started.elapsed();
    let mut switches = 0;
    let mut ticks = 0;
    for (tid, now) in &after {
        // A thread born during the window counts from zero.
        let then = before.get(tid).copied().unwrap_or_default();
        switches += now.switches.saturating_sub(then.switches);
        ticks += now.cpu_ticks.saturating_sub(then.cpu_ticks);
    }
    Ok(IdleCpuResult {
        window,
        threads: after.len(),
        switches,
        cpu_ms: ticks as f64 * 1000.0 / clock_ticks_per_second(),
    })
}

fn clock_ticks_per_second() -> f64 {
    // Linux has reported times in USER_HZ = 100 ticks per second on every architecture
    // since 2.6; `sysconf(_SC_CLK_TCK)` says the same.
    100.0
}

fn sample(pid: u32, filter: ThreadFilter) -> io::Result<HashMap<u32, ThreadCounters>> {
    let mut threads = HashMap::new();
    for entry in std::fs::read_dir(format!("/proc/{pid}/task"))? {
        let entry = entry?;
        let Some(tid) = entry
            .file_name()
            .to_str()
            .and_then(|name| name.parse().ok())
        else {
            continue;
        };
        // A thread may end between the listing and the reads: skip it.
        let Ok(status) = std::fs::read_to_string(entry.path().join("status")) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        if let ThreadFilter::NamePrefix(prefix) = filter {
            let name = field(&status, "Name:").unwrap_or_default();
            if !name.starts_with(prefix) {
                continue;
            }
        }
        let number = |name: &str| {
            field(&status, name)
                .and_then(|value| value.parse::<u64>().ok())
                .unwrap_or(0)
        };
        threads.insert(
            tid,
            ThreadCounters {
                switches: number("voluntary_ctxt_switches:")
                    + number("nonvoluntary_ctxt_switches:"),
                cpu_ticks: cpu_ticks(&stat),
            },
        );
    }
    Ok(threads)
}

fn field<'a>(status: &'a str, name: &str) -> Option<&'a str> {
    status
        .lines()
        .find_map(|line| line.strip_prefix(name))
        .map(str::trim)
}

/// `utime + stime` (fields 14 and 15) of a `stat` line; the name in parentheses may hold
/// spaces, so fields are counted after its closing parenthesis.
fn cpu_ticks(stat: &str) -> u64 {
    let Some((_, rest)) = stat.rsplit_once(')') else {
        return 0;
    };
    // `rest` starts with field 3 (the state).
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let at = |index: usize| {
        fields
            .get(index)
            .and_then(|value| value.parse::<u64>().ok())
            .unwrap_or(0)
    };
    at(11) + at(12)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_ticks_are_read_after_the_name() {
        let stat = "42 (ide mcp) S 1 2 3 4 5 6 7 8 9 10 17 4 0 0";
        assert_eq!(cpu_ticks(stat), 21);
    }

    #[test]
    fn this_process_is_sampled() {
        let threads = sample(std::process::id(), ThreadFilter::All).expect("own /proc");
        assert!(!threads.is_empty());
    }
}
