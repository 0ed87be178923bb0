"""Tools of agent SDKs declared in forms the earlier audits did not meet.

Strands' module-based tools: a module holds a ``TOOL_SPEC`` dict (``name``, ``description``,
``inputSchema``) and a module-level function of the same name that takes the tool use.
"""

from __future__ import annotations

from .conftest import ScanFiles, tool_verdicts

MODULE_TOOL = """\
from typing import Any

import requests
from strands.types.tools import ToolResult, ToolUse

TOOL_SPEC = {
    "name": "post_note",
    "description": "Post a note to the team board.",
    "inputSchema": {"json": {"type": "object", "properties": {"text": {"type": "string"}}}},
}


def _format(text: str) -> str:
    return text.strip()


def post_note(tool: ToolUse, **kwargs: Any) -> ToolResult:
    text = _format(tool["input"]["text"])
    response = requests.post("https://board.example.com/notes", json={"text": text})
    return {"toolUseId": tool["toolUseId"], "status": "success",
            "content": [{"text": response.text}]}
"""

READ_MODULE_TOOL = """\
from typing import Any

from strands.types.tools import ToolResult, ToolUse

TOOL_SPEC = {
    "name": "read_note",
    "description": "Read a note file.",
    "inputSchema": {"json": {"type": "object", "properties": {"path": {"type": "string"}}}},
}


def read_note(tool: ToolUse, **kwargs: Any) -> ToolResult:
    with open(tool["input"]["path"]) as handle:
        text = handle.read()
    return {"toolUseId": tool["toolUseId"], "status": "success", "content": [{"text": text}]}
"""


def test_a_module_tool_spec_names_the_function_that_runs_it(scan_files: ScanFiles) -> None:
    verdicts = tool_verdicts(
        scan_files, {"board/post_note.py": MODULE_TOOL, "board/read_note.py": READ_MODULE_TOOL}
    )
    risk, codes = verdicts["post_note"]
    assert risk == "network_write" and {"AG101", "AG201"} <= codes
    risk, codes = verdicts["read_note"]
    assert risk == "read" and not codes & {"AG101", "AG201"}


RICH_PREVIEW = """\
from rich.console import Console
from rich.table import Table
from rich.tree import Tree
from strands import tool


@tool
def describe_file(path: str) -> str:
    \"\"\"Show a file's size and lines as a table.\"\"\"
    with open(path) as handle:
        lines = handle.readlines()
    table = Table(title=path)
    table.add_column("lines")
    table.add_row(str(len(lines)))
    tree = Tree(path)
    tree.add("first: " + lines[0] if lines else "empty")
    Console().print(table)
    return f"{len(lines)} lines"
"""


def test_terminal_tables_a_tool_builds_are_no_remote_writes(scan_files: ScanFiles) -> None:
    risk, codes = tool_verdicts(scan_files, {"files/describe.py": RICH_PREVIEW})["describe_file"]
    assert risk == "read" and not codes & {"AG101", "AG201"}


PASSTHROUGH = """\
import json
import os
from typing import Any

from slack_sdk import WebClient
from strands import tool

client = None


def _connect() -> None:
    global client
    client = WebClient(token=os.environ["SLACK_BOT_TOKEN"])


@tool
def slack_api(action: str, parameters: dict[str, Any] | None = None) -> str:
    \"\"\"Call any Slack Web API method by its name (chat_postMessage, reactions_add...).\"\"\"
    if client is None:
        _connect()
    method = getattr(client, action)
    response = method(**(parameters or {}))
    return json.dumps(response.data)


@tool
def slack_api_inline(action: str, parameters: dict[str, Any] | None = None) -> str:
    \"\"\"The same, in one expression.\"\"\"
    response = getattr(client, action)(**(parameters or {}))
    return json.dumps(response.data)


@tool
def pick_field(record: dict[str, str], field: str) -> str:
    \"\"\"A field of a record, by name.\"\"\"
    return str(getattr(json, "dumps")(record.get(field)))
"""


def test_a_client_method_named_at_run_time_is_never_a_read(scan_files: ScanFiles) -> None:
    verdicts = tool_verdicts(scan_files, {"chat/slack_api.py": PASSTHROUGH})
    assert verdicts["slack_api"][0] != "read"
    assert verdicts["slack_api_inline"][0] != "read"
    risk, codes = verdicts["pick_field"]
    assert risk == "read" and not codes & {"AG101", "AG201"}


ADK_TOOL_CLASS = """\
from typing import Any

import httpx
from google.adk.tools import BaseTool, ToolContext
from google.genai import types


class RefundTool(BaseTool):
    def __init__(self) -> None:
        super().__init__(name="refund_order", description="Refund an order.")

    def _get_declaration(self) -> types.FunctionDeclaration:
        return types.FunctionDeclaration(name=self.name, description=self.description)

    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        async with httpx.AsyncClient() as client:
            response = await client.post(
                "https://shop.example.com/refunds", json={"order": args["order_id"]}
            )
        return response.json()
"""


def test_an_adk_tool_class_runs_its_run_async(scan_files: ScanFiles) -> None:
    verdicts = tool_verdicts(scan_files, {"shop/tools.py": ADK_TOOL_CLASS})
    assert len(verdicts) == 1
    risk, codes = next(iter(verdicts.values()))
    assert risk == "network_write" and {"AG101", "AG201"} <= codes


INTERFACE_EXECUTE = """\
import abc
from typing import Any

from google.adk.tools import BaseTool, ToolContext


class Sandbox(abc.ABC):
    @abc.abstractmethod
    async def execute(self, command: str, timeout: int = 30) -> str:
        \"\"\"Run a shell command.\"\"\"


class ShellTool(BaseTool):
    def __init__(self, sandbox: Sandbox) -> None:
        super().__init__(name="shell", description="Run a shell command.")
        self._environment = sandbox

    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        command = args.get("command", "")
        output = await self._environment.execute(
            command, timeout=60
        )
        return {"stdout": output}
"""


def test_execute_on_an_interface_is_no_read(scan_files: ScanFiles) -> None:
    verdicts = tool_verdicts(scan_files, {"sandbox/tools.py": INTERFACE_EXECUTE})
    assert [risk for risk, _ in verdicts.values()] != ["read"]


HANDED_INTERFACE = """\
import abc
import asyncio
from typing import Any

from google.adk.tools import BaseTool, ToolContext


class CodeRunner(abc.ABC):
    @abc.abstractmethod
    def run_code(self, code: str) -> str:
        \"\"\"Run a piece of code.\"\"\"

    @abc.abstractmethod
    def get_status(self) -> str:
        \"\"\"The runner's status.\"\"\"


class RunScriptTool(BaseTool):
    def __init__(self, runner: CodeRunner) -> None:
        super().__init__(name="run_script", description="Run a script.")
        self._runner = runner

    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        output = await asyncio.to_thread(self._runner.run_code, args["code"])
        return {"stdout": output}


class StatusTool(BaseTool):
    def __init__(self, runner: CodeRunner) -> None:
        super().__init__(name="status", description="The runner's status.")
        self._runner = runner

    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        return {"status": await asyncio.to_thread(self._runner.get_status)}
"""


def test_an_interface_method_handed_to_a_runner_is_no_read(scan_files: ScanFiles) -> None:
    verdicts = tool_verdicts(scan_files, {"scripts/tools.py": HANDED_INTERFACE})
    risks = sorted(risk for risk, _ in verdicts.values())
    assert risks == ["read", "unknown"]
