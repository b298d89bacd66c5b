//! Instructions per echo call under callgrind: a figure that does not move with the
//! machine's load, so a regression of the call path shows even on a noisy machine.
//!
//! The server runs in its own process under `valgrind --tool=callgrind` and gets N sequential
//! echo calls on one connection, each after a pause in which its threads park ([`PAUSE`]),
//! once with a small N and once with a large one; the
//! difference of the two totals divided by the difference of the calls cancels start-up,
//! the handshake and shutdown, leaving what one call costs the server (every thread: the
//! runtime's workers included). Only user-space instructions are counted: system calls are
//! one instruction each.

use std::path::Path;
use std::process::Command;

use crate::connection::{BenchConnection, BenchError};
use crate::endpoint::Endpoint;
use crate::server_process::ServerProcess;

/// The calls of the small and the large run.
pub const CALLS: (usize, usize) = (100, 1100);

/// The pause after each reply before the next call: long enough for every thread of the
/// server to have parked, so each call takes the same path, that of a call to an idle server
/// (as an agent's calls are). Calls made back to back counted the parking only when the
/// next call happened to come after it, and the count moved by up to 2,000 instructions
/// from run to run.
pub const PAUSE: std::time::Duration = std::time::Duration::from_millis(2);

/// Instructions per call for one server and wire.
#[derive(Debug, Clone)]
pub struct InstructionsResult {
    /// Instructions of the small run.
    pub small_total: u64,
    /// Instructions of the large run.
    pub large_total: u64,
    /// `(large − small) / (calls difference)`.
    pub per_call: f64,
}

/// Whether `valgrind` can be run, with its version.
pub fn valgrind_version() -> Result<String, String> {
    let output = Command::new("valgrind")
        .arg("--version")
        .output()
        .map_err(|error| format!("valgrind is not installed ({error})"))?;
    if !output.status.success() {
        return Err("`valgrind --version` failed".to_owned());
    }
    Ok(String::from_utf8_lossy(&output.stdout).trim().to_owned())
}

/// Counts the server's instructions per echo call. `serve` starts the server under
/// callgrind (given the output file) and `endpoint` finds it from what it announced.
pub fn measure_instructions(
    work: &Path,
    serve: &dyn Fn(&Path) -> Result<ServerProcess, BenchError>,
    endpoint: &dyn Fn(&ServerProcess) -> Result<Endpoint, BenchError>,
) -> Result<InstructionsResult, BenchError> {
    let mut totals = [0u64; 2];
    for (total, calls) in totals.iter_mut().zip([CALLS.0, CALLS.1]) {
        let out = work.join(format!("callgrind.{calls}.out"));
        let server = serve(&out)?;
        {
            let mut connection = BenchConnection::open(&endpoint(&server)?)?;
            for _ in 0..calls {
                let id = connection.send_call()?;
                let reply = connection.read_reply()?;
                if reply.id != id || reply.busy {
                    return Err(BenchError(format!(
                        "call {id} under callgrind was answered wrongly"
                    )));
                }
                std::thread::sleep(PAUSE);
            }
        }
        // Closing stdin stops the server; callgrind writes its file as the process exits.
        drop(server);
        *total = read_total(&out)?;
    }
    let [small_total, large_total] = totals;
    Ok(InstructionsResult {
        small_total,
        large_total,
        per_call: (large_total as f64 - small_total as f64) / (CALLS.1 - CALLS.0) as f64,
    })
}

/// The arguments that run `program args…` under callgrind, writing to `out`.
pub fn callgrind_arguments(out: &Path, program: &Path, args: &[&str]) -> Vec<String> {
    let mut arguments = vec![
        "--tool=callgrind".to_owned(),
        format!("--callgrind-out-file={}", out.display()),
        program.to_string_lossy().into_owned(),
    ];
    arguments.extend(args.iter().map(|arg| (*arg).to_owned()));
    arguments
}

fn read_total(out: &Path) -> Result<u64, BenchError> {
    let text = std::fs::read_to_string(out)
        .map_err(|error| BenchError(format!("no callgrind output {}: {error}", out.display())))?;
    text.lines()
        .find_map(|line| {
            line.strip_prefix("summary:")
                .or_else(|| line.strip_prefix("totals:"))
        })
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|number| number.parse().ok())
        .ok_or_else(|| BenchError(format!("no instruction total in {}", out.display())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_total_is_read_from_the_summary_line() {
        let directory = tempfile::tempdir().expect("a temporary directory");
        let out = directory.path().join("callgrind.out");
        std::fs::write(
            &out,
            "version: 1\nevents: Ir\nsummary: 123456\ntotals: 123456\n",
        )
        .expect("written");
        assert_eq!(read_total(&out).expect("a total"), 123_456);
        std::fs::write(&out, "events: Ir\n").expect("written");
        assert!(read_total(&out).is_err());
    }
}
