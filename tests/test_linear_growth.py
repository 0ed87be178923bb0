"""A check's time grows no faster than the file it reads: a file four times the size
costs about four times as much, never sixteen (ratios measured in one run, CPU time)."""

from __future__ import annotations

import time
from pathlib import Path

from agentguard.config import load_config
from agentguard.engine.pipeline import scan
from agentguard.engine.speed import FactOptions

HEADER = """\
import httpx
from mcp.server.fastmcp import FastMCP

mcp = FastMCP("orders")
"""

# One tool of a generated MCP server: a POST with no key, the exception text returned, and
# a long docstring (bytes that cost the parser little, so that a pass reading the whole file
# once per tool shows).
NOTES = "\n".join(
    f"    Note {n}: amounts are in cents, the order must exist and be unpaid." for n in range(16)
)
TOOL = '''

def _payload_{i}(order_id: str, amount: int) -> dict:
    return {{"order": order_id, "amount": amount, "kind": "k{i}"}}


@mcp.tool()
def charge_{i}(order_id: str, amount: int) -> str:
    """Charge order {i}.

{notes}
    """
    try:
        response = httpx.post("https://pay.example.com/c{i}", json=_payload_{i}(order_id, amount))
        response.raise_for_status()
        return response.json()["id"]
    except Exception as e:
        return str(e)
'''


def cpu_seconds(folder: Path, tools: int) -> float:
    text = HEADER + "".join(TOOL.format(i=i, notes=NOTES) for i in range(tools))
    return best_cpu_seconds(folder, text, tools)


def best_cpu_seconds(folder: Path, text: str, tools: int) -> float:
    """The CPU time of checking ``text`` as a one-file project of ``tools`` tools."""
    folder.mkdir()
    (folder / "server.py").write_text(text, encoding="utf-8")
    config = load_config([folder])
    best = float("inf")
    for _ in range(2):  # the better of two: the machine is shared
        started = time.process_time()
        result = scan([folder], config, facts=FactOptions(jobs=1))
        best = min(best, time.process_time() - started)
        assert result.tools == tools
    return best


def test_time_grows_at_most_linearly_with_the_size_of_a_file(tmp_path: Path) -> None:
    small = cpu_seconds(tmp_path / "x1", 60)
    medium = cpu_seconds(tmp_path / "x4", 240)
    large = cpu_seconds(tmp_path / "x16", 960)
    # Linear growth gives 4 (less, with the fixed costs of a run); a pass whose cost grows
    # with the square of the file's tools gives up to 16 at each step.
    assert medium / small < 6, (small, medium, large)
    assert large / medium < 6, (small, medium, large)


DISPATCH_HEADER = """\
import mcp.types as types
import requests
from mcp.server.lowlevel import Server

API = "https://inventory.example.net/v1"
server = Server("inventory")


def api_post(path: str, body: dict) -> dict:
    return requests.post(f"{API}{path}", json=body, timeout=10).json()


def api_get(path: str) -> dict:
    return requests.get(f"{API}{path}", timeout=10).json()
"""


def dispatch_server(tools: int) -> str:
    """A low-level MCP server listing ``tools`` tools and dispatching on their names in one
    ``match``, every case calling one of two shared helpers: each case is a tool."""
    listed = "".join(
        f'        types.Tool(name="item_{i}", description="Item {i}", inputSchema={{}}),\n'
        for i in range(tools)
    )
    cases = "".join(
        f'        case "item_{i}":\n'
        + (
            f'            result = api_post("/items/{i}", arguments)\n'
            if i % 2
            else f'            result = api_get("/items/{i}")\n'
        )
        for i in range(tools)
    )
    return (
        DISPATCH_HEADER
        + "\n\n@server.list_tools()\nasync def list_tools() -> list[types.Tool]:\n"
        + f"    return [\n{listed}    ]\n"
        + "\n\n@server.call_tool()\n"
        + "async def call_tool(name: str, arguments: dict) -> list[types.TextContent]:\n"
        + f"    match name:\n{cases}"
        + "        case _:\n            raise ValueError(name)\n"
        + '    return [types.TextContent(type="text", text=str(result))]\n'
    )


def dispatch_cpu_seconds(folder: Path, tools: int) -> float:
    return best_cpu_seconds(folder, dispatch_server(tools), tools)


def test_time_grows_at_most_linearly_with_the_branches_of_a_dispatch(tmp_path: Path) -> None:
    # Each case is a tool that asks about its own branch among all the others: a question
    # answered by a scan of every branch, per branch, grows with the square of the cases.
    small = dispatch_cpu_seconds(tmp_path / "x1", 60)
    medium = dispatch_cpu_seconds(tmp_path / "x4", 240)
    assert medium / small < 6, (small, medium)  # before the larger file, which would be slow
    large = dispatch_cpu_seconds(tmp_path / "x16", 960)
    assert large / medium < 6, (small, medium, large)
