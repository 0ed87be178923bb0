from __future__ import annotations

from collections.abc import Iterator

from agentguard.checks.base import Invalid, Rule, Valid
from agentguard.checks.timeouts.shared import TimeoutRetrySettings
from agentguard.diagnostics import EvidenceStep, Finding, Severity, StepKind
from agentguard.project.project_model import ProjectModel


class FrameworkTimeoutRetry(Rule):
    """
    ## What it does
    Flags framework settings that turn a write tool's timeout into a retry prompt or a blind
    re-send: Pydantic AI tool `timeout=` (and `Agent(tool_timeout=)`), which raises
    `ModelRetry("Timed out after N seconds.")`; OpenAI Agents `@function_tool(timeout=)` with
    the default `timeout_behavior="error_as_result"`; FastMCP tool `timeout=` ("Upstream
    request timed out, please retry"); a LangGraph `RetryPolicy` with the default `retry_on`
    (which retries `httpx` and SDK timeouts) on a node or `@task` that writes; OpenAI Agents
    MCP servers with `max_retry_attempts`, which re-send `call_tool` on any exception.

    ## Why it matters
    The tool is cut off after its request left; the framework tells the model "timed out,
    try again" (or retries by itself) and the write happens twice.

    ## Example
    ```python
    @agent.tool_plain(timeout=10)
    def create_order(cart_id: str) -> dict: ...
    ```

    ## Use instead
    Leave the timeout to `@guarded(timeout_s=...)`, which reports `SIDE_EFFECT_UNCERTAIN`;
    for OpenAI Agents use `timeout_behavior="raise_exception"` with a
    `failure_error_function` that says the outcome is unknown; give LangGraph retry
    policies on writing nodes an explicit `retry_on` of errors raised before sending.

    A remote MCP server's tools cannot be seen from the code. When they only read, say so in
    the config, by the client's `name=` or its `params` URL, and its `max_retry_attempts`
    is not flagged:

    ```toml
    [tool.agentguard]
    read-only-mcp-servers = ["docs-search", "https://docs.example.com/mcp"]
    ```

    ## Fix safety
    No automatic fix.
    """

    code, name, question = "AG402", "framework-timeout-retry", "Q4"
    reads = (TimeoutRetrySettings,)
    severity = Severity.ERROR
    VALID = (
        Valid(
            "import httpx\n"
            "from pydantic_ai import Agent\n\n"
            "agent = Agent('openai:gpt-5')\n\n"
            "@agent.tool_plain(timeout=10)\n"
            "def order_status(order_id: str) -> dict:\n"
            '    return httpx.get(f"https://shop.example/orders/{order_id}").json()\n'
        ),
        Valid(
            "import httpx\n"
            "from agents import function_tool\n\n"
            '@function_tool(timeout=10, timeout_behavior="raise_exception")\n'
            "async def create_order(cart_id: str) -> dict:\n"
            "    async with httpx.AsyncClient() as client:\n"
            '        return (await client.post("https://shop.example/orders", json={"cart": cart_id})).json()\n'
        ),
        Valid(
            "import httpx\n"
            "from langgraph.graph import StateGraph\n"
            "from langgraph.types import RetryPolicy\n\n"
            "def place_order(state: dict) -> dict:\n"
            '    order = httpx.post("https://shop.example/orders", json=state["cart"]).json()\n'
            '    return {"order": order}\n\n'
            "builder = StateGraph(dict)\n"
            "builder.add_node(\n"
            '    "place_order", place_order,\n'
            "    retry_policy=RetryPolicy(max_attempts=3, retry_on=httpx.ConnectError),\n"
            ")\n"
        ),
    )
    INVALID = (
        Invalid(
            "import httpx\n"
            "from pydantic_ai import Agent\n\n"
            "agent = Agent('openai:gpt-5')\n\n"
            "@agent.tool_plain(timeout=10)\n"
            "def create_order(cart_id: str) -> dict:\n"
            '    return httpx.post("https://shop.example/orders", json={"cart": cart_id}).json()\n',
            span=(6, 27, 6, 29),
        ),
        Invalid(
            "import httpx\n"
            "from langgraph.graph import StateGraph\n"
            "from langgraph.types import RetryPolicy\n\n"
            "def place_order(state: dict) -> dict:\n"
            '    order = httpx.post("https://shop.example/orders", json=state["cart"]).json()\n'
            '    return {"order": order}\n\n'
            "builder = StateGraph(dict)\n"
            'builder.add_node("place_order", place_order, retry_policy=RetryPolicy(max_attempts=3))\n',
            span=(10, 59, 10, 86),
        ),
    )

    def check(self, project: ProjectModel) -> Iterator[Finding]:
        for use in TimeoutRetrySettings.of(project):
            tool = use.tools[0] if use.tools else None
            if use.effects:
                what = f": it repeats {use.effects[0].route()}"
            else:
                what = ": the server's tools may write"
            yield self.finding(
                use.location,
                f"`{use.setting}`: {use.text}{what}",
                tool=tool,
                confidence=use.confidence,
                evidence=(
                    EvidenceStep(StepKind.SETTING, use.location, subject=use.setting),
                    *(use.effects[0].chain if use.effects else ()),
                ),
                node_text=use.setting,
            )
