//! One whole benchmark run: start each server in its own process, measure, collect the report.

use std::path::{Path, PathBuf};
use std::time::Duration;

use ide_mcp_server::ServerName;

use crate::connection::BenchError;
use crate::endpoint::Endpoint;
use crate::load::{
    measure_latency, measure_latency_interleaved, measure_throughput, ThroughputPlan,
};
use crate::machine::Machine;
use crate::memory::measure_idle_connections;
use crate::report::{
    BenchReport, JavaTarget, LatencyRow, MemoryRow, Settings, TargetKind, ThroughputRow,
};
use crate::server_process::ServerProcess;
use crate::targets::{jvm, ours, raw, rmcp};
use crate::wire::Wire;

/// The rmcp release the comparison uses (the version in this crate's manifest).
pub const RMCP_VERSION: &str = "3.11.0";

/// Connections beyond the idle ones that the memory server must accept (the warm-up).
const MEMORY_WARMUP_MARGIN: usize = 64;

/// How big a run is.
#[derive(Debug, Clone)]
pub struct RunPlan {
    /// Sequential calls measured per latency row.
    pub latency_calls: usize,
    /// Sequential calls before measuring.
    pub latency_warmup_calls: usize,
    /// Rounds the latency calls are split into, taking turns between the targets.
    pub latency_rounds: usize,
    /// Calls outstanding per connection in throughput rows.
    pub in_flight: usize,
    /// The connection counts of the throughput rows.
    pub connection_counts: Vec<usize>,
    /// Warm-up before each throughput window.
    pub throughput_warmup: Duration,
    /// Each throughput window.
    pub throughput_window: Duration,
    /// Idle connections held for the memory rows.
    pub idle_connections: usize,
    /// How to start the Java-handler target, or why it is not measured.
    pub java: Result<JavaLaunch, String>,
}

/// How to start the Java-handler target.
#[derive(Debug, Clone)]
pub struct JavaLaunch {
    /// The `java` executable.
    pub java: PathBuf,
    /// The jar holding `dev.lain.claudejb.mcp.bench.EchoServer`; the jar with the API and the
    /// native library is on its manifest's class path.
    pub jar: PathBuf,
    /// Sequential calls before its latency measurement, so the JIT compiled the hot path.
    pub warmup_calls: usize,
}

/// Sequential calls the Java target gets before its measurement by default.
pub const JVM_WARMUP_CALLS: usize = 20_000;

impl Default for RunPlan {
    fn default() -> Self {
        RunPlan {
            latency_calls: 20_000,
            latency_warmup_calls: 2_000,
            latency_rounds: 20,
            in_flight: ide_mcp_server::QUEUE_DEPTH,
            connection_counts: vec![1, 4, 16],
            throughput_warmup: Duration::from_millis(500),
            throughput_window: Duration::from_secs(3),
            idle_connections: 1000,
            java: Err("not requested".to_owned()),
        }
    }
}

fn io_error(what: &str) -> impl FnOnce(std::io::Error) -> BenchError + '_ {
    move |error| BenchError(format!("{what}: {error}"))
}

/// Runs every measurement with servers spawned from `executable` (this binary), reporting
/// progress on stderr.
pub fn run(executable: &Path, plan: &RunPlan) -> Result<BenchReport, BenchError> {
    let base = tempfile::tempdir().map_err(io_error("cannot create a temporary directory"))?;
    let mut report = BenchReport {
        machine: Machine::current(),
        settings: Settings {
            latency_calls: plan.latency_calls,
            latency_warmup_calls: plan.latency_warmup_calls,
            latency_rounds: plan.latency_rounds,
            in_flight: plan.in_flight,
            throughput_warmup: plan.throughput_warmup,
            throughput_window: plan.throughput_window,
            rmcp_version: RMCP_VERSION.to_owned(),
        },
        latency: Vec::new(),
        throughput: Vec::new(),
        memory: Vec::new(),
        java: JavaTarget::Skipped("not requested".to_owned()),
    };

    {
        let ours_process = spawn(executable, &["serve", "--base", &path_arg(base.path())])?;
        let directory = ours_process.announced.clone();
        let ours_frames = ours::endpoint(&directory, ServerName::Code, Wire::Frames)
            .map_err(|error| BenchError(error.to_string()))?;
        let ours_lines = ours::endpoint(&directory, ServerName::Code, Wire::Lines)
            .map_err(|error| BenchError(error.to_string()))?;
        let token = ours_frames.token.clone();
        let raw_socket = base.path().join("raw.sock");
        let _raw_process = spawn(
            executable,
            &["serve-raw", "--socket", &path_arg(&raw_socket)],
        )?;
        let rmcp_socket = base.path().join("rmcp.sock");
        let _rmcp_process = spawn(
            executable,
            &["serve-rmcp", "--socket", &path_arg(&rmcp_socket)],
        )?;
        let rmcp_endpoint = rmcp::endpoint(&rmcp_socket, token.clone());

        // Kept alive until the throughput rows are done.
        let (_java_process, java_endpoint) = match &plan.java {
            Ok(launch) => match start_java(launch, base.path()) {
                Ok((process, endpoint, java_version)) => {
                    report.java = JavaTarget::Measured {
                        jar: display_path(&launch.jar),
                        java_version,
                        warmup_calls: launch.warmup_calls,
                    };
                    eprintln!("Java target: {} warm-up calls", launch.warmup_calls);
                    measure_latency(&endpoint, 0, launch.warmup_calls.max(1))?;
                    (Some(process), Some(endpoint))
                }
                Err(reason) => {
                    eprintln!("Java target not measured: {reason}");
                    report.java = JavaTarget::Skipped(reason);
                    (None, None)
                }
            },
            Err(reason) => {
                eprintln!("Java target not measured: {reason}");
                report.java = JavaTarget::Skipped(reason.clone());
                (None, None)
            }
        };

        let mut latency_targets: Vec<(TargetKind, Endpoint)> = vec![
            (TargetKind::Ours, ours_frames.clone()),
            (
                TargetKind::RawEcho,
                raw::endpoint(&raw_socket, Wire::Frames, token.clone()),
            ),
            (TargetKind::Ours, ours_lines.clone()),
            (
                TargetKind::RawEcho,
                raw::endpoint(&raw_socket, Wire::Lines, token.clone()),
            ),
            (TargetKind::Rmcp, rmcp_endpoint.clone()),
        ];
        if let Some(endpoint) = &java_endpoint {
            latency_targets.insert(1, (TargetKind::OursJava, endpoint.clone()));
        }
        eprintln!("latency: {} targets, interleaved", latency_targets.len());
        let endpoints: Vec<Endpoint> = latency_targets
            .iter()
            .map(|(_, endpoint)| endpoint.clone())
            .collect();
        let results = measure_latency_interleaved(
            &endpoints,
            plan.latency_warmup_calls,
            plan.latency_calls,
            plan.latency_rounds,
        )?;
        for ((target, endpoint), result) in latency_targets.into_iter().zip(results) {
            report.latency.push(LatencyRow {
                target,
                wire: endpoint.wire.label(),
                result,
            });
        }

        for &connections in &plan.connection_counts {
            let mut rows: Vec<(TargetKind, Wire, Vec<Endpoint>)> = vec![
                // The ceiling of this load generator on this machine: a server that does
                // nothing but send the bytes back.
                (
                    TargetKind::RawEcho,
                    Wire::Frames,
                    vec![raw::endpoint(&raw_socket, Wire::Frames, token.clone()); connections],
                ),
                (
                    TargetKind::Ours,
                    Wire::Frames,
                    ours::spread_endpoints(&directory, Wire::Frames, connections)
                        .map_err(|error| BenchError(error.to_string()))?,
                ),
                (
                    TargetKind::Ours,
                    Wire::Lines,
                    ours::spread_endpoints(&directory, Wire::Lines, connections)
                        .map_err(|error| BenchError(error.to_string()))?,
                ),
                (
                    TargetKind::Rmcp,
                    Wire::Lines,
                    vec![rmcp_endpoint.clone(); connections],
                ),
            ];
            // The Java target serves one socket; its row is the single-connection one.
            if let (Some(endpoint), 1) = (&java_endpoint, connections) {
                rows.insert(
                    2,
                    (TargetKind::OursJava, Wire::Frames, vec![endpoint.clone()]),
                );
            }
            for (target, wire, endpoints) in rows {
                eprintln!(
                    "throughput: {target:?} over {}, {connections} connection(s)",
                    wire.label()
                );
                let result = measure_throughput(&ThroughputPlan {
                    connections: endpoints,
                    in_flight: plan.in_flight,
                    warmup: plan.throughput_warmup,
                    measure: plan.throughput_window,
                })?;
                report.throughput.push(ThroughputRow {
                    target,
                    wire: wire.label(),
                    result,
                });
            }
        }
    }

    // Fresh processes that count their allocations, so earlier runs leave nothing behind. The
    // per-server connection cap (64 by default) is a policy knob, not a memory one: it is
    // raised so one server can hold all the idle connections.
    eprintln!(
        "memory: ide-mcp, {} idle connections",
        plan.idle_connections
    );
    let connection_cap = (plan.idle_connections + MEMORY_WARMUP_MARGIN).to_string();
    let memory_base = base.path().join("memory");
    std::fs::create_dir(&memory_base).map_err(io_error("cannot create a directory"))?;
    let mut ours_process = spawn(
        executable,
        &[
            "serve",
            "--base",
            &path_arg(&memory_base),
            "--count-allocations",
            "--max-connections-per-server",
            &connection_cap,
        ],
    )?;
    let endpoint = ours::endpoint(&ours_process.announced, ServerName::Code, Wire::Frames)
        .map_err(|error| BenchError(error.to_string()))?;
    let token = endpoint.token.clone();
    let result = measure_idle_connections(&mut ours_process, &endpoint, plan.idle_connections)?;
    report.memory.push(MemoryRow {
        target: TargetKind::Ours,
        wire: Wire::Frames.label(),
        result,
    });
    drop(ours_process);

    eprintln!("memory: rmcp, {} idle connections", plan.idle_connections);
    let rmcp_socket = base.path().join("rmcp-memory.sock");
    let mut rmcp_process = spawn(
        executable,
        &[
            "serve-rmcp",
            "--socket",
            &path_arg(&rmcp_socket),
            "--count-allocations",
        ],
    )?;
    let result = measure_idle_connections(
        &mut rmcp_process,
        &rmcp::endpoint(&rmcp_socket, token),
        plan.idle_connections,
    )?;
    report.memory.push(MemoryRow {
        target: TargetKind::Rmcp,
        wire: Wire::Lines.label(),
        result,
    });
    Ok(report)
}

/// Starts the Java echo server; the error is the reason the Java rows are missing.
fn start_java(
    launch: &JavaLaunch,
    base: &Path,
) -> Result<(ServerProcess, Endpoint, String), String> {
    if !launch.jar.is_file() {
        return Err(format!("no jar at `{}`", launch.jar.display()));
    }
    if !jvm::jar_has_main_class(&launch.jar) {
        return Err(format!(
            "the jar `{}` has no `{}` (rebuild it with `{}`)",
            launch.jar.display(),
            jvm::MAIN_CLASS,
            jvm::BUILD_COMMAND
        ));
    }
    let java_version = jvm::java_version(&launch.java)?;
    let java_base = base.join("jvm");
    std::fs::create_dir_all(&java_base)
        .map_err(|error| format!("cannot create {}: {error}", java_base.display()))?;
    let arguments = jvm::arguments(&launch.jar, &java_base);
    let arguments: Vec<&str> = arguments.iter().map(String::as_str).collect();
    let process = ServerProcess::spawn(&launch.java, &arguments).map_err(|error| {
        format!(
            "`{} {}` did not start: {error}",
            launch.java.display(),
            arguments.join(" ")
        )
    })?;
    let endpoint = ours::endpoint(&process.announced, ServerName::Code, Wire::Frames)
        .map_err(|error| format!("the Java servers' token: {error}"))?;
    Ok((process, endpoint, java_version))
}

/// `path` relative to the repository root when it is inside it.
fn display_path(path: &Path) -> String {
    let absolute = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    let root = jvm::repository_root();
    let root = root.canonicalize().unwrap_or(root);
    absolute
        .strip_prefix(&root)
        .unwrap_or(&absolute)
        .display()
        .to_string()
}

fn spawn(executable: &Path, args: &[&str]) -> Result<ServerProcess, BenchError> {
    ServerProcess::spawn(executable, args)
        .map_err(|error| BenchError(format!("cannot start `{}`: {error}", args.join(" "))))
}

fn path_arg(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}
