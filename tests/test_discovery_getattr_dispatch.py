"""A hand-written tool loop that runs the model's chosen function by looking its name up on
an object of the project (``func = getattr(self.toolbox, name); await func(**args)``): each
spec the loop hands the model is run by the method of that name on that object's class,
wherever the object comes from (an attribute the agent builds, a helper made on the spot)."""

from __future__ import annotations

from tests.test_tool_discovery import discover

TOOLBOX = """\
import httpx


class Toolbox:
    def __init__(self, token: str):
        self.http = httpx.AsyncClient(headers={"Authorization": token})

    async def list_channels(self, guild_id: int) -> str:
        return (await self.http.get(f"/guilds/{guild_id}/channels")).text

    async def delete_channel(self, channel_id: int) -> str:
        return (await self.http.delete(f"/channels/{channel_id}")).text
"""

ROLES = """\
import httpx


class RoleDesk:
    def __init__(self, token: str):
        self.token = token

    async def assign_role(self, member_id: int, role_id: int) -> str:
        async with httpx.AsyncClient() as http:
            return (await http.put(f"/members/{member_id}/roles/{role_id}")).text
"""

AGENT = """\
import json

from openai import AsyncOpenAI

from toolbox import Toolbox

SPECS = [
    {"type": "function", "function": {"name": "list_channels", "description": "List channels.",
     "parameters": {"type": "object", "properties": {"guild_id": {"type": "integer"}}}}},
    {"type": "function", "function": {"name": "delete_channel", "description": "Delete a channel.",
     "parameters": {"type": "object", "properties": {"channel_id": {"type": "integer"}}}}},
    {"type": "function", "function": {"name": "assign_role", "description": "Give a member a role.",
     "parameters": {"type": "object", "properties": {"member_id": {"type": "integer"}}}}},
]


class ServerAgent:
    def __init__(self, token: str):
        self.token = token
        self.client = AsyncOpenAI()
        self.toolbox = Toolbox(token)

    async def answer(self, question: str) -> str:
        messages = [{"role": "user", "content": question}]
        reply = await self.client.chat.completions.create(
            model="gpt-4o", messages=messages, tools=SPECS
        )
        for call in reply.choices[0].message.tool_calls or []:
            args = json.loads(call.function.arguments)
            messages.append({"role": "tool", "content": await self._run(call.function.name, args)})
        return str(messages[-1]["content"])

    async def _run(self, name: str, args: dict) -> str:
        if hasattr(self.toolbox, name):
            func = getattr(self.toolbox, name)
            return await func(**args)
        if name in ["assign_role"]:
            from roles import RoleDesk

            desk = RoleDesk(self.token)
            return await getattr(desk, name)(**args)
        return f"unknown tool {name}"
"""

# Another module branches on a tool's name only to read its arguments from a typed command:
# not where the model's call runs.
FALLBACK = """\
import re


def parse_command(text: str) -> dict:
    function_name = "delete_channel" if text.startswith("delete") else "list_channels"
    args = {}
    if function_name == "delete_channel":
        args["channel_id"] = int(re.findall(r"[0-9]+", text)[0])
    return {"name": function_name, "args": args}
"""


def test_each_spec_is_run_by_the_method_of_its_name_on_the_object_the_loop_looks_it_up_on() -> None:
    tools = discover(
        {"toolbox.py": TOOLBOX, "roles.py": ROLES, "agent.py": AGENT, "fallback.py": FALLBACK}
    )
    runs = {t.name: t.functions[0] for t in tools}
    assert runs == {
        "list_channels": "toolbox.Toolbox.list_channels",
        "delete_channel": "toolbox.Toolbox.delete_channel",
        "assign_role": "roles.RoleDesk.assign_role",
    }


def test_a_getattr_whose_answer_is_never_called_runs_no_spec() -> None:
    settings = AGENT.replace(
        "            func = getattr(self.toolbox, name)\n            return await func(**args)\n",
        "            return str(getattr(self.toolbox, name))\n",
    )
    tools = discover({"toolbox.py": TOOLBOX, "roles.py": ROLES, "agent.py": settings})
    assert {t.name for t in tools} == {"assign_role"}
