"""A table of lambdas by tool name (``{"receive_stock": lambda: stock.receive_stock(db,
qty=_dec(args["qty"]))}``): each entry is a tool, run by the project call the lambda makes.
A call that only converts one of the model's arguments for it is not what the tool runs, and
a function another entry calls beside its own work is still the tool of its own name."""

from __future__ import annotations

from tests.test_tool_discovery import discover

SPECS = """\
def declarations() -> list[dict]:
    def spec(name: str) -> dict:
        return {"name": name, "parameters": {"type": "object", "properties": {}}}

    return [
        {"name": "receive_stock", "description": "Book a delivery into stock.",
         "parameters": {"type": "object", "properties": {"item": {"type": "integer"},
                                                         "qty": {"type": "number"}}}},
        {"name": "open_tab", "description": "Open a customer's tab.",
         "parameters": {"type": "object", "properties": {}}},
        {"name": "tab_summary", "description": "What a tab holds.",
         "parameters": {"type": "object", "properties": {"tab": {"type": "integer"}}}},
    ]
"""

STOCK = """\
import sqlite3
from decimal import Decimal

db = sqlite3.connect("shop.db")


def receive_stock(conn, item: int, qty: Decimal, note: str | None = None) -> dict:
    conn.execute("UPDATE items SET qty = qty + ? WHERE id = ?", (str(qty), item))
    conn.commit()
    return {"ok": True}


def open_tab(conn, owner: int):
    cur = conn.execute("INSERT INTO tabs (owner) VALUES (?)", (owner,))
    conn.commit()
    return cur


def tab_summary(conn, tab: int) -> dict:
    row = conn.execute("SELECT total FROM tabs WHERE id = ?", (tab,)).fetchone()
    return {"tab": tab, "total": row[0]}
"""

LOOP = """\
import json
from decimal import Decimal

from google import genai
from google.genai import types

from shop import stock
from shop.specs import declarations

client = genai.Client()


def _dec(value) -> Decimal:
    return Decimal(str(value))


def run_tool(name: str, args: dict, owner: int):
    handlers = {
        "receive_stock": lambda: stock.receive_stock(
            stock.db, item=int(args["item"]), qty=_dec(args["qty"]), note=args.get("note")
        ),
        "open_tab": lambda: {"ok": True, **stock.tab_summary(stock.db, stock.open_tab(stock.db, owner).lastrowid)},
        "tab_summary": lambda: stock.tab_summary(stock.db, int(args["tab"])),
    }
    return handlers[name]()


def turn(history: list, owner: int):
    config = types.GenerateContentConfig(
        tools=[types.Tool(function_declarations=declarations())]
    )
    answer = client.models.generate_content(model="gemini-2.5-flash", contents=history, config=config)
    for call in answer.function_calls or []:
        history.append(json.dumps(run_tool(call.name, dict(call.args), owner)))
"""


def _tools() -> dict[str, list[str]]:
    tools = discover({"shop/specs.py": SPECS, "shop/stock.py": STOCK, "shop/loop.py": LOOP})
    return {t.name: t.functions for t in tools}


def test_a_converted_argument_is_not_what_the_tool_runs() -> None:
    """``stock.receive_stock(db, item=..., qty=_dec(args["qty"]))``: ``_dec`` converts the
    model's quantity for the call; the tool is ``receive_stock``."""
    assert _tools()["receive_stock"][0] == "shop.stock.receive_stock"


def test_the_work_handed_on_runs_first() -> None:
    """``tab_summary(db, open_tab(db, owner).lastrowid)``: the tab is opened first, and its
    summary is read after; the tool opens a tab."""
    assert _tools()["open_tab"][:2] == ["shop.stock.open_tab", "shop.stock.tab_summary"]


def test_a_function_another_entry_also_calls_is_its_own_tool() -> None:
    """``open_tab`` reads the summary after its work; ``tab_summary`` is still a tool of its
    own, run by that function."""
    assert _tools().get("tab_summary") == ["shop.stock.tab_summary"]
