#!/usr/bin/env bash
# One jar for every platform: builds the jar with stand-in libraries for the platforms this
# machine cannot build (-PnativeLibraries, as .github/workflows/native.yml passes the real
# ones), checks that it holds every native/<os>-<arch>/ folder NativeLoader knows with the
# right file, and that the library built here is the one packed for this platform. The stand-ins
# are never loaded; the jar is rebuilt without them afterwards.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/jvm-tools.sh --junit
libraries="$(mktemp -d)"
restore() {
  rm -rf "$libraries"
  gradle --offline --console=plain --quiet jar
}
trap restore EXIT

declare -A files=(
  [linux-x86_64]=libide_mcp_jni.so [linux-aarch64]=libide_mcp_jni.so
  [darwin-x86_64]=libide_mcp_jni.dylib [darwin-aarch64]=libide_mcp_jni.dylib
  [windows-x86_64]=ide_mcp_jni.dll
)
case "$(uname -m)" in
  x86_64) here=linux-x86_64 ;;
  aarch64) here=linux-aarch64 ;;
  *) echo "jar-platforms-check: unknown machine $(uname -m)" >&2; exit 1 ;;
esac
for folder in "${!files[@]}"; do
  mkdir -p "$libraries/$folder"
  echo "stand-in for $folder" >"$libraries/$folder/${files[$folder]}"
done

gradle --offline --console=plain --quiet jar -PnativeLibraries="$libraries"
jar_file=jvm-glue/build/libs/jvm-glue.jar
listing="$(unzip -l "$jar_file")"
for folder in "${!files[@]}"; do
  entry="native/$folder/${files[$folder]}"
  grep -q " $entry\$" <<<"$listing" || { echo "jar-platforms-check: $jar_file lacks $entry" >&2; exit 1; }
done
# The library built here replaced its stand-in: it is an ELF file, not the stand-in's text.
unzip -p "$jar_file" "native/$here/${files[$here]}" >"$libraries/packed"
[ "$(head -c 4 "$libraries/packed" | od -An -tx1 | tr -d ' \n')" = 7f454c46 ] ||
  { echo "jar-platforms-check: native/$here/ is not the library built here" >&2; exit 1; }
echo "jar-platforms-check: $jar_file holds ${!files[*]}"
