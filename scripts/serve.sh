#!/usr/bin/env bash
# Serves a project directory to AI agents with no IDE: the headless host.
#
#   scripts/serve.sh [options] [project-dir]      (default: the current directory)
#
# Builds what is missing first (the JVM pieces from Debian's packages when absent; the jar with
# the release native library inside, `gradle --offline jar`; the native `ide-mcp` bridge,
# `cargo build --release -p ide-mcp-cli`), then runs
#   java -cp jvm-glue/build/libs/jvm-glue.jar dev.lain.claudejb.mcp.headless.HeadlessHost [options] [project-dir]
# in the caller's directory. Options: --base <dir>, --stop-on-stdin-eof, --ask-unexpected,
# --bridge <ide-mcp>, --diagnostics, --log-level <level>, --help.
#
# Standard output carries only the host's `IDE MCP servers listening under <dir>` line, the
# ready mcpServers block and the setup for each agent (Claude Code, Gemini CLI); build output
# goes to stderr. IDE_MCP_SKIP_BUILD=1 skips the builds when the jar and the bridge are
# already there.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
jar="$root/jvm-glue/build/libs/jvm-glue.jar"
bridge="$root/target/release/ide-mcp"

say() { printf 'serve: %s\n' "$*" >&2; }

if [[ "${IDE_MCP_SKIP_BUILD:-}" != 1 || ! -f "$jar" || ! -x "$bridge" ]]; then
    "$root/scripts/jvm-tools.sh"
    command -v cargo >/dev/null 2>&1 \
        || { say "cargo is missing: install Rust (https://rustup.rs), then run this again"; exit 1; }

    say "building the jar and its native library (gradle --offline jar)"
    (cd "$root" && gradle --offline --console=plain -q jar) >&2
    say "building the native bridge (cargo build --release -p ide-mcp-cli)"
    (cd "$root" && cargo build --release --quiet -p ide-mcp-cli) >&2
fi

java="java"
if [[ -n "${JAVA_HOME:-}" && -x "$JAVA_HOME/bin/java" ]]; then
    java="$JAVA_HOME/bin/java"
fi
exec "$java" -cp "$jar" dev.lain.claudejb.mcp.headless.HeadlessHost --bridge "$bridge" "$@"
