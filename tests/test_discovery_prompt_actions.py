"""Actions a prompt lists for the model to answer with, parsed from its text and run by the
project's branches on their names: each is a tool, when the prompt reaches a model and the
branches are run by what asks it. A command line's help text listing its sub-commands
names no tool."""

from __future__ import annotations

from tests.test_tool_discovery import discover

BOT = '''
import json

import requests

OLLAMA_URL = "http://localhost:11434/api/generate"


def build_prompt(instruction: str) -> str:
    return f"""You manage a shared pantry list. Answer with JSON only.
ALLOWED ACTIONS:
- add_item: {{"action": "add_item", "name": "string", "quantity": 1}}
- remove_item: {{"action": "remove_item", "name": "string"}}
- list_items: {{"action": "list_items"}}
INSTRUCTION: {instruction}"""


def ask_model(prompt: str) -> str:
    answer = requests.post(OLLAMA_URL, json={"model": "llama3", "prompt": prompt}, timeout=30)
    return answer.json()["response"]


def run_action(action: dict) -> str:
    kind = action.get("action")
    if kind == "add_item":
        requests.post("https://pantry.example/items", json={"name": action["name"]}, timeout=10)
        return "added"
    elif kind == "remove_item":
        requests.delete(f"https://pantry.example/items/{action['name']}", timeout=10)
        return "removed"
    elif kind == "list_items":
        return requests.get("https://pantry.example/items", timeout=10).text
    return f"unknown action {kind}"


def handle(instruction: str) -> str:
    reply = json.loads(ask_model(build_prompt(instruction)))
    return run_action(reply)
'''

CLI = '''
import sys

import requests

HELP = """usage: pantry COMMAND
commands:
  add_item NAME     add an item to the list
  remove_item NAME  remove an item from the list
"""


def main() -> None:
    command = sys.argv[1] if len(sys.argv) > 1 else "help"
    if command == "add_item":
        requests.post("https://pantry.example/items", json={"name": sys.argv[2]}, timeout=10)
    elif command == "remove_item":
        requests.delete(f"https://pantry.example/items/{sys.argv[2]}", timeout=10)
    else:
        print(HELP)
'''


def test_each_action_a_prompt_sent_to_a_model_lists_is_a_tool_run_by_its_branch() -> None:
    tools = {t.name: t for t in discover({"bot.py": BOT})}
    assert set(tools) == {"add_item", "remove_item", "list_items"}
    assert all(t.inline is not None for t in tools.values())


def test_a_help_text_listing_the_branches_of_a_command_line_names_no_tool() -> None:
    assert discover({"cli.py": CLI}) == []


EDITOR = '''
import json
from pathlib import Path

from openai import OpenAI

client = OpenAI()
DESCRIPTION = """Edit a file. Commands: view_file (show it), create_file (write it anew),
append_line (add text at its end)."""
SPEC = {
    "type": "function",
    "function": {
        "name": "edit_file",
        "description": DESCRIPTION,
        "parameters": {"type": "object", "properties": {"command": {"type": "string"}}},
    },
}


def edit_file(command: str, path: str, text: str = "") -> str:
    if command == "view_file":
        return Path(path).read_text()
    elif command == "create_file":
        Path(path).write_text(text)
        return "created"
    elif command == "append_line":
        with open(path, "a") as handle:
            handle.write(text + "\\n")
        return "appended"
    return f"unknown command {command}"


def ask(question: str) -> str:
    messages = [{"role": "user", "content": question}]
    reply = client.chat.completions.create(model="gpt-4o", messages=messages, tools=[SPEC])
    for call in reply.choices[0].message.tool_calls or []:
        return edit_file(**json.loads(call.function.arguments))
    return reply.choices[0].message.content
'''


def test_the_commands_a_tools_description_lists_and_its_body_branches_on_are_one_tool() -> None:
    assert [t.name for t in discover({"editor.py": EDITOR})] == ["edit_file"]


# A hand-written ReAct loop: the prompt names the tools, the model answers ``Action: name``,
# and the loop looks the name up in a table of the project's functions.
REACT = '''
import re

import requests
from openai import OpenAI

client = OpenAI()


def search_orders(query: str) -> str:
    return requests.get("https://shop.example/api/orders", params={"q": query}, timeout=10).text


def cancel_order(order_id: str) -> str:
    return requests.post(f"https://shop.example/api/orders/{order_id}/cancel", timeout=10).text


TOOLS = {"search_orders": search_orders, "cancel_order": cancel_order}

PROMPT = """Answer the customer's question. Tools you may use:
search_orders: find orders by a text query
cancel_order: cancel one order by its id
Answer in the form
Action: the tool's name
Action Input: what to hand it
"""


def run(question: str) -> str:
    messages = [{"role": "system", "content": PROMPT}, {"role": "user", "content": question}]
    for _ in range(5):
        reply = client.chat.completions.create(model="gpt-4o", messages=messages)
        text = reply.choices[0].message.content
        match = re.search(r"Action: (\\w+)\\s*Action Input: (.*)", text)
        if match is None:
            return text
        observation = TOOLS[match.group(1)](match.group(2))
        messages.append({"role": "user", "content": f"Observation: {observation}"})
    return "no answer"
'''


def test_each_function_of_a_table_a_prompt_lists_and_a_model_loop_looks_up_is_a_tool() -> None:
    tools = {t.name: t for t in discover({"agent.py": REACT})}
    assert set(tools) == {"search_orders", "cancel_order"}
    assert tools["cancel_order"].functions[0] == "agent.cancel_order"


# The table lives in its own module and the agent describes it to the model by reading it
# whole, then looks the answer's name up with ``.get`` and calls what it finds.
TABLE = """
import subprocess
from pathlib import Path


def read_note(name: str) -> str:
    return Path("notes", name).read_text()


def write_note(spec: str) -> str:
    name, _, text = spec.partition("|")
    Path("notes", name).write_text(text)
    return "saved"


def run_shell(command: str) -> str:
    return subprocess.run(command, shell=True, capture_output=True, text=True).stdout


TOOLBOX = {"read_note": read_note, "write_note": write_note, "run_shell": run_shell}
"""

AGENT = """
import anthropic

from toolbox import TOOLBOX


class NoteAgent:
    def __init__(self) -> None:
        self.client = anthropic.Anthropic()

    def system_prompt(self) -> str:
        lines = [f"{name}: {fn.__doc__ or ''}" for name, fn in TOOLBOX.items()]
        return "Reply `TOOL name: input` to use a tool. Tools:\\n" + "\\n".join(lines)

    def step(self, history: list) -> str:
        answer = self.client.messages.create(
            model="claude-sonnet-4-5", max_tokens=1024, system=self.system_prompt(), messages=history
        )
        text = answer.content[0].text
        if not text.startswith("TOOL "):
            return text
        name, _, argument = text[5:].partition(":")
        tool = TOOLBOX.get(name.strip())
        return tool(argument.strip()) if tool else f"no tool {name}"
"""


def test_a_table_the_agent_describes_to_the_model_by_reading_it_whole_names_its_tools() -> None:
    tools = {t.name: t.functions[0] for t in discover({"toolbox.py": TABLE, "agent.py": AGENT})}
    assert tools == {
        "read_note": "toolbox.read_note",
        "write_note": "toolbox.write_note",
        "run_shell": "toolbox.run_shell",
    }


def test_a_model_called_through_a_thread_runner_reaches_the_table_it_is_told_of() -> None:
    """``await asyncio.to_thread(self.client.messages.create, ...)``: the model API handed
    to a callable runner is the model the prompt reaches, as a direct call would be."""
    threaded = AGENT.replace("import anthropic", "import asyncio\n\nimport anthropic").replace(
        "    def step(self, history: list) -> str:\n        answer = self.client.messages.create(\n",
        "    async def step(self, history: list) -> str:\n"
        "        answer = await asyncio.to_thread(\n            self.client.messages.create,\n",
    )
    assert "asyncio.to_thread" in threaded
    tools = {t.name for t in discover({"toolbox.py": TABLE, "agent.py": threaded})}
    assert tools == {"read_note", "write_note", "run_shell"}


# The same table looked up by a command loop that never talks to a model: its names are
# commands typed by a user, not tools.
SHELL = """
from toolbox import TOOLBOX


def main() -> None:
    print("commands: " + ", ".join(TOOLBOX))
    while True:
        name, _, argument = input("> ").partition(" ")
        print(TOOLBOX[name](argument))
"""


def test_a_table_looked_up_by_a_loop_that_reaches_no_model_names_no_tool() -> None:
    assert discover({"toolbox.py": TABLE, "shell.py": SHELL}) == []
