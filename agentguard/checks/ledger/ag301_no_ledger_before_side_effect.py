from __future__ import annotations

from collections.abc import Iterator

from agentguard.checks.base import Invalid, Rule, Valid
from agentguard.checks.common import effect_phrase, tool_evidence
from agentguard.checks.ledger.shared import ToolLedgerVerdicts
from agentguard.diagnostics import Finding, Severity
from agentguard.project.project_model import ProjectModel


class NoLedgerBeforeSideEffect(Rule):
    """
    ## What it does
    Flags a tool whose non-idempotent side effect runs with no durable record of the call
    written before it: nothing in the tool body, in a decorator, or in the executor that
    dispatches tools writes a ledger entry (status `started`) first.

    What counts as a record: agentguard's runtime (`@guarded` tools are compliant), the
    functions named in `ledger-functions` in your config, a write method on an object whose
    name says ledger/journal/audit log, an ORM row or SQL insert into a tool-call table.

    ## Why it matters
    The process dies after the request left and before the result came back. With no
    record, recovery cannot tell that the call was in flight: the model or the resume code
    calls the tool again and the order is placed twice.

    ## Example
    ```python
    @tool
    def create_order(cart_id: str) -> dict:
        return orders.create(cart_id)
    ```

    ## Use instead
    ```python
    @tool
    @guarded(runtime, risk="write", idempotency="conditional", replay="never", key=order_key)
    def create_order(cart_id: str) -> dict:
        return orders.create(cart_id, idempotency_key=current_call().idempotency_key)
    ```
    or write your own record first: `ledger.record_start(call_id, "create_order", input_hash)`.

    ## Fix safety
    No automatic fix: where the ledger lives is a design decision.
    """

    code, name, question = "AG301", "no-ledger-before-side-effect", "Q3"
    reads = (ToolLedgerVerdicts,)
    severity = Severity.WARNING
    VALID = (
        Valid(
            "import requests\n"
            "from langchain_core.tools import tool\n"
            "from app.audit import ledger\n\n"
            "@tool\n"
            "def create_order(cart_id: str) -> dict:\n"
            '    """Create an order."""\n'
            '    ledger.record_start("create_order", cart_id)\n'
            '    order = requests.post("https://shop.example/orders", json={"cart": cart_id}).json()\n'
            '    ledger.record_result("create_order", order)\n'
            "    return order\n"
        ),
        Valid(
            "import requests\n"
            "from langchain_core.tools import tool\n\n"
            "@tool\n"
            "def order_status(order_id: str) -> dict:\n"
            '    """Look an order up."""\n'
            '    return requests.get(f"https://shop.example/orders/{order_id}").json()\n'
        ),
        Valid(
            "import requests\n"
            "from app.audit import record\n"
            "from langchain_core.tools import tool\n\n"
            "@tool\n"
            "def create_order(cart_id: str) -> dict:\n"
            '    """Create an order."""\n'
            '    record("create_order", {"cart_id": cart_id})\n'
            '    return requests.post("https://shop.example/orders", json={"cart": cart_id}).json()\n',
            config={"catalog_extensions": {"ledger_functions": ["app.audit.record"]}},
        ),
        Valid(
            "import hashlib\n"
            "import json\n"
            "import requests\n"
            "from langchain_core.tools import tool\n"
            "from app.journal import journal\n\n"
            "@tool\n"
            "def create_order(cart_id: str) -> dict:\n"
            '    """Create an order."""\n'
            '    return requests.post("https://shop.example/orders", json={"cart": cart_id}).json()\n\n'
            "TOOLS = {create_order.name: create_order}\n\n"
            "def run_tool(call_id: str, name: str, args: dict) -> dict:\n"
            "    digest = hashlib.sha256(json.dumps(args, sort_keys=True).encode()).hexdigest()\n"
            "    journal.begin(call_id, name, input_hash=digest)\n"
            "    return TOOLS[name].invoke(args)\n"
        ),
    )
    INVALID = (
        Invalid(
            "import requests\n"
            "from langchain_core.tools import tool\n\n"
            "@tool\n"
            "def create_order(cart_id: str) -> dict:\n"
            '    """Create an order."""\n'
            '    return requests.post("https://shop.example/orders", json={"cart": cart_id}).json()\n',
            span=(7, 12, 7, 80),
            message_contains="requests.post",
        ),
    )

    def check(self, project: ProjectModel) -> Iterator[Finding]:
        for verdict in ToolLedgerVerdicts.of(project):
            if verdict.status != "none":
                continue
            tool = verdict.tool
            effect = tool.effects[verdict.effect_index]
            yield self.tool_finding(
                project,
                tool,
                verdict.call_site,
                f"Tool `{tool.name}` makes {effect_phrase(effect)} with no "
                "durable record of the call written before it: after a crash nothing shows "
                "it was in flight",
                confidence=effect.confidence,
                evidence=tool_evidence(tool, effect),
                node_text=f"{tool.name}:{effect.call.text}",
            )
