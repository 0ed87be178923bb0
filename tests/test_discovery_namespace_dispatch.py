"""Specs a model is handed, answered by looking the function of the call's name up in a
module's own namespace (``eval(call.name)(**args)``, ``globals()[call.name](**args)``),
with the specs reaching the model through a parameter's default and a star import."""

from __future__ import annotations

from tests.test_tool_discovery import discover

WATER = """\
import httpx
from google.genai import types

water_tool = types.Tool(
    function_declarations=[
        types.FunctionDeclaration(
            name="water_bed",
            description="Open the valve of a bed",
            parameters=types.Schema(type=types.Type.OBJECT, properties={"bed": types.Schema(type=types.Type.STRING)}),
        )
    ]
)


def water_bed(bed: str) -> str:
    return httpx.post(f"http://valves.local/beds/{bed}/open").text
"""

MOISTURE = """\
import httpx
from google.genai import types

moisture_tool = types.Tool(
    function_declarations=[
        types.FunctionDeclaration(
            name="bed_moisture",
            description="How wet a bed is",
            parameters=types.Schema(type=types.Type.OBJECT, properties={"bed": types.Schema(type=types.Type.STRING)}),
        )
    ]
)


def bed_moisture(bed: str) -> str:
    return httpx.get(f"http://valves.local/beds/{bed}/moisture").text
"""

TOOLS = """\
from .moisture import *
from .water import *

ALL_TOOLS = [water_tool, moisture_tool]


def run_tool(name: str, args: dict):
    return eval(name)(**args)
"""

HANDLER = """\
from google import genai
from google.genai import types

import garden.tools as tools

client = genai.Client()


def answer(contents: list, toolset=tools.ALL_TOOLS) -> str:
    config = types.GenerateContentConfig(tools=toolset)
    reply = client.models.generate_content(model="gemini-2.5-flash", contents=contents, config=config)
    for call in reply.function_calls or []:
        contents.append(str(tools.run_tool(call.name, dict(call.args))))
    return reply.text
"""

GLOBALS = """\
import httpx
from openai import OpenAI

client = OpenAI()
SPECS = [
    {"type": "function", "function": {"name": "restart_pump", "parameters": {"type": "object", "properties": {}}}},
]


def restart_pump() -> str:
    return httpx.post("http://pump.local/restart").text


def turn(messages: list) -> None:
    reply = client.chat.completions.create(model="gpt-4o", messages=messages, tools=SPECS)
    for call in reply.choices[0].message.tool_calls:
        messages.append(globals()[call.function.name]())
"""


def test_a_function_looked_up_by_the_calls_name_in_the_modules_namespace_is_the_tool() -> None:
    tools = discover(
        {
            "garden/__init__.py": "",
            "garden/water.py": WATER,
            "garden/moisture.py": MOISTURE,
            "garden/tools.py": TOOLS,
            "garden/handler.py": HANDLER,
        }
    )
    assert sorted((t.name, t.functions[0]) for t in tools) == [
        ("bed_moisture", "garden.moisture.bed_moisture"),
        ("water_bed", "garden.water.water_bed"),
    ]


def test_a_function_looked_up_in_globals_by_the_calls_name_is_the_tool() -> None:
    tools = discover({"pump/loop.py": GLOBALS})
    assert [(t.name, t.functions[0]) for t in tools] == [("restart_pump", "pump.loop.restart_pump")]
