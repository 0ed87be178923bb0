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
    folder.mkdir()
    (folder / "server.py").write_text(
        HEADER + "".join(TOOL.format(i=i, notes=NOTES) for i in range(tools)), encoding="utf-8"
    )
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
