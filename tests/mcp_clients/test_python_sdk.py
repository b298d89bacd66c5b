"""The official MCP Python SDK (`mcp`, v2) talking to a server through `ide-mcp bridge`."""

from __future__ import annotations

from contextlib import asynccontextmanager

import anyio
import mcp_types
import pytest
from mcp import Client, ClientSession, StdioServerParameters, stdio_client
from mcp_types.version import LATEST_HANDSHAKE_VERSION, LATEST_MODERN_VERSION

from conftest import DOMAIN, toon_decode

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]

#: Every wait in these tests is bounded by this many seconds, or less where stated.
WAIT = 20

UNICODE_VALUE = 'héllo → 世界 🎉 "quoted", with: commas\nand a newline'


def stdio_params(servers, name: str = "code") -> StdioServerParameters:
    command, *args = servers.bridge(name)
    return StdioServerParameters(command=command, args=args)


@asynccontextmanager
async def legacy_session(servers, **session_options):
    """A ClientSession over the bridge's stdio, initialized with the legacy handshake."""
    async with stdio_client(stdio_params(servers)) as (read, write):
        async with ClientSession(read, write, read_timeout_seconds=WAIT, **session_options) as session:
            with anyio.fail_after(WAIT):
                await session.initialize()
            yield session


def text_of(result: mcp_types.CallToolResult) -> str:
    assert len(result.content) == 1, result
    block = result.content[0]
    assert block.type == "text", block
    return block.text


async def test_initialize_negotiates_the_latest_handshake_version(ide_servers):
    async with stdio_client(stdio_params(ide_servers)) as (read, write):
        async with ClientSession(read, write, read_timeout_seconds=WAIT) as session:
            with anyio.fail_after(WAIT):
                result = await session.initialize()
            assert result.protocol_version == LATEST_HANDSHAKE_VERSION == "2025-11-25"
            assert session.protocol_version == "2025-11-25"
            assert result.server_info.name == "ide-mcp-code"
            assert result.server_info.version
            assert result.capabilities.tools is not None
            assert "domains()" in (result.instructions or "")


async def test_list_tools_gives_the_three_meta_tools_in_order(ide_servers):
    async with legacy_session(ide_servers) as session:
        with anyio.fail_after(WAIT):
            listing = await session.list_tools()
        assert [tool.name for tool in listing.tools] == ["domains", "tools", "run"]
        by_name = {tool.name: tool for tool in listing.tools}
        assert by_name["tools"].input_schema["required"] == ["domain"]
        assert by_name["run"].input_schema["required"] == ["tool"]
        assert set(by_name["run"].input_schema["properties"]) == {"tool", "args"}
        for tool in listing.tools:
            assert tool.description


async def test_domains_names_the_diagnostics_domain(ide_servers):
    async with legacy_session(ide_servers) as session:
        with anyio.fail_after(WAIT):
            result = await session.call_tool("domains", {})
        assert result.is_error is False
        text = text_of(result)
        assert DOMAIN in text
        domains = toon_decode(text)["domains"]
        assert DOMAIN in [d["name"] for d in domains]


async def test_tools_lists_the_domain_tools(ide_servers):
    async with legacy_session(ide_servers) as session:
        with anyio.fail_after(WAIT):
            result = await session.call_tool("tools", {"domain": DOMAIN})
        assert result.is_error is False
        described = toon_decode(text_of(result))
        assert described["domain"] == DOMAIN
        tools = {tool["name"]: tool for tool in described["tools"]}
        assert list(tools) == ["echo", "sleep", "fail", "big"]
        assert tools["echo"]["parameters"] == [
            {"name": "value", "type": "any", "required": True, "description": "Any JSON value"}
        ]
        assert tools["echo"]["readOnly"] is True


async def test_run_echo_round_trips_unicode_exactly(ide_servers):
    value = {"text": UNICODE_VALUE, "list": [1, 2.5, None, True, "ü"], "empty": {}}
    async with legacy_session(ide_servers) as session:
        with anyio.fail_after(WAIT):
            result = await session.call_tool("run", {"tool": "echo", "args": {"value": value}})
        assert result.is_error is False
        assert toon_decode(text_of(result)) == {"value": value}


async def test_run_fail_is_a_tool_error_with_the_message(ide_servers):
    async with legacy_session(ide_servers) as session:
        with anyio.fail_after(WAIT):
            result = await session.call_tool("run", {"tool": "fail", "args": {"message": "kaputt ✗"}})
        assert result.is_error is True
        assert "kaputt ✗" in text_of(result)


async def test_run_unknown_tool_is_a_tool_error(ide_servers):
    async with legacy_session(ide_servers) as session:
        with anyio.fail_after(WAIT):
            result = await session.call_tool("run", {"tool": "no_such_tool", "args": {}})
        assert result.is_error is True
        assert "no_such_tool" in text_of(result)


async def test_sleep_reports_progress_heartbeats(ide_servers):
    updates: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        updates.append((progress, total, message))

    async with legacy_session(ide_servers) as session:
        with anyio.fail_after(WAIT):
            result = await session.call_tool(
                "run", {"tool": "sleep", "args": {"ms": 2500}}, progress_callback=on_progress
            )
        assert result.is_error is False
        assert toon_decode(text_of(result)) == {"slept": 2500}
    assert len(updates) >= 2, updates
    progress = [update[0] for update in updates]
    assert progress == sorted(progress) and len(set(progress)) == len(progress), updates


@asynccontextmanager
async def tapped(transport, log: list[tuple[str, object]]):
    """The transport's streams, with every message in either direction appended to `log`."""
    async with transport as (read, write):
        in_send, in_receive = anyio.create_memory_object_stream(16)
        out_send, out_receive = anyio.create_memory_object_stream(16)

        async def pump_in():
            async with in_send:
                async for item in read:
                    log.append(("in", getattr(item, "message", item)))
                    await in_send.send(item)

        async def pump_out():
            async with out_receive:
                async for item in out_receive:
                    log.append(("out", item.message))
                    await write.send(item)

        async with anyio.create_task_group() as group:
            group.start_soon(pump_in)
            group.start_soon(pump_out)
            try:
                yield in_receive, out_send
            finally:
                group.cancel_scope.cancel()


async def test_cancelled_call_sends_cancel_and_gets_no_reply(ide_servers):
    log: list[tuple[str, object]] = []
    async with tapped(stdio_client(stdio_params(ide_servers)), log) as (read, write):
        async with ClientSession(read, write, read_timeout_seconds=WAIT) as session:
            with anyio.fail_after(WAIT):
                await session.initialize()
            started = anyio.current_time()
            with anyio.move_on_after(0.5) as scope:
                await session.call_tool("run", {"tool": "sleep", "args": {"ms": 3000}})
            assert scope.cancelled_caught
            assert anyio.current_time() - started < 2

            # The connection still works (and the cancel, sent before this call, has gone out).
            with anyio.fail_after(WAIT):
                echoed = await session.call_tool("run", {"tool": "echo", "args": {"value": "after"}})
            assert toon_decode(text_of(echoed)) == {"value": "after"}

            outgoing = [m for d, m in log if d == "out"]
            calls = [m for m in outgoing if getattr(m, "method", None) == "tools/call"]
            cancels = [m for m in outgoing if getattr(m, "method", None) == "notifications/cancelled"]
            assert len(calls) == 2 and len(cancels) == 1, outgoing
            sleep_id = calls[0].id
            assert cancels[0].params["requestId"] == sleep_id
            assert outgoing.index(cancels[0]) < outgoing.index(calls[1])

            # Had the sleep not been cancelled, it would have answered by the end of this wait.
            await anyio.sleep(max(0.0, started + 3.5 - anyio.current_time()))
            replies = [m for d, m in log if d == "in" and getattr(m, "id", None) == sleep_id]
            assert replies == [], replies


async def test_modern_discover_then_calls_in_the_2026_era(ide_servers):
    async with stdio_client(stdio_params(ide_servers)) as (read, write):
        async with ClientSession(read, write, read_timeout_seconds=WAIT) as session:
            with anyio.fail_after(WAIT):
                discovered = await session.discover()
            assert session.protocol_version == LATEST_MODERN_VERSION == "2026-07-28"
            assert "2026-07-28" in discovered.supported_versions
            assert discovered.capabilities.tools is not None
            assert session.server_info is not None and session.server_info.name == "ide-mcp-code"
            with anyio.fail_after(WAIT):
                listing = await session.list_tools()
                result = await session.call_tool("run", {"tool": "echo", "args": {"value": UNICODE_VALUE}})
            assert [tool.name for tool in listing.tools] == ["domains", "tools", "run"]
            assert result.is_error is False
            assert toon_decode(text_of(result)) == {"value": UNICODE_VALUE}


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_high_level_client_in_each_mode(ide_servers, mode):
    expected = {"auto": "2026-07-28", "legacy": "2025-11-25"}[mode]
    with anyio.fail_after(WAIT):
        async with Client(stdio_params(ide_servers, "vcs"), mode=mode, read_timeout_seconds=WAIT) as client:
            assert client.protocol_version == expected
            listing = await client.list_tools()
            assert [tool.name for tool in listing.tools] == ["domains", "tools", "run"]
            result = await client.call_tool("domains", {})
            assert result.is_error is False
            assert "`vcs` server" in text_of(result)
            assert [d["name"] for d in toon_decode(text_of(result))["domains"]] == [DOMAIN]
