from __future__ import annotations

from collections.abc import Iterator

from agentguard.checks.base import Invalid, Rule, Valid
from agentguard.checks.common import keys_of_origin, tool_evidence
from agentguard.diagnostics import Confidence, Finding, Severity
from agentguard.project.project_model import ProjectModel


class ArgsHashIdempotencyKey(Rule):
    """
    ## What it does
    Flags an idempotency key that is only a hash of the tool's arguments, not scoped by user,
    run, intent or approval.

    ## Why it matters
    Two different customers ordering the same cart contents, or the same customer ordering
    the same thing again tomorrow on purpose, produce the same key: the second, legitimate
    order is silently dropped as a "duplicate". And a retry with slightly different
    arguments (the model reformatted an address) gets a new key and is placed twice.

    ## Example
    ```python
    key = hashlib.sha256(json.dumps(args, sort_keys=True).encode()).hexdigest()
    ```

    ## Use instead
    `key=lambda call: f"order:{call.user_id}:{call.args['cart_id']}:{call.run_id}:{call.approved_at}"`.

    ## Fix safety
    No automatic fix.
    """

    code, name, question = "AG204", "args-hash-idempotency-key", "Q2"
    severity = Severity.WARNING
    VALID = (
        Valid(
            "import hashlib\n"
            "import requests\n"
            "from langchain_core.tools import tool\n\n"
            "@tool\n"
            "def create_order(cart_id: str, user_id: str, run_id: str) -> dict:\n"
            '    """Create an order."""\n'
            '    key = hashlib.sha256(f"{user_id}:{run_id}:{cart_id}".encode()).hexdigest()\n'
            '    return requests.post("https://shop.example/orders", json={"cart": cart_id}, headers={"Idempotency-Key": key}).json()\n'
        ),
    )
    INVALID = (
        Invalid(
            "import hashlib\n"
            "import json\n"
            "import requests\n"
            "from langchain_core.tools import tool\n\n"
            "@tool\n"
            "def create_order(cart_id: str, quantity: int) -> dict:\n"
            '    """Create an order."""\n'
            "    key = hashlib.sha256(json.dumps([cart_id, quantity]).encode()).hexdigest()\n"
            '    return requests.post("https://shop.example/orders", json={"cart": cart_id}, headers={"Idempotency-Key": key}).json()\n',
            span=(9, 11, 9, 79),
        ),
    )

    def check(self, project: ProjectModel) -> Iterator[Finding]:
        for tool, effect, key in keys_of_origin(project, "args_hash"):
            yield self.tool_finding(
                project,
                tool,
                key.location or effect.site,
                f"Tool `{tool.name}` keys {effect.route()} with {key.detail}: not scoped by "
                "user, run or approval",
                confidence=min(effect.confidence, Confidence.MEDIUM, key=lambda c: c.rank),
                evidence=tool_evidence(tool, effect),
                node_text=f"{tool.name}:{key.value.text}",
            )
