"""Tool classes a project defines for itself: a base with an abstract execution hook whose
subclasses declare a name and a description, and classes that describe themselves to a
model API with a tool-spec method next to one execution method."""

from __future__ import annotations

from tests.test_tool_discovery import discover, line_of

BASE = """\
from abc import ABC, abstractmethod


class Action(ABC):
    name: str
    description: str

    @abstractmethod
    def perform(self, **kwargs) -> str:
        ...

    def spec(self) -> dict:
        return {"name": self.name, "description": self.description}
"""

ACTIONS = """\
import subprocess

import httpx

from ops.base import Action


class RestartService(Action):
    name = "restart_service"
    description = "Restart a systemd unit."

    def perform(self, unit: str) -> str:
        return subprocess.run(["systemctl", "restart", unit], check=True, text=True).stdout


class PageOnCall(Action):
    name = "page_on_call"
    description = "Page whoever is on call."

    def perform(self, message: str) -> str:
        return httpx.post("https://pager.example/pages", json={"text": message}).text


class _Helper:
    name = "not_a_tool"
"""

AGENT = """\
from ops.actions import PageOnCall, RestartService

ACTIONS = {a.name: a for a in (RestartService(), PageOnCall())}
"""


def test_subclasses_of_a_project_tool_base_are_tools() -> None:
    tools = discover({"ops/base.py": BASE, "ops/actions.py": ACTIONS, "ops/agent.py": AGENT})
    found = {t.name: (t.functions, t.anchor.span.line) for t in tools}
    assert found == {
        "restart_service": (
            ["ops.actions.RestartService.perform"],
            line_of(ACTIONS, "class RestartService"),
        ),
        "page_on_call": (["ops.actions.PageOnCall.perform"], line_of(ACTIONS, "class PageOnCall")),
    }
    assert {t.name: sorted({e.kind for e in t.effects}) for t in tools} == {
        "restart_service": ["exec"],
        "page_on_call": ["network_write"],
    }


def test_one_subclass_with_a_name_is_not_a_tool_family() -> None:
    lone = ACTIONS.split("class PageOnCall")[0]
    assert discover({"ops/base.py": BASE, "ops/actions.py": lone}) == []


def test_a_base_with_no_abstract_hook_is_not_a_tool_base() -> None:
    concrete = BASE.replace(
        "    @abstractmethod\n    def perform(self, **kwargs) -> str:\n        ...\n",
        "    def perform(self, **kwargs) -> str:\n        return str(kwargs)\n",
    )
    assert discover({"ops/base.py": concrete, "ops/actions.py": ACTIONS}) == []


SELF_DESCRIBED = """\
import httpx


class IssueCreator:
    def __init__(self, token: str) -> None:
        self.token = token

    def to_params(self) -> dict:
        return {
            "name": "create_issue",
            "description": "Open an issue.",
            "input_schema": {"type": "object", "properties": {"title": {"type": "string"}}},
        }

    async def __call__(self, title: str) -> dict:
        async with httpx.AsyncClient() as client:
            response = await client.post("https://tracker.example/issues", json={"title": title})
            return response.json()
"""


def test_a_command_table_with_names_and_descriptions_is_no_tool_family() -> None:
    commands = BASE.replace(
        '    def spec(self) -> dict:\n        return {"name": self.name, "description": self.description}\n',
        "",
    )
    assert discover({"ops/base.py": commands, "ops/actions.py": ACTIONS}) == []


def test_a_class_describing_itself_to_a_model_api_is_a_tool() -> None:
    tools = discover({"tracker/tools.py": SELF_DESCRIBED})
    assert [(t.name, t.functions, t.anchor.span.line) for t in tools] == [
        (
            "create_issue",
            ["tracker.tools.IssueCreator.__call__"],
            line_of(SELF_DESCRIBED, "class IssueCreator"),
        )
    ]


PROPERTY_BASE = """\
from abc import ABC, abstractmethod


class BaseTool(ABC):
    @property
    @abstractmethod
    def name(self) -> str: ...

    @property
    @abstractmethod
    def description(self) -> str: ...

    @property
    @abstractmethod
    def parameters(self) -> dict: ...

    @abstractmethod
    def execute(self, **kwargs) -> dict: ...

    def get_tool_definition(self) -> dict:
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            },
        }
"""

PROPERTY_TOOLS = """\
import json

from shop.base import BaseTool


class FindTable(BaseTool):
    @property
    def name(self) -> str:
        return "find_table"

    @property
    def description(self) -> str:
        return "Find a free table."

    @property
    def parameters(self) -> dict:
        return {"type": "object", "properties": {"seats": {"type": "integer"}}}

    def execute(self, **kwargs) -> dict:
        with open("tables.json") as handle:
            return {"tables": json.load(handle)}


class BookTable(BaseTool):
    @property
    def name(self) -> str:
        return "book_table"

    @property
    def description(self) -> str:
        return "Book a table."

    @property
    def parameters(self) -> dict:
        return {"type": "object", "properties": {"table": {"type": "integer"}}}

    def execute(self, **kwargs) -> dict:
        with open("bookings.json", "a") as handle:
            handle.write(json.dumps(kwargs) + "\\n")
        return {"booked": True}
"""


def test_a_project_base_named_like_a_frameworks_with_tools_declared_by_properties() -> None:
    """The project's own ``BaseTool`` (no framework's: it extends only ``ABC``), whose
    subclasses give their name, description and parameters through properties: each
    subclass is a tool run by its ``execute``; the abstract properties are declarations,
    not execution hooks."""
    tools = discover({"shop/base.py": PROPERTY_BASE, "shop/tools.py": PROPERTY_TOOLS})
    found = {t.name: (t.functions, t.anchor.span.line) for t in tools}
    assert found == {
        "find_table": (
            ["shop.tools.FindTable.execute"],
            line_of(PROPERTY_TOOLS, "class FindTable"),
        ),
        "book_table": (
            ["shop.tools.BookTable.execute"],
            line_of(PROPERTY_TOOLS, "class BookTable"),
        ),
    }
    assert {t.name: sorted({e.kind for e in t.effects}) for t in tools} == {
        "find_table": [],
        "book_table": ["write"],
    }


CHORES_BASE = """\
from abc import ABC, abstractmethod


class Chore(ABC):
    @property
    @abstractmethod
    def name(self) -> str:
        ...

    @property
    @abstractmethod
    def description(self) -> str:
        ...

    @property
    @abstractmethod
    def parameters(self) -> dict:
        ...

    async def __call__(self, **kwargs) -> dict:
        try:
            return await self.execute(**kwargs)
        except Exception as error:
            return {"error": str(error)}

    @abstractmethod
    async def execute(self, **kwargs) -> dict:
        ...

    def get_openai_schema(self) -> dict:
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            },
        }
"""

CHORES = """\
import httpx

from chores.base import Chore


class AddChore(Chore):
    def __init__(self, board_url: str):
        super().__init__()
        self.board_url = board_url
        self._name = "add_chore"
        self._description = "Put a chore on the family board"

    @property
    def name(self) -> str:
        return self._name

    @property
    def description(self) -> str:
        return self._description

    @property
    def parameters(self) -> dict:
        return {"type": "object", "properties": {"title": {"type": "string"}}}

    async def execute(self, title: str) -> dict:
        async with httpx.AsyncClient() as client:
            return (await client.post(f"{self.board_url}/chores", json={"title": title})).json()


class ListChores(Chore):
    def __init__(self, board_url: str):
        super().__init__()
        self.board_url = board_url
        self._name = "list_chores"
        self._description = "The chores on the family board"

    @property
    def name(self) -> str:
        return self._name

    @property
    def description(self) -> str:
        return self._description

    @property
    def parameters(self) -> dict:
        return {"type": "object", "properties": {}}

    async def execute(self) -> dict:
        async with httpx.AsyncClient() as client:
            return (await client.get(f"{self.board_url}/chores")).json()
"""


def test_tools_naming_themselves_in_their_constructor_under_an_abstract_self_describing_base() -> (
    None
):
    """Each subclass keeps its name in its constructor (``self._name = "add_chore"``) and
    a property returns it: the subclasses are the tools, named so. The base describes an
    instance to a model API and runs it in ``__call__``, but leaves ``execute`` abstract: it
    is never a tool itself."""
    tools = discover({"chores/base.py": CHORES_BASE, "chores/board.py": CHORES})
    assert sorted((t.name, t.form) for t in tools) == [
        ("add_chore", "structural"),
        ("list_chores", "structural"),
    ]


NAMED_WHEN_BUILT = """\
import json

import httpx
from openai import OpenAI

client = OpenAI()


class Tool:
    def __init__(self, func, name: str, description: str, parameters: dict):
        self.func = func
        self.name = name
        self.description = description
        self.parameters = parameters

    def spec(self) -> dict:
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters},
        }

    def run(self, arguments: str):
        return self.func(**json.loads(arguments))


def send_invoice(customer: str, amount: int) -> str:
    return httpx.post("https://billing.example/invoices", json={"c": customer, "a": amount}).text


def list_invoices(customer: str) -> str:
    return httpx.get(f"https://billing.example/invoices?c={customer}").text


NO_ARGS = {"type": "object", "properties": {}}
TOOLS = [
    Tool(send_invoice, "send_invoice", "Send an invoice", NO_ARGS),
    Tool(func=list_invoices, name="list_invoices", description="List invoices", parameters=NO_ARGS),
]
BY_NAME = {t.name: t for t in TOOLS}


def turn(messages: list) -> str:
    specs = [t.spec() for t in TOOLS]
    reply = client.chat.completions.create(model="gpt-4o", messages=messages, tools=specs)
    call = reply.choices[0].message.tool_calls[0]
    return BY_NAME[call.function.name].run(call.function.arguments)
"""


def test_a_tool_class_named_where_it_is_built_makes_a_tool_of_each_construction() -> None:
    """``Tool(send_invoice, "send_invoice", ...)`` of a class whose spec names it
    ``self.name`` and whose ``run`` calls ``self.func``: each construction is a tool, run by
    the function it is handed; the class itself is none."""
    tools = discover({"billing/agent.py": NAMED_WHEN_BUILT})
    assert sorted((t.name, t.functions[0]) for t in tools) == [
        ("list_invoices", "billing.agent.list_invoices"),
        ("send_invoice", "billing.agent.send_invoice"),
    ]


SCHEMA_BASE = """\
from abc import ABC, abstractmethod

from pydantic import BaseModel


class ToolSchema(BaseModel):
    name: str
    description: str
    parameters: list[dict] = []


class Tool(ABC):
    def __init__(self) -> None:
        self.schema = self._get_schema()

    @abstractmethod
    def _get_schema(self) -> ToolSchema: ...

    @abstractmethod
    async def execute(self, **kwargs) -> str: ...

    def get_schema_dict(self) -> dict:
        return self.schema.model_dump()
"""

SCHEMA_TOOLS = """\
import os
from pathlib import Path

from agent.base import Tool, ToolSchema


class ReadFile(Tool):
    def _get_schema(self) -> ToolSchema:
        return ToolSchema(
            name="read_file",
            description="Read a file.",
            parameters=[{"name": "path", "type": "string"}],
        )

    async def execute(self, path: str) -> str:
        return Path(path).read_text()


class DeleteFile(Tool):
    def _get_schema(self) -> ToolSchema:
        return ToolSchema(
            name="delete_file",
            description="Delete a file.",
            parameters=[{"name": "path", "type": "string"}],
        )

    async def execute(self, path: str) -> str:
        os.remove(path)
        return "deleted"
"""


def test_subclasses_naming_themselves_in_the_spec_a_hook_returns_are_tools() -> None:
    """``def _get_schema(self): return ToolSchema(name="delete_file", description=...,
    parameters=[...])`` overriding the base's abstract hook, beside ``execute``: the name
    is in the spec the subclass returns, not in a class attribute; each is a tool."""
    tools = discover(
        {"agent/__init__.py": "", "agent/base.py": SCHEMA_BASE, "agent/files.py": SCHEMA_TOOLS}
    )
    assert sorted((t.name, t.symbol) for t in tools) == [
        ("delete_file", "agent.files.DeleteFile"),
        ("read_file", "agent.files.ReadFile"),
    ]


HANDED_BASE = """\
from abc import ABC, abstractmethod


class BaseTool(ABC):
    def __init__(self, name: str, description: str, parameters: dict):
        self.name = name
        self.definition = {
            "type": "function",
            "name": name,
            "description": description,
            "parameters": parameters,
        }

    @abstractmethod
    async def handle(self, **kwargs) -> dict: ...

    def get_tool(self):
        return self.definition, self.handle
"""

HANDED_TOOLS = """\
from datetime import datetime
from pathlib import Path

from assistant.base import BaseTool


class CurrentTime(BaseTool):
    def __init__(self):
        super().__init__(
            name="get_current_time",
            description="The current time.",
            parameters={"type": "object", "properties": {}},
        )

    async def handle(self, **kwargs) -> dict:
        return {"now": datetime.now().isoformat()}


class SaveNote(BaseTool):
    def __init__(self):
        super().__init__(
            "save_note",
            "Save a note to disk.",
            {"type": "object", "properties": {"text": {"type": "string"}}},
        )

    async def handle(self, text: str = "", **kwargs) -> dict:
        Path("notes.txt").write_text(text)
        return {"saved": True}
"""


def test_subclasses_handing_their_name_to_the_base_constructor_are_tools() -> None:
    """``super().__init__(name="get_current_time", description=..., parameters={...})``
    (by keyword or by position): the subclass declares its name and schema through its
    base's constructor, and overrides the abstract ``handle``; each is a tool."""
    tools = discover(
        {
            "assistant/__init__.py": "",
            "assistant/base.py": HANDED_BASE,
            "assistant/tools.py": HANDED_TOOLS,
        }
    )
    assert sorted((t.name, t.symbol) for t in tools) == [
        ("get_current_time", "assistant.tools.CurrentTime"),
        ("save_note", "assistant.tools.SaveNote"),
    ]
