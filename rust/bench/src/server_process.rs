//! A server under test in its own process: this binary's `serve*` subcommands, driven over
//! stdin and stdout.
//!
//! The child prints one line containing ` listening ` and ending with its socket or runtime
//! directory, then answers each `memory` line on stdin with one JSON [`MemorySnapshot`] line.
//! End of stdin stops it, so a child never outlives the benchmark.

use std::io::{self, BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use crate::memory::MemorySnapshot;

/// The stdin command that asks for a memory snapshot.
pub const MEMORY_COMMAND: &str = "memory";

/// A running server child process.
#[derive(Debug)]
pub struct ServerProcess {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    /// The path the child announced: its socket, or our servers' runtime directory.
    pub announced: PathBuf,
}

impl ServerProcess {
    /// Runs `executable args…` and waits for its `listening` line.
    pub fn spawn(executable: &Path, args: &[&str]) -> io::Result<ServerProcess> {
        let mut child = Command::new(executable)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()?;
        let stdin = child.stdin.take();
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| io::Error::other("the child has no stdout"))?;
        let mut process = ServerProcess {
            child,
            stdin,
            stdout: BufReader::new(stdout),
            announced: PathBuf::new(),
        };
        loop {
            let line = process.read_line()?;
            if line.contains(" listening ") {
                let path = line.rsplit(' ').next().unwrap_or_default();
                process.announced = PathBuf::from(path);
                return Ok(process);
            }
        }
    }

    /// The child's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Asks the child for its memory figures.
    pub fn memory(&mut self) -> io::Result<MemorySnapshot> {
        let stdin = self
            .stdin
            .as_mut()
            .ok_or_else(|| io::Error::other("the child's stdin is closed"))?;
        writeln!(stdin, "{MEMORY_COMMAND}")?;
        stdin.flush()?;
        let line = self.read_line()?;
        serde_json::from_str(&line).map_err(io::Error::other)
    }

    fn read_line(&mut self) -> io::Result<String> {
        let mut line = String::new();
        if self.stdout.read_line(&mut line)? == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the server process ended early",
            ));
        }
        Ok(line.trim_end().to_owned())
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        // Closing stdin asks the child to stop its servers and exit; give it a moment.
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The child's side: prints `announcement`, then answers commands on stdin until it closes.
pub fn serve_until_stdin_closes(announcement: &str) -> io::Result<()> {
    let mut stdout = io::stdout().lock();
    writeln!(stdout, "{announcement}")?;
    stdout.flush()?;
    for line in io::stdin().lock().lines() {
        if line?.trim() == MEMORY_COMMAND {
            let snapshot = MemorySnapshot::of_this_process()?;
            let json = serde_json::to_string(&snapshot).map_err(io::Error::other)?;
            writeln!(stdout, "{json}")?;
            stdout.flush()?;
        }
    }
    Ok(())
}
