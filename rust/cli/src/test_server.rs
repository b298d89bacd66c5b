//! `ide-mcp testserver`: the four servers with the `diagnostics` domain, for protocol tests,
//! benchmarks and trying a client out. It prints `IDE MCP servers listening under <dir>` on
//! standard output when ready and stops cleanly on SIGTERM, Ctrl-C or the end of standard
//! input. It registers in the per-user registry of live server sets like any set, under the
//! `--project` roots it is given.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use ide_mcp_protocol::contract::READY_LINE_PREFIX;
use ide_mcp_server::diagnostics::diagnostics_domain;
use ide_mcp_server::TokenRingConfig;
use ide_mcp_server::{AllowAll, IdeMcpServers, ServerConfig, ServerName};
use tokio::io::AsyncReadExt;

/// Options of `ide-mcp testserver`.
#[derive(Debug, Args)]
pub struct TestServerArgs {
    /// Base directory for `claude-ide-mcp/<id>/` (repeat for fallbacks; default: the temp dir).
    #[arg(long = "base")]
    bases: Vec<PathBuf>,
    /// Rotate the token this often, in milliseconds (default: 30 minutes).
    #[arg(long)]
    rotation_ms: Option<u64>,
    /// Accept the previous token this long after a rotation, in milliseconds (default: 60 s).
    #[arg(long)]
    overlap_ms: Option<u64>,
    /// Keep serving after standard input closes (stop only on a signal).
    #[arg(long)]
    ignore_stdin: bool,
    /// A project root to register the set under in the per-user registry of live server sets
    /// (repeat for several), so `ide-mcp bridge --project` finds it.
    #[arg(long = "project", value_name = "DIR")]
    projects: Vec<PathBuf>,
    /// Do not register the set in the per-user registry of live server sets.
    #[arg(long)]
    no_register: bool,
}

/// The host name the test server's registry record gives.
const HOST_NAME: &str = "ide-mcp testserver";

/// Runs the test server until it is told to stop.
pub fn run(args: TestServerArgs) -> ExitCode {
    let bases = if args.bases.is_empty() {
        ide_mcp_server::runtime_dir::default_bases()
    } else {
        args.bases
    };
    let defaults = TokenRingConfig::default();
    let config = ServerConfig {
        tokens: TokenRingConfig {
            rotation: args
                .rotation_ms
                .map_or(defaults.rotation, Duration::from_millis),
            overlap: args
                .overlap_ms
                .map_or(defaults.overlap, Duration::from_millis),
        },
        project_roots: args.projects,
        register_live_set: !args.no_register,
        host_name: HOST_NAME.to_owned(),
        ..ServerConfig::default()
    };
    // Everything the wait needs (a runtime, the signal handlers) is set up before the servers
    // announce themselves: once clients can connect they may use up every descriptor, and a
    // signal handler that fails to register must not be mistaken for a signal.
    let stop_signal = match StopSignal::new(args.ignore_stdin) {
        Ok(stop_signal) => stop_signal,
        Err(error) => {
            eprintln!("ide-mcp testserver: cannot watch for signals: {error}");
            return ExitCode::from(2);
        }
    };
    let mut builder = IdeMcpServers::builder(bases)
        .config(config)
        .guard(Arc::new(AllowAll));
    for server in ServerName::ALL {
        builder = builder.domain(diagnostics_domain(server));
    }
    let servers = match builder.start() {
        Ok(servers) => servers,
        Err(error) => {
            eprintln!("ide-mcp testserver: could not start: {error}");
            return ExitCode::from(2);
        }
    };
    if let Some(problem) = servers.registry_problem() {
        eprintln!("ide-mcp testserver: serving without a registry record: {problem}");
    }
    if let Some(directory) = servers.directory() {
        println!("{READY_LINE_PREFIX}{}", directory.display());
    }
    stop_signal.wait();
    match servers.stop() {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("ide-mcp testserver: stopping failed: {error}");
            ExitCode::FAILURE
        }
    }
}

/// SIGTERM, SIGINT or (unless ignored) the end of standard input, watched on a small runtime
/// of its own, separate from the servers', so stopping the servers happens outside it. On
/// Windows: the console closing, or Ctrl-C.
struct StopSignal {
    runtime: tokio::runtime::Runtime,
    terminate: Terminate,
    interrupt: Interrupt,
    ignore_stdin: bool,
}

#[cfg(unix)]
type Terminate = tokio::signal::unix::Signal;
#[cfg(unix)]
type Interrupt = tokio::signal::unix::Signal;
#[cfg(windows)]
type Terminate = tokio::signal::windows::CtrlClose;
#[cfg(windows)]
type Interrupt = tokio::signal::windows::CtrlC;

#[cfg(unix)]
fn stop_signals() -> std::io::Result<(Terminate, Interrupt)> {
    use tokio::signal::unix::{signal, SignalKind};
    Ok((
        signal(SignalKind::terminate())?,
        signal(SignalKind::interrupt())?,
    ))
}

#[cfg(windows)]
fn stop_signals() -> std::io::Result<(Terminate, Interrupt)> {
    use tokio::signal::windows::{ctrl_c, ctrl_close};
    Ok((ctrl_close()?, ctrl_c()?))
}

impl StopSignal {
    fn new(ignore_stdin: bool) -> std::io::Result<StopSignal> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let (terminate, interrupt) = {
            let _entered = runtime.enter();
            stop_signals()?
        };
        Ok(StopSignal {
            runtime,
            terminate,
            interrupt,
            ignore_stdin,
        })
    }

    /// Blocks until one of the signals.
    fn wait(mut self) {
        let ignore_stdin = self.ignore_stdin;
        self.runtime.block_on(async {
            let stdin_closed = async {
                if ignore_stdin {
                    return std::future::pending::<()>().await;
                }
                let mut stdin = tokio::io::stdin();
                let mut buffer = [0u8; 1024];
                loop {
                    match stdin.read(&mut buffer).await {
                        Ok(0) | Err(_) => return,
                        Ok(_) => continue,
                    }
                }
            };
            tokio::select! {
                _ = self.terminate.recv() => {}
                _ = self.interrupt.recv() => {}
                _ = stdin_closed => {}
            }
        });
        // The stdin reader may still be blocked in a read on a helper thread; do not wait for it.
        self.runtime.shutdown_background();
    }
}
