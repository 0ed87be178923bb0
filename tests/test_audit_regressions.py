"""Patterns seen in real agent projects that the analyser got wrong (code written for these tests)."""

from __future__ import annotations

from tests.conftest import ScanFiles


def codes(result: object, code: str) -> list[tuple[str, int, str | None]]:
    return [
        (f.location.path, f.location.span.line, f.tool)
        for f in result.findings  # type: ignore[attr-defined]
        if f.code == code
    ]


def test_classmethod_constructing_cls_does_not_crash(scan_files: ScanFiles) -> None:
    result = scan_files(
        {
            "app/store.py": (
                "import sqlite3\n"
                "from pydantic_ai import Agent, RunContext\n\n"
                "class Store:\n"
                "    def __init__(self, con):\n"
                "        self.con = con\n\n"
                "    @classmethod\n"
                "    def open(cls, path: str) -> 'Store':\n"
                "        return cls(sqlite3.connect(path))\n\n"
                "agent = Agent('openai:gpt-4o', deps_type=Store)\n\n"
                "@agent.tool\n"
                "def count_notes(ctx: RunContext[Store]) -> int:\n"
                "    return 3\n"
            )
        }
    )
    assert not result.problems
    assert [t.name for t in result.project.tools] == ["count_notes"]


LOWLEVEL_ENUM_SERVER = """\
from enum import Enum

import httpx
from mcp.server import Server
from mcp.types import TextContent, Tool

server = Server("tickets")


class TicketTools(str, Enum):
    OPEN = "open_ticket"
    LIST = "list_tickets"


def open_ticket(title: str) -> str:
    return httpx.post("https://desk.example/tickets", json={"title": title}).text


def list_tickets() -> str:
    return httpx.get("https://desk.example/tickets").text


@server.list_tools()
async def list_tools() -> list[Tool]:
    return [
        Tool(name=TicketTools.OPEN, description="Open a ticket", inputSchema={}),
        Tool(name=TicketTools.LIST, description="List tickets", inputSchema={}),
    ]


@server.call_tool()
async def call_tool(name: str, arguments: dict) -> list[TextContent]:
    match name:
        case TicketTools.OPEN:
            return [TextContent(type="text", text=open_ticket(arguments["title"]))]
        case TicketTools.LIST:
            return [TextContent(type="text", text=list_tickets())]
    if name == TicketTools.LIST:
        return []
    raise ValueError(name)
"""


def test_lowlevel_mcp_tools_named_by_enum_constants_are_discovered(scan_files: ScanFiles) -> None:
    result = scan_files({"desk/server.py": LOWLEVEL_ENUM_SERVER})
    tools = {t.name: t.symbol for t in result.project.tools}
    assert tools == {
        "open_ticket": "desk.server.open_ticket",
        "list_tickets": "desk.server.list_tickets",
    }
    assert [tool for _, _, tool in codes(result, "AG101")] == ["open_ticket"]
    assert [tool for _, _, tool in codes(result, "AG201")] == ["open_ticket"]


GIT_TOOLS = """\
import git
from mcp.server.fastmcp import FastMCP

mcp = FastMCP("repo")


@mcp.tool()
def stage_and_commit(path: str, message: str) -> str:
    repo = git.Repo(path)
    repo.git.add(all=True)
    return repo.index.commit(message).hexsha


@mcp.tool()
def switch_branch(path: str, branch: str) -> str:
    repo = git.Repo(path)
    repo.git.checkout(branch)
    return branch


@mcp.tool()
def start_branch(path: str, branch: str) -> str:
    repo = git.Repo(path)
    repo.create_head(branch)
    return branch


@mcp.tool()
def repo_status(path: str) -> str:
    repo = git.Repo(path)
    return repo.git.status() + repo.git.diff() + repo.commit("HEAD").hexsha
"""


def test_gitpython_operations_are_local_writes(scan_files: ScanFiles) -> None:
    result = scan_files({"repo_tools.py": GIT_TOOLS})
    assert sorted(tool for _, _, tool in codes(result, "AG101")) == [
        "stage_and_commit",
        "start_branch",
        "switch_branch",
    ]
    # A local repository has nothing downstream that could deduplicate a key.
    assert codes(result, "AG201") == []


def test_cursor_bound_to_a_short_name_still_runs_sql(scan_files: ScanFiles) -> None:
    result = scan_files(
        {
            "sql_tool.py": (
                "import sqlite3\n"
                "from langchain_core.tools import Tool\n\n"
                'db = sqlite3.connect("shop.sqlite")\n\n'
                "def run_query(statement: str) -> list:\n"
                "    c = db.cursor()\n"
                "    c.execute(statement)\n"
                "    return c.fetchall()\n\n"
                'query_tool = Tool.from_function(name="run_query", description="SQL", func=run_query)\n'
            )
        }
    )
    assert [tool for _, _, tool in codes(result, "AG101")] == ["run_query"]


def test_an_insert_into_the_applications_database_is_a_local_write(scan_files: ScanFiles) -> None:
    tool = (
        "from langchain_core.tools import tool\n\n"
        "@tool\n"
        "def add_note(text: str) -> str:\n"
        '    """Store a note."""\n'
        "    conn = {connect}\n"
        '    conn.execute("INSERT INTO notes (body) VALUES (?)", (text,))\n'
        "    conn.commit()\n"
        '    return "saved"\n'
    )
    local = scan_files(
        {"notes.py": "import sqlite3\n" + tool.format(connect='sqlite3.connect("notes.db")')}
    )
    assert [t for _, _, t in codes(local, "AG101")] == ["add_note"]
    assert codes(local, "AG201") == []
    # a database server the application runs is its own store too: a write to declare,
    # with no service downstream that takes an idempotency key
    server = scan_files(
        {"notes.py": "import psycopg\n" + tool.format(connect='psycopg.connect("dbname=notes")')}
    )
    assert [t for _, _, t in codes(server, "AG101")] == ["add_note"]
    assert codes(server, "AG201") == []


def test_loop_over_a_wait_schedule_is_a_retry_but_a_batch_loop_is_not(
    scan_files: ScanFiles,
) -> None:
    result = scan_files(
        {
            "notify.py": (
                "import time\n"
                "import requests\n\n"
                "WAITS = (0, 1, 3, 10)\n\n"
                "def deliver(url: str, event: dict) -> bool:\n"
                "    for wait in WAITS:\n"
                "        time.sleep(wait)\n"
                "        try:\n"
                "            requests.post(url, json=event, timeout=5)\n"
                "            return True\n"
                "        except requests.RequestException:\n"
                "            continue\n"
                "    return False\n\n"
                "def deliver_all(url: str, events: list[dict]) -> int:\n"
                "    sent = 0\n"
                "    for event in events:\n"
                "        try:\n"
                "            requests.post(url, json=event, timeout=5)\n"
                "            sent += 1\n"
                "        except requests.RequestException:\n"
                "            continue\n"
                "    return sent\n"
            )
        }
    )
    assert [line for _, line, _ in codes(result, "AG902")] == [7]


def test_capturing_a_payment_is_a_write(scan_files: ScanFiles) -> None:
    result = scan_files(
        {
            "billing.py": (
                "from mcp.server.fastmcp import FastMCP\n"
                "from payments_sdk import PaymentsClient\n\n"
                'mcp = FastMCP("billing")\n'
                'payments_client = PaymentsClient("key")\n\n'
                "@mcp.tool()\n"
                "def capture(authorization_id: str) -> str:\n"
                "    return payments_client.capture_authorization(authorization_id).status\n"
            )
        }
    )
    assert [t for _, _, t in codes(result, "AG101")] == ["capture"]
    # Capturing an authorisation twice fails rather than charging twice.
    assert codes(result, "AG201") == []


def test_sdk_client_behind_an_accessor_method_is_typed(scan_files: ScanFiles) -> None:
    """``self._stripe().customers.create``: an accessor returning a typed attribute."""
    code = (
        "import stripe\n"
        "from fastmcp import FastMCP\n\n"
        'mcp = FastMCP("billing")\n\n'
        "class _Billing:\n"
        "    def __init__(self, api_key: str) -> None:\n"
        "        self._client = stripe.StripeClient(api_key)\n\n"
        "    def _stripe(self) -> stripe.StripeClient:\n"
        "        return self._client\n\n"
        "    def refund(self, charge_id: str) -> str:\n"
        '        return self._stripe().refunds.create({"charge": charge_id}).id\n\n'
        "    def rename(self, customer_id: str, name: str) -> str:\n"
        '        return self._stripe().customers.update(customer_id, {"name": name}).id\n\n'
        'billing = _Billing("sk_test")\n\n'
        "@mcp.tool\n"
        "def refund_charge(charge_id: str) -> str:\n"
        "    return billing.refund(charge_id)\n\n"
        "@mcp.tool\n"
        "def rename_customer(customer_id: str, name: str) -> str:\n"
        "    return billing.rename(customer_id, name)\n"
    )
    result = scan_files({"billing.py": code})
    found = {(f.code, f.tool) for f in result.findings if f.code in {"AG101", "AG201"}}
    assert ("AG201", "refund_charge") in found and ("AG101", "refund_charge") in found
    # An update by id is a write (declare it) but repeating it changes nothing more (no key).
    assert ("AG101", "rename_customer") in found and ("AG201", "rename_customer") not in found


def test_stripe_capture_is_declared_but_needs_no_key(scan_files: ScanFiles) -> None:
    code = (
        "import stripe\n"
        "from langchain_core.tools import tool\n\n"
        "@tool\n"
        "def capture_payment(intent_id: str) -> str:\n"
        '    """Capture an authorised payment."""\n'
        "    return stripe.PaymentIntent.capture(intent_id).status\n"
    )
    result = scan_files({"pay.py": code})
    codes = {f.code for f in result.findings if f.tool == "capture_payment"}
    assert "AG101" in codes and "AG201" not in codes
