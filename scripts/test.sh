#!/usr/bin/env bash
# Runs every test of the project on a fresh machine: installs what is missing, then
# formatting and lints, the macOS and Windows cross checks, the jars the JVM smoke test of the benchmark needs, the Rust suite (with
# the TOON conformance count shown), the JVM suite, a Gradle build consuming the published
# artifact, and the end-to-end tests with real MCP clients.
set -euo pipefail
cd "$(dirname "$0")/.."

rustup component add rustfmt clippy >/dev/null 2>&1 || true

echo "== cargo fmt --check"
cargo fmt --all -- --check
echo "== cargo clippy"
cargo clippy --workspace --all-targets --locked -- -D warnings
echo "== macOS and Windows: check and clippy, the Windows link, the Windows tests under Wine"
scripts/cross-check.sh
echo "== the jars for the JVM smoke test (gradle --offline benchJar)"
# rust/bench/tests/jvm_smoke.rs runs the Java echo server from them, inside `cargo test`.
scripts/jvm-tools.sh --junit
gradle --offline --console=plain --quiet benchJar
echo "== cargo test"
cargo test --workspace --locked
echo "== what calls cost the runtime's workers, in a release build (rust/server/tests/wakeups.rs)"
cargo test --release --locked -p ide-mcp-server --test wakeups
echo "== TOON conformance"
cargo test --locked -p ide-mcp-protocol --test toon_fixtures 2>&1 | grep -E "TOON fixtures"

if [ -x scripts/jvm-test.sh ]; then
  echo "== JVM tests"
  scripts/jvm-test.sh
fi

echo "== a Gradle build that consumes the published artifact"
scripts/consumer-test.sh

echo "== one jar for every platform"
scripts/jar-platforms-check.sh

echo "== real MCP clients"
cargo build --release --locked -p ide-mcp-cli
tests/mcp_clients/run.sh
