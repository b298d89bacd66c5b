//! What the kernel tells about a peer process: its identity (pid and start time), its parent,
//! executable and command line. Each OS answers through `platform::process` (`/proc` on
//! Linux, libproc and sysctl on macOS, Toolhelp and the process's PEB on Windows); what it
//! will not say stays empty, and admission falls back to asking.

use std::path::PathBuf;

use crate::platform::process::{command_line, executable};
pub(crate) use crate::platform::process::{parent_pid, start_time};

/// The deepest ancestry walk; real process trees are far shallower, and a bound keeps a
/// pathological process table from looping.
const MAX_ANCESTRY_DEPTH: usize = 128;

/// One process, told apart from any later process that gets the same pid: its pid and the
/// time it started (in the OS's own unit: clock ticks since boot on Linux, microseconds since
/// 1970 on macOS, 100 ns since 1601 on Windows; only ever compared with itself).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ProcessIdentity {
    /// The process id.
    pub pid: i32,
    /// When it started.
    pub start_time: u64,
}

impl ProcessIdentity {
    /// The identity of the process that has `pid` now, if there is one.
    pub fn of(pid: i32) -> Option<ProcessIdentity> {
        Some(ProcessIdentity {
            pid,
            start_time: start_time(pid)?,
        })
    }

    /// Whether this process still runs: its pid exists and was not reused since.
    pub fn is_running(&self) -> bool {
        start_time(self.pid) == Some(self.start_time)
    }
}

/// A process as the host is shown it when it connects unexpectedly.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClientProcess {
    /// The process id, from the kernel's peer credentials.
    pub pid: i32,
    /// When the process started, so a later process with the same pid is not taken for it.
    pub start_time: Option<u64>,
    /// The executable's path, when readable.
    pub executable: Option<PathBuf>,
    /// The command line, when readable.
    pub command_line: Vec<String>,
}

impl ClientProcess {
    /// Reads what the OS says about `pid`.
    pub fn inspect(pid: i32) -> ClientProcess {
        ClientProcess {
            pid,
            start_time: start_time(pid),
            executable: executable(pid),
            command_line: command_line(pid),
        }
    }

    /// The process's identity, when its start time could be read.
    pub fn identity(&self) -> Option<ProcessIdentity> {
        Some(ProcessIdentity {
            pid: self.pid,
            start_time: self.start_time?,
        })
    }

    /// Whether two connections come from the very same process (not merely the same pid).
    pub fn same_process_as(&self, other: &ClientProcess) -> bool {
        self.pid == other.pid && self.start_time == other.start_time
    }

    /// Whether two connections come from what looks like the same program: the same
    /// process, or the same executable with the same command line (a client reconnecting).
    pub fn same_client_as(&self, other: &ClientProcess) -> bool {
        self.same_process_as(other)
            || (self.executable.is_some()
                && self.executable == other.executable
                && self.command_line == other.command_line)
    }
}

/// Whether `pid` is one of `ancestors` or descends from one of them.
pub fn descends_from(pid: i32, ancestors: &dyn Fn(i32) -> bool) -> bool {
    let mut current = pid;
    for _ in 0..MAX_ANCESTRY_DEPTH {
        if current <= 0 {
            return false;
        }
        if ancestors(current) {
            return true;
        }
        match parent_pid(current) {
            Some(parent) if parent != current => current = parent,
            _ => return false,
        }
    }
    false
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn our_own_process_is_inspectable() {
        let me = ClientProcess::inspect(std::process::id() as i32);
        let executable = me.executable.expect("our executable is readable");
        assert_eq!(
            executable.file_name(),
            std::env::current_exe().unwrap().file_name()
        );
        assert!(!me.command_line.is_empty());
        assert!(me.start_time.is_some());
        assert!(ProcessIdentity::of(me.pid).unwrap().is_running());
    }

    // A child that stays a while is `sleep` on Unix; the Windows suite leaves these two out.
    #[cfg(unix)]
    #[test]
    fn a_child_descends_from_us_and_we_do_not_descend_from_it() {
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .expect("sleep runs");
        let me = std::process::id() as i32;
        let child_pid = child.id() as i32;
        assert_eq!(parent_pid(child_pid), Some(me));
        assert!(descends_from(child_pid, &|pid| pid == me));
        assert!(!descends_from(me, &|pid| pid == child_pid));
        let _ = child.kill();
        let _ = child.wait();
    }

    #[test]
    fn a_reconnecting_program_is_the_same_client() {
        let first = ClientProcess {
            pid: 10,
            start_time: Some(1),
            executable: Some("/usr/bin/agent".into()),
            command_line: vec!["agent".into(), "--mcp".into()],
        };
        let second = ClientProcess {
            pid: 11,
            ..first.clone()
        };
        let other = ClientProcess {
            pid: 12,
            command_line: vec!["agent".into()],
            ..first.clone()
        };
        assert!(first.same_client_as(&second));
        assert!(!first.same_client_as(&other));
        assert!(!first.same_process_as(&second));
    }

    #[cfg(unix)]
    #[test]
    fn a_process_is_its_pid_and_start_time_and_an_exited_one_is_not_running() {
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .expect("sleep runs");
        let identity = ProcessIdentity::of(child.id() as i32).expect("its stat is readable");
        assert!(identity.is_running());
        let reused = ProcessIdentity {
            start_time: identity.start_time + 1,
            ..identity
        };
        assert!(
            !reused.is_running(),
            "another start time is another process"
        );
        let _ = child.kill();
        let _ = child.wait();
        assert!(!identity.is_running());
    }
}
