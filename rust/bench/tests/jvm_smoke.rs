//! The Java-handler target, briefly, in the style of `smoke.rs`: the Java echo server started
//! from its jar answers every call through the same load generator, and the report shows the
//! JVM hop. Needs the jars from `gradle --offline benchJar` (which `scripts/test.sh` builds
//! before `cargo test`) and a `java`. Without them it prints why and passes, except under
//! `CI=true`, where a missing jar or `java` fails the test instead of skipping it.
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::time::Duration;

use ide_mcp_bench::handoff::Placement;
use ide_mcp_bench::load::{
    measure_latency_interleaved, measure_throughput, LatencyProbe, ReadMode, ThroughputPlan,
};
use ide_mcp_bench::machine::Machine;
use ide_mcp_bench::report::{
    BenchReport, Instructions, JavaTarget, LatencyRow, Settings, TargetKind, ThroughputRow,
};
use ide_mcp_bench::server_process::ServerProcess;
use ide_mcp_bench::targets::{jvm, ours};
use ide_mcp_bench::wire::Wire;
use ide_mcp_server::ServerName;

const CALLS: usize = 50;

/// Why the test cannot run: a note outside CI, a failure under `CI=true`.
fn cannot_run(reason: &str) {
    if std::env::var("CI").is_ok_and(|value| value == "true") {
        panic!("{reason}; CI=true, so this test fails instead of skipping");
    }
    println!("note: skipped: {reason}");
}

#[test]
fn the_java_handler_target_answers_through_the_same_load_generator() {
    let Some(jar) = jvm::find_jar(None).filter(|jar| jvm::jar_has_main_class(jar)) else {
        cannot_run(&format!(
            "no jar with {} in {} (build it with `{}`)",
            jvm::MAIN_CLASS,
            jvm::JAR_DIRECTORY,
            jvm::BUILD_COMMAND
        ));
        return;
    };
    let java_version = match jvm::java_version(Path::new("java")) {
        Ok(version) => version,
        Err(reason) => {
            cannot_run(&reason);
            return;
        }
    };
    let base = tempfile::tempdir().unwrap();
    let java_arguments = jvm::arguments(&jar, base.path());
    let java_arguments: Vec<&str> = java_arguments.iter().map(String::as_str).collect();
    let java = ServerProcess::spawn(Path::new("java"), &java_arguments).unwrap();
    let rust_base = base.path().join("rust");
    std::fs::create_dir(&rust_base).unwrap();
    let rust_base_arg = rust_base.to_string_lossy().into_owned();
    let rust = ServerProcess::spawn(
        env!("CARGO_BIN_EXE_ide-mcp-bench").as_ref(),
        &["serve", "--base", &rust_base_arg],
    )
    .unwrap();

    let targets = [
        (
            TargetKind::Ours,
            ours::endpoint(&rust.announced, ServerName::Code, Wire::Frames).unwrap(),
        ),
        (
            TargetKind::OursJava,
            ours::endpoint(&java.announced, ServerName::Code, Wire::Frames).unwrap(),
        ),
    ];
    // Every target read each way, as the real run does.
    let probes: Vec<LatencyProbe> = ReadMode::ALL
        .into_iter()
        .flat_map(|reads| {
            targets.iter().map(move |(_, endpoint)| LatencyProbe {
                endpoint: endpoint.clone(),
                reads,
            })
        })
        .collect();
    let results = measure_latency_interleaved(&probes, 5, CALLS, 2).unwrap();
    let mut latency = Vec::new();
    let kinds = targets.iter().map(|(target, _)| *target).cycle();
    for ((target, probe), result) in kinds.zip(&probes).zip(results) {
        assert_eq!(result.calls, CALLS);
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
    assert_eq!(
        latency[0].result.reply_bytes, latency[1].result.reply_bytes,
        "the Java echo answers what the Rust echo answers"
    );

    let mut throughput = Vec::new();
    for (target, endpoint) in &targets {
        let result = measure_throughput(&ThroughputPlan {
            connections: vec![endpoint.clone()],
            in_flight: ide_mcp_server::QUEUE_DEPTH,
            warmup: Duration::from_millis(50),
            measure: Duration::from_millis(200),
        })
        .unwrap();
        assert!(result.completed > 0);
        assert_eq!(result.sent, result.replied, "every call was answered");
        assert_eq!(result.busy, 0);
        throughput.push(ThroughputRow {
            target: *target,
            wire: endpoint.wire.label(),
            result,
        });
    }

    let report = BenchReport {
        machine: Machine::current(),
        settings: Settings {
            latency_calls: CALLS,
            latency_warmup_calls: 5,
            latency_rounds: 2,
            in_flight: ide_mcp_server::QUEUE_DEPTH,
            throughput_warmup: Duration::from_millis(50),
            throughput_window: Duration::from_millis(200),
            rmcp_version: ide_mcp_bench::run::RMCP_VERSION.to_owned(),
        },
        latency,
        throughput,
        memory: Vec::new(),
        idle: Vec::new(),
        instructions: Instructions::Skipped("not counted".to_owned()),
        java: JavaTarget::Measured {
            jar: jar.display().to_string(),
            java_version,
            warmup_calls: 0,
        },
        handoff: ide_mcp_bench::handoff::measure(5, 50, Placement::Scheduled),
        handoff_one_cpu: ide_mcp_bench::handoff::measure(5, 50, Placement::OneCpu),
    };
    let markdown = report.to_markdown();
    assert!(
        markdown.contains("The floor under one JVM entry on this machine"),
        "{markdown}"
    );
    assert!(markdown.contains("| JVM hop ≤ 6 µs at p50"), "{markdown}");
    assert!(
        markdown.contains("The same with both threads held on one CPU"),
        "{markdown}"
    );
    assert!(
        markdown.contains("one hand-off to a sleeping thread on the same CPU and back, the floor"),
        "{markdown}"
    );
    assert!(markdown.contains("| ide-mcp, Java handler (JNI) | frames/TOON | blocking |"));
    assert!(markdown.contains("| ide-mcp, Java handler (JNI) | frames/TOON | blocking, one CPU |"));
    assert!(markdown.contains("### Java handler through JNI"));
}
