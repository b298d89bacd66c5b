"""A hand-written client on one `ide-mcp bridge` connection: JSON-RPC lines written to its
standard input and read from its standard output, mixing the 2026-07-28 era (`server/discover`,
the protocol version in every request's `_meta`) with the legacy `initialize` handshake."""

from __future__ import annotations

import json
import queue
import subprocess
import threading
import time

import pytest

from conftest import DOMAIN, toon_decode

pytestmark = pytest.mark.timeout(60)

MODERN = "2026-07-28"
LEGACY = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
UNSUPPORTED_PROTOCOL_VERSION = -32022

#: The longest any single reply may take.
WAIT = 15.0


def modern_meta(version: str = MODERN, **extra) -> dict:
    return {VERSION_KEY: version, **extra}


class RawBridge:
    """One bridge process: send JSON-RPC messages, read what comes back, with timeouts."""

    def __init__(self, command: list[str]):
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        self.incoming: queue.Queue = queue.Queue()
        self.seen: list[dict] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.process.stdout:
            self.incoming.put(json.loads(line))
        self.incoming.put(None)

    def send(self, message: dict) -> None:
        self.process.stdin.write(json.dumps({"jsonrpc": "2.0", **message}, ensure_ascii=False).encode() + b"\n")
        self.process.stdin.flush()

    def next_message(self, deadline: float) -> dict | None:
        """The next message before `deadline` (monotonic), or None when none came by then."""
        try:
            message = self.incoming.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            return None
        assert message is not None, "the bridge closed its standard output"
        self.seen.append(message)
        return message

    def request(self, id_, method: str, params: dict | None = None, timeout: float = WAIT) -> dict:
        """Sends a request and returns its response; messages read meanwhile stay in `seen`."""
        self.send({"id": id_, "method": method, **({"params": params} if params is not None else {})})
        return self.response(id_, timeout)

    def response(self, id_, timeout: float = WAIT) -> dict:
        deadline = time.monotonic() + timeout
        for message in self.seen:
            if message.get("id") == id_ and "method" not in message:
                return message
        while True:
            message = self.next_message(deadline)
            assert message is not None, f"no response to {id_!r} within {timeout} s"
            if message.get("id") == id_ and "method" not in message:
                return message

    def close(self) -> int:
        """Closes standard input and returns the bridge's exit status."""
        self.process.stdin.close()
        try:
            return self.process.wait(timeout=WAIT)
        finally:
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait(timeout=WAIT)
            self.process.stdout.close()
            self.process.stderr.close()


@pytest.fixture
def bridge(ide_servers):
    client = RawBridge(ide_servers.bridge("code"))
    yield client
    if client.process.poll() is None and not client.process.stdin.closed:
        assert client.close() == 0


def initialize_params(version: str) -> dict:
    return {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "raw-test", "version": "1"}}


def call_params(tool: str, arguments: dict, meta: dict | None = None) -> dict:
    params = {"name": tool, "arguments": arguments}
    if meta is not None:
        params["_meta"] = meta
    return params


def text_of(response: dict) -> str:
    result = response["result"]
    assert [block["type"] for block in result["content"]] == ["text"], result
    return result["content"][0]["text"]


def test_discover_then_initialize_then_modern_calls_on_one_connection(bridge):
    discovered = bridge.request(1, "server/discover", {"_meta": modern_meta()})
    assert "error" not in discovered, discovered
    result = discovered["result"]
    assert result["resultType"] == "complete"
    assert MODERN in result["supportedVersions"]
    assert set(LEGACY) <= set(result["supportedVersions"])
    assert "tools" in result["capabilities"]
    assert result["serverInfo"]["name"] == "ide-mcp-code"

    # A legacy handshake on the same connection, as clients that probed first may still send.
    initialized = bridge.request(2, "initialize", initialize_params("2025-06-18"))
    assert initialized["result"]["protocolVersion"] == "2025-06-18"
    assert initialized["result"]["serverInfo"]["name"] == "ide-mcp-code"
    assert "tools" in initialized["result"]["capabilities"]
    bridge.send({"method": "notifications/initialized"})

    value = "modern ünïcode 🎉, still one connection"
    called = bridge.request(3, "tools/call", call_params("run", {"tool": "echo", "args": {"value": value}}, modern_meta()))
    assert called["result"]["resultType"] == "complete"
    assert called["result"]["isError"] is False
    assert toon_decode(text_of(called)) == {"value": value}

    listed = bridge.request(4, "tools/list", {"_meta": modern_meta()})
    assert [tool["name"] for tool in listed["result"]["tools"]] == ["domains", "tools", "run"]
    assert listed["result"]["resultType"] == "complete"

    # Legacy-style requests, without the version in _meta, still work on it too.
    legacy_call = bridge.request(5, "tools/call", call_params("tools", {"domain": DOMAIN}))
    assert [t["name"] for t in toon_decode(text_of(legacy_call))["tools"]] == ["echo", "sleep", "fail", "big"]

    # An unsupported version is refused with the versions the server does support.
    refused = bridge.request(6, "tools/call", call_params("domains", {}, modern_meta("2099-01-01")))
    assert "result" not in refused
    error = refused["error"]
    assert error["code"] == UNSUPPORTED_PROTOCOL_VERSION
    assert error["data"]["requested"] == "2099-01-01"
    assert MODERN in error["data"]["supported"]
    assert set(LEGACY) <= set(error["data"]["supported"])

    # The refusal did not break the connection.
    again = bridge.request(7, "tools/call", call_params("domains", {}, modern_meta()))
    assert DOMAIN in text_of(again)
    assert bridge.close() == 0


def test_discover_with_an_unsupported_version_is_refused(bridge):
    refused = bridge.request("d", "server/discover", {"_meta": modern_meta("2099-01-01")})
    assert refused["error"]["code"] == UNSUPPORTED_PROTOCOL_VERSION
    assert refused["error"]["data"]["requested"] == "2099-01-01"
    assert MODERN in refused["error"]["data"]["supported"]
    # A client retries at a version from the list, on the same connection.
    accepted = bridge.request("d2", "server/discover", {"_meta": modern_meta(refused["error"]["data"]["supported"][0])})
    assert accepted["result"]["resultType"] == "complete"


@pytest.mark.parametrize("version", LEGACY)
def test_initialize_accepts_each_legacy_version(bridge, version):
    initialized = bridge.request(1, "initialize", initialize_params(version))
    assert initialized["result"]["protocolVersion"] == version
    bridge.send({"method": "notifications/initialized"})
    listed = bridge.request(2, "tools/list", {})
    assert [tool["name"] for tool in listed["result"]["tools"]] == ["domains", "tools", "run"]


def test_initialize_with_an_unknown_version_counter_offers_a_supported_one(bridge):
    initialized = bridge.request(1, "initialize", initialize_params("2023-01-01"))
    assert initialized["result"]["protocolVersion"] in LEGACY


def test_errors_for_unknown_methods_and_tools(bridge):
    assert bridge.request(1, "no/such/method", {"_meta": modern_meta()})["error"]["code"] == -32601
    assert bridge.request(2, "tools/call", call_params("echo", {}, modern_meta()))["error"]["code"] == -32602


def test_progress_heartbeats_arrive_before_the_reply(bridge):
    meta = modern_meta(progressToken="sleepy")
    response = bridge.request(1, "tools/call", call_params("run", {"tool": "sleep", "args": {"ms": 2500}}, meta))
    assert toon_decode(text_of(response)) == {"slept": 2500}
    position = bridge.seen.index(response)
    progress = [m for m in bridge.seen[:position] if m.get("method") == "notifications/progress"]
    assert len(progress) >= 2, bridge.seen
    assert all(m["params"]["progressToken"] == "sleepy" for m in progress)
    values = [m["params"]["progress"] for m in progress]
    assert values == sorted(values) and len(set(values)) == len(values)
    assert not [m for m in bridge.seen[position + 1:] if m.get("method") == "notifications/progress"]


def test_cancelled_call_gets_no_reply_and_others_go_on(bridge):
    started = time.monotonic()
    bridge.send({"id": "long", "method": "tools/call", "params": call_params("run", {"tool": "sleep", "args": {"ms": 3000}}, modern_meta())})
    bridge.send({"id": "short", "method": "tools/call", "params": call_params("run", {"tool": "sleep", "args": {"ms": 300}}, modern_meta())})
    time.sleep(0.3)
    bridge.send({"method": "notifications/cancelled", "params": {"requestId": "long", "reason": "test", "_meta": modern_meta()}})
    # The uncancelled call, sent alongside, still answers.
    assert toon_decode(text_of(bridge.response("short"))) == {"slept": 300}
    echoed = bridge.request("echo", "tools/call", call_params("run", {"tool": "echo", "args": {"value": 1}}, modern_meta()))
    assert toon_decode(text_of(echoed)) == {"value": 1}
    # Wait past the time the long sleep would have answered: nothing may come for it.
    deadline = started + 4.0
    while bridge.next_message(deadline) is not None:
        pass
    assert not [m for m in bridge.seen if m.get("id") == "long"], bridge.seen
