//! The Markdown section of docs/BENCHMARKS.md, and replacing it between its markers.

use std::fmt::Write as _;
use std::io;
use std::path::Path;
use std::time::Duration;

use crate::idle::IdleCpuResult;
use crate::instructions::{
    InstructionsResult, CALLS as INSTRUCTION_CALLS, PAUSE as INSTRUCTION_PAUSE,
};
use crate::load::{LatencyResult, Percentiles, ReadMode, ThroughputResult};
use crate::machine::Machine;
use crate::memory::IdleMemoryResult;

/// The line before the section in docs/BENCHMARKS.md.
pub const START_MARKER: &str = "<!-- server-bench:start -->";
/// The line after the section in docs/BENCHMARKS.md.
pub const END_MARKER: &str = "<!-- server-bench:end -->";

/// Goal: our p50 round trip at most this many times the raw ping-pong's.
pub const LATENCY_RATIO_GOAL: f64 = 1.3;
/// Goal: our throughput at least this many times rmcp's at equal concurrency.
pub const THROUGHPUT_RATIO_GOAL: f64 = 2.0;
/// Goal: at most this much memory per idle connection, in KiB.
pub const IDLE_CONNECTION_GOAL_KIB: f64 = 8.0;
/// Goal: a Java handler's p50 round trip at most this many µs above a Rust handler's.
pub const JVM_HOP_GOAL_US: f64 = 6.0;
/// Goal: an idle server set's threads wake at most this often.
pub const IDLE_WAKEUPS_GOAL_PER_SECOND: f64 = 1.0;

/// Hand-offs timed for the floor under a JVM entry.
pub const HANDOFF_SAMPLES: usize = 10_000;

/// Microseconds between two timed hand-offs.
pub const HANDOFF_GAP_US: u64 = 50;

/// How the run was shaped, for the report's preamble.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Sequential calls measured per latency row.
    pub latency_calls: usize,
    /// Sequential calls before measuring.
    pub latency_warmup_calls: usize,
    /// Rounds the latency calls were split into, taking turns between the targets.
    pub latency_rounds: usize,
    /// Calls outstanding per connection in throughput rows.
    pub in_flight: usize,
    /// Warm-up before each throughput window.
    pub throughput_warmup: Duration,
    /// Each throughput window.
    pub throughput_window: Duration,
    /// rmcp's crate version.
    pub rmcp_version: String,
}

/// Which server a row measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TargetKind {
    /// ide-mcp with Rust handlers.
    Ours,
    /// ide-mcp hosted by a JVM, with a Java guard and Java handlers (through JNI).
    OursJava,
    /// The raw echo socket.
    RawEcho,
    /// The raw echo socket as tasks of a Tokio runtime.
    RawEchoTokio,
    /// rmcp.
    Rmcp,
}

impl TargetKind {
    fn label(self) -> &'static str {
        match self {
            TargetKind::Ours => "ide-mcp",
            TargetKind::OursJava => "ide-mcp, Java handler (JNI)",
            TargetKind::RawEcho => "raw echo socket",
            TargetKind::RawEchoTokio => "raw echo socket, Tokio",
            TargetKind::Rmcp => "rmcp",
        }
    }
}

/// One latency row.
#[derive(Debug, Clone)]
pub struct LatencyRow {
    /// Which server.
    pub target: TargetKind,
    /// `frames/TOON` or `NDJSON`.
    pub wire: &'static str,
    /// How the client waited for replies.
    pub reads: ReadMode,
    /// The measurement.
    pub result: LatencyResult,
}

/// One idle-CPU row: a server set with no clients.
#[derive(Debug, Clone)]
pub struct IdleRow {
    /// Which server.
    pub target: TargetKind,
    /// Which of its process's threads were counted.
    pub threads: &'static str,
    /// The measurement, or why there is none.
    pub result: Result<IdleCpuResult, String>,
}

/// One row of instructions per call.
#[derive(Debug, Clone)]
pub struct InstructionsRow {
    /// Which server.
    pub target: TargetKind,
    /// `frames/TOON` or `NDJSON`.
    pub wire: &'static str,
    /// The measurement.
    pub result: InstructionsResult,
}

/// Whether the instruction counts were taken.
#[derive(Debug, Clone)]
pub enum Instructions {
    /// Counted under this valgrind.
    Measured {
        /// `valgrind --version`.
        valgrind: String,
        /// One row per server and wire.
        rows: Vec<InstructionsRow>,
    },
    /// Not counted, and why.
    Skipped(String),
}

/// One throughput row.
#[derive(Debug, Clone)]
pub struct ThroughputRow {
    /// Which server.
    pub target: TargetKind,
    /// `frames/TOON` or `NDJSON`.
    pub wire: &'static str,
    /// The measurement.
    pub result: ThroughputResult,
}

/// One idle-memory row.
#[derive(Debug, Clone)]
pub struct MemoryRow {
    /// Which server.
    pub target: TargetKind,
    /// `frames/TOON` or `NDJSON`.
    pub wire: &'static str,
    /// The measurement.
    pub result: IdleMemoryResult,
}

/// Whether the Java-handler target ran.
#[derive(Debug, Clone)]
pub enum JavaTarget {
    /// Measured.
    Measured {
        /// The jar the JVM ran.
        jar: String,
        /// What `java -version` said.
        java_version: String,
        /// Sequential calls made before the measurement, so the JIT compiled the hot path.
        warmup_calls: usize,
    },
    /// Not measured, and why.
    Skipped(String),
}

/// Everything one run measured.
#[derive(Debug, Clone)]
pub struct BenchReport {
    /// Where it ran.
    pub machine: Machine,
    /// How it ran.
    pub settings: Settings,
    /// Sequential round trips.
    pub latency: Vec<LatencyRow>,
    /// Pipelined throughput.
    pub throughput: Vec<ThroughputRow>,
    /// Idle connections.
    pub memory: Vec<MemoryRow>,
    /// Server sets with no clients.
    pub idle: Vec<IdleRow>,
    /// Instructions per echo call.
    pub instructions: Instructions,
    /// The Java-handler target.
    pub java: JavaTarget,
    /// One hand-off to a sleeping thread and back, measured beside the Java target: the
    /// floor under a JVM entry on this machine.
    pub handoff: Option<Percentiles>,
    /// The same with both threads held on one CPU: the floor of the "blocking, one CPU" rows.
    pub handoff_one_cpu: Option<Percentiles>,
}

impl BenchReport {
    fn latency_p50(&self, target: TargetKind, wire: &str, reads: ReadMode) -> Option<f64> {
        self.latency_row(target, wire, reads)
            .map(|row| row.result.percentiles.p50_us)
    }

    fn latency_row(&self, target: TargetKind, wire: &str, reads: ReadMode) -> Option<&LatencyRow> {
        self.latency
            .iter()
            .find(|row| row.target == target && row.wire == wire && row.reads == reads)
    }

    fn throughput_row(
        &self,
        target: TargetKind,
        wire: &str,
        connections: usize,
    ) -> Option<&ThroughputRow> {
        self.throughput.iter().find(|row| {
            row.target == target && row.wire == wire && row.result.connections == connections
        })
    }

    fn throughput_of(&self, target: TargetKind, wire: &str, connections: usize) -> Option<f64> {
        self.throughput
            .iter()
            .find(|row| {
                row.target == target && row.wire == wire && row.result.connections == connections
            })
            .map(|row| row.result.calls_per_second)
    }

    /// The Markdown section, markers excluded.
    pub fn to_markdown(&self) -> String {
        let mut out = String::new();
        self.write_preamble(&mut out);
        self.write_goals(&mut out);
        self.write_latency(&mut out);
        self.write_throughput(&mut out);
        self.write_java(&mut out);
        self.write_memory(&mut out);
        self.write_idle(&mut out);
        self.write_instructions(&mut out);
        out
    }

    fn write_preamble(&self, out: &mut String) {
        let machine = &self.machine;
        let settings = &self.settings;
        let _ = writeln!(out, "## Server benchmark\n");
        let _ = writeln!(
            out,
            "All figures below come from one run of `cargo run --release -p ide-mcp-bench -- \
             --write docs/BENCHMARKS.md`, which `scripts/bench.sh` runs after building the jar \
             for the Java-handler rows."
        );
        let _ = writeln!(
            out,
            "\n- Machine: {} CPUs ({}), Linux {}; load average {} when the run started (other \
             work on the machine shares the CPUs with the servers and the load generator).",
            machine.cpus, machine.cpu_model, machine.kernel, machine.load_average
        );
        let _ = writeln!(
            out,
            "- Each server runs in its own process started by the bench binary: ide-mcp with its \
             default configuration (four servers, diagnostics domain, `AllowAll` guard, 2 worker \
             threads); rmcp {} with a `#[tool]` echo on a 2-worker Tokio runtime, one \
             `serve(UnixStream)` per connection; the raw echo socket reads a frame or line and \
             writes the same bytes back, one blocking thread per connection; the raw echo \
             socket, Tokio, does the same in one task per connection on a 2-worker Tokio \
             runtime, the least an asynchronous server does (its workers wait in `epoll`, as \
             ide-mcp's and rmcp's do), measured for latency over NDJSON.",
            settings.rmcp_version
        );
        let _ = writeln!(
            out,
            "- The load generator is the same for every target: blocking `std` Unix sockets, one \
             thread per connection, requests pre-encoded with only the id digits patched, every \
             reply checked against its connection's first fully decoded and validated reply and \
             correlated by id. It shares the machine's CPUs with the server under test."
        );
        let _ = writeln!(
            out,
            "- The echo call is `tools/call run {{tool: echo, args: {{value: \"bench-echo\"}}}}` \
             with the token in `params._meta` (rmcp: `tools/call echo {{value}}`, with the same \
             `_meta` bytes, which it ignores). Percentiles are nearest-rank over every sample.",
        );
        let _ = writeln!(
            out,
            "- Every latency target is measured three times in the same rounds: with a client \
             that spins on a non-blocking socket (only the server's own wake-ups are in the \
             figure); with one that sleeps in a blocking `read`, as most clients do (the \
             client's wake-up is in the figure too); and with a blocking one that is held, \
             with every thread of the server, on one CPU while it measures (`one_cpu.rs`). On \
             this virtual machine an idle CPU halts, and a thread woken on it costs the CPU's \
             wake-up (tens of microseconds) where one woken beside its waker costs a context \
             switch, so the plain blocking figures depend on where the scheduler puts each \
             thread, for the raw socket as for the servers; on one CPU every wake-up is a \
             context switch, and what a server adds over the raw ping-pong is its own work. \
             Throughput runs use blocking reads.\n"
        );
    }

    fn write_goals(&self, out: &mut String) {
        let _ = writeln!(out, "### Goals\n");
        let _ = writeln!(out, "| goal | reads | measured | met |");
        let _ = writeln!(out, "| --- | --- | --- | --- |");
        for reads in ReadMode::ALL {
            let mode = reads.label();
            if let (Some(ours), Some(rmcp)) = (
                self.latency_p50(TargetKind::Ours, "NDJSON", reads),
                self.latency_p50(TargetKind::Rmcp, "NDJSON", reads),
            ) {
                let _ = writeln!(
                    out,
                    "| p50 round trip ≤ rmcp's (NDJSON, one call at a time) | {mode} | \
                     {ours:.1} µs vs {rmcp:.1} µs = {:.2}× | {} |",
                    ours / rmcp,
                    yes_no(ours <= rmcp)
                );
            }
            for wire in ["frames/TOON", "NDJSON"] {
                if let (Some(ours), Some(raw)) = (
                    self.latency_p50(TargetKind::Ours, wire, reads),
                    self.latency_p50(TargetKind::RawEcho, wire, reads),
                ) {
                    let ratio = ours / raw;
                    let _ = writeln!(
                        out,
                        "| p50 round trip ≤ {LATENCY_RATIO_GOAL}× a raw socket ping-pong of the \
                         same bytes ({wire}) | {mode} | {ours:.1} µs vs {raw:.1} µs = {ratio:.2}× \
                         | {} |",
                        yes_no(ratio <= LATENCY_RATIO_GOAL)
                    );
                }
            }
            self.write_java_goal(out, reads);
        }
        let mut concurrencies: Vec<usize> = self
            .throughput
            .iter()
            .map(|row| row.result.connections)
            .collect();
        concurrencies.dedup();
        for connections in concurrencies {
            if let (Some(ours), Some(rmcp)) = (
                self.throughput_of(TargetKind::Ours, "NDJSON", connections),
                self.throughput_of(TargetKind::Rmcp, "NDJSON", connections),
            ) {
                let ratio = ours / rmcp;
                let _ = writeln!(
                    out,
                    "| throughput ≥ {THROUGHPUT_RATIO_GOAL}× rmcp, NDJSON, {connections} \
                     connection(s) × {} in flight | blocking | {ours:.0} vs {rmcp:.0} calls/s = \
                     {ratio:.2}× | {} |",
                    self.settings.in_flight,
                    yes_no(ratio >= THROUGHPUT_RATIO_GOAL)
                );
            }
        }
        for row in self
            .memory
            .iter()
            .filter(|row| row.target == TargetKind::Ours)
        {
            let dirty = row.result.private_dirty_kib_per_connection;
            let heap = row
                .result
                .heap_kib_per_connection
                .map_or(String::new(), |heap| format!(" (live heap {heap:.1} KiB)"));
            let _ = writeln!(
                out,
                "| ≤ {IDLE_CONNECTION_GOAL_KIB} KiB per idle connection | | {dirty:.1} KiB \
                 Private_Dirty{heap} | {} |",
                yes_no(dirty <= IDLE_CONNECTION_GOAL_KIB)
            );
        }
        for row in self
            .idle
            .iter()
            .filter(|row| row.target != TargetKind::Rmcp)
        {
            let goal = format!(
                "a server set with no clients wakes ≤ {IDLE_WAKEUPS_GOAL_PER_SECOND} time(s) a \
                 second ({}, {})",
                row.target.label(),
                row.threads
            );
            match &row.result {
                Ok(result) => {
                    let rate = result.wakeups_per_second();
                    let _ = writeln!(
                        out,
                        "| {goal} | | {rate:.2} wake-ups/s, {:.0} ms of CPU in {:.0} s | {} |",
                        result.cpu_ms,
                        result.window.as_secs_f64(),
                        yes_no(rate <= IDLE_WAKEUPS_GOAL_PER_SECOND)
                    );
                }
                Err(reason) => {
                    let _ = writeln!(out, "| {goal} | | {reason} | not measured |");
                }
            }
        }
        out.push('\n');
    }

    fn write_latency(&self, out: &mut String) {
        let _ = writeln!(
            out,
            "### Round-trip latency (one connection, one call at a time, {} calls after {} \
             warm-up)\n",
            self.settings.latency_calls, self.settings.latency_warmup_calls
        );
        let _ = writeln!(
            out,
            "The calls are split into {} rounds that take turns between the targets (each \
             target once with each of the three clients), so a change in the machine's state \
             during the run falls on every target alike.\n",
            self.settings.latency_rounds
        );
        let _ = writeln!(
            out,
            "| target | wire | reads | request bytes | reply bytes | p50 µs | p99 µs | p50 vs raw |"
        );
        let _ = writeln!(
            out,
            "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: |"
        );
        for row in &self.latency {
            let raw = self.latency_p50(TargetKind::RawEcho, row.wire, row.reads);
            let ratio = raw.map_or("".to_owned(), |raw| {
                format!("{:.2}×", row.result.percentiles.p50_us / raw)
            });
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {:.1} | {:.1} | {} |",
                row.target.label(),
                row.wire,
                row.reads.label(),
                row.result.request_bytes,
                row.result
                    .reply_bytes
                    .map_or("".to_owned(), |bytes| bytes.to_string()),
                row.result.percentiles.p50_us,
                row.result.percentiles.p99_us,
                ratio
            );
        }
        let _ = writeln!(
            out,
            "\nReply bytes are payload bytes without framing; the raw socket's reply is the \
             request itself.\n"
        );
    }

    fn write_throughput(&self, out: &mut String) {
        let _ = writeln!(
            out,
            "### Throughput ({} calls in flight per connection, {:.1} s window after {:.1} s \
             warm-up)\n",
            self.settings.in_flight,
            self.settings.throughput_window.as_secs_f64(),
            self.settings.throughput_warmup.as_secs_f64()
        );
        let _ = writeln!(
            out,
            "| target | wire | connections | calls/s | p50 µs | p99 µs | busy refusals | vs rmcp |"
        );
        let _ = writeln!(
            out,
            "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"
        );
        for row in &self.throughput {
            let result = &row.result;
            let versus = self
                .throughput_of(TargetKind::Rmcp, "NDJSON", result.connections)
                .filter(|_| row.target != TargetKind::Rmcp)
                .map_or("".to_owned(), |rmcp| {
                    format!("{:.2}×", result.calls_per_second / rmcp)
                });
            let _ = writeln!(
                out,
                "| {} | {} | {} | {:.0} | {:.1} | {:.1} | {} | {} |",
                row.target.label(),
                row.wire,
                result.connections,
                result.calls_per_second,
                result.percentiles.p50_us,
                result.percentiles.p99_us,
                result.busy,
                versus
            );
        }
        let _ = writeln!(
            out,
            "\nLatency here is send-to-reply under load, queueing behind the connection's other \
             outstanding calls included. The raw echo socket rows are the ceiling of this load \
             generator on this machine: the client threads and the kernel share the same CPUs \
             with the server, so no server can go faster than those rows. ide-mcp connections are spread round-robin over its \
             four sockets (as an agent using all four servers would be); every server caps the \
             handlers it runs at once (64 by default), and a call over a cap is answered \
             at once as busy: such replies are counted apart, not as completed calls. Every \
             call sent was answered: sent = replied in every row.\n"
        );
    }

    /// The JVM hop at p50 on frames/TOON: (Java handler, Rust handler, difference) in µs.
    fn jvm_hop(&self, reads: ReadMode) -> Option<(f64, f64, f64)> {
        let java = self.latency_p50(TargetKind::OursJava, "frames/TOON", reads)?;
        let rust = self.latency_p50(TargetKind::Ours, "frames/TOON", reads)?;
        Some((java, rust, java - rust))
    }

    fn write_java_goal(&self, out: &mut String, reads: ReadMode) {
        let goal = format!(
            "JVM hop ≤ {JVM_HOP_GOAL_US} µs at p50 (Java-handler p50 − Rust-handler p50, \
             frames/TOON)"
        );
        let mode = reads.label();
        match (&self.java, self.jvm_hop(reads)) {
            (JavaTarget::Measured { .. }, Some((java, rust, hop))) => {
                let (floor, placed) = match reads {
                    ReadMode::BlockingOneCpu => (self.handoff_one_cpu, " on the same CPU"),
                    ReadMode::Spinning | ReadMode::Blocking => (self.handoff, ""),
                };
                let floor = floor.map_or(String::new(), |floor| {
                    format!(
                        " (one hand-off to a sleeping thread{placed} and back, the floor: \
                         {:.1} µs)",
                        floor.p50_us
                    )
                });
                let _ = writeln!(
                    out,
                    "| {goal} | {mode} | {java:.1} µs − {rust:.1} µs = {hop:.1} µs{floor} | {} |",
                    yes_no(hop <= JVM_HOP_GOAL_US)
                );
            }
            (JavaTarget::Measured { .. }, None) => {
                let _ = writeln!(out, "| {goal} | {mode} | no latency rows | not measured |");
            }
            (JavaTarget::Skipped(reason), _) => {
                let _ = writeln!(out, "| {goal} | {mode} | {reason} | not measured |");
            }
        }
    }

    fn write_java(&self, out: &mut String) {
        let _ = writeln!(out, "### Java handler through JNI\n");
        let (jar, java_version, warmup_calls) = match &self.java {
            JavaTarget::Measured {
                jar,
                java_version,
                warmup_calls,
            } => (jar, java_version, *warmup_calls),
            JavaTarget::Skipped(reason) => {
                let _ = writeln!(out, "Not measured in this run: {reason}.\n");
                return;
            }
        };
        let _ = writeln!(
            out,
            "The same servers hosted by a JVM the way a plugin hosts them: `java -cp {jar} \
             dev.lain.claudejb.mcp.bench.EchoServer` ({java_version}, default JVM options) \
             starts `IdeMcpServers` through the Java API with a `diagnostics` domain on `code` \
             whose `echo` is a Java `ToolHandler` answering `{{\"value\": …}}` at once through \
             `ToolCallContext.complete`. Its guard is `SecurityGuard.allowAll()`, in Java as a \
             plugin's is, so every call enters the JVM once: one job queued to a callback \
             thread judges it and, the checkpoint's gate open, runs the handler, which answers \
             back to a Tokio worker. Its log sink takes warnings only, as the Rust-handler \
             target logs nothing (an INFO audit line per call through `java.util.logging` \
             would be the log's cost, not the hop's). The Rust-handler rows are the `ide-mcp` \
             rows above (`AllowAll` and `echo` in Rust, in process). The same load generator drives \
             both, and the latency calls of the Java target take turns with the other targets' \
             in the same rounds; before them, the Java target got {warmup_calls} extra sequential \
             calls so that the JIT has compiled the path (an IDE's JVM is long warm).\n"
        );
        let _ = writeln!(
            out,
            "| target | reads | p50 µs | p99 µs | p50 − Rust handler | calls/s, 1 connection × \
             {} in flight | p50 µs under that load | vs Rust handler |",
            self.settings.in_flight
        );
        let _ = writeln!(
            out,
            "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"
        );
        let rust_rate = self.throughput_of(TargetKind::Ours, "frames/TOON", 1);
        for reads in ReadMode::ALL {
            let rust_p50 = self.latency_p50(TargetKind::Ours, "frames/TOON", reads);
            for (target, label) in [
                (TargetKind::RawEcho, "raw echo socket"),
                (TargetKind::Ours, "ide-mcp, Rust handler"),
                (TargetKind::OursJava, "ide-mcp, Java handler (JNI)"),
            ] {
                let latency = self.latency_row(target, "frames/TOON", reads);
                // The throughput rows read blocking; they are shown once, beside those reads.
                let throughput = (reads == ReadMode::Blocking)
                    .then(|| self.throughput_row(target, "frames/TOON", 1))
                    .flatten();
                let cell = |value: Option<f64>, digits: usize| {
                    value.map_or(String::new(), |value| format!("{value:.digits$}"))
                };
                let p50 = latency.map(|row| row.result.percentiles.p50_us);
                let hop = match (p50, rust_p50) {
                    (Some(p50), Some(rust)) if target != TargetKind::Ours => {
                        format!("{:+.1} µs", p50 - rust)
                    }
                    _ => String::new(),
                };
                let rate = throughput.map(|row| row.result.calls_per_second);
                let versus = match (rate, rust_rate) {
                    (Some(rate), Some(rust)) if target != TargetKind::Ours => {
                        format!("{:.2}×", rate / rust)
                    }
                    _ => String::new(),
                };
                let _ = writeln!(
                    out,
                    "| {label} | {} | {} | {} | {hop} | {} | {} | {versus} |",
                    reads.label(),
                    cell(p50, 1),
                    cell(latency.map(|row| row.result.percentiles.p99_us), 1),
                    cell(rate, 0),
                    cell(throughput.map(|row| row.result.percentiles.p50_us), 1),
                );
            }
        }
        let _ = writeln!(
            out,
            "\nAll on frames/TOON, from the latency and throughput runs above.\n"
        );
        if let Some(floor) = self.handoff {
            let _ = writeln!(
                out,
                "The floor under one JVM entry on this machine, measured in the bench process \
                 right after the latency rounds: a job handed to a thread asleep on a condition \
                 variable (as a callback thread waits for its next job), its answer watched for \
                 by the thread that handed it over (as a Tokio worker watches for the answer of \
                 a lone Java call), {HANDOFF_SAMPLES} times with {HANDOFF_GAP_US} µs between \
                 them: p50 {:.1} µs, p99 {:.1} µs. No JNI and no work, only the wake-up and the \
                 way back; Tokio workers never enter the JVM, so no Java call costs less.\n",
                floor.p50_us, floor.p99_us
            );
        }
        if let Some(floor) = self.handoff_one_cpu {
            let _ = writeln!(
                out,
                "The same with both threads held on one CPU, as the client and the server are in \
                 the \"blocking, one CPU\" rows, so that the hand-off and its way back are two \
                 context switches on that CPU: p50 {:.1} µs, p99 {:.1} µs; the floor of those \
                 rows.\n",
                floor.p50_us, floor.p99_us
            );
        }
    }

    fn write_memory(&self, out: &mut String) {
        let _ = writeln!(out, "### Memory per idle connection\n");
        let _ = writeln!(
            out,
            "Growth of the server process after opening N connections that each completed \
             `initialize` and `notifications/initialized` and then stayed idle, divided by N \
             (after a warm-up of 16 connections that made one call and closed). The ide-mcp process \
             runs the default configuration except for the connection caps (64 per server, 32 per \
             peer process), raised so that one server holds all N from the one bench process. Private_Dirty \
             and Anonymous come from `/proc/<pid>/smaps_rollup`; live heap from a counting \
             allocator in the server process. Kernel socket buffers are not in these figures.\n"
        );
        let _ = writeln!(
            out,
            "| server | wire | N | Private_Dirty KiB | Anonymous KiB | RSS KiB | live heap KiB | heap blocks |"
        );
        let _ = writeln!(
            out,
            "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"
        );
        for row in &self.memory {
            let result = &row.result;
            let _ = writeln!(
                out,
                "| {} | {} | {} | {:.1} | {:.1} | {:.1} | {} | {} |",
                row.target.label(),
                row.wire,
                result.connections,
                result.private_dirty_kib_per_connection,
                result.anonymous_kib_per_connection,
                result.rss_kib_per_connection,
                result
                    .heap_kib_per_connection
                    .map_or("".to_owned(), |kib| format!("{kib:.1}")),
                result
                    .heap_blocks_per_connection
                    .map_or("".to_owned(), |blocks| format!("{blocks:.1}")),
            );
        }
        for row in &self.memory {
            if row.result.largest_growth.is_empty() {
                continue;
            }
            let _ = writeln!(
                out,
                "\nLargest heap growth per idle connection, {} ({}), by block size:\n",
                row.target.label(),
                row.wire
            );
            let _ = writeln!(out, "| block bytes | blocks | bytes | what |");
            let _ = writeln!(out, "| ---: | ---: | ---: | --- |");
            for growth in &row.result.largest_growth {
                let size = if growth.size >= 64 * 1024 {
                    "≥ 65536".to_owned()
                } else {
                    growth.size.to_string()
                };
                let what = if row.target == TargetKind::Ours {
                    known_block(growth.size)
                } else {
                    ""
                };
                let _ = writeln!(
                    out,
                    "| {size} | {:.2} | {:.0} | {what} |",
                    growth.blocks_per_connection, growth.bytes_per_connection
                );
            }
        }
        out.push('\n');
    }
}

impl BenchReport {
    fn write_idle(&self, out: &mut String) {
        let _ = writeln!(out, "### A server set with no clients\n");
        let _ = writeln!(
            out,
            "Each server process, after the runs above and with every connection closed, is \
             left alone while its threads' context switches (`voluntary_ctxt_switches` + \
             `nonvoluntary_ctxt_switches` of `/proc/<pid>/task/*/status`: a sleeping thread \
             switches out once per wake-up) and CPU time (`utime + stime` of \
             `/proc/<pid>/task/*/stat`, 10 ms ticks) are counted. In the JVM only the \
             library's own threads (`ide-mcp-…`: the Tokio workers, the callback threads, the \
             notifier) are counted; the JVM's own (GC, JIT) are not ours.\n"
        );
        let _ = writeln!(
            out,
            "| server | threads counted | window s | threads | wake-ups | wake-ups/s | CPU ms |"
        );
        let _ = writeln!(out, "| --- | --- | ---: | ---: | ---: | ---: | ---: |");
        for row in &self.idle {
            match &row.result {
                Ok(result) => {
                    let _ = writeln!(
                        out,
                        "| {} | {} | {:.0} | {} | {} | {:.2} | {:.0} |",
                        row.target.label(),
                        row.threads,
                        result.window.as_secs_f64(),
                        result.threads,
                        result.switches,
                        result.wakeups_per_second(),
                        result.cpu_ms
                    );
                }
                Err(reason) => {
                    let _ = writeln!(
                        out,
                        "| {} | {} | | | | not measured: {reason} | |",
                        row.target.label(),
                        row.threads
                    );
                }
            }
        }
        out.push('\n');
    }

    fn write_instructions(&self, out: &mut String) {
        let _ = writeln!(out, "### Instructions per echo call (callgrind)\n");
        let (valgrind, rows) = match &self.instructions {
            Instructions::Measured { valgrind, rows } => (valgrind, rows),
            Instructions::Skipped(reason) => {
                let _ = writeln!(out, "Not counted in this run: {reason}.\n");
                return;
            }
        };
        let _ = writeln!(
            out,
            "The server process runs under `valgrind --tool=callgrind` ({valgrind}) and gets \
             {} and then {} sequential echo calls on one connection, each {} ms after the \
             reply before it so that every thread of the server has parked (a call to an idle \
             server, as an agent's calls are; calls back to back counted the parking only when \
             the next call came after it, which moved the count by up to 2,000 instructions \
             from run to run), each run in a fresh process; (instructions of the large run \
             − of the small one) / {} is what one call \
             costs the server, every thread included, start-up and shutdown cancelled out. \
             Only user-space instructions count (a system call is one). ide-mcp runs with \
             `socketLookMicros` 0: a look at the socket that waits for the next message is a \
             loop of reads, as many as the timing allows, and not the call's work. Unlike the \
             times above, these do not move with the machine's load: a change of a few percent is \
             a change of the code.\n",
            INSTRUCTION_CALLS.0,
            INSTRUCTION_CALLS.1,
            INSTRUCTION_PAUSE.as_millis(),
            INSTRUCTION_CALLS.1 - INSTRUCTION_CALLS.0
        );
        let _ = writeln!(out, "| server | wire | instructions per call | vs rmcp |");
        let _ = writeln!(out, "| --- | --- | ---: | ---: |");
        let rmcp = rows
            .iter()
            .find(|row| row.target == TargetKind::Rmcp)
            .map(|row| row.result.per_call);
        for row in rows {
            let versus = match rmcp {
                Some(rmcp) if row.target != TargetKind::Rmcp => {
                    format!("{:.2}×", row.result.per_call / rmcp)
                }
                _ => String::new(),
            };
            let _ = writeln!(
                out,
                "| {} | {} | {} | {versus} |",
                row.target.label(),
                row.wire,
                thousands(row.result.per_call.round() as u64)
            );
        }
        out.push('\n');
    }
}

/// `1234567` as `1,234,567`: every count the benchmark sections print.
pub(crate) fn thousands(value: u64) -> String {
    let digits = value.to_string();
    let mut out = String::new();
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

/// Names a block of ours whose size follows from a type, so the label cannot go stale: the
/// first block of a Tokio mpsc channel holds 32 slots plus four words of bookkeeping.
fn known_block(size: usize) -> &'static str {
    const TOKIO_BLOCK_SLOTS: usize = 32;
    let reply_channel_block =
        TOKIO_BLOCK_SLOTS * ide_mcp_server::OUTGOING_SLOT_BYTES + 4 * std::mem::size_of::<usize>();
    if size == reply_channel_block {
        "first block of the connection's outgoing queue: 32 slots × one message (`Outgoing`)"
    } else {
        ""
    }
}

fn yes_no(met: bool) -> &'static str {
    if met {
        "yes"
    } else {
        "**no**"
    }
}

/// Replaces the text between [`START_MARKER`] and [`END_MARKER`] in the file at `path` with
/// `section`, appending the markers and the section when they are absent (or creating the file).
pub fn write_section(path: &Path, section: &str) -> io::Result<()> {
    write_marked_section(path, START_MARKER, END_MARKER, section)
}

/// Replaces the text between the lines `start_marker` and `end_marker` in the file at `path`
/// with `section`, appending the markers and the section when they are absent (or creating
/// the file).
pub fn write_marked_section(
    path: &Path,
    start_marker: &str,
    end_marker: &str,
    section: &str,
) -> io::Result<()> {
    let existing = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(error) if error.kind() == io::ErrorKind::NotFound => String::new(),
        Err(error) => return Err(error),
    };
    std::fs::write(
        path,
        replace_marked_section(&existing, start_marker, end_marker, section),
    )
}

/// `document` with the marked section replaced by (or extended with) `section`.
pub fn replace_section(document: &str, section: &str) -> String {
    replace_marked_section(document, START_MARKER, END_MARKER, section)
}

/// `document` with the section between `start_marker` and `end_marker` replaced by (or
/// extended with) `section`.
pub fn replace_marked_section(
    document: &str,
    start_marker: &str,
    end_marker: &str,
    section: &str,
) -> String {
    let body = format!("{start_marker}\n{}\n{end_marker}", section.trim_end());
    if let Some(start) = document.find(start_marker) {
        if let Some(end_offset) = document[start..].find(end_marker) {
            let end = start + end_offset + end_marker.len();
            return format!("{}{body}{}", &document[..start], &document[end..]);
        }
    }
    let mut out = document.to_owned();
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    if !out.is_empty() {
        out.push('\n');
    }
    out.push_str(&body);
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_section_is_replaced_between_the_markers_and_nothing_else_changes() {
        let document =
            format!("# Benchmarks\n\nTOON stuff\n\n{START_MARKER}\nold\n{END_MARKER}\n\ntail\n");
        let replaced = replace_section(&document, "new\n");
        assert_eq!(
            replaced,
            format!("# Benchmarks\n\nTOON stuff\n\n{START_MARKER}\nnew\n{END_MARKER}\n\ntail\n")
        );
    }

    #[test]
    fn the_markers_are_appended_when_absent() {
        let replaced = replace_section("# Benchmarks\n", "new");
        assert_eq!(
            replaced,
            format!("# Benchmarks\n\n{START_MARKER}\nnew\n{END_MARKER}\n")
        );
    }
}
