"""Effects of tools that do their work inline, on objects an async client hands out.

A low-level MCP server's ``call_tool`` branch that calls the chat client itself (no function
of its own) is the tool: what its own statements call are its effects. ``channel = await
client.fetch_channel(i)`` holds what the client handed out, as the synchronous form does, so
``channel.send(...)`` is a send. A lookup in another arm of the dispatch guards no create, and
telling the connected MCP client that a resource changed is no side effect.
"""

from __future__ import annotations

from agentguard.report.model import build_report

from .conftest import ScanFiles, tool_verdicts

CHAT_SERVER = """\
import discord
from mcp.server.lowlevel import Server
from mcp.types import TextContent, Tool

server = Server("chat")
bot = discord.Client(intents=discord.Intents.default())


@server.list_tools()
async def list_tools() -> list[Tool]:
    return [
        Tool(name="post_message", description="Post a message", inputSchema={}),
        Tool(name="unassign_role", description="Take a role away", inputSchema={}),
        Tool(name="assign_role", description="Give a member a role", inputSchema={}),
        Tool(name="list_channels", description="List the channels", inputSchema={}),
        Tool(name="mute_author", description="Mute a message's author", inputSchema={}),
        Tool(name="open_channel", description="Make a text channel", inputSchema={}),
    ]


@server.call_tool()
async def call_tool(name: str, arguments: dict) -> list[TextContent]:
    if name == "post_message":
        channel = await bot.fetch_channel(int(arguments["channel_id"]))
        sent = await channel.send(arguments["text"])
        return [TextContent(type="text", text=f"posted {sent.id}")]
    elif name == "unassign_role":
        guild = await bot.fetch_guild(int(arguments["guild_id"]))
        member = await guild.fetch_member(int(arguments["user_id"]))
        await member.remove_roles(guild.get_role(int(arguments["role_id"])))
        return [TextContent(type="text", text="done")]
    elif name == "assign_role":
        guild = await bot.fetch_guild(int(arguments["guild_id"]))
        member = await guild.fetch_member(int(arguments["user_id"]))
        await member.add_roles(guild.get_role(int(arguments["role_id"])))
        return [TextContent(type="text", text="done")]
    elif name == "list_channels":
        guild = await bot.fetch_guild(int(arguments["guild_id"]))
        channels = await guild.fetch_channels()
        return [TextContent(type="text", text=", ".join(c.name for c in channels))]
    elif name == "mute_author":
        channel = await bot.fetch_channel(int(arguments["channel_id"]))
        message = await channel.fetch_message(int(arguments["message_id"]))
        if message.author.bot:
            return [TextContent(type="text", text="bots are never muted")]
        await message.author.edit(mute=True)
        return [TextContent(type="text", text="muted")]
    elif name == "open_channel":
        guild = await bot.fetch_guild(int(arguments["guild_id"]))
        made = await guild.create_text_channel(name=arguments["name"])
        return [TextContent(type="text", text=f"made {made.id}")]
    raise ValueError(name)
"""


def test_inline_branches_reach_what_their_awaited_handles_do(scan_files: ScanFiles) -> None:
    verdicts = tool_verdicts(scan_files, {"chat/server.py": CHAT_SERVER})
    risk, codes = verdicts["post_message"]
    assert risk == "network_write" and {"AG101", "AG201"} <= codes
    risk, codes = verdicts["unassign_role"]
    assert risk == "destructive" and "AG101" in codes and "AG201" not in codes
    # a role added to a member: a link, a write with no key needed
    risk, codes = verdicts["assign_role"]
    assert risk == "write" and "AG101" in codes and "AG201" not in codes
    # a read-only branch stays read, with no write finding
    risk, codes = verdicts["list_channels"]
    assert risk == "read" and not codes & {"AG101", "AG201", "AG902"}


def test_a_lookup_in_another_dispatch_arm_guards_no_create(scan_files: ScanFiles) -> None:
    """``mute_author`` looks a message up and returns early; ``open_channel``, another arm of
    the same dispatch, never passes that check: its create has no guard."""
    verdicts = tool_verdicts(scan_files, {"chat/server.py": CHAT_SERVER})
    risk, codes = verdicts["open_channel"]
    assert risk == "network_write" and "AG201" in codes


def test_an_async_function_tool_reaches_an_awaited_handle(scan_files: ScanFiles) -> None:
    source = """\
from discord.ext import commands
from mcp.server.fastmcp import FastMCP

mcp = FastMCP("chat")
bot = commands.Bot(command_prefix="!")


@mcp.tool()
async def post_message(channel_id: str, text: str) -> str:
    channel = await bot.fetch_channel(int(channel_id))
    sent = await channel.send(text)
    return f"posted {sent.id}"
"""
    risk, codes = tool_verdicts(scan_files, {"chat/server.py": source})["post_message"]
    assert risk == "network_write" and "AG201" in codes


def test_telling_the_mcp_client_a_resource_changed_is_no_side_effect(
    scan_files: ScanFiles,
) -> None:
    source = """\
from mcp.server.fastmcp import Context, FastMCP
from mcp.server.lowlevel import Server
from mcp.types import TextContent, Tool

notes: list[str] = []
mcp = FastMCP("notes")
server = Server("notes-lowlevel")


@mcp.tool()
async def remember(note: str, ctx: Context) -> str:
    notes.append(note)
    await ctx.session.send_resource_updated("memo://notes")
    await ctx.info("noted")
    return "noted"


@server.list_tools()
async def list_tools() -> list[Tool]:
    return [Tool(name="jot", description="Jot a note down", inputSchema={})]


@server.call_tool()
async def call_tool(name: str, arguments: dict) -> list[TextContent]:
    if name == "jot":
        notes.append(arguments["note"])
        await server.request_context.session.send_resource_updated("memo://notes")
        return [TextContent(type="text", text="noted")]
    raise ValueError(name)
"""
    verdicts = tool_verdicts(scan_files, {"notes/server.py": source})
    for name in ("remember", "jot"):
        risk, codes = verdicts[name]
        assert risk == "read" and not codes & {"AG101", "AG201"}, name


WRAPPED_SERVER = """\
import os

import httpx
from mcp.server.fastmcp import FastMCP
from mcp.types import ToolAnnotations

mcp = FastMCP("tasks")
ENABLED = os.environ.get("TASK_TOOLS")
api = httpx.Client(base_url="https://tasks.example.com")


def task_tool(annotations: ToolAnnotations | None = None):
    def register(func):
        if ENABLED is None or func.__name__ in ENABLED.split(","):
            return mcp.tool(annotations=annotations)(func)
        return func

    return register


def logged(func):
    print("registering", func.__name__)
    return mcp.tool()(func)


@task_tool(annotations=ToolAnnotations(readOnlyHint=True))
def list_tasks(project: str) -> list:
    return api.get(f"/projects/{project}/tasks").json()


@task_tool(ToolAnnotations(readOnlyHint=False, idempotentHint=False))
def add_task(project: str, title: str) -> dict:
    return api.post(f"/projects/{project}/tasks", json={"title": title}).json()


@logged
def close_task(task_id: str) -> dict:
    return api.post(f"/tasks/{task_id}/comments", json={"body": "closing"}).json()
"""


def test_a_project_decorator_applying_the_framework_decorator_makes_tools(
    scan_files: ScanFiles,
) -> None:
    """``@task_tool(annotations=...)`` applies ``mcp.tool(annotations=annotations)`` to the
    function: each use is an MCP tool, declared by what the use passes; ``@logged`` applies
    ``mcp.tool()`` itself."""
    result = scan_files({"tasks/server.py": WRAPPED_SERVER})
    report = {row.name: row for row in build_report(result).tools}
    assert set(report) == {"list_tasks", "add_task", "close_task"}
    assert (report["list_tasks"].risk.value, report["list_tasks"].risk.source) == (
        "read",
        "declared (mcp-annotations)",
    )
    assert report["add_task"].risk.value == "write"
    codes = {(f.tool, f.code) for f in result.findings}
    assert ("add_task", "AG201") in codes and ("add_task", "AG101") not in codes
    assert ("close_task", "AG101") in codes
    assert not {code for tool, code in codes if tool == "list_tasks"} & {"AG101", "AG201"}


NOTES_CLIENT = """\
import requests


class NotesApi:
    def __init__(self, base: str) -> None:
        self.base = base

    def _guarded(self, request):
        try:
            return request()
        except requests.HTTPError as e:
            raise RuntimeError(f"notes service said {e.response.status_code}") from e

    def list_notes(self, folder: str) -> list:
        def request():
            return requests.get(f"{self.base}/folders/{folder}", timeout=5).json()

        return self._guarded(request)

    def add_note(self, folder: str, text: str) -> dict:
        def request():
            answer = requests.post(f"{self.base}/folders/{folder}", data=text, timeout=5)
            answer.raise_for_status()
            return answer.json()

        return self._guarded(request)
"""

NOTES_HANDLERS = """\
import json

from mcp.types import TextContent, Tool

from notes.client import NotesApi

LIST_NOTES = "notes_list"
api = NotesApi("http://127.0.0.1:8800")


class Handler:
    def __init__(self, tool_name: str) -> None:
        self.name = tool_name

    def describe(self) -> Tool:
        raise NotImplementedError

    def run(self, args: dict) -> list[TextContent]:
        raise NotImplementedError


class ListNotes(Handler):
    def __init__(self) -> None:
        super().__init__(LIST_NOTES)

    def describe(self) -> Tool:
        return Tool(name=self.name, description="List the notes of a folder", inputSchema={})

    def run(self, args: dict) -> list[TextContent]:
        notes = api.list_notes(args["folder"])
        return [TextContent(type="text", text=json.dumps(notes))]


class AddNote(Handler):
    def __init__(self) -> None:
        super().__init__(tool_name="notes_add")

    def describe(self) -> Tool:
        return Tool(name=self.name, description="Add a note to a folder", inputSchema={})

    def run(self, args: dict) -> list[TextContent]:
        made = api.add_note(args["folder"], args["text"])
        return [TextContent(type="text", text=json.dumps(made))]
"""

NOTES_SERVER = """\
from mcp.server.lowlevel import Server
from mcp.types import TextContent, Tool

from notes import handlers

app = Server("notes")
registry = {}


def register(handler: handlers.Handler) -> None:
    registry[handler.name] = handler


register(handlers.ListNotes())
register(handlers.AddNote())


@app.list_tools()
async def list_tools() -> list[Tool]:
    return [handler.describe() for handler in registry.values()]


@app.call_tool()
async def call_tool(name: str, arguments: dict) -> list[TextContent]:
    return registry[name].run(arguments)
"""


def test_handler_classes_name_their_tools_and_run_through_a_guarded_runner(
    scan_files: ScanFiles,
) -> None:
    """Each handler class builds ``Tool(name=self.name)``, its name handed to the base's
    constructor; its other public method does the work. That method's client wraps each
    request in a nested function handed to ``_guarded``, which calls it: the request is the
    tool's effect."""
    files = {
        "notes/client.py": NOTES_CLIENT,
        "notes/handlers.py": NOTES_HANDLERS,
        "notes/server.py": NOTES_SERVER,
    }
    verdicts = tool_verdicts(scan_files, files)
    assert set(verdicts) == {"notes_list", "notes_add"}
    risk, codes = verdicts["notes_add"]
    assert risk == "network_write" and {"AG101", "AG201"} <= codes
    risk, codes = verdicts["notes_list"]
    assert risk == "read" and not codes & {"AG101", "AG201"}


def test_a_handler_class_with_helpers_is_run_by_the_method_the_dispatch_calls(
    scan_files: ScanFiles,
) -> None:
    source = """\
import subprocess

from mcp.server.lowlevel import Server
from mcp.types import TextContent, Tool

app = Server("runner")


class RunHandler:
    name = "run_command"

    def allowed(self) -> list[str]:
        return ["ls", "make"]

    def describe(self) -> Tool:
        return Tool(name=self.name, description="Run a command", inputSchema={})

    def run_tool(self, arguments: dict) -> list[TextContent]:
        done = subprocess.run(arguments["argv"], capture_output=True, text=True)
        return [TextContent(type="text", text=done.stdout)]


handler = RunHandler()


@app.list_tools()
async def list_tools() -> list[Tool]:
    return [handler.describe()]


@app.call_tool()
async def call_tool(name: str, arguments: dict) -> list[TextContent]:
    if name != handler.name:
        raise ValueError(name)
    return handler.run_tool(arguments)
"""
    risk, codes = tool_verdicts(scan_files, {"runner/server.py": source})["run_command"]
    assert "exec" in risk and "AG101" in codes


def test_nested_functions_registered_after_a_partial_keep_their_name(
    scan_files: ScanFiles,
) -> None:
    """``self.tool(find_tool, name="notes-find")`` in a ``FastMCP`` subclass, where
    ``find_tool`` is a nested function, maybe wrapped in a partial first."""
    source = """\
import functools

import httpx
from fastmcp import FastMCP


class NotesServer(FastMCP):
    def __init__(self, base: str, folder: str | None = None) -> None:
        super().__init__(name="notes")
        self.http = httpx.AsyncClient(base_url=base)
        self.folder = folder
        self.register()

    def register(self) -> None:
        async def find(query: str, folder: str) -> list:
            answer = await self.http.get(f"/folders/{folder}/notes", params={"q": query})
            return answer.json()

        async def store(text: str, folder: str) -> str:
            answer = await self.http.post(f"/folders/{folder}/notes", json={"text": text})
            return answer.json()["id"]

        find_tool = find
        store_tool = store
        if self.folder:
            find_tool = functools.partial(find_tool, folder=self.folder)
            store_tool = functools.partial(store_tool, folder=self.folder)
        self.tool(find_tool, name="notes-find")
        self.tool(store_tool, name="notes-store")
"""
    verdicts = tool_verdicts(scan_files, {"notes/server.py": source})
    assert set(verdicts) == {"notes-find", "notes-store"}
    assert verdicts["notes-find"][0] == "read"
    risk, codes = verdicts["notes-store"]
    assert risk == "network_write" and {"AG101", "AG201"} <= codes


GRAPH_TOOLS = """\
from mcp.server.fastmcp import FastMCP
from neo4j import AsyncDriver, AsyncGraphDatabase, RoutingControl

mcp = FastMCP("graph")
driver: AsyncDriver = AsyncGraphDatabase.driver("neo4j://localhost:7687")


async def _writes(statement: str) -> bool:
    plan = "EXPLAIN " + statement
    _, summary, _ = await driver.execute_query(query_=plan)
    return "w" in (summary.query_type or "")


@mcp.tool()
async def find_people(name: str) -> list:
    records, _, _ = await driver.execute_query(
        "MATCH (p:Person) WHERE p.name CONTAINS $name RETURN p.name AS name",
        {"name": name},
        routing_=RoutingControl.READ,
    )
    return [r["name"] for r in records]


@mcp.tool()
async def run_read_statement(statement: str) -> list:
    if await _writes(statement):
        raise ValueError("only reads")
    records, _, _ = await driver.execute_query(statement, routing_=RoutingControl.READ)
    return [r.data() for r in records]


@mcp.tool()
async def rename_person(person_id: str, name: str) -> str:
    await driver.execute_query(
        "MATCH (p:Person {id: $id}) SET p.name = $name", {"id": person_id, "name": name}
    )
    return "renamed"


@mcp.tool()
async def befriend(a: str, b: str) -> str:
    await driver.execute_query(
        "MATCH (x:Person {id: $a}), (y:Person {id: $b}) CREATE (x)-[:KNOWS]->(y)",
        {"a": a, "b": b},
    )
    return "linked"
"""


def test_cypher_statements_are_judged_by_their_clauses(scan_files: ScanFiles) -> None:
    """A Cypher statement starts with ``MATCH`` whether it reads or writes: a ``SET`` in it
    writes (repeat-safe), a ``CREATE`` adds a relationship each run; ``"EXPLAIN " + query``
    only plans, whatever the query. The graph is the application's own database: its
    writes are declared (AG101), never keyed (AG201)."""
    verdicts = tool_verdicts(scan_files, {"graph/server.py": GRAPH_TOOLS})
    risk, codes = verdicts["find_people"]
    assert risk == "read" and not codes & {"AG101", "AG201"}
    risk, codes = verdicts["run_read_statement"]
    assert "write" not in risk and not codes & {"AG101", "AG201"}
    risk, codes = verdicts["rename_person"]
    assert risk == "write" and "AG101" in codes and "AG201" not in codes
    risk, codes = verdicts["befriend"]
    assert risk == "write" and "AG101" in codes and "AG201" not in codes


def test_keys_typed_into_a_driven_browser_are_unjudged_not_a_message(
    scan_files: ScanFiles,
) -> None:
    source = """\
from langchain_core.tools import tool
from selenium import webdriver
from selenium.webdriver.common.keys import Keys

driver = webdriver.Chrome()


@tool
def dismiss_dialog() -> str:
    \"\"\"Close the dialog in front of the page.\"\"\"
    webdriver.ActionChains(driver).send_keys(Keys.ESCAPE).perform()
    return "closed"
"""
    risk, codes = tool_verdicts(scan_files, {"browse/tools.py": source})["dismiss_dialog"]
    assert risk == "unknown" and "AG201" not in codes


PAYMENTS_CORE = """\
from typing import Generic, TypeVar

import httpx

T = TypeVar("T")


class ToolkitBase(Generic[T]):
    def __init__(self, key: str) -> None:
        self.http = httpx.Client(base_url="https://pay.example.com", headers={"key": key})

    def run_tool(self, method: str, args: dict) -> str:
        return self.http.post(f"/tools/{method}", json=args).text
"""

PAYMENTS_TOOLS = """\
from typing import Callable

from agents import FunctionTool
from langchain_core.tools import BaseTool

from payments.core import ToolkitBase


class PayTool(BaseTool):
    run_tool: Callable[[str, dict], str]
    method: str
    name: str = ""
    description: str = ""

    def _run(self, **kwargs) -> str:
        return self.run_tool(self.method, kwargs)


class LangChainToolkit(ToolkitBase[list[PayTool]]):
    def tools(self, names: list[str]) -> list[PayTool]:
        return [
            PayTool(run_tool=self.run_tool, method=n, name=n, description=n) for n in names
        ]


class AgentsToolkit(ToolkitBase[list[FunctionTool]]):
    def tool(self, tool_name: str) -> FunctionTool:
        toolkit = self

        async def on_invoke_tool(ctx, input_str: str) -> str:
            return toolkit.run_tool(tool_name, {"input": input_str})

        return FunctionTool(
            name=tool_name,
            description=tool_name,
            params_json_schema={},
            on_invoke_tool=on_invoke_tool,
        )
"""


def test_delegating_tools_reach_the_executor_they_are_built_with(scan_files: ScanFiles) -> None:
    """A tool class whose ``_run`` calls a callable field (``run_tool``, given at
    construction as a method of a generic base), and a closure calling ``toolkit.run_tool``
    with ``toolkit = self``: both run the toolkit's remote executor, whose operation the
    model picks, never a read."""
    files = {"payments/core.py": PAYMENTS_CORE, "payments/tools.py": PAYMENTS_TOOLS}
    result = scan_files(files)
    report = build_report(result)
    risks = {row.name: row.risk.value for row in report.tools}
    assert risks.get("PayTool") not in {None, "read"}
    assert risks.get("on_invoke_tool") not in {None, "read"}


def test_a_client_unpacked_from_a_helpers_tuple_keeps_its_type(scan_files: ScanFiles) -> None:
    """``sandbox, port = self._start(...)`` where ``_start`` returns ``sandbox, port`` with
    ``sandbox = Sandbox(...)``: the command run on it executes code, it is no read."""
    source = """\
from e2b_code_interpreter import Sandbox
from langchain_core.tools import tool


class Workspace:
    def _start(self, template: str):
        sandbox = Sandbox(template=template)
        port = 8080
        return sandbox, port

    @tool
    def run_shell(self, command: str) -> str:
        \"\"\"Run a shell command in a fresh workspace.\"\"\"
        sandbox, _port = self._start("base")
        return sandbox.commands.run(command).stdout
"""
    risk, codes = tool_verdicts(scan_files, {"work/tools.py": source})["run_shell"]
    assert risk == "exec" and "AG101" in codes


def test_a_flag_in_the_rows_a_loop_registers_declares_each_tool(scan_files: ScanFiles) -> None:
    source = """\
import httpx
from mcp.server.fastmcp import FastMCP
from mcp.types import ToolAnnotations

mcp = FastMCP("files")
api = httpx.Client(base_url="https://files.example.com")


def list_files(folder: str) -> list:
    return api.get(f"/folders/{folder}").json()


def upload_file(folder: str, name: str, body: str) -> dict:
    return api.post(f"/folders/{folder}/files", json={"name": name, "body": body}).json()


ROWS = [
    ("list_files", list_files, True),
    ("upload_file", upload_file, False),
]


def register() -> None:
    for name, function, read_only in ROWS:
        mcp.add_tool(function, name=name, annotations=ToolAnnotations(readOnlyHint=read_only))
"""
    result = scan_files({"files/server.py": source})
    report = {row.name: row for row in build_report(result).tools}
    assert report["list_files"].risk.source == "declared (mcp-annotations)"
    assert report["list_files"].risk.value == "read"
    codes = {(f.tool, f.code) for f in result.findings}
    assert ("upload_file", "AG101") not in codes and ("upload_file", "AG201") in codes


TRACKER = """\
import httpx
from mcp.server.fastmcp import FastMCP

API = "https://tracker.example.com/api"
mcp = FastMCP("tracker")

CREATE_TICKET = \"\"\"
mutation($title: String!) {
    ticketCreate(input: {title: $title}) { ticket { id } }
}
\"\"\"


class TrackerClient:
    async def run(self, query: str, variables: dict | None = None) -> dict:
        async with httpx.AsyncClient() as client:
            answer = await client.post(API, json={"query": query, "variables": variables or {}})
            return answer.json()


tracker = TrackerClient()


@mcp.tool()
async def get_ticket(ticket_id: str) -> dict:
    query = "query($id: String!) { ticket(id: $id) { id title } }"
    return await tracker.run(query, {"id": ticket_id})


@mcp.tool()
async def open_ticket(title: str) -> dict:
    return await tracker.run(CREATE_TICKET, {"title": title})


@mcp.tool()
async def retitle_ticket(ticket_id: str, title: str) -> dict:
    query = \"\"\"
    mutation($id: String!, $title: String!) {
        ticketUpdate(id: $id, input: {title: $title}) { ticket { id } }
    }
    \"\"\"
    return await tracker.run(query, {"id": ticket_id, "title": title})
"""


def test_a_graphql_helper_does_what_each_callers_document_says(scan_files: ScanFiles) -> None:
    """``run(query, variables)`` posts ``{"query": query, "variables": ...}``: the parameter
    named ``query`` may hold a mutation. Each caller's document decides: a query reads,
    ``ticketCreate`` creates (no key: AG201), ``ticketUpdate`` sets fields."""
    verdicts = tool_verdicts(scan_files, {"tracker/server.py": TRACKER})
    assert verdicts["get_ticket"] == ("read", set())
    risk, codes = verdicts["open_ticket"]
    assert risk == "network_write" and {"AG101", "AG201"} <= codes
    risk, codes = verdicts["retitle_ticket"]
    assert risk == "network_write" and "AG101" in codes and "AG201" not in codes


MAIL_TOOLS = """\
import json

import httpx
from langchain_core.tools import tool
from oauth2client.client import Credentials

API = "https://mail.example.com/v1"


def get_stored_credentials(user: str):
    with open(f".creds-{user}.json") as handle:
        return Credentials.new_from_json(handle.read())


def _client(user: str) -> httpx.Client:
    creds = get_stored_credentials(user)
    return httpx.Client(base_url=API, headers={"Authorization": creds.access_token})


@tool
def list_messages(user: str, query: str) -> list:
    \"\"\"List the messages matching a query.\"\"\"
    return _client(user).get("/messages", params={"q": query}).json()


@tool
def remind(user: str, message_id: str) -> dict:
    \"\"\"Set a reminder about a message.\"\"\"
    client = _client(user)
    original = client.get(f"/messages/{message_id}").json()
    if original is None:
        return {"error": "no such message"}
    return client.post("/reminders", json={"message": original["id"]}).json()
"""


def test_credential_loading_and_prerequisite_lookups(scan_files: ScanFiles) -> None:
    """Loading stored credentials with a call no catalogue knows, in a function named to
    get them, is plumbing: a tool using them still reads. A lookup that stops the tool when
    the message is missing is a prerequisite, not a check that the reminder already exists:
    the reminder still needs a key."""
    verdicts = tool_verdicts(scan_files, {"mail/tools.py": MAIL_TOOLS})
    assert verdicts["list_messages"] == ("read", set())
    risk, codes = verdicts["remind"]
    assert risk == "network_write" and {"AG101", "AG201"} <= codes


def test_html_tree_edits_and_issue_metadata_are_reads(scan_files: ScanFiles) -> None:
    source = """\
from atlassian import Jira
from bs4 import BeautifulSoup, Tag
from mcp.server.fastmcp import FastMCP
from mcp.types import ToolAnnotations

mcp = FastMCP("wiki")
READ_ONLY = ToolAnnotations(readOnlyHint=True)


class Tracker:
    def __init__(self) -> None:
        self.jira = Jira(url="https://jira.example.com")


class FieldsMixin(Tracker):
    def create_fields(self, project: str, issue_type: str) -> list:
        return self.jira.issue_createmeta_fieldtypes(project, issue_type)


def _plain_mention(element: Tag, name: str) -> None:
    element.replace_with(f"@{name}")


@mcp.tool(annotations=READ_ONLY)
def render_page(html: str) -> str:
    soup = BeautifulSoup(html, "html.parser")
    for element in soup.find_all("ri:user"):
        _plain_mention(element, element.get("ri:username", "someone"))
    return soup.get_text()


@mcp.tool(annotations=READ_ONLY)
def get_create_fields(project: str, issue_type: str) -> list:
    return FieldsMixin().create_fields(project, issue_type)
"""
    verdicts = tool_verdicts(scan_files, {"wiki/server.py": source})
    for name in ("render_page", "get_create_fields"):
        risk, codes = verdicts[name]
        assert risk == "read" and not codes & {"AG102", "AG201"}, name


def test_adding_existing_things_to_a_set_of_links_repeats_safely(scan_files: ScanFiles) -> None:
    """``add_roles``, ``issue_add_watcher``: a repeat keeps one link. A write to declare
    (AG101), but no key is needed (no AG201); ``add_comment`` still adds one each time."""
    source = """\
from atlassian import Jira
from langchain_core.tools import tool

jira = Jira(url="https://jira.example.com")


@tool
def watch_issue(key: str, user: str) -> str:
    \"\"\"Add a watcher to an issue.\"\"\"
    jira.issue_add_watcher(key, user)
    return "watching"


@tool
def comment(key: str, text: str) -> dict:
    \"\"\"Comment on an issue.\"\"\"
    return jira.issue_add_comment(key, text)
"""
    verdicts = tool_verdicts(scan_files, {"tracker/tools.py": source})
    risk, codes = verdicts["watch_issue"]
    assert risk in {"write", "network_write"} and "AG101" in codes and "AG201" not in codes
    risk, codes = verdicts["comment"]
    assert risk == "network_write" and {"AG101", "AG201"} <= codes


def test_a_batch_request_does_what_its_operations_say(scan_files: ScanFiles) -> None:
    """``spreadsheets().batchUpdate(body={"requests": [{"insertDimension": ...}]})``: the
    operations in the batch decide (an insert adds rows on every run); a batch of cell
    updates sets values; ``copyTo`` makes a new copy each time."""
    source = """\
from googleapiclient.discovery import build
from langchain_core.tools import tool

sheets = build("sheets", "v4")


@tool
def insert_rows(spreadsheet_id: str, sheet_id: int, count: int) -> dict:
    \"\"\"Insert empty rows at the top of a sheet.\"\"\"
    body = {
        "requests": [
            {
                "insertDimension": {
                    "range": {"sheetId": sheet_id, "dimension": "ROWS", "startIndex": 0,
                              "endIndex": count}
                }
            }
        ]
    }
    return sheets.spreadsheets().batchUpdate(spreadsheetId=spreadsheet_id, body=body).execute()


@tool
def rename_sheet(spreadsheet_id: str, sheet_id: int, title: str) -> dict:
    \"\"\"Rename a sheet.\"\"\"
    body = {"requests": [{"updateSheetProperties": {"properties": {"sheetId": sheet_id,
            "title": title}, "fields": "title"}}]}
    return sheets.spreadsheets().batchUpdate(spreadsheetId=spreadsheet_id, body=body).execute()


@tool
def copy_sheet(spreadsheet_id: str, sheet_id: int, target_id: str) -> dict:
    \"\"\"Copy a sheet into another spreadsheet.\"\"\"
    return sheets.spreadsheets().sheets().copyTo(
        spreadsheetId=spreadsheet_id, sheetId=sheet_id, body={"destinationSpreadsheetId": target_id}
    ).execute()
"""
    verdicts = tool_verdicts(scan_files, {"sheets/tools.py": source})
    assert {"AG101", "AG201"} <= verdicts["insert_rows"][1]
    assert {"AG101", "AG201"} <= verdicts["copy_sheet"][1]
    risk, codes = verdicts["rename_sheet"]
    assert risk == "write" and "AG101" in codes and "AG201" not in codes


def test_the_branch_that_runs_a_tool_is_the_tool_not_the_summary_branching_on_its_name(
    scan_files: ScanFiles,
) -> None:
    """An Ollama loop runs each tool call through ``_run_call`` (an ``if``/``elif`` on the
    name that calls the home hub) and then sums up what it did, branching on the names
    again: each tool is the branch in ``_run_call``, judged by the hub call it makes."""
    agent = """\
import ollama


class HomeAgent:
    def __init__(self, hub) -> None:
        self.hub = hub

    def specs(self) -> list[dict]:
        return [
            {"type": "function", "function": {"name": "lamp_on", "description": "Turn a lamp on",
             "parameters": {"type": "object", "properties": {"lamp": {"type": "string"}}}}},
            {"type": "function", "function": {"name": "lamp_state", "description": "Read a lamp",
             "parameters": {"type": "object", "properties": {"lamp": {"type": "string"}}}}},
        ]

    async def _run_call(self, call: dict) -> str:
        name = call["function"]["name"]
        lamp = call["function"]["arguments"]["lamp"]
        if name == "lamp_on":
            await self.hub.post(f"/lamps/{lamp}/on")
            return "on"
        elif name == "lamp_state":
            return (await self.hub.get(f"/lamps/{lamp}")).text
        return "unknown tool"

    async def ask(self, text: str) -> str:
        reply = await ollama.AsyncClient().chat(model="llama3.1", messages=[{"role": "user", "content": text}], tools=self.specs())
        done = []
        for call in reply.message.tool_calls or []:
            await self._run_call(call)
            name = call["function"]["name"]
            if name == "lamp_on":
                done.append("turned a lamp on")
            elif name == "lamp_state":
                done.append("looked at a lamp")
        return ", ".join(done)
"""
    result = scan_files({"home/__init__.py": "", "home/agent.py": agent})
    tools = {t.name: t.symbol for t in result.project.tools}
    assert tools == {
        "lamp_on": "home.agent.HomeAgent._run_call:lamp_on",
        "lamp_state": "home.agent.HomeAgent._run_call:lamp_state",
    }


KITCHEN_SERVER = """\
import httpx
from mcp.server.lowlevel import Server
from mcp.types import TextContent, Tool

server = Server("kitchen")
BASE = "https://kitchen.example.com/api"


async def _post(path: str, body: dict) -> dict:
    async with httpx.AsyncClient() as client:
        answer = await client.post(BASE + path, json=body)
        return answer.json()


@server.list_tools()
async def list_tools() -> list[Tool]:
    return [
        Tool(name="place_order", description="Order a dish", inputSchema={}),
        Tool(name="find_dishes", description="Search the menu", inputSchema={}),
        Tool(name="refund_order", description="Refund an order", inputSchema={}),
    ]


async def dispatch(name: str, arguments: dict, post) -> dict:
    if name == "place_order":
        return await post("/orders", {"dish": arguments["dish"]})
    if name == "find_dishes":
        return await post("/dishes/search", {"query": arguments["query"]})
    if name == "refund_order":
        return await post(f"/orders/{arguments['order_id']}/refunds", {})
    raise ValueError(name)


@server.call_tool()
async def call_tool(name: str, arguments: dict) -> list[TextContent]:
    answer = await dispatch(name, arguments, _post)
    return [TextContent(type="text", text=str(answer))]
"""


def test_each_branch_calling_the_helper_its_caller_hands_is_judged_at_its_own_call(
    scan_files: ScanFiles,
) -> None:
    """``call_tool`` hands ``dispatch`` the server's ``_post``; each branch of ``dispatch``
    calls it with its own URL: ordering and refunding write, searching the menu reads. The
    branches were all "read" while the hand-over was judged only at ``call_tool``."""
    verdicts = tool_verdicts(scan_files, {"kitchen/server.py": KITCHEN_SERVER})
    assert verdicts["place_order"][0] == "network_write"
    assert verdicts["refund_order"][0] == "network_write"
    assert verdicts["find_dishes"][0] == "read"


DIGEST_SERVER = """\
import json
import logging

from mcp.server.lowlevel import Server
from mcp.types import TextContent, Tool

from store import Notes, Vectors

server = Server("digest")
log = logging.getLogger(__name__)
notes = Notes()
vectors = Vectors()


@server.list_tools()
async def list_tools() -> list[Tool]:
    return [
        Tool(name="get_stats", description="Counts of notes and pairs", inputSchema={}),
        Tool(name="list_pairs", description="Question and answer pairs", inputSchema={}),
        Tool(name="list_notes", description="Every note", inputSchema={}),
    ]


@server.call_tool()
async def call_tool(tool: str, arguments: dict) -> list[TextContent]:
    if tool == "get_stats":
        stats = notes.get_stats()
        stats["pairs"] = vectors.count()
        return [TextContent(type="text", text=json.dumps(stats))]
    elif tool == "list_pairs":
        pairs = vectors.all_pairs()
        topic = arguments.get("topic")
        if topic:
            pairs = [p for p in pairs if topic in p["question"]]
        return [TextContent(type="text", text=json.dumps(pairs))]
    elif tool == "list_notes":
        log.info("running %s", tool)
        return [TextContent(type="text", text=json.dumps(notes.list_notes()))]
    raise ValueError(tool)
"""

DIGEST_STORE = """\
import sqlite3


class Notes:
    def get_stats(self) -> dict:
        rows = sqlite3.connect("notes.db").execute("SELECT count(*) FROM notes").fetchone()
        return {"notes": rows[0]}

    def list_notes(self) -> list:
        return sqlite3.connect("notes.db").execute("SELECT body FROM notes").fetchall()


class Vectors:
    def count(self) -> int:
        return len(self.all_pairs())

    def all_pairs(self) -> list:
        return sqlite3.connect("pairs.db").execute("SELECT * FROM pairs").fetchall()
"""


def test_a_branch_composing_helpers_or_reading_the_arguments_itself_is_the_tool(
    scan_files: ScanFiles,
) -> None:
    """A branch that calls two helpers of its own and combines their answers, or one handed
    nothing while the branch filters its answer by the tool's arguments, does the tool's
    work itself: the tool is that branch, not the first helper it calls. A branch that only
    hands over to one helper is that helper's tool, whatever else it does with the name it
    dispatches on (here ``tool``, logged)."""
    result = scan_files({"server.py": DIGEST_SERVER, "store.py": DIGEST_STORE})
    tools = {row.name: row for row in build_report(result).tools}
    branch_lines = {
        name: DIGEST_SERVER.splitlines().index(f'    {keyword} tool == "{name}":') + 2
        for keyword, name in (("if", "get_stats"), ("elif", "list_pairs"))
    }
    for name, line in branch_lines.items():
        assert (tools[name].path, tools[name].line) == ("server.py", line), name
    assert tools["list_notes"].path == "store.py"
