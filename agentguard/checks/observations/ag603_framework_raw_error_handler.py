from __future__ import annotations

from collections.abc import Iterator

from agentguard.checks.base import ORDER_OUTCOME_UNKNOWN_TS, Invalid, Rule, Valid, mcp_tool_ts
from agentguard.checks.common import tool_evidence
from agentguard.checks.observations.shared import (
    DefaultErrorTexts,
    ErrorHandlerSettings,
)
from agentguard.diagnostics import Confidence, EvidenceStep, Finding, Severity, StepKind
from agentguard.project.project_model import ProjectModel


class FrameworkRawErrorHandler(Rule):
    """
    ## What it does
    Flags a write tool whose errors are left to a framework's error text: settings such as
    `handle_tool_error=True`, `ToolNode(handle_tool_errors=True)` (`"Error: {repr(e)}"`),
    LangChain `ToolRetryMiddleware` (`"... {str(exc)}. Please try again."`), and frameworks
    whose default already sends raw text or "please try again" (MCP servers without
    `mask_error_details`, CrewAI, smolagents, LlamaIndex, AutoGen, Semantic Kernel, Haystack,
    OpenAI Agents without a `failure_error_function`) when the tool does not catch errors
    around its side effect itself.

    In TypeScript: the MCP SDK's `McpServer` and FastMCP
    answer a thrown error with an `isError` result holding its message, and OpenAI Agents
    JS's default `errorFunction` sends "An error occurred while running the tool. Please
    try again. Error: ..."; LangGraph.js's `ToolNode` (and the agents built on it) answers
    "Error: ... Please fix your mistakes." by default. A `catch` that only throws a new
    `Error` leaves the answer to them.

    ## Why it matters
    A timeout after the request left comes back to the model as "Error: ReadTimeout(...)
    Please try again." and the model does exactly that.

    ## Example
    ```python
    builder.add_node("tools", ToolNode([create_order], handle_tool_errors=True))
    ```

    ## Use instead
    Catch errors in the tool (or let `@guarded` do it) and return a structured observation
    with `code` and `retryable`; give the framework a handler that says the outcome is
    unknown for write tools.

    ## Fix safety
    No automatic fix.
    """

    code, name, question = "AG603", "framework-raw-error-handler", "Q6"
    reads = (ErrorHandlerSettings, DefaultErrorTexts)
    # Exception text can carry secrets and internal details to the model, and a downstream's
    # error body is attacker-controlled text in the model's context (CWE-209).
    category = "security"
    severity = Severity.WARNING
    VALID = (
        Valid(
            "import requests\n"
            "from langchain_core.tools import tool\n"
            "from langgraph.prebuilt import ToolNode\n\n"
            "@tool\n"
            "def order_status(order_id: str) -> dict:\n"
            '    """Look an order up."""\n'
            '    return requests.get(f"https://shop.example/orders/{order_id}").json()\n\n'
            "tools = ToolNode([order_status], handle_tool_errors=True)\n"
        ),
        Valid(
            "import httpx\n"
            "from mcp.server.fastmcp import FastMCP\n\n"
            'mcp = FastMCP("billing")\n\n'
            "@mcp.tool()\n"
            "def send_invoice(invoice_id: str) -> dict:\n"
            '    """Send an invoice."""\n'
            "    try:\n"
            '        return httpx.post(f"https://billing.example/invoices/{invoice_id}/send").json()\n'
            "    except Exception as exc:\n"
            '        return {"ok": False, "code": "SIDE_EFFECT_UNCERTAIN", "retryable": False,\n'
            '                "content": f"Sending may have happened ({type(exc).__name__}); do not retry."}\n'
        ),
        Valid(
            "import httpx\n"
            "from agents import function_tool\n\n"
            "def outcome_unknown(ctx, error: Exception) -> str:\n"
            '    return "create_order did not confirm; the order may exist. Do not retry."\n\n'
            "@function_tool(failure_error_function=outcome_unknown)\n"
            "async def create_order(cart_id: str) -> dict:\n"
            "    async with httpx.AsyncClient() as client:\n"
            '        return (await client.post("https://shop.example/orders", json={"cart": cart_id})).json()\n'
        ),
        Valid(
            ORDER_OUTCOME_UNKNOWN_TS,
            filename="server.ts",
        ),
    )
    INVALID = (
        Invalid(
            "import requests\n"
            "from langchain_core.tools import tool\n"
            "from langgraph.prebuilt import ToolNode\n\n"
            "@tool\n"
            "def create_order(cart_id: str) -> dict:\n"
            '    """Create an order."""\n'
            '    return requests.post("https://shop.example/orders", json={"cart": cart_id}).json()\n\n'
            "tools = ToolNode([create_order], handle_tool_errors=True)\n",
            span=(10, 53, 10, 57),
        ),
        Invalid(
            "import httpx\n"
            "from mcp.server.fastmcp import FastMCP\n\n"
            'mcp = FastMCP("billing")\n\n'
            "@mcp.tool()\n"
            "def send_invoice(invoice_id: str) -> dict:\n"
            '    """Send an invoice."""\n'
            '    return httpx.post(f"https://billing.example/invoices/{invoice_id}/send").json()\n',
            span=(7, 5, 7, 17),
        ),
        Invalid(
            mcp_tool_ts(
                '    const response = await axios.post("https://shop.example/orders", { cartId });\n'
                '    return { content: [{ type: "text", text: `Order ${response.data.id} placed` }] };\n',
                'axios from "axios"',
            ),
            filename="server.ts",
            span=(10, 3, 13, 4),
        ),
    )

    def check(self, project: ProjectModel) -> Iterator[Finding]:
        for use in ErrorHandlerSettings.of(project):
            names = ", ".join(f"`{t.name}`" for t in use.tools[:3])
            yield self.finding(
                use.location,
                f"{use.text}; it covers the write tool(s) {names} ({use.effects[0].route()})",
                tool=use.tools[0] if len(use.tools) == 1 else None,
                confidence=use.confidence,
                evidence=(EvidenceStep(StepKind.SETTING, use.location, subject=use.setting),),
                node_text=use.setting,
            )
        for default in DefaultErrorTexts.of(project):
            tool = default.tool
            yield self.finding(
                tool.anchor,
                f"Tool `{tool.name}` lets errors around {default.effect.route()} reach the "
                f"framework's default: {default.text}",
                tool=tool,
                confidence=Confidence.MEDIUM,
                evidence=tool_evidence(tool, default.effect),
                node_text=f"{tool.name}:default-error",
            )
