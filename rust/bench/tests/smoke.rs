//! Runs the benchmark machinery very briefly and checks its results are well-formed: every
//! call answered and matched to its id, counts non-zero, a report that renders. No timing is
//! asserted: these machines are too noisy for that, and the numbers belong in the real run.
#![allow(clippy::unwrap_used)]

use std::time::Duration;

use ide_mcp_bench::idle::{measure_idle_cpu, ThreadFilter};
use ide_mcp_bench::load::{
    measure_latency, measure_latency_interleaved, measure_throughput, LatencyProbe, ReadMode,
    ThroughputPlan,
};
use ide_mcp_bench::machine::Machine;
use ide_mcp_bench::memory::measure_idle_connections;
use ide_mcp_bench::report::{
    BenchReport, Instructions, JavaTarget, LatencyRow, MemoryRow, Settings, TargetKind,
    ThroughputRow,
};
use ide_mcp_bench::server_process::ServerProcess;
use ide_mcp_bench::targets::{ours, raw, rmcp};
use ide_mcp_bench::wire::Wire;
use ide_mcp_server::ServerName;

const CALLS: usize = 50;

fn brief_throughput(endpoints: Vec<ide_mcp_bench::endpoint::Endpoint>) -> ThroughputPlan {
    ThroughputPlan {
        connections: endpoints,
        in_flight: ide_mcp_server::QUEUE_DEPTH,
        warmup: Duration::from_millis(50),
        measure: Duration::from_millis(200),
    }
}

#[test]
fn latency_and_throughput_runs_are_well_formed_for_every_target() {
    let base = tempfile::tempdir().unwrap();
    let servers = ours::start(base.path()).unwrap();
    let directory = servers.directory().unwrap().to_path_buf();
    let raw_socket = base.path().join("raw.sock");
    raw::start(&raw_socket).unwrap();
    let raw_tokio_socket = base.path().join("raw-tokio.sock");
    let raw_tokio_runtime = raw::start_tokio(&raw_tokio_socket).unwrap();
    let rmcp_socket = base.path().join("rmcp.sock");
    let rmcp_runtime = rmcp::start(&rmcp_socket).unwrap();

    let ours_frames = ours::endpoint(&directory, ServerName::Code, Wire::Frames).unwrap();
    let ours_lines = ours::endpoint(&directory, ServerName::Code, Wire::Lines).unwrap();
    let token = ours_frames.token.clone();
    let targets = [
        (TargetKind::Ours, ours_frames.clone()),
        (TargetKind::Ours, ours_lines),
        (
            TargetKind::RawEcho,
            raw::endpoint(&raw_socket, Wire::Frames, token.clone()),
        ),
        (
            TargetKind::Rmcp,
            rmcp::endpoint(&rmcp_socket, token.clone()),
        ),
        // Both wires, as the Tokio echo reads either like the blocking one.
        (
            TargetKind::RawEchoTokio,
            raw::endpoint(&raw_tokio_socket, Wire::Lines, token.clone()),
        ),
        (
            TargetKind::RawEchoTokio,
            raw::endpoint(&raw_tokio_socket, Wire::Frames, token),
        ),
    ];
    // Every target read each way, as the real run does (here the servers are in the test's
    // own process, so the one-CPU reads hold all of its threads on one CPU for a while).
    let probes: Vec<LatencyProbe> = ReadMode::ALL
        .into_iter()
        .flat_map(|reads| {
            targets.iter().map(move |(_, endpoint)| LatencyProbe {
                endpoint: endpoint.clone(),
                reads,
            })
        })
        .collect();
    let results = measure_latency_interleaved(&probes, 5, CALLS, 3).unwrap();
    let mut latency = Vec::new();
    let kinds = targets.iter().map(|(target, _)| *target).cycle();
    for ((target, probe), result) in kinds.zip(&probes).zip(results) {
        assert_eq!(result.calls, CALLS);
        assert!(result.percentiles.p50_us > 0.0);
        assert!(result.percentiles.p99_us >= result.percentiles.p50_us);
        assert!(
            result.reply_bytes.is_some(),
            "{target:?}: a reply was validated"
        );
        latency.push(LatencyRow {
            target,
            wire: probe.endpoint.wire.label(),
            reads: probe.reads,
            result,
        });
    }
    let single = measure_latency(&targets[0].1, ReadMode::Blocking, 1, CALLS).unwrap();
    assert_eq!(single.calls, CALLS);
    assert_eq!(
        latency[0].result.request_bytes, latency[2].result.request_bytes,
        "the raw socket gets exactly the bytes our servers get"
    );

    let mut throughput = Vec::new();
    let spread = ours::spread_endpoints(&directory, Wire::Frames, 4).unwrap();
    assert_eq!(
        spread
            .iter()
            .map(|endpoint| endpoint.socket.clone())
            .collect::<std::collections::HashSet<_>>()
            .len(),
        4,
        "four connections use the four servers"
    );
    for (target, endpoints) in [
        (TargetKind::Ours, spread),
        (TargetKind::Rmcp, vec![targets[3].1.clone(); 2]),
    ] {
        let wire = endpoints[0].wire.label();
        let result = measure_throughput(&brief_throughput(endpoints)).unwrap();
        assert!(result.completed > 0);
        assert_eq!(result.sent, result.replied, "every call was answered");
        assert!(result.calls_per_second > 0.0);
        throughput.push(ThroughputRow {
            target,
            wire,
            result,
        });
    }

    let report = BenchReport {
        machine: Machine::current(),
        settings: Settings {
            latency_calls: CALLS,
            latency_warmup_calls: 5,
            latency_rounds: 1,
            in_flight: ide_mcp_server::QUEUE_DEPTH,
            throughput_warmup: Duration::from_millis(50),
            throughput_window: Duration::from_millis(200),
            rmcp_version: ide_mcp_bench::run::RMCP_VERSION.to_owned(),
        },
        latency,
        throughput,
        memory: Vec::<MemoryRow>::new(),
        idle: Vec::new(),
        instructions: Instructions::Skipped("not counted".to_owned()),
        java: JavaTarget::Skipped("no jar".to_owned()),
        handoff: None,
        handoff_one_cpu: None,
    };
    let markdown = report.to_markdown();
    assert!(markdown.contains("### Goals"));
    assert!(markdown.contains("| ide-mcp | frames/TOON | spinning |"));
    assert!(markdown.contains("| ide-mcp | frames/TOON | blocking |"));
    assert!(markdown.contains("| raw echo socket | frames/TOON | blocking, one CPU |"));
    assert!(markdown.contains("| raw echo socket, Tokio | NDJSON | blocking |"));
    assert!(
        markdown.contains("Not measured in this run: no jar."),
        "a run without the jar says so"
    );

    servers.stop().unwrap();
    rmcp_runtime.shutdown_timeout(Duration::from_secs(1));
    raw_tokio_runtime.shutdown_timeout(Duration::from_secs(1));
}

#[test]
fn idle_connections_are_measured_in_a_separate_server_process() {
    let base = tempfile::tempdir().unwrap();
    let base_arg = base.path().to_string_lossy().into_owned();
    let mut server = ServerProcess::spawn(
        env!("CARGO_BIN_EXE_ide-mcp-bench").as_ref(),
        &["serve", "--base", &base_arg, "--count-allocations"],
    )
    .unwrap();
    let endpoint = ours::endpoint(&server.announced, ServerName::Code, Wire::Frames).unwrap();
    let result = measure_idle_connections(&mut server, &endpoint, 8).unwrap();
    assert_eq!(result.connections, 8);
    let heap = result
        .heap_kib_per_connection
        .expect("the server process counts its allocations");
    assert!(heap > 0.0, "idle connections hold some heap");
    assert!(!result.largest_growth.is_empty());
}

#[test]
fn an_idle_server_process_is_watched_thread_by_thread() {
    let base = tempfile::tempdir().unwrap();
    let base_arg = base.path().to_string_lossy().into_owned();
    let server = ServerProcess::spawn(
        env!("CARGO_BIN_EXE_ide-mcp-bench").as_ref(),
        &["serve", "--base", &base_arg],
    )
    .unwrap();
    let window = Duration::from_millis(300);
    let all = measure_idle_cpu(server.pid(), ThreadFilter::All, window).unwrap();
    assert!(all.window >= window);
    // The main thread and the runtime's workers at least.
    assert!(all.threads >= 3, "{all:?}");
    let ours =
        measure_idle_cpu(server.pid(), ThreadFilter::NamePrefix("ide-mcp-io"), window).unwrap();
    assert_eq!(
        ours.threads,
        ide_mcp_server::ServerConfig::default().worker_threads,
        "only the named threads are counted"
    );
}
