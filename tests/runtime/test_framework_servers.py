"""Guarded tools served by a real MCP server and called by a real Pydantic AI agent, in process:
schemas kept, the observation advertised as the output, the run named by the framework."""

from __future__ import annotations

import asyncio
from typing import Any

import jsonschema
import pytest

from agentguard.runtime import MemoryLedger, Runtime, guarded
from agentguard.runtime.observations import observation_schema

mcpserver = pytest.importorskip("mcp.server.mcpserver")
mcp = pytest.importorskip("mcp")
# the request contexts the servers pass a tool (module level: annotations name them)
Context = mcpserver.Context
ServerRequestContext = pytest.importorskip("mcp.server.context").ServerRequestContext


@pytest.fixture
def runtime() -> Runtime:
    return Runtime(ledger=MemoryLedger())


def _served(runtime: Runtime, ran: list[str], *, key: Any = None) -> Any:
    """An MCP server with a sync and an async guarded tool taking the request's context."""
    server = mcpserver.MCPServer("shop")

    @server.tool()
    @guarded(runtime, risk="write", key=key)
    def create_order(cart_id: str, ctx: Context, quantity: int = 1) -> str:
        """Create an order for a cart."""
        ran.append(cart_id)
        return f"order for {cart_id} x{quantity}"

    @server.tool()
    @guarded(runtime, risk="write", replay="never", key=key)
    async def refund_payment(payment_id: str, amount_cents: int, ctx: Context) -> dict[str, Any]:
        """Refund part of a payment."""
        ran.append(payment_id)
        return {"refunded": amount_cents, "payment": payment_id}

    return server


def _bare_server() -> Any:
    server = mcpserver.MCPServer("shop")

    @server.tool()
    def create_order(cart_id: str, ctx: Context, quantity: int = 1) -> str:
        """Create an order for a cart."""
        return ""

    @server.tool()
    async def refund_payment(payment_id: str, amount_cents: int, ctx: Context) -> dict[str, Any]:
        """Refund part of a payment."""
        return {}

    return server


async def _listed(server: Any) -> dict[str, Any]:
    async with mcp.Client(server) as client:
        return {tool.name: tool for tool in (await client.list_tools()).tools}


def test_mcp_lists_the_guarded_tools_with_their_schema_and_the_observation_as_output(
    runtime: Runtime,
) -> None:
    guarded_tools = asyncio.run(_listed(_served(runtime, [])))
    bare_tools = asyncio.run(_listed(_bare_server()))
    assert set(guarded_tools) == {"create_order", "refund_payment"}
    for name, tool in guarded_tools.items():
        bare = bare_tools[name]
        assert tool.description == bare.description
        assert tool.input_schema == bare.input_schema  # ctx is the server's, not the model's
        assert "ctx" not in tool.input_schema["properties"]
        output = tool.output_schema
        assert output is not None and output != bare.output_schema
        assert set(output["required"]) == {"ok", "code", "content", "result", "metadata"}


def test_mcp_calls_sync_and_async_guarded_tools_without_a_runtime_run(runtime: Runtime) -> None:
    ran: list[str] = []
    server = _served(runtime, ran)
    schema = observation_schema()

    async def calls() -> list[Any]:
        async with mcp.Client(server) as client:
            return [
                await client.call_tool("create_order", {"cart_id": "c1", "quantity": 2}),
                await client.call_tool("refund_payment", {"payment_id": "p1", "amount_cents": 5}),
            ]

    created, refunded = asyncio.run(calls())
    for result in (created, refunded):
        assert not result.is_error, result
        observation = result.structured_content
        jsonschema.validate(observation, schema)  # what the client receives is an observation
        assert observation["ok"] is True
        assert observation["metadata"]["run_id"].startswith("mcp:")
    assert created.structured_content["result"] == "order for c1 x2"
    assert refunded.structured_content["result"] == {"refunded": 5, "payment": "p1"}
    assert ran == ["c1", "p1"]
    entries = {entry.tool_name: entry for entry in runtime.ledger.entries()}
    assert entries["create_order"].args == {"cart_id": "c1", "quantity": 2}  # no ctx stored
    assert entries["refund_payment"].status.value == "succeeded"


def test_a_repeated_mcp_request_keyed_by_its_arguments_runs_once(runtime: Runtime) -> None:
    """MCP's protocol is stateless: a request names no conversation, so a tool whose key names
    the request recognises the model's retry; the retry gets the recorded result."""
    ran: list[str] = []
    server = _served(runtime, ran, key=("cart_id",))

    async def twice() -> list[Any]:
        async with mcp.Client(server) as client:
            first = await client.call_tool("create_order", {"cart_id": "c9"})
        async with mcp.Client(server) as client:
            second = await client.call_tool("create_order", {"cart_id": "c9"})
        return [first, second]

    first, second = asyncio.run(twice())
    assert ran == ["c9"]
    assert second.structured_content["metadata"]["replayed"] is True
    assert second.structured_content["result"] == first.structured_content["result"]


def test_the_low_level_mcp_server_passes_its_request_context_to_a_guarded_tool(
    runtime: Runtime,
) -> None:
    lowlevel = pytest.importorskip("mcp.server.lowlevel")
    types = pytest.importorskip("mcp.types")
    ran: list[str] = []

    @guarded(runtime, risk="write")
    async def place_order(ctx: ServerRequestContext, cart_id: str) -> str:
        """Create an order for a cart."""
        ran.append(cart_id)
        return f"order for {cart_id}"

    async def list_tools(ctx: Any, params: Any) -> Any:
        return types.ListToolsResult(
            tools=[
                types.Tool(
                    name="place_order",
                    description="Create an order for a cart.",
                    input_schema={"type": "object", "properties": {"cart_id": {"type": "string"}}},
                    output_schema=observation_schema(),
                )
            ]
        )

    async def call_tool(ctx: Any, params: Any) -> Any:
        observation = await place_order(ctx, **(params.arguments or {}))
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=observation["content"])],
            structured_content=observation,
        )

    server = lowlevel.Server("shop", on_list_tools=list_tools, on_call_tool=call_tool)

    async def call() -> Any:
        async with mcp.Client(server) as client:
            return await client.call_tool("place_order", {"cart_id": "c1"})

    result = asyncio.run(call())
    assert not result.is_error, result
    assert result.structured_content["ok"] is True
    assert result.structured_content["metadata"]["run_id"].startswith("mcp:")
    assert ran == ["c1"]
    assert runtime.ledger.entries(tool_name="place_order")[0].args == {"cart_id": "c1"}


def test_an_mcp_session_over_http_names_the_run_so_the_models_retry_runs_once(
    runtime: Runtime,
) -> None:
    """Over streamable HTTP a client that opens a session (the initialize handshake) sends its
    Mcp-Session-Id with each request: the run, so a retry in that session is the same request.
    Served in process through the ASGI app, no socket."""
    httpx2 = pytest.importorskip("httpx2")
    streamable_http = pytest.importorskip("mcp.client.streamable_http")
    ran: list[str] = []
    server = _served(runtime, ran)
    url = "http://127.0.0.1:8000/mcp"

    async def in_one_session() -> list[Any]:
        app = server.streamable_http_app(json_response=True)
        async with server.session_manager.run():
            http = httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app))
            transport = streamable_http.streamable_http_client(url, http_client=http)
            async with mcp.Client(transport, mode="legacy") as client:
                return [
                    await client.call_tool("create_order", {"cart_id": "c1"}),
                    await client.call_tool("create_order", {"cart_id": "c1"}),
                ]

    first, retry = asyncio.run(asyncio.wait_for(in_one_session(), 60))
    assert ran == ["c1"]
    run_id = first.structured_content["metadata"]["run_id"]
    assert run_id.startswith("mcp:") and not run_id.startswith("mcp:session_")
    assert retry.structured_content["metadata"]["replayed"] is True
    assert retry.structured_content["metadata"]["run_id"] == run_id


def test_mcp_1_names_the_run_from_its_request_contextvar_without_a_ctx_parameter(
    runtime: Runtime,
) -> None:
    """mcp 1.x (FastMCP) keeps the request being served in a contextvar: a guarded tool needs
    no ctx parameter there, and the connection's session names the run. Runs where mcp<2 is
    installed."""
    fastmcp = pytest.importorskip("mcp.server.fastmcp")
    memory = pytest.importorskip("mcp.shared.memory")
    ran: list[str] = []
    server = fastmcp.FastMCP("shop")

    @server.tool()
    @guarded(runtime, risk="write")
    def create_order(cart_id: str) -> str:
        """Create an order for a cart."""
        ran.append(cart_id)
        return f"order for {cart_id}"

    async def twice() -> list[Any]:
        connect = memory.create_connected_server_and_client_session
        async with connect(server._mcp_server) as client:
            return [
                await client.call_tool("create_order", {"cart_id": "c1"}),
                await client.call_tool("create_order", {"cart_id": "c1"}),
            ]

    first, retry = asyncio.run(twice())
    assert ran == ["c1"]
    assert first.structuredContent["metadata"]["run_id"].startswith("mcp:")
    assert retry.structuredContent["metadata"]["replayed"] is True
