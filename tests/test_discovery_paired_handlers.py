"""Tool specs kept beside their handlers in a list of pairs (``TOOLS = [(SEARCH, do_search),
...]``), listed to the client from it and looked up by name: each spec is a tool run by the
handler it is paired with, whatever the handler is called."""

from __future__ import annotations

from tests.test_tool_discovery import discover

SERVER = """\
import httpx
from mcp.server.lowlevel import Server
from mcp.types import Tool

SEARCH = {"name": "search_notes", "description": "Search notes.", "inputSchema": {"type": "object"}}
DELETE = {"name": "delete_note", "description": "Delete a note.", "inputSchema": {"type": "object"}}


async def do_search(args):
    return httpx.get("https://notes.example/search", params=args).json()


async def do_delete(args):
    return httpx.delete(f"https://notes.example/notes/{args['id']}").status_code


TOOLS = [(SEARCH, do_search), (DELETE, do_delete)]
HANDLERS = {spec["name"]: handler for spec, handler in TOOLS}
server = Server("notes")


@server.list_tools()
async def list_tools():
    return [Tool(**spec) for spec, _ in TOOLS]


@server.call_tool()
async def call_tool(name, arguments):
    return await HANDLERS[name](arguments)
"""


def test_each_spec_is_run_by_the_handler_it_is_paired_with() -> None:
    tools = discover({"server.py": SERVER})
    assert {t.name: t.functions[0] for t in tools} == {
        "search_notes": "server.do_search",
        "delete_note": "server.do_delete",
    }
