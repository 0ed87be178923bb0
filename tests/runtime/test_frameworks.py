"""Framework decorators build the same tool schema from a guarded function as from the bare one."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from agentguard.runtime import MemoryLedger, Runtime, guarded


def make_functions(runtime: Runtime) -> dict[str, tuple[Any, Any]]:
    def create_order(
        cart_id: str, quantity: int = 1, gift_note: str | None = None
    ) -> dict[str, Any]:
        """Create an order for a cart.

        Args:
            cart_id: the cart to check out
            quantity: how many of the cart to order
            gift_note: printed on the packing slip
        """
        return {"cart_id": cart_id, "quantity": quantity}

    async def refund_payment(payment_id: str, amount_cents: int) -> str:
        """Refund part of a payment."""
        return f"refunded {amount_cents} of {payment_id}"

    return {
        "sync": (create_order, guarded(runtime, risk="write")(create_order)),
        "async": (refund_payment, guarded(runtime, risk="write", replay="never")(refund_payment)),
    }


@pytest.fixture
def runtime() -> Runtime:
    return Runtime(ledger=MemoryLedger())


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_langchain_tool_schema_is_unchanged(runtime: Runtime, kind: str) -> None:
    tools = pytest.importorskip("langchain_core.tools")
    bare, wrapped = make_functions(runtime)[kind]
    plain_tool, guarded_tool = tools.tool(bare), tools.tool(wrapped)
    assert guarded_tool.name == plain_tool.name
    assert guarded_tool.description == plain_tool.description
    assert (
        guarded_tool.tool_call_schema.model_json_schema()
        == plain_tool.tool_call_schema.model_json_schema()
    )


def test_langchain_invokes_the_guarded_tool_in_the_run_context(runtime: Runtime) -> None:
    tools = pytest.importorskip("langchain_core.tools")
    _, wrapped = make_functions(runtime)["sync"]
    lc_tool = tools.tool(wrapped)
    with runtime.run(run_id="r1", user_id="u1"):
        first = lc_tool.invoke({"cart_id": "c1"})
        second = lc_tool.invoke({"cart_id": "c1"})
    assert first["ok"] is True and first["result"] == {"cart_id": "c1", "quantity": 1}
    assert second["metadata"]["replayed"] is True


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_openai_agents_function_tool_schema_is_unchanged(runtime: Runtime, kind: str) -> None:
    agents = pytest.importorskip("agents")
    bare, wrapped = make_functions(runtime)[kind]
    plain_tool, guarded_tool = agents.function_tool(bare), agents.function_tool(wrapped)
    assert guarded_tool.name == plain_tool.name
    assert guarded_tool.description == plain_tool.description
    assert guarded_tool.params_json_schema == plain_tool.params_json_schema


def _mcp_server() -> Any:
    try:
        from mcp.server.fastmcp import FastMCP  # mcp 1.x

        return FastMCP
    except ImportError:
        pass
    try:
        from mcp.server.mcpserver import MCPServer  # mcp 2.x renamed FastMCP

        return MCPServer
    except ImportError:
        pytest.skip("mcp is not installed")


def _mcp_tools(server: Any) -> dict[str, dict[str, Any]]:
    listed = asyncio.run(server.list_tools())
    result = {}
    for tool in listed:
        data = tool.model_dump(by_alias=True)
        result[data["name"]] = data
    return result


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_mcp_tool_schema_is_unchanged(runtime: Runtime, kind: str) -> None:
    server_class = _mcp_server()
    bare, wrapped = make_functions(runtime)[kind]
    plain_server, guarded_server = server_class("plain"), server_class("guarded")
    plain_server.tool()(bare)
    guarded_server.tool()(wrapped)
    (plain,) = _mcp_tools(plain_server).values()
    (guarded_tool,) = _mcp_tools(guarded_server).values()
    assert guarded_tool["name"] == plain["name"]
    assert guarded_tool["description"] == plain["description"]
    assert guarded_tool["inputSchema"] == plain["inputSchema"]


def test_mcp_calls_the_guarded_tool(runtime: Runtime) -> None:
    server_class = _mcp_server()
    _, wrapped = make_functions(runtime)["async"]
    server = server_class("guarded")
    server.tool()(wrapped)

    async def call() -> Any:
        async with runtime.run(run_id="r1", user_id="u1"):
            return await server.call_tool("refund_payment", {"payment_id": "p1", "amount_cents": 5})

    result = asyncio.run(call())
    text = json.dumps(result, default=lambda value: getattr(value, "model_dump", repr)())
    assert "refunded 5 of p1" in text
    assert runtime.ledger.entries(tool_name="refund_payment")[0].status.value == "succeeded"
