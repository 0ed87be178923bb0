"""Tools registered through the project's own classes: a handler holding the server in an
attribute, a project subclass of the framework's server (generic or not, defined in
another module), and registrations made in the subclass's own methods."""

from __future__ import annotations

from tests.test_tool_discovery import discover, line_of

HANDLER = """\
from mcp.server.mcpserver import MCPServer


class NotesHandler:
    def __init__(self, app: MCPServer, store) -> None:
        self.app = app
        self.store = store
        self._register()

    def _register(self) -> None:
        @self.app.tool(name="add_note")
        def add_note(title: str, body: str) -> str:
            return self.store.insert(title, body)

        def list_notes() -> list[str]:
            return self.store.titles()

        self.app.add_tool(list_notes, name="list_notes")
"""


def test_tools_registered_on_a_server_held_in_an_attribute() -> None:
    tools = discover({"notes/handler.py": HANDLER})
    found = {t.name: (t.framework, t.functions[0], t.anchor.span.line) for t in tools}
    assert found == {
        "add_note": (
            "mcp",
            "notes.handler.NotesHandler._register.<locals>.add_note",
            line_of(HANDLER, "def add_note"),
        ),
        "list_notes": (
            "mcp",
            "notes.handler.NotesHandler._register.<locals>.list_notes",
            line_of(HANDLER, "def list_notes"),
        ),
    }


BASE = """\
from dataclasses import dataclass

from fastmcp import FastMCP


@dataclass
class Ctx:
    db_url: str


class ServiceServer(FastMCP[Ctx]):
    def __init__(self, name: str) -> None:
        super().__init__(name)
        self._register_health()

    def _register_health(self) -> None:
        @self.tool()
        def health() -> str:
            return "ok"
"""

SERVER = """\
from billing.base import ServiceServer


class BillingServer(ServiceServer):
    pass


server = BillingServer("billing")
"""

TOOLS = """\
import httpx

from billing.server import server


@server.tool(name="refund_invoice")
def refund(invoice_id: str) -> dict:
    return httpx.post(f"https://billing.example/invoices/{invoice_id}/refund").json()
"""


def test_tools_registered_on_a_project_subclass_of_the_server() -> None:
    tools = discover(
        {"billing/base.py": BASE, "billing/server.py": SERVER, "billing/tools.py": TOOLS}
    )
    found = {t.name: (t.framework, t.path, t.anchor.span.line) for t in tools}
    assert found == {
        "health": ("mcp", "billing/base.py", line_of(BASE, "def health")),
        "refund_invoice": ("mcp", "billing/tools.py", line_of(TOOLS, "def refund")),
    }
    refund = next(t for t in tools if t.name == "refund_invoice")
    assert [e.kind for e in refund.effects] == ["network_write"]


def test_a_look_alike_class_registers_nothing() -> None:
    source = """\
    class Registry:
        def tool(self, name=None):
            return lambda fn: fn


    class Plugins(Registry):
        pass


    plugins = Plugins()


    @plugins.tool(name="greet")
    def greet(who: str) -> str:
        return f"hello {who}"
    """
    assert discover({"app/plugins.py": source}) == []
