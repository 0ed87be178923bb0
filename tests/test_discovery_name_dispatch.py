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


CHAT_MANAGER = """\
import json

from openai import OpenAI


class ChatManager:
    def __init__(self) -> None:
        self.client = OpenAI()
        self.tool_functions: dict = {}
        self.tool_definitions: list = []

    def set_tool_functions(self, functions: dict) -> None:
        self.tool_functions = functions

    def set_tool_definitions(self, definitions: list) -> None:
        self.tool_definitions = definitions

    def answer(self, messages: list) -> str:
        reply = self.client.chat.completions.create(
            model="gpt-4o", messages=messages, tools=self.tool_definitions
        )
        for call in reply.choices[0].message.tool_calls or []:
            func = self.tool_functions.get(call.function.name)
            messages.append({"role": "tool", "content": str(func(**json.loads(call.function.arguments)))})
        return reply.choices[0].message.content or ""
"""

QUEUE_TOOLS = """\
import requests


class QueueTools:
    def __init__(self, base: str) -> None:
        self.base = base

    def enqueue(self, url: str) -> str:
        return requests.post(f"{self.base}/queue", json={"url": url}, timeout=5).text

    def peek(self) -> str:
        return requests.get(f"{self.base}/queue", timeout=5).text
"""

QUEUE_SPECS = """\
tool_definitions = [
    {"type": "function", "function": {"name": "enqueue", "parameters": {"type": "object"}}},
    {"type": "function", "function": {"name": "peek", "parameters": {"type": "object"}}},
]
"""

QUEUE_BOT = """\
from bot.configs import tool_definitions
from bot.queue_tools import QueueTools
from shared.manager import ChatManager


class Bot:
    def __init__(self) -> None:
        self.manager = ChatManager()
        self.queue_tools = QueueTools("https://queue.example.com")
        references = {"enqueue": self.queue_tools.enqueue, "peek": self.queue_tools.peek}
        self.manager.set_tool_functions(references)
        self.manager.set_tool_definitions(tool_definitions)
"""


def test_a_table_of_the_methods_of_an_object_the_class_keeps_runs_them() -> None:
    """``{"enqueue": self.queue_tools.enqueue}`` handed to a shared chat manager's setter,
    the specs to another: each entry is a method of the ``QueueTools`` the bot keeps in
    ``self.queue_tools``, the tool the model's call of that name runs."""
    tools = discover(
        {
            "shared/__init__.py": "",
            "shared/manager.py": CHAT_MANAGER,
            "bot/__init__.py": "",
            "bot/queue_tools.py": QUEUE_TOOLS,
            "bot/configs.py": QUEUE_SPECS,
            "bot/main.py": QUEUE_BOT,
        }
    )
    assert sorted((t.name, t.functions[0]) for t in tools) == [
        ("enqueue", "bot.queue_tools.QueueTools.enqueue"),
        ("peek", "bot.queue_tools.QueueTools.peek"),
    ]
