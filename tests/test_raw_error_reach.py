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
    found = [(f.location.span.line, f.tool, f.confidence.value) for f in result.findings]
    # fetch's handler (line 16); log_only's result is not returned by the tool
    assert found == [(16, "stock_quote", "medium")]


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
