//! Memory under hostile input: what a few small messages built to expand cost the server
//! process (its peak RSS growth, sent with no token on a fresh connection), and what the same
//! bytes cost `serde_json`, `toon-format` and our own decoders in this process (their peak
//! heap, from the counting allocator's high-water mark).
//!
//! Each input gets a fresh server process, so its `VmHWM` (the RSS high-water mark) starts
//! from an idle server; after a warm-up call, `clear_refs` restarts the mark where the kernel
//! allows it. The figures are one run's numbers, written to docs/BENCHMARKS.md; nothing here
//! asserts on them.

use std::io;
use std::path::Path;
use std::thread;
use std::time::{Duration, Instant};

use ide_mcp_protocol::budget::decode_budget;
use ide_mcp_protocol::{json, toon};
use ide_mcp_server::transport::MessageStream;
use ide_mcp_server::{ServerConfig, ServerName};
use serde_json::Value;

use crate::connection::{BenchConnection, BenchError};
use crate::counting_alloc;
use crate::machine::Machine;
use crate::server_process::ServerProcess;
use crate::targets::ours;
use crate::wire::{decode_payload, Wire};

/// The first line of the generated section.
pub const START_MARKER: &str = "<!-- hostile-memory:start -->";
/// The last line of the generated section.
pub const END_MARKER: &str = "<!-- hostile-memory:end -->";

/// How long the server gets to answer (or close) after the input was sent.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(20);

/// How long a server process is left alone before and after the input, for its RSS to settle.
const SETTLE: Duration = Duration::from_millis(200);

const MIB: usize = 1024 * 1024;

/// One hostile input.
#[derive(Debug, Clone)]
pub struct HostileInput {
    /// A short label for the report.
    pub title: &'static str,
    /// The wire it is sent on.
    pub wire: Wire,
    /// The message, without its framing.
    pub payload: Vec<u8>,
    /// A sentence on what bounds its cost, for the report.
    pub bound: &'static str,
}

impl HostileInput {
    /// The bytes sent: a frame `<len>\n<payload>`, or the payload and a newline.
    pub fn on_the_wire(&self) -> Vec<u8> {
        let mut bytes = match self.wire {
            Wire::Frames => format!("{}\n", self.payload.len()).into_bytes(),
            Wire::Lines => Vec::new(),
        };
        bytes.extend_from_slice(&self.payload);
        if self.wire == Wire::Lines {
            bytes.push(b'\n');
        }
        bytes
    }

    /// Whether the payload is TOON (else JSON).
    pub fn is_toon(&self) -> bool {
        self.wire == Wire::Frames
    }
}

/// `items[2000]{<1 MiB key>}:` and 2,000 one-cell rows: every row would copy the key
/// (as in rust/protocol/tests/decode_budget.rs).
pub fn long_key_table() -> Vec<u8> {
    let key = "k".repeat(MIB);
    let mut text = format!("items[2000]{{{key}}}:\n");
    for _ in 0..2000 {
        text.push_str("  1\n");
    }
    text.into_bytes()
}

/// `{"a":[0,0,0,…]}` of at least `len` bytes: 32+ bytes of value for every 2 bytes of input.
pub fn dense_array(len: usize) -> Vec<u8> {
    let mut bytes = b"{\"a\":[0".to_vec();
    while bytes.len() + 2 < len {
        bytes.extend_from_slice(b",0");
    }
    bytes.extend_from_slice(b"]}");
    bytes
}

/// The three inputs of the report, at full size.
pub fn inputs() -> Vec<HostileInput> {
    // Just below the default ceiling, newline included.
    let within_ceiling = ServerConfig::default().inbound_message_ceiling() - 2;
    vec![
        HostileInput {
            title: "TOON table: a 1 MiB key and 2,000 one-cell rows (a frame)",
            wire: Wire::Frames,
            payload: long_key_table(),
            bound: "Decoded naively, every row copies the key (2,000 × 1 MiB); the decode \
                    budget (16 × 1 MiB + 1 MiB) stops ours after about 16 rows, so the server's \
                    growth is about the frame and the budget, not the 2 GiB the value would be.",
        },
        HostileInput {
            title: "NDJSON line `{\"a\":[0,0,…]}`, 32 MiB",
            wire: Wire::Lines,
            payload: dense_array(32 * MIB),
            bound: "The server reads at most the inbound ceiling (2 MiB + 64 KiB by default) \
                    of a line before closing the connection, so it never decodes this; the \
                    decoders show what decoding it would cost.",
        },
        HostileInput {
            title: "the same dense array, just within the inbound ceiling",
            wire: Wire::Lines,
            payload: dense_array(within_ceiling),
            bound: "The line is read whole and decoded; the decode budget (16 × its size + \
                    1 MiB) stops the parse once the array's elements pass it, so the server's \
                    growth stays near the budget rather than the full value.",
        },
    ]
}

/// One decoder's cost on one input.
#[derive(Debug, Clone)]
pub struct DecodeRow {
    /// Which decoder.
    pub decoder: String,
    /// Peak heap above what was live before, in bytes.
    pub peak_bytes: i64,
    /// `decoded`, or the start of its error.
    pub outcome: String,
    /// Wall time of the decode.
    pub elapsed: Duration,
}

/// The server's cost on one input.
#[derive(Debug, Clone)]
pub struct ServerRow {
    /// `VmRSS` just before the input, KiB.
    pub rss_before_kib: u64,
    /// `VmHWM` just before the input (after the reset, if it worked), KiB.
    pub hwm_before_kib: u64,
    /// `VmHWM` once the server answered or closed, KiB.
    pub hwm_after_kib: u64,
    /// `VmRSS` once the server answered or closed, KiB.
    pub rss_after_kib: u64,
    /// Whether writing 5 to `clear_refs` brought `VmHWM` down to `VmRSS`.
    pub hwm_reset: bool,
    /// What the client saw: the error the server replied with, or the close.
    pub answer: String,
    /// Whether a well-behaved client (with the token) was answered afterwards.
    pub still_answers: bool,
}

impl ServerRow {
    /// The peak RSS growth the input caused, KiB.
    pub fn growth_kib(&self) -> u64 {
        self.hwm_after_kib.saturating_sub(self.rss_before_kib)
    }
}

/// One input's results.
#[derive(Debug, Clone)]
pub struct HostileResult {
    /// The input.
    pub title: &'static str,
    /// Its payload size in bytes.
    pub payload_bytes: usize,
    /// Its wire.
    pub wire: Wire,
    /// What bounds it.
    pub bound: &'static str,
    /// The server's figures, or why they are missing.
    pub server: Result<ServerRow, String>,
    /// The decoders' figures.
    pub decoders: Vec<DecodeRow>,
}

/// Measures every input: the server (a fresh process of `executable` each) and the decoders.
pub fn run(executable: &Path, inputs: &[HostileInput]) -> Vec<HostileResult> {
    inputs
        .iter()
        .map(|input| {
            let server = measure_server(executable, input).map_err(|error| error.to_string());
            let decoders = measure_decoders(input);
            HostileResult {
                title: input.title,
                payload_bytes: input.payload.len(),
                wire: input.wire,
                bound: input.bound,
                server,
                decoders,
            }
        })
        .collect()
}

/// `(VmRSS, VmHWM)` of process `pid`, KiB.
fn rss_and_hwm(pid: u32) -> io::Result<(u64, u64)> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    let field = |name: &str| {
        status
            .lines()
            .find_map(|line| line.strip_prefix(name))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|number| number.parse::<u64>().ok())
            .ok_or_else(|| io::Error::other(format!("no `{name}` in /proc/{pid}/status")))
    };
    Ok((field("VmRSS:")?, field("VmHWM:")?))
}

/// One echo call on a fresh, well-behaved connection.
fn well_behaved_call(directory: &Path, wire: Wire) -> Result<(), BenchError> {
    let endpoint = ours::endpoint(directory, ServerName::Code, wire)
        .map_err(|error| BenchError(error.to_string()))?;
    let mut connection = BenchConnection::open(&endpoint)?;
    connection.send_call()?;
    connection.read_reply()?;
    Ok(())
}

/// Starts a server process, sends `input` with no token on a fresh connection and measures
/// the growth of the process's RSS high-water mark.
pub fn measure_server(executable: &Path, input: &HostileInput) -> Result<ServerRow, BenchError> {
    let base = tempfile::tempdir()?;
    let base_arg = base.path().display().to_string();
    let process = ServerProcess::spawn(executable, &["serve", "--base", &base_arg])?;
    let directory = process.announced.clone();
    let pid = process.pid();
    // One-time costs (lazy statics, the first tasks) before the baseline.
    for _ in 0..4 {
        well_behaved_call(&directory, input.wire)?;
    }
    thread::sleep(SETTLE);
    let hwm_reset = std::fs::write(format!("/proc/{pid}/clear_refs"), "5").is_ok() && {
        let (rss, hwm) = rss_and_hwm(pid)?;
        hwm <= rss + 64
    };
    let (rss_before_kib, hwm_before_kib) = rss_and_hwm(pid)?;

    let socket = ours::socket(&directory, ServerName::Code);
    let stream = MessageStream::connect(&socket, input.wire)?;
    stream.set_read_timeout(Some(ANSWER_TIMEOUT))?;
    let (mut reader, mut writer) = stream.split();
    let bytes = input.on_the_wire();
    // The server may close before it has read everything; the writer then stops with an error.
    let sender = thread::spawn(move || writer.send_raw(&bytes).err().map(|e| e.to_string()));
    let answer = match reader.receive_payload() {
        Ok(Some(payload)) => match decode_payload(input.wire, &payload) {
            Ok(message) => describe_reply(&message),
            Err(error) => format!("an undecodable reply ({error})"),
        },
        Ok(None) => "closed the connection".to_owned(),
        Err(error) => format!("closed the connection ({error})"),
    };
    drop(reader);
    let send_error = sender
        .join()
        .unwrap_or(Some("the sender panicked".to_owned()));
    let answer = match send_error {
        Some(error) => format!("{answer}; the write failed: {error}"),
        None => answer,
    };
    thread::sleep(SETTLE);
    let (rss_after_kib, hwm_after_kib) = rss_and_hwm(pid)?;
    let still_answers = well_behaved_call(&directory, input.wire).is_ok();
    drop(process);
    Ok(ServerRow {
        rss_before_kib,
        hwm_before_kib,
        hwm_after_kib,
        rss_after_kib,
        hwm_reset,
        answer,
        still_answers,
    })
}

fn describe_reply(message: &Value) -> String {
    match message.pointer("/error/message").and_then(Value::as_str) {
        Some(text) => format!("replied with the error “{}”", shorten(text)),
        None => format!("replied {}", shorten(&message.to_string())),
    }
}

fn shorten(text: &str) -> String {
    const MAX: usize = 110;
    let line = text.lines().next().unwrap_or_default();
    if line.chars().count() <= MAX {
        line.to_owned()
    } else {
        format!("{}…", line.chars().take(MAX).collect::<String>())
    }
}

/// The peak heap of `decode` above what was live when it started.
fn peak_of<T, E: std::fmt::Display>(
    decoder: &str,
    decode: impl FnOnce() -> Result<T, E>,
) -> DecodeRow {
    counting_alloc::start_counting();
    let started = Instant::now();
    let before = counting_alloc::reset_peak();
    let result = decode();
    let peak_bytes = counting_alloc::peak_bytes() - before;
    let elapsed = started.elapsed();
    let outcome = match &result {
        Ok(_) => "decoded".to_owned(),
        Err(error) => format!("refused: {}", shorten(&error.to_string())),
    };
    drop(result);
    DecodeRow {
        decoder: decoder.to_owned(),
        peak_bytes,
        outcome,
        elapsed,
    }
}

/// The peak heap of the decoders of the input's format on its payload.
pub fn measure_decoders(input: &HostileInput) -> Vec<DecodeRow> {
    let payload = input.payload.as_slice();
    if input.is_toon() {
        vec![
            peak_of("toon-format 0.7.0 `decode::<Value>`", || {
                let text = std::str::from_utf8(payload).map_err(|error| error.to_string())?;
                toon_format::decode::<Value>(text, &toon_format::DecodeOptions::default())
                    .map_err(|error| error.to_string())
            }),
            peak_of("ours: `toon::decode_bytes`, default budget", || {
                toon::decode_bytes(payload, &toon::DecodeOptions::default())
            }),
        ]
    } else {
        vec![
            peak_of("serde_json `from_slice::<Value>`", || {
                serde_json::from_slice::<Value>(payload)
            }),
            peak_of("ours: `json::parse_strict`, default budget", || {
                json::parse_strict(payload)
            }),
        ]
    }
}

fn mib(bytes: f64) -> String {
    let value = bytes / MIB as f64;
    if value >= 100.0 {
        format!("{} MiB", thousands(value.round() as usize))
    } else if value >= 10.0 {
        format!("{value:.1} MiB")
    } else {
        format!("{value:.2} MiB")
    }
}

fn thousands(n: usize) -> String {
    crate::report::thousands(u64::try_from(n).unwrap_or(u64::MAX))
}

/// The Markdown section.
pub fn to_markdown(results: &[HostileResult], machine: &Machine) -> String {
    let config = ServerConfig::default();
    let mut out = String::new();
    out.push_str("## Memory under hostile input\n\n");
    out.push_str(&format!(
        "`ide-mcp-bench hostile-memory` sends each input below, with no token, as the first \
         message of a fresh connection to a fresh server process (`ide-mcp-bench serve`, the \
         default configuration: inbound ceiling {} bytes), and reads the process's `VmRSS` \
         before and `VmHWM` (the RSS high-water mark) once the server has answered or closed; \
         `clear_refs` restarts the mark after the warm-up calls. Then, in the bench process, \
         the counting allocator's high-water mark gives the peak heap of decoding the same \
         bytes with `serde_json`, `toon-format` 0.7.0 and our own decoders (their default \
         decode budget, 16 × the input + 1 MiB). One run's figures, not assertions; RSS \
         counts pages, so small growths are noise.\n\n",
        thousands(config.inbound_message_ceiling())
    ));
    out.push_str(&format!(
        "Machine: {} CPUs ({}), Linux {}; load average {} when the run started.\n",
        machine.cpus, machine.cpu_model, machine.kernel, machine.load_average
    ));
    for (index, result) in results.iter().enumerate() {
        out.push_str(&format!(
            "\n### ({}) {}\n\n{} bytes of payload ({}); the decode budget for it is {}.\n\n",
            index + 1,
            result.title,
            thousands(result.payload_bytes),
            match result.wire {
                Wire::Frames => "TOON frame",
                Wire::Lines => "NDJSON line",
            },
            mib(decode_budget(result.payload_bytes) as f64),
        ));
        out.push_str(
            "| what (server: RSS of its process; decoders: heap in the bench process) | peak growth | × input | outcome |\n|---|---:|---:|---|\n",
        );
        let size = result.payload_bytes.max(1) as f64;
        match &result.server {
            Ok(row) => {
                let growth = row.growth_kib() as f64 * 1024.0;
                out.push_str(&format!(
                    "| server process, `VmHWM` after − `VmRSS` before (RSS {} → {}) | {} | {:.1} | {}; {} |\n",
                    mib(row.rss_before_kib as f64 * 1024.0),
                    mib(row.rss_after_kib as f64 * 1024.0),
                    mib(growth),
                    growth / size,
                    row.answer,
                    if row.still_answers {
                        "a well-behaved client is answered afterwards"
                    } else {
                        "**a well-behaved client is NOT answered afterwards**"
                    },
                ));
                if !row.hwm_reset {
                    out.push_str(&format!(
                        "| (`clear_refs` did not reset `VmHWM`: it was {} before the input) | | | |\n",
                        mib(row.hwm_before_kib as f64 * 1024.0)
                    ));
                }
            }
            Err(error) => out.push_str(&format!(
                "| server process | – | – | not measured: {error} |\n"
            )),
        }
        for row in &result.decoders {
            out.push_str(&format!(
                "| {} | {} | {:.1} | {} ({:.0} ms) |\n",
                row.decoder,
                mib(row.peak_bytes as f64),
                row.peak_bytes as f64 / size,
                row.outcome,
                row.elapsed.as_secs_f64() * 1000.0,
            ));
        }
        out.push_str(&format!("\n{}\n", result.bound));
    }
    out
}
