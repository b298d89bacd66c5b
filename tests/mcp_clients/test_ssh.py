"""Remote reach over OpenSSH: an agent on another machine reaches the IDE's servers through a
real `sshd` (Debian's openssh-server), started here on 127.0.0.1 on a free port with a host
key of its own and a throwaway client key, logging in as the current user. The MCP Python SDK
drives the tools both ways the docs give (docs/MCP_CLIENT.md, "Another machine"):

(a) `ssh <backend> ide-mcp bridge --project <path> code` as the stdio command;
(b) `ssh -N -L <local.sock>:<remote dir>/code.sock` forwarding the socket, then
    `ide-mcp bridge --token-file <copied token> <local.sock>` on the agent's side.

Both end in a connection sshd makes to the socket, which the servers' peer-uid check sees as the
same user, as it should. The sshd runs without PAM, so it passes IDE_MCP_REGISTRY on (SetEnv)
to the remote bridge, as a login session would give it the same XDG_RUNTIME_DIR.
"""

from __future__ import annotations

import getpass
import os
import shlex
import shutil
import socket
import subprocess
import tempfile
import time
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client

from conftest import IDE_MCP, serving

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(90)]

#: Every wait in these tests is bounded by this many seconds.
WAIT = 20

SSHD = Path("/usr/sbin/sshd")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_until(condition, what: str) -> None:
    deadline = time.monotonic() + WAIT
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"{what} within {WAIT} s")
        time.sleep(0.05)


def accepts(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


class Sshd:
    """A private sshd and what a client needs to log in to it."""

    def __init__(self, directory: Path, port: int):
        self.directory = directory
        self.port = port
        self.key = directory / "client_key"

    def options(self) -> list[str]:
        return [
            "-F", "/dev/null",
            "-i", str(self.key),
            "-p", str(self.port),
            "-o", "IdentitiesOnly=yes",
            "-o", "BatchMode=yes",
            "-o", "StrictHostKeyChecking=yes",
            "-o", f"UserKnownHostsFile={self.directory / 'known_hosts'}",
            "-o", "LogLevel=ERROR",
        ]

    def destination(self) -> str:
        return f"{getpass.getuser()}@127.0.0.1"

    def ssh(self, *extra: str) -> list[str]:
        return ["ssh", *self.options(), *extra]


@pytest.fixture
def sshd(private_registry):
    if not SSHD.exists() or shutil.which("ssh") is None:
        pytest.fail("sshd or ssh is missing: run.sh installs Debian's openssh-server and openssh-client")
    directory = Path(tempfile.mkdtemp(prefix="imcp-ssh-", dir="/tmp"))
    os.chmod(directory, 0o700)
    try:
        for name in ("host_key", "client_key"):
            subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", str(directory / name)],
                           check=True, timeout=WAIT)
        authorized = directory / "authorized_keys"
        shutil.copy(directory / "client_key.pub", authorized)
        os.chmod(authorized, 0o600)
        port = free_port()
        host_public = (directory / "host_key.pub").read_text().split()
        (directory / "known_hosts").write_text(f"[127.0.0.1]:{port} {host_public[0]} {host_public[1]}\n")
        root = os.geteuid() == 0
        config = directory / "sshd_config"
        config.write_text("\n".join([
            f"Port {port}",
            "ListenAddress 127.0.0.1",
            f"HostKey {directory / 'host_key'}",
            f"PidFile {directory / 'sshd.pid'}",
            f"AuthorizedKeysFile {authorized}",
            "PubkeyAuthentication yes",
            "PasswordAuthentication no",
            "KbdInteractiveAuthentication no",
            "UsePAM no",
            # The keys sit under /tmp, which is world-writable: StrictModes would refuse the
            # path, though the test's own directory is 0700 and the files 0600.
            "StrictModes no",
            # As root, sshd must let root in with a key (the test logs in as whoever runs it).
            f"PermitRootLogin {'prohibit-password' if root else 'no'}",
            "AllowStreamLocalForwarding yes",
            "StreamLocalBindUnlink yes",
            f"SetEnv IDE_MCP_REGISTRY={private_registry}",
            "",
        ]))
        if root:
            # sshd's privilege separation directory, which the package's service would create.
            Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)
        log = open(directory / "sshd.log", "wb")
        process = subprocess.Popen([str(SSHD), "-D", "-e", "-f", str(config)], stdout=log, stderr=subprocess.STDOUT)
        try:
            wait_until(lambda: accepts(port) or process.poll() is not None, "sshd listening")
            if process.poll() is not None:
                pytest.fail(f"sshd exited with {process.returncode}: {(directory / 'sshd.log').read_text()}")
            yield Sshd(directory, port)
        finally:
            process.terminate()
            process.wait(timeout=WAIT)
            log.close()
    finally:
        shutil.rmtree(directory, ignore_errors=True)


@contextmanager
def project_servers(tmp_path):
    """A test server registered under a fresh project directory."""
    project = tmp_path / "remote-project"
    (project / "src").mkdir(parents=True)
    with serving(lambda base: [str(IDE_MCP), "testserver", "--base", str(base), "--project", str(project)]) as servers:
        yield project.resolve(), servers


@asynccontextmanager
async def session_over(command: list[str]):
    params = StdioServerParameters(command=command[0], args=command[1:])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write, read_timeout_seconds=WAIT) as session:
            with anyio.fail_after(WAIT):
                await session.initialize()
            yield session


async def echo(session: ClientSession, value: str) -> str:
    with anyio.fail_after(WAIT):
        result = await session.call_tool("run", {"tool": "echo", "args": {"value": value}})
    assert not result.is_error, result
    return result.content[0].text


async def test_the_stdio_command_is_ssh_running_bridge_project_on_the_backend(sshd, tmp_path):
    with project_servers(tmp_path) as (project, servers):
        remote = shlex.join([str(IDE_MCP), "bridge", "--project", str(project / "src"), "code"])
        async with session_over(sshd.ssh(sshd.destination(), remote)) as session:
            assert "over ssh" in await echo(session, "over ssh")
            with anyio.fail_after(WAIT):
                domains = await session.call_tool("domains", {})
            assert "diagnostics" in domains.content[0].text


async def test_a_forwarded_socket_is_bridged_with_a_copied_token_file(sshd, tmp_path):
    with project_servers(tmp_path) as (project, servers):
        remote_socket = servers.socket("code")
        # The agent's side: a token copied over ssh, and a local socket forwarded to the remote one.
        local = Path(tempfile.mkdtemp(prefix="imcp-fwd-", dir="/tmp"))
        try:
            os.chmod(local, 0o700)
            copied = subprocess.run(sshd.ssh(sshd.destination(), shlex.join(["cat", str(servers.directory / "token")])),
                                    capture_output=True, timeout=WAIT)
            assert copied.returncode == 0, copied.stderr
            token_file = local / "token"
            token_file.write_bytes(copied.stdout)
            os.chmod(token_file, 0o600)
            local_socket = local / "code.sock"
            forward = subprocess.Popen(
                sshd.ssh("-N", "-o", "ExitOnForwardFailure=yes", "-L", f"{local_socket}:{remote_socket}",
                         sshd.destination()),
                stdin=subprocess.DEVNULL, stderr=subprocess.PIPE)
            try:
                wait_until(lambda: local_socket.exists() or forward.poll() is not None, "the forwarded socket appearing")
                assert forward.poll() is None, forward.stderr.read()
                bridge = [str(IDE_MCP), "bridge", "--token-file", str(token_file), str(local_socket)]
                async with session_over(bridge) as session:
                    assert "forwarded" in await echo(session, "forwarded")
            finally:
                forward.terminate()
                forward.wait(timeout=WAIT)
        finally:
            shutil.rmtree(local, ignore_errors=True)
