"""Tools found by provenance: tool classes whose specs reach a model API call, followed back
from the call through the project's own code, and tool classes a project loads by the name
the model answers with. The projects here name their bases, registries, spec methods and
loaders with words no catalogue knows."""

from __future__ import annotations

from tests.test_tool_discovery import discover, line_of

# ---------------------------------------------------------------- a spec sink (Anthropic)

CAPABILITY = """\
class Capability:
    label: str = ""

    def manifest(self) -> dict:
        return {"name": self.label, "description": self.__doc__ or "", "input_schema": self.shape()}

    def shape(self) -> dict:
        return {"type": "object", "properties": {}}

    async def perform(self, **kwargs) -> str:
        raise NotImplementedError
"""

TICKETS = """\
import httpx

from helpdesk.skills.core import Capability


class OpenTicket(Capability):
    \"\"\"Open a ticket in the tracker.\"\"\"

    label = "open_ticket"

    async def perform(self, title: str) -> str:
        return httpx.post("https://tracker.example/tickets", json={"title": title}).text


class LookupTicket(Capability):
    \"\"\"Read one ticket.\"\"\"

    label = "lookup_ticket"

    async def perform(self, ticket_id: str) -> str:
        return httpx.get(f"https://tracker.example/tickets/{ticket_id}").text


class RemoteCapability(Capability):
    \"\"\"A capability another server defines: its name is the caller's.\"\"\"

    def __init__(self, label: str) -> None:
        self.label = label

    async def perform(self, **kwargs) -> str:
        return "relayed"
"""

KIT = """\
class Kit:
    def __init__(self, *caps):
        self.caps = list(caps)
        self.by_label = {c.label: c for c in caps}

    def manifests(self) -> list:
        return [c.manifest() for c in self.caps]

    async def dispatch(self, label: str, args: dict) -> str:
        return await self.by_label[label].perform(**args)
"""

DESK = """\
import anthropic

from helpdesk.skills.kit import Kit
from helpdesk.skills.tickets import LookupTicket, OpenTicket


class Desk:
    def __init__(self) -> None:
        self.client = anthropic.Anthropic()
        self.kit = Kit(OpenTicket(), LookupTicket())

    def _params(self, messages: list) -> dict:
        return {"model": "claude", "max_tokens": 512, "messages": messages, "tools": self.kit.manifests()}

    def turn(self, messages: list):
        return self.client.messages.create(**self._params(messages))
"""

REPORT = """\
class Report:
    \"\"\"A record with a name that no model is shown.\"\"\"

    def __init__(self, title: str) -> None:
        self.title = title

    def as_row(self) -> dict:
        return {"name": "weekly", "description": self.title}

    def publish(self) -> None:
        open("report.txt", "w").write(self.title)


def rows() -> list:
    return [Report("a").as_row()]
"""

HELPDESK = {
    "helpdesk/skills/core.py": CAPABILITY,
    "helpdesk/skills/tickets.py": TICKETS,
    "helpdesk/skills/kit.py": KIT,
    "helpdesk/desk.py": DESK,
    "helpdesk/report.py": REPORT,
}


def test_classes_whose_specs_reach_a_model_call_are_tools() -> None:
    tools = {t.name: t for t in discover(HELPDESK)}
    assert {"open_ticket", "lookup_ticket"} <= set(tools)
    opened = tools["open_ticket"]
    assert opened.functions == ["helpdesk.skills.tickets.OpenTicket.perform"]
    assert (opened.path, opened.anchor.span.line) == (
        "helpdesk/skills/tickets.py",
        line_of(TICKETS, "class OpenTicket"),
    )
    assert tools["lookup_ticket"].functions == ["helpdesk.skills.tickets.LookupTicket.perform"]


def test_a_spec_base_a_proxy_and_a_record_no_model_sees_are_not_tools() -> None:
    tools = discover(HELPDESK)
    symbols = {t.symbol for t in tools}
    # the base leaves its hook abstract; the proxy's name is whoever builds it
    assert "helpdesk.skills.core.Capability" not in symbols
    assert "helpdesk.skills.tickets.RemoteCapability" not in symbols
    # a dict with a name that reaches no model call
    assert not any(t.path == "helpdesk/report.py" for t in tools)


# ---------------------------------------------------------------- a spec sink (OpenAI)

PROBES = """\
import subprocess


class DiskProbe:
    def describe(self) -> dict:
        return {
            "type": "function",
            "function": {"name": "disk_usage", "parameters": {"type": "object"}},
        }

    def __call__(self, path: str) -> str:
        return subprocess.run(["du", "-sh", path], capture_output=True, text=True).stdout
"""

OPS = """\
from openai import OpenAI

from ops.probes import DiskProbe


def ask(question: str):
    client = OpenAI()
    specs = []
    specs.append(DiskProbe().describe())
    return client.chat.completions.create(model="gpt", messages=[question], tools=specs)
"""


def test_a_spec_appended_to_a_local_list_is_followed_to_its_class() -> None:
    tools = {t.name: t for t in discover({"ops/probes.py": PROBES, "ops/agent.py": OPS})}
    assert tools["disk_usage"].functions == ["ops.probes.DiskProbe.__call__"]
    assert tools["disk_usage"].form == "spec-sink"


# ---------------------------------------------------------------- classes loaded by name

ACTION = """\
class Action:
    def __init__(self, bot, name: str, method: str | None, params: dict) -> None:
        self.bot = bot
        self.name = name
        self.method = method
        self.params = params

    async def act(self, **kwargs) -> str:
        raise NotImplementedError
"""

SEND_MAIL = """\
import smtplib

from relay.actions.base import Action


class SendMail(Action):
    async def act(self, to: str, body: str) -> str:
        smtplib.SMTP("mail.example").sendmail("bot@example", [to], body)
        return "sent"
"""

WEATHER = """\
import httpx

from relay.actions.base import Action


class Weather(Action):
    async def act(self, city: str) -> str:
        return httpx.get("https://weather.example", params={"q": city}).text
"""

CALENDAR = """\
import json

from relay.actions.base import Action


class Calendar(Action):
    async def act(self, **kwargs) -> str:
        if self.method == "add_event":
            return await self.add_event(**kwargs)
        elif self.method == "list_events":
            return await self.list_events()
        return "unknown method"

    async def add_event(self, title: str) -> str:
        with open("calendar.json", "a") as handle:
            handle.write(json.dumps({"title": title}))
        return "added"

    async def list_events(self) -> str:
        with open("calendar.json") as handle:
            return handle.read()
"""

HOOK = """\
class Hook:
    async def fire(self) -> None:
        raise NotImplementedError


class Audit(Hook):
    async def fire(self) -> None:
        open("audit.log", "a").write("turn")
"""

ELSEWHERE = """\
from relay.actions.base import Action


class RemoteAction(Action):
    async def act(self, **kwargs) -> str:
        return "relayed"
"""

LOADER = """\
import importlib
import inspect


def classes_in(module_name: str, base: type) -> list:
    module = importlib.import_module(module_name)
    return [
        member
        for _, member in inspect.getmembers(module, inspect.isclass)
        if issubclass(member, base) and member is not base
    ]
"""

BOT = """\
import json

from relay.actions.base import Action
from relay.hooks import Hook
from relay.loader import classes_in


class Bot:
    async def handle(self, answer: str) -> str:
        request = json.loads(answer)
        name, _, method = request["action"].partition(":")
        for hook in classes_in("relay.hooks", Hook):
            await hook().fire()
        found = classes_in("relay.actions." + name, Action)
        action = found[0](bot=self, name=name, method=method, params=request["args"])
        return await action.act(**request["args"])
"""

RELAY = {
    "relay/actions/base.py": ACTION,
    "relay/actions/send_mail.py": SEND_MAIL,
    "relay/actions/weather.py": WEATHER,
    "relay/actions/calendar.py": CALENDAR,
    "relay/hooks.py": HOOK,
    "relay/remote.py": ELSEWHERE,
    "relay/loader.py": LOADER,
    "relay/bot.py": BOT,
}


def test_classes_loaded_by_the_name_the_model_answers_with_are_tools() -> None:
    tools = {t.name: t for t in discover(RELAY)}
    assert tools["send_mail"].functions == ["relay.actions.send_mail.SendMail.act"]
    assert tools["weather"].functions == ["relay.actions.weather.Weather.act"]
    assert (tools["weather"].path, tools["weather"].anchor.span.line) == (
        "relay/actions/weather.py",
        line_of(WEATHER, "class Weather"),
    )


def test_an_entry_method_picking_a_method_by_an_attribute_makes_one_tool_per_method() -> None:
    tools = {t.name: t for t in discover(RELAY)}
    assert tools["calendar:add_event"].functions == ["relay.actions.calendar.Calendar.add_event"]
    assert tools["calendar:list_events"].anchor.span.line == line_of(CALENDAR, "def list_events")
    assert "calendar" not in tools


def test_classes_loaded_from_a_fixed_module_or_outside_the_named_folder_are_not_tools() -> None:
    symbols = {t.symbol for t in discover(RELAY)}
    assert "relay.hooks.Audit" not in symbols
    assert "relay.remote.RemoteAction" not in symbols
    assert "relay.actions.base.Action" not in symbols


SENDER = """\
from openai import OpenAI


def complete(messages: list, specs: list):
    return OpenAI().chat.completions.create(model="gpt", messages=messages, tools=specs)
"""

CALLER = """\
from ops.probes import DiskProbe
from ops.sender import complete


def ask(question: str):
    return complete([question], [DiskProbe().describe()])
"""


def test_a_spec_handed_to_a_helper_parameter_is_followed_to_its_callers() -> None:
    files = {"ops/probes.py": PROBES, "ops/sender.py": SENDER, "ops/ask.py": CALLER}
    tools = {t.name: t for t in discover(files)}
    assert tools["disk_usage"].functions == ["ops.probes.DiskProbe.__call__"]
    assert tools["disk_usage"].form == "spec-sink"


# ---------------------------------------------------------------- a spec sink (Gemini)

GEMINI = """\
import shutil

from google import genai
from google.genai import types


class Janitor:
    title = "purge_cache"

    def declaration(self) -> types.FunctionDeclaration:
        return types.FunctionDeclaration(name=self.title, description="Empty the cache folder")

    def run(self, folder: str) -> str:
        shutil.rmtree(folder)
        return "purged"


class Chat:
    def __init__(self) -> None:
        self.client = genai.Client()
        self.helpers = [Janitor()]

    def send(self, text: str):
        config = types.GenerateContentConfig(
            tools=[types.Tool(function_declarations=[h.declaration() for h in self.helpers])]
        )
        return self.client.models.generate_content(model="gemini", contents=text, config=config)
"""


def test_a_typed_spec_inside_a_config_object_is_followed_to_its_class() -> None:
    tools = {t.name: t for t in discover({"house/chat.py": GEMINI})}
    assert tools["purge_cache"].functions == ["house.chat.Janitor.run"]
    assert tools["purge_cache"].form == "spec-sink"


GEMINI_LIVE = GEMINI.replace(
    """    def send(self, text: str):
        config = types.GenerateContentConfig(
            tools=[types.Tool(function_declarations=[h.declaration() for h in self.helpers])]
        )
        return self.client.models.generate_content(model="gemini", contents=text, config=config)
""",
    """    async def talk(self):
        config = types.LiveConnectConfig(
            response_modalities=["AUDIO"],
            tools=[types.Tool(function_declarations=[h.declaration() for h in self.helpers])],
        )
        async with self.client.aio.live.connect(model="gemini-live", config=config) as session:
            async for message in session.receive():
                yield message
""",
)


def test_specs_handed_to_a_live_session_are_followed_to_their_class() -> None:
    """The Gemini Live API takes the same declarations in ``LiveConnectConfig(tools=...)``
    handed to ``client.aio.live.connect(config=...)``: a voice agent's tools."""
    assert "LiveConnectConfig" in GEMINI_LIVE
    tools = {t.name: t for t in discover({"house/voice.py": GEMINI_LIVE})}
    assert tools["purge_cache"].functions == ["house.voice.Janitor.run"]


# ---------------------------------------------------------------- specs written in place

STEPS = """\
import os

import httpx


class Archive:
    name = "archive_file"
    description = "Move a file to the archive folder."
    schema = {"type": "object", "properties": {"path": {"type": "string"}}}

    def execute(self, path: str) -> str:
        os.rename(path, "archive/" + os.path.basename(path))
        return "archived"


class Lookup:
    name = "lookup_word"
    description = "Look a word up."
    schema = {"type": "object", "properties": {"word": {"type": "string"}}}

    def execute(self, word: str) -> str:
        return httpx.get("https://dictionary.example", params={"q": word}).text


class Counter:
    \"\"\"Built next to the steps, but no model is told about it.\"\"\"

    name = "turns"
    description = "How many turns ran."

    def execute(self) -> int:
        return 0
"""

RUNNER = """\
import anthropic

from clerk.steps import Archive, Counter, Lookup


class Clerk:
    def __init__(self) -> None:
        self.client = anthropic.Anthropic()
        self.steps = [Archive(), Lookup()]
        self.counter = Counter()

    def turn(self, messages: list):
        specs = [
            {"name": s.name, "description": s.description, "input_schema": s.schema}
            for s in self.steps
        ]
        return self.client.messages.create(model="claude", messages=messages, tools=specs)
"""


def test_classes_whose_instances_the_specs_are_written_from_are_tools() -> None:
    tools = {t.name: t for t in discover({"clerk/steps.py": STEPS, "clerk/runner.py": RUNNER})}
    assert tools["archive_file"].functions == ["clerk.steps.Archive.execute"]
    assert tools["archive_file"].form == "spec-sink"
    assert tools["lookup_word"].functions == ["clerk.steps.Lookup.execute"]
    assert "turns" not in tools


# ---------------------------------------------------------------- a dataclass spec base

ABILITY = """\
from dataclasses import dataclass


@dataclass
class Ability:
    name: str
    description: str
    input_schema: dict

    def as_spec(self) -> dict:
        return {"name": self.name, "description": self.description, "input_schema": self.input_schema}

    async def invoke(self, **kwargs) -> str:
        raise NotImplementedError("subclasses run the ability")
"""

SHOUT = """\
import subprocess

from crew.ability import Ability


class Shout(Ability):
    def __init__(self) -> None:
        super().__init__(
            name="shout",
            description="Broadcast a message to every terminal.",
            input_schema={"type": "object", "properties": {"text": {"type": "string"}}},
        )

    async def invoke(self, text: str) -> str:
        return subprocess.run(["wall", text], capture_output=True, text=True).stdout
"""

HAND = """\
from anthropic import Anthropic

from crew.shout import Shout


class Hand:
    def __init__(self, abilities=None) -> None:
        self.abilities = list(abilities or [])
        self.client = Anthropic()

    def step(self, messages: list):
        return self.client.messages.create(
            model="claude", messages=messages, tools=[a.as_spec() for a in self.abilities]
        )


def make() -> Hand:
    return Hand(abilities=[Shout()])
"""


def test_a_spec_base_whose_run_method_subclasses_write_is_no_tool_itself() -> None:
    files = {"crew/ability.py": ABILITY, "crew/shout.py": SHOUT, "crew/hand.py": HAND}
    tools = {t.name: t for t in discover(files)}
    assert tools["shout"].functions == ["crew.shout.Shout.invoke"]
    assert "crew.ability.Ability" not in {t.symbol for t in tools.values()}


# ---------------------------------------------------------------- a one-tool low-level server

ONE_TOOL = """\
import httpx
from mcp.server.lowlevel import Server
from mcp.types import TextContent, Tool


def build() -> Server:
    server = Server("pinger")

    @server.list_tools()
    async def list_tools() -> list[Tool]:
        return [Tool(name="ping_host", description="Ping a host over HTTP", inputSchema={})]

    @server.call_tool()
    async def call_tool(name: str, arguments: dict) -> list[TextContent]:
        reply = httpx.get(f"https://{arguments['host']}/health")
        return [TextContent(type="text", text=reply.text)]

    return server
"""


def test_the_tool_handler_of_a_one_tool_server_that_never_reads_the_name_is_the_tool() -> None:
    tools = discover({"pinger/server.py": ONE_TOOL})
    assert [(t.name, t.functions) for t in tools] == [
        ("ping_host", ["pinger.server.build.<locals>.call_tool"])
    ]


# ---------------------------------------------------------------- callables in a field

# The project's own agent record and loop: each function of ``Persona.skills`` is turned into
# a spec by the project's own helper and handed to the model. No catalogue names any of it.
PERSONA = """\
import inspect
from collections.abc import Callable

from pydantic import BaseModel


class Persona(BaseModel):
    title: str = "helper"
    skills: list[Callable] = []


def describe(func: Callable) -> dict:
    return {
        "type": "function",
        "function": {"name": func.__name__, "description": func.__doc__ or "", "parameters": {}},
    }
"""

LOOP = """\
from openai import OpenAI

from desk.persona import Persona, describe


class Loop:
    def __init__(self) -> None:
        self.client = OpenAI()

    def step(self, persona: Persona, history: list) -> object:
        specs = [describe(skill) for skill in persona.skills]
        params = {"model": "gpt-4o", "messages": history, "tools": specs or None}
        return self.client.chat.completions.create(**params)
"""

BOOKING = """\
import httpx

from desk.persona import Persona


def book_room(room: str, night: str) -> str:
    \"\"\"Book a room for a night.\"\"\"
    return httpx.post("https://hotel.example/bookings", json={"room": room, "night": night}).text


def room_rates(room: str) -> str:
    \"\"\"Rates of a room.\"\"\"
    return httpx.get(f"https://hotel.example/rooms/{room}/rates").text


def cancel_booking(booking_id: str) -> str:
    \"\"\"Cancel a booking.\"\"\"
    return httpx.delete(f"https://hotel.example/bookings/{booking_id}").text


def format_rate(rate: float) -> str:
    return f"{rate:.2f}"


concierge = Persona(title="concierge", skills=[book_room, room_rates])
concierge.skills.append(cancel_booking)
"""


def test_functions_in_a_field_the_specs_are_built_from_are_tools() -> None:
    """``[describe(s) for s in persona.skills]`` handed to ``chat.completions.create`` through
    a ``**params`` dict: the functions each ``Persona(skills=[...])`` is built with, and those
    appended to its ``skills`` later, reach the model; a helper no persona holds does not."""
    found = discover({"desk/persona.py": PERSONA, "desk/loop.py": LOOP, "desk/booking.py": BOOKING})
    tools = {t.name: t for t in found}
    assert set(tools) == {"book_room", "room_rates", "cancel_booking"}
    assert tools["book_room"].functions == ["desk.booking.book_room"]
    assert tools["book_room"].form == "spec-sink"


def test_functions_taken_by_a_star_import_from_a_script_folder_are_followed() -> None:
    """``from skills.hotel import *`` in ``bots/concierge/main.py``, run from its own folder:
    the names it hands over are the functions of ``bots/concierge/skills/hotel.py``."""
    hotel = BOOKING.split("\n\n\nconcierge = ")[0].replace("from desk.persona import Persona\n", "")
    main = """\
from desk.persona import Persona
from skills.hotel import *

concierge = Persona(title="concierge", skills=[book_room, cancel_booking])
"""
    found = discover(
        {
            "desk/persona.py": PERSONA,
            "desk/loop.py": LOOP,
            "bots/concierge/skills/hotel.py": hotel,
            "bots/concierge/main.py": main,
        }
    )
    assert {t.name: t.functions for t in found} == {
        "book_room": ["bots.concierge.skills.hotel.book_room"],
        "cancel_booking": ["bots.concierge.skills.hotel.cancel_booking"],
    }


# ---------------------------------------------------------------- registries read back


def test_a_registrar_decorators_store_read_back_into_framework_tools_is_followed() -> None:
    """``@skill`` keeps each function in a module dict; ``all_skills()`` hands its values to
    ``StructuredTool.from_function`` and the list to ``create_react_agent``: the decorated
    functions are tools, found from the registration back to the decorator."""
    registry = """\
from typing import Callable

_SKILLS: dict[str, Callable] = {}


def skill(fn: Callable) -> Callable:
    _SKILLS[fn.__name__] = fn
    return fn


def all_skills() -> list[Callable]:
    return list(_SKILLS.values())
"""
    skills = """\
import httpx

from billing.registry import skill


@skill
def open_invoice(customer: str, amount: float) -> str:
    \"\"\"Open an invoice.\"\"\"
    return httpx.post("https://billing.example/invoices", json={"c": customer, "a": amount}).text


@skill
def invoice_status(invoice_id: str) -> str:
    \"\"\"Status of an invoice.\"\"\"
    return httpx.get(f"https://billing.example/invoices/{invoice_id}").text


def _total(amounts: list[float]) -> float:
    return sum(amounts)
"""
    agent = """\
from langchain_core.tools import StructuredTool
from langgraph.prebuilt import create_react_agent

import billing.skills  # noqa: F401  (registers the skills)
from billing.registry import all_skills


def build(model):
    tools = [StructuredTool.from_function(f) for f in all_skills()]
    return create_react_agent(model, tools)
"""
    found = discover(
        {"billing/registry.py": registry, "billing/skills.py": skills, "billing/agent.py": agent}
    )
    assert {t.name: t.functions for t in found} == {
        "open_invoice": ["billing.skills.open_invoice"],
        "invoice_status": ["billing.skills.invoice_status"],
    }


def test_the_functions_of_a_module_the_loop_scans_are_tools() -> None:
    """``inspect.getmembers(actions, inspect.isfunction)`` into a dict whose values become
    ``messages.create(tools=...)`` specs: the module's public functions reach the model."""
    actions = """\
import os

import requests


def delete_file(path: str) -> str:
    \"\"\"Delete a file.\"\"\"
    os.remove(path)
    return "ok"


def post_status(text: str) -> str:
    \"\"\"Post a status update.\"\"\"
    return requests.post("https://social.example/status", json={"t": text}).text


def _clean(text: str) -> str:
    return text.strip()
"""
    runner = """\
import inspect

import anthropic

from agent import actions


def schema(fn) -> dict:
    return {"name": fn.__name__, "description": fn.__doc__, "input_schema": {"type": "object"}}


FUNCS = {name: fn for name, fn in inspect.getmembers(actions, inspect.isfunction)}


def step(messages: list) -> None:
    client = anthropic.Anthropic()
    specs = [schema(f) for f in FUNCS.values()]
    reply = client.messages.create(model="claude", max_tokens=256, messages=messages, tools=specs)
    for block in reply.content:
        if block.type == "tool_use":
            FUNCS[block.name](**block.input)
"""
    found = discover(
        {"agent/__init__.py": "", "agent/actions.py": actions, "agent/runner.py": runner}
    )
    assert {t.name for t in found} == {"delete_file", "post_status"}


def test_a_spec_written_for_a_module_function_chosen_by_name_finds_the_modules_functions() -> None:
    """``spec(name)`` writes an OpenAI spec from ``getattr(commands, name)``: the functions of
    the project module ``commands`` are what the model is offered."""
    commands = """\
import requests


def create_reminder(text: str, at: str) -> str:
    \"\"\"Create a reminder.\"\"\"
    return requests.post("https://remind.example/reminders", json={"text": text, "at": at}).text


def list_reminders() -> str:
    \"\"\"List the reminders.\"\"\"
    return requests.get("https://remind.example/reminders").text
"""
    main = """\
import json

from openai import OpenAI

from bot import commands

NAMES = ["create_reminder", "list_reminders"]


def spec(name: str) -> dict:
    fn = getattr(commands, name)
    return {"type": "function", "function": {"name": name, "description": fn.__doc__}}


def run(messages: list) -> None:
    client = OpenAI()
    out = client.chat.completions.create(
        model="gpt-4o", messages=messages, tools=[spec(n) for n in NAMES]
    )
    for call in out.choices[0].message.tool_calls:
        getattr(commands, call.function.name)(**json.loads(call.function.arguments))
"""
    found = discover({"bot/__init__.py": "", "bot/commands.py": commands, "bot/main.py": main})
    assert {t.name for t in found} == {"create_reminder", "list_reminders"}


# ------------------------------------- a registry method whose decorator writes the spec

LEDGER = """\
class Ledger:
    def __init__(self):
        self.entries = []
        self.runners = {}

    def enlist(self, title, summary, schema):
        def keep(fn):
            self.entries.append(
                {"type": "function", "function": {"name": title, "description": summary, "parameters": schema}}
            )
            self.runners[title] = fn
            return fn

        return keep

    def specs(self):
        return self.entries


ledger = Ledger()
"""

FOLDER_ACTIONS = """\
import os
import shutil

from crewdesk.ledger import ledger


@ledger.enlist("purge_folder", "Delete a folder and what it holds.", {"type": "object"})
def purge_folder(path: str) -> str:
    shutil.rmtree(path)
    return "deleted"


@ledger.enlist("peek_folder", "List a folder.", {"type": "object"})
def peek_folder(path: str) -> list:
    return os.listdir(path)
"""

MENU = """\
class Menu:
    def __init__(self):
        self.items = []

    def item(self, title):
        def keep(fn):
            self.items.append({"name": title, "description": fn.__doc__})
            return fn

        return keep


menu = Menu()


@menu.item("print_help")
def print_help() -> None:
    \"\"\"Shown in the terminal's menu, never to a model.\"\"\"
    print("help")
"""

LEDGER_LOOP = """\
import openai

import crewdesk.ledger


class Loop:
    def __init__(self):
        self.client = openai.OpenAI()
        self.specs = crewdesk.ledger.ledger.specs()

    def step(self, messages):
        return self.client.chat.completions.create(model="m", messages=messages, tools=self.specs)
"""

CREWDESK = {
    "crewdesk/ledger.py": LEDGER,
    "crewdesk/actions/folders.py": FOLDER_ACTIONS,
    "crewdesk/menu.py": MENU,
    "crewdesk/loop.py": LEDGER_LOOP,
}


def test_functions_a_registry_method_decorates_are_tools_when_its_specs_reach_a_model() -> None:
    """``@ledger.enlist(...)`` on a module-level instance: the decorator the method returns
    appends the spec to ``self.entries`` through its closure, and the loop hands
    ``ledger.specs()`` to the model. The decorated functions are the tools; a second
    registry of the same shape whose list no model sees records none."""
    tools = discover(CREWDESK)
    by_name = {t.name: t for t in tools}
    assert {"purge_folder", "peek_folder"} <= set(by_name)
    assert by_name["purge_folder"].functions == ["crewdesk.actions.folders.purge_folder"]
    assert by_name["purge_folder"].anchor.span.line == line_of(FOLDER_ACTIONS, "def purge_folder")
    assert "print_help" not in by_name


# -------------------------------- a framework agent's tool list written after it is built

SWARM_DESK = """\
import requests
from swarm import Agent


def lookup_order(order_id: str) -> str:
    return requests.get(f"https://shop.example/orders/{order_id}").text


def cancel_order(order_id: str) -> str:
    return requests.delete(f"https://shop.example/orders/{order_id}").text


def refund_order(order_id: str) -> str:
    return requests.post(f"https://shop.example/orders/{order_id}/refunds").text


def archive_order(order_id: str) -> str:
    return requests.put(f"https://shop.example/orders/{order_id}/archived").text


def format_receipt(order: dict) -> str:
    return str(order)


desk = Agent(name="Desk", instructions="Help with orders.", functions=[lookup_order])
desk.functions.extend([cancel_order])
desk.functions.append(refund_order)

backroom = Agent(name="Backroom", instructions="Archive.")
backroom.functions = [archive_order]

receipts = [format_receipt]
receipts.append(format_receipt)
"""


def test_functions_added_to_a_framework_agent_after_it_is_built_are_tools() -> None:
    """``desk.functions.extend([...])``, ``.append(f)`` and ``backroom.functions = [...]`` on
    Swarm agents: each function handed to the agent's list is a tool; a list of the
    project's own is not an agent's."""
    names = {t.name for t in discover({"shop/agents.py": SWARM_DESK})}
    assert names == {"lookup_order", "cancel_order", "refund_order", "archive_order"}


# ------------------- specs in one module, dispatched by name in another module's loop

SPECS = """\
tools = [
    {"type": "function", "function": {"name": "read_note", "description": "Read a note.",
     "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}},
    {"type": "function", "function": {"name": "write_note", "description": "Write a note.",
     "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}},
    {"type": "function", "function": {"name": "delete_note", "description": "Delete a note.",
     "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}},
]
"""

AGENT_LOOP = """\
import json
import os

from openai import OpenAI

from notes.specs import tools
from notes.store import NoteStore


def main(prompt: str) -> None:
    client = OpenAI()
    store = NoteStore()
    history = [{"role": "user", "content": prompt}]
    while True:
        reply = client.chat.completions.create(model="m", messages=history, tools=tools)
        message = reply.choices[0].message
        if not message.tool_calls:
            return
        for call in message.tool_calls:
            args = json.loads(call.function.arguments)
            match call.function.name:
                case "read_note":
                    with open(args["path"]) as handle:
                        content = handle.read()
                case "write_note":
                    with open(args["path"], "w") as handle:
                        handle.write(args["text"])
                    content = "written"
                case "delete_note":
                    content = store.remove(args["path"])
            history.append({"role": "tool", "tool_call_id": call.id, "content": content})
"""

STORE = """\
import os


class NoteStore:
    def remove(self, path: str) -> str:
        os.remove(path)
        return "deleted"
"""


def test_spec_dicts_are_linked_to_the_branches_of_another_modules_dispatch() -> None:
    """Specs listed in ``notes/specs.py`` and handed to the model; the agent loop in
    ``notes/agent.py`` dispatches on the name with ``match``. A branch doing the work
    itself is the tool, anchored at the branch; a branch handing the work to a method of
    the project runs that method."""
    tools = {
        t.name: t
        for t in discover(
            {"notes/specs.py": SPECS, "notes/agent.py": AGENT_LOOP, "notes/store.py": STORE}
        )
    }
    assert set(tools) == {"read_note", "write_note", "delete_note"}
    written = tools["write_note"]
    assert written.path == "notes/agent.py"
    assert written.anchor.span.line == line_of(AGENT_LOOP, 'with open(args["path"], "w")')
    assert tools["delete_note"].functions == ["notes.store.NoteStore.remove"]


# ------------- tool classes describing themselves with properties, listed by concatenation

GADGET = """\
from abc import ABC, abstractmethod


class Gadget(ABC):
    @property
    @abstractmethod
    def name(self) -> str: ...

    @property
    @abstractmethod
    def parameters(self) -> dict: ...

    @abstractmethod
    async def execute(self, **kwargs): ...

    def as_function(self) -> dict:
        return {"type": "function", "function": {"name": self.name, "parameters": self.parameters}}
"""

REMINDERS = """\
import json

from assistant.gadgets.base import Gadget


class AddReminder(Gadget):
    @property
    def name(self) -> str:
        return "add_reminder"

    @property
    def parameters(self) -> dict:
        return {"type": "object", "properties": {"text": {"type": "string"}}}

    async def execute(self, text: str) -> str:
        with open("reminders.json", "a") as handle:
            handle.write(json.dumps({"text": text}) + "\\n")
        return "added"


class ListReminders(Gadget):
    @property
    def name(self) -> str:
        return "list_reminders"

    @property
    def parameters(self) -> dict:
        return {"type": "object", "properties": {}}

    async def execute(self) -> str:
        with open("reminders.json") as handle:
            return handle.read()
"""

GADGETS = """\
from assistant.gadgets.reminders import AddReminder, ListReminders

BUILT_IN = [AddReminder()]
_extra = []


def every_gadget():
    return BUILT_IN + _extra + [ListReminders()]


def specs():
    return [gadget.as_function() for gadget in every_gadget()]
"""

ASSISTANT_LOOP = """\
from openai import AsyncOpenAI

from assistant.gadgets import specs

client = AsyncOpenAI()


async def turn(messages: list):
    return await client.chat.completions.create(model="m", messages=messages, tools=specs())
"""


def test_tool_classes_named_by_properties_in_a_concatenated_list_are_tools() -> None:
    """``@property def name(self): return "add_reminder"`` gives the class its name; the
    specs come from ``BUILT_IN + _extra + [...]``, whose first operand starts where the sum
    does. The property is what describes the tool, ``execute`` is what runs."""
    tools = {
        t.name: t
        for t in discover(
            {
                "assistant/gadgets/base.py": GADGET,
                "assistant/gadgets/reminders.py": REMINDERS,
                "assistant/gadgets/__init__.py": GADGETS,
                "assistant/loop.py": ASSISTANT_LOOP,
            }
        )
    }
    assert set(tools) == {"add_reminder", "list_reminders"}
    assert tools["add_reminder"].functions == ["assistant.gadgets.reminders.AddReminder.execute"]


# --------------------- a function re-exported by its package, named like a method below it


def test_a_function_a_package_re_exports_is_the_one_registered_not_a_method_of_its_name() -> None:
    """``from mail.tools import list_messages`` where ``mail/tools/__init__.py`` re-exports
    it from ``mail/tools/list_messages.py``, and ``mail/tools/core.py`` has a method of the
    same name: the tool is the re-exported function."""
    files = {
        "mail/tools/__init__.py": (
            "from mail.tools.core import Inbox\nfrom mail.tools.list_messages import list_messages\n"
        ),
        "mail/tools/core.py": (
            "class Inbox:\n"
            "    def list_messages(self, limit: int = 10) -> list:\n"
            "        return []\n"
        ),
        "mail/tools/list_messages.py": (
            "async def list_messages(ctx, limit: int = 10) -> str:\n"
            "    return str(ctx.deps.inbox.list_messages(limit))\n"
        ),
        "mail/agent.py": (
            "from pydantic_ai import Agent\n"
            "from mail.tools import list_messages\n\n"
            'agent = Agent("openai:gpt-4o")\n'
            "agent.tool(list_messages)\n"
        ),
    }
    (tool,) = [t for t in discover(files) if t.name == "list_messages"]
    assert tool.functions == ["mail.tools.list_messages.list_messages"]
    assert tool.path == "mail/tools/list_messages.py"


# ------------------------------------- a plugin module: one spec and one function beside it


def test_a_module_holding_one_spec_and_one_public_function_is_a_plugin_tool() -> None:
    """A folder of plugin modules a loader imports by file name, each with a function
    returning its one spec and one public function that handles the call: that function
    is the tool. A module with two candidates beside its spec names none."""
    files = {
        "kit/plugins/purge_cache.py": (
            "import shutil\n\n\n"
            "def describe():\n"
            '    return {"name": "purge_cache", "description": "Empty the cache.",\n'
            '            "parameters": {"type": "object", "properties": {}}}\n\n\n'
            "def answer(arguments):\n"
            '    shutil.rmtree(".cache")\n'
            '    return "purged"\n'
        ),
        "kit/plugins/two_doors.py": (
            "def describe():\n"
            '    return {"name": "two_doors", "parameters": {"type": "object"}}\n\n\n'
            "def left(arguments):\n    return 1\n\n\n"
            "def right(arguments):\n    return 2\n"
        ),
    }
    tools = {t.name: t for t in discover(files)}
    assert tools["purge_cache"].functions == ["kit.plugins.purge_cache.answer"]
    assert "two_doors" not in tools


CONNECTOR = """\
import os

from slack_sdk import WebClient


class ChatConnector:
    def __init__(self) -> None:
        self.client = WebClient(token=os.environ["SLACK_TOKEN"])

    def send_message(self, message: str) -> str:
        self.client.chat_postMessage(channel="#ops", text=message)
        return "sent"

    def read_messages(self, amount: int) -> list:
        return self.client.conversations_history(channel="#ops", limit=amount)["messages"]
"""

CHAT_SPECS = """\
functions = [
    {"type": "function", "function": {"name": "post_to_team_chat", "description": "Post a message.",
     "parameters": {"type": "object", "properties": {"message": {"type": "string"}}}}},
    {"type": "function", "function": {"name": "latest_team_messages", "description": "Read messages.",
     "parameters": {"type": "object", "properties": {"amount": {"type": "integer"}}}}},
]
"""

CHAT_LOOP = """\
import json

from openai import OpenAI

from hub import chat_specs
from hub.chat_connector import ChatConnector

chat = ChatConnector()
client = OpenAI()
handlers = {
    "post_to_team_chat": chat.send_message,
    "latest_team_messages": chat.read_messages,
}


def answer(messages: list) -> str:
    reply = client.chat.completions.create(
        model="gpt-4o-mini", messages=messages, tools=chat_specs.functions
    ).choices[0].message
    for call in reply.tool_calls or []:
        handler = handlers[call.function.name]
        messages.append({"role": "tool", "content": str(handler(**json.loads(call.function.arguments)))})
    return reply.content or ""
"""


def test_specs_run_by_a_dict_of_bound_methods_in_another_module_are_those_methods() -> None:
    """Spec dicts in one module, and the agent loop's ``{"post_to_team_chat":
    chat.send_message}`` in another, ``chat`` a module-level instance of a project class:
    each spec's tool is the method its key maps to, whatever that method is called."""
    tools = discover(
        {
            "hub/__init__.py": "",
            "hub/chat_connector.py": CONNECTOR,
            "hub/chat_specs.py": CHAT_SPECS,
            "main.py": CHAT_LOOP,
        }
    )
    found = {t.name: t.functions for t in tools}
    assert found == {
        "post_to_team_chat": ["hub.chat_connector.ChatConnector.send_message"],
        "latest_team_messages": ["hub.chat_connector.ChatConnector.read_messages"],
    }


def test_typed_specs_a_library_call_wraps_are_linked_to_the_dispatch_table() -> None:
    """``types.FunctionDeclaration(name="archive_note", ...)`` in each tool's module, wrapped
    by ``types.Tool(function_declarations=[...])`` and handed to ``generate_content``: each
    spec's name is looked up in the project's table of functions by name."""
    archive = """\
import os

from google.genai import types


def archive_note(folder: str, name: str) -> str:
    os.replace(os.path.join(folder, name), os.path.join(folder, "archive", name))
    return "archived"


schema_archive_note = types.FunctionDeclaration(
    name="archive_note",
    description="Move a note to the archive folder.",
    parameters=types.Schema(type=types.Type.OBJECT, properties={}),
)
"""
    lookup = """\
from google.genai import types


def read_note(folder: str, name: str) -> str:
    with open(f"{folder}/{name}") as handle:
        return handle.read()


schema_read_note = types.FunctionDeclaration(
    name="read_note",
    description="Read a note.",
    parameters=types.Schema(type=types.Type.OBJECT, properties={}),
)
"""
    config = """\
from google.genai import types

from notes.archive import schema_archive_note
from notes.lookup import schema_read_note

declared = types.Tool(function_declarations=[schema_archive_note, schema_read_note])
"""
    runner = """\
from google import genai
from google.genai import types

from notes.archive import archive_note
from notes.config import declared
from notes.lookup import read_note


def run(folder: str, call) -> str:
    table = {"archive_note": archive_note, "read_note": read_note}
    return table[call.name](folder, **call.args)


def step(contents: list) -> None:
    client = genai.Client()
    reply = client.models.generate_content(
        model="gemini-2.0-flash",
        contents=contents,
        config=types.GenerateContentConfig(tools=[declared]),
    )
    for call in reply.function_calls or []:
        run("notes", call)
"""
    found = discover(
        {
            "notes/__init__.py": "",
            "notes/archive.py": archive,
            "notes/lookup.py": lookup,
            "notes/config.py": config,
            "notes/runner.py": runner,
        }
    )
    assert {t.name: t.functions for t in found} == {
        "archive_note": ["notes.archive.archive_note"],
        "read_note": ["notes.lookup.read_note"],
    }


def test_tool_objects_a_registry_keeps_by_name_reach_a_provider_through_a_request_dict() -> None:
    """``self._entries[tool.name] = tool`` in the project's registry, its specs handed to a
    provider method that puts them in a request dict (``request["tools"] = tools``) sent as
    ``messages.create(**request)``: the registered classes are the tools."""
    base = """\
from abc import ABC, abstractmethod


class Skill(ABC):
    @property
    @abstractmethod
    def name(self) -> str: ...

    @property
    def summary(self) -> str:
        return ""

    @abstractmethod
    async def run(self, **kwargs) -> dict: ...

    def manifest(self) -> dict:
        return {"name": self.name, "description": self.summary, "input_schema": {}}
"""
    skills = """\
import httpx

from crm.skills.base import Skill


class LogCall(Skill):
    def __init__(self, account: str) -> None:
        self.account = account

    @property
    def name(self) -> str:
        return "log_call"

    async def run(self, note: str) -> dict:
        async with httpx.AsyncClient() as http:
            reply = await http.post(f"https://crm.example/{self.account}/calls", json={"n": note})
        return reply.json()


class FindContact(Skill):
    def __init__(self, account: str) -> None:
        self.account = account

    @property
    def name(self) -> str:
        return "find_contact"

    async def run(self, query: str) -> dict:
        async with httpx.AsyncClient() as http:
            reply = await http.get(f"https://crm.example/{self.account}/contacts", params={"q": query})
        return reply.json()
"""
    registry = """\
from crm.skills.base import Skill


class Shelf:
    def __init__(self) -> None:
        self._entries: dict[str, Skill] = {}

    def keep(self, skill: Skill) -> None:
        self._entries[skill.name] = skill

    def manifests(self) -> list[dict]:
        return [skill.manifest() for skill in self._entries.values()]
"""
    provider = """\
import anthropic


class Claude:
    def __init__(self) -> None:
        self.client = anthropic.AsyncAnthropic()

    async def ask(self, messages: list, tools: list | None = None) -> object:
        request = {"model": "claude", "max_tokens": 1024, "messages": messages}
        if tools:
            request["tools"] = tools
        return await self.client.messages.create(**request)
"""
    agent = """\
from crm.provider import Claude
from crm.registry import Shelf
from crm.skills.calls import FindContact, LogCall


class Assistant:
    def __init__(self, account: str) -> None:
        self.llm = Claude()
        self.shelf = Shelf()
        self.shelf.keep(LogCall(account))
        self.shelf.keep(FindContact(account))

    async def turn(self, messages: list) -> object:
        return await self.llm.ask(messages, tools=self.shelf.manifests())
"""
    found = discover(
        {
            "crm/__init__.py": "",
            "crm/skills/__init__.py": "",
            "crm/skills/base.py": base,
            "crm/skills/calls.py": skills,
            "crm/registry.py": registry,
            "crm/provider.py": provider,
            "crm/agent.py": agent,
        }
    )
    assert {t.name: t.functions for t in found} == {
        "log_call": ["crm.skills.calls.LogCall.run"],
        "find_contact": ["crm.skills.calls.FindContact.run"],
    }


SHELL_TOOLS = """\
import subprocess


class HostTool:
    name: str
    description: str

    def schema(self) -> dict:
        return {"type": "object", "properties": {}}

    def run(self, **kwargs) -> dict:
        raise NotImplementedError


class RestartService(HostTool):
    name = "restart_service"
    description = "Restart a systemd service."

    def run(self, unit: str) -> dict:
        done = subprocess.run(["systemctl", "restart", unit], capture_output=True, text=True)
        return {"ok": done.returncode == 0}


class DiskUsage(HostTool):
    name = "disk_usage"
    description = "Show the disk usage."

    def run(self) -> dict:
        done = subprocess.run(["df", "-h"], capture_output=True, text=True)
        return {"out": done.stdout}


HOST_TOOLS = [RestartService(), DiskUsage()]
"""


def test_the_elements_a_spec_writer_describes_are_tools_wherever_the_specs_go() -> None:
    """``[{"name": t.name, "description": t.description, "parameters": t.schema()} for t in
    HOST_TOOLS]``, serialised into a prompt sent by the project's own HTTP call: the
    function writes a tool spec for each element, so each element's class is a tool."""
    planner = """\
import json

import requests

from ops.tools import HOST_TOOLS


def tool_specs() -> list[dict]:
    return [
        {"name": t.name, "description": t.description, "parameters": t.schema()}
        for t in HOST_TOOLS
    ]


def plan(question: str) -> str:
    prompt = f"Tools:\\n{json.dumps(tool_specs())}\\nQuestion: {question}"
    reply = requests.post("http://localhost:11434/api/generate", json={"prompt": prompt})
    return reply.json()["response"]
"""
    found = discover(
        {"ops/__init__.py": "", "ops/tools.py": SHELL_TOOLS, "ops/planner.py": planner}
    )
    assert {t.name: t.functions for t in found} == {
        "restart_service": ["ops.tools.RestartService.run"],
        "disk_usage": ["ops.tools.DiskUsage.run"],
    }


def test_a_decorator_handing_functions_to_a_manager_that_writes_their_specs_registers_tools() -> (
    None
):
    """``@skill(description, parameters)`` hands each function to ``desk.add(name=...,
    handler=func, ...)``, which keeps it under its name and writes a tool spec (name,
    description, parameters) for the prompt: the decorated functions are tools; a
    decorator of the same shape that keeps routes and writes no spec registers none."""
    desk = """\
class Desk:
    def __init__(self) -> None:
        self.handlers = {}
        self.specs = []

    def add(self, name, handler, description, parameters) -> None:
        self.handlers[name] = handler
        self.specs.append({"name": name, "description": description, "parameters": parameters})

    def run(self, name, **arguments):
        return self.handlers[name](**arguments)


desk = Desk()


def skill(description, parameters):
    def keep(func):
        desk.add(name=func.__name__, handler=func, description=description, parameters=parameters)
        return func

    return keep
"""
    routes = """\
class Router:
    def __init__(self) -> None:
        self.paths = {}

    def add(self, path, handler) -> None:
        self.paths[path] = handler


router = Router()


def route(path):
    def keep(func):
        router.add(path=path, handler=func)
        return func

    return keep
"""
    skills = """\
import requests

from bot.desk import skill
from bot.routes import route


@skill("Cancel an order.", {"type": "object", "properties": {"order_id": {"type": "string"}}})
def cancel_order(order_id: str) -> str:
    return requests.delete(f"https://shop.example/orders/{order_id}").text


@route("/health")
def health() -> str:
    return "ok"
"""
    found = discover(
        {
            "bot/__init__.py": "",
            "bot/desk.py": desk,
            "bot/routes.py": routes,
            "bot/skills.py": skills,
        }
    )
    assert {t.name: t.functions for t in found} == {"cancel_order": ["bot.skills.cancel_order"]}


PLUGIN_SHELF = """\
import importlib.util
import os


class PluginShelf:
    def __init__(self, folder: str) -> None:
        self.folder = folder
        self.specs = []
        self.runners = {}
        self.greeters = []
        self.load()

    def _import(self, stem: str, path: str):
        spec = importlib.util.spec_from_file_location(f"plugin_{stem}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    def load(self) -> None:
        for filename in sorted(os.listdir(self.folder)):
            if not filename.endswith(".py") or filename.startswith("_"):
                continue
            stem = filename[:-3]
            module = self._import(stem, os.path.join(self.folder, filename))
            greet = getattr(module, "greeting", None)
            if greet is not None:
                self.greeters.append(greet)
            describe = getattr(module, "describe", None)
            if describe is not None:
                spec_fn = describe(self)
            else:
                spec_fn = getattr(module, stem)
            run_fn = getattr(module, "run")
            self.specs.append(spec_fn)
            self.runners[stem] = make_runner(run_fn)

    def offered(self) -> list:
        return list(self.specs)


def make_runner(fn):
    def runner(arguments: dict) -> str:
        return fn(**arguments)

    return runner
"""

PLUGIN_AGENT = """\
import os

import ollama

from bot.shelf import PluginShelf

SHELF = PluginShelf(os.path.join(os.path.dirname(__file__), "plugins"))


def answer(question: str) -> str:
    reply = ollama.chat(
        model="llama3.1",
        messages=[{"role": "user", "content": question}],
        tools=SHELF.offered(),
    )
    for call in reply.message.tool_calls or []:
        return SHELF.runners[call.function.name](call.function.arguments)
    return reply.message.content
"""

FORECAST_PLUGIN = """\
import requests


def forecast(city: str) -> str:
    \"\"\"Tomorrow's forecast for a city.\"\"\"
    ...


def run(city: str) -> str:
    return requests.get("https://weather.example/forecast", params={"city": city}).text
"""

PAGE_PLUGIN = """\
import requests


def page_oncall(message: str) -> str:
    \"\"\"Page whoever is on call.\"\"\"
    ...


def greeting() -> str:
    return "I can page the on-call engineer."


def run(message: str) -> str:
    return requests.post("https://pager.example/v1/pages", json={"text": message}).text
"""

BOOKING_PLUGIN = """\
import requests


def describe(shelf):
    def book_room(room: str, hour: int) -> str:
        \"\"\"Book a meeting room for an hour.\"\"\"
        ...

    return book_room


def run(room: str, hour: int) -> str:
    return requests.post("https://rooms.example/bookings", json={"room": room, "hour": hour}).text
"""

TEMPLATE_PLUGIN = """\
def template(value: str) -> str:
    \"\"\"Copy me to write a plugin.\"\"\"
    ...


def run(value: str) -> str:
    return value
"""


def test_the_modules_a_loader_takes_from_a_plugin_folder_are_tools_run_by_the_kept_function() -> (
    None
):
    """A loader lists a folder, loads each file as a module, hands the function named like
    the file (or the one its ``describe`` hook returns) to the model and keeps ``run`` under
    the file's name for the dispatch: each plugin is a tool named by its file and run by its
    ``run``; a private template and what the loader takes for greetings are none."""
    found = discover(
        {
            "bot/__init__.py": "",
            "bot/shelf.py": PLUGIN_SHELF,
            "bot/agent.py": PLUGIN_AGENT,
            "bot/plugins/forecast.py": FORECAST_PLUGIN,
            "bot/plugins/page_oncall.py": PAGE_PLUGIN,
            "bot/plugins/rooms.py": BOOKING_PLUGIN,
            "bot/plugins/_template.py": TEMPLATE_PLUGIN,
        }
    )
    assert {t.name: t.functions for t in found} == {
        "forecast": ["bot.plugins.forecast.run"],
        "page_oncall": ["bot.plugins.page_oncall.run"],
        "rooms": ["bot.plugins.rooms.run"],
    }


def test_a_tool_call_written_as_a_dict_is_no_tool_spec() -> None:
    """``{"name": "send_note", "parameters": {"to": address}}`` handed to the dispatch is a
    call of a tool, not its spec: its parameters are values, not a JSON Schema, so the
    function of that name is not made a tool by it."""
    relay = """\
def send_note(to: str, text: str) -> str:
    \"\"\"Write a note.\"\"\"
    return f"{to}: {text}"


def forward(dispatch, address: str) -> str:
    return dispatch({"name": "send_note", "parameters": {"to": address, "text": "hello"}})
"""
    assert discover({"relay.py": relay}) == []


def test_tools_reach_a_backend_chosen_at_run_time_through_a_loop_over_kept_entries() -> None:
    """``self._send = self._to_ollama if local else self._to_openai`` picks the backend the
    specs go to, and ``offered()`` hands on ``entry["fn"]`` for each entry it walks: the
    functions kept in the entries reach the model either way."""
    agent = """\
import ollama
import openai


def lookup_order(order_id: str) -> str:
    \"\"\"Read an order.\"\"\"
    return order_id


def cancel_order(order_id: str) -> str:
    \"\"\"Cancel an order.\"\"\"
    return order_id


class Clerk:
    def __init__(self, local: bool) -> None:
        self._entries = [{"fn": lookup_order, "risky": False}, {"fn": cancel_order, "risky": True}]
        self._send = self._to_ollama if local else self._to_openai

    def offered(self) -> list:
        out = []
        for entry in self._entries:
            out.append(entry["fn"])
        return out

    def _to_ollama(self, prompt: str, tools: list):
        return ollama.chat(model="llama3.1", messages=[{"role": "user", "content": prompt}], tools=tools)

    def _to_openai(self, prompt: str, tools: list):
        return openai.OpenAI().responses.create(model="gpt-4.1", input=prompt)

    def ask(self, prompt: str):
        return self._send(prompt, tools=self.offered())
"""
    found = discover({"shop/__init__.py": "", "shop/clerk.py": agent})
    assert sorted(t.name for t in found) == ["cancel_order", "lookup_order"]


def test_specs_sent_in_the_json_body_of_a_rest_request_to_a_model_reach_it() -> None:
    """An agent that calls Ollama's REST API itself: ``body["tools"] = [...]`` sent as
    ``httpx.AsyncClient.post(url, json=body)``. The body's ``tools`` are followed back like
    a model SDK's ``tools=``: the job classes whose ``describe()`` writes those specs are
    tools. A POST whose body carries no ``tools`` makes none."""
    jobs = """\
import httpx


class Job:
    title = ""
    summary = ""
    fields: dict = {}

    def describe(self) -> dict:
        return {"name": self.title, "description": self.summary, "parameters": self.fields}

    async def perform(self, **kwargs) -> str:
        raise NotImplementedError


class RestartPod(Job):
    title = "restart_pod"
    summary = "Restart a pod."
    fields = {"type": "object", "properties": {"pod": {"type": "string"}}}

    async def perform(self, pod: str) -> str:
        async with httpx.AsyncClient() as client:
            return (await client.delete(f"https://k8s.internal/pods/{pod}")).text


class PodLogs(Job):
    title = "pod_logs"
    summary = "Read a pod's logs."
    fields = {"type": "object", "properties": {"pod": {"type": "string"}}}

    async def perform(self, pod: str) -> str:
        async with httpx.AsyncClient() as client:
            return (await client.get(f"https://k8s.internal/pods/{pod}/logs")).text
"""
    brain = """\
import httpx

from ops.jobs import PodLogs, RestartPod

JOBS = [RestartPod(), PodLogs()]


async def send(client: httpx.AsyncClient, messages: list, jobs: list) -> dict:
    body = {"model": "llama3.1", "messages": messages, "stream": False}
    if jobs:
        body["tools"] = [{"type": "function", "function": j.describe()} for j in jobs]
    reply = await client.post("http://localhost:11434/api/chat", json=body)
    return reply.json()


async def think(question: str) -> dict:
    async with httpx.AsyncClient() as client:
        await client.post("https://audit.internal/events", json={"question": question})
        return await send(client, [{"role": "user", "content": question}], JOBS)
"""
    found = discover({"ops/__init__.py": "", "ops/jobs.py": jobs, "ops/brain.py": brain})
    assert {t.name: t.functions for t in found} == {
        "restart_pod": ["ops.jobs.RestartPod.perform"],
        "pod_logs": ["ops.jobs.PodLogs.perform"],
    }


def test_a_registry_method_listing_each_kept_tools_own_spec_describes_those_tools() -> None:
    """``[action.as_spec() for action in self._actions.values()]``, with ``as_spec()`` writing
    ``{"name": self.name, "description": ..., "parameters": ...}`` and each action naming
    itself by a property: the registry describes what it keeps to whatever reads the specs
    (here a prompt), so each action registered is a tool."""
    actions = """\
import subprocess
from abc import ABC, abstractmethod


class Action(ABC):
    @property
    @abstractmethod
    def name(self) -> str: ...

    @property
    def summary(self) -> str:
        return ""

    @abstractmethod
    def perform(self, **kwargs) -> dict: ...

    def as_spec(self) -> dict:
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.summary, "parameters": {}},
        }


class Shutdown(Action):
    @property
    def name(self) -> str:
        return "shutdown_machine"

    def perform(self, delay: int = 0) -> dict:
        subprocess.run(["shutdown", "-h", f"+{delay}"], check=False)
        return {"ok": True}


class Uptime(Action):
    @property
    def name(self) -> str:
        return "uptime"

    def perform(self) -> dict:
        return {"out": subprocess.run(["uptime"], capture_output=True, text=True).stdout}
"""
    shelf = """\
import json

from desk.actions import Action, Shutdown, Uptime


class Shelf:
    def __init__(self) -> None:
        self._actions: dict[str, Action] = {}

    def keep(self, action: Action) -> None:
        self._actions[action.name] = action

    def specs(self) -> list[dict]:
        return [action.as_spec() for action in self._actions.values()]

    def run(self, name: str, **arguments) -> dict:
        return self._actions[name].perform(**arguments)


def build() -> Shelf:
    shelf = Shelf()
    shelf.keep(Shutdown())
    shelf.keep(Uptime())
    return shelf


def prompt(shelf: Shelf) -> str:
    return "You may call these tools:\\n" + json.dumps(shelf.specs())
"""
    found = discover({"desk/__init__.py": "", "desk/actions.py": actions, "desk/shelf.py": shelf})
    assert {t.name: t.functions for t in found} == {
        "shutdown_machine": ["desk.actions.Shutdown.perform"],
        "uptime": ["desk.actions.Uptime.perform"],
    }


def test_methods_a_marker_decorator_flags_are_tools_when_a_scan_of_dir_keeps_them() -> None:
    """``@exposed`` only sets ``fn.exposed = True``; a toolbox walks ``dir(obj)``, keeps
    each method with ``hasattr(method, "exposed")``, wraps it with ``functools.wraps`` and
    has ``describe(func)`` write its spec from ``func.__name__`` for the Responses API. The
    flagged methods are tools; an unflagged method of the same object is none."""
    toolbox = """\
import functools
import inspect

from openai import OpenAI


def exposed(fn):
    fn.exposed = True
    return fn


def describe(func) -> dict:
    return {
        "type": "function",
        "name": func.__name__,
        "description": func.__doc__ or "",
        "parameters": {"type": "object", "properties": {}},
    }


class Toolbox:
    def __init__(self) -> None:
        self._calls = {}
        self._specs = {}

    def take(self, func) -> None:
        @functools.wraps(func)
        async def call(*args, **kwargs):
            return await func(*args, **kwargs)

        self._specs[call.__name__] = describe(call)
        self._calls[call.__name__] = call

    def take_all(self, obj) -> None:
        for attr in dir(obj):
            method = getattr(obj, attr)
            if callable(method) and hasattr(method, "exposed"):
                self.take(method)

    def ask(self, names: list, prompt: str):
        specs = [self._specs[name] for name in names]
        return OpenAI().responses.create(model="gpt-4.1", input=prompt, tools=specs)
"""
    classroom = """\
import httpx

from duck.toolbox import Toolbox, exposed


class Classroom:
    @exposed
    async def post_grade(self, student: str, grade: str) -> str:
        \"\"\"Post a student's grade.\"\"\"
        return (await httpx.AsyncClient().post("https://lms.example/grades", json={"s": student})).text

    @exposed
    async def roster(self) -> str:
        \"\"\"Read the roster.\"\"\"
        return (await httpx.AsyncClient().get("https://lms.example/roster")).text

    async def sync_calendar(self) -> str:
        return (await httpx.AsyncClient().put("https://lms.example/calendar")).text


def build() -> Toolbox:
    box = Toolbox()
    box.take_all(Classroom())
    return box
"""
    found = discover(
        {"duck/__init__.py": "", "duck/toolbox.py": toolbox, "duck/classroom.py": classroom}
    )
    assert {t.name: t.functions for t in found} == {
        "post_grade": ["duck.classroom.Classroom.post_grade"],
        "roster": ["duck.classroom.Classroom.roster"],
    }


def test_spec_variables_a_loader_reads_from_each_plugin_module_name_the_tools_it_keeps() -> None:
    """``module = importlib.import_module(stem)`` for each file of the folder, then
    ``self.specs.append(module.SPEC)`` and ``self.handlers[...] = module.act``, the specs
    handed to the model at module level: each plugin is a tool named by its spec and run by
    its ``act``, the function the loader keeps, not the module's other public function."""
    belt = """\
import importlib
import os


class Belt:
    def __init__(self) -> None:
        self.specs = []
        self.handlers = {}

    def load(self) -> None:
        for file in os.listdir(os.path.dirname(__file__)):
            if not file.endswith(".py") or file.startswith("_"):
                continue
            module = importlib.import_module(f"belt.{file[:-3]}")
            self.specs.append(module.SPEC)
            self.handlers[module.SPEC["function"]["name"]] = module.act
"""
    main = """\
import ollama

from belt import Belt

belt = Belt()
belt.load()
reply = ollama.chat(model="llama3.1", messages=[{"role": "user", "content": "hi"}], tools=belt.specs)
"""

    def plugin(name: str, body: str) -> str:
        return (
            "import httpx\n\n"
            f'SPEC = {{"type": "function", "function": {{"name": "{name}", "description": "",'
            ' "parameters": {"type": "object", "properties": {}}}}\n\n\n'
            f"def act(args):\n    {body}\n\n\n"
            "def units():\n    return 'metric'\n"
        )

    found = discover(
        {
            "belt/__init__.py": belt,
            "belt/notes.py": plugin("save_note", 'return httpx.post("https://n.example").text'),
            "belt/weather.py": plugin("weather", 'return httpx.get("https://w.example").text'),
            "main.py": main,
        }
    )
    assert {t.name: t.functions for t in found} == {
        "save_note": ["belt.notes.act"],
        "weather": ["belt.weather.act"],
    }


# ------------------------- specs read from a field of the object an attribute holds

KIT = """\
import inspect


def describe(fn) -> dict:
    params = {name: {"type": "string"} for name in inspect.signature(fn).parameters}
    return {"type": "function", "name": fn.__name__, "description": fn.__doc__ or "",
            "parameters": {"type": "object", "properties": params}}


class Kit:
    def __init__(self) -> None:
        self.specs: list[dict] = []
        self._runners = {}

    def add(self, fn):
        self._runners[fn.__name__] = fn
        self.specs.append(describe(fn))
        return fn

    def runner(self, name: str):
        return self._runners[name]
"""

KIT_ASSISTANT = """\
import json

from openai import OpenAI

from garden.kit import Kit


class Assistant:
    def __init__(self, kit: Kit | None = None) -> None:
        self.client = OpenAI()
        self._kit = kit

    def step(self, history: list) -> list:
        answer = self.client.responses.create(
            model="gpt-4.1", input=history, tools=self._kit.specs if self._kit else None
        )
        for item in answer.output:
            if item.type == "function_call":
                history.append(self._kit.runner(item.name)(**json.loads(item.arguments)))
        return history
"""

KIT_ACTIONS = """\
import httpx

from garden.kit import Kit

garden_kit = Kit()
unused_kit = Kit()


@garden_kit.add
def water_bed(bed: str) -> str:
    \"\"\"Start the sprinkler of a bed.\"\"\"
    return httpx.post(f"https://garden.example/beds/{bed}/water").text


@garden_kit.add
def bed_moisture(bed: str) -> str:
    \"\"\"Read a bed's moisture.\"\"\"
    return httpx.get(f"https://garden.example/beds/{bed}/moisture").text
"""


def test_specs_read_from_a_field_of_the_object_an_attribute_holds_are_followed() -> None:
    """``tools=self._kit.specs``, where ``self._kit`` holds a project ``Kit`` (its parameter's
    annotation says so) whose decorator method appends each function's spec to ``specs``:
    the functions ``@garden_kit.add`` decorates are the tools."""
    tools = discover(
        {
            "garden/kit.py": KIT,
            "garden/assistant.py": KIT_ASSISTANT,
            "garden/actions.py": KIT_ACTIONS,
        }
    )
    by_name = {t.name: t for t in tools}
    assert {"water_bed", "bed_moisture"} <= set(by_name)
    assert by_name["water_bed"].functions == ["garden.actions.water_bed"]


PLUGIN_RECORDS_LOADER = """\
import importlib
import pkgutil


def load_tools():
    registry = {}
    for _, module_name, _ in pkgutil.iter_modules(__path__):
        mod = importlib.import_module(f".{module_name}", package=__name__)
        if not hasattr(mod, "tool"):
            continue
        name = mod.tool["function"].__name__
        registry[name] = mod.tool
    return registry
"""

PLUGIN_RECORD_BOOK = """\
import httpx


def book_court(court: str, hour: int) -> str:
    return httpx.post("https://courts.example/bookings", json={"court": court, "hour": hour}).text


tool = {
    "name": "book_court",
    "function": book_court,
    "description": "Book a tennis court",
    "parameters": {"court": {"type": "string"}, "hour": {"type": "integer"}},
}
"""

PLUGIN_RECORD_FREE = """\
import httpx


def free_courts(hour: int) -> str:
    return httpx.get("https://courts.example/free", params={"hour": hour}).text


tool = {
    "name": "free_courts",
    "function": free_courts,
    "description": "Courts free at an hour",
    "parameters": {"hour": {"type": "integer"}},
}
"""

PLUGIN_RECORD_CHAT = """\
from ollama import chat

from club.plugins import load_tools

AVAILABLE = load_tools()


def answer(messages: list) -> str:
    callables = [entry["function"] for entry in AVAILABLE.values()]
    reply = chat(model="llama3.1", messages=messages, tools=callables)
    return reply.message.content
"""


def test_records_of_a_plugin_folder_kept_under_computed_keys_are_tools() -> None:
    """Each module of a folder a loader imports gives its ``tool`` record, kept in a dict
    under a computed key (``registry[name] = mod.tool``); the functions of those records
    reach the model: each record is a tool named by its name, run by its function."""
    tools = discover(
        {
            "club/__init__.py": "",
            "club/plugins/__init__.py": PLUGIN_RECORDS_LOADER,
            "club/plugins/book.py": PLUGIN_RECORD_BOOK,
            "club/plugins/free.py": PLUGIN_RECORD_FREE,
            "club/chat.py": PLUGIN_RECORD_CHAT,
        }
    )
    assert sorted((t.name, t.functions[0]) for t in tools) == [
        ("book_court", "club.plugins.book.book_court"),
        ("free_courts", "club.plugins.free.free_courts"),
    ]
