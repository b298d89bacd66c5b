//! The TOON codec section of docs/BENCHMARKS.md, made from the results criterion leaves in
//! `target/criterion` after `cargo bench -p ide-mcp-protocol --bench codec`
//! (`rust/protocol/benches/codec.rs`), and from the instruction counts of
//! `scripts/codec-instructions.sh` (callgrind), which machine noise does not move.

use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;

use serde::Deserialize;

use crate::codec_turns::{TurnRatios, BATCH_TIME, ROUNDS};
use crate::machine::Machine;

/// The line before the section in docs/BENCHMARKS.md.
pub const START_MARKER: &str = "<!-- toon-bench:start -->";
/// The line after the section in docs/BENCHMARKS.md.
pub const END_MARKER: &str = "<!-- toon-bench:end -->";

/// Goal: our encoder at most this many times `serde_json::to_string`'s time.
pub const ENCODE_VS_JSON_GOAL: f64 = 1.5;
/// Goal: our decoder at most this many times `serde_json::from_str`'s time.
pub const DECODE_VS_JSON_GOAL: f64 = 1.0;
/// Goal: `toon-format` at least this many times our time, encoding and decoding.
pub const VS_TOON_FORMAT_GOAL: f64 = 5.0;

/// The payloads of the codec bench: criterion group, label, what it is.
pub const PAYLOADS: [(&str, &str, &str); 4] = [
    (
        "a_small_request",
        "(a) small request",
        "a JSON-RPC `tools/call` request, 4 arguments",
    ),
    (
        "b_table_100",
        "(b) table 100",
        "a `tools/call` result with a 100-row, 8-column uniform table",
    ),
    ("c_table_10k", "(c) table 10k", "the same with 10,000 rows"),
    (
        "d_nested",
        "(d) nested",
        "a 6-level tree whose siblings differ in shape (list form throughout)",
    ),
];

/// One criterion benchmark: its time per call and the bytes its throughput is counted in.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    /// Criterion's point estimate of one call, in nanoseconds.
    pub ns: f64,
    /// Bytes per call (the text of the format the benchmark reads or writes).
    pub bytes: u64,
}

impl Estimate {
    /// MiB per second.
    pub fn mib_per_second(self) -> f64 {
        self.bytes as f64 / self.ns * 1e9 / (1024.0 * 1024.0)
    }
}

/// Instructions per call of one payload (callgrind), ours and `serde_json`'s.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Instructions {
    /// Our TOON encoder.
    pub ours_encode: u64,
    /// Our TOON decoder.
    pub ours_decode: u64,
    /// `serde_json::to_string`.
    pub json_encode: u64,
    /// `serde_json::from_str`.
    pub json_decode: u64,
}

/// The six benchmarks of one payload.
#[derive(Debug, Clone)]
pub struct PayloadResult {
    /// The criterion group and `codec_ops` payload name, e.g. `a_small_request`.
    pub group: &'static str,
    /// The label, e.g. `(a) small request`.
    pub label: &'static str,
    /// What the payload is.
    pub what: &'static str,
    /// Our TOON encoder.
    pub ours_encode: Estimate,
    /// Our TOON decoder.
    pub ours_decode: Estimate,
    /// `serde_json::to_string`.
    pub json_encode: Estimate,
    /// `serde_json::from_str`.
    pub json_decode: Estimate,
    /// `toon-format`'s encoder.
    pub their_encode: Estimate,
    /// `toon-format`'s decoder.
    pub their_decode: Estimate,
    /// Instructions per call, when they were counted in this run.
    pub instructions: Option<Instructions>,
    /// The time ratios against `serde_json` measured in turns, when measured in this run.
    pub turns: Option<TurnRatios>,
}

impl PayloadResult {
    fn encode_vs_json(&self) -> Option<f64> {
        Some(self.ours_encode.ns / self.json_encode.ns)
    }

    fn decode_vs_json(&self) -> Option<f64> {
        Some(self.ours_decode.ns / self.json_decode.ns)
    }

    fn their_encode_vs_ours(&self) -> Option<f64> {
        Some(self.their_encode.ns / self.ours_encode.ns)
    }

    fn their_decode_vs_ours(&self) -> Option<f64> {
        Some(self.their_decode.ns / self.ours_decode.ns)
    }

    fn encode_instructions_vs_json(&self) -> Option<f64> {
        self.instructions
            .map(|counts| counts.ours_encode as f64 / counts.json_encode.max(1) as f64)
    }

    fn decode_instructions_vs_json(&self) -> Option<f64> {
        self.instructions
            .map(|counts| counts.ours_decode as f64 / counts.json_decode.max(1) as f64)
    }

    fn encode_turns_vs_json(&self) -> Option<f64> {
        self.turns.map(|turns| turns.encode)
    }

    fn decode_turns_vs_json(&self) -> Option<f64> {
        self.turns.map(|turns| turns.decode)
    }
}

/// Adds the ratios of `ide-mcp-bench codec-turns` (lines of `payload direction ratio`,
/// tab-separated) to `results`; every payload must have both.
pub fn attach_turns(results: &mut [PayloadResult], tsv: &str) -> Result<(), String> {
    let ratios = PayloadTable::read(tsv, ["direction", "ratio"], |ratio| {
        ratio
            .parse()
            .ok()
            .filter(|ratio: &f64| ratio.is_finite() && *ratio > 0.0)
    })?;
    for result in results {
        let get = |direction| ratios.get(result.group, direction, "ratio in turns");
        result.turns = Some(TurnRatios {
            encode: get("encode")?,
            decode: get("decode")?,
        });
    }
    Ok(())
}

/// Adds the counts of `scripts/codec-instructions.sh` (lines of `payload operation count`,
/// tab-separated) to `results`; every payload must have all four operations.
pub fn attach_instructions(results: &mut [PayloadResult], tsv: &str) -> Result<(), String> {
    let counts = PayloadTable::read(tsv, ["operation", "count"], |count| count.parse().ok())?;
    for result in results {
        let get = |operation| counts.get(result.group, operation, "instruction count");
        result.instructions = Some(Instructions {
            ours_encode: get("encode")?,
            ours_decode: get("decode")?,
            json_encode: get("json-encode")?,
            json_decode: get("json-decode")?,
        });
    }
    Ok(())
}

/// Figures by payload and by what they are of, from lines of `payload<TAB>key<TAB>value`.
struct PayloadTable<T>(std::collections::HashMap<(String, String), T>);

impl<T: Copy> PayloadTable<T> {
    /// Every line of `tsv` but blank ones; `names` are the key's and the value's, for errors.
    fn read(
        tsv: &str,
        names: [&str; 2],
        parse: impl Fn(&str) -> Option<T>,
    ) -> Result<PayloadTable<T>, String> {
        let [key_name, value_name] = names;
        let mut table = std::collections::HashMap::new();
        for line in tsv.lines().filter(|line| !line.trim().is_empty()) {
            let fields: Vec<&str> = line.split('\t').collect();
            let [payload, key, value] = fields.as_slice() else {
                return Err(format!(
                    "not `payload<TAB>{key_name}<TAB>{value_name}`: {line:?}"
                ));
            };
            let value =
                parse(value.trim()).ok_or_else(|| format!("not a {value_name}: {line:?}"))?;
            table.insert((payload.to_string(), key.to_string()), value);
        }
        Ok(PayloadTable(table))
    }

    /// The figure of `payload` for `key`; `what` names it in the error when it is missing.
    fn get(&self, payload: &str, key: &str, what: &str) -> Result<T, String> {
        self.0
            .get(&(payload.to_owned(), key.to_owned()))
            .copied()
            .ok_or_else(|| format!("no {what} for {payload} {key}"))
    }
}

#[derive(Deserialize)]
struct EstimatesFile {
    mean: PointEstimate,
    slope: Option<PointEstimate>,
}

#[derive(Deserialize)]
struct PointEstimate {
    point_estimate: f64,
}

#[derive(Deserialize)]
struct BenchmarkFile {
    throughput: Option<ThroughputFile>,
}

#[derive(Deserialize)]
struct ThroughputFile {
    #[serde(rename = "Bytes")]
    bytes: Option<u64>,
}

/// Reads one benchmark's latest estimate: criterion's own point estimate (the slope of its
/// linear fit, or the mean when it sampled flat), the figure it prints as `time:`.
pub fn read_estimate(criterion: &Path, id: &str) -> Result<Estimate, String> {
    let directory = criterion.join(id).join("new");
    let read = |name: &str| {
        let path = directory.join(name);
        std::fs::read_to_string(&path).map_err(|error| {
            format!(
                "cannot read {}: {error} (run `cargo bench -p ide-mcp-protocol --bench codec` first)",
                path.display()
            )
        })
    };
    let estimates: EstimatesFile = serde_json::from_str(&read("estimates.json")?)
        .map_err(|error| format!("{id}/new/estimates.json: {error}"))?;
    let benchmark: BenchmarkFile = serde_json::from_str(&read("benchmark.json")?)
        .map_err(|error| format!("{id}/new/benchmark.json: {error}"))?;
    let bytes = benchmark
        .throughput
        .and_then(|throughput| throughput.bytes)
        .ok_or_else(|| format!("{id} has no byte throughput"))?;
    let ns = estimates
        .slope
        .map_or(estimates.mean.point_estimate, |slope| slope.point_estimate);
    Ok(Estimate { ns, bytes })
}

/// Reads every payload's six benchmarks from `criterion` (usually `target/criterion`).
pub fn read_results(criterion: &Path) -> Result<Vec<PayloadResult>, String> {
    PAYLOADS
        .iter()
        .map(|&(group, label, what)| {
            let get = |id: &str| read_estimate(criterion, &format!("{group}/{id}"));
            Ok(PayloadResult {
                group,
                label,
                what,
                ours_encode: get("toon_encode/ours")?,
                ours_decode: get("toon_decode/ours")?,
                json_encode: get("json_encode/serde_json")?,
                json_decode: get("json_decode/serde_json")?,
                their_encode: get("toon_encode/toon-format")?,
                their_decode: get("toon_decode/toon-format")?,
                instructions: None,
                turns: None,
            })
        })
        .collect()
}

/// Where the codec bench ran.
#[derive(Debug, Clone)]
pub struct ToonEnvironment {
    /// CPUs and kernel.
    pub machine: Machine,
    /// Total memory in GiB, when known.
    pub memory_gib: Option<f64>,
    /// `rustc --version`.
    pub rustc: String,
    /// The criterion version in Cargo.lock.
    pub criterion: String,
    /// The toon-format version in Cargo.lock.
    pub toon_format: String,
}

impl ToonEnvironment {
    /// This machine, the `rustc` on the PATH, and the versions in `cargo_lock`.
    pub fn current(cargo_lock: &Path) -> ToonEnvironment {
        let lock = std::fs::read_to_string(cargo_lock).unwrap_or_default();
        let memory_gib = std::fs::read_to_string("/proc/meminfo")
            .ok()
            .and_then(|info| {
                info.lines()
                    .find_map(|line| line.strip_prefix("MemTotal:"))
                    .and_then(|rest| {
                        rest.trim()
                            .trim_end_matches("kB")
                            .trim()
                            .parse::<f64>()
                            .ok()
                    })
            })
            .map(|kib| kib / (1024.0 * 1024.0));
        let rustc = Command::new("rustc")
            .arg("--version")
            .output()
            .ok()
            .filter(|output| output.status.success())
            .map(|output| String::from_utf8_lossy(&output.stdout).trim().to_owned())
            .unwrap_or_else(|| "rustc (version unknown)".to_owned());
        ToonEnvironment {
            machine: Machine::current(),
            memory_gib,
            rustc,
            criterion: locked_version(&lock, "criterion").unwrap_or_else(|| "?".to_owned()),
            toon_format: locked_version(&lock, "toon-format").unwrap_or_else(|| "?".to_owned()),
        }
    }
}

/// The version of package `name` in a Cargo.lock.
pub fn locked_version(lock: &str, name: &str) -> Option<String> {
    let wanted = format!("name = \"{name}\"");
    let mut lines = lock.lines();
    while let Some(line) = lines.next() {
        if line.trim() == wanted {
            let version = lines.next()?.trim().strip_prefix("version = \"")?;
            return Some(version.trim_end_matches('"').to_owned());
        }
    }
    None
}

/// The Markdown section, markers excluded.
pub fn to_markdown(results: &[PayloadResult], environment: &ToonEnvironment) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "## TOON codec\n");
    let _ = writeln!(
        out,
        "`rust/protocol/benches/codec.rs` times the TOON codec (`ide_mcp_protocol::toon`) against \
         `serde_json` on the same `serde_json::Value` (the JSON baseline every message would \
         otherwise pay) and against the `toon-format` crate {} (another implementation of TOON \
         v4.4), on four payloads:\n",
        environment.toon_format
    );
    let _ = writeln!(out, "| Payload | What | TOON bytes | JSON bytes |");
    let _ = writeln!(out, "|---|---|---:|---:|");
    for result in results {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} |",
            result.label,
            result.what,
            thousands(result.ours_encode.bytes as f64),
            thousands(result.json_encode.bytes as f64)
        );
    }
    let _ = writeln!(
        out,
        "\nEncode means `Value` → text (a fresh `String` per call, for both codecs); decode means \
         text → `Value`. Throughput is per byte of each format's own text, so MiB/s figures of \
         TOON and JSON columns are not comparable with each other; the ratios compare **times** \
         for the same value.\n"
    );
    let machine = &environment.machine;
    let memory = environment
        .memory_gib
        .map_or(String::new(), |gib| format!(", {gib:.0} GiB RAM"));
    let _ = writeln!(
        out,
        "Machine: {} CPUs ({}){memory}, Linux {}, {}, the `bench` profile (release + debug \
         info). Criterion {}, 1.5 s measurement per benchmark (10 samples for the 10k table, 30 \
         otherwise). Each time is criterion's point estimate for one call (the slope of its \
         linear fit) from one run; on a shared 2-core machine, runs differ by up to ~10 %, and \
         more when other work is running: the load average was {} when this section was \
         written, right after the run (the benchmark itself accounts for about 1).\n",
        machine.cpus,
        machine.cpu_model,
        machine.kernel,
        environment.rustc,
        environment.criterion,
        machine.load_average
    );
    let _ = writeln!(out, "### Throughput (MiB/s) and time per call\n");
    let _ = writeln!(
        out,
        "| Payload | ours encode | ours decode | serde_json to_string | serde_json from_str | \
         toon-format encode | toon-format decode |"
    );
    let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|---:|");
    for result in results {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} |",
            result.label,
            speed(result.ours_encode),
            speed(result.ours_decode),
            speed(result.json_encode),
            speed(result.json_decode),
            speed(result.their_encode),
            speed(result.their_decode)
        );
    }
    let _ = writeln!(out, "\n### Ratios (time, same value) and goals\n");
    let _ = writeln!(
        out,
        "| Payload | encode: ours / serde_json (goal ≤ {ENCODE_VS_JSON_GOAL}) | decode: ours / \
         serde_json (goal ≤ {DECODE_VS_JSON_GOAL:.1}) | encode: toon-format / ours (goal ≥ \
         {VS_TOON_FORMAT_GOAL}) | decode: toon-format / ours (goal ≥ {VS_TOON_FORMAT_GOAL}) |"
    );
    let _ = writeln!(out, "|---|---:|---:|---:|---:|");
    for result in results {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} |",
            result.label,
            at_most(result.encode_vs_json(), ENCODE_VS_JSON_GOAL),
            at_most(result.decode_vs_json(), DECODE_VS_JSON_GOAL),
            at_least(result.their_encode_vs_ours(), VS_TOON_FORMAT_GOAL),
            at_least(result.their_decode_vs_ours(), VS_TOON_FORMAT_GOAL)
        );
    }
    turns_table(&mut out, results);
    instruction_table(&mut out, results);
    let _ = writeln!(out, "\nGoals in this run:\n");
    for goal in GOALS {
        let _ = writeln!(out, "- {}: {}.", goal.text, goal.summary(results));
    }
    let _ = writeln!(
        out,
        "\nReproduce: `scripts/bench.sh`, or just this part (from the repository root; about 5 \
         minutes):\n\n```sh\ncargo bench -p ide-mcp-protocol --bench codec\n\
         cargo run --release -p ide-mcp-bench -- codec-turns > target/codec-turns.tsv\n\
         scripts/codec-instructions.sh > target/codec-instructions.tsv\ncargo run --release \
         -p ide-mcp-bench -- toon-report --turns target/codec-turns.tsv --instructions \
         target/codec-instructions.tsv --write docs/BENCHMARKS.md\n```"
    );
    out
}

/// The time ratios measured in turns, which a change in the machine's speed during the run
/// moves less than criterion's ratios.
fn turns_table(out: &mut String, results: &[PayloadResult]) {
    let _ = writeln!(out, "\n### Ratios measured in turns\n");
    if results.iter().any(|result| result.turns.is_none()) {
        let _ = writeln!(
            out,
            "Not measured in this run (`ide-mcp-bench codec-turns` did not run)."
        );
        return;
    }
    let _ = writeln!(
        out,
        "`ide-mcp-bench codec-turns`, right after criterion: for each payload, {ROUNDS} rounds in \
         which a batch of about {} ms of our encode and one of `serde_json::to_string` take \
         turns (and the same for our decode and `serde_json::from_str`), on the same value and \
         text as the benchmark; each ratio is the median of the rounds' ratios. Criterion \
         measures each function for its own seconds one after the other, so a change in the \
         machine's speed between them moves its ratios; batches a few milliseconds apart see \
         the same machine.\n",
        BATCH_TIME.as_millis()
    );
    let _ = writeln!(
        out,
        "| Payload | encode: ours / serde_json (goal ≤ {ENCODE_VS_JSON_GOAL}) | decode: ours / \
         serde_json (goal ≤ {DECODE_VS_JSON_GOAL:.1}) |"
    );
    let _ = writeln!(out, "|---|---:|---:|");
    for result in results {
        let _ = writeln!(
            out,
            "| {} | {} | {} |",
            result.label,
            at_most(result.encode_turns_vs_json(), ENCODE_VS_JSON_GOAL),
            at_most(result.decode_turns_vs_json(), DECODE_VS_JSON_GOAL),
        );
    }
}

/// The instruction counts beside the times: the figures a regression shows in, run to run.
fn instruction_table(out: &mut String, results: &[PayloadResult]) {
    let _ = writeln!(out, "\n### Instructions per call (callgrind)\n");
    if results.iter().any(|result| result.instructions.is_none()) {
        let _ = writeln!(
            out,
            "Not counted in this run (`scripts/codec-instructions.sh` did not run, or valgrind \
             is missing)."
        );
        return;
    }
    let _ = writeln!(
        out,
        "`scripts/codec-instructions.sh` runs each operation of `rust/protocol/examples/\
         codec_ops.rs` (2,000 calls for (a), 50 for (b), 3 for (c), 10 for (d)) under callgrind, \
         counting only its loop, and divides by the calls: the same value and text as the \
         benchmark, the decoded value's drop included, for both codecs. The count is exact for a \
         given binary and does not move with the load; it is not a time (cache misses and \
         branch mispredictions cost time but no instructions), so both appear.\n"
    );
    let _ = writeln!(
        out,
        "| Payload | ours encode | serde_json to_string | encode: ours / serde_json | ours \
         decode | serde_json from_str | decode: ours / serde_json |"
    );
    let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|---:|");
    for result in results {
        let Some(counts) = result.instructions else {
            continue;
        };
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} |",
            result.label,
            thousands(counts.ours_encode as f64),
            thousands(counts.json_encode as f64),
            at_most(result.encode_instructions_vs_json(), ENCODE_VS_JSON_GOAL),
            thousands(counts.ours_decode as f64),
            thousands(counts.json_decode as f64),
            at_most(result.decode_instructions_vs_json(), DECODE_VS_JSON_GOAL),
        );
    }
}

/// One goal of the ratios table.
struct Goal {
    text: &'static str,
    /// `None` when the figure was not measured in this run.
    ratio: fn(&PayloadResult) -> Option<f64>,
    /// The ratio must be at most the bound (else at least).
    at_most: bool,
    bound: f64,
    digits: usize,
}

const GOALS: [Goal; 8] = [
    Goal {
        text: "encode ≤ 1.5× `serde_json::to_string`",
        ratio: PayloadResult::encode_vs_json,
        at_most: true,
        bound: ENCODE_VS_JSON_GOAL,
        digits: 2,
    },
    Goal {
        text: "decode ≤ 1.0× `serde_json::from_str`",
        ratio: PayloadResult::decode_vs_json,
        at_most: true,
        bound: DECODE_VS_JSON_GOAL,
        digits: 2,
    },
    Goal {
        text: "encode ≥ 5× faster than `toon-format`",
        ratio: PayloadResult::their_encode_vs_ours,
        at_most: false,
        bound: VS_TOON_FORMAT_GOAL,
        digits: 1,
    },
    Goal {
        text: "decode ≥ 5× faster than `toon-format`",
        ratio: PayloadResult::their_decode_vs_ours,
        at_most: false,
        bound: VS_TOON_FORMAT_GOAL,
        digits: 1,
    },
    Goal {
        text: "in turns, encode ≤ 1.5× `serde_json::to_string`",
        ratio: PayloadResult::encode_turns_vs_json,
        at_most: true,
        bound: ENCODE_VS_JSON_GOAL,
        digits: 2,
    },
    Goal {
        text: "in turns, decode ≤ 1.0× `serde_json::from_str`",
        ratio: PayloadResult::decode_turns_vs_json,
        at_most: true,
        bound: DECODE_VS_JSON_GOAL,
        digits: 2,
    },
    Goal {
        text: "by instructions (the stable figure), encode ≤ 1.5× `serde_json::to_string`",
        ratio: PayloadResult::encode_instructions_vs_json,
        at_most: true,
        bound: ENCODE_VS_JSON_GOAL,
        digits: 2,
    },
    Goal {
        text: "by instructions, decode ≤ 1.0× `serde_json::from_str`",
        ratio: PayloadResult::decode_instructions_vs_json,
        at_most: true,
        bound: DECODE_VS_JSON_GOAL,
        digits: 2,
    },
];

impl Goal {
    fn met(&self, value: f64) -> bool {
        if self.at_most {
            value <= self.bound
        } else {
            value >= self.bound
        }
    }

    /// `met on (a), (b); **missed** on (c) (1.55×)`.
    fn summary(&self, results: &[PayloadResult]) -> String {
        let measured: Vec<(&PayloadResult, f64)> = results
            .iter()
            .filter_map(|result| (self.ratio)(result).map(|value| (result, value)))
            .collect();
        if measured.is_empty() {
            return "not measured in this run".to_owned();
        }
        let (met, missed): (Vec<_>, Vec<_>) =
            measured.iter().partition(|(_, value)| self.met(*value));
        let name = |result: &PayloadResult| result.label.split(' ').next().unwrap_or("");
        let digits = self.digits;
        let missed_list = missed
            .iter()
            .map(|(result, value)| format!("{} ({value:.digits$}×)", name(result)))
            .collect::<Vec<_>>()
            .join(", ");
        if missed.is_empty() {
            "met on every payload".to_owned()
        } else if met.is_empty() {
            format!("**missed** on every payload: {missed_list}")
        } else {
            let met_list = met
                .iter()
                .map(|(result, _)| name(result))
                .collect::<Vec<_>>();
            format!(
                "met on {}; **missed** on {missed_list}",
                met_list.join(", ")
            )
        }
    }
}

/// `1,062 (145 ns)`.
fn speed(estimate: Estimate) -> String {
    format!(
        "{} ({})",
        thousands(estimate.mib_per_second()),
        duration(estimate.ns)
    )
}

/// Three significant digits in ns, µs, ms or s.
fn duration(ns: f64) -> String {
    let (value, unit) = if ns < 1e3 {
        (ns, "ns")
    } else if ns < 1e6 {
        (ns / 1e3, "µs")
    } else if ns < 1e9 {
        (ns / 1e6, "ms")
    } else {
        (ns / 1e9, "s")
    };
    let digits = if value >= 100.0 {
        0
    } else if value >= 10.0 {
        1
    } else {
        2
    };
    format!("{value:.digits$} {unit}")
}

/// A whole number with thousands separators (a negative one as 0).
fn thousands(value: f64) -> String {
    crate::report::thousands(value.max(0.0).round() as u64)
}

/// Near the goal: within 5 % of it.
const JUST: f64 = 0.05;

fn at_most(ratio: Option<f64>, goal: f64) -> String {
    let Some(ratio) = ratio else {
        return "–".to_owned();
    };
    if ratio <= goal {
        format!("{ratio:.2} ✔")
    } else if ratio <= goal * (1.0 + JUST) {
        format!("{ratio:.2} ✘ (just)")
    } else {
        format!("{ratio:.2} ✘")
    }
}

fn at_least(ratio: Option<f64>, goal: f64) -> String {
    let Some(ratio) = ratio else {
        return "–".to_owned();
    };
    if ratio >= goal {
        format!("{ratio:.1} ✔")
    } else if ratio >= goal * (1.0 - JUST) {
        format!("{ratio:.1} ✘ (just)")
    } else {
        format!("{ratio:.1} ✘")
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
pub(crate) mod tests {
    use super::*;

    /// Every payload with the same time for each of its six benchmarks.
    pub(crate) fn results_of_equal_times() -> Vec<PayloadResult> {
        let estimate = Estimate {
            ns: 100.0,
            bytes: 100,
        };
        PAYLOADS
            .iter()
            .map(|&(group, label, what)| PayloadResult {
                group,
                label,
                what,
                ours_encode: estimate,
                ours_decode: estimate,
                json_encode: estimate,
                json_decode: estimate,
                their_encode: estimate,
                their_decode: estimate,
                instructions: None,
                turns: None,
            })
            .collect()
    }

    #[test]
    fn ratios_in_turns_are_tabled_and_judged() {
        let mut results = results_of_equal_times();
        let environment = ToonEnvironment {
            machine: Machine::current(),
            memory_gib: None,
            rustc: "rustc 1.95.0".to_owned(),
            criterion: "0.7.0".to_owned(),
            toon_format: "0.7.0".to_owned(),
        };
        let markdown = to_markdown(&results, &environment);
        assert!(markdown.contains("Not measured in this run (`ide-mcp-bench codec-turns`"));
        assert!(markdown.contains(
            "- in turns, decode ≤ 1.0× `serde_json::from_str`: not measured in this run."
        ));
        let mut tsv = String::new();
        for (group, _, _) in PAYLOADS {
            let decode = if group == "d_nested" { 1.04 } else { 0.8 };
            tsv.push_str(&format!(
                "{group}\tencode\t1.2\n{group}\tdecode\t{decode}\n"
            ));
        }
        attach_turns(&mut results, &tsv).unwrap();
        let markdown = to_markdown(&results, &environment);
        assert!(
            markdown.contains("| (a) small request | 1.20 ✔ | 0.80 ✔ |"),
            "{markdown}"
        );
        assert!(
            markdown.contains("| (d) nested | 1.20 ✔ | 1.04 ✘ (just) |"),
            "{markdown}"
        );
        assert!(markdown
            .contains("- in turns, encode ≤ 1.5× `serde_json::to_string`: met on every payload."));
        assert!(markdown.contains(
            "- in turns, decode ≤ 1.0× `serde_json::from_str`: met on (a), (b), (c); **missed** \
             on (d) (1.04×)"
        ));
        let error = attach_turns(&mut results, "a_small_request\tencode\t1.2\n").unwrap_err();
        assert_eq!(error, "no ratio in turns for a_small_request decode");
        let error = attach_turns(&mut results, "a_small_request\tencode\tNaN\n").unwrap_err();
        assert!(error.starts_with("not a ratio"), "{error}");
    }

    fn write_bench(root: &Path, id: &str, ns: f64, bytes: u64) {
        let directory = root.join(id).join("new");
        std::fs::create_dir_all(&directory).unwrap();
        let point = |value: f64| format!("{{\"point_estimate\":{value},\"standard_error\":1.0}}");
        std::fs::write(
            directory.join("estimates.json"),
            format!(
                "{{\"mean\":{},\"median\":{},\"median_abs_dev\":{},\"slope\":{},\"std_dev\":{}}}",
                point(ns * 1.1),
                point(ns * 0.9),
                point(1.0),
                point(ns),
                point(1.0)
            ),
        )
        .unwrap();
        std::fs::write(
            directory.join("benchmark.json"),
            format!("{{\"group_id\":\"x\",\"throughput\":{{\"Bytes\":{bytes}}}}}"),
        )
        .unwrap();
    }

    #[test]
    fn the_section_is_made_from_criterion_estimates() {
        let root = tempfile::tempdir().unwrap();
        for (group, _, _) in PAYLOADS {
            write_bench(
                root.path(),
                &format!("{group}/toon_encode/ours"),
                200.0,
                163,
            );
            write_bench(
                root.path(),
                &format!("{group}/toon_decode/ours"),
                1_000.0,
                163,
            );
            write_bench(
                root.path(),
                &format!("{group}/json_encode/serde_json"),
                100.0,
                165,
            );
            write_bench(
                root.path(),
                &format!("{group}/json_decode/serde_json"),
                1_000.0,
                165,
            );
            write_bench(
                root.path(),
                &format!("{group}/toon_encode/toon-format"),
                2_000.0,
                163,
            );
            write_bench(
                root.path(),
                &format!("{group}/toon_decode/toon-format"),
                4_990.0,
                163,
            );
        }
        let results = read_results(root.path()).unwrap();
        assert_eq!(results.len(), 4);
        assert_eq!(results[0].ours_encode.ns, 200.0, "the slope, not the mean");
        let environment = ToonEnvironment {
            machine: Machine::current(),
            memory_gib: Some(23.0),
            rustc: "rustc 1.95.0".to_owned(),
            criterion: "0.7.0".to_owned(),
            toon_format: "0.7.0".to_owned(),
        };
        let markdown = to_markdown(&results, &environment);
        assert!(markdown.contains("| (a) small request | 777 (200 ns) | 155 (1.00 µs) |"));
        assert!(
            markdown.contains("| (a) small request | 2.00 ✘ | 1.00 ✔ | 10.0 ✔ | 5.0 ✘ (just) |")
        );
        assert!(markdown
            .contains("- encode ≤ 1.5× `serde_json::to_string`: **missed** on every payload"));
        assert!(markdown.contains("- decode ≤ 1.0× `serde_json::from_str`: met on every payload."));
        assert!(markdown.contains("Not counted in this run"));
        assert!(markdown.contains(
            "- by instructions, decode ≤ 1.0× `serde_json::from_str`: not measured in this run."
        ));

        let mut results = results;
        let mut tsv = String::new();
        for (group, _, _) in PAYLOADS {
            for (operation, count) in [
                ("encode", 4_742),
                ("decode", 18_234),
                ("json-encode", 3_518),
                ("json-decode", 13_886),
            ] {
                tsv.push_str(&format!("{group}\t{operation}\t{count}\n"));
            }
        }
        attach_instructions(&mut results, &tsv).unwrap();
        let markdown = to_markdown(&results, &environment);
        assert!(
            markdown.contains(
                "| (a) small request | 4,742 | 3,518 | 1.35 ✔ | 18,234 | 13,886 | 1.31 ✘ |"
            ),
            "{markdown}"
        );
        assert!(markdown.contains(
            "- by instructions (the stable figure), encode ≤ 1.5× `serde_json::to_string`: met on \
             every payload."
        ));
        assert!(markdown.contains(
            "- by instructions, decode ≤ 1.0× `serde_json::from_str`: **missed** on every \
             payload: (a) (1.31×)"
        ));
    }

    #[test]
    fn a_missing_instruction_count_is_named() {
        let root = tempfile::tempdir().unwrap();
        for (group, _, _) in PAYLOADS {
            for id in [
                "toon_encode/ours",
                "toon_decode/ours",
                "json_encode/serde_json",
                "json_decode/serde_json",
                "toon_encode/toon-format",
                "toon_decode/toon-format",
            ] {
                write_bench(root.path(), &format!("{group}/{id}"), 100.0, 100);
            }
        }
        let mut results = read_results(root.path()).unwrap();
        let error = attach_instructions(&mut results, "a_small_request\tencode\t10\n").unwrap_err();
        assert_eq!(error, "no instruction count for a_small_request decode");
        let error = attach_instructions(&mut results, "a_small_request encode 10\n").unwrap_err();
        assert!(
            error.starts_with("not `payload<TAB>operation<TAB>count`"),
            "{error}"
        );
    }

    #[test]
    fn a_missing_benchmark_is_named() {
        let root = tempfile::tempdir().unwrap();
        let error = read_results(root.path()).unwrap_err();
        assert!(
            error.contains("a_small_request/toon_encode/ours"),
            "{error}"
        );
    }

    #[test]
    fn versions_come_from_the_lock_file() {
        let lock = "[[package]]\nname = \"criterion\"\nversion = \"0.7.0\"\n";
        assert_eq!(locked_version(lock, "criterion").as_deref(), Some("0.7.0"));
        assert_eq!(locked_version(lock, "toon-format"), None);
    }

    #[test]
    fn durations_have_three_significant_digits() {
        assert_eq!(duration(187.2), "187 ns");
        assert_eq!(duration(1_140.0), "1.14 µs");
        assert_eq!(duration(72_300.0), "72.3 µs");
        assert_eq!(duration(1_512_782.0), "1.51 ms");
        assert_eq!(thousands(1062.4), "1,062");
        assert_eq!(thousands(831.0), "831");
    }
}
