"""The real Claude Code CLI (`@anthropic-ai/claude-code`, pinned in package.json) set up from
what the headless host prints: its `claude mcp add` lines run as printed, with a private HOME
and CLAUDE_CONFIG_DIR, then `claude mcp list` health-checks every server (it starts each
bridge and initializes; no account is needed) from inside the untrusted project, where the
plain block pasted as `.mcp.json` stays "Pending approval".

Offline, Claude Code would look up its API host on start; CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC
stops that (and DISABLE_AUTOUPDATER the update check), so nothing here touches the network.
"""

from __future__ import annotations

import re
import subprocess

import pytest

from conftest import BUILD_TIMEOUT, HERE, NODE_BIN, agent_env, listed_servers, serve_project

# The first test to use `built_host` may build the jar; the waits below have their own timeouts.
pytestmark = pytest.mark.timeout(BUILD_TIMEOUT)

RUN_TIMEOUT = 60
SERVERS = ["code", "run", "vcs", "ops"]


@pytest.fixture
def claude_env(tmp_path):
    if not (NODE_BIN / "claude").exists():
        pytest.fail(f"{NODE_BIN / 'claude'} is missing: run `npm ci` in {HERE}")
    home = tmp_path / "home"
    return agent_env(home, CLAUDE_CONFIG_DIR=str(home / ".claude"), DISABLE_AUTOUPDATER="1",
                     CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1")


def test_claude_code_connects_to_every_server_added_as_printed(built_host, project, claude_env):
    with serve_project(built_host, project) as servers:
        printed = servers.output_until("# Gemini CLI")
        # The plain block, pasted as the project's .mcp.json: Claude Code waits for approval.
        (project / ".mcp.json").write_text("\n".join(printed[: printed.index("}") + 1]))
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
        assert listed_servers(done.stdout) == {f"ide-project-{name}": "Connected" for name in SERVERS}, done.stdout
        for name in SERVERS:
            assert re.search(rf"^{name}: .* - \W*Pending approval", done.stdout, re.MULTILINE), done.stdout
        for name in SERVERS:
            # The stable form: the bridge finds the project's set in the registry at every start.
            assert f"bridge --project {project} {name}" in done.stdout, done.stdout

        # Run again after a restart, the lines replace the entries instead of failing on them.
        again = subprocess.run(["sh", "-c", lines[0]], cwd=project, env=claude_env, capture_output=True,
                               text=True, timeout=RUN_TIMEOUT)
        assert again.returncode == 0 and "Added stdio MCP server" in again.stdout, again.stdout + again.stderr

    # The host restarts (a new runtime directory, new sockets): what was added still connects.
    with serve_project(built_host, project):
        done = subprocess.run(["claude", "mcp", "list"], cwd=project, env=claude_env, capture_output=True,
                              text=True, timeout=RUN_TIMEOUT)
        assert done.returncode == 0, done.stdout + done.stderr
        assert listed_servers(done.stdout) == {f"ide-project-{name}": "Connected" for name in SERVERS}, done.stdout
