#!/usr/bin/env bash
# Builds the JNI library (test build) and runs the JVM tests with Gradle, offline, on the
# default JDK; then, where a JDK 25 is present (IDEs ship newer runtimes than 17), the same
# compiled tests again on it. Installs Gradle, a JDK, JUnit 4 and Hamcrest from Debian's
# packages when they are missing. Arguments go to Gradle (e.g. --tests '*Toon*'); with any,
# the JDK 25 run is left out.
#
# On JDK 25 the suite runs under JUnit's own runner, not Gradle's test task: Gradle 4.4.1's test
# worker calls System.setSecurityManager, which JDK 24 and later refuse. The JVM is given
# --enable-native-access=ALL-UNNAMED, as a plugin's JVM needs for System.load (docs/JNI.md).
#
# Environment: IDE_MCP_JDK25 (default /usr/lib/jvm/temurin-25-jdk-amd64).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/jvm-tools.sh --junit
gradle --offline --console=plain test "$@"
[ $# -eq 0 ] || exit 0

jdk25="${IDE_MCP_JDK25:-/usr/lib/jvm/temurin-25-jdk-amd64}"
if [ ! -x "$jdk25/bin/java" ]; then
    echo "== no JDK 25 at $jdk25: the JVM suite ran on the default JDK only"
    exit 0
fi
echo "== the JVM suite again on $("$jdk25/bin/java" -version 2>&1 | head -n 1)"
classes=jvm-glue/build/classes/java
library="${CARGO_TARGET_DIR:-$PWD/target}/debug/libide_mcp_jni.so"
tests=$(cd "$classes/test" && find . -name '*Test.class' ! -name '*$*' | sed 's|^\./||; s|\.class$||; s|/|.|g' | sort)
exec "$jdk25/bin/java" -Xcheck:jni --enable-native-access=ALL-UNNAMED \
    -Dide.mcp.native.library="$library" \
    -Dide.mcp.test.classpath="$PWD/$classes/main" \
    -Dide.mcp.toon.fixtures="$PWD/tests/toon-fixtures/spec-v4.1.1/tests/fixtures" \
    -cp "$classes/main:$classes/test:$classes/bench:/usr/share/java/junit4.jar:/usr/share/java/hamcrest-core.jar" \
    org.junit.runner.JUnitCore $tests
