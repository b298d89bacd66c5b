#!/usr/bin/env bash
# Builds the JNI library (test build) and runs the JVM tests with Gradle, offline.
# Installs Gradle, a JDK, JUnit 4 and Hamcrest from Debian's packages when they are missing.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/jvm-tools.sh --junit
exec gradle --offline --console=plain test "$@"
