"""Raw exception text reaches the model one step removed: through a helper whose result
the tool returns, and through a tool package's own BaseTool/ToolException."""

from __future__ import annotations

from tests.conftest import ScanFiles

HELPER_SERVER = """\
import json

import httpx
from mcp.server.fastmcp import FastMCP

mcp = FastMCP("quotes")


async def fetch(path: str, params: dict) -> dict:
    try:
        async with httpx.AsyncClient(timeout=10) as client:
            response = await client.get(f"https://quotes.example{path}", params=params)
            response.raise_for_status()
            return response.json()
    except Exception as e:
        return {"error": str(e)}


def log_only(path: str) -> None:
    try:
        httpx.get(f"https://quotes.example{path}")
    except Exception as e:
        print(str(e))


@mcp.tool()
async def stock_quote(ticker: str) -> str:
    data = await fetch("/quote", {"ticker": ticker})
    log_only("/ping")
    return json.dumps(data)
"""


def test_a_helper_returning_raw_text_that_the_tool_returns_is_flagged(
    scan_files: ScanFiles,
) -> None:
    result = scan_files({"server.py": HELPER_SERVER}, select=("AG601",))
    found = [
        (f.location.span.line, f.tool, f.confidence.value, [r.span.line for r in f.related])
        for f in result.findings
    ]
    # In the tool, at its call of fetch (line 28), with fetch's handler (line 16) as the
    # cause; log_only's result is not returned by the tool
    assert found == [(28, "stock_quote", "medium", [16])]


PACKAGE_TOOL = """\
from pydantic import BaseModel, Field

from ..base_tool import BaseTool
from ..exceptions import ToolException
from ..client import summarize


class SummaryInput(BaseModel):
    text: str = Field(description="Text to summarize")


class SummaryTool(BaseTool):
    name: str = "summary"
    description: str = "Summarizes text."
    args_schema: type[BaseModel] = SummaryInput

    def _run(self, text: str) -> str:
        try:
            return summarize(text)
        except Exception as e:
            raise ToolException(str(e)) from e


class NotATool(BaseTool):
    def helper(self, text: str) -> str:
        try:
            return summarize(text)
        except Exception as e:
            raise ToolException(str(e)) from e
"""


def test_a_tool_packages_own_base_tool_and_tool_exception(scan_files: ScanFiles) -> None:
    result = scan_files({"pkg/tools/summary.py": PACKAGE_TOOL}, select=("AG601",))
    assert [(f.location.span.line, f.tool) for f in result.findings] == [(21, "summary")]


AGENT_LOOP = """\
import json

from app.registry import registry


async def run_agent(llm, history: list) -> str:
    for _ in range(5):
        reply = await llm.chat(history, tools=registry.definitions())
        if not reply.tool_calls:
            return reply.content
        for tc in reply.tool_calls:
            try:
                result = await registry.execute_tool(tc.function.name, json.loads(tc.function.arguments))
                history.append({"role": "tool", "tool_call_id": tc.id, "content": str(result)})
            except Exception as e:
                history.append({"role": "tool", "tool_call_id": tc.id, "content": f"Error: {e}"})
    return "gave up"
"""


def test_an_agent_loop_running_tools_by_name(scan_files: ScanFiles) -> None:
    result = scan_files({"agent.py": AGENT_LOOP})
    codes = [(f.code, f.location.span.line) for f in result.findings]
    # the raw text reaches the model; the agent's turn loop is not a retry of the tool call
    assert ("AG601", 16) in codes
    assert not [c for c, _ in codes if c in {"AG902", "AG903"}]


POLLER = """\
import asyncio

import httpx


async def send_reply(chat_id: int, text: str) -> None:
    async with httpx.AsyncClient() as client:
        await client.post("https://chat.example/sendMessage", json={"chat_id": chat_id, "text": text})


async def poll(offset: int) -> None:
    while True:
        try:
            updates = (await httpx.AsyncClient().get(f"https://chat.example/updates?o={offset}")).json()
            for update in updates:
                offset = update["id"] + 1
                await send_reply(update["chat"], "ok")
        except Exception:
            await asyncio.sleep(5)


async def send_with_retry(chat_id: int, text: str) -> None:
    while True:
        try:
            await send_reply(chat_id, text)
            break
        except Exception:
            await asyncio.sleep(5)
"""


def test_a_polling_loop_is_not_a_retry_but_a_loop_that_leaves_on_success_is(
    scan_files: ScanFiles,
) -> None:
    result = scan_files({"bot.py": POLLER}, select=("AG902", "AG903"))
    assert {(f.code, f.location.span.line) for f in result.findings} == {
        ("AG902", 23),
        ("AG903", 23),
    }


PYDANTIC_AI = """\
import httpx
from pydantic_ai import Agent, ModelRetry, RunContext

from app.db import InvalidQueryError

agent = Agent("openai:gpt-4o")


@agent.tool
def run_sql(ctx: RunContext, sql: str) -> list:
    \"\"\"Run one read-only SELECT against the analytics database.\"\"\"
    try:
        return ctx.deps.db.execute(sql)
    except InvalidQueryError as e:
        raise ModelRetry(str(e)) from e


@agent.tool
def play_move(ctx: RunContext, move: str) -> str:
    \"\"\"Apply a move to the board.\"\"\"
    ctx.deps.board.send_move(move)
    return "ok"


@agent.tool
def book_room(ctx: RunContext, room: str) -> str:
    \"\"\"Book a meeting room.\"\"\"
    try:
        return httpx.post("https://rooms.example/bookings", json={"room": room}).text
    except httpx.HTTPStatusError as e:
        raise ModelRetry(str(e)) from e
"""


def test_pydantic_ai_tools_fixing_their_input_are_not_blamed(scan_files: ScanFiles) -> None:
    result = scan_files({"agent.py": PYDANTIC_AI})
    blamed = sorted({(f.code, f.tool) for f in result.findings if f.code in {"AG101", "AG601"}})
    # a rejected query's text is what the model needs; a move on the user's own board
    # object is no remote write; a booking's HTTP error text is raw text around a write
    assert blamed == [("AG101", "book_room"), ("AG601", "book_room")]


def test_exception_text_a_closure_puts_in_what_the_tool_returns_reaches_the_model(
    scan_files: ScanFiles,
) -> None:
    """The tool runs the model's code in a thread whose function fills the tool's own
    ``result`` dict, ``str(e)`` included, and returns that dict: raw text reaches the model."""
    source = """\
import threading

from langchain_core.tools import tool


@tool
def run_python(code: str) -> dict:
    \"\"\"Run Python code.\"\"\"
    result = {"output": ""}

    def runner():
        try:
            exec(code, {})
            result["output"] = "done"
        except Exception as e:
            result["output"] = str(e)

    thread = threading.Thread(target=runner)
    thread.start()
    thread.join(5)
    return result
"""
    codes = {f.code for f in scan_files({"tools.py": source}).findings}
    assert "AG601" in codes


ERROR_HELPERS = """\
import json

import httpx
from mcp.server.fastmcp import FastMCP

mcp = FastMCP("boards")


def classify(error: Exception) -> dict:
    if isinstance(error, httpx.TimeoutException):
        return {"kind": "timeout", "message": "The board service did not answer in time."}
    return {"kind": "failed", "message": str(error)}


def error_payload(error: Exception, tool: str) -> dict:
    info = classify(error)
    message = info["message"]
    text = json.dumps({"tool": tool, "message": message})
    return {"content": [{"type": "text", "text": text}], "isError": True}


def not_found_payload(error: Exception) -> dict:
    kind = classify(error)["kind"]
    return {"content": [{"type": "text", "text": "No such board."}], "kind": "missing"}


@mcp.tool()
def board_cards(board_id: str) -> dict:
    try:
        return httpx.get(f"https://boards.example/boards/{board_id}/cards", timeout=10).json()
    except Exception as error:
        return error_payload(error, "board_cards")


@mcp.tool()
def board_lists(board_id: str) -> dict:
    try:
        return httpx.get(f"https://boards.example/boards/{board_id}/lists", timeout=10).json()
    except Exception as error:
        return not_found_payload(error)
"""


def test_raw_text_carried_through_a_helpers_locals_and_the_helpers_it_calls_is_flagged(
    scan_files: ScanFiles,
) -> None:
    """``error_payload(error)`` keeps what ``classify(error)`` made of the exception in a
    local, reads its message, serialises it and returns it: the model gets the raw text.
    ``not_found_payload`` reads only a kind and returns a fixed text."""
    result = scan_files({"server.py": ERROR_HELPERS}, select=("AG601",))
    assert sorted(f.tool or "" for f in result.findings) == ["board_cards"]
