"""The MCP TypeScript SDK 1.x (`@modelcontextprotocol/sdk`) client through `ide-mcp bridge`.

`ts_sdk_client.mjs` runs one scenario per Node process with the SDK's `Client` and
`StdioClientTransport` and prints what it saw as JSON. The SDK 1.x speaks the legacy era only
(`initialize` with 2025-11-25) and validates results with its own schemas, some of them strict:
`ping`'s result may hold nothing but `_meta`, so a modern-era field in a legacy reply
(`resultType`) fails the call with `ZodError … Unrecognized key: "resultType"`.
"""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from conftest import DOMAIN, HERE, toon_decode

pytestmark = pytest.mark.timeout(60)

SCRIPT = HERE / "ts_sdk_client.mjs"
SDK = HERE / "node_modules" / "@modelcontextprotocol" / "sdk" / "package.json"
RUN_TIMEOUT = 40

#: The fields of the 2026-07-28 era, which no legacy-era result may carry.
MODERN_ONLY = {"resultType", "ttlMs", "cacheScope"}


@pytest.fixture
def ts_client(ide_servers):
    """Runs one scenario of ts_sdk_client.mjs against the code server; returns its findings."""
    if not SDK.exists():
        pytest.fail(f"{SDK} is missing: run `npm ci` in {HERE}")
    node = shutil.which("node")
    assert node, "node is missing"

    def run(scenario: str) -> dict:
        done = subprocess.run(
            [node, str(SCRIPT), scenario, *ide_servers.bridge("code")],
            capture_output=True, text=True, encoding="utf-8", timeout=RUN_TIMEOUT, cwd=HERE,
        )
        assert done.returncode == 0, f"{scenario}: exit {done.returncode}\n{done.stderr[-3000:]}"
        findings = json.loads(done.stdout)
        # Everything here is the legacy era: no result may carry a modern-era field.
        assert findings["protocolVersion"] == "2025-11-25"
        for keys in findings["resultKeys"]:
            assert not MODERN_ONLY & set(keys), keys
        return findings

    return run


def test_ping_passes_the_strict_schema(ts_client):
    found = ts_client("ping")
    # EmptyResultSchema is strict: only _meta may be there.
    assert set(found["ping"]) <= {"_meta"}, found["ping"]


def test_list_tools_names_the_three_meta_tools_in_order(ts_client):
    found = ts_client("list")
    assert found["names"] == ["domains", "tools", "run"]
    assert found["schemaTypes"] == ["object"] * 3
    assert found["server"]["name"] == "ide-mcp-code"
    assert "tools" in found["capabilities"]


def test_call_domains_tools_and_run_echo(ts_client):
    found = ts_client("call")
    assert not found["domains"]["isError"]
    assert DOMAIN in [d["name"] for d in toon_decode(found["domains"]["text"])["domains"]]
    assert [t["name"] for t in toon_decode(found["tools"]["text"])["tools"]] == ["echo", "sleep", "fail", "big"]
    assert not found["echo"]["isError"]
    assert toon_decode(found["echo"]["text"]) == {"value": "héllo 🎉, world"}


def test_errors_a_tool_error_and_a_json_rpc_error(ts_client):
    found = ts_client("errors")
    assert found["unknownTool"]["isError"], found
    assert "no_such_tool" in found["unknownTool"]["text"]
    assert found["fail"]["isError"] and "boom" in found["fail"]["text"]
    # A meta-tool that does not exist is a JSON-RPC error, which the SDK throws as McpError.
    rejected = found["unknownMetaTool"]["rejected"]
    assert rejected["mcpError"] and rejected["code"] == -32602, rejected


def test_progress_reaches_onprogress_while_sleep_runs(ts_client):
    found = ts_client("progress")
    assert not found["result"]["isError"]
    assert toon_decode(found["result"]["text"]) == {"slept": 2500}
    updates = found["updates"]
    # A heartbeat every second: at least two in 2.5 s, in order, all before the reply.
    assert len(updates) >= 2, updates
    assert [u["progress"] for u in updates] == sorted(u["progress"] for u in updates)
    assert all(u["atMs"] <= found["replyAtMs"] for u in updates), found


def test_an_aborted_call_is_reported_and_the_server_goes_on(ts_client):
    found = ts_client("cancel")
    rejected = found["aborted"]["rejected"]
    # The SDK sends notifications/cancelled and rejects at once with the abort reason.
    assert rejected["mcpError"] and "AbortError" in rejected["message"], rejected
    assert found["abortedAfterMs"] < 5000
    assert set(found["ping"]) <= {"_meta"}
    assert toon_decode(found["echo"]["text"]) == {"value": "still serving"}
    # No late reply to the cancelled call (the SDK reports one as an unknown id).
    assert found["errors"] == [], found["errors"]
