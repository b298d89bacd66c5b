"""The Java headless host (`scripts/serve.sh`) serving a temporary git project, driven by the
official MCP Python SDK through `ide-mcp bridge`: files, git, tasks and status tools.

The host is built once (`built_host` in conftest.py), then started per test on the `project`
fixture's git project (`serve_project`); like the `ide_servers` fixture, each test checks that
it printed the ready line first, and that it exited with status 0 and removed its runtime
directory when its standard input closed.
"""

from __future__ import annotations

from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client

from conftest import BUILD_TIMEOUT, IDE_MCP, serve_project, toon_decode

WAIT = 20

# Generous: the first test may build the jar and the bridge; every wait inside a test has its own, short timeout.
pytestmark = [pytest.mark.anyio, pytest.mark.timeout(BUILD_TIMEOUT)]


@pytest.fixture
def headless(built_host, project):
    """The headless host serving `project`; yields its runtime directory."""
    with serve_project(built_host, project) as servers:
        yield servers.directory


@asynccontextmanager
async def session(directory: Path, server: str):
    params = StdioServerParameters(command=str(IDE_MCP), args=["bridge", str(directory / f"{server}.sock")])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write, read_timeout_seconds=WAIT) as client:
            with anyio.fail_after(WAIT):
                await client.initialize()
            yield client


async def run(client: ClientSession, tool: str, args: dict):
    """`run(tool, args)`: (is_error, decoded result or error text)."""
    with anyio.fail_after(WAIT):
        result = await client.call_tool("run", {"tool": tool, "args": args})
    text = result.content[0].text
    return result.is_error, (text if result.is_error else toon_decode(text))


async def test_every_server_serves_its_domain(headless):
    for server, domain in [("code", "files"), ("vcs", "git"), ("run", "tasks"), ("ops", "status")]:
        async with session(headless, server) as client:
            with anyio.fail_after(WAIT):
                domains = toon_decode((await client.call_tool("domains", {})).content[0].text)["domains"]
            assert [d["name"] for d in domains] == [domain]


async def test_files_tools_read_list_find_and_search(headless):
    async with session(headless, "code") as client:
        is_error, read = await run(client, "read_file", {"path": "README.md"})
        assert not is_error, read
        assert read["content"] == "# Demo\n\nA demo project, changed.\n"
        assert read["totalLines"] == 3

        is_error, lines = await run(client, "read_file", {"path": "src/main.py", "startLine": 2, "endLine": 2})
        assert not is_error and lines["content"] == "    # TODO: say hello\n", lines

        is_error, listing = await run(client, "list_directory", {})
        assert not is_error
        assert {"name": "src", "type": "directory", "size": None} in listing["entries"]

        is_error, found = await run(client, "find_files", {"glob": "*.py"})
        assert not is_error and found["files"] == ["src/main.py"], found

        is_error, matches = await run(client, "search_text", {"pattern": "TODO"})
        assert not is_error
        assert matches["matches"] == [{"path": "src/main.py", "line": 2, "text": "    # TODO: say hello"}]


async def test_paths_outside_the_project_are_refused(headless, project):
    async with session(headless, "code") as client:
        for path in ["../secret.txt", str(project.parent / "secret.txt"), "/etc/passwd"]:
            is_error, text = await run(client, "read_file", {"path": path})
            assert is_error, text
            assert "outside the project" in text
            assert "a secret" not in text


async def test_git_tools_show_the_commit_and_the_change(headless):
    async with session(headless, "vcs") as client:
        is_error, status = await run(client, "status", {})
        assert not is_error, status
        assert status["branch"]["name"] == "main"
        assert {"path": "README.md", "staged": None, "unstaged": "modified"} in status["changes"]

        is_error, diff = await run(client, "diff", {"path": "README.md"})
        assert not is_error and "+A demo project, changed." in diff["diff"], diff

        is_error, log = await run(client, "log", {"maxCount": 5})
        assert not is_error
        assert [c["subject"] for c in log["commits"]] == ["First commit"]
        assert log["commits"][0]["author"] == "Grace Hopper"

        is_error, blame = await run(client, "blame", {"path": "src/main.py", "startLine": 2, "endLine": 2})
        assert not is_error
        assert blame["lines"][0]["summary"] == "First commit"
        assert blame["lines"][0]["text"] == "    # TODO: say hello"


async def test_tasks_are_listed_and_running_one_is_denied_without_a_terminal(headless):
    async with session(headless, "run") as client:
        is_error, tasks = await run(client, "list_tasks", {})
        assert not is_error
        assert tasks["tasks"] == [{"name": "hello", "command": "echo hello", "description": "Says hello"}]
        is_error, text = await run(client, "run_task", {"name": "hello"})
        assert is_error and "denied" in text, text


async def test_the_status_tool_reports_servers_and_verdicts(headless):
    async with session(headless, "code") as code:
        await run(code, "read_file", {"path": "README.md"})
    async with session(headless, "ops") as client:
        is_error, status = await run(client, "status", {})
        assert not is_error, status
        assert [s["server"] for s in status["servers"]] == ["code", "run", "vcs", "ops"]
        assert status["git"] is True
        assert any(v["tool"] == "code/files/read_file" and v["verdict"] == "allowed" for v in status["latestVerdicts"])


def test_a_project_without_git_has_no_vcs_socket(built_host, tmp_path):
    project = tmp_path / "plain"
    project.mkdir()
    (project / "a.txt").write_text("plain\n")
    with serve_project(built_host, project) as servers:
        sockets = sorted(p.name for p in servers.directory.glob("*.sock"))
        # SOCKET_FILE_NAMES in rust/protocol/src/contract.rs
        assert sockets == ["code.sock", "ops.sock", "run.sock"]
