//! The machine a run happened on, and the process limits it needs.

use rustix::process::{getrlimit, setrlimit, Resource, Rlimit};

/// What the report says about the machine.
#[derive(Debug, Clone)]
pub struct Machine {
    /// CPUs this process may use (`nproc`).
    pub cpus: usize,
    /// `model name` from `/proc/cpuinfo`.
    pub cpu_model: String,
    /// The kernel release.
    pub kernel: String,
    /// The 1-, 5- and 15-minute load averages (`/proc/loadavg`) when this was taken.
    pub load_average: String,
}

impl Machine {
    /// Describes the machine this process runs on.
    pub fn current() -> Machine {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let cpu_model = cpuinfo
            .lines()
            .find_map(|line| line.strip_prefix("model name"))
            .and_then(|rest| rest.split_once(':'))
            .map(|(_, model)| model.trim().to_owned())
            .unwrap_or_else(|| "unknown".to_owned());
        let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .map(|release| release.trim().to_owned())
            .unwrap_or_else(|_| "unknown".to_owned());
        let load_average = std::fs::read_to_string("/proc/loadavg")
            .map(|text| {
                text.split_whitespace()
                    .take(3)
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .unwrap_or_else(|_| "unknown".to_owned());
        Machine {
            cpus: std::thread::available_parallelism().map_or(1, usize::from),
            cpu_model,
            kernel,
            load_average,
        }
    }
}

/// Raises the soft limit on open files to at least `needed` (up to the hard limit), so this
/// process and the servers it spawns can hold the idle connections. Returns the soft limit
/// in force afterwards.
pub fn raise_open_file_limit(needed: u64) -> std::io::Result<u64> {
    let limit = getrlimit(Resource::Nofile);
    let current = limit.current.unwrap_or(u64::MAX);
    if current >= needed {
        return Ok(current);
    }
    let raised = limit.maximum.map_or(needed, |maximum| needed.min(maximum));
    setrlimit(
        Resource::Nofile,
        Rlimit {
            current: Some(raised),
            maximum: limit.maximum,
        },
    )?;
    Ok(raised)
}
