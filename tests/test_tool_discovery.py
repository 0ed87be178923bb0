"""Tool discovery: every documented declaration form of every framework becomes a tool with
the right name, framework, implementing function and anchor line; look-alikes do not."""

from __future__ import annotations

from collections.abc import Mapping
from textwrap import dedent

import pytest

from agentguard.facts.extract import extract
from agentguard.knowledge.catalog import load_catalog
from agentguard.project.project_model import build_project
from agentguard.project.tool_facts import ToolFacts
from tests.conftest import ScanFiles


def discover(files: Mapping[str, str]) -> list[ToolFacts]:
    catalog = load_catalog()
    carriers = catalog.context_carriers
    modules = [extract(dedent(text).encode(), path, carriers) for path, text in files.items()]
    return build_project(modules, catalog).tools


def line_of(text: str, needle: str) -> int:
    """1-based line of the first line of ``dedent(text)`` containing ``needle``."""
    for number, line in enumerate(dedent(text).splitlines(), start=1):
        if needle in line:
            return number
    raise AssertionError(f"{needle!r} not in source")


def assert_tool(
    tools: list[ToolFacts],
    name: str,
    framework: str,
    function: str,
    path: str,
    line: int,
) -> ToolFacts:
    found = [t for t in tools if t.name == name]
    summary = [(t.name, t.framework, t.functions, t.anchor.span.line) for t in tools]
    assert len(found) == 1, f"tool {name!r} not found exactly once in {summary}"
    tool = found[0]
    assert tool.framework == framework, summary
    assert tool.functions[0] == function, summary
    assert (tool.anchor.path, tool.anchor.span.line) == (path, line), summary
    return tool


# --------------------------------------------------------------------------- LangChain

LC_BARE = """\
from langchain_core.tools import tool
import requests


@tool
def create_order(sku: str, qty: int) -> str:
    \"\"\"Place an order.\"\"\"
    return requests.post("https://shop/orders", json={"sku": sku, "qty": qty}).text
"""


def test_langchain_bare_tool_decorator() -> None:
    tools = discover({"app/tools.py": LC_BARE})
    assert_tool(
        tools,
        "create_order",
        "langchain",
        "app.tools.create_order",
        "app/tools.py",
        line_of(LC_BARE, "def create_order"),
    )


@pytest.mark.parametrize("module", ["langchain_core.tools", "langchain.tools", "langchain.agents"])
def test_langchain_named_tool_decorator_from_each_module(module: str) -> None:
    source = f"""\
from {module} import tool


@tool("place_order")
def create_order(sku: str) -> str:
    \"\"\"Place an order.\"\"\"
    return sku
"""
    tools = discover({"app/tools.py": source})
    assert_tool(tools, "place_order", "langchain", "app.tools.create_order", "app/tools.py", 5)


def test_langchain_tool_decorator_with_keyword_arguments() -> None:
    source = """\
    from langchain.tools import tool


    @tool(parse_docstring=True)
    def refund(order_id: str) -> str:
        \"\"\"Refund an order.

        Args:
            order_id: the order
        \"\"\"
        return order_id
    """
    tools = discover({"app/tools.py": source})
    assert_tool(
        tools, "refund", "langchain", "app.tools.refund", "app/tools.py", line_of(source, "def ")
    )


def test_langchain_structured_tool_from_function() -> None:
    source = """\
    from langchain_core.tools import StructuredTool


    def _create(sku: str) -> str:
        return sku


    async def _acreate(sku: str) -> str:
        return sku


    create_tool = StructuredTool.from_function(
        func=_create, coroutine=_acreate, name="create_order", description="Create"
    )
    """
    tools = discover({"app/tools.py": source})
    tool = assert_tool(
        tools,
        "create_order",
        "langchain",
        "app.tools._create",
        "app/tools.py",
        line_of(source, "def _create"),
    )
    assert "app.tools._acreate" in tool.functions


def test_langchain_tool_from_function_positional() -> None:
    source = """\
    from langchain.tools import Tool


    def search(query: str) -> str:
        return query


    search_tool = Tool.from_function(search, name="web_search", description="Search")
    """
    tools = discover({"app/tools.py": source})
    assert_tool(
        tools, "web_search", "langchain", "app.tools.search", "app/tools.py", line_of(source, "def")
    )


def test_langchain_base_tool_subclass_run_and_arun() -> None:
    source = """\
    from langchain_core.tools import BaseTool


    class CreateTicket(BaseTool):
        name: str = "create_ticket"
        description: str = "Open a support ticket"

        def _run(self, title: str) -> str:
            return title

        async def _arun(self, title: str) -> str:
            return title
    """
    tools = discover({"app/tools.py": source})
    tool = assert_tool(
        tools,
        "create_ticket",
        "langchain",
        "app.tools.CreateTicket._run",
        "app/tools.py",
        line_of(source, "class CreateTicket"),
    )
    assert tool.functions == ["app.tools.CreateTicket._run", "app.tools.CreateTicket._arun"]


def test_langchain_subclass_of_project_base_tool_in_another_module() -> None:
    base = """\
    from langchain_core.tools import BaseTool


    class ApiTool(BaseTool):
        base_url: str = "https://api"
    """
    concrete = """\
    from app.base import ApiTool


    class CloseAccount(ApiTool):
        name: str = "close_account"
        description: str = "Close an account"

        def _run(self, account_id: str) -> str:
            return account_id
    """
    tools = discover({"app/base.py": base, "app/tools.py": concrete})
    assert_tool(
        tools,
        "close_account",
        "langchain",
        "app.tools.CloseAccount._run",
        "app/tools.py",
        line_of(concrete, "class CloseAccount"),
    )
    assert [t.name for t in tools] == ["close_account"]  # the abstract base is no tool


def test_langchain_tool_decorator_under_an_alias() -> None:
    source = """\
    from langchain_core.tools import tool as lc_tool


    @lc_tool
    def cancel_order(order_id: str) -> str:
        \"\"\"Cancel.\"\"\"
        return order_id
    """
    tools = discover({"app/tools.py": source})
    assert_tool(
        tools,
        "cancel_order",
        "langchain",
        "app.tools.cancel_order",
        "app/tools.py",
        line_of(source, "def"),
    )


def test_langchain_tool_decorator_through_module_alias() -> None:
    source = """\
    import langchain_core.tools as lct


    @lct.tool("cancel")
    def cancel_order(order_id: str) -> str:
        \"\"\"Cancel.\"\"\"
        return order_id
    """
    tools = discover({"app/tools.py": source})
    assert_tool(
        tools,
        "cancel",
        "langchain",
        "app.tools.cancel_order",
        "app/tools.py",
        line_of(source, "def"),
    )


def test_langchain_decorator_applied_by_assignment() -> None:
    source = """\
    from langchain_core.tools import tool


    def _create(sku: str) -> str:
        \"\"\"Create an order.\"\"\"
        return sku


    def _lookup(sku: str) -> str:
        \"\"\"Look up a product.\"\"\"
        return sku


    create = tool(_create)
    lookup = tool("lookup_product", _lookup)
    """
    tools = discover({"app/tools.py": source})
    assert_tool(
        tools,
        "_create",
        "langchain",
        "app.tools._create",
        "app/tools.py",
        line_of(source, "def _c"),
    )
    assert_tool(
        tools,
        "lookup_product",
        "langchain",
        "app.tools._lookup",
        "app/tools.py",
        line_of(source, "def _lookup"),
    )


# --------------------------------------------------------------------------- LangGraph

LG_TOOLS = """\
def get_weather(city: str) -> str:
    \"\"\"Weather.\"\"\"
    return city


def book_table(restaurant: str, time: str) -> str:
    \"\"\"Book a table.\"\"\"
    return restaurant
"""


def test_langgraph_tool_node_list() -> None:
    graph = """\
    from langgraph.prebuilt import ToolNode
    from app.tools import book_table, get_weather

    node = ToolNode([get_weather, book_table])
    """
    tools = discover({"app/tools.py": LG_TOOLS, "app/graph.py": graph})
    assert_tool(tools, "book_table", "langgraph", "app.tools.book_table", "app/tools.py", 6)
    assert_tool(tools, "get_weather", "langgraph", "app.tools.get_weather", "app/tools.py", 1)


def test_langgraph_create_react_agent_tools_keyword() -> None:
    graph = """\
    from langgraph.prebuilt import create_react_agent
    from app import tools

    agent = create_react_agent("openai:gpt-4o", tools=[tools.book_table])
    """
    found = discover({"app/tools.py": LG_TOOLS, "app/graph.py": graph})
    assert_tool(found, "book_table", "langgraph", "app.tools.book_table", "app/tools.py", 6)
    assert [t.name for t in found] == ["book_table"]


def test_langgraph_tool_list_held_in_a_module_variable() -> None:
    graph = """\
    from langgraph.prebuilt import ToolNode, create_react_agent
    from app.tools import book_table, get_weather

    TOOLS = [get_weather, book_table]
    node = ToolNode(TOOLS)
    """
    tools = discover({"app/tools.py": LG_TOOLS, "app/graph.py": graph})
    assert_tool(tools, "book_table", "langgraph", "app.tools.book_table", "app/tools.py", 6)
    assert_tool(tools, "get_weather", "langgraph", "app.tools.get_weather", "app/tools.py", 1)


def test_langgraph_tool_list_imported_from_another_module() -> None:
    registry = """\
    from app.tools import book_table, get_weather

    ALL_TOOLS = [get_weather, book_table]
    """
    graph = """\
    from langgraph.prebuilt import create_react_agent
    from app.registry import ALL_TOOLS
    agent = create_react_agent(
        model,
        ALL_TOOLS,
    )
    """
    tools = discover({"app/tools.py": LG_TOOLS, "app/registry.py": registry, "app/graph.py": graph})
    assert sorted(t.name for t in tools) == ["book_table", "get_weather"]
    # The list is written on line 3 of the registry, which is inside the call's lines here:
    # the site is the call, not a position of the registry read against this file.
    call_line = line_of(graph, "create_react_agent(")
    call_column = dedent(graph).splitlines()[call_line - 1].index("create_react_agent(") + 1
    assert {(t.site.path, t.site.span.line, t.site.span.column) for t in tools} == {
        ("app/graph.py", call_line, call_column)
    }


def test_decorated_tool_also_listed_in_tool_node_is_one_tool() -> None:
    source = """\
    from langchain_core.tools import tool
    from langgraph.prebuilt import ToolNode


    @tool
    def create_order(sku: str) -> str:
        \"\"\"Create.\"\"\"
        return sku


    node = ToolNode([create_order])
    """
    tools = discover({"app/graph.py": source})
    assert_tool(tools, "create_order", "langchain", "app.graph.create_order", "app/graph.py", 6)


# --------------------------------------------------------------------------- OpenAI Agents SDK


def test_openai_agents_function_tool_bare_and_called() -> None:
    source = """\
    from agents import Agent, function_tool


    @function_tool
    def lookup_order(order_id: str) -> str:
        return order_id


    @function_tool(name_override="issue_refund")
    async def refund(order_id: str, amount: int) -> str:
        return order_id


    agent = Agent(name="support", tools=[lookup_order, refund])
    """
    tools = discover({"app/agent.py": source})
    assert_tool(
        tools,
        "lookup_order",
        "openai-agents",
        "app.agent.lookup_order",
        "app/agent.py",
        line_of(source, "def lookup_order"),
    )
    assert_tool(
        tools,
        "issue_refund",
        "openai-agents",
        "app.agent.refund",
        "app/agent.py",
        line_of(source, "def refund"),
    )
    assert len(tools) == 2


def test_openai_agents_function_tool_class() -> None:
    source = """\
    from agents import FunctionTool


    async def run_create_order(ctx, args_json: str) -> str:
        return args_json


    create_order = FunctionTool(
        name="create_order",
        description="Create an order",
        params_json_schema={"type": "object"},
        on_invoke_tool=run_create_order,
    )
    """
    tools = discover({"app/tools.py": source})
    assert_tool(
        tools,
        "create_order",
        "openai-agents",
        "app.tools.run_create_order",
        "app/tools.py",
        line_of(source, "def run_create_order"),
    )


def test_openai_agents_plain_function_in_agent_tools() -> None:
    source = """\
    from agents import Agent


    def transfer(amount: int) -> str:
        return str(amount)


    agent = Agent(name="bank", instructions="...", tools=[transfer])
    """
    tools = discover({"app/agent.py": source})
    assert_tool(tools, "transfer", "openai-agents", "app.agent.transfer", "app/agent.py", 4)


# --------------------------------------------------------------------------- MCP


def test_mcp_v1_fastmcp_tool_decorator() -> None:
    source = """\
    from mcp.server.fastmcp import FastMCP

    mcp = FastMCP("orders")


    @mcp.tool()
    def create_order(sku: str) -> str:
        return sku
    """
    tools = discover({"server.py": source})
    assert_tool(tools, "create_order", "mcp", "server.create_order", "server.py", 7)


def test_mcp_v2_mcpserver_tool_decorator_with_name() -> None:
    source = """\
    from mcp.server import MCPServer

    server = MCPServer("orders")


    @server.tool(name="place_order")
    async def create_order(sku: str) -> str:
        return sku
    """
    tools = discover({"server.py": source})
    assert_tool(tools, "place_order", "mcp", "server.create_order", "server.py", 7)


def test_standalone_fastmcp_bare_tool_decorator() -> None:
    source = """\
    from fastmcp import FastMCP

    mcp = FastMCP("files")


    @mcp.tool
    def delete_file(path: str) -> str:
        return path
    """
    tools = discover({"server.py": source})
    assert_tool(tools, "delete_file", "mcp", "server.delete_file", "server.py", 7)


def test_mcp_instance_imported_from_another_module() -> None:
    app = """\
    from fastmcp import FastMCP

    mcp = FastMCP("crm")
    """
    tools_py = """\
    from crm.app import mcp


    @mcp.tool(annotations={"readOnlyHint": True})
    def find_contact(email: str) -> str:
        return email
    """
    tools = discover({"crm/app.py": app, "crm/tools.py": tools_py})
    tool = assert_tool(tools, "find_contact", "mcp", "crm.tools.find_contact", "crm/tools.py", 5)
    assert tool.declaration is not None and tool.declaration.read_only is True


def test_mcp_add_tool_far_from_the_definition() -> None:
    handlers = """\
    def send_invoice(customer_id: str) -> str:
        return customer_id
    """
    server = """\
    from mcp.server.fastmcp import FastMCP
    from mcp.types import ToolAnnotations

    from billing import handlers

    mcp = FastMCP("billing")
    mcp.add_tool(
        handlers.send_invoice,
        annotations=ToolAnnotations(readOnlyHint=False, idempotentHint=False),
    )
    """
    tools = discover({"billing/handlers.py": handlers, "billing/server.py": server})
    tool = assert_tool(
        tools, "send_invoice", "mcp", "billing.handlers.send_invoice", "billing/handlers.py", 1
    )
    assert tool.declaration is not None and tool.declaration.idempotent_hint is False


LOWLEVEL_HEAD = """\
import mcp.types as types
from mcp.server.lowlevel import Server

from ops import actions

server = Server("ops")


@server.list_tools()
async def list_tools() -> list[types.Tool]:
    return [
        types.Tool(name="restart_service", description="Restart", inputSchema={}),
        types.Tool(
            name="service_status",
            description="Status",
            inputSchema={},
            annotations=types.ToolAnnotations(readOnlyHint=True),
        ),
    ]

"""
ACTIONS = """\
def do_restart(name: str) -> str:
    return name


def read_status(name: str) -> str:
    return name
"""


@pytest.mark.parametrize(
    "dispatch",
    [
        pytest.param(
            """\
HANDLERS = {"restart_service": actions.do_restart, "service_status": actions.read_status}


@server.call_tool()
async def call_tool(name: str, arguments: dict) -> list:
    return HANDLERS[name](**arguments)
""",
            id="dict",
        ),
        pytest.param(
            """\
@server.call_tool()
async def call_tool(name: str, arguments: dict) -> list:
    if name == "restart_service":
        result = actions.do_restart(arguments["name"])
    elif name == "service_status":
        result = actions.read_status(arguments["name"])
    else:
        raise ValueError(name)
    return [result]
""",
            id="if-branches",
        ),
        pytest.param(
            """\
@server.call_tool()
async def call_tool(name: str, arguments: dict) -> list:
    match name:
        case "restart_service":
            return [actions.do_restart(arguments["name"])]
        case "service_status":
            return [actions.read_status(arguments["name"])]
    raise ValueError(name)
""",
            id="match",
        ),
    ],
)
def test_mcp_lowlevel_server_links_each_tool_to_its_dispatch(dispatch: str) -> None:
    tools = discover({"ops/actions.py": ACTIONS, "ops/server.py": LOWLEVEL_HEAD + dispatch})
    restart = assert_tool(
        tools, "restart_service", "mcp", "ops.actions.do_restart", "ops/actions.py", 1
    )
    status = assert_tool(
        tools, "service_status", "mcp", "ops.actions.read_status", "ops/actions.py", 5
    )
    assert restart.declaration is None
    assert status.declaration is not None and status.declaration.read_only is True


def test_mcp_lowlevel_if_branches_do_not_borrow_the_next_branch_call() -> None:
    dispatch = """\
@server.call_tool()
async def call_tool(name: str, arguments: dict) -> list:
    if name == "service_status":
        pass
    elif name == "restart_service":
        return [actions.do_restart(arguments["name"])]
    return []
"""
    tools = discover({"ops/actions.py": ACTIONS, "ops/server.py": LOWLEVEL_HEAD + dispatch})
    assert_tool(tools, "restart_service", "mcp", "ops.actions.do_restart", "ops/actions.py", 1)
    # service_status's branch calls nothing: it must not borrow the next branch's function.
    assert [t.name for t in tools] == ["restart_service"]


# --------------------------------------------------------------------------- CrewAI


def test_crewai_tool_decorator_and_base_tool_subclass() -> None:
    source = """\
    from crewai.tools import BaseTool, tool


    @tool("Flight Search")
    def search_flights(origin: str, destination: str) -> str:
        \"\"\"Search flights.\"\"\"
        return origin


    class BookHotel(BaseTool):
        name: str = "Book Hotel"
        description: str = "Book a hotel room"

        def _run(self, hotel_id: str) -> str:
            return hotel_id
    """
    tools = discover({"travel/tools.py": source})
    assert_tool(
        tools, "Flight Search", "crewai", "travel.tools.search_flights", "travel/tools.py", 5
    )
    assert_tool(tools, "Book Hotel", "crewai", "travel.tools.BookHotel._run", "travel/tools.py", 10)


# --------------------------------------------------------------------------- LlamaIndex


def test_llamaindex_function_tool_from_defaults() -> None:
    source = """\
    from llama_index.core.tools import FunctionTool


    def add_note(text: str) -> str:
        return text


    note_tool = FunctionTool.from_defaults(fn=add_note, name="add_note_tool")
    """
    tools = discover({"kb/tools.py": source})
    assert_tool(tools, "add_note_tool", "llamaindex", "kb.tools.add_note", "kb/tools.py", 4)


def test_llamaindex_tool_spec_functions() -> None:
    source = """\
    from llama_index.core.tools.tool_spec.base import BaseToolSpec


    class TicketSpec(BaseToolSpec):
        spec_functions = ["open_ticket", "get_ticket"]

        def open_ticket(self, title: str) -> str:
            return title

        def get_ticket(self, ticket_id: str) -> str:
            return ticket_id

        def _helper(self) -> None:
            return None
    """
    tools = discover({"kb/spec.py": source})
    assert_tool(
        tools, "open_ticket", "llamaindex", "kb.spec.TicketSpec.open_ticket", "kb/spec.py", 7
    )
    assert_tool(
        tools, "get_ticket", "llamaindex", "kb.spec.TicketSpec.get_ticket", "kb/spec.py", 10
    )
    assert len(tools) == 2


# --------------------------------------------------------------------------- Pydantic AI

PAI = """\
from pydantic_ai import Agent, RunContext, Tool

agent = Agent("openai:gpt-4o", deps_type=str)


@agent.tool
async def charge_card(ctx: RunContext[str], amount: int) -> str:
    return str(amount)


@agent.tool_plain
def roll_dice() -> int:
    return 4


def send_sms(number: str, text: str) -> str:
    return number


def lookup(number: str) -> str:
    return number


other = Agent("openai:gpt-4o", tools=[Tool(send_sms, takes_ctx=False), lookup])
"""


def test_pydantic_ai_all_forms() -> None:
    tools = discover({"pay/agent.py": PAI})
    tool = assert_tool(
        tools, "charge_card", "pydantic-ai", "pay.agent.charge_card", "pay/agent.py", 7
    )
    assert tool.params == ["amount"]  # the RunContext is injected, not model-supplied
    assert_tool(tools, "roll_dice", "pydantic-ai", "pay.agent.roll_dice", "pay/agent.py", 12)
    assert_tool(tools, "send_sms", "pydantic-ai", "pay.agent.send_sms", "pay/agent.py", 16)
    assert_tool(tools, "lookup", "pydantic-ai", "pay.agent.lookup", "pay/agent.py", 20)


def test_pydantic_ai_toolset_add_function_registers_a_plain_function() -> None:
    """``FunctionToolset.add_function(func, name=...)``, as Pydantic AI documents it: each
    function added is a tool, named by ``name=`` when given."""
    source = """\
    from pydantic_ai import Agent
    from pydantic_ai.toolsets import FunctionToolset


    def write_file(path: str, text: str) -> str:
        return path


    def read_file(path: str) -> str:
        return path


    def make_toolset() -> FunctionToolset:
        toolset = FunctionToolset()
        toolset.add_function(write_file)
        toolset.add_function(read_file, name="cat")
        return toolset


    agent = Agent("openai:gpt-4o", toolsets=[make_toolset()])
    """
    tools = discover({"fs/agent.py": source})
    assert_tool(tools, "write_file", "pydantic-ai", "fs.agent.write_file", "fs/agent.py", 5)
    assert_tool(tools, "cat", "pydantic-ai", "fs.agent.read_file", "fs/agent.py", 9)


def test_pydantic_ai_generic_agent_instance() -> None:
    source = """\
    from pydantic_ai import Agent

    agent = Agent[None, str]("openai:gpt-4o")


    @agent.tool_plain
    def archive(doc_id: str) -> str:
        return doc_id
    """
    tools = discover({"pay/agent.py": source})
    assert_tool(tools, "archive", "pydantic-ai", "pay.agent.archive", "pay/agent.py", 7)


# --------------------------------------------------------------------------- smolagents


def test_smolagents_tool_decorator_and_tool_subclass() -> None:
    source = """\
    from smolagents import Tool, tool


    @tool
    def post_tweet(text: str) -> str:
        \"\"\"Post a tweet.

        Args:
            text: the text
        \"\"\"
        return text


    class WebFetch(Tool):
        name = "web_fetch"
        description = "Fetch a page"
        inputs = {"url": {"type": "string", "description": "url"}}
        output_type = "string"

        def forward(self, url: str) -> str:
            return url
    """
    tools = discover({"bot/tools.py": source})
    assert_tool(tools, "post_tweet", "smolagents", "bot.tools.post_tweet", "bot/tools.py", 5)
    assert_tool(tools, "web_fetch", "smolagents", "bot.tools.WebFetch.forward", "bot/tools.py", 14)


# --------------------------------------------------------------------------- AutoGen / AG2


def test_autogen_function_tool_and_assistant_tools() -> None:
    source = """\
    from autogen_agentchat.agents import AssistantAgent
    from autogen_core.tools import FunctionTool


    async def create_issue(title: str) -> str:
        return title


    async def get_issue(number: int) -> str:
        return str(number)


    issue_tool = FunctionTool(create_issue, description="Create a GitHub issue")
    agent = AssistantAgent("dev", model_client=client, tools=[issue_tool, get_issue])
    """
    tools = discover({"dev/agent.py": source})
    assert_tool(tools, "create_issue", "autogen", "dev.agent.create_issue", "dev/agent.py", 5)
    assert_tool(tools, "get_issue", "autogen", "dev.agent.get_issue", "dev/agent.py", 9)


def test_ag2_register_function_and_register_for_llm() -> None:
    source = """\
    from autogen import AssistantAgent, UserProxyAgent, register_function

    assistant = AssistantAgent("assistant", llm_config=llm_config)
    user_proxy = UserProxyAgent("user")


    @user_proxy.register_for_execution()
    @assistant.register_for_llm(name="send_email", description="Send an email")
    def email(to: str, body: str) -> str:
        return to


    def calculator(a: int, b: int) -> int:
        return a + b


    register_function(
        calculator, caller=assistant, executor=user_proxy, description="Add numbers"
    )
    """
    tools = discover({"mail/agent.py": source})
    assert_tool(tools, "send_email", "autogen", "mail.agent.email", "mail/agent.py", 9)
    assert_tool(tools, "calculator", "autogen", "mail.agent.calculator", "mail/agent.py", 13)


# --------------------------------------------------------------------------- Semantic Kernel


def test_semantic_kernel_kernel_function_methods() -> None:
    source = """\
    from semantic_kernel.functions import kernel_function


    class LightsPlugin:
        @kernel_function(name="change_state", description="Turn a light on or off")
        def change_state(self, light_id: int, on: bool) -> str:
            return str(light_id)

        @kernel_function
        def get_lights(self) -> str:
            return "[]"

        def _internal(self) -> None:
            return None
    """
    tools = discover({"home/plugins.py": source})
    assert_tool(
        tools,
        "change_state",
        "semantic-kernel",
        "home.plugins.LightsPlugin.change_state",
        "home/plugins.py",
        6,
    )
    assert_tool(
        tools,
        "get_lights",
        "semantic-kernel",
        "home.plugins.LightsPlugin.get_lights",
        "home/plugins.py",
        10,
    )
    assert len(tools) == 2


# --------------------------------------------------------------------------- Google ADK


def test_google_adk_function_tool_and_plain_functions() -> None:
    source = """\
    from google.adk.agents import Agent
    from google.adk.tools import FunctionTool


    def reserve_car(city: str) -> dict:
        return {"city": city}


    def car_prices(city: str) -> dict:
        return {"city": city}


    root_agent = Agent(
        name="cars",
        model="gemini-2.0-flash",
        tools=[FunctionTool(func=reserve_car, require_confirmation=True), car_prices],
    )
    """
    tools = discover({"cars/agent.py": source})
    assert_tool(tools, "reserve_car", "google-adk", "cars.agent.reserve_car", "cars/agent.py", 5)
    assert_tool(tools, "car_prices", "google-adk", "cars.agent.car_prices", "cars/agent.py", 9)


# --------------------------------------------------------------------------- Haystack


def test_haystack_tool_class_and_decorator() -> None:
    source = """\
    from haystack.tools import Tool, tool


    def save_document(doc_id: str, text: str) -> str:
        return doc_id


    save_tool = Tool(
        name="save_document",
        description="Store a document",
        parameters={"type": "object", "properties": {}},
        function=save_document,
    )


    @tool
    def count_words(text: str) -> int:
        \"\"\"Count words.\"\"\"
        return len(text.split())
    """
    tools = discover({"docs/tools.py": source})
    assert_tool(tools, "save_document", "haystack", "docs.tools.save_document", "docs/tools.py", 4)
    assert_tool(
        tools,
        "count_words",
        "haystack",
        "docs.tools.count_words",
        "docs/tools.py",
        line_of(source, "def count_words"),
    )


def test_ag2_agent_tool_decorator_and_agent_tools() -> None:
    source = """\
    from ag2 import Agent
    from ag2.tools import tool


    @tool
    def book_room(room: str, day: str) -> str:
        \"\"\"Book a meeting room.\"\"\"
        return room


    def free_rooms(day: str) -> list[str]:
        \"\"\"List the free rooms.\"\"\"
        return []


    agent = Agent("rooms", prompt="Book rooms.", tools=[book_room, free_rooms])
    """
    tools = discover({"rooms/agent.py": source})
    line = line_of(source, "def book_room")
    assert_tool(tools, "book_room", "autogen", "rooms.agent.book_room", "rooms/agent.py", line)
    line = line_of(source, "def free_rooms")
    assert_tool(tools, "free_rooms", "autogen", "rooms.agent.free_rooms", "rooms/agent.py", line)


def test_autogen_tool_class_with_a_generic_base() -> None:
    source = """\
    from autogen_core import CancellationToken
    from autogen_core.tools import BaseTool
    from pydantic import BaseModel


    class CodeArgs(BaseModel):
        code: str


    class RunCode(BaseTool[CodeArgs, str]):
        def __init__(self) -> None:
            super().__init__(CodeArgs, str, "run_code", "Run Python code")

        async def run(self, args: CodeArgs, cancellation_token: CancellationToken) -> str:
            return args.code
    """
    tools = discover({"lab/tools.py": source})
    (tool,) = tools
    assert tool.framework == "autogen"
    assert tool.functions[0] == "lab.tools.RunCode.run"


# --------------------------------------------------------------------------- CAMEL


def test_camel_function_tools_of_a_toolkit_and_of_an_agent() -> None:
    source = """\
    from camel.agents import ChatAgent
    from camel.toolkits import BaseToolkit, FunctionTool


    class TicketToolkit(BaseToolkit):
        def open_ticket(self, title: str) -> str:
            \"\"\"Open a support ticket.\"\"\"
            return title

        def ticket_status(self, ticket_id: str) -> str:
            \"\"\"Look a ticket up.\"\"\"
            return ticket_id

        def get_tools(self) -> list[FunctionTool]:
            return [FunctionTool(self.open_ticket), FunctionTool(func=self.ticket_status)]


    def add(a: int, b: int) -> int:
        \"\"\"Add two numbers.\"\"\"
        return a + b


    agent = ChatAgent("You help.", tools=[add])
    """
    tools = discover({"desk/toolkit.py": source})
    assert_tool(
        tools,
        "open_ticket",
        "camel",
        "desk.toolkit.TicketToolkit.open_ticket",
        "desk/toolkit.py",
        line_of(source, "def open_ticket"),
    )
    assert_tool(
        tools,
        "ticket_status",
        "camel",
        "desk.toolkit.TicketToolkit.ticket_status",
        "desk/toolkit.py",
        line_of(source, "def ticket_status"),
    )
    assert_tool(
        tools, "add", "camel", "desk.toolkit.add", "desk/toolkit.py", line_of(source, "def add")
    )


def test_haystack_component_tool_runs_the_component() -> None:
    components = """\
    import requests
    from haystack import component


    @component
    class IssueCommenter:
        @component.output_types(success=bool)
        def run(self, url: str, comment: str) -> dict:
            requests.post(url, json={"body": comment}, timeout=10)
            return {"success": True}


    @component
    class IssueViewer:
        @component.output_types(text=str)
        def run(self, url: str) -> dict:
            return {"text": requests.get(url, timeout=10).text}
    """
    tools_module = """\
    from haystack.tools import ComponentTool

    from desk.components import IssueCommenter, IssueViewer, IssueCloser

    commenter = IssueCommenter()
    comment_tool = ComponentTool(component=commenter, name="issue_commenter")
    view_tool = ComponentTool(IssueViewer(), "issue_viewer")


    class IssueCloserTool(ComponentTool):
        def __init__(self, name: str = "issue_closer") -> None:
            closer = IssueCloser()
            super().__init__(component=closer, name=name)
    """
    components += """
    @component
    class IssueCloser:
        @component.output_types(closed=bool)
        def run(self, url: str) -> dict:
            requests.patch(url, json={"state": "closed"}, timeout=10)
            return {"closed": True}
    """
    tools = discover({"desk/components.py": components, "desk/tools.py": tools_module})
    found = sorted((t.framework, t.functions[0]) for t in tools)
    assert found == [
        ("haystack", "desk.components.IssueCloser.run"),
        ("haystack", "desk.components.IssueCommenter.run"),
        ("haystack", "desk.components.IssueViewer.run"),
    ]
    named = {t.functions[0]: t.name for t in tools}
    assert named["desk.components.IssueCommenter.run"] == "issue_commenter"
    assert named["desk.components.IssueViewer.run"] == "issue_viewer"


# --------------------------------------------------------------------------- raw schemas

RAW_IMPL = """\
def create_order(sku: str) -> str:
    return sku


def get_order(order_id: str) -> str:
    return order_id
"""


def test_raw_openai_chat_schema_with_dict_dispatch() -> None:
    loop = """\
    from shop import impl

    TOOLS = [
        {
            "type": "function",
            "function": {"name": "create_order", "parameters": {"type": "object"}},
        },
        {"type": "function", "function": {"name": "get_order", "parameters": {}}},
    ]
    DISPATCH = {"create_order": impl.create_order, "get_order": impl.get_order}
    """
    tools = discover({"shop/impl.py": RAW_IMPL, "shop/loop.py": loop})
    assert_tool(tools, "create_order", "openai", "shop.impl.create_order", "shop/impl.py", 1)
    assert_tool(tools, "get_order", "openai", "shop.impl.get_order", "shop/impl.py", 5)


def test_raw_openai_responses_flat_schema_with_getattr_dispatch() -> None:
    loop = """\
    from shop import impl

    TOOLS = [{"type": "function", "name": "create_order", "parameters": {"type": "object"}}]


    def run(call):
        handler = getattr(impl, call.name)
        return handler(**call.arguments)
    """
    tools = discover({"shop/impl.py": RAW_IMPL, "shop/loop.py": loop})
    assert_tool(tools, "create_order", "openai", "shop.impl.create_order", "shop/impl.py", 1)
    assert len(tools) == 1


def test_raw_anthropic_schema_with_if_dispatch() -> None:
    loop = """\
    from shop.impl import create_order as do_create

    TOOLS = [{"name": "place_order", "description": "Order", "input_schema": {"type": "object"}}]


    def handle(block):
        if block.name == "place_order":
            return do_create(**block.input)
        return None
    """
    tools = discover({"shop/impl.py": RAW_IMPL, "shop/loop.py": loop})
    assert_tool(tools, "place_order", "anthropic", "shop.impl.create_order", "shop/impl.py", 1)


# --------------------------------------------------------------------------- precision


def test_unrelated_tools_keyword_does_not_make_tools() -> None:
    source = """\
    from toolbox import Registry


    def resize_image(path: str) -> str:
        return path


    registry = Registry(tools=[resize_image])
    registry.configure(tools=[resize_image])
    """
    assert discover({"app/main.py": source}) == []


def test_decorator_named_tool_from_a_non_framework_module_is_no_tool() -> None:
    registry = """\
    def tool(fn):
        return fn
    """
    source = """\
    from myapp.registry import tool
    from plugins import tool as plugin_tool


    @tool
    def resize_image(path: str) -> str:
        return path


    @plugin_tool("thumb")
    def thumbnail(path: str) -> str:
        return path
    """
    assert discover({"myapp/registry.py": registry, "myapp/images.py": source}) == []


def test_test_files_do_not_define_tools() -> None:
    source = """\
    from langchain_core.tools import tool


    @tool
    def fake_create_order(sku: str) -> str:
        \"\"\"Fake.\"\"\"
        return sku
    """
    assert discover({"tests/test_agent.py": source}) == []


# --------------------------------------------------------------------------- declarations


def only(tools: list[ToolFacts]) -> ToolFacts:
    assert len(tools) == 1, [t.name for t in tools]
    return tools[0]


def test_guarded_declaration_is_read_by_name_without_the_runtime() -> None:
    source = """\
    from langchain_core.tools import tool

    from agentguard.runtime import guarded


    @tool
    @guarded(runtime, risk="write", idempotency="conditional", replay="never", key=make_key)
    def create_order(cart_id: str) -> str:
        \"\"\"Create.\"\"\"
        return cart_id
    """
    decl = only(discover({"app/tools.py": source})).guarded
    assert decl is not None
    assert (decl.risk, decl.idempotency, decl.replay, decl.has_key) == (
        "write",
        "conditional",
        "never",
        True,
    )
    assert decl.location.span.line == 7


@pytest.mark.parametrize(
    ("imports", "decorator"),
    [
        ("from agentguard.runtime import guarded as safe", "safe"),
        ("import agentguard.runtime as agr", "agr.guarded"),
        ("from agentguard import guarded", "guarded"),
    ],
)
def test_guarded_declaration_under_aliases(imports: str, decorator: str) -> None:
    source = f"""\
from agents import function_tool
{imports}


@function_tool
@{decorator}(runtime, risk="read", idempotency="idempotent")
def order_status(order_id: str) -> str:
    return order_id
"""
    decl = only(discover({"app/tools.py": source})).guarded
    assert decl is not None and decl.says_read_only and decl.idempotency == "idempotent"


def test_guarded_on_a_base_tool_method_declares_the_class_tool() -> None:
    source = """\
    from crewai.tools import BaseTool
    from agentguard.runtime import guarded as g


    class SendInvoice(BaseTool):
        name: str = "send_invoice"
        description: str = "Email an invoice"

        @g(runtime, risk="write", idempotency="keyed", replay="never")
        def _run(self, invoice_id: str) -> str:
            return invoice_id
    """
    decl = only(discover({"app/tools.py": source})).guarded
    assert decl is not None and decl.idempotency == "keyed"


def test_a_guarded_look_alike_from_another_package_is_no_declaration() -> None:
    source = """\
    from langchain_core.tools import tool
    from myapp.safety import guarded


    @tool
    @guarded(risk="read")
    def create_order(cart_id: str) -> str:
        \"\"\"Create.\"\"\"
        return cart_id
    """
    assert only(discover({"app/tools.py": source})).declarations == []


def test_mcp_tool_annotations_camel_case_in_decorator() -> None:
    source = """\
    from mcp.server.fastmcp import FastMCP
    from mcp.types import ToolAnnotations

    mcp = FastMCP("orders")


    @mcp.tool(annotations=ToolAnnotations(readOnlyHint=False, idempotentHint=True))
    def set_status(order_id: str, status: str) -> str:
        return order_id
    """
    decl = only(discover({"server.py": source})).declaration
    assert decl is not None and decl.source == "mcp-annotations"
    assert (decl.read_only, decl.idempotent_hint, decl.destructive) == (False, True, True)
    assert decl.says_idempotent


def test_mcp_v2_snake_case_annotations_with_pessimistic_defaults() -> None:
    source = """\
    from mcp.server import MCPServer
    from mcp.types import ToolAnnotations

    server = MCPServer("orders")


    @server.tool(annotations=ToolAnnotations(destructive_hint=False))
    def add_note(order_id: str, note: str) -> str:
        return order_id
    """
    decl = only(discover({"server.py": source})).declaration
    assert decl is not None
    # Left out: readOnlyHint -> False, idempotentHint -> False (the spec's defaults).
    assert (decl.read_only, decl.destructive, decl.idempotent_hint) == (False, False, False)
    assert not decl.says_idempotent


def test_mcp_annotations_dict_and_module_constant() -> None:
    source = """\
    from fastmcp import FastMCP

    mcp = FastMCP("files")
    READ_ONLY = {"readOnlyHint": True, "openWorldHint": False}


    @mcp.tool(annotations={"idempotentHint": True, "readOnlyHint": False})
    def put_file(path: str, text: str) -> str:
        return path


    @mcp.tool(annotations=READ_ONLY)
    def read_file(path: str) -> str:
        return path
    """
    tools = {t.name: t for t in discover({"server.py": source})}
    put = tools["put_file"].declaration
    assert put is not None and put.says_idempotent
    read = tools["read_file"].declaration
    assert read is not None and read.says_read_only


def test_mcp_annotations_imported_from_another_module_are_located_there() -> None:
    hints = """\
    from mcp.types import ToolAnnotations

    # Hints shared by the order tools.


    READ_ONLY = ToolAnnotations(readOnlyHint=True, idempotentHint=True)
    """
    server = """\
    import httpx
    from mcp.server.fastmcp import FastMCP

    from app.hints import READ_ONLY

    mcp = FastMCP("orders")


    @mcp.tool(annotations=READ_ONLY)
    def cancel_order(order_id: int) -> str:
        return httpx.delete(f"https://shop.example/orders/{order_id}").text
    """
    tool = only(discover({"app/hints.py": hints, "app/server.py": server}))
    assert tool.path == "app/server.py"
    declaration = tool.declaration
    assert declaration is not None and declaration.says_read_only
    # The positions are the constant's, in the file that writes it: read against the
    # importing file they pointed past the end of its line 6.
    assert declaration.location.path == "app/hints.py"
    assert declaration.location.span.line == line_of(hints, "READ_ONLY =")
    assert {location.path for location in declaration.fields.values()} == {"app/hints.py"}


def test_mcp_annotations_title_only_declares_nothing() -> None:
    source = """\
    from fastmcp import FastMCP

    mcp = FastMCP("files")


    @mcp.tool(annotations={"title": "Delete a file"})
    def delete_file(path: str) -> str:
        return path
    """
    assert only(discover({"server.py": source})).declaration is None


def test_langchain_metadata_hints_on_factory_and_class_attribute() -> None:
    source = """\
    from langchain_core.tools import BaseTool, StructuredTool


    def _upsert(key: str, value: str) -> str:
        return key


    upsert_tool = StructuredTool.from_function(
        _upsert, name="upsert", metadata={"idempotentHint": True, "readOnlyHint": False}
    )


    class Lookup(BaseTool):
        name: str = "lookup"
        description: str = "Find a record"
        metadata: dict = {"readOnlyHint": True}

        def _run(self, key: str) -> str:
            return key
    """
    tools = {t.name: t for t in discover({"app/tools.py": source})}
    upsert = tools["upsert"].declaration
    assert upsert is not None and upsert.source == "langchain-metadata" and upsert.says_idempotent
    lookup = tools["lookup"].declaration
    assert lookup is not None and lookup.says_read_only


def test_langchain_metadata_without_hint_keys_declares_nothing() -> None:
    source = """\
    from langchain_core.tools import StructuredTool


    def _send(to: str) -> str:
        return to


    send_tool = StructuredTool.from_function(_send, name="send", metadata={"team": "billing"})
    """
    assert only(discover({"app/tools.py": source})).declaration is None


def test_decorated_tool_listed_in_an_agent_of_another_module_keeps_its_decorator_name() -> None:
    tools_py = """\
    from langchain_core.tools import tool


    @tool("create_lead")
    def add_lead(email: str) -> str:
        \"\"\"Add a lead.\"\"\"
        return email
    """
    agent_py = """\
    from langchain.agents import create_agent
    from crm.tools import add_lead

    agent = create_agent("openai:gpt-4o", tools=[add_lead])
    """
    # agent.py sorts before tools.py: the registry must not name the tool first.
    tools = discover({"crm/agent.py": agent_py, "crm/tools.py": tools_py})
    assert_tool(tools, "create_lead", "langchain", "crm.tools.add_lead", "crm/tools.py", 5)


def test_guarded_outside_the_framework_decorator_still_names_the_framework() -> None:
    source = """\
    from agentguard.runtime import guarded
    from smolagents import tool


    @guarded(runtime, risk="write", idempotency="keyed")
    @tool
    def post_tweet(text: str) -> str:
        \"\"\"Post.\"\"\"
        return text
    """
    tool = assert_tool(
        discover({"bot/tools.py": source}),
        "post_tweet",
        "smolagents",
        "bot.tools.post_tweet",
        "bot/tools.py",
        7,
    )
    assert tool.guarded is not None and tool.guarded.idempotency == "keyed"


def test_shared_base_class_of_tools_is_not_a_tool_itself() -> None:
    tools = discover(
        {
            "travel/tools.py": (
                "import requests\n"
                "from crewai.tools import BaseTool\n\n"
                "class BookingTool(BaseTool):\n"
                '    """Common plumbing for booking tools."""\n\n'
                "    def _run(self, **kwargs: object) -> str:\n"
                "        return self.book(**kwargs)\n\n"
                "class HotelTool(BookingTool):\n"
                '    name: str = "Book Hotel"\n'
                '    description: str = "Book a hotel room."\n\n'
                "    def book(self, hotel_id: str) -> str:\n"
                '        return requests.post("https://hotels.example/bookings", json={"hotel": hotel_id}).text\n'
            )
        }
    )
    assert sorted(t.name for t in tools) == ["Book Hotel"]


def test_mcp_annotations_built_by_a_project_helper_function() -> None:
    # A server that builds its write hints with a small helper: the helper's returned
    # ToolAnnotations, with the call's arguments bound to its parameters, is the declaration.
    source = """\
    import sqlite3

    from mcp.server.fastmcp import FastMCP
    from mcp.types import ToolAnnotations

    mcp = FastMCP("notes")


    def changes(*, destructive: bool, idempotent: bool) -> ToolAnnotations:
        return ToolAnnotations(
            readOnlyHint=False,
            destructiveHint=destructive,
            idempotentHint=idempotent,
        )


    @mcp.tool(annotations=changes(destructive=False, idempotent=False))
    def add_note(text: str) -> str:
        sqlite3.connect("notes.db").execute("INSERT INTO notes VALUES (?)", (text,))
        return "ok"


    @mcp.tool(annotations=changes(destructive=True, idempotent=True))
    def clear_notes() -> str:
        sqlite3.connect("notes.db").execute("DELETE FROM notes")
        return "ok"
    """
    tools = {t.name: t for t in discover({"server.py": source})}
    add = tools["add_note"].declaration
    assert add is not None and add.source == "mcp-annotations"
    assert (add.read_only, add.destructive, add.idempotent_hint) == (False, False, False)
    clear = tools["clear_notes"].declaration
    assert clear is not None
    assert (clear.read_only, clear.destructive, clear.idempotent_hint) == (False, True, True)


def test_helper_built_annotations_silence_ag101(scan_files: ScanFiles) -> None:
    result = scan_files(
        {
            "server.py": (
                "import sqlite3\n"
                "from mcp.server.fastmcp import FastMCP\n"
                "from mcp.types import ToolAnnotations\n\n"
                "mcp = FastMCP('notes')\n\n"
                "def changes(destructive: bool, idempotent: bool) -> ToolAnnotations:\n"
                "    return ToolAnnotations(read_only_hint=False, destructive_hint=destructive,\n"
                "                           idempotent_hint=idempotent)\n\n"
                "@mcp.tool(annotations=changes(False, True))\n"
                "def tag_note(note_id: int, tag: str) -> str:\n"
                "    sqlite3.connect('notes.db').execute('UPDATE notes SET tag=? WHERE id=?', (tag, note_id))\n"
                "    return 'ok'\n\n"
                "def plain(flag: bool) -> dict:\n"
                "    return {'title': 'x'}\n\n"
                "@mcp.tool(annotations=plain(True))\n"
                "def drop_note(note_id: int) -> str:\n"
                "    sqlite3.connect('notes.db').execute('DELETE FROM notes WHERE id=?', (note_id,))\n"
                "    return 'ok'\n"
            )
        }
    )
    flagged = {f.tool for f in result.findings if f.code == "AG101"}
    # Declared through the helper: no AG101. A helper that declares no hint still leaves
    # the tool undeclared.
    assert flagged == {"drop_note"}


def test_tools_registered_in_a_loop_over_spec_rows_returned_by_module_functions(
    scan_files: ScanFiles,
) -> None:
    # Each area module returns (function, name, description) rows; the entry point picks an
    # area's row function from a dict and registers every row's function in a loop.
    notes = (
        "import sqlite3\n\n"
        "def list_notes() -> list:\n"
        "    return sqlite3.connect('n.db').execute('SELECT * FROM notes').fetchall()\n\n"
        "def add_note(text: str) -> str:\n"
        "    sqlite3.connect('n.db').execute('INSERT INTO notes VALUES (?)', (text,))\n"
        "    return 'ok'\n\n"
        "def get_all_functions() -> list:\n"
        "    return [\n"
        "        (list_notes, 'notes_list', 'List notes'),\n"
        "        (add_note, 'notes_add', 'Add a note'),\n"
        "    ]\n"
    )
    tags = (
        "import httpx\n\n"
        "def drop_tag(tag: str) -> str:\n"
        "    return httpx.delete(f'https://tags.example/{tag}').text\n\n"
        "def rows() -> list:\n"
        "    return [(drop_tag, 'tags_drop', 'Drop a tag')]\n"
    )
    main = (
        "from fastmcp import FastMCP\n"
        "from fastmcp.tools import Tool\n\n"
        "from app.notes import get_all_functions as note_rows\n"
        "from app.tags import rows as tag_rows\n\n"
        "mcp = FastMCP('desk')\n"
        "AREAS = {'notes': note_rows, 'tags': tag_rows}\n\n"
        "def serve(areas: list[str]) -> None:\n"
        "    for area in areas:\n"
        "        get_rows = AREAS[area]\n"
        "        functions = get_rows()\n"
        "        for func, name, description in functions:\n"
        "            mcp.add_tool(Tool.from_function(func, name=name, description=description))\n"
        "    mcp.run()\n"
    )
    result = scan_files(
        {"app/__init__.py": "", "app/notes.py": notes, "app/tags.py": tags, "app/main.py": main}
    )
    tools = {t.name: t for t in result.project.tools}
    assert set(tools) == {"notes_list", "notes_add", "tags_drop"}
    assert tools["notes_add"].path == "app/notes.py"
    flagged = {f.tool for f in result.findings if f.code == "AG101"}
    assert flagged == {"notes_add", "tags_drop"}
    assert not [f for f in result.findings if f.code == "AG003"]


def test_a_loop_over_rows_nobody_wrote_finds_no_tool(scan_files: ScanFiles) -> None:
    main = (
        "from fastmcp import FastMCP\n"
        "from fastmcp.tools import Tool\n\n"
        "mcp = FastMCP('desk')\n\n"
        "def serve(loaded: list) -> None:\n"
        "    for func, name in loaded:\n"
        "        mcp.add_tool(Tool.from_function(func, name=name))\n"
    )
    result = scan_files({"main.py": main})
    assert not result.project.tools


def test_functions_registered_through_a_project_wrapper_are_each_a_tool(
    scan_files: ScanFiles,
) -> None:
    """``mcp.add_tool(with_errors(create_order))``: the wrapper calls the function it is
    handed, so each registration is the wrapped function's tool, named after it and judged
    by what it does, not one tool ``with_errors`` judged read."""
    source = dedent(
        '''
        import functools

        import httpx
        from mcp.server.fastmcp import FastMCP

        mcp = FastMCP("shop")


        def with_errors(fn):
            @functools.wraps(fn)
            async def run(**kwargs):
                try:
                    return await fn(**kwargs)
                except httpx.HTTPError:
                    return "the shop did not answer"

            return run


        async def create_order(cart_id: str) -> dict:
            """Place the order for a cart."""
            async with httpx.AsyncClient() as client:
                response = await client.post("https://shop.example/orders", json={"cart": cart_id})
                return response.json()


        async def order_status(order_id: str) -> dict:
            """The status of an order."""
            async with httpx.AsyncClient() as client:
                response = await client.get(f"https://shop.example/orders/{order_id}")
                return response.json()


        mcp.add_tool(with_errors(create_order))
        mcp.add_tool(with_errors(order_status))
        '''
    )
    result = scan_files({"server.py": source})
    tools = {tool.name: tool for tool in result.project.tools}
    assert set(tools) == {"create_order", "order_status"}
    assert [effect.kind for effect in tools["create_order"].effects] == ["network_write"]
    assert tools["order_status"].effects == []


def test_a_spec_named_like_a_method_of_an_unrelated_class_is_not_that_method(
    scan_files: ScanFiles,
) -> None:
    """An Anthropic spec named ``close`` that the loop only queues for later, beside an HTTP
    client class with a ``close`` method: nothing hands the spec's call an instance of that
    class, so the method is no tool; the lookup the loop runs by name is."""
    source = dedent(
        """
        import anthropic
        import httpx


        class DeskClient:
            def __init__(self):
                self._http = httpx.Client(base_url="https://desk.example")

            def close(self) -> None:
                self._http.close()


        def lookup_order(order_id: int) -> dict:
            return httpx.get(f"https://desk.example/orders/{order_id}").json()


        TOOLS = [
            {"name": "lookup_order", "description": "One order.", "input_schema": {"type": "object"}},
            {"name": "close", "description": "End the chat.", "input_schema": {"type": "object"}},
        ]


        def respond(messages: list) -> list:
            client = anthropic.Anthropic()
            reply = client.messages.create(model="m", max_tokens=512, tools=TOOLS, messages=messages)
            queued = []
            for block in reply.content:
                if block.type != "tool_use":
                    continue
                if block.name == "lookup_order":
                    messages.append(lookup_order(block.input["order_id"]))
                else:
                    queued.append(block.name)
            return queued
        """
    )
    result = scan_files({"desk.py": source})
    names = {tool.name: tool for tool in result.project.tools}
    assert "lookup_order" in names
    assert not [tool for tool in result.project.tools if tool.name == "close"]


# --------------------------------------------------------------------------- answer choices

ANSWER_MODELS = """\
from typing import Literal, Optional, Union

from pydantic import BaseModel, Field


class BookTable(BaseModel):
    \"\"\"Book a table at the restaurant.\"\"\"

    action: Literal["book_table"]
    guests: int = Field(..., description="How many guests")


class CancelBooking(BaseModel):
    \"\"\"Cancel a booking.\"\"\"

    action: Literal["cancel_booking"]
    booking_id: str


class Reply(BaseModel):
    \"\"\"Just answer.\"\"\"

    action: Literal["reply"]
    text: str


Action = Union[BookTable, CancelBooking, Reply]


class Turn(BaseModel):
    thought: str
    next_action: Optional[Action] = None
"""

ANSWER_LOOP = """\
import httpx
from openai import OpenAI

from host.models import Turn

client = OpenAI()
api = httpx.Client(base_url="https://bookings.example.com")


def book(guests: int) -> dict:
    return api.post("/bookings", json={"guests": guests}).json()


def step(messages: list) -> str:
    turn = client.beta.chat.completions.parse(
        model="gpt-4o", messages=messages, response_format=Turn
    ).choices[0].message.parsed
    choice = turn.next_action
    if choice.action == "book_table":
        return str(book(choice.guests))
    if choice.action == "cancel_booking":
        api.delete(f"/bookings/{choice.booking_id}")
        return "cancelled"
    if choice.action == "reply":
        return choice.text
    return ""
"""


def test_a_tagged_union_in_the_schema_of_the_models_answer_is_a_choice_of_tools() -> None:
    """``parse(response_format=Turn)`` where a field of ``Turn`` is a union of models each
    tagged ``action: Literal[...]``: the model picks a tool by answering with one member,
    so each member is a tool named by its tag, run by the branch on that tag."""
    loop = "host/loop.py"
    tools = discover({"host/models.py": ANSWER_MODELS, loop: ANSWER_LOOP})
    for name, needle in [
        ("book_table", 'if choice.action == "book_table"'),
        ("cancel_booking", 'if choice.action == "cancel_booking"'),
        ("reply", 'if choice.action == "reply"'),
    ]:
        found = [t for t in tools if t.name == name]
        assert len(found) == 1, [(t.name, t.anchor) for t in tools]
        assert found[0].framework == "structured-output"
        assert (found[0].anchor.path, found[0].anchor.span.line) == (
            loop,
            line_of(ANSWER_LOOP, needle) + 1,
        )


def test_an_answer_schema_handed_to_ollama_as_json_schema_is_followed_too() -> None:
    loop = ANSWER_LOOP.replace("from openai import OpenAI\n", "import ollama\n").replace(
        "client = OpenAI()\n", ""
    )
    loop = loop.replace(
        'client.beta.chat.completions.parse(\n        model="gpt-4o", messages=messages, '
        "response_format=Turn\n    ).choices[0].message.parsed",
        'Turn.model_validate_json(ollama.chat(model="llama3", messages=messages, '
        "format=Turn.model_json_schema()).message.content)",
    )
    assert "format=Turn.model_json_schema()" in loop
    tools = discover({"host/models.py": ANSWER_MODELS, "host/loop.py": loop})
    assert {t.name for t in tools} == {"book_table", "cancel_booking", "reply"}


def test_a_tagged_union_no_model_answers_with_is_no_tool() -> None:
    """The same union parsing a web request's body: nothing hands it to a model."""
    loop = """\
    from fastapi import FastAPI

    from host.models import Turn

    app = FastAPI()


    @app.post("/turns")
    def receive(turn: Turn) -> str:
        if turn.next_action.action == "book_table":
            return "booked"
        return ""
    """
    assert discover({"host/models.py": ANSWER_MODELS, "host/web.py": loop}) == []


def test_an_answer_schema_given_to_langchains_with_structured_output_is_followed_too() -> None:
    loop = """\
    import httpx
    from langchain_openai import ChatOpenAI

    from host.models import Turn

    api = httpx.Client(base_url="https://bookings.example.com")
    planner = ChatOpenAI(model="gpt-4o").with_structured_output(Turn)


    def step(messages: list) -> str:
        choice = planner.invoke(messages).next_action
        if choice.action == "book_table":
            return api.post("/bookings", json={"guests": choice.guests}).text
        if choice.action == "cancel_booking":
            return api.delete(f"/bookings/{choice.booking_id}").text
        if choice.action == "reply":
            return choice.text
        return ""
    """
    tools = discover({"host/models.py": ANSWER_MODELS, "host/loop.py": loop})
    assert {t.name for t in tools} == {"book_table", "cancel_booking", "reply"}


LAMBDA_TABLE_SPECS = """\
TOOLS = [
    {"type": "function", "function": {"name": "plant_seed", "description": "Plant a seed.",
     "parameters": {"type": "object", "properties": {"bed": {"type": "string"}}}}},
    {"type": "function", "function": {"name": "bed_report", "description": "Report on a bed.",
     "parameters": {"type": "object", "properties": {"bed": {"type": "string"}}}}},
]
"""

LAMBDA_TABLE_GARDEN = """\
import httpx


class Garden:
    def plant(self, bed: str) -> str:
        return httpx.post(f"https://garden.example/beds/{bed}/seeds").text


def report(bed: str) -> str:
    return httpx.get(f"https://garden.example/beds/{bed}").text
"""

LAMBDA_TABLE_LOOP = """\
import json

from openai import OpenAI

from greenhouse import garden as g
from greenhouse.specs import TOOLS

plot = g.Garden()
client = OpenAI()


def show(text: str) -> None:
    print(text)


def step(history: list) -> None:
    answer = client.chat.completions.create(model="gpt-4o", messages=history, tools=TOOLS)
    handlers = {
        "plant_seed": lambda args: (plot.plant(args["bed"]), show("planted")),
        "bed_report": lambda args: show(g.report(args["bed"])),
    }
    for call in answer.choices[0].message.tool_calls:
        handlers[call.function.name](json.loads(call.function.arguments))
"""


def test_a_lambda_in_a_handler_table_runs_the_project_code_it_calls() -> None:
    """``{"plant_seed": lambda args: (plot.plant(...), show(...))}``: the tool runs what the
    lambda calls, the method of the module's ``Garden`` instance first (there is no function
    of the tool's name); in ``show(g.report(...))`` the report runs first. A write in any of
    them is the tool's."""
    tools = discover(
        {
            "greenhouse/specs.py": LAMBDA_TABLE_SPECS,
            "greenhouse/garden.py": LAMBDA_TABLE_GARDEN,
            "greenhouse/loop.py": LAMBDA_TABLE_LOOP,
        }
    )
    by_name = {t.name: t for t in tools}
    assert by_name["plant_seed"].functions == [
        "greenhouse.garden.Garden.plant",
        "greenhouse.loop.show",
    ]
    assert by_name["bed_report"].functions == ["greenhouse.garden.report", "greenhouse.loop.show"]
