#!/usr/bin/env bash
# Runs every benchmark and rewrites docs/BENCHMARKS.md with the results:
#   1. the TOON codec bench (criterion), its time ratios against serde_json measured in turns
#      (`ide-mcp-bench codec-turns`) and its instruction counts (callgrind,
#      scripts/codec-instructions.sh, which installs valgrind when missing), whose section is
#      made from target/criterion, those ratios and those counts by `ide-mcp-bench toon-report`;
#   2. the server bench (`ide-mcp-bench`): ide-mcp with Rust handlers, the same servers hosted
#      by a JVM with a Java handler (the jars from `gradle --offline benchJar`), a raw socket
#      ping-pong and rmcp, all driven by one load generator in one run (latency read by a
#      spinning and by a blocking client, throughput, memory per idle connection, wake-ups of
#      server sets with no clients over a minute, and instructions per echo call under
#      callgrind);
#   3. memory under hostile input (`ide-mcp-bench hostile-memory`, a few seconds): the
#      server's peak RSS growth and the decoders' peak heap for inputs built to expand;
#   4. `search_text` (`ide-mcp-bench search`, under a minute): the native search against `rg`
#      (Debian's ripgrep, installed here when missing) and the Java search it replaced
#      (`JavaSearchBaseline` in the bench jar) on one generated tree.
# Installs Gradle and a JDK from Debian when missing (scripts/jvm-tools.sh), and valgrind (for
# the instruction counts). About nine minutes on 2 cores once the builds are cached.
#
# Usage: scripts/bench.sh [--no-jvm] [--no-write]
#   --no-jvm    skip the Gradle build; the Java-handler rows say they were not measured
#   --no-write  print the sections without touching docs/BENCHMARKS.md
set -euo pipefail
cd "$(dirname "$0")/.."

jvm=1
write=1
for argument in "$@"; do
    case "$argument" in
        --no-jvm) jvm=0 ;;
        --no-write) write=0 ;;
        *) echo "usage: scripts/bench.sh [--no-jvm] [--no-write]" >&2; exit 2 ;;
    esac
done

doc=docs/BENCHMARKS.md
write_args=()
[ "$write" = 1 ] && write_args=(--write "$doc")
started=$SECONDS

step() {
    echo
    echo "== $* ($((SECONDS - started)) s)"
}

# Two benchmark runs at once would share the CPUs and skew each other's numbers: wait for any
# other ide-mcp-bench (a server bench or its servers) before each benchmark.
wait_for_other_benches() {
    local waited=0
    while pgrep -x ide-mcp-bench >/dev/null 2>&1; do
        if [ "$waited" -ge 600 ]; then
            echo "another ide-mcp-bench has been running for 10 minutes; giving up" >&2
            exit 1
        fi
        [ "$waited" = 0 ] && echo "another ide-mcp-bench is running; waiting for it to finish"
        sleep 5
        waited=$((waited + 5))
    done
}

# Other work skews the figures; the reports print the load average, and so does this.
read -r load1 _ < /proc/loadavg || load1=unknown
echo "load average (1 min) before the run: $load1 on $(nproc) CPUs"

# Instructions per call are counted under callgrind: install valgrind when it is missing.
if ! command -v valgrind >/dev/null 2>&1; then
    step "install: valgrind (apt-get)"
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y --no-install-recommends valgrind ||
        { apt-get update && apt-get install -y --no-install-recommends valgrind; }
fi

step "build: ide-mcp-bench (release)"
cargo build --release --locked -p ide-mcp-bench

jar_args=()
if [ "$jvm" = 1 ]; then
    scripts/jvm-tools.sh
    step "build: the echo server's jar and the jar with the release native library (gradle --offline benchJar)"
    # No daemon: an idle Gradle daemon left beside the measurements used about 5 % of a CPU
    # (its own JIT and housekeeping), and a daemon already running from other builds is
    # stopped for the same reason.
    gradle --stop --quiet >/dev/null 2>&1 || true
    gradle --offline --console=plain --quiet --no-daemon benchJar
    jar=jvm-glue/build/libs/jvm-glue-bench.jar
    if [ ! -f "$jar" ]; then
        jar=$(ls -t jvm-glue/build/libs/jvm-glue-bench*.jar 2>/dev/null | head -n 1 || true)
    fi
    if [ -n "$jar" ]; then
        jar_args=(--jar "$jar")
    fi
else
    jar_args=(--no-jvm)
fi

step "TOON codec bench (cargo bench -p ide-mcp-protocol --bench codec)"
wait_for_other_benches
cargo bench --locked -p ide-mcp-protocol --bench codec
step "TOON codec ratios in turns (ide-mcp-bench codec-turns)"
codec_turns=${CARGO_TARGET_DIR:-target}/codec-turns.tsv
target/release/ide-mcp-bench codec-turns >"$codec_turns"
step "TOON codec instructions (scripts/codec-instructions.sh, callgrind)"
codec_instructions=${CARGO_TARGET_DIR:-target}/codec-instructions.tsv
scripts/codec-instructions.sh >"$codec_instructions"
step "TOON codec section"
target/release/ide-mcp-bench toon-report --criterion "${CARGO_TARGET_DIR:-target}/criterion" \
    --turns "$codec_turns" --instructions "$codec_instructions" "${write_args[@]}"

step "server bench (ide-mcp-bench)"
wait_for_other_benches
target/release/ide-mcp-bench "${jar_args[@]}" "${write_args[@]}"

step "memory under hostile input (ide-mcp-bench hostile-memory)"
wait_for_other_benches
target/release/ide-mcp-bench hostile-memory "${write_args[@]}"

step "search_text against rg and the Java version (ide-mcp-bench search)"
if ! command -v rg >/dev/null 2>&1; then
    echo "installing: ripgrep" >&2
    {
        apt-get update
        DEBIAN_FRONTEND=noninteractive apt-get install -y ripgrep
    } >&2
fi
wait_for_other_benches
search_args=()
[ "$jvm" = 1 ] || search_args=(--no-jvm)
[ "${#jar_args[@]}" -gt 0 ] && [ "$jvm" = 1 ] && search_args=("${jar_args[@]}")
target/release/ide-mcp-bench search "${search_args[@]}" "${write_args[@]}"

step "done"
if [ "$write" = 1 ]; then
    echo "rewrote the four benchmark sections of $doc"
fi
