"""The real Claude Code CLI (`@anthropic-ai/claude-code`, pinned in package.json) set up from
what the headless host prints: its `claude mcp add` lines run as printed, with a private HOME
and CLAUDE_CONFIG_DIR, then `claude mcp list` health-checks every server (it starts each
bridge and initializes; no account is needed) from inside the untrusted project.

Offline, Claude Code would look up its API host on start; CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC
stops that (and DISABLE_AUTOUPDATER the update check), so nothing here touches the network.
"""

from __future__ import annotations

import os
import re
import subprocess

import pytest

from conftest import BUILD_TIMEOUT, HERE, serve_project

# The first test to use `built_host` may build the jar; the waits below have their own timeouts.
pytestmark = pytest.mark.timeout(BUILD_TIMEOUT)

CLAUDE_BIN = HERE / "node_modules" / ".bin"
RUN_TIMEOUT = 60
SERVERS = ["code", "run", "vcs", "ops"]


@pytest.fixture
def claude_env(tmp_path):
    if not (CLAUDE_BIN / "claude").exists():
        pytest.fail(f"{CLAUDE_BIN / 'claude'} is missing: run `npm ci` in {HERE}")
    home = tmp_path / "home"
    home.mkdir()
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("ANTHROPIC_", "CLAUDE_", "MCP_"))}
    env.update(
        HOME=str(home),
        CLAUDE_CONFIG_DIR=str(home / ".claude"),
        PATH=f"{CLAUDE_BIN}{os.pathsep}{env.get('PATH', '')}",
        DISABLE_AUTOUPDATER="1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
    )
    return env


def test_claude_code_connects_to_every_server_added_as_printed(built_host, project, claude_env):
    with serve_project(built_host, project) as servers:
        printed = servers.output_until("# Gemini CLI")
        lines = [line for line in printed if line.startswith("claude ")]
        assert len(lines) == len(SERVERS), printed
        for line in lines:
            # As a person would paste it: through a shell (it holds `2>/dev/null; …`).
            done = subprocess.run(["sh", "-c", line], cwd=project, env=claude_env, capture_output=True,
                                  text=True, timeout=RUN_TIMEOUT)
            assert done.returncode == 0, f"{line}\n{done.stdout}{done.stderr}"
            assert "Added stdio MCP server" in done.stdout, done.stdout

        done = subprocess.run(["claude", "mcp", "list"], cwd=project, env=claude_env, capture_output=True,
                              text=True, timeout=RUN_TIMEOUT)
        assert done.returncode == 0, done.stdout + done.stderr
        # `<name>: <command> - ✔ Connected` (the mark differs between versions; a failure reads
        # `✘ Failed to connect — <reason>`).
        status = dict(re.findall(r"^(ide-[\w-]+): .* - \W*(.+)$", done.stdout, re.MULTILINE))
        assert status == {f"ide-project-{name}": "Connected" for name in SERVERS}, done.stdout
        for name in SERVERS:
            assert str(servers.socket(name)) in done.stdout

        # Run again after a restart, the lines replace the entries instead of failing on them.
        again = subprocess.run(["sh", "-c", lines[0]], cwd=project, env=claude_env, capture_output=True,
                               text=True, timeout=RUN_TIMEOUT)
        assert again.returncode == 0 and "Added stdio MCP server" in again.stdout, again.stdout + again.stderr
