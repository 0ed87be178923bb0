"""Low-level MCP servers: tools named by an enum member's value, and ``call_tool`` branches
that do the work inline (the branch is the tool) next to branches that hand over to a
function of their own (that function is the tool)."""

from __future__ import annotations

from tests.conftest import ScanFiles, tool_verdicts
from tests.test_tool_discovery import discover, line_of

NAMES = """\
from enum import Enum


class InventoryTools(str, Enum):
    RESTOCK = "restock_item"
    COUNT = "count_items"
    DROP = "drop_table"
"""

SERVER = """\
import sqlite3

from mcp.server.lowlevel import Server
from mcp.types import TextContent, Tool

from inventory.names import InventoryTools

server = Server("inventory")
conn = sqlite3.connect("inventory.db")


def _run(sql: str, *params: object) -> list[tuple]:
    rows = conn.execute(sql, params).fetchall()
    conn.commit()
    return rows


def restock(sku: str, amount: int) -> str:
    _run("UPDATE stock SET qty = qty + ? WHERE sku = ?", amount, sku)
    return "ok"


@server.list_tools()
async def list_tools() -> list[Tool]:
    return [
        Tool(name=InventoryTools.RESTOCK.value, description="Add stock", inputSchema={}),
        Tool(name=InventoryTools.COUNT.value, description="Count items", inputSchema={}),
        Tool(name=InventoryTools.DROP.value, description="Drop a table", inputSchema={}),
    ]


@server.call_tool()
async def call_tool(name: str, arguments: dict) -> list[TextContent]:
    if name == InventoryTools.RESTOCK.value:
        text = restock(arguments["sku"], arguments["amount"])
    elif name == InventoryTools.COUNT.value:
        rows = _run("SELECT count(*) FROM stock")
        text = str(rows[0][0])
    elif name == InventoryTools.DROP.value:
        _run(f"DROP TABLE {arguments['table']}")
        text = "dropped"
    else:
        raise ValueError(name)
    return [TextContent(type="text", text=text)]
"""


def test_enum_named_tools_and_inline_branches() -> None:
    tools = discover({"inventory/names.py": NAMES, "inventory/server.py": SERVER})
    found = {t.name: (t.functions, t.anchor.span.line) for t in tools}
    assert found == {
        # hands over to a function of its own: that function is the tool
        "restock_item": (["inventory.server.restock"], line_of(SERVER, "def restock")),
        # do the work inline through a shared private helper: the branch is the tool
        "count_items": (["inventory.server._run"], line_of(SERVER, 'rows = _run("SELECT')),
        "drop_table": (["inventory.server._run"], line_of(SERVER, '_run(f"DROP')),
    }


def test_a_branch_tool_is_one_tool_per_name_even_when_branches_share_a_helper() -> None:
    tools = discover({"inventory/names.py": NAMES, "inventory/server.py": SERVER})
    assert sorted(t.name for t in tools if t.functions == ["inventory.server._run"]) == [
        "count_items",
        "drop_table",
    ]


HANDLERS = """\
import httpx
from mcp.server.lowlevel import Server
from mcp.types import TextContent, Tool

server = Server("tracker")


class CreateIssue:
    def run_tool(self, arguments: dict) -> str:
        return httpx.post("https://tracker.example/issues", json=arguments).text

    def describe(self) -> str:
        return "Open an issue"


class ListIssues:
    def run_tool(self, arguments: dict) -> str:
        return httpx.get("https://tracker.example/issues").text

    def describe(self) -> str:
        return "List issues"


HANDLERS = {"create_issue": CreateIssue(), "list_issues": ListIssues()}


@server.list_tools()
async def list_tools() -> list[Tool]:
    return [
        Tool(name="create_issue", description="Open an issue", inputSchema={}),
        Tool(name="list_issues", description="List issues", inputSchema={}),
    ]


@server.call_tool()
async def call_tool(name: str, arguments: dict) -> list[TextContent]:
    return [TextContent(type="text", text=HANDLERS[name].run_tool(arguments))]
"""


def test_dispatch_through_a_dict_of_handler_objects() -> None:
    tools = discover({"tracker/server.py": HANDLERS})
    found = {t.name: (t.functions, t.anchor.span.line) for t in tools}
    assert found == {
        "create_issue": (
            ["tracker.server.CreateIssue.run_tool"],
            line_of(HANDLERS, "def run_tool"),
        ),
        "list_issues": (
            ["tracker.server.ListIssues.run_tool"],
            line_of(HANDLERS, "def run_tool") + 8,
        ),
    }


BOUND = """\
from mcp.server.lowlevel import Server
from mcp.types import Tool


class NotesServer:
    def __init__(self) -> None:
        self.server = Server("notes")
        self.notes: list[str] = []
        self.handlers = {"add_note": self._append_note}

    def _append_note(self, text: str) -> str:
        self.notes.append(text)
        return "ok"

    def tools(self) -> list[Tool]:
        return [Tool(name="add_note", description="Add a note", inputSchema={})]
"""


def test_dispatch_through_a_dict_of_bound_methods() -> None:
    tools = discover({"notes/server.py": BOUND})
    assert [(t.name, t.functions) for t in tools] == [
        ("add_note", ["notes.server.NotesServer._append_note"])
    ]


LABELS_SERVER = """\
import httpx
from mcp.server.lowlevel import Server
from mcp.types import TextContent, Tool

from mail.labels import create_label, list_labels

server = Server("mail")
client = httpx.Client(base_url="https://mail.example/api")


def handle_archive(arguments: dict) -> str:
    client.post(f"/messages/{arguments['id']}/archive")
    return "archived"


@server.list_tools()
async def list_tools() -> list[Tool]:
    return [
        Tool(name="create_label", description="Create a label", inputSchema={}),
        Tool(name="list_labels", description="List labels", inputSchema={}),
        Tool(name="archive", description="Archive a message", inputSchema={}),
    ]


@server.call_tool()
async def call_tool(name: str, arguments: dict) -> list[TextContent]:
    if name == "create_label":
        label = create_label(client, arguments["name"])
        return [TextContent(type="text", text=f"Created label {label['id']}")]
    if name == "list_labels":
        labels = list_labels(client)
        return [TextContent(type="text", text="\\n".join(l["name"] for l in labels))]
    if name == "archive":
        return [TextContent(type="text", text=handle_archive(arguments))]
    raise ValueError(name)
"""

LABELS = """\
def create_label(client, name: str) -> dict:
    return client.post("/labels", json={"name": name}).json()


def list_labels(client) -> list:
    return client.get("/labels").json()
"""


def test_a_branch_handing_a_client_to_a_helper_is_the_tool_itself() -> None:
    """``create_label(client, arguments["name"])`` is a helper of the mail client, handed
    the client besides a field: the branch, which answers the model, is the tool. A function
    handed only the arguments (``handle_archive(arguments)``) is the tool's own."""
    tools = discover({"mail/server.py": LABELS_SERVER, "mail/labels.py": LABELS})
    found = {t.name: (t.path, t.anchor.span.line) for t in tools}
    assert found == {
        "create_label": ("mail/server.py", line_of(LABELS_SERVER, 'if name == "create_label"') + 1),
        "list_labels": ("mail/server.py", line_of(LABELS_SERVER, 'if name == "list_labels"') + 1),
        "archive": ("mail/server.py", line_of(LABELS_SERVER, "def handle_archive")),
    }


ROUTER = """\
import boto3
from mcp.server.lowlevel import Server
from mcp.types import TextContent, Tool

server = Server("aws")


def handle_s3(client, name: str, arguments: dict) -> str:
    if name == "s3_bucket_create":
        client.create_bucket(Bucket=arguments["bucket"])
        return "created"
    if name == "s3_bucket_list":
        return str(client.list_buckets())
    if name == "s3_object_delete":
        client.delete_object(Bucket=arguments["bucket"], Key=arguments["key"])
        return "deleted"
    raise ValueError(name)


@server.list_tools()
async def list_tools() -> list[Tool]:
    return [
        Tool(name="s3_bucket_create", description="Create a bucket", inputSchema={}),
        Tool(name="s3_bucket_list", description="List buckets", inputSchema={}),
        Tool(name="s3_object_delete", description="Delete an object", inputSchema={}),
    ]


@server.call_tool()
async def call_tool(name: str, arguments: dict) -> list[TextContent]:
    s3 = boto3.client("s3")
    if name == "s3_bucket_create":
        text = handle_s3(s3, name, arguments)
    elif name == "s3_bucket_list":
        text = handle_s3(s3, name, arguments)
    elif name == "s3_object_delete":
        text = handle_s3(s3, name, arguments)
    else:
        raise ValueError(name)
    return [TextContent(type="text", text=text)]
"""


def test_a_router_branch_handing_the_name_to_a_service_dispatcher_is_one_tool_per_name(
    scan_files: ScanFiles,
) -> None:
    """``call_tool`` routes each name to ``handle_s3(client, name, args)``, which dispatches
    on the name again: three tools, one per router branch, each doing what the service's
    branch for its own name does."""
    verdicts = tool_verdicts(scan_files, {"server.py": ROUTER})
    assert {name: risk for name, (risk, _) in verdicts.items()} == {
        "s3_bucket_create": "network_write",
        "s3_bucket_list": "read",
        "s3_object_delete": "destructive",
    }
