"""Tools handed to a framework in a loop at module level: ``for fn in TOOLS:
mcp.add_tool(fn)``, ``server.tool()(fn)``, ``agent.tool_plain(fn)``. The loop target stands
for each item of the container the loop walks, as it does inside a function."""

from __future__ import annotations

from tests.test_tool_discovery import discover, line_of

HANDLERS = """\
import httpx


def create_invoice(customer_id: str, amount: int) -> str:
    return httpx.post("https://billing.example/invoices", json={"c": customer_id}).text


def list_invoices(customer_id: str) -> str:
    return httpx.get(f"https://billing.example/invoices?c={customer_id}").text


def _audit(line: str) -> None:
    print(line)
"""

ADD_TOOL = """\
from mcp.server.fastmcp import FastMCP

from billing.handlers import create_invoice, list_invoices

mcp = FastMCP("billing")
TOOLS = [create_invoice, list_invoices]

for fn in TOOLS:
    mcp.add_tool(fn)
"""

DECORATOR_CALL = """\
from mcp.server.fastmcp import FastMCP

from billing import handlers

server = FastMCP("billing")

for handler in (handlers.create_invoice, handlers.list_invoices):
    server.tool()(handler)
"""

PYDANTIC_AI = """\
from pydantic_ai import Agent

from billing.handlers import create_invoice, list_invoices

agent = Agent("openai:gpt-4o")
TOOLS = [create_invoice]
TOOLS.append(list_invoices)

for tool_fn in TOOLS:
    agent.tool_plain(tool_fn)
"""


def _found(server: str) -> list[tuple[str, str, int]]:
    tools = discover({"billing/handlers.py": HANDLERS, "billing/server.py": server})
    return sorted((t.name, t.anchor.path, t.anchor.span.line) for t in tools)


def _expected() -> list[tuple[str, str, int]]:
    return [
        ("create_invoice", "billing/handlers.py", line_of(HANDLERS, "def create_invoice")),
        ("list_invoices", "billing/handlers.py", line_of(HANDLERS, "def list_invoices")),
    ]


def test_functions_added_in_a_module_level_loop_are_tools() -> None:
    assert _found(ADD_TOOL) == _expected()


def test_decorator_applied_in_a_module_level_loop_makes_tools() -> None:
    assert _found(DECORATOR_CALL) == _expected()


def test_agent_decorator_called_on_a_loop_variable_makes_tools() -> None:
    assert _found(PYDANTIC_AI) == _expected()


def test_a_loop_over_something_computed_makes_no_tools() -> None:
    computed = ADD_TOOL.replace("TOOLS = [create_invoice, list_invoices]", "TOOLS = load()")
    assert _found(computed) == []
