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


def _counting_tools(runtime: Runtime) -> tuple[Any, Any, list[str]]:
    """A sync and an async write tool, guarded, that count the times their body runs."""
    ran: list[str] = []

    @guarded(runtime, risk="write")
    def create_order(cart_id: str) -> str:
        """Create an order for a cart."""
        ran.append(cart_id)
        return f"order for {cart_id}"

    @guarded(runtime, risk="write")
    async def refund_payment(payment_id: str) -> str:
        """Refund a payment."""
        ran.append(payment_id)
        return f"refunded {payment_id}"

    return create_order, refund_payment, ran


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_a_langgraph_thread_names_the_run_without_a_runtime_run(
    runtime: Runtime, kind: str
) -> None:
    tools = pytest.importorskip("langchain_core.tools")
    create_order, refund_payment, ran = _counting_tools(runtime)
    thread = {"configurable": {"thread_id": "thread-7", "user_id": "u1"}}
    other = {"configurable": {"thread_id": "thread-8"}}
    if kind == "sync":
        lc_tool, arguments = tools.tool(create_order), {"cart_id": "c1"}
        first = lc_tool.invoke(arguments, config=thread)
        again = lc_tool.invoke(arguments, config=thread)  # the model's retry in the thread
        elsewhere = lc_tool.invoke(arguments, config=other)
    else:
        lc_tool, arguments = tools.tool(refund_payment), {"payment_id": "p1"}

        async def calls() -> list[Any]:
            return [
                await lc_tool.ainvoke(arguments, config=thread),
                await lc_tool.ainvoke(arguments, config=thread),
                await lc_tool.ainvoke(arguments, config=other),
            ]

        first, again, elsewhere = asyncio.run(calls())
    assert first["ok"] and first["metadata"]["run_id"] == "langgraph:thread-7"
    assert again["metadata"]["replayed"] is True
    assert elsewhere["ok"] and not elsewhere["metadata"]["replayed"]
    assert len(ran) == 2  # once per thread
    (entry, *_) = runtime.ledger.entries(run_id="langgraph:thread-7")
    assert entry.user_id == "u1"


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_an_openai_agents_trace_names_the_run_without_a_runtime_run(
    runtime: Runtime, kind: str
) -> None:
    agents = pytest.importorskip("agents")
    from agents.tool_context import ToolContext

    create_order, refund_payment, ran = _counting_tools(runtime)
    tool = agents.function_tool(create_order if kind == "sync" else refund_payment)
    arguments = json.dumps({"cart_id": "c1"} if kind == "sync" else {"payment_id": "p1"})

    async def invoke() -> Any:
        context = ToolContext(
            context=None, tool_name=tool.name, tool_call_id="call-1", tool_arguments=arguments
        )
        return await tool.on_invoke_tool(context, arguments)

    async def conversation() -> list[Any]:
        with agents.trace("support", group_id="chat-42"):
            first = await invoke()
            again = await invoke()  # the model calls the tool again in the same conversation
        with agents.trace("support", group_id="chat-43"):
            elsewhere = await invoke()
        return [first, again, elsewhere]

    first, again, elsewhere = asyncio.run(conversation())
    assert first["ok"] and first["metadata"]["run_id"] == "openai-agents:chat-42"
    assert again["metadata"]["replayed"] is True
    assert elsewhere["ok"] and not elsewhere["metadata"]["replayed"]
    assert len(ran) == 2


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_an_openai_agents_runner_retrying_a_tool_runs_its_body_once(
    runtime: Runtime, kind: str
) -> None:
    agents = pytest.importorskip("agents")
    from agents.items import ModelResponse
    from agents.models.interface import Model
    from agents.usage import Usage
    from openai.types.responses import (
        ResponseFunctionToolCall,
        ResponseOutputMessage,
        ResponseOutputText,
    )

    create_order, refund_payment, ran = _counting_tools(runtime)
    tool = create_order if kind == "sync" else refund_payment
    name, arguments = (
        ("create_order", {"cart_id": "c1"})
        if kind == "sync"
        else ("refund_payment", {"payment_id": "p1"})
    )

    class RetryingModel(Model):
        """A model that calls the tool, calls it again (as after an unclear answer), then ends."""

        def __init__(self) -> None:
            self.turns = 0

        async def get_response(self, *args: Any, **kwargs: Any) -> Any:
            self.turns += 1
            if self.turns <= 2:
                output: list[Any] = [
                    ResponseFunctionToolCall(
                        type="function_call",
                        call_id=f"call-{self.turns}",
                        id=f"fc-{self.turns}",
                        name=name,
                        arguments=json.dumps(arguments),
                    )
                ]
            else:
                text = ResponseOutputText(type="output_text", text="done", annotations=[])
                output = [
                    ResponseOutputMessage(
                        id="msg-1",
                        type="message",
                        role="assistant",
                        status="completed",
                        content=[text],
                    )
                ]
            return ModelResponse(output=output, usage=Usage(), response_id=None)

        def stream_response(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError

    agent = agents.Agent(name="shop", tools=[agents.function_tool(tool)], model=RetryingModel())
    result = asyncio.run(agents.Runner.run(agent, "please do it"))
    assert result.final_output == "done"
    assert len(ran) == 1  # the second call of the run was recognised as the same request
    (entry,) = runtime.ledger.entries()
    assert entry.run_id.startswith("openai-agents:trace_")
