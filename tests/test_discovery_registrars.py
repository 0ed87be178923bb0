"""A project's own registrar: a decorator (or decorator factory) that stores the function
it is given in a container which the project later turns into a schema or tool specs for a
model. The names below (``Deck``, ``move``, ``lever``, ``Console.move``) are known to no
catalogue; only the shape of the code makes the functions tools."""

from __future__ import annotations

from tests.test_tool_discovery import discover, line_of

DECK = """\
from pydantic import BaseModel, create_model


class Lever:
    def __init__(self, function, hint, params):
        self.function = function
        self.hint = hint
        self.params = params


class Deck:
    def __init__(self):
        self.levers = {}

    def _params(self, function):
        return create_model(f"{function.__name__}Params", __base__=BaseModel)

    def lever(self, hint, params=None):
        def keep(func):
            chosen = params or self._params(func)
            self.levers[func.__name__] = Lever(func, hint, chosen)
            return func

        return keep

    def as_model(self):
        fields = {name: (lever.params, None) for name, lever in self.levers.items()}
        return create_model("Levers", **fields)

    async def pull(self, name, arguments):
        return await self.levers[name].function(**arguments)
"""

CONSOLE = """\
import httpx

from machine.deck import Deck


class Console:
    def __init__(self):
        self.deck = Deck()
        self._defaults()

    def _defaults(self):
        @self.deck.lever("Open the valve of a tank")
        async def open_valve(tank: str):
            async with httpx.AsyncClient() as client:
                await client.post(f"https://plant.example/tanks/{tank}/valve")

        @self.deck.lever("Read a tank's level")
        async def tank_level(tank: str):
            async with httpx.AsyncClient() as client:
                return (await client.get(f"https://plant.example/tanks/{tank}")).json()

    def move(self, hint, **kwargs):
        return self.deck.lever(hint, **kwargs)
"""

SCRIPT = """\
import httpx

from machine.console import Console

console = Console()


@console.move("Drain a tank")
def drain(tank: str):
    return httpx.delete(f"https://plant.example/tanks/{tank}").status_code


@console.deck.lever("Say hello")
def hello(name: str):
    return f"hello {name}"
"""


def test_functions_kept_by_a_registrar_whose_store_becomes_a_model_schema_are_tools() -> None:
    tools = discover(
        {"machine/deck.py": DECK, "machine/console.py": CONSOLE, "scripts/plant.py": SCRIPT}
    )
    found = {(t.name, t.path, t.anchor.span.line, t.form) for t in tools}
    assert found == {
        ("open_valve", "machine/console.py", line_of(CONSOLE, "def open_valve"), "registrar"),
        ("tank_level", "machine/console.py", line_of(CONSOLE, "def tank_level"), "registrar"),
        ("drain", "scripts/plant.py", line_of(SCRIPT, "def drain"), "registrar"),
        ("hello", "scripts/plant.py", line_of(SCRIPT, "def hello"), "registrar"),
    }


PLAIN_REGISTRY = """\
import json

import httpx
from openai import OpenAI

KNOWN = {}


def exposed(fn):
    KNOWN[fn.__name__] = fn
    return fn


@exposed
def book_room(room: str, day: str) -> str:
    \"\"\"Book a meeting room.\"\"\"
    return httpx.post("https://rooms.example/bookings", json={"room": room, "day": day}).text


def specs():
    return [
        {"type": "function", "function": {"name": name, "description": fn.__doc__,
                                          "parameters": {"type": "object"}}}
        for name, fn in KNOWN.items()
    ]


def answer(question: str) -> str:
    reply = OpenAI().chat.completions.create(
        model="gpt-4o", messages=[{"role": "user", "content": question}], tools=specs()
    )
    call = reply.choices[0].message.tool_calls[0]
    return KNOWN[call.function.name](**json.loads(call.function.arguments))
"""


def test_a_module_registry_read_back_into_tool_specs_makes_tools() -> None:
    tools = discover({"office/agent.py": PLAIN_REGISTRY})
    assert [(t.name, t.functions, t.form) for t in tools] == [
        ("book_room", ["office.agent.book_room"], "registrar")
    ]


ROUTES = """\
ROUTES = {}
HANDLERS = []


def route(path):
    def keep(fn):
        ROUTES[path] = fn
        return fn

    return keep


def on_event(fn):
    HANDLERS.append(fn)
    return fn


@route("/orders")
def create_order(request):
    return request


@on_event
def order_created(event):
    return event


def dispatch(path, request):
    return ROUTES[path](request)


def publish(event):
    for handler in HANDLERS:
        handler(event)
"""


def test_a_registry_never_described_to_a_model_keeps_no_tools() -> None:
    assert discover({"shop/web.py": ROUTES}) == []


KEEPER = """\
import httpx

SHELF = []


def shelve(fn):
    SHELF.append(fn)
    return fn


@shelve
def restock(sku: str, count: int) -> str:
    return httpx.post("https://stock.example/restock", json={"sku": sku, "n": count}).text
"""

SERVER = """\
from fastmcp import FastMCP

from stock.keeper import SHELF



def build() -> FastMCP:
    mcp = FastMCP("stock")
    for fn in SHELF:
        mcp.add_tool(fn)
    return mcp
"""

AGENT = """\
from pydantic_ai import Agent

from stock import keeper

agent = Agent("openai:gpt-4o", tools=list(keeper.SHELF))
"""


def test_a_registry_handed_to_a_framework_from_another_module_makes_tools() -> None:
    for server in (SERVER, AGENT):
        tools = discover({"stock/keeper.py": KEEPER, "stock/server.py": server})
        assert [(t.name, t.form, t.anchor.span.line) for t in tools] == [
            ("restock", "registrar", line_of(KEEPER, "def restock"))
        ]


ROUTES_BESIDE_AN_AGENT = (
    ROUTES
    + """

from pydantic_ai import Agent

agent = Agent("openai:gpt-4o", tools=[])
"""
)


def test_an_unrelated_agent_beside_a_route_table_makes_no_route_a_tool() -> None:
    assert discover({"shop/web.py": ROUTES_BESIDE_AN_AGENT}) == []


WRAPPING = """\
import functools

import httpx
from openai import OpenAI

CATALOGUE = {}


def offered(fn):
    @functools.wraps(fn)
    def run(**kwargs):
        return fn(**kwargs)

    CATALOGUE[fn.__name__] = {"run": run, "doc": fn.__doc__}
    return fn


@offered
def refund(order_id: str) -> str:
    \"\"\"Refund an order.\"\"\"
    return httpx.post(f"https://shop.example/orders/{order_id}/refund").text


def ask(question: str):
    specs = [{"type": "function", "function": {"name": n}} for n in CATALOGUE]
    return OpenAI().chat.completions.create(model="gpt-4o", messages=[], tools=specs)
"""


def test_a_registrar_storing_a_wrapper_of_the_function_keeps_the_function() -> None:
    tools = discover({"shop/agent.py": WRAPPING})
    assert [(t.name, t.functions) for t in tools] == [("refund", ["shop.agent.refund"])]


CALLED = """\
import httpx
from langchain_core.tools import StructuredTool


class Toolbox:
    def __init__(self):
        self._kept = {}

    def keep(self, fn, name=None):
        self._kept[name or fn.__name__] = fn

    def as_tools(self):
        return [StructuredTool.from_function(f, name=n) for n, f in self._kept.items()]


def archive_mail(message_id: str) -> str:
    return httpx.post(f"https://mail.example/messages/{message_id}/archive").text


def format_date(value: str) -> str:
    return value


box = Toolbox()
box.keep(archive_mail, name="archive")
"""


def test_a_function_handed_to_a_registrars_method_is_a_tool() -> None:
    tools = discover({"mail/box.py": CALLED})
    assert [(t.name, t.functions, t.form) for t in tools] == [
        ("archive", ["mail.box.archive_mail"], "registrar")
    ]


HANDLERS_BESIDE_A_MODEL = """\
from openai import OpenAI

TOOLS = [{"type": "function", "function": {"name": "lookup", "parameters": {}}}]


class Bot:
    def __init__(self):
        self.handlers = []
        self.client = OpenAI()

    def on_message(self, fn):
        self.handlers.append(fn)
        return fn

    def reply(self, text: str):
        for handler in self.handlers:
            handler(text)
        return self.client.chat.completions.create(model="gpt-4o", messages=[], tools=TOOLS)


bot = Bot()


@bot.on_message
def log_message(text: str) -> None:
    print(text)
"""


def test_handlers_run_beside_a_model_call_are_not_tools() -> None:
    tools = discover({"chat/bot.py": HANDLERS_BESIDE_A_MODEL})
    assert [t.name for t in tools if t.form == "registrar"] == []


def test_a_decorator_registering_its_own_wrapper_of_the_function_makes_that_function_a_tool() -> (
    None
):
    """``@safe_tool()`` wraps each function in an error-catching ``guarded`` and registers
    the wrapper with ``mcp.tool``: each decorated function is a tool, the wrapper none."""
    app = """\
import functools

from mcp.server.fastmcp import FastMCP

mcp = FastMCP("billing")


def safe_tool(*, read_only: bool = False):
    def register(fn):
        @functools.wraps(fn)
        async def guarded(*args, **kwargs):
            try:
                return await fn(*args, **kwargs)
            except Exception as exc:
                return {"error": type(exc).__name__}
        return mcp.tool(annotations={"readOnlyHint": read_only})(guarded)
    return register
"""
    tools = """\
import httpx

from billing.app import safe_tool


@safe_tool()
async def create_invoice(customer: str, amount: float) -> dict:
    \"\"\"Create an invoice.\"\"\"
    async with httpx.AsyncClient() as client:
        return (await client.post("https://bill.example/invoices", json={"c": customer})).json()


@safe_tool(read_only=True)
async def invoice(invoice_id: str) -> dict:
    \"\"\"Read an invoice.\"\"\"
    async with httpx.AsyncClient() as client:
        return (await client.get(f"https://bill.example/invoices/{invoice_id}")).json()
"""
    found = discover({"billing/app.py": app, "billing/tools.py": tools})
    assert {t.name: t.functions for t in found} == {
        "create_invoice": ["billing.tools.create_invoice"],
        "invoice": ["billing.tools.invoice"],
    }


SKILLS = """\
from dataclasses import dataclass
from functools import wraps

import httpx


@dataclass
class SkillCard:
    name: str
    description: str
    arguments: dict


class Skills:
    _known: dict = {}

    @classmethod
    def register(cls, name, description, arguments):
        def decorator(func):
            @wraps(func)
            def run(**kwargs):
                return func(**kwargs)

            cls._known[name] = {
                "run": run,
                "card": SkillCard(name=name, description=description, arguments=arguments),
            }
            return run

        return decorator

    @classmethod
    def call(cls, name, args):
        return cls._known[name]["run"](**args)


@Skills.register(
    name="bookTable",
    description="Book a table at the restaurant",
    arguments={"guests": {"type": "integer"}, "time": {"type": "string"}},
)
def book_table(guests: int, time: str) -> str:
    return httpx.post("https://tables.example/bookings", json={"guests": guests}).text


def webhook(payload: dict) -> list:
    answers = []
    for call in payload["toolCalls"]:
        function = call.get("function", {})
        answers.append(Skills.call(function.get("name"), function.get("arguments", {})))
    return answers
"""

# The same keeper, but what it keeps beside each handler is a name, a description and its
# aliases (a command palette's entries): no parameter schema, so nothing says a model calls it.
COMMANDS = (
    SKILLS.replace("arguments: dict", "aliases: list")
    .replace(
        "def register(cls, name, description, arguments)",
        "def register(cls, name, description, aliases)",
    )
    .replace("arguments=arguments", "aliases=aliases")
    .replace(
        'arguments={"guests": {"type": "integer"}, "time": {"type": "string"}},',
        'aliases=["book", "reserve"],',
    )
)


def test_a_registrar_keeping_a_record_of_name_description_and_schema_makes_tools() -> None:
    """The schema itself may be sent to the model from elsewhere (a voice platform's
    console): a record of a name, a description and a parameter schema kept beside each
    function is a tool's description whatever the record's class is called."""
    tools = discover({"diner/skills.py": SKILLS})
    assert [(t.name, t.functions, t.form) for t in tools] == [
        ("bookTable", ["diner.skills.book_table"], "registrar")
    ]
    assert discover({"diner/skills.py": COMMANDS}) == []


LEDGER_REGISTRY = """\
class Ledger:
    def __init__(self):
        self.entries = {}

    def register_tool(self, name, description, parameters):
        def keep(fn):
            self.entries[name] = {"fn": fn, "about": description, "schema": parameters}
            return fn

        return keep

    def specs(self):
        return [
            {"type": "function", "name": n, "description": e["about"], "parameters": e["schema"]}
            for n, e in self.entries.items()
        ]
"""

LEDGER_TOOLS = """\
import httpx


def add_billing_tools(tools):
    @tools.register_tool(
        name="send_invoice",
        description="Send an invoice",
        parameters={"type": "object", "properties": {"to": {"type": "string"}}},
    )
    def send_invoice(to: str) -> str:
        return httpx.post("https://billing.example.com/invoices", json={"to": to}).text
"""

LEDGER_APP = """\
from openai import OpenAI

from shop.ledger import Ledger
from shop.billing import add_billing_tools

ledger = Ledger()
add_billing_tools(ledger)


def turn(text):
    return OpenAI().responses.create(model="m", input=text, tools=ledger.specs())
"""


def test_a_registrar_method_used_through_a_parameter_its_callers_hand_makes_tools() -> None:
    """``def add_billing_tools(tools): @tools.register_tool(...)`` called as
    ``add_billing_tools(ledger)`` with ``ledger = Ledger()``: the decorator is the method of
    the registry every caller hands in."""
    tools = discover(
        {
            "shop/ledger.py": LEDGER_REGISTRY,
            "shop/billing.py": LEDGER_TOOLS,
            "shop/app.py": LEDGER_APP,
        }
    )
    assert [(t.name, t.functions) for t in tools] == [
        ("send_invoice", ["shop.billing.add_billing_tools.<locals>.send_invoice"])
    ]


WRAPPING_LIBRARY = """\
class Wrapped:
    def __init__(self, function, purpose, fields):
        self.function = function
        self.purpose = purpose
        self.fields = fields

    def to_dict(self):
        return {
            "type": "function",
            "function": {
                "name": self.function.__name__,
                "description": self.purpose,
                "parameters": {"type": "object", "properties": self.fields},
            },
        }


class Catalogue:
    _kept = {}

    @classmethod
    def keep(cls, name, wrapped):
        cls._kept[name] = {"wrapped": wrapped, "on": True}

    @classmethod
    def switched_on(cls):
        chosen = {}
        for name, entry in cls._kept.items():
            if entry["on"]:
                chosen[name] = entry["wrapped"]
        return chosen

    @classmethod
    def specs(cls):
        return [wrapped.to_dict() for wrapped in cls.switched_on().values()]


def offered(purpose, **fields):
    def decorate(function):
        wrapped = Wrapped(function, purpose, fields)
        Catalogue.keep(function.__name__, wrapped)
        return function

    return decorate
"""

WRAPPING_APP = """\
import httpx
import litellm

from fdeco import Catalogue, offered


@offered(purpose="Book a room", room={"type": "string"})
def book_room(room: str) -> str:
    return httpx.post("https://rooms.example.com/bookings", json={"room": room}).text


def chat(text):
    return litellm.completion(model="m", messages=[{"role": "user", "content": text}], tools=Catalogue.specs())
"""


def test_a_store_read_back_through_a_getter_into_each_objects_own_spec_makes_tools() -> None:
    """The decorator keeps a wrapper object through a classmethod; another classmethod
    returns the switched-on wrappers, and a third turns each into its spec by the wrapper's
    own ``to_dict`` (a name, a description, a parameter schema): the decorated functions
    are tools. Were ``to_dict`` to write no spec, nothing would be."""
    files = {"fdeco/__init__.py": WRAPPING_LIBRARY, "app.py": WRAPPING_APP}
    assert [(t.name, t.functions) for t in discover(files)] == [("book_room", ["app.book_room"])]
    no_spec = WRAPPING_LIBRARY.replace('"description": self.purpose,', '"summary": self.purpose,')
    assert discover({"fdeco/__init__.py": no_spec, "app.py": WRAPPING_APP}) == []


ASSISTANT_BASE = """\
import anthropic


class ModelAdapter:
    def send(self, messages, tools=None):
        raise NotImplementedError("each adapter sends")


class ClaudeAdapter(ModelAdapter):
    def __init__(self):
        self.client = anthropic.Anthropic()

    def send(self, messages, tools=None):
        request = {"model": "claude-x", "messages": messages, "max_tokens": 1024}
        if tools:
            request["tools"] = tools
        return self.client.messages.create(**request)


class Assistant:
    def __init__(self, adapter=None):
        self.adapter = adapter or ClaudeAdapter()
        self.specs = {}
        self.runners = {}

    def add_capability(self, spec, runner):
        self.specs[spec["name"]] = spec
        self.runners[spec["name"]] = runner
"""

ASSISTANT_CHAT = """\
from assistant.base import Assistant


class ChatAssistant(Assistant):
    def ask(self, text):
        offered = list(self.specs.values()) or None
        reply = self.adapter.send([{"role": "user", "content": text}], tools=offered)
        for block in reply.content:
            if block.type == "tool_use":
                return self.runners[block.name](block.input)
        return reply
"""

ASSISTANT_TOOLS = """\
import requests


def add_refunds(assistant, shop_url):
    spec = {
        "name": "refund_order",
        "description": "Refund an order in full",
        "input_schema": {"type": "object", "properties": {"order_id": {"type": "string"}}},
    }

    def run_refund(arguments):
        return requests.post(f"{shop_url}/refunds", json={"order": arguments["order_id"]}).json()

    assistant.add_capability(spec, run_refund)
"""

ASSISTANT_APP = """\
from assistant.chat import ChatAssistant
from assistant.tools import add_refunds

assistant = ChatAssistant()
add_refunds(assistant, "https://shop.example.com")
"""


def test_a_registrar_keeping_the_spec_for_the_model_and_the_runner_beside_it_makes_a_tool() -> None:
    """``add_capability(spec, run_refund)`` keeps the runner in a lookup by name and the spec
    in the map a subclass's chat loop sends to the model: the runner is a tool, though its
    own store is only read to run it."""
    tools = discover(
        {
            "assistant/base.py": ASSISTANT_BASE,
            "assistant/chat.py": ASSISTANT_CHAT,
            "assistant/tools.py": ASSISTANT_TOOLS,
            "assistant/app.py": ASSISTANT_APP,
        }
    )
    assert [t.functions for t in tools] == [["assistant.tools.add_refunds.<locals>.run_refund"]]


TALLY_REGISTRY = """\
import inspect

from tally.records import Tool


class _Registry:
    def __init__(self):
        self._tools = {}

    def add(self, tool):
        self._tools[tool.name] = tool

    def get(self, scope=None):
        if scope is None:
            return self._tools.values()
        return [tool for tool in self._tools.values() if scope in tool.scopes]


tool_registry: _Registry = _Registry()


def tool(tool_function=None, /, *, scopes="main"):
    def decorator(func):
        params = list(inspect.signature(func).parameters)
        tool_registry.add(
            Tool(name=func.__name__, awaitable=func, description=func.__doc__, params=params, scopes=[scopes])
        )
        return func

    if tool_function is None:
        return decorator
    return decorator(tool_function)
"""

TALLY_TOOLS = """\
from tally.db import ledger
from tally.registry import tool


@tool
async def add_expense(amount: float, note: str):
    \"\"\"Record an expense.\"\"\"
    return await ledger.add(amount, note)


@tool(scopes="main")
async def list_expenses():
    \"\"\"List the expenses.\"\"\"
    return await ledger.all()
"""

TALLY_SESSION = """\
from tally.agent import Agent
from tally.registry import tool_registry


class Session:
    def start(self):
        self.agent = Agent(prompt="You keep accounts.", tools=tool_registry.get("main"))
"""


def test_a_decorator_keeping_records_in_a_registry_object_read_by_another_module_makes_tools() -> (
    None
):
    """``@tool`` (used bare or called) builds a record of the function and adds it to a
    module's registry object, a private class of the project; another module hands what the
    registry's getter returns to an agent as its ``tools``."""
    tools = discover(
        {
            "tally/registry.py": TALLY_REGISTRY,
            "tally/tools.py": TALLY_TOOLS,
            "tally/session.py": TALLY_SESSION,
        }
    )
    assert sorted((t.name, t.form) for t in tools) == [
        ("add_expense", "registrar"),
        ("list_expenses", "registrar"),
    ]


PLUGIN_REGISTRY = """\
from plugkit.registry import Registry

tool_registry = Registry(registry_name="tools")
"""

PLUGIN_TOOLS = """\
import subprocess

from helper import tool_registry


@tool_registry.register_function()
def run_command(command: str) -> str:
    \"\"\"Run a shell command.\"\"\"
    return subprocess.run(command, shell=True, capture_output=True, text=True).stdout
"""

PLUGIN_AGENT = """\
from langgraph.prebuilt import create_react_agent

from helper import tool_registry


def build(llm):
    tools = [fn for _, fn in tool_registry.registry.items()]
    return create_react_agent(model=llm, tools=tools)
"""

PLUGIN_COMMANDS = """\
from helper import tool_registry


def main(argv):
    return tool_registry.registry[argv[0]](*argv[1:])
"""


def test_functions_kept_by_a_package_objects_decorator_that_reaches_an_agent_are_tools() -> None:
    """``@tool_registry.register_function()`` on an object of a package no catalogue knows:
    the functions are tools because what is read of the object is handed to an agent's
    ``tools``; the same object read only by a command line keeps no tools."""
    files = {"helper/__init__.py": PLUGIN_REGISTRY, "helper/shell.py": PLUGIN_TOOLS}
    tools = discover({**files, "helper/agent.py": PLUGIN_AGENT})
    assert [(t.name, t.form, t.anchor.span.line) for t in tools] == [
        ("run_command", "registrar", line_of(PLUGIN_TOOLS, "def run_command"))
    ]
    assert discover({**files, "helper/cli.py": PLUGIN_COMMANDS}) == []


PROMPT_REGISTRY = """\
from dataclasses import dataclass
from typing import Callable


@dataclass
class Entry:
    name: str
    description: str
    handler: Callable


_entries: dict[str, Entry] = {}


def skill(name: str, description: str = ""):
    def keep(func):
        _entries[name] = Entry(name=name, description=description, handler=func)
        return func
    return keep


def find_skill(name: str) -> Entry | None:
    return _entries.get(name)


def skills_for_prompt() -> str:
    lines = []
    for name, entry in sorted(_entries.items()):
        lines.append(f"- {name}: {entry.description}")
    return "\\n".join(lines)
"""

PROMPT_SKILLS = """\
import httpx

from house.registry import skill


@skill("lights.off", description="Switch the lights off in a room")
async def lights_off(room: str) -> str:
    return httpx.post(f"http://hub.local/rooms/{room}/lights", json={"on": False}).text


@skill("lights.state", description="Whether a room's lights are on")
async def lights_state(room: str) -> str:
    return httpx.get(f"http://hub.local/rooms/{room}/lights").text
"""

PROMPT_PLANNER = """\
import json

from anthropic import AsyncAnthropic

from house.registry import find_skill, skills_for_prompt

client = AsyncAnthropic()


async def plan(request: str) -> str:
    system = "Answer with JSON {skill, args}. Skills:\\n" + skills_for_prompt()
    reply = await client.messages.create(
        model="claude-sonnet-4-5", max_tokens=300, system=system,
        messages=[{"role": "user", "content": request}],
    )
    choice = json.loads(reply.content[0].text)
    return await find_skill(choice["skill"]).handler(**choice["args"])
"""

COMMAND_TABLE = """\
_commands = {}


def command(name):
    def keep(func):
        _commands[name] = func
        return func
    return keep


@command("backup")
def backup() -> None:
    print("backing up")


def help_text() -> str:
    return "\\n".join(f"/{name}" for name in _commands)


def main(argv: list) -> None:
    for name, run in _commands.items():
        if argv and argv[0] == name:
            run()
"""


def test_a_registrar_whose_store_is_listed_in_a_models_prompt_keeps_tools() -> None:
    """``@skill(...)`` keeps each function in a module dict that ``skills_for_prompt``
    walks to list the skills in the prompt of a function calling a model: each function it
    keeps is a tool. A command table walked where no model is called keeps none."""
    tools = discover(
        {
            "house/__init__.py": "",
            "house/registry.py": PROMPT_REGISTRY,
            "house/skills.py": PROMPT_SKILLS,
            "house/planner.py": PROMPT_PLANNER,
            "house/cli.py": COMMAND_TABLE,
        }
    )
    assert sorted(t.functions[0] for t in tools) == [
        "house.skills.lights_off",
        "house.skills.lights_state",
    ]


OBJECT_REGISTRY = """\
class Registry:
    def __init__(self) -> None:
        self._tools = {}

    def register(self, tool) -> None:
        self._tools[tool.name] = tool

    def get(self, name: str):
        return self._tools.get(name)

    def descriptions(self) -> str:
        return "\\n".join(f"- {t.name}: {t.description}" for t in self._tools.values())


registry = Registry()
"""

OBJECT_TOOLS = """\
import httpx

from leads.registry import registry


class CompanySearch:
    name = "company_search"
    description = "Search the web for a company"

    async def run(self, query: str) -> str:
        return httpx.get("https://search.example/api", params={"q": query}).text


class CrmNote:
    name = "crm_note"
    description = "Add a note to the lead in the CRM"

    async def run(self, lead: str, text: str) -> str:
        return httpx.post(f"https://crm.example/leads/{lead}/notes", json={"text": text}).text


registry.register(CompanySearch())
registry.register(CrmNote())
"""

OBJECT_PLANNER = """\
import json

from anthropic import AsyncAnthropic

from leads.registry import registry

client = AsyncAnthropic()


async def step(task: str) -> str:
    reply = await client.messages.create(
        model="claude-sonnet-4-5", max_tokens=300, system="Tools:\\n" + registry.descriptions(),
        messages=[{"role": "user", "content": task}],
    )
    choice = json.loads(reply.content[0].text)
    return await registry.get(choice["tool"]).run(**choice["args"])
"""


def test_objects_a_registry_keeps_and_lists_for_a_model_are_tools() -> None:
    """``registry.register(CrmNote())`` on a project registry whose store is walked to list
    the tools for a model: each class so registered is a tool, named by its ``name`` and run
    by its ``run``."""
    tools = discover(
        {
            "leads/__init__.py": "",
            "leads/registry.py": OBJECT_REGISTRY,
            "leads/tools.py": OBJECT_TOOLS,
            "leads/planner.py": OBJECT_PLANNER,
        }
    )
    assert sorted((t.name, t.functions[0]) for t in tools) == [
        ("company_search", "leads.tools.CompanySearch.run"),
        ("crm_note", "leads.tools.CrmNote.run"),
    ]
