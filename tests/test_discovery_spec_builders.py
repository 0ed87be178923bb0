"""Tool specs a library makes of a project's class: ``openai.pydantic_function_tool(Model)``
(named after the class unless given ``name=``) and LangChain's ``convert_to_openai_tool(
Model)``. A class whose spec so made reaches a model is a tool: run by the method the
dispatch calls on it, or, when it only models the arguments, by what the dispatch runs
for its name."""

from __future__ import annotations

from tests.test_tool_discovery import discover

BASE = """\
from pydantic import BaseModel


class Context:
    def __init__(self, ledger):
        self.ledger = ledger


class Step(BaseModel):
    async def call(self, context: Context) -> str:
        raise NotImplementedError
"""

STEPS = """\
import httpx

from budget.base import Context, Step


class LogSpend(Step):
    \"\"\"Record money spent.\"\"\"

    amount: float
    what: str

    async def call(self, context: Context) -> str:
        httpx.post("https://ledger.example/spend", json={"amount": self.amount, "what": self.what})
        return "logged"


class ListSpend(Step):
    \"\"\"List this month's spending.\"\"\"

    async def call(self, context: Context) -> str:
        return httpx.get("https://ledger.example/spend").text
"""

AGENT = """\
import json

from openai import AsyncOpenAI, pydantic_function_tool

from budget.base import Context, Step
from budget.steps import ListSpend, LogSpend

STEPS: list[type[Step]] = [LogSpend, ListSpend]
BY_NAME = {cls.__name__: cls for cls in STEPS}


class Assistant:
    def __init__(self, client: AsyncOpenAI):
        self.client = client
        self.specs = [pydantic_function_tool(cls) for cls in STEPS]

    async def answer(self, messages: list, context: Context) -> str:
        reply = await self.client.chat.completions.create(
            model="gpt-4o-mini", messages=messages, tools=self.specs
        )
        call = reply.choices[0].message.tool_calls[0]
        step = BY_NAME[call.function.name](**json.loads(call.function.arguments))
        return await step.call(context)
"""


def test_classes_made_specs_by_pydantic_function_tool_are_tools() -> None:
    tools = discover({"budget/base.py": BASE, "budget/steps.py": STEPS, "budget/agent.py": AGENT})
    by_name = {t.name: t.functions for t in tools}
    assert by_name == {
        "LogSpend": ["budget.steps.LogSpend.call"],
        "ListSpend": ["budget.steps.ListSpend.call"],
    }


ARGUMENT_MODELS = """\
import httpx
from langchain_core.utils.function_calling import convert_to_openai_tool
from openai import OpenAI, pydantic_function_tool
from pydantic import BaseModel

client = OpenAI()


class CancelBooking(BaseModel):
    booking_id: str


class FindSlots(BaseModel):
    day: str


class Verdict(BaseModel):
    ok: bool


def cancel_booking(booking_id: str) -> str:
    return httpx.delete(f"https://bookings.example/{booking_id}").text


def find_slots(day: str) -> str:
    return httpx.get("https://bookings.example/slots", params={"day": day}).text


def step(messages: list) -> str:
    tools = [pydantic_function_tool(CancelBooking, name="cancel"), convert_to_openai_tool(FindSlots)]
    reply = client.chat.completions.create(model="gpt-4o", messages=messages, tools=tools)
    call = reply.choices[0].message.tool_calls[0]
    if call.function.name == "cancel":
        return cancel_booking(**call.function.parsed_arguments.model_dump())
    if call.function.name == "FindSlots":
        return find_slots(**call.function.parsed_arguments.model_dump())
    verdict = client.chat.completions.parse(model="gpt-4o", messages=messages, response_format=Verdict)
    return str(verdict)
"""


def test_a_model_of_the_arguments_names_the_tool_its_dispatch_runs() -> None:
    """``pydantic_function_tool(CancelBooking, name="cancel")``: the tool is ``cancel``, run
    by the function its branch calls; ``convert_to_openai_tool(FindSlots)`` names its tool
    after the class. A model given only as the answer's format is no tool."""
    tools = discover({"desk/agent.py": ARGUMENT_MODELS})
    by_name = {t.name: t.functions[:1] for t in tools}
    assert by_name == {
        "cancel": ["desk.agent.cancel_booking"],
        "FindSlots": ["desk.agent.find_slots"],
    }
