from __future__ import annotations

from collections.abc import Iterator

from agentguard.checks.base import Invalid, Rule, Valid
from agentguard.diagnostics import Confidence, Finding, Severity
from agentguard.project.project_model import ProjectModel


class InvalidToolSchema(Rule):
    """
    ## What it does
    Reports a tool-schema file (an MCP `tools/list` result or `Tool`, an OpenAI or
    Anthropic tool spec, an `agentguard.yaml` manifest) that does not parse or does not
    match its format, at the line and column of the offending value.

    ## Why it matters
    A tool definition the provider rejects, or a manifest entry with a misspelt field
    (`idempotncy: non_idempotent`), silently drops the declaration the runtime relies on:
    the tool then falls back to the default policy and a timed-out write may be retried.

    ## Example
    ```yaml
    agentguard: 1
    tools:
      create_order:
        risk: write
        replay: sometimes      # not auto, ask or never
    ```

    ## Use instead
    ```yaml
    agentguard: 1
    tools:
      create_order:
        risk: write
        idempotency: conditional
        replay: never
    ```

    ## Fix safety
    No automatic fix: the intended value is a decision.
    """

    code, name, question = "AG001", "invalid-tool-schema", "meta"
    severity = Severity.ERROR
    VALID = (
        Valid(
            "agentguard: 1\n"
            "tools:\n"
            "  create_order:\n"
            "    risk: write\n"
            "    idempotency: conditional\n"
            "    replay: never\n"
            '    key: "order:{user_id}:{args.cart_id}:{run_id}"\n'
            "    reconcile: shop.orders.find_order\n",
            filename="agentguard.yaml",
        ),
        Valid(
            '{"tools": [{"name": "get_order", "description": "Look an order up.",\n'
            ' "inputSchema": {"type": "object", "properties": {"order_id": {"type": "string"}}},\n'
            ' "annotations": {"readOnlyHint": true}}]}\n',
            filename="mcp-tools.json",
        ),
        Valid(
            '{"name": "shop-agent", "version": "1.0.0", "scripts": {"build": "tsc"},\n'
            ' "dependencies": {"openai": "^5.0.0"}}\n',
            filename="package.json",
        ),
    )
    INVALID = (
        Invalid(
            "agentguard: 1\ntools:\n  create_order:\n    risk: write\n    replay: sometimes\n",
            span=(5, 13, 5, 22),
            filename="agentguard.yaml",
            message_contains="replay",
        ),
        Invalid(
            "tools:\n"
            "  - type: function\n"
            "    function:\n"
            "      name: create_order\n"
            "      parameters: object\n",
            span=(5, 19, 5, 25),
            filename="openai-tools.yaml",
        ),
        Invalid(
            '{"tools": [\n  {"name": "create_order", "inputSchema": {"type": "object"},}\n]}\n',
            span=(2, 62, 2, 63),
            filename="tools.json",
            message_contains="invalid JSON",
        ),
    )

    def check(self, project: ProjectModel) -> Iterator[Finding]:
        for issue in project.schema_issues:
            yield self.finding(
                issue.location,
                f"Invalid tool schema: {issue.message}",
                confidence=Confidence.HIGH,
                node_text=issue.message,
            )
