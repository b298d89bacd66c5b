#!/usr/bin/env bash
# Builds the JNI library (test build) and runs the JVM tests with Gradle, offline.
# Installs Gradle, JUnit 4 and Hamcrest from Debian's packages when they are missing.
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
command -v gradle >/dev/null 2>&1 || missing+=(gradle)
[ -f /usr/share/java/junit4.jar ] || missing+=(junit4)
[ -f /usr/share/java/hamcrest-core.jar ] || missing+=(libhamcrest-java)
command -v javac >/dev/null 2>&1 || missing+=(default-jdk-headless)
if [ ${#missing[@]} -gt 0 ]; then
    echo "installing: ${missing[*]}"
    apt-get update
    DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing[@]}"
fi

exec gradle --offline --console=plain test "$@"
