#!/usr/bin/env bash
# Installs what the JVM build needs from Debian's packages when it is missing: Gradle and a JDK,
# and with --junit also JUnit 4 and Hamcrest (for the JVM tests). Nothing when all is there.
# Messages go to stderr, so a caller's stdout stays its own.
#
# Usage: scripts/jvm-tools.sh [--junit]
set -euo pipefail

junit=0
for argument in "$@"; do
    case "$argument" in
        --junit) junit=1 ;;
        *) echo "usage: scripts/jvm-tools.sh [--junit]" >&2; exit 2 ;;
    esac
done

missing=()
command -v gradle >/dev/null 2>&1 || missing+=(gradle)
command -v javac >/dev/null 2>&1 || missing+=(default-jdk-headless)
if [ "$junit" = 1 ]; then
    [ -f /usr/share/java/junit4.jar ] || missing+=(junit4)
    [ -f /usr/share/java/hamcrest-core.jar ] || missing+=(libhamcrest-java)
fi
if [ ${#missing[@]} -gt 0 ]; then
    echo "installing: ${missing[*]}" >&2
    {
        apt-get update
        DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing[@]}"
    } >&2
fi
