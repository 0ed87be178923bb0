from __future__ import annotations

from collections.abc import Iterator

from agentguard.checks.base import Invalid, Rule, Valid
from agentguard.diagnostics import Confidence, Finding, Severity
from agentguard.project.project_model import ProjectModel


class PermissiveReplayPolicy(Rule):
    """
    ## What it does
    Flags `replay="auto"` on a tool that is declared, or found to be, non-idempotent or
    destructive, unless it has both an idempotency key and a reconcile lookup.

    ## Why it matters
    `auto` lets the runtime run the tool again after an uncertain outcome. Without a key the
    service cannot recognise the repeat, and without a lookup the runtime cannot know the
    first call already succeeded: a refund is paid twice.

    ## Example
    ```python
    @guarded(runtime, risk="write", idempotency="non_idempotent", replay="auto")
    def refund(payment_id: str) -> dict: ...
    ```

    ## Use instead
    `replay="never"` (or `"ask"`), or give the tool a `key=` and a `reconcile=` lookup.

    ## Fix safety
    No automatic fix: choosing between `never` and `ask` is a product decision.
    """

    code, name, question = "AG103", "permissive-replay-policy", "Q1"
    severity = Severity.ERROR
    VALID = (
        Valid(
            "from agentguard.runtime import guarded\n"
            "from app.runtime import runtime, find_refund\n\n"
            '@guarded(runtime, risk="write", idempotency="non_idempotent", replay="auto",\n'
            "         key=lambda call: f\"refund:{call.user_id}:{call.args['payment_id']}\", reconcile=find_refund)\n"
            "def refund(payment_id: str) -> dict:\n"
            "    ...\n"
        ),
        Valid(
            "from agentguard.runtime import guarded\n"
            "from app.runtime import runtime\n\n"
            '@guarded(runtime, risk="read", idempotency="idempotent", replay="auto")\n'
            "def get_balance(account_id: str) -> dict:\n"
            "    ...\n"
        ),
    )
    INVALID = (
        Invalid(
            "from agentguard.runtime import guarded\n"
            "from app.runtime import runtime\n\n"
            '@guarded(runtime, risk="write", idempotency="non_idempotent", replay="auto")\n'
            "def refund(payment_id: str) -> dict:\n"
            "    ...\n",
            span=(4, 70, 4, 76),
        ),
    )

    def check(self, project: ProjectModel) -> Iterator[Finding]:
        for tool in project.tools:
            for decl in tool.declarations:
                if decl.replay != "auto":
                    continue
                risky = (
                    decl.idempotency == "non_idempotent"
                    or decl.risk == "destructive"
                    or decl.destructive is True
                    or (decl.idempotency is None and tool.non_idempotent_writes())
                )
                if not risky or (decl.has_key and decl.has_reconcile):
                    continue
                missing = [
                    n
                    for n, ok in (("key", decl.has_key), ("reconcile", decl.has_reconcile))
                    if not ok
                ]
                declared_risky = (
                    decl.idempotency == "non_idempotent"
                    or decl.risk == "destructive"
                    or decl.destructive is True
                )
                guessed = tool.schema_only and not declared_risky
                yield self.finding(
                    decl.fields.get("replay") or decl.location,
                    f'Tool `{tool.name}` may be replayed automatically (replay="auto") but is '
                    + ("not idempotent, judging from its schema," if guessed else "not idempotent")
                    + f" and has no {' and no '.join(missing)}",
                    tool=tool,
                    confidence=Confidence.MEDIUM if guessed else Confidence.HIGH,
                    node_text=f"{tool.name}:replay-auto",
                )
