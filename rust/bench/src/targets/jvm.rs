//! Our servers hosted by a JVM, as a plugin runs them: `IdeMcpServers` started from Java with
//! the `diagnostics/echo` tool implemented in Java (`dev.lain.claudejb.mcp.bench.EchoServer`),
//! so every call crosses JNI into the JVM and back. The echo server is in its own jar,
//! `jvm-glue-bench.jar` (Gradle's `benchJar`, from `jvm-glue/src/bench`), whose manifest puts
//! the shipped `jvm-glue.jar` beside it on the class path.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The Java main class the benchmark starts.
pub const MAIN_CLASS: &str = "dev.lain.claudejb.mcp.bench.EchoServer";

/// Where Gradle puts the jars, relative to the repository root.
pub const JAR_DIRECTORY: &str = "jvm-glue/build/libs";

/// How the benchmark's jar is named (`jvm-glue-bench.jar`, or with a version).
pub const JAR_PREFIX: &str = "jvm-glue-bench";

/// The command that builds the benchmark's jar and the jar it runs against.
pub const BUILD_COMMAND: &str = "gradle --offline benchJar";

/// The repository root this crate was built from.
pub fn repository_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The jar to run: `explicit` when given (whether or not it exists, so a wrong path is
/// reported as such), else the newest [`JAR_PREFIX`]`*.jar` in [`JAR_DIRECTORY`] under the
/// current directory or the repository root. `None` when there is none.
pub fn find_jar(explicit: Option<&Path>) -> Option<PathBuf> {
    if let Some(path) = explicit {
        return Some(path.to_path_buf());
    }
    let roots = [PathBuf::from("."), repository_root()];
    roots
        .iter()
        .find_map(|root| newest_jar(&root.join(JAR_DIRECTORY)))
}

fn newest_jar(directory: &Path) -> Option<PathBuf> {
    std::fs::read_dir(directory)
        .ok()?
        .flatten()
        .filter(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            name.starts_with(JAR_PREFIX) && name.ends_with(".jar")
        })
        .filter_map(|entry| {
            let modified = entry.metadata().ok()?.modified().ok()?;
            Some((modified, entry.path()))
        })
        .max()
        .map(|(_, path)| path)
}

/// Whether the jar at `jar` holds [`MAIN_CLASS`] (a jar built before it existed does not).
/// Looks for the entry name, which a jar stores uncompressed.
pub fn jar_has_main_class(jar: &Path) -> bool {
    let entry = format!("{}.class", MAIN_CLASS.replace('.', "/"));
    std::fs::read(jar).is_ok_and(|bytes| {
        bytes
            .windows(entry.len())
            .any(|window| window == entry.as_bytes())
    })
}

/// The arguments after `java` that start the echo server under `base`.
pub fn arguments(jar: &Path, base: &Path) -> Vec<String> {
    vec![
        "-cp".to_owned(),
        jar.to_string_lossy().into_owned(),
        MAIN_CLASS.to_owned(),
        "--base".to_owned(),
        base.to_string_lossy().into_owned(),
    ]
}

/// The first line of `java -version` (e.g. `openjdk version "17.0.15" 2025-04-15`), or why
/// there is none.
pub fn java_version(java: &Path) -> Result<String, String> {
    let output = Command::new(java)
        .arg("-version")
        .output()
        .map_err(|error| format!("cannot run `{} -version`: {error}", java.display()))?;
    let text = String::from_utf8_lossy(&output.stderr).into_owned();
    let runtime = text
        .lines()
        .find(|line| line.contains("Runtime Environment"))
        .map(|line| format!(" ({})", line.trim()))
        .unwrap_or_default();
    text.lines()
        .next()
        .map(|first| format!("{}{runtime}", first.trim()))
        .filter(|_| output.status.success())
        .ok_or_else(|| format!("`{} -version` failed", java.display()))
}
