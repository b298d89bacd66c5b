#!/usr/bin/env bash
# Instructions per call of our TOON codec and of serde_json on the codec bench's payloads,
# counted by callgrind (deterministic for a given binary, unlike times on a shared machine):
# `rust/protocol/examples/codec_ops.rs` runs one operation N times and only its loop is
# counted. Prints one tab-separated line per payload and operation:
#   <payload> <encode|decode|json-encode|json-decode> <instructions per call>
# which `ide-mcp-bench toon-report --instructions <file>` turns into the codec section's
# instruction table. Installs valgrind from Debian when it is missing. About a minute.
#
# Usage: scripts/codec-instructions.sh > target/codec-instructions.tsv
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v valgrind >/dev/null 2>&1; then
    echo "installing valgrind (apt-get)" >&2
    sudo=""
    [ "$(id -u)" = 0 ] || sudo=sudo
    $sudo apt-get install -y -qq valgrind >&2 || {
        $sudo apt-get update -qq >&2 && $sudo apt-get install -y -qq valgrind >&2
    }
fi

cargo build --release --locked --quiet -p ide-mcp-protocol --example codec_ops
binary=${CARGO_TARGET_DIR:-target}/release/examples/codec_ops
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# payload name and the number of calls counted for it (enough that the first call's
# one-time costs vanish in the average)
for entry in a_small_request:2000 b_table_100:50 c_table_10k:3 d_nested:10; do
    payload=${entry%%:*}
    count=${entry##*:}
    for operation in encode decode json-encode json-decode; do
        valgrind --tool=callgrind --callgrind-out-file="$work/out" \
            --toggle-collect='*codec_ops*repeat*' \
            "$binary" "$payload" "$operation" "$count" >/dev/null 2>&1
        total=$(awk '/^(summary|totals):/ { print $2; exit }' "$work/out")
        printf '%s\t%s\t%s\n' "$payload" "$operation" "$((total / count))"
    done
done
