"""A generic tool that hands its own operation name to a dispatcher of the project: each
operation the dispatcher picks by that name (an ``if``/``elif`` branch, or a dict of
functions) is a tool of its own, run by the function it calls."""

from __future__ import annotations

from tests.test_tool_discovery import discover, line_of

WRAPPER = """\
import httpx


class WikiApi:
    def __init__(self, base: str):
        self.base = base

    def read_page(self, title: str) -> str:
        return httpx.get(f"{self.base}/pages/{title}").text

    def write_page(self, text: str) -> str:
        return httpx.post(f"{self.base}/pages", json={"text": text}).text

    def run(self, op: str, query: str) -> str:
        if op == "read_page":
            return self.read_page(query)
        elif op == "write_page":
            return self.write_page(query)
        raise ValueError(op)
"""

TOOL = """\
from langchain_core.tools import BaseTool

from wiki.api import WikiApi


class WikiAction(BaseTool):
    api: WikiApi
    op: str
    name: str = ""
    description: str = ""

    def _run(self, query: str) -> str:
        return self.api.run(self.op, query)
"""

TABLE = """\
import json

import httpx
from langchain_core.tools import BaseTool


def open_ticket(title: str) -> dict:
    return httpx.post("https://desk.example/tickets", json={"title": title}).json()


def list_tickets() -> dict:
    return httpx.get("https://desk.example/tickets").json()


class DeskApi:
    def __init__(self):
        self._ops = {"open_ticket": open_ticket, "list_tickets": list_tickets}

    def call(self, operation: str, **kwargs) -> str:
        return json.dumps(self._ops[operation](**kwargs))


class DeskTool(BaseTool):
    desk: DeskApi
    operation: str
    name: str = ""
    description: str = ""

    def _run(self, **kwargs) -> str:
        return self.desk.call(self.operation, **kwargs)
"""


def test_each_branch_of_the_dispatch_a_generic_tool_hands_its_mode_to_is_a_tool() -> None:
    tools = discover({"wiki/api.py": WRAPPER, "wiki/tool.py": TOOL})
    found = {(t.name, t.path, t.anchor.span.line, t.form) for t in tools}
    assert found == {
        ("WikiAction", "wiki/tool.py", line_of(TOOL, "class WikiAction"), "base_class"),
        ("read_page", "wiki/api.py", line_of(WRAPPER, "def read_page"), "dispatch"),
        ("write_page", "wiki/api.py", line_of(WRAPPER, "def write_page"), "dispatch"),
    }


def test_each_function_of_the_table_a_generic_tool_looks_its_name_up_in_is_a_tool() -> None:
    tools = discover({"desk/toolkit.py": TABLE})
    assert {(t.name, tuple(t.functions)) for t in tools if t.form == "dispatch"} == {
        ("open_ticket", ("desk.toolkit.open_ticket",)),
        ("list_tickets", ("desk.toolkit.list_tickets",)),
    }


NOT_A_MODE = """\
import httpx
from langchain_core.tools import BaseTool


class Http:
    def get(self, url: str) -> str:
        return httpx.get(url).text

    def post(self, url: str) -> str:
        return httpx.post(url).text

    def send(self, url: str, verb: str) -> str:
        if verb == "get":
            return self.get(url)
        return self.post(url)


class Fetch(BaseTool):
    http: Http
    url: str = "https://example.com"
    name: str = "fetch"
    description: str = "Fetch the page."

    def _run(self, verb: str) -> str:
        return self.http.send(self.url, verb)
"""


def test_a_dispatch_on_anything_but_the_tools_own_attribute_is_not_split() -> None:
    tools = discover({"web/fetch.py": NOT_A_MODE})
    assert [t.name for t in tools] == ["fetch"]


THREADED_TOOL = """\
import asyncio

import httpx
from langchain_core.tools import BaseTool


def _shelf_url(shelf: str) -> str:
    return f"https://library.example/shelves/{shelf}"


class ShelfTool(BaseTool):
    name: str = "shelf"
    description: str = "Look at a shelf: action is list_books or count_books."

    def _run(self, action: str, shelf: str) -> str:
        raise NotImplementedError

    async def _arun(self, action: str, shelf: str) -> str:
        return await asyncio.to_thread(self._sync_run, action, shelf)

    def _sync_run(self, action: str, shelf: str) -> str:
        if action == "list_books":
            return httpx.get(_shelf_url(shelf)).text
        if action == "count_books":
            return str(len(httpx.get(_shelf_url(shelf)).json()))
        return "unknown action"
"""


def test_a_method_handed_to_a_thread_runner_is_no_operation_name() -> None:
    """``asyncio.to_thread(self._sync_run, action, shelf)``: the method is the code the
    runner runs and ``action`` the model's argument, so the branches on it are one tool's
    actions, not tools of their own."""
    names = {tool.name for tool in discover({"library/shelf.py": THREADED_TOOL})}
    assert names == {"shelf"}
