#!/usr/bin/env bash
# Weighs release-profile variants for the native library: for each, builds ide-mcp-jni and
# ide-mcp-cli from scratch in a target directory of its own (target-weigh/<variant>), then
# prints the library's size (unstripped, and stripped with `objcopy --strip-all` as the jar
# ships it), the build times, and instruction counts under callgrind (deterministic, unlike
# times on a shared machine):
#   - echo: the server's instructions per `tools/call run {tool: echo}` over NDJSON, from
#     `ide-mcp testserver` (the CLI runs the same server code as the JNI library), as
#     (I(N2) - I(N1)) / (N2 - N1) so that start-up and shutdown cancel out;
#   - codec: instructions per TOON encode / decode of the codec bench's payloads, from
#     `examples/codec_ops.rs` with only its loop counted.
# Each variant sets LTO, codegen units and opt-level through CARGO_PROFILE_RELEASE_*
# variables, whatever Cargo.toml says (its other settings, such as `debug`, apply to all). About 5–7 minutes per variant on 2 cores.
#
# Usage: scripts/profile-weigh.sh [variant...]   (default: all; variants below)
set -euo pipefail
cd "$(dirname "$0")/.."

# name: LTO, codegen units, opt-level (`cargo-default` is Cargo's release default)
declare -A variants=(
    [cargo-default]="false 16 3"
    [thin]="thin 16 3"
    [fat-cgu1]="fat 1 3"
    [fat-cgu1-s]="fat 1 s"
)
order=(cargo-default thin fat-cgu1 fat-cgu1-s)
[ "$#" -gt 0 ] && order=("$@")

echo_small=50
echo_large=550
# payload name and the number of calls counted for it
codec_payloads=(a_small_request:2000 b_table_100:50 c_table_10k:1 d_nested:10)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Instructions (Ir) a callgrind run recorded.
instructions() {
    awk '/^(summary|totals):/ { print $2; exit }' "$1"
}

# The server's instructions for N echo calls: `ide-mcp testserver` under callgrind, driven
# by a client that sends one call at a time and checks every reply.
echo_instructions() {
    local binary=$1 calls=$2 out="$work/echo.$2.out"
    python3 - "$binary" "$calls" "$work" valgrind --tool=callgrind --callgrind-out-file="$out" <<'EOF' >/dev/null 2>&1
import json, os, socket, subprocess, sys
binary, calls, work, wrapper = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4:]
server = subprocess.Popen(wrapper + [binary, "testserver", "--base", work],
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE)
directory = server.stdout.readline().decode().strip().split(" ")[-1]
meta = {"dev.lain.claudejb/token": open(os.path.join(directory, "token")).read().strip()}
sock = socket.socket(socket.AF_UNIX)
sock.connect(os.path.join(directory, "code.sock"))
replies = sock.makefile("rb")
def send(message):
    sock.sendall(json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n")
send({"id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
      "capabilities": {}, "clientInfo": {"name": "profile-weigh", "version": "0"}, "_meta": meta}})
assert "result" in json.loads(replies.readline())
send({"method": "notifications/initialized", "params": {"_meta": meta}})
for i in range(100, 100 + calls):
    send({"id": i, "method": "tools/call", "params": {"name": "run",
          "arguments": {"tool": "echo", "args": {"value": "bench-echo"}}, "_meta": meta}})
    reply = json.loads(replies.readline())
    assert reply.get("id") == i and not reply["result"].get("isError"), reply
sock.close()
server.stdin.close()
sys.exit(server.wait())
EOF
    instructions "$out"
}

codec_instructions() {
    local binary=$1 payload=$2 operation=$3 count=$4 out="$work/codec.out"
    valgrind --tool=callgrind --callgrind-out-file="$out" --toggle-collect='*codec_ops*repeat*' \
        "$binary" "$payload" "$operation" "$count" >/dev/null 2>&1
    echo $(($(instructions "$out") / count))
}

seconds() { date +%s.%N; }
elapsed() { printf '%.0f' "$(echo "$(seconds) - $1" | bc)"; }
mib() { printf '%.2f' "$(echo "$(stat -c %s "$1") / 1048576" | bc -l)"; }

header="| variant | lto | codegen-units | opt-level | stripped MiB | unstripped MiB | build s (jni + cli) | echo Ir/call |"
rule="| --- | --- | ---: | --- | ---: | ---: | ---: | ---: |"
for entry in "${codec_payloads[@]}"; do
    header+=" ${entry%%:*} enc | ${entry%%:*} dec |"
    rule+=" ---: | ---: |"
done
rows=()
for variant in "${order[@]}"; do
    read -r lto units opt <<<"${variants[$variant]}"
    settings=(CARGO_PROFILE_RELEASE_LTO="$lto" CARGO_PROFILE_RELEASE_CODEGEN_UNITS="$units"
        CARGO_PROFILE_RELEASE_OPT_LEVEL="$opt")
    target=target-weigh/$variant
    echo "== $variant: ${settings[*]} (in $target)" >&2
    build() { env "${settings[@]}" CARGO_TARGET_DIR="$target" cargo build --release --locked --quiet "$@"; }
    start=$(seconds); build -p ide-mcp-jni; jni_s=$(elapsed "$start")
    start=$(seconds); build -p ide-mcp-cli; cli_s=$(elapsed "$start")
    build -p ide-mcp-protocol --example codec_ops
    echo "built in $jni_s s (ide-mcp-jni) + $cli_s s (ide-mcp-cli)" >&2

    library=$target/release/libide_mcp_jni.so
    objcopy --strip-all "$library" "$work/stripped.so"
    small=$(echo_instructions "$target/release/ide-mcp" "$echo_small")
    large=$(echo_instructions "$target/release/ide-mcp" "$echo_large")
    row="| $variant | $lto | $units | $opt | $(mib "$work/stripped.so") | $(mib "$library") | $jni_s + $cli_s | $(((large - small) / (echo_large - echo_small))) |"
    for entry in "${codec_payloads[@]}"; do
        for operation in encode decode; do
            row+=" $(codec_instructions "$target/release/examples/codec_ops" "${entry%%:*}" "$operation" "${entry##*:}") |"
        done
    done
    echo "$row" >&2
    rows+=("$row")
done

echo "$header"
echo "$rule"
printf '%s\n' "${rows[@]}"
