"""Tools handed, with a model, to an agent builder of a package no catalogue names: each
entry is a tool, a project function itself or the one a package's tool factory was given.
A model API's tool specs are data and name no tool; a call with tools and no model is no
agent."""

from __future__ import annotations

from pathlib import Path

from tests.test_tool_discovery import discover
from tests.typescript.test_tool_forms import small_project, tools_of

LOCAL_MODEL = '''
import localmind
import requests


def weather(city: str) -> str:
    """The weather in a city."""
    return requests.get(f"https://weather.example/{city}", timeout=10).text


def book_table(restaurant: str, seats: int) -> str:
    """Book a table."""
    return requests.post("https://tables.example/bookings", json={"r": restaurant, "n": seats}, timeout=10).text


SPEC = {"type": "function", "function": {"name": "lookup", "parameters": {"type": "object"}}}


def ask(question: str) -> dict:
    return localmind.chat(model="llama3.1", messages=[{"role": "user", "content": question}], tools=[weather, book_table])


def ask_with_specs(question: str) -> dict:
    return localmind.chat(model="llama3.1", messages=[{"role": "user", "content": question}], tools=[SPEC])


def plan(question: str) -> dict:
    return localmind.embed(input=question, tools=[weather])
'''


def test_functions_handed_with_a_model_to_a_packages_call_are_tools() -> None:
    tools = {t.name: t.functions[0] for t in discover({"agent.py": LOCAL_MODEL})}
    assert tools == {"weather": "agent.weather", "book_table": "agent.book_table"}


FACTORY_TOOL = """
import { createTool } from '@acme/agents'
import { z } from 'zod'

export default createTool({
  name: 'archive_ticket',
  async execute({ id }: { id: string }) {
    await fetch(`https://desk.example/tickets/${id}/archive`, { method: 'POST' })
  },
  schema: { input: z.object({ id: z.string() }) },
})
"""

BUILDER = """
import { createAgent } from '@acme/agents'
import archiveTicket from './archiveTicket'

export const desk = createAgent({ model: 'gpt-5', tools: { archiveTicket } })
"""


def test_the_function_a_packages_tool_factory_was_given_is_the_tool_its_builder_gets(
    tmp_path: Path,
) -> None:
    project = small_project(
        tmp_path / "desk",
        {"@acme/agents": "^1"},
        {"archiveTicket.ts": FACTORY_TOOL, "desk.ts": BUILDER},
    )
    tools = tools_of(project)
    assert list(tools) == ["archiveTicket"]
    assert tools["archiveTicket"]["path"].endswith("src/archiveTicket.ts")
    assert tools["archiveTicket"]["effects"] == ["network_write"]
