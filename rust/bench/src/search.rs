//! `ide-mcp-bench search`: `search_text` through the project-files library against the Java
//! search it replaced (`JavaSearchBaseline` in `jvm-glue/src/bench/java`, run in its own JVM,
//! timed inside it after a warm-up) and against `rg`, on one generated tree, for the section
//! "search_text" of docs/BENCHMARKS.md.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use ide_mcp_project_files::search::{search_text, SearchRequest, Stop};
use ide_mcp_project_files::{Credentials, ProjectFiles};

use crate::machine::Machine;

/// The marker lines of the section.
pub const START_MARKER: &str = "<!-- search-bench:start -->";
/// See [`START_MARKER`].
pub const END_MARKER: &str = "<!-- search-bench:end -->";

/// No cap in practice: every engine reports every matching line.
const UNBOUNDED_MATCHES: usize = 1_000_000;
/// The patterns searched, each valid in Rust regex, java.util.regex and rg alike.
pub const PATTERNS: [(&str, &str); 3] = [
    ("a literal", "TODO"),
    (
        "an alternation of identifiers",
        r"parse_error|read_config|open_socket",
    ),
    (
        "classes and a repetition",
        r"\b[a-z]+_[a-z]+\([a-z, ]{8,}\)",
    ),
];

/// What to run.
#[derive(Debug, Clone)]
pub struct SearchPlan {
    /// Files in the generated tree.
    pub files: usize,
    /// Timed runs per engine and pattern (after one warm-up run).
    pub runs: usize,
    /// `java` and the benchmark jar, or why the Java baseline is left out.
    pub java: Result<(PathBuf, PathBuf), String>,
    /// The `rg` executable.
    pub rg: PathBuf,
}

/// The median time of one engine on one pattern, with the matching lines it reported.
#[derive(Debug, Clone)]
pub struct Timing {
    pub median: Duration,
    pub matches: usize,
}

/// One pattern's row.
#[derive(Debug, Clone)]
pub struct PatternRow {
    pub title: &'static str,
    pub pattern: &'static str,
    pub ours: Result<Timing, String>,
    pub rg: Result<Timing, String>,
    pub java: Result<Timing, String>,
}

/// The whole run.
#[derive(Debug, Clone)]
pub struct SearchReport {
    pub files: usize,
    pub bytes: u64,
    pub runs: usize,
    pub rows: Vec<PatternRow>,
    pub machine: Machine,
    pub rg_version: String,
}

/// A small deterministic generator (xorshift), so every run searches the same tree.
struct Generator(u64);

impl Generator {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, bound: usize) -> usize {
        usize::try_from(self.next() % u64::try_from(bound.max(1)).unwrap_or(1)).unwrap_or(0)
    }
}

const WORDS: [&str; 24] = [
    "let", "value", "self", "return", "match", "config", "buffer", "index", "error", "result",
    "parse", "stream", "token", "handler", "count", "offset", "length", "fn", "if", "else",
    "while", "struct", "impl", "pub",
];
const SPECIAL: [&str; 5] = [
    "// TODO: handle the empty case",
    "    return parse_error(line, column);",
    "    let file = read_config(path, options)?;",
    "    open_socket(address, port, timeout);",
    "    // nothing to see here",
];

/// Writes `files` source-like files (about 8 KiB each, 40 per directory) under `root`;
/// returns their total size.
pub fn generate_tree(root: &Path, files: usize) -> std::io::Result<u64> {
    let mut generator = Generator(0x9E37_79B9_7F4A_7C15);
    let mut total = 0;
    for file in 0..files {
        let directory = root.join(format!("module{:03}/part{}", file / 40, file % 3));
        std::fs::create_dir_all(&directory)?;
        let mut text = String::new();
        while text.len() < 8 * 1024 {
            if generator.below(40) == 0 {
                text.push_str(SPECIAL[generator.below(SPECIAL.len())]);
            } else {
                let words = 4 + generator.below(10);
                text.push_str("    ");
                for word in 0..words {
                    if word > 0 {
                        text.push(' ');
                    }
                    text.push_str(WORDS[generator.below(WORDS.len())]);
                }
                text.push(';');
            }
            text.push('\n');
        }
        total += text.len() as u64;
        std::fs::write(directory.join(format!("file{file}.rs")), text)?;
    }
    Ok(total)
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples.get(samples.len() / 2).copied().unwrap_or_default()
}

fn time_ours(files: &ProjectFiles, pattern: &str, runs: usize) -> Result<Timing, String> {
    let request = SearchRequest {
        pattern,
        ignore_case: false,
        glob: None,
        path: "",
        max_matches: UNBOUNDED_MATCHES,
        max_file_bytes: 8 * 1024 * 1024,
        credentials: Credentials::Withhold,
        threads: 0,
    };
    let mut samples = Vec::new();
    let mut matches = 0;
    for run in 0..=runs {
        let started = Instant::now();
        let outcome =
            search_text(files, &request, &Stop::default()).map_err(|error| error.to_string())?;
        if run > 0 {
            samples.push(started.elapsed());
        }
        matches = outcome.matches.len();
    }
    Ok(Timing {
        median: median(samples),
        matches,
    })
}

fn time_rg(rg: &Path, root: &Path, pattern: &str, runs: usize) -> Result<Timing, String> {
    let mut samples = Vec::new();
    let mut matches = 0;
    for run in 0..=runs {
        let started = Instant::now();
        let output = Command::new(rg)
            .args([
                "--no-config",
                "--hidden",
                "--line-number",
                "--no-heading",
                "--",
                pattern,
            ])
            .arg(root)
            .stdin(Stdio::null())
            .output()
            .map_err(|error| format!("cannot run {}: {error}", rg.display()))?;
        if run > 0 {
            samples.push(started.elapsed());
        }
        if !output.status.success() && output.status.code() != Some(1) {
            return Err(format!(
                "rg failed: {}",
                String::from_utf8_lossy(&output.stderr)
            ));
        }
        matches = output.stdout.iter().filter(|&&byte| byte == b'\n').count();
    }
    Ok(Timing {
        median: median(samples),
        matches,
    })
}

/// The Java baseline prints `<matches> <nanoseconds>` per run; the first is the warm-up.
fn time_java(
    java: &Path,
    jar: &Path,
    root: &Path,
    pattern: &str,
    runs: usize,
) -> Result<Timing, String> {
    let output = Command::new(java)
        .arg("-cp")
        .arg(jar)
        .arg("dev.lain.claudejb.mcp.bench.JavaSearchBaseline")
        .arg(root)
        .arg(pattern)
        .arg(UNBOUNDED_MATCHES.to_string())
        .arg((runs + 1).to_string())
        .stdin(Stdio::null())
        .output()
        .map_err(|error| format!("cannot run {}: {error}", java.display()))?;
    if !output.status.success() {
        return Err(format!(
            "the Java baseline failed: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    let text = String::from_utf8_lossy(&output.stdout);
    let mut samples = Vec::new();
    let mut matches = 0;
    for line in text.lines().skip(1) {
        let mut fields = line.split_whitespace();
        let found = fields.next().and_then(|field| field.parse().ok());
        let nanos = fields.next().and_then(|field| field.parse().ok());
        match (found, nanos) {
            (Some(found), Some(nanos)) => {
                matches = found;
                samples.push(Duration::from_nanos(nanos));
            }
            _ => return Err(format!("unexpected output of the Java baseline: {line}")),
        }
    }
    if samples.is_empty() {
        return Err("the Java baseline printed no timing".to_owned());
    }
    Ok(Timing {
        median: median(samples),
        matches,
    })
}

fn rg_version(rg: &Path) -> String {
    Command::new(rg)
        .arg("--version")
        .output()
        .ok()
        .and_then(|output| String::from_utf8(output.stdout).ok())
        .and_then(|text| text.lines().next().map(str::to_owned))
        .unwrap_or_else(|| "rg (version unknown)".to_owned())
}

/// Generates the tree in a temporary directory and times every engine on every pattern.
pub fn run(plan: &SearchPlan) -> Result<SearchReport, String> {
    let machine = Machine::current();
    let directory = tempfile::tempdir().map_err(|error| error.to_string())?;
    let root = directory.path().join("tree");
    let bytes = generate_tree(&root, plan.files).map_err(|error| error.to_string())?;
    let files = ProjectFiles::open(&root).map_err(|error| error.to_string())?;
    let mut rows = Vec::new();
    for (title, pattern) in PATTERNS {
        let java = match &plan.java {
            Ok((java, jar)) => time_java(java, jar, &root, pattern, plan.runs),
            Err(why) => Err(why.clone()),
        };
        rows.push(PatternRow {
            title,
            pattern,
            ours: time_ours(&files, pattern, plan.runs),
            rg: time_rg(&plan.rg, &root, pattern, plan.runs),
            java,
        });
    }
    Ok(SearchReport {
        files: plan.files,
        bytes,
        runs: plan.runs,
        rows,
        machine,
        rg_version: rg_version(&plan.rg),
    })
}

fn millis(timing: &Result<Timing, String>) -> String {
    match timing {
        Ok(timing) => format!(
            "{:.1} ms ({} lines)",
            timing.median.as_secs_f64() * 1e3,
            timing.matches
        ),
        Err(why) => format!("not measured: {why}"),
    }
}

fn ratio(over: &Result<Timing, String>, under: &Result<Timing, String>) -> Option<f64> {
    match (over, under) {
        (Ok(over), Ok(under)) if under.median > Duration::ZERO => {
            Some(over.median.as_secs_f64() / under.median.as_secs_f64())
        }
        _ => None,
    }
}

fn ratio_text(value: Option<f64>) -> String {
    value.map_or_else(|| "—".to_owned(), |value| format!("{value:.2}×"))
}

impl SearchReport {
    /// The Markdown section.
    pub fn to_markdown(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "## `search_text`: the native search against `rg` and the Java version\n"
        );
        let _ = writeln!(
            out,
            "`ide-mcp-bench search` (called by `scripts/bench.sh`) generates a tree of {} source-like files \
             ({:.1} MiB, about 8 KiB each, no ignore files), then runs each pattern {} times after one warm-up \
             with three engines and reports the median: **ours** is `ide_mcp_project_files::search::search_text` \
             in the bench process (confined opens, the credential rule, every match collected; what the JNI \
             method runs, without the JNI hop), **rg** is {} as a process (`rg --no-config --hidden \
             --line-number`, output read through a pipe: its process start is included), **Java** is \
             `JavaSearchBaseline` (the headless host's Java search before this one, `jvm-glue/src/bench/java`), \
             timed inside its JVM after a warm-up run. Every engine reports every matching line; the counts are \
             shown beside the times. One run's figures, not assertions.\n",
            self.files,
            self.bytes as f64 / (1024.0 * 1024.0),
            self.runs,
            self.rg_version,
        );
        let _ = writeln!(
            out,
            "Machine: {} CPUs ({}), Linux {}; load average {} when the run started.\n",
            self.machine.cpus,
            self.machine.cpu_model,
            self.machine.kernel,
            self.machine.load_average
        );
        let _ = writeln!(
            out,
            "| pattern | ours | rg | Java | ours ÷ rg | Java ÷ ours |"
        );
        let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|");
        for row in &self.rows {
            let _ = writeln!(
                out,
                "| {} `{}` | {} | {} | {} | {} | {} |",
                row.title,
                row.pattern.replace('|', "\\|"),
                millis(&row.ours),
                millis(&row.rg),
                millis(&row.java),
                ratio_text(ratio(&row.ours, &row.rg)),
                ratio_text(ratio(&row.java, &row.ours)),
            );
        }
        let worst_rg = self
            .rows
            .iter()
            .map(|row| ratio(&row.ours, &row.rg))
            .collect::<Option<Vec<_>>>()
            .and_then(|ratios| ratios.into_iter().reduce(f64::max));
        let worst_java = self
            .rows
            .iter()
            .map(|row| ratio(&row.java, &row.ours))
            .collect::<Option<Vec<_>>>()
            .and_then(|ratios| ratios.into_iter().reduce(f64::min));
        let verdict = |met: Option<bool>| match met {
            Some(true) => "met",
            Some(false) => "missed",
            None => "not measured",
        };
        let _ = writeln!(out, "\nGoals:\n");
        let _ = writeln!(
            out,
            "- within 1.5× of `rg` on every pattern: **{}** (worst: {})",
            verdict(worst_rg.map(|worst| worst <= 1.5)),
            ratio_text(worst_rg)
        );
        let _ = writeln!(
            out,
            "- at least 5× faster than the Java version on every pattern: **{}** (least: {})",
            verdict(worst_java.map(|least| least >= 5.0)),
            ratio_text(worst_java)
        );
        out
    }
}
