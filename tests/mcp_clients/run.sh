#!/usr/bin/env bash
# End-to-end tests with real MCP clients: the official MCP Python SDK, the TypeScript SDK 1.x,
# the MCP Inspector's CLI, the Claude Code and Gemini CLIs, and a hand-written client mixing
# both protocol eras, all through `ide-mcp bridge`, locally and over a real OpenSSH sshd.
#
# Installs what it needs on first use (each step is skipped when already done):
#   - target/release/ide-mcp      cargo build --release -p ide-mcp-cli
#   - tests/mcp_clients/.venv     python3 -m venv, pip install -r requirements.txt
#   - tests/mcp_clients/node_modules   npm ci (package-lock.json): Inspector, TypeScript SDK, Claude Code, Gemini CLI
#   - /usr/sbin/sshd, ssh         apt-get install openssh-server openssh-client (test_ssh.py starts its own sshd)
# then runs pytest on tests/mcp_clients. Extra arguments go to pytest (e.g. -k inspector -x).
#
# Environment: IDE_MCP_BIN (the ide-mcp executable; default target/release/ide-mcp),
# IDE_MCP_SERVER_CMD (the servers under test; see conftest.py), PYTHON (default python3).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
python="${PYTHON:-python3}"
venv="$here/.venv"

say() { printf 'mcp_clients: %s\n' "$*" >&2; }

# 1. The ide-mcp executable.
if [[ -z "${IDE_MCP_BIN:-}" ]]; then
    export IDE_MCP_BIN="$root/target/release/ide-mcp"
    if [[ ! -x "$IDE_MCP_BIN" ]]; then
        say "building ide-mcp (cargo build --release -p ide-mcp-cli)"
        (cd "$root" && cargo build --release -p ide-mcp-cli)
    fi
fi
[[ -x "$IDE_MCP_BIN" ]] || { say "no ide-mcp executable at $IDE_MCP_BIN"; exit 1; }

# 2. The Python environment: the MCP Python SDK and pytest.
stamp_of() { sha256sum "$@" | sha256sum | cut -d' ' -f1; }
want="$(stamp_of "$here/requirements.txt")"
if [[ ! -x "$venv/bin/python" || "$(cat "$venv/.installed" 2>/dev/null)" != "$want" ]]; then
    "$python" -c 'import sys; sys.exit(sys.version_info < (3, 10))' \
        || { say "$python is older than 3.10, which the MCP Python SDK needs"; exit 1; }
    say "installing the Python packages into $venv"
    [[ -x "$venv/bin/python" ]] || "$python" -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$here/requirements.txt"
    echo "$want" > "$venv/.installed"
fi

# 3. The Node clients: the MCP Inspector, the TypeScript SDK 1.x, Claude Code, Gemini CLI.
command -v npm > /dev/null || { say "npm is missing (install Node.js and npm)"; exit 1; }
want="$(stamp_of "$here/package.json" "$here/package-lock.json")"
if [[ ! -x "$here/node_modules/.bin/mcp-inspector" \
        || "$(cat "$here/node_modules/.installed" 2>/dev/null)" != "$want" ]]; then
    say "installing the Node clients (npm ci)"
    # The Inspector declares node >= 22.19; the CLI paths used here also run on Node 20.
    # `npm ci` refuses this lock file when an optional dependency of a dependency (a
    # Windows-only one of vite's) cannot be resolved from the registry; `npm install --no-save`
    # then installs the same locked versions and leaves package-lock.json untouched.
    log="$(mktemp)"
    if ! (cd "$here" && npm ci --no-audit --no-fund --loglevel=error) > "$log" 2>&1; then
        if grep -q 'in sync' "$log"; then
            say "npm ci refused the lock file ($(grep -m1 'Missing:' "$log" | sed 's/^npm error //')); using npm install --no-save"
            (cd "$here" && npm install --no-save --no-audit --no-fund --loglevel=error)
        else
            cat "$log" >&2
            rm -f "$log"
            exit 1
        fi
    fi
    rm -f "$log"
    echo "$want" > "$here/node_modules/.installed"
fi

# 4. OpenSSH, for the remote-reach tests (test_ssh.py): Debian's sshd and ssh client.
if [[ ! -x /usr/sbin/sshd ]] || ! command -v ssh > /dev/null || ! command -v ssh-keygen > /dev/null; then
    say "installing openssh-server and openssh-client (apt-get)"
    sudo=""
    [[ "$(id -u)" -eq 0 ]] || sudo="sudo"
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends openssh-server openssh-client \
        || { $sudo apt-get update && $sudo env DEBIAN_FRONTEND=noninteractive \
                apt-get install -y --no-install-recommends openssh-server openssh-client; }
fi

# 5. The tests.
cd "$here"
exec "$venv/bin/python" -m pytest "$@"
