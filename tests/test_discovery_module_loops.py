"""Tools handed to a framework in a loop at module level: ``for fn in TOOLS:
mcp.add_tool(fn)``, ``server.tool()(fn)``, ``agent.tool_plain(fn)``. The loop target stands
for each item of the container the loop walks, as it does inside a function. Also: a bound
method of an object built for the registration (``Tool(Search(client).__call__)``)."""

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

STARRED_LISTS = """\
from mcp.server.fastmcp import FastMCP

from billing.handlers import create_invoice, list_invoices

mcp = FastMCP("billing")
WRITES = [create_invoice]
READS = [list_invoices]

for fn in [*WRITES, *READS]:
    mcp.add_tool(fn)
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


SEARCH_TOOL = """\
from dataclasses import dataclass

import httpx
from pydantic_ai import Tool


@dataclass
class PublishPost:
    client: httpx.AsyncClient

    async def __call__(self, text: str) -> str:
        reply = await self.client.post("https://blog.example/posts", json={"t": text})
        return reply.text


def publish_tool(client: httpx.AsyncClient) -> Tool:
    return Tool(PublishPost(client=client).__call__, name="publish_post")
"""


def test_a_bound_method_of_an_object_built_in_the_call_is_a_tool() -> None:
    tools = discover({"blog/tools.py": SEARCH_TOOL})
    assert [(t.name, t.anchor.span.line) for t in tools] == [
        ("publish_post", line_of(SEARCH_TOOL, "async def __call__"))
    ]


def test_a_bound_method_held_by_a_local_is_followed() -> None:
    held = SEARCH_TOOL.replace(
        '    return Tool(PublishPost(client=client).__call__, name="publish_post")',
        '    run = PublishPost(client=client).__call__\n    return Tool(run, name="publish_post")',
    )
    assert "run = PublishPost" in held
    tools = discover({"blog/tools.py": held})
    assert [(t.name, t.anchor.span.line) for t in tools] == [
        ("publish_post", line_of(held, "async def __call__"))
    ]


DICT_ITEMS = """\
from mcp.server.fastmcp import FastMCP

from billing.handlers import create_invoice, list_invoices

mcp = FastMCP("billing")
TOOLS = {"invoice_create": create_invoice, "invoice_list": list_invoices}

for tool_name, handler in TOOLS.items():
    mcp.add_tool(handler, name=tool_name)
"""


def test_a_loop_over_a_dict_of_functions_registers_each_under_its_key() -> None:
    tools = discover({"billing/handlers.py": HANDLERS, "billing/server.py": DICT_ITEMS})
    assert sorted((t.name, t.anchor.span.line) for t in tools) == [
        ("invoice_create", line_of(HANDLERS, "def create_invoice")),
        ("invoice_list", line_of(HANDLERS, "def list_invoices")),
    ]
    values = DICT_ITEMS.replace(
        "for tool_name, handler in TOOLS.items():", "for handler in TOOLS.values():"
    )
    values = values.replace("mcp.add_tool(handler, name=tool_name)", "mcp.add_tool(handler)")
    assert _found(values) == _expected()


def test_lists_unpacked_into_the_walked_list_give_their_functions() -> None:
    """``for fn in [*WRITES, *READS]: mcp.add_tool(fn)``: the rows of each list unpacked."""
    assert _found(STARRED_LISTS) == _expected()
