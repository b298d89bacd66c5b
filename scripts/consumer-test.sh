#!/usr/bin/env bash
# The "Gradle integration test" use case, end to end: publishes the library into a throwaway
# local Maven repository (`gradle publishToMavenLocal` with -Dmaven.repo.local), then builds and
# tests tests/gradle-consumer, a separate Gradle build that knows ide-mcp only as that artifact.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/jvm-tools.sh --junit
repository="$(mktemp -d)"
trap 'rm -rf "$repository"' EXIT
version="$(sed -n 's/^version *= *"\([^"]*\)"/\1/p' Cargo.toml | head -n 1)"

gradle --offline --console=plain --quiet -Dmaven.repo.local="$repository" publishToMavenLocal
for file in ide-mcp-$version.jar ide-mcp-$version.pom ide-mcp-$version-sources.jar; do
    test -f "$repository/dev/lain/claudejb/ide-mcp/$version/$file" \
        || { echo "consumer-test: publishToMavenLocal left no $file" >&2; exit 1; }
done
cd tests/gradle-consumer
gradle --offline --console=plain -Dmaven.repo.local="$repository" -PideMcpVersion="$version" test
