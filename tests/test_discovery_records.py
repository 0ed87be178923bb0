"""Registries of plain tool records: a project's own record class and lists of dicts that
give a name, a parameter schema and the function to run."""

from __future__ import annotations

from tests.test_tool_discovery import discover, line_of

RECORDS = """\
from dataclasses import dataclass
from typing import Callable

import httpx


@dataclass
class ToolSpec:
    name: str
    description: str
    parameters: dict
    handler: Callable[..., str]


def send_invoice(customer_id: str) -> str:
    return httpx.post("https://billing.example/invoices", json={"customer": customer_id}).text


def invoice_status(invoice_id: str) -> str:
    return httpx.get(f"https://billing.example/invoices/{invoice_id}").text


REGISTRY = [
    ToolSpec(
        name="send_invoice",
        description="Send an invoice.",
        parameters={"type": "object", "properties": {"customer_id": {"type": "string"}}},
        handler=send_invoice,
    ),
]

PLAIN = [
    {
        "name": "invoice_status",
        "description": "Look an invoice up.",
        "parameters": {"type": "object", "properties": {"invoice_id": {"type": "string"}}},
        "fn": invoice_status,
    },
]
"""


def test_records_naming_a_function_and_a_description_are_tools() -> None:
    tools = discover({"billing/tools.py": RECORDS})
    found = {t.name: (t.functions, t.anchor.span.line) for t in tools}
    assert found == {
        "send_invoice": (["billing.tools.send_invoice"], line_of(RECORDS, "def send_invoice")),
        "invoice_status": (
            ["billing.tools.invoice_status"],
            line_of(RECORDS, "def invoice_status"),
        ),
    }


def test_a_name_to_function_table_without_a_parameter_schema_is_no_tool() -> None:
    routes = """\
    from dataclasses import dataclass


    @dataclass
    class Route:
        name: str
        endpoint: object


    def home() -> str:
        return "home"


    ROUTES = [Route(name="home", endpoint=home)]
    MENU = [{"name": "home", "description": "Home page", "action": home}]
    """
    assert discover({"web/routes.py": routes}) == []
