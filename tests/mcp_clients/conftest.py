"""Shared fixtures: the server under test, the stdio bridge command, and a TOON decoder.

The server under test is started in one place, `server_command` below. It is `ide-mcp
testserver` today; to point these tests at another host (the Java headless host, say), set
IDE_MCP_SERVER_CMD to its command line with `{base}` where the base directory goes, or change
`server_command`. Whatever the command, it must print `IDE MCP servers listening under <dir>`
as its first line on standard output and stop cleanly, removing <dir>, when its standard input
closes.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import tempfile
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent

#: The `ide-mcp` executable: the bridge and the TOON decoder, and the default test server.
IDE_MCP = Path(os.environ.get("IDE_MCP_BIN", REPO / "target" / "release" / "ide-mcp"))

#: The domain every test server serves, with its `echo`, `sleep`, `fail` and `big` tools.
DOMAIN = "diagnostics"

#: How long the server may take to say it is listening, and to stop.
START_TIMEOUT = 20.0
STOP_TIMEOUT = 15.0

#: The headless host's launcher, and how long building the jar and the bridge may take.
SERVE = REPO / "scripts" / "serve.sh"
BUILD_TIMEOUT = 1200


def contract_constant(name: str) -> str:
    """A string constant of the contract, read from its one Rust definition."""
    source = (REPO / "rust" / "protocol" / "src" / "contract.rs").read_text(encoding="utf-8")
    match = re.search(rf'pub const {name}: &str = "((?:[^"\\]|\\.)*)";', source)
    assert match, f"{name} is not a string constant of rust/protocol/src/contract.rs"
    return match.group(1)


#: The ready line: the contract's READY_LINE_PREFIX, then the runtime directory.
READY = re.compile("^" + re.escape(contract_constant("READY_LINE_PREFIX")) + r"(?P<dir>/.+)$")


def server_command(base: Path) -> list[str]:
    """The command that starts the servers under test with runtime base directory `base`."""
    custom = os.environ.get("IDE_MCP_SERVER_CMD")
    if custom:
        return [part.replace("{base}", str(base)) for part in shlex.split(custom)]
    return [str(IDE_MCP), "testserver", "--base", str(base)]


def bridge_command(socket: Path) -> list[str]:
    """The stdio bridge to one server's socket, as an MCP client would launch it."""
    return [str(IDE_MCP), "bridge", str(socket)]


@pytest.fixture(scope="session", autouse=True)
def private_registry(tmp_path_factory):
    """One registry of live server sets for the whole run (IDE_MCP_REGISTRY, inherited by every
    server, bridge and agent started), so that `ide-mcp bridge --project` finds the sets these
    tests start, and only those."""
    registry = tmp_path_factory.mktemp("registry") / "live-sets"
    os.environ["IDE_MCP_REGISTRY"] = str(registry)
    yield registry


@dataclass
class RunningServers:
    """A started set of servers: its runtime directory and one socket per server."""

    directory: Path
    process: subprocess.Popen

    def socket(self, name: str = "code") -> Path:
        return self.directory / f"{name}.sock"

    def bridge(self, name: str = "code") -> list[str]:
        return bridge_command(self.socket(name))

    def output_until(self, last: str, timeout: float = START_TIMEOUT) -> list[str]:
        """The lines the server prints after its ready line, up to and including the first one
        that starts with `last` (what the headless host prints for each agent)."""
        lines: list[str] = []
        while True:
            line = _read_line_with_timeout(self.process.stdout, timeout)
            if not line:
                pytest.fail(f"no line starting with {last!r} in the output; got {lines!r}")
            lines.append(line.rstrip("\n"))
            if line.startswith(last):
                return lines


def _read_line_with_timeout(stream, timeout: float) -> str | None:
    """One line from a pipe, or None if none arrived in time (the pipe is left to the caller)."""
    box: list[str] = []
    reader = threading.Thread(target=lambda: box.append(stream.readline()), daemon=True)
    reader.start()
    reader.join(timeout)
    return box[0] if box else None


@contextmanager
def serving(make_command, what="server", env=None):
    """Runs `make_command(base)` with a fresh short base directory, waits for its ready line and
    yields its RunningServers; then stops it by closing standard input and checks that it
    exited with status 0 and removed its runtime directory."""
    # A short base keeps the socket paths well under the 100-byte limit of the contract.
    base = Path(tempfile.mkdtemp(prefix="imcp-", dir="/tmp"))
    stderr_path = base.parent / f"{base.name}.stderr"
    stderr = open(stderr_path, "wb")
    process = subprocess.Popen(
        make_command(base),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=stderr,
        text=True,
        encoding="utf-8",
        env=env,
    )
    try:
        line = _read_line_with_timeout(process.stdout, START_TIMEOUT)
        if line is None:
            pytest.fail(f"the {what} printed nothing in {START_TIMEOUT} s; stderr: {_tail(stderr_path)}")
        match = READY.match(line.rstrip("\n"))
        if not match:
            pytest.fail(f"unexpected first line from the {what}: {line!r}; stderr: {_tail(stderr_path)}")
        servers = RunningServers(directory=Path(match.group("dir")), process=process)
        assert servers.directory.is_dir()
        yield servers
        process.stdin.close()
        try:
            status = process.wait(timeout=STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            pytest.fail(f"the {what} did not stop within {STOP_TIMEOUT} s of its stdin closing")
        assert status == 0, f"the {what} exited with {status}; stderr: {_tail(stderr_path)}"
        assert not servers.directory.exists(), f"{servers.directory} was left behind"
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=STOP_TIMEOUT)
        for stream in (process.stdin, process.stdout):
            try:
                stream.close()
            except OSError:
                pass
        stderr.close()
        stderr_path.unlink(missing_ok=True)
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
def ide_servers():
    """The servers under test for one test (see `serving`)."""
    if not IDE_MCP.exists():
        pytest.fail(f"{IDE_MCP} is missing: run `cargo build --release -p ide-mcp-cli` first")
    with serving(server_command) as servers:
        yield servers


def _tail(path: Path, limit: int = 2000) -> str:
    try:
        return path.read_text(errors="replace")[-limit:]
    except OSError:
        return "<unreadable>"


def toon_decode(text: str):
    """Decodes TOON with `ide-mcp toon decode` and returns the JSON value."""
    done = subprocess.run(
        [str(IDE_MCP), "toon", "decode"],
        input=text.encode("utf-8"),
        capture_output=True,
        timeout=20,
    )
    assert done.returncode == 0, f"toon decode failed: {done.stderr.decode(errors='replace')}"
    return json.loads(done.stdout)


@pytest.fixture
def anyio_backend():
    return "asyncio"


# The Java headless host (scripts/serve.sh) on a temporary git project.


@pytest.fixture(scope="session")
def built_host():
    """Builds the jar and the bridge once (quick when they are up to date)."""
    done = subprocess.run([str(SERVE), "--help"], capture_output=True, text=True, timeout=BUILD_TIMEOUT)
    assert done.returncode == 0, f"scripts/serve.sh --help failed: {done.stderr[-3000:]}"
    assert "HeadlessHost" in done.stdout
    return SERVE


#: Where npm puts the Node clients' executables (claude, gemini, mcp-inspector).
NODE_BIN = HERE / "node_modules" / ".bin"


def agent_env(home: Path, **extra: str) -> dict[str, str]:
    """The environment for an agent CLI from NODE_BIN: a private HOME (its settings go there),
    nothing of the caller's MCP_, ANTHROPIC_, CLAUDE_ or GEMINI_ settings, and `extra`."""
    home.mkdir(parents=True, exist_ok=True)
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("MCP_", "ANTHROPIC_", "CLAUDE_", "GEMINI_", "GOOGLE_"))}
    env.update(HOME=str(home), PATH=f"{NODE_BIN}{os.pathsep}{env.get('PATH', '')}", **extra)
    return env


def listed_servers(output: str) -> dict[str, str]:
    """The state of each `ide-…` server in the output of `claude mcp list` or `gemini mcp list`:
    `ide-x-code: <command> - ✔ Connected` (Claude Code), `✓ ide-x-code: <command> (stdio) -
    Connected` (Gemini CLI); a failure reads `✘ Failed to connect — <reason>`, `Disabled`."""
    return dict(re.findall(r"^\W*(ide-[\w-]+): .* - \W*(\w.*)$", output, re.MULTILINE))


def _git(project: Path, *args: str) -> None:
    done = subprocess.run(["git", *args], cwd=project, capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, f"git {' '.join(args)}: {done.stderr}"


@pytest.fixture
def project():
    """A small git project with one commit, one uncommitted change, a tasks file and a secret beside it."""
    temp = Path(tempfile.mkdtemp(prefix="imcp-proj-", dir="/tmp")).resolve()
    root = temp / "project"
    (root / "src").mkdir(parents=True)
    (temp / "secret.txt").write_text("a secret outside the project\n")
    (root / "README.md").write_text("# Demo\n\nA demo project.\n")
    (root / "src" / "main.py").write_text("def main():\n    # TODO: say hello\n    print('hello')\n")
    (root / ".ide-mcp").mkdir()
    (root / ".ide-mcp" / "tasks.json").write_text(
        '{"tasks": {"hello": {"command": ["echo", "hello"], "description": "Says hello"}}}'
    )
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "-c", "user.name=Grace Hopper", "-c", "user.email=grace@example.com", "commit", "-q", "-m", "First commit")
    (root / "README.md").write_text("# Demo\n\nA demo project, changed.\n")
    yield root
    shutil.rmtree(temp, ignore_errors=True)


def serve_project(built_host, project):
    """The headless host, built already, serving `project` (see conftest.serving)."""
    env = dict(os.environ, IDE_MCP_SKIP_BUILD="1")

    def command(base):
        return [str(built_host), "--base", str(base), "--stop-on-stdin-eof", str(project)]

    return serving(command, what="headless host", env=env)
