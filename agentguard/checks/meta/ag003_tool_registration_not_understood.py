from __future__ import annotations

from collections.abc import Iterator

from agentguard.checks.base import Invalid, Rule, Valid
from agentguard.diagnostics import Confidence, Finding, Location, Severity
from agentguard.project.discovery.coverage import coverage_gaps
from agentguard.project.project_model import ProjectModel


class ToolRegistrationNotUnderstood(Rule):
    """
    ## What it does
    Reports a file that uses an agent framework's tool API (a tool decorator or factory, a
    tool base class, a low-level MCP `list_tools` or `call_tool` handler) where agentguard
    found no tool, at the first place the file touches that API; and a place where tools are
    handed to a model API (`chat.completions.create(tools=...)`, Bedrock `toolConfig`) or to
    an agent (`Agent(tools=...)`) in a file where no tool was found and that imports nothing
    from a file where one was, with the reason no tool was traced from it.

    ## Why it matters
    Every other rule judges the tools agentguard found. A registration it cannot follow (a
    function computed at run time, a dispatch it cannot read) would otherwise end as a
    silent zero: no finding, and a clean report for tools nobody checked.

    ## Example
    ```python
    from llama_index.core.tools import FunctionTool

    import shop_api

    tools = [
        FunctionTool.from_defaults(fn=getattr(shop_api, name))
        for name in ("create_order", "cancel_order")
    ]
    ```

    ## Use instead
    Register each tool with a function agentguard can name, or declare the tools in an
    `agentguard.yaml` manifest:
    ```python
    from llama_index.core.tools import FunctionTool

    from shop_api import cancel_order, create_order

    tools = [FunctionTool.from_defaults(fn=create_order), FunctionTool.from_defaults(fn=cancel_order)]
    ```

    ## Fix safety
    No fix: how the tools are registered is the project's design.
    """

    code, name, question = "AG003", "tool-registration-not-understood", "meta"
    severity = Severity.INFO
    VALID = (
        Valid(
            "from llama_index.core.tools import FunctionTool\n\n\n"
            "def create_order(sku: str) -> str:\n"
            "    return sku\n\n\n"
            "tools = [FunctionTool.from_defaults(fn=create_order)]\n"
        ),
        Valid(
            'from fastmcp import FastMCP\n\nmcp = FastMCP("shop")\n',
            filename="server.py",
        ),
    )
    INVALID = (
        Invalid(
            "from llama_index.core.tools import FunctionTool\n\n"
            "import shop_api\n\n"
            "tools = [\n"
            "    FunctionTool.from_defaults(fn=getattr(shop_api, name))\n"
            '    for name in ("create_order", "cancel_order")\n'
            "]\n",
            span=(6, 5, 6, 59),
            message_contains="uses llamaindex; no tool found",
        ),
        Invalid(
            "from mcp.server.lowlevel import Server\n"
            "from mcp.types import Tool\n\n"
            'server = Server("shop")\n\n\n'
            "@server.list_tools()\n"
            "async def list_tools() -> list[Tool]:\n"
            '    return [Tool(name=f"{prefix}_order", description="Orders", inputSchema={})\n'
            '            for prefix in ("create", "cancel")]\n',
            span=(7, 2, 7, 21),
            message_contains="uses mcp",
        ),
    )

    def check(self, project: ProjectModel) -> Iterator[Finding]:
        for gap in coverage_gaps(project):
            message = (
                f"This file hands tools to {gap.framework} through `{gap.through}`, but no "
                f"tool was traced from it: {gap.why}, so no rule checked them"
                if gap.why
                else f"This file uses {gap.framework}; no tool found: registration through "
                f"`{gap.through}` not understood, so no rule checked its tools"
            )
            yield self.finding(
                Location(gap.path, gap.span),
                message,
                confidence=Confidence.HIGH,
                node_text=gap.through,
            )
