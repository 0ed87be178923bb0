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
