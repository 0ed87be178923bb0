from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from agentguard.checks.base import Invalid, Rule, Valid
from agentguard.checks.common import keys_of_origin, tool_evidence
from agentguard.checks.keys.shared import KEY_FROM_RUNTIME
from agentguard.diagnostics import Applicability, Finding, FixOffer, Severity
from agentguard.fixes.context import RUNTIME_MODULE
from agentguard.project.project_model import ProjectModel

if TYPE_CHECKING:
    from agentguard.fixes.context import FixContext


class UnstableIdempotencyKey(Rule):
    """
    ## What it does
    Flags an idempotency key made fresh on every call: `uuid4()`, the time, random bytes.

    ## Why it matters
    The retry runs the tool again, which makes a new key; the service sees two different
    operations and performs both. A per-call key protects only against retries inside one
    HTTP client call, never against the model or the framework calling the tool again.

    ## Example
    ```python
    headers = {"Idempotency-Key": str(uuid.uuid4())}
    requests.post(URL, json=order, headers=headers)
    ```

    ## Use instead
    A key derived from the business operation and the run, built by the runtime:
    `current_call().idempotency_key`.

    ## Fix safety
    Unsafe: the key changes meaning.
    """

    code, name, question = "AG203", "unstable-idempotency-key", "Q2"
    severity = Severity.ERROR
    fix_applicability = Applicability.UNSAFE
    VALID = (
        Valid(
            "import requests\n"
            "from langchain_core.tools import tool\n\n"
            "@tool\n"
            "def create_order(cart_id: str, user_id: str, run_id: str) -> dict:\n"
            '    """Create an order."""\n'
            '    key = f"order:{user_id}:{cart_id}:{run_id}"\n'
            '    return requests.post("https://shop.example/orders", json={"cart": cart_id}, headers={"Idempotency-Key": key}).json()\n'
        ),
    )
    INVALID = (
        Invalid(
            "import uuid\n"
            "import requests\n"
            "from langchain_core.tools import tool\n\n"
            "@tool\n"
            "def create_order(cart_id: str) -> dict:\n"
            '    """Create an order."""\n'
            '    headers = {"Idempotency-Key": str(uuid.uuid4())}\n'
            '    return requests.post("https://shop.example/orders", json={"cart": cart_id}, headers=headers).json()\n',
            span=(8, 35, 8, 52),
            fixed=(
                "import requests\n"
                "from agentguard.runtime import current_call\n"
                "from langchain_core.tools import tool\n"
                "\n"
                "@tool\n"
                "def create_order(cart_id: str) -> dict:\n"
                '    """Create an order."""\n'
                '    headers = {"Idempotency-Key": current_call().idempotency_key}\n'
                '    return requests.post("https://shop.example/orders", json={"cart": cart_id}, headers=headers).json()\n'
            ),
            message_contains="uuid.uuid4",
        ),
    )

    def check(self, project: ProjectModel) -> Iterator[Finding]:
        for tool, effect, key in keys_of_origin(project, "fresh"):
            yield self.finding(
                key.location or effect.site,
                f"Tool `{tool.name}` sends a per-call idempotency key to {effect.route()}: "
                f"{key.detail}, so a retry gets a new key",
                tool=tool,
                confidence=effect.confidence,
                evidence=tool_evidence(tool, effect),
                node_text=f"{tool.name}:{key.value.text}",
            )
        for tool in project.tools:
            guarded = tool.guarded
            if guarded is not None and guarded.key is not None:
                fresh = [c for c in guarded.key.calls if project.catalog.fresh_calls(c)]
                if fresh:
                    yield self.finding(
                        guarded.fields.get("key") or guarded.location,
                        f"Tool `{tool.name}` builds its key with `{fresh[0]}()`, new on every call",
                        tool=tool,
                        node_text=f"{tool.name}:guarded-key",
                    )

    # --- fix

    def fix_offer(self, finding: Finding, project: ProjectModel) -> FixOffer | None:
        if finding.node_text.endswith(":guarded-key"):
            return None
        return FixOffer(
            Applicability.UNSAFE,
            f"Take the key from `{KEY_FROM_RUNTIME}` instead of a fresh value per call",
        )

    def fixed_text(self, finding: Finding, ctx: FixContext) -> str | None:
        import libcst as cst

        from agentguard.fixes.cst_tools import add_import, names_in, remove_unused_import

        if finding.node_text.endswith(":guarded-key"):
            return None
        span = finding.span
        node = ctx.node_at(span.line, span.column, (cst.BaseExpression,))
        if node is None:
            return None
        where = ctx.parsed.position(node)
        if (where.end.line, where.end.column + 1) != (
            span.end_line,
            ctx.char_col(span.end_line, span.end_column),
        ):
            return None
        names = names_in(node)
        module = ctx.parsed.replace(node, cst.parse_expression(KEY_FROM_RUNTIME))
        for name in names:
            module = remove_unused_import(module, name)
        module = add_import(module, RUNTIME_MODULE, ["current_call"], ctx.first_party)
        return ctx.parsed.code(module)
