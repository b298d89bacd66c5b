"""The real Gemini CLI (`@google/gemini-cli`, pinned in package.json) set up from what the
headless host prints: its settings block written to a private `~/.gemini/settings.json`, then
`gemini mcp list` in the project, first untrusted (every server disabled, as Gemini CLI connects
no MCP server in an untrusted folder), then trusted as the printed comment says (every server
connected: `mcp list` starts each bridge and initializes; no account is needed, and nothing
goes to the network).
"""

from __future__ import annotations

import json
import re
import subprocess

import pytest

from conftest import BUILD_TIMEOUT, HERE, NODE_BIN, agent_env, listed_servers, serve_project

# The first test to use `built_host` may build the jar; the waits below have their own timeouts.
pytestmark = pytest.mark.timeout(BUILD_TIMEOUT)

RUN_TIMEOUT = 60
SERVERS = ["code", "run", "vcs", "ops"]


def test_gemini_cli_connects_to_every_server_once_the_project_is_trusted(built_host, project, tmp_path):
    if not (NODE_BIN / "gemini").exists():
        pytest.fail(f"{NODE_BIN / 'gemini'} is missing: run `npm ci` in {HERE}")
    home = tmp_path / "home"
    env = agent_env(home)
    settings_dir = home / ".gemini"
    settings_dir.mkdir()

    def mcp_list() -> str:
        done = subprocess.run(["gemini", "mcp", "list"], cwd=project, env=env, capture_output=True,
                              text=True, timeout=RUN_TIMEOUT)
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout + done.stderr

    with serve_project(built_host, project) as servers:
        servers.output_until("# Gemini CLI")
        printed = servers.output_until("}")
        comments = [line for line in printed if line.startswith("#")]
        block = json.loads("\n".join(line for line in printed if not line.startswith("#")))
        names = [f"ide-project-{name}" for name in SERVERS]
        assert list(block["mcpServers"]) == names
        assert all(entry["trust"] is True for entry in block["mcpServers"].values())
        (settings_dir / "settings.json").write_text(json.dumps(block))

        untrusted = mcp_list()
        assert "untrusted" in untrusted, untrusted
        assert listed_servers(untrusted) == dict.fromkeys(names, "Disabled"), untrusted

        # The printed comment names the entry that trusts the project.
        entry = re.search(r"trustedFolders\.json: (\".*\"): \"TRUST_FOLDER\"\)", " ".join(comments))
        assert entry, comments
        (settings_dir / "trustedFolders.json").write_text(f"{{{entry.group(1)}: \"TRUST_FOLDER\"}}")
        trusted = mcp_list()
        assert listed_servers(trusted) == dict.fromkeys(names, "Connected"), trusted
        for name in SERVERS:
            assert f"bridge --project {project} {name}" in trusted, trusted
