"""The MCP Inspector's CLI mode (`@modelcontextprotocol/inspector --cli`) through `ide-mcp bridge`."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from conftest import DOMAIN, HERE, toon_decode

pytestmark = pytest.mark.timeout(120)

INSPECTOR = HERE / "node_modules" / ".bin" / "mcp-inspector"
TAP = HERE / "stdio_tap.py"

#: How long one Inspector run may take (it starts node, the bridge, and connects).
RUN_TIMEOUT = 60


@pytest.fixture
def inspector(ide_servers, tmp_path):
    """Runs the Inspector CLI against the code server's bridge; returns (status, stdout, stderr).
    With `tap=True` the bridge runs under stdio_tap.py, and the lines it carried are returned
    as a fourth element."""
    if not INSPECTOR.exists():
        pytest.fail(f"{INSPECTOR} is missing: run `npm ci` in {HERE}")
    home = tmp_path / "home"
    home.mkdir()
    # A private HOME: the Inspector keeps its catalog and storage under ~/.mcp-inspector.
    env = {key: value for key, value in os.environ.items() if not key.startswith("MCP_")}
    env["HOME"] = str(home)

    def run(*options: str, era: str | None = None, tap: bool = False, output: str = "json"):
        server = ide_servers.bridge("code")
        log = tmp_path / "tap.log"
        if tap:
            log.unlink(missing_ok=True)
            server = [sys.executable, str(TAP), str(log), *server]
        command = [str(INSPECTOR), "--cli", "--format", output]
        if era:
            command += ["--protocol-era", era]
        command += [*server, *options]
        done = subprocess.run(
            command, capture_output=True, text=True, encoding="utf-8", timeout=RUN_TIMEOUT, env=env, cwd=tmp_path
        )
        outcome = (done.returncode, done.stdout, done.stderr)
        if tap:
            lines = log.read_text(encoding="utf-8").splitlines() if log.exists() else []
            outcome += ([(line[0], json.loads(line[2:])) for line in lines],)
        return outcome

    return run


def tool_text(stdout: str) -> tuple[dict, str]:
    result = json.loads(stdout)["result"]
    assert len(result["content"]) == 1, result
    assert result["content"][0]["type"] == "text"
    return result, result["content"][0]["text"]


def test_tools_list_names_the_three_meta_tools(inspector):
    status, stdout, stderr = inspector("--method", "tools/list")
    assert status == 0, stderr
    tools = json.loads(stdout)["result"]["tools"]
    assert [tool["name"] for tool in tools] == ["domains", "tools", "run"]
    for tool in tools:
        assert tool["inputSchema"]["type"] == "object"


def test_tools_list_in_text_format_names_them_too(inspector):
    # The default, human-readable output.
    status, stdout, stderr = inspector("--method", "tools/list", output="text")
    assert status == 0, stderr
    for name in ("domains", "tools", "run"):
        assert f'"name": "{name}"' in stdout


def test_call_domains(inspector):
    status, stdout, stderr = inspector("--method", "tools/call", "--tool-name", "domains")
    assert status == 0, stderr
    result, text = tool_text(stdout)
    assert result["isError"] is False
    assert DOMAIN in [d["name"] for d in toon_decode(text)["domains"]]


def test_call_tools_with_a_string_argument(inspector):
    status, stdout, stderr = inspector(
        "--method", "tools/call", "--tool-name", "tools", "--tool-arg", f"domain={DOMAIN}"
    )
    assert status == 0, stderr
    _, text = tool_text(stdout)
    assert [tool["name"] for tool in toon_decode(text)["tools"]] == ["echo", "sleep", "fail", "big"]


def test_run_echo_with_an_object_tool_arg(inspector):
    # `--tool-arg key=value` parses the value as JSON when it can, so an object goes as one.
    value = "héllo 🎉, world"
    status, stdout, stderr = inspector(
        "--method", "tools/call", "--tool-name", "run",
        "--tool-arg", "tool=echo", "args=" + json.dumps({"value": value}, ensure_ascii=False),
    )
    assert status == 0, stderr
    result, text = tool_text(stdout)
    assert result["isError"] is False
    assert value in text
    assert toon_decode(text) == {"value": value}


def test_run_echo_with_tool_args_json(inspector):
    value = {"nested": [1, 2.5, None, "ü"], "flag": True}
    arguments = {"tool": "echo", "args": {"value": value}}
    status, stdout, stderr = inspector(
        "--method", "tools/call", "--tool-name", "run", "--tool-args-json", json.dumps(arguments)
    )
    assert status == 0, stderr
    _, text = tool_text(stdout)
    assert toon_decode(text) == {"value": value}


def test_run_fail_is_reported_as_a_tool_error(inspector):
    status, stdout, stderr = inspector(
        "--method", "tools/call", "--tool-name", "run",
        "--tool-arg", "tool=fail", 'args={"message": "boom"}',
    )
    # The Inspector's exit status for a tool result with isError: true.
    assert status == 5, (stdout, stderr)
    assert "tool_is_error" in stderr
    result, text = tool_text(stdout)
    assert result["isError"] is True
    assert "boom" in text


@pytest.mark.parametrize(
    "era, first_method, version",
    [("legacy", "initialize", "2025-11-25"), ("modern", "server/discover", "2026-07-28")],
)
def test_each_protocol_era_on_the_wire(inspector, era, first_method, version):
    status, stdout, stderr, wire = inspector(
        "--method", "tools/call", "--tool-name", "run",
        "--tool-arg", "tool=echo", 'args={"value": "era"}',
        era=era, tap=True,
    )
    assert status == 0, stderr
    assert toon_decode(tool_text(stdout)[1]) == {"value": "era"}
    sent = [message for direction, message in wire if direction == ">"]
    assert sent and sent[0]["method"] == first_method, sent
    call = next(message for message in sent if message.get("method") == "tools/call")
    if era == "modern":
        assert call["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] == version
        assert not any(message.get("method") == "initialize" for message in sent)
    else:
        assert sent[0]["params"]["protocolVersion"] == version
        received = [message for direction, message in wire if direction == "<"]
        assert received[0]["result"]["protocolVersion"] == version
