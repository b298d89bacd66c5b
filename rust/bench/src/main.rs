//! `ide-mcp-bench`: runs the server benchmark and prints (or writes) its Markdown section.
//! The `serve*` subcommands are the servers under test, started by the benchmark itself so
//! that each runs in its own process (the Java-handler target is `java -cp <jar>
//! dev.lain.claudejb.mcp.bench.EchoServer`). `toon-report` makes the TOON codec section from
//! criterion's results. `hostile-memory` makes the "memory under hostile input" section.
//! `search` makes the "search_text" section.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand};
use ide_mcp_bench::codec_turns;
use ide_mcp_bench::counting_alloc::start_counting;
use ide_mcp_bench::hostile;
use ide_mcp_bench::machine::raise_open_file_limit;
use ide_mcp_bench::machine::Machine;
use ide_mcp_bench::report::{write_marked_section, write_section};
use ide_mcp_bench::run::{run, JavaLaunch, RunPlan, JVM_WARMUP_CALLS};
use ide_mcp_bench::search;
use ide_mcp_bench::server_process::serve_until_stdin_closes;
use ide_mcp_bench::targets::{jvm, ours, raw, rmcp};
use ide_mcp_bench::toon_report;
use ide_mcp_protocol::contract::READY_LINE_PREFIX;
use ide_mcp_server::ServerConfig;

#[derive(Debug, Parser)]
#[command(
    name = "ide-mcp-bench",
    about = "Benchmarks the ide-mcp servers against a raw socket ping-pong and rmcp"
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// Replace the server-bench section of this Markdown file (e.g. docs/BENCHMARKS.md).
    #[arg(long)]
    write: Option<PathBuf>,
    /// Sequential calls measured per latency row.
    #[arg(long, default_value_t = RunPlan::default().latency_calls)]
    latency_calls: usize,
    /// Seconds each throughput row is measured for.
    #[arg(long, default_value_t = RunPlan::default().throughput_window.as_secs_f64())]
    window_secs: f64,
    /// Idle connections held for the memory rows.
    #[arg(long, default_value_t = RunPlan::default().idle_connections)]
    idle_connections: usize,
    /// The jar with the Java echo server (default: the newest jvm-glue-bench*.jar in
    /// jvm-glue/build/libs, from `gradle --offline benchJar`).
    #[arg(long)]
    jar: Option<PathBuf>,
    /// The `java` that runs the jar.
    #[arg(long, default_value = "java")]
    java: PathBuf,
    /// Sequential calls the Java target gets before it is measured, for the JIT.
    #[arg(long, default_value_t = JVM_WARMUP_CALLS)]
    jvm_warmup_calls: usize,
    /// Leave the Java-handler target out.
    #[arg(long)]
    no_jvm: bool,
    /// Seconds each server set with no clients is watched for wake-ups.
    #[arg(long, default_value_t = RunPlan::default().idle_window.as_secs_f64())]
    idle_secs: f64,
    /// Leave out the instruction counts (callgrind).
    #[arg(long)]
    no_callgrind: bool,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the ide-mcp servers (all four, diagnostics domain) under BASE until stdin closes.
    Serve {
        /// The base directory for the runtime directory.
        #[arg(long)]
        base: PathBuf,
        /// Count live heap blocks, for memory snapshots.
        #[arg(long)]
        count_allocations: bool,
        /// Raise the connection caps (per server, 64 by default, and per peer process, 32) to
        /// hold many idle connections from one process.
        #[arg(long)]
        max_connections_per_server: Option<usize>,
        /// The `socketLookMicros` option (the default when not given); 0 for the instruction
        /// counts, where a look that waits would count its reads.
        #[arg(long)]
        socket_look_micros: Option<u64>,
    },
    /// Run the raw echo socket at SOCKET until stdin closes.
    ServeRaw {
        /// The socket path.
        #[arg(long)]
        socket: PathBuf,
    },
    /// Run the raw echo socket on a Tokio runtime (one task per connection) at SOCKET until
    /// stdin closes.
    ServeRawTokio {
        /// The socket path.
        #[arg(long)]
        socket: PathBuf,
    },
    /// Run the rmcp echo server at SOCKET until stdin closes.
    ServeRmcp {
        /// The socket path.
        #[arg(long)]
        socket: PathBuf,
        /// Count live heap blocks, for memory snapshots.
        #[arg(long)]
        count_allocations: bool,
    },
    /// Print (or write) the TOON codec section from criterion's results of
    /// `cargo bench -p ide-mcp-protocol --bench codec`.
    ToonReport {
        /// Criterion's output directory.
        #[arg(long, default_value = "target/criterion")]
        criterion: PathBuf,
        /// Instruction counts from `scripts/codec-instructions.sh`, for the table beside the
        /// times (without it the section says they were not counted).
        #[arg(long)]
        instructions: Option<PathBuf>,
        /// Ratios from `codec-turns`, for the table of ratios measured in turns (without it
        /// the section says they were not measured).
        #[arg(long)]
        turns: Option<PathBuf>,
        /// Replace the toon-bench section of this Markdown file (e.g. docs/BENCHMARKS.md).
        #[arg(long)]
        write: Option<PathBuf>,
    },
    /// Print the TOON codec's time ratios against serde_json, measured in turns (batches of
    /// ours and serde_json's alternating), for `toon-report --turns`.
    CodecTurns,
    /// Measure the server's peak RSS growth, and the decoders' peak heap, for a few hostile
    /// inputs, and print (or write) the "memory under hostile input" section.
    HostileMemory {
        /// Replace the hostile-memory section of this Markdown file (e.g. docs/BENCHMARKS.md).
        #[arg(long)]
        write: Option<PathBuf>,
    },
    /// Time `search_text` through the project-files library against `rg` and the Java search
    /// it replaced on one generated tree, and print (or write) the "search_text" section.
    Search {
        /// Replace the search-bench section of this Markdown file (e.g. docs/BENCHMARKS.md).
        #[arg(long)]
        write: Option<PathBuf>,
        /// Files in the generated tree.
        #[arg(long, default_value_t = 4000)]
        files: usize,
        /// Timed runs per engine and pattern.
        #[arg(long, default_value_t = 7)]
        runs: usize,
        /// The jar with the Java baseline (default: as for the server bench).
        #[arg(long)]
        jar: Option<PathBuf>,
        /// The `java` that runs it.
        #[arg(long, default_value = "java")]
        java: PathBuf,
        /// Leave the Java baseline out.
        #[arg(long)]
        no_jvm: bool,
        /// The `rg` executable.
        #[arg(long, default_value = "rg")]
        rg: PathBuf,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let outcome = match cli.command {
        Some(Command::Serve {
            base,
            count_allocations,
            max_connections_per_server,
            socket_look_micros,
        }) => serve_ours(
            base,
            count_allocations,
            max_connections_per_server,
            socket_look_micros,
        ),
        Some(Command::ServeRaw { socket }) => serve_raw(socket),
        Some(Command::ServeRawTokio { socket }) => serve_raw_tokio(socket),
        Some(Command::ServeRmcp {
            socket,
            count_allocations,
        }) => serve_rmcp(socket, count_allocations),
        Some(Command::ToonReport {
            criterion,
            instructions,
            turns,
            write,
        }) => toon(
            &criterion,
            instructions.as_deref(),
            turns.as_deref(),
            write.as_deref(),
        ),
        Some(Command::CodecTurns) => {
            let measured = codec_turns::measure_all(codec_turns::ROUNDS, codec_turns::BATCH_TIME);
            print!("{}", codec_turns::to_tsv(&measured));
            Ok(())
        }
        Some(Command::HostileMemory { write }) => hostile_memory(write.as_deref()),
        Some(Command::Search {
            write,
            files,
            runs,
            jar,
            java,
            no_jvm,
            rg,
        }) => {
            let java = if no_jvm {
                Err("left out with `--no-jvm`".to_owned())
            } else {
                jvm::find_jar(jar.as_deref())
                    .map(|jar| (java, jar))
                    .ok_or_else(|| {
                        format!("no benchmark jar (build it with `{}`)", jvm::BUILD_COMMAND)
                    })
            };
            search_bench(
                &search::SearchPlan {
                    files,
                    runs,
                    java,
                    rg,
                },
                write.as_deref(),
            )
        }
        None => benchmark(&cli),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("ide-mcp-bench: {message}");
            ExitCode::FAILURE
        }
    }
}

fn benchmark(cli: &Cli) -> Result<(), String> {
    let plan = RunPlan {
        latency_calls: cli.latency_calls,
        throughput_window: Duration::from_secs_f64(cli.window_secs),
        idle_connections: cli.idle_connections,
        idle_window: Duration::from_secs_f64(cli.idle_secs),
        count_instructions: !cli.no_callgrind,
        java: java_launch(cli),
        ..RunPlan::default()
    };
    // Each idle connection costs a descriptor here and one in the server; the servers inherit
    // the raised limit.
    let wanted = u64::try_from(2 * plan.idle_connections + 256).unwrap_or(u64::MAX);
    let limit = raise_open_file_limit(wanted).map_err(|error| error.to_string())?;
    if limit < wanted {
        return Err(format!(
            "the open-file limit is {limit}, but {wanted} descriptors are needed; lower \
             --idle-connections or raise `ulimit -n`"
        ));
    }
    let executable = std::env::current_exe().map_err(|error| error.to_string())?;
    let report = run(&executable, &plan).map_err(|error| error.to_string())?;
    let section = report.to_markdown();
    println!("{section}");
    if let Some(path) = &cli.write {
        write_section(path, &section)
            .map_err(|error| format!("cannot write {}: {error}", path.display()))?;
        eprintln!("wrote the server-bench section of {}", path.display());
    }
    Ok(())
}

fn java_launch(cli: &Cli) -> Result<JavaLaunch, String> {
    if cli.no_jvm {
        return Err("left out with `--no-jvm`".to_owned());
    }
    let jar = jvm::find_jar(cli.jar.as_deref()).ok_or_else(|| {
        format!(
            "no {}*.jar in {} (build it with `{}`, or pass `--jar`)",
            jvm::JAR_PREFIX,
            jvm::JAR_DIRECTORY,
            jvm::BUILD_COMMAND
        )
    })?;
    Ok(JavaLaunch {
        java: cli.java.clone(),
        jar,
        warmup_calls: cli.jvm_warmup_calls,
    })
}

fn toon(
    criterion: &std::path::Path,
    instructions: Option<&std::path::Path>,
    turns: Option<&std::path::Path>,
    write: Option<&std::path::Path>,
) -> Result<(), String> {
    let mut results = toon_report::read_results(criterion)?;
    type Attach = fn(&mut [toon_report::PayloadResult], &str) -> Result<(), String>;
    let attachments: [(Option<&std::path::Path>, Attach); 2] = [
        (instructions, toon_report::attach_instructions),
        (turns, toon_report::attach_turns),
    ];
    for (path, attach) in attachments {
        let Some(path) = path else { continue };
        let tsv = std::fs::read_to_string(path)
            .map_err(|error| format!("cannot read {}: {error}", path.display()))?;
        attach(&mut results, &tsv).map_err(|error| format!("{}: {error}", path.display()))?;
    }
    let environment =
        toon_report::ToonEnvironment::current(&jvm::repository_root().join("Cargo.lock"));
    let section = toon_report::to_markdown(&results, &environment);
    println!("{section}");
    if let Some(path) = write {
        write_marked_section(
            path,
            toon_report::START_MARKER,
            toon_report::END_MARKER,
            &section,
        )
        .map_err(|error| format!("cannot write {}: {error}", path.display()))?;
        eprintln!("wrote the toon-bench section of {}", path.display());
    }
    Ok(())
}

fn hostile_memory(write: Option<&std::path::Path>) -> Result<(), String> {
    let machine = Machine::current();
    let executable = std::env::current_exe().map_err(|error| error.to_string())?;
    let results = hostile::run(&executable, &hostile::inputs());
    let section = hostile::to_markdown(&results, &machine);
    println!("{section}");
    if let Some(path) = write {
        write_marked_section(path, hostile::START_MARKER, hostile::END_MARKER, &section)
            .map_err(|error| format!("cannot write {}: {error}", path.display()))?;
        eprintln!("wrote the hostile-memory section of {}", path.display());
    }
    Ok(())
}

fn search_bench(plan: &search::SearchPlan, write: Option<&std::path::Path>) -> Result<(), String> {
    let report = search::run(plan)?;
    let section = report.to_markdown();
    println!("{section}");
    if let Some(path) = write {
        write_marked_section(path, search::START_MARKER, search::END_MARKER, &section)
            .map_err(|error| format!("cannot write {}: {error}", path.display()))?;
        eprintln!("wrote the search-bench section of {}", path.display());
    }
    Ok(())
}

fn serve_ours(
    base: PathBuf,
    count_allocations: bool,
    max_connections_per_server: Option<usize>,
    socket_look_micros: Option<u64>,
) -> Result<(), String> {
    if count_allocations {
        start_counting();
    }
    let mut config = ServerConfig::default();
    if let Some(cap) = max_connections_per_server {
        config.max_connections_per_server = cap;
        config.max_connections_per_peer = cap;
    }
    if let Some(micros) = socket_look_micros {
        config.socket_look = std::time::Duration::from_micros(micros);
    }
    let servers = ours::start_with(&base, config).map_err(|error| error.to_string())?;
    let directory = servers
        .directory()
        .ok_or("the servers have no runtime directory")?
        .to_path_buf();
    serve_until_stdin_closes(&format!("{READY_LINE_PREFIX}{}", directory.display()))
        .map_err(|error| error.to_string())?;
    servers.stop().map_err(|error| error.to_string())
}

fn serve_raw(socket: PathBuf) -> Result<(), String> {
    raw::start(&socket).map_err(|error| error.to_string())?;
    let outcome = serve_until_stdin_closes(&format!(
        "raw echo socket listening on {}",
        socket.display()
    ));
    let _ = std::fs::remove_file(&socket);
    outcome.map_err(|error| error.to_string())
}

fn serve_raw_tokio(socket: PathBuf) -> Result<(), String> {
    let runtime = raw::start_tokio(&socket).map_err(|error| error.to_string())?;
    serve_runtime_until_stdin_closes(runtime, &socket, "raw echo socket (Tokio)")
}

fn serve_rmcp(socket: PathBuf, count_allocations: bool) -> Result<(), String> {
    if count_allocations {
        start_counting();
    }
    let runtime = rmcp::start(&socket).map_err(|error| error.to_string())?;
    serve_runtime_until_stdin_closes(runtime, &socket, "rmcp echo server")
}

/// Announces `what` as listening on `socket`, then waits until stdin closes, stops `runtime`
/// and removes the socket.
fn serve_runtime_until_stdin_closes(
    runtime: tokio::runtime::Runtime,
    socket: &Path,
    what: &str,
) -> Result<(), String> {
    let outcome = serve_until_stdin_closes(&format!("{what} listening on {}", socket.display()));
    runtime.shutdown_timeout(Duration::from_secs(1));
    let _ = std::fs::remove_file(socket);
    outcome.map_err(|error| error.to_string())
}
