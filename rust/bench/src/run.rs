//! One whole benchmark run: start each server in its own process, measure, collect the report.

use std::path::{Path, PathBuf};
use std::time::Duration;

use ide_mcp_server::ServerName;

use crate::connection::BenchError;
use crate::endpoint::Endpoint;
use crate::handoff::Placement;
use crate::idle::{measure_idle_cpu, ThreadFilter};
use crate::instructions::{callgrind_arguments, measure_instructions, valgrind_version};
use crate::load::{
    measure_latency, measure_latency_interleaved, measure_throughput, LatencyProbe, ReadMode,
    ThroughputPlan,
};
use crate::machine::Machine;
use crate::memory::measure_idle_connections;
use crate::report::{
    BenchReport, IdleRow, Instructions, InstructionsRow, JavaTarget, LatencyRow, MemoryRow,
    Settings, TargetKind, ThroughputRow, HANDOFF_SAMPLES,
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
    /// How long each server set with no clients is watched.
    pub idle_window: Duration,
    /// Whether to count instructions per call under callgrind.
    pub count_instructions: bool,
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
            idle_window: Duration::from_secs(60),
            count_instructions: true,
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
        idle: Vec::new(),
        instructions: Instructions::Skipped("not requested".to_owned()),
        java: JavaTarget::Skipped("not requested".to_owned()),
        handoff: None,
        handoff_one_cpu: None,
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
        let raw_process = spawn(
            executable,
            &["serve-raw", "--socket", &path_arg(&raw_socket)],
        )?;
        let raw_tokio_socket = base.path().join("raw-tokio.sock");
        let raw_tokio_process = spawn(
            executable,
            &["serve-raw-tokio", "--socket", &path_arg(&raw_tokio_socket)],
        )?;
        let rmcp_socket = base.path().join("rmcp.sock");
        let rmcp_process = spawn(
            executable,
            &["serve-rmcp", "--socket", &path_arg(&rmcp_socket)],
        )?;
        let rmcp_endpoint = rmcp::endpoint(&rmcp_socket, token.clone());

        // Kept alive until the throughput rows are done.
        let (java_process, java_endpoint) = match &plan.java {
            Ok(launch) => match start_java(launch, base.path()) {
                Ok((process, endpoint, java_version)) => {
                    report.java = JavaTarget::Measured {
                        jar: display_path(&launch.jar),
                        java_version,
                        warmup_calls: launch.warmup_calls,
                    };
                    eprintln!("Java target: {} warm-up calls", launch.warmup_calls);
                    measure_latency(&endpoint, ReadMode::Spinning, 0, launch.warmup_calls.max(1))?;
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
            (
                TargetKind::RawEchoTokio,
                raw::endpoint(&raw_tokio_socket, Wire::Lines, token.clone()),
            ),
        ];
        if let Some(endpoint) = &java_endpoint {
            latency_targets.insert(1, (TargetKind::OursJava, endpoint.clone()));
        }
        // Every target three times: read by a spinning client, by a blocking one, and by a
        // blocking one held on one CPU with the server.
        let latency_targets: Vec<(TargetKind, LatencyProbe)> = ReadMode::ALL
            .into_iter()
            .flat_map(|reads| {
                latency_targets.iter().map(move |(target, endpoint)| {
                    (
                        *target,
                        LatencyProbe {
                            endpoint: endpoint.clone(),
                            reads,
                        },
                    )
                })
            })
            .collect();
        eprintln!("latency: {} targets, interleaved", latency_targets.len());
        let probes: Vec<LatencyProbe> = latency_targets
            .iter()
            .map(|(_, probe)| probe.clone())
            .collect();
        let results = measure_latency_interleaved(
            &probes,
            plan.latency_warmup_calls,
            plan.latency_calls,
            plan.latency_rounds,
        )?;
        for ((target, probe), result) in latency_targets.into_iter().zip(results) {
            report.latency.push(LatencyRow {
                target,
                wire: probe.endpoint.wire.label(),
                reads: probe.reads,
                result,
            });
        }
        if java_endpoint.is_some() {
            eprintln!("hand-off floor: {HANDOFF_SAMPLES} hand-offs");
            report.handoff = crate::handoff::measure(
                HANDOFF_SAMPLES / 10,
                HANDOFF_SAMPLES,
                Placement::Scheduled,
            );
            report.handoff_one_cpu =
                crate::handoff::measure(HANDOFF_SAMPLES / 10, HANDOFF_SAMPLES, Placement::OneCpu);
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

        eprintln!(
            "idle: every server set with no clients, {:.0} s",
            plan.idle_window.as_secs_f64()
        );
        drop(raw_process);
        drop(raw_tokio_process);
        let mut watched = vec![
            (TargetKind::Ours, ours_process.pid(), ThreadFilter::All),
            (TargetKind::Rmcp, rmcp_process.pid(), ThreadFilter::All),
        ];
        if let Some(java) = &java_process {
            watched.insert(
                1,
                (
                    TargetKind::OursJava,
                    java.pid(),
                    ThreadFilter::NamePrefix(OUR_THREAD_PREFIX),
                ),
            );
        }
        report.idle = std::thread::scope(|scope| {
            let watchers: Vec<_> = watched
                .into_iter()
                .map(|(target, pid, filter)| {
                    let window = plan.idle_window;
                    let threads = match filter {
                        ThreadFilter::All => "all of the process's",
                        ThreadFilter::NamePrefix(_) => "the library's (`ide-mcp-…`)",
                    };
                    let watcher = scope.spawn(move || measure_idle_cpu(pid, filter, window));
                    (target, threads, watcher)
                })
                .collect();
            watchers
                .into_iter()
                .map(|(target, threads, watcher)| IdleRow {
                    target,
                    threads,
                    result: watcher
                        .join()
                        .map_err(|_| "the watcher panicked".to_owned())
                        .and_then(|result| result.map_err(|error| error.to_string())),
                })
                .collect()
        });
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
        &rmcp::endpoint(&rmcp_socket, token.clone()),
        plan.idle_connections,
    )?;
    report.memory.push(MemoryRow {
        target: TargetKind::Rmcp,
        wire: Wire::Lines.label(),
        result,
    });

    report.instructions = if plan.count_instructions {
        count_instructions(executable, base.path(), token)
    } else {
        Instructions::Skipped("left out with `--no-callgrind`".to_owned())
    };
    Ok(report)
}

/// The prefix of every thread the library starts (Tokio workers, callback threads, notifier).
const OUR_THREAD_PREFIX: &str = "ide-mcp-";

/// Instructions per echo call of our servers (both wires) and of rmcp, each under callgrind.
fn count_instructions(executable: &Path, base: &Path, token: Option<String>) -> Instructions {
    let valgrind = match valgrind_version() {
        Ok(version) => version,
        Err(reason) => return Instructions::Skipped(reason),
    };
    let mut rows = Vec::new();
    let mut runs = 0;
    let mut work_directory = || {
        runs += 1;
        let directory = base.join(format!("callgrind-{runs}"));
        std::fs::create_dir_all(&directory).map(|()| directory)
    };
    for wire in [Wire::Frames, Wire::Lines] {
        eprintln!(
            "instructions: ide-mcp over {} under callgrind",
            wire.label()
        );
        let work = match work_directory() {
            Ok(work) => work,
            Err(error) => return Instructions::Skipped(error.to_string()),
        };
        let serve = |out: &Path| {
            let base = out.with_extension("base");
            std::fs::create_dir_all(&base).map_err(io_error("cannot create a directory"))?;
            // No look at the socket: a look that waits for the client's next message is a
            // loop of reads, as many as the timing under callgrind allows, which is not the
            // call's work.
            let arguments = callgrind_arguments(
                out,
                executable,
                &[
                    "serve",
                    "--base",
                    &path_arg(&base),
                    "--socket-look-micros",
                    "0",
                ],
            );
            spawn_program("valgrind", &arguments)
        };
        let endpoint = |process: &ServerProcess| {
            ours::endpoint(&process.announced, ServerName::Code, wire)
                .map_err(|error| BenchError(error.to_string()))
        };
        match measure_instructions(&work, &serve, &endpoint) {
            Ok(result) => rows.push(InstructionsRow {
                target: TargetKind::Ours,
                wire: wire.label(),
                result,
            }),
            Err(error) => return Instructions::Skipped(error.to_string()),
        }
    }
    eprintln!("instructions: rmcp under callgrind");
    let work = match work_directory() {
        Ok(work) => work,
        Err(error) => return Instructions::Skipped(error.to_string()),
    };
    let socket_of = |out: &Path| out.with_extension("sock");
    let serve = |out: &Path| {
        let socket = socket_of(out);
        let arguments = callgrind_arguments(
            out,
            executable,
            &["serve-rmcp", "--socket", &path_arg(&socket)],
        );
        spawn_program("valgrind", &arguments)
    };
    let endpoint = |process: &ServerProcess| Ok(rmcp::endpoint(&process.announced, token.clone()));
    match measure_instructions(&work, &serve, &endpoint) {
        Ok(result) => rows.push(InstructionsRow {
            target: TargetKind::Rmcp,
            wire: Wire::Lines.label(),
            result,
        }),
        Err(error) => return Instructions::Skipped(error.to_string()),
    }
    Instructions::Measured { valgrind, rows }
}

fn spawn_program(program: &str, arguments: &[String]) -> Result<ServerProcess, BenchError> {
    let arguments: Vec<&str> = arguments.iter().map(String::as_str).collect();
    ServerProcess::spawn(Path::new(program), &arguments)
        .map_err(|error| BenchError(format!("cannot start `{program}`: {error}")))
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
