"""Guarded tools called by a real Pydantic AI agent whose model is a local function: the tool
keeps its schema, and the agent's conversation names the run, so the model's retry of a
tool call runs its body once, without a runtime.run."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agentguard.runtime import MemoryLedger, Runtime, guarded

pydantic_ai = pytest.importorskip("pydantic_ai")
function_models = pytest.importorskip("pydantic_ai.models.function")
messages = pytest.importorskip("pydantic_ai.messages")
RunContext = pydantic_ai.RunContext  # module level: the tools' annotations name it


def _model_calling(tool: str, arguments: dict[str, Any], times: int, seen: list[Any]) -> Any:
    """A model that calls ``tool`` ``times`` times (its retries), then answers; it notes the
    tool definitions the agent gave it."""

    def respond(history: list[Any], info: Any) -> Any:
        seen.append({definition.name: definition for definition in info.function_tools})
        returned = [
            part.content
            for message in history
            for part in message.parts
            if isinstance(part, messages.ToolReturnPart)
        ]
        if len(returned) < times:
            return messages.ModelResponse(parts=[messages.ToolCallPart(tool, dict(arguments))])
        return messages.ModelResponse(parts=[messages.TextPart(repr(returned))])

    return function_models.FunctionModel(respond)


def test_a_pydantic_ai_agent_retrying_a_sync_tool_runs_its_body_once() -> None:
    runtime = Runtime(ledger=MemoryLedger())
    ran: list[str] = []
    seen: list[Any] = []
    agent = pydantic_ai.Agent(_model_calling("create_order", {"cart_id": "c1"}, 2, seen))

    @agent.tool_plain
    @guarded(runtime, risk="write")
    def create_order(cart_id: str, quantity: int = 1) -> str:
        """Create an order for a cart."""
        ran.append(cart_id)
        return f"order for {cart_id}"

    result = agent.run_sync("order cart c1")
    assert ran == ["c1"]
    (entry,) = runtime.ledger.entries(tool_name="create_order")
    assert entry.run_id.startswith("pydantic-ai:")
    assert entry.status.value == "succeeded"
    assert "had already run" in result.output


def test_a_pydantic_ai_tool_taking_the_run_context_keeps_its_schema_and_runs_async() -> None:
    runtime = Runtime(ledger=MemoryLedger())
    ran: list[str] = []
    seen_guarded: list[Any] = []
    seen_bare: list[Any] = []
    arguments = {"payment_id": "p1", "amount_cents": 5}

    async def refund_payment(ctx: RunContext[None], payment_id: str, amount_cents: int) -> str:
        """Refund part of a payment.

        Args:
            payment_id: the payment to refund
            amount_cents: how much of it
        """
        ran.append(payment_id)
        return f"refunded {amount_cents} of {payment_id}"

    bare = pydantic_ai.Agent(_model_calling("refund_payment", arguments, 1, seen_bare))
    bare.tool(refund_payment)
    agent = pydantic_ai.Agent(_model_calling("refund_payment", arguments, 2, seen_guarded))
    agent.tool(guarded(runtime, risk="write", replay="never")(refund_payment))

    asyncio.run(bare.run("refund p1"))
    ran.clear()
    result = asyncio.run(agent.run("refund p1", conversation_id="conversation-7"))

    bare_definition = seen_bare[0]["refund_payment"]
    guarded_definition = seen_guarded[0]["refund_payment"]
    assert guarded_definition.description == bare_definition.description
    assert guarded_definition.parameters_json_schema == bare_definition.parameters_json_schema
    assert ran == ["p1"]
    (entry,) = runtime.ledger.entries(tool_name="refund_payment")
    assert entry.run_id == "pydantic-ai:conversation-7"
    assert entry.args == arguments  # the run context is the agent's, never stored
    assert "refunded 5 of p1" in result.output
